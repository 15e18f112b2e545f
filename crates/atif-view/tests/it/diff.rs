//! The page of two runs: lanes aligned as the text report aligns them, the changes marked, the
//! first divergence shown at the top, and the differing fields highlighted.

use atif_normalize::{DiffOptions, JsonDocument, NormalizeOptions, compare};
use atif_view::{ViewOptions, render_diff};
use serde_json::{Value, json};

/// A run of `n` agent steps, step `i` calling `function(i)`.
fn run(n: usize, function: impl Fn(usize) -> String) -> Value {
    let steps: Vec<Value> = (1..=n)
        .map(|i| {
            json!({"step_id": i, "source": "agent", "message": format!("step {i}"),
                   "tool_calls": [{"tool_call_id": format!("c{i}"), "function_name": function(i), "arguments": {"n": i}}]})
        })
        .collect();
    json!({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": steps})
}

fn renumber(run: &mut Value) {
    for (idx, step) in run["steps"].as_array_mut().unwrap().iter_mut().enumerate() {
        step["step_id"] = json!(idx + 1);
    }
}

/// The page of `golden` against `actual`, compared as `atif diff` compares them.
fn page(golden: &Value, actual: &Value) -> String {
    let options = NormalizeOptions::default();
    let (golden_text, actual_text) = (golden.to_string(), actual.to_string());
    let (golden_doc, _) =
        JsonDocument::parse(golden_text.as_bytes()).unwrap().normalize(&options).unwrap();
    let (actual_doc, _) =
        JsonDocument::parse(actual_text.as_bytes()).unwrap().normalize(&options).unwrap();
    let comparison = compare(&golden_doc, &actual_doc, &DiffOptions::default());
    let (deltas, changes) = (comparison.deltas().to_vec(), comparison.changes().to_vec());
    let golden_run = atif_normalize::normalize(golden, &options).unwrap();
    let actual_run = atif_normalize::normalize(actual, &options).unwrap();
    render_diff(
        &golden_run,
        &actual_run,
        &deltas,
        &changes,
        ("golden.json", "run.json"),
        &ViewOptions::new(),
    )
    .unwrap()
}

/// The rows of the page's lanes (not the header's preview): (class, golden step, actual step).
fn rows(page: &str) -> Vec<(String, Option<String>, Option<String>)> {
    let main = &page[page.find("<main>").unwrap()..];
    main.split("<div class=\"row ")
        .skip(2) // the lanes' heads come first
        .map(|row| {
            let class = row[..row.find('"').unwrap()].trim().to_owned();
            let step = |prefix: &str| {
                let at = row.find(&format!("id=\"{prefix}-"))? + prefix.len() + 5;
                Some(row[at..at + row[at..].find('"').unwrap()].to_owned())
            };
            (class, step("g"), step("a"))
        })
        .collect()
}

#[test]
fn the_lanes_pair_the_steps_as_the_report_does_with_changes_marked() {
    // Each step calls a function of its own, so the alignment has one answer.
    let golden = run(40, |i| format!("f{i}"));
    let mut actual = golden.clone();
    let steps = actual["steps"].as_array_mut().unwrap();
    steps.insert(
        10,
        json!({"step_id": 0, "source": "agent", "message": "probe",
        "tool_calls": [{"tool_call_id": "p", "function_name": "probe", "arguments": {}}]}),
    );
    steps[20]["tool_calls"][0]["function_name"] = json!("write");
    steps.remove(31);
    renumber(&mut actual);
    let page = page(&golden, &actual);
    let rows = rows(&page);
    let some = |n: usize| Some(n.to_string());
    assert_eq!(rows.len(), 41, "{rows:#?}");
    assert_eq!(rows[9], (String::new(), some(10), some(10)));
    assert_eq!(rows[10], ("inserted first".to_owned(), None, some(11)));
    assert_eq!(rows[11], (String::new(), some(11), some(12)));
    assert_eq!(rows[20], ("changed".to_owned(), some(20), some(21)));
    assert_eq!(rows[31], ("removed".to_owned(), some(31), None));
    assert_eq!(rows[40], (String::new(), some(40), some(40)));
    let marked = rows.iter().filter(|(class, ..)| !class.is_empty()).count();
    assert_eq!(marked, 3);
}

#[test]
fn the_marked_rows_are_the_step_changes_of_the_text_report_in_order() {
    // Every step calls the same function: the alignment is the report's choice, and the page
    // must make the same one.
    let golden = run(40, |_| "read".to_owned());
    let mut actual = golden.clone();
    let steps = actual["steps"].as_array_mut().unwrap();
    steps.insert(
        10,
        json!({"step_id": 0, "source": "agent", "message": "probe",
        "tool_calls": [{"tool_call_id": "p", "function_name": "probe", "arguments": {}}]}),
    );
    steps.remove(31);
    renumber(&mut actual);
    let (golden_text, actual_text) = (golden.to_string(), actual.to_string());
    let options = NormalizeOptions::default();
    let (golden_doc, _) =
        JsonDocument::parse(golden_text.as_bytes()).unwrap().normalize(&options).unwrap();
    let (actual_doc, _) =
        JsonDocument::parse(actual_text.as_bytes()).unwrap().normalize(&options).unwrap();
    let changes = compare(&golden_doc, &actual_doc, &DiffOptions::default()).changes().to_vec();
    let expected: Vec<_> = changes
        .iter()
        .map(|c| (c.golden_step.map(|n| n.to_string()), c.actual_step.map(|n| n.to_string())))
        .collect();
    let marked: Vec<_> = rows(&page(&golden, &actual))
        .into_iter()
        .filter(|(class, ..)| !class.is_empty())
        .map(|(_, g, a)| (g, a))
        .collect();
    assert!(expected.len() > 3, "{changes:?}");
    assert_eq!(marked, expected);
}

#[test]
fn the_header_holds_the_deltas_and_the_first_divergence_itself() {
    let golden = run(3, |_| "read".to_owned());
    let mut actual = golden.clone();
    actual["steps"][1]["tool_calls"][0]["function_name"] = json!("grep");
    let page = page(&golden, &actual);
    let header = &page[page.find("<header>").unwrap()..page.find("</header>").unwrap()];
    assert!(header.contains("the behaviour changed"));
    assert!(header.contains("<summary>1 step change</summary>"), "{header}");
    assert!(header.contains("<tr><th>functions</th><td>functions: step 2 "), "{header}");
    assert!(header.contains("<a href=\"#first\">first divergence, step 2</a>: step 2 (agent) changed: calls grep instead of read"), "{header}");
    // The preview is the row itself, both sides, with ids of its own.
    assert!(header.contains("<div class=\"row changed first\" id=\"preview-2\""), "{header}");
    assert!(header.contains("id=\"pg-2\"") && header.contains("id=\"pa-2\""));
    assert!(page.contains("<div class=\"row changed first\" id=\"first\" data-step=\"2\">"));
}

#[test]
fn inside_a_changed_step_only_the_fields_that_differ_are_highlighted() {
    let golden = run(2, |_| "read".to_owned());
    let mut actual = golden.clone();
    actual["steps"][1]["tool_calls"][0]["function_name"] = json!("grep");
    let page = page(&golden, &actual);
    let row = &page[page.find("id=\"first\"").unwrap()..];
    let row = &row[..row.find("</main>").unwrap()];
    // Each side's call is highlighted; the message, equal on both sides, is not.
    assert_eq!(row.matches("<div class=\"call differs\">").count(), 2, "{row}");
    assert!(row.contains("<pre class=\"text message\">step 2</pre>"));
    assert!(!row.contains("<div class=\"differs\"><pre class=\"text message\">"));
}

#[test]
fn long_stretches_of_unchanged_steps_are_folded_but_the_change_keeps_its_context() {
    let golden = run(100, |_| "read".to_owned());
    let mut actual = golden.clone();
    actual["steps"][49]["tool_calls"][0]["function_name"] = json!("grep");
    let page = page(&golden, &actual);
    assert!(
        page.contains("<details class=\"same\"><summary>46 unchanged steps</summary>"),
        "before"
    );
    assert!(
        page.contains("<details class=\"same\"><summary>47 unchanged steps</summary>"),
        "after"
    );
    // Every step is still on the page, in its lane.
    for n in 1..=100 {
        assert!(
            page.contains(&format!("id=\"g-{n}\"")) && page.contains(&format!("id=\"a-{n}\"")),
            "{n}"
        );
    }
}

#[test]
fn two_runs_with_the_same_shape_say_so_and_mark_nothing() {
    let golden = run(3, |_| "read".to_owned());
    let page = page(&golden, &golden);
    assert!(page.contains("the same Shape"));
    assert!(!page.contains("class=\"firstlink\"") && !page.contains("id=\"first\""));
    assert!(rows(&page).iter().all(|(class, ..)| class.is_empty()));
}

#[test]
fn a_change_inside_a_subagent_marks_its_steps_and_the_root_step_that_delegated_to_it() {
    // Step 10 of 30 delegates to an embedded subagent whose second step changes, and nothing
    // else does: the delegating row is the first divergence, open, not folded away.
    let mut golden = run(30, |i| format!("f{i}"));
    golden["steps"][9]["observation"] = json!({"results": [{
        "source_call_id": "c10", "content": "delegated",
        "subagent_trajectory_ref": [{"trajectory_id": "sub-1"}]}]});
    let sub = run(3, |_| "search".to_owned());
    golden["subagent_trajectories"] = json!([{
        "trajectory_id": "sub-1", "schema_version": "ATIF-v1.8",
        "agent": {"name": "researcher", "version": "1"}, "steps": sub["steps"].clone()}]);
    let mut actual = golden.clone();
    actual["subagent_trajectories"][0]["steps"][1]["tool_calls"][0]["function_name"] =
        json!("fetch");
    let page = page(&golden, &actual);
    let rows = rows(&page);
    let some = |n: usize| Some(n.to_string());
    assert_eq!(rows[9], ("inside first".to_owned(), some(10), some(10)), "{rows:#?}");
    assert_eq!(rows.iter().filter(|(class, ..)| !class.is_empty()).count(), 1, "{rows:#?}");
    let header = &page[page.find("<header>").unwrap()..page.find("</header>").unwrap()];
    assert!(
        header.contains("<a href=\"#first\">first divergence, step 10</a>: subagent &quot;researcher&quot;: step 2 (agent) changed"),
        "{header}"
    );
    let main = &page[page.find("<main>").unwrap()..];
    assert!(main.contains("<span class=\"mark\">changed inside a subagent</span>"), "{main}");
    // Both lanes draw the subagent with its second step marked, the differing call highlighted.
    for lane in ["g", "a"] {
        let at = main.find(&format!("id=\"{lane}-a1-2\"")).unwrap();
        let step = &main[main[..at].rfind("<li ").unwrap()..];
        let step = &step[..step.find("</li>").unwrap()];
        assert!(step.starts_with("<li class=\"step src-agent changed\""), "{step}");
        assert!(step.contains("<div class=\"call differs\">"), "{step}");
        let other = &main[main.find(&format!("id=\"{lane}-a1-1\"")).unwrap() - 40..];
        assert!(!other[..other.find("</li>").unwrap()].contains("changed"), "{other}");
    }
    assert_eq!(main.matches("<details class=\"subagent changed\" open>").count(), 2);
    assert!(main.contains("1 step marked"));
}
