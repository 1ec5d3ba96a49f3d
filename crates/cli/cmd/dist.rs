//! `rprof dist`: the distributed view over a whole training job.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use rprof_report::dist::{self, CsvTable};
use rprof_trace::read::{self, ReadOptions};

use crate::out::{self, UsageError};
use crate::style::{OutFormat, TableArgs, Wrap};
use rprof_report::ColumnType;
use rprof_report::DataFormat;

/// Column types that must not depend on the values.
const TYPES: &[(&str, ColumnType)] = &[
    ("rank_from", ColumnType::Utf8),
    ("file", ColumnType::Utf8),
    ("source", ColumnType::Utf8),
    ("note", ColumnType::Utf8),
    ("op", ColumnType::Utf8),
    ("step", ColumnType::Utf8),
    ("bw_time", ColumnType::Utf8),
    ("busy_pct", ColumnType::Float64),
    ("compute_pct", ColumnType::Float64),
    ("comm_pct", ColumnType::Float64),
    ("overlap_pct", ColumnType::Float64),
    ("idle_pct", ColumnType::Float64),
    ("hta_idle_pct", ColumnType::Float64),
    ("hta_compute_pct", ColumnType::Float64),
    ("hta_non_compute_pct", ColumnType::Float64),
    ("hta_comm_comp_overlap_pct", ColumnType::Float64),
    ("mean_ns", ColumnType::Float64),
    ("transfer_mean_ns", ColumnType::Float64),
    ("algbw_gbps", ColumnType::Float64),
    ("busbw_gbps", ColumnType::Float64),
    ("comm_transfer_ns", ColumnType::Int64),
    ("comm_wait_ns", ColumnType::Int64),
    ("times_last", ColumnType::Int64),
    ("lateness_ns", ColumnType::Int64),
    ("clock_skew_ns", ColumnType::Int64),
];

/// Most files a job may have (directory listings included).
const MAX_FILES: usize = 65_536;
/// Longest step pattern.
const MAX_PATTERN: usize = 1_000;

/// The distributed view of a training job: per rank compute, communication,
/// overlap, idle, wait vs transfer, collectives, stragglers, steps.
///
/// One row per GPU of each process (rank from the PyTorch profiler's
/// `distributedInfo`, else the process order in one file, else the file
/// order). Per rank, of its span (first kernel start to last kernel end on
/// its GPU): busy (union of all kernels), compute (union of the
/// non-communication kernels), communication (union of the NCCL/RCCL
/// kernels), overlap (compute ∩ communication), idle (span − busy); the
/// TensorBoard plugin's and HTA's figures; wait vs transfer of the
/// collectives matched across ranks (the i-th of each communicator on each
/// rank; transfer = the shortest matched duration, wait = own − shortest;
/// null when they cannot be matched). Then the collective table with
/// nccl-tests' algorithm and bus bandwidths, who arrives last at the
/// collectives (only when the files' clocks can be aligned), and the same
/// breakdown per step. Files are read in parallel and each is reduced to
/// its ranks' figures before the next is read. See docs/reports.md, `dist`.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct DistArgs {
    /// Profiles of one job: nsys exports (one per rank, or one with several
    /// processes or GPUs), PyTorch-profiler traces, or directories of them
    /// (`*.json`, `*.json.gz`, `*.sqlite`, in name order).
    #[arg(required = true, value_name = "FILE|DIR")]
    pub inputs: Vec<PathBuf>,

    /// Output format: table, csv, tsv or parquet (one table: --table),
    /// or json (one document with every table).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = OutFormat::Table)]
    pub format: OutFormat,

    /// Shorthand for `--format csv`.
    #[arg(long, conflicts_with_all = ["json", "format"])]
    pub csv: bool,

    /// Shorthand for `--format json`: one document `{"ranks", "collectives",
    /// "steps", …}`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Which table CSV, TSV and Parquet output hold.
    #[arg(long, value_enum, value_name = "TABLE", default_value_t = TableArg::Ranks)]
    pub table: TableArg,

    /// Steps: ranges (NVTX or PyTorch-profiler annotations) whose name
    /// matches this regular expression; the matched text names the step
    /// across ranks.
    #[arg(long, value_name = "REGEX", default_value = r"ProfilerStep#\d+")]
    pub step: String,

    /// Write to FILE instead of standard output (`-`: standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub style: TableArgs,

    /// Nothing on stderr but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// The table CSV, TSV and Parquet output hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableArg {
    /// One row per rank.
    Ranks,
    /// One row per collective kind and size.
    Collectives,
    /// One row per step and rank.
    Steps,
}

const AFTER_HELP: &str = "\
Examples:
  rprof dist rank0.sqlite rank1.sqlite rank2.sqlite rank3.sqlite
  rprof dist traces/                       # PyTorch-profiler rank traces
  rprof dist job.sqlite                    # one export, several processes or GPUs
  rprof dist traces/ --json | jq '.ranks[] | {rank, comm_wait_ns}'
  rprof dist traces/ --csv --table collectives
  rprof dist traces/ --format parquet --table steps -o steps.parquet
  rprof dist traces/ --step 'ProfilerStep#\\d+'";

/// Profiles in a directory: `*.json`, `*.json.gz`, `*.sqlite`, by name.
pub(crate) fn expand(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if p == Path::new("-") {
            out.push(crate::input::profile_arg(p)?);
            continue;
        }
        if p.is_dir() {
            let rd = std::fs::read_dir(p)
                .with_context(|| format!("{}: cannot list the directory", p.display()))?;
            let mut found = Vec::new();
            for e in rd {
                let e = e.with_context(|| format!("{}: cannot list the directory", p.display()))?;
                let name = e.file_name().to_string_lossy().to_ascii_lowercase();
                let wanted = [".json", ".json.gz", ".sqlite"]
                    .iter()
                    .any(|s| name.ends_with(s));
                if wanted && !e.path().is_dir() {
                    found.push(e.path());
                }
                if found.len() > MAX_FILES {
                    break;
                }
            }
            if found.is_empty() {
                anyhow::bail!(
                    "{}: no profiles in this directory (*.json, *.json.gz, *.sqlite)",
                    p.display()
                );
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
        if out.len() > MAX_FILES {
            anyhow::bail!("more than {MAX_FILES} profiles: not one job rprof can read");
        }
    }
    Ok(out)
}

/// Read one file of a job and reduce it to its ranks' figures, with the
/// lines of what reading found
/// ([`crate::diag::trace_summary`]), printed in file order by the caller.
pub(crate) fn read_one(
    path: &Path,
    index: usize,
    step: &regex::Regex,
) -> anyhow::Result<(dist::FileSummary, Vec<String>)> {
    let mut trace = read::read(path, ReadOptions::default())?;
    crate::input::as_given(&mut trace);
    let said = crate::diag::trace_summary(&trace);
    Ok((dist::summarize(&trace, index, step), said))
}

pub fn run(args: &DistArgs) -> anyhow::Result<()> {
    if args.step.len() > MAX_PATTERN {
        return Err(UsageError(format!("--step: longer than {MAX_PATTERN} characters")).into());
    }
    let step = regex::RegexBuilder::new(&args.step)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| UsageError(format!("--step: not a regular expression: {e}")))?;
    let format = if args.csv {
        OutFormat::Csv
    } else if args.json {
        OutFormat::Json
    } else {
        args.format
    };
    let files = expand(&args.inputs)?;
    // read in parallel; each worker reduces its file to the ranks' figures
    // and drops the trace before taking the next file
    let bar = crate::progress::Phase::bar(
        crate::progress::enabled(args.quiet, false),
        files.len() as u64,
        "reading profiles",
        false,
    );
    let results: Vec<anyhow::Result<(dist::FileSummary, Vec<String>)>> = files
        .par_iter()
        .enumerate()
        .map(|(i, f)| {
            let r = read_one(f, i, &step);
            bar.inc(1);
            r
        })
        .collect();
    drop(bar);
    let mut summaries = Vec::with_capacity(results.len());
    let mut said = Vec::new();
    for r in results {
        let (summary, lines) = r?;
        said.extend(lines);
        summaries.push(summary);
    }
    let kernels: u64 = summaries
        .iter()
        .flat_map(|f| &f.units)
        .map(|u| u.all.kernels)
        .sum();
    // files of different jobs are one error line, with nothing before it
    let report = dist::build(summaries)?;
    if !args.quiet {
        crate::diag::print(&said);
        eprintln!(
            "rprof: the job: {} file{}, {} rank{}, {} kernels",
            report.files.len(),
            if report.files.len() == 1 { "" } else { "s" },
            report.ranks.len(),
            if report.ranks.len() == 1 { "" } else { "s" },
            kernels
        );
    }
    if !matches!(format, OutFormat::Table | OutFormat::Json) && !args.quiet {
        // the table and JSON carry the notes; CSV, TSV and Parquet have no
        // place for them
        for n in &report.notes {
            eprintln!("rprof: the job: note: {}", dist::render::esc(n));
        }
    }
    let inputs: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
    let (t, name) = match args.table {
        TableArg::Ranks => (CsvTable::Ranks, "ranks"),
        TableArg::Collectives => (CsvTable::Collectives, "collectives"),
        TableArg::Steps => (CsvTable::Steps, "steps"),
    };
    match format.data() {
        None => {
            args.style.apply();
            let mut w = out::create(args.output.as_deref(), &inputs)?;
            match args.style.width() {
                Some(width) => {
                    let mut wrap = Wrap::new(&mut w, width);
                    dist::write_table(&mut wrap, &report)?;
                    wrap.flush()?;
                }
                None => dist::write_table(&mut w, &report)?,
            }
            w.finish()?;
        }
        Some(DataFormat::Json) => {
            let mut w = out::create(args.output.as_deref(), &inputs)?;
            dist::write_json(&mut w, &report)?;
            w.finish()?;
        }
        Some(data) => {
            let mut csv = Vec::new();
            dist::write_csv(&mut csv, &report, t)?;
            let meta = super::report_metadata("dist", name, &inputs);
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
