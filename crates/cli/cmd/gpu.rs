//! `rprof gpu`: utilization, SM efficiency, occupancy, kernel view,
//! roofline, and the Kineto occupancy check.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use rprof_report::gpu::{GpuOptions, GpuReport, RoofBy};
use rprof_report::model::{self, Models};

use crate::input::{self, Input};
use crate::out::{self, UsageError};

/// GPU utilization, SM efficiency, occupancy, kernel view, roofline.
///
/// Per GPU: the profiled span (first kernel start to last kernel end on any
/// GPU in the input), busy time (time with at least one kernel running),
/// utilization (busy / span), estimated SM efficiency (min(blocks / SMs, 1)
/// per kernel) and estimated achieved occupancy (the CUDA occupancy rules
/// capped by blocks / SMs, as the PyTorch profiler estimates it), both
/// weighted by kernel duration. The GPU's limits come from the profile's
/// device table, else rprof's compute-capability table; the output says
/// which. Then a kernel view (per kernel name) and a roofline (per op or
/// kernel) with peaks from rprof's table of known GPUs (or the flags below;
/// an unknown GPU is reported as such, never guessed). See docs/reports.md.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct GpuArgs {
    /// Also print utilization per bucket of MS milliseconds (`--buckets`
    /// alone: 10 ms; a value needs `=`, as in `--buckets=2.5`).
    #[arg(
        long,
        value_name = "MS",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "10"
    )]
    pub buckets: Option<f64>,

    /// Rows of the kernel view, the roofline and the Kineto check (0: all).
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub top: usize,

    /// Roofline rows: per op or per kernel name.
    #[arg(long, value_enum, value_name = "BY", default_value_t = RoofArg::Op)]
    pub roofline_by: RoofArg,

    /// Peak arithmetic throughput, TFLOP/s, used for every op (overrides
    /// rprof's GPU table).
    #[arg(long, value_name = "TFLOPS")]
    pub peak_tflops: Option<f64>,

    /// Memory bandwidth, GB/s (overrides rprof's GPU table).
    #[arg(long, value_name = "GBS")]
    pub bandwidth_gbs: Option<f64>,

    /// For PyTorch profiler (Kineto) input: print rprof's occupancy
    /// estimate next to the one Kineto recorded, and the difference.
    #[arg(long)]
    pub kineto_check: bool,

    /// Clip names to N characters (0: never).
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub name_width: usize,

    /// No parse summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// A profile (nsys or nvprof SQLite, Kineto trace) or records of
    /// `rprof parse` (`-` or absent: standard input).
    pub file: Option<PathBuf>,
}

/// Roofline rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RoofArg {
    /// One row per op (and math class).
    Op,
    /// One row per kernel name (and math class).
    Kernel,
}

const AFTER_HELP: &str = "\
Examples:
  rprof gpu net.sqlite
  rprof gpu net.sqlite --buckets          # utilization per 10 ms
  rprof gpu net.sqlite --buckets=1 --top 0
  rprof gpu net.dict --peak-tflops 312 --bandwidth-gbs 2039
  rprof gpu worker0.pt.trace.json.gz --kineto-check";

fn positive(name: &str, v: Option<f64>) -> anyhow::Result<()> {
    match v {
        Some(x) if !(x.is_finite() && x > 0.0) => {
            Err(UsageError(format!("{name} {x}: must be a positive number")).into())
        }
        _ => Ok(()),
    }
}

pub fn run(args: &GpuArgs) -> anyhow::Result<()> {
    positive("--buckets", args.buckets)?;
    positive("--peak-tflops", args.peak_tflops)?;
    positive("--bandwidth-gbs", args.bandwidth_gbs)?;
    let bucket_ns = args.buckets.map(|ms| (ms * 1e6).round() as i64);
    if bucket_ns == Some(0) {
        return Err(UsageError("--buckets: must be at least 1 ns".into()).into());
    }
    let source = Input::detect(args.file.as_deref())?;
    let name = source.name();
    let opts = GpuOptions {
        bucket_ns,
        top: args.top,
        roof_by: match args.roofline_by {
            RoofArg::Op => RoofBy::Op,
            RoofArg::Kernel => RoofBy::Kernel,
        },
        peak_tflops: args.peak_tflops,
        bandwidth_gbs: args.bandwidth_gbs,
        kineto_check: args.kineto_check,
        name_width: args.name_width,
    };
    let mut models = Models::new();
    let mut report: Option<GpuReport> = None;
    let read = input::Options {
        compat: false,
        memops: false,
        quiet: args.quiet,
    };
    let info = input::for_each_chunk(&source, read, |recs, info| {
        let r = report.get_or_insert_with(|| GpuReport::new(info.devices.clone(), opts.clone()));
        let resolved = models.resolve(recs);
        let est = model::estimate(recs, &resolved);
        for (rec, e) in recs.iter().zip(&est) {
            r.add(rec, e);
        }
        Ok(())
    })?;
    let report = report.unwrap_or_else(|| GpuReport::new(info.devices, opts));
    let mut w = out::create(None, &[])?;
    report.write(&mut w, &name)?;
    w.finish()?;
    Ok(())
}
