//! The backward → forward lookup (PyProf `findFpropKernel`,
//! pyprof-semantics.md §4.4), streaming.
//!
//! PyProf scans every kernel read so far, newest first, for the last
//! `fprop` kernel whose `seqId` holds the sequence id, then does the same
//! over `altSeqId`. Here two maps from sequence id to the latest such
//! kernel answer the same question in O(log n) without keeping the
//! kernels. Sequence ids mostly rise by one, so each map is a
//! [`SeqRun`]: a run of slots, one per id from the first (8 bytes an id,
//! where an ordered map took about 28: 67 MB at 3 M kernels), with an
//! ordered map for the ids the run does not take. Neither is hashed: a
//! hash table of a million ids takes a cache miss per kernel, while the
//! run and the map's edge stay in cache.

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use rprof_model::FastMap;

use rprof_model::{KernelRef, SymList};

use crate::marker::Marker;
use crate::seqrun::SeqRun;

/// Sequence id → entry (see the module).
type SeqMap = SeqRun<Arc<Fprop>>;

/// Map `id` to `info` in `map`; an id that already maps to `info` itself
/// is left alone (no reference count changed without need: see
/// [`FpropIndex::observe`]).
fn set(map: &mut SeqMap, id: i64, info: &Arc<Fprop>) {
    match map.get_mut(id) {
        Some(old) if Arc::ptr_eq(old, info) => {}
        Some(old) => *old = Arc::clone(info),
        None => {
            map.insert(id, Arc::clone(info));
        }
    }
}

/// What a backward kernel borrows from its forward kernel.
#[derive(Debug, PartialEq)]
pub struct Fprop {
    /// True when the forward kernel had argument markers at all.
    pub has_marker: bool,
    /// Its first argument marker, decoded (`None` when it is not a PyProf
    /// marker).
    pub marker: Option<Arc<Marker>>,
    /// Its `mod` list.
    pub module: Vec<String>,
    /// Its `op` list.
    pub op: Vec<String>,
    /// Its layer names.
    pub layer: Vec<String>,
    /// Its call stack.
    pub trace: Vec<String>,
}

/// Sequence id → latest forward kernel (ordered maps: see the module).
#[derive(Debug, Default)]
pub struct FpropIndex {
    by_seq: SeqMap,
    by_alt: SeqMap,
    /// The last entry made; consecutive kernels of one op share it.
    last: Option<Arc<Fprop>>,
    /// Entries by the hash of their contents: kernels of the same op in
    /// different iterations share one entry rather than each copying its
    /// four lists (bounded; a miss only costs a copy).
    shared: FastMap<u64, Arc<Fprop>>,
}

/// Most distinct forward contents [`FpropIndex`] shares at once.
const SHARED_CAP: usize = 1 << 14;

fn same(a: &[String], b: SymList<'_>) -> bool {
    a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x == y)
}

/// `f` holds what `rec` (with decoded first marker `marker`) would give.
fn holds(f: &Fprop, rec: KernelRef<'_, '_>, marker: Option<&Arc<Marker>>) -> bool {
    f.has_marker != rec.marker().is_empty() // i.e. both have markers or neither
        && match (&f.marker, marker) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
            (None, None) => true,
            _ => false,
        }
        && same(&f.module, rec.module())
        && same(&f.op, rec.op())
        && same(&f.layer, rec.layer())
        && same(&f.trace, rec.trace())
}

/// A hash of what [`holds`] compares (the marker by its op only).
fn content_hash(b: &impl BuildHasher, rec: KernelRef<'_, '_>, marker: Option<&Arc<Marker>>) -> u64 {
    let mut h = b.build_hasher();
    rec.marker().is_empty().hash(&mut h);
    marker.map(|m| (&m.module, &m.op)).hash(&mut h);
    for list in [rec.module(), rec.op(), rec.layer(), rec.trace()] {
        list.len().hash(&mut h);
        for s in list.iter() {
            s.hash(&mut h);
        }
    }
    h.finish()
}

impl FpropIndex {
    /// An empty index.
    pub fn new() -> FpropIndex {
        FpropIndex::default()
    }

    /// Record a kernel (call for every kernel, in input order). Only
    /// forward kernels with sequence ids are kept.
    pub fn observe(&mut self, rec: KernelRef<'_, '_>, marker: Option<&Arc<Marker>>) {
        if !rec.dir.is_fprop() || (rec.seq_id.is_empty() && rec.alt_seq_id.is_empty()) {
            return;
        }
        fn own(v: SymList<'_>) -> Vec<String> {
            v.iter().map(str::to_owned).collect()
        }
        // the entry is shared by reference counts that the thread running
        // the models also touches (through `Resolved::from`): every count
        // changed here is a cache line taken from that thread, so none is
        // changed without need (no temporary clone; an id that already
        // maps to this entry is left alone)
        if !self.last.as_ref().is_some_and(|l| holds(l, rec, marker)) {
            let key = content_hash(self.shared.hasher(), rec, marker);
            let info = match self.shared.get(&key).filter(|f| holds(f, rec, marker)) {
                Some(f) => Arc::clone(f),
                None => {
                    let f = Arc::new(Fprop {
                        has_marker: !rec.marker().is_empty(),
                        marker: marker.cloned(),
                        module: own(rec.module()),
                        op: own(rec.op()),
                        layer: own(rec.layer()),
                        trace: own(rec.trace()),
                    });
                    if self.shared.len() >= SHARED_CAP {
                        self.shared.clear();
                    }
                    self.shared.insert(key, Arc::clone(&f));
                    f
                }
            };
            self.last = Some(info);
        }
        let Some(info) = self.last.as_ref() else {
            return;
        };
        for (ids, map) in [
            (&rec.seq_id, &mut self.by_seq),
            (&rec.alt_seq_id, &mut self.by_alt),
        ] {
            for &s in ids {
                set(map, s, info);
            }
        }
    }

    /// The latest forward kernel with `seq` in its `seqId`, else in its
    /// `altSeqId`.
    pub fn find(&self, seq: i64) -> Option<&Arc<Fprop>> {
        self.by_seq.get(seq).or_else(|| self.by_alt.get(seq))
    }

    /// Number of sequence ids indexed.
    pub fn len(&self) -> usize {
        self.by_seq.len() + self.by_alt.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use rprof_model::{Kernels, Record};

    use super::*;

    /// `idx.observe` of `r` read back as a row.
    fn see(idx: &mut FpropIndex, r: &Record<'static>) {
        let k = Kernels::from_records([r.clone()]);
        idx.observe(k.get(0).expect("one row"), None);
    }

    fn rec(dir: &'static str, seq: &[i64], alt: &[i64], op: &'static str) -> Record<'static> {
        Record {
            dir: rprof_model::Dir::from_text(Cow::Borrowed(dir)),
            seq_id: seq.to_vec(),
            alt_seq_id: alt.to_vec(),
            op: vec![Cow::Borrowed(op)],
            ..Record::default()
        }
    }

    /// PyProf's scan, for comparison.
    fn brute(kernels: &[Record<'_>], seq: i64) -> Option<String> {
        let hit = |f: &dyn Fn(&Record<'_>) -> bool| {
            kernels
                .iter()
                .rev()
                .find(|k| k.dir.as_str() == "fprop" && f(k))
                .map(|k| k.op[0].to_string())
        };
        hit(&|k| k.seq_id.contains(&seq)).or_else(|| hit(&|k| k.alt_seq_id.contains(&seq)))
    }

    #[test]
    fn seq_before_alt_and_latest_wins() {
        let ks = vec![
            rec("fprop", &[10], &[11], "a"),
            rec("fprop", &[11], &[], "b"),
            rec("fprop", &[12], &[10], "c"),
            rec("bprop", &[10], &[], "d"),
            rec("fprop", &[10], &[], "e"),
        ];
        let mut idx = FpropIndex::new();
        let mut seen = Vec::new();
        for k in &ks {
            see(&mut idx, k);
            seen.push(k.clone());
            for s in 9..14 {
                assert_eq!(
                    idx.find(s).map(|f| f.op[0].clone()),
                    brute(&seen, s),
                    "seq {s}"
                );
            }
        }
    }

    #[test]
    fn equal_contents_share_one_entry() {
        let ks = [
            rec("fprop", &[1], &[], "a"),
            rec("fprop", &[2], &[], "b"),
            rec("fprop", &[3], &[], "a"),
            rec("fprop", &[4], &[7], "a"),
        ];
        let mut idx = FpropIndex::new();
        for k in &ks {
            see(&mut idx, k);
        }
        let get = |idx: &FpropIndex, s| Arc::clone(idx.find(s).expect("indexed"));
        let (a1, b2, a3, a4, a7) = (
            get(&idx, 1),
            get(&idx, 2),
            get(&idx, 3),
            get(&idx, 4),
            get(&idx, 7),
        );
        // `a` twice, not adjacent: one entry, same contents
        assert!(Arc::ptr_eq(&a1, &a3));
        assert!(Arc::ptr_eq(&a3, &a4));
        assert!(Arc::ptr_eq(&a4, &a7));
        assert!(!Arc::ptr_eq(&a1, &b2));
        assert_eq!(b2.op, ["b"]);
        // a different layer is a different entry
        let mut other = rec("fprop", &[5], &[], "a");
        other.layer = vec![Cow::Borrowed("L")];
        see(&mut idx, &other);
        let l5 = get(&idx, 5);
        assert!(!Arc::ptr_eq(&a1, &l5));
        assert_eq!(l5.layer, ["L"]);
        assert!(a1.layer.is_empty());
    }

    proptest::proptest! {
        #[test]
        fn matches_pyprof_scan(ks in proptest::collection::vec(
            (proptest::bool::ANY, proptest::collection::vec(0i64..6, 0..3), proptest::collection::vec(0i64..6, 0..3)),
            0..40,
        )) {
            let mut idx = FpropIndex::new();
            let mut seen = Vec::new();
            for (n, (fwd, seq, alt)) in ks.iter().enumerate() {
                let mut r = rec(if *fwd { "fprop" } else { "bprop" }, seq, alt, "x");
                r.op = vec![Cow::Owned(n.to_string())];
                see(&mut idx, &r);
                seen.push(r);
                for s in 0..6 {
                    proptest::prop_assert_eq!(idx.find(s).map(|f| f.op[0].clone()), brute(&seen, s));
                }
            }
        }
    }
}
