//! What the server says (error texts, the verdict, standard error, 4xx/5xx bodies) goes
//! through the same scanner as the script, with the userinfo of every URL masked.

use atif_secrets::Scanner;

/// The marker that stands for the `user:password` part of a URL.
pub(crate) const USERINFO: &str = "<redacted:userinfo>";

/// Redacts what the server is about to say: secrets as in a script, and userinfo in URLs.
#[derive(Debug)]
pub(crate) struct Cleaner {
    scanner: Scanner,
}

impl Cleaner {
    pub(crate) fn new() -> Cleaner {
        Cleaner { scanner: Scanner::new() }
    }

    /// `text` with every secret redacted and every URL's userinfo masked.
    pub(crate) fn clean(&self, text: String) -> String {
        let text = mask_userinfo(&text).unwrap_or(text);
        self.scanner.redact_text(&text).unwrap_or(text)
    }
}

/// `text` with the userinfo of each URL in it (`http://user:secret@host` ->
/// `http://<redacted:userinfo>@host`) masked, or `None` when there is none.
pub(crate) fn mask_userinfo(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        // The authority ends at the path, query or fragment, or where the URL does.
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == '`')
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(userinfo_end) => {
                out.push_str(USERINFO);
                out.push_str(&authority[userinfo_end..]);
                changed = true;
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_is_masked_in_every_url_and_nothing_else_changes() {
        let check = |text: &str, expected: Option<&str>| {
            assert_eq!(mask_userinfo(text).as_deref(), expected, "{text}");
        };
        check(
            "cannot reach http://user:sk-proj-abc@127.0.0.1:9/v1 (from https://a:b@c/x)",
            Some(
                "cannot reach http://<redacted:userinfo>@127.0.0.1:9/v1 (from \
                 https://<redacted:userinfo>@c/x)",
            ),
        );
        check("`http://token@host`", Some("`http://<redacted:userinfo>@host`"));
        check("http://host/path?mail=a@b", None);
        check("mail me at a@b.c, see https://host", None);
        check("no url at all", None);
    }

    #[test]
    fn secrets_in_paths_are_redacted_like_in_a_script() {
        let cleaner = Cleaner::new();
        let text = cleaner.clean(
            "unknown endpoint POST /v1/chat/completions/ghp_abcdefghijklmnopqrstuvwxyz0123456789"
                .to_owned(),
        );
        assert_eq!(text, "unknown endpoint POST /v1/chat/completions/<redacted:github-token>");
    }
}
