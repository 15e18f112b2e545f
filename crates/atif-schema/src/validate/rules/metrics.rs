//! Rules of token metrics: a step's `metrics`, the trajectory's `final_metrics`, and the check
//! that the totals are the sums of the steps.

use serde_json::{Map, Value};

use crate::field_table::ObjectType;
use crate::validate::Rule;
use crate::validate::rules::Walker;
use crate::validate::rules::pointer::Path;
use crate::validate::rules::values::Scalar;

/// Sums of the agent steps' metrics (a sum is `None` when no step has the field).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sums {
    prompt: Option<i128>,
    completion: Option<i128>,
    cached: Option<i128>,
    cost: Option<f64>,
}

impl Sums {
    pub(super) fn add(&mut self, other: &Sums) {
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

/// The totals of a `final_metrics` object.
#[derive(Debug, Default)]
pub(super) struct Totals {
    prompt: Option<i128>,
    completion: Option<i128>,
    cached: Option<i128>,
    cost: Option<f64>,
    steps: Option<i128>,
}

/// The sums a trajectory's `final_metrics` are compared with.
#[derive(Debug)]
pub(super) struct TotalsBasis {
    /// Over its own agent steps.
    pub(super) own: Sums,
    /// Over its own agent steps and those of its embedded subagents, recursively.
    pub(super) all: Sums,
    /// The trajectory points at work it does not contain, which can only add to its totals.
    pub(super) unseen_work: bool,
}

impl Walker<'_, '_> {
    /// Checks a step's `metrics`; returns its counts for the totals.
    pub(super) fn metrics(&mut self, value: &Value, path: &Path<'_>) -> Sums {
        let mut sums = Sums::default();
        let Some(object) = self.expect_object(value, path, "a metrics object") else {
            return sums;
        };
        let mut prompt_ids = None;
        let mut completion_ids = None;
        let mut logprobs = None;
        self.walk_fields(
            object,
            ObjectType::Metrics,
            path,
            metrics_hint,
            |walker, key, value, here| match key {
                "prompt_tokens" => sums.prompt = walker.integer(value, here),
                "completion_tokens" => sums.completion = walker.integer(value, here),
                "cached_tokens" => sums.cached = walker.integer(value, here),
                "cost_usd" => sums.cost = walker.float(value, here),
                "prompt_token_ids" => {
                    walker.field_feature(ObjectType::Metrics, "prompt_token_ids", here);
                    prompt_ids = walker.scalar_array(value, here, Scalar::Integer);
                }
                "completion_token_ids" => {
                    walker.field_feature(ObjectType::Metrics, "completion_token_ids", here);
                    completion_ids = walker.scalar_array(value, here, Scalar::Integer);
                }
                "logprobs" => logprobs = walker.scalar_array(value, here, Scalar::Float),
                "extra" => {
                    walker.object(value, here);
                }
                _ => {}
            },
        );
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

    /// Checks `final_metrics`; returns its totals.
    pub(super) fn final_metrics(&mut self, value: &Value, path: &Path<'_>) -> Option<Totals> {
        let object = self.expect_object(value, path, "a final_metrics object")?;
        let mut totals = Totals::default();
        let walk = |walker: &mut Self, key: &str, value: &Value, here: &Path<'_>| match key {
            "total_prompt_tokens" => totals.prompt = walker.integer(value, here),
            "total_completion_tokens" => totals.completion = walker.integer(value, here),
            "total_cached_tokens" => totals.cached = walker.integer(value, here),
            "total_cost_usd" => totals.cost = walker.float(value, here),
            "total_steps" => totals.steps = walker.count(value, here, ""),
            "extra" => {
                walker.object(value, here);
            }
            _ => {}
        };
        self.walk_fields(object, ObjectType::FinalMetrics, path, metrics_hint, walk);
        Some(totals)
    }

    /// Compares the totals of `final_metrics` with the sums of the steps: a warning for each
    /// total that is neither the trajectory's own sum nor the sum with its subagents, unless
    /// `notes` explains it.
    pub(super) fn check_totals(
        &mut self,
        object: &Map<String, Value>,
        path: &Path<'_>,
        totals: &Totals,
        sums: &TotalsBasis,
        n_steps: Option<usize>,
    ) {
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
        let (own, all) = (&sums.own, &sums.all);
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
                let message = unequal_total(total_key, total, step_key, own_sum, sums);
                self.warn(Rule::FinalMetricsSum, &metrics_path.key(total_key), message);
            }
        }
        let finite = |cost: &f64| cost.is_finite();
        if let (Some(total), Some(own_sum)) = (totals.cost.filter(finite), own.cost.filter(finite))
        {
            let close = |sum: f64| (total - sum).abs() <= 1e-6_f64.max(1e-9 * total.abs());
            let plausible = sums.unseen_work && total > own_sum;
            if !close(own_sum) && !all.cost.is_some_and(close) && !plausible {
                let message = unequal_total("total_cost_usd", total, "cost_usd", own_sum, sums);
                self.warn(Rule::FinalMetricsSum, &metrics_path.key("total_cost_usd"), message);
            }
        }
    }
}

/// The message for a total that differs from the sum of its steps.
fn unequal_total(
    total_key: &str,
    total: impl std::fmt::Display,
    step_key: &str,
    own_sum: impl std::fmt::Display,
    sums: &TotalsBasis,
) -> String {
    // With unseen work, only a total below what the document itself shows is suspicious.
    let unseen = if sums.unseen_work {
        " (the document also points at work it does not contain, such as subagents in other \
         files or copied steps, but that can only add to the totals)"
    } else {
        ""
    };
    format!(
        "{total_key} is {total}, but the agent steps' {step_key} sum to {own_sum}{unseen}; if \
         the difference is intended, explain it in `notes`"
    )
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
