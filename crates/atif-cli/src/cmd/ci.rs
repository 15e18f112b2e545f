//! What `atif check` leaves for CI: the bundle of a failing check in an artifacts folder (the
//! actual normalised run, its text report, its HTML diff), a JUnit XML file with the Shape
//! deltas as properties, and the GitHub step summary's table, which holds no message content.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

// The one escaper of the workspace, which pages use too.
use atif_view::support::escape_markup as xml_escape;

use crate::output::write_atomically;

/// The environment variable naming the artifacts folder, as `--artifacts` does.
pub(crate) const ARTIFACTS_ENV: &str = "ATIF_ARTIFACTS";
/// The file GitHub Actions gives a step for its summary, in Markdown.
const STEP_SUMMARY_ENV: &str = "GITHUB_STEP_SUMMARY";

/// How one golden check ended, in the words CI files use.
#[derive(Debug)]
pub(crate) struct Verdict {
    /// The golden file, as given.
    pub(crate) golden: String,
    /// `matched`, `updated`, `created`, `behaviour-changed`, `missing-golden`, ...
    pub(crate) verdict: String,
    /// Whether the check failed.
    pub(crate) failed: bool,
    /// The Shape deltas: (field, the report's line for it).
    pub(crate) deltas: Vec<(String, String)>,
    /// The text the check printed.
    pub(crate) message: String,
}

/// The artifacts folder: `--artifacts DIR`, else `ATIF_ARTIFACTS` when set and not empty.
pub(crate) fn artifacts_dir(flag: Option<&Path>) -> Option<PathBuf> {
    flag.map(Path::to_path_buf).or_else(|| {
        std::env::var_os(ARTIFACTS_ENV).filter(|dir| !dir.is_empty()).map(PathBuf::from)
    })
}

/// The stem of a failing check's files in the artifacts folder: the golden's path without its
/// `.json`, its folders joined by `__` (`tests/goldens/calc.json` gives `tests__goldens__calc`),
/// so goldens of the same name in different folders do not collide.
pub(crate) fn artifact_stem(golden: &str) -> String {
    let path = Path::new(golden);
    let parts: Vec<String> = path
        .with_extension("")
        .components()
        .filter_map(|part| match part {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".replace('.', "_")),
            _ => None,
        })
        .collect();
    if parts.is_empty() { "golden".to_owned() } else { parts.join("__") }
}

/// The files of a failing check in `dir`: `STEM.json` (the run, normalised: what the golden
/// would become), `STEM.report.txt` and, when both sides could be compared, `STEM.html`.
pub(crate) fn write_artifacts(
    dir: &Path,
    verdict: &Verdict,
    normalized_run: Option<&str>,
    page: Option<&str>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(|err| {
        anyhow::Error::new(err)
            .context(format!("cannot create the artifacts folder {}", dir.display()))
    })?;
    let stem = artifact_stem(&verdict.golden);
    if let Some(run) = normalized_run {
        write_atomically(&dir.join(format!("{stem}.json")), |out| out.write_all(run.as_bytes()))?;
    }
    let report = dir.join(format!("{stem}.report.txt"));
    write_atomically(&report, |out| writeln!(out, "{}", verdict.message.trim_end()))?;
    if let Some(page) = page {
        write_atomically(&dir.join(format!("{stem}.html")), |out| out.write_all(page.as_bytes()))?;
    }
    Ok(())
}

/// Writes `path` as JUnit XML: one test suite, one test case named after the golden, each Shape
/// delta a property of it, and a failure holding the report when the check failed.
pub(crate) fn write_junit(path: &Path, verdict: &Verdict) -> anyhow::Result<()> {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let failures = u8::from(verdict.failed);
    xml.push_str(&format!(
        "<testsuites tests=\"1\" failures=\"{failures}\">\n<testsuite name=\"atif check\" tests=\"1\" failures=\"{failures}\">\n"
    ));
    xml.push_str(&format!(
        "<testcase classname=\"atif.check\" name=\"{}\">\n",
        xml_escape(&verdict.golden)
    ));
    xml.push_str(&format!(
        "<properties>\n<property name=\"verdict\" value=\"{}\"/>\n",
        xml_escape(&verdict.verdict)
    ));
    for (field, text) in &verdict.deltas {
        xml.push_str(&format!(
            "<property name=\"delta.{}\" value=\"{}\"/>\n",
            xml_escape(field),
            xml_escape(text)
        ));
    }
    xml.push_str("</properties>\n");
    if verdict.failed {
        xml.push_str(&format!(
            "<failure message=\"{}\" type=\"{}\">{}</failure>\n",
            xml_escape(verdict.message.lines().next().unwrap_or_default()),
            xml_escape(&verdict.verdict),
            xml_escape(&verdict.message)
        ));
    }
    xml.push_str("</testcase>\n</testsuite>\n</testsuites>\n");
    write_atomically(path, |out| out.write_all(xml.as_bytes()))
}

/// One row of the step summary: the golden, its verdict and its deltas' fields.
pub(crate) struct SummaryRow<'a> {
    pub(crate) golden: &'a str,
    pub(crate) verdict: &'a str,
    /// The names of the Shape fields that moved: no message content, ever.
    pub(crate) fields: Vec<&'a str>,
}

/// On GitHub Actions (`GITHUB_STEP_SUMMARY` set), appends `rows` to the step summary as a
/// Markdown table (golden, verdict, deltas), its header first when the file is empty. GitHub
/// owns that file and reads what steps append, so it is appended to, not replaced.
pub(crate) fn append_step_summary(rows: &[SummaryRow<'_>]) -> anyhow::Result<()> {
    let Some(path) = std::env::var_os(STEP_SUMMARY_ENV).filter(|path| !path.is_empty()) else {
        return Ok(());
    };
    let path = PathBuf::from(path);
    let empty = std::fs::metadata(&path).map_or(true, |meta| meta.len() == 0);
    let mut text = String::new();
    if empty {
        text.push_str("| golden | verdict | deltas |\n| --- | --- | --- |\n");
    }
    for row in rows {
        let fields = if row.fields.is_empty() { "–".to_owned() } else { row.fields.join(", ") };
        text.push_str(&format!(
            "| `{}` | {} | {} |\n",
            markdown_cell(row.golden),
            markdown_cell(row.verdict),
            markdown_cell(&fields)
        ));
    }
    let mut file =
        std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(|err| {
            anyhow::Error::new(err)
                .context(format!("cannot open the step summary {}", path.display()))
        })?;
    file.write_all(text.as_bytes())?;
    Ok(())
}

/// `text` for a Markdown table cell: one line, its pipes and backticks escaped.
fn markdown_cell(text: &str) -> String {
    text.replace(['\n', '\r'], " ").replace('|', "\\|").replace('`', "'")
}
