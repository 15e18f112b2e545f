//! The seeded sampling mode: per conversation an extra call, a swap, varied tokens or a
//! failure, drawn from the seed, and kept apart between interleaved conversations.

use std::net::SocketAddr;

use atif_fake_provider::{Config, FakeProvider, Sampling};
use serde_json::{Value, json};

use crate::http::post;

const OFF: Sampling = Sampling { seed: 7, extra: 0.0, swap: 0.0, fail: 0.0, token_band: 0.0 };

fn provider(sampling: Sampling) -> FakeProvider {
    let mut config = Config::default();
    config.set_sampling(Some(sampling));
    FakeProvider::start(config).unwrap()
}

/// One Chat Completions conversation offering `read`, `grep` and `write`, driven until a text
/// reply or an error: the tools called, the prompt tokens of the first reply, and the status of
/// the last response.
struct Conversation {
    messages: Vec<Value>,
    calls: Vec<String>,
    prompt_tokens: Option<u64>,
    status: u16,
}

impl Conversation {
    fn new() -> Conversation {
        let messages = vec![json!({"role": "user", "content": "find the bug"})];
        Conversation { messages, calls: Vec::new(), prompt_tokens: None, status: 0 }
    }

    /// Sends the next request; `false` once the conversation is over.
    fn step(&mut self, addr: SocketAddr) -> bool {
        let tool = |name: &str| json!({"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}});
        let body = json!({"model": "m", "messages": self.messages, "tools": [tool("read"), tool("grep"), tool("write")]});
        let raw = post(addr, "/v1/chat/completions", &body);
        self.status = raw.status;
        if raw.status != 200 {
            return false;
        }
        let reply = raw.json();
        self.prompt_tokens.get_or_insert(reply["usage"]["prompt_tokens"].as_u64().unwrap());
        let message = reply["choices"][0]["message"].clone();
        let Some(call) = message["tool_calls"].get(0).cloned() else { return false };
        self.calls.push(call["function"]["name"].as_str().unwrap().to_owned());
        self.messages.push(message);
        self.messages
            .push(json!({"role": "tool", "tool_call_id": call["id"], "content": "atif-e2e-1"}));
        true
    }

    fn run(addr: SocketAddr) -> Conversation {
        let mut conversation = Conversation::new();
        while conversation.step(addr) {}
        conversation
    }
}

#[test]
fn a_conversation_calls_two_tools_then_answers() {
    let provider = provider(OFF);
    let conversation = Conversation::run(provider.addr());
    assert_eq!(conversation.calls, ["read", "grep"]);
    assert_eq!(conversation.status, 200);
    assert_eq!(provider.request_count(), 3);
}

#[test]
fn an_extra_call_a_swap_and_a_failure_happen_when_drawn() {
    let always = |extra, swap, fail| Sampling { extra, swap, fail, ..OFF };
    let extra = Conversation::run(provider(always(1.0, 0.0, 0.0)).addr());
    assert_eq!(extra.calls, ["read", "write", "grep"]);
    let swapped = Conversation::run(provider(always(0.0, 1.0, 0.0)).addr());
    assert_eq!(swapped.calls, ["grep", "read"]);
    let failed = Conversation::run(provider(always(0.0, 0.0, 1.0)).addr());
    assert_eq!((failed.calls.len(), failed.status), (1, 500));
}

#[test]
fn draws_follow_the_seed_per_conversation_and_tokens_vary_within_the_band() {
    let sampling = Sampling { extra: 0.5, swap: 0.5, token_band: 0.2, ..OFF };
    let run = |sampling: Sampling| {
        let provider = provider(sampling);
        (0..12).map(|_| Conversation::run(provider.addr())).collect::<Vec<_>>()
    };
    let (first, second) = (run(sampling), run(sampling));
    let calls = |runs: &[Conversation]| runs.iter().map(|c| c.calls.clone()).collect::<Vec<_>>();
    assert_eq!(calls(&first), calls(&second), "the same seed, the same conversations");
    for (idx, conversation) in first.iter().enumerate() {
        let plan = sampling.plan(idx as u64);
        let expected = sampling.calls(&plan, &["read", "grep", "write"]);
        assert_eq!(conversation.calls, expected, "conversation {idx}: {plan:?}");
    }
    let distinct: std::collections::BTreeSet<_> = calls(&first).into_iter().collect();
    assert!(distinct.len() >= 3, "12 conversations at p = 0.5 vary: {distinct:?}");
    let tokens: Vec<u64> = first.iter().map(|c| c.prompt_tokens.unwrap()).collect();
    // 110 prompt tokens for one message, scaled by 0.8..=1.2.
    assert!(tokens.iter().all(|t| (88..=132).contains(t)), "{tokens:?}");
    assert!(tokens.iter().any(|t| *t != tokens[0]), "{tokens:?}");
    let reseeded = run(Sampling { seed: 8, ..sampling });
    assert_ne!(calls(&first), calls(&reseeded), "another seed, other draws");
}

#[test]
fn interleaved_conversations_keep_their_own_plans() {
    // Conversation 0 swaps, conversation 1 does not (seed 7 at p = 0.5, checked below).
    let sampling = Sampling { swap: 0.5, ..OFF };
    let (plan_0, plan_1) = (sampling.plan(0), sampling.plan(1));
    assert_ne!(plan_0.swap, plan_1.swap, "the seed gives one of each: {plan_0:?} {plan_1:?}");
    let provider = provider(sampling);
    let (mut a, mut b) = (Conversation::new(), Conversation::new());
    a.step(provider.addr());
    b.step(provider.addr());
    while a.step(provider.addr()) | b.step(provider.addr()) {}
    assert_eq!(a.calls, sampling.calls(&plan_0, &["read", "grep", "write"]));
    assert_eq!(b.calls, sampling.calls(&plan_1, &["read", "grep", "write"]));
}
