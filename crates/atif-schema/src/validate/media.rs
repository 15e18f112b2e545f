//! The media-file rule: a local image or audio file named by a content part must exist beside
//! the trajectory, as Harbor's validator checks when it is given a file.
//!
//! This is the only rule that touches the file system, so it runs only when the caller says
//! where the trajectory lives ([`ValidateOptions::set_media_folder`]). Its reach copies Harbor's
//! exactly, since the harbor profile's verdict must equal Harbor's: only the top-level `steps`
//! (not embedded subagents), only `message` and observation results' `content`, a path counts
//! as a URL when it contains `://` (so a `data:` URI is looked for as a file), and an empty path
//! is not checked.
//!
//! [`ValidateOptions::set_media_folder`]: crate::ValidateOptions::set_media_folder

use std::path::Path;

use serde_json::Value;

use crate::validate::{Finding, Profile, Rule, Severity};

/// Reports every image or audio part of the top-level steps whose local file is not in `folder`
/// (or at its absolute path).
pub(crate) fn check(
    document: &Value,
    folder: &Path,
    profile: Profile,
    findings: &mut Vec<Finding>,
) {
    let Some(steps) = document.get("steps").and_then(Value::as_array) else { return };
    for (step_idx, step) in steps.iter().enumerate() {
        let step_pointer = format!("/steps/{step_idx}");
        if let Some(parts) = step.get("message").and_then(Value::as_array) {
            check_parts(parts, &format!("{step_pointer}/message"), folder, profile, findings);
        }
        let results = step
            .get("observation")
            .and_then(|observation| observation.get("results"))
            .and_then(Value::as_array);
        for (result_idx, result) in results.into_iter().flatten().enumerate() {
            if let Some(parts) = result.get("content").and_then(Value::as_array) {
                let pointer = format!("{step_pointer}/observation/results/{result_idx}/content");
                check_parts(parts, &pointer, folder, profile, findings);
            }
        }
    }
}

fn check_parts(
    parts: &[Value],
    pointer: &str,
    folder: &Path,
    profile: Profile,
    findings: &mut Vec<Finding>,
) {
    for (part_idx, part) in parts.iter().enumerate() {
        let kind = match part.get("type").and_then(Value::as_str) {
            Some(kind @ ("image" | "audio")) => kind,
            _ => continue,
        };
        let Some(path) = part.get("source").and_then(|source| source.get("path")) else {
            continue;
        };
        let Some(path) = path.as_str().filter(|path| !path.is_empty()) else { continue };
        if path.contains("://") {
            continue;
        }
        // Python's pathlib drops a trailing slash, so Harbor finds `images/a.png/` as a file.
        let local = match path.trim_end_matches('/') {
            "" => "/",
            trimmed => trimmed,
        };
        let full_path = folder.join(local);
        if full_path.exists() {
            continue;
        }
        let severity = match profile {
            Profile::Strict => Severity::Warning,
            Profile::Harbor => Severity::Error,
        };
        let what = if path.starts_with("data:") {
            format!(
                "the {kind} path is a data: URI ({}), which Harbor looks for as a local file (it \
                 counts only paths containing `://` as URLs) and does not find",
                shorten(path)
            )
        } else {
            format!(
                "the {kind} file {} does not exist (looked for {})",
                shorten(path),
                shorten(&full_path.to_string_lossy())
            )
        };
        findings.push(Finding::new(
            Rule::MediaFile,
            severity,
            format!("{pointer}/{part_idx}/source/path"),
            format!("{what}; Harbor's validator rejects the trajectory file for this"),
        ));
    }
}

/// `text` quoted, cut to its first 80 characters when longer (an inline data: URI can be
/// megabytes of base64).
fn shorten(text: &str) -> String {
    const MAX_CHARS: usize = 80;
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
        None => format!("{text:?}"),
    }
}
