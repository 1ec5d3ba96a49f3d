//! `rprof export --chrome`: a profile as a Chrome trace-event timeline.
//!
//! Tracks: one process per GPU with a thread per stream (kernels, memory
//! copies and sets), one process per CPU process with a thread per thread
//! (launch calls, NVTX ranges / CPU ops). A flow arrow runs from each launch
//! call to the kernel or copy it launched. Events are written as they are
//! produced, through one buffered writer: the trace itself is in memory (as
//! for `rprof parse`), the JSON never is.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use rprof_report::chrome::{Arg, ChromeWriter, Slice};
use rprof_report::model::{self, Models, known_bytes, known_flops};
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::model::{Source, ThreadKey, Trace};

use crate::input::{self, Input};
use crate::out;
use crate::progress::{self, Phase};
use rprof_gpu::usage::{DeviceUsage, KernelTime};

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

/// Process and thread ids of the tracks.
struct Tracks {
    /// CPU thread key → (pid, tid).
    threads: BTreeMap<ThreadKey, (u64, u64)>,
    /// GPU device ordinal → pid.
    gpus: BTreeMap<i64, u64>,
}

impl Tracks {
    /// (pid, tid) of a thread: as its launch calls say, else as the
    /// file's thread key packs them (threads without a launch call).
    fn thread(&self, trace: &Trace, key: ThreadKey) -> (u64, u64) {
        self.threads.get(&key).copied().unwrap_or_else(|| {
            let id = trace.thread_id(key);
            (id.pid, id.tid)
        })
    }

    fn gpu(&self, device: i64) -> u64 {
        self.gpus.get(&device).copied().unwrap_or(0)
    }
}

/// A stream id as a thread id (streams are small non-negative numbers).
fn stream_tid(stream: i64) -> u64 {
    u64::try_from(stream).unwrap_or(0)
}

fn tracks(trace: &Trace) -> Tracks {
    let threads: BTreeMap<ThreadKey, (u64, u64)> = trace
        .launches
        .iter()
        .map(|l| (l.thread, (l.pid, l.tid)))
        .collect();
    let mut cpu_pids: BTreeSet<u64> = threads.values().map(|t| t.0).collect();
    for r in &trace.ranges {
        if !threads.contains_key(&r.thread) {
            cpu_pids.insert(trace.thread_id(r.thread).pid);
        }
    }
    let devices: BTreeSet<i64> = trace
        .kernels
        .iter()
        .map(|k| k.device)
        .chain(trace.memops.iter().map(|m| m.device))
        .collect();
    // GPU processes get ids no CPU process has: after the largest
    let base = cpu_pids.iter().next_back().map_or(0, |p| p + 1);
    let gpus = devices
        .iter()
        .enumerate()
        .map(|(i, &d)| (d, base + i as u64))
        .collect();
    Tracks { threads, gpus }
}

/// The earliest timestamp in the profile.
fn zero(trace: &Trace) -> i64 {
    trace
        .kernels
        .iter()
        .map(|k| k.start_ns)
        .chain(trace.memops.iter().map(|m| m.start_ns))
        .chain(trace.launches.iter().map(|l| l.start_ns))
        .chain(trace.ranges.iter().map(|r| r.start_ns))
        .min()
        .unwrap_or(0)
}

pub fn run(args: &ExportArgs) -> anyhow::Result<()> {
    if let (Some(a), Some(b)) = (args.from, args.to)
        && b <= a
    {
        return Err(out::UsageError("--to must be later than --from".into()).into());
    }
    let mut paths = Vec::with_capacity(args.files.len());
    for f in &args.files {
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
        loaded.push(input::load(p, read)?);
    }
    let steps: Vec<Option<Window>> = match args.step {
        Some(n) => loaded
            .iter()
            .map(|(t, e)| step_window(t, e, n).map(Some))
            .collect::<anyhow::Result<_>>()?,
        None => vec![None; loaded.len()],
    };
    let zeros: Vec<i64> = loaded.iter().map(|(t, _)| zero(t)).collect();
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
    let mut w = ChromeWriter::new(sink, common)?;
    let multi = loaded.len() > 1;
    let mut ids = Ids::default();
    let mut totals = [0u64; 4];
    for (rank, ((trace, enclosing), &z)) in loaded.iter().zip(&zeros).enumerate() {
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
        let n = one(
            &mut w, trace, enclosing, rank, &mut ids, window, &out_name, &phase,
        )?;
        drop(phase);
        for (t, x) in totals.iter_mut().zip(n) {
            *t += x;
        }
    }
    let counts = w.counts();
    let sink = w.finish().with_context(|| format!("writing {out_name}"))?;
    sink.finish()
        .with_context(|| format!("writing {out_name}"))?;
    if !args.quiet {
        let what = if multi {
            format!("{} profiles", loaded.len())
        } else {
            paths
                .first()
                .map_or(String::new(), |p| p.display().to_string())
        };
        let _ = writeln!(
            std::io::stderr(),
            "rprof: {what}: wrote {} kernels, {} memory operations, {} launch calls, {} ranges and {} flow arrows to {out_name}",
            totals[0],
            totals[1],
            totals[2],
            totals[3],
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

/// The number a step's name ends in (`ProfilerStep#12` → 12).
fn step_number(name: &str) -> Option<u64> {
    let rev: Vec<char> = name
        .chars()
        .rev()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    rev.into_iter().rev().collect::<String>().parse().ok()
}

/// The window of step `n` as `rprof steps` finds and aligns it; an error
/// naming the steps there are when there is no step `n`.
fn step_window(
    trace: &Trace,
    enclosing: &rprof_trace::attribute::Enclosing,
    n: u64,
) -> anyhow::Result<Window> {
    let innermost: Vec<Option<u32>> = (0..trace.launches.len() as u32)
        .map(|l| enclosing.of(l).last().copied())
        .collect();
    let report = rprof_report::steps::compute(
        trace,
        &rprof_report::steps::StepOptions { pattern: None },
        &innermost,
    );
    let file = input::spool::name(&trace.path);
    if let Some(s) = report
        .steps
        .iter()
        .find(|s| step_number(&s.name) == Some(n))
    {
        return Ok(Window {
            from: Some(s.start_ns),
            to: Some(s.end_ns),
            closed_start: false,
        });
    }
    let numbers: BTreeSet<u64> = report
        .steps
        .iter()
        .filter_map(|s| step_number(&s.name))
        .collect();
    match (numbers.first(), numbers.last()) {
        (Some(a), Some(b)) => bail!(
            "{file}: no step {n}: the steps are {a} to {b} ({} of them, from {})",
            numbers.len(),
            report.detection
        ),
        _ => bail!(
            "{file}: no step {n}: {}",
            report
                .na
                .as_deref()
                .unwrap_or("the steps found have no number in their names")
        ),
    }
}

/// The time window to keep (absolute ns; `None`: unbounded).
#[derive(Clone, Copy, Debug)]
struct Window {
    from: Option<i64>,
    to: Option<i64>,
    /// --from keeps an event that ends exactly at `from`; a step does not
    /// (it belongs to the step before), unless it has no duration.
    closed_start: bool,
}

impl Window {
    /// Whether `[start, end]` overlaps the window.
    fn keeps(&self, start: i64, end: i64) -> bool {
        self.from
            .is_none_or(|f| end > f || (end == f && (self.closed_start || start == end)))
            && self.to.is_none_or(|t| start < t)
    }
}

/// Process and flow ids across several profiles.
#[derive(Default)]
struct Ids {
    /// (rank, pid in the profile) → pid in the trace.
    pids: BTreeMap<(usize, u64), u64>,
    /// Flow ids used so far (the next profile's start after them).
    flow_base: u64,
}

impl Ids {
    /// The trace's pid of `pid` in profile `rank` (`None`: the only
    /// profile, whose pids stay as they are).
    fn pid(&mut self, rank: Option<usize>, pid: u64) -> u64 {
        match rank {
            None => pid,
            Some(r) => {
                let next = self.pids.len() as u64 + 1;
                *self.pids.entry((r, pid)).or_insert(next)
            }
        }
    }
}

/// Busy share per bucket of each GPU's kernels, as a counter track.
fn utilization(
    w: &mut ChromeWriter<Sink>,
    trace: &Trace,
    t: &Tracks,
    rank: Option<usize>,
    ids: &mut Ids,
    window: Window,
) -> std::io::Result<()> {
    let mut per: BTreeMap<i64, DeviceUsage> = BTreeMap::new();
    for k in &trace.kernels {
        per.entry(k.device).or_default().add(
            KernelTime {
                start_ns: Some(k.start_ns),
                end_ns: Some(k.end_ns),
                dur_ns: k.end_ns - k.start_ns,
            },
            None,
            None,
            None,
        );
    }
    let Some((lo, hi)) = rprof_gpu::usage::span(per.values()) else {
        return Ok(());
    };
    let lo = window.from.map_or(lo, |f| f.max(lo));
    let hi = window.to.map_or(hi, |x| x.min(hi));
    if hi <= lo {
        return Ok(());
    }
    let width = ((hi - lo) / 1000).max(1000);
    for (dev, u) in &per {
        let pid = ids.pid(rank, t.gpu(*dev));
        for (start, len, busy) in u.buckets(lo, hi, width) {
            let pct = busy as f64 * 100.0 / len.max(1) as f64;
            w.counter(
                pid,
                "GPU utilization (%)",
                start,
                (pct * 100.0).round() / 100.0,
            )?;
        }
        w.counter(pid, "GPU utilization (%)", hi, 0.0)?;
    }
    Ok(())
}

/// Write one profile; returns the kernels, memory operations, launch calls
/// and ranges written.
#[allow(clippy::too_many_arguments)]
fn one(
    w: &mut ChromeWriter<Sink>,
    trace: &Trace,
    enclosing: &rprof_trace::attribute::Enclosing,
    rank: Option<usize>,
    ids: &mut Ids,
    window: Window,
    out_name: &str,
    phase: &Phase,
) -> anyhow::Result<[u64; 4]> {
    let t = tracks(trace);
    let group = |name: String| match rank {
        Some(r) => format!("rank {r}: {name}"),
        None => name,
    };
    let sort_base = rank.map_or(0, |r| r as i64 * 10_000);
    let flow_base = ids.flow_base;
    let mut n = [0u64; 4];
    // track names: CPU processes first, then GPUs
    let mut cpu: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for r in &trace.ranges {
        let (p, th) = t.thread(trace, r.thread);
        cpu.entry(p).or_default().insert(th);
    }
    for &(p, th) in t.threads.values() {
        cpu.entry(p).or_default().insert(th);
    }
    for (i, (&pid, threads)) in cpu.iter().enumerate() {
        let tp = ids.pid(rank, pid);
        w.process_name(
            tp,
            &group(format!("CPU process {pid}")),
            sort_base + i as i64,
        )?;
        for (j, &tid) in threads.iter().enumerate() {
            w.thread_name(tp, tid, &format!("thread {tid}"), j as i64)?;
        }
    }
    let mut streams: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
    for (d, s) in trace
        .kernels
        .iter()
        .map(|k| (k.device, k.stream))
        .chain(trace.memops.iter().map(|m| (m.device, m.stream)))
    {
        streams.entry(d).or_default().insert(s);
    }
    for (i, (&dev, ss)) in streams.iter().enumerate() {
        let name = trace
            .devices
            .iter()
            .find(|d| d.device == dev)
            .and_then(|d| d.name.as_deref());
        let label = match name {
            Some(n) => format!("GPU {dev}: {n}"),
            None => format!("GPU {dev}"),
        };
        let gp = ids.pid(rank, t.gpu(dev));
        w.process_name(gp, &group(label), sort_base + (cpu.len() + i) as i64)?;
        for (j, &s) in ss.iter().enumerate() {
            w.thread_name(gp, stream_tid(s), &format!("stream {s}"), j as i64)?;
        }
    }

    // CPU side: NVTX ranges (already sorted per thread, outermost first),
    // then launch calls
    let range_cat = if trace.source == Source::Kineto {
        "cpu_op"
    } else {
        "nvtx"
    };
    for r in &trace.ranges {
        if !window.keeps(r.start_ns, r.end_ns) {
            continue;
        }
        n[3] += 1;
        let (pid, tid) = t.thread(trace, r.thread);
        let pid = ids.pid(rank, pid);
        let domain = trace.domain_name(r.thread, r.domain);
        let args: Vec<(&str, Arg<'_>)> = domain
            .map(|d| vec![("domain", Arg::Str(d))])
            .unwrap_or_default();
        w.slice(&Slice {
            pid,
            tid,
            name: trace.strings.get(r.text),
            cat: range_cat,
            start_ns: r.start_ns,
            dur_ns: r.end_ns - r.start_ns,
            args: &args,
        })?;
    }
    for l in &trace.launches {
        if !window.keeps(l.start_ns, l.end_ns) {
            continue;
        }
        n[2] += 1;
        let name = l.api.map_or("CUDA API call", |a| trace.strings.get(a));
        w.slice(&Slice {
            pid: ids.pid(rank, l.pid),
            tid: l.tid,
            name,
            cat: "cuda_api",
            start_ns: l.start_ns,
            dur_ns: l.end_ns - l.start_ns,
            args: &[("correlation", Arg::Int(i128::from(l.correlation)))],
        })?;
    }

    // memory copies and sets, with their flows
    let first_memop_flow = flow_base + trace.kernels.len() as u64 + 1;
    for (j, m) in trace.memops.iter().enumerate() {
        if !window.keeps(m.start_ns, m.end_ns) {
            continue;
        }
        n[1] += 1;
        let name = trace.strings.get(m.name);
        let cat = if name.starts_with("Memset") {
            "gpu_memset"
        } else {
            "gpu_memcpy"
        };
        let mut args = vec![("correlation", Arg::Int(i128::from(m.correlation)))];
        if let Some(b) = m.bytes {
            args.push(("bytes", Arg::Int(i128::from(b))));
        }
        let (pid, tid) = (ids.pid(rank, t.gpu(m.device)), stream_tid(m.stream));
        w.slice(&Slice {
            pid,
            tid,
            name,
            cat,
            start_ns: m.start_ns,
            dur_ns: m.end_ns - m.start_ns,
            args: &args,
        })?;
        if let Some(l) = m
            .launch
            .and_then(|i| trace.launches.get(i as usize))
            .filter(|l| window.keeps(l.start_ns, l.end_ns))
        {
            let id = first_memop_flow + j as u64;
            w.flow_start(id, ids.pid(rank, l.pid), l.tid, l.start_ns)?;
            w.flow_end(id, pid, tid, m.start_ns)?;
        }
    }

    // kernels, with the models' numbers, in start order
    let mut models = Models::new();
    let mut idx = 0u64;
    let built = build::build(trace, enclosing, BuildOptions::default(), |recs| {
        phase.inc(recs.len() as u64);
        let resolved = models.resolve(recs);
        let est = model::estimate(recs, &resolved);
        let mut write = || -> std::io::Result<()> {
            for (r, e) in recs.iter().zip(&est) {
                idx += 1;
                let (Some(start), Some(end)) = (r.start_ns, r.end_ns) else {
                    continue;
                };
                if !window.keeps(start, end) {
                    continue;
                }
                n[0] += 1;
                let (pid, tid) = (ids.pid(rank, t.gpu(r.device)), stream_tid(r.stream));
                let flops = known_flops(&e.estimate);
                let bytes = known_bytes(&e.estimate);
                let mut args: Vec<(&str, Arg<'_>)> = Vec::with_capacity(16);
                if !e.op.is_empty() {
                    args.push(("op", Arg::Str(e.op)));
                }
                if !e.module.is_empty() && e.module != "na" {
                    args.push(("module", Arg::Str(e.module)));
                }
                if e.estimate.params != "na=na," {
                    args.push(("params", Arg::Str(&e.estimate.params)));
                }
                if let Some(f) = flops {
                    args.push(("flops", Arg::Int(f)));
                }
                if let Some(b) = bytes {
                    args.push(("bytes", Arg::Int(b)));
                }
                args.push(("tensor cores", Arg::Str(e.estimate.tc.as_str())));
                args.push(("dir", Arg::Str(&r.dir)));
                if let Some(s) = r.stack.last() {
                    args.push(("nvtx", Arg::Str(s)));
                }
                args.push(("grid", Arg::Dims(r.grid)));
                args.push(("block", Arg::Dims(r.block)));
                if let Some(x) = r.regs {
                    args.push(("registers per thread", Arg::Int(i128::from(x))));
                }
                if let Some(x) = r.static_smem_bytes {
                    args.push(("static shared memory", Arg::Int(i128::from(x))));
                }
                if let Some(x) = r.dynamic_smem_bytes {
                    args.push(("dynamic shared memory", Arg::Int(i128::from(x))));
                }
                if let Some(c) = r.correlation {
                    args.push(("correlation", Arg::Int(i128::from(c))));
                }
                w.slice(&Slice {
                    pid,
                    tid,
                    name: &r.short_name,
                    cat: "kernel",
                    start_ns: start,
                    dur_ns: end - start,
                    args: &args,
                })?;
                let launch_kept = r
                    .launch_end_ns
                    .is_some_and(|le| r.launch_start_ns.is_some_and(|ls| window.keeps(ls, le)));
                if let (Some(lp), Some(ls), true) = (r.pid, r.launch_start_ns, launch_kept) {
                    w.flow_start(flow_base + idx, ids.pid(rank, lp), r.tid, ls)?;
                    w.flow_end(flow_base + idx, pid, tid, start)?;
                }
            }
            Ok(())
        };
        write().with_context(|| format!("writing {out_name}"))
    });
    built?;
    utilization(w, trace, &t, rank, ids, window).with_context(|| format!("writing {out_name}"))?;
    ids.flow_base = first_memop_flow + trace.memops.len() as u64;
    Ok(n)
}
