//! Time on one GPU: how much of a span had at least one kernel running
//! (utilization), overall and per fixed-width bucket, and a time-weighted
//! mean of a per-kernel value (SM efficiency, occupancy).

/// A kernel's GPU interval, `[start_ns, end_ns)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Busy {
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
}

/// The union of `intervals` clipped to `[lo, hi)`, as sorted, disjoint,
/// non-touching intervals (empty ones dropped).
pub fn merge(intervals: &[Busy], lo: i64, hi: i64) -> Vec<Busy> {
    let mut v: Vec<Busy> = intervals
        .iter()
        .map(|b| Busy {
            start_ns: b.start_ns.max(lo),
            end_ns: b.end_ns.min(hi),
        })
        .filter(|b| b.end_ns > b.start_ns)
        .collect();
    v.sort_unstable();
    let mut out: Vec<Busy> = Vec::with_capacity(v.len());
    for b in v {
        match out.last_mut() {
            Some(last) if b.start_ns <= last.end_ns => last.end_ns = last.end_ns.max(b.end_ns),
            _ => out.push(b),
        }
    }
    out
}

/// Length of the union of the intervals clipped to `[lo, hi)`, ns: the
/// time at least one of them is running.
pub fn union_ns(intervals: &[Busy], lo: i64, hi: i64) -> i64 {
    merge(intervals, lo, hi)
        .iter()
        .map(|b| b.end_ns.saturating_sub(b.start_ns))
        .fold(0i64, i64::saturating_add)
}

/// Busy time per bucket of `width_ns` from `lo` to `hi` (the last bucket
/// may be shorter). Returns `(bucket start, bucket length, busy)`.
/// O(n log n + buckets): the union is built once and swept.
pub fn buckets(intervals: &[Busy], lo: i64, hi: i64, width_ns: i64) -> Vec<(i64, i64, i64)> {
    let mut out = Vec::new();
    if width_ns <= 0 || hi <= lo {
        return out;
    }
    let merged = merge(intervals, lo, hi);
    let mut i = 0usize;
    let mut start = lo;
    while start < hi {
        let end = start.saturating_add(width_ns).min(hi);
        let mut busy = 0i64;
        // intervals ending before this bucket were passed for good; one that
        // runs past the bucket's end is revisited by the next bucket
        while let Some(b) = merged.get(i) {
            if b.start_ns >= end {
                break;
            }
            busy = busy.saturating_add(b.end_ns.min(end).saturating_sub(b.start_ns.max(start)));
            if b.end_ns > end {
                break;
            }
            i += 1;
        }
        out.push((start, end.saturating_sub(start), busy));
        start = end;
    }
    out
}

/// Σ value·duration / Σ duration (`None` when nothing has a value).
pub fn time_weighted(items: impl IntoIterator<Item = (i64, Option<f64>)>) -> Option<f64> {
    let mut w = Weighted::default();
    for (dur, v) in items {
        w.add(dur, v);
    }
    w.mean()
}

/// A running duration-weighted mean: Σ value·duration / Σ duration over
/// the items that have a (finite) value. Sums in the order items are added,
/// so the result does not depend on thread count.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Weighted {
    /// Σ value·duration.
    pub sum: f64,
    /// Σ duration of the items with a value, ns.
    pub weight_ns: i64,
}

impl Weighted {
    /// Add an item of `dur_ns` (negative counts as 0) with `value`.
    pub fn add(&mut self, dur_ns: i64, value: Option<f64>) {
        if let Some(v) = value.filter(|v| v.is_finite()) {
            let d = dur_ns.max(0);
            self.sum += v * d as f64;
            self.weight_ns = self.weight_ns.saturating_add(d);
        }
    }

    /// The mean; `None` when no item with a value had any duration.
    pub fn mean(&self) -> Option<f64> {
        (self.weight_ns > 0).then(|| self.sum / self.weight_ns as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: i64, e: i64) -> Busy {
        Busy {
            start_ns: s,
            end_ns: e,
        }
    }

    #[test]
    fn union_merges_overlaps_and_clips() {
        let v = [b(0, 10), b(5, 20), b(30, 40), b(35, 36), b(50, 50)];
        assert_eq!(union_ns(&v, 0, 100), 30);
        assert_eq!(union_ns(&v, 8, 32), 14);
        assert_eq!(union_ns(&[], 0, 10), 0);
    }

    #[test]
    fn buckets_split_the_span() {
        let v = [b(0, 15), b(25, 30)];
        assert_eq!(
            buckets(&v, 0, 35, 10),
            vec![(0, 10, 10), (10, 10, 5), (20, 10, 5), (30, 5, 0)]
        );
        assert!(buckets(&v, 0, 35, 0).is_empty());
    }

    /// One long kernel over three buckets next to short ones: each bucket
    /// sees only its own part.
    #[test]
    fn buckets_with_a_long_interval() {
        let v = [b(5, 28), b(12, 14), b(29, 31), b(40, 45)];
        assert_eq!(
            buckets(&v, 0, 50, 10),
            vec![
                (0, 10, 5),
                (10, 10, 10),
                (20, 10, 9),
                (30, 10, 1),
                (40, 10, 5)
            ]
        );
        assert_eq!(merge(&v, 0, 50), vec![b(5, 28), b(29, 31), b(40, 45)]);
    }

    proptest::proptest! {
        /// The buckets add up to the union over the whole span.
        #[test]
        fn buckets_sum_to_the_union(v in proptest::collection::vec((0i64..1000, 0i64..200), 0..50), w in 1i64..300) {
            let v: Vec<Busy> = v.iter().map(|&(s, d)| b(s, s + d)).collect();
            let total: i64 = buckets(&v, 0, 1100, w).iter().map(|x| x.2).sum();
            proptest::prop_assert_eq!(total, union_ns(&v, 0, 1100));
        }
    }

    #[test]
    fn weighted_mean() {
        assert_eq!(
            time_weighted([(10, Some(1.0)), (30, Some(0.5)), (5, None)]),
            Some(0.625)
        );
        assert_eq!(time_weighted([(10, None)]), None);
    }
}
