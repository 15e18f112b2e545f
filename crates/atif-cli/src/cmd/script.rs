//! `atif script`: inspect or redact a recorded model script (see `docs/replay.md`).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use atif_replay::{RecordedCall, Script};
use atif_schema::Expected;
use atif_wire::support::gemini_model_from_path;
use atif_wire::{Content, HttpExchange, LlmResponse, Protocol, parse_response, parse_stream};
use serde_json::{Value, json};

use crate::flags::Format;
use crate::input::read_input_expecting;
use crate::output;
use crate::status::invalid;

/// Arguments of `atif script`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The `atif script` subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Print the model, the number of calls and, per call, the tool calls and token usage; for an
    /// HTTP recording, each exchange's endpoint, model, tool calls and tokens; then each MCP
    /// message: its server, who sent it, the tool call or what it answers.
    Show {
        /// The script file (`-` for standard input).
        #[arg(value_name = "FILE")]
        file: String,
        /// Output format: `text` (one line per call and exchange) or `json` (one object:
        /// `model`, `calls`, `exchanges`, `mcp`; see docs/cli.md).
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Replace secrets (API keys, tokens, credentials) in the script, in place and atomically.
    Redact {
        /// The script file.
        #[arg(value_name = "FILE")]
        file: String,
        /// Also redact every match of this regex; repeatable. Redaction refuses to write a file
        /// in which a pattern still matches.
        #[arg(long = "pattern", value_name = "REGEX")]
        patterns: Vec<String>,
    },
}

/// Runs `atif script`: exit 0 on success, 1 when the script is invalid or still holds a secret,
/// 2 when it cannot be read or written.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    match &args.command {
        Command::Show { file, format } => show(file, *format),
        Command::Redact { file, patterns } => redact(file, patterns),
    }
}

fn show(file: &str, format: Format) -> anyhow::Result<ExitCode> {
    let bytes = read_input_expecting(file, Expected::object("a replay script"))?;
    let label = if file == "-" { "<stdin>" } else { file };
    let script = atif_replay::parse_script(&bytes, Path::new(label)).map_err(invalid_input)?;
    // What is shown is redacted like what is saved: a listing gets pasted into issues too.
    let script = atif_replay::redact_script(&script, &[])?;
    match format {
        Format::Text => output::out(|out| out.write_all(render(&script).as_bytes()))?,
        Format::Json => output::out(|out| {
            serde_json::to_writer_pretty(&mut *out, &script_json(&script))?;
            writeln!(out)
        })?,
    }
    Ok(ExitCode::SUCCESS)
}

fn redact(file: &str, patterns: &[String]) -> anyhow::Result<ExitCode> {
    if file == "-" {
        anyhow::bail!(
            "`atif script redact` rewrites a file in place; standard input cannot be used"
        );
    }
    let said = match atif_replay::redact_file(Path::new(file), patterns) {
        Ok(true) => "secrets redacted",
        Ok(false) => "nothing to redact",
        Err(err) => return Err(invalid_input(err)),
    };
    output::out(|out| writeln!(out, "{file}: {said}"))?;
    Ok(ExitCode::SUCCESS)
}

/// A script that is not valid (or that still holds a secret) is invalid input (exit 1), like
/// an invalid trajectory; a file that cannot be read or a bad pattern is not (exit 2).
fn invalid_input(err: atif_replay::Error) -> anyhow::Error {
    match err {
        atif_replay::Error::Io { .. } | atif_replay::Error::Pattern { .. } => err.into(),
        err => invalid(err),
    }
}

/// The JSON output of `script show`: `{"model", "calls": [{"call", "error", "text", "json",
/// "tool_calls": [{"name", "arguments"}], "usage", "chunks"}], "exchanges": [{"exchange",
/// "method", "path", "status", "summary"}]}`.
fn script_json(script: &Script) -> Value {
    let calls: Vec<Value> = script
        .calls
        .iter()
        .enumerate()
        .map(|(idx, call)| {
            let response = reply(call);
            let (text, json) = match response.as_ref().and_then(|r| r.content.as_ref()) {
                Some(Content::Text(text)) => (Some(text.clone()), None),
                Some(Content::Json(value)) => (None, Some(value.clone())),
                None => (None, None),
            };
            let tool_calls: Vec<Value> = response
                .iter()
                .flat_map(|response| &response.tool_calls)
                .map(|call| json!({"name": call.name, "arguments": call.arguments}))
                .collect();
            json!({
                "call": idx + 1,
                "error": call.error,
                "text": text,
                "json": json,
                "tool_calls": tool_calls,
                "usage": response.as_ref().map(|response| response.usage),
                "chunks": call.chunks.as_ref().map(Vec::len),
            })
        })
        .collect();
    let exchanges: Vec<Value> = script
        .exchanges
        .iter()
        .enumerate()
        .map(|(idx, exchange)| {
            json!({
                "exchange": idx + 1,
                "method": exchange.method,
                "path": exchange.path,
                "status": exchange.status,
                "summary": describe_exchange(exchange),
            })
        })
        .collect();
    let mcp: Vec<Value> = mcp_lines(script)
        .into_iter()
        .zip(&script.mcp)
        .enumerate()
        .map(|(idx, (summary, message))| {
            json!({
                "message": idx + 1,
                "server": message.server,
                "from": message.from,
                "method": message.method(),
                "tool": message.tool(),
                "summary": summary,
            })
        })
        .collect();
    json!({"model": script.model, "calls": calls, "exchanges": exchanges, "mcp": mcp})
}

/// One line per MCP message: who sent it, and what it asked or answered (a response names the
/// message it answers, joined by its server and id).
fn mcp_lines(script: &Script) -> Vec<String> {
    let mut requests: std::collections::HashMap<(String, String), usize> =
        std::collections::HashMap::new();
    let mut lines = Vec::with_capacity(script.mcp.len());
    for (idx, message) in script.mcp.iter().enumerate() {
        let mut line = format!("{} {}", message.server, message.from.as_str());
        let key = message.id().map(|id| (message.server.clone(), id.to_string()));
        match (message.method(), message.tool()) {
            (Some(_), Some(tool)) => {
                let arguments = message.message.pointer("/params/arguments").cloned();
                let arguments = arguments.unwrap_or(Value::Null).to_string();
                let _ = write!(line, ": tools/call {tool} {}", shorten(&arguments, 80));
            }
            (Some(method), None) => {
                let _ = write!(line, ": {method}");
            }
            (None, _) => {
                let answered = key.as_ref().and_then(|key| requests.get(key));
                let _ = match answered {
                    Some(number) => write!(line, ": response to {number}"),
                    None => write!(line, ": response"),
                };
                let _ = write!(line, "{}", mcp_result(&message.message));
            }
        }
        if let (Some(key), true) = (key, message.is_request()) {
            requests.insert(key, idx + 1);
        }
        lines.push(line);
    }
    lines
}

/// `: "text…"` for a result's text content, `; error: …` for an error, else nothing.
fn mcp_result(message: &Value) -> String {
    if let Some(error) = message.pointer("/error/message").and_then(Value::as_str) {
        return format!("; error: {}", shorten(error, 80));
    }
    let texts: Vec<&str> = message
        .pointer("/result/content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    match texts.is_empty() {
        true => String::new(),
        false => format!(" {}", quote(&texts.join(""))),
    }
}

/// The recorded reply, assembled from its chunks when it was streamed.
fn reply(call: &RecordedCall) -> Option<LlmResponse> {
    match (&call.response, &call.chunks) {
        (Some(response), _) => Some(response.clone()),
        (None, Some(chunks)) => Some(LlmResponse::from_chunks(chunks)),
        (None, None) => None,
    }
}

fn render(script: &Script) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "model: {}", script.model.as_deref().unwrap_or("(none)"));
    let _ = writeln!(out, "calls: {}", script.calls.len());
    for (idx, call) in script.calls.iter().enumerate() {
        let _ = writeln!(out, "call {}: {}", idx + 1, describe(call));
    }
    if !script.exchanges.is_empty() {
        let _ = writeln!(out, "exchanges: {}", script.exchanges.len());
        for (idx, exchange) in script.exchanges.iter().enumerate() {
            let _ = writeln!(out, "exchange {}: {}", idx + 1, describe_exchange(exchange));
        }
    }
    if !script.mcp.is_empty() {
        let _ = writeln!(out, "mcp messages: {}", script.mcp.len());
        for (idx, line) in mcp_lines(script).into_iter().enumerate() {
            let _ = writeln!(out, "mcp {}: {line}", idx + 1);
        }
    }
    out
}

/// One line about an HTTP exchange: endpoint, model, status when not 200, the reply read with
/// its protocol (tool calls, tokens), events, and a cut.
fn describe_exchange(exchange: &HttpExchange) -> String {
    let mut text = format!("{} {}", exchange.method, exchange.path);
    let model = exchange
        .request
        .get("model")
        .and_then(Value::as_str)
        .or_else(|| gemini_model_from_path(&exchange.path));
    if let Some(model) = model {
        let _ = write!(text, " ({model})");
    }
    if exchange.status != 200 {
        let _ = write!(text, "; status {}", exchange.status);
    }
    let protocol = Protocol::from_path(&exchange.path).filter(|_| exchange.status < 300);
    let reply = match (protocol, &exchange.body, &exchange.events) {
        (Some(protocol), Some(body), _) => Some(parse_response(protocol, body)),
        (Some(protocol), None, Some(events)) => Some(parse_stream(protocol, events)),
        _ => None,
    };
    match reply {
        Some(Ok(response)) => {
            text.push_str("; ");
            text.push_str(&describe_response(&response));
        }
        Some(Err(err)) => {
            let _ = write!(text, "; reply not read: {err}");
        }
        None => {}
    }
    if let Some(events) = &exchange.events {
        // Blocks of comments or `retry:` only are not events a client sees.
        let n_events = events.iter().filter(|event| event.has_data()).count();
        let _ = write!(text, "; streamed in {n_events} events");
    }
    if let Some(cut) = &exchange.cut {
        let _ = write!(text, "; cut midway: {cut}");
    }
    text
}

fn describe(call: &RecordedCall) -> String {
    if let Some(error) = &call.error {
        return format!("failed when recorded: {error}");
    }
    let Some(response) = reply(call) else {
        return "no reply".to_owned();
    };
    let mut text = describe_response(&response);
    if let Some(chunks) = &call.chunks {
        let _ = write!(text, "; streamed in {} chunks", chunks.len());
    }
    text
}

/// The tool calls (or the reply when there are none) and the token usage of a reply.
fn describe_response(response: &LlmResponse) -> String {
    let mut text = if response.tool_calls.is_empty() {
        let reply = match &response.content {
            Some(Content::Text(text)) => format!("text {}", quote(text)),
            Some(Content::Json(value)) => format!("json {}", quote(&value.to_string())),
            None => "empty reply".to_owned(),
        };
        format!("no tool calls ({reply})")
    } else {
        let calls: Vec<String> = response
            .tool_calls
            .iter()
            .map(|call| format!("{} {}", call.name, shorten(&call.arguments.to_string(), 120)))
            .collect();
        format!("tool calls: {}", calls.join(", "))
    };
    let usage = response.usage;
    let _ = write!(
        text,
        "; tokens: prompt {}, completion {}, cached {}",
        usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens
    );
    text
}

fn quote(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// `text` cut to `max` characters, with an ellipsis when it was longer (a tool call writing a
/// whole file should not flood the listing).
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
