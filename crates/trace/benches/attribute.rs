//! The NVTX attribution sweep (`rprof_trace::attribute::attribute`) on
//! synthetic PyTorch-shaped threads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use divan::Bencher;
use divan::counter::ItemsCount;
use rprof_trace::attribute::attribute;
use rprof_trace::model::StrRef;
use rprof_trace::model::{Launch, Range};

fn main() {
    divan::main();
}

/// `launches` launch calls over `threads` threads, shaped like the nsys-ai
/// export the benchmarks scale (about 4.8 NVTX ranges per kernel): each op
/// is 4 nested ranges around one launch, one op in 4 also has a launch-free
/// range (`aten::empty`), and a module range spans every 64 ops.
pub fn synth(launches: usize, threads: u64) -> (Vec<Launch>, Vec<Range>) {
    let mut ls = Vec::with_capacity(launches);
    let mut rs = Vec::with_capacity(launches * 5);
    let range = |rs: &mut Vec<Range>, thread, start, end| {
        let order = rs.len() as u32;
        rs.push(Range {
            start_ns: start,
            end_ns: end,
            thread,
            text: StrRef(order),
            domain: 0,
        });
    };
    for i in 0..launches {
        let thread = 1 + (i as u64 % threads);
        let op = (i as u64 / threads) as i64;
        let t = op * 1_000;
        if op % 64 == 0 {
            range(&mut rs, thread, t - 1, t + 64 * 1_000 - 2);
        }
        for d in 0..4 {
            range(&mut rs, thread, t + d, t + 900 - d);
        }
        if op % 4 == 0 {
            range(&mut rs, thread, t + 950, t + 990);
        }
        ls.push(Launch {
            start_ns: t + 10,
            end_ns: t + 20,
            thread,
            correlation: i as i64,
            api: None,
        });
    }
    (ls, rs)
}

/// Time `f` over `launches` launches on `threads` threads (a fresh copy of
/// the ranges per run: `f` sorts or drops them).
fn sweep<R>(
    bencher: Bencher,
    launches: usize,
    threads: u64,
    f: impl Fn(&[Launch], &mut Vec<Range>) -> R + Sync,
) {
    let (ls, rs) = synth(launches, threads);
    bencher
        .counter(ItemsCount::new(launches))
        .with_inputs(|| rs.clone())
        .bench_local_refs(|r| f(divan::black_box(&ls), r));
}

#[divan::bench(args = [10_000, 100_000, 1_000_000], sample_count = 10)]
fn attribute_sweep(bencher: Bencher, launches: usize) {
    sweep(bencher, launches, 2, |ls, r| attribute(ls, r));
}

/// Many threads (data-loader style): the per-thread groups run in parallel.
#[divan::bench(args = [100_000], sample_count = 10)]
fn attribute_sweep_64_threads(bencher: Bencher, launches: usize) {
    sweep(bencher, launches, 64, |ls, r| attribute(ls, r));
}

/// [`rprof_trace::attribute::attribute_used`] (what `parse` runs): the
/// ranges that enclose no launch are found and dropped, then the rest
/// attributed.
#[divan::bench(args = [1_000_000], sample_count = 10)]
fn attribute_used_sweep(bencher: Bencher, launches: usize) {
    sweep(bencher, launches, 2, rprof_trace::attribute::attribute_used);
}
