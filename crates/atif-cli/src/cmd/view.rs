//! `atif view`: one trajectory as a self-contained HTML page.

use std::path::{Component, Path};
use std::process::ExitCode;

use crate::cmd::normalize::normalized_document;
use crate::flags::NormalizeArgs;
use crate::input::read_input;
use crate::output;
use crate::output::OutputArgs;

/// The largest image file a page embeds; a larger one is shown as its path.
const MAX_IMAGE_BYTES: u64 = 16 << 20;

/// Arguments of `atif view`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trajectory file (`-` for standard input); it is normalised first, so the page
    /// shows what a golden would hold, redacted.
    #[arg(value_name = "FILE")]
    pub(crate) file: String,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    #[command(flatten)]
    pub(crate) normalize: NormalizeArgs,
}

/// Runs `atif view`: exit 0 with the page written, 1 when the input is not a trajectory, 2
/// when it cannot be read or the page cannot be written.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let bytes = read_input(&args.file)?;
    let options = args.normalize.to_options("view", Some(&args.file), Some(&bytes))?.options;
    let run = normalized_document(&bytes, &args.file, &options)?.into_value();
    let mut view_options = atif_view::ViewOptions::new();
    if args.file != "-" {
        let dir = Path::new(&args.file).parent().unwrap_or(Path::new("."));
        add_images(&mut view_options, &run, dir)?;
    }
    let page = atif_view::render_run(&run, &view_options)?;
    args.output.write(|out| out.write_all(page.as_bytes()))?;
    Ok(ExitCode::SUCCESS)
}

/// Reads the images `run` references from files beside the trajectory (`dir` and below, never
/// above it or elsewhere), for the page to embed.
pub(crate) fn add_images(
    view_options: &mut atif_view::ViewOptions,
    run: &serde_json::Value,
    dir: &Path,
) -> anyhow::Result<()> {
    for path in atif_view::image_paths(run) {
        let relative = Path::new(&path);
        let beside = relative.components().all(|part| matches!(part, Component::Normal(_)));
        let Some(media_type) = media_type(relative).filter(|_| beside) else { continue };
        let file = dir.join(relative);
        let small =
            std::fs::metadata(&file).is_ok_and(|m| m.is_file() && m.len() <= MAX_IMAGE_BYTES);
        match std::fs::read(&file) {
            Ok(bytes) if small => {
                view_options.add_image(&path, media_type, bytes)?;
            }
            _ => output::note(|err| {
                writeln!(
                    err,
                    "note: image {path} is not shown: no file of at most 16 MiB at {}",
                    file.display()
                )
            })?,
        }
    }
    Ok(())
}

/// The media type of an image file, from its extension.
fn media_type(path: &Path) -> Option<&'static str> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    match extension.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}
