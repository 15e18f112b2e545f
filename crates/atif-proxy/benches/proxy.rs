//! Measures the record/replay server: replay latency added per request (p50, p99) for a
//! 200 KB request answered with a 100-event stream, throughput with 32 concurrent clients,
//! memory for a 1,000-exchange script, and record-mode time to first byte against the
//! upstream's own. Run `cargo bench -p atif-proxy --bench proxy`; figures go to
//! docs/performance.md.
#![allow(clippy::print_stdout, clippy::unwrap_used, reason = "a measuring program")]

use std::path::Path;
use std::time::{Duration, Instant};

use atif_proxy::{Options, start};
use atif_replay::{HttpExchange, Script, SseEvent, write_script};
use axum::body::{Body, Bytes};
use serde_json::{Value, json};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result {
    let args: Vec<String> = std::env::args().collect();
    // The memory figure is taken in a fresh process, so nothing else lives in its heap.
    if let Some(at) = args.iter().position(|arg| arg == "--memory-of") {
        return memory_child(Path::new(&args[at + 1]));
    }
    if args.iter().any(|arg| arg == "--record-memory-of") {
        return record_memory_child();
    }
    if args.iter().any(|arg| arg == "--record-memory") {
        return record_memory();
    }
    if let Some(at) = args.iter().position(|arg| arg == "--instructions-of") {
        return instructions_child(&args[at + 1], args[at + 2].parse()?);
    }
    if args.iter().any(|arg| arg == "--list") {
        // `cargo bench -- --list` asks benchmark harnesses for their names.
        println!("proxy: bench");
        return Ok(());
    }
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    if args.iter().any(|arg| arg == "--diagnose") {
        return diagnose();
    }
    if args.iter().any(|arg| arg == "--instructions") {
        return instructions();
    }
    memory()?;
    record_memory()?;
    runtime.block_on(latency())?;
    runtime.block_on(throughput())?;
    runtime.block_on(time_to_first_byte())?;
    Ok(())
}

/// A Chat Completions request of about `size` bytes: a long user message of ordinary words.
fn request_of(size: usize, tag: &str) -> Value {
    let words = ["the", "agent", "reads", "a", "file", "and", "calls", "a", "tool", "then"];
    let mut text = String::with_capacity(size);
    let mut idx = 0;
    while text.len() < size {
        text.push_str(words[idx % words.len()]);
        text.push(' ');
        idx += 1;
    }
    json!({"model": "gpt-bench", "stream": true, "messages": [
        {"role": "system", "content": "You are a benchmark."},
        {"role": "user", "content": format!("{tag} {text}")},
    ]})
}

/// `n` Chat Completions stream events of a short text, then `[DONE]`.
fn events(n: usize) -> Vec<SseEvent> {
    let mut events: Vec<SseEvent> = (0..n - 1)
        .map(|idx| {
            SseEvent::new(
                None,
                json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": "gpt-bench",
                       "choices": [{"index": 0, "delta": {"content": format!("token {idx} ")}}]}),
            )
        })
        .collect();
    events.push(SseEvent::from_text(None, "[DONE]"));
    events
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn micros(duration: Duration) -> String {
    format!("{:.0} µs", duration.as_secs_f64() * 1e6)
}

/// Sends `body` to `url` and reads the whole reply, returning how long it took.
async fn timed_post(client: &reqwest::Client, url: &str, body: &str) -> Result<Duration> {
    let started = Instant::now();
    let reply = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await?;
    assert_eq!(reply.status(), 200);
    reply.bytes().await?;
    Ok(started.elapsed())
}

async fn latency() -> Result {
    const RUNS: usize = 400;
    const WARMUP: usize = 20;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("latency.script.json");
    let request = request_of(200 * 1024, "same");
    let exchange = HttpExchange::new("POST", "/v1/chat/completions", request.clone(), 200)
        .with_events(events(100));
    let wire: String = exchange.events_wire().concat();
    let mut script = Script::new(None);
    script.exchanges = vec![exchange; RUNS + WARMUP];
    write_script(&path, &script, &[])?;
    drop(script);

    // The baseline: a server that answers every request with the same bytes, unmatched.
    let baseline_url = plain_server(Bytes::from(wire)).await?;

    let mut options = Options::replay(&path);
    options.set_quiet(true);
    let proxy = start(&options).await?;
    let replay_url = format!("{}/v1/chat/completions", proxy.url());
    let body = request.to_string();
    let client = reqwest::Client::new();
    let mut replay = Vec::with_capacity(RUNS);
    let mut baseline = Vec::with_capacity(RUNS);
    for run in 0..RUNS + WARMUP {
        let through_replay = timed_post(&client, &replay_url, &body).await?;
        let direct = timed_post(&client, &baseline_url, &body).await?;
        if run >= WARMUP {
            replay.push(through_replay);
            baseline.push(direct);
        }
    }
    proxy.finish().await?;
    replay.sort();
    baseline.sort();
    println!(
        "replay latency, {} KB request, 100-event stream, {RUNS} requests: \
         replay p50 {} p99 {}; same bytes from a plain server p50 {} p99 {}; \
         added p50 {} p99 {}",
        body.len() / 1024,
        micros(percentile(&replay, 0.5)),
        micros(percentile(&replay, 0.99)),
        micros(percentile(&baseline, 0.5)),
        micros(percentile(&baseline, 0.99)),
        micros(percentile(&replay, 0.5).saturating_sub(percentile(&baseline, 0.5))),
        micros(percentile(&replay, 0.99).saturating_sub(percentile(&baseline, 0.99))),
    );
    Ok(())
}

async fn throughput() -> Result {
    const CLIENTS: usize = 32;
    const TURNS: usize = 100;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("throughput.script.json");
    let mut script = Script::new(None);
    for client in 0..CLIENTS {
        for turn in 0..TURNS {
            let request = request_of(1024, &format!("client {client} turn {turn}"));
            let reply = json!({"id": "chatcmpl-bench", "object": "chat.completion",
                               "choices": [{"index": 0, "message": {"role": "assistant", "content": format!("reply {client}.{turn}")}, "finish_reason": "stop"}]});
            script.exchanges.push(
                HttpExchange::new("POST", "/v1/chat/completions", request, 200).with_body(reply),
            );
        }
    }
    write_script(&path, &script, &[])?;
    drop(script);
    let mut options = Options::replay(&path);
    options.set_quiet(true);
    let proxy = start(&options).await?;
    let url = format!("{}/v1/chat/completions", proxy.url());
    let started = Instant::now();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let url = url.clone();
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                for turn in 0..TURNS {
                    let body =
                        request_of(1024, &format!("client {client} turn {turn}")).to_string();
                    timed_post(&http, &url, &body).await.map_err(|err| err.to_string())?;
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    let elapsed = started.elapsed();
    proxy.finish().await?;
    let requests = CLIENTS * TURNS;
    println!(
        "replay throughput, {CLIENTS} concurrent clients, {requests} requests of 1 KB with JSON \
         replies from a {}-exchange script: {:.0} requests/s ({:.2} s)",
        requests,
        requests as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64()
    );
    Ok(())
}

fn memory() -> Result {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("memory.script.json");
    let mut script = Script::new(None);
    for idx in 0..1000 {
        let request = request_of(10 * 1024, &format!("exchange {idx}"));
        script.exchanges.push(
            HttpExchange::new("POST", "/v1/chat/completions", request, 200).with_events(events(50)),
        );
    }
    write_script(&path, &script, &[])?;
    let size = std::fs::metadata(&path)?.len();
    let output = std::process::Command::new(std::env::current_exe()?)
        .arg("--memory-of")
        .arg(&path)
        .output()?;
    let report = String::from_utf8_lossy(&output.stdout);
    println!(
        "memory, 1,000-exchange script ({:.1} MB on disk; 10 KB requests, 50-event streams): {}",
        size as f64 / 1e6,
        report.trim()
    );
    Ok(())
}

/// The size of the request body [`record_memory`] records.
const RECORDED_BODY_BYTES: usize = 200_000_000;

/// Memory of a recording of one 200 MB request, in a fresh process.
fn record_memory() -> Result {
    let output =
        std::process::Command::new(std::env::current_exe()?).arg("--record-memory-of").output()?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned().into());
    }
    let report = String::from_utf8_lossy(&output.stdout);
    println!("memory, recording one 200 MB request: {}", report.trim());
    Ok(())
}

/// In a fresh process: how far the peak resident memory rises above what the process held
/// before, while a recording server forwards one 200 MB Chat Completions request to an upstream
/// (in this process, reading the body as it arrives and keeping none of it) and saves the
/// script. The client's request text exists before the first figure is taken.
fn record_memory_child() -> Result {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let body = Bytes::from(request_of(RECORDED_BODY_BYTES, "big").to_string());
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("big.script.json");
    let report = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let upstream = format!("http://{}", listener.local_addr()?);
        let app = axum::Router::new().fallback(|body: Body| async move {
            let mut stream = body.into_data_stream();
            let mut received = 0usize;
            while let Some(Ok(chunk)) = futures_util::StreamExt::next(&mut stream).await {
                received += chunk.len();
            }
            let reply = json!({"id": "chatcmpl-big", "object": "chat.completion", "model": "gpt-bench",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": format!("read {received} bytes")}, "finish_reason": "stop"}]});
            axum::response::Response::builder()
                .header("content-type", "application/json")
                .body(Body::from(reply.to_string()))
                .unwrap()
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        let before = resident_kb()?;
        reset_peak();
        let mut options = Options::record(&path);
        options.set_quiet(true).set_upstream(upstream);
        let proxy = start(&options).await?;
        let started = Instant::now();
        let reply = reqwest::Client::new()
            .post(format!("{}/v1/chat/completions", proxy.url()))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await?;
        let status = reply.status();
        reply.bytes().await?;
        // The two phases' peaks apart: forwarding (the body read and sent, its JSON kept),
        // then saving the script.
        let forwarding = status_kb("VmHWM:")?;
        reset_peak();
        proxy.finish().await?;
        let took = started.elapsed();
        let saving = status_kb("VmHWM:")?;
        let peak = forwarding.max(saving);
        let size = std::fs::metadata(&path)?.len();
        let mb = |kb: i64| kb as f64 * 1024.0 / 1e6;
        Ok::<_, Box<dyn std::error::Error>>(format!(
            "status {status}, {:.0} MB body, script {:.0} MB; peak resident memory {:.0} MB above \
             the {:.0} MB held before ({:.2}x the body; forwarding {:.0} MB, saving {:.0} MB), \
             in {:.1} s",
            body.len() as f64 / 1e6,
            size as f64 / 1e6,
            mb(peak - before),
            mb(before),
            mb(peak - before) / (body.len() as f64 / 1e6),
            mb(forwarding - before),
            mb(saving - before),
            took.as_secs_f64()
        ))
    })?;
    println!("{report}");
    Ok(())
}

/// Resets the peak resident size the kernel reports (`VmHWM`) to the current one, so the peak
/// read later is this phase's (Linux 4.0 and later; elsewhere the peak stays the process's).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// In a fresh process: the resident memory before and after a replay server loads `path`.
fn memory_child(path: &Path) -> Result {
    let before = resident_kb()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let started = Instant::now();
    let proxy = runtime.block_on(async {
        let mut options = Options::replay(path);
        options.set_quiet(true);
        start(&options).await
    })?;
    let loaded = started.elapsed();
    let after = resident_kb()?;
    let peak = status_kb("VmHWM:")?;
    // A second server over the same script: its parse reuses the memory the allocator kept
    // from the first one's, so what the resident size grows by now is about what one loaded
    // script keeps.
    let second = runtime.block_on(async {
        let mut options = Options::replay(path);
        options.set_quiet(true);
        start(&options).await
    })?;
    let kept = resident_kb()? - after;
    println!(
        "resident memory grows by {:.1} MB when the server loads it ({:.1} MB -> {:.1} MB; peak \
         {:.1} MB while loading), in {:.0} ms; a second server loading it adds {:.1} MB, about \
         what a loaded script keeps",
        (after - before) as f64 / 1024.0,
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        peak as f64 / 1024.0,
        loaded.as_secs_f64() * 1e3,
        kept as f64 / 1024.0
    );
    drop((proxy, second));
    Ok(())
}

fn resident_kb() -> Result<i64> {
    status_kb("VmRSS:")
}

/// A figure of `/proc/self/status` in kB: `VmRSS:` (resident now), `VmHWM:` (the peak).
fn status_kb(field: &str) -> Result<i64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status.lines().find(|line| line.starts_with(field)).ok_or("no such field")?;
    Ok(line.split_whitespace().nth(1).ok_or("no value")?.parse()?)
}

async fn time_to_first_byte() -> Result {
    const RUNS: usize = 200;
    // An upstream that sends the first event at once and the other 99 after 2 ms, so that
    // a proxy that buffered the stream would show it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let upstream = format!("http://{}", listener.local_addr()?);
    let app = axum::Router::new().fallback(|_body: Bytes| async {
        let events: Vec<String> = events(100).iter().map(SseEvent::to_wire).collect();
        let stream = futures_util::stream::unfold((events, 0usize), |(events, idx)| async move {
            if idx == 1 {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            let event = events.get(idx)?.clone();
            Some((Ok::<_, std::io::Error>(Bytes::from(event)), (events, idx + 1)))
        });
        axum::response::Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(stream))
            .unwrap()
    });
    tokio::spawn(async move { axum::serve(listener, app).await });

    let dir = tempfile::tempdir()?;
    let mut options = Options::record(dir.path().join("ttfb.script.json"));
    options.set_quiet(true).set_upstream(upstream.clone());
    let proxy = start(&options).await?;
    let client = reqwest::Client::new();
    let body = request_of(1024, "ttfb").to_string();
    let mut direct = Vec::with_capacity(RUNS);
    let mut recorded = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        direct.push(first_byte(&client, &format!("{upstream}/v1/chat/completions"), &body).await?);
        recorded.push(
            first_byte(&client, &format!("{}/v1/chat/completions", proxy.url()), &body).await?,
        );
    }
    proxy.finish().await?;
    direct.sort();
    recorded.sort();
    println!(
        "record time to first byte, {RUNS} streams: through the proxy p50 {} p99 {}; the \
         upstream directly p50 {} p99 {} (the rest of each stream follows 2 ms later)",
        micros(percentile(&recorded, 0.5)),
        micros(percentile(&recorded, 0.99)),
        micros(percentile(&direct, 0.5)),
        micros(percentile(&direct, 0.99)),
    );
    Ok(())
}

/// The time from sending `body` to the first chunk of the reply; the rest is read too.
async fn first_byte(client: &reqwest::Client, url: &str, body: &str) -> Result<Duration> {
    let started = Instant::now();
    let mut reply = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await?;
    reply.chunk().await?;
    let first = started.elapsed();
    while reply.chunk().await?.is_some() {}
    Ok(first)
}

/// Where the time of one 200 KB request goes (run with `-- --diagnose`): the parts of
/// normalising it, each the best of 20 runs, so the figures say what the work costs rather
/// than how busy the machine is.
fn diagnose() -> Result {
    let request = request_of(200 * 1024, "same");
    let body = request.to_string();
    // The same size of text, with words that make the secret scanner look closer.
    let wordy = json!({"messages": [{"role": "user", "content": body.replace("file", "token")}]});
    let time = |label: &str, f: &dyn Fn()| {
        let best = (0..20)
            .map(|_| {
                let started = Instant::now();
                f();
                started.elapsed()
            })
            .min()
            .unwrap_or_default();
        println!("{label}: {}", micros(best));
    };
    time("parse the body", &|| {
        let _: Value = serde_json::from_slice(body.as_bytes()).unwrap();
    });
    time("clone the parsed body", &|| {
        let _ = request.clone();
    });
    time("redact secrets, a new scanner each time (before)", &|| {
        let mut value = request.clone();
        atif_replay::support::redact_json(&mut value, &[]).unwrap();
    });
    let scanner = atif_secrets::Scanner::new();
    time("redact secrets, one scanner kept (now)", &|| {
        scanner.redact_value(&mut request.clone());
    });
    time("redact secrets, text with `token` in it", &|| {
        scanner.redact_value(&mut wordy.clone());
    });
    let masks = regex::Regex::new(
        r"(?-u)[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b|\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b|[0-9a-fA-F]{16,}\b",
    )
    .unwrap();
    let text = request["messages"][1]["content"].as_str().unwrap();
    time("the built-in masks (one regex scan)", &|| {
        masks.is_match(text);
    });
    Ok(())
}

/// The instructions one 200 KB request costs on the replay server, independent of the load
/// on the machine: this program runs itself under callgrind, sending 10 and then 60 requests
/// to a replay server and to a plain server answering the same bytes; the difference of the
/// differences, per request, is what replaying adds (matching, normalising, the reply).
fn instructions() -> Result {
    let count = |target: &str, requests: usize| -> Result<u64> {
        let output = std::process::Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(std::env::current_exe()?)
            .args(["--instructions-of", target, &requests.to_string()])
            .output()?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let line = stderr
            .lines()
            .find(|line| line.contains("Collected :"))
            .ok_or_else(|| format!("no callgrind total in: {stderr}"))?;
        let total = line.rsplit(':').next().ok_or("no count")?.trim().parse()?;
        Ok(total)
    };
    let per_request = |target: &str| -> Result<f64> {
        let few = count(target, 10)?;
        let many = count(target, 60)?;
        Ok((many.saturating_sub(few)) as f64 / 50.0)
    };
    let replay = per_request("replay")?;
    let plain = per_request("plain")?;
    println!(
        "instructions per 200 KB request, 100-event stream (callgrind, client and server): \
         replay {:.2} M, plain server {:.2} M, added by the replay {:.2} M",
        replay / 1e6,
        plain / 1e6,
        (replay - plain) / 1e6
    );
    Ok(())
}

/// Under callgrind: a replay server over 60 identical exchanges and a plain server, then
/// `requests` requests to `target` (`replay` or `plain`), one at a time, on one thread.
fn instructions_child(target: &str, requests: usize) -> Result {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("instructions.script.json");
        let request = request_of(200 * 1024, "same");
        let exchange = HttpExchange::new("POST", "/v1/chat/completions", request.clone(), 200)
            .with_events(events(100));
        let bytes = Bytes::from(exchange.events_wire().concat());
        let mut script = Script::new(None);
        script.exchanges = vec![exchange; 60];
        write_script(&path, &script, &[])?;
        drop(script);
        let plain_url = plain_server(bytes).await?;
        let mut options = Options::replay(&path);
        options.set_quiet(true);
        let proxy = start(&options).await?;
        let url = match target {
            "replay" => format!("{}/v1/chat/completions", proxy.url()),
            _ => plain_url,
        };
        let body = request.to_string();
        let client = reqwest::Client::new();
        for _ in 0..requests {
            timed_post(&client, &url, &body).await?;
        }
        Ok(())
    })
}

/// A server answering every request with `bytes` as an event stream, unmatched; its URL.
async fn plain_server(bytes: Bytes) -> Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/v1/chat/completions", listener.local_addr()?);
    let app = axum::Router::new().fallback(move |_body: Bytes| {
        let bytes = bytes.clone();
        async move {
            axum::response::Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from(bytes))
                .unwrap()
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(url)
}
