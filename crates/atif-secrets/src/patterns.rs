//! The credential shapes the default scanner knows, and the rules for secret-looking names.

/// The credential shapes redacted by default, as `(kind, regex)`, in the order they are applied.
///
/// When a regex has a group named `secret`, only that group is replaced (the rest of the match
/// is context, like `postgres://user:` before a password); otherwise the whole match is.
/// A private-key block comes first so that nothing inside it is matched on its own; Anthropic
/// keys (`sk-ant-…`) come before the OpenAI shape (`sk-…`).
pub const DEFAULT_PATTERNS: &[(&str, &str)] = &[
    (
        "private-key",
        // The whole block; a block cut short (no END line) loses its base64 body up to the
        // first character that cannot be in one (`\` keeps escaped newlines in JSON text).
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)",
    ),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{8,}"),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),
    // Base64 data can hold `AIza…` or `AKIA…` by chance: these two must stand alone, with no
    // key or base64 character right before or after them (see `STANDALONE`).
    ("google-api-key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("aws-access-key-id", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}"),
    (
        "aws-secret-key",
        r#"(?i)aws[_\-.]?secret[_\-.]?(?:access[_\-.]?)?key\\?["']?[ \t]*[:=][ \t]*\\?["']?(?P<secret>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)"#,
    ),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("slack-token", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    ("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*"),
    ("bearer-token", r"(?i)\bbearer[ \t]+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)"),
    // Google takes its API key in the query string: `?key=…`.
    ("api-key", r#"[?&]key=(?P<secret>[^&\s#"'<>\\]{8,})"#),
    (
        "url-password",
        r#"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@?#"'<>\\]*:(?P<secret>[^\s/@?#"'<>\\]+)@"#,
    ),
];

/// Kinds whose match counts only when the characters around it could not belong to it.
pub(crate) const STANDALONE: &[&str] = &["google-api-key", "aws-access-key-id"];

/// Literal prefixes of which every case-sensitive default pattern holds one, in the one case
/// the pattern matches (`sk-`, never `SK-`). With [`HINT_WORDS`] they are the fast literal search
/// that a text without any secret never gets past.
pub(crate) const HINT_PREFIXES: &[&str] = &[
    "sk-",
    "sk_",
    "rk_",
    "AIza",
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxr-",
    "xoxs-",
    "eyJ",
    "://",
];

/// Words of which every case-insensitive default pattern and every secret name holds at least
/// one (`passphrase` holds `passw`). Names are matched in lower case, upper case and capitalised
/// (`token`, `TOKEN`, `Token`, hence `apiKey` and `DB_PASSWORD`), not in any mix of cases,
/// which keeps the search literal (case-insensitive literals are several times slower on large
/// documents). With [`HINT_PREFIXES`] that makes fewer than 64 literals, which the regex engine
/// searches with SIMD (Teddy) rather than an Aho-Corasick automaton: about 0.5 instead of
/// 18 instructions per byte of text.
pub(crate) const HINT_WORDS: &[&str] =
    &["bearer", "key", "secret", "passw", "token", "credential", "auth", "cookie"];

/// `NAME=`, `NAME:`, `"NAME": ` in text, where NAME may say secret; the name is group 1 and
/// the separator group 2. Whether the name really says secret is [`is_secret_name`]'s call.
pub(crate) const ASSIGNMENT_PATTERN: &str = r#"(?i)([A-Za-z0-9_.\-]*(?:key|secret|password|passwd|passphrase|token|credentials?|auth|authorization|cookie))\\?["']?[ \t]*(=|:)[ \t]*"#;

/// An authorization scheme word kept in front of a redacted credential.
pub(crate) const SCHEME_PATTERN: &str = r"^(?i:bearer|basic|token|digest)[ \t]+";

/// Whether a JSON key or a `NAME=value` name says its value is a secret: it ends in secret,
/// password, passphrase, token, credential(s), api key, access key, secret key or private key,
/// or is (or ends in `_`) auth, authorization or cookie. Case, `-` and `.` do not matter.
///
/// `prompt_tokens` and `max_tokens` do not say secret; `GITHUB_TOKEN`, `x-api-key`,
/// `clientSecret` and `Proxy-Authorization` do.
///
/// ```
/// assert!(atif_secrets::is_secret_name("OPENAI_API_KEY"));
/// assert!(!atif_secrets::is_secret_name("prompt_tokens"));
/// ```
pub fn is_secret_name(name: &str) -> bool {
    // The endings, grouped by their last letter, each with whether it must be a whole word
    // (the whole name, or after `_`, `-` or `.`). Only the end of a name decides, so a long
    // string costs what a short one does, and most strings end in a letter that no ending
    // ends in.
    const KEYS: &[(&str, bool)] = &[
        ("apikey", false),
        ("api_key", false),
        ("accesskey", false),
        ("access_key", false),
        ("secretkey", false),
        ("secret_key", false),
        ("privatekey", false),
        ("private_key", false),
    ];
    let bytes = name.as_bytes();
    let Some(&last) = bytes.last() else { return false };
    let endings: &[(&str, bool)] = match last.to_ascii_lowercase() {
        b'y' => KEYS,
        b't' => &[("secret", false)],
        b'd' => &[("password", false), ("passwd", false)],
        b'e' => &[("passphrase", false), ("cookie", true)],
        b'n' => &[("token", false), ("authorization", true)],
        b'l' => &[("credential", false)],
        b's' => &[("credentials", false)],
        b'h' => &[("auth", true)],
        _ => &[],
    };
    endings.iter().any(|&(ending, whole_word)| {
        let Some(head) = bytes.len().checked_sub(ending.len()) else { return false };
        let ends =
            bytes[head..].iter().zip(ending.bytes()).all(|(&byte, want)| name_byte(byte) == want);
        ends && (!whole_word || head == 0 || name_byte(bytes[head - 1]) == b'_')
    })
}

/// A byte of a name as the name rules compare it: lower case, with `-` and `.` as `_`.
fn name_byte(byte: u8) -> u8 {
    match byte {
        b'-' | b'.' => b'_',
        other => other.to_ascii_lowercase(),
    }
}

/// The kind of a value redacted because of its name.
pub(crate) fn kind_for_name(name: &str) -> &'static str {
    let name = name.to_ascii_lowercase().replace(['-', '.'], "_");
    if name.contains("aws") && name.contains("secret") {
        "aws-secret-key"
    } else if ["password", "passwd", "passphrase"].iter().any(|word| name.contains(word)) {
        "password"
    } else if name.contains("api_key") || name.contains("apikey") {
        "api-key"
    } else if name.ends_with("token") {
        "token"
    } else {
        "secret"
    }
}

/// Whether the value after a secret name is not a credential: too short to be one, a marker
/// already, a reference to one (`$TOKEN`, `%TOKEN%`, `{{ secrets.X }}`), a literal such as
/// `null`, or a type in code (`password: string`, `api_key: Optional[str]`,
/// `token: Option<String>`), since code an agent reads or writes must stay as it was.
pub(crate) fn is_not_a_credential(value: &str, after: &str) -> bool {
    const LITERALS: &[&str] = &["null", "none", "nil", "true", "false", "undefined"];
    const TYPE_NAMES: &[&str] = &[
        "string",
        "String",
        "str",
        "number",
        "int",
        "integer",
        "bool",
        "boolean",
        "bytes",
        "any",
        "unknown",
        "undefined",
        "null",
        "None",
        "Optional",
        "Option",
        "SecretStr",
        "Secret",
    ];
    if value.chars().count() < 3
        || value.starts_with(crate::MARKER_PREFIX)
        || value.starts_with(['$', '%', '{'])
        || LITERALS.contains(&value.to_ascii_lowercase().as_str())
    {
        return true;
    }
    let name_len = value.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(value.len());
    let (name, rest) = value.split_at(name_len);
    let rest = if rest.is_empty() { after } else { rest };
    TYPE_NAMES.contains(&name)
        && (rest.is_empty()
            || rest.starts_with(char::is_whitespace)
            || rest.starts_with(['<', '[', '(', ')', '>', ']', '|', '?', ',', ';', '=']))
}
