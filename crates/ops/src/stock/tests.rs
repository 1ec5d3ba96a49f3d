//! Stock-marker costing end to end: records through [`Engine`].

use std::borrow::Cow;

use proptest::prelude::*;
use rprof_model::{Kernels, Record};

use crate::estimate::{Mode, Outcome};
use crate::{Engine, decode_first_marker, estimate_kernel};

/// One kernel: direction, stack (outermost first), kernel long name.
fn rec<'a>(dir: &'a str, stack: &[&'a str], kernel: &'a str) -> Record<'a> {
    let short = kernel
        .split(['<', '('])
        .next()
        .unwrap_or(kernel)
        .trim_start_matches("void ");
    Record {
        short_name: Cow::Borrowed(short),
        long_name: Cow::Borrowed(kernel),
        dir: rprof_model::Dir::from_text(Cow::Borrowed(dir)),
        stack: stack.iter().map(|s| Cow::Borrowed(*s)).collect(),
        tid: 7,
        grid: [1, 1, 1],
        ..Record::default()
    }
}

/// `op|params|tc|flops|bytes` per record, through one engine.
fn run(recs: &[Record<'_>]) -> Vec<String> {
    run_full(recs).into_iter().map(|(r, _)| r).collect()
}

fn run_full(recs: &[Record<'_>]) -> Vec<(String, Outcome)> {
    let mut e = Engine::new(Mode::Fixed);
    let ks = Kernels::from_records(recs.iter().cloned());
    let resolved: Vec<_> = ks
        .iter()
        .map(|r| e.resolve(r, decode_first_marker(r)))
        .collect();
    ks.iter()
        .zip(&resolved)
        .map(|(r, res)| {
            let k = estimate_kernel(r, res, Mode::Fixed);
            let n = |x: Option<crate::Num>| x.map_or("na".to_owned(), |x| x.to_string());
            (
                format!(
                    "{}|{}|{}|{}|{}",
                    k.op,
                    k.estimate.params,
                    k.estimate.tc,
                    n(k.estimate.flops),
                    n(k.estimate.bytes)
                ),
                k.estimate.outcome,
            )
        })
        .collect()
}

const HGEMM: &str = "ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x3_tn";
const LINEAR: &str = "aten::linear, seq = 11, op_id = 33, sizes = [[32, 512], [1024, 512], [1024]], input_op_ids = [(30,0), (31,0), (32,0)]";
const ADDMM: &str = "aten::addmm, seq = 12, op_id = 35, sizes = [[1024], [32, 512], [512, 1024], [], []], input_op_ids = [(32,0), (30,0), (34,0), (0,-1), (0,-1)]";
const EVAL_ADDMM: &str = "autograd::engine::evaluate_function: AddmmBackward0";
const NODE_ADDMM: &str = "AddmmBackward0, seq = 12, op_id = 80, sizes = [[32, 1024]]";

#[test]
fn worked_example_10_7() {
    let rows = run(&[
        rec("fprop", &[LINEAR, ADDMM], HGEMM),
        // dgrad and wgrad inside the backward node, with their own sizes
        rec(
            "bprop",
            &[
                EVAL_ADDMM,
                NODE_ADDMM,
                "aten::mm, op_id = 82, sizes = [[32, 1024], [1024, 512]]",
            ],
            HGEMM,
        ),
        rec(
            "bprop",
            &[
                EVAL_ADDMM,
                NODE_ADDMM,
                "aten::mm, op_id = 85, sizes = [[512, 32], [32, 1024]]",
            ],
            HGEMM,
        ),
        // the bias gradient, in the wrapper only
        rec(
            "bprop",
            &[
                EVAL_ADDMM,
                "aten::sum, op_id = 88, sizes = [[32, 1024], [], [], []]",
            ],
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<float> > >(int)",
        ),
    ]);
    assert_eq!(
        rows,
        [
            // 2·32·1024·512; 2·(32·512 + 512·1024 + 32·1024)
            "linear|M=1024,N=32,K=512,fp16,|1|33554432|1146880",
            // backward kernels print the forward op of their seq
            "linear|M=512,N=32,K=1024,fp16,|1|33554432|1146880",
            "linear|M=1024,N=512,K=32,fp16,|1|33554432|1146880",
            // the bias gradient: numel FLOPs, e·numel bytes; the wrapper's
            // node is the last AddmmBackward0 of this thread
            "linear|T=(32,1024),fp16,|-|32768|65536",
        ]
    );
}

#[test]
fn split_k_and_epilogue_are_counted_once() {
    let fwd = [LINEAR, ADDMM];
    let rows = run(&[
        rec(
            "fprop",
            &fwd,
            "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_split_k_kernel__5x_cublas",
        ),
        rec(
            "fprop",
            &fwd,
            "void splitKreduce_kernel<float, float, float, float, true, false, false>(cublasSplitKParams<float>)",
        ),
        rec(
            "fprop",
            &fwd,
            "void epilogue::impl::globalKernel<float, float, float, true, true>(int)",
        ),
    ]);
    assert_eq!(
        rows,
        [
            "linear|M=1024,N=32,K=512,fp32,|0|33554432|2293760",
            // helpers: m·n adds, 2·e·m·n bytes (PyProf's default-mode B22)
            "linear|M=1024,N=32,K=512,fp32,|0|32768|262144",
            "linear|M=1024,N=32,K=512,fp32,|0|32768|262144",
        ]
    );
}

#[test]
fn cudnn_autotune_trials_count_once_per_op_id() {
    let conv = "aten::cudnn_convolution, seq = 3, op_id = 50, sizes = [[8, 3, 32, 32], [16, 3, 3, 3], [], [], [], [], []]";
    let stack = [
        "aten::conv2d, seq = 3, op_id = 47, sizes = [[8, 3, 32, 32], [16, 3, 3, 3], [16], [], [], [], []]",
        "aten::convolution, seq = 3, op_id = 48",
        "aten::_convolution, seq = 3, op_id = 49",
        conv,
    ];
    let rows = run(&[
        rec(
            "fprop",
            &stack,
            "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>(int)",
        ),
        rec(
            "fprop",
            &stack,
            "void cudnn::detail::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, true>(int)",
        ),
        rec(
            "fprop",
            &stack,
            "void cudnn::detail::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, true>(int)",
        ),
    ]);
    // same output assumed: 2·8·16·32·32·3·9 FLOPs; 4·(8·3·32·32 + 16·3·9 + 8·16·32·32)
    let f = 2 * 8 * 16 * 32 * 32 * 3 * 9;
    let b = 4 * (8 * 3 * 32 * 32 + 16 * 3 * 9 + 8 * 16 * 32 * 32);
    let p = "N=8,C=3,H=32,W=32,K=16,P=32,Q=32,R=3,S=3,g=1,fp32,";
    assert_eq!(
        rows,
        [
            format!("conv2d|{p}|0|0|0"),
            format!("conv2d|{p}|0|{f}|{b}"),
            format!("conv2d|{p}|0|0|0"),
        ]
    );
}

#[test]
fn conv_output_learned_from_backward_and_bias_add() {
    let conv = |op_id: i64| {
        format!(
            "aten::cudnn_convolution, seq = 3, op_id = {op_id}, sizes = [[8, 3, 224, 224], [64, 3, 11, 11], [], [], [], [], []]"
        )
    };
    let k = "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw";
    let c1 = conv(1);
    let c2 = conv(2);
    let recs = [
        rec("fprop", &["aten::conv2d, seq = 3, op_id = 9", &c1], k),
        rec(
            "bprop",
            &[
                "autograd::engine::evaluate_function: ConvolutionBackward0",
                "ConvolutionBackward0, seq = 3, op_id = 10, sizes = [[8, 64, 55, 55]]",
                "aten::convolution_backward, op_id = 11, sizes = [[8, 64, 55, 55], [8, 3, 224, 224], [64, 3, 11, 11], [], [], [], [], [], [], []]",
            ],
            "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw",
        ),
        rec("fprop", &["aten::conv2d, seq = 30, op_id = 19", &c2], k),
    ];
    let rows = run_full(&recs);
    assert!(rows[0].0.contains("P=224,Q=224"), "{}", rows[0].0);
    assert!(matches!(rows[0].1, Outcome::Estimated(_)));
    // 2·8·64·55·55·3·121
    let f = 2 * 8 * 64 * 55 * 55 * 3 * 121;
    assert!(rows[1].0.contains(&format!("|{f}|")), "{}", rows[1].0);
    assert_eq!(rows[1].0.split('|').next(), Some("conv2d"));
    assert!(rows[2].0.contains("P=55,Q=55"), "{}", rows[2].0);
    assert!(rows[2].0.contains(&format!("|{f}|")));
    assert_eq!(rows[2].1, Outcome::Modelled);

    // PyTorch 1.x / Kineto: the bias add_ inside aten::_convolution
    let x = "aten::_convolution, sizes = [[2, 4, 9, 9], [6, 4, 3, 3], [6], [], [], [], [], [], [], [], [], [], []]";
    let recs = [
        rec(
            "fprop",
            &[
                "aten::conv2d, seq = 0",
                x,
                "aten::cudnn_convolution, sizes = [[2, 4, 9, 9], [6, 4, 3, 3], [], [], [], [], [], [], []]",
            ],
            k,
        ),
        rec(
            "fprop",
            &[
                "aten::conv2d, seq = 0",
                x,
                "aten::add_, sizes = [[2, 6, 4, 4], [1, 6, 1, 1], []]",
            ],
            "void at::native::elementwise_kernel<128, 2, at::native::CUDAFunctor_add<float> >(int)",
        ),
        rec(
            "fprop",
            &[
                "aten::conv2d, seq = 5",
                x,
                "aten::cudnn_convolution, sizes = [[2, 4, 9, 9], [6, 4, 3, 3], [], [], [], [], [], [], []]",
            ],
            k,
        ),
    ];
    let rows = run(&recs);
    assert!(rows[0].contains("P=9,Q=9"), "{}", rows[0]);
    // the bias add: 2·6·4·4 = 192 FLOPs; 4·(192 + 6 + 192) bytes
    assert_eq!(rows[1], "conv2d|T=[(2,6,4,4),(1,6,1,1)],fp32,|-|192|1560");
    assert!(rows[2].contains("P=4,Q=4"), "{}", rows[2]);

    // a consumer naming the convolution's op_id
    let recs = [
        rec(
            "fprop",
            &[
                "aten::conv2d, seq = 0, op_id = 70",
                "aten::cudnn_convolution, seq = 0, op_id = 71, sizes = [[2, 4, 9, 9], [6, 4, 3, 3], [], [], [], [], []]",
            ],
            k,
        ),
        rec(
            "fprop",
            &["aten::relu, seq = 1, op_id = 72, sizes = [[2, 6, 3, 3]], input_op_ids = [(71,0)]"],
            "void at::native::vectorized_elementwise_kernel<4, at::native::relu_functor<float> >(int)",
        ),
        rec(
            "fprop",
            &[
                "aten::conv2d, seq = 2, op_id = 80",
                "aten::cudnn_convolution, seq = 2, op_id = 81, sizes = [[2, 4, 9, 9], [6, 4, 3, 3], [], [], [], [], []]",
            ],
            k,
        ),
    ];
    let rows = run(&recs);
    assert!(rows[0].contains("P=9,Q=9"), "{}", rows[0]);
    assert!(rows[2].contains("P=3,Q=3"), "{}", rows[2]);
}

#[test]
fn backward_borrows_the_forward_op_of_its_seq() {
    // no inner op in the node (old traces): the forward layer norm's sizes
    let fwd = [
        "aten::layer_norm, seq = 5, op_id = 1, sizes = [[64, 768], [], [768], [768], [], []]",
        "aten::native_layer_norm, seq = 5, op_id = 2, sizes = [[64, 768], [], [768], [768], []]",
    ];
    let ln = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int)";
    let rows = run(&[
        rec("fprop", &fwd, ln),
        rec(
            "bprop",
            &[
                "autograd::engine::evaluate_function: NativeLayerNormBackward0",
                "NativeLayerNormBackward0, seq = 5, op_id = 9, sizes = [[64, 768]]",
            ],
            "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::BFloat16, float>(int)",
        ),
        // no forward with that seq: the node's name, no sizes
        rec(
            "bprop",
            &[
                "autograd::engine::evaluate_function: MulBackward0",
                "MulBackward0, seq = 99, op_id = 19",
                "aten::mul, op_id = 20",
            ],
            "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(int)",
        ),
    ]);
    assert_eq!(
        rows,
        [
            // 8·49152; 2·(2·49152 + 2·768)
            "layer_norm|T=(64,768),bf16,|-|393216|199680",
            // backward: 8·49152; 2·(3·49152 + 2·768)
            "layer_norm|T=(64,768),bf16,|-|393216|297984",
            "Mul|sizes=na,fp32,|-|na|na",
        ]
    );
}

#[test]
fn kineto_dtypes_win_and_unknown_types_say_so() {
    let rows = run_full(&[
        rec(
            "fprop",
            &[
                "aten::mm, sizes = [[64, 128], [128, 32]], dtypes = ['c10::BFloat16', 'c10::BFloat16']",
            ],
            "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_16x6_nn_align4>(Params)",
        ),
        rec(
            "fprop",
            &["aten::mul, op_id = 4, sizes = [[1024], [1024]]"],
            "triton_poi_fused_mul_0",
        ),
        rec(
            "fprop",
            &["aten::embedding, seq = 1, op_id = 5, sizes = [[50000, 512], [8, 128], [], [], []]"],
            "void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>(int)",
        ),
    ]);
    // 2·64·32·128; 2·(64·128 + 128·32 + 64·32)
    assert_eq!(rows[0].0, "mm|M=32,N=64,K=128,bf16,|1|524288|28672");
    assert_eq!(rows[1].0, "mul|T=[(1024,),(1024,)],?,|-|1024|na");
    assert_eq!(rows[1].1, Outcome::DtypeUnknown);
    // indices int64: 8·1024 + 2·1024·512·4
    assert_eq!(
        rows[2].0,
        "embedding|I=(8,128),int64,E=(50000,512),fp32,|-|0|4202496"
    );
}

#[test]
fn without_op_id_one_kernel_ops_repeat_and_many_kernel_ops_do_not() {
    let add =
        "aten::add_, sizes = [[1, 5185], [1, 5185], []], dtypes = ['float', 'float', 'Scalar']";
    let sum = "aten::sum, sizes = [[979, 1024], [], [], []], dtypes = ['float', '', 'Scalar', '']";
    let vk = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int)";
    let rk = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >(int)";
    let rows = run(&[
        rec("bprop", &["torch::autograd::AccumulateGrad", add], vk),
        rec("bprop", &["torch::autograd::AccumulateGrad", add], vk),
        rec("fprop", &[sum], rk),
        rec("fprop", &[sum], rk),
    ]);
    // 5185 FLOPs; 4·(3·5185) bytes, twice: two calls
    assert_eq!(
        rows[0],
        "AccumulateGrad|T=[(1,5185),(1,5185)],fp32,|-|5185|62220"
    );
    assert_eq!(rows[1], rows[0]);
    // one sum, two passes: counted once (numel, e·numel)
    assert_eq!(rows[2], "sum|T=(979,1024),fp32,|-|1002496|4009984");
    assert_eq!(rows[3], "sum|T=(979,1024),fp32,|-|0|0");
}

#[test]
fn attention_anchors_at_the_sdpa_level() {
    let q = "[2, 8, 256, 64]";
    let sdpa = format!(
        "aten::scaled_dot_product_attention, seq = 1, op_id = 1, sizes = [{q}, {q}, {q}, [], [], [], []]"
    );
    let flash_sdpa = format!(
        "aten::_scaled_dot_product_flash_attention, seq = 1, op_id = 2, sizes = [{q}, {q}, {q}, [], [], [], []]"
    );
    let inner = "aten::_flash_attention_forward, op_id = 3, sizes = [[2, 256, 8, 64], [2, 256, 8, 64], [2, 256, 8, 64], [], [], [], [], [], [], [], []]";
    let k = "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t> >(Flash_fwd_params)";
    let mut e = Engine::new(Mode::Fixed);
    let ks = Kernels::from_records([rec("fprop", &[&sdpa, &flash_sdpa, inner], k)]);
    let r = ks.get(0).expect("one row");
    let res = e.resolve(r, None);
    let out = estimate_kernel(r, &res, Mode::Fixed);
    assert_eq!(out.op, "scaled_dot_product_attention");
    assert_eq!(out.anchor, "aten::_scaled_dot_product_flash_attention");
    // 2·16·256·256·(64 + 64)
    assert_eq!(
        out.estimate.flops,
        Some(crate::Num::Int(2 * 16 * 256 * 256 * 128))
    );
    assert_eq!(out.estimate.params, "B=2,H=8,L=256,S=256,E=64,Ev=64,fp16,");
}

#[test]
fn pyprof_markers_and_compat_are_untouched() {
    let mut r = rec("fprop", &[LINEAR, ADDMM], HGEMM);
    r.marker = vec![Cow::Borrowed(
        "{'mod': 'torch', 'op': 'mm', 'args': [{'name': '', 'type': 'tensor', 'shape': (64, 256), 'dtype': 'float32'}, {'name': '', 'type': 'tensor', 'shape': (256, 128), 'dtype': 'float32'}]}",
    )];
    let mut e = Engine::new(Mode::Fixed);
    let ks = Kernels::from_records([r]);
    let r = ks.get(0).expect("one row");
    let res = e.resolve(r, decode_first_marker(r));
    assert!(res.stock.is_none());
    let ks = Kernels::from_records([rec("fprop", &[LINEAR, ADDMM], HGEMM)]);
    let r = ks.get(0).expect("one row");
    let mut e = Engine::new(Mode::Apex);
    let res = e.resolve(r, None);
    assert!(res.stock.is_none());
    assert_eq!(
        estimate_kernel(r, &res, Mode::Apex).estimate.outcome,
        Outcome::NoMarker
    );
}

#[test]
fn malformed_and_odd_markers_are_other() {
    let rows = run_full(&[
        rec("fprop", &["aten::mm, op_id = 3, sizes = [[a, b]]"], HGEMM),
        rec("fprop", &["aten::mm, op_id = 4, sizes = [[2, 3]]"], HGEMM),
        rec(
            "fprop",
            &["## forward ##", "Optimizer.step#Adam.step"],
            HGEMM,
        ),
        rec(
            "fprop",
            &["fbgemm::permute, sizes = [[4], [4]], dtypes = ['int', 'int']"],
            "k",
        ),
    ]);
    assert_eq!(rows[0].0, "mm|sizes=na,fp16,|-|na|na");
    assert!(matches!(rows[1].1, Outcome::Partial(_)), "{:?}", rows[1]);
    assert_eq!(rows[2].1, Outcome::NoMarker);
    assert_eq!(rows[3].0, "permute|T=[(4,),(4,)],['int32','int32']|-|0|0");
    assert_eq!(rows[3].1, Outcome::NoModel);
}

// ------------------------------------------------------------ properties

fn marker_text() -> impl Strategy<Value = String> {
    let names = prop::sample::select(
        crate::table::STOCK
            .iter()
            .flat_map(|s| s.spec.names.iter().copied())
            .chain([
                "aten::view",
                "AddmmBackward0",
                "autograd::engine::evaluate_function: MulBackward0",
                "torch::autograd::AccumulateGrad",
                "layer:x",
                "",
                "aten::",
            ])
            .collect::<Vec<_>>(),
    );
    let dim = prop_oneof![6 => 0i64..9, 1 => Just(-1i64), 1 => Just(i64::MAX), 1 => any::<i64>()];
    let shape = prop::collection::vec(dim, 0..5);
    let sizes = prop::option::of(prop::collection::vec(shape, 0..8));
    let dtypes = prop::option::of(prop::collection::vec(
        prop::sample::select(
            &[
                "float",
                "c10::Half",
                "Scalar",
                "",
                "long",
                "TensorList",
                "x",
            ][..],
        ),
        0..8,
    ));
    let field = prop_oneof![Just(String::new()), "[\\[\\](), 0-9a-z=]{0,20}"];
    (
        names,
        prop::option::of(0i64..20),
        prop::option::of(0i64..6),
        sizes,
        dtypes,
        prop::option::of(prop::collection::vec((0i64..6, -1i64..2), 0..6)),
        field,
    )
        .prop_map(|(name, seq, op_id, sizes, dtypes, ids, junk)| {
            let mut t = name.to_owned();
            if let Some(q) = seq {
                t.push_str(&format!(", seq = {q}"));
            }
            if let Some(o) = op_id {
                t.push_str(&format!(", op_id = {o}"));
            }
            if let Some(s) = sizes {
                t.push_str(&format!(", sizes = {s:?}"));
            }
            if let Some(ids) = ids {
                let pairs: Vec<String> = ids.iter().map(|(a, b)| format!("({a},{b})")).collect();
                t.push_str(&format!(", input_op_ids = [{}]", pairs.join(", ")));
            }
            if let Some(d) = dtypes {
                let d: Vec<String> = d.iter().map(|x| format!("'{x}'")).collect();
                t.push_str(&format!(", dtypes = [{}]", d.join(", ")));
            }
            t.push_str(&junk);
            t
        })
}

const KERNELS: &[&str] = &[
    HGEMM,
    "splitKreduce_kernel",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int)",
    "nchwToNhwcKernel",
    "sm80_xmma_dgrad_implicit_gemm",
    "sm80_xmma_wgrad_implicit_gemm",
    "calc_bias_diff",
    "flash_bwd_dot_do_o_kernel",
    "triton_poi_fused_0",
    "",
    "void k<c10::complex<float>, long>(int)",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random marker texts, shapes, dtypes and kernel names through the
    /// stock path: never a panic, and an unknown value always says why.
    #[test]
    fn stock_path_never_panics(
        kernels in prop::collection::vec(
            (
                prop::collection::vec(marker_text(), 0..5),
                prop::sample::select(KERNELS),
                prop::sample::select(&["fprop", "bprop", ""][..]),
                0u64..3,
            ),
            1..12,
        ),
        junk in "\\PC{0,40}",
    ) {
        let mut e = Engine::new(Mode::Fixed);
        for (stack, kernel, dir, tid) in &kernels {
            let mut texts: Vec<&str> = stack.iter().map(String::as_str).collect();
            texts.push(&junk);
            let mut r = rec(dir, &texts, kernel);
            r.tid = *tid;
            let ks = Kernels::from_records([r]);
            let r = ks.get(0).expect("one row");
            let res = e.resolve(r, None);
            let k = estimate_kernel(r, &res, Mode::Fixed);
            let est = &k.estimate;
            if est.flops.is_none() {
                prop_assert!(matches!(est.outcome, Outcome::Partial(_) | Outcome::NoSizes), "{:?}", est);
            }
            if est.bytes.is_none() {
                prop_assert!(
                    matches!(est.outcome, Outcome::Partial(_) | Outcome::NoSizes | Outcome::DtypeUnknown),
                    "{:?}", est
                );
            }
        }
    }
}

/// The instance key of a stack hashes its texts one by one; it must be
/// the hash of the collected list (the key the costing was built with).
#[test]
fn instance_hash_without_collecting() {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let lists: [&[&str]; 4] = [
        &[],
        &["aten::linear, seq = 1"],
        &["a", "", "aten::addmm, sizes = [[2, 3]]"],
        &["ab", "c"],
    ];
    for list in lists {
        let mut h = DefaultHasher::new();
        list.to_vec().hash(&mut h);
        assert_eq!(
            super::hash_iter(list.iter().copied()),
            h.finish(),
            "{list:?}"
        );
        assert_eq!(super::hash_of(list), h.finish());
    }
    // the length is part of it: ["ab", "c"] and ["a", "bc"] differ
    assert_ne!(super::hash_of(&["ab", "c"]), super::hash_of(&["a", "bc"]));
}
