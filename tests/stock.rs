//! Stock PyTorch traces (issue #4, docs/stock.md): FLOPs and bytes from
//! `emit_nvtx(record_shapes=True)` markers with no PyProf instrumentation.
//!
//! - a synthetic training step written in the exact nsys 2026.2 schema by
//!   `rprof_testkit::OpTimeline`, whose markers follow PyTorch 2.x's
//!   grammar byte for byte, with every expected number computed by hand
//!   in the comments;
//! - the real traces: nsys-ai (PyTorch 2.x markers with `op_id`, no
//!   sizes), DLProf's w_Relu capture with DLProf's own kernel → op table as
//!   an independent check of the attribution, and Kineto traces whose
//!   operators carry sizes and exact dtypes.

use std::collections::BTreeMap;
use std::path::Path;

use rprof_ops::{Engine, Mode, Num, Outcome, decode_first_marker, estimate_kernel};
use rprof_testkit::OpTimeline;
use rprof_trace::model::{Kernels, Line, read_line};

use crate::util::{fixture, rprof, run};

/// `rprof parse -q FILE` (JSON Lines).
fn parse(path: &Path) -> String {
    let out = run(rprof().args(["parse", "-q"]).arg(path));
    assert!(
        out.status.success(),
        "parse {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `rprof prof --csv -c COLS` on records: the rows (header dropped) and
/// stderr.
fn prof_csv(records: &str, cols: &str) -> (Vec<Vec<String>>, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.dict");
    std::fs::write(&p, records).unwrap();
    let out = run(rprof().args(["prof", "--csv", "-c", cols]).arg(&p));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = csv::Reader::from_reader(out.stdout.as_slice())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (rows, String::from_utf8(out.stderr).unwrap())
}

// ------------------------------------------------------------ synthetic

/// One training step of a small model: the marker texts PyTorch 2.x's
/// NVTX observer writes (`name, seq = N, op_id = M, sizes = […],
/// input_op_ids = […]`), forward on thread 100, backward on the autograd
/// thread 101. `it` shifts the op ids of a second iteration.
fn forward(t: &mut OpTimeline, it: i64) {
    let id = |n: i64| n + 1000 * it;
    // linear 1, fp16: x [32, 512], w [1024, 512], b [1024]
    t.op(
        100,
        &[
            &format!("aten::linear, seq = 11, op_id = {}, sizes = [[32, 512], [1024, 512], [1024]], input_op_ids = [(0,-1), (0,-1), (0,-1)]", id(33)),
            &format!("aten::addmm, seq = 12, op_id = {}, sizes = [[1024], [32, 512], [512, 1024], [], []], input_op_ids = [(0,-1), (0,-1), ({},0), (0,-1), (0,-1)]", id(35), id(34)),
        ],
        &["ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x3_tn"],
    );
    // linear 2, fp16, split-K: x [32, 1024], w [4096, 1024]
    t.op(
        100,
        &[
            &format!("aten::linear, seq = 13, op_id = {}, sizes = [[32, 1024], [4096, 1024], [4096]], input_op_ids = [({},0), (0,-1), (0,-1)]", id(36), id(35)),
            &format!("aten::addmm, seq = 14, op_id = {}, sizes = [[4096], [32, 1024], [1024, 4096], [], []], input_op_ids = [(0,-1), ({},0), ({},0), (0,-1), (0,-1)]", id(38), id(35), id(37)),
        ],
        &[
            "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_execute_split_k_kernel__5x_cublas",
            "void splitKreduce_kernel<__half, __half, float, __half, true, false, false>(cublasSplitKParams<float>, __half const*, __half const*, __half*, float const*, float const*, __half const*, __half const*, __half*, void*, long, __half*, int*)",
        ],
    );
    // conv, fp16: x [8, 64, 56, 56], w [128, 64, 3, 3], stride 2, padding 1
    // (ints print as []): the output [8, 128, 28, 28] is not in the marker
    t.op(
        100,
        &[
            &format!("aten::conv2d, seq = 20, op_id = {}, sizes = [[8, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]", id(40)),
            &format!("aten::convolution, seq = 20, op_id = {}, sizes = [[8, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]", id(41)),
            &format!("aten::_convolution, seq = 20, op_id = {}, sizes = [[8, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]", id(42)),
            &format!("aten::cudnn_convolution, seq = 20, op_id = {}, sizes = [[8, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]", id(43)),
        ],
        &[
            "void cudnn::ops::nchwToNhwcKernel<__half, __half, float, false, true, (cudnnKernelDataType_t)0>(cudnn::ops::nchw2nhwc_params_t<float>, __half const*, __half*)",
            "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16_execute_kernel__5x_cudnn",
            "void cudnn::ops::nhwcToNchwKernel<__half, __half, float, true, false, (cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>, __half const*, __half*)",
        ],
    );
    // its consumer names it in input_op_ids: the output shape
    t.op(
        100,
        &[&format!("aten::relu, seq = 21, op_id = {}, sizes = [[8, 128, 28, 28]], input_op_ids = [({},0)]", id(45), id(43))],
        &["void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(c10::Half)#1}, at::detail::Array<char*, 2>)"],
    );
    // attention, bf16: q, k, v [2, 8, 1024, 64]; the flash kernel's own op
    // has the [B, L, H, E] layout
    let q = "[2, 8, 1024, 64]";
    let ql = "[2, 1024, 8, 64]";
    t.op(
        100,
        &[
            &format!("aten::scaled_dot_product_attention, seq = 30, op_id = {}, sizes = [{q}, {q}, {q}, [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]", id(50)),
            &format!("aten::_scaled_dot_product_flash_attention, seq = 30, op_id = {}, sizes = [{q}, {q}, {q}, [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]", id(51)),
            &format!("aten::_flash_attention_forward, op_id = {}, sizes = [{ql}, {ql}, {ql}, [], [], [], [], [], [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]", id(52)),
        ],
        &["void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, false, false, false, false, true, false, false>(pytorch_flash::Flash_fwd_params)"],
    );
    // layer norm, fp32: x [32, 1024], w and b [1024]
    t.op(
        100,
        &[
            &format!("aten::layer_norm, seq = 40, op_id = {}, sizes = [[32, 1024], [], [1024], [1024], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]", id(60)),
            &format!("aten::native_layer_norm, seq = 40, op_id = {}, sizes = [[32, 1024], [], [1024], [1024], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]", id(61)),
        ],
        &["void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)"],
    );
}

fn backward(t: &mut OpTimeline) {
    let eval = |n: &str| format!("autograd::engine::evaluate_function: {n}");
    // layer norm: the backward op inside the node has the sizes
    t.op(
        101,
        &[
            &eval("NativeLayerNormBackward0"),
            "NativeLayerNormBackward0, seq = 40, op_id = 90, sizes = [[32, 1024]]",
            "aten::native_layer_norm_backward, op_id = 91, sizes = [[32, 1024], [32, 1024], [], [32, 1], [32, 1], [1024], [1024], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]",
        ],
        &[
            "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<float, float>(float const*, float const*, float const*, float const*, float const*, float*, int)",
            "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, long, float const*, float const*, float const*, float const*, float*, float*)",
        ],
    );
    // attention
    let q = "[2, 8, 1024, 64]";
    let ql = "[2, 1024, 8, 64]";
    let traits = "Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 2, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >";
    t.op(
        101,
        &[
            &eval("ScaledDotProductFlashAttentionBackward0"),
            "ScaledDotProductFlashAttentionBackward0, seq = 30, op_id = 95, sizes = [[2, 8, 1024, 64]]",
            &format!("aten::_scaled_dot_product_flash_attention_backward, op_id = 96, sizes = [{q}, {q}, {q}, {q}, {q}, [2, 8, 1024], [], [], [], [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]"),
            &format!("aten::_flash_attention_backward, op_id = 97, sizes = [{ql}, {ql}, {ql}, {ql}, {ql}, [2, 8, 1024], [], [], [], [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]"),
        ],
        &[
            &format!("void pytorch_flash::flash_bwd_dot_do_o_kernel<true, {traits}>(pytorch_flash::Flash_bwd_params)"),
            &format!("void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<{traits}, false, false, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)"),
            &format!("void pytorch_flash::flash_bwd_convert_dq_kernel<{traits}>(pytorch_flash::Flash_bwd_params, int)"),
        ],
    );
    // relu
    t.op(
        101,
        &[
            &eval("ReluBackward0"),
            "ReluBackward0, seq = 21, op_id = 98, sizes = [[8, 128, 28, 28]]",
            "aten::threshold_backward, op_id = 99, sizes = [[8, 128, 28, 28], [8, 128, 28, 28], []], input_op_ids = [(0,-1), (0,-1), (0,-1)]",
        ],
        &["void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::native::(anonymous namespace)::threshold_kernel_impl<c10::Half>(at::TensorIteratorBase&, c10::Half, c10::Half)::{lambda(c10::Half, c10::Half)#1}>, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::native::(anonymous namespace)::threshold_kernel_impl<c10::Half>(at::TensorIteratorBase&, c10::Half, c10::Half)::{lambda(c10::Half, c10::Half)#1}>, at::detail::Array<char*, 3>)"],
    );
    // conv: dgrad and wgrad
    t.op(
        101,
        &[
            &eval("ConvolutionBackward0"),
            "ConvolutionBackward0, seq = 20, op_id = 100, sizes = [[8, 128, 28, 28]]",
            "aten::convolution_backward, op_id = 101, sizes = [[8, 128, 28, 28], [8, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]",
        ],
        &[
            "sm80_xmma_dgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16_execute_kernel__5x_cudnn",
            "sm80_xmma_wgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16_execute_kernel__5x_cudnn",
        ],
    );
    // the linears: dgrad and wgrad as aten::mm inside the node, the bias
    // gradient as aten::sum in the engine's wrapper after the node closed
    let hgemm = "ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x3_nn";
    let sum = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::Half, at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::Half, 4> >(at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::Half, at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::Half, 4>)";
    for (seq, n_out, k_in, ids) in [(14, 4096, 1024, 110), (12, 1024, 512, 120)] {
        let node = format!("AddmmBackward0, seq = {seq}, op_id = {ids}, sizes = [[32, {n_out}]]");
        t.op(
            101,
            &[
                &eval("AddmmBackward0"),
                &node,
                &format!("aten::mm, op_id = {}, sizes = [[32, {n_out}], [{n_out}, {k_in}]], input_op_ids = [(0,-1), (0,-1)]", ids + 1),
            ],
            &[hgemm],
        );
        t.op(
            101,
            &[
                &eval("AddmmBackward0"),
                &node,
                &format!("aten::mm, op_id = {}, sizes = [[{k_in}, 32], [32, {n_out}]], input_op_ids = [(0,-1), (0,-1)]", ids + 2),
            ],
            &[hgemm],
        );
        t.op(
            101,
            &[
                &eval("AddmmBackward0"),
                &format!("aten::sum, op_id = {}, sizes = [[32, {n_out}], [], [], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1)]", ids + 3),
            ],
            &[sum],
        );
    }
}

/// torch.optim.AdamW(fused=True) and the foreach Adam, over two
/// parameters: w [1024, 512] and b [1024] (525312 elements), fp32.
fn optimizer(t: &mut OpTimeline) {
    let (a, b) = ("[1024, 512]", "[1024]");
    let list = format!("{a}, {b}");
    t.op(
        100,
        &[
            "Optimizer.step#AdamW.step, op_id = 130",
            // params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs (empty:
            // one []), state_steps (0-dim: []), lr … found_inf
            &format!("aten::_fused_adamw_, op_id = 131, sizes = [{list}, {list}, {list}, {list}, [], [], [], [], [], [], [], [], [], [], [], []]"),
        ],
        &[
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double, double, double, double, double, bool, float const*, float const*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double, double, double, double, double, bool, float const*, float const*)",
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double, double, double, double, double, bool, float const*, float const*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double, double, double, double, double, bool, float const*, float const*)",
        ],
    );
    let step = "Optimizer.step#Adam.step, op_id = 140";
    let mta = |functor: &str| {
        format!(
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::{functor}, float>(at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::{functor}, float)"
        )
    };
    for (op, sizes, functor) in [
        // exp_avg.lerp_(grad, 1 - beta1)
        (
            "aten::_foreach_lerp_, op_id = 141",
            format!("[{list}, {list}, []]"),
            "TernaryOpScalarFunctor<float, 2, 2, 0>",
        ),
        // exp_avg_sq.mul_(beta2)
        (
            "aten::_foreach_mul_, op_id = 142",
            format!("[{list}, []]"),
            "BinaryOpScalarFunctor<float, 1, 1, 0>",
        ),
        // exp_avg_sq.addcmul_(grad, grad, 1 - beta2)
        (
            "aten::_foreach_addcmul_, op_id = 143",
            format!("[{list}, {list}, {list}, []]"),
            "PointwiseOpScalarFunctor<float, 3, 3, 0>",
        ),
        // exp_avg_sq.sqrt()
        (
            "aten::_foreach_sqrt, op_id = 144",
            format!("[{list}]"),
            "UnaryOpFunctor<float, 2, 1, 1>",
        ),
    ] {
        t.op(
            100,
            &[step, &format!("{op}, sizes = {sizes}")],
            &[&mta(functor)],
        );
    }
}

/// A Triton kernel (no type in its name) and a malformed marker.
fn odd(t: &mut OpTimeline) {
    t.op(
        100,
        &["aten::mul, seq = 50, op_id = 2120, sizes = [[1024], [1024]], input_op_ids = [(0,-1), (0,-1)]"],
        &["triton_poi_fused_mul_0"],
    );
    t.op(
        100,
        &["aten::add, seq = 51, op_id = 2121, sizes = [[1024], [a]]"],
        &["void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"],
    );
}

/// Expected `dir|mod|op|params|tc|flops|bytes` of every kernel, in order.
fn expected() -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut row = |dir: &str, op: &str, params: &str, tc: &str, flops: &str, bytes: &str| {
        let m = if op == "na" || op == "Addmm" {
            "na"
        } else {
            "aten"
        };
        v.push(format!("{dir}|{m}|{op}|{params}|{tc}|{flops}|{bytes}"));
    };
    let lin1 = "M=1024,N=32,K=512,fp16,";
    let lin2 = "M=4096,N=32,K=1024,fp16,";
    let conv = |p: i64| format!("N=8,C=64,H=56,W=56,K=128,P={p},Q={p},R=3,S=3,g=1,fp16,");
    let sdpa = "B=2,H=8,L=1024,S=1024,E=64,Ev=64,bf16,";
    for it in 1..=2 {
        // 2·32·1024·512 = 33554432; 2·(32·512 + 512·1024 + 32·1024) = 1146880
        row("fprop", "linear", lin1, "1", "33554432", "1146880");
        // 2·32·4096·1024 = 268435456; 2·(32·1024 + 1024·4096 + 32·4096) = 8716288
        row("fprop", "linear", lin2, "1", "268435456", "8716288");
        // the split-K reduction is not the GEMM: m·n = 131072 adds,
        // 2·2·131072 = 524288 bytes (PyProf's default-mode rule, B22)
        row("fprop", "linear", lin2, "0", "131072", "524288");
        // layout kernels: nothing
        let (p, flops, bytes) = if it == 1 {
            // first call: output unknown, stride 1 "same" assumed (P = Q = 56):
            // 2·8·128·56·56·64·9 = 3699376128;
            // 2·(8·64·56·56 + 128·64·9 + 8·128·56·56) = 2·(1605632 + 73728 + 3211264) = 9781248
            (56, "3699376128", "9781248")
        } else {
            // learned from the relu's input_op_ids: P = Q = 28:
            // 2·8·128·28·28·64·9 = 924844032;
            // 2·(1605632 + 73728 + 8·128·28·28 = 802816) = 4964352
            (28, "924844032", "4964352")
        };
        row("fprop", "conv2d", &conv(p), "0", "0", "0");
        row("fprop", "conv2d", &conv(p), "1", flops, bytes);
        row("fprop", "conv2d", &conv(p), "0", "0", "0");
        // relu: numel = 8·128·28·28 = 802816 FLOPs; 2·2·802816 = 3211264 bytes
        row(
            "fprop",
            "relu",
            "T=(8,128,28,28),fp16,",
            "-",
            "802816",
            "3211264",
        );
        // sdpa: 2·(2·8)·1024·1024·(64 + 64) = 4294967296 FLOPs;
        // 2·(4·2·8·1024·64) + 4·16·1024 = 8388608 + 65536 = 8454144 bytes
        row(
            "fprop",
            "scaled_dot_product_attention",
            sdpa,
            "1",
            "4294967296",
            "8454144",
        );
        // layer norm: 8·32768 = 262144; 4·(2·32768 + 2·1024) = 270336
        row(
            "fprop",
            "layer_norm",
            "T=(32,1024),fp32,",
            "-",
            "262144",
            "270336",
        );
        if it == 2 {
            break;
        }
        // ---- backward
        // 8·32768 = 262144; 4·(3·32768 + 2·1024) = 401408; the second
        // kernel of the op: counted already
        row(
            "bprop",
            "layer_norm",
            "T=(32,1024),fp32,",
            "-",
            "262144",
            "401408",
        );
        row("bprop", "layer_norm", "T=(32,1024),fp32,", "-", "0", "0");
        // attention backward: 2.5 · 4294967296 = 10737418240 FLOPs;
        // 2·(2·4·1048576) + 65536 = 16842752 bytes; its helpers nothing
        row("bprop", "scaled_dot_product_attention", sdpa, "1", "0", "0");
        row(
            "bprop",
            "scaled_dot_product_attention",
            sdpa,
            "1",
            "10737418240",
            "16842752",
        );
        row("bprop", "scaled_dot_product_attention", sdpa, "1", "0", "0");
        // threshold_backward: 802816 FLOPs; 3·2·802816 = 4816896 bytes
        row(
            "bprop",
            "relu",
            "T=(8,128,28,28),fp16,",
            "-",
            "802816",
            "4816896",
        );
        // dgrad, wgrad: each the forward's 924844032 FLOPs and
        // 2·(802816 + 1605632 + 73728) = 4964352 bytes
        row("bprop", "conv2d", &conv(28), "1", "924844032", "4964352");
        row("bprop", "conv2d", &conv(28), "1", "924844032", "4964352");
        // linear 2: dgrad mm([32,4096],[4096,1024]): 2·32·1024·4096 = 268435456,
        // 2·(32·4096 + 4096·1024 + 32·1024) = 8716288; wgrad mm([1024,32],[32,4096])
        // the same counts; bias: sum of [32, 4096]: 131072 FLOPs, 2·131072 bytes
        row(
            "bprop",
            "linear",
            "M=1024,N=32,K=4096,fp16,",
            "1",
            "268435456",
            "8716288",
        );
        row(
            "bprop",
            "linear",
            "M=4096,N=1024,K=32,fp16,",
            "1",
            "268435456",
            "8716288",
        );
        row(
            "bprop",
            "linear",
            "T=(32,4096),fp16,",
            "-",
            "131072",
            "262144",
        );
        // linear 1: 2·32·512·1024 = 33554432, 1146880 bytes, twice; bias 32768, 65536
        row(
            "bprop",
            "linear",
            "M=512,N=32,K=1024,fp16,",
            "1",
            "33554432",
            "1146880",
        );
        row(
            "bprop",
            "linear",
            "M=1024,N=512,K=32,fp16,",
            "1",
            "33554432",
            "1146880",
        );
        row(
            "bprop",
            "linear",
            "T=(32,1024),fp16,",
            "-",
            "32768",
            "65536",
        );
        // ---- optimizer, P = 2 tensors, E = 1024·512 + 1024 = 525312 elements
        // fused AdamW: 0 FLOPs (PyProf's convention); E·(6·4 + 4) = 14708736
        // bytes on the first kernel
        row(
            "fprop",
            "_fused_adamw_",
            "P=2,E=525312,fp32,fp32,",
            "-",
            "0",
            "14708736",
        );
        row(
            "fprop",
            "_fused_adamw_",
            "P=2,E=525312,fp32,fp32,",
            "-",
            "0",
            "0",
        );
        // lerp_: 3·E = 1575936 FLOPs; 4·(2E read + E written) = 6303744
        row(
            "fprop",
            "_foreach_lerp_",
            "P=2,L=2,E=525312,fp32,",
            "-",
            "1575936",
            "6303744",
        );
        // mul_: E = 525312; 4·(E + E) = 4202496
        row(
            "fprop",
            "_foreach_mul_",
            "P=2,L=1,E=525312,fp32,",
            "-",
            "525312",
            "4202496",
        );
        // addcmul_: 3·E = 1575936; 4·(3E + E) = 8404992
        row(
            "fprop",
            "_foreach_addcmul_",
            "P=2,L=3,E=525312,fp32,",
            "-",
            "1575936",
            "8404992",
        );
        // sqrt: 20·E = 10506240; 4·(E + E) = 4202496
        row(
            "fprop",
            "_foreach_sqrt",
            "P=2,L=1,E=525312,fp32,",
            "-",
            "10506240",
            "4202496",
        );
    }
    // the Triton kernel: FLOPs (numel), no dtype: bytes unknown (an empty
    // CSV cell in the default mode)
    row("fprop", "mul", "T=[(1024,),(1024,)],?,", "-", "1024", "");
    // the malformed marker: kept as "other", the op is still named
    row("fprop", "add", "sizes=na,fp32,", "-", "", "");
    v
}

/// The synthetic training step (two forward passes, a backward, the
/// optimizer and the odd cases) as an nsys export in `dir`.
fn write_step(dir: &Path) -> std::path::PathBuf {
    let mut t = OpTimeline::new();
    forward(&mut t, 1);
    backward(&mut t);
    optimizer(&mut t);
    forward(&mut t, 2);
    odd(&mut t);
    let path = dir.join("step.sqlite");
    t.synth.write_nsys(&path).unwrap();
    path
}

#[test]
fn synthetic_training_step_hand_computed() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_step(dir.path());
    let records = parse(&path);
    let (rows, err) = prof_csv(&records, "dir,mod,op,kernel,params,tc,flops,bytes");
    let got: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{}|{}|{}|{}|{}|{}|{}",
                r[0], r[1], r[2], r[4], r[5], r[6], r[7]
            )
        })
        .collect();
    let want = expected();
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "row {} ({})", i + 1, rows[i][3]);
    }
    // stderr: one line per kind of unknown value
    assert!(
        err.contains(
            "3 rows with estimated shapes; first at row 4: convolution output size unknown"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "1 rows whose dtype the kernel name does not tell (? in params, bytes na); first at row"
        ),
        "{err}"
    );
    assert!(
        err.contains("1 rows of PyTorch ops whose markers have no sizes"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 3, "{err}");
    // --compat is PyProf: no PyProf markers, nothing costed
    let dir2 = tempfile::tempdir().unwrap();
    let p = dir2.path().join("r.dict");
    std::fs::write(&p, &records).unwrap();
    let out = run(rprof()
        .args(["prof", "--compat", "--csv", "-c", "params,flops"])
        .arg(&p));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().skip(1).all(|l| l == "\"na=na,\",\"0\""),
        "{text}"
    );
}

// ------------------------------------------------------------ real traces

/// What the default mode says about a trace's kernels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Shares {
    kernels: usize,
    /// An op is printed.
    op: usize,
    /// The op comes from stock PyTorch markers.
    stock: usize,
    /// Params come from argument shapes (PyProf's, or a stock marker's
    /// sizes).
    shapes: usize,
    /// A model computed the FLOPs (not the fallback's 0, not na).
    flops: usize,
}

/// `Shares` in the order kernels, op, stock, shapes, FLOPs.
fn sh(kernels: usize, op: usize, stock: usize, shapes: usize, flops: usize) -> Shares {
    Shares {
        kernels,
        op,
        stock,
        shapes,
        flops,
    }
}

impl Shares {
    fn line(&self, name: &str) -> String {
        let pct = |n: usize| 100.0 * n as f64 / self.kernels.max(1) as f64;
        format!(
            "{name}: {} kernels, op {} ({:.1}%; from stock markers {} = {:.1}%), shapes {} ({:.1}%), FLOPs {} ({:.1}%)",
            self.kernels,
            self.op,
            pct(self.op),
            self.stock,
            pct(self.stock),
            self.shapes,
            pct(self.shapes),
            self.flops,
            pct(self.flops)
        )
    }
}

/// One kernel as the default mode reads it.
#[derive(Clone, Debug)]
struct Seen {
    start: Option<i64>,
    dur: i64,
    kernel: String,
    dir: String,
    op: String,
    anchor: String,
    params: String,
    flops: Option<Num>,
    outcome: Outcome,
}

/// Run the default mode on records through the library; `strip` drops the
/// PyProf markers first (the stock path alone).
fn read(records: &str, strip: bool) -> (Shares, Vec<Seen>) {
    let recs: Kernels<'_> = records
        .lines()
        .filter_map(|l| match read_line(l).unwrap() {
            Line::Record(mut r) => {
                if strip {
                    r.marker.clear();
                }
                Some(*r)
            }
            _ => None,
        })
        .collect();
    let mut e = Engine::new(Mode::Fixed);
    let res: Vec<_> = recs
        .iter()
        .map(|r| e.resolve(r, decode_first_marker(r)))
        .collect();
    let mut s = Shares::default();
    let mut seen = Vec::new();
    for (r, res) in recs.iter().zip(&res) {
        let k = estimate_kernel(r, res, Mode::Fixed);
        s.kernels += 1;
        if !k.op.is_empty() && k.op != "na" {
            s.op += 1;
        }
        if res.stock.is_some() {
            s.stock += 1;
        }
        let shapes = match &res.stock {
            Some(st) => st.has_sizes(),
            None => res.marker.is_some(),
        };
        if shapes {
            s.shapes += 1;
        }
        let modelled = matches!(
            k.estimate.outcome,
            Outcome::Modelled | Outcome::Estimated(_) | Outcome::DtypeUnknown
        );
        if modelled && k.estimate.flops.is_some() {
            s.flops += 1;
        }
        seen.push(Seen {
            start: r.start_ns,
            dur: r.duration_ns,
            kernel: r.short_name.to_string(),
            dir: r.dir.to_string(),
            op: k.op.to_owned(),
            anchor: k.anchor.to_owned(),
            params: k.estimate.params.to_string(),
            flops: k.estimate.flops,
            outcome: k.estimate.outcome.clone(),
        });
    }
    (s, seen)
}

/// nsys-ai's capture (committed, MIT): PyTorch 2.x markers with `op_id`
/// but without `sizes`: ops are named, nothing can be costed, and stderr
/// says why.
#[test]
fn nsys_ai_mfu_names_ops_without_sizes() {
    let records = parse(&fixture("nsys-ai/mfu_2gpu_before.sqlite"));
    let (s, seen) = read(&records, false);
    eprintln!("{}", s.line("mfu_2gpu_before"));
    assert_eq!(s, sh(4010, 3986, 3922, 0, 0));
    assert!(
        seen.iter()
            .filter(|k| k.outcome == Outcome::NoSizes)
            .all(|k| k.params.starts_with("sizes=na,") && k.flops.is_none())
    );
    // the GEMMs: linear over addmm, tf32 (nvjet_tst)
    let gemm = seen
        .iter()
        .find(|k| k.kernel.starts_with("nvjet_tst") && k.op == "linear")
        .unwrap();
    assert_eq!(gemm.anchor, "aten::addmm");
    assert_eq!(gemm.params, "sizes=na,fp32,");
    let (_, err) = prof_csv(&records, "op");
    assert!(
        err.contains("3922 rows of PyTorch ops whose markers have no sizes"),
        "{err}"
    );
}

#[test]
fn nsys_ai_h100() {
    let dir = corpus_or_skip!();
    let records = parse(&dir.join("nsys-ai/h100_2gpu_1s.sqlite"));
    let (s, _) = read(&records, false);
    eprintln!("{}", s.line("h100_2gpu_1s"));
    assert_eq!(s, sh(3442, 1632, 1632, 0, 0));
}

/// `dlprof_dldb.sqlite`: DLProf's kernel → op table, by GPU start time.
fn dlprof_ops(db: &Path) -> BTreeMap<i64, (String, String, String)> {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut q = c
        .prepare(
            "SELECT k.gpu_start, o.op_id, \
                    (SELECT string FROM dictionary WHERE id = o.op_type_id), \
                    (SELECT string FROM dictionary WHERE id = o.direction_id) \
             FROM read_only_kernels k JOIN read_only_ops o ON o.id = k.read_only_ops_id",
        )
        .unwrap();
    q.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// DLProf's own attribution of the w_Relu capture is an independent check:
/// every kernel matched by its GPU start time, the op and direction
/// compared, with PyProf's markers (the default path) and without them
/// (the stock path alone: `aten::x, seq = N` markers).
#[test]
fn dlprof_w_relu_attribution_agrees() {
    let dir = corpus_or_skip!().join("dlprof-odema/w_Relu");
    let records = parse(&dir.join("nsys_profile.sqlite"));
    let dl = dlprof_ops(&dir.join("dlprof_dldb.sqlite"));
    assert_eq!(dl.len(), 59);
    for strip in [false, true] {
        let (s, seen) = read(&records, strip);
        let name = if strip {
            "w_Relu (stock path)"
        } else {
            "w_Relu (PyProf markers)"
        };
        eprintln!("{}", s.line(name));
        let mut agree = 0;
        let mut differ = Vec::new();
        for k in &seen {
            let (_, op, dir) = &dl[&k.start.unwrap()];
            if &k.op == op && &k.dir == dir {
                agree += 1;
            } else {
                eprintln!(
                    "{name}: {} {} {}: rprof {} vs DLProf {op}",
                    k.start.unwrap(),
                    k.kernel,
                    k.dir,
                    k.op
                );
                differ.push((k.kernel.as_str(), k.op.as_str(), op.as_str()));
            }
        }
        eprintln!(
            "{name}: DLProf agreement {agree}/{} = {:.1}%",
            seen.len(),
            100.0 * agree as f64 / seen.len() as f64
        );
        if strip {
            assert_eq!((agree, seen.len()), (59, 59), "{name}");
        } else {
            // PyProf's Linear model names the kernel that broadcasts the
            // bias into addmm's output `bias` (pyprof-semantics.md §6.5);
            // DLProf counts it in the linear
            assert_eq!((agree, seen.len()), (56, 59), "{name}");
            assert!(
                differ
                    .iter()
                    .all(|d| *d == ("unrolled_elementwise_kernel", "bias", "linear")),
                "{differ:?}"
            );
        }
        if strip {
            assert_eq!(s, sh(59, 59, 59, 0, 0));
        } else {
            assert_eq!(s, sh(59, 59, 0, 59, 57));
        }
    }
    // dlprof_kernel.csv aggregates by (kernel, op instance): the GPU time of
    // rprof's rows grouped by (kernel, op) is DLProf's, to the nanosecond
    let csv = std::fs::read_to_string(dir.join("dlprof_kernel.csv")).unwrap();
    let mut theirs: BTreeMap<(String, String), i64> = BTreeMap::new();
    for line in csv.lines().skip(2) {
        let f: Vec<&str> = line.split(',').collect();
        let kernel = f[0].trim_matches('"').to_owned();
        let op = f[2].trim_matches('"').rsplit('/').next().unwrap();
        let op = op.split('[').next().unwrap().to_owned();
        *theirs.entry((kernel, op)).or_default() += f[5].parse::<i64>().unwrap();
    }
    let (_, seen) = read(&records, true);
    let mut ours: BTreeMap<(String, String), i64> = BTreeMap::new();
    for k in &seen {
        let kernel = k.kernel.rsplit("::").next().unwrap().to_owned();
        *ours.entry((kernel, k.op.clone())).or_default() += k.dur;
    }
    assert_eq!(ours, theirs);
}

/// Kineto traces: the operators carry sizes and exact dtypes; GEMMs get
/// their FLOPs with the dtype the profiler recorded.
#[test]
fn kineto_traces_cost_gemms_with_exact_dtypes() {
    let dir = corpus_or_skip!().join("kineto-hta");
    let mut total = 0;
    for (name, want) in [
        ("alexnet_benchmark_trace", sh(79, 79, 79, 0, 0)),
        ("negative_queue_rank0", sh(6080, 5375, 5195, 5025, 4645)),
        ("trace_diff_control", sh(8568, 8568, 8514, 8418, 8100)),
        ("triton_example", sh(1, 1, 1, 1, 0)),
    ] {
        let records = parse(&dir.join(format!("{name}.json.gz")));
        let (s, seen) = read(&records, false);
        eprintln!("{}", s.line(name));
        let gemms: Vec<&Seen> = seen
            .iter()
            .filter(|k| {
                ["aten::mm", "aten::addmm", "aten::bmm", "aten::matmul"]
                    .contains(&k.anchor.as_str())
                    && k.params.starts_with("M=")
            })
            .collect();
        for g in &gemms {
            assert!(g.params.ends_with(",fp32,"), "{name}: {g:?}");
            assert!(
                g.flops.is_some_and(|f| f != Num::ZERO) || g.kernel.contains("reduce"),
                "{name}: {g:?}"
            );
        }
        eprintln!("{name}: {} GEMM kernels costed", gemms.len());
        total += gemms.len();
        assert_eq!(s, want, "{name}");
    }
    assert!(total > 1000, "{total}");
}

// ------------------------------------------------- typed markers = text

/// Builds `path`'s records with the stock markers decoded by the build
/// (`BuildOptions::typed_stock`, as the commands that model a profile
/// do) and checks each against the same record without them, whose
/// markers the models read from the text (the path a record file takes,
/// pinned by the golden outputs): every stack entry's head, marker and
/// fields, and the op models' estimate of every kernel. Returns the
/// records, the stack entries, and the entries handed over decoded.
fn typed_markers_equal_their_text(path: &Path) -> (usize, usize, usize) {
    use rprof_trace::attribute;
    use rprof_trace::build::{self, BuildOptions};
    use rprof_trace::read::{self, ReadOptions};

    let mut trace = read::read(path, ReadOptions::default()).unwrap();
    let enclosing = attribute::attribute(&trace.launches, &mut trace.ranges);
    let opts = BuildOptions {
        typed_stock: true,
        ..BuildOptions::default()
    };
    let (mut records, mut entries, mut typed) = (0, 0, 0);
    let mut with = Engine::new(Mode::Fixed);
    let mut without = Engine::new(Mode::Fixed);
    build::build(&trace, &enclosing, opts, |recs| {
        // the same rows read back from their records: no decoding, text
        let back = Kernels::from_records(recs.iter().map(|t| t.to_record()));
        for (t, p) in recs.iter().zip(&back) {
            records += 1;
            entries += t.stack().len();
            if t.context_of().stack_stock.len() == t.stack().len() {
                typed += t.stack().len();
            }
            assert_eq!(p.context_of().stack_stock.len(), 0);
            let at = |i: usize| format!("{}: record {records}, entry {i}", path.display());
            for i in 0..=t.stack().len() {
                assert_eq!(t.stack_head(i), p.stack_head(i), "{}", at(i));
                assert_eq!(*t.stack_marker(i), *p.stack_marker(i), "{}", at(i));
                assert_eq!(t.stack_has_sizes(i), p.stack_has_sizes(i), "{}", at(i));
                assert_eq!(
                    t.stack_has_input_ids(i),
                    p.stack_has_input_ids(i),
                    "{}",
                    at(i)
                );
            }
            let (rt, rp) = (
                with.resolve(t, decode_first_marker(t)),
                without.resolve(p, decode_first_marker(p)),
            );
            assert_eq!(
                format!("{:?}", estimate_kernel(t, &rt, Mode::Fixed)),
                format!("{:?}", estimate_kernel(p, &rp, Mode::Fixed)),
                "{}",
                at(0)
            );
        }
        rprof_trace::Result::Ok(())
    })
    .unwrap();
    (records, entries, typed)
}

/// The synthetic training step (NVTX markers with sizes, op ids, input
/// op ids and a malformed one) and the bundled PyTorch-profiler trace,
/// whose operators' markers are built from the profiler's typed fields.
#[test]
fn decoded_stock_markers_are_the_ones_read_from_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_step(dir.path());
    let (records, entries, typed) = typed_markers_equal_their_text(&path);
    assert!(records > 30 && entries > records, "{records} {entries}");
    // every entry of an NVTX stack is read once per chunk, whatever it is
    assert_eq!(typed, entries);

    let (records, entries, typed) =
        typed_markers_equal_their_text(&fixture("kineto/alexnet_benchmark_trace.json.gz"));
    assert_eq!(records, 79);
    assert!(entries > records, "{entries}");
    assert_eq!(typed, entries);

    // a PyTorch-profiler step with shapes and types (the bundled trace has
    // none): a linear layer's addmm, a tensor list, a backward node
    let path = dir.path().join("step.json");
    std::fs::write(&path, KINETO_STEP).unwrap();
    let (records, entries, typed) = typed_markers_equal_their_text(&path);
    assert_eq!((records, entries, typed), (3, 2 + 1 + 3, 2 + 1 + 3));
}

/// Three kernels: `aten::linear` > `aten::addmm` (two), `aten::cat` of a
/// tensor list, and `AddmmBackward0` > `aten::mm` on the autograd thread.
const KINETO_STEP: &str = r#"{"traceEvents":[
 {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":10,"dur":50,"args":{"Input Dims":[[16,32],[8,32],[8]],"Input type":["float","float","float"],"Sequence number":4,"External id":1}},
 {"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":12,"dur":40,"args":{"Input Dims":[[8],[16,32],[32,8],[],[]],"Input type":["float","float","float","Scalar","Scalar"],"Sequence number":4,"External id":2}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":14,"dur":2,"args":{"correlation":1,"External id":2}},
 {"ph":"X","cat":"kernel","name":"ampere_sgemm_32x32_sliced1x4_tn","pid":0,"tid":7,"ts":100,"dur":5,"args":{"device":0,"stream":7,"correlation":1,"grid":[1,1,1],"block":[128,1,1]}},
 {"ph":"X","cat":"cpu_op","name":"aten::cat","pid":1,"tid":1,"ts":70,"dur":20,"args":{"Input Dims":[[[16,8],[16,8]],[]],"Input type":["TensorList","Scalar"],"External id":3}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":72,"dur":2,"args":{"correlation":2,"External id":3}},
 {"ph":"X","cat":"kernel","name":"CatArrayBatchedCopy","pid":0,"tid":7,"ts":110,"dur":2,"args":{"device":0,"stream":7,"correlation":2,"grid":[1,1,1],"block":[128,1,1]}},
 {"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: AddmmBackward0","pid":1,"tid":2,"ts":200,"dur":60,"args":{"External id":4}},
 {"ph":"X","cat":"cpu_op","name":"AddmmBackward0","pid":1,"tid":2,"ts":201,"dur":58,"args":{"Sequence number":4,"External id":5}},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":202,"dur":50,"args":{"Input Dims":[[16,8],[8,32]],"Input type":["float","float"],"External id":6}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":204,"dur":2,"args":{"correlation":3,"External id":6}},
 {"ph":"X","cat":"kernel","name":"ampere_sgemm_32x32_sliced1x4_nn","pid":0,"tid":7,"ts":300,"dur":5,"args":{"device":0,"stream":7,"correlation":3,"grid":[1,1,1],"block":[128,1,1]}}
]}"#;

/// The same on the real captures of the corpus: stock NVTX markers with
/// and without sizes, PyProf markers, and PyTorch-profiler traces.
#[test]
fn decoded_stock_markers_are_the_ones_read_from_text_on_the_corpus() {
    let dir = corpus_or_skip!();
    for name in [
        "nsys-ai/mfu_2gpu_before.sqlite",
        "nsys-ai/h100_2gpu_1s.sqlite",
        "mmagic_vsr_v2/net.sqlite",
        "kineto-hta/negative_queue_rank0.json.gz",
        "kineto-hta/trace_diff_control.json.gz",
        "kineto-tbplugin/resnet50_num_workers_4_worker0.1623212756351.pt.trace.json.gz",
        "hta-nccl/nccl_data.json.gz",
    ] {
        let (records, entries, typed) = typed_markers_equal_their_text(&dir.join(name));
        eprintln!("{name}: {records} records, {entries} stack entries, {typed} decoded");
        assert!(records > 0 && typed > 0, "{name}");
    }
}
