//! Credential samples shared by the secret tests of every crate (included with `#[path]`):
//! one or more per kind, the text each must become, and ordinary text that must survive.

#![allow(dead_code, reason = "each including test uses a different part")]

/// One realistic sample of each default kind, with the text around it, as
/// `(kind, text with the secret, what the text must become)`.
pub(crate) const SAMPLES: &[(&str, &str, &str)] = &[
    ("openai-key", "key sk-abcdefghijklmnopqrstuv1234 end", "key <redacted:openai-key> end"),
    (
        "openai-key",
        "OPENAI_API_KEY=sk-proj-Abc123def456ghi789jkl012 next=word",
        "OPENAI_API_KEY=<redacted:openai-key> next=word",
    ),
    (
        "anthropic-key",
        "x-api-key: sk-ant-api03-AbCdEf123456-xyz",
        "x-api-key: <redacted:anthropic-key>",
    ),
    (
        "google-api-key",
        "GOOGLE key AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW used",
        "GOOGLE key <redacted:google-api-key> used",
    ),
    ("aws-access-key-id", "id AKIAIOSFODNN7EXAMPLE here", "id <redacted:aws-access-key-id> here"),
    (
        "aws-access-key-id",
        "export AWS_ACCESS_KEY_ID=ASIAIOSFODNN7EXAMPL3",
        "export AWS_ACCESS_KEY_ID=<redacted:aws-access-key-id>",
    ),
    (
        "aws-secret-key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nregion = us-east-1",
        "aws_secret_access_key = <redacted:aws-secret-key>\nregion = us-east-1",
    ),
    (
        "github-token",
        "push with ghp_1234567890abcdefghijABCDEFGHIJ123456 now",
        "push with <redacted:github-token> now",
    ),
    ("github-token", "gho_abcdefghijklmnopqrstuvwxyz0123456789", "<redacted:github-token>"),
    ("github-token", "ghs_abcdefghijklmnopqrstuvwxyz0123456789", "<redacted:github-token>"),
    (
        "github-token",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "<redacted:github-token>",
    ),
    ("gitlab-token", "glpat-abcdefghij1234567890 ok", "<redacted:gitlab-token> ok"),
    (
        "slack-token",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "<redacted:slack-token>",
    ),
    ("slack-token", "xoxp-1234-5678-abcdef1234", "<redacted:slack-token>"),
    (
        "stripe-key",
        "charge with sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "charge with <redacted:stripe-key>",
    ),
    ("stripe-key", "rk_live_51H8abcdefghijklmnop", "<redacted:stripe-key>"),
    (
        "jwt",
        "session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
        "session <redacted:jwt> ok",
    ),
    (
        "bearer-token",
        "curl -H 'Authorization: Bearer abcdef1234567890' x",
        "curl -H 'Authorization: Bearer <redacted:bearer-token>' x",
    ),
    (
        "private-key",
        "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA75gxkk\nZm9vYmFy==\n-----END RSA PRIVATE KEY-----\nafter",
        "before\n<redacted:private-key>\nafter",
    ),
    (
        "private-key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "<redacted:private-key>",
    ),
    (
        "url-password",
        "DATABASE_URL=postgres://app:s3cr3t-pass@db.internal:5432/app",
        "DATABASE_URL=postgres://app:<redacted:url-password>@db.internal:5432/app",
    ),
    ("api-key", "api_key=abc123 next=word", "api_key=<redacted:api-key> next=word"),
    (
        "api-key",
        "GET /v1beta/models/m:generateContent?key=AIzaSyQueryKey01&alt=sse",
        "GET /v1beta/models/m:generateContent?key=<redacted:api-key>&alt=sse",
    ),
    ("password", "password: hunter2 then more", "password: <redacted:password> then more"),
    ("token", "GITHUB_TOKEN=\"some token value\" rest", "GITHUB_TOKEN=\"<redacted:token>\" rest"),
    (
        "secret",
        r#"{"client_secret": "cl1ent-s3cret-v4lue", "n": 1}"#,
        r#"{"client_secret": "<redacted:secret>", "n": 1}"#,
    ),
];

/// Text that looks a little like a secret but is not one, and must survive every path: the
/// rest of an assignment, a git commit hash, a UUID and base64 image data.
pub(crate) const SURVIVORS: &[&str] = &[
    "next=word",
    "3f786850e387550fdab836ed7e6dc881de23001b",
    "123e4567-e89b-12d3-a456-426614174000",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
];

/// The secret of each sample: what its expected text no longer holds.
pub(crate) fn secrets() -> Vec<&'static str> {
    SAMPLES
        .iter()
        .map(|(_, input, expected)| {
            let prefix = input.bytes().zip(expected.bytes()).take_while(|(a, b)| a == b).count();
            let suffix = input[prefix..]
                .bytes()
                .rev()
                .zip(expected[prefix..].bytes().rev())
                .take_while(|(a, b)| a == b)
                .count();
            &input[prefix..input.len() - suffix]
        })
        .collect()
}

/// Every sample and every survivor, one per line: what the end-to-end tests plant.
pub(crate) fn planted_text() -> String {
    let mut lines: Vec<&str> = SAMPLES.iter().map(|(_, input, _)| *input).collect();
    lines.extend(SURVIVORS);
    lines.join("\n")
}

/// Asserts that `output` (of `path`) holds no secret, whether written raw, JSON-escaped or
/// Rust-debug-escaped, and that every survivor is still there when `survivors` is set.
pub(crate) fn assert_clean(output: &str, path: &str, survivors: bool) {
    for secret in secrets() {
        let json = serde_json::to_string(secret).unwrap_or_default();
        let debug = format!("{secret:?}");
        for form in [secret, &json[1..json.len() - 1], &debug[1..debug.len() - 1]] {
            assert!(!output.contains(form), "{path}: the secret {secret:?} survived in:\n{output}");
        }
    }
    if survivors {
        for survivor in SURVIVORS {
            assert!(output.contains(survivor), "{path}: lost {survivor:?} in:\n{output}");
        }
    }
}
