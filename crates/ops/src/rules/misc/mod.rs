//! The smaller models: conversions, embedding, reductions, dropout,
//! softmax, index/slice/join ops, normalization, random, loss, optimizer,
//! memory, copies, activations, and the fallback (PyProf `Foo`).
//!
//! Most are "one tensor in, `k·numel` FLOPs, `m·numel·e` bytes"; each
//! function states PyProf's formula and where the modes differ.
//!
//! One file per op family: `convert.rs`, `reduce.rs`, `nn.rs`, `index.rs`,
//! `create.rs`, `optim.rs`; the helpers they share and the fallback here.

mod convert;
mod create;
mod index;
mod nn;
mod optim;
mod reduce;
#[cfg(test)]
mod tests;

use super::{Fail, Res, bytes, esize, est, foo_params, int, tname};
use crate::call::OpCall;
use crate::estimate::{Mode, Outcome, Tc};
use crate::marker::Arg;
use crate::params::Params;

pub(super) use convert::{clone_like, convert, copy};
pub(super) use create::{fill, full, one_zero, randperm};
pub(super) use index::{
    cat, gather, index_select, masked_scatter, masked_select, nonzero, reshape,
};
pub(super) use nn::{activation, batch_norm, dropout, embedding, mse_loss, softmax};
pub(super) use optim::adam;
pub(super) use reduce::{any, mean, norm, sum_op};

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
