//! See the run: an ATIF trajectory as one self-contained HTML page.
//!
//! A failing golden is reviewed by somebody who never ran the agent. [`render_run`] draws one
//! normalised trajectory as a page a browser opens from `file://`: its steps on a timeline
//! coloured by source, reasoning and long content folded (with their sizes), tool calls with
//! their arguments and results, subagents nested inside the step that delegated to them, model
//! names, errors and a crashed run's last step marked, the Shape, a token bar per step and the
//! totals, and jumps to a step, to the next call of a tool and to the next error.
//!
//! The key design decision: the page is a file, and the trajectory is data, never code. The
//! page fetches nothing (its Content-Security-Policy allows no source at all, only its one
//! style sheet and its one script by their SHA-256 hashes, and images as `data:` URIs), so it
//! works offline and leaks nothing; every string from the trajectory is escaped, so a message
//! holding `<script>` shows as text. Images are embedded from the bytes the caller gives in
//! [`ViewOptions`]: the crate does no I/O.
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

/// Helpers for other crates of this workspace (the CLI's JUnit XML), not a public API.
#[doc(hidden)]
pub mod _support {
    /// `text` as markup text or an attribute value, escaped by the one escaper pages use.
    pub fn escape_markup(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        crate::html::escape_into(&mut out, text);
        out
    }
}
