//! Architecture invariants of the workspace, checked against `cargo metadata`, plus tidy rules
//! every source file follows. See docs/architecture.md.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The workspace root (the parent of this package's folder).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Package name -> names of its normal (non-dev, non-build) dependencies, for every package in
/// the resolved graph.
fn normal_dependency_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();

    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|package| (package["id"].as_str().unwrap(), package["name"].as_str().unwrap()))
        .collect();
    let mut graph = BTreeMap::new();
    for node in metadata["resolve"]["nodes"].as_array().unwrap() {
        let name = names[node["id"].as_str().unwrap()].to_owned();
        let deps: BTreeSet<String> = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|dep| {
                dep["dep_kinds"].as_array().unwrap().iter().any(|kind| kind["kind"].is_null())
            })
            .map(|dep| names[dep["pkg"].as_str().unwrap()].to_owned())
            .collect();
        graph.entry(name).or_insert_with(BTreeSet::new).extend(deps);
    }
    graph
}

/// Every package `root` pulls in through normal dependencies, transitively (not itself).
fn closure(graph: &BTreeMap<String, BTreeSet<String>>, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_owned()];
    while let Some(name) = stack.pop() {
        for dep in graph.get(&name).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

const OURS: [&str; 9] = [
    "atif-secrets",
    "atif-fs",
    "atif-schema",
    "atif-normalize",
    "atif-golden",
    "atif-replay",
    "atif-import",
    "atif-proxy",
    "atif-cli",
];

#[test]
fn library_crates_depend_only_on_the_layers_below_them() {
    let graph = normal_dependency_graph();
    let allowed: [(&str, &[&str]); 9] = [
        ("atif-secrets", &[]),
        ("atif-fs", &[]),
        ("atif-schema", &[]),
        ("atif-normalize", &["atif-schema", "atif-secrets"]),
        ("atif-golden", &["atif-schema", "atif-normalize", "atif-secrets", "atif-fs"]),
        ("atif-replay", &["atif-schema", "atif-secrets", "atif-fs"]),
        ("atif-import", &["atif-schema", "atif-secrets"]),
        ("atif-proxy", &["atif-schema", "atif-replay", "atif-secrets", "atif-fs"]),
        ("atif-cli", &OURS),
    ];
    for (package, may_use) in allowed {
        let forbidden: Vec<String> = closure(&graph, package)
            .into_iter()
            .filter(|dep| OURS.contains(&dep.as_str()) && !may_use.contains(&dep.as_str()))
            .collect();
        assert!(forbidden.is_empty(), "{package} must not depend on {forbidden:?}");
    }
}

#[test]
fn nobody_who_only_replays_in_process_compiles_an_http_server() {
    let graph = normal_dependency_graph();
    let replay = closure(&graph, "atif-replay");
    for server in ["axum", "atif-proxy", "atif-fake-provider"] {
        assert!(!replay.contains(server), "atif-replay pulls in {server}: {replay:?}");
    }
    assert!(closure(&graph, "atif-proxy").contains("axum"), "the check itself still works");
}

/// The packages `cargo` compiles for `atif-replay` alone (normal dependencies), with `features`.
fn replay_build_packages(features: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        .args(["tree", "--locked", "-p", "atif-replay", "-e", "normal", "--prefix", "none"])
        .args(["--format", "{p}"])
        .current_dir(workspace_root());
    if !features.is_empty() {
        command.args(["--features", &features.join(",")]);
    }
    let output = command.output().expect("cargo tree runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn a_user_of_replay_without_the_http_feature_compiles_no_http_stack() {
    let http_stack = ["reqwest", "hyper", "hyper-util", "rustls", "h2", "http"];
    let plain = replay_build_packages(&[]);
    for package in http_stack {
        assert!(
            !plain.contains(package),
            "atif-replay without `http` pulls in {package}: {plain:?}"
        );
    }
    let with_http = replay_build_packages(&["http"]);
    assert!(with_http.contains("reqwest"), "the check itself still works: {with_http:?}");
}

#[test]
fn only_replay_the_proxy_and_the_cli_pull_in_an_async_runtime() {
    let graph = normal_dependency_graph();
    for package in
        ["atif-secrets", "atif-fs", "atif-schema", "atif-normalize", "atif-golden", "atif-import"]
    {
        let deps = closure(&graph, package);
        for runtime in ["tokio", "async-trait", "futures"] {
            assert!(!deps.contains(runtime), "{package} pulls in {runtime}: {deps:?}");
        }
    }
    assert!(closure(&graph, "atif-replay").contains("tokio"), "the check itself still works");
}

#[test]
fn the_test_support_crate_is_a_dev_dependency_only() {
    let graph = normal_dependency_graph();
    for package in OURS {
        let deps = closure(&graph, package);
        assert!(!deps.contains("atif-test-support"), "{package} depends on atif-test-support");
    }
    let tests = closure(&graph, "tests");
    assert!(tests.contains("atif-test-support"), "the check itself still works: {tests:?}");
}

#[test]
fn the_fuzz_crates_lock_file_is_current() {
    // fuzz/ is outside the workspace, and `cargo xtask fuzz` builds it with --locked: a library
    // that gains a dependency must update fuzz/Cargo.lock too, or the fuzz step of .ci/run fails.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--manifest-path"])
        .arg(workspace_root().join("fuzz/Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "fuzz/Cargo.lock is out of date; update it (only the entries that changed) with:\n  \
         cargo metadata --format-version 1 --manifest-path fuzz/Cargo.toml > /dev/null\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_workspace_forces_no_tokio_feature_on_its_members() {
    // A feature named in [workspace.dependencies] is on for every member that uses tokio, and so
    // for every library user; each member names the features it uses instead.
    let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
    let line = manifest.lines().find(|line| line.starts_with("tokio ")).unwrap();
    assert!(!line.contains(" features"), "the root Cargo.toml enables tokio features: {line}");
    assert!(line.contains("default-features = false"), "{line}");
}

#[test]
fn normalize_stays_free_of_io_heavy_dependencies() {
    let graph = normal_dependency_graph();
    let deps = closure(&graph, "atif-normalize");
    for heavy in ["tempfile", "clap", "schemars", "insta"] {
        assert!(!deps.contains(heavy), "atif-normalize pulls in {heavy}");
    }
}

/// Every Rust source file we own, outside target/.
fn rust_sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    walk(&path, out);
                }
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }
    let root = workspace_root();
    let mut out = Vec::new();
    for dir in ["crates", "xtask", "tests"] {
        walk(&root.join(dir), &mut out);
    }
    out
}

#[test]
fn every_source_file_starts_with_a_module_doc_line() {
    let sources = rust_sources();
    assert!(sources.len() > 10, "found only {} sources", sources.len());
    let undocumented: Vec<_> = sources
        .iter()
        .filter(|path| !std::fs::read_to_string(path).unwrap().starts_with("//!"))
        .collect();
    assert!(undocumented.is_empty(), "files without a leading `//!` line: {undocumented:?}");
}

#[test]
fn every_library_forbids_unsafe_code() {
    let root = workspace_root();
    // Every crate of ours but the binary.
    for crate_name in OURS.into_iter().filter(|name| *name != "atif-cli") {
        let lib = std::fs::read_to_string(root.join("crates").join(crate_name).join("src/lib.rs"))
            .unwrap();
        assert!(lib.contains("#![forbid(unsafe_code)]"), "{crate_name} lacks forbid(unsafe_code)");
    }
}
