//! `rprof gpu`: utilization, SM efficiency, occupancy, kernel view,
//! roofline, and the Kineto occupancy check.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use rprof_report::gpu::{GpuOptions, GpuReport, RoofBy};
use rprof_report::model::{self, Models};

use crate::input::{self, Input};
use crate::out::{self, UsageError};
use crate::style::{OutFormat, TableArgs, Wrap};
use rprof_report::ColumnType;
use rprof_report::{DataFormat, DataTable};

/// GPU utilization, SM efficiency, occupancy, kernel view, roofline.
///
/// Per GPU: the profiled span (first kernel start to last kernel end on any
/// GPU in the input), busy time (time with at least one kernel running; copies and sets do not count),
/// utilization (busy / span), estimated SM efficiency (min(blocks / SMs, 1)
/// per kernel) and estimated achieved occupancy (the CUDA occupancy rules
/// capped by blocks / SMs, as the PyTorch profiler estimates it), both
/// weighted by kernel duration, and the share of kernel time in kernels
/// using tensor cores. The GPU's limits come from the profile's device
/// table, else rprof's compute-capability table with the compute capability
/// inferred from kernel names (`sm90_…`, `ampere_…`), the SM count from the
/// PyTorch profiler's `blocks per SM`; the output says which. Then a kernel view (per kernel name) and a roofline (per op or
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

    /// Leave out the roofline, the only part that needs the op models: a
    /// profile's NVTX ranges (or profiler operators) are then not read,
    /// which is much faster on large profiles. (`--format csv`, `tsv` or
    /// `parquet` with `--table devices` or `kernels` never read them.)
    #[arg(long)]
    pub no_roofline: bool,

    /// Clip names to N characters (0: never; other formats than table never
    /// clip).
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub name_width: usize,

    /// Output format: table, or one of the report's tables (--table) as
    /// csv, tsv or parquet, or every table as one json document. Values
    /// are as the table prints them (ms with 3 decimals, % with 2);
    /// unknown values are null or empty cells.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = OutFormat::Table)]
    pub format: OutFormat,

    /// Which table --format csv, tsv or parquet writes.
    #[arg(long, value_enum, value_name = "TABLE", default_value_t = GpuTable::Devices)]
    pub table: GpuTable,

    /// Write to FILE instead of standard output (`-`: standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub style: TableArgs,

    /// No parse summary or progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// A profile (nsys or nvprof SQLite, Kineto trace) or records of
    /// `rprof parse` (`-` or absent: standard input).
    pub file: Option<PathBuf>,
}

/// The tables of the GPU report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GpuTable {
    /// One row per GPU: SMs, limits, utilization, SM efficiency, occupancy.
    Devices,
    /// The kernel view: one row per kernel name.
    Kernels,
    /// The roofline rows of every GPU model.
    Roofline,
    /// The Kineto occupancy check (with --kineto-check).
    Kineto,
}

impl GpuTable {
    fn name(self) -> &'static str {
        match self {
            GpuTable::Devices => "devices",
            GpuTable::Kernels => "kernels",
            GpuTable::Roofline => "roofline",
            GpuTable::Kineto => "kineto",
        }
    }
}

/// The name of a rendered table, from its headers.
fn table_name(headers: &[String]) -> &'static str {
    let first = headers.first().map_or("", String::as_str);
    if first == "GPU" {
        "devices"
    } else if headers.iter().any(|h| h == "Math") {
        "roofline"
    } else if first.starts_with("Kernel (full name)") {
        "kineto"
    } else {
        "kernels"
    }
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
  rprof gpu worker0.pt.trace.json.gz --kineto-check
  rprof gpu net.sqlite --format json | jq '.tables[0].rows'
  rprof gpu net.sqlite --format csv --table kernels
  rprof gpu big.sqlite --no-roofline      # utilization only: NVTX not read";

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
    source.choose_allocator();
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
        name_width: if args.format == OutFormat::Table {
            args.name_width
        } else {
            0
        },
        roofline: !args.no_roofline,
    };
    // only the roofline depends on the ranges (through the models): without
    // it they are neither read nor attributed, and the models not run
    let one_table = matches!(
        args.format,
        OutFormat::Csv | OutFormat::Tsv | OutFormat::Parquet
    ) && matches!(args.table, GpuTable::Devices | GpuTable::Kernels);
    let ranges = if args.no_roofline || one_table {
        input::Ranges::Skip
    } else {
        input::Ranges::Read
    };
    let mut models = Models::new();
    let mut report: Option<GpuReport> = None;
    let read = input::Options {
        compat: false,
        memops: false,
        quiet: args.quiet,
        streams: false,
    };
    // on a profile, a pipeline: records built, the backward lookup run on
    // them (in order), and the models and sums of the chunk before made here
    let skip = ranges == input::Ranges::Skip;
    let info = input::for_each_chunk_prepared(
        &source,
        read,
        ranges,
        |recs| models.resolve_if(!skip, recs),
        |recs, resolved, info| {
            let r =
                report.get_or_insert_with(|| GpuReport::new(info.devices.clone(), opts.clone()));
            r.learn_devices(&info.devices);
            if skip {
                let est: Vec<_> = recs.iter().map(model::unmodelled).collect();
                r.add_chunk(recs, &est);
                return Ok(());
            }
            let est = model::estimate(recs, &resolved);
            r.add_chunk(recs, &est);
            Ok(())
        },
    )?;
    let report = report.unwrap_or_else(|| GpuReport::new(info.devices, opts));
    let Some(data) = args.format.data() else {
        args.style.apply();
        let inputs: Vec<&std::path::Path> = args.file.iter().map(|p| p.as_path()).collect();
        let mut w = out::create(args.output.as_deref(), &inputs)?;
        match args.style.width() {
            Some(width) => {
                let mut wrap = Wrap::new(&mut w, width);
                report.write(&mut wrap, &name)?;
                wrap.flush()?;
            }
            None => report.write(&mut w, &name)?,
        }
        w.finish()?;
        return Ok(());
    };
    // the machine-readable formats are the tables the report renders
    let (written, captured) = rprof_report::text::capture(|| report.write(std::io::sink(), &name));
    written?;
    let mut tables: Vec<DataTable> = Vec::new();
    for c in &captured {
        let t = DataTable::from_captured(table_name(&c.headers), c);
        // tables of one kind (a roofline per GPU model) are one table
        match tables
            .iter_mut()
            .find(|x| x.name == t.name && x.columns == t.columns)
        {
            Some(x) => x.rows.extend(t.rows),
            None => tables.push(t),
        }
    }
    let meta = [
        ("rprof.report", "gpu".to_owned()),
        ("rprof.input", name.clone()),
    ];
    if data == DataFormat::Json {
        let doc = serde_json::json!({
            "report": "gpu",
            "input": name,
            "tables": tables.iter().map(|t| t.to_json(TYPES)).collect::<Vec<_>>(),
        });
        let inputs: Vec<&std::path::Path> = args.file.iter().map(|p| p.as_path()).collect();
        let mut w = out::create(args.output.as_deref(), &inputs)?;
        serde_json::to_writer_pretty(&mut w, &doc)?;
        w.write_all(b"\n")?;
        w.finish()?;
        return Ok(());
    }
    let want = args.table.name();
    let table = tables
        .into_iter()
        .find(|t| t.name == want)
        .unwrap_or_else(|| DataTable {
            name: want.to_owned(),
            ..DataTable::default()
        });
    let inputs: Vec<&std::path::Path> = args.file.iter().map(|p| p.as_path()).collect();
    crate::cmd::write_data(&table, data, TYPES, &meta, args.output.as_deref(), &inputs)
}

/// Column types that must not depend on the values.
const TYPES: &[(&str, ColumnType)] = &[("cc", ColumnType::Utf8), ("name", ColumnType::Utf8)];
