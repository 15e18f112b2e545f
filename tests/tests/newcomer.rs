//! A newcomer's Rust path through the README, end to end: a new crate with the README's
//! `Cargo.toml` lines and its `tests/calculator.rs`, depending on this checkout's libraries by
//! path, gets from no script and no golden to a green golden test with `cargo test --offline`.
//!
//! The live model is the workspace's fake provider on 127.0.0.1, reached through the
//! `OPENAI_BASE_URL` the README's `live_model()` reads. The crate reuses the workspace's
//! `Cargo.lock` (so no version is resolved anew) and one build folder under the workspace's
//! `target/` (`target/newcomer`), so only the first run compiles the dependencies.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use atif_fake_provider::{Config, FakeProvider};
use atif_test_support::{describe, stderr, stdout, workspace_root};

const TEST: &str = "calculator_adds_with_one_tool_call";

#[test]
fn the_readme_rust_test_goes_from_nothing_to_green_offline() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("my-agent");
    write_crate(&krate, &readme);
    let provider = FakeProvider::start(Config::default()).unwrap();
    let base_url = format!("{}/v1", provider.url());

    // 1. The first run records the script through the live model and fails on the missing
    //    golden, naming the command that records it.
    let first = cargo_test(&krate, &[("OPENAI_BASE_URL", &base_url)]);
    assert_eq!(first.status.code(), Some(101), "{}", describe(&first));
    let text = format!("{}{}", stdout(&first), stderr(&first));
    assert!(
        text.contains(&format!("record it with: ATIF_GOLDEN=update cargo test -p my-agent {TEST}")),
        "{text}"
    );
    assert!(
        text.contains("atif-replay: recorded 2 model calls to tests/scripts/calculator.json"),
        "{text}"
    );
    assert!(krate.join("tests/scripts/calculator.json").is_file());
    assert_eq!(provider.request_count(), 2, "the fake called `add`, then quoted its result");

    // 2. Recording the golden replays the script: the model is not asked again.
    let update = cargo_test(&krate, &[("ATIF_GOLDEN", "update")]);
    assert_eq!(update.status.code(), Some(0), "{}", describe(&update));
    let golden = krate.join(format!("tests/golden/calculator__{TEST}.json"));
    assert!(golden.is_file(), "{}", describe(&update));
    let golden_text = std::fs::read_to_string(&golden).unwrap();
    assert!(golden_text.contains("\"function_name\": \"add\""), "{golden_text}");
    assert_eq!(provider.request_count(), 2);
    provider.stop();

    // 3. On CI, with the model gone, the test replays and passes.
    let on_ci = cargo_test(&krate, &[("CI", "true")]);
    assert_eq!(on_ci.status.code(), Some(0), "{}", describe(&on_ci));

    // 4. On CI a missing script fails, naming the file and the command that records it.
    std::fs::remove_file(krate.join("tests/scripts/calculator.json")).unwrap();
    let missing = cargo_test(&krate, &[("CI", "true")]);
    assert_eq!(missing.status.code(), Some(101), "{}", describe(&missing));
    let text = format!("{}{}", stdout(&missing), stderr(&missing));
    assert!(
        text.contains(&format!(
            "no replay script tests/scripts/calculator.json: the record mode is `none` (on CI, \
             where nothing is recorded), so it is replayed and never recorded; record it where \
             the live model is reachable with: ATIF_RECORD=1 cargo test -p my-agent {TEST}"
        )),
        "{text}"
    );
}

/// The crate: the README's `[dev-dependencies]` with `../atif` meaning this checkout, and the
/// README's Rust code as `tests/calculator.rs`.
fn write_crate(krate: &Path, readme: &str) {
    let toml = fenced(readme, "toml");
    let rust = fenced(readme, "rust");
    assert_eq!((toml.len(), rust.len()), (1, 1), "the README has one toml and one rust block");
    let root = workspace_root();
    let dependencies = toml[0].replace("../atif", root.to_str().unwrap());
    let manifest = format!(
        "[package]\nname = \"my-agent\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
         publish = false\n\n{dependencies}\n[workspace]\n"
    );
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::create_dir_all(krate.join("tests")).unwrap();
    std::fs::write(krate.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(krate.join("src/lib.rs"), "//! My agent.\n").unwrap();
    std::fs::write(krate.join("tests/calculator.rs"), &rust[0]).unwrap();
    std::fs::copy(root.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
}

/// The bodies of the fenced blocks of `text` whose info string is exactly `info`.
fn fenced(text: &str, info: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.strip_prefix("```") == Some(info) {
            let body: Vec<&str> = lines.by_ref().take_while(|line| *line != "```").collect();
            blocks.push(body.join("\n") + "\n");
        }
    }
    blocks
}

/// `cargo test --offline` in `krate` with `vars` set and every variable that would change the
/// modes removed.
fn cargo_test(krate: &Path, vars: &[(&str, &str)]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        .args(["test", "--offline", "--quiet"])
        .current_dir(krate)
        .env("CARGO_TARGET_DIR", build_folder())
        // No debug info and no incremental cache: a quarter of the disk, and faster.
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env("CARGO_INCREMENTAL", "0")
        .env("OPENAI_API_KEY", "test-key-not-secret")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("CI")
        .env_remove("ATIF_RECORD")
        .env_remove("ATIF_GOLDEN")
        .env_remove("ATIF_GOLDEN_REPORT")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_MANIFEST_DIR");
    for (name, value) in vars {
        command.env(name, value);
    }
    command.output().expect("cargo runs")
}

/// `target/newcomer` beside the folder this test was built in: kept between runs, and apart
/// from the build folder the running `cargo test` holds locked.
fn build_folder() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test> -> target
    let target = exe.ancestors().nth(3).unwrap();
    target.join("newcomer")
}
