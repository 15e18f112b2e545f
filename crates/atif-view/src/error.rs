//! The error type of this crate.

/// Everything that can go wrong while rendering a page.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The document is not a trajectory: its root is not an object with a `steps` array.
    #[error("not a trajectory at {pointer}: expected {expected}")]
    NotATrajectory {
        /// JSON Pointer of the offending value (`""` is the root).
        pointer: String,
        /// What was expected there.
        expected: &'static str,
    },
    /// An image was given with a media type a page does not embed.
    #[error(
        "image `{path}` has media type `{media_type}`; expected image/png, image/jpeg, image/gif or image/webp"
    )]
    MediaType {
        /// The image's path, as the trajectory names it.
        path: String,
        /// The media type given.
        media_type: String,
    },
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
