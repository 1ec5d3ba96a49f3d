//! `rprof stats`: nsys stats' reports, from the same export, without nsys.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::LazyLock;

use clap::{Args, ValueEnum};
use rprof_report::stats::render::{self, Format, MemUnit, Options, TimeUnit};
use rprof_report::stats::{self, REPORTS, Request, View, Window};

use crate::out::{self, UsageError};
use rprof_report::ColumnType;
use rprof_report::DataFormat;

/// nsys stats' reports (cuda_gpu_kern_sum, nvtx_sum, ...), without nsys.
///
/// Same report names, columns, headings, row order and arithmetic as `nsys
/// stats` (2023.4 and later): counts, totals, min and max to the ns; avg,
/// median (middle value, or mean of the middle two) and std dev (sample,
/// divisor n-1; 0 for one instance) rounded to one decimal as nsys does;
/// Time (%) is the row's share of the report's total. Two nsys results are
/// corrected: nvtx_kern_sum counts each kernel once per group (nsys once
/// per enclosing range of the same name), and CUDA backtrace duplicate API
/// rows count once (nsys twice). Reads nsys SQLite exports; nvprof
/// databases and PyTorch-profiler traces give the reports their data
/// supports (see docs/stats.md).
#[derive(Args, Debug)]
#[command(after_help = REPORT_HELP.as_str())]
pub struct StatsArgs {
    /// Reports to run, as NAME[:ARG...], comma-separated or repeated
    /// (default: nvtx_sum, osrt_sum, cuda_api_sum, cuda_gpu_kern_sum,
    /// cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, um_sum).
    #[arg(short, long, value_name = "NAME[:ARG]", value_delimiter = ',')]
    pub report: Vec<String>,

    /// Output format.
    #[arg(short, long, value_enum, value_name = "FMT", default_value_t = FormatArg::Column)]
    pub format: FormatArg,

    /// Shorthand for --format csv.
    #[arg(long, conflicts_with_all = ["json", "format"])]
    pub csv: bool,

    /// Shorthand for --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Write to FILE (`-`: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Unit of time columns: ns, us, ms or s (nsys's nsec, usec, msec, sec
    /// also work).
    #[arg(long, value_name = "UNIT", default_value = "ns", value_parser = parse_timeunit)]
    pub timeunit: TimeUnit,

    /// Unit of byte columns: B, KB, MB (nsys's default) or GB (powers of 10).
    #[arg(long, value_name = "UNIT", default_value = "MB", value_parser = parse_memunit)]
    pub memunit: MemUnit,

    /// Only rows that overlap the N-th (0-based, by start; default 0)
    /// instance of this NVTX range, on its thread (push/pop) or process
    /// (start/end; GPU rows by process). The domain is required for ranges
    /// in a named domain.
    #[arg(
        long,
        value_name = "RANGE[@DOMAIN][/N]",
        conflicts_with = "filter_time"
    )]
    pub filter_nvtx: Option<String>,

    /// Only rows that overlap [START, END): times in ns, or with units
    /// (1s2ms, 1.5e3us); either side may be empty.
    #[arg(long, value_name = "START/END")]
    pub filter_time: Option<String>,

    /// No notes on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// An nsys SQLite export, an nvprof database or a PyTorch-profiler trace.
    pub file: PathBuf,
}

/// `--format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// nsys's console columns.
    Column,
    /// A boxed table.
    Table,
    /// Comma-separated values (reports separated by a blank line).
    Csv,
    /// Tab-separated values (reports separated by a blank line).
    Tsv,
    /// JSON: one report, an array of row objects; several, an object of
    /// such arrays keyed by report.
    Json,
    /// Apache Parquet: one report (--report NAME), the CSV's columns
    /// typed (integers Int64, averages and percentages Float64, text
    /// UTF-8; empty cells null).
    Parquet,
}

fn parse_timeunit(s: &str) -> Result<TimeUnit, String> {
    TimeUnit::parse(s).ok_or_else(|| format!("'{s}': expected ns, us, ms or s"))
}

fn parse_memunit(s: &str) -> Result<MemUnit, String> {
    MemUnit::parse(s).ok_or_else(|| format!("'{s}': expected B, KB, MB or GB"))
}

static REPORT_HELP: LazyLock<String> = LazyLock::new(|| {
    let mut s = String::from("Reports (nsys's names; see docs/stats.md):\n");
    for r in REPORTS {
        s.push_str(&format!("  {}{} -- {}\n", r.name, r.args, r.title));
        let mut line = String::from("     ");
        for word in r.help.split_whitespace() {
            if line.len() + word.len() + 1 > 78 {
                s.push_str(line.trim_end());
                s.push('\n');
                line = String::from("     ");
            }
            line.push(' ');
            line.push_str(word);
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s.push_str(
        "\nExamples:\n  rprof stats net.sqlite\n  rprof stats net.sqlite --report nvtx_sum,cuda_api_sum\n  \
         rprof stats net.sqlite -r cuda_gpu_kern_sum:base --format csv -o kern.csv\n  \
         rprof stats net.sqlite -r cuda_gpu_kern_sum --format parquet -o kern.parquet\n  \
         rprof stats net.sqlite -r nvtx_kern_sum --filter-nvtx 'step@train/3' --timeunit us\n",
    );
    s
});

pub fn run(args: &StatsArgs) -> anyhow::Result<()> {
    let format = if args.csv {
        Format::Csv
    } else if args.json {
        Format::Json
    } else {
        match args.format {
            FormatArg::Column => Format::Column,
            FormatArg::Table => Format::Table,
            FormatArg::Csv => Format::Csv,
            FormatArg::Tsv => Format::Tsv,
            FormatArg::Json => Format::Json,
            // made from the CSV
            FormatArg::Parquet => Format::Csv,
        }
    };
    let parquet = args.format == FormatArg::Parquet && !args.csv && !args.json;
    let specs: Vec<String> = if args.report.is_empty() {
        stats::DEFAULT_REPORTS
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    } else {
        args.report
            .iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let requests = specs
        .iter()
        .map(|s| Request::parse(s).map_err(|e| UsageError(format!("--report: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    if parquet && requests.len() != 1 {
        return Err(UsageError(format!(
            "--format parquet writes one report per file: choose it with --report NAME ({} asked for)",
            requests.len()
        ))
        .into());
    }
    if parquet
        && args
            .output
            .as_deref()
            .is_none_or(|p| p == std::path::Path::new("-"))
        && std::io::IsTerminal::is_terminal(&std::io::stdout())
    {
        return Err(UsageError(
            "--format parquet writes binary data: give -o FILE or redirect standard output".into(),
        )
        .into());
    }
    let time_window = match args.filter_time.as_deref() {
        Some(s) => {
            let (a, b) = stats::parse_filter_time(s).map_err(UsageError)?;
            Some(Window {
                start_ns: a.unwrap_or(i64::MIN),
                end_ns: b.unwrap_or(i64::MAX),
                thread: None,
            })
        }
        None => None,
    };

    let path = crate::input::profile_arg(&args.file)?;
    // the file is looked at only when the requests could be read apart
    let mut runs = stages(&requests, true);
    if runs.len() > 1
        && (args.filter_nvtx.is_some()
            || parquet
            || !rprof_trace::read::stats_sql::reads_tables_apart(&path)?)
    {
        runs = stages(&requests, false);
    }
    let on = crate::progress::enabled(args.quiet, false);
    // not `stderr().lock()`: the lock would be held while a spinner below
    // runs, whose ticker thread writes to stderr while holding the bar's
    // state, and dropping the spinner waits for that state: a deadlock
    // (seen under load in the pseudo-terminal test)
    let mut err = std::io::stderr();
    // every line names the file, as every command's do (crate::diag)
    let file = render::escape_controls(&crate::input::spool::name(&args.file)).into_owned();
    let opts = Options {
        format,
        time: args.timeunit,
        mem: args.memunit,
    };
    let mut w = None;
    let mut json = serde_json::Map::new();
    let many = requests.len() > 1;
    // a spinner while each report is computed, unless its rows stream to
    // the same terminal
    let to_file = args
        .output
        .as_deref()
        .is_some_and(|p| p != std::path::Path::new("-"));
    let last_stage = runs.len() - 1;
    for (stage, run) in runs.into_iter().enumerate() {
        let mut want = requests[run.clone()]
            .iter()
            .fold(Default::default(), |t: stats::Tables, r| {
                t.or(stats::tables_for(r.name))
            });
        if args.filter_nvtx.is_some() {
            // (the window is found among every range)
            want.nvtx = true;
            want.launching_only = false;
        }
        let reading =
            crate::progress::Phase::spinner(on, &format!("reading {}", args.file.display()));
        let data = rprof_trace::read::stats_sql::load(&path, want)?;
        drop(reading);
        let window = match args.filter_nvtx.as_deref() {
            Some(spec) => Some(
                stats::find_nvtx_window(&data, spec)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))?,
            ),
            None => time_window,
        };
        if !args.quiet {
            write_read(&mut err, &file, &data)?;
        }
        let view = View::new(&data, window.as_ref());
        if parquet {
            let req = &requests[0];
            let mut table = stats::run(&view, req);
            if !args.quiet {
                if let Some(why) = &table.skipped {
                    writeln!(err, "rprof: {file}: {}: skipped: {why}", req.spec)?;
                }
                if table.skipped.is_none()
                    && let Some(why) = stats::applies(&data, req.name)
                {
                    table.notes.push(why);
                }
                write_notes(&mut err, &file, &req.spec, &table.notes)?;
            }
            let mut csv = Vec::new();
            render::write(&mut csv, &table, &data.names, &opts)?;
            let types = parquet_types(&table, &data.names, &opts);
            let types: Vec<(&str, ColumnType)> =
                types.iter().map(|(n, t)| (n.as_str(), *t)).collect();
            let mut meta = super::report_metadata("stats", &req.spec, &[&args.file]);
            meta.push(("rprof.title", table.title.to_owned()));
            return super::write_csv_as(
                &csv,
                DataFormat::Parquet,
                &types,
                &meta,
                args.output.as_deref(),
                &[&args.file],
                |_| false,
            );
        }
        // made once the first tables are read, as before stages
        let w = match &mut w {
            Some(w) => w,
            None => w.insert(out::create(args.output.as_deref(), &[&args.file])?),
        };
        for i in run {
            let req = &requests[i];
            let computing = crate::progress::Phase::spinner(
                on && (to_file || !std::io::stdout().is_terminal()),
                &format!("computing {}", req.spec),
            );
            let mut table = stats::run(&view, req);
            drop(computing);
            if table.skipped.is_none()
                && let Some(why) = stats::applies(&data, req.name)
            {
                table.notes.push(why);
            }
            if !args.quiet {
                if let Some(why) = &table.skipped
                    && !matches!(format, Format::Column | Format::Table)
                {
                    writeln!(err, "rprof: {file}: {}: skipped: {why}", req.spec)?;
                }
                write_notes(&mut err, &file, &req.spec, &table.notes)?;
            }
            match format {
                Format::Json if many => {
                    json.insert(
                        req.spec.clone(),
                        render::json_rows(&table, &data.names, &opts),
                    );
                }
                Format::Csv | Format::Tsv => {
                    if table.skipped.is_some() {
                        continue;
                    }
                    if i > 0 {
                        writeln!(w)?;
                    }
                    render::write(w, &table, &data.names, &opts)?;
                }
                _ => render::write(w, &table, &data.names, &opts)?,
            }
            // millions of rows on a large export: the OS frees them at exit
            // faster than dropping them one by one (as `rprof prof` does)
            std::mem::forget(table);
        }
        if stage == last_stage {
            // as the tables above: freed by the OS at exit
            std::mem::forget(view);
            std::mem::forget(data);
        }
        // an earlier stage's tables are let go here, before the next
        // stage reads its own: that is what stages are for
    }
    let Some(mut w) = w else {
        return Ok(());
    };
    if format == Format::Json && many {
        serde_json::to_writer_pretty(&mut w, &serde_json::Value::Object(json))?;
        writeln!(w)?;
    }
    w.finish()?;
    Ok(())
}

/// What a read holds, on stderr: the tables and their rows (as in
/// crate::diag), rows skipped and the reader's notes.
fn write_read(
    err: &mut impl Write,
    file: &str,
    data: &rprof_trace::model::StatsData,
) -> std::io::Result<()> {
    let mut parts = Vec::new();
    for (n, what) in [
        (data.kernels.as_ref().map(Vec::len), "kernels"),
        (data.memops.as_ref().map(Vec::len), "copies and sets"),
        (data.api.as_ref().map(Vec::len), "API calls"),
        (data.nvtx.as_ref().map(Vec::len), "NVTX ranges"),
        (data.osrt.as_ref().map(Vec::len), "OS runtime calls"),
        (
            data.um_faults.as_ref().map(Vec::len),
            "unified-memory faults",
        ),
    ] {
        if let Some(n) = n {
            parts.push(format!("{n} {what}"));
        }
    }
    if !parts.is_empty() {
        writeln!(err, "rprof: {file}: {}", parts.join(", "))?;
    }
    for (why, n) in &data.dropped {
        writeln!(err, "rprof: {file}: skipped {n} {why}")?;
    }
    for n in &data.notes {
        writeln!(err, "rprof: {file}: note: {}", render::escape_controls(n))?;
    }
    Ok(())
}

/// A report's notes on stderr, each line naming the file and the report.
fn write_notes(
    err: &mut impl Write,
    file: &str,
    spec: &str,
    notes: &[String],
) -> std::io::Result<()> {
    for n in notes {
        writeln!(err, "rprof: {file}: {spec}: {}", render::escape_controls(n))?;
    }
    Ok(())
}

/// Runs of `requests` whose tables are read together, in order.
///
/// On an nsys export (`apart`), when the reports that need NVTX ranges come
/// all first or all last, as `nvtx_sum` does in the default set, they are
/// read and run apart from the others: the NVTX table is usually the
/// largest, and no report needs it beside the kernels or API calls of the
/// others. Each run's tables are let go before the next run reads its own,
/// so that the default set holds at most what `nvtx_sum` alone does (under
/// 2 GB at 3 M kernels, against 2.7 GB together). Any other order, or a
/// window that needs the ranges for every report, is one run.
// one run is a list of one range of requests, as meant
#[allow(clippy::single_range_in_vec_init)]
fn stages(requests: &[Request], apart: bool) -> Vec<std::ops::Range<usize>> {
    let n = requests.len();
    let needs = |r: &Request| stats::tables_for(r.name).nvtx;
    let Some(first) = requests.first().map(needs) else {
        return vec![0..n];
    };
    let k = requests.iter().take_while(|r| needs(r) == first).count();
    if !apart || k == n || requests[k..].iter().any(|r| needs(r) == first) {
        return vec![0..n];
    }
    vec![0..k, k..n]
}

/// The Parquet type of each column: from its unit and its cells, so that a
/// column's type does not depend on which rows a profile has.
fn parquet_types(
    t: &stats::table::Table,
    names: &stats::Names,
    o: &Options,
) -> Vec<(String, ColumnType)> {
    use stats::table::{Cell, Unit};
    // per column: any text, any fractional value; rows held or streamed
    let mut text = vec![false; t.cols.len()];
    let mut frac = vec![false; t.cols.len()];
    let mut see = |row: &[Cell]| {
        for (i, c) in row.iter().enumerate().take(t.cols.len()) {
            match c {
                Cell::Text(_) | Cell::Name(_) => text[i] = true,
                Cell::Round1(_) | Cell::Float(_) => frac[i] = true,
                Cell::Null | Cell::Int(_) => {}
            }
        }
    };
    let rows = match &t.source {
        Some(src) => {
            let mut buf = vec![Cell::Null; t.cols.len()];
            for r in 0..src.len() {
                src.fill(r, names, &mut buf);
                see(&buf);
            }
            src.len()
        }
        None => {
            for r in &t.rows {
                see(r);
            }
            t.rows.len()
        }
    };
    t.cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let converted = match c.unit {
                Unit::Duration | Unit::Timestamp => o.time != TimeUnit::Ns,
                Unit::Bytes | Unit::Throughput => o.mem != MemUnit::B,
                _ => false,
            };
            let ty = if text[i] {
                ColumnType::Utf8
            } else if converted || c.unit == Unit::Percent || frac[i] {
                ColumnType::Float64
            } else if c.unit == Unit::None && rows == 0 {
                // no rows: names are text
                ColumnType::Utf8
            } else {
                ColumnType::Int64
            };
            (render::heading(c, o), ty)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(names: &[&str], apart: bool) -> Vec<std::ops::Range<usize>> {
        let requests: Vec<Request> = names.iter().map(|n| Request::parse(n).unwrap()).collect();
        stages(&requests, apart)
    }

    #[test]
    // one run is a list of one range
    #[allow(clippy::single_range_in_vec_init)]
    fn nvtx_reports_first_or_last_are_read_apart() {
        // the default set: nvtx_sum first
        let default: Vec<&str> = stats::DEFAULT_REPORTS.to_vec();
        assert_eq!(runs(&default, true), [0..1, 1..default.len()]);
        assert_eq!(runs(&default, false), [0..default.len()]);
        // last, and several of them
        assert_eq!(
            runs(&["cuda_api_sum", "nvtx_sum", "nvtx_kern_sum"], true),
            [0..1, 1..3]
        );
        // in the middle, alone, or only one kind: one run
        let middle = ["cuda_api_sum", "nvtx_sum", "cuda_gpu_kern_sum"];
        assert_eq!(runs(&middle, true), [0..3]);
        assert_eq!(runs(&["nvtx_sum", "nvtx_pushpop_sum"], true), [0..2]);
        assert_eq!(runs(&["cuda_api_sum"], true), [0..1]);
    }
}
