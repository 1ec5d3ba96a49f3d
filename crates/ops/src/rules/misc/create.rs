//! Creation and fill: `randperm`, `ones`/`zeros`/`*_like`/`zero_`, `fill_`,
//! `full`.

use rprof_model::pylit::Value;

use super::{first, first_positional, one_tensor};
use crate::call::OpCall;
use crate::estimate::{Mode, Tc};
use crate::marker::Arg;
use crate::params::Params;
use crate::rules::{Fail, Res, ensure, est, int, need_module, numel, prod, tensor};

/// `torch.randperm(n)`: `3·n` FLOPs, `8·n` bytes.
pub(in crate::rules) fn randperm<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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

/// Default mode only (apex has no class: `Foo`): `ones`, `zeros`,
/// `*_like`, `zero_`: `numel·e` bytes.
pub(in crate::rules) fn one_zero<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
pub(in crate::rules) fn fill<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    let (s, t) = tensor(mode, first(c)?)?;
    let n = numel(s)?;
    one_tensor(mode, s, t, 0, n)
}

/// Default mode only: `torch.full(size, value)`: dtype from the value's
/// Python type; `numel·e` bytes.
pub(in crate::rules) fn full<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
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
