//! The op table: op names → named rules.
//!
//! PyProf dispatches on the op name (`prof.py` `foo()`, pyprof-semantics.md
//! §4.5) to one of ~30 classes. Here each class is a [`Rule`] and every op
//! name appears in exactly one row of [`OPS`]; the few names PyProf's
//! if/elif chain shadows (`sigmoid`, `tanh` are Pointwise before Activation,
//! `to` is Convert) are in the row that wins. An op in no row goes to the
//! fallback model (PyProf's `Foo`: 0 FLOPs, 0 bytes).
//!
//! The rules read only an [`OpCall`](crate::call::OpCall) (op name,
//! argument shapes, dtypes and scalars, direction, kernel, kernel index
//! within the op), never PyProf's marker text, so another marker source
//! (stock PyTorch `aten::mm, seq = …, sizes = [[…]]` markers) plugs in as
//! more rows naming its ops (`aten::mm` → [`Rule::Mm`]) plus, where its
//! argument order differs, a new rule variant.

use std::collections::HashMap;
use std::sync::LazyLock;

/// A model (one of PyProf's operator classes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// `F.linear`: GEMM or bias kernel, by kernel name.
    Linear,
    /// `LSTMCell`/`GRUCell` (and by default `RNNCell`) `forward`.
    RnnCell,
    /// `F.conv1d`, `F.conv2d`.
    Conv,
    /// Elementwise ops.
    Pointwise {
        /// The default-mode formula.
        kind: PwKind,
        /// apex.pyprof's FLOP formula.
        apex: ApexFlops,
    },
    /// `Tensor.half()`, `.float()`, `.to()`, …
    Convert,
    /// `torch.matmul`, `Tensor.__matmul__`.
    Matmul,
    /// `F.embedding`.
    Embedding,
    /// `sum`.
    Sum,
    /// `mean`.
    Mean,
    /// `norm`.
    Norm,
    /// `F.dropout`.
    Dropout,
    /// `torch.cat`.
    Cat,
    /// `Tensor.reshape`.
    Reshape,
    /// `Tensor.masked_scatter_`.
    MaskedScatter,
    /// `gather`.
    Gather,
    /// `nonzero`.
    Nonzero,
    /// `index_select`.
    IndexSelect,
    /// `masked_select`.
    MaskedSelect,
    /// `addmm`, `addmm_`.
    Addmm,
    /// `torch.mm`.
    Mm,
    /// `torch.bmm`.
    Bmm,
    /// `F.softmax`.
    Softmax,
    /// `F.log_softmax`.
    LogSoftmax,
    /// `F.mse_loss`.
    MseLoss,
    /// apex `fused_adam_cuda.adam`.
    Adam,
    /// `batch_norm`.
    BatchNorm,
    /// `torch.randperm`.
    RandPerm,
    /// `ones`, `zeros`, `*_like`, `zero_` (default mode only).
    OneZero,
    /// `Tensor.fill_` (default mode only).
    Fill,
    /// `torch.full` (default mode only).
    Full,
    /// `Tensor.copy_`.
    Copy,
    /// `Tensor.clone`.
    Clone,
    /// `Tensor.contiguous`.
    Contiguous,
    /// `Tensor.any`.
    Any,
    /// Activation functions.
    Activation,
}

/// Default-mode formula of an elementwise op (PyProf HEAD's groups,
/// pyprof-semantics.md §6.7, with B28–B30 fixed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PwKind {
    /// One input: `k·numel` FLOPs, `2·bytes(in)`.
    Unary(u8),
    /// Two inputs, broadcast output: `k·numel(out)` FLOPs,
    /// `Σ bytes(in) + bytes(out)`. With `bprop_rule`, backward kernels use
    /// the add rule (0, `2·bytes(out)`) for additive ops and the mul rule
    /// (`numel(out)`, `3·bytes(out)`) for the others.
    Binary {
        /// FLOPs per output element.
        k: u8,
        /// PyProf's backward formulas apply.
        bprop_rule: bool,
    },
    /// A comparison: like `Binary { k: 1, bprop_rule: true }` but the output
    /// is `bool`.
    Compare,
    /// Three inputs (scalars dropped): `3·numel(out)`, `Σ bytes(in) +
    /// bytes(out)`.
    Ternary,
}

/// apex.pyprof's Pointwise FLOPs, by op name (pyprof-apex-differences.md
/// §4.2), where `E` is its element count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApexFlops {
    /// `E/2`, a Python float.
    HalfE,
    /// `E`.
    E,
    /// `2·E`.
    TwoE,
    /// `10·E`.
    TenE,
    /// 0.
    Zero,
}

/// When a row applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// In both modes, for any module.
    Always,
    /// Only in the default mode (apex has no such class; the op is `Foo`).
    FixedOnly,
    /// Only when the record's module is one of these (apex's RNN rule).
    Modules {
        /// Modules apex.pyprof routes.
        apex: &'static [&'static str],
        /// Modules the default mode routes (B38).
        fixed: &'static [&'static str],
    },
}

/// One row of the op table.
#[derive(Clone, Copy, Debug)]
pub struct OpSpec {
    /// Op names (PyProf marker `op`).
    pub names: &'static [&'static str],
    /// The model.
    pub rule: Rule,
    /// When the row applies.
    pub gate: Gate,
}

const fn row(names: &'static [&'static str], rule: Rule) -> OpSpec {
    OpSpec {
        names,
        rule,
        gate: Gate::Always,
    }
}

const fn fixed_only(names: &'static [&'static str], rule: Rule) -> OpSpec {
    OpSpec {
        names,
        rule,
        gate: Gate::FixedOnly,
    }
}

const fn pw(names: &'static [&'static str], kind: PwKind, apex: ApexFlops) -> OpSpec {
    row(names, Rule::Pointwise { kind, apex })
}

use ApexFlops::{E, HalfE, TenE, TwoE, Zero};
use PwKind::{Compare, Ternary, Unary};

const BINARY: PwKind = PwKind::Binary {
    k: 1,
    bprop_rule: true,
};
const POWER: PwKind = PwKind::Binary {
    k: 20,
    bprop_rule: false,
};

/// Every op with a model.
pub static OPS: &[OpSpec] = &[
    row(&["linear"], Rule::Linear),
    OpSpec {
        names: &["forward"],
        rule: Rule::RnnCell,
        gate: Gate::Modules {
            apex: &["LSTMCell", "GRUCell"],
            fixed: &["LSTMCell", "GRUCell", "RNNCell"],
        },
    },
    row(&["conv1d", "conv2d"], Rule::Conv),
    // Pointwise. unary
    pw(
        &["abs", "abs_", "neg", "neg_", "__abs__", "__neg__"],
        Unary(1),
        HalfE,
    ),
    pw(&["reciprocal", "reciprocal_", "__invert__"], Unary(1), Zero),
    // representation
    pw(
        &[
            "ceil", "ceil_", "clamp", "clamp_", "floor", "floor_", "round", "sign", "sign_",
            "trunc", "trunc_",
        ],
        Unary(1),
        HalfE,
    ),
    pw(&["frac", "frac_", "round_"], Unary(1), Zero),
    // exp / log
    pw(&["exp", "exp_"], Unary(20), HalfE),
    pw(
        &["log", "log_", "log10", "log10_", "log2", "log2_"],
        Unary(20),
        TwoE,
    ),
    pw(&["exp1m", "exp1m_", "log1p", "log1p_"], Unary(20), Zero),
    OpSpec {
        gate: Gate::FixedOnly, // [B28]: PyProf's list says exp1m
        ..pw(&["expm1", "expm1_"], Unary(20), Zero)
    },
    // sqrt
    pw(&["rsqrt", "rsqrt_", "sqrt", "sqrt_"], Unary(20), HalfE),
    // trigonometric and transcendental
    pw(
        &["acos", "acos_", "asin", "asin_", "atan", "atan_"],
        Unary(20),
        TenE,
    ),
    pw(
        &[
            "cos", "cos_", "cosh", "cosh_", "sin", "sin_", "sinh", "sinh_",
        ],
        Unary(20),
        HalfE,
    ),
    pw(&["tan", "tan_"], Unary(20), Zero),
    pw(&["sigmoid", "sigmoid_", "tanh", "tanh_"], Unary(20), TwoE),
    pw(&["atan2", "atan2_"], POWER, Zero), // [B29]: binary, 20 FLOPs per element
    // error functions
    pw(
        &["erf", "erf_", "erfc", "erfc_", "erfinv", "erfinv_"],
        Unary(20),
        Zero,
    ),
    // binary
    pw(
        &[
            "add", "add_", "div", "div_", "mul", "mul_", "sub", "sub_", "__add__", "__sub__",
            "__mul__", "__radd__", "__rmul__",
        ],
        BINARY,
        HalfE,
    ),
    pw(&["fmod", "fmod_"], BINARY, E),
    pw(
        &[
            "remainder",
            "remainder_",
            "__floordiv__",
            "__truediv__",
            "__mod__",
            "__rsub__",
            "__rdiv__",
            "__rtruediv__",
            "__rfloordiv__",
        ],
        BINARY,
        Zero,
    ),
    pw(
        &["__iadd__", "__isub__", "__imul__", "__itruediv__"],
        BINARY,
        HalfE,
    ),
    // power
    pw(&["pow", "pow_", "__pow__", "__rpow__"], POWER, Zero),
    // comparison
    pw(
        &[
            "lt", "lt_", "gt", "gt_", "ge", "ge_", "le", "le_", "eq", "eq_", "ne", "ne_", "__lt__",
            "__gt__", "__ge__", "__le__", "__eq__", "__ne__",
        ],
        Compare,
        HalfE,
    ),
    // logical
    pw(
        &[
            "__and__",
            "__or__",
            "__xor__",
            "__lshift__",
            "__rshift__",
            "__iand__",
            "__ior__",
            "__ixor__",
            "__ilshift__",
            "__irshift__",
        ],
        BINARY,
        Zero,
    ),
    // ternary
    pw(
        &["addcdiv", "addcdiv_", "addcmul", "addcmul_"],
        Ternary,
        Zero,
    ),
    // [B29]: accepted by PyProf's dispatch, then "not supported"
    pw(&["lerp", "lerp_"], Ternary, Zero),
    pw(&["digamma", "mvlgamma"], Unary(20), Zero),
    // conversions
    row(
        &[
            "byte", "char", "double", "float", "half", "int", "long", "short", "to",
        ],
        Rule::Convert,
    ),
    row(&["__matmul__", "matmul"], Rule::Matmul),
    row(&["embedding"], Rule::Embedding),
    row(&["sum"], Rule::Sum),
    row(&["mean"], Rule::Mean),
    row(&["norm"], Rule::Norm),
    row(&["dropout"], Rule::Dropout),
    row(&["cat"], Rule::Cat),
    row(&["reshape"], Rule::Reshape),
    row(&["masked_scatter_"], Rule::MaskedScatter),
    row(&["gather"], Rule::Gather),
    row(&["nonzero"], Rule::Nonzero),
    row(&["index_select"], Rule::IndexSelect),
    row(&["masked_select"], Rule::MaskedSelect),
    row(&["addmm", "addmm_"], Rule::Addmm),
    row(&["mm"], Rule::Mm),
    row(&["bmm"], Rule::Bmm),
    row(&["softmax"], Rule::Softmax),
    row(&["log_softmax"], Rule::LogSoftmax),
    row(&["mse_loss"], Rule::MseLoss),
    row(&["adam"], Rule::Adam),
    row(&["batch_norm"], Rule::BatchNorm),
    row(&["randperm"], Rule::RandPerm),
    fixed_only(
        &["ones", "ones_like", "zero_", "zeros", "zeros_like"],
        Rule::OneZero,
    ),
    fixed_only(&["fill_"], Rule::Fill),
    fixed_only(&["full"], Rule::Full),
    row(&["copy_"], Rule::Copy),
    row(&["clone"], Rule::Clone),
    row(&["contiguous"], Rule::Contiguous),
    row(&["any"], Rule::Any),
    row(
        &[
            "celu",
            "elu",
            "elu_",
            "hardshrink",
            "hardtanh",
            "hardtanh_",
            "leaky_relu",
            "leaky_relu_",
            "logsigmoid",
            "prelu",
            "relu",
            "relu_",
            "relu6",
            "rrelu",
            "rrelu_",
            "selu",
            "softplus",
            "softshrink",
            "softsign",
            "tanhshrink",
            "threshold",
            "threshold_",
        ],
        Rule::Activation,
    ),
];

static BY_NAME: LazyLock<HashMap<&'static str, &'static OpSpec>> = LazyLock::new(|| {
    OPS.iter()
        .flat_map(|s| s.names.iter().map(move |n| (*n, s)))
        .collect()
});

/// The row naming `op`, whatever the gate says.
pub fn lookup(op: &str) -> Option<&'static OpSpec> {
    BY_NAME.get(op).copied()
}

/// PyProf's dispatch: the rule for the record's first module and op, or
/// `None` for the fallback model.
pub fn dispatch(module: &str, op: &str, apex: bool) -> Option<&'static OpSpec> {
    let spec = lookup(op)?;
    let routed = match spec.gate {
        Gate::Always => true,
        Gate::FixedOnly => !apex,
        Gate::Modules { apex: a, fixed } => {
            let list = if apex { a } else { fixed };
            list.contains(&module)
        }
    };
    routed.then_some(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_name_in_two_rows() {
        let total: usize = OPS.iter().map(|s| s.names.len()).sum();
        assert_eq!(BY_NAME.len(), total, "an op name appears in two rows");
    }

    #[test]
    fn apex_pointwise_list_has_135_names() {
        // pyprof-apex-differences.md §4.2: both tools dispatch the same 135 names.
        let n = OPS
            .iter()
            .filter(|s| matches!(s.rule, Rule::Pointwise { .. }) && s.gate == Gate::Always)
            .map(|s| s.names.len())
            .sum::<usize>();
        assert_eq!(n, 135);
    }

    #[test]
    fn dispatch_follows_pyprof() {
        assert_eq!(
            dispatch("Tensor", "sigmoid", true).map(|s| s.rule),
            lookup("exp").map(|_| Rule::Pointwise {
                kind: Unary(20),
                apex: TwoE
            })
        );
        assert_eq!(
            dispatch("Tensor", "to", true).map(|s| s.rule),
            Some(Rule::Convert)
        );
        assert_eq!(
            dispatch("LSTMCell", "forward", true).map(|s| s.rule),
            Some(Rule::RnnCell)
        );
        assert!(dispatch("RNNCell", "forward", true).is_none());
        assert!(dispatch("RNNCell", "forward", false).is_some());
        assert!(dispatch("Linear", "forward", false).is_none());
        assert!(dispatch("torch", "zeros", true).is_none());
        assert!(dispatch("torch", "zeros", false).is_some());
        assert!(dispatch("Tensor", "expm1", true).is_none());
        assert!(dispatch("torch.nn.functional", "layer_norm", false).is_none());
    }

    #[test]
    fn every_rule_has_a_row() {
        use std::collections::HashSet;
        let rules: HashSet<std::mem::Discriminant<Rule>> = OPS
            .iter()
            .map(|s| std::mem::discriminant(&s.rule))
            .collect();
        assert_eq!(rules.len(), 35);
    }
}
