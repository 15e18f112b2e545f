//! The seeded sampling mode: per conversation, with configured probabilities, an extra tool
//! call, two calls swapped, token counts varied within a band, or a failure, as a live model
//! varies between runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use regex::Regex;
use serde_json::Value;

use crate::Config;
use crate::example::tool_arguments;
use crate::turn::{Reply, Turn, is_shell_tool, shell_arguments};

/// How a sampling fake provider varies its conversations; every probability is per
/// conversation, drawn from `seed` and the conversation's number, so the same seed gives the
/// same conversations in the same order.
///
/// In this mode a conversation that offers tools calls two of them, one per reply (the first
/// shell tool or the first tool, then the next tool offered, or the same one again when only one
/// is offered), then answers with the final text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// The seed of every draw.
    pub seed: u64,
    /// The probability of one more call, of a third tool (or the first again), between the two.
    pub extra: f64,
    /// The probability that the two calls come in the other order.
    pub swap: f64,
    /// The probability that the second request of the conversation fails with a 500.
    pub fail: f64,
    /// How far token counts vary: each conversation's are scaled by a factor drawn uniformly
    /// from `1 - band ..= 1 + band`.
    pub token_band: f64,
}

/// What one conversation does, drawn from a [`Sampling`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// One more tool call between the two.
    pub extra: bool,
    /// The two calls in the other order.
    pub swap: bool,
    /// The second request fails.
    pub fail: bool,
    /// The factor on every token count.
    pub token_factor: f64,
}

impl Sampling {
    /// The plan of conversation number `conversation` (0 for the first the server sees).
    pub fn plan(&self, conversation: u64) -> Plan {
        let mut state = self.seed ^ conversation.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mut uniform = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        let extra = uniform() < self.extra;
        let swap = uniform() < self.swap;
        let fail = uniform() < self.fail;
        let token_factor = 1.0 + self.token_band * (2.0 * uniform() - 1.0);
        Plan { extra, swap, fail, token_factor: token_factor.max(0.0) }
    }

    /// The tool names a conversation offered `tools` calls under `plan`, in order.
    pub fn calls<'a>(&self, plan: &Plan, tools: &[&'a str]) -> Vec<&'a str> {
        let Some(&first_offered) = tools.first() else { return Vec::new() };
        let first = tools.iter().copied().find(|name| is_shell_tool(name)).unwrap_or(first_offered);
        let others: Vec<&str> = tools.iter().copied().filter(|name| *name != first).collect();
        let second = others.first().copied().unwrap_or(first);
        let mut calls = vec![first, second];
        if plan.swap {
            calls.swap(0, 1);
        }
        if plan.extra {
            calls.insert(1, others.get(1).copied().unwrap_or(first));
        }
        calls
    }
}

/// The ids of a sampled conversation's replies start at `(conversation + 1) * ID_STRIDE`, so a
/// later request names its conversation through the call ids it sends back.
pub(crate) const ID_STRIDE: usize = 1_000_000;

/// The sampling state of a server: how many conversations began, and the last one (for
/// protocols whose history carries no call ids).
#[derive(Debug, Default)]
pub(crate) struct Sampler {
    started: AtomicU64,
    last: Mutex<u64>,
}

/// What a sampled request gets.
pub(crate) enum Sampled {
    /// This reply, with the turn's ids and token factor set.
    Reply(Reply, Box<Turn>),
    /// A simulated failure.
    Fail,
}

impl Sampler {
    /// The reply to `turn` of a request whose body is `body`, under `sampling`.
    pub(crate) fn decide(
        &self,
        sampling: &Sampling,
        mut turn: Turn,
        body: &Value,
        config: &Config,
    ) -> Sampled {
        if turn.tools.is_empty() || turn.json_schema.is_some() {
            return Sampled::Reply(Reply::decide(&turn, config), Box::new(turn));
        }
        let text = body.to_string();
        let (conversation, n_calls) = match conversation_of(&text) {
            Some(found) => found,
            None if text.contains("\"functionCall\"") => {
                let last = *self.last.lock().unwrap_or_else(PoisonError::into_inner);
                (last, text.matches("\"functionCall\"").count())
            }
            None => {
                let started = self.started.fetch_add(1, Ordering::SeqCst);
                *self.last.lock().unwrap_or_else(PoisonError::into_inner) = started;
                (started, 0)
            }
        };
        let plan = sampling.plan(conversation);
        if plan.fail && n_calls == 1 {
            return Sampled::Fail;
        }
        turn.id_base = (conversation as usize + 1) * ID_STRIDE;
        turn.token_factor = plan.token_factor;
        let tools: Vec<&str> = turn.tools.iter().map(|(name, _)| name.as_str()).collect();
        let calls = sampling.calls(&plan, &tools);
        let reply = match calls.get(n_calls) {
            Some(name) => {
                let schema = turn.tools.iter().find(|(tool, _)| tool == name).map(|(_, s)| s);
                let schema = schema.unwrap_or(&Value::Null);
                let arguments = match is_shell_tool(name) {
                    true => shell_arguments(schema, config),
                    false => tool_arguments(schema),
                };
                Reply::call(*name, arguments)
            }
            None => Reply::decide(&turn, config),
        };
        Sampled::Reply(reply, Box::new(turn))
    }
}

/// The conversation a request's history names through its call ids, and how many calls it
/// made so far.
fn conversation_of(text: &str) -> Option<(u64, usize)> {
    static IDS: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    #[allow(clippy::expect_used, reason = "a constant pattern, checked by the tests")]
    let ids = IDS.get_or_init(|| Regex::new(r"(?:call|toolu)_fake_([0-9]+)").expect("valid"));
    let mut seen: Vec<usize> = ids
        .captures_iter(text)
        .filter_map(|found| found[1].parse::<usize>().ok())
        .filter(|id| *id >= ID_STRIDE)
        .collect();
    seen.sort_unstable();
    seen.dedup();
    let conversation = seen.first()? / ID_STRIDE - 1;
    let n_calls = seen.iter().filter(|id| *id / ID_STRIDE - 1 == conversation).count();
    Some((conversation as u64, n_calls))
}
