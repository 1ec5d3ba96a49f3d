//! Interval algebra on one track: half-open `[start, end)` nanosecond
//! intervals, kept sorted and disjoint in an [`Intervals`] set.
//!
//! Everything the timeline views compute (busy time, compute ∩
//! communication, idle gaps, utilization buckets) is one of these
//! operations, each linear in its inputs after one sort.

/// A set of disjoint, sorted, non-empty half-open intervals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Intervals(Vec<(i64, i64)>);

impl Intervals {
    /// The empty set.
    pub fn new() -> Intervals {
        Intervals(Vec::new())
    }

    /// The union of any intervals (overlapping, touching, unsorted; empty or
    /// reversed ones are dropped).
    pub fn from_unsorted(mut v: Vec<(i64, i64)>) -> Intervals {
        v.retain(|(s, e)| e > s);
        v.sort_unstable();
        let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
        for (s, e) in v {
            match out.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => out.push((s, e)),
            }
        }
        Intervals(out)
    }

    /// The intervals, sorted and disjoint.
    pub fn as_slice(&self) -> &[(i64, i64)] {
        &self.0
    }

    /// Number of disjoint intervals.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Total covered length, ns.
    pub fn total(&self) -> i64 {
        self.0
            .iter()
            .fold(0i64, |a, (s, e)| a.saturating_add(e.saturating_sub(*s)))
    }

    /// First start and last end.
    pub fn span(&self) -> Option<(i64, i64)> {
        Some((self.0.first()?.0, self.0.last()?.1))
    }

    /// `self ∩ other`.
    pub fn intersect(&self, other: &Intervals) -> Intervals {
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < a.len() && j < b.len() {
            let s = a[i].0.max(b[j].0);
            let e = a[i].1.min(b[j].1);
            if e > s {
                out.push((s, e));
            }
            if a[i].1 < b[j].1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        Intervals(out)
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &Intervals) -> Intervals {
        let mut v = Vec::with_capacity(self.0.len() + other.0.len());
        v.extend_from_slice(&self.0);
        v.extend_from_slice(&other.0);
        Intervals::from_unsorted(v)
    }

    /// `self \ other`.
    pub fn subtract(&self, other: &Intervals) -> Intervals {
        let b = &other.0;
        let mut out = Vec::new();
        let mut j = 0;
        for &(s, e) in &self.0 {
            let mut cur = s;
            while j < b.len() && b[j].1 <= cur {
                j += 1;
            }
            let mut k = j;
            while k < b.len() && b[k].0 < e {
                if b[k].0 > cur {
                    out.push((cur, b[k].0));
                }
                cur = cur.max(b[k].1);
                if cur >= e {
                    break;
                }
                k += 1;
            }
            if cur < e {
                out.push((cur, e));
            }
        }
        Intervals(out)
    }

    /// The parts of `[lo, hi)` not covered.
    pub fn gaps_within(&self, lo: i64, hi: i64) -> Intervals {
        Intervals::from_unsorted(vec![(lo, hi)]).subtract(self)
    }

    /// The parts inside `[lo, hi)`.
    pub fn clip(&self, lo: i64, hi: i64) -> Intervals {
        self.intersect(&Intervals::from_unsorted(vec![(lo, hi)]))
    }

    /// Covered length inside `[lo, hi)`, in O(log n + k).
    pub fn covered_in(&self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return 0;
        }
        let start = self.0.partition_point(|iv| iv.1 <= lo);
        let mut sum = 0i64;
        for &(s, e) in &self.0[start..] {
            if s >= hi {
                break;
            }
            sum = sum.saturating_add(e.min(hi).saturating_sub(s.max(lo)));
        }
        sum
    }

    /// Covered ns in each of `n` buckets of `width` ns from `start`. `n` is
    /// the caller's bound: callers check it against their limit first.
    pub fn buckets(&self, start: i64, width: i64, n: usize) -> Vec<i64> {
        let mut out = vec![0i64; n];
        if width <= 0 {
            return out;
        }
        for &(s, e) in &self.0 {
            let mut cur = s.max(start);
            while cur < e {
                let idx = cur.saturating_sub(start) / width;
                let Ok(i) = usize::try_from(idx) else { break };
                if i >= n {
                    break;
                }
                let bucket_end = start.saturating_add((idx + 1).saturating_mul(width));
                let stop = e.min(bucket_end);
                out[i] = out[i].saturating_add(stop.saturating_sub(cur));
                cur = stop;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference: a bitmap over a small domain.
    fn bitmap(v: &[(i64, i64)]) -> Vec<bool> {
        let mut m = vec![false; 64];
        for &(s, e) in v {
            for t in s.max(0)..e.min(64) {
                m[t as usize] = true;
            }
        }
        m
    }

    fn ivs() -> impl Strategy<Value = Vec<(i64, i64)>> {
        prop::collection::vec(
            (0i64..64, 0i64..20).prop_map(|(s, l)| (s, (s + l).min(64))),
            0..12,
        )
    }

    proptest! {
        #[test]
        fn algebra_matches_bitmap(a in ivs(), b in ivs()) {
            let (ma, mb) = (bitmap(&a), bitmap(&b));
            let (ia, ib) = (Intervals::from_unsorted(a), Intervals::from_unsorted(b));
            let count = |f: &dyn Fn(usize) -> bool| (0..64).filter(|&t| f(t)).count() as i64;
            prop_assert_eq!(ia.total(), count(&|t| ma[t]));
            prop_assert_eq!(ia.intersect(&ib).total(), count(&|t| ma[t] && mb[t]));
            prop_assert_eq!(ia.union(&ib).total(), count(&|t| ma[t] || mb[t]));
            prop_assert_eq!(ia.subtract(&ib).total(), count(&|t| ma[t] && !mb[t]));
            prop_assert_eq!(ia.gaps_within(10, 50).total(), count(&|t| (10..50).contains(&t) && !ma[t]));
            prop_assert_eq!(ia.covered_in(7, 33), count(&|t| (7..33).contains(&t) && ma[t]));
            let b4 = ia.buckets(0, 16, 4);
            for (k, v) in b4.iter().enumerate() {
                prop_assert_eq!(*v, count(&|t| t / 16 == k && ma[t]));
            }
            // results are sorted and disjoint
            for w in ia.subtract(&ib).as_slice().windows(2) {
                prop_assert!(w[0].1 < w[1].0);
            }
        }
    }

    #[test]
    fn by_hand() {
        let a = Intervals::from_unsorted(vec![(10, 20), (0, 5), (4, 8), (20, 25)]);
        assert_eq!(a.as_slice(), &[(0, 8), (10, 25)]);
        let b = Intervals::from_unsorted(vec![(6, 12)]);
        assert_eq!(a.intersect(&b).as_slice(), &[(6, 8), (10, 12)]);
        assert_eq!(a.subtract(&b).as_slice(), &[(0, 6), (12, 25)]);
        assert_eq!(a.gaps_within(0, 30).as_slice(), &[(8, 10), (25, 30)]);
        assert_eq!(a.span(), Some((0, 25)));
    }
}
