//! The bundled examples behind the README's first command and its tour stay true.

use std::path::PathBuf;
use std::process::Output;

use crate::atif_command;

/// Runs the real `atif` binary from the workspace root, as CI would.
fn atif(args: &[&str]) -> Output {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    atif_command(args).current_dir(root).env("CI", "true").output().expect("the atif binary runs")
}

#[test]
fn the_readme_command_passes_on_a_rerun_with_only_volatile_differences() {
    let output =
        atif(&["check", "examples/calculator.golden.json", "examples/calculator-rerun.json"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("matches"), "{stdout}");
}

#[test]
fn the_example_golden_is_the_normalised_first_run() {
    let output = atif(&["normalize", "examples/calculator-run.json"]);
    assert_eq!(output.status.code(), Some(0));
    let golden = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/calculator.golden.json"),
    )
    .unwrap();
    assert_eq!(
        output.stdout, golden,
        "re-record with: atif check --update examples/calculator.golden.json examples/calculator-run.json"
    );
}

#[test]
fn the_regressed_example_fails_and_names_the_extra_step_first() {
    let output =
        atif(&["check", "examples/calculator.golden.json", "examples/calculator-regressed.json"]);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("agent behaviour changed ("), "{text}");
    assert_eq!(lines[1].trim(), "step_count: 5 -> 6", "{text}");
    assert!(text.contains("step 4 (agent) inserted: calls multiply"), "{text}");
}
