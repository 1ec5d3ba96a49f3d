//! Elementwise ops (PyProf `pointwise.py`).
//!
//! The two modes use different algorithms:
//! - apex.pyprof (pyprof-apex-differences.md §4.2) keeps only the tensor
//!   arguments, counts an element total `E` from their shapes and charges
//!   `E/2` (a Python float), `E`, `2E`, `10E` or 0 FLOPs by op name.
//! - the default mode follows PyProf HEAD (pyprof-semantics.md §6.7): the
//!   op's group decides FLOPs per output element and bytes are inputs plus
//!   output, with B28–B30 and B41 fixed.

use super::{Fail, Res, broadcast, ensure, esize, est, numel, prod, sum, tensor, tname};
use crate::call::{Direction, OpCall};
use crate::estimate::{Mode, Tc};
use crate::num::Num;
use crate::params::Params;
use crate::table::{self, ApexFlops, Gate, OpSpec, PwKind, Rule};

/// apex: same-shape backward kernels of these ops count `2·n`...
const APEX_BPROP_ADD: &[&str] = &["add", "__add__", "sub", "__sub__", "__isub__"];
/// ...and of these `3·n`; any other op aborts.
const APEX_BPROP_MUL: &[&str] = &["__mul__", "__rmul__", "div", "__truediv__"];

/// Default mode: backward kernels of additive ops move `2·bytes(out)` and
/// do no math (B30: every other op uses the mul rule).
const ADDITIVE: &[&str] = &[
    "add", "add_", "__add__", "__radd__", "__iadd__", "sub", "sub_", "__sub__", "__rsub__",
    "__isub__",
];

/// The op's own row (by the marker's op name) when it is elementwise.
fn own_row(c: &OpCall<'_>) -> Option<&'static OpSpec> {
    table::lookup(c.op).filter(|s| matches!(s.rule, Rule::Pointwise { .. }))
}

pub(super) fn pointwise<'a>(spec: &'static OpSpec, c: &OpCall<'a>, mode: Mode) -> Res {
    match mode {
        Mode::Apex => {
            // apex asserts that the marker's op is one of its Pointwise ops
            let Some(OpSpec {
                rule: Rule::Pointwise { apex, .. },
                gate: Gate::Always,
                ..
            }) = own_row(c)
            else {
                return Err(Fail::new(format!("op '{}' is not a Pointwise op", c.op)));
            };
            apex_pointwise(*apex, c)
        }
        Mode::Fixed => {
            // a stock row's formula is its own; PyProf's rows go by the
            // marker's op name
            let row = if spec.gate == Gate::Stock {
                spec
            } else {
                own_row(c).unwrap_or(spec)
            };
            let kind = match row.rule {
                Rule::Pointwise { kind, .. } => kind,
                _ => PwKind::Unary(1),
            };
            fixed_pointwise(kind, c)
        }
    }
}

fn apex_pointwise<'a>(flops_rule: ApexFlops, c: &OpCall<'a>) -> Res {
    let mode = Mode::Apex;
    ensure!(
        c.dir != Direction::Other,
        "direction is neither fprop nor bprop"
    );
    // named args and every non-tensor record are dropped
    let tensors = c
        .positional()
        .filter(|a| a.ty == "tensor")
        .map(|a| tensor(mode, a))
        .collect::<Result<Vec<_>, Fail>>()?;
    const ONE: &[i64] = &[1];
    let (shapes, dtype): (Vec<&[i64]>, &str) = match tensors.as_slice() {
        [] => (vec![ONE], "float32"),
        [(s, t)] => (vec![*s], *t),
        [(s0, t0), rest @ ..] if rest.len() <= 2 => {
            ensure!(
                rest.iter().all(|(_, t)| t == t0),
                "dtypes of the inputs differ"
            );
            (tensors.iter().map(|(s, _)| *s).collect(), *t0)
        }
        _ => return Err(Fail::new(format!("{} tensor inputs", tensors.len()))),
    };
    let elems = match shapes.as_slice() {
        [s0] => prod(&[2, numel(s0)?])?,
        [s0, s1] if s0 == s1 => {
            let n = numel(s0)?;
            if c.dir.is_fprop() {
                prod(&[3, n])?
            } else if APEX_BPROP_ADD.contains(&c.op) {
                prod(&[2, n])?
            } else if APEX_BPROP_MUL.contains(&c.op) {
                prod(&[3, n])?
            } else {
                return Err(Fail::new(format!("'{}' backward with equal shapes", c.op)));
            }
        }
        [s0, s1] => {
            let out = broadcast(&[s0, s1])
                .ok_or_else(|| Fail::new(format!("{s0:?} and {s1:?} do not broadcast")))?;
            sum(&[numel(s0)?, numel(s1)?, numel(&out)?])?
        }
        [s0, s1, s2] if s0 == s1 && s1 == s2 => prod(&[4, numel(s0)?])?,
        _ => return Err(Fail::new("three inputs of different shapes")),
    };
    let e = esize(mode, dtype)?.unwrap_or(0);
    let bytes = prod(&[elems, e])?;
    let flops = match flops_rule {
        ApexFlops::HalfE => Num::Float(elems as f64 / 2.0),
        ApexFlops::E => Num::Int(elems),
        ApexFlops::TwoE => Num::Int(prod(&[elems, 2])?),
        ApexFlops::TenE => Num::Int(prod(&[elems, 10])?),
        ApexFlops::Zero => Num::ZERO,
    };
    let params = Params::new()
        .shapes("T", shapes)
        .ty(tname(mode, dtype)?)
        .finish();
    Ok(est(
        params,
        Some(flops),
        Some(Num::Int(bytes)),
        Tc::NotApplicable,
    ))
}

/// One input of the default model: a tensor, or a Python scalar (shape
/// `()`, dtype = its type name).
#[derive(Clone, Copy)]
struct Input<'a> {
    shape: &'a [i64],
    dtype: &'a str,
    tensor: bool,
}

fn fixed_pointwise<'a>(kind: PwKind, c: &OpCall<'a>) -> Res {
    let mode = Mode::Fixed;
    let mut inputs: Vec<Input<'a>> = Vec::new();
    for a in c.positional() {
        match a.ty.as_str() {
            "tensor" => {
                let (shape, dtype) = tensor(mode, a)?;
                inputs.push(Input {
                    shape,
                    dtype,
                    tensor: true,
                });
            }
            // Python scalars: float → fp32, int → int32, bool → 1 byte ([B41] keeps HEAD's sizes)
            "float" | "int" | "bool" => inputs.push(Input {
                shape: &[],
                dtype: a.ty.as_str(),
                tensor: false,
            }),
            // None, strings, lists: not data
            _ => {}
        }
    }
    let first_tensor = inputs.iter().find(|i| i.tensor).copied();
    // [B41]: the output takes the first *tensor*'s dtype
    let out_dtype = first_tensor
        .or_else(|| inputs.first().copied())
        .map_or("float32", |i| i.dtype);
    let params = Params::new()
        .shapes("T", inputs.iter().filter(|i| i.tensor).map(|i| i.shape))
        .ty(tname(mode, out_dtype)?)
        .finish();
    let size = |i: &Input<'_>| -> Result<Option<i128>, Fail> {
        esize(mode, i.dtype)?
            .map(|e| prod(&[e, numel(i.shape)?]))
            .transpose()
    };
    let e_out = esize(mode, out_dtype)?;
    let (flops, bytes) = match kind {
        PwKind::Unary(k) => {
            let Some(x) = inputs.first() else {
                return Err(Fail::new("no input"));
            };
            let n = numel(x.shape)?;
            let b = size(x)?.map(|b| prod(&[2, b])).transpose()?;
            (prod(&[i128::from(k), n])?, b)
        }
        PwKind::Binary { .. } | PwKind::Compare => {
            let pair: Vec<Input<'a>> = if inputs.len() > 2 {
                // e.g. the old `add_(t, alpha, t)`: the scalar is not an operand
                inputs
                    .iter()
                    .filter(|i| i.tensor)
                    .take(2)
                    .copied()
                    .collect()
            } else {
                inputs.clone()
            };
            ensure!(pair.len() == 2, "{} operands for a binary op", pair.len());
            let out = broadcast(&[pair[0].shape, pair[1].shape]).ok_or_else(|| {
                Fail::new(format!(
                    "{:?} and {:?} do not broadcast",
                    pair[0].shape, pair[1].shape
                ))
            })?;
            let n_out = numel(&out)?;
            let (k, bprop_rule) = match kind {
                PwKind::Binary { k, bprop_rule } => (i128::from(k), bprop_rule),
                _ => (1, true),
            };
            if c.dir == Direction::Bprop && bprop_rule {
                // [B30]
                let out_bytes = e_out.map(|e| prod(&[n_out, e])).transpose()?;
                if ADDITIVE.contains(&c.op) {
                    (0, out_bytes.map(|b| prod(&[2, b])).transpose()?)
                } else {
                    (n_out, out_bytes.map(|b| prod(&[3, b])).transpose()?)
                }
            } else {
                let e_res = if kind == PwKind::Compare {
                    Some(1)
                } else {
                    e_out
                };
                let b = match (size(&pair[0])?, size(&pair[1])?, e_res) {
                    (Some(a), Some(b), Some(e)) => Some(sum(&[a, b, prod(&[n_out, e])?])?),
                    _ => None,
                };
                (prod(&[k, n_out])?, b)
            }
        }
        PwKind::Ternary => {
            let ops: Vec<Input<'a>> = inputs
                .iter()
                .filter(|i| i.tensor)
                .take(3)
                .copied()
                .collect();
            // [B29]: lerp(a, b, weight) has two tensors
            ensure!(
                ops.len() >= 2,
                "{} tensor operands for a ternary op",
                ops.len()
            );
            let shapes: Vec<&[i64]> = ops.iter().map(|i| i.shape).collect();
            let out = broadcast(&shapes)
                .ok_or_else(|| Fail::new(format!("{shapes:?} do not broadcast")))?;
            let n_out = numel(&out)?;
            let mut total = Some(0i128);
            for i in &ops {
                total = match (total, size(i)?) {
                    (Some(t), Some(b)) => Some(sum(&[t, b])?),
                    _ => None,
                };
            }
            let b = match (total, e_out) {
                (Some(t), Some(e)) => Some(sum(&[t, prod(&[n_out, e])?])?),
                _ => None,
            };
            (prod(&[3, n_out])?, b)
        }
    };
    Ok(est(
        params,
        Some(Num::Int(flops)),
        bytes.map(Num::Int),
        Tc::NotApplicable,
    ))
}

#[cfg(test)]
mod tests {
    use rprof_model::pylit::Value;

    use crate::rules::testing::*;

    #[test]
    fn apex_oracle_values() {
        // pyprof-apex-differences.md §4.2, "Oracle results"
        let add = marker(
            "Tensor",
            "__add__",
            &[t(&[35, 20, 200], "float32"), t(&[35, 1, 200], "float32")],
        );
        assert_eq!(
            row(&apex(&add, "fprop", 0, "elementwise_kernel")),
            "__add__|T=[(35,20,200),(35,1,200)],fp32,|-|143500.0|1148000"
        );
        let add = marker(
            "Tensor",
            "__add__",
            &[t(&[32, 1024], "float16"), t(&[1024], "float16")],
        );
        assert_eq!(
            fb(&apex(&add, "fprop", 0, "elementwise_kernel")),
            "33280.0/133120"
        );
        assert_eq!(
            fb(&apex(&add, "bprop", 0, "reduce_kernel")),
            "33280.0/133120"
        );
        let add = marker(
            "Tensor",
            "__add__",
            &[t(&[32, 1024], "float16"), t(&[32, 1024], "float16")],
        );
        assert_eq!(
            fb(&apex(&add, "fprop", 0, "elementwise_kernel")),
            "49152.0/196608"
        );
        assert_eq!(
            fb(&apex(&add, "bprop", 0, "elementwise_kernel")),
            "32768.0/131072"
        );
        let mul = marker(
            "Tensor",
            "__mul__",
            &[
                t(&[35, 20, 200], "float32"),
                v("", "float", f(14.142135623730951)),
            ],
        );
        assert_eq!(
            row(&apex(&mul, "fprop", 0, "elementwise_kernel")),
            "__mul__|T=[(35,20,200)],fp32,|-|140000.0|1120000"
        );
        let mul_ = marker(
            "Tensor",
            "mul_",
            &[t(&[10, 10], "float32"), v("", "float", f(0.5))],
        );
        assert_eq!(
            fb(&apex(&mul_, "bprop", 0, "elementwise_kernel")),
            "100.0/800"
        );
        let m = marker(
            "Tensor",
            "__mul__",
            &[t(&[10, 10], "float32"), t(&[10, 10], "float32")],
        );
        assert_eq!(fb(&apex(&m, "bprop", 0, "k")), "150.0/1200");
        let m = marker(
            "torch",
            "mul",
            &[t(&[10, 10], "float32"), t(&[10, 10], "float32")],
        );
        assert!(aborted(&apex(&m, "bprop", 0, "k")));
        let m = marker(
            "torch",
            "mul",
            &[t(&[10, 10], "float32"), t(&[10, 1], "float32")],
        );
        assert_eq!(fb(&apex(&m, "bprop", 0, "k")), "105.0/840");
        let m = marker(
            "Tensor",
            "__imul__",
            &[t(&[10, 10], "float32"), t(&[10, 10], "float32")],
        );
        assert!(aborted(&apex(&m, "bprop", 0, "k")));
        let m = marker(
            "Tensor",
            "add_",
            &[
                t(&[600, 200], "float32"),
                v("", "int", i(-20)),
                t(&[600, 200], "float32"),
            ],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "add_|T=[(600,200),(600,200)],fp32,|-|180000.0|1440000"
        );
        let m = marker(
            "torch",
            "add",
            &[
                t(&[10, 10], "float32"),
                t(&[10, 10], "float32"),
                v("alpha", "int", i(2)),
            ],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "150.0/1200");
        let m = marker(
            "Tensor",
            "__truediv__",
            &[t(&[10, 10], "float32"), t(&[10, 10], "float32")],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/1200");
        let m = marker(
            "Tensor",
            "__rsub__",
            &[t(&[10, 10], "float32"), v("", "float", f(1.0))],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/800");
        let m = marker(
            "torch",
            "sub",
            &[t(&[10, 10], "float32"), t(&[10, 10], "float16")],
        );
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        let m = marker(
            "torch",
            "pow",
            &[t(&[10, 10], "float32"), v("", "float", f(2.0))],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/800");
        let m = marker(
            "torch",
            "lt",
            &[t(&[10, 10], "float32"), v("", "float", f(0.5))],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "100.0/800");
        for (op, want) in [
            ("exp", "100.0/800"),
            ("tanh", "400/800"),
            ("log1p", "0/800"),
            ("asin", "2000/800"),
            ("round", "100.0/800"),
            ("round_", "0/800"),
            ("digamma", "0/800"),
        ] {
            let m = marker("torch", op, &[t(&[10, 10], "float32")]);
            assert_eq!(fb(&apex(&m, "fprop", 0, "k")), want, "{op}");
        }
        let m = marker(
            "torch",
            "fmod",
            &[t(&[10, 10], "float32"), v("", "float", f(2.0))],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "200/800");
        let m = marker(
            "torch",
            "clamp",
            &[
                t(&[10, 10], "float32"),
                v("", "float", f(0.0)),
                v("", "float", f(1.0)),
            ],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "clamp|T=[(10,10)],fp32,|-|100.0|800"
        );
        let m = marker(
            "torch",
            "addcmul",
            &[
                t(&[10, 10], "float32"),
                t(&[10, 10], "float32"),
                t(&[10, 10], "float32"),
            ],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/1600");
        let m = marker(
            "torch",
            "addcmul",
            &[
                t(&[10, 10], "float32"),
                t(&[10, 10], "float32"),
                t(&[10, 1], "float32"),
            ],
        );
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        let m = marker(
            "Tensor",
            "__and__",
            &[t(&[10, 10], "bool"), t(&[10, 10], "bool")],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "__and__|T=[(10,10),(10,10)],bool,|-|0|300"
        );
        let m = marker(
            "torch",
            "add",
            &[v("", "float", f(1.0)), v("", "float", f(2.0))],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "add|T=[(1,)],fp32,|-|1.0|8"
        );
        let m = marker("torch", "add", &[t(&[3], "float32"), t(&[3], "float32")]);
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "4.5/36");
        let m = marker(
            "torch",
            "add",
            &[t(&[10, 10], "float32"), v("", "bool", Value::Bool(true))],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "100.0/800");
        let four = marker(
            "torch",
            "add",
            &[
                t(&[1], "float32"),
                t(&[1], "float32"),
                t(&[1], "float32"),
                t(&[1], "float32"),
            ],
        );
        assert!(aborted(&apex(&four, "fprop", 0, "k")));
        let bf = marker("torch", "add", &[t(&[2], "bfloat16"), t(&[2], "bfloat16")]);
        assert!(aborted(&apex(&bf, "fprop", 0, "k")));
    }

    #[test]
    fn head_values_with_fixes() {
        // pyprof-semantics.md §8, PyProf HEAD
        let add = marker(
            "Tensor",
            "__add__",
            &[t(&[32, 1024], "float16"), t(&[1024], "float16")],
        );
        assert_eq!(
            row(&fixed(&add, "fprop", 0, "elementwise_kernel")),
            "__add__|T=[(32,1024),(1024,)],fp16,|-|32768|133120"
        );
        assert_eq!(fb(&fixed(&add, "bprop", 0, "reduce_kernel")), "0/131072");
        let m = marker(
            "torch",
            "pow",
            &[t(&[10, 10], "float32"), v("", "float", f(2.0))],
        );
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "2000/804");
        let m = marker(
            "torch",
            "lt",
            &[t(&[10, 10], "float32"), v("", "float", f(0.5))],
        );
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "100/504");
        let m = marker(
            "torch",
            "addcmul",
            &[
                t(&[10, 10], "float32"),
                t(&[10, 10], "float32"),
                t(&[10, 1], "float32"),
            ],
        );
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "300/1240");
        let m = marker("torch", "exp", &[t(&[10, 10], "float32")]);
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "2000/800");
        let mul = marker(
            "Tensor",
            "__mul__",
            &[
                t(&[35, 20, 200], "float32"),
                v("", "float", f(14.142135623730951)),
            ],
        );
        assert_eq!(fb(&fixed(&mul, "fprop", 0, "k")), "140000/1120004");
        // [B30]: mul backward is costed, not an error
        let m = marker(
            "torch",
            "mul",
            &[t(&[10, 10], "float32"), t(&[10, 10], "float32")],
        );
        assert_eq!(fb(&fixed(&m, "bprop", 0, "k")), "100/1200");
        let m = marker(
            "Tensor",
            "add_",
            &[t(&[10, 10], "float32"), t(&[10, 10], "float32")],
        );
        assert_eq!(fb(&fixed(&m, "bprop", 0, "k")), "0/800");
        // the old add_(t, alpha, t) signature: the scalar is not an operand
        let m = marker(
            "Tensor",
            "add_",
            &[
                t(&[600, 200], "float32"),
                v("", "int", i(-20)),
                t(&[600, 200], "float32"),
            ],
        );
        assert_eq!(
            row(&fixed(&m, "fprop", 0, "k")),
            "add_|T=[(600,200),(600,200)],fp32,|-|120000|1440000"
        );
        // [B28] expm1, [B29] lerp / atan2 / digamma
        let m = marker("torch", "expm1", &[t(&[10, 10], "float32")]);
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "2000/800");
        assert_eq!(apex(&m, "fprop", 0, "k").params, "T=[(10,10)],['float32']");
        let m = marker(
            "torch",
            "lerp",
            &[
                t(&[10, 10], "float32"),
                t(&[10, 10], "float32"),
                v("", "float", f(0.5)),
            ],
        );
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "300/1200");
        let m = marker(
            "torch",
            "atan2",
            &[t(&[10, 10], "float32"), t(&[10, 10], "float32")],
        );
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "2000/1200");
        let m = marker("torch", "digamma", &[t(&[10, 10], "float32")]);
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "2000/800");
        // [B41]: the output dtype is the first tensor's
        let m = marker(
            "Tensor",
            "__radd__",
            &[v("", "int", i(1)), t(&[10, 10], "float16")],
        );
        assert_eq!(
            row(&fixed(&m, "fprop", 0, "k")),
            "__radd__|T=[(10,10)],fp16,|-|100|404"
        );
        // unknown dtype: bytes unknown, FLOPs still known
        let m = marker("torch", "add", &[t(&[10], "qint8"), t(&[10], "qint8")]);
        let r = fixed(&m, "fprop", 0, "k");
        assert_eq!(row(&r), "add|T=[(10,),(10,)],qint8,|-|10|na");
        assert!(partial(&r));
        let m = marker("torch", "add", &[t(&[3], "float32"), t(&[4], "float32")]);
        assert!(partial(&fixed(&m, "fprop", 0, "k")));
    }
}
