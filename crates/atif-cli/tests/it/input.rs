//! Reading inputs: the one loader's limits and strictness, through every command that reads a
//! trajectory.

use std::process::Stdio;

use crate::{atif_command, run_with_stdin, stderr, stdout};

/// Every command that reads one trajectory, with `FILE` where the input goes.
const READERS: &[&[&str]] = &[
    &["validate", "FILE"],
    &["normalize", "FILE"],
    &["shape", "FILE"],
    &["upgrade", "FILE"],
    &["diff", "FILE", "FILE"],
    &["check", "GOLDEN", "FILE"],
    &["script", "show", "FILE"],
];

fn with_file<'a>(args: &[&'a str], file: &'a str, golden: &'a str) -> Vec<&'a str> {
    args.iter()
        .map(|arg| match *arg {
            "FILE" => file,
            "GOLDEN" => golden,
            other => other,
        })
        .collect()
}

#[test]
fn endless_binary_devices_fail_at_their_first_byte_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("golden.json");
    let golden = golden.to_str().unwrap();
    for device in ["/dev/zero", "/dev/urandom"] {
        if !std::path::Path::new(device).exists() {
            eprintln!("skipped: {device} does not exist here");
            continue;
        }
        for args in READERS {
            let args = with_file(args, device, golden);
            let output = atif_command(&args).stdin(Stdio::null()).output().unwrap();
            assert_eq!(output.status.code(), Some(1), "{args:?}: {}", stderr(&output));
            let text = format!("{}{}", stdout(&output), stderr(&output));
            // Random bytes may happen to start like UTF-16 or like JSON; each has its message.
            let explained =
                ["cannot appear in JSON text", "cannot start JSON", "UTF-16", "invalid JSON"];
            assert!(explained.iter().any(|what| text.contains(what)), "{args:?}: {text}");
        }
    }
}

#[test]
fn the_binary_data_error_names_what_each_command_reads() {
    for (args, what) in [
        (&["normalize", "-"][..], "not an ATIF trajectory"),
        (&["validate", "-"], "not an ATIF trajectory"),
        (&["script", "show", "-"], "not a replay script"),
        (&["import", "-"], "not an agent log"),
    ] {
        let output = run_with_stdin(atif_command(args), b"\x89PNG\r\n");
        assert_eq!(output.status.code(), Some(1), "{args:?}: {}", stderr(&output));
        let text = format!("{}{}", stdout(&output), stderr(&output));
        assert!(text.contains(&format!("this is binary data, {what}")), "{args:?}: {text}");
    }
}

#[test]
fn standard_input_is_read_within_the_limit_too() {
    let output = run_with_stdin(atif_command(&["normalize", "-"]), &[0u8; 100_000]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .starts_with("error: standard input: invalid JSON at line 1, column 1: byte 0x00"),
        "{}",
        stderr(&output)
    );

    let text = br#"{"schema_version": "ATIF-v1.8", "steps": []}"#;
    let output = run_with_stdin(atif_command(&["normalize", "--max-input-bytes", "20", "-"]), text);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        "error: standard input is larger than the input limit of 20 bytes\n"
    );
}

#[test]
fn a_file_over_the_limit_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    std::fs::write(&path, br#"{"schema_version": "ATIF-v1.8", "steps": []}"#).unwrap();
    let path = path.to_str().unwrap();
    for limit in ["44", "1KiB", "1k"] {
        let output =
            atif_command(&["--max-input-bytes", limit, "normalize", path]).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{limit}: {}", stderr(&output));
    }
    let output = atif_command(&["normalize", path, "--max-input-bytes", "43"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        format!("error: {path} is larger than the input limit of 43 bytes\n")
    );
    let output = atif_command(&["normalize", path, "--max-input-bytes", "lots"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("expected a byte count such as 4GiB"), "{}", stderr(&output));
}

#[test]
fn a_fifo_is_read_as_a_stream_and_stopped_at_the_limit() {
    use std::io::Write;

    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("run.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|status| status.success()) {
        eprintln!("skipped: mkfifo is not available here");
        return;
    }
    let path = fifo.to_str().unwrap();
    // Writes `text` into the FIFO (once, or until the reader goes away) on a thread of its own,
    // and returns how many bytes went in.
    let writer = |text: Vec<u8>, forever: bool| {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut file = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            let mut written = 0_u64;
            while file.write_all(&text).is_ok() {
                written += text.len() as u64;
                if !forever {
                    break;
                }
            }
            written
        })
    };

    let once = writer(br#"{"schema_version": "ATIF-v1.8", "steps": []}"#.to_vec(), false);
    let output = atif_command(&["normalize", path]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains(r#""schema_version": "ATIF-v1.8""#), "{}", stdout(&output));
    once.join().unwrap();

    // JSON text that never ends: only the limit stops it, and the writer then gets a broken
    // pipe, having written about the limit and not much more.
    let endless = writer(vec![b'['; 64 * 1024], true);
    let output = atif_command(&["normalize", "--max-input-bytes", "1MiB", path]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        format!("error: {path} is larger than the input limit of 1048576 bytes\n")
    );
    let written = endless.join().unwrap();
    assert!(written < 8 * 1024 * 1024, "the reader stopped, yet {written} bytes went in");
}

#[test]
fn what_is_not_a_trajectory_never_becomes_a_golden() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        ("hello.json", br#"{"hello": "world"}"#, "/schema_version: missing"),
        ("dup.json", br#"{"schema_version": "ATIF-v1.8", "steps": [], "steps": []}"#, "/steps: this key repeats"),
        (
            "huge.json",
            br#"{"schema_version": "ATIF-v1.8", "steps": [{"step_id": 1180591620717411303424, "source": "user", "message": "hi"}]}"#,
            "/steps/0/step_id: an integer outside",
        ),
        ("list.json", b"[]", "(root): the root is an array"),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let golden = dir.path().join(format!("golden-{name}"));
        let args = ["check", "--update", golden.to_str().unwrap(), path.to_str().unwrap()];
        let output = atif_command(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{name}: {}", stderr(&output));
        assert!(stderr(&output).contains(expected), "{name}: {}", stderr(&output));
        assert!(!golden.exists(), "{name}: no golden written");
        for command in ["upgrade", "shape"] {
            let output = atif_command(&[command, path.to_str().unwrap()]).output().unwrap();
            assert_eq!(output.status.code(), Some(1), "{command} {name}: {}", stderr(&output));
            assert!(stderr(&output).contains(expected), "{command} {name}: {}", stderr(&output));
        }
    }
}
