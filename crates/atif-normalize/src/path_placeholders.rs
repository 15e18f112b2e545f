//! Path placeholders, the workspace's one rule for them: exact occurrences of a run's working
//! directory and home become `<cwd>` and `<home>`, and a folder name derived from the working
//! directory becomes `<cwd-slug>`, so two runs in different folders under different homes
//! normalise alike. Normalisation ([`Paths`]) and the record/replay server ([`RunDirs`], which
//! also writes a run's own directories back) both use it.
//!
//! The replacement is exact. A string that merely looks like a path (another temp folder,
//! another user's home) is left alone, and so is a longer path that only starts like the run's
//! (`/tmp/run1` is not replaced inside `/tmp/run12`, nor inside `/x/tmp/run1`).
//! Besides the path as written, the forms agents derive from it are replaced too: the same
//! folder seen through macOS's `/private` symlink (`<cwd>`), and the working directory with
//! every character that is not a letter or digit replaced by `-` (Claude Code's project folder,
//! `~/.claude/projects/-tmp-run1-repo/`) or with each `/` replaced by `-` (pi's session folder),
//! both `<cwd-slug>`.

/// The placeholder written for the run's working directory.
pub(crate) const CWD: &str = "<cwd>";
/// The placeholder written for a folder name derived from the run's working directory.
pub(crate) const CWD_SLUG: &str = "<cwd-slug>";
/// The placeholder written for the run's home folder.
pub(crate) const HOME: &str = "<home>";

/// A run's working directory and home, with the one rule for their placeholders: what
/// [`NormalizeOptions::set_cwd`](crate::NormalizeOptions::set_cwd) and `set_home` replace, and
/// the way back, for a replay that gives an agent its own directories where the recording had
/// placeholders. For the record/replay server; not public API.
#[derive(Debug, Clone)]
pub struct RunDirs {
    cwd: Option<String>,
    home: Option<String>,
    paths: Paths,
}

impl RunDirs {
    /// The directories of a run; a relative path or `/` is ignored, as normalisation ignores it.
    pub fn new(cwd: Option<&str>, home: Option<&str>) -> RunDirs {
        let (cwd, home) = (cwd.and_then(usable), home.and_then(usable));
        let mut paths = Paths::default();
        if let Some(cwd) = cwd {
            paths.add_cwd(cwd);
        }
        if let Some(home) = home {
            paths.add_home(home);
        }
        RunDirs { cwd: cwd.map(str::to_owned), home: home.map(str::to_owned), paths }
    }

    /// Whether there is no directory to replace.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// `s` with the directories replaced by `<cwd>`, `<cwd-slug>` and `<home>`, as
    /// normalisation replaces them, or `None` when it holds none.
    pub fn place(&self, s: &str) -> Option<String> {
        self.paths.replace(s)
    }

    /// `s` with `<cwd>`, `<cwd-slug>` and `<home>` replaced by this run's directories (a slug
    /// as Claude Code writes it), or `None` when it holds none of them.
    pub fn fill(&self, s: &str) -> Option<String> {
        if !s.contains('<') {
            return None;
        }
        let slug = self.cwd.as_deref().map(claude_slug);
        let mut out: Option<String> = None;
        for (placeholder, dir) in
            [(CWD, self.cwd.as_deref()), (HOME, self.home.as_deref()), (CWD_SLUG, slug.as_deref())]
        {
            let Some(dir) = dir else { continue };
            let current = out.as_deref().unwrap_or(s);
            if current.contains(placeholder) {
                out = Some(current.replace(placeholder, dir));
            }
        }
        out
    }
}

/// A mangled working directory shorter than this is not replaced: `-w` (from `/w`) is far more
/// likely to be a command-line flag than a folder name.
const MIN_MANGLED_LEN: usize = 8;

/// What to look for and what to write instead, longest text first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Paths {
    needles: Vec<Needle>,
}

#[derive(Debug, Clone, PartialEq)]
struct Needle {
    text: String,
    placeholder: &'static str,
    /// A mangled form (letters and digits joined by `-`), whose neighbours must not be letters
    /// or digits; a path's neighbours must not continue its last component.
    mangled: bool,
}

impl Paths {
    /// Whether there is nothing to replace.
    pub(crate) fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// Adds a working directory: the path, its `/private` twin, and its mangled forms.
    pub(crate) fn add_cwd(&mut self, path: &str) {
        let Some(path) = usable(path) else { return };
        for variant in variants(path) {
            self.push(Needle { text: claude_slug(&variant), placeholder: CWD_SLUG, mangled: true });
            let pi_folder = variant.replace('/', "-");
            self.push(Needle { text: pi_folder, placeholder: CWD_SLUG, mangled: true });
            self.push(Needle { text: variant, placeholder: CWD, mangled: false });
        }
    }

    /// Adds a home folder: the path and its `/private` twin.
    pub(crate) fn add_home(&mut self, path: &str) {
        let Some(path) = usable(path) else { return };
        for variant in variants(path) {
            self.push(Needle { text: variant, placeholder: HOME, mangled: false });
        }
    }

    fn push(&mut self, needle: Needle) {
        if needle.mangled && (needle.text.len() < MIN_MANGLED_LEN || needle.text.contains('/')) {
            return;
        }
        // A path wins over a mangled form of the same text, and the first placeholder given
        // for a text (the working directory) over a later one.
        if self.needles.iter().any(|n| n.text == needle.text) {
            return;
        }
        let at = self.needles.partition_point(|n| n.text.len() >= needle.text.len());
        self.needles.insert(at, needle);
    }

    /// `s` with every occurrence replaced, or `None` when there is none.
    pub(crate) fn replace(&self, s: &str) -> Option<String> {
        if self.needles.iter().all(|needle| !s.contains(needle.text.as_str())) {
            return None;
        }
        let mut out = String::with_capacity(s.len());
        let mut copied = 0;
        let mut pos = 0;
        while pos < s.len() {
            // Longest needle first, so the working directory wins over a home that contains it.
            let found = self
                .needles
                .iter()
                .find(|needle| s[pos..].starts_with(needle.text.as_str()) && needle.fits(s, pos));
            match found {
                Some(needle) => {
                    out.push_str(&s[copied..pos]);
                    out.push_str(needle.placeholder);
                    pos += needle.text.len();
                    copied = pos;
                }
                None => pos += s[pos..].chars().next().map_or(1, char::len_utf8),
            }
        }
        if copied == 0 {
            return None;
        }
        out.push_str(&s[copied..]);
        Some(out)
    }
}

impl Needle {
    /// Whether the occurrence at `start` stands on its own rather than inside a longer name.
    fn fits(&self, s: &str, start: usize) -> bool {
        let before = s[..start].chars().next_back();
        let after = &s[start + self.text.len()..];
        if self.mangled {
            let alnum = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
            return !alnum(before) && !alnum(after.chars().next());
        }
        let joins_before = before.is_some_and(|c| is_name_char(c) || matches!(c, '/' | '\\' | '~'));
        !joins_before && !continues_name(after)
    }
}

/// Whether `c` can be part of a file name without quoting (`.` and `-` included).
fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Whether `after` continues the last component of a path: a name character, except that a
/// `.` or `-` ending a sentence (`in /tmp/run1.`) does not count.
fn continues_name(after: &str) -> bool {
    let mut chars = after.chars();
    match chars.next() {
        Some('.' | '-') => chars.next().is_some_and(is_name_char),
        Some(c) => is_name_char(c),
        None => false,
    }
}

/// The path without trailing separators, or `None` when it is not an absolute path worth
/// replacing (empty, relative, or the root itself).
fn usable(path: &str) -> Option<&str> {
    let trimmed = path.trim_end_matches(['/', '\\']);
    let bytes = trimmed.as_bytes();
    let unix = trimmed.len() > 1 && trimmed.starts_with('/');
    let windows = bytes.len() > 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/');
    (unix || windows).then_some(trimmed)
}

/// The path and its twin through macOS's `/private` symlink (`/var`, `/tmp`, `/etc`).
fn variants(path: &str) -> Vec<String> {
    let mut variants = vec![path.to_owned()];
    if let Some(rest) = path.strip_prefix("/private") {
        if ["/var/", "/tmp/", "/etc/"].iter().any(|p| rest.starts_with(p)) {
            variants.push(rest.to_owned());
        }
    } else if ["/var/", "/tmp/", "/etc/"].iter().any(|p| path.starts_with(p)) {
        variants.push(format!("/private{path}"));
    }
    variants
}

/// Claude Code's project folder name for a working directory: every character that is not an
/// ASCII letter or digit becomes `-` (one per UTF-16 unit, as JavaScript's replace does).
fn claude_slug(path: &str) -> String {
    let mut slug = String::with_capacity(path.len());
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                slug.push('-');
            }
        }
    }
    slug
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(cwd: &str, home: &str) -> Paths {
        let mut paths = Paths::default();
        paths.add_cwd(cwd);
        paths.add_home(home);
        paths
    }

    fn check(paths: &Paths, input: &str, expected: &str) {
        let actual = paths.replace(input).unwrap_or_else(|| input.to_owned());
        assert_eq!(actual, expected, "replacing in {input:?}");
    }

    #[test]
    fn the_working_directory_inside_home_wins_over_home() {
        let p = paths("/home/ann/proj/", "/home/ann");
        check(&p, "cd /home/ann/proj && ls", "cd <cwd> && ls");
        check(&p, "/home/ann/proj/src/a.rs", "<cwd>/src/a.rs");
        check(&p, "/home/ann/.codex/skills", "<home>/.codex/skills");
        check(&p, "in /home/ann/proj.", "in <cwd>.");
        check(&p, "\"/home/ann/proj\"", "\"<cwd>\"");
    }

    #[test]
    fn lookalike_and_longer_paths_are_left_alone() {
        let p = paths("/tmp/run1", "/root");
        for s in [
            "/tmp/run12",
            "/tmp/run1.bak",
            "/tmp/run1-old",
            "/x/tmp/run1",
            "./tmp/run1",
            "/tmp/run2",
            "/rooted",
            "~/tmp/run1",
        ] {
            check(&p, s, s);
        }
        check(&p, "/tmp/run1:/root", "<cwd>:<home>");
    }

    #[test]
    fn mangled_forms_of_the_working_directory_are_replaced() {
        let p = paths("/tmp/e2e.a1/repo", "/tmp/home-a");
        check(
            &p,
            "/tmp/home-a/.claude/projects/-tmp-e2e-a1-repo/memory/",
            "<home>/.claude/projects/<cwd-slug>/memory/",
        );
        check(&p, "sessions/---tmp-e2e.a1-repo--/x.jsonl", "sessions/--<cwd-slug>--/x.jsonl");
        check(&p, "-tmp-e2e-a1-repo2", "-tmp-e2e-a1-repo2");
        // A short mangled form is too likely to be something else.
        check(&paths("/w", "/h"), "ls -w", "ls -w");
    }

    #[test]
    fn the_private_twin_of_a_temp_folder_is_replaced() {
        let p = paths("/var/folders/q1/T/run", "/Users/ann");
        check(&p, "/private/var/folders/q1/T/run/a", "<cwd>/a");
    }

    #[test]
    fn the_root_empty_and_relative_paths_are_never_placeholders() {
        for path in ["/", "", ".", "proj", "//"] {
            let p = paths(path, path);
            assert!(p.is_empty(), "{path:?}");
        }
    }

    #[test]
    fn run_dirs_place_and_fill_back_a_runs_own_directories() {
        let dirs = RunDirs::new(Some("/tmp/e2e.a1/repo"), Some("/tmp/home-a"));
        let text = "cd /tmp/e2e.a1/repo; /tmp/home-a/.claude/projects/-tmp-e2e-a1-repo/x";
        let placed = dirs.place(text).unwrap();
        assert_eq!(placed, "cd <cwd>; <home>/.claude/projects/<cwd-slug>/x");
        assert_eq!(dirs.fill(&placed).as_deref(), Some(text));
        let other = RunDirs::new(Some("/work/b"), Some("/root"));
        assert_eq!(other.fill(&placed).unwrap(), "cd /work/b; /root/.claude/projects/-work-b/x");
        assert_eq!(dirs.fill("no placeholder"), None);
        assert!(RunDirs::new(Some("/"), None).is_empty());
    }
}
