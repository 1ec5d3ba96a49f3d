//! Per-SM resource limits of a GPU, from the profile's device table when it
//! has them and from a compute-capability table otherwise.

use rprof_model::DeviceInfo;

/// Where the limits came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitsSource {
    /// The profile's device table.
    File,
    /// rprof's compute-capability table (the file lacked some fields).
    CcTable,
    /// Neither: defaults of compute capability 8.0 were assumed.
    Assumed,
    /// No device table: the compute capability was inferred from kernel
    /// names (`sm90_…`, `ampere_…`), the limits from rprof's table.
    KernelNames,
}

/// The resources one SM offers to resident blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Compute capability.
    pub cc: (i64, i64),
    /// Threads per warp.
    pub warp_size: i64,
    /// Resident warps per SM.
    pub max_warps_per_sm: i64,
    /// Resident blocks per SM.
    pub max_blocks_per_sm: i64,
    /// Threads per block.
    pub max_threads_per_block: i64,
    /// 32-bit registers per SM.
    pub regs_per_sm: i64,
    /// 32-bit registers per block.
    pub regs_per_block: i64,
    /// Registers per thread the hardware can address.
    pub max_regs_per_thread: i64,
    /// Register allocation unit (registers per warp are rounded up to it).
    pub reg_alloc_unit: i64,
    /// Register file partitions (warp schedulers) per SM.
    pub sub_partitions: i64,
    /// Shared memory per SM usable by blocks, bytes.
    pub smem_per_sm: i64,
    /// Shared memory one block may use (opt-in maximum), bytes.
    pub smem_per_block: i64,
    /// Shared memory one block may use without opting in, bytes (48 KiB on
    /// every GPU since compute capability 2.0). The PyTorch profiler's
    /// occupancy estimate applies this limit (see
    /// [`Limits::with_default_smem_limit`]).
    pub smem_per_block_default: i64,
    /// Shared memory the system reserves per block, bytes (1 KiB on 8.0+).
    pub smem_reserved_per_block: i64,
    /// Shared memory allocation unit, bytes.
    pub smem_alloc_unit: i64,
    /// SMs on the device.
    pub sm_count: Option<i64>,
    /// Where these numbers came from.
    pub source: LimitsSource,
}

/// The per-block shared memory limit without opt-in, bytes.
pub const DEFAULT_SMEM_PER_BLOCK: i64 = 48 * 1024;

/// (cc, max warps/SM, max blocks/SM, smem/SM KiB, smem/block opt-in KiB,
/// reserved/block, smem unit, sub-partitions)
type CcRow = ((i64, i64), i64, i64, i64, i64, i64, i64, i64);

/// CUDA C++ Programming Guide, "Technical Specifications per Compute
/// Capability", and the occupancy calculator's allocation units.
const CC_TABLE: &[CcRow] = &[
    ((5, 0), 64, 32, 64, 48, 0, 256, 4),
    ((5, 2), 64, 32, 96, 48, 0, 256, 4),
    ((5, 3), 64, 32, 64, 48, 0, 256, 4),
    ((6, 0), 64, 32, 64, 48, 0, 256, 2),
    ((6, 1), 64, 32, 96, 48, 0, 256, 4),
    ((6, 2), 64, 32, 64, 48, 0, 256, 4),
    ((7, 0), 64, 32, 96, 96, 0, 256, 4),
    ((7, 2), 64, 32, 96, 96, 0, 256, 4),
    ((7, 5), 32, 16, 64, 64, 0, 256, 4),
    ((8, 0), 64, 32, 164, 163, 1024, 128, 4),
    ((8, 6), 48, 16, 100, 99, 1024, 128, 4),
    ((8, 7), 48, 16, 164, 163, 1024, 128, 4),
    ((8, 9), 48, 24, 100, 99, 1024, 128, 4),
    ((9, 0), 64, 32, 228, 227, 1024, 128, 4),
    ((10, 0), 64, 32, 228, 227, 1024, 128, 4),
    ((12, 0), 48, 32, 100, 99, 1024, 128, 4),
];

impl LimitsSource {
    /// `file`, `file cc + cc table`, `assumed (cc 8.0)` or `cc inferred
    /// from kernel names`.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitsSource::File => "file",
            LimitsSource::CcTable => "file cc + cc table",
            LimitsSource::Assumed => "assumed (cc 8.0)",
            LimitsSource::KernelNames => "cc inferred from kernel names",
        }
    }
}

impl Limits {
    /// Limits of compute capability `cc` from rprof's table (the nearest
    /// lower entry of the same major version, else the nearest lower one).
    pub fn for_cc(cc: (i64, i64)) -> Option<Limits> {
        let row = CC_TABLE.iter().filter(|r| r.0 <= cc).max_by_key(|r| r.0)?;
        let &(rcc, warps, blocks, smem_sm, smem_blk, reserved, unit, parts) = row;
        Some(Limits {
            cc: if rcc.0 == cc.0 { cc } else { rcc },
            warp_size: 32,
            max_warps_per_sm: warps,
            max_blocks_per_sm: blocks,
            max_threads_per_block: 1024,
            regs_per_sm: 65536,
            regs_per_block: 65536,
            max_regs_per_thread: 255,
            reg_alloc_unit: 256,
            sub_partitions: parts,
            smem_per_sm: smem_sm * 1024,
            smem_per_block: smem_blk * 1024,
            smem_per_block_default: DEFAULT_SMEM_PER_BLOCK,
            smem_reserved_per_block: reserved,
            smem_alloc_unit: unit,
            sm_count: None,
            source: LimitsSource::CcTable,
        })
    }

    /// Limits for a device the profile describes: its own numbers where it
    /// has them, the compute-capability table for the rest.
    pub fn for_device(d: &DeviceInfo) -> Limits {
        let cc = d.cc_major.zip(d.cc_minor);
        let (mut l, mut source) = match cc.and_then(Limits::for_cc) {
            Some(l) => (l, LimitsSource::File),
            None => (Limits::default_assumed(), LimitsSource::Assumed),
        };
        let mut from_table = false;
        let mut take = |slot: &mut i64, v: Option<i64>| match v.filter(|&x| x > 0) {
            Some(x) => *slot = x,
            None => from_table = true,
        };
        take(&mut l.warp_size, d.threads_per_warp);
        take(&mut l.max_warps_per_sm, d.max_warps_per_sm);
        take(&mut l.max_blocks_per_sm, d.max_blocks_per_sm);
        take(&mut l.max_threads_per_block, d.max_threads_per_block);
        take(&mut l.regs_per_sm, d.max_regs_per_sm);
        take(&mut l.regs_per_block, d.max_regs_per_block);
        take(&mut l.smem_per_sm, d.max_smem_per_sm);
        take(
            &mut l.smem_per_block,
            d.max_smem_per_block_optin.or(d.max_smem_per_block),
        );
        if let Some(x) = d.max_smem_per_block.filter(|&x| x > 0) {
            l.smem_per_block_default = x;
        }
        if from_table && source == LimitsSource::File {
            source = LimitsSource::CcTable;
        }
        l.sm_count = d.sm_count.filter(|&n| n > 0);
        l.source = source;
        l
    }

    /// These limits as the PyTorch profiler (Kineto) applies them: its
    /// occupancy call (`cudaOccMaxActiveBlocksPerMultiprocessor` with
    /// `FUNC_SHMEM_LIMIT_DEFAULT`) checks a block's shared memory against
    /// the default per-block limit (48 KiB), not the opt-in maximum the
    /// kernel actually ran with, so it rates every kernel using more than
    /// 48 KiB at 0 resident blocks.
    pub fn with_default_smem_limit(&self) -> Limits {
        Limits {
            smem_per_block: self.smem_per_block_default.min(self.smem_per_block),
            ..self.clone()
        }
    }

    fn default_assumed() -> Limits {
        assumed_8_0()
    }
}

/// Compute capability 8.0, for devices the profile does not describe.
fn assumed_8_0() -> Limits {
    Limits {
        cc: (8, 0),
        warp_size: 32,
        max_warps_per_sm: 64,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        regs_per_sm: 65536,
        regs_per_block: 65536,
        max_regs_per_thread: 255,
        reg_alloc_unit: 256,
        sub_partitions: 4,
        smem_per_sm: 164 * 1024,
        smem_per_block: 163 * 1024,
        smem_per_block_default: DEFAULT_SMEM_PER_BLOCK,
        smem_reserved_per_block: 1024,
        smem_alloc_unit: 128,
        sm_count: None,
        source: LimitsSource::Assumed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lookup() {
        let a100 = Limits::for_cc((8, 0)).unwrap();
        assert_eq!((a100.max_warps_per_sm, a100.smem_per_sm), (64, 167_936));
        let ada = Limits::for_cc((8, 9)).unwrap();
        assert_eq!((ada.max_warps_per_sm, ada.max_blocks_per_sm), (48, 24));
        // an unknown minor version takes its major's nearest lower row
        assert_eq!(Limits::for_cc((9, 5)).unwrap().max_warps_per_sm, 64);
        assert!(Limits::for_cc((2, 0)).is_none());
    }

    #[test]
    fn file_values_win() {
        let d = DeviceInfo {
            cc_major: Some(8),
            cc_minor: Some(0),
            sm_count: Some(108),
            max_warps_per_sm: Some(64),
            max_blocks_per_sm: Some(32),
            threads_per_warp: Some(32),
            max_threads_per_block: Some(1024),
            max_regs_per_sm: Some(65536),
            max_regs_per_block: Some(65536),
            max_smem_per_sm: Some(167_936),
            max_smem_per_block_optin: Some(166_912),
            ..DeviceInfo::default()
        };
        let l = Limits::for_device(&d);
        assert_eq!(l.source, LimitsSource::File);
        assert_eq!(l.smem_per_block, 166_912);
        assert_eq!(l.sm_count, Some(108));
        assert_eq!(l.smem_per_block_default, 49152);
        assert_eq!(l.with_default_smem_limit().smem_per_block, 49152);
        let partial = DeviceInfo {
            cc_major: Some(7),
            cc_minor: Some(0),
            ..DeviceInfo::default()
        };
        assert_eq!(Limits::for_device(&partial).source, LimitsSource::CcTable);
        assert_eq!(
            Limits::for_device(&DeviceInfo::default()).source,
            LimitsSource::Assumed
        );
    }
}
