//! Deterministic alignment of two sequences, and the line diffs built on it: Myers' shortest
//! edit script when it fits a fixed budget of work, a coarser patience alignment above it.
//!
//! A report must read the same however busy the machine is, so nothing here looks at a clock:
//! the budget counts steps of the search, and the same two inputs spend it the same way.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::Hash;
use std::ops::Range;

use similar::algorithms::{Capture, Compact, DiffHook, NoFinishHook, Replace, myers};
use similar::udiff::UnifiedHunkHeader;
use similar::{DiffOp, group_diff_ops};

/// Units of work one alignment may spend on Myers' search: a unit is one diagonal visited or
/// one pair of items compared. Myers costs O((N + M) D) for D differences; this many units take
/// about a tenth of a second, and cover, say, two 100,000-line texts with 150 differences.
const WORK_BUDGET: u64 = 1 << 24;

/// What is left of an alignment's work budget; shared by the alignments of one comparison (the
/// root steps and every pair of subagents), so their sum is bounded too.
#[derive(Debug)]
pub(crate) struct Budget {
    left: u64,
}

impl Budget {
    /// The whole budget, [`WORK_BUDGET`].
    pub(crate) fn new() -> Budget {
        Budget { left: WORK_BUDGET }
    }

    /// A budget of `units`, for tests that need the fallback on small inputs.
    #[cfg(test)]
    pub(crate) fn of(units: u64) -> Budget {
        Budget { left: units }
    }
}

/// The edits that turn `old` into `new`, as `similar` writes them (`Replace` for a stretch
/// deleted and inserted at once).
///
/// Myers' shortest edit script, when its search fits half of what is left of `budget`;
/// otherwise items found exactly once in each sequence anchor a patience alignment, and the
/// stretches between anchors get Myers in turn (each again within half of what is left) or,
/// past the budget, are replaced as a whole. The result is always a correct edit script, only
/// a longer one on inputs too different to align within the budget.
pub(crate) fn align<T: Hash + Eq>(old: &[T], new: &[T], budget: &mut Budget) -> Vec<DiffOp> {
    let (old, new) = interned(old, new);
    let mut hook = Compact::new(Replace::new(Capture::new()), &old[..], &new[..]);
    let (old_all, new_all) = (0..old.len(), 0..new.len());
    if !myers_within(&old, old_all.clone(), &new, new_all.clone(), budget, &mut hook) {
        patience(&old, old_all, &new, new_all, budget, &mut hook);
    }
    let Ok(()) = hook.finish();
    hook.into_inner().into_inner().into_ops()
}

/// Two texts split into lines (each keeping its `\n`) and aligned by [`align`].
#[derive(Debug)]
pub(crate) struct LineDiff<'a> {
    old: Vec<&'a str>,
    new: Vec<&'a str>,
    ops: Vec<DiffOp>,
}

impl<'a> LineDiff<'a> {
    /// The line diff of `old` and `new`, with a budget of its own.
    pub(crate) fn of(old: &'a str, new: &'a str) -> LineDiff<'a> {
        let old: Vec<&str> = old.split_inclusive('\n').collect();
        let new: Vec<&str> = new.split_inclusive('\n').collect();
        let ops = align(&old, &new, &mut Budget::new());
        LineDiff { old, new, ops }
    }

    /// The hunks with `radius` lines of context, each as its lines marked ` `, `-` or `+`
    /// (without their `\n`).
    pub(crate) fn hunks(&self, radius: usize) -> Vec<Vec<(char, &'a str)>> {
        group_diff_ops(self.ops.clone(), radius)
            .iter()
            .map(|group| group.iter().flat_map(|op| self.marked(op)).collect())
            .collect()
    }

    /// The unified diff with `radius` lines of context, headed `--- old` / `+++ new`, as
    /// `diff -u` and `similar` write it; empty when the texts are equal.
    pub(crate) fn unified(&self, (old, new): (&str, &str), radius: usize) -> String {
        let mut out = String::new();
        for group in group_diff_ops(self.ops.clone(), radius) {
            if out.is_empty() {
                let _ = write!(out, "--- {old}\n+++ {new}\n");
            }
            let _ = writeln!(out, "{}", UnifiedHunkHeader::new(&group));
            for (mark, line) in group.iter().flat_map(|op| self.marked(op)) {
                out.push(mark);
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// The lines of one edit, marked, without their `\n`; a last line that has none gets the
    /// usual note on a line of its own.
    fn marked(&self, op: &DiffOp) -> Vec<(char, &'a str)> {
        let (_, old_range, new_range) = op.as_tag_tuple();
        let (old, new) = match op {
            DiffOp::Equal { .. } => (&self.old[old_range], &self.new[..0]),
            _ => (&self.old[old_range], &self.new[new_range]),
        };
        let equal = matches!(op, DiffOp::Equal { .. });
        let deleted = old.iter().map(|line| (if equal { ' ' } else { '-' }, *line));
        let mut lines = Vec::with_capacity(old.len() + new.len());
        for (mark, line) in deleted.chain(new.iter().map(|line| ('+', *line))) {
            match line.strip_suffix('\n') {
                Some(line) => lines.push((mark, line)),
                None => lines.extend([(mark, line), ('\\', " No newline at end of file")]),
            }
        }
        lines
    }
}

/// The hook every alignment writes its edits to.
type Hook<'a> = Compact<'a, 'a, [usize], [usize], Replace<Capture>>;

/// Runs Myers on the two ranges into `hook` when its search fits half of what is left of
/// `budget`, and says whether it did; either way the search's cost is taken from the budget.
fn myers_within(
    old: &[usize],
    old_range: Range<usize>,
    new: &[usize],
    new_range: Range<usize>,
    budget: &mut Budget,
    hook: &mut Hook<'_>,
) -> bool {
    let (fits, used) =
        myers_fits(&old[old_range.clone()], &new[new_range.clone()], budget.left / 2);
    budget.left = budget.left.saturating_sub(used);
    if fits {
        let Ok(()) =
            myers::diff(&mut NoFinishHook::new(&mut *hook), old, old_range, new, new_range);
    }
    fits
}

/// Whether Myers' greedy search reaches the end of both sequences within `limit` units, and
/// the units it spent. It keeps only the furthest point of each diagonal, so its memory is
/// bounded by the distance the limit allows, not by the inputs.
fn myers_fits(old: &[usize], new: &[usize], limit: u64) -> (bool, u64) {
    let (n, m) = (old.len(), new.len());
    // Reaching distance d visits d (d + 1) / 2 diagonals, so no search within `limit` gets
    // further than this.
    let max_d = (n + m).min(((2.0 * limit as f64).sqrt() as usize).saturating_add(1));
    let offset = max_d as isize + 1;
    let mut furthest = vec![0usize; 2 * max_d + 3];
    let mut used = 0u64;
    for d in 0..=max_d as isize {
        for k in (-d..=d).step_by(2) {
            let at = (k + offset) as usize;
            let down = k == -d || (k != d && furthest[at - 1] < furthest[at + 1]);
            let mut x = if down { furthest[at + 1] } else { furthest[at - 1] + 1 };
            let mut y = (x as isize - k) as usize;
            used += 1;
            while x < n && y < m && old[x] == new[y] {
                (x, y) = (x + 1, y + 1);
                used += 1;
            }
            furthest[at] = x;
            if x >= n && y >= m {
                return (true, used);
            }
            if used > limit {
                return (false, used);
            }
        }
    }
    (false, used)
}

/// Aligns the two ranges on the items found exactly once in each (the longest run of them in
/// the same order), and the stretches between them by Myers within the budget, or as replaced.
fn patience(
    old: &[usize],
    old_range: Range<usize>,
    new: &[usize],
    new_range: Range<usize>,
    budget: &mut Budget,
    hook: &mut Hook<'_>,
) {
    let (mut old_at, mut new_at) = (old_range.start, new_range.start);
    for (o, n) in unique_anchors(old, old_range.clone(), new, new_range.clone()) {
        stretch(old, old_at..o, new, new_at..n, budget, hook);
        let Ok(()) = hook.equal(o, n, 1);
        (old_at, new_at) = (o + 1, n + 1);
    }
    stretch(old, old_at..old_range.end, new, new_at..new_range.end, budget, hook);
}

/// One stretch between anchors: inserted, deleted, aligned by Myers, or replaced.
fn stretch(
    old: &[usize],
    old_range: Range<usize>,
    new: &[usize],
    new_range: Range<usize>,
    budget: &mut Budget,
    hook: &mut Hook<'_>,
) {
    let (o, n) = (old_range.start, new_range.start);
    let Ok(()) = match (old_range.len(), new_range.len()) {
        (0, 0) => Ok(()),
        (0, new_len) => hook.insert(o, n, new_len),
        (old_len, 0) => hook.delete(o, old_len, n),
        (old_len, new_len) => {
            if myers_within(old, old_range, new, new_range, budget, hook) {
                Ok(())
            } else {
                hook.replace(o, old_len, n, new_len)
            }
        }
    };
}

/// The pairs of positions of items found once in each range, the longest chain of them
/// increasing in both (patience sorting, O(U log U) for U such items).
fn unique_anchors(
    old: &[usize],
    old_range: Range<usize>,
    new: &[usize],
    new_range: Range<usize>,
) -> Vec<(usize, usize)> {
    // Ids are dense (see `interned`), so counts and positions live in vectors.
    let n_ids =
        old[old_range.clone()].iter().chain(&new[new_range.clone()]).max().map_or(0, |id| id + 1);
    let mut seen = vec![(0u8, 0usize, 0u8, 0usize); n_ids];
    for idx in old_range {
        let entry = &mut seen[old[idx]];
        (entry.0, entry.1) = (entry.0.saturating_add(1), idx);
    }
    for idx in new_range {
        let entry = &mut seen[new[idx]];
        (entry.2, entry.3) = (entry.2.saturating_add(1), idx);
    }
    let mut candidates: Vec<(usize, usize)> = seen
        .into_iter()
        .filter(|&(in_old, _, in_new, _)| in_old == 1 && in_new == 1)
        .map(|(_, o, _, n)| (o, n))
        .collect();
    candidates.sort_unstable();
    // tails[len]: the candidate ending the best chain of length len + 1 (smallest new
    // position); back[i]: the candidate before candidate i in its chain.
    let mut tails: Vec<usize> = Vec::new();
    let mut back: Vec<Option<usize>> = Vec::with_capacity(candidates.len());
    for (idx, &(_, n)) in candidates.iter().enumerate() {
        let len = tails.partition_point(|&tail| candidates[tail].1 < n);
        back.push(len.checked_sub(1).map(|prev| tails[prev]));
        match tails.get_mut(len) {
            Some(tail) => *tail = idx,
            None => tails.push(idx),
        }
    }
    let mut chain = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied();
    while let Some(idx) = at {
        chain.push(candidates[idx]);
        at = back[idx];
    }
    chain.reverse();
    chain
}

/// Each item of `golden` and `actual` as a number, the same number for equal items: the
/// alignment of two long lists then compares numbers, not strings, and finds the same edits.
fn interned<T: Hash + Eq>(golden: &[T], actual: &[T]) -> (Vec<usize>, Vec<usize>) {
    let mut ids: HashMap<&T, usize> = HashMap::new();
    let mut id_of = |item| {
        let next = ids.len();
        *ids.entry(item).or_insert(next)
    };
    let golden = golden.iter().map(&mut id_of).collect();
    let actual = actual.iter().map(&mut id_of).collect();
    (golden, actual)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies `ops` to `old` and checks that it gives `new`, and that `Equal` pairs equal items.
    fn check_script(old: &[u32], new: &[u32], ops: &[DiffOp]) {
        let mut rebuilt = Vec::new();
        for op in ops {
            let (_, old_range, new_range) = op.as_tag_tuple();
            if let DiffOp::Equal { .. } = op {
                assert_eq!(old[old_range], new[new_range.clone()]);
            }
            rebuilt.extend_from_slice(&new[new_range]);
        }
        assert_eq!(rebuilt, new);
        let n_old: usize = ops.iter().map(|op| op.old_range().len()).sum();
        assert_eq!(n_old, old.len());
    }

    /// Deterministic pseudo-random items from a small alphabet, so many repeat.
    fn items(seed: u64, len: usize, alphabet: u64) -> Vec<u32> {
        let mut state = seed;
        (0..len)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((state >> 33) % alphabet) as u32
            })
            .collect()
    }

    #[test]
    fn equal_items_get_equal_numbers_and_different_items_different_ones() {
        let (golden, actual) = interned(&["grep", "cat", "grep"], &["cat", "rg", "grep"]);
        assert_eq!(golden, [0, 1, 0]);
        assert_eq!(actual, [1, 2, 0]);
    }

    #[test]
    fn within_the_budget_the_edits_are_myers_shortest_script() {
        let (old, new) = (items(1, 300, 5), items(2, 280, 5));
        let ours = align(&old, &new, &mut Budget::new());
        assert_eq!(ours, similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new));
        check_script(&old, &new, &ours);
    }

    #[test]
    fn past_the_budget_the_edits_are_coarser_but_still_turn_one_into_the_other() {
        let (old, new) = (items(3, 2_000, 50), items(4, 2_000, 50));
        let full = align(&old, &new, &mut Budget::new());
        for units in [0, 10, 1_000, 100_000] {
            let coarse = align(&old, &new, &mut Budget::of(units));
            check_script(&old, &new, &coarse);
            let kept = |ops: &[DiffOp]| -> usize {
                ops.iter()
                    .filter(|op| matches!(op, DiffOp::Equal { .. }))
                    .map(|op| op.old_range().len())
                    .sum()
            };
            assert!(kept(&coarse) <= kept(&full), "{units} units kept more than Myers");
        }
    }

    #[test]
    fn the_fallback_keeps_items_found_once_on_each_side() {
        // 100 and 101 occur once on each side; the rest differ, and the budget allows nothing.
        let old = [1, 2, 100, 3, 4, 101, 5];
        let new = [6, 100, 7, 7, 101, 8];
        let ops = align(&old, &new, &mut Budget::of(0));
        check_script(&old, &new, &ops);
        let kept: Vec<(usize, usize)> = ops
            .iter()
            .filter_map(|op| match *op {
                DiffOp::Equal { old_index, new_index, .. } => Some((old_index, new_index)),
                _ => None,
            })
            .collect();
        assert_eq!(kept, [(2, 1), (5, 4)]);
    }

    #[test]
    fn the_same_inputs_spend_the_same_budget_and_give_the_same_edits() {
        let (old, new) = (items(5, 5_000, 3), items(6, 5_000, 3));
        let (mut first, mut second) = (Budget::of(200_000), Budget::of(200_000));
        let ops = align(&old, &new, &mut first);
        assert_eq!(ops, align(&old, &new, &mut second));
        assert_eq!(first.left, second.left);
        assert!(first.left < 200_000, "the search spent nothing");
        check_script(&old, &new, &ops);
    }

    #[test]
    fn the_unified_diff_is_the_one_similar_writes() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk";
        let ours = LineDiff::of(old, new).unified(("golden", "actual"), 3);
        let theirs = similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header("golden", "actual")
            .to_string();
        assert_eq!(ours, theirs);
        assert_eq!(LineDiff::of(old, old).unified(("golden", "actual"), 3), "");
    }
}
