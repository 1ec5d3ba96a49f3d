//! GEMM models: Addmm, Mm, Bmm, Matmul (PyProf `blas.py`) and Linear
//! (`linear.py`).

use super::{Fail, Res, ensure, esize, est, int, need_module, numel, prod, sum, tensor, tname};
use crate::call::{Direction, OpCall};
use crate::estimate::{Mode, Tc};
use crate::marker::Arg;
use crate::num::Num;
use crate::params::{ParamText, Params, Tuple};
use crate::tc::{self, APEX_GEMM, APEX_LINEAR, contains_any};

/// Tensor cores of a GEMM-class kernel: apex's substrings, or the default
/// whitelist on both names.
fn gemm_tc(c: &OpCall<'_>, mode: Mode, apex_tokens: &[&str]) -> Tc {
    match mode {
        Mode::Apex => Tc::from_bool(contains_any(c.kernel.name, apex_tokens)),
        Mode::Fixed => Tc::from_bool(tc::uses_tensor_cores(c.kernel.name, c.kernel.long_name)),
    }
}

/// Default mode (B22): a split-K reduction, a cuBLASLt epilogue or an
/// elementwise/reduce kernel under a GEMM marker is not the GEMM.
pub(crate) fn gemm_helper_kernel(name: &str) -> bool {
    !name.contains("gemm")
        && !name.contains("gemv")
        && (name.contains("reduce")
            || name.contains("Reduce")
            || name.contains("elementwise")
            || name.contains("Pointwise")
            || name.contains("epilogue"))
}

/// The shared GEMM cost: `2·b·m·n·k` FLOPs, `e·b·(mn + mk + nk)` bytes.
/// In the default mode a helper kernel gets `b·m·n` and `2·e·b·m·n`.
#[allow(clippy::too_many_arguments)]
fn gemm<'a>(
    c: &OpCall<'a>,
    mode: Mode,
    batch: Option<i64>,
    (m, n, k): (i64, i64, i64),
    dtype: &'a str,
) -> Res {
    let (b, m, n, k) = (
        i128::from(batch.unwrap_or(1)),
        i128::from(m),
        i128::from(n),
        i128::from(k),
    );
    let e = esize(mode, dtype)?;
    let mut p = Params::new();
    if let Some(bb) = batch {
        p = p.kv("B", bb);
    }
    let params = p
        .kv("M", n)
        .kv("N", m)
        .kv("K", k)
        .ty(tname(mode, dtype)?)
        .finish();
    let (flops, elems) = if !mode.is_apex() && gemm_helper_kernel(c.kernel.name) {
        let mn = prod(&[b, m, n])?;
        (mn, prod(&[2, mn])?)
    } else {
        (
            prod(&[2, b, m, n, k])?,
            prod(&[b, sum(&[prod(&[m, n])?, prod(&[m, k])?, prod(&[n, k])?])?])?,
        )
    };
    let bytes = e.map(|e| prod(&[elems, e])).transpose()?.map(Num::Int);
    Ok(est(params, int(flops), bytes, gemm_tc(c, mode, APEX_GEMM)))
}

fn matrix(shape: &[i64]) -> Result<(i64, i64), Fail> {
    match shape {
        [a, b] => Ok((*a, *b)),
        _ => Err(Fail::new(format!("{shape:?} is not a matrix"))),
    }
}

/// The first `n` positional args: exactly `n` for apex, at least `n` by default.
fn first_n<'a>(
    args: impl Iterator<Item = &'a Arg>,
    n: usize,
    mode: Mode,
    what: &str,
) -> Result<Vec<&'a Arg>, Fail> {
    let v: Vec<&Arg> = args.collect();
    if mode.is_apex() {
        ensure!(
            v.len() == n,
            "{what} needs exactly {n} arguments, got {}",
            v.len()
        );
    } else {
        ensure!(v.len() >= n, "{what} needs {n} arguments, got {}", v.len());
    }
    Ok(v.into_iter().take(n).collect())
}

/// `addmm(C, A, B)`: `A = [m, k]`, `B = [k, n]`; params `M=n,N=m,K=k`.
pub(super) fn addmm<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch", "Tensor"])?;
    let v = first_n(c.positional(), 3, mode, "addmm")?;
    let (sa, ta) = tensor(mode, v[1])?;
    let (sb, tb) = tensor(mode, v[2])?;
    let ((m, k1), (k2, n)) = (matrix(sa)?, matrix(sb)?);
    ensure!(k1 == k2, "inner dimensions differ: {k1} vs {k2}");
    if mode.is_apex() {
        let tcc = v[0].dtype.as_deref().unwrap_or("?");
        ensure!(ta == tb && tb == tcc, "dtypes differ: {ta}, {tb}, {tcc}");
    }
    gemm(c, mode, None, (m, n, k1), ta)
}

/// `mm(A, B)`.
pub(super) fn mm<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch"])?;
    // apex counts every record, named or not
    let v = match mode {
        Mode::Apex => first_n(c.args.iter(), 2, mode, "mm")?,
        Mode::Fixed => first_n(c.positional(), 2, mode, "mm")?,
    };
    let (sa, ta) = tensor(mode, v[0])?;
    let (sb, tb) = tensor(mode, v[1])?;
    let ((m, k1), (k2, n)) = (matrix(sa)?, matrix(sb)?);
    ensure!(k1 == k2, "inner dimensions differ: {k1} vs {k2}");
    if mode.is_apex() {
        ensure!(ta == tb, "dtypes differ: {ta}, {tb}");
    }
    gemm(c, mode, None, (m, n, k1), ta)
}

/// `bmm(A, B)`: `A = [b, m, k]`, `B = [b, k, n]`.
pub(super) fn bmm<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch"])?;
    let v = first_n(c.positional(), 2, mode, "bmm")?;
    let (sa, ta) = tensor(mode, v[0])?;
    let (sb, tb) = tensor(mode, v[1])?;
    let ([b1, m, k1], [b2, k2, n]) = (sa, sb) else {
        return Err(Fail::new(format!(
            "bmm needs 3-D tensors, got {sa:?} and {sb:?}"
        )));
    };
    ensure!(
        b1 == b2 && k1 == k2,
        "bmm shapes do not match: {sa:?} and {sb:?}"
    );
    if mode.is_apex() {
        ensure!(ta == tb, "dtypes differ: {ta}, {tb}");
    }
    gemm(c, mode, Some(*b1), (*m, *n, *k1), ta)
}

/// Matmul's kernels that are not the GEMM.
const NON_GEMM: &[&str] = &[
    "kernelPointwiseApply2",
    "reduce_1Block_kernel",
    "elementwise_kernel",
];

/// `matmul(A, B)` / `A @ B` with the rank rules of `torch.matmul`.
pub(super) fn matmul<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    let name = c.kernel.name;
    let v = match mode {
        Mode::Apex => {
            ensure!(
                (c.module == "torch" && c.op == "matmul")
                    || (c.module == "Tensor" && c.op == "__matmul__"),
                "matmul from module '{}'",
                c.module
            );
            ensure!(
                c.args.len() == 2,
                "matmul needs exactly 2 arguments, got {}",
                c.args.len()
            );
            // [B8]: any other kernel name is an AssertionError in apex
            ensure!(
                contains_any(name, NON_GEMM)
                    || name.contains("dot_kernel")
                    || name.contains("gemm")
                    || name.contains("gemv"),
                "kernel '{name}' is not a known matmul kernel"
            );
            vec![&c.args[0], &c.args[1]]
        }
        Mode::Fixed => first_n(c.positional(), 2, mode, "matmul")?,
    };
    let (a, ta) = tensor(mode, v[0])?;
    let (b, tb) = tensor(mode, v[1])?;
    if mode.is_apex() {
        ensure!(ta == tb, "dtypes differ: {ta}, {tb}");
    }
    let (batch, m, n, k) = matmul_dims(a, b)?;
    // apex compares whole names ([B39]); the default mode tests substrings
    let (non_gemm, non_tc) = match mode {
        Mode::Apex => (
            NON_GEMM.contains(&name),
            NON_GEMM.contains(&name) || name == "dot_kernel",
        ),
        Mode::Fixed => {
            let ng = contains_any(name, NON_GEMM) || name.contains("elementwise");
            (ng, ng || name.contains("dot_kernel"))
        }
    };
    let e = esize(mode, ta)?;
    let params = Params::new()
        .shape("A", a)
        .shape("B", b)
        .ty(tname(mode, ta)?)
        .finish();
    let (m, n, k) = (i128::from(m), i128::from(n), i128::from(k));
    let nb = numel(&batch)?;
    let (flops, elems) = if non_gemm {
        (0, prod(&[2, numel(a)?])?)
    } else {
        let per = sum(&[prod(&[m, n])?, prod(&[m, k])?, prod(&[n, k])?])?;
        // [B23]: apex leaves the batch out of the bytes
        let elems = if mode.is_apex() {
            per
        } else {
            prod(&[nb, per])?
        };
        (prod(&[nb, m, n, k, 2])?, elems)
    };
    let bytes = e.map(|e| prod(&[elems, e])).transpose()?.map(Num::Int);
    let tc = if non_tc {
        Tc::NotApplicable
    } else {
        gemm_tc(c, mode, APEX_GEMM)
    };
    Ok(est(params, int(flops), bytes, tc))
}

/// `(batch, m, n, k)` of `torch.matmul(A, B)` (pyprof-semantics.md §6.4).
fn matmul_dims(a: &[i64], b: &[i64]) -> Result<(Vec<i64>, i64, i64, i64), Fail> {
    let bad = || Fail::new(format!("matmul shapes do not match: {a:?} and {b:?}"));
    match (a, b) {
        ([ka], [kb]) if ka == kb => Ok((vec![1], 1, 1, *ka)),
        ([m, k1], [k2, n]) if k1 == k2 => Ok((vec![1], *m, *n, *k1)),
        ([k1], [k2, n]) if k1 == k2 => Ok((vec![1], 1, *n, *k1)),
        ([m, k1], [k2]) if k1 == k2 => Ok((vec![1], *m, 1, *k1)),
        ([_], [_]) | ([_, _], [_, _]) | ([_], [_, _]) | ([_, _], [_]) => Err(bad()),
        ([k], [.., k2, n]) => {
            ensure!(k == k2, "matmul shapes do not match: {a:?} and {b:?}");
            Ok((b[..b.len() - 2].to_vec(), 1, *n, *k2))
        }
        ([.., m, k], [k2]) => {
            ensure!(k == k2, "matmul shapes do not match: {a:?} and {b:?}");
            Ok((a[..a.len() - 2].to_vec(), *m, 1, *k))
        }
        ([.., m, k1], [.., k2, n]) => {
            ensure!(k1 == k2, "matmul shapes do not match: {a:?} and {b:?}");
            let batch =
                super::broadcast(&[&a[..a.len() - 2], &b[..b.len() - 2]]).ok_or_else(bad)?;
            Ok((batch, *m, *n, *k1))
        }
        _ => Err(bad()),
    }
}

/// Which part of a linear layer a kernel computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LinearRole {
    Gemm,
    Bias,
    /// Default mode only: a split-K reduction of the GEMM (B22).
    Reduce,
}

/// apex: GEMM by substring, bias by exact name, anything else aborts.
const LINEAR_GEMM: &[&str] = &[
    "gemm",
    "gemv",
    "dot_kernel",
    "splitKreduce_kernel",
    "reduce_1Block_kernel",
];
const LINEAR_BIAS_APEX: &[&str] = &[
    "kernelReduceContigDim",
    "kernelReduceNoncontigDim_shared",
    "elementwise_kernel",
    "reduce_kernel",
];
/// Default mode: substrings of bias kernels (HEAD's list plus today's
/// `vectorized_`/`unrolled_elementwise_kernel`, which contain these).
const LINEAR_BIAS: &[&str] = &[
    "kernelReduceContigDim",
    "kernelReduceNoncontigDim_shared",
    "elementwise_kernel",
    "reduce_kernel",
    "kernelPointwiseApply2",
    "2d_grouped_direct_kernel",
];

fn linear_role(c: &OpCall<'_>, mode: Mode) -> Result<LinearRole, Fail> {
    let name = c.kernel.name;
    match mode {
        Mode::Apex => {
            if contains_any(name, LINEAR_GEMM) {
                Ok(LinearRole::Gemm)
            } else if LINEAR_BIAS_APEX.contains(&name) {
                Ok(LinearRole::Bias)
            } else {
                Err(Fail::new(format!(
                    "kernel '{name}' under linear is neither a GEMM nor a bias kernel"
                )))
            }
        }
        Mode::Fixed => {
            if name.contains("splitKreduce") || name.contains("reduce_1Block") {
                Ok(LinearRole::Reduce)
            } else if contains_any(
                name,
                &[
                    "gemm",
                    "gemv",
                    "dot_kernel",
                    "cutlass",
                    "nvjet",
                    "xmma",
                    "gmma",
                ],
            ) || tc::uses_tensor_cores(name, c.kernel.long_name)
            {
                Ok(LinearRole::Gemm)
            } else if contains_any(name, LINEAR_BIAS)
                || name.contains("elementwise")
                || name.contains("reduce")
            {
                Ok(LinearRole::Bias)
            } else {
                // [B8]: an unknown kernel under a GEMM op is the GEMM
                Ok(LinearRole::Gemm)
            }
        }
    }
}

/// `F.linear(x, w[, b])`: `x = [..., k]`, `w = [m, k]`, `n = x[:-1]`.
pub(super) fn linear<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch.nn.functional"])?;
    let (x, w) = match mode {
        Mode::Apex => {
            let args = c.args;
            match args.len() {
                2 => {}
                3 => {
                    ensure!(
                        args[0].ty == "tensor" && args[1].ty == "tensor",
                        "linear inputs are not tensors"
                    );
                    match args[2].ty.as_str() {
                        "tensor" => {
                            ensure!(
                                args[2].shape.as_ref().is_some_and(|s| s.len() == 1),
                                "bias is not 1-D"
                            )
                        }
                        "NoneType" => {}
                        other => return Err(Fail::new(format!("bias of type '{other}'"))),
                    }
                }
                n => return Err(Fail::new(format!("linear with {n} arguments"))),
            }
            (&args[0], &args[1])
        }
        Mode::Fixed => {
            let v = first_n(c.positional(), 2, mode, "linear")?;
            (v[0], v[1])
        }
    };
    let (xs, tx) = tensor(mode, x)?;
    let (ws, tw) = tensor(mode, w)?;
    let (m, kw) = matrix(ws)?;
    let Some((&k, rows)) = xs.split_last() else {
        return Err(Fail::new("linear input has no dimensions"));
    };
    ensure!(k == kw, "linear: input features {k} vs weight {ws:?}");
    if mode.is_apex() {
        if c.args.len() == 3 && c.args[2].ty == "tensor" {
            let bn = c.args[2].shape.as_ref().and_then(|s| s.first().copied());
            ensure!(bn == Some(m), "bias length {bn:?} vs {m}");
        }
        ensure!(tx == tw, "dtypes differ: {tx}, {tw}");
    }
    let role = linear_role(c, mode)?;
    let e = esize(mode, tx)?;
    let t = tname(mode, tx)?;
    // N prints as an int when x is 2-D, else as the tuple of leading dims
    let n_txt = match rows {
        [one] => one.to_string(),
        _ => Tuple(rows).to_string(),
    };
    let nn = numel(rows)?;
    let (mi, ki) = (i128::from(m), i128::from(k));
    let fprop = c.dir.is_fprop() || (!mode.is_apex() && c.dir == Direction::Other);
    if mode.is_apex() && c.dir == Direction::Other {
        return Err(Fail::new("linear: direction is neither fprop nor bprop"));
    }
    let gemm_flops = prod(&[mi, nn, ki, 2])?;
    let gemm_bytes = |e: i128| -> Result<i128, Fail> {
        match mode {
            // [B24]: `m*n + m*k + n*k * e` (operator precedence)
            Mode::Apex => sum(&[prod(&[mi, nn])?, prod(&[mi, ki])?, prod(&[nn, ki, e])?]),
            Mode::Fixed => prod(&[
                e,
                sum(&[prod(&[mi, nn])?, prod(&[mi, ki])?, prod(&[nn, ki])?])?,
            ]),
        }
    };
    let gemm_params = || -> ParamText {
        let p = Params::new();
        let p = if fprop {
            p.kv("M", m).kv("N", &n_txt).kv("K", k)
        } else if c.sub == 0 {
            p.kv("M", k).kv("N", &n_txt).kv("K", m)
        } else if c.sub == 1 {
            p.kv("M", k).kv("N", m).kv("K", &n_txt)
        } else {
            p.shape("X", xs).shape("W", ws)
        };
        p.ty(t).finish()
    };
    let (op, params, flops, bytes, tc) = match role {
        LinearRole::Gemm => {
            let (f, b) = if fprop || c.sub <= 1 {
                (
                    Some(Num::Int(gemm_flops)),
                    e.map(gemm_bytes).transpose()?.map(Num::Int),
                )
            } else {
                // further backward kernels: PyProf counts nothing
                (int(0), int(0))
            };
            let tc = gemm_tc(c, mode, APEX_LINEAR);
            ("linear", gemm_params(), f, b, tc)
        }
        LinearRole::Bias | LinearRole::Reduce => {
            let mn = prod(&[mi, nn])?;
            let b = e.map(|e| prod(&[2, mn, e])).transpose()?.map(Num::Int);
            if role == LinearRole::Bias {
                let params = Params::new().kv("M", m).kv("N", &n_txt).ty(t).finish();
                ("bias", params, int(mn), b, Tc::NotApplicable)
            } else {
                (
                    "linear",
                    gemm_params(),
                    int(mn),
                    b,
                    gemm_tc(c, mode, APEX_LINEAR),
                )
            }
        }
    };
    let mut out = est(params, flops, bytes, tc);
    out.op = Some(op);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::*;

    #[test]
    fn linear_worked_example() {
        // pyprof-semantics.md §8 "Linear fp16" (HEAD == apex except tc)
        let m = marker(
            "torch.nn.functional",
            "linear",
            &[
                t(&[32, 1024], "float16"),
                t(&[4096, 1024], "float16"),
                t(&[4096], "float16"),
            ],
        );
        let r = apex(&m, "fprop", 0, "volta_h884gemm_64x64_ldg8_nn");
        assert_eq!(
            row(&r),
            "linear|M=4096,N=32,K=1024,fp16,|1|268435456|4390912"
        );
        let r = apex(&m, "fprop", 1, "elementwise_kernel");
        assert_eq!(row(&r), "bias|M=4096,N=32,fp16,|-|131072|524288");
        let r = apex(&m, "bprop", 0, "volta_h884gemm_64x64_ldg8_nt");
        assert_eq!(
            row(&r),
            "linear|M=1024,N=32,K=4096,fp16,|1|268435456|4390912"
        );
        let r = apex(&m, "bprop", 1, "volta_h884gemm_64x64_ldg8_tn");
        assert_eq!(
            row(&r),
            "linear|M=1024,N=4096,K=32,fp16,|1|268435456|4390912"
        );
        let r = apex(&m, "bprop", 2, "reduce_kernel");
        assert_eq!(row(&r), "bias|M=4096,N=32,fp16,|-|131072|524288");
        // [B24] fixed: e·(mn + mk + nk)
        let r = fixed(&m, "fprop", 0, "volta_h884gemm_64x64_ldg8_nn");
        assert_eq!(
            row(&r),
            "linear|M=4096,N=32,K=1024,fp16,|1|268435456|8716288"
        );
    }

    #[test]
    fn linear_3d_and_late_bprop() {
        let m = marker(
            "torch.nn.functional",
            "linear",
            &[
                t(&[4, 32, 1024], "float16"),
                t(&[4096, 1024], "float16"),
                t(&[4096], "float16"),
            ],
        );
        let r = apex(&m, "fprop", 0, "volta_h884gemm_64x64_ldg8_nn");
        assert_eq!(
            row(&r),
            "linear|M=4096,N=(4,32),K=1024,fp16,|1|1073741824|4980736"
        );
        let r = apex(&m, "bprop", 3, "volta_h884gemm_64x64_ldg8_nn");
        assert_eq!(row(&r), "linear|X=(4,32,1024),W=(4096,1024),fp16,|1|0|0");
    }

    #[test]
    fn linear_kernel_names() {
        let m = marker(
            "torch.nn.functional",
            "linear",
            &[t(&[32, 1024], "float16"), t(&[4096, 1024], "float16")],
        );
        // apex: tc only for 884gemm; unknown names abort
        assert_eq!(
            row(&apex(&m, "fprop", 0, "turing_h1688gemm_128x128_ldg8_tn")),
            "linear|M=4096,N=32,K=1024,fp16,|0|268435456|4390912"
        );
        for k in [
            "cutlass::Kernel",
            "vectorized_elementwise_kernel",
            "kernelPointwiseApply2",
            "nvjet_hsh_64x8_2x1_v_bz_TNT",
        ] {
            assert!(aborted(&apex(&m, "fprop", 0, k)), "{k}");
        }
        // default: [B8] the long name decides; bias by substring; unknown = GEMM
        assert_eq!(
            row(&fixed(&m, "fprop", 0, "nvjet_hsh_64x8_2x1_v_bz_TNT")),
            "linear|M=4096,N=32,K=1024,fp16,|1|268435456|8716288"
        );
        assert_eq!(
            row(&fixed(&m, "fprop", 1, "vectorized_elementwise_kernel")),
            "bias|M=4096,N=32,fp16,|-|131072|524288"
        );
        assert_eq!(
            row(&fixed(&m, "fprop", 0, "Kernel2")),
            "linear|M=4096,N=32,K=1024,fp16,|0|268435456|8716288"
        );
        // [B22]: a split-K reduction is not charged the GEMM
        assert_eq!(
            row(&fixed(&m, "fprop", 1, "splitKreduce_kernel")),
            "linear|M=4096,N=32,K=1024,fp16,|0|131072|524288"
        );
        assert_eq!(
            row(&apex(&m, "fprop", 1, "splitKreduce_kernel")),
            "linear|M=4096,N=32,K=1024,fp16,|0|268435456|4390912"
        );
    }

    #[test]
    fn addmm_mm_bmm() {
        let m = marker(
            "torch",
            "addmm",
            &[
                t(&[1024], "float32"),
                t(&[32, 512], "float32"),
                t(&[512, 1024], "float32"),
                v("beta", "float", f(1.0)),
                v("alpha", "float", f(1.0)),
            ],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "volta_sgemm_128x64_nn")),
            "addmm|M=1024,N=32,K=512,fp32,|0|33554432|2293760"
        );
        let m = marker(
            "torch",
            "mm",
            &[t(&[64, 256], "float32"), t(&[256, 128], "float32")],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "volta_sgemm_128x64_nn")),
            "mm|M=128,N=64,K=256,fp32,|0|4194304|229376"
        );
        let m = marker(
            "torch",
            "bmm",
            &[t(&[16, 128, 64], "float16"), t(&[16, 64, 128], "float16")],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "volta_h884gemm_128x128_ldg8_nn")),
            "bmm|B=16,M=128,N=128,K=64,fp16,|1|33554432|1048576"
        );
        // apex tc: Ampere names are 0; default: 1
        let m = marker(
            "torch",
            "mm",
            &[t(&[64, 256], "float16"), t(&[256, 128], "float16")],
        );
        assert_eq!(
            apex(&m, "fprop", 0, "ampere_h16816gemm_128x128_ldg8_tn")
                .tc
                .as_str(),
            "0"
        );
        assert_eq!(
            fixed(&m, "fprop", 0, "ampere_h16816gemm_128x128_ldg8_tn")
                .tc
                .as_str(),
            "1"
        );
        assert_eq!(
            apex(&m, "fprop", 0, "turing_h1688gemm_128x128_ldg8_tn")
                .tc
                .as_str(),
            "1"
        );
        // [B22] default: the split-K reduce kernel is not the GEMM
        assert_eq!(
            row(&fixed(&m, "fprop", 1, "splitKreduce_kernel")),
            "mm|M=128,N=64,K=256,fp16,|0|8192|32768"
        );
        // bf16: apex aborts, default knows it
        let m = marker(
            "torch",
            "mm",
            &[t(&[64, 256], "bfloat16"), t(&[256, 128], "bfloat16")],
        );
        assert!(aborted(&apex(&m, "fprop", 0, "volta_sgemm_128x64_nn")));
        assert_eq!(
            row(&fixed(&m, "fprop", 0, "sm90_xmma_gemm_bf16bf16")),
            "mm|M=128,N=64,K=256,bf16,|1|4194304|114688"
        );
    }

    #[test]
    fn matmul_cases() {
        let m = marker(
            "torch",
            "matmul",
            &[t(&[8, 32, 64], "float16"), t(&[64, 128], "float16")],
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "volta_h884gemm_64x64_ldg8_nn")),
            "matmul|A=(8,32,64),B=(64,128),fp16,|1|4194304|28672"
        );
        // [B23] fixed: the batch is in the bytes
        assert_eq!(
            row(&fixed(&m, "fprop", 0, "volta_h884gemm_64x64_ldg8_nn")),
            "matmul|A=(8,32,64),B=(64,128),fp16,|1|4194304|229376"
        );
        assert_eq!(
            row(&apex(&m, "fprop", 0, "elementwise_kernel")),
            "matmul|A=(8,32,64),B=(64,128),fp16,|-|0|65536"
        );
        // [B8] apex aborts on an unknown kernel, default treats it as the GEMM
        assert!(aborted(&apex(
            &m,
            "fprop",
            0,
            "nvjet_hsh_64x8_2x1_v_bz_TNT"
        )));
        assert_eq!(
            fixed(&m, "fprop", 0, "nvjet_hsh_64x8_2x1_v_bz_TNT").flops,
            int(4194304)
        );
        // [B39] substring in default mode
        assert_eq!(
            row(&fixed(&m, "fprop", 0, "vectorized_elementwise_kernel")),
            "matmul|A=(8,32,64),B=(64,128),fp16,|-|0|65536"
        );
        assert_eq!(apex(&m, "fprop", 0, "dot_kernel").tc.as_str(), "-");
        let m = marker("torch", "matmul", &[t(&[5], "float32"), t(&[5], "float32")]);
        assert_eq!(apex(&m, "fprop", 0, "dot_kernel").flops, int(10));
        let m = marker(
            "torch",
            "matmul",
            &[t(&[2, 1, 3, 4], "float32"), t(&[5, 4, 6], "float32")],
        );
        assert_eq!(apex(&m, "fprop", 0, "gemm").flops, int(2 * 10 * 3 * 6 * 4));
        let m = marker(
            "torch",
            "matmul",
            &[t(&[3, 4], "float32"), t(&[5, 6], "float32")],
        );
        assert!(aborted(&apex(&m, "fprop", 0, "gemm")));
        assert!(fixed(&m, "fprop", 0, "gemm").flops.is_none());
    }
}
