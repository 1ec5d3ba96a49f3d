//! `rprof mem`: memory allocations over time and memory traffic.
//!
//! Computed from the trace model (no I/O here), then rendered by
//! [`render`]:
//! - **devices**: per device (CUDA devices and the CPU), allocations and
//!   frees, bytes allocated and freed, the net change, the peak (and the
//!   lowest value) of the running sum of the events in the window, which
//!   starts at 0 before the first event, and the peaks of the allocator's
//!   own `Total Allocated` / `Total Reserved` where the profiler wrote them;
//! - **ops**: per operator name and device, the events whose innermost
//!   enclosing CPU op (or NVTX range) is that op ("self") and those inside
//!   it at any depth ("incl.", the TensorBoard plugin's "including
//!   children");
//! - **alive**: allocations never freed in the window (by address);
//! - **copies**: copies per direction and sets: count, time, bytes,
//!   bandwidth;
//! - **flags**: copies and sets that make the host wait (the rules of
//!   `nsys analyze`), with the ops that issued them;
//! - **curve**: the running sums per device, bucketed (`--curve`).
//!
//! Every definition is in docs/reports.md, section "mem".

pub mod render;

use std::collections::{BTreeMap, HashMap};

use rprof_model::Stats;
use rprof_model::{
    ApiKind, MemDevice, MemEvent, MemKind, MemOp, MemoryKind, Range, ThreadKey, Trace,
};
use serde::Serialize;

/// How much to show.
#[derive(Clone, Copy, Debug)]
pub struct MemOptions {
    /// Rows of the op table, the alive table and the issuers of each flag
    /// (0: all).
    pub top: usize,
    /// Buckets of the curve per device (at most [`MAX_CURVE_ROWS`] rows in
    /// all).
    pub curve_buckets: usize,
}

impl Default for MemOptions {
    fn default() -> MemOptions {
        MemOptions {
            top: 20,
            curve_buckets: 500,
        }
    }
}

/// The curve never has more rows than this, whatever the number of devices
/// and buckets asked for.
pub const MAX_CURVE_ROWS: usize = 1_000_000;

/// The label of events outside any op.
pub const NO_OP: &str = "(no op)";

/// Enclosing ops kept per event, innermost first: deeper nesting (only a
/// hostile or broken trace has it) is cut, counted and reported, so that
/// the work per event stays bounded.
pub const MAX_DEPTH: usize = 256;

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct MemReport {
    /// Input file.
    pub file: String,
    /// `nsys`, `nvprof` or `kineto`.
    pub source: &'static str,
    /// Memory events read.
    pub events: u64,
    /// Memory events the reader skipped (missing or mistyped fields).
    pub events_skipped: u64,
    /// First and last memory event, ns on the file's clock.
    pub window_ns: Option<[i64; 2]>,
    /// One object per device, CUDA devices first, then the CPU.
    pub devices: Vec<DeviceMem>,
    /// Per op and device, by allocated bytes (self) descending.
    pub ops: Vec<OpMem>,
    /// Op rows left out by `--top`.
    pub ops_hidden: usize,
    /// Copies per kind and sets.
    pub copies: Vec<CopyRow>,
    /// The largest allocations alive at the end of the window.
    pub alive: Vec<AliveRow>,
    /// All allocations alive at the end (not only those shown).
    pub alive_total: AliveTotal,
    /// Copies and sets that make the host wait.
    pub flags: Vec<FlagRow>,
    /// What the input cannot answer, and why.
    pub notes: Vec<String>,
}

/// Allocations on one device.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeviceMem {
    /// `cuda`, `cpu` (or `type<N>` for other PyTorch device types).
    pub device_type: String,
    /// Device index; CPU: −1.
    pub device: i64,
    /// Allocation events (bytes ≥ 0).
    pub allocs: u64,
    /// Free events (bytes < 0).
    pub frees: u64,
    /// Σ bytes of the allocations.
    pub alloc_bytes: i64,
    /// Σ bytes of the frees (positive).
    pub freed_bytes: i64,
    /// `alloc_bytes − freed_bytes`.
    pub net_bytes: i64,
    /// Highest running sum in the window (the sum starts at 0 before the
    /// first event; the highest value after an event).
    pub peak_in_window_bytes: i64,
    /// When it was first reached, ns.
    pub peak_in_window_ns: i64,
    /// The op running then (innermost enclosing op of that event).
    pub peak_in_window_op: Option<String>,
    /// Lowest running sum after an event; negative when memory allocated
    /// before the window was freed in it.
    pub min_in_window_bytes: i64,
    /// When it was first reached, ns.
    pub min_in_window_ns: i64,
    /// Highest `Total Allocated` the profiler recorded (null when it did
    /// not record it).
    pub peak_total_allocated_bytes: Option<i64>,
    /// When, ns.
    pub peak_total_allocated_ns: Option<i64>,
    /// The op running then.
    pub peak_total_allocated_op: Option<String>,
    /// Highest `Total Reserved` recorded (null when not recorded).
    pub peak_total_reserved_bytes: Option<i64>,
    /// When, ns.
    pub peak_total_reserved_ns: Option<i64>,
    /// CUDA memory-pool events of the device (nsys).
    pub pool_events: u64,
    /// Highest Σ over the device's pools of their size after an event
    /// (`localMemoryPoolSize`; a destroyed pool counts 0); null without
    /// pool events.
    pub peak_pool_size_bytes: Option<i64>,
    /// The same for the part in use (`localMemoryPoolUtilizedSize`).
    pub peak_pool_utilized_bytes: Option<i64>,
}

/// Allocations attributed to one op name on one device.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct OpMem {
    /// Op name (NVTX ranges: the text before `, seq =` / `, op_id =`).
    pub op: String,
    /// `cuda`, `cpu`, …
    pub device_type: String,
    /// Device index; CPU: −1.
    pub device: i64,
    /// Instances of the op in the trace (any thread).
    pub calls: u64,
    /// Allocations whose innermost op is this one.
    pub allocs: u64,
    /// Their bytes.
    pub alloc_bytes: i64,
    /// Frees whose innermost op is this one.
    pub frees: u64,
    /// Their bytes (positive).
    pub freed_bytes: i64,
    /// `alloc_bytes − freed_bytes` (self).
    pub increase_bytes: i64,
    /// Allocations inside the op at any depth (itself and its children).
    pub incl_allocs: u64,
    /// Their bytes.
    pub incl_alloc_bytes: i64,
    /// Allocated − freed inside the op at any depth.
    pub incl_increase_bytes: i64,
}

/// Copies of one kind, or sets.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CopyRow {
    /// `HtoD`, `DtoH`, `DtoD`, `HtoH`, `PtoP`, …, `other`, or `memset`.
    pub kind: String,
    /// Operations.
    pub count: u64,
    /// Σ GPU time, ns.
    pub total_ns: i64,
    /// Mean time, ns.
    pub mean_ns: f64,
    /// Median time, ns.
    pub median_ns: f64,
    /// Shortest, ns.
    pub min_ns: i64,
    /// Longest, ns.
    pub max_ns: i64,
    /// Σ bytes (of the operations whose size is known).
    pub bytes: i64,
    /// Operations whose size is unknown.
    pub bytes_unknown: u64,
    /// Mean bytes per operation (of those with a known size).
    pub mean_bytes: Option<f64>,
    /// Σ bytes / Σ time of the operations with a known size and a positive
    /// time, GB/s (bytes/ns).
    pub mean_gbps: Option<f64>,
    /// Highest bytes / time of one operation, GB/s.
    pub max_gbps: Option<f64>,
}

/// One allocation alive at the end of the window.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AliveRow {
    /// `cuda`, `cpu`, …
    pub device_type: String,
    /// Device index; CPU: −1.
    pub device: i64,
    /// Address.
    pub addr: u64,
    /// Bytes.
    pub bytes: i64,
    /// When it was allocated, ns.
    pub ts_ns: i64,
    /// The op that allocated it.
    pub op: Option<String>,
}

/// Totals of the alive allocations.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct AliveTotal {
    /// Allocations never freed in the window.
    pub count: u64,
    /// Their bytes.
    pub bytes: i64,
    /// Allocation events without an address (not tracked).
    pub without_addr: u64,
    /// Frees of an address not allocated in the window.
    pub unmatched_frees: u64,
    /// Allocations at an address already allocated and not freed (the
    /// older one is counted as freed).
    pub reused_addr: u64,
}

/// One `nsys analyze`-style rule.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlagRow {
    /// `async_pageable`, `sync_memcpy` or `sync_memset`.
    pub rule: &'static str,
    /// What it finds.
    pub description: &'static str,
    /// Operations it finds.
    pub count: u64,
    /// Their GPU time, ns.
    pub total_ns: i64,
    /// Operations the rule cannot judge (the launching API call is not in
    /// the trace).
    pub unknown_api: u64,
    /// Who issued them: the innermost op (or NVTX range) enclosing the
    /// launching call, by count descending.
    pub issuers: Vec<Issuer>,
}

/// An op that issued flagged operations.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Issuer {
    /// Op name, or `(no op)`.
    pub op: String,
    /// The launching API (`cudaMemcpy`, …).
    pub api: String,
    /// Operations.
    pub count: u64,
    /// Their GPU time, ns.
    pub total_ns: i64,
}

/// One bucket of the memory curve of one device.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CurvePoint {
    /// `cuda`, `cpu`, …
    pub device_type: String,
    /// Device index.
    pub device: i64,
    /// Bucket start, ns (file clock).
    pub start_ns: i64,
    /// Bucket end, ns (exclusive; the last bucket includes the last event).
    pub end_ns: i64,
    /// Running sum at the end of the bucket.
    pub allocated_bytes: i64,
    /// Highest running sum in the bucket (or at its start).
    pub max_allocated_bytes: i64,
    /// Last `Total Allocated` recorded up to the end of the bucket.
    pub total_allocated_bytes: Option<i64>,
    /// Last `Total Reserved` recorded up to the end of the bucket.
    pub total_reserved_bytes: Option<i64>,
}

type DevKey = (u8, i64, i64);

/// Devices sort CUDA first, then the CPU, then others.
fn dev_key(t: MemDevice, device: i64) -> DevKey {
    match t {
        MemDevice::Cuda => (0, 0, device),
        MemDevice::Cpu => (1, 0, device),
        MemDevice::Other(n) => (2, n, device),
    }
}

fn dev_name(k: DevKey) -> String {
    match k.0 {
        0 => "cuda".to_owned(),
        1 => "cpu".to_owned(),
        _ => format!("type{}", k.1),
    }
}

/// An op name: the operator's name (Kineto), or an NVTX text without the
/// fields `emit_nvtx` appends (`, seq = N`, `, op_id = N`, `, sizes = …`),
/// so that the calls of one op group together.
pub fn op_name(trace: &Trace, r: &Range) -> String {
    let name = trace.range_name(r);
    let cut = [
        ", seq",
        ", stashed seq",
        ", op_id",
        ", sizes",
        ", input_op_ids",
    ]
    .iter()
    .filter_map(|f| name.find(f))
    .min();
    match cut {
        Some(i) => name[..i].to_owned(),
        None => name.to_owned(),
    }
}

/// Innermost-range queries, answered by one sweep per thread.
///
/// A range encloses a point query `(thread, t0, t1)` when it is on that
/// thread and `start <= t0` and `end >= t1` (inclusive: memory events are
/// instants that can fall on an op's first or last nanosecond).
struct Enclosing<'a> {
    ranges: &'a [Range],
    /// The queried threads' ranges (indices into `ranges`), by start, then
    /// end descending, then file order: made for a thread when it is first
    /// queried (a trace without memory events or flagged copies makes
    /// none; 4 bytes a range, not a reference's 8).
    by_thread: HashMap<ThreadKey, Vec<u32>>,
}

/// A query's answer: indices into the thread's range list, outermost first.
struct Answer {
    thread: ThreadKey,
    chain: Vec<u32>,
}

impl<'a> Enclosing<'a> {
    fn new(ranges: &'a [Range]) -> Enclosing<'a> {
        Enclosing {
            ranges,
            by_thread: HashMap::new(),
        }
    }

    /// Make the lists of the threads of `queries` not made yet.
    fn index(&mut self, queries: &[(ThreadKey, i64, i64)]) {
        let mut wanted: HashMap<ThreadKey, Vec<u32>> = HashMap::new();
        for q in queries {
            if !self.by_thread.contains_key(&q.0) {
                wanted.entry(q.0).or_default();
            }
        }
        if wanted.is_empty() {
            return;
        }
        let ranges = self.ranges;
        for (i, r) in ranges.iter().enumerate() {
            if let Some(v) = wanted.get_mut(&r.thread) {
                v.push(i as u32);
            }
        }
        let order = |a: &u32, b: &u32| {
            let (a, b) = (&ranges[*a as usize], &ranges[*b as usize]);
            a.start_ns
                .cmp(&b.start_ns)
                .then(b.end_ns.cmp(&a.end_ns))
                .then(a.text.0.cmp(&b.text.0))
        };
        for (t, mut v) in wanted {
            // ranges sorted by attribution (`rprof report`) are in this
            // order already: a check instead of a sort
            if !v.windows(2).all(|w| order(&w[0], &w[1]).is_le()) {
                v.sort_by(order);
            }
            v.shrink_to_fit();
            self.by_thread.insert(t, v);
        }
    }

    /// For each query `(thread, t0, t1)`, the enclosing ranges, outermost
    /// first. Queries of a thread are answered in time order with a stack:
    /// ranges are pushed when they start, and popped from the top once
    /// they end before the current query starts.
    fn answer(&mut self, queries: &[(ThreadKey, i64, i64)]) -> Vec<Answer> {
        self.index(queries);
        let all = self.ranges;
        let mut order: Vec<usize> = (0..queries.len()).collect();
        order.sort_by_key(|&i| (queries[i].0, queries[i].1, queries[i].2, i));
        let mut out: Vec<Answer> = queries
            .iter()
            .map(|q| Answer {
                thread: q.0,
                chain: Vec::new(),
            })
            .collect();
        let mut i = 0;
        while i < order.len() {
            let thread = queries[order[i]].0;
            let mut j = i;
            while j < order.len() && queries[order[j]].0 == thread {
                j += 1;
            }
            if let Some(list) = self.by_thread.get(&thread) {
                let at = |k: u32| &all[list[k as usize] as usize];
                let mut next = 0usize;
                let mut stack: Vec<u32> = Vec::new();
                let mut compacted = 64usize;
                for &q in &order[i..j] {
                    let (_, t0, t1) = queries[q];
                    while next < list.len() && at(next as u32).start_ns <= t0 {
                        stack.push(next as u32);
                        next += 1;
                    }
                    while stack.last().is_some_and(|&s| at(s).end_ns < t0) {
                        stack.pop();
                    }
                    // ranges that do not nest can leave ended ones under
                    // live ones: drop them whenever the stack has doubled,
                    // so that the scans below stay proportional to depth
                    if stack.len() > 2 * compacted {
                        stack.retain(|&s| at(s).end_ns >= t0);
                        compacted = stack.len().max(64);
                    }
                    if let Some(a) = out.get_mut(q) {
                        let mut chain: Vec<u32> = stack
                            .iter()
                            .rev()
                            .copied()
                            .filter(|&s| at(s).end_ns >= t1)
                            .take(MAX_DEPTH + 1)
                            .collect();
                        chain.reverse();
                        a.chain = chain;
                    }
                }
            }
            i = j;
        }
        out
    }

    fn range(&self, a: &Answer, idx: u32) -> Option<&'a Range> {
        let i = *self.by_thread.get(&a.thread)?.get(idx as usize)?;
        self.ranges.get(i as usize)
    }
}

/// Op names of ranges, computed once per text handle, numbered in order
/// of first use.
struct Names<'t> {
    trace: &'t Trace,
    cache: HashMap<u32, u32>,
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl<'t> Names<'t> {
    fn new(trace: &'t Trace) -> Names<'t> {
        Names {
            trace,
            cache: HashMap::new(),
            ids: HashMap::new(),
            names: Vec::new(),
        }
    }

    /// A small id for the op name of `r`.
    fn id(&mut self, r: &Range) -> u32 {
        if let Some(&i) = self.cache.get(&r.text.0) {
            return i;
        }
        let name = op_name(self.trace, r);
        let i = match self.ids.get(&name) {
            Some(&i) => i,
            None => {
                let i = self.names.len() as u32;
                self.ids.insert(name.clone(), i);
                self.names.push(name);
                i
            }
        };
        self.cache.insert(r.text.0, i);
        i
    }
}

/// Compute the report. `trace` should be read with memory copies, memory
/// events and all ranges (and API calls, for nsys memory events to find
/// their thread).
pub fn compute(trace: &Trace, opts: MemOptions) -> (MemReport, Vec<CurvePoint>) {
    let mut notes: Vec<String> = trace.missing.clone();
    let mut enc = Enclosing::new(&trace.ranges);
    let mut names = Names::new(trace);

    // the thread of each memory event: its own, else its API call's
    let mut call_thread: HashMap<(u64, i64), ThreadKey> = HashMap::new();
    if trace.mem_events.iter().any(|e| e.thread.is_none()) {
        for c in trace.each_api_call() {
            let pid = trace.thread_id(c.thread).pid;
            call_thread.entry((pid, c.correlation)).or_insert(c.thread);
        }
    }
    let mut no_thread = 0u64;
    let queries: Vec<(ThreadKey, i64, i64)> = trace
        .mem_events
        .iter()
        .map(|e| {
            let t = e.thread.or_else(|| {
                e.correlation
                    .and_then(|c| call_thread.get(&(e.pid.unwrap_or(0), c)).copied())
            });
            if t.is_none() {
                no_thread += 1;
            }
            (t.unwrap_or(u64::MAX), e.ts_ns, e.ts_ns)
        })
        .collect();
    let answers = enc.answer(&queries);
    // op-name ids per event: innermost, and the distinct names of the chain
    let mut chains: Vec<Vec<u32>> = Vec::with_capacity(answers.len());
    let mut cut = 0u64;
    for a in &answers {
        let deep = a.chain.len() > MAX_DEPTH;
        cut += u64::from(deep);
        let chain = if deep {
            &a.chain[a.chain.len() - MAX_DEPTH..]
        } else {
            &a.chain[..]
        };
        let mut ids: Vec<u32> = chain
            .iter()
            .filter_map(|&ix| enc.range(a, ix))
            .map(|r| names.id(r))
            .collect();
        // innermost last; keep it there and drop repeated names
        let inner = ids.last().copied();
        ids.sort_unstable();
        ids.dedup();
        if let Some(i) = inner {
            ids.retain(|&x| x != i);
            ids.push(i);
        }
        chains.push(ids);
    }
    let op_of = |i: usize, names: &Names<'_>| -> Option<String> {
        chains
            .get(i)
            .and_then(|c| c.last())
            .and_then(|&n| names.names.get(n as usize).cloned())
    };

    if cut > 0 {
        notes.push(format!(
            "{cut} memory events are inside more than {MAX_DEPTH} nested ops: only the innermost {MAX_DEPTH} count them in their incl. figures"
        ));
    }

    // ---- devices and the curve
    let mut devs: BTreeMap<DevKey, DevAcc> = BTreeMap::new();
    for (i, e) in trace.mem_events.iter().enumerate() {
        let d = devs
            .entry(dev_key(e.device_type, e.device))
            .or_insert_with(DevAcc::new);
        d.add(i, e);
    }
    let pools = pool_peaks(&trace.mem_pools);
    for p in pools.keys() {
        devs.entry(*p).or_insert_with(DevAcc::new);
    }
    let devices: Vec<DeviceMem> = devs
        .iter()
        .map(|(k, d)| DeviceMem {
            pool_events: pools.get(k).map_or(0, |p| p.0),
            peak_pool_size_bytes: pools.get(k).map(|p| p.1),
            peak_pool_utilized_bytes: pools.get(k).map(|p| p.2),
            device_type: dev_name(*k),
            device: k.2,
            allocs: d.allocs,
            frees: d.frees,
            alloc_bytes: d.alloc_bytes,
            freed_bytes: d.freed_bytes,
            net_bytes: d.alloc_bytes.saturating_sub(d.freed_bytes),
            peak_in_window_bytes: d.peak.0,
            peak_in_window_ns: d.peak.1,
            peak_in_window_op: op_of(d.peak.2, &names),
            min_in_window_bytes: d.low.0,
            min_in_window_ns: d.low.1,
            peak_total_allocated_bytes: d.total_alloc.map(|t| t.0),
            peak_total_allocated_ns: d.total_alloc.map(|t| t.1),
            peak_total_allocated_op: d.total_alloc.and_then(|t| op_of(t.2, &names)),
            peak_total_reserved_bytes: d.total_res.map(|t| t.0),
            peak_total_reserved_ns: d.total_res.map(|t| t.1),
        })
        .collect();
    for d in &devices {
        if d.min_in_window_bytes < 0 {
            notes.push(format!(
                "{} {}: the running sum goes negative (lowest {} bytes): memory allocated before the window was freed in it; the figures are not clamped",
                d.device_type, d.device, d.min_in_window_bytes
            ));
        }
    }
    if trace.mem_events.is_empty() {
        notes.push("no memory events: allocations, ops, alive and the curve are empty; copies and sets are still reported".to_owned());
    } else if no_thread > 0 {
        notes.push(format!(
            "{no_thread} memory events have no thread (no API call with their correlation id): they count under {NO_OP}"
        ));
    }
    let window_ns = match (trace.mem_events.first(), trace.mem_events.last()) {
        (Some(a), Some(b)) => Some([a.ts_ns, b.ts_ns]),
        _ => None,
    };
    let curve = window_ns
        .map(|w| curve(trace, &devs, w, opts.curve_buckets))
        .unwrap_or_default();

    // ---- ops
    let ops_all = ops(trace, &chains, &mut names);
    let (ops, ops_hidden) = top(ops_all, opts.top);

    // ---- alive
    let (alive, alive_total) = alive(trace, &chains, &names, opts.top);
    if alive_total.without_addr > 0 && alive_total.without_addr == count_allocs(trace) {
        notes.push(
            "the memory events carry no addresses: allocations alive at the end cannot be told"
                .to_owned(),
        );
    }

    // ---- copies and flags
    let copies = copies(&trace.memops);
    if trace.memops.is_empty() {
        notes.push("no memory copies or sets in the trace".to_owned());
    }
    let flags = flags(trace, &mut enc, &mut names, opts.top);

    let report = MemReport {
        file: trace.path.display().to_string(),
        source: trace.source.as_str(),
        events: trace.mem_events.len() as u64,
        events_skipped: trace.stats.mem_events_skipped,
        window_ns,
        devices,
        ops,
        ops_hidden,
        copies,
        alive,
        alive_total,
        flags,
        notes,
    };
    (report, curve)
}

/// Per device: pool events, and the peaks of the summed pool sizes and
/// utilized sizes (each pool's latest value; destroyed pools count 0).
fn pool_peaks(pools: &[rprof_model::MemPoolEvent]) -> BTreeMap<DevKey, (u64, i64, i64)> {
    use rprof_model::PoolOp;
    // device → (events, pool → (size, utilized), Σ size, Σ utilized, peaks)
    type Acc = (u64, HashMap<Option<u64>, (i64, i64)>, i64, i64, i64, i64);
    let mut acc: BTreeMap<DevKey, Acc> = BTreeMap::new();
    for p in pools {
        let a = acc
            .entry(dev_key(MemDevice::Cuda, p.device))
            .or_insert_with(|| (0, HashMap::new(), 0, 0, i64::MIN, i64::MIN));
        a.0 += 1;
        let (size, used) = if p.op == PoolOp::Destroyed {
            (0, 0)
        } else {
            (p.size.unwrap_or(0), p.utilized.unwrap_or(0))
        };
        let old = a.1.insert(p.addr, (size, used)).unwrap_or((0, 0));
        a.2 = a.2.saturating_add(size.saturating_sub(old.0));
        a.3 = a.3.saturating_add(used.saturating_sub(old.1));
        a.4 = a.4.max(a.2);
        a.5 = a.5.max(a.3);
    }
    acc.into_iter().map(|(k, a)| (k, (a.0, a.4, a.5))).collect()
}

fn count_allocs(trace: &Trace) -> u64 {
    trace.mem_events.iter().filter(|e| e.bytes >= 0).count() as u64
}

fn top<T>(mut v: Vec<T>, n: usize) -> (Vec<T>, usize) {
    if n == 0 || v.len() <= n {
        return (v, 0);
    }
    let hidden = v.len() - n;
    v.truncate(n);
    (v, hidden)
}

/// Running figures of one device.
struct DevAcc {
    allocs: u64,
    frees: u64,
    alloc_bytes: i64,
    freed_bytes: i64,
    sum: i64,
    /// (value, ns, event index)
    peak: (i64, i64, usize),
    low: (i64, i64),
    total_alloc: Option<(i64, i64, usize)>,
    total_res: Option<(i64, i64)>,
    seen: bool,
}

impl DevAcc {
    fn new() -> DevAcc {
        DevAcc {
            allocs: 0,
            frees: 0,
            alloc_bytes: 0,
            freed_bytes: 0,
            sum: 0,
            peak: (0, 0, usize::MAX),
            low: (0, 0),
            total_alloc: None,
            total_res: None,
            seen: false,
        }
    }

    fn add(&mut self, i: usize, e: &MemEvent) {
        if e.bytes >= 0 {
            self.allocs += 1;
            self.alloc_bytes = self.alloc_bytes.saturating_add(e.bytes);
        } else {
            self.frees += 1;
            self.freed_bytes = self.freed_bytes.saturating_add(e.bytes.saturating_neg());
        }
        self.sum = self.sum.saturating_add(e.bytes);
        if !self.seen || self.sum > self.peak.0 {
            self.peak = (self.sum, e.ts_ns, i);
        }
        if !self.seen || self.sum < self.low.0 {
            self.low = (self.sum, e.ts_ns);
        }
        self.seen = true;
        if let Some(t) = e.total_allocated
            && self.total_alloc.is_none_or(|p| t > p.0)
        {
            self.total_alloc = Some((t, e.ts_ns, i));
        }
        if let Some(t) = e.total_reserved
            && self.total_res.is_none_or(|p| t > p.0)
        {
            self.total_res = Some((t, e.ts_ns));
        }
    }
}

fn curve(
    trace: &Trace,
    devs: &BTreeMap<DevKey, DevAcc>,
    window: [i64; 2],
    buckets: usize,
) -> Vec<CurvePoint> {
    let n_dev = devs.len().max(1);
    let buckets = buckets.clamp(1, (MAX_CURVE_ROWS / n_dev).max(1));
    let span = (i128::from(window[1]) - i128::from(window[0])).max(0) + 1;
    let width = ((span + buckets as i128 - 1) / buckets as i128).max(1);
    let n = ((span + width - 1) / width) as usize;
    let mut out = Vec::with_capacity(n * n_dev);
    for k in devs.keys() {
        let evs = trace
            .mem_events
            .iter()
            .filter(|e| dev_key(e.device_type, e.device) == *k);
        let mut pts: Vec<CurvePoint> = (0..n)
            .map(|b| {
                let s = i128::from(window[0]) + width * b as i128;
                CurvePoint {
                    device_type: dev_name(*k),
                    device: k.2,
                    start_ns: s as i64,
                    end_ns: (s + width).min(i128::from(i64::MAX)) as i64,
                    allocated_bytes: 0,
                    max_allocated_bytes: i64::MIN,
                    total_allocated_bytes: None,
                    total_reserved_bytes: None,
                }
            })
            .collect();
        let mut sum = 0i64;
        let mut ta: Option<i64> = None;
        let mut tr: Option<i64> = None;
        let mut b = 0usize;
        let close = |p: &mut CurvePoint, sum: i64, ta, tr| {
            p.allocated_bytes = sum;
            p.max_allocated_bytes = p.max_allocated_bytes.max(sum);
            p.total_allocated_bytes = ta;
            p.total_reserved_bytes = tr;
        };
        for e in evs {
            let idx = ((i128::from(e.ts_ns) - i128::from(window[0])) / width)
                .clamp(0, n as i128 - 1) as usize;
            while b < idx {
                if let Some(p) = pts.get_mut(b) {
                    close(p, sum, ta, tr);
                }
                b += 1;
                if let Some(p) = pts.get_mut(b) {
                    p.max_allocated_bytes = sum;
                }
            }
            sum = sum.saturating_add(e.bytes);
            ta = e.total_allocated.or(ta);
            tr = e.total_reserved.or(tr);
            if let Some(p) = pts.get_mut(b) {
                p.max_allocated_bytes = p.max_allocated_bytes.max(sum);
            }
        }
        while b < n {
            if let Some(p) = pts.get_mut(b) {
                close(p, sum, ta, tr);
            }
            b += 1;
            if let Some(p) = pts.get_mut(b) {
                p.max_allocated_bytes = sum;
            }
        }
        out.extend(pts);
    }
    out
}

fn ops(trace: &Trace, chains: &[Vec<u32>], names: &mut Names<'_>) -> Vec<OpMem> {
    #[derive(Default)]
    struct Acc {
        allocs: u64,
        alloc_bytes: i64,
        frees: u64,
        freed_bytes: i64,
        incl_allocs: u64,
        incl_alloc_bytes: i64,
        incl_net: i64,
    }
    // (name id or u32::MAX for no op, device)
    let mut acc: HashMap<(u32, DevKey), Acc> = HashMap::new();
    for (i, e) in trace.mem_events.iter().enumerate() {
        let dk = dev_key(e.device_type, e.device);
        let chain = chains.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let inner = chain.last().copied().unwrap_or(u32::MAX);
        let a = acc.entry((inner, dk)).or_default();
        if e.bytes >= 0 {
            a.allocs += 1;
            a.alloc_bytes = a.alloc_bytes.saturating_add(e.bytes);
        } else {
            a.frees += 1;
            a.freed_bytes = a.freed_bytes.saturating_add(e.bytes.saturating_neg());
        }
        let ids: &[u32] = if chain.is_empty() { &[u32::MAX] } else { chain };
        for &n in ids {
            let a = acc.entry((n, dk)).or_default();
            if e.bytes >= 0 {
                a.incl_allocs += 1;
                a.incl_alloc_bytes = a.incl_alloc_bytes.saturating_add(e.bytes);
            }
            a.incl_net = a.incl_net.saturating_add(e.bytes);
        }
    }
    // calls per op name: every range with that name, on any thread
    let mut calls: HashMap<u32, u64> = HashMap::new();
    if !acc.is_empty() {
        for r in &trace.ranges {
            *calls.entry(names.id(r)).or_default() += 1;
        }
    }
    let mut rows: Vec<OpMem> = acc
        .into_iter()
        .map(|((n, dk), a)| {
            let op = names
                .names
                .get(n as usize)
                .cloned()
                .unwrap_or_else(|| NO_OP.to_owned());
            OpMem {
                calls: calls.get(&n).copied().unwrap_or(0),
                op,
                device_type: dev_name(dk),
                device: dk.2,
                allocs: a.allocs,
                alloc_bytes: a.alloc_bytes,
                frees: a.frees,
                freed_bytes: a.freed_bytes,
                increase_bytes: a.alloc_bytes.saturating_sub(a.freed_bytes),
                incl_allocs: a.incl_allocs,
                incl_alloc_bytes: a.incl_alloc_bytes,
                incl_increase_bytes: a.incl_net,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.alloc_bytes
            .cmp(&a.alloc_bytes)
            .then(b.incl_alloc_bytes.cmp(&a.incl_alloc_bytes))
            .then_with(|| a.op.cmp(&b.op))
            .then_with(|| a.device_type.cmp(&b.device_type))
            .then(a.device.cmp(&b.device))
    });
    rows
}

fn alive(
    trace: &Trace,
    chains: &[Vec<u32>],
    names: &Names<'_>,
    n: usize,
) -> (Vec<AliveRow>, AliveTotal) {
    let mut total = AliveTotal::default();
    // (device key, addr) → event index
    let mut live: HashMap<(DevKey, u64), usize> = HashMap::new();
    for (i, e) in trace.mem_events.iter().enumerate() {
        let dk = dev_key(e.device_type, e.device);
        let Some(addr) = e.addr else {
            if e.bytes >= 0 {
                total.without_addr += 1;
            }
            continue;
        };
        if e.bytes >= 0 {
            if live.insert((dk, addr), i).is_some() {
                total.reused_addr += 1;
            }
        } else if live.remove(&(dk, addr)).is_none() {
            total.unmatched_frees += 1;
        }
    }
    let mut rows: Vec<(DevKey, u64, usize)> =
        live.into_iter().map(|((d, a), i)| (d, a, i)).collect();
    total.count = rows.len() as u64;
    total.bytes = rows
        .iter()
        .filter_map(|r| trace.mem_events.get(r.2))
        .fold(0i64, |s, e| s.saturating_add(e.bytes));
    rows.sort_by(|a, b| {
        let (ea, eb) = (&trace.mem_events[a.2], &trace.mem_events[b.2]);
        eb.bytes
            .cmp(&ea.bytes)
            .then(ea.ts_ns.cmp(&eb.ts_ns))
            .then(a.0.cmp(&b.0))
            .then(a.1.cmp(&b.1))
    });
    if n > 0 {
        rows.truncate(n);
    }
    let out = rows
        .into_iter()
        .filter_map(|(dk, addr, i)| {
            let e = trace.mem_events.get(i)?;
            Some(AliveRow {
                device_type: dev_name(dk),
                device: dk.2,
                addr,
                bytes: e.bytes,
                ts_ns: e.ts_ns,
                op: chains
                    .get(i)
                    .and_then(|c| c.last())
                    .and_then(|&x| names.names.get(x as usize).cloned()),
            })
        })
        .collect();
    (out, total)
}

/// The label of a copy kind or set.
pub fn kind_label(k: MemKind) -> &'static str {
    match k {
        MemKind::Copy(c) => c.as_str(),
        MemKind::Set => "memset",
    }
}

/// Copies per kind and sets: kinds in a fixed order (HtoD, DtoH, DtoD,
/// HtoH, PtoP, the array kinds, other, memset), only those present.
pub fn copies(memops: &[MemOp]) -> Vec<CopyRow> {
    struct Acc {
        t: Stats,
        bytes: i64,
        bytes_n: u64,
        bw_bytes: i128,
        bw_ns: i128,
        max_gbps: Option<f64>,
    }
    let mut acc: BTreeMap<MemKind, Acc> = BTreeMap::new();
    for m in memops {
        let a = acc.entry(m.kind).or_insert_with(|| Acc {
            t: Stats::with_samples(),
            bytes: 0,
            bytes_n: 0,
            bw_bytes: 0,
            bw_ns: 0,
            max_gbps: None,
        });
        let d = m.duration_ns();
        a.t.add(d);
        if let Some(b) = m.bytes {
            a.bytes = a.bytes.saturating_add(b);
            a.bytes_n += 1;
            if d > 0 {
                a.bw_bytes += i128::from(b);
                a.bw_ns += i128::from(d);
                let g = b as f64 / d as f64;
                a.max_gbps = Some(a.max_gbps.map_or(g, |x: f64| x.max(g)));
            }
        }
    }
    acc.into_iter()
        .map(|(k, mut a)| CopyRow {
            kind: kind_label(k).to_owned(),
            count: a.t.count(),
            total_ns: a.t.sum(),
            mean_ns: a.t.mean().unwrap_or(0.0),
            median_ns: a.t.median().unwrap_or(0.0),
            min_ns: a.t.min().unwrap_or(0),
            max_ns: a.t.max().unwrap_or(0),
            bytes: a.bytes,
            bytes_unknown: a.t.count() - a.bytes_n,
            mean_bytes: (a.bytes_n > 0).then(|| a.bytes as f64 / a.bytes_n as f64),
            mean_gbps: (a.bw_ns > 0).then(|| a.bw_bytes as f64 / a.bw_ns as f64),
            max_gbps: a.max_gbps,
        })
        .collect()
}

/// The three rules, in this order.
pub const RULES: [(&str, &str); 3] = [
    (
        "async_pageable",
        "asynchronous copies (cudaMemcpy*Async) from or to pageable host memory: they run synchronously",
    ),
    (
        "sync_memcpy",
        "copies issued by a synchronous API (cudaMemcpy*, cuMemcpy* without Async): the host waits",
    ),
    (
        "sync_memset",
        "sets issued by a synchronous API (cudaMemset*) on pinned or managed memory: the host waits",
    ),
];

fn flags(trace: &Trace, enc: &mut Enclosing<'_>, names: &mut Names<'_>, n: usize) -> Vec<FlagRow> {
    // the launching call of each copy and set, and its kind
    let mut hits: Vec<(usize, usize)> = Vec::new(); // (rule, memop index)
    let mut unknown = [0u64; 3];
    for (i, m) in trace.memops.iter().enumerate() {
        let api = m
            .launch
            .and_then(|l| trace.launches.get(l as usize))
            .and_then(|l| l.api)
            .map(|a| ApiKind::classify(trace.strings.get(a)));
        let host = |k: MemoryKind| k == MemoryKind::Pageable;
        match m.kind {
            MemKind::Copy(_) => match api {
                Some(ApiKind::MemcpyAsync) if host(m.src_mem) || host(m.dst_mem) => {
                    hits.push((0, i));
                }
                Some(ApiKind::Memcpy) => hits.push((1, i)),
                Some(_) => {}
                None => {
                    unknown[0] += 1;
                    unknown[1] += 1;
                }
            },
            MemKind::Set => match api {
                Some(ApiKind::Memset)
                    if matches!(m.src_mem, MemoryKind::Pinned | MemoryKind::Managed) =>
                {
                    hits.push((2, i));
                }
                Some(_) => {}
                None => unknown[2] += 1,
            },
        }
    }
    let queries: Vec<(ThreadKey, i64, i64)> = hits
        .iter()
        .map(|&(_, i)| {
            match trace.memops[i]
                .launch
                .and_then(|l| trace.launches.get(l as usize))
            {
                Some(l) => (l.thread, l.start_ns, l.end_ns),
                None => (u64::MAX, 0, 0),
            }
        })
        .collect();
    let answers = enc.answer(&queries);
    let mut rows: Vec<FlagRow> = RULES
        .iter()
        .enumerate()
        .map(|(r, (rule, description))| FlagRow {
            rule,
            description,
            count: 0,
            total_ns: 0,
            unknown_api: unknown[r],
            issuers: Vec::new(),
        })
        .collect();
    let mut by: Vec<BTreeMap<(String, String), (u64, i64)>> = vec![BTreeMap::new(); 3];
    for (&(rule, i), a) in hits.iter().zip(&answers) {
        let m = &trace.memops[i];
        let d = m.duration_ns();
        rows[rule].count += 1;
        rows[rule].total_ns = rows[rule].total_ns.saturating_add(d);
        let op = a
            .chain
            .last()
            .and_then(|&ix| enc.range(a, ix))
            .map(|r| names.id(r))
            .and_then(|id| names.names.get(id as usize).cloned())
            .unwrap_or_else(|| NO_OP.to_owned());
        let api = m
            .launch
            .and_then(|l| trace.launches.get(l as usize))
            .and_then(|l| l.api)
            .map(|s| trace.strings.get(s).to_owned())
            .unwrap_or_default();
        let e = by[rule].entry((op, api)).or_insert((0, 0));
        e.0 += 1;
        e.1 = e.1.saturating_add(d);
    }
    for (row, map) in rows.iter_mut().zip(by) {
        let mut v: Vec<Issuer> = map
            .into_iter()
            .map(|((op, api), (count, total_ns))| Issuer {
                op,
                api,
                count,
                total_ns,
            })
            .collect();
        v.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then(b.total_ns.cmp(&a.total_ns))
                .then_with(|| a.op.cmp(&b.op))
                .then_with(|| a.api.cmp(&b.api))
        });
        row.issuers = top(v, n).0;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rprof_model::StrRef;

    fn range(thread: u64, start: i64, end: i64, text: u32) -> Range {
        Range {
            start_ns: start,
            end_ns: end,
            thread,
            text: StrRef(text),
            domain: 0,
        }
    }

    /// The sweep against a plain scan: for every query, the enclosing
    /// ranges (`start <= t0`, `end >= t1`, same thread), outermost first in
    /// (start, end descending, text) order.
    fn brute(ranges: &[Range], q: (u64, i64, i64)) -> Vec<(i64, i64, u32)> {
        let mut v: Vec<(i64, i64, u32)> = ranges
            .iter()
            .filter(|r| r.thread == q.0 && r.start_ns <= q.1 && r.end_ns >= q.2)
            .map(|r| (r.start_ns, r.end_ns, r.text.0))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        v
    }

    proptest! {
        #[test]
        fn sweep_matches_brute_force(
            rs in prop::collection::vec((0u64..3, 0i64..100, 0i64..40), 0..40),
            qs in prop::collection::vec((0u64..4, 0i64..140, 0i64..5), 0..40),
        ) {
            // ranges need not nest: the sweep must still find every enclosing one
            let ranges: Vec<Range> = rs
                .iter()
                .enumerate()
                .map(|(i, &(t, s, d))| range(t, s, s + d, i as u32))
                .collect();
            let queries: Vec<(u64, i64, i64)> = qs.iter().map(|&(t, a, d)| (t, a, a + d)).collect();
            let mut enc = Enclosing::new(&ranges);
            let got = enc.answer(&queries);
            for (q, a) in queries.iter().zip(&got) {
                let chain: Vec<(i64, i64, u32)> = a
                    .chain
                    .iter()
                    .map(|&i| enc.range(a, i).unwrap())
                    .map(|r| (r.start_ns, r.end_ns, r.text.0))
                    .collect();
                prop_assert_eq!(chain, brute(&ranges, *q));
            }
        }
    }

    #[test]
    fn op_names_drop_emit_nvtx_fields() {
        let mut t = Trace::empty("x".into(), rprof_model::Source::Nsys);
        let a = t.strings.push("aten::mm, seq = 4, op_id = 9");
        let b = t.strings.push("aten::view, op_id = 314290");
        let c = t.strings.push("plain");
        let name = |s| op_name(&t, &range(0, 0, 1, 0).with_text(s));
        assert_eq!(name(a), "aten::mm");
        assert_eq!(name(b), "aten::view");
        assert_eq!(name(c), "plain");
    }

    trait WithText {
        fn with_text(self, s: StrRef) -> Range;
    }

    impl WithText for Range {
        fn with_text(mut self, s: StrRef) -> Range {
            self.text = s;
            self
        }
    }
}
