//! A step seen without what only its position decides, borrowed from the step: what
//! [`explain`](crate::explain) compares aligned steps by, without copying them.

use std::collections::HashMap;

use serde_json::{Number, Value};

/// A step without its `step_id`, with each `tool_call_id` replaced by the call's place in the
/// step (`#1`, `#2`, …), each `source_call_id` that names one of those calls rewritten to
/// match, and each subagent ref naming the agent it points to (`subagent "web"`).
///
/// Everything it does not rewrite is borrowed from the step, so building one costs a few small
/// allocations however long the step's messages and observations are.
#[derive(Debug)]
pub(crate) enum PositionFree<'a> {
    /// A value as the step holds it.
    Same(&'a Value),
    /// A rewritten id.
    Text(String),
    /// An array with some element rewritten.
    Array(Vec<PositionFree<'a>>),
    /// An object with some member rewritten or left out; members in the map's order.
    Object(Vec<(&'a str, PositionFree<'a>)>),
}

impl<'a> PositionFree<'a> {
    /// The position-free form of `step`; `subagent_names` gives the agent name of each
    /// subagent by its `trajectory_id`.
    pub(crate) fn of(step: &'a Value, subagent_names: &HashMap<&str, &str>) -> PositionFree<'a> {
        let Value::Object(fields) = step else {
            return PositionFree::Same(step);
        };
        let calls = fields.get("tool_calls").and_then(Value::as_array);
        // The first call holding a recorded id gives that id its local name.
        let mut local_ids: HashMap<&str, String> = HashMap::new();
        for (call_idx, call) in calls.into_iter().flatten().enumerate() {
            if let Some(Value::String(recorded)) = call.get("tool_call_id") {
                local_ids.entry(recorded).or_insert_with(|| local_id(call_idx));
            }
        }
        object(fields, |key, value| match (key, value) {
            ("step_id", _) => None,
            ("tool_calls", Value::Array(calls)) => {
                Some(PositionFree::Array(calls.iter().enumerate().map(tool_call).collect()))
            }
            ("observation", Value::Object(observation)) => {
                Some(object(observation, |key, value| match (key, value) {
                    ("results", Value::Array(results)) => Some(PositionFree::Array(
                        results
                            .iter()
                            .map(|result| observation_result(result, &local_ids, subagent_names))
                            .collect(),
                    )),
                    _ => Some(PositionFree::Same(value)),
                }))
            }
            _ => Some(PositionFree::Same(value)),
        })
    }

    /// The member `key`, when this is an object that has it.
    pub(crate) fn get(&self, key: &str) -> Option<PositionFree<'_>> {
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
        other: &PositionFree<'_>,
        same_value: fn(&Value, &Value) -> bool,
    ) -> bool {
        use PositionFree::{Array, Object, Same, Text};
        let same = |a: &PositionFree<'_>, b: &PositionFree<'_>| a.same_as(b, same_value);
        match (self, other) {
            (Same(a), Same(b)) => same_value(a, b),
            (Text(a), Text(b)) => a == b,
            (Text(a), Same(Value::String(b))) | (Same(Value::String(b)), Text(a)) => a == b,
            (Array(a), Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b)),
            (Array(a), Same(Value::Array(b))) | (Same(Value::Array(b)), Array(a)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, &Same(b)))
            }
            (Object(a), Object(b)) => {
                a.len() == b.len()
                    && a.iter().all(|(key, a)| {
                        b.iter().find(|(other, _)| other == key).is_some_and(|(_, b)| same(a, b))
                    })
            }
            (Object(a), Same(Value::Object(b))) | (Same(Value::Object(b)), Object(a)) => {
                a.len() == b.len()
                    && a.iter().all(|(key, a)| b.get(*key).is_some_and(|b| same(a, &Same(b))))
            }
            _ => false,
        }
    }

    /// The keys of the members, in order, when this is an object.
    pub(crate) fn keys(&self) -> Vec<&str> {
        match self {
            PositionFree::Object(members) => members.iter().map(|(key, _)| *key).collect(),
            PositionFree::Same(Value::Object(members)) => {
                members.keys().map(String::as_str).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Whether this is an object.
    pub(crate) fn is_object(&self) -> bool {
        matches!(self, PositionFree::Object(_) | PositionFree::Same(Value::Object(_)))
    }

    /// The same view, borrowed.
    fn borrowed(&self) -> PositionFree<'_> {
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

/// Whether two values have the same canonical text: equal as `serde_json::Value`s are, except
/// that a float equals a float only with the same bits (`-0.0` is not `0.0`) and never an
/// integer (`1.0` is not `1`), as their texts differ.
pub(crate) fn same_text(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => same_number_text(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_text(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter().all(|(key, a)| b.get(key).is_some_and(|b| same_text(a, b)))
        }
        _ => a == b,
    }
}

fn same_number_text(a: &Number, b: &Number) -> bool {
    match (a.is_f64(), b.is_f64()) {
        (true, true) => a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits),
        (false, false) => a == b,
        _ => false,
    }
}

fn local_id(call_idx: usize) -> String {
    format!("#{}", call_idx + 1)
}

/// The object `members` with each member as `rewrite` gives it (`None` leaves it out), in the
/// order the map iterates in.
fn object<'a>(
    members: &'a serde_json::Map<String, Value>,
    mut rewrite: impl FnMut(&'a str, &'a Value) -> Option<PositionFree<'a>>,
) -> PositionFree<'a> {
    PositionFree::Object(
        members
            .iter()
            .filter_map(|(key, value)| Some((key.as_str(), rewrite(key, value)?)))
            .collect(),
    )
}

/// A tool call with its `tool_call_id` (whatever it holds) replaced by its place in the step.
fn tool_call((call_idx, call): (usize, &Value)) -> PositionFree<'_> {
    match call {
        Value::Object(members) if members.contains_key("tool_call_id") => {
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
fn observation_result<'a>(
    result: &'a Value,
    local_ids: &HashMap<&str, String>,
    subagent_names: &HashMap<&str, &str>,
) -> PositionFree<'a> {
    let Value::Object(members) = result else {
        return PositionFree::Same(result);
    };
    object(members, |key, value| match (key, value) {
        ("source_call_id", Value::String(recorded)) => {
            Some(match local_ids.get(recorded.as_str()) {
                Some(local) => PositionFree::Text(local.clone()),
                None => PositionFree::Same(value),
            })
        }
        ("subagent_trajectory_ref", Value::Array(refs)) => Some(PositionFree::Array(
            refs.iter().map(|reference| subagent_ref(reference, subagent_names)).collect(),
        )),
        _ => Some(PositionFree::Same(value)),
    })
}

/// A subagent ref whose `trajectory_id` names a known subagent, naming its agent instead.
fn subagent_ref<'a>(
    reference: &'a Value,
    subagent_names: &HashMap<&str, &str>,
) -> PositionFree<'a> {
    let name = match reference.get("trajectory_id") {
        Some(Value::String(id)) => subagent_names.get(id.as_str()),
        _ => None,
    };
    match (reference, name) {
        (Value::Object(members), Some(name)) => object(members, |key, value| match key {
            "trajectory_id" => Some(PositionFree::Text(format!("subagent {name:?}"))),
            _ => Some(PositionFree::Same(value)),
        }),
        _ => PositionFree::Same(reference),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
        let names_a = HashMap::from([("subagent_1", "web")]);
        let names_b = HashMap::from([("subagent_2", "web"), ("subagent_1", "db")]);
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
