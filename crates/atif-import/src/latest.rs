//! Finding the newest session file an agent wrote for a working directory, in the places the
//! agents keep them by default.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::path::first_record;
use crate::{Error, Result};

/// The agents [`latest_session`] knows.
pub const AGENTS: &[&str] = &["claude-code", "codex", "gemini-cli", "opencode", "pi"];

/// The newest session file `agent` wrote for the working directory `cwd`, under `home`:
/// - `claude-code`: `~/.claude/projects/<cwd, each character that is not a letter or digit
///   replaced by ->/*.jsonl` (or under `$CLAUDE_CONFIG_DIR/projects` when `config_dir` says so);
/// - `codex`: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` whose `session_meta` names `cwd`;
/// - `gemini-cli`: `~/.gemini/tmp/<project>/chats/*` where `<project>/.project_root` names `cwd`;
/// - `pi`: `~/.pi/agent/sessions/--<cwd with / replaced by ->--/*.jsonl`.
///
/// "Newest" is the latest modification time. `config_dir` overrides the agent's folder under
/// home (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`).
///
/// # Errors
/// [`Error::NoLatest`] naming where it looked when there is no such file, or when the agent
/// keeps no session files (OpenCode's are in SQLite: use `opencode export`).
pub fn latest_session(
    agent: &str,
    cwd: &Path,
    home: &Path,
    config_dir: Option<&Path>,
) -> Result<PathBuf> {
    let cwd_text = cwd.to_string_lossy().trim_end_matches('/').to_owned();
    let (looked_in, candidates): (PathBuf, Vec<PathBuf>) = match agent {
        "claude-code" => {
            let slug: String =
                cwd_text.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
            let base = config_dir.map_or_else(|| home.join(".claude"), Path::to_path_buf);
            let folder = base.join("projects").join(slug);
            let files = files_in(&folder, &|p| {
                has_ext(p, "jsonl")
                    && !p
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("agent-"))
            });
            (folder, files)
        }
        "codex" => {
            let base = config_dir.map_or_else(|| home.join(".codex"), Path::to_path_buf);
            let folder = base.join("sessions");
            let mut files = Vec::new();
            walk(&folder, &mut files);
            files.retain(|p| {
                has_ext(p, "jsonl")
                    && first_record(p).is_some_and(|r| {
                        r.pointer("/payload/cwd")
                            .and_then(Value::as_str)
                            .map(|c| c.trim_end_matches('/'))
                            == Some(cwd_text.as_str())
                    })
            });
            (folder, files)
        }
        "gemini-cli" => {
            let folder = home.join(".gemini").join("tmp");
            let mut files = Vec::new();
            for project in dirs_in(&folder) {
                let root =
                    std::fs::read_to_string(project.join(".project_root")).unwrap_or_default();
                if root.trim().trim_end_matches('/') == cwd_text {
                    files.extend(files_in(&project.join("chats"), &|p| {
                        has_ext(p, "json") || has_ext(p, "jsonl")
                    }));
                }
            }
            (folder, files)
        }
        "pi" => {
            let name = format!("--{}--", cwd_text.trim_start_matches('/').replace('/', "-"));
            let folder = home.join(".pi/agent/sessions").join(name);
            let files = files_in(&folder, &|p| has_ext(p, "jsonl"));
            (folder, files)
        }
        "opencode" => {
            return Err(Error::NoLatest {
                agent: agent.to_owned(),
                reason: "OpenCode keeps its sessions in SQLite (~/.local/share/opencode/opencode.db); run `opencode export SESSION` and import what it prints".to_owned(),
            });
        }
        other => {
            return Err(Error::NoLatest {
                agent: other.to_owned(),
                reason: format!("unknown agent (known: {})", AGENTS.join(", ")),
            });
        }
    };
    candidates.into_iter().max_by_key(|p| (modified(p), p.clone())).ok_or_else(|| Error::NoLatest {
        agent: agent.to_owned(),
        reason: format!("no session file for {} under {}", cwd.display(), looked_in.display()),
    })
}

fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path).and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH)
}

fn has_ext(path: &Path, ext: &str) -> bool {
    path.extension().is_some_and(|e| e == ext)
}

fn files_in(folder: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else { return Vec::new() };
    entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file() && keep(p)).collect()
}

fn dirs_in(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else { return Vec::new() };
    entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}
