//! Convolution (PyProf `conv.py`): `F.conv1d`, `F.conv2d`.
//!
//! apex computes with Python true division, so its FLOPs and bytes are
//! floats (`24920064.0`); they are reproduced with [`Num`] in the same
//! order of operations. The default mode uses integers (B35), accepts
//! string padding (B25), recognises modern cuDNN kernel names (B26) and
//! reports tc 0 rather than `-` for non-tensor-core kernels (B27).

use rprof_model::pylit::Value;

use super::{Fail, Res, ensure, esize, est, int, need_module, prod, py_num, sum, tensor, tname};
use crate::call::OpCall;
use crate::estimate::{Mode, Tc};
use crate::marker::Arg;
use crate::num::Num;
use crate::params::Params;
use crate::tc::{self, APEX_CONV, contains_any};

/// Helper kernels that do no convolution math.
const AUX: &[&str] = &[
    "nchwToNhwc",
    "nhwcToNchw",
    "OffsetsKernel",
    "generateWinogradTilesKernel",
    "winogradWgradData",
    "winogradWgradOutput",
    "winogradWgradDelta",
    "compute_gemm_pointers",
    "flip_filter",
    "fft2d_r2c_",
    "fft2d_c2r_",
    "fft1d_r2c",
    "fft1d_c2r",
    "scaleTensor_kernel",
];

/// Kernels that do the convolution (apex at 753c427a, = PyProf HEAD).
const CONV: &[&str] = &[
    "_s884cudnn_",
    "_s1688cudnn_",
    "_scudnn_",
    "2d_grouped_direct_kernel",
    "cudnn::detail::implicit_convolve_sgemm",
    "cudnn::detail::dgrad2d_alg1_1",
    "cudnn::detail::wgrad_alg0_engine",
    "cudnn::detail::dgrad_engine",
    "dgrad_1x1_stride_2x2",
    "spatialDepthwiseConvolutionUpdateOutput",
    "winograd3x3Kernel",
    "_sgemm_",
    "fermiPlusCgemmLDS128_batched",
    "_gcgemm_",
];

/// B26: name parts of today's convolution kernels.
const CONV_MODERN: &[&str] = &["conv", "Conv", "implicit_gemm", "fprop", "dgrad", "wgrad"];

/// What a kernel under a convolution does (default-mode names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConvKernel {
    /// Layout, offset, transform kernels: no convolution math.
    Aux,
    /// The bias gradient.
    Bias,
    /// The convolution itself.
    Math,
    /// Anything else (PyProf counts nothing).
    Other,
}

/// The default mode's reading of a kernel under a convolution, in the
/// order [`conv`] tests the names; stock markers also take any GEMM-named
/// kernel as the math (winograd and FFT paths).
pub(crate) fn conv_kernel(name: &str, long: &str) -> ConvKernel {
    if contains_any(name, AUX) {
        ConvKernel::Aux
    } else if contains_any(name, CONV)
        || contains_any(name, CONV_MODERN)
        || contains_any(long, CONV_MODERN)
        || name.contains("gemm")
        || name.contains("Gemm")
    {
        ConvKernel::Math
    } else if name.contains("calc_bias_diff") {
        ConvKernel::Bias
    } else {
        ConvKernel::Other
    }
}

/// A stride/padding/dilation/groups record: PyProf type name and value.
#[derive(Clone, Copy)]
struct Setting<'a> {
    ty: &'a str,
    value: Option<&'a Value>,
}

static ONE: Value = Value::Int(1);
static ZERO: Value = Value::Int(0);

/// apex's lookup: positional index `i` if present and unnamed, else the
/// named record, else the default.
fn pick<'a>(args: &'a [Arg], i: usize, name: &str, default: &'static Value) -> Setting<'a> {
    if let Some(a) = args.get(i).filter(|a| a.is_positional()) {
        return Setting {
            ty: &a.ty,
            value: a.value.as_ref(),
        };
    }
    if let Some(a) = args.iter().find(|a| a.name == name) {
        return Setting {
            ty: &a.ty,
            value: a.value.as_ref(),
        };
    }
    Setting {
        ty: "int",
        value: Some(default),
    }
}

fn is_scalar_type(ty: &str) -> bool {
    ty == "float" || ty == "int"
}

/// The two values of a setting: a scalar used for both, or a `(h, w)` tuple.
fn pair(s: Setting<'_>, what: &str) -> Result<(Num, Num), Fail> {
    if is_scalar_type(s.ty) {
        let v = py_num(s.value).ok_or_else(|| Fail::new(format!("{what} is not a number")))?;
        return Ok((v, v));
    }
    ensure!(s.ty == "tuple", "{what} of type '{}'", s.ty);
    match s.value.and_then(Value::as_seq) {
        Some([h, w]) => match (py_num(Some(h)), py_num(Some(w))) {
            (Some(h), Some(w)) => Ok((h, w)),
            _ => Err(Fail::new(format!("{what} is not numeric"))),
        },
        _ => Err(Fail::new(format!("{what} is not a pair"))),
    }
}

/// conv1d's setting: the scalar, or the first item of a sequence.
fn first(s: Setting<'_>, what: &str) -> Result<Num, Fail> {
    let v = if is_scalar_type(s.ty) {
        s.value
    } else {
        s.value.and_then(Value::as_seq).and_then(<[Value]>::first)
    };
    py_num(v).ok_or_else(|| Fail::new(format!("{what} is not a number")))
}

/// The conv dimensions, as apex holds them (Python numbers).
struct Dims {
    n: Num,
    c: Num,
    h: Num,
    w: Num,
    k: Num,
    p: Num,
    q: Num,
    r: Num,
    s: Num,
    ph: Num,
    pw: Num,
    u: Num,
    v: Num,
    dh: Num,
    dw: Num,
    g: Num,
}

fn n(x: i64) -> Num {
    Num::Int(i128::from(x))
}

/// Python's `int(1 + (x + 2*p - ((k-1)*d + 1)) / s)`.
fn out_size(x: Num, p: Num, k: Num, d: Num, s: Num) -> Result<Num, Fail> {
    let of = || Fail::new("convolution output size overflows");
    let span = k
        .checked_sub(Num::Int(1))
        .and_then(|a| a.checked_mul(d))
        .and_then(|a| a.checked_add(Num::Int(1)))
        .ok_or_else(of)?;
    let num = Num::Int(2)
        .checked_mul(p)
        .and_then(|pp| x.checked_add(pp))
        .and_then(|a| a.checked_sub(span))
        .ok_or_else(of)?;
    let q = num
        .truediv(s)
        .ok_or_else(|| Fail::new("convolution stride is 0"))?
        .checked_add(Num::Int(1))
        .ok_or_else(of)?;
    q.trunc()
        .map(Num::Int)
        .ok_or_else(|| Fail::new("convolution output size is not finite"))
}

/// Default mode: an integer setting.
fn int_of(x: Num, what: &str) -> Result<i128, Fail> {
    match x {
        Num::Int(i) => Ok(i),
        Num::Float(f) if f.fract() == 0.0 && f.is_finite() => Ok(f as i128),
        Num::Float(f) => Err(Fail::new(format!("{what} {f} is not an integer"))),
    }
}

fn dims<'a>(c: &OpCall<'a>, mode: Mode) -> Result<(Dims, &'a str), Fail> {
    let args = c.args;
    if mode.is_apex() {
        ensure!(
            (2..=7).contains(&args.len()),
            "conv with {} arguments",
            args.len()
        );
    } else {
        ensure!(args.len() >= 2, "conv with {} arguments", args.len());
    }
    let (xs, tx) = tensor(mode, &args[0])?;
    let (ws, tw) = tensor(mode, &args[1])?;
    if mode.is_apex() {
        ensure!(tx == tw, "dtypes differ: {tx}, {tw}");
    }
    let stride = pick(args, 3, "stride", &ONE);
    let padding = pick(args, 4, "padding", &ZERO);
    let dilation = pick(args, 5, "dilation", &ONE);
    let groups = pick(args, 6, "groups", &ONE);
    let g = py_num(groups.value).ok_or_else(|| Fail::new("groups is not a number"))?;
    let is_1d = c.op == "conv1d" || (!mode.is_apex() && xs.len() == 3);
    let d = if is_1d {
        let ([nn, c1, w], [k, c2, s]) = (xs, ws) else {
            return Err(Fail::new(format!("conv1d shapes {xs:?}, {ws:?}")));
        };
        let (p, st, dl) = match padding_text(padding) {
            Some(text) if !mode.is_apex() => {
                let st = first(stride, "stride")?;
                let dl = first(dilation, "dilation")?;
                (same_or_valid(text, *w, *s, dl)?, st, dl)
            }
            _ => (
                first(padding, "padding")?,
                first(stride, "stride")?,
                first(dilation, "dilation")?,
            ),
        };
        if mode.is_apex() {
            ensure!(c1 == c2, "conv1d channels {c1} vs {c2}");
            ensure!(g == Num::Int(1), "conv1d with groups {g}");
        } else {
            let gi = int_of(g, "groups")?;
            ensure!(
                gi >= 1 && Some(i128::from(*c1)) == i128::from(*c2).checked_mul(gi),
                "conv1d channels {c1} vs {c2}·{gi}"
            );
        }
        let q = match padding_text(padding) {
            Some("same") if !mode.is_apex() => ceil_div(n(*w), st)?,
            _ => out_size(n(*w), p, n(*s), dl, st)?,
        };
        if *w == 1 {
            ensure!(
                q == Num::Int(1),
                "conv1d output width {q} for input width 1"
            );
        }
        Dims {
            n: n(*nn),
            c: n(*c1),
            h: Num::Int(1),
            w: n(*w),
            k: n(*k),
            p: Num::Int(1),
            q,
            r: Num::Int(1),
            s: n(*s),
            ph: Num::Int(0),
            pw: p,
            u: Num::Int(1),
            v: st,
            dh: Num::Int(1),
            dw: dl,
            g,
        }
    } else {
        let ([nn, c1, h, w], [k, c2, r, s]) = (xs, ws) else {
            return Err(Fail::new(format!("conv2d shapes {xs:?}, {ws:?}")));
        };
        let (sh, sw) = pair(stride, "stride")?;
        let (dh, dw) = pair(dilation, "dilation")?;
        let text = padding_text(padding).filter(|_| !mode.is_apex());
        let (ph, pw) = match text {
            Some(t) => (same_or_valid(t, *h, *r, dh)?, same_or_valid(t, *w, *s, dw)?),
            None => pair(padding, "padding")?,
        };
        let at_least_one = matches!(
            g.as_f64().partial_cmp(&1.0),
            Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
        );
        ensure!(at_least_one, "groups {g} < 1");
        let c2g = n(*c2)
            .checked_mul(g)
            .ok_or_else(|| Fail::new("channels overflow"))?;
        ensure!(
            n(*c1).as_f64() == c2g.as_f64(),
            "conv2d channels {c1} vs {c2}·{g}"
        );
        let (p, q) = match text {
            Some("same") => (ceil_div(n(*h), sh)?, ceil_div(n(*w), sw)?),
            _ => (
                out_size(n(*h), ph, n(*r), dh, sh)?,
                out_size(n(*w), pw, n(*s), dw, sw)?,
            ),
        };
        if *h == 1 {
            ensure!(
                p == Num::Int(1),
                "conv2d output height {p} for input height 1"
            );
        }
        if *w == 1 {
            ensure!(
                q == Num::Int(1),
                "conv2d output width {q} for input width 1"
            );
        }
        Dims {
            n: n(*nn),
            c: n(*c1),
            h: n(*h),
            w: n(*w),
            k: n(*k),
            p,
            q,
            r: n(*r),
            s: n(*s),
            ph,
            pw,
            u: sh,
            v: sw,
            dh,
            dw,
            g,
        }
    };
    Ok((d, tx))
}

/// `padding='same'` / `'valid'` (B25).
fn padding_text(s: Setting<'_>) -> Option<&str> {
    match s.value {
        Some(Value::Str(t)) if t == "same" || t == "valid" => Some(t),
        _ => None,
    }
}

/// The padding of one side for `same` (total `(k-1)·d`, split; only its
/// printed value uses this) or `valid` (0).
fn same_or_valid(text: &str, _x: i64, k: i64, d: Num) -> Result<Num, Fail> {
    if text == "valid" {
        return Ok(Num::Int(0));
    }
    let d = int_of(d, "dilation")?;
    let span = prod(&[i128::from(k) - 1, d])?;
    Ok(Num::Int(span / 2))
}

/// `ceil(x / s)` for `padding='same'`.
fn ceil_div(x: Num, s: Num) -> Result<Num, Fail> {
    let (x, s) = (int_of(x, "size")?, int_of(s, "stride")?);
    ensure!(s > 0, "stride {s}");
    Ok(Num::Int(sum(&[x, s, -1])? / s))
}

/// Python-number arithmetic for apex's float formulas, left to right.
fn py_prod(xs: &[Num]) -> Result<Num, Fail> {
    xs.iter()
        .try_fold(Num::Int(1), |acc, x| acc.checked_mul(*x))
        .ok_or_else(|| Fail::new("convolution cost overflows"))
}

fn py_div(a: Num, b: Num) -> Result<Num, Fail> {
    a.truediv(b)
        .ok_or_else(|| Fail::new("division by zero groups"))
}

/// apex's `conv_bytes_flops`: `F = 2NKPQCRS/g`,
/// `B = (NCHW + KCRS/g + NKPQ)·e`, true divisions.
fn apex_cost(d: &Dims, c: Num, k: Num, g: Num, e: i128) -> Result<(Num, Num), Fail> {
    let f = py_div(py_prod(&[Num::Int(2), d.n, k, d.p, d.q, c, d.r, d.s])?, g)?;
    let a = py_prod(&[d.n, c, d.h, d.w])?;
    let b = py_div(py_prod(&[k, c, d.r, d.s])?, g)?;
    let o = py_prod(&[d.n, k, d.p, d.q])?;
    let elems = a
        .checked_add(b)
        .and_then(|x| x.checked_add(o))
        .ok_or_else(|| Fail::new("overflow"))?;
    let bytes = elems
        .checked_mul(Num::Int(e))
        .ok_or_else(|| Fail::new("overflow"))?;
    Ok((f, bytes))
}

/// The default mode's integer cost.
fn fixed_cost(
    d: &Dims,
    c: i128,
    k: i128,
    g: i128,
    e: Option<i128>,
) -> Result<(Option<Num>, Option<Num>), Fail> {
    let ints = |x: Num, w: &str| int_of(x, w);
    let (nn, h, w, p, q, r, s) = (
        ints(d.n, "N")?,
        ints(d.h, "H")?,
        ints(d.w, "W")?,
        ints(d.p, "P")?,
        ints(d.q, "Q")?,
        ints(d.r, "R")?,
        ints(d.s, "S")?,
    );
    ensure!(g >= 1, "groups {g}");
    let f = prod(&[2, nn, k, p, q, c, r, s])? / g;
    let elems = sum(&[
        prod(&[nn, c, h, w])?,
        prod(&[k, c, r, s])? / g,
        prod(&[nn, k, p, q])?,
    ])?;
    let bytes = e.map(|e| prod(&[elems, e])).transpose()?.map(Num::Int);
    Ok((int(f), bytes))
}

/// `F.conv1d` / `F.conv2d`.
pub(super) fn conv<'a>(c: &OpCall<'a>, mode: Mode) -> Res {
    need_module(c, mode, &["torch.nn.functional"])?;
    let (d, dtype) = dims(c, mode)?;
    let e = esize(mode, dtype)?;
    let params = Params::new()
        .num("N", d.n)
        .num("C", d.c)
        .num("H", d.h)
        .num("W", d.w)
        .num("K", d.k)
        .num("P", d.p)
        .num("Q", d.q)
        .num("R", d.r)
        .num("S", d.s)
        .num("ph", d.ph)
        .num("pw", d.pw)
        .num("U", d.u)
        .num("V", d.v)
        .num("dh", d.dh)
        .num("dw", d.dw)
        .num("g", d.g)
        .ty(tname(mode, dtype)?)
        .finish();
    let name = c.kernel.name;
    let long = c.kernel.long_name;
    let is_conv = contains_any(name, CONV)
        || (!mode.is_apex()
            && (contains_any(name, CONV_MODERN) || contains_any(long, CONV_MODERN)));
    let one_kernel = d.g == Num::Int(1)
        || name.contains("2d_grouped_direct_kernel")
        || name.contains("spatialDepthwiseConvolutionUpdateOutput");
    let (flops, bytes) = if contains_any(name, AUX) {
        (int(0), int(0))
    } else if is_conv {
        match mode {
            Mode::Apex => {
                let e = e.ok_or_else(|| Fail::new("unknown dtype"))?;
                let (f, b) = if one_kernel {
                    apex_cost(&d, d.c, d.k, d.g, e)?
                } else {
                    // a kernel per group
                    apex_cost(&d, py_div(d.c, d.g)?, py_div(d.k, d.g)?, Num::Int(1), e)?
                };
                (Some(f), Some(b))
            }
            Mode::Fixed => {
                let (cc, kk, g) = (int_of(d.c, "C")?, int_of(d.k, "K")?, int_of(d.g, "groups")?);
                ensure!(g >= 1, "groups {g}");
                if one_kernel {
                    fixed_cost(&d, cc, kk, g, e)?
                } else {
                    fixed_cost(&d, cc / g, kk / g, 1, e)?
                }
            }
        }
    } else if name.contains("calc_bias_diff") {
        let nkpq = match mode {
            Mode::Apex => py_prod(&[d.n, d.k, d.p, d.q])?,
            Mode::Fixed => Num::Int(prod(&[
                int_of(d.n, "N")?,
                int_of(d.k, "K")?,
                int_of(d.p, "P")?,
                int_of(d.q, "Q")?,
            ])?),
        };
        let b = match e {
            Some(e) => Some(py_prod(&[Num::Int(2), nkpq, Num::Int(e)])?),
            None => None,
        };
        (Some(nkpq), b)
    } else {
        (int(0), int(0))
    };
    let tc = match mode {
        Mode::Apex => {
            if contains_any(name, APEX_CONV) {
                Tc::Yes
            } else {
                Tc::NotApplicable
            }
        }
        Mode::Fixed => Tc::from_bool(tc::uses_tensor_cores(name, long)),
    };
    Ok(est(params, flops, bytes, tc))
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::*;

    fn conv2d(
        dtype: &str,
        x: &[i64],
        w: &[i64],
        stride: (i64, i64),
        pad: (i64, i64),
        groups: i64,
    ) -> crate::marker::Marker {
        marker(
            "torch.nn.functional",
            "conv2d",
            &[
                t(x, dtype),
                t(w, dtype),
                v("", "NoneType", rprof_model::pylit::Value::None),
                v("", "tuple", tup(&[stride.0, stride.1])),
                v("", "tuple", tup(&[pad.0, pad.1])),
                v("", "tuple", tup(&[1, 1])),
                v("", "int", i(groups)),
            ],
        )
    }

    #[test]
    fn worked_example_fp16() {
        let m = conv2d(
            "float16",
            &[32, 64, 56, 56],
            &[128, 64, 3, 3],
            (2, 2),
            (1, 1),
            1,
        );
        let r = apex(
            &m,
            "fprop",
            0,
            "volta_fp16_s884cudnn_fp16_256x64_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1",
        );
        assert_eq!(
            row(&r),
            "conv2d|N=32,C=64,H=56,W=56,K=128,P=28,Q=28,R=3,S=3,ph=1,pw=1,U=2,V=2,dh=1,dw=1,g=1,fp16,|1|3699376128.0|19415040.0"
        );
        // [B35] integers by default
        let r = fixed(
            &m,
            "fprop",
            0,
            "volta_fp16_s884cudnn_fp16_256x64_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1",
        );
        assert_eq!(fb(&r), "3699376128/19415040");
    }

    #[test]
    fn depthwise_and_bias() {
        let m = conv2d(
            "float32",
            &[32, 64, 56, 56],
            &[64, 1, 3, 3],
            (1, 1),
            (1, 1),
            64,
        );
        assert_eq!(
            fb(&apex(
                &m,
                "fprop",
                0,
                "cudnn::detail::implicit_convolve_sgemm"
            )),
            "1806336.0/802852.0"
        );
        assert_eq!(
            fb(&apex(&m, "fprop", 0, "2d_grouped_direct_kernel")),
            "115605504.0/51382528.0"
        );
        let m = marker(
            "torch.nn.functional",
            "conv1d",
            &[
                t(&[8, 16, 100], "float32"),
                t(&[32, 16, 5], "float32"),
                v("", "NoneType", rprof_model::pylit::Value::None),
                v("", "int", i(2)),
                v("", "int", i(1)),
            ],
        );
        let r = apex(&m, "fprop", 0, "cudnn::detail::implicit_convolve_sgemm");
        assert_eq!(
            row(&r),
            "conv1d|N=8,C=16,H=1,W=100,K=32,P=1,Q=49,R=1,S=5,ph=0,pw=1,U=1,V=2,dh=1,dw=1,g=1,fp32,|-|2007040.0|111616.0"
        );
        assert_eq!(fb(&apex(&m, "bprop", 0, "calc_bias_diff")), "12544/100352");
        // grouped conv1d: apex asserts groups == 1, the default mode costs it
        let g = marker(
            "torch.nn.functional",
            "conv1d",
            &[
                t(&[8, 16, 100], "float32"),
                t(&[32, 4, 5], "float32"),
                v("groups", "int", i(4)),
            ],
        );
        assert!(aborted(&apex(
            &g,
            "fprop",
            0,
            "cudnn::detail::implicit_convolve_sgemm"
        )));
        assert_eq!(
            fb(&fixed(&g, "fprop", 0, "2d_grouped_direct_kernel")),
            "983040/152064"
        );
        // [B27] 0 rather than -
        assert_eq!(
            fixed(&m, "fprop", 0, "cudnn::detail::implicit_convolve_sgemm")
                .tc
                .as_str(),
            "0"
        );
    }

    #[test]
    fn modern_kernels_and_string_padding() {
        let m = conv2d(
            "float16",
            &[32, 64, 56, 56],
            &[128, 64, 3, 3],
            (2, 2),
            (1, 1),
            1,
        );
        // [B26]
        let k = "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw";
        assert_eq!(fb(&apex(&m, "fprop", 0, k)), "0/0");
        assert_eq!(fb(&fixed(&m, "fprop", 0, k)), "3699376128/19415040");
        assert_eq!(fixed(&m, "fprop", 0, k).tc.as_str(), "1");
        assert_eq!(
            apex(&m, "fprop", 0, "dgrad_1x1_stride_2x2").tc.as_str(),
            "-"
        );
        // [B25]
        let m = marker(
            "torch.nn.functional",
            "conv2d",
            &[
                t(&[1, 3, 10, 10], "float32"),
                t(&[8, 3, 3, 3], "float32"),
                v("padding", "str", s("same")),
            ],
        );
        assert!(aborted(&apex(&m, "fprop", 0, "_scudnn_")));
        let r = fixed(&m, "fprop", 0, "_scudnn_");
        assert!(
            r.params
                .starts_with("N=1,C=3,H=10,W=10,K=8,P=10,Q=10,R=3,S=3,ph=1,pw=1,"),
            "{}",
            r.params
        );
        assert_eq!(r.flops, int(2 * 8 * 100 * 3 * 9));
    }

    #[test]
    fn iotensor_rows() {
        let m = marker(
            "torch.nn.functional",
            "conv2d",
            &[
                t(&[64, 1, 28, 28], "float32"),
                t(&[32, 1, 3, 3], "float32"),
                t(&[32], "float32"),
                v("", "tuple", tup(&[1, 1])),
                v("", "tuple", tup(&[0, 0])),
                v("", "tuple", tup(&[1, 1])),
                v("", "int", i(1)),
            ],
        );
        // `_sgemm_` is in the convolution list
        assert_eq!(
            fb(&apex(&m, "fprop", 2, "volta_sgemm_128x32_nn")),
            "24920064.0/5739648.0"
        );
        assert_eq!(
            fb(&apex(
                &m,
                "fprop",
                0,
                "cudnn::winograd_nonfused::winogradForwardData4x4"
            )),
            "0/0"
        );
    }
}
