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

use crate::timeline::{self, Busy, Weighted};

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
    intervals: Vec<Busy>,
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
                    self.intervals.push(Busy {
                        start_ns: s,
                        end_ns: e,
                    });
                }
            }
            _ => self.untimed += 1,
        }
    }

    /// The kernels' intervals, in the order added.
    pub fn intervals(&self) -> &[Busy] {
        &self.intervals
    }

    /// Time with at least one kernel running within `[lo, hi)`, ns.
    pub fn busy_ns(&self, lo: i64, hi: i64) -> i64 {
        timeline::union_ns(&self.intervals, lo, hi)
    }

    /// Busy time / window length (`None` for an empty window).
    pub fn utilization(&self, lo: i64, hi: i64) -> Option<f64> {
        (hi > lo).then(|| self.busy_ns(lo, hi) as f64 / (hi as f64 - lo as f64))
    }

    /// Busy time per bucket: see [`timeline::buckets`].
    pub fn buckets(&self, lo: i64, hi: i64, width_ns: i64) -> Vec<(i64, i64, i64)> {
        timeline::buckets(&self.intervals, lo, hi, width_ns)
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
