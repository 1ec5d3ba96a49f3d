//! The launch → kernel join of the nsys reader: which `CUPTI_ACTIVITY_KIND_RUNTIME`
//! row launched each kernel (and copy or set), by (process, correlation id).
//!
//! Hand-written instead of a hash map because it is on the hot path of every
//! profile: the wanted keys are sorted once, per process, and each API row
//! is looked up from a cursor that moves forward. nsys hands out correlation
//! ids in call order within a process and writes the API table in time
//! order, so nearly every lookup is a hit at the cursor or a short step
//! past it, in memory order, where a hash map misses the cache on most of
//! millions of rows. Rows out of that order (any order at all) fall back to
//! a binary search, so the result never depends on the order.

/// Where each wanted (process, correlation id) key has its slot.
pub(crate) struct JoinIndex {
    /// The processes, in ascending order, with the range of `keys` that
    /// holds theirs.
    pids: Vec<(u64, usize, usize)>,
    /// (correlation id, slot), sorted by process, then correlation id.
    keys: Vec<(i64, u32)>,
    /// The slot of each wanted item, in the order the items were given.
    pub(crate) slot_of: Vec<u32>,
    /// Distinct keys: slots are `0..slots`, numbered in the order of each
    /// key's first item.
    pub(crate) slots: usize,
    /// Per process: where the last lookup ended.
    cursor: Vec<usize>,
    /// The process of the last lookup (index into `pids`).
    last_pid: usize,
}

impl JoinIndex {
    /// The index of `items`' keys (process bits, correlation id); items
    /// with equal keys share a slot.
    pub(crate) fn new(items: impl Iterator<Item = (u64, i64)>) -> JoinIndex {
        let mut all: Vec<(u64, i64, u32)> = items
            .enumerate()
            .map(|(i, (p, c))| (p, c, i as u32))
            .collect();
        let n = all.len();
        // (process, correlation, item): equal keys sit together, their
        // first item first
        all.sort_unstable();
        // a key's slot is the rank of its first item among the first items
        let mut first = vec![false; n];
        for (i, e) in all.iter().enumerate() {
            if i == 0 || (all[i - 1].0, all[i - 1].1) != (e.0, e.1) {
                first[e.2 as usize] = true;
            }
        }
        let mut rank = vec![u32::MAX; n];
        let mut slots = 0u32;
        for (i, f) in first.iter().enumerate() {
            if *f {
                rank[i] = slots;
                slots += 1;
            }
        }
        drop(first);
        let mut slot_of = vec![0u32; n];
        let mut keys: Vec<(i64, u32)> = Vec::with_capacity(slots as usize);
        let mut pids: Vec<(u64, usize, usize)> = Vec::new();
        let mut current = u32::MAX;
        for (i, e) in all.iter().enumerate() {
            if i == 0 || (all[i - 1].0, all[i - 1].1) != (e.0, e.1) {
                current = rank[e.2 as usize];
                if pids.last().is_none_or(|p| p.0 != e.0) {
                    if let Some(p) = pids.last_mut() {
                        p.2 = keys.len();
                    }
                    pids.push((e.0, keys.len(), keys.len()));
                }
                keys.push((e.1, current));
            }
            slot_of[e.2 as usize] = current;
        }
        if let Some(p) = pids.last_mut() {
            p.2 = keys.len();
        }
        let cursor = pids.iter().map(|p| p.1).collect();
        JoinIndex {
            pids,
            keys,
            slot_of,
            slots: slots as usize,
            cursor,
            last_pid: 0,
        }
    }

    /// The slot of key (`pid`, `corr`), if wanted.
    #[inline]
    pub(crate) fn get(&mut self, pid: u64, corr: i64) -> Option<u32> {
        let p = match self.pids.get(self.last_pid) {
            Some(x) if x.0 == pid => self.last_pid,
            _ => {
                let p = self.pids.binary_search_by_key(&pid, |x| x.0).ok()?;
                self.last_pid = p;
                p
            }
        };
        let (_, lo, hi) = self.pids[p];
        let at = self.cursor[p];
        let keys = &self.keys[lo..hi];
        let local = at - lo;
        // at the cursor, or a few steps past it: the common case
        let mut i = local;
        let mut steps = 0;
        while i < keys.len() && keys[i].0 < corr && steps < 8 {
            i += 1;
            steps += 1;
        }
        let found = if i < keys.len() && keys[i].0 == corr {
            Some(i)
        } else if i < keys.len() && keys[i].0 > corr && (i == 0 || keys[i - 1].0 < corr) {
            // between two wanted keys: not wanted; the cursor may stay
            self.cursor[p] = lo + i;
            return None;
        } else {
            keys.binary_search_by_key(&corr, |k| k.0).ok()
        };
        let i = found?;
        self.cursor[p] = lo + i + 1;
        Some(keys[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The plain answer: slots by first appearance, looked up in a map.
    fn plain(items: &[(u64, i64)]) -> (Vec<u32>, HashMap<(u64, i64), u32>) {
        let mut map = HashMap::new();
        let mut slot_of = Vec::new();
        for k in items {
            let next = map.len() as u32;
            slot_of.push(*map.entry(*k).or_insert(next));
        }
        (slot_of, map)
    }

    fn check(items: &[(u64, i64)], probes: &[(u64, i64)]) {
        let (want_slots, map) = plain(items);
        let mut j = JoinIndex::new(items.iter().copied());
        assert_eq!(j.slot_of, want_slots);
        assert_eq!(j.slots, map.len());
        for &(p, c) in probes {
            assert_eq!(j.get(p, c), map.get(&(p, c)).copied(), "probe {p} {c}");
        }
    }

    #[test]
    fn in_order_out_of_order_and_repeated_probes_match_a_map() {
        let items: Vec<(u64, i64)> = vec![
            (2 << 24, 5),
            (1 << 24, 7),
            (2 << 24, 1),
            (1 << 24, 7),
            (1 << 24, 3),
            (2 << 24, 40),
            (0, -1),
            (1 << 24, 100),
        ];
        let mut probes = Vec::new();
        // ascending per process, interleaved
        for c in -2..110 {
            probes.push((1 << 24, c));
            probes.push((2 << 24, c));
            probes.push((3 << 24, c));
            probes.push((0, c));
        }
        // descending, then repeated, then random-ish
        for c in (-2..110).rev() {
            probes.push((1 << 24, c));
            probes.push((2 << 24, c));
        }
        probes.extend([(1 << 24, 7), (1 << 24, 7), (2 << 24, 5), (1 << 24, 3)]);
        for i in 0..500i64 {
            probes.push(((((i * 7) % 3) as u64) << 24, (i * 37) % 113 - 2));
        }
        check(&items, &probes);
    }

    #[test]
    fn empty_and_single() {
        check(&[], &[(0, 0), (1, 1)]);
        check(&[(0, 0)], &[(0, 0), (0, 1), (0, -1), (0, 0)]);
    }

    #[test]
    fn long_gaps_between_wanted_keys() {
        let items: Vec<(u64, i64)> = (0..1000).map(|i| (1u64 << 24, i * 50)).collect();
        let probes: Vec<(u64, i64)> = (0..60_000).map(|c| (1u64 << 24, c)).collect();
        check(&items, &probes);
    }
}
