//! Kernels of stock PyTorch traces: no PyProf instrumentation, only the
//! operator ranges of `emit_nvtx(record_shapes=True)` /
//! `nsys --pytorch=autograd-shapes-nvtx` (`aten::addmm, seq = 12, op_id =
//! 34, sizes = [[…]]`) or the operators of a Kineto trace (same grammar
//! plus exact `dtypes`), found in the record's `stack`
//! (pyprof-semantics.md §10, docs/stock.md).
//!
//! - **Anchor**: the innermost op on the stack with a row in
//!   [`STOCK`](crate::table::STOCK) (a malformed marker is "other" and
//!   skipped; `_flash_attention_forward` defers to an enclosing
//!   `_scaled_dot_product_*_attention`). Its sizes, mapped by the row,
//!   are the model's arguments. Without one, the innermost op with sizes
//!   (or `aten::` op) is costed by the fallback model.
//! - **Op**: the outermost `aten::` op (the user-level op, like PyProf's
//!   outermost marker); for a backward kernel the op of the forward
//!   kernels with the node's `seq`, else the node's name.
//! - **Backward**: an anchor inside the backward node with its own sizes
//!   is costed as it is (its direction only labels it); a node without
//!   one borrows the forward marker of the same `seq` (normalised name
//!   match) and is costed as a backward of that op.
//! - **Once per op instance** ([`instance`]), **convolution output sizes**
//!   ([`conv_shape`]), **dtypes** from the kernel name
//!   ([`Dtype::from_kernel`]) unless Kineto says.
//!
//! [`Engine::resolve`](crate::Engine::resolve) runs the sequential part
//! ([`State::resolve`]) in input order; [`estimate_kernel`](crate::estimate_kernel)
//! the rest, in parallel.

mod args;
pub mod conv_shape;
mod fwd;
pub mod instance;

use std::borrow::Cow;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use rprof_model::KernelRef;
use rprof_model::stock::{self as grammar, Head, StockMarker};

use self::conv_shape::ConvShapes;
use self::fwd::{FwdIndex, FwdOp};
use self::instance::Instances;
pub use self::instance::Role;
use crate::call::{Direction, Kernel, OpCall};
use crate::dtype::Dtype;
use crate::estimate::{Estimate, Mode, Outcome, Tc};
use crate::num::Num;
use crate::params::ParamText;
use crate::rules;
use crate::table::{Kernels, Rule, StockSpec, lookup_stock};
use crate::tc;

/// The prefix of the autograd engine's wrapper around each backward node.
pub(crate) const EVALUATE: &str = "autograd::engine::evaluate_function: ";

/// True for autograd nodes and the engine's wrappers (`AddmmBackward0`,
/// `torch::autograd::AccumulateGrad`, `autograd::engine::evaluate_function:
/// …`): they are not ops, their sizes are gradients.
fn is_node(name: &str) -> bool {
    name.starts_with(EVALUATE)
        || name.starts_with("torch::autograd::")
        // (the suffix first: most names are not a node's, and the search
        // for `::` in every head of every kernel was a tenth of the
        // backward lookup's time, which runs on one thread)
        || (grammar::is_backward_name(name) && !name.contains("::"))
}

/// A name an op can have: no spaces, commas or brackets (a truncated or
/// garbled marker keeps all its text as its name; it is "other").
fn is_op_name(name: &str) -> bool {
    !name.is_empty()
        && !name.bytes().any(|c| {
            c.is_ascii_whitespace() || matches!(c, b',' | b'[' | b']' | b'(' | b')' | b'=')
        })
}

/// The marker's sizes describe its inputs: present, and no tensor list
/// left unexpanded (older Kineto traces write a list as one `[]` of type
/// `TensorList`).
fn has_shapes(m: &StockMarker<'_>) -> bool {
    m.sizes.is_some() && !m.dtypes.as_ref().is_some_and(|d| d.contains(&"TensorList"))
}

/// `aten::addmm` → (`aten`, `addmm`); `x` → (`na`, `x`).
fn split_ns(name: &str) -> (&str, &str) {
    name.rsplit_once("::").unwrap_or(("na", name))
}

/// Where the costed marker comes from.
#[derive(Clone, Debug)]
enum Source {
    /// An entry of the record's stack.
    Stack(usize),
    /// The forward marker a backward node pairs with.
    Forward(FwdOp),
    /// Nothing to cost: only the op is known.
    None,
}

/// Where the printed op comes from.
#[derive(Clone, Debug)]
enum OpName {
    /// An entry of the record's stack.
    Stack(usize),
    /// The forward kernels' op (namespaced).
    Forward(FwdOp),
    /// A backward node's name without `Backward\d*`.
    Node(Arc<str>),
}

/// What the sequential pass decided for one kernel of a stock trace.
#[derive(Clone, Debug)]
pub struct StockRef {
    source: Source,
    spec: Option<&'static StockSpec>,
    op: OpName,
    dir: Direction,
    sub: i64,
    role: Role,
    repeat: bool,
    output: Option<Vec<i64>>,
    sized: bool,
}

impl StockRef {
    /// Index of the kernel in its op instance (0 for the first).
    pub fn sub(&self) -> i64 {
        self.sub
    }

    /// What the kernel does for its op.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Its math was already counted on an earlier kernel of the instance.
    pub fn is_repeat(&self) -> bool {
        self.repeat
    }

    /// The costed marker has `sizes`.
    pub fn has_sizes(&self) -> bool {
        self.sized
    }

    /// The costed marker borrows the forward op of a backward node.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.source, Source::Forward(_))
    }
}

/// A marker's input shapes, borrowed from the record's decoded stack
/// where they can be.
type Sizes<'s> = Option<Cow<'s, [Vec<i64>]>>;

/// What the stack says, before any state is consulted.
struct Found<'s> {
    /// Innermost modelled op.
    anchor: Option<(usize, &'static StockSpec, Cow<'s, StockMarker<'s>>)>,
    /// Innermost op-like entry (`aten::` or with sizes), for the fallback
    /// (its marker is read only when there is no anchor).
    other: Option<(usize, Cow<'s, StockMarker<'s>>)>,
    /// Outermost `aten::` op.
    op: Option<usize>,
    /// Innermost backward node or engine wrapper: index, node name, seq.
    node: Option<(usize, &'s str, Option<i64>)>,
}

fn same_family(a: &StockSpec, b: &StockSpec) -> bool {
    match (a.spec.rule, b.spec.rule) {
        (Rule::Attention { backward: x, .. }, Rule::Attention { backward: y, .. }) => x == y,
        (x, y) => x == y,
    }
}

/// The text of `rec`'s stack entry `i` (`""` past the end).
fn text_at<'s>(rec: KernelRef<'s, '_>, i: usize) -> &'s str {
    rec.stack().get(i).map_or("", |t| t)
}

/// True when `rec`'s stack entry `i` has a `sizes` field (read or not).
fn has_sizes_field(rec: KernelRef<'_, '_>, i: usize) -> bool {
    rec.stack_has_sizes(i)
}

/// True when `rec`'s stack entry `i` has an `input_op_ids` field.
fn has_input_ids_field(rec: KernelRef<'_, '_>, i: usize) -> bool {
    rec.stack_has_input_ids(i)
}

fn find<'s>(
    rec: KernelRef<'s, '_>,
    heads: &[Head<'s>],
    specs: &[Option<&'static StockSpec>],
) -> Found<'s> {
    let mut f = Found {
        anchor: None,
        other: None,
        op: None,
        node: None,
    };
    for (i, h) in heads.iter().enumerate().rev() {
        if is_node(h.name) {
            if f.node.is_none()
                && (h.seq.is_some()
                    || h.name.starts_with(EVALUATE)
                    || h.name.starts_with("torch::autograd::"))
            {
                let name = h.name.strip_prefix(EVALUATE).unwrap_or(h.name);
                f.node = Some((i, name, h.seq));
            }
            continue;
        }
        let spec = specs
            .get(i)
            .copied()
            .flatten()
            .filter(|_| f.anchor.is_none());
        let other = f.other.is_none()
            && is_op_name(h.name)
            && (h.name.starts_with("aten::") || has_sizes_field(rec, i));
        if spec.is_none() && !other {
            continue;
        }
        let m = rec.stack_marker(i);
        if m.malformed {
            continue;
        }
        match (spec, other) {
            (Some(spec), true) => {
                // with an anchor, only the position of `other` is read
                f.other = Some((i, Cow::Owned(StockMarker::default())));
                f.anchor = Some((i, spec, m));
            }
            (Some(spec), false) => f.anchor = Some((i, spec, m)),
            (None, _) => f.other = Some((i, m)),
        }
    }
    f.op = heads
        .iter()
        .position(|h| h.name.starts_with("aten::") && is_op_name(h.name) && !is_node(h.name));
    // §10.2: the sdpa level wins over the flash/efficient kernels' own ops
    if let Some((i, spec, _)) = &f.anchor
        && spec.defer_to_outer
    {
        let (i, spec) = (*i, *spec);
        for j in (0..i).rev() {
            let Some(&Some(outer)) = specs.get(j) else {
                continue;
            };
            if !outer.defer_to_outer && same_family(outer, spec) {
                let m = rec.stack_marker(j);
                if !m.malformed {
                    f.anchor = Some((j, outer, m));
                    break;
                }
            }
        }
    }
    f
}

/// How a kernel serves its op, by name.
fn role(kernels: Kernels, short: &str, long: &str) -> Role {
    use crate::rules::conv::{ConvKernel, conv_kernel};
    use crate::rules::{ConvBackwardKernel, conv_backward_kernel};
    match kernels {
        Kernels::One | Kernels::Many => Role::Math(0),
        Kernels::Gemm if rules::blas::gemm_helper_kernel(short) => Role::Helper,
        Kernels::Gemm => Role::Math(0),
        Kernels::Conv => match conv_kernel(short, long) {
            ConvKernel::Math => Role::Math(0),
            ConvKernel::Bias => Role::Math(1),
            ConvKernel::Aux | ConvKernel::Other => Role::Helper,
        },
        Kernels::ConvBackward => match conv_backward_kernel(short, long) {
            ConvBackwardKernel::Unknown => Role::Math(0),
            ConvBackwardKernel::Dgrad => Role::Math(1),
            ConvBackwardKernel::Wgrad => Role::Math(2),
            ConvBackwardKernel::Bias => Role::Math(3),
            ConvBackwardKernel::Aux => Role::Helper,
        },
        Kernels::Attention if tc::contains_any(short, rules::ATTENTION_HELPERS) => Role::Helper,
        Kernels::Attention => Role::Math(0),
    }
}

fn hash_of(parts: &[&str]) -> u64 {
    hash_iter(parts.iter().copied())
}

/// [`hash_of`] of the collected strings, without collecting them: the same
/// value (a slice hashes its length, then each element).
fn hash_iter<'s>(parts: impl ExactSizeIterator<Item = &'s str>) -> u64 {
    let mut h = DefaultHasher::new();
    h.write_usize(parts.len());
    for p in parts {
        p.hash(&mut h);
    }
    h.finish()
}

/// The sequential state of stock costing.
#[derive(Debug, Default)]
pub struct State {
    fwd: FwdIndex,
    conv: ConvShapes,
    instances: Instances,
    /// The last backward node with a `seq` per thread: work that runs in
    /// the engine's wrapper after the node's own range closed (a bias
    /// gradient's `sum`) belongs to it.
    last_node: rprof_model::FastMap<u64, (String, i64)>,
    /// Scratch for normalised names.
    buf: String,
    /// Reused per record: the heads of its stack (empty between calls).
    heads: Vec<Head<'static>>,
    /// Reused per record: the table row of each head (empty between calls).
    specs: Vec<Option<&'static StockSpec>>,
}

impl State {
    /// A fresh run.
    pub fn new() -> State {
        State::default()
    }

    /// Learn what `rec`'s stack tells about convolution output sizes.
    fn observe_conv(
        &mut self,
        rec: KernelRef<'_, '_>,
        heads: &[Head<'_>],
        specs: &[Option<&'static StockSpec>],
    ) {
        for (i, h) in heads.iter().enumerate() {
            let spec = specs.get(i).copied().flatten();
            match spec.map(|s| s.spec.rule) {
                // 3. convolution_backward(grad_out, x, w)
                Some(Rule::AtenConvBackward) => {
                    let m = rec.stack_marker(i);
                    let pick = spec.map_or(&[][..], |s| s.args.pick);
                    let at = |k: usize| pick.get(k).copied().unwrap_or(k);
                    if let Some(s) = &m.sizes
                        && let (Some(gy), Some(x), Some(w)) =
                            (s.get(at(0)), s.get(at(1)), s.get(at(2)))
                    {
                        self.conv.learn(x, w, gy);
                    }
                }
                // 1. the bias add inside `aten::_convolution`
                Some(Rule::Pointwise { .. })
                    if h.name.starts_with("aten::add")
                        && i > 0
                        && specs
                            .get(i - 1)
                            .copied()
                            .flatten()
                            .is_some_and(|p| p.spec.rule == Rule::AtenConv) =>
                {
                    let (parent, child) = (rec.stack_marker(i - 1), rec.stack_marker(i));
                    if let (Some(ps), Some(cs)) = (&parent.sizes, &child.sizes)
                        && let (Some(x), Some(w), Some(y)) = (ps.first(), ps.get(1), cs.first())
                    {
                        self.conv.learn(x, w, y);
                    }
                }
                // 2. the ConvolutionBackward node's grad_output
                None if is_node(h.name)
                    && h.seq.is_some()
                    && {
                        fwd::normalise_node_into(h.name, &mut self.buf);
                        self.buf.contains("conv")
                    }
                    && has_sizes_field(rec, i) =>
                {
                    let m = rec.stack_marker(i);
                    let gy = m.sizes.as_ref().and_then(|s| s.first());
                    let f = h.seq.and_then(|q| self.fwd.find(q, h.name));
                    if let (Some(gy), Some(f)) = (gy, f) {
                        let fm = f.marker();
                        if let Some(s) = &fm.sizes
                            && let (Some(x), Some(w)) = (s.first(), s.get(1))
                        {
                            let gy = gy.clone();
                            let (x, w) = (x.clone(), w.clone());
                            self.conv.learn(&x, &w, &gy);
                        }
                    }
                }
                _ => {}
            }
            // 1. a consumer naming a waiting convolution
            if self.conv.waiting() && has_input_ids_field(rec, i) {
                let m = rec.stack_marker(i);
                if let (Some(s), Some(ids)) = (&m.sizes, &m.input_op_ids) {
                    self.conv.consumer(s, ids);
                }
            }
        }
    }

    /// The sequential part for one record (call in input order, for every
    /// record). `None` when the record is not costed from stock markers:
    /// it has PyProf markers, its stack holds no op, or (`pyprof`) its
    /// stock markers have no sizes while PyProf's backward lookup found a
    /// forward marker.
    pub fn resolve(&mut self, rec: KernelRef<'_, '_>, pyprof: bool) -> Option<StockRef> {
        self.conv.tick();
        if rec.stack().is_empty() {
            return None;
        }
        // the two per-record lists reuse the buffers of the last record
        let mut heads: Vec<Head<'_>> = std::mem::take(&mut self.heads);
        heads.extend((0..rec.stack().len()).map(|i| rec.stack_head(i)));
        let mut specs = std::mem::take(&mut self.specs);
        specs.extend(heads.iter().map(|h| lookup_stock(h.name)));
        let out = self.resolve_stack(rec, pyprof, &heads, &specs);
        heads.clear();
        // an empty list of the same layout: collecting it in place keeps
        // the allocation
        self.heads = heads.into_iter().map(|_| Head::default()).collect();
        specs.clear();
        self.specs = specs;
        out
    }

    /// [`State::resolve`] of a record with a stack, its heads and their
    /// table rows.
    fn resolve_stack(
        &mut self,
        rec: KernelRef<'_, '_>,
        pyprof: bool,
        heads: &[Head<'_>],
        specs: &[Option<&'static StockSpec>],
    ) -> Option<StockRef> {
        self.observe_conv(rec, heads, specs);
        let mut found = find(rec, heads, specs);
        let bprop = rec.dir.is_bprop();
        match &mut found.node {
            Some((_, name, Some(seq))) if bprop => {
                if self.last_node.len() > 1024 {
                    self.last_node.clear();
                }
                // the entry's string is reused: no allocation per kernel
                let e = self.last_node.entry(rec.tid).or_default();
                e.0.clear();
                e.0.push_str(name);
                e.1 = *seq;
            }
            Some((_, name, seq @ None)) if bprop => {
                *seq = self
                    .last_node
                    .get(&rec.tid)
                    .filter(|(n, _)| n == name)
                    .map(|(_, q)| *q);
            }
            _ => {}
        }
        let name_at = |i: usize| heads.get(i).map_or("", |h| h.name);

        // the costed marker
        let own_sized = found.anchor.as_ref().is_some_and(|(_, _, m)| has_shapes(m));
        let borrowed = match found.node {
            Some((_, node, Some(seq))) if bprop && !own_sized => {
                // a forward marker worth borrowing: sizes and a model
                self.fwd
                    .find(seq, node)
                    .filter(|f| f.sized && lookup_stock(f.name()).is_some())
                    .cloned()
            }
            _ => None,
        };
        let (source, spec, sized, marker_sizes): (
            Source,
            Option<&'static StockSpec>,
            bool,
            Sizes<'_>,
        ) = match (&borrowed, &found.anchor, &found.other) {
            (Some(f), _, _) => {
                let m = f.marker();
                let spec = lookup_stock(m.name);
                (
                    Source::Forward(f.clone()),
                    spec,
                    true,
                    m.sizes.as_deref().map(Cow::Borrowed),
                )
            }
            (None, Some((i, spec, m)), _) => (
                Source::Stack(*i),
                Some(*spec),
                has_shapes(m),
                m.sizes.as_deref().map(Cow::Borrowed),
            ),
            (None, None, Some((i, m))) => (
                Source::Stack(*i),
                None,
                has_shapes(m),
                m.sizes.as_deref().map(Cow::Borrowed),
            ),
            (None, None, None) => (Source::None, None, false, None),
        };

        // the printed op, and the forward index
        let fwd_op = match found.node {
            Some((_, node, Some(seq))) if bprop => self.fwd.find(seq, node).cloned(),
            _ => None,
        };
        let op = if let Some(f) = fwd_op {
            Some(OpName::Forward(f))
        } else if let (true, Some((_, node, _))) = (bprop, found.node) {
            let node = node.rsplit("::").next().unwrap_or(node);
            let trimmed = node.trim_end_matches(|c: char| c.is_ascii_digit());
            let stem = trimmed.strip_suffix("Backward").unwrap_or(trimmed);
            // shared: a run has few node names and many backward kernels
            let stem = if stem.is_empty() { node } else { stem };
            Some(OpName::Node(self.fwd.intern(stem).0))
        } else {
            found
                .op
                .or(found.anchor.as_ref().map(|a| a.0))
                .or(found.other.as_ref().map(|o| o.0))
                .map(OpName::Stack)
        };
        if rec.dir.is_fprop() {
            for (i, h) in heads.iter().enumerate() {
                if let (Some(seq), false) = (h.seq, is_node(h.name)) {
                    // the op the user called around this one: the outermost
                    // `aten::` op enclosing it (or itself), else its own name
                    let op = found.op.filter(|&j| j <= i).map_or(h.name, name_at);
                    self.fwd.insert(
                        seq,
                        h.name,
                        text_at(rec, i),
                        op,
                        has_sizes_field(rec, i),
                        rec.stack_name_len(i),
                    );
                }
            }
        }

        if !rec.marker().is_empty() {
            return None;
        }
        // only stock op markers make a stock row
        if found.op.is_none()
            && found.anchor.is_none()
            && found.other.is_none()
            && borrowed.is_none()
        {
            return None;
        }
        if !sized && pyprof {
            return None;
        }
        let op = op?;

        // direction the model sees: a backward op is a backward whatever
        // the kernel's label; ops inside backward nodes are costed as they are
        let dir = match &source {
            Source::Forward(_) => Direction::Bprop,
            Source::Stack(i)
                if name_at(*i).contains("backward") || name_at(*i).contains("Backward") =>
            {
                Direction::Bprop
            }
            _ => Direction::Fprop,
        };

        // convolution output
        let mut output = None;
        if spec.is_some_and(|s| s.spec.rule == Rule::AtenConv)
            && let Some(s) = &marker_sizes
            && let (Some(x), Some(w)) = (s.first(), s.get(1))
        {
            output = self.conv.get(x, w).map(<[i64]>::to_vec);
            if output.is_none()
                && let Source::Stack(i) = source
                && let Some(id) = heads.get(i).and_then(|h| h.op_id)
            {
                self.conv.expect(id, x, w);
            }
        }

        // the instance
        let kernels = spec.map_or(Kernels::One, |s| s.kernels);
        let role = role(kernels, &rec.short_name, &rec.long_name);
        let (key, by_op_id) = match &source {
            Source::Stack(i) => match heads.get(*i).and_then(|h| h.op_id) {
                Some(id) => {
                    let mut h = DefaultHasher::new();
                    ("op_id", id).hash(&mut h);
                    (h.finish(), true)
                }
                None => (
                    hash_iter(rec.stack().iter().take(i + 1).map(|t| t.as_ref())),
                    false,
                ),
            },
            Source::Forward(f) => {
                let node = found
                    .node
                    .and_then(|(i, _, _)| rec.stack().get(i))
                    .map_or("", |t| t);
                (hash_of(&[node, f.text()]), false)
            }
            Source::None => (hash_iter(rec.stack().iter().map(|t| t.as_ref())), false),
        };
        let pos = self
            .instances
            .place(rec.tid, key, by_op_id, kernels != Kernels::Many, role);
        Some(StockRef {
            source,
            spec,
            op,
            dir,
            sub: pos.sub,
            role,
            repeat: pos.repeat,
            output,
            sized,
        })
    }
}

/// A stock kernel's printed module, op and anchor, and the model's numbers.
pub(crate) struct Stocked<'a> {
    pub(crate) module: &'a str,
    pub(crate) op: &'a str,
    pub(crate) anchor: &'a str,
    pub(crate) estimate: Estimate,
}

/// The parallel part: the model of the anchor on one kernel.
pub(crate) fn estimate<'a>(rec: KernelRef<'a, '_>, st: &'a StockRef) -> Stocked<'a> {
    let full_op: &'a str = match &st.op {
        OpName::Stack(i) => rec.stack_head(*i).name,
        OpName::Forward(f) => f.op(),
        OpName::Node(n) => n,
    };
    let (module, op) = match &st.op {
        OpName::Node(n) => ("na", &**n),
        _ => split_ns(full_op),
    };
    let m = match &st.source {
        Source::Stack(i) => rec.stack_marker(*i),
        Source::Forward(f) => Cow::Borrowed(f.marker()),
        Source::None => Cow::Owned(StockMarker::default()),
    };
    let anchor = m.name;
    let types = Dtype::from_kernel(&rec.short_name, &rec.long_name);
    let done = |estimate: Estimate| Stocked {
        module,
        op,
        anchor,
        estimate,
    };
    let Some(sizes) = m.sizes.as_deref().filter(|_| st.sized) else {
        return done(no_sizes(rec, st, types));
    };
    let map = st.spec.map_or(
        crate::table::ArgMap {
            pick: &[],
            int64: &[],
        },
        |s| s.args,
    );
    let built = args::build(sizes, m.dtypes.as_deref(), map, types);
    let name: Cow<'_, str> = if rec.short_name.contains(' ') {
        Cow::Owned(rec.short_name.replace(' ', "_"))
    } else {
        Cow::Borrowed(&rec.short_name)
    };
    let call = OpCall {
        module: split_ns(anchor).0,
        op: split_ns(anchor).1,
        args: &built.args,
        args_complete: true,
        dir: st.dir,
        sub: st.sub,
        kernel: Kernel {
            name: &name,
            long_name: &rec.long_name,
            grid: rec.grid,
        },
        output: st.output.as_deref(),
    };
    let mut e = rules::run(st.spec.map(|s| &s.spec), &call, Mode::Fixed);
    e.op = None;
    if built.dtype_unknown && e.flops.is_some() && matches!(e.outcome, Outcome::Partial(_)) {
        e.outcome = Outcome::DtypeUnknown;
    }
    if st.repeat && !matches!(e.outcome, Outcome::Partial(_)) {
        // counted on the instance's first kernel doing this part
        e.flops = Some(Num::ZERO);
        e.bytes = Some(Num::ZERO);
    }
    done(e)
}

/// A stock op whose marker has no sizes: the op and the dtype are known.
fn no_sizes(rec: KernelRef<'_, '_>, st: &StockRef, dtype: Option<Dtype>) -> Estimate {
    let tc = match st.spec.map(|s| s.kernels) {
        Some(Kernels::Gemm | Kernels::Conv | Kernels::ConvBackward | Kernels::Attention) => {
            Tc::from_bool(tc::uses_tensor_cores(&rec.short_name, &rec.long_name))
        }
        _ => Tc::NotApplicable,
    };
    Estimate {
        op: None,
        params: {
            let name = dtype.map_or(args::UNKNOWN, Dtype::name);
            ParamText::with_type(format!("sizes=na,{name},"), name)
        },
        flops: None,
        bytes: None,
        tc,
        outcome: Outcome::NoSizes,
    }
}

#[cfg(test)]
mod tests;
