//! The typed model: lossless round trips, helpful errors, audio alias normalisation.

use atif_schema::{
    AudioMediaType, ContentPart, Error, Message, SchemaVersion, StepSource, Trajectory,
    ValidateOptions, validate,
};
use serde_json::{Value, json};

use crate::{valid_corpus, valid_fixtures};

/// Parses `value` into the typed model and serialises it back, by reference and by moving it
/// (`into_value`); the values must be equal.
fn check_round_trip(name: &str, value: &Value) {
    let trajectory =
        Trajectory::from_value(value).unwrap_or_else(|err| panic!("{name}: does not parse: {err}"));
    assert_eq!(&trajectory.to_value(), value, "{name}: value changed on the round trip");
    let moved = trajectory.clone().into_value();
    assert_eq!(&moved, value, "{name}: into_value differs from to_value");
    let text = trajectory.to_json_string_pretty();
    let reparsed = Trajectory::from_json_str(&text).unwrap();
    assert_eq!(reparsed, trajectory, "{name}: text round trip changed the model");
}

#[test]
fn every_valid_corpus_file_round_trips_losslessly() {
    let files = valid_corpus();
    for (path, value) in &files {
        check_round_trip(&path.display().to_string(), value);
    }
}

#[test]
fn every_own_fixture_round_trips_losslessly() {
    let files = valid_fixtures();
    assert!(files.len() >= 5);
    for (path, value) in &files {
        check_round_trip(&path.display().to_string(), value);
    }
}

#[test]
fn every_own_fixture_is_valid_without_warnings() {
    for (path, value) in valid_fixtures() {
        let report = validate(&value, &ValidateOptions::default());
        assert!(report.findings.is_empty(), "{}: {:?}", path.display(), report.findings);
    }
}

#[test]
fn the_fixtures_cover_content_parts_audio_subagents_and_llm_call_counts() {
    let fixtures = valid_fixtures();
    let find = |name: &str| {
        let (_, value) = fixtures.iter().find(|(path, _)| path.ends_with(name)).unwrap();
        Trajectory::from_value(value).unwrap()
    };
    let multimodal = find("multimodal.json");
    let Message::Parts(parts) = &multimodal.steps[0].message else { panic!("expected parts") };
    assert!(matches!(parts[1], ContentPart::Image { .. }));
    assert!(
        matches!(&parts[2], ContentPart::Audio { source } if source.media_type == AudioMediaType::Wav)
    );
    assert_eq!(
        multimodal.steps[0].message.text(),
        "What is in this picture, and what does the recording say?\n"
    );

    let subagents = find("subagents.json");
    assert_eq!(subagents.subagents().len(), 2);
    assert_eq!(
        subagents.subagents()[1].subagents()[0].trajectory_id.as_deref(),
        Some("researcher-a")
    );
    assert_eq!(subagents.steps[1].llm_call_count, Some(1));
    let refs = subagents.steps[1].results()[1].subagent_trajectory_ref.as_ref().unwrap();
    assert_eq!(refs[0].trajectory_id.as_deref(), Some("researcher-b"));

    let every = find("every-field.json");
    assert_eq!(every.version(), SchemaVersion::V1_8);
    assert_eq!(every.steps[2].source, StepSource::Agent);
    assert_eq!(every.steps[2].tool_calls()[0].arguments["options"]["encoding"], Value::Null);
    // An integer cost stays an integer: the number is kept as written.
    assert_eq!(every.steps[2].metrics.as_ref().unwrap().cost_usd, Some(0.into()));
}

#[test]
fn explicit_nulls_in_typed_fields_read_as_absent_but_nulls_in_extra_are_kept() {
    let value = json!({
        "schema_version": "ATIF-v1.7",
        "session_id": null,
        "agent": {"name": "a", "version": "1", "model_name": null, "extra": {"k": null}},
        "steps": [{"step_id": 1, "source": "user", "message": "m", "model_name": null}]
    });
    let trajectory = Trajectory::from_value(&value).unwrap();
    assert_eq!(trajectory.session_id, None);
    assert_eq!(
        trajectory.to_value(),
        json!({
            "schema_version": "ATIF-v1.7",
            "agent": {"name": "a", "version": "1", "extra": {"k": null}},
            "steps": [{"step_id": 1, "source": "user", "message": "m"}]
        })
    );
}

#[test]
fn audio_media_type_aliases_are_normalised_on_read() {
    for (alias, canonical) in [
        ("audio/mp3", "audio/mpeg"),
        (" AUDIO/X-WAV ", "audio/wav"),
        ("audio/m4a", "audio/mp4"),
        ("audio/x-flac", "audio/flac"),
        ("audio/x-aiff", "audio/aiff"),
        ("audio/ogg", "audio/ogg"),
    ] {
        let value = document_with_part(
            json!({"type": "audio", "source": {"media_type": alias, "path": "a"}}),
        );
        let written = Trajectory::from_value(&value).unwrap().to_value();
        assert_eq!(written["steps"][0]["message"][0]["source"]["media_type"], canonical, "{alias}");
    }
}

#[test]
fn content_part_mistakes_are_errors_at_the_part() {
    for (part, expected) in [
        (
            json!({"type": "audio", "source": {"media_type": "audio/opus", "path": "a"}}),
            "unknown audio media_type `audio/opus`",
        ),
        (
            json!({"type": "image", "source": {"media_type": "image/jpg", "path": "a"}}),
            "unknown image media_type `image/jpg`",
        ),
        (json!({"type": "text"}), "a text part needs `text`"),
        (
            json!({"type": "text", "text": "t", "source": {"media_type": "image/png", "path": "a"}}),
            "cannot have a `source`",
        ),
        (json!({"type": "image", "text": "t"}), "cannot have `text`"),
        (json!({"type": "image"}), "needs a `source`"),
        (
            json!({"type": "image", "source": {"media_type": "image/png", "path": "a", "duration_sec": 1}}),
            "no `duration_sec`",
        ),
        (json!({"type": "video", "text": "t"}), "unknown variant `video`"),
    ] {
        let err = Trajectory::from_value(&document_with_part(part.clone())).unwrap_err();
        let Error::Json { pointer, .. } = &err else { panic!("{err}") };
        assert!(
            pointer.as_deref().unwrap().starts_with("/steps/0/message/0"),
            "{part}: {err} at {pointer:?}"
        );
        assert!(err.to_string().contains(expected), "{part}: {err}");
    }
}

#[test]
fn type_errors_name_the_json_pointer_and_what_was_expected() {
    for (value, pointer, expected) in [
        (
            json!({"schema_version": "ATIF-v2.0", "agent": {"name": "a", "version": "1"}, "steps": []}),
            "/schema_version",
            "unknown schema_version `ATIF-v2.0`",
        ),
        (
            json!({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": 1}, "steps": []}),
            "/agent/version",
            "expected a string",
        ),
        (
            json!({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": [{"step_id": 1, "source": "robot", "message": ""}]}),
            "/steps/0/source",
            "unknown variant `robot`",
        ),
        (
            json!({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": [{"step_id": 1, "source": "user", "message": {"text": "x"}}]}),
            "/steps/0/message",
            "a string or an array of content parts",
        ),
        (
            json!({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1", "model": "m"}, "steps": []}),
            "/agent",
            "unknown field `model`",
        ),
        (
            json!({"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}}),
            "",
            "missing field `steps`",
        ),
    ] {
        let err = Trajectory::from_value(&value).unwrap_err();
        let Error::Json { pointer: found, .. } = &err else { panic!("{err}") };
        assert!(
            found.as_deref().unwrap().starts_with(pointer),
            "{err}: pointer {found:?}, wanted {pointer}"
        );
        assert!(err.to_string().contains(expected), "{err}");
    }
}

#[test]
fn json_syntax_errors_report_line_and_column() {
    let err = Trajectory::from_json_str("{\n  \"schema_version\": \"ATIF-v1.8\",\n  oops\n}")
        .unwrap_err();
    let Error::Json { line, column, message, .. } = &err else { panic!("{err}") };
    assert_eq!((*line, *column), (Some(3), Some(3)), "{message}");
    assert!(message.starts_with("not valid JSON"), "{message}");

    let err = Trajectory::from_json_str("{\"schema_version\": \"ATIF-v1.8\", \"agent\": {\"name\": \"a\", \"version\": \"1\"}, \"steps\": []} x").unwrap_err();
    assert!(err.to_string().contains("trailing characters"), "{err}");
}

fn document_with_part(part: Value) -> Value {
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "a", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": [part]}]
    })
}
