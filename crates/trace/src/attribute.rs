//! Which NVTX ranges enclose each launch call.
//!
//! A range encloses a kernel when it encloses the kernel's CPU launch call on
//! the same thread, strictly: `range.start < call.start` and `range.end >
//! call.end` (PyProf's test, semantics §3.6). Ranges come outermost first:
//! by start, then by end descending (so of two ranges pushed in the same
//! nanosecond the outer one is first), then in file order.
//!
//! Instead of PyProf's one query per kernel, each thread's ranges and launch
//! calls are sorted once and swept together, threads in parallel:
//! O((launches + ranges) log n + output).

use rayon::prelude::*;

use crate::model::{Launch, Range};

/// Enclosing ranges per launch call, as indices into the trace's ranges,
/// outermost first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Enclosing {
    offsets: Vec<u32>,
    items: Vec<u32>,
}

impl Enclosing {
    /// The ranges enclosing launch `launch`.
    pub fn of(&self, launch: u32) -> &[u32] {
        let i = launch as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.items.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Number of launches covered.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// True when no launches are covered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A launch, copied next to its sort key so that sorting and the sweep read
/// memory in order instead of jumping through the trace.
#[derive(Clone, Copy)]
struct Entry {
    thread: u64,
    start_ns: i64,
    end_ns: i64,
    index: u32,
}

/// Sort `ranges` in place into attribution order (per thread, outermost
/// first: start, then end descending, then text handle, i.e. file order),
/// then attribute every
/// launch to the ranges enclosing it. The returned indices refer to the
/// sorted `ranges`. Sorting in place costs no memory beyond the ranges
/// themselves, which matters at tens of millions of ranges.
pub fn attribute(launches: &[Launch], ranges: &mut [Range]) -> Enclosing {
    ranges
        .par_sort_unstable_by_key(|r| (r.thread, r.start_ns, std::cmp::Reverse(r.end_ns), r.text));
    let rs: &[Range] = ranges;
    let mut ls: Vec<Entry> = launches
        .iter()
        .enumerate()
        .map(|(i, l)| Entry {
            thread: l.thread,
            start_ns: l.start_ns,
            end_ns: l.end_ns,
            index: i as u32,
        })
        .collect();
    ls.par_sort_unstable_by_key(|e| (e.thread, e.start_ns, e.end_ns, e.index));

    // one group of launches per thread
    let mut groups: Vec<&[Entry]> = Vec::new();
    let mut rest = ls.as_slice();
    while let Some(first) = rest.first() {
        let t = first.thread;
        let n = rest.partition_point(|e| e.thread == t);
        let (g, r) = rest.split_at(n);
        groups.push(g);
        rest = r;
    }

    let per_group: Vec<(Vec<u32>, Vec<u32>)> = groups
        .par_iter()
        .map(|g| {
            let t = g[0].thread;
            let lo = rs.partition_point(|e| e.thread < t);
            let hi = rs.partition_point(|e| e.thread <= t);
            sweep(g, &rs[lo..hi], lo as u32)
        })
        .collect();

    let mut counts = vec![0u32; launches.len()];
    for (g, (cnt, _)) in groups.iter().zip(&per_group) {
        for (l, &c) in g.iter().zip(cnt) {
            counts[l.index as usize] = c;
        }
    }
    let mut offsets = Vec::with_capacity(launches.len() + 1);
    let mut acc = 0u32;
    offsets.push(0);
    for c in &counts {
        acc += c;
        offsets.push(acc);
    }
    let mut items = vec![0u32; acc as usize];
    for (g, (cnt, found)) in groups.iter().zip(&per_group) {
        let mut pos = 0usize;
        for (l, &c) in g.iter().zip(cnt) {
            let dst = offsets[l.index as usize] as usize;
            items[dst..dst + c as usize].copy_from_slice(&found[pos..pos + c as usize]);
            pos += c as usize;
        }
    }
    Enclosing { offsets, items }
}

/// One thread: launches and ranges both sorted by start; `base` is the
/// index of the thread's first range. Returns the count per launch and the
/// concatenated enclosing lists (range indices).
fn sweep(group: &[Entry], thread_ranges: &[Range], base: u32) -> (Vec<u32>, Vec<u32>) {
    let mut counts = Vec::with_capacity(group.len());
    let mut found = Vec::new();
    // ranges that started before the current call and have not ended before
    // it, in start order (appending keeps the order): (end, index)
    let mut active: Vec<(i64, u32)> = Vec::new();
    let mut next = 0usize;
    for l in group {
        while let Some(r) = thread_ranges.get(next) {
            if r.start_ns >= l.start_ns {
                break;
            }
            active.push((r.end_ns, base + next as u32));
            next += 1;
        }
        // a range ending at or before this call's start encloses no later call
        active.retain(|&(end, _)| end > l.start_ns);
        let before = found.len();
        found.extend(
            active
                .iter()
                .filter(|&&(end, _)| end > l.end_ns)
                .map(|&(_, i)| i),
        );
        counts.push((found.len() - before) as u32);
    }
    (counts, found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strings::StrRef;
    use proptest::prelude::*;

    fn launch(thread: u64, start: i64, end: i64) -> Launch {
        Launch {
            start_ns: start,
            end_ns: end,
            thread,
            pid: 0,
            tid: 0,
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
        assert_eq!(orders(e.of(0)), [0, 2, 1]);
        assert_eq!(orders(e.of(1)), [0, 2, 3]);
        assert_eq!(orders(e.of(2)), [0]);
        assert_eq!(e.of(3), &[] as &[u32]);
        assert_eq!(e.of(99), &[] as &[u32]);
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
            for (i, w) in want.iter().enumerate() {
                let got: Vec<u32> = e.of(i as u32).iter().map(|&r| sorted[r as usize].text.0).collect();
                let want: Vec<u32> = w.iter().map(|&r| ranges[r as usize].text.0).collect();
                prop_assert_eq!(got, want);
            }
        }
    }
}
