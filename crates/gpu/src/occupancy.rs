//! How many blocks of a kernel fit on one SM, by the CUDA occupancy rules,
//! and the PyTorch profiler's "estimated achieved occupancy".
//!
//! Theoretical occupancy: the resident blocks per SM are the minimum of four
//! limits: the block-count limit, the warp limit (warps per block vs warps
//! per SM), the register limit (registers per warp rounded up to the
//! allocation unit, allocated per register-file partition) and the shared
//! memory limit (static + dynamic + the per-block reservation, rounded up to
//! the allocation unit). These are the rules of NVIDIA's occupancy
//! calculator, written from its documentation.
//!
//! Estimated achieved occupancy (Kineto's definition): a grid smaller than
//! the GPU cannot fill it, so the resident blocks per SM are also capped by
//! `grid blocks / SM count`; occupancy = that × threads per block / threads
//! per SM.

use crate::limits::Limits;

/// What one kernel launch asks of an SM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Launch {
    /// Grid dimensions.
    pub grid: [i64; 3],
    /// Block dimensions.
    pub block: [i64; 3],
    /// Registers per thread (`None` = unknown, treated as no limit).
    pub regs_per_thread: Option<i64>,
    /// Static + dynamic shared memory per block, bytes.
    pub smem_per_block: Option<i64>,
}

impl Launch {
    /// Threads per block.
    pub fn threads_per_block(&self) -> i64 {
        // saturating: the dimensions come from the input
        self.block
            .iter()
            .fold(1i64, |a, &d| a.saturating_mul(d.max(1)))
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> i64 {
        self.grid
            .iter()
            .fold(1i64, |a, &d| a.saturating_mul(d.max(1)))
    }
}

/// Which resource limits the resident blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limiter {
    /// The per-SM block count.
    Blocks,
    /// Warps per SM.
    Warps,
    /// Registers.
    Registers,
    /// Shared memory.
    SharedMemory,
}

impl Limiter {
    /// `blocks`, `warps`, `registers`, `shared memory`.
    pub fn as_str(self) -> &'static str {
        match self {
            Limiter::Blocks => "blocks",
            Limiter::Warps => "warps",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
        }
    }
}

/// Theoretical occupancy of one launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Occupancy {
    /// Resident blocks per SM (0: the launch does not fit).
    pub active_blocks: i64,
    /// What limits them.
    pub limiter: Limiter,
    /// Active warps / max warps per SM, 0..=1.
    pub theoretical: f64,
}

fn div_up(a: i64, b: i64) -> i64 {
    if b <= 0 {
        0
    } else {
        a.saturating_add(b - 1) / b
    }
}

// Limits and launches come from the input (a records header, a device
// table, Kineto's deviceProperties): products saturate instead of wrapping
// (a huge warp size once wrapped registers × warp size to 0, a divisor).
fn round_up(a: i64, unit: i64) -> i64 {
    div_up(a, unit).saturating_mul(unit.max(1))
}

/// Resident blocks per SM and the limiting resource.
pub fn occupancy(l: &Limits, launch: &Launch) -> Occupancy {
    let threads = launch.threads_per_block();
    let warps_per_block = div_up(threads, l.warp_size.max(1)).max(1);
    let mut limits = Vec::with_capacity(4);
    limits.push((l.max_blocks_per_sm, Limiter::Blocks));
    if threads > l.max_threads_per_block {
        limits.push((0, Limiter::Warps));
    } else {
        limits.push((l.max_warps_per_sm / warps_per_block, Limiter::Warps));
    }
    if let Some(regs) = launch.regs_per_thread.filter(|&r| r > 0) {
        let per_warp = round_up(regs.saturating_mul(l.warp_size), l.reg_alloc_unit).max(1);
        let per_block = per_warp.saturating_mul(warps_per_block);
        // the hardware checks the per-block limit as if the block's warps
        // were spread over every register-file partition
        let assumed = per_warp.saturating_mul(round_up(warps_per_block, l.sub_partitions));
        let blocks = if regs > l.max_regs_per_thread
            || per_block > l.regs_per_block
            || assumed > l.regs_per_block
        {
            0
        } else {
            let per_partition = l.regs_per_sm / l.sub_partitions.max(1);
            (per_partition / per_warp).saturating_mul(l.sub_partitions.max(1)) / warps_per_block
        };
        limits.push((blocks, Limiter::Registers));
    }
    let smem = launch.smem_per_block.unwrap_or(0).max(0);
    if smem > 0 || l.smem_reserved_per_block > 0 {
        let per_block = round_up(
            smem.saturating_add(l.smem_reserved_per_block.max(0)),
            l.smem_alloc_unit,
        );
        let blocks = if smem > l.smem_per_block {
            0
        } else {
            l.smem_per_sm / per_block.max(1)
        };
        limits.push((blocks, Limiter::SharedMemory));
    }
    // the first of equal limits wins: blocks, warps, registers, shared memory
    let (active, limiter) = limits
        .iter()
        .copied()
        .reduce(|a, b| if b.0 < a.0 { b } else { a })
        .unwrap_or((0, Limiter::Blocks));
    let active = active.max(0);
    Occupancy {
        active_blocks: active,
        limiter,
        theoretical: active as f64 * warps_per_block as f64 / l.max_warps_per_sm.max(1) as f64,
    }
}

/// Grid blocks per SM (Kineto's "blocks per SM").
pub fn blocks_per_sm(launch: &Launch, sm_count: i64) -> Option<f64> {
    (sm_count > 0).then(|| launch.blocks() as f64 / sm_count as f64)
}

/// Kineto's estimated achieved occupancy, 0..=1: resident blocks capped by
/// the grid's blocks per SM, times threads per block, over threads per SM.
pub fn estimated_achieved(l: &Limits, launch: &Launch) -> Option<f64> {
    let sms = l.sm_count?;
    let per_sm = blocks_per_sm(launch, sms)?;
    let active = occupancy(l, launch).active_blocks as f64;
    let threads_per_sm = l.max_warps_per_sm as f64 * l.warp_size as f64;
    if threads_per_sm <= 0.0 {
        return None;
    }
    Some(per_sm.min(active) * launch.threads_per_block() as f64 / threads_per_sm)
}

/// Kineto's estimated achieved occupancy as it writes it: an integer
/// percent, `(int)(0.5 + occupancy × 100)`, computed in `float` as its
/// `kernelOccupancy` does, with the default 48 KiB per-block shared memory
/// limit ([`Limits::with_default_smem_limit`]). `None` without an SM count.
pub fn kineto_percent(l: &Limits, launch: &Launch) -> Option<i64> {
    let sms = l.sm_count.filter(|&n| n > 0)?;
    let kl = l.with_default_smem_limit();
    let active = occupancy(&kl, launch).active_blocks as f32;
    let per_sm = launch.blocks() as f32 / sms as f32;
    let threads_per_sm = kl.max_warps_per_sm as f32 * kl.warp_size as f32;
    if threads_per_sm <= 0.0 {
        return None;
    }
    let occ = per_sm.min(active) * launch.threads_per_block() as f32 / threads_per_sm;
    Some(round_percent(f64::from(occ)))
}

/// An occupancy (0..=1) as Kineto rounds it to a percent:
/// `(int)(0.5 + x × 100)`.
pub fn round_percent(x: f64) -> i64 {
    (0.5 + x * 100.0) as i64
}

/// Estimated SM efficiency of one kernel: the share of SMs its grid can
/// keep busy, `min(blocks / SMs, 1)` (the PyTorch profiler's definition).
pub fn sm_efficiency(launch: &Launch, sm_count: i64) -> Option<f64> {
    blocks_per_sm(launch, sm_count).map(|b| b.min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a100() -> Limits {
        let mut l = Limits::for_cc((8, 0)).unwrap();
        l.sm_count = Some(108);
        l
    }

    fn launch(grid: i64, block: i64, regs: i64, smem: i64) -> Launch {
        Launch {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            regs_per_thread: Some(regs),
            smem_per_block: Some(smem),
        }
    }

    /// Hand-computed: 256 threads = 8 warps; 32 regs → 1024 regs/warp,
    /// 16384 per partition / 1024 = 16 warps per partition → 64 warps → 8
    /// blocks; warps limit 64/8 = 8; smem (0 + 1 KiB reserved) → 164 blocks;
    /// 8 blocks × 8 warps / 64 = 100 %.
    #[test]
    fn full_occupancy() {
        let o = occupancy(&a100(), &launch(1000, 256, 32, 0));
        assert_eq!(o.active_blocks, 8);
        assert_eq!(o.limiter, Limiter::Warps);
        assert!((o.theoretical - 1.0).abs() < 1e-12);
    }

    /// 128 regs/thread → 4096 regs per warp → 4 warps per partition → 16
    /// warps per SM → 2 blocks of 8 warps → 25 %.
    #[test]
    fn register_limited() {
        let o = occupancy(&a100(), &launch(1000, 256, 128, 0));
        assert_eq!((o.active_blocks, o.limiter), (2, Limiter::Registers));
        assert!((o.theoretical - 0.25).abs() < 1e-12);
    }

    /// 48 KiB + 1 KiB reserved = 50176 B per block → 167936 / 50176 = 3.
    #[test]
    fn shared_memory_limited() {
        let o = occupancy(&a100(), &launch(1000, 128, 32, 48 * 1024));
        assert_eq!((o.active_blocks, o.limiter), (3, Limiter::SharedMemory));
        // more than a block may use: does not fit
        assert_eq!(
            occupancy(&a100(), &launch(1, 128, 32, 200 * 1024)).active_blocks,
            0
        );
    }

    #[test]
    fn block_count_limited_and_oversized_blocks() {
        let o = occupancy(&a100(), &launch(1000, 32, 16, 0));
        assert_eq!((o.active_blocks, o.limiter), (32, Limiter::Blocks));
        assert_eq!(occupancy(&a100(), &launch(1, 2048, 16, 0)).active_blocks, 0);
        assert_eq!(occupancy(&a100(), &launch(1, 128, 300, 0)).active_blocks, 0);
    }

    /// The corpus kernel `cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4`:
    /// grid 64, block 128, 90 regs, 48 KiB shared memory on a 108-SM A100;
    /// Kineto recorded 0.5925926 blocks per SM and 4 %.
    #[test]
    fn matches_kineto_on_a_small_grid() {
        let l = a100();
        let k = launch(64, 128, 90, 49152);
        assert!((blocks_per_sm(&k, 108).unwrap() - 0.5925926).abs() < 1e-6);
        let est = estimated_achieved(&l, &k).unwrap();
        assert_eq!((est * 100.0 + 0.5) as i64, 4);
        assert!((sm_efficiency(&k, 108).unwrap() - 0.5925926).abs() < 1e-6);
    }

    /// Over 48 KiB of shared memory: the opt-in limit lets 2 blocks of
    /// 80 KiB (+1 KiB reserved) share an SM's 164 KiB; Kineto's default
    /// 48 KiB limit says the block does not fit at all.
    #[test]
    fn kineto_applies_the_default_smem_limit() {
        let l = a100();
        let k = launch(1000, 256, 32, 80 * 1024);
        let o = occupancy(&l, &k);
        assert_eq!((o.active_blocks, o.limiter), (2, Limiter::SharedMemory));
        // 2 blocks × 256 threads / 2048 = 25 %
        assert_eq!(round_percent(estimated_achieved(&l, &k).unwrap()), 25);
        assert_eq!(kineto_percent(&l, &k), Some(0));
        // exactly 48 KiB is allowed by both
        let k = launch(64, 128, 90, 49152);
        assert_eq!(kineto_percent(&l, &k), Some(4));
        assert_eq!(round_percent(0.045), 5);
        assert_eq!(round_percent(0.0449), 4);
    }

    proptest::proptest! {
        #[test]
        fn never_panics(g in -5i64..1_000_000, b in -5i64..5000, r in proptest::option::of(-5i64..400), s in proptest::option::of(-5i64..300_000)) {
            let k = Launch { grid: [g, 1, 1], block: [b, 1, 1], regs_per_thread: r, smem_per_block: s };
            let o = occupancy(&a100(), &k);
            proptest::prop_assert!((0.0..=1.0).contains(&o.theoretical));
            let _ = estimated_achieved(&a100(), &k);
        }
    }
}
