//! Rules of content: a `message` or a result's `content` is text or an array of content parts
//! (text, image, audio), and each media part has a source with an allowed media type.

use serde_json::{Map, Value};

use crate::field_table::{ChangeKind, ObjectType};
use crate::validate::Rule;
use crate::validate::rules::pointer::Path;
use crate::validate::rules::{Hint, Walker, no_hint};

const IMAGE_MEDIA_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];
const AUDIO_MEDIA_TYPES: &[&str] = &[
    "audio/wav",
    "audio/mpeg",
    "audio/mp4",
    "audio/aac",
    "audio/ogg",
    "audio/flac",
    "audio/webm",
    "audio/aiff",
];

/// The kind of a media part.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Image,
    Audio,
}

impl Kind {
    /// The part's `type`.
    fn name(self) -> &'static str {
        match self {
            Kind::Image => "image",
            Kind::Audio => "audio",
        }
    }

    /// The type of the part's `source` object.
    fn source_type(self) -> ObjectType {
        match self {
            Kind::Image => ObjectType::ImageSource,
            Kind::Audio => ObjectType::AudioSource,
        }
    }
}

impl Walker<'_, '_> {
    /// `message` or a result's `content`: a string or an array of content parts.
    pub(super) fn content(&mut self, value: &Value, path: &Path<'_>) {
        match value {
            Value::String(_) if self.sentinel(value).is_none() => {}
            Value::Array(parts) => {
                self.feature(ChangeKind::Object(ObjectType::ContentPart), path);
                for (part_idx, part) in parts.iter().enumerate() {
                    self.part(part, &path.index(part_idx));
                }
            }
            Value::Object(_) => self.error(
                Rule::Type,
                path,
                "expected a string or an array of content parts, found an object: structured \
                 tool output must be serialised to text (e.g. with json.dumps) or kept in `extra`"
                    .to_owned(),
            ),
            other => {
                if self.sentinel(other).is_some() && !self.harbor() {
                    return; // reported as non-finite-number
                }
                self.error(
                    Rule::Type,
                    path,
                    format!(
                        "expected a string or an array of content parts, found {}",
                        self.describe(other)
                    ),
                );
            }
        }
    }

    fn part(&mut self, value: &Value, path: &Path<'_>) {
        let Some(object) = self.expect_object(
            value,
            path,
            "a content part object ({type, text} or {type, source})",
        ) else {
            return;
        };
        self.walk_fields(
            object,
            ObjectType::ContentPart,
            path,
            no_hint,
            |walker, key, value, here| {
                match key {
                    "type" | "text" => {
                        walker.string(value, here);
                    }
                    _ => {} // `source` is checked below, once the type is known
                }
            },
        );
        let Some(kind) = self.media_kind(object, path) else { return };
        let part_type = kind.name();
        if object.get("text").is_some_and(|text| !text.is_null()) {
            self.error(
                Rule::ContentPart,
                &path.key("text"),
                format!(
                    "an {part_type} part must not have `text`; put text in a separate text part"
                ),
            );
        }
        match object.get("source") {
            None | Some(Value::Null) => self.error(
                Rule::ContentPart,
                path,
                format!("an {part_type} part needs a `source` ({{media_type, path}})"),
            ),
            Some(source) => self.media_source(source, &path.key("source"), kind),
        }
    }

    /// The media kind of a content part, from its `type`: `None` for a text part (checked
    /// here) and for a missing or unknown type (reported here).
    fn media_kind(&mut self, object: &Map<String, Value>, path: &Path<'_>) -> Option<Kind> {
        let part_type = match object.get("type") {
            None | Some(Value::Null) => {
                self.missing(object, path, "type", "\"text\", \"image\" or \"audio\"");
                return None;
            }
            Some(Value::String(part_type)) => part_type.as_str(),
            Some(_) => return None, // a type error, reported by the field walk
        };
        match part_type {
            "text" => {
                self.text_part(object, path);
                None
            }
            "image" => Some(Kind::Image),
            "audio" => {
                self.feature(ChangeKind::ContentPartType("audio"), path);
                Some(Kind::Audio)
            }
            other => {
                let hint = match other {
                    "image_url" | "input_image" => {
                        " (OpenAI-style image parts must become {\"type\": \"image\", \"source\": {media_type, path}})"
                    }
                    "input_audio" => {
                        " (OpenAI-style audio parts must become {\"type\": \"audio\", \"source\": {media_type, path}})"
                    }
                    _ => "",
                };
                self.error(
                    Rule::Enum,
                    &path.key("type"),
                    format!("expected \"text\", \"image\" or \"audio\", found {other:?}{hint}"),
                );
                None
            }
        }
    }

    /// A text part has `text` and no `source`.
    fn text_part(&mut self, object: &Map<String, Value>, path: &Path<'_>) {
        let present = |key: &str| object.get(key).is_some_and(|value| !value.is_null());
        if !present("text") {
            self.error(
                Rule::ContentPart,
                path,
                "a text part needs `text` (a string, \"\" is fine)".to_owned(),
            );
        }
        if present("source") {
            self.error(
                Rule::ContentPart,
                &path.key("source"),
                "a text part must not have a `source`".to_owned(),
            );
        }
    }

    fn media_source(&mut self, value: &Value, path: &Path<'_>, kind: Kind) {
        let Some(object) = self.expect_object(value, path, "a source object ({media_type, path})")
        else {
            return;
        };
        if self.source_of_the_other_kind(object, path, kind) {
            return;
        }
        let hint: Hint = match kind {
            Kind::Image => image_source_hint,
            Kind::Audio => no_hint,
        };
        self.walk_fields(object, kind.source_type(), path, hint, |walker, key, value, here| {
            match key {
                "media_type" => {
                    if let Some(media) = walker.string(value, here) {
                        walker.media_type(media, here, kind);
                    }
                }
                "path" => {
                    walker.string(value, here);
                }
                "duration_sec" => walker.duration(value, here),
                _ => {}
            }
        });
        self.require(
            object,
            path,
            "media_type",
            "a media type such as \"image/png\" or \"audio/wav\"",
        );
        self.require(object, path, "path", "a path or URL of the media file");
    }

    /// Reports an image part with an audio source or the other way round.
    fn source_of_the_other_kind(
        &mut self,
        object: &Map<String, Value>,
        path: &Path<'_>,
        kind: Kind,
    ) -> bool {
        let media_type = object.get("media_type").and_then(Value::as_str);
        let looks = |prefix: &str| {
            media_type.is_some_and(|media| media.trim().to_lowercase().starts_with(prefix))
        };
        let (looks_audio, looks_image) = (looks("audio/"), looks("image/"));
        let message = match kind {
            Kind::Image if looks_audio || object.contains_key("duration_sec") && !looks_image => {
                "an image part's source is an audio source; use \"type\": \"audio\" for audio"
            }
            Kind::Audio if looks_image => {
                "an audio part's source is an image source; use \"type\": \"image\" for images"
            }
            _ => return false,
        };
        self.error(Rule::ContentPart, path, message.to_owned());
        true
    }

    fn duration(&mut self, value: &Value, path: &Path<'_>) {
        let Some(duration) = self.float(value, path) else { return };
        if duration.is_nan() || duration < 0.0 {
            self.error(
                Rule::Range,
                path,
                format!("expected a duration ≥ 0 seconds, found {duration}"),
            );
        }
    }

    fn media_type(&mut self, media: &str, path: &Path<'_>, kind: Kind) {
        match kind {
            Kind::Image => {
                if IMAGE_MEDIA_TYPES.contains(&media) {
                    return;
                }
                let hint = match media.to_lowercase().as_str() {
                    "image/jpg" => " (the registered name is \"image/jpeg\")",
                    lower if IMAGE_MEDIA_TYPES.contains(&lower) => {
                        " (image media types are case-sensitive)"
                    }
                    _ => "",
                };
                self.error(
                    Rule::MediaType,
                    path,
                    format!(
                        "expected \"image/jpeg\", \"image/png\", \"image/gif\" or \"image/webp\", \
                         found {media:?}{hint}"
                    ),
                );
            }
            Kind::Audio => {
                if normalize_audio_media_type(media).is_some() {
                    return;
                }
                self.error(
                    Rule::MediaType,
                    path,
                    format!(
                        "expected an audio media type ({} or a common alias such as audio/mp3), \
                         found {media:?}",
                        AUDIO_MEDIA_TYPES.join(", ")
                    ),
                );
            }
        }
    }
}

fn image_source_hint(key: &str) -> Option<&'static str> {
    (key == "duration_sec").then_some("duration_sec belongs to audio sources")
}

/// The canonical audio media type for `media`, after the aliases the references accept.
fn normalize_audio_media_type(media: &str) -> Option<&'static str> {
    let lower = media.trim().to_lowercase();
    let subtype = lower.strip_prefix("audio/")?;
    let canonical = match subtype {
        "mp3" | "mpga" | "x-mpeg" | "mpeg" => "audio/mpeg",
        "x-wav" | "wave" | "vnd.wave" | "wav" => "audio/wav",
        "x-m4a" | "m4a" | "mp4" => "audio/mp4",
        "x-aac" | "aac" => "audio/aac",
        "x-flac" | "flac" => "audio/flac",
        "x-aiff" | "aiff" => "audio/aiff",
        "ogg" => "audio/ogg",
        "webm" => "audio/webm",
        _ => return None,
    };
    Some(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audio_aliases_are_normalised() {
        assert_eq!(normalize_audio_media_type(" Audio/MP3 "), Some("audio/mpeg"));
        assert_eq!(normalize_audio_media_type("audio/x-wav"), Some("audio/wav"));
        assert_eq!(normalize_audio_media_type("audio/m4a"), Some("audio/mp4"));
        assert_eq!(normalize_audio_media_type("audio/opus"), None);
        assert_eq!(normalize_audio_media_type("image/png"), None);
    }
}
