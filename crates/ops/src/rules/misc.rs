//! The smaller models: conversions, embedding, reductions, dropout,
//! softmax, index/slice/join ops, normalization, random, loss, optimizer,
//! memory, copies, activations, and the fallback (PyProf `Foo`).
//!
//! Most are "one tensor in, `k·numel` FLOPs, `m·numel·e` bytes"; each
//! function states PyProf's formula and where the modes differ.

use rprof_model::pylit::Value;

use super::{
    Fail, Res, bytes, ensure, esize, est, foo_params, int, need_module, numel, prod, sum, tensor,
    tname,
};
use crate::call::OpCall;
use crate::estimate::{Mode, Outcome, Tc};
use crate::marker::Arg;
use crate::num::Num;
use crate::params::Params;

const F: &str = "torch.nn.functional";

/// `T=shape,type,`, `flops`, `elems·e` bytes, tc `-`.
fn one_tensor(mode: Mode, shape: &[i64], dtype: &str, flops: i128, elems: i128) -> Res {
    let params = Params::new()
        .shape("T", shape)
        .ty(tname(mode, dtype)?)
        .finish();
    let e = esize(mode, dtype)?;
    Ok(est(params, int(flops), bytes(elems, e)?, Tc::NotApplicable))
}

/// `args[i]` when positional, else the record named `name` (PyProf's
/// "input may be a keyword" lookup).
fn arg_or_named<'a>(args: &[&'a Arg], i: usize, name: &str) -> Result<&'a Arg, Fail> {
    match args.get(i) {
        Some(a) if a.is_positional() => Ok(a),
        _ => args
            .iter()
            .find(|a| a.name == name)
            .copied()
            .ok_or_else(|| Fail::new(format!("no argument '{name}'"))),
    }
}

fn first<'a>(c: &OpCall<'a>) -> Result<&'a Arg, Fail> {
    c.args.first().ok_or_else(|| Fail::new("no arguments"))
}

fn first_positional<'a>(c: &OpCall<'a>) -> Result<&'a Arg, Fail> {
    c.positional()
        .next()
        .ok_or_else(|| Fail::new("no positional argument"))
}

/// 0 for kernels after the first of the op (PyProf's `sub > 0` gating).
fn first_kernel_only(c: &OpCall<'_>, x: i128) -> i128 {
    if c.sub > 0 { 0 } else { x }
}

/// PyProf's `Foo`: params only, 0 FLOPs, 0 bytes.
pub(super) fn foo<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    let params = match foo_params(c) {
        Some(p) if c.args_complete || !mode.is_apex() => p,
        _ => return Err(Fail::new("a tensor record without shape or dtype")),
    };
    let mut e = est(params, int(0), int(0), Tc::NotApplicable);
    e.outcome = Outcome::NoModel;
    Ok(e)
}

/// `Tensor.half()`, `.float()`, …, `.to()`: `numel·(e_src + e_dst)` bytes.
pub(super) fn convert<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["Tensor"])?;
    if mode.is_apex() {
        ensure!(c.args.len() == 1, "convert with {} arguments", c.args.len());
    }
    let t = first(c)?;
    const ONE: &[i64] = &[1];
    let (shape, stype): (&[i64], &str) = if t.ty == "tensor" {
        tensor(mode, t)?
    } else {
        (ONE, t.ty.as_str())
    };
    let dtype = if c.op == "to" { stype } else { c.op };
    let params = Params::new()
        .shape("T", shape)
        .ty(tname(mode, stype)?)
        .ty(tname(mode, dtype)?)
        .finish();
    let n = numel(shape)?;
    let b = match (esize(mode, stype)?, esize(mode, dtype)?) {
        (Some(a), Some(b)) => Some(Num::Int(prod(&[n, a + b])?)),
        _ => None,
    };
    Ok(est(params, int(0), b, Tc::NotApplicable))
}

/// `F.embedding(indices, weight)`: fprop reads the indices and moves
/// `2·numel(idx)·D` weights; bprop `3·numel(idx)·D` on the first kernel.
pub(super) fn embedding<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &[F])?;
    ensure!(
        c.args.len() >= 2,
        "embedding with {} arguments",
        c.args.len()
    );
    let (is, it) = tensor(mode, &c.args[0])?;
    let (es, et) = tensor(mode, &c.args[1])?;
    let [_, d] = es else {
        return Err(Fail::new(format!("embedding weight {es:?} is not 2-D")));
    };
    let params = Params::new()
        .shape("I", is)
        .ty(tname(mode, it)?)
        .shape("E", es)
        .ty(tname(mode, et)?)
        .finish();
    let ni = numel(is)?;
    let d = i128::from(*d);
    let b = if c.dir.is_fprop() {
        match (esize(mode, it)?, esize(mode, et)?) {
            (Some(ei), Some(ee)) => Some(sum(&[prod(&[ni, ei])?, prod(&[ni, d, 2, ee])?])?),
            _ => None,
        }
    } else {
        esize(mode, et)?
            .map(|ee| prod(&[ni, d, 3, ee]).map(|b| first_kernel_only(c, b)))
            .transpose()?
    };
    Ok(est(params, int(0), b.map(Num::Int), Tc::NotApplicable))
}

/// `sum`: `numel` FLOPs and `numel·e` bytes on every kernel in apex; the
/// default mode charges the first kernel only (B31).
pub(super) fn sum_op<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch", "Tensor"])?;
    let args: Vec<&Arg> = c.args.iter().collect();
    ensure!(!args.is_empty(), "sum without arguments");
    let (s, t) = tensor(mode, arg_or_named(&args, 0, "input")?)?;
    let n = numel(s)?;
    match mode {
        Mode::Apex => one_tensor(mode, s, t, n, n),
        Mode::Fixed => one_tensor(mode, s, t, first_kernel_only(c, n), first_kernel_only(c, n)),
    }
}

/// `mean`: `numel + 1` FLOPs and `numel·e` bytes (HEAD: `+ e`), first
/// kernel only. A Python scalar input aborts apex; HEAD costs it as `()`.
pub(super) fn mean<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch", "Tensor"])?;
    let pos: Vec<&Arg> = c.positional().collect();
    if mode.is_apex() {
        ensure!(
            pos.len() <= 2,
            "mean with {} positional arguments",
            pos.len()
        );
    }
    let i = pos.first().ok_or_else(|| Fail::new("mean without input"))?;
    let (s, t): (&[i64], &str) = match (mode, i.ty.as_str()) {
        (Mode::Fixed, "float" | "int" | "bool") => (&[], i.ty.as_str()),
        _ => tensor(mode, i)?,
    };
    let n = numel(s)?;
    let params = Params::new().shape("T", s).ty(tname(mode, t)?).finish();
    let e = esize(mode, t)?;
    let b = match (mode, e) {
        (_, None) => None,
        (Mode::Apex, Some(e)) => Some(prod(&[n, e])?),
        (Mode::Fixed, Some(e)) => Some(sum(&[prod(&[n, e])?, e])?),
    };
    Ok(est(
        params,
        int(first_kernel_only(c, sum(&[n, 1])?)),
        b.map(|b| Num::Int(first_kernel_only(c, b))),
        Tc::NotApplicable,
    ))
}

/// `norm`: `2·numel + 1` FLOPs, `numel·e` bytes; apex on every kernel,
/// HEAD (default) on the first only.
pub(super) fn norm<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch", "Tensor"])?;
    let (s, t) = tensor(mode, first(c)?)?;
    let n = numel(s)?;
    let f = sum(&[prod(&[2, n])?, 1])?;
    match mode {
        Mode::Apex => one_tensor(mode, s, t, f, n),
        Mode::Fixed => one_tensor(mode, s, t, first_kernel_only(c, f), first_kernel_only(c, n)),
    }
}

/// `F.dropout`: `5·numel` FLOPs, `2·numel·e` bytes (the mask is ignored).
pub(super) fn dropout<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &[F])?;
    let (s, t) = tensor(mode, first(c)?)?;
    let n = numel(s)?;
    one_tensor(mode, s, t, prod(&[5, n])?, prod(&[2, n])?)
}

/// `F.softmax` / `F.log_softmax`: bytes `3·numel·e` forward, `5·` backward.
/// FLOPs are 0 in apex, `40·numel` / `21·numel` in HEAD (default).
pub(super) fn softmax<'a>(c: &OpCall<'a>, mode: Mode, log: bool) -> Res {
    need_module(c, mode, &[F])?; // [B32]: the default mode accepts torch and Tensor
    let pos: Vec<&Arg> = c.positional().collect();
    if mode.is_apex() {
        ensure!(
            pos.len() <= 2,
            "softmax with {} positional arguments",
            pos.len()
        );
    }
    let i = pos
        .first()
        .ok_or_else(|| Fail::new("softmax without input"))?;
    let (s, t) = tensor(mode, i)?;
    let n = numel(s)?;
    let f = match mode {
        Mode::Apex => 0,
        Mode::Fixed => prod(&[if log { 21 } else { 40 }, n])?,
    };
    let k = if c.dir.is_fprop() { 3 } else { 5 };
    one_tensor(mode, s, t, f, prod(&[k, n])?)
}

/// `torch.cat`: `2·Σ numel·e` bytes; HEAD (default) on the first kernel only.
pub(super) fn cat<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch"])?;
    let mut shapes: Vec<&[i64]> = Vec::new();
    let mut total = Some(0i128);
    let t0 = match mode {
        Mode::Apex => {
            ensure!(c.args.len() >= 2, "cat with {} arguments", c.args.len());
            c.args[0]
                .dtype
                .as_deref()
                .ok_or_else(|| Fail::new("cat: first argument has no dtype"))?
        }
        Mode::Fixed => c
            .args
            .iter()
            .find_map(|a| a.tensor())
            .map(|(_, t)| t)
            .ok_or_else(|| Fail::new("cat without tensors"))?,
    };
    for a in c.args.iter().filter(|a| a.ty == "tensor") {
        let (s, t) = tensor(mode, a)?;
        if mode.is_apex() {
            ensure!(t == t0, "cat: dtypes differ ({t0}, {t})");
        }
        shapes.push(s);
        total = match (total, esize(mode, t)?) {
            (Some(acc), Some(e)) => Some(sum(&[acc, prod(&[2, numel(s)?, e])?])?),
            _ => None,
        };
    }
    let params = Params::new()
        .shapes("T", shapes)
        .ty(tname(mode, t0)?)
        .finish();
    let b = match mode {
        Mode::Apex => total,
        Mode::Fixed => total.map(|b| first_kernel_only(c, b)),
    };
    Ok(est(params, int(0), b.map(Num::Int), Tc::NotApplicable))
}

/// `Tensor.reshape`: no cost.
pub(super) fn reshape<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["Tensor"])?;
    let (s, t) = tensor(mode, first(c)?)?;
    one_tensor(mode, s, t, 0, 0)
}

/// Mask dtypes: apex wants `uint8`; the default mode also takes `bool` (B33).
fn mask_ok(mode: Mode, dtype: &str) -> bool {
    dtype == "uint8" || (!mode.is_apex() && dtype == "bool")
}

/// `Tensor.masked_scatter_(mask, src)`: `2·E·e + E` bytes on the first
/// kernel. apex always aborts here: it compares the seqId *list* with 0.
pub(super) fn masked_scatter<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["Tensor"])?;
    if mode.is_apex() {
        ensure!(
            c.args.len() == 3,
            "masked_scatter_ with {} arguments",
            c.args.len()
        );
    }
    ensure!(
        c.args.len() >= 3,
        "masked_scatter_ with {} arguments",
        c.args.len()
    );
    let (ds, dt) = tensor(mode, &c.args[0])?;
    let (ms, mt) = tensor(mode, &c.args[1])?;
    let (_, st) = tensor(mode, &c.args[2])?;
    ensure!(mask_ok(mode, mt), "mask of dtype {mt}");
    ensure!(ds == ms, "mask shape {ms:?} vs {ds:?}");
    if mode.is_apex() {
        ensure!(dt == st, "dtypes differ: {dt}, {st}");
        return Err(Fail::new(
            "masked_scatter_: apex compares the seqId list with 0 (TypeError)",
        ));
    }
    let n = numel(ds)?;
    let params = Params::new().shape("T", ds).ty(tname(mode, dt)?).finish();
    let b = esize(mode, dt)?
        .map(|e| sum(&[prod(&[2, n, e])?, n]))
        .transpose()?;
    Ok(est(
        params,
        int(0),
        b.map(|b| Num::Int(first_kernel_only(c, b))),
        Tc::NotApplicable,
    ))
}

/// `gather(input, dim, index)`: apex `2·numel(input)·e`; the default mode
/// `numel(index)·(2·e + 8)` (B34).
pub(super) fn gather<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["Tensor", "torch"])?;
    let args: Vec<&Arg> = c.args.iter().filter(|a| a.name != "out").collect();
    if mode.is_apex() {
        ensure!(args.len() == 3, "gather with {} arguments", args.len());
    }
    let (s, t) = tensor(mode, arg_or_named(&args, 0, "input")?)?;
    match mode {
        Mode::Apex => one_tensor(mode, s, t, 0, prod(&[2, numel(s)?])?),
        Mode::Fixed => {
            let (is, _) = tensor(mode, arg_or_named(&args, 2, "index")?)?;
            let params = Params::new().shape("T", s).ty(tname(mode, t)?).finish();
            let b = esize(mode, t)?
                .map(|e| prod(&[numel(is)?, 2 * e + 8]))
                .transpose()?;
            Ok(est(params, int(0), b.map(Num::Int), Tc::NotApplicable))
        }
    }
}

/// `nonzero`: `E·e + E·rank·8` bytes on the first kernel. apex always
/// aborts (seqId list compared with 0).
pub(super) fn nonzero<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch", "Tensor"])?;
    if mode.is_apex() {
        ensure!(c.args.len() == 1, "nonzero with {} arguments", c.args.len());
        tensor(mode, &c.args[0])?;
        return Err(Fail::new(
            "nonzero: apex compares the seqId list with 0 (TypeError)",
        ));
    }
    let (s, t) = tensor(mode, first(c)?)?;
    let n = numel(s)?;
    let rank = i128::try_from(s.len()).unwrap_or(i128::MAX);
    let params = Params::new().shape("T", s).ty(tname(mode, t)?).finish();
    let b = esize(mode, t)?
        .map(|e| sum(&[prod(&[n, e])?, prod(&[n, rank, 8])?]))
        .transpose()?;
    Ok(est(
        params,
        int(0),
        b.map(|b| Num::Int(first_kernel_only(c, b))),
        Tc::NotApplicable,
    ))
}

/// `index_select(input, dim, index)`: `2·numel(out)·e + I·8`. apex always
/// aborts (its element count asserts on the list it builds).
pub(super) fn index_select<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["Tensor", "torch"])?;
    let args: Vec<&Arg> = c.args.iter().filter(|a| a.name != "out").collect();
    if mode.is_apex() {
        ensure!(
            args.len() == 3,
            "index_select with {} arguments",
            args.len()
        );
    }
    let (s, t) = tensor(mode, arg_or_named(&args, 0, "input")?)?;
    let d = arg_or_named(&args, 1, "dim")?;
    let (is, it) = tensor(mode, arg_or_named(&args, 2, "index")?)?;
    ensure!(d.ty == "int", "dim of type {}", d.ty);
    let dim = d
        .value
        .as_ref()
        .and_then(Value::as_int)
        .ok_or_else(|| Fail::new("dim is not an int"))?;
    ensure!(
        it == "int64" || (!mode.is_apex() && it == "int32"),
        "index of dtype {it}"
    );
    let [idx] = is else {
        return Err(Fail::new(format!("index {is:?} is not 1-D")));
    };
    let rank = i64::try_from(s.len()).unwrap_or(i64::MAX);
    ensure!(dim < rank, "dim {dim} of a rank-{rank} tensor");
    if mode.is_apex() {
        return Err(Fail::new(
            "index_select: apex's element count asserts on a list",
        ));
    }
    let d = if dim < 0 { dim + rank } else { dim };
    let slot = usize::try_from(d).map_err(|_| Fail::new(format!("dim {dim}")))?;
    let mut out = s.to_vec();
    if let Some(x) = out.get_mut(slot) {
        *x = *idx;
    }
    let params = Params::new()
        .shape("T", s)
        .kv("D", dim)
        .kv("I", idx)
        .ty(tname(mode, t)?)
        .finish();
    let b = esize(mode, t)?
        .map(|e| sum(&[prod(&[2, numel(&out)?, e])?, prod(&[i128::from(*idx), 8])?]))
        .transpose()?;
    Ok(est(params, int(0), b.map(Num::Int), Tc::NotApplicable))
}

/// `masked_select(input, mask)`: `2·numel(T)·e + numel(M)`.
pub(super) fn masked_select<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["Tensor", "torch"])?;
    let args: Vec<&Arg> = c.args.iter().filter(|a| a.name != "out").collect();
    if mode.is_apex() {
        ensure!(
            args.len() == 2,
            "masked_select with {} arguments",
            args.len()
        );
    }
    let (ts, tt) = tensor(mode, arg_or_named(&args, 0, "input")?)?;
    let (ms, mt) = tensor(mode, arg_or_named(&args, 1, "mask")?)?;
    ensure!(mask_ok(mode, mt), "mask of dtype {mt}");
    if ts != ms {
        ensure!(
            super::broadcast(&[ts, ms]).is_some(),
            "{ts:?} and {ms:?} do not broadcast"
        );
    }
    let params = Params::new()
        .shape("T", ts)
        .shape("M", ms)
        .ty(tname(mode, tt)?)
        .finish();
    let b = esize(mode, tt)?
        .map(|e| sum(&[prod(&[2, numel(ts)?, e])?, numel(ms)?]))
        .transpose()?;
    Ok(est(params, int(0), b.map(Num::Int), Tc::NotApplicable))
}

/// `batch_norm`: `8·numel` FLOPs; `4·` / `5·numel·e` bytes forward /
/// backward, apex on every kernel, HEAD (default) on the first only.
pub(super) fn batch_norm<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    if mode.is_apex() {
        ensure!(
            c.args.len() == 8,
            "batch_norm with {} arguments",
            c.args.len()
        );
    }
    let (s, t) = tensor(mode, first(c)?)?;
    let n = numel(s)?;
    let b = prod(&[if c.dir.is_fprop() { 4 } else { 5 }, n])?;
    let b = if mode.is_apex() {
        b
    } else {
        first_kernel_only(c, b)
    };
    one_tensor(mode, s, t, prod(&[8, n])?, b)
}

/// `torch.randperm(n)`: `3·n` FLOPs, `8·n` bytes.
pub(super) fn randperm<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch"])?;
    let a = match mode {
        Mode::Apex => {
            ensure!(
                c.args.len() == 1,
                "randperm with {} arguments",
                c.args.len()
            );
            &c.args[0]
        }
        Mode::Fixed => first_positional(c)?,
    };
    ensure!(a.ty == "int", "randperm of a {}", a.ty);
    let n = a
        .value
        .as_ref()
        .and_then(Value::as_int)
        .ok_or_else(|| Fail::new("randperm: n is not an int"))?;
    let n = i128::from(n);
    let params = Params::new().kv("N", n).finish();
    Ok(est(
        params,
        int(prod(&[3, n])?),
        int(prod(&[8, n])?),
        Tc::NotApplicable,
    ))
}

/// `F.mse_loss(input, target, reduction)`: `E = numel·f`, bytes `E·e`,
/// FLOPs `2E + 1`. apex requires the reduction argument; the default mode
/// assumes `mean` (B37).
pub(super) fn mse_loss<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &[F])?;
    let args: Vec<&Arg> = c.args.iter().collect();
    if mode.is_apex() {
        ensure!(args.len() == 3, "mse_loss with {} arguments", args.len());
    }
    let x = arg_or_named(&args, 0, "input")?;
    let y = arg_or_named(&args, 1, "target")?;
    let red = match (mode, arg_or_named(&args, 2, "reduction")) {
        (_, Ok(r)) => {
            ensure!(r.ty == "str", "reduction of type {}", r.ty);
            match r.value.as_ref().and_then(Value::as_str) {
                Some(v @ ("none" | "mean" | "sum")) => v,
                other => return Err(Fail::new(format!("reduction {other:?}"))),
            }
        }
        (Mode::Fixed, Err(_)) => "mean",
        (Mode::Apex, Err(e)) => return Err(e),
    };
    let (xs, xt) = tensor(mode, x)?;
    let (ys, yt) = tensor(mode, y)?;
    ensure!(xs == ys, "mse_loss shapes {xs:?} vs {ys:?}");
    if mode.is_apex() {
        ensure!(xt == yt, "dtypes differ: {xt}, {yt}");
    }
    let f = match (c.dir.is_fprop(), red == "none") {
        (true, true) => 3,
        (true, false) => 2,
        (false, true) => 4,
        (false, false) => 3,
    };
    let elems = prod(&[numel(xs)?, f])?;
    let params = Params::new()
        .shape("T", xs)
        .ty(tname(mode, xt)?)
        .kv("red", red)
        .finish();
    let e = esize(mode, xt)?;
    Ok(est(
        params,
        int(sum(&[prod(&[2, elems])?, 1])?),
        bytes(elems, e)?,
        Tc::NotApplicable,
    ))
}

/// apex `fused_adam_cuda.adam(w, hw, m, v, g, …)`: bytes
/// `E·(6·e_w + e_g [+ e_g when mixed])`, FLOPs 0; apex on every kernel,
/// HEAD (default) on the first only.
pub(super) fn adam<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    let n_args = c.args.len();
    if mode.is_apex() {
        ensure!(n_args == 12 || n_args == 14, "adam with {n_args} arguments");
    }
    ensure!(n_args >= 5, "adam with {n_args} arguments");
    let [w, hw, m, v, g, ..] = c.args else {
        return Err(Fail::new("adam arguments"));
    };
    let (ws, wt) = tensor(mode, w)?;
    let (hs, _) = tensor(mode, hw)?;
    let (ms, mt) = tensor(mode, m)?;
    let (vs, vt) = tensor(mode, v)?;
    let (gs, gt) = tensor(mode, g)?;
    ensure!(ws == ms && ms == vs && vs == gs, "adam shapes differ");
    ensure!(hs == ws || hs == [0], "adam fp16 copy of shape {hs:?}");
    if mode.is_apex() {
        ensure!(
            wt == "float32" && mt == "float32" && vt == "float32",
            "adam state is not float32"
        );
    }
    let params = Params::new()
        .shape("T", ws)
        .ty(tname(mode, wt)?)
        .ty(tname(mode, gt)?)
        .finish();
    let n = numel(ws)?;
    let b = match (esize(mode, wt)?, esize(mode, gt)?) {
        (Some(ew), Some(eg)) => {
            let extra = if wt != gt { eg } else { 0 };
            Some(prod(&[n, sum(&[prod(&[6, ew])?, eg, extra])?])?)
        }
        _ => None,
    };
    let b = if mode.is_apex() {
        b
    } else {
        b.map(|b| first_kernel_only(c, b))
    };
    Ok(est(params, int(0), b.map(Num::Int), Tc::NotApplicable))
}

/// Default mode only (apex has no class: `Foo`): `ones`, `zeros`,
/// `*_like`, `zero_`: `numel·e` bytes.
pub(super) fn one_zero<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    let (shape, dtype): (Vec<i64>, &str) = if c.op.ends_with("_like") || c.op == "zero_" {
        let (s, t) = tensor(mode, first(c)?)?;
        (s.to_vec(), t)
    } else {
        // one list/tuple record, or the dims as int records; dtype unknown, assume float
        let pos: Vec<&Arg> = c.positional().collect();
        let dims = match pos.as_slice() {
            [a] if a.ty == "list" || a.ty == "tuple" => size_list(a)?,
            _ => pos
                .iter()
                .filter(|a| a.ty == "int")
                .map(|a| a.value.as_ref().and_then(Value::as_int))
                .collect::<Option<Vec<i64>>>()
                .ok_or_else(|| Fail::new("sizes are not ints"))?,
        };
        (dims, "float32")
    };
    ensure!(shape.iter().all(|d| *d >= 0), "negative size {shape:?}");
    let n = numel(&shape)?;
    one_tensor(mode, &shape, dtype, 0, n)
}

fn size_list(a: &Arg) -> Result<Vec<i64>, Fail> {
    a.value
        .as_ref()
        .and_then(Value::as_seq)
        .and_then(|xs| xs.iter().map(Value::as_int).collect::<Option<Vec<i64>>>())
        .ok_or_else(|| Fail::new("size is not a list of ints"))
}

/// Default mode only: `Tensor.fill_(value)`: `numel·e` bytes.
pub(super) fn fill<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    let (s, t) = tensor(mode, first(c)?)?;
    let n = numel(s)?;
    one_tensor(mode, s, t, 0, n)
}

/// Default mode only: `torch.full(size, value)`: dtype from the value's
/// Python type; `numel·e` bytes.
pub(super) fn full<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    let pos: Vec<&Arg> = c.positional().collect();
    let [size, value, ..] = pos.as_slice() else {
        return Err(Fail::new("full needs a size and a value"));
    };
    let shape = size_list(size)?;
    ensure!(shape.iter().all(|d| *d >= 0), "negative size {shape:?}");
    let dtype = match value.ty.as_str() {
        "float" => "float32",
        "int" => "int32",
        "bool" => "bool",
        other => return Err(Fail::new(format!("fill value of type {other}"))),
    };
    let n = numel(&shape)?;
    one_tensor(mode, &shape, dtype, 0, n)
}

/// `Tensor.copy_(src)`: `numel·(e_src + e_dst)` bytes.
pub(super) fn copy<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["Tensor"])?;
    if mode.is_apex() {
        ensure!(c.args.len() == 2, "copy_ with {} arguments", c.args.len());
    }
    ensure!(c.args.len() >= 2, "copy_ with {} arguments", c.args.len());
    let (dst, src) = (&c.args[0], &c.args[1]);
    ensure!(dst.ty == src.ty, "copy_ from {} to {}", src.ty, dst.ty);
    let (ss, st) = tensor(mode, src)?;
    let (ds, dt) = tensor(mode, dst)?;
    ensure!(ss == ds, "copy_ shapes {ss:?} vs {ds:?}");
    let params = Params::new()
        .shape("T", ss)
        .ty(tname(mode, st)?)
        .ty(tname(mode, dt)?)
        .finish();
    let n = numel(ss)?;
    let b = match (esize(mode, st)?, esize(mode, dt)?) {
        (Some(a), Some(b)) => Some(Num::Int(prod(&[n, a + b])?)),
        _ => None,
    };
    Ok(est(params, int(0), b, Tc::NotApplicable))
}

/// `Tensor.clone()` / `.contiguous()`: `2·numel·e` bytes.
pub(super) fn clone_like<'a>(c: &OpCall<'a>, mode: Mode, _what: &str) -> Res {
    need_module(c, mode, &["Tensor"])?;
    if mode.is_apex() {
        ensure!(
            c.args.len() == 1,
            "{} with {} arguments",
            c.op,
            c.args.len()
        );
    }
    let (s, t) = tensor(mode, first(c)?)?;
    one_tensor(mode, s, t, 0, prod(&[2, numel(s)?])?)
}

/// `Tensor.any()`: `numel·e` bytes. apex takes exactly one tensor; HEAD
/// (default) also a bool scalar, as `(1,)` of `bool`.
pub(super) fn any<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["Tensor"])?;
    if mode.is_apex() {
        ensure!(c.args.len() == 1, "any with {} arguments", c.args.len());
    }
    let a = first(c)?;
    if !mode.is_apex() && a.ty == "bool" {
        return one_tensor(mode, &[1], "bool", 0, 1);
    }
    let (s, t) = tensor(mode, a)?;
    one_tensor(mode, s, t, 0, numel(s)?)
}

/// Activations: `numel` FLOPs, `2·` / `3·numel·e` bytes forward / backward.
pub(super) fn activation<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &[F, "torch", "Tensor"])?;
    let (s, t) = tensor(mode, first_positional(c)?)?;
    let n = numel(s)?;
    one_tensor(
        mode,
        s,
        t,
        n,
        prod(&[if c.dir.is_fprop() { 2 } else { 3 }, n])?,
    )
}

#[cfg(test)]
mod tests {
    use rprof_model::pylit::Value;

    use crate::rules::testing::*;

    #[test]
    fn params_formats_of_apex() {
        // pyprof-apex-differences.md §4.1
        let m = marker("Tensor", "half", &[t(&[10, 10], "float32")]);
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "half|T=(10,10),fp32,fp16,|-|0|600"
        );
        let m = marker("Tensor", "byte", &[t(&[10, 10], "float32")]);
        assert_eq!(apex(&m, "fprop", 0, "k").params, "T=(10,10),fp32,uint8,");
        let m = marker("Tensor", "float", &[v("", "int", i(3))]);
        assert_eq!(apex(&m, "fprop", 0, "k").params, "T=(1,),int32,fp32,");
        let m = marker("Tensor", "to", &[t(&[10, 10], "float16")]);
        assert_eq!(apex(&m, "fprop", 0, "k").params, "T=(10,10),fp16,fp16,");
        let m = marker(
            "torch.nn.functional",
            "embedding",
            &[t(&[35, 20], "int64"), t(&[33278, 200], "float32")],
        );
        assert_eq!(
            apex(&m, "fprop", 0, "k").params,
            "I=(35,20),int64,E=(33278,200),fp32,"
        );
        let m = marker(
            "torch",
            "cat",
            &[
                t(&[2, 3], "float32"),
                t(&[2, 3], "float32"),
                v("", "int", i(0)),
            ],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 1, "k")),
            "cat|T=[(2,3),(2,3)],fp32,|-|0|96"
        );
        assert_eq!(fb(&fixed(&m, "fprop", 1, "k")), "0/0");
        let m = marker("torch", "zeros", &[v("", "tuple", tup(&[3, 4, 5]))]);
        assert_eq!(row(&apex(&m, "fprop", 0, "k")), "zeros|T=[],[]|-|0|0");
        assert_eq!(
            row(&fixed(&m, "fprop", 0, "k")),
            "zeros|T=(3,4,5),fp32,|-|0|240"
        );
        let m = marker("Tensor", "zero_", &[t(&[3, 4, 5], "float32")]);
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "zero_|T=[(3,4,5)],['float32']|-|0|0"
        );
        let m = marker(
            "torch",
            "full",
            &[v("", "tuple", tup(&[3, 4])), v("", "float", f(1.5))],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/0");
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "0/48");
    }

    #[test]
    fn reductions_and_gating() {
        let m = marker("torch", "mean", &[t(&[10, 10], "float32")]);
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "101/400");
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "101/404");
        let m = marker("torch", "mean", &[v("", "float", f(1.0))]);
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "2/8");
        let m = marker("Tensor", "norm", &[t(&[10, 10], "float32")]);
        assert_eq!(fb(&apex(&m, "fprop", 1, "k")), "201/400");
        assert_eq!(fb(&fixed(&m, "fprop", 1, "k")), "0/0");
        let m = marker("Tensor", "sum", &[t(&[10, 10], "float32")]);
        assert_eq!(fb(&apex(&m, "fprop", 1, "k")), "100/400");
        // [B31]
        assert_eq!(fb(&fixed(&m, "fprop", 1, "k")), "0/0");
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "100/400");
    }

    #[test]
    fn softmax_family() {
        let m = marker(
            "torch.nn.functional",
            "softmax",
            &[t(&[32, 16, 128, 128], "float16"), v("dim", "int", i(-1))],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "softmax|T=(32,16,128,128),fp16,|-|0|50331648"
        );
        assert_eq!(fb(&apex(&m, "bprop", 0, "k")), "0/83886080");
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "335544320/50331648");
        let m = marker(
            "torch.nn.functional",
            "log_softmax",
            &[t(&[32, 1000], "float32")],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/384000");
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "672000/384000");
        // [B32] / apex's LogSoftmax module restriction
        let m = marker("torch", "log_softmax", &[t(&[32, 1000], "float32")]);
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        let m = marker("Tensor", "softmax", &[t(&[32, 1000], "float32")]);
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "1280000/384000");
    }

    #[test]
    fn embedding_batchnorm_adam() {
        let m = marker(
            "torch.nn.functional",
            "embedding",
            &[t(&[32, 128], "int64"), t(&[30522, 768], "float32")],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/25198592");
        assert_eq!(fb(&apex(&m, "bprop", 0, "k")), "0/37748736");
        assert_eq!(fb(&apex(&m, "bprop", 1, "k")), "0/0");
        let mut args = vec![t(&[32, 64, 56, 56], "float16")];
        args.extend((0..7).map(|_| v("", "NoneType", Value::None)));
        let m = marker("torch.nn.functional", "batch_norm", &args);
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "51380224/51380224");
        assert_eq!(fb(&apex(&m, "fprop", 1, "k")), "51380224/51380224");
        assert_eq!(fb(&fixed(&m, "fprop", 1, "k")), "51380224/0");
        args.push(v("", "bool", Value::Bool(true)));
        let m = marker("torch", "batch_norm", &args);
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        let mut a = vec![
            t(&[1024, 1024], "float32"),
            t(&[1024, 1024], "float16"),
            t(&[1024, 1024], "float32"),
            t(&[1024, 1024], "float32"),
            t(&[1024, 1024], "float16"),
        ];
        a.extend((0..9).map(|_| v("", "float", f(0.1))));
        let m = marker("fused_adam_cuda", "adam", &a);
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "adam|T=(1024,1024),fp32,fp16,|-|0|29360128"
        );
        assert_eq!(fb(&apex(&m, "fprop", 1, "k")), "0/29360128");
        assert_eq!(fb(&fixed(&m, "fprop", 1, "k")), "0/0");
    }

    #[test]
    fn index_ops() {
        let m = marker(
            "Tensor",
            "index_select",
            &[
                t(&[100, 64], "float32"),
                v("", "int", i(0)),
                t(&[10], "int64"),
            ],
        );
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        assert_eq!(
            row(&fixed(&m, "fprop", 0, "k")),
            "index_select|T=(100,64),D=0,I=10,fp32,|-|0|5200"
        );
        let m = marker("torch", "nonzero", &[t(&[100, 64], "float32")]);
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "0/128000");
        let m = marker(
            "Tensor",
            "masked_select",
            &[t(&[10, 10], "float32"), t(&[10, 10], "bool")],
        );
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        // [B33]
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "0/900");
        let m = marker(
            "torch",
            "gather",
            &[
                t(&[100, 64], "float32"),
                v("", "int", i(1)),
                t(&[100, 8], "int64"),
            ],
        );
        assert_eq!(fb(&apex(&m, "fprop", 0, "k")), "0/51200");
        // [B34]
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "0/12800");
    }

    #[test]
    fn misc_classes() {
        let m = marker(
            "torch.nn.functional",
            "mse_loss",
            &[
                t(&[32, 10], "float32"),
                t(&[32, 10], "float32"),
                v("", "str", s("mean")),
            ],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "mse_loss|T=(32,10),fp32,red=mean,|-|1281|2560"
        );
        // [B37]
        let m = marker(
            "torch.nn.functional",
            "mse_loss",
            &[t(&[32, 10], "float32"), t(&[32, 10], "float32")],
        );
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "1281/2560");
        let m = marker(
            "Tensor",
            "copy_",
            &[t(&[32, 10], "float16"), t(&[32, 10], "float32")],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "copy_|T=(32,10),fp32,fp16,|-|0|1920"
        );
        let m = marker("torch", "randperm", &[v("", "int", i(1000))]);
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "randperm|N=1000,|-|3000|8000"
        );
        let m = marker("Tensor", "any", &[v("", "bool", Value::Bool(true))]);
        assert!(aborted(&apex(&m, "fprop", 0, "k")));
        assert_eq!(fb(&fixed(&m, "fprop", 0, "k")), "0/1");
        let m = marker(
            "torch.nn.functional",
            "relu",
            &[
                t(&[35, 20, 200], "float32"),
                v("inplace", "bool", Value::Bool(false)),
            ],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "relu|T=(35,20,200),fp32,|-|140000|1120000"
        );
        assert_eq!(fb(&apex(&m, "bprop", 0, "k")), "140000/1680000");
        let m = marker(
            "torch.nn.functional",
            "layer_norm",
            &[
                t(&[35, 20, 200], "float32"),
                v("", "tuple", tup(&[200])),
                t(&[200], "float32"),
                t(&[200], "float32"),
            ],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "k")),
            "layer_norm|T=[(35,20,200),(200,),(200,)],['float32','float32','float32']|-|0|0"
        );
        let m = marker("Tensor", "backward", &[]);
        assert_eq!(apex(&m, "fprop", 0, "k").params, "T=[],[]");
    }
}
