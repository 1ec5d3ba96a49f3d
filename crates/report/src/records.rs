//! Per-kernel records as Parquet columns: the same names and values as the
//! JSON Lines records (docs/records.md), one typed nullable column per key.

use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, UInt64Array};
use rprof_model::{KernelRef, Kernels};

use crate::parquet::ColumnType;

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

// The columns are built as Arrow arrays straight from the records' texts:
// a `String` per cell (then copied into the array and freed) was a third
// of the work of writing Parquet records.

/// A string per record, appended by `f`.
fn strs(recs: &Kernels<'_>, f: impl Fn(&KernelRef<'_, '_>, &mut StringBuilder)) -> ArrayRef {
    let mut b = StringBuilder::with_capacity(recs.len(), recs.len() * 16);
    for r in recs.iter() {
        f(&r, &mut b);
    }
    Arc::new(b.finish())
}

/// A list per record, its items appended to `items` by `f`.
fn lists<B: ArrayBuilder>(
    recs: &Kernels<'_>,
    items: B,
    f: impl Fn(&KernelRef<'_, '_>, &mut B),
) -> ArrayRef {
    let mut b = ListBuilder::new(items);
    for r in recs.iter() {
        f(&r, b.values());
        b.append(true);
    }
    Arc::new(b.finish())
}

/// A list of strings per record.
fn list(recs: &Kernels<'_>, f: impl Fn(&KernelRef<'_, '_>, &mut StringBuilder)) -> ArrayRef {
    lists(recs, StringBuilder::new(), f)
}

/// Each of `v` onto `b`.
fn texts(v: &[std::borrow::Cow<'_, str>], b: &mut StringBuilder) {
    for s in v {
        b.append_value(s);
    }
}

/// A list of integers per record.
fn ints(recs: &Kernels<'_>, f: impl Fn(&KernelRef<'_, '_>, &mut Int64Builder)) -> ArrayRef {
    lists(recs, Int64Builder::new(), f)
}

fn int(recs: &Kernels<'_>, f: impl Fn(&KernelRef<'_, '_>) -> Option<i64>) -> ArrayRef {
    Arc::new(recs.iter().map(|r| f(&r)).collect::<Int64Array>())
}

fn uint(recs: &Kernels<'_>, f: impl Fn(&KernelRef<'_, '_>) -> Option<u64>) -> ArrayRef {
    Arc::new(recs.iter().map(|r| f(&r)).collect::<UInt64Array>())
}

fn boolean(recs: &Kernels<'_>, f: impl Fn(&KernelRef<'_, '_>) -> bool) -> ArrayRef {
    Arc::new(recs.iter().map(|r| Some(f(&r))).collect::<BooleanArray>())
}

/// NaN and infinities are written as null.
fn float(recs: &Kernels<'_>, f: impl Fn(&KernelRef<'_, '_>) -> Option<f64>) -> ArrayRef {
    Arc::new(
        recs.iter()
            .map(|r| f(&r).filter(|x| x.is_finite()))
            .collect::<Float64Array>(),
    )
}

/// The columns of a chunk of the kernel table as records, in [`COLUMNS`]
/// order, for [`crate::ParquetTable::write_arrays`].
pub fn columns(recs: &Kernels<'_>) -> Vec<ArrayRef> {
    vec![
        strs(recs, |r, b| b.append_value(&r.short_name)),
        int(recs, |r| Some(r.duration_ns)),
        list(recs, |r, b| {
            r.layer().iter().for_each(|s| b.append_value(s))
        }),
        list(recs, |r, b| {
            r.trace().iter().for_each(|s| b.append_value(s))
        }),
        list(recs, |r, b| texts(r.repr_markers(), b)),
        list(recs, |r, b| texts(r.marker(), b)),
        list(recs, |r, b| texts(r.seq_marker(), b)),
        ints(recs, |r, b| b.append_slice(&r.seq_id)),
        int(recs, |r| Some(r.sub_seq_id)),
        ints(recs, |r, b| b.append_slice(&r.alt_seq_id)),
        strs(recs, |r, b| b.append_value(r.dir.as_str())),
        list(recs, |r, b| {
            r.module().iter().for_each(|s| b.append_value(s))
        }),
        list(recs, |r, b| r.op().iter().for_each(|s| b.append_value(s))),
        uint(recs, |r| Some(r.tid)),
        int(recs, |r| Some(r.device)),
        int(recs, |r| Some(r.stream)),
        ints(recs, |r, b| b.append_slice(&r.grid)),
        ints(recs, |r, b| b.append_slice(&r.block)),
        strs(recs, |r, b| b.append_value(&r.long_name)),
        int(recs, |r| r.start_ns),
        int(recs, |r| r.end_ns),
        int(recs, |r| r.launch_start_ns),
        int(recs, |r| r.launch_end_ns),
        boolean(recs, |r| r.launched),
        strs(recs, |r, b| b.append_option(r.api.as_deref())),
        uint(recs, |r| r.pid),
        int(recs, |r| r.correlation),
        int(recs, |r| r.context),
        int(recs, |r| r.regs),
        int(recs, |r| r.static_smem_bytes),
        int(recs, |r| r.dynamic_smem_bytes),
        int(recs, |r| r.graph_id),
        int(recs, |r| r.graph_node_id),
        strs(recs, |r, b| b.append_option(r.device_name.as_deref())),
        int(recs, |r| r.sm_count),
        int(recs, |r| r.cc_major),
        int(recs, |r| r.cc_minor),
        list(recs, |r, b| texts(r.stack(), b)),
        list(recs, |r, b| texts(r.domains(), b)),
        ints(recs, |r, b| b.append_slice(&r.context_of().stack_runs)),
        ints(recs, |r, b| {
            for &n in &r.context_of().stack_names {
                b.append_value(i64::from(n));
            }
        }),
        int(recs, |r| Some(r.stack_cut())),
        int(recs, |r| Some(r.stack_cut_bytes())),
        boolean(recs, |r| r.bad_time),
        float(recs, |r| r.kineto_blocks_per_sm),
        float(recs, |r| r.kineto_warps_per_sm),
        float(recs, |r| r.kineto_occupancy_pct),
    ]
}

/// Reading a Parquet record file back: each row as the JSON Lines record
/// `rprof parse` writes for it (same keys, in column order), so that the
/// one record parser reads both and every command gives the same output
/// for either file.
///
/// The lines are written straight from the typed columns, in the file's
/// column order and in the JSON writer's own form (no spaces; integers
/// as `itoa` and floats as serde_json write them; strings escaped by
/// [`rprof_model::push_json_str`]): a file of `rprof parse --format
/// parquet` then gives the lines `rprof parse` would have written, which
/// the record parser's fast path reads in place. Each row went through a
/// `serde_json::Value` map before (sorted keys, which sent every line to
/// serde's slower reader, one row at a time): `prof` on the 1 M-kernel
/// Parquet file took 5 times its time on the JSON Lines file.
pub mod read {
    use std::io;

    use arrow_array::{
        Array, BooleanArray, Float64Array, Int64Array, ListArray, RecordBatch, StringArray,
        UInt64Array,
    };
    use rayon::prelude::*;
    use serde_json::Value;

    /// The four bytes a Parquet file starts (and ends) with.
    pub const MAGIC: &[u8; 4] = b"PAR1";

    /// A cell of any type as a JSON value (the columns [`Col`] does not
    /// read directly: lists of other types, and types no record column
    /// has, which are refused here, at the first cell that is not null).
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

    /// A column of a batch, its array's type found once for all its rows.
    enum Col<'a> {
        Int(&'a Int64Array),
        UInt(&'a UInt64Array),
        Float(&'a Float64Array),
        Str(&'a StringArray),
        Bool(&'a BooleanArray),
        /// A list of integers: the list array and its items.
        Ints(&'a ListArray, &'a Int64Array),
        /// A list of strings: the list array and its items.
        Strs(&'a ListArray, &'a StringArray),
        /// Anything else, a cell at a time through [`cell`].
        Other(&'a dyn Array),
    }

    impl<'a> Col<'a> {
        fn of(col: &'a dyn Array) -> Col<'a> {
            let any = col.as_any();
            if let Some(a) = any.downcast_ref::<Int64Array>() {
                Col::Int(a)
            } else if let Some(a) = any.downcast_ref::<UInt64Array>() {
                Col::UInt(a)
            } else if let Some(a) = any.downcast_ref::<Float64Array>() {
                Col::Float(a)
            } else if let Some(a) = any.downcast_ref::<StringArray>() {
                Col::Str(a)
            } else if let Some(a) = any.downcast_ref::<BooleanArray>() {
                Col::Bool(a)
            } else if let Some(l) = any.downcast_ref::<ListArray>() {
                let items = l.values().as_any();
                if let Some(v) = items.downcast_ref::<Int64Array>() {
                    Col::Ints(l, v)
                } else if let Some(v) = items.downcast_ref::<StringArray>() {
                    Col::Strs(l, v)
                } else {
                    Col::Other(col)
                }
            } else {
                Col::Other(col)
            }
        }

        /// The cell of row `i`, as JSON, onto `out`.
        fn write(&self, out: &mut Vec<u8>, i: usize, name: &str) -> io::Result<()> {
            let mut n = itoa::Buffer::new();
            match *self {
                Col::Int(a) if !a.is_null(i) => {
                    out.extend_from_slice(n.format(a.value(i)).as_bytes())
                }
                Col::UInt(a) if !a.is_null(i) => {
                    out.extend_from_slice(n.format(a.value(i)).as_bytes());
                }
                // (serde_json writes a float that is not finite as null)
                Col::Float(a) if !a.is_null(i) => {
                    serde_json::to_writer(&mut *out, &a.value(i)).map_err(io::Error::other)?;
                }
                Col::Str(a) if !a.is_null(i) => rprof_model::push_json_str(out, a.value(i)),
                Col::Bool(a) if !a.is_null(i) => {
                    out.extend_from_slice(if a.value(i) { b"true" } else { b"false" });
                }
                Col::Ints(l, v) if !l.is_null(i) => {
                    list(out, l, i, |out, j| {
                        if v.is_null(j) {
                            out.extend_from_slice(b"null");
                        } else {
                            out.extend_from_slice(n.format(v.value(j)).as_bytes());
                        }
                    });
                }
                Col::Strs(l, v) if !l.is_null(i) => {
                    list(out, l, i, |out, j| {
                        if v.is_null(j) {
                            out.extend_from_slice(b"null");
                        } else {
                            rprof_model::push_json_str(out, v.value(j));
                        }
                    });
                }
                Col::Other(a) => {
                    serde_json::to_writer(&mut *out, &cell(a, i, name)?)
                        .map_err(io::Error::other)?;
                }
                _ => out.extend_from_slice(b"null"),
            }
            Ok(())
        }
    }

    /// `[item,item,…]` of list row `i`, each item (an index into the
    /// list's items) written by `item`.
    fn list(out: &mut Vec<u8>, l: &ListArray, i: usize, mut item: impl FnMut(&mut Vec<u8>, usize)) {
        let offsets = l.value_offsets();
        let from = offsets
            .get(i)
            .map_or(0, |&o| usize::try_from(o).unwrap_or(0));
        let to = offsets
            .get(i + 1)
            .map_or(from, |&o| usize::try_from(o).unwrap_or(from));
        out.push(b'[');
        for (k, j) in (from..to).enumerate() {
            if k > 0 {
                out.push(b',');
            }
            item(out, j);
        }
        out.push(b']');
    }

    /// Rows per buffer of [`write_lines`].
    const CHUNK_ROWS: usize = 512;

    /// The rows of a batch as JSON Lines record lines, each ending in a
    /// newline, into `bufs` (cleared, then as many as needed: a buffer per
    /// 512 rows, made in parallel). The buffers are kept from
    /// one batch to the next by the caller: a new block per line, freed
    /// after each batch, cost a page fault every few kilobytes once the
    /// allocator gave the pages back. A column name the schema repeats is
    /// written once, with its last column's value (as a map of the row's
    /// cells would hold it); an error is the first row's to meet one.
    pub fn write_lines(batch: &RecordBatch, bufs: &mut Vec<String>) -> io::Result<()> {
        let schema = batch.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let mut last: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (j, name) in names.iter().enumerate() {
            last.insert(name, j);
        }
        let cols: Vec<(Vec<u8>, &str, Col<'_>)> = names
            .iter()
            .zip(batch.columns())
            .enumerate()
            .filter(|(j, (name, _))| last.get(**name) == Some(j))
            .map(|(_, (name, col))| {
                let mut key = Vec::with_capacity(name.len() + 3);
                rprof_model::push_json_str(&mut key, name);
                key.push(b':');
                (key, *name, Col::of(col.as_ref()))
            })
            .collect();
        let rows = batch.num_rows();
        bufs.resize_with(rows.div_ceil(CHUNK_ROWS), String::new);
        let done: Vec<io::Result<()>> = bufs
            .par_iter_mut()
            .enumerate()
            .map(|(c, buf)| {
                let mut out = std::mem::take(buf).into_bytes();
                out.clear();
                let from = c * CHUNK_ROWS;
                for i in from..(from + CHUNK_ROWS).min(rows) {
                    out.push(b'{');
                    for (k, (key, name, col)) in cols.iter().enumerate() {
                        if k > 0 {
                            out.push(b',');
                        }
                        out.extend_from_slice(key);
                        col.write(&mut out, i, name)?;
                    }
                    out.extend_from_slice(b"}\n");
                }
                *buf = String::from_utf8(out).map_err(io::Error::other)?;
                Ok(())
            })
            .collect();
        done.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use rprof_model::{Kernels, Line, Record};
    use serde_json::{Map, Value};

    use super::COLUMNS;
    use super::read::write_lines;
    use crate::parquet::{ColumnType, ParquetTable};

    /// Text with what a JSON string must escape, and other scripts.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z:_ ]{0,12}",
            any::<String>(),
            Just("q\"b\\s\n\t\u{1}\u{7f}é→𝄞".to_owned()),
        ]
    }

    /// A value for a column of type `t` (`required`: never null).
    fn value(t: ColumnType, required: bool) -> BoxedStrategy<Value> {
        let v: BoxedStrategy<Value> = match t {
            ColumnType::Utf8 => text().prop_map(Value::from).boxed(),
            ColumnType::Int64 => any::<i64>().prop_map(Value::from).boxed(),
            ColumnType::UInt64 => any::<u64>().prop_map(Value::from).boxed(),
            ColumnType::Float64 => prop_oneof![
                any::<f64>().prop_filter("finite", |x| x.is_finite()),
                Just(1e-300),
                Just(1.0 / 7.0),
                Just(-0.0),
            ]
            .prop_map(Value::from)
            .boxed(),
            ColumnType::Bool => any::<bool>().prop_map(Value::from).boxed(),
            ColumnType::ListUtf8 => proptest::collection::vec(text().prop_map(Value::from), 0..4)
                .prop_map(Value::Array)
                .boxed(),
            ColumnType::ListInt64 => {
                proptest::collection::vec(any::<i64>().prop_map(Value::from), 0..4)
                    .prop_map(Value::Array)
                    .boxed()
            }
        };
        if required {
            v
        } else {
            prop_oneof![1 => Just(Value::Null), 3 => v].boxed()
        }
    }

    /// A JSON record line with every column: random values of each
    /// column's type, null where the record allows it.
    fn arb_line() -> impl Strategy<Value = String> {
        let fields: Vec<BoxedStrategy<Value>> = COLUMNS
            .iter()
            .map(|&(name, t)| match name {
                "grid" | "block" => {
                    proptest::collection::vec((0..=u32::MAX as i64).prop_map(Value::from), 3)
                        .prop_map(Value::Array)
                        .boxed()
                }
                // (their lengths must agree with the stack's: the runs
                // and names of a stack form are other tests' business)
                "stackNames" | "stackRuns" => Just(Value::Array(Vec::new())).boxed(),
                "dir" => prop_oneof![Just("fprop"), Just("bprop"), Just("na")]
                    .prop_map(Value::from)
                    .boxed(),
                "kShortName" | "kDuration" | "layer" | "trace" | "reprMarkers" | "marker"
                | "seqMarker" | "seqId" | "subSeqId" | "altSeqId" | "mod" | "op" | "tid"
                | "device" | "stream" | "kLongName" | "launched" | "stack" | "domains"
                | "stackCut" | "stackCutBytes" | "badTime" => value(t, true),
                _ => value(t, false),
            })
            .collect();
        fields.prop_map(|values| {
            let m: Map<String, Value> = COLUMNS
                .iter()
                .zip(values)
                .map(|(&(name, _), v)| (name.to_owned(), v))
                .collect();
            Value::Object(m).to_string()
        })
    }

    /// `lines` as records, written to Parquet as `rprof parse` writes them,
    /// read back in batches of `batch` rows, each batch's lines by
    /// [`write_lines`]; and the lines `rprof parse` writes for the same
    /// records (the JSON writer's).
    fn round_trip(lines: &[String], batch: usize) -> (Vec<String>, Vec<String>) {
        let recs: Vec<Record<'_>> = lines
            .iter()
            .map(|l| match rprof_model::read_line(l) {
                Ok(Line::Record(r)) => *r,
                Ok(_) => panic!("not a record: {l}"),
                Err(e) => panic!("{e}: {l}"),
            })
            .collect();
        let want: Vec<String> = recs
            .iter()
            .map(|r| {
                let mut out = Vec::new();
                r.write_json(&mut out);
                String::from_utf8(out).unwrap().trim_end().to_owned()
            })
            .collect();
        let mut kernels = Kernels::with_capacity(recs.len());
        for r in recs {
            kernels.push_record(r);
        }
        let mut t = ParquetTable::new(Vec::new(), COLUMNS, &[]).unwrap();
        t.write_arrays(super::columns(&kernels)).unwrap();
        let bytes = t.finish().unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
            .unwrap()
            .with_batch_size(batch)
            .build()
            .unwrap();
        let mut bufs = vec!["left from before".to_owned(); 3];
        let mut got = Vec::new();
        for b in reader {
            write_lines(&b.unwrap(), &mut bufs).unwrap();
            for buf in &bufs {
                assert!(buf.is_empty() || buf.ends_with('\n'));
                got.extend(buf.split_terminator('\n').map(str::to_owned));
            }
        }
        (got, want)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// A Parquet record file's rows come back as the very lines the
        /// JSON writer writes for the same records (which the record
        /// parser's fast path reads), whatever the batch size.
        #[test]
        fn parquet_rows_read_back_as_the_json_writers_lines(
            lines in proptest::collection::vec(arb_line(), 1..6),
            batch in 1usize..4,
        ) {
            let (got, want) = round_trip(&lines, batch);
            prop_assert_eq!(got, want);
        }
    }

    /// Rows past a buffer of lines and past a batch: the same lines in
    /// order (1,100 rows: three buffers of lines in a batch of 1,030 rows,
    /// then one).
    #[test]
    fn rows_across_buffers_and_batches_keep_their_order() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let lines: Vec<String> = (0..1100)
            .map(|_| arb_line().new_tree(&mut runner).unwrap().current())
            .collect();
        let (got, want) = round_trip(&lines, 1030);
        assert_eq!(got.len(), 1100);
        assert!(got == want);
    }

    /// The rows of a batch as JSON Lines record lines (without newlines):
    /// [`write_lines`], a line at a time.
    fn json_lines(batch: &RecordBatch) -> std::io::Result<Vec<String>> {
        let mut bufs = Vec::new();
        write_lines(batch, &mut bufs)?;
        Ok(bufs
            .iter()
            .flat_map(|b| b.split_terminator('\n'))
            .map(str::to_owned)
            .collect())
    }

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        let schema = Schema::new(
            columns
                .iter()
                .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
                .collect::<Vec<_>>(),
        );
        RecordBatch::try_new(
            Arc::new(schema),
            columns.into_iter().map(|(_, a)| a).collect(),
        )
        .unwrap()
    }

    /// A name the schema repeats is written once, with its last column's
    /// value (what a map of the row's cells held); a column of a type no
    /// record has is refused at its first cell that is not null, the
    /// first row's error first; a list of another type goes through
    /// serde_json's values.
    #[test]
    fn odd_schemas_read_as_a_map_of_cells_did() {
        let b = batch(vec![
            (
                "a",
                Arc::new(Int64Array::from(vec![Some(1), Some(2)])) as ArrayRef,
            ),
            ("s", Arc::new(StringArray::from(vec!["x", "y"]))),
            ("a", Arc::new(Int64Array::from(vec![None, Some(4)]))),
        ]);
        assert_eq!(
            json_lines(&b).unwrap(),
            [r#"{"s":"x","a":null}"#, r#"{"s":"y","a":4}"#]
        );
        let odd = Arc::new(arrow_array::Int32Array::from(vec![None, Some(7), Some(8)]));
        let b = batch(vec![
            ("n", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
            ("i32", odd),
        ]);
        let e = json_lines(&b).unwrap_err().to_string();
        assert_eq!(
            e,
            "column \"i32\" is of type Int32, which no rprof record column has"
        );
        // only nulls: nothing to refuse
        let b = batch(vec![(
            "i32",
            Arc::new(arrow_array::Int32Array::from(vec![None, None])) as ArrayRef,
        )]);
        assert_eq!(json_lines(&b).unwrap(), [r#"{"i32":null}"#; 2]);
        let mut l =
            arrow_array::builder::ListBuilder::new(arrow_array::builder::Float64Builder::new());
        l.values().append_value(0.5);
        l.values().append_null();
        l.append(true);
        l.append(false);
        let b = batch(vec![("f", Arc::new(l.finish()) as ArrayRef)]);
        assert!(matches!(b.column(0).data_type(), DataType::List(_)));
        assert_eq!(
            json_lines(&b).unwrap(),
            [r#"{"f":[0.5,null]}"#, r#"{"f":null}"#]
        );
    }
}
