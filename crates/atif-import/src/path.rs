//! Importing from the file system: a log file with the subagents kept in other files (Claude
//! Code `<session>/subagents/agent-<id>.jsonl` or `agent-<id>.jsonl` beside the session, the
//! rollouts of spawned Codex threads).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::context::{Context, Stats};
use crate::draft::Trajectory;
use crate::format::Format;
use crate::formats::claude_code;
use crate::import::{Import, import_raw};
use crate::lines::Records;
use crate::options::ImportOptions;
use crate::{Error, Result};

/// Imports a log file, or a Claude Code session folder, with the subagents kept in other files.
///
/// `path` may be a log file of any format; for a Claude Code transcript `<session>.jsonl`,
/// subagent transcripts in `<session>/subagents/agent-<id>.jsonl` are embedded as
/// `subagent_trajectories` (id `agent-<id>`) and linked from the spawning call's result by the
/// `toolUseId` of `agent-<id>.meta.json`, or else by the `agentId` in the call's
/// `toolUseResult`. The `agent-<id>.jsonl` files that older CLIs write beside the session file
/// are embedded the same way when their first line names the session's `sessionId`. `path` may
/// also be the project folder holding exactly one session file, or the `<session>` folder
/// itself.
///
/// For a Codex rollout, the rollouts of the threads it spawned (files in the same folder whose
/// `session_meta` names this session as `parent_thread_id`) are embedded too, with the child's
/// session id as `trajectory_id`, linked from the spawning call through the
/// `collab_agent_spawn_end` event that names the new thread.
///
/// # Errors
/// [`Error::Io`] when a file cannot be read, [`Error::Load`] when it is larger than
/// [`ImportOptions::max_input_bytes`] or holds binary data, [`Error::NoSession`] when a folder holds no single
/// session file, and every error of [`import`](crate::import), wrapped in [`Error::Log`] for the
/// log file and in [`Error::Subagent`] for a subagent file, so the message names the file.
pub fn import_path(path: &Path, options: &ImportOptions) -> Result<Import> {
    let main = session_file(path)?;
    let bytes = read(&main, options)?;
    let (mut trajectory, format, mut stats) = import_raw(&bytes, options)
        .map_err(|err| Error::Log { path: main.clone(), source: Box::new(err) })?;
    if !trajectory.extra.contains_key("home") {
        // A session file read where the agent keeps it: `<home>/.codex/sessions/…`.
        let home = format
            .home_marker()
            .and_then(|marker| crate::run_dirs::path_before(main.to_str()?, marker));
        if let Some(home) = home {
            trajectory.extra.insert("home".into(), home.into());
        }
    }
    match format {
        Format::ClaudeCode => {
            let folder = main.with_extension("").join("subagents");
            let mut files = if folder.is_dir() { jsonl_files(&folder)? } else { Vec::new() };
            files.extend(sibling_agent_files(&main, trajectory.session_id.as_deref()));
            embed_subagents(&mut trajectory, files, options, &mut stats)?;
        }
        Format::CodexRollout => embed_threads(&mut trajectory, &main, options, &mut stats, 0)?,
        _ => {}
    }
    Ok(Import::from_parts(trajectory, format, stats, options))
}

/// The session file a path names.
fn session_file(path: &Path) -> Result<PathBuf> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    // The `<session>` folder itself: its transcript sits beside it.
    let beside = path.with_extension("jsonl");
    if path.join("subagents").is_dir() && beside.is_file() {
        return Ok(beside);
    }
    let entries =
        std::fs::read_dir(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    let mut sessions: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| {
            !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("agent-"))
        })
        .collect();
    sessions.sort();
    match sessions.len() {
        1 => Ok(sessions.remove(0)),
        0 => Err(Error::NoSession { path: path.to_path_buf(), found: "no .jsonl file".to_owned() }),
        n => Err(Error::NoSession { path: path.to_path_buf(), found: format!("{n} .jsonl files") }),
    }
}

/// Reads a log file through atif-schema's bounded reader: within the options' limit, and
/// stopped at the first byte of binary data.
fn read(path: &Path, options: &ImportOptions) -> Result<Vec<u8>> {
    if let Some(bytes) = read_binary(path, options)? {
        return Ok(bytes);
    }
    atif_schema::read_path(path, options.load_options()).map_err(|err| match err {
        atif_schema::Error::Read { source, .. } => Error::Io { path: path.to_path_buf(), source },
        source => Error::Load { path: path.to_path_buf(), source: Box::new(source) },
    })
}

/// A gzip or protobuf file (`crate::binary`), read whole within the input limit; `None` for
/// any other file, which atif-schema's reader reads (and refuses when it is binary).
fn read_binary(path: &Path, options: &ImportOptions) -> Result<Option<Vec<u8>>> {
    let Ok(file) = std::fs::File::open(path) else { return Ok(None) };
    let mut reader = file.take(options.max_input_bytes().saturating_add(1));
    let (head, n) = read_head(&mut reader).map_err(|source| io_error(path, source))?;
    if !crate::binary::is_binary(&head[..n]) {
        return Ok(None);
    }
    read_rest(head[..n].to_vec(), reader, path, options).map(Some)
}

/// Reads a log from `reader` as [`import_path`] reads a file, for standard input and other
/// streams: gzip and OTLP protobuf (detected from the first bytes) whole, anything else
/// through atif-schema's bounded reader, which stops at the first byte of binary data; both
/// within [`ImportOptions::max_input_bytes`]. `name` names the input in errors
/// (`standard input`). Give the bytes to [`import`](crate::import) or
/// [`import_runs`](crate::import_runs).
///
/// # Errors
/// [`Error::Io`] when the reader fails, [`Error::Load`] when the input is larger than the
/// limit or is binary data of no format that is read.
pub fn read_log(reader: impl Read, name: &Path, options: &ImportOptions) -> Result<Vec<u8>> {
    let mut reader = reader.take(options.max_input_bytes().saturating_add(1));
    let (head, n) = read_head(&mut reader).map_err(|source| io_error(name, source))?;
    if crate::binary::is_binary(&head[..n]) {
        return read_rest(head[..n].to_vec(), reader, name, options);
    }
    let text = name.display().to_string();
    atif_schema::read_reader((&head[..n]).chain(reader), &text, options.load_options()).map_err(
        |err| match err {
            atif_schema::Error::Read { source, .. } => io_error(name, source),
            source => Error::Load { path: name.to_path_buf(), source: Box::new(source) },
        },
    )
}

/// The first (up to) 8 bytes, enough to tell gzip and protobuf from text; a pipe may give
/// them over several reads.
fn read_head(reader: &mut impl Read) -> std::io::Result<([u8; 8], usize)> {
    let mut head = [0_u8; 8];
    let mut n = 0;
    while n < head.len() {
        match reader.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(read) => n += read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok((head, n))
}

/// The rest of a binary input after its `head`, refused past the input limit.
fn read_rest(
    mut bytes: Vec<u8>,
    mut reader: impl Read,
    name: &Path,
    options: &ImportOptions,
) -> Result<Vec<u8>> {
    reader.read_to_end(&mut bytes).map_err(|source| io_error(name, source))?;
    if bytes.len() as u64 > options.max_input_bytes() {
        let source = atif_schema::Error::TooLarge {
            file: name.display().to_string(),
            limit: options.max_input_bytes(),
        };
        return Err(Error::Load { path: name.to_path_buf(), source: Box::new(source) });
    }
    Ok(bytes)
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Io { path: path.to_path_buf(), source }
}

/// The `.jsonl` files of `folder`, sorted.
fn jsonl_files(folder: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(folder)
        .map_err(|source| Error::Io { path: folder.to_path_buf(), source })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// The subagent transcripts Claude Code 2.0 writes beside the session file
/// (`agent-<id>.jsonl` in the project folder) whose first line names `session_id`; none when
/// the folder cannot be listed (the session file itself was readable, which is what was asked).
fn sibling_agent_files(main: &Path, session_id: Option<&str>) -> Vec<PathBuf> {
    let is_agent_file = |file: &Path| {
        file.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("agent-"))
    };
    // A subagent transcript given on its own: its siblings are other subagents, not its own.
    let Some(session_id) = session_id.filter(|_| !is_agent_file(main)) else {
        return Vec::new();
    };
    let folder = folder_of(main);
    let Ok(mut files) = jsonl_files(&folder) else { return Vec::new() };
    files.retain(|file| {
        is_agent_file(file)
            && file.as_path() != main
            && first_record(file)
                .is_some_and(|r| r.get("sessionId").and_then(Value::as_str) == Some(session_id))
    });
    files
}

/// Imports every subagent transcript `agent-<id>.jsonl` in `files` and links it to the call
/// that spawned it.
fn embed_subagents(
    trajectory: &mut Trajectory,
    files: Vec<PathBuf>,
    options: &ImportOptions,
    stats: &mut Stats,
) -> Result<()> {
    for file in files {
        let Some(stem) = file.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        let agent_id = stem.strip_prefix("agent-").unwrap_or(&stem).to_owned();
        let display = file.display().to_string();
        let trajectory_id = format!("agent-{agent_id}");
        if trajectory
            .subagents
            .iter()
            .any(|s| s.trajectory_id.as_deref() == Some(trajectory_id.as_str()))
        {
            stats.warn_file(format!(
                "{display}: the session file already holds agent {agent_id}'s lines; not embedded twice"
            ));
            continue;
        }
        let bytes = read(&file, options)?;
        let wrap = |err: Error| Error::Subagent { path: file.clone(), source: Box::new(err) };
        let mut records = Records::open(&bytes, options.strict()).map_err(wrap)?;
        let mut ctx = Context::new(Format::ClaudeCode, options.strict(), records.layout());
        let mut sub = claude_code::import_chain(&mut records, &mut ctx).map_err(wrap)?;
        sub.crashed |= ctx.close(&mut records);
        stats.absorb(ctx.stats, &display);
        sub.trajectory_id = Some(trajectory_id.clone());
        let call_id = meta_tool_use_id(&file.with_extension("meta.json"), options)
            .or_else(|| claude_code::call_of_agent(trajectory, &agent_id));
        let linked =
            call_id.is_some_and(|call_id| trajectory.add_subagent_ref(&call_id, &trajectory_id));
        if !linked {
            stats.warn_file(format!("{display}: no call of the session spawned agent {agent_id}; embedded without a link"));
        }
        trajectory.subagents.push(sub.into_atif());
    }
    Ok(())
}

/// The `toolUseId` recorded in a subagent's `.meta.json`, if the file exists and has one.
fn meta_tool_use_id(path: &Path, options: &ImportOptions) -> Option<String> {
    let bytes = atif_schema::read_path(path, options.load_options()).ok()?;
    let meta: Value = serde_json::from_slice(&bytes).ok()?;
    meta.get("toolUseId").and_then(Value::as_str).map(str::to_owned)
}

/// How deep spawned Codex threads are followed (a guard against files that name each other).
const MAX_THREAD_DEPTH: usize = 8;

/// Embeds the rollouts beside `main` whose first line names `trajectory`'s session as parent.
fn embed_threads(
    trajectory: &mut Trajectory,
    main: &Path,
    options: &ImportOptions,
    stats: &mut Stats,
    depth: usize,
) -> Result<()> {
    let Some(session) = trajectory.session_id.clone() else { return Ok(()) };
    let folder = folder_of(main);
    let entries =
        std::fs::read_dir(&folder).map_err(|source| Error::Io { path: folder.clone(), source })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file() && p.extension().is_some_and(|e| e == "jsonl") && p.as_path() != main
        })
        .collect();
    files.sort();
    for file in files {
        let Some((thread, Some(parent))) = rollout_ids(&file) else { continue };
        if parent != session || thread == session {
            continue;
        }
        let display = file.display().to_string();
        if depth >= MAX_THREAD_DEPTH {
            stats.warn_file(format!(
                "{display}: spawned more than {MAX_THREAD_DEPTH} levels deep; not embedded"
            ));
            continue;
        }
        let bytes = read(&file, options)?;
        let mut child_options = options.clone();
        child_options.set_format(Some(Format::CodexRollout));
        let wrap = |err: Error| Error::Subagent { path: file.clone(), source: Box::new(err) };
        let (mut child, _, child_stats) = import_raw(&bytes, &child_options).map_err(wrap)?;
        stats.absorb(child_stats, &display);
        embed_threads(&mut child, &file, options, stats, depth + 1)?;
        child.trajectory_id = Some(thread.clone());
        let call =
            trajectory.spawned_threads.iter().find(|(t, _)| *t == thread).map(|(_, c)| c.clone());
        let linked = call.is_some_and(|call| trajectory.add_subagent_ref(&call, &thread));
        if !linked {
            stats.warn_file(format!(
                "{display}: no call of the session spawned thread {thread}; embedded without a link"
            ));
        }
        trajectory.subagents.push(child.into_atif());
    }
    Ok(())
}

/// The thread id and parent thread id recorded on the first line (`session_meta`) of a
/// rollout, reading nothing else of the file.
fn rollout_ids(path: &Path) -> Option<(String, Option<String>)> {
    let record = first_record(path)?;
    if record.get("type")?.as_str()? != "session_meta" {
        return None;
    }
    let payload = record.get("payload")?;
    let thread = payload.get("id")?.as_str()?.to_owned();
    let parent = payload
        .pointer("/source/subagent/thread_spawn/parent_thread_id")
        .or_else(|| payload.get("parent_thread_id"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some((thread, parent))
}

/// The folder holding `file` (`.` for a bare file name).
fn folder_of(file: &Path) -> PathBuf {
    match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// How much of a file's first line is read to find its first record: the `session_meta` of a
/// Codex rollout carries the instructions, but not megabytes of them. A longer first line is
/// not looked at (the file is then not taken for a subagent or a spawned thread).
const MAX_FIRST_LINE: u64 = 16 * 1024 * 1024;

/// The first line of a file parsed as JSON, reading nothing else of the file.
pub(crate) fn first_record(path: &Path) -> Option<Value> {
    use std::io::{BufRead, Read};

    let mut first = Vec::new();
    let file = std::fs::File::open(path).ok()?;
    std::io::BufReader::new(file.take(MAX_FIRST_LINE)).read_until(b'\n', &mut first).ok()?;
    serde_json::from_slice(&first).ok()
}
