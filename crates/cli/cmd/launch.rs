//! `rprof launch`: launch latency, API time, queues, launch-bound kernels.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use rprof_report::ColumnType;
use rprof_report::launch::{self};

use super::hostview::{self, OutputArgs};

/// Kernel launch overhead: latency, API time, launch queues, launch-bound kernels.
///
/// Per kernel: launch latency (kernel start - launch call end) and API time
/// (launch call duration), summarised per kernel name and per op (the
/// innermost range enclosing the launch call) with count, mean, median,
/// min and max, as `nsys stats --report cuda_kern_exec_sum` does. Per
/// stream: the launch queue over time (+1 at each launch call start, -1 at
/// each operation start): mean, max and time-weighted percentiles, and the
/// time with the queue empty. Launch-bound kernels: shorter than their own
/// launch call, per op and kernel. See docs/reports.md, "Launch".
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct LaunchArgs {
    /// Rows per table in the text output (0: all).
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub top: usize,

    /// The table CSV, TSV and Parquet output hold (`each`: one row per kernel).
    #[arg(long, value_enum, value_name = "TABLE", default_value_t = CsvTable::Kernels)]
    pub table: CsvTable,

    #[command(flatten)]
    pub out: OutputArgs,

    /// The profile: nsys or nvprof SQLite, or a PyTorch profiler trace.
    pub file: PathBuf,
}

/// Tables of the CSV, TSV and Parquet output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CsvTable {
    /// Per kernel name.
    Kernels,
    /// Per op.
    Ops,
    /// Per stream queue.
    Queues,
    /// Launch-bound (op, kernel) pairs.
    LaunchBound,
    /// Every kernel with a launch call: start, device, stream, kernel, op,
    /// API time, latency, duration (also added to --json as `each`).
    Each,
}

const AFTER_HELP: &str = "\
Examples:
  rprof launch net.sqlite
  rprof launch net.sqlite --csv --table ops
  rprof launch worker0.pt.trace.json.gz --json | jq '.queues'
  rprof launch net.sqlite --format parquet --table each -o launches.parquet";

pub fn run(args: &LaunchArgs) -> anyhow::Result<()> {
    // launches, their kernels and innermost ranges (by operator name): no
    // other API call, no range on a thread that launched nothing
    let wants = hostview::Wants {
        host: false,
        syncs: false,
        innermost: true,
        range_names: true,
        blocking_calls: false,
    };
    let (trace, innermost) = hostview::load(&args.file, wants, args.out.quiet)?;
    let each = args.table == CsvTable::Each;
    let report = launch::compute(&trace, &innermost, each);
    let table = match args.table {
        CsvTable::Kernels => "kernels",
        CsvTable::Ops => "ops",
        CsvTable::Queues => "queues",
        CsvTable::LaunchBound => "launch-bound",
        CsvTable::Each => "each",
    };
    args.out.emit(
        &args.file,
        "launch",
        table,
        TYPES,
        |_| false,
        |mut w, format| {
            launch::write(
                &mut w,
                &report,
                format,
                table,
                args.top,
                args.out.name_width,
            )
        },
    )
}

/// Column types that must not depend on the values.
const TYPES: &[(&str, ColumnType)] = &[
    ("kernel", ColumnType::Utf8),
    ("op", ColumnType::Utf8),
    ("name", ColumnType::Utf8),
    ("mean", ColumnType::Float64),
    ("empty_share_of_span", ColumnType::Float64),
];
