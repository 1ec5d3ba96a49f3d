//! `rprof steps`: per-step time breakdown (TensorBoard plugin categories).

use std::path::PathBuf;

use clap::Args;
use regex::Regex;
use rprof_report::ColumnType;
use rprof_report::steps::{self, StepOptions};

use super::hostview::{self, OutputArgs};
use crate::out::UsageError;

/// Training steps: wall time and where it goes, per step and on average.
///
/// Steps are the PyTorch profiler's `ProfilerStep#N` ranges; else ranges
/// named like `step`, `iteration`, `train_step 12`; or, with --step, the
/// NVTX / annotation ranges whose name matches REGEX (the output says which
/// was used). Each step is aligned to the GPU work it launched as the
/// TensorBoard plugin does, and its time is split in the plugin's priority
/// order Kernel > Memcpy > Memset > Communication > Runtime > DataLoader >
/// CPU exec > Other: each category counts only time no category before it
/// covers, so a step's categories sum to its time exactly. Also: step-time
/// spread, outliers (Tukey 1.5 IQR) and GPU utilization (time with a kernel
/// running / step time). See docs/reports.md, "Steps".
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct StepsArgs {
    /// Steps are the ranges whose name matches REGEX (searched anywhere in
    /// the name; anchor with ^ and $).
    #[arg(long, value_name = "REGEX")]
    pub step: Option<String>,

    #[command(flatten)]
    pub out: OutputArgs,

    /// The profile: nsys or nvprof SQLite, or a PyTorch profiler trace.
    pub file: PathBuf,
}

const AFTER_HELP: &str = "\
Examples:
  rprof steps worker0.pt.trace.json.gz
  rprof steps net.sqlite --step '^iteration \\d+$'
  rprof steps net.sqlite --json | jq '.mean'
  rprof steps net.sqlite --format parquet -o steps.parquet";

pub fn run(args: &StepsArgs) -> anyhow::Result<()> {
    let pattern = match &args.step {
        Some(p) => Some(
            Regex::new(p)
                .map_err(|e| UsageError(format!("--step {p:?}: not a regular expression ({e})")))?,
        ),
        None => None,
    };
    // ranges are named by operator (`host::range_op_name`) throughout
    let wants = hostview::Wants {
        host: true,
        syncs: false,
        innermost: true,
        range_names: true,
        blocking_calls: false,
    };
    let (trace, innermost) = hostview::load(&args.file, wants, args.out.quiet)?;
    let report = steps::compute(&trace, &StepOptions { pattern }, &innermost);
    // TSV and Parquet: the step rows; the CSV's `mean` line (a mean of
    // the rows, in fractional ns) is left out so that ns stay integers
    args.out.emit(
        &args.file,
        "steps",
        "steps",
        TYPES,
        |row| row.first().is_some_and(|n| n == "mean") && row.get(1).is_some_and(String::is_empty),
        |mut w, format| steps::write(&mut w, &report, format, args.out.name_width),
    )
}

/// Column types that must not depend on the values.
const TYPES: &[(&str, ColumnType)] = &[
    ("name", ColumnType::Utf8),
    ("gpu_util", ColumnType::Float64),
    ("outlier", ColumnType::Bool),
];
