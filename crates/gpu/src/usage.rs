//! One GPU's kernels over time: busy intervals, utilization over a span,
//! and duration-weighted SM efficiency and occupancy.
//!
//! Definitions (docs/reports.md):
//! - *busy time* of a device over `[lo, hi)`: the length of the union of
//!   its kernels' `[start, end)` intervals clipped to the window, i.e. the
//!   time at least one kernel is running (overlapping kernels count once);
//! - *utilization*: busy time / window length;
//! - SM efficiency and occupancy means are weighted by kernel duration
//!   ([`Weighted`]); kernels without a value do not count.

use rprof_model::Intervals;

use crate::timeline::Weighted;

/// What one device did, accumulated kernel by kernel.
#[derive(Clone, Debug, Default)]
pub struct DeviceUsage {
    /// Kernels seen.
    pub kernels: u64,
    /// Σ kernel durations, ns (overlapping kernels each count in full).
    pub kernel_ns: i64,
    /// Kernels without GPU start/end times (PyProf's own `.dict` files).
    pub untimed: u64,
    /// Earliest kernel start, ns.
    pub first_start_ns: Option<i64>,
    /// Latest kernel end, ns.
    pub last_end_ns: Option<i64>,
    /// Estimated SM efficiency, `min(blocks / SMs, 1)`, weighted by duration.
    pub sm_efficiency: Weighted,
    /// Estimated achieved occupancy (0..=1), weighted by duration.
    pub achieved: Weighted,
    /// Theoretical occupancy (0..=1), weighted by duration.
    pub theoretical: Weighted,
    intervals: Vec<(i64, i64)>,
}

/// One kernel as [`DeviceUsage::add`] takes it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KernelTime {
    /// GPU start, ns (`None`: unknown).
    pub start_ns: Option<i64>,
    /// GPU end, ns.
    pub end_ns: Option<i64>,
    /// Duration, ns.
    pub dur_ns: i64,
}

impl DeviceUsage {
    /// Count one kernel with its per-kernel SM efficiency, estimated
    /// achieved and theoretical occupancy (each `None` when unknown).
    pub fn add(
        &mut self,
        k: KernelTime,
        sm_efficiency: Option<f64>,
        achieved: Option<f64>,
        theoretical: Option<f64>,
    ) {
        let dur = k.dur_ns.max(0);
        self.kernels += 1;
        self.kernel_ns = self.kernel_ns.saturating_add(dur);
        self.sm_efficiency.add(dur, sm_efficiency);
        self.achieved.add(dur, achieved);
        self.theoretical.add(dur, theoretical);
        match (k.start_ns, k.end_ns) {
            (Some(s), Some(e)) => {
                self.first_start_ns = Some(self.first_start_ns.map_or(s, |x| x.min(s)));
                self.last_end_ns = Some(self.last_end_ns.map_or(e.max(s), |x| x.max(e)));
                if e > s {
                    self.intervals.push((s, e));
                }
            }
            _ => self.untimed += 1,
        }
    }

    /// The kernels' `[start, end)` intervals, in the order added.
    pub fn intervals(&self) -> &[(i64, i64)] {
        &self.intervals
    }

    /// The union of the kernels' intervals: when at least one ran.
    pub fn busy(&self) -> Intervals {
        Intervals::from_unsorted(self.intervals.clone())
    }

    /// Time with at least one kernel running within `[lo, hi)`, ns.
    pub fn busy_ns(&self, lo: i64, hi: i64) -> i64 {
        self.busy().covered_in(lo, hi)
    }

    /// Busy time / window length (`None` for an empty window).
    pub fn utilization(&self, lo: i64, hi: i64) -> Option<f64> {
        (hi > lo).then(|| self.busy_ns(lo, hi) as f64 / (hi as f64 - lo as f64))
    }

    /// Busy time per bucket of `width_ns` from `lo` to `hi` (the last
    /// bucket may be shorter), as `(bucket start, bucket length, busy)`;
    /// empty for a non-positive width or window. The caller bounds the
    /// number of buckets, `ceil((hi - lo) / width_ns)`.
    pub fn buckets(&self, lo: i64, hi: i64, width_ns: i64) -> Vec<(i64, i64, i64)> {
        if width_ns <= 0 || hi <= lo {
            return Vec::new();
        }
        let len = i128::from(hi) - i128::from(lo);
        let Ok(n) = usize::try_from((len + i128::from(width_ns) - 1) / i128::from(width_ns)) else {
            return Vec::new();
        };
        let busy = self.busy().clip(lo, hi).buckets(lo, width_ns, n);
        (0..n)
            .zip(busy)
            .map(|(i, b)| {
                let start = lo.saturating_add((i as i64).saturating_mul(width_ns));
                let end = start.saturating_add(width_ns).min(hi);
                (start, end.saturating_sub(start), b)
            })
            .collect()
    }
}

/// The profiled span of several devices: from the earliest kernel start to
/// the latest kernel end on any of them. `None` when no kernel has times.
pub fn span<'a>(devices: impl IntoIterator<Item = &'a DeviceUsage>) -> Option<(i64, i64)> {
    let mut out: Option<(i64, i64)> = None;
    for d in devices {
        if let (Some(s), Some(e)) = (d.first_start_ns, d.last_end_ns) {
            out = Some(match out {
                None => (s, e),
                Some((a, b)) => (a.min(s), b.max(e)),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The buckets cover the window exactly, and their busy times add
        /// up to the busy time of the window (counted here on a bitmap).
        #[test]
        fn buckets_sum_to_the_busy_time(
            v in proptest::collection::vec((0i64..300, 0i64..60), 0..40),
            lo in 0i64..100,
            len in 1i64..300,
            w in 1i64..80,
        ) {
            let mut d = DeviceUsage::default();
            let mut bitmap = vec![false; 400];
            for &(s, dur) in &v {
                d.add(t(s, s + dur), None, None, None);
                for x in s..s + dur {
                    bitmap[x as usize] = true;
                }
            }
            let hi = lo + len;
            let want = (lo..hi).filter(|&x| bitmap[x as usize]).count() as i64;
            let b = d.buckets(lo, hi, w);
            proptest::prop_assert_eq!(b.iter().map(|x| x.1).sum::<i64>(), len);
            proptest::prop_assert_eq!(b.iter().map(|x| x.2).sum::<i64>(), want);
            proptest::prop_assert_eq!(d.busy_ns(lo, hi), want);
        }
    }

    fn t(s: i64, e: i64) -> KernelTime {
        KernelTime {
            start_ns: Some(s),
            end_ns: Some(e),
            dur_ns: e - s,
        }
    }

    /// Kernels [0,10), [5,15) overlapping, gap, [30,40): busy 25 of a 40 ns
    /// span = 62.5 %; SM efficiency 1.0·10 + 0.5·10 + 0.25·10 over 30 ns.
    #[test]
    fn hand_computed() {
        let mut d = DeviceUsage::default();
        d.add(t(0, 10), Some(1.0), Some(0.5), Some(1.0));
        d.add(t(5, 15), Some(0.5), None, Some(0.5));
        d.add(t(30, 40), Some(0.25), Some(0.25), Some(0.5));
        assert_eq!((d.kernels, d.kernel_ns), (3, 30));
        assert_eq!(span([&d]), Some((0, 40)));
        assert_eq!(d.busy_ns(0, 40), 25);
        assert_eq!(d.utilization(0, 40), Some(0.625));
        assert!((d.sm_efficiency.mean().unwrap() - 17.5 / 30.0).abs() < 1e-12);
        assert_eq!(d.achieved.mean(), Some(0.375));
        assert!((d.theoretical.mean().unwrap() - 20.0 / 30.0).abs() < 1e-12);
        assert_eq!(d.buckets(0, 40, 20), vec![(0, 20, 15), (20, 20, 10)]);
        // a shorter last bucket, and a window that clips the kernels
        assert_eq!(
            d.buckets(2, 35, 10),
            vec![(2, 10, 10), (12, 10, 3), (22, 10, 2), (32, 3, 3)]
        );
        assert!(d.buckets(0, 40, 0).is_empty());
        let mut untimed = DeviceUsage::default();
        untimed.add(
            KernelTime {
                dur_ns: 5,
                ..KernelTime::default()
            },
            None,
            None,
            None,
        );
        assert_eq!((untimed.untimed, span([&untimed])), (1, None));
    }
}
