//! A map from sequence number to a value, for the backward lookups
//! ([`crate::fprop`]'s and the stock models' forward index).
//!
//! Sequence numbers mostly rise by one, and the lookups ask for recent
//! ones, so the map is a run of slots, one per number from the first,
//! with an ordered map for the numbers the run does not take (before it,
//! or past a gap that would leave it mostly empty). A number in the run
//! is found by one subtraction. An ordered map alone searched from its
//! root for every number: for the newest number (the last key of each
//! node on the way down) about 60 comparisons at 60 k numbers, most of
//! the stock forward index's own instructions. A hash table of that many
//! numbers takes a cache miss per lookup, while the run's recent end and
//! the ordered map's edges stay in cache.

use std::collections::{BTreeMap, VecDeque};

/// Sequence number → value (see the module).
#[derive(Debug)]
pub(crate) struct SeqRun<V> {
    /// The number of `slots[0]`.
    base: i64,
    slots: VecDeque<Option<V>>,
    /// Slots that hold a value.
    filled: usize,
    /// The numbers outside the run (never one inside it).
    rest: BTreeMap<i64, V>,
}

impl<V> Default for SeqRun<V> {
    fn default() -> SeqRun<V> {
        SeqRun {
            base: 0,
            slots: VecDeque::new(),
            filled: 0,
            rest: BTreeMap::new(),
        }
    }
}

/// The most empty slots one new number may add at the end of the run
/// (beyond four slots per number held): past it, the number goes to the
/// ordered map, so hostile numbers far apart cost no more than there. The
/// run is so never longer than four slots per number it has held at once,
/// plus this.
pub(crate) const MAX_GAP: usize = 1024;

impl<V> SeqRun<V> {
    /// The slot of `id` if the run reached it.
    fn slot(&self, id: i64) -> Option<usize> {
        usize::try_from(id.checked_sub(self.base)?).ok()
    }

    /// The value of `id`.
    pub(crate) fn get(&self, id: i64) -> Option<&V> {
        match self.slot(id).and_then(|i| self.slots.get(i)) {
            Some(slot) => slot.as_ref(),
            None => self.rest.get(&id),
        }
    }

    /// The value of `id`, to change.
    pub(crate) fn get_mut(&mut self, id: i64) -> Option<&mut V> {
        match self.slot(id).filter(|&i| i < self.slots.len()) {
            Some(i) => self.slots.get_mut(i).and_then(Option::as_mut),
            None => self.rest.get_mut(&id),
        }
    }

    /// Map `id` to `value`; the value it had, if any.
    pub(crate) fn insert(&mut self, id: i64, value: V) -> Option<V> {
        let len = self.slots.len();
        if len == 0 {
            // an empty run starts again at the number (taking it from the
            // map, below, if it is there)
            self.base = id;
        }
        match self.slot(id) {
            Some(i) if i < len => self.put(i, value),
            Some(i) if i - len <= MAX_GAP && i < 4 * (self.filled + 1) + MAX_GAP => {
                // the run grows to the number; the numbers it now covers
                // leave the map for their slots (`id` is `base + i`, so no
                // sum here overflows)
                self.slots.resize_with(i + 1, || None);
                if !self.rest.is_empty() {
                    let from = self.base + len as i64;
                    let covered: Vec<i64> = self.rest.range(from..=id).map(|(&k, _)| k).collect();
                    for k in covered {
                        if let (Some(v), Some(j)) = (self.rest.remove(&k), self.slot(k)) {
                            self.put(j, v);
                        }
                    }
                }
                self.put(i, value)
            }
            _ => self.rest.insert(id, value),
        }
    }

    /// Put `value` in slot `i` (which exists); the value it had.
    fn put(&mut self, i: usize, value: V) -> Option<V> {
        let slot = self.slots.get_mut(i)?;
        let old = slot.replace(value);
        if old.is_none() {
            self.filled += 1;
        }
        old
    }

    /// Forget `id`; the value it had, if any. The run then starts at its
    /// first number that has a value, so numbers forgotten oldest first
    /// (a bounded window) take no room.
    pub(crate) fn remove(&mut self, id: i64) -> Option<V> {
        match self.slot(id).filter(|&i| i < self.slots.len()) {
            Some(i) => {
                let old = self.slots.get_mut(i).and_then(Option::take);
                if old.is_some() {
                    self.filled -= 1;
                }
                while let Some(None) = self.slots.front() {
                    self.slots.pop_front();
                    self.base = self.base.saturating_add(1);
                }
                old
            }
            None => self.rest.remove(&id),
        }
    }

    /// Numbers mapped.
    pub(crate) fn len(&self) -> usize {
        self.filled + self.rest.len()
    }

    /// Slots in the run (for the bound's tests).
    #[cfg(test)]
    fn run_len(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use proptest::strategy::Strategy;

    use super::*;

    /// What one step does to the map.
    #[derive(Clone, Copy, Debug)]
    enum Op {
        Insert(i64, u8),
        Remove(i64),
    }

    fn ids() -> impl proptest::strategy::Strategy<Value = i64> {
        proptest::prop_oneof![
            0i64..40,
            -5i64..5000,
            proptest::prelude::Just(i64::MIN),
            proptest::prelude::Just(i64::MAX),
            proptest::prelude::Just(i64::MAX - 1),
        ]
    }

    proptest::proptest! {
        /// The run and its map answer as one ordered map would, holding
        /// the same values, for numbers that rise, repeat, fall back,
        /// jump far and sit at the ends of `i64`, inserted and removed in
        /// any order; and the run stays within its bound of empty slots.
        #[test]
        fn seq_run_is_a_map(ops in proptest::collection::vec(
            proptest::prop_oneof![
                3 => (ids(), 0u8..3).prop_map(|(id, v)| Op::Insert(id, v)),
                1 => ids().prop_map(Op::Remove),
            ],
            0..300,
        )) {
            use proptest::{prop_assert, prop_assert_eq};
            let mut map: SeqRun<u8> = SeqRun::default();
            let mut want: BTreeMap<i64, u8> = BTreeMap::new();
            let mut most = 0usize;
            for &op in &ops {
                match op {
                    Op::Insert(id, v) => {
                        prop_assert_eq!(map.insert(id, v), want.insert(id, v));
                        if let Some(x) = map.get_mut(id) {
                            *x += 10;
                        }
                        if let Some(x) = want.get_mut(&id) {
                            *x += 10;
                        }
                    }
                    Op::Remove(id) => prop_assert_eq!(map.remove(id), want.remove(&id)),
                }
                most = most.max(want.len());
                prop_assert_eq!(map.len(), want.len());
                prop_assert!(map.run_len() <= 4 * most + MAX_GAP + 5);
            }
            for &op in &ops {
                let (Op::Insert(id, _) | Op::Remove(id)) = op;
                for probe in [id, id.wrapping_add(1), id.wrapping_sub(1)] {
                    prop_assert_eq!(map.get(probe), want.get(&probe), "id {}", probe);
                }
            }
        }
    }

    /// A number past a gap goes to the map; once the run reaches it, it is
    /// found in its slot with the value the map held, and set again there.
    #[test]
    fn numbers_the_run_reaches_leave_the_map() {
        let mut map = SeqRun::default();
        for id in 0..2000 {
            map.insert(id, 'a');
        }
        let far = 2000 + MAX_GAP as i64 + 10;
        map.insert(far, 'b');
        assert_eq!(map.rest.len(), 1);
        for id in 2000..far {
            map.insert(id, 'a');
        }
        assert_eq!(map.rest.len(), 1);
        // the run grows past it
        map.insert(far + 1, 'a');
        assert!(map.rest.is_empty());
        assert_eq!(map.get(far), Some(&'b'));
        assert_eq!(map.insert(far, 'c'), Some('b'));
        assert_eq!(map.get(far), Some(&'c'));
        assert_eq!(map.len(), far as usize + 2);
    }

    /// Numbers that rise by one are held in the run, one far before it
    /// and one far past it in the map; forgetting the oldest first moves
    /// the run's start, so a sliding window keeps a run of its own size.
    #[test]
    fn rising_numbers_take_slots_and_a_window_slides() {
        let mut map = SeqRun::default();
        for id in 100..10_100 {
            map.insert(id, ());
        }
        map.insert(5, ());
        map.insert(1 << 40, ());
        assert_eq!(
            (map.run_len(), map.filled, map.rest.len()),
            (10_000, 10_000, 2)
        );
        assert!(map.get(99).is_none() && map.get(10_100).is_none());
        assert!(map.get(100).is_some() && map.get(5).is_some() && map.get(1 << 40).is_some());
        for id in 10_100..100_000 {
            map.insert(id, ());
            assert_eq!(map.remove(id - 10_000), Some(()));
        }
        assert_eq!(
            (map.run_len(), map.filled, map.base),
            (10_000, 10_000, 90_000)
        );
    }
}
