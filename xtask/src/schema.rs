//! `cargo xtask schema [--check]`: regenerate the committed JSON Schemas in `docs/schema/`, and
//! the TypeScript declarations of the npm package (`js/src/atif.d.ts`) from the newest one.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use atif_schema::{SchemaVersion, json_schema_file_name, json_schema_text};

use crate::project_root;

/// Writes `docs/schema/atif-v1.N.schema.json` for every version, or with `--check` reports the
/// files that differ from what would be written (exit 1) without touching them.
pub(crate) fn run(args: &[String]) -> anyhow::Result<ExitCode> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => anyhow::bail!("usage: cargo xtask schema [--check]"),
    };
    let dir = project_root().join("docs").join("schema");
    let mut stale = Vec::new();
    for version in SchemaVersion::ALL {
        let path = dir.join(json_schema_file_name(version));
        let wanted = json_schema_text(version);
        let current = std::fs::read_to_string(&path).ok();
        if current.as_deref() == Some(wanted.as_str()) {
            continue;
        }
        if check {
            stale.push(path);
        } else {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            write_atomically(&path, &wanted)?;
            println!("wrote {}", path.display());
        }
    }
    let declarations = project_root().join(crate::typescript::DECLARATIONS);
    let wanted = typescript_declarations(&dir)?;
    if std::fs::read_to_string(&declarations).ok().as_deref() != Some(wanted.as_str()) {
        if check {
            stale.push(declarations);
        } else {
            write_atomically(&declarations, &wanted)?;
            println!("wrote {}", declarations.display());
        }
    }
    if !stale.is_empty() {
        for path in &stale {
            eprintln!("stale: {}", path.display());
        }
        eprintln!(
            "the committed JSON Schemas or TypeScript declarations are out of date: run `cargo xtask schema`"
        );
        return Ok(ExitCode::from(1));
    }
    if check {
        println!("docs/schema is up to date");
    }
    Ok(ExitCode::SUCCESS)
}

/// The TypeScript declarations generated from the committed JSON Schema of the newest version
/// in `dir`.
pub(crate) fn typescript_declarations(dir: &Path) -> anyhow::Result<String> {
    let newest = SchemaVersion::ALL[SchemaVersion::ALL.len() - 1];
    let name = json_schema_file_name(newest);
    let path = dir.join(&name);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let schema: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let labels: Vec<&str> = SchemaVersion::ALL.iter().map(|version| version.label()).collect();
    Ok(crate::typescript::declarations(&schema, &format!("docs/schema/{name}"), &labels))
}

/// Writes `text` to `path` through a temporary file in the same folder and a rename, so a
/// reader never sees half a file.
fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let mut temp = PathBuf::from(path);
    temp.set_extension("json.tmp");
    std::fs::write(&temp, text).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, path)
        .with_context(|| format!("cannot move {} to {}", temp.display(), path.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn the_committed_typescript_declarations_are_current() {
        let root = project_root();
        let wanted = typescript_declarations(&root.join("docs").join("schema")).unwrap();
        let path = root.join(crate::typescript::DECLARATIONS);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            current == wanted,
            "{} is stale: run `cargo xtask schema` to regenerate it",
            path.display()
        );
    }
}
