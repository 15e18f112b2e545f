//! Files `atif` writes: through symbolic links, and never half a golden or a leftover
//! temporary file, even when the writer is killed.
#![allow(clippy::unwrap_used, reason = "test helpers panic on broken test setup")]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{atif_command, dead_pid, run_with_stdin, stderr, stdout};

fn atif(args: &[&str]) -> std::process::Output {
    run_with_stdin(atif_command(args), b"")
}

/// A run of `n_steps` agent steps, each with a message of about `message_len` bytes.
fn run(tag: &str, n_steps: usize, message_len: usize) -> Value {
    let steps: Vec<Value> = (0..n_steps)
        .map(|idx| {
            json!({
                "step_id": idx + 1, "source": "agent", "model_name": "m-1",
                "message": format!("{tag} {idx} {}", "lorem ipsum ".repeat(message_len / 12)),
            })
        })
        .collect();
    json!({
        "schema_version": "ATIF-v1.6", "session_id": tag,
        "agent": {"name": "agent", "version": "1", "model_name": "m-1"},
        "steps": steps
    })
}

/// The temporary files in `dir`: names starting with `.atif-` or ending in `.tmp`.
fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".atif-") || name.ends_with(".tmp"))
        .collect()
}

#[cfg(unix)]
#[test]
fn check_update_through_a_link_updates_the_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let run_path = dir.path().join("run.json");
    std::fs::write(&run_path, run("one", 2, 20).to_string()).unwrap();
    let target = real.join("golden.json");
    std::fs::write(&target, "stale\n").unwrap();
    let link = dir.path().join("golden.json");
    std::os::unix::fs::symlink("real/golden.json", &link).unwrap();

    let output = atif(&["check", "--update", link.to_str().unwrap(), run_path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "still a link");
    let golden = std::fs::read_to_string(&target).unwrap();
    assert!(golden.contains("\"one 1 "), "the target was updated: {golden}");
    assert!(temp_files(dir.path()).is_empty() && temp_files(&real).is_empty());
    let again = atif(&["check", link.to_str().unwrap(), run_path.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
}

#[test]
fn an_update_removes_temp_files_that_dead_writers_left_beside_the_golden() {
    let dir = tempfile::tempdir().unwrap();
    let run_path = dir.path().join("run.json");
    std::fs::write(&run_path, run("one", 2, 20).to_string()).unwrap();
    let dead = dir.path().join(format!(".atif-{}-AbCdEf.tmp", dead_pid()));
    std::fs::write(&dead, "half a golden").unwrap();
    let golden = dir.path().join("golden.json");
    let output = atif(&["check", "--update", golden.to_str().unwrap(), run_path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!dead.exists(), "the dead writer's temporary file is gone");
    assert!(temp_files(dir.path()).is_empty(), "{:?}", temp_files(dir.path()));
}

#[test]
fn an_update_killed_at_twenty_points_never_breaks_the_golden_or_leaves_a_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("golden.json");
    let golden = golden.to_str().unwrap();
    // Two runs that differ, several megabytes each, so that every update rewrites the golden
    // and writing takes long enough to be interrupted.
    let mut runs = Vec::new();
    let mut texts = Vec::new();
    for tag in ["first", "second"] {
        let path = dir.path().join(format!("{tag}.json"));
        std::fs::write(&path, run(tag, 3000, 1200).to_string()).unwrap();
        let path = path.to_str().unwrap().to_owned();
        let output = atif(&["check", "--update", golden, &path]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        texts.push(std::fs::read_to_string(golden).unwrap());
        runs.push(path);
    }
    // How long one update takes here: the kills are spread over that time, most of them in
    // its second half, where the golden is written.
    let started = Instant::now();
    assert_eq!(atif(&["check", "--update", golden, &runs[0]]).status.code(), Some(0));
    let duration = started.elapsed().as_micros().max(1000) as u64;

    let mut seed: u64 = 0x5eed;
    for round in 0..20 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let delay = duration / 3 + (seed >> 33) % duration;
        let mut child = atif_command(&["check", "--update", golden, &runs[round % 2]])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(delay));
        let _ = child.kill();
        child.wait().unwrap();
        let text = std::fs::read_to_string(golden).unwrap();
        assert!(texts.contains(&text), "round {round}: the golden is neither run's whole text");
    }
    // The next update that writes removes what the killed ones left. It must be the run the
    // golden does not hold now: an update that finds the golden equal writes nothing, and which
    // run the golden holds depends on where the last kill landed.
    let other = usize::from(std::fs::read_to_string(golden).unwrap() == texts[0]);
    let output = atif(&["check", "--update", golden, &runs[other]]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(golden).unwrap(), texts[other]);
    assert!(temp_files(dir.path()).is_empty(), "left behind: {:?}", temp_files(dir.path()));
}
