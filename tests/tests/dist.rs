//! `cargo xtask dist` and what it builds, installed as users install it: the wheel in a fresh
//! venv with no cargo on `PATH`, the binary tarball unpacked anywhere, and the npm packages from
//! their tarballs into a fresh project, where the package's own vitest suite (`js/test`, with
//! the pinned SDKs, vitest and jest of `cargo xtask e2e-setup`) runs. Here too, since it needs
//! the wheel: a newcomer's whole path, from a clone to a green Rust test and a green pytest
//! test.
//!
//! The artefacts are built once per run of this file, with `--profile dev` (a release build
//! costs minutes), into a temporary folder.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]
#![allow(clippy::print_stderr, reason = "the test reports the times it measured")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

use atif_fake_provider::{Config, FakeProvider};
use atif_test_support::{describe, stderr, stdout, workspace_path, workspace_root};
use tests::e2e;

/// The folder `cargo xtask dist --profile dev --out DIR` filled, built at the first call.
fn dist() -> &'static Path {
    static DIST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_keep, dir) = DIST.get_or_init(|| {
        let temp = tempfile::tempdir().unwrap();
        let out = temp.path().join("dist");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let started = Instant::now();
        let output = Command::new(cargo)
            .args([
                "run",
                "-q",
                "--locked",
                "-p",
                "xtask",
                "--",
                "dist",
                "--profile",
                "dev",
                "--out",
            ])
            .arg(&out)
            .current_dir(workspace_root())
            .output()
            .unwrap();
        assert!(output.status.success(), "cargo xtask dist failed:\n{}", describe(&output));
        eprintln!("cargo xtask dist --profile dev took {:.1} s", started.elapsed().as_secs_f64());
        (temp, out)
    });
    dir
}

/// The one file in `dir` whose name starts with `prefix` and ends with `suffix`.
fn artefact(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    assert_eq!(found.len(), 1, "one {prefix}*{suffix} in {}: {found:?}", dir.display());
    found.into_iter().next().unwrap()
}

/// A `PATH` of the system's folders only: no cargo, no rustc, no e2e cache.
const SYSTEM_PATH: &str = "/usr/bin:/bin";

/// The README's Rust test.
const TEST: &str = "calculator_adds_with_one_tool_call";

fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{command:?} failed:\n{}", describe(&output));
    output
}

#[test]
fn the_wheel_installs_and_runs_in_a_venv_without_cargo() {
    let Some(python) = e2e::python() else { return };
    let wheel = artefact(dist(), "atif-", ".whl");
    let temp = tempfile::tempdir().unwrap();
    let venv = temp.path().join("venv");
    run(Command::new(&python).arg("-m").arg("venv").arg(&venv));
    let path = format!("{}:{SYSTEM_PATH}", venv.join("bin").display());
    // The positive control: this PATH really has no cargo on it.
    let cargo = Command::new("sh").args(["-c", "command -v cargo"]).env("PATH", &path).output();
    assert!(!cargo.unwrap().status.success(), "cargo is on {path}");

    let started = Instant::now();
    run(Command::new(venv.join("bin").join("pip"))
        .args(["install", "--quiet", "--disable-pip-version-check", "--no-index", "--no-deps"])
        .arg(&wheel)
        .env("PATH", &path));
    eprintln!("pip install of the built wheel took {:.1} s", started.elapsed().as_secs_f64());

    let version = run(Command::new("atif").arg("--version").env("PATH", &path));
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), "atif 0.1.0");
    let example = workspace_path("examples/calculator-run.json");
    let valid = run(Command::new("atif").arg("validate").arg(&example).env("PATH", &path));
    assert!(String::from_utf8_lossy(&valid.stdout).contains("valid (ATIF-v1.7, 5 steps"));
    // The plugin finds the binary the wheel put beside this Python.
    let found = run(Command::new(venv.join("bin").join("python"))
        .args(["-c", "from atif_pytest._binary import find_atif; print(find_atif())"])
        .env("PATH", SYSTEM_PATH));
    assert_eq!(
        PathBuf::from(String::from_utf8_lossy(&found.stdout).trim()),
        venv.join("bin").join("atif")
    );
}

#[test]
fn the_binary_tarball_runs_where_it_is_unpacked() {
    if e2e::python().is_none() {
        return;
    }
    let tarball = artefact(dist(), "atif-0.1.0-", ".tar.gz");
    let temp = tempfile::tempdir().unwrap();
    run(Command::new("tar").arg("-xzf").arg(&tarball).arg("-C").arg(temp.path()));
    let name = tarball.file_name().unwrap().to_string_lossy().replace(".tar.gz", "");
    let binary = temp.path().join(&name).join("atif");
    assert!(temp.path().join(&name).join("README.md").is_file());
    let version = run(Command::new(&binary).arg("--version").env("PATH", SYSTEM_PATH));
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), "atif 0.1.0");
    let shape = run(Command::new(&binary)
        .arg("shape")
        .arg(workspace_path("examples/calculator-run.json"))
        .env("PATH", SYSTEM_PATH));
    assert!(String::from_utf8_lossy(&shape.stdout).contains("llm_calls: 3"));
}

/// The pinned runners and SDKs, or `None` after a skip notice.
fn typescript_packages() -> Option<PathBuf> {
    e2e::cached(
        "typescript/node_modules/vitest",
        "the TypeScript test packages (vitest, jest, SDKs)",
    )?;
    Some(e2e::cache_dir().join("typescript").join("node_modules"))
}

#[test]
fn the_npm_packages_install_from_their_tarballs_and_their_suite_passes() {
    let Some(packages) = typescript_packages() else { return };
    if e2e::python().is_none() {
        return;
    }
    let dist = dist();
    let temp = tempfile::tempdir().unwrap();
    // The project resolves `atif` from its own node_modules and the runners and SDKs from the
    // folder above it, as Node looks upward.
    std::os::unix::fs::symlink(&packages, temp.path().join("node_modules")).unwrap();
    let project = temp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join("package.json"),
        r#"{"name": "fresh-project", "private": true, "type": "module"}"#,
    )
    .unwrap();
    let started = Instant::now();
    run(Command::new("npm")
        .args(["install", "--offline", "--no-audit", "--no-fund"])
        .arg(artefact(dist, "atif-cli-", ".tgz"))
        .arg(artefact(dist, "atif-0.1.0", ".tgz"))
        .current_dir(&project));
    eprintln!("npm install of the two tarballs took {:.1} s", started.elapsed().as_secs_f64());
    let bin = project.join("node_modules").join(".bin").join("atif");
    let version = run(Command::new(&bin).arg("--version"));
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), "atif 0.1.0");

    copy_dir(&workspace_path("js/test"), &project.join("test"));
    // The page whose TypeScript blocks `js/test/docs.test.js` runs.
    std::fs::create_dir(project.join("docs")).unwrap();
    std::fs::copy(workspace_path("docs/typescript.md"), project.join("docs/typescript.md"))
        .unwrap();
    let fake = workspace_root().join("target").join("debug").join("atif-fake-provider");
    let fake = std::env::var_os("ATIF_FAKE_PROVIDER").map_or(fake, PathBuf::from);
    let started = Instant::now();
    let suite = Command::new("node")
        .arg(packages.join("vitest").join("vitest.mjs"))
        .args(["run", "test", "--testTimeout", "120000"])
        .current_dir(&project)
        .env("ATIF_FAKE_PROVIDER", &fake)
        .env("NO_COLOR", "1")
        .env_remove("ATIF_BIN")
        .env_remove("CI")
        .output()
        .unwrap();
    eprintln!("the package's vitest suite took {:.1} s", started.elapsed().as_secs_f64());
    // vitest exits 1 when it collects no test, so a suite gone missing fails here too.
    assert!(suite.status.success(), "the package's vitest suite failed:\n{}", describe(&suite));
    let said = String::from_utf8_lossy(&suite.stdout);
    assert!(said.contains(" passed"), "{said}");
    assert!(!said.contains("skipped"), "{said}");
}

/// A newcomer's path, end to end, as one test: from a clone to a green Rust golden test (the
/// README), then to a green pytest golden test from the built wheel (docs/python.md's five
/// minutes), in a fresh venv with no cargo on `PATH`.
#[test]
fn a_newcomer_gets_from_a_clone_to_a_green_rust_test_and_a_green_pytest_test() {
    the_readme_rust_test_goes_from_nothing_to_green_offline();
    let Some(python) = e2e::python() else { return };
    the_python_walk_through_goes_from_pip_install_to_a_recorded_green_test(&python);
}

/// The Rust half of the newcomer's path: a new crate with the README's `Cargo.toml` lines and
/// its `tests/calculator.rs`, depending on this checkout's libraries by path, gets from no
/// script and no golden to a green golden test with `cargo test --offline`, the live model being
/// the fake provider reached through the `OPENAI_BASE_URL` the README's `live_model()` reads.
/// The crate reuses the workspace's `Cargo.lock` and one build folder, `target/newcomer`, so
/// only the first run compiles the dependencies.
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

/// The pytest half: docs/python.md's five minutes, from the built wheel. The wheel and the
/// pinned `openai` and `pytest` install into a fresh venv; the examples' committed scripts
/// replay green; the page's test, as the user's own, records its script and golden once against
/// the model (the fake provider, through `--atif-upstream`), then replays green on CI with the
/// model gone.
fn the_python_walk_through_goes_from_pip_install_to_a_recorded_green_test(python: &Path) {
    let temp = tempfile::tempdir().unwrap();
    let venv = temp.path().join("venv");
    run(Command::new(python).arg("-m").arg("venv").arg(&venv));
    let path = format!("{}:{SYSTEM_PATH}", venv.join("bin").display());
    let requirements =
        std::fs::read_to_string(workspace_path("tests/e2e/requirements.txt")).unwrap();
    let pins: Vec<&str> = requirements
        .lines()
        .filter(|line| {
            ["openai==", "anthropic==", "pytest=="].iter().any(|pin| line.starts_with(pin))
        })
        .collect();
    assert_eq!(pins.len(), 3, "tests/e2e/requirements.txt pins openai, anthropic and pytest");
    run(Command::new(venv.join("bin").join("pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .arg(artefact(dist(), "atif-", ".whl"))
        .args(&pins)
        .env("PATH", &path));

    let project = temp.path().join("examples");
    copy_dir(&workspace_path("python/examples"), &project);
    let pytest = |args: &[&str], vars: &[(&str, &str)]| {
        let mut command = Command::new(venv.join("bin").join("python"));
        command
            .args(["-m", "pytest", "-p", "no:cacheprovider", "-q"])
            .args(args)
            .current_dir(&project)
            .env("PATH", &path);
        for name in ["CI", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ATIF_GOLDEN", "ATIF_BIN"] {
            command.env_remove(name);
        }
        command.envs(vars.iter().copied()).output().unwrap()
    };

    // 2. The examples' tests replay their committed scripts, offline.
    let examples = pytest(&[], &[]);
    assert!(examples.status.success(), "{}", describe(&examples));
    assert!(
        String::from_utf8_lossy(&examples.stdout).contains("2 passed"),
        "{}",
        describe(&examples)
    );

    // 3. The page's test, as the user's own, recorded once against the model.
    let docs = std::fs::read_to_string(workspace_path("docs/python.md")).unwrap();
    let test = fenced(&docs, "python").into_iter().next().expect("docs/python.md has a test");
    std::fs::write(project.join("tests/test_my_agent.py"), test).unwrap();
    let mut config = Config::default();
    config.set_command("echo $((17 * 23 + 4))");
    let provider = FakeProvider::start(config).unwrap();
    let upstream = provider.url().to_string();
    let record = ["--atif-record", "--atif-update", "--atif-upstream", upstream.as_str()];
    let recorded = pytest(
        &[&record[..], &["tests/test_my_agent.py"]].concat(),
        &[("OPENAI_API_KEY", "sk-test-not-secret")],
    );
    assert!(recorded.status.success(), "{}", describe(&recorded));
    let name = "test_my_agent__test_calculator_answers_with_one_shell_call.json";
    let script = std::fs::read_to_string(project.join("tests/scripts").join(name)).unwrap();
    assert!(!script.contains("sk-test-not-secret"), "the key is forwarded, never saved");
    assert!(project.join("tests/golden").join(name).is_file(), "{}", describe(&recorded));
    assert_eq!(provider.request_count(), 2, "the shell call, then the answer");
    provider.stop();

    // 4. From then on pytest replays, on CI, with the model gone and no key.
    let replayed = pytest(&["tests/test_my_agent.py"], &[("CI", "true")]);
    assert!(replayed.status.success(), "{}", describe(&replayed));
    assert!(
        String::from_utf8_lossy(&replayed.stdout).contains("1 passed"),
        "{}",
        describe(&replayed)
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
        .env_remove("ATIF_GOLDEN_LOG")
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

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
