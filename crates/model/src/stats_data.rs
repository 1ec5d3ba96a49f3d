//! The rows `rprof stats` summarises: GPU kernels, memory operations, CUDA
//! API calls, NVTX ranges, OS runtime calls and unified-memory events, each
//! with the columns the nsys-stats reports need (kernel short and mangled
//! names, NVTX range style, the file's own enum labels, thread names).
//!
//! The trace model ([`crate::trace::Trace`]) keeps what rprof's other views
//! need; the nsys-stats reports need a few columns it does not carry (NVTX
//! push/pop vs start/end, `endGlobalTid`, `shortName`, the export's enum
//! labels, OS runtime and unified-memory tables), so they have this table
//! set of their own, filled from an nsys export directly or converted from a
//! [`Trace`](crate::trace::Trace) for nvprof and Kineto input.

use crate::FastMap;
use crate::trace::Source;

/// Handle of an interned string in [`Names`].
pub type NameId = u32;

/// A string interner: each distinct text stored once.
pub struct Names {
    /// Every name, back to back.
    text: String,
    /// Where name `i` ends in `text` (it starts where name `i - 1` ends),
    /// the low [`Names::low_bits`] bits only: 4 bytes a name, not 8 (an
    /// export can hold 14 million distinct NVTX texts).
    ends: Vec<u32>,
    /// The rest of each end: the ids at which it goes up by one, in order
    /// (an id twice if its end went up by two). Empty below 4 GiB of text.
    wraps: Vec<NameId>,
    /// How many bits of an end [`Names::ends`] keeps: 32 (fewer in tests,
    /// so that the wraps are reached with little text).
    low_bits: u32,
    /// The ids by the hash of their text: an open-addressing table with
    /// linear probing, each slot the upper 32 bits of the text's hash and
    /// the id ([`FREE`] for none), at most three quarters full. Hand-written
    /// for speed: an export can hold millions of distinct NVTX texts, each
    /// interned once, and a probe of a table that size is a cache miss;
    /// [`Names::intern_batch`] fetches the slots of the names ahead, which
    /// a library table does not let one address. Let go by
    /// [`Names::seal`] and made again from the texts if one more is
    /// interned.
    slots: Vec<u64>,
}

impl Default for Names {
    fn default() -> Names {
        Names::with_low_bits(32)
    }
}

/// A free slot of [`Names`]' table (no id is `u32::MAX`).
const FREE: u64 = u64::MAX;

/// Names interned ahead of the one being interned, their slots fetched.
const AHEAD: usize = 8;

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Names")
            .field("len", &self.ends.len())
            .finish()
    }
}

/// A prefetch hint for the cache line at `p`.
#[inline]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads nothing the program sees and
    // never faults, whatever the address (SSE, which it needs, is part of
    // every x86-64 processor)
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The upper 32 bits of the text's hash: the table's slot index (masked)
/// and the check kept in the slot.
fn hash_name(s: &str) -> u32 {
    use std::hash::BuildHasher;
    (foldhash::fast::FixedState::default().hash_one(s) >> 32) as u32
}

impl Names {
    fn with_low_bits(low_bits: u32) -> Names {
        Names {
            text: String::new(),
            ends: Vec::new(),
            wraps: Vec::new(),
            low_bits,
            slots: Vec::new(),
        }
    }

    /// Where name `i` ends in the text (`None`: no such name).
    #[inline]
    fn end(&self, i: usize) -> Option<usize> {
        let low = *self.ends.get(i)? as usize;
        if self.wraps.is_empty() {
            return Some(low);
        }
        let high = self.wraps.partition_point(|&w| w as usize <= i) as u64;
        usize::try_from(high << self.low_bits | low as u64).ok()
    }

    /// Name `i`'s place in the text.
    #[inline]
    fn span(&self, i: usize) -> Option<std::ops::Range<usize>> {
        let end = self.end(i)?;
        let start = match i.checked_sub(1) {
            Some(p) => self.end(p)?,
            None => 0,
        };
        Some(start..end)
    }

    /// Let go of the lookup table (a quarter of a gigabyte for 14 million
    /// names) once every name is in: the names and their ids stay. A later
    /// [`intern`](Names::intern) makes the table again.
    pub fn seal(&mut self) {
        self.slots = Vec::new();
    }

    /// The id of `s`, added if new. One arena and a table of ids: an export
    /// can have millions of distinct NVTX texts, and two boxed copies of
    /// each (list and map key) took most of the memory of the NVTX reports.
    pub fn intern(&mut self, s: &str) -> NameId {
        self.intern_hashed(s, hash_name(s))
    }

    /// The ids of `texts`, in order, onto `out`: the same ids as
    /// [`intern`](Names::intern) one after the other, with the table's
    /// slots of the next names fetched while each is interned.
    pub fn intern_batch(&mut self, texts: &[&str], out: &mut Vec<NameId>) {
        self.reserve(texts.len());
        let hashes: Vec<u32> = texts.iter().map(|t| hash_name(t)).collect();
        for h in hashes.iter().take(AHEAD) {
            self.prefetch_slot(*h);
        }
        for (i, (t, &h)) in texts.iter().zip(&hashes).enumerate() {
            if let Some(&next) = hashes.get(i + AHEAD) {
                self.prefetch_slot(next);
            }
            out.push(self.intern_hashed(t, h));
        }
    }

    fn prefetch_slot(&self, h: u32) {
        if !self.slots.is_empty() {
            let mask = self.slots.len() - 1;
            prefetch(self.slots.as_ptr().wrapping_add(h as usize & mask));
        }
    }

    fn intern_hashed(&mut self, s: &str, h: u32) -> NameId {
        if (self.ends.len() + 1) * 4 > self.slots.len() * 3 {
            self.grow(self.ends.len() + 1);
        }
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == FREE {
                break;
            }
            if (slot >> 32) as u32 == h && self.get(slot as u32) == s {
                return slot as u32;
            }
            i = (i + 1) & mask;
        }
        let id = self.ends.len() as NameId;
        self.text.push_str(s);
        let end = self.text.len() as u64;
        while (self.wraps.len() as u64) < end >> self.low_bits {
            self.wraps.push(id);
        }
        let low_mask = (1u64 << self.low_bits) - 1;
        self.ends.push((end & low_mask) as u32);
        self.slots[i] = u64::from(h) << 32 | u64::from(id);
        id
    }

    /// A table for at least `n` names at most three quarters full, its
    /// slots moved by the hashes they keep (no text is read again).
    fn grow(&mut self, n: usize) {
        let want = (n.saturating_mul(4) / 3 + 1).next_power_of_two().max(16);
        if want <= self.slots.len() {
            return;
        }
        let mut old = std::mem::replace(&mut self.slots, vec![FREE; want]);
        if old.is_empty() {
            // sealed: the slots again from the texts
            old = (0..self.ends.len() as NameId)
                .map(|id| u64::from(hash_name(self.get(id))) << 32 | u64::from(id))
                .collect();
        }
        let mask = want - 1;
        for slot in old.into_iter().filter(|&s| s != FREE) {
            let mut i = (slot >> 32) as usize & mask;
            while self.slots[i] != FREE {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }

    /// Room for `n` more names in the table without growing it (growing
    /// moves every slot).
    pub fn reserve(&mut self, n: usize) {
        self.grow(self.ends.len().saturating_add(n));
    }

    /// The text of `id` (empty for an unknown id).
    pub fn get(&self, id: NameId) -> &str {
        self.span(id as usize)
            .and_then(|r| self.text.get(r))
            .unwrap_or("")
    }

    /// Ask the processor to fetch where name `id` ends (the first of two
    /// steps of [`prefetch_text`](Names::prefetch_text), issued some time
    /// before it). A hint: nothing is read, nothing can fail.
    pub fn prefetch_end(&self, id: NameId) {
        let i = id as usize;
        if i < self.ends.len() {
            prefetch(self.ends.as_ptr().wrapping_add(i.saturating_sub(1)));
            prefetch(self.ends.as_ptr().wrapping_add(i));
        }
    }

    /// Ask the processor to fetch name `id`'s text. Hand-written for
    /// speed: a large report prints millions of names in an order of its
    /// own, each a cache and TLB miss in the arena; fetched ahead, the
    /// misses overlap instead of stalling the writer one by one.
    pub fn prefetch_text(&self, id: NameId) {
        let Some(std::ops::Range { start, end }) = self.span(id as usize) else {
            return;
        };
        let base = self.text.as_ptr();
        prefetch(base.wrapping_add(start));
        if end > start + 64 {
            prefetch(base.wrapping_add(end - 1));
        }
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// One GPU kernel execution.
#[derive(Clone, Debug)]
pub struct GpuKernel {
    /// Row position in the file's kernel table (a stable id).
    pub row: u64,
    /// GPU start, ns.
    pub start_ns: i64,
    /// GPU end, ns.
    pub end_ns: i64,
    /// Correlation id.
    pub correlation: i64,
    /// Process id (nsys: `globalPid >> 24 & 0xFFFFFF`), when known.
    pub pid: Option<u64>,
    /// The name nsys prints by default (`demangledName`).
    pub name: NameId,
    /// `shortName` (the base name), when the file has one.
    pub short: Option<NameId>,
    /// `mangledName`, when the file has one.
    pub mangled: Option<NameId>,
    /// Where it ran and how it was launched, when the reports asked for
    /// it ([`Tables::kernel_launch`]): its place in
    /// [`StatsData::kernel_launches`] ([`StatsData::launch`] reads it).
    pub launch: Option<u32>,
}

/// Where a kernel ran and how it was launched: read only for the reports
/// that print it (on the 1 M-kernel export, its thirteen columns were a
/// third of the kernel table's read and 144 MB held by reports that
/// never looked at them), and held in a table of its own (one allocation
/// per kernel cost the reports that print it a tenth of their time).
#[derive(Clone, Debug)]
pub struct KernelLaunch {
    /// Device id.
    pub device: i64,
    /// CUDA context id.
    pub context: Option<i64>,
    /// Green context id (nsys ≥ 2023.4).
    pub green_context: Option<i64>,
    /// Stream id.
    pub stream: i64,
    /// Grid X, Y, Z.
    pub grid: [i64; 3],
    /// Block X, Y, Z.
    pub block: [i64; 3],
    /// Registers per thread.
    pub registers: Option<i64>,
    /// Static shared memory, bytes.
    pub static_smem: Option<i64>,
    /// Dynamic shared memory, bytes.
    pub dynamic_smem: Option<i64>,
}

/// One memory copy or memset on the GPU.
#[derive(Clone, Debug)]
pub struct GpuMemOp {
    /// GPU start, ns.
    pub start_ns: i64,
    /// GPU end, ns.
    pub end_ns: i64,
    /// True for a memset.
    pub is_set: bool,
    /// The operation as nsys names it: `[CUDA memcpy Host-to-Device]`,
    /// `[CUDA memset]` (the label from the file's own enum table).
    pub name: NameId,
    /// Bytes copied or set.
    pub bytes: Option<i64>,
    /// Source memory kind label (memset: the memory set).
    pub src_kind: Option<NameId>,
    /// Destination memory kind label.
    pub dst_kind: Option<NameId>,
    /// `copyKind` number (11 and 12 are unified-memory migrations).
    pub copy_kind: Option<i64>,
    /// Unified-memory virtual address, when recorded.
    pub virtual_address: Option<i64>,
    /// Device id.
    pub device: i64,
    /// Context id.
    pub context: Option<i64>,
    /// Green context id.
    pub green_context: Option<i64>,
    /// Stream id.
    pub stream: i64,
    /// Correlation id.
    pub correlation: i64,
    /// Process id, when known.
    pub pid: Option<u64>,
}

/// One CUDA runtime or driver API call.
#[derive(Clone, Debug)]
pub struct ApiRow {
    /// CPU start, ns.
    pub start_ns: i64,
    /// CPU end, ns.
    pub end_ns: i64,
    /// Name as stored (`cudaLaunchKernel_v7000`).
    pub raw_name: NameId,
    /// Name as nsys prints it (the `_vNNNN` suffix dropped).
    pub name: NameId,
    /// Process id.
    pub pid: u64,
    /// Thread id.
    pub tid: u64,
    /// Correlation id.
    pub correlation: i64,
    /// Return value, when recorded.
    pub result: Option<i64>,
}

/// How an NVTX range was opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RangeStyle {
    /// `nvtxRangePush` / `nvtxRangePop` (one thread, nested).
    PushPop,
    /// `nvtxRangeStart` / `nvtxRangeEnd` (may end on another thread).
    StartEnd,
}

impl RangeStyle {
    /// `PushPop` or `StartEnd`, as nsys prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            RangeStyle::PushPop => "PushPop",
            RangeStyle::StartEnd => "StartEnd",
        }
    }
}

/// One NVTX range. 48 bytes: an export can hold tens of millions (the
/// end and the domain are kept without `Option`'s padding, behind
/// [`NvtxRow::end_ns`] and [`NvtxRow::domain`], and the thread as a
/// number into [`StatsData::nvtx_threads`]).
#[derive(Clone, Debug)]
pub struct NvtxRow {
    /// Row id in the file (nsys `rowid`), the range's id in trace reports.
    pub id: i64,
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns (meaningless when `open`).
    end: i64,
    /// The thread that pushed or started it: its place in
    /// [`StatsData::nvtx_threads`] ([`StatsData::nvtx_thread`] reads it;
    /// 4 bytes in place of a 16-byte process and thread id).
    pub thread: u32,
    /// Name as nsys prints it: `DOMAIN:text` for ranges in a named domain.
    pub name: NameId,
    /// The range's own text and domain name (for `--filter-nvtx`, which
    /// writes `TEXT@DOMAIN`).
    pub text: NameId,
    /// Domain name ([`NO_DOMAIN`]: none).
    domain: NameId,
    /// Push/pop or start/end.
    pub style: RangeStyle,
    /// True for a start/end range that ended on another thread.
    pub ends_elsewhere: bool,
    /// Still open when the capture stopped.
    open: bool,
}

/// [`NvtxRow::domain`]'s "none" (no id is `u32::MAX`).
const NO_DOMAIN: NameId = NameId::MAX;

impl NvtxRow {
    /// A range of `style` on thread number `thread`
    /// ([`StatsData::nvtx_threads`]), ending at `end` (`None`: still open
    /// when the capture stopped); its name and text are `text`, in no
    /// domain, and it ends on its own thread.
    pub fn new(
        id: i64,
        start_ns: i64,
        end: Option<i64>,
        style: RangeStyle,
        thread: u32,
        text: NameId,
    ) -> NvtxRow {
        NvtxRow {
            id,
            start_ns,
            end: end.unwrap_or(0),
            thread,
            name: text,
            text,
            domain: NO_DOMAIN,
            style,
            ends_elsewhere: false,
            open: end.is_none(),
        }
    }

    /// End, ns; `None` for a range still open when the capture stopped.
    #[inline]
    pub fn end_ns(&self) -> Option<i64> {
        (!self.open).then_some(self.end)
    }

    /// Domain name, when the range is in a named domain.
    #[inline]
    pub fn domain(&self) -> Option<NameId> {
        (self.domain != NO_DOMAIN).then_some(self.domain)
    }

    /// Set the domain name (`None`: no named domain).
    pub fn set_domain(&mut self, domain: Option<NameId>) {
        self.domain = domain.unwrap_or(NO_DOMAIN);
    }
}

/// The distinct (process id, thread id) pairs of a table, numbered in
/// order of first appearance.
#[derive(Debug, Default)]
pub struct ThreadIndex {
    list: Vec<(u64, u64)>,
    index: FastMap<(u64, u64), u32>,
    /// The last thread numbered: consecutive rows are mostly on one.
    last: Option<((u64, u64), u32)>,
}

impl ThreadIndex {
    /// The number of `(pid, tid)`, given it if new.
    pub fn id(&mut self, key: (u64, u64)) -> u32 {
        if let Some((k, n)) = self.last
            && k == key
        {
            return n;
        }
        let list = &mut self.list;
        let n = *self.index.entry(key).or_insert_with(|| {
            list.push(key);
            (list.len() - 1) as u32
        });
        self.last = Some((key, n));
        n
    }

    /// Thread number `n` (`None`: no such number).
    pub fn get(&self, n: u32) -> Option<(u64, u64)> {
        self.list.get(n as usize).copied()
    }

    /// The threads by number.
    pub fn into_list(self) -> Vec<(u64, u64)> {
        self.list
    }
}

/// One OS runtime call (nsys `OSRT_API`).
#[derive(Clone, Debug)]
pub struct OsrtRow {
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// Function name.
    pub name: NameId,
    /// Process id.
    pub pid: u64,
    /// Thread id.
    pub tid: u64,
}

/// A unified-memory page-fault row (`CUDA_UM_CPU_PAGE_FAULT_EVENTS`,
/// `CUDA_UM_GPU_PAGE_FAULT_EVENTS`).
#[derive(Clone, Debug)]
pub struct UmFault {
    /// Time (CPU faults: `start`; GPU faults: `start`), ns.
    pub start_ns: i64,
    /// End, ns (GPU faults), else the start.
    pub end_ns: i64,
    /// Faulting virtual address.
    pub address: i64,
    /// Faults in this row (CPU rows: 1; GPU rows: `numberOfPageFaults`).
    pub faults: i64,
    /// True for a GPU page-fault row.
    pub gpu: bool,
    /// Process id, when known.
    pub pid: Option<u64>,
}

/// Which tables a set of reports needs (reading only those is most of the
/// time a report takes on a large export).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tables {
    /// Kernels.
    pub kernels: bool,
    /// The kernels' device, context, stream and launch configuration
    /// ([`KernelLaunch`]; with `kernels`).
    pub kernel_launch: bool,
    /// Copies and sets.
    pub memops: bool,
    /// CUDA API calls.
    pub api: bool,
    /// NVTX ranges.
    pub nvtx: bool,
    /// Of the NVTX ranges and the CUDA API calls, only what `nvtx_kern_sum`
    /// and the GPU projection look at: the calls that launched a kernel,
    /// copy or set, and the ranges that enclose one of them on their own
    /// thread. The others are counted on stderr, not kept (on a PyTorch
    /// capture, over half the ranges: operators that launch nothing). Kept
    /// by [`Tables::or`] only when every set that reads either table asks
    /// for it.
    pub launching_only: bool,
    /// OS runtime calls.
    pub osrt: bool,
    /// Unified-memory page faults.
    pub um: bool,
    /// Thread names.
    pub thread_names: bool,
    /// GPU names.
    pub gpus: bool,
}

impl Tables {
    /// Every table.
    pub fn all() -> Tables {
        Tables {
            kernels: true,
            kernel_launch: true,
            memops: true,
            api: true,
            nvtx: true,
            launching_only: false,
            osrt: true,
            um: true,
            thread_names: true,
            gpus: true,
        }
    }

    /// Whether the set reads the tables [`Tables::launching_only`] cuts.
    fn reads_calls(&self) -> bool {
        self.nvtx || self.api
    }

    /// The union of two sets.
    pub fn or(self, o: Tables) -> Tables {
        Tables {
            kernels: self.kernels || o.kernels,
            kernel_launch: self.kernel_launch || o.kernel_launch,
            memops: self.memops || o.memops,
            api: self.api || o.api,
            nvtx: self.nvtx || o.nvtx,
            // (a set that reads neither table does not object)
            launching_only: (self.reads_calls() || o.reads_calls())
                && (!self.reads_calls() || self.launching_only)
                && (!o.reads_calls() || o.launching_only),
            osrt: self.osrt || o.osrt,
            um: self.um || o.um,
            thread_names: self.thread_names || o.thread_names,
            gpus: self.gpus || o.gpus,
        }
    }
}

/// Everything `rprof stats` reads from one file.
#[derive(Debug)]
pub struct StatsData {
    /// Which profiler wrote the file.
    pub source: Source,
    /// Interned names.
    pub names: Names,
    /// Kernels, in file order (`None`: the file has no kernel table).
    pub kernels: Option<Vec<GpuKernel>>,
    /// The kernels' launches, when read ([`GpuKernel::launch`]).
    pub kernel_launches: Vec<KernelLaunch>,
    /// Memory copies and sets (`None`: no such tables).
    pub memops: Option<Vec<GpuMemOp>>,
    /// CUDA API calls (`None`: no API table).
    pub api: Option<Vec<ApiRow>>,
    /// NVTX ranges (`None`: no NVTX table).
    pub nvtx: Option<Vec<NvtxRow>>,
    /// The (process id, thread id) of each [`NvtxRow::thread`] number.
    pub nvtx_threads: Vec<(u64, u64)>,
    /// OS runtime calls (`None`: not traced).
    pub osrt: Option<Vec<OsrtRow>>,
    /// Unified-memory page faults (`None`: not traced).
    pub um_faults: Option<Vec<UmFault>>,
    /// GPU names by device id (nsys `TARGET_INFO_GPU`).
    pub gpu_names: Vec<(i64, NameId)>,
    /// Thread names and priorities by (pid, tid).
    pub thread_names: FastMap<(u64, u64), (Option<i64>, Option<NameId>)>,
    /// Largest timestamp (start or end) of the whole NVTX table: the end
    /// nsys's `nvtx_*_sum` reports give ranges that never closed.
    pub nvtx_max_ns: Option<i64>,
    /// Largest timestamp (start or end) of the NVTX ranges alone: the end
    /// nsys's kernel and GPU-projection reports give ranges that never closed.
    pub nvtx_range_max_ns: Option<i64>,
    /// What was dropped or substituted while reading, one line each.
    pub notes: Vec<String>,
    /// Rows dropped while reading, with the reason, for stderr.
    pub dropped: Vec<(String, u64)>,
}

impl StatsData {
    /// Kernel `k`'s launch, when it was read.
    pub fn launch(&self, k: &GpuKernel) -> Option<&KernelLaunch> {
        self.kernel_launches.get(k.launch? as usize)
    }

    /// An empty set for a file of `source`.
    pub fn new(source: Source) -> StatsData {
        StatsData {
            source,
            names: Names::default(),
            kernels: None,
            kernel_launches: Vec::new(),
            memops: None,
            api: None,
            nvtx: None,
            nvtx_threads: Vec::new(),
            osrt: None,
            um_faults: None,
            gpu_names: Vec::new(),
            thread_names: FastMap::default(),
            nvtx_max_ns: None,
            nvtx_range_max_ns: None,
            notes: Vec::new(),
            dropped: Vec::new(),
        }
    }

    /// Range `r`'s (process id, thread id); `(u64::MAX, u64::MAX)` for a
    /// thread number the table does not have (a row made elsewhere).
    #[inline]
    pub fn nvtx_thread(&self, r: &NvtxRow) -> (u64, u64) {
        self.nvtx_threads
            .get(r.thread as usize)
            .copied()
            .unwrap_or((u64::MAX, u64::MAX))
    }

    /// Count `n` rows dropped for `reason`.
    pub fn drop_rows(&mut self, reason: impl Into<String>, n: u64) {
        if n > 0 {
            self.dropped.push((reason.into(), n));
        }
    }
}

/// Strip nsys's API version suffix the way its reports do: when the 6th and
/// 5th characters from the end are `_v`, drop the last 6 characters
/// (`cudaLaunchKernel_v7000` → `cudaLaunchKernel`).
pub fn strip_api_version(name: &str) -> &str {
    let b = name.as_bytes();
    if b.len() >= 6 && &b[b.len() - 6..b.len() - 4] == b"_v" && name.is_char_boundary(b.len() - 6) {
        &name[..b.len() - 6]
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the calls and ranges that launch survive a union only when
    /// every set that reads either table asks for them; a set that reads
    /// neither table does not object, and does not ask either.
    #[test]
    fn launching_only_survives_a_union_only_when_every_reader_asks() {
        let launching = Tables {
            kernels: true,
            api: true,
            nvtx: true,
            launching_only: true,
            ..Tables::default()
        };
        let kernels = Tables {
            kernels: true,
            ..Tables::default()
        };
        let api = Tables {
            api: true,
            ..Tables::default()
        };
        let nvtx = Tables {
            nvtx: true,
            ..Tables::default()
        };
        let fold = |sets: &[Tables]| {
            sets.iter()
                .fold(Tables::default(), |t, s| t.or(*s))
                .launching_only
        };
        assert!(fold(&[launching]));
        assert!(fold(&[launching, launching]));
        assert!(fold(&[kernels, launching, kernels]));
        assert!(!fold(&[launching, api]));
        assert!(!fold(&[nvtx, launching]));
        assert!(!fold(&[kernels]));
        assert!(!fold(&[]));
        assert!(!Tables::all().launching_only);
    }

    #[test]
    fn nvtx_row_keeps_open_ends_and_domains_in_48_bytes() {
        // tens of millions on a large export: the size is the point
        assert!(std::mem::size_of::<NvtxRow>() <= 48);
        let mut r = NvtxRow::new(1, 10, None, RangeStyle::StartEnd, 3, 7);
        assert_eq!((r.end_ns(), r.domain(), r.name, r.text), (None, None, 7, 7));
        // an end of 0 and a domain of id 0 are values, not "none"
        let mut closed = NvtxRow::new(2, -5, Some(0), RangeStyle::PushPop, 3, 8);
        closed.set_domain(Some(0));
        assert_eq!((closed.end_ns(), closed.domain()), (Some(0), Some(0)));
        r.set_domain(Some(9));
        r.set_domain(None);
        assert_eq!(r.domain(), None);
        let far = NvtxRow::new(3, 0, Some(i64::MIN), RangeStyle::PushPop, 0, 0);
        assert_eq!(far.end_ns(), Some(i64::MIN));
    }

    #[test]
    fn threads_numbered_by_first_appearance() {
        let mut t = ThreadIndex::default();
        let keys = [(1, 2), (1, 2), (1, 3), (1, 2), (u64::MAX, 0), (1, 3)];
        let ids: Vec<u32> = keys.iter().map(|&k| t.id(k)).collect();
        assert_eq!(ids, [0, 0, 1, 0, 2, 1]);
        assert_eq!((t.get(1), t.get(3)), (Some((1, 3)), None));
        assert_eq!(t.into_list(), [(1, 2), (1, 3), (u64::MAX, 0)]);
    }

    #[test]
    fn strips_like_nsys() {
        assert_eq!(
            strip_api_version("cudaLaunchKernel_v7000"),
            "cudaLaunchKernel"
        );
        assert_eq!(strip_api_version("cuMemcpy_v2"), "cuMemcpy_v2");
        assert_eq!(strip_api_version("cudaFree"), "cudaFree");
        assert_eq!(strip_api_version("_v1234"), "");
    }

    /// Texts with the same hash (forced): each keeps its own id, found
    /// again past the others in the probe sequence, also after the table
    /// grows and at its last slot (the probe wraps round).
    #[test]
    fn same_hash_different_texts() {
        let mut n = Names::default();
        let texts: Vec<String> = (0..100).map(|i| format!("t{i}")).collect();
        let ids: Vec<NameId> = texts.iter().map(|t| n.intern_hashed(t, u32::MAX)).collect();
        assert_eq!(ids, (0..100).collect::<Vec<NameId>>());
        for (t, &id) in texts.iter().zip(&ids) {
            assert_eq!(n.intern_hashed(t, u32::MAX), id);
            assert_eq!(n.get(id), t);
        }
        assert_eq!(n.len(), 100);
        assert!(n.slots.len() >= 134, "{}", n.slots.len());
    }

    proptest::proptest! {
        /// Interning one at a time and in batches gives the ids of a map
        /// from text to first position among the distinct texts, through
        /// the table's growth.
        #[test]
        fn ids_are_first_appearances(
            picks in proptest::collection::vec(0usize..300, 0..2000),
            cuts in proptest::collection::vec(0usize..2000, 0..6),
            reserve in 0usize..3000,
        ) {
            let texts: Vec<String> = picks.iter().map(|k| format!("{}#{k}", "x".repeat(k % 7))).collect();
            let mut model: std::collections::HashMap<&str, NameId> = Default::default();
            let want: Vec<NameId> = texts
                .iter()
                .map(|t| {
                    let next = model.len() as NameId;
                    *model.entry(t.as_str()).or_insert(next)
                })
                .collect();
            let mut one = Names::default();
            let got: Vec<NameId> = texts.iter().map(|t| one.intern(t)).collect();
            proptest::prop_assert_eq!(&got, &want);
            // in batches cut anywhere, after a reservation of any size
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(texts.len())).collect();
            cuts.push(0);
            cuts.push(texts.len());
            cuts.sort_unstable();
            let mut batched = Names::default();
            batched.reserve(reserve);
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let mut ids = Vec::new();
            for w in cuts.windows(2) {
                batched.intern_batch(&refs[w[0]..w[1]], &mut ids);
            }
            proptest::prop_assert_eq!(&ids, &want);
            proptest::prop_assert_eq!(batched.len(), model.len());
            for (t, &id) in &model {
                proptest::prop_assert_eq!(batched.get(id), *t);
                proptest::prop_assert_eq!(one.get(id), *t);
            }
        }
    }

    /// Ends past the low bits: with 4 of them kept, the text passes 16
    /// bytes several times, once by a single name longer than 32 bytes.
    /// Every name reads back, compared with a list kept beside; sealing
    /// keeps every id, and interning after it finds the old names and
    /// adds new ones after them.
    #[test]
    fn ends_past_the_low_bits_and_sealing() {
        let texts: Vec<String> = (0..60)
            .map(|i| match i {
                7 => "L".repeat(40),
                _ => format!("{}{i}", "abc".repeat(i % 4)),
            })
            .collect();
        let mut n = Names::with_low_bits(4);
        let mut kept: Vec<&str> = Vec::new();
        for t in &texts {
            let id = n.intern(t);
            if id as usize == kept.len() {
                kept.push(t);
            }
            assert_eq!(n.get(id), t);
        }
        assert!(n.wraps.len() > 3, "{:?}", n.wraps);
        let repeated = n.wraps.windows(2).any(|w| w[0] == w[1]);
        assert!(repeated, "the 40-byte name should pass two boundaries");
        for (id, t) in kept.iter().enumerate() {
            assert_eq!(n.get(id as NameId), *t);
        }
        n.seal();
        assert!(n.slots.is_empty());
        for (id, t) in kept.iter().enumerate() {
            assert_eq!(n.get(id as NameId), *t);
            assert_eq!(n.intern(t), id as NameId);
        }
        let new = n.intern("not seen before");
        assert_eq!(new as usize, kept.len());
        assert_eq!(n.get(new), "not seen before");
        assert_eq!(n.get(new + 1), "");
    }

    #[test]
    fn interns_once() {
        let mut n = Names::default();
        let a = n.intern("x");
        let b = n.intern("y");
        assert_eq!(n.intern("x"), a);
        assert_ne!(a, b);
        assert_eq!(n.get(b), "y");
        assert_eq!(n.len(), 2);
    }
}
