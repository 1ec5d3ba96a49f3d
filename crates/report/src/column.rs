//! The 20 columns of PyProf's `prof`, declared once.
//!
//! [`COLUMNS`] drives everything about a column: the key users give to
//! `-c`, the header, the minimum width and alignment of columnated output,
//! and the one-line help that `rprof prof --help` prints.

use std::fmt;

/// A column of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Column {
    /// 1-based row index.
    Idx,
    /// PyTorch sequence id(s).
    Seq,
    /// Other sequence ids of the enclosing markers.
    AltSeq,
    /// Launching thread id.
    Tid,
    /// Layer names (`layer:` NVTX ranges).
    Layer,
    /// Python call stack.
    Trace,
    /// `fprop` / `bprop`.
    Dir,
    /// Kernel index within its op.
    Sub,
    /// Module of the op.
    Mod,
    /// Op name.
    Op,
    /// Kernel short name.
    Kernel,
    /// Op parameters.
    Params,
    /// GPU time, ns.
    Sil,
    /// Tensor-core use.
    Tc,
    /// GPU device.
    Device,
    /// CUDA stream.
    Stream,
    /// Grid dimensions.
    Grid,
    /// Block dimensions.
    Block,
    /// Floating point operations.
    Flops,
    /// Bytes to and from DRAM.
    Bytes,
}

/// How a column's values are formatted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Numbers: right-aligned and never truncated in columnated output.
    Int,
    /// Text: left-aligned and truncated to the column width.
    Text,
}

/// Everything about one column.
#[derive(Clone, Copy, Debug)]
pub struct ColumnSpec {
    /// The column.
    pub column: Column,
    /// What users type after `-c`.
    pub key: &'static str,
    /// The table header.
    pub header: &'static str,
    /// Minimum width in columnated output (0: shares what `-w` leaves).
    pub min_width: usize,
    /// Formatting.
    pub kind: Kind,
    /// One line for `--help`.
    pub help: &'static str,
}

const fn col(
    column: Column,
    key: &'static str,
    header: &'static str,
    min_width: usize,
    kind: Kind,
    help: &'static str,
) -> ColumnSpec {
    ColumnSpec {
        column,
        key,
        header,
        min_width,
        kind,
        help,
    }
}

use Kind::{Int, Text};

/// Every column, in PyProf's order (pyprof-semantics.md §4.6).
pub const COLUMNS: &[ColumnSpec] = &[
    col(Column::Idx, "idx", "Idx", 7, Int, "row index, 1-based"),
    col(
        Column::Seq,
        "seq",
        "SeqId",
        7,
        Text,
        "PyTorch sequence id(s) of the op",
    ),
    col(
        Column::AltSeq,
        "altseq",
        "AltSeqId",
        7,
        Text,
        "other sequence ids of the enclosing markers",
    ),
    col(
        Column::Tid,
        "tid",
        "TId",
        12,
        Int,
        "id of the thread that launched the kernel",
    ),
    col(
        Column::Layer,
        "layer",
        "Layer",
        10,
        Text,
        "user layer names (NVTX \"layer:\" ranges), outermost first",
    ),
    col(
        Column::Trace,
        "trace",
        "Trace",
        25,
        Text,
        "Python call stack (file:line)",
    ),
    col(Column::Dir, "dir", "Direction", 5, Text, "fprop or bprop"),
    col(
        Column::Sub,
        "sub",
        "Sub",
        3,
        Int,
        "index of the kernel within its op (0 = first)",
    ),
    col(
        Column::Mod,
        "mod",
        "Module",
        15,
        Text,
        "module of the op (torch, Tensor, torch.nn.functional, ...)",
    ),
    col(Column::Op, "op", "Op", 15, Text, "operation"),
    col(Column::Kernel, "kernel", "Kernel", 0, Text, "kernel name"),
    col(
        Column::Params,
        "params",
        "Params",
        0,
        Text,
        "op parameters: shapes and data type",
    ),
    col(
        Column::Sil,
        "sil",
        "Sil(ns)",
        10,
        Int,
        "silicon time: GPU duration of the kernel, ns",
    ),
    col(
        Column::Tc,
        "tc",
        "TC",
        2,
        Text,
        "tensor cores: 1 used, 0 not used, - not applicable, na unknown",
    ),
    col(Column::Device, "device", "Device", 3, Int, "GPU device id"),
    col(Column::Stream, "stream", "Stream", 3, Int, "CUDA stream id"),
    col(Column::Grid, "grid", "Grid", 12, Text, "grid dimensions"),
    col(
        Column::Block,
        "block",
        "Block",
        12,
        Text,
        "block dimensions",
    ),
    col(
        Column::Flops,
        "flops",
        "FLOPs",
        12,
        Int,
        "floating point operations (an FMA is 2)",
    ),
    col(
        Column::Bytes,
        "bytes",
        "Bytes",
        12,
        Int,
        "bytes read from and written to DRAM",
    ),
];

impl Column {
    /// This column's row of [`COLUMNS`].
    pub fn spec(self) -> &'static ColumnSpec {
        // every variant has a row (tested)
        match COLUMNS.iter().find(|c| c.column == self) {
            Some(s) => s,
            None => &COLUMNS[0],
        }
    }
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spec().key)
    }
}

/// The default `-c`: PyProf's.
pub const DEFAULT_COLUMNS: &str = "idx,dir,sub,mod,op,kernel,params,sil";

/// All keys joined by `,`.
pub fn valid_keys() -> String {
    COLUMNS.iter().map(|c| c.key).collect::<Vec<_>>().join(",")
}

/// The column list for `--help`: `key   meaning`, one per line.
pub fn help_table() -> String {
    let w = COLUMNS.iter().map(|c| c.key.len()).max().unwrap_or(0);
    let mut s = String::new();
    for c in COLUMNS {
        s.push_str(&format!("  {:<w$}  {}\n", c.key, c.help));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_once_and_keys_unique() {
        let mut keys: Vec<&str> = COLUMNS.iter().map(|c| c.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), COLUMNS.len());
        let mut cols: Vec<String> = COLUMNS.iter().map(|c| format!("{:?}", c.column)).collect();
        cols.sort_unstable();
        cols.dedup();
        assert_eq!(cols.len(), 20);
        for c in COLUMNS {
            assert_eq!(c.column.spec().key, c.key);
        }
    }

    #[test]
    fn pyprof_names() {
        assert_eq!(
            valid_keys(),
            "idx,seq,altseq,tid,layer,trace,dir,sub,mod,op,kernel,params,sil,tc,device,stream,grid,block,flops,bytes"
        );
    }
}
