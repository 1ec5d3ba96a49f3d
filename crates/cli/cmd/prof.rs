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
use rprof_trace::record::Record;

use crate::input::{self, Input};
use crate::out::{self, UsageError};

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

    /// Columnated output, N characters wide (0: space separated).
    #[arg(
        short = 'w',
        long = "width",
        value_name = "N",
        default_value_t = 0,
        conflicts_with = "csv"
    )]
    pub width: usize,

    /// CSV output (every field quoted).
    #[arg(long)]
    pub csv: bool,

    /// Reproduce apex.pyprof exactly, bugs included (see docs/compat.md).
    #[arg(long)]
    pub compat: bool,

    /// No summary on stderr.
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
    let format = match (args.csv, args.width) {
        (true, _) => Format::Csv,
        (false, 0) => Format::Space,
        (false, w) => Format::Columns(w),
    };
    // check the layout before reading anything
    if args.width > MAX_WIDTH {
        return Err(UsageError(format!(
            "-w {}: wider than rprof's limit of {MAX_WIDTH} characters",
            args.width
        ))
        .into());
    }
    if let Format::Columns(w) = format {
        rprof_report::printer::widths(&columns.0, w, args.compat)
            .map_err(|e| UsageError(e.to_string()))?;
    }
    let source = Input::detect(args.file.as_deref())?;
    let name = source.name();
    // rows are rendered in parallel by printers over byte buffers and
    // written here in order
    let printer =
        |cap: usize| Printer::new(Vec::with_capacity(cap), &columns.0, format, args.compat);
    let mut header = printer(256).map_err(|e| UsageError(e.to_string()))?;
    header.write_header()?;
    let mut out = out::create(None, &[])?;
    out.write_all(&header.into_inner()?)?;
    let mut models = Models::with_mode(mode);
    let mut summary = Summary::default();
    let mut idx = 0u64;
    let mut flushed = false;
    let opts = input::Options {
        compat: args.compat,
        memops: false,
        quiet: args.quiet,
    };
    let result = input::for_each_chunk(&source, opts, |recs, _| {
        let items: Vec<(u64, &Record<'_>, Resolved)> = recs
            .iter()
            .zip(models.resolve(recs))
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
                    let k = estimate_kernel(rec, res, mode);
                    p.write_row(&Row::new(*i, rec, &k, args.compat))?;
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
    });
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
