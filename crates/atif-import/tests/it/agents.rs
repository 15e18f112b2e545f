//! Gemini CLI, OpenCode and pi, on small logs of our own: the cases the real runs do not show.

use atif_import::{Format, ImportOptions, import};

use crate::support::{assert_valid, functions, joins, sources, steps, unanswered};

fn strict_import(log: &[u8]) -> atif_import::Import {
    let mut options = ImportOptions::new();
    options.set_strict(true);
    let imported = import(log, &options).unwrap();
    assert_valid(&imported.trajectory(), "inline log");
    imported
}

#[test]
fn a_gemini_session_applies_replacements_and_rewinds_and_keeps_error_results() {
    let log = br#"{"sessionId":"g1","projectHash":"h","startTime":"2026-01-01T00:00:00Z","kind":"main"}
{"id":"u1","timestamp":"2026-01-01T00:00:01Z","type":"user","content":[{"text":"first try"}]}
{"id":"m1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"abandoned","model":"gemini-2.5-flash"}
{"$rewindTo":"u1"}
{"id":"u2","timestamp":"2026-01-01T00:00:03Z","type":"user","content":[{"text":"list ."}]}
{"id":"m2","timestamp":"2026-01-01T00:00:04Z","type":"gemini","content":"","model":"gemini-2.5-flash","tokens":{"input":100,"output":5,"cached":40,"thoughts":3,"tool":0,"total":108}}
{"id":"m2","timestamp":"2026-01-01T00:00:04Z","type":"gemini","content":"","model":"gemini-2.5-flash","tokens":{"input":100,"output":5,"cached":40,"thoughts":3,"tool":0,"total":108},"thoughts":[{"subject":"Plan","description":"List it."}],"toolCalls":[{"id":"ls-1","name":"list_directory","args":{"path":"."},"status":"error","result":[{"functionResponse":{"id":"ls-1","name":"list_directory","response":{"error":"Path must be absolute: ."}}}]}]}
{"id":"u3","timestamp":"2026-01-01T00:00:05Z","type":"user","content":[{"functionResponse":{"id":"ls-1","name":"list_directory","response":{"error":"Path must be absolute: ."}}}]}
{"id":"e1","timestamp":"2026-01-01T00:00:06Z","type":"error","content":"Quota exceeded"}
"#;
    let imported = strict_import(log);
    assert_eq!(imported.format(), Format::GeminiSession);
    let t = &imported.trajectory();
    // The rewound message is gone, the replaced one counted once, the echoed result skipped.
    assert_eq!(sources(t), "uas");
    assert_eq!(steps(t)[0]["message"], "list .");
    let call_step = &steps(t)[1];
    assert_eq!(call_step["reasoning_content"], "Plan: List it.");
    assert_eq!(call_step["metrics"]["prompt_tokens"], 100);
    assert_eq!(call_step["metrics"]["completion_tokens"], 8);
    let result = &call_step["observation"]["results"][0];
    assert_eq!(result["content"], "Path must be absolute: .");
    assert_eq!(result["extra"]["is_error"], true);
    assert_eq!(result["extra"]["status"], "error");
    assert_eq!(steps(t)[2]["extra"]["error"]["message"], "Quota exceeded");
    assert_eq!(t["extra"]["crashed"], true);
}

#[test]
fn an_opencode_tool_still_running_when_the_run_died_has_no_result_and_the_run_is_crashed() {
    let log = br#"{"type":"step_start","timestamp":1769231333010,"sessionID":"ses_1","part":{"id":"p1","messageID":"m1","sessionID":"ses_1","type":"step-start"}}
{"type":"tool_use","timestamp":1769231333013,"sessionID":"ses_1","part":{"id":"p2","messageID":"m1","type":"tool","callID":"c1","tool":"read","state":{"status":"error","input":{"filePath":"/nope"},"error":"File not found: /nope"}}}
{"type":"tool_use","timestamp":1769231333014,"sessionID":"ses_1","part":{"id":"p3","messageID":"m1","type":"tool","callID":"c2","tool":"bash","state":{"status":"running","input":{"command":"sleep 600"}}}}
{"type":"error","timestamp":1769231333015,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"rate limited"}}}
"#;
    let imported = strict_import(log);
    assert_eq!(imported.format(), Format::OpenCodeRun);
    let t = &imported.trajectory();
    assert_eq!(functions(t), ["read", "bash"]);
    assert_eq!(joins(t), [(1, "c1".to_owned())]);
    assert_eq!(unanswered(t), ["c2"]);
    let failed = &steps(t)[0]["observation"]["results"][0];
    assert_eq!(failed["content"], "File not found: /nope");
    assert_eq!(failed["extra"]["is_error"], true);
    assert_eq!(
        steps(t)[1]["extra"]["error"],
        serde_json::json!({"kind": "APIError", "message": "rate limited"})
    );
    assert_eq!(t["extra"]["crashed"], true);
}

#[test]
fn a_pi_session_follows_the_active_branch_and_counts_the_abandoned_one() {
    let log = br#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"read x","timestamp":1}}
{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"old answer"}],"model":"m","usage":{"input":5,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"}}
{"type":"message","id":"c","parentId":"a","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"look"},{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"x"}}],"model":"m","usage":{"input":5,"output":2,"cacheRead":10,"cacheWrite":1},"stopReason":"toolUse"}}
{"type":"message","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"x's text"}],"isError":false}}
"#;
    let imported = strict_import(log);
    assert_eq!(imported.format(), Format::PiSession);
    let t = &imported.trajectory();
    assert_eq!(sources(t), "ua");
    assert_eq!(steps(t)[1]["reasoning_content"], "look");
    assert_eq!(steps(t)[1]["metrics"]["prompt_tokens"], 16);
    assert_eq!(steps(t)[1]["metrics"]["cached_tokens"], 10);
    assert_eq!(joins(t), [(2, "t1".to_owned())]);
    assert_eq!(t["extra"]["cwd"], "/w");
    assert_eq!(imported.stats().dropped().get("entry off the active branch"), Some(&1));
}
