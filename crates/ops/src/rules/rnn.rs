//! RNN cells (PyProf `recurrentCell.py`): `LSTMCell`/`GRUCell`
//! (and by default `RNNCell`, B38) `forward(x, h[, c])`.
//!
//! Forward kernels are guessed from the kernel index (`sub mod 3`: layer
//! GEMM, recurrent GEMM, elementwise); backward GEMMs from the CTA tile in
//! the kernel name times the grid.

use super::{Fail, Res, ensure, esize, est, int, prod, sum, tensor, tname};
use crate::call::OpCall;
use crate::estimate::{Mode, Tc};
use crate::num::Num;
use crate::params::Params;
use crate::tc::{self, APEX_LINEAR, contains_any};

/// `(tile_x, tile_y)` from a name like `volta_sgemm_128x64_nn`: the one
/// `_`-separated token with an `x` and no `slice`.
fn cta_tile(name: &str) -> Option<(i128, i128)> {
    let tokens: Vec<&str> = name
        .split('_')
        .filter(|t| t.contains('x') && !t.contains("slice"))
        .collect();
    let [tok] = tokens.as_slice() else {
        return None;
    };
    let parts: Vec<&str> = tok.split('x').collect();
    let [a, b] = parts.as_slice() else {
        return None;
    };
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gemm {
    Layer,
    Recur,
}

pub(super) fn rnn_cell<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    let cells: &[&str] = &["LSTMCell", "GRUCell", "RNNCell"];
    ensure!(
        c.op == "forward" && cells.contains(&c.module),
        "{}.{} is not an RNN cell",
        c.module,
        c.op
    );
    let args = c.args;
    if mode.is_apex() {
        ensure!(
            args.len() == 2 || args.len() == 3,
            "RNN cell with {} arguments",
            args.len()
        );
    }
    ensure!(args.len() >= 2, "RNN cell with {} arguments", args.len());
    let (xs, xt) = tensor(mode, &args[0])?;
    let (hs, ht) = tensor(mode, &args[1])?;
    let ([b1, x], [b2, h]) = (xs, hs) else {
        return Err(Fail::new(format!("RNN cell shapes {xs:?}, {hs:?}")));
    };
    ensure!(b1 == b2, "batch {b1} vs {b2}");
    if mode.is_apex() {
        ensure!(xt == ht, "dtypes differ: {xt}, {ht}");
    }
    let (b, x, h) = (i128::from(*b1), i128::from(*x), i128::from(*h));
    let mult: i128 = match c.module {
        "LSTMCell" => 4,
        "GRUCell" => 3,
        _ => 1,
    };
    let name = c.kernel.name;
    let mut gemm: Option<(Gemm, i128, i128, i128)> = None;
    let mut elems = 0i128;
    // the default mode cannot tell what a backward GEMM is: unknown, not 0
    let mut unknown = false;
    if c.dir.is_fprop() {
        match c.sub.rem_euclid(3) {
            0 => gemm = Some((Gemm::Layer, prod(&[mult, h])?, b, x)),
            1 => gemm = Some((Gemm::Recur, prod(&[mult, h])?, b, h)),
            _ => {
                let hb = prod(&[h, b])?;
                elems = sum(&[prod(&[2, mult, hb])?, prod(&[3, hb])?])?;
            }
        }
    } else if name.contains("gemm")
        && (name.contains("sgemm") || name.contains("884gemm") || name.contains("hgemm"))
    {
        let tile = cta_tile(name);
        if mode.is_apex() && tile.is_none() {
            return Err(Fail::new(format!("no CTA tile in '{name}'")));
        }
        match tile {
            None => unknown = true,
            Some((tx, ty)) => {
                let [gx, gy, _] = c.kernel.grid;
                let gm = prod(&[tx, i128::from(gx)])?;
                let gn = prod(&[ty, i128::from(gy)])?;
                let mh = prod(&[mult, h])?;
                if name.ends_with("_nn") {
                    if gm == h {
                        gemm = Some((Gemm::Recur, gm, b, mh));
                    } else if gm == x {
                        gemm = Some((Gemm::Layer, gm, gn, mh));
                    }
                } else if name.ends_with("_nt") && (gm == h || gm == x) {
                    if gn != mh {
                        if mode.is_apex() {
                            return Err(Fail::new(format!("wgrad N {gn} is not {mh}")));
                        }
                        unknown = true;
                    } else {
                        let which = if gm == h { Gemm::Recur } else { Gemm::Layer };
                        gemm = Some((which, gm, gn, b));
                    }
                }
                if !mode.is_apex() && gemm.is_none() {
                    unknown = true;
                }
            }
        }
    }
    let t = tname(mode, xt)?;
    let e = esize(mode, xt)?;
    let (params, flops, bytes) = match gemm {
        Some((which, m, n, k)) => {
            let label = match which {
                Gemm::Layer => "layer",
                Gemm::Recur => "recur",
            };
            let p = Params::new()
                .kv("gemm", label)
                .kv("M", m)
                .kv("N", n)
                .kv("K", k)
                .ty(t)
                .finish();
            let elems = sum(&[prod(&[m, k])?, prod(&[k, n])?, prod(&[m, n])?])?;
            let bytes = e.map(|e| prod(&[elems, e])).transpose()?.map(Num::Int);
            (p, int(prod(&[2, m, n, k])?), bytes)
        }
        None => {
            let p = Params::new()
                .kv("cell", c.module)
                .kv("X", x)
                .kv("H", h)
                .kv("B", b)
                .ty(t)
                .finish();
            if unknown {
                (p, None, None)
            } else {
                let bytes = e.map(|e| prod(&[elems, e])).transpose()?.map(Num::Int);
                (p, int(0), bytes)
            }
        }
    };
    let tc = if name.contains("gemm") {
        match mode {
            Mode::Apex => Tc::from_bool(contains_any(name, APEX_LINEAR)),
            Mode::Fixed => Tc::from_bool(tc::uses_tensor_cores(name, c.kernel.long_name)),
        }
    } else {
        Tc::NotApplicable
    };
    Ok(est(params, flops, bytes, tc))
}

#[cfg(test)]
mod tests {
    use crate::estimate::Mode;
    use crate::rules::testing::*;

    #[test]
    fn lstm_cell_worked_example() {
        let m = marker(
            "LSTMCell",
            "forward",
            &[
                t(&[32, 256], "float32"),
                t(&[32, 512], "float32"),
                t(&[32, 512], "float32"),
            ],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "volta_sgemm_128x64_nn")),
            "forward|gemm=layer,M=2048,N=32,K=256,fp32,|0|33554432|2392064"
        );
        assert_eq!(
            apex(&m, "fprop", 1, "volta_sgemm_128x64_nn").params,
            "gemm=recur,M=2048,N=32,K=512,fp32,"
        );
        assert_eq!(
            row(&apex(&m, "fprop", 2, "elementwise_kernel")),
            "forward|cell=LSTMCell,X=256,H=512,B=32,fp32,|-|0|720896"
        );
        let r = with_grid(
            &m,
            "bprop",
            0,
            "volta_sgemm_128x64_nn",
            [4, 1, 1],
            Mode::Apex,
        );
        assert_eq!(r.params, "gemm=recur,M=512,N=32,K=2048,fp32,");
        // no tile in the name: apex aborts, the default mode says unknown
        assert!(aborted(&apex(&m, "bprop", 0, "volta_sgemm_nn")));
        assert!(partial(&fixed(&m, "bprop", 0, "volta_sgemm_nn")));
        // [B38]
        let m = marker(
            "RNNCell",
            "forward",
            &[t(&[32, 256], "float32"), t(&[32, 512], "float32")],
        );
        assert_eq!(
            apex(&m, "fprop", 0, "volta_sgemm_128x64_nn").params,
            "T=[(32,256),(32,512)],['float32','float32']"
        );
        assert_eq!(
            fixed(&m, "fprop", 0, "volta_sgemm_128x64_nn").params,
            "gemm=layer,M=512,N=32,K=256,fp32,"
        );
    }
}
