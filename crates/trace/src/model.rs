//! The in-memory trace: kernels, the calls that launched them, NVTX ranges
//! and device descriptions, as read from one profile.
//!
//! Times are integer nanoseconds on the file's own clock (nsys: offsets from
//! the capture start; nvprof: Unix epoch). Never compare times across files.

use crate::strings::{StrPool, StrRef};

/// Which profiler wrote the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Nsight Systems SQLite export.
    Nsys,
    /// nvprof SQLite database.
    Nvprof,
    /// PyTorch profiler (Kineto) chrome trace.
    Kineto,
}

impl Source {
    /// Lower-case name, as written in records and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Nsys => "nsys",
            Source::Nvprof => "nvprof",
            Source::Kineto => "kineto",
        }
    }
}

/// A CPU thread, unique within one file.
///
/// nsys: the packed `globalTid`. nvprof: `(pid << 32) | (tid & 0xFFFF_FFFF)`.
pub type ThreadKey = u64;

/// One GPU kernel execution.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Position in the kernel table (rowid order), used by `--compat`.
    pub row: u32,
    /// GPU start, ns.
    pub start_ns: i64,
    /// GPU end, ns.
    pub end_ns: i64,
    /// CUDA device ordinal as seen by the process.
    pub device: i64,
    /// CUDA context id.
    pub context: Option<u32>,
    /// CUDA stream id.
    pub stream: i64,
    /// CUPTI correlation id (unique within a process).
    pub correlation: i64,
    /// nsys `globalPid` (process bits of the packed id); `None` for nvprof.
    pub global_pid: Option<u64>,
    /// Kernel name as stored (nsys: demangled by nsys; nvprof: mangled).
    pub name: StrRef,
    /// Itanium-mangled name when the file has one (nsys ≥ 2021.5).
    pub mangled: Option<StrRef>,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// Registers per thread.
    pub registers_per_thread: Option<u16>,
    /// Static shared memory per block, bytes.
    pub static_smem_bytes: Option<u32>,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_smem_bytes: Option<u32>,
    /// CUDA graph id (nsys ≥ 2025.5, Kineto).
    pub graph_id: Option<u32>,
    /// CUDA graph node id.
    pub graph_node_id: Option<i64>,
    /// Index of the launching call in [`Trace::launches`].
    pub launch: Option<u32>,
    /// What the PyTorch profiler computed for this kernel (Kineto input).
    pub kineto: Option<Box<KinetoKernel>>,
}

/// Occupancy figures the PyTorch profiler (Kineto) writes on each kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KinetoKernel {
    /// `blocks per SM`: grid blocks / SM count.
    pub blocks_per_sm: Option<f64>,
    /// `warps per SM`.
    pub warps_per_sm: Option<f64>,
    /// `est. achieved occupancy %`.
    pub occupancy_pct: Option<f64>,
}

/// A memory copy or memset on the GPU.
#[derive(Clone, Debug)]
pub struct MemOp {
    /// GPU start, ns.
    pub start_ns: i64,
    /// GPU end, ns.
    pub end_ns: i64,
    /// Device ordinal.
    pub device: i64,
    /// Stream id.
    pub stream: i64,
    /// Correlation id.
    pub correlation: i64,
    /// Bytes moved or set.
    pub bytes: Option<i64>,
    /// `Memcpy HtoD`, `Memset`, …
    pub name: StrRef,
    /// Launching call, when found.
    pub launch: Option<u32>,
}

impl Kernel {
    /// GPU time, ns; 0 when the file says `end <= start`.
    pub fn duration_ns(&self) -> i64 {
        self.end_ns.saturating_sub(self.start_ns).max(0)
    }
}

/// The CPU call that launched a kernel (runtime or driver API).
#[derive(Clone, Debug)]
pub struct Launch {
    /// CPU start of the API call, ns.
    pub start_ns: i64,
    /// CPU end of the API call, ns.
    pub end_ns: i64,
    /// Calling thread.
    pub thread: ThreadKey,
    /// Process id (24-bit nsys pid, or nvprof `processId`).
    pub pid: u64,
    /// Thread id as PyProf prints it (nsys: low 24 bits of `globalTid`;
    /// nvprof: `threadId & 0xFFFFFFFF`).
    pub tid: u64,
    /// Correlation id.
    pub correlation: i64,
    /// API function name (`cudaLaunchKernel`, `cuLaunchKernelEx`, …) without
    /// the `_vNNNN` suffix, when known.
    pub api: Option<StrRef>,
}

/// One NVTX range (or nvprof start/end marker pair).
#[derive(Clone, Debug)]
pub struct Range {
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns (capture end for ranges still open when capture stopped).
    pub end_ns: i64,
    /// Thread that pushed or started it.
    pub thread: ThreadKey,
    /// Message text (inline or registered string). Inline texts are stored
    /// in file order, so the handle doubles as the tie-break between ranges
    /// with the same start and end.
    pub text: StrRef,
    /// Domain id; 0 is the default domain.
    pub domain: u32,
}

/// What the PyTorch profiler records on an operator beyond its name.
#[derive(Clone, Debug, Default)]
pub struct RangeMeta {
    /// `Module Hierarchy` (`top(Net)::layer1(Sequential)::0(Conv2d)`).
    pub module: Option<StrRef>,
    /// `Call stack` (`a.py(10): f;b.py(20): g`).
    pub call_stack: Option<StrRef>,
}

/// What the file says about one GPU.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeviceInfo {
    /// CUDA device ordinal as used by the kernels' `deviceId`.
    pub device: i64,
    /// Process the ordinal belongs to, when the file maps per process.
    pub pid: Option<u64>,
    /// Marketing name (`NVIDIA A100-SXM4-40GB`).
    pub name: Option<String>,
    /// Number of SMs.
    pub sm_count: Option<i64>,
    /// Compute capability, major.
    pub cc_major: Option<i64>,
    /// Compute capability, minor.
    pub cc_minor: Option<i64>,
    /// SM clock, Hz.
    pub clock_hz: Option<i64>,
    /// Memory bandwidth, bytes/s.
    pub mem_bandwidth_bps: Option<i64>,
    /// Threads per warp.
    pub threads_per_warp: Option<i64>,
    /// Max resident warps per SM.
    pub max_warps_per_sm: Option<i64>,
    /// Max resident blocks per SM.
    pub max_blocks_per_sm: Option<i64>,
    /// Max threads per block.
    pub max_threads_per_block: Option<i64>,
    /// 32-bit registers per SM.
    pub max_regs_per_sm: Option<i64>,
    /// 32-bit registers per block.
    pub max_regs_per_block: Option<i64>,
    /// Shared memory per SM, bytes.
    pub max_smem_per_sm: Option<i64>,
    /// Shared memory per block (default limit), bytes.
    pub max_smem_per_block: Option<i64>,
    /// Shared memory per block with opt-in, bytes.
    pub max_smem_per_block_optin: Option<i64>,
}

/// Saturating conversion of a file's integer to a narrower field.
pub fn narrow<T: TryFrom<i64> + Bounded>(v: Option<i64>) -> Option<T> {
    v.map(|x| T::try_from(x).unwrap_or(if x < 0 { T::MIN_V } else { T::MAX_V }))
}

/// Types [`narrow`] can saturate to.
pub trait Bounded: Sized {
    /// Smallest value.
    const MIN_V: Self;
    /// Largest value.
    const MAX_V: Self;
}

impl Bounded for u16 {
    const MIN_V: u16 = 0;
    const MAX_V: u16 = u16::MAX;
}

impl Bounded for u32 {
    const MIN_V: u32 = 0;
    const MAX_V: u32 = u32::MAX;
}

/// Counts of what was read, skipped or left unmatched, for the stderr summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Rows in the kernel table(s).
    pub kernel_rows: u64,
    /// Kernel rows skipped because a required field was NULL.
    pub skipped_null: u64,
    /// Kernels whose end is not after their start (kept, duration 0).
    pub non_positive_duration: u64,
    /// Kernels without a launch call.
    pub without_launch: u64,
    /// NVTX rows in the file (any thread, any type).
    pub nvtx_rows: u64,
    /// NVTX ranges kept (on threads that launched kernels).
    pub ranges: u64,
    /// NVTX rows skipped (NULL start or text).
    pub ranges_skipped: u64,
    /// Ranges still open at the end of capture (end taken as capture end).
    pub ranges_open: u64,
}

/// A whole profile in memory.
#[derive(Debug)]
pub struct Trace {
    /// The file it was read from.
    pub path: std::path::PathBuf,
    /// Which profiler wrote it.
    pub source: Source,
    /// Producer version and schema, for diagnostics (`nsys 2024.2.1.106, schema 3.11.1`).
    pub producer: Option<String>,
    /// All strings.
    pub strings: StrPool,
    /// Kernels in table (rowid) order.
    pub kernels: Vec<Kernel>,
    /// Launch calls referenced by kernels.
    pub launches: Vec<Launch>,
    /// NVTX ranges on threads that launched kernels.
    pub ranges: Vec<Range>,
    /// Extra operator data (Kineto), by the range's text handle (each
    /// Kineto operator has a text of its own).
    pub range_meta: crate::FastMap<StrRef, RangeMeta>,
    /// Memory copies and sets (read where the input has them).
    pub memops: Vec<MemOp>,
    /// Domain names by (process bits of the thread, domain id).
    pub domains: Vec<((u64, u32), StrRef)>,
    /// GPUs.
    pub devices: Vec<DeviceInfo>,
    /// What the reader counted.
    pub stats: ReadStats,
    /// Human-readable notes (missing tables, fallbacks).
    pub notes: Vec<String>,
}

impl Trace {
    /// The device description of `device` as seen from process `pid`.
    pub fn device(&self, device: i64, pid: Option<u64>) -> Option<&DeviceInfo> {
        self.devices
            .iter()
            .find(|d| d.device == device && (d.pid.is_none() || pid.is_none() || d.pid == pid))
            .or_else(|| self.devices.iter().find(|d| d.device == device))
    }

    /// The name of NVTX domain `domain` in the process of `thread`.
    pub fn domain_name(&self, thread: ThreadKey, domain: u32) -> Option<&str> {
        if domain == 0 {
            return None;
        }
        let proc_bits = process_bits(self.source, thread);
        self.domains
            .iter()
            .find(|((p, d), _)| *p == proc_bits && *d == domain)
            .map(|(_, s)| self.strings.get(*s))
    }
}

/// The part of a thread key that names the process.
pub fn process_bits(source: Source, thread: ThreadKey) -> u64 {
    match source {
        Source::Nsys => thread & !0xFF_FFFF,
        Source::Nvprof | Source::Kineto => thread >> 32,
    }
}

#[cfg(test)]
mod size_tests {
    /// Millions of these are held at once; keep them from growing by accident.
    #[test]
    fn sizes_stay_small() {
        assert!(std::mem::size_of::<super::Kernel>() <= 168);
        assert!(std::mem::size_of::<super::Range>() <= 32);
        assert!(std::mem::size_of::<super::Launch>() <= 56);
    }
}
