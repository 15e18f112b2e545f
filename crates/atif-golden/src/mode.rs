//! What a check may write: the mode, read from `ATIF_GOLDEN` and `CI`.

// Whether a value of `CI` means "running on CI": the rule lives in atif-fs, so that
// atif-replay's record modes share it.
use atif_fs::is_ci;

use crate::{Error, Result};

/// The environment variable that selects the [`Mode`]: `check`, `review`, `update` or `auto`.
pub const MODE_ENV: &str = "ATIF_GOLDEN";

/// The environment variable naming the check log, the file every check appends one line to
/// (set by [`run_update`](crate::review::run_update), behind `atif golden update`; see
/// [`append_check_log`](crate::review::append_check_log)).
pub const LOG_ENV: &str = "ATIF_GOLDEN_LOG";

/// What a check is allowed to write.
///
/// | `ATIF_GOLDEN`       | locally          | on CI (`CI` set, not `0`/`false`/empty) |
/// |---------------------|------------------|------------------------------------------|
/// | unset, empty, `auto`| [`Mode::Review`] | [`Mode::Check`]                          |
/// | `check`             | [`Mode::Check`]  | [`Mode::Check`]                          |
/// | `review`            | [`Mode::Review`] | [`Mode::Check`]                          |
/// | `update`            | [`Mode::Update`] | [`Mode::Update`]                         |
///
/// Any other value is an error rather than a silent default, so a typo such as `updte` cannot
/// turn into a green run that checked nothing new. Only an explicit `update` writes on CI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// Compare only; never write anything.
    Check,
    /// Compare; when the check fails, write the actual run beside the golden as
    /// `<name>.json.new` for `atif golden review` / `atif golden accept`.
    Review,
    /// Rewrite goldens that no longer match (and create missing ones), atomically.
    Update,
}

impl Mode {
    /// The mode selected by the `ATIF_GOLDEN` and `CI` environment variables of this process.
    ///
    /// # Errors
    /// [`Error::UnknownMode`] when `ATIF_GOLDEN` holds an unknown value.
    pub fn from_env() -> Result<Mode> {
        let mode = std::env::var_os(MODE_ENV).map(|value| value.to_string_lossy().into_owned());
        let ci = std::env::var_os("CI").map(|value| value.to_string_lossy().into_owned());
        Mode::from_env_values(mode.as_deref(), ci.as_deref())
    }

    /// The mode selected by these values of `ATIF_GOLDEN` and `CI` (`None` = unset); the pure
    /// core of [`Mode::from_env`], so the table above can be tested without touching the
    /// process environment.
    ///
    /// # Errors
    /// [`Error::UnknownMode`] when `mode` is not one of `auto`, `check`, `review`, `update`
    /// (surrounding whitespace and case are ignored; empty means unset).
    pub fn from_env_values(mode: Option<&str>, ci: Option<&str>) -> Result<Mode> {
        let on_ci = is_ci(ci);
        let local_default = if on_ci { Mode::Check } else { Mode::Review };
        let requested = mode.map(|value| value.trim().to_ascii_lowercase()).unwrap_or_default();
        match requested.as_str() {
            "" | "auto" => Ok(local_default),
            "check" => Ok(Mode::Check),
            "review" => Ok(local_default),
            "update" => Ok(Mode::Update),
            _ => Err(Error::UnknownMode {
                variable: MODE_ENV,
                value: mode.unwrap_or_default().to_owned(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(mode: Option<&str>, ci: Option<&str>, expected: Mode) {
        assert_eq!(Mode::from_env_values(mode, ci).unwrap(), expected, "mode {mode:?} ci {ci:?}");
    }

    #[test]
    fn unset_mode_reviews_locally_and_only_checks_on_ci() {
        check(None, None, Mode::Review);
        check(None, Some("true"), Mode::Check);
        check(Some(""), Some("1"), Mode::Check);
        check(Some("auto"), Some("false"), Mode::Review);
        check(Some("auto"), Some("0"), Mode::Review);
        check(Some("auto"), Some(""), Mode::Review);
    }

    #[test]
    fn review_never_writes_on_ci_but_update_does() {
        check(Some("review"), Some("true"), Mode::Check);
        check(Some("review"), None, Mode::Review);
        check(Some("update"), Some("true"), Mode::Update);
        check(Some(" Update "), None, Mode::Update);
        check(Some("check"), None, Mode::Check);
    }

    #[test]
    fn an_unknown_mode_value_is_an_error_naming_the_variable_and_the_value() {
        let err = Mode::from_env_values(Some("updte"), None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown ATIF_GOLDEN value `updte`: expected one of auto, check, review, update (or unset)"
        );
    }

    #[test]
    fn ci_is_detected_from_any_value_but_0_false_and_empty() {
        for (value, expected) in [
            (None, false),
            (Some(""), false),
            (Some("0"), false),
            (Some("false"), false),
            (Some("FALSE"), false),
            (Some("true"), true),
            (Some("1"), true),
            (Some("yes"), true),
        ] {
            assert_eq!(is_ci(value), expected, "CI={value:?}");
        }
    }
}
