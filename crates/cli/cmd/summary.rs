//! `rprof summary`: kernel time grouped by a key.

use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use rprof_report::model::{self, Models};
use rprof_report::summary::{self, Key, Summarizer};

use crate::input::{self, Input};
use crate::out;

/// Kernel time grouped by kernel, op, layer, NVTX range, stream, device or direction.
///
/// Per group: count, total, mean, std dev, min, max, share, and FLOPs,
/// bytes, TFLOP/s and GB/s where the op models know them. Groups are sorted by total time (ties: more kernels first, then the key).
/// Share is the group's % of the SUM OF ALL KERNEL DURATIONS in the input
/// (overlapping kernels each count in full), not of wall-clock time and not
/// of the rows shown. Std dev is the sample standard deviation (n - 1).
/// FLOPs and bytes come from the op models (as in `rprof prof`) and are
/// summed over the kernels the models know; TFLOP/s and GB/s divide by
/// those kernels' time. Times are ns.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct SummaryArgs {
    /// What to group by.
    #[arg(long, value_name = "KEY", default_value = "kernel", value_parser = key_parser())]
    pub by: Key,

    /// Show the N groups with the most time (0: all).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub top: usize,

    /// CSV output (one row per group; share_pct is % of summed kernel time).
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,

    /// JSON output (one document with the rows and what the share is of).
    #[arg(long)]
    pub json: bool,

    /// Clip names in the table to N characters (0: never; CSV and JSON are
    /// never clipped).
    #[arg(long, value_name = "N", default_value_t = 80)]
    pub name_width: usize,

    /// No parse summary on stderr.
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
  rprof parse net.sqlite | rprof summary --by stream";

fn key_parser() -> impl TypedValueParser<Value = Key> {
    PossibleValuesParser::new(Key::ALL.map(|k| PossibleValue::new(k.name()).help(k.help())))
        .map(|s| Key::from_name(&s).unwrap_or(Key::Kernel))
}

pub fn run(args: &SummaryArgs) -> anyhow::Result<()> {
    let source = Input::detect(args.file.as_deref())?;
    let mut models = Models::new();
    let mut sum = Summarizer::new(args.by);
    let opts = input::Options {
        compat: false,
        memops: false,
        quiet: args.quiet,
    };
    input::for_each_chunk(&source, opts, |recs, _| {
        let resolved = models.resolve(recs);
        let est = model::estimate(recs, &resolved);
        for (r, e) in recs.iter().zip(&est) {
            sum.add(r, e);
        }
        Ok(())
    })?;
    let report = sum.finish(args.top);
    let mut w = out::create(None, &[])?;
    if args.csv {
        summary::write_csv(&mut w, &report)?;
    } else if args.json {
        summary::write_json(&mut w, &report)?;
    } else {
        summary::write_table(&mut w, &report, args.by, args.name_width)?;
    }
    w.finish()?;
    Ok(())
}
