//! The per-op-instance kernel index (pyprof-semantics.md §10.2 step 4),
//! which replaces PyProf's `subSeqId` for stock markers, and the rule that
//! an op's cost is counted once.
//!
//! The kernels of one op instance are numbered 0, 1, 2, … in order. An
//! instance is the anchor marker's `op_id` (PyTorch 2.x); without one
//! (PyTorch 1.x, Kineto traces) it is a run of kernels on one thread under
//! the same marker texts, and, for ops that launch one math kernel per
//! call, a second math kernel under the same texts is the next call.
//! Kernels are classified by name as math (in numbered parts: a
//! convolution's dgrad and wgrad are two) or helpers; a math part seen
//! twice in one instance is a repeat (cuDNN autotuning, a second chunk),
//! whose FLOPs and bytes were already counted.

/// What a kernel does for its op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A part (`0..8`) of the op's math.
    Math(u8),
    /// A helper (layout, split-K reduction, epilogue, conversion).
    Helper,
}

/// Where a kernel sits in its op instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Position {
    /// Index among the instance's kernels.
    pub(crate) sub: i64,
    /// Its math part was already counted in this instance.
    pub(crate) repeat: bool,
}

#[derive(Debug)]
struct Current {
    key: u64,
    sub: i64,
    seen: u8,
}

/// The current instance of each thread.
#[derive(Debug, Default)]
pub(crate) struct Instances {
    by_thread: rprof_model::FastMap<u64, Current>,
}

impl Instances {
    /// Place one kernel of thread `tid` under instance `key` (`by_op_id`:
    /// the key is an `op_id`). `single`: the op launches one math kernel
    /// per call.
    pub(crate) fn place(
        &mut self,
        tid: u64,
        key: u64,
        by_op_id: bool,
        single: bool,
        role: Role,
    ) -> Position {
        let bit = match role {
            Role::Math(part) => 1u8 << (part & 7),
            Role::Helper => 0,
        };
        let fresh = Current {
            key,
            sub: 0,
            seen: 0,
        };
        let cur = self.by_thread.entry(tid).or_insert(Current {
            key: key.wrapping_add(1),
            sub: 0,
            seen: 0,
        });
        if cur.key != key || (!by_op_id && single && cur.seen & bit != 0) {
            *cur = fresh;
        } else {
            cur.sub += 1;
        }
        let repeat = cur.seen & bit != 0;
        cur.seen |= bit;
        Position {
            sub: cur.sub,
            repeat,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_and_repeats() {
        let mut i = Instances::default();
        // op_id 5: layout, conv, layout, conv again (autotune)
        let p: Vec<Position> = [Role::Helper, Role::Math(0), Role::Helper, Role::Math(0)]
            .into_iter()
            .map(|r| i.place(1, 5, true, true, r))
            .collect();
        assert_eq!(p.iter().map(|p| p.sub).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(
            p.iter().map(|p| p.repeat).collect::<Vec<_>>(),
            [false, false, false, true]
        );
        // another thread does not disturb it
        assert_eq!(i.place(2, 5, true, true, Role::Math(0)).sub, 0);
        assert_eq!(i.place(1, 5, true, true, Role::Helper).sub, 4);
        // a new op_id starts over
        assert_eq!(
            i.place(1, 6, true, true, Role::Math(0)),
            Position {
                sub: 0,
                repeat: false
            }
        );
        // no op_id: the same texts twice are two calls of a one-kernel op…
        assert_eq!(i.place(1, 9, false, true, Role::Math(0)).sub, 0);
        assert_eq!(
            i.place(1, 9, false, true, Role::Math(0)),
            Position {
                sub: 0,
                repeat: false
            }
        );
        // …but one call of a many-kernel op
        assert_eq!(i.place(1, 10, false, false, Role::Math(0)).sub, 0);
        assert_eq!(
            i.place(1, 10, false, false, Role::Math(0)),
            Position {
                sub: 1,
                repeat: true
            }
        );
        // dgrad then wgrad: two parts
        assert!(!i.place(1, 11, true, true, Role::Math(1)).repeat);
        assert!(!i.place(1, 11, true, true, Role::Math(2)).repeat);
    }
}
