//! `rprof mem`: allocations over time, peaks, who allocates, alive memory,
//! and memory traffic (copies and sets).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use rprof_report::mem::render::{self, Section};
use rprof_report::mem::{self, MemOptions};
use rprof_trace::read::{self, ReadOptions};

use crate::input::Input;
use crate::out::{self, UsageError};
use crate::style::{OutFormat, TableArgs, Wrap};
use rprof_report::ColumnType;
use rprof_report::DataFormat;

/// Memory: allocations per device, per op, alive at the end; copies and sets.
///
/// Allocations come from PyTorch-profiler `[memory]` events
/// (`profile_memory=True`) and nsys `CUDA_GPU_MEMORY_USAGE_EVENTS`
/// (`--cuda-memory-usage=true`): per device, allocations and frees, bytes,
/// the net change, the peak and the low of the running sum in the window
/// (from 0 before the first event; a negative low means memory allocated
/// before the window was freed in it), and the peak of the allocator's own
/// Total Allocated / Total Reserved where recorded (else `na`). Per op:
/// events attributed to the innermost op enclosing them on their thread
/// (self) and to every enclosing op (incl.). Alive: allocations never freed,
/// by address. Copies and sets (nsys, nvprof, PyTorch profiler): count,
/// time, bytes, bandwidth per kind; and the copies and sets that make the
/// host wait (async copies of pageable memory, synchronous copies and
/// sets), with the ops that issued them. See docs/reports.md, "mem".
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct MemArgs {
    /// Output format: table, csv, tsv or parquet (one table: --table), or
    /// json (one document with every table but the curve).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = OutFormat::Table)]
    pub format: OutFormat,

    /// Shorthand for --format csv.
    #[arg(long, conflicts_with_all = ["json", "format"])]
    pub csv: bool,

    /// Shorthand for --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// The table --format csv, tsv or parquet writes (`curve`: the memory
    /// curve per device, as --curve writes it).
    #[arg(long = "table", alias = "section", value_name = "TABLE", default_value = "devices", value_parser = table_parser())]
    pub section: MemTable,

    /// Write the memory curve per device (bucketed running sums) as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub curve: Option<PathBuf>,

    /// Buckets of the curve per device (1 to 100000; at most 1000000 rows in all).
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub curve_buckets: usize,

    /// Rows of the op and alive tables and issuers per flag (0: all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// Clip names in the table to N characters (0: never).
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub name_width: usize,

    /// Write the report to FILE instead of standard output (`-`: standard
    /// output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub style: TableArgs,

    /// No summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// A profile: nsys or nvprof SQLite, or a PyTorch-profiler trace.
    pub file: PathBuf,
}

const AFTER_HELP: &str = "\
Examples:
  rprof mem trace.pt.trace.json.gz            # PyTorch profiler run with profile_memory=True
  rprof mem net.sqlite                        # nsys: copies and sets; allocations with --cuda-memory-usage=true
  rprof mem net.sqlite --curve mem.csv        # the memory curve per device, for plotting
  rprof mem trace.json.gz --json
  rprof mem net.sqlite --csv --table copies
  rprof mem trace.json.gz --format parquet --table ops -o mem_ops.parquet";

/// A table of the report: one of its sections, or the curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemTable {
    /// A section of the report.
    Section(Section),
    /// The memory curve per device.
    Curve,
}

fn table_parser() -> impl TypedValueParser<Value = MemTable> {
    let names = Section::ALL
        .map(|s| PossibleValue::new(s.name()))
        .into_iter()
        .chain([PossibleValue::new("curve")]);
    PossibleValuesParser::new(names)
        .map(|s| Section::from_name(&s).map_or(MemTable::Curve, MemTable::Section))
}

/// Column types that must not depend on the values.
const TYPES: &[(&str, ColumnType)] = &[
    ("device_type", ColumnType::Utf8),
    ("op", ColumnType::Utf8),
    ("api", ColumnType::Utf8),
    ("kind", ColumnType::Utf8),
    ("rule", ColumnType::Utf8),
    ("addr", ColumnType::UInt64),
    ("peak_in_window_op", ColumnType::Utf8),
    ("peak_total_allocated_op", ColumnType::Utf8),
    ("peak_total_allocated_bytes", ColumnType::Int64),
    ("peak_total_allocated_ns", ColumnType::Int64),
    ("peak_total_reserved_bytes", ColumnType::Int64),
    ("peak_total_reserved_ns", ColumnType::Int64),
    ("peak_pool_size_bytes", ColumnType::Int64),
    ("peak_pool_utilized_bytes", ColumnType::Int64),
    ("total_allocated_bytes", ColumnType::Int64),
    ("total_reserved_bytes", ColumnType::Int64),
    ("mean_bytes", ColumnType::Float64),
    ("mean_ns", ColumnType::Float64),
    ("median_ns", ColumnType::Float64),
    ("mean_gbps", ColumnType::Float64),
    ("max_gbps", ColumnType::Float64),
];

pub fn run(args: &MemArgs) -> anyhow::Result<()> {
    if !(1..=100_000).contains(&args.curve_buckets) {
        return Err(UsageError(format!(
            "--curve-buckets {}: must be from 1 to 100000",
            args.curve_buckets
        ))
        .into());
    }
    let format = if args.csv {
        OutFormat::Csv
    } else if args.json {
        OutFormat::Json
    } else {
        args.format
    };
    let file = crate::input::profile_arg(&args.file)?;
    if let Input::Records(_) = Input::detect(Some(&file))? {
        anyhow::bail!(
            "{}: a record file (rprof parse output or PyProf .dict) has no memory data: give rprof mem the profile itself",
            args.file.display()
        );
    }
    let on = crate::progress::enabled(args.quiet, false);
    let reading = crate::progress::Phase::spinner(on, &format!("reading {}", args.file.display()));
    let mut trace = read::read(
        &file,
        ReadOptions {
            compat: false,
            memops: true,
            memops_unlaunched: false,
            api_calls: true,
            all_ranges: true,
            mem_events: true,
            syncs: false,
            no_ranges: false,
            no_launches: false,
            // the view never looks at a kernel: counted, not kept
            no_kernels: true,
            range_heads: false,
            blocking_calls_only: false,
            enclosing_ranges_only: false,
        },
    )?;
    // a piped profile is named as given (`-`), not by its temporary copy
    crate::input::as_given(&mut trace);
    drop(reading);
    if !args.quiet {
        crate::diag::print(&crate::diag::trace_summary(&trace));
    }
    let computing = crate::progress::Phase::spinner(on, "computing the memory view");
    let (report, curve) = mem::compute(
        &trace,
        MemOptions {
            top: args.top,
            curve_buckets: args.curve_buckets,
        },
    );
    drop(computing);
    drop(trace);
    if let Some(p) = &args.curve {
        let f =
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?;
        let mut w = std::io::BufWriter::new(f);
        render::write_curve(&mut w, &curve)
            .and_then(|()| w.flush())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    let inputs = [args.file.as_path()];
    match format.data() {
        None => {
            args.style.apply();
            let mut w = out::create(args.output.as_deref(), &inputs)?;
            match args.style.width() {
                Some(width) => {
                    let mut wrap = Wrap::new(&mut w, width);
                    render::write_table(&mut wrap, &report, args.name_width)?;
                    wrap.flush()?;
                }
                None => render::write_table(&mut w, &report, args.name_width)?,
            }
            w.finish()?;
        }
        Some(DataFormat::Json) => {
            let mut w = out::create(args.output.as_deref(), &inputs)?;
            render::write_json(&mut w, &report)?;
            w.finish()?;
        }
        Some(data) => {
            let mut csv = Vec::new();
            let name = match args.section {
                MemTable::Section(s) => {
                    render::write_csv(&mut csv, &report, s)?;
                    s.name()
                }
                MemTable::Curve => {
                    render::write_curve(&mut csv, &curve)?;
                    "curve"
                }
            };
            let meta = super::report_metadata("mem", name, &inputs);
            super::write_csv_as(
                &csv,
                data,
                TYPES,
                &meta,
                args.output.as_deref(),
                &inputs,
                |_| false,
            )?;
        }
    }
    Ok(())
}
