//! What a page is drawn with beyond the trajectory: its title and the images it embeds.

use std::collections::BTreeMap;

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

    /// The image added for `path`, if any.
    pub fn image(&self, path: &str) -> Option<&Image> {
        self.images.get(path)
    }
}
