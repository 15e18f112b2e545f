//! Claude Code session transcripts (`~/.claude/projects/<slug>/<session>.jsonl`).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::Result;
use crate::context::Context;
use crate::draft::{Part, Step, StepSource, Trajectory};
use crate::formats::anthropic::{Claude, UserFlags};
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
    // 2.1.x: copies of the API requests (system prompt, tool schemas), their content hashes,
    // the tools used and the running cost; the conversation is in the other records.
    "api-request",
    "api-request-blob",
    "api-request-shape",
    "atis-latch",
    "tools-used",
    "cost-state",
];

/// The agent name written to `agent.name`.
pub(crate) const AGENT_NAME: &str = "claude-code";

/// Imports a transcript; sidechain lines (older CLIs write subagent turns into the session file
/// with `isSidechain: true`) become embedded subagent trajectories, one per conversation.
///
/// A sidechain line belongs to the subagent of its `agentId` when it has one, else to the
/// subagent of the sidechain line its `parentUuid` names; any other sidechain line starts a
/// subagent. Each subagent is linked to the call that spawned it by the ids the log records:
/// the `agentId` named in the call's `toolUseResult`, else the main-chain line its first line's
/// `parentUuid` names when that line holds exactly one call, else the one call whose `prompt`
/// argument is the subagent's first message.
pub(crate) fn import(records: &mut Records<'_>, ctx: &mut Context) -> Result<Trajectory> {
    let Chains { main, mut sidechains, calls_of_line } = read_chains(records, ctx)?;
    // A file of sidechain lines only is one subagent's own transcript (`agent-<id>.jsonl`
    // given directly): it is the trajectory, not something embedded in an empty one.
    if main.n_records == 0 && sidechains.len() == 1 {
        if let Some(sidechain) = sidechains.pop() {
            return Ok(sidechain.chain.finish());
        }
    }
    let mut trajectory = main.finish();
    embed_sidechains(&mut trajectory, sidechains, &calls_of_line, ctx);
    Ok(trajectory)
}

/// A transcript's lines, sorted into the main chain and the sidechains.
struct Chains {
    main: Chain,
    sidechains: Vec<Sidechain>,
    /// The tool_use ids on each main-chain line, by the line's uuid.
    calls_of_line: HashMap<String, Vec<String>>,
}

/// Reads every line into the main chain or the sidechain it belongs to (see [`import`]).
fn read_chains(records: &mut Records<'_>, ctx: &mut Context) -> Result<Chains> {
    let mut main = Chain::new();
    let mut sidechains: Vec<Sidechain> = Vec::new();
    let mut sidechain_of_uuid: HashMap<String, usize> = HashMap::new();
    let mut sidechain_of_agent: HashMap<String, usize> = HashMap::new();
    let mut calls_of_line: HashMap<String, Vec<String>> = HashMap::new();
    for record in records {
        let record = record?;
        let value = &record.value;
        let field = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let (uuid, parent, agent_id) = (field("uuid"), field("parentUuid"), field("agentId"));
        if value.get("isSidechain").and_then(Value::as_bool) != Some(true) {
            if let Some(uuid) = uuid {
                let calls = tool_use_ids(value);
                if !calls.is_empty() {
                    calls_of_line.insert(uuid, calls);
                }
            }
            main.add(record, ctx)?;
            continue;
        }
        // A line replayed on resume goes to the chain that already holds it (which drops it).
        let known = uuid
            .as_ref()
            .and_then(|u| sidechain_of_uuid.get(u))
            .or_else(|| agent_id.as_ref().and_then(|id| sidechain_of_agent.get(id)))
            .or_else(|| parent.as_ref().and_then(|p| sidechain_of_uuid.get(p)))
            .copied();
        let idx = match known {
            Some(idx) => idx,
            None => {
                sidechains.push(Sidechain {
                    chain: Chain::new(),
                    line: record.line,
                    agent_id: agent_id.clone(),
                    root_parent: parent,
                    prompt: first_text(value),
                });
                sidechains.len() - 1
            }
        };
        if let Some(uuid) = uuid {
            sidechain_of_uuid.insert(uuid, idx);
        }
        if let Some(agent_id) = agent_id {
            sidechain_of_agent.entry(agent_id).or_insert(idx);
        }
        sidechains[idx].chain.add(record, ctx)?;
    }
    Ok(Chains { main, sidechains, calls_of_line })
}

/// Embeds each sidechain as a subagent of `trajectory`, linked to the call that spawned it
/// (see [`import`]), with a warning for one no call can be found for.
fn embed_sidechains(
    trajectory: &mut Trajectory,
    sidechains: Vec<Sidechain>,
    calls_of_line: &HashMap<String, Vec<String>>,
    ctx: &mut Context,
) {
    let mut linked_calls: HashSet<String> = HashSet::new();
    let mut n_unnamed = 0;
    for sidechain in sidechains {
        let mut sub = sidechain.chain.finish();
        let trajectory_id = match &sidechain.agent_id {
            Some(agent_id) => format!("agent-{agent_id}"),
            None => {
                n_unnamed += 1;
                format!("sidechain-{n_unnamed}")
            }
        };
        sub.trajectory_id = Some(trajectory_id.clone());
        sub.session_id.clone_from(&trajectory.session_id);
        let call = sidechain
            .agent_id
            .as_deref()
            .and_then(|agent_id| call_of_agent(trajectory, agent_id))
            .or_else(|| match sidechain.root_parent.as_ref().and_then(|p| calls_of_line.get(p)) {
                Some(calls) if calls.len() == 1 => calls.first().cloned(),
                _ => None,
            })
            .or_else(|| {
                let prompt = sidechain.prompt.as_deref()?;
                call_with_prompt(trajectory, prompt, &linked_calls)
            });
        let linked = call.is_some_and(|call| {
            let added = trajectory.add_subagent_ref(&call, &trajectory_id);
            linked_calls.insert(call);
            added
        });
        if !linked {
            ctx.warn(
                sidechain.line,
                &format!("no call of the session spawned the sidechain starting here; embedded as {trajectory_id} without a link"),
            );
        }
        trajectory.subagents.push(sub.into_atif());
    }
}

/// The call whose structured result (`toolUseResult.agentId`) names `agent_id`.
pub(crate) fn call_of_agent(trajectory: &Trajectory, agent_id: &str) -> Option<String> {
    trajectory.steps.iter().flat_map(|s| &s.results).find_map(|result| {
        let named = result.extra.get("tool_use_result")?.get("agentId")?.as_str()? == agent_id;
        if named { result.source_call_id.clone() } else { None }
    })
}

/// The one call not yet linked whose `prompt` argument is `prompt` (none when several are).
fn call_with_prompt(
    trajectory: &Trajectory,
    prompt: &str,
    linked: &HashSet<String>,
) -> Option<String> {
    let mut matches = trajectory
        .steps
        .iter()
        .flat_map(|s| &s.tool_calls)
        .filter(|c| !linked.contains(&c.id))
        .filter(|c| c.arguments.get("prompt").and_then(Value::as_str) == Some(prompt));
    let call = matches.next()?;
    if matches.next().is_some() {
        return None;
    }
    Some(call.id.clone())
}

/// The `tool_use` ids of an assistant line.
fn tool_use_ids(value: &Value) -> Vec<String> {
    let blocks = value.pointer("/message/content").and_then(Value::as_array);
    blocks
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|b| b.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// The text of a user line: its string content, or its first text block.
fn first_text(value: &Value) -> Option<String> {
    if value.get("type").and_then(Value::as_str) != Some("user") {
        return None;
    }
    match value.pointer("/message/content")? {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) => blocks
            .iter()
            .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .and_then(|b| b.get("text").and_then(Value::as_str))
            .map(str::to_owned),
        _ => None,
    }
}

/// A subagent conversation written into the session file.
#[derive(Debug)]
struct Sidechain {
    chain: Chain,
    /// The line that started it.
    line: usize,
    agent_id: Option<String>,
    /// The `parentUuid` of its first line.
    root_parent: Option<String>,
    /// The text of its first line, when it is a user message (the spawning call's prompt).
    prompt: Option<String>,
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
    seen_uuids: HashSet<(String, String, String)>,
    /// How many records were added (bookkeeping included).
    n_records: usize,
}

impl Chain {
    fn new() -> Chain {
        Chain { claude: Claude::new(AGENT_NAME), seen_uuids: HashSet::new(), n_records: 0 }
    }

    fn finish(self) -> Trajectory {
        let mut trajectory = self.claude.trajectory;
        trajectory.final_metrics = Some(trajectory.summed_metrics());
        trajectory.crashed |= trajectory.ends_in_error();
        trajectory
    }

    fn add(&mut self, record: Record, ctx: &mut Context) -> Result<()> {
        self.n_records += 1;
        let claude = &mut self.claude;
        let seen_uuids = &mut self.seen_uuids;
        let value = &record.value;
        let field = |key: &str| value.get(key).and_then(Value::as_str);
        // A resumed or forked session replays earlier records, same uuid, same time. A uuid
        // seen again on another record (a placeholder uuid, a reused one) is not a replay.
        if let Some(uuid) = field("uuid") {
            let key = (
                uuid.to_owned(),
                field("type").unwrap_or("").to_owned(),
                field("timestamp").unwrap_or("").to_owned(),
            );
            if !seen_uuids.insert(key) {
                ctx.skip("replayed record (same uuid, type and timestamp as an earlier one)", 1);
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
        match record_type {
            "assistant" => {
                let api_error =
                    value.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
                claude.assistant(
                    record.line,
                    value,
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
                claude.user(record.line, value, timestamp, structured, flags, ctx)?;
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
            let mut step = Step::new(StepSource::System);
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
