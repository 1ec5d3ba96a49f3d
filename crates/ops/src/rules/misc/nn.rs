//! `torch.nn.functional` layers: embedding, dropout, softmax, batch norm,
//! activations, MSE loss.

use rprof_model::pylit::Value;

use super::{F, arg_or_named, first, first_kernel_only, first_positional, one_tensor};
use crate::call::OpCall;
use crate::estimate::{Mode, Tc};
use crate::marker::Arg;
use crate::num::Num;
use crate::params::Params;
use crate::rules::{
    Fail, Res, bytes, ensure, esize, est, int, need_module, numel, prod, sum, tensor, tname,
};

/// `F.embedding(indices, weight)`: fprop reads the indices and moves
/// `2·numel(idx)·D` weights; bprop `3·numel(idx)·D` on the first kernel.
pub(in crate::rules) fn embedding<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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

/// `F.dropout`: `5·numel` FLOPs, `2·numel·e` bytes (the mask is ignored).
pub(in crate::rules) fn dropout<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &[F])?;
    let (s, t) = tensor(mode, first(c)?)?;
    let n = numel(s)?;
    one_tensor(mode, s, t, prod(&[5, n])?, prod(&[2, n])?)
}

/// `F.softmax` / `F.log_softmax`: bytes `3·numel·e` forward, `5·` backward.
/// FLOPs are 0 in apex, `40·numel` / `21·numel` in HEAD (default).
pub(in crate::rules) fn softmax<'a>(c: &OpCall<'a>, mode: Mode, log: bool) -> Res {
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

/// `batch_norm`: `8·numel` FLOPs; `4·` / `5·numel·e` bytes forward /
/// backward, apex on every kernel, HEAD (default) on the first only.
pub(in crate::rules) fn batch_norm<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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

/// `F.mse_loss(input, target, reduction)`: `E = numel·f`, bytes `E·e`,
/// FLOPs `2E + 1`. apex requires the reduction argument; the default mode
/// assumes `mean` (B37).
pub(in crate::rules) fn mse_loss<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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

/// Activations: `numel` FLOPs, `2·` / `3·numel·e` bytes forward / backward.
pub(in crate::rules) fn activation<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
