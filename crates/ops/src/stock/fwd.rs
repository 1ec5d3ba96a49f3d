//! Forward ops by autograd sequence number, for backward kernels
//! (pyprof-semantics.md §10.2 step 6): a backward node `XBackward0, seq = N`
//! pairs with the forward op of the same `seq` whose normalised name
//! matches (`AddmmBackward0` ↔ `aten::addmm`,
//! `NativeLayerNormBackward0` ↔ `aten::native_layer_norm`).
//!
//! Bounded: the oldest sequence numbers are dropped first (a backward runs
//! within the same iteration as its forward).

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

use rprof_model::FastMap;
use rprof_model::stock::StockMarker;
use smallvec::SmallVec;

use crate::seqrun::SeqRun;

/// The names a forward marker is known by; shared by every marker with
/// the same name and op (a run has few of those and many markers).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FwdNames {
    /// Its name.
    pub(crate) name: Arc<str>,
    /// Its name, normalised for matching.
    pub(crate) norm: Arc<str>,
    /// The printed op of the forward kernels it enclosed (the outermost
    /// `aten::` op), with its namespace.
    pub(crate) op: Arc<str>,
}

self_cell::self_cell!(
    /// A forward marker's text with its decoding, which borrows it.
    struct Decoded {
        owner: Arc<str>,
        #[covariant]
        dependent: StockMarker,
    }
    impl {Debug}
);

/// A forward marker's text, decoded the first time a backward kernel
/// borrows it (never, in an inference run), then shared by every kernel
/// that does: one decoding per marker, not one per kernel and use.
#[derive(Debug)]
pub(crate) struct FwdMarker {
    text: Arc<str>,
    /// The length of its name, when the record carried it
    /// (`Record::stack_names`).
    name_len: Option<usize>,
    decoded: OnceLock<Decoded>,
}

impl FwdMarker {
    fn new(text: &str, name_len: Option<usize>) -> FwdMarker {
        FwdMarker {
            text: Arc::from(text),
            name_len,
            decoded: OnceLock::new(),
        }
    }

    /// The marker, decoded on first use (its name taken whole when its
    /// length is known).
    fn get(&self) -> &StockMarker<'_> {
        self.decoded
            .get_or_init(|| {
                Decoded::new(Arc::clone(&self.text), |t| match self.name_len {
                    Some(n) => rprof_model::stock::parse_split(t, n),
                    None => rprof_model::stock::parse(t),
                })
            })
            .borrow_dependent()
    }
}

impl PartialEq for FwdMarker {
    fn eq(&self, other: &FwdMarker) -> bool {
        self.text == other.text && self.name_len == other.name_len
    }
}

impl Eq for FwdMarker {}

/// One forward marker with a sequence number. A clone shares its parts:
/// a new marker costs its text and its cell, and dropping it frees only
/// those.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FwdOp {
    /// Its names (shared).
    pub(crate) names: Arc<FwdNames>,
    /// The marker, text and decoding (shared).
    marker: Arc<FwdMarker>,
    /// The marker has `sizes`.
    pub(crate) sized: bool,
}

impl FwdOp {
    /// Its name.
    pub(crate) fn name(&self) -> &str {
        &self.names.name
    }

    /// Its name, normalised for matching.
    pub(crate) fn norm(&self) -> &str {
        &self.names.norm
    }

    /// The printed op of the forward kernels it enclosed.
    pub(crate) fn op(&self) -> &str {
        &self.names.op
    }

    /// The marker text.
    pub(crate) fn text(&self) -> &str {
        &self.marker.text
    }

    /// The marker, decoded once for every kernel that borrows it.
    pub(crate) fn marker(&self) -> &StockMarker<'_> {
        self.marker.get()
    }
}

/// `aten::_native_layer_norm` → `nativelayernorm`.
#[cfg(test)]
pub(crate) fn normalise_forward(name: &str) -> String {
    let mut out = String::new();
    normalise_forward_into(name, &mut out);
    out
}

/// [`normalise_forward`] into `out` (cleared first).
fn normalise_forward_into(name: &str, out: &mut String) {
    let base = name.rsplit("::").next().unwrap_or(name);
    squash(base, out);
}

/// `base` without `_`, lower case, into `out` (cleared first).
fn squash(base: &str, out: &mut String) {
    out.clear();
    out.extend(
        base.chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase),
    );
}

/// `autograd::engine::evaluate_function: CudnnConvolutionBackward0` →
/// `cudnnconvolution`.
#[cfg(test)]
pub(crate) fn normalise_node(name: &str) -> String {
    let mut out = String::new();
    normalise_node_into(name, &mut out);
    out
}

/// [`normalise_node`] into `out` (cleared first): the per-kernel callers
/// reuse one buffer rather than allocate a string per backward kernel.
pub(crate) fn normalise_node_into(name: &str, out: &mut String) {
    let name = name.strip_prefix(super::EVALUATE).unwrap_or(name);
    let base = name.rsplit("::").next().unwrap_or(name);
    let base = base.trim_end_matches(|c: char| c.is_ascii_digit());
    let base = base
        .strip_suffix("Backward")
        .or_else(|| base.strip_suffix("_backward"))
        .unwrap_or(base);
    squash(base, out);
}

/// Most distinct names [`FwdIndex`] shares at once.
const NAMES_CAP: usize = 1 << 16;

/// Most markers of one sequence number kept in a plain list (searched by a
/// scan); beyond it they move into maps. Small: PyTorch gives one number
/// to runs of 100 and more `aten::to` and `aten::copy_` markers, and each
/// new one scanned every earlier one (at 512: 0.5 % of `summary --by
/// op`'s instructions on the 100 k-kernel benchmark export).
const SMALL: usize = 16;

/// The forward markers seen with one sequence number. Most numbers have a
/// few, kept in a list with the latest last. Ops that create no autograd
/// node (an optimizer step's, those under `no_grad`) share the current
/// number, so one number may gather thousands of markers: past [`SMALL`]
/// each question is answered from a map or a kept pointer instead of a
/// scan (scans made a long optimizer step quadratic).
#[derive(Debug)]
enum SeqOps {
    /// Two markers inline (most numbers have one or two): no allocation
    /// per number, and dropping a number touches no list of its own.
    Small(SmallVec<[FwdOp; 2]>),
    Large(Box<LargeOps>),
}

/// [`SeqOps`] past [`SMALL`] markers.
#[derive(Debug)]
struct LargeOps {
    /// Every marker by its text: a marker seen again is the same entry.
    by_text: FastMap<Arc<str>, FwdOp>,
    /// By normalised name: the latest marker, and the latest with sizes.
    by_norm: FastMap<Arc<str>, Latest>,
    /// The latest marker, and the latest with sizes, of any name.
    any: Latest,
}

/// The markers seen last (inserted, or seen again) in one group.
#[derive(Debug)]
struct Latest {
    last: FwdOp,
    sized: Option<FwdOp>,
}

impl Latest {
    fn new(f: &FwdOp) -> Latest {
        Latest {
            last: f.clone(),
            sized: f.sized.then(|| f.clone()),
        }
    }

    fn touch(&mut self, f: &FwdOp) {
        self.last = f.clone();
        if f.sized {
            self.sized = Some(f.clone());
        }
    }
}

impl LargeOps {
    /// The markers of a list, oldest first, with the same answers.
    fn from_list(list: SmallVec<[FwdOp; 2]>) -> Option<LargeOps> {
        let first = list.first()?;
        let mut ops = LargeOps {
            by_text: FastMap::default(),
            by_norm: FastMap::default(),
            any: Latest::new(first),
        };
        for f in list {
            ops.add(f);
        }
        Some(ops)
    }

    /// Remember `f` (a marker not seen before) as the latest.
    fn add(&mut self, f: FwdOp) {
        self.touch(&f);
        self.by_text.insert(Arc::clone(&f.marker.text), f);
    }

    /// Make `f` the latest of its groups.
    fn touch(&mut self, f: &FwdOp) {
        self.any.touch(f);
        match self.by_norm.get_mut(f.norm()) {
            Some(l) => l.touch(f),
            None => {
                self.by_norm
                    .insert(Arc::clone(&f.names.norm), Latest::new(f));
            }
        }
    }
}

impl SeqOps {
    /// Make the marker with `text` the latest; false when there is none.
    fn touch_text(&mut self, text: &str) -> bool {
        match self {
            SeqOps::Small(v) => match v.iter().position(|f| f.text() == text) {
                Some(pos) => {
                    let f = v.remove(pos);
                    v.push(f);
                    true
                }
                None => false,
            },
            SeqOps::Large(l) => match l.by_text.get(text).cloned() {
                Some(f) => {
                    l.touch(&f);
                    true
                }
                None => false,
            },
        }
    }

    /// Remember `f` (a marker not seen before) as the latest.
    fn add(&mut self, f: FwdOp) {
        match self {
            SeqOps::Small(v) if v.len() < SMALL => v.push(f),
            SeqOps::Small(v) => {
                let mut list = std::mem::take(v);
                list.push(f);
                if let Some(l) = LargeOps::from_list(list) {
                    *self = SeqOps::Large(Box::new(l));
                }
            }
            SeqOps::Large(l) => l.add(f),
        }
    }

    /// The latest marker whose normalised name is `norm` (one with sizes
    /// first), else the latest (one with sizes first).
    fn find(&self, norm: &str) -> Option<&FwdOp> {
        match self {
            SeqOps::Small(v) => {
                let matching = || v.iter().rev().filter(|f| f.norm() == norm);
                matching()
                    .find(|f| f.sized)
                    .or_else(|| matching().next())
                    .or_else(|| v.iter().rev().find(|f| f.sized))
                    .or_else(|| v.last())
            }
            SeqOps::Large(l) => {
                let group = l.by_norm.get(norm).unwrap_or(&l.any);
                Some(group.sized.as_ref().unwrap_or(&group.last))
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        match self {
            SeqOps::Small(v) => v.len(),
            SeqOps::Large(l) => l.by_text.len(),
        }
    }
}

/// Sequence number → the forward markers seen with it.
#[derive(Debug)]
pub(crate) struct FwdIndex {
    /// A run of numbers, not hashed: numbers mostly rise, and the oldest
    /// leave first, so inserts and evictions work at the run's two ends,
    /// which stay in cache (a hash table of 65 536 numbers missed the
    /// cache on both).
    by_seq: SeqRun<SeqOps>,
    order: VecDeque<i64>,
    cap: usize,
    /// Name → (the shared name, its normalised form): a run has few
    /// distinct op names and many markers (bounded).
    names: FastMap<Arc<str>, Arc<str>>,
    /// (name, op), by the addresses of their shared copies in `names` →
    /// the names a marker holds (bounded with `names`, and cleared with
    /// it: an entry keeps its strings alive, so no address is reused
    /// while it stands).
    pairs: FastMap<(usize, usize), Arc<FwdNames>>,
    /// Scratch for normalised names.
    buf: String,
}

impl Default for FwdIndex {
    fn default() -> FwdIndex {
        FwdIndex::new(1 << 16)
    }
}

impl FwdIndex {
    pub(crate) fn new(cap: usize) -> FwdIndex {
        FwdIndex {
            by_seq: SeqRun::default(),
            order: VecDeque::new(),
            cap: cap.max(1),
            names: FastMap::default(),
            pairs: FastMap::default(),
            buf: String::new(),
        }
    }

    /// The shared copy of `name` and of its normalised form.
    pub(crate) fn intern(&mut self, name: &str) -> (Arc<str>, Arc<str>) {
        if let Some((k, v)) = self.names.get_key_value(name) {
            return (Arc::clone(k), Arc::clone(v));
        }
        if self.names.len() >= NAMES_CAP {
            self.names.clear();
            self.pairs.clear();
        }
        normalise_forward_into(name, &mut self.buf);
        let (k, v): (Arc<str>, Arc<str>) = (Arc::from(name), Arc::from(self.buf.as_str()));
        self.names.insert(Arc::clone(&k), Arc::clone(&v));
        (k, v)
    }

    /// The shared names of a marker named `name` whose kernels' op is `op`.
    fn names_of(&mut self, name: &str, op: &str) -> Arc<FwdNames> {
        let (name, norm) = self.intern(name);
        let op = if *op == *name {
            Arc::clone(&name)
        } else {
            self.intern(op).0
        };
        // interning `op` may have cleared the maps (at their bound):
        // `name` is then no longer the shared copy, and a pair keyed by
        // its address could outlive it; such a pair is made and not kept
        if !self.names.contains_key(&*name) {
            return Arc::new(FwdNames { name, norm, op });
        }
        let key = (
            Arc::as_ptr(&name).cast::<u8>() as usize,
            Arc::as_ptr(&op).cast::<u8>() as usize,
        );
        Arc::clone(
            self.pairs
                .entry(key)
                .or_insert_with(|| Arc::new(FwdNames { name, norm, op })),
        )
    }

    /// Remember a forward marker (`text`, named `name`, sequence `seq`)
    /// seen around a kernel whose printed op is `op`. A marker seen before
    /// (the same text with the same `seq`) keeps what it was first
    /// remembered with and becomes the latest.
    pub(crate) fn insert(
        &mut self,
        seq: i64,
        name: &str,
        text: &str,
        op: &str,
        sized: bool,
        name_len: Option<usize>,
    ) {
        if let Some(ops) = self.by_seq.get_mut(seq)
            && ops.touch_text(text)
        {
            return;
        }
        let f = FwdOp {
            names: self.names_of(name, op),
            marker: Arc::new(FwdMarker::new(text, name_len)),
            sized,
        };
        match self.by_seq.get_mut(seq) {
            Some(ops) => ops.add(f),
            None => {
                if self.order.len() >= self.cap
                    && let Some(old) = self.order.pop_front()
                {
                    self.by_seq.remove(old);
                }
                self.order.push_back(seq);
                self.by_seq
                    .insert(seq, SeqOps::Small(smallvec::smallvec![f]));
            }
        }
    }

    /// The forward marker for backward node `node` of sequence `seq`: the
    /// latest whose normalised name matches (one with sizes first), else
    /// the latest with that `seq` (one with sizes first).
    pub(crate) fn find(&mut self, seq: i64, node: &str) -> Option<&FwdOp> {
        let ops = self.by_seq.get(seq)?;
        normalise_node_into(node, &mut self.buf);
        ops.find(&self.buf)
    }

    /// Number of markers remembered with `seq`.
    #[cfg(test)]
    fn count(&self, seq: i64) -> usize {
        self.by_seq.get(seq).map_or(0, SeqOps::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalise() {
        assert_eq!(normalise_forward("aten::addmm"), "addmm");
        assert_eq!(normalise_node("AddmmBackward0"), "addmm");
        assert_eq!(
            normalise_forward("aten::cudnn_convolution"),
            "cudnnconvolution"
        );
        assert_eq!(
            normalise_node("CudnnConvolutionBackward0"),
            "cudnnconvolution"
        );
        assert_eq!(
            normalise_forward("aten::native_layer_norm"),
            "nativelayernorm"
        );
        assert_eq!(
            normalise_node("NativeLayerNormBackward0"),
            "nativelayernorm"
        );
        assert_eq!(normalise_forward("aten::_softmax"), "softmax");
        assert_eq!(normalise_node("SoftmaxBackward0"), "softmax");
        assert_eq!(
            normalise_node("autograd::engine::evaluate_function: MulBackward1"),
            "mul"
        );
    }

    #[test]
    fn finds_by_name_then_latest() {
        let mut f = FwdIndex::new(2);
        f.insert(
            11,
            "aten::linear",
            "aten::linear, seq = 11",
            "aten::linear",
            false,
            None,
        );
        f.insert(
            11,
            "aten::addmm",
            "aten::addmm, seq = 11, sizes = [[1]]",
            "aten::linear",
            true,
            None,
        );
        f.insert(
            11,
            "aten::t",
            "aten::t, seq = 11",
            "aten::linear",
            false,
            None,
        );
        assert_eq!(
            f.find(11, "AddmmBackward0").map(|x| x.norm()),
            Some("addmm")
        );
        assert_eq!(f.find(11, "TBackward0").map(|x| x.norm()), Some("t"));
        // no name matches: the latest with sizes
        assert_eq!(f.find(11, "XBackward0").map(|x| x.norm()), Some("addmm"));
        assert!(f.find(12, "AddmmBackward0").is_none());
        // re-inserting moves it last, not twice
        f.insert(
            11,
            "aten::linear",
            "aten::linear, seq = 11",
            "aten::linear",
            false,
            None,
        );
        assert_eq!(f.count(11), 3);
        // bounded
        f.insert(
            12,
            "aten::mul",
            "aten::mul, seq = 12",
            "aten::mul",
            false,
            None,
        );
        f.insert(
            13,
            "aten::mul",
            "aten::mul, seq = 13",
            "aten::mul",
            false,
            None,
        );
        assert!(f.find(11, "AddmmBackward0").is_none());
        assert!(f.find(13, "MulBackward0").is_some());
    }

    /// A forward marker is decoded when first borrowed, once: every later
    /// lookup, and every clone, reads the same decoding, which equals the
    /// text's.
    #[test]
    fn a_marker_is_decoded_once_when_first_borrowed() {
        let text = "aten::addmm, seq = 4, op_id = 9, sizes = [[2, 3], [3, 5]]";
        let mut f = FwdIndex::new(4);
        f.insert(4, "aten::addmm", text, "aten::linear", true, None);
        let first = f.find(4, "AddmmBackward0").cloned().expect("inserted");
        assert!(first.marker.decoded.get().is_none(), "decoded before use");
        let want = rprof_model::stock::parse(text);
        assert_eq!(*first.marker(), want);
        assert_eq!(want.sizes, Some(vec![vec![2, 3], vec![3, 5]]));
        let again = f.find(4, "AddmmBackward0").expect("inserted");
        assert!(std::ptr::eq(first.marker(), again.marker()));
        // seen again: the same entry, still decoded
        f.insert(4, "aten::addmm", text, "aten::linear", true, None);
        let third = f.find(4, "AddmmBackward0").expect("inserted");
        assert!(std::ptr::eq(first.marker(), third.marker()));
        // a name whose length is known is taken whole
        let odd = "aten::cat, seq = 5, sizes = [[1]]";
        let mut g = FwdIndex::new(4);
        g.insert(5, "aten::cat, seq = 5", odd, "x", true, Some(18));
        let m = g.find(5, "CatBackward0").expect("inserted").marker();
        assert_eq!(m.name, "aten::cat, seq = 5");
    }

    /// Markers share their names through maps that are cleared at
    /// NAMES_CAP names: across a clear every marker keeps its own name and
    /// op (the pairs are keyed by the addresses of shared names, which
    /// must never point at another name).
    #[test]
    fn shared_names_survive_clearing() {
        let n = 2 * NAMES_CAP as i64 + 500;
        let mut index = FwdIndex::new(2 * n as usize);
        // one name met with three ops, and a new name every other marker
        let name = |i: i64| {
            if i % 2 == 1 {
                "aten::mul".to_owned()
            } else {
                format!("aten::op{i}")
            }
        };
        let node = |i: i64| {
            if i % 2 == 1 {
                "MulBackward0".to_owned()
            } else {
                format!("Op{i}Backward0")
            }
        };
        let op = |i: i64| format!("aten::outer{}", i % 3);
        for i in 0..n {
            let text = format!("{}, seq = {i}", name(i));
            index.insert(i, &name(i), &text, &op(i), false, None);
        }
        for i in (0..n).step_by(97).chain(n - 6..n) {
            let f = index.find(i, &node(i)).expect("inserted");
            assert_eq!(f.name(), name(i));
            assert_eq!(f.op(), op(i), "marker {i}");
            assert_eq!(f.text(), format!("{}, seq = {i}", name(i)));
        }
    }

    /// The list every sequence number kept before the maps: the answers
    /// of [`FwdIndex`] must equal it whatever the number of markers.
    #[derive(Default)]
    struct PlainList(Vec<(String, String, String, bool)>); // text, norm, op, sized

    impl PlainList {
        fn insert(&mut self, text: &str, name: &str, op: &str, sized: bool) {
            if let Some(pos) = self.0.iter().position(|f| f.0 == text) {
                let f = self.0.remove(pos);
                self.0.push(f);
                return;
            }
            self.0
                .push((text.into(), normalise_forward(name), op.into(), sized));
        }

        fn find(&self, node: &str) -> Option<(&str, &str)> {
            let norm = normalise_node(node);
            let matching = || self.0.iter().rev().filter(|f| f.1 == norm);
            matching()
                .find(|f| f.3)
                .or_else(|| matching().next())
                .or_else(|| self.0.iter().rev().find(|f| f.3))
                .or_else(|| self.0.last())
                .map(|f| (f.0.as_str(), f.2.as_str()))
        }
    }

    #[test]
    fn many_markers_of_one_seq_answer_as_a_plain_list() {
        let names = ["aten::mul", "aten::add", "aten::addmm", "aten::detach_"];
        let nodes = [
            "MulBackward0",
            "AddBackward0",
            "AddmmBackward0",
            "XBackward0",
        ];
        let mut index = FwdIndex::new(16);
        let mut plain = PlainList::default();
        // a fixed pseudo-random walk: texts repeat (seen again), some
        // have sizes, outer ops differ; past SMALL markers the maps answer
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for step in 0..(4 * SMALL as u64) {
            let name = names[next(4) as usize];
            let id = next(3 * SMALL as u64);
            let sized = id % 5 == 0;
            let text = if sized {
                format!("{name}, seq = 7, op_id = {id}, sizes = [[2]]")
            } else {
                format!("{name}, seq = 7, op_id = {id}")
            };
            let op = if next(2) == 0 { name } else { "aten::linear" };
            index.insert(7, name, &text, op, sized, None);
            plain.insert(&text, name, op, sized);
            let node = nodes[next(4) as usize];
            let got = index
                .find(7, node)
                .map(|f| (f.text().to_owned(), f.op().to_owned()));
            let want = plain.find(node).map(|(t, o)| (t.to_owned(), o.to_owned()));
            assert_eq!(got, want, "step {step}");
        }
        assert!(plain.0.len() > SMALL);
        assert_eq!(index.count(7), plain.0.len());
    }
}
