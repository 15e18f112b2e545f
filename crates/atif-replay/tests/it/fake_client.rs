//! `FakeClient`: answers from a list or a closure and remembers what it was asked.

use atif_replay::{Error, FakeClient, LlmClient, LlmResponse};

use crate::{ask, echo_model};

#[tokio::test]
async fn fake_list_answers_in_order_then_reports_exhaustion() {
    let model = FakeClient::from_responses(
        Some("m"),
        vec![LlmResponse::from_text("one"), LlmResponse::from_text("two")],
    );
    assert_eq!(model.complete(ask("a")).await.unwrap().text(), "one");
    assert_eq!(model.complete(ask("b")).await.unwrap().text(), "two");
    let err = model.complete(ask("c")).await.unwrap_err();
    assert!(matches!(err, Error::ScriptExhausted { requested: 3, recorded: 2, .. }), "{err:?}");
    // The same error as a replay that runs out, with what the extra request carried.
    let message = err.to_string();
    assert!(message.starts_with("agent requested reply #3 but the recorded script has only 2."));
    assert!(message.ends_with("last message (user): \"c\""), "{message}");
}

#[tokio::test]
async fn fake_closure_sees_the_call_number_and_the_request() {
    let model = echo_model();
    let reply = model.complete(ask("hello")).await.unwrap();
    assert_eq!(reply.text(), "reply to hello");
    assert_eq!(reply.usage.prompt_tokens, 10);
    let reply = model.complete(ask("again")).await.unwrap();
    assert_eq!(reply.usage.prompt_tokens, 20, "second call is call number 2");
    assert_eq!(model.model(), Some("echo-1"));
}

#[tokio::test]
async fn fake_client_keeps_every_request_it_saw() {
    let model = echo_model();
    model.complete(ask("first")).await.unwrap();
    model.complete(ask("second")).await.unwrap();
    let seen: Vec<String> = model.seen().iter().map(|r| r.messages[0].content.clone()).collect();
    assert_eq!(seen, ["first", "second"]);
    assert_eq!(model.calls(), 2);
}
