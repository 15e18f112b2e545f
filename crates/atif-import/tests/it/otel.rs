//! OpenTelemetry traces: OTLP/JSON, gzip and protobuf input, and the mapping of each dialect
//! (GenAI conventions, OpenInference, the older event form, Vercel's legacy `ai.*`) with the
//! quirks of the instrumentations that write them.

use std::io::Write as _;

use atif_import::{Error, Format, ImportOptions, import, import_runs};
use serde_json::{Value, json};

use crate::support::{assert_valid, fixture};

/// One span of trace `t1` in OTLP/JSON: attributes from a JSON object (numbers as `intValue`
/// strings, objects and arrays as JSON text, as instrumentations write them).
fn span(id: &str, parent: Option<&str>, name: &str, start: u64, attributes: Value) -> Value {
    let attributes: Vec<Value> = attributes
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, value)| {
            let value = match value {
                Value::String(text) => json!({ "stringValue": text }),
                Value::Number(n) => json!({ "intValue": n.to_string() }),
                Value::Bool(b) => json!({ "boolValue": b }),
                other => json!({ "stringValue": other.to_string() }),
            };
            json!({ "key": key, "value": value })
        })
        .collect();
    json!({
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": id,
        "parentSpanId": parent.unwrap_or(""),
        "name": name,
        "startTimeUnixNano": (1_700_000_000_000_000_000_u64 + start * 1_000_000).to_string(),
        "attributes": attributes,
    })
}

/// An export request holding `spans` under one scope.
fn request(scope: &str, spans: &[Value]) -> Value {
    json!({ "resourceSpans": [{ "scopeSpans": [{ "scope": { "name": scope }, "spans": spans }] }] })
}

/// Imports OTLP bytes and checks the trajectory is valid ATIF.
fn check(bytes: &[u8]) -> Value {
    let imported = import(bytes, &ImportOptions::default()).unwrap();
    assert_eq!(imported.format(), Format::Otel);
    let trajectory = imported.trajectory();
    assert_valid(&trajectory, "otel import");
    trajectory
}

fn text(value: &Value) -> Vec<u8> {
    value.to_string().into_bytes()
}

fn genai_call(id: &str, start: u64, input: Value, output: Value, tokens: (u64, u64)) -> Value {
    span(
        id,
        Some("a1"),
        "chat m",
        start,
        json!({
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.input.messages": input,
            "gen_ai.output.messages": output,
            "gen_ai.system_instructions": [{"type": "text", "content": "Be brief."}],
            "gen_ai.usage.input_tokens": tokens.0,
            "gen_ai.usage.output_tokens": tokens.1,
        }),
    )
}

fn user(text: &str) -> Value {
    json!({"role": "user", "parts": [{"type": "text", "content": text}]})
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"role": "assistant", "parts": [{"type": "tool_call", "id": id, "name": name, "arguments": arguments}]})
}

fn answer(text: &str) -> Value {
    json!({"role": "assistant", "parts": [{"type": "text", "content": text}]})
}

/// A GenAI-conventions agent: one call to `bash`, its tool span, a final answer; the spans in
/// the order they ended, as exporters write them.
fn genai_run(tool_attributes: Value) -> Vec<Value> {
    let first_call = call("c1", "bash", json!("{\"command\":\"ls\"}"));
    let response = json!({"role": "user", "parts": [{"type": "tool_call_response", "id": "c1", "result": "a.txt"}]});
    vec![
        genai_call("m1", 1, json!([user("List files.")]), json!([first_call]), (10, 2)),
        span("t1", Some("a1"), "execute_tool bash", 2, tool_attributes),
        genai_call(
            "m2",
            3,
            json!([user("List files."), first_call, response]),
            json!([answer("One file.")]),
            (20, 3),
        ),
        span(
            "a1",
            None,
            "invoke_agent files",
            0,
            json!({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "files", "gen_ai.aggregated_usage.input_tokens": 30}),
        ),
    ]
}

#[test]
fn genai_spans_map_to_system_user_and_agent_steps_with_the_tool_result_joined_by_id() {
    let spans = genai_run(json!({
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
        "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": "{\"command\":\"ls\"}",
        "gen_ai.tool.call.result": "a.txt",
    }));
    let trajectory = check(&text(&request("pydantic-ai", &spans)));
    assert_eq!(trajectory["agent"]["name"], "files");
    assert_eq!(trajectory["agent"]["model_name"], "m");
    let steps = trajectory["steps"].as_array().unwrap();
    let sources: Vec<&str> = steps.iter().map(|s| s["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["system", "user", "agent", "agent"]);
    assert_eq!(steps[0]["message"], "Be brief.");
    assert_eq!(steps[1]["message"], "List files.");
    // pydantic-ai writes arguments as a JSON string: they are parsed.
    assert_eq!(steps[2]["tool_calls"][0]["arguments"], json!({"command": "ls"}));
    assert_eq!(
        steps[2]["observation"]["results"][0],
        json!({"source_call_id": "c1", "content": "a.txt"})
    );
    assert_eq!(steps[3]["message"], "One file.");
    // Tokens from the model-call spans only, not the agent span's aggregate.
    assert_eq!(trajectory["final_metrics"]["total_prompt_tokens"], 30);
    assert_eq!(trajectory["final_metrics"]["total_completion_tokens"], 5);
    assert_eq!(trajectory["extra"]["capture"], json!({"content": "full", "missing": []}));
}

#[test]
fn a_tool_span_without_a_call_id_joins_by_name_and_arguments_and_a_rewritten_id_is_noted() {
    // OpenInference: no call id on the tool span.
    let spans = genai_run(json!({
        "openinference.span.kind": "TOOL", "tool.name": "bash",
        "input.value": "{\"command\":\"ls\"}", "output.value": "a.txt",
    }));
    let trajectory = check(&text(&request("openinference", &spans)));
    assert_eq!(trajectory["steps"][2]["observation"]["results"][0]["content"], "a.txt");
    // ADK: another id for the same call on the tool span.
    let spans = genai_run(json!({
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
        "gen_ai.tool.call.id": "adk-3f1e9a52-5f0c-4d43-9a53-0c1b5b8f2e11",
        "gen_ai.tool.call.arguments": {"command": "ls"}, "gen_ai.tool.call.result": "a.txt",
    }));
    let trajectory = check(&text(&request("gcp.vertex.agent", &spans)));
    let result = &trajectory["steps"][2]["observation"]["results"][0];
    assert_eq!(result["source_call_id"], "c1");
    assert_eq!(result["extra"]["span_call_id"], "adk-3f1e9a52-5f0c-4d43-9a53-0c1b5b8f2e11");
}

#[test]
fn a_tool_error_is_the_results_message_never_its_stack_trace() {
    let mut spans = genai_run(json!({
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.call.id": "c1",
    }));
    spans[1]["status"] = json!({"code": 2, "message": "ValueError: disk full"});
    spans[1]["events"] = json!([{"name": "exception", "attributes": [
        {"key": "exception.type", "value": {"stringValue": "ValueError"}},
        {"key": "exception.message", "value": {"stringValue": "disk full"}},
        {"key": "exception.stacktrace", "value": {"stringValue": "Traceback (most recent call last):\n  File \"/home/ann/agent.py\""}}
    ]}]);
    let trajectory = check(&text(&request("x", &spans)));
    let result = &trajectory["steps"][2]["observation"]["results"][0];
    assert_eq!(result["content"], "disk full");
    assert_eq!(result["extra"]["error"], json!({"kind": "ValueError", "message": "disk full"}));
    assert!(!trajectory.to_string().contains("Traceback"));
}

#[test]
fn content_off_leaves_a_skeleton_and_says_so() {
    let spans = vec![
        span(
            "m1",
            Some("a1"),
            "generate_content m",
            1,
            json!({"gen_ai.operation.name": "generate_content", "gen_ai.usage.input_tokens": 7, "gen_ai.usage.output_tokens": 1}),
        ),
        span(
            "t1",
            Some("a1"),
            "execute_tool bash",
            2,
            json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.call.id": "adk-1"}),
        ),
        span(
            "m2",
            Some("a1"),
            "generate_content m",
            3,
            json!({"gen_ai.operation.name": "generate_content", "gen_ai.usage.input_tokens": 9, "gen_ai.usage.output_tokens": 2}),
        ),
        span(
            "a1",
            None,
            "invoke_agent root",
            0,
            json!({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "root"}),
        ),
    ];
    let trajectory = check(&text(&request("gcp.vertex.agent", &spans)));
    let steps = trajectory["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["tool_calls"][0]["function_name"], "bash");
    assert_eq!(trajectory["final_metrics"]["total_prompt_tokens"], 16);
    let capture = &trajectory["extra"]["capture"];
    assert_eq!(capture["content"], "none");
    assert_eq!(
        capture["missing"],
        json!(["model input messages", "model output messages", "tool arguments", "tool results"])
    );
}

#[test]
fn openinference_flattened_messages_and_python_repr_tool_calls_are_read() {
    let llm = |id: &str, start: u64, attributes: Value| {
        let mut all = json!({"openinference.span.kind": "LLM", "llm.model_name": "m", "llm.token_count.prompt": 5, "llm.token_count.completion": 1});
        all.as_object_mut().unwrap().extend(attributes.as_object().unwrap().clone());
        span(id, Some("a1"), "response", start, all)
    };
    let repr = r#"ResponseFunctionToolCall(arguments='{"command":"pwd"}', call_id='call_9', name='bash', type='function_call', status='completed')"#;
    let spans = vec![
        span("a1", None, "Assistant", 0, json!({"openinference.span.kind": "AGENT"})),
        llm(
            "m1",
            1,
            json!({
                "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "Where am I?",
                "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": repr,
            }),
        ),
        span(
            "t1",
            Some("a1"),
            "bash",
            2,
            json!({"openinference.span.kind": "TOOL", "tool.name": "bash", "input.value": "{\"command\":\"pwd\"}", "output.value": "/tmp"}),
        ),
        llm(
            "m2",
            3,
            json!({
                "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "Where am I?",
                "llm.input_messages.1.message.role": "assistant",
                "llm.input_messages.1.message.tool_calls.0.tool_call.id": "call_9",
                "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "bash",
                "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": "{\"command\":\"pwd\"}",
                "llm.input_messages.2.message.role": "tool", "llm.input_messages.2.message.tool_call_id": "call_9",
                "llm.input_messages.2.message.content": "/tmp",
                "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": "In /tmp.",
                // The same text again as a content part, as the OpenAI Agents bridge writes it.
                "llm.output_messages.0.message.contents.0.message_content.type": "text",
                "llm.output_messages.0.message.contents.0.message_content.text": "In /tmp.",
            }),
        ),
    ];
    let trajectory = check(&text(&request("openinference.instrumentation.openai_agents", &spans)));
    let steps = trajectory["steps"].as_array().unwrap();
    assert_eq!(steps[0]["message"], "Where am I?");
    assert_eq!(
        steps[1]["tool_calls"][0],
        json!({"tool_call_id": "call_9", "function_name": "bash", "arguments": {"command": "pwd"}})
    );
    assert_eq!(steps[1]["observation"]["results"][0]["content"], "/tmp");
    assert_eq!(
        steps[2]["message"], "In /tmp.",
        "a text written as content and as a part is one text"
    );
    assert_eq!(steps.len(), 3, "the repeated history makes no new user step");
    // The OpenAI Agents bridges lose the instructions: the capture says so.
    assert_eq!(trajectory["extra"]["capture"]["missing"], json!(["system instructions"]));
}

#[test]
fn an_agent_under_a_tool_span_is_a_subagent_and_a_handoff_names_the_agent_on_each_step() {
    let model = |id: &str, parent: &str, start: u64, out: Value| {
        span(
            id,
            Some(parent),
            "chat m",
            start,
            json!({"gen_ai.operation.name": "chat", "gen_ai.input.messages": [user("go")], "gen_ai.output.messages": [out], "gen_ai.usage.input_tokens": 1, "gen_ai.usage.output_tokens": 1}),
        )
    };
    let spans = vec![
        span("root", None, "workflow", 0, json!({})),
        span(
            "a1",
            Some("root"),
            "invoke_agent triage",
            1,
            json!({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"}),
        ),
        model("m1", "a1", 2, call("c1", "research", json!({"q": "x"}))),
        span(
            "t1",
            Some("a1"),
            "execute_tool research",
            3,
            json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "research", "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.result": "found"}),
        ),
        span(
            "s1",
            Some("t1"),
            "invoke_agent researcher",
            4,
            json!({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher"}),
        ),
        model("m2", "s1", 5, answer("found")),
        span(
            "a2",
            Some("root"),
            "invoke_agent writer",
            6,
            json!({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "writer"}),
        ),
        model("m3", "a2", 7, answer("done")),
    ];
    let trajectory = check(&text(&request("x", &spans)));
    let steps = trajectory["steps"].as_array().unwrap();
    let agents: Vec<&Value> =
        steps.iter().filter(|s| s["source"] == "agent").map(|s| &s["extra"]["agent"]).collect();
    assert_eq!(agents, [&json!("triage"), &json!("writer")]);
    let subagents = trajectory["subagent_trajectories"].as_array().unwrap();
    assert_eq!(subagents.len(), 1);
    assert_eq!(subagents[0]["agent"]["name"], "researcher");
    let result = &steps[1]["observation"]["results"][0];
    assert_eq!(
        result["subagent_trajectory_ref"][0]["trajectory_id"],
        subagents[0]["trajectory_id"]
    );
    // The subagent's tokens are its own.
    assert_eq!(trajectory["final_metrics"]["total_prompt_tokens"], 2);
}

#[test]
fn a_model_span_wrapping_another_counts_once() {
    let spans = vec![
        span("a1", None, "invoke_agent x", 0, json!({"gen_ai.operation.name": "invoke_agent"})),
        span(
            "w1",
            Some("a1"),
            "call_llm",
            1,
            json!({"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 50}),
        ),
        span(
            "m1",
            Some("w1"),
            "generate_content",
            2,
            json!({"gen_ai.operation.name": "generate_content", "gen_ai.usage.input_tokens": 50, "gen_ai.output.messages": [answer("hi")]}),
        ),
    ];
    let trajectory = check(&text(&request("x", &spans)));
    assert_eq!(trajectory["steps"].as_array().unwrap().len(), 1);
    assert_eq!(trajectory["final_metrics"]["total_prompt_tokens"], 50);
}

#[test]
fn vercel_legacy_attributes_and_double_encoded_results_are_read() {
    let spans = vec![
        span(
            "a1",
            None,
            "ai.generateText",
            0,
            json!({"ai.operationId": "ai.generateText", "ai.telemetry.functionId": "weather"}),
        ),
        span(
            "m1",
            Some("a1"),
            "ai.generateText.doGenerate",
            1,
            json!({
                "ai.operationId": "ai.generateText.doGenerate", "ai.model.id": "m",
                "ai.prompt.messages": [{"role": "user", "content": [{"type": "text", "text": "Weather?"}]}],
                "ai.response.toolCalls": [{"toolCallId": "v1", "toolName": "weather", "args": "{\"city\":\"Oslo\"}"}],
                "ai.usage.promptTokens": 4, "ai.usage.completionTokens": 2,
            }),
        ),
        // Both the tool span and the model span start in the same millisecond: file order.
        span(
            "t1",
            Some("a1"),
            "ai.toolCall",
            1,
            json!({"ai.operationId": "ai.toolCall", "ai.toolCall.name": "weather", "ai.toolCall.id": "v1", "ai.toolCall.args": "{\"city\":\"Oslo\"}", "ai.toolCall.result": "\"\\\"sunny\\\"\""}),
        ),
    ];
    let trajectory = check(&text(&request("ai", &spans)));
    assert_eq!(trajectory["agent"]["name"], "weather");
    let steps = trajectory["steps"].as_array().unwrap();
    assert_eq!(steps[0]["message"], "Weather?");
    assert_eq!(steps[1]["tool_calls"][0]["arguments"], json!({"city": "Oslo"}));
    assert_eq!(steps[1]["observation"]["results"][0]["content"], "sunny");
}

#[test]
fn the_older_event_form_in_log_records_gives_the_messages() {
    let spans = vec![span("m1", None, "chat m", 1, json!({"gen_ai.operation.name": "chat"}))];
    let logs = json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"spanId": "m1", "eventName": "gen_ai.user.message", "body": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "Hi"}}]}}},
        {"spanId": "m1", "eventName": "gen_ai.choice", "body": {"kvlistValue": {"values": [{"key": "message", "value": {"kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "Hello."}}]}}}]}}}
    ]}]}]});
    let mut bytes = text(&request("x", &spans));
    bytes.push(b'\n');
    bytes.extend(text(&logs));
    let trajectory = check(&bytes);
    assert_eq!(trajectory["steps"][0]["message"], "Hi");
    assert_eq!(trajectory["steps"][1]["message"], "Hello.");
}

#[test]
fn a_trace_spread_over_collector_lines_is_one_run_and_several_traces_need_a_choice() {
    let spans = genai_run(
        json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.result": "a.txt"}),
    );
    let lines = format!("{}\n{}\n", request("x", &spans[..2]), request("x", &spans[2..]));
    let trajectory = check(lines.as_bytes());
    assert_eq!(trajectory["steps"].as_array().unwrap().len(), 4);
    // A second trace, and one without a model call, which is left out.
    let mut other: Vec<Value> = spans.clone();
    for s in &mut other {
        s["traceId"] = json!("11111111111111111111111111111111");
    }
    let no_run = json!({"traceId": "22222222222222222222222222222222", "spanId": "h1", "name": "GET /health"});
    let two = format!(
        "{}\n{}\n{}\n",
        request("x", &spans),
        request("x", &other),
        request("x", &[no_run])
    );
    let err = import(two.as_bytes(), &ImportOptions::default()).unwrap_err();
    assert!(matches!(err, Error::SeveralRuns { count: 2 }), "{err}");
    let runs = import_runs(two.as_bytes(), &ImportOptions::default()).unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].stats().dropped().get("trace without a model call"), Some(&1));
}

#[cfg(not(feature = "protobuf"))]
#[test]
fn protobuf_without_the_feature_is_refused_naming_it() {
    let err = import(&fixture("otel/pydantic-ai.pb"), &ImportOptions::default()).unwrap_err();
    assert!(err.to_string().contains("needs atif-import's `protobuf` feature"), "{err}");
}

#[cfg(feature = "protobuf")]
#[test]
fn gzip_and_protobuf_exports_import_like_their_json() {
    // A real export: pydantic-ai against the fake provider, written by the OpenTelemetry SDK's
    // OTLP protobuf encoder.
    let pb = fixture("otel/pydantic-ai.pb");
    let trajectory = check(&pb);
    assert_eq!(trajectory["agent"]["name"], "shell_agent");
    assert_eq!(trajectory["steps"][2]["tool_calls"][0]["function_name"], "bash");
    assert_eq!(
        trajectory["steps"][2]["observation"]["results"][0]["source_call_id"],
        "call_fake_2"
    );
    // The Collector file exporter's proto format: each request after its length.
    let mut framed = (pb.len() as u32).to_be_bytes().to_vec();
    framed.extend(&pb);
    assert_eq!(check(&framed), trajectory);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&pb).unwrap();
    assert_eq!(check(&gz.finish().unwrap()), trajectory);
}

#[test]
fn hostile_traces_fail_or_import_bounded() {
    // A gzip bomb past the limit.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![b' '; 1 << 20]).unwrap();
    let mut options = ImportOptions::default();
    options.set_max_input_bytes(1000);
    let err = import(&gz.finish().unwrap(), &options).unwrap_err();
    assert!(
        atif_schema::error_chain(&err).contains("inflates past the input limit of 1000 bytes"),
        "{err}"
    );
    // Broken protobuf names the byte (or the feature it needs).
    let err = import(b"\x0a\x05\x0a\x01\x00", &ImportOptions::default()).unwrap_err();
    assert!(err.to_string().starts_with("protobuf input: "), "{err}");
    if cfg!(feature = "protobuf") {
        assert!(err.to_string().contains("at byte 0: not an OTLP"), "{err}");
    }
    // A parent chain 5,000 deep, and two spans that are each other's parent.
    let mut spans = vec![span(
        "m0",
        None,
        "chat",
        0,
        json!({"gen_ai.operation.name": "chat", "gen_ai.output.messages": [answer("x")]}),
    )];
    for depth in 1..5000 {
        spans.push(span(
            &format!("s{depth}"),
            Some(&if depth == 1 { "m0".to_owned() } else { format!("s{}", depth - 1) }),
            "step",
            depth,
            json!({}),
        ));
    }
    spans.push(span("c1", Some("c2"), "chat", 1, json!({"gen_ai.operation.name": "chat"})));
    spans.push(span("c2", Some("c1"), "chat", 1, json!({"gen_ai.operation.name": "chat"})));
    let imported = import(&text(&request("x", &spans)), &ImportOptions::default()).unwrap();
    assert_eq!(imported.trajectory()["steps"].as_array().unwrap().len(), 1);
    assert!(imported.stats().dropped().contains_key("span nested deeper than 256 levels"));
}

#[test]
fn two_real_runs_check_equal_with_the_preset_and_a_changed_tool_call_does_not() {
    use atif_normalize::{DiffOptions, diff, normalize, preset, shape, to_canonical_string};

    // Two runs of the same pydantic-ai agent against the fake provider, exported as OTLP/JSON:
    // their trace ids, span ids, times, conversation ids and server ports all differ.
    let run1 = fixture("otel/pydantic-ai-run1.json");
    let run2 = fixture("otel/pydantic-ai-run2.json");
    assert_ne!(run1, run2);
    let options = preset("otel").unwrap();
    let canonical = |bytes: &[u8]| {
        let trajectory = check(bytes);
        let normalized = normalize(&trajectory, &options).unwrap();
        (to_canonical_string(&normalized), shape(&normalized))
    };
    let (first, first_shape) = canonical(&run1);
    let (second, _) = canonical(&run2);
    assert_eq!(first, second);
    // The same run with another command in the model's tool call and the tool span.
    let changed = String::from_utf8(run2).unwrap().replace("atif-e2e-%d", "other-%d");
    let (third, third_shape) = canonical(changed.as_bytes());
    assert_ne!(first, third);
    let deltas = diff(&first_shape, &third_shape, &DiffOptions::default());
    assert!(!deltas.is_empty(), "a changed tool call moves the Shape");
}

/// The failure report of `actual` checked against `golden`, both pydantic-ai exports imported
/// and normalised with the `otel` preset; `None` when they check equal.
fn report_of(golden: &[u8], actual: &[u8]) -> Option<String> {
    report_with(golden, actual, &atif_normalize::DiffOptions::default())
}

/// [`report_of`], the Shapes compared with `diff_options`.
fn report_with(
    golden: &[u8],
    actual: &[u8],
    diff_options: &atif_normalize::DiffOptions,
) -> Option<String> {
    use atif_normalize::{ReportOptions, diff, normalize, preset, report, shape};

    let options = preset("otel").unwrap();
    let golden = normalize(&check(golden), &options).unwrap();
    let actual = normalize(&check(actual), &options).unwrap();
    let deltas = diff(&shape(&golden), &shape(&actual), diff_options);
    let report = report(&golden, &actual, &deltas, &ReportOptions::default());
    (!deltas.is_empty()).then_some(report)
}

/// The spans of a pydantic-ai export, to edit.
fn spans_of(export: &mut Value) -> &mut Vec<Value> {
    export["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array_mut().unwrap()
}

/// Takes out of a pydantic-ai export what it leaves out with `include_content=False`: the
/// messages, the instructions, the tool arguments and results; the skeleton stays.
fn without_content(export: &mut Value) {
    let content = [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "pydantic_ai.all_messages",
        "final_result",
    ];
    for span in spans_of(export) {
        let attributes = span["attributes"].as_array_mut().unwrap();
        attributes.retain(|a| !content.contains(&a["key"].as_str().unwrap()));
    }
}

/// Makes the export's tool span fail as a tool that raised `PermissionError: denied` does.
fn fail_the_tool(export: &mut Value) {
    let spans = spans_of(export);
    let tool = spans.iter_mut().find(|s| s["name"] == "execute_tool bash").unwrap();
    tool["status"] = json!({"code": 2, "message": "PermissionError: denied"});
    tool["attributes"].as_array_mut().unwrap().retain(|a| a["key"] != "gen_ai.tool.call.result");
    tool["events"] = json!([{"name": "exception", "attributes": [
        {"key": "exception.type", "value": {"stringValue": "PermissionError"}},
        {"key": "exception.message", "value": {"stringValue": "denied"}},
    ]}]);
}

#[test]
fn a_run_captured_without_content_fails_against_a_golden_with_content_and_the_report_says_so() {
    let golden = fixture("otel/pydantic-ai-run1.json");
    // The same run as pydantic-ai exports it with `include_content=False`: no messages, no
    // instructions, no tool arguments or results; the skeleton stays.
    let mut export: Value = serde_json::from_slice(&fixture("otel/pydantic-ai-run2.json")).unwrap();
    without_content(&mut export);
    let actual = text(&export);
    assert_eq!(check(&actual)["extra"]["capture"]["content"], "none");
    let report = report_of(&golden, &actual).expect("a run without content cannot match");
    assert!(
        report.contains(
            "captured with different content: golden \"full\", actual \"none\" (extra.capture.content): actual was captured without content"
        ),
        "{report}"
    );
    // Two runs captured alike say nothing of capture.
    let same = report_of(&golden, &fixture("otel/pydantic-ai-run2.json"));
    assert_eq!(same, None);
    let mut changed: Value = serde_json::from_slice(&golden).unwrap();
    let tool =
        spans_of(&mut changed).iter_mut().find(|s| s["name"] == "execute_tool bash").unwrap();
    let result = tool["attributes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|a| a["key"] == "gen_ai.tool.call.result")
        .unwrap();
    result["value"]["stringValue"] = json!("another output");
    let report = report_of(&golden, &text(&changed)).expect("another tool result changes the run");
    assert!(!report.contains("captured with different content"), "{report}");
}

#[test]
fn an_extra_model_call_fails_naming_the_step() {
    let golden = fixture("otel/pydantic-ai-run1.json");
    let mut export: Value = serde_json::from_slice(&fixture("otel/pydantic-ai-run2.json")).unwrap();
    // The agent calls the model once more at the end: a copy of the last model call, later.
    let spans = spans_of(&mut export);
    let mut extra = spans[2].clone();
    extra["spanId"] = json!("00000000000000ee");
    let start: u64 = extra["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
    extra["startTimeUnixNano"] = json!((start + 1_000_000_000).to_string());
    spans.insert(3, extra);
    let report = report_of(&golden, &text(&export)).expect("an extra model call changes the run");
    assert!(report.contains("  llm_calls: 2 -> 3\n"), "{report}");
    assert!(report.contains("  step 5 (agent) inserted: message"), "{report}");
}

#[test]
fn a_tool_error_fails_naming_the_step_and_the_error() {
    let golden = fixture("otel/pydantic-ai-run1.json");
    let mut export: Value = serde_json::from_slice(&fixture("otel/pydantic-ai-run2.json")).unwrap();
    fail_the_tool(&mut export);
    let report = report_of(&golden, &text(&export)).expect("a tool error changes the run");
    assert!(report.contains("  tool_errors: step 3 bash failed (0 -> 1 errors)\n"), "{report}");
    assert!(report.contains("  step 3 (agent) changed: observation changed\n"), "{report}");
    assert!(report.contains("\"kind\": \"PermissionError\""), "the diff shows the error: {report}");
}

#[test]
fn a_tool_error_fails_a_run_captured_without_content_with_content_comparison_off() {
    // Both runs without content, compared on structure alone (`--no-content`): the error is
    // all that differs, and it is structure, not content.
    let mut golden: Value = serde_json::from_slice(&fixture("otel/pydantic-ai-run1.json")).unwrap();
    without_content(&mut golden);
    let mut failed: Value = serde_json::from_slice(&fixture("otel/pydantic-ai-run2.json")).unwrap();
    without_content(&mut failed);
    let same = failed.clone();
    fail_the_tool(&mut failed);
    let mut structural = atif_normalize::DiffOptions::default();
    structural.set_compare_content(false);
    assert_eq!(report_with(&text(&golden), &text(&same), &structural), None);
    let report = report_with(&text(&golden), &text(&failed), &structural)
        .expect("a tool that failed is not the run that succeeded");
    assert!(report.contains("  tool_errors: step 1 bash failed (0 -> 1 errors)\n"), "{report}");
    assert!(!report.contains("content_hash"), "{report}");
}

#[test]
fn structure_only_compares_runs_captured_with_and_without_content_on_what_both_recorded() {
    use atif_normalize::{DiffOptions, NormalizedDocument, ReportOptions, compare, preset};

    let options = preset("otel").unwrap();
    let document = |bytes: &[u8]| NormalizedDocument::from_value(check(bytes), &options).unwrap().0;
    let golden = document(&fixture("otel/pydantic-ai-run1.json"));
    let mut export: Value = serde_json::from_slice(&fixture("otel/pydantic-ai-run2.json")).unwrap();
    without_content(&mut export);
    let skeleton = document(&text(&export));
    fail_the_tool(&mut export);
    let failed = document(&text(&export));
    let mut structure_only = DiffOptions::default();
    structure_only.set_compare_content(false);

    // Compared whole, the run without content fails, and the report says why.
    let whole = compare(&golden, &skeleton, &DiffOptions::default());
    assert!(!whole.is_same());
    let report = whole.report(&ReportOptions::default());
    assert!(report.contains("or compare structure only (`--no-content`)"), "{report}");
    // On structure alone, the same agent checks equal: the model calls, the tool and the
    // tokens are the golden's; the system and user steps it could not record are not compared.
    let structure = compare(&golden, &skeleton, &structure_only);
    let deltas: Vec<String> = structure.deltas().iter().map(ToString::to_string).collect();
    assert!(structure.is_same(), "{deltas:?}");
    // And a tool that failed still fails it, naming the step.
    let structure = compare(&golden, &failed, &structure_only);
    let deltas: Vec<String> = structure.deltas().iter().map(ToString::to_string).collect();
    assert_eq!(deltas, ["tool_errors: step 1 bash failed (0 -> 1 errors)"]);
    let report = structure.report(&ReportOptions::default());
    assert!(report.contains("captured with different content: golden \"full\", actual \"none\""));
}

#[test]
fn a_langchain_tool_message_written_whole_as_the_tool_output_gives_its_content() {
    // OpenInference's LangChain instrumentation writes a tool span's `output.value` as the
    // whole serialised `ToolMessage`; the model receives its content alone.
    let message = json!({"type": "tool", "data": {"content": "atif-e2e-42\n", "type": "tool",
        "name": "bash", "tool_call_id": "call_1", "status": "success"}});
    let spans = vec![
        span("a1", None, "shell_agent", 0, json!({"openinference.span.kind": "AGENT"})),
        span(
            "m1",
            Some("a1"),
            "ChatOpenAI",
            1,
            json!({"openinference.span.kind": "LLM", "llm.model_name": "m",
                "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "Go",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "bash",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{\"command\": \"x\"}"}),
        ),
        span(
            "t1",
            Some("a1"),
            "bash",
            2,
            json!({"openinference.span.kind": "TOOL", "tool.name": "bash",
                "input.value": "{\"command\": \"x\"}", "output.value": message.to_string()}),
        ),
        span(
            "t2",
            Some("a1"),
            "bash",
            3,
            json!({"openinference.span.kind": "TOOL", "tool.name": "bash",
                "input.value": "{\"command\": \"y\"}", "output.value": "{\"type\": \"tool\"}"}),
        ),
    ];
    let trajectory = check(&text(&request("openinference.instrumentation.langchain", &spans)));
    let results = trajectory["steps"][1]["observation"]["results"].as_array().unwrap();
    assert_eq!(results[0]["content"], "atif-e2e-42\n");
    // Text that only starts like one is kept as it is.
    assert_eq!(results[1]["content"], "{\"type\": \"tool\"}");
}
