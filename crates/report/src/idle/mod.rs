//! `rprof idle`: the gaps between consecutive GPU operations on each stream,
//! classified as HTA does (host wait, kernel wait, other), and for the
//! largest gaps what the launching thread was doing and which
//! synchronisation calls overlapped them, with a named cause. Definitions:
//! docs/reports.md, "Idle".

use std::collections::BTreeMap;
use std::io::{self, Write};

use rayon::slice::ParallelSliceMut;
use rprof_model::{ApiCall, Trace};
use serde::Serialize;

use crate::host::{self, OutFormat, ThreadRanges, safe, thread_label};
use crate::text;

/// Thresholds.
#[derive(Clone, Debug)]
pub struct IdleOptions {
    /// Gaps shorter than this whose next operation was already launched are
    /// kernel waits (HTA's `consecutive_kernel_delay`, 30 µs).
    pub kernel_wait_ns: i64,
    /// How many of the largest gaps to explain (0: none).
    pub top: usize,
    /// Host ranges listed per explained gap.
    pub ranges_per_gap: usize,
}

impl Default for IdleOptions {
    fn default() -> IdleOptions {
        IdleOptions {
            kernel_wait_ns: 30_000,
            top: 10,
            ranges_per_gap: 5,
        }
    }
}

/// How a gap is classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GapClass {
    /// The next operation's launch call began after the previous operation
    /// ended: the GPU waited for the host.
    HostWait,
    /// Otherwise, and the gap is shorter than the threshold.
    KernelWait,
    /// Otherwise.
    Other,
}

impl GapClass {
    /// Name as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            GapClass::HostWait => "host_wait",
            GapClass::KernelWait => "kernel_wait",
            GapClass::Other => "other",
        }
    }
}

/// Idle time of one stream.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StreamIdle {
    /// Device ordinal.
    pub device: i64,
    /// Stream id.
    pub stream: i64,
    /// GPU operations (kernels, copies, sets).
    pub ops: u64,
    /// First start to last end, ns.
    pub span_ns: i64,
    /// Number of gaps.
    pub gaps: u64,
    /// Summed gaps, ns.
    pub idle_ns: i64,
    /// Of which host wait.
    pub host_wait_ns: i64,
    /// Of which kernel wait.
    pub kernel_wait_ns: i64,
    /// Of which other.
    pub other_ns: i64,
    /// `idle_ns / span_ns`.
    pub idle_share_of_span: Option<f64>,
    /// Gaps whose next operation has no known launch call (never host wait).
    pub gaps_without_launch: u64,
}

/// A host range open during a gap.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HostRange {
    /// Range (operator) name.
    pub name: String,
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// Overlap with the gap, ns.
    pub overlap_ns: i64,
}

/// A blocking API call overlapping a gap.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SyncCall {
    /// Function name.
    pub name: String,
    /// Calling thread, `pid/tid`.
    pub thread: String,
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// Overlap with the gap, ns.
    pub overlap_ns: i64,
    /// The innermost range open on the calling thread when the call began.
    pub called_from: Option<String>,
}

/// A CUPTI synchronisation record overlapping a gap.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SyncRecord {
    /// What was waited for (`stream`, `event`, `context`, …).
    pub kind: String,
    /// Stream, when recorded.
    pub stream: Option<i64>,
    /// Overlap with the gap, ns.
    pub overlap_ns: i64,
}

/// One explained gap.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Gap {
    /// Device ordinal.
    pub device: i64,
    /// Stream id.
    pub stream: i64,
    /// Previous operation's end (the latest end so far on the stream), ns.
    pub start_ns: i64,
    /// Next operation's start, ns.
    pub end_ns: i64,
    /// `end_ns − start_ns`.
    pub gap_ns: i64,
    /// Class.
    pub class: GapClass,
    /// The operation after the gap.
    pub next_op: String,
    /// Its launching thread, `pid/tid`.
    pub launch_thread: Option<String>,
    /// When its launch call began, ns.
    pub launch_start_ns: Option<i64>,
    /// Ranges open on the launching thread during the gap, largest overlap
    /// first.
    pub host_ranges: Vec<HostRange>,
    /// Blocking calls (synchronize, blocking copies and sets) of the
    /// launching process overlapping the gap.
    pub sync_calls: Vec<SyncCall>,
    /// CUPTI synchronisation records overlapping the gap.
    pub sync_records: Vec<SyncRecord>,
    /// The named cause.
    pub cause: String,
}

/// Totals over all streams.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Totals {
    /// Gaps.
    pub gaps: u64,
    /// Summed gaps, ns.
    pub idle_ns: i64,
    /// Host wait, ns.
    pub host_wait_ns: i64,
    /// Kernel wait, ns.
    pub kernel_wait_ns: i64,
    /// Other, ns.
    pub other_ns: i64,
}

/// The report.
#[derive(Clone, Debug, Serialize)]
pub struct IdleReport {
    /// Input file.
    pub input: String,
    /// The kernel-wait threshold, ns.
    pub kernel_wait_threshold_ns: i64,
    /// Per stream, by device then stream.
    pub streams: Vec<StreamIdle>,
    /// Over all streams.
    pub totals: Totals,
    /// The largest gaps, largest first.
    pub gaps: Vec<Gap>,
    /// Start of the first GPU operation, ns (the text output's time zero).
    pub first_op_ns: Option<i64>,
    /// Why there are no figures, when there are none.
    pub na: Option<String>,
    /// Caveats.
    pub notes: Vec<String>,
}

/// A gap before it is explained.
#[derive(Clone, Copy)]
struct RawGap {
    device: i64,
    stream: i64,
    start: i64,
    end: i64,
    class: GapClass,
    /// Index into the op list.
    op: usize,
}

/// Compute the report.
pub fn compute(trace: &Trace, opts: &IdleOptions) -> IdleReport {
    let mut report = IdleReport {
        input: trace.path.display().to_string(),
        kernel_wait_threshold_ns: opts.kernel_wait_ns,
        streams: Vec::new(),
        totals: Totals::default(),
        gaps: Vec::new(),
        first_op_ns: None,
        na: None,
        notes: trace.missing.clone(),
    };
    // the operations by number (`host::gpu_op`), not as a list of their
    // own: at 3 M kernels the list was 190 MB
    if host::gpu_op_count(trace) == 0 {
        report.na = Some("the trace has no GPU operations".into());
        return report;
    }
    let mut by_stream: BTreeMap<(i64, i64), Vec<u32>> = BTreeMap::new();
    for (i, op) in host::each_gpu_op(trace).enumerate() {
        report.first_op_ns = Some(
            report
                .first_op_ns
                .map_or(op.start_ns, |f| f.min(op.start_ns)),
        );
        by_stream
            .entry((op.device, op.stream))
            .or_default()
            .push(i as u32);
    }
    let mut raw: Vec<RawGap> = Vec::new();
    let keep = opts.top;
    for ((device, stream), idx) in by_stream {
        // one stream's (start, end, number), sorted: no two equal, so any
        // sort gives one order (the times copied beside the numbers: a
        // sort reading them from the trace cost a tenth of the view)
        let mut keyed: Vec<(i64, i64, u32)> = idx
            .iter()
            .filter_map(|&i| {
                let o = host::gpu_op(trace, i as usize)?;
                Some((o.start_ns, o.end_ns, i))
            })
            .collect();
        drop(idx);
        keyed.par_sort_unstable();
        let mut s = StreamIdle {
            device,
            stream,
            ops: keyed.len() as u64,
            ..StreamIdle::default()
        };
        let Some(&(first, mut last_end, _)) = keyed.first() else {
            continue;
        };
        for &(_, _, i) in &keyed[1..] {
            let Some(op) = host::gpu_op(trace, i as usize) else {
                continue;
            };
            if op.start_ns > last_end {
                let gap = op.start_ns.saturating_sub(last_end);
                let launch = op.launch.and_then(|l| trace.launches.get(l as usize));
                let class = match launch {
                    Some(l) if l.start_ns > last_end => GapClass::HostWait,
                    _ if gap < opts.kernel_wait_ns => GapClass::KernelWait,
                    _ => GapClass::Other,
                };
                if launch.is_none() {
                    s.gaps_without_launch += 1;
                }
                s.gaps += 1;
                s.idle_ns = s.idle_ns.saturating_add(gap);
                let slot = match class {
                    GapClass::HostWait => &mut s.host_wait_ns,
                    GapClass::KernelWait => &mut s.kernel_wait_ns,
                    GapClass::Other => &mut s.other_ns,
                };
                *slot = slot.saturating_add(gap);
                raw.push(RawGap {
                    device,
                    stream,
                    start: last_end,
                    end: op.start_ns,
                    class,
                    op: i as usize,
                });
                // only the largest `top` are explained: keep the list short
                // (a gap per operation otherwise)
                if raw.len() >= keep.saturating_mul(2).max(1024) {
                    largest(&mut raw, keep);
                }
            }
            last_end = last_end.max(op.end_ns);
        }
        s.span_ns = last_end.saturating_sub(first);
        s.idle_share_of_span = (s.span_ns > 0).then(|| s.idle_ns as f64 / s.span_ns as f64);
        let t = &mut report.totals;
        t.gaps += s.gaps;
        t.idle_ns = t.idle_ns.saturating_add(s.idle_ns);
        t.host_wait_ns = t.host_wait_ns.saturating_add(s.host_wait_ns);
        t.kernel_wait_ns = t.kernel_wait_ns.saturating_add(s.kernel_wait_ns);
        t.other_ns = t.other_ns.saturating_add(s.other_ns);
        report.streams.push(s);
    }
    if trace.launches.is_empty() {
        report.notes.push(
            "no launch calls in the trace: no gap can be host wait, and the host side of gaps is unknown"
                .into(),
        );
    }
    largest(&mut raw, keep);
    raw.sort_by_key(gap_order);
    let ranges = ThreadRanges::new(&trace.ranges);
    // in the calls' order (the launch calls are held apart from the others)
    let mut blocking: Vec<ApiCall> = trace
        .each_api_call()
        .filter(|c| c.kind.blocks_host())
        .collect();
    blocking.sort_unstable_by_key(ApiCall::order_key);
    for g in raw {
        // (every gap's op is one of the trace's)
        report
            .gaps
            .extend(explain(trace, &ranges, &blocking, g, opts));
    }
    report
}

/// The order of gaps in the report: the largest first; ties by device,
/// stream and time (a total order: on one stream, gaps start at distinct
/// times).
fn gap_order(g: &RawGap) -> (std::cmp::Reverse<i64>, i64, i64, i64) {
    (
        std::cmp::Reverse(g.end.saturating_sub(g.start)),
        g.device,
        g.stream,
        g.start,
    )
}

/// Keep the first `n` gaps in [`gap_order`] (in any order).
fn largest(raw: &mut Vec<RawGap>, n: usize) {
    if raw.len() > n {
        if n > 0 {
            raw.select_nth_unstable_by_key(n - 1, gap_order);
        }
        raw.truncate(n);
    }
}

fn explain(
    trace: &Trace,
    ranges: &ThreadRanges<'_>,
    blocking: &[ApiCall],
    g: RawGap,
    opts: &IdleOptions,
) -> Option<Gap> {
    let op = host::gpu_op(trace, g.op)?;
    let gap = g.end.saturating_sub(g.start);
    let launch = op.launch.and_then(|l| trace.launches.get(l as usize));
    let range_name = |i: u32| -> String {
        trace
            .ranges
            .get(i as usize)
            .map_or(String::new(), |r| trace.range_name(r).to_owned())
    };
    let mut host_ranges: Vec<(u32, i64)> = match launch {
        Some(l) => ranges.overlapping(l.thread, g.start, g.end),
        None => Vec::new(),
    };
    // the innermost range covering at least half the gap
    let busy_in = host_ranges
        .iter()
        .filter(|(_, ov)| ov.saturating_mul(2) >= gap)
        .max_by_key(|(i, _)| {
            let r = &trace.ranges[*i as usize];
            (
                r.start_ns,
                std::cmp::Reverse(r.end_ns),
                std::cmp::Reverse(*i),
            )
        })
        .map(|(i, _)| *i);
    host_ranges
        .sort_by_key(|&(i, ov)| (std::cmp::Reverse(ov), trace.ranges[i as usize].start_ns, i));
    let listed: Vec<HostRange> = host_ranges
        .iter()
        .take(opts.ranges_per_gap)
        .map(|&(i, ov)| {
            let r = &trace.ranges[i as usize];
            HostRange {
                name: range_name(i),
                start_ns: r.start_ns,
                end_ns: r.end_ns,
                overlap_ns: ov,
            }
        })
        .collect();
    let pid = launch.map(|l| trace.thread_id(l.thread).pid);
    let mut calls: Vec<(i64, SyncCall)> = blocking
        .iter()
        .take_while(|c| c.start_ns < g.end)
        .filter(|c| c.end_ns > g.start)
        .filter(|c| pid.is_none_or(|p| trace.thread_id(c.thread).pid == p))
        .map(|c| {
            let ov = c.end_ns.min(g.end).saturating_sub(c.start_ns.max(g.start));
            (
                ov,
                SyncCall {
                    name: trace.strings.get(c.name).to_owned(),
                    thread: thread_label(trace, c.thread),
                    start_ns: c.start_ns,
                    end_ns: c.end_ns,
                    overlap_ns: ov,
                    called_from: ranges.innermost_at(c.thread, c.start_ns).map(range_name),
                },
            )
        })
        .collect();
    calls.sort_by_key(|(ov, c)| (std::cmp::Reverse(*ov), c.start_ns));
    let records: Vec<SyncRecord> = trace
        .syncs
        .iter()
        .filter(|s| s.start_ns < g.end && s.end_ns > g.start)
        .filter(|s| s.device.is_none_or(|d| d == g.device))
        .filter(|s| s.pid.is_none() || pid.is_none() || s.pid == pid)
        .take(opts.ranges_per_gap)
        .map(|s| SyncRecord {
            kind: s.kind.as_str().to_owned(),
            stream: s.stream,
            overlap_ns: s.end_ns.min(g.end).saturating_sub(s.start_ns.max(g.start)),
        })
        .collect();
    let cause = match calls.first() {
        Some((ov, c)) if ov.saturating_mul(2) >= gap => match &c.called_from {
            Some(f) => format!("blocked in {} called from `{}`", c.name, f),
            None => format!("blocked in {} (outside any range)", c.name),
        },
        _ => match (g.class, launch, busy_in) {
            (GapClass::KernelWait, _, _) => {
                "kernel wait: the next operation was already launched (GPU-side launch latency)"
                    .to_owned()
            }
            (_, None, _) => "unknown: the next operation has no launch call".to_owned(),
            (_, Some(_), Some(r)) => {
                let outer = &trace.ranges[r as usize];
                let inner = largest_inside(trace, &host_ranges, |x| {
                    x != r
                        && trace.ranges[x as usize].start_ns >= outer.start_ns
                        && trace.ranges[x as usize].end_ns <= outer.end_ns
                });
                match inner {
                    Some((x, ov)) => format!(
                        "host busy in `{}`; largest range inside it during the gap: `{}` ({} ns)",
                        range_name(r),
                        range_name(x),
                        ov
                    ),
                    None => format!("host busy in `{}`", range_name(r)),
                }
            }
            (GapClass::HostWait, Some(l), None) => {
                match largest_inside(trace, &host_ranges, |_| true) {
                    Some((x, ov)) => format!(
                        "host busy outside any range on thread {} for most of the gap; largest range: `{}` ({} ns)",
                        thread_label(trace, l.thread),
                        range_name(x),
                        ov
                    ),
                    None => format!(
                        "host busy outside any range on thread {}",
                        thread_label(trace, l.thread)
                    ),
                }
            }
            (_, Some(_), None) => match records.first() {
                Some(r) => format!("GPU-side wait ({} synchronisation)", r.kind),
                None => "launched before the gap: waiting on other GPU work (a stream or event dependency)".to_owned(),
            },
        },
    };
    Some(Gap {
        device: g.device,
        stream: g.stream,
        start_ns: g.start,
        end_ns: g.end,
        gap_ns: gap,
        class: g.class,
        next_op: host::op_name(trace, op.op).to_owned(),
        launch_thread: launch.map(|l| thread_label(trace, l.thread)),
        launch_start_ns: launch.map(|l| l.start_ns),
        host_ranges: listed,
        sync_calls: calls
            .into_iter()
            .take(opts.ranges_per_gap)
            .map(|(_, c)| c)
            .collect(),
        sync_records: records,
        cause,
    })
}

/// Of `ranges` (with their overlaps) those `keep` accepts, the one with the
/// largest overlap (ties: the earlier start, then the lower index).
fn largest_inside(
    trace: &Trace,
    ranges: &[(u32, i64)],
    keep: impl Fn(u32) -> bool,
) -> Option<(u32, i64)> {
    ranges
        .iter()
        .filter(|(i, _)| keep(*i))
        .min_by_key(|(i, ov)| {
            (
                std::cmp::Reverse(*ov),
                trace.ranges[*i as usize].start_ns,
                *i,
            )
        })
        .copied()
}

/// Write the report.
pub fn write<W: Write>(
    w: &mut W,
    r: &IdleReport,
    format: OutFormat,
    name_width: usize,
) -> io::Result<()> {
    match format {
        OutFormat::Json => {
            serde_json::to_writer_pretty(&mut *w, r).map_err(io::Error::other)?;
            writeln!(w)
        }
        OutFormat::Csv => {
            let mut c = csv::Writer::from_writer(w);
            c.write_record([
                "device",
                "stream",
                "ops",
                "span_ns",
                "gaps",
                "idle_ns",
                "host_wait_ns",
                "kernel_wait_ns",
                "other_ns",
                "idle_share_of_span",
                "gaps_without_launch",
            ])?;
            for s in &r.streams {
                c.write_record([
                    s.device.to_string(),
                    s.stream.to_string(),
                    s.ops.to_string(),
                    s.span_ns.to_string(),
                    s.gaps.to_string(),
                    s.idle_ns.to_string(),
                    s.host_wait_ns.to_string(),
                    s.kernel_wait_ns.to_string(),
                    s.other_ns.to_string(),
                    s.idle_share_of_span
                        .map_or(String::new(), |v| format!("{v:.6}")),
                    s.gaps_without_launch.to_string(),
                ])?;
            }
            c.flush()
        }
        OutFormat::Table => write_table(w, r, name_width),
    }
}

fn write_table<W: Write>(w: &mut W, r: &IdleReport, name_width: usize) -> io::Result<()> {
    writeln!(w, "{}: GPU idle time per stream", safe(&r.input))?;
    if let Some(na) = &r.na {
        writeln!(w, "idle: na ({na})")?;
        return Ok(());
    }
    let mut t = text::table(
        &[
            "device",
            "stream",
            "ops",
            "span ms",
            "gaps",
            "idle ms",
            "idle%",
            "host wait ms",
            "kernel wait ms",
            "other ms",
        ],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    for s in &r.streams {
        t.add_row(vec![
            s.device.to_string(),
            s.stream.to_string(),
            s.ops.to_string(),
            text::ms(s.span_ns),
            s.gaps.to_string(),
            text::ms(s.idle_ns),
            text::pct(s.idle_share_of_span, 1),
            text::ms(s.host_wait_ns),
            text::ms(s.kernel_wait_ns),
            text::ms(s.other_ns),
        ]);
    }
    let tot = &r.totals;
    t.add_row(vec![
        "all".into(),
        String::new(),
        String::new(),
        String::new(),
        tot.gaps.to_string(),
        text::ms(tot.idle_ns),
        String::new(),
        text::ms(tot.host_wait_ns),
        text::ms(tot.kernel_wait_ns),
        text::ms(tot.other_ns),
    ]);
    w.write_all(text::render(&t).as_bytes())?;
    writeln!(
        w,
        "idle% = the stream's idle time / its span (first op start to last op end). host wait: the next op's launch call began after the previous op ended; kernel wait: otherwise and the gap < {} us; other: the rest.",
        r.kernel_wait_threshold_ns as f64 / 1000.0
    )?;
    if !r.gaps.is_empty() {
        writeln!(w, "\nlargest gaps (times from the first GPU operation):")?;
    }
    for (k, g) in r.gaps.iter().enumerate() {
        writeln!(
            w,
            "{:>3}. {} ms on device {} stream {} at +{} ms ({}), before {}",
            k + 1,
            text::ms(g.gap_ns),
            g.device,
            g.stream,
            text::ms(g.start_ns.saturating_sub(r.first_op_ns.unwrap_or(0))),
            g.class.as_str(),
            text::clip(&safe(&g.next_op), name_width)
        )?;
        writeln!(w, "     cause: {}", safe(&g.cause))?;
        if let Some(t) = &g.launch_thread {
            let names: Vec<String> = g
                .host_ranges
                .iter()
                .map(|h| {
                    format!(
                        "{} ({} ms)",
                        text::clip(&safe(&h.name), name_width),
                        text::ms(h.overlap_ns)
                    )
                })
                .collect();
            writeln!(
                w,
                "     launching thread {}: {}",
                t,
                if names.is_empty() {
                    "no range open".to_owned()
                } else {
                    names.join("; ")
                }
            )?;
        }
        for c in &g.sync_calls {
            writeln!(
                w,
                "     sync: {} on {} ({} ms of the gap){}",
                safe(&c.name),
                c.thread,
                text::ms(c.overlap_ns),
                c.called_from.as_ref().map_or(String::new(), |f| format!(
                    " from {}",
                    text::clip(&safe(f), name_width)
                ))
            )?;
        }
        for s in &g.sync_records {
            writeln!(
                w,
                "     CUPTI sync record: {} ({} ms of the gap)",
                s.kind,
                text::ms(s.overlap_ns)
            )?;
        }
    }
    for n in &r.notes {
        writeln!(w, "note: {}", safe(n))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pruning the gap list as it grows keeps exactly the gaps a full sort
    /// of every gap would put first.
    #[test]
    fn pruned_largest_gaps_match_a_full_sort() {
        let gaps: Vec<(i64, i64, i64, i64)> = (0..5000i64)
            .map(|i| (i % 3, i % 5, i * 10, i * 10 + (i * 7919) % 97))
            .collect();
        let raw_of = |&(device, stream, start, end): &(i64, i64, i64, i64)| RawGap {
            device,
            stream,
            start,
            end,
            class: GapClass::Other,
            op: 0,
        };
        for keep in [0usize, 1, 10, 700] {
            let mut pruned = Vec::new();
            for g in &gaps {
                pruned.push(raw_of(g));
                if pruned.len() >= keep.saturating_mul(2).max(1024) {
                    largest(&mut pruned, keep);
                }
            }
            largest(&mut pruned, keep);
            pruned.sort_by_key(gap_order);
            let mut want = gaps.clone();
            want.sort_by_key(|&(d, s, a, b)| (std::cmp::Reverse(b - a), d, s, a));
            want.truncate(keep);
            let got: Vec<(i64, i64, i64, i64)> = pruned
                .iter()
                .map(|g| (g.device, g.stream, g.start, g.end))
                .collect();
            assert_eq!(got, want, "keep {keep}");
        }
    }
}
