//! [`Settings`]: how goldens are found, compared and written, bindable to a scope.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use atif_normalize::{DiffOptions, MatchOptions, NormalizeOptions};

use crate::Mode;

thread_local! {
    static CURRENT: RefCell<Arc<Settings>> = RefCell::new(Arc::new(Settings::default()));
}

/// How goldens are found, compared and written.
///
/// A plain value with setters, in the style of insta's settings. The defaults:
///
/// | setting              | default                                                       |
/// |----------------------|---------------------------------------------------------------|
/// | `golden_dir`         | `tests/golden` (relative paths resolve against the calling crate's `CARGO_MANIFEST_DIR`) |
/// | `token_tolerance`    | `0.0`: token counts must match exactly                        |
/// | `compare_content`    | `true`: the content hash is compared                          |
/// | `normalize_options`  | [`NormalizeOptions::default`], the documented contract        |
/// | `keep_secrets`       | `false`: secrets become `<redacted:KIND>` in goldens and pending files |
/// | `mode`               | `None`: read from `ATIF_GOLDEN` and `CI` at each check        |
/// | `update_command`     | `None`: `ATIF_GOLDEN=update cargo test <test name>`           |
/// | `full_diff_command`  | `None`: `atif diff --full GOLDEN PENDING` when a pending file was written |
/// | `max_diff_places`    | `3` changed places (steps, subagents) in a failure's diff     |
/// | `log_file`           | `None`: the check log named by `ATIF_GOLDEN_LOG`, if set      |
/// | `project_file`       | `true`: [`assert_golden!`](crate::assert_golden) applies `atif.toml`, found upward from the crate's folder |
/// | `live`               | `None`: live runs ([`LiveEnvelope`](crate::LiveEnvelope)) are allowed unless `CI` is set and `ATIF_LIVE` is not `1` |
/// | `match_options`      | `None`: a run matches when its Shape does; with match modes, when [`match_runs`](atif_normalize::match_runs) passes it |
///
/// The project file ([`ProjectConfig`](crate::ProjectConfig)) sets a golden's preset, volatile
/// keys and masks, token tolerance and content comparison; a setting made here
/// ([`set_normalize_options`](Settings::set_normalize_options) or
/// [`normalize_options_mut`](Settings::normalize_options_mut),
/// [`set_token_tolerance`](Settings::set_token_tolerance),
/// [`set_compare_content`](Settings::set_compare_content),
/// [`set_match_options`](Settings::set_match_options)) wins over the file, as a flag of
/// `atif check` does.
///
/// [`assert_golden!`](crate::assert_golden) uses the settings bound to the current thread
/// ([`Settings::bind`], [`Settings::bind_to_scope`]) unless given some explicitly.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    golden_dir: PathBuf,
    token_tolerance: f64,
    compare_content: bool,
    normalize_options: NormalizeOptions,
    mode: Option<Mode>,
    update_command: Option<String>,
    full_diff_command: Option<String>,
    max_diff_places: usize,
    log_file: Option<PathBuf>,
    project_file: bool,
    live: Option<bool>,
    match_options: Option<MatchOptions>,
    /// Which of the settings the project file may set were set here, and so win over it.
    set_here: SetHere,
}

/// The settings a project file may set that were set on a [`Settings`] value by hand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SetHere {
    pub(crate) normalize_options: bool,
    pub(crate) token_tolerance: bool,
    pub(crate) compare_content: bool,
    pub(crate) match_options: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            golden_dir: PathBuf::from("tests/golden"),
            token_tolerance: 0.0,
            compare_content: true,
            normalize_options: NormalizeOptions::default(),
            mode: None,
            update_command: None,
            full_diff_command: None,
            max_diff_places: 3,
            log_file: None,
            project_file: true,
            set_here: SetHere::default(),
            live: None,
            match_options: None,
        }
    }
}

impl Settings {
    /// The default settings (see the table above).
    pub fn new() -> Settings {
        Settings::default()
    }

    /// A copy of the settings bound to the current thread (the defaults when none are bound).
    pub fn clone_current() -> Settings {
        CURRENT.with(|current| Settings::clone(&current.borrow()))
    }

    /// Runs `f` with these settings bound to the current thread, then restores the previous
    /// ones (also when `f` panics).
    pub fn bind<R>(&self, f: impl FnOnce() -> R) -> R {
        let _guard = self.bind_to_scope();
        f()
    }

    /// Binds these settings to the current thread until the returned guard is dropped.
    pub fn bind_to_scope(&self) -> SettingsBindDropGuard {
        let previous = CURRENT.with(|current| current.replace(Arc::new(self.clone())));
        SettingsBindDropGuard { previous: Some(previous), _not_send: PhantomData }
    }

    /// Sets the folder goldens live in; a relative path is resolved against the calling
    /// crate's `CARGO_MANIFEST_DIR` by [`assert_golden!`](crate::assert_golden).
    pub fn set_golden_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Settings {
        self.golden_dir = dir.into();
        self
    }

    /// The folder goldens live in, as set.
    pub fn golden_dir(&self) -> &Path {
        &self.golden_dir
    }

    /// The golden folder for a crate whose manifest folder is `manifest_dir`.
    pub fn resolved_golden_dir(&self, manifest_dir: &Path) -> PathBuf {
        manifest_dir.join(&self.golden_dir)
    }

    /// Sets the relative band the two token counts may move in (`0.1` = 10%); a golden of
    /// zero tokens still requires zero.
    pub fn set_token_tolerance(&mut self, tolerance: f64) -> &mut Settings {
        self.token_tolerance = tolerance;
        self.set_here.token_tolerance = true;
        self
    }

    /// The relative token tolerance.
    pub fn token_tolerance(&self) -> f64 {
        self.token_tolerance
    }

    /// Whether the content hash is compared; turn it off for runs against a live model, where
    /// only the structure (steps, tools, models, crash) is expected to be stable.
    pub fn set_compare_content(&mut self, compare: bool) -> &mut Settings {
        self.compare_content = compare;
        self.set_here.compare_content = true;
        self
    }

    /// Whether the content hash is compared.
    pub fn compare_content(&self) -> bool {
        self.compare_content
    }

    /// Replaces the normalisation options applied to both the golden and the run.
    pub fn set_normalize_options(&mut self, options: NormalizeOptions) -> &mut Settings {
        self.normalize_options = options;
        self.set_here.normalize_options = true;
        self
    }

    /// The normalisation options.
    pub fn normalize_options(&self) -> &NormalizeOptions {
        &self.normalize_options
    }

    /// The normalisation options, to add a volatile key, selector or masker in place.
    pub fn normalize_options_mut(&mut self) -> &mut NormalizeOptions {
        self.set_here.normalize_options = true;
        &mut self.normalize_options
    }

    /// Keeps secrets in goldens and pending files (`true`) instead of replacing each with a
    /// `<redacted:KIND>` marker (`false`, the default): for a local investigation only, never
    /// for a golden that is committed. Turning it back off restores the default scanner.
    pub fn set_keep_secrets(&mut self, keep: bool) -> &mut Settings {
        let scanner = (!keep).then(atif_normalize::atif_secrets::Scanner::default);
        self.normalize_options.set_secret_scanner(scanner);
        self
    }

    /// Whether secrets are kept (no scanner in the normalisation options).
    pub fn keep_secrets(&self) -> bool {
        self.normalize_options.secret_scanner().is_none()
    }

    /// Forces a mode; `None` (the default) reads `ATIF_GOLDEN` and `CI` at each check.
    pub fn set_mode(&mut self, mode: Option<Mode>) -> &mut Settings {
        self.mode = mode;
        self
    }

    /// The forced mode, if any.
    pub fn mode(&self) -> Option<Mode> {
        self.mode
    }

    /// Sets the command failure messages name as the fix (`atif check --update GOLDEN ACTUAL`
    /// in the CLI); `None` means `ATIF_GOLDEN=update cargo test <test name>` (with `-p PACKAGE`
    /// under [`assert_golden!`](crate::assert_golden)).
    pub fn set_update_command(&mut self, command: Option<String>) -> &mut Settings {
        self.update_command = command;
        self
    }

    /// The command failure messages name as the fix, if set.
    pub fn update_command(&self) -> Option<&str> {
        self.update_command.as_deref()
    }

    /// Sets the command a cut failure message names to print the whole diff (`atif check` names
    /// `atif diff --full GOLDEN ACTUAL`); `None` names `atif diff --full GOLDEN PENDING` when a
    /// pending file was written.
    pub fn set_full_diff_command(&mut self, command: Option<String>) -> &mut Settings {
        self.full_diff_command = command;
        self
    }

    /// The command a cut failure message names to print the whole diff, if set.
    pub fn full_diff_command(&self) -> Option<&str> {
        self.full_diff_command.as_deref()
    }

    /// Sets how many changed places (a step, the fields outside the steps, a subagent) the
    /// unified diff of a failure message shows before it counts the rest.
    pub fn set_max_diff_places(&mut self, places: usize) -> &mut Settings {
        self.max_diff_places = places;
        self
    }

    /// How many changed places the unified diff of a failure message shows.
    pub fn max_diff_places(&self) -> usize {
        self.max_diff_places
    }

    /// Sets the check log, the file each check appends a line to; `None` (the default) uses the
    /// file named by `ATIF_GOLDEN_LOG`, and no check log when that is unset.
    pub fn set_log_file(&mut self, log: Option<PathBuf>) -> &mut Settings {
        self.log_file = log;
        self
    }

    /// The check log set on these settings, if any.
    pub fn log_file(&self) -> Option<&Path> {
        self.log_file.as_deref()
    }

    /// Allows (`Some(true)`) or refuses (`Some(false)`) live runs whatever the environment;
    /// `None` (the default) refuses them on CI (`CI` set) unless `ATIF_LIVE=1`, since live runs
    /// call the model and cost money.
    pub fn set_live(&mut self, live: Option<bool>) -> &mut Settings {
        self.live = live;
        self
    }

    /// Whether live runs are allowed or refused whatever the environment, if set.
    pub fn live(&self) -> Option<bool> {
        self.live
    }

    /// Whether [`assert_golden!`](crate::assert_golden) applies the project file, `atif.toml`,
    /// found in the calling crate's folder or the nearest one above it (`true`, the default);
    /// `false` checks with these settings alone.
    pub fn set_project_file(&mut self, apply: bool) -> &mut Settings {
        self.project_file = apply;
        self
    }

    /// Judges a run that differs from its golden by these match modes (the tool sequence in
    /// `in-order`, `any-order`, `subset` or `superset`, the arguments' modes, the count bands)
    /// instead of by its Shape, as `atif check --sequence …` does; `None` (the default) is the
    /// Shape comparison. Fewer turns never pass. Update mode still writes the run.
    ///
    /// ```
    /// use atif_golden::Settings;
    /// use atif_normalize::{MatchOptions, SequenceMatch};
    ///
    /// let mut modes = MatchOptions::default();
    /// modes.set_sequence(SequenceMatch::AnyOrder);
    /// let mut settings = Settings::new();
    /// settings.set_match_options(Some(modes));
    /// assert_eq!(settings.match_options().map(|m| m.sequence()), Some(SequenceMatch::AnyOrder));
    /// ```
    pub fn set_match_options(&mut self, options: Option<MatchOptions>) -> &mut Settings {
        self.match_options = options;
        self.set_here.match_options = true;
        self
    }

    /// The match modes a differing run is judged by, if any (see
    /// [`set_match_options`](Settings::set_match_options)).
    pub fn match_options(&self) -> Option<&MatchOptions> {
        self.match_options.as_ref()
    }

    /// Whether [`assert_golden!`](crate::assert_golden) applies the project file.
    pub fn project_file(&self) -> bool {
        self.project_file
    }

    /// Which settings a project file may set were set here.
    pub(crate) fn set_here(&self) -> SetHere {
        self.set_here
    }

    /// Takes a project file's value for a setting not set here, which stays "not set here".
    pub(crate) fn take_from_project(
        &mut self,
        options: Option<NormalizeOptions>,
        token_tolerance: Option<f64>,
        compare_content: Option<bool>,
    ) {
        if let Some(mut options) = options {
            // The secret scanner is not the file's to set: `set_keep_secrets` holds.
            options.set_secret_scanner(self.normalize_options.secret_scanner().cloned());
            self.normalize_options = options;
        }
        if let Some(tolerance) = token_tolerance {
            self.token_tolerance = tolerance;
        }
        if let Some(compare) = compare_content {
            self.compare_content = compare;
        }
    }

    /// Takes a project file's match modes when none were set here.
    pub(crate) fn take_match_from_project(&mut self, options: Option<MatchOptions>) {
        if !self.set_here.match_options && options.is_some() {
            self.match_options = options;
        }
    }

    /// The Shape comparison options these settings describe.
    pub fn diff_options(&self) -> DiffOptions {
        let mut options = DiffOptions::default();
        options.set_token_tolerance(self.token_tolerance);
        options.set_compare_content(self.compare_content);
        options
    }
}

/// Restores the previously bound settings when dropped; returned by
/// [`Settings::bind_to_scope`]. It stays on the thread that created it.
#[derive(Debug)]
#[must_use = "the settings are unbound as soon as the guard is dropped"]
pub struct SettingsBindDropGuard {
    previous: Option<Arc<Settings>>,
    // A raw pointer makes the guard neither Send nor Sync: it must be dropped on its thread.
    _not_send: PhantomData<*const ()>,
}

impl Drop for SettingsBindDropGuard {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            CURRENT.with(|current| current.replace(previous));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones() {
        let settings = Settings::new();
        assert_eq!(settings.golden_dir(), Path::new("tests/golden"));
        assert_eq!(settings.token_tolerance(), 0.0);
        assert!(settings.compare_content());
        assert_eq!(settings.mode(), None);
        assert_eq!(settings.update_command(), None);
        assert_eq!(settings.max_diff_places(), 3);
        assert_eq!(settings.normalize_options(), &NormalizeOptions::default());
        assert!(!settings.keep_secrets());
    }

    #[test]
    fn keep_secrets_removes_the_scanner_and_back() {
        let mut settings = Settings::new();
        settings.set_keep_secrets(true);
        assert!(settings.keep_secrets());
        assert_eq!(settings.normalize_options().secret_scanner(), None);
        settings.set_keep_secrets(false);
        assert_eq!(settings, Settings::new());
    }

    #[test]
    fn binding_applies_inside_the_scope_and_restores_afterwards() {
        let mut outer = Settings::new();
        outer.set_token_tolerance(0.25);
        let mut inner = Settings::new();
        inner.set_compare_content(false);
        outer.bind(|| {
            assert_eq!(Settings::clone_current().token_tolerance(), 0.25);
            inner.bind(|| {
                let current = Settings::clone_current();
                assert!(!current.compare_content());
                assert_eq!(current.token_tolerance(), 0.0);
            });
            assert!(Settings::clone_current().compare_content());
        });
        assert_eq!(Settings::clone_current(), Settings::default());
    }

    #[test]
    fn a_panic_inside_bind_still_restores_the_previous_settings() {
        let mut settings = Settings::new();
        settings.set_max_diff_places(1);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            settings.bind(|| panic!("boom"))
        }));
        assert!(result.is_err());
        assert_eq!(Settings::clone_current().max_diff_places(), 3);
    }

    #[test]
    fn relative_golden_dirs_resolve_against_the_manifest_dir() {
        let settings = Settings::new();
        assert_eq!(
            settings.resolved_golden_dir(Path::new("/repo/crate")),
            Path::new("/repo/crate/tests/golden")
        );
        let mut absolute = Settings::new();
        absolute.set_golden_dir("/elsewhere");
        assert_eq!(absolute.resolved_golden_dir(Path::new("/repo/crate")), Path::new("/elsewhere"));
    }
}
