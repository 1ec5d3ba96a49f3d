//! Roofline: is an op limited by arithmetic or by memory, and how close to
//! the roof did it get?

/// Which roof applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Arithmetic intensity at or above the ridge point.
    Compute,
    /// Below the ridge point.
    Memory,
}

impl Bound {
    /// `compute` / `memory`.
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
        }
    }
}

/// Roofline position of some work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// FLOPs per byte.
    pub intensity: f64,
    /// Achieved FLOP/s.
    pub achieved_flops: f64,
    /// Achieved bytes/s.
    pub achieved_bandwidth: f64,
    /// Attainable FLOP/s at this intensity: `min(peak, intensity × bandwidth)`.
    pub roof: f64,
    /// Which roof.
    pub bound: Bound,
    /// Achieved / roof (for memory-bound work this equals achieved
    /// bandwidth / peak bandwidth).
    pub share: f64,
}

/// Place `flops` and `bytes` done in `dur_ns` under a roof of `peak_flops`
/// FLOP/s and `bandwidth` bytes/s. `None` when there is nothing to place
/// (no time, or neither FLOPs nor bytes, or no roof).
pub fn place(
    flops: f64,
    bytes: f64,
    dur_ns: i64,
    peak_flops: f64,
    bandwidth: f64,
) -> Option<Point> {
    if dur_ns <= 0 || peak_flops <= 0.0 || bandwidth <= 0.0 || (flops <= 0.0 && bytes <= 0.0) {
        return None;
    }
    let secs = dur_ns as f64 * 1e-9;
    let achieved_flops = flops / secs;
    let achieved_bandwidth = bytes / secs;
    if bytes <= 0.0 {
        return Some(Point {
            intensity: f64::INFINITY,
            achieved_flops,
            achieved_bandwidth,
            roof: peak_flops,
            bound: Bound::Compute,
            share: achieved_flops / peak_flops,
        });
    }
    let intensity = flops / bytes;
    let ridge = peak_flops / bandwidth;
    let (bound, roof) = if intensity >= ridge {
        (Bound::Compute, peak_flops)
    } else {
        (Bound::Memory, intensity * bandwidth)
    };
    let share = match bound {
        Bound::Compute => achieved_flops / roof,
        Bound::Memory => achieved_bandwidth / bandwidth,
    };
    Some(Point {
        intensity,
        achieved_flops,
        achieved_bandwidth,
        roof,
        bound,
        share,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GEMM of 2·1024³ FLOPs moving 12 MiB in 100 µs on a 312 TFLOP/s,
    /// 1555 GB/s GPU: intensity 170.7 > ridge 200.6? No: 2147483648 /
    /// 12582912 = 170.67 < 200.64 → memory-bound; achieved bandwidth
    /// 125.8 GB/s → 8.1 % of the roof.
    #[test]
    fn hand_computed_points() {
        let p = place(
            2.0 * 1024f64.powi(3),
            12.0 * 1024.0 * 1024.0,
            100_000,
            312e12,
            1555e9,
        )
        .unwrap();
        assert_eq!(p.bound, Bound::Memory);
        assert!((p.intensity - 170.666_666).abs() < 1e-3);
        assert!((p.achieved_bandwidth - 125.829_12e9).abs() < 1e3);
        assert!((p.share - 0.080_919).abs() < 1e-5);
        // the same FLOPs on 1 MiB: compute-bound, 21.47 TFLOP/s of 312
        let p = place(
            2.0 * 1024f64.powi(3),
            1024.0 * 1024.0,
            100_000,
            312e12,
            1555e9,
        )
        .unwrap();
        assert_eq!(p.bound, Bound::Compute);
        assert!((p.share - 21.474_836_48e12 / 312e12).abs() < 1e-9);
        assert!(place(1.0, 1.0, 0, 1.0, 1.0).is_none());
        assert!(place(0.0, 0.0, 10, 1.0, 1.0).is_none());
        assert_eq!(
            place(10.0, 0.0, 10, 1e9, 1e9).unwrap().bound,
            Bound::Compute
        );
    }
}
