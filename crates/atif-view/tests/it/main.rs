//! Integration tests of the pages: what a run's page holds, and that nothing from a trajectory
//! can act as markup or fetch anything.
#![allow(clippy::unwrap_used, reason = "test code")]

mod diff;
mod run;

use atif_normalize::NormalizeOptions;
use serde_json::Value;

/// `run`, normalised as `atif view` normalises it.
fn normalized(run: &Value) -> Value {
    atif_normalize::normalize(run, &NormalizeOptions::default()).unwrap()
}
