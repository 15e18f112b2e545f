//! The trajectory builder: what it produces, what it refuses, and (property test) that what it
//! builds is always valid.

use atif_schema::{
    Agent, AgentStepBuilder, AudioMediaType, AudioSource, ContentPart, Error, ImageMediaType,
    ImageSource, Message, Metrics, SchemaVersion, StepBuilder, StepSource, Trajectory,
    TrajectoryBuilder, ValidateOptions, json_schema, validate,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use serde_json::json;

fn agent() -> Agent {
    Agent::new("builder-test", "1.0")
}

fn build_error(result: Result<impl std::fmt::Debug, Error>) -> String {
    match result {
        Err(err @ Error::Build { .. }) => err.to_string(),
        other => panic!("expected a build error, got {other:?}"),
    }
}

#[test]
fn a_built_trajectory_numbers_steps_joins_calls_and_sums_metrics() {
    let trajectory = TrajectoryBuilder::new(agent())
        .session_id("s-1")
        .system("You are helpful.")
        .user("Read a.txt")
        .agent_step(
            AgentStepBuilder::new("Reading.")
                .model_name("m")
                .tool_call("c1", "read", json!({"path": "a.txt"}))
                .unwrap()
                .tool_result("c1", "hello")
                .unwrap()
                .metrics(Metrics {
                    prompt_tokens: Some(10),
                    completion_tokens: Some(2),
                    cost_usd: Some(1.into()),
                    ..Metrics::default()
                }),
        )
        .agent_step(AgentStepBuilder::new("It says hello.").metrics(Metrics {
            prompt_tokens: Some(15),
            cached_tokens: Some(10),
            cost_usd: Some(2.into()),
            ..Metrics::default()
        }))
        .build()
        .unwrap();
    assert_eq!(
        trajectory.to_value(),
        json!({
            "schema_version": "ATIF-v1.8",
            "session_id": "s-1",
            "agent": {"name": "builder-test", "version": "1.0"},
            "steps": [
                {"step_id": 1, "source": "system", "message": "You are helpful."},
                {"step_id": 2, "source": "user", "message": "Read a.txt"},
                {
                    "step_id": 3, "source": "agent", "model_name": "m", "message": "Reading.",
                    "tool_calls": [{"tool_call_id": "c1", "function_name": "read", "arguments": {"path": "a.txt"}}],
                    "observation": {"results": [{"source_call_id": "c1", "content": "hello"}]},
                    "metrics": {"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 1}
                },
                {
                    "step_id": 4, "source": "agent", "message": "It says hello.",
                    "metrics": {"prompt_tokens": 15, "cached_tokens": 10, "cost_usd": 2}
                }
            ],
            "final_metrics": {
                "total_prompt_tokens": 25, "total_completion_tokens": 2, "total_cached_tokens": 10,
                "total_cost_usd": 3, "total_steps": 4
            }
        })
    );
}

#[test]
fn fractional_costs_are_summed_as_floats() {
    let step = |cost: f64| {
        AgentStepBuilder::new("x")
            .metrics(Metrics { cost_usd: serde_json::Number::from_f64(cost), ..Metrics::default() })
    };
    let trajectory = TrajectoryBuilder::new(agent())
        .agent_step(step(0.25))
        .agent_step(step(0.5))
        .build()
        .unwrap();
    let total = trajectory.final_metrics.unwrap().total_cost_usd.unwrap();
    assert_eq!(total.as_f64(), Some(0.75));
}

#[test]
fn embedded_subagents_get_their_ids_and_refs_resolve_to_them() {
    let child = TrajectoryBuilder::new(Agent::new("child", "1"))
        .user("task")
        .agent_step(AgentStepBuilder::new("done"));
    let trajectory = TrajectoryBuilder::new(agent())
        .subagent("child-1", child)
        .unwrap()
        .agent_step(
            AgentStepBuilder::new("delegating")
                .tool_call("d", "delegate", json!({}))
                .unwrap()
                .subagent_result("d", "child-1", Some(Message::from("child says done")))
                .unwrap(),
        )
        .build()
        .unwrap();
    assert_eq!(trajectory.subagents()[0].trajectory_id.as_deref(), Some("child-1"));
    assert_eq!(trajectory.subagents()[0].final_metrics.as_ref().unwrap().total_steps, Some(2));
    let reference = &trajectory.steps[0].results()[0].subagent_trajectory_ref.as_ref().unwrap()[0];
    assert_eq!(reference.trajectory_id.as_deref(), Some("child-1"));
}

#[test]
fn a_system_step_may_refer_to_embedded_subagents_it_started() {
    let child = || TrajectoryBuilder::new(Agent::new("child", "1")).user("task");
    let built = TrajectoryBuilder::new(agent())
        .subagent("child-1", child())
        .unwrap()
        .step(StepBuilder::system("started subagents").subagent_result("child-1", None))
        .build()
        .unwrap();
    let result = &built.steps[0].results()[0];
    assert_eq!(result.source_call_id, None);
    let reference = &result.subagent_trajectory_ref.as_ref().unwrap()[0];
    assert_eq!(reference.trajectory_id.as_deref(), Some("child-1"));
    let refused = TrajectoryBuilder::new(agent())
        .step(StepBuilder::system("started subagents").subagent_result("nobody", None))
        .build()
        .unwrap_err();
    assert!(refused.to_string().contains("`nobody`"), "{refused}");
}

#[test]
fn messages_given_as_parts_stay_parts_and_stored_subagents_are_referred_to_by_path() {
    let parts = Message::Parts(vec![
        ContentPart::Text { text: "one".into() },
        ContentPart::Text { text: "two".into() },
    ]);
    let built = TrajectoryBuilder::new(agent())
        .step(
            StepBuilder::user(parts)
                .result("context")
                .stored_subagent_result("runs/child.json", Some("child done".into())),
        )
        .agent_step(
            AgentStepBuilder::new("ok")
                .reasoning_effort(atif_schema::ReasoningEffort::Text("high".into()))
                .copied_context(),
        )
        .notes("two steps")
        .build()
        .unwrap();
    let written = built.to_value();
    assert_eq!(
        written["steps"][0],
        json!({
            "step_id": 1, "source": "user",
            "message": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
            "observation": {"results": [
                {"content": "context"},
                {"content": "child done", "subagent_trajectory_ref": [{"trajectory_path": "runs/child.json"}]}
            ]}
        })
    );
    assert_eq!(
        written["steps"][1],
        json!({"step_id": 2, "source": "agent", "message": "ok", "reasoning_effort": "high", "is_copied_context": true})
    );
    assert_eq!(written["notes"], "two steps");
}

#[test]
fn the_builder_refuses_what_would_make_an_invalid_trajectory() {
    let step = || AgentStepBuilder::new("x").tool_call("c1", "f", json!({})).unwrap();
    let message = build_error(step().tool_result("c2", "r"));
    assert!(
        message.contains("a result for tool call `c2`, but this step has no call with that id"),
        "{message}"
    );
    let message = build_error(step().subagent_result("c9", "sub", None));
    assert!(message.contains("`c9`"), "{message}");
    let message = build_error(step().tool_call("c1", "f", json!({})));
    assert!(message.contains("already has a tool call `c1`"), "{message}");
    let message = build_error(AgentStepBuilder::new("x").tool_call("c", "f", json!("{\"a\": 1}")));
    assert!(message.contains("must be a JSON object"), "{message}");

    let message = build_error(TrajectoryBuilder::new(agent()).build());
    assert!(message.contains("at least one step"), "{message}");

    let dispatch = AgentStepBuilder::new("x").llm_call_count(0).reasoning_content("thinking");
    let message =
        build_error(TrajectoryBuilder::new(agent()).user("u").agent_step(dispatch).build());
    assert!(message.contains("step 2: llm_call_count 0"), "{message}");
    // An empty reasoning text is left out, so a dispatch step may be given one.
    let dispatch = AgentStepBuilder::new("x").llm_call_count(0).reasoning_content("");
    let built = TrajectoryBuilder::new(agent()).user("u").agent_step(dispatch).build().unwrap();
    assert_eq!(built.to_value()["steps"][1].get("reasoning_content"), None);

    let delegating = step().subagent_result("c1", "nobody", None).unwrap();
    let message = build_error(TrajectoryBuilder::new(agent()).agent_step(delegating).build());
    assert!(
        message.contains("trajectory_id `nobody`, but no subagent with that id is embedded"),
        "{message}"
    );

    let child = || TrajectoryBuilder::new(agent()).user("u");
    let message = build_error(
        TrajectoryBuilder::new(agent()).subagent("a", child()).unwrap().subagent("a", child()),
    );
    assert!(message.contains("`a` is already embedded"), "{message}");
    let message = build_error(
        TrajectoryBuilder::new(agent()).subagent("empty", TrajectoryBuilder::new(agent())),
    );
    assert!(message.contains("at least one step"), "{message}");

    // What is taken verbatim is checked by the validator.
    let late = StepBuilder::user("u").timestamp("yesterday at noon");
    let message = build_error(TrajectoryBuilder::new(agent()).step(late).build());
    assert!(
        message.contains("the trajectory would be invalid")
            && message.contains("/steps/0/timestamp"),
        "{message}"
    );
}

// ---- property test -------------------------------------------------------------------------

/// What one random step does.
#[derive(Debug, Clone)]
enum StepSpec {
    User { parts: Vec<u8>, results: u8, copied: bool },
    System { stored_ref: bool, extra: bool },
    Agent(AgentSpec),
}

#[derive(Debug, Clone)]
struct AgentSpec {
    parts: Vec<u8>,
    calls: u8,
    answered: Vec<bool>,
    metrics: Option<(i64, i64, Option<i64>, Option<u32>)>,
    llm_call_count: Option<u64>,
    reasoning: bool,
    delegate_to: Option<usize>,
    timestamp: Option<u8>,
}

fn step_spec() -> impl Strategy<Value = StepSpec> {
    let parts = prop::collection::vec(0u8..4, 0..3);
    let agent = (
        parts.clone(),
        0u8..4,
        prop::collection::vec(any::<bool>(), 4),
        prop::option::of((
            0i64..5000,
            0i64..500,
            prop::option::of(0i64..5000),
            prop::option::of(0u32..10_000),
        )),
        prop::option::of(0u64..4),
        any::<bool>(),
        prop::option::of(0usize..3),
        prop::option::of(0u8..60),
    )
        .prop_map(
            |(
                parts,
                calls,
                answered,
                metrics,
                llm_call_count,
                reasoning,
                delegate_to,
                timestamp,
            )| {
                StepSpec::Agent(AgentSpec {
                    parts,
                    calls,
                    answered,
                    metrics,
                    llm_call_count,
                    reasoning,
                    delegate_to,
                    timestamp,
                })
            },
        );
    prop_oneof![
        (parts, 0u8..3, any::<bool>()).prop_map(|(parts, results, copied)| StepSpec::User {
            parts,
            results,
            copied
        }),
        (any::<bool>(), any::<bool>())
            .prop_map(|(stored_ref, extra)| StepSpec::System { stored_ref, extra }),
        agent,
    ]
}

/// A message of text, or of text, image and audio parts.
fn message(parts: &[u8], text: &str) -> Message {
    if parts.is_empty() {
        return Message::from(text);
    }
    let parts = parts
        .iter()
        .map(|kind| match kind {
            0 => ContentPart::Text { text: text.to_owned() },
            1 => ContentPart::Image {
                source: ImageSource {
                    media_type: ImageMediaType::Png,
                    path: "images/a.png".to_owned(),
                },
            },
            2 => ContentPart::Audio {
                source: AudioSource {
                    media_type: AudioMediaType::Mpeg,
                    path: "audio/a.mp3".to_owned(),
                    duration_sec: Some(3.into()),
                },
            },
            _ => ContentPart::Text { text: String::new() },
        })
        .collect();
    Message::Parts(parts)
}

fn build(steps: &[StepSpec], subagents: &[Vec<StepSpec>]) -> Trajectory {
    let mut builder = TrajectoryBuilder::new(agent()).session_id("run");
    let mut embedded = Vec::new();
    for (idx, child) in subagents.iter().enumerate() {
        let id = format!("sub-{idx}");
        let child_builder =
            builder_with_steps(TrajectoryBuilder::new(Agent::new("child", "1")), child, &[]);
        builder = builder.subagent(id.clone(), child_builder).unwrap();
        embedded.push(id);
    }
    builder_with_steps(builder, steps, &embedded).build().unwrap()
}

fn builder_with_steps(
    mut builder: TrajectoryBuilder,
    steps: &[StepSpec],
    embedded: &[String],
) -> TrajectoryBuilder {
    for (idx, spec) in steps.iter().enumerate() {
        builder = match spec {
            StepSpec::User { parts, results, copied } => {
                let mut step = StepBuilder::user(message(parts, "question"));
                for result in 0..*results {
                    step = step.result(format!("attachment {result}"));
                }
                if *copied {
                    step = step.copied_context();
                }
                builder.step(step)
            }
            StepSpec::System { stored_ref, extra } => {
                let mut step = StepBuilder::system("event");
                if *stored_ref {
                    step = step.stored_subagent_result("s3://bucket/summary.json", None);
                }
                if *extra {
                    let extra = json!({"context_management": {"type": "compaction", "boundary": "replace"}});
                    step = step.extra(extra.as_object().unwrap().clone());
                }
                builder.step(step)
            }
            StepSpec::Agent(spec) => builder.agent_step(agent_step(spec, idx, embedded)),
        };
    }
    builder
}

fn agent_step(spec: &AgentSpec, idx: usize, embedded: &[String]) -> AgentStepBuilder {
    let mut step = AgentStepBuilder::new(message(&spec.parts, "answer")).model_name("model");
    if let Some(second) = spec.timestamp {
        step = step.timestamp(format!("2025-10-16T14:30:{second:02}Z"));
    }
    for call in 0..spec.calls {
        let id = format!("call-{idx}-{call}");
        step =
            step.tool_call(id.clone(), "tool", json!({"n": call, "nested": {"x": null}})).unwrap();
        if spec.answered[usize::from(call)] {
            step = step.tool_result(&id, format!("result {call}")).unwrap();
        }
    }
    if let Some(target) = spec.delegate_to.filter(|target| *target < embedded.len()) {
        let id = format!("delegate-{idx}");
        step = step.tool_call(id.clone(), "delegate", json!({})).unwrap();
        step = step.subagent_result(&id, embedded[target].clone(), None).unwrap();
    }
    let dispatch = spec.llm_call_count == Some(0);
    if let Some(count) = spec.llm_call_count {
        step = step.llm_call_count(count);
    }
    if !dispatch {
        if spec.reasoning {
            step = step.reasoning_content("because");
        }
        if let Some((prompt, completion, cached, cost_cents)) = spec.metrics {
            step = step.metrics(Metrics {
                prompt_tokens: Some(prompt),
                completion_tokens: Some(completion),
                cached_tokens: cached.map(|cached| cached.min(prompt)),
                cost_usd: cost_cents
                    .and_then(|cents| serde_json::Number::from_f64(f64::from(cents) / 100.0)),
                ..Metrics::default()
            });
        }
    }
    step
}

/// The rules a built trajectory must keep, checked directly on the typed model.
fn check_invariants(trajectory: &Trajectory) {
    for (idx, step) in trajectory.steps.iter().enumerate() {
        assert_eq!(step.step_id, idx as u64 + 1);
        if step.source != StepSource::Agent {
            assert!(step.model_name.is_none() && step.reasoning_effort.is_none());
            assert!(
                step.reasoning_content.is_none()
                    && step.tool_calls.is_none()
                    && step.metrics.is_none()
            );
        }
        if step.llm_call_count == Some(0) {
            assert!(step.metrics.is_none() && step.reasoning_content.is_none());
        }
        for result in step.results() {
            if let Some(call_id) = &result.source_call_id {
                assert!(step.tool_calls().iter().any(|call| &call.tool_call_id == call_id));
            }
            for reference in result.subagent_trajectory_ref.iter().flatten() {
                assert!(reference.trajectory_id.is_some() || reference.trajectory_path.is_some());
                if let Some(id) = &reference.trajectory_id {
                    assert!(
                        trajectory
                            .subagents()
                            .iter()
                            .any(|sub| sub.trajectory_id.as_ref() == Some(id))
                    );
                }
            }
        }
    }
    let mut ids: Vec<&str> =
        trajectory.subagents().iter().map(|sub| sub.trajectory_id.as_deref().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), trajectory.subagents().len());
    let totals = trajectory.final_metrics.as_ref().unwrap();
    assert_eq!(totals.total_steps, Some(trajectory.steps.len() as u64));
    let prompt: i64 =
        trajectory.steps.iter().filter_map(|step| step.metrics.as_ref()?.prompt_tokens).sum();
    assert_eq!(totals.total_prompt_tokens.unwrap_or(0), prompt);
    trajectory.subagents().iter().for_each(check_invariants);
}

#[test]
fn built_trajectories_are_always_valid() {
    let config = Config {
        cases: 200,
        rng_seed: RngSeed::Fixed(0x00A7_1F5E),
        failure_persistence: None,
        ..Config::default()
    };
    let schema = jsonschema::draft202012::new(&json_schema(SchemaVersion::V1_8)).unwrap();
    let strategy = (
        prop::collection::vec(step_spec(), 1..8),
        prop::collection::vec(prop::collection::vec(step_spec(), 1..4), 0..3),
    );
    TestRunner::new(config)
        .run(&strategy, |(steps, subagents)| {
            let trajectory = build(&steps, &subagents);
            check_invariants(&trajectory);
            let value = trajectory.to_value();
            let errors: Vec<String> = schema
                .iter_errors(&value)
                .map(|err| format!("{}: {err}", err.instance_path()))
                .collect();
            prop_assert!(errors.is_empty(), "schema errors: {errors:?}");
            prop_assert_eq!(Trajectory::from_value(&value).unwrap(), trajectory);
            // Valid, and not even a warning.
            let report = validate(&value, &ValidateOptions::default());
            prop_assert!(report.findings.is_empty(), "findings: {:?}", report.findings);
            Ok(())
        })
        .unwrap();
}
