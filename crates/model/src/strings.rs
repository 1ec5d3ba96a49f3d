//! One arena for every string of a trace.
//!
//! Millions of NVTX texts as separate `String`s cost an allocation and 24
//! bytes of header each; here they share one buffer and are named by a
//! 4-byte [`StrRef`].

/// Handle of a string in a [`StrPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrRef(pub u32);

/// Append-only string arena with an optional map from the file's own string
/// ids (nsys `StringIds.id`, nvprof `StringTable._id_`).
///
/// Text lives in fixed-size blocks (a string never straddles two), so the
/// arena grows without the copy-and-double of one big `String`, whose slack
/// alone can be hundreds of megabytes on a large trace, and two arenas merge
/// by moving blocks, not bytes. Each string costs its bytes plus 4 bytes:
/// its end in its block; its block is found from the number of each
/// block's first string (a search of a list of tens of entries, in cache:
/// 4 bytes less per string is 57 MB on a 3 M-kernel export).
///
/// Handles may share a text ([`StrPool::push_shared`]): each handle then
/// costs 4 bytes more (its stored text's number), and a repeated text
/// nothing else. Handles stay numbered in push order either way.
#[derive(Debug, Default)]
pub struct StrPool {
    blocks: Vec<String>,
    /// The number of each block's first stored text (every block holds
    /// one at least), ascending.
    firsts: Vec<u32>,
    /// One per stored text: where it ends in its block.
    ends: Vec<u32>,
    /// Each handle's stored text, once some texts are shared (else handle
    /// `h` is stored text `h`).
    slots: Option<Vec<u32>>,
    by_file_id: FileIds,
}

/// The texts [`StrPool::push_shared`] stored, by text.
pub type SharedTexts = crate::FastMap<Box<str>, u32>;

#[derive(Debug, Default)]
enum FileIds {
    #[default]
    None,
    Dense(Vec<u32>),
    /// Sorted by id, one pair per id: searched by halving (a hash of every
    /// kernel's three ids cost more than the search, and a sorted list
    /// cannot be made slow by ids chosen to collide).
    Sparse(Vec<(i64, u32)>),
}

const NO_REF: u32 = u32::MAX;
const BLOCK: usize = 8 << 20;
/// The longest text stored whole: ends are 4 bytes. No reader gives a
/// longer one (SQLite texts and JSON strings are bounded far below it).
const MAX_TEXT: usize = u32::MAX as usize;

impl StrPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Store `s` and return its handle. The empty string is stored too.
    pub fn push(&mut self, s: &str) -> StrRef {
        let stored = self.store(s);
        self.handle_of(stored)
    }

    /// A new handle for `s`, sharing the text of an earlier
    /// `push_shared` of the same text with the same `seen` (which holds
    /// each text stored this way once): for many handles over few
    /// distinct texts.
    pub fn push_shared(&mut self, s: &str, seen: &mut SharedTexts) -> StrRef {
        match seen.get(s) {
            Some(&stored) => {
                let n = self.ends.len() as u32;
                let slots = self.slots.get_or_insert_with(|| (0..n).collect());
                slots.push(stored);
                StrRef(slots.len() as u32 - 1)
            }
            None => {
                let stored = self.store(s);
                seen.insert(s.into(), stored);
                self.handle_of(stored)
            }
        }
    }

    /// Append `s` to the text; its stored-text number.
    fn store(&mut self, s: &str) -> u32 {
        let s = if s.len() > MAX_TEXT {
            // (cut at a character boundary; see MAX_TEXT)
            let mut cut = MAX_TEXT;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            &s[..cut]
        } else {
            s
        };
        let id = self.ends.len() as u32;
        let fits = self
            .blocks
            .last()
            .is_some_and(|b| b.len() + s.len() <= b.capacity().min(MAX_TEXT));
        if !fits {
            self.blocks.push(String::with_capacity(BLOCK.max(s.len())));
            self.firsts.push(id);
        }
        let end = match self.blocks.last_mut() {
            Some(block) => {
                block.push_str(s);
                block.len()
            }
            None => 0,
        };
        self.ends.push(end as u32);
        id
    }

    /// A new handle for stored text `stored`.
    fn handle_of(&mut self, stored: u32) -> StrRef {
        match &mut self.slots {
            Some(slots) => {
                slots.push(stored);
                StrRef(slots.len() as u32 - 1)
            }
            None => StrRef(stored),
        }
    }

    /// The text of `r` (empty for a handle from another pool).
    pub fn get(&self, r: StrRef) -> &str {
        let i = match &self.slots {
            Some(slots) => match slots.get(r.0 as usize) {
                Some(&stored) => stored as usize,
                None => return "",
            },
            None => r.0 as usize,
        };
        let Some(&end) = self.ends.get(i) else {
            return "";
        };
        // the last block whose first text is at or before `i`
        let block = self.firsts.partition_point(|&f| f as usize <= i);
        let Some(block) = block.checked_sub(1) else {
            return "";
        };
        // a text starts where the previous one ends, unless it is its
        // block's first
        let start = if self.firsts[block] as usize == i {
            0
        } else {
            i.checked_sub(1)
                .and_then(|p| self.ends.get(p))
                .map_or(0, |&e| e as usize)
        };
        self.blocks
            .get(block)
            .and_then(|b| b.get(start..end as usize))
            .unwrap_or("")
    }

    /// Move every string of `other` to the end of this pool; a handle `h`
    /// of `other` becomes `StrRef(h.0 + offset)` with the returned offset.
    /// Text blocks are moved, not copied. The file-id map of whichever pool
    /// has one is kept (shifted).
    pub fn append(&mut self, other: StrPool) -> u32 {
        let offset = self.len() as u32;
        let stored = self.ends.len() as u32;
        if self.slots.is_some() || other.slots.is_some() {
            let slots = self.slots.get_or_insert_with(|| (0..stored).collect());
            match other.slots {
                Some(theirs) => slots.extend(theirs.into_iter().map(|t| t + stored)),
                None => slots.extend(stored..stored + other.ends.len() as u32),
            }
        }
        // their blocks follow ours, each still starting with its own first
        // text (renumbered)
        self.blocks.extend(other.blocks);
        self.firsts
            .extend(other.firsts.into_iter().map(|f| f + stored));
        // exactly: doubling a list of millions of ends would leave up to
        // its size again unused for the trace's life
        self.ends.reserve_exact(other.ends.len());
        self.ends.extend(other.ends);
        if matches!(self.by_file_id, FileIds::None) {
            self.by_file_id = match other.by_file_id {
                FileIds::None => FileIds::None,
                FileIds::Dense(v) => FileIds::Dense(
                    v.into_iter()
                        .map(|r| if r == NO_REF { r } else { r + offset })
                        .collect(),
                ),
                FileIds::Sparse(m) => {
                    FileIds::Sparse(m.into_iter().map(|(k, r)| (k, r + offset)).collect())
                }
            };
        }
        offset
    }

    /// Number of handles given out.
    pub fn len(&self) -> usize {
        self.slots.as_ref().map_or(self.ends.len(), Vec::len)
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of text stored.
    pub fn text_bytes(&self) -> usize {
        self.blocks.iter().map(String::len).sum()
    }

    /// Load the file's string table: `(file id, text)` pairs.
    pub fn load_file_strings(&mut self, rows: impl IntoIterator<Item = (i64, String)>) {
        let mut pairs: Vec<(i64, u32)> = Vec::new();
        for (id, text) in rows {
            let r = self.push(&text);
            pairs.push((id, r.0));
        }
        self.index_file_ids(pairs);
    }

    /// Record that file id `id` names handle `r`. Call [`Self::index_file_ids`]
    /// through [`Self::load_file_strings`] for bulk loads.
    pub fn index_file_ids(&mut self, pairs: Vec<(i64, u32)>) {
        let max = pairs.iter().map(|(id, _)| *id).max().unwrap_or(-1);
        let min = pairs.iter().map(|(id, _)| *id).min().unwrap_or(0);
        if min >= 0 && (max as u64) < 4 * (pairs.len() as u64) + 1024 {
            let mut dense = vec![NO_REF; (max + 1).max(0) as usize];
            for (id, r) in pairs {
                if let Some(slot) = dense.get_mut(id as usize) {
                    *slot = r;
                }
            }
            self.by_file_id = FileIds::Dense(dense);
        } else {
            // the last pair of an id names it (as a map built in order
            // would): reversed, then sorted stably, it is each id's first
            let mut pairs = pairs;
            pairs.reverse();
            pairs.sort_by_key(|&(id, _)| id);
            pairs.dedup_by_key(|&mut (id, _)| id);
            self.by_file_id = FileIds::Sparse(pairs);
        }
    }

    /// The handle of the file's string id `id`, if the table had it.
    pub fn by_file_id(&self, id: i64) -> Option<StrRef> {
        let r = match &self.by_file_id {
            FileIds::None => return None,
            FileIds::Dense(v) => *v.get(usize::try_from(id).ok()?)?,
            FileIds::Sparse(m) => {
                let i = m.binary_search_by_key(&id, |&(k, _)| k).ok()?;
                m.get(i)?.1
            }
        };
        (r != NO_REF).then_some(StrRef(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_get_and_file_ids() {
        let mut p = StrPool::new();
        p.load_file_strings(vec![(0, "-- null --".into()), (2, "abc".into())]);
        let x = p.push("inline");
        assert_eq!(p.get(x), "inline");
        assert_eq!(p.by_file_id(2).map(|r| p.get(r)), Some("abc"));
        assert_eq!(p.by_file_id(1), None);
        assert_eq!(p.by_file_id(-5), None);
        assert_eq!(p.get(StrRef(99)), "");
    }

    /// Texts over many blocks (some larger than a block, some empty, the
    /// first of a block empty too), in two pools appended both ways: each
    /// handle reads its own text, compared with a list kept beside.
    #[test]
    fn texts_across_blocks_and_appends() {
        let sizes = [
            0,
            3 << 20,
            5,
            9 << 20,
            0,
            6 << 20,
            1,
            2 << 20,
            0,
            0,
            7 << 20,
            3,
        ];
        let texts: Vec<String> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| ((b'a' + i as u8) as char).to_string().repeat(n))
            .collect();
        let fill = |p: &mut StrPool, ts: &[String]| -> Vec<StrRef> {
            ts.iter().map(|t| p.push(t)).collect()
        };
        let (front, back) = texts.split_at(5);
        for front_first in [true, false] {
            let (first, second) = if front_first {
                (front, back)
            } else {
                (back, front)
            };
            let mut a = StrPool::new();
            let ra = fill(&mut a, first);
            assert!(a.firsts.len() > 1, "{:?}", a.firsts);
            let mut b = StrPool::new();
            let rb = fill(&mut b, second);
            let off = a.append(b);
            // and one more after the append, into the last block
            let last = a.push("tail");
            for (r, t) in ra.iter().zip(first) {
                assert_eq!(a.get(*r), t.as_str());
            }
            for (r, t) in rb.iter().zip(second) {
                assert_eq!(a.get(StrRef(r.0 + off)), t.as_str());
            }
            assert_eq!(a.get(last), "tail");
            assert_eq!(a.get(StrRef(last.0 + 1)), "");
        }
    }

    #[test]
    fn append_shifts_handles() {
        let mut a = StrPool::new();
        a.load_file_strings(vec![(1, "one".into())]);
        let mut b = StrPool::new();
        let x = b.push("local");
        let off = a.append(b);
        assert_eq!(a.get(StrRef(x.0 + off)), "local");
        assert_eq!(a.by_file_id(1).map(|r| a.get(r)), Some("one"));
    }

    #[test]
    fn strings_across_blocks() {
        let mut p = StrPool::new();
        let big = "x".repeat(BLOCK - 3);
        let a = p.push(&big);
        let b = p.push("abcdef"); // does not fit: next block
        let c = p.push("");
        let d = p.push(&"y".repeat(BLOCK + 10)); // larger than a block
        let e = p.push("tail");
        assert_eq!(p.get(a), big);
        assert_eq!(p.get(b), "abcdef");
        assert_eq!(p.get(c), "");
        assert_eq!(p.get(d).len(), BLOCK + 10);
        assert_eq!(p.get(e), "tail");
        let mut q = StrPool::new();
        let z = q.push("z");
        let off = q.append(p);
        assert_eq!(q.get(z), "z");
        assert_eq!(q.get(StrRef(b.0 + off)), "abcdef");
        assert_eq!(q.get(StrRef(e.0 + off)), "tail");
    }

    #[test]
    fn shared_texts_keep_handles_in_push_order() {
        let mut p = StrPool::new();
        let mut seen = SharedTexts::default();
        let texts = ["a", "b", "a", "", "b", "c", "", "a"];
        let mut handles = vec![p.push("plain")];
        handles.extend(texts.iter().map(|t| p.push_shared(t, &mut seen)));
        handles.push(p.push("a"));
        // handles are numbered in push order, shared or not
        let want: Vec<u32> = (0..handles.len() as u32).collect();
        assert_eq!(handles.iter().map(|h| h.0).collect::<Vec<_>>(), want);
        assert_eq!(p.len(), handles.len());
        let mut all = vec!["plain"];
        all.extend(texts);
        all.push("a");
        for (h, t) in handles.iter().zip(&all) {
            assert_eq!(p.get(*h), *t);
        }
        // "a", "b", "", "c" stored once each, besides the two plain pushes
        assert_eq!(p.text_bytes(), "plain".len() + "abc".len() + "a".len());
        assert_eq!(p.get(StrRef(handles.len() as u32)), "");
        // appended either way round: the other pool's handles shift by
        // this one's handle count
        let mut q = StrPool::new();
        q.load_file_strings(vec![(7, "seven".into())]);
        let off = q.append(p);
        assert_eq!(off, 1);
        for (h, t) in handles.iter().zip(&all) {
            assert_eq!(q.get(StrRef(h.0 + off)), *t);
        }
        assert_eq!(q.by_file_id(7).map(|r| q.get(r)), Some("seven"));
        let mut r = StrPool::new();
        let mut seen = SharedTexts::default();
        let x = r.push_shared("x", &mut seen);
        let y = r.push_shared("x", &mut seen);
        let off = r.append(q);
        assert_eq!((r.get(x), r.get(y)), ("x", "x"));
        assert_eq!(r.get(StrRef(off)), "seven");
        for (h, t) in handles.iter().zip(&all) {
            assert_eq!(r.get(StrRef(h.0 + 1 + off)), *t);
        }
        assert_eq!(r.len(), 2 + 1 + handles.len());
    }

    #[test]
    fn sparse_ids() {
        let mut p = StrPool::new();
        p.load_file_strings(vec![(1 << 40, "far".into()), (3, "near".into())]);
        assert_eq!(p.by_file_id(1 << 40).map(|r| p.get(r)), Some("far"));
        assert_eq!(p.by_file_id(3).map(|r| p.get(r)), Some("near"));
    }

    proptest::proptest! {
        /// Any ids (dense, sparse, negative, repeated) name what a map
        /// built from the rows in order says: a repeated id its last text.
        #[test]
        fn file_ids_answer_as_a_map(rows in proptest::collection::vec(
            (proptest::prop_oneof![0i64..50, -3i64..3, proptest::prelude::any::<i64>()], 0u8..200),
            0..60,
        )) {
            let mut p = StrPool::new();
            p.load_file_strings(rows.iter().map(|&(id, t)| (id, t.to_string())));
            let want: std::collections::HashMap<i64, String> =
                rows.iter().map(|&(id, t)| (id, t.to_string())).collect();
            for &(id, _) in &rows {
                for probe in [id, id.wrapping_add(1), id.wrapping_sub(1)] {
                    proptest::prop_assert_eq!(
                        p.by_file_id(probe).map(|r| p.get(r)),
                        want.get(&probe).map(String::as_str),
                        "id {}", probe
                    );
                }
            }
        }
    }
}
