//! `SchemaVersion`: the nine ATIF labels, `ATIF-v1.0` to `ATIF-v1.8`.

use std::fmt;

use crate::Error;

/// One of the nine ATIF schema versions. The label is data: it is kept on a round trip and
/// never rewritten except by an explicit upgrade.
///
/// The variants' docs name what each version added; the table that validation, `upgrade` and
/// the JSON Schemas read is [`CHANGES`](crate::CHANGES).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum SchemaVersion {
    /// `ATIF-v1.0`: the initial format.
    V1_0,
    /// `ATIF-v1.1`: root `extra`.
    V1_1,
    /// `ATIF-v1.2`: observations on system steps.
    V1_2,
    /// `ATIF-v1.3`: `metrics.completion_token_ids`.
    V1_3,
    /// `ATIF-v1.4`: `metrics.prompt_token_ids`.
    V1_4,
    /// `ATIF-v1.5`: `agent.tool_definitions`, `continued_trajectory_ref`, `is_copied_context`.
    V1_5,
    /// `ATIF-v1.6`: multimodal content parts (text and image).
    V1_6,
    /// `ATIF-v1.7`: embedded subagents, `trajectory_id`, `llm_call_count`, `extra` on tool calls
    /// and results.
    V1_7,
    /// `ATIF-v1.8`: audio content parts.
    V1_8,
}

impl SchemaVersion {
    /// Every version, oldest first.
    pub const ALL: [SchemaVersion; 9] = [
        SchemaVersion::V1_0,
        SchemaVersion::V1_1,
        SchemaVersion::V1_2,
        SchemaVersion::V1_3,
        SchemaVersion::V1_4,
        SchemaVersion::V1_5,
        SchemaVersion::V1_6,
        SchemaVersion::V1_7,
        SchemaVersion::V1_8,
    ];

    /// The newest version this crate knows.
    pub const LATEST: SchemaVersion = SchemaVersion::V1_8;

    /// The label as written in `schema_version`, e.g. `ATIF-v1.5`.
    pub fn label(self) -> &'static str {
        match self {
            SchemaVersion::V1_0 => "ATIF-v1.0",
            SchemaVersion::V1_1 => "ATIF-v1.1",
            SchemaVersion::V1_2 => "ATIF-v1.2",
            SchemaVersion::V1_3 => "ATIF-v1.3",
            SchemaVersion::V1_4 => "ATIF-v1.4",
            SchemaVersion::V1_5 => "ATIF-v1.5",
            SchemaVersion::V1_6 => "ATIF-v1.6",
            SchemaVersion::V1_7 => "ATIF-v1.7",
            SchemaVersion::V1_8 => "ATIF-v1.8",
        }
    }

    /// The minor number: 0 for `ATIF-v1.0`, 8 for `ATIF-v1.8`.
    pub fn minor(self) -> u8 {
        match self {
            SchemaVersion::V1_0 => 0,
            SchemaVersion::V1_1 => 1,
            SchemaVersion::V1_2 => 2,
            SchemaVersion::V1_3 => 3,
            SchemaVersion::V1_4 => 4,
            SchemaVersion::V1_5 => 5,
            SchemaVersion::V1_6 => 6,
            SchemaVersion::V1_7 => 7,
            SchemaVersion::V1_8 => 8,
        }
    }

    /// The version with this minor number, if there is one.
    pub fn from_minor(minor: u8) -> Option<SchemaVersion> {
        SchemaVersion::ALL.get(usize::from(minor)).copied()
    }
}

impl fmt::Display for SchemaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

impl TryFrom<&str> for SchemaVersion {
    type Error = Error;

    fn try_from(label: &str) -> Result<SchemaVersion, Error> {
        SchemaVersion::ALL
            .into_iter()
            .find(|version| version.label() == label)
            .ok_or_else(|| Error::UnknownVersion { label: label.to_owned() })
    }
}

impl std::str::FromStr for SchemaVersion {
    type Err = Error;

    fn from_str(label: &str) -> Result<SchemaVersion, Error> {
        SchemaVersion::try_from(label)
    }
}

impl serde::Serialize for SchemaVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.label())
    }
}

impl<'de> serde::Deserialize<'de> for SchemaVersion {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<SchemaVersion, D::Error> {
        let label = String::deserialize(deserializer)?;
        SchemaVersion::try_from(label.as_str()).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_round_trips_through_parsing() {
        for version in SchemaVersion::ALL {
            assert_eq!(SchemaVersion::try_from(version.label()).ok(), Some(version));
            assert_eq!(SchemaVersion::from_minor(version.minor()), Some(version));
        }
    }

    #[test]
    fn near_miss_labels_are_rejected_with_the_label_named() {
        for label in ["ATIF-v1.9", "ATIF-v2.0", "atif-v1.7", "ATIF-v1.7.1", "banana", "", "1.4"] {
            let err = SchemaVersion::try_from(label).expect_err(label);
            assert!(err.to_string().contains(&format!("`{label}`")), "{err}");
        }
    }
}
