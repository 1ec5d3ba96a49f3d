//! `rprof idle`: GPU gaps per stream, classified, with their host causes.

use std::path::PathBuf;

use clap::Args;
use rprof_report::ColumnType;
use rprof_report::idle::{self, IdleOptions};

use super::hostview::{self, OutputArgs};
use crate::out::UsageError;

/// GPU idle gaps per stream, classified as HTA does, and why the big ones happened.
///
/// A gap is the time between consecutive GPU operations (kernels, copies,
/// sets) on one stream. Host wait: the next operation's launch call began
/// after the previous operation ended. Kernel wait: otherwise, and the gap
/// is shorter than --kernel-wait-us. Other: the rest. For the --top largest
/// gaps: the ranges (NVTX, CPU ops) open on the launching thread during the
/// gap, the blocking calls (cudaDeviceSynchronize, cudaStreamSynchronize,
/// cudaEventSynchronize, blocking cudaMemcpy/cudaMemset) and CUPTI sync
/// records overlapping it, and a named cause. See docs/reports.md, "Idle".
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct IdleArgs {
    /// Kernel-wait threshold, microseconds (HTA's default: 30).
    #[arg(long, value_name = "US", default_value_t = 30.0)]
    pub kernel_wait_us: f64,

    /// Explain the N largest gaps (0: none).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,

    #[command(flatten)]
    pub out: OutputArgs,

    /// The profile: nsys or nvprof SQLite, or a PyTorch profiler trace.
    pub file: PathBuf,
}

const AFTER_HELP: &str = "\
Examples:
  rprof idle net.sqlite
  rprof idle net.sqlite --kernel-wait-us 10 --top 20
  rprof idle worker0.pt.trace.json.gz --json | jq '.gaps[0].cause'
  rprof idle net.sqlite --format tsv -o streams.tsv";

pub fn run(args: &IdleArgs) -> anyhow::Result<()> {
    let us = args.kernel_wait_us;
    if !(us.is_finite() && (0.0..=1e9).contains(&us)) {
        return Err(UsageError(format!(
            "--kernel-wait-us {us}: must be a number of microseconds from 0 to 1e9"
        ))
        .into());
    }
    let opts = IdleOptions {
        kernel_wait_ns: (us * 1000.0).round() as i64,
        top: args.top.min(100_000),
        ..IdleOptions::default()
    };
    // its gaps list the host ranges by their whole text, and of the API
    // calls only those that block the host
    let wants = hostview::Wants {
        host: true,
        syncs: true,
        innermost: false,
        range_names: false,
        blocking_calls: true,
    };
    let (trace, _) = hostview::load(&args.file, wants, args.out.quiet)?;
    let report = idle::compute(&trace, &opts);
    args.out.emit(
        &args.file,
        "idle",
        "streams",
        TYPES,
        |_| false,
        |mut w, format| idle::write(&mut w, &report, format, args.out.name_width),
    )
}

/// Column types that must not depend on the values.
const TYPES: &[(&str, ColumnType)] = &[("idle_share_of_span", ColumnType::Float64)];
