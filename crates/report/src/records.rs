//! Per-kernel records as Parquet columns: the same names and values as the
//! JSON Lines records (docs/records.md), one typed nullable column per key.

use rprof_model::{KernelRef, Kernels};

use crate::parquet::{ColumnType, Values};

/// Column names and types of a Parquet record file, in JSON key order.
pub const COLUMNS: &[(&str, ColumnType)] = &[
    ("kShortName", ColumnType::Utf8),
    ("kDuration", ColumnType::Int64),
    ("layer", ColumnType::ListUtf8),
    ("trace", ColumnType::ListUtf8),
    ("reprMarkers", ColumnType::ListUtf8),
    ("marker", ColumnType::ListUtf8),
    ("seqMarker", ColumnType::ListUtf8),
    ("seqId", ColumnType::ListInt64),
    ("subSeqId", ColumnType::Int64),
    ("altSeqId", ColumnType::ListInt64),
    ("dir", ColumnType::Utf8),
    ("mod", ColumnType::ListUtf8),
    ("op", ColumnType::ListUtf8),
    ("tid", ColumnType::UInt64),
    ("device", ColumnType::Int64),
    ("stream", ColumnType::Int64),
    ("grid", ColumnType::ListInt64),
    ("block", ColumnType::ListInt64),
    ("kLongName", ColumnType::Utf8),
    ("kStart", ColumnType::Int64),
    ("kEnd", ColumnType::Int64),
    ("rStart", ColumnType::Int64),
    ("rEnd", ColumnType::Int64),
    ("launched", ColumnType::Bool),
    ("api", ColumnType::Utf8),
    ("pid", ColumnType::UInt64),
    ("corrId", ColumnType::Int64),
    ("context", ColumnType::Int64),
    ("regs", ColumnType::Int64),
    ("smemStatic", ColumnType::Int64),
    ("smemDynamic", ColumnType::Int64),
    ("graphId", ColumnType::Int64),
    ("graphNodeId", ColumnType::Int64),
    ("deviceName", ColumnType::Utf8),
    ("smCount", ColumnType::Int64),
    ("ccMajor", ColumnType::Int64),
    ("ccMinor", ColumnType::Int64),
    ("stack", ColumnType::ListUtf8),
    ("domains", ColumnType::ListUtf8),
    ("stackRuns", ColumnType::ListInt64),
    ("stackNames", ColumnType::ListInt64),
    ("stackCut", ColumnType::Int64),
    ("stackCutBytes", ColumnType::Int64),
    ("badTime", ColumnType::Bool),
    ("kinetoBlocksPerSm", ColumnType::Float64),
    ("kinetoWarpsPerSm", ColumnType::Float64),
    ("kinetoOccupancy", ColumnType::Float64),
];

fn strs(recs: &Kernels<'_>, f: impl Fn(KernelRef<'_, '_>) -> String) -> Values {
    Values::Utf8(recs.iter().map(|r| Some(f(r))).collect())
}

fn opt_str(recs: &Kernels<'_>, f: impl Fn(KernelRef<'_, '_>) -> Option<String>) -> Values {
    Values::Utf8(recs.iter().map(f).collect())
}

fn list(recs: &Kernels<'_>, f: impl Fn(KernelRef<'_, '_>) -> Vec<String>) -> Values {
    Values::ListUtf8(recs.iter().map(f).collect())
}

fn texts(v: &[std::borrow::Cow<'_, str>]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn syms(v: rprof_model::SymList<'_>) -> Vec<String> {
    v.iter().map(str::to_owned).collect()
}

fn ints(recs: &Kernels<'_>, f: impl Fn(KernelRef<'_, '_>) -> Vec<i64>) -> Values {
    Values::ListInt64(recs.iter().map(f).collect())
}

fn int(recs: &Kernels<'_>, f: impl Fn(KernelRef<'_, '_>) -> Option<i64>) -> Values {
    Values::Int64(recs.iter().map(f).collect())
}

fn float(recs: &Kernels<'_>, f: impl Fn(KernelRef<'_, '_>) -> Option<f64>) -> Values {
    Values::Float64(recs.iter().map(f).collect())
}

/// The columns of a chunk of the kernel table as records, in [`COLUMNS`]
/// order.
pub fn columns(recs: &Kernels<'_>) -> Vec<Values> {
    vec![
        strs(recs, |r| r.short_name.to_string()),
        int(recs, |r| Some(r.duration_ns)),
        list(recs, |r| syms(r.layer())),
        list(recs, |r| syms(r.trace())),
        list(recs, |r| texts(r.repr_markers())),
        list(recs, |r| texts(r.marker())),
        list(recs, |r| texts(r.seq_marker())),
        ints(recs, |r| r.seq_id.clone()),
        int(recs, |r| Some(r.sub_seq_id)),
        ints(recs, |r| r.alt_seq_id.clone()),
        strs(recs, |r| r.dir.as_str().to_owned()),
        list(recs, |r| syms(r.module())),
        list(recs, |r| syms(r.op())),
        Values::UInt64(recs.iter().map(|r| Some(r.tid)).collect()),
        int(recs, |r| Some(r.device)),
        int(recs, |r| Some(r.stream)),
        ints(recs, |r| r.grid.to_vec()),
        ints(recs, |r| r.block.to_vec()),
        strs(recs, |r| r.long_name.to_string()),
        int(recs, |r| r.start_ns),
        int(recs, |r| r.end_ns),
        int(recs, |r| r.launch_start_ns),
        int(recs, |r| r.launch_end_ns),
        Values::Bool(recs.iter().map(|r| Some(r.launched)).collect()),
        opt_str(recs, |r| r.api.as_deref().map(str::to_owned)),
        Values::UInt64(recs.iter().map(|r| r.pid).collect()),
        int(recs, |r| r.correlation),
        int(recs, |r| r.context),
        int(recs, |r| r.regs),
        int(recs, |r| r.static_smem_bytes),
        int(recs, |r| r.dynamic_smem_bytes),
        int(recs, |r| r.graph_id),
        int(recs, |r| r.graph_node_id),
        opt_str(recs, |r| r.device_name.as_deref().map(str::to_owned)),
        int(recs, |r| r.sm_count),
        int(recs, |r| r.cc_major),
        int(recs, |r| r.cc_minor),
        list(recs, |r| texts(r.stack())),
        list(recs, |r| texts(r.domains())),
        ints(recs, |r| r.context_of().stack_runs.clone()),
        ints(recs, |r| {
            r.context_of()
                .stack_names
                .iter()
                .map(|&n| i64::from(n))
                .collect()
        }),
        int(recs, |r| Some(r.stack_cut())),
        int(recs, |r| Some(r.stack_cut_bytes())),
        Values::Bool(recs.iter().map(|r| Some(r.bad_time)).collect()),
        float(recs, |r| r.kineto_blocks_per_sm),
        float(recs, |r| r.kineto_warps_per_sm),
        float(recs, |r| r.kineto_occupancy_pct),
    ]
}

/// Reading a Parquet record file back: each row as the JSON Lines record
/// `rprof parse` writes for it (same keys, in column order), so that the
/// one record parser reads both and every command gives the same output
/// for either file.
pub mod read {
    use std::io;

    use arrow_array::{
        Array, BooleanArray, Float64Array, Int64Array, ListArray, RecordBatch, StringArray,
        UInt64Array,
    };
    use serde_json::{Map, Value};

    /// The four bytes a Parquet file starts (and ends) with.
    pub const MAGIC: &[u8; 4] = b"PAR1";

    fn cell(col: &dyn Array, i: usize, name: &str) -> io::Result<Value> {
        if col.is_null(i) {
            return Ok(Value::Null);
        }
        let any = col.as_any();
        if let Some(a) = any.downcast_ref::<Int64Array>() {
            return Ok(Value::from(a.value(i)));
        }
        if let Some(a) = any.downcast_ref::<UInt64Array>() {
            return Ok(Value::from(a.value(i)));
        }
        if let Some(a) = any.downcast_ref::<Float64Array>() {
            return Ok(serde_json::Number::from_f64(a.value(i)).map_or(Value::Null, Value::Number));
        }
        if let Some(a) = any.downcast_ref::<StringArray>() {
            return Ok(Value::from(a.value(i)));
        }
        if let Some(a) = any.downcast_ref::<BooleanArray>() {
            return Ok(Value::from(a.value(i)));
        }
        if let Some(a) = any.downcast_ref::<ListArray>() {
            let inner = a.value(i);
            return (0..inner.len())
                .map(|j| cell(inner.as_ref(), j, name))
                .collect::<io::Result<Vec<_>>>()
                .map(Value::Array);
        }
        Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "column {name:?} is of type {}, which no rprof record column has",
                col.data_type()
            ),
        ))
    }

    /// The rows of a batch as JSON Lines record lines (without newlines).
    pub fn json_lines(batch: &RecordBatch) -> io::Result<Vec<String>> {
        let schema = batch.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let mut out = Vec::with_capacity(batch.num_rows());
        for i in 0..batch.num_rows() {
            let mut m = Map::new();
            for (name, col) in names.iter().zip(batch.columns()) {
                m.insert((*name).to_owned(), cell(col.as_ref(), i, name)?);
            }
            out.push(serde_json::to_string(&Value::Object(m)).map_err(io::Error::other)?);
        }
        Ok(out)
    }
}
