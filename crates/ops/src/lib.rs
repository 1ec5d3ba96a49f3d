//! rprof-ops: what each GPU kernel of a PyTorch run computes.
//!
//! Given the attributed kernel table ([`rprof_model::Kernels`]: built from
//! a profile, or a record file of `rprof parse` read back), this crate
//! decodes PyProf's argument markers, finds the forward kernel a
//! backward kernel belongs to, and runs PyProf's operator models: params,
//! FLOPs, bytes and tensor-core use. No I/O.
//!
//! The modules are private; what other crates use is re-exported here.
//!
//! - [`decode_marker`] decodes markers (safely: nothing is evaluated) and
//!   [`OpCall`] is the neutral op call the models read.
//! - A table (private) maps op names to named rules; the rules live in a
//!   private module, one function per PyProf class, each for both modes.
//! - [`Mode::Apex`] (`--compat`) reproduces apex.pyprof number for number;
//!   [`Mode::Fixed`] fixes its bugs (docs/compat.md).
//! - Stock markers: records without PyProf markers are costed from stock
//!   PyTorch operator markers (`aten::addmm, seq = 12, op_id = 34, sizes =
//!   [[…]]`, Kineto operators with `dtypes`) in the default mode:
//!   attribution, dtypes from kernel names, once-per-op-instance costing
//!   (docs/stock.md).
//! - [`Engine`] is the sequential part of the per-kernel flow (PyProf's
//!   backward lookup, the stock state); [`estimate_kernel`] the parallel
//!   part.
//!
//! ```
//! use rprof_ops::{Engine, Mode, decode_first_marker, estimate_kernel};
//! use rprof_model::{Kernels, Line, read_line};
//!
//! let line = r#"{'kShortName': 'volta_sgemm_128x64_nn', 'kDuration': 10, 'layer': [], 'trace': [], 'reprMarkers': [], 'marker': ["{'mod': 'torch', 'op': 'mm', 'args': [{'name': '', 'type': 'tensor', 'shape': (64, 256), 'dtype': 'float32'}, {'name': '', 'type': 'tensor', 'shape': (256, 128), 'dtype': 'float32'}]}"], 'seqMarker': [], 'seqId': [], 'subSeqId': 0, 'altSeqId': [], 'dir': 'fprop', 'mod': ['torch'], 'op': ['mm'], 'tid': 1, 'device': 0, 'stream': 7, 'grid': (2, 1, 1), 'block': (256, 1, 1), 'kLongName': 'volta_sgemm_128x64_nn'}"#;
//! let Ok(Line::Record(rec)) = read_line(line) else { panic!() };
//! let table = Kernels::from_records([*rec]);
//! let Some(row) = table.get(0) else { panic!() };
//! let mut engine = Engine::new(Mode::Fixed);
//! let marker = decode_first_marker(row);
//! let resolved = engine.resolve(row, marker);
//! let k = estimate_kernel(row, &resolved, Mode::Fixed);
//! assert_eq!(k.estimate.params, "M=128,N=64,K=256,fp32,");
//! assert_eq!(k.estimate.flops.map(|f| f.to_string()).as_deref(), Some("4194304"));
//! ```
#![deny(missing_docs)]

mod call;
mod dtype;
mod estimate;
mod fprop;
mod marker;
mod memo;
mod num;
mod params;
mod rules;
mod seqrun;
mod stock;
mod summary;
mod table;
mod tc;

use std::borrow::Cow;
use std::sync::Arc;

use rprof_model::{KernelRef, SymList};

pub use crate::call::{Direction, Kernel, OpCall};
pub use crate::dtype::Dtype;
pub use crate::estimate::{Estimate, Mode, Outcome, Tc};
pub use crate::fprop::{Fprop, FpropIndex};
pub use crate::marker::{Arg, Marker, MarkerCache, decode_marker};
pub use crate::num::Num;
pub use crate::params::ParamText;
pub use crate::stock::StockRef;
pub use crate::summary::Summary;
pub use crate::tc::uses_tensor_cores;

/// Run the model for `call` (dispatched on `module`/`op`, the record's
/// first module and op, as PyProf does).
pub fn estimate_call(module: &str, op: &str, call: &OpCall<'_>, mode: Mode) -> Estimate {
    rules::run(table::dispatch(module, op, mode.is_apex()), call, mode)
}

/// A kernel's first argument marker (the one PyProf's models read): as the
/// build decoded it, else decoded from its text.
pub fn decode_first_marker(rec: KernelRef<'_, '_>) -> Option<Arc<Marker>> {
    if let Some(m) = rec.first_marker() {
        return Some(Arc::clone(m));
    }
    rec.marker()
        .first()
        .and_then(|m| decode_marker(m))
        .map(Arc::new)
}

/// The sequential state of PyProf's per-kernel flow.
#[derive(Debug)]
pub struct Engine {
    mode: Mode,
    index: FpropIndex,
    stock: stock::State,
}

/// A kernel's markers after the backward lookup.
#[derive(Clone, Debug, Default)]
pub struct Resolved {
    /// The forward kernel a backward kernel borrowed from.
    pub from: Option<Arc<Fprop>>,
    /// The decoded marker the models read (own or borrowed).
    pub marker: Option<Arc<Marker>>,
    /// `--compat`: apex.pyprof aborts before any model (a backward kernel
    /// without sequence id or sequence markers).
    pub abort: Option<Cow<'static, str>>,
    /// Default mode: the kernel is costed from stock PyTorch markers
    /// (its `stack`) rather than PyProf's (docs/stock.md).
    pub stock: Option<stock::StockRef>,
}

impl Engine {
    /// A new run.
    pub fn new(mode: Mode) -> Engine {
        Engine {
            mode,
            index: FpropIndex::new(),
            stock: stock::State::new(),
        }
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// PyProf's backward lookup for one kernel, and in the default mode
    /// the sequential part of stock-marker costing; call in input order.
    /// `marker` is [`decode_first_marker`] of the kernel.
    pub fn resolve(&mut self, rec: KernelRef<'_, '_>, marker: Option<Arc<Marker>>) -> Resolved {
        let mut out = Resolved {
            from: None,
            marker: marker.clone(),
            abort: None,
            stock: None,
        };
        if rec.dir.is_bprop() {
            if self.mode.is_apex() && rec.seq_id.is_empty() {
                out.abort = Some("a backward kernel without a sequence id".into());
            } else if self.mode.is_apex() && rec.seq_marker().is_empty() {
                out.abort = Some("a backward kernel without sequence markers".into());
            } else if rec.marker().is_empty()
                && let Some(f) = rec.seq_id.first().and_then(|s| self.index.find(*s))
            {
                out.marker = f.marker.clone();
                out.from = Some(Arc::clone(f));
            }
        }
        if !self.mode.is_apex() {
            out.stock = self.stock.resolve(rec, out.marker.is_some());
        }
        self.index.observe(rec, marker.as_ref());
        out
    }
}

/// A list of strings from a kernel's context or from a borrowed forward
/// kernel.
#[derive(Clone, Copy, Debug)]
pub enum StrList<'a> {
    /// The kernel's own.
    Row(SymList<'a>),
    /// The forward kernel's.
    Owned(&'a [String]),
}

impl<'a> StrList<'a> {
    /// The strings.
    pub fn iter(&self) -> impl Iterator<Item = &'a str> + 'a {
        let (a, b) = match *self {
            StrList::Row(v) => (Some(v.iter()), None),
            StrList::Owned(v) => (None, Some(v.iter().map(String::as_str))),
        };
        a.into_iter().flatten().chain(b.into_iter().flatten())
    }

    /// The first string.
    pub fn first(&self) -> Option<&'a str> {
        self.iter().next()
    }

    /// The last string.
    pub fn last(&self) -> Option<&'a str> {
        match *self {
            StrList::Row(v) => v.last(),
            StrList::Owned(v) => v.last().map(String::as_str),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        match *self {
            StrList::Row(v) => v.is_empty(),
            StrList::Owned(v) => v.is_empty(),
        }
    }
}

/// Everything a printed row needs beyond the kernel's own fields.
#[derive(Clone, Debug)]
pub struct KernelEstimate<'a> {
    /// The printed module: the first of the (own or borrowed) `mod` list,
    /// `""` when it is empty.
    pub module: &'a str,
    /// The printed op: the model's op, else the first of the `op` list,
    /// `""` when it is empty.
    pub op: &'a str,
    /// Layer names (own or borrowed).
    pub layer: StrList<'a>,
    /// Call stack (own or borrowed).
    pub trace: StrList<'a>,
    /// The model's numbers.
    pub estimate: Estimate,
    /// Stock PyTorch markers: the op the numbers were computed from
    /// (`aten::addmm` under `aten::linear`); `""` otherwise.
    pub anchor: &'a str,
}

/// PyProf's per-kernel flow after the lookup: dispatch on the first module
/// and op and run the model; or the stock-marker model when
/// [`Engine::resolve`] chose it. Pure; safe to run in parallel.
pub fn estimate_kernel<'a>(
    rec: KernelRef<'a, '_>,
    res: &'a Resolved,
    mode: Mode,
) -> KernelEstimate<'a> {
    if let Some(st) = &res.stock {
        let s = stock::estimate(rec, st);
        return KernelEstimate {
            module: s.module,
            op: s.op,
            layer: StrList::Row(rec.layer()),
            trace: StrList::Row(rec.trace()),
            estimate: s.estimate,
            anchor: s.anchor,
        };
    }
    let (mods, ops, layer, trace) = match &res.from {
        Some(f) => (
            StrList::Owned(&f.module),
            StrList::Owned(&f.op),
            StrList::Owned(&f.layer),
            StrList::Owned(&f.trace),
        ),
        None => (
            StrList::Row(rec.module()),
            StrList::Row(rec.op()),
            StrList::Row(rec.layer()),
            StrList::Row(rec.trace()),
        ),
    };
    let module = mods.first().unwrap_or("");
    let op0 = ops.first().unwrap_or("");
    let done = |estimate: Estimate, op: &'a str| KernelEstimate {
        module,
        op,
        layer,
        trace,
        estimate,
        anchor: "",
    };
    if let Some(why) = &res.abort {
        return done(Estimate::apex_abort(why.clone()), op0);
    }
    let Some(m) = res.marker.as_deref() else {
        return done(Estimate::no_marker(), op0);
    };
    if mode.is_apex() && (mods.is_empty() || ops.is_empty()) {
        return done(
            Estimate::apex_abort("the record's mod or op list is empty".into()),
            op0,
        );
    }
    let dispatch_mod = mods.first().unwrap_or(&m.module);
    let dispatch_op = ops.first().unwrap_or(&m.op);
    let name: Cow<'_, str> = if rec.short_name.contains(' ') {
        Cow::Owned(rec.short_name.replace(' ', "_"))
    } else {
        Cow::Borrowed(&rec.short_name)
    };
    let call = OpCall::from_marker(
        m,
        rec.dir.kind(),
        rec.sub_seq_id,
        Kernel {
            name: &name,
            long_name: &rec.long_name,
            grid: rec.grid,
        },
    );
    let estimate = estimate_call(dispatch_mod, dispatch_op, &call, mode);
    let op = match estimate.outcome {
        Outcome::ApexAbort(_) => op0,
        _ => estimate.op.unwrap_or(&m.op),
    };
    done(estimate, op)
}
