//! Machine-readable tables in every data format (CSV, TSV, JSON, Parquet)
//! from one description: named columns of text cells, typed on the way out.
//!
//! A report that already writes CSV (summary) or renders text tables (gpu,
//! through [`crate::text::capture`]) gets TSV, JSON and Parquet from here
//! without a writer per format. Cells are text as the report formats them;
//! an empty cell, `-` or `na` is unknown (null in JSON and Parquet, empty
//! in CSV and TSV). A column whose known cells are all integers is typed
//! `Int64`, one whose cells are all numbers `Float64`, else text; `types` fixes the type of named columns, so that it does not
//! depend on the data (a column of nulls, say).

use std::io::{self, Write};

use crate::parquet::{ColumnType, ParquetTable, Values};
use crate::text::Captured;

/// A data format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataFormat {
    /// Comma-separated, RFC 4180 quoting where needed.
    Csv,
    /// Tab-separated, no quoting (tabs and newlines in text become spaces).
    Tsv,
    /// One JSON document.
    Json,
    /// Apache Parquet.
    Parquet,
}

/// A table of text cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DataTable {
    /// What the table is (`devices`, `kernels`, …).
    pub name: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

/// The type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Float,
    Text,
    /// Unsigned integers beyond `i64` (only where `types` says so).
    UInt,
    /// `true` / `false` (only where `types` says so).
    Bool,
    /// Integers joined by `;` (only where `types` says so).
    ListInt,
}

fn unknown(cell: &str) -> bool {
    cell.is_empty() || cell == "-" || cell == "na"
}

/// A machine-friendly column name: `Kernel time (ms)` → `kernel_time_ms`.
pub fn snake(header: &str) -> String {
    let mut out = String::new();
    for c in header.chars() {
        let c = match c {
            '%' => {
                out.push_str(if out.is_empty() || out.ends_with('_') {
                    "pct"
                } else {
                    "_pct"
                });
                continue;
            }
            '/' => {
                out.push_str("_per_");
                continue;
            }
            c => c,
        };
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out.replace("__", "_")
}

impl DataTable {
    /// A table from CSV text with a header line.
    pub fn from_csv(name: &str, text: &[u8]) -> io::Result<DataTable> {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(text);
        let columns = r
            .headers()
            .map_err(io::Error::other)?
            .iter()
            .map(str::to_owned)
            .collect();
        let mut rows = Vec::new();
        for rec in r.records() {
            rows.push(
                rec.map_err(io::Error::other)?
                    .iter()
                    .map(str::to_owned)
                    .collect(),
            );
        }
        Ok(DataTable {
            name: name.to_owned(),
            columns,
            rows,
        })
    }

    /// A captured text table, its headers made machine-friendly
    /// (`snake`) and thousands separators dropped.
    pub fn from_captured(name: &str, c: &Captured) -> DataTable {
        DataTable {
            name: name.to_owned(),
            columns: c.headers.iter().map(|h| snake(h)).collect(),
            rows: c.rows.clone(),
        }
    }

    fn kinds(&self, types: &[(&str, ColumnType)]) -> Vec<Kind> {
        (0..self.columns.len())
            .map(|i| {
                let mut kind = None;
                for c in self
                    .rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .filter(|c| !unknown(c))
                {
                    let k = if c.parse::<i64>().is_ok() {
                        Kind::Int
                    } else if c.parse::<f64>().is_ok_and(f64::is_finite) {
                        Kind::Float
                    } else {
                        Kind::Text
                    };
                    kind = Some(match (kind, k) {
                        (None, k) => k,
                        (Some(Kind::Text), _) | (_, Kind::Text) => Kind::Text,
                        (Some(Kind::Float), _) | (_, Kind::Float) => Kind::Float,
                        _ => Kind::Int,
                    });
                }
                let hint =
                    types
                        .iter()
                        .find(|(n, _)| *n == self.columns[i])
                        .map(|(_, t)| match t {
                            ColumnType::Int64 => Kind::Int,
                            ColumnType::UInt64 => Kind::UInt,
                            ColumnType::Float64 => Kind::Float,
                            ColumnType::Bool => Kind::Bool,
                            ColumnType::ListInt64 => Kind::ListInt,
                            _ => Kind::Text,
                        });
                let column = || {
                    self.rows
                        .iter()
                        .filter_map(|r| r.get(i))
                        .filter(|c| !unknown(c))
                };
                // a boolean or list hint holds only when every cell fits it
                match hint {
                    Some(Kind::UInt) => {
                        return if column().all(|c| c.parse::<u64>().is_ok()) {
                            Kind::UInt
                        } else {
                            Kind::Text
                        };
                    }
                    Some(Kind::Bool) => {
                        return if column().all(|c| c == "true" || c == "false") {
                            Kind::Bool
                        } else {
                            Kind::Text
                        };
                    }
                    Some(Kind::ListInt) => {
                        return if column().all(|c| c.split(';').all(|x| x.parse::<i64>().is_ok())) {
                            Kind::ListInt
                        } else {
                            Kind::Text
                        };
                    }
                    _ => {}
                }
                // a hint widens (Int to Float, anything to Text) but never
                // drops a value: an integer beyond 64 bits stays a float
                match (hint, kind) {
                    (Some(h), None) => h,
                    (Some(Kind::Text), _) | (_, Some(Kind::Text)) => Kind::Text,
                    (Some(Kind::Float), _) | (_, Some(Kind::Float)) => Kind::Float,
                    (_, Some(Kind::Int)) => Kind::Int,
                    _ => Kind::Text,
                }
            })
            .collect()
    }

    /// The typed columns, for [`crate::ParquetTable`].
    pub fn typed(&self, types: &[(&str, ColumnType)]) -> Vec<(String, Values)> {
        let kinds = self.kinds(types);
        fn cell(r: &[String], i: usize) -> &str {
            r.get(i).map(String::as_str).unwrap_or("")
        }
        kinds
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let name = self.columns[i].clone();
                let v = match k {
                    Kind::Int => Values::Int64(
                        self.rows
                            .iter()
                            .map(|r| cell(r, i).parse::<i64>().ok())
                            .collect(),
                    ),
                    Kind::Float => Values::Float64(
                        self.rows
                            .iter()
                            .map(|r| cell(r, i).parse::<f64>().ok())
                            .collect(),
                    ),
                    Kind::Text => Values::Utf8(
                        self.rows
                            .iter()
                            .map(|r| Some(cell(r, i)).filter(|c| !unknown(c)).map(str::to_owned))
                            .collect(),
                    ),
                    Kind::UInt => Values::UInt64(
                        self.rows
                            .iter()
                            .map(|r| cell(r, i).parse::<u64>().ok())
                            .collect(),
                    ),
                    Kind::Bool => Values::Bool(
                        self.rows
                            .iter()
                            .map(|r| cell(r, i).parse::<bool>().ok())
                            .collect(),
                    ),
                    // an unknown list is an empty one (Parquet lists here
                    // are not nullable per row)
                    Kind::ListInt => Values::ListInt64(
                        self.rows
                            .iter()
                            .map(|r| {
                                let c = cell(r, i);
                                if unknown(c) {
                                    Vec::new()
                                } else {
                                    c.split(';').filter_map(|x| x.parse().ok()).collect()
                                }
                            })
                            .collect(),
                    ),
                };
                (name, v)
            })
            .collect()
    }

    /// The table as a JSON value: `{"name", "columns", "rows": [{…}]}`, numbers
    /// as numbers, unknown as null.
    pub fn to_json(&self, types: &[(&str, ColumnType)]) -> serde_json::Value {
        use serde_json::{Map, Value, json};
        let typed = self.typed(types);
        let rows: Vec<Value> = (0..self.rows.len())
            .map(|r| {
                let mut m = Map::new();
                for (name, v) in &typed {
                    let x = match v {
                        Values::Int64(v) => v[r].map_or(Value::Null, |x| json!(x)),
                        Values::Float64(v) => v[r].map_or(Value::Null, |x| json!(x)),
                        Values::Utf8(v) => v[r].as_ref().map_or(Value::Null, |x| json!(x)),
                        Values::UInt64(v) => v[r].map_or(Value::Null, |x| json!(x)),
                        Values::Bool(v) => v[r].map_or(Value::Null, |x| json!(x)),
                        Values::ListInt64(v) => json!(v[r]),
                        _ => Value::Null,
                    };
                    m.insert(name.clone(), x);
                }
                Value::Object(m)
            })
            .collect();
        json!({"name": self.name, "columns": self.columns, "rows": rows})
    }

    /// Write the table in `format` (JSON: [`DataTable::to_json`], one line).
    /// `metadata` goes into a Parquet file's key-value metadata.
    pub fn write<W: Write + Send>(
        &self,
        mut w: W,
        format: DataFormat,
        types: &[(&str, ColumnType)],
        metadata: &[(&str, String)],
    ) -> io::Result<W> {
        match format {
            DataFormat::Csv => {
                let mut c = csv::Writer::from_writer(&mut w);
                c.write_record(&self.columns)?;
                for r in &self.rows {
                    c.write_record(r.iter().map(|x| if unknown(x) { "" } else { x.as_str() }))?;
                }
                c.flush()?;
                drop(c);
                Ok(w)
            }
            DataFormat::Tsv => {
                let clean = |s: &str| -> String {
                    if unknown(s) {
                        String::new()
                    } else {
                        s.chars()
                            .map(|c| if c.is_control() { ' ' } else { c })
                            .collect()
                    }
                };
                let head: Vec<String> = self.columns.iter().map(|c| clean(c)).collect();
                writeln!(w, "{}", head.join("\t"))?;
                for r in &self.rows {
                    let cells: Vec<String> = r.iter().map(|c| clean(c)).collect();
                    writeln!(w, "{}", cells.join("\t"))?;
                }
                Ok(w)
            }
            DataFormat::Json => {
                serde_json::to_writer(&mut w, &self.to_json(types)).map_err(io::Error::other)?;
                w.write_all(b"\n")?;
                Ok(w)
            }
            DataFormat::Parquet => {
                let typed = self.typed(types);
                let schema: Vec<(&str, ColumnType)> = typed
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.column_type()))
                    .collect();
                let mut t = ParquetTable::new(w, &schema, metadata)?;
                t.write(typed.into_iter().map(|(_, v)| v).collect())?;
                t.finish()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_types() {
        assert_eq!(snake("Kernel time (ms)"), "kernel_time_ms");
        assert_eq!(snake("Util. (%)"), "util_pct");
        assert_eq!(snake("TFLOP/s"), "tflop_per_s");
        assert_eq!(snake("% of peak"), "pct_of_peak");
        let t = DataTable::from_csv(
            "t",
            b"key,count,share_pct,name\na,1,50,x\nb,,25.5,-\nc,3,,\n",
        )
        .unwrap();
        let typed = t.typed(&[]);
        assert_eq!(typed[1].1, Values::Int64(vec![Some(1), None, Some(3)]));
        assert_eq!(
            typed[2].1,
            Values::Float64(vec![Some(50.0), Some(25.5), None])
        );
        assert_eq!(typed[3].1, Values::Utf8(vec![Some("x".into()), None, None]));
        let forced = t.typed(&[("count", ColumnType::Float64)]);
        assert_eq!(
            forced[1].1,
            Values::Float64(vec![Some(1.0), None, Some(3.0)])
        );
        let tsv = t.write(Vec::new(), DataFormat::Tsv, &[], &[]).unwrap();
        assert_eq!(
            String::from_utf8(tsv).unwrap(),
            "key\tcount\tshare_pct\tname\na\t1\t50\tx\nb\t\t25.5\t\nc\t3\t\t\n"
        );
        let json = t.to_json(&[]);
        assert_eq!(json["rows"][1]["count"], serde_json::Value::Null);
        assert_eq!(json["rows"][1]["share_pct"], 25.5);
    }
}
