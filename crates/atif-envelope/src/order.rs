//! Tool orders: how runs' tool calls group into an envelope's variants, and which variant a
//! new run counts as under each match mode.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

/// How runs' tool calls group into variants, named as the golden check's sequence modes are.
///
/// An envelope's variants are the distinct behaviours its runs showed, compared as the mode
/// compares them: step by step (`exact`), as one sequence of calls (`in-order`), or as one
/// multiset of calls (`any-order`, `subset`, `superset`). Calls within one step always compare
/// as a multiset, whatever the order.
///
/// A new run counts as the envelope's variant with the same calls. When there is none, the
/// looser modes credit it to the most specific variant it matches, as a golden check in that
/// mode would pass it: under `in-order` the longest variant whose calls appear in the run in
/// that order (other calls between them), under `superset` the largest variant whose calls
/// are all in the run, under `subset` the smallest variant that holds all of the run's calls.
/// Between equally specific variants, the one listed first (the most frequent) wins. A run
/// that matches none is a variant the envelope never saw. A run that calls no tool is only
/// ever the variant that calls none: doing nothing is never a looser form of doing something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ToolOrder {
    /// Two runs are the same variant when they call the same tools in the same steps, in the
    /// same order (the default).
    #[default]
    Exact,
    /// Variants are sequences of calls, steps aside; a new run also counts as the longest
    /// variant whose calls appear in it in that order, other calls between them.
    InOrder,
    /// Two runs are the same variant when they call the same multiset of tools, in any order
    /// and any steps.
    AnyOrder,
    /// Variants are multisets of calls; a new run also counts as the smallest variant that
    /// holds every call it makes.
    Subset,
    /// Variants are multisets of calls; a new run also counts as the largest variant whose
    /// calls it all makes.
    Superset,
}

/// A run's tool calls as a variant holds them: per step, or one list (see [`ToolOrder::key`]).
pub(crate) type Calls = Vec<Vec<String>>;

impl ToolOrder {
    /// The five orders, the default first.
    pub const ALL: [ToolOrder; 5] = [
        ToolOrder::Exact,
        ToolOrder::InOrder,
        ToolOrder::AnyOrder,
        ToolOrder::Subset,
        ToolOrder::Superset,
    ];

    /// The order named `name` ([`ToolOrder::as_str`]); `None` for another name. The names are
    /// those of the golden check's sequence modes, with the same meaning for variants.
    pub fn from_name(name: &str) -> Option<ToolOrder> {
        ToolOrder::ALL.into_iter().find(|order| order.as_str() == name)
    }

    /// The name used in files and on the command line: `exact`, `in-order`, `any-order`,
    /// `subset`, `superset`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolOrder::Exact => "exact",
            ToolOrder::InOrder => "in-order",
            ToolOrder::AnyOrder => "any-order",
            ToolOrder::Subset => "subset",
            ToolOrder::Superset => "superset",
        }
    }

    /// The variant of a run whose root steps call `step_calls` (per step, sorted names): the
    /// steps themselves (`exact`), every call in step order as one list (`in-order`), or every
    /// call as one sorted list (the multiset orders); no list when the run calls no tool.
    pub(crate) fn key(self, step_calls: &[Vec<String>]) -> Calls {
        let mut all: Vec<String> = match self {
            ToolOrder::Exact => return step_calls.to_vec(),
            _ => step_calls.concat(),
        };
        if self != ToolOrder::InOrder {
            all.sort();
        }
        if all.is_empty() { Vec::new() } else { vec![all] }
    }

    /// Whether a variant's `calls` are in the shape this order gives them: one list at most
    /// (all but `exact`), sorted (the multiset orders).
    pub(crate) fn holds_shape(self, calls: &[Vec<String>]) -> bool {
        match self {
            ToolOrder::Exact => calls.iter().all(|step| !step.is_empty()),
            ToolOrder::InOrder => calls.len() <= 1 && calls.iter().all(|list| !list.is_empty()),
            _ => {
                calls.len() <= 1
                    && calls.iter().all(|list| {
                        !list.is_empty() && list.windows(2).all(|pair| pair[0] <= pair[1])
                    })
            }
        }
    }

    /// The variant a new run whose calls are `calls` (as [`ToolOrder::key`] gives them) counts
    /// as, among `variants` (the envelope's, in its order): the index of the one with the same
    /// calls, else of the most specific one it matches; `None` when it matches none.
    pub(crate) fn credit(self, variants: &[&Calls], calls: &Calls) -> Option<usize> {
        if let Some(same) = variants.iter().position(|variant| *variant == calls) {
            return Some(same);
        }
        if calls.is_empty() {
            return None;
        }
        let admitting = (0..variants.len())
            .filter(|&idx| !variants[idx].is_empty() && self.admits(variants[idx], calls));
        // `min_by` keeps the first of equal elements: between equally specific variants, the
        // one listed first.
        admitting.min_by(|&a, &b| self.specificity(variants[a], variants[b]))
    }

    /// Whether a run with `calls` passes a golden check in this mode against the variant's.
    fn admits(self, variant: &Calls, calls: &Calls) -> bool {
        let (wanted, made) = (variant.concat(), calls.concat());
        match self {
            // Their variants are canonical: a run matches only the one with its own calls.
            ToolOrder::Exact | ToolOrder::AnyOrder => variant == calls,
            ToolOrder::InOrder => {
                let mut made = made.iter();
                wanted.iter().all(|call| made.any(|other| other == call))
            }
            ToolOrder::Superset => contains(&made, &wanted),
            ToolOrder::Subset => contains(&wanted, &made),
        }
    }

    /// Orders variants most specific first: the longest under `in-order` and `superset`, the
    /// shortest under `subset`.
    fn specificity(self, a: &Calls, b: &Calls) -> Ordering {
        let (len_a, len_b) = (a.concat().len(), b.concat().len());
        match self {
            ToolOrder::Subset => len_a.cmp(&len_b),
            _ => len_b.cmp(&len_a),
        }
    }
}

/// Whether the sorted multiset `big` contains the sorted multiset `small`.
fn contains(big: &[String], small: &[String]) -> bool {
    let mut big = big.iter().peekable();
    small.iter().all(|call| {
        while big.next_if(|other| *other < call).is_some() {}
        big.next_if(|other| *other == call).is_some()
    })
}

impl fmt::Display for ToolOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(list: &[&str]) -> Calls {
        if list.is_empty() {
            Vec::new()
        } else {
            vec![list.iter().map(|s| s.to_string()).collect()]
        }
    }

    #[test]
    fn multisets_contain_what_they_hold_with_multiplicity() {
        let set = |list: &[&str]| calls(list).concat();
        assert!(contains(&set(&["a", "b", "b", "c"]), &set(&["b", "b"])));
        assert!(contains(&set(&["a", "b", "c"]), &set(&[])));
        assert!(!contains(&set(&["a", "b", "c"]), &set(&["b", "b"])));
        assert!(!contains(&set(&["a", "c"]), &set(&["b"])));
    }

    #[test]
    fn a_new_run_counts_as_the_most_specific_variant_it_matches() {
        let (short, long) = (calls(&["read", "grep"]), calls(&["read", "write", "grep"]));
        let variants = [&short, &long];
        let run = calls(&["read", "ls", "write", "grep"]);
        assert_eq!(ToolOrder::InOrder.credit(&variants, &run), Some(1));
        assert_eq!(ToolOrder::Exact.credit(&variants, &run), None);
        assert_eq!(ToolOrder::InOrder.credit(&variants, &calls(&["grep", "read"])), None);
        assert_eq!(ToolOrder::InOrder.credit(&variants, &calls(&[])), None);
    }
}
