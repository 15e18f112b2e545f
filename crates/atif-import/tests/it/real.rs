//! Logs of the real CLIs, run offline twice against the fake provider (two folders, two
//! homes; see `tests/fixtures/real/README.md`): every log kind of every agent imports, validates
//! in both profiles, shows its tool call in the Shape, and the two runs normalise alike.

use atif_import::{Format, ImportOptions, import};
use atif_normalize::{normalize, preset, shape, to_canonical_string};
use atif_schema::{Profile, ValidateOptions, validate};
use serde_json::Value;

use crate::support::fixture;

/// Each log kind: its fixture stem, the format detection must find, and the shell tool's name.
const KINDS: &[(&str, Format, &str)] = &[
    ("claude-stream", Format::ClaudeStream, "Bash"),
    ("claude-array", Format::ClaudeStream, "Bash"),
    ("claude-code", Format::ClaudeCode, "Bash"),
    ("codex-exec", Format::CodexExec, "shell"),
    ("codex-rollout", Format::CodexRollout, "exec_command"),
    ("gemini-stream", Format::GeminiStream, "run_shell_command"),
    ("gemini-session", Format::GeminiSession, "run_shell_command"),
    ("opencode-run", Format::OpenCodeRun, "bash"),
    ("opencode-export", Format::OpenCodeExport, "bash"),
    ("pi-json", Format::PiJson, "bash"),
    ("pi-session", Format::PiSession, "bash"),
];

fn file(stem: &str, run: &str) -> String {
    let ext = if matches!(stem, "claude-array" | "opencode-export") { "json" } else { "jsonl" };
    format!("real/{stem}.{run}.{ext}")
}

fn import_run(stem: &str, run: &str, format: Format) -> Value {
    let mut options = ImportOptions::new();
    options.set_strict(true);
    let imported = import(&fixture(&file(stem, run)), &options)
        .unwrap_or_else(|err| panic!("{stem} run {run}: {err}"));
    assert_eq!(imported.format(), format, "{stem}");
    assert!(imported.stats().warnings().is_empty(), "{stem}: {:?}", imported.stats().warnings());
    imported.trajectory()
}

#[test]
fn every_log_kind_of_every_agent_validates_in_both_profiles_and_shows_its_tool_call() {
    for (stem, format, tool) in KINDS {
        for run in ["a", "b"] {
            let trajectory = import_run(stem, run, *format);
            for profile in [Profile::Strict, Profile::Harbor] {
                let report = validate(&trajectory, &ValidateOptions::with_profile(profile));
                let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
                assert!(errors.is_empty(), "{stem} {run} ({profile:?}): {errors:?}");
            }
            let shape = shape(&trajectory);
            assert_eq!(shape.functions, [tool.to_string()], "{stem} {run}");
            assert!(!shape.crashed, "{stem} {run}");
            assert_eq!(shape.llm_calls, 2, "{stem} {run}");
        }
    }
}

#[test]
fn two_runs_in_two_folders_under_two_homes_normalise_alike_with_the_agent_preset() {
    for (stem, format, _) in KINDS {
        let options = preset(format.agent()).unwrap();
        let [a, b] = ["a", "b"].map(|run| {
            let trajectory = import_run(stem, run, *format);
            to_canonical_string(&normalize(&trajectory, &options).unwrap())
        });
        assert_eq!(a, b, "{stem}: the two runs normalise differently");
        assert!(!a.contains("/tmp/imp/"), "{stem}: a run's path is left in\n{a}");
        // The imports themselves differ (session ids, paths, times), so the test has teeth.
        let [a, b] = ["a", "b"].map(|run| to_canonical_string(&import_run(stem, run, *format)));
        assert_ne!(a, b, "{stem}: the two runs are identical before normalising");
    }
}
