//! The `atif-fake-provider` binary: the fake model server for tests in any language.

#![forbid(unsafe_code)]
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a command-line tool prints")]

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use atif_fake_provider::{
    Config, DEFAULT_COMMAND, DEFAULT_TEXT, FakeProvider, Fault, SHELL_TOOLS, Sampling, ScriptedCall,
};

/// The help text; the defaults come from the library's constants, printed on one line each.
fn usage() -> String {
    format!(
        "usage: atif-fake-provider [OPTIONS]

A scripted fake model server (OpenAI Chat Completions and Responses, Anthropic Messages, Gemini).
Prints `listening on http://HOST:PORT` as its first line, then serves until killed.

Each reply, in this order of preference:
  call N of --call, when the conversation holds N tool results and that tool is offered;
  the final text `The command printed: ...` after a tool result;
  JSON fitting the schema a structured request gives;
  a call of the first shell tool offered, with --command;
  a call of the first tool offered, with the smallest arguments its JSON Schema allows;
  the plain text (--text).
Shell tools (any case): {shell}

options:
  --listen ADDR          address to listen on (default 127.0.0.1:0, a free port)
  --command CMD          shell command a shell tool is called with (default: {command})
  --text TEXT            plain-text reply when no tool is offered (default: {text})
  --call NAME=JSON       script the next tool call: NAME with the JSON object of arguments
                         (repeatable, in order)
  --parallel-calls       send the --call calls whose tools are offered together, in the
                         first reply, as parallel tool calls
  --model ID             a model id GET /v1/models lists (repeatable; default fake-model)
  --fail-status CODE     answer every model request with this HTTP status
  --cut-after N          cut every reply after N SSE events (a JSON body after half of it)
  --event-delay-ms MS    pause before each SSE event after the first
  --keepalives           add `: ping` comments and `retry: 3000` to every stream
  --sample-seed N        sampling mode: each conversation calls two tools, varied per
                         conversation by the draws below, seeded with N (default 0)
  --sample-extra P       sampling: probability of a third call between the two
  --sample-swap P        sampling: probability that the two calls swap
  --sample-fail P        sampling: probability that the second request fails (500)
  --sample-token-band F  sampling: token counts scaled by a factor in 1-F..=1+F
  -h, --help             print this help",
        shell = SHELL_TOOLS.join(", "),
        command = DEFAULT_COMMAND,
        text = DEFAULT_TEXT,
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = match parse(&args) {
        Ok(Some(config)) => config,
        Ok(None) => {
            println!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("atif-fake-provider: {message}\n\n{}", usage());
            return ExitCode::from(2);
        }
    };
    let provider = match FakeProvider::start(config) {
        Ok(provider) => provider,
        Err(err) => {
            let cause = std::error::Error::source(&err)
                .map(|cause| format!(": {cause}"))
                .unwrap_or_default();
            eprintln!("atif-fake-provider: {err}{cause}");
            return ExitCode::from(2);
        }
    };
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "listening on {}", provider.url()).and_then(|()| stdout.flush()).is_err() {
        return ExitCode::from(2);
    }
    loop {
        std::thread::park();
    }
}

/// The configuration the arguments ask for; `None` for `--help`.
fn parse(args: &[String]) -> Result<Option<Config>, String> {
    let mut config = Config::default();
    let mut models = Vec::new();
    let mut calls = Vec::new();
    let mut sampling: Option<Sampling> = None;
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            return Ok(None);
        }
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--listen" => {
                let addr = value()?;
                let addr: SocketAddr = addr.parse().map_err(|_| {
                    format!("--listen expects HOST:PORT such as 127.0.0.1:8080, got `{addr}`")
                })?;
                config.set_listen(addr);
            }
            "--command" => config.set_command(value()?.as_str()),
            "--text" => config.set_text(value()?.as_str()),
            "--model" => models.push(value()?.clone()),
            "--call" => calls.push(scripted_call(value()?)?),
            "--fail-status" => {
                let code = number(flag, value()?)?;
                let code = u16::try_from(code).ok().filter(|code| (100..=599).contains(code));
                let code = code
                    .ok_or_else(|| format!("{flag} expects an HTTP status between 100 and 599"))?;
                config.set_fault(Some(Fault::Status(code)));
            }
            "--cut-after" => {
                let after_events = usize::try_from(number(flag, value()?)?).unwrap_or(usize::MAX);
                config.set_fault(Some(Fault::CutStream { after_events }));
            }
            "--keepalives" => config.set_keepalives(true),
            "--parallel-calls" => config.set_parallel_calls(true),
            "--sample-seed"
            | "--sample-extra"
            | "--sample-swap"
            | "--sample-fail"
            | "--sample-token-band" => {
                let value = value()?;
                let sampling = sampling.get_or_insert(Sampling {
                    seed: 0,
                    extra: 0.0,
                    swap: 0.0,
                    fail: 0.0,
                    token_band: 0.0,
                });
                set_sampling(sampling, flag, value)?;
            }
            "--event-delay-ms" => {
                config.set_event_delay(Duration::from_millis(number(flag, value()?)?))
            }
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    if !models.is_empty() {
        config.set_models(models);
    }
    config.set_sampling(sampling);
    config.set_calls(calls);
    Ok(Some(config))
}

/// A `--call NAME=JSON` value.
fn scripted_call(value: &str) -> Result<ScriptedCall, String> {
    let expected = || format!("--call expects NAME=JSON with a JSON object, got `{value}`");
    let (name, arguments) = value.split_once('=').ok_or_else(expected)?;
    let arguments: serde_json::Value = serde_json::from_str(arguments).map_err(|_| expected())?;
    if name.is_empty() || !arguments.is_object() {
        return Err(expected());
    }
    Ok(ScriptedCall { name: name.to_owned(), arguments })
}

/// Sets the `--sample-*` value `flag` names.
fn set_sampling(sampling: &mut Sampling, flag: &str, value: &str) -> Result<(), String> {
    let rate = || match value.parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(format!("{flag} expects a number between 0 and 1, got `{value}`")),
    };
    match flag {
        "--sample-seed" => sampling.seed = number(flag, value)?,
        "--sample-extra" => sampling.extra = rate()?,
        "--sample-swap" => sampling.swap = rate()?,
        "--sample-fail" => sampling.fail = rate()?,
        _ => sampling.token_band = rate()?,
    }
    Ok(())
}

fn number(flag: &str, value: &str) -> Result<u64, String> {
    value.parse().map_err(|_| format!("{flag} expects a whole number, got `{value}`"))
}
