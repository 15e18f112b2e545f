//! Selectors in insta's redaction grammar (`.steps[].extra.request_id`, `.**.request_id`):
//! parsing, and removing or replacing the values they select.
//!
//! The grammar: a selector is one or more paths separated by `,`; a path is a sequence of
//! segments, each one of `.key`, `["key"]`, `.*` (every member or element), `[]` (every
//! element), `[N]`, `[START:END]` (either end may be left out; negative counts from the end),
//! and `.**` (zero or more segments of any kind; at most once per path, never last).

use serde_json::Value;

use crate::{Error, Result, SelectorAction};

/// A parsed selector: alternatives, each a list of segments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Selector {
    paths: Vec<Vec<Segment>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    AnyKeyOrIndex,
    Index(i64),
    Range(Option<i64>, Option<i64>),
    Deep,
}

impl Selector {
    /// Parses `text`, which must start with `.` or `[`.
    ///
    /// # Errors
    /// [`Error::InvalidSelector`] naming the selector and what was expected where.
    pub(crate) fn parse(text: &str) -> Result<Selector> {
        let mut parser = Parser { text, pos: 0 };
        let mut paths = Vec::new();
        loop {
            paths.push(parser.path()?);
            parser.skip_spaces();
            match parser.peek() {
                None => break,
                Some(',') => {
                    parser.pos += 1;
                    parser.skip_spaces();
                }
                Some(_) => return Err(parser.error("`,` or the end of the selector")),
            }
        }
        Ok(Selector { paths })
    }

    /// Removes or replaces every value in `doc` this selector selects (never `doc` itself).
    pub(crate) fn apply(&self, doc: &mut Value, action: &SelectorAction) {
        for path in &self.paths {
            apply_path(doc, path, action);
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn skip_spaces(&mut self) {
        while self.peek() == Some(' ') {
            self.pos += 1;
        }
    }

    fn error(&self, expected: &str) -> Error {
        let found = match self.peek() {
            Some(c) => format!("`{c}`"),
            None => "the end".to_owned(),
        };
        Error::InvalidSelector {
            selector: self.text.to_owned(),
            reason: format!("expected {expected} at column {}, found {found}", self.pos + 1),
        }
    }

    fn path(&mut self) -> Result<Vec<Segment>> {
        let mut segments = Vec::new();
        loop {
            match self.peek() {
                Some('.') => {
                    self.pos += 1;
                    segments.push(self.dotted()?);
                }
                Some('[') => {
                    self.pos += 1;
                    segments.push(self.bracketed()?);
                }
                _ => break,
            }
        }
        if segments.is_empty() {
            return Err(self.error("`.` or `[` starting a selector"));
        }
        let n_deep = segments.iter().filter(|s| **s == Segment::Deep).count();
        if n_deep > 1 {
            return Err(self.error_at_end("`.**` at most once per selector"));
        }
        if segments.last() == Some(&Segment::Deep) {
            return Err(self.error_at_end("a segment after `.**`"));
        }
        Ok(segments)
    }

    fn error_at_end(&self, reason: &str) -> Error {
        Error::InvalidSelector {
            selector: self.text.to_owned(),
            reason: format!("expected {reason}"),
        }
    }

    fn dotted(&mut self) -> Result<Segment> {
        let rest = &self.text[self.pos..];
        if rest.starts_with("**") {
            self.pos += 2;
            return Ok(Segment::Deep);
        }
        if rest.starts_with('*') {
            self.pos += 1;
            return Ok(Segment::AnyKeyOrIndex);
        }
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '$'))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(self.error("a key, `*` or `**` after `.`"));
        }
        self.pos += len;
        Ok(Segment::Key(rest[..len].to_owned()))
    }

    fn bracketed(&mut self) -> Result<Segment> {
        self.skip_spaces();
        let segment = match self.peek() {
            Some(']') => Segment::Range(None, None),
            Some('"') => Segment::Key(self.quoted()?),
            Some('*') => {
                self.pos += 1;
                Segment::AnyKeyOrIndex
            }
            _ => {
                let start = self.integer()?;
                self.skip_spaces();
                if self.peek() == Some(':') {
                    self.pos += 1;
                    self.skip_spaces();
                    let end = self.integer()?;
                    Segment::Range(start, end)
                } else {
                    match start {
                        Some(idx) => Segment::Index(idx),
                        None => return Err(self.error("an index, a range, a quoted key or `]`")),
                    }
                }
            }
        };
        self.skip_spaces();
        if self.peek() != Some(']') {
            return Err(self.error("`]`"));
        }
        self.pos += 1;
        Ok(segment)
    }

    fn integer(&mut self) -> Result<Option<i64>> {
        let rest = &self.text[self.pos..];
        let sign = usize::from(rest.starts_with('-'));
        let len = rest[sign..].find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len() - sign);
        if len == 0 {
            if sign == 1 {
                return Err(self.error("digits after `-`"));
            }
            return Ok(None);
        }
        let digits = &rest[..sign + len];
        let value = digits.parse().map_err(|_| self.error("an index that fits in 64 bits"))?;
        self.pos += sign + len;
        Ok(Some(value))
    }

    fn quoted(&mut self) -> Result<String> {
        // `"` already peeked; keys are JSON strings, so reuse serde_json for the escapes.
        let rest = &self.text[self.pos..];
        let mut end = None;
        let mut escaped = false;
        for (idx, c) in rest.char_indices().skip(1) {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = Some(idx);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            return Err(self.error("a closing `\"`"));
        };
        let key: String = serde_json::from_str(&rest[..=end])
            .map_err(|_| self.error("a key written as a JSON string"))?;
        self.pos += end + 1;
        Ok(key)
    }
}

fn apply_path(value: &mut Value, segments: &[Segment], action: &SelectorAction) {
    let Some((first, rest)) = segments.split_first() else {
        return;
    };
    if *first == Segment::Deep {
        // Zero segments: the rest applies here; one or more: every child, still deep.
        for child in children(value) {
            apply_path(child, segments, action);
        }
        apply_path(value, rest, action);
        return;
    }
    if rest.is_empty() {
        act(value, first, action);
        return;
    }
    match (first, value) {
        (Segment::Key(key), Value::Object(map)) => {
            if let Some(child) = map.get_mut(key) {
                apply_path(child, rest, action);
            }
        }
        (Segment::AnyKeyOrIndex, value) => {
            for child in children(value) {
                apply_path(child, rest, action);
            }
        }
        (Segment::Index(_) | Segment::Range(..), Value::Array(items)) => {
            let len = items.len();
            for (idx, item) in items.iter_mut().enumerate() {
                if selects_index(first, idx, len) {
                    apply_path(item, rest, action);
                }
            }
        }
        _ => {}
    }
}

/// Removes or replaces the children of `value` that `last` selects.
fn act(value: &mut Value, last: &Segment, action: &SelectorAction) {
    match value {
        Value::Object(map) => {
            let selected = |key: &str| match last {
                Segment::Key(wanted) => wanted == key,
                Segment::AnyKeyOrIndex => true,
                _ => false,
            };
            match action {
                SelectorAction::Remove => map.retain(|key, _| !selected(key)),
                SelectorAction::Replace(new) => {
                    for (key, child) in map.iter_mut() {
                        if selected(key) {
                            child.clone_from(new);
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            let len = items.len();
            let selected = |idx: usize| match last {
                Segment::AnyKeyOrIndex => true,
                Segment::Index(_) | Segment::Range(..) => selects_index(last, idx, len),
                _ => false,
            };
            match action {
                SelectorAction::Remove => {
                    let mut idx = 0;
                    items.retain(|_| {
                        let keep = !selected(idx);
                        idx += 1;
                        keep
                    });
                }
                SelectorAction::Replace(new) => {
                    for (idx, item) in items.iter_mut().enumerate() {
                        if selected(idx) {
                            item.clone_from(new);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

fn children(value: &mut Value) -> Box<dyn Iterator<Item = &mut Value> + '_> {
    match value {
        Value::Object(map) => Box::new(map.values_mut()),
        Value::Array(items) => Box::new(items.iter_mut()),
        _ => Box::new(std::iter::empty()),
    }
}

fn selects_index(segment: &Segment, idx: usize, len: usize) -> bool {
    let resolve = |n: i64| -> i64 {
        let len = i64::try_from(len).unwrap_or(i64::MAX);
        if n < 0 { (len + n).max(0) } else { n.min(len) }
    };
    let idx = i64::try_from(idx).unwrap_or(i64::MAX);
    match *segment {
        Segment::Index(n) => {
            let len_i = i64::try_from(len).unwrap_or(i64::MAX);
            let target = if n < 0 { len_i + n } else { n };
            idx == target
        }
        Segment::Range(start, end) => {
            let start = start.map_or(0, resolve);
            let end = end.map_or(i64::MAX, resolve);
            start <= idx && idx < end
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(selector: &str, action: SelectorAction, input: Value, expected: Value) {
        let mut doc = input;
        Selector::parse(selector).unwrap().apply(&mut doc, &action);
        assert_eq!(doc, expected, "selector {selector}");
    }

    #[test]
    fn keys_elements_ranges_and_wildcards_select_what_insta_selects() {
        let doc = json!({"a": {"b": 1, "c": 2}, "l": [1, 2, 3, 4]});
        check(
            ".a.b",
            SelectorAction::Remove,
            doc.clone(),
            json!({"a": {"c": 2}, "l": [1, 2, 3, 4]}),
        );
        check(
            "[\"a\"][\"c\"]",
            SelectorAction::Replace(json!("x")),
            doc.clone(),
            json!({"a": {"b": 1, "c": "x"}, "l": [1, 2, 3, 4]}),
        );
        check(
            ".l[1]",
            SelectorAction::Remove,
            doc.clone(),
            json!({"a": {"b": 1, "c": 2}, "l": [1, 3, 4]}),
        );
        check(
            ".l[-1]",
            SelectorAction::Remove,
            doc.clone(),
            json!({"a": {"b": 1, "c": 2}, "l": [1, 2, 3]}),
        );
        check(
            ".l[1:3]",
            SelectorAction::Replace(json!(0)),
            doc.clone(),
            json!({"a": {"b": 1, "c": 2}, "l": [1, 0, 0, 4]}),
        );
        check(
            ".l[:1]",
            SelectorAction::Remove,
            doc.clone(),
            json!({"a": {"b": 1, "c": 2}, "l": [2, 3, 4]}),
        );
        check(".l[]", SelectorAction::Remove, doc.clone(), json!({"a": {"b": 1, "c": 2}, "l": []}));
        check(
            ".a.*",
            SelectorAction::Replace(json!(0)),
            doc.clone(),
            json!({"a": {"b": 0, "c": 0}, "l": [1, 2, 3, 4]}),
        );
        check(".a.b, .l", SelectorAction::Remove, doc, json!({"a": {"c": 2}}));
    }

    #[test]
    fn deep_wildcard_matches_at_any_depth_including_none() {
        let doc = json!({"id": 1, "x": {"id": 2, "y": [{"id": 3}, {"z": {"id": 4}}]}});
        check(".**.id", SelectorAction::Remove, doc, json!({"x": {"y": [{}, {"z": {}}]}}));
    }

    #[test]
    fn malformed_selectors_are_rejected_with_the_reason() {
        for (selector, reason) in [
            ("steps", "expected `.` or `[` starting a selector at column 1, found `s`"),
            (".", "expected a key, `*` or `**` after `.` at column 2, found the end"),
            (".a[", "expected an index, a range, a quoted key or `]` at column 4, found the end"),
            (".a[1", "expected `]` at column 5, found the end"),
            (".**", "expected a segment after `.**`"),
            (".**.a.**.b", "expected `.**` at most once per selector"),
            (".a b", "expected `,` or the end of the selector at column 4, found `b`"),
            ("[\"a]", "expected a closing `\"` at column 2, found `\"`"),
        ] {
            let err = Selector::parse(selector).unwrap_err();
            assert_eq!(err.to_string(), format!("invalid selector `{selector}`: {reason}"));
        }
    }
}
