//! Reductions: `sum`, `mean`, `norm`, `any`.

use super::{arg_or_named, first, first_kernel_only, one_tensor};
use crate::call::OpCall;
use crate::estimate::{Mode, Tc};
use crate::marker::Arg;
use crate::num::Num;
use crate::params::Params;
use crate::rules::{
    Fail, Res, ensure, esize, est, int, need_module, numel, prod, sum, tensor, tname,
};

/// `sum`: `numel` FLOPs and `numel·e` bytes on every kernel in apex; the
/// default mode charges the first kernel only (B31).
pub(in crate::rules) fn sum_op<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
pub(in crate::rules) fn mean<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
pub(in crate::rules) fn norm<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch", "Tensor"])?;
    let (s, t) = tensor(mode, first(c)?)?;
    let n = numel(s)?;
    let f = sum(&[prod(&[2, n])?, 1])?;
    match mode {
        Mode::Apex => one_tensor(mode, s, t, f, n),
        Mode::Fixed => one_tensor(mode, s, t, first_kernel_only(c, f), first_kernel_only(c, n)),
    }
}

/// `Tensor.any()`: `numel·e` bytes. apex takes exactly one tensor; HEAD
/// (default) also a bool scalar, as `(1,)` of `bool`.
pub(in crate::rules) fn any<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
