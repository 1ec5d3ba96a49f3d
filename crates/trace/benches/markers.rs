//! Marker text handling: classification of the ranges around one kernel
//! (`markers::classify`), the stock PyTorch marker grammar (`stock::parse`)
//! and Python-literal parsing of PyProf dict markers (`pylit::parse`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use rprof_trace::model::{markers, pylit, stock};

fn main() {
    divan::main();
}

/// A PyTorch 2.x stack from nsys-ai/mfu_2gpu_before.sqlite (emit_nvtx with
/// op_id, NCCL ranges).
const PYTORCH2: &[&str] = &[
    "AllToAll4D, seq = 45440, op_id = 991132",
    "c10d::alltoall_base_, op_id = 991142",
    "record_param_comms, op_id = 991143",
    "nccl:all_to_all, op_id = 991144",
    "ncclGroupEnd",
];

/// The most common depth there: one operator marker.
const PYTORCH2_ONE: &[&str] = &["aten::pow, seq = 45906, op_id = 992615"];

const TRACE: &str = "{'traceMarker': ['profile2.py:314', 'profile2.py:256', \
    '/home/ubuntu/josiah/lib/python3.6/site-packages/torch/nn/modules/module.py:532', \
    'profile2.py:106', '/home/ubuntu/josiah/lib/python3.6/site-packages/torch/nn/modules/module.py:532', \
    '/home/ubuntu/josiah/lib/python3.6/site-packages/torch/nn/modules/sparse.py:114']}";

const PYPROF_DICT: &str = "{'mod': 'torch.nn.functional', 'op': 'embedding', 'args': [\
    {'name': '', 'type': 'tensor', 'shape': (35, 20), 'dtype': 'int64'}, \
    {'name': '', 'type': 'tensor', 'shape': (33278, 200), 'dtype': 'float32'}, \
    {'name': '', 'type': 'NoneType', 'value': None}, {'name': '', 'type': 'NoneType', 'value': None}, \
    {'name': '', 'type': 'float', 'value': 2.0}, {'name': '', 'type': 'bool', 'value': False}, \
    {'name': '', 'type': 'bool', 'value': False}]}";

/// An apex.pyprof stack (profiling-lm run1): trace marker, argument marker,
/// then the autograd sequence markers.
const PYPROF: &[&str] = &[
    TRACE,
    PYPROF_DICT,
    "embedding, seq = 3",
    "aten::embedding, seq = 3",
    "aten::index_select",
];

#[divan::bench(args = ["pytorch2_depth1", "pytorch2_depth5", "pyprof_depth5"])]
fn classify(bencher: Bencher, stack: &str) {
    let texts = match stack {
        "pytorch2_depth1" => PYTORCH2_ONE,
        "pytorch2_depth5" => PYTORCH2,
        _ => PYPROF,
    };
    bencher.bench(|| markers::classify(black_box(texts), false));
}

#[divan::bench(args = ["pytorch2_depth5", "pyprof_depth5"])]
fn classify_compat(bencher: Bencher, stack: &str) {
    let texts = if stack == "pyprof_depth5" {
        PYPROF
    } else {
        PYTORCH2
    };
    bencher.bench(|| markers::classify(black_box(texts), true));
}

#[divan::bench(args = [
    "aten::addmm, seq = 47890, op_id = 1000497",
    "aten::empty, op_id = 994053",
    "ncclGroupEnd",
    "aten::mm, seq = 12, op_id = 345, sizes = [[64, 1024], [1024, 4096]], input_op_ids = [(340, 0), (341, 0)]",
])]
fn stock_parse(bencher: Bencher, text: &str) {
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| stock::parse(black_box(text)));
}

#[divan::bench(args = ["trace", "pyprof_dict"])]
fn pylit_parse(bencher: Bencher, which: &str) {
    let text = if which == "trace" { TRACE } else { PYPROF_DICT };
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| pylit::parse(black_box(text)));
}
