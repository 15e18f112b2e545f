//! Tests of validation: one `check` per rule on tiny inline documents, the 157 measured cases of
//! the format note's Appendix A as a table (harbor verdict = Harbor 0.26's, strict verdict as
//! documented in docs/validation.md), hostile bytes, our fixtures and the public corpus.

use std::path::Path;

use atif_schema::{
    Profile, Rule, SchemaVersion, ValidateOptions, Validation, parse_json, validate, validate_bytes,
};
use serde_json::{Value, json};

// ----- helpers ---------------------------------------------------------------------------------

fn strict() -> ValidateOptions {
    ValidateOptions::default()
}

fn harbor() -> ValidateOptions {
    ValidateOptions::with_profile(Profile::Harbor)
}

/// Validates `text` with `options` and asserts the findings are exactly `expected`, as
/// `severity[rule] pointer` strings in report order.
#[track_caller]
fn check_with(text: &str, options: &ValidateOptions, expected: &[&str]) -> Validation {
    let report = validate_bytes(text.as_bytes(), options);
    let actual: Vec<String> = report
        .findings
        .iter()
        .map(|finding| format!("{}[{}] {}", finding.severity, finding.rule, finding.pointer))
        .collect();
    let actual: Vec<&str> = actual.iter().map(|s| s.trim_end()).collect();
    assert_eq!(actual, expected, "\nfindings:\n{}", render(&report));
    report
}

/// [`check_with`] in the strict (default) profile.
#[track_caller]
fn check(text: &str, expected: &[&str]) -> Validation {
    check_with(text, &strict(), expected)
}

fn render(report: &Validation) -> String {
    report.findings.iter().map(|finding| format!("  {finding}\n")).collect()
}

/// The message of the only finding with this rule.
#[track_caller]
fn message(report: &Validation, rule: Rule) -> String {
    let messages: Vec<&str> = report
        .findings
        .iter()
        .filter(|finding| finding.rule == rule)
        .map(|finding| finding.message.as_str())
        .collect();
    assert_eq!(messages.len(), 1, "{rule}:\n{}", render(report));
    messages[0].to_owned()
}

/// A small valid document: a user step, then an agent step with one tool call and its result.
fn base() -> Value {
    json!({
        "schema_version": "ATIF-v1.7",
        "session_id": "s-1",
        "agent": {"name": "demo", "version": "1.0", "model_name": "m-1"},
        "steps": [
            {"step_id": 1, "timestamp": "2025-10-16T14:30:00Z", "source": "user", "message": "list files"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "calling ls",
                "model_name": "m-1",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "ls", "arguments": {"path": "."}}],
                "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]},
                "metrics": {"prompt_tokens": 10, "completion_tokens": 5, "cached_tokens": 2, "cost_usd": 0.001}
            }
        ]
    })
}

/// A minimal embedded subagent with this id.
fn subagent(id: &str) -> Value {
    json!({
        "schema_version": "ATIF-v1.7",
        "trajectory_id": id,
        "agent": {"name": "sub", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "sub task"}]
    })
}

fn text(document: &Value) -> String {
    serde_json::to_string(document).unwrap()
}

/// Sets the value at `pointer` (its parent must exist; `-` appends to an array).
fn set(document: &mut Value, pointer: &str, value: Value) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match document.pointer_mut(parent).unwrap() {
        Value::Object(object) => {
            object.insert(key.to_owned(), value);
        }
        Value::Array(elements) if key == "-" => elements.push(value),
        Value::Array(elements) => elements[key.parse::<usize>().unwrap()] = value,
        other => panic!("cannot set {pointer} in {other}"),
    }
}

fn remove(document: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match document.pointer_mut(parent).unwrap() {
        Value::Object(object) => {
            object.remove(key);
        }
        Value::Array(elements) => {
            elements.remove(key.parse::<usize>().unwrap());
        }
        other => panic!("cannot remove {pointer} from {other}"),
    }
}

/// The base document with `edit` applied.
fn doc(edit: impl FnOnce(&mut Value)) -> String {
    let mut document = base();
    edit(&mut document);
    text(&document)
}

// ----- one check per rule ----------------------------------------------------------------------

#[test]
fn the_base_document_is_valid_without_findings() {
    let report = check(&text(&base()), &[]);
    assert_eq!(report.version, Some(SchemaVersion::V1_7));
    assert_eq!(report.n_steps, Some(2));
    assert!(report.is_valid());
    check_with(&text(&base()), &harbor(), &[]);
}

#[test]
fn unparseable_bytes_give_one_json_finding_with_line_and_column() {
    let report = check("{\n  \"a\": 1,\n  \"b\" 2\n}", &["error[json]"]);
    assert!(message(&report, Rule::Json).contains("line 3, column 7"), "{}", render(&report));
    assert_eq!(report.version, None);
    assert!(!report.is_valid());
}

#[test]
fn every_finding_is_reported_not_just_the_first() {
    let report = check(
        &doc(|d| {
            set(d, "/steps/0/timestamp", json!("yesterday"));
            set(d, "/steps/0/model_name", json!("m"));
            set(d, "/steps/1/step_id", json!(3));
            set(d, "/steps/1/observation/results/0/source_call_id", json!("c9"));
            set(d, "/agent/model", json!("m"));
        }),
        &[
            "error[unknown-field] /agent/model",
            "error[agent-only-field] /steps/0/model_name",
            "error[timestamp] /steps/0/timestamp",
            "error[call-join] /steps/1/observation/results/0/source_call_id",
            "error[step-sequence] /steps/1/step_id",
        ],
    );
    assert_eq!(report.errors().count(), 5);
}

#[test]
fn the_root_must_be_an_object() {
    let report = check("[{}, {}]", &["error[root-object]"]);
    assert!(message(&report, Rule::RootObject).contains("array of 2 elements"));
    check("\"ATIF\"", &["error[root-object]"]);
}

#[test]
fn unknown_fields_are_errors_everywhere_with_hints() {
    let report = check(
        &doc(|d| {
            set(d, "/steps/1/tool_calls/0/id", json!("c1"));
            set(d, "/steps/1/metrics/reasoning_tokens", json!(3));
            set(d, "/steps/1/observation/results/0/output", json!("x"));
            set(d, "/meta", json!({}));
        }),
        &[
            "error[unknown-field] /meta",
            "error[unknown-field] /steps/1/metrics/reasoning_tokens",
            "error[unknown-field] /steps/1/observation/results/0/output",
            "error[unknown-field] /steps/1/tool_calls/0/id",
        ],
    );
    let messages: Vec<&str> = report.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(messages[1].contains("belong in `extra`"), "{messages:?}");
    assert!(messages[3].contains("tool_call_id"), "{messages:?}");
}

#[test]
fn required_fields_missing_or_null_are_errors() {
    check(
        &doc(|d| {
            remove(d, "/agent/version");
            set(d, "/steps/0/message", Value::Null);
            remove(d, "/steps/1/tool_calls/0/arguments");
        }),
        &[
            "error[required] /agent",
            "error[required] /steps/0/message",
            "error[required] /steps/1/tool_calls/0",
        ],
    );
    check(r#"{"schema_version": "ATIF-v1.8"}"#, &["error[required]", "error[required]"]);
}

#[test]
fn strict_typing_rejects_python_habits_and_names_them() {
    let report = check(
        &doc(|d| {
            set(d, "/steps/1/metrics/prompt_tokens", json!("7"));
            set(d, "/steps/1/metrics/completion_tokens", json!(2.0));
            set(d, "/steps/1/metrics/cached_tokens", json!(true));
            set(d, "/steps/0/is_copied_context", json!("yes"));
        }),
        &[
            "error[type] /steps/0/is_copied_context",
            "error[type] /steps/1/metrics/cached_tokens",
            "error[type] /steps/1/metrics/completion_tokens",
            "error[type] /steps/1/metrics/prompt_tokens",
        ],
    );
    let messages: Vec<&str> = report.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(
        messages[0].contains("the string \"yes\"") && messages[0].contains("Pydantic"),
        "{messages:?}"
    );
    assert!(messages[1].contains("bool is an int subclass"), "{messages:?}");
    assert!(messages[2].contains("the float 2.0"), "{messages:?}");
    assert!(
        messages[3].contains("numbers in quotes")
            && messages[3].contains("str(n)")
            && messages[3].contains("coerce it to 7"),
        "{messages:?}"
    );
    // Every other Python habit is named too.
    let report = check(
        &doc(|d| {
            remove(d, "/schema_version");
            set(d, "/steps/1/metrics/cost_usd", json!("0.5"));
            set(d, "/steps/1/reasoning_effort", json!(true));
        }),
        &[
            "error[schema-version]",
            "error[type] /steps/1/metrics/cost_usd",
            "error[type] /steps/1/reasoning_effort",
        ],
    );
    let messages: Vec<&str> = report.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(messages[0].contains("Harbor assumes ATIF-v1.8"), "{messages:?}");
    assert!(
        messages[1].contains("str(n)") && messages[1].contains("coerce it to 0.5"),
        "{messages:?}"
    );
    assert!(messages[2].contains("Python's bool is an int"), "{messages:?}");
}

#[test]
fn harbor_accepts_the_same_habits_as_warnings() {
    let report = check_with(
        &doc(|d| {
            set(d, "/steps/1/metrics/prompt_tokens", json!(" 7"));
            set(d, "/steps/1/step_id", json!("2"));
            set(d, "/steps/0/is_copied_context", json!("Y"));
        }),
        &harbor(),
        &[
            "warning[type] /steps/0/is_copied_context",
            "warning[type] /steps/1/metrics/prompt_tokens",
            "warning[type] /steps/1/step_id",
        ],
    );
    assert!(report.is_valid());
    // What Pydantic cannot coerce is an error under Harbor too.
    check_with(
        &doc(|d| set(d, "/steps/1/metrics/prompt_tokens", json!("2.5"))),
        &harbor(),
        &["error[type] /steps/1/metrics/prompt_tokens"],
    );
}

#[test]
fn schema_version_must_be_one_of_the_nine_labels() {
    let report = check(
        &doc(|d| set(d, "/schema_version", json!("1.4"))),
        &["error[schema-version] /schema_version"],
    );
    assert!(message(&report, Rule::SchemaVersion).contains("did you mean \"ATIF-v1.4\""));
    let report = check(&doc(|d| remove(d, "/schema_version")), &["error[schema-version]"]);
    assert!(message(&report, Rule::SchemaVersion).contains("Harbor assumes ATIF-v1.8"));
    let report =
        check_with(&doc(|d| remove(d, "/schema_version")), &harbor(), &["warning[schema-version]"]);
    assert_eq!(report.version, Some(SchemaVersion::V1_8));
}

#[test]
fn steps_must_not_be_empty() {
    check(&doc(|d| set(d, "/steps", json!([]))), &["error[empty-steps] /steps"]);
}

#[test]
fn step_ids_count_from_one_in_order() {
    let report = check(
        &doc(|d| {
            set(d, "/steps/0/step_id", json!(0));
            set(d, "/steps/1/step_id", json!(1));
        }),
        &["error[step-sequence] /steps/0/step_id", "error[step-sequence] /steps/1/step_id"],
    );
    assert!(report.findings[0].message.contains("expected step_id 1"), "{}", render(&report));
}

#[test]
fn source_is_one_of_three_lower_case_words() {
    let report = check(
        &doc(|d| set(d, "/steps/1/source", json!("assistant"))),
        &["error[enum] /steps/1/source"],
    );
    assert!(message(&report, Rule::Enum).contains("ATIF calls it \"agent\""));
}

#[test]
fn agent_only_fields_are_errors_on_other_steps_even_when_empty() {
    check(
        &doc(|d| {
            set(d, "/steps/0/tool_calls", json!([]));
            set(d, "/steps/0/metrics", json!({}));
            set(d, "/steps/0/reasoning_effort", json!("low"));
            set(d, "/steps/0/reasoning_content", json!("hm"));
            set(d, "/steps/0/model_name", Value::Null);
        }),
        &[
            "error[agent-only-field] /steps/0/metrics",
            "error[agent-only-field] /steps/0/reasoning_content",
            "error[agent-only-field] /steps/0/reasoning_effort",
            "error[agent-only-field] /steps/0/tool_calls",
        ],
    );
}

#[test]
fn llm_call_count_zero_forbids_metrics_and_reasoning() {
    check(
        &doc(|d| {
            set(d, "/steps/1/llm_call_count", json!(0));
            set(d, "/steps/1/reasoning_content", json!("why"));
        }),
        &[
            "error[llm-call-zero] /steps/1/metrics",
            "error[llm-call-zero] /steps/1/reasoning_content",
        ],
    );
    check(&doc(|d| set(d, "/steps/0/llm_call_count", json!(0))), &[]);
}

#[test]
fn counts_and_durations_have_lower_bounds() {
    check(
        &doc(|d| {
            set(d, "/steps/1/llm_call_count", json!(-1));
            set(d, "/final_metrics", json!({"total_steps": -1}));
        }),
        &["error[range] /final_metrics/total_steps", "error[range] /steps/1/llm_call_count"],
    );
}

#[test]
fn results_must_answer_a_call_of_their_own_step() {
    let report = check(
        &doc(|d| {
            let mut third = json!({"step_id": 3, "source": "agent", "message": "again",
                "observation": {"results": [{"source_call_id": "c1", "content": "late"}]}});
            set(
                &mut third,
                "/observation/results/-",
                json!({"source_call_id": "", "content": "x"}),
            );
            set(d, "/steps/-", third);
        }),
        &[
            "error[call-join] /steps/2/observation/results/0/source_call_id",
            "error[call-join] /steps/2/observation/results/1/source_call_id",
        ],
    );
    assert!(
        report.findings[0].message.contains("this step has no tool_calls"),
        "{}",
        render(&report)
    );
}

#[test]
fn timestamps_follow_python_fromisoformat() {
    for accepted in
        ["2025-10-16T14:30:00Z", "2025-10-16", "2025-W42-4", "20251016T143000Z", "2025-10-16 14:30"]
    {
        check(&doc(|d| set(d, "/steps/0/timestamp", json!(accepted))), &[]);
    }
    for rejected in
        ["2025-10-16T14:30:00z", "2025-10-16T24:00:00", "1697466600", "2025-10-16T14:30:00ZZ"]
    {
        let report = check(
            &doc(|d| set(d, "/steps/0/timestamp", json!(rejected))),
            &["error[timestamp] /steps/0/timestamp"],
        );
        assert!(message(&report, Rule::Timestamp).contains("fromisoformat"));
    }
    check(
        &doc(|d| set(d, "/steps/0/timestamp", json!(1697466600))),
        &["error[type] /steps/0/timestamp"],
    );
}

fn with_parts(parts: Value) -> String {
    doc(|d| {
        set(d, "/schema_version", json!("ATIF-v1.8"));
        set(d, "/steps/0/message", parts);
    })
}

#[test]
fn content_parts_have_the_fields_of_their_type() {
    check(
        &with_parts(json!([
            {"type": "text", "text": ""},
            {"type": "image", "source": {"media_type": "image/png", "path": "images/a.png"}},
            {"type": "audio", "source": {"media_type": "Audio/MP3", "path": "a.mp3", "duration_sec": 1.5}},
            {"type": "image", "source": {"media_type": "image/webp", "path": "data:image/webp;base64,AAAA"}}
        ])),
        &[],
    );
    check(
        &with_parts(json!([
            {"type": "text"},
            {"type": "text", "text": "a", "source": {"media_type": "image/png", "path": "a.png"}},
            {"type": "image", "text": "a", "source": {"media_type": "image/png", "path": "a.png"}},
            {"type": "image"},
            {"type": "image", "source": {"media_type": "audio/wav", "path": "a.wav"}},
            {"type": "audio", "source": {"media_type": "image/png", "path": "a.png"}},
            {"type": "video", "source": {"media_type": "video/mp4", "path": "a.mp4"}},
            {"type": "text", "text": "a", "style": "bold"}
        ])),
        &[
            "error[content-part] /steps/0/message/0",
            "error[content-part] /steps/0/message/1/source",
            "error[content-part] /steps/0/message/2/text",
            "error[content-part] /steps/0/message/3",
            "error[content-part] /steps/0/message/4/source",
            "error[content-part] /steps/0/message/5/source",
            "error[enum] /steps/0/message/6/type",
            "error[unknown-field] /steps/0/message/7/style",
        ],
    );
}

#[test]
fn media_files_must_exist_beside_the_trajectory_only_when_a_folder_is_given() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("images")).unwrap();
    std::fs::write(dir.path().join("images/here.png"), b"png").unwrap();
    let absolute_here = dir.path().join("images/here.png");
    let absolute_gone = dir.path().join("images/gone.png");
    let image =
        |path: &str| json!({"type": "image", "source": {"media_type": "image/png", "path": path}});
    let audio =
        |path: &str| json!({"type": "audio", "source": {"media_type": "audio/wav", "path": path}});
    let text = doc(|d| {
        set(d, "/schema_version", json!("ATIF-v1.8"));
        set(
            d,
            "/steps/0/message",
            json!([
                image("images/here.png"),
                image("images/gone.png"),
                image("images/here.png/"),
                image(absolute_here.to_str().unwrap()),
                image(absolute_gone.to_str().unwrap()),
                image("https://example.com/a.png"),
                image("s3://bucket/a.png"),
                image(""),
                audio("data:audio/wav;base64,UklGRg=="),
                {"type": "text", "text": "images/gone.png"}
            ]),
        );
        set(d, "/steps/1/observation/results/0/content", json!([audio("audio/gone.wav")]));
        // Harbor looks only at the top-level steps, not inside embedded subagents.
        let mut sub = subagent("sub-1");
        set(&mut sub, "/steps/0/message", json!([image("images/gone.png")]));
        set(d, "/subagent_trajectories", json!([sub]));
    });
    let expected = |severity: &str| {
        [
            "/steps/0/message/1/source/path",
            "/steps/0/message/4/source/path",
            "/steps/0/message/8/source/path",
            "/steps/1/observation/results/0/content/0/source/path",
        ]
        .map(|pointer| format!("{severity}[media-file] {pointer}"))
    };
    let mut harbor_in_dir = harbor();
    harbor_in_dir.set_media_folder(Some(dir.path().to_path_buf()));
    let report =
        check_with(&text, &harbor_in_dir, &expected("error").each_ref().map(String::as_str));
    assert!(!report.is_valid());
    let gone = &report.findings[0].message;
    assert!(
        gone.contains("the image file \"images/gone.png\" does not exist")
            && gone.contains(&format!("{:?}", absolute_gone.to_str().unwrap()))
            && gone.contains("Harbor's validator rejects"),
        "{gone}"
    );
    let data_uri = &report.findings[2].message;
    assert!(data_uri.contains("data: URI") && data_uri.contains("`://`"), "{data_uri}");
    // The same check on a parsed value.
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(validate(&value, &harbor_in_dir), report);

    // The strict profile warns: the document itself is well-formed.
    let mut strict_in_dir = strict();
    strict_in_dir.set_media_folder(Some(dir.path().to_path_buf()));
    let report =
        check_with(&text, &strict_in_dir, &expected("warning").each_ref().map(String::as_str));
    assert!(report.is_valid());

    // Without a folder, the file system is not read: both profiles accept.
    check_with(&text, &harbor(), &[]);
    check(&text, &[]);
    assert_eq!(harbor().media_folder(), None);
}

#[test]
fn a_data_uri_of_megabytes_is_cut_short_in_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let uri = format!("data:image/png;base64,{}", "A".repeat(1_000_000));
    let text =
        with_parts(json!([{"type": "image", "source": {"media_type": "image/png", "path": uri}}]));
    let mut options = harbor();
    options.set_media_folder(Some(dir.path().to_path_buf()));
    let report = check_with(&text, &options, &["error[media-file] /steps/0/message/0/source/path"]);
    assert!(report.findings[0].message.len() < 400, "{}", report.findings[0].message);
    assert!(report.findings[0].message.contains("\"data:image/png;base64,AAAA"));
}

#[test]
fn media_types_are_exact_for_images_and_normalised_for_audio() {
    let report = check(
        &with_parts(json!([
            {"type": "image", "source": {"media_type": "image/jpg", "path": "a.jpg"}},
            {"type": "image", "source": {"media_type": "IMAGE/PNG", "path": "a.png"}},
            {"type": "audio", "source": {"media_type": "audio/opus", "path": "a.opus"}},
            {"type": "audio", "source": {"media_type": "audio/x-wav", "path": "a.wav", "duration_sec": -1}},
            {"type": "image", "source": {"media_type": "image/png", "path": "a.png", "duration_sec": 1}}
        ])),
        &[
            "error[media-type] /steps/0/message/0/source/media_type",
            "error[media-type] /steps/0/message/1/source/media_type",
            "error[media-type] /steps/0/message/2/source/media_type",
            "error[range] /steps/0/message/3/source/duration_sec",
            "error[unknown-field] /steps/0/message/4/source/duration_sec",
        ],
    );
    assert!(report.findings[0].message.contains("\"image/jpeg\""));
}

#[test]
fn embedded_subagents_need_unique_ids_and_refs_must_resolve() {
    check(
        &doc(|d| {
            let mut nameless = subagent("x");
            remove(&mut nameless, "/trajectory_id");
            set(d, "/subagent_trajectories", json!([subagent("a"), subagent("a"), nameless]));
            set(
                d,
                "/steps/1/observation/results/0/subagent_trajectory_ref",
                json!([
                    {"trajectory_id": "a"},
                    {"trajectory_id": "b", "trajectory_path": "b.json"},
                    {"trajectory_id": "c"},
                    {"session_id": "s-2"}
                ]),
            );
        }),
        &[
            "error[subagent-resolve] /steps/1/observation/results/0/subagent_trajectory_ref/2/trajectory_id",
            "error[subagent-ref] /steps/1/observation/results/0/subagent_trajectory_ref/3",
            "error[subagent-id] /subagent_trajectories/1/trajectory_id",
            "error[subagent-id] /subagent_trajectories/2",
        ],
    );
    // Harbor checks neither resolution nor anything but the ids.
    check_with(
        &doc(|d| {
            set(
                d,
                "/steps/1/observation/results/0/subagent_trajectory_ref",
                json!([{"trajectory_id": "c"}]),
            );
        }),
        &harbor(),
        &[
            "warning[subagent-resolve] /steps/1/observation/results/0/subagent_trajectory_ref/0/trajectory_id",
        ],
    );
}

#[test]
fn a_ref_may_name_an_embedded_subagent_anywhere_in_the_document() {
    check(
        &doc(|d| {
            let mut first = subagent("first");
            set(
                &mut first,
                "/steps/-",
                json!({"step_id": 2, "source": "agent", "message": "delegating",
                "observation": {"results": [{"subagent_trajectory_ref": [{"trajectory_id": "second"}]}]}}),
            );
            set(d, "/subagent_trajectories", json!([first, subagent("second")]));
        }),
        &[],
    );
}

#[test]
fn embedded_subagents_follow_every_rule_recursively() {
    check(
        &doc(|d| {
            let mut child = subagent("child");
            set(&mut child, "/steps/0/step_id", json!(2));
            set(&mut child, "/subagent_trajectories", json!([subagent("g"), subagent("g")]));
            set(d, "/subagent_trajectories", json!([child]));
        }),
        &[
            "error[step-sequence] /subagent_trajectories/0/steps/0/step_id",
            "error[subagent-id] /subagent_trajectories/0/subagent_trajectories/1/trajectory_id",
        ],
    );
}

#[test]
fn subagent_nesting_beyond_the_limit_is_reported_not_overflowed() {
    let mut document = subagent("leaf");
    for level in 0..200 {
        let mut parent = subagent(&format!("level-{level}"));
        set(&mut parent, "/subagent_trajectories", json!([document]));
        document = parent;
    }
    let report = validate(&document, &strict());
    assert_eq!(
        report.findings.iter().filter(|f| f.rule == Rule::Depth).count(),
        1,
        "{}",
        render(&report)
    );
    // Dropping a deep Value recurses in serde_json; forget it to keep this test about us.
    std::mem::forget(document);
}

#[test]
fn duplicate_keys_are_errors_in_strict_and_warnings_under_harbor() {
    let text = r#"{"schema_version": "ATIF-v1.7", "agent": {"name": "a", "version": "1", "name": "b"},
        "steps": [{"step_id": 1, "source": "user", "message": "x", "message": "y"}], "session_id": "s"}"#;
    let report =
        check(text, &["error[duplicate-key] /agent/name", "error[duplicate-key] /steps/0/message"]);
    assert!(report.findings[0].message.contains("keeps the last value"));
    check_with(
        text,
        &harbor(),
        &["warning[duplicate-key] /agent/name", "warning[duplicate-key] /steps/0/message"],
    );
}

#[test]
fn nan_is_an_error_in_strict_and_accepted_by_harbor_where_floats_go() {
    let text = doc(|d| set(d, "/steps/1/metrics/cost_usd", json!("NAN_HERE")))
        .replace("\"NAN_HERE\"", "NaN");
    let report = check(&text, &["error[non-finite-number] /steps/1/metrics/cost_usd"]);
    assert!(message(&report, Rule::NonFiniteNumber).contains("allow_nan=False"));
    let report =
        check_with(&text, &harbor(), &["warning[non-finite-number] /steps/1/metrics/cost_usd"]);
    assert!(report.is_valid());
    // An integer field does not take NaN, under Harbor either.
    let text = doc(|d| set(d, "/steps/1/metrics/prompt_tokens", json!("NAN_HERE")))
        .replace("\"NAN_HERE\"", "Infinity");
    check_with(
        &text,
        &harbor(),
        &[
            "warning[non-finite-number] /steps/1/metrics/prompt_tokens",
            "error[type] /steps/1/metrics/prompt_tokens",
        ],
    );
}

#[test]
fn millions_of_nans_or_duplicates_are_counted_not_all_listed() {
    let nans = vec!["NaN"; 10_005].join(",");
    let duplicates = vec!["\"k\": 1"; 10_003].join(",");
    let text = doc(|d| set(d, "/extra", json!({"nans": "NANS", "dups": "DUPS"})))
        .replace("\"NANS\"", &format!("[{nans}]"))
        .replace("\"DUPS\"", &format!("{{{duplicates}}}"));
    let report = validate_bytes(text.as_bytes(), &strict());
    let count = |rule: Rule| report.findings.iter().filter(|finding| finding.rule == rule).count();
    assert_eq!(count(Rule::NonFiniteNumber), 10_001);
    assert_eq!(count(Rule::DuplicateKey), 10_001);
    assert_eq!(report.findings[0].pointer, "");
    assert!(
        report.findings[0].message.contains("… and 2 more duplicate keys"),
        "{}",
        report.findings[0]
    );
    assert!(
        report.findings[1].message.contains("… and 5 more non-finite numbers"),
        "{}",
        report.findings[1]
    );
}

#[test]
fn strings_that_look_like_the_readers_markers_stay_strings() {
    // The reader marks NaN with a noncharacter the document does not use; these use the first.
    let text = doc(|d| {
        set(d, "/steps/1/metrics/cost_usd", json!("\u{FDD0}NaN"));
        set(d, "/steps/1/metrics/logprobs", json!(["NAN_HERE"]));
        set(d, "/session_id", json!("\u{FDD0}NaN"));
    })
    .replace("\"NAN_HERE\"", "NaN");
    for options in [strict(), harbor()] {
        let report = validate_bytes(text.as_bytes(), &options);
        let errors: Vec<String> = report
            .errors()
            .map(|finding| format!("{}[{}] {}", finding.severity, finding.rule, finding.pointer))
            .collect();
        let expected = match options.profile() {
            Profile::Strict => vec![
                "error[type] /steps/1/metrics/cost_usd",
                "error[non-finite-number] /steps/1/metrics/logprobs/0",
            ],
            _ => vec!["error[type] /steps/1/metrics/cost_usd"],
        };
        assert_eq!(errors, expected, "{}", render(&report));
    }
}

#[test]
fn a_byte_order_mark_is_reported_and_the_rest_still_checked() {
    let text = format!("\u{FEFF}{}", doc(|d| set(d, "/steps/1/step_id", json!(5))));
    let report = check(&text, &["error[json]", "error[step-sequence] /steps/1/step_id"]);
    assert!(report.findings[0].message.contains("byte-order mark"));
}

#[test]
fn hostile_bytes_are_single_clear_json_errors() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let cases: [(&[u8], &str); 7] = [
        (b"", "empty document"),
        (b"{\"a\": \"\xC3\x28\"}", "invalid UTF-8"),
        (b"{\"schema_version\": \"ATIF-v1.7\"} x", "trailing characters"),
        (b"{\"steps\": [", "ends early"),
        (deep.as_bytes(), "nested deeper than 128"),
        (b"{\"a\": NaN x}", "line 1, column 11"),
        (b"\xFF\xFE{\x00}\x00", "UTF-16"),
    ];
    for (bytes, expected) in cases {
        for options in [strict(), harbor()] {
            let report = validate_bytes(bytes, &options);
            assert_eq!(report.findings.len(), 1, "{expected}: {}", render(&report));
            assert_eq!(report.findings[0].rule, Rule::Json);
            assert!(
                report.findings[0].message.contains(expected),
                "{expected}: {}",
                render(&report)
            );
        }
    }
}

#[test]
fn parse_json_is_strict_and_says_where() {
    let err = parse_json(b"{\"a\": 1, \"b\": {\"c\": 1, \"c\": 2}}").unwrap_err();
    assert!(err.to_string().starts_with("/b/c: this key repeats"), "{err}");
    let err = parse_json(b"{\"a\": NaN}").unwrap_err();
    assert!(
        err.to_string().contains("line 1, column 7") && err.to_string().contains("json.dumps"),
        "{err}"
    );
    let err = parse_json("\u{FEFF}{}".as_bytes()).unwrap_err();
    assert!(err.to_string().contains("byte-order mark"), "{err}");
    assert_eq!(parse_json(b" {\"a\": [1, 2.5, null]} ").unwrap(), json!({"a": [1, 2.5, null]}));
}

#[test]
fn warnings_leave_the_document_valid() {
    let report = check(
        &doc(|d| {
            set(d, "/schema_version", json!("ATIF-v1.2"));
            set(d, "/steps/1/llm_call_count", json!(1));
            set(
                d,
                "/steps/1/tool_calls/-",
                json!({"tool_call_id": "c1", "function_name": "ls", "arguments": {}}),
            );
            set(d, "/steps/1/metrics/cached_tokens", json!(11));
            set(d, "/steps/1/metrics/completion_token_ids", json!([1, 2, 3]));
            set(d, "/final_metrics", json!({"total_prompt_tokens": 99, "total_steps": 3}));
        }),
        &[
            "warning[final-metrics-sum] /final_metrics/total_prompt_tokens",
            "warning[total-steps] /final_metrics/total_steps",
            "warning[version-feature] /steps/1/llm_call_count",
            "warning[cached-tokens] /steps/1/metrics/cached_tokens",
            "warning[token-count] /steps/1/metrics/completion_token_ids",
            "warning[version-feature] /steps/1/metrics/completion_token_ids",
            "warning[duplicate-tool-call-id] /steps/1/tool_calls/1/tool_call_id",
        ],
    );
    assert!(report.is_valid());
    assert_eq!(report.warnings().count(), 7);
}

#[test]
fn version_feature_warnings_are_one_per_feature_with_a_count() {
    let report = check(
        &doc(|d| {
            set(d, "/schema_version", json!("ATIF-v1.6"));
            set(d, "/steps/0/llm_call_count", json!(0));
            set(d, "/steps/1/llm_call_count", json!(1));
        }),
        &["warning[version-feature] /steps/0/llm_call_count"],
    );
    assert!(
        message(&report, Rule::VersionFeature)
            .contains("ATIF-v1.7, but the document is labelled ATIF-v1.6 (and 1 more places)")
    );
}

#[test]
fn notes_explain_unequal_totals() {
    let edit = |d: &mut Value| {
        set(d, "/final_metrics", json!({"total_prompt_tokens": 99, "total_cost_usd": 5.0}))
    };
    check(
        &doc(edit),
        &[
            "warning[final-metrics-sum] /final_metrics/total_cost_usd",
            "warning[final-metrics-sum] /final_metrics/total_prompt_tokens",
        ],
    );
    check(
        &doc(|d| {
            edit(d);
            set(d, "/notes", json!("totals include a retried call"));
        }),
        &[],
    );
    check(
        &doc(|d| {
            set(
                d,
                "/final_metrics",
                json!({"total_prompt_tokens": 10, "total_cost_usd": 0.001, "total_steps": 2}),
            )
        }),
        &[],
    );
}

#[test]
fn totals_may_exceed_the_sums_when_work_lives_elsewhere() {
    let with_file_ref = |d: &mut Value| {
        refs(d, json!([{"trajectory_path": "helper.json"}]));
    };
    check(
        &doc(|d| {
            with_file_ref(d);
            set(d, "/final_metrics", json!({"total_prompt_tokens": 99, "total_cost_usd": 0.5}));
        }),
        &[],
    );
    let report = check(
        &doc(|d| {
            with_file_ref(d);
            set(d, "/final_metrics", json!({"total_prompt_tokens": 9}));
        }),
        &["warning[final-metrics-sum] /final_metrics/total_prompt_tokens"],
    );
    assert!(message(&report, Rule::FinalMetricsSum).contains("can only add to the totals"));
    check(
        &doc(|d| {
            set(d, "/steps/0/is_copied_context", json!(true));
            set(d, "/final_metrics", json!({"total_completion_tokens": 50}));
        }),
        &[],
    );
}

#[test]
fn long_arrays_of_bad_elements_are_summarised() {
    let report = check(
        &doc(|d| set(d, "/steps/1/metrics/prompt_token_ids", json!(vec![1.5; 1000]))),
        &[
            "error[type] /steps/1/metrics/prompt_token_ids",
            "warning[token-count] /steps/1/metrics/prompt_token_ids",
            "error[type] /steps/1/metrics/prompt_token_ids/0",
            "error[type] /steps/1/metrics/prompt_token_ids/1",
            "error[type] /steps/1/metrics/prompt_token_ids/2",
        ],
    );
    assert!(report.findings[0].message.contains("997 more"));
}

#[test]
fn validate_on_a_value_agrees_with_validate_bytes() {
    for document in [base(), json!([1]), json!({"steps": [{"step_id": "1"}]})] {
        for options in [strict(), harbor()] {
            assert_eq!(
                validate(&document, &options),
                validate_bytes(text(&document).as_bytes(), &options)
            );
        }
    }
}

#[test]
fn findings_display_and_serialize_as_documented() {
    let report = check(
        &doc(|d| set(d, "/steps/1/step_id", json!(7))),
        &["error[step-sequence] /steps/1/step_id"],
    );
    assert_eq!(
        report.findings[0].to_string(),
        "error[step-sequence] /steps/1/step_id: expected step_id 2 (step ids count 1, 2, 3… in array order), found 7"
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["version"], "ATIF-v1.7");
    assert_eq!(json["findings"][0]["rule"], "step-sequence");
    assert_eq!(json["findings"][0]["severity"], "error");
    assert_eq!(json["findings"][0]["pointer"], "/steps/1/step_id");
    let report = check("[]", &["error[root-object]"]);
    assert!(
        report.findings[0].to_string().starts_with("error[root-object]: expected a JSON object")
    );
    // A finding stays on one line whatever the keys hold.
    let report =
        check(&doc(|d| set(d, "/agent/a\nb", json!(1))), &["error[unknown-field] /agent/a\nb"]);
    let line = report.findings[0].to_string();
    assert!(
        line.starts_with(r#"error[unknown-field] /agent/a\nb: unknown field "a\nb";"#),
        "{line}"
    );
    assert!(!line.contains('\n'), "{line}");
}

#[test]
fn profiles_parse_from_their_names() {
    assert_eq!("harbor".parse::<Profile>().unwrap(), Profile::Harbor);
    assert_eq!("strict".parse::<Profile>().unwrap(), Profile::Strict);
    assert_eq!(Profile::default(), Profile::Strict);
    let err = "lax".parse::<Profile>().unwrap_err();
    assert_eq!(err.to_string(), "unknown validation profile `lax`: expected strict or harbor");
}

#[test]
fn every_rule_is_documented_in_docs_validation_md() {
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/validation.md"),
    )
    .unwrap();
    for rule in Rule::ALL {
        assert!(
            docs.contains(&format!("`{}`", rule.id())),
            "docs/validation.md does not mention `{rule}`"
        );
    }
    let ids: std::collections::HashSet<&str> = Rule::ALL.iter().map(|rule| rule.id()).collect();
    assert_eq!(ids.len(), Rule::ALL.len(), "rule ids are unique");
}

// ----- Appendix A: 157 documents measured against Harbor 0.26 ------------------------------------

/// One measured case: name as in the format note, Harbor's verdict, ours in the strict profile,
/// the rule expected among the errors when a profile rejects, and the edit of the base document.
struct Case {
    name: &'static str,
    harbor: bool,
    strict: bool,
    rule: Option<&'static str>,
    edit: fn(&mut Value),
}

const fn case(
    name: &'static str,
    harbor: bool,
    strict: bool,
    rule: Option<&'static str>,
    edit: fn(&mut Value),
) -> Case {
    Case { name, harbor, strict, rule, edit }
}

const Y: bool = true;
const N: bool = false;

fn label(d: &mut Value, label: &str) {
    set(d, "/schema_version", json!(label));
}

fn ts(d: &mut Value, timestamp: &str) {
    set(d, "/steps/0/timestamp", json!(timestamp));
}

fn parts(d: &mut Value, parts: Value) {
    set(d, "/steps/0/message", parts);
}

fn image(media_type: &str, path: &str) -> Value {
    json!({"type": "image", "source": {"media_type": media_type, "path": path}})
}

fn audio(media_type: &str) -> Value {
    json!({"type": "audio", "source": {"media_type": media_type, "path": "a.wav"}})
}

fn refs(d: &mut Value, refs: Value) {
    set(d, "/steps/1/observation/results/0/subagent_trajectory_ref", refs);
}

fn context_boundary(d: &mut Value, copied: bool) {
    if copied {
        set(d, "/steps/0/is_copied_context", json!(true));
        set(d, "/steps/1/is_copied_context", json!(true));
    }
    set(
        d,
        "/steps/-",
        json!({"step_id": 3, "source": "system", "message": "summary",
        "observation": {"results": [{"content": "the story so far"}]},
        "extra": {"context_management": {"type": "compaction", "boundary": "replace"}}}),
    );
}

#[rustfmt::skip]
const APPENDIX_A: &[Case] = &[
    case("baseline v1.7", Y, Y, None, |_| {}),
    case("schema_version='ATIF-v1.0'", Y, Y, None, |d| label(d, "ATIF-v1.0")),
    case("schema_version='ATIF-v1.2'", Y, Y, None, |d| label(d, "ATIF-v1.2")),
    case("schema_version='ATIF-v1.6'", Y, Y, None, |d| label(d, "ATIF-v1.6")),
    case("schema_version='ATIF-v1.8'", Y, Y, None, |d| label(d, "ATIF-v1.8")),
    case("schema_version='ATIF-v1.9'", N, N, Some("schema-version"), |d| label(d, "ATIF-v1.9")),
    case("schema_version='ATIF-v2.0'", N, N, Some("schema-version"), |d| label(d, "ATIF-v2.0")),
    case("schema_version='atif-v1.7'", N, N, Some("schema-version"), |d| label(d, "atif-v1.7")),
    case("schema_version='ATIF-v1.7.1'", N, N, Some("schema-version"), |d| label(d, "ATIF-v1.7.1")),
    case("schema_version='banana'", N, N, Some("schema-version"), |d| label(d, "banana")),
    case("schema_version=''", N, N, Some("schema-version"), |d| label(d, "")),
    case("schema_version missing", Y, N, Some("schema-version"), |d| remove(d, "/schema_version")),
    case("schema_version null", N, N, Some("schema-version"), |d| set(d, "/schema_version", Value::Null)),
    case("schema_version int", N, N, Some("schema-version"), |d| set(d, "/schema_version", json!(17))),
    case("session_id missing (v1.2)", Y, Y, None, |d| { label(d, "ATIF-v1.2"); remove(d, "/session_id") }),
    case("session_id missing (v1.7)", Y, Y, None, |d| remove(d, "/session_id")),
    case("unknown root field", N, N, Some("unknown-field"), |d| set(d, "/producer", json!("x"))),
    case("steps empty", N, N, Some("empty-steps"), |d| set(d, "/steps", json!([]))),
    case("agent missing version", N, N, Some("required"), |d| remove(d, "/agent/version")),
    case("agent unknown field", N, N, Some("unknown-field"), |d| set(d, "/agent/model", json!("m"))),
    case("agent.version int", N, N, Some("type"), |d| set(d, "/agent/version", json!(1))),
    case("agent.tool_definitions list of dict", Y, Y, None, |d| set(d, "/agent/tool_definitions", json!([{"type": "function", "function": {"name": "ls"}}]))),
    case("agent.tool_definitions list of str", N, N, Some("type"), |d| set(d, "/agent/tool_definitions", json!(["ls"]))),
    case("step_id gap", N, N, Some("step-sequence"), |d| set(d, "/steps/1/step_id", json!(3))),
    case("step_id starts at 0", N, N, Some("step-sequence"), |d| { set(d, "/steps/0/step_id", json!(0)); set(d, "/steps/1/step_id", json!(1)) }),
    case("step_id string '2'", Y, N, Some("type"), |d| set(d, "/steps/1/step_id", json!("2"))),
    case("step_id float 2.0", Y, N, Some("type"), |d| set(d, "/steps/1/step_id", json!(2.0))),
    case("step_id float 2.5", N, N, Some("type"), |d| set(d, "/steps/1/step_id", json!(2.5))),
    case("step_id bool true (first)", Y, N, Some("type"), |d| set(d, "/steps/0/step_id", json!(true))),
    case("source 'assistant'", N, N, Some("enum"), |d| set(d, "/steps/1/source", json!("assistant"))),
    case("source 'Agent'", N, N, Some("enum"), |d| set(d, "/steps/1/source", json!("Agent"))),
    case("message missing", N, N, Some("required"), |d| remove(d, "/steps/0/message")),
    case("message null", N, N, Some("required"), |d| set(d, "/steps/0/message", Value::Null)),
    case("message empty string", Y, Y, None, |d| set(d, "/steps/0/message", json!(""))),
    case("message empty list", Y, Y, None, |d| set(d, "/steps/0/message", json!([]))),
    case("message dict", N, N, Some("type"), |d| set(d, "/steps/0/message", json!({"text": "hi"}))),
    case("message int", N, N, Some("type"), |d| set(d, "/steps/0/message", json!(7))),
    case("user step with model_name", N, N, Some("agent-only-field"), |d| set(d, "/steps/0/model_name", json!("m"))),
    case("user step with reasoning_effort", N, N, Some("agent-only-field"), |d| set(d, "/steps/0/reasoning_effort", json!("low"))),
    case("user step with reasoning_content", N, N, Some("agent-only-field"), |d| set(d, "/steps/0/reasoning_content", json!("hm"))),
    case("user step with tool_calls", N, N, Some("agent-only-field"), |d| set(d, "/steps/0/tool_calls", json!([]))),
    case("user step with metrics", N, N, Some("agent-only-field"), |d| set(d, "/steps/0/metrics", json!({"prompt_tokens": 1}))),
    case("system step with metrics", N, N, Some("agent-only-field"), |d| { set(d, "/steps/0/source", json!("system")); set(d, "/steps/0/metrics", json!({})) }),
    case("user step with explicit null model_name", Y, Y, None, |d| set(d, "/steps/0/model_name", Value::Null)),
    case("user step with observation", Y, Y, None, |d| set(d, "/steps/0/observation", json!({"results": [{"content": "pasted"}]}))),
    case("user step with llm_call_count 0", Y, Y, None, |d| set(d, "/steps/0/llm_call_count", json!(0))),
    case("user step with extra", Y, Y, None, |d| set(d, "/steps/0/extra", json!({"ui": "cli"}))),
    case("agent llm_call_count 0 with metrics", N, N, Some("llm-call-zero"), |d| set(d, "/steps/1/llm_call_count", json!(0))),
    case("agent llm_call_count 0 with reasoning_content", N, N, Some("llm-call-zero"), |d| { remove(d, "/steps/1/metrics"); set(d, "/steps/1/llm_call_count", json!(0)); set(d, "/steps/1/reasoning_content", json!("r")) }),
    case("agent llm_call_count 0 with model_name", Y, Y, None, |d| { remove(d, "/steps/1/metrics"); set(d, "/steps/1/llm_call_count", json!(0)) }),
    case("agent llm_call_count 0 with empty metrics {}", N, N, Some("llm-call-zero"), |d| { set(d, "/steps/1/metrics", json!({})); set(d, "/steps/1/llm_call_count", json!(0)) }),
    case("llm_call_count -1", N, N, Some("range"), |d| set(d, "/steps/1/llm_call_count", json!(-1))),
    case("llm_call_count 3", Y, Y, None, |d| set(d, "/steps/1/llm_call_count", json!(3))),
    case("reasoning_effort float", Y, Y, None, |d| set(d, "/steps/1/reasoning_effort", json!(0.7))),
    case("reasoning_effort int", Y, Y, None, |d| set(d, "/steps/1/reasoning_effort", json!(3))),
    case("reasoning_effort bool", Y, N, Some("type"), |d| set(d, "/steps/1/reasoning_effort", json!(true))),
    case("reasoning_effort dict", N, N, Some("type"), |d| set(d, "/steps/1/reasoning_effort", json!({"level": "low"}))),
    case("timestamp '2025-10-16T14:30:00Z'", Y, Y, None, |d| ts(d, "2025-10-16T14:30:00Z")),
    case("timestamp '2025-10-16T14:30:00.123456789Z'", Y, Y, None, |d| ts(d, "2025-10-16T14:30:00.123456789Z")),
    case("timestamp '2025-10-16 14:30:00'", Y, Y, None, |d| ts(d, "2025-10-16 14:30:00")),
    case("timestamp '2025-10-16'", Y, Y, None, |d| ts(d, "2025-10-16")),
    case("timestamp '20251016T143000Z'", Y, Y, None, |d| ts(d, "20251016T143000Z")),
    case("timestamp '2025-W42-4'", Y, Y, None, |d| ts(d, "2025-W42-4")),
    case("timestamp '2025-10-16T14:30:00+0530'", Y, Y, None, |d| ts(d, "2025-10-16T14:30:00+0530")),
    case("timestamp '2025-10-16T14:30:00z'", N, N, Some("timestamp"), |d| ts(d, "2025-10-16T14:30:00z")),
    case("timestamp '2025-10-16T14:30'", Y, Y, None, |d| ts(d, "2025-10-16T14:30")),
    case("timestamp '2025-10-16T24:00:00'", N, N, Some("timestamp"), |d| ts(d, "2025-10-16T24:00:00")),
    case("timestamp 'not a date'", N, N, Some("timestamp"), |d| ts(d, "not a date")),
    case("timestamp '1697466600'", N, N, Some("timestamp"), |d| ts(d, "1697466600")),
    case("timestamp '2025-10-16T14:30:00ZZ'", N, N, Some("timestamp"), |d| ts(d, "2025-10-16T14:30:00ZZ")),
    case("timestamp '2025-10-16T14:30:00+25:00'", N, N, Some("timestamp"), |d| ts(d, "2025-10-16T14:30:00+25:00")),
    case("timestamp int", N, N, Some("type"), |d| set(d, "/steps/0/timestamp", json!(1697466600))),
    case("source_call_id unknown (step has tool_calls)", N, N, Some("call-join"), |d| set(d, "/steps/1/observation/results/0/source_call_id", json!("c9"))),
    case("source_call_id on step without tool_calls", N, N, Some("call-join"), |d| remove(d, "/steps/1/tool_calls")),
    case("source_call_id on user step (no tool_calls)", N, N, Some("call-join"), |d| set(d, "/steps/0/observation", json!({"results": [{"source_call_id": "c1", "content": "x"}]}))),
    case("source_call_id refers to earlier step's call", N, N, Some("call-join"), |d| set(d, "/steps/-", json!({"step_id": 3, "source": "agent", "message": "m", "observation": {"results": [{"source_call_id": "c1", "content": "x"}]}}))),
    case("duplicate tool_call_id in step", Y, Y, None, |d| set(d, "/steps/1/tool_calls/-", json!({"tool_call_id": "c1", "function_name": "cat", "arguments": {}}))),
    case("tool_call arguments string", N, N, Some("type"), |d| set(d, "/steps/1/tool_calls/0/arguments", json!("{\"path\": \".\"}"))),
    case("tool_call arguments null", N, N, Some("required"), |d| set(d, "/steps/1/tool_calls/0/arguments", Value::Null)),
    case("tool_call arguments missing", N, N, Some("required"), |d| remove(d, "/steps/1/tool_calls/0/arguments")),
    case("tool_call arguments list", N, N, Some("type"), |d| set(d, "/steps/1/tool_calls/0/arguments", json!(["."]))),
    case("tool_call extra (v1.7 field)", Y, Y, None, |d| set(d, "/steps/1/tool_calls/0/extra", json!({"k": 1}))),
    case("tool_call unknown field", N, N, Some("unknown-field"), |d| set(d, "/steps/1/tool_calls/0/type", json!("function"))),
    case("observation results empty", Y, Y, None, |d| set(d, "/steps/1/observation/results", json!([]))),
    case("observation results missing", N, N, Some("required"), |d| set(d, "/steps/1/observation", json!({}))),
    case("observation result neither content nor ref", Y, Y, None, |d| remove(d, "/steps/1/observation/results/0/content")),
    case("observation result content null", Y, Y, None, |d| set(d, "/steps/1/observation/results/0/content", Value::Null)),
    case("observation result content dict", N, N, Some("type"), |d| set(d, "/steps/1/observation/results/0/content", json!({"output": "x"}))),
    case("observation result content int", N, N, Some("type"), |d| set(d, "/steps/1/observation/results/0/content", json!(0))),
    case("observation result extra", Y, Y, None, |d| set(d, "/steps/1/observation/results/0/extra", json!({"exit": 0}))),
    case("source_call_id empty string", N, N, Some("call-join"), |d| set(d, "/steps/1/observation/results/0/source_call_id", json!(""))),
    case("message parts text+image (v1.7)", Y, Y, None, |d| parts(d, json!([{"type": "text", "text": "see"}, image("image/png", "images/a.png")]))),
    case("message parts text+image (v1.2 label)", Y, Y, None, |d| { label(d, "ATIF-v1.2"); parts(d, json!([{"type": "text", "text": "see"}, image("image/png", "images/a.png")])) }),
    case("audio part (v1.7 label)", Y, Y, None, |d| parts(d, json!([audio("audio/wav")]))),
    case("audio part (v1.8 label)", Y, Y, None, |d| { label(d, "ATIF-v1.8"); parts(d, json!([audio("audio/wav")])) }),
    case("audio alias audio/mp3", Y, Y, None, |d| parts(d, json!([audio("audio/mp3")]))),
    case("audio duration -1", N, N, Some("range"), |d| parts(d, json!([{"type": "audio", "source": {"media_type": "audio/wav", "path": "a.wav", "duration_sec": -1}}]))),
    case("audio unknown media", N, N, Some("media-type"), |d| parts(d, json!([audio("audio/opus")]))),
    case("image part with audio source", N, N, Some("content-part"), |d| parts(d, json!([{"type": "image", "source": {"media_type": "audio/wav", "path": "a.wav"}}]))),
    case("audio part with image source", N, N, Some("content-part"), |d| parts(d, json!([{"type": "audio", "source": {"media_type": "image/png", "path": "a.png"}}]))),
    case("image source with duration_sec", N, N, Some("unknown-field"), |d| parts(d, json!([{"type": "image", "source": {"media_type": "image/png", "path": "a.png", "duration_sec": 1}}]))),
    case("image media image/jpg", N, N, Some("media-type"), |d| parts(d, json!([image("image/jpg", "a.jpg")]))),
    case("image media IMAGE/PNG", N, N, Some("media-type"), |d| parts(d, json!([image("IMAGE/PNG", "a.png")]))),
    case("image data: URL path", Y, Y, None, |d| parts(d, json!([image("image/png", "data:image/png;base64,iVBORw0KGgo=")]))),
    case("text part missing text", N, N, Some("content-part"), |d| parts(d, json!([{"type": "text"}]))),
    case("text part text empty", Y, Y, None, |d| parts(d, json!([{"type": "text", "text": ""}]))),
    case("text part with source", N, N, Some("content-part"), |d| parts(d, json!([{"type": "text", "text": "a", "source": {"media_type": "image/png", "path": "a.png"}}]))),
    case("image part with text", N, N, Some("content-part"), |d| parts(d, json!([{"type": "image", "text": "a", "source": {"media_type": "image/png", "path": "a.png"}}]))),
    case("image part missing source", N, N, Some("content-part"), |d| parts(d, json!([{"type": "image"}]))),
    case("part type video", N, N, Some("enum"), |d| parts(d, json!([{"type": "video", "source": {"media_type": "video/mp4", "path": "a.mp4"}}]))),
    case("part type image_url (OpenAI)", N, N, Some("enum"), |d| parts(d, json!([{"type": "image_url", "image_url": {"url": "https://x/a.png"}}]))),
    case("part unknown field", N, N, Some("unknown-field"), |d| parts(d, json!([{"type": "text", "text": "a", "cache_control": {}}]))),
    case("observation content parts", Y, Y, None, |d| set(d, "/steps/1/observation/results/0/content", json!([{"type": "text", "text": "a.txt"}, image("image/png", "shot.png")]))),
    case("local image path missing on disk", Y, Y, None, |d| parts(d, json!([image("image/png", "/nonexistent/a.png")]))),
    case("metrics negative tokens", Y, Y, None, |d| set(d, "/steps/1/metrics/completion_tokens", json!(-5))),
    case("metrics cached > prompt", Y, Y, None, |d| set(d, "/steps/1/metrics/cached_tokens", json!(50))),
    case("metrics tokens float 1.5", N, N, Some("type"), |d| set(d, "/steps/1/metrics/prompt_tokens", json!(1.5))),
    case("metrics tokens string '7'", Y, N, Some("type"), |d| set(d, "/steps/1/metrics/prompt_tokens", json!("7"))),
    case("metrics cost_usd int", Y, Y, None, |d| set(d, "/steps/1/metrics/cost_usd", json!(1))),
    case("metrics cost_usd string", Y, N, Some("type"), |d| set(d, "/steps/1/metrics/cost_usd", json!("0.5"))),
    case("metrics logprobs len mismatch", Y, Y, None, |d| set(d, "/steps/1/metrics/logprobs", json!([-0.1, -0.2]))),
    case("metrics prompt_token_ids floats 1.0", Y, N, Some("type"), |d| set(d, "/steps/1/metrics/prompt_token_ids", json!([1.0, 2.0]))),
    case("metrics unknown field reasoning_tokens", N, N, Some("unknown-field"), |d| set(d, "/steps/1/metrics/reasoning_tokens", json!(3))),
    case("metrics extra", Y, Y, None, |d| set(d, "/steps/1/metrics/extra", json!({"reasoning_tokens": 3}))),
    case("final_metrics matches", Y, Y, None, |d| set(d, "/final_metrics", json!({"total_prompt_tokens": 10, "total_completion_tokens": 5, "total_cached_tokens": 2, "total_cost_usd": 0.001, "total_steps": 2}))),
    case("final_metrics sum mismatch", Y, Y, None, |d| set(d, "/final_metrics", json!({"total_prompt_tokens": 11}))),
    case("final_metrics sum mismatch with notes", Y, Y, None, |d| { set(d, "/final_metrics", json!({"total_prompt_tokens": 11})); set(d, "/notes", json!("includes a retry")) }),
    case("final_metrics total_steps != len(steps)", Y, Y, None, |d| set(d, "/final_metrics", json!({"total_steps": 5}))),
    case("final_metrics total_steps -1", N, N, Some("range"), |d| set(d, "/final_metrics", json!({"total_steps": -1}))),
    case("final_metrics total_cost mismatch", Y, Y, None, |d| set(d, "/final_metrics", json!({"total_cost_usd": 1.0}))),
    case("final_metrics unknown field", N, N, Some("unknown-field"), |d| set(d, "/final_metrics", json!({"total_tokens": 15}))),
    case("replace boundary, prior steps not copied", Y, Y, None, |d| context_boundary(d, false)),
    case("replace boundary, prior steps copied", Y, Y, None, |d| context_boundary(d, true)),
    case("is_copied_context string 'true'", Y, N, Some("type"), |d| set(d, "/steps/0/is_copied_context", json!("true"))),
    case("is_copied_context int 1", Y, N, Some("type"), |d| set(d, "/steps/0/is_copied_context", json!(1))),
    case("is_copied_context 'yes'", Y, N, Some("type"), |d| set(d, "/steps/0/is_copied_context", json!("yes"))),
    case("subagent embedded ok + ref", Y, Y, None, |d| { set(d, "/subagent_trajectories", json!([subagent("sub-1")])); refs(d, json!([{"trajectory_id": "sub-1"}])) }),
    case("subagent missing trajectory_id", N, N, Some("subagent-id"), |d| { let mut s = subagent("x"); remove(&mut s, "/trajectory_id"); set(d, "/subagent_trajectories", json!([s])) }),
    case("subagent empty-string trajectory_id", Y, Y, None, |d| set(d, "/subagent_trajectories", json!([subagent("")]))),
    case("subagent duplicate trajectory_id", N, N, Some("subagent-id"), |d| set(d, "/subagent_trajectories", json!([subagent("a"), subagent("a")]))),
    case("subagent different schema_version v1.2", Y, Y, None, |d| { let mut s = subagent("a"); label(&mut s, "ATIF-v1.2"); set(d, "/subagent_trajectories", json!([s])) }),
    case("subagent with empty steps", N, N, Some("empty-steps"), |d| { let mut s = subagent("a"); set(&mut s, "/steps", json!([])); set(d, "/subagent_trajectories", json!([s])) }),
    case("subagent step_id gap", N, N, Some("step-sequence"), |d| { let mut s = subagent("a"); set(&mut s, "/steps/0/step_id", json!(2)); set(d, "/subagent_trajectories", json!([s])) }),
    case("nested subagent dup ids (grandchildren)", N, N, Some("subagent-id"), |d| { let mut s = subagent("a"); set(&mut s, "/subagent_trajectories", json!([subagent("g"), subagent("g")])); set(d, "/subagent_trajectories", json!([s])) }),
    case("ref to unknown embedded id", Y, N, Some("subagent-resolve"), |d| { set(d, "/subagent_trajectories", json!([subagent("sub-1")])); refs(d, json!([{"trajectory_id": "sub-2"}])) }),
    case("ref with only session_id (v1.6 style)", N, N, Some("subagent-ref"), |d| refs(d, json!([{"session_id": "s-2"}]))),
    case("ref with only session_id (v1.6 label)", N, N, Some("subagent-ref"), |d| { label(d, "ATIF-v1.6"); remove(d, "/steps/1/observation/results/0/source_call_id"); refs(d, json!([{"session_id": "s-2"}])) }),
    case("ref trajectory_path only", Y, Y, None, |d| refs(d, json!([{"trajectory_path": "sub.json"}]))),
    case("ref as single object (not array)", N, N, Some("type"), |d| refs(d, json!({"trajectory_path": "sub.json"}))),
    case("ref trajectory_id + null path (RFC §VII example)", Y, N, Some("subagent-resolve"), |d| refs(d, json!([{"trajectory_id": "compact-001", "trajectory_path": null}]))),
    case("subagent_trajectories under v1.2 label", Y, Y, None, |d| { label(d, "ATIF-v1.2"); set(d, "/subagent_trajectories", json!([subagent("a")])) }),
    case("trajectory_id on root (v1.2 label)", Y, Y, None, |d| { label(d, "ATIF-v1.2"); set(d, "/trajectory_id", json!("root")) }),
    case("llm_call_count under v1.2 label", Y, Y, None, |d| { label(d, "ATIF-v1.2"); set(d, "/steps/1/llm_call_count", json!(1)) }),
    case("extra on root", Y, Y, None, |d| set(d, "/extra", json!({"run": 1}))),
    case("extra on root not object", N, N, Some("type"), |d| set(d, "/extra", json!([1]))),
    case("continued_trajectory_ref", Y, Y, None, |d| set(d, "/continued_trajectory_ref", json!("next.json"))),
    case("notes int", N, N, Some("type"), |d| set(d, "/notes", json!(1))),
];

#[test]
fn appendix_a_has_all_157_measured_cases() {
    assert_eq!(APPENDIX_A.len(), 157);
    let names: std::collections::HashSet<&str> = APPENDIX_A.iter().map(|case| case.name).collect();
    assert_eq!(names.len(), 157, "case names are unique");
}

#[test]
fn the_harbor_profile_agrees_with_harbor_on_every_appendix_a_case() {
    let mut disagreements = Vec::new();
    for case in APPENDIX_A {
        let report = validate_bytes(doc(case.edit).as_bytes(), &harbor());
        if report.is_valid() != case.harbor {
            disagreements.push(format!(
                "{}: expected {}, got\n{}",
                case.name,
                verdict(case.harbor),
                render(&report)
            ));
        } else if !case.harbor {
            let rule = case.rule.unwrap();
            if !report.errors().any(|finding| finding.rule.id() == rule) {
                disagreements.push(format!(
                    "{}: expected an error [{rule}], got\n{}",
                    case.name,
                    render(&report)
                ));
            }
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[test]
fn the_strict_profile_gives_the_documented_verdict_on_every_appendix_a_case() {
    let mut disagreements = Vec::new();
    for case in APPENDIX_A {
        let report = validate_bytes(doc(case.edit).as_bytes(), &strict());
        if report.is_valid() != case.strict {
            disagreements.push(format!(
                "{}: expected {}, got\n{}",
                case.name,
                verdict(case.strict),
                render(&report)
            ));
        } else if !case.strict {
            let rule = case.rule.unwrap();
            if !report.errors().any(|finding| finding.rule.id() == rule) {
                disagreements.push(format!(
                    "{}: expected an error [{rule}], got\n{}",
                    case.name,
                    render(&report)
                ));
            }
        }
        // Strict is never more lenient than Harbor.
        assert!(case.harbor || !case.strict, "{}", case.name);
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

fn verdict(valid: bool) -> &'static str {
    if valid { "valid" } else { "invalid" }
}

// ----- fixtures and corpus ---------------------------------------------------------------------

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/validate").join(name))
        .unwrap()
}

#[test]
fn our_fixture_using_every_feature_is_valid_in_both_profiles_without_findings() {
    for options in [strict(), harbor()] {
        let report = validate_bytes(&fixture("every-feature-v1.8.json"), &options);
        assert_eq!(report.findings, [], "{}", render(&report));
        assert_eq!(report.version, Some(SchemaVersion::V1_8));
    }
}

#[test]
fn our_python_habits_fixture_is_valid_only_under_harbor() {
    let bytes = fixture("python-habits.json");
    let report = validate_bytes(&bytes, &harbor());
    assert!(report.is_valid(), "{}", render(&report));
    assert!(report.warnings().count() >= 5, "{}", render(&report));
    let report = validate_bytes(&bytes, &strict());
    let rules: std::collections::BTreeSet<&str> =
        report.errors().map(|finding| finding.rule.id()).collect();
    assert_eq!(
        rules,
        ["duplicate-key", "non-finite-number", "schema-version", "type"].into(),
        "{}",
        render(&report)
    );
}

#[test]
fn the_typed_model_fixtures_are_valid_in_both_profiles() {
    for (path, document) in crate::valid_fixtures() {
        for options in [strict(), harbor()] {
            let report = validate(&document, &options);
            assert!(report.is_valid(), "{}:\n{}", path.display(), render(&report));
        }
    }
}

#[test]
fn every_valid_corpus_file_is_valid_in_both_profiles() {
    let Some(corpus) = crate::corpus_dir() else { return };
    let mut n_files = 0;
    for entry in std::fs::read_dir(corpus.join("valid")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        for options in [strict(), harbor()] {
            let report = validate_bytes(&bytes, &options);
            assert!(
                report.is_valid(),
                "{} ({}):\n{}",
                path.display(),
                options.profile(),
                render(&report)
            );
            assert!(report.version.is_some());
        }
        n_files += 1;
    }
    assert_eq!(n_files, 16);
}

#[test]
fn every_invalid_corpus_file_fails_naming_the_real_problem() {
    let Some(corpus) = crate::corpus_dir() else { return };
    let dir = corpus.join("invalid");
    let read = |suffix: &str| {
        let entry = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.to_string_lossy().ends_with(suffix))
            .unwrap();
        std::fs::read(entry).unwrap()
    };
    for options in [strict(), harbor()] {
        let report = validate_bytes(&read("sample-trajectories.json"), &options);
        assert_eq!(report.findings.len(), 1);
        assert!(message(&report, Rule::RootObject).contains("array of 5 elements"));

        for session in ["x8251x.atif.json", "ew8gut.atif.json"] {
            let report = validate_bytes(&read(session), &options);
            assert!(!report.is_valid());
            for error in report.errors() {
                assert_eq!(error.rule, Rule::Type, "{error}");
                assert!(
                    error.pointer.contains("/observation/results/")
                        && error.pointer.ends_with("/content"),
                    "{error}"
                );
                assert!(error.message.contains("found an object"), "{error}");
            }
        }

        let report =
            validate_bytes(&read("regex-log_20251211-161750-ba4ddb16_trajectory.json"), &options);
        let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
        let has = |needle: &str| errors.iter().any(|error| error.contains(needle));
        assert!(
            has("error[schema-version] /schema_version: unknown schema_version \"1.4\""),
            "{errors:#?}"
        );
        assert!(has("did you mean \"ATIF-v1.4\""), "{errors:#?}");
        assert!(
            has(
                "error[unknown-field] /agent/model: unknown field `model` (did you mean `model_name`?)"
            ),
            "{errors:#?}"
        );
        assert!(has("OpenAI-style tool call"), "{errors:#?}");
        assert!(has("an observation is {\"results\""), "{errors:#?}");
    }
}

// ----- properties on random edits of the base document ----------------------------------------

/// Values that random edits put into the base document: Python habits, wrong types, near misses.
fn pool() -> Vec<Value> {
    vec![
        Value::Null,
        json!("7"),
        json!(" 2"),
        json!("2.0"),
        json!("yes"),
        json!(""),
        json!(7),
        json!(0),
        json!(-1),
        json!(2.0),
        json!(2.5),
        json!(true),
        json!([]),
        json!([1.0]),
        json!({}),
        json!("agent"),
        json!("system"),
        json!("c1"),
        json!("2025-10-16T24:00"),
        json!([{"type": "text", "text": "a"}]),
        json!({"media_type": "image/png", "path": "p"}),
        json!([{"trajectory_id": "sub"}]),
        json!({"results": []}),
        subagent("sub"),
    ]
}

/// Every object and array of `value`, as pointers.
fn containers(value: &Value, pointer: String, out: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, child) in object {
                containers(
                    child,
                    format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
            out.push(pointer);
        }
        Value::Array(elements) => {
            for (idx, child) in elements.iter().enumerate() {
                containers(child, format!("{pointer}/{idx}"), out);
            }
            out.push(pointer);
        }
        _ => {}
    }
}

/// Applies one edit: pick a container, then replace, remove or add a member.
fn edit(document: &mut Value, (container, member, op, value): (usize, usize, u8, usize)) {
    let mut pointers = Vec::new();
    containers(document, String::new(), &mut pointers);
    let pointer = &pointers[container % pointers.len()];
    let value = pool()[value % pool().len()].clone();
    const KEYS: [&str; 8] = [
        "step_id",
        "source",
        "message",
        "source_call_id",
        "trajectory_id",
        "llm_call_count",
        "bogus",
        "extra",
    ];
    match document.pointer_mut(pointer).unwrap() {
        Value::Object(object) => {
            let keys: Vec<String> = object.keys().cloned().collect();
            match (op % 3, keys.is_empty()) {
                (0, false) => {
                    object.insert(keys[member % keys.len()].clone(), value);
                }
                (1, false) => {
                    object.remove(&keys[member % keys.len()]);
                }
                _ => {
                    object.insert(KEYS[member % KEYS.len()].to_owned(), value);
                }
            }
        }
        Value::Array(elements) => match (op % 3, elements.is_empty()) {
            (0, false) => {
                let len = elements.len();
                elements[member % len] = value;
            }
            (1, false) => {
                let len = elements.len();
                elements.remove(member % len);
            }
            _ => elements.push(value),
        },
        _ => {}
    }
}

#[test]
fn random_edits_never_panic_and_keep_the_profiles_consistent() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed, TestRunner};

    let config = Config {
        cases: 300,
        rng_seed: RngSeed::Fixed(0x0A71_F0A7),
        failure_persistence: None,
        ..Config::default()
    };
    let strategy = prop::collection::vec((0..64usize, 0..16usize, 0..3u8, 0..32usize), 1..5);
    TestRunner::new(config)
        .run(&strategy, |edits| {
            let mut document = base();
            set(&mut document, "/subagent_trajectories", json!([subagent("sub")]));
            for one in edits {
                edit(&mut document, one);
            }
            let bytes = text(&document);
            let strict_report = validate_bytes(bytes.as_bytes(), &strict());
            let harbor_report = validate_bytes(bytes.as_bytes(), &harbor());
            // Strict is never more lenient than Harbor.
            prop_assert!(!strict_report.is_valid() || harbor_report.is_valid(), "{bytes}");
            // Parsing first changes nothing.
            prop_assert_eq!(&validate(&document, &strict()), &strict_report);
            // Every pointer names a value of the document.
            for finding in strict_report.findings.iter().chain(&harbor_report.findings) {
                prop_assert!(document.pointer(&finding.pointer).is_some(), "{finding}\n{bytes}");
            }
            Ok(())
        })
        .unwrap();
}
