//! `atif completions SHELL`: shell completion scripts; and `atif man DIR`, which writes the
//! man pages (`cargo xtask man` runs it too).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::output;
use crate::output::write_atomically;

/// Arguments of `atif completions`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    shell: clap_complete::Shell,
}

/// Arguments of `atif man`.
#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// The folder to write `atif.1` and one `atif-SUBCOMMAND.1` per subcommand into.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

/// Prints the completion script of `command` for the shell on standard output.
pub(crate) fn run(args: &Args, mut command: clap::Command) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "atif", &mut script);
    output::out(|out| out.write_all(&script))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the man pages of `command` and of each visible subcommand into the folder.
pub(crate) fn man(args: &ManArgs, command: clap::Command) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    let command = command.disable_help_subcommand(true);
    let mut pages = vec![("atif".to_owned(), command.clone())];
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let name = format!("atif-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().display_name(name.clone()).bin_name(name)));
    }
    for (name, page) in pages {
        let path = args.dir.join(format!("{name}.1"));
        write_atomically(&path, |out| clap_mangen::Man::new(page).render(out))?;
    }
    Ok(ExitCode::SUCCESS)
}
