//! Command-line arguments (clap derive). Doc comments are the help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// GPU profiles of deep-learning jobs, kernel by kernel.
///
/// `rprof parse` turns an Nsight Systems export (`nsys export --type sqlite`)
/// or an nvprof database into one record per GPU kernel; `rprof prof` prints
/// them as a table with op, parameters, FLOPs, bytes and tensor-core use.
#[derive(Parser, Debug)]
#[command(name = "rprof", version = VERSION, propagate_version = true)]
#[command(after_long_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// `0.1.0 (commit 0123456789ab)`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("RPROF_GIT_COMMIT"),
    ")"
);

pub const EXIT_CODES: &str = "\
Exit status:
  0  success (also when the reader of the output goes away, as with | head)
  1  bad input or I/O error: the message names the file and the problem
  2  usage error
  3  rprof diff --fail-above PCT: a key regressed by more than PCT %";

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Read a profile and write one record per GPU kernel.
    Parse(ParseArgs),
    /// Print records as a table: op, params, FLOPs, bytes, tensor cores.
    Prof(super::cmd::prof::ProfArgs),
    // the help of these is the doc comment of their argument structs
    Summary(super::cmd::summary::SummaryArgs),
    Gpu(super::cmd::gpu::GpuArgs),
    Mem(super::cmd::mem::MemArgs),
    Export(super::cmd::export::ExportArgs),
    Report(super::cmd::report::ReportArgs),
    Dist(super::cmd::dist::DistArgs),
    Diff(super::cmd::diff::DiffArgs),
    Steps(super::cmd::steps::StepsArgs),
    Idle(super::cmd::idle::IdleArgs),
    Launch(super::cmd::launch::LaunchArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(super::cmd::shell::CompletionsArgs),
    /// Print the manual page (roff) of rprof and its subcommands.
    Man(super::cmd::shell::ManArgs),
    Stats(super::cmd::stats::StatsArgs),
}

/// Record line format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// JSON Lines: one object per kernel with PyProf's keys and rprof's own,
    /// every key on every line (docs/records.md); with -o FILE, what the
    /// profile says about itself goes to FILE.meta.json.
    Json,
    /// PyProf's own Python-dict lines (PyProf's keys only).
    Pydict,
    /// Apache Parquet: one typed, nullable column per JSON key; source and
    /// device table in the file's key-value metadata (`rprof`).
    Parquet,
}

/// `rprof parse --stack`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StackArg {
    /// Every enclosing range, outermost first, repeats included (schema 2.0).
    Full,
    /// Every enclosing range, consecutive repeats written once with their
    /// count in `stackRuns` (readers expand them back).
    Runs,
    /// Only the innermost range (what `summary --by nvtx` groups by).
    Inner,
    /// No range (`stackCut` still gives the depth).
    None,
}

impl StackArg {
    /// The builder's form of this choice, bounded to `max_bytes`.
    pub fn form(self, max_bytes: usize) -> rprof_trace::model::StackForm {
        use rprof_trace::model::{StackForm, StackMode};
        StackForm {
            mode: match self {
                StackArg::Full => StackMode::Full,
                StackArg::Runs => StackMode::Runs,
                StackArg::Inner => StackMode::Inner,
                StackArg::None => StackMode::None,
            },
            max_bytes,
        }
    }
}

/// Read a profile and write one record per GPU kernel, in kernel start order.
///
/// Reads Nsight Systems SQLite exports (2020.4 to 2026.x) and nvprof
/// databases; the format is detected from the tables in the file. The input
/// is opened read-only and never changed. A summary goes to stderr.
#[derive(Args, Debug)]
#[command(after_long_help = PARSE_EXAMPLES)]
pub struct ParseArgs {
    /// Profile to read: an nsys `.sqlite` export or an nvprof `.sql` database.
    pub file: PathBuf,

    /// Record format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,

    /// Write records to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Reproduce apex.pyprof exactly, bugs included (see docs/compat.md).
    #[arg(long)]
    pub compat: bool,

    /// Treat data warnings (kernel rows with NULL times or end <= start) as
    /// errors: exit 1 instead of skipping or keeping them.
    #[arg(long)]
    pub strict: bool,

    /// Which enclosing ranges each record's `stack` carries (JSON Lines and
    /// Parquet; docs/records.md). `stackCut` and `stackCutBytes` count what
    /// a record leaves out.
    #[arg(long, value_enum, default_value_t = StackArg::Runs)]
    pub stack: StackArg,

    /// Most bytes of range text one record's `stack` carries: ranges kept
    /// from the innermost outward, the first that does not fit clipped, the
    /// rest left out and counted (`stackCut`, `stackCutBytes`). 0: no bound.
    #[arg(long, value_name = "BYTES", default_value_t = 65536)]
    pub stack_bytes: usize,

    /// No summary or progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

const PARSE_EXAMPLES: &str = "\
Examples:
  rprof parse net.sqlite > net.dict
  rprof parse --format pydict net.sql > net.dict      # PyProf's line format
  rprof parse --format parquet -o rank0.parquet net.sqlite
  rprof parse net.sqlite | rprof prof -w 150 -c idx,dir,op,kernel,sil";
