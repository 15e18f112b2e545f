//! The project file, `atif.toml`: how the goldens of a project are checked, by default and per
//! glob, read by `atif` and by tests that ask for it.

use std::path::{Path, PathBuf};

use atif_normalize::{ArgumentMatch, Masker, NormalizeOptions, SequenceMatch};
use serde::Deserialize;

use crate::{Error, Result, Settings};

/// The name of the project file, looked for in the working folder and each folder above it.
pub const PROJECT_FILE: &str = "atif.toml";

/// A project file: default settings for every golden, and rules for the goldens whose path
/// (relative to the file's folder) matches a glob.
///
/// ```toml
/// [defaults]
/// token_tolerance = 0.1
///
/// [[golden]]
/// glob = "tests/golden/claude-*.json"
/// preset = "claude-code"
/// volatile = ["request_id"]
/// mask = ['\bsess-[0-9a-f]{8}\b=SESSION']
/// content = false
/// ```
///
/// A golden gets the defaults, then every rule whose glob matches it, in the file's order:
/// a later `preset`, `token_tolerance` or `content` replaces an earlier one, and `volatile` and
/// `mask` add to the earlier ones.
#[derive(Debug, Clone)]
pub struct ProjectConfig {
    path: PathBuf,
    root: PathBuf,
    defaults: GoldenConfig,
    rules: Vec<(globset::GlobMatcher, GoldenConfig)>,
}

/// How one golden is checked, as the project file says: what [`ProjectConfig::config_for`]
/// returns, and what [`GoldenConfig::apply`] puts into [`Settings`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoldenConfig {
    preset: Option<String>,
    volatile: Vec<String>,
    masks: Vec<(String, String)>,
    token_tolerance: Option<f64>,
    compare_content: Option<bool>,
    sequence: Option<SequenceMatch>,
    arguments: Option<ArgumentMatch>,
}

/// One table of the file, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleToml {
    glob: Option<String>,
    preset: Option<String>,
    #[serde(default)]
    volatile: Vec<String>,
    #[serde(default)]
    mask: Vec<String>,
    token_tolerance: Option<f64>,
    content: Option<bool>,
    sequence: Option<String>,
    arguments: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    #[serde(default)]
    defaults: RuleToml,
    #[serde(default)]
    golden: Vec<RuleToml>,
}

impl ProjectConfig {
    /// The project file in `start` or the nearest folder above it, if there is one.
    ///
    /// # Errors
    /// [`Error::Io`] when a file that exists cannot be read, and [`Error::ProjectFile`] when it
    /// is not a valid project file.
    ///
    /// A relative `start` gives a relative path (`atif.toml`, `../../atif.toml`), so messages
    /// about the file name no folder above the project.
    pub fn find(start: &Path) -> Result<Option<ProjectConfig>> {
        let absolute =
            std::path::absolute(start).map_err(|source| Error::io("find", start, source))?;
        // `./atif.toml` reads as `atif.toml`.
        let mut up: PathBuf = start
            .components()
            .filter(|part| !matches!(part, std::path::Component::CurDir))
            .collect();
        for dir in absolute.ancestors() {
            if dir.join(PROJECT_FILE).is_file() {
                let shown = if start.is_absolute() { dir.to_path_buf() } else { up };
                let mut config = ProjectConfig::read(&shown.join(PROJECT_FILE))?;
                config.root = dir.to_path_buf();
                return Ok(Some(config));
            }
            up.push("..");
        }
        Ok(None)
    }

    /// Reads the project file at `path`; its globs are relative to its folder.
    ///
    /// # Errors
    /// As [`ProjectConfig::find`].
    pub fn read(path: &Path) -> Result<ProjectConfig> {
        let text =
            std::fs::read_to_string(path).map_err(|source| Error::io("read", path, source))?;
        ProjectConfig::parse(&text, path)
    }

    /// Reads a project file's text; `path` is where it lives (its folder is the root the
    /// globs are relative to) and how errors name it.
    ///
    /// # Errors
    /// [`Error::ProjectFile`] naming the line and column of TOML that does not parse or has a
    /// key this file does not know, and the rule of a bad glob, preset, mask or tolerance.
    pub fn parse(text: &str, path: &Path) -> Result<ProjectConfig> {
        let invalid = |message: String| Error::ProjectFile { path: path.to_owned(), message };
        let file: FileToml =
            toml::from_str(text).map_err(|err| invalid(err.to_string().trim_end().to_owned()))?;
        if file.defaults.glob.is_some() {
            return Err(invalid("[defaults] applies to every golden: it takes no `glob`".into()));
        }
        let defaults = GoldenConfig::from_toml(file.defaults)
            .map_err(|err| invalid(format!("[defaults]: {err}")))?;
        let mut rules = Vec::new();
        for (idx, rule) in file.golden.into_iter().enumerate() {
            let place = format!("[[golden]] number {}", idx + 1);
            let Some(glob) = rule.glob.clone() else {
                return Err(invalid(format!(
                    "{place}: expected a `glob` naming the goldens it is for"
                )));
            };
            let matcher = globset::GlobBuilder::new(&glob)
                .literal_separator(true)
                .build()
                .map_err(|err| invalid(format!("{place}: glob `{glob}`: {err}")))?
                .compile_matcher();
            let config =
                GoldenConfig::from_toml(rule).map_err(|err| invalid(format!("{place}: {err}")))?;
            rules.push((matcher, config));
        }
        let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let root = std::path::absolute(&root).unwrap_or(root);
        Ok(ProjectConfig { path: path.to_owned(), root, defaults, rules })
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The settings of `[defaults]`, which every golden starts from.
    pub fn defaults(&self) -> &GoldenConfig {
        &self.defaults
    }

    /// How the golden at `golden` (a path relative to the working folder, or absolute) is
    /// checked: the defaults, then each rule whose glob matches its path relative to the
    /// project file's folder. A golden outside that folder gets the defaults only.
    pub fn config_for(&self, golden: &Path) -> GoldenConfig {
        let mut config = self.defaults.clone();
        let absolute = std::path::absolute(golden).unwrap_or_else(|_| golden.to_owned());
        let Ok(relative) = absolute.strip_prefix(&self.root) else {
            return config;
        };
        for (matcher, rule) in &self.rules {
            if matcher.is_match(relative) {
                config.extend(rule);
            }
        }
        config
    }
}

impl GoldenConfig {
    /// The preset named, if any.
    pub fn preset(&self) -> Option<&str> {
        self.preset.as_deref()
    }

    /// The extra volatile keys.
    pub fn volatile(&self) -> &[String] {
        &self.volatile
    }

    /// The masks, as (regex, replacement).
    pub fn masks(&self) -> &[(String, String)] {
        &self.masks
    }

    /// The token tolerance, if set.
    pub fn token_tolerance(&self) -> Option<f64> {
        self.token_tolerance
    }

    /// Whether the content hash is compared, if set.
    pub fn compare_content(&self) -> Option<bool> {
        self.compare_content
    }

    /// The match mode of the tool sequence (`sequence = "any-order"`), if set: a check then
    /// judges the run by the match modes (`atif_normalize::match_runs`).
    pub fn sequence(&self) -> Option<SequenceMatch> {
        self.sequence
    }

    /// The match mode of the arguments (`arguments = "ignore"`), if set.
    pub fn arguments(&self) -> Option<&ArgumentMatch> {
        self.arguments.as_ref()
    }

    /// The normalise options: the preset's (or the defaults), then the volatile keys and the
    /// masks.
    ///
    /// # Errors
    /// [`Error::Normalize`] never in practice: the preset and masks were checked when the file
    /// was read.
    pub fn normalize_options(&self) -> Result<NormalizeOptions> {
        let wrap = |source| Error::Normalize { what: "the project file's settings".into(), source };
        let mut options = match &self.preset {
            Some(name) => atif_normalize::preset(name).map_err(wrap)?,
            None => NormalizeOptions::default(),
        };
        self.add_to(&mut options)?;
        Ok(options)
    }

    /// Adds the volatile keys and masks (not the preset) to `options`.
    ///
    /// # Errors
    /// As [`GoldenConfig::normalize_options`].
    pub fn add_to(&self, options: &mut NormalizeOptions) -> Result<()> {
        for key in &self.volatile {
            options.add_volatile_key(key.clone());
        }
        for (pattern, replacement) in &self.masks {
            let masker = Masker::new(pattern, replacement).map_err(|source| Error::Normalize {
                what: "the project file's settings".into(),
                source,
            })?;
            options.add_masker(masker);
        }
        Ok(())
    }

    /// Puts these settings into `settings`: the normalise options, and the tolerance, the
    /// content comparison and the match modes when the file sets them.
    ///
    /// # Errors
    /// As [`GoldenConfig::normalize_options`].
    pub fn apply(&self, settings: &mut Settings) -> Result<()> {
        settings.set_normalize_options(self.normalize_options()?);
        if let Some(tolerance) = self.token_tolerance {
            settings.set_token_tolerance(tolerance);
        }
        if let Some(compare) = self.compare_content {
            settings.set_compare_content(compare);
        }
        if let Some(modes) = self.match_options() {
            settings.set_match_options(Some(modes));
        }
        Ok(())
    }

    /// The match modes the file sets (`sequence`, `arguments`), the rest exact; `None` when it
    /// sets neither.
    pub fn match_options(&self) -> Option<atif_normalize::MatchOptions> {
        if self.sequence.is_none() && self.arguments.is_none() {
            return None;
        }
        let mut options = atif_normalize::MatchOptions::default();
        options.set_sequence(self.sequence.unwrap_or_default());
        options.set_arguments(self.arguments.clone().unwrap_or_default());
        Some(options)
    }

    /// Puts into `settings` what the file sets and `settings` did not set by hand (see
    /// [`Settings`]): what [`assert_golden!`](crate::assert_golden) does with the project file.
    ///
    /// # Errors
    /// As [`GoldenConfig::normalize_options`].
    pub(crate) fn apply_where_unset(&self, settings: &mut Settings) -> Result<()> {
        let set_here = settings.set_here();
        let options = match set_here.normalize_options {
            true => None,
            false => Some(self.normalize_options()?),
        };
        let tolerance = self.token_tolerance.filter(|_| !set_here.token_tolerance);
        let compare = self.compare_content.filter(|_| !set_here.compare_content);
        settings.take_from_project(options, tolerance, compare);
        settings.take_match_from_project(self.match_options());
        Ok(())
    }

    fn from_toml(rule: RuleToml) -> std::result::Result<GoldenConfig, String> {
        if let Some(name) = &rule.preset {
            atif_normalize::preset(name).map_err(|err| format!("preset: {err}"))?;
        }
        let mut masks = Vec::new();
        for spec in rule.mask {
            let Some((pattern, replacement)) = spec.rsplit_once('=') else {
                return Err(format!("mask: expected \"REGEX=REPLACEMENT\", got {spec:?}"));
            };
            Masker::new(pattern, replacement).map_err(|err| format!("mask {spec:?}: {err}"))?;
            masks.push((pattern.to_owned(), replacement.to_owned()));
        }
        if let Some(tolerance) = rule.token_tolerance {
            if !(tolerance.is_finite() && tolerance >= 0.0) {
                return Err(format!(
                    "token_tolerance: expected a finite number of 0 or more (0.1 for 10%), got {tolerance}"
                ));
            }
        }
        let sequence = match &rule.sequence {
            Some(name) => Some(SequenceMatch::from_name(name).ok_or_else(|| {
                format!("sequence: expected exact, in-order, any-order, subset or superset, got {name:?}")
            })?),
            None => None,
        };
        let arguments = match &rule.arguments {
            Some(name) => Some(ArgumentMatch::from_name(name).ok_or_else(|| {
                format!("arguments: expected exact, ignore, subset, superset or \"paths:/a,/b\", got {name:?}")
            })?),
            None => None,
        };
        Ok(GoldenConfig {
            sequence,
            arguments,
            preset: rule.preset,
            volatile: rule.volatile,
            masks,
            token_tolerance: rule.token_tolerance,
            compare_content: rule.content,
        })
    }

    fn extend(&mut self, rule: &GoldenConfig) {
        if rule.preset.is_some() {
            self.preset.clone_from(&rule.preset);
        }
        self.volatile.extend(rule.volatile.iter().cloned());
        self.masks.extend(rule.masks.iter().cloned());
        if rule.token_tolerance.is_some() {
            self.token_tolerance = rule.token_tolerance;
        }
        if rule.compare_content.is_some() {
            self.compare_content = rule.compare_content;
        }
        if rule.sequence.is_some() {
            self.sequence = rule.sequence;
        }
        if rule.arguments.is_some() {
            self.arguments.clone_from(&rule.arguments);
        }
    }
}
