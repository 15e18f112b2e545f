//! The run's working directory and home, as the options give them or the log reveals them,
//! recorded in `extra` so that the normaliser can write them as `<cwd>` and `<home>`.

use crate::draft::Trajectory;
use crate::format::Format;
use crate::options::ImportOptions;

/// Records the run's working directory and home in `extra.cwd` and `extra.home`, so the
/// normaliser can write them as `<cwd>` and `<home>`: the ones the options give, else the ones
/// the log states (Gemini CLI's session context lists the workspace; each agent's own folder,
/// `<home>/.codex/…`, shows up in its injected context).
pub(crate) fn record_paths(trajectory: &mut Trajectory, format: Format, options: &ImportOptions) {
    if let Some(cwd) = &options.cwd {
        trajectory.extra.insert("cwd".into(), cwd.clone().into());
    }
    if let Some(home) = &options.home {
        trajectory.extra.insert("home".into(), home.clone().into());
    }
    let context_texts = || {
        trajectory
            .steps
            .iter()
            .filter(|step| step.source != crate::draft::StepSource::Agent)
            .flat_map(|step| &step.parts)
            .filter_map(|part| match part {
                crate::draft::Part::Text(text) => Some(text.as_str()),
                crate::draft::Part::Image { .. } | crate::draft::Part::Content(_) => None,
            })
    };
    let cwd = match trajectory.extra.contains_key("cwd") {
        true => None,
        false => {
            context_texts().find_map(|text| line_after(text, "- **Workspace Directories:**\n  - "))
        }
    };
    let home = match (trajectory.extra.contains_key("home"), format.home_marker()) {
        (false, Some(marker)) => context_texts().find_map(|text| path_before(text, marker)),
        _ => None,
    };
    if let Some(cwd) = cwd {
        trajectory.extra.insert("cwd".into(), cwd.into());
    }
    if let Some(home) = home {
        trajectory.extra.insert("home".into(), home.into());
    }
}

/// The rest of the line that follows `prefix` in `text`.
fn line_after(text: &str, prefix: &str) -> Option<String> {
    let start = text.find(prefix)? + prefix.len();
    let line = text[start..].lines().next()?.trim();
    line.starts_with('/').then(|| line.to_owned())
}

/// The absolute path written just before `marker` in `text` (`/home/ann` in
/// `` `/home/ann/.codex/skills` ``).
pub(crate) fn path_before(text: &str, marker: &str) -> Option<String> {
    let end = text.find(marker)?;
    let start = text[..end]
        .rfind(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '(' | '=' | ':' | ','))
        .map_or(0, |idx| idx + 1);
    let path = &text[start..end];
    (path.starts_with('/') && path.len() > 1).then(|| path.to_owned())
}
