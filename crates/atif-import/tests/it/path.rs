//! Importing from the file system: Claude Code sessions with subagent files.

use atif_import::{Error, ImportOptions, import_path};

use crate::support::{assert_valid, chain, fixture, fixtures, functions, joins, sources, steps};

#[test]
fn a_session_folder_embeds_its_subagents_linked_by_meta_file_or_agent_id() {
    let imported =
        import_path(&fixtures().join("claude-code/project"), &ImportOptions::default()).unwrap();
    let t = &imported.trajectory();
    assert_valid(t, "claude-code/project");
    assert_eq!(sources(t), "uaa");
    assert_eq!(functions(t), ["Task", "Task"]);
    let results = steps(t)[1]["observation"]["results"].as_array().unwrap();
    // a7f3 is linked through agent-a7f3.meta.json, b9c1 through toolUseResult.agentId.
    assert_eq!(results[0]["subagent_trajectory_ref"][0]["trajectory_id"], "agent-a7f3");
    assert_eq!(results[1]["subagent_trajectory_ref"][0]["trajectory_id"], "agent-b9c1");
    let subs = t["subagent_trajectories"].as_array().unwrap();
    assert_eq!(subs.len(), 2);
    for (sub, id, answer) in [
        (&subs[0], "agent-a7f3", "2 TODOs: a.py:3, b.py:9"),
        (&subs[1], "agent-b9c1", "No FIXME found."),
    ] {
        assert_eq!(sub["trajectory_id"], id);
        assert_eq!(sources(sub), "uaa");
        assert_eq!(functions(sub), ["Grep"]);
        assert_eq!(joins(sub).len(), 1);
        assert_eq!(sub["agent"]["model_name"], "claude-haiku-4-5");
        assert_eq!(steps(sub)[2]["message"], answer);
    }
    assert!(imported.stats().warnings().is_empty(), "{:?}", imported.stats().warnings());
    // 6 session lines and 4 lines in each subagent file.
    assert_eq!(imported.stats().records(), 6 + 4 + 4);
}

#[test]
fn the_session_file_and_the_session_folder_give_the_same_import_as_the_project_folder() {
    let project =
        import_path(&fixtures().join("claude-code/project"), &ImportOptions::default()).unwrap();
    let file = import_path(
        &fixtures().join("claude-code/project/sess-0002.jsonl"),
        &ImportOptions::default(),
    )
    .unwrap();
    let session =
        import_path(&fixtures().join("claude-code/project/sess-0002"), &ImportOptions::default())
            .unwrap();
    assert_eq!(project.trajectory(), file.trajectory());
    assert_eq!(project.trajectory(), session.trajectory());
}

#[test]
fn an_unlinked_subagent_is_embedded_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures().join("claude-code/project");
    std::fs::copy(src.join("sess-0002.jsonl"), dir.path().join("sess-0002.jsonl")).unwrap();
    let subagents = dir.path().join("sess-0002/subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    std::fs::copy(
        src.join("sess-0002/subagents/agent-b9c1.jsonl"),
        subagents.join("agent-zz00.jsonl"),
    )
    .unwrap();
    let imported = import_path(dir.path(), &ImportOptions::default()).unwrap();
    let t = &imported.trajectory();
    assert_eq!(t["subagent_trajectories"][0]["trajectory_id"], "agent-zz00");
    assert!(
        imported.stats().warnings()[0]
            .ends_with("no call of the session spawned agent zz00; embedded without a link")
    );
}

#[test]
fn a_bad_line_in_a_subagent_file_names_the_file_then_the_line_once() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixtures().join("claude-code/project");
    std::fs::copy(src.join("sess-0002.jsonl"), dir.path().join("sess-0002.jsonl")).unwrap();
    let subagents = dir.path().join("sess-0002/subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    let broken = subagents.join("agent-zz00.jsonl");
    let user = r#"{"type":"user","message":{"role":"user","content":"hi"}}"#;
    std::fs::write(&broken, format!("{user}\n{{\"type\": }}\n{{}}\n")).unwrap();
    let mut strict = ImportOptions::default();
    strict.set_strict(true);
    let err = import_path(dir.path(), &strict).unwrap_err();
    assert!(
        matches!(&err, Error::Subagent { source, .. } if matches!(**source, Error::NotJson { line: 2, .. })),
        "{err:?}"
    );
    assert_eq!(err.to_string(), format!("subagent file {}", broken.display()));
    assert_eq!(
        chain(&err),
        format!(
            "subagent file {}: line 2 is not JSON: expected value at column 10",
            broken.display()
        )
    );
}

#[test]
fn folders_without_one_session_and_missing_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = import_path(dir.path(), &ImportOptions::default()).unwrap_err();
    assert!(matches!(err, Error::NoSession { .. }));
    assert!(err.to_string().ends_with("found no .jsonl file"), "{err}");
    std::fs::write(dir.path().join("a.jsonl"), "{}\n").unwrap();
    std::fs::write(dir.path().join("b.jsonl"), "{}\n").unwrap();
    assert!(
        import_path(dir.path(), &ImportOptions::default())
            .unwrap_err()
            .to_string()
            .ends_with("found 2 .jsonl files")
    );
    let missing =
        import_path(&dir.path().join("nope.jsonl"), &ImportOptions::default()).unwrap_err();
    assert!(matches!(missing, Error::Io { .. }));
    let Error::Io { source, .. } = &missing else { unreachable!() };
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
    // The message names the path; the operating system's reason is the source, shown once.
    let nope = dir.path().join("nope.jsonl");
    assert_eq!(missing.to_string(), format!("cannot read {}", nope.display()));
    assert_eq!(chain(&missing), format!("cannot read {}: {source}", nope.display()));
}

const PARENT: &str =
    "codex-rollout/threads/rollout-2026-03-02T10-00-00-019c1111-0000-7000-8000-00000000aaaa.jsonl";
const CHILD_ID: &str = "019c1111-0000-7000-8000-00000000bbbb";

#[test]
fn a_codex_rollout_embeds_the_threads_it_spawned_from_its_folder() {
    let imported = import_path(&fixtures().join(PARENT), &ImportOptions::default()).unwrap();
    let t = &imported.trajectory();
    assert_valid(t, PARENT);
    assert_eq!(sources(t), "uaaa");
    assert_eq!(functions(t), ["spawn_agent", "exec_command"]);
    let spawn = &steps(t)[1]["observation"]["results"][0];
    assert_eq!(spawn["source_call_id"], "call_SPAWNSPAWNSPAWNSPAWN01");
    assert_eq!(spawn["subagent_trajectory_ref"][0]["trajectory_id"], CHILD_ID);
    // Only the child is embedded, not the unrelated session of the same folder.
    let subs = t["subagent_trajectories"].as_array().unwrap();
    assert_eq!(subs.len(), 1);
    assert_eq!(subs[0]["trajectory_id"], CHILD_ID);
    assert_eq!(sources(&subs[0]), "uaa");
    assert_eq!(functions(&subs[0]), ["exec_command"]);
    assert_eq!(subs[0]["final_metrics"]["total_prompt_tokens"], 6100);
    assert_eq!(imported.stats().records(), 12 + 8);
    assert!(imported.stats().warnings().is_empty(), "{:?}", imported.stats().warnings());
}

#[test]
fn a_spawned_thread_imported_alone_has_no_subagents() {
    let child = fixtures()
        .join(format!("codex-rollout/threads/rollout-2026-03-02T10-00-03-{CHILD_ID}.jsonl"));
    let imported = import_path(&child, &ImportOptions::default()).unwrap();
    assert!(imported.trajectory().get("subagent_trajectories").is_none());
    assert_eq!(imported.trajectory()["session_id"], CHILD_ID);
}

#[test]
fn subagent_files_beside_the_session_are_embedded_when_they_name_its_session() {
    // Claude Code 2.0 writes `agent-<id>.jsonl` into the project folder, beside the session;
    // agent-f00f.jsonl belongs to another session and stays out.
    for path in ["claude-code/project-2.0", "claude-code/project-2.0/sess-0004.jsonl"] {
        let imported = import_path(&fixtures().join(path), &ImportOptions::default()).unwrap();
        let t = &imported.trajectory();
        assert_valid(t, path);
        assert_eq!(sources(t), "uaa", "{path}");
        let subs = t["subagent_trajectories"].as_array().unwrap();
        assert_eq!(subs.len(), 1, "{path}");
        assert_eq!(subs[0]["trajectory_id"], "agent-d00d");
        assert_eq!(functions(&subs[0]), ["Grep"]);
        let result = &steps(t)[1]["observation"]["results"][0];
        assert_eq!(result["subagent_trajectory_ref"][0]["trajectory_id"], "agent-d00d");
        assert!(imported.stats().warnings().is_empty(), "{:?}", imported.stats().warnings());
    }
}

#[test]
fn a_bad_line_in_a_log_file_names_the_file_and_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.jsonl");
    std::fs::write(&log, "{\"type\":\"turn.started\"}\n{\"type\": }\n").unwrap();
    let mut strict = ImportOptions::default();
    strict.set_strict(true);
    let err = import_path(&log, &strict).unwrap_err();
    assert!(
        matches!(&err, Error::Log { source, .. } if matches!(**source, Error::NotJson { line: 2, .. }))
    );
    // The file, then the cause: each once.
    assert_eq!(err.to_string(), log.display().to_string());
    assert_eq!(
        chain(&err),
        format!("{}: line 2 is not JSON: expected value at column 10", log.display())
    );
}

#[test]
fn a_subagent_file_given_on_its_own_is_that_subagent_s_trajectory() {
    let rel = "claude-code/project/sess-0002/subagents/agent-a7f3.jsonl";
    let imported = import_path(&fixtures().join(rel), &ImportOptions::default()).unwrap();
    let t = &imported.trajectory();
    assert_valid(t, rel);
    assert_eq!(sources(t), "uaa");
    assert_eq!(functions(t), ["Grep"]);
    assert!(t.get("subagent_trajectories").is_none());
    assert!(imported.stats().warnings().is_empty(), "{:?}", imported.stats().warnings());
}

#[test]
fn a_log_file_is_read_within_the_limit_and_binary_data_is_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.jsonl");
    std::fs::write(&log, fixture("codex-exec/basic.jsonl")).unwrap();
    let size = std::fs::metadata(&log).unwrap().len();
    let mut options = ImportOptions::default();
    assert_eq!(options.max_input_bytes(), atif_schema::DEFAULT_MAX_INPUT_BYTES);
    options.set_max_input_bytes(size - 1);
    let err = import_path(&log, &options).unwrap_err();
    assert!(
        matches!(&err, Error::Load { source, .. }
            if matches!(**source, atif_schema::Error::TooLarge { limit, .. } if limit == size - 1)),
        "{err:?}"
    );
    assert_eq!(
        chain(&err),
        format!(
            "cannot load {0}: {0} is larger than the input limit of {1} bytes",
            log.display(),
            size - 1
        )
    );
    options.set_max_input_bytes(size);
    assert!(import_path(&log, &options).is_ok());

    let binary = dir.path().join("image.jsonl");
    std::fs::write(&binary, b"{\"type\":\"turn.started\"}\n\x00\x01\x02").unwrap();
    let err = import_path(&binary, &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Load { source, .. }
            if matches!(**source, atif_schema::Error::NotTrajectory { line: Some(2), .. })),
        "{err:?}"
    );
}
