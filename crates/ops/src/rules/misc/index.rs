//! Index, slice and join ops: `cat`, `reshape`, `masked_scatter_`, `gather`,
//! `nonzero`, `index_select`, `masked_select`.

use rprof_model::pylit::Value;

use super::{arg_or_named, first, first_kernel_only, one_tensor};
use crate::call::OpCall;
use crate::estimate::{Mode, Tc};
use crate::marker::Arg;
use crate::num::Num;
use crate::params::Params;
use crate::rules::{
    Fail, Res, ensure, esize, est, int, need_module, numel, prod, sum, tensor, tname,
};

/// `torch.cat`: `2·Σ numel·e` bytes; HEAD (default) on the first kernel only.
pub(in crate::rules) fn cat<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
pub(in crate::rules) fn reshape<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
pub(in crate::rules) fn masked_scatter<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
pub(in crate::rules) fn gather<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
pub(in crate::rules) fn nonzero<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
pub(in crate::rules) fn index_select<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
pub(in crate::rules) fn masked_select<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
            crate::rules::broadcast(&[ts, ms]).is_some(),
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
