//! `rprof summary`: kernel time grouped by a key.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use rprof_report::model::{self, Models};
use rprof_report::summary::{self, Key, Summarizer, SummaryReport};

use crate::input::{self, Input};
use crate::out::{self, UsageError};
use crate::style::{OutFormat, TableArgs, Wrap};
use rprof_report::ColumnType;
use rprof_report::{DataFormat, DataTable};

/// Kernel time grouped by kernel, op, op and input shapes, layer, NVTX range,
/// stream, device or direction.
///
/// Per group: count, total, mean, median, std dev, min, max, share, and FLOPs,
/// bytes, TFLOP/s and GB/s where the op models know them. Groups are sorted by total time (ties: more kernels first, then the key).
/// Share is the group's % of the SUM OF ALL KERNEL DURATIONS in the input
/// (overlapping kernels each count in full), not of wall-clock time and not
/// of the rows shown. Std dev is the sample standard deviation (n - 1).
/// FLOPs and bytes come from the op models (as in `rprof prof`) and are
/// summed over the kernels the models know; TFLOP/s and GB/s divide by
/// those kernels' time. Times are ns. Median: the middle duration (the mean
/// of the two middle ones for an even count).
///
/// `--by op` is PyProf's forward-op attribution: the op of the PyProf or
/// stock marker the models read, a backward kernel taking the op of its
/// forward call (`conv2d` for a cuDNN weight-gradient kernel), renamed by
/// the models. `--by nvtx` is the name of the innermost NVTX range or CPU
/// operator around the launch as the profiler recorded it
/// (`aten::cudnn_convolution_backward_weight`), one group per name: stock
/// PyTorch's per-call `seq`, `op_id` and `sizes` fields are not part of the
/// key. `--by op-shape` is that name with the operator's input shapes, as
/// the PyTorch TensorBoard plugin's "group by input shape".
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct SummaryArgs {
    /// What to group by.
    #[arg(long, value_name = "KEY", default_value = "kernel", value_parser = key_parser())]
    pub by: Key,

    /// Show the N groups with the most time (0: all).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub top: usize,

    /// Output format: table, csv (one row per group; share_pct is % of
    /// summed kernel time), tsv, json (one document with the rows and what
    /// the share is of), parquet (the CSV's columns, typed; what the share
    /// is of in the file's metadata).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with_all = ["csv", "json"])]
    pub format: Option<OutFormat>,

    /// Same as --format csv.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,

    /// Same as --format json.
    #[arg(long)]
    pub json: bool,

    /// With CSV output: a trailing `kind` column (kernel, memcpy, memset) and a
    /// row per copy direction and one for sets after the kernel groups, so
    /// that GPU time is complete (profiles only; share_pct stays a % of
    /// the summed kernel time). The table and JSON always show copies and
    /// sets of a profile.
    #[arg(long)]
    pub copies: bool,

    /// Write to FILE instead of standard output (`-`: standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub table: TableArgs,

    /// Clip names in the table to N characters (0: never; CSV and JSON are
    /// never clipped).
    #[arg(long, value_name = "N", default_value_t = 80)]
    pub name_width: usize,

    /// Do not run the op models: FLOPs, bytes, TFLOP/s and GB/s stay
    /// unknown (empty), and a profile's NVTX ranges (or profiler
    /// operators), which only the models and the op keys need, are not
    /// read, which is much faster on large profiles. Only with --by
    /// kernel, stream or device.
    #[arg(long)]
    pub no_models: bool,

    /// No parse summary or progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// A profile (nsys or nvprof SQLite, Kineto trace) or records of
    /// `rprof parse` (`-` or absent: standard input).
    pub file: Option<PathBuf>,
}

const AFTER_HELP: &str = "\
Examples:
  rprof summary net.sqlite                      # by kernel name
  rprof summary net.sqlite --by op --top 20
  rprof summary net.dict --by op --csv
  rprof summary net.sqlite --by nvtx --json | jq '.rows[0]'
  rprof summary net.sqlite --by op --format parquet -o ops.parquet
  rprof summary net.sqlite --timeunit ms --thousands -w 100
  rprof summary big.sqlite --no-models          # kernel sums only: NVTX not read
  rprof parse net.sqlite | rprof summary --by stream";

fn key_parser() -> impl TypedValueParser<Value = Key> {
    PossibleValuesParser::new(Key::ALL.map(|k| PossibleValue::new(k.name()).help(k.help())))
        .map(|s| Key::from_name(&s).unwrap_or(Key::Kernel))
}

pub fn run(args: &SummaryArgs) -> anyhow::Result<()> {
    // the other keys are the markers' or the models'
    if args.no_models && !matches!(args.by, Key::Kernel | Key::Stream | Key::Device) {
        return Err(UsageError(format!(
            "--no-models: --by {} needs the op models (only --by kernel, stream or device can do without)",
            args.by.name()
        ))
        .into());
    }
    let source = Input::detect(args.file.as_deref())?;
    source.choose_allocator();
    let report = match &source {
        // the question is about the kernels alone: no records
        Input::Profile(path) if args.no_models => kernel_sums(path, args)?,
        _ => summarize_records(&source, args)?,
    };
    let format = match (args.format, args.csv, args.json) {
        (Some(f), _, _) => f,
        (None, true, _) => OutFormat::Csv,
        (None, _, true) => OutFormat::Json,
        _ => OutFormat::Table,
    };
    let inputs: Vec<&std::path::Path> = args.file.iter().map(|p| p.as_path()).collect();
    match format {
        OutFormat::Table => {
            args.table.apply();
            let mut w = out::create(args.output.as_deref(), &inputs)?;
            match args.table.width() {
                Some(width) => {
                    let mut wrap = Wrap::new(&mut w, width);
                    summary::write_table(&mut wrap, &report, args.by, args.name_width)?;
                    wrap.flush()?;
                }
                None => summary::write_table(&mut w, &report, args.by, args.name_width)?,
            }
            w.finish()?;
        }
        OutFormat::Csv => {
            let mut w = out::create(args.output.as_deref(), &inputs)?;
            if args.copies {
                summary::write_csv_with_copies(&mut w, &report)?;
            } else {
                summary::write_csv(&mut w, &report)?;
            }
            w.finish()?;
        }
        OutFormat::Json => {
            let mut w = out::create(args.output.as_deref(), &inputs)?;
            summary::write_json(&mut w, &report)?;
            w.finish()?;
        }
        OutFormat::Tsv | OutFormat::Parquet => {
            // both from the CSV, so that every column of it is in them
            let mut csv = Vec::new();
            summary::write_csv(&mut csv, &report)?;
            let table = DataTable::from_csv("summary", &csv)?;
            let meta = [
                ("rprof.report", "summary".to_owned()),
                ("rprof.by", report.by.to_owned()),
                ("rprof.share_of", report.share_of.to_owned()),
                ("rprof.kernels", report.kernels.to_string()),
                ("rprof.total_ns", report.total_ns.to_string()),
            ];
            let data = format.data().unwrap_or(DataFormat::Tsv);
            crate::cmd::write_data(&table, data, TYPES, &meta, args.output.as_deref(), &inputs)?;
        }
    }
    Ok(())
}

/// The summary of every record of `source` (a record file, or a profile
/// read, attributed and turned into records), with the op models unless
/// `--no-models`.
fn summarize_records(source: &Input, args: &SummaryArgs) -> anyhow::Result<SummaryReport> {
    let mut models = Models::new();
    let mut sum = Summarizer::new(args.by);
    let opts = input::Options {
        compat: false,
        // copies and sets complete the GPU time (profiles only)
        memops: true,
        quiet: args.quiet,
        streams: false,
    };
    // without the models no question here depends on the ranges: they are
    // not read, and the records carry no markers, so the models would find
    // nothing (FLOPs and bytes unknown, as for any kernel without a marker)
    let ranges = if args.no_models {
        input::Ranges::Skip
    } else {
        input::Ranges::Read
    };
    // on a profile, a pipeline: records built, the backward lookup run on
    // them (in order), and the models and sums of the chunk before made here
    let no_models = args.no_models;
    let info = input::for_each_chunk_prepared(
        source,
        opts,
        ranges,
        |recs| models.resolve_if(!no_models, recs),
        |recs, resolved, _| {
            if no_models {
                for r in recs {
                    sum.add(r, &model::unmodelled(r));
                }
                return Ok(());
            }
            let est = model::estimate(recs, &resolved);
            for (r, e) in recs.iter().zip(&est) {
                sum.add(r, e);
            }
            Ok(())
        },
    )?;
    let mut report = sum.finish(args.top);
    if let Some(m) = &info.memops {
        report.gpu_time = Some(summary::gpu_time(report.total_ns, m));
    }
    Ok(report)
}

/// `--no-models` on a profile (`--by kernel`, `stream` or `device`): the
/// same report as [`summarize_records`] gives, straight from the kernel
/// table. No NVTX ranges, no records; each distinct kernel name is
/// demangled and shortened once and looked up once, and its kernels are
/// counted by the name's id; the launch calls are read only for the
/// stderr summary's count of kernels without one (not with `--quiet`).
fn kernel_sums(path: &std::path::Path, args: &SummaryArgs) -> anyhow::Result<SummaryReport> {
    use rprof_trace::build;
    let reading = crate::progress::Phase::spinner(
        crate::progress::enabled(args.quiet, false),
        &format!("reading {}", path.display()),
    );
    let mut trace = rprof_trace::read::read(
        path,
        rprof_trace::read::ReadOptions {
            memops: true,
            no_ranges: true,
            no_launches: args.quiet,
            ..rprof_trace::read::ReadOptions::default()
        },
    )?;
    drop(reading);
    input::as_given(&mut trace);
    let mut sum = Summarizer::new(args.by);
    let undemangled = match args.by {
        Key::Stream | Key::Device => {
            for k in &trace.kernels {
                let g = sum.num_group(k.device, k.stream);
                sum.add_unmodelled(g, k.duration_ns());
            }
            // the records' names are worked out all the same, and the
            // stderr summary counts those that do not demangle
            if args.quiet {
                0
            } else {
                build::short_names(&trace, false).1
            }
        }
        _ => {
            let (short, undemangled) = build::short_names(&trace, false);
            // name → group, looked up by the name's id
            let group: rprof_trace::model::FastMap<_, usize> = short
                .iter()
                .map(|(&key, name)| (key, sum.text_group(name)))
                .collect();
            for k in &trace.kernels {
                let g = group.get(&build::name_key(k, false)).copied();
                let g = match g {
                    Some(g) => g,
                    // every kernel's name is in the map; as the records
                    // would have it otherwise: an empty name
                    None => sum.text_group(""),
                };
                sum.add_unmodelled(g, k.duration_ns());
            }
            undemangled
        }
    };
    let mut report = sum.finish(args.top);
    let memops = summary::MemopSums::of(&trace.memops);
    report.gpu_time = Some(summary::gpu_time(report.total_ns, &memops));
    if !args.quiet {
        let stats = build::BuildStats {
            records: trace.kernels.len() as u64,
            undemangled_names: undemangled,
            ..build::BuildStats::default()
        };
        input::parse_summary_reading(&trace, &stats, input::Ranges::Skip);
    }
    Ok(report)
}

/// Column types that must not depend on the values.
const TYPES: &[(&str, ColumnType)] = &[
    ("key", ColumnType::Utf8),
    ("mean_ns", ColumnType::Float64),
    ("std_ns", ColumnType::Float64),
    ("median_ns", ColumnType::Float64),
    ("share_pct", ColumnType::Float64),
    ("flops", ColumnType::Int64),
    ("bytes", ColumnType::Int64),
    ("tflops", ColumnType::Float64),
    ("gbs", ColumnType::Float64),
];
