//! Selectors in insta's redaction grammar (`.steps[].extra.request_id`, `.**.request_id`).

use crate::{Error, Result};

/// A parsed selector.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Selector {
    raw: String,
}

impl Selector {
    /// Parses `text`, which must start with `.`.
    pub(crate) fn parse(text: &str) -> Result<Selector> {
        if !text.starts_with('.') {
            return Err(Error::InvalidSelector {
                selector: text.to_owned(),
                reason: "a selector starts with `.`".to_owned(),
            });
        }
        Ok(Selector { raw: text.to_owned() })
    }
}
