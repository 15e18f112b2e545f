//! Helpers shared by the tests: fixtures, validation, and short views of a trajectory.

use std::path::{Path, PathBuf};

use atif_import::{Import, ImportOptions, import};
use atif_schema::{ValidateOptions, validate};
use serde_json::Value;

pub(crate) use atif_schema::error_chain as chain;

/// The folder of our own fixtures.
pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The bytes of a fixture.
pub(crate) fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(rel)).unwrap()
}

/// Imports a fixture with default options and checks the result is valid ATIF.
pub(crate) fn import_fixture(rel: &str) -> Import {
    let imported = import(&fixture(rel), &ImportOptions::default()).unwrap();
    assert_valid(&imported.trajectory(), rel);
    assert_pretty(&imported, rel);
    imported
}

/// Asserts that the text the import wrote step by step is serde_json's pretty text of the
/// whole trajectory, as `atif import` wrote it when the import built the whole value.
pub(crate) fn assert_pretty(imported: &Import, what: &str) {
    let whole = serde_json::to_string_pretty(&imported.trajectory()).unwrap();
    assert!(imported.json() == whole, "{what}: the import's text is not the pretty text");
}

/// Asserts that `trajectory` passes strict validation.
pub(crate) fn assert_valid(trajectory: &Value, what: &str) {
    let report = validate(trajectory, &ValidateOptions::default());
    let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
    assert!(errors.is_empty(), "{what} is not valid ATIF:\n{}", errors.join("\n"));
}

/// The steps of a trajectory.
pub(crate) fn steps(t: &Value) -> &Vec<Value> {
    t["steps"].as_array().unwrap()
}

/// Each step's source initial: `u`ser, `a`gent, `s`ystem.
pub(crate) fn sources(t: &Value) -> String {
    steps(t).iter().map(|s| s["source"].as_str().unwrap()[..1].to_owned()).collect()
}

/// Every tool call's function name, in order.
pub(crate) fn functions(t: &Value) -> Vec<String> {
    steps(t)
        .iter()
        .flat_map(|s| s["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["function_name"].as_str().unwrap().to_owned())
        .collect()
}

/// `(step_id, source_call_id)` of every observation result that names a call, in order.
pub(crate) fn joins(t: &Value) -> Vec<(u64, String)> {
    steps(t)
        .iter()
        .flat_map(|s| {
            let id = s["step_id"].as_u64().unwrap();
            s["observation"]["results"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(move |r| r["source_call_id"].as_str().map(|c| (id, c.to_owned())))
        })
        .collect()
}

/// The ids of the calls that got no result, in order.
pub(crate) fn unanswered(t: &Value) -> Vec<String> {
    let answered: Vec<String> = joins(t).into_iter().map(|(_, c)| c).collect();
    steps(t)
        .iter()
        .flat_map(|s| s["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["tool_call_id"].as_str().unwrap().to_owned())
        .filter(|id| !answered.contains(id))
        .collect()
}

/// `(prompt, completion, cached)` of `final_metrics`.
pub(crate) fn totals(t: &Value) -> (Option<u64>, Option<u64>, Option<u64>) {
    let fm = &t["final_metrics"];
    (
        fm["total_prompt_tokens"].as_u64(),
        fm["total_completion_tokens"].as_u64(),
        fm["total_cached_tokens"].as_u64(),
    )
}

/// Whether the trajectory is marked as crashed.
pub(crate) fn crashed(t: &Value) -> bool {
    t["extra"]["crashed"] == Value::Bool(true)
}

/// The `extra.error.kind` of each step that has one, with its step id.
pub(crate) fn errors(t: &Value) -> Vec<(u64, String)> {
    steps(t)
        .iter()
        .filter_map(|s| {
            let kind = s["extra"]["error"]["kind"].as_str()?;
            Some((s["step_id"].as_u64().unwrap(), kind.to_owned()))
        })
        .collect()
}
