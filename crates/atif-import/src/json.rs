//! The import's output text: the trajectory as pretty JSON with sorted keys, written one
//! step at a time.

use std::io;

use serde::Serialize;
use serde_json::ser::Formatter;
use serde_json::{Map, Value};

/// Writes `trajectory` as `serde_json::to_writer_pretty` writes its JSON value (sorted keys,
/// two-space indent), without ever building the value of the whole trajectory: each step
/// becomes a value of its own, is written, and is dropped before the next one.
///
/// # Errors
/// When `out` fails.
pub(crate) fn write_trajectory(
    trajectory: &atif_schema::Trajectory,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let t = trajectory;
    let root = atif_schema::Trajectory {
        schema_version: t.schema_version,
        session_id: t.session_id.clone(),
        trajectory_id: t.trajectory_id.clone(),
        agent: t.agent.clone(),
        steps: Vec::new(),
        notes: t.notes.clone(),
        final_metrics: t.final_metrics.clone(),
        continued_trajectory_ref: t.continued_trajectory_ref.clone(),
        extra: t.extra.clone(),
        subagent_trajectories: t.subagent_trajectories.clone(),
    };
    let Value::Object(root) = root.into_value() else {
        // A struct is written as an object; this keeps the function total all the same.
        return write_value(&trajectory.clone().into_value(), out);
    };
    let (mut before, mut after) = (Map::new(), Map::new());
    for (key, value) in root {
        match key.as_str().cmp("steps") {
            std::cmp::Ordering::Less => before.insert(key, value),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => after.insert(key, value),
        };
    }
    out.write_all(b"{")?;
    let mut first = true;
    for (key, value) in &before {
        member(out, key, &mut first)?;
        write_at(out, value, 1)?;
    }
    member(out, "steps", &mut first)?;
    out.write_all(b"[")?;
    for (idx, step) in trajectory.steps.iter().enumerate() {
        out.write_all(if idx == 0 { b"\n    " } else { b",\n    " })?;
        write_at(out, &step.clone().into_value(), 2)?;
    }
    if !trajectory.steps.is_empty() {
        out.write_all(b"\n  ")?;
    }
    out.write_all(b"]")?;
    for (key, value) in &after {
        member(out, key, &mut first)?;
        write_at(out, value, 1)?;
    }
    out.write_all(b"\n}")
}

/// Writes `value` as `serde_json::to_writer_pretty` does.
///
/// # Errors
/// When `out` fails.
pub(crate) fn write_value(value: &Value, out: &mut dyn io::Write) -> io::Result<()> {
    write_at(out, value, 0)
}

/// Starts the member `key` of the root object.
fn member(out: &mut dyn io::Write, key: &str, first: &mut bool) -> io::Result<()> {
    out.write_all(if *first { b"\n  " } else { b",\n  " })?;
    *first = false;
    write_at(out, key, 1)?;
    out.write_all(b": ")
}

/// Writes `value` as it is written `level` levels deep in a pretty document.
fn write_at<T: Serialize + ?Sized>(
    out: &mut dyn io::Write,
    value: &T,
    level: usize,
) -> io::Result<()> {
    let mut serializer =
        serde_json::Serializer::with_formatter(out, Indented { level, has_value: false });
    value.serialize(&mut serializer).map_err(io::Error::other)
}

/// serde_json's pretty formatter, started `level` levels deep.
struct Indented {
    level: usize,
    has_value: bool,
}

impl Indented {
    fn indent<W: ?Sized + io::Write>(&self, writer: &mut W) -> io::Result<()> {
        for _ in 0..self.level {
            writer.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            writer.write_all(b"\n")?;
            self.indent(writer)?;
        }
        writer.write_all(bracket)
    }

    fn item<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        writer.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(writer)
    }
}

impl Formatter for Indented {
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Writes `document` step by step and compares with serde_json's pretty text of the whole
    /// value.
    fn check(document: Value) {
        let trajectory: atif_schema::Trajectory = serde_json::from_value(document).unwrap();
        let whole = trajectory.clone().into_value();
        let mut text = Vec::new();
        write_trajectory(&trajectory, &mut text).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), serde_json::to_string_pretty(&whole).unwrap());
        let mut text = Vec::new();
        write_value(&whole, &mut text).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), serde_json::to_string_pretty(&whole).unwrap());
    }

    #[test]
    fn the_step_by_step_text_is_the_pretty_text_of_the_whole_trajectory() {
        let agent = json!({"name": "a", "version": "1", "extra": {"empty": {}, "list": []}});
        check(
            json!({"schema_version": "ATIF-v1.8", "session_id": "s", "agent": agent, "steps": []}),
        );
        let steps = json!([
            {"step_id": 1, "source": "user", "message": "é \"quoted\" \\ \n tab\t"},
            {"step_id": 2, "source": "agent", "message": "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuv",
             "extra": {"nested": [[], {}, [1, 2.5, -3e-7, null, true]], "GITHUB_TOKEN": "abc123xyz"}},
        ]);
        let subagent = json!({"schema_version": "ATIF-v1.8", "session_id": "password=hunter22",
            "agent": {"name": "sub", "version": "1"}, "steps": steps.clone()});
        check(json!({
            "schema_version": "ATIF-v1.8", "session_id": "token=abcdef123", "agent": agent,
            "steps": steps, "notes": "n", "extra": {"cwd": "/w"},
            "subagent_trajectories": [subagent],
        }));
    }
}
