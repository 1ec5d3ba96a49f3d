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
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ExportArgs {
    /// Chrome trace-event JSON (the only format so far).
    #[arg(long, required = true)]
    pub chrome: bool,

    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// No summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// The profile: an nsys `.sqlite` export, an nvprof database or a
    /// PyTorch profiler trace (`.json` / `.json.gz`).
    pub file: PathBuf,
}

const AFTER_HELP: &str = "\
Examples:
  rprof export --chrome net.sqlite -o net.json      # then open net.json in ui.perfetto.dev
  rprof export --chrome worker0.pt.trace.json.gz | gzip > timeline.json.gz";

/// Process and thread ids of the tracks.
struct Tracks {
    /// CPU thread key → (pid, tid).
    threads: BTreeMap<ThreadKey, (u64, u64)>,
    /// GPU device ordinal → pid.
    gpus: BTreeMap<i64, u64>,
}

/// (pid, tid) packed in a thread key, for threads without a launch call.
fn unpack(source: Source, key: ThreadKey) -> (u64, u64) {
    match source {
        Source::Nsys => ((key >> 24) & 0xFF_FFFF, key & 0xFF_FFFF),
        Source::Nvprof | Source::Kineto => (key >> 32, key & 0xFFFF_FFFF),
    }
}

impl Tracks {
    fn thread(&self, source: Source, key: ThreadKey) -> (u64, u64) {
        self.threads
            .get(&key)
            .copied()
            .unwrap_or_else(|| unpack(source, key))
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
            cpu_pids.insert(unpack(trace.source, r.thread).0);
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
    let path = match Input::detect(Some(&args.file))? {
        Input::Profile(p) => p,
        Input::Records(_) | Input::Stream(..) => bail!(
            "{}: a record file; export needs the profile itself (nsys or nvprof SQLite, or a PyTorch profiler trace), since records lack launch calls, NVTX ranges and memory copies",
            args.file.display()
        ),
    };
    let read = input::Options {
        compat: false,
        memops: true,
        quiet: args.quiet,
    };
    let (trace, enclosing) = input::load(&path, read)?;
    let t = tracks(&trace);
    let zero = zero(&trace);
    let out_name = args
        .output
        .as_ref()
        .map_or("<stdout>".to_owned(), |p| p.display().to_string());
    let mut w = ChromeWriter::new(
        out::create(args.output.as_deref(), &[&args.file, &path])?,
        zero,
    )?;

    // track names: CPU processes first, then GPUs
    let mut cpu: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for r in &trace.ranges {
        let (p, th) = t.thread(trace.source, r.thread);
        cpu.entry(p).or_default().insert(th);
    }
    for &(p, th) in t.threads.values() {
        cpu.entry(p).or_default().insert(th);
    }
    for (i, (&pid, threads)) in cpu.iter().enumerate() {
        w.process_name(pid, &format!("CPU process {pid}"), i as i64)?;
        for (j, &tid) in threads.iter().enumerate() {
            w.thread_name(pid, tid, &format!("thread {tid}"), j as i64)?;
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
        w.process_name(t.gpu(dev), &label, (cpu.len() + i) as i64)?;
        for (j, &s) in ss.iter().enumerate() {
            w.thread_name(t.gpu(dev), stream_tid(s), &format!("stream {s}"), j as i64)?;
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
        let (pid, tid) = t.thread(trace.source, r.thread);
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
        let name = l.api.map_or("CUDA API call", |a| trace.strings.get(a));
        w.slice(&Slice {
            pid: l.pid,
            tid: l.tid,
            name,
            cat: "cuda_api",
            start_ns: l.start_ns,
            dur_ns: l.end_ns - l.start_ns,
            args: &[("correlation", Arg::Int(i128::from(l.correlation)))],
        })?;
    }

    // memory copies and sets, with their flows
    let first_memop_flow = trace.kernels.len() as u64 + 1;
    for (j, m) in trace.memops.iter().enumerate() {
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
        let (pid, tid) = (t.gpu(m.device), stream_tid(m.stream));
        w.slice(&Slice {
            pid,
            tid,
            name,
            cat,
            start_ns: m.start_ns,
            dur_ns: m.end_ns - m.start_ns,
            args: &args,
        })?;
        if let Some(l) = m.launch.and_then(|i| trace.launches.get(i as usize)) {
            let id = first_memop_flow + j as u64;
            w.flow_start(id, l.pid, l.tid, l.start_ns)?;
            w.flow_end(id, pid, tid, m.start_ns)?;
        }
    }

    // kernels, with the models' numbers, in start order
    let mut models = Models::new();
    let mut idx = 0u64;
    let mut failed: Option<anyhow::Error> = None;
    let built = build::build(&trace, &enclosing, BuildOptions::default(), |recs| {
        let resolved = models.resolve(recs);
        let est = model::estimate(recs, &resolved);
        let mut write = || -> std::io::Result<()> {
            for (r, e) in recs.iter().zip(&est) {
                idx += 1;
                let (Some(start), Some(end)) = (r.start_ns, r.end_ns) else {
                    continue;
                };
                let (pid, tid) = (t.gpu(r.device), stream_tid(r.stream));
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
                if let (Some(lp), Some(ls)) = (r.pid, r.launch_start_ns) {
                    w.flow_start(idx, lp, r.tid, ls)?;
                    w.flow_end(idx, pid, tid, start)?;
                }
            }
            Ok(())
        };
        write().map_err(|e| {
            failed = Some(anyhow::Error::new(e).context(format!("writing {out_name}")));
            rprof_trace::Error::Record {
                source_name: out_name.clone(),
                line: 0,
                detail: "stopped".into(),
            }
        })
    });
    if let Some(e) = failed {
        return Err(e);
    }
    built?;
    let counts = w.counts();
    w.finish()
        .with_context(|| format!("writing {out_name}"))?
        .finish()?;
    if !args.quiet {
        let _ = writeln!(
            std::io::stderr(),
            "rprof: {}: wrote {} kernels, {} memory operations, {} launch calls, {} ranges and {} flow arrows to {out_name}",
            args.file.display(),
            trace.kernels.len(),
            trace.memops.len(),
            trace.launches.len(),
            trace.ranges.len(),
            counts.flow_starts
        );
    }
    Ok(())
}
