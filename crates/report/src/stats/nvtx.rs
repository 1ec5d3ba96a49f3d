//! The NVTX reports: range sums, kernels by enclosing range, and ranges
//! projected onto the GPU.

use rayon::iter::{IndexedParallelIterator, ParallelIterator};
use rayon::iter::{IntoParallelIterator, IntoParallelRefMutIterator};
use rayon::slice::{ParallelSlice, ParallelSliceMut};
use rprof_model::FastMap;
use rprof_model::{ApiRow, NameId, Names, NvtxRow, RangeStyle};

use super::table::{Cell, RowSource, Stat, Table, Unit, col, percent, round1, set_text};
use super::{Request, View, api_index, no_data, sum_cols, title};

/// Names ordered by their bytes: `rank[id]` sorts as the texts do, for the
/// `ids` given (others rank `u32::MAX`). Sorting rows by these ranks
/// compares integers, where sorting by the names compared strings at every
/// step (millions of rows with distinct names on a large export).
fn rank_names(names: &Names, ids: impl IntoIterator<Item = NameId>) -> Vec<u32> {
    let mut rank = vec![u32::MAX; names.len()];
    let mut used = Vec::new();
    for id in ids {
        if let Some(r) = rank.get_mut(id as usize)
            && *r == u32::MAX
        {
            *r = 0;
            used.push(id);
        }
    }
    sort_by_text(names, &mut used);
    for (i, id) in used.into_iter().enumerate() {
        rank[id as usize] = i as u32;
    }
    rank
}

/// Bytes of a name in one key of [`sort_by_text`].
const KEY_BYTES: usize = 32;

/// A sort key of [`sort_by_text`]: [`KEY_BYTES`] bytes of a name from some
/// depth on, big-endian and padded with zeros; how many of its bytes lie
/// there (`KEY_BYTES + 1`: the name goes on past them); the id. (Keys of 16
/// bytes took two passes over the names of a large export, whose first 16
/// bytes are mostly the operator's name.)
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
struct TextKey {
    words: [u64; KEY_BYTES / 8],
    len: u8,
    id: NameId,
}

impl TextKey {
    fn of(names: &Names, id: NameId, depth: usize) -> TextKey {
        let rest = names.get(id).as_bytes().get(depth..).unwrap_or(&[]);
        let mut chunk = [0u8; KEY_BYTES];
        let n = rest.len().min(KEY_BYTES);
        chunk[..n].copy_from_slice(&rest[..n]);
        let mut words = [0u64; KEY_BYTES / 8];
        for (w, b) in words.iter_mut().zip(chunk.chunks_exact(8)) {
            *w = u64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
        }
        TextKey {
            words,
            len: rest.len().min(KEY_BYTES + 1) as u8,
            id,
        }
    }
}

/// Ids per chunk of the key extraction of [`sort_by_text`].
const KEY_CHUNK: usize = 16384;

/// The keys of `ids` at `depth`, into `out`. The names are fetched ahead
/// (where each ends, then its text): the ids ascend, but past the first
/// pass they lie far apart in the arena, and fetching them one after the
/// other waited for each.
fn keys_of(names: &Names, ids: &[NameId], depth: usize, out: &mut [TextKey]) {
    for (j, (&id, k)) in ids.iter().zip(out.iter_mut()).enumerate() {
        if let Some(&a) = ids.get(j + 32) {
            names.prefetch_end(a);
        }
        if let Some(&a) = ids.get(j + 16) {
            names.prefetch_text(a);
        }
        *k = TextKey::of(names, id, depth);
    }
}

/// Runs of at most this many names are sorted by comparing their bytes.
/// A pass costs a key vector and three calls into the thread pool
/// whatever its size, and on the 1 M-kernel export nearly half a million
/// runs of two or three names (texts alike in their first 32 bytes) spent
/// most of the sort's time on that.
const SMALL_RUN: usize = 64;

/// Runs with fewer names than this take their passes on this thread.
const PARALLEL_RUN: usize = 1 << 14;

/// Sort `ids` by their names' bytes (interned: distinct ids have distinct
/// texts). Hand-written for speed: a large export has millions of distinct
/// names sharing long prefixes (`aten::empty, op_id = 990346`), and a
/// comparison sort fetched two names from the arena at every comparison.
/// Here each pass sorts integer keys made of [`KEY_BYTES`] bytes of each
/// name, and only the runs of names that agree on all of them (and go on)
/// take the next ones, as a most-significant-digit radix sort does; a
/// small run is sorted by comparing its names from that depth on.
fn sort_by_text(names: &Names, ids: &mut [NameId]) {
    let mut work = vec![(0, ids.len(), 0)];
    let mut keys: Vec<TextKey> = Vec::new();
    // a pass's small runs (from, to), in its own positions
    let mut small: Vec<(usize, usize)> = Vec::new();
    while let Some((a, b, depth)) = work.pop() {
        let Some(part) = ids.get_mut(a..b) else {
            continue;
        };
        if part.len() <= SMALL_RUN {
            let tail = |id: NameId| names.get(id).as_bytes().get(depth..).unwrap_or(&[]);
            // distinct ids have distinct texts; the id decides only if not
            part.sort_unstable_by(|&x, &y| tail(x).cmp(tail(y)).then(x.cmp(&y)));
            continue;
        }
        // the names in arena order: each pass reads the arena forwards
        // (large sorts on the thread pool, here and below: the same order,
        // the keys being distinct or equal only when the items are)
        keys.clear();
        keys.resize(part.len(), TextKey::default());
        if part.len() < PARALLEL_RUN {
            part.sort_unstable();
            keys_of(names, part, depth, &mut keys);
            keys.sort_unstable();
        } else {
            part.par_sort_unstable();
            keys.par_chunks_mut(KEY_CHUNK)
                .zip(part.par_chunks(KEY_CHUNK))
                .for_each(|(keys, ids)| keys_of(names, ids, depth, keys));
            // keys are distinct (ids are), so any sort gives one order
            keys.par_sort_unstable();
        }
        for (slot, k) in part.iter_mut().zip(&keys) {
            *slot = k.id;
        }
        small.clear();
        let mut i = 0;
        while i < keys.len() {
            let k = keys[i];
            let mut j = i + 1;
            while j < keys.len() && (keys[j].words, keys[j].len) == (k.words, k.len) {
                j += 1;
            }
            if j - i > 1 && usize::from(k.len) == KEY_BYTES + 1 {
                if j - i <= SMALL_RUN {
                    small.push((i, j));
                } else {
                    work.push((a + i, a + j, depth + KEY_BYTES));
                }
            }
            i = j;
        }
        // the pass's small runs, sorted side by side (one after the other,
        // the half million runs of two or three names of the 1 M-kernel
        // export left a core idle)
        let mut runs: Vec<&mut [NameId]> = Vec::with_capacity(small.len());
        let mut rest: &mut [NameId] = part;
        let mut at = 0;
        for &(i, j) in &small {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(i - at);
            let (run, tail) = tail.split_at_mut(j - i);
            runs.push(run);
            rest = tail;
            at = j;
        }
        let depth = depth + KEY_BYTES;
        let sort_run = |run: &mut [NameId]| {
            let tail = |id: NameId| names.get(id).as_bytes().get(depth..).unwrap_or(&[]);
            run.sort_unstable_by(|&x, &y| tail(x).cmp(tail(y)).then(x.cmp(&y)));
        };
        if keys.len() < PARALLEL_RUN {
            runs.into_iter().for_each(sort_run);
        } else {
            runs.into_par_iter().for_each(sort_run);
        }
    }
}

/// Rows of the range sums: one per (name, style), in output order. Row
/// `i`'s samples (sorted) are `durs[ends[i - 1]..ends[i]]`, its name
/// `names[i]`, its style `styles[i]`. Their statistics are computed as
/// each row is written: 9 bytes a row in place of 64 with the statistics
/// (millions of rows on a large export). The durations lie in row order,
/// so that writing the rows reads them front to back (they were read from
/// the grouped pairs at random, a cache miss per row and pass).
struct RangeSumRows {
    durs: Vec<i64>,
    ends: Vec<u32>,
    names: Vec<NameId>,
    styles: Vec<Option<RangeStyle>>,
    grand: i128,
}

impl RowSource for RangeSumRows {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn fill(&self, i: usize, _names: &Names, out: &mut [Cell]) {
        let a = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        let b = self.ends.get(i).map_or(a, |&b| b as usize);
        let run = self.durs.get(a..b).unwrap_or(&[]);
        if run.is_empty() {
            out.fill(Cell::Null);
            return;
        }
        let s = Stat::of_sorted(run);
        out[0] = percent(s.total, self.grand);
        out[1] = Cell::Int(s.total);
        out[2] = Cell::Int(s.count);
        s.dur_cells_into(&mut out[3..8]);
        let mut c = 8;
        if let Some(st) = self.styles.get(i).copied().flatten() {
            set_text(&mut out[c], st.as_str());
            c += 1;
        }
        out[c] = Cell::Name(self.names.get(i).copied().unwrap_or(NameId::MAX));
    }
}

/// `nvtx_sum` (style `None`: grouped by name and style),
/// `nvtx_pushpop_sum`, `nvtx_startend_sum`.
pub fn range_sum(v: &View<'_>, style: Option<RangeStyle>) -> Table {
    let name = match style {
        None => "nvtx_sum",
        Some(RangeStyle::PushPop) => "nvtx_pushpop_sum",
        Some(RangeStyle::StartEnd) => "nvtx_startend_sum",
    };
    let mut cols = sum_cols("Instances");
    if style.is_none() {
        cols.push(col("Style", Unit::None));
    }
    cols.push(col("Range", Unit::None));
    let mut t = Table::new(name, title(name), cols);
    let Some(ranges) = v.nvtx.as_deref() else {
        return no_data(t, "NV Tools Extension (NVTX) data");
    };
    let max = v.data.nvtx_max_ns;
    let names = &v.data.names;
    let of_style = |r: &&NvtxRow| style.is_none_or(|s| s == r.style);
    // (name, style) and duration, grouped by sorting (a map of millions
    // of groups with a vector each cost more)
    let mut pairs: Vec<((NameId, Option<RangeStyle>), i64)> = ranges
        .iter()
        .filter(of_style)
        .filter_map(|r| {
            let end = r.end_ns().or(max)?;
            let key = (r.name, style.is_none().then_some(r.style));
            Some((key, end.saturating_sub(r.start_ns)))
        })
        .collect();
    pairs.par_sort_unstable();
    // (total, start of the run in `pairs`, name): 16 bytes a group.
    // `pairs` is sorted by name and style, so a run's start orders the
    // groups as their keys do (and a name's groups by style).
    let mut rows: Vec<(i64, u32, NameId)> = Vec::new();
    let mut grand = 0i128;
    let mut i = 0;
    while i < pairs.len() {
        let key = pairs[i].0;
        let mut j = i;
        let mut sum = 0i128;
        while j < pairs.len() && pairs[j].0 == key {
            sum += i128::from(pairs[j].1);
            j += 1;
        }
        // as Stat's total: the exact sum, saturated
        let total = sum.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        grand += i128::from(total);
        rows.push((total, i as u32, key.0));
        i = j;
    }
    // nsys: total (desc); ties in GROUP BY order, the name's bytes and
    // style: rows of equal totals are put in that order run by run
    // ([`tied_ranks`])
    rows.par_sort_unstable_by_key(|r| (std::cmp::Reverse(r.0), r.1));
    rows.par_chunk_by_mut(|a, b| a.0 == b.0)
        .filter(|run| run.len() > 1)
        .for_each(|run| order_tied(names, run, |r| (r.2, r.1)));
    // the runs' starts in output order (collected in place: the sort
    // keys' memory is reused, not held beside the rows below)
    let runs: Vec<u64> = rows.into_iter().map(|(_, a, _)| u64::from(a)).collect();
    // the runs gathered in output order
    let mut durs: Vec<i64> = Vec::with_capacity(pairs.len());
    let mut ends: Vec<u32> = Vec::with_capacity(runs.len());
    let mut names: Vec<NameId> = Vec::with_capacity(runs.len());
    let mut styles: Vec<Option<RangeStyle>> = Vec::with_capacity(runs.len());
    for a in runs {
        let run = pairs.get(a as usize..).unwrap_or(&[]);
        let Some(&((name, style), _)) = run.first() else {
            continue;
        };
        let n = run.iter().take_while(|p| p.0 == (name, style)).count();
        durs.extend(run[..n].iter().map(|p| p.1));
        ends.push(durs.len() as u32);
        names.push(name);
        styles.push(style);
    }
    drop(pairs);
    t.source = Some(Box::new(RangeSumRows {
        durs,
        ends,
        names,
        styles,
        grand,
    }));
    t
}

/// Rows of one total, sorted by `key`'s name and then its tie-breaker,
/// put in nsys's order: by the name's bytes, then the tie-breaker (the
/// style's order).
fn order_tied<R>(names: &Names, run: &mut [R], key: impl Fn(&R) -> (NameId, u32)) {
    let ranks = tied_ranks(names, run.iter().map(|r| key(r).0));
    run.sort_by_cached_key(|r| {
        let (name, then) = key(r);
        (rank_in(&ranks, name), then)
    });
}

/// The names `ids` (ascending; a name's repeats adjacent) ranked by their
/// bytes, as (id, rank) sorted by id for [`rank_in`]. For the rows of one
/// total only: ranking every name of a report at once held a sort key of
/// 40 bytes per name (over a gigabyte on an export of 14 million distinct
/// range names, most of which share no total with another row).
fn tied_ranks(names: &Names, ids: impl Iterator<Item = NameId>) -> Vec<(NameId, u32)> {
    let mut ids: Vec<NameId> = ids.collect();
    ids.dedup();
    if ids.len() > 1 {
        sort_by_text(names, &mut ids);
    }
    let mut ranks: Vec<(NameId, u32)> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| (id, i as u32))
        .collect();
    ranks.sort_unstable();
    ranks
}

/// The rank of name `id` in `ranks` ([`tied_ranks`]; `u32::MAX` if absent).
fn rank_in(ranks: &[(NameId, u32)], id: NameId) -> u32 {
    let at = ranks.partition_point(|p| p.0 < id);
    ranks
        .get(at)
        .filter(|p| p.0 == id)
        .map_or(u32::MAX, |p| p.1)
}

/// A range as nsys's kernel and projection reports index it: only ranges
/// that end on their own thread; open ranges end at the last range time.
#[derive(Clone, Copy, Debug)]
struct Ridx {
    id: i64,
    start: i64,
    end: i64,
    pid: u64,
    tid: u64,
    name: NameId,
    style: RangeStyle,
}

/// A range as `nvtx_gpu_proj_trace` keeps it: a [`Ridx`] with its thread
/// by number (40 bytes, not 48, for each range of the index).
#[derive(Clone, Copy, Debug)]
struct TraceRange {
    id: i64,
    start: i64,
    end: i64,
    thread: u32,
    name: NameId,
    style: RangeStyle,
}

/// Ranges by index, as [`Ridx`]s: the index's own ([`Ranges`]) or, in
/// tests, a vector of them.
trait RangeTable: Sync {
    fn len(&self) -> usize;
    /// Range `i`, `None` if the index leaves it out.
    fn range(&self, i: usize) -> Option<Ridx>;
    /// Range `i`, which the index holds.
    fn at(&self, i: usize) -> Ridx;
}

#[cfg(test)]
impl RangeTable for [Ridx] {
    fn len(&self) -> usize {
        <[Ridx]>::len(self)
    }
    fn range(&self, i: usize) -> Option<Ridx> {
        self.get(i).copied()
    }
    fn at(&self, i: usize) -> Ridx {
        self[i]
    }
}

/// The ranges' index: the view's NVTX rows in place, range `i` being row
/// `i` (copied into an index of their own, they were a quarter of a
/// gigabyte of fresh memory on the 1 M-kernel export, a tenth of
/// `nvtx_gpu_proj_sum`'s time in the kernel's clearing of it). Rows left
/// out (they end on another thread, or never and no range ends) are in no
/// thread's list of [`ByThread`], so no search finds them.
#[derive(Clone, Copy)]
struct Ranges<'a> {
    rows: &'a [NvtxRow],
    /// the rows' threads by number
    threads: &'a [(u64, u64)],
    /// where open ranges end
    max: Option<i64>,
}

impl<'a> Ranges<'a> {
    fn of(v: &'a View<'_>) -> Ranges<'a> {
        Ranges {
            rows: v.nvtx.as_deref().unwrap_or(&[]),
            threads: &v.data.nvtx_threads,
            max: v.data.nvtx_range_max_ns,
        }
    }

    /// Row `r`'s (process id, thread id).
    #[inline]
    fn thread(&self, r: &NvtxRow) -> (u64, u64) {
        self.threads
            .get(r.thread as usize)
            .copied()
            .unwrap_or((u64::MAX, u64::MAX))
    }

    /// Every range of the index, as the trace prints it, and the threads
    /// by number.
    fn to_trace(self) -> (Vec<TraceRange>, Vec<(u64, u64)>) {
        let ranges = (0..self.rows.len())
            .map(|i| {
                let r = &self.rows[i];
                TraceRange {
                    id: r.id,
                    start: r.start_ns,
                    end: r.end_ns().or(self.max).unwrap_or(i64::MIN),
                    thread: r.thread,
                    name: r.name,
                    style: r.style,
                }
            })
            .collect();
        (ranges, self.threads.to_vec())
    }
}

impl RangeTable for Ranges<'_> {
    fn len(&self) -> usize {
        self.rows.len()
    }
    fn range(&self, i: usize) -> Option<Ridx> {
        let r = self.rows.get(i)?;
        if r.ends_elsewhere {
            return None;
        }
        let (pid, tid) = self.thread(r);
        Some(Ridx {
            id: r.id,
            start: r.start_ns,
            end: r.end_ns().or(self.max)?,
            pid,
            tid,
            name: r.name,
            style: r.style,
        })
    }
    #[inline]
    fn at(&self, i: usize) -> Ridx {
        let r = &self.rows[i];
        let (pid, tid) = self.thread(r);
        Ridx {
            id: r.id,
            start: r.start_ns,
            end: r.end_ns().or(self.max).unwrap_or(i64::MIN),
            pid,
            tid,
            name: r.name,
            style: r.style,
        }
    }
}

/// Each thread's ranges (their indices), in (start, longest first, id,
/// index) order: the order of [`parents`]' sweep, and by start for
/// [`enclosing_each`]'s. Made once for both (each grouped and sorted every
/// range again, a tenth of `nvtx_gpu_proj_sum`'s own time on the 1 M-kernel
/// export).
struct ByThread {
    /// (pid, tid) → its place in `lists`
    threads: FastMap<(u64, u64), usize>,
    /// the threads' ranges, the threads in order of their first range
    lists: Vec<Vec<u32>>,
}

impl ByThread {
    fn new<R: RangeTable + ?Sized>(ranges: &R) -> ByThread {
        let mut threads: FastMap<(u64, u64), usize> = FastMap::default();
        let mut lists: Vec<Vec<u32>> = Vec::new();
        // consecutive ranges are mostly on one thread: its place again
        // without a lookup
        let mut last: Option<((u64, u64), usize)> = None;
        for i in 0..ranges.len() {
            let Some(r) = ranges.range(i) else {
                continue;
            };
            let key = (r.pid, r.tid);
            let t = match last {
                Some((k, t)) if k == key => t,
                _ => {
                    let t = *threads.entry(key).or_insert_with(|| {
                        lists.push(Vec::new());
                        lists.len() - 1
                    });
                    last = Some((key, t));
                    t
                }
            };
            lists[t].push(i as u32);
        }
        for rs in &mut lists {
            rs.par_sort_unstable_by_key(|&i| {
                let r = ranges.at(i as usize);
                (r.start, std::cmp::Reverse(r.end), r.id, i)
            });
        }
        ByThread { threads, lists }
    }
}

/// For each query `(pid, tid, start, end)`, `f(query, ranges)` with the
/// indices of the ranges of the same thread with `start <= q.start` and
/// `end >= q.end` (queries in no order, ranges in no set order). A sweep per
/// thread in start order keeps the ranges open at the current start, so the
/// cost is the queries times the nesting depth.
fn enclosing_each<R: RangeTable + ?Sized>(
    ranges: &R,
    by_thread: &ByThread,
    queries: &[Query],
    mut f: impl FnMut(usize, &[u32]),
) {
    let mut per_thread: Vec<Vec<u32>> = vec![Vec::new(); by_thread.lists.len()];
    let mut last: Option<((u64, u64), usize)> = None;
    for (i, q) in queries.iter().enumerate() {
        let key = (q.0, q.1);
        let t = match last {
            Some((k, t)) if k == key => t,
            _ => match by_thread.threads.get(&key) {
                Some(&t) => {
                    last = Some((key, t));
                    t
                }
                None => continue,
            },
        };
        per_thread[t].push(i as u32);
    }
    let mut hits: Vec<u32> = Vec::new();
    let mut active: Vec<u32> = Vec::new();
    for (rs, mut qs) in by_thread.lists.iter().zip(per_thread) {
        if qs.is_empty() {
            continue;
        }
        qs.par_sort_unstable_by_key(|&i| (queries[i as usize].2, i));
        let mut next = 0;
        active.clear();
        for qi in qs {
            let q = queries[qi as usize];
            while next < rs.len() && ranges.at(rs[next] as usize).start <= q.2 {
                active.push(rs[next]);
                next += 1;
            }
            active.retain(|&r| ranges.at(r as usize).end >= q.2);
            hits.clear();
            hits.extend(
                active
                    .iter()
                    .copied()
                    .filter(|&r| ranges.at(r as usize).end >= q.3),
            );
            f(qi as usize, &hits);
        }
    }
}

/// Each range's parent: the tightest enclosing range of the same thread
/// (the least `(start - parent start) + (parent end - end)`, then the lower
/// id); a range with the same extent counts only if its id is lower (nsys
/// leaves that case circular). `NONE` for a range no other range encloses.
///
/// A thread whose ranges nest (any two are disjoint or one holds the other:
/// every push/pop thread) is answered by one sweep with a stack, in
/// (start, longest first, id) order: the top of the stack is the innermost
/// enclosing range, and among ranges of the same extent the first pushed
/// has the lowest id. The other threads (start/end ranges that cross, ranges
/// that touch, inverted ranges) take [`enclosing_each`] and compare every
/// enclosing range. The sweep is here for speed: on the 1 M-kernel export
/// the general search with its 4.8 M queries took most of the report's
/// own time.
fn parents<R: RangeTable + ?Sized>(ranges: &R, by_thread: &ByThread) -> Vec<u32> {
    let mut parent: Vec<u32> = vec![NONE; ranges.len()];
    let mut general: Vec<u32> = Vec::new();
    // (range, the first range of its run of equal extents on the stack)
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for rs in &by_thread.lists {
        stack.clear();
        let nested = rs.iter().all(|&ci| {
            let c = ranges.at(ci as usize);
            if c.end < c.start {
                return false;
            }
            while let Some(&(ti, _)) = stack.last() {
                let t = ranges.at(ti as usize);
                if t.end >= c.end {
                    break;
                }
                if t.end >= c.start {
                    // crossing or touching: not a nest
                    return false;
                }
                stack.pop();
            }
            let first = match stack.last() {
                Some(&(ti, first)) => {
                    let t = ranges.at(ti as usize);
                    parent[ci as usize] = first;
                    if (t.start, t.end) != (c.start, c.end) {
                        ci
                    } else if t.id == c.id {
                        // a repeated id (hostile input only; equal ids sort
                        // side by side): the general search decides
                        return false;
                    } else {
                        first
                    }
                }
                None => ci,
            };
            stack.push((ci, first));
            true
        });
        if !nested {
            for &ci in rs {
                parent[ci as usize] = NONE;
            }
            general.extend_from_slice(rs);
        }
    }
    if general.is_empty() {
        return parent;
    }
    let queries: Vec<Query> = general
        .iter()
        .map(|&i| {
            let r = ranges.at(i as usize);
            (r.pid, r.tid, r.start, r.end)
        })
        .collect();
    enclosing_each(ranges, by_thread, &queries, |qi, cands| {
        let ci = general[qi] as usize;
        let c = ranges.at(ci);
        let mut best: Option<(i64, i64, u32)> = None;
        for &pi in cands {
            let p = ranges.at(pi as usize);
            if pi as usize == ci || (p.start == c.start && p.end == c.end && p.id > c.id) {
                continue;
            }
            let tight = (c.start - p.start).saturating_add(p.end - c.end);
            if best.is_none_or(|b| (tight, p.id) < (b.0, b.1)) {
                best = Some((tight, p.id, pi));
            }
        }
        parent[ci] = best.map_or(NONE, |b| b.2);
    });
    parent
}

/// [`enclosing_each`]'s answers kept, per query: `get(q)`.
struct Found {
    spans: Vec<(usize, usize)>,
    flat: Vec<u32>,
}

impl Found {
    fn new<R: RangeTable + ?Sized>(ranges: &R, by_thread: &ByThread, queries: &[Query]) -> Found {
        let mut found = Found {
            spans: vec![(0, 0); queries.len()],
            flat: Vec::new(),
        };
        enclosing_each(ranges, by_thread, queries, |q, rs| {
            found.spans[q] = (found.flat.len(), found.flat.len() + rs.len());
            found.flat.extend_from_slice(rs);
        });
        found
    }

    fn get(&self, q: u32) -> &[u32] {
        self.spans
            .get(q as usize)
            .and_then(|&(a, b)| self.flat.get(a..b))
            .unwrap_or(&[])
    }
}

/// One query per API call (by its [`ApiIndex`](super::ApiIndex) position)
/// that launched one of the operations whose calls are `spans` (as
/// [`ApiIndex::spans`](super::ApiIndex::spans) gives them): the call's
/// slot, or `u32::MAX`.
fn call_queries(
    index: &super::ApiIndex<'_>,
    spans: &[std::ops::Range<usize>],
) -> (Vec<u32>, Vec<Query>) {
    let mut slot = vec![u32::MAX; index.len()];
    let mut queries = Vec::new();
    for span in spans {
        for p in span.clone() {
            if slot[p] == u32::MAX {
                let c = index.at(p);
                slot[p] = queries.len() as u32;
                queries.push((c.pid, c.tid, c.start_ns, c.end_ns));
            }
        }
    }
    (slot, queries)
}

/// A query of [`enclosing_each`]: pid, tid, start, end.
type Query = (u64, u64, i64, i64);

/// No range / no thread / no style, in the packed keys below.
const NONE: u32 = u32::MAX;

fn style_code(s: Option<RangeStyle>) -> u8 {
    match s {
        None => 0,
        Some(RangeStyle::PushPop) => 1,
        Some(RangeStyle::StartEnd) => 2,
    }
}

fn style_of(code: u8) -> Option<RangeStyle> {
    match code {
        1 => Some(RangeStyle::PushPop),
        2 => Some(RangeStyle::StartEnd),
        _ => None,
    }
}

/// One row of `nvtx_kern_sum`, printed: its statistics are computed as
/// it is written, from its kernels' durations in [`KernRows::durs`] (20
/// bytes a row and 8 a kernel, in place of 96 with the statistics: the
/// 3 M-kernel export has 6.3 M rows, most of one kernel).
struct KernRow {
    thread: u32,
    range: NameId,
    kname: NameId,
    /// Distinct ranges of the group.
    ranges: u32,
    style: u8,
}

struct KernRows {
    rows: Vec<KernRow>,
    /// Each row's kernels' durations, sorted, the rows one after the other
    /// in output order (so that writing reads them front to back).
    durs: Vec<i64>,
    /// Where each row's durations end in `durs`.
    ends: Vec<u64>,
    threads: Vec<(u64, u64)>,
}

impl RowSource for KernRows {
    fn len(&self) -> usize {
        self.rows.len()
    }

    fn fill(&self, i: usize, _names: &Names, out: &mut [Cell]) {
        let r = &self.rows[i];
        if r.range == NONE {
            out[0] = Cell::Null;
        } else {
            out[0] = Cell::Name(r.range);
        }
        match style_of(r.style) {
            Some(s) => set_text(&mut out[1], s.as_str()),
            None => out[1] = Cell::Null,
        }
        let th = self.threads.get(r.thread as usize);
        out[2] = Cell::opt(th.map(|t| t.0 as i64));
        out[3] = Cell::opt(th.map(|t| t.1 as i64));
        out[4] = Cell::Int(i64::from(r.ranges));
        let a = i.checked_sub(1).map_or(0, |p| self.ends[p] as usize);
        let b = self.ends.get(i).map_or(a, |&b| b as usize);
        let stat = Stat::of_sorted(self.durs.get(a..b).unwrap_or(&[]));
        out[5] = Cell::Int(stat.count);
        out[6] = Cell::Int(stat.total);
        stat.dur_cells_into(&mut out[7..12]);
        out[12] = Cell::Name(r.kname);
    }
}

/// `nvtx_kern_sum`.
pub fn kern_sum(v: &View<'_>, req: &Request) -> Table {
    let cols = vec![
        col("NVTX Range", Unit::None),
        col("Style", Unit::None),
        col("PID", Unit::None),
        col("TID", Unit::None),
        col("NVTX Inst", Unit::None),
        col("Kern Inst", Unit::None),
        col("Total Time", Unit::Duration),
        col("Avg", Unit::Duration),
        col("Med", Unit::Duration),
        col("Min", Unit::Duration),
        col("Max", Unit::Duration),
        col("StdDev", Unit::Duration),
        col("Kernel Name", Unit::None),
    ];
    let mut t = Table::new(req.spec.clone(), title("nvtx_kern_sum"), cols);
    if v.nvtx.is_none() {
        return no_data(t, "NV Tools Extension (NVTX) data");
    }
    let Some(kernels) = v.kernels.as_deref() else {
        return no_data(t, "CUDA kernel data");
    };
    let Some(api) = v.api.as_deref() else {
        return no_data(t, "CUDA API data");
    };
    super::base_note(v, req, &mut t);
    // the ranges' index beside the calls' (each a single pass of its own)
    let ranges = Ranges::of(v);
    let (by_thread, (index, spans, (slot, queries))) = rayon::join(
        || ByThread::new(&ranges),
        || {
            let index = api_index(api);
            let keys: Vec<Option<(u64, i64)>> = kernels
                .iter()
                .map(|k| k.pid.map(|p| (p, k.correlation)))
                .collect();
            let spans = index.spans(&keys);
            let q = call_queries(&index, &spans);
            (index, spans, q)
        },
    );
    let found = Found::new(&ranges, &by_thread, &queries);
    drop(queries);
    drop(by_thread);
    // the names' order (for the rows' order) is worked out on a second
    // thread while the hits are made, sorted and summed: the names of the
    // ranges that enclose a kernel, and the kernels' names (ranked over a
    // superset of the rows' names, the ranks order the rows' names as
    // ranking the rows' names alone does)
    let (names, kind, all, flat) = (&v.data.names, req.names, &ranges, &found.flat);
    std::thread::scope(|sc| {
        let ranker = sc.spawn(move || {
            rank_names(
                names,
                flat.iter()
                    .filter_map(|&ri| all.range(ri as usize).map(|r| r.name))
                    .chain(kernels.iter().map(|k| v.kernel_name(k, kind))),
            )
        });
        // one hit per (group, range, kernel): the group is (thread, range name,
        // style, kernel name); grouped by sorting
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        struct Hit {
            thread: u32,
            range: NameId,
            style: u8,
            kname: NameId,
            kernel: u32,
            ri: u32,
            // the kernel's duration, carried along: after the sort by group,
            // reading it from the kernel table was a cache miss per hit (it
            // follows from `kernel`, so it does not change the order)
            dur: i64,
        }
        let mut threads: Vec<(u64, u64)> = Vec::new();
        let mut thread_ix: FastMap<(u64, u64), u32> = FastMap::default();
        let mut hits: Vec<Hit> = Vec::new();
        let mut last_thread: Option<((u64, u64), u32)> = None;
        for (ki, k) in kernels.iter().enumerate() {
            let kname = v.kernel_name(k, req.names);
            let dur = k.end_ns.saturating_sub(k.start_ns);
            let span = spans.get(ki).cloned().unwrap_or(0..0);
            // the hit of a kernel that no range of `thread` encloses
            let unranged = |thread: u32| Hit {
                thread,
                range: NONE,
                style: 0,
                kname,
                kernel: ki as u32,
                ri: NONE,
                dur,
            };
            if span.is_empty() {
                hits.push(unranged(NONE));
                continue;
            }
            for p in span {
                let c = index.at(p);
                // consecutive calls are mostly on one thread: its index again
                // without a lookup
                let thread = match last_thread {
                    Some((key, t)) if key == (c.pid, c.tid) => t,
                    _ => {
                        let t = *thread_ix.entry((c.pid, c.tid)).or_insert_with(|| {
                            threads.push((c.pid, c.tid));
                            (threads.len() - 1) as u32
                        });
                        last_thread = Some(((c.pid, c.tid), t));
                        t
                    }
                };
                let rs = found.get(slot[p]);
                if rs.is_empty() {
                    hits.push(unranged(thread));
                }
                for &ri in rs {
                    let r = ranges.at(ri as usize);
                    hits.push(Hit {
                        thread,
                        range: r.name,
                        style: style_code(Some(r.style)),
                        kname,
                        kernel: ki as u32,
                        ri,
                        dur,
                    });
                }
            }
        }
        hits.par_sort_unstable();
        // nsys's order: range name, pid, tid, total (desc), style, kernel name;
        // names by pre-computed ranks, no range first. (Waited for here, not
        // once the groups are made: the ranker's sort keys, 40 bytes a name,
        // were held beside the hits and the groups, 0.3 GB of the 3 M-kernel
        // export's peak.)
        let rank = match ranker.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let rank_of = |n: NameId| {
            if n == NONE {
                0
            } else {
                rank.get(n as usize)
                    .copied()
                    .unwrap_or(u32::MAX)
                    .saturating_add(1)
            }
        };
        // a group as it is sorted: its kernels' durations lie at
        // `at..at + n` of `grouped` (48 bytes a group)
        struct Group {
            thread: u32,
            range: NameId,
            kname: NameId,
            ranges: u32,
            n: u32,
            style: u8,
            total: i64,
            at: u64,
            /// the ranks of the range's and the kernel's names (for the order,
            /// set as the group is made: looked up at every comparison, the
            /// ranks were a cache miss each)
            ranks: [u32; 2],
        }
        let mut groups: Vec<Group> = Vec::new();
        let mut grouped: Vec<i64> = Vec::new();
        let mut rids = Vec::new();
        let mut i = 0;
        while i < hits.len() {
            let h = hits[i];
            let same = |x: &Hit| {
                (x.thread, x.range, x.style, x.kname) == (h.thread, h.range, h.style, h.kname)
            };
            let mut j = i;
            let at = grouped.len();
            rids.clear();
            let mut last_kernel = None;
            while j < hits.len() && same(&hits[j]) {
                // each kernel once, however many ranges of this name enclose it
                if last_kernel != Some(hits[j].kernel) {
                    last_kernel = Some(hits[j].kernel);
                    grouped.push(hits[j].dur);
                }
                if hits[j].ri != NONE {
                    rids.push(hits[j].ri);
                }
                j += 1;
            }
            let durs = &mut grouped[at..];
            durs.sort_unstable();
            rids.sort_unstable();
            rids.dedup();
            groups.push(Group {
                thread: h.thread,
                range: h.range,
                kname: h.kname,
                ranges: rids.len() as u32,
                n: durs.len() as u32,
                style: h.style,
                total: Stat::of_sorted(durs).total,
                at: at as u64,
                ranks: [rank_of(h.range), rank_of(h.kname)],
            });
            i = j;
        }
        drop(hits);
        drop(rank);
        // the threads renumbered in (pid, tid) order
        let mut order: Vec<u32> = (0..threads.len() as u32).collect();
        order.sort_unstable_by_key(|&t| threads[t as usize]);
        let mut renumber = vec![NONE; threads.len()];
        for (new, &old) in order.iter().enumerate() {
            renumber[old as usize] = new as u32;
        }
        let threads: Vec<(u64, u64)> = order.iter().map(|&t| threads[t as usize]).collect();
        groups.par_iter_mut().for_each(|r| {
            r.thread = renumber.get(r.thread as usize).copied().unwrap_or(NONE);
        });
        // (no thread first)
        groups.par_sort_unstable_by(|a, b| {
            (a.ranks[0], a.thread.wrapping_add(1))
                .cmp(&(b.ranks[0], b.thread.wrapping_add(1)))
                .then(b.total.cmp(&a.total))
                .then(a.style.cmp(&b.style))
                .then(a.ranks[1].cmp(&b.ranks[1]))
        });
        // the durations gathered in output order
        let mut durs: Vec<i64> = Vec::with_capacity(grouped.len());
        let mut ends: Vec<u64> = Vec::with_capacity(groups.len());
        let mut rows: Vec<KernRow> = Vec::with_capacity(groups.len());
        for g in groups {
            let at = g.at as usize;
            durs.extend_from_slice(grouped.get(at..at + g.n as usize).unwrap_or(&[]));
            ends.push(durs.len() as u64);
            rows.push(KernRow {
                thread: g.thread,
                range: g.range,
                kname: g.kname,
                ranges: g.ranges,
                style: g.style,
            });
        }
        drop(grouped);
        t.source = Some(Box::new(KernRows {
            rows,
            durs,
            ends,
            threads,
        }));
        t
    })
}

/// Most ids in a `RangeStack` cell (real traces nest over 1400 deep), and
/// in all of them together (a hostile file could nest a million ranges).
const MAX_STACK: usize = 4096;
const MAX_STACK_TOTAL: usize = 50_000_000;

/// `nvtx_gpu_proj_sum` and `nvtx_gpu_proj_trace`.
pub fn gpu_proj(v: &View<'_>, trace: bool) -> Table {
    let name = if trace {
        "nvtx_gpu_proj_trace"
    } else {
        "nvtx_gpu_proj_sum"
    };
    let cols = if trace {
        vec![
            col("Name", Unit::None),
            col("Projected Start", Unit::Timestamp),
            col("Projected Duration", Unit::Duration),
            col("Orig Start", Unit::Timestamp),
            col("Orig Duration", Unit::Duration),
            col("Style", Unit::None),
            col("PID", Unit::None),
            col("TID", Unit::None),
            col("NumGPUOps", Unit::None),
            col("Lvl", Unit::None),
            col("NumChild", Unit::None),
            col("RangeId", Unit::None),
            col("ParentId", Unit::None),
            col("RangeStack", Unit::None),
        ]
    } else {
        vec![
            col("Range", Unit::None),
            col("Style", Unit::None),
            col("Total Proj Time", Unit::Duration),
            col("Total Range Time", Unit::Duration),
            col("Range Instances", Unit::None),
            col("Proj Avg", Unit::Duration),
            col("Proj Med", Unit::Duration),
            col("Proj Min", Unit::Duration),
            col("Proj Max", Unit::Duration),
            col("Proj StdDev", Unit::Duration),
            col("Total GPU Ops", Unit::None),
            col("Avg GPU Ops", Unit::None),
            col("Avg Range Lvl", Unit::None),
            col("Avg Num Child", Unit::None),
        ]
    };
    let t = Table::new(name, title(name), cols);
    if v.nvtx.is_none() {
        return no_data(t, "NV Tools Extension (NVTX) data");
    }
    let Some(api) = v.api.as_deref() else {
        return no_data(t, "CUDA API data");
    };
    if v.kernels.is_none() && v.memops.is_none() {
        return no_data(t, "GPU operation data");
    }
    proj_rows(t, v, api, trace)
}

/// [`gpu_proj`]'s rows: the trace's (`trace`) or the sums'.
fn proj_rows(mut t: Table, v: &View<'_>, api: &[ApiRow], trace: bool) -> Table {
    let (ranges, pr) = projection(v, api);
    let Projection {
        proj,
        nops,
        level,
        children,
        parent,
        outside,
    } = pr;
    if trace {
        // the range stacks: past MAX_STACK levels (or once the total budget
        // is spent, in range order: from range `cut_from` on) only the
        // innermost ids, after `:...`
        let mut rows: Vec<u32> = Vec::new();
        let mut stack_budget = MAX_STACK_TOTAL;
        let mut cut_from = NONE;
        for (i, &n) in nops.iter().enumerate() {
            if n == 0 {
                continue;
            }
            if stack_budget == 0 && cut_from == NONE {
                cut_from = i as u32;
            }
            let cap = if stack_budget > 0 { MAX_STACK } else { 1 };
            let len = (level[i] as usize + 1).min(cap);
            stack_budget = stack_budget.saturating_sub(len);
            rows.push(i as u32);
        }
        // nsys's ORDER BY names the headings without their unit suffix, so
        // SQLite sorts by constants and the rows come in range-id order
        // (the row outside every range first): rprof keeps that order
        let (ranges, threads) = ranges.to_trace();
        if !rows.is_sorted_by_key(|&r| ranges[r as usize].id) {
            rows.par_sort_by_key(|&r| ranges[r as usize].id);
        }
        let outside = outside.map(|(s0, e0, mut corr, pid, tid)| {
            corr.sort_unstable();
            corr.dedup();
            (s0, e0, corr.len() as i64, pid, tid)
        });
        t.source = Some(Box::new(ProjTraceRows {
            rows,
            cut_from,
            outside,
            ranges,
            threads,
            proj,
            nops,
            level,
            children,
            parent,
        }));
        return t;
    }
    drop(parent);
    // groups by (name, style), by sorting (key, projected duration, range);
    // each range's own figures ride along, read in range order here rather
    // than looked up in name order below (four cache misses a range)
    let mut pairs: Vec<ProjPair> = proj
        .iter()
        .enumerate()
        .filter_map(|(i, &(ps, pe))| {
            if nops.get(i).is_none_or(|&n| n == 0) {
                return None;
            }
            let r = ranges.at(i);
            Some(ProjPair {
                name: r.name,
                style: r.style,
                range: i as u32,
                dur: pe - ps,
                range_len: r.end - r.start,
                ops: nops[i],
                level: level[i],
                children: children[i],
            })
        })
        .collect();
    drop((ranges, proj, nops, level, children));
    pairs.par_sort_unstable_by_key(|p| (p.name, p.style, p.dur, p.range));
    // where each group of pairs starts (they are sorted by group), then the
    // groups summarised side by side, each row made in its place (made in
    // pieces and joined, the rows were copied twice: a share of the
    // report's time)
    let mut starts: Vec<usize> = Vec::new();
    for (i, p) in pairs.iter().enumerate() {
        if i == 0 || (p.name, p.style) != (pairs[i - 1].name, pairs[i - 1].style) {
            starts.push(i);
        }
    }
    starts.push(pairs.len());
    // a row is its group's total, name, number and size; its
    // other figures are worked out as it is written (the whole row, 104
    // bytes, made millions of rows to fill and sort)
    let mut rows: Vec<ProjSumRow> = starts
        .par_windows(2)
        .enumerate()
        .map(|(g, w)| proj_sum_row(&pairs, w[0]..w[1], g))
        .collect();
    // nsys: total (desc), then the name's bytes and the style; rows of
    // equal totals are put in that order run by run (see `range_sum`)
    let names = &v.data.names;
    rows.par_sort_unstable_by_key(|r| (std::cmp::Reverse(r.total), r.name, r.style));
    rows.par_chunk_by_mut(|a, b| a.total == b.total)
        .filter(|run| run.len() > 1)
        .for_each(|run| {
            let ranks = tied_ranks(names, run.iter().map(|r| r.name));
            for r in run.iter_mut() {
                r.name = rank_in(&ranks, r.name);
            }
            run.sort_unstable_by_key(|r| (r.name, r.style));
        });
    // the pairs in output order, each row's figures worked out from its
    // run of them as the row is written (made beforehand, in output
    // order, the rows' figures were 96 bytes a row of fresh memory; worked
    // out from the pairs in group order, they were read at random). Each
    // pair is given its row's place in `range`, then the pairs are sorted
    // by it in place: gathered into a second vector, the pairs were held
    // twice, 0.3 GB of the 3 M-kernel export's peak. (A range's index only
    // broke ties of equal durations within a group, whose figures do not
    // depend on the order of those.)
    let mut place = vec![0u32; rows.len()];
    let mut ends: Vec<u32> = Vec::with_capacity(rows.len());
    let mut end = 0u32;
    for (i, r) in rows.iter().enumerate() {
        if let Some(p) = place.get_mut(r.group as usize) {
            *p = i as u32;
        }
        end = end.saturating_add(r.len);
        ends.push(end);
    }
    drop(rows);
    for (g, w) in starts.windows(2).enumerate() {
        let row = place.get(g).copied().unwrap_or(NONE);
        for p in pairs.get_mut(w[0]..w[1]).unwrap_or(&mut []) {
            p.range = row;
        }
    }
    drop((place, starts));
    pairs.par_sort_unstable_by_key(|p| (p.range, p.dur));
    t.source = Some(Box::new(ProjSumRows { pairs, ends }));
    t
}

/// What `nvtx_gpu_proj_sum` and `_trace` know of each range.
struct Projection {
    /// first start, last end of the range's GPU operations: a range has
    /// them iff it has operations (`nops` above 0, counted over the same
    /// calls)
    proj: Vec<(i64, i64)>,
    /// distinct correlation ids
    nops: Vec<u32>,
    level: Vec<u32>,
    /// children with GPU operations
    children: Vec<u32>,
    parent: Vec<u32>,
    /// operations launched outside every range: first start, last end,
    /// their correlation ids, pid and tid of the first such call
    outside: Option<(i64, i64, Vec<i64>, u64, u64)>,
}

/// The ranges' index and what each range projects onto the GPU.
fn projection<'s>(v: &'s View<'_>, api: &[ApiRow]) -> (Ranges<'s>, Projection) {
    let ranges = Ranges::of(v);
    // the ranges' lists by thread beside the calls' index (each a single
    // pass of its own)
    let (by_thread, (index, ops, spans, (slot, queries))) = rayon::join(
        || ByThread::new(&ranges),
        || {
            let index = api_index(api);
            // GPU operations: (start, end, pid, correlation)
            let ops: Vec<GpuOp> = v
                .kernels
                .as_deref()
                .unwrap_or(&[])
                .iter()
                .map(|k| (k.start_ns, k.end_ns, k.pid, k.correlation))
                .chain(
                    v.memops
                        .as_deref()
                        .unwrap_or(&[])
                        .iter()
                        .map(|m| (m.start_ns, m.end_ns, m.pid, m.correlation)),
                )
                .collect();
            let keys: Vec<Option<(u64, i64)>> = ops.iter().map(|o| o.2.map(|p| (p, o.3))).collect();
            let spans = index.spans(&keys);
            let q = call_queries(&index, &spans);
            (index, ops, spans, q)
        },
    );
    let projection = project((ranges, by_thread), index, (ops, spans), slot, queries);
    (ranges, projection)
}

/// A GPU operation as the projection reads it: start, end, pid,
/// correlation id.
type GpuOp = (i64, i64, Option<u64>, i64);

/// Each range's parent ([`parents`]) and level: the number of its
/// ancestors.
fn parents_and_levels(ranges: &Ranges<'_>, by_thread: &ByThread) -> (Vec<u32>, Vec<u32>) {
    let parent = parents(ranges, by_thread);
    // levels: the number of ancestors (a parent encloses its child, or has
    // the same extent and a lower id, so the chains end)
    let mut level = vec![u32::MAX; ranges.len()];
    let mut chain = Vec::new();
    for i in 0..ranges.len() {
        let mut c = i;
        while level[c] == u32::MAX && chain.len() <= ranges.len() {
            chain.push(c);
            match parent[c] {
                NONE => break,
                p => c = p as usize,
            }
        }
        let mut l = if level[c] == u32::MAX {
            0
        } else {
            level[c] + 1
        };
        while let Some(x) = chain.pop() {
            if level[x] == u32::MAX {
                level[x] = l;
            }
            l = level[x] + 1;
        }
    }
    (parent, level)
}

/// [`projection`] once the ranges and the calls are indexed. Each index is
/// let go once it has served (held to the end, the calls' index and the
/// ranges' lists were 0.14 GB of the 3 M-kernel export's peak).
fn project(
    (ranges, by_thread): (Ranges<'_>, ByThread),
    index: super::ApiIndex<'_>,
    (ops, spans): (Vec<GpuOp>, Vec<std::ops::Range<usize>>),
    slot: Vec<u32>,
    queries: Vec<Query>,
) -> Projection {
    // per launching call (a query): first start and last end of the
    // operations it launched, and its correlation id. Each range's
    // figures are then gathered from its calls, not from every
    // (operation, call, range): the (range, correlation id) pairs that
    // counted the distinct ids were tens of millions of bytes to fill
    // and sort on the 1 M-kernel export, most of them written once.
    // Made before the ranges are searched, so that the operations, their
    // calls and the calls' index are let go first (held beside the
    // search, they were 0.33 GB of the 3 M-kernel export's peak).
    let mut by_call: Vec<Option<(i64, i64, i64)>> = vec![None; queries.len()];
    for (op, span) in ops.iter().zip(&spans) {
        for p in span.clone() {
            let Some(call) = slot.get(p).and_then(|&q| by_call.get_mut(q as usize)) else {
                continue;
            };
            match call {
                Some(c) => {
                    c.0 = c.0.min(op.0);
                    c.1 = c.1.max(op.1);
                }
                None => *call = Some((op.0, op.1, index.at(p).correlation)),
            }
        }
    }
    drop((ops, spans, index, slot));
    // each range's parent and level beside the enclosing ranges of the
    // calls (neither needs the other)
    let (found, (parent, level)) = rayon::join(
        || Found::new(&ranges, &by_thread, &queries),
        || parents_and_levels(&ranges, &by_thread),
    );
    drop(by_thread);
    // operations launched outside every range: nsys's trace prints them as
    // one row without a range (first start, last end, distinct ids; pid and
    // tid of the first such call). Calls are numbered in the order the
    // operations first name them, so the first such call is the one of
    // the lowest number.
    let mut outside: Option<(i64, i64, Vec<i64>, u64, u64)> = None;
    for (q, call) in by_call.iter_mut().enumerate() {
        if !found.get(q as u32).is_empty() {
            continue;
        }
        let Some((s0, e0, corr)) = call.take() else {
            continue;
        };
        let o = outside.get_or_insert_with(|| {
            let (pid, tid) = queries.get(q).map_or((0, 0), |c| (c.0, c.1));
            (s0, e0, Vec::new(), pid, tid)
        });
        o.0 = o.0.min(s0);
        o.1 = o.1.max(e0);
        o.2.push(corr);
    }
    drop(queries);
    // per range: first start, last end (the calls' own, merged; a range
    // has them iff it has operations: `nops` counts over the same calls)
    let mut proj: Vec<(i64, i64)> = vec![(i64::MAX, i64::MIN); ranges.len()];
    for (q, call) in by_call.iter().enumerate() {
        let Some((s, e, _)) = *call else {
            continue;
        };
        for &ri in found.get(q as u32) {
            let p = &mut proj[ri as usize];
            p.0 = p.0.min(s);
            p.1 = p.1.max(e);
        }
    }
    // distinct correlation ids per range: the calls grouped by id, and
    // a range counted once per id however many of its calls carry it
    let mut by_corr: Vec<(i64, u32)> = by_call
        .iter()
        .enumerate()
        .filter_map(|(q, call)| call.map(|c| (c.2, q as u32)))
        .collect();
    drop(by_call);
    by_corr.par_sort_unstable();
    let mut nops = vec![0u32; ranges.len()];
    let mut union: Vec<u32> = Vec::new();
    for group in by_corr.chunk_by(|a, b| a.0 == b.0) {
        if let [(_, q)] = group {
            for &ri in found.get(*q) {
                nops[ri as usize] += 1;
            }
            continue;
        }
        union.clear();
        for (_, q) in group {
            union.extend_from_slice(found.get(*q));
        }
        union.sort_unstable();
        union.dedup();
        for &ri in &union {
            nops[ri as usize] += 1;
        }
    }
    drop(by_corr);
    let mut children = vec![0u32; ranges.len()];
    for (i, &p) in parent.iter().enumerate() {
        if p != NONE && nops[i] > 0 {
            children[p as usize] += 1;
        }
    }
    Projection {
        proj,
        nops,
        level,
        children,
        parent,
        outside,
    }
}

/// A range with GPU operations, as `nvtx_gpu_proj_sum` groups it.
#[derive(Clone, Copy)]
struct ProjPair {
    name: NameId,
    style: RangeStyle,
    /// the range's index, which orders equal durations; once the rows are
    /// in order, the place of the pair's row
    range: u32,
    /// projected duration
    dur: i64,
    range_len: i64,
    ops: u32,
    level: u32,
    children: u32,
}

/// The row of the group `pairs[at]` (sorted by duration), the `number`th.
fn proj_sum_row(pairs: &[ProjPair], at: std::ops::Range<usize>, number: usize) -> ProjSumRow {
    let group = pairs.get(at.clone()).unwrap_or(&[]);
    let sum: i128 = group.iter().map(|p| i128::from(p.dur)).sum();
    let (name, style) = group
        .first()
        .map_or((NONE, RangeStyle::PushPop), |p| (p.name, p.style));
    ProjSumRow {
        // as Stat's total: the exact sum, saturated
        total: sum.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
        name,
        style,
        group: number as u32,
        len: at.len() as u32,
    }
}

/// One row of `nvtx_gpu_proj_sum`: its group's total, the name (for the
/// order; once ordered among the rows of its total, its rank there), its
/// style, its group's number and size.
struct ProjSumRow {
    total: i64,
    name: NameId,
    style: RangeStyle,
    /// the group's number, in pair order
    group: u32,
    len: u32,
}

/// `nvtx_gpu_proj_sum`'s rows: row `i` is the run
/// `pairs[ends[i - 1]..ends[i]]`, sorted by projected duration.
struct ProjSumRows {
    pairs: Vec<ProjPair>,
    ends: Vec<u32>,
}

impl RowSource for ProjSumRows {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn fill(&self, i: usize, _names: &Names, out: &mut [Cell]) {
        let a = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        let b = self.ends.get(i).map_or(a, |&b| b as usize);
        let group = self.pairs.get(a..b).unwrap_or(&[]);
        let Some(first) = group.first() else {
            out.fill(Cell::Null);
            return;
        };
        let stat = match group {
            [one] => Stat::of_sorted(&[one.dur]),
            _ => Stat::of_sorted(&group.iter().map(|p| p.dur).collect::<Vec<i64>>()),
        };
        let mut range_total = 0i128;
        let (mut ops, mut levels, mut children) = (0i64, 0i64, 0i64);
        for p in group {
            range_total += i128::from(p.range_len);
            ops += i64::from(p.ops);
            levels += i64::from(p.level);
            children += i64::from(p.children);
        }
        let count = stat.count;
        let avg = |x: i64| Cell::Round1(round1(x as f64 / count.max(1) as f64));
        out[0] = Cell::Name(first.name);
        set_text(&mut out[1], first.style.as_str());
        out[2] = Cell::Int(stat.total);
        out[3] = Cell::Int(range_total.clamp(0, i128::from(i64::MAX)) as i64);
        out[4] = Cell::Int(count);
        stat.dur_cells_into(&mut out[5..10]);
        out[10] = Cell::Int(ops);
        out[11] = avg(ops);
        out[12] = avg(levels);
        out[13] = avg(children);
    }
}

/// The rows of `nvtx_gpu_proj_trace`: the row outside every range first,
/// then each range with GPU operations, in range-id order.
struct ProjTraceRows {
    /// range indices
    rows: Vec<u32>,
    /// the first range whose stack holds only its own id (after `:...`)
    /// when it has a parent: the total budget of ids was spent before it
    cut_from: u32,
    /// first start, last end, distinct ids, pid, tid
    outside: Option<(i64, i64, i64, u64, u64)>,
    ranges: Vec<TraceRange>,
    /// the ranges' threads by number: (pid, tid)
    threads: Vec<(u64, u64)>,
    proj: Vec<(i64, i64)>,
    nops: Vec<u32>,
    level: Vec<u32>,
    children: Vec<u32>,
    parent: Vec<u32>,
}

impl RowSource for ProjTraceRows {
    fn len(&self) -> usize {
        self.rows.len() + usize::from(self.outside.is_some())
    }

    fn fill(&self, i: usize, _names: &Names, out: &mut [Cell]) {
        let i = match (self.outside, i) {
            (Some((s0, e0, n, pid, tid)), 0) => {
                out.fill(Cell::Null);
                out[1] = Cell::Int(s0);
                out[2] = Cell::Int(e0 - s0);
                out[6] = Cell::Int(pid as i64);
                out[7] = Cell::Int(tid as i64);
                out[8] = Cell::Int(n);
                out[10] = Cell::Int(0);
                return;
            }
            (Some(_), i) => i - 1,
            (None, i) => i,
        };
        let ri = self.rows[i];
        let cap = if ri < self.cut_from { MAX_STACK } else { 1 };
        let ri = ri as usize;
        let r = &self.ranges[ri];
        let (pid, tid) = self
            .threads
            .get(r.thread as usize)
            .copied()
            .unwrap_or((u64::MAX, u64::MAX));
        let (ps, pe) = self.proj[ri];
        out[0] = Cell::Name(r.name);
        out[1] = Cell::Int(ps);
        out[2] = Cell::Int(pe - ps);
        out[3] = Cell::Int(r.start);
        out[4] = Cell::Int(r.end - r.start);
        set_text(&mut out[5], r.style.as_str());
        out[6] = Cell::Int(pid as i64);
        out[7] = Cell::Int(tid as i64);
        out[8] = Cell::Int(i64::from(self.nops[ri]));
        out[9] = Cell::Int(i64::from(self.level[ri]));
        out[10] = Cell::Int(i64::from(self.children[ri]));
        out[11] = Cell::Int(r.id);
        out[12] = match self.parent[ri] {
            NONE => Cell::Null,
            p => Cell::Int(self.ranges[p as usize].id),
        };
        // the ids from the root
        let mut stack: Vec<i64> = Vec::new();
        let mut cur = ri as u32;
        let mut cut = false;
        loop {
            if stack.len() == cap {
                cut = true;
                break;
            }
            stack.push(self.ranges[cur as usize].id);
            match self.parent[cur as usize] {
                NONE => break,
                p => cur = p,
            }
        }
        if !matches!(out[13], Cell::Text(_)) {
            out[13] = Cell::Text(String::new());
        }
        if let Cell::Text(text) = &mut out[13] {
            use std::fmt::Write as _;
            text.clear();
            if cut {
                text.push_str(":...");
            }
            for id in stack.iter().rev() {
                let _ = write!(text, ":{id}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rank_names` against a plain sort of the texts by their bytes, on
    /// names that agree on 16 and 32 bytes, end inside a key, hold NUL and
    /// non-ASCII bytes.
    #[test]
    fn ranks_names_by_their_bytes() {
        let texts = [
            "aten::empty, op_id = 990346",
            "aten::empty, op_id = 99034",
            "aten::empty, op_id = 9903460",
            "aten::empty, op_",
            "aten::empty, op_\0",
            "aten::empty, op_\0x",
            "aten::empty, op_id = 990346, and then some more bytes",
            "aten::empty, op_id = 990346, and then some more bytez",
            "",
            "a",
            "\u{e9}t\u{e9}",
            "\u{ff}",
            "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
            "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
            "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzy",
            "unused by the rows",
        ];
        let mut names = Names::default();
        let ids: Vec<NameId> = texts.iter().map(|t| names.intern(t)).collect();
        let used = &ids[..ids.len() - 1];
        let rank = rank_names(&names, used.iter().rev().copied());
        let mut expected: Vec<&str> = texts[..texts.len() - 1].to_vec();
        expected.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        let mut got: Vec<(u32, &str)> = used
            .iter()
            .map(|&id| (rank[id as usize], names.get(id)))
            .collect();
        got.sort_unstable();
        let ranks: Vec<u32> = got.iter().map(|g| g.0).collect();
        assert_eq!(ranks, (0..used.len() as u32).collect::<Vec<_>>());
        assert_eq!(got.into_iter().map(|g| g.1).collect::<Vec<_>>(), expected);
        assert_eq!(rank[ids[ids.len() - 1] as usize], u32::MAX);
    }

    /// More names than one chunk of the parallel key extraction, sharing
    /// prefixes of 16 and 32 bytes, against a plain sort by bytes.
    #[test]
    fn ranks_many_names_by_their_bytes() {
        let mut names = Names::default();
        let texts: Vec<String> = (0..40_000u32)
            .map(|k| match k % 3 {
                0 => format!(
                    "aten::empty, op_id = {}",
                    k.wrapping_mul(2_654_435_761) % 100_000
                ),
                1 => format!("aten::empty, op_id = 0000000000{k}"),
                _ => format!("{}", k.wrapping_mul(40_503)),
            })
            .collect();
        let ids: Vec<NameId> = texts.iter().map(|t| names.intern(t)).collect();
        let rank = rank_names(&names, ids.iter().copied());
        let mut distinct: Vec<&str> = texts.iter().map(String::as_str).collect();
        distinct.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        distinct.dedup();
        for (t, &id) in texts.iter().zip(&ids) {
            let r = rank[id as usize] as usize;
            assert_eq!(distinct[r], t.as_str());
        }
    }

    proptest::proptest! {
        /// Runs of every size around the small-run and the parallel-pass
        /// limits, of names that end around 16, 32, 48 and 64 bytes (on
        /// both sides of a key's end, one key or two deep): the ranks order
        /// the names as a plain sort by bytes does.
        #[test]
        fn ranks_runs_of_any_size_by_their_bytes(
            parts in proptest::collection::vec((0usize..5, 0u32..400, 0u32..3), 1..400),
            big in 0usize..2,
        ) {
            let prefixes = [
                "",
                "aten::empty, op_",
                "aten::empty, op_id = 1234567890",
                "aten::empty, op_id = 1234567890, seq = 98765432",
                "aten::empty, op_id = 1234567890, seq = 98765432, stream = 1234",
            ];
            let mut texts: Vec<String> = parts
                .iter()
                .map(|&(p, n, tail)| format!("{}{n}{}", prefixes[p], "x".repeat(tail as usize)))
                .collect();
            // now and then one run past the parallel passes' limit, whose
            // names come in pairs alike in their first 32 bytes (small runs
            // of a parallel pass)
            if big == 1 {
                texts.extend((0..PARALLEL_RUN as u32 / 2 + 7).flat_map(|n| {
                    ["b", "a"].map(|end| format!("{}{n:016}{end}", prefixes[1]))
                }));
            }
            let mut names = Names::default();
            let ids: Vec<NameId> = texts.iter().map(|t| names.intern(t)).collect();
            let rank = rank_names(&names, ids.iter().rev().copied());
            let mut distinct: Vec<&str> = texts.iter().map(String::as_str).collect();
            distinct.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            distinct.dedup();
            for (t, &id) in texts.iter().zip(&ids) {
                proptest::prop_assert_eq!(distinct[rank[id as usize] as usize], t.as_str());
            }
        }
    }

    /// `parents` by its definition, one range against every other: the
    /// range of the same thread that holds it (and has not ended before it
    /// starts) with the least `(start - p.start) + (p.end - end)`, then the
    /// lowest id; a range of the same extent only with a lower id; among
    /// equals, the earlier start, then the earlier range.
    fn parents_by_definition(ranges: &[Ridx]) -> Vec<u32> {
        ranges
            .iter()
            .enumerate()
            .map(|(ci, c)| {
                ranges
                    .iter()
                    .enumerate()
                    .filter(|&(pi, p)| {
                        pi != ci
                            && (p.pid, p.tid) == (c.pid, c.tid)
                            && p.start <= c.start
                            && p.end >= c.start
                            && p.end >= c.end
                            && !(p.start == c.start && p.end == c.end && p.id > c.id)
                    })
                    .min_by_key(|&(pi, p)| {
                        (
                            (c.start - p.start).saturating_add(p.end - c.end),
                            p.id,
                            p.start,
                            pi,
                        )
                    })
                    .map_or(NONE, |(pi, _)| pi as u32)
            })
            .collect()
    }

    fn ridx(id: i64, tid: u64, start: i64, end: i64) -> Ridx {
        Ridx {
            id,
            start,
            end,
            pid: 1,
            tid,
            name: 0,
            style: RangeStyle::PushPop,
        }
    }

    proptest::proptest! {
        /// Nested ranges (the stack sweep), with repeated extents, against
        /// the definition.
        #[test]
        fn nested_parents_by_definition(
            spans in proptest::collection::vec((0u64..2, 0i64..6, 0i64..40, 0u8..4), 0..50),
        ) {
            // each range inside the last open one of its thread, or after
            // it; now and then a copy of the one before
            let mut ranges: Vec<Ridx> = Vec::new();
            let mut open: [Vec<(i64, i64)>; 2] = [vec![(0, 10_000)], vec![(0, 10_000)]];
            let mut at = [0i64; 2];
            for (i, &(t, gap, len, kind)) in spans.iter().enumerate() {
                let stack = &mut open[t as usize];
                let cur = &mut at[t as usize];
                let id = (i as i64 * 7) % 50;
                if kind == 0 && let Some(last) = ranges.iter().rev().find(|r| r.tid == t) {
                    ranges.push(ridx(id, t, last.start, last.end));
                    continue;
                }
                // close the open ranges that end before the next start
                let start = *cur + gap;
                while stack.len() > 1 && stack.last().is_some_and(|&(_, e)| e <= start) {
                    stack.pop();
                }
                let (_, hi) = *stack.last().unwrap_or(&(0, 10_000));
                if start > hi {
                    continue;
                }
                let end = (start + len).min(hi);
                ranges.push(ridx(id, t, start, end));
                *cur = start;
                if kind != 1 {
                    stack.push((start, end));
                }
            }
            // ids unique, so that the definition's ties are the sweep's
            for (i, r) in ranges.iter_mut().enumerate() {
                r.id = (i as i64 * 37) % 101;
            }
            proptest::prop_assert_eq!(
                parents(&ranges[..], &ByThread::new(&ranges[..])),
                parents_by_definition(&ranges)
            );
        }

        /// Anything: crossing, touching, inverted ranges, repeated ids.
        #[test]
        fn any_parents_by_definition(
            rs in proptest::collection::vec((0u64..2, 0i64..30, -3i64..30, 0i64..8), 0..40),
        ) {
            let ranges: Vec<Ridx> = rs
                .iter()
                .map(|&(t, a, d, id)| ridx(id, t, a, a + d))
                .collect();
            proptest::prop_assert_eq!(
                parents(&ranges[..], &ByThread::new(&ranges[..])),
                parents_by_definition(&ranges)
            );
        }
    }
}
