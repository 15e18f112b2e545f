//! What a trajectory says about the log it was imported from, read from the head of its text.

use std::fmt;

use serde_json::Value;

/// What a trajectory says about the log it was imported from: `agent.name`, and the log format
/// `atif import` records in `agent.extra` ([`atif_import::LOG_FORMAT_KEY`]).
#[derive(Debug, Default)]
pub(crate) struct Origin {
    /// `agent.name`.
    pub(crate) agent: Option<String>,
    /// `agent.extra.log_format`.
    pub(crate) log_format: Option<String>,
}

impl Origin {
    /// The preset of the agent whose log format the run names, if it names a known one.
    pub(crate) fn preset(&self) -> Option<&'static str> {
        let format = self.log_format.as_deref()?.parse::<atif_import::Format>().ok()?;
        Some(format.agent()).filter(|name| atif_normalize::PRESETS.contains(name))
    }
}

/// Reads the root's `agent` member of a trajectory's text and stops there: a tool-call argument
/// or a message that mentions a log format deeper down never counts, and the rest of a long run
/// is not read. Text that is not a trajectory says nothing.
pub(crate) fn origin(bytes: &[u8]) -> Origin {
    use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

    #[derive(serde::Deserialize)]
    struct AgentHead {
        name: Option<Value>,
        extra: Option<Value>,
    }
    struct Root<'a>(&'a mut Origin);
    impl<'de> Visitor<'de> for Root<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a trajectory")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key != "agent" {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                let agent: AgentHead = map.next_value()?;
                let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
                self.0.agent = text(agent.name.as_ref());
                self.0.log_format = text(
                    agent.extra.as_ref().and_then(|extra| extra.get(atif_import::LOG_FORMAT_KEY)),
                );
                // Stopping here leaves the rest unread, which the caller's error ignores.
                return Ok(());
            }
            Ok(())
        }
    }
    impl<'de> DeserializeSeed<'de> for Root<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
            de.deserialize_map(self)
        }
    }

    let mut origin = Origin::default();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    // An error after the agent was read (the unread rest) or before (not a trajectory) leaves
    // what was found: nothing, in the second case.
    let _ = Root(&mut origin).deserialize(&mut de);
    origin
}
