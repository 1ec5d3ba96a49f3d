//! The named rules: one function per PyProf operator class, each written
//! for both modes. A rule returns [`Fail`] where apex.pyprof would raise
//! (an `assert`, a `KeyError`, …): `--compat` then prints apex's "would
//! have aborted" row and the default mode an `na` row; neither stops.

mod aten;
pub(crate) mod blas;
pub(crate) mod conv;
mod misc;
mod pointwise;
mod rnn;

use std::borrow::Cow;

use crate::call::OpCall;
use crate::dtype::Dtype;
use crate::estimate::{Estimate, Mode, Outcome, Tc};
use crate::marker::Arg;
use crate::num::Num;
use crate::params::{ParamText, Params};
use crate::table::{OpSpec, Rule};

/// Why a rule cannot produce numbers (apex.pyprof would have raised).
#[derive(Debug)]
pub(crate) struct Fail(pub Cow<'static, str>);

impl Fail {
    pub(crate) fn new(why: impl Into<Cow<'static, str>>) -> Fail {
        Fail(why.into())
    }
}

pub(crate) type Res = Result<Estimate, Fail>;

/// `ensure!(cond, "why")`: fail with `why` unless `cond`.
macro_rules! ensure {
    ($cond:expr, $($why:tt)+) => {
        if !($cond) {
            return Err($crate::rules::Fail::new(format!($($why)+)));
        }
    };
}
pub(crate) use ensure;

pub(crate) use aten::{ATTENTION_HELPERS, ConvBackwardKernel, conv_backward_kernel};

/// Run the model of `spec` (the fallback model when `None`) on `c`.
pub(crate) fn run<'a>(spec: Option<&'static OpSpec>, c: &OpCall<'a>, mode: Mode) -> Estimate {
    let res = match spec {
        None => misc::foo(c, mode),
        Some(_) if !c.args_complete => {
            Err(Fail::new("an argument record of the marker is unreadable"))
        }
        // apex's classes assert the marker's op (Activation does not)
        Some(spec)
            if mode.is_apex()
                && !matches!(spec.rule, Rule::Activation | Rule::Pointwise { .. })
                && !spec.names.contains(&c.op) =>
        {
            Err(Fail::new(format!(
                "marker op '{}' under a '{}' record",
                c.op,
                spec.names.join("/")
            )))
        }
        Some(spec) => match spec.rule {
            Rule::Linear => blas::linear(c, mode),
            Rule::RnnCell => rnn::rnn_cell(c, mode),
            Rule::Conv => conv::conv(c, mode),
            Rule::Pointwise { .. } => pointwise::pointwise(spec, c, mode),
            Rule::Convert => misc::convert(c, mode),
            Rule::Matmul => blas::matmul(c, mode),
            Rule::Embedding => misc::embedding(c, mode),
            Rule::Sum => misc::sum_op(c, mode),
            Rule::Mean => misc::mean(c, mode),
            Rule::Norm => misc::norm(c, mode),
            Rule::Dropout => misc::dropout(c, mode),
            Rule::Cat => misc::cat(c, mode),
            Rule::Reshape => misc::reshape(c, mode),
            Rule::MaskedScatter => misc::masked_scatter(c, mode),
            Rule::Gather => misc::gather(c, mode),
            Rule::Nonzero => misc::nonzero(c, mode),
            Rule::IndexSelect => misc::index_select(c, mode),
            Rule::MaskedSelect => misc::masked_select(c, mode),
            Rule::Addmm => blas::addmm(c, mode),
            Rule::Mm => blas::mm(c, mode),
            Rule::Bmm => blas::bmm(c, mode),
            Rule::Softmax => misc::softmax(c, mode, false),
            Rule::LogSoftmax => misc::softmax(c, mode, true),
            Rule::MseLoss => misc::mse_loss(c, mode),
            Rule::Adam => misc::adam(c, mode),
            Rule::BatchNorm => misc::batch_norm(c, mode),
            Rule::RandPerm => misc::randperm(c, mode),
            Rule::OneZero => misc::one_zero(c, mode),
            Rule::Fill => misc::fill(c, mode),
            Rule::Full => misc::full(c, mode),
            Rule::Copy => misc::copy(c, mode),
            Rule::Clone => misc::clone_like(c, mode, "clone"),
            Rule::Contiguous => misc::clone_like(c, mode, "contiguous"),
            Rule::Any => misc::any(c, mode),
            Rule::Activation => misc::activation(c, mode),
            Rule::AtenConv => aten::conv(c, mode),
            Rule::AtenConvBackward => aten::conv_backward(c, mode),
            Rule::Attention { layout, backward } => aten::attention(c, mode, layout, backward),
            Rule::LayerNorm => aten::layer_norm(c, mode),
            Rule::FusedAdam => aten::fused_adam(c, mode),
            Rule::Foreach { k, lists } => aten::foreach(c, mode, k, lists),
            Rule::EmbeddingBackward => aten::embedding_backward(c, mode),
            Rule::IndexSelectStock => aten::index_select(c, mode),
        },
    };
    match res {
        Ok(mut e) => {
            if matches!(e.outcome, Outcome::Modelled | Outcome::Estimated(_))
                && (e.flops.is_none() || e.bytes.is_none())
            {
                e.outcome = Outcome::Partial(unknown_reason(c));
            }
            e
        }
        Err(Fail(why)) => match mode {
            Mode::Apex => Estimate::apex_abort(why),
            Mode::Fixed => Estimate {
                op: None,
                params: foo_params(c).unwrap_or_else(|| ParamText::untyped("na=na,")),
                flops: None,
                bytes: None,
                tc: Tc::NotApplicable,
                outcome: Outcome::Partial(why),
            },
        },
    }
}

fn unknown_reason(c: &OpCall<'_>) -> Cow<'static, str> {
    match c
        .args
        .iter()
        .filter_map(|a| a.dtype.as_deref())
        .find(|d| Dtype::parse(d).is_none())
    {
        Some(d) => format!("unknown dtype '{d}'").into(),
        None => "a value could not be computed".into(),
    }
}

/// PyProf's `Foo` params: `T=[shapes],[dtypes]` over every tensor record
/// (a Python list of dtype strings, no trailing comma: B21).
pub(crate) fn foo_params(c: &OpCall<'_>) -> Option<ParamText> {
    let mut shapes: Vec<&[i64]> = Vec::new();
    let mut types = String::from("[");
    for a in c.args.iter().filter(|a| a.ty == "tensor") {
        let (s, t) = a.tensor()?;
        shapes.push(s);
        if types.len() > 1 {
            types.push(',');
        }
        rprof_model::pylit::write_str_repr(&mut types, t);
    }
    types.push(']');
    Some(Params::new().shapes("T", shapes).raw(&types).finish())
}

// ---------------------------------------------------------------- helpers

/// apex asserts the marker's module; the default mode accepts any.
pub(crate) fn need_module(c: &OpCall<'_>, mode: Mode, allowed: &[&str]) -> Result<(), Fail> {
    if mode.is_apex() {
        ensure!(
            allowed.contains(&c.module),
            "module '{}' is not one of {allowed:?} for op '{}'",
            c.module,
            c.op
        );
    }
    Ok(())
}

/// Shape and dtype of a tensor record. The default mode also rejects
/// negative dimensions.
pub(crate) fn tensor(mode: Mode, a: &Arg) -> Result<(&[i64], &str), Fail> {
    let Some((shape, dtype)) = a.tensor() else {
        return Err(Fail::new(format!(
            "argument '{}' of type '{}' is not a tensor",
            a.name, a.ty
        )));
    };
    if !mode.is_apex() {
        ensure!(
            shape.iter().all(|d| *d >= 0),
            "negative dimension in {shape:?}"
        );
    }
    Ok((shape, dtype))
}

/// Element size of `dtype`: apex aborts on a type it does not know, the
/// default mode leaves the size unknown.
pub(crate) fn esize(mode: Mode, dtype: &str) -> Result<Option<i128>, Fail> {
    match mode {
        Mode::Apex => match Dtype::parse_apex(dtype) {
            Some(d) => Ok(Some(i128::from(d.size_bytes()))),
            None => Err(Fail::new(format!("unsupported dtype '{dtype}'"))),
        },
        Mode::Fixed => Ok(Dtype::parse(dtype).map(|d| i128::from(d.size_bytes()))),
    }
}

/// The printed type name: apex's `typeToString`, or in the default mode the
/// raw text of an unknown type.
pub(crate) fn tname(mode: Mode, dtype: &str) -> Result<&str, Fail> {
    match mode {
        Mode::Apex => match Dtype::parse_apex(dtype) {
            Some(d) => Ok(d.name()),
            None => Err(Fail::new(format!("unsupported dtype '{dtype}'"))),
        },
        Mode::Fixed => Ok(match Dtype::parse(dtype) {
            Some(d) => d.name(),
            None => dtype,
        }),
    }
}

/// Product of the dimensions (1 for `()`).
pub(crate) fn numel(shape: &[i64]) -> Result<i128, Fail> {
    shape
        .iter()
        .try_fold(1i128, |acc, d| acc.checked_mul(i128::from(*d)))
        .ok_or_else(|| Fail::new("element count overflows"))
}

/// Checked product.
pub(crate) fn prod(xs: &[i128]) -> Result<i128, Fail> {
    xs.iter()
        .try_fold(1i128, |acc, x| acc.checked_mul(*x))
        .ok_or_else(|| Fail::new("count overflows"))
}

/// `n · e` as a byte count, unknown when `e` is.
pub(crate) fn bytes(n: i128, e: Option<i128>) -> Result<Option<Num>, Fail> {
    match e {
        Some(e) => Ok(Some(Num::Int(prod(&[n, e])?))),
        None => Ok(None),
    }
}

/// Checked sum.
pub(crate) fn sum(xs: &[i128]) -> Result<i128, Fail> {
    xs.iter()
        .try_fold(0i128, |acc, x| acc.checked_add(*x))
        .ok_or_else(|| Fail::new("count overflows"))
}

/// NumPy broadcasting of shapes; `None` when they do not broadcast.
pub(crate) fn broadcast(shapes: &[&[i64]]) -> Option<Vec<i64>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1i64; rank];
    for s in shapes {
        let off = rank - s.len();
        for (i, d) in s.iter().enumerate() {
            let slot = &mut out[off + i];
            if *slot == 1 {
                *slot = *d;
            } else if *d != 1 && *d != *slot {
                return None;
            }
        }
    }
    Some(out)
}

/// A Python scalar record's value as a number (`int`/`float` only).
pub(crate) fn py_num(v: Option<&rprof_model::pylit::Value>) -> Option<Num> {
    use rprof_model::pylit::Value;
    match v? {
        Value::Int(i) => Some(Num::Int(i128::from(*i))),
        Value::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

/// A modelled estimate.
pub(crate) fn est(params: ParamText, flops: Option<Num>, bytes: Option<Num>, tc: Tc) -> Estimate {
    Estimate {
        op: None,
        params,
        flops,
        bytes,
        tc,
        outcome: Outcome::Modelled,
    }
}

/// `Some(Num::Int(v))`.
pub(crate) fn int(v: i128) -> Option<Num> {
    Some(Num::Int(v))
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rprof_model::pylit::Value;

    use super::*;
    use crate::call::{Direction, Kernel};
    use crate::marker::Marker;
    use crate::table::OPS;

    const DTYPES: &[&str] = &[
        "float32",
        "float16",
        "bfloat16",
        "int64",
        "int32",
        "uint8",
        "bool",
        "float64",
        "complex64",
        "float8_e4m3fn",
        "qint8",
        "",
        "weird dtype",
    ];
    const MODULES: &[&str] = &[
        "torch",
        "Tensor",
        "torch.nn.functional",
        "LSTMCell",
        "GRUCell",
        "RNNCell",
        "apex",
        "",
    ];
    const KERNELS: &[&str] = &[
        "volta_sgemm_128x64_nn",
        "volta_h884gemm_64x64_ldg8_nt",
        "elementwise_kernel",
        "reduce_kernel",
        "splitKreduce_kernel",
        "nvjet_hsh_64x8",
        "cutlass::Kernel",
        "_scudnn_",
        "calc_bias_diff",
        "2d_grouped_direct_kernel",
        "nchwToNhwc",
        "dot_kernel",
        "sm80_xmma_fprop_implicit_gemm",
        "x",
        "volta_sgemm_128x64_slicedx_nt",
        "",
        "a_1x2x3_nn",
    ];

    fn dim() -> impl Strategy<Value = i64> {
        prop_oneof![8 => 0i64..70, 1 => Just(-1i64), 1 => Just(i64::MAX), 1 => Just(i64::MIN), 1 => any::<i64>()]
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::None),
            any::<bool>().prop_map(Value::Bool),
            dim().prop_map(Value::Int),
            any::<f64>().prop_map(Value::Float),
            "[a-z]{0,5}".prop_map(Value::Str),
            prop::collection::vec(dim().prop_map(Value::Int), 0..4).prop_map(Value::Tuple),
            prop::collection::vec(dim().prop_map(Value::Int), 0..4).prop_map(Value::List),
        ]
    }

    fn arg() -> impl Strategy<Value = Arg> {
        let name = prop_oneof![4 => Just(String::new()), 1 => "(input|out|alpha|stride|padding|groups|dilation|index|dim|mask|reduction|bias|x)"];
        let tensor = (
            name.clone(),
            prop::collection::vec(dim(), 0..5),
            prop::sample::select(DTYPES),
        )
            .prop_map(|(n, s, d)| Arg::new_tensor(&n, &s, d));
        let scalar = (
            name,
            prop::sample::select(
                &[
                    "int", "float", "bool", "NoneType", "str", "tuple", "list", "ndarray", "?",
                ][..],
            ),
            value(),
        )
            .prop_map(|(n, t, v)| Arg::new_value(&n, t, v));
        let odd = (
            prop::option::of(prop::collection::vec(dim(), 0..3)),
            prop::option::of(prop::sample::select(DTYPES)),
        )
            .prop_map(|(shape, dtype)| Arg {
                name: String::new(),
                ty: "tensor".into(),
                shape,
                dtype: dtype.map(str::to_owned),
                value: None,
            });
        prop_oneof![5 => tensor, 3 => scalar, 1 => odd]
    }

    fn call_strategy() -> impl Strategy<Value = (usize, usize, Marker, String, i64, [i64; 3], bool)>
    {
        let names: Vec<&'static str> = OPS
            .iter()
            .flat_map(|s| s.names.iter().copied())
            .chain(["frobnicate", ""])
            .collect();
        (
            0..OPS.len(),
            0..3usize,
            (
                prop::sample::select(MODULES),
                prop::sample::select(names),
                prop::collection::vec(arg(), 0..9),
                any::<bool>(),
            ),
            prop::sample::select(KERNELS),
            prop_oneof![Just(0i64), Just(1), Just(2), Just(3), any::<i64>()],
            [dim(), dim(), dim()],
            any::<bool>(),
        )
            .prop_map(
                |(row, dir, (module, op, args, well_formed), kernel, sub, grid, apex)| {
                    let m = Marker {
                        module: module.to_owned(),
                        op: op.to_owned(),
                        args,
                        well_formed,
                    };
                    (row, dir, m, kernel.to_owned(), sub, grid, apex)
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Every model, both modes, random shapes, dtypes, scalars, kernel
        /// names and op names: never a panic, and the default mode only says
        /// `na` with a reason.
        #[test]
        fn every_model_never_panics((row, dir, m, kernel, sub, grid, apex) in call_strategy()) {
            let dir = [Direction::Fprop, Direction::Bprop, Direction::Other][dir];
            let call = OpCall::from_marker(&m, dir, sub, Kernel { name: &kernel, long_name: &kernel, grid });
            let mode = if apex { Mode::Apex } else { Mode::Fixed };
            // the row's own rule, whatever the op name says
            let e = run(Some(&OPS[row]), &call, mode);
            if !apex && (e.flops.is_none() || e.bytes.is_none()) {
                prop_assert!(matches!(e.outcome, Outcome::Partial(_)));
            }
            if apex {
                prop_assert!(!matches!(e.outcome, Outcome::Partial(_)));
            }
            // and PyProf's dispatch
            let _ = crate::estimate_call(&m.module, &m.op, &call, mode);
            let _ = run(None, &call, mode);
        }

        /// Every stock model (default mode only), with an output shape or
        /// without: never a panic, `na` only with a reason.
        #[test]
        fn every_stock_model_never_panics(
            (_, dir, m, kernel, sub, grid, _) in call_strategy(),
            row in 0..crate::table::STOCK.len(),
            output in prop::option::of(prop::collection::vec(dim(), 0..5)),
        ) {
            let dir = [Direction::Fprop, Direction::Bprop, Direction::Other][dir];
            let mut call = OpCall::from_marker(&m, dir, sub, Kernel { name: &kernel, long_name: &kernel, grid });
            call.output = output.as_deref();
            let e = run(Some(&crate::table::STOCK[row].spec), &call, Mode::Fixed);
            if e.flops.is_none() || e.bytes.is_none() {
                prop_assert!(matches!(e.outcome, Outcome::Partial(_)));
            }
        }

        #[test]
        fn marker_decoder_never_panics(s in "\\PC{0,120}") {
            let _ = crate::marker::decode_marker(&s);
        }

        #[test]
        fn marker_decoder_on_marker_like_text(
            module in "[a-z.]{0,8}",
            op in "[a-z_]{0,8}",
            body in "[\\[\\](){}',: a-z0-9]{0,60}",
        ) {
            let text = format!("{{'mod': '{module}', 'op': '{op}', 'args': [{body}]}}");
            let _ = crate::marker::decode_marker(&text);
        }
    }

    #[test]
    fn apex_asserts_the_marker_op() {
        use crate::rules::testing::*;
        let m = marker("torch.nn.functional", "dropout", &[t(&[4], "float32")]);
        let call = OpCall::from_marker(
            &m,
            Direction::Fprop,
            0,
            Kernel {
                name: "k",
                long_name: "k",
                grid: [1, 1, 1],
            },
        );
        let linear = crate::table::lookup("linear");
        assert!(matches!(
            run(linear, &call, Mode::Apex).outcome,
            Outcome::ApexAbort(_)
        ));
        let relu = crate::table::lookup("relu");
        assert!(matches!(
            run(relu, &call, Mode::Apex).outcome,
            Outcome::Modelled
        ));
    }

    #[test]
    fn broadcasts_like_numpy() {
        assert_eq!(
            broadcast(&[&[35, 20, 200], &[35, 1, 200]]),
            Some(vec![35, 20, 200])
        );
        assert_eq!(broadcast(&[&[32, 1024], &[1024]]), Some(vec![32, 1024]));
        assert_eq!(broadcast(&[&[3], &[4]]), None);
        assert_eq!(broadcast(&[&[], &[2, 3]]), Some(vec![2, 3]));
        assert_eq!(broadcast(&[&[0], &[1]]), Some(vec![0]));
        assert_eq!(broadcast(&[]), Some(vec![]));
    }
}
