//! `rprof export --chrome`: a profile as a Chrome trace-event timeline.
//!
//! This module parses the options, opens the inputs and the output; the
//! layout (tracks, slices, flows, counters) is `rprof_report::chrome`.
//! Events are written as they are produced, through one buffered writer:
//! the trace itself is in memory (as for `rprof parse`), the JSON never is.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, anyhow, bail};
use clap::Args;
use rprof_report::chrome::{self, Timeline, Window, Written};
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::model::Trace;

use crate::input::{self, Input};
use crate::out;
use crate::progress::{self, Phase};

/// Write a profile as a timeline (Chrome trace JSON for Perfetto).
///
/// The output loads in Perfetto (ui.perfetto.dev) and chrome://tracing.
/// Kernels and memory copies/sets go on one track per GPU stream, launch
/// calls and NVTX ranges (PyTorch profiler: CPU ops) on one track per CPU
/// thread, with a flow arrow from each launch call to what it launched.
/// Each kernel carries its op, params, FLOPs, bytes, tensor-core use, grid,
/// block, registers and shared memory as arguments. Times are microseconds
/// with three decimals (exact nanoseconds) from the earliest event in the
/// profile. Needs the profile itself (nsys or nvprof SQLite, Kineto trace):
/// the records of `rprof parse` lack launch calls, ranges and copies.
///
/// Each GPU also gets a counter track "GPU utilization (%)": the share of
/// each bucket (1/1000 of the span, at least 1 µs) with at least one kernel
/// running. Several profiles (the ranks of one job) go into one trace, each
/// rank's processes named and sorted as one group ("rank N"); their clocks
/// are taken as they are (nsys and Kineto record wall-clock time, so the
/// ranks of one job line up), or with --align-starts each rank starts at 0.
/// `-o FILE.gz` writes gzip. --from/--to keep the events that overlap a
/// window (times from the start of the trace, `12.5ms`, `3s`, `800us`,
/// `1500ns`; a bare number is ms); --step N keeps profiler step N.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ExportArgs {
    /// Chrome trace-event JSON (the only format so far; same as --format
    /// chrome).
    #[arg(long, required_unless_present = "format")]
    pub chrome: bool,

    /// Output format (chrome: trace-event JSON for Perfetto and
    /// chrome://tracing).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ExportFormat>,

    /// Write to FILE instead of standard output; a name ending in `.gz` is
    /// written gzip-compressed.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Keep events that end after this time from the start of the trace.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub from: Option<i64>,

    /// Keep events that start before this time from the start of the trace.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub to: Option<i64>,

    /// Keep the events that overlap profiler step N: the window `rprof
    /// steps` reports for the step whose name ends in N (`ProfilerStep#N`,
    /// else a range named like a step, `iteration N`), host range aligned
    /// to the GPU work it launched. With several profiles, each rank's own
    /// step N.
    #[arg(long, value_name = "N", conflicts_with_all = ["from", "to"])]
    pub step: Option<u64>,

    /// With several profiles: shift each so that its first event is at 0
    /// (for ranks whose clocks are not aligned).
    #[arg(long)]
    pub align_starts: bool,

    /// No summary or progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// The profiles: nsys `.sqlite` exports, nvprof databases or PyTorch
    /// profiler traces (`.json` / `.json.gz`); several are the ranks of one
    /// job, in rank order.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Chrome trace-event JSON.
    Chrome,
}

/// `12.5ms`, `3s`, `800us`, `1500ns`, or ms without a unit, as ns.
fn parse_time(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        (t, 1e6)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s}: not a time (examples: 12.5ms, 3s, 800us, 1500ns)"))?;
    let ns = v * scale;
    if !(0.0..9.2e18).contains(&ns) {
        return Err(format!("{s}: must be a non-negative time"));
    }
    Ok(ns.round() as i64)
}

const AFTER_HELP: &str = "\
Examples:
  rprof export --chrome net.sqlite -o net.json      # then open net.json in ui.perfetto.dev
  rprof export --chrome worker0.pt.trace.json.gz -o timeline.json.gz
  rprof export --chrome net.sqlite --from 2s --to 2.5s -o step.json
  rprof export --chrome worker0.pt.trace.json.gz --step 12 -o step12.json
  rprof export --chrome rank0.sqlite rank1.sqlite rank2.sqlite rank3.sqlite -o job.json.gz";

pub fn run(args: &ExportArgs) -> anyhow::Result<()> {
    if let (Some(a), Some(b)) = (args.from, args.to)
        && b <= a
    {
        return Err(out::UsageError("--to must be later than --from".into()).into());
    }
    let mut paths = Vec::with_capacity(args.files.len());
    for f in &args.files {
        let f = &crate::input::profile_arg(f)?;
        paths.push(match Input::detect(Some(f))? {
            Input::Profile(p) => p,
            Input::Records(_) | Input::Stream(..) => bail!(
                "{}: a record file; export needs the profile itself (nsys or nvprof SQLite, or a PyTorch profiler trace), since records lack launch calls, NVTX ranges and memory copies",
                f.display()
            ),
        });
    }
    let read = input::Options {
        compat: false,
        memops: true,
        quiet: args.quiet,
        streams: false,
    };
    let to_file = args
        .output
        .as_deref()
        .filter(|p| *p != std::path::Path::new("-"));
    let on = progress::enabled(args.quiet, to_file.is_none());
    // every profile is read first: the common zero is the earliest event
    let mut loaded = Vec::with_capacity(paths.len());
    for p in &paths {
        // ranges in attribution order; each profile's kernels are
        // attributed when it is written (below)
        loaded.push(input::load_sorted(p, read)?);
    }
    let steps: Vec<Option<Window>> = match args.step {
        Some(n) => loaded
            .iter_mut()
            .map(|t| step_window(t, n).map(Some))
            .collect::<anyhow::Result<_>>()?,
        None => vec![None; loaded.len()],
    };
    let zeros: Vec<i64> = loaded.iter().map(chrome::zero_ns).collect();
    let common = zeros.iter().copied().min().unwrap_or(0);
    let out_name = args
        .output
        .as_ref()
        .map_or("<stdout>".to_owned(), |p| p.display().to_string());
    let gz = to_file.is_some_and(|p| p.extension().is_some_and(|e| e == "gz"));
    let inputs: Vec<&std::path::Path> = args
        .files
        .iter()
        .map(|p| p.as_path())
        .chain(paths.iter().map(|p| p.as_path()))
        .collect();
    let target = out::create(args.output.as_deref(), &inputs)?;
    let sink = if gz {
        Sink::Gz(flate2::write::GzEncoder::new(
            target,
            flate2::Compression::default(),
        ))
    } else {
        Sink::Plain(target)
    };
    let mut w = Timeline::new(sink, common)?;
    let multi = loaded.len() > 1;
    let mut totals = Written::default();
    let profiles = loaded.len();
    // each profile is let go once written
    for (rank, (mut trace, &z)) in loaded.into_iter().zip(&zeros).enumerate() {
        let zero_ns = if args.align_starts { z } else { common };
        w.set_zero(zero_ns);
        let window = steps[rank].unwrap_or(Window {
            from: args.from.map(|f| zero_ns.saturating_add(f)),
            to: args.to.map(|t| zero_ns.saturating_add(t)),
            closed_start: true,
        });
        let rank = multi.then_some(rank);
        let phase = Phase::bar(
            on,
            trace.kernels.len() as u64,
            "writing the timeline",
            false,
        );
        let mut p = w.begin(&trace, rank, window)?;
        // every range is written: only those enclosing a kernel's launch
        // call are kept for the op models (56 % of the 3 M-kernel export's
        // enclose no call; their lists name the same ranges in the same
        // order as over all of them). The calls that launched only copies
        // and sets need no list: the records are of kernels alone.
        let wanted = rprof_trace::attribute::kernel_launches(&trace);
        let (enclosing, _) = rprof_trace::attribute::attribute_used_of(
            &trace.launches,
            wanted.as_deref(),
            &mut trace.ranges,
        );
        drop(wanted);
        // the records and the op models from here on: mimalloc's, faster
        // for their small blocks; what was read stays glibc's
        // (crate::alloc)
        crate::alloc::use_mimalloc();
        // each kernel's op, params and FLOPs come from the op models
        let opts = BuildOptions {
            typed_stock: true,
            ..BuildOptions::default()
        };
        // a pipeline: one thread builds each chunk's records, a second runs
        // the op models' backward lookup on them (sequential, in record
        // order), this one runs the models and writes the chunk before
        let mut models = p.take_models();
        let built = build::build_overlapped(
            &trace,
            &enclosing,
            opts,
            |recs| {
                phase.inc(recs.len() as u64);
                models.resolve(recs)
            },
            |recs, resolved| {
                w.kernels_resolved(&mut p, recs, &resolved)
                    .with_context(|| format!("writing {out_name}"))
            },
        );
        built?;
        // (the forward kernels remembered for backward lookups: 0.1 GB at
        // 3 M kernels, let go before the utilization tracks)
        drop(models);
        // the kernels are written: their lists of ranges are not needed for
        // the utilization tracks that end the profile (115 MB at 3 M
        // kernels, at the peak)
        drop(enclosing);
        let n = w
            .end(p, &trace)
            .with_context(|| format!("writing {out_name}"))?;
        drop(phase);
        totals.kernels += n.kernels;
        totals.memops += n.memops;
        totals.launches += n.launches;
        totals.ranges += n.ranges;
    }
    let counts = w.counts();
    let sink = w.finish().with_context(|| format!("writing {out_name}"))?;
    sink.finish()
        .with_context(|| format!("writing {out_name}"))?;
    if !args.quiet {
        let what = if multi {
            format!("{profiles} profiles")
        } else {
            paths
                .first()
                .map_or(String::new(), |p| input::spool::name(p))
        };
        let _ = writeln!(
            std::io::stderr(),
            "rprof: {what}: wrote {} kernels, {} memory operations, {} launch calls, {} ranges and {} flow arrows to {out_name}",
            totals.kernels,
            totals.memops,
            totals.launches,
            totals.ranges,
            counts.flow_starts
        );
    }
    Ok(())
}

/// The output: plain, or gzip (`-o FILE.gz`).
enum Sink {
    Plain(out::Output),
    Gz(flate2::write::GzEncoder<out::Output>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(buf),
            Sink::Gz(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Gz(w) => w.flush(),
        }
    }
}

impl Sink {
    /// Flush; a gzip stream gets its trailer first, and errors surface;
    /// the output file is renamed into place only then.
    fn finish(self) -> anyhow::Result<()> {
        match self {
            Sink::Plain(w) => w.finish(),
            Sink::Gz(g) => g.finish()?.finish(),
        }
    }
}

/// The window of step `n` as `rprof steps` finds and aligns it; an error
/// naming the steps there are when there is no step `n`.
fn step_window(trace: &mut Trace, n: u64) -> anyhow::Result<Window> {
    let innermost = rprof_trace::attribute::innermost(&trace.launches, &mut trace.ranges);
    let file = input::spool::name(&trace.path);
    chrome::step_window(trace, &innermost, n).map_err(|e| anyhow!("{file}: {e}"))
}
