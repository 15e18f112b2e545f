//! Options that tune normalisation beyond the default contract.

use atif_secrets::Scanner;
use regex::Regex;
use serde_json::Value;

use crate::path_placeholders::Paths;
use crate::selector::Selector;
use crate::{Error, Result};

/// What happens to a value a volatile selector ([`NormalizeOptions::add_selector`]) matches.
/// Not to be confused with a secret's redaction (`atif_secrets::Redaction`): this removes or
/// replaces what the caller names, wherever it is, secret or not.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SelectorAction {
    /// Remove the matched member or array element.
    Remove,
    /// Replace the matched value with this one.
    Replace(Value),
}

/// A regular expression and the text that replaces each of its matches in every string value.
#[derive(Debug, Clone)]
pub struct Masker {
    pattern: Regex,
    replacement: String,
}

impl Masker {
    /// Compiles `pattern`; `replacement` may use `$1`-style group references.
    ///
    /// # Errors
    /// [`Error::InvalidPattern`] when `pattern` is not a valid regular expression, and
    /// [`Error::EmptyMatch`] when it matches the empty string (`""`, `a*`), which would insert
    /// the replacement between every two characters and again on every pass.
    pub fn new(pattern: &str, replacement: &str) -> Result<Masker> {
        let compiled = Regex::new(pattern)
            .map_err(|source| Error::InvalidPattern { pattern: pattern.to_owned(), source })?;
        if compiled.is_match("") {
            return Err(Error::EmptyMatch { pattern: pattern.to_owned() });
        }
        Ok(Masker { pattern: compiled, replacement: replacement.to_owned() })
    }

    /// The compiled pattern.
    pub fn pattern(&self) -> &Regex {
        &self.pattern
    }

    /// The replacement text.
    pub fn replacement(&self) -> &str {
        &self.replacement
    }
}

impl PartialEq for Masker {
    fn eq(&self, other: &Masker) -> bool {
        self.pattern.as_str() == other.pattern.as_str() && self.replacement == other.replacement
    }
}

/// How [`normalize`](crate::normalize) treats a trajectory beyond the fixed default contract.
///
/// The default (`NormalizeOptions::default()`) applies exactly the documented contract:
/// no extra volatile keys, no volatile selectors, no extra maskers, no path placeholders, subagents
/// sorted, and secrets replaced by `<redacted:KIND>` markers with the default [`Scanner`].
#[derive(Debug, Clone, PartialEq)]
pub struct NormalizeOptions {
    volatile_keys: Vec<String>,
    selectors: Vec<(String, SelectorAction)>,
    /// `selectors`, parsed once, in the same order.
    parsed_selectors: Vec<Selector>,
    maskers: Vec<Masker>,
    sort_subagents: bool,
    cwd: Option<String>,
    home: Option<String>,
    recorded_paths: bool,
    secrets: Option<Scanner>,
}

impl Default for NormalizeOptions {
    fn default() -> NormalizeOptions {
        NormalizeOptions {
            volatile_keys: Vec::new(),
            selectors: Vec::new(),
            parsed_selectors: Vec::new(),
            maskers: Vec::new(),
            sort_subagents: true,
            cwd: None,
            home: None,
            recorded_paths: false,
            secrets: Some(Scanner::default()),
        }
    }
}

impl NormalizeOptions {
    /// The default options; the same as [`NormalizeOptions::default`].
    pub fn new() -> NormalizeOptions {
        NormalizeOptions::default()
    }

    /// Adds a key that is removed at every depth, like `timestamp` (never inside tool arguments).
    pub fn add_volatile_key(&mut self, key: impl Into<String>) -> &mut NormalizeOptions {
        self.volatile_keys.push(key.into());
        self
    }

    /// Adds a volatile location in insta's selector grammar (`.steps[].extra.request_id`,
    /// `.**.request_id`) and what to do with the values it selects.
    ///
    /// # Errors
    /// [`Error::InvalidSelector`] when `selector` is not in the grammar.
    pub fn add_selector(
        &mut self,
        selector: &str,
        action: SelectorAction,
    ) -> Result<&mut NormalizeOptions> {
        self.parsed_selectors.push(Selector::parse(selector)?);
        self.selectors.push((selector.to_owned(), action));
        Ok(self)
    }

    /// Adds a masker applied to every string value after the default address masker, in the
    /// order added.
    pub fn add_masker(&mut self, masker: Masker) -> &mut NormalizeOptions {
        self.maskers.push(masker);
        self
    }

    /// Whether embedded subagents are sorted by content (default `true`). Ids are renumbered
    /// either way.
    pub fn set_sort_subagents(&mut self, sort: bool) -> &mut NormalizeOptions {
        self.sort_subagents = sort;
        self
    }

    /// Sets the run's working directory: its exact occurrences become `<cwd>`, and the folder
    /// names agents derive from it (Claude Code's project folder, pi's session folder)
    /// `<cwd-slug>`, in every string and key, tool arguments included. The default is none. A relative path or `/` is ignored.
    pub fn set_cwd(&mut self, cwd: Option<&str>) -> &mut NormalizeOptions {
        self.cwd = cwd.map(str::to_owned);
        self
    }

    /// The run's working directory given with [`set_cwd`](NormalizeOptions::set_cwd).
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// Sets the run's home folder: its exact occurrences become `<home>`, after the working
    /// directory (so a working directory inside home is `<cwd>`). The default is none.
    pub fn set_home(&mut self, home: Option<&str>) -> &mut NormalizeOptions {
        self.home = home.map(str::to_owned);
        self
    }

    /// The run's home folder given with [`set_home`](NormalizeOptions::set_home).
    pub fn home(&self) -> Option<&str> {
        self.home.as_deref()
    }

    /// Whether the working directory and home recorded in each trajectory's `extra.cwd` and
    /// `extra.home` (as `atif import` writes them) become `<cwd>` and `<home>` too, in that
    /// trajectory and its subagents (default `false`; the import presets turn it on).
    pub fn set_recorded_paths(&mut self, on: bool) -> &mut NormalizeOptions {
        self.recorded_paths = on;
        self
    }

    /// Whether recorded paths become placeholders.
    pub fn recorded_paths(&self) -> bool {
        self.recorded_paths
    }

    /// The placeholders given explicitly, before any recorded in a trajectory.
    pub(crate) fn paths(&self) -> Paths {
        let mut paths = Paths::default();
        if let Some(cwd) = &self.cwd {
            paths.add_cwd(cwd);
        }
        if let Some(home) = &self.home {
            paths.add_home(home);
        }
        paths
    }

    /// Sets the scanner whose secrets are replaced by `<redacted:KIND>` markers, last, in every
    /// string and key of the document, tool arguments included (default: the default
    /// [`Scanner`]). `None` keeps secrets: for a local investigation only, since whatever is
    /// normalised may end up in a golden file.
    pub fn set_secret_scanner(&mut self, scanner: Option<Scanner>) -> &mut NormalizeOptions {
        self.secrets = scanner;
        self
    }

    /// The secret scanner, or `None` when secrets are kept.
    pub fn secret_scanner(&self) -> Option<&Scanner> {
        self.secrets.as_ref()
    }

    /// Extra volatile keys, in the order added.
    pub fn volatile_keys(&self) -> &[String] {
        &self.volatile_keys
    }

    /// The volatile selectors and their actions, in the order added.
    pub fn selectors(&self) -> &[(String, SelectorAction)] {
        &self.selectors
    }

    /// The parsed volatile selectors with their actions, in the order added.
    pub(crate) fn parsed_selectors(&self) -> impl Iterator<Item = (&Selector, &SelectorAction)> {
        self.parsed_selectors.iter().zip(self.selectors.iter().map(|(_, action)| action))
    }

    /// Extra maskers, in the order added.
    pub fn maskers(&self) -> &[Masker] {
        &self.maskers
    }

    /// Whether embedded subagents are sorted by content.
    pub fn sort_subagents(&self) -> bool {
        self.sort_subagents
    }

    /// Adds everything from `other` to these options (used to layer a preset under user flags).
    pub fn extend(&mut self, other: &NormalizeOptions) -> &mut NormalizeOptions {
        self.volatile_keys.extend(other.volatile_keys.iter().cloned());
        self.selectors.extend(other.selectors.iter().cloned());
        self.parsed_selectors.extend(other.parsed_selectors.iter().cloned());
        self.maskers.extend(other.maskers.iter().cloned());
        self.sort_subagents &= other.sort_subagents;
        if self.cwd.is_none() {
            self.cwd.clone_from(&other.cwd);
        }
        if self.home.is_none() {
            self.home.clone_from(&other.home);
        }
        self.recorded_paths |= other.recorded_paths;
        // Whoever chose a scanner of their own, or none, wins over the default one.
        if other.secrets != Some(Scanner::default()) {
            self.secrets.clone_from(&other.secrets);
        }
        self
    }
}
