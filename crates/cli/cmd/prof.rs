//! `rprof prof`: records → table.
//!
//! Reads the records of `rprof parse` (JSON Lines) or PyProf's `.dict`
//! lines, auto-detected per line, in chunks: each chunk is parsed and its
//! markers decoded in parallel, the backward lookup runs in order, the
//! models run in parallel again, and this thread prints the rows in input
//! order. The first chunk is small and flushed at once, so the first row
//! appears before the input is read to the end.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::Args;
use rayon::prelude::*;
use rprof_ops::{KernelEstimate, Mode, Resolved, Summary, estimate_kernel};
use rprof_report::model::Models;
use rprof_report::{ColumnList, DEFAULT_COLUMNS, Format, Printer, Row};
use rprof_trace::model::KernelRef;

use crate::input::{self, Input};
use crate::out::{self, UsageError};
use crate::style::OutFormat;

/// Print one row per GPU kernel: op, params, FLOPs, bytes, tensor cores.
///
/// Reads the records of `rprof parse` (JSON Lines) or PyProf's own `.dict`
/// files (Python-dict lines), detected line by line, from FILE or standard
/// input. Without --compat, PyProf's bugs that change numbers or crash are
/// fixed and unknown values print `na` (docs/compat.md).
#[derive(Args, Debug)]
#[command(after_help = after_help())]
pub struct ProfArgs {
    /// Columns to print, comma separated, in this order (`all`: every column).
    #[arg(short = 'c', long = "columns", value_name = "LIST", default_value = DEFAULT_COLUMNS)]
    pub columns: String,

    /// Columnated output, N characters wide (0: space separated; default:
    /// the terminal's width when standard output is a terminal, else 0).
    #[arg(short = 'w', long = "width", value_name = "N", conflicts_with = "csv")]
    pub width: Option<usize>,

    /// Output format: table (space separated, or columnated with -w), csv
    /// (every field quoted; unknown numbers empty, `na` with --compat), tsv,
    /// json (JSON Lines, one object per row, unknown numbers null). For
    /// Parquet, use `rprof parse --format parquet`, which has every field.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "csv")]
    pub format: Option<OutFormat>,

    /// Same as --format csv.
    #[arg(long)]
    pub csv: bool,

    /// Write to FILE instead of standard output (`-`: standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Reproduce apex.pyprof exactly, bugs included (see docs/compat.md).
    #[arg(long)]
    pub compat: bool,

    /// No summary or progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// Records to read (`-` or absent: standard input), or a profile (nsys
    /// or nvprof SQLite, Kineto trace), which is parsed first.
    pub file: Option<PathBuf>,
}

/// Widest table `-w` accepts: each row is padded to the width, so a huge
/// one would be allocated per row.
pub const MAX_WIDTH: usize = 100_000;

fn after_help() -> String {
    format!(
        "Columns (-c):\n{}\nExamples:\n  \
         rprof prof net.dict\n  \
         rprof prof -w 150 -c idx,dir,kernel,sil net.dict\n  \
         rprof prof --csv -c idx,dir,kernel,params,sil net.dict\n  \
         rprof prof --format json -c op,kernel,sil,flops net.dict | jq -s 'map(.flops) | add'\n  \
         rprof parse net.sqlite | rprof prof -c op,flops | awk 'NR > 1 {{f[$1] += $2}} END {{for (o in f) print o, f[o]}}'",
        rprof_report::column::help_table()
    )
}

pub fn run(args: &ProfArgs) -> anyhow::Result<()> {
    let columns: ColumnList = args
        .columns
        .parse()
        .map_err(|e| UsageError(format!("-c {}: {e}", args.columns)))?;
    let mode = if args.compat { Mode::Apex } else { Mode::Fixed };
    let format = match (args.format, args.csv, args.width) {
        (Some(OutFormat::Parquet), _, _) => {
            return Err(UsageError(
                "prof --format parquet: use `rprof parse --format parquet -o FILE`, which writes every field of every record".into(),
            )
            .into());
        }
        (Some(OutFormat::Csv), _, _) | (None, true, _) => Format::Csv,
        (Some(OutFormat::Tsv), _, _) => Format::Tsv,
        (Some(OutFormat::Json), _, _) => Format::Json,
        (_, _, Some(0)) => Format::Space,
        (_, _, Some(w)) => Format::Columns(w),
        // on a terminal, columns as wide as the terminal when they fit
        (_, _, None) => match crate::style::terminal_width().filter(|_| args.output.is_none()) {
            Some(w) if rprof_report::printer::widths(&columns.0, w, args.compat).is_ok() => {
                Format::Columns(w)
            }
            _ => Format::Space,
        },
    };
    // check the layout before reading anything
    if let Some(width) = args.width.filter(|w| *w > MAX_WIDTH) {
        return Err(UsageError(format!(
            "-w {width}: wider than rprof's limit of {MAX_WIDTH} characters"
        ))
        .into());
    }
    if let Format::Columns(w) = format {
        rprof_report::printer::widths(&columns.0, w, args.compat)
            .map_err(|e| UsageError(e.to_string()))?;
    }
    let source = Input::detect(args.file.as_deref())?;
    source.choose_allocator();
    let name = source.name();
    // rows are rendered in parallel by printers over byte buffers and
    // written here in order
    let printer =
        |cap: usize| Printer::new(Vec::with_capacity(cap), &columns.0, format, args.compat);
    let mut header = printer(256).map_err(|e| UsageError(e.to_string()))?;
    header.write_header()?;
    let inputs: Vec<&std::path::Path> = args.file.iter().map(|p| p.as_path()).collect();
    let mut out = out::create(args.output.as_deref(), &inputs)?;
    out.write_all(&header.into_inner()?)?;
    let mut models = Models::with_mode(mode);
    let mut summary = Summary::default();
    let mut idx = 0u64;
    let mut flushed = false;
    let opts = input::Options {
        compat: args.compat,
        memops: false,
        quiet: args.quiet,
        streams: args.output.is_none(),
    };
    // on a profile, a pipeline: records built, PyProf's backward lookup
    // run on them (in order), and the models and rows of the chunk before
    // made here
    let result = input::for_each_chunk_prepared(
        &source,
        opts,
        input::Ranges::Read,
        |recs| models.resolve(recs),
        |recs, resolved, _| {
            let items: Vec<(u64, KernelRef<'_, '_>, Resolved)> = recs
                .iter()
                .zip(resolved)
                .map(|(rec, res)| {
                    idx += 1;
                    (idx, rec, res)
                })
                .collect();
            // the models and the row text are independent per record: both run
            // in parallel, in parts that are written in order
            let parts: Vec<io::Result<(Vec<u8>, Vec<KernelEstimate<'_>>)>> = items
                .par_chunks(256)
                .map(|part| {
                    let mut p = printer(part.len() * 128).map_err(io::Error::other)?;
                    let mut estimates = Vec::with_capacity(part.len());
                    for (i, rec, res) in part {
                        let k = estimate_kernel(*rec, res, mode);
                        p.write_row(&Row::new(*i, *rec, &k, args.compat))?;
                        estimates.push(k);
                    }
                    Ok((p.into_inner()?, estimates))
                })
                .collect();
            for (part, (items, _)) in parts.into_iter().zip(items.chunks(256).map(|c| (c, ()))) {
                let (bytes, estimates) = part?;
                for ((i, _, _), k) in items.iter().zip(&estimates) {
                    summary.add(*i, &k.estimate.outcome, k.op);
                }
                out.write_all(&bytes)?;
            }
            if !flushed {
                out.flush()?;
                flushed = true;
            }
            Ok(())
        },
    );
    out.flush()?;
    result?;
    out.finish()?;
    // the backward-lookup indexes hold an entry per sequence id of the run;
    // freeing them one by one only delays the exit
    std::mem::forget(models);
    if !args.quiet {
        let mut err = io::stderr().lock();
        for m in summary.messages(mode) {
            let _ = writeln!(err, "rprof: {name}: {m}");
        }
    }
    Ok(())
}
