//! Conversions and copies: `Tensor.half()`/`.to()`/…, `copy_`,
//! `clone`/`contiguous`.

use super::{first, one_tensor};
use crate::call::OpCall;
use crate::estimate::{Mode, Tc};
use crate::num::Num;
use crate::params::Params;
use crate::rules::{Res, ensure, esize, est, int, need_module, numel, prod, tensor, tname};

/// `Tensor.half()`, `.float()`, …, `.to()`: `numel·(e_src + e_dst)` bytes.
pub(in crate::rules) fn convert<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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

/// `Tensor.copy_(src)`: `numel·(e_src + e_dst)` bytes.
pub(in crate::rules) fn copy<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
pub(in crate::rules) fn clone_like<'a>(c: &OpCall<'a>, mode: Mode, _what: &str) -> Res {
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
