//! Convolution output sizes (pyprof-semantics.md §10.3). Stride, padding
//! and dilation are int lists, which `sizes` prints as `[]`, so the output
//! of a convolution is read from other markers, in this order:
//!
//! 1. a consumer: a later marker whose `input_op_ids` has the pair
//!    `(conv op_id, 0)` gives the output shape at that position; the bias
//!    `aten::add_` that runs inside `aten::_convolution` (PyTorch 1.x,
//!    Kineto traces without `input_op_ids`) is such a consumer too;
//! 2. the `ConvolutionBackward0` node's first size (the grad_output);
//! 3. `aten::convolution_backward`'s first size.
//!
//! All three come after the forward kernel, so what they tell is kept by
//! the shapes of input and weight and used from the next call on (the next
//! training iteration); a convolution seen before any of them assumes a
//! stride-1 "same" output and its row says so.

use rprof_model::FastMap;

/// How long (in records) a convolution waits for its consumer.
const PENDING_RECORDS: u64 = 1024;

/// Learned output shapes, keyed by input and weight shape.
#[derive(Debug)]
pub(crate) struct ConvShapes {
    known: FastMap<(Vec<i64>, Vec<i64>), Vec<i64>>,
    /// Forward convolutions (by `op_id`) whose consumer may tell.
    pending: FastMap<i64, (Vec<i64>, Vec<i64>, u64)>,
    now: u64,
    cap: usize,
}

impl Default for ConvShapes {
    fn default() -> ConvShapes {
        ConvShapes::new(4096)
    }
}

/// `out` can be the output of a convolution of `x` by `w`.
fn fits(x: &[i64], w: &[i64], out: &[i64]) -> bool {
    x.len() >= 3
        && w.len() == x.len()
        && out.len() == x.len()
        && out.first() == x.first()
        && out.get(1) == w.first()
        && out.iter().all(|d| *d > 0)
}

impl ConvShapes {
    pub(crate) fn new(cap: usize) -> ConvShapes {
        ConvShapes {
            known: FastMap::default(),
            pending: FastMap::default(),
            now: 0,
            cap: cap.max(1),
        }
    }

    /// Call once per record.
    pub(crate) fn tick(&mut self) {
        self.now += 1;
        if self.now.is_multiple_of(64) {
            let now = self.now;
            self.pending
                .retain(|_, (_, _, at)| now.saturating_sub(*at) <= PENDING_RECORDS);
        }
    }

    /// Remember that `x` by `w` gives `out`; false when it cannot.
    pub(crate) fn learn(&mut self, x: &[i64], w: &[i64], out: &[i64]) -> bool {
        if !fits(x, w, out) {
            return false;
        }
        if let Some(o) = self.known.get(&(x.to_vec(), w.to_vec()))
            && o == out
        {
            return true;
        }
        if self.known.len() >= self.cap {
            self.known.clear();
        }
        self.known.insert((x.to_vec(), w.to_vec()), out.to_vec());
        true
    }

    /// The output of `x` by `w`, if learned.
    pub(crate) fn get(&self, x: &[i64], w: &[i64]) -> Option<&[i64]> {
        self.known.get(&(x.to_vec(), w.to_vec())).map(Vec::as_slice)
    }

    /// A forward convolution `op_id` of `x` by `w`: its consumer may tell.
    pub(crate) fn expect(&mut self, op_id: i64, x: &[i64], w: &[i64]) {
        if self.pending.len() < 256 {
            self.pending
                .entry(op_id)
                .or_insert_with(|| (x.to_vec(), w.to_vec(), self.now));
        }
    }

    /// True when some convolution waits for its consumer.
    pub(crate) fn waiting(&self) -> bool {
        !self.pending.is_empty()
    }

    /// A marker with `sizes` and `input_op_ids`: learn from the inputs
    /// that are output 0 of a waiting convolution.
    pub(crate) fn consumer(&mut self, sizes: &[Vec<i64>], inputs: &[(i64, i64)]) {
        for (shape, (id, out)) in sizes.iter().zip(inputs) {
            if *out != 0 {
                continue;
            }
            if let Some((x, w, _)) = self.pending.remove(id)
                && !self.learn(&x, &w, shape)
            {
                // not the output after all (e.g. a view); keep waiting
                self.pending.insert(*id, (x, w, self.now));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_and_checks() {
        let mut c = ConvShapes::new(2);
        let (x, w) = (vec![8, 3, 224, 224], vec![64, 3, 11, 11]);
        assert!(c.get(&x, &w).is_none());
        assert!(!c.learn(&x, &w, &[8, 63, 55, 55]));
        assert!(c.learn(&x, &w, &[8, 64, 55, 55]));
        assert_eq!(c.get(&x, &w), Some(&[8i64, 64, 55, 55][..]));
        c.expect(7, &[1, 2, 5], &[4, 2, 3]);
        assert!(c.waiting());
        c.consumer(&[vec![1, 4, 3], vec![]], &[(9, 0), (7, 0)]);
        assert!(c.waiting(), "a [] input is not the output");
        c.consumer(&[vec![1, 4, 3]], &[(7, 0)]);
        assert!(!c.waiting());
        assert_eq!(c.get(&[1, 2, 5], &[4, 2, 3]), Some(&[1i64, 4, 3][..]));
        for _ in 0..2000 {
            c.tick();
        }
        c.expect(8, &[1, 2, 5], &[4, 2, 3]);
        for _ in 0..2000 {
            c.tick();
        }
        assert!(!c.waiting(), "expired");
    }
}
