//! Each protocol, streamed and not, through one turn of the tool loop; the request log;
//! simulated failures.

use atif_fake_provider::{
    Config, DEFAULT_COMMAND, DEFAULT_TEXT, Error, FakeProvider, Fault, unreachable_url,
};
use serde_json::{Value, json};

use crate::http::{Raw, post, request};

const FINAL: &str = "The command printed: atif-e2e-42";

fn provider() -> FakeProvider {
    FakeProvider::start(Config::default()).unwrap()
}

fn bash_schema() -> Value {
    json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]})
}

fn data(raw: &Raw) -> Vec<Value> {
    raw.events()
        .iter()
        .filter(|(_, data)| data != "[DONE]")
        .map(|(_, data)| serde_json::from_str(data).unwrap())
        .collect()
}

fn joined(values: &[Value], pointer: &str) -> String {
    values.iter().filter_map(|value| value.pointer(pointer)).filter_map(Value::as_str).collect()
}

#[test]
fn chat_completions_calls_the_shell_tool_then_quotes_its_result() {
    let provider = provider();
    let tools =
        json!([{"type": "function", "function": {"name": "bash", "parameters": bash_schema()}}]);
    let first =
        json!({"model": "m", "messages": [{"role": "user", "content": "run it"}], "tools": tools});
    let reply = post(provider.addr(), "/v1/chat/completions", &first);
    assert_eq!((reply.status, reply.header("content-type")), (200, Some("application/json")));
    let reply = reply.json();
    assert_eq!(reply["object"], "chat.completion");
    assert_eq!(reply["choices"][0]["finish_reason"], "tool_calls");
    let call = &reply["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "bash");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"command": DEFAULT_COMMAND}));
    assert_eq!(
        reply["usage"]["total_tokens"],
        reply["usage"]["prompt_tokens"].as_u64().unwrap()
            + reply["usage"]["completion_tokens"].as_u64().unwrap()
    );

    let second = json!({"model": "m", "stream": true, "stream_options": {"include_usage": true}, "tools": tools,
        "messages": [{"role": "user", "content": "run it"},
                     {"role": "assistant", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": call["id"], "content": "atif-e2e-42\n"}]});
    let reply = post(provider.addr(), "/v1/chat/completions", &second);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    let events = reply.events();
    assert!(events.iter().all(|(name, _)| name.is_none()), "chat chunks have no event names");
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks = data(&reply);
    assert!(chunks.iter().all(|chunk| chunk["object"] == "chat.completion.chunk"));
    assert_eq!(joined(&chunks, "/choices/0/delta/content"), FINAL);
    let last = chunks.last().unwrap();
    assert_eq!(
        (last["choices"].clone(), last["usage"]["prompt_tokens"].clone()),
        (json!([]), json!(130))
    );
    assert_eq!(chunks[chunks.len() - 2]["choices"][0]["finish_reason"], "stop");
}

#[test]
fn chat_completions_stream_carries_tool_call_arguments_in_pieces() {
    let provider = provider();
    let body = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "go"}],
                      "tools": [{"type": "function", "function": {"name": "bash", "parameters": bash_schema()}}]});
    let chunks = data(&post(provider.addr(), "/v1/chat/completions", &body));
    let arguments = joined(&chunks, "/choices/0/delta/tool_calls/0/function/arguments");
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        json!({"command": DEFAULT_COMMAND})
    );
    assert!(
        chunks
            .iter()
            .filter(|c| c.pointer("/choices/0/delta/tool_calls/0/function/arguments").is_some())
            .count()
            > 2
    );
    assert!(
        chunks.iter().all(|chunk| chunk.get("usage").is_none()),
        "no usage without include_usage"
    );
    assert_eq!(chunks.last().unwrap()["choices"][0]["finish_reason"], "tool_calls");
}

#[test]
fn responses_calls_exec_command_then_quotes_its_output() {
    let provider = provider();
    let tools = json!([{"type": "function", "name": "exec_command", "parameters":
                        {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}]);
    let first = json!({"model": "gpt", "stream": true, "input": [{"type": "message", "role": "user", "content": "go"}], "tools": tools});
    let reply = post(provider.addr(), "/v1/responses", &first);
    let events = reply.events();
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_deref().unwrap()).collect();
    assert_eq!(names.first(), Some(&"response.created"));
    assert_eq!(names.last(), Some(&"response.completed"));
    assert!(names.contains(&"response.function_call_arguments.done"));
    let values = data(&reply);
    for (idx, ((name, _), value)) in events.iter().zip(&values).enumerate() {
        assert_eq!(
            (value["type"].as_str(), value["sequence_number"].as_u64()),
            (name.as_deref(), Some(idx as u64))
        );
    }
    let completed = &values.last().unwrap()["response"];
    let item = &completed["output"][0];
    assert_eq!(
        (item["type"].as_str(), item["name"].as_str()),
        (Some("function_call"), Some("exec_command"))
    );
    let arguments = joined(&values, "/delta");
    assert_eq!(arguments, item["arguments"].as_str().unwrap());
    assert_eq!(serde_json::from_str::<Value>(&arguments).unwrap(), json!({"cmd": DEFAULT_COMMAND}));
    assert!(completed["usage"]["input_tokens"].as_u64().unwrap() > 0);

    let output = "Chunk ID: a1b2c3\nWall time: 0.0031 seconds\nProcess exited with code 0\nOutput:\natif-e2e-42\n";
    let second = json!({"model": "gpt", "input": [{"type": "message", "role": "user", "content": "go"}, item,
                        {"type": "function_call_output", "call_id": item["call_id"], "output": output}], "tools": tools});
    let reply = post(provider.addr(), "/v1/responses", &second).json();
    assert_eq!(
        (reply["object"].as_str(), reply["status"].as_str()),
        (Some("response"), Some("completed"))
    );
    assert_eq!(reply["output"][0]["content"][0]["text"], FINAL);
}

#[test]
fn anthropic_messages_stream_names_every_event_and_accepts_a_query() {
    let provider = provider();
    let tools = json!([{"name": "Bash", "input_schema": bash_schema()}]);
    let first = json!({"model": "claude", "stream": true, "max_tokens": 100, "messages": [{"role": "user", "content": "go"}], "tools": tools});
    let reply = post(provider.addr(), "/v1/messages?beta=true", &first);
    assert_eq!(reply.status, 200);
    let names: Vec<String> = reply.events().into_iter().map(|(name, _)| name.unwrap()).collect();
    let expected = [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ];
    assert_eq!(names, expected);
    let values = data(&reply);
    assert!(values.iter().zip(&names).all(|(value, name)| value["type"] == name.as_str()));
    assert_eq!(values[1]["content_block"]["name"], "Bash");
    let arguments = joined(&values, "/delta/partial_json");
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        json!({"command": DEFAULT_COMMAND})
    );
    assert_eq!(values[7]["delta"]["stop_reason"], "tool_use");

    let id = values[1]["content_block"]["id"].clone();
    let second = json!({"model": "claude", "max_tokens": 100, "tools": tools, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": DEFAULT_COMMAND}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "atif-e2e-42"}]}]});
    let reply = post(provider.addr(), "/v1/messages", &second).json();
    assert_eq!(
        (reply["type"].as_str(), reply["stop_reason"].as_str()),
        (Some("message"), Some("end_turn"))
    );
    assert_eq!(reply["content"][0]["text"], FINAL);

    let count = post(provider.addr(), "/v1/messages/count_tokens?beta=true", &second).json();
    assert_eq!(count, json!({"input_tokens": 130}));
}

#[test]
fn gemini_streams_crlf_framed_chunks_and_answers_plain_json() {
    let provider = provider();
    let tools = json!([{"functionDeclarations": [{"name": "run_shell_command", "parametersJsonSchema": bash_schema()}]}]);
    let first = json!({"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": tools});
    let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
    let reply = post(provider.addr(), path, &first);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert!(reply.body.ends_with("\r\n\r\n") && !reply.body.contains("event:"), "{:?}", reply.body);
    let chunks = data(&reply);
    let call = &chunks[0]["candidates"][0]["content"]["parts"][0]["functionCall"];
    assert_eq!(*call, json!({"name": "run_shell_command", "args": {"command": DEFAULT_COMMAND}}));
    assert_eq!(chunks[0]["modelVersion"], "gemini-2.5-flash");

    let second = json!({"contents": [{"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": call}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"output": "atif-e2e-42"}}}]}]});
    let streamed = data(&post(provider.addr(), path, &second));
    assert_eq!(joined(&streamed, "/candidates/0/content/parts/0/text"), FINAL);
    assert_eq!(streamed.last().unwrap()["candidates"][0]["finishReason"], "STOP");
    let whole =
        post(provider.addr(), "/v1beta/models/gemini-2.5-flash:generateContent", &second).json();
    assert_eq!(whole["candidates"][0]["content"]["parts"][0]["text"], FINAL);
    assert_eq!(
        whole["usageMetadata"]["totalTokenCount"],
        streamed.last().unwrap()["usageMetadata"]["totalTokenCount"]
    );
    let array =
        post(provider.addr(), "/v1beta/models/gemini-2.5-flash:streamGenerateContent", &second)
            .json();
    assert_eq!(array.as_array().unwrap().len(), streamed.len());
}

#[test]
fn a_get_weather_tool_is_called_with_arguments_fitting_its_schema_then_its_result_quoted() {
    let provider = provider();
    let schema = json!({"type": "object", "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "default": 3},
        "hourly": {"type": "boolean"}},
        "required": ["city", "unit", "days"]});
    let expected = json!({"city": "fake", "unit": "celsius", "days": 3});
    let tools = json!([{"type": "function", "function": {"name": "get_weather", "parameters": schema}},
                       {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}]);
    let first = json!({"model": "m", "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": tools});
    let reply = post(provider.addr(), "/v1/chat/completions", &first).json();
    assert_eq!(reply["choices"][0]["finish_reason"], "tool_calls");
    let call = &reply["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "get_weather");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, expected);

    let second = json!({"model": "m", "tools": tools, "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "{\"temperature\": 21}"}]});
    let reply = post(provider.addr(), "/v1/chat/completions", &second).json();
    assert_eq!(
        reply["choices"][0]["message"]["content"],
        "The command printed: {\"temperature\": 21}"
    );

    let anthropic = json!({"model": "claude", "max_tokens": 100, "messages": [{"role": "user", "content": "go"}],
                           "tools": [{"name": "get_weather", "input_schema": schema}]});
    let reply = post(provider.addr(), "/v1/messages", &anthropic).json();
    assert_eq!(
        (reply["content"][0]["name"].clone(), reply["content"][0]["input"].clone()),
        (json!("get_weather"), expected.clone())
    );
    let gemini = json!({"contents": [{"role": "user", "parts": [{"text": "go"}]}],
        "tools": [{"functionDeclarations": [{"name": "get_weather", "parameters": {"type": "OBJECT",
            "properties": {"city": {"type": "STRING"}}, "required": ["city"]}}]}]});
    let reply =
        post(provider.addr(), "/v1beta/models/gemini-2.5-flash:generateContent", &gemini).json();
    assert_eq!(
        reply["candidates"][0]["content"]["parts"][0]["functionCall"],
        json!({"name": "get_weather", "args": {"city": "fake"}})
    );
}

#[test]
fn without_any_tool_every_protocol_answers_plain_text() {
    let provider = provider();
    let chat = post(
        provider.addr(),
        "/v1/chat/completions",
        &json!({"messages": [{"role": "user", "content": "title?"}]}),
    );
    assert_eq!(chat.json()["choices"][0]["message"]["content"], DEFAULT_TEXT);
    let responses = post(provider.addr(), "/v1/responses", &json!({"input": "hi"}));
    assert_eq!(responses.json()["output"][0]["content"][0]["text"], DEFAULT_TEXT);
    let anthropic = post(
        provider.addr(),
        "/v1/messages",
        &json!({"messages": [{"role": "user", "content": "hi"}]}),
    );
    assert_eq!(anthropic.json()["content"][0]["text"], DEFAULT_TEXT);
}

#[test]
fn the_model_list_takes_each_providers_shape() {
    let mut config = Config::default();
    config.set_models(vec!["a".to_owned(), "b".to_owned()]);
    let provider = FakeProvider::start(config).unwrap();
    let openai = request(provider.addr(), "GET", "/v1/models", &[], "").json();
    assert_eq!(
        (openai["object"].clone(), openai["data"][1]["id"].clone()),
        (json!("list"), json!("b"))
    );
    let anthropic =
        request(provider.addr(), "GET", "/v1/models", &[("anthropic-version", "2023-06-01")], "")
            .json();
    assert_eq!(
        (anthropic["data"][0]["type"].clone(), anthropic["has_more"].clone()),
        (json!("model"), json!(false))
    );
    let gemini = request(provider.addr(), "GET", "/v1beta/models", &[], "").json();
    assert_eq!(gemini["models"][0]["name"], "models/a");
}

#[test]
fn every_request_is_logged_and_listed() {
    let provider = provider();
    post(
        provider.addr(),
        "/v1/messages?beta=true",
        &json!({"messages": [{"role": "user", "content": "one"}]}),
    );
    request(provider.addr(), "GET", "/v1/models", &[("x-api-key", "k")], "");
    let log = provider.requests();
    assert_eq!(provider.request_count(), 2);
    assert_eq!((log[0].method.as_str(), log[0].path.as_str()), ("POST", "/v1/messages?beta=true"));
    assert_eq!(log[0].body["messages"][0]["content"], "one");
    assert_eq!(log[1].header("X-Api-Key"), Some("k"));
    let listed = request(provider.addr(), "GET", "/_fake/requests", &[], "").json();
    assert_eq!(listed["count"], 2);
    assert_eq!(listed["requests"][0]["path"], "/v1/messages?beta=true");
    assert_eq!(provider.request_count(), 2, "control requests are not logged");
}

#[test]
fn bad_requests_get_errors_in_the_provider_shape() {
    let provider = provider();
    let invalid = request(provider.addr(), "POST", "/v1/messages", &[], "{not json");
    assert_eq!(invalid.status, 400);
    assert_eq!(invalid.json()["type"], "error");
    assert!(invalid.json()["error"]["message"].as_str().unwrap().contains("not JSON"));
    let unknown = request(provider.addr(), "POST", "/v2/elsewhere", &[], "{}");
    assert_eq!(unknown.status, 404);
    let message = unknown.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("/v2/elsewhere") && message.contains("POST /v1/responses"),
        "{message}"
    );
    assert_eq!(provider.requests()[0].body, json!("{not json"));
}

#[test]
fn a_status_fault_answers_every_model_request_with_that_error() {
    let mut config = Config::default();
    config.set_fault(Some(Fault::Status(529)));
    let provider = FakeProvider::start(config).unwrap();
    let anthropic = post(provider.addr(), "/v1/messages", &json!({"messages": []}));
    assert_eq!(anthropic.status, 529);
    assert_eq!(anthropic.json()["error"]["type"], "overloaded_error");
    let gemini =
        post(provider.addr(), "/v1beta/models/g:generateContent", &json!({"contents": []}));
    assert_eq!((gemini.status, gemini.json()["error"]["code"].clone()), (529, json!(529)));
}

#[test]
fn a_cut_fault_drops_the_connection_midway() {
    let mut config = Config::default();
    config.set_fault(Some(Fault::CutStream { after_events: 2 }));
    let provider = FakeProvider::start(config).unwrap();
    let stream = post(
        provider.addr(),
        "/v1/messages",
        &json!({"stream": true, "messages": [{"role": "user", "content": "hi"}]}),
    );
    assert_eq!(stream.status, 200);
    assert!(!stream.complete, "the chunked body has no final chunk");
    let names: Vec<String> = stream.events().into_iter().map(|(name, _)| name.unwrap()).collect();
    assert_eq!(names, ["message_start", "content_block_start"]);
    let whole = post(
        provider.addr(),
        "/v1/messages",
        &json!({"messages": [{"role": "user", "content": "hi"}]}),
    );
    assert!(!whole.complete);
    assert!(serde_json::from_str::<Value>(&whole.body).is_err(), "half a body: {}", whole.body);
}

#[test]
fn a_provider_that_is_down_refuses_connections() {
    let url = unreachable_url().unwrap();
    let addr = url.strip_prefix("http://").unwrap();
    assert!(std::net::TcpStream::connect(addr).is_err());
}

#[test]
fn a_port_in_use_is_a_bind_error() {
    let first = provider();
    let mut config = Config::default();
    config.set_listen(first.addr());
    let err = FakeProvider::start(config).unwrap_err();
    assert!(matches!(err, Error::Bind { addr, .. } if addr == first.addr()), "{err:?}");
    assert_eq!(err.to_string(), format!("cannot listen on {}", first.addr()));
}

#[test]
fn a_stopped_provider_no_longer_answers() {
    let provider = provider();
    let addr = provider.addr();
    provider.stop();
    assert!(std::net::TcpStream::connect(addr).is_err());
}

#[test]
fn the_command_and_text_are_configurable() {
    let mut config = Config::default();
    config.set_command("printf custom");
    config.set_text("custom text");
    let provider = FakeProvider::start(config).unwrap();
    let call = post(
        provider.addr(),
        "/v1/messages",
        &json!({"messages": [{"role": "user", "content": "go"}],
                    "tools": [{"name": "bash", "input_schema": bash_schema()}]}),
    );
    assert_eq!(call.json()["content"][0]["input"], json!({"command": "printf custom"}));
    let text = post(
        provider.addr(),
        "/v1/messages",
        &json!({"messages": [{"role": "user", "content": "go"}]}),
    );
    assert_eq!(text.json()["content"][0]["text"], "custom text");
}

#[test]
fn parallel_calls_go_out_together_in_every_protocol_streamed_and_not_each_with_its_own_id() {
    use atif_fake_provider::ScriptedCall;
    use atif_wire::{Protocol, SseEvent, parse_response, parse_stream};
    let mut config = Config::default();
    let scripted = |command: &str| ScriptedCall {
        name: "bash".to_owned(),
        arguments: json!({"command": command}),
    };
    config.set_calls(vec![scripted("echo one"), scripted("echo two")]);
    config.set_parallel_calls(true);
    let provider = FakeProvider::start(config).unwrap();
    let function = json!({"name": "bash", "parameters": bash_schema()});
    let user = json!({"role": "user", "content": "go"});
    let cases = [
        (
            Protocol::OpenAiChat,
            "/v1/chat/completions",
            json!({"model": "m", "messages": [user],
            "tools": [{"type": "function", "function": function}]}),
        ),
        (
            Protocol::OpenAiResponses,
            "/v1/responses",
            json!({"model": "m", "input": "go",
            "tools": [{"type": "function", "name": "bash", "parameters": bash_schema()}]}),
        ),
        (
            Protocol::AnthropicMessages,
            "/v1/messages",
            json!({"model": "m", "max_tokens": 9, "messages": [user],
            "tools": [{"name": "bash", "input_schema": bash_schema()}]}),
        ),
        (
            Protocol::Gemini,
            "/v1beta/models/m:generateContent",
            json!({"contents": [{"role": "user", "parts": [{"text": "go"}]}],
            "tools": [{"functionDeclarations": [function]}]}),
        ),
    ];
    for (protocol, path, body) in cases {
        for stream in [false, true] {
            let (path, mut body) = (path.to_owned(), body.clone());
            let path = match (protocol, stream) {
                (Protocol::Gemini, true) => {
                    path.replace(":generateContent", ":streamGenerateContent?alt=sse")
                }
                (Protocol::Gemini, false) => path,
                (_, stream) => {
                    body["stream"] = json!(stream);
                    path
                }
            };
            let reply = post(provider.addr(), &path, &body);
            let response = match stream {
                false => parse_response(protocol, &reply.json()).unwrap(),
                true => {
                    let events: Vec<SseEvent> = reply
                        .events()
                        .into_iter()
                        .filter(|(_, data)| data != "[DONE]")
                        .map(|(name, data)| {
                            SseEvent::new(name.as_deref(), serde_json::from_str(&data).unwrap())
                        })
                        .collect();
                    parse_stream(protocol, &events).unwrap()
                }
            };
            let calls: Vec<(&str, &Value)> = response
                .tool_calls
                .iter()
                .map(|call| (call.name.as_str(), &call.arguments))
                .collect();
            let case = format!("{protocol:?}, stream {stream}");
            assert_eq!(
                calls,
                [
                    ("bash", &json!({"command": "echo one"})),
                    ("bash", &json!({"command": "echo two"}))
                ],
                "{case}"
            );
            if protocol != Protocol::Gemini {
                // Gemini's calls carry no id; the others' ids tell the two results apart.
                assert_ne!(response.tool_calls[0].id, response.tool_calls[1].id, "{case}");
            }
        }
    }
}
