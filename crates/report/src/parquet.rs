//! Tables → Apache Parquet, for any report: name the columns and their
//! types, hand over the values a batch of rows at a time, finish.
//!
//! Every column is nullable (`None` is a null, never a made-up number);
//! strings are UTF-8; lists are lists of strings or of integers. The file
//! carries key-value metadata (a report's definitions, a record file's
//! source and device table) that DuckDB (`parquet_kv_metadata`), Polars and
//! pyarrow show. Compression is Snappy, which every reader supports.
//!
//! ```no_run
//! use rprof_report::{ColumnType, ParquetTable, Values};
//! # fn main() -> std::io::Result<()> {
//! let file = std::fs::File::create("summary.parquet")?;
//! let mut t = ParquetTable::new(
//!     file,
//!     &[("name", ColumnType::Utf8), ("total_ns", ColumnType::Int64)],
//!     &[("rprof.report", "summary".to_owned())],
//! )?;
//! t.write(vec![
//!     Values::Utf8(vec![Some("gemm".into()), Some("relu".into())]),
//!     Values::Int64(vec![Some(1200), None]),
//! ])?;
//! t.finish()?;
//! # Ok(())
//! # }
//! ```

use std::io::{self, Write};
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

/// The type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// 64-bit signed integers (times in ns, counts).
    Int64,
    /// 64-bit unsigned integers (thread and process ids).
    UInt64,
    /// 64-bit floats (rates, shares).
    Float64,
    /// UTF-8 text.
    Utf8,
    /// Booleans.
    Bool,
    /// A list of strings per row.
    ListUtf8,
    /// A list of 64-bit integers per row.
    ListInt64,
}

impl ColumnType {
    fn data_type(self) -> DataType {
        match self {
            ColumnType::Int64 => DataType::Int64,
            ColumnType::UInt64 => DataType::UInt64,
            ColumnType::Float64 => DataType::Float64,
            ColumnType::Utf8 => DataType::Utf8,
            ColumnType::Bool => DataType::Boolean,
            ColumnType::ListUtf8 => {
                DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)))
            }
            ColumnType::ListInt64 => {
                DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true)))
            }
        }
    }
}

/// The values of one column for a batch of rows (`None`: null).
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// For [`ColumnType::Int64`].
    Int64(Vec<Option<i64>>),
    /// For [`ColumnType::UInt64`].
    UInt64(Vec<Option<u64>>),
    /// For [`ColumnType::Float64`] (NaN and infinities are written as null).
    Float64(Vec<Option<f64>>),
    /// For [`ColumnType::Utf8`].
    Utf8(Vec<Option<String>>),
    /// For [`ColumnType::Bool`].
    Bool(Vec<Option<bool>>),
    /// For [`ColumnType::ListUtf8`].
    ListUtf8(Vec<Vec<String>>),
    /// For [`ColumnType::ListInt64`].
    ListInt64(Vec<Vec<i64>>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Int64(v) => v.len(),
            Values::UInt64(v) => v.len(),
            Values::Float64(v) => v.len(),
            Values::Utf8(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::ListUtf8(v) => v.len(),
            Values::ListInt64(v) => v.len(),
        }
    }

    /// The column type these values are of.
    pub fn column_type(&self) -> ColumnType {
        match self {
            Values::Int64(_) => ColumnType::Int64,
            Values::UInt64(_) => ColumnType::UInt64,
            Values::Float64(_) => ColumnType::Float64,
            Values::Utf8(_) => ColumnType::Utf8,
            Values::Bool(_) => ColumnType::Bool,
            Values::ListUtf8(_) => ColumnType::ListUtf8,
            Values::ListInt64(_) => ColumnType::ListInt64,
        }
    }

    fn into_array(self) -> ArrayRef {
        match self {
            Values::Int64(v) => Arc::new(Int64Array::from(v)),
            Values::UInt64(v) => Arc::new(UInt64Array::from(v)),
            Values::Float64(v) => Arc::new(Float64Array::from(
                v.into_iter()
                    .map(|x| x.filter(|f| f.is_finite()))
                    .collect::<Vec<_>>(),
            )),
            Values::Utf8(v) => Arc::new(StringArray::from(v)),
            Values::Bool(v) => Arc::new(BooleanArray::from(v)),
            Values::ListUtf8(v) => {
                let mut b = ListBuilder::new(StringBuilder::new());
                for row in v {
                    for s in row {
                        b.values().append_value(s);
                    }
                    b.append(true);
                }
                Arc::new(b.finish())
            }
            Values::ListInt64(v) => {
                let mut b = ListBuilder::new(Int64Builder::new());
                for row in v {
                    for x in row {
                        b.values().append_value(x);
                    }
                    b.append(true);
                }
                Arc::new(b.finish())
            }
        }
    }
}

fn other(e: impl std::error::Error + Send + Sync + 'static) -> io::Error {
    io::Error::other(e)
}

/// A Parquet file being written: one row group per [`ParquetTable::write`]
/// of at least a million rows (smaller batches are gathered by the writer).
pub struct ParquetTable<W: Write + Send> {
    writer: ArrowWriter<W>,
    schema: SchemaRef,
}

impl<W: Write + Send> ParquetTable<W> {
    /// Start a file with these columns (name, type) and key-value metadata.
    pub fn new(
        out: W,
        columns: &[(&str, ColumnType)],
        metadata: &[(&str, String)],
    ) -> io::Result<ParquetTable<W>> {
        let schema: SchemaRef = Arc::new(Schema::new(
            columns
                .iter()
                .map(|(name, t)| Field::new(*name, t.data_type(), true))
                .collect::<Vec<_>>(),
        ));
        let kv: Vec<KeyValue> = metadata
            .iter()
            .map(|(k, v)| KeyValue::new((*k).to_owned(), v.clone()))
            .collect();
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_key_value_metadata(Some(kv))
            .set_created_by(format!("rprof {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(out, schema.clone(), Some(props)).map_err(other)?;
        Ok(ParquetTable { writer, schema })
    }

    /// Append a batch of rows: one [`Values`] per column, in the order and
    /// of the types given to [`ParquetTable::new`], all of the same length.
    pub fn write(&mut self, columns: Vec<Values>) -> io::Result<()> {
        if columns.len() != self.schema.fields().len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} columns given, the table has {}",
                    columns.len(),
                    self.schema.fields().len()
                ),
            ));
        }
        let rows = columns.first().map_or(0, Values::len);
        for (v, f) in columns.iter().zip(self.schema.fields()) {
            if v.len() != rows || v.column_type().data_type() != *f.data_type() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("column {}: wrong type or length", f.name()),
                ));
            }
        }
        let arrays: Vec<ArrayRef> = columns.into_iter().map(Values::into_array).collect();
        let batch = RecordBatch::try_new(self.schema.clone(), arrays).map_err(other)?;
        self.writer.write(&batch).map_err(other)
    }

    /// Append a batch of rows already made into Arrow arrays: one per
    /// column, in the order and of the types given to
    /// [`ParquetTable::new`], all of the same length.
    pub fn write_arrays(&mut self, arrays: Vec<ArrayRef>) -> io::Result<()> {
        let batch = RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("a batch of rows: {e}"))
        })?;
        self.writer.write(&batch).map_err(other)
    }

    /// Write the footer and return the output.
    pub fn finish(self) -> io::Result<W> {
        self.writer.into_inner().map_err(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    /// Write a whole table at once: (column name, values) pairs.
    fn write_table<W: Write + Send>(
        out: W,
        columns: Vec<(&str, Values)>,
        metadata: &[(&str, String)],
    ) -> io::Result<W> {
        let types: Vec<(&str, ColumnType)> =
            columns.iter().map(|(n, v)| (*n, v.column_type())).collect();
        let mut t = ParquetTable::new(out, &types, metadata)?;
        t.write(columns.into_iter().map(|(_, v)| v).collect())?;
        t.finish()
    }

    /// Arrays that do not fit the table's columns (a type, a count or a
    /// length) are refused, and nothing is written for them.
    #[test]
    fn write_arrays_refuses_arrays_that_do_not_fit() {
        let cols = [("a", ColumnType::Int64), ("s", ColumnType::Utf8)];
        let mut t = ParquetTable::new(Vec::new(), &cols, &[]).unwrap();
        let a: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        let s: ArrayRef = Arc::new(StringArray::from(vec!["x", "y"]));
        let short: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        for bad in [
            vec![s.clone(), a.clone()],
            vec![a.clone()],
            vec![a.clone(), short],
        ] {
            let e = t.write_arrays(bad).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
        t.write_arrays(vec![a, s]).unwrap();
        let bytes = t.finish().unwrap();
        let rows: usize = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
            .unwrap()
            .build()
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum();
        assert_eq!(rows, 2);
    }

    #[test]
    fn round_trip_with_nulls_lists_and_metadata() {
        let bytes = write_table(
            Vec::new(),
            vec![
                ("t_ns", Values::Int64(vec![Some(1 << 60), None, Some(-3)])),
                ("tid", Values::UInt64(vec![Some(u64::MAX), Some(0), None])),
                ("x", Values::Float64(vec![Some(0.5), Some(f64::NAN), None])),
                (
                    "s",
                    Values::Utf8(vec![Some("a\u{1}b".into()), None, Some(String::new())]),
                ),
                ("b", Values::Bool(vec![Some(true), Some(false), None])),
                (
                    "ls",
                    Values::ListUtf8(vec![vec!["p".into(), "q".into()], vec![], vec!["r".into()]]),
                ),
                ("li", Values::ListInt64(vec![vec![], vec![7], vec![1, 2]])),
            ],
            &[("k", "v".to_owned())],
        )
        .unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes)).unwrap();
        let kv = reader
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .cloned()
            .unwrap();
        assert!(
            kv.iter()
                .any(|e| e.key == "k" && e.value.as_deref() == Some("v"))
        );
        let batches: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
        assert_eq!(batches.len(), 1);
        let b = &batches[0];
        let t = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(
            t.iter().collect::<Vec<_>>(),
            [Some(1 << 60), None, Some(-3)]
        );
        let u = b.column(1).as_any().downcast_ref::<UInt64Array>().unwrap();
        assert_eq!(
            u.iter().collect::<Vec<_>>(),
            [Some(u64::MAX), Some(0), None]
        );
        let x = b.column(2).as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(x.iter().collect::<Vec<_>>(), [Some(0.5), None, None]);
        let s = b.column(3).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            [Some("a\u{1}b"), None, Some("")]
        );
        let l = b
            .column(6)
            .as_any()
            .downcast_ref::<arrow_array::ListArray>()
            .unwrap();
        let second = l.value(2);
        let second = second.as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(second.values().to_vec(), [1, 2]);
    }

    #[test]
    fn mismatched_batches_are_errors() {
        let mut t = ParquetTable::new(Vec::new(), &[("a", ColumnType::Int64)], &[]).unwrap();
        assert!(t.write(vec![Values::Utf8(vec![None])]).is_err());
        assert!(t.write(vec![]).is_err());
        assert!(t.write(vec![Values::Int64(vec![Some(1)])]).is_ok());
    }
}
