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

impl<'a> SeqState<'a> {
    /// Advance over one kernel. `ids` are the sorted unique sequence ids of
    /// its sequence markers. `compat` emulates PyProf's list-mutation bug
    /// (\[B16\]); otherwise `seqId` is the chosen id alone.
    pub fn next(
        &mut self,
        ids: &[i64],
        bprop: bool,
        op: &[Cow<'a, str>],
        mod_: &[Cow<'a, str>],
        compat: bool,
    ) -> SeqIds {
        let mut seq: Vec<i64> = ids.to_vec();
        let mut alt: Vec<i64> = Vec::new();
        let mut sub = 0;
        if seq.contains(&0) && seq.iter().any(|&s| s != 0) {
            seq.retain(|&s| s != 0);
        }
        if seq.is_empty() {
            return SeqIds {
                seq_id: seq,
                sub_seq_id: sub,
                alt_seq_id: alt,
            };
        }
        let cur = if !bprop {
            let max = seq.iter().copied().max().unwrap_or(-1);
            if max > self.prev_seq {
                seq.iter()
                    .copied()
                    .filter(|&s| s > self.prev_seq)
                    .min()
                    .unwrap_or(self.prev_seq)
            } else {
                self.prev_seq
            }
        } else {
            seq[0]
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
        self.prev_op = Some(op.to_vec());

        if compat {
            // PyProf removes from the list it iterates over, so the element
            // after each removed one is skipped.
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
        SeqIds {
            seq_id: seq,
            sub_seq_id: sub,
            alt_seq_id: alt,
        }
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

    #[test]
    fn rnn_cells_count_across_seq_ids() {
        let mut st = SeqState::default();
        let m = op("LSTMCell");
        st.next(&[1], false, &op("forward"), &m, true);
        assert_eq!(st.next(&[2], false, &op("forward"), &m, true).sub_seq_id, 1);
    }
}
