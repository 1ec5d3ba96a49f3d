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
//! within the op), never PyProf's marker text. Stock PyTorch markers
//! (`aten::mm, seq = …, sizes = [[…]]`) have their own table, [`STOCK`]:
//! namespaced op names → the same rules where the formula is PyProf's
//! (`aten::mm` → [`Rule::Mm`]), with an [`ArgMap`] where the argument order
//! differs (`aten::embedding(weight, indices)`), and new rules where PyProf
//! has no class or the marker lacks what it reads (convolutions, attention,
//! layer norm, fused Adam, `_foreach_*`).

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
    /// Stock `aten::` convolutions: `x = S0`, `w = S1`, the output shape
    /// recovered from other markers (pyprof-semantics.md §10.3).
    AtenConv,
    /// `aten::convolution_backward` and friends, arguments mapped to
    /// `[grad_out, x, w]`: dgrad, wgrad and bias kernels by name.
    AtenConvBackward,
    /// Scaled dot-product attention, forward or backward.
    Attention {
        /// Where the head dimension sits.
        layout: AttnLayout,
        /// The backward op (`S0` = grad_out, `S1..S3` = q, k, v).
        backward: bool,
    },
    /// Layer / group / RMS norm, arguments mapped to `[x, w]` (rprof
    /// extension: PyProf has no class).
    LayerNorm,
    /// `aten::_fused_adam_` / `_fused_adamw_`: four (five with amsgrad)
    /// tensor lists.
    FusedAdam,
    /// `aten::_foreach_*`: elementwise over tensor lists.
    Foreach {
        /// FLOPs per element of the first list.
        k: u8,
        /// The most tensor lists the op takes.
        lists: u8,
    },
    /// `aten::embedding_backward` / `embedding_dense_backward`:
    /// `[grad, indices]`.
    EmbeddingBackward,
    /// `aten::index_select` whose `dim` the marker does not carry.
    IndexSelectStock,
}

/// Memory layout of attention inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttnLayout {
    /// `[..., H, L, E]` (`scaled_dot_product_attention`).
    Bhle,
    /// `[B, L, H, E]` (`_flash_attention_forward`, flash-attn).
    Blhe,
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
    /// Only for stock PyTorch markers (`aten::…`), default mode only.
    Stock,
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
        Gate::FixedOnly | Gate::Stock => !apex,
        Gate::Modules { apex: a, fixed } => {
            let list = if apex { a } else { fixed };
            list.contains(&module)
        }
    };
    routed.then_some(spec)
}

// ------------------------------------------------------------------ stock

/// How the kernels of one op instance share its cost (pyprof-semantics.md
/// §10.2 step 4): the op's FLOPs and bytes are counted once, on the first
/// kernel doing the math; helper kernels get what the rule gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernels {
    /// One kernel per call: every kernel does the math. Without `op_id`
    /// in the marker, a second such kernel under the same marker text is
    /// another call of the op.
    One,
    /// Several kernels per call (chunks of a tensor list, two-pass
    /// reductions, statistics then normalisation): the first carries the
    /// cost, the others 0.
    Many,
    /// A GEMM: split-K reductions, epilogues and elementwise kernels are
    /// helpers.
    Gemm,
    /// A convolution: layout, offset and transform kernels are helpers.
    Conv,
    /// A convolution's backward: dgrad, wgrad and bias-grad kernels are
    /// separate parts, each counted once.
    ConvBackward,
    /// Attention: the backward's preprocessing and conversion kernels are
    /// helpers.
    Attention,
}

/// Which of a stock marker's `sizes` entries the rule reads, in which
/// order, and which are index tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgMap {
    /// Entries to pass, in this order; empty: all, as they are.
    pub pick: &'static [usize],
    /// Entries (positions in `sizes`) that are `int64` index tensors.
    pub int64: &'static [usize],
}

/// One row of the stock table: `aten::` op names, the rule, how the
/// marker's sizes become the rule's arguments, how the kernels share the
/// cost.
#[derive(Clone, Copy, Debug)]
pub struct StockSpec {
    /// Names (with namespace) and rule; the gate is [`Gate::Stock`].
    pub spec: OpSpec,
    /// Arguments.
    pub args: ArgMap,
    /// Kernel roles.
    pub kernels: Kernels,
    /// Anchor at an enclosing op of the same rule family instead when
    /// there is one (§10.2: the `_scaled_dot_product_*_attention` level
    /// wins over `_flash_attention_forward`, whose layout differs).
    pub defer_to_outer: bool,
}

impl StockSpec {
    const fn pick(mut self, pick: &'static [usize]) -> StockSpec {
        self.args.pick = pick;
        self
    }

    const fn int64(mut self, int64: &'static [usize]) -> StockSpec {
        self.args.int64 = int64;
        self
    }

    const fn outer(mut self) -> StockSpec {
        self.defer_to_outer = true;
        self
    }
}

const fn st(names: &'static [&'static str], rule: Rule, kernels: Kernels) -> StockSpec {
    StockSpec {
        spec: OpSpec {
            names,
            rule,
            gate: Gate::Stock,
        },
        args: ArgMap {
            pick: &[],
            int64: &[],
        },
        kernels,
        defer_to_outer: false,
    }
}

const fn spw(names: &'static [&'static str], kind: PwKind) -> StockSpec {
    st(
        names,
        Rule::Pointwise {
            kind,
            apex: ApexFlops::Zero,
        },
        Kernels::One,
    )
}

const fn attn(names: &'static [&'static str], layout: AttnLayout, backward: bool) -> StockSpec {
    st(
        names,
        Rule::Attention { layout, backward },
        Kernels::Attention,
    )
}

const fn foreach(names: &'static [&'static str], k: u8, lists: u8) -> StockSpec {
    st(names, Rule::Foreach { k, lists }, Kernels::Many)
}

use Kernels::{Conv, ConvBackward, Gemm, Many, One};

/// Every stock PyTorch op with a model (pyprof-semantics.md §10.5). Names
/// carry their namespace (`aten::mm`); an op in no row is costed by the
/// fallback model (0 FLOPs, 0 bytes, its shapes in params).
pub static STOCK: &[StockSpec] = &[
    // GEMMs: the rules of PyProf's classes, same argument order
    st(&["aten::mm"], Rule::Mm, Gemm),
    st(
        &["aten::addmm", "aten::addmm_", "aten::_addmm_activation"],
        Rule::Addmm,
        Gemm,
    ),
    st(&["aten::bmm"], Rule::Bmm, Gemm),
    st(&["aten::baddbmm", "aten::baddbmm_"], Rule::Bmm, Gemm).pick(&[1, 2]),
    st(
        &["aten::matmul", "aten::mv", "aten::dot"],
        Rule::Matmul,
        Gemm,
    ),
    st(&["aten::linear"], Rule::Linear, Gemm),
    // convolutions
    st(
        &[
            "aten::conv1d",
            "aten::conv2d",
            "aten::conv3d",
            "aten::convolution",
            "aten::_convolution",
            "aten::cudnn_convolution",
            "aten::_conv_depthwise2d",
            "aten::cudnn_convolution_relu",
            "aten::cudnn_convolution_add_relu",
            "aten::miopen_convolution",
            "aten::_slow_conv2d_forward",
        ],
        Rule::AtenConv,
        Conv,
    ),
    st(
        &[
            "aten::convolution_backward",
            "aten::convolution_backward_overrideable",
            "aten::_slow_conv2d_backward",
        ],
        Rule::AtenConvBackward,
        ConvBackward,
    ),
    // (self, grad_output, weight)
    st(
        &["aten::cudnn_convolution_backward"],
        Rule::AtenConvBackward,
        ConvBackward,
    )
    .pick(&[1, 0, 2]),
    // attention
    attn(
        &[
            "aten::scaled_dot_product_attention",
            "aten::_scaled_dot_product_flash_attention",
            "aten::_scaled_dot_product_efficient_attention",
            "aten::_scaled_dot_product_cudnn_attention",
        ],
        AttnLayout::Bhle,
        false,
    ),
    attn(
        &[
            "aten::_flash_attention_forward",
            "aten::_efficient_attention_forward",
        ],
        AttnLayout::Blhe,
        false,
    )
    .outer(),
    attn(
        &["flash_attn::_flash_attn_forward"],
        AttnLayout::Blhe,
        false,
    ),
    attn(
        &[
            "aten::_scaled_dot_product_flash_attention_backward",
            "aten::_scaled_dot_product_efficient_attention_backward",
            "aten::_scaled_dot_product_cudnn_attention_backward",
        ],
        AttnLayout::Bhle,
        true,
    ),
    attn(
        &[
            "aten::_flash_attention_backward",
            "aten::_efficient_attention_backward",
        ],
        AttnLayout::Blhe,
        true,
    )
    .outer(),
    attn(
        &["flash_attn::_flash_attn_backward"],
        AttnLayout::Blhe,
        true,
    ),
    // elementwise
    spw(
        &[
            "aten::neg",
            "aten::neg_",
            "aten::abs",
            "aten::abs_",
            "aten::reciprocal",
            "aten::reciprocal_",
            "aten::ceil",
            "aten::ceil_",
            "aten::floor",
            "aten::floor_",
            "aten::round",
            "aten::round_",
            "aten::sign",
            "aten::sign_",
            "aten::trunc",
            "aten::trunc_",
            "aten::frac",
            "aten::frac_",
            "aten::clamp",
            "aten::clamp_",
            "aten::clamp_min",
            "aten::clamp_min_",
            "aten::clamp_max",
            "aten::clamp_max_",
            "aten::nan_to_num",
            "aten::nan_to_num_",
            "aten::masked_fill",
            "aten::masked_fill_",
        ],
        PwKind::Unary(1),
    ),
    spw(
        &[
            "aten::exp",
            "aten::exp_",
            "aten::exp2",
            "aten::exp2_",
            "aten::expm1",
            "aten::expm1_",
            "aten::log",
            "aten::log_",
            "aten::log2",
            "aten::log2_",
            "aten::log10",
            "aten::log10_",
            "aten::log1p",
            "aten::log1p_",
            "aten::sqrt",
            "aten::sqrt_",
            "aten::rsqrt",
            "aten::rsqrt_",
            "aten::sin",
            "aten::sin_",
            "aten::cos",
            "aten::cos_",
            "aten::tan",
            "aten::tan_",
            "aten::sinh",
            "aten::sinh_",
            "aten::cosh",
            "aten::cosh_",
            "aten::tanh",
            "aten::tanh_",
            "aten::asin",
            "aten::asin_",
            "aten::acos",
            "aten::acos_",
            "aten::atan",
            "aten::atan_",
            "aten::sigmoid",
            "aten::sigmoid_",
            "aten::erf",
            "aten::erf_",
            "aten::erfc",
            "aten::erfc_",
            "aten::erfinv",
            "aten::erfinv_",
        ],
        PwKind::Unary(20),
    ),
    spw(
        &[
            "aten::add",
            "aten::add_",
            "aten::sub",
            "aten::sub_",
            "aten::rsub",
            "aten::mul",
            "aten::mul_",
            "aten::div",
            "aten::div_",
            "aten::remainder",
            "aten::remainder_",
            "aten::fmod",
            "aten::fmod_",
            "aten::maximum",
            "aten::minimum",
        ],
        BINARY,
    ),
    // where(cond, x, y): the data operands
    spw(&["aten::where"], BINARY).pick(&[1, 2]),
    spw(
        &["aten::pow", "aten::pow_", "aten::atan2", "aten::atan2_"],
        POWER,
    ),
    spw(
        &[
            "aten::eq",
            "aten::eq_",
            "aten::ne",
            "aten::ne_",
            "aten::lt",
            "aten::lt_",
            "aten::le",
            "aten::le_",
            "aten::gt",
            "aten::gt_",
            "aten::ge",
            "aten::ge_",
        ],
        Compare,
    ),
    spw(
        &[
            "aten::addcmul",
            "aten::addcmul_",
            "aten::addcdiv",
            "aten::addcdiv_",
            "aten::lerp",
            "aten::lerp_",
        ],
        Ternary,
    ),
    // activations, forward and backward (a `…_backward` op is costed as
    // the backward whatever the kernel's direction)
    st(
        &[
            "aten::relu",
            "aten::relu_",
            "aten::gelu",
            "aten::gelu_",
            "aten::silu",
            "aten::silu_",
            "aten::leaky_relu",
            "aten::leaky_relu_",
            "aten::hardtanh",
            "aten::hardtanh_",
            "aten::elu",
            "aten::elu_",
            "aten::threshold",
            "aten::threshold_",
            "aten::hardswish",
            "aten::hardswish_",
            "aten::hardsigmoid",
            "aten::hardsigmoid_",
            "aten::mish",
            "aten::mish_",
            "aten::softplus",
            "aten::relu6",
            "aten::celu",
            "aten::selu",
            "aten::prelu",
            "aten::threshold_backward",
            "aten::gelu_backward",
            "aten::silu_backward",
            "aten::hardtanh_backward",
            "aten::leaky_relu_backward",
            "aten::elu_backward",
            "aten::hardswish_backward",
            "aten::hardsigmoid_backward",
            "aten::mish_backward",
            "aten::softplus_backward",
            "aten::sigmoid_backward",
            "aten::tanh_backward",
        ],
        Rule::Activation,
        One,
    ),
    st(
        &[
            "aten::softmax",
            "aten::_softmax",
            "aten::_softmax_backward_data",
        ],
        Rule::Softmax,
        One,
    ),
    st(
        &[
            "aten::log_softmax",
            "aten::_log_softmax",
            "aten::_log_softmax_backward_data",
        ],
        Rule::LogSoftmax,
        One,
    ),
    // embedding(weight, indices): PyProf's F.embedding(indices, weight)
    st(&["aten::embedding"], Rule::Embedding, One)
        .pick(&[1, 0])
        .int64(&[1]),
    st(
        &["aten::embedding_backward", "aten::embedding_dense_backward"],
        Rule::EmbeddingBackward,
        Many,
    )
    .pick(&[0, 1])
    .int64(&[1]),
    // normalisation
    st(
        &[
            "aten::batch_norm",
            "aten::_batch_norm_impl_index",
            "aten::native_batch_norm",
            "aten::_native_batch_norm_legit",
            "aten::_native_batch_norm_legit_no_training",
            "aten::cudnn_batch_norm",
            "aten::miopen_batch_norm",
            "aten::native_batch_norm_backward",
            "aten::cudnn_batch_norm_backward",
            "aten::miopen_batch_norm_backward",
        ],
        Rule::BatchNorm,
        Many,
    ),
    st(
        &[
            "aten::layer_norm",
            "aten::native_layer_norm",
            "aten::group_norm",
            "aten::rms_norm",
        ],
        Rule::LayerNorm,
        Many,
    )
    .pick(&[0, 2]),
    st(&["aten::native_group_norm"], Rule::LayerNorm, Many).pick(&[0, 1]),
    // (grad_out, input, normalized_shape, mean, rstd, weight, …)
    st(&["aten::native_layer_norm_backward"], Rule::LayerNorm, Many).pick(&[1, 5]),
    // (grad_out, input, mean, rstd, weight, …)
    st(&["aten::native_group_norm_backward"], Rule::LayerNorm, Many).pick(&[1, 4]),
    st(
        &[
            "aten::dropout",
            "aten::native_dropout",
            "aten::_fused_dropout",
            "aten::native_dropout_backward",
            "aten::feature_dropout",
        ],
        Rule::Dropout,
        One,
    ),
    // reductions
    st(&["aten::sum"], Rule::Sum, Many),
    st(&["aten::mean"], Rule::Mean, Many),
    st(
        &["aten::norm", "aten::linalg_vector_norm"],
        Rule::Norm,
        Many,
    ),
    st(&["aten::mse_loss"], Rule::MseLoss, One).pick(&[0, 1]),
    // copies, fills, joins, index ops
    st(&["aten::copy_"], Rule::Copy, One),
    st(
        &["aten::_to_copy", "aten::to", "aten::clone"],
        Rule::Clone,
        One,
    ),
    st(&["aten::contiguous"], Rule::Contiguous, One),
    st(&["aten::fill_", "aten::full_like"], Rule::Fill, One),
    st(
        &["aten::zero_", "aten::zeros_like", "aten::ones_like"],
        Rule::OneZero,
        One,
    ),
    st(&["aten::cat", "aten::_cat"], Rule::Cat, Many),
    st(&["aten::gather"], Rule::Gather, One).int64(&[2]),
    st(&["aten::index_select"], Rule::IndexSelectStock, One).int64(&[2]),
    st(&["aten::nonzero"], Rule::Nonzero, Many),
    // optimizers: torch.optim's fused and foreach implementations
    st(
        &[
            "aten::_fused_adam_",
            "aten::_fused_adamw_",
            "aten::_fused_adam",
            "aten::_fused_adamw",
        ],
        Rule::FusedAdam,
        Many,
    ),
    foreach(
        &[
            "aten::_foreach_add",
            "aten::_foreach_add_",
            "aten::_foreach_sub",
            "aten::_foreach_sub_",
            "aten::_foreach_mul",
            "aten::_foreach_mul_",
            "aten::_foreach_div",
            "aten::_foreach_div_",
            "aten::_foreach_maximum",
            "aten::_foreach_maximum_",
            "aten::_foreach_minimum",
            "aten::_foreach_minimum_",
            "aten::_foreach_clamp_min",
            "aten::_foreach_clamp_min_",
            "aten::_foreach_clamp_max",
            "aten::_foreach_clamp_max_",
        ],
        1,
        2,
    ),
    foreach(
        &[
            "aten::_foreach_neg",
            "aten::_foreach_neg_",
            "aten::_foreach_abs",
            "aten::_foreach_abs_",
            "aten::_foreach_reciprocal",
            "aten::_foreach_reciprocal_",
            "aten::_foreach_sign",
            "aten::_foreach_sign_",
        ],
        1,
        1,
    ),
    foreach(
        &[
            "aten::_foreach_addcmul",
            "aten::_foreach_addcmul_",
            "aten::_foreach_addcdiv",
            "aten::_foreach_addcdiv_",
            "aten::_foreach_lerp",
            "aten::_foreach_lerp_",
        ],
        3,
        3,
    ),
    foreach(
        &[
            "aten::_foreach_sqrt",
            "aten::_foreach_sqrt_",
            "aten::_foreach_exp",
            "aten::_foreach_exp_",
            "aten::_foreach_log",
            "aten::_foreach_log_",
            "aten::_foreach_sigmoid",
            "aten::_foreach_sigmoid_",
            "aten::_foreach_tanh",
            "aten::_foreach_tanh_",
        ],
        20,
        1,
    ),
    foreach(&["aten::_foreach_pow", "aten::_foreach_pow_"], 20, 2),
];

/// Looked up for every marker around every kernel: a fast hasher.
static STOCK_BY_NAME: LazyLock<rprof_model::FastMap<&'static str, &'static StockSpec>> =
    LazyLock::new(|| {
        STOCK
            .iter()
            .flat_map(|s| s.spec.names.iter().map(move |n| (*n, s)))
            .collect()
    });

/// The stock row naming `name` (with its namespace: `aten::mm`).
pub fn lookup_stock(name: &str) -> Option<&'static StockSpec> {
    STOCK_BY_NAME.get(name).copied()
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
    fn stock_rows_are_stock_and_unique() {
        let total: usize = STOCK.iter().map(|s| s.spec.names.len()).sum();
        assert_eq!(
            STOCK_BY_NAME.len(),
            total,
            "a stock op name appears in two rows"
        );
        for s in STOCK {
            assert_eq!(s.spec.gate, Gate::Stock);
            for n in s.spec.names {
                assert!(n.contains("::"), "{n} has no namespace");
                assert!(lookup(n).is_none(), "{n} is also a PyProf op");
            }
            for i in s.args.int64 {
                assert!(s.args.pick.is_empty() || s.args.pick.contains(i));
            }
        }
        assert_eq!(
            lookup_stock("aten::addmm").map(|s| s.spec.rule),
            Some(Rule::Addmm)
        );
        assert!(lookup_stock("addmm").is_none());
        assert!(dispatch("aten", "aten::mm", true).is_none());
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
        let stock: HashSet<std::mem::Discriminant<Rule>> = OPS
            .iter()
            .chain(STOCK.iter().map(|s| &s.spec))
            .map(|s| std::mem::discriminant(&s.rule))
            .collect();
        assert_eq!(stock.len(), 43);
    }
}
