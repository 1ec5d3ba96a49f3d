//! Optimizers: apex's fused Adam.

use super::first_kernel_only;
use crate::call::OpCall;
use crate::estimate::{Mode, Tc};
use crate::num::Num;
use crate::params::Params;
use crate::rules::{Fail, Res, ensure, esize, est, int, numel, prod, sum, tensor, tname};

/// apex `fused_adam_cuda.adam(w, hw, m, v, g, …)`: bytes
/// `E·(6·e_w + e_g [+ e_g when mixed])`, FLOPs 0; apex on every kernel,
/// HEAD (default) on the first only.
pub(in crate::rules) fn adam<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
