//! Claude Code session transcripts (`~/.claude/projects/<slug>/<session>.jsonl`).

use std::collections::HashSet;

use serde_json::Value;

use crate::Result;
use crate::build::{Part, Source, Step, Trajectory};
use crate::formats::anthropic::{Claude, UserFlags};
use crate::import::Context;
use crate::lines::{Record, Records};

/// Record types that carry no conversation content.
const BOOKKEEPING: &[&str] = &[
    "summary",
    "file-history-snapshot",
    "attachment",
    "queue-operation",
    "permission-mode",
    "mode",
    "ai-title",
    "custom-title",
    "last-prompt",
    "progress",
    "tag",
    "agent-name",
];

/// The agent name written to `agent.name`.
pub(crate) const AGENT_NAME: &str = "claude-code";

/// Imports a transcript; sidechain lines (older subagent turns written into the session file)
/// become one embedded subagent trajectory `sidechain`.
pub(crate) fn import(records: &mut Records<'_>, ctx: &mut Context) -> Result<Trajectory> {
    let mut main = Chain::new();
    let mut sidechain: Option<Chain> = None;
    for record in records {
        let record = record?;
        if record.value.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            sidechain.get_or_insert_with(Chain::new).add(record, ctx)?;
        } else {
            main.add(record, ctx)?;
        }
    }
    let mut trajectory = main.finish();
    if let Some(sidechain) = sidechain {
        let mut sub = sidechain.finish();
        sub.trajectory_id = Some("sidechain".to_owned());
        sub.session_id.clone_from(&trajectory.session_id);
        trajectory.subagents.push(sub.into_value());
    }
    Ok(trajectory)
}

/// Imports the lines of one conversation chain (a subagent file), in file order.
pub(crate) fn import_chain(records: &mut Records<'_>, ctx: &mut Context) -> Result<Trajectory> {
    let mut chain = Chain::new();
    for record in records {
        chain.add(record?, ctx)?;
    }
    Ok(chain.finish())
}

/// One conversation chain under construction: each `uuid` imported once, in file order.
#[derive(Debug)]
struct Chain {
    claude: Claude,
    seen_uuids: HashSet<String>,
}

impl Chain {
    fn new() -> Chain {
        Chain { claude: Claude::new(AGENT_NAME), seen_uuids: HashSet::new() }
    }

    fn finish(self) -> Trajectory {
        let mut trajectory = self.claude.trajectory;
        trajectory.final_metrics = Some(trajectory.summed_metrics());
        trajectory.crashed |= trajectory.ends_in_error();
        trajectory
    }

    fn add(&mut self, record: Record, ctx: &mut Context) -> Result<()> {
        let claude = &mut self.claude;
        let seen_uuids = &mut self.seen_uuids;
        let value = &record.value;
        let field = |key: &str| value.get(key).and_then(Value::as_str);
        if let Some(uuid) = field("uuid") {
            if !seen_uuids.insert(uuid.to_owned()) {
                ctx.ignore("duplicate uuid");
                return Ok(());
            }
        }
        let record_type = field("type").unwrap_or("");
        if matches!(record_type, "user" | "assistant" | "system") {
            let trajectory = &mut claude.trajectory;
            if trajectory.session_id.is_none() {
                trajectory.session_id = field("sessionId").map(str::to_owned);
            }
            if trajectory.agent_version.is_none() {
                trajectory.agent_version = field("version").map(str::to_owned);
            }
            if !trajectory.extra.contains_key("cwd") {
                if let Some(cwd) = field("cwd") {
                    trajectory.extra.insert("cwd".into(), cwd.into());
                }
            }
            if !trajectory.extra.contains_key("git_branch") {
                if let Some(branch) = field("gitBranch").filter(|b| !b.is_empty()) {
                    trajectory.extra.insert("git_branch".into(), branch.into());
                }
            }
        }
        let timestamp = value.get("timestamp");
        let message = value.get("message").unwrap_or(&Value::Null);
        match record_type {
            "assistant" => {
                let api_error =
                    value.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
                claude.assistant(
                    record.line,
                    message,
                    timestamp,
                    field("requestId"),
                    api_error,
                    ctx,
                )?;
            }
            "user" => {
                let flags = UserFlags {
                    meta: value.get("isMeta").and_then(Value::as_bool) == Some(true),
                    compact_summary: value.get("isCompactSummary").and_then(Value::as_bool)
                        == Some(true),
                };
                let structured = value.get("toolUseResult");
                claude.user(record.line, message, timestamp, structured, flags, ctx)?;
            }
            "system" => system(&mut claude.trajectory, value, ctx),
            known if BOOKKEEPING.contains(&known) => ctx.ignore(known),
            other => {
                ctx.unknown(record.line, if other.is_empty() { "(no type)" } else { other })?
            }
        }
        Ok(())
    }
}

/// `system` lines: compaction boundaries become system steps, the rest is bookkeeping.
fn system(trajectory: &mut Trajectory, value: &Value, ctx: &mut Context) {
    let subtype = value.get("subtype").and_then(Value::as_str).unwrap_or("");
    match subtype {
        "compact_boundary" => {
            let mut step = Step::new(Source::System);
            let text =
                value.get("content").and_then(Value::as_str).unwrap_or("Conversation compacted");
            step.parts.push(Part::Text(text.to_owned()));
            step.set_timestamp(value.get("timestamp"));
            let mut management = serde_json::Map::new();
            management.insert("type".into(), "compaction".into());
            management.insert("boundary".into(), "replace".into());
            step.extra.insert("context_management".into(), management.into());
            if let Some(meta) = value.get("compactMetadata") {
                step.extra.insert("compact_metadata".into(), meta.clone());
            }
            trajectory.push(step);
        }
        _ => ctx.ignore(&format!("system/{subtype}")),
    }
}
