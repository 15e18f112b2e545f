//! The `atif-fake-provider` binary: its first line, its options, its errors.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use atif_fake_provider::{DEFAULT_COMMAND, DEFAULT_TEXT, SHELL_TOOLS};
use serde_json::json;

use crate::http::post;

#[test]
fn the_binary_prints_its_url_first_and_serves_the_options_given() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_atif-fake-provider"))
        .args(["--command", "echo from-binary", "--model", "only-model"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on http://").map(str::to_owned);
    let served = url.as_deref().map(|addr| {
        let addr = addr.parse().unwrap();
        let body =
            json!({"messages": [{"role": "user", "content": "go"}], "tools": [{"name": "Bash"}]});
        (
            post(addr, "/v1/messages", &body).json(),
            crate::http::request(addr, "GET", "/v1/models", &[], "").json(),
        )
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let (reply, models) = served.unwrap_or_else(|| panic!("first line was {line:?}"));
    assert_eq!(reply["content"][0]["input"], json!({"command": "echo from-binary"}));
    assert_eq!(models["data"][0]["id"], "only-model");
}

#[test]
fn the_help_lists_the_shell_tools_and_prints_each_default_on_its_line() {
    let output =
        Command::new(env!("CARGO_BIN_EXE_atif-fake-provider")).arg("--help").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8(output.stdout).unwrap();
    let line_of = |option: &str| {
        help.lines()
            .find(|line| line.trim_start().starts_with(option))
            .unwrap_or_else(|| panic!("no {option} line in:\n{help}"))
    };
    assert!(line_of("--command").ends_with(&format!("(default: {DEFAULT_COMMAND})")), "{help}");
    assert!(line_of("--text").ends_with(&format!("(default: {DEFAULT_TEXT})")), "{help}");
    let shells = line_of("Shell tools");
    for name in SHELL_TOOLS {
        assert!(shells.contains(name), "{name} missing from {shells:?}");
    }
    assert!(line_of("a call of the first tool offered").contains("JSON Schema"), "{help}");
}

#[test]
fn the_binary_rejects_a_bad_option_with_exit_2() {
    let output = Command::new(env!("CARGO_BIN_EXE_atif-fake-provider"))
        .args(["--fail-status", "abc"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--fail-status expects a whole number, got `abc`"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn the_binary_reports_a_port_in_use() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_atif-fake-provider"))
        .args(["--listen", &addr])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("cannot listen on {addr}")), "{stderr}");
}
