//! Match modes: the tool sequence, the arguments and the counts under each looseness, and
//! fewer turns, a new tool failure or a crash never passing.

use atif_normalize::{ArgumentMatch, Band, MatchOptions, MatchOutcome, SequenceMatch, match_runs};
use serde_json::{Value, json};

/// A run with one agent step per entry, each calling the (name, arguments) given, and a final
/// answer step.
fn run(steps: &[&[(&str, Value)]]) -> Value {
    let mut all: Vec<Value> = steps
        .iter()
        .enumerate()
        .map(|(idx, calls)| {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(c, (name, arguments))| json!({"tool_call_id": format!("c{idx}_{c}"), "function_name": name, "arguments": arguments}))
                .collect();
            json!({"step_id": idx + 1, "source": "agent", "message": "", "tool_calls": calls})
        })
        .collect();
    all.push(json!({"step_id": all.len() + 1, "source": "agent", "message": "done"}));
    json!({"schema_version": "ATIF-v1.8", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": all})
}

fn call(name: &str) -> (&str, Value) {
    (name, json!({"path": "a.txt"}))
}

fn check(golden: &Value, actual: &Value, mode: SequenceMatch) -> MatchOutcome {
    match_runs(golden, actual, MatchOptions::default().set_sequence(mode))
}

const ALL: [SequenceMatch; 5] = [
    SequenceMatch::Exact,
    SequenceMatch::InOrder,
    SequenceMatch::AnyOrder,
    SequenceMatch::Subset,
    SequenceMatch::Superset,
];

#[test]
fn a_reordering_is_allowed_and_said_so_in_any_order_and_fails_in_exact() {
    let golden = run(&[&[call("grep")], &[call("read")]]);
    let swapped = run(&[&[call("read")], &[call("grep")]]);
    let any = check(&golden, &swapped, SequenceMatch::AnyOrder);
    assert!(any.passed(), "{any}");
    assert_eq!(any.allowed, ["calls reordered: grep, read -> read, grep (any-order)"]);
    let exact = check(&golden, &swapped, SequenceMatch::Exact);
    assert_eq!(exact.failures, ["calls reordered: grep, read -> read, grep (exact)"]);
    assert!(exact.to_string().starts_with("the run does not match its golden (1 difference(s)):"));
}

#[test]
fn calls_within_one_step_are_a_multiset_even_in_exact() {
    let golden = run(&[&[call("grep"), call("read")]]);
    let actual = run(&[&[call("read"), call("grep")]]);
    let outcome = check(&golden, &actual, SequenceMatch::Exact);
    assert!(outcome.passed() && outcome.allowed.is_empty(), "{outcome}");
}

#[test]
fn in_order_allows_calls_between_the_goldens_but_not_a_reversal() {
    let golden = run(&[&[call("read")], &[call("write")]]);
    let between = run(&[&[call("read")], &[call("grep")], &[call("write")]]);
    let outcome = check(&golden, &between, SequenceMatch::InOrder);
    assert!(outcome.passed(), "{outcome}");
    assert_eq!(
        outcome.allowed,
        [
            "step_count: 3 -> 4, more turns (in-order)",
            "llm_calls: 3 -> 4, more turns (in-order)",
            "extra call(s): grep (in-order)"
        ]
    );
    let reversed = run(&[&[call("write")], &[call("read")], &[call("grep")]]);
    let failed = check(&golden, &reversed, SequenceMatch::InOrder);
    assert!(failed.failures.contains(&"missing call(s): write (in-order)".to_owned()), "{failed}");
}

#[test]
fn subset_and_superset_bound_the_calls_from_each_side() {
    let golden = run(&[&[call("read")], &[call("grep")]]);
    let more = run(&[&[call("read")], &[call("grep")], &[call("write")]]);
    let superset = check(&golden, &more, SequenceMatch::Superset);
    assert!(superset.failures.iter().all(|f| !f.contains("call")), "{superset}");
    let subset = check(&golden, &more, SequenceMatch::Subset);
    assert!(subset.failures.contains(&"extra call(s): write (subset)".to_owned()), "{subset}");
    // A run that calls fewer tools in as many turns: allowed by subset, not by superset.
    let fewer = run(&[&[call("read")], &[call("read")]]);
    let subset = check(&golden, &fewer, SequenceMatch::Subset);
    assert!(subset.failures.iter().all(|f| !f.contains("missing")), "{subset}");
    let superset = check(&golden, &fewer, SequenceMatch::Superset);
    assert!(
        superset.failures.contains(&"missing call(s): grep (superset)".to_owned()),
        "{superset}"
    );
}

#[test]
fn a_run_with_a_missing_turn_fails_in_every_mode_saying_what_is_missing() {
    let golden = run(&[&[call("read")], &[call("grep")]]);
    let short = run(&[&[call("read")]]);
    for mode in ALL {
        let outcome = check(&golden, &short, mode);
        assert!(!outcome.passed(), "{mode:?}");
        assert!(
            outcome.failures[0].starts_with("fewer turns: 2 agent turn(s), the golden has 3; a run that does less than its golden never passes (missing 1)"),
            "{mode:?}: {outcome}"
        );
        // Even with every count band wide open.
        let wide = Band { absolute: 100, relative: 1.0 };
        let mut options = MatchOptions::default();
        options.set_sequence(mode).set_bands(wide, wide, wide).set_arguments(ArgumentMatch::Ignore);
        assert!(!match_runs(&golden, &short, &options).passed(), "{mode:?} with wide bands");
    }
}

#[test]
fn a_new_tool_failure_or_a_crash_fails_in_every_mode_and_fewer_are_allowed() {
    let golden = run(&[&[call("read")], &[call("grep")]]);
    let mut failed = golden.clone();
    failed["steps"][1]["observation"] = json!({"results": [{"source_call_id": "c1_0", "content": "", "extra": {"is_error": true}}]});
    let mut crashed = golden.clone();
    crashed["extra"] = json!({"crashed": true});
    let wide = Band { absolute: 100, relative: 1.0 };
    for mode in ALL {
        let mut options = MatchOptions::default();
        options.set_sequence(mode).set_bands(wide, wide, wide).set_arguments(ArgumentMatch::Ignore);
        let outcome = match_runs(&golden, &failed, &options);
        assert_eq!(
            outcome.failures,
            ["tool_errors: grep failed 1 time(s), 0 in the golden (no mode allows a new failure)"],
            "{mode:?}"
        );
        let outcome = match_runs(&golden, &crashed, &options);
        assert_eq!(
            outcome.failures,
            ["crashed: the run crashed and its golden did not (no mode allows it)"],
            "{mode:?}"
        );
        // The other way, a failure gone and a crash fixed are allowed, and said.
        let outcome = match_runs(&failed, &golden, &options);
        assert!(outcome.passed(), "{mode:?}: {outcome}");
        assert!(
            outcome
                .allowed
                .contains(&"tool_errors: grep failed 0 time(s), 1 in the golden".to_owned())
        );
        let outcome = match_runs(&crashed, &golden, &options);
        assert!(outcome.passed(), "{mode:?}: {outcome}");
        assert!(
            outcome.allowed.contains(&"crashed: the golden crashed, the run did not".to_owned())
        );
    }
}

#[test]
fn arguments_compare_by_mode_per_tool_and_numbers_numerically() {
    let with = |arguments: Value| run(&[&[("read", arguments)]]);
    let golden = with(json!({"path": "a.txt", "limit": 1}));
    let options = |mode: ArgumentMatch| {
        let mut options = MatchOptions::default();
        options.set_arguments(mode);
        options
    };
    let passes = |actual: Value, options: &MatchOptions| {
        match_runs(&golden, &with(actual), options).passed()
    };
    assert!(
        passes(json!({"path": "a.txt", "limit": 1.0}), &options(ArgumentMatch::Exact)),
        "1 equals 1.0"
    );
    assert!(!passes(json!({"path": "a.txt", "limit": 1.5}), &options(ArgumentMatch::Exact)));
    let mut tolerant = options(ArgumentMatch::Exact);
    tolerant.set_number_tolerance(0.5);
    assert!(passes(json!({"path": "a.txt", "limit": 1.5}), &tolerant));
    assert!(passes(json!({"path": "b.txt"}), &options(ArgumentMatch::Ignore)));
    assert!(passes(json!({"path": "a.txt"}), &options(ArgumentMatch::Subset)));
    assert!(!passes(json!({"path": "a.txt", "extra": true}), &options(ArgumentMatch::Subset)));
    assert!(passes(
        json!({"path": "a.txt", "limit": 1, "extra": true}),
        &options(ArgumentMatch::Superset)
    ));
    assert!(!passes(json!({"path": "a.txt"}), &options(ArgumentMatch::Superset)));
    let paths = options(ArgumentMatch::Paths(vec!["/path".to_owned()]));
    assert!(passes(json!({"path": "a.txt", "limit": 9}), &paths));
    assert!(!passes(json!({"path": "b.txt", "limit": 1}), &paths));
    // A mode for one tool only.
    let mut per_tool = MatchOptions::default();
    per_tool.set_tool_arguments("read", ArgumentMatch::Ignore);
    assert!(passes(json!({"path": "z"}), &per_tool));
    let changed = match_runs(&golden, &with(json!({"path": "z"})), &MatchOptions::default());
    assert_eq!(changed.failures, ["missing call(s): read (exact)", "extra call(s): read (exact)"]);
}

#[test]
fn counts_move_within_their_band_and_fail_outside_it() {
    let tokens = |prompt: u64| {
        let mut doc = run(&[&[call("read")]]);
        doc["final_metrics"] =
            json!({"total_prompt_tokens": prompt, "total_completion_tokens": 10});
        doc
    };
    let exact = match_runs(&tokens(1000), &tokens(1080), &MatchOptions::default());
    assert_eq!(exact.failures, ["prompt_tokens: 1000 -> 1080, outside its band"]);
    let mut banded = MatchOptions::default();
    banded.set_bands(Band::default(), Band::default(), Band { absolute: 0, relative: 0.1 });
    let outcome = match_runs(&tokens(1000), &tokens(1080), &banded);
    assert!(outcome.passed(), "{outcome}");
    assert_eq!(outcome.allowed, ["prompt_tokens: 1000 -> 1080, within its band"]);
    assert!(!match_runs(&tokens(1000), &tokens(1200), &banded).passed());
    let mut absolute = MatchOptions::default();
    absolute.set_bands(Band::default(), Band::default(), Band { absolute: 100, relative: 0.0 });
    assert!(match_runs(&tokens(1000), &tokens(1080), &absolute).passed());
}
