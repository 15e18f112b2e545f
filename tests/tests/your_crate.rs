//! The code of docs/golden-in-your-crate.md, compiled and run: an agent written against
//! `LlmClient`, a first script recorded by `script_client!` from the replies expected (no live
//! model), and its replay checked against its golden. A test below keeps the guide's code equal to this file's.
#![allow(clippy::unwrap_used, reason = "test code")]

// --- the guide's code starts here ---
use std::sync::Arc;

use atif_golden::assert_golden;
use atif_replay::{
    CaptureHandle, CaptureOptions, FakeClient, LlmRequest, LlmResponse, Message, ToolCall, capture,
    script_client,
};
use serde_json::json;

/// The agent: an async function of a `CaptureHandle` that returns a `Result`. It asks the model
/// through `handle.client()` and reports each tool's output with `handle.tool_result`.
async fn weather_agent(handle: CaptureHandle, city: String) -> Result<String, atif_replay::Error> {
    let model = handle.client();
    let mut messages = vec![Message::user(format!("What is the weather in {city}?"))];
    loop {
        let reply = model.complete(LlmRequest::new(messages.clone())).await?;
        messages.push(Message::assistant(&reply));
        if reply.tool_calls.is_empty() {
            return Ok(reply.text());
        }
        for call in &reply.tool_calls {
            let output = format!("sunny in {}", call.arguments["city"].as_str().unwrap_or("?"));
            handle.tool_result(&call.id, output.clone())?;
            messages.push(Message::tool_result(call.id.clone(), output));
        }
    }
}

/// The model until a live one is at hand: the replies you expect. The first run records them as
/// the script `tests/scripts/weather.json`; later runs replay that file and never call this.
fn expected_replies() -> Result<FakeClient, atif_replay::Error> {
    let replies = vec![
        LlmResponse::from_tool_calls(vec![ToolCall::new(
            "call_1",
            "get_weather",
            json!({"city": "Paris"}),
        )]),
        LlmResponse::from_text("It is sunny in Paris."),
    ];
    Ok(FakeClient::from_responses(Some("fake-model"), replies))
}

#[tokio::test]
async fn weather_agent_answers_in_two_model_calls() -> Result<(), Box<dyn std::error::Error>> {
    let model = Arc::new(script_client!("weather", expected_replies)?);
    let options = CaptureOptions::new("weather-agent", "0.1.0");
    let run =
        capture(model.clone(), &options, |handle| weather_agent(handle, "Paris".to_owned())).await;
    run.result?; // one model call more than recorded fails here, and says so
    model.finish()?; // one model call fewer than recorded fails here
    assert_golden!(run.trajectory); // tests/golden/your_crate__weather_agent_answers_in_two_model_calls.json
    Ok(())
}
// --- the guide's code ends here ---

#[test]
fn the_guide_shows_this_code() {
    let here = include_str!("your_crate.rs");
    let start = "// --- the guide's code starts here ---\n";
    let code = &here[here.find(start).unwrap() + start.len()
        ..here.find("// --- the guide's code ends here ---").unwrap()];
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/golden-in-your-crate.md"),
    )
    .unwrap();
    assert!(
        guide.contains(&format!("```rust\n{code}```\n")),
        "update the code in docs/golden-in-your-crate.md from tests/tests/your_crate.rs"
    );
}
