//! Forward ops by autograd sequence number, for backward kernels
//! (pyprof-semantics.md §10.2 step 6): a backward node `XBackward0, seq = N`
//! pairs with the forward op of the same `seq` whose normalised name
//! matches (`AddmmBackward0` ↔ `aten::addmm`,
//! `NativeLayerNormBackward0` ↔ `aten::native_layer_norm`).
//!
//! Bounded: the oldest sequence numbers are dropped first (a backward runs
//! within the same iteration as its forward).

use std::collections::VecDeque;
use std::sync::Arc;

use rprof_model::FastMap;

/// One forward marker with a sequence number.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FwdOp {
    /// Its name (shared by every marker of that name).
    pub(crate) name: Arc<str>,
    /// Its name, normalised for matching (shared likewise).
    pub(crate) norm: Arc<str>,
    /// The marker text.
    pub(crate) text: Box<str>,
    /// The printed op of the forward kernels it enclosed (the outermost
    /// `aten::` op), with its namespace (shared likewise).
    pub(crate) op: Arc<str>,
    /// The marker has `sizes`.
    pub(crate) sized: bool,
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

/// Sequence number → the forward markers seen with it, innermost last.
#[derive(Debug)]
pub(crate) struct FwdIndex {
    by_seq: FastMap<i64, Vec<Arc<FwdOp>>>,
    order: VecDeque<i64>,
    cap: usize,
    /// Name → (the shared name, its normalised form): a run has few
    /// distinct op names and many markers (bounded).
    names: FastMap<Arc<str>, Arc<str>>,
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
            by_seq: FastMap::default(),
            order: VecDeque::new(),
            cap: cap.max(1),
            names: FastMap::default(),
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
        }
        normalise_forward_into(name, &mut self.buf);
        let (k, v): (Arc<str>, Arc<str>) = (Arc::from(name), Arc::from(self.buf.as_str()));
        self.names.insert(Arc::clone(&k), Arc::clone(&v));
        (k, v)
    }

    /// Remember a forward marker (`text`, named `name`, sequence `seq`)
    /// seen around a kernel whose printed op is `op`.
    pub(crate) fn insert(&mut self, seq: i64, name: &str, text: &str, op: &str, sized: bool) {
        if let Some(v) = self.by_seq.get_mut(&seq) {
            if let Some(pos) = v.iter().position(|f| &*f.text == text) {
                // already known: make it the latest
                let f = v.remove(pos);
                v.push(f);
                return;
            }
        } else {
            if self.order.len() >= self.cap
                && let Some(old) = self.order.pop_front()
            {
                self.by_seq.remove(&old);
            }
            self.order.push_back(seq);
        }
        let (name, norm) = self.intern(name);
        let op = if *op == *name {
            Arc::clone(&name)
        } else {
            self.intern(op).0
        };
        self.by_seq.entry(seq).or_default().push(Arc::new(FwdOp {
            name,
            norm,
            text: text.into(),
            op,
            sized,
        }));
    }

    /// The forward marker for backward node `node` of sequence `seq`: the
    /// latest whose normalised name matches (one with sizes first), else
    /// the latest with that `seq`.
    pub(crate) fn find(&mut self, seq: i64, node: &str) -> Option<&Arc<FwdOp>> {
        let v = self.by_seq.get(&seq)?;
        normalise_node_into(node, &mut self.buf);
        let norm = self.buf.as_str();
        let matching = || v.iter().rev().filter(|f| *f.norm == *norm);
        matching()
            .find(|f| f.sized)
            .or_else(|| matching().next())
            .or_else(|| v.iter().rev().find(|f| f.sized))
            .or_else(|| v.last())
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
        );
        f.insert(
            11,
            "aten::addmm",
            "aten::addmm, seq = 11, sizes = [[1]]",
            "aten::linear",
            true,
        );
        f.insert(11, "aten::t", "aten::t, seq = 11", "aten::linear", false);
        assert_eq!(
            f.find(11, "AddmmBackward0").map(|x| &*x.norm),
            Some("addmm")
        );
        assert_eq!(f.find(11, "TBackward0").map(|x| &*x.norm), Some("t"));
        // no name matches: the latest with sizes
        assert_eq!(f.find(11, "XBackward0").map(|x| &*x.norm), Some("addmm"));
        assert!(f.find(12, "AddmmBackward0").is_none());
        // re-inserting moves it last, not twice
        f.insert(
            11,
            "aten::linear",
            "aten::linear, seq = 11",
            "aten::linear",
            false,
        );
        assert_eq!(f.by_seq[&11].len(), 3);
        // bounded
        f.insert(12, "aten::mul", "aten::mul, seq = 12", "aten::mul", false);
        f.insert(13, "aten::mul", "aten::mul, seq = 13", "aten::mul", false);
        assert!(f.find(11, "AddmmBackward0").is_none());
        assert!(f.find(13, "MulBackward0").is_some());
    }
}
