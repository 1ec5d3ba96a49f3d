//! One profile's tables: kernels, the calls that launched them, every other
//! CUDA API call, NVTX ranges and PyTorch-profiler operators, memory copies
//! and sets, memory (allocation) events, synchronisation records and device
//! descriptions.
//!
//! Times are integer nanoseconds on the file's own clock (nsys: offsets from
//! the capture start; nvprof: Unix epoch; Kineto: the trace's `ts`). Compare
//! times across files only through a [`crate::job::ClockOrigin`].
//!
//! Readers fill only the tables a command asks for (see rprof-trace's
//! `ReadOptions`): a per-kernel report never pays for memory events.

use crate::job::{ClockOrigin, DistInfo};
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

/// A CPU thread, unique within one file: the join key of launches, API
/// calls and ranges. Its layout depends on the input format (nsys: the
/// packed `globalTid`; nvprof and Kineto: `(pid << 32) | (tid & 0xFFFF_FFFF)`);
/// [`Trace::thread_id`] turns it into a typed [`ThreadId`].
pub type ThreadKey = u64;

/// The operating-system process id inside an nsys `globalPid` or
/// `globalTid` (bits 24-47).
pub fn nsys_pid(global: u64) -> u64 {
    (global >> 24) & 0xFF_FFFF
}

/// A CPU thread as the profiler names it: process id and thread id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId {
    /// Operating-system process id.
    pub pid: u64,
    /// Thread id (nsys: the Linux TID; nvprof: a 32-bit id; Kineto: the
    /// trace's `tid`).
    pub tid: u64,
}

impl ThreadId {
    /// The thread a [`ThreadKey`] of a `source` profile packs.
    pub fn of(source: Source, thread: ThreadKey) -> ThreadId {
        match source {
            Source::Nsys => ThreadId {
                pid: nsys_pid(thread),
                tid: thread & 0xFF_FFFF,
            },
            Source::Nvprof | Source::Kineto => ThreadId {
                pid: thread >> 32,
                tid: thread & 0xFFFF_FFFF,
            },
        }
    }
}

/// One GPU kernel execution. 112 bytes: profiles hold millions (the
/// rarely set graph ids and PyTorch-profiler figures live in
/// [`Kernel::extra`], the process as a plain integer, the optional 4-byte
/// fields in 4 bytes: [`crate::OptU32`]).
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
    /// CUDA context id (at most `u32::MAX − 1`).
    pub context: crate::OptU32,
    /// CUDA stream id.
    pub stream: i64,
    /// CUPTI correlation id (unique within a process).
    pub correlation: i64,
    /// nsys `globalPid` (process bits of the packed id); [`NO_PID`] for
    /// none (nvprof, Kineto, a NULL cell): see [`Kernel::global_pid`].
    pub global_pid_bits: u64,
    /// Kernel name as stored (nsys: demangled by nsys; nvprof: mangled).
    pub name: StrRef,
    /// Itanium-mangled name when the file has one (nsys ≥ 2021.5).
    pub mangled: crate::OptStr,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// Registers per thread.
    pub registers_per_thread: Option<u16>,
    /// Static shared memory per block, bytes (at most `u32::MAX − 1`:
    /// [`crate::OptU32::saturating`]).
    pub static_smem_bytes: crate::OptU32,
    /// Dynamic shared memory per block, bytes (the same bound).
    pub dynamic_smem_bytes: crate::OptU32,
    /// Index of the launching call in [`Trace::launches`].
    pub launch: crate::OptU32,
    /// CUDA graph ids and the PyTorch profiler's figures, when any is
    /// known ([`KernelExtra::of`]).
    pub extra: Option<Box<KernelExtra>>,
}

/// `globalPid` of a kernel that has none ([`Kernel::global_pid_bits`]).
pub const NO_PID: u64 = u64::MAX;

/// What few kernels carry, kept out of [`Kernel`] itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelExtra {
    /// CUDA graph id (nsys ≥ 2025.5, Kineto).
    pub graph_id: Option<u32>,
    /// CUDA graph node id.
    pub graph_node_id: Option<i64>,
    /// What the PyTorch profiler computed for this kernel (Kineto input).
    pub kineto: Option<KinetoKernel>,
}

impl KernelExtra {
    /// The extras of a kernel, `None` when it has none of them.
    pub fn of(
        graph_id: Option<u32>,
        graph_node_id: Option<i64>,
        kineto: Option<KinetoKernel>,
    ) -> Option<Box<KernelExtra>> {
        let e = KernelExtra {
            graph_id,
            graph_node_id,
            kineto,
        };
        (e != KernelExtra::default()).then(|| Box::new(e))
    }
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
    /// Collective arguments the profiler wrote on a communication kernel.
    pub comm: Option<Box<CommArgs>>,
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
    /// Copy (and its direction) or set.
    pub kind: MemKind,
    /// Kind of the source memory (copies) or of the memory set (sets).
    pub src_mem: MemoryKind,
    /// Kind of the destination memory (copies).
    pub dst_mem: MemoryKind,
    /// Process (nsys `globalPid` process bits, shifted down; nvprof and
    /// Kineto: the launching call's process when known).
    pub pid: Option<u64>,
}

impl MemOp {
    /// GPU time, ns; 0 when the file says `end <= start`.
    pub fn duration_ns(&self) -> i64 {
        self.end_ns.saturating_sub(self.start_ns).max(0)
    }
}

/// What a memory operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemKind {
    /// A copy, in this direction.
    Copy(CopyKind),
    /// A memset.
    Set,
}

/// Direction of a copy (`ENUM_CUDA_MEMCPY_OPER`; CUPTI uses the same numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CopyKind {
    /// Host to device.
    HtoD,
    /// Device to host.
    DtoH,
    /// Device to device (same device).
    DtoD,
    /// Host to host.
    HtoH,
    /// Peer to peer (between devices).
    PtoP,
    /// Host to array.
    HtoA,
    /// Array to host.
    AtoH,
    /// Array to array.
    AtoA,
    /// Array to device.
    AtoD,
    /// Device to array.
    DtoA,
    /// Unknown or unified-memory migration.
    Other,
}

impl CopyKind {
    /// From nsys's / CUPTI's `copyKind` number.
    pub fn from_code(code: Option<i64>) -> CopyKind {
        match code {
            Some(1) | Some(11) => CopyKind::HtoD,
            Some(2) | Some(12) => CopyKind::DtoH,
            Some(3) => CopyKind::HtoA,
            Some(4) => CopyKind::AtoH,
            Some(5) => CopyKind::AtoA,
            Some(6) => CopyKind::AtoD,
            Some(7) => CopyKind::DtoA,
            Some(8) | Some(13) => CopyKind::DtoD,
            Some(9) => CopyKind::HtoH,
            Some(10) => CopyKind::PtoP,
            _ => CopyKind::Other,
        }
    }

    /// From a copy's name (`Memcpy HtoD (Pageable -> Device)`, `Memcpy DtoD`).
    pub fn from_name(name: &str) -> CopyKind {
        let word = name
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find(|w| w.len() == 4 && w.as_bytes()[1] == b't');
        match word {
            Some("HtoD") => CopyKind::HtoD,
            Some("DtoH") => CopyKind::DtoH,
            Some("DtoD") => CopyKind::DtoD,
            Some("HtoH") => CopyKind::HtoH,
            Some("PtoP") => CopyKind::PtoP,
            Some("HtoA") => CopyKind::HtoA,
            Some("AtoH") => CopyKind::AtoH,
            Some("AtoA") => CopyKind::AtoA,
            Some("AtoD") => CopyKind::AtoD,
            Some("DtoA") => CopyKind::DtoA,
            _ => CopyKind::Other,
        }
    }

    /// `HtoD`, `DtoH`, …; `other` for unknown kinds.
    pub fn as_str(self) -> &'static str {
        match self {
            CopyKind::HtoD => "HtoD",
            CopyKind::DtoH => "DtoH",
            CopyKind::DtoD => "DtoD",
            CopyKind::HtoH => "HtoH",
            CopyKind::PtoP => "PtoP",
            CopyKind::HtoA => "HtoA",
            CopyKind::AtoH => "AtoH",
            CopyKind::AtoA => "AtoA",
            CopyKind::AtoD => "AtoD",
            CopyKind::DtoA => "DtoA",
            CopyKind::Other => "other",
        }
    }
}

/// Kind of memory a copy reads or writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemoryKind {
    /// Not recorded.
    #[default]
    Unknown,
    /// Pageable host memory.
    Pageable,
    /// Page-locked (pinned) host memory.
    Pinned,
    /// Device memory.
    Device,
    /// CUDA array.
    Array,
    /// Managed (unified) memory.
    Managed,
}

impl MemoryKind {
    /// From nsys's `srcKind`/`dstKind`/`memKind` (`ENUM_CUDA_MEM_KIND`:
    /// 0 pageable, 1 pinned, 2 device, 3 array, 4 managed, 5 device static,
    /// 6 managed static).
    pub fn from_nsys(code: Option<i64>) -> MemoryKind {
        match code {
            Some(0) => MemoryKind::Pageable,
            Some(1) => MemoryKind::Pinned,
            Some(2) | Some(5) => MemoryKind::Device,
            Some(3) => MemoryKind::Array,
            Some(4) | Some(6) => MemoryKind::Managed,
            _ => MemoryKind::Unknown,
        }
    }

    /// From CUPTI's (nvprof's) numbering: 1 pageable, 2 pinned, 3 device,
    /// 4 array, 5 managed, 6 device static, 7 managed static.
    pub fn from_cupti(code: Option<i64>) -> MemoryKind {
        match code {
            Some(1) => MemoryKind::Pageable,
            Some(2) => MemoryKind::Pinned,
            Some(3) | Some(6) => MemoryKind::Device,
            Some(4) => MemoryKind::Array,
            Some(5) | Some(7) => MemoryKind::Managed,
            _ => MemoryKind::Unknown,
        }
    }

    /// From the PyTorch profiler's copy names (`Memcpy HtoD (Pageable -> Device)`):
    /// (source, destination).
    pub fn from_kineto_name(name: &str) -> (MemoryKind, MemoryKind) {
        let Some(inner) = name.rsplit_once('(').and_then(|(_, r)| r.strip_suffix(')')) else {
            return (MemoryKind::Unknown, MemoryKind::Unknown);
        };
        let word = |w: &str| match w.trim() {
            "Pageable" => MemoryKind::Pageable,
            "Pinned" => MemoryKind::Pinned,
            "Device" => MemoryKind::Device,
            "Array" => MemoryKind::Array,
            "Managed" => MemoryKind::Managed,
            _ => MemoryKind::Unknown,
        };
        match inner.split_once("->") {
            Some((a, b)) => (word(a), word(b)),
            None => (word(inner), MemoryKind::Unknown),
        }
    }

    /// `pageable`, `pinned`, `device`, `array`, `managed`, `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::Unknown => "unknown",
            MemoryKind::Pageable => "pageable",
            MemoryKind::Pinned => "pinned",
            MemoryKind::Device => "device",
            MemoryKind::Array => "array",
            MemoryKind::Managed => "managed",
        }
    }
}

/// One CUDA runtime or driver API call, whatever it does (launches,
/// synchronisation, copies, allocation, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiCall {
    /// CPU start, ns.
    pub start_ns: i64,
    /// CPU end, ns.
    pub end_ns: i64,
    /// Calling thread.
    pub thread: ThreadKey,
    /// Correlation id (ties the call to its GPU work).
    pub correlation: i64,
    /// Function name without the `_vNNNN` suffix (`cudaStreamSynchronize`).
    pub name: StrRef,
    /// What the call does, from its name.
    pub kind: ApiKind,
}

impl ApiCall {
    /// The order of [`Trace::api_calls_in_order`]: by start, thread,
    /// correlation id, then end, name and kind, so that only calls equal
    /// in every field tie.
    pub fn order_key(&self) -> (i64, ThreadKey, i64, i64, StrRef, ApiKind) {
        (
            self.start_ns,
            self.thread,
            self.correlation,
            self.end_ns,
            self.name,
            self.kind,
        )
    }

    /// CPU time of the call, ns (0 when `end <= start`).
    pub fn duration_ns(&self) -> i64 {
        self.end_ns.saturating_sub(self.start_ns).max(0)
    }

    /// Keep only the calls of `calls` that block the host
    /// ([`ApiKind::blocks_host`]), giving back the memory of the others;
    /// the number dropped.
    pub fn keep_blocking(calls: &mut Vec<ApiCall>) -> u64 {
        let before = calls.len();
        calls.retain(|c| c.kind.blocks_host());
        calls.shrink_to_fit();
        (before - calls.len()) as u64
    }
}

/// [`ApiKind::classify`] once per name handle (a trace has a few hundred
/// API names and millions of calls).
#[derive(Default)]
struct KindMemo(Vec<(StrRef, ApiKind)>);

impl KindMemo {
    fn of(&mut self, name: StrRef, strings: &StrPool) -> ApiKind {
        if let Some(&(_, k)) = self.0.iter().find(|(n, _)| *n == name) {
            return k;
        }
        let k = ApiKind::classify(strings.get(name));
        // (bounded: past 64 names, classify without remembering)
        if self.0.len() < 64 {
            self.0.push((name, k));
        }
        k
    }
}

/// What a CUDA API call does, judged from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApiKind {
    /// Launches a kernel or graph (`cudaLaunchKernel`, `cuLaunchKernelEx`,
    /// `cudaGraphLaunch`).
    Launch,
    /// Blocks the host until the GPU catches up (`cudaDeviceSynchronize`,
    /// `cudaStreamSynchronize`, `cudaEventSynchronize`, `cuCtxSynchronize`, …).
    Sync,
    /// Synchronous copy (`cudaMemcpy`, `cuMemcpyDtoH`): blocks the host.
    Memcpy,
    /// Asynchronous copy (`cudaMemcpyAsync`, `cuMemcpyHtoDAsync`).
    MemcpyAsync,
    /// Synchronous memset (`cudaMemset`).
    Memset,
    /// Asynchronous memset (`cudaMemsetAsync`).
    MemsetAsync,
    /// Allocation (`cudaMalloc`, `cudaMallocHost`, `cuMemAlloc`, …).
    Alloc,
    /// Release (`cudaFree`, `cuMemFree`, …).
    Free,
    /// Anything else (`cudaEventRecord`, `cudaGetDevice`, …).
    Other,
}

impl ApiKind {
    /// Classify an API function by its name (with or without `_vNNNN`).
    pub fn classify(name: &str) -> ApiKind {
        let n = match name.rfind("_v") {
            Some(i) if name[i + 2..].bytes().all(|b| b.is_ascii_digit()) && i + 2 < name.len() => {
                &name[..i]
            }
            _ => name,
        };
        let lower = n.to_ascii_lowercase();
        let l = lower.as_str();
        if l.contains("synchronize") || l == "cudastreamwaitevent" || l == "custreamwaitevent" {
            // waiting on an event inside a stream does not block the host
            if l.contains("waitevent") {
                return ApiKind::Other;
            }
            return ApiKind::Sync;
        }
        if l.contains("launch") {
            return ApiKind::Launch;
        }
        if l.starts_with("cudamemcpy") || l.starts_with("cumemcpy") {
            return if l.contains("async") {
                ApiKind::MemcpyAsync
            } else {
                ApiKind::Memcpy
            };
        }
        if l.starts_with("cudamemset") || l.starts_with("cumemset") {
            return if l.contains("async") {
                ApiKind::MemsetAsync
            } else {
                ApiKind::Memset
            };
        }
        if l.starts_with("cudamalloc")
            || l.starts_with("cumemalloc")
            || l.starts_with("cumemcreate")
            || l.starts_with("cudahostalloc")
            || l.starts_with("cumemhostalloc")
        {
            return ApiKind::Alloc;
        }
        if l.starts_with("cudafree") || l.starts_with("cumemfree") || l.starts_with("cumemrelease")
        {
            return ApiKind::Free;
        }
        ApiKind::Other
    }

    /// Lower-case name for reports (`launch`, `sync`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ApiKind::Launch => "launch",
            ApiKind::Sync => "sync",
            ApiKind::Memcpy => "memcpy",
            ApiKind::MemcpyAsync => "memcpy_async",
            ApiKind::Memset => "memset",
            ApiKind::MemsetAsync => "memset_async",
            ApiKind::Alloc => "alloc",
            ApiKind::Free => "free",
            ApiKind::Other => "other",
        }
    }

    /// Whether the call makes the host wait for the GPU.
    pub fn blocks_host(self) -> bool {
        matches!(self, ApiKind::Sync | ApiKind::Memcpy | ApiKind::Memset)
    }
}

/// A synchronisation record of CUPTI (nsys/nvprof
/// `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`, Kineto `cuda_sync`): the interval
/// during which a host thread (or a stream) waited.
#[derive(Clone, Debug)]
pub struct SyncEvent {
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// Device ordinal, when recorded.
    pub device: Option<i64>,
    /// Stream, when recorded.
    pub stream: Option<i64>,
    /// Correlation id of the API call that waited.
    pub correlation: Option<i64>,
    /// Process, when recorded.
    pub pid: Option<u64>,
    /// What was waited for.
    pub kind: SyncKind,
}

/// `ENUM_CUPTI_SYNC_TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SyncKind {
    /// Unknown.
    Unknown,
    /// `cudaEventSynchronize`.
    Event,
    /// `cudaStreamWaitEvent` (a stream waits, not the host).
    StreamWaitEvent,
    /// `cudaStreamSynchronize`.
    Stream,
    /// `cudaDeviceSynchronize` / context synchronize.
    Context,
}

impl SyncKind {
    /// From CUPTI's number (0 unknown, 1 event, 2 stream wait event,
    /// 3 stream, 4 context).
    pub fn from_code(code: Option<i64>) -> SyncKind {
        match code {
            Some(1) => SyncKind::Event,
            Some(2) => SyncKind::StreamWaitEvent,
            Some(3) => SyncKind::Stream,
            Some(4) => SyncKind::Context,
            _ => SyncKind::Unknown,
        }
    }

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncKind::Unknown => "unknown",
            SyncKind::Event => "event",
            SyncKind::StreamWaitEvent => "stream_wait_event",
            SyncKind::Stream => "stream",
            SyncKind::Context => "context",
        }
    }
}

/// Where an allocation lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemDevice {
    /// Host memory (PyTorch's CPU allocator).
    Cpu,
    /// A CUDA device.
    Cuda,
    /// Another device type (the number PyTorch wrote).
    Other(i64),
}

impl MemDevice {
    /// `cpu`, `cuda` or `type<N>`.
    pub fn as_str(self) -> String {
        match self {
            MemDevice::Cpu => "cpu".into(),
            MemDevice::Cuda => "cuda".into(),
            MemDevice::Other(n) => format!("type{n}"),
        }
    }
}

/// One allocation or release of memory (PyTorch profiler `[memory]`
/// instant events; nsys `CUDA_GPU_MEMORY_USAGE_EVENTS`).
#[derive(Clone, Debug)]
pub struct MemEvent {
    /// When, ns.
    pub ts_ns: i64,
    /// Device type.
    pub device_type: MemDevice,
    /// Device index (CPU: −1).
    pub device: i64,
    /// Thread that allocated, when recorded (Kineto).
    pub thread: Option<ThreadKey>,
    /// Process, when recorded.
    pub pid: Option<u64>,
    /// Address, when recorded.
    pub addr: Option<u64>,
    /// Signed size: positive for an allocation, negative for a release.
    pub bytes: i64,
    /// The allocator's total allocated bytes after the event (newer
    /// PyTorch profilers).
    pub total_allocated: Option<i64>,
    /// The allocator's total reserved bytes after the event.
    pub total_reserved: Option<i64>,
    /// Correlation id of the CUDA API call that allocated or freed (nsys
    /// `correlationId`), when recorded: ties the event to a thread.
    pub correlation: Option<i64>,
}

impl Kernel {
    /// GPU time, ns; 0 when the file says `end <= start`.
    pub fn duration_ns(&self) -> i64 {
        self.end_ns.saturating_sub(self.start_ns).max(0)
    }

    /// nsys `globalPid` (process bits of the packed id); `None` for nvprof
    /// and Kineto.
    #[inline]
    pub fn global_pid(&self) -> Option<u64> {
        (self.global_pid_bits != NO_PID).then_some(self.global_pid_bits)
    }

    /// CUDA graph id (nsys ≥ 2025.5, Kineto).
    pub fn graph_id(&self) -> Option<u32> {
        self.extra.as_ref().and_then(|e| e.graph_id)
    }

    /// CUDA graph node id.
    pub fn graph_node_id(&self) -> Option<i64> {
        self.extra.as_ref().and_then(|e| e.graph_node_id)
    }

    /// What the PyTorch profiler computed for this kernel (Kineto input).
    pub fn kineto(&self) -> Option<&KinetoKernel> {
        self.extra.as_ref().and_then(|e| e.kineto.as_ref())
    }
}

/// The CPU call that launched a kernel (runtime or driver API).
#[derive(Clone, Debug)]
pub struct Launch {
    /// CPU start of the API call, ns.
    pub start_ns: i64,
    /// CPU end of the API call, ns.
    pub end_ns: i64,
    /// Calling thread; [`Trace::thread_id`] gives its process id (24-bit
    /// nsys pid, nvprof `processId`) and its thread id as PyProf prints it
    /// (nsys: low 24 bits of `globalTid`; nvprof: `threadId & 0xFFFFFFFF`).
    /// Not stored apart: a profile holds millions of launches, and 16
    /// bytes each is 64 MB at 3 M kernels.
    pub thread: ThreadKey,
    /// Correlation id.
    pub correlation: i64,
    /// API function name (`cudaLaunchKernel`, `cuLaunchKernelEx`, …) without
    /// the `_vNNNN` suffix, when known.
    pub api: Option<StrRef>,
}

/// One NVTX range (or nvprof start/end marker pair).
#[derive(Clone, Copy, Debug)]
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

// SAFETY: every field is an integer (`ThreadKey` is `u64`, `StrRef` wraps a
// `u32`), for which all-zero bytes are a valid value; this lets a reader
// take a lazily zeroed buffer of ranges from the allocator (untouched pages
// cost no memory) and fill parts of it from several threads.
unsafe impl bytemuck::Zeroable for Range {}

/// [`RangeMeta`]s by the range's text handle.
///
/// A slot per handle from the first that has data: the Kineto reader pushes
/// each operator's text as it reads the operator, so the handles with data
/// are nearly consecutive, and a slot costs less than a hash-map entry and
/// is found without hashing (the map's inserts were about a tenth of the
/// Kineto building thread's time on a 2.5 M-operator trace). The slots never outnumber the texts of
/// the trace's string pool.
#[derive(Clone, Debug, Default)]
pub struct RangeMetas {
    /// The handle of `slots[0]`.
    first: u32,
    slots: Vec<Option<RangeMeta>>,
    len: usize,
}

impl RangeMetas {
    /// The data of the range whose text is `text`.
    pub fn get(&self, text: &StrRef) -> Option<&RangeMeta> {
        let i = text.0.checked_sub(self.first)?;
        self.slots.get(i as usize)?.as_ref()
    }

    /// Set the data of the range whose text is `text` (replacing any).
    pub fn insert(&mut self, text: StrRef, meta: RangeMeta) {
        if self.slots.is_empty() {
            self.first = text.0;
        } else if text.0 < self.first {
            // before the first: room made in front (not the readers' order)
            let more = (self.first - text.0) as usize;
            self.slots
                .splice(0..0, std::iter::repeat_with(|| None).take(more));
            self.first = text.0;
        }
        let i = (text.0 - self.first) as usize;
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        if self.slots[i].replace(meta).is_none() {
            self.len += 1;
        }
    }

    /// How many ranges have data.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no range has data.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What the PyTorch profiler records on an operator beyond its name.
#[derive(Clone, Debug, Default)]
pub struct RangeMeta {
    /// `Module Hierarchy` (`top(Net)::layer1(Sequential)::0(Conv2d)`).
    pub module: Option<StrRef>,
    /// `Call stack` (`a.py(10): f;b.py(20): g`).
    pub call_stack: Option<StrRef>,
    /// The operator's own name (`aten::mm`, `ProfilerStep#3`), when the
    /// range's text is a marker built from it.
    pub name: Option<StrRef>,
    /// What kind of event the range came from.
    pub kind: RangeKind,
    /// The operator's sequence number, external id, input shapes and
    /// types (`None` when it has none of them).
    pub op: Option<OpFields>,
    /// Collective-communication arguments (`record_param_comms`,
    /// `nccl:*` operators).
    pub comm: Option<Box<CommArgs>>,
}

/// What the PyTorch profiler records of an operator's call for the op
/// models: `Sequence number` (the autograd sequence number), `External id`
/// (one per operator call, shared by the kernels it launches: what NVTX's
/// `op_id` is to stock PyTorch markers), `Input Dims` (one shape per input,
/// `[]` for scalars and non-tensors, tensor lists expanded in place) and
/// `Input type` (one per shape, as the marker text spells them, see
/// [`crate::stock::marker_dtype`]).
///
/// Packed in one allocation of integers, because a trace holds one per
/// operator call: as nested vectors, the shapes of a 100 k-operator trace
/// took more memory than the rest of its ranges. Layout: presence and
/// value of the sequence number, the same for the id, the number of
/// shapes (-1: none) and each one's length, their dimensions, the number
/// of types (-1: none) and their string handles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpFields(Box<[i64]>);

impl OpFields {
    /// Pack the fields; `None` when there are none.
    pub fn new(
        seq: Option<i64>,
        op_id: Option<i64>,
        sizes: Option<&[Vec<i64>]>,
        dtypes: Option<&[StrRef]>,
    ) -> Option<OpFields> {
        if seq.is_none() && op_id.is_none() && sizes.is_none() && dtypes.is_none() {
            return None;
        }
        let shapes = sizes.map_or(0, |s| s.len() + s.iter().map(Vec::len).sum::<usize>());
        let mut v = Vec::with_capacity(6 + shapes + dtypes.map_or(0, <[StrRef]>::len));
        for x in [seq, op_id] {
            v.push(i64::from(x.is_some()));
            v.push(x.unwrap_or(0));
        }
        match sizes {
            Some(s) => {
                v.push(s.len() as i64);
                v.extend(s.iter().map(|d| d.len() as i64));
                v.extend(s.iter().flatten());
            }
            None => v.push(-1),
        }
        match dtypes {
            Some(d) => {
                v.push(d.len() as i64);
                v.extend(d.iter().map(|r| i64::from(r.0)));
            }
            None => v.push(-1),
        }
        Some(OpFields(v.into_boxed_slice()))
    }

    fn at(&self, i: usize) -> i64 {
        self.0.get(i).copied().unwrap_or(-1)
    }

    /// The sequence number.
    pub fn seq(&self) -> Option<i64> {
        (self.at(0) == 1).then(|| self.at(1))
    }

    /// The external id.
    pub fn op_id(&self) -> Option<i64> {
        (self.at(2) == 1).then(|| self.at(3))
    }

    /// Where the shapes' lengths start, how many shapes, and where the
    /// types' count is.
    fn shape_parts(&self) -> (usize, Option<usize>, usize) {
        let n = usize::try_from(self.at(4)).ok();
        let lens = 5;
        let dims: usize = n.map_or(0, |n| {
            (0..n)
                .map(|i| usize::try_from(self.at(lens + i)).unwrap_or(0))
                .sum::<usize>()
                + n
        });
        (lens, n, lens + dims)
    }

    /// The input shapes.
    pub fn sizes(&self) -> Option<Vec<Vec<i64>>> {
        let (lens, n, _) = self.shape_parts();
        let n = n?;
        let mut at = lens + n;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let len = usize::try_from(self.at(lens + i)).unwrap_or(0);
            out.push(
                self.0
                    .get(at..at + len)
                    .map(<[i64]>::to_vec)
                    .unwrap_or_default(),
            );
            at += len;
        }
        Some(out)
    }

    /// The input types' string handles.
    pub fn dtypes(&self) -> Option<impl Iterator<Item = StrRef> + '_> {
        let (_, _, at) = self.shape_parts();
        let n = usize::try_from(self.at(at)).ok()?;
        let ids = self.0.get(at + 1..at + 1 + n).unwrap_or_default();
        Some(ids.iter().map(|&r| StrRef(r as u32)))
    }
}

/// Where a range came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RangeKind {
    /// An NVTX range (or nvprof marker pair).
    #[default]
    Nvtx,
    /// A PyTorch-profiler operator (`cpu_op`).
    CpuOp,
    /// A `record_function` / user annotation (`user_annotation`), e.g.
    /// `ProfilerStep#N`.
    UserAnnotation,
}

/// What the PyTorch profiler records about a collective.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommArgs {
    /// `Collective name` (`allreduce`, `all_gather`, …).
    pub collective: Option<StrRef>,
    /// `In msg nelems`.
    pub in_nelems: Option<i64>,
    /// `Out msg nelems`.
    pub out_nelems: Option<i64>,
    /// `Group size`.
    pub group_size: Option<i64>,
    /// `dtype` (`Float`, `BFloat16`, …).
    pub dtype: Option<StrRef>,
    /// `Process Group Name`.
    pub pg_name: Option<StrRef>,
    /// `Process Group Ranks` as written.
    pub pg_ranks: Option<StrRef>,
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
    /// Kernels counted but not kept (read with `no_kernels`): they are
    /// not in [`Trace::kernels`].
    pub kernels_unread: u64,
    /// NVTX rows in the file (any thread, any type).
    pub nvtx_rows: u64,
    /// NVTX ranges kept (on threads that launched kernels).
    pub ranges: u64,
    /// NVTX rows skipped (NULL start or text).
    pub ranges_skipped: u64,
    /// Ranges still open at the end of capture (end taken as capture end).
    pub ranges_open: u64,
    /// CUDA API calls kept in [`Trace::api_calls`] (when asked for).
    pub api_calls: u64,
    /// CUDA API calls read but not kept: those that do not block the host,
    /// when only the blocking ones were asked for.
    pub api_calls_dropped: u64,
    /// Memory events kept (when asked for).
    pub mem_events: u64,
    /// Memory events skipped (missing or mistyped fields).
    pub mem_events_skipped: u64,
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
    /// Launch calls referenced by kernels (and copies and sets).
    pub launches: Vec<Launch>,
    /// The CUDA runtime and driver API calls (filled when the reader is
    /// asked for API calls; empty otherwise), in start order; without the
    /// launch calls when [`Trace::launch_calls_apart`] is set: then each
    /// launch with a name is an API call held only in
    /// [`Trace::launches`]. [`Trace::each_api_call`] and
    /// [`Trace::api_calls_in_order`] give every call either way.
    pub api_calls: Vec<ApiCall>,
    /// The launch calls (those of [`Trace::launches`] with a name) are
    /// left out of [`Trace::api_calls`] ([`Trace::fold_launch_calls`]).
    pub launch_calls_apart: bool,
    /// NVTX ranges (and PyTorch-profiler operators): by default only on
    /// threads that launched kernels; on every thread when the reader is
    /// asked for all ranges.
    pub ranges: Vec<Range>,
    /// Extra operator data (Kineto), by the range's text handle (each
    /// Kineto operator has a text of its own).
    pub range_meta: RangeMetas,
    /// Memory copies and sets (read where the input has them).
    pub memops: Vec<MemOp>,
    /// Domain names by (process bits of the thread, domain id).
    pub domains: Vec<((u64, u32), StrRef)>,
    /// GPUs.
    pub devices: Vec<DeviceInfo>,
    /// Allocations and releases (when asked for and present).
    pub mem_events: Vec<MemEvent>,
    /// CUDA memory-pool events (nsys, when asked for with the memory events
    /// and present), in time order.
    pub mem_pools: Vec<crate::mempool::MemPoolEvent>,
    /// CUPTI synchronisation records (when asked for and present).
    pub syncs: Vec<SyncEvent>,
    /// Where the file's time zero is on the wall clock, when known.
    pub clock: Option<ClockOrigin>,
    /// What the profiler says about the distributed job (Kineto
    /// `distributedInfo`).
    pub dist: Option<DistInfo>,
    /// Tables the command asked for but the file does not have (`memory
    /// events: not captured (nsys --cuda-memory-usage=false)`), for the
    /// "what the capture cannot answer" notes of the reports.
    pub missing: Vec<String>,
    /// What the reader counted.
    pub stats: ReadStats,
    /// Human-readable notes (missing tables, fallbacks).
    pub notes: Vec<String>,
}

impl Trace {
    /// An empty trace of `source` read from `path`.
    pub fn empty(path: std::path::PathBuf, source: Source) -> Trace {
        Trace {
            path,
            source,
            producer: None,
            strings: StrPool::new(),
            kernels: Vec::new(),
            launches: Vec::new(),
            api_calls: Vec::new(),
            launch_calls_apart: false,
            ranges: Vec::new(),
            range_meta: Default::default(),
            memops: Vec::new(),
            domains: Vec::new(),
            devices: Vec::new(),
            mem_events: Vec::new(),
            mem_pools: Vec::new(),
            syncs: Vec::new(),
            clock: None,
            dist: None,
            missing: Vec::new(),
            stats: ReadStats::default(),
            notes: Vec::new(),
        }
    }

    /// Leave the launch calls out of [`Trace::api_calls`]: each launch
    /// with a name was read twice, as the call that launched its kernel,
    /// copy or set ([`Trace::launches`]) and as an API call, and at 3 M
    /// kernels the second copies are 4 M calls of 40 bytes. Done only when
    /// every such launch has its equal in the calls (same start, end,
    /// thread, correlation id, name and the kind its name gives), so that
    /// [`Trace::each_api_call`] gives back exactly the calls read;
    /// otherwise (calls read only where they block the host, a reader
    /// whose calls differ) nothing changes.
    pub fn fold_launch_calls(&mut self) {
        if self.launch_calls_apart || self.api_calls.is_empty() || self.launches.is_empty() {
            return;
        }
        // the named launches by the calls' order (their keys are distinct:
        // one launch per process and correlation id)
        let key = |l: &Launch| (l.start_ns, l.thread, l.correlation, l.end_ns);
        let mut named: Vec<u32> = (0..self.launches.len() as u32)
            .filter(|&i| self.launches[i as usize].api.is_some())
            .collect();
        named.sort_unstable_by_key(|&i| key(&self.launches[i as usize]));
        let mut kinds = KindMemo::default();
        let mut apart = vec![false; self.api_calls.len()];
        // a merge of two lists in one order: `j` is the first launch not
        // yet matched
        let mut j = 0;
        for (c, out) in self.api_calls.iter().zip(apart.iter_mut()) {
            let Some(&i) = named.get(j) else { break };
            let l = &self.launches[i as usize];
            let ck = (c.start_ns, c.thread, c.correlation, c.end_ns);
            if key(l) < ck {
                // no call equals this launch
                return;
            }
            // (calls at an equal key are ordered by name: a call with
            // another name leaves the launch to the next)
            if key(l) == ck && l.api == Some(c.name) && kinds.of(c.name, &self.strings) == c.kind {
                *out = true;
                j += 1;
            }
        }
        if j < named.len() {
            return;
        }
        let mut flags = apart.iter();
        self.api_calls
            .retain(|_| !flags.next().copied().unwrap_or(false));
        self.api_calls.shrink_to_fit();
        self.launch_calls_apart = true;
    }

    /// How many API calls were kept (with the launch calls, wherever they
    /// are held).
    pub fn api_call_count(&self) -> usize {
        self.api_calls.len()
            + if self.launch_calls_apart {
                self.launches.iter().filter(|l| l.api.is_some()).count()
            } else {
                0
            }
    }

    /// Every API call kept: those of [`Trace::api_calls`], then (when
    /// [`Trace::launch_calls_apart`]) the named launches as calls, in no
    /// particular order between the two.
    pub fn each_api_call(&self) -> impl Iterator<Item = ApiCall> + '_ {
        let mut kinds = KindMemo::default();
        let launches = if self.launch_calls_apart {
            self.launches.as_slice()
        } else {
            &[]
        };
        self.api_calls
            .iter()
            .copied()
            .chain(launches.iter().filter_map(move |l| {
                let name = l.api?;
                Some(ApiCall {
                    start_ns: l.start_ns,
                    end_ns: l.end_ns,
                    thread: l.thread,
                    correlation: l.correlation,
                    name,
                    kind: kinds.of(name, &self.strings),
                })
            }))
    }

    /// Every API call kept, in [`ApiCall::order_key`] order (a new list:
    /// for the views that need the calls by start and hold few of them,
    /// use [`Trace::each_api_call`] and sort what they keep).
    pub fn api_calls_in_order(&self) -> Vec<ApiCall> {
        let mut all: Vec<ApiCall> = self.each_api_call().collect();
        all.sort_unstable_by_key(ApiCall::order_key);
        all
    }

    /// Keep only the API calls that block the host
    /// ([`ApiKind::blocks_host`]), counting the others in
    /// [`ReadStats::api_calls_dropped`].
    pub fn keep_blocking_calls(&mut self) {
        let dropped = ApiCall::keep_blocking(&mut self.api_calls);
        self.stats.api_calls_dropped += dropped;
        self.stats.api_calls = self.stats.api_calls.saturating_sub(dropped);
    }

    /// How many kernels the file has (rows with a start and an end),
    /// whether or not they were kept in [`Trace::kernels`].
    pub fn kernel_count(&self) -> u64 {
        self.kernels.len() as u64 + self.stats.kernels_unread
    }

    /// The typed id of a thread key of this file.
    pub fn thread_id(&self, thread: ThreadKey) -> ThreadId {
        ThreadId::of(self.source, thread)
    }

    /// The stock marker of a PyTorch-profiler operator's range, built from
    /// the profiler's own fields ([`RangeMeta`]), never from its text:
    /// what [`stock::parse_split`](crate::stock::parse_split) reads back
    /// from the text (`None` for a range without an operator's fields).
    pub fn op_marker(&self, text: StrRef) -> Option<crate::stock::StockMarker<'_>> {
        let m = self.range_meta.get(&text)?;
        let name = self.strings.get(m.name?);
        let Some(op) = &m.op else {
            return Some(crate::stock::StockMarker {
                name,
                ..Default::default()
            });
        };
        Some(crate::stock::StockMarker {
            name,
            seq: op.seq(),
            stashed: false,
            op_id: op.op_id(),
            sizes: op.sizes(),
            input_op_ids: None,
            dtypes: op
                .dtypes()
                .map(|d| d.map(|t| self.strings.get(t)).collect()),
            malformed: false,
        })
    }

    /// [`Trace::op_marker`]'s name, sequence number and id, without
    /// unpacking the shapes and types.
    pub fn op_head(&self, text: StrRef) -> Option<crate::stock::Head<'_>> {
        let m = self.range_meta.get(&text)?;
        Some(crate::stock::Head {
            name: self.strings.get(m.name?),
            seq: m.op.as_ref().and_then(OpFields::seq),
            op_id: m.op.as_ref().and_then(OpFields::op_id),
        })
    }

    /// The name of a range: the operator's own name for PyTorch-profiler
    /// operators, the text otherwise.
    pub fn range_name(&self, r: &Range) -> &str {
        match self.range_meta.get(&r.text).and_then(|m| m.name) {
            Some(n) => self.strings.get(n),
            None => self.strings.get(r.text),
        }
    }

    /// The process of a kernel: the launching call's, else nsys's
    /// `globalPid`, else `None`.
    pub fn kernel_pid(&self, k: &Kernel) -> Option<u64> {
        if let Some(l) = k.launch.get().and_then(|i| self.launches.get(i as usize)) {
            return Some(self.thread_id(l.thread).pid);
        }
        k.global_pid().map(nsys_pid)
    }

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
    /// The sizes the documentation states and the memory figures of
    /// BENCHMARKS.md rest on (a profile holds millions of each).
    #[test]
    fn per_event_sizes() {
        use std::mem::size_of;
        assert_eq!(size_of::<super::Kernel>(), 112);
        assert_eq!(size_of::<super::Launch>(), 40);
        assert_eq!(size_of::<super::Range>(), 32);
    }

    /// Slots answer as a map would: inserts in any order (before the first
    /// handle too), replacements, handles never inserted.
    #[test]
    fn range_metas_answer_as_a_map() {
        use super::{RangeMeta, RangeMetas, StrRef};
        let mut slots = RangeMetas::default();
        let mut map = std::collections::HashMap::new();
        let mut x: u32 = 12345;
        for i in 0..2000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let text = StrRef(100 + (x >> 8) % 500);
            let meta = RangeMeta {
                name: Some(StrRef(i)),
                ..RangeMeta::default()
            };
            slots.insert(text, meta.clone());
            map.insert(text.0, meta);
        }
        assert_eq!(slots.len(), map.len());
        assert!(!slots.is_empty());
        for t in 0..700 {
            assert_eq!(
                slots.get(&StrRef(t)).map(|m| m.name),
                map.get(&t).map(|m| m.name),
                "{t}"
            );
        }
        assert!(RangeMetas::default().is_empty());
    }

    /// Millions of these are held at once; keep them from growing by accident.
    #[test]
    fn sizes_stay_small() {
        assert!(std::mem::size_of::<super::Kernel>() <= 136);
        assert!(std::mem::size_of::<super::Range>() <= 32);
        assert!(std::mem::size_of::<super::Launch>() <= 56);
    }

    /// A kernel's extras are boxed only when it has some, and read back
    /// through the kernel as they were given; `NO_PID` is no process.
    #[test]
    fn kernel_extras_and_pid_read_back() {
        use super::{KernelExtra, KinetoKernel, NO_PID};
        assert_eq!(KernelExtra::of(None, None, None), None);
        let k = |extra, pid| super::Kernel {
            row: 0,
            start_ns: 0,
            end_ns: 1,
            device: 0,
            context: crate::OptU32::NONE,
            stream: 0,
            correlation: 0,
            global_pid_bits: pid,
            name: super::StrRef(0),
            mangled: crate::OptStr::NONE,
            grid: [1; 3],
            block: [1; 3],
            registers_per_thread: None,
            static_smem_bytes: crate::OptU32::NONE,
            dynamic_smem_bytes: crate::OptU32::NONE,
            launch: crate::OptU32::NONE,
            extra,
        };
        let plain = k(None, NO_PID);
        assert_eq!(plain.global_pid(), None);
        assert_eq!((plain.graph_id(), plain.graph_node_id()), (None, None));
        assert!(plain.kineto().is_none());
        // 0 is a process id like any other; a graph node id of 0 too
        let graph = k(KernelExtra::of(Some(3), Some(0), None), 0);
        assert_eq!(graph.global_pid(), Some(0));
        assert_eq!(
            (graph.graph_id(), graph.graph_node_id()),
            (Some(3), Some(0))
        );
        assert!(graph.kineto().is_none());
        let figures = KinetoKernel {
            occupancy_pct: Some(50.0),
            ..KinetoKernel::default()
        };
        let kineto = k(KernelExtra::of(None, None, Some(figures.clone())), 1 << 24);
        assert_eq!(kineto.kineto(), Some(&figures));
        assert_eq!(kineto.graph_id(), None);
    }

    /// Every combination of present and absent fields reads back as it was
    /// packed, with negative numbers, empty shapes and empty lists.
    #[test]
    fn op_fields_read_back_as_packed() {
        use super::{OpFields, StrRef};
        assert_eq!(OpFields::new(None, None, None, None), None);
        let shapes: [&[Vec<i64>]; 3] = [&[], &[vec![], vec![-1]], &[vec![2, 3], vec![4], vec![]]];
        let types: [&[StrRef]; 2] = [&[], &[StrRef(0), StrRef(u32::MAX), StrRef(7)]];
        for seq in [None, Some(-3), Some(i64::MAX)] {
            for op_id in [None, Some(0), Some(i64::MIN)] {
                for sizes in [None].into_iter().chain(shapes.map(Some)) {
                    for dtypes in [None].into_iter().chain(types.map(Some)) {
                        let Some(f) = OpFields::new(seq, op_id, sizes, dtypes) else {
                            assert!(seq.is_none() && op_id.is_none());
                            assert!(sizes.is_none() && dtypes.is_none());
                            continue;
                        };
                        assert_eq!((f.seq(), f.op_id()), (seq, op_id));
                        assert_eq!(f.sizes().as_deref(), sizes);
                        let back: Option<Vec<StrRef>> = f.dtypes().map(Iterator::collect);
                        assert_eq!(back.as_deref(), dtypes);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod fold_tests {
    use super::{ApiCall, ApiKind, Launch, Source, Trace};
    use proptest::prelude::*;

    const NAMES: [&str; 4] = [
        "cudaLaunchKernel",
        "cudaMemcpyAsync",
        "cudaStreamSynchronize",
        "cudaMemcpy",
    ];

    /// A trace of `calls` (given as (start, length, thread, name)), whose
    /// launches are the calls picked by `launch` (in reverse, as readers
    /// give launches in their kernels' order, not the calls'); the calls
    /// in the order readers give them, and that list.
    fn trace_of(calls: &[(i64, i64, u64, usize)], launch: &[bool]) -> (Trace, Vec<ApiCall>) {
        let mut t = Trace::empty("t".into(), Source::Nsys);
        let names: Vec<_> = NAMES.iter().map(|n| t.strings.push(n)).collect();
        let mut all: Vec<ApiCall> = calls
            .iter()
            .enumerate()
            .map(|(i, &(start, len, thread, name))| ApiCall {
                start_ns: start,
                end_ns: start + len,
                thread,
                // one correlation id per call, as CUPTI gives
                correlation: i as i64,
                name: names[name],
                kind: ApiKind::classify(NAMES[name]),
            })
            .collect();
        all.sort_unstable_by_key(ApiCall::order_key);
        t.launches = all
            .iter()
            .zip(launch.iter().cycle())
            .filter(|(_, l)| **l)
            .map(|(c, _)| Launch {
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                thread: c.thread,
                correlation: c.correlation,
                api: Some(c.name),
            })
            .collect();
        t.launches.reverse();
        t.api_calls = all.clone();
        (t, all)
    }

    fn call() -> impl Strategy<Value = (i64, i64, u64, usize)> {
        // few starts and threads: ties in the order's first keys
        (0i64..40, 0i64..5, 0u64..3, 0usize..NAMES.len())
    }

    proptest! {
        /// Folded, the calls are the same calls: every one given back
        /// once, in the same order; only the launches' are held apart.
        #[test]
        fn folding_keeps_every_call(
            calls in proptest::collection::vec(call(), 1..60),
            launch in proptest::collection::vec(any::<bool>(), 1..8),
        ) {
            let (mut t, all) = trace_of(&calls, &launch);
            t.fold_launch_calls();
            prop_assert_eq!(t.launch_calls_apart, !t.launches.is_empty());
            prop_assert_eq!(t.api_calls_in_order(), all.clone());
            prop_assert_eq!(t.api_call_count(), all.len());
            if t.launch_calls_apart {
                prop_assert_eq!(t.api_calls.len(), all.len() - t.launches.len());
            }
            // a second fold changes nothing
            t.fold_launch_calls();
            prop_assert_eq!(t.api_calls_in_order(), all);
        }

        /// A launch without its equal among the calls (here one that
        /// ends later, or a call read under another name) leaves the
        /// calls as they were.
        #[test]
        fn a_launch_without_its_call_folds_nothing(
            calls in proptest::collection::vec(call(), 1..60),
            which in any::<proptest::sample::Index>(),
            rename in any::<bool>(),
        ) {
            let (mut t, all) = trace_of(&calls, &[true]);
            let i = which.index(t.launches.len());
            if rename {
                let other = t.strings.push("cuLaunchKernelEx");
                t.launches[i].api = Some(other);
            } else {
                t.launches[i].end_ns += 1;
            }
            t.fold_launch_calls();
            prop_assert!(!t.launch_calls_apart);
            prop_assert_eq!(&t.api_calls, &all);
            prop_assert_eq!(t.api_calls_in_order(), all);
        }
    }

    /// A launch without a name (the call's name was not in the file) is
    /// not folded: its call stays among the others, and is given once.
    #[test]
    fn an_unnamed_launch_keeps_its_call() {
        // three calls, each a launch; the last one's launch unnamed
        let (mut t, all) = trace_of(&[(1, 2, 0, 0), (5, 1, 0, 2), (9, 1, 0, 1)], &[true]);
        assert_eq!(t.launches[0].start_ns, 9);
        t.launches[0].api = None;
        t.fold_launch_calls();
        assert!(t.launch_calls_apart);
        assert_eq!(t.api_calls.len(), 1);
        assert_eq!(t.api_calls[0].start_ns, 9);
        assert_eq!(t.api_calls_in_order(), all);
        assert_eq!(t.each_api_call().count(), 3);
    }
}
