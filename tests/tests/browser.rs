//! The pages in a real browser: headless Chromium (Debian's, which `cargo xtask e2e-setup`
//! installs) opens the pages `atif view`, `atif diff --html` and `atif envelope --html` write,
//! from `file://`. Each page runs its own checks when its URL ends in `#selftest` (folding,
//! unfolding, the jumps, the bars' drawn widths) and writes what it saw into
//! `<pre id="selftest">`, which `--dump-dom` returns.
//!
//! Every planted payload in the runs tries to change the page's title or to reach a loopback
//! listener the test holds open: the title must stay, and the listener must see no connection.
#![allow(clippy::unwrap_used, reason = "test code")]

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tests::e2e;

/// Headless Chromium, offline, with a fresh profile per start.
struct Chromium(PathBuf);

impl Chromium {
    fn find() -> Option<Chromium> {
        e2e::chromium().map(Chromium)
    }

    /// The DOM of `url` after its scripts ran.
    fn dump_dom(&self, url: &str) -> String {
        let output = self.run(&["--virtual-time-budget=5000", "--dump-dom", url]);
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// A 1280×900 screenshot of `url`, decoded: (width, height, distinct colours).
    fn screenshot(&self, url: &str, png: &Path) -> (u32, u32, usize) {
        let target = format!("--screenshot={}", png.display());
        self.run(&[
            "--virtual-time-budget=5000",
            "--window-size=1280,900",
            "--hide-scrollbars",
            &target,
            url,
        ]);
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let frame = reader.next_frame(&mut pixels).unwrap();
        let channels = frame.color_type.samples();
        let colours: std::collections::BTreeSet<&[u8]> =
            pixels[..frame.buffer_size()].chunks(channels).collect();
        (frame.width, frame.height, colours.len())
    }

    fn run(&self, args: &[&str]) -> Output {
        let profile = tempfile::tempdir().unwrap();
        let output = Command::new(&self.0)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
            ])
            .args([
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "Chromium failed: {}", e2e::describe(&output));
        output
    }
}

/// A loopback listener that counts the connections made to it.
fn listener() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            seen.fetch_add(1, Ordering::SeqCst);
            // Answer at once, each connection on its own thread (a browser may open one and
            // send nothing), so a page that does fetch is not left waiting.
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                let mut buffer = [0; 4096];
                let _ = (&stream).read(&mut buffer);
                let reply =
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
                let _ = (&stream).write_all(reply.as_bytes());
            });
        }
    });
    (port, count)
}

/// Markup that would change the title or fetch from the listener, were it ever read as HTML.
fn payload(port: u16) -> String {
    let url = format!("http://127.0.0.1:{port}");
    format!(
        "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">\
         <img src=\"{url}/img\"><script src=\"{url}/script.js\"></script>\
         <link rel=stylesheet href=\"{url}/style.css\"><iframe src=\"{url}/frame\"></iframe>\
         <style>body{{background:url({url}/bg)}}</style><a href=\"javascript:document.title='pwned'\">x</a>"
    )
}

/// A run with every kind of step, the payload in every field a page shows, an image beside it,
/// a subagent, an error and a crashed end.
fn planted_run(port: u16) -> Value {
    let hostile = payload(port);
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "browser-agent", "version": "1", "model_name": "model-a"},
        "steps": [
            {"step_id": 1, "source": "system", "message": hostile},
            {"step_id": 2, "source": "user", "message": [
                {"type": "text", "text": hostile},
                {"type": "image", "source": {"media_type": "image/png", "path": "images/shot.png"}}]},
            {"step_id": 3, "source": "agent", "message": hostile, "reasoning_content": hostile,
             "tool_calls": [{"tool_call_id": "c1", "function_name": "grep", "arguments": {"q": hostile}}],
             "observation": {"results": [{"source_call_id": "c1", "content": hostile.repeat(20), "extra": {"is_error": true}}]},
             "metrics": {"prompt_tokens": 900, "completion_tokens": 40, "cached_tokens": 300}},
            {"step_id": 4, "source": "agent", "message": "delegating",
             "tool_calls": [{"tool_call_id": "c2", "function_name": "task", "arguments": {}}],
             "observation": {"results": [{"source_call_id": "c2", "content": "done",
                "subagent_trajectory_ref": [{"trajectory_id": "sub-1"}]}]},
             "metrics": {"prompt_tokens": 1200, "completion_tokens": 80}},
            {"step_id": 5, "source": "agent", "message": "again",
             "tool_calls": [{"tool_call_id": "c3", "function_name": "grep", "arguments": {}}]}
        ],
        "subagent_trajectories": [{
            "schema_version": "ATIF-v1.8", "trajectory_id": "sub-1",
            "agent": {"name": "helper", "version": "1", "model_name": "model-s"},
            "steps": [{"step_id": 1, "source": "agent", "message": hostile}]
        }],
        "extra": {"crashed": true}
    })
}

/// A 16×16 PNG with a red and a blue half.
fn png_image() -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, 16, 16);
    encoder.set_color(png::ColorType::Rgb);
    let mut writer = encoder.write_header().unwrap();
    let pixels: Vec<u8> =
        (0..256).flat_map(|i| if i % 16 < 8 { [220, 30, 30] } else { [30, 30, 220] }).collect();
    writer.write_image_data(&pixels).unwrap();
    writer.finish().unwrap();
    bytes
}

/// Runs the real `atif` with `args` in `dir`; its exit code must be `code`.
fn atif(dir: &Path, args: &[&str], code: i32) {
    let output = e2e::atif_binary();
    let output = Command::new(output).args(args).current_dir(dir).output().unwrap();
    assert_eq!(output.status.code(), Some(code), "{}", e2e::describe(&output));
}

/// The page's self-test results, from the dumped DOM.
fn selftest(dom: &str) -> Value {
    // The last one: the page's script names the element in a comment.
    let start =
        dom.rfind("<pre id=\"selftest\">").unwrap_or_else(|| panic!("no self-test in {dom}"));
    let text = &dom[start + "<pre id=\"selftest\">".len()..];
    let text = &text[..text.find("</pre>").unwrap()];
    let text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_run_page_in_a_browser_holds_every_step_folds_jumps_and_runs_nothing_from_the_content() {
    let Some(chromium) = Chromium::find() else { return };
    let (port, connections) = listener();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("images")).unwrap();
    std::fs::write(dir.path().join("images/shot.png"), png_image()).unwrap();
    std::fs::write(dir.path().join("run.json"), planted_run(port).to_string()).unwrap();
    atif(dir.path(), &["view", "run.json", "-o", "run.html"], 0);
    let dom =
        chromium.dump_dom(&format!("file://{}#selftest", dir.path().join("run.html").display()));
    let result = selftest(&dom);
    assert_eq!(result["title"], "atif view: browser-agent", "{result}");
    assert!(dom.contains("<title>atif view: browser-agent</title>"));
    assert_eq!(
        result["step_ids"],
        json!(["s-1", "s-2", "s-3", "s-4", "s-a1-1", "s-5"]),
        "{result}"
    );
    for check in
        ["folded_hidden", "unfolded_shown", "refolded_hidden", "subagent_folds", "subagent_unfolds"]
    {
        assert_eq!(result[check], true, "{check}: {result}");
    }
    assert_eq!(result["next_call"], json!(["s-3", "s-5"]), "{result}");
    assert_eq!(result["next_error"], "s-3", "{result}");
    assert_eq!(result["to_step_2"], "s-2", "{result}");
    assert_eq!(result["images"], json!([true]), "the image beside the run shows: {result}");
    // The payload is on the page, as text.
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"));
    assert_eq!(connections.load(Ordering::SeqCst), 0, "the page reached the network");
}

#[test]
fn the_listener_sees_a_page_that_fetches_so_its_silence_means_something() {
    let Some(chromium) = Chromium::find() else { return };
    let (port, connections) = listener();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("control.html");
    std::fs::write(&page, format!("<!DOCTYPE html><title>control</title>{}", payload(port)))
        .unwrap();
    let dom = chromium.dump_dom(&format!("file://{}", page.display()));
    assert!(dom.contains("<title>pwned</title>"), "{dom}");
    assert!(connections.load(Ordering::SeqCst) > 0, "the control page made no request");
}

/// A golden of `n` steps each calling `read`, and a run with one step inserted and one changed.
fn diff_pages(dir: &Path, port: u16) {
    let step = |i: usize, function: &str, message: &str| {
        json!({"step_id": i, "source": "agent", "message": message,
               "tool_calls": [{"tool_call_id": format!("c{i}"), "function_name": function, "arguments": {"i": i}}],
               "metrics": {"prompt_tokens": 100 * i, "completion_tokens": 10}})
    };
    let run = |steps: Vec<Value>| json!({"schema_version": "ATIF-v1.8", "agent": {"name": "d", "version": "1"}, "steps": steps});
    let golden: Vec<Value> = (1..=40).map(|i| step(i, &format!("f{i}"), "same")).collect();
    let mut actual = golden.clone();
    actual.insert(9, step(0, "probe", &payload(port)));
    actual[30] = step(0, "write", "changed");
    for (idx, step) in actual.iter_mut().enumerate() {
        step["step_id"] = json!(idx + 1);
    }
    std::fs::write(dir.join("golden.json"), run(golden).to_string()).unwrap();
    std::fs::write(dir.join("run.json"), run(actual).to_string()).unwrap();
    atif(dir, &["diff", "--html", "diff.html", "golden.json", "run.json"], 1);
    // What CI keeps of a failing check: the page in the artifacts folder.
    atif(dir, &["check", "--artifacts", "bundle", "golden.json", "run.json"], 1);
}

#[test]
fn the_diff_page_in_a_browser_opens_at_the_first_divergence_and_jumps_to_the_next_change() {
    let Some(chromium) = Chromium::find() else { return };
    let (port, connections) = listener();
    let dir = tempfile::tempdir().unwrap();
    diff_pages(dir.path(), port);
    let dom =
        chromium.dump_dom(&format!("file://{}#selftest", dir.path().join("diff.html").display()));
    let result = selftest(&dom);
    assert_eq!(result["title"], "atif diff", "{result}");
    assert_eq!(result["steps"], 40 + 41, "every step of both lanes: {result}");
    assert_eq!(result["first"], "first", "{result}");
    assert_eq!(result["first_in_view"], true, "{result}");
    assert_eq!(result["preview"], true, "{result}");
    assert_eq!(result["next_change"], json!(["first", "r-31"]), "{result}");
    assert_eq!(result["folded_hidden"], true, "{result}");
    assert_eq!(result["unfolded_shown"], true, "{result}");
    assert_eq!(result["preview_in_first_screen"], true, "{result}");
    // The bundle's page alone shows, without scrolling, which step diverged and how.
    let bundled = dir.path().join("bundle/golden.html");
    let dom = chromium.dump_dom(&format!("file://{}#selftest", bundled.display()));
    let result = selftest(&dom);
    assert_eq!(result["preview_in_first_screen"], true, "{result}");
    assert_eq!(result["first"], "first", "{result}");
    let header = &dom[dom.find("<header>").unwrap()..dom.find("</header>").unwrap()];
    assert!(
        header.contains("first divergence, step 10</a>: step 10 (agent) inserted: calls probe"),
        "{header}"
    );
    assert_eq!(connections.load(Ordering::SeqCst), 0, "the page reached the network");
}

/// An envelope golden of 20 runs, 2 of which also call a tool named by the payload, and 20 new
/// runs, 18 of which do: `atif envelope --html envelope.html` draws the verdict (changed).
fn envelope_page(dir: &Path, port: u16) {
    let tool = payload(port);
    let write = |name: String, planted: bool| {
        let mut steps = vec![json!({"step_id": 1, "source": "agent", "message": "",
            "tool_calls": [{"tool_call_id": "c1", "function_name": "read", "arguments": {}}]})];
        if planted {
            steps.push(json!({"step_id": 2, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": "c2", "function_name": tool, "arguments": {}}]}));
        }
        let run = json!({"schema_version": "ATIF-v1.8", "agent": {"name": "e", "version": "1"}, "steps": steps});
        std::fs::write(dir.join(&name), run.to_string()).unwrap();
        name
    };
    let golden: Vec<String> = (1..=20).map(|i| write(format!("g{i}.json"), i <= 2)).collect();
    let new: Vec<String> = (1..=20).map(|i| write(format!("n{i}.json"), i <= 18)).collect();
    let args = |head: &[&str], runs: &[String]| -> Vec<String> {
        head.iter().map(|s| s.to_string()).chain(runs.iter().cloned()).collect()
    };
    let update = args(&["envelope", "--update", "envelope.json"], &golden);
    atif(dir, &update.iter().map(String::as_str).collect::<Vec<_>>(), 0);
    let check = args(&["envelope", "--html", "envelope.html", "envelope.json"], &new);
    atif(dir, &check.iter().map(String::as_str).collect::<Vec<_>>(), 1);
}

#[test]
fn the_envelope_page_in_a_browser_draws_both_sets_as_bars_and_runs_nothing_from_tool_names() {
    let Some(chromium) = Chromium::find() else { return };
    let (port, connections) = listener();
    let dir = tempfile::tempdir().unwrap();
    envelope_page(dir.path(), port);
    let url = format!("file://{}#selftest", dir.path().join("envelope.html").display());
    let dom = chromium.dump_dom(&url);
    let result = selftest(&dom);
    assert_eq!(result["title"], "atif envelope", "{result}");
    let bars = result["bars"].as_array().unwrap();
    let row = |label: &str| {
        bars.iter().find(|row| row[0] == label).unwrap_or_else(|| panic!("{label}: {result}"))
    };
    // The planted tool is a row of text: its rate moved from 2/20 to 18/20, and the bars say so.
    let planted = row(&format!("runs calling {}", payload(port)));
    assert_eq!(planted[1], "moved", "{planted}");
    let (golden, actual) = (planted[2].as_i64().unwrap(), planted[3].as_i64().unwrap());
    assert!(golden > 0 && actual > 4 * golden, "golden {golden} px, new {actual} px: {result}");
    let read = row("runs calling read");
    assert_eq!(read[1], "", "{read}");
    assert!(read[2].as_i64().unwrap() > 0 && read[2] == read[3], "{read}");
    assert_eq!(connections.load(Ordering::SeqCst), 0, "the page reached the network");
}

#[test]
fn screenshots_of_every_page_kind_are_not_blank() {
    let Some(chromium) = Chromium::find() else { return };
    let (port, _) = listener();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("images")).unwrap();
    std::fs::write(dir.path().join("images/shot.png"), png_image()).unwrap();
    std::fs::write(dir.path().join("one.json"), planted_run(port).to_string()).unwrap();
    atif(dir.path(), &["view", "one.json", "-o", "run.html"], 0);
    diff_pages(dir.path(), port);
    envelope_page(dir.path(), port);
    for page in ["run", "diff", "envelope"] {
        // `#top` names no element: the page opens at its top, header and all.
        let url = format!("file://{}#top", dir.path().join(format!("{page}.html")).display());
        let (width, height, colours) =
            chromium.screenshot(&url, &dir.path().join(format!("{page}.png")));
        assert_eq!((width, height), (1280, 900));
        assert!(colours > 50, "{page}: only {colours} colours, the page is blank");
    }
}
