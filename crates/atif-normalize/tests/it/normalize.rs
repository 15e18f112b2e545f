//! The default normalisation contract, the options, and bad input.

use atif_normalize::{
    DiffOptions, Error, Masker, NormalizeOptions, SelectorAction, diff, normalize, normalize_owned,
    shape, to_canonical_string,
};
use serde_json::{Value, json};

use crate::{call_step, corpus_dir, corpus_files, normalized, trajectory};

/// Normalises `input` with `options` and compares with `expected`, then checks that a second
/// pass changes nothing.
fn check_with(options: &NormalizeOptions, input: Value, expected: Value) {
    let once = normalize(&input, options).unwrap();
    assert_eq!(once, expected, "\n{}", to_canonical_string(&once));
    assert_eq!(normalize(&once, options).unwrap(), once, "normalising twice differs from once");
}

fn check(input: Value, expected: Value) {
    check_with(&NormalizeOptions::default(), input, expected);
}

/// One user step with the given extra members.
fn user_step(members: Value) -> Value {
    let mut step = json!({"step_id": 1, "source": "user", "message": "hi"});
    step.as_object_mut().unwrap().extend(members.as_object().unwrap().clone());
    step
}

fn expected_trajectory(steps: Value) -> Value {
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "demo", "version": "1.0", "model_name": "model-a"},
        "steps": steps,
    })
}

#[test]
fn volatile_only_differences_produce_no_delta() {
    let run = |session: &str, stamp: &str, call: &str, addr: &str, cost: f64, order: [&str; 2]| {
        let mut doc = trajectory(json!([
            {"step_id": 1, "source": "user", "message": format!("obj at {addr}"), "timestamp": stamp},
            {
                "step_id": 2, "source": "agent", "message": "", "timestamp": stamp,
                "tool_calls": [{"tool_call_id": call, "function_name": "grep", "arguments": {"p": "x"}}],
                "observation": {"results": [
                    {"source_call_id": call, "content": "ok"},
                    {"subagent_trajectory_ref": [{"trajectory_id": order[0]}, {"trajectory_id": order[1]}]},
                ]},
                "metrics": {"prompt_tokens": 5, "completion_tokens": 2, "cost_usd": cost},
                "extra": {"generation_id": format!("gen-{session}")},
            }
        ]));
        doc["session_id"] = json!(session);
        doc["trajectory_id"] = json!(format!("traj-{session}"));
        doc["final_metrics"] = json!({"total_cost_usd": cost, "total_prompt_tokens": 5});
        let sub = |id: &str, name: &str| {
            json!({
                "schema_version": "ATIF-v1.8", "trajectory_id": id, "session_id": session,
                "agent": {"name": name, "version": "1"},
                "steps": [{"step_id": 1, "source": "user", "message": name, "timestamp": stamp}],
            })
        };
        // The subagents finished in a different order in each run.
        doc["subagent_trajectories"] = if order[0] < order[1] {
            json!([sub(order[0], "alpha"), sub(order[1], "beta")])
        } else {
            json!([sub(order[1], "beta"), sub(order[0], "alpha")])
        };
        doc
    };
    let golden =
        run("s-1", "2026-01-01T10:00:00Z", "call_3hfgfv2c", "0x7f3c2a1b4c50", 0.12, ["a-1", "b-1"]);
    let actual =
        run("s-2", "2026-03-04T11:22:33Z", "toolu_01XYZ", "0x55d0c0ffee00", 0.34, ["z-9", "y-9"]);
    assert_ne!(golden, actual);

    let (golden, actual) = (normalized(&golden), normalized(&actual));
    assert_eq!(to_canonical_string(&golden), to_canonical_string(&actual));
    assert_eq!(diff(&shape(&golden), &shape(&actual), &DiffOptions::default()), vec![]);
}

#[test]
fn each_volatile_key_is_scrubbed_at_depth_and_the_emptied_extra_disappears() {
    for key in ["session_id", "timestamp", "generation_id", "cost_usd", "total_cost_usd"] {
        let input = trajectory(json!([user_step(json!({
            "extra": {key: "random"},
            "observation": {"results": [{"content": "c", "extra": {"deeper": {key: 1}}}]},
        }))]));
        let expected = expected_trajectory(json!([user_step(json!({
            "observation": {"results": [{"content": "c", "extra": {"deeper": {}}}]},
        }))]));
        check(input, expected);
    }
}

#[test]
fn only_the_roots_own_trajectory_id_is_removed() {
    let mut input = trajectory(json!([user_step(json!({"extra": {"trajectory_id": "kept"}}))]));
    input["extra"] = json!({});
    let expected =
        expected_trajectory(json!([user_step(json!({"extra": {"trajectory_id": "kept"}}))]));
    check(input, expected);
}

#[test]
fn null_members_are_removed_except_inside_tool_arguments() {
    let input = trajectory(json!([{
        "step_id": 1, "source": "agent", "message": "m", "model_name": null, "reasoning_content": null,
        "tool_calls": [{"tool_call_id": "a", "function_name": "f", "arguments": {"x": null, "y": [null]}, "extra": null}],
        "observation": {"results": [{"source_call_id": "a", "content": null, "extra": {"k": null}}]},
    }]));
    let expected = expected_trajectory(json!([{
        "step_id": 1, "source": "agent", "message": "m",
        "tool_calls": [{"tool_call_id": "call_1", "function_name": "f", "arguments": {"x": null, "y": [null]}}],
        "observation": {"results": [{"source_call_id": "call_1"}]},
    }]));
    check(input, expected);
}

#[test]
fn volatile_keys_inside_tool_arguments_are_behaviour_and_kept() {
    let arguments =
        json!({"timestamp": "2026-01-01", "session_id": "s", "extra": {}, "cost_usd": 3});
    let input = trajectory(json!([{
        "step_id": 1, "source": "agent", "message": "m",
        "tool_calls": [{"tool_call_id": "a", "function_name": "schedule", "arguments": arguments.clone()}],
    }]));
    let expected = expected_trajectory(json!([{
        "step_id": 1, "source": "agent", "message": "m",
        "tool_calls": [{"tool_call_id": "call_1", "function_name": "schedule", "arguments": arguments}],
    }]));
    check(input, expected);
}

#[test]
fn addresses_are_masked_in_every_string_value_arguments_included_but_not_in_keys() {
    let input = trajectory(json!([{
        "step_id": 1, "source": "agent",
        "message": "<function f at 0x7f3c2a1b4c50> and 0x12345 (too short) and 0xDEADBEEF",
        "tool_calls": [{"tool_call_id": "a", "function_name": "f", "arguments": {"0x1234567": ["at 0xabcdef0"]}}],
    }]));
    let expected = expected_trajectory(json!([{
        "step_id": 1, "source": "agent",
        "message": "<function f at 0xADDR> and 0x12345 (too short) and 0xADDR",
        "tool_calls": [{"tool_call_id": "call_1", "function_name": "f", "arguments": {"0x1234567": ["at 0xADDR"]}}],
    }]));
    check(input, expected);
}

#[test]
fn call_ids_are_renumbered_in_first_encounter_order_with_the_join_intact() {
    let input = trajectory(json!([
        {
            "step_id": 1, "source": "agent", "message": "",
            "tool_calls": [
                {"tool_call_id": "toolu_B", "function_name": "f", "arguments": {}},
                {"tool_call_id": "toolu_A", "function_name": "g", "arguments": {}},
            ],
            "observation": {"results": [
                {"source_call_id": "toolu_A", "content": "from g"},
                {"source_call_id": "toolu_B", "content": "from f"},
                {"source_call_id": "dangling", "content": "?"},
            ]},
        },
        {
            "step_id": 2, "source": "agent", "message": "",
            "tool_calls": [{"tool_call_id": "toolu_A", "function_name": "h", "arguments": {}}],
        },
    ]));
    let expected = expected_trajectory(json!([
        {
            "step_id": 1, "source": "agent", "message": "",
            "tool_calls": [
                {"tool_call_id": "call_1", "function_name": "f", "arguments": {}},
                {"tool_call_id": "call_2", "function_name": "g", "arguments": {}},
            ],
            "observation": {"results": [
                {"source_call_id": "call_2", "content": "from g"},
                {"source_call_id": "call_1", "content": "from f"},
                {"source_call_id": "call_3", "content": "?"},
            ]},
        },
        {
            "step_id": 2, "source": "agent", "message": "",
            "tool_calls": [{"tool_call_id": "call_2", "function_name": "h", "arguments": {}}],
        },
    ]));
    check(input, expected);
}

#[test]
fn provider_id_churn_alone_is_no_regression() {
    let golden = trajectory(json!([
        call_step(1, "read_file", "call_3hfgfv2c"),
        call_step(2, "grep", "call_k2")
    ]));
    let actual = trajectory(json!([
        call_step(1, "read_file", "toolu_01Ab"),
        call_step(2, "grep", "toolu_01Cd")
    ]));
    let (golden, actual) = (shape(&normalized(&golden)), shape(&normalized(&actual)));
    assert_eq!(diff(&golden, &actual, &DiffOptions::default()), vec![]);
}

#[test]
fn ids_differing_only_in_an_address_stay_distinct_calls() {
    let input = trajectory(json!([{
        "step_id": 1, "source": "agent", "message": "",
        "tool_calls": [
            {"tool_call_id": "c_0x1111111", "function_name": "f", "arguments": {}},
            {"tool_call_id": "c_0x2222222", "function_name": "g", "arguments": {}},
        ],
        "observation": {"results": [{"source_call_id": "c_0x2222222", "content": "g"}]},
    }]));
    let out = normalized(&input);
    assert_eq!(
        out.pointer("/steps/0/observation/results/0/source_call_id"),
        Some(&json!("call_2"))
    );
}

fn with_subagents(refs: &[&str], subagents: Value) -> Value {
    let mut doc = trajectory(json!([{
        "step_id": 1, "source": "agent", "message": "",
        "observation": {"results": refs.iter().map(|id| json!({"subagent_trajectory_ref": [{"trajectory_id": id}]})).collect::<Vec<_>>()},
    }]));
    doc["subagent_trajectories"] = subagents;
    doc
}

fn subagent(id: &str, name: &str, call_id: &str) -> Value {
    json!({
        "schema_version": "ATIF-v1.8", "trajectory_id": id, "session_id": "s",
        "agent": {"name": name, "version": "1"},
        "steps": [call_step(1, "search", call_id)],
    })
}

#[test]
fn subagent_order_does_not_leak_and_refs_still_resolve_after_renumbering() {
    let first = with_subagents(
        &["uuid-web", "uuid-code"],
        json!([subagent("uuid-web", "web", "x1"), subagent("uuid-code", "code", "x2")]),
    );
    let second = with_subagents(
        &["uuid-web-2", "uuid-code-2"],
        json!([subagent("uuid-code-2", "code", "y7"), subagent("uuid-web-2", "web", "y8")]),
    );
    let (first, second) = (normalized(&first), normalized(&second));
    assert_eq!(first, second);

    // Sorted by content: "code" sorts before "web", each numbered its own calls from call_1.
    let subs = first["subagent_trajectories"].as_array().unwrap();
    assert_eq!(subs[0]["agent"]["name"], "code");
    assert_eq!(subs[0]["trajectory_id"], "subagent_1");
    assert_eq!(subs[1]["trajectory_id"], "subagent_2");
    assert_eq!(subs[1]["steps"][0]["tool_calls"][0]["tool_call_id"], "call_1");
    assert!(subs[1].get("session_id").is_none());

    // Every ref resolves, and the web ref still points at the web subagent.
    let results = first.pointer("/steps/0/observation/results").unwrap().as_array().unwrap();
    let web_ref = &results[0]["subagent_trajectory_ref"][0]["trajectory_id"];
    let web = subs.iter().find(|s| &s["trajectory_id"] == web_ref).unwrap();
    assert_eq!(web["agent"]["name"], "web");
}

#[test]
fn keeping_subagent_order_still_renumbers_their_ids() {
    let input = with_subagents(
        &["w", "c"],
        json!([subagent("w", "web", "x1"), subagent("c", "code", "x2")]),
    );
    let mut options = NormalizeOptions::default();
    options.set_sort_subagents(false);
    let out = normalize(&input, &options).unwrap();
    let names: Vec<&Value> = out["subagent_trajectories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["agent"]["name"])
        .collect();
    assert_eq!(names, [&json!("web"), &json!("code")]);
    assert_eq!(
        out.pointer("/steps/0/observation/results/0/subagent_trajectory_ref/0/trajectory_id"),
        Some(&json!("subagent_1"))
    );
    assert_eq!(normalize(&out, &options).unwrap(), out);
}

#[test]
fn schema_version_and_model_names_are_never_touched() {
    let mut input = trajectory(
        json!([{"step_id": 1, "source": "agent", "message": "", "model_name": "gpt-0x1234567"}]),
    );
    input["schema_version"] = json!("ATIF-v1.5");
    input["agent"]["model_name"] = json!("model-a");
    let out = normalized(&input);
    assert_eq!(out["schema_version"], "ATIF-v1.5");
    assert_eq!(out["agent"]["model_name"], "model-a");
    // Not even a masker touches them.
    assert_eq!(out["steps"][0]["model_name"], "gpt-0x1234567");
}

#[test]
fn extra_volatile_keys_redactions_and_maskers_apply_in_order() {
    let mut options = NormalizeOptions::default();
    options
        .add_volatile_key("request_id")
        .add_selector(".steps[].extra.dynamic_context", SelectorAction::Remove)
        .unwrap()
        .add_selector(".**.latency_ms", SelectorAction::Replace(json!("[latency]")))
        .unwrap();
    options.add_masker(Masker::new(r"/tmp/tmp[a-z0-9]+", "/tmp/TMP").unwrap());
    options.add_masker(Masker::new(r"TMP", "T").unwrap());
    let input = trajectory(json!([user_step(json!({
        "message": "wrote /tmp/tmpab12x9",
        "extra": {"dynamic_context": "today is Monday", "request_id": "r-1", "latency_ms": 12},
    }))]));
    let expected = expected_trajectory(json!([user_step(json!({
        "message": "wrote /tmp/T",
        "extra": {"latency_ms": "[latency]"},
    }))]));
    check_with(&options, input, expected);
}

#[test]
fn redactions_apply_to_each_subagent_as_its_own_root() {
    let mut options = NormalizeOptions::default();
    options.add_selector(".agent.version", SelectorAction::Replace(json!("any"))).unwrap();
    let out =
        normalize(&with_subagents(&[], json!([subagent("a", "web", "c")])), &options).unwrap();
    assert_eq!(out["agent"]["version"], "any");
    assert_eq!(out["subagent_trajectories"][0]["agent"]["version"], "any");
}

#[test]
fn invalid_selectors_and_patterns_are_errors_that_name_them() {
    let mut options = NormalizeOptions::default();
    let err = options.add_selector("steps[]", SelectorAction::Remove).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid selector `steps[]`: expected `.` or `[` starting a selector at column 1, found `s`"
    );
    assert!(matches!(err, Error::InvalidSelector { .. }));
    let err = Masker::new("(unclosed", "x").unwrap_err();
    assert_eq!(err.to_string(), "invalid masking pattern `(unclosed`");
}

#[test]
fn a_masker_that_matches_the_empty_string_is_refused() {
    for pattern in ["", "a*", "(?m)^"] {
        let err = Masker::new(pattern, "x").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "masking pattern `{pattern}` matches the empty string; expected a pattern that matches at least one character"
            )
        );
    }
    assert!(Masker::new("a+", "x").is_ok());
}

#[test]
fn a_root_that_is_not_an_object_is_not_a_trajectory() {
    for (input, found) in
        [(json!([1, 2]), "an array"), (json!("text"), "a string"), (json!(null), "null")]
    {
        let err = normalize(&input, &NormalizeOptions::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "not an ATIF trajectory at the root: expected a trajectory object, found {found}"
            )
        );
    }
}

#[test]
fn a_subagent_that_is_not_an_object_is_named_by_its_pointer() {
    let input = with_subagents(&[], json!([subagent("a", "web", "c"), 7]));
    let err = normalize(&input, &NormalizeOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "not an ATIF trajectory at `/subagent_trajectories/1`: expected a trajectory object, found a number"
    );
}

#[test]
fn normalize_owned_gives_the_same_document_as_normalize() {
    let input = trajectory(json!([call_step(1, "f", "abc"), call_step(2, "g", "def")]));
    let owned = normalize_owned(input.clone(), &NormalizeOptions::default()).unwrap();
    assert_eq!(owned, normalized(&input));
}

#[test]
fn every_valid_corpus_file_normalises_idempotently() {
    let Some(atif) = corpus_dir() else { return };
    let files = corpus_files(&atif, "valid");
    assert!(!files.is_empty());
    for path in files {
        let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let once = normalize(&doc, &NormalizeOptions::default())
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let twice = normalize(&once, &NormalizeOptions::default()).unwrap();
        assert_eq!(to_canonical_string(&once), to_canonical_string(&twice), "{}", path.display());
    }
}

#[test]
fn every_invalid_corpus_file_normalises_or_gets_a_clear_error() {
    let Some(atif) = corpus_dir() else { return };
    let mut n_errors = 0;
    for path in corpus_files(&atif, "invalid") {
        let Ok(doc) = serde_json::from_slice::<Value>(&std::fs::read(&path).unwrap()) else {
            continue;
        };
        match normalize(&doc, &NormalizeOptions::default()) {
            Ok(out) => assert_eq!(normalized(&out), out, "{}", path.display()),
            Err(err) => {
                n_errors += 1;
                assert!(err.to_string().starts_with("not an ATIF trajectory at "), "{err}");
            }
        }
    }
    eprintln!("{n_errors} invalid corpus files were rejected with an error");
}

#[test]
fn subagents_with_long_common_beginnings_are_still_sorted_by_their_whole_text() {
    let long = "same ".repeat(2000);
    let sub = |id: &str, last: &str| {
        json!({"trajectory_id": id, "agent": {"name": "w", "version": "1"}, "steps": [
            {"step_id": 1, "source": "user", "message": long},
            {"step_id": 2, "source": "user", "message": last},
        ]})
    };
    let input =
        with_subagents(&["c", "a", "b"], json!([sub("c", "zz"), sub("a", "bb"), sub("b", "aa")]));
    let out = normalized(&input);
    let lasts: Vec<&Value> = out["subagent_trajectories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["steps"][1]["message"])
        .collect();
    assert_eq!(lasts, [&json!("aa"), &json!("bb"), &json!("zz")]);
    let refs: Vec<&Value> = out
        .pointer("/steps/0/observation/results")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["subagent_trajectory_ref"][0]["trajectory_id"])
        .collect();
    assert_eq!(refs, [&json!("subagent_3"), &json!("subagent_2"), &json!("subagent_1")]);
}
