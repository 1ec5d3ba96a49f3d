//! The layout of `rprof export --chrome`: profiles as Chrome trace events.
//!
//! Tracks: one process per GPU with a thread per stream (kernels, memory
//! copies and sets), one process per CPU process with a thread per thread
//! (launch calls, NVTX ranges / CPU ops). A flow arrow runs from each launch
//! call to the kernel or copy it launched, and each GPU gets a counter track
//! "GPU utilization (%)". Several profiles (the ranks of one job) go into one
//! trace, each rank's processes named and sorted as one group ("rank N").
//!
//! A profile is written in three calls, so that its kernel records can be
//! built and written chunk by chunk: [`Timeline::begin`] (track names,
//! ranges, launch calls, memory operations), [`Timeline::kernels_resolved`]
//! per chunk of records, [`Timeline::end`] (the utilization counters).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use rprof_gpu::usage::{DeviceUsage, KernelTime};
use rprof_model::Kernels;
use rprof_model::{Source, ThreadKey, Trace};

use rayon::prelude::*;

use super::writer::{Arg, ChromeWriter, Counts, Events, Slice};
use crate::model::{self, Models, known_bytes, known_flops};
use rprof_model::KernelRef;
use rprof_ops::Resolved;

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
        .map(|l| {
            let id = trace.thread_id(l.thread);
            (l.thread, (id.pid, id.tid))
        })
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
pub fn zero_ns(trace: &Trace) -> i64 {
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

/// The window of step `n` as `rprof steps` finds and aligns it
/// (`innermost`: the innermost enclosing range of each launch call); else
/// the error, naming the steps there are, for the caller to prefix with the
/// file's name.
pub fn step_window(trace: &Trace, innermost: &[Option<u32>], n: u64) -> Result<Window, String> {
    let report = crate::steps::compute(
        trace,
        &crate::steps::StepOptions { pattern: None },
        innermost,
    );
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
        (Some(a), Some(b)) => Err(format!(
            "no step {n}: the steps are {a} to {b} ({} of them, from {})",
            numbers.len(),
            report.detection
        )),
        _ => Err(format!(
            "no step {n}: {}",
            report
                .na
                .as_deref()
                .unwrap_or("the steps found have no number in their names")
        )),
    }
}

/// The time window to keep (absolute ns; `None`: unbounded).
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Keep events that end after this (absolute ns).
    pub from: Option<i64>,
    /// Keep events that start before this (absolute ns).
    pub to: Option<i64>,
    /// --from keeps an event that ends exactly at `from`; a step does not
    /// (it belongs to the step before), unless it has no duration.
    pub closed_start: bool,
}

impl Window {
    /// Whether `[start, end]` overlaps the window.
    pub fn keeps(&self, start: i64, end: i64) -> bool {
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

impl Ids {
    /// The trace's pid of `pid` in profile `rank`, as [`Ids::pid`] gave
    /// it before (callers run [`Ids::pid`] on it first, in the order the
    /// events are written: the ids are numbered in that order).
    fn get(&self, rank: Option<usize>, pid: u64) -> u64 {
        match rank {
            None => pid,
            Some(r) => self.pids.get(&(r, pid)).copied().unwrap_or(0),
        }
    }
}

/// Ranges, launch calls or copies per piece of events formatted on one
/// thread.
const PIECE: usize = 4096;
/// Kernels per piece: a chunk of records is 4096 kernels
/// (`rprof_trace::build::CHUNK`), written as several pieces.
const KERNEL_PIECE: usize = 1024;
/// Pieces formatted at once.
const BATCH: usize = 8;
/// Bytes a piece gathers before it stops: what the pieces of a batch hold
/// stays near `BATCH` × 2 MB whatever the events' sizes (a range's text can
/// be megabytes); the items a piece leaves are formatted once it is
/// written, a piece's worth at a time.
const PIECE_BYTES: usize = 2 << 20;

/// Write an event or two for each of `items` with `f` (which returns
/// whether it wrote any): the items are formatted in pieces of `piece` on
/// the pool's threads and the pieces added in order, so the document's
/// bytes are those of writing them one by one. `spare` keeps the pieces'
/// buffers from one call to the next. The number of items written.
///
/// Formatting is most of an export's CPU after the read (a gigabyte of
/// JSON at 1 M kernels); on one thread it left the other cores idle.
fn write_pieces<W: Write, T: Sync>(
    w: &mut ChromeWriter<W>,
    spare: &mut Vec<Events>,
    items: &[T],
    piece: usize,
    f: impl Fn(&mut Events, usize, &T) -> bool + Sync,
) -> io::Result<u64> {
    let mut n = 0;
    let piece = piece.max(1);
    for (b, batch) in items.chunks(piece * BATCH).enumerate() {
        let k = batch.len().div_ceil(piece);
        while spare.len() < k {
            spare.push(w.piece());
        }
        for ev in &mut spare[..k] {
            w.reuse(ev);
        }
        let first = b * piece * BATCH;
        // each piece: how many of its items it formatted, how many it wrote
        let done: Vec<(usize, u64)> = spare[..k]
            .par_iter_mut()
            .zip(batch.par_chunks(piece))
            .enumerate()
            .map(|(i, (ev, chunk))| {
                let base = first + i * piece;
                let (mut j, mut wrote) = (0, 0);
                while let Some(x) = chunk.get(j).filter(|_| ev.len() < PIECE_BYTES) {
                    wrote += u64::from(f(ev, base + j, x));
                    j += 1;
                }
                (j, wrote)
            })
            .collect();
        for (i, (ev, (j, wrote))) in spare.iter_mut().zip(done).enumerate() {
            n += wrote;
            w.append(ev)?;
            // what the piece left (its events were large): here, in turn
            let base = first + i * piece;
            let chunk = batch.chunks(piece).nth(i).unwrap_or_default();
            for (jj, x) in chunk.iter().enumerate().skip(j) {
                n += u64::from(f(ev, base + jj, x));
                if ev.len() >= PIECE_BYTES {
                    w.append(ev)?;
                }
            }
            w.append(ev)?;
        }
    }
    Ok(n)
}

/// Busy share per bucket of each GPU's kernels, as a counter track.
fn utilization<W: Write>(
    w: &mut ChromeWriter<W>,
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

/// What was written of one profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Kernels.
    pub kernels: u64,
    /// Memory copies and sets.
    pub memops: u64,
    /// Launch calls.
    pub launches: u64,
    /// NVTX ranges / CPU ops.
    pub ranges: u64,
}

/// One profile being written: between [`Timeline::begin`] and
/// [`Timeline::end`]. It holds no borrow of the trace, so that the caller
/// may drop what the CPU side needed once it is written (`export` drops
/// the ranges that enclose no launch call before attributing the
/// kernels).
pub struct Profile {
    rank: Option<usize>,
    window: Window,
    t: Tracks,
    flow_base: u64,
    first_memop_flow: u64,
    /// Kernels, memory operations, launch calls, ranges written.
    n: [u64; 4],
    /// Kernel records seen (flow ids).
    idx: u64,
    models: Models,
}

impl Profile {
    /// The op models' state, taken out to resolve the chunks on a thread
    /// of their own ([`Timeline::kernels_resolved`]); call before the first
    /// chunk.
    pub fn take_models(&mut self) -> Models {
        std::mem::take(&mut self.models)
    }
}

/// Streams profiles as one Chrome trace-event document to `W`.
pub struct Timeline<W: Write> {
    w: ChromeWriter<W>,
    ids: Ids,
    /// The buffers of the pieces formatted on other threads.
    spare: Vec<Events>,
}

impl<W: Write> Timeline<W> {
    /// Start the document; times are written relative to `zero_ns`.
    pub fn new(out: W, zero_ns: i64) -> io::Result<Timeline<W>> {
        Ok(Timeline {
            w: ChromeWriter::new(out, zero_ns)?,
            ids: Ids::default(),
            spare: Vec::new(),
        })
    }

    /// Write the next profiles' times relative to `zero_ns`.
    pub fn set_zero(&mut self, zero_ns: i64) {
        self.w.set_zero(zero_ns);
    }

    /// Counts of the events written so far.
    pub fn counts(&self) -> Counts {
        self.w.counts()
    }

    /// Close the document and return the output.
    pub fn finish(self) -> io::Result<W> {
        self.w.finish()
    }

    /// Start a profile (`rank`: its index when there are several, `None`
    /// for the only one): write its track names, ranges, launch calls and
    /// memory operations in `window`.
    pub fn begin(
        &mut self,
        trace: &Trace,
        rank: Option<usize>,
        window: Window,
    ) -> io::Result<Profile> {
        let w = &mut self.w;
        let ids = &mut self.ids;
        let spare = &mut self.spare;
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
        // (the ids of every process the events name, in the order they
        // are written: a profile of several numbers its processes so)
        if rank.is_some() {
            for r in trace
                .ranges
                .iter()
                .filter(|r| window.keeps(r.start_ns, r.end_ns))
            {
                ids.pid(rank, t.thread(trace, r.thread).0);
            }
            for l in trace
                .launches
                .iter()
                .filter(|l| window.keeps(l.start_ns, l.end_ns))
            {
                ids.pid(rank, trace.thread_id(l.thread).pid);
            }
            for m in trace
                .memops
                .iter()
                .filter(|m| window.keeps(m.start_ns, m.end_ns))
            {
                ids.pid(rank, t.gpu(m.device));
                if let Some(l) = m
                    .launch
                    .and_then(|i| trace.launches.get(i as usize))
                    .filter(|l| window.keeps(l.start_ns, l.end_ns))
                {
                    ids.pid(rank, trace.thread_id(l.thread).pid);
                }
            }
        }
        let ids_now: &Ids = ids;
        n[3] = write_pieces(w, spare, &trace.ranges, PIECE, |ev, _, r| {
            if !window.keeps(r.start_ns, r.end_ns) {
                return false;
            }
            let (pid, tid) = t.thread(trace, r.thread);
            let pid = ids_now.get(rank, pid);
            let domain = trace.domain_name(r.thread, r.domain);
            let args: Vec<(&str, Arg<'_>)> = domain
                .map(|d| vec![("domain", Arg::Str(d))])
                .unwrap_or_default();
            ev.slice(&Slice {
                pid,
                tid,
                name: trace.strings.get(r.text),
                cat: range_cat,
                start_ns: r.start_ns,
                dur_ns: r.end_ns - r.start_ns,
                args: &args,
            });
            true
        })?;
        n[2] = write_pieces(w, spare, &trace.launches, PIECE, |ev, _, l| {
            if !window.keeps(l.start_ns, l.end_ns) {
                return false;
            }
            let name = l.api.map_or("CUDA API call", |a| trace.strings.get(a));
            let id = trace.thread_id(l.thread);
            ev.slice(&Slice {
                pid: ids_now.get(rank, id.pid),
                tid: id.tid,
                name,
                cat: "cuda_api",
                start_ns: l.start_ns,
                dur_ns: l.end_ns - l.start_ns,
                args: &[("correlation", Arg::Int(i128::from(l.correlation)))],
            });
            true
        })?;

        // memory copies and sets, with their flows
        let first_memop_flow = flow_base + trace.kernels.len() as u64 + 1;
        n[1] = write_pieces(w, spare, &trace.memops, PIECE, |ev, j, m| {
            if !window.keeps(m.start_ns, m.end_ns) {
                return false;
            }
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
            let (pid, tid) = (ids_now.get(rank, t.gpu(m.device)), stream_tid(m.stream));
            ev.slice(&Slice {
                pid,
                tid,
                name,
                cat,
                start_ns: m.start_ns,
                dur_ns: m.end_ns - m.start_ns,
                args: &args,
            });
            if let Some(l) = m
                .launch
                .and_then(|i| trace.launches.get(i as usize))
                .filter(|l| window.keeps(l.start_ns, l.end_ns))
            {
                let id = first_memop_flow + j as u64;
                let lt = trace.thread_id(l.thread);
                ev.flow_start(id, ids_now.get(rank, lt.pid), lt.tid, l.start_ns);
                ev.flow_end(id, pid, tid, m.start_ns);
            }
            true
        })?;

        Ok(Profile {
            rank,
            window,
            t,
            flow_base,
            first_memop_flow,
            n,
            idx: 0,
            models: Models::new(),
        })
    }

    /// Write a chunk of the profile's kernel records (in start order), with
    /// the models' numbers: `resolved` is the chunk's backward lookup, run
    /// by the models [`Profile::take_models`] gave, on the chunks in order
    /// (on a thread of its own, beside the writing).
    pub fn kernels_resolved(
        &mut self,
        p: &mut Profile,
        recs: &Kernels<'_>,
        resolved: &[Resolved],
    ) -> io::Result<()> {
        let est = model::estimate(recs, resolved);
        let (t, rank, window, flow_base) = (&p.t, p.rank, p.window, p.flow_base);
        let first = p.idx;
        // when a kernel is written, and whether its flow is
        let kept = |r: &KernelRef<'_, '_>| match (r.start_ns, r.end_ns) {
            (Some(start), Some(end)) if window.keeps(start, end) => Some((
                start,
                end,
                r.launch_end_ns
                    .is_some_and(|le| r.launch_start_ns.is_some_and(|ls| window.keeps(ls, le))),
            )),
            _ => None,
        };
        // (the process ids in the order the events name them)
        if rank.is_some() {
            for r in recs.iter() {
                if let Some((_, _, flow)) = kept(&r) {
                    self.ids.pid(rank, t.gpu(r.device));
                    if let (Some(lp), Some(_), true) = (r.pid, r.launch_start_ns, flow) {
                        self.ids.pid(rank, lp);
                    }
                }
            }
        }
        let ids = &self.ids;
        let written = write_pieces(
            &mut self.w,
            &mut self.spare,
            recs.rows(),
            KERNEL_PIECE,
            |ev, j, row| {
                let r = recs.at(row);
                let (Some((start, end, flow)), Some(e)) = (kept(&r), est.get(j)) else {
                    return false;
                };
                let idx = first + j as u64 + 1;
                let (pid, tid) = (ids.get(rank, t.gpu(r.device)), stream_tid(r.stream));
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
                args.push(("dir", Arg::Str(r.dir.as_str())));
                if let Some(s) = r.stack().last() {
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
                ev.slice(&Slice {
                    pid,
                    tid,
                    name: &r.short_name,
                    cat: "kernel",
                    start_ns: start,
                    dur_ns: end - start,
                    args: &args,
                });
                if let (Some(lp), Some(ls), true) = (r.pid, r.launch_start_ns, flow) {
                    ev.flow_start(flow_base + idx, ids.get(rank, lp), r.tid, ls);
                    ev.flow_end(flow_base + idx, pid, tid, start);
                }
                true
            },
        )?;
        p.n[0] += written;
        p.idx = first + recs.rows().len() as u64;
        Ok(())
    }

    /// Finish a profile (of `trace`, the one [`Timeline::begin`] was
    /// given): its utilization counters. Returns what was written of it.
    pub fn end(&mut self, mut p: Profile, trace: &Trace) -> io::Result<Written> {
        // the op models' state (the forward kernels remembered for
        // backward lookups) is let go before the utilization tracks are
        // made: 0.1 GB at 3 M kernels, at the peak of `export`
        p.models = Models::default();
        utilization(&mut self.w, trace, &p.t, p.rank, &mut self.ids, p.window)?;
        self.ids.flow_base = p.first_memop_flow + trace.memops.len() as u64;
        Ok(Written {
            kernels: p.n[0],
            memops: p.n[1],
            launches: p.n[2],
            ranges: p.n[3],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items written in pieces (some events megabytes long, so that pieces
    /// stop at their byte bound and leave items to be written in turn;
    /// items skipped; several calls sharing the spare buffers) give the
    /// bytes and counts of writing each event in turn.
    #[test]
    fn pieces_write_what_one_by_one_writes() {
        let big = "x\"".repeat(1_500_000);
        let names: Vec<String> = (0..30_000)
            .map(|i| match i % 9_001 {
                0..=2 => big.clone(),
                _ => format!("range {i}"),
            })
            .collect();
        fn slice(name: &str, i: usize) -> Slice<'_> {
            Slice {
                pid: 1,
                tid: i as u64 % 7,
                name,
                cat: "nvtx",
                start_ns: i as i64 * 10,
                dur_ns: 5,
                args: &[],
            }
        }
        let keep = |i: usize| i % 5 != 3;
        let mut one = ChromeWriter::new(Vec::new(), 3).unwrap();
        let mut written = 0;
        for _ in 0..2 {
            for (i, name) in names.iter().enumerate() {
                if keep(i) {
                    one.slice(&slice(name, i)).unwrap();
                    one.flow_start(i as u64, 2, 3, 4).unwrap();
                    written += 1;
                }
            }
        }
        let mut pieces = ChromeWriter::new(Vec::new(), 3).unwrap();
        let mut spare = Vec::new();
        let mut n = 0;
        for piece in [PIECE, KERNEL_PIECE] {
            n += write_pieces(&mut pieces, &mut spare, &names, piece, |ev, i, name| {
                if !keep(i) {
                    return false;
                }
                ev.slice(&slice(name, i));
                ev.flow_start(i as u64, 2, 3, 4);
                true
            })
            .unwrap();
        }
        assert_eq!(n, written);
        assert_eq!(one.counts(), pieces.counts());
        assert!(spare.iter().all(|e| e.is_empty()));
        let (a, b) = (one.finish().unwrap(), pieces.finish().unwrap());
        assert!(a == b, "the documents differ");
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(
            v["traceEvents"].as_array().unwrap().len() as u64,
            2 * written
        );
    }
}
