//! `assert_golden!` and, behind the `insta` feature, `assert_trajectory_snapshot!`, with the
//! support functions they expand to.

use std::borrow::Cow;
use std::path::Path;

use crate::{Outcome, ProjectConfig, Result, Settings};

/// Asserts that a trajectory behaves like its golden file, in the mode `ATIF_GOLDEN` selects.
///
/// The golden lives in the settings' golden folder (default `tests/golden/` under the calling
/// crate's `CARGO_MANIFEST_DIR`) and is named after the test's function path:
/// `assert_golden!(run)` in `fn subagents_run()` of the integration test `fixtures` uses
/// `tests/golden/fixtures__subagents_run.json`. A parametrised test whose harness name extends
/// the function path (rstest runs `fn sizes` as `sizes::case_1_small`, ...) keeps that part:
/// `fixtures__sizes__case_1_small.json`. A test that asserts several goldens, or one
/// generated per case some other way, gives each a name: `assert_golden!(name: "case_a", run)`.
///
/// ```text
/// assert_golden!(value);
/// assert_golden!(value, &settings);
/// assert_golden!(name: "case_a", value);
/// assert_golden!(name: "case_a", value, &settings);
/// ```
///
/// Without settings it uses those bound to the thread ([`Settings::bind`]).
/// The project file, `atif.toml`, in the crate's folder or the nearest one above it (a
/// workspace's root, say), applies to the golden as `atif check` applies it: its defaults and
/// each rule whose glob matches the golden's path relative to the file's folder, under what the
/// settings set by hand ([`Settings`] says which, and `set_project_file(false)` turns it off).
///
/// # Panics
/// With the failure message when the check fails or cannot run, including when two assertions
/// in this process resolve to the same golden file.
#[macro_export]
macro_rules! assert_golden {
    (name: $name:expr, $value:expr, $settings:expr $(,)?) => {
        $crate::__assert_golden_impl!(::std::option::Option::Some($name), $value, $settings)
    };
    (name: $name:expr, $value:expr $(,)?) => {
        $crate::__assert_golden_impl!(
            ::std::option::Option::Some($name),
            $value,
            &$crate::Settings::clone_current()
        )
    };
    ($value:expr, $settings:expr $(,)?) => {
        $crate::__assert_golden_impl!(::std::option::Option::None, $value, $settings)
    };
    ($value:expr $(,)?) => {
        $crate::__assert_golden_impl!(
            ::std::option::Option::None,
            $value,
            &$crate::Settings::clone_current()
        )
    };
}

/// Expands `assert_golden!`: captures the caller's function path and manifest folder.
#[doc(hidden)]
#[macro_export]
macro_rules! __assert_golden_impl {
    ($name:expr, $value:expr, $settings:expr) => {{
        fn f() {}
        $crate::__private::assert_golden(
            ::std::env!("CARGO_MANIFEST_DIR"),
            ::std::env!("CARGO_PKG_NAME"),
            $crate::__private::type_name_of(f),
            $name,
            &$value,
            $settings,
        )
    }};
}

/// A [`LiveEnvelope`](crate::LiveEnvelope) of `runs` runs, its envelope golden named after the
/// test function as [`assert_golden!`] names a golden, with `.envelope.json` for `.json`:
/// `live_envelope!(runs: 20)` in `fn triage()` of the integration test `live` uses
/// `tests/golden/live__triage.envelope.json`.
///
/// ```text
/// live_envelope!(runs: 20)
/// live_envelope!(runs: 20, &settings)
/// live_envelope!(name: "case_a", runs: 20)
/// live_envelope!(name: "case_a", runs: 20, &settings)
/// ```
///
/// Without settings it uses those bound to the thread ([`Settings::bind`](crate::Settings::bind)).
/// It evaluates to a [`Result`](crate::Result): [`Error::LiveRefused`](crate::Error::LiveRefused)
/// on CI unless `ATIF_LIVE=1`, [`Error::DuplicateGolden`](crate::Error::DuplicateGolden) when
/// another assertion of this process uses the same file.
#[macro_export]
macro_rules! live_envelope {
    (name: $name:expr, runs: $runs:expr, $settings:expr $(,)?) => {
        $crate::__live_envelope_impl!(::std::option::Option::Some($name), $runs, $settings)
    };
    (name: $name:expr, runs: $runs:expr $(,)?) => {
        $crate::__live_envelope_impl!(
            ::std::option::Option::Some($name),
            $runs,
            &$crate::Settings::clone_current()
        )
    };
    (runs: $runs:expr, $settings:expr $(,)?) => {
        $crate::__live_envelope_impl!(::std::option::Option::None, $runs, $settings)
    };
    (runs: $runs:expr $(,)?) => {
        $crate::__live_envelope_impl!(
            ::std::option::Option::None,
            $runs,
            &$crate::Settings::clone_current()
        )
    };
}

/// Expands `live_envelope!`: captures the caller's function path and manifest folder.
#[doc(hidden)]
#[macro_export]
macro_rules! __live_envelope_impl {
    ($name:expr, $runs:expr, $settings:expr) => {{
        fn f() {}
        $crate::__private::live_envelope(
            ::std::env!("CARGO_MANIFEST_DIR"),
            ::std::env!("CARGO_PKG_NAME"),
            $crate::__private::type_name_of(f),
            $name,
            $runs,
            $settings,
        )
    }};
}

/// Normalises a trajectory and hands its canonical text to `insta::assert_snapshot!`, so a
/// team on `cargo insta review` keeps its workflow (cargo feature `insta`).
///
/// Uses the settings bound to the thread for normalisation; insta's own settings decide where
/// the snapshot lives and how it is named.
///
/// # Panics
/// When the value cannot be normalised, or as insta does when the snapshot differs.
#[cfg(feature = "insta")]
#[macro_export]
macro_rules! assert_trajectory_snapshot {
    ($value:expr $(,)?) => {{
        let canonical = $crate::__private::snapshot_text(&$value);
        $crate::__private::insta::assert_snapshot!(canonical);
    }};
    ($name:expr, $value:expr $(,)?) => {{
        let canonical = $crate::__private::snapshot_text(&$value);
        $crate::__private::insta::assert_snapshot!($name, canonical);
    }};
}

/// Support for the macros; not a public API.
#[doc(hidden)]
pub mod __private {
    use std::path::Path;

    use atif_schema::error_chain;
    use serde::Serialize;

    use crate::{Error, Settings};

    #[cfg(feature = "insta")]
    pub use insta;

    /// The type name of `f`: the path of the function `f` is defined in, plus `::f`.
    pub fn type_name_of<T>(_: T) -> &'static str {
        std::any::type_name::<T>()
    }

    /// The body of `assert_golden!`.
    ///
    /// # Panics
    /// With the failure message when the check fails or cannot run.
    #[track_caller]
    pub fn assert_golden<T: Serialize + ?Sized>(
        manifest_dir: &str,
        package: &str,
        function_path: &str,
        name: Option<&str>,
        actual: &T,
        settings: &Settings,
    ) {
        let result = serde_json::to_value(actual)
            .map_err(|source| Error::Serialize { source })
            .and_then(|actual| {
                let caller =
                    super::Caller { manifest_dir: Path::new(manifest_dir), package, function_path };
                super::assert_value(&caller, name, actual, settings)
            });
        match result {
            Ok(outcome) => super::print_outcome(&outcome),
            Err(err) => panic!("{}", error_chain(&err)),
        }
    }

    /// The body of `live_envelope!`.
    ///
    /// # Errors
    /// As [`LiveEnvelope::new`](crate::LiveEnvelope::new), and when the file is claimed twice.
    pub fn live_envelope(
        manifest_dir: &str,
        package: &str,
        function_path: &str,
        name: Option<&str>,
        runs: u32,
        settings: &Settings,
    ) -> crate::Result<crate::LiveEnvelope> {
        let test = crate::name::current_test_name(function_path);
        let dir = settings.resolved_golden_dir(Path::new(manifest_dir));
        let path = dir.join(crate::live::envelope_file_name(function_path, name));
        let settings = &super::with_project_file(settings, Path::new(manifest_dir), &path)?;
        crate::name::claim(&path, &test)?;
        let mut live = crate::LiveEnvelope::new(path, runs, settings)?;
        if settings.update_command().is_none() {
            let command = format!("{}=update cargo test -p {package} {test}", crate::MODE_ENV);
            live.set_update_command(&command);
        }
        Ok(live)
    }

    /// The body of `assert_trajectory_snapshot!`: the canonical text, or a panic.
    ///
    /// # Panics
    /// When the value cannot be normalised.
    #[cfg(feature = "insta")]
    #[track_caller]
    pub fn snapshot_text<T: Serialize + ?Sized>(actual: &T) -> String {
        match crate::canonical_text(actual, &Settings::clone_current()) {
            Ok(text) => text,
            Err(err) => panic!("{}", error_chain(&err)),
        }
    }
}

/// Where an `assert_golden!` is written: the crate's folder and package, and the function.
pub(crate) struct Caller<'a> {
    pub(crate) manifest_dir: &'a Path,
    pub(crate) package: &'a str,
    pub(crate) function_path: &'a str,
}

pub(crate) fn assert_value(
    caller: &Caller<'_>,
    name: Option<&str>,
    actual: serde_json::Value,
    settings: &Settings,
) -> Result<Outcome> {
    let Caller { manifest_dir, package, function_path } = *caller;
    let test = crate::name::current_test_name(function_path);
    let case = crate::name::parametrised_case(function_path, std::thread::current().name());
    let name = match (case, name) {
        (Some(case), Some(name)) => Some(format!("{case}__{name}")),
        (Some(case), None) => Some(case),
        (None, name) => name.map(str::to_owned),
    };
    let dir = settings.resolved_golden_dir(manifest_dir);
    let path = dir.join(crate::name::golden_file_name(function_path, name.as_deref()));
    let settings = &with_project_file(settings, manifest_dir, &path)?;
    crate::name::claim(&path, &test)?;
    let who = crate::check::Test { name: &test, package: Some(package) };
    crate::check::check_named(&path, actual, settings, Some(&who))
}

#[allow(clippy::print_stderr, reason = "an assertion macro reports what it wrote, like insta")]
pub(crate) fn print_outcome(outcome: &Outcome) {
    match outcome {
        Outcome::Matched { .. } => {}
        Outcome::Created { .. } | Outcome::Changed { .. } | Outcome::Unchanged { .. } => {
            eprintln!("{outcome}");
        }
    }
}

/// `settings` with the project file applied to the golden at `golden`, when they ask for it and
/// the crate's folder or one above it holds one.
fn with_project_file<'a>(
    settings: &'a Settings,
    manifest_dir: &Path,
    golden: &Path,
) -> Result<Cow<'a, Settings>> {
    if !settings.project_file() {
        return Ok(Cow::Borrowed(settings));
    }
    let Some(project) = ProjectConfig::find(manifest_dir)? else {
        return Ok(Cow::Borrowed(settings));
    };
    let mut applied = settings.clone();
    project.config_for(golden).apply_where_unset(&mut applied)?;
    Ok(Cow::Owned(applied))
}
