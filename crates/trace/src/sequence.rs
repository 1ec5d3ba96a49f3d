//! PyProf's sequence-id fold (pyprof-semantics.md §3.11): which of the
//! enclosing sequence ids is "this" kernel's, and the sub-sequence index
//! that counts consecutive kernels of one op. It depends on the previous
//! kernel, so it runs in order, after the parallel classification.

use std::borrow::Cow;

/// State carried from kernel to kernel.
#[derive(Clone, Debug)]
pub struct SeqState<'a> {
    prev_seq: i64,
    prev_sub: i64,
    /// `None` stands for PyProf's initial string `"na"`, which never equals
    /// a list.
    prev_op: Option<Vec<Cow<'a, str>>>,
}

impl Default for SeqState<'_> {
    fn default() -> Self {
        SeqState {
            prev_seq: -1,
            prev_sub: -1,
            prev_op: None,
        }
    }
}

/// Result for one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeqIds {
    /// `seqId`.
    pub seq_id: Vec<i64>,
    /// `subSeqId`.
    pub sub_seq_id: i64,
    /// `altSeqId`.
    pub alt_seq_id: Vec<i64>,
}

const RNN_CELLS: &[&str] = &["LSTMCell", "GRUCell", "RNNCell"];

/// What the fold chose for one kernel, before its lists are made
/// ([`SeqState::step`], [`Fold::lists`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fold {
    /// The id chosen as this kernel's (`None`: the kernel has no sequence
    /// ids).
    pub cur: Option<i64>,
    /// `subSeqId`.
    pub sub: i64,
}

/// The sequence ids the fold reads: every id but 0, unless 0 is all there
/// is.
fn kept(ids: &[i64]) -> impl Iterator<Item = i64> + '_ {
    let nonzero = ids.iter().any(|&s| s != 0);
    ids.iter().copied().filter(move |&s| s != 0 || !nonzero)
}

impl<'a> SeqState<'a> {
    /// Advance over one kernel. `ids` are the sorted unique sequence ids of
    /// its sequence markers. `compat` emulates PyProf's list-mutation bug
    /// (\[B16\]); otherwise `seqId` is the chosen id alone.
    #[cfg(test)]
    pub fn next(
        &mut self,
        ids: &[i64],
        bprop: bool,
        op: &[Cow<'a, str>],
        mod_: &[Cow<'a, str>],
        compat: bool,
    ) -> SeqIds {
        self.step(ids, bprop, op, mod_).lists(ids, compat)
    }

    /// [`SeqState::next`] without making the lists: the chosen id and
    /// `subSeqId`.
    pub fn step(
        &mut self,
        ids: &[i64],
        bprop: bool,
        op: &[Cow<'a, str>],
        mod_: &[Cow<'a, str>],
    ) -> Fold {
        if ids.is_empty() {
            return Fold { cur: None, sub: 0 };
        }
        let mut sub = 0;
        let cur = if !bprop {
            let max = kept(ids).max().unwrap_or(-1);
            if max > self.prev_seq {
                kept(ids)
                    .filter(|&s| s > self.prev_seq)
                    .min()
                    .unwrap_or(self.prev_seq)
            } else {
                self.prev_seq
            }
        } else {
            kept(ids).next().unwrap_or(-1)
        };
        let same_op = self.prev_op.as_deref() == Some(op);
        let rnn = op.first().is_some_and(|o| o == "forward")
            && same_op
            && mod_
                .first()
                .is_some_and(|m| RNN_CELLS.contains(&m.as_ref()));
        if (cur == self.prev_seq && same_op) || rnn {
            sub = self.prev_sub + 1;
        }
        self.prev_seq = cur;
        self.prev_sub = sub;
        if !same_op {
            // the last op's list is reused (it is equal otherwise): no new
            // allocation per kernel
            let prev = self.prev_op.get_or_insert_with(Vec::new);
            prev.clear();
            prev.extend_from_slice(op);
        }
        Fold {
            cur: Some(cur),
            sub,
        }
    }
}

impl Fold {
    /// The kernel's lists, from the same `ids` given to
    /// [`SeqState::step`].
    pub fn lists(self, ids: &[i64], compat: bool) -> SeqIds {
        let Some(cur) = self.cur else {
            return SeqIds {
                seq_id: Vec::new(),
                sub_seq_id: self.sub,
                alt_seq_id: Vec::new(),
            };
        };
        let mut alt: Vec<i64>;
        let seq: Vec<i64>;
        if compat {
            // PyProf removes from the list it iterates over, so the element
            // after each removed one is skipped.
            let mut list: Vec<i64> = kept(ids).collect();
            alt = Vec::new();
            let mut i = 0;
            while i < list.len() {
                if list[i] != cur {
                    alt.push(list.remove(i));
                }
                i += 1;
            }
            if let Some(p) = alt.iter().position(|&a| a == cur) {
                alt.remove(p);
            }
            seq = list;
        } else {
            alt = kept(ids).filter(|&s| s != cur).collect();
            seq = if kept(ids).any(|s| s == cur) {
                vec![cur]
            } else {
                Vec::new()
            };
        }
        alt.sort_unstable();
        alt.dedup();
        SeqIds {
            seq_id: seq,
            sub_seq_id: self.sub,
            alt_seq_id: alt,
        }
    }

    /// The fixed mode's lists without making them, when `ids` are sorted
    /// and unique (as [`SeqState::next`] expects): whether `seqId` holds
    /// the chosen id, and `altSeqId` (into `alt`, cleared first). `None`
    /// when the ids are not sorted and unique; [`Fold::lists`] then makes
    /// them.
    pub fn fixed_lists(self, ids: &[i64], alt: &mut Vec<i64>) -> Option<Option<i64>> {
        alt.clear();
        if !ids.windows(2).all(|w| w[0] < w[1]) {
            return None;
        }
        let Some(cur) = self.cur else {
            return Some(None);
        };
        let mut has = false;
        for s in kept(ids) {
            if s == cur {
                has = true;
            } else {
                alt.push(s);
            }
        }
        Some(has.then_some(cur))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(s: &str) -> Vec<Cow<'static, str>> {
        vec![Cow::Owned(s.to_owned())]
    }

    /// The worked table of pyprof-semantics.md §3.11.
    #[test]
    fn worked_examples_compat() {
        let mut st = SeqState::default();
        let na = op("na");
        let r = st.next(&[10, 11], false, &op("linear"), &na, true);
        assert_eq!(
            (r.seq_id, r.alt_seq_id, r.sub_seq_id),
            (vec![10], vec![11], 0)
        );
        let r = st.next(&[10, 11], false, &op("linear"), &na, true);
        assert_eq!(
            (r.seq_id, r.alt_seq_id, r.sub_seq_id),
            (vec![11], vec![10], 0)
        );
        let r = st.next(&[3, 5, 7, 9], false, &op("x"), &na, true);
        assert_eq!((r.seq_id, r.alt_seq_id), (vec![5, 9], vec![3, 7]));
        let mut st = SeqState::default();
        st.next(&[11], false, &op("y"), &na, true);
        let r = st.next(&[12, 13, 14, 15], false, &op("z"), &na, true);
        assert_eq!((r.seq_id, r.alt_seq_id), (vec![12, 14], vec![13, 15]));
        let r = st.next(&[0, 25], false, &op("w"), &na, true);
        assert_eq!((r.seq_id, r.alt_seq_id), (vec![25], vec![]));
    }

    #[test]
    fn fixed_mode_keeps_only_the_chosen_id() {
        let mut st = SeqState::default();
        let na = op("na");
        st.next(&[11], false, &op("y"), &na, false);
        let r = st.next(&[12, 13, 14, 15], false, &op("z"), &na, false);
        assert_eq!((r.seq_id, r.alt_seq_id), (vec![12], vec![13, 14, 15]));
        // cur = prevSeq, not in the list → no seqId
        let mut st = SeqState::default();
        st.next(&[11], false, &op("y"), &na, false);
        let r = st.next(&[3, 5], false, &op("x"), &na, false);
        assert_eq!((r.seq_id, r.alt_seq_id), (vec![], vec![3, 5]));
    }

    #[test]
    fn sub_counts_consecutive_kernels_of_one_op() {
        let mut st = SeqState::default();
        let na = op("na");
        assert_eq!(st.next(&[7], false, &op("linear"), &na, true).sub_seq_id, 0);
        assert_eq!(st.next(&[7], false, &op("linear"), &na, true).sub_seq_id, 1);
        assert_eq!(st.next(&[7], false, &op("linear"), &na, true).sub_seq_id, 2);
        assert_eq!(st.next(&[], false, &op("other"), &na, true).sub_seq_id, 0);
        // an unmarked kernel leaves the state alone
        assert_eq!(st.next(&[7], false, &op("linear"), &na, true).sub_seq_id, 3);
        assert_eq!(st.next(&[7], true, &op("Addmm"), &na, true).sub_seq_id, 0);
    }

    /// The fold as first written, copying the ids into a list and the op
    /// list on every kernel: the reference the allocation-free fold must
    /// equal.
    fn reference(
        st: &mut (i64, i64, Option<Vec<String>>),
        ids: &[i64],
        bprop: bool,
        op: &[String],
        mod_: &[String],
        compat: bool,
    ) -> (Vec<i64>, i64, Vec<i64>) {
        let mut seq: Vec<i64> = ids.to_vec();
        let mut alt: Vec<i64> = Vec::new();
        let mut sub = 0;
        if seq.contains(&0) && seq.iter().any(|&s| s != 0) {
            seq.retain(|&s| s != 0);
        }
        if seq.is_empty() {
            return (seq, sub, alt);
        }
        let cur = if !bprop {
            let max = seq.iter().copied().max().unwrap_or(-1);
            if max > st.0 {
                seq.iter()
                    .copied()
                    .filter(|&s| s > st.0)
                    .min()
                    .unwrap_or(st.0)
            } else {
                st.0
            }
        } else {
            seq[0]
        };
        let same_op = st.2.as_deref() == Some(op);
        let rnn = op.first().is_some_and(|o| o == "forward")
            && same_op
            && mod_
                .first()
                .is_some_and(|m| RNN_CELLS.contains(&m.as_str()));
        if (cur == st.0 && same_op) || rnn {
            sub = st.1 + 1;
        }
        st.0 = cur;
        st.1 = sub;
        st.2 = Some(op.to_vec());
        if compat {
            let mut i = 0;
            while i < seq.len() {
                if seq[i] != cur {
                    alt.push(seq.remove(i));
                }
                i += 1;
            }
            if let Some(p) = alt.iter().position(|&a| a == cur) {
                alt.remove(p);
            }
        } else {
            alt = seq.iter().copied().filter(|&s| s != cur).collect();
            seq = if seq.contains(&cur) {
                vec![cur]
            } else {
                Vec::new()
            };
        }
        alt.sort_unstable();
        alt.dedup();
        (seq, sub, alt)
    }

    proptest::proptest! {
        /// Any run of kernels folds as the reference folds it, in both modes.
        #[test]
        fn fold_equals_the_reference(
            kernels in proptest::collection::vec(
                (
                    proptest::collection::btree_set(0i64..6, 0..5),
                    proptest::bool::ANY,
                    proptest::sample::select(vec!["forward", "linear", "Addmm"]),
                    proptest::sample::select(vec!["na", "LSTMCell"]),
                ),
                0..30,
            ),
            compat in proptest::bool::ANY,
        ) {
            let mut st = SeqState::default();
            let mut reference_state = (-1, -1, None);
            for (ids, bprop, op, md) in kernels {
                let ids: Vec<i64> = ids.into_iter().collect();
                let op = vec![op.to_owned()];
                let md = vec![md.to_owned()];
                let ops: Vec<Cow<'_, str>> = op.iter().map(|o| Cow::Owned(o.clone())).collect();
                let mods: Vec<Cow<'_, str>> = md.iter().map(|m| Cow::Owned(m.clone())).collect();
                let fold = st.step(&ids, bprop, &ops, &mods);
                let got = fold.lists(&ids, compat);
                let want = reference(&mut reference_state, &ids, bprop, &op, &md, compat);
                if !compat {
                    // the lists made without allocating are the same
                    let mut alt = vec![99];
                    let seq = fold.fixed_lists(&ids, &mut alt);
                    proptest::prop_assert_eq!(seq.map(|s| s.into_iter().collect::<Vec<_>>()), Some(want.0.clone()));
                    proptest::prop_assert_eq!(&alt, &want.2);
                }
                proptest::prop_assert_eq!((got.seq_id, got.sub_seq_id, got.alt_seq_id), want);
            }
        }
    }

    #[test]
    fn fixed_lists_need_sorted_unique_ids() {
        let mut alt = vec![1];
        let fold = Fold {
            cur: Some(5),
            sub: 0,
        };
        // unsorted or repeated ids: the lists are made instead
        assert_eq!(fold.fixed_lists(&[7, 5], &mut alt), None);
        assert_eq!(fold.fixed_lists(&[5, 5], &mut alt), None);
        assert!(alt.is_empty());
        // 0 is dropped beside other ids, kept alone
        assert_eq!(fold.fixed_lists(&[0, 5, 9], &mut alt), Some(Some(5)));
        assert_eq!(alt, vec![9]);
        let zero = Fold {
            cur: Some(0),
            sub: 0,
        };
        assert_eq!(zero.fixed_lists(&[0], &mut alt), Some(Some(0)));
        assert!(alt.is_empty());
        // no ids: nothing chosen
        let none = Fold { cur: None, sub: 0 };
        assert_eq!(none.fixed_lists(&[], &mut alt), Some(None));
    }

    #[test]
    fn rnn_cells_count_across_seq_ids() {
        let mut st = SeqState::default();
        let m = op("LSTMCell");
        st.next(&[1], false, &op("forward"), &m, true);
        assert_eq!(st.next(&[2], false, &op("forward"), &m, true).sub_seq_id, 1);
    }
}
