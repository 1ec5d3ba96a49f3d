//! Time-weighted means of a per-kernel value (SM efficiency, occupancy).
//! Busy time and its buckets are interval algebra:
//! [`rprof_model::Intervals`], used by [`crate::usage`].

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

    /// Σ value·duration / Σ duration (`None` when nothing has a value).
    fn time_weighted(items: impl IntoIterator<Item = (i64, Option<f64>)>) -> Option<f64> {
        let mut w = Weighted::default();
        for (dur, v) in items {
            w.add(dur, v);
        }
        w.mean()
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
