//! The normalisation contract: remove what is random in a trajectory and nothing more.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::canonical::{canonical_prefix, to_canonical_string};
use crate::paths::Paths;
use crate::{Error, NormalizeOptions, Result};

/// Keys removed at every depth (outside tool-call arguments) by default.
pub(crate) const DEFAULT_VOLATILE_KEYS: &[&str] =
    &["session_id", "timestamp", "generation_id", "cost_usd", "total_cost_usd"];

/// How much of each subagent's canonical text is written to sort subagents before falling
/// back to whole texts for those that tie.
const SORT_PREFIX_BYTES: usize = 4096;

/// Keys whose string values no masker touches, at any depth outside tool-call arguments.
pub(crate) const NEVER_TOUCHED: [&str; 2] = ["schema_version", "model_name"];

/// What the default masker writes in place of a memory address.
pub(crate) const ADDRESS_MASK: &str = "0xADDR";

/// Normalises a trajectory so that two runs of the same behaviour give the same document.
///
/// The default contract, applied to the root and, recursively, to every embedded subagent:
/// `null` members and the volatile keys (`session_id`, `timestamp`, `generation_id`,
/// `cost_usd`, `total_cost_usd`, the root's `trajectory_id`) are removed outside tool-call
/// `arguments`; every `0x` address of 6 to 16 hex digits in a string becomes `0xADDR`; tool-call
/// ids become `call_1`, `call_2`, … with the join to observation results intact; subagents are
/// sorted by content and renamed `subagent_1`, … with their refs rewritten; empty `extra`
/// objects are dropped. `schema_version` and model names are never touched. Before all that,
/// every secret the options' scanner finds (by default: API keys, tokens, passwords, private
/// keys; see `atif-secrets`) becomes a `<redacted:KIND>` marker, tool arguments included.
/// Normalising twice gives the same document as normalising once.
/// See `docs/normalization.md` for the full contract.
///
/// # Errors
/// [`Error::NotATrajectory`] when the root, or an element of some `subagent_trajectories`, is
/// not a JSON object.
pub fn normalize(doc: &Value, options: &NormalizeOptions) -> Result<Value> {
    normalize_owned(doc.clone(), options)
}

/// Like [`normalize`], but takes the document by value and rewrites it in place, so strings
/// that do not change are never copied.
///
/// # Errors
/// [`Error::NotATrajectory`] when the root, or an element of some `subagent_trajectories`, is
/// not a JSON object.
pub fn normalize_owned(doc: Value, options: &NormalizeOptions) -> Result<Value> {
    normalize_with_report(doc, options).map(|(normalized, _)| normalized)
}

/// Like [`normalize_owned`], and also says which secrets the options' scanner replaced by
/// `<redacted:KIND>` markers, and where: JSON Pointers into `doc` as given.
///
/// Secrets are redacted first, before anything else moves, so subagents holding different
/// secrets still sort the same way and the pointers name places in the input.
///
/// # Errors
/// As [`normalize`].
pub fn normalize_with_report(
    mut doc: Value,
    options: &NormalizeOptions,
) -> Result<(Value, atif_secrets::Report)> {
    let report = match options.secret_scanner() {
        Some(scanner) => scanner.redact_value(&mut doc),
        None => atif_secrets::Report::new(),
    };
    let Value::Object(mut map) = doc else {
        return Err(not_an_object("", &doc));
    };
    let ctx = Ctx::new(options);
    normalize_trajectory(&mut map, &ctx, "")?;
    Ok((Value::Object(map), report))
}

struct Ctx<'a> {
    options: &'a NormalizeOptions,
    paths: Paths,
}

impl<'a> Ctx<'a> {
    fn new(options: &'a NormalizeOptions) -> Ctx<'a> {
        Ctx { options, paths: options.paths() }
    }

    /// The context for a trajectory whose root `extra` is `extra`: these paths, plus the ones
    /// it records when the options ask for them.
    fn for_trajectory(&self, extra: Option<&Value>) -> Ctx<'a> {
        let mut paths = self.paths.clone();
        if self.options.recorded_paths() {
            paths.add_recorded(extra);
        }
        Ctx { options: self.options, paths }
    }

    fn is_volatile(&self, key: &str) -> bool {
        DEFAULT_VOLATILE_KEYS.contains(&key)
            || self.options.volatile_keys().iter().any(|k| k == key)
    }

    fn mask(&self, s: &mut String) {
        // Paths first: an address or date masker must not break a path before it is found.
        if let Some(replaced) = self.paths.replace(s) {
            *s = replaced;
        }
        if let Some(masked) = mask_addresses(s) {
            *s = masked;
        }
        for masker in self.options.maskers() {
            if let std::borrow::Cow::Owned(masked) =
                masker.pattern().replace_all(s, masker.replacement())
            {
                *s = masked;
            }
        }
    }
}

fn normalize_trajectory(traj: &mut Map<String, Value>, ctx: &Ctx<'_>, pointer: &str) -> Result<()> {
    let ctx = &ctx.for_trajectory(traj.get("extra"));
    // Subagents are whole trajectories, normalised on their own, so they are taken out before
    // anything touches this one and put back at the end.
    let subagents = match traj.remove("subagent_trajectories") {
        Some(Value::Array(items)) => Some(normalize_subagents(items, traj, ctx, pointer)?),
        Some(other) => {
            traj.insert("subagent_trajectories".to_owned(), other);
            None
        }
        None => None,
    };

    let mut root = Value::Object(std::mem::take(traj));
    for (selector, redaction) in ctx.options.parsed_redactions() {
        selector.apply(&mut root, redaction);
    }
    let Value::Object(redacted) = root else {
        // A selector never replaces the value it starts from.
        return Ok(());
    };
    *traj = redacted;

    traj.remove("trajectory_id");
    renumber_call_ids(traj);
    if let Some((_, mapping)) = &subagents {
        rewrite_subagent_refs(traj, mapping);
    }
    scrub_object(traj, ctx);
    if let Some((items, _)) = subagents {
        traj.insert("subagent_trajectories".to_owned(), Value::Array(items));
    }
    Ok(())
}

/// Normalises each subagent, sorts them (unless asked not to), renames them `subagent_N` and
/// returns them with the mapping from their recorded ids to the new ones.
fn normalize_subagents(
    items: Vec<Value>,
    parent: &Map<String, Value>,
    ctx: &Ctx<'_>,
    pointer: &str,
) -> Result<(Vec<Value>, HashMap<String, String>)> {
    let first_ref = first_ref_positions(parent);
    let mut old_ids = Vec::with_capacity(items.len());
    let mut normalized = Vec::with_capacity(items.len());
    for (idx, item) in items.into_iter().enumerate() {
        let item_pointer = format!("{pointer}/subagent_trajectories/{idx}");
        let Value::Object(mut sub) = item else {
            return Err(not_an_object(&item_pointer, &item));
        };
        old_ids.push(match sub.get("trajectory_id") {
            Some(Value::String(id)) => Some(id.clone()),
            _ => None,
        });
        normalize_trajectory(&mut sub, ctx, &item_pointer)?;
        normalized.push(Value::Object(sub));
    }

    let order: Vec<usize> = if ctx.options.sort_subagents() {
        let ref_pos: Vec<usize> = old_ids
            .iter()
            .map(|id| id.as_ref().and_then(|id| first_ref.get(id)).copied().unwrap_or(usize::MAX))
            .collect();
        sorted_order(
            |idx, limit| match limit {
                Some(limit) => canonical_prefix(&normalized[idx], limit),
                None => to_canonical_string(&normalized[idx]).into_bytes(),
            },
            &ref_pos,
        )
    } else {
        (0..normalized.len()).collect()
    };

    let mut slots: Vec<Option<Value>> = normalized.into_iter().map(Some).collect();
    let mut items = Vec::with_capacity(slots.len());
    let mut new_ids = vec![String::new(); slots.len()];
    for (position, &idx) in order.iter().enumerate() {
        let new_id = format!("subagent_{}", position + 1);
        if let Some(mut sub) = slots[idx].take() {
            if let Value::Object(map) = &mut sub {
                map.insert("trajectory_id".to_owned(), Value::String(new_id.clone()));
            }
            items.push(sub);
        }
        new_ids[idx] = new_id;
    }
    Ok((items, id_mapping(old_ids, new_ids)))
}

/// The order of subagents sorted by their canonical text, ties broken by `ref_pos` (where the
/// parent first refers to each). `text(idx, Some(limit))` gives the first `limit` bytes of
/// subagent `idx`'s text and `text(idx, None)` all of it; whole texts are only written for
/// subagents whose prefixes tie.
pub(crate) fn sorted_order(
    text: impl Fn(usize, Option<usize>) -> Vec<u8>,
    ref_pos: &[usize],
) -> Vec<usize> {
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
pub(crate) fn id_mapping(
    old_ids: Vec<Option<String>>,
    new_ids: Vec<String>,
) -> HashMap<String, String> {
    let mut mapping = HashMap::new();
    for (old_id, new_id) in old_ids.into_iter().zip(new_ids) {
        if let Some(old_id) = old_id {
            mapping.entry(old_id).or_insert(new_id);
        }
    }
    mapping
}

/// Where each subagent id is first referred to in the parent's steps, in walking order.
fn first_ref_positions(parent: &Map<String, Value>) -> HashMap<String, usize> {
    let mut positions = HashMap::new();
    for_each_subagent_ref(parent, |id| {
        let next = positions.len();
        if let Value::String(id) = id {
            positions.entry(id.clone()).or_insert(next);
        }
    });
    positions
}

fn rewrite_subagent_refs(traj: &mut Map<String, Value>, mapping: &HashMap<String, String>) {
    for_each_subagent_ref_mut(traj, |id| {
        let new = match id {
            Value::String(old) => mapping.get(old.as_str()),
            _ => None,
        };
        if let Some(new) = new {
            *id = Value::String(new.clone());
        }
    });
}

fn for_each_subagent_ref(traj: &Map<String, Value>, mut f: impl FnMut(&Value)) {
    let Some(Value::Array(steps)) = traj.get("steps") else { return };
    for step in steps {
        let Some(results) = step.pointer("/observation/results").and_then(Value::as_array) else {
            continue;
        };
        for result in results {
            let Some(refs) = result.get("subagent_trajectory_ref").and_then(Value::as_array) else {
                continue;
            };
            for reference in refs {
                if let Some(id) = reference.get("trajectory_id") {
                    f(id);
                }
            }
        }
    }
}

fn for_each_subagent_ref_mut(traj: &mut Map<String, Value>, mut f: impl FnMut(&mut Value)) {
    let Some(Value::Array(steps)) = traj.get_mut("steps") else { return };
    for step in steps {
        let Some(results) = step.pointer_mut("/observation/results").and_then(Value::as_array_mut)
        else {
            continue;
        };
        for result in results {
            let Some(refs) =
                result.get_mut("subagent_trajectory_ref").and_then(Value::as_array_mut)
            else {
                continue;
            };
            for reference in refs {
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
fn renumber_call_ids(traj: &mut Map<String, Value>) {
    let Some(Value::Array(steps)) = traj.get_mut("steps") else { return };
    let mut mapping: HashMap<String, String> = HashMap::new();
    let mut renumber = |id: &mut Value| {
        if let Value::String(old) = id {
            let next = mapping.len() + 1;
            let new = mapping.entry(std::mem::take(old)).or_insert_with(|| format!("call_{next}"));
            old.clone_from(new);
        }
    };
    for step in steps {
        let Value::Object(step) = step else { continue };
        if let Some(Value::Array(calls)) = step.get_mut("tool_calls") {
            for call in calls {
                if let Some(id) = call.get_mut("tool_call_id") {
                    renumber(id);
                }
            }
        }
        if let Some(results) = step
            .get_mut("observation")
            .and_then(|o| o.get_mut("results"))
            .and_then(Value::as_array_mut)
        {
            for result in results {
                if let Some(id) = result.get_mut("source_call_id") {
                    renumber(id);
                }
            }
        }
    }
}

/// Removes nulls, volatile keys and emptied `extra` objects, and masks strings, at every depth.
fn scrub_object(map: &mut Map<String, Value>, ctx: &Ctx<'_>) {
    map.retain(|key, value| !value.is_null() && !ctx.is_volatile(key));
    ctx.paths.replace_keys(map);
    for (key, value) in map.iter_mut() {
        match (key.as_str(), value) {
            // A version bump and a model swap must show, so no masker touches these.
            (key, Value::String(_)) if NEVER_TOUCHED.contains(&key) => {}
            ("tool_calls", Value::Array(calls)) => {
                for call in calls {
                    match call {
                        Value::Object(call) => scrub_tool_call(call, ctx),
                        other => scrub_value(other, ctx),
                    }
                }
            }
            (_, value) => scrub_value(value, ctx),
        }
    }
    drop_empty_extra(map);
}

/// A tool call is scrubbed like any object, except that its `arguments` are what the model
/// passed to a tool: behaviour, so only masked.
fn scrub_tool_call(call: &mut Map<String, Value>, ctx: &Ctx<'_>) {
    call.retain(|key, value| !value.is_null() && !ctx.is_volatile(key));
    ctx.paths.replace_keys(call);
    for (key, value) in call.iter_mut() {
        match (key.as_str(), value) {
            ("arguments", value) => mask_only(value, ctx),
            (key, Value::String(_)) if NEVER_TOUCHED.contains(&key) => {}
            (_, value) => scrub_value(value, ctx),
        }
    }
    drop_empty_extra(call);
}

fn drop_empty_extra(map: &mut Map<String, Value>) {
    if matches!(map.get("extra"), Some(Value::Object(extra)) if extra.is_empty()) {
        map.remove("extra");
    }
}

fn scrub_value(value: &mut Value, ctx: &Ctx<'_>) {
    match value {
        Value::String(s) => ctx.mask(s),
        Value::Array(items) => {
            for item in items {
                scrub_value(item, ctx);
            }
        }
        Value::Object(map) => scrub_object(map, ctx),
        _ => {}
    }
}

fn mask_only(value: &mut Value, ctx: &Ctx<'_>) {
    match value {
        Value::String(s) => ctx.mask(s),
        Value::Array(items) => {
            for item in items {
                mask_only(item, ctx);
            }
        }
        Value::Object(map) => {
            ctx.paths.replace_keys(map);
            for item in map.values_mut() {
                mask_only(item, ctx);
            }
        }
        _ => {}
    }
}

/// Replaces each match of `0x[0-9a-fA-F]{6,16}` in `s` with `0xADDR` (leftmost first, as the
/// regex would), or returns `None` when there is none. Strings without `0x` cost one search.
pub(crate) fn mask_addresses(s: &str) -> Option<String> {
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

pub(crate) fn not_an_object(pointer: &str, found: &Value) -> Error {
    let found = match found {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    Error::NotATrajectory {
        pointer: pointer.to_owned(),
        expected: "a trajectory object".to_owned(),
        found: found.to_owned(),
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
