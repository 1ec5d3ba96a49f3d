//! What `rprof steps`, `rprof idle` and `rprof launch` share: output flags
//! and reading a profile with every table they need.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;
use rprof_report::ColumnType;
use rprof_report::DataFormat;
use rprof_report::HostFormat;
use rprof_trace::model::Trace;
use rprof_trace::read::{self, ReadOptions};

use crate::input::Input;
use crate::out;
use crate::style::{OutFormat, TableArgs, Wrap};

/// Output flags.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Output format: table, csv, tsv or parquet (one table: see --table
    /// where the command has several), or json (one document with every
    /// table). Unknown numbers are empty cells in CSV and TSV, null in JSON
    /// and Parquet.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = OutFormat::Table)]
    pub format: OutFormat,

    /// Same as --format csv.
    #[arg(long, conflicts_with_all = ["json", "format"])]
    pub csv: bool,

    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Write to FILE instead of standard output (`-`: standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Clip names in tables to N characters (0: never; CSV and JSON are
    /// never clipped).
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub name_width: usize,

    #[command(flatten)]
    pub style: TableArgs,

    /// No summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

impl OutputArgs {
    /// The chosen format.
    pub fn chosen(&self) -> OutFormat {
        if self.csv {
            OutFormat::Csv
        } else if self.json {
            OutFormat::Json
        } else {
            self.format
        }
    }

    /// The format the report writers know (TSV and Parquet are made from
    /// the CSV).
    pub fn format(&self) -> HostFormat {
        match self.chosen() {
            OutFormat::Table => HostFormat::Table,
            OutFormat::Json => HostFormat::Json,
            OutFormat::Csv | OutFormat::Tsv | OutFormat::Parquet => HostFormat::Csv,
        }
    }

    /// Write the report in the chosen format: `write` renders it as a
    /// table, CSV or JSON; TSV and Parquet are the CSV's table (rows for
    /// which `skip_row` holds left out), typed with `types`.
    pub fn emit(
        &self,
        input: &Path,
        report: &str,
        table: &str,
        types: &[(&str, ColumnType)],
        skip_row: impl Fn(&[String]) -> bool,
        write: impl FnOnce(&mut dyn Write, HostFormat) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        let format = self.chosen();
        match format.data() {
            None => {
                self.style.apply();
                let mut w = out::create(self.output.as_deref(), &[input])?;
                match self.style.width() {
                    Some(width) => {
                        let mut wrap = Wrap::new(&mut w, width);
                        write(&mut wrap, HostFormat::Table)?;
                        wrap.flush()?;
                    }
                    None => write(&mut w, HostFormat::Table)?,
                }
                w.finish()?;
            }
            Some(DataFormat::Csv) | Some(DataFormat::Json) => {
                let mut w = out::create(self.output.as_deref(), &[input])?;
                write(&mut w, self.format())?;
                w.finish()?;
            }
            Some(data) => {
                let mut csv = Vec::new();
                write(&mut csv, HostFormat::Csv)?;
                let meta = super::report_metadata(report, table, &[input]);
                super::write_csv_as(
                    &csv,
                    data,
                    types,
                    &meta,
                    self.output.as_deref(),
                    &[input],
                    skip_row,
                )?;
            }
        }
        Ok(())
    }
}

/// What a host view reads of a profile beside its kernels, launches,
/// copies and sets.
#[derive(Clone, Copy, Debug)]
pub struct Wants {
    /// Every API call and the ranges on every thread (else only the launch
    /// calls and the ranges on threads that launched work: a view of
    /// launches needs no more, and every call of a 3 M-kernel export was a
    /// quarter of a gigabyte).
    pub host: bool,
    /// Sync records.
    pub syncs: bool,
    /// The innermost range enclosing each launch call (else the list is
    /// empty and the ranges are only put in attribution order).
    pub innermost: bool,
    /// Only each range's operator name, never its whole text
    /// ([`ReadOptions::range_heads`]).
    pub range_names: bool,
    /// Of the API calls (with `host`), only those that block the host
    /// ([`ReadOptions::blocking_calls_only`]).
    pub blocking_calls: bool,
}

/// Read a profile with what `wants` says, then find the innermost range
/// enclosing each launch call when asked.
pub fn load(file: &Path, wants: Wants, quiet: bool) -> anyhow::Result<(Trace, Vec<Option<u32>>)> {
    let Wants {
        host,
        syncs,
        innermost,
        range_names,
        blocking_calls,
    } = wants;
    let file = &crate::input::profile_arg(file)?;
    let path = match Input::detect(Some(file))? {
        Input::Profile(p) => p,
        // not JSON either: let the reader say what the file is not
        Input::Records(_)
            if read::sniff(file)? != read::FileKind::Json && !crate::input::is_parquet(file) =>
        {
            file.to_owned()
        }
        Input::Records(_) | Input::Stream(..) => bail!(
            "{}: a record file; this command needs the profile itself (nsys or nvprof SQLite, or a PyTorch profiler trace), since records lack API calls, ranges and copies",
            file.display()
        ),
    };
    let on = crate::progress::enabled(quiet, false);
    let reading = crate::progress::Phase::spinner(
        on,
        &format!("reading {}", crate::input::spool::name(&path)),
    );
    let mut trace = read::read(
        &path,
        ReadOptions {
            compat: false,
            memops: true,
            memops_unlaunched: false,
            api_calls: host,
            all_ranges: host,
            mem_events: false,
            syncs,
            no_ranges: false,
            no_launches: false,
            no_kernels: false,
            range_heads: range_names,
            blocking_calls_only: blocking_calls,
            enclosing_ranges_only: false,
        },
    )?;
    drop(reading);
    crate::input::as_given(&mut trace);
    let innermost: Vec<Option<u32>> = if innermost {
        let attributing = crate::progress::Phase::spinner(on, "attributing launch calls to ranges");
        let innermost = rprof_trace::attribute::innermost(&trace.launches, &mut trace.ranges);
        drop(attributing);
        innermost
    } else {
        // the ranges are numbered as the attributing views number them
        rprof_trace::attribute::sort_ranges(&mut trace.ranges);
        Vec::new()
    };
    if !quiet {
        crate::diag::print(&crate::diag::trace_summary(&trace));
    }
    Ok((trace, innermost))
}
