//! Time on one GPU: how much of a span had at least one kernel running
//! (utilization), overall and per fixed-width bucket, and a time-weighted
//! mean of a per-kernel value (SM efficiency, occupancy).

/// A kernel's GPU interval with a value to weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Busy {
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
}

/// Length of the union of the intervals clipped to `[lo, hi)`, ns.
pub fn union_ns(intervals: &[Busy], lo: i64, hi: i64) -> i64 {
    let mut v: Vec<(i64, i64)> = intervals
        .iter()
        .map(|b| (b.start_ns.max(lo), b.end_ns.min(hi)))
        .filter(|(a, b)| b > a)
        .collect();
    v.sort_unstable();
    let mut total = 0i64;
    let mut cur: Option<(i64, i64)> = None;
    for (a, b) in v {
        match cur {
            Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                total += cb - ca;
                cur = Some((a, b));
            }
            None => cur = Some((a, b)),
        }
    }
    if let Some((a, b)) = cur {
        total += b - a;
    }
    total
}

/// Busy time per bucket of `width_ns` from `lo` to `hi` (the last bucket
/// may be shorter). Returns `(bucket start, bucket length, busy)`.
pub fn buckets(intervals: &[Busy], lo: i64, hi: i64, width_ns: i64) -> Vec<(i64, i64, i64)> {
    let mut out = Vec::new();
    if width_ns <= 0 || hi <= lo {
        return out;
    }
    // sort once, then sweep; a bucket sees the intervals overlapping it
    let mut v: Vec<Busy> = intervals.to_vec();
    v.sort_unstable_by_key(|b| (b.start_ns, b.end_ns));
    let mut first = 0usize;
    let mut start = lo;
    while start < hi {
        let end = (start + width_ns).min(hi);
        while first < v.len() && v[first].end_ns <= start && v[first].start_ns <= start {
            first += 1;
        }
        let overlapping: Vec<Busy> = v[first..]
            .iter()
            .take_while(|b| b.start_ns < end)
            .filter(|b| b.end_ns > start)
            .copied()
            .collect();
        out.push((start, end - start, union_ns(&overlapping, start, end)));
        start = end;
    }
    out
}

/// Σ value·duration / Σ duration (`None` when nothing has a value).
pub fn time_weighted(items: impl IntoIterator<Item = (i64, Option<f64>)>) -> Option<f64> {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (dur, v) in items {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            num += v * dur.max(0) as f64;
            den += dur.max(0) as f64;
        }
    }
    (den > 0.0).then(|| num / den)
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

    #[test]
    fn weighted_mean() {
        assert_eq!(
            time_weighted([(10, Some(1.0)), (30, Some(0.5)), (5, None)]),
            Some(0.625)
        );
        assert_eq!(time_weighted([(10, None)]), None);
    }
}
