//! The per-kernel record that `rprof parse` writes and `rprof prof` reads.
//!
//! Two line formats:
//! - **JSON Lines** (default): a header line `{"rprof":"dict","version":1,…}`
//!   then one JSON object per kernel with PyProf's keys, in PyProf's order,
//!   followed by rprof's own keys (times, launch, registers, the full NVTX
//!   stack, …). Unknown keys are ignored when reading, so newer files stay
//!   readable by older tools within a version.
//! - **pydict** (`--format pydict`): PyProf's own lines, the Python `repr()`
//!   of a dict with exactly PyProf's keys, for scripts written for PyProf.
//!
//! [`read_line`] tells the two apart by their first characters and never
//! evaluates anything: pydict lines go through [`crate::pylit`].

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::pylit::{self, Value};

/// Version of the JSON Lines format written by this crate.
pub const DICT_VERSION: u32 = 1;

/// First line of a JSON Lines record file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always `"dict"`.
    pub rprof: String,
    /// Format version ([`DICT_VERSION`]).
    pub version: u32,
    /// `nsys`, `nvprof` or `kineto`.
    pub source: String,
    /// Producer and schema version of the input, when the file said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer: Option<String>,
    /// True when written with `--compat`.
    #[serde(default)]
    pub compat: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
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
    #[serde(default)]
    pub layer: Vec<Cow<'a, str>>,
    /// Python call stack (`file:line`) of the innermost trace marker.
    #[serde(default)]
    pub trace: Vec<Cow<'a, str>>,
    /// Module repr markers (raw text).
    #[serde(rename = "reprMarkers", default)]
    pub repr_markers: Vec<Cow<'a, str>>,
    /// PyProf argument markers (raw text), outermost first.
    #[serde(default)]
    pub marker: Vec<Cow<'a, str>>,
    /// PyTorch sequence markers after dedupe, sort and prune.
    #[serde(rename = "seqMarker", default)]
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
    #[serde(rename = "mod", default)]
    pub mod_: Vec<Cow<'a, str>>,
    /// Op names.
    #[serde(default)]
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
    #[serde(rename = "kStart", default, skip_serializing_if = "Option::is_none")]
    pub start_ns: Option<i64>,
    /// GPU end, ns.
    #[serde(rename = "kEnd", default, skip_serializing_if = "Option::is_none")]
    pub end_ns: Option<i64>,
    /// Launch call start, ns.
    #[serde(rename = "rStart", default, skip_serializing_if = "Option::is_none")]
    pub launch_start_ns: Option<i64>,
    /// Launch call end, ns.
    #[serde(rename = "rEnd", default, skip_serializing_if = "Option::is_none")]
    pub launch_end_ns: Option<i64>,
    /// False when no launch call was found (CUDA graphs, trimmed captures).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub launched: bool,
    /// Launch API (`cudaLaunchKernel`, `cuLaunchKernelEx`, …).
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub api: Option<Cow<'a, str>>,
    /// Process id of the launching thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u64>,
    /// CUPTI correlation id.
    #[serde(rename = "corrId", default, skip_serializing_if = "Option::is_none")]
    pub correlation: Option<i64>,
    /// CUDA context id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<i64>,
    /// Registers per thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regs: Option<i64>,
    /// Static shared memory per block, bytes.
    #[serde(
        rename = "smemStatic",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub static_smem_bytes: Option<i64>,
    /// Dynamic shared memory per block, bytes.
    #[serde(
        rename = "smemDynamic",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub dynamic_smem_bytes: Option<i64>,
    /// CUDA graph id.
    #[serde(rename = "graphId", default, skip_serializing_if = "Option::is_none")]
    pub graph_id: Option<i64>,
    /// CUDA graph node id.
    #[serde(
        rename = "graphNodeId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub graph_node_id: Option<i64>,
    /// GPU name.
    #[serde(
        rename = "deviceName",
        default,
        skip_serializing_if = "Option::is_none",
        borrow
    )]
    pub device_name: Option<Cow<'a, str>>,
    /// Number of SMs of the GPU.
    #[serde(rename = "smCount", default, skip_serializing_if = "Option::is_none")]
    pub sm_count: Option<i64>,
    /// The NVTX ranges enclosing the launch, outermost first (raw text),
    /// except PyProf's own dict markers, which are in `marker`,
    /// `reprMarkers` and `trace`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<Cow<'a, str>>,
    /// NVTX domain name of each `stack` entry (`""` = default domain, `#N`
    /// = domain N whose name the export lacks); omitted when every range is
    /// in the default domain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub domains: Vec<Cow<'a, str>>,
    /// True when the kernel ended no later than it started (kept, duration 0).
    #[serde(rename = "badTime", default, skip_serializing_if = "is_false")]
    pub bad_time: bool,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
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
            stack: own_v(self.stack),
            domains: own_v(self.domains),
            bad_time: self.bad_time,
        }
    }

    /// Append this record as one JSON line (with `\n`).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        // Serializing plain data into a Vec cannot fail.
        if serde_json::to_writer(&mut *out, self).is_ok() {
            out.push(b'\n');
        }
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

/// What a line of a record file holds.
#[derive(Debug)]
pub enum Line<'a> {
    /// The JSON Lines header.
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
        let r: Record<'_> = serde_json::from_str(t).map_err(|e| e.to_string())?;
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
