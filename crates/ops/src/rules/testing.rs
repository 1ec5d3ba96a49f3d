//! Small builders for the rule tests.

use rprof_model::pylit::Value;

use crate::call::{Direction, Kernel, OpCall};
use crate::estimate::{Mode, Outcome, Tc};
use crate::marker::{Arg, Marker};
use crate::num::Num;

pub(crate) use super::int;

/// A marker.
pub(crate) fn marker(module: &str, op: &str, args: &[Arg]) -> Marker {
    Marker {
        module: module.to_owned(),
        op: op.to_owned(),
        args: args.to_vec(),
        well_formed: true,
    }
}

/// A positional tensor record.
pub(crate) fn t(shape: &[i64], dtype: &str) -> Arg {
    Arg::new_tensor("", shape, dtype)
}

/// A scalar/list record.
pub(crate) fn v(name: &str, ty: &str, value: Value) -> Arg {
    Arg::new_value(name, ty, value)
}

/// Value helpers.
pub(crate) fn f(x: f64) -> Value {
    Value::Float(x)
}
pub(crate) fn i(x: i64) -> Value {
    Value::Int(x)
}
pub(crate) fn s(x: &str) -> Value {
    Value::Str(x.to_owned())
}
pub(crate) fn tup(xs: &[i64]) -> Value {
    Value::Tuple(xs.iter().map(|x| Value::Int(*x)).collect())
}

/// What a test looks at.
#[derive(Debug)]
pub(crate) struct Out {
    pub op: String,
    pub params: String,
    pub tc: Tc,
    pub flops: Option<Num>,
    pub bytes: Option<Num>,
    pub outcome: Outcome,
}

fn run(m: &Marker, dir: &str, sub: i64, kernel: &str, mode: Mode) -> Out {
    let call = OpCall::from_marker(
        m,
        Direction::parse(dir),
        sub,
        Kernel {
            name: kernel,
            long_name: "",
            grid: [4, 1, 1],
        },
    );
    let spec = crate::table::dispatch(&m.module, &m.op, mode.is_apex());
    let e = super::run(spec, &call, mode);
    Out {
        op: e.op.unwrap_or(&m.op).to_owned(),
        params: e.params.into_string(),
        tc: e.tc,
        flops: e.flops,
        bytes: e.bytes,
        outcome: e.outcome,
    }
}

/// `--compat`.
pub(crate) fn apex(m: &Marker, dir: &str, sub: i64, kernel: &str) -> Out {
    run(m, dir, sub, kernel, Mode::Apex)
}

/// Default mode.
pub(crate) fn fixed(m: &Marker, dir: &str, sub: i64, kernel: &str) -> Out {
    run(m, dir, sub, kernel, Mode::Fixed)
}

/// Default mode with a grid.
pub(crate) fn with_grid(
    m: &Marker,
    dir: &str,
    sub: i64,
    kernel: &str,
    grid: [i64; 3],
    mode: Mode,
) -> Out {
    let call = OpCall::from_marker(
        m,
        Direction::parse(dir),
        sub,
        Kernel {
            name: kernel,
            long_name: "",
            grid,
        },
    );
    let spec = crate::table::dispatch(&m.module, &m.op, mode.is_apex());
    let e = super::run(spec, &call, mode);
    Out {
        op: e.op.unwrap_or(&m.op).to_owned(),
        params: e.params.into_string(),
        tc: e.tc,
        flops: e.flops,
        bytes: e.bytes,
        outcome: e.outcome,
    }
}

fn num(n: Option<Num>) -> String {
    n.map_or_else(|| "na".to_owned(), |n| n.to_string())
}

/// `op|params|tc|flops|bytes`.
pub(crate) fn row(o: &Out) -> String {
    format!(
        "{}|{}|{}|{}|{}",
        o.op,
        o.params,
        o.tc,
        num(o.flops),
        num(o.bytes)
    )
}

/// `flops/bytes`.
pub(crate) fn fb(o: &Out) -> String {
    format!("{}/{}", num(o.flops), num(o.bytes))
}

/// apex.pyprof would have aborted.
pub(crate) fn aborted(o: &Out) -> bool {
    matches!(o.outcome, Outcome::ApexAbort(_))
}

/// The default mode could not compute everything.
pub(crate) fn partial(o: &Out) -> bool {
    matches!(o.outcome, Outcome::Partial(_))
}
