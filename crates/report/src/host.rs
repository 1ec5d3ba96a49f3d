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
    v.extend(each_gpu_op(trace));
    v
}

/// Number `i` of [`gpu_ops`] without making the list: kernel `i`, else
/// copy or set `i - kernels`.
pub fn gpu_op(trace: &Trace, i: usize) -> Option<GpuOp> {
    let kernels = trace.kernels.len();
    match i.checked_sub(kernels) {
        None => trace.kernels.get(i).map(|k| GpuOp {
            start_ns: k.start_ns,
            end_ns: k.end_ns.max(k.start_ns),
            device: k.device,
            stream: k.stream,
            launch: k.launch.get(),
            op: OpRef::Kernel(i as u32),
        }),
        Some(m) => trace.memops.get(m).map(|o| GpuOp {
            start_ns: o.start_ns,
            end_ns: o.end_ns.max(o.start_ns),
            device: o.device,
            stream: o.stream,
            launch: o.launch,
            op: OpRef::Mem(m as u32),
        }),
    }
}

/// [`gpu_ops`] one at a time, for a view that needs each only once (at
/// 3 M kernels the list is 150 MB).
pub fn each_gpu_op(trace: &Trace) -> impl Iterator<Item = GpuOp> + '_ {
    (0..gpu_op_count(trace)).filter_map(|i| gpu_op(trace, i))
}

/// The length of [`gpu_ops`].
pub fn gpu_op_count(trace: &Trace) -> usize {
    trace.kernels.len() + trace.memops.len()
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
    match trace.range_meta.get(&r.text).and_then(|m| m.name) {
        // the operator's own name, kept as the profiler gave it (a user
        // annotation may well contain `, seq = `)
        Some(n) => trace.strings.get(n),
        None => rprof_model::stock::parse_head(trace.strings.get(r.text)).name,
    }
}

/// The ranges of each thread, sorted by start (then end descending, so an
/// outer range comes before an inner one starting at the same time).
///
/// Ranges already in attribution order (`rprof_trace::attribute` sorts
/// them by thread, start, end descending) are indexed without a copy or a
/// sort: each thread's list is then a run of the slice itself, which is
/// what lets `rprof report` share one sort between attribution and the
/// idle view.
pub struct ThreadRanges<'a> {
    ranges: &'a [Range],
    by_thread: BTreeMap<ThreadKey, Positions>,
}

/// One thread's ranges: a run of the (sorted) slice, or a sorted list of
/// indices.
enum Positions {
    Run(u32, u32),
    List(Vec<u32>),
}

impl Positions {
    fn len(&self) -> usize {
        match self {
            Positions::Run(lo, hi) => (hi - lo) as usize,
            Positions::List(v) => v.len(),
        }
    }

    fn get(&self, p: usize) -> u32 {
        match self {
            Positions::Run(lo, _) => lo + p as u32,
            Positions::List(v) => v[p],
        }
    }

    /// The first `n` positions' range indices.
    fn prefix(&self, n: usize) -> impl DoubleEndedIterator<Item = u32> + '_ {
        (0..n).map(move |p| self.get(p))
    }

    /// The number of leading positions whose range satisfies `f` (which
    /// must hold on a prefix).
    fn partition_point(&self, f: impl Fn(u32) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if f(self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

impl<'a> ThreadRanges<'a> {
    /// Index `ranges` by thread.
    pub fn new(ranges: &'a [Range]) -> ThreadRanges<'a> {
        let key = |r: &Range| (r.thread, r.start_ns, std::cmp::Reverse(r.end_ns));
        let sorted =
            ranges.len() < u32::MAX as usize && ranges.windows(2).all(|w| key(&w[0]) <= key(&w[1]));
        if sorted {
            let mut by_thread = BTreeMap::new();
            let mut lo = 0usize;
            while let Some(first) = ranges.get(lo) {
                let t = first.thread;
                let n = ranges[lo..].partition_point(|r| r.thread == t);
                by_thread.insert(t, Positions::Run(lo as u32, (lo + n) as u32));
                lo += n;
            }
            return ThreadRanges { ranges, by_thread };
        }
        let mut lists: BTreeMap<ThreadKey, Vec<u32>> = BTreeMap::new();
        for (i, r) in ranges.iter().enumerate() {
            lists.entry(r.thread).or_default().push(i as u32);
        }
        for v in lists.values_mut() {
            v.sort_by_key(|&i| {
                let r = &ranges[i as usize];
                (r.start_ns, std::cmp::Reverse(r.end_ns), i)
            });
        }
        ThreadRanges {
            ranges,
            by_thread: lists
                .into_iter()
                .map(|(t, v)| (t, Positions::List(v)))
                .collect(),
        }
    }

    /// Ranges of `thread` overlapping `[lo, hi)`, with the overlap in ns, in
    /// start order. Linear in the thread's ranges that start before `hi`.
    pub fn overlapping(&self, thread: ThreadKey, lo: i64, hi: i64) -> Vec<(u32, i64)> {
        let Some(v) = self.by_thread.get(&thread) else {
            return Vec::new();
        };
        let end = v.partition_point(|i| self.ranges[i as usize].start_ns < hi);
        v.prefix(end)
            .filter_map(|i| {
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
        let end = v.partition_point(|i| self.ranges[i as usize].start_ns <= t);
        v.prefix(end)
            .rev()
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

    /// The run (sorted input) and list (any order) indexes give the answers
    /// of a brute-force scan.
    #[test]
    fn sorted_and_unsorted_input_agree_with_a_scan() {
        let mut sorted = Vec::new();
        for t in 1..4u64 {
            for k in 0..40i64 {
                let s = (k * 7 + t as i64 * 3) % 50;
                sorted.push(r(t, s, s + 1 + (k * 13) % 30));
            }
        }
        sorted.sort_by_key(|x| (x.thread, x.start_ns, std::cmp::Reverse(x.end_ns)));
        let shuffled: Vec<Range> = sorted.iter().rev().cloned().collect();
        let n = sorted.len() as u32;
        let back = |i: u32| n - 1 - i;
        let a = ThreadRanges::new(&sorted);
        let b = ThreadRanges::new(&shuffled);
        assert!(matches!(a.by_thread.get(&1), Some(Positions::Run(..))));
        assert!(matches!(b.by_thread.get(&1), Some(Positions::List(..))));
        for t in 0..5u64 {
            for x in -1..85i64 {
                // innermost: latest start, then shortest, then lowest index
                let want = (0..n)
                    .filter(|&i| {
                        let q = &sorted[i as usize];
                        q.thread == t && q.start_ns <= x && q.end_ns > x
                    })
                    .min_by_key(|&i| {
                        let q = &sorted[i as usize];
                        (std::cmp::Reverse(q.start_ns), q.end_ns, i)
                    });
                assert_eq!(a.innermost_at(t, x), want);
                let got_b = b.innermost_at(t, x).map(back);
                let span = |i: u32| (sorted[i as usize].start_ns, sorted[i as usize].end_ns);
                assert_eq!(got_b.map(span), want.map(span));
                let mut want_ov: Vec<(i64, i64, i64)> = sorted
                    .iter()
                    .filter(|q| q.thread == t)
                    .filter_map(|q| {
                        let ov = q.end_ns.min(x + 9) - q.start_ns.max(x);
                        (ov > 0).then_some((q.start_ns, q.end_ns, ov))
                    })
                    .collect();
                want_ov.sort();
                for tr in [&a, &b] {
                    let mut got: Vec<(i64, i64, i64)> = tr
                        .overlapping(t, x, x + 9)
                        .iter()
                        .map(|&(i, ov)| {
                            let q = &tr.ranges[i as usize];
                            (q.start_ns, q.end_ns, ov)
                        })
                        .collect();
                    got.sort();
                    assert_eq!(got, want_ov);
                }
            }
        }
    }

    #[test]
    fn safe_escapes_controls() {
        assert_eq!(safe("a\nb\u{1b}[0m"), "a\\x0ab\\x1b[0m");
        assert_eq!(safe("plain"), "plain");
    }
}
