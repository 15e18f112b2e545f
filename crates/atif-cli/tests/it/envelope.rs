//! `atif envelope`: writing an envelope golden from runs on disk, and the verdict on new runs.

use std::path::Path;

use crate::{atif_command, stderr, stdout};

/// A run whose agent makes one call of each of `tools`, in one step each.
fn write_run(dir: &Path, name: &str, tools: &[&str]) -> String {
    let steps: Vec<serde_json::Value> = tools
        .iter()
        .enumerate()
        .map(|(idx, tool)| {
            serde_json::json!({
                "step_id": idx + 1, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": format!("c{idx}"), "function_name": tool, "arguments": {}}]
            })
        })
        .collect();
    let run = serde_json::json!({
        "schema_version": "ATIF-v1.8", "session_id": name,
        "agent": {"name": "a", "version": "1"}, "steps": steps,
    });
    std::fs::write(dir.join(name), run.to_string()).unwrap();
    name.to_owned()
}

/// `n` runs named `PREFIX-1.json`…, the first `with_grep` of which also grep.
fn write_runs(dir: &Path, prefix: &str, n: usize, with_grep: usize) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let tools: &[&str] = if i <= with_grep { &["read", "grep"] } else { &["read"] };
            write_run(dir, &format!("{prefix}-{i}.json"), tools)
        })
        .collect()
}

fn atif(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut command = atif_command(args);
    command.current_dir(dir).env_remove("CI");
    command.output().unwrap()
}

fn with_runs<'a>(head: &[&'a str], runs: &'a [String]) -> Vec<&'a str> {
    head.iter().copied().chain(runs.iter().map(String::as_str)).collect()
}

#[test]
fn update_writes_the_envelope_and_the_same_behaviour_is_no_clear_change() {
    let dir = tempfile::tempdir().unwrap();
    let golden_runs = write_runs(dir.path(), "golden", 20, 2);
    let made = atif(dir.path(), &with_runs(&["envelope", "--update", "g.json"], &golden_runs));
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    assert_eq!(
        stderr(&made),
        "atif envelope: wrote g.json (20 runs, 2 tool-call variant(s), order exact)\n"
    );
    let text = std::fs::read_to_string(dir.path().join("g.json")).unwrap();
    assert!(text.contains("\"envelope_version\": 1"), "{text}");

    let new_runs = write_runs(dir.path(), "new", 20, 3);
    let same = atif(dir.path(), &with_runs(&["envelope", "g.json"], &new_runs));
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert!(
        stdout(&same)
            .starts_with("no clear change: no field moved (20 runs against an envelope of 20"),
        "{}",
        stdout(&same)
    );
    let quiet = atif(dir.path(), &with_runs(&["envelope", "-q", "g.json"], &new_runs));
    assert_eq!((quiet.status.code(), stdout(&quiet).as_str()), (Some(0), ""));
}

#[test]
fn a_moved_tool_rate_is_changed_exit_1_naming_the_effect_and_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let golden_runs = write_runs(dir.path(), "golden", 20, 2);
    atif(dir.path(), &with_runs(&["envelope", "--update", "g.json"], &golden_runs));
    let new_runs = write_runs(dir.path(), "new", 20, 18);
    let changed = atif(dir.path(), &with_runs(&["envelope", "g.json"], &new_runs));
    assert_eq!(changed.status.code(), Some(1), "{}", stderr(&changed));
    let text = stdout(&changed);
    assert!(text.starts_with("changed: "), "{text}");
    assert!(text.contains("tool_runs.grep: `grep` called in 18/20 runs, was 2/20 (p = "), "{text}");
    assert!(text.contains("runs: new-1.json, new-2.json"), "{text}");

    let json = atif(dir.path(), &with_runs(&["envelope", "--format", "json", "g.json"], &new_runs));
    assert_eq!(json.status.code(), Some(1));
    let verdict: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(verdict["verdict"], "changed");
    assert_eq!(verdict["runs"], 20);
    let grep = verdict["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field"] == "tool_runs.grep")
        .unwrap();
    assert_eq!(grep["verdict"], "changed");
    assert_eq!(grep["golden"], "2/20");
    assert_eq!(grep["actual"], "18/20");
    assert!(grep["p_value"].as_f64().unwrap() < 1e-5, "{grep}");
    assert!(verdict.get("pass_at_k").is_some() && verdict.get("pass_hat_k").is_some());
}

#[test]
fn too_few_runs_are_inconclusive_and_require_conclusive_makes_that_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let golden_runs = write_runs(dir.path(), "golden", 20, 2);
    atif(dir.path(), &with_runs(&["envelope", "--update", "g.json"], &golden_runs));
    let few = write_runs(dir.path(), "few", 4, 0);
    let output = atif(dir.path(), &with_runs(&["envelope", "g.json"], &few));
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stdout(&output).starts_with("inconclusive: no field moved, but 4 runs per side"),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).contains("14 runs would"), "{}", stdout(&output));
    let strict =
        atif(dir.path(), &with_runs(&["envelope", "--require-conclusive", "g.json"], &few));
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn any_order_envelopes_allow_a_reordering_that_exact_ones_call_changed() {
    let dir = tempfile::tempdir().unwrap();
    let ordered: Vec<String> =
        (1..=20).map(|i| write_run(dir.path(), &format!("o{i}.json"), &["read", "grep"])).collect();
    let swapped: Vec<String> =
        (1..=20).map(|i| write_run(dir.path(), &format!("s{i}.json"), &["grep", "read"])).collect();
    atif(
        dir.path(),
        &with_runs(&["envelope", "--update", "--order", "any-order", "any.json"], &ordered),
    );
    atif(dir.path(), &with_runs(&["envelope", "--update", "exact.json"], &ordered));
    let any = atif(dir.path(), &with_runs(&["envelope", "any.json"], &swapped));
    assert_eq!(any.status.code(), Some(0), "{}", stdout(&any));
    assert!(stdout(&any).contains("grouped as variants by order `any-order`"), "{}", stdout(&any));
    let exact = atif(dir.path(), &with_runs(&["envelope", "exact.json"], &swapped));
    assert_eq!(exact.status.code(), Some(1), "{}", stdout(&exact));
    assert!(
        stdout(&exact).contains("tool_sequence: `grep; read` in 20/20 runs, was 0/20"),
        "{}",
        stdout(&exact)
    );
}

#[test]
fn in_order_envelopes_credit_a_run_with_calls_between_to_the_variant_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let golden: Vec<String> =
        (1..=20).map(|i| write_run(dir.path(), &format!("g{i}.json"), &["read", "grep"])).collect();
    let between: Vec<String> = (1..=20)
        .map(|i| write_run(dir.path(), &format!("b{i}.json"), &["read", "ls", "grep"]))
        .collect();
    let made = atif(
        dir.path(),
        &with_runs(&["envelope", "--update", "--order", "in-order", "g.json"], &golden),
    );
    assert_eq!(
        stderr(&made),
        "atif envelope: wrote g.json (20 runs, 1 tool-call variant(s), order in-order)\n"
    );
    let text = std::fs::read_to_string(dir.path().join("g.json")).unwrap();
    assert!(text.contains("\"order\": \"in-order\""), "{text}");
    // The sequence passes in-order; the new tool is still a change, and the report says which.
    let output =
        atif(dir.path(), &with_runs(&["envelope", "--format", "json", "g.json"], &between));
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let verdict: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(verdict["order"], "in-order");
    let fields = verdict["fields"].as_array().unwrap();
    let field = |name: &str| fields.iter().find(|f| f["field"] == name).unwrap();
    assert_eq!(field("tool_sequence")["verdict"], "no-clear-change");
    assert_eq!(field("tool_sequence")["actual"], serde_json::json!({"read, grep": 20}));
    assert_eq!(field("tool_runs.ls")["verdict"], "changed");
    let bad =
        atif(dir.path(), &["envelope", "--update", "--order", "sideways", "x.json", "g1.json"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("[possible values: exact, in-order, any-order, subset, superset]"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn a_missing_or_malformed_envelope_is_exit_1_saying_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let runs = write_runs(dir.path(), "r", 2, 0);
    let missing = atif(dir.path(), &with_runs(&["envelope", "g.json"], &runs));
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        stderr(&missing),
        "error: no envelope golden at g.json; write it from these runs with:\n  atif envelope --update g.json r-1.json r-2.json\n"
    );
    std::fs::write(dir.path().join("bad.json"), r#"{"envelope_version": 1, "runs": "two"}"#)
        .unwrap();
    let bad = atif(dir.path(), &with_runs(&["envelope", "bad.json"], &runs));
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        stderr(&bad).starts_with(
            "error: bad.json: invalid envelope at `/runs`: invalid type: string \"two\""
        ),
        "{}",
        stderr(&bad)
    );
    let not_a_run = atif(dir.path(), &["envelope", "g.json", "bad.json"]);
    assert_eq!(not_a_run.status.code(), Some(1), "{}", stderr(&not_a_run));
}

#[test]
fn outcomes_give_the_pass_rate_and_must_be_one_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let golden_runs = write_runs(dir.path(), "golden", 20, 2);
    let all_pass = vec!["pass"; 20].join(",");
    let made = atif(
        dir.path(),
        &with_runs(&["envelope", "--update", "g.json", "--outcomes", &all_pass], &golden_runs),
    );
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let text = std::fs::read_to_string(dir.path().join("g.json")).unwrap();
    assert!(text.contains("\"passed_runs\": 20"), "{text}");

    let new_runs = write_runs(dir.path(), "new", 20, 2);
    let mostly_fail = [vec!["fail"; 15], vec!["pass"; 5]].concat().join(",");
    let checked = atif(
        dir.path(),
        &with_runs(&["envelope", "g.json", "--outcomes", &mostly_fail], &new_runs),
    );
    assert_eq!(checked.status.code(), Some(1), "{}", stderr(&checked));
    assert!(
        stdout(&checked).contains("  pass_rate: passed 5/20 runs, was 20/20"),
        "{}",
        stdout(&checked)
    );

    let short =
        atif(dir.path(), &with_runs(&["envelope", "g.json", "--outcomes", "pass,fail"], &new_runs));
    assert_eq!(short.status.code(), Some(1));
    assert_eq!(
        stderr(&short),
        "error: --outcomes gives 2 outcome(s) for 20 run(s); expected one per run, in their order\n"
    );
}

#[test]
fn html_draws_both_sets_as_bar_charts_with_the_fields_that_moved_highlighted() {
    let dir = tempfile::tempdir().unwrap();
    let golden_runs = write_runs(dir.path(), "golden", 20, 2);
    atif(dir.path(), &with_runs(&["envelope", "--update", "g.json"], &golden_runs));
    let new_runs = write_runs(dir.path(), "new", 20, 18);
    let changed =
        atif(dir.path(), &with_runs(&["envelope", "--html", "envelope.html", "g.json"], &new_runs));
    assert_eq!(changed.status.code(), Some(1), "{}", stderr(&changed));
    assert!(stdout(&changed).starts_with("changed: "), "the text verdict is printed as ever");
    let page = std::fs::read_to_string(dir.path().join("envelope.html")).unwrap();
    assert!(page.contains("20 golden runs ⟷ 20 new runs"), "{page}");
    assert!(page.contains("<span class=\"verdict changed\">changed</span>"), "{page}");
    // The fields that moved, at the top and on their rows.
    assert!(
        page.contains("<tr class=\"moved\"><th>tool_runs.grep</th><td>`grep` called in 18/20 runs, was 2/20</td>"),
        "{page}"
    );
    let row = |label: &str| {
        let at = page
            .find(&format!("<th>{label}</th><td><svg"))
            .unwrap_or_else(|| panic!("{label}: {page}"));
        let start = page[..at].rfind("<tr").unwrap();
        &page[start..start + page[start..].find("</tr>").unwrap()]
    };
    let grep = row("runs calling grep");
    assert!(grep.starts_with("<tr class=\"moved\">"), "{grep}");
    // Bars are the share of each side's runs: 2/20 and 18/20.
    assert!(
        grep.contains("<rect class=\"bg\" width=\"10.0\"")
            && grep.contains("<rect class=\"ba\" y=\"6\" width=\"90.0\""),
        "{grep}"
    );
    assert!(grep.contains("2/20 → 18/20 <b>moved</b>"), "{grep}");
    let read = row("runs calling read");
    assert!(read.starts_with("<tr><th>") && read.contains("20/20 → 20/20"), "{read}");
    // The variants, the most frequent first, and a histogram per count field.
    let variants = &page[page.find("<table class=\"bars variants moved\">").expect(&page)..];
    let variants = &variants[..variants.find("</table>").unwrap()];
    assert_eq!(variants.matches("<tr>").count(), 2, "{variants}");
    assert!(variants.contains("18/20 → 2/20") && variants.contains("2/20 → 18/20"), "{variants}");
    for field in ["step_count", "llm_calls", "prompt_tokens", "completion_tokens"] {
        assert!(
            page.contains(&format!("<table class=\"bars histogram\" data-field=\"{field}\">")),
            "{field}"
        );
    }
    let steps = &page[page.find("data-field=\"step_count\"").unwrap()..];
    let steps = &steps[..steps.find("</table>").unwrap()];
    assert!(steps.contains("<th>1</th>") && steps.contains("18 → 2 runs"), "{steps}");
    assert!(steps.contains("<th>2</th>") && steps.contains("2 → 18 runs"), "{steps}");
    // The runs are named by their paths, which stay out of a page that is shared.
    assert!(!page.contains("new-1.json") && !page.contains("golden-1.json"), "{page}");

    let same = write_runs(dir.path(), "same", 20, 2);
    let quiet = atif(dir.path(), &with_runs(&["envelope", "--html", "same.html", "g.json"], &same));
    assert_eq!(quiet.status.code(), Some(0), "{}", stderr(&quiet));
    let page = std::fs::read_to_string(dir.path().join("same.html")).unwrap();
    assert!(page.contains("<span class=\"verdict same\">no-clear-change</span>"), "{page}");
    assert!(!page.contains("class=\"moved\""), "{page}");
}

#[test]
fn the_project_file_gives_the_order_and_the_preset_where_no_flag_does() {
    let dir = tempfile::tempdir().unwrap();
    let toml = "[defaults]\npreset = \"codex\"\n\n[[golden]]\nglob = \"live/*.json\"\nsequence = \"any-order\"\n";
    std::fs::write(dir.path().join("atif.toml"), toml).unwrap();
    std::fs::create_dir(dir.path().join("live")).unwrap();
    let mut run: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(write_run(dir.path(), "r.json", &["read"])))
            .unwrap(),
    )
    .unwrap();
    run["steps"][0]["extra"] = serde_json::json!({"request_id": "req_9", "kept": 1});
    std::fs::write(dir.path().join("r.json"), run.to_string()).unwrap();

    let written = |golden: &str, flags: &[&str]| {
        let args: Vec<&str> = ["envelope", "--update", golden]
            .iter()
            .chain(flags)
            .chain(&["r.json"])
            .copied()
            .collect();
        let made = atif(dir.path(), &args);
        assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
        let text = std::fs::read_to_string(dir.path().join(golden)).unwrap();
        (stderr(&made), text)
    };
    let (note, text) = written("live/g.json", &[]);
    assert!(note.ends_with("order any-order)\n"), "{note}");
    assert!(!text.contains("req_9") && text.contains("\"kept\": 1"), "{text}");
    let (note, _) = written("live/h.json", &["--order", "subset"]);
    assert!(note.ends_with("order subset)\n"), "{note}");
    // Outside the glob: the defaults' preset, the default order.
    let (note, text) = written("other.json", &[]);
    assert!(note.ends_with("order exact)\n"), "{note}");
    assert!(!text.contains("req_9"), "{text}");
}
