//! Named presets of normalise options for logs of well-known agents (`claude-code`, `codex`).
//!
//! A trajectory imported from an agent's log carries volatile content the default contract
//! does not know about: provider ids (`toolu_…`, `msg_…`, `req_…`, `call_…`) quoted in
//! text, session UUIDs, the run's working folder and home (a fresh temp folder on every CI run)
//! and dates inside injected context, and the bookkeeping keys the importer keeps in `extra`
//! (`message_id`, `request_id`, `cwd`, durations, costs). A preset removes exactly that.
//!
//! Paths are replaced exactly: every preset turns on
//! [`set_recorded_paths`](NormalizeOptions::set_recorded_paths), so the working directory and
//! home the importer recorded in `extra.cwd` and `extra.home` become `<cwd>` and `<home>`
//! everywhere, tool arguments included, and any other path is left as it is.
//!
//! Provider id maskers require at least 16 characters after the prefix, so the renumbered
//! `call_1`, `call_2` of the default contract are never touched and the call join survives.

use crate::{Error, Masker, NormalizeOptions, Result};

/// The names of the known presets.
pub const PRESETS: &[&str] = &["claude-code", "codex", "gemini-cli", "opencode", "pi", "otel"];

/// The options of the preset called `name`.
///
/// # Errors
/// [`Error::UnknownPreset`] when there is no preset of that name.
pub fn preset(name: &str) -> Result<NormalizeOptions> {
    let (keys, maskers): (&[&str], &[(&str, &str)]) = match name {
        "claude-code" => (CLAUDE_KEYS, CLAUDE_MASKERS),
        "codex" => (CODEX_KEYS, CODEX_MASKERS),
        "gemini-cli" => (GEMINI_KEYS, GEMINI_MASKERS),
        "opencode" => (OPENCODE_KEYS, OPENCODE_MASKERS),
        "pi" => (PI_KEYS, &[]),
        "otel" => (OTEL_KEYS, OTEL_MASKERS),
        _ => return Err(Error::UnknownPreset { name: name.to_owned(), known: PRESETS.join(", ") }),
    };
    let mut options = NormalizeOptions::default();
    options.set_recorded_paths(true);
    for key in COMMON_KEYS.iter().chain(keys) {
        options.add_volatile_key(*key);
    }
    // Agent-specific ids first, then the shared patterns, dates before plain dates.
    for (pattern, replacement) in maskers.iter().chain(COMMON_MASKERS) {
        options.add_masker(Masker::new(pattern, replacement)?);
    }
    Ok(options)
}

/// Bookkeeping keys the importer writes for every agent, and the timings agents record in
/// tool results and turn statistics (the names found in the logs of the shared corpus and our
/// fixtures): two runs that did the same take different times.
const COMMON_KEYS: &[&str] = &[
    "cwd",
    "home",
    "message_id",
    "request_id",
    "uuid",
    "cost",
    "costUSD",
    // Timings.
    "duration_ms",
    "duration_api_ms",
    "duration_seconds",
    "durationMs",
    "durationSeconds",
    "totalDurationMs",
    "totalDuration",
    "totalToolDuration",
    "totalAPIDuration",
    "totalAPIDurationWithoutRetries",
    "execution_duration_ms",
    "started_at_ms",
    "completed_at_ms",
    "occurred_at_ms",
    "ttft_ms",
    "ttft_stream_ms",
    "time_to_first_token_ms",
    "time_to_request_ms",
    "first_content_frame_ms",
    "toolInputStreamMs",
    "timeUsedSeconds",
];

/// Keys of Claude Code logs: git branch and agent ids inside `toolUseResult` (its durations are
/// among the common timings).
const CLAUDE_KEYS: &[&str] = &["git_branch", "agentId"];

/// Keys of Codex logs: turn ids and the originator (the 0.40 output metadata's
/// `duration_seconds` is among the common timings).
const CODEX_KEYS: &[&str] = &["turn_id", "originator"];

const CLAUDE_MASKERS: &[(&str, &str)] = &[
    (r"\btoolu_[A-Za-z0-9]{16,}", "toolu_ID"),
    (r"\bmsg_[A-Za-z0-9]{16,}", "msg_ID"),
    (r"\breq_[A-Za-z0-9]{16,}", "req_ID"),
];

/// Keys of Gemini CLI logs: the project hash (derived from the working directory) and the
/// durations of the stream's closing statistics.
const GEMINI_KEYS: &[&str] = &["project_hash", "projectHash", "duration"];

const GEMINI_MASKERS: &[(&str, &str)] = &[
    // The shell tool's output names the process group it ran in.
    (r"Process Group PGID: \d+", "Process Group PGID: PID"),
    // The session context states the day in words.
    (r"(Today's date is )[A-Z][a-z]+, [A-Z][a-z]+ \d{1,2}, \d{4}", "${1}DATE"),
];

/// Keys of OpenCode logs: the git snapshot of each step, ids of parts and messages, times.
const OPENCODE_KEYS: &[&str] = &["snapshot", "part_id", "time"];

const OPENCODE_MASKERS: &[(&str, &str)] = &[
    (r"\bses_[A-Za-z0-9]{16,}", "ses_ID"),
    (r"\bmsg_[A-Za-z0-9]{16,}", "msg_ID"),
    (r"\bprt_[A-Za-z0-9]{16,}", "prt_ID"),
    (r"\bcall_[A-Za-z0-9]{16,}", "call_ID"),
];

/// Keys of OpenTelemetry imports: the id a tool span gave a call when it differs from the
/// model's (ADK invents one per run).
const OTEL_KEYS: &[&str] = &["span_call_id"];

/// Ids and ports that OpenTelemetry traces put in text: trace and span ids, ADK's invented
/// call ids, the local port of a model server.
const OTEL_MASKERS: &[(&str, &str)] = &[
    (r"\badk-[0-9a-fA-F-]{36}\b", "adk-ID"),
    (r"\b[0-9a-f]{32}\b", "TRACE_ID"),
    (r"\b[0-9a-f]{16}\b", "SPAN_ID"),
    (r"\b(localhost|127\.0\.0\.1|\[::1\]):\d{2,5}\b", "${1}:PORT"),
];

/// Keys of pi logs: entry ids of the session tree.
const PI_KEYS: &[&str] = &["entry_id", "parent_id", "response_id"];

const CODEX_MASKERS: &[(&str, &str)] = &[
    (r"\bcall_[A-Za-z0-9]{16,}", "call_ID"),
    // Tool outputs as the model saw them carry the command's duration: 0.40 wraps them in
    // JSON with `duration_seconds`, later versions write `Wall time: 0.2 seconds`.
    (r#"("duration_seconds":\s*)[0-9][0-9.eE+-]*"#, "${1}DURATION"),
    (r"Wall time: [0-9][0-9.]* seconds", "Wall time: DURATION seconds"),
    // `exec_command` output starts with a random chunk id; the environment names the time zone.
    (r"Chunk ID: [0-9a-f]{6}\b", "Chunk ID: ID"),
    (r"<timezone>[^<]*</timezone>", "<timezone>TZ</timezone>"),
];

/// UUIDs and ISO dates (the environment's date in injected context).
const COMMON_MASKERS: &[(&str, &str)] = &[
    (r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", "UUID"),
    (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?", "DATETIME"),
    (r"\b\d{4}-\d{2}-\d{2}\b", "DATE"),
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
        let err = preset("aider").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown normalisation preset `aider` (known: claude-code, codex, gemini-cli, opencode, pi, otel)"
        );
    }

    #[test]
    fn every_preset_removes_the_timings_of_tool_results_and_keeps_what_they_found() {
        let run = |seconds: f64| {
            json!({
                "schema_version": "ATIF-v1.8",
                "agent": {"name": "a", "version": "1"},
                "steps": [{
                    "step_id": 1, "source": "agent", "message": "",
                    "tool_calls": [{"tool_call_id": "c", "function_name": "WebSearch", "arguments": {}}],
                    "observation": {"results": [{
                        "source_call_id": "c", "content": "found",
                        "extra": {"tool_use_result": {
                            "durationSeconds": seconds, "durationMs": seconds * 1e3,
                            "totalDurationMs": 5, "duration_ms": 7, "ttft_ms": 9,
                            "query": "weather"
                        }}
                    }]}
                }]
            })
        };
        for name in PRESETS {
            let options = preset(name).unwrap();
            let first = to_canonical_string(&normalize(&run(16.9), &options).unwrap());
            let second = to_canonical_string(&normalize(&run(17.4), &options).unwrap());
            assert_eq!(first, second, "{name}: two runs that differ by a timing");
            assert!(!first.contains("uration") && !first.contains("ttft"), "{name}: {first}");
            assert!(first.contains("\"query\": \"weather\""), "{name}: {first}");
        }
        let plain = NormalizeOptions::default();
        let first = to_canonical_string(&normalize(&run(16.9), &plain).unwrap());
        assert!(first.contains("durationSeconds"), "a positive control: no preset, no removal");
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
    fn codex_call_ids_chunk_ids_and_time_zones_are_masked() {
        assert_eq!(mask("codex", "see call_WmlLLopV6YokTw8Y639cqY5h"), "see call_ID");
        assert_eq!(
            mask("codex", "Chunk ID: 817350\n<timezone>Europe/Paris</timezone>"),
            "Chunk ID: ID\n<timezone>TZ</timezone>"
        );
    }

    #[test]
    fn gemini_process_groups_and_spelled_dates_are_masked() {
        assert_eq!(
            mask("gemini-cli", "Today's date is Tuesday, December 1, 2026 (formatted"),
            "Today's date is DATE (formatted"
        );
        assert_eq!(mask("gemini-cli", "Process Group PGID: 6415"), "Process Group PGID: PID");
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
    fn paths_that_are_not_the_runs_are_left_alone() {
        for text in ["cat /tmp/tmp.Xa81/src/main.rs", "/Users/alice/proj/a.py", "/home/bob/a.py"] {
            assert_eq!(mask("claude-code", text), text);
        }
    }

    #[test]
    fn every_preset_replaces_the_recorded_paths() {
        for name in PRESETS {
            assert!(preset(name).unwrap().recorded_paths(), "{name}");
        }
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
            "extra": {"cwd": cwd, "home": format!("{cwd}-home")}
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
        assert!(na.contains("ls <cwd>") && na.contains("run in <cwd> on DATE"), "{na}");
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
        b["steps"][1]["tool_calls"][0]["arguments"]["command"] = json!("rm -rf /tmp/tmp.A1b2/x");
        let options = preset("claude-code").unwrap();
        assert_ne!(normalize(&a, &options).unwrap(), normalize(&b, &options).unwrap());
    }
}
