//! The one rule for "running on CI", where atif writes no file it was not explicitly asked to.

/// Whether this value of the `CI` variable means "running on CI": set, and not `0`, `false`
/// (any case) or empty.
///
/// On CI nothing writes a file implicitly: `atif-golden` checks rather than leaving pending
/// files, and `atif-replay` replays rather than recording a missing script. Both read `CI`
/// through this function, so the rule is the same everywhere.
///
/// ```
/// assert!(atif_fs::is_ci(Some("true")));
/// assert!(atif_fs::is_ci(Some("1")));
/// assert!(!atif_fs::is_ci(Some("false")));
/// assert!(!atif_fs::is_ci(Some(" 0 ")));
/// assert!(!atif_fs::is_ci(None));
/// ```
pub fn is_ci(ci: Option<&str>) -> bool {
    match ci.map(str::trim) {
        None | Some("") | Some("0") => false,
        Some(value) => !value.eq_ignore_ascii_case("false"),
    }
}

/// [`is_ci`] of this process's `CI` variable.
pub fn running_on_ci() -> bool {
    let ci = std::env::var_os("CI").map(|value| value.to_string_lossy().into_owned());
    is_ci(ci.as_deref())
}
