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
//!
//! Files: `mod.rs` the [`Record`] struct and its serde view, `header.rs`
//! the format versions and the sidecar [`Header`], `json.rs` the
//! hand-written JSON Lines writer, `pydict.rs` PyProf's dict lines (write
//! and read back), `line.rs` telling the two apart when reading.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

mod dir;
mod fast;
mod header;
mod json;
mod line;
mod pydict;
#[cfg(test)]
pub(crate) mod tests;

pub use dir::{Dir, Direction};
pub use header::{DICT_MINOR, DICT_VERSION, Header, read_sidecar, sidecar_path};
pub use json::{
    Shared, StackJson, push_json_str, write_markers_json, write_ops_json, write_seq_json,
    write_stack_json,
};
pub use line::{Line, read_line};

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
    /// `fprop` or `bprop` (a record file may hold other text, kept).
    #[serde(borrow)]
    pub dir: Dir<'a>,
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
    /// The byte length of each `stack` entry's name when the entries are
    /// PyTorch-profiler operators, whose text rprof printed (the name as
    /// the profiler gave it, then rprof's fields); `[]` otherwise. Readers
    /// take such a name whole, whatever it holds (`x, seq = 5`), and read
    /// only the fields after it.
    #[serde(rename = "stackNames", default)]
    pub stack_names: Vec<u32>,
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
            dir: self.dir.into_owned(),
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
            stack_names: self.stack_names,
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
}
