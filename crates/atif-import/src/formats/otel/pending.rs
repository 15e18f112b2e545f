//! The calls the model made, waiting for (or holding) their results, indexed so that joining a
//! tool span or a tool response to its call costs about the same whatever the number of calls.
//!
//! Every join looks for the first call, in the order the model made them, that matches: by id,
//! by tool name (and arguments), or the first still open. A call stops being "open" once a tool
//! span answered it and "unanswered" once it has content, and neither ever comes back; so each
//! search can start where the last one of its kind stopped (a cursor per kind, and per tool
//! name), and a search by id looks only at the calls of that id.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// A call the model made, waiting for (or holding) its result.
pub(crate) struct Pending {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: Value,
    pub(crate) content: Option<String>,
    pub(crate) extra: Map<String, Value>,
    pub(crate) subagents: Vec<String>,
    /// A tool span answered the call (it is no longer open).
    pub(crate) by_span: bool,
}

impl Pending {
    fn open(&self) -> bool {
        !self.by_span
    }

    fn unanswered(&self) -> bool {
        self.content.is_none() && !self.by_span
    }
}

/// The calls of one trajectory, in the order the model made them.
#[derive(Default)]
pub(crate) struct Calls {
    list: Vec<Pending>,
    by_id: HashMap<String, Vec<usize>>,
    /// Per tool name: the calls of that name, and how many of them are known closed.
    by_name: HashMap<String, (usize, Vec<usize>)>,
    /// Every call before it is closed.
    first_open: usize,
    /// Every call before it is answered or closed.
    first_unanswered: usize,
}

impl Calls {
    /// Adds a call; returns its index.
    pub(crate) fn push(&mut self, call: Pending) -> usize {
        let idx = self.list.len();
        self.by_id.entry(call.id.clone()).or_default().push(idx);
        self.by_name.entry(call.name.clone()).or_default().1.push(idx);
        self.list.push(call);
        idx
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn get_mut(&mut self, idx: usize) -> Option<&mut Pending> {
        self.list.get_mut(idx)
    }

    /// The first open call with this id.
    pub(crate) fn open_by_id(&self, id: &str) -> Option<usize> {
        self.by_id.get(id)?.iter().copied().find(|&idx| self.list[idx].open())
    }

    /// The first call with this id that has no content yet (open or not).
    pub(crate) fn contentless_by_id(&self, id: &str) -> Option<usize> {
        self.by_id.get(id)?.iter().copied().find(|&idx| self.list[idx].content.is_none())
    }

    /// The first call neither answered nor closed.
    pub(crate) fn first_unanswered(&mut self) -> Option<usize> {
        while self.list.get(self.first_unanswered).is_some_and(|c| !c.unanswered()) {
            self.first_unanswered += 1;
        }
        (self.first_unanswered < self.list.len()).then_some(self.first_unanswered)
    }

    /// The first open call.
    pub(crate) fn first_open(&mut self) -> Option<usize> {
        while self.list.get(self.first_open).is_some_and(|c| !c.open()) {
            self.first_open += 1;
        }
        (self.first_open < self.list.len()).then_some(self.first_open)
    }

    /// The first open call of tool `name` whose arguments are `arguments` (any arguments when
    /// `None`).
    pub(crate) fn open_by_name(&mut self, name: &str, arguments: Option<&Value>) -> Option<usize> {
        let list = &self.list;
        let (closed, calls) = self.by_name.get_mut(name)?;
        while calls.get(*closed).is_some_and(|&idx| !list[idx].open()) {
            *closed += 1;
        }
        calls[*closed..].iter().copied().find(|&idx| {
            let call = &list[idx];
            call.open() && arguments.is_none_or(|arguments| &call.arguments == arguments)
        })
    }

    /// Every call, in order.
    pub(crate) fn into_vec(self) -> Vec<Pending> {
        self.list
    }
}
