//! Every Rust snippet of docs/*.md compiles and runs, as written, against this checkout's
//! libraries.
//!
//! A snippet is a fragment of a user's test: it names things the page leaves to the reader (the
//! agent `my_agent`, a `task`, the `options` of the capture). [`CONTEXT`] declares those, per
//! page, as working code (the reference agents of `tests/src/lib.rs` and their deterministic
//! model, or one request to the model over HTTP); the snippet itself is copied as written into
//! a crate that depends on the libraries by path (like the newcomer's in `dist.rs`, sharing
//! its build folder). Items (`use`, `fn`, `#[test]`) are a module; statements are the body of a
//! `#[tokio::test]` returning `Result<(), Box<dyn Error + Send + Sync>>`, after `let options`
//! and `let task`.
//!
//! The crate then runs as a user's would. The live model of the snippets that record is the
//! workspace's fake provider on 127.0.0.1, reached through the variables the pages read
//! (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, and the keys); the files the pages say the user
//! has are put in place first ([`FILES`], and the proxy script that the crate's example
//! `record_agent` records as docs/replay.md's "From the command line" would). The first
//! `cargo test` records the scripts and writes the goldens (`ATIF_GOLDEN=update`); the second
//! runs on CI (`CI=true`; `ATIF_LIVE=1` for the live envelope) and passes on what the first
//! wrote. Each snippet is one test of its own, and each must pass in both runs.
//!
//! The README's test runs in `dist.rs` (the newcomer's path), and docs/golden-in-your-crate.md's in
//! `your_crate.rs`. A snippet that shows a declaration of ours rather than a use of it (the
//! `LlmClient` trait) cannot run; it is held to the source instead: each of its lines is a line
//! of the file given in [`DECLARATIONS`].
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

use atif_fake_provider::{Config, FakeProvider};
use atif_test_support::{describe, stdout, workspace_root};

/// What each page leaves to the reader, declared for its snippets: working code, so that the
/// snippets that call it run for real.
const CONTEXT: &[(&str, &str)] = &[
    (
        "docs/golden.md",
        "pub fn run_my_agent() -> serde_json::Value { super::calculator_run().0 }\n\
         pub fn run_against_live_model() -> serde_json::Value { super::calculator_run().0 }\n",
    ),
    (
        "docs/live.md",
        "pub fn run_my_agent() -> (serde_json::Value, bool) { super::calculator_run() }\n",
    ),
    (
        "docs/replay.md",
        "pub async fn my_agent(handle: CaptureHandle, task: &'static str) -> Result<String, LlmError> {\n\
         \x20   handle.client().complete(LlmRequest::new(vec![Message::user(task)])).await.map(|reply| reply.text())\n\
         }\n\
         /// The adapter of the page's example: the deterministic calculator model of the\n\
         /// reference agents, which recorded the committed tool_loop_3_turns script.\n\
         pub struct MyProviderClient;\n\
         impl MyProviderClient {\n\
         \x20   pub fn from_env() -> Result<FakeClient, LlmError> { Ok(tests::calculator_model(3)) }\n\
         }\n\
         /// An agent that takes only a base URL: one OpenAI Chat Completions request.\n\
         pub async fn run_my_agent(base_url: &str) -> Result<(), LlmError> {\n\
         \x20   let client = HttpClient::openai_chat(base_url, \"sk-test-not-secret\")?.with_model(\"fake-model\");\n\
         \x20   client.complete(LlmRequest::new(vec![Message::user(\"What is 2 + 2?\")])).await?;\n\
         \x20   Ok(())\n\
         }\n",
    ),
];

/// The shared part of the generated crate: the run the pages' `run_my_agent` stands for, the
/// reference calculator agent on its deterministic model, captured on a runtime of its own so
/// that sync tests and async ones can both call it.
const SHARED: &str = "pub fn calculator_run() -> (serde_json::Value, bool) {\n\
     \x20   std::thread::spawn(|| {\n\
     \x20       let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();\n\
     \x20       runtime.block_on(async {\n\
     \x20           let model = Arc::new(tests::calculator_model(3));\n\
     \x20           let options = CaptureOptions::new(\"calculator-loop\", \"1.0.0\");\n\
     \x20           let run = capture(model, &options, |handle| {\n\
     \x20               tool_loop_agent(handle, \"What is (2 + 3) * 4?\".to_owned(), ToolLoopOptions::default())\n\
     \x20           }).await;\n\
     \x20           (serde_json::to_value(&run.trajectory).unwrap(), run.result.is_ok())\n\
     \x20       })\n\
     \x20   }).join().unwrap()\n\
     }\n";

/// Files the pages say the user has: the page, the file in the crate, its source here.
const FILES: &[(&str, &str, &str)] = &[
    (
        "docs/replay.md",
        "tests/scripts/tool_loop_3_turns.script.json",
        "tests/scripts/tool_loop_3_turns.script.json",
    ),
    ("docs/config.md", "atif.toml", "docs/config.md"),
];

/// The crate's example that records docs/replay.md's proxy script, `tests/scripts/agent.script.json`,
/// from the page's `run_my_agent` through a recording server in front of `OPENAI_BASE_URL`.
const RECORD_AGENT: &str = "//! Records tests/scripts/agent.script.json for docs/replay.md's proxy snippet.\n\
     #[tokio::main(flavor = \"current_thread\")]\n\
     async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {\n\
     \x20   let base = std::env::var(\"OPENAI_BASE_URL\")?;\n\
     \x20   let mut options = atif_proxy::Options::record(\"tests/scripts/agent.script.json\");\n\
     \x20   options.set_upstream(base.trim_end_matches(\"/v1\"));\n\
     \x20   let proxy = atif_proxy::start(&options).await?;\n\
     \x20   doc_snippets::context_replay::run_my_agent(&format!(\"{}/v1\", proxy.url())).await?;\n\
     \x20   proxy.finish().await?;\n\
     \x20   Ok(())\n\
     }\n";

/// Snippets that show one of our declarations: the page, the snippet's first line, and the
/// source file that must hold each of its lines.
const DECLARATIONS: &[(&str, &str, &str)] =
    &[("docs/replay.md", "#[async_trait]", "crates/atif-replay/src/client.rs")];

/// Pages whose Rust code runs elsewhere (see the module docs).
const RUN_ELSEWHERE: &[&str] = &["docs/golden-in-your-crate.md"];

#[test]
fn every_rust_snippet_in_the_docs_compiles_and_runs() {
    let (code, tests) = generated_code();
    assert!(tests.len() >= 9, "only {} snippets found: {tests:?}", tests.len());
    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("doc-snippets");
    write_crate(&krate, &code);
    let provider = FakeProvider::start(Config::default()).unwrap();
    let openai = format!("{}/v1", provider.url());
    let live = [("OPENAI_BASE_URL", openai.as_str()), ("ANTHROPIC_BASE_URL", provider.url())];

    let recorded = cargo(&krate, &["run", "--example", "record_agent"], &live);
    assert_ran(&recorded, &[], &code);
    assert!(krate.join("tests/scripts/agent.script.json").is_file());
    assert_eq!(provider.request_count(), 1, "the proxy script's one request");

    // 1. Locally: the scripts are recorded from the live model, the goldens written.
    let vars = [live.as_slice(), &[("ATIF_GOLDEN", "update")]].concat();
    let first = cargo(&krate, &["test", "--", "--test-threads=1"], &vars);
    assert_ran(&first, &tests, &code);
    for file in ["tests/scripts/calculator.json", "tests/scripts/my_agent.script.json"] {
        assert!(krate.join(file).is_file(), "{file} was not recorded:\n{}", describe(&first));
    }
    let goldens = std::fs::read_dir(krate.join("tests/golden")).unwrap().count();
    assert!(goldens >= 4, "{goldens} goldens written:\n{}", describe(&first));
    let after_recording = provider.request_count();
    assert!(after_recording >= 3, "the snippets that record asked the fake provider");

    // 2. On CI: the scripts replay and every golden matches what the first run wrote.
    let vars = [live.as_slice(), &[("CI", "true"), ("ATIF_LIVE", "1")]].concat();
    let on_ci = cargo(&krate, &["test", "--", "--test-threads=1"], &vars);
    assert_ran(&on_ci, &tests, &code);
}

/// The generated `src/lib.rs` and the names of the tests its snippets became, each with its
/// page and line.
fn generated_code() -> (String, Vec<(String, String)>) {
    let root = workspace_root();
    let mut code = String::from(
        "#![allow(unused, non_snake_case, clippy::all)]\n\
         pub use std::error::Error;\npub use std::sync::Arc;\n\
         pub use atif_replay::*;\npub use serde_json::{json, Value};\n\
         pub use tests::{ToolLoopOptions, tool_loop_agent};\n",
    );
    code.push_str(SHARED);
    let mut tests = Vec::new();
    for page in doc_pages() {
        if RUN_ELSEWHERE.contains(&page.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(root.join(&page)).unwrap();
        let module = page.trim_start_matches("docs/").trim_end_matches(".md").replace('-', "_");
        let context = CONTEXT.iter().find(|(on, _)| *on == page).map_or("", |(_, code)| code);
        let _ = writeln!(code, "pub mod context_{module} {{\n    use super::*;\n{context}}}");
        for (line, snippet) in rust_blocks(&text) {
            if let Some((_, _, source)) = DECLARATIONS
                .iter()
                .find(|(on, first, _)| *on == page && snippet.lines().next() == Some(*first))
            {
                assert_declared(&page, line, &snippet, &root.join(source));
                continue;
            }
            let name = format!("{module}_line_{line}");
            let Some(test) = test_name(&snippet) else {
                panic!("{page}:{line} is neither statements nor a #[test]: it would not run");
            };
            tests.push((format!("{name}::{test}"), format!("{page}:{line}")));
            let _ = writeln!(
                code,
                "// {page}:{line}\nmod {name} {{\n    use super::*;\n    use super::context_{module}::*;\n{}}}",
                wrap(&snippet)
            );
        }
    }
    (code, tests)
}

/// The test a snippet becomes: its own `#[test]` function, or `snippet` for statements.
fn test_name(snippet: &str) -> Option<String> {
    if !is_items(snippet) {
        return Some("snippet".to_owned());
    }
    let mut lines = snippet.lines().skip_while(|line| !line.trim_start().starts_with("#[test]"));
    lines.next()?;
    let signature = lines.find(|line| line.contains("fn "))?;
    let name = signature.split("fn ").nth(1)?.split('(').next()?;
    Some(name.trim().to_owned())
}

/// The crate: the libraries by path, the snippets as `src/lib.rs`, the files the pages name,
/// and the example that records the proxy script.
fn write_crate(krate: &Path, code: &str) {
    let root = workspace_root();
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::create_dir_all(krate.join("examples")).unwrap();
    let manifest = format!(
        "[package]\nname = \"doc-snippets\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n\
         atif-golden = {{ path = \"{root}/crates/atif-golden\" }}\n\
         atif-proxy = {{ path = \"{root}/crates/atif-proxy\" }}\n\
         atif-replay = {{ path = \"{root}/crates/atif-replay\", features = [\"http\"] }}\n\
         serde_json = \"1\"\n\
         tests = {{ path = \"{root}/tests\" }}\n\
         tokio = {{ version = \"1\", features = [\"macros\", \"rt\"] }}\n\n[workspace]\n",
        root = root.display()
    );
    std::fs::write(krate.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(krate.join("src/lib.rs"), code).unwrap();
    std::fs::write(krate.join("examples/record_agent.rs"), RECORD_AGENT).unwrap();
    std::fs::copy(root.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    for (page, file, source) in FILES {
        let target = krate.join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        let text = std::fs::read_to_string(root.join(source)).unwrap();
        // A page given as the source holds the file as its first TOML block.
        let text = match source.ends_with(".md") {
            true => fenced_toml(&text).unwrap_or_else(|| panic!("{page} has no toml block")),
            false => text,
        };
        std::fs::write(target, text).unwrap();
    }
}

/// The first ```` ```toml ```` block of a page.
fn fenced_toml(page: &str) -> Option<String> {
    let (_, rest) = page.split_once("```toml\n")?;
    let (body, _) = rest.split_once("```\n")?;
    Some(body.to_owned())
}

/// `cargo ARGS` in `krate` with `vars` set and every variable that would change the modes
/// removed, as the newcomer test runs it.
fn cargo(krate: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        // Not `--quiet`: it would make the tests print dots instead of their names.
        .args(&args[..1])
        .arg("--offline")
        .args(&args[1..])
        .current_dir(krate)
        .env("CARGO_TARGET_DIR", build_folder())
        // No debug info and no incremental cache: a quarter of the disk, and faster.
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env("CARGO_INCREMENTAL", "0")
        .env("OPENAI_API_KEY", "sk-test-not-secret")
        .env("ANTHROPIC_API_KEY", "sk-ant-test-not-secret")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("CI")
        .env_remove("ATIF_LIVE")
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

/// Fails unless the run succeeded and each test of `tests` passed in it.
fn assert_ran(output: &Output, tests: &[(String, String)], code: &str) {
    assert!(
        output.status.success(),
        "a Rust snippet of the docs failed (tests by page and line: {tests:?}):\n{}\n\
         --- the generated src/lib.rs:\n{}",
        describe(output),
        numbered(code)
    );
    let text = stdout(output);
    for (test, place) in tests {
        assert!(
            text.contains(&format!("test {test} ... ok")),
            "{place} ({test}) did not run:\n{text}"
        );
    }
}

#[test]
fn a_snippet_is_wrapped_as_items_or_as_statements() {
    assert!(wrap("use std::sync::Arc;\n#[test]\nfn a() {}\n").starts_with("use std::sync::Arc;"));
    let body = wrap("let a = 1;\nsomething()?;\n");
    assert!(body.contains(
        "#[tokio::test]\npub async fn snippet() -> Result<(), Box<dyn Error + Send + Sync>>"
    ));
    assert_eq!(
        test_name("#[test]\nfn crashed_migration() {}\n").as_deref(),
        Some("crashed_migration")
    );
    assert_eq!(test_name("let a = 1;\n").as_deref(), Some("snippet"));
    assert_eq!(test_name("use a::b;\nfn helper() {}\n"), None);
    assert!(body.contains("let a = 1;\nsomething()?;\n"), "{body}");
    let blocks = rust_blocks(
        "```rust\nlet a = 1;\n```\n1. step\n\n   ```rust,ignore\n   let b = 2;\n   ```\n```text\nx\n```\n",
    );
    assert_eq!(blocks, [(2, "let a = 1;\n".to_owned()), (7, "let b = 2;\n".to_owned())]);
}

/// docs/*.md, sorted.
fn doc_pages() -> Vec<String> {
    let mut pages: Vec<String> = std::fs::read_dir(workspace_root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    pages.sort();
    pages
}

/// The Rust blocks of a page (```` ```rust ```` with any attributes), by the 1-based line of
/// their first code line, their indentation removed.
fn rust_blocks(page: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut lines = page.lines().enumerate();
    while let Some((_, line)) = lines.next() {
        let indent = line.len() - line.trim_start().len();
        let info = line.trim_start();
        if !(info == "```rust" || info.starts_with("```rust,")) {
            continue;
        }
        let mut body = String::new();
        let mut first = None;
        for (idx, line) in lines.by_ref() {
            if line.trim_start() == "```" {
                break;
            }
            first.get_or_insert(idx + 1);
            body.push_str(line.get(indent..).unwrap_or(line.trim_start()));
            body.push('\n');
        }
        blocks.push((first.unwrap_or(0), body));
    }
    blocks
}

/// Items stay items; statements become the body of an async function, after the `options` and
/// `task` the pages leave to the reader.
fn wrap(snippet: &str) -> String {
    if is_items(snippet) {
        return snippet.to_owned();
    }
    format!(
        "#[tokio::test]\npub async fn snippet() -> Result<(), Box<dyn Error + Send + Sync>> {{\n\
         let options = CaptureOptions::new(\"agent\", \"1.0.0\");\n\
         let task = \"What is (2 + 3) * 4?\";\n{snippet}Ok(())\n}}\n"
    )
}

/// Whether a snippet is items (kept as they are) rather than statements.
fn is_items(snippet: &str) -> bool {
    let first = snippet.lines().find(|line| !line.trim().is_empty()).unwrap_or_default();
    let items = ["use ", "#[", "fn ", "pub ", "async fn ", "struct ", "impl ", "mod "];
    items.iter().any(|start| first.starts_with(start))
}

/// Fails unless every line of the snippet is a line of `source` (indentation aside).
fn assert_declared(page: &str, line: usize, snippet: &str, source: &Path) {
    let source_text = std::fs::read_to_string(source).unwrap();
    // A declaration with a body ends with `{` in the source where the page ends it with `;`.
    let bare = |line: &str| line.trim().trim_end_matches(['{', ';']).trim_end().to_owned();
    let source_lines: Vec<String> = source_text.lines().map(bare).collect();
    for shown in snippet.lines().map(bare).filter(|line| !line.starts_with("//")) {
        assert!(
            source_lines.contains(&shown),
            "{page}:{line} shows `{shown}`, which {} no longer declares",
            source.display()
        );
    }
}

fn numbered(code: &str) -> String {
    code.lines().enumerate().map(|(idx, line)| format!("{:4} {line}\n", idx + 1)).collect()
}

/// The build folder the newcomer test uses (see `dist.rs`).
fn build_folder() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().join("newcomer")
}
