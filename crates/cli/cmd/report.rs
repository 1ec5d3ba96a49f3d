//! `rprof report`: one self-contained HTML page with charts, or the charts
//! alone as SVG files.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rprof_report::html::{self, PageBuilder};
use rprof_report::model::{self, Models};
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::read::{self, ReadOptions};

use crate::out::UsageError;
use crate::progress::Phase;

/// One self-contained HTML report: overview, utilization over time, top ops
/// and kernels, roofline, memory and copies, the distributed view,
/// recommendations.
///
/// The page has no external scripts, styles, fonts or images and opens
/// offline in any browser; its charts are inline SVG. Every figure says what
/// it is a share of (see docs/reports.md, "report"). Several files, or a
/// directory of rank traces, give the page of the whole job (per-rank
/// breakdown, collectives, stragglers). With `--svg DIR` the charts are
/// also written as SVG files, for slides and papers.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ReportArgs {
    /// Write the page to FILE (required unless --svg is given; `-`: stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also write every chart as an SVG file into DIR.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,

    /// No parse summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// Steps for the distributed view: ranges whose name matches this
    /// regular expression.
    #[arg(long, value_name = "REGEX", default_value = r"ProfilerStep#\d+")]
    pub step: String,

    /// A profile (nsys or nvprof SQLite, PyTorch-profiler trace), or several
    /// profiles or a directory of them (one job, one rank each).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
}

const AFTER_HELP: &str = "\
Examples:
  rprof report net.sqlite -o report.html
  rprof report trace.pt.trace.json.gz -o report.html
  rprof report traces/ -o job.html          # every rank of a job
  rprof report net.sqlite --svg plots/";

pub fn run(args: &ReportArgs) -> anyhow::Result<()> {
    if args.output.is_none() && args.svg.is_none() {
        return Err(UsageError("give -o FILE (the page) or --svg DIR (the charts)".into()).into());
    }
    let step = regex::RegexBuilder::new(&args.step)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| UsageError(format!("--step: not a regular expression: {e}")))?;
    let files = super::dist::expand(&args.inputs)?;
    // -o naming an input is refused before anything is read
    let inputs: Vec<&std::path::Path> = files
        .iter()
        .chain(&args.inputs)
        .map(|p| p.as_path())
        .collect();
    let target = match &args.output {
        Some(o) => Some(crate::out::create(Some(o), &inputs)?),
        None => None,
    };
    let command = format!(
        "rprof report {}",
        args.inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let page = if files.len() == 1 {
        one_profile(&files[0], &step, &command, args.quiet)?
    } else {
        use rayon::prelude::*;
        let results: Vec<anyhow::Result<(rprof_report::dist::FileSummary, Vec<String>)>> = files
            .par_iter()
            .enumerate()
            .map(|(i, f)| super::dist::read_one(f, i, &step))
            .collect();
        let mut summaries = Vec::with_capacity(results.len());
        let mut said = Vec::new();
        for r in results {
            let (summary, lines) = r?;
            said.extend(lines);
            summaries.push(summary);
        }
        let report = rprof_report::dist::build(summaries)?;
        if !args.quiet {
            crate::diag::print(&said);
        }
        html::job_page(&report, &command)
    };
    if let Some(dir) = &args.svg {
        let written = html::write_svgs(dir, &page)
            .with_context(|| format!("cannot write the charts into {}", dir.display()))?;
        if !args.quiet {
            eprintln!(
                "rprof: {} charts written to {}",
                written.len(),
                dir.display()
            );
        }
    }
    if let Some(mut w) = target {
        // a temporary file beside FILE, renamed only when the page is whole
        html::write_html(&mut w, &page)?;
        w.finish()?;
    }
    Ok(())
}

/// The page of one profile: one read feeds every section, and one sort of
/// the ranges (attribution's, per thread by start) serves attribution, the
/// step view and the idle view.
///
/// The job-level views (memory, steps, idle time, the timeline sections)
/// are computed on one thread while the records and op models are built on
/// the others: the records' backward lookup is sequential and leaves a
/// core free for them.
/// `RPROF_TIMING=1` prints the time and memory after each phase on stderr.
fn one_profile(
    file: &std::path::Path,
    step: &regex::Regex,
    command: &str,
    quiet: bool,
) -> anyhow::Result<html::Page> {
    let timing = Timing::new();
    // the views and the records are built on threads of their own
    super::map_large_blocks();
    let on = crate::progress::enabled(quiet, false);
    let reading = Phase::spinner(on, &format!("reading {}", crate::input::spool::name(file)));
    let mut trace = read::read(
        file,
        ReadOptions {
            compat: false,
            ..ReadOptions::everything()
        },
    )?;
    drop(reading);
    let views = Phase::spinner(on, "computing the views");
    // a piped profile is named as given (`-`), not by its temporary copy
    crate::input::as_given(&mut trace);
    // what was read, said once the page is whole (crate::diag's wording)
    let said = crate::diag::trace_summary(&trace);
    super::release_freed();
    timing.lap("read");
    // the distributed view's look at the ranges while they are in file
    // order (the order `rprof dist` sees: it breaks ties between ranges by
    // their place in the file); the rest of that view runs with the others
    let dist_ranges = rprof_report::dist::scan_ranges(&trace, step);
    let profiler_steps = Some(dist_ranges.profiler_steps());
    timing.lap("dist's ranges");
    // sorts the ranges per thread by start, end descending, text: the
    // range indexes of the memory and idle views then need no sort of
    // their own (host::ThreadRanges, mem's Enclosing)
    let enclosing = rprof_trace::attribute::attribute(&trace.launches, &mut trace.ranges);
    super::release_freed();
    timing.lap("attribute");
    drop(views);
    let mut builder = PageBuilder::new(trace.devices.clone());
    let mut models = Models::new();
    let records = Phase::bar(
        on,
        trace.kernels.len() as u64,
        "building records and op models",
        false,
    );
    // the job-level views on a thread of their own while the records and
    // op models are built: that build keeps about one core busy (its
    // backward lookup is sequential), the views fill the other
    let (timeline, stats) = std::thread::scope(|s| {
        let views = s.spawn(|| {
            // the memory and step views side by side (the idle view after
            // them: its scratch memory with the memory view's would raise
            // the peak)
            let (mem, steps) = rayon::join(
                || rprof_report::mem::compute(&trace, rprof_report::mem::MemOptions::default()),
                || {
                    let innermost: Vec<Option<u32>> = (0..trace.launches.len() as u32)
                        .map(|l| enclosing.innermost(l))
                        .collect();
                    rprof_report::steps::compute(
                        &trace,
                        &rprof_report::steps::StepOptions { pattern: None },
                        &innermost,
                    )
                },
            );
            let idle =
                rprof_report::idle::compute(&trace, &rprof_report::idle::IdleOptions::default());
            let dist = rprof_report::dist::build(vec![rprof_report::dist::summarize_scanned(
                &trace,
                0,
                dist_ranges,
            )])
            .ok();
            html::Timeline::new(
                &trace,
                command,
                html::Views {
                    mem: Some(mem),
                    dist,
                    steps: Some(steps),
                    idle: Some(idle),
                    profiler_steps,
                },
            )
        });
        // a pipeline: one thread builds each chunk's records, a second
        // runs the op models' backward lookup on them (sequential, in
        // record order), this one runs the models (in parallel) and the
        // page's sums on the chunk before
        let stats = build::build_overlapped(
            &trace,
            &enclosing,
            BuildOptions {
                typed_stock: true,
                ..BuildOptions::default()
            },
            |recs| {
                records.inc(recs.len() as u64);
                models.resolve(recs)
            },
            |recs, resolved| {
                let est = model::estimate(recs, &resolved);
                builder.add(recs, &est);
                anyhow::Ok(())
            },
        );
        match views.join() {
            Ok(timeline) => (timeline, stats),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    let stats = stats?;
    drop(records);
    timing.lap("records and op models");
    if !quiet {
        crate::diag::print(&said);
        crate::diag::print(&[format!(
            "rprof: {}: {} records",
            crate::diag::name(&trace),
            stats.records
        )]);
    }
    let page = builder.finish_with(timeline);
    timing.lap("page");
    // millions of small allocations (the backward-lookup indexes, range
    // texts): the OS frees them at exit faster than dropping them one by
    // one (as `rprof prof` and `rprof stats` do)
    std::mem::forget(models);
    std::mem::forget(enclosing);
    std::mem::forget(trace);
    Ok(page)
}

/// Phase times and memory on stderr when `RPROF_TIMING` is set.
struct Timing(Option<std::time::Instant>);

impl Timing {
    fn new() -> Timing {
        Timing(
            std::env::var_os("RPROF_TIMING")
                .is_some()
                .then(std::time::Instant::now),
        )
    }

    fn lap(&self, what: &str) {
        let Some(t0) = self.0 else { return };
        // resident and peak resident memory, where /proc tells them
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let kb = |key: &str| {
            status
                .lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .unwrap_or("?")
                .to_owned()
        };
        // CPU time of every thread so far (user + system), from getrusage:
        // on a shared machine the wall time of a phase says little
        let cpu_s = {
            // SAFETY: getrusage writes the struct it is given and nothing else
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } == 0 {
                let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
                format!("{:.3}", s(ru.ru_utime) + s(ru.ru_stime))
            } else {
                "?".to_owned()
            }
        };
        eprintln!(
            "timing: {what}: {:.3} s since start, CPU {cpu_s} s; RSS {} kB, peak {} kB",
            t0.elapsed().as_secs_f64(),
            kb("VmRSS:"),
            kb("VmHWM:")
        );
    }
}
