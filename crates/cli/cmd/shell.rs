//! `rprof completions SHELL` and `rprof man`: shell integration generated
//! from the argument definitions (clap_complete, clap_mangen), so they never
//! drift from the options.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::args::Cli;
use crate::out;

/// Print a completion script for SHELL on standard output.
///
/// bash: `rprof completions bash > ~/.local/share/bash-completion/completions/rprof`;
/// zsh: `rprof completions zsh > ~/.zfunc/_rprof` (with `fpath+=~/.zfunc`
/// before `compinit`); fish: `rprof completions fish >
/// ~/.config/fish/completions/rprof.fish`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Print the manual page (roff), or write one page per command to a
/// folder.
///
/// `rprof man | man -l -` shows it; `rprof man --dir ~/.local/share/man/man1`
/// installs rprof.1 and rprof-COMMAND.1 for `man rprof`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write rprof.1 and rprof-COMMAND.1 into this folder instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn completions(args: &CompletionsArgs) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    let mut w = out::create(None, &[])?;
    clap_complete::generate(args.shell, &mut cmd, "rprof", &mut w);
    w.finish()?;
    Ok(())
}

pub fn man(args: &ManArgs) -> anyhow::Result<()> {
    let cmd = Cli::command();
    match &args.dir {
        None => {
            let mut w = out::create(None, &[])?;
            clap_mangen::Man::new(cmd).render(&mut w)?;
            w.finish()?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("cannot write man pages to {}", dir.display()))?;
        }
    }
    Ok(())
}
