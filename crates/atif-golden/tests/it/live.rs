//! Live checks in tests: runs drawn from the fake provider's seeded sampling model
//! (`atif_fake_provider::Sampling`, the draws its server makes), added one by one to a
//! `LiveEnvelope`, which writes the envelope golden or checks them against it.

use atif_envelope::{Conclusion, Envelope};
use atif_fake_provider::Sampling;
use atif_golden::{Error, LiveEnvelope, LiveOutcome, Mode, Settings};
use serde_json::{Value, json};

/// The sampling agent of docs/live.md: `read` then `grep`, `write` between them with
/// probability 0.1, the two swapped with probability 0.3, tokens within ±10%.
const NOISY: Sampling = Sampling { seed: 1, extra: 0.1, swap: 0.3, fail: 0.0, token_band: 0.1 };

/// Conversation `conversation` of a provider sampling as `sampling`, as a trajectory: one agent
/// step per call, then the answer; tokens on each step.
fn sample(sampling: Sampling, conversation: u64) -> Value {
    let plan = sampling.plan(conversation);
    let calls = sampling.calls(&plan, &["read", "grep", "write"]);
    let mut steps: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(idx, name)| {
            let id = format!("call_{conversation}_{idx}");
            json!({
                "step_id": idx + 1, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": id, "function_name": name, "arguments": {}}],
                "observation": {"results": [{"source_call_id": id, "content": "ok"}]},
                "metrics": {"prompt_tokens": (100.0 * plan.token_factor).round() as u64, "completion_tokens": 10},
            })
        })
        .collect();
    steps.push(json!({"step_id": steps.len() + 1, "source": "agent", "message": "found it"}));
    json!({
        "schema_version": "ATIF-v1.8",
        "session_id": format!("s-{conversation}"),
        "agent": {"name": "triage", "version": "1", "model_name": "m-1"},
        "steps": steps,
    })
}

fn settings(mode: Mode) -> Settings {
    let mut settings = Settings::new();
    settings.set_mode(Some(mode)).set_live(Some(true));
    settings
}

/// Fills `live` from conversations of `sampling` until it wants no more; returns how many.
fn fill(live: &mut LiveEnvelope, sampling: Sampling) -> u64 {
    let mut conversation = 0;
    while live.wants_more() {
        live.add(&sample(sampling, conversation), Some(true)).unwrap();
        conversation += 1;
    }
    conversation
}

#[test]
fn update_mode_writes_the_envelope_and_runs_of_the_same_agent_pass_against_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("triage.envelope.json");
    let mut live = LiveEnvelope::new(&path, 40, &settings(Mode::Update)).unwrap();
    assert_eq!(fill(&mut live, NOISY), 40);
    let written = live.finish().unwrap();
    assert!(matches!(written, LiveOutcome::Written { runs: 40, .. }), "{written:?}");
    let envelope = Envelope::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!((envelope.runs(), envelope.passed_runs()), (40, Some(40)));

    let mut live = LiveEnvelope::new(&path, 20, &settings(Mode::Check)).unwrap();
    fill(&mut live, Sampling { seed: 2, ..NOISY });
    match live.finish().unwrap() {
        LiveOutcome::Checked { verdict, .. } => {
            assert_eq!((verdict.verdict, verdict.runs), (Conclusion::NoClearChange, 20))
        }
        other => panic!("expected a check, got {other:?}"),
    }
}

#[test]
fn runs_that_call_a_tool_far_more_often_fail_naming_the_field_and_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("triage.envelope.json");
    let mut live = LiveEnvelope::new(&path, 40, &settings(Mode::Update)).unwrap();
    fill(&mut live, NOISY);
    live.finish().unwrap();
    let before = std::fs::read(&path).unwrap();

    for mode in [Mode::Check, Mode::Review] {
        let mut live = LiveEnvelope::new(&path, 20, &settings(mode)).unwrap();
        live.set_update_command("ATIF_GOLDEN=update cargo test triage");
        fill(&mut live, Sampling { seed: 3, extra: 0.8, ..NOISY });
        let error = live.finish().unwrap_err();
        assert!(error.is_test_failure());
        let message = error.to_string();
        assert!(message.starts_with("live runs moved from the envelope golden "), "{message}");
        assert!(message.contains("\n  tool_runs.write: `write` called in "), "{message}");
        assert!(
            message.ends_with("re-record the envelope with: ATIF_GOLDEN=update cargo test triage"),
            "{message}"
        );
        let Error::EnvelopeChanged { verdict, .. } = error else { panic!("{error:?}") };
        assert_eq!(verdict.verdict, Conclusion::Changed);
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "a failing check never writes");
}

#[test]
fn the_token_cap_stops_asking_for_runs_and_too_few_are_inconclusive() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("triage.envelope.json");
    let mut live = LiveEnvelope::new(&path, 40, &settings(Mode::Update)).unwrap();
    fill(&mut live, NOISY);
    live.finish().unwrap();

    let mut live = LiveEnvelope::new(&path, 20, &settings(Mode::Check)).unwrap();
    // Each run uses 200 to 360 tokens: a cap of 1,000 stops after three to five.
    live.set_max_cost_tokens(Some(1_000));
    let added = fill(&mut live, Sampling { seed: 4, ..NOISY });
    assert!((3..=5).contains(&added), "{added} runs");
    assert!(live.tokens() >= 1_000 && !live.wants_more());
    match live.finish().unwrap() {
        LiveOutcome::Checked { verdict, .. } => {
            assert_eq!((verdict.verdict, verdict.runs), (Conclusion::Inconclusive, added))
        }
        other => panic!("expected a check, got {other:?}"),
    }
}

#[test]
fn a_missing_envelope_fails_outside_update_mode_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none.envelope.json");
    let mut live = LiveEnvelope::new(&path, 2, &settings(Mode::Review)).unwrap();
    fill(&mut live, NOISY);
    let error = live.finish().unwrap_err();
    assert!(matches!(error, Error::MissingGolden { .. }), "{error:?}");
    assert!(error.to_string().ends_with("record it with: ATIF_GOLDEN=update cargo test"));
    assert!(!path.exists());
}

#[test]
fn bad_input_is_refused_naming_the_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.envelope.json");
    let mut live = LiveEnvelope::new(&path, 2, &settings(Mode::Update)).unwrap();
    let error = live.add(&json!([1, 2]), None).unwrap_err();
    let named = format!("cannot check or write the envelope golden {}", path.display());
    let chain = atif_schema::error_chain(&error);
    assert!(chain.starts_with(&format!("{named}: run `run 1` cannot be normalised: ")), "{chain}");
    assert!(chain.ends_with("expected a trajectory object, found an array"), "{chain}");
    let none = LiveEnvelope::new(&path, 2, &settings(Mode::Update)).unwrap().finish().unwrap_err();
    assert_eq!(
        atif_schema::error_chain(&none),
        format!("{named}: no runs given; expected at least one run")
    );
    std::fs::write(&path, "{\"envelope_version\": 1, \"runs\": \"two\"}").unwrap();
    let mut live = LiveEnvelope::new(&path, 1, &settings(Mode::Check)).unwrap();
    fill(&mut live, NOISY);
    let malformed = atif_schema::error_chain(&live.finish().unwrap_err());
    assert!(malformed.contains("/runs"), "{malformed}");
}

#[test]
fn settings_that_refuse_live_runs_refuse_them() {
    let mut settings = settings(Mode::Check);
    settings.set_live(Some(false));
    let error = LiveEnvelope::new("x.envelope.json", 1, &settings).unwrap_err();
    assert!(matches!(error, Error::LiveRefused { variable: "ATIF_LIVE" }), "{error:?}");
    assert!(!error.is_test_failure());
}

#[test]
fn the_macro_names_the_envelope_after_the_test_and_the_command_after_its_package() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = settings(Mode::Check);
    settings.set_golden_dir(dir.path());
    let live = atif_golden::live_envelope!(runs: 3, &settings).unwrap();
    assert_eq!(
        live.path(),
        dir.path().join("it__live__the_macro_names_the_envelope_after_the_test_and_the_command_after_its_package.envelope.json")
    );
    let error = live.finish().unwrap_err();
    let message = error.to_string();
    assert!(
        message.ends_with(
            "ATIF_GOLDEN=update cargo test -p atif-golden live::the_macro_names_the_envelope_after_the_test_and_the_command_after_its_package"
        ),
        "{message}"
    );
}

/// The order an envelope written by `live` groups its variants by.
fn written_order(mut live: LiveEnvelope) -> atif_envelope::ToolOrder {
    let path = live.path().to_owned();
    fill(&mut live, NOISY);
    live.finish().unwrap();
    Envelope::from_json(&std::fs::read_to_string(path).unwrap()).unwrap().order()
}

#[test]
fn the_settings_sequence_mode_is_the_default_order_and_set_order_wins() {
    use atif_envelope::ToolOrder;
    use atif_normalize::{MatchOptions, SequenceMatch};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("triage.envelope.json");
    let plain = LiveEnvelope::new(&path, 4, &settings(Mode::Update)).unwrap();
    assert_eq!(written_order(plain), ToolOrder::Exact);

    let mut settings = settings(Mode::Update);
    let mut modes = MatchOptions::default();
    modes.set_sequence(SequenceMatch::AnyOrder);
    settings.set_match_options(Some(modes));
    let moded = LiveEnvelope::new(&path, 4, &settings).unwrap();
    assert_eq!(written_order(moded), ToolOrder::AnyOrder);
    let mut ordered = LiveEnvelope::new(&path, 4, &settings).unwrap();
    ordered.set_order(ToolOrder::InOrder);
    assert_eq!(written_order(ordered), ToolOrder::InOrder);
}

#[test]
fn the_macro_applies_the_project_file_its_sequence_and_its_preset() {
    let crate_dir = tempfile::tempdir().unwrap();
    let toml = "[defaults]\npreset = \"claude-code\"\n\n[[golden]]\nglob = \"golden/*.envelope.json\"\nsequence = \"subset\"\n";
    std::fs::write(crate_dir.path().join("atif.toml"), toml).unwrap();
    let mut settings = settings(Mode::Update);
    settings.set_golden_dir(crate_dir.path().join("golden"));
    let body = |name| {
        let dir = crate_dir.path().to_str().unwrap();
        atif_golden::__private::live_envelope(dir, "p", "t::f", Some(name), 4, &settings).unwrap()
    };
    assert_eq!(written_order(body("a")), atif_envelope::ToolOrder::Subset);

    // The preset removes what it names from the run the envelope keeps as its variant's
    // representative, as `assert_golden!` would from a golden.
    let mut live = body("b");
    let mut run = sample(NOISY, 0);
    run["steps"][0]["extra"] = json!({"request_id": "req_1", "kept": "here"});
    live.add(&run, None).unwrap();
    let path = live.path().to_owned();
    live.finish().unwrap();
    let envelope = Envelope::from_json(&std::fs::read_to_string(path).unwrap()).unwrap();
    let extra = &envelope.variants()[0].representative()["steps"][0]["extra"];
    assert_eq!(extra, &json!({"kept": "here"}));
}
