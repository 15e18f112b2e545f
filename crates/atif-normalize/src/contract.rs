//! The normalisation contract, written once: which keys are volatile, which strings are masked
//! and how, tool-call ids, subagent order and names, empty `extra` objects.
//!
//! It runs on any [`Tree`]: `serde_json::Value` for [`normalize`](crate::normalize) and the
//! borrowed tree for [`normalize_json`](crate::normalize_json), so both give the same document
//! by construction. The one step outside it is the secret scan, which runs first, on a
//! `serde_json::Value` (`normalize.rs`).

use std::borrow::Cow;
use std::collections::HashMap;

use crate::canonical::canonical_prefix;
use crate::path_placeholders::Paths;
use crate::tree::{NodeMut, Object, StringValue, Tree};
use crate::{Error, NormalizeOptions, Result};

/// Keys removed at every depth (outside tool-call arguments) by default.
const DEFAULT_VOLATILE_KEYS: &[&str] =
    &["session_id", "timestamp", "generation_id", "cost_usd", "total_cost_usd"];

/// Keys whose string values no masker touches, at any depth outside tool-call arguments: a
/// version bump and a model swap must show.
const NEVER_TOUCHED: [&str; 2] = ["schema_version", "model_name"];

/// What the default masker writes in place of a memory address.
const ADDRESS_MASK: &str = "0xADDR";

/// How much of each subagent's canonical text is written to sort subagents before falling
/// back to whole texts for those that tie.
const SORT_PREFIX_BYTES: usize = 4096;

const SUBAGENTS: &str = "subagent_trajectories";

/// Applies the contract to the trajectory `root` (secrets aside), and recursively to its
/// subagents.
///
/// # Errors
/// [`Error::NotATrajectory`] when `root`, or an element of some `subagent_trajectories`, is not
/// an object.
pub(crate) fn normalize_tree<T: Tree>(root: T, options: &NormalizeOptions) -> Result<T> {
    let mut trajectory = root.into_object().map_err(|other| not_an_object("", &other))?;
    normalize_trajectory::<T>(&mut trajectory, &Rules::new(options), "")?;
    Ok(T::from_object(trajectory))
}

/// The options, with the path placeholders of the trajectory being normalised.
struct Rules<'o> {
    options: &'o NormalizeOptions,
    paths: Paths,
}

impl<'o> Rules<'o> {
    fn new(options: &'o NormalizeOptions) -> Rules<'o> {
        Rules { options, paths: options.paths() }
    }

    /// The rules for a trajectory: these paths, plus the ones it records in its root `extra`
    /// when the options ask for them.
    fn for_trajectory<T: Tree>(&self, trajectory: &T::Object) -> Rules<'o> {
        let mut paths = self.paths.clone();
        if self.options.recorded_paths() {
            let extra = trajectory.get("extra").and_then(T::as_object);
            let recorded = |key: &str| extra.and_then(|extra| extra.get(key)).and_then(T::as_str);
            if let Some(cwd) = recorded("cwd") {
                paths.add_cwd(&cwd);
            }
            if let Some(home) = recorded("home") {
                paths.add_home(&home);
            }
        }
        Rules { options: self.options, paths }
    }

    fn is_volatile(&self, key: &str) -> bool {
        DEFAULT_VOLATILE_KEYS.contains(&key)
            || self.options.volatile_keys().iter().any(|volatile| volatile == key)
    }

    /// Path placeholders, then the address masker, then each extra masker in order.
    fn mask(&self, s: &mut impl StringValue) {
        // Paths first: an address or date masker must not break a path before it is found.
        if !self.paths.is_empty() {
            s.rewrite(|value| self.paths.replace(value));
        }
        s.rewrite_escaped(mask_addresses);
        for masker in self.options.maskers() {
            s.rewrite(|value| match masker.pattern().replace_all(value, masker.replacement()) {
                Cow::Owned(masked) => Some(masked),
                Cow::Borrowed(_) => None,
            });
        }
    }

    fn replace_path_keys(&self, object: &mut impl Object) {
        if !self.paths.is_empty() {
            object.rename_keys(|key| self.paths.replace(key));
        }
    }
}

fn normalize_trajectory<T: Tree>(
    trajectory: &mut T::Object,
    rules: &Rules<'_>,
    pointer: &str,
) -> Result<()> {
    let rules = &rules.for_trajectory::<T>(trajectory);
    // Subagents are whole trajectories, normalised on their own, so they are taken out before
    // anything touches this one and put back at the end.
    let subagents = match trajectory.remove(SUBAGENTS).map(T::into_array) {
        Some(Ok(items)) => Some(normalize_subagents::<T>(items, trajectory, rules, pointer)?),
        Some(Err(other)) => {
            trajectory.insert(SUBAGENTS, other);
            None
        }
        None => None,
    };
    for (selector, action) in rules.options.parsed_selectors() {
        trajectory.apply_selector(selector, action);
    }
    trajectory.remove("trajectory_id");
    renumber_call_ids::<T>(trajectory);
    if let Some((_, mapping)) = &subagents {
        for_each_subagent_ref::<T>(trajectory, |id| {
            let new = id.as_str().and_then(|old| mapping.get(old.as_ref()).cloned());
            if let Some(new) = new {
                *id = T::from_string(new);
            }
        });
    }
    scrub_object::<T>(trajectory, rules);
    if let Some((items, _)) = subagents {
        trajectory.insert(SUBAGENTS, T::from_array(items));
    }
    Ok(())
}

/// Normalised subagents in their new order, and the mapping from their recorded ids to the
/// new ones.
type Subagents<T> = (Vec<T>, HashMap<String, String>);

/// Normalises each subagent, sorts them (unless asked not to), renames them `subagent_N` and
/// returns them with the mapping from their recorded ids to the new ones.
fn normalize_subagents<T: Tree>(
    items: Vec<T>,
    parent: &mut T::Object,
    rules: &Rules<'_>,
    pointer: &str,
) -> Result<Subagents<T>> {
    let mut old_ids = Vec::with_capacity(items.len());
    let mut normalized = Vec::with_capacity(items.len());
    for (idx, item) in items.into_iter().enumerate() {
        let item_pointer = format!("{pointer}/{SUBAGENTS}/{idx}");
        let mut sub = item.into_object().map_err(|other| not_an_object(&item_pointer, &other))?;
        old_ids.push(sub.get("trajectory_id").and_then(T::as_str).map(Cow::into_owned));
        normalize_trajectory::<T>(&mut sub, rules, &item_pointer)?;
        normalized.push(sub);
    }

    let order: Vec<usize> = if rules.options.sort_subagents() {
        let first_ref = first_ref_positions::<T>(parent);
        let ref_pos: Vec<usize> = old_ids
            .iter()
            .map(|id| id.as_ref().and_then(|id| first_ref.get(id)).copied().unwrap_or(usize::MAX))
            .collect();
        sorted_order(|idx, limit| canonical_prefix(&normalized[idx], limit), &ref_pos)
    } else {
        (0..normalized.len()).collect()
    };

    let mut slots: Vec<Option<T::Object>> = normalized.into_iter().map(Some).collect();
    let mut items = Vec::with_capacity(slots.len());
    let mut new_ids = vec![String::new(); slots.len()];
    for (position, &idx) in order.iter().enumerate() {
        let new_id = format!("subagent_{}", position + 1);
        if let Some(mut sub) = slots[idx].take() {
            sub.insert("trajectory_id", T::from_string(new_id.clone()));
            items.push(T::from_object(sub));
        }
        new_ids[idx] = new_id;
    }
    Ok((items, id_mapping(old_ids, new_ids)))
}

/// The order of subagents sorted by their canonical text, ties broken by `ref_pos` (where the
/// parent first refers to each). `text(idx, Some(limit))` gives the first `limit` bytes of
/// subagent `idx`'s text and `text(idx, None)` all of it; whole texts are only written for
/// subagents whose prefixes tie.
fn sorted_order(text: impl Fn(usize, Option<usize>) -> Vec<u8>, ref_pos: &[usize]) -> Vec<usize> {
    let mut keys: Vec<Vec<u8>> =
        (0..ref_pos.len()).map(|idx| text(idx, Some(SORT_PREFIX_BYTES))).collect();
    // A prefix shorter than the limit is a whole text; a full-length one that ties with
    // another could still differ further on, so those get their whole text. Sorting by prefix
    // first puts ties side by side.
    let mut by_prefix: Vec<usize> = (0..keys.len()).collect();
    by_prefix.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
    let mut tied = vec![false; keys.len()];
    for pair in by_prefix.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if keys[a].len() == SORT_PREFIX_BYTES && keys[a] == keys[b] {
            tied[a] = true;
            tied[b] = true;
        }
    }
    for (idx, tied) in tied.into_iter().enumerate() {
        if tied {
            keys[idx] = text(idx, None);
        }
    }
    let mut order: Vec<usize> = (0..ref_pos.len()).collect();
    // Identical subagents are told apart by where the parent first refers to them, so their
    // refs come out the same whatever order they finished in.
    order.sort_by(|&a, &b| (&keys[a], ref_pos[a]).cmp(&(&keys[b], ref_pos[b])));
    order
}

/// The mapping from recorded subagent ids to new ones. A recorded id shared by several
/// subagents resolves, as a reader would resolve it, to the first of them in the recorded order.
fn id_mapping(old_ids: Vec<Option<String>>, new_ids: Vec<String>) -> HashMap<String, String> {
    let mut mapping = HashMap::new();
    for (old_id, new_id) in old_ids.into_iter().zip(new_ids) {
        if let Some(old_id) = old_id {
            mapping.entry(old_id).or_insert(new_id);
        }
    }
    mapping
}

/// Where each subagent id is first referred to in the parent's steps, in walking order.
fn first_ref_positions<T: Tree>(parent: &mut T::Object) -> HashMap<String, usize> {
    let mut positions = HashMap::new();
    for_each_subagent_ref::<T>(parent, |id| {
        let next = positions.len();
        if let Some(id) = id.as_str() {
            positions.entry(id.into_owned()).or_insert(next);
        }
    });
    positions
}

/// The steps of a trajectory, or none when `steps` is not an array.
fn steps_mut<T: Tree>(trajectory: &mut T::Object) -> &mut [T] {
    match trajectory.get_mut("steps").map(T::node_mut) {
        Some(NodeMut::Array(steps)) => steps,
        _ => &mut [],
    }
}

/// The `observation.results` of a step, when it has them.
fn results_mut<T: Tree>(step: &mut T) -> Option<&mut Vec<T>> {
    step.get_mut("observation")?.get_mut("results")?.as_array_mut()
}

/// Calls `f` on each `steps[].observation.results[].subagent_trajectory_ref[].trajectory_id`.
fn for_each_subagent_ref<T: Tree>(trajectory: &mut T::Object, mut f: impl FnMut(&mut T)) {
    for step in steps_mut::<T>(trajectory) {
        for result in results_mut(step).into_iter().flatten() {
            let refs = result.get_mut("subagent_trajectory_ref").and_then(T::as_array_mut);
            for reference in refs.into_iter().flatten() {
                if let Some(id) = reference.get_mut("trajectory_id") {
                    f(id);
                }
            }
        }
    }
}

/// Renumbers tool-call ids `call_1`, `call_2`, … in first-encounter order: each step's
/// `tool_calls[].tool_call_id`, then its `observation.results[].source_call_id`.
///
/// This runs on the recorded ids, before masking, so two distinct ids that differ only in an
/// address stay distinct.
fn renumber_call_ids<T: Tree>(trajectory: &mut T::Object) {
    let mut mapping: HashMap<String, String> = HashMap::new();
    let mut renumber = |id: &mut T| {
        let Some(old) = id.as_str().map(Cow::into_owned) else { return };
        let next = mapping.len() + 1;
        let new = mapping.entry(old).or_insert_with(|| format!("call_{next}"));
        *id = T::from_string(new.clone());
    };
    for step in steps_mut::<T>(trajectory) {
        let calls = step.get_mut("tool_calls").and_then(T::as_array_mut);
        for call in calls.into_iter().flatten() {
            if let Some(id) = call.get_mut("tool_call_id") {
                renumber(id);
            }
        }
        for result in results_mut(step).into_iter().flatten() {
            if let Some(id) = result.get_mut("source_call_id") {
                renumber(id);
            }
        }
    }
}

/// Removes nulls, volatile keys and emptied `extra` objects, and masks strings, at every depth.
fn scrub_object<T: Tree>(object: &mut T::Object, rules: &Rules<'_>) {
    object.retain(|key, value| !value.is_null() && !rules.is_volatile(key));
    rules.replace_path_keys(object);
    object.for_each_mut(|key, value| match (key, value.node_mut()) {
        (key, NodeMut::Str(_)) if NEVER_TOUCHED.contains(&key) => {}
        ("tool_calls", NodeMut::Array(calls)) => {
            for call in calls {
                match call.node_mut() {
                    NodeMut::Object(call) => scrub_tool_call::<T>(call, rules),
                    other => scrub_node(other, rules),
                }
            }
        }
        (_, node) => scrub_node(node, rules),
    });
    drop_empty_extra::<T>(object);
}

/// A tool call is scrubbed like any object, except that its `arguments` are what the model
/// passed to a tool: behaviour, so only masked.
fn scrub_tool_call<T: Tree>(call: &mut T::Object, rules: &Rules<'_>) {
    call.retain(|key, value| !value.is_null() && !rules.is_volatile(key));
    rules.replace_path_keys(call);
    call.for_each_mut(|key, value| match (key, value.node_mut()) {
        ("arguments", node) => mask_only(node, rules),
        (key, NodeMut::Str(_)) if NEVER_TOUCHED.contains(&key) => {}
        (_, node) => scrub_node(node, rules),
    });
    drop_empty_extra::<T>(call);
}

fn drop_empty_extra<T: Tree>(object: &mut T::Object) {
    if object.get("extra").and_then(T::as_object).is_some_and(Object::is_empty) {
        object.remove("extra");
    }
}

fn scrub_node<T: Tree>(node: NodeMut<'_, T>, rules: &Rules<'_>) {
    match node {
        NodeMut::Str(s) => rules.mask(s),
        NodeMut::Array(items) => {
            items.iter_mut().for_each(|item| scrub_node(item.node_mut(), rules))
        }
        NodeMut::Object(object) => scrub_object::<T>(object, rules),
        NodeMut::Scalar => {}
    }
}

fn mask_only<T: Tree>(node: NodeMut<'_, T>, rules: &Rules<'_>) {
    match node {
        NodeMut::Str(s) => rules.mask(s),
        NodeMut::Array(items) => {
            items.iter_mut().for_each(|item| mask_only(item.node_mut(), rules))
        }
        NodeMut::Object(object) => {
            rules.replace_path_keys(object);
            object.for_each_mut(|_, value| mask_only(value.node_mut(), rules));
        }
        NodeMut::Scalar => {}
    }
}

/// Replaces each match of `0x[0-9a-fA-F]{6,16}` in `s` with `0xADDR` (leftmost first, as the
/// regex would), or returns `None` when there is none. Strings without `0x` cost one search.
fn mask_addresses(s: &str) -> Option<String> {
    // `contains` with a short needle takes the standard library's SIMD path; most strings
    // have no `0x` at all and stop here.
    if !s.contains("0x") {
        return None;
    }
    let bytes = s.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut from = 0;
    while let Some(offset) = s[from..].find("0x") {
        let start = from + offset;
        let digits =
            bytes[start + 2..].iter().take(16).take_while(|b| b.is_ascii_hexdigit()).count();
        if digits < 6 {
            from = start + 1;
            continue;
        }
        let end = start + 2 + digits;
        let out = out.get_or_insert_with(|| String::with_capacity(s.len()));
        out.push_str(&s[copied..start]);
        out.push_str(ADDRESS_MASK);
        copied = end;
        from = end;
    }
    let mut out = out?;
    out.push_str(&s[copied..]);
    Some(out)
}

fn not_an_object<T: Tree>(pointer: &str, found: &T) -> Error {
    Error::NotATrajectory {
        pointer: pointer.to_owned(),
        expected: "a trajectory object".to_owned(),
        found: found.kind().name().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_masking_agrees_with_the_regex() {
        let regex = regex::Regex::new("0x[0-9a-fA-F]{6,16}").unwrap();
        for s in [
            "",
            "no address",
            "<function f at 0x7f3c2a1b4c50>",
            "0x12345",
            "0x123456",
            "0x0x123456",
            "0x123450x123456",
            "0x1234567890abcdef12",
            "a 0xdeadbeef b 0xCAFEBABE00 c",
            "é0xabcdefé",
        ] {
            let expected = regex.replace_all(s, ADDRESS_MASK).into_owned();
            let actual = mask_addresses(s).unwrap_or_else(|| s.to_owned());
            assert_eq!(actual, expected, "masking {s:?}");
        }
    }
}
