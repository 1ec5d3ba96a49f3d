//! PyTorch profiler (Kineto) chrome traces: `*.pt.trace.json`, gzipped or
//! not (trace-formats.md §5).
//!
//! The JSON is streamed: the `traceEvents` array is visited one event at a
//! time and only what the trace model keeps is stored, so memory stays well
//! under the decompressed size. Each event's top-level fields are captured
//! raw and interpreted leniently: an event with a field of the wrong type is
//! skipped and counted, never fatal. Times are decimal microseconds and are
//! converted to integer nanoseconds from their text, without floating-point
//! drift.
//!
//! Mapping: `kernel` events → kernels; `gpu_memcpy`/`gpu_memset` → memory
//! operations; `cuda_runtime`/`cuda_driver` → launch calls (joined on
//! `correlation`); `cpu_op` and `user_annotation` → ranges, whose text is
//! written in the PyTorch marker grammar (`name, seq = N, sizes = [...],
//! dtypes = [...]`) so the same attribution and op models apply. The 2021
//! spellings (`Kernel`, `Runtime`, `Operator`, `Memcpy`, `Memset`, `external
//! id`) are accepted too.

use crate::{FastMap as HashMap, FastSet as HashSet};
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{Error, Result};
use crate::model::{
    ApiCall, ApiKind, CommArgs, CopyKind, DeviceInfo, Kernel, KinetoKernel, Launch, MemDevice,
    MemEvent, MemKind, MemOp, MemoryKind, Range, RangeKind, RangeMeta, ReadStats, Source,
    SyncEvent, SyncKind, Trace, narrow,
};
use crate::model::{StrPool, StrRef};
use crate::read::ReadOptions;
use crate::stock;
use rprof_model::{ClockOrigin, DistInfo};

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

/// The fields of one event that rprof looks at, as raw JSON text.
#[derive(Default)]
struct RawEvent {
    ph: Option<Box<RawValue>>,
    cat: Option<Box<RawValue>>,
    name: Option<Box<RawValue>>,
    pid: Option<Box<RawValue>>,
    tid: Option<Box<RawValue>>,
    ts: Option<Box<RawValue>>,
    dur: Option<Box<RawValue>>,
    args: Option<Box<RawValue>>,
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

fn raw_str(v: &Option<Box<RawValue>>) -> Option<String> {
    serde_json::from_str::<String>(v.as_ref()?.get()).ok()
}

/// pid/tid: an integer, or a string holding one, or any string (hashed).
fn raw_id(v: &Option<Box<RawValue>>) -> Option<u64> {
    let raw = v.as_ref()?.get();
    if let Ok(n) = serde_json::from_str::<i64>(raw) {
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

fn num_i64(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn num_f64(v: Option<&Value>) -> Option<f64> {
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
    range_meta: HashMap<StrRef, RangeMeta>,
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
fn comm_args(b: &mut Builder, args: &Value) -> Option<Box<CommArgs>> {
    let name = args.get("Collective name").and_then(Value::as_str);
    let in_n = num_i64(args.get("In msg nelems"));
    let out_n = num_i64(args.get("Out msg nelems"));
    if name.is_none() && in_n.is_none() && out_n.is_none() {
        return None;
    }
    let text = |b: &mut Builder, k: &str| -> Option<crate::model::StrRef> {
        match args.get(k)? {
            Value::String(s) => Some(b.intern(s)),
            Value::Null => None,
            v => Some(b.intern(&v.to_string())),
        }
    };
    Some(Box::new(CommArgs {
        collective: name.map(|n| b.intern(n)),
        in_nelems: in_n,
        out_nelems: out_n,
        group_size: num_i64(args.get("Group size")),
        dtype: text(b, "dtype"),
        pg_name: text(b, "Process Group Name"),
        pg_ranks: text(b, "Process Group Ranks"),
    }))
}

impl Builder {
    /// A `[memory]` instant event (`profile_memory=True`).
    fn memory_event(&mut self, ev: &RawEvent) {
        let args: Value = match &ev.args {
            Some(a) => serde_json::from_str(a.get()).unwrap_or(Value::Null),
            None => Value::Null,
        };
        let ts = ev.ts.as_ref().and_then(|t| micros_to_ns(t.get()));
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

    fn event(&mut self, ev: RawEvent) {
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
            if matches!(cat.as_str(), "kernel" | "Kernel") {
                self.counts.kernel_not_x += 1;
            }
            return;
        }
        let kind = match cat.as_str() {
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
            ev.ts.as_ref().and_then(|t| micros_to_ns(t.get())),
            ev.dur.as_ref().and_then(|t| micros_to_ns(t.get())),
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
        let args: Value = match &ev.args {
            Some(a) => serde_json::from_str(a.get()).unwrap_or(Value::Null),
            None => Value::Null,
        };
        let arg = |k: &str| args.get(k);
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
                    blocks_per_sm: num_f64(arg("blocks per SM")),
                    warps_per_sm: num_f64(arg("warps per SM")),
                    occupancy_pct: num_f64(arg("est. achieved occupancy %")),
                    comm: comm_args(self, &args),
                };
                let has_stats = stats != KinetoKernel::default();
                self.kernels.push(Kernel {
                    row: self.kernels.len() as u32,
                    start_ns: start,
                    end_ns: end,
                    device: num_i64(arg("device")).unwrap_or(0),
                    context: narrow(num_i64(arg("context"))),
                    stream: num_i64(arg("stream")).unwrap_or(0),
                    correlation: num_i64(arg("correlation")).unwrap_or(-1),
                    global_pid: None,
                    name,
                    mangled: None,
                    grid: dims3(arg("grid"))
                        .unwrap_or([0, 0, 0])
                        .map(|d| narrow(Some(d)).unwrap_or(0)),
                    block: dims3(arg("block"))
                        .unwrap_or([0, 0, 0])
                        .map(|d| narrow(Some(d)).unwrap_or(0)),
                    registers_per_thread: narrow(num_i64(arg("registers per thread"))),
                    // Kineto reports static + dynamic shared memory together
                    static_smem_bytes: narrow(num_i64(arg("shared memory"))),
                    dynamic_smem_bytes: None,
                    graph_id: narrow(num_i64(arg("graph id"))),
                    graph_node_id: num_i64(arg("graph node id")),
                    launch: None,
                    kineto: has_stats.then(|| Box::new(stats)),
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
                    device: num_i64(arg("device")).unwrap_or(0),
                    stream: num_i64(arg("stream")).unwrap_or(0),
                    correlation: num_i64(arg("correlation")).unwrap_or(-1),
                    bytes: num_i64(arg("bytes")),
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
                let kind = match arg("cuda_sync_kind").and_then(Value::as_str) {
                    Some("Event Sync") => SyncKind::Event,
                    Some("Stream Wait Event") => SyncKind::StreamWaitEvent,
                    Some("Stream Sync") => SyncKind::Stream,
                    Some("Context Sync") => SyncKind::Context,
                    _ => match name.as_str() {
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
                    device: num_i64(arg("device")),
                    stream: num_i64(arg("stream")),
                    correlation: num_i64(arg("correlation")),
                    pid: None,
                    kind,
                });
            }
            Kind::Call => {
                let Some(corr) = num_i64(arg("correlation")) else {
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
                    pid: pid & 0xFFFF_FFFF,
                    tid: tid & 0xFFFF_FFFF,
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
                let seq = num_i64(arg("Sequence number"));
                let (sizes, dtypes) = inputs(arg("Input Dims"), arg("Input type"));
                // the profiler's External id plays the part of NVTX's op_id:
                // one per operator call, shared by the kernels it launches
                let op_id = num_i64(arg("External id")).or_else(|| num_i64(arg("external id")));
                let text =
                    stock::format_marker(&name, seq, op_id, sizes.as_deref(), dtypes.as_deref());
                let text = self.strings.push(&text);
                let module = arg("Module Hierarchy")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(|s| s.to_owned());
                let call_stack = arg("Call stack")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(|s| s.to_owned());
                let m = RangeMeta {
                    module: module.map(|s| self.intern(&s)),
                    call_stack: call_stack.map(|s| self.intern(&s)),
                    name: Some(self.intern(&name)),
                    kind: range_kind,
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

/// `Input Dims` and `Input type` as marker fields. Tensor lists (a list of
/// shapes in one slot) are expanded in place, as PyTorch 2.x's NVTX
/// observer does.
fn inputs(
    dims: Option<&Value>,
    types: Option<&Value>,
) -> (Option<Vec<Vec<i64>>>, Option<Vec<String>>) {
    let types: Option<Vec<String>> = types.and_then(Value::as_array).map(|a| {
        a.iter()
            .map(|t| t.as_str().unwrap_or("").to_owned())
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

/// Root object: visit `traceEvents` element by element.
struct Root<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for Root<'_> {
    type Value = bool;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Root<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kineto trace: an object with traceEvents, or an array of events")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<bool, A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "traceEvents" => {
                    map.next_value_seed(Events(&mut *self.0))?;
                    found = true;
                }
                "deviceProperties" => {
                    let v: Value = map.next_value()?;
                    if let Some(a) = v.as_array() {
                        self.0.devices.extend(a.iter().filter_map(device_props));
                    }
                }
                "baseTimeNanoseconds" => {
                    let v: Value = map.next_value()?;
                    self.0.base_ns = num_i64(Some(&v));
                }
                "distributedInfo" => {
                    let v: Value = map.next_value()?;
                    if v.is_object() {
                        let text = |k: &str| match v.get(k) {
                            Some(Value::String(s)) => Some(s.clone()),
                            Some(Value::Null) | None => None,
                            Some(x) => Some(x.to_string()),
                        };
                        self.0.dist = Some(DistInfo {
                            rank: num_i64(v.get("rank")),
                            world_size: num_i64(v.get("world_size")),
                            backend: text("backend"),
                            pg_config: text("pg_config"),
                        });
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<bool, A::Error> {
        Events(self.0).visit_seq(seq)?;
        Ok(true)
    }
}

struct Events<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        while let Some(item) = seq.next_element_seed(EventSeed)? {
            match item {
                Some(ev) => self.0.event(ev),
                None => self.0.counts.skipped_bad_type += 1,
            }
        }
        Ok(())
    }
}

/// One element of `traceEvents`: an object becomes a [`RawEvent`] (its
/// fields kept as raw JSON), anything else is `None`.
struct EventSeed;

impl<'de> DeserializeSeed<'de> for EventSeed {
    type Value = Option<RawEvent>;
    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EventSeed {
    type Value = Option<RawEvent>;
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
            *slot = Some(map.next_value::<Box<RawValue>>()?);
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
    let reader: Box<dyn BufRead> = if gzip {
        Box::new(BufReader::with_capacity(
            1 << 16,
            // every member, as zcat reads `cat a.gz b.gz` and bgzip files
            super::limits::JsonStringCap::new(flate2::read::MultiGzDecoder::new(file)),
        ))
    } else {
        Box::new(BufReader::with_capacity(
            1 << 16,
            super::limits::JsonStringCap::new(file),
        ))
    };
    read_from(path, reader, opts)
}

fn read_from(path: &Path, reader: impl Read, opts: ReadOptions) -> Result<Trace> {
    let mut b = Builder {
        strings: StrPool::new(),
        names: HashMap::default(),
        kernels: Vec::new(),
        memops: Vec::new(),
        calls: HashMap::default(),
        ranges: Vec::new(),
        range_meta: HashMap::default(),
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
    let mut de = serde_json::Deserializer::from_reader(reader);
    let found = Root(&mut b)
        .deserialize(&mut de)
        .map_err(|e| json_error(path, &e))?;
    de.end().map_err(|e| json_error(path, &e))?;
    if !found {
        return Err(Error::UnknownFormat {
            path: path.to_owned(),
        });
    }
    finish(path, b)
}

fn json_error(path: &Path, e: &serde_json::Error) -> Error {
    let what = if e.is_eof() {
        "truncated JSON (the file ends in the middle of the trace)".to_owned()
    } else if let Some(io) = io_cause(e) {
        format!("cannot decompress or read: {io}")
    } else if e.to_string().starts_with("invalid unicode code point") {
        // worded as the record reader words it
        return Error::Kineto {
            path: format!("{}:{}:{}", path.display(), e.line(), e.column()).into(),
            detail: "not UTF-8 text (or an invalid \\u escape)".into(),
        };
    } else {
        format!("not a valid Kineto trace: {e}")
    };
    Error::Kineto {
        path: path.to_owned(),
        detail: what,
    }
}

fn io_cause(e: &serde_json::Error) -> Option<String> {
    e.is_io().then(|| e.to_string())
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
        k.launch = link(k.correlation);
    }
    for m in &mut memops {
        m.launch = link(m.correlation);
    }
    stats.without_launch = kernels.iter().filter(|k| k.launch.is_none()).count() as u64;
    for m in &mut memops {
        m.pid = m
            .launch
            .and_then(|i| launches.get(i as usize))
            .map(|l| l.pid);
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
        assert_eq!(k.kineto.as_ref().unwrap().occupancy_pct, Some(1.0));
        assert_eq!(k.kineto.as_ref().unwrap().warps_per_sm, Some(f64::INFINITY));
        let l = &t.launches[k.launch.unwrap() as usize];
        assert_eq!((l.start_ns, l.pid, l.tid), (20_500, 1, 2));
        assert_eq!(t.strings.get(l.api.unwrap()), "cudaLaunchKernel");
        assert!(t.kernels[1].launch.is_none());
        assert_eq!(t.stats.without_launch, 1);
        assert_eq!(t.memops.len(), 1);
        assert_eq!(t.ranges.len(), 1);
        assert_eq!(
            t.strings.get(t.ranges[0].text),
            "aten::mm, seq = 7, sizes = [[4, 8], [8, 16]], dtypes = ['float', 'float']"
        );
        let meta = &t.range_meta[&t.ranges[0].text];
        assert_eq!(t.strings.get(meta.module.unwrap()), "top(Net)::fc(Linear)");
        assert_eq!(t.devices[0].max_warps_per_sm, Some(64));
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
        assert!(t.kernels[0].launch.is_some());
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
