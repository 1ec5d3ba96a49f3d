//! `rprof-gen`: dev-only generator of large profiles for rprof's benchmarks.
//!
//! `rprof-gen scale` replicates every iteration of a real Nsight Systems
//! SQLite export N times (issue #5): same schema, shifted times, fresh
//! correlation ids, fresh string ids and renumbered PyTorch markers.

mod scale;
mod text;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// Generate large profiles for rprof's benchmarks.
#[derive(Parser, Debug)]
#[command(name = "rprof-gen", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Replicate a real nsys SQLite export N times with shifted timestamps.
    ///
    /// Copy k (0-based) of every event row (kernels, CUDA API calls, NVTX
    /// ranges, memcpy, memset, synchronization, CUDA events) is shifted by
    /// k × (time span of the source + gap); its correlation ids, grid ids and
    /// NVTX range ids by k × (their span in the source); the numbers after
    /// `seq = ` and `op_id = ` in NVTX texts likewise. NVTX rows that
    /// reference `StringIds` through `textId` get fresh string ids per copy.
    /// Copy 0 is the source itself. Every other table (strings, processes,
    /// threads, enums, metadata) is copied once, and the schema (`CREATE`
    /// statements of `sqlite_master`) is the source's, byte for byte.
    ///
    /// Example: 1 M kernels and 4.8 M NVTX ranges from the nsys-ai fixture:
    ///
    ///   rprof-gen scale --copies 250 -o target/bench/x250.sqlite
    Scale(ScaleArgs),
}

#[derive(Args, Debug)]
struct ScaleArgs {
    /// Real nsys SQLite export to replicate [default: the first that exists
    /// of fixtures/nsys-ai/mfu_2gpu_before.sqlite and
    /// /work/shared/corpus/nsys-ai/mfu_2gpu_before.sqlite].
    #[arg(long, value_name = "SRC.sqlite")]
    source: Option<PathBuf>,
    /// Number of copies of the source's events (1 = a plain copy).
    #[arg(short = 'n', long, value_parser = clap::value_parser!(u32).range(1..))]
    copies: u32,
    /// Idle time between two copies, in ns.
    #[arg(long, default_value_t = 1_000_000, value_name = "NS")]
    gap_ns: i64,
    /// Output file; written to OUT.partial first, then renamed.
    #[arg(short = 'o', long, value_name = "OUT.sqlite")]
    output: PathBuf,
    /// Replace the output file if it exists.
    #[arg(short = 'f', long)]
    force: bool,
    /// No progress and summary on stderr.
    #[arg(short = 'q', long)]
    quiet: bool,
}

/// Where to look for the source when `--source` is not given.
fn default_sources() -> Vec<PathBuf> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    vec![
        repo.join("fixtures/nsys-ai/mfu_2gpu_before.sqlite"),
        PathBuf::from("/work/shared/corpus/nsys-ai/mfu_2gpu_before.sqlite"),
    ]
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Scale(a) => {
            let source = match a.source {
                Some(s) => s,
                None => {
                    let candidates = default_sources();
                    match candidates.iter().find(|p| p.is_file()) {
                        Some(p) => p.clone(),
                        None => {
                            let list: Vec<String> =
                                candidates.iter().map(|p| p.display().to_string()).collect();
                            anyhow::bail!(
                                "no source trace: none of {} exists; pass --source SRC.sqlite \
                                 (a real nsys SQLite export, e.g. an MIT nsys-ai fixture)",
                                list.join(", ")
                            );
                        }
                    }
                }
            };
            let summary = scale::scale(&scale::Options {
                source,
                copies: a.copies,
                gap_ns: a.gap_ns,
                output: a.output,
                force: a.force,
                progress: !a.quiet,
            })?;
            if !a.quiet {
                let mut e = std::io::stderr().lock();
                writeln!(e, "{summary}")?;
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "rprof-gen: {err:#}");
            ExitCode::FAILURE
        }
    }
}
