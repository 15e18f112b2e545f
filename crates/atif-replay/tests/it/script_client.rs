//! `ScriptClient`: a test's script recorded through the live client or replayed, in each record
//! mode, on real files in temp dirs; every replay failure names the command that re-records.

use std::path::Path;
use std::sync::Arc;

use atif_replay::{
    Error, FakeClient, LlmClient, LlmResponse, RecordMode, ScriptClient, ScriptOptions,
    read_script, script_options,
};

use crate::{ask, echo_model};

/// The command every failure of these tests ends with: this crate, this test.
fn command(test: &str) -> String {
    format!("ATIF_RECORD=1 cargo test -p atif-replay script_client::{test}")
}

fn options(dir: &Path, mode: RecordMode) -> ScriptOptions {
    let mut options = ScriptOptions::new(dir);
    options.set_package(Some("atif-replay".to_owned()));
    options.set_mode(Some(mode));
    options
}

/// A live client that must not be built: opening with it fails if the mode records.
fn no_live() -> Result<FakeClient, &'static str> {
    Err("the live client was built")
}

/// Records `questions` as script `name` in mode `once` (the script being missing).
async fn record(dir: &Path, name: &str, questions: &[&str]) {
    let model =
        ScriptClient::open(name, &options(dir, RecordMode::Once), || Ok::<_, Error>(echo_model()))
            .unwrap();
    assert!(model.is_recording());
    for question in questions {
        model.complete(ask(question)).await.unwrap();
    }
    model.finish().unwrap();
}

fn texts(dir: &Path, name: &str) -> Vec<String> {
    let script = read_script(&dir.join("tests/scripts").join(format!("{name}.json"))).unwrap();
    script.calls.iter().map(|call| call.response.as_ref().unwrap().text()).collect()
}

#[tokio::test]
async fn once_records_a_missing_script_then_replays_it_without_the_live_client() {
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), "calc", &["a", "b"]).await;
    assert_eq!(texts(dir.path(), "calc"), ["reply to a", "reply to b"]);

    let replay =
        ScriptClient::open("calc", &options(dir.path(), RecordMode::Once), no_live).unwrap();
    assert!(!replay.is_recording());
    assert_eq!(replay.path(), Path::new("tests/scripts/calc.json"));
    assert_eq!(replay.complete(ask("a")).await.unwrap().text(), "reply to a");
    assert_eq!(replay.complete(ask("b")).await.unwrap().text(), "reply to b");
    replay.finish().unwrap();
    assert_eq!(replay.model(), Some("echo-1"));
}

#[tokio::test]
async fn none_fails_on_a_missing_script_naming_the_file_and_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let err =
        ScriptClient::open("calc", &options(dir.path(), RecordMode::None), no_live).unwrap_err();
    assert!(matches!(err, Error::ScriptMissing { on_ci: false, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "no replay script tests/scripts/calc.json: the record mode is `none`, so it is \
             replayed and never recorded; record it where the live model is reachable with: {}",
            command("none_fails_on_a_missing_script_naming_the_file_and_the_command")
        )
    );
    assert!(!dir.path().join("tests").exists(), "nothing was written");
}

#[tokio::test]
async fn all_re_records_an_existing_script() {
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), "calc", &["a"]).await;
    let live = FakeClient::from_responses(Some("m-2"), vec![LlmResponse::from_text("new")]);
    let model =
        ScriptClient::open("calc", &options(dir.path(), RecordMode::All), || Ok::<_, Error>(live))
            .unwrap();
    assert!(model.is_recording());
    model.complete(ask("a")).await.unwrap();
    model.finish().unwrap();
    assert_eq!(texts(dir.path(), "calc"), ["new"]);
}

#[tokio::test]
async fn new_replays_what_matches_records_the_rest_and_drops_what_went_unused() {
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), "calc", &["a", "b"]).await;
    let live = Arc::new(FakeClient::from_responses(None, vec![LlmResponse::from_text("live c")]));
    let model = ScriptClient::open("calc", &options(dir.path(), RecordMode::New), {
        let live = live.clone();
        move || Ok::<_, Error>(live)
    })
    .unwrap();
    assert_eq!(model.complete(ask("a")).await.unwrap().text(), "reply to a");
    assert_eq!(model.complete(ask("c")).await.unwrap().text(), "live c");
    model.finish().unwrap();
    assert_eq!(live.calls(), 1, "only the new request reached the live client");
    assert_eq!(texts(dir.path(), "calc"), ["reply to a", "live c"]);

    let replay =
        ScriptClient::open("calc", &options(dir.path(), RecordMode::None), no_live).unwrap();
    replay.complete(ask("a")).await.unwrap();
    replay.complete(ask("c")).await.unwrap();
    replay.finish().unwrap();
}

#[tokio::test]
async fn every_replay_failure_ends_with_the_command_that_re_records() {
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), "calc", &["a", "b"]).await;
    let open = || ScriptClient::open("calc", &options(dir.path(), RecordMode::None), no_live);
    let rerecord = format!(
        "to re-record the script: {}",
        command("every_replay_failure_ends_with_the_command_that_re_records")
    );

    let drift = open().unwrap();
    let err = drift.complete(ask("changed")).await.unwrap_err();
    let message = err.to_string();
    assert_eq!(
        message.lines().next(),
        Some("request drift at call #1: the request differs from the one recorded for reply #1.")
    );
    assert!(message.contains("/messages/0/content: \"a\" -> \"changed\""), "{message}");
    assert_eq!(message.lines().last(), Some(rerecord.as_str()), "{message}");

    let fewer = open().unwrap();
    fewer.complete(ask("a")).await.unwrap();
    let message = fewer.finish().unwrap_err().to_string();
    assert!(message.starts_with("1 of the 2 recorded replies in tests/scripts/calc.json"));
    assert!(message.ends_with(&format!("\n{rerecord}")), "{message}");

    let more = open().unwrap();
    more.complete(ask("a")).await.unwrap();
    more.complete(ask("b")).await.unwrap();
    let message = more.complete(ask("c")).await.unwrap_err().to_string();
    assert!(message.starts_with("agent requested reply #3"), "{message}");
    assert!(message.ends_with(&format!("\n{rerecord}")), "{message}");
    assert_eq!(more.record_command(), rerecord.trim_start_matches("to re-record the script: "));
}

#[tokio::test]
async fn a_damaged_script_names_itself_and_the_command_and_keeps_the_parse_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tests/scripts")).unwrap();
    std::fs::write(dir.path().join("tests/scripts/calc.json"), "{\"format\": 3").unwrap();
    let err =
        ScriptClient::open("calc", &options(dir.path(), RecordMode::Once), no_live).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot replay tests/scripts/calc.json; if it is damaged or outdated, re-record it \
             with: {}",
            command("a_damaged_script_names_itself_and_the_command_and_keeps_the_parse_error")
        )
    );
    let source = std::error::Error::source(&err).unwrap().to_string();
    assert!(source.contains("calc.json:1:"), "{source}");
}

#[tokio::test]
async fn a_live_client_that_cannot_be_built_fails_the_recording_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let err = ScriptClient::open("calc", &options(dir.path(), RecordMode::All), || {
        Err::<FakeClient, _>("OPENAI_API_KEY is not set")
    })
    .unwrap_err();
    assert_eq!(
        crate::chain(&err),
        "cannot build the live client to record tests/scripts/calc.json: OPENAI_API_KEY is not set"
    );
}

#[test]
fn a_script_name_that_leaves_the_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err =
        ScriptClient::open("../calc", &options(dir.path(), RecordMode::All), no_live).unwrap_err();
    assert!(matches!(err, Error::ScriptName { .. }), "{err:?}");
}

#[test]
fn the_options_macro_names_this_crate_and_its_scripts_folder() {
    let options = script_options!();
    assert_eq!(options.package(), Some("atif-replay"));
    assert_eq!(options.crate_dir(), Path::new(env!("CARGO_MANIFEST_DIR")));
    assert_eq!(options.dir(), Path::new("tests/scripts"));
    assert_eq!(options.mode(), None, "read from ATIF_RECORD and CI when a client opens");
}
