//! What a page is drawn with beyond the trajectory: its title, the images it embeds, and the
//! match modes a diff page's check judged by.

use std::collections::BTreeMap;

use atif_normalize::MatchOutcome;

use crate::error::{Error, Result};

/// The media types a page embeds as `data:` URIs: raster images only, which cannot run
/// scripts.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Settings of a page: its title and the images of the trajectory, which the caller reads
/// (this crate does no I/O) and the page embeds.
///
/// The default has no title of its own (the agent's name is used) and no images; an image
/// the trajectory names but the options lack is shown as its path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewOptions {
    title: Option<String>,
    images: BTreeMap<String, Image>,
    match_modes: Vec<String>,
    match_outcome: Option<MatchOutcome>,
}

/// One image's bytes and media type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    media_type: String,
    bytes: Vec<u8>,
}

impl Image {
    /// The media type, such as `image/png`.
    pub fn media_type(&self) -> &str {
        &self.media_type
    }

    /// The image file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl ViewOptions {
    /// Options with no title and no images.
    pub fn new() -> ViewOptions {
        ViewOptions::default()
    }

    /// Sets the page's title (default: `None`, the agent's name).
    pub fn set_title(&mut self, title: Option<String>) -> &mut ViewOptions {
        self.title = title;
        self
    }

    /// The page's title, when set.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// Adds the image the trajectory names as `path`, to be embedded where it is referenced.
    ///
    /// # Errors
    ///
    /// [`Error::MediaType`] when `media_type` is not PNG, JPEG, GIF or WebP.
    pub fn add_image(
        &mut self,
        path: &str,
        media_type: &str,
        bytes: Vec<u8>,
    ) -> Result<&mut ViewOptions> {
        if !IMAGE_TYPES.contains(&media_type) {
            return Err(Error::MediaType {
                path: path.to_owned(),
                media_type: media_type.to_owned(),
            });
        }
        self.images.insert(path.to_owned(), Image { media_type: media_type.to_owned(), bytes });
        Ok(self)
    }

    /// Sets the match modes a diff page's check judged by (each as the user named it, such as
    /// `sequence any-order`) and what `atif_normalize::match_runs` found under them. The page's
    /// verdict is then theirs: it lists the differences the modes forbid and those they allow.
    /// Default: none, and the page judges by the Shape deltas.
    pub fn set_match_modes(
        &mut self,
        modes: Vec<String>,
        outcome: MatchOutcome,
    ) -> &mut ViewOptions {
        self.match_modes = modes;
        self.match_outcome = Some(outcome);
        self
    }

    /// The match modes set by [`ViewOptions::set_match_modes`], as named there.
    pub fn match_modes(&self) -> &[String] {
        &self.match_modes
    }

    /// What the match modes found, when set.
    pub fn match_outcome(&self) -> Option<&MatchOutcome> {
        self.match_outcome.as_ref()
    }

    /// The image added for `path`, if any.
    pub fn image(&self, path: &str) -> Option<&Image> {
        self.images.get(path)
    }
}
