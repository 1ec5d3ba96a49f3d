//! rprof-report: the tables, views and output formats of rprof.
//!
//! At the root: the table `rprof prof` prints ([`Column`] and the one
//! [`COLUMNS`] table that drives `-c` parsing, `--help`, headers, widths and
//! alignment; [`ColumnList`] parses `-c`; a [`Row`] is a record and its
//! estimate; [`Printer`] writes space-separated, columnated (`-w`), CSV,
//! TSV or JSON output, streaming), and the output formats the views share
//! ([`DataFormat`] / [`DataTable`] for CSV, TSV and JSON, [`ParquetTable`]
//! and [`ColumnType`] for Parquet, [`HostFormat`] for the host views).
//!
//! Public namespaces, kept on purpose:
//! - one per view, each with its own options type, `compute` and
//!   rendering, which would collide at the root: [`summary`], [`gpu`],
//!   [`html`](mod@html) (`rprof report`), [`mem`], [`diff`], [`dist`],
//!   [`stats`], [`steps`], [`idle`], [`launch`], [`chrome`] (`rprof export
//!   --chrome`: the streaming trace-event writer and the timeline layout);
//! - [`model`]: the op models' view of each record for the aggregating
//!   reports (`model::estimate`, [`model::Models`]);
//! - [`records`]: the record-file columns and reader (`records::COLUMNS`
//!   would collide with the prof table's [`COLUMNS`]);
//! - [`text`], [`escape`], [`printer`], [`column`](mod@column): helpers the
//!   binary calls by their qualified names (`text::capture`,
//!   `escape::escape_control`, `printer::widths`, `column::help_table`).
//!
//! ```
//! use rprof_report::{ColumnList, Format, Printer};
//!
//! let cols: ColumnList = "idx,kernel,sil".parse().unwrap();
//! let mut p = Printer::new(Vec::new(), &cols.0, Format::Csv, true).unwrap();
//! p.write_header().unwrap();
//! let out = p.into_inner().unwrap();
//! assert_eq!(out, b"\"Idx\",\"Kernel\",\"Sil(ns)\"\n");
//! ```
#![deny(missing_docs)]

pub mod chrome;
pub mod column;
mod dataout;
pub mod diff;
pub mod dist;
pub mod escape;
pub mod gpu;
mod host;
pub mod html;
pub mod idle;
pub mod launch;
pub mod mem;
pub mod model;
mod parquet;
pub mod printer;
pub mod records;
mod row;
mod select;
pub mod stats;
pub mod steps;
pub mod summary;
pub mod text;

pub use column::{COLUMNS, Column, ColumnSpec, DEFAULT_COLUMNS, Kind};
pub use dataout::{DataFormat, DataTable};
pub use host::OutFormat as HostFormat;
pub use parquet::{ColumnType, ParquetTable, Values};
pub use printer::{Format, LayoutError, Printer};
pub use row::Row;
pub use select::{ColumnList, SelectError};

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use rprof_model::{Kernels, Record};
    use rprof_ops::{Engine, Mode, decode_first_marker, estimate_kernel};

    use super::*;

    fn record() -> Record<'static> {
        Record {
            short_name: Cow::Borrowed("void foo<int> (x)"),
            duration_ns: 1000,
            trace: vec![Cow::Borrowed("/a/b/x.py:10"), Cow::Borrowed("/a/b/y.py:20")],
            layer: vec![Cow::Borrowed("Conv1"), Cow::Borrowed("BN")],
            seq_id: vec![31, 32],
            dir: rprof_model::Dir::Fprop,
            mod_: vec![Cow::Borrowed("na")],
            tid: 1234,
            stream: 7,
            grid: [1, 1, 1],
            block: [128, 1, 1],
            ..Record::default()
        }
    }

    fn print(rec: &Record<'static>, cols: &str, format: Format, compat: bool) -> String {
        let ks = Kernels::from_records([rec.clone()]);
        let rec = ks.get(0).expect("one row");
        let mode = if compat { Mode::Apex } else { Mode::Fixed };
        let mut e = Engine::new(mode);
        let res = e.resolve(rec, decode_first_marker(rec));
        let k = estimate_kernel(rec, &res, mode);
        let row = Row::new(29, rec, &k, compat);
        let cols: ColumnList = cols.parse().unwrap();
        let mut p = Printer::new(Vec::new(), &cols.0, format, compat).unwrap();
        p.write_header().unwrap();
        p.write_row(&row).unwrap();
        String::from_utf8(p.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn csv_row_like_pyprof() {
        // pyprof-semantics.md §8 "CSV row example"
        let out = print(
            &record(),
            "idx,layer,trace,seq,altseq,block,grid,tid,device,stream,sil,kernel",
            Format::Csv,
            true,
        );
        assert_eq!(
            out.lines().nth(1).unwrap(),
            r#""29","Conv1:BN","/a/b/x.py:10,/a/b/y.py:20","31,32","-","128,1,1","1,1,1","1234","0","7","1000","void_foo<int>_(x)""#
        );
    }

    #[test]
    fn empty_op_b17() {
        let r = record();
        // PyProf prints an empty op as an empty field; the default mode prints na
        assert_eq!(
            print(&r, "idx,mod,op,params,tc,flops", Format::Space, true)
                .lines()
                .nth(1)
                .unwrap(),
            "29 na  na=na, na 0"
        );
        assert_eq!(
            print(&r, "idx,mod,op,params,tc,flops", Format::Space, false)
                .lines()
                .nth(1)
                .unwrap(),
            "29 na na na=na, na 0"
        );
        assert_eq!(
            print(&r, "op", Format::Csv, true).lines().nth(1).unwrap(),
            "\"\""
        );
    }

    #[test]
    fn columnated_trailing_space_b19() {
        let r = record();
        let compat = print(&r, "idx,trace,dir,kernel", Format::Columns(60), true);
        let fixed = print(&r, "idx,trace,dir,kernel", Format::Columns(60), false);
        for l in compat.lines() {
            assert_eq!(l.chars().count(), 64, "{l:?}");
            assert!(l.ends_with(' '));
        }
        for l in fixed.lines() {
            assert_eq!(l.chars().count(), 60, "{l:?}");
        }
        assert_eq!(
            compat.lines().nth(1).unwrap(),
            "     29 y.py:20                   fprop void_foo<int>_(x)       "
        );
    }

    #[test]
    fn csv_escapes_quotes_b18() {
        let mut r = record();
        r.short_name = Cow::Borrowed("k\"q");
        assert_eq!(
            print(&r, "kernel", Format::Csv, true)
                .lines()
                .nth(1)
                .unwrap(),
            r#""k""q""#
        );
    }
}
