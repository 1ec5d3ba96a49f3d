//! PyProf's reading of the NVTX ranges around one kernel
//! (pyprof-semantics.md §3.7–§3.10): sort them into classes, derive layer
//! names, the Python call stack, sequence ids, direction, module and op.
//!
//! Pure and per kernel, so it runs in parallel. `compat` selects PyProf's
//! exact rules; the default mode applies the fixes listed in docs/compat.md.

use std::borrow::Cow;
use std::sync::Arc;

use crate::pylit::{self, Value};
use crate::stock;

mod args;
pub use args::{Arg, Marker, decode_marker, decode_value};

/// Frames PyProf hides from the `trace` list.
const TRACE_SKIP: &[&str] = &[
    "/torch/nn/modules/",
    "/torch/nn/functional.py",
    "/torch/tensor.py",
    "/torch/autograd/__init__.py",
    "/torch/_jit_internal.py",
    "/pyprof/nvtx/nvmarker.py",
    "/apex/optimizers/",
    "/torch/_utils.py",
    "/torch/optim/",
];

/// Ops of PyProf argument markers that describe no op of their own:
/// attribute access and printing, which PyProf's patched `torch` wraps like
/// any function. A model's `extra_repr` printed through `__getattr__` can
/// leave hundreds of such markers around every kernel (mmagic_vsr_v2).
const NON_OP_MARKERS: &[&str] = &[
    "__getattr__",
    "__getattribute__",
    "__setattr__",
    "__delattr__",
    "__dir__",
    "__repr__",
    "__str__",
    "__format__",
    "__hash__",
    "__sizeof__",
    "extra_repr",
];

/// True when a PyProf argument marker with this op describes no op of its
/// own (attribute access, printing): the default mode skips it when
/// choosing the kernel's op.
pub fn is_non_op_marker(op: &str) -> bool {
    NON_OP_MARKERS.contains(&op)
}

const EVALUATE_FUNCTION: &str = "autograd::engine::evaluate_function: ";

/// What the markers around one kernel say.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Classified<'a> {
    /// Layer names.
    pub layer: Vec<Cow<'a, str>>,
    /// Filtered call stack of the innermost trace marker.
    pub trace: Vec<Cow<'a, str>>,
    /// Module repr markers.
    pub repr: Vec<Cow<'a, str>>,
    /// PyProf argument markers.
    pub marker: Vec<Cow<'a, str>>,
    /// Sequence markers after dedupe, sort and prune.
    pub seq_marker: Vec<Cow<'a, str>>,
    /// Their sequence ids, sorted and unique.
    pub seq_ids: Vec<i64>,
    /// Backward pass?
    pub bprop: bool,
    /// Module names.
    pub mod_: Vec<Cow<'a, str>>,
    /// Op names.
    pub op: Vec<Cow<'a, str>>,
    /// Markers that looked like PyProf dicts but did not parse.
    pub undecodable: u32,
    /// Texts taken as PyProf argument, repr or trace markers: their content
    /// is in `marker`, `repr` and `trace`.
    pub consumed: Vec<&'a str>,
    /// The first of `marker`, decoded (`None` when there is none or it
    /// does not decode).
    pub first_marker: Option<Arc<Marker>>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    PyProf,
    /// Default mode: a PyProf argument marker of attribute access or
    /// printing ([`NON_OP_MARKERS`]); kept in the record's NVTX stack, not
    /// read as the kernel's op.
    NonOp,
    Layer,
    Trace,
    Repr,
    Seq,
    Other,
}

fn class_compat(t: &str) -> Class {
    if t.contains("mod") && t.contains("op") && t.contains("args") && t.contains("type") {
        Class::PyProf
    } else if t.contains("layer:") {
        Class::Layer
    } else if t.contains("traceMarker") {
        Class::Trace
    } else if t.contains("strRepr") {
        Class::Repr
    } else if t.contains(", seq = ") {
        Class::Seq
    } else {
        Class::Other
    }
}

/// Fixed classification ([B3], [B9]): dict markers by their parsed keys,
/// `layer:` only as a prefix, sequence markers by the marker grammar.
fn class_fixed(t: &str, parsed: Option<&Value>, head: &stock::Head<'_>) -> Class {
    if let Some(v) = parsed {
        if v.get("traceMarker").is_some() {
            return Class::Trace;
        }
        if v.get("strRepr").is_some() {
            return Class::Repr;
        }
        if v.get("mod").is_some() && v.get("op").is_some() && v.get("args").is_some() {
            return Class::PyProf;
        }
    }
    if t.starts_with("layer:") {
        return Class::Layer;
    }
    if head.seq.is_some() {
        return Class::Seq;
    }
    Class::Other
}

fn parse_dict(t: &str) -> Option<Value> {
    if !t.starts_with('{') {
        return None;
    }
    pylit::parse(t).ok().filter(|v| matches!(v, Value::Dict(_)))
}

/// Python's `s.split(sep)[n]`, `""` when missing.
fn piece<'a>(s: &'a str, sep: &str, n: usize) -> &'a str {
    s.split(sep).nth(n).unwrap_or("")
}

/// What can be worked out from one marker text alone: the expensive part of
/// classification (dict parsing), done once per distinct text even when
/// thousands of kernels share the same enclosing ranges.
#[derive(Clone, Debug)]
pub struct Prepared<'a> {
    class: Class,
    head: stock::Head<'a>,
    /// PyProf argument marker: `(op, mod)`; `None` when it does not decode.
    op_mod: Option<(String, String)>,
    /// PyProf argument marker, decoded from the literal parsed here.
    decoded: Option<Arc<Marker>>,
    /// Trace marker: the frames PyProf keeps; `None` when it does not decode.
    frames: Option<Vec<String>>,
    /// Fixed mode: looks like a dict but does not parse (kept as "other").
    bad_dict: bool,
}

/// Prepare one marker text for [`classify_prepared`].
pub fn prepare(t: &str, compat: bool) -> Prepared<'_> {
    prepare_with(t, compat, None)
}

/// [`prepare`], with the marker's head given when it is known without its
/// text (a PyTorch-profiler operator's own name, sequence number and id).
pub fn prepare_with<'a>(t: &'a str, compat: bool, head: Option<stock::Head<'a>>) -> Prepared<'a> {
    let head = head.unwrap_or_else(|| stock::parse_head(t));
    let parsed = if compat { None } else { parse_dict(t) };
    let bad_dict = !compat && parsed.is_none() && t.starts_with('{');
    let class = if compat {
        class_compat(t)
    } else {
        class_fixed(t, parsed.as_ref(), &head)
    };
    let dict = || {
        if compat {
            parse_dict(t)
        } else {
            parsed.clone()
        }
    };
    let mut decoded = None;
    let (mut class, (op_mod, frames)) = (
        class,
        match class {
            Class::PyProf => {
                let v = dict();
                let op_mod = v.as_ref().and_then(|v| {
                    Some((v.get("op").map(value_text)?, v.get("mod").map(value_text)?))
                });
                decoded = v.as_ref().and_then(decode_value).map(Arc::new);
                (op_mod, None)
            }
            Class::Trace => {
                let frames = dict()
                    .as_ref()
                    .and_then(|v| v.get("traceMarker"))
                    .and_then(Value::as_seq)
                    .map(|frames| {
                        frames
                            .iter()
                            .filter_map(|f| match f {
                                Value::Str(s)
                                    if !TRACE_SKIP.iter().any(|skip| s.contains(skip)) =>
                                {
                                    Some(s.clone())
                                }
                                _ => None,
                            })
                            .collect()
                    });
                (None, frames)
            }
            _ => (None, None),
        },
    );
    if !compat
        && class == Class::PyProf
        && op_mod.as_ref().is_some_and(|(op, _)| is_non_op_marker(op))
    {
        class = Class::NonOp;
    }
    Prepared {
        class,
        head,
        op_mod,
        decoded,
        frames,
        bad_dict,
    }
}

/// Classify the texts of the ranges enclosing a kernel (outermost first).
pub fn classify<'a>(texts: &[&'a str], compat: bool) -> Classified<'a> {
    let prepared: Vec<Prepared<'a>> = texts.iter().map(|t| prepare(t, compat)).collect();
    let refs: Vec<&Prepared<'a>> = prepared.iter().collect();
    classify_prepared(texts, &refs, compat)
}

/// A working list of [`classify_prepared`], on the stack up to 8 items.
type Scratch<T> = smallvec::SmallVec<[T; 8]>;

/// [`classify`] with each text's [`prepare`]d form given (`prepared[i]`
/// belongs to `texts[i]`).
pub fn classify_prepared<'a>(
    texts: &[&'a str],
    prepared: &[&Prepared<'a>],
    compat: bool,
) -> Classified<'a> {
    let mut out = Classified::default();
    // the working lists live on the stack while they are short (a kernel
    // has a few enclosing markers): this runs once per distinct list of
    // ranges, a million times on a large profile
    let mut traces: Scratch<&Prepared<'a>> = Scratch::new();
    let mut seqs: Scratch<(&'a str, stock::Head<'a>)> = Scratch::new();
    let mut others: Scratch<(&'a str, stock::Head<'a>)> = Scratch::new();
    let mut backward = false;
    for (&t, &p) in texts.iter().zip(prepared) {
        if t.contains("CheckpointFunctionBackward") {
            continue;
        }
        let head = p.head;
        // [B14]: in the fixed mode a kernel is backward when a backward node
        // with a sequence number (`…Backward`, `…Backward0`, `…Backward1`,
        // `…_backward`) or an autograd `evaluate_function` wrapper encloses
        // its launch. Checkpoint recompute is handled as PyProf does it:
        // `CheckpointFunctionBackward` ranges were dropped above, so forward
        // ops recomputed inside them stay forward.
        if !compat
            && (t.starts_with(EVALUATE_FUNCTION)
                || (head.seq.is_some() && stock::is_backward_name(head.name)))
        {
            backward = true;
        }
        if p.bad_dict {
            // kept as an "other" marker, and counted
            out.undecodable += 1;
        }
        match p.class {
            Class::PyProf => {
                out.consumed.push(t);
                if out.marker.is_empty() {
                    out.first_marker.clone_from(&p.decoded);
                }
                out.marker.push(Cow::Borrowed(t));
                match &p.op_mod {
                    Some((op, md)) => {
                        out.op.push(Cow::Owned(op.clone()));
                        out.mod_.push(Cow::Owned(md.clone()));
                    }
                    None => out.undecodable += 1,
                }
            }
            Class::Layer => {
                let name = if compat {
                    piece(t, ":", 1)
                } else {
                    t.strip_prefix("layer:").unwrap_or(t)
                };
                out.layer.push(Cow::Borrowed(name));
            }
            Class::Trace => {
                out.consumed.push(t);
                traces.push(p);
            }
            Class::Repr => {
                out.consumed.push(t);
                out.repr.push(Cow::Borrowed(t));
            }
            Class::Seq => seqs.push((t, head)),
            Class::Other => others.push((t, head)),
            Class::NonOp => {}
        }
    }

    // trace: the innermost trace marker's frames, PyProf's files removed
    if let Some(last) = traces.last() {
        match &last.frames {
            Some(frames) => out.trace = frames.iter().map(|f| Cow::Owned(f.clone())).collect(),
            None => out.undecodable += 1,
        }
    }

    // sequence markers: dedupe, sort, prune
    let mut uniq: Scratch<(&'a str, stock::Head<'a>)> = Scratch::new();
    for s in seqs {
        if !uniq.iter().any(|u| u.0 == s.0) {
            uniq.push(s);
        }
    }
    if compat {
        // PyProf sorts by `after + before` of the split at " = " as strings
        uniq.sort_by_cached_key(|(s, _)| format!("{}{}", piece(s, " = ", 1), piece(s, " = ", 0)));
    } else {
        uniq.sort_by(|(_, a), (_, b)| {
            (a.seq.unwrap_or(i64::MAX), a.name).cmp(&(b.seq.unwrap_or(i64::MAX), b.name))
        });
    }
    let name_seq = |(s, h): (&'a str, stock::Head<'a>)| -> (&'a str, Option<&'a str>, Option<i64>) {
        if compat {
            let (n, q) = s.split_once(',').unwrap_or((s, ""));
            (n, Some(q), None)
        } else {
            (h.name, None, h.seq)
        }
    };
    let mut kept: Scratch<(&'a str, stock::Head<'a>)> = Scratch::new();
    for (i, &s) in uniq.iter().enumerate() {
        if i > 0 {
            let (n0, q0, s0) = name_seq(uniq[i - 1]);
            let (n1, q1, s1) = name_seq(s);
            if (q0, s0) == (q1, s1) && (n0.contains(n1) || n1.contains(n0)) {
                continue;
            }
        }
        kept.push(s);
    }
    out.seq_marker = kept.iter().map(|(s, _)| Cow::Borrowed(*s)).collect();
    let mut ids: Vec<i64> = kept
        .iter()
        .filter_map(|(s, h)| {
            if compat {
                // PyProf: the text between the first and second '='; the
                // marker grammar where that is not an integer ([B11])
                piece(s, "=", 1).trim().parse().ok().or(h.seq)
            } else {
                h.seq
            }
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    out.seq_ids = ids;

    // direction
    out.bprop = if compat {
        kept.iter().any(|(s, _)| {
            s.contains("Backward, seq = ")
                || s.contains("backward, seq = ")
                || s.contains("Backward0, seq = ")
        })
    } else {
        backward
    };

    // mod / op: PyProf argument markers were read above
    if out.op.is_empty() {
        for &(s, h) in &kept {
            let backward = if compat {
                s.contains("backward, seq = ") || s.contains("Backward, seq = ")
            } else {
                stock::is_backward_name(h.name)
            };
            if backward {
                let name = if compat {
                    sanitize_compat(s.split(',').next().unwrap_or(""))
                } else {
                    sanitize_fixed(h.name)
                };
                out.op.push(Cow::Owned(name));
                out.mod_.push(Cow::Borrowed("na"));
            }
        }
    }
    if out.op.is_empty() {
        for &(s, h) in &kept {
            let name = if compat {
                s.split(',').next().unwrap_or("")
            } else {
                h.name
            };
            out.op.push(Cow::Borrowed(name));
            out.mod_.push(Cow::Borrowed("na"));
        }
    }
    if out.op.is_empty() {
        // [B12]: PyProf takes the first element of a hash set (random order);
        // rprof takes the innermost "other" marker in both modes.
        if let Some(&(o, head)) = others.last() {
            // the fixed mode names the op, not the whole marker text
            out.op
                .push(Cow::Borrowed(if compat { o } else { head.name }));
        }
        out.mod_.push(Cow::Borrowed("na"));
    }
    out
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Str(s) => s.clone(),
        other => other.to_repr(),
    }
}

/// PyProf's sanitizer for backward op names: `AddmmBackward` → `Addmm`,
/// `aten::cudnn_convolution_backward` → `atencudnn_convolution`.
fn sanitize_compat(name: &str) -> String {
    let mut s = name.to_owned();
    for junk in [
        "torch",
        "autograd",
        "_backward",
        "::",
        "jit",
        "(anonymous namespace)",
    ] {
        s = s.replace(junk, "");
    }
    s.split("Backward").next().unwrap_or("").to_owned()
}

/// [B15]: strip the namespace and a trailing `Backward\d*` / `_backward`:
/// `AddmmBackward0` → `Addmm`, `aten::cudnn_convolution_backward` →
/// `cudnn_convolution`.
fn sanitize_fixed(name: &str) -> String {
    let base = name.rsplit("::").next().unwrap_or(name);
    let trimmed = base.trim_end_matches(|c: char| c.is_ascii_digit());
    let stem = trimmed
        .strip_suffix("Backward")
        .or_else(|| trimmed.strip_suffix("_backward"))
        .or_else(|| trimmed.strip_suffix("backward"))
        .unwrap_or(base);
    if stem.is_empty() {
        base.to_owned()
    } else {
        stem.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The build's decoded first marker is what decoding the first of
    /// `marker` from its text gives (computed here by `decode_marker` on
    /// the text), in both modes: with two argument markers, after a trace
    /// and a non-op marker, with a dict that does not decode.
    #[test]
    fn first_marker_is_the_first_markers_decoding() {
        let a = "{'mod': 'torch.nn.functional', 'op': 'linear', 'args': [{'name': '', 'type': 'tensor', 'shape': (4, 8), 'dtype': 'float16'}]}";
        let b = "{'mod': 'Tensor', 'op': 'add', 'args': []}";
        let non_op = "{'mod': 'Tensor', 'op': '__getattribute__', 'args': []}";
        let trace = "{'traceMarker': ['a.py:1']}";
        let odd = "{'mod': 'x', 'op': 'y', 'args': 3}";
        let broken = "{'mod': 'x', 'op': ";
        let cases: [&[&str]; 5] = [
            &[a, b],
            &[trace, non_op, b, a],
            &[odd],
            &[broken, "aten::mm, seq = 1"],
            &["layer:conv1", "aten::mm, seq = 1"],
        ];
        for texts in cases {
            for compat in [false, true] {
                let c = classify(texts, compat);
                let want = c.marker.first().and_then(|t| decode_marker(t));
                assert_eq!(
                    c.first_marker.as_deref(),
                    want.as_ref(),
                    "{texts:?} compat={compat}"
                );
            }
        }
        // and it is a marker where one is expected
        assert_eq!(
            classify(&[a, b], false).first_marker.map(|m| m.op.clone()),
            Some("linear".to_owned())
        );
    }

    fn ops(c: &Classified<'_>) -> Vec<String> {
        c.op.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn pyprof_markers_give_mod_and_op() {
        let texts = [
            "{'traceMarker': ['/home/u/train.py:88', '/opt/torch/nn/modules/module.py:727', '/home/u/model.py:40']}",
            "{'mod': 'torch.nn.functional', 'op': 'linear', 'args': [{'name': '', 'type': 'tensor', 'shape': (32, 1024), 'dtype': 'float16'}]}",
            "linear, seq = 10",
            "addmm, seq = 11",
        ];
        for compat in [true, false] {
            let c = classify(&texts, compat);
            assert_eq!(ops(&c), ["linear"]);
            assert_eq!(c.mod_, vec!["torch.nn.functional"]);
            assert_eq!(c.trace, vec!["/home/u/train.py:88", "/home/u/model.py:40"]);
            assert_eq!(c.seq_ids, vec![10, 11]);
            assert!(!c.bprop);
        }
    }

    #[test]
    fn compat_sorts_seq_markers_as_strings() {
        let c = classify(&["a, seq = 9", "b, seq = 10"], true);
        assert_eq!(c.seq_marker, vec!["b, seq = 10", "a, seq = 9"]);
        let c = classify(&["a, seq = 9", "b, seq = 10"], false);
        assert_eq!(c.seq_marker, vec!["a, seq = 9", "b, seq = 10"]);
    }

    #[test]
    fn prune_drops_nested_same_seq() {
        let c = classify(&["aten::add, seq = 5", "aten::add_, seq = 5"], true);
        assert_eq!(c.seq_marker, vec!["aten::add, seq = 5"]);
        assert_eq!(ops(&c), ["aten::add"]);
    }

    #[test]
    fn backward_naming_compat_vs_fixed() {
        let c = classify(&["AddmmBackward, seq = 3"], true);
        assert_eq!((ops(&c), c.bprop), (vec!["Addmm".to_owned()], true));
        // [B14] / [B15]
        let c = classify(&["MulBackward1, seq = 3"], true);
        assert_eq!((ops(&c), c.bprop), (vec!["MulBackward1".to_owned()], false));
        let c = classify(&["MulBackward1, seq = 3"], false);
        assert_eq!((ops(&c), c.bprop), (vec!["Mul".to_owned()], true));
        let c = classify(&["aten::cudnn_convolution_backward, seq = 3"], true);
        assert_eq!(ops(&c), ["atencudnn_convolution"]);
        let c = classify(&["aten::cudnn_convolution_backward, seq = 3"], false);
        assert_eq!(ops(&c), ["cudnn_convolution"]);
    }

    #[test]
    fn modern_markers_parse_in_both_modes() {
        // PyProf crashes on `, op_id = N` ([B11]); rprof reads the seq
        let t = [
            "aten::linear, seq = 10, op_id = 33",
            "aten::addmm, seq = 11, op_id = 35",
        ];
        for compat in [true, false] {
            assert_eq!(classify(&t, compat).seq_ids, vec![10, 11]);
        }
    }

    #[test]
    fn evaluate_function_is_backward_and_recompute_is_forward() {
        let t = [
            "autograd::engine::evaluate_function: AddmmBackward0",
            "aten::mm, op_id = 82",
        ];
        assert!(classify(&t, false).bprop);
        assert!(!classify(&t, true).bprop);
        let t = [
            "autograd::engine::evaluate_function: CheckpointFunctionBackward",
            "CheckpointFunctionBackward, seq = 3",
            "aten::linear, seq = 20, op_id = 1",
        ];
        assert!(!classify(&t, false).bprop);
        // ops inside old (1.4) backward nodes carry `seq = 0`
        let t = [
            "LogSoftmaxBackward, seq = 227",
            "_log_softmax_backward_data, seq = 0",
        ];
        assert!(classify(&t, false).bprop);
    }

    #[test]
    fn layers_and_others() {
        let c = classify(&["layer:Conv1", "x.layer::y", "misc", "inner"], true);
        assert_eq!(c.layer, vec!["Conv1", ""]);
        assert_eq!(ops(&c), ["inner"]);
        assert_eq!(c.mod_, vec!["na"]);
        let c = classify(&["layer:Conv1", "x.layer::y"], false);
        assert_eq!(c.layer, vec!["Conv1"]);
        assert_eq!(ops(&c), ["x.layer::y"]);
        let c = classify(&[], false);
        assert!(c.op.is_empty());
        assert_eq!(c.mod_, vec!["na"]);
    }

    #[test]
    fn empty_args_marker_is_pyprof_in_fixed_mode() {
        // [B3]
        let t = ["{'mod': 'torch', 'op': 'manual_seed', 'args': []}"];
        assert!(classify(&t, true).marker.is_empty());
        assert_eq!(classify(&t, false).marker.len(), 1);
    }

    #[test]
    fn malformed_markers_do_not_crash() {
        let t = [
            "{'mod': 'torch', 'op': , 'args': [], 'type'}",
            "{'traceMarker': [unclosed",
        ];
        for compat in [true, false] {
            let c = classify(&t, compat);
            assert!(c.undecodable >= 1);
        }
    }

    #[test]
    fn attribute_access_markers_are_not_ops_by_default() {
        let getattr = "{'mod': 'torch', 'op': '__getattr__', 'args': [{'name': '', 'type': 'str', 'value': 'extra_repr'}]}";
        let conv = "{'mod': 'torch.nn.functional', 'op': 'conv2d', 'args': [{'name': '', 'type': 'tensor', 'shape': (1, 3, 8, 8), 'dtype': 'float32'}]}";
        let t = [getattr, getattr, conv];
        let c = classify(&t, true);
        assert_eq!(ops(&c), ["__getattr__", "__getattr__", "conv2d"]);
        assert_eq!(c.marker.len(), 3);
        let c = classify(&t, false);
        assert_eq!(ops(&c), ["conv2d"]);
        assert_eq!(c.mod_, vec!["torch.nn.functional"]);
        assert_eq!(c.marker, vec![conv]);
        // not consumed: they stay in the record's NVTX stack
        assert_eq!(c.consumed, vec![conv]);
        // only attribute access: no op from them
        let c = classify(&[getattr], false);
        assert!(c.op.is_empty() && c.marker.is_empty());
    }
}
