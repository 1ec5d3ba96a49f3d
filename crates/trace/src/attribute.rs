//! Which NVTX ranges enclose each launch call.
//!
//! A range encloses a kernel when it encloses the kernel's CPU launch call on
//! the same thread, strictly: `range.start < call.start` and `range.end >
//! call.end` (PyProf's test, semantics §3.6). Ranges come outermost first:
//! by start, then by end descending (so of two ranges pushed in the same
//! nanosecond the outer one is first), then in file order.
//!
//! Instead of PyProf's one query per kernel, each thread's ranges and launch
//! calls are sorted once and swept together, threads in parallel.
//!
//! The lists are stored as shared stacks: a tree of nodes (range, parent)
//! and one node per launch, the innermost of its list. N kernels under the
//! same N nested ranges cost O(N) memory, not O(N²) (a real capture wraps
//! every kernel in 702 nested markers). While the open ranges of a thread
//! are properly nested (each ends no later than the one around it), the
//! ranges enclosing a launch are a prefix of them, found by binary search
//! (a range that ended before the next one opens is closed first, so
//! siblings nest too); once they are not, the open ranges are kept
//! ordered by end. Either way a
//! launch costs O(log n) plus its own enclosing ranges when they are not
//! already a shared prefix: N open ranges overlapping N launches that
//! enclose none cost O(N log N), not O(N²).

use rayon::prelude::*;

use std::collections::BTreeSet;
use std::ops::Bound::{Excluded, Unbounded};

use crate::FastMap as HashMap;
use crate::model::{Launch, Range, Trace};

/// No node: the empty list.
const ROOT: u32 = u32::MAX;

/// Enclosing ranges per launch call, as indices into the trace's ranges,
/// outermost first, stored as shared stacks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Enclosing {
    /// (range index, parent node or [`ROOT`]).
    nodes: Vec<(u32, u32)>,
    /// The innermost node of each launch's list, or [`ROOT`].
    launch_node: Vec<u32>,
}

impl Enclosing {
    /// The ranges enclosing launch `launch`, outermost first.
    pub fn of(&self, launch: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut n = self
            .launch_node
            .get(launch as usize)
            .copied()
            .unwrap_or(ROOT);
        while let Some(&(range, parent)) = self.nodes.get(n as usize) {
            out.push(range);
            n = parent;
        }
        out.reverse();
        out
    }

    /// How many ranges enclose launch `launch`.
    pub fn depth(&self, launch: u32) -> usize {
        let mut d = 0;
        let mut n = self
            .launch_node
            .get(launch as usize)
            .copied()
            .unwrap_or(ROOT);
        while let Some(&(_, parent)) = self.nodes.get(n as usize) {
            d += 1;
            n = parent;
        }
        d
    }

    /// True when no range encloses launch `launch`.
    pub fn is_empty_for(&self, launch: u32) -> bool {
        self.launch_node
            .get(launch as usize)
            .is_none_or(|&n| n == ROOT)
    }

    /// The innermost range enclosing launch `launch`.
    pub fn innermost(&self, launch: u32) -> Option<u32> {
        let n = *self.launch_node.get(launch as usize)?;
        self.nodes.get(n as usize).map(|&(r, _)| r)
    }

    /// The stack node of launch `launch`'s list (`None`: no range encloses
    /// it). Launches with the same node have the same list.
    pub fn node(&self, launch: u32) -> Option<u32> {
        self.launch_node
            .get(launch as usize)
            .copied()
            .filter(|&n| n != ROOT)
    }

    /// Number of launches covered.
    pub fn len(&self) -> usize {
        self.launch_node.len()
    }

    /// True when no launches are covered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stack nodes stored (for measurements: linear in the input when
    /// ranges nest).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
}

/// A launch, with the first keys of its order copied beside it so that
/// sorting reads memory in order instead of jumping through the trace: its
/// thread's rank among the launching threads (ranks follow the threads'
/// keys, so the order is the threads'), its start and its index. 16 bytes:
/// a copy of the thread key and the end too made the list 128 MB at 3 M
/// kernels, at `report`'s peak; the end is read from the launch where the
/// sort needs it (two calls of one thread with one start) and in the sweep,
/// which reads the launches nearly in order.
#[derive(Clone, Copy)]
struct Entry {
    start_ns: i64,
    rank: u32,
    index: u32,
}

/// The calls of `launches` that `wanted` marks (all of them for `None`)
/// as [`Entry`]s, in launch order.
fn entries(launches: &[Launch], wanted: Option<&[bool]>) -> Vec<Entry> {
    let mut threads: Vec<u64> = launches
        .iter()
        .map(|l| l.thread)
        .collect::<crate::FastSet<u64>>()
        .into_iter()
        .collect();
    threads.sort_unstable();
    let rank: HashMap<u64, u32> = threads
        .iter()
        .enumerate()
        .map(|(i, &t)| (t, i as u32))
        .collect();
    let mut last = None;
    launches
        .iter()
        .enumerate()
        .filter(|&(i, _)| is_wanted(wanted, i))
        .map(|(i, l)| {
            // consecutive launches mostly come from one thread
            let r = match last {
                Some((t, r)) if t == l.thread => r,
                _ => {
                    let r = rank.get(&l.thread).copied().unwrap_or(u32::MAX);
                    last = Some((l.thread, r));
                    r
                }
            };
            Entry {
                start_ns: l.start_ns,
                rank: r,
                index: i as u32,
            }
        })
        .collect()
}

/// Whether `wanted` (a mark per launch; `None`: every launch) marks launch
/// `i`.
fn is_wanted(wanted: Option<&[bool]>, i: usize) -> bool {
    wanted.is_none_or(|w| w.get(i).copied().unwrap_or(false))
}

/// A mark per launch call of `trace`: true for those that launched one of
/// its kernels; `None` when no copy or set has a call, as when none was
/// read (every call then launched a kernel). For the callers that build
/// records of kernels alone: the calls that launched only copies and sets
/// (a quarter of the calls of the 3 M-kernel benchmark) then neither keep
/// ranges as read ([`LaunchCover::of`]) nor are attributed
/// ([`attribute_of`]).
pub fn kernel_launches(trace: &Trace) -> Option<Vec<bool>> {
    if trace.memops.iter().all(|m| m.launch.is_none()) {
        return None;
    }
    let mut wanted = vec![false; trace.launches.len()];
    for l in trace.kernels.iter().filter_map(|k| k.launch.get()) {
        if let Some(w) = wanted.get_mut(l as usize) {
            *w = true;
        }
    }
    Some(wanted)
}

/// [`attribute`] for callers that use the ranges only through the returned
/// lists (building records): the ranges that enclose no launch call are
/// dropped first, and their number returned. On a large export most ranges
/// enclose no call (56 % on the 1 M-kernel benchmark: operators that
/// launched nothing, and their parents); dropping them before the sort
/// saves their memory at the peak (150 MB of 2 GB at 3 M kernels) and
/// their share of the sort. The kept ranges keep their relative order, so
/// the lists name the same ranges as [`attribute`] over all of them would,
/// in the same order.
pub fn attribute_used(launches: &[Launch], ranges: &mut Vec<Range>) -> (Enclosing, u64) {
    attribute_used_of(launches, None, ranges)
}

/// [`attribute_used`] of the launches `wanted` marks, as
/// [`attribute_of`]: the ranges that enclose none of them are dropped.
pub fn attribute_used_of(
    launches: &[Launch],
    wanted: Option<&[bool]>,
    ranges: &mut Vec<Range>,
) -> (Enclosing, u64) {
    let dropped = drop_unused(launches, wanted, ranges);
    (attribute_of(launches, wanted, ranges), dropped)
}

/// Drop the ranges that enclose no launch call by [`attribute`]'s rule
/// ([`LaunchCover::encloses`]); the number dropped. (Its own list of calls,
/// freed before [`attribute`] makes its own: holding one list across both
/// cost more at the peak than making it twice.)
fn drop_unused(launches: &[Launch], wanted: Option<&[bool]>, ranges: &mut Vec<Range>) -> u64 {
    let cover = LaunchCover::of(launches, wanted);
    let mut keep = vec![false; ranges.len()];
    keep.par_chunks_mut(KEEP_CHUNK)
        .zip(ranges.par_chunks(KEEP_CHUNK))
        .for_each(|(keep, ranges)| {
            let mut hints = CoverHints::default();
            for (k, r) in keep.iter_mut().zip(ranges) {
                *k = cover
                    .encloses(r.thread, r.start_ns, r.end_ns, &mut hints)
                    .is_some_and(|e| e);
            }
        });
    drop(cover);
    let before = ranges.len();
    let mut flags = keep.iter();
    ranges.retain(|_| flags.next().copied().unwrap_or(true));
    // the dropped ranges' memory is returned, not kept as spare capacity
    ranges.shrink_to_fit();
    (before - ranges.len()) as u64
}

/// The launch calls of a trace, arranged to answer quickly whether a range
/// encloses one of them by [`attribute`]'s rule: for [`attribute_used`],
/// and for a reader that drops such ranges as it reads them (their texts
/// are then never stored).
///
/// 16 bytes a call: the calls are grouped by thread (each thread's
/// number is stored once, not with every call), and each call's end is
/// replaced in place by the least end from it to its thread's last call,
/// which is all the answer needs. (The cover lives through the whole NVTX
/// read of the reports that drop ranges, at their peak: 32 bytes a call
/// held 126 MB at 3 M kernels.)
#[derive(Debug, Default)]
pub struct LaunchCover {
    /// Each thread that launched, ascending, with where its calls begin
    /// in `calls` (they end where the next thread's begin).
    threads: Vec<(u64, usize)>,
    /// Each thread's calls, by start then end, as (start, the least end
    /// from this call to the thread's last).
    calls: Vec<(i64, i64)>,
}

impl LaunchCover {
    /// The cover of `launches`.
    pub fn new(launches: &[Launch]) -> LaunchCover {
        LaunchCover::of(launches, None)
    }

    /// The cover of the launches `wanted` marks (a mark per launch; `None`:
    /// all of them), as [`attribute_of`] takes them.
    pub fn of(launches: &[Launch], wanted: Option<&[bool]>) -> LaunchCover {
        let launches = || {
            launches
                .iter()
                .enumerate()
                .filter(move |&(i, _)| is_wanted(wanted, i))
                .map(|(_, l)| l)
        };
        // calls per thread, then where each thread's calls begin
        let mut at: HashMap<u64, usize> = HashMap::default();
        let mut n = 0;
        for l in launches() {
            *at.entry(l.thread).or_default() += 1;
            n += 1;
        }
        let mut threads: Vec<(u64, usize)> = at.iter().map(|(&t, &n)| (t, n)).collect();
        threads.sort_unstable();
        let mut begin = 0;
        for (thread, n) in &mut threads {
            at.insert(*thread, begin);
            begin += std::mem::replace(n, begin);
        }
        // each call into its thread's part, then each part sorted
        let mut calls = vec![(0i64, 0i64); n];
        for l in launches() {
            if let Some(i) = at.get_mut(&l.thread) {
                if let Some(slot) = calls.get_mut(*i) {
                    *slot = (l.start_ns, l.end_ns);
                }
                *i += 1;
            }
        }
        let mut rest = calls.as_mut_slice();
        for part in threads.windows(2).map(|w| w[1].1 - w[0].1) {
            let (this, next) = rest.split_at_mut(part.min(rest.len()));
            this.par_sort_unstable();
            rest = next;
        }
        rest.par_sort_unstable();
        // the least end from each call to its thread's last, from the back
        for (k, &(_, b)) in threads.iter().enumerate() {
            let e = threads.get(k + 1).map_or(calls.len(), |t| t.1);
            for i in (b..e.saturating_sub(1)).rev() {
                calls[i].1 = calls[i].1.min(calls[i + 1].1);
            }
        }
        LaunchCover { threads, calls }
    }

    /// Whether a range of `thread` from `start` to `end` encloses a launch
    /// call (some call of the thread starts after `start` and ends before
    /// `end`); `None` when the thread launched nothing.
    pub fn encloses(
        &self,
        thread: u64,
        start: i64,
        end: i64,
        hints: &mut CoverHints,
    ) -> Option<bool> {
        // the first call of the thread that starts after the range
        let (part, j) = hints.search(self, thread, start)?;
        Some(part.get(j).is_some_and(|&(_, least)| least < end))
    }

    /// The calls of the `k`-th thread.
    fn part(&self, k: usize) -> &[(i64, i64)] {
        let b = self.threads.get(k).map_or(0, |t| t.1);
        let e = self.threads.get(k + 1).map_or(self.calls.len(), |t| t.1);
        self.calls.get(b..e).unwrap_or_default()
    }
}

/// Ranges per piece of [`drop_unused`]'s parallel search.
const KEEP_CHUNK: usize = 1 << 14;

/// Where [`LaunchCover::encloses`]'s last searches of a few threads
/// ended, to search near there first (one per searching thread). Ranges
/// come in table order, which is near time order (nsys
/// writes a range when it closes), so the next range of a thread usually
/// finds its call a few places from the last one's: a galloping search
/// from there reads a few cached entries where a binary search over the
/// whole list of calls misses the cache about ten times.
#[derive(Debug, Default)]
pub struct CoverHints {
    /// (thread, its place in the cover's threads or `usize::MAX` for a
    /// thread that launched nothing, position in its calls), most
    /// recently used first.
    last: [(u64, usize, usize); 4],
    used: usize,
}

impl CoverHints {
    /// The calls of `thread` in `cover` and the first of them that starts
    /// after `start` (`partition_point`'s answer); `None` when the thread
    /// launched nothing.
    fn search<'c>(
        &mut self,
        cover: &'c LaunchCover,
        thread: u64,
        start: i64,
    ) -> Option<(&'c [(i64, i64)], usize)> {
        let slot = self.last[..self.used].iter().position(|h| h.0 == thread);
        let (k, from) = match slot {
            Some(h) => (self.last[h].1, Some(self.last[h].2)),
            None => {
                let k = cover
                    .threads
                    .binary_search_by_key(&thread, |t| t.0)
                    .unwrap_or(usize::MAX);
                (k, None)
            }
        };
        let found = (k != usize::MAX).then(|| {
            let part = cover.part(k);
            let j = match from {
                Some(from) => gallop(part.len(), from, |i| part[i].0 <= start),
                None => part.partition_point(|c| c.0 <= start),
            };
            (part, j)
        });
        // move (or put) the thread first
        let end = slot.unwrap_or(self.used.min(self.last.len() - 1));
        self.last.copy_within(0..end, 1);
        self.last[0] = (thread, k, found.map_or(0, |f| f.1));
        self.used = (self.used + usize::from(slot.is_none())).min(self.last.len());
        found
    }
}

/// `partition_point` over `0..n` for a predicate true on a prefix,
/// starting from the guess `from`: steps of 1, 2, 4, … away from it until
/// the answer is bracketed, then a binary search within the bracket.
fn gallop(n: usize, from: usize, before: impl Fn(usize) -> bool) -> usize {
    let from = from.min(n);
    // the answer lies in lo..=hi
    let (mut lo, mut hi);
    if from < n && before(from) {
        // forwards: the answer is past `from`
        lo = from + 1;
        let mut step = 1;
        loop {
            let probe = from.saturating_add(step);
            if probe >= n {
                hi = n;
                break;
            }
            if !before(probe) {
                hi = probe;
                break;
            }
            lo = probe + 1;
            step *= 2;
        }
    } else {
        // backwards: the answer is at or before `from`
        hi = from;
        lo = 0;
        let mut step = 1;
        while step <= from {
            let probe = from - step;
            if before(probe) {
                lo = probe + 1;
                break;
            }
            hi = probe;
            step *= 2;
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Sort `ranges` in place into the order [`attribute`] leaves them in (per
/// thread, outermost first: start, then end descending, then text handle),
/// for a view that numbers ranges as the attributing views do without
/// needing the lists.
pub fn sort_ranges(ranges: &mut [Range]) {
    ranges
        .par_sort_unstable_by_key(|r| (r.thread, r.start_ns, std::cmp::Reverse(r.end_ns), r.text));
}

/// Sort `ranges` in place into attribution order (per thread, outermost
/// first: start, then end descending, then text handle, i.e. file order),
/// then attribute every
/// launch to the ranges enclosing it. The returned indices refer to the
/// sorted `ranges`. Sorting in place costs no memory beyond the ranges
/// themselves, which matters at tens of millions of ranges.
pub fn attribute(launches: &[Launch], ranges: &mut [Range]) -> Enclosing {
    attribute_of(launches, None, ranges)
}

/// [`attribute`] of the launches `wanted` marks (a mark per launch;
/// `None`: all of them). The others have no list: the lists of the calls
/// that launched only copies and sets are never read by a caller that
/// builds records of kernels alone ([`kernel_launches`]).
pub fn attribute_of(
    launches: &[Launch],
    wanted: Option<&[bool]>,
    ranges: &mut [Range],
) -> Enclosing {
    sort_ranges(ranges);
    let calls = entries(launches, wanted);
    let (ls, per_group) = sweep_threads::<_, true>(launches, calls, ranges);
    // the sorted calls as bare positions before the lists are joined: the
    // copies (32 bytes a call) were 128 MB at the peak of `report` at 3 M
    // kernels. Consumed, not borrowed: a shadowed list lives to the end of
    // the function, and its 16 bytes a call were still held while the
    // lists were joined (7-16 MB at the peak of `summary` at 3 M kernels)
    let ls: Vec<u32> = ls.into_iter().map(|c| c.index()).collect();
    let total: usize = per_group.iter().map(|s| s.nodes.len()).sum();
    let mut nodes: Vec<(u32, u32)> = Vec::new();
    let mut launch_node = vec![ROOT; launches.len()];
    let mut rest = ls.as_slice();
    for mut st in per_group {
        // each thread's launches follow the last thread's in `ls`
        let (g, r) = rest.split_at(st.per_launch.len().min(rest.len()));
        rest = r;
        let offset = nodes.len() as u32;
        let shift = |n: u32| if n == ROOT { ROOT } else { n + offset };
        if nodes.is_empty() {
            // the first thread's nodes need no shift: its list becomes the
            // whole list, rather than being copied into one (at 3 M
            // kernels, 115 MB more at the peak of `export` and `report`)
            nodes = std::mem::take(&mut st.nodes);
            nodes.reserve_exact(total - nodes.len());
        } else {
            nodes.extend(st.nodes.iter().map(|&(r, p)| (r, shift(p))));
        }
        for (&l, &n) in g.iter().zip(&st.per_launch) {
            launch_node[l as usize] = shift(n);
        }
    }
    Enclosing { nodes, launch_node }
}

/// Sort `ranges` in place into attribution order, as [`attribute`] does,
/// and return the innermost range enclosing each launch call: the same as
/// [`Enclosing::innermost`] of [`attribute`]'s lists, without making the
/// lists. A view that shows only the innermost range (`launch`, `steps`)
/// needs no stack nodes, and at 3 M kernels their tree and its per-thread
/// index were a third of a gigabyte at the peak.
pub fn innermost(launches: &[Launch], ranges: &mut [Range]) -> Vec<Option<u32>> {
    sort_ranges(ranges);
    // bare indices: this path serves views, whose peak it is
    let calls: Vec<u32> = (0..launches.len() as u32).collect();
    let (ls, per_group) = sweep_threads::<_, false>(launches, calls, ranges);
    let mut out = vec![None; launches.len()];
    let mut rest = ls.as_slice();
    for st in per_group {
        let (g, r) = rest.split_at(st.per_launch.len().min(rest.len()));
        rest = r;
        for (l, &r) in g.iter().zip(&st.per_launch) {
            if let Some(slot) = out.get_mut(l.index() as usize) {
                *slot = (r != ROOT).then_some(r);
            }
        }
    }
    out
}

/// `calls` (one per launch) sorted by (thread, start, end, index), and one
/// sweep per thread over them and that thread's ranges (`rs` already in
/// attribution order), threads in parallel: the sorted calls and each
/// thread's [`Stacks`], in thread order, each one's `per_launch` as long
/// as that thread's run of calls (with `STACKS` false, each call's
/// innermost range in place of its node, and no nodes).
fn sweep_threads<C: Call, const STACKS: bool>(
    launches: &[Launch],
    mut calls: Vec<C>,
    rs: &[Range],
) -> (Vec<C>, Vec<Stacks>) {
    C::sort(&mut calls, launches);

    // one group of launches per thread
    let mut groups: Vec<&[C]> = Vec::new();
    let mut rest = calls.as_slice();
    while let Some(first) = rest.first() {
        let t = first.key(launches).0;
        let n = rest.partition_point(|c| c.key(launches).0 == t);
        let (g, r) = rest.split_at(n);
        groups.push(g);
        rest = r;
    }

    let per_group: Vec<Stacks> = groups
        .par_iter()
        .map(|g| {
            let t = g.first().map_or(0, |c| c.key(launches).0);
            let lo = rs.partition_point(|e| e.thread < t);
            let hi = rs.partition_point(|e| e.thread <= t);
            sweep::<C, STACKS>(g, launches, &rs[lo..hi], lo as u32)
        })
        .collect();
    drop(groups);
    (calls, per_group)
}

/// A launch call as the sweep sees it: an [`Entry`] (a copy of what the
/// sweep reads, for speed: read in order) or a bare index into the
/// launches (4 bytes rather than 32, for a view that needs memory more
/// than speed).
trait Call: Copy + Send + Sync {
    /// (thread, start, end) of the call.
    fn key(self, launches: &[Launch]) -> (u64, i64, i64);
    /// Its index in the launches.
    fn index(self) -> u32;
    /// Sort `calls` by (key, index).
    fn sort(calls: &mut [Self], launches: &[Launch]) {
        calls.par_sort_unstable_by_key(|c| (c.key(launches), c.index()));
    }
}

impl Call for Entry {
    fn key(self, launches: &[Launch]) -> (u64, i64, i64) {
        launches
            .get(self.index as usize)
            .map_or((u64::MAX, 0, 0), |l| (l.thread, self.start_ns, l.end_ns))
    }

    fn index(self) -> u32 {
        self.index
    }

    fn sort(calls: &mut [Self], launches: &[Launch]) {
        let end = |c: &Entry| launches.get(c.index as usize).map_or(0, |l| l.end_ns);
        calls.par_sort_unstable_by(|a, b| {
            (a.rank, a.start_ns)
                .cmp(&(b.rank, b.start_ns))
                .then_with(|| end(a).cmp(&end(b)))
                .then(a.index.cmp(&b.index))
        });
    }
}

impl Call for u32 {
    fn key(self, launches: &[Launch]) -> (u64, i64, i64) {
        launches
            .get(self as usize)
            .map_or((u64::MAX, 0, 0), |l| (l.thread, l.start_ns, l.end_ns))
    }

    fn index(self) -> u32 {
        self
    }
}

/// One thread's shared stacks: nodes (range, parent) local to the thread,
/// and each launch's innermost node.
struct Stacks {
    nodes: Vec<(u32, u32)>,
    per_launch: Vec<u32>,
}

impl Stacks {
    /// The node for `range` on top of `parent`, made once.
    fn intern(&mut self, index: &mut HashMap<(u32, u32), u32>, parent: u32, range: u32) -> u32 {
        *index.entry((parent, range)).or_insert_with(|| {
            self.nodes.push((range, parent));
            self.nodes.len() as u32 - 1
        })
    }
}

/// One thread: launches and ranges both sorted by start; `base` is the
/// index of the thread's first range. With `STACKS` false no node is made
/// and each launch gets its innermost enclosing range (or [`ROOT`]) in
/// place of its node.
fn sweep<C: Call, const STACKS: bool>(
    group: &[C],
    launches: &[Launch],
    thread_ranges: &[Range],
    base: u32,
) -> Stacks {
    let mut st = Stacks {
        // while the ranges nest, a node per range: no doubling slack (a
        // thread whose ranges cross may need more, and grows)
        nodes: Vec::with_capacity(if STACKS { thread_ranges.len() } else { 0 }),
        per_launch: Vec::with_capacity(group.len()),
    };
    let mut index: HashMap<(u32, u32), u32> = HashMap::default();
    // ranges that started before the current call and have not ended before
    // it, in start order (appending keeps the order): (end, index), with
    // the node of each prefix of the list; their ends never increase
    // (nested ranges). The nodes are made when a call first needs them:
    // the first `made` prefixes have theirs (a range that encloses no call
    // gets none: most ranges of a large export, 65 MB of nodes at 3 M
    // kernels for `report`, which keeps every range)
    let mut active: Vec<(i64, u32)> = Vec::new();
    let mut prefix_node: Vec<u32> = Vec::new();
    let mut made = 0usize;
    // once an open range ends later than the one opened before it (not
    // nested), the open ranges move to a set ordered by end: ended ones
    // leave from its start, enclosing ones are those after the call's end,
    // so a call costs O(log n + its enclosing ranges)
    let mut by_end: Option<BTreeSet<(i64, u32)>> = None;
    let mut next = 0usize;
    for &call in group {
        let (_, start_ns, end_ns) = call.key(launches);
        while let Some(r) = thread_ranges.get(next) {
            if r.start_ns >= start_ns {
                break;
            }
            let range = base + next as u32;
            next += 1;
            if by_end.is_none() {
                // an open range that ended before this one starts encloses
                // no call from here on (the current call starts later
                // still): closing it now keeps a later sibling from
                // looking like a crossing range, which would send the
                // whole thread down the slower path
                while active.last().is_some_and(|&(end, _)| end <= r.start_ns) {
                    active.pop();
                    prefix_node.pop();
                }
                made = made.min(active.len());
            }
            if by_end.is_none() && active.last().is_some_and(|&(end, _)| r.end_ns > end) {
                // of the nodes made so far only the open ranges' can be
                // reached again: a popped range encloses no later call
                for &n in &prefix_node[..made] {
                    if let Some(&(range, parent)) = st.nodes.get(n as usize) {
                        index.insert((parent, range), n);
                    }
                }
                by_end = Some(active.drain(..).collect());
                prefix_node.clear();
            }
            match &mut by_end {
                Some(set) => {
                    set.insert((r.end_ns, range));
                }
                None => {
                    active.push((r.end_ns, range));
                    if STACKS {
                        // its node is made when a call needs it
                        prefix_node.push(ROOT);
                    }
                }
            }
        }
        // a range ending at or before this call's start encloses no later call
        let node = match &mut by_end {
            None => {
                // nested: the ended ranges are the innermost ones, and the
                // enclosing ones a prefix
                while active.last().is_some_and(|&(end, _)| end <= start_ns) {
                    active.pop();
                    prefix_node.pop();
                }
                made = made.min(active.len());
                let n = active.partition_point(|&(end, _)| end > end_ns);
                match n.checked_sub(1) {
                    None => ROOT,
                    Some(i) if STACKS => {
                        // a range is opened once, so a node made here is
                        // new: no lookup (the index is filled only if the
                        // thread's ranges turn out not to nest)
                        for j in made..=i {
                            let parent = j.checked_sub(1).map_or(ROOT, |p| prefix_node[p]);
                            st.nodes.push((active[j].1, parent));
                            prefix_node[j] = st.nodes.len() as u32 - 1;
                        }
                        made = made.max(i + 1);
                        prefix_node[i]
                    }
                    Some(i) => active[i].1,
                }
            }
            Some(set) => {
                while set.first().is_some_and(|&(end, _)| end <= start_ns) {
                    set.pop_first();
                }
                let enclosing = set
                    .range((Excluded((end_ns, u32::MAX)), Unbounded))
                    .map(|&(_, range)| range);
                if !STACKS {
                    // range order is start order: the innermost is the last
                    st.per_launch.push(enclosing.max().unwrap_or(ROOT));
                    continue;
                }
                let mut enclosing: Vec<u32> = enclosing.collect();
                // range order is start order, outermost first
                enclosing.sort_unstable();
                let mut parent = ROOT;
                for range in enclosing {
                    parent = st.intern(&mut index, parent, range);
                }
                parent
            }
        };
        st.per_launch.push(node);
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StrRef;
    use proptest::prelude::*;

    fn launch(thread: u64, start: i64, end: i64) -> Launch {
        Launch {
            start_ns: start,
            end_ns: end,
            thread,
            correlation: 0,
            api: None,
        }
    }

    fn range(thread: u64, start: i64, end: i64, order: u32) -> Range {
        // the text handle stands for file order, as in the readers
        Range {
            start_ns: start,
            end_ns: end,
            thread,
            text: StrRef(order),
            domain: 0,
        }
    }

    /// Sort order of ranges within a thread: outermost first.
    fn range_key(r: &Range) -> (u64, i64, std::cmp::Reverse<i64>, StrRef) {
        (r.thread, r.start_ns, std::cmp::Reverse(r.end_ns), r.text)
    }

    /// Each launch's enclosing ranges by text handle: from `e` (indices into
    /// `sorted`) and from the definition's `want` (indices into `ranges`).
    fn texts_of(
        e: &Enclosing,
        sorted: &[Range],
        want: &[Vec<u32>],
        ranges: &[Range],
    ) -> Vec<(Vec<u32>, Vec<u32>)> {
        want.iter()
            .enumerate()
            .map(|(i, w)| {
                let got = e
                    .of(i as u32)
                    .iter()
                    .map(|&r| sorted[r as usize].text.0)
                    .collect();
                let want = w.iter().map(|&r| ranges[r as usize].text.0).collect();
                (got, want)
            })
            .collect()
    }

    /// Ranges and calls from (thread, start, length) triples; a range's
    /// text handle is its position.
    fn from_lengths(rs: &[(u64, i64, i64)], ls: &[(u64, i64, i64)]) -> (Vec<Range>, Vec<Launch>) {
        let ranges = rs
            .iter()
            .enumerate()
            .map(|(i, &(t, a, d))| range(t, a, a + d, i as u32))
            .collect();
        (
            ranges,
            ls.iter().map(|&(t, s, d)| launch(t, s, s + d)).collect(),
        )
    }

    /// The definition, checked one launch at a time against every range.
    fn brute_force(launches: &[Launch], ranges: &[Range]) -> Vec<Vec<u32>> {
        launches
            .iter()
            .map(|l| {
                let mut v: Vec<u32> = (0..ranges.len() as u32)
                    .filter(|&i| {
                        let r = &ranges[i as usize];
                        r.thread == l.thread && r.start_ns < l.start_ns && r.end_ns > l.end_ns
                    })
                    .collect();
                v.sort_by_key(|&i| (range_key(&ranges[i as usize]), i));
                v
            })
            .collect()
    }

    #[test]
    fn nested_and_overlapping() {
        let ranges = vec![
            range(1, 0, 100, 0),
            range(1, 10, 50, 1),
            range(1, 10, 90, 2),  // same start, longer: outer
            range(1, 40, 120, 3), // overlaps, not nested
            range(2, 0, 1000, 4), // other thread
            range(1, 20, 20, 5),  // empty
        ];
        let launches = vec![
            launch(1, 20, 25),
            launch(1, 45, 60),
            launch(1, 10, 11), // starts with two ranges: strict test excludes them
            launch(3, 5, 6),
        ];
        let mut ranges = ranges;
        let e = attribute(&launches, &mut ranges);
        let orders = |ix: &[u32]| {
            ix.iter()
                .map(|&i| ranges[i as usize].text.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(orders(&e.of(0)), [0, 2, 1]);
        assert_eq!(orders(&e.of(1)), [0, 2, 3]);
        assert_eq!(orders(&e.of(2)), [0]);
        assert_eq!(e.of(3), Vec::<u32>::new());
        assert_eq!(e.of(99), Vec::<u32>::new());
    }

    /// N kernels under the same N nested ranges: N stack nodes, not N²
    /// list entries; every list is still the whole stack at its launch.
    #[test]
    fn deep_nesting_shares_stacks() {
        let n = 8000i64;
        // range i spans [i, 4n - i]: nested, outermost first
        let mut ranges: Vec<Range> = (0..n).map(|i| range(1, i, 4 * n - i, i as u32)).collect();
        // launch j sits inside every range (after the last start)
        let launches: Vec<Launch> = (0..n).map(|j| launch(1, n + j, n + j)).collect();
        let e = attribute(&launches, &mut ranges);
        assert_eq!(e.node_count(), n as usize);
        for j in [0u32, 1, 4000, 7999] {
            assert_eq!(e.depth(j), n as usize);
            let texts: Vec<u32> = e.of(j).iter().map(|&r| ranges[r as usize].text.0).collect();
            assert_eq!(texts, (0..n as u32).collect::<Vec<_>>());
            assert_eq!(
                e.innermost(j).map(|r| ranges[r as usize].text.0),
                Some(n as u32 - 1)
            );
        }
    }

    /// Siblings with no call between them (most ranges of a PyTorch run
    /// enclose no launch) still nest, and only the ranges that enclose a
    /// call are made nodes: here the outer range and the last sibling, not
    /// the n − 1 siblings before it.
    #[test]
    fn siblings_without_calls_stay_nested() {
        let n = 1000i64;
        // an outer range, then n siblings inside it, ten ns apart; one
        // call inside the last sibling
        let mut ranges = vec![range(1, 0, 100 * n, 0)];
        ranges.extend((0..n).map(|i| range(1, 1 + 10 * i, 6 + 10 * i, 1 + i as u32)));
        let last = 10 * (n - 1);
        let launches = vec![launch(1, last + 2, last + 3)];
        let e = attribute(&launches, &mut ranges);
        assert_eq!(e.node_count(), 2);
        let texts: Vec<u32> = e.of(0).iter().map(|&r| ranges[r as usize].text.0).collect();
        assert_eq!(texts, vec![0, n as u32]);
    }

    /// N open ranges that overlap N launches and enclose none (the
    /// launches overlap each other and outlast every range): no list is
    /// stored, and every launch is answered from the end-ordered set.
    #[test]
    fn overlapping_ranges_enclosing_none() {
        let n = 5000i64;
        // ends increase with starts: not nested
        let mut ranges: Vec<Range> = (0..n).map(|i| range(1, i, 5 * n + i, i as u32)).collect();
        let launches: Vec<Launch> = (0..n).map(|j| launch(1, n + j, 10 * n)).collect();
        let e = attribute(&launches, &mut ranges);
        // (the first range was interned before the second showed no nesting)
        assert!(e.node_count() <= 1);
        assert!((0..n as u32).all(|j| e.is_empty_for(j)));
        // one launch inside them all sees every range, in start order
        let mut launches = launches;
        launches.push(launch(1, 2 * n, 2 * n + 1));
        let e = attribute(&launches, &mut ranges);
        let last = n as u32;
        let texts: Vec<u32> = e
            .of(last)
            .iter()
            .map(|&r| ranges[r as usize].text.0)
            .collect();
        assert_eq!(texts, (0..n as u32).collect::<Vec<_>>());
    }

    proptest! {
        /// The searches from remembered places answer as `partition_point`
        /// does, for any order of keys and any number of threads.
        #[test]
        fn hinted_search_is_partition_point(
            mut calls in prop::collection::vec((0u64..6, 0i64..100, 0i64..100), 0..80),
            keys in prop::collection::vec((0u64..7, -5i64..110), 0..120),
            from in 0usize..100,
        ) {
            calls.sort_unstable();
            let launches: Vec<Launch> = calls.iter().map(|&(t, s, e)| launch(t, s, e)).collect();
            let cover = LaunchCover::new(&launches);
            let mut hints = CoverHints::default();
            for &(thread, start) in &keys {
                // the thread's starts, in order, and the first past `start`
                let starts: Vec<i64> =
                    calls.iter().filter(|c| c.0 == thread).map(|c| c.1).collect();
                let want = (!starts.is_empty())
                    .then(|| (starts.clone(), starts.partition_point(|&s| s <= start)));
                let got = hints
                    .search(&cover, thread, start)
                    .map(|(part, j)| (part.iter().map(|c| c.0).collect::<Vec<_>>(), j));
                prop_assert_eq!(got, want);
                let key = (thread, start);
                let before = |i: usize| (calls[i].0, calls[i].1) <= key;
                let want = calls.partition_point(|&(t, s, _)| (t, s) <= key);
                prop_assert_eq!(gallop(calls.len(), from, before), want);
            }
        }
    }

    proptest! {
        /// The cover answers each range by brute force over the calls: no
        /// answer on a thread without calls, else whether some call of the
        /// thread starts after the range starts and ends before it ends;
        /// ranges asked in any order, with one set of hints.
        #[test]
        fn cover_is_the_brute_force_answer(
            calls in prop::collection::vec((0u64..4, 0i64..60, 0i64..30), 0..40),
            ranges in prop::collection::vec((0u64..5, 0i64..60, 0i64..90), 0..60),
        ) {
            let launches: Vec<Launch> = calls
                .iter()
                .map(|&(t, s, d)| launch(t, s, s + d))
                .collect();
            let cover = LaunchCover::new(&launches);
            let mut hints = CoverHints::default();
            for &(t, s, d) in &ranges {
                let e = s + d;
                let want = launches.iter().any(|l| l.thread == t).then(|| {
                    launches
                        .iter()
                        .any(|l| l.thread == t && l.start_ns > s && l.end_ns < e)
                });
                prop_assert_eq!(cover.encloses(t, s, e, &mut hints), want);
            }
        }
    }

    /// What [`Enclosing::node`] promises (launches share a node exactly
    /// when they share a list; the records group launches by it), and that
    /// nodes are made only for lists some launch has, or their prefixes.
    fn nodes_are_lists(e: &Enclosing, launches: usize) -> Result<(), TestCaseError> {
        let lists: Vec<Vec<u32>> = (0..launches as u32).map(|l| e.of(l)).collect();
        for a in 0..launches as u32 {
            for b in 0..launches as u32 {
                prop_assert_eq!(
                    e.node(a) == e.node(b),
                    lists[a as usize] == lists[b as usize]
                );
            }
        }
        let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
        let prefixes: std::collections::HashSet<&[u32]> = lists
            .iter()
            .flat_map(|l| (1..=l.len()).map(move |n| &l[..n]))
            .collect();
        prop_assert!(e.node_count() <= prefixes.len().max(longest));
        Ok(())
    }

    proptest! {
        /// Properly nested ranges (the fast path) against the definition.
        #[test]
        fn nested_sweep_agrees_with_brute_force(
            spans in prop::collection::vec((0u64..2, 0i64..50, 1i64..50), 0..40),
            ls in prop::collection::vec((0u64..2, 0i64..200, 0i64..20), 0..60),
        ) {
            // ranges nested by construction: each inside the previous one
            // of its thread, or after it
            let mut ranges = Vec::new();
            let mut last: [(i64, i64); 2] = [(0, 1000); 2];
            for (i, &(t, a, b)) in spans.iter().enumerate() {
                let (lo, hi) = last[t as usize];
                let start = (lo + a).min(hi - 1);
                let end = (start + b).min(hi).max(start);
                ranges.push(range(t, start, end, i as u32));
                last[t as usize] = if end - start > 2 { (start, end) } else { (end, 1000) };
            }
            let launches: Vec<Launch> = ls.iter().map(|&(t, s, d)| launch(t, s, s + d)).collect();
            let want = brute_force(&launches, &ranges);
            let mut sorted = ranges.clone();
            let e = attribute(&launches, &mut sorted);
            for (got, want) in texts_of(&e, &sorted, &want, &ranges) {
                prop_assert_eq!(got, want);
            }
            nodes_are_lists(&e, launches.len())?;
            // [`innermost`] without the lists: the last of each list
            let mut again = ranges.clone();
            let inner = innermost(&launches, &mut again);
            for (g, w) in inner.iter().zip(&want) {
                let text = g.map(|r| again[r as usize].text.0);
                prop_assert_eq!(text, w.last().map(|&r| ranges[r as usize].text.0));
            }
        }
    }

    proptest! {
        #[test]
        fn sweep_agrees_with_brute_force(
            rs in prop::collection::vec((0u64..3, 0i64..200, 0i64..200), 0..60),
            ls in prop::collection::vec((0u64..3, 0i64..200, 0i64..20), 0..60),
        ) {
            let ranges: Vec<Range> = rs.iter().enumerate()
                .map(|(i, &(t, a, b))| range(t, a.min(b), a.max(b), i as u32)).collect();
            let launches: Vec<Launch> = ls.iter()
                .map(|&(t, s, d)| launch(t, s, s + d)).collect();
            let want = brute_force(&launches, &ranges);
            let mut sorted = ranges.clone();
            let e = attribute(&launches, &mut sorted);
            for (got, want) in texts_of(&e, &sorted, &want, &ranges) {
                prop_assert_eq!(got, want);
            }
            // the innermost range is the last of the list
            for l in 0..launches.len() as u32 {
                prop_assert_eq!(e.innermost(l), e.of(l).last().copied());
            }
            nodes_are_lists(&e, launches.len())?;
            // every stack is made once: no two nodes are the same range on
            // the same parent, also after a thread's ranges stop nesting
            let mut seen = std::collections::HashSet::new();
            for &node in &e.nodes {
                prop_assert!(seen.insert(node), "node {:?} made twice", node);
            }
        }
    }

    proptest! {
        /// [`innermost`] without the lists: the last range of each call's
        /// list by the definition (for calls that do not end before they
        /// start), and [`attribute`]'s innermost for any call, over ranges
        /// left in the same order. Ranges may cross or be inverted.
        #[test]
        fn innermost_is_the_lists_last(
            rs in prop::collection::vec((0u64..3, 0i64..60, -5i64..60), 0..60),
            ls in prop::collection::vec((0u64..3, 0i64..60, -15i64..15), 0..40),
        ) {
            let (ranges, launches) = from_lengths(&rs, &ls);
            let mut sorted = ranges.clone();
            let got = innermost(&launches, &mut sorted);
            prop_assert_eq!(got.len(), launches.len());
            let mut listed = ranges.clone();
            let e = attribute(&launches, &mut listed);
            let key = |r: &Range| (r.thread, r.start_ns, r.end_ns, r.text.0);
            prop_assert!(sorted.iter().map(key).eq(listed.iter().map(key)));
            let want = brute_force(&launches, &ranges);
            for (i, l) in launches.iter().enumerate() {
                prop_assert_eq!(got[i], e.innermost(i as u32));
                if l.end_ns >= l.start_ns {
                    let text = got[i].map(|r| sorted[r as usize].text.0);
                    let last = want[i].last().map(|&r| ranges[r as usize].text.0);
                    prop_assert_eq!(text, last);
                }
            }
        }
    }

    proptest! {
        /// Dropping the ranges that enclose no call first: every call's
        /// list as the definition gives it over all ranges, and the number
        /// dropped is the number of ranges the definition puts in no list.
        /// Ranges may be inverted (end before start); ranges and calls
        /// share starts and ends.
        #[test]
        fn used_ranges_only_agree_with_brute_force(
            rs in prop::collection::vec((0u64..3, 0i64..60, -5i64..60), 0..60),
            ls in prop::collection::vec((0u64..3, 0i64..60, 0i64..15), 0..40),
        ) {
            let (ranges, launches) = from_lengths(&rs, &ls);
            let want = brute_force(&launches, &ranges);
            let mut used = vec![false; ranges.len()];
            for w in &want {
                for &r in w {
                    used[r as usize] = true;
                }
            }
            let mut kept = ranges.clone();
            let (e, dropped) = attribute_used(&launches, &mut kept);
            prop_assert_eq!(dropped as usize, used.iter().filter(|u| !**u).count());
            prop_assert_eq!(kept.len(), used.iter().filter(|u| **u).count());
            for (got, want) in texts_of(&e, &kept, &want, &ranges) {
                prop_assert_eq!(got, want);
            }
        }
    }

    proptest! {
        /// Attributing only the marked calls (as for records of kernels
        /// alone, [`kernel_launches`]): each marked call's list as the
        /// definition gives it over all ranges, no list for the others, and
        /// dropped exactly the ranges in no marked call's list; without the
        /// drop too ([`attribute_of`]), and the cover of the marked calls
        /// answers as the cover of a list holding only them.
        #[test]
        fn marked_calls_agree_with_brute_force(
            rs in prop::collection::vec((0u64..3, 0i64..60, -5i64..60), 0..60),
            ls in prop::collection::vec((0u64..3, 0i64..60, 0i64..15, any::<bool>()), 0..40),
        ) {
            let lens: Vec<_> = ls.iter().map(|&(t, s, d, _)| (t, s, d)).collect();
            let (ranges, launches) = from_lengths(&rs, &lens);
            let marks: Vec<bool> = ls.iter().map(|l| l.3).collect();
            let mut want = brute_force(&launches, &ranges);
            for (w, &m) in want.iter_mut().zip(&marks) {
                if !m {
                    w.clear();
                }
            }
            let mut used = vec![false; ranges.len()];
            for &r in want.iter().flatten() {
                used[r as usize] = true;
            }
            let mut kept = ranges.clone();
            let (e, dropped) = attribute_used_of(&launches, Some(&marks), &mut kept);
            prop_assert_eq!(dropped as usize, used.iter().filter(|u| !**u).count());
            prop_assert_eq!(kept.len(), used.iter().filter(|u| **u).count());
            for (got, want) in texts_of(&e, &kept, &want, &ranges) {
                prop_assert_eq!(got, want);
            }
            let mut all = ranges.clone();
            let e = attribute_of(&launches, Some(&marks), &mut all);
            for (got, want) in texts_of(&e, &all, &want, &ranges) {
                prop_assert_eq!(got, want);
            }
            let only: Vec<Launch> = launches
                .iter()
                .zip(&marks)
                .filter(|(_, m)| **m)
                .map(|(l, _)| l.clone())
                .collect();
            let (of, new) = (LaunchCover::of(&launches, Some(&marks)), LaunchCover::new(&only));
            for r in &ranges {
                let ask = |c: &LaunchCover| {
                    c.encloses(r.thread, r.start_ns, r.end_ns, &mut CoverHints::default())
                };
                prop_assert_eq!(ask(&of), ask(&new));
            }
        }
    }

    /// A call is marked when some kernel names it, whatever the order, and
    /// a kernel's launch past the calls marks nothing; without copies and
    /// sets there is nothing to tell apart.
    #[test]
    fn kernel_launches_marks_the_calls_kernels_name() {
        use crate::model::{Kernel, MemKind, MemOp, MemoryKind, Source};
        let mut trace = Trace::empty("t.sqlite".into(), Source::Nsys);
        trace.launches = (0..5).map(|i| launch(0, i * 10, i * 10 + 1)).collect();
        trace.kernels = [Some(3), None, Some(0), Some(3), Some(9)]
            .into_iter()
            .map(|l: Option<u32>| Kernel {
                row: 0,
                start_ns: 0,
                end_ns: 1,
                device: 0,
                context: crate::model::OptU32::NONE,
                stream: 0,
                correlation: 0,
                global_pid_bits: crate::model::NO_PID,
                name: StrRef(0),
                mangled: crate::model::OptStr::NONE,
                grid: [1; 3],
                block: [1; 3],
                registers_per_thread: None,
                static_smem_bytes: crate::model::OptU32::NONE,
                dynamic_smem_bytes: crate::model::OptU32::NONE,
                launch: crate::model::OptU32::saturating(l),
                extra: None,
            })
            .collect();
        assert_eq!(kernel_launches(&trace), None);
        let set = MemOp {
            start_ns: 0,
            end_ns: 1,
            device: 0,
            stream: 0,
            correlation: 0,
            bytes: None,
            name: StrRef(0),
            launch: Some(1),
            kind: MemKind::Set,
            src_mem: MemoryKind::Unknown,
            dst_mem: MemoryKind::Unknown,
            pid: None,
        };
        trace.memops.push(MemOp {
            launch: None,
            ..set.clone()
        });
        assert_eq!(kernel_launches(&trace), None);
        trace.memops.push(set);
        assert_eq!(
            kernel_launches(&trace).as_deref(),
            Some(&[true, false, false, true, false][..])
        );
    }

    proptest! {
        /// Inverted calls (end before start), which the sweep attributes
        /// to fewer ranges than the definition: the lists are those of
        /// [`attribute`] over every range, and no range in them was
        /// dropped.
        #[test]
        fn used_ranges_only_agree_with_attribute(
            rs in prop::collection::vec((0u64..3, 0i64..60, -5i64..60), 0..60),
            ls in prop::collection::vec((0u64..3, 0i64..60, -15i64..15), 0..40),
        ) {
            let (ranges, launches) = from_lengths(&rs, &ls);
            let mut all = ranges.clone();
            let want = attribute(&launches, &mut all);
            let mut kept = ranges.clone();
            let (got, dropped) = attribute_used(&launches, &mut kept);
            prop_assert_eq!(kept.len() + dropped as usize, ranges.len());
            for i in 0..launches.len() as u32 {
                let g: Vec<u32> = got.of(i).iter().map(|&r| kept[r as usize].text.0).collect();
                let w: Vec<u32> = want.of(i).iter().map(|&r| all[r as usize].text.0).collect();
                prop_assert_eq!(g, w);
            }
        }
    }
}
