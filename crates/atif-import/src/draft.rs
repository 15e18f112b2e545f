//! The trajectory draft every format module fills, atif-schema's shared one, and what only
//! the importers add on top: the image parts of the logs.
//!
//! The draft (steps, tool-call joins, metrics) and its one conversion into the typed model
//! live in atif-schema (`support::draft`), where both captures and the builder fill it too, so
//! the rules that make the output valid are written once.

/// The draft's step sources are the model's own.
pub(crate) use atif_schema::StepSource;
pub(crate) use atif_schema::support::draft::{
    FinalMetrics, Metrics, ObsResult, Part, Step, ToolCall, Trajectory,
};

/// An image part for a base64 payload, or a text placeholder when the media type is not one
/// ATIF accepts for images.
pub(crate) fn image_part(media_type: &str, base64: &str) -> Part {
    use atif_schema::ImageMediaType;

    let known = match media_type {
        "image/jpeg" => Some(ImageMediaType::Jpeg),
        "image/png" => Some(ImageMediaType::Png),
        "image/gif" => Some(ImageMediaType::Gif),
        "image/webp" => Some(ImageMediaType::Webp),
        _ => None,
    };
    match known {
        Some(known) => {
            Part::Image { media_type: known, path: format!("data:{media_type};base64,{base64}") }
        }
        None => Part::Text(format!(
            "[image of type {media_type} left out: ATIF accepts image/jpeg, image/png, image/gif, image/webp]"
        )),
    }
}

/// An image part for a `data:` URL (Codex `input_image`), or a placeholder text.
pub(crate) fn image_url_part(url: Option<&str>) -> Part {
    match url.and_then(|u| u.strip_prefix("data:")).and_then(|rest| rest.split_once(";base64,")) {
        Some((media_type, data)) => image_part(media_type, data),
        None => match url {
            Some(url) => Part::Text(format!("[image {url}]")),
            None => Part::Text("[image]".to_owned()),
        },
    }
}
