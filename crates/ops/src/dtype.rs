//! Element types as PyProf's markers spell them (`str(dtype)` after the last
//! `.`, or a Python scalar type name), their sizes and their printed names.
//!
//! apex.pyprof knows eleven spellings (pyprof-semantics.md §5.1, plus `bool`)
//! and aborts on anything else; the default mode also knows bf16, the
//! complex, float8 and wide unsigned types (B20) and leaves the byte
//! count of any other type unknown (`na`) instead of aborting.
//!
//! Stock PyTorch markers carry no dtypes: [`Dtype::from_kernel`] reads them
//! from the kernel's name (pyprof-semantics.md §10.4) and
//! [`Dtype::from_cpp`] from the C++ type names of the PyTorch profiler
//! (Kineto's `Input type`).

use std::cell::RefCell;

use crate::memo::{NameMemo, memoised};

/// An element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// `uint8`, `byte`, `char`
    U8,
    /// `int8`
    I8,
    /// `bool`
    Bool,
    /// `float16`, `half`
    F16,
    /// `int16`, `short`
    I16,
    /// `float32`, `float` (also the Python `float` scalar)
    F32,
    /// `int32`, `int` (also the Python `int` scalar)
    I32,
    /// `int64`, `long`
    I64,
    /// `float64`, `double`
    F64,
    /// `bfloat16` (default mode only)
    Bf16,
    /// `complex32`, `chalf` (default mode only)
    C32,
    /// `complex64`, `cfloat` (default mode only)
    C64,
    /// `complex128`, `cdouble` (default mode only)
    C128,
    /// `float8_e4m3fn`, `float8_e4m3fnuz` (default mode only)
    F8E4M3,
    /// `float8_e5m2`, `float8_e5m2fnuz` (default mode only)
    F8E5M2,
    /// `float8_e8m0fnu` (default mode only)
    F8E8M0,
    /// `uint16` (default mode only)
    U16,
    /// `uint32` (default mode only)
    U32,
    /// `uint64` (default mode only)
    U64,
}

/// The spellings apex.pyprof's `Utility` accepts (`typeToBytes`,
/// `typeToString`), in its order.
const APEX: &[(&str, Dtype)] = &[
    ("uint8", Dtype::U8),
    ("int8", Dtype::I8),
    ("byte", Dtype::U8),
    ("char", Dtype::U8),
    ("bool", Dtype::Bool),
    ("float16", Dtype::F16),
    ("half", Dtype::F16),
    ("int16", Dtype::I16),
    ("short", Dtype::I16),
    ("float32", Dtype::F32),
    ("float", Dtype::F32),
    ("int32", Dtype::I32),
    ("int", Dtype::I32),
    ("int64", Dtype::I64),
    ("long", Dtype::I64),
    ("float64", Dtype::F64),
    ("double", Dtype::F64),
];

/// Spellings only the default mode knows (B20).
const EXTENDED: &[(&str, Dtype)] = &[
    ("bfloat16", Dtype::Bf16),
    ("complex32", Dtype::C32),
    ("chalf", Dtype::C32),
    ("complex64", Dtype::C64),
    ("cfloat", Dtype::C64),
    ("complex128", Dtype::C128),
    ("cdouble", Dtype::C128),
    ("float8_e4m3fn", Dtype::F8E4M3),
    ("float8_e4m3fnuz", Dtype::F8E4M3),
    ("float8_e5m2", Dtype::F8E5M2),
    ("float8_e5m2fnuz", Dtype::F8E5M2),
    ("float8_e8m0fnu", Dtype::F8E8M0),
    ("uint16", Dtype::U16),
    ("uint32", Dtype::U32),
    ("uint64", Dtype::U64),
];

impl Dtype {
    /// A spelling apex.pyprof accepts; `None` where apex would abort.
    pub fn parse_apex(text: &str) -> Option<Dtype> {
        APEX.iter().find(|(t, _)| *t == text).map(|(_, d)| *d)
    }

    /// Any spelling the default mode knows; `None` for an unknown type
    /// (its byte count is then unknown, never a crash).
    pub fn parse(text: &str) -> Option<Dtype> {
        Dtype::parse_apex(text)
            .or_else(|| EXTENDED.iter().find(|(t, _)| *t == text).map(|(_, d)| *d))
    }

    /// Size of one element, bytes.
    pub fn size_bytes(self) -> u64 {
        match self {
            Dtype::U8 | Dtype::I8 | Dtype::Bool => 1,
            Dtype::F8E4M3 | Dtype::F8E5M2 | Dtype::F8E8M0 => 1,
            Dtype::F16 | Dtype::I16 | Dtype::Bf16 | Dtype::U16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::C32 | Dtype::U32 => 4,
            Dtype::I64 | Dtype::F64 | Dtype::C64 | Dtype::U64 => 8,
            Dtype::C128 => 16,
        }
    }

    /// The name printed in params (apex's `typeToString` for its types).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8",
            Dtype::I8 => "int8",
            Dtype::Bool => "bool",
            Dtype::F16 => "fp16",
            Dtype::I16 => "int16",
            Dtype::F32 => "fp32",
            Dtype::I32 => "int32",
            Dtype::I64 => "int64",
            Dtype::F64 => "fp64",
            Dtype::Bf16 => "bf16",
            Dtype::C32 => "c32",
            Dtype::C64 => "c64",
            Dtype::C128 => "c128",
            Dtype::F8E4M3 => "fp8e4m3",
            Dtype::F8E5M2 => "fp8e5m2",
            Dtype::F8E8M0 => "fp8e8m0",
            Dtype::U16 => "uint16",
            Dtype::U32 => "uint32",
            Dtype::U64 => "uint64",
        }
    }
}

impl Dtype {
    /// The spelling [`Dtype::parse`] reads back (`float16`, `int64`, …).
    pub fn spelling(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8",
            Dtype::I8 => "int8",
            Dtype::Bool => "bool",
            Dtype::F16 => "float16",
            Dtype::I16 => "int16",
            Dtype::F32 => "float32",
            Dtype::I32 => "int32",
            Dtype::I64 => "int64",
            Dtype::F64 => "float64",
            Dtype::Bf16 => "bfloat16",
            Dtype::C32 => "complex32",
            Dtype::C64 => "complex64",
            Dtype::C128 => "complex128",
            Dtype::F8E4M3 => "float8_e4m3fn",
            Dtype::F8E5M2 => "float8_e5m2",
            Dtype::F8E8M0 => "float8_e8m0fnu",
            Dtype::U16 => "uint16",
            Dtype::U32 => "uint32",
            Dtype::U64 => "uint64",
        }
    }

    /// A floating-point (or complex) type.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Dtype::F16
                | Dtype::F32
                | Dtype::F64
                | Dtype::Bf16
                | Dtype::C32
                | Dtype::C64
                | Dtype::C128
                | Dtype::F8E4M3
                | Dtype::F8E5M2
                | Dtype::F8E8M0
        )
    }

    /// A C++ type name as CUDA kernels and the PyTorch profiler spell it
    /// (`float`, `c10::Half`, `long int`, `cutlass::bfloat16_t`, …).
    /// `None` for anything else (`Scalar`, `TensorList`, `unsigned int`,
    /// which is an index type in kernel names).
    pub fn from_cpp(name: &str) -> Option<Dtype> {
        // kernel names have thousands of tokens: reject most by length
        if name.len() < 3 || name.len() > 24 {
            return None;
        }
        CPP.iter().find(|(t, _)| *t == name).map(|(_, d)| *d)
    }

    /// The element type a kernel's (short and demangled long) name says it
    /// works on. Precedence (pyprof-semantics.md §10.4): C++ types among
    /// the template arguments (and lambda parameters) of the long name, the
    /// first floating type winning over integer types; then the type tokens
    /// of cuBLAS, cuDNN, CUTLASS and nvjet names. `None`: the name does not
    /// say (Triton kernels, `OpaqueType<N>` copies).
    pub fn from_kernel(short: &str, long: &str) -> Option<Dtype> {
        thread_local! {
            static MEMO: RefCell<NameMemo<Option<Dtype>>> = RefCell::new(NameMemo::default());
        }
        memoised(&MEMO, short, long, |short, long| {
            template_type(long)
                .or_else(|| library_token(long))
                .or_else(|| library_token(short))
        })
    }
}

/// C++ spellings.
const CPP: &[(&str, Dtype)] = &[
    ("float", Dtype::F32),
    ("double", Dtype::F64),
    ("c10::Half", Dtype::F16),
    ("at::Half", Dtype::F16),
    ("__half", Dtype::F16),
    ("half", Dtype::F16),
    ("cutlass::half_t", Dtype::F16),
    ("c10::BFloat16", Dtype::Bf16),
    ("at::BFloat16", Dtype::Bf16),
    ("__nv_bfloat16", Dtype::Bf16),
    ("cutlass::bfloat16_t", Dtype::Bf16),
    ("c10::Float8_e4m3fn", Dtype::F8E4M3),
    ("c10::Float8_e4m3fnuz", Dtype::F8E4M3),
    ("__nv_fp8_e4m3", Dtype::F8E4M3),
    ("cutlass::float_e4m3_t", Dtype::F8E4M3),
    ("c10::Float8_e5m2", Dtype::F8E5M2),
    ("c10::Float8_e5m2fnuz", Dtype::F8E5M2),
    ("__nv_fp8_e5m2", Dtype::F8E5M2),
    ("cutlass::float_e5m2_t", Dtype::F8E5M2),
    ("c10::complex<float>", Dtype::C64),
    ("c10::complex<double>", Dtype::C128),
    ("c10::complex<c10::Half>", Dtype::C32),
    ("long", Dtype::I64),
    ("long int", Dtype::I64),
    ("long long", Dtype::I64),
    ("int64_t", Dtype::I64),
    ("int", Dtype::I32),
    ("int32_t", Dtype::I32),
    ("short", Dtype::I16),
    ("short int", Dtype::I16),
    ("int16_t", Dtype::I16),
    ("signed char", Dtype::I8),
    ("int8_t", Dtype::I8),
    ("unsigned char", Dtype::U8),
    ("uint8_t", Dtype::U8),
    ("bool", Dtype::Bool),
];

/// The first C++ type among the template arguments and lambda parameters
/// of a demangled name, a floating type winning over integer types (not
/// the function's own parameter list, whose `int`s are counts and indices).
fn template_type(long: &str) -> Option<Dtype> {
    if long.contains("c10::complex<") {
        for (token, d) in [
            ("c10::complex<float>", Dtype::C64),
            ("c10::complex<double>", Dtype::C128),
            ("c10::complex<c10::Half>", Dtype::C32),
        ] {
            if long.contains(token) {
                return Some(d);
            }
        }
    }
    let mut first_int = None;
    let mut depth = 0usize;
    let mut lambda = 0usize;
    let mut start = 0usize;
    for (i, b) in long.bytes().enumerate() {
        if !matches!(b, b'<' | b'>' | b',' | b'(' | b')' | b'{' | b'}') {
            continue;
        }
        if (depth > 0 || lambda > 0) && i - start <= 26 {
            let token = long.get(start..i).unwrap_or("").trim();
            match Dtype::from_cpp(token) {
                Some(d) if d.is_float() => return Some(d),
                Some(d) if first_int.is_none() => first_int = Some(d),
                _ => {}
            }
        }
        match b {
            b'<' => depth += 1,
            b'>' => depth = depth.saturating_sub(1),
            b'(' if long.get(..i).is_some_and(|h| h.ends_with("{lambda")) => lambda += 1,
            b')' if lambda > 0 => lambda -= 1,
            _ => {}
        }
        start = i + 1;
    }
    first_int
}

/// Type tokens of library kernel names, most specific first (`bf16`
/// before `f16`, which it contains).
fn library_token(name: &str) -> Option<Dtype> {
    const TOKENS: &[(&[&str], Dtype)] = &[
        (&["bf16", "bfloat16"], Dtype::Bf16),
        (&["e4m3"], Dtype::F8E4M3),
        (&["e5m2"], Dtype::F8E5M2),
        (&["tf32"], Dtype::F32),
        (
            &[
                "hgemm", "h884", "h1688", "h16816", "fp16", "f16f16", "_f16_",
            ],
            Dtype::F16,
        ),
        (
            &[
                "sgemm",
                "scudnn",
                "f32f32",
                "_f32_",
                "s1688gemm",
                "s16816gemm",
                "s884gemm",
                "cgemm",
            ],
            Dtype::F32,
        ),
        (&["dgemm", "f64f64"], Dtype::F64),
        (&["i8816", "imma", "int8", "s8s8"], Dtype::I8),
    ];
    if let Some(d) = nvjet(name) {
        return Some(d);
    }
    TOKENS
        .iter()
        .find(|(tokens, _)| tokens.iter().any(|t| name.contains(t)))
        .map(|(_, d)| *d)
}

/// Hopper+ cuBLAS `nvjet_<code>_…`: the first letter of the code is the
/// input type (`hsh`: fp16, `bsb`: bf16, `tst`: tf32, `sss`: fp32;
/// unverified beyond `hsh` and `tst`).
fn nvjet(name: &str) -> Option<Dtype> {
    let rest = name.get(name.find("nvjet_")? + "nvjet_".len()..)?;
    match rest.bytes().next()? {
        b'h' => Some(Dtype::F16),
        b'b' => Some(Dtype::Bf16),
        b't' | b's' => Some(Dtype::F32),
        b'd' => Some(Dtype::F64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(short: &str, long: &str) -> Option<&'static str> {
        Dtype::from_kernel(short, long).map(Dtype::name)
    }

    #[test]
    fn kernel_names_tell_dtypes() {
        // template arguments (real long names of the corpus)
        let cases: &[(&str, Option<&str>)] = &[
            (
                "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
                Some("fp32"),
            ),
            (
                "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&)",
                Some("bf16"),
            ),
            (
                "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&)",
                Some("bf16"),
            ),
            (
                "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<double, at::native::func_wrapper_t<double, at::native::sum_functor<double, double, double>::operator()(at::TensorIterator&)::{lambda(double, double)#1}>, unsigned int, double, 4> >(at::native::ReduceOp<double>)",
                Some("fp64"),
            ),
            (
                "void at::native::(anonymous namespace)::CatArrayBatchedCopy<long, unsigned int, 2, 128, 1>(long*, int)",
                Some("int64"),
            ),
            (
                "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false>(flash::Flash_fwd_params)",
                Some("bf16"),
            ),
            (
                "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, adamMode_t, float, int, int>(int, int volatile*)",
                Some("fp32"),
            ),
            (
                "void at::native::(anonymous namespace)::elementwise_kernel_with_index<int, at::native::arange_cuda_out(c10::Scalar const&)::{lambda(long)#1}>(int, long)",
                Some("int32"),
            ),
            // the function's own parameters are not types of the data
            ("void kernel_x(int, long)", None),
            // libraries
            (
                "ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x3_tn",
                Some("fp16"),
            ),
            (
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                Some("bf16"),
            ),
            (
                "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3",
                Some("fp32"),
            ),
            (
                "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw",
                Some("fp32"),
            ),
            (
                "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_nn_align4>(cutlass_80_tensorop_s1688gemm_128x64_16x6_nn_align4::Params)",
                Some("fp32"),
            ),
            (
                "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_bf16_256x128_32x3_nn_align8>(Params)",
                Some("bf16"),
            ),
            ("volta_h884gemm_64x64_ldg8_nn", Some("fp16")),
            ("ampere_sgemm_32x32_sliced1x4_tn", Some("fp32")),
            ("volta_scudnn_128x64_relu_interior_nn_v1", Some("fp32")),
            (
                "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN",
                Some("fp32"),
            ),
            ("nvjet_hsh_128x256_64x4_2x1_v_bz_coopB_TNT", Some("fp16")),
            ("sm89_xmma_gemm_e4m3f32_e4m3f32_f32", Some("fp8e4m3")),
            ("triton_poi_fused_add_cos_sin_0", None),
            ("", None),
        ];
        for (long, want) in cases {
            assert_eq!(data("", long), *want, "{long}");
        }
        // a cast kernel: <dst, src>: the first
        assert_eq!(data("", "void copy<c10::Half, float>(int)"), Some("fp16"));
        // the short name is read when the long one says nothing
        assert_eq!(data("volta_hgemm_nn", "x"), Some("fp16"));
    }

    #[test]
    fn cpp_names() {
        assert_eq!(Dtype::from_cpp("long int"), Some(Dtype::I64));
        assert_eq!(Dtype::from_cpp("c10::Half"), Some(Dtype::F16));
        assert_eq!(Dtype::from_cpp("Scalar"), None);
        assert_eq!(Dtype::from_cpp("unsigned int"), None);
        for (_, d) in CPP {
            assert_eq!(Dtype::parse(d.spelling()), Some(*d));
        }
    }

    #[test]
    fn apex_table_matches_utility() {
        assert_eq!(Dtype::parse_apex("float32").map(Dtype::size_bytes), Some(4));
        assert_eq!(Dtype::parse_apex("char").map(Dtype::name), Some("uint8"));
        assert_eq!(Dtype::parse_apex("bool").map(Dtype::size_bytes), Some(1));
        assert_eq!(Dtype::parse_apex("bfloat16"), None);
        assert_eq!(Dtype::parse_apex("NoneType"), None);
        assert_eq!(Dtype::parse("bfloat16").map(Dtype::name), Some("bf16"));
        assert_eq!(Dtype::parse("complex128").map(Dtype::size_bytes), Some(16));
        assert_eq!(
            Dtype::parse("float8_e4m3fn").map(Dtype::size_bytes),
            Some(1)
        );
        assert_eq!(Dtype::parse("qint8"), None);
    }

    #[test]
    fn no_spelling_twice() {
        let mut all: Vec<&str> = APEX.iter().chain(EXTENDED).map(|(t, _)| *t).collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
