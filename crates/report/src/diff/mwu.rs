//! The Mann-Whitney U test (Wilcoxon rank-sum test), two-sided.
//!
//! Hand-written rather than taken from a crate: statrs 0.19's
//! `mannwhitneyu` checks every pair of values for comparability (O(n²) in
//! the number of steps) and computes its exact p-value by enumerating
//! every C(n1 + n2, min(n1, n2)) split, which a long run (a few thousand
//! steps on one side, a handful on the other) turns into hours; `rprof
//! diff` runs the test once per key. Here the ranks come from one sort
//! (O(n log n)) and the exact distribution from the generating function
//! of U, the Gaussian binomial coefficient [n1 + n2 choose m]_q, in
//! O(m² · n) integer steps for m = min(n1, n2) ≤ 8.
//!
//! The method follows SciPy's `scipy.stats.mannwhitneyu(x, y)` defaults
//! (`method="auto"`, `use_continuity=True`, `alternative="two-sided"`):
//! - the exact distribution when there are no ties and one sample has at
//!   most 8 values;
//! - otherwise the normal approximation with the tie-corrected variance
//!   σ² = n1·n2/12 · ((n + 1) − Σ(t³ − t) / (n(n − 1))) and a continuity
//!   correction of ½;
//! - p = min(1, 2 · P(U ≥ max(U1, U2))).

/// Most values on one side for the exact distribution (SciPy's rule).
const EXACT_MAX_SMALL: usize = 8;

/// Most coefficients of U's distribution computed for the exact method
/// (the larger sample × the smaller); beyond, the normal approximation.
const EXACT_MAX_COEFFS: usize = 4_000_000;

/// The outcome of one test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample: the number of pairs (x, y) with x > y, ties
    /// counting ½.
    pub u1: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// True when the p-value comes from the exact distribution of U.
    pub exact: bool,
}

/// Test whether `x` and `y` come from the same distribution (two-sided).
/// `None` when either sample is empty.
pub fn mann_whitney(x: &[i128], y: &[i128]) -> Option<MannWhitney> {
    mann_whitney_sparse(x, x.len(), y, y.len())
}

/// [`mann_whitney`] for samples of `n1` and `n2` values of which only `x`
/// and `y` are given: the others are 0. Most keys run in a few steps only;
/// the zeros form one group of ties, so the cost is that of sorting the
/// given values, not the step counts.
pub fn mann_whitney_sparse(x: &[i128], n1: usize, y: &[i128], n2: usize) -> Option<MannWhitney> {
    if n1 == 0 || n2 == 0 || x.len() > n1 || y.len() > n2 {
        return None;
    }
    // (value, from x) sorted by value; ties share the mean of their ranks
    let mut all: Vec<(i128, bool)> = x
        .iter()
        .map(|&v| (v, true))
        .chain(y.iter().map(|&v| (v, false)))
        .collect();
    all.sort_unstable();
    let (zx, zy) = (n1 - x.len(), n2 - y.len());
    let mut zeros_done = zx + zy == 0;
    let mut next_rank = 1.0f64; // the first rank of the next group
    let mut r1 = 0.0f64; // rank sum of x
    let mut tie_term = 0.0f64; // Σ (t³ − t) over groups of ties
    let mut ties = false;
    let mut group = |cx: usize, cy: usize| {
        let t = (cx + cy) as f64;
        if t == 0.0 {
            return;
        }
        // ranks next_rank ..= next_rank + t − 1
        r1 += (next_rank + (t - 1.0) / 2.0) * cx as f64;
        if t > 1.0 {
            ties = true;
            tie_term += t * t * t - t;
        }
        next_rank += t;
    };
    let mut i = 0;
    while i < all.len() {
        let v = all[i].0;
        let mut j = i;
        let mut cx = 0;
        while j < all.len() && all[j].0 == v {
            cx += usize::from(all[j].1);
            j += 1;
        }
        let mut cy = j - i - cx;
        if !zeros_done && v >= 0 {
            zeros_done = true;
            if v == 0 {
                cx += zx;
                cy += zy;
            } else {
                group(zx, zy);
            }
        }
        group(cx, cy);
        i = j;
    }
    if !zeros_done {
        group(zx, zy);
    }
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u1 = r1 - f1 * (f1 + 1.0) / 2.0;
    let u2 = f1 * f2 - u1;
    let u = u1.max(u2);
    let exact_sf = if ties {
        None
    } else {
        // no ties: U is a whole number
        exact_sf(u as u64, n1, n2)
    };
    let (sf, exact) = match exact_sf {
        Some(p) => (p, true),
        None => {
            let nf = f1 + f2;
            let var = f1 * f2 / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
            let z = (u - f1 * f2 / 2.0 - 0.5) / var.sqrt();
            // every value equal: var = 0, z = −∞ or NaN: no evidence at all
            let sf = if z.is_nan() { 1.0 } else { normal_sf(z) };
            (sf, false)
        }
    };
    Some(MannWhitney {
        u1,
        p_value: (2.0 * sf).clamp(0.0, 1.0),
        exact,
    })
}

/// P(Z ≥ z) for a standard normal Z.
fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// P(U ≥ u) under the null hypothesis without ties, when one sample has
/// at most [`EXACT_MAX_SMALL`] values and the counts fit in a `u128`.
///
/// The number of orderings with U = k is the coefficient of q^k in the
/// Gaussian binomial [n choose m]_q = Π_{i=1..m} (1 − q^(n−m+i)) / (1 − q^i).
/// Each factor is applied in turn: a multiplication by (1 − q^(n−m+i)) and
/// an exact division by (1 − q^i) (a running sum with stride i). After
/// each step the polynomial is [n−m+i choose i]_q, whose coefficients are
/// whole and at most C(n, m); arithmetic modulo 2^128 is therefore exact
/// whenever C(n, m) < 2^128, though intermediate values may be negative.
fn exact_sf(u: u64, n1: usize, n2: usize) -> Option<f64> {
    let m = n1.min(n2);
    let big = n1.max(n2);
    if m > EXACT_MAX_SMALL || m.checked_mul(big)? > EXACT_MAX_COEFFS {
        return None;
    }
    let total = binomial(m + big, m)?;
    let deg = m * big;
    let mut c = vec![0u128; deg + 1];
    c[0] = 1;
    for i in 1..=m {
        let shift = big + i;
        for k in (shift..=deg).rev() {
            c[k] = c[k].wrapping_sub(c[k - shift]);
        }
        for k in i..=deg {
            c[k] = c[k].wrapping_add(c[k - i]);
        }
    }
    let u = usize::try_from(u).ok()?;
    let tail: u128 = c.get(u..).unwrap_or(&[]).iter().copied().sum();
    Some(tail as f64 / total as f64)
}

/// C(n, k), `None` when it does not fit in a `u128`.
fn binomial(n: usize, k: usize) -> Option<u128> {
    let mut r: u128 = 1;
    for i in 0..k {
        // r · (n − i) / (i + 1) stays whole at every step
        r = r.checked_mul((n - i) as u128)? / (i as u128 + 1);
    }
    Some(r)
}

/// The smallest two-sided p-value any data could give with `n1` and `n2`
/// values (no ties): 2 / C(n1 + n2, n1), at most 1. A sample this small
/// can never be significant at a level below it.
pub fn min_p_value(n1: usize, n2: usize) -> f64 {
    match binomial(n1 + n2, n1.min(n2)) {
        Some(c) if c > 0 => (2.0 / c as f64).min(1.0),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: &[i128], y: &[i128]) -> MannWhitney {
        mann_whitney(x, y).unwrap()
    }

    /// Values from SciPy 1.17.1, computed once with
    /// `python3 -c "from scipy.stats import mannwhitneyu as m; print(m(X, Y))"`
    /// for each pair below.
    #[test]
    fn matches_scipy() {
        // m([1,2,3],[4,5,6]): U=0, exact p = 2 * 1/20 = 0.1
        let r = p(&[1, 2, 3], &[4, 5, 6]);
        assert!(r.exact);
        assert_eq!(r.u1, 0.0);
        assert!((r.p_value - 0.1).abs() < 1e-15, "{r:?}");
        // m([19,22,16,29,24],[20,11,17,12]): U=17.0, p=0.1111111111111111
        let r = p(&[19, 22, 16, 29, 24], &[20, 11, 17, 12]);
        assert_eq!(r.u1, 17.0);
        assert!((r.p_value - 0.1111111111111111).abs() < 1e-12, "{r:?}");
        // ties: m([1,2,2,3],[2,3,4,5]): U=2.5, p=0.1366582477381475
        let r = p(&[1, 2, 2, 3], &[2, 3, 4, 5]);
        assert!(!r.exact);
        assert_eq!(r.u1, 2.5);
        assert!((r.p_value - 0.1366582477381475).abs() < 1e-12, "{r:?}");
        // large, no ties: m(list(range(20)), list(range(10,30))):
        // p=5.2125496206037515e-05 (asymptotic: both samples > 8)
        let x: Vec<i128> = (0..20).collect();
        let y: Vec<i128> = (10..30).collect();
        let r = p(&x, &y);
        assert!(!r.exact);
        assert!((r.p_value - 5.2125496206037515e-05).abs() < 1e-12, "{r:?}");
        // m([100,101,102], list(range(40))): p=0.00016206142127866461, exact
        // (= 2 / C(43, 3) = 2 / 12341)
        let y: Vec<i128> = (0..40).collect();
        let r = p(&[100, 101, 102], &y);
        assert!(r.exact);
        assert!((r.p_value - 0.00016206142127866461).abs() < 1e-15, "{r:?}");
    }

    /// Implicit zeros give what the same zeros written out give.
    #[test]
    fn sparse_equals_dense() {
        let cases: [(&[i128], usize, &[i128], usize); 5] = [
            (&[5, 7], 6, &[3], 4),
            (&[0, 2], 3, &[1, 0, 9], 9),
            (&[-4, 6], 3, &[], 2),
            (&[1, 2, 3], 3, &[4, 5, 6], 3),
            (&[], 4, &[], 5),
        ];
        for (x, n1, y, n2) in cases {
            let mut dx = x.to_vec();
            dx.resize(n1, 0);
            let mut dy = y.to_vec();
            dy.resize(n2, 0);
            let dense = mann_whitney(&dx, &dy).unwrap();
            let sparse = mann_whitney_sparse(x, n1, y, n2).unwrap();
            assert_eq!(dense.u1, sparse.u1, "{x:?} {y:?}");
            assert!(
                (dense.p_value - sparse.p_value).abs() < 1e-15,
                "{x:?} {y:?}"
            );
            assert_eq!(dense.exact, sparse.exact);
        }
        // m([0,0,0,0,5,7],[0,0,0,3]): SciPy 1.17.1 p=0.693974373462473
        let r = mann_whitney_sparse(&[5, 7], 6, &[3], 4).unwrap();
        assert!((r.p_value - 0.693974373462473).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn equal_samples_are_not_different() {
        let r = p(&[5, 5, 5], &[5, 5, 5]);
        assert_eq!(r.p_value, 1.0);
        let r = p(&[7], &[7]);
        assert_eq!(r.p_value, 1.0);
        assert!(mann_whitney(&[], &[1]).is_none());
    }

    /// The exact distribution against a brute-force count of every split
    /// of 0..n into a sample of m and one of n − m.
    #[test]
    fn exact_against_enumeration() {
        for (m, k) in [(1usize, 1usize), (2, 3), (3, 3), (4, 5), (3, 9)] {
            let n = m + k;
            let mut counts = vec![0u64; m * k + 1];
            for mask in 0u32..(1 << n) {
                if mask.count_ones() as usize != m {
                    continue;
                }
                // U of the m-sample: pairs where it is larger
                let mut u = 0;
                for a in 0..n {
                    if mask & (1 << a) == 0 {
                        continue;
                    }
                    u += (0..a).filter(|b| mask & (1 << b) == 0).count();
                }
                counts[u] += 1;
            }
            let total: u64 = counts.iter().sum();
            for u in 0..=m * k {
                let want = counts[u..].iter().sum::<u64>() as f64 / total as f64;
                let got = exact_sf(u as u64, m, k).unwrap();
                assert!((got - want).abs() < 1e-15, "m={m} k={k} u={u}");
            }
        }
    }

    #[test]
    fn min_p() {
        assert_eq!(min_p_value(1, 1), 1.0);
        // C(4, 2) = 6: 2/6
        assert!((min_p_value(2, 2) - 1.0 / 3.0).abs() < 1e-15);
        // C(10, 5) = 252
        assert!((min_p_value(5, 5) - 2.0 / 252.0).abs() < 1e-15);
    }
}
