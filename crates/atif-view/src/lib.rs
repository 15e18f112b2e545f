//! See the run: ATIF trajectories as self-contained HTML pages, for the reviewer of a failing
//! golden who never ran the agent.
//!
//! Which function for which job:
//! - One run: [`render_run`] draws a normalised trajectory: its steps on a timeline coloured by
//!   source, reasoning and long content folded, tool calls with their results, subagents
//!   nested in the step that delegated to them, errors and a crash marked, the Shape and the
//!   tokens, and jumps to a step, a tool's next call and the next error.
//! - Two runs: [`render_diff`] draws a golden beside a new run, aligned as
//!   `atif_normalize::compare` aligns them, the page opening on the first divergence.
//! - An envelope verdict: [`render_envelope`] draws the golden envelope beside the new runs'
//!   as bar charts, each field that moved highlighted.
//! - Images: [`image_paths`] lists the files a run references; read them and hand the bytes to
//!   [`ViewOptions::add_image`]. The same [`ViewOptions`] set the page's title.
//!
//! The key design decision: the page is a file, and the trajectory is data, never code. The
//! page fetches nothing (its Content-Security-Policy allows no source, only its one style sheet
//! and one script by their SHA-256 hashes, and images as `data:` URIs), so it works offline
//! from `file://` and leaks nothing; every string from the trajectory is escaped, so a message
//! holding `<script>` shows as text. The crate does no I/O.
//!
//! # Example
//!
//! ```
//! use atif_view::{ViewOptions, render_run};
//! use serde_json::json;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let run = json!({
//!     "schema_version": "ATIF-v1.8",
//!     "agent": {"name": "demo", "version": "1"},
//!     "steps": [{"step_id": 1, "source": "user", "message": "<script>alert(1)</script>"}]
//! });
//! let normalized = atif_normalize::normalize(&run, &atif_normalize::NormalizeOptions::default())?;
//! let page = render_run(&normalized, &ViewOptions::new())?;
//! assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
//! assert!(!page.contains("<script>alert"));
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod diff;
mod envelope;
mod error;
mod html;
mod lane;
mod options;
mod run;

pub use diff::render_diff;
pub use envelope::render_envelope;
pub use error::{Error, Result};
pub use options::{Image, ViewOptions};
pub use run::{image_paths, render_run};

/// What other crates of this workspace share with this one (the CLI's JUnit XML): not public
/// API, and free to change in any release.
#[doc(hidden)]
pub mod support {
    /// `text` as markup text or an attribute value, escaped by the one escaper pages use.
    pub fn escape_markup(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        crate::html::escape_into(&mut out, text);
        out
    }
}
