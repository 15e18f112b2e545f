//! The verdict: what the server saw, and whether the run was exact.

use serde::Serialize;

/// What the server does with the model traffic: records it or replays it (not to be confused
/// with the golden mode, `atif_golden::Mode`, or the record mode, `atif_replay::RecordMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Operation {
    /// Forward to the upstream and save each exchange.
    Record,
    /// Answer from the script, never opening a network connection.
    Replay,
}

/// What the server saw: the same value `GET /_atif/verdict` returns as JSON and
/// [`Proxy::finish`](crate::Proxy::finish) returns (as [`Error::NotExact`](crate::Error::NotExact)
/// when the run was not exact).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Verdict {
    /// Whether the run was exact: no errors and, in a replay, every exchange used.
    pub ok: bool,
    /// Record or replay.
    pub operation: Operation,
    /// How many model requests the server answered (from the script or the upstream),
    /// failures aside.
    pub requests_served: usize,
    /// How many requests were refused as not coming from the agent: a `Host` that is not the
    /// server's address, or a web page's `Origin`. They are not the agent's behaviour, so they
    /// leave the run exact; they never reach the script or the traffic.
    pub requests_refused: usize,
    /// How many connections were closed because a request's head did not arrive in full
    /// within the header-read timeout: each also fails the run, as the request is lost.
    pub connections_closed_slow_head: usize,
    /// How many connections were closed unused past the header-read timeout, or idle
    /// between requests past the idle timeout: housekeeping, which leaves the run exact.
    pub connections_closed_idle: usize,
    /// How many exchanges the script holds (replay) or the recording saved so far (record).
    pub exchanges_recorded: usize,
    /// In a hybrid recording (`--replay-tools`), how many MCP tool calls were answered from
    /// the tools tape; `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_calls_from_tape: Option<usize>,
    /// In a hybrid recording, how many MCP tool calls the tools tape could not answer (misses):
    /// each got a tool error and is one of the [`errors`](Self::errors); `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_call_misses: Option<usize>,
    /// The recorded exchanges a replay never served, in script order.
    pub unused_exchanges: Vec<UnusedExchange>,
    /// The first [`MAX_KEPT`] failures, in the order they happened: each makes the run not
    /// exact.
    pub errors: Vec<String>,
    /// How many failures came after the first [`MAX_KEPT`]: counted, not kept.
    pub errors_omitted: usize,
    /// The first [`MAX_KEPT`] drifts served anyway under `--drift warn`: reported, but the run
    /// stays exact.
    pub warnings: Vec<String>,
    /// How many warnings came after the first [`MAX_KEPT`].
    pub warnings_omitted: usize,
}

/// How many errors and warnings a verdict keeps, and the server prints; the rest are counted,
/// so that a client sending bad requests in a loop cannot grow the verdict or standard error
/// without bound.
pub const MAX_KEPT: usize = 100;

/// The first [`MAX_KEPT`] messages of a kind, and how many more there were.
#[derive(Debug, Default)]
pub(crate) struct Capped {
    kept: Vec<String>,
    omitted: usize,
}

impl Capped {
    /// Keeps `message` if there is room, else counts it; whether it was kept.
    pub(crate) fn push(&mut self, message: String) -> bool {
        if self.kept.len() < MAX_KEPT {
            self.kept.push(message);
            return true;
        }
        self.omitted += 1;
        false
    }

    /// Whether `message` is the first one counted and not kept, after which nothing is printed.
    pub(crate) fn just_filled(&self) -> bool {
        self.omitted == 1
    }
}

/// A recorded exchange a replay never served.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UnusedExchange {
    /// 1-based position in the script's `exchanges`.
    pub number: usize,
    /// `POST`.
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// The model the request asked for, when it named one.
    pub model: Option<String>,
}

/// What the server counted, for a [`Verdict`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counts {
    pub(crate) requests_served: usize,
    pub(crate) requests_refused: usize,
    pub(crate) connections_closed_slow_head: usize,
    pub(crate) connections_closed_idle: usize,
    pub(crate) exchanges_recorded: usize,
    pub(crate) mcp_calls_from_tape: Option<usize>,
    pub(crate) mcp_call_misses: Option<usize>,
}

impl Verdict {
    /// A verdict computed from what was seen.
    pub(crate) fn new(
        operation: Operation,
        counts: Counts,
        unused_exchanges: Vec<UnusedExchange>,
        errors: &Capped,
        warnings: &Capped,
    ) -> Verdict {
        let ok = errors.kept.is_empty() && errors.omitted == 0 && unused_exchanges.is_empty();
        Verdict {
            ok,
            operation,
            requests_served: counts.requests_served,
            requests_refused: counts.requests_refused,
            connections_closed_slow_head: counts.connections_closed_slow_head,
            connections_closed_idle: counts.connections_closed_idle,
            exchanges_recorded: counts.exchanges_recorded,
            mcp_calls_from_tape: counts.mcp_calls_from_tape,
            mcp_call_misses: counts.mcp_call_misses,
            unused_exchanges,
            errors: errors.kept.clone(),
            errors_omitted: errors.omitted,
            warnings: warnings.kept.clone(),
            warnings_omitted: warnings.omitted,
        }
    }

    /// One paragraph saying whether the run was exact and, if not, every reason.
    pub fn summary(&self) -> String {
        self.summary_with(false)
    }

    /// [`summary`](Verdict::summary) for a run whose agent failed or was killed: exchanges it
    /// never requested are then blamed on that failure, not on fewer model calls.
    pub fn summary_after_failed_run(&self) -> String {
        self.summary_with(true)
    }

    fn summary_with(&self, run_failed: bool) -> String {
        let mode = match self.operation {
            Operation::Record => "recording",
            Operation::Replay => "replay",
        };
        let refused = match self.requests_refused {
            0 => String::new(),
            n => format!(
                "; {n} requests refused as not from the agent (a foreign Host, a web page's \
                 Origin or no control token)"
            ),
        };
        let tools = match (self.mcp_calls_from_tape, self.mcp_call_misses) {
            (Some(served), Some(misses)) => {
                format!("; MCP tool calls from the tools tape: {served} served, {misses} missed")
            }
            _ => String::new(),
        };
        if self.ok {
            return format!(
                "{mode} exact: {} requests served, {} exchanges recorded{tools}{refused}",
                self.requests_served, self.exchanges_recorded
            );
        }
        let mut text = format!("{mode} not exact{tools}{refused}:");
        for error in &self.errors {
            text.push_str("\n- ");
            text.push_str(error);
        }
        if self.errors_omitted > 0 {
            text.push_str(&format!(
                "\n- and {} more failures after the first {MAX_KEPT}, counted but not kept",
                self.errors_omitted
            ));
        }
        if !self.unused_exchanges.is_empty() {
            let names: Vec<String> = self
                .unused_exchanges
                .iter()
                .map(|unused| {
                    let model =
                        unused.model.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
                    format!("#{} {} {}{model}", unused.number, unused.method, unused.path)
                })
                .collect();
            let cause = if run_failed {
                "The agent's run failed before requesting them: that failure is the one to fix"
            } else if !self.errors.is_empty() {
                "The replay already failed above, so the agent stopped asking: that failure is \
                 the one to fix"
            } else {
                "The agent is making fewer model calls than when it was recorded: that is the \
                 regression; re-record if intended"
            };
            text.push_str(&format!(
                "\n- {} of the {} recorded exchanges were never requested: {}. {cause}",
                self.unused_exchanges.len(),
                self.exchanges_recorded,
                names.join(", ")
            ));
        }
        text
    }
}
