//! Named presets of normalise options for logs of well-known agents (`claude-code`, `codex`).
//!
//! A trajectory imported from an agent's log carries volatile content the default contract
//! does not know about: provider ids (`toolu_…`, `msg_…`, `req_…`, `call_…`) quoted in
//! text, session UUIDs, the absolute working folder (a fresh temp folder on every CI run) and
//! dates inside injected context, and the bookkeeping keys the importer keeps in `extra`
//! (`message_id`, `request_id`, `cwd`, durations). A preset removes exactly that.
//!
//! Provider id maskers require at least 16 characters after the prefix, so the renumbered
//! `call_1`, `call_2` of the default contract are never touched and the call join survives.

use crate::{Error, Masker, NormalizeOptions, Result};

/// The names of the known presets.
pub const PRESETS: &[&str] = &["claude-code", "codex"];

/// The options of the preset called `name`.
///
/// # Errors
/// [`Error::UnknownPreset`] when there is no preset of that name.
pub fn preset(name: &str) -> Result<NormalizeOptions> {
    let (keys, maskers): (&[&str], &[(&str, &str)]) = match name {
        "claude-code" => (CLAUDE_KEYS, CLAUDE_MASKERS),
        "codex" => (CODEX_KEYS, CODEX_MASKERS),
        _ => return Err(Error::UnknownPreset { name: name.to_owned(), known: PRESETS.join(", ") }),
    };
    let mut options = NormalizeOptions::default();
    for key in COMMON_KEYS.iter().chain(keys) {
        options.add_volatile_key(*key);
    }
    // Agent-specific ids first, then the shared patterns: dates before plain dates, paths last.
    for (pattern, replacement) in maskers.iter().chain(COMMON_MASKERS) {
        options.add_masker(Masker::new(pattern, replacement)?);
    }
    Ok(options)
}

/// Bookkeeping keys the importer writes for every agent.
const COMMON_KEYS: &[&str] =
    &["cwd", "message_id", "request_id", "uuid", "duration_ms", "duration_api_ms"];

/// Keys of Claude Code logs: git branch, durations and agent ids inside `toolUseResult`, and the
/// per-model cost of the result line.
const CLAUDE_KEYS: &[&str] = &["git_branch", "durationMs", "totalDurationMs", "agentId", "costUSD"];

/// Keys of Codex logs: turn ids and the duration in the 0.40 output metadata.
const CODEX_KEYS: &[&str] = &["turn_id", "duration_seconds", "originator"];

const CLAUDE_MASKERS: &[(&str, &str)] = &[
    (r"\btoolu_[A-Za-z0-9]{16,}", "toolu_ID"),
    (r"\bmsg_[A-Za-z0-9]{16,}", "msg_ID"),
    (r"\breq_[A-Za-z0-9]{16,}", "req_ID"),
];

const CODEX_MASKERS: &[(&str, &str)] = &[
    (r"\bcall_[A-Za-z0-9]{16,}", "call_ID"),
    (r"<cwd>[^<]*</cwd>", "<cwd>CWD</cwd>"),
    // Tool outputs as the model saw them carry the command's duration: 0.40 wraps them in
    // JSON with `duration_seconds`, later versions write `Wall time: 0.2 seconds`.
    (r#"("duration_seconds":\s*)[0-9][0-9.eE+-]*"#, "${1}DURATION"),
    (r"Wall time: [0-9][0-9.]* seconds", "Wall time: DURATION seconds"),
];

/// UUIDs, ISO dates, home folders and temp folders.
const COMMON_MASKERS: &[(&str, &str)] = &[
    (r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", "UUID"),
    (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?", "DATETIME"),
    (r"\b\d{4}-\d{2}-\d{2}\b", "DATE"),
    (r"/(?:private/)?var/folders/[^\s\x22'<>]+?/T/[^/\s\x22'<>]+", "/tmp/TMP"),
    (r"/tmp/[^/\s\x22'<>]+", "/tmp/TMP"),
    (r"/(Users|home)/[^/\s\x22'<>]+", "/${1}/USER"),
];

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::{normalize, to_canonical_string};

    fn mask(name: &str, text: &str) -> String {
        let options = preset(name).unwrap();
        options.maskers().iter().fold(text.to_owned(), |text, m| {
            m.pattern().replace_all(&text, m.replacement()).into_owned()
        })
    }

    #[test]
    fn every_listed_preset_builds_and_an_unknown_one_names_the_known() {
        for name in PRESETS {
            assert!(!preset(name).unwrap().maskers().is_empty(), "{name}");
        }
        let err = preset("opencode").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown normalisation preset `opencode` (known: claude-code, codex)"
        );
    }

    #[test]
    fn claude_ids_uuids_and_dates_are_masked_in_text() {
        let text = "see toolu_01KuZjMC9SbdMQwtdce1xKM4 in msg_013N76e9CUpUFzPnoPJLGLbr (req_011CUdMKKFGtjoLjYExNYXcN), \
                    session 06381696-0074-49f8-863e-6ad4fac507f9 at 2025-10-30T12:04:13.121Z on 2025-10-30";
        assert_eq!(
            mask("claude-code", text),
            "see toolu_ID in msg_ID (req_ID), session UUID at DATETIME on DATE"
        );
    }

    #[test]
    fn codex_call_ids_and_injected_cwd_are_masked() {
        let text = "<environment_context>\n  <cwd>/work/run-17/repo</cwd>\n</environment_context> call_WmlLLopV6YokTw8Y639cqY5h";
        assert_eq!(
            mask("codex", text),
            "<environment_context>\n  <cwd>CWD</cwd>\n</environment_context> call_ID"
        );
    }

    #[test]
    fn codex_command_durations_inside_outputs_are_masked() {
        assert_eq!(
            mask("codex", r#"{"output":"ok","metadata":{"exit_code":0,"duration_seconds":0.07}}"#),
            r#"{"output":"ok","metadata":{"exit_code":0,"duration_seconds":DURATION}}"#
        );
        assert_eq!(
            mask("codex", "Exit code: 0\nWall time: 1.3 seconds\nOutput:"),
            "Exit code: 0\nWall time: DURATION seconds\nOutput:"
        );
    }

    #[test]
    fn temp_and_home_folders_are_masked_but_the_rest_of_the_path_stays() {
        assert_eq!(
            mask("claude-code", "cat /tmp/tmp.Xa81/src/main.rs"),
            "cat /tmp/TMP/src/main.rs"
        );
        assert_eq!(
            mask("codex", "/private/var/folders/q1/abc123/T/.tmpQ9z/a.txt"),
            "/tmp/TMP/a.txt"
        );
        assert_eq!(mask("claude-code", "/Users/alice/proj/a.py"), "/Users/USER/proj/a.py");
        assert_eq!(mask("codex", "/home/bob/proj/a.py"), "/home/USER/proj/a.py");
    }

    #[test]
    fn renumbered_call_ids_are_left_alone() {
        assert_eq!(mask("codex", "call_1 call_23"), "call_1 call_23");
        assert_eq!(mask("claude-code", "toolu_1"), "toolu_1");
    }

    fn run(session: &str, call: &str, cwd: &str, msg: &str) -> Value {
        json!({
            "schema_version": "ATIF-v1.8",
            "session_id": session,
            "agent": {"name": "claude-code", "version": "2.0.27", "model_name": "claude-sonnet-4-5"},
            "steps": [
                {"step_id": 1, "source": "user", "message": format!("Caveat: run in {cwd} on 2025-10-30"),
                 "extra": {"meta": true}},
                {"step_id": 2, "source": "agent", "message": "Listing.", "model_name": "claude-sonnet-4-5",
                 "tool_calls": [{"tool_call_id": call, "function_name": "Bash", "arguments": {"command": format!("ls {cwd}")}}],
                 "observation": {"results": [{"source_call_id": call, "content": "a.txt",
                     "extra": {"tool_use_result": {"durationMs": 12, "stdout": "a.txt"}}}]},
                 "extra": {"message_id": msg, "request_id": format!("req_{msg}")},
                 "llm_call_count": 1}
            ],
            "extra": {"cwd": cwd}
        })
    }

    #[test]
    fn two_runs_differing_only_in_volatile_content_normalise_alike_with_the_preset_only() {
        let a = run(
            "S-1",
            "toolu_01AAAAAAAAAAAAAAAAAAAAAAAA",
            "/tmp/tmp.A1b2",
            "msg_01AAAAAAAAAAAAAAAAAAAAAA",
        );
        let b = run(
            "S-2",
            "toolu_01BBBBBBBBBBBBBBBBBBBBBBBB",
            "/tmp/tmp.Zz99",
            "msg_01BBBBBBBBBBBBBBBBBBBBBB",
        );
        let options = preset("claude-code").unwrap();
        let na = to_canonical_string(&normalize(&a, &options).unwrap());
        let nb = to_canonical_string(&normalize(&b, &options).unwrap());
        assert_eq!(na, nb);
        assert!(
            !na.contains("durationMs") && !na.contains("message_id") && na.contains("call_1"),
            "{na}"
        );
        let plain = NormalizeOptions::default();
        assert_ne!(normalize(&a, &plain).unwrap(), normalize(&b, &plain).unwrap());
    }

    #[test]
    fn the_preset_does_not_hide_a_changed_command() {
        let a = run(
            "S-1",
            "toolu_01AAAAAAAAAAAAAAAAAAAAAAAA",
            "/tmp/tmp.A1b2",
            "msg_01AAAAAAAAAAAAAAAAAAAAAA",
        );
        let mut b = a.clone();
        b["steps"][1]["tool_calls"][0]["arguments"]["command"] = json!("rm -rf /tmp/tmp.A1b2");
        let options = preset("claude-code").unwrap();
        assert_ne!(normalize(&a, &options).unwrap(), normalize(&b, &options).unwrap());
    }
}
