//! Match modes: whether a run does what its golden requires, under a chosen looseness of the
//! tool sequence, the arguments and the counts; fewer turns never pass.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

/// How the actual run's tool calls must relate to the golden's. Calls within one step always
/// compare as a multiset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum SequenceMatch {
    /// The same calls in the same steps, in the same order (the default).
    #[default]
    Exact,
    /// The golden's calls appear in that order; other calls may come between them.
    InOrder,
    /// The same multiset of calls, in any order.
    AnyOrder,
    /// Every actual call is one of the golden's.
    Subset,
    /// Every golden call is among the actual ones.
    Superset,
}

impl SequenceMatch {
    /// The mode named `exact`, `in-order`, `any-order`, `subset` or `superset`; `None` for
    /// another name.
    pub fn from_name(name: &str) -> Option<SequenceMatch> {
        [
            SequenceMatch::Exact,
            SequenceMatch::InOrder,
            SequenceMatch::AnyOrder,
            SequenceMatch::Subset,
            SequenceMatch::Superset,
        ]
        .into_iter()
        .find(|mode| mode.as_str() == name)
    }

    /// The mode's name: `exact`, `in-order`, `any-order`, `subset`, `superset`.
    pub fn as_str(self) -> &'static str {
        match self {
            SequenceMatch::Exact => "exact",
            SequenceMatch::InOrder => "in-order",
            SequenceMatch::AnyOrder => "any-order",
            SequenceMatch::Subset => "subset",
            SequenceMatch::Superset => "superset",
        }
    }
}

/// How two calls' arguments must relate for the calls to be the same call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ArgumentMatch {
    /// Equal arguments (numbers compare numerically); the default.
    #[default]
    Exact,
    /// Arguments are not compared.
    Ignore,
    /// Every actual argument is in the golden's, with an equal value.
    Subset,
    /// Every golden argument is in the actual's, with an equal value.
    Superset,
    /// Only the values at these JSON Pointers (`/path`, `/options/depth`) are compared.
    Paths(Vec<String>),
}

impl ArgumentMatch {
    /// The mode named `exact`, `ignore`, `subset`, `superset` or `paths:/a,/b` (the JSON
    /// Pointers to compare, comma-separated); `None` for another name.
    pub fn from_name(name: &str) -> Option<ArgumentMatch> {
        Some(match name {
            "exact" => ArgumentMatch::Exact,
            "ignore" => ArgumentMatch::Ignore,
            "subset" => ArgumentMatch::Subset,
            "superset" => ArgumentMatch::Superset,
            _ => ArgumentMatch::Paths(
                name.strip_prefix("paths:")?.split(',').map(str::to_owned).collect(),
            ),
        })
    }
}

/// A band a count may move within: `absolute` units or `relative` of the golden count,
/// whichever is wider. The default band is 0: the counts must be equal.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Band {
    /// The absolute difference allowed.
    pub absolute: u64,
    /// The difference allowed relative to the golden count (`0.1` = 10%).
    pub relative: f64,
}

impl Band {
    fn allows(self, golden: u64, actual: u64) -> bool {
        let width = (self.absolute as f64).max(self.relative.max(0.0) * golden as f64);
        (actual as f64 - golden as f64).abs() <= width
    }
}

/// The looseness of a [`match_runs`]: the sequence mode, the arguments' mode (by default and
/// per tool), the numeric tolerance, and a band per count. Defaults: all exact.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MatchOptions {
    sequence: SequenceMatch,
    arguments: ArgumentMatch,
    per_tool: BTreeMap<String, ArgumentMatch>,
    number_tolerance: f64,
    steps: Band,
    llm_calls: Band,
    tokens: Band,
}

impl MatchOptions {
    /// Sets how the tool sequence is compared.
    pub fn set_sequence(&mut self, sequence: SequenceMatch) -> &mut MatchOptions {
        self.sequence = sequence;
        self
    }

    /// Sets how arguments are compared for tools without a mode of their own.
    pub fn set_arguments(&mut self, arguments: ArgumentMatch) -> &mut MatchOptions {
        self.arguments = arguments;
        self
    }

    /// Sets how the arguments of the tool `name` are compared.
    pub fn set_tool_arguments(
        &mut self,
        name: &str,
        arguments: ArgumentMatch,
    ) -> &mut MatchOptions {
        self.per_tool.insert(name.to_owned(), arguments);
        self
    }

    /// Sets the absolute difference two numbers may have and still be equal (NaN and negative
    /// values count as 0).
    pub fn set_number_tolerance(&mut self, tolerance: f64) -> &mut MatchOptions {
        self.number_tolerance = if tolerance > 0.0 { tolerance } else { 0.0 };
        self
    }

    /// Sets the band of the step count, the LLM calls and the tokens (prompt and completion).
    pub fn set_bands(&mut self, steps: Band, llm_calls: Band, tokens: Band) -> &mut MatchOptions {
        (self.steps, self.llm_calls, self.tokens) = (steps, llm_calls, tokens);
        self
    }

    /// How the tool sequence is compared.
    pub fn sequence(&self) -> SequenceMatch {
        self.sequence
    }

    fn arguments_of(&self, tool: &str) -> &ArgumentMatch {
        self.per_tool.get(tool).unwrap_or(&self.arguments)
    }
}

/// What [`match_runs`] found: whether the run passes, the differences the modes allowed, and
/// those they did not.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MatchOutcome {
    /// Differences the modes allow, each saying which mode allows it.
    pub allowed: Vec<String>,
    /// Differences the modes forbid; the run passes when there is none.
    pub failures: Vec<String>,
}

impl MatchOutcome {
    /// Whether the run passes: no difference the modes forbid.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

impl fmt::Display for MatchOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.passed() {
            true => writeln!(f, "the run matches its golden under the match modes")?,
            false => writeln!(
                f,
                "the run does not match its golden ({} difference(s)):",
                self.failures.len()
            )?,
        }
        for failure in &self.failures {
            writeln!(f, "  {failure}")?;
        }
        for allowed in &self.allowed {
            writeln!(f, "  allowed: {allowed}")?;
        }
        Ok(())
    }
}

/// One tool call: its name and arguments, and the step it is in.
#[derive(Debug, Clone)]
struct Call<'a> {
    step: usize,
    name: &'a str,
    arguments: &'a Value,
}

/// Compares an actual normalised run with its normalised golden under `options`: the turn
/// count first (an actual run with fewer agent turns than the golden never passes, whatever
/// the modes), then what no mode loosens (a run that crashed where its golden did not, a tool
/// that failed more often than in the golden), then the counts within their bands, then the
/// tool calls under the sequence and argument modes.
pub fn match_runs(golden: &Value, actual: &Value, options: &MatchOptions) -> MatchOutcome {
    let mut outcome = MatchOutcome::default();
    let (g_shape, a_shape) = (crate::shape(golden), crate::shape(actual));
    let turns = |shape: &crate::Shape| shape.sources.iter().filter(|s| *s == "agent").count();
    let (g_turns, a_turns) = (turns(&g_shape), turns(&a_shape));
    if a_turns < g_turns {
        outcome.failures.push(format!(
            "fewer turns: {a_turns} agent turn(s), the golden has {g_turns}; a run that does less than its golden never passes (missing {})",
            g_turns - a_turns
        ));
    }
    failures_no_mode_allows(&g_shape, &a_shape, &mut outcome);
    let counts = [
        ("step_count", g_shape.step_count, a_shape.step_count, options.steps),
        ("llm_calls", g_shape.llm_calls, a_shape.llm_calls, options.llm_calls),
    ];
    // A mode that allows extra calls allows the turns they take.
    let more_allowed = matches!(options.sequence, SequenceMatch::InOrder | SequenceMatch::Superset);
    for (field, g, a, band) in counts {
        if more_allowed && a > g {
            let mode = options.sequence.as_str();
            outcome.allowed.push(format!("{field}: {g} -> {a}, more turns ({mode})"));
        } else if g != a && !band.allows(g, a) {
            outcome.failures.push(format!("{field}: {g} -> {a}, outside its band"));
        } else if g != a {
            outcome.allowed.push(format!("{field}: {g} -> {a}, within its band"));
        }
    }
    // A count nobody measured is in no band: known on one side only, the runs differ.
    let tokens = [
        ("prompt_tokens", g_shape.prompt_tokens, a_shape.prompt_tokens),
        ("completion_tokens", g_shape.completion_tokens, a_shape.completion_tokens),
    ];
    for (field, g, a) in tokens {
        match (g, a) {
            (Some(g), Some(a)) if g != a && !options.tokens.allows(g, a) => {
                outcome.failures.push(format!("{field}: {g} -> {a}, outside its band"));
            }
            (Some(g), Some(a)) if g != a => {
                outcome.allowed.push(format!("{field}: {g} -> {a}, within its band"));
            }
            (Some(_), Some(_)) | (None, None) => {}
            (g, a) => outcome.failures.push(format!(
                "{field}: {} -> {}, known on one side only",
                token_text(g),
                token_text(a)
            )),
        }
    }
    let (g_calls, a_calls) = (calls(golden), calls(actual));
    match_sequence(&g_calls, &a_calls, options, &mut outcome);
    outcome
}

/// What fails in every mode: the run crashed and its golden did not; a tool failed more often
/// than in the golden (by name: a new failure is behaviour, whatever the calls' order). Fewer
/// failures, or a crash fixed, are allowed and listed.
fn failures_no_mode_allows(
    golden: &crate::Shape,
    actual: &crate::Shape,
    outcome: &mut MatchOutcome,
) {
    match (golden.crashed, actual.crashed) {
        (false, true) => outcome
            .failures
            .push("crashed: the run crashed and its golden did not (no mode allows it)".to_owned()),
        (true, false) => {
            outcome.allowed.push("crashed: the golden crashed, the run did not".to_owned())
        }
        _ => {}
    }
    let count = |errors: &[String]| {
        let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
        for name in errors {
            *by_name.entry(name.clone()).or_default() += 1;
        }
        by_name
    };
    let (g_errors, a_errors) = (count(&golden.tool_errors), count(&actual.tool_errors));
    for (name, &a) in &a_errors {
        let g = g_errors.get(name).copied().unwrap_or(0);
        if a > g {
            outcome.failures.push(format!(
                "tool_errors: {name} failed {a} time(s), {g} in the golden (no mode allows a new failure)"
            ));
        }
    }
    for (name, &g) in &g_errors {
        let a = a_errors.get(name).copied().unwrap_or(0);
        if a < g {
            outcome
                .allowed
                .push(format!("tool_errors: {name} failed {a} time(s), {g} in the golden"));
        }
    }
}

/// A token count as the reports write it: the number, or `unknown`.
fn token_text(count: Option<u64>) -> String {
    count.map_or_else(|| "unknown".to_owned(), |count| count.to_string())
}

/// Every root tool call in step order; within a step, sorted by name (a step's calls are a
/// multiset).
fn calls(run: &Value) -> Vec<Call<'_>> {
    let steps = run.get("steps").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let mut all = Vec::new();
    for (step, value) in steps.iter().enumerate() {
        let in_step = value.get("tool_calls").and_then(Value::as_array).into_iter().flatten();
        let mut here: Vec<Call<'_>> = in_step
            .filter_map(|call| {
                let name = call.get("function_name")?.as_str()?;
                Some(Call { step, name, arguments: call.get("arguments").unwrap_or(&Value::Null) })
            })
            .collect();
        here.sort_by(|a, b| a.name.cmp(b.name));
        all.extend(here);
    }
    all
}

/// The tool-call part of [`match_runs`].
fn match_sequence(
    golden: &[Call<'_>],
    actual: &[Call<'_>],
    options: &MatchOptions,
    outcome: &mut MatchOutcome,
) {
    let same = |g: &Call<'_>, a: &Call<'_>| {
        g.name == a.name
            && arguments_match(
                g.arguments,
                a.arguments,
                options.arguments_of(g.name),
                options.number_tolerance,
            )
    };
    let names = |calls: &[Call<'_>]| calls.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
    let mode = options.sequence;
    // Which golden calls have a partner among the actual ones, and which actual calls do.
    let (unmatched_golden, unmatched_actual) = match mode {
        SequenceMatch::InOrder => in_order(golden, actual, &same),
        _ => as_multisets(golden, actual, &same),
    };
    let missing: Vec<&str> = unmatched_golden.iter().map(|&i| golden[i].name).collect();
    let extra: Vec<&str> = unmatched_actual.iter().map(|&i| actual[i].name).collect();
    let forbid_missing = mode != SequenceMatch::Subset;
    let forbid_extra =
        matches!(mode, SequenceMatch::Exact | SequenceMatch::AnyOrder | SequenceMatch::Subset);
    let mode_name = mode.as_str();
    if !missing.is_empty() {
        let text = format!("missing call(s): {} ({mode_name})", missing.join(", "));
        if forbid_missing { outcome.failures.push(text) } else { outcome.allowed.push(text) }
    }
    if !extra.is_empty() {
        let text = format!("extra call(s): {} ({mode_name})", extra.join(", "));
        if forbid_extra { outcome.failures.push(text) } else { outcome.allowed.push(text) }
    }
    if missing.is_empty() && extra.is_empty() {
        let order_of = |calls: &[Call<'_>]| {
            calls.iter().map(|c| (c.step, c.name.to_owned())).collect::<Vec<_>>()
        };
        let reordered = names(golden) != names(actual)
            || (mode == SequenceMatch::Exact && order_of(golden) != order_of(actual));
        match (reordered, mode) {
            (false, _) => {}
            (true, SequenceMatch::Exact) => outcome.failures.push(format!(
                "calls reordered: {} -> {} (exact)",
                names(golden),
                names(actual)
            )),
            (true, _) => outcome.allowed.push(format!(
                "calls reordered: {} -> {} ({mode_name})",
                names(golden),
                names(actual)
            )),
        }
    }
}

/// The golden calls without a partner and the actual calls without one, matching greedily as
/// multisets.
fn as_multisets(
    golden: &[Call<'_>],
    actual: &[Call<'_>],
    same: &dyn Fn(&Call<'_>, &Call<'_>) -> bool,
) -> (Vec<usize>, Vec<usize>) {
    let mut taken = vec![false; actual.len()];
    let mut unmatched_golden = Vec::new();
    for (g_idx, g) in golden.iter().enumerate() {
        match (0..actual.len()).find(|&a_idx| !taken[a_idx] && same(g, &actual[a_idx])) {
            Some(a_idx) => taken[a_idx] = true,
            None => unmatched_golden.push(g_idx),
        }
    }
    let unmatched_actual = (0..actual.len()).filter(|&a_idx| !taken[a_idx]).collect();
    (unmatched_golden, unmatched_actual)
}

/// As [`as_multisets`], but each golden call's partner must come after the previous one's.
fn in_order(
    golden: &[Call<'_>],
    actual: &[Call<'_>],
    same: &dyn Fn(&Call<'_>, &Call<'_>) -> bool,
) -> (Vec<usize>, Vec<usize>) {
    let mut taken = vec![false; actual.len()];
    let mut unmatched_golden = Vec::new();
    let mut from = 0;
    for (g_idx, g) in golden.iter().enumerate() {
        match (from..actual.len()).find(|&a_idx| same(g, &actual[a_idx])) {
            Some(a_idx) => {
                taken[a_idx] = true;
                from = a_idx + 1;
            }
            None => unmatched_golden.push(g_idx),
        }
    }
    let unmatched_actual = (0..actual.len()).filter(|&a_idx| !taken[a_idx]).collect();
    (unmatched_golden, unmatched_actual)
}

/// Whether `actual` arguments match `golden` ones under `mode`.
fn arguments_match(golden: &Value, actual: &Value, mode: &ArgumentMatch, tolerance: f64) -> bool {
    let contained = |small: &Value, big: &Value| match (small, big) {
        (Value::Object(small), Value::Object(big)) => small.iter().all(|(key, value)| {
            big.get(key).is_some_and(|other| values_equal(value, other, tolerance))
        }),
        _ => values_equal(small, big, tolerance),
    };
    match mode {
        ArgumentMatch::Exact => values_equal(golden, actual, tolerance),
        ArgumentMatch::Ignore => true,
        ArgumentMatch::Subset => contained(actual, golden),
        ArgumentMatch::Superset => contained(golden, actual),
        ArgumentMatch::Paths(paths) => {
            paths.iter().all(|path| match (golden.pointer(path), actual.pointer(path)) {
                (Some(g), Some(a)) => values_equal(g, a, tolerance),
                (None, None) => true,
                _ => false,
            })
        }
    }
}

/// JSON equality where numbers compare numerically (1 equals 1.0), within `tolerance`.
fn values_equal(golden: &Value, actual: &Value, tolerance: f64) -> bool {
    match (golden, actual) {
        (Value::Number(g), Value::Number(a)) => match (g.as_f64(), a.as_f64()) {
            (Some(g), Some(a)) => (g - a).abs() <= tolerance,
            _ => g == a,
        },
        (Value::Array(g), Value::Array(a)) => {
            g.len() == a.len() && g.iter().zip(a).all(|(g, a)| values_equal(g, a, tolerance))
        }
        (Value::Object(g), Value::Object(a)) => {
            g.len() == a.len()
                && g.iter()
                    .all(|(key, g)| a.get(key).is_some_and(|a| values_equal(g, a, tolerance)))
        }
        _ => golden == actual,
    }
}
