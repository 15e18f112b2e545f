//! The page's frame: escaping, the Content-Security-Policy with the hashes of the one style
//! sheet and the one script, and the head and foot every page shares.

use std::fmt::Write as _;

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// The style sheet of every page, inline, allowed by its hash.
const STYLE: &str = include_str!("page.css");
/// The script of every page, inline, allowed by its hash.
const SCRIPT: &str = include_str!("page.js");

/// Appends `text` to `out` with the five characters that matter in markup replaced by entities,
/// so no string from a trajectory is ever read as markup, and the control characters XML 1.0
/// cannot hold (all but tab, line feed and carriage return) dropped. The one escaper of the
/// workspace: HTML pages and the CLI's JUnit XML both use it (`&#39;` is valid in both).
pub(crate) fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}

/// The base64 of the SHA-256 of `text`, as a CSP source expression names it.
fn csp_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest))
}

/// The page's policy: nothing is fetched, from anywhere; the one style sheet and the one
/// script run because their hashes are named; images only as `data:` URIs.
pub(crate) fn content_security_policy() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; \
         form-action 'none'",
        csp_hash(SCRIPT),
        csp_hash(STYLE)
    )
}

/// Starts a page: the doctype, the policy, the title (escaped) and the style sheet; `kind`
/// is the body's class (`run` or `diff`).
pub(crate) fn open_page(out: &mut String, title: &str, kind: &str) {
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    let _ = writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        content_security_policy()
    );
    out.push_str("<meta name=\"referrer\" content=\"no-referrer\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>");
    escape_into(out, title);
    out.push_str("</title>\n<style>");
    out.push_str(STYLE);
    let _ = write!(out, "</style></head>\n<body class=\"{kind}\">\n");
}

/// Ends a page: the script, then the closing tags.
pub(crate) fn close_page(out: &mut String) {
    out.push_str("<script>");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body></html>\n");
}

/// The base64 of `bytes`, for a `data:` URI.
pub(crate) fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_becomes_entities() {
        let mut escaped = String::new();
        escape_into(&mut escaped, "<script>alert('x')</script> & \"q\"");
        assert_eq!(escaped, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
    }

    #[test]
    fn control_characters_xml_cannot_hold_are_dropped_and_white_space_kept() {
        let mut escaped = String::new();
        escape_into(&mut escaped, "a\u{1b}[31mb\u{0}\tc\nd\re\u{7f}");
        assert_eq!(escaped, "a[31mb\tc\nd\re");
    }

    #[test]
    fn the_assets_close_no_element_early() {
        // The style and script are inlined raw: a closing tag inside them would end the
        // element and spill the rest into the page.
        assert!(!STYLE.contains("</style"));
        assert!(!SCRIPT.contains("</script"));
    }
}
