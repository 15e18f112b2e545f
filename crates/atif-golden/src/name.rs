//! Golden names: from a test's function path to a file name that cannot leave its folder, and
//! the registry that catches two tests resolving to the same file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::{Error, Result};

/// The golden file name for an assertion in the function at `function_path`
/// (`my_crate::module::test_fn`), with an optional `name` for tests that assert several
/// goldens or are generated per case.
///
/// Path segments are joined with `__` and the name, if any, is appended after another `__`;
/// every run of characters outside `[A-Za-z0-9_.-]` becomes `_`, and runs of dots or a leading
/// dot become `_` too, so the result is always one plain file name inside the golden folder
/// (`../../etc/passwd` cannot escape it).
pub(crate) fn golden_file_name(function_path: &str, name: Option<&str>) -> String {
    let mut stem = function_segments(function_path).join("__");
    if let Some(name) = name {
        stem.push_str("__");
        stem.push_str(name);
    }
    format!("{}.json", slug(&stem))
}

/// The name the test harness knows the running test by: the current thread's name when the
/// harness named it (libtest and nextest name each test's thread after the test), else the
/// function path without its crate (`module::test_fn`).
///
/// It is what `cargo test` accepts as a filter, so failure messages can name
/// `ATIF_GOLDEN=update cargo test <test name>`.
pub(crate) fn current_test_name(function_path: &str) -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_owned(),
        _ => {
            let segments = function_segments(function_path);
            let without_crate = segments.get(1..).filter(|rest| !rest.is_empty());
            without_crate.unwrap_or(&segments[..]).join("::")
        }
    }
}

/// The case part of a parametrised test's name, which the golden name keeps.
///
/// Parametrised tests (rstest's `#[case]`, for example) run one function body under several
/// harness names: the assertion sits in `module::test_fn`, and the harness names each run
/// `module::test_fn::case_1_small`. When `thread_name` extends the function path (without its
/// crate) that way, the extension (`case_1_small`) is the case; otherwise there is none.
pub(crate) fn parametrised_case(function_path: &str, thread_name: Option<&str>) -> Option<String> {
    let segments = function_segments(function_path);
    let function = segments.get(1..).filter(|rest| !rest.is_empty())?.join("::");
    let case = thread_name?.strip_prefix(&function)?.strip_prefix("::")?;
    (!case.is_empty()).then(|| case.to_owned())
}

/// Records that `test` uses the golden at `path` in this process.
///
/// # Errors
/// [`Error::DuplicateGolden`] naming both tests when `path` was already claimed, by another
/// test or by an earlier assertion of the same test.
pub(crate) fn claim(path: &Path, test: &str) -> Result<()> {
    static CLAIMS: OnceLock<Registry> = OnceLock::new();
    CLAIMS.get_or_init(Registry::default).claim(path, test)
}

/// Golden files claimed in this process, and by whom.
#[derive(Debug, Default)]
struct Registry {
    claims: Mutex<HashMap<PathBuf, String>>,
}

impl Registry {
    fn claim(&self, path: &Path, test: &str) -> Result<()> {
        // A test that panicked while holding the lock leaves a consistent map behind (inserts are
        // single operations), so a poisoned lock is still usable.
        let mut claims = self.claims.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(first) = claims.get(path) {
            return Err(Error::DuplicateGolden {
                path: path.to_owned(),
                first: first.clone(),
                second: test.to_owned(),
            });
        }
        claims.insert(path.to_owned(), test.to_owned());
        Ok(())
    }
}

/// The segments of a function path, without the `f` helper the macro defines and without the
/// `{{closure}}` segments async tests add.
fn function_segments(function_path: &str) -> Vec<&str> {
    let mut segments: Vec<&str> = function_path
        .split("::")
        .filter(|segment| !segment.is_empty() && *segment != "{{closure}}")
        .collect();
    if segments.len() > 1 && segments.last() == Some(&"f") {
        segments.pop();
    }
    segments
}

fn slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_replaced_run = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
            out.push(c);
            in_replaced_run = false;
        } else if !in_replaced_run {
            out.push('_');
            in_replaced_run = true;
        }
    }
    // Dots are allowed, but `..` and a leading dot are not: the name stays a plain, visible file.
    let mut guarded = String::with_capacity(out.len());
    let mut chars = out.chars().peekable();
    while let Some(c) = chars.next() {
        let run_of_dots = c == '.' && (guarded.is_empty() || chars.peek() == Some(&'.'));
        if run_of_dots {
            while chars.peek() == Some(&'.') {
                chars.next();
            }
            guarded.push('_');
        } else {
            guarded.push(c);
        }
    }
    if guarded.is_empty() { "_".to_owned() } else { guarded }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(function_path: &str, name: Option<&str>, expected: &str) {
        assert_eq!(golden_file_name(function_path, name), expected);
    }

    #[test]
    fn names_come_from_the_function_path() {
        check("fixtures::subagents::f", None, "fixtures__subagents.json");
        check("it::check::{{closure}}::f", None, "it__check.json");
        check("fixtures::corpus::f", Some("case a/b"), "fixtures__corpus__case_a_b.json");
        check("fixtures::corpus::f", Some("v1.8"), "fixtures__corpus__v1.8.json");
    }

    #[test]
    fn names_cannot_escape_the_golden_folder() {
        for name in ["../../etc/passwd", "..", "/abs/path", "..\\win", ".hidden", "a/../b"] {
            let file = golden_file_name("t::f", Some(name));
            assert!(!file.contains('/') && !file.contains('\\'), "{file}");
            assert!(!file.contains(".."), "{file}");
            assert!(!file.starts_with('.'), "{file}");
            assert_eq!(Path::new("/g").join(&file).parent(), Some(Path::new("/g")), "{file}");
        }
        check("t::f", Some("../../etc/passwd"), "t______etc_passwd.json");
        assert_eq!(slug(""), "_");
        assert_eq!(slug("..."), "_");
        assert_eq!(slug(".x"), "_x");
    }

    #[test]
    fn a_parametrised_case_is_what_the_harness_name_adds_to_the_function_path() {
        let case = |thread: Option<&str>| parametrised_case("fixtures::sizes::f", thread);
        assert_eq!(case(Some("sizes::case_1_small")).as_deref(), Some("case_1_small"));
        assert_eq!(case(Some("sizes::case_2::nested")).as_deref(), Some("case_2::nested"));
        assert_eq!(case(Some("sizes")), None);
        assert_eq!(case(Some("sizes_bigger")), None);
        assert_eq!(case(Some("sizes::")), None);
        assert_eq!(case(Some("other::sizes::case_1")), None);
        assert_eq!(case(None), None);
        assert_eq!(parametrised_case("f", Some("f::x")), None, "no function path to extend");
    }

    #[test]
    fn a_second_claim_on_one_golden_names_both_tests() {
        let registry = Registry::default();
        registry.claim(Path::new("/g/a.json"), "first_test").unwrap();
        registry.claim(Path::new("/g/b.json"), "second_test").unwrap();
        let err = registry.claim(Path::new("/g/a.json"), "second_test").unwrap_err();
        let message = err.to_string();
        assert!(message.contains("/g/a.json"), "{message}");
        assert!(message.contains("`first_test`") && message.contains("`second_test`"), "{message}");
    }

    #[test]
    fn the_test_name_is_the_harness_thread_name() {
        let name = current_test_name("it::mod_a::my_test::f");
        assert_eq!(name, "name::tests::the_test_name_is_the_harness_thread_name");
        let unnamed = std::thread::Builder::new()
            .spawn(|| current_test_name("it::mod_a::my_test::f"))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(unnamed, "mod_a::my_test");
    }
}
