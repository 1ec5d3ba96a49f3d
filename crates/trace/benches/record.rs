//! Record serialization: `Record::write_json` (the `.dict` JSON Lines that
//! `rprof parse` writes), 1024 records per iteration as in `rprof parse`'s
//! serialization chunks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use rprof_trace::model::Record;

fn main() {
    divan::main();
}

/// A record like those of the nsys-ai export: an elementwise kernel with
/// its long templated name, a 2-deep NVTX stack and launch data.
fn record(i: i64) -> Record<'static> {
    let long = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, \
        std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";
    Record {
        short_name: Cow::Borrowed("vectorized_elementwise_kernel"),
        duration_ns: 2_144 + i,
        seq_marker: vec![Cow::Borrowed("aten::add, seq = 45906, op_id = 992615")],
        seq_id: vec![45_906 + i],
        dir: rprof_trace::model::Dir::Fprop,
        mod_: vec![Cow::Borrowed("na")],
        op: vec![Cow::Borrowed("aten::add")],
        tid: 1_234_567,
        device: 1,
        stream: 7,
        grid: [2_048, 1, 1],
        block: [128, 1, 1],
        long_name: Cow::Borrowed(long),
        start_ns: Some(60_111_513_113 + i * 10_000),
        end_ns: Some(60_111_515_257 + i * 10_000),
        launch_start_ns: Some(60_111_413_113 + i * 10_000),
        launch_end_ns: Some(60_111_418_113 + i * 10_000),
        launched: true,
        api: Some(Cow::Borrowed("cudaLaunchKernel")),
        pid: Some(2_893_456),
        correlation: Some(2_610_639 + i),
        context: Some(1),
        regs: Some(32),
        static_smem_bytes: Some(0),
        dynamic_smem_bytes: Some(0),
        stack: vec![
            Cow::Borrowed("FSDP::forward (encoder.block.0.layer.0), op_id = 991000"),
            Cow::Borrowed("aten::add, seq = 45906, op_id = 992615"),
        ],
        ..Record::default()
    }
}

#[divan::bench(args = [1_024])]
fn write_json(bencher: Bencher, n: usize) {
    let records: Vec<Record<'static>> = (0..n as i64).map(record).collect();
    let mut out = Vec::with_capacity(n * 1_024);
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        out.clear();
        for r in black_box(&records) {
            r.write_json(&mut out);
        }
        out.len()
    });
}

#[divan::bench(args = [1_024])]
fn write_pydict(bencher: Bencher, n: usize) {
    let records: Vec<Record<'static>> = (0..n as i64).map(record).collect();
    let mut out = String::with_capacity(n * 1_024);
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        out.clear();
        for r in black_box(&records) {
            r.write_pydict(&mut out);
        }
        out.len()
    });
}
