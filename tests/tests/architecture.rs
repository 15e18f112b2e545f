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

const OURS: [&str; 12] = [
    "atif-secrets",
    "atif-fs",
    "atif-schema",
    "atif-wire",
    "atif-normalize",
    "atif-envelope",
    "atif-view",
    "atif-golden",
    "atif-replay",
    "atif-import",
    "atif-proxy",
    "atif-cli",
];

#[test]
fn library_crates_depend_only_on_the_layers_below_them() {
    let graph = normal_dependency_graph();
    let allowed: [(&str, &[&str]); 12] = [
        ("atif-secrets", &[]),
        ("atif-fs", &[]),
        ("atif-schema", &[]),
        ("atif-wire", &["atif-schema", "atif-secrets"]),
        ("atif-normalize", &["atif-schema", "atif-secrets"]),
        ("atif-envelope", &["atif-schema", "atif-normalize", "atif-secrets"]),
        ("atif-view", &["atif-schema", "atif-normalize", "atif-envelope", "atif-secrets"]),
        (
            "atif-golden",
            &["atif-schema", "atif-normalize", "atif-envelope", "atif-secrets", "atif-fs"],
        ),
        ("atif-replay", &["atif-schema", "atif-wire", "atif-secrets", "atif-fs"]),
        ("atif-import", &["atif-schema", "atif-secrets"]),
        (
            "atif-proxy",
            &[
                "atif-schema",
                "atif-normalize",
                "atif-wire",
                "atif-replay",
                "atif-secrets",
                "atif-fs",
            ],
        ),
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

#[test]
fn the_wire_protocols_compile_no_http_or_file_code() {
    let graph = normal_dependency_graph();
    let wire = closure(&graph, "atif-wire");
    let forbidden =
        ["axum", "reqwest", "hyper", "http", "atif-replay", "atif-proxy", "tempfile", "atif-fs"];
    for package in forbidden {
        assert!(!wire.contains(package), "atif-wire pulls in {package}: {wire:?}");
    }
    let fake = closure(&graph, "atif-fake-provider");
    assert!(fake.contains("atif-wire") && fake.contains("hyper"), "the check itself still works");
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
    let synchronous = [
        "atif-secrets",
        "atif-fs",
        "atif-schema",
        "atif-wire",
        "atif-normalize",
        "atif-envelope",
        "atif-view",
        "atif-golden",
        "atif-import",
    ];
    for package in synchronous {
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
    for package in ["atif-normalize", "atif-envelope", "atif-view"] {
        let deps = closure(&graph, package);
        for heavy in ["tempfile", "clap", "schemars", "insta", "atif-fs"] {
            assert!(!deps.contains(heavy), "{package} pulls in {heavy}");
        }
    }
    assert!(closure(&graph, "atif-golden").contains("tempfile"), "the check itself still works");
}

/// Every Rust source file we own, outside target/ and fuzz/.
fn rust_sources() -> Vec<PathBuf> {
    let root = workspace_root();
    ["crates", "xtask", "tests"]
        .iter()
        .flat_map(|dir| rust_sources_below(&root.join(dir)))
        .collect()
}

/// Every Rust source file below `dir`, outside `target` and hidden folders.
fn rust_sources_below(dir: &Path) -> Vec<PathBuf> {
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
    let mut out = Vec::new();
    walk(dir, &mut out);
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

/// `needle` split in two, so that this file does not match the rules it states.
fn spelled(head: &str, tail: &str) -> String {
    format!("{head}{tail}")
}

#[test]
fn no_test_is_ignored_or_expects_a_panic() {
    // A test that is ignored never fails; a test that expects a panic passes on any panic.
    // Both hide regressions: assert the `Err` and its message instead (CONTRIBUTING.md).
    let rules = [spelled("#[ig", "nore"), spelled("#[should", "_panic")];
    let mut sources = rust_sources();
    sources.extend(rust_sources_below(&workspace_root().join("fuzz")));
    let offenders = offending_lines(&sources, &rules);
    assert!(offenders.is_empty(), "ignored or panic-expecting tests: {offenders:#?}");

    // Positive control: the same search finds the rule in a file that breaks it.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.rs");
    std::fs::write(&bad, format!("//! x\n{}]\n#[test]\nfn f() {{}}\n", rules[0])).unwrap();
    assert_eq!(offending_lines(&[bad], &rules).len(), 1);
}

/// `path:line: text` of every line of `sources` that contains one of `needles`.
fn offending_lines(sources: &[PathBuf], needles: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for path in sources {
        let text = std::fs::read_to_string(path).unwrap();
        for (index, line) in text.lines().enumerate() {
            if needles.iter().any(|needle| line.contains(needle.as_str())) {
                found.push(format!("{}:{}: {}", path.display(), index + 1, line.trim()));
            }
        }
    }
    found
}

/// The longest function body outside tests, in lines from `fn` to its closing brace.
const MAX_FUNCTION_LINES: usize = 80;

#[test]
fn no_function_outside_tests_is_longer_than_eighty_lines() {
    let root = workspace_root();
    let mut too_long = Vec::new();
    for path in library_sources() {
        let relative = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        for (name, line, length) in function_lengths(&std::fs::read_to_string(&path).unwrap()) {
            if length > MAX_FUNCTION_LINES {
                too_long.push(format!("{relative}:{line}: fn {name} is {length} lines"));
            }
        }
    }
    assert!(
        too_long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (split them by what they do): {too_long:#?}"
    );

    // Positive control: a long function is measured as long, a short one and a test one not.
    let body = "    let x = 1;\n".repeat(MAX_FUNCTION_LINES);
    let text = format!(
        "//! x\nfn long() {{\n{body}}}\n\nfn short() {{\n}}\n\n#[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{body}    }}\n}}\n"
    );
    let lengths = function_lengths(&text);
    assert_eq!(
        lengths,
        vec![("long".to_owned(), 2, MAX_FUNCTION_LINES + 2), ("short".to_owned(), 85, 2)]
    );
}

/// Helpers of the tests written out in more than one file today, by the names they have there:
/// each may go, none may join (CONTRIBUTING.md: a helper two crates need lives in
/// `atif-test-support`).
const DUPLICATED_TEST_HELPERS: [&[&str]; 0] = [];

/// The fewest lines (not blank, not comments) a helper's body has for a copy of it to count.
const MIN_DUPLICATE_LINES: usize = 4;

#[test]
fn no_test_helper_is_written_out_twice() {
    let root = workspace_root();
    let mut bodies: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in test_sources() {
        let relative = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        for (name, body) in helper_bodies(&std::fs::read_to_string(&path).unwrap()) {
            bodies.entry(body).or_default().insert(format!("{relative}: fn {name}"));
        }
    }
    let copies: Vec<Vec<String>> = bodies
        .into_values()
        .filter(|places| places.len() > 1)
        .map(|places| places.into_iter().collect())
        .filter(|places: &Vec<String>| {
            !DUPLICATED_TEST_HELPERS.iter().any(|allowed| {
                places.iter().all(|place| allowed.iter().any(|name| place.ends_with(name)))
            })
        })
        .collect();
    assert!(
        copies.is_empty(),
        "test helpers written out more than once (move one copy to atif-test-support and use \
         it everywhere): {copies:#?}"
    );

    // Positive control: the same body under two names is found, a test function and a short
    // helper are not.
    let text = "fn a() {\n    let x = 1;\n    let y = 2;\n    // why\n    x + y;\n    drop(x);\n}\n\n#[test]\nfn t() {\n    let x = 1;\n    let y = 2;\n    x + y;\n    drop(x);\n}\n\nfn short() {\n    1;\n}\n";
    let found = helper_bodies(text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "a");
    assert_eq!(helper_bodies(&text.replace("fn a()", "fn b(z: u8)"))[0].1, found[0].1);
}

/// The test sources: integration tests (`tests/` of each crate, and the `tests` package) and
/// the test support crate.
fn test_sources() -> Vec<PathBuf> {
    rust_sources()
        .into_iter()
        .filter(|path| {
            let text = path.to_string_lossy().replace('\\', "/");
            text.contains("/tests/") || text.contains("/atif-test-support/")
        })
        .collect()
}

/// `(name, body)` of every function in `text` that is not a `#[test]`, whose body has at least
/// [`MIN_DUPLICATE_LINES`] lines of code: the body is those lines, trimmed, so that the same
/// helper under another name or signature compares equal.
fn helper_bodies(text: &str) -> Vec<(String, String)> {
    let signature = regex::Regex::new(r"^(\s*)(?:pub(?:\([^)]*\))? )?(?:async )?fn (\w+)").unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(captures) = signature.captures(line) else { continue };
        let attribute = index.checked_sub(1).map(|before| lines[before].trim()).unwrap_or("");
        if attribute.starts_with("#[") && attribute.contains("test") {
            continue;
        }
        let closing = format!("{}}}", &captures[1]);
        let Some(last) = lines[index..].iter().position(|line| *line == closing) else { continue };
        let body: Vec<&str> = lines[index + 1..index + last]
            .iter()
            .map(|line| line.trim())
            .filter(|line| !line.is_empty() && !line.starts_with("//"))
            .collect();
        if body.len() >= MIN_DUPLICATE_LINES {
            found.push((captures[2].to_owned(), body.join("\n")));
        }
    }
    found
}

/// The library and binary sources: every `src/` below `crates/` and `xtask/`.
fn library_sources() -> Vec<PathBuf> {
    rust_sources()
        .into_iter()
        .filter(|path| {
            let text = path.to_string_lossy().replace('\\', "/");
            text.contains("/src/") && !text.contains("/tests/src/")
        })
        .collect()
}

/// `(name, line, length)` of every function before the file's `#[cfg(test)]` module, measured
/// from its `fn` line to the closing brace at the same indentation (rustfmt's layout).
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let signature =
        regex::Regex::new(r"^(\s*)(?:pub(?:\([^)]*\))? )?(?:async )?(?:const )?fn (\w+)").unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let end = lines.iter().position(|line| line.trim() == "#[cfg(test)]").unwrap_or(lines.len());
    let mut found = Vec::new();
    for (index, line) in lines[..end].iter().enumerate() {
        let Some(captures) = signature.captures(line) else { continue };
        if line.trim_end().ends_with(';') || line.trim_end().ends_with('}') {
            continue;
        }
        let closing = format!("{}}}", &captures[1]);
        let Some(last) = lines[index..].iter().position(|line| *line == closing) else { continue };
        found.push((captures[2].to_owned(), index + 1, last + 1));
    }
    found
}

#[test]
fn modules_inside_a_crate_do_not_depend_on_each_other_in_a_cycle() {
    let root = workspace_root();
    let mut cycles = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = entry.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        let krate = src.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        for cycle in module_cycles(&module_graph(&src)) {
            cycles.push((krate.clone(), cycle));
        }
    }
    cycles.sort();
    assert!(cycles.is_empty(), "module cycles (layer the modules instead): {cycles:#?}");

    // Positive control: two modules that use each other are a cycle; a parent and its child
    // are not.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "//! x\nmod a;\nmod b;\n").unwrap();
    std::fs::write(src.join("a/mod.rs"), "//! x\nmod c;\nuse crate::b::B;\n").unwrap();
    std::fs::write(src.join("a/c.rs"), "//! x\nuse crate::a::A;\n/// [`B`](crate::b::B)\n")
        .unwrap();
    std::fs::write(src.join("b.rs"), "//! x\nuse crate::{a::A, a::c};\n").unwrap();
    assert_eq!(module_cycles(&module_graph(src)), vec![vec!["a".to_owned(), "b".to_owned()]]);
}

/// Module path (`formats::gemini`) -> the modules of the same crate it names through `crate::`
/// outside its `#[cfg(test)]` part, leaving out its own ancestors and descendants.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let path = regex::Regex::new(r"crate::((?:\w+::)*\w+)").unwrap();
    let group = regex::Regex::new(r"crate::\{([^}]*)\}").unwrap();
    let mut named = BTreeMap::new();
    for file in rust_sources_below(src) {
        let relative = file.strip_prefix(src).unwrap().with_extension("");
        let mut parts: Vec<String> =
            relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
        if parts.last().is_some_and(|last| ["mod", "lib", "main"].contains(&last.as_str())) {
            parts.pop();
        }
        let text = std::fs::read_to_string(&file).unwrap();
        // Code only: a doc link (`[x](crate::x)`) is no dependency.
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or_default()
            .lines()
            .map(|line| format!("{}\n", line.split("//").next().unwrap_or_default()))
            .collect();
        let code = code.as_str();
        let mut uses: BTreeSet<String> =
            path.captures_iter(code).map(|captures| captures[1].to_owned()).collect();
        for captures in group.captures_iter(code) {
            uses.extend(captures[1].split(',').map(|item| item.trim().to_owned()));
        }
        named.insert(parts.join("::"), uses);
    }
    let modules: BTreeSet<String> = named.keys().cloned().collect();
    let related = |a: &str, b: &str| {
        a == b || a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"))
    };
    named
        .iter()
        .map(|(module, uses)| {
            let targets = uses
                .iter()
                .filter_map(|used| {
                    let segments: Vec<&str> = used.split("::").collect();
                    (1..=segments.len())
                        .rev()
                        .map(|count| segments[..count].join("::"))
                        .find(|candidate| modules.contains(candidate))
                })
                .filter(|target| !related(module, target))
                .collect();
            (module.clone(), targets)
        })
        .collect()
}

/// The strongly connected components of more than one module, each sorted, in sorted order.
fn module_cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reachable: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|module| (module, closure(graph, module))).collect();
    let mut cycles = BTreeSet::new();
    for (module, reached) in &reachable {
        let cycle: Vec<String> = reached
            .iter()
            .filter(|other| reachable.get(other).is_some_and(|back| back.contains(*module)))
            .cloned()
            .collect();
        if cycle.len() > 1 {
            cycles.insert(cycle);
        }
    }
    cycles.into_iter().collect()
}

#[test]
fn ci_finds_the_build_folder_where_cargo_puts_it() {
    let root = workspace_root();
    let target_dir = |shared: Option<&Path>| {
        let mut command = Command::new(root.join(".ci/target-dir"));
        match shared {
            Some(dir) => command.env("CARGO_TARGET_DIR", dir),
            None => command.env_remove("CARGO_TARGET_DIR"),
        };
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    let shared = tempfile::tempdir().unwrap();
    assert_eq!(target_dir(Some(shared.path())), format!("{}\n", shared.path().display()));
    assert_ne!(target_dir(None), format!("{}\n", shared.path().display()), "a positive control");
    // .ci/run names every build product through that folder, never through ./target.
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    for (idx, line) in ci.lines().enumerate() {
        let code = line.split('#').next().unwrap_or_default();
        assert!(!code.contains("target/"), ".ci/run line {}: {line}", idx + 1);
    }
}

#[test]
fn ci_checks_every_library_alone_with_the_declared_minimum_rust() {
    let root = workspace_root();
    let libraries: BTreeSet<String> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|dir| dir.join("src/lib.rs").is_file())
        .map(|dir| dir.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(libraries.contains("atif-schema") && libraries.len() > 5, "{libraries:?}");
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert_eq!(
        msrv_checked_crates(&ci),
        libraries,
        ".ci/run's loop of `cargo \"+$msrv\" check -p \"$crate\" --lib --no-default-features` \
         must name every crate under crates/ that has a lib.rs"
    );
    // A positive control: a loop that leaves a library out is caught.
    let without_view = ci.replacen(" atif-view", "", 1);
    assert_ne!(msrv_checked_crates(&without_view), libraries);
}

/// The crates of `.ci/run`'s `for crate in ...; do` loop whose body checks one crate alone with
/// the minimum Rust and no optional feature.
fn msrv_checked_crates(ci: &str) -> BTreeSet<String> {
    let ci = ci.replace("\\\n", " ");
    let lines: Vec<&str> = ci.lines().collect();
    let check = lines
        .iter()
        .position(|line| {
            line.contains("\"+$msrv\" check") && line.contains("--no-default-features")
        })
        .expect(".ci/run checks each library alone with the minimum Rust");
    let header = lines[..check]
        .iter()
        .rev()
        .find_map(|line| line.trim().strip_prefix("for crate in "))
        .expect("the check runs in a `for crate in ...; do` loop");
    header.trim_end_matches("; do").split_whitespace().map(str::to_owned).collect()
}

#[test]
fn what_a_user_makes_beside_the_sources_is_ignored_and_never_committed() {
    // docs/python.md's `.venv`, an import's media folder (`run.json.media/`), pending goldens
    // and the build folder: git ignores each, so none is committed by accident.
    let root = workspace_root();
    let ignored = |path: &str| {
        let output = Command::new("git")
            .args(["check-ignore", "--no-index", "--quiet", path])
            .current_dir(&root)
            .output()
            .unwrap();
        // 0: ignored, 1: not ignored; anything else is git failing.
        assert!(output.status.code().is_some_and(|code| code < 2), "{output:?}");
        output.status.success()
    };
    for path in [".venv/bin/python", "run-1.json.media/image-1.png", "g.json.new", "target/x"] {
        assert!(ignored(path), "git does not ignore {path}: add it to .gitignore");
    }
    assert!(!ignored("docs/golden.md"), "a positive control");
    let listed = Command::new("git").args(["ls-files"]).current_dir(&root).output().unwrap();
    assert!(listed.status.success());
    let committed: Vec<&str> = std::str::from_utf8(&listed.stdout)
        .unwrap()
        .lines()
        .filter(|path| path.contains(".media/") || path.ends_with(".json.new"))
        .collect();
    assert!(committed.is_empty(), "by-products of tests are committed: {committed:?}");
}

#[test]
fn no_let_chain_raises_the_declared_minimum_rust_version() {
    // The workspace declares rust-version 1.86, which `.ci/run` builds with; this says it
    // sooner, under `cargo test` on a newer compiler. Let chains (`if let … && …`, stable in
    // 1.88) are the syntax edition 2024 accepts there and 1.86 refuses.
    let mut sources = rust_sources();
    sources.extend(rust_sources_below(&workspace_root().join("fuzz")));
    let chains: Vec<String> = sources
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let_chains(&text).into_iter().map(move |line| format!("{}:{line}", path.display()))
        })
        .collect();
    assert!(chains.is_empty(), "let chains need Rust 1.88 (rust-version is 1.86): {chains:#?}");

    // Positive control: both layouts rustfmt gives a let chain are found, a plain `if let` not.
    let text = "if let Some(a) = b && c {\n}\nif let Some(a) = b\n    && let Some(c) = d\n{\n}\nif let Some(a) = b {\n}\n";
    assert_eq!(let_chains(text), vec![1, 4]);
}

/// The lines (1-based) of `text` that continue or hold a let chain.
fn let_chains(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let code = line.split("//").next().unwrap_or_default().trim();
        let in_if_let = code.starts_with("if let ") || code.starts_with("} else if let ");
        let one_line = in_if_let && code.contains(" && ");
        let continued = code.starts_with("&& let ")
            || (code.starts_with("&& ")
                && index > 0
                && lines[index - 1].trim_start().starts_with("if let "));
        if one_line || continued {
            found.push(index + 1);
        }
    }
    found
}
