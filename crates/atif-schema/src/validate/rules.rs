//! The rules: a walk over the `serde_json::Value` that knows the ATIF v1.8 superset object by
//! object and reports every finding.
//!
//! Pointers are built lazily: the walk carries a linked list of path segments on the stack and
//! renders a JSON Pointer only when it reports something, so a valid document costs one pass
//! with no allocation beyond a few small per-trajectory tables.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::field_table::{self, Change, ChangeKind, ObjectType};
use crate::validate::parse::{push_escaped, sentinel_literal};
use crate::validate::{Finding, Profile, Rule, Severity};
use crate::{SchemaVersion, check_timestamp};

/// Embedded subagents deeper than this are not checked (a parsed document cannot get close:
/// the reader stops at 128 levels of nesting, and each subagent level takes two).
const MAX_SUBAGENT_DEPTH: usize = 64;

/// Findings about the elements of one scalar array, beyond which they are summarised.
const MAX_ELEMENT_FINDINGS: usize = 3;

/// Checks `document`; returns the root's version and step count.
pub(crate) fn check(
    document: &Value,
    profile: Profile,
    sentinel: Option<char>,
    findings: &mut Vec<Finding>,
) -> (Option<SchemaVersion>, Option<usize>) {
    let root = Path { parent: None, seg: Seg::Root };
    let Value::Object(object) = document else {
        let message = match document {
            Value::Array(elements) => format!(
                "expected a JSON object (one trajectory), found an array of {} {}; a file holds \
                 one trajectory, so split the array into one file per element",
                elements.len(),
                if elements.len() == 1 { "element" } else { "elements" }
            ),
            other => format!("expected a JSON object (one trajectory), found {}", describe(other)),
        };
        findings.push(Finding::new(Rule::RootObject, Severity::Error, "", message));
        return (None, None);
    };
    let mut walker = Walker {
        profile,
        sentinel,
        findings,
        features: Vec::new(),
        refs: Vec::new(),
        embedded: HashSet::new(),
        unseen_work: false,
    };
    let summary = walker.trajectory(object, &root, 0);
    walker.resolve_refs();
    let n_steps = object.get("steps").and_then(Value::as_array).map(Vec::len);
    (summary.version, n_steps)
}

#[derive(Debug, Clone, Copy)]
enum Seg<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

/// A JSON Pointer as a linked list of segments on the stack.
#[derive(Debug, Clone, Copy)]
struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    seg: Seg<'a>,
}

impl<'a> Path<'a> {
    fn key<'b>(&'b self, key: &'b str) -> Path<'b> {
        Path { parent: Some(self), seg: Seg::Key(key) }
    }

    fn index(&self, index: usize) -> Path<'_> {
        Path { parent: Some(self), seg: Seg::Index(index) }
    }

    fn render(&self) -> String {
        let mut segs = Vec::new();
        let mut at = Some(self);
        while let Some(path) = at {
            segs.push(path.seg);
            at = path.parent;
        }
        let mut pointer = String::new();
        for seg in segs.iter().rev() {
            match seg {
                Seg::Root => {}
                Seg::Key(key) => {
                    pointer.push('/');
                    push_escaped(&mut pointer, key);
                }
                Seg::Index(index) => {
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                }
            }
        }
        pointer
    }
}

#[derive(Debug)]
struct FeatureUse {
    change: &'static Change,
    pointer: String,
    count: usize,
}

/// A subagent ref that must resolve to an embedded subagent of its trajectory.
#[derive(Debug)]
struct PendingRef<'v> {
    pointer: String,
    trajectory_id: &'v str,
}

/// Sums of the agent steps' metrics (a sum is `None` when no step has the field).
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    prompt: Option<i128>,
    completion: Option<i128>,
    cached: Option<i128>,
    cost: Option<f64>,
}

impl Sums {
    fn add(&mut self, other: &Sums) {
        fn add_int(total: &mut Option<i128>, value: Option<i128>) {
            if let Some(value) = value {
                *total = Some(total.unwrap_or(0).saturating_add(value));
            }
        }
        add_int(&mut self.prompt, other.prompt);
        add_int(&mut self.completion, other.completion);
        add_int(&mut self.cached, other.cached);
        if let Some(cost) = other.cost {
            self.cost = Some(self.cost.unwrap_or(0.0) + cost);
        }
    }
}

/// What a trajectory tells its parent.
#[derive(Debug, Default)]
struct TrajectorySummary {
    version: Option<SchemaVersion>,
    /// Sums over its own agent steps and those of its embedded subagents, recursively.
    sums_with_subagents: Sums,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    System,
    User,
    Agent,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::System => "system",
            Source::User => "user",
            Source::Agent => "agent",
        }
    }
}

/// What the trajectory needs to know about one step.
#[derive(Debug, Default)]
struct StepSummary {
    step_id: Option<i128>,
    agent_sums: Sums,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Image,
    Audio,
}

const AGENT_ONLY: &[&str] =
    &["model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"];
const IMAGE_MEDIA_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];
const AUDIO_MEDIA_TYPES: &[&str] = &[
    "audio/wav",
    "audio/mpeg",
    "audio/mp4",
    "audio/aac",
    "audio/ogg",
    "audio/flac",
    "audio/webm",
    "audio/aiff",
];

struct Walker<'f, 'v> {
    profile: Profile,
    /// Strings starting with this character stand for non-finite literals (already reported).
    sentinel: Option<char>,
    findings: &'f mut Vec<Finding>,
    /// Features used by the trajectory being walked.
    features: Vec<FeatureUse>,
    /// Refs that must resolve to an embedded subagent.
    refs: Vec<PendingRef<'v>>,
    /// The `trajectory_id` of every embedded subagent, at any depth.
    embedded: HashSet<&'v str>,
    /// The trajectory being walked points at work whose metrics are not in it (subagents in
    /// other files, steps copied from a previous segment), so its totals may exceed its sums.
    unseen_work: bool,
}

impl<'v> Walker<'_, 'v> {
    fn report(&mut self, rule: Rule, severity: Severity, path: &Path<'_>, message: String) {
        self.findings.push(Finding { rule, severity, pointer: path.render(), message });
    }

    fn error(&mut self, rule: Rule, path: &Path<'_>, message: String) {
        self.report(rule, Severity::Error, path, message);
    }

    fn warn(&mut self, rule: Rule, path: &Path<'_>, message: String) {
        self.report(rule, Severity::Warning, path, message);
    }

    /// An error in the strict profile that Harbor accepts: a warning there.
    fn lax(&mut self, rule: Rule, path: &Path<'_>, message: String) {
        let severity = match self.profile {
            Profile::Strict => Severity::Error,
            Profile::Harbor => Severity::Warning,
        };
        self.report(rule, severity, path, message);
    }

    fn harbor(&self) -> bool {
        self.profile == Profile::Harbor
    }

    /// Records a use of a row of the per-version table, for the `version-feature` check once
    /// the trajectory's label is known.
    fn feature(&mut self, kind: ChangeKind, path: &Path<'_>) {
        let Some(change) = field_table::change(kind) else { return };
        match self.features.iter_mut().find(|used| std::ptr::eq(used.change, change)) {
            Some(used) => used.count += 1,
            None => self.features.push(FeatureUse { change, pointer: path.render(), count: 1 }),
        }
    }

    /// Records the use of a field that arrived after ATIF-v1.0.
    fn field_feature(&mut self, object: ObjectType, field: &'static str, path: &Path<'_>) {
        self.feature(ChangeKind::Field { object, field }, path);
    }

    fn sentinel(&self, value: &Value) -> Option<&'static str> {
        self.sentinel.and_then(|sentinel| sentinel_literal(value, sentinel))
    }

    /// Refs that name an embedded subagent must find it somewhere in the document, unless a
    /// path says where it lives.
    fn resolve_refs(&mut self) {
        for pending in std::mem::take(&mut self.refs) {
            if self.embedded.contains(pending.trajectory_id) {
                continue;
            }
            let message = format!(
                "subagent ref trajectory_id {:?} names no embedded subagent (no element of any \
                 subagent_trajectories in this document has that id), and the ref has no \
                 trajectory_path, so a reader cannot find the subagent{}",
                pending.trajectory_id,
                if self.harbor() { " (Harbor does not check this)" } else { "" }
            );
            let severity = if self.harbor() { Severity::Warning } else { Severity::Error };
            self.findings.push(Finding {
                rule: Rule::SubagentResolve,
                severity,
                pointer: pending.pointer,
                message,
            });
        }
    }

    // ----- documents -------------------------------------------------------------------------

    fn trajectory(
        &mut self,
        object: &'v Map<String, Value>,
        path: &Path<'_>,
        depth: usize,
    ) -> TrajectorySummary {
        let saved_features = std::mem::take(&mut self.features);
        let saved_unseen_work = std::mem::replace(&mut self.unseen_work, false);
        let mut summary = TrajectorySummary::default();
        let mut own_sums = Sums::default();
        let mut sub_sums = Sums::default();
        let mut embedded_ids: HashMap<&'v str, usize> = HashMap::new();
        let mut n_steps = None;
        let mut totals = None;
        for (key, value) in object {
            let here = path.key(key);
            if value.is_null() && key != "schema_version" && ObjectType::Trajectory.has_field(key) {
                continue;
            }
            match key.as_str() {
                "schema_version" => summary.version = self.schema_version(value, &here),
                "session_id" | "notes" => {
                    self.string(value, &here);
                }
                "trajectory_id" => {
                    self.field_feature(ObjectType::Trajectory, "trajectory_id", &here);
                    self.string(value, &here);
                }
                "continued_trajectory_ref" => {
                    self.field_feature(ObjectType::Trajectory, "continued_trajectory_ref", &here);
                    self.string(value, &here);
                }
                "extra" => {
                    self.field_feature(ObjectType::Trajectory, "extra", &here);
                    self.object(value, &here);
                }
                "agent" => self.agent(value, &here),
                "steps" => {
                    let Some(steps) = self.array(value, &here) else { continue };
                    n_steps = Some(steps.len());
                    if steps.is_empty() {
                        self.error(
                            Rule::EmptySteps,
                            &here,
                            "expected at least one step, found an empty array".to_owned(),
                        );
                    }
                    for (step_idx, step) in steps.iter().enumerate() {
                        let step_path = here.index(step_idx);
                        let step_summary = self.step(step, &step_path);
                        own_sums.add(&step_summary.agent_sums);
                        if let Some(step_id) = step_summary.step_id {
                            let expected = step_idx as i128 + 1;
                            if step_id != expected {
                                self.error(
                                    Rule::StepSequence,
                                    &step_path.key("step_id"),
                                    format!(
                                        "expected step_id {expected} (step ids count 1, 2, 3… in \
                                         array order), found {step_id}"
                                    ),
                                );
                            }
                        }
                    }
                }
                "final_metrics" => totals = self.final_metrics(value, &here),
                "subagent_trajectories" => {
                    self.field_feature(ObjectType::Trajectory, "subagent_trajectories", &here);
                    let Some(subagents) = self.array(value, &here) else { continue };
                    for (sub_idx, subagent) in subagents.iter().enumerate() {
                        let sub_path = here.index(sub_idx);
                        let Some(sub_object) =
                            self.expect_object(subagent, &sub_path, "an embedded trajectory")
                        else {
                            continue;
                        };
                        if depth + 1 > MAX_SUBAGENT_DEPTH {
                            self.error(
                                Rule::Depth,
                                &sub_path,
                                format!(
                                    "embedded subagents are nested more than {MAX_SUBAGENT_DEPTH} \
                                     levels deep; not checked further"
                                ),
                            );
                            continue;
                        }
                        let sub_summary = self.trajectory(sub_object, &sub_path, depth + 1);
                        sub_sums.add(&sub_summary.sums_with_subagents);
                        match sub_object.get("trajectory_id") {
                            None | Some(Value::Null) => self.error(
                                Rule::SubagentId,
                                &sub_path,
                                "embedded subagent has no trajectory_id: every element of \
                                 subagent_trajectories needs one, unique within the array, so \
                                 refs can name it"
                                    .to_owned(),
                            ),
                            Some(Value::String(id)) => {
                                self.embedded.insert(id);
                                if let Some(first) = embedded_ids.insert(id, sub_idx) {
                                    embedded_ids.insert(id, first);
                                    self.error(
                                        Rule::SubagentId,
                                        &sub_path.key("trajectory_id"),
                                        format!(
                                            "duplicate trajectory_id {:?}: already used by \
                                             subagent_trajectories element {first}",
                                            id
                                        ),
                                    );
                                }
                            }
                            Some(_) => {} // a type error, reported inside
                        }
                    }
                }
                _ => {
                    self.unknown(&here, key, ObjectType::Trajectory.fields(), trajectory_hint(key))
                }
            }
        }
        if object.get("agent").is_none_or(Value::is_null) {
            self.missing(object, path, "agent", "an agent object ({name, version, …})");
        }
        if object.get("steps").is_none_or(Value::is_null) {
            self.missing(object, path, "steps", "an array of steps");
        }
        if !object.contains_key("schema_version") {
            match self.profile {
                Profile::Strict => self.error(
                    Rule::SchemaVersion,
                    path,
                    "missing schema_version: expected a label such as \"ATIF-v1.8\" (Harbor \
                     assumes ATIF-v1.8 when it is missing, the atif package rejects the file)"
                        .to_owned(),
                ),
                Profile::Harbor => {
                    summary.version = Some(SchemaVersion::V1_8);
                    self.warn(
                        Rule::SchemaVersion,
                        path,
                        "missing schema_version: Harbor reads it as ATIF-v1.8".to_owned(),
                    );
                }
            }
        }

        let unseen_work = std::mem::replace(&mut self.unseen_work, saved_unseen_work);

        if object.get("session_id").is_none_or(Value::is_null) {
            let kind = ChangeKind::NoLongerRequired {
                object: ObjectType::Trajectory,
                field: "session_id",
            };
            self.feature(kind, path);
        }
        let features = std::mem::replace(&mut self.features, saved_features);
        if let Some(version) = summary.version {
            self.version_features(version, features);
        }

        let mut all_sums = own_sums;
        all_sums.add(&sub_sums);
        if let Some(totals) = totals {
            let sums = TotalsBasis { own: own_sums, all: all_sums, unseen_work };
            self.check_totals(object, path, &totals, &sums, n_steps);
        }
        summary.sums_with_subagents = all_sums;
        summary
    }

    /// Warns about each row of the per-version table that the trajectory uses (or, for a field
    /// that used to be required, lacks) although its label is older.
    fn version_features(&mut self, version: SchemaVersion, features: Vec<FeatureUse>) {
        for used in features {
            let since = used.change.since;
            if since <= version {
                continue;
            }
            let more = match used.count {
                1 => String::new(),
                n => format!(" (and {} more places)", n - 1),
            };
            let what = used.change.what;
            let message = match used.change.kind {
                ChangeKind::NoLongerRequired { .. } => format!(
                    "{version} requires {what} (it became optional in {since}){more}; no \
                     reference validator enforces this any more"
                ),
                _ => format!(
                    "{what} arrived in {since}, but the document is labelled {version}{more}; \
                     readers accept it (no reference gates by label), but the label should be at \
                     least {since}"
                ),
            };
            self.findings.push(Finding {
                rule: Rule::VersionFeature,
                severity: Severity::Warning,
                pointer: used.pointer,
                message,
            });
        }
    }

    fn check_totals(
        &mut self,
        object: &Map<String, Value>,
        path: &Path<'_>,
        totals: &Totals,
        sums: &TotalsBasis,
        n_steps: Option<usize>,
    ) {
        let (own, all) = (&sums.own, &sums.all);
        // With unseen work, only a total below what the document itself shows is suspicious.
        let unseen = if sums.unseen_work {
            " (the document also points at work it does not contain, such as subagents in other \
             files or copied steps, but that can only add to the totals)"
        } else {
            ""
        };
        let metrics_path = path.key("final_metrics");
        if let (Some(total_steps), Some(n_steps)) = (totals.steps, n_steps) {
            if total_steps >= 0 && total_steps != n_steps as i128 {
                self.warn(
                    Rule::TotalSteps,
                    &metrics_path.key("total_steps"),
                    format!("total_steps is {total_steps}, but the trajectory has {n_steps} steps"),
                );
            }
        }
        let explained =
            object.get("notes").and_then(Value::as_str).is_some_and(|notes| !notes.is_empty());
        if explained {
            return;
        }
        let int_totals = [
            ("total_prompt_tokens", "prompt_tokens", totals.prompt, own.prompt, all.prompt),
            (
                "total_completion_tokens",
                "completion_tokens",
                totals.completion,
                own.completion,
                all.completion,
            ),
            ("total_cached_tokens", "cached_tokens", totals.cached, own.cached, all.cached),
        ];
        for (total_key, step_key, total, own_sum, all_sum) in int_totals {
            let (Some(total), Some(own_sum)) = (total, own_sum) else { continue };
            let plausible = sums.unseen_work && total > own_sum;
            if total != own_sum && Some(total) != all_sum && !plausible {
                self.warn(
                    Rule::FinalMetricsSum,
                    &metrics_path.key(total_key),
                    format!(
                        "{total_key} is {total}, but the agent steps' {step_key} sum to \
                         {own_sum}{unseen}; if the difference is intended, explain it in `notes`"
                    ),
                );
            }
        }
        let finite = |cost: &f64| cost.is_finite();
        if let (Some(total), Some(own_sum)) = (totals.cost.filter(finite), own.cost.filter(finite))
        {
            let close = |sum: f64| (total - sum).abs() <= 1e-6_f64.max(1e-9 * total.abs());
            let plausible = sums.unseen_work && total > own_sum;
            if !close(own_sum) && !all.cost.is_some_and(close) && !plausible {
                self.warn(
                    Rule::FinalMetricsSum,
                    &metrics_path.key("total_cost_usd"),
                    format!(
                        "total_cost_usd is {total}, but the agent steps' cost_usd sum to \
                         {own_sum}{unseen}; if the difference is intended, explain it in `notes`"
                    ),
                );
            }
        }
    }

    fn schema_version(&mut self, value: &Value, path: &Path<'_>) -> Option<SchemaVersion> {
        let label = match value {
            Value::String(label) => label,
            Value::Null => {
                self.error(
                    Rule::SchemaVersion,
                    path,
                    "schema_version is null: expected a label such as \"ATIF-v1.8\"".to_owned(),
                );
                return None;
            }
            other => {
                self.error(
                    Rule::SchemaVersion,
                    path,
                    format!(
                        "expected a label such as \"ATIF-v1.8\" (a string), found {}",
                        describe(other)
                    ),
                );
                return None;
            }
        };
        if let Ok(version) = SchemaVersion::try_from(label.as_str()) {
            return Some(version);
        }
        let guess = label
            .trim()
            .trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '-')
            .trim_start_matches(['v', 'V']);
        let hint = SchemaVersion::ALL
            .into_iter()
            .find(|version| version.label().ends_with(&format!("v{guess}")) && !guess.is_empty())
            .map_or(String::new(), |version| format!(" (did you mean {:?}?)", version.label()));
        self.error(
            Rule::SchemaVersion,
            path,
            format!(
                "unknown schema_version {label:?}: expected one of ATIF-v1.0 … ATIF-v1.8{hint}"
            ),
        );
        None
    }

    fn agent(&mut self, value: &Value, path: &Path<'_>) {
        let Some(object) = self.expect_object(value, path, "an agent object ({name, version, …})")
        else {
            return;
        };
        for (key, value) in object {
            if value.is_null() && ObjectType::Agent.has_field(key) {
                continue;
            }
            let here = path.key(key);
            match key.as_str() {
                "name" | "model_name" => {
                    self.string(value, &here);
                }
                "version" => {
                    if let Value::Number(number) = value {
                        self.error(
                            Rule::Type,
                            &here,
                            format!(
                                "expected a string, found the number {number}: write the version \
                                 as a string, e.g. \"{number}\""
                            ),
                        );
                    } else {
                        self.string(value, &here);
                    }
                }
                "tool_definitions" => {
                    self.field_feature(ObjectType::Agent, "tool_definitions", &here);
                    let Some(definitions) = self.array(value, &here) else { continue };
                    for (def_idx, definition) in definitions.iter().enumerate() {
                        self.expect_object(
                            definition,
                            &here.index(def_idx),
                            "a tool definition object ({type, function})",
                        );
                    }
                }
                "extra" => {
                    self.object(value, &here);
                }
                _ => self.unknown(&here, key, ObjectType::Agent.fields(), agent_hint(key)),
            }
        }
        self.require(object, path, "name", "a string (the agent's name)");
        self.require(object, path, "version", "a string (the agent's version)");
    }

    fn step(&mut self, value: &'v Value, path: &Path<'_>) -> StepSummary {
        let mut summary = StepSummary::default();
        let Some(object) = self.expect_object(value, path, "a step object") else {
            return summary;
        };
        let source = match object.get("source") {
            Some(Value::String(source)) => match source.as_str() {
                "system" => Some(Source::System),
                "user" => Some(Source::User),
                "agent" => Some(Source::Agent),
                _ => None,
            },
            _ => None,
        };
        let mut llm_call_count = None;
        // In call order (for messages) and as a set (a step may hold thousands of calls).
        let mut tool_call_ids: Vec<&'v str> = Vec::new();
        let mut tool_call_set: HashSet<&'v str> = HashSet::new();
        let mut source_call_ids: Vec<(usize, &'v str)> = Vec::new();
        for (key, value) in object {
            if value.is_null() && ObjectType::Step.has_field(key) {
                continue;
            }
            let here = path.key(key);
            if let Some(source) = source {
                if source != Source::Agent && AGENT_ONLY.contains(&key.as_str()) {
                    self.error(
                        Rule::AgentOnlyField,
                        &here,
                        format!(
                            "`{key}` is only allowed on agent steps, but this step's source is \
                             {:?}",
                            source.name()
                        ),
                    );
                }
            }
            match key.as_str() {
                "step_id" => summary.step_id = self.integer(value, &here),
                "timestamp" => {
                    if let Some(text) = self.string(value, &here) {
                        if let Err(err) = check_timestamp(text) {
                            self.error(Rule::Timestamp, &here, err.to_string());
                        }
                    }
                }
                "source" => {
                    if let Some(text) = self.string(value, &here) {
                        if source.is_none() {
                            let hint = match text {
                                "assistant" => {
                                    " (\"assistant\" is the chat role; ATIF calls it \"agent\")"
                                }
                                "tool" => " (tool output belongs in the agent step's observation)",
                                _ if ["system", "user", "agent"]
                                    .contains(&text.to_lowercase().as_str()) =>
                                {
                                    " (the values are lower-case)"
                                }
                                _ => "",
                            };
                            self.error(
                                Rule::Enum,
                                &here,
                                format!("expected \"system\", \"user\" or \"agent\", found {text:?}{hint}"),
                            );
                        }
                    }
                }
                "model_name" | "reasoning_content" => {
                    self.string(value, &here);
                }
                "reasoning_effort" => self.reasoning_effort(value, &here),
                "message" => self.content(value, &here),
                "tool_calls" => {
                    let Some(calls) = self.array(value, &here) else { continue };
                    for (call_idx, call) in calls.iter().enumerate() {
                        let call_path = here.index(call_idx);
                        if let Some(id) = self.tool_call(call, &call_path) {
                            if !tool_call_set.insert(id) {
                                self.warn(
                                    Rule::DuplicateToolCallId,
                                    &call_path.key("tool_call_id"),
                                    format!(
                                        "tool_call_id {id:?} is used by an earlier call of this \
                                         step, so results cannot tell the calls apart"
                                    ),
                                );
                            }
                            tool_call_ids.push(id);
                        }
                    }
                }
                "observation" => {
                    if source == Some(Source::System) {
                        self.feature(ChangeKind::SystemObservation, &here);
                    }
                    self.observation(value, &here, &mut source_call_ids);
                }
                "metrics" => summary.agent_sums = self.metrics(value, &here),
                "extra" => {
                    self.object(value, &here);
                }
                "llm_call_count" => {
                    self.field_feature(ObjectType::Step, "llm_call_count", &here);
                    llm_call_count = self.integer(value, &here);
                    if let Some(count) = llm_call_count.filter(|count| *count < 0) {
                        self.error(
                            Rule::Range,
                            &here,
                            format!("expected a count ≥ 0 (null when not tracked), found {count}"),
                        );
                    }
                }
                "is_copied_context" => {
                    self.field_feature(ObjectType::Step, "is_copied_context", &here);
                    if self.boolean(value, &here) == Some(true) {
                        self.unseen_work = true;
                    }
                }
                _ => self.unknown(&here, key, ObjectType::Step.fields(), step_hint(key)),
            }
        }
        self.require(object, path, "step_id", "an integer (1 for the first step)");
        self.require(object, path, "source", "\"system\", \"user\" or \"agent\"");
        self.require(
            object,
            path,
            "message",
            "a string (\"\" is fine) or an array of content parts",
        );
        if source != Some(Source::Agent) {
            summary.agent_sums = Sums::default();
        }
        if source == Some(Source::Agent) && llm_call_count == Some(0) {
            for key in ["metrics", "reasoning_content"] {
                if object.get(key).is_some_and(|value| !value.is_null()) {
                    self.error(
                        Rule::LlmCallZero,
                        &path.key(key),
                        format!(
                            "`{key}` must be absent on an agent step with llm_call_count 0 (a \
                             deterministic dispatch made no LLM call)"
                        ),
                    );
                }
            }
        }
        for (result_idx, id) in source_call_ids {
            if tool_call_set.contains(id) {
                continue;
            }
            let calls = if tool_call_ids.is_empty() {
                "this step has no tool_calls".to_owned()
            } else {
                let mut ids: Vec<String> =
                    tool_call_ids.iter().take(5).map(|id| format!("{id:?}")).collect();
                if tool_call_ids.len() > 5 {
                    ids.push(format!("and {} more", tool_call_ids.len() - 5));
                }
                format!("this step's tool_call_ids are {}", ids.join(", "))
            };
            let result_path = path.key("observation");
            let result_path = result_path.key("results");
            let result_path = result_path.index(result_idx);
            self.error(
                Rule::CallJoin,
                &result_path.key("source_call_id"),
                format!(
                    "source_call_id {id:?} matches no tool_call_id of the same step ({calls}); a \
                     result must answer a call made in its own step"
                ),
            );
        }
        summary
    }

    /// Checks a tool call; returns its id.
    fn tool_call(&mut self, value: &'v Value, path: &Path<'_>) -> Option<&'v str> {
        let object = self.expect_object(
            value,
            path,
            "a tool call object ({tool_call_id, function_name, arguments})",
        )?;
        let mut id = None;
        for (key, value) in object {
            if value.is_null() && ObjectType::ToolCall.has_field(key) {
                continue;
            }
            let here = path.key(key);
            match key.as_str() {
                "tool_call_id" => id = self.string(value, &here),
                "function_name" => {
                    self.string(value, &here);
                }
                "arguments" => match value {
                    Value::Object(_) => {}
                    Value::String(_) => self.error(
                        Rule::Type,
                        &here,
                        "expected an object, found a string: tool-call arguments must be a JSON \
                         object, not JSON-encoded text (OpenAI's API returns them as a string; \
                         decode it with json.loads before writing ATIF)"
                            .to_owned(),
                    ),
                    other => self.error(
                        Rule::Type,
                        &here,
                        format!(
                            "expected an object ({{}} when the tool takes none), found {}",
                            describe(other)
                        ),
                    ),
                },
                "extra" => {
                    self.field_feature(ObjectType::ToolCall, "extra", &here);
                    self.object(value, &here);
                }
                _ => self.unknown(&here, key, ObjectType::ToolCall.fields(), tool_call_hint(key)),
            }
        }
        self.require(object, path, "tool_call_id", "a string");
        self.require(object, path, "function_name", "a string");
        self.require(object, path, "arguments", "an object ({} when the tool takes none)");
        id
    }

    fn observation(
        &mut self,
        value: &'v Value,
        path: &Path<'_>,
        source_call_ids: &mut Vec<(usize, &'v str)>,
    ) {
        let Some(object) =
            self.expect_object(value, path, "an observation object ({results: [...]})")
        else {
            return;
        };
        for (key, value) in object {
            let here = path.key(key);
            match key.as_str() {
                "results" => {
                    if value.is_null() {
                        continue;
                    }
                    let Some(results) = self.array(value, &here) else { continue };
                    for (result_idx, result) in results.iter().enumerate() {
                        let result_path = here.index(result_idx);
                        if let Some(id) = self.result(result, &result_path) {
                            source_call_ids.push((result_idx, id));
                        }
                    }
                }
                _ => self.unknown(
                    &here,
                    key,
                    ObjectType::Observation.fields(),
                    Some("an observation is {\"results\": [{source_call_id, content}, …]}"),
                ),
            }
        }
        self.require(object, path, "results", "an array of results ([] when there are none)");
    }

    /// Checks an observation result; returns its `source_call_id`.
    fn result(&mut self, value: &'v Value, path: &Path<'_>) -> Option<&'v str> {
        let object =
            self.expect_object(value, path, "a result object ({source_call_id, content})")?;
        let mut source_call_id = None;
        for (key, value) in object {
            if value.is_null() && ObjectType::ObservationResult.has_field(key) {
                continue;
            }
            let here = path.key(key);
            match key.as_str() {
                "source_call_id" => source_call_id = self.string(value, &here),
                "content" => self.content(value, &here),
                "subagent_trajectory_ref" => {
                    if let Value::Object(_) = value {
                        self.error(
                            Rule::Type,
                            &here,
                            "expected an array of refs, found an object: wrap a single ref in an \
                             array"
                                .to_owned(),
                        );
                        continue;
                    }
                    let Some(refs) = self.array(value, &here) else { continue };
                    for (ref_idx, subagent_ref) in refs.iter().enumerate() {
                        self.subagent_ref(subagent_ref, &here.index(ref_idx));
                    }
                }
                "extra" => {
                    self.field_feature(ObjectType::ObservationResult, "extra", &here);
                    self.object(value, &here);
                }
                _ => self.unknown(&here, key, ObjectType::ObservationResult.fields(), None),
            }
        }
        source_call_id
    }

    fn subagent_ref(&mut self, value: &'v Value, path: &Path<'_>) {
        let Some(object) = self.expect_object(
            value,
            path,
            "a subagent ref object ({trajectory_id} or {trajectory_path})",
        ) else {
            return;
        };
        let mut trajectory_id = None;
        for (key, value) in object {
            if value.is_null() && ObjectType::SubagentTrajectoryRef.has_field(key) {
                continue;
            }
            let here = path.key(key);
            match key.as_str() {
                "session_id" | "trajectory_path" => {
                    self.string(value, &here);
                }
                "trajectory_id" => {
                    self.field_feature(ObjectType::SubagentTrajectoryRef, "trajectory_id", &here);
                    trajectory_id = self.string(value, &here);
                }
                "extra" => {
                    self.object(value, &here);
                }
                _ => self.unknown(&here, key, ObjectType::SubagentTrajectoryRef.fields(), None),
            }
        }
        let present = |key: &str| object.get(key).is_some_and(|value| !value.is_null());
        if !present("session_id") {
            let kind = ChangeKind::NoLongerRequired {
                object: ObjectType::SubagentTrajectoryRef,
                field: "session_id",
            };
            self.feature(kind, path);
        }
        if !present("trajectory_id") && !present("trajectory_path") {
            let session = match field_table::change(ChangeKind::RefNamesTrajectory) {
                Some(change) if present("session_id") => format!(
                    " (a session_id alone stopped being a valid ref in {}: it never said where \
                     the subagent is)",
                    change.since
                ),
                _ => String::new(),
            };
            self.error(
                Rule::SubagentRef,
                path,
                format!("subagent ref has neither trajectory_id nor trajectory_path{session}"),
            );
        }
        if present("trajectory_path") {
            self.unseen_work = true;
        }
        if let Some(trajectory_id) = trajectory_id {
            if !present("trajectory_path") {
                self.refs.push(PendingRef {
                    pointer: path.key("trajectory_id").render(),
                    trajectory_id,
                });
            }
        }
    }

    /// `message` or a result's `content`: a string or an array of content parts.
    fn content(&mut self, value: &Value, path: &Path<'_>) {
        match value {
            Value::String(_) if self.sentinel(value).is_none() => {}
            Value::Array(parts) => {
                self.feature(ChangeKind::Object(ObjectType::ContentPart), path);
                for (part_idx, part) in parts.iter().enumerate() {
                    self.part(part, &path.index(part_idx));
                }
            }
            Value::Object(_) => self.error(
                Rule::Type,
                path,
                "expected a string or an array of content parts, found an object: structured \
                 tool output must be serialised to text (e.g. with json.dumps) or kept in `extra`"
                    .to_owned(),
            ),
            other => {
                if self.sentinel(other).is_some() && !self.harbor() {
                    return; // reported as non-finite-number
                }
                self.error(
                    Rule::Type,
                    path,
                    format!(
                        "expected a string or an array of content parts, found {}",
                        self.describe(other)
                    ),
                );
            }
        }
    }

    fn part(&mut self, value: &Value, path: &Path<'_>) {
        let Some(object) = self.expect_object(
            value,
            path,
            "a content part object ({type, text} or {type, source})",
        ) else {
            return;
        };
        for (key, value) in object {
            if value.is_null() && ObjectType::ContentPart.has_field(key) {
                continue;
            }
            let here = path.key(key);
            match key.as_str() {
                "type" | "text" => {
                    self.string(value, &here);
                }
                "source" => {} // checked below, once the type is known
                _ => self.unknown(&here, key, ObjectType::ContentPart.fields(), None),
            }
        }
        let present = |key: &str| object.get(key).is_some_and(|value| !value.is_null());
        let part_type = match object.get("type") {
            None | Some(Value::Null) => {
                self.missing(object, path, "type", "\"text\", \"image\" or \"audio\"");
                return;
            }
            Some(Value::String(part_type)) => part_type.as_str(),
            Some(_) => return, // a type error, reported above
        };
        let kind = match part_type {
            "text" => {
                if !present("text") {
                    self.error(
                        Rule::ContentPart,
                        path,
                        "a text part needs `text` (a string, \"\" is fine)".to_owned(),
                    );
                }
                if present("source") {
                    self.error(
                        Rule::ContentPart,
                        &path.key("source"),
                        "a text part must not have a `source`".to_owned(),
                    );
                }
                return;
            }
            "image" => Kind::Image,
            "audio" => {
                self.feature(ChangeKind::ContentPartType("audio"), path);
                Kind::Audio
            }
            other => {
                let hint = match other {
                    "image_url" | "input_image" => {
                        " (OpenAI-style image parts must become {\"type\": \"image\", \"source\": {media_type, path}})"
                    }
                    "input_audio" => {
                        " (OpenAI-style audio parts must become {\"type\": \"audio\", \"source\": {media_type, path}})"
                    }
                    _ => "",
                };
                self.error(
                    Rule::Enum,
                    &path.key("type"),
                    format!("expected \"text\", \"image\" or \"audio\", found {other:?}{hint}"),
                );
                return;
            }
        };
        if present("text") {
            self.error(
                Rule::ContentPart,
                &path.key("text"),
                format!(
                    "an {part_type} part must not have `text`; put text in a separate text part"
                ),
            );
        }
        match object.get("source") {
            None | Some(Value::Null) => self.error(
                Rule::ContentPart,
                path,
                format!("an {part_type} part needs a `source` ({{media_type, path}})"),
            ),
            Some(source) => self.media_source(source, &path.key("source"), kind),
        }
    }

    fn media_source(&mut self, value: &Value, path: &Path<'_>, kind: Kind) {
        let Some(object) = self.expect_object(value, path, "a source object ({media_type, path})")
        else {
            return;
        };
        let media_type = object.get("media_type").and_then(Value::as_str);
        let looks_audio =
            media_type.is_some_and(|media| media.trim().to_lowercase().starts_with("audio/"));
        let looks_image =
            media_type.is_some_and(|media| media.trim().to_lowercase().starts_with("image/"));
        match kind {
            Kind::Image if looks_audio || object.contains_key("duration_sec") && !looks_image => {
                self.error(
                    Rule::ContentPart,
                    path,
                    "an image part's source is an audio source; use \"type\": \"audio\" for audio"
                        .to_owned(),
                );
                return;
            }
            Kind::Audio if looks_image => {
                self.error(
                    Rule::ContentPart,
                    path,
                    "an audio part's source is an image source; use \"type\": \"image\" for images"
                        .to_owned(),
                );
                return;
            }
            _ => {}
        }
        let fields = match kind {
            Kind::Image => ObjectType::ImageSource.fields(),
            Kind::Audio => ObjectType::AudioSource.fields(),
        };
        for (key, value) in object {
            if value.is_null() && fields.contains(&key.as_str()) {
                continue;
            }
            let here = path.key(key);
            match (key.as_str(), kind) {
                ("media_type", _) => {
                    let Some(media) = self.string(value, &here) else { continue };
                    self.media_type(media, &here, kind);
                }
                ("path", _) => {
                    self.string(value, &here);
                }
                ("duration_sec", Kind::Audio) => {
                    if let Some(duration) = self.float(value, &here) {
                        if duration.is_nan() || duration < 0.0 {
                            self.error(
                                Rule::Range,
                                &here,
                                format!("expected a duration ≥ 0 seconds, found {duration}"),
                            );
                        }
                    }
                }
                ("duration_sec", Kind::Image) => {
                    self.unknown(&here, key, fields, Some("duration_sec belongs to audio sources"))
                }
                _ => self.unknown(&here, key, fields, None),
            }
        }
        self.require(
            object,
            path,
            "media_type",
            "a media type such as \"image/png\" or \"audio/wav\"",
        );
        self.require(object, path, "path", "a path or URL of the media file");
    }

    fn media_type(&mut self, media: &str, path: &Path<'_>, kind: Kind) {
        match kind {
            Kind::Image => {
                if IMAGE_MEDIA_TYPES.contains(&media) {
                    return;
                }
                let hint = match media.to_lowercase().as_str() {
                    "image/jpg" => " (the registered name is \"image/jpeg\")",
                    lower if IMAGE_MEDIA_TYPES.contains(&lower) => {
                        " (image media types are case-sensitive)"
                    }
                    _ => "",
                };
                self.error(
                    Rule::MediaType,
                    path,
                    format!(
                        "expected \"image/jpeg\", \"image/png\", \"image/gif\" or \"image/webp\", \
                         found {media:?}{hint}"
                    ),
                );
            }
            Kind::Audio => {
                if normalize_audio_media_type(media).is_some() {
                    return;
                }
                self.error(
                    Rule::MediaType,
                    path,
                    format!(
                        "expected an audio media type ({} or a common alias such as audio/mp3), \
                         found {media:?}",
                        AUDIO_MEDIA_TYPES.join(", ")
                    ),
                );
            }
        }
    }

    fn metrics(&mut self, value: &Value, path: &Path<'_>) -> Sums {
        let mut sums = Sums::default();
        let Some(object) = self.expect_object(value, path, "a metrics object") else {
            return sums;
        };
        let mut prompt_ids = None;
        let mut completion_ids = None;
        let mut logprobs = None;
        for (key, value) in object {
            if value.is_null() && ObjectType::Metrics.has_field(key) {
                continue;
            }
            let here = path.key(key);
            match key.as_str() {
                "prompt_tokens" => sums.prompt = self.integer(value, &here),
                "completion_tokens" => sums.completion = self.integer(value, &here),
                "cached_tokens" => sums.cached = self.integer(value, &here),
                "cost_usd" => sums.cost = self.float(value, &here),
                "prompt_token_ids" => {
                    self.field_feature(ObjectType::Metrics, "prompt_token_ids", &here);
                    prompt_ids = self.scalar_array(value, &here, Scalar::Integer);
                }
                "completion_token_ids" => {
                    self.field_feature(ObjectType::Metrics, "completion_token_ids", &here);
                    completion_ids = self.scalar_array(value, &here, Scalar::Integer);
                }
                "logprobs" => logprobs = self.scalar_array(value, &here, Scalar::Float),
                "extra" => {
                    self.object(value, &here);
                }
                _ => self.unknown(&here, key, ObjectType::Metrics.fields(), metrics_hint(key)),
            }
        }
        if let (Some(cached), Some(prompt)) = (sums.cached, sums.prompt) {
            if cached > prompt {
                self.warn(
                    Rule::CachedTokens,
                    &path.key("cached_tokens"),
                    format!(
                        "cached_tokens ({cached}) exceeds prompt_tokens ({prompt}); prompt_tokens \
                         counts every input token, cached ones included"
                    ),
                );
            }
        }
        let counts = [
            ("prompt_token_ids", prompt_ids, "prompt_tokens", sums.prompt),
            ("completion_token_ids", completion_ids, "completion_tokens", sums.completion),
            ("logprobs", logprobs, "completion_tokens", sums.completion),
        ];
        for (array_key, length, count_key, count) in counts {
            let (Some(length), Some(count)) = (length, count) else { continue };
            if length as i128 != count {
                self.warn(
                    Rule::TokenCount,
                    &path.key(array_key),
                    format!("{array_key} has {length} elements, but {count_key} is {count}"),
                );
            }
        }
        sums
    }

    fn final_metrics(&mut self, value: &Value, path: &Path<'_>) -> Option<Totals> {
        let object = self.expect_object(value, path, "a final_metrics object")?;
        let mut totals = Totals::default();
        for (key, value) in object {
            if value.is_null() && ObjectType::FinalMetrics.has_field(key) {
                continue;
            }
            let here = path.key(key);
            match key.as_str() {
                "total_prompt_tokens" => totals.prompt = self.integer(value, &here),
                "total_completion_tokens" => totals.completion = self.integer(value, &here),
                "total_cached_tokens" => totals.cached = self.integer(value, &here),
                "total_cost_usd" => totals.cost = self.float(value, &here),
                "total_steps" => {
                    totals.steps = self.integer(value, &here);
                    if let Some(steps) = totals.steps.filter(|steps| *steps < 0) {
                        self.error(
                            Rule::Range,
                            &here,
                            format!("expected a count ≥ 0, found {steps}"),
                        );
                    }
                }
                "extra" => {
                    self.object(value, &here);
                }
                _ => self.unknown(&here, key, ObjectType::FinalMetrics.fields(), metrics_hint(key)),
            }
        }
        Some(totals)
    }

    fn reasoning_effort(&mut self, value: &Value, path: &Path<'_>) {
        match value {
            Value::String(_) | Value::Number(_) => {}
            Value::Bool(flag) => self.lax(
                Rule::Type,
                path,
                format!(
                    "expected a string such as \"low\" or a number, found {flag}; Python's bool \
                     is an int, so Harbor reads it as {}",
                    if *flag { "1.0" } else { "0.0" }
                ),
            ),
            other => self.error(
                Rule::Type,
                path,
                format!("expected a string such as \"low\" or a number, found {}", describe(other)),
            ),
        }
    }

    // ----- missing and unknown fields ----------------------------------------------------------

    fn require(&mut self, object: &Map<String, Value>, path: &Path<'_>, key: &str, expected: &str) {
        if object.get(key).is_none_or(Value::is_null) {
            self.missing(object, path, key, expected);
        }
    }

    fn missing(&mut self, object: &Map<String, Value>, path: &Path<'_>, key: &str, expected: &str) {
        match object.get(key) {
            Some(Value::Null) => self.error(
                Rule::Required,
                &path.key(key),
                format!("`{key}` is null: expected {expected} (null counts as missing)"),
            ),
            _ => self.error(
                Rule::Required,
                path,
                format!("missing required field `{key}`: expected {expected}"),
            ),
        }
    }

    fn unknown(&mut self, path: &Path<'_>, key: &str, known: &[&str], hint: Option<&str>) {
        let hint = hint.map_or(String::new(), |hint| format!(" ({hint})"));
        self.error(
            Rule::UnknownField,
            path,
            format!(
                "unknown field {}{hint}; expected one of: {}",
                shown_key(key),
                known.join(", ")
            ),
        );
    }

    // ----- typed values ------------------------------------------------------------------------

    fn describe(&self, value: &Value) -> String {
        match self.sentinel(value) {
            Some(literal) => format!("{literal} (a non-finite number)"),
            None => describe(value),
        }
    }

    /// A sentinel where something other than a float is expected: reported once in the strict
    /// profile (as non-finite-number, by the reader), and as a type error under Harbor.
    fn non_finite_elsewhere(&mut self, literal: &str, path: &Path<'_>, expected: &str) {
        if self.harbor() {
            self.error(
                Rule::Type,
                path,
                format!("expected {expected}, found {literal}; Harbor accepts non-finite numbers only where a float is expected"),
            );
        }
    }

    fn string<'a>(&mut self, value: &'a Value, path: &Path<'_>) -> Option<&'a str> {
        match value {
            Value::String(text) => match self.sentinel(value) {
                Some(literal) => {
                    self.non_finite_elsewhere(literal, path, "a string");
                    None
                }
                None => Some(text),
            },
            other => {
                self.error(
                    Rule::Type,
                    path,
                    format!("expected a string, found {}", describe(other)),
                );
                None
            }
        }
    }

    fn object<'a>(&mut self, value: &'a Value, path: &Path<'_>) -> Option<&'a Map<String, Value>> {
        self.expect_object(value, path, "an object")
    }

    fn expect_object<'a>(
        &mut self,
        value: &'a Value,
        path: &Path<'_>,
        expected: &str,
    ) -> Option<&'a Map<String, Value>> {
        match value {
            Value::Object(object) => Some(object),
            other => {
                if let Some(literal) = self.sentinel(other) {
                    self.non_finite_elsewhere(literal, path, expected);
                    return None;
                }
                self.error(
                    Rule::Type,
                    path,
                    format!("expected {expected}, found {}", describe(other)),
                );
                None
            }
        }
    }

    fn array<'a>(&mut self, value: &'a Value, path: &Path<'_>) -> Option<&'a Vec<Value>> {
        match value {
            Value::Array(elements) => Some(elements),
            other => {
                if let Some(literal) = self.sentinel(other) {
                    self.non_finite_elsewhere(literal, path, "an array");
                    return None;
                }
                self.error(
                    Rule::Type,
                    path,
                    format!("expected an array, found {}", describe(other)),
                );
                None
            }
        }
    }

    /// An integer; in the harbor profile also what Pydantic's lax mode turns into one.
    fn integer(&mut self, value: &Value, path: &Path<'_>) -> Option<i128> {
        self.integer_quiet(value, path, true)
    }

    fn integer_quiet(&mut self, value: &Value, path: &Path<'_>, report: bool) -> Option<i128> {
        let (coerced, habit) = match value {
            Value::Number(number) => {
                if let Some(int) = number.as_i64() {
                    return Some(i128::from(int));
                }
                if let Some(int) = number.as_u64() {
                    return Some(i128::from(int));
                }
                let float = number.as_f64().unwrap_or(f64::NAN);
                let whole = float.fract() == 0.0 && float.abs() < 9.223_372_036_854_776e18;
                let coerced = whole.then_some(float as i128);
                (
                    coerced,
                    format!(
                        "the float {number}; Python writes whole floats such as 2.0 when a count went through float arithmetic"
                    ),
                )
            }
            Value::String(text) => {
                if let Some(literal) = self.sentinel(value) {
                    if report {
                        self.non_finite_elsewhere(literal, path, "an integer");
                    }
                    return None;
                }
                (python_int(text), quoted_number_habit(text))
            }
            Value::Bool(flag) => (
                Some(i128::from(*flag)),
                format!("{flag}; Python's bool is an int subclass, JSON's is not"),
            ),
            other => {
                if report {
                    self.error(
                        Rule::Type,
                        path,
                        format!("expected an integer, found {}", describe(other)),
                    );
                }
                return None;
            }
        };
        if report {
            self.coercion(path, "an integer", coerced.map(|int| int.to_string()), &habit);
        }
        if self.harbor() { coerced } else { None }
    }

    /// A number; in the harbor profile also what Pydantic's lax mode turns into one.
    fn float(&mut self, value: &Value, path: &Path<'_>) -> Option<f64> {
        self.float_quiet(value, path, true)
    }

    fn float_quiet(&mut self, value: &Value, path: &Path<'_>, report: bool) -> Option<f64> {
        let (coerced, habit) = match value {
            Value::Number(number) => return number.as_f64(),
            Value::String(text) => {
                if let Some(literal) = self.sentinel(value) {
                    // Reported by the reader; Harbor takes it as a float.
                    let float = match literal {
                        "Infinity" => f64::INFINITY,
                        "-Infinity" => f64::NEG_INFINITY,
                        _ => f64::NAN,
                    };
                    return if self.harbor() { Some(float) } else { None };
                }
                (python_float(text), quoted_number_habit(text))
            }
            Value::Bool(flag) => (
                Some(if *flag { 1.0 } else { 0.0 }),
                format!("{flag}; Python's bool is an int subclass, JSON's is not"),
            ),
            other => {
                if report {
                    self.error(
                        Rule::Type,
                        path,
                        format!("expected a number, found {}", describe(other)),
                    );
                }
                return None;
            }
        };
        if report {
            self.coercion(path, "a number", coerced.map(|float| float.to_string()), &habit);
        }
        if self.harbor() { coerced } else { None }
    }

    /// `true` or `false`; in the harbor profile also what Pydantic's lax mode reads as one.
    fn boolean(&mut self, value: &Value, path: &Path<'_>) -> Option<bool> {
        let (coerced, habit) = match value {
            Value::Bool(flag) => return Some(*flag),
            Value::Number(number) => {
                let coerced = match number.as_f64() {
                    Some(0.0) => Some(false),
                    Some(1.0) => Some(true),
                    _ => None,
                };
                (coerced, format!("the number {number}"))
            }
            Value::String(text) => {
                if let Some(literal) = self.sentinel(value) {
                    self.non_finite_elsewhere(literal, path, "true or false");
                    return None;
                }
                let coerced = match text.to_lowercase().as_str() {
                    "true" | "yes" | "on" | "t" | "y" | "1" => Some(true),
                    "false" | "no" | "off" | "f" | "n" | "0" => Some(false),
                    _ => None,
                };
                (
                    coerced,
                    format!(
                        "the string {}; Pydantic reads yes/no/on/off/t/f/y/n/1/0 as booleans, JSON has only true and false",
                        quote(text)
                    ),
                )
            }
            other => {
                self.error(
                    Rule::Type,
                    path,
                    format!("expected true or false, found {}", describe(other)),
                );
                return None;
            }
        };
        self.coercion(path, "true or false", coerced.map(|flag| flag.to_string()), &habit);
        if self.harbor() { coerced } else { None }
    }

    /// Reports a value of another JSON type that Harbor may coerce (`coerced`) or not.
    fn coercion(&mut self, path: &Path<'_>, expected: &str, coerced: Option<String>, habit: &str) {
        match (self.profile, coerced) {
            (Profile::Strict, Some(coerced)) => self.error(
                Rule::Type,
                path,
                format!("expected {expected}, found {habit} (Harbor would coerce it to {coerced})"),
            ),
            (Profile::Harbor, Some(coerced)) => self.warn(
                Rule::Type,
                path,
                format!("expected {expected}, found {habit}; Harbor coerces it to {coerced}"),
            ),
            (_, None) => {
                self.error(Rule::Type, path, format!("expected {expected}, found {habit}"))
            }
        }
    }

    /// An array of integers or numbers; returns its length. Problems with elements are reported
    /// for the first few, then summarised, so a long array cannot flood the report.
    fn scalar_array(&mut self, value: &Value, path: &Path<'_>, scalar: Scalar) -> Option<usize> {
        let elements = self.array(value, path)?;
        let mut reported = 0;
        let mut more = 0;
        for (element_idx, element) in elements.iter().enumerate() {
            let here = path.index(element_idx);
            let before = self.findings.len();
            let report = reported < MAX_ELEMENT_FINDINGS;
            match (element, scalar) {
                (Value::Null, _) => {
                    if report {
                        self.error(
                            Rule::Type,
                            &here,
                            format!("expected {}, found null", scalar.expected()),
                        );
                    }
                }
                (_, Scalar::Integer) => {
                    self.integer_quiet(element, &here, report);
                }
                (_, Scalar::Float) => {
                    self.float_quiet(element, &here, report);
                }
            }
            if self.findings.len() > before {
                reported += 1;
            } else if !report && !self.element_fine(element, scalar) {
                more += 1;
            }
        }
        if more > 0 {
            let severity = self.findings.last().map_or(Severity::Error, |finding| finding.severity);
            self.report(
                Rule::Type,
                severity,
                path,
                format!(
                    "… and {more} more elements with problems like the ones above ({} expected)",
                    scalar.expected()
                ),
            );
        }
        Some(elements.len())
    }

    /// Whether an element would have produced no finding (used when findings are capped).
    fn element_fine(&self, element: &Value, scalar: Scalar) -> bool {
        match (element, scalar) {
            (Value::Number(number), Scalar::Integer) => number.is_i64() || number.is_u64(),
            (Value::Number(_), Scalar::Float) => true,
            (Value::String(_), Scalar::Float) => self.harbor() && self.sentinel(element).is_some(),
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Scalar {
    Integer,
    Float,
}

impl Scalar {
    fn expected(self) -> &'static str {
        match self {
            Scalar::Integer => "an integer",
            Scalar::Float => "a number",
        }
    }
}

/// The sums a trajectory's `final_metrics` are compared with.
#[derive(Debug)]
struct TotalsBasis {
    /// Over its own agent steps.
    own: Sums,
    /// Over its own agent steps and those of its embedded subagents, recursively.
    all: Sums,
    unseen_work: bool,
}

#[derive(Debug, Default)]
struct Totals {
    prompt: Option<i128>,
    completion: Option<i128>,
    cached: Option<i128>,
    cost: Option<f64>,
    steps: Option<i128>,
}

/// The canonical audio media type for `media`, after the aliases the references accept.
fn normalize_audio_media_type(media: &str) -> Option<&'static str> {
    let lower = media.trim().to_lowercase();
    let subtype = lower.strip_prefix("audio/")?;
    let canonical = match subtype {
        "mp3" | "mpga" | "x-mpeg" | "mpeg" => "audio/mpeg",
        "x-wav" | "wave" | "vnd.wave" | "wav" => "audio/wav",
        "x-m4a" | "m4a" | "mp4" => "audio/mp4",
        "x-aac" | "aac" => "audio/aac",
        "x-flac" | "flac" => "audio/flac",
        "x-aiff" | "aiff" => "audio/aiff",
        "ogg" => "audio/ogg",
        "webm" => "audio/webm",
        _ => return None,
    };
    Some(canonical)
}

/// Names the habit behind a number written as a string.
fn quoted_number_habit(text: &str) -> String {
    format!(
        "the string {}; numbers in quotes are text in JSON (Python writes them when code passes \
         str(n) or an f-string instead of the number)",
        quote(text)
    )
}

/// What Pydantic's lax mode reads from a string as an integer: surrounding whitespace, a sign,
/// digits with single underscores between them, and an optional all-zero fraction (`"2.0"`).
fn python_int(text: &str) -> Option<i128> {
    let trimmed = text.trim();
    let (negative, unsigned) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (unsigned, None),
    };
    if let Some(fraction) = fraction {
        if fraction.is_empty() || !fraction.bytes().all(|byte| byte == b'0') {
            return None;
        }
    }
    let digits = python_digits(whole)?;
    let magnitude: i128 = digits.parse().ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

/// `text` without its underscores, when they only sit between ASCII digits.
fn python_digits(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || !bytes[0].is_ascii_digit() || !bytes[bytes.len() - 1].is_ascii_digit() {
        return None;
    }
    let mut digits = String::with_capacity(text.len());
    for (index, &byte) in bytes.iter().enumerate() {
        match byte {
            b'0'..=b'9' => digits.push(char::from(byte)),
            b'_' if bytes[index - 1].is_ascii_digit() && bytes[index + 1].is_ascii_digit() => {}
            _ => return None,
        }
    }
    Some(digits)
}

/// What Python's `float()` (and Pydantic's lax mode) reads from a string.
fn python_float(text: &str) -> Option<f64> {
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if lower.len() - unsigned.len() > 1 {
        return None;
    }
    if ["nan", "inf", "infinity"].contains(&unsigned) {
        return Some(if unsigned == "nan" { f64::NAN } else { f64::INFINITY });
    }
    if !unsigned
        .bytes()
        .all(|byte| byte.is_ascii_digit() || matches!(byte, b'.' | b'e' | b'+' | b'-' | b'_'))
    {
        return None;
    }
    let cleaned: String = if lower.contains('_') {
        let bytes = lower.as_bytes();
        let ok = bytes.iter().enumerate().all(|(index, &byte)| {
            byte != b'_'
                || (index > 0
                    && index + 1 < bytes.len()
                    && bytes[index - 1].is_ascii_digit()
                    && bytes[index + 1].is_ascii_digit())
        });
        if !ok {
            return None;
        }
        lower.replace('_', "")
    } else {
        lower
    };
    cleaned.parse().ok()
}

/// A key in backquotes, or quoted with escapes when it holds control characters (a message
/// stays on one line).
fn shown_key(key: &str) -> String {
    if key.chars().any(char::is_control) { format!("{key:?}") } else { format!("`{key}`") }
}

fn quote(text: &str) -> String {
    let mut shown: String = text.chars().take(40).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    format!("{shown:?}")
}

/// A short description of a JSON value for messages: its type, and the value when short.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => format!("the string {}", quote(text)),
        Value::Array(elements) => format!("an array of {} elements", elements.len()),
        Value::Object(_) => "an object".to_owned(),
    }
}

fn trajectory_hint(key: &str) -> Option<&'static str> {
    match key {
        "version" | "schemaVersion" => Some("the label lives in `schema_version`"),
        "metadata" | "meta" => Some("put producer-specific data in `extra`"),
        _ => None,
    }
}

fn agent_hint(key: &str) -> Option<&'static str> {
    match key {
        "model" => Some("did you mean `model_name`?"),
        "provider" => Some("put provider details in `agent.extra`"),
        "tools" => Some("did you mean `tool_definitions`?"),
        _ => None,
    }
}

fn step_hint(key: &str) -> Option<&'static str> {
    match key {
        "role" => Some("ATIF uses `source` (system, user or agent)"),
        "content" | "text" => Some("a step's text lives in `message`"),
        "id" => Some("did you mean `step_id`?"),
        "observations" | "tool_results" => Some("tool results live in `observation.results`"),
        "usage" => Some("token counts live in `metrics`"),
        _ => None,
    }
}

fn tool_call_hint(key: &str) -> Option<&'static str> {
    match key {
        "id" => Some("OpenAI-style tool call: ATIF names it `tool_call_id`"),
        "name" => Some("OpenAI-style tool call: ATIF names it `function_name`"),
        "function" | "type" => Some(
            "OpenAI-style tool call: ATIF flattens it to {tool_call_id, function_name, arguments}",
        ),
        "input" | "args" | "parameters" => Some("did you mean `arguments`?"),
        _ => None,
    }
}

fn metrics_hint(key: &str) -> Option<&'static str> {
    match key {
        "reasoning_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens" => {
            Some("provider-specific counts belong in `extra`")
        }
        "input_tokens" => Some("ATIF calls it `prompt_tokens`"),
        "output_tokens" => Some("ATIF calls it `completion_tokens`"),
        "cost" => Some("did you mean `cost_usd`?"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lax_integers_follow_pydantic() {
        let cases: &[(&str, Option<i128>)] = &[
            ("7", Some(7)),
            (" 2", Some(2)),
            ("2.0", Some(2)),
            ("2.00", Some(2)),
            ("+7", Some(7)),
            ("-7", Some(-7)),
            ("1_000", Some(1000)),
            ("1_000.0", Some(1000)),
            ("\u{a0}7", Some(7)),
            ("2.5", None),
            ("0x2", None),
            ("1e3", None),
            ("2.", None),
            (".0", None),
            ("", None),
            ("1__0", None),
            ("_1", None),
            ("1_", None),
            ("- 7", None),
            ("+-7", None),
            ("\u{1c}7", None),
        ];
        for &(text, expected) in cases {
            assert_eq!(python_int(text), expected, "{text:?}");
        }
    }

    #[test]
    fn lax_floats_follow_python() {
        for text in [
            "0.1", "1e-3", "nan", "inf", "-inf", " 1.5 ", "NaN", "Infinity", "1_0", "+1", ".5",
            "5.",
        ] {
            assert!(python_float(text).is_some(), "{text:?}");
        }
        for text in ["0x1", "", "abc", "1.5e", "--1", "1__0"] {
            assert!(python_float(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn audio_aliases_are_normalised() {
        assert_eq!(normalize_audio_media_type(" Audio/MP3 "), Some("audio/mpeg"));
        assert_eq!(normalize_audio_media_type("audio/x-wav"), Some("audio/wav"));
        assert_eq!(normalize_audio_media_type("audio/m4a"), Some("audio/mp4"));
        assert_eq!(normalize_audio_media_type("audio/opus"), None);
        assert_eq!(normalize_audio_media_type("image/png"), None);
    }
}
