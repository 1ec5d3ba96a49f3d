//! PyTorch profiler (Kineto) chrome traces: `*.pt.trace.json`, gzipped or
//! not (trace-formats.md §5).
//!
//! The JSON is streamed on two threads: one splits the text into events
//! (`kineto_split`) and parses each from its slice, the other builds the
//! trace from them in order; only what the trace model keeps is stored, so
//! memory stays well under the decompressed size. Each event's top-level fields are captured
//! raw and interpreted leniently: an event with a field of the wrong type is
//! skipped and counted, never fatal. Times are decimal microseconds and are
//! converted to integer nanoseconds from their text, without floating-point
//! drift.
//!
//! Mapping: `kernel` events → kernels; `gpu_memcpy`/`gpu_memset` → memory
//! operations; `cuda_runtime`/`cuda_driver` → launch calls (joined on
//! `correlation`); `cpu_op` and `user_annotation` → ranges, whose fields
//! (name, sequence number, external id, input shapes and types) are kept
//! typed in [`RangeMeta`] for the op models, and whose text, what record
//! files and the other views show, is written in the PyTorch marker grammar
//! (`name, seq = N, sizes = [...], dtypes = [...]`). The 2021
//! spellings (`Kernel`, `Runtime`, `Operator`, `Memcpy`, `Memset`, `external
//! id`) are accepted too.

use crate::{FastMap as HashMap, FastSet as HashSet};
use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::path::Path;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::kineto_args::{Args, Key};
use super::kineto_split as split;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{Error, Result};
use crate::model::{
    ApiCall, ApiKind, CommArgs, CopyKind, DeviceInfo, Kernel, KernelExtra, KinetoKernel, Launch,
    MemDevice, MemEvent, MemKind, MemOp, MemoryKind, OpFields, Range, RangeKind, RangeMeta,
    RangeMetas, ReadStats, Source, SyncEvent, SyncKind, Trace, narrow,
};
use crate::model::{StrPool, StrRef};
use crate::read::ReadOptions;
use crate::stock;
use rprof_model::{ClockOrigin, DistInfo, OptStr, OptU32};

/// Counts specific to Kineto input.
#[derive(Default)]
struct Counts {
    events: u64,
    skipped_bad_type: u64,
    /// Events without a string `ph`, or complete events without a string
    /// `cat`: they cannot be told apart, so they are counted, not read.
    bad_ph_cat: u64,
    /// Kernel events that are not complete (`X`) events.
    kernel_not_x: u64,
}

/// The fields of one event that rprof looks at, as raw JSON text borrowed
/// from the input.
#[derive(Default)]
struct RawEvent<'a> {
    ph: Option<&'a str>,
    cat: Option<&'a str>,
    name: Option<&'a str>,
    pid: Option<&'a str>,
    tid: Option<&'a str>,
    ts: Option<&'a str>,
    dur: Option<&'a str>,
    args: Option<&'a str>,
}

/// Where each field of a [`RawEvent`] lies in its batch of text: (start,
/// end) byte offsets, (0, 0) when absent. The splitting thread hands these
/// over rather than the fields themselves, so that nothing allocated per
/// event crosses threads (freeing another thread's allocations was a fifth
/// of the read's time).
type Spans = [(usize, usize); 8];

impl<'a> RawEvent<'a> {
    fn fields(&self) -> [Option<&'a str>; 8] {
        [
            self.ph, self.cat, self.name, self.pid, self.tid, self.ts, self.dur, self.args,
        ]
    }

    /// The offsets of the fields in `batch`, which they borrow from.
    fn spans(&self, batch: &[u8]) -> Spans {
        let base = batch.as_ptr() as usize;
        let mut out = [(0, 0); 8];
        for (slot, f) in out.iter_mut().zip(self.fields()) {
            if let Some(f) = f {
                let start = f.as_ptr() as usize - base;
                *slot = (start, start + f.len());
            }
        }
        out
    }

    /// The event whose fields lie at `spans` in `batch`.
    fn at(batch: &'a Batch, spans: &Spans) -> Self {
        let f = |i: usize| {
            let (a, b) = spans[i];
            if b == 0 {
                return None;
            }
            batch.field(a, b)
        };
        RawEvent {
            ph: f(0),
            cat: f(1),
            name: f(2),
            pid: f(3),
            tid: f(4),
            ts: f(5),
            dur: f(6),
            args: f(7),
        }
    }
}

/// A batch of events' text, as the splitting thread hands it over.
enum Batch {
    /// Valid UTF-8 as a whole, checked once on the splitting thread (most
    /// inputs): a field is a slice of it, not checked again.
    Text(String),
    /// Not UTF-8 somewhere (in a member nobody reads, perhaps): each field
    /// is checked when it is read.
    Bytes(Vec<u8>),
}

impl Batch {
    /// The text from byte `a` to `b`, if it is UTF-8.
    fn field(&self, a: usize, b: usize) -> Option<&str> {
        match self {
            Batch::Text(t) => t.get(a..b),
            Batch::Bytes(v) => v.get(a..b).and_then(|t| std::str::from_utf8(t).ok()),
        }
    }
}

/// Decimal microseconds (`1683564902133354`, `2413669097444.592`, `1.5e3`)
/// to integer nanoseconds, exactly for plain decimals.
pub(crate) fn micros_to_ns(text: &str) -> Option<i64> {
    let t = text.trim().trim_matches('"');
    if t.contains(['e', 'E']) {
        let f: f64 = t.parse().ok()?;
        return f.is_finite().then(|| (f * 1000.0).round() as i64);
    }
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: i64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut ns = whole.checked_mul(1000)?;
    let digits: Vec<u8> = frac.bytes().map(|b| b - b'0').collect();
    let mut add = 0i64;
    for i in 0..3 {
        add = add * 10 + i64::from(*digits.get(i).unwrap_or(&0));
    }
    // round half up on the fourth decimal
    if digits.get(3).is_some_and(|&d| d >= 5) {
        add += 1;
    }
    ns = ns.checked_add(add)?;
    Some(if neg { -ns } else { ns })
}

/// A JSON string field's text: borrowed from the input when it has no
/// escapes (most names), decoded otherwise; `None` if not a string. `v` is
/// one JSON value, as serde's raw values are.
pub(super) fn raw_str<'a>(v: &Option<&'a str>) -> Option<Cow<'a, str>> {
    let raw = (*v)?;
    // Without a backslash or a control character, the text between the
    // quotes is the string (what serde returns for it, without setting up
    // a parser: three fields of every event go through here).
    if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"'))
        && !inner.bytes().any(|b| b == b'\\' || b < 0x20)
    {
        return Some(Cow::Borrowed(inner));
    }
    match serde_json::from_str::<&'a str>(raw) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(raw).ok().map(Cow::Owned),
    }
}

/// pid/tid: an integer, or a string holding one, or any string (hashed).
pub(super) fn raw_id(v: &Option<&str>) -> Option<u64> {
    let raw = (*v)?;
    // a JSON number is never signed with `+` nor padded: Rust's parse
    // takes exactly the integers serde's does, but for `-0`, which serde
    // reads as a float (so it is no id, as before)
    if raw != "-0"
        && let Ok(n) = raw.parse::<i64>()
    {
        return Some(n as u64);
    }
    let s: String = serde_json::from_str(raw).ok()?;
    if let Ok(n) = s.trim().parse::<i64>() {
        return Some(n as u64);
    }
    // names like "stream 7" or "[pid]": keep them apart from numeric ids
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    Some(h | (1 << 63))
}

pub(super) fn num_i64(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

pub(super) fn num_f64(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn dims3(v: Option<&Value>) -> Option<[i64; 3]> {
    let a = v?.as_array()?;
    let mut out = [1i64; 3];
    for (slot, x) in out.iter_mut().zip(a) {
        *slot = num_i64(Some(x))?;
    }
    Some(out)
}

struct Builder {
    strings: StrPool,
    names: HashMap<String, StrRef>,
    kernels: Vec<Kernel>,
    memops: Vec<MemOp>,
    calls: HashMap<i64, Launch>,
    ranges: Vec<Range>,
    range_meta: RangeMetas,
    devices: Vec<DeviceInfo>,
    stats: ReadStats,
    counts: Counts,
    base_ns: Option<i64>,
    opts: ReadOptions,
    api_calls: Vec<ApiCall>,
    mem_events: Vec<MemEvent>,
    syncs: Vec<SyncEvent>,
    dist: Option<DistInfo>,
    min_ts: Option<i64>,
}

/// Collective arguments the profiler writes on `record_param_comms`
/// operators and on communication kernels.
fn comm_args(b: &mut Builder, args: &Args<'_>) -> Option<Box<CommArgs>> {
    let name = args.str(Key::CollectiveName);
    let in_n = args.i64(Key::InNelems);
    let out_n = args.i64(Key::OutNelems);
    if name.is_none() && in_n.is_none() && out_n.is_none() {
        return None;
    }
    // a string as it is; anything else as JSON prints it
    let text = |b: &mut Builder, k: Key| -> Option<crate::model::StrRef> {
        match args.value(k)? {
            Value::String(s) => Some(b.intern(&s)),
            Value::Null => None,
            v => Some(b.intern(&v.to_string())),
        }
    };
    Some(Box::new(CommArgs {
        collective: name.map(|n| b.intern(&n)),
        in_nelems: in_n,
        out_nelems: out_n,
        group_size: args.i64(Key::GroupSize),
        dtype: text(b, Key::Dtype),
        pg_name: text(b, Key::PgName),
        pg_ranks: text(b, Key::PgRanks),
    }))
}

impl Builder {
    /// A `[memory]` instant event (`profile_memory=True`).
    fn memory_event(&mut self, ev: &RawEvent<'_>) {
        let args: Value = match &ev.args {
            Some(a) => serde_json::from_str(a).unwrap_or(Value::Null),
            None => Value::Null,
        };
        let ts = ev.ts.and_then(micros_to_ns);
        let bytes = num_i64(args.get("Bytes"));
        let (Some(ts), Some(bytes)) = (ts, bytes) else {
            self.stats.mem_events_skipped += 1;
            return;
        };
        // c10::DeviceType: 0 CPU, 1 CUDA
        let device_type = match num_i64(args.get("Device Type")) {
            Some(0) | None => MemDevice::Cpu,
            Some(1) => MemDevice::Cuda,
            Some(n) => MemDevice::Other(n),
        };
        let device = match device_type {
            MemDevice::Cpu => -1,
            _ => num_i64(args.get("Device Id")).unwrap_or(0),
        };
        let (pid, tid) = (raw_id(&ev.pid), raw_id(&ev.tid));
        self.mem_events.push(MemEvent {
            ts_ns: ts,
            device_type,
            device,
            thread: match (pid, tid) {
                (Some(p), Some(t)) => Some(thread_key(p, t)),
                _ => None,
            },
            pid: pid.map(|p| p & 0xFFFF_FFFF),
            addr: num_i64(args.get("Addr")).map(|a| a as u64),
            bytes,
            total_allocated: num_i64(args.get("Total Allocated")),
            total_reserved: num_i64(args.get("Total Reserved")),
            correlation: None,
        });
    }

    fn intern(&mut self, s: &str) -> StrRef {
        if let Some(&r) = self.names.get(s) {
            return r;
        }
        let r = self.strings.push(s);
        self.names.insert(s.to_owned(), r);
        r
    }

    fn event(&mut self, ev: RawEvent<'_>) {
        self.counts.events += 1;
        let Some(ph) = raw_str(&ev.ph) else {
            self.counts.bad_ph_cat += 1;
            return;
        };
        if ph == "i" || ph == "I" {
            if self.opts.mem_events && raw_str(&ev.name).as_deref() == Some("[memory]") {
                self.memory_event(&ev);
            }
            return;
        }
        let Some(cat) = raw_str(&ev.cat) else {
            if ph == "X" {
                self.counts.bad_ph_cat += 1;
            }
            return;
        };
        if ph != "X" {
            if matches!(&*cat, "kernel" | "Kernel") {
                self.counts.kernel_not_x += 1;
            }
            return;
        }
        let kind = match &*cat {
            "kernel" | "Kernel" => Kind::Kernel,
            "gpu_memcpy" | "Memcpy" | "gpu_memset" | "Memset" => Kind::Mem,
            "cuda_runtime" | "Runtime" | "cuda_driver" | "Driver" => Kind::Call,
            "cpu_op" | "Operator" => Kind::Op(RangeKind::CpuOp),
            "user_annotation" => Kind::Op(RangeKind::UserAnnotation),
            "cuda_sync" => Kind::Sync,
            _ => return,
        };
        let (Some(name), Some(ts), Some(dur)) = (
            raw_str(&ev.name),
            ev.ts.and_then(micros_to_ns),
            ev.dur.and_then(micros_to_ns),
        ) else {
            // a kernel is counted once, as a skipped kernel row
            if kind == Kind::Kernel {
                self.stats.kernel_rows += 1;
                self.stats.skipped_null += 1;
            } else {
                self.counts.skipped_bad_type += 1;
            }
            return;
        };
        let args = Args::parse(ev.args);
        let start = ts;
        let end = ts.saturating_add(dur);
        self.min_ts = Some(self.min_ts.map_or(start, |m| m.min(start)));
        match kind {
            Kind::Kernel => {
                self.stats.kernel_rows += 1;
                if end <= start {
                    self.stats.non_positive_duration += 1;
                }
                let name = self.intern(&name);
                let stats = KinetoKernel {
                    blocks_per_sm: args.f64(Key::BlocksPerSm),
                    warps_per_sm: args.f64(Key::WarpsPerSm),
                    occupancy_pct: args.f64(Key::Occupancy),
                    comm: comm_args(self, &args),
                };
                self.kernels.push(Kernel {
                    row: self.kernels.len() as u32,
                    start_ns: start,
                    end_ns: end,
                    device: args.i64(Key::Device).unwrap_or(0),
                    context: OptU32::saturating(narrow(args.i64(Key::Context))),
                    stream: args.i64(Key::Stream).unwrap_or(0),
                    correlation: args.i64(Key::Correlation).unwrap_or(-1),
                    global_pid_bits: crate::model::NO_PID,
                    name,
                    mangled: OptStr::NONE,
                    grid: dims3(args.value(Key::Grid).as_ref())
                        .unwrap_or([0, 0, 0])
                        .map(|d| narrow(Some(d)).unwrap_or(0)),
                    block: dims3(args.value(Key::Block).as_ref())
                        .unwrap_or([0, 0, 0])
                        .map(|d| narrow(Some(d)).unwrap_or(0)),
                    registers_per_thread: narrow(args.i64(Key::Registers)),
                    // Kineto reports static + dynamic shared memory together
                    static_smem_bytes: OptU32::saturating(narrow(args.i64(Key::SharedMemory))),
                    dynamic_smem_bytes: OptU32::NONE,
                    launch: OptU32::NONE,
                    extra: KernelExtra::of(
                        narrow(args.i64(Key::GraphId)),
                        args.i64(Key::GraphNodeId),
                        (stats != KinetoKernel::default()).then_some(stats),
                    ),
                });
            }
            Kind::Mem => {
                let is_set = cat == "gpu_memset" || cat == "Memset";
                let (kind, (src_mem, dst_mem)) = if is_set {
                    // `Memset (Device)`: the kind of the memory set
                    let set_mem = MemoryKind::from_kineto_name(&name).0;
                    (MemKind::Set, (set_mem, MemoryKind::Unknown))
                } else {
                    (
                        MemKind::Copy(CopyKind::from_name(&name)),
                        MemoryKind::from_kineto_name(&name),
                    )
                };
                let name = self.intern(&name);
                self.memops.push(MemOp {
                    start_ns: start,
                    end_ns: end,
                    device: args.i64(Key::Device).unwrap_or(0),
                    stream: args.i64(Key::Stream).unwrap_or(0),
                    correlation: args.i64(Key::Correlation).unwrap_or(-1),
                    bytes: args.i64(Key::Bytes),
                    name,
                    launch: None,
                    kind,
                    src_mem,
                    dst_mem,
                    pid: None,
                });
            }
            Kind::Sync => {
                if !self.opts.syncs {
                    return;
                }
                let kind = match args.str(Key::SyncKind).as_deref() {
                    Some("Event Sync") => SyncKind::Event,
                    Some("Stream Wait Event") => SyncKind::StreamWaitEvent,
                    Some("Stream Sync") => SyncKind::Stream,
                    Some("Context Sync") => SyncKind::Context,
                    _ => match &*name {
                        "Event Sync" => SyncKind::Event,
                        "Stream Wait Event" => SyncKind::StreamWaitEvent,
                        "Stream Sync" => SyncKind::Stream,
                        "Context Sync" => SyncKind::Context,
                        _ => SyncKind::Unknown,
                    },
                };
                self.syncs.push(SyncEvent {
                    start_ns: start,
                    end_ns: end,
                    device: args.i64(Key::Device),
                    stream: args.i64(Key::Stream),
                    correlation: args.i64(Key::Correlation),
                    pid: None,
                    kind,
                });
            }
            Kind::Call => {
                let Some(corr) = args.i64(Key::Correlation) else {
                    return;
                };
                let (Some(pid), Some(tid)) = (raw_id(&ev.pid), raw_id(&ev.tid)) else {
                    self.counts.skipped_bad_type += 1;
                    return;
                };
                let api = self.intern(&name);
                if self.opts.api_calls {
                    self.api_calls.push(ApiCall {
                        start_ns: start,
                        end_ns: end,
                        thread: thread_key(pid, tid),
                        correlation: corr,
                        name: api,
                        kind: ApiKind::classify(&name),
                    });
                }
                self.calls.entry(corr).or_insert(Launch {
                    start_ns: start,
                    end_ns: end,
                    thread: thread_key(pid, tid),
                    correlation: corr,
                    api: Some(api),
                });
            }
            Kind::Op(_) if self.opts.no_ranges => {}
            Kind::Op(range_kind) => {
                let (Some(pid), Some(tid)) = (raw_id(&ev.pid), raw_id(&ev.tid)) else {
                    self.counts.skipped_bad_type += 1;
                    return;
                };
                self.stats.nvtx_rows += 1;
                let seq = args.i64(Key::SequenceNumber);
                let (sizes, dtypes) = inputs(
                    args.value(Key::InputDims).as_ref(),
                    args.raw(Key::InputType),
                );
                // the profiler's External id plays the part of NVTX's op_id:
                // one per operator call, shared by the kernels it launches
                let op_id = args
                    .i64(Key::ExternalId)
                    .or_else(|| args.i64(Key::ExternalIdOld));
                let text =
                    stock::format_marker(&name, seq, op_id, sizes.as_deref(), dtypes.as_deref());
                let text = self.strings.push(&text);
                let module = args.str(Key::ModuleHierarchy).filter(|s| !s.is_empty());
                let call_stack = args.str(Key::CallStack).filter(|s| !s.is_empty());
                // the fields stay typed for the op models; the text is
                // what record files and the other views show of the operator
                let dtypes: Option<Vec<StrRef>> = dtypes.map(|d| {
                    d.iter()
                        .map(|t| self.intern(&stock::marker_dtype(t)))
                        .collect()
                });
                let op = OpFields::new(seq, op_id, sizes.as_deref(), dtypes.as_deref());
                let m = RangeMeta {
                    module: module.map(|s| self.intern(&s)),
                    call_stack: call_stack.map(|s| self.intern(&s)),
                    name: Some(self.intern(&name)),
                    kind: range_kind,
                    op,
                    comm: comm_args(self, &args),
                };
                self.range_meta.insert(text, m);
                self.ranges.push(Range {
                    start_ns: start,
                    end_ns: end,
                    thread: thread_key(pid, tid),
                    text,
                    domain: 0,
                });
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Kernel,
    Mem,
    Call,
    Op(RangeKind),
    Sync,
}

fn thread_key(pid: u64, tid: u64) -> u64 {
    ((pid & 0xFFFF_FFFF) << 32) | (tid & 0xFFFF_FFFF)
}

/// Each input's type, as the profiler spelled it.
type Types<'a> = Vec<Cow<'a, str>>;

/// `Input Dims` and `Input type` as marker fields. Tensor lists (a list of
/// shapes in one slot) are expanded in place, as PyTorch 2.x's NVTX
/// observer does. The types are borrowed from the input (a type that is not
/// a string is `""`).
fn inputs<'a>(
    dims: Option<&Value>,
    types: Option<&'a RawValue>,
) -> (Option<Vec<Vec<i64>>>, Option<Types<'a>>) {
    let types: Option<Types<'a>> = types
        .and_then(|t| serde_json::from_str::<Vec<&'a RawValue>>(t.get()).ok())
        .map(|a| {
            a.iter()
                .map(|t| raw_str(&Some(t.get())).unwrap_or_default())
                .collect()
        });
    let Some(dims) = dims.and_then(Value::as_array) else {
        return (None, types);
    };
    let mut shapes = Vec::new();
    let mut out_types = Vec::new();
    for (i, d) in dims.iter().enumerate() {
        let t = types
            .as_ref()
            .and_then(|t| t.get(i))
            .cloned()
            .unwrap_or_default();
        match d.as_array() {
            Some(items) if items.iter().all(Value::is_array) && !items.is_empty() => {
                for item in items {
                    shapes.push(shape(item));
                    out_types.push(t.clone());
                }
            }
            _ => {
                shapes.push(shape(d));
                out_types.push(t);
            }
        }
    }
    let types = types.map(|_| out_types);
    (Some(shapes), types)
}

fn shape(v: &Value) -> Vec<i64> {
    v.as_array()
        .map(|a| a.iter().filter_map(|x| num_i64(Some(x))).collect())
        .unwrap_or_default()
}

fn device_props(v: &Value) -> Option<DeviceInfo> {
    let get = |k: &str| num_i64(v.get(k));
    let warp = get("warpSize");
    Some(DeviceInfo {
        device: get("id")?,
        pid: None,
        name: v.get("name").and_then(Value::as_str).map(str::to_owned),
        sm_count: get("numSms"),
        cc_major: get("computeMajor"),
        cc_minor: get("computeMinor"),
        clock_hz: None,
        mem_bandwidth_bps: None,
        threads_per_warp: warp,
        max_warps_per_sm: get("maxThreadsPerMultiprocessor")
            .zip(warp)
            .and_then(|(t, w)| (w > 0).then(|| t / w)),
        max_blocks_per_sm: get("maxBlocksPerMultiProcessor"),
        max_threads_per_block: get("maxThreadsPerBlock"),
        max_regs_per_sm: get("regsPerMultiprocessor"),
        max_regs_per_block: get("regsPerBlock"),
        max_smem_per_sm: get("sharedMemPerMultiprocessor"),
        max_smem_per_block: get("sharedMemPerBlock"),
        max_smem_per_block_optin: get("sharedMemPerBlockOptin"),
    })
}

impl Builder {
    /// A member of the root object other than the events.
    fn member(&mut self, key: &str, v: Value) {
        match key {
            "deviceProperties" => {
                if let Some(a) = v.as_array() {
                    self.devices.extend(a.iter().filter_map(device_props));
                }
            }
            "baseTimeNanoseconds" => self.base_ns = num_i64(Some(&v)),
            "distributedInfo" if v.is_object() => {
                let text = |k: &str| match v.get(k) {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Null) | None => None,
                    Some(x) => Some(x.to_string()),
                };
                self.dist = Some(DistInfo {
                    rank: num_i64(v.get("rank")),
                    world_size: num_i64(v.get("world_size")),
                    backend: text("backend"),
                    pg_config: text("pg_config"),
                });
            }
            _ => {}
        }
    }
}

/// Root members whose values the reader keeps.
const KEPT_MEMBERS: [&str; 3] = ["deviceProperties", "baseTimeNanoseconds", "distributedInfo"];

/// One element of `traceEvents`: an object becomes a [`RawEvent`] (its
/// fields kept as raw JSON), anything else is `None`.
struct EventSeed;

impl<'de> DeserializeSeed<'de> for EventSeed {
    type Value = Option<RawEvent<'de>>;
    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EventSeed {
    type Value = Option<RawEvent<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace event")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut ev = RawEvent::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let slot = match key.as_ref() {
                "ph" => &mut ev.ph,
                "cat" => &mut ev.cat,
                "name" => &mut ev.name,
                "pid" => &mut ev.pid,
                "tid" => &mut ev.tid,
                "ts" => &mut ev.ts,
                "dur" => &mut ev.dur,
                "args" => &mut ev.args,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value::<&'de RawValue>()?.get());
        }
        Ok(Some(ev))
    }

    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }
}

/// Read a Kineto trace (gzip or plain JSON) with the default options.
pub fn read(path: &Path, gzip: bool) -> Result<Trace> {
    read_with(path, gzip, ReadOptions::default())
}

/// Read a Kineto trace (gzip or plain JSON), keeping what `opts` asks for.
pub fn read_with(path: &Path, gzip: bool, opts: ReadOptions) -> Result<Trace> {
    let file = std::fs::File::open(path).map_err(|e| Error::Io {
        path: path.to_owned(),
        source: e,
    })?;
    if gzip {
        // every member, as zcat reads `cat a.gz b.gz` and bgzip files
        let reader = super::limits::JsonStringCap::new(flate2::read::MultiGzDecoder::new(file));
        read_from(path, reader, opts)
    } else {
        read_from(path, super::limits::JsonStringCap::new(file), opts)
    }
}

/// What the splitting thread hands to the building thread, in input order.
enum Parsed {
    /// An events array begins (the trace has events, maybe none).
    EventsStart,
    /// Consecutive events' text and their fields' places in it; `None`
    /// for an element that is not an object.
    Events(Batch, Vec<Option<Spans>>),
    /// A root member the reader keeps.
    Member(String, Value),
}

/// Read in two stages on two threads: one splits the text into events
/// (`kineto_split`) and parses each from its slice; this one builds the
/// trace from them in order. Memory holds a few batches of text, not the
/// document.
fn read_from(path: &Path, reader: impl Read + Send, opts: ReadOptions) -> Result<Trace> {
    let mut b = Builder {
        strings: StrPool::new(),
        names: HashMap::default(),
        kernels: Vec::new(),
        memops: Vec::new(),
        calls: HashMap::default(),
        ranges: Vec::new(),
        range_meta: RangeMetas::default(),
        devices: Vec::new(),
        stats: ReadStats::default(),
        counts: Counts::default(),
        base_ns: None,
        opts,
        api_calls: Vec::new(),
        mem_events: Vec::new(),
        syncs: Vec::new(),
        dist: None,
        min_ts: None,
    };
    let found = std::thread::scope(|scope| -> Result<bool> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Parsed>>(4);
        scope.spawn(move || {
            let outcome = split::split(reader, |piece| match parse_piece(path, piece) {
                Ok(Some(p)) => tx.send(Ok(p)).is_ok(),
                Ok(None) => true,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    false
                }
            });
            if let Err(e) = outcome {
                let _ = tx.send(Err(split_error(path, e)));
            }
        });
        let mut found = false;
        for item in rx {
            match item? {
                Parsed::EventsStart => found = true,
                Parsed::Events(batch, events) => {
                    for ev in events {
                        match ev {
                            Some(spans) => b.event(RawEvent::at(&batch, &spans)),
                            None => b.counts.skipped_bad_type += 1,
                        }
                    }
                }
                Parsed::Member(key, value) => b.member(&key, value),
            }
        }
        Ok(found)
    })?;
    if !found {
        return Err(Error::UnknownFormat {
            path: path.to_owned(),
        });
    }
    finish(path, b)
}

/// Parse one piece of the split text (on the splitting thread).
fn parse_piece(path: &Path, piece: split::Piece) -> Result<Option<Parsed>> {
    match piece {
        split::Piece::EventsStart => Ok(Some(Parsed::EventsStart)),
        split::Piece::Events { bytes, ends } => {
            // checked as a whole once, so that neither the parser below nor
            // the building thread checks each field again
            let batch = match String::from_utf8(bytes) {
                Ok(text) => Batch::Text(text),
                Err(e) => Batch::Bytes(e.into_bytes()),
            };
            let mut out = Vec::with_capacity(ends.len());
            let mut from = 0;
            for (end, at) in ends {
                let ev = match &batch {
                    // an event ends with an ASCII `}`: a character boundary
                    Batch::Text(t) => t.get(from..end).map(|text| {
                        let mut de = serde_json::Deserializer::from_str(text);
                        EventSeed
                            .deserialize(&mut de)
                            .and_then(|ev| de.end().map(|()| ev))
                            .map(|ev| ev.map(|ev| ev.spans(t.as_bytes())))
                    }),
                    Batch::Bytes(v) => v.get(from..end).map(|text| {
                        let mut de = serde_json::Deserializer::from_slice(text);
                        EventSeed
                            .deserialize(&mut de)
                            .and_then(|ev| de.end().map(|()| ev))
                            .map(|ev| ev.map(|ev| ev.spans(v)))
                    }),
                };
                from = end;
                let Some(ev) = ev else {
                    return Err(Error::Kineto {
                        path: path.to_owned(),
                        detail: format!("an event at line {} column {} was cut", at.line, at.col),
                    });
                };
                out.push(ev.map_err(|e| piece_error(path, at, &e))?);
            }
            Ok(Some(Parsed::Events(batch, out)))
        }
        split::Piece::Member { key, value, at } => {
            let key: String =
                serde_json::from_slice(&key).map_err(|e| piece_error(path, at, &e))?;
            if key == "traceEvents" {
                return Err(Error::Kineto {
                    path: path.to_owned(),
                    detail: format!(
                        "not a valid Kineto trace: traceEvents is not an array (line {} column {})",
                        at.line, at.col
                    ),
                });
            }
            let kept = KEPT_MEMBERS.contains(&key.as_str());
            if value.is_empty() {
                // longer than the splitter keeps
                return if kept {
                    Err(Error::Kineto {
                        path: path.to_owned(),
                        detail: format!(
                            "`{key}` is longer than {} MiB (rprof's limit)",
                            split::MAX_MEMBER_BYTES >> 20
                        ),
                    })
                } else {
                    Ok(None)
                };
            }
            if kept {
                let v: Value =
                    serde_json::from_slice(&value).map_err(|e| piece_error(path, at, &e))?;
                Ok(Some(Parsed::Member(key, v)))
            } else {
                // checked, not kept
                serde_json::from_slice::<IgnoredAny>(&value)
                    .map_err(|e| piece_error(path, at, &e))?;
                Ok(None)
            }
        }
    }
}

/// A JSON error inside a piece that starts at `at`, with its position in
/// the whole input.
fn piece_error(path: &Path, at: split::Pos, e: &serde_json::Error) -> Error {
    let abs = at.offset(split::Pos {
        line: e.line() as u64,
        col: e.column() as u64,
    });
    let text = e.to_string();
    if text.starts_with("invalid unicode code point") {
        // worded as the record reader words it
        return Error::Kineto {
            path: format!("{}:{}:{}", path.display(), abs.line, abs.col).into(),
            detail: "not UTF-8 text (or an invalid \\u escape)".into(),
        };
    }
    // serde's own position is relative to the piece
    let msg = match text.rfind(" at line ") {
        Some(i) => &text[..i],
        None => &text,
    };
    Error::Kineto {
        path: path.to_owned(),
        detail: format!(
            "not a valid Kineto trace: {msg} at line {} column {}",
            abs.line, abs.col
        ),
    }
}

fn split_error(path: &Path, e: split::SplitError) -> Error {
    let detail = match e {
        split::SplitError::Truncated => {
            "truncated JSON (the file ends in the middle of the trace)".to_owned()
        }
        split::SplitError::Io(e) => format!("cannot decompress or read: {e}"),
        split::SplitError::Syntax { what, at } => format!(
            "not a valid Kineto trace: {what} at line {} column {}",
            at.line, at.col
        ),
    };
    Error::Kineto {
        path: path.to_owned(),
        detail,
    }
}

fn finish(path: &Path, b: Builder) -> Result<Trace> {
    let Builder {
        strings,
        mut kernels,
        mut memops,
        calls,
        ranges,
        range_meta,
        devices,
        mut stats,
        counts,
        base_ns,
        opts,
        mut api_calls,
        mut mem_events,
        mut syncs,
        dist,
        min_ts,
        ..
    } = b;
    // launches referenced by kernels and memory operations, in kernel order
    let mut launches = Vec::new();
    let mut index: HashMap<i64, u32> = HashMap::default();
    let mut link = |corr: i64| -> Option<u32> {
        if let Some(&i) = index.get(&corr) {
            return Some(i);
        }
        let l = calls.get(&corr)?;
        let i = launches.len() as u32;
        launches.push(l.clone());
        index.insert(corr, i);
        Some(i)
    };
    for k in &mut kernels {
        k.launch = OptU32::saturating(link(k.correlation));
    }
    for m in &mut memops {
        m.launch = link(m.correlation);
    }
    stats.without_launch = kernels.iter().filter(|k| k.launch.get().is_none()).count() as u64;
    for m in &mut memops {
        m.pid = m
            .launch
            .and_then(|i| launches.get(i as usize))
            .map(|l| crate::model::ThreadId::of(crate::model::Source::Kineto, l.thread).pid);
    }
    let threads: HashSet<u64> = launches.iter().map(|l| l.thread).collect();
    let ranges: Vec<Range> = ranges
        .into_iter()
        .filter(|r| opts.all_ranges || threads.contains(&r.thread))
        .collect();
    api_calls.sort_by_key(|c| (c.start_ns, c.thread, c.correlation));
    mem_events.sort_by_key(|e| e.ts_ns);
    syncs.sort_by_key(|e| e.start_ns);
    stats.api_calls = api_calls.len() as u64;
    stats.mem_events = mem_events.len() as u64;
    let mut missing = Vec::new();
    if opts.mem_events && mem_events.is_empty() {
        missing.push(
            "memory events: none in the trace (torch.profiler.profile(profile_memory=True) records them)"
                .to_owned(),
        );
    }
    // Newer traces give `ts` relative to `baseTimeNanoseconds`; older ones
    // write absolute epoch microseconds (anything after 2001 in ns).
    let clock = match base_ns {
        Some(b) => Some(ClockOrigin {
            epoch_ns: b,
            method: "PyTorch profiler baseTimeNanoseconds",
        }),
        None if min_ts.is_some_and(|t| t > 1_000_000_000_000_000_000) => Some(ClockOrigin {
            epoch_ns: 0,
            method: "absolute timestamps (PyTorch profiler)",
        }),
        None => None,
    };
    stats.ranges = ranges.len() as u64;
    stats.ranges_skipped = counts.skipped_bad_type;
    let mut notes = Vec::new();
    if counts.skipped_bad_type > 0 {
        notes.push(format!(
            "{} trace events with missing or mistyped fields were skipped",
            counts.skipped_bad_type
        ));
    }
    if counts.bad_ph_cat > 0 {
        notes.push(format!(
            "{} trace events with a missing or mistyped \"ph\" or \"cat\" were skipped (kernels among them are not counted above)",
            counts.bad_ph_cat
        ));
    }
    if counts.kernel_not_x > 0 {
        notes.push(format!(
            "{} kernel events that are not complete (\"ph\": \"X\") events were skipped",
            counts.kernel_not_x
        ));
    }
    let mut trace = Trace::empty(path.to_owned(), Source::Kineto);
    trace.producer = Some("PyTorch profiler (Kineto) trace".into());
    trace.strings = strings;
    trace.kernels = kernels;
    trace.launches = launches;
    trace.api_calls = api_calls;
    trace.ranges = ranges;
    trace.range_meta = range_meta;
    trace.memops = memops;
    trace.devices = devices;
    trace.mem_events = mem_events;
    trace.syncs = syncs;
    trace.clock = clock;
    trace.dist = dist;
    trace.missing = missing;
    trace.stats = stats;
    trace.notes = notes;
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_to_nanoseconds_exactly() {
        assert_eq!(
            micros_to_ns("1683564902133354"),
            Some(1_683_564_902_133_354_000)
        );
        assert_eq!(
            micros_to_ns("2413669097444.592"),
            Some(2_413_669_097_444_592)
        );
        assert_eq!(micros_to_ns("1.76"), Some(1760));
        assert_eq!(micros_to_ns("0.0005"), Some(1));
        assert_eq!(micros_to_ns("0.0004"), Some(0));
        assert_eq!(micros_to_ns("1.5e3"), Some(1_500_000));
        assert_eq!(micros_to_ns("-2.5"), Some(-2500));
        assert_eq!(micros_to_ns("\"12\""), Some(12000));
        assert_eq!(micros_to_ns("abc"), None);
        assert_eq!(micros_to_ns(""), None);
        assert_eq!(micros_to_ns("99999999999999999999"), None);
    }

    fn trace(json: &str) -> Result<Trace> {
        read_from(Path::new("t.json"), json.as_bytes(), ReadOptions::default())
    }

    #[test]
    fn maps_events_and_joins() {
        let t = trace(
            r#"{"deviceProperties":[{"id":0,"name":"NVIDIA A100","numSms":108,"warpSize":32,"maxThreadsPerMultiprocessor":2048}],
            "traceEvents":[
              {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":10,"dur":100,
               "args":{"Input Dims":[[4,8],[8,16]],"Input type":["float","float"],"Sequence number":7,"Module Hierarchy":"top(Net)::fc(Linear)","Call stack":"a.py(1): f"}},
              {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":20.5,"dur":5,"args":{"correlation":9,"External id":3}},
              {"ph":"X","cat":"kernel","name":"sgemm","pid":0,"tid":7,"ts":200.001,"dur":3.5,
               "args":{"device":0,"stream":7,"correlation":9,"grid":[2,1,1],"block":[128,1,1],"registers per thread":32,"shared memory":1024,"blocks per SM":0.0185,"warps per SM":"inf","est. achieved occupancy %":1}},
              {"ph":"X","cat":"kernel","name":"orphan","pid":0,"tid":7,"ts":300,"dur":1,"args":{"correlation":99}},
              {"ph":"X","cat":"kernel","name":5,"pid":0,"tid":7,"ts":400,"dur":1,"args":{}},
              {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":1,"dur":1,"args":{"bytes":64,"correlation":9}},
              {"ph":"M","name":"process_name","pid":1,"args":{"name":"python"}},
              7
            ]}"#,
        )
        .unwrap();
        assert_eq!(t.kernels.len(), 2);
        assert_eq!(t.stats.kernel_rows, 3);
        assert_eq!(t.stats.skipped_null, 1);
        let k = &t.kernels[0];
        assert_eq!((k.start_ns, k.end_ns), (200_001, 203_501));
        assert_eq!(k.grid, [2, 1, 1]);
        assert_eq!(k.kineto().unwrap().occupancy_pct, Some(1.0));
        assert_eq!(k.kineto().unwrap().warps_per_sm, Some(f64::INFINITY));
        let l = &t.launches[k.launch.get().unwrap() as usize];
        let id = t.thread_id(l.thread);
        assert_eq!((l.start_ns, id.pid, id.tid), (20_500, 1, 2));
        assert_eq!(t.strings.get(l.api.unwrap()), "cudaLaunchKernel");
        assert!(t.kernels[1].launch.get().is_none());
        assert_eq!(t.stats.without_launch, 1);
        assert_eq!(t.memops.len(), 1);
        assert_eq!(t.ranges.len(), 1);
        assert_eq!(
            t.strings.get(t.ranges[0].text),
            "aten::mm, seq = 7, sizes = [[4, 8], [8, 16]], dtypes = ['float', 'float']"
        );
        let meta = t.range_meta.get(&t.ranges[0].text).unwrap();
        assert_eq!(t.strings.get(meta.module.unwrap()), "top(Net)::fc(Linear)");
        assert_eq!(t.devices[0].max_warps_per_sm, Some(64));
    }

    /// An operator's fields are kept typed beside its text: a tensor list
    /// expanded in place (its type repeated), a type name with a quote
    /// spelled as the text spells it, no sizes when the profiler gave
    /// none; and the text reads back to the same marker.
    #[test]
    fn operator_fields_are_typed_and_read_back_from_the_text_alike() {
        let t = trace(
            r#"[{"ph":"X","cat":"cpu_op","name":"aten::cat, seq = 5","pid":1,"tid":2,"ts":10,"dur":100,
                 "args":{"Input Dims":[[[2,3],[4,3]],[],[-1]],"Input type":["TensorList","Sca'lar[]","long int"],"Sequence number":-3,"External id":41}},
                {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":2,"ts":0,"dur":200,"args":{}},
                {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":20,"dur":5,"args":{"correlation":9}},
                {"ph":"X","cat":"kernel","name":"cat_kernel","pid":0,"tid":7,"ts":200,"dur":3,"args":{"device":0,"stream":7,"correlation":9}}]"#,
        )
        .unwrap();
        assert_eq!(t.ranges.len(), 2);
        let by_name = |n: &str| {
            t.ranges
                .iter()
                .find(|r| t.range_name(r) == n)
                .map(|r| r.text)
                .unwrap()
        };
        let cat = by_name("aten::cat, seq = 5");
        let op = t.range_meta.get(&cat).unwrap().op.as_ref().unwrap();
        assert_eq!((op.seq(), op.op_id()), (Some(-3), Some(41)));
        assert_eq!(
            op.sizes(),
            Some(vec![vec![2, 3], vec![4, 3], vec![], vec![-1]])
        );
        let dtypes: Vec<&str> = op.dtypes().unwrap().map(|d| t.strings.get(d)).collect();
        assert_eq!(dtypes, ["TensorList", "TensorList", "Scalar", "long int"]);
        let m = t.op_marker(cat).unwrap();
        assert_eq!(m.name, "aten::cat, seq = 5");
        assert_eq!((m.seq, m.op_id, m.malformed), (Some(-3), Some(41), false));
        assert_eq!(m.dtypes.as_deref(), Some(&dtypes[..]));
        let text = t.strings.get(cat);
        assert_eq!(stock::parse_split(text, "aten::cat, seq = 5".len()), m);

        let step = by_name("ProfilerStep#2");
        let m = t.op_marker(step).unwrap();
        assert_eq!(m.name, "ProfilerStep#2");
        assert_eq!(
            (m.seq, m.op_id, &m.sizes, &m.dtypes),
            (None, None, &None, &None)
        );
        assert_eq!(stock::parse(t.strings.get(step)), m);
    }

    #[test]
    fn old_spellings_and_arrays() {
        let t = trace(
            r#"[{"ph":"X","cat":"Operator","name":"aten::add","pid":1,"tid":1,"ts":0,"dur":50,"args":{}},
                {"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":2,"args":{"correlation":4,"external id":2}},
                {"ph":"X","cat":"Kernel","name":"add_kernel","pid":0,"tid":"stream 7","ts":100,"dur":2,"args":{"correlation":4}}]"#,
        )
        .unwrap();
        assert_eq!(t.kernels.len(), 1);
        assert!(t.kernels[0].launch.get().is_some());
        assert_eq!(t.ranges.len(), 1);
    }

    #[test]
    fn truncated_and_wrong_documents_are_errors() {
        let e = trace(r#"{"traceEvents":[{"ph":"X","cat":"kernel""#).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        let e = trace(r#"{"other":1}"#).unwrap_err();
        assert!(e.to_string().contains("not an Nsight Systems"), "{e}");
        let e = trace(r#"{"traceEvents":[} "#).unwrap_err();
        assert!(e.to_string().contains("not a valid Kineto trace"), "{e}");
    }
}
