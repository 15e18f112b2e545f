//! A step seen without what only its position decides, borrowed from the step: what
//! [`explain`](crate::explain) compares aligned steps by, without copying them.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::view::View;

/// A step without its `step_id`, with each `tool_call_id` replaced by the call's place in the
/// step (`#1`, `#2`, …), each `source_call_id` that names one of those calls rewritten to
/// match, and each subagent ref naming the agent it points to (`subagent "web"`).
///
/// Everything it does not rewrite is borrowed from the step, so building one costs a few small
/// allocations however long the step's messages and observations are.
#[derive(Debug)]
pub(crate) enum PositionFree<'a, V> {
    /// A value as the step holds it.
    Same(&'a V),
    /// A rewritten id.
    Text(String),
    /// An array with some element rewritten.
    Array(Vec<PositionFree<'a, V>>),
    /// An object with some member rewritten or left out; members in key order.
    Object(Vec<(&'a str, PositionFree<'a, V>)>),
}

/// The agent name of each subagent, by its `trajectory_id`.
pub(crate) type SubagentNames<'a> = HashMap<Cow<'a, str>, Cow<'a, str>>;

impl<'a, V: View> PositionFree<'a, V> {
    /// The position-free form of `step`; `subagent_names` gives the agent name of each
    /// subagent by its `trajectory_id`.
    pub(crate) fn of(step: &'a V, subagent_names: &SubagentNames<'_>) -> PositionFree<'a, V> {
        let Some(fields) = step.members() else {
            return PositionFree::Same(step);
        };
        let calls = step.get("tool_calls").and_then(V::as_array);
        // The first call holding a recorded id gives that id its local name.
        let mut local_ids: HashMap<Cow<'a, str>, String> = HashMap::new();
        for (call_idx, call) in calls.into_iter().flatten().enumerate() {
            if let Some(recorded) = call.get("tool_call_id").and_then(V::as_str) {
                local_ids.entry(recorded).or_insert_with(|| local_id(call_idx));
            }
        }
        object(fields, |key, value| match key {
            "step_id" => None,
            "tool_calls" => Some(match value.as_array() {
                Some(calls) => {
                    PositionFree::Array(calls.iter().enumerate().map(tool_call).collect())
                }
                None => PositionFree::Same(value),
            }),
            "observation" => Some(match value.members() {
                Some(observation) => {
                    object(observation, |key, value| match (key, value.as_array()) {
                        ("results", Some(results)) => Some(PositionFree::Array(
                            results
                                .iter()
                                .map(|result| {
                                    observation_result(result, &local_ids, subagent_names)
                                })
                                .collect(),
                        )),
                        _ => Some(PositionFree::Same(value)),
                    })
                }
                None => PositionFree::Same(value),
            }),
            _ => Some(PositionFree::Same(value)),
        })
    }

    /// The member `key`, when this is an object that has it.
    pub(crate) fn get(&self, key: &str) -> Option<PositionFree<'_, V>> {
        match self {
            PositionFree::Object(members) => {
                members.iter().find(|(name, _)| *name == key).map(|(_, value)| value.borrowed())
            }
            PositionFree::Same(value) => value.get(key).map(PositionFree::Same),
            PositionFree::Text(_) | PositionFree::Array(_) => None,
        }
    }

    /// Whether the two are equal as `serde_json::Value`s would be, with each pair of values
    /// the step holds as it is compared by `same_value`.
    pub(crate) fn same_as(
        &self,
        other: &PositionFree<'_, V>,
        same_value: fn(&V, &V) -> bool,
    ) -> bool {
        use PositionFree::{Array, Object, Same, Text};
        let same = |a: &PositionFree<'_, V>, b: &PositionFree<'_, V>| a.same_as(b, same_value);
        match (self, other) {
            (Same(a), Same(b)) => same_value(a, b),
            (Text(a), Text(b)) => a == b,
            (Text(a), Same(b)) | (Same(b), Text(a)) => b.as_str().is_some_and(|b| *a == b),
            (Array(a), Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b)),
            (Array(a), Same(b)) | (Same(b), Array(a)) => b.as_array().is_some_and(|b| {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, &Same(b)))
            }),
            (Object(a), Object(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(key, a)| {
                        b.iter().find(|(other, _)| other == key).is_some_and(|(_, b)| same(a, b))
                    })
            }
            (Object(a), Same(b)) | (Same(b), Object(a)) => b.members().is_some_and(|members| {
                a.len() == members.len()
                    && a.iter().all(|(key, a)| b.get(key).is_some_and(|b| same(a, &Same(b))))
            }),
            _ => false,
        }
    }

    /// The keys of the members, in order, when this is an object.
    pub(crate) fn keys(&self) -> Vec<&str> {
        match self {
            PositionFree::Object(members) => members.iter().map(|(key, _)| *key).collect(),
            PositionFree::Same(value) => {
                value.members().into_iter().flatten().map(|(key, _)| key).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Whether this is an object.
    pub(crate) fn is_object(&self) -> bool {
        match self {
            PositionFree::Object(_) => true,
            PositionFree::Same(value) => value.is_object(),
            _ => false,
        }
    }

    /// The same view, borrowed.
    fn borrowed(&self) -> PositionFree<'_, V> {
        match self {
            PositionFree::Same(value) => PositionFree::Same(value),
            PositionFree::Text(text) => PositionFree::Text(text.clone()),
            PositionFree::Array(items) => {
                PositionFree::Array(items.iter().map(PositionFree::borrowed).collect())
            }
            PositionFree::Object(members) => PositionFree::Object(
                members.iter().map(|(key, value)| (*key, value.borrowed())).collect(),
            ),
        }
    }
}

fn local_id(call_idx: usize) -> String {
    format!("#{}", call_idx + 1)
}

/// The object of `members` with each member as `rewrite` gives it (`None` leaves it out), in
/// key order.
fn object<'a, V: View>(
    members: Vec<(&'a str, &'a V)>,
    mut rewrite: impl FnMut(&'a str, &'a V) -> Option<PositionFree<'a, V>>,
) -> PositionFree<'a, V> {
    PositionFree::Object(
        members.into_iter().filter_map(|(key, value)| Some((key, rewrite(key, value)?))).collect(),
    )
}

/// A tool call with its `tool_call_id` (whatever it holds) replaced by its place in the step.
fn tool_call<V: View>((call_idx, call): (usize, &V)) -> PositionFree<'_, V> {
    match call.members() {
        Some(members) if call.get("tool_call_id").is_some() => {
            object(members, |key, value| match key {
                "tool_call_id" => Some(PositionFree::Text(local_id(call_idx))),
                _ => Some(PositionFree::Same(value)),
            })
        }
        _ => PositionFree::Same(call),
    }
}

/// An observation result with its `source_call_id` renamed as its call was, and its subagent
/// refs naming the agent they point to.
fn observation_result<'a, V: View>(
    result: &'a V,
    local_ids: &HashMap<Cow<'_, str>, String>,
    subagent_names: &SubagentNames<'_>,
) -> PositionFree<'a, V> {
    let Some(members) = result.members() else {
        return PositionFree::Same(result);
    };
    object(members, |key, value| match key {
        "source_call_id" => Some(match value.as_str().and_then(|id| local_ids.get(id.as_ref())) {
            Some(local) => PositionFree::Text(local.clone()),
            None => PositionFree::Same(value),
        }),
        "subagent_trajectory_ref" => Some(match value.as_array() {
            Some(refs) => PositionFree::Array(
                refs.iter().map(|reference| subagent_ref(reference, subagent_names)).collect(),
            ),
            None => PositionFree::Same(value),
        }),
        _ => Some(PositionFree::Same(value)),
    })
}

/// A subagent ref whose `trajectory_id` names a known subagent, naming its agent instead.
fn subagent_ref<'a, V: View>(
    reference: &'a V,
    subagent_names: &SubagentNames<'_>,
) -> PositionFree<'a, V> {
    let name = reference
        .get("trajectory_id")
        .and_then(V::as_str)
        .and_then(|id| subagent_names.get(id.as_ref()));
    match (reference.members(), name) {
        (Some(members), Some(name)) => object(members, |key, value| match key {
            "trajectory_id" => Some(PositionFree::Text(format!("subagent {name:?}"))),
            _ => Some(PositionFree::Same(value)),
        }),
        _ => PositionFree::Same(reference),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn same_text(a: &Value, b: &Value) -> bool {
        a.same_text(b)
    }

    #[test]
    fn values_are_the_same_text_only_when_their_canonical_texts_are() {
        let cases = [
            (json!(1), json!(1), true),
            (json!(1), json!(1.0), false),
            (json!(0.0), json!(-0.0), false),
            (json!({"a": [1.5, "x"], "b": null}), json!({"b": null, "a": [1.5, "x"]}), true),
            (json!({"a": 1}), json!({"a": 1, "b": 2}), false),
            (json!(["x"]), json!("x"), false),
        ];
        for (a, b, same) in cases {
            assert_eq!(same_text(&a, &b), same, "{a} vs {b}");
            assert_eq!(
                same_text(&a, &b),
                crate::to_canonical_string(&a) == crate::to_canonical_string(&b)
            );
        }
    }

    #[test]
    fn steps_that_differ_only_in_position_are_the_same() {
        let step = |step_id: u64, call: &str, sub: &str| {
            json!({
                "step_id": step_id, "source": "agent",
                "tool_calls": [{"tool_call_id": call, "function_name": "grep"}],
                "observation": {"results": [
                    {"source_call_id": call, "content": "ok"},
                    {"subagent_trajectory_ref": [{"trajectory_id": sub}]}
                ]}
            })
        };
        let names = |pairs: &[(&'static str, &'static str)]| -> SubagentNames<'static> {
            pairs.iter().map(|(id, name)| (Cow::Borrowed(*id), Cow::Borrowed(*name))).collect()
        };
        let names_a = names(&[("subagent_1", "web")]);
        let names_b = names(&[("subagent_2", "web"), ("subagent_1", "db")]);
        let (a, b) = (step(3, "call_4", "subagent_1"), step(9, "call_12", "subagent_2"));
        let (free_a, free_b) = (PositionFree::of(&a, &names_a), PositionFree::of(&b, &names_b));
        assert!(free_a.same_as(&free_b, same_text));
        assert!(free_a.get("step_id").is_none());
        // The same ref ids, pointing to agents of other names, differ.
        let c = step(3, "call_4", "subagent_1");
        let free_c = PositionFree::of(&c, &names_b);
        assert!(!free_a.same_as(&free_c, same_text));
        assert!(!free_a.same_as(&PositionFree::Same(&a), same_text));
    }
}
