//! Every Claude Code and Codex sample of the shared corpus, read in place (never copied into
//! the repository): valid ATIF, expected counts, and the golden round trip.
//!
//! The expected values were derived by reading each log with a few lines of Python, written
//! out in the comment of each case; they are not taken from the reference conversions that sit
//! beside the samples (those are wrong in places, see docs/import.md).

use std::path::PathBuf;

use atif_import::{Format, ImportOptions, import};

use crate::normalize::golden_round_trip;
use crate::support::{assert_valid, crashed, functions, joins, sources, steps, totals, unanswered};

/// What one sample must import to.
struct Expected {
    /// The end of the sample's file name.
    file: &'static str,
    format: Format,
    sources: &'static str,
    functions: &'static [&'static str],
    n_joins: usize,
    unanswered: &'static [&'static str],
    /// `(total_prompt_tokens, total_completion_tokens, total_cached_tokens)`.
    totals: (u64, u64, u64),
    /// `prompt_tokens` of the first agent step, when the log has per-call usage.
    first_prompt: Option<u64>,
    /// How many agent steps carry metrics.
    n_metrics: usize,
}

fn corpus_logs() -> Option<PathBuf> {
    atif_test_support::corpus("logs")
}

const ALL_SHELL_16: &[&str] = &["shell"; 16];
const ALL_SHELL_34: &[&str] = &["shell"; 34];

/// Derivations (Python over the raw lines):
/// - Claude transcripts: skip repeated `uuid`s; a user step per user line with a string content
///   or a text/image block; an agent step per new `message.id`; tool names from `tool_use`
///   blocks in file order; joins = `tool_result.tool_use_id` matching a `tool_use.id`; usage per
///   `message.id` from the copy with the largest `output_tokens`, prompt = input + cache read +
///   cache creation, cached = cache read, summed.
/// - stream-json: agent steps per `message.id` with `parent_tool_use_id == null`; totals from the
///   `result` line's usage (input 11 + cache read 24744 + cache creation 71777 = 96532; output
///   180), not the per-message snapshots (7 + 1).
/// - Codex rollouts: a user/system step per user/developer `message`; an agent step per run of
///   output items (reasoning, assistant message, calls) not broken by an input item or a
///   `token_count`; tool names from `function_call.name` (other call items by our names:
///   web_search, tool_search, image_generation); joins by `call_id`; the first call's usage is
///   the first non-empty `token_count` (written before the call's items in 0.40: 3587 and
///   2899); totals = the last `total_token_usage` of each segment (the running total restarts
///   on a resume), summed.
/// - codex exec: an agent step per run of `item.completed` outputs, a tool item closing it;
///   totals = the sum of `turn.completed` usage.
const EXPECTED: &[Expected] = &[
    Expected {
        file: "06381696-0074-49f8-863e-6ad4fac507f9.jsonl",
        format: Format::ClaudeCode,
        // isMeta caveat, /clear, local-command-stdout, prompt; then 3 message ids.
        sources: "uuuuaaa",
        functions: &["Task", "AskUserQuestion", "ExitPlanMode"],
        n_joins: 2,
        // The session ends on the plan-approval prompt: ExitPlanMode never got a result.
        unanswered: &["ExitPlanMode"],
        totals: (82869, 16, 49327),
        first_prompt: Some(3 + 12203 + 12718),
        n_metrics: 3,
    },
    Expected {
        file: "full-session-five.jsonl",
        format: Format::ClaudeCode,
        sources: "uaaa",
        // Three parallel WebSearch calls in one message, then Read and Grep.
        functions: &["WebSearch", "WebSearch", "WebSearch", "Read", "Grep"],
        n_joins: 5,
        unanswered: &[],
        totals: (59628, 12, 50325),
        first_prompt: None,
        n_metrics: 3,
    },
    Expected {
        file: "full-session-four.jsonl",
        format: Format::ClaudeCode,
        sources: "uuuuaaaaaaaaaaaauaauaaaaaaaaaaaaaaaa",
        functions: &[
            "Glob", "Read", "Grep", "Read", "Grep", "Read", "Edit", "Edit", "Edit", "Read",
            "Write", "Read", "Glob", "Read", "Edit", "Glob", "Read", "Edit", "Read", "Edit",
            "Edit", "Edit", "Bash", "Edit", "Edit", "Bash", "Read",
        ],
        n_joins: 27,
        unanswered: &[],
        // 30 API calls; their output_tokens sum to 228 (streaming snapshots, see the note).
        totals: (1243308, 228, 1178761),
        first_prompt: None,
        n_metrics: 30,
    },
    Expected {
        file: "manual_test_output.jsonl",
        format: Format::ClaudeStream,
        sources: "aa",
        functions: &["Read"],
        n_joins: 1,
        unanswered: &[],
        totals: (96532, 180, 24744),
        first_prompt: Some(4 + 24744),
        n_metrics: 2,
    },
    Expected {
        file: "rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl",
        format: Format::CodexRollout,
        // environment context, IDE context + prompt; 16 shell calls, an answer, a second
        // prompt, a second answer: 18 model calls and 18 distinct token_counts.
        sources: "uuaaaaaaaaaaaaaaaaaua",
        functions: ALL_SHELL_16,
        n_joins: 16,
        unanswered: &[],
        totals: (149449, 4808, 120192),
        first_prompt: Some(3587),
        n_metrics: 18,
    },
    Expected {
        file: "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
        format: Format::CodexRollout,
        sources: "uuaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        functions: ALL_SHELL_34,
        n_joins: 34,
        unanswered: &[],
        totals: (536834, 6654, 472320),
        first_prompt: Some(2899),
        n_metrics: 35,
    },
    Expected {
        file: "agents__codex__small.jsonl",
        format: Format::CodexRollout,
        // A fixture of record shapes, seven sessions in one file. 19 steps by the derivation,
        // plus one user step for line 28: a custom_tool_call_output whose call id no earlier
        // item made, plus a user step for each inter-agent message (`response_item` of type
        // `agent_message`, lines 33 and 116). Error steps: turn_aborted (l. 20), task_complete
        // with error (l. 34), event_msg/error; none after the last model call, so not crashed.
        sources: "uaaasasuusasasssssasau",
        functions: &[
            "shell",
            "shell",
            "tool_search",
            "web_search",
            "tool_search",
            "image_generation",
            "[trimmed for fixture]",
            "[trimmed for fixture]",
        ],
        // Six outputs name a call id some item makes, but the one on line 28 comes before any
        // call with its id, so it cannot join (it is the extra user step): 5 joins.
        n_joins: 5,
        unanswered: &["web_search"],
        // The running total drops back to zeros (a new segment, as when a session is resumed),
        // so the totals are the sum of each segment's last total: 16341 + 0, 81 + 0, 3584 + 0.
        totals: (16341, 81, 3584),
        first_prompt: None,
        n_metrics: 2,
    },
    Expected {
        file: "stream-output-4.jsonl",
        format: Format::CodexExec,
        // reasoning + command | reasoning + message; the command is named `shell`, the tool
        // that runs commands in the rollouts of that CLI generation.
        sources: "aa",
        functions: &["shell"],
        n_joins: 1,
        unanswered: &[],
        totals: (6087, 204, 5120),
        first_prompt: None,
        n_metrics: 0,
    },
    Expected {
        file: "stream-output-5.jsonl",
        format: Format::CodexExec,
        sources: "aa",
        functions: &["shell"],
        n_joins: 1,
        unanswered: &[],
        totals: (6086, 223, 2944),
        first_prompt: None,
        n_metrics: 0,
    },
];

fn strict() -> ImportOptions {
    let mut options = ImportOptions::new();
    options.set_strict(true);
    options
}

/// The sample files: every `*.jsonl` under `claude-code-*` and `codex-*`.
fn samples(logs: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(logs).unwrap().flatten() {
        let name = dir.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("claude-code-") || name.starts_with("codex-")) {
            continue;
        }
        for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
            if file.path().extension().is_some_and(|e| e == "jsonl") {
                files.push(file.path());
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_sample_imports_strictly_to_valid_atif_with_the_counts_read_from_the_log() {
    let Some(logs) = corpus_logs() else { return };
    let files = samples(&logs);
    assert_eq!(files.len(), EXPECTED.len(), "a sample was added or removed: {files:?}");
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let expected = EXPECTED
            .iter()
            .find(|e| name.ends_with(e.file))
            .unwrap_or_else(|| panic!("no expectation for {name}"));
        // Strict: every record type of a real log is either mapped or known bookkeeping.
        let imported = import(&std::fs::read(&file).unwrap(), &strict())
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        assert!(imported.stats().skipped().is_empty(), "{name}: {:?}", imported.stats().skipped());
        let t = &imported.trajectory();
        assert_valid(t, &name);
        assert_eq!(imported.format(), expected.format, "{name}");
        assert_eq!(sources(t), expected.sources, "{name}");
        assert_eq!(functions(t), expected.functions, "{name}");
        assert_eq!(joins(t).len(), expected.n_joins, "{name}");
        let names_of_unanswered: Vec<String> = unanswered(t)
            .iter()
            .map(|id| {
                steps(t)
                    .iter()
                    .flat_map(|s| s["tool_calls"].as_array().cloned().unwrap_or_default())
                    .find(|c| c["tool_call_id"] == id.as_str())
                    .map(|c| c["function_name"].as_str().unwrap().to_owned())
                    .unwrap()
            })
            .collect();
        assert_eq!(names_of_unanswered, expected.unanswered, "{name}");
        let (p, c, k) = expected.totals;
        assert_eq!(totals(t), (Some(p), Some(c), Some(k)), "{name}");
        let agent_steps: Vec<_> = steps(t).iter().filter(|s| s["source"] == "agent").collect();
        assert!(agent_steps.iter().all(|s| s["llm_call_count"] == 1), "{name}");
        assert_eq!(
            agent_steps.iter().filter(|s| s.get("metrics").is_some()).count(),
            expected.n_metrics,
            "{name}"
        );
        if let Some(first) = expected.first_prompt {
            assert_eq!(agent_steps[0]["metrics"]["prompt_tokens"], first, "{name}");
        }
        assert!(!crashed(t), "{name}");
        assert!(t.get("final_metrics").is_some_and(
            |fm| fm.get("total_cost_usd").is_none() || expected.format == Format::ClaudeStream
        ));
    }
}

#[test]
fn every_sample_survives_the_golden_round_trip_in_a_temp_folder() {
    let Some(logs) = corpus_logs() else { return };
    for file in samples(&logs) {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let preset = if name.contains("codex")
            || name.starts_with("rollout")
            || name.contains("stream-output")
        {
            "codex"
        } else {
            "claude-code"
        };
        golden_round_trip(&name, &std::fs::read(&file).unwrap(), preset);
    }
}

/// The Gemini CLI, OpenCode and pi samples: each imports strictly to valid ATIF, with as many
/// tool calls as the log makes (counted here by reading the log), every call joined to its
/// result where the log has one, and a log of several OpenCode runs refused unless one is
/// picked.
#[test]
fn every_gemini_opencode_and_pi_sample_imports_strictly_with_the_calls_the_log_makes() {
    let Some(logs) = corpus_logs() else { return };
    let mut seen = 0;
    for (dir, format) in [
        ("gemini-session", Format::GeminiSession),
        ("opencode-json", Format::OpenCodeRun),
        ("pi-session", Format::PiSession),
    ] {
        for file in std::fs::read_dir(logs.join(dir)).unwrap().flatten() {
            let path = file.path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".atif.json") {
                continue;
            }
            seen += 1;
            let bytes = std::fs::read(&path).unwrap();
            let runs = atif_import::import_runs(&bytes, &strict())
                .unwrap_or_else(|err| panic!("{name}: {err}"));
            let n_runs = runs.len();
            let mut n_calls = 0;
            for imported in &runs {
                assert_eq!(imported.format(), format, "{name}");
                let t = &imported.trajectory();
                assert_valid(t, &name);
                n_calls += functions(t).len();
            }
            assert_eq!(n_calls, calls_in_log(&bytes, format), "{name}");
            if n_runs > 1 {
                let err = import(&bytes, &strict()).unwrap_err();
                assert!(err.to_string().starts_with(&format!("the log holds {n_runs} runs")));
            }
        }
    }
    assert_eq!(seen, 6, "a sample was added or removed");
}

/// The tool calls a log makes, read straight from its records: Gemini `toolCalls` of the last
/// version of each message, OpenCode `tool_use` events, pi `toolCall` blocks of assistant
/// messages on the active branch (every message, in these samples).
fn calls_in_log(bytes: &[u8], format: Format) -> usize {
    let text = String::from_utf8_lossy(bytes);
    let records: Vec<serde_json::Value> = match serde_json::from_str(&text) {
        Ok(document @ serde_json::Value::Object(_)) => vec![document],
        _ => text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect(),
    };
    match format {
        Format::GeminiSession => {
            let mut last: std::collections::BTreeMap<String, usize> = Default::default();
            let mut messages = Vec::new();
            for record in &records {
                match record["messages"].as_array() {
                    Some(list) => messages.extend(list.iter().cloned()),
                    None if record["id"].is_string() => messages.push(record.clone()),
                    None => {}
                }
            }
            for (idx, message) in messages.iter().enumerate() {
                last.insert(message["id"].as_str().unwrap_or("").to_owned(), idx);
            }
            last.values()
                .map(|&idx| messages[idx]["toolCalls"].as_array().map_or(0, Vec::len))
                .sum()
        }
        Format::OpenCodeRun => records.iter().filter(|r| r["type"] == "tool_use").count(),
        _ => records
            .iter()
            .filter(|r| r["type"] == "message" && r["message"]["role"] == "assistant")
            .flat_map(|r| r["message"]["content"].as_array().cloned().unwrap_or_default())
            .filter(|block| block["type"] == "toolCall")
            .count(),
    }
}
