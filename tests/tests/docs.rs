//! docs/architecture.md against the code: every crate, `atif` subcommand and `cargo xtask`
//! command the page lists exists, and every one that exists is listed; every Rust name of its
//! glossary is public in the crate it names.
//!
//! The page keeps its lists where a line of code can find them: each crate is the bold,
//! backticked name that opens its paragraph in "## The crates", and the subcommands and xtask
//! commands are the backticked names on the lines starting `Subcommands of `atif`:` and
//! `Commands of `cargo xtask`:`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use std::collections::BTreeSet;
use std::process::Command;

use atif_test_support::{atif_command, describe, workspace_path, workspace_root};
use serde_json::Value;

const PAGE: &str = "docs/architecture.md";
const SUBCOMMANDS_LINE: &str = "Subcommands of `atif`:";
const XTASK_LINE: &str = "Commands of `cargo xtask`:";

#[test]
fn the_page_lists_every_workspace_crate_and_no_other() {
    let page = architecture_page();
    let listed = listed_crates(&page);
    compare("crates (paragraphs of \"## The crates\")", &listed, &workspace_packages()).unwrap();
    // Folder name = package name, so every folder of crates/ is a listed crate too.
    compare("crates (folders of crates/)", &(&listed & &crate_folders()), &crate_folders())
        .unwrap();
}

#[test]
fn the_page_lists_every_atif_subcommand_and_no_other() {
    let page = architecture_page();
    let listed = listed_on_line(&page, SUBCOMMANDS_LINE);
    compare("`atif` subcommands", &listed, &atif_subcommands()).unwrap();
}

#[test]
fn the_page_lists_every_xtask_command_and_no_other() {
    let page = architecture_page();
    let listed = listed_on_line(&page, XTASK_LINE);
    compare("`cargo xtask` commands", &listed, &xtask_usage_commands()).unwrap();
}

#[test]
fn the_xtask_usage_names_every_command_xtask_runs() {
    // The xtask test above reads the usage text, so the usage text must be true too.
    compare("xtask's USAGE", &xtask_usage_commands(), &xtask_dispatched_commands()).unwrap();
}

#[test]
fn the_checks_fail_on_a_page_that_lists_too_much_or_too_little() {
    // Positive control: a page that forgets a crate and invents a subcommand fails, naming both.
    let page = architecture_page();
    let doctored = page
        .lines()
        .filter(|line| !line.starts_with("**`atif-fs`**"))
        .map(|line| match line.strip_prefix(SUBCOMMANDS_LINE) {
            Some(rest) => format!("{SUBCOMMANDS_LINE} `frobnicate`,{rest}"),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");

    let crates = compare("crates", &listed_crates(&doctored), &workspace_packages()).unwrap_err();
    assert!(crates.contains("not listed: atif-fs"), "{crates}");
    let subcommands = compare(
        "`atif` subcommands",
        &listed_on_line(&doctored, SUBCOMMANDS_LINE),
        &atif_subcommands(),
    )
    .unwrap_err();
    assert!(subcommands.contains("listed but absent: frobnicate"), "{subcommands}");

    // And the parsers find something to compare: an empty list would agree with nothing.
    assert!(listed_crates(&page).contains("atif-schema"));
    assert!(atif_subcommands().contains("validate"));
    assert!(xtask_usage_commands().contains("schema"));
    assert!(xtask_dispatched_commands().contains("schema"));
}

/// `Ok` when `listed` and `real` hold the same names; else a message naming each difference
/// and what to edit.
#[test]
fn every_rust_name_in_the_glossary_is_public_in_its_crate() {
    let page = architecture_page();
    let missing = missing_glossary_names(&page);
    assert!(missing.is_empty(), "glossary names no crate declares in public: {missing:?}");
    // Positive control: a misspelt name, and a bare name continuing the row's crate, fail.
    let doctored = page
        .replace("`atif_normalize::Shape` |", "`atif_normalize::Sharp` |")
        .replace("`atif_schema::Validation`, `Finding`", "`atif_schema::Validation`, `Fnding`");
    assert_eq!(missing_glossary_names(&doctored), ["atif_normalize::Sharp", "atif_schema::Fnding"]);
}

/// The Rust names (`atif_x::Item`, or a bare `Item` continuing the row's last crate) in the
/// "where" column of the page's glossary whose last segment no line of that crate's sources
/// declares or re-exports as `pub`.
fn missing_glossary_names(page: &str) -> Vec<String> {
    let glossary = page.split("\n## Glossary\n").nth(1).expect("the page has a glossary");
    let mut missing = Vec::new();
    for row in glossary.lines().filter(|line| line.starts_with("| ") && !line.contains("---")) {
        let Some(column) = row.split(" | ").nth(2) else { continue };
        let mut krate: Option<&str> = None;
        for name in column.split('`').skip(1).step_by(2) {
            let (named_crate, path) = match name.split_once("::") {
                Some((head, rest)) if head.starts_with("atif_") => (Some(head), rest),
                _ => (None, name),
            };
            krate = named_crate.or(krate);
            let item = path.rsplit("::").next().unwrap_or(path);
            let identifier =
                !item.is_empty() && item.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            let Some(krate) = krate.filter(|_| identifier) else { continue };
            if !declares_in_public(krate, item) {
                missing.push(format!("{krate}::{item}"));
            }
        }
    }
    missing
}

/// Whether a line of crate `krate`'s sources starts `pub ` and names `item` as a whole word.
fn declares_in_public(krate: &str, item: &str) -> bool {
    let word = regex::Regex::new(&format!(r"\b{item}\b")).unwrap();
    let src = workspace_path(&format!("crates/{}/src", krate.replace('_', "-")));
    rust_files(&src).iter().any(|file| {
        let text = std::fs::read_to_string(file).unwrap();
        text.lines().any(|line| line.trim_start().starts_with("pub ") && word.is_match(line))
    })
}

fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

fn compare(what: &str, listed: &BTreeSet<String>, real: &BTreeSet<String>) -> Result<(), String> {
    if listed == real {
        return Ok(());
    }
    let absent: Vec<&str> = listed.difference(real).map(String::as_str).collect();
    let unlisted: Vec<&str> = real.difference(listed).map(String::as_str).collect();
    let mut message = format!("{PAGE} is out of date for the {what}:");
    if !absent.is_empty() {
        message += &format!("\n  listed but absent: {}", absent.join(", "));
    }
    if !unlisted.is_empty() {
        message += &format!("\n  not listed: {}", unlisted.join(", "));
    }
    message += &format!("\nedit {PAGE}, then run: cargo test -p tests --test docs");
    Err(message)
}

fn architecture_page() -> String {
    std::fs::read_to_string(workspace_path(PAGE)).unwrap()
}

/// The name in the bold backticks (`**`name`**`) that opens each paragraph of "## The crates".
fn listed_crates(page: &str) -> BTreeSet<String> {
    page.lines()
        .skip_while(|line| *line != "## The crates")
        .skip(1)
        .take_while(|line| !line.starts_with("## "))
        .filter_map(|line| line.strip_prefix("**`")?.split_once("`**").map(|(name, _)| name))
        .map(str::to_owned)
        .collect()
}

/// The backticked names on the one line of `page` that starts with `prefix`.
fn listed_on_line(page: &str, prefix: &str) -> BTreeSet<String> {
    let lines: Vec<&str> = page.lines().filter_map(|line| line.strip_prefix(prefix)).collect();
    assert_eq!(lines.len(), 1, "{PAGE} needs exactly one line starting `{prefix}`");
    lines[0].split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The workspace's packages, as `cargo metadata` names them.
fn workspace_packages() -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "{}", describe(&output));
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|package| package["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The folders of crates/.
fn crate_folders() -> BTreeSet<String> {
    std::fs::read_dir(workspace_path("crates"))
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.path().join("Cargo.toml").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The subcommands the real `atif --help` lists, but clap's own `help`.
fn atif_subcommands() -> BTreeSet<String> {
    let output = atif_command(&["--help"]).output().expect("atif runs");
    assert!(output.status.success(), "{}", describe(&output));
    let help = String::from_utf8(output.stdout).unwrap();
    let names: BTreeSet<String> = help
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    assert!(!names.is_empty(), "no `Commands:` section in `atif --help`:\n{help}");
    names
}

/// The commands xtask's usage text (`cargo xtask help`) lists: the first word of each line
/// indented by two spaces after `commands:`.
fn xtask_usage_commands() -> BTreeSet<String> {
    let source = xtask_main();
    let usage = source
        .split_once("const USAGE: &str = \"")
        .and_then(|(_, rest)| rest.split_once("\";"))
        .map(|(usage, _)| usage)
        .expect("xtask/src/main.rs has a `const USAGE`");
    usage
        .lines()
        .skip_while(|line| *line != "commands:")
        .filter_map(|line| line.strip_prefix("  "))
        .filter(|line| !line.starts_with(' '))
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The commands xtask's `main` dispatches: each match arm of one quoted name (the help arm,
/// `"-h" | "--help" | "help"`, has several).
fn xtask_dispatched_commands() -> BTreeSet<String> {
    xtask_main()
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix('"')?.split_once("\" => "))
        .map(|(name, _)| name)
        .filter(|name| !name.contains('"'))
        .map(str::to_owned)
        .collect()
}

fn xtask_main() -> String {
    std::fs::read_to_string(workspace_path("xtask/src/main.rs")).unwrap()
}
