//! Capture from traffic: hand-written exchanges of each protocol become trajectories that
//! validate in both profiles.

use atif_schema::{Profile, StepSource, Trajectory, ValidateOptions, validate};
use atif_wire::{CaptureOptions, Error, HttpExchange, SseEvent, trajectory_from_traffic};
use serde_json::{Value, json};

use crate::chain;

fn options() -> CaptureOptions {
    CaptureOptions::new("traffic-agent", "0.1.0")
}

/// Captures `exchanges` and checks the trajectory validates in the strict and harbor profiles.
fn capture(exchanges: &[HttpExchange]) -> Trajectory {
    let trajectory = trajectory_from_traffic(exchanges, &options()).unwrap();
    let value = trajectory.to_value();
    for profile in [Profile::Strict, Profile::Harbor] {
        let report = validate(&value, &ValidateOptions::with_profile(profile));
        let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
        assert!(errors.is_empty(), "{profile:?}: {errors:?}\n{value:#}");
    }
    trajectory
}

/// A POST to `path` answered 200 with the JSON `reply`.
fn json_exchange(path: &str, request: Value, reply: Value) -> HttpExchange {
    HttpExchange::new("POST", path, request, 200).with_body(reply)
}

/// A POST to `path` answered 200 with the event stream `events`.
fn streamed(path: &str, request: Value, events: Vec<SseEvent>) -> HttpExchange {
    HttpExchange::new("POST", path, request, 200).with_events(events)
}

fn typed(items: &[Value]) -> Vec<SseEvent> {
    items.iter().map(|data| SseEvent::new(data["type"].as_str(), data.clone())).collect()
}

fn sources(trajectory: &Trajectory) -> Vec<StepSource> {
    trajectory.steps.iter().map(|step| step.source).collect()
}

const READ_TOOL: &str =
    r#"{"name": "Read", "description": "Reads a file.", "input_schema": {"type": "object"}}"#;

/// An Anthropic tool loop, streamed: one call reading a file, then an answer quoting it.
fn anthropic_loop() -> Vec<HttpExchange> {
    let tool: Value = serde_json::from_str(READ_TOOL).unwrap();
    let first_request = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "stream": true,
        "system": [{"type": "text", "text": "You are a careful agent."}],
        "messages": [{"role": "user", "content": "What does a.txt say?"}],
        "tools": [tool],
        "metadata": {"user_id": "session-4f1c"}
    });
    let first_reply = typed(&[
        json!({"type": "message_start", "message": {"model": "claude-sonnet-4-5-20250929", "content": [], "usage": {"input_tokens": 30, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\":"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": " \"a.txt\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}}),
        json!({"type": "message_stop"}),
    ]);
    let mut second_request = first_request.clone();
    second_request["messages"] = json!([
        {"role": "user", "content": "What does a.txt say?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.txt"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "hello world"}]}
    ]);
    let second_reply = json!({
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "It says: hello world"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 50, "output_tokens": 8, "cache_read_input_tokens": 20}
    });
    vec![
        streamed("/v1/messages?beta=true", first_request, first_reply),
        json_exchange("/v1/messages?beta=true", second_request, second_reply),
    ]
}

#[test]
fn an_anthropic_tool_loop_becomes_prompt_steps_agent_steps_and_joined_observations() {
    let trajectory = capture(&anthropic_loop());
    assert_eq!(
        sources(&trajectory),
        [StepSource::System, StepSource::User, StepSource::Agent, StepSource::Agent]
    );
    assert_eq!(trajectory.steps[0].message.text(), "You are a careful agent.");
    assert_eq!(trajectory.steps[1].message.text(), "What does a.txt say?");
    let call_step = &trajectory.steps[2];
    assert_eq!(call_step.model_name.as_deref(), Some("claude-sonnet-4-5-20250929"));
    assert_eq!(call_step.tool_calls()[0].tool_call_id, "toolu_1");
    assert_eq!(call_step.tool_calls()[0].arguments["file_path"], "a.txt");
    let result = &call_step.results()[0];
    assert_eq!(result.source_call_id.as_deref(), Some("toolu_1"));
    assert_eq!(result.content.as_ref().unwrap().text(), "hello world");
    assert_eq!(call_step.metrics.as_ref().unwrap().prompt_tokens, Some(30));
    assert_eq!(call_step.metrics.as_ref().unwrap().completion_tokens, Some(12));
    assert_eq!(call_step.llm_call_count, Some(1));
    let params = &call_step.extra.as_ref().unwrap()["request_params"];
    assert_eq!(params, &json!({"max_tokens": 512}), "metadata ids are no parameters");
    let answer = &trajectory.steps[3];
    assert_eq!(answer.message.text(), "It says: hello world");
    assert_eq!(answer.metrics.as_ref().unwrap().prompt_tokens, Some(70));
    assert_eq!(answer.metrics.as_ref().unwrap().cached_tokens, Some(20));
    assert_eq!(trajectory.agent.name, "traffic-agent");
    assert_eq!(trajectory.agent.model_name.as_deref(), Some("claude-sonnet-4-5-20250929"));
    assert_eq!(trajectory.agent.tool_definitions.as_ref().unwrap().len(), 1);
    let totals = trajectory.final_metrics.as_ref().unwrap();
    assert_eq!((totals.total_prompt_tokens, totals.total_steps), (Some(100), Some(4)));
}

#[test]
fn an_anthropic_system_message_among_the_messages_becomes_a_system_step() {
    // Claude Code 2.x sends reminders as `{"role": "system"}` messages.
    let request = json!({"model": "claude", "max_tokens": 64, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": [{"type": "text", "text": "Reminder: be brief."}]}]});
    let reply = json!({"model": "claude", "content": [{"type": "text", "text": "Hello."}],
                       "stop_reason": "end_turn", "usage": {"input_tokens": 5, "output_tokens": 2}});
    let trajectory = capture(&[json_exchange("/v1/messages", request, reply)]);
    assert_eq!(sources(&trajectory), [StepSource::System, StepSource::User, StepSource::Agent]);
    assert_eq!(trajectory.steps[0].message.text(), "Reminder: be brief.");
}

#[test]
fn an_openai_chat_loop_joins_tool_messages_and_keeps_parameters() {
    let tools = json!([{"type": "function", "function": {"name": "shell", "parameters": {"type": "object"}}}]);
    let first = json!({
        "model": "gpt-4.1", "temperature": 0, "tool_choice": "auto", "user": "u-1", "tools": tools,
        "messages": [{"role": "system", "content": "Run commands."}, {"role": "user", "content": "List files."}]
    });
    let mut second = first.clone();
    second["messages"] = json!([
        {"role": "system", "content": "Run commands."},
        {"role": "user", "content": "List files."},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"ls\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"pwd\"}"}}
        ]},
        {"role": "tool", "tool_call_id": "call_2", "content": "/work"},
        {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
        {"role": "user", "content": "Thanks; now summarise."}
    ]);
    let reply = |message: Value, finish: &str| {
        json!({"model": "gpt-4.1-2025-04-14", "choices": [{"index": 0, "message": message, "finish_reason": finish}],
               "usage": {"prompt_tokens": 10, "completion_tokens": 5, "completion_tokens_details": {"reasoning_tokens": 2}}})
    };
    let exchanges = [
        json_exchange(
            "/v1/chat/completions",
            first,
            reply(
                json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"ls\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"pwd\"}"}}
                ]}),
                "tool_calls",
            ),
        ),
        json_exchange(
            "/v1/chat/completions",
            second,
            reply(json!({"role": "assistant", "content": "One file in /work."}), "stop"),
        ),
    ];
    let trajectory = capture(&exchanges);
    assert_eq!(
        sources(&trajectory),
        [
            StepSource::System,
            StepSource::User,
            StepSource::Agent,
            StepSource::User,
            StepSource::Agent
        ]
    );
    let results: Vec<_> = trajectory.steps[2]
        .results()
        .iter()
        .map(|result| {
            (result.source_call_id.clone().unwrap(), result.content.as_ref().unwrap().text())
        })
        .collect();
    assert_eq!(
        results,
        [("call_1".to_owned(), "a.txt".to_owned()), ("call_2".to_owned(), "/work".to_owned())],
        "results in call order"
    );
    assert_eq!(trajectory.steps[3].message.text(), "Thanks; now summarise.");
    let extra = trajectory.steps[2].extra.as_ref().unwrap();
    assert_eq!(extra["request_params"], json!({"temperature": 0, "tool_choice": "auto"}));
    let metrics = trajectory.steps[2].metrics.as_ref().unwrap();
    assert_eq!(metrics.extra.as_ref().unwrap()["reasoning_tokens"], json!(2));
}

#[test]
fn responses_and_gemini_loops_join_results_to_their_calls() {
    let responses = [
        json_exchange(
            "/v1/responses",
            json!({"model": "gpt-5", "instructions": "Be brief.", "input": "Where am I?"}),
            json!({"model": "gpt-5", "status": "completed", "output": [
                {"type": "function_call", "call_id": "call_9", "name": "pwd", "arguments": "{}"}
            ], "usage": {"input_tokens": 9, "output_tokens": 3}}),
        ),
        json_exchange(
            "/v1/responses",
            json!({"model": "gpt-5", "instructions": "Be brief.", "input": [
                {"role": "user", "content": "Where am I?"},
                {"type": "function_call", "call_id": "call_9", "name": "pwd", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_9", "output": "/home/me"}
            ]}),
            json!({"model": "gpt-5", "status": "completed", "output": [
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "In /home/me."}]}
            ]}),
        ),
    ];
    let trajectory = capture(&responses);
    assert_eq!(trajectory.steps[2].results()[0].content.as_ref().unwrap().text(), "/home/me");

    let path = "/v1beta/models/gemini-2.5-flash:generateContent";
    let gemini = [
        json_exchange(
            path,
            json!({"contents": [{"role": "user", "parts": [{"text": "Time?"}]}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "now", "args": {}}}]}, "finishReason": "STOP"}]}),
        ),
        json_exchange(
            path,
            json!({"contents": [
                {"role": "user", "parts": [{"text": "Time?"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "now", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "now", "response": {"output": "noon"}}}]}
            ]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "It is noon."}]}, "finishReason": "STOP"}]}),
        ),
    ];
    let trajectory = capture(&gemini);
    assert_eq!(sources(&trajectory), [StepSource::User, StepSource::Agent, StepSource::Agent]);
    let step = &trajectory.steps[1];
    assert_eq!(step.model_name.as_deref(), Some("gemini-2.5-flash"), "the model from the path");
    assert_eq!(step.results()[0].source_call_id.as_deref(), Some("call_1"));
    assert_eq!(step.results()[0].content.as_ref().unwrap().text(), "noon");
}

#[test]
fn other_conversations_become_subagents_linked_to_the_call_that_launched_them() {
    let main_request = |messages: Value| json!({"model": "claude-sonnet-4-5", "system": "You lead.", "messages": messages, "max_tokens": 100});
    let task_call = json!({"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {"description": "count", "prompt": "Count the \"txt\" files."}});
    let text = |text: &str| json!({"model": "claude-haiku-4-5", "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "usage": {"input_tokens": 5, "output_tokens": 2}});
    let exchanges = [
        // An auxiliary call nobody launched (a title for the session).
        json_exchange(
            "/v1/messages",
            json!({"model": "claude-haiku-4-5", "system": "Write a title.", "messages": [{"role": "user", "content": "Count files"}], "max_tokens": 20}),
            text("Counting files"),
        ),
        json_exchange(
            "/v1/messages",
            main_request(json!([{"role": "user", "content": "How many txt files?"}])),
            json!({"model": "claude-sonnet-4-5", "content": [task_call], "stop_reason": "tool_use", "usage": {"input_tokens": 9, "output_tokens": 4}}),
        ),
        json_exchange(
            "/v1/messages",
            json!({"model": "claude-haiku-4-5", "system": "You count.", "messages": [{"role": "user", "content": "Count the \"txt\" files."}], "max_tokens": 50}),
            text("3"),
        ),
        json_exchange(
            "/v1/messages",
            main_request(json!([
                {"role": "user", "content": "How many txt files?"},
                {"role": "assistant", "content": [task_call]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_task", "content": "3"}]}
            ])),
            text("There are 3."),
        ),
    ];
    let trajectory = capture(&exchanges);
    assert_eq!(trajectory.steps[1].message.text(), "How many txt files?", "the main agent");
    let subagents = trajectory.subagents();
    assert_eq!(subagents.len(), 2);
    let launched = &trajectory.steps[2].results()[0];
    assert_eq!(launched.content.as_ref().unwrap().text(), "3");
    let reference = &launched.subagent_trajectory_ref.as_ref().unwrap()[0];
    let counter = subagents
        .iter()
        .find(|sub| sub.trajectory_id == reference.trajectory_id)
        .expect("the ref names an embedded subagent");
    assert_eq!(counter.steps[1].message.text(), "Count the \"txt\" files.");
    assert_eq!(counter.steps[2].message.text(), "3");
    let closing = trajectory.steps.last().unwrap();
    assert_eq!(closing.source, StepSource::System);
    let titler = closing.results()[0].subagent_trajectory_ref.as_ref().unwrap()[0].clone();
    let titler = subagents.iter().find(|sub| sub.trajectory_id == titler.trajectory_id).unwrap();
    assert_eq!(titler.steps[0].message.text(), "Write a title.");
}

#[test]
fn calls_that_are_no_successful_model_calls_are_skipped() {
    let mut exchanges = anthropic_loop();
    let mut rate_limited = exchanges[0].clone();
    rate_limited.status = 429;
    rate_limited.events = None;
    rate_limited.body = Some(
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
    );
    exchanges.insert(0, rate_limited);
    exchanges.insert(
        0,
        json_exchange(
            "/v1/messages/count_tokens",
            json!({"messages": []}),
            json!({"input_tokens": 3}),
        ),
    );
    exchanges.push(
        HttpExchange::new("GET", "/v1/models", Value::Null, 200).with_body(json!({"data": []})),
    );
    let trajectory = capture(&exchanges);
    assert_eq!(trajectory.steps.len(), 4);
}

#[test]
fn a_cut_stream_is_kept_and_says_so() {
    let mut exchanges = anthropic_loop();
    exchanges.truncate(1);
    if let Some(events) = &mut exchanges[0].events {
        // Cut inside the tool call's arguments.
        events.truncate(3);
    }
    exchanges[0].cut = Some("the upstream closed the connection".to_owned());
    let trajectory = capture(&exchanges);
    let step = trajectory.steps.last().unwrap();
    assert_eq!(step.extra.as_ref().unwrap()["stream_cut"], "the upstream closed the connection");
    assert_eq!(step.tool_calls()[0].arguments["value"], "{\"file_path\":", "the arguments so far");
}

/// A tool call streamed as llama-cpp-python's server streams it: the function's name repeated
/// in every delta (OpenAI sends it once), and no usage, since the request did not ask for
/// `stream_options.include_usage`.
fn llama_cpp_stream() -> Vec<SseEvent> {
    let delta = |name: &str, arguments: &str| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gemma", "choices": [{
            "index": 0, "finish_reason": null,
            "delta": {"role": "assistant", "content": null, "tool_calls": [{
                "index": 0, "id": "call_abc", "type": "function",
                "function": {"name": name, "arguments": arguments}}]}}]})
    };
    let mut events: Vec<SseEvent> = [r#"{"city": "#, r#""Paris""#, "}"]
        .iter()
        .map(|part| SseEvent::new(None, delta("get_weather", part)))
        .collect();
    events.push(SseEvent::new(
        None,
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gemma",
               "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ));
    events.push(SseEvent::from_text(None, "[DONE]"));
    events
}

#[test]
fn a_name_repeated_in_every_delta_is_read_once_and_unreported_usage_gives_no_metrics() {
    let events = llama_cpp_stream();
    let parsed = atif_wire::parse_stream(atif_wire::Protocol::OpenAiChat, &events).unwrap();
    assert_eq!(parsed.tool_calls.len(), 1);
    assert_eq!(parsed.tool_calls[0].name, "get_weather");
    assert_eq!(parsed.tool_calls[0].arguments, json!({"city": "Paris"}));
    assert!(parsed.usage_unknown, "no usage came: {parsed:?}");

    let request = json!({"model": "gemma", "stream": true, "messages": [{"role": "user", "content": "Weather?"}]});
    let trajectory = capture(&[streamed("/v1/chat/completions", request, events)]);
    let step = trajectory.steps.last().unwrap();
    assert_eq!(step.tool_calls()[0].function_name, "get_weather");
    assert_eq!(step.metrics, None, "tokens nobody reported are not written as 0");
    assert_eq!(trajectory.final_metrics.as_ref().and_then(|m| m.total_prompt_tokens), None);

    let mut reported = llama_cpp_stream();
    reported.insert(
        4,
        SseEvent::new(None, json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gemma", "choices": [],
            "usage": {"prompt_tokens": 0, "completion_tokens": 9, "total_tokens": 9}})),
    );
    let parsed = atif_wire::parse_stream(atif_wire::Protocol::OpenAiChat, &reported).unwrap();
    assert!(!parsed.usage_unknown, "a usage of 0 prompt tokens is a count: {parsed:?}");
}

#[test]
fn unreadable_traffic_is_an_error_naming_the_exchange() {
    let mut exchanges = anthropic_loop();
    exchanges[1].body = Some(json!({"content": "not blocks"}));
    let err = trajectory_from_traffic(&exchanges, &options()).unwrap_err();
    assert!(matches!(err, Error::Exchange { exchange: 2, .. }), "{err:?}");
    assert_eq!(
        chain(&err),
        "cannot read HTTP exchange #2 (/v1/messages?beta=true): malformed Anthropic Messages reply \
         at /content: expected an array of content blocks, found a string"
    );
    let err = trajectory_from_traffic(&[], &options()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot capture a trajectory from this traffic: none of the 0 exchanges is a successful \
         model call, so there is no step to write"
    );
}

/// An OpenAI Chat Completions conversation: `system`, then `turns` of user text, assistant tool
/// calls (`(id, arguments)`) and tool results, as a request body.
fn chat_request(system: &str, user: &str, turns: &[(&str, &str, &str)]) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": system}),
        json!({"role": "user", "content": user}),
    ];
    for (id, arguments, result) in turns {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "run", "arguments": arguments}}
        ]}));
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
    }
    json!({"model": "gpt-4.1", "messages": messages})
}

/// A Chat Completions reply calling `run` with `arguments` under call id `id`.
fn chat_call(id: &str, arguments: &str) -> Value {
    json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
           "tool_calls": [{"id": id, "type": "function", "function": {"name": "run", "arguments": arguments}}]}}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 3}})
}

/// A Chat Completions reply saying `text`.
fn chat_text(text: &str) -> Value {
    json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 3}})
}

/// Each step's source and text, with the observation's results as `= content`.
fn transcript(trajectory: &Trajectory) -> Vec<String> {
    trajectory
        .steps
        .iter()
        .map(|step| {
            let mut line = format!("{:?}: {}", step.source, step.message.text());
            for call in step.tool_calls.iter().flatten() {
                line.push_str(&format!(
                    " [{} {}]",
                    call.tool_call_id,
                    Value::Object(call.arguments.clone())
                ));
            }
            for result in step.results() {
                let content = result.content.as_ref().map(|content| content.text());
                line.push_str(&format!(" = {}", content.unwrap_or_default()));
            }
            line
        })
        .collect()
}

#[test]
fn two_interleaved_conversations_sharing_a_system_prompt_stay_apart() {
    // Two independent tasks on one system prompt, their requests interleaved, each using the
    // call id `call_1`: each result must join the call of its own conversation.
    let system = "You run commands.";
    let a = |turns: &[(&str, &str, &str)]| chat_request(system, "Read a.txt", turns);
    let b = |turns: &[(&str, &str, &str)]| chat_request(system, "Read b.txt", turns);
    let path = "/v1/chat/completions";
    let exchanges = [
        json_exchange(path, a(&[]), chat_call("call_1", r#"{"cmd":"cat a.txt"}"#)),
        json_exchange(path, b(&[]), chat_call("call_1", r#"{"cmd":"cat b.txt"}"#)),
        json_exchange(
            path,
            a(&[("call_1", r#"{"cmd":"cat a.txt"}"#, "alpha")]),
            chat_call("call_2", r#"{"cmd":"wc a.txt"}"#),
        ),
        json_exchange(
            path,
            b(&[("call_1", r#"{"cmd":"cat b.txt"}"#, "beta")]),
            chat_text("b says beta"),
        ),
        json_exchange(
            path,
            a(&[
                ("call_1", r#"{"cmd":"cat a.txt"}"#, "alpha"),
                ("call_2", r#"{"cmd":"wc a.txt"}"#, "1 word"),
            ]),
            chat_text("a says alpha, in 1 word"),
        ),
    ];
    let trajectory = capture(&exchanges);
    assert_eq!(
        transcript(&trajectory),
        [
            "System: You run commands.",
            "User: Read a.txt",
            r#"Agent:  [call_1 {"cmd":"cat a.txt"}] = alpha"#,
            r#"Agent:  [call_2 {"cmd":"wc a.txt"}] = 1 word"#,
            "Agent: a says alpha, in 1 word",
            "System: conversations no tool call of this agent launched = ",
        ],
        "the conversation with the most calls is the main agent"
    );
    let subagents = trajectory.subagents();
    assert_eq!(subagents.len(), 1);
    assert_eq!(
        transcript(&subagents[0]),
        [
            "System: You run commands.",
            "User: Read b.txt",
            r#"Agent:  [call_1 {"cmd":"cat b.txt"}] = beta"#,
            "Agent: b says beta",
        ]
    );
    let closing = trajectory.steps.last().unwrap().results()[0].subagent_trajectory_ref.clone();
    assert_eq!(closing.unwrap()[0].trajectory_id, subagents[0].trajectory_id);
}

#[test]
fn a_subagent_spawned_mid_run_is_the_subagent_even_when_it_makes_more_calls() {
    // The main agent delegates with a `Task`-like call; the subagent works three calls, its
    // parent only two: the launch, not the number of calls, says which is which.
    let path = "/v1/chat/completions";
    let main = |turns: &[(&str, &str, &str)]| chat_request("You lead.", "Fix the bug.", turns);
    let task = r#"{"cmd":"delegate","prompt":"Find the failing test."}"#;
    let sub =
        |turns: &[(&str, &str, &str)]| chat_request("You search.", "Find the failing test.", turns);
    let grep = ("call_g", r#"{"cmd":"grep -rn assert tests"}"#, "tests/a.rs:3");
    let read = ("call_r", r#"{"cmd":"sed -n 3p tests/a.rs"}"#, "assert_eq!(1, 2)");
    let exchanges = [
        json_exchange(path, main(&[]), chat_call("call_task", task)),
        json_exchange(path, sub(&[]), chat_call(grep.0, grep.1)),
        json_exchange(path, sub(&[grep]), chat_call(read.0, read.1)),
        json_exchange(path, sub(&[grep, read]), chat_text("tests/a.rs line 3 fails")),
        json_exchange(
            path,
            main(&[("call_task", task, "tests/a.rs line 3 fails")]),
            chat_text("Fixed tests/a.rs."),
        ),
    ];
    let trajectory = capture(&exchanges);
    assert_eq!(
        transcript(&trajectory),
        [
            "System: You lead.",
            "User: Fix the bug.",
            &format!("Agent:  [call_task {task}] = tests/a.rs line 3 fails"),
            "Agent: Fixed tests/a.rs.",
        ],
        "no closing step: the subagent is linked to the call that launched it"
    );
    let subagents = trajectory.subagents();
    assert_eq!(subagents.len(), 1);
    assert_eq!(
        transcript(&subagents[0]),
        [
            "System: You search.",
            "User: Find the failing test.",
            r#"Agent:  [call_g {"cmd":"grep -rn assert tests"}] = tests/a.rs:3"#,
            r#"Agent:  [call_r {"cmd":"sed -n 3p tests/a.rs"}] = assert_eq!(1, 2)"#,
            "Agent: tests/a.rs line 3 fails",
        ]
    );
    let reference = trajectory.steps[2].results()[0].subagent_trajectory_ref.clone().unwrap();
    assert_eq!(reference[0].trajectory_id, subagents[0].trajectory_id);
}
