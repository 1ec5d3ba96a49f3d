//! Deep nesting: N kernels under N nested NVTX ranges, kernel `i` launched
//! inside ranges `0..=i` (so the stacks hold N(N+1)/2 entries in all).

use crate::{Synth, SynthGpu, SynthKernel, SynthRange};

/// `n` nested push/pop ranges on one thread, range `i` with text
/// `text(i)`, and one kernel launched inside each range after it opens:
/// kernel `i` (0-based, in start order) is enclosed by ranges `0..=i`.
pub fn nested(n: usize, text: impl Fn(usize) -> String) -> Synth {
    let mut s = Synth::default();
    s.gpus.push(SynthGpu::a100());
    let n = n as i64;
    let end = 10_000 * (n + 2);
    for i in 0..n {
        // range i opens at 1000 i and closes in reverse order, so each
        // range encloses every later one
        s.ranges
            .push(SynthRange::push(&text(i as usize), 1_000 * i + 1, end - i));
        let launch = 1_000 * i + 500;
        s.kernels.push(
            SynthKernel::new(
                &format!("k{i}"),
                end + 1_000 * i,
                end + 1_000 * i + 400,
                i + 1,
            )
            .launched_at(launch, launch + 10),
        );
    }
    s
}
