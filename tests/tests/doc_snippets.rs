//! Every Rust snippet of docs/*.md compiles against this checkout's libraries.
//!
//! A snippet is a fragment of a user's test: it names things the page leaves to the reader (the
//! agent `my_agent`, a `task`, the `options` of the capture). [`CONTEXT`] declares those, per
//! page, and nothing else; the snippet itself is compiled as written, in a crate that depends on
//! the libraries by path (like the newcomer's in `newcomer.rs`, sharing its build folder), with
//! the reference agent of `tests/src/lib.rs` (`tool_loop_agent`) that the pages name.
//! Items (`use`, `fn`, `#[test]`) are compiled as a module; statements as the body of an async
//! function returning `Result<(), Box<dyn Error + Send + Sync>>`, after `let options` and
//! `let task`.
//!
//! Two pages run their Rust code rather than just compiling it: the README's test
//! (`newcomer.rs`) and the guide docs/golden-in-your-crate.md (`your_crate.rs`).
//! A snippet that shows a declaration of ours rather than a use of it is held to the source
//! instead: each of its lines is a line of the file given in [`DECLARATIONS`].
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use atif_test_support::{describe, workspace_root};

/// What each page leaves to the reader, declared for its snippets.
const CONTEXT: &[(&str, &str)] = &[
    (
        "docs/golden.md",
        "pub fn run_my_agent() -> serde_json::Value { serde_json::json!({}) }\n\
         pub fn run_against_live_model() -> serde_json::Value { serde_json::json!({}) }\n",
    ),
    (
        "docs/live.md",
        "pub fn run_my_agent() -> (serde_json::Value, bool) { (serde_json::json!({}), true) }\n",
    ),
    (
        "docs/replay.md",
        "pub async fn my_agent(handle: CaptureHandle, task: &'static str) -> Result<String, LlmError> {\n\
         \x20   handle.client().complete(LlmRequest::new(vec![Message::user(task)])).await.map(|reply| reply.text())\n\
         }\n\
         pub struct MyProviderClient;\n\
         impl MyProviderClient {\n\
         \x20   pub fn from_env() -> Result<FakeClient, LlmError> { Ok(FakeClient::from_responses(None, vec![])) }\n\
         }\n\
         pub async fn run_my_agent(base_url: &str) -> Result<(), LlmError> { let _ = base_url; Ok(()) }\n",
    ),
];

/// Snippets that show one of our declarations: the page, the snippet's first line, and the
/// source file that must hold each of its lines.
const DECLARATIONS: &[(&str, &str, &str)] =
    &[("docs/replay.md", "#[async_trait]", "crates/atif-replay/src/client.rs")];

/// Pages whose Rust code runs elsewhere (see the module docs).
const RUN_ELSEWHERE: &[&str] = &["docs/golden-in-your-crate.md"];

#[test]
fn every_rust_snippet_in_the_docs_compiles() {
    let root = workspace_root();
    let mut code = String::from(
        "#![allow(unused, non_snake_case, clippy::all)]\n\
         pub use std::error::Error;\npub use std::sync::Arc;\n\
         pub use atif_replay::*;\npub use serde_json::{json, Value};\n\
         pub use tests::{ToolLoopOptions, tool_loop_agent};\n",
    );
    let mut n_snippets = 0;
    let mut where_ = Vec::new();
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
            n_snippets += 1;
            let name = format!("{module}_line_{line}");
            where_.push(format!("{name}: {page}:{line}"));
            let _ = writeln!(
                code,
                "// {page}:{line}\nmod {name} {{\n    use super::*;\n    use super::context_{module}::*;\n{}}}",
                wrap(&snippet)
            );
        }
    }
    assert!(n_snippets >= 7, "only {n_snippets} snippets found");

    let dir = tempfile::tempdir().unwrap();
    let krate = dir.path().join("doc-snippets");
    std::fs::create_dir_all(krate.join("src")).unwrap();
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
    std::fs::write(krate.join("src/lib.rs"), &code).unwrap();
    std::fs::copy(root.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["test", "--no-run", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", build_folder())
        // No debug info and no incremental cache: a quarter of the disk, and faster.
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "a Rust snippet of the docs does not compile (modules by page and line: {}):\n{}\n\
         --- the generated src/lib.rs:\n{}",
        where_.join(", "),
        describe(&output),
        numbered(&code)
    );
}

#[test]
fn a_snippet_is_wrapped_as_items_or_as_statements() {
    assert!(wrap("use std::sync::Arc;\n#[test]\nfn a() {}\n").starts_with("use std::sync::Arc;"));
    let body = wrap("let a = 1;\nsomething()?;\n");
    assert!(body.contains("pub async fn snippet() -> Result<(), Box<dyn Error + Send + Sync>>"));
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
    let first = snippet.lines().find(|line| !line.trim().is_empty()).unwrap_or_default();
    let items = ["use ", "#[", "fn ", "pub ", "async fn ", "struct ", "impl ", "mod "];
    if items.iter().any(|start| first.starts_with(start)) {
        return snippet.to_owned();
    }
    format!(
        "pub async fn snippet() -> Result<(), Box<dyn Error + Send + Sync>> {{\n\
         let options = CaptureOptions::new(\"agent\", \"1.0.0\");\n\
         let task = \"What is (2 + 3) * 4?\";\n{snippet}Ok(())\n}}\n"
    )
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

/// The build folder the newcomer test uses (see `newcomer.rs`).
fn build_folder() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().join("newcomer")
}
