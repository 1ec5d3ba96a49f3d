//! The per-kernel record that `rprof parse` writes and `rprof prof` reads.
//!
//! Two line formats:
//! - **JSON Lines** (default, schema version [`DICT_VERSION`], described in
//!   `docs/records.md`): one JSON object per kernel and nothing else, every
//!   line with the same keys (`null` when unknown): PyProf's keys, in
//!   PyProf's order, followed by rprof's own (times, launch, registers, the
//!   full NVTX stack, the GPU's name, SM count and compute capability, …).
//!   What the profile says about itself (source, producer, the device
//!   table) goes to a sidecar file `FILE.meta.json` ([`Header`],
//!   [`sidecar_path`]) when the records go to a file. Version 1 files began
//!   with that header as their first line; they are still read. Unknown keys
//!   are ignored when reading, so newer files stay readable by older tools
//!   within a version.
//! - **pydict** (`--format pydict`): PyProf's own lines, the Python `repr()`
//!   of a dict with exactly PyProf's keys, for scripts written for PyProf.
//!
//! [`read_line`] tells the two apart by their first characters and never
//! evaluates anything: pydict lines go through [`crate::pylit`].

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::pylit::{self, Value};

/// Version of the JSON Lines format written by this crate (1: a header line
/// first; 2: records only, the header in a sidecar file, every key on every
/// line).
pub const DICT_VERSION: u32 = 2;

/// Minor version of the JSON Lines format: keys added within
/// [`DICT_VERSION`] that older readers ignore (1: `stackRuns`, `stackCut`,
/// `stackCutBytes`).
pub const DICT_MINOR: u32 = 1;

/// The sidecar of a record file `path`: `path` + `.meta.json`.
pub fn sidecar_path(path: &std::path::Path) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".meta.json");
    std::path::PathBuf::from(s)
}

/// Read the sidecar of a record file, if there is one (`Ok(None)` when
/// absent). Errors name the sidecar and the problem.
pub fn read_sidecar(path: &std::path::Path) -> Result<Option<Header>, String> {
    let side = sidecar_path(path);
    let text = match std::fs::read(&side) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read ({e})", side.display())),
    };
    // a device table is a few hundred bytes per GPU
    if text.len() > 16 << 20 {
        return Err(format!("{}: larger than 16 MiB", side.display()));
    }
    let h: Header = serde_json::from_slice(&text)
        .map_err(|e| format!("{}: not an rprof sidecar ({e})", side.display()))?;
    if h.version > DICT_VERSION {
        return Err(format!(
            "{}: record format version {} is newer than this rprof reads ({DICT_VERSION}); re-run `rprof parse` or update rprof",
            side.display(),
            h.version
        ));
    }
    Ok(Some(h))
}

/// What a record file says about its profile: the first line of a version
/// 1 file, the sidecar `FILE.meta.json` of a version 2 file, and the
/// key-value metadata of a Parquet record file (as JSON under `rprof`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always `"dict"`.
    pub rprof: String,
    /// Format version ([`DICT_VERSION`]).
    pub version: u32,
    /// Minor version ([`DICT_MINOR`]; 0 when absent, as in files written
    /// before it existed).
    #[serde(default)]
    pub minor: u32,
    /// `nsys`, `nvprof` or `kineto`.
    pub source: String,
    /// Producer and schema version of the input, when the file said.
    #[serde(default)]
    pub producer: Option<String>,
    /// True when written with `--compat`.
    #[serde(default)]
    pub compat: bool,
    /// The GPUs the profile describes (limits for occupancy estimates).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<crate::trace::DeviceInfo>,
}

/// One GPU kernel.
///
/// The first 19 fields are PyProf's keys with PyProf's meaning
/// (pyprof-semantics.md §3.12); the rest are rprof's, absent (`None`) when
/// the input did not have them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Record<'a> {
    /// Short kernel name.
    #[serde(rename = "kShortName", borrow)]
    pub short_name: Cow<'a, str>,
    /// GPU time, ns.
    #[serde(rename = "kDuration")]
    pub duration_ns: i64,
    /// Layer names from `layer:` ranges, outermost first.
    #[serde(default, borrow, deserialize_with = "borrowed_strs")]
    pub layer: Vec<Cow<'a, str>>,
    /// Python call stack (`file:line`) of the innermost trace marker.
    #[serde(default, borrow, deserialize_with = "borrowed_strs")]
    pub trace: Vec<Cow<'a, str>>,
    /// Module repr markers (raw text).
    #[serde(
        rename = "reprMarkers",
        default,
        borrow,
        deserialize_with = "borrowed_strs"
    )]
    pub repr_markers: Vec<Cow<'a, str>>,
    /// PyProf argument markers (raw text), outermost first.
    #[serde(default, borrow, deserialize_with = "borrowed_strs")]
    pub marker: Vec<Cow<'a, str>>,
    /// PyTorch sequence markers after dedupe, sort and prune.
    #[serde(
        rename = "seqMarker",
        default,
        borrow,
        deserialize_with = "borrowed_strs"
    )]
    pub seq_marker: Vec<Cow<'a, str>>,
    /// Sequence id(s) of this kernel.
    #[serde(rename = "seqId", default)]
    pub seq_id: Vec<i64>,
    /// Index of this kernel among consecutive kernels of one op.
    #[serde(rename = "subSeqId", default)]
    pub sub_seq_id: i64,
    /// Other sequence ids of the enclosing markers.
    #[serde(rename = "altSeqId", default)]
    pub alt_seq_id: Vec<i64>,
    /// `fprop` or `bprop`.
    #[serde(borrow)]
    pub dir: Cow<'a, str>,
    /// Module names.
    #[serde(rename = "mod", default, borrow, deserialize_with = "borrowed_strs")]
    pub mod_: Vec<Cow<'a, str>>,
    /// Op names.
    #[serde(default, borrow, deserialize_with = "borrowed_strs")]
    pub op: Vec<Cow<'a, str>>,
    /// Launching thread id.
    #[serde(default)]
    pub tid: u64,
    /// CUDA device ordinal.
    #[serde(default)]
    pub device: i64,
    /// CUDA stream id.
    #[serde(default)]
    pub stream: i64,
    /// Grid dimensions.
    #[serde(default)]
    pub grid: [i64; 3],
    /// Block dimensions.
    #[serde(default)]
    pub block: [i64; 3],
    /// Long (demangled) kernel name.
    #[serde(rename = "kLongName", borrow)]
    pub long_name: Cow<'a, str>,

    /// GPU start, ns (file clock).
    #[serde(rename = "kStart", default)]
    pub start_ns: Option<i64>,
    /// GPU end, ns.
    #[serde(rename = "kEnd", default)]
    pub end_ns: Option<i64>,
    /// Launch call start, ns.
    #[serde(rename = "rStart", default)]
    pub launch_start_ns: Option<i64>,
    /// Launch call end, ns.
    #[serde(rename = "rEnd", default)]
    pub launch_end_ns: Option<i64>,
    /// False when no launch call was found (CUDA graphs, trimmed captures).
    #[serde(default = "yes")]
    pub launched: bool,
    /// Launch API (`cudaLaunchKernel`, `cuLaunchKernelEx`, …).
    #[serde(default, borrow)]
    pub api: Option<Cow<'a, str>>,
    /// Process id of the launching thread.
    #[serde(default)]
    pub pid: Option<u64>,
    /// CUPTI correlation id.
    #[serde(rename = "corrId", default)]
    pub correlation: Option<i64>,
    /// CUDA context id.
    #[serde(default)]
    pub context: Option<i64>,
    /// Registers per thread.
    #[serde(default)]
    pub regs: Option<i64>,
    /// Static shared memory per block, bytes.
    #[serde(rename = "smemStatic", default)]
    pub static_smem_bytes: Option<i64>,
    /// Dynamic shared memory per block, bytes.
    #[serde(rename = "smemDynamic", default)]
    pub dynamic_smem_bytes: Option<i64>,
    /// CUDA graph id.
    #[serde(rename = "graphId", default)]
    pub graph_id: Option<i64>,
    /// CUDA graph node id.
    #[serde(rename = "graphNodeId", default)]
    pub graph_node_id: Option<i64>,
    /// GPU name.
    #[serde(rename = "deviceName", default, borrow)]
    pub device_name: Option<Cow<'a, str>>,
    /// Number of SMs of the GPU.
    #[serde(rename = "smCount", default)]
    pub sm_count: Option<i64>,
    /// Compute capability of the GPU, major (with `ccMinor`, what the
    /// occupancy estimates need when the device table is not at hand).
    #[serde(rename = "ccMajor", default)]
    pub cc_major: Option<i64>,
    /// Compute capability, minor.
    #[serde(rename = "ccMinor", default)]
    pub cc_minor: Option<i64>,
    /// The NVTX ranges enclosing the launch, outermost first (raw text),
    /// except PyProf's own dict markers, which are in `marker`,
    /// `reprMarkers` and `trace`.
    #[serde(default, borrow, deserialize_with = "borrowed_strs")]
    pub stack: Vec<Cow<'a, str>>,
    /// NVTX domain name of each `stack` entry (`""` = default domain, `#N`
    /// = domain N whose name the export lacks); omitted when every range is
    /// in the default domain.
    #[serde(default, borrow, deserialize_with = "borrowed_strs")]
    pub domains: Vec<Cow<'a, str>>,
    /// Repeat count of each `stack` entry (`[]` when every count is 1):
    /// consecutive equal ranges written once (`--stack runs`). Readers
    /// expand them back ([`read_line`]), so a record read holds `[]`.
    #[serde(rename = "stackRuns", default)]
    pub stack_runs: Vec<i64>,
    /// Enclosing ranges `stack` leaves out (`--stack inner|none`, or beyond
    /// `--stack-bytes`).
    #[serde(rename = "stackCut", default)]
    pub stack_cut: i64,
    /// Bytes of range text `stack` leaves out (clipped tails included).
    #[serde(rename = "stackCutBytes", default)]
    pub stack_cut_bytes: i64,
    /// True when the kernel ended no later than it started (kept, duration 0).
    #[serde(rename = "badTime", default)]
    pub bad_time: bool,
    /// The PyTorch profiler's `blocks per SM` (Kineto input).
    #[serde(rename = "kinetoBlocksPerSm", default)]
    pub kineto_blocks_per_sm: Option<f64>,
    /// The PyTorch profiler's `warps per SM`.
    #[serde(rename = "kinetoWarpsPerSm", default)]
    pub kineto_warps_per_sm: Option<f64>,
    /// The PyTorch profiler's `est. achieved occupancy %`.
    #[serde(rename = "kinetoOccupancy", default)]
    pub kineto_occupancy_pct: Option<f64>,
}

/// A list of strings that borrows from the input where it can (strings
/// without escapes), as serde does for a plain `Cow<str>` field but not for
/// one inside a `Vec`: a record holds a dozen such strings, and allocating
/// each was a fifth of `rprof prof`'s time.
fn borrowed_strs<'de: 'a, 'a, D>(d: D) -> Result<Vec<Cow<'a, str>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    struct Strs<'a>(std::marker::PhantomData<&'a ()>);

    impl<'de: 'a, 'a> serde::de::Visitor<'de> for Strs<'a> {
        type Value = Vec<Cow<'a, str>>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list of strings")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            while let Some(BorrowedStr(s)) = seq.next_element()? {
                out.push(s);
            }
            Ok(out)
        }
    }

    d.deserialize_seq(Strs(std::marker::PhantomData))
}

/// One string of [`borrowed_strs`].
struct BorrowedStr<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for BorrowedStr<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);

        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = BorrowedStr<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Borrowed(v)))
            }

            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Owned(v.to_owned())))
            }

            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Owned(v)))
            }
        }

        d.deserialize_str(V(std::marker::PhantomData))
    }
}

fn yes() -> bool {
    true
}

impl Record<'_> {
    /// Copy every borrowed string so the record outlives its input line.
    pub fn into_owned(self) -> Record<'static> {
        fn own(c: Cow<'_, str>) -> Cow<'static, str> {
            Cow::Owned(c.into_owned())
        }
        fn own_v(v: Vec<Cow<'_, str>>) -> Vec<Cow<'static, str>> {
            v.into_iter().map(own).collect()
        }
        Record {
            short_name: own(self.short_name),
            duration_ns: self.duration_ns,
            layer: own_v(self.layer),
            trace: own_v(self.trace),
            repr_markers: own_v(self.repr_markers),
            marker: own_v(self.marker),
            seq_marker: own_v(self.seq_marker),
            seq_id: self.seq_id,
            sub_seq_id: self.sub_seq_id,
            alt_seq_id: self.alt_seq_id,
            dir: own(self.dir),
            mod_: own_v(self.mod_),
            op: own_v(self.op),
            tid: self.tid,
            device: self.device,
            stream: self.stream,
            grid: self.grid,
            block: self.block,
            long_name: own(self.long_name),
            start_ns: self.start_ns,
            end_ns: self.end_ns,
            launch_start_ns: self.launch_start_ns,
            launch_end_ns: self.launch_end_ns,
            launched: self.launched,
            api: self.api.map(own),
            pid: self.pid,
            correlation: self.correlation,
            context: self.context,
            regs: self.regs,
            static_smem_bytes: self.static_smem_bytes,
            dynamic_smem_bytes: self.dynamic_smem_bytes,
            graph_id: self.graph_id,
            graph_node_id: self.graph_node_id,
            device_name: self.device_name.map(own),
            sm_count: self.sm_count,
            cc_major: self.cc_major,
            cc_minor: self.cc_minor,
            stack: own_v(self.stack),
            domains: own_v(self.domains),
            stack_runs: self.stack_runs,
            stack_cut: self.stack_cut,
            stack_cut_bytes: self.stack_cut_bytes,
            bad_time: self.bad_time,
            kineto_blocks_per_sm: self.kineto_blocks_per_sm,
            kineto_warps_per_sm: self.kineto_warps_per_sm,
            kineto_occupancy_pct: self.kineto_occupancy_pct,
        }
    }

    /// Append this record as one JSON line (with `\n`).
    ///
    /// Hand-written because it is the hot loop of `rprof parse` (a million
    /// records are a gigabyte of JSON); it writes exactly what serde_json
    /// writes for this struct, which a test checks on random records.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let w = &mut JsonWriter { out };
        w.raw("{\"kShortName\":");
        w.str(&self.short_name);
        w.raw(",\"kDuration\":");
        w.int(self.duration_ns);
        w.key_strs("layer", &self.layer);
        w.key_strs("trace", &self.trace);
        w.key_strs("reprMarkers", &self.repr_markers);
        w.key_strs("marker", &self.marker);
        w.key_strs("seqMarker", &self.seq_marker);
        w.key_ints("seqId", &self.seq_id);
        w.raw(",\"subSeqId\":");
        w.int(self.sub_seq_id);
        w.key_ints("altSeqId", &self.alt_seq_id);
        w.raw(",\"dir\":");
        w.str(&self.dir);
        w.key_strs("mod", &self.mod_);
        w.key_strs("op", &self.op);
        w.raw(",\"tid\":");
        w.uint(self.tid);
        w.raw(",\"device\":");
        w.int(self.device);
        w.raw(",\"stream\":");
        w.int(self.stream);
        w.key_ints("grid", &self.grid);
        w.key_ints("block", &self.block);
        w.raw(",\"kLongName\":");
        w.str(&self.long_name);
        w.opt_int("kStart", self.start_ns);
        w.opt_int("kEnd", self.end_ns);
        w.opt_int("rStart", self.launch_start_ns);
        w.opt_int("rEnd", self.launch_end_ns);
        w.raw(if self.launched {
            ",\"launched\":true"
        } else {
            ",\"launched\":false"
        });
        w.raw(",\"api\":");
        match &self.api {
            Some(api) => w.str(api),
            None => w.raw("null"),
        }
        w.raw(",\"pid\":");
        match self.pid {
            Some(pid) => w.uint(pid),
            None => w.raw("null"),
        }
        w.opt_int("corrId", self.correlation);
        w.opt_int("context", self.context);
        w.opt_int("regs", self.regs);
        w.opt_int("smemStatic", self.static_smem_bytes);
        w.opt_int("smemDynamic", self.dynamic_smem_bytes);
        w.opt_int("graphId", self.graph_id);
        w.opt_int("graphNodeId", self.graph_node_id);
        w.raw(",\"deviceName\":");
        match &self.device_name {
            Some(name) => w.str(name),
            None => w.raw("null"),
        }
        w.opt_int("smCount", self.sm_count);
        w.opt_int("ccMajor", self.cc_major);
        w.opt_int("ccMinor", self.cc_minor);
        w.key_strs("stack", &self.stack);
        w.key_strs("domains", &self.domains);
        w.key_ints("stackRuns", &self.stack_runs);
        w.raw(",\"stackCut\":");
        w.int(self.stack_cut);
        w.raw(",\"stackCutBytes\":");
        w.int(self.stack_cut_bytes);
        w.raw(if self.bad_time {
            ",\"badTime\":true"
        } else {
            ",\"badTime\":false"
        });
        w.opt_float("kinetoBlocksPerSm", self.kineto_blocks_per_sm);
        w.opt_float("kinetoWarpsPerSm", self.kineto_warps_per_sm);
        w.opt_float("kinetoOccupancy", self.kineto_occupancy_pct);
        w.raw("}\n");
    }

    /// Append this record as one PyProf dict line (with `\n`): PyProf's keys
    /// only, in PyProf's order, Python literal syntax.
    pub fn write_pydict(&self, out: &mut String) {
        fn strs(out: &mut String, v: &[Cow<'_, str>]) {
            out.push('[');
            for (i, s) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                pylit::write_str_repr(out, s);
            }
            out.push(']');
        }
        fn ints(out: &mut String, v: &[i64]) {
            out.push('[');
            for (i, n) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&n.to_string());
            }
            out.push(']');
        }
        fn tuple3(out: &mut String, v: &[i64; 3]) {
            out.push_str(&format!("({}, {}, {})", v[0], v[1], v[2]));
        }
        out.push_str("{'kShortName': ");
        pylit::write_str_repr(out, &self.short_name);
        out.push_str(&format!(", 'kDuration': {}, 'layer': ", self.duration_ns));
        strs(out, &self.layer);
        out.push_str(", 'trace': ");
        strs(out, &self.trace);
        out.push_str(", 'reprMarkers': ");
        strs(out, &self.repr_markers);
        out.push_str(", 'marker': ");
        strs(out, &self.marker);
        out.push_str(", 'seqMarker': ");
        strs(out, &self.seq_marker);
        out.push_str(", 'seqId': ");
        ints(out, &self.seq_id);
        out.push_str(&format!(", 'subSeqId': {}, 'altSeqId': ", self.sub_seq_id));
        ints(out, &self.alt_seq_id);
        out.push_str(", 'dir': ");
        pylit::write_str_repr(out, &self.dir);
        out.push_str(", 'mod': ");
        strs(out, &self.mod_);
        out.push_str(", 'op': ");
        strs(out, &self.op);
        out.push_str(&format!(
            ", 'tid': {}, 'device': {}, 'stream': {}, 'grid': ",
            self.tid, self.device, self.stream
        ));
        tuple3(out, &self.grid);
        out.push_str(", 'block': ");
        tuple3(out, &self.block);
        out.push_str(", 'kLongName': ");
        pylit::write_str_repr(out, &self.long_name);
        out.push_str("}\n");
    }

    /// Build a record from a parsed PyProf dict line.
    pub fn from_pydict(v: &Value) -> Result<Record<'static>, String> {
        fn s(v: &Value, key: &str) -> Result<Cow<'static, str>, String> {
            match v.get(key) {
                Some(Value::Str(s)) => Ok(Cow::Owned(s.clone())),
                Some(_) => Err(format!("key '{key}' is not a string")),
                None => Err(format!("missing key '{key}'")),
            }
        }
        fn i(v: &Value, key: &str) -> Result<i64, String> {
            match v.get(key) {
                Some(Value::Int(n)) => Ok(*n),
                Some(Value::Bool(b)) => Ok(i64::from(*b)),
                Some(_) => Err(format!("key '{key}' is not an integer")),
                None => Err(format!("missing key '{key}'")),
            }
        }
        fn sl(v: &Value, key: &str) -> Result<Vec<Cow<'static, str>>, String> {
            match v.get(key) {
                None => Ok(Vec::new()),
                Some(x) => x
                    .as_seq()
                    .ok_or_else(|| format!("key '{key}' is not a list"))?
                    .iter()
                    .map(|e| match e {
                        Value::Str(s) => Ok(Cow::Owned(s.clone())),
                        other => Ok(Cow::Owned(other.to_repr())),
                    })
                    .collect(),
            }
        }
        fn il(v: &Value, key: &str) -> Result<Vec<i64>, String> {
            match v.get(key) {
                None => Ok(Vec::new()),
                Some(x) => x
                    .as_seq()
                    .ok_or_else(|| format!("key '{key}' is not a list"))?
                    .iter()
                    .map(|e| {
                        e.as_int()
                            .ok_or_else(|| format!("key '{key}' holds a non-integer"))
                    })
                    .collect(),
            }
        }
        fn dims(v: &Value, key: &str) -> Result<[i64; 3], String> {
            let items = v
                .get(key)
                .and_then(Value::as_seq)
                .ok_or_else(|| format!("key '{key}' is not a tuple"))?;
            let mut out = [1i64; 3];
            for (slot, item) in out.iter_mut().zip(items) {
                *slot = item
                    .as_int()
                    .ok_or_else(|| format!("key '{key}' holds a non-integer"))?;
            }
            Ok(out)
        }
        if !matches!(v, Value::Dict(_)) {
            return Err("not a dict".into());
        }
        Ok(Record {
            short_name: s(v, "kShortName")?,
            duration_ns: i(v, "kDuration")?,
            layer: sl(v, "layer")?,
            trace: sl(v, "trace")?,
            repr_markers: sl(v, "reprMarkers")?,
            marker: sl(v, "marker")?,
            seq_marker: sl(v, "seqMarker")?,
            seq_id: il(v, "seqId")?,
            sub_seq_id: i(v, "subSeqId").unwrap_or(0),
            alt_seq_id: il(v, "altSeqId")?,
            dir: s(v, "dir")?,
            mod_: sl(v, "mod")?,
            op: sl(v, "op")?,
            tid: i(v, "tid").unwrap_or(0) as u64,
            device: i(v, "device").unwrap_or(0),
            stream: i(v, "stream").unwrap_or(0),
            grid: dims(v, "grid")?,
            block: dims(v, "block")?,
            long_name: s(v, "kLongName")?,
            launched: true,
            ..Record::default()
        })
    }
}

/// Bytes that need escaping in a JSON string: control characters, `"`
/// and `\\`.
const ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// True if any of the eight bytes is below 0x20, `"` or `\\` (bit tricks
/// from "Bit Twiddling Hacks": a byte below n sets its high bit in
/// `(x - n·0x01…) & !x & 0x80…`, exactly for n ≤ 128).
#[inline]
fn word_needs_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    let control = below(w, 0x20);
    let quote = below(w ^ (ONES * u64::from(b'"')), 1);
    let backslash = below(w ^ (ONES * u64::from(b'\\')), 1);
    (control | quote | backslash) != 0
}

struct JsonWriter<'o> {
    out: &'o mut Vec<u8>,
}

impl JsonWriter<'_> {
    fn raw(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }

    fn int(&mut self, v: i64) {
        let mut b = itoa::Buffer::new();
        self.out.extend_from_slice(b.format(v).as_bytes());
    }

    fn uint(&mut self, v: u64) {
        let mut b = itoa::Buffer::new();
        self.out.extend_from_slice(b.format(v).as_bytes());
    }

    /// A JSON string, escaped as serde_json escapes it.
    fn str(&mut self, s: &str) {
        let bytes = s.as_bytes();
        self.out.push(b'"');
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            // skip eight clean bytes at a time (most text has no escapes)
            if let Some(chunk) = bytes.get(i..i + 8) {
                let mut w = [0u8; 8];
                w.copy_from_slice(chunk);
                if !word_needs_escape(u64::from_le_bytes(w)) {
                    i += 8;
                    continue;
                }
            }
            let b = bytes[i];
            if ESCAPE[b as usize] {
                self.out.extend_from_slice(&bytes[start..i]);
                self.escape(b);
                start = i + 1;
            }
            i += 1;
        }
        self.out.extend_from_slice(&bytes[start..]);
        self.out.push(b'"');
    }

    fn escape(&mut self, b: u8) {
        match b {
            b'"' => self.out.extend_from_slice(b"\\\""),
            b'\\' => self.out.extend_from_slice(b"\\\\"),
            b'\n' => self.out.extend_from_slice(b"\\n"),
            b'\r' => self.out.extend_from_slice(b"\\r"),
            b'\t' => self.out.extend_from_slice(b"\\t"),
            0x08 => self.out.extend_from_slice(b"\\b"),
            0x0c => self.out.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self.out.extend_from_slice(b"\\u00");
                self.out.push(HEX[(b >> 4) as usize]);
                self.out.push(HEX[(b & 0xf) as usize]);
            }
        }
    }

    fn key(&mut self, key: &str) {
        self.out.extend_from_slice(b",\"");
        self.raw(key);
        self.raw("\":");
    }

    fn key_strs(&mut self, key: &str, v: &[Cow<'_, str>]) {
        self.key(key);
        self.out.push(b'[');
        for (i, s) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.str(s);
        }
        self.out.push(b']');
    }

    fn key_ints(&mut self, key: &str, v: &[i64]) {
        self.key(key);
        self.out.push(b'[');
        for (i, &n) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.int(n);
        }
        self.out.push(b']');
    }

    /// A float as serde_json writes it (`null` when not finite); floats are
    /// rare (Kineto occupancy figures), so serde_json itself writes them.
    fn opt_float(&mut self, key: &str, v: Option<f64>) {
        self.key(key);
        match v {
            Some(v) => {
                if serde_json::to_writer(&mut *self.out, &v).is_err() {
                    self.raw("null");
                }
            }
            None => self.raw("null"),
        }
    }

    /// Every key is written on every line (`null` when unknown), so that
    /// each line has the same keys: readers that infer a schema from the
    /// first lines (Polars, DuckDB) see every column.
    fn opt_int(&mut self, key: &str, v: Option<i64>) {
        self.key(key);
        match v {
            Some(v) => self.int(v),
            None => self.raw("null"),
        }
    }
}

/// What a line of a record file holds.
#[derive(Debug)]
pub enum Line<'a> {
    /// The header line of a version 1 JSON Lines file.
    Header(Header),
    /// A kernel record.
    Record(Box<Record<'a>>),
    /// A blank line.
    Blank,
}

/// Parse one line of a record file, JSON or pydict, told apart by content.
pub fn read_line(line: &str) -> Result<Line<'_>, String> {
    let t = line.trim();
    if t.is_empty() {
        return Ok(Line::Blank);
    }
    if t.starts_with("{\"") || t == "{}" {
        if t.starts_with("{\"rprof\"") {
            let h: Header = serde_json::from_str(t).map_err(|e| format!("bad header: {e}"))?;
            if h.version > DICT_VERSION {
                return Err(format!(
                    "record format version {} is newer than this rprof reads ({DICT_VERSION}); re-run `rprof parse` or update rprof",
                    h.version
                ));
            }
            return Ok(Line::Header(h));
        }
        let mut r: Record<'_> = serde_json::from_str(t).map_err(|e| e.to_string())?;
        if !r.stack_runs.is_empty() {
            let runs = std::mem::take(&mut r.stack_runs);
            crate::stack_form::expand_runs(&mut r.stack, &mut r.domains, &runs)?;
        }
        return Ok(Line::Record(Box::new(r)));
    }
    if t.starts_with('{') {
        let v = pylit::parse(t).map_err(|e| e.to_string())?;
        return Record::from_pydict(&v).map(|r| Line::Record(Box::new(r)));
    }
    Err("not a record (expected a JSON object or a Python dict)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYDICT: &str = "{'kShortName': 'softmax_warp_forward', 'kDuration': 50, 'layer': ['Block1', 'Conv'], 'trace': ['/home/u/x.py:10', '/home/u/y.py:20'], 'reprMarkers': [], 'marker': [\"{'mod': 'torch.nn.functional', 'op': 'softmax', 'args': [{'name': '', 'type': 'tensor', 'shape': (32, 10), 'dtype': 'float32'}, {'name': 'dim', 'type': 'int', 'value': 1}]}\"], 'seqMarker': ['aten::_softmax, seq = 20', 'aten::softmax, seq = 20'], 'seqId': [20], 'subSeqId': 0, 'altSeqId': [], 'dir': 'fprop', 'mod': ['torch.nn.functional'], 'op': ['softmax'], 'tid': 5, 'device': 0, 'stream': 7, 'grid': (10, 1, 1), 'block': (128, 1, 1), 'kLongName': 'void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>(float*, const float*, int, int, int)'}";

    #[test]
    fn pydict_round_trip_is_byte_exact() {
        let Line::Record(r) = read_line(PYDICT).unwrap() else {
            panic!("not a record")
        };
        assert_eq!(r.layer, vec!["Block1", "Conv"]);
        assert_eq!(r.grid, [10, 1, 1]);
        let mut out = String::new();
        r.write_pydict(&mut out);
        assert_eq!(out, format!("{PYDICT}\n"));
    }

    #[test]
    fn json_round_trip() {
        let Line::Record(r) = read_line(PYDICT).unwrap() else {
            panic!("not a record")
        };
        let mut r = r.into_owned();
        r.stack = vec!["layer:Block1".into(), "x, seq = 20".into()];
        r.launched = false;
        let mut buf = Vec::new();
        r.write_json(&mut buf);
        let text = String::from_utf8(buf).unwrap();
        assert!(text.starts_with("{\"kShortName\":\"softmax_warp_forward\",\"kDuration\":50,"));
        assert!(text.contains("\"launched\":false"));
        let Line::Record(back) = read_line(&text).unwrap() else {
            panic!("not a record")
        };
        assert_eq!(*back, r);
    }

    fn arb_cow() -> impl proptest::strategy::Strategy<Value = Cow<'static, str>> {
        use proptest::prelude::*;
        prop_oneof![
            "[a-z:_ ,=\\[\\]0-9]{0,30}",
            "\\PC{0,10}",
            r#"[\x00-\x1f"\\\x7f]{0,6}"#
        ]
        .prop_map(Cow::Owned)
    }

    #[test]
    fn escape_word_test_is_exact() {
        for b in 0u8..=255 {
            for pos in 0..8 {
                let mut w = [b'a'; 8];
                w[pos] = b;
                assert_eq!(
                    word_needs_escape(u64::from_le_bytes(w)),
                    ESCAPE[b as usize],
                    "{b} at {pos}"
                );
            }
        }
    }

    proptest::proptest! {
        /// The hand-written writer prints what serde_json prints.
        #[test]
        fn write_json_equals_serde(
            strs in proptest::collection::vec(arb_cow(), 6),
            lists in proptest::collection::vec(proptest::collection::vec(arb_cow(), 0..3), 8),
            ints in proptest::collection::vec(proptest::num::i64::ANY, 12),
            opts in proptest::collection::vec(proptest::option::of(proptest::num::i64::ANY), 11),
            flags in proptest::collection::vec(proptest::bool::ANY, 2),
            tid in proptest::num::u64::ANY,
            pid in proptest::option::of(proptest::num::u64::ANY),
        ) {
            let r = Record {
                short_name: strs[0].clone(),
                duration_ns: ints[0],
                layer: lists[0].clone(),
                trace: lists[1].clone(),
                repr_markers: lists[2].clone(),
                marker: lists[3].clone(),
                seq_marker: lists[4].clone(),
                seq_id: ints[1..3].to_vec(),
                sub_seq_id: ints[3],
                alt_seq_id: ints[4..5].to_vec(),
                dir: strs[1].clone(),
                mod_: lists[5].clone(),
                op: lists[6].clone(),
                tid,
                device: ints[5],
                stream: ints[6],
                grid: [ints[7], ints[8], ints[9]],
                block: [ints[10], ints[11], ints[0]],
                long_name: strs[2].clone(),
                start_ns: opts[0],
                end_ns: opts[1],
                launch_start_ns: opts[2],
                launch_end_ns: opts[3],
                launched: flags[0],
                api: Some(strs[3].clone()).filter(|_| opts[4].is_some()),
                pid,
                correlation: opts[5],
                context: opts[6],
                regs: opts[7],
                static_smem_bytes: opts[8],
                dynamic_smem_bytes: opts[9],
                graph_id: opts[10],
                graph_node_id: opts[0],
                device_name: Some(strs[4].clone()).filter(|_| opts[1].is_some()),
                sm_count: opts[2],
                cc_major: opts[6],
                cc_minor: opts[7],
                stack: lists[7].clone(),
                domains: lists[0].clone(),
                stack_runs: ints[2..4].to_vec(),
                stack_cut: ints[4],
                stack_cut_bytes: ints[5],
                bad_time: flags[1],
                kineto_blocks_per_sm: opts[3].map(|x| x as f64 / 7.0),
                kineto_warps_per_sm: opts[4].map(|x| x as f64 * 1e-300),
                kineto_occupancy_pct: opts[5].map(|x| (x % 101) as f64),
            };
            let mut ours = Vec::new();
            r.write_json(&mut ours);
            let mut theirs = serde_json::to_vec(&r).unwrap();
            theirs.push(b'\n');
            proptest::prop_assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(theirs).unwrap());
        }
    }

    #[test]
    fn stack_runs_are_expanded_on_reading() {
        let mut r = Record {
            stack: vec!["a".into(), "b".into()],
            domains: vec!["".into(), "d".into()],
            stack_runs: vec![2, 3],
            ..Record::default()
        };
        let mut line = Vec::new();
        r.write_json(&mut line);
        let Line::Record(back) = read_line(std::str::from_utf8(&line).unwrap()).unwrap() else {
            panic!("not a record")
        };
        assert_eq!(back.stack, vec!["a", "a", "b", "b", "b"]);
        assert_eq!(back.domains, vec!["", "", "d", "d", "d"]);
        assert!(back.stack_runs.is_empty());
        // counts that do not match the entries are an error, not a guess
        r.stack_runs = vec![1];
        line.clear();
        r.write_json(&mut line);
        assert!(read_line(std::str::from_utf8(&line).unwrap()).is_err());
    }

    #[test]
    fn headers_and_versions() {
        let h = "{\"rprof\":\"dict\",\"version\":1,\"source\":\"nsys\"}";
        assert!(matches!(read_line(h), Ok(Line::Header(_))));
        let future = "{\"rprof\":\"dict\",\"version\":99,\"source\":\"nsys\"}";
        assert!(read_line(future).unwrap_err().contains("newer"));
        assert!(matches!(read_line("  "), Ok(Line::Blank)));
        assert!(read_line("hello").is_err());
        assert!(read_line("{'kShortName': 1}").is_err());
        assert!(read_line("{\"kShortName\": 1}").is_err());
        // evaluation is impossible: this is just an unknown token
        assert!(read_line("{'kShortName': __import__('os').system('x')}").is_err());
    }
}
