//! `rprof prof`: records → table.

use clap::Args;

/// Print records as a table.
#[derive(Args, Debug)]
pub struct ProfArgs {
    /// Record file (default: standard input).
    pub file: Option<std::path::PathBuf>,
}

pub fn run(_args: &ProfArgs) -> anyhow::Result<()> {
    anyhow::bail!("not yet")
}
