//! What the host was doing: the helpers `rprof steps`, `rprof idle` and
//! `rprof launch` share (ranges per thread, the innermost range at an
//! instant, GPU operations as one list, safe text for the terminal).

use std::collections::BTreeMap;

use rprof_model::{Range, ThreadKey, Trace};

/// A GPU operation: a kernel or a memory copy or set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpRef {
    /// Index into [`Trace::kernels`].
    Kernel(u32),
    /// Index into [`Trace::memops`].
    Mem(u32),
}

/// One GPU operation with what the views need of it.
#[derive(Clone, Copy, Debug)]
pub struct GpuOp {
    /// GPU start, ns.
    pub start_ns: i64,
    /// GPU end, ns (never before the start).
    pub end_ns: i64,
    /// Device ordinal.
    pub device: i64,
    /// Stream id.
    pub stream: i64,
    /// Launching call in [`Trace::launches`].
    pub launch: Option<u32>,
    /// Which table it is in.
    pub op: OpRef,
}

/// Every kernel, copy and set of the trace, in table order (kernels first).
pub fn gpu_ops(trace: &Trace) -> Vec<GpuOp> {
    let mut v = Vec::with_capacity(trace.kernels.len() + trace.memops.len());
    for (i, k) in trace.kernels.iter().enumerate() {
        v.push(GpuOp {
            start_ns: k.start_ns,
            end_ns: k.end_ns.max(k.start_ns),
            device: k.device,
            stream: k.stream,
            launch: k.launch,
            op: OpRef::Kernel(i as u32),
        });
    }
    for (i, m) in trace.memops.iter().enumerate() {
        v.push(GpuOp {
            start_ns: m.start_ns,
            end_ns: m.end_ns.max(m.start_ns),
            device: m.device,
            stream: m.stream,
            launch: m.launch,
            op: OpRef::Mem(i as u32),
        });
    }
    v
}

/// The name of a GPU operation.
pub fn op_name(trace: &Trace, op: OpRef) -> &str {
    match op {
        OpRef::Kernel(i) => trace
            .kernels
            .get(i as usize)
            .map_or("", |k| trace.strings.get(k.name)),
        OpRef::Mem(i) => trace
            .memops
            .get(i as usize)
            .map_or("", |m| trace.strings.get(m.name)),
    }
}

/// The name of a range as the host views use it: the operator's own name
/// (PyTorch profiler), or the NVTX text without the fields PyTorch's
/// markers append (`, seq = N`, `, op_id = M`, `, sizes = …`), so that
/// every call of one operator shares a name.
pub fn range_op_name<'t>(trace: &'t Trace, r: &Range) -> &'t str {
    rprof_model::stock::parse_head(trace.range_name(r)).name
}

/// The ranges of each thread, sorted by start (then end descending, so an
/// outer range comes before an inner one starting at the same time).
pub struct ThreadRanges<'a> {
    ranges: &'a [Range],
    by_thread: BTreeMap<ThreadKey, Vec<u32>>,
}

impl<'a> ThreadRanges<'a> {
    /// Index `ranges` by thread.
    pub fn new(ranges: &'a [Range]) -> ThreadRanges<'a> {
        let mut by_thread: BTreeMap<ThreadKey, Vec<u32>> = BTreeMap::new();
        for (i, r) in ranges.iter().enumerate() {
            by_thread.entry(r.thread).or_default().push(i as u32);
        }
        for v in by_thread.values_mut() {
            v.sort_by_key(|&i| {
                let r = &ranges[i as usize];
                (r.start_ns, std::cmp::Reverse(r.end_ns), i)
            });
        }
        ThreadRanges { ranges, by_thread }
    }

    /// Ranges of `thread` overlapping `[lo, hi)`, with the overlap in ns, in
    /// start order. Linear in the thread's ranges that start before `hi`.
    pub fn overlapping(&self, thread: ThreadKey, lo: i64, hi: i64) -> Vec<(u32, i64)> {
        let Some(v) = self.by_thread.get(&thread) else {
            return Vec::new();
        };
        let end = v.partition_point(|&i| self.ranges[i as usize].start_ns < hi);
        v[..end]
            .iter()
            .filter_map(|&i| {
                let r = &self.ranges[i as usize];
                let ov = r.end_ns.min(hi).saturating_sub(r.start_ns.max(lo));
                (ov > 0).then_some((i, ov))
            })
            .collect()
    }

    /// The innermost range of `thread` open at instant `t` (`start <= t <
    /// end`; the latest start wins, then the shortest).
    pub fn innermost_at(&self, thread: ThreadKey, t: i64) -> Option<u32> {
        let v = self.by_thread.get(&thread)?;
        let end = v.partition_point(|&i| self.ranges[i as usize].start_ns <= t);
        v[..end]
            .iter()
            .rev()
            .copied()
            .filter(|&i| self.ranges[i as usize].end_ns > t)
            .min_by_key(|&i| {
                let r = &self.ranges[i as usize];
                (std::cmp::Reverse(r.start_ns), r.end_ns, i)
            })
    }
}

/// Text from a trace made safe for a terminal and a one-line cell: control
/// characters are written as escapes (`\x0a`, `\x1b`: crate::escape).
pub fn safe(s: &str) -> String {
    crate::escape::escape_control(s).into_owned()
}

/// A thread as `pid/tid`.
pub fn thread_label(trace: &Trace, thread: ThreadKey) -> String {
    let t = trace.thread_id(thread);
    format!("{}/{}", t.pid, t.tid)
}

/// Output format of the host views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutFormat {
    /// Human-readable tables.
    Table,
    /// CSV.
    Csv,
    /// One JSON document.
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rprof_model::StrRef;

    fn r(thread: u64, s: i64, e: i64) -> Range {
        Range {
            start_ns: s,
            end_ns: e,
            thread,
            text: StrRef(0),
            domain: 0,
        }
    }

    #[test]
    fn innermost_and_overlap() {
        let ranges = vec![r(1, 0, 100), r(1, 10, 50), r(1, 20, 30), r(2, 0, 1000)];
        let tr = ThreadRanges::new(&ranges);
        assert_eq!(tr.innermost_at(1, 25), Some(2));
        assert_eq!(tr.innermost_at(1, 30), Some(1));
        assert_eq!(tr.innermost_at(1, 100), None);
        assert_eq!(tr.innermost_at(3, 1), None);
        assert_eq!(tr.overlapping(1, 40, 60), vec![(0, 20), (1, 10)]);
    }

    #[test]
    fn safe_escapes_controls() {
        assert_eq!(safe("a\nb\u{1b}[0m"), "a\\x0ab\\x1b[0m");
        assert_eq!(safe("plain"), "plain");
    }
}
