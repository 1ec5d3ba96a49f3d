//! Tensor-core detection from kernel names.
//!
//! apex.pyprof has no shared rule: each model tests a few substrings of the
//! short name (pyprof-apex-differences.md §4.3). The default mode uses one
//! list for every model that reports 1/0: PyProf's whitelist
//! (pyprof-semantics.md §7) plus the Ampere, Hopper and Blackwell names of
//! §10.6, matched on the short **and** the long name (B8).

use std::cell::RefCell;
use std::sync::LazyLock;

use regex::Regex;

use crate::memo::{NameMemo, memoised};

/// Substrings of the short name that mean tensor cores for apex's GEMM
/// models (Addmm, Mm, Bmm, Matmul).
pub const APEX_GEMM: &[&str] = &["884gemm", "1688gemm"];
/// apex's Linear and RNNCell models.
pub const APEX_LINEAR: &[&str] = &["884gemm"];
/// apex's Conv model.
pub const APEX_CONV: &[&str] = &["884cudnn", "1688cudnn"];

/// The default-mode tokens.
pub const TOKENS: &[&str] = &[
    // PyProf HEAD's whitelist (tc.py)
    "h884",
    "s884",
    "h1688",
    "s1688",
    "hmma",
    "i8816",
    "16816",
    "dgrad_1x1_stride_2x2",
    "first_layer_wgrad_kernel",
    "conv1x1",
    "conv2d_c1_k1",
    "direct_group",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_warp_specialized_implicit_gemm",
    "xmma_gemm",
    "xmma_sparse_gemm",
    "c1688",
    // Ampere / Hopper (semantics §10.6)
    "nvjet",
    "wgmma",
    "gmma",
    "tensorop",
    "s16816",
    "16832",
    "imma",
    "xmma",
    "sm80_xmma",
    "sm90_xmma",
    "_tf32_",
    "flash_fwd",
    "flash_bwd",
    "fmha",
    "cutlass_80_tensorop",
    "cutlass3x_sm90",
    // Blackwell
    "cutlass3x_sm100",
    "cutlass3x_sm120",
    "sm100_xmma",
    "tcgen05",
    // CUTLASS 2 long names spell the operator class out
    "OpClassTensorOp",
];

static TC: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let alternation: Vec<String> = TOKENS.iter().map(|t| regex::escape(t)).collect();
    Regex::new(&alternation.join("|")).ok()
});

/// True when `name` contains any of `tokens` (apex's per-model tests).
pub fn contains_any(name: &str, tokens: &[&str]) -> bool {
    tokens.iter().any(|t| name.contains(t))
}

/// Default mode: does this kernel use tensor cores? cuBLAS's `xmma` kernels
/// that say `ffma` (e.g. `sm80_xmma_gemm_f32f32_…_ffma_…`) run on CUDA
/// cores.
pub fn uses_tensor_cores(short: &str, long: &str) -> bool {
    thread_local! {
        static MEMO: RefCell<NameMemo<bool>> = RefCell::new(NameMemo::default());
    }
    memoised(&MEMO, short, long, |short, long| {
        if short.contains("_ffma") || long.contains("_ffma") {
            return false;
        }
        match &*TC {
            Some(re) => re.is_match(short) || re.is_match(long),
            None => contains_any(short, TOKENS) || contains_any(long, TOKENS),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_compiles() {
        assert!(TC.is_some());
    }

    #[test]
    fn recognises_modern_kernels() {
        for name in [
            "volta_h884gemm_64x64_ldg8_nn",
            "turing_h1688gemm_128x128_ldg8_tn",
            "ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x3_tn",
            "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            "nvjet_hsh_128x256_64x4_2x1_v_bz_coopB_TNT",
            "cutlass_80_tensorop_s1688gemm_bf16_256x128_32x3_nn_align8",
            "flash_fwd_kernel",
            "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw",
            "cutlass3x_sm100_tensorop_gemm_f16_f16_f32_void_f16_128x128x64_1x1x1_0_tnn_align8_1sm",
        ] {
            assert!(uses_tensor_cores(name, ""), "{name}");
        }
        assert!(uses_tensor_cores(
            "Kernel",
            "void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8>(Params)"
        ));
        for name in [
            "volta_sgemm_128x64_nn",
            "elementwise_kernel",
            "ampere_sgemm_128x64_nn",
            "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
        ] {
            assert!(!uses_tensor_cores(name, ""), "{name}");
        }
    }

    #[test]
    fn apex_lists() {
        assert!(contains_any("turing_h1688gemm_128x128_ldg8_tn", APEX_GEMM));
        assert!(!contains_any(
            "turing_h1688gemm_128x128_ldg8_tn",
            APEX_LINEAR
        ));
        assert!(!contains_any(
            "ampere_h16816gemm_128x128_ldg8_tn",
            APEX_GEMM
        ));
        assert!(contains_any("volta_fp16_s884cudnn_fp16_256x64", APEX_CONV));
    }
}
