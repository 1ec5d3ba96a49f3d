//! One printed row and the value of each of its cells.

use rprof_model::KernelRef;
use rprof_ops::{KernelEstimate, Num, StrList, Tc};

use crate::column::Column;

/// One row: a kernel record plus what the models said about it.
#[derive(Clone, Debug)]
pub struct Row<'a> {
    /// 1-based index among the records.
    pub idx: u64,
    /// Sequence ids.
    pub seq: &'a [i64],
    /// Alternative sequence ids.
    pub altseq: &'a [i64],
    /// Thread id.
    pub tid: u64,
    /// Layer names.
    pub layer: StrList<'a>,
    /// Call stack.
    pub trace: StrList<'a>,
    /// Direction.
    pub dir: &'a str,
    /// Sub-sequence id.
    pub sub: i64,
    /// Module.
    pub module: &'a str,
    /// Op.
    pub op: &'a str,
    /// Kernel short name (spaces are printed as `_`).
    pub kernel: &'a str,
    /// Params text.
    pub params: &'a str,
    /// GPU time, ns.
    pub sil: i64,
    /// Tensor cores.
    pub tc: Tc,
    /// Device.
    pub device: i64,
    /// Stream.
    pub stream: i64,
    /// Grid.
    pub grid: [i64; 3],
    /// Block.
    pub block: [i64; 3],
    /// FLOPs (`None`: unknown).
    pub flops: Option<Num>,
    /// Bytes (`None`: unknown).
    pub bytes: Option<Num>,
}

/// The value of one cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i128),
    /// A FLOP or byte count; `None` prints `na`.
    Num(Option<Num>),
    /// Text, written into the caller's buffer.
    Text,
}

impl<'a> Row<'a> {
    /// The row of record `idx`. With `compat == false`, an empty direction,
    /// module or op prints `na` (B17: PyProf computed that and dropped it).
    pub fn new(
        idx: u64,
        rec: KernelRef<'a, '_>,
        k: &'a KernelEstimate<'a>,
        compat: bool,
    ) -> Row<'a> {
        let rec = rec.row();
        let na = |s: &'a str| if !compat && s.is_empty() { "na" } else { s };
        Row {
            idx,
            seq: &rec.seq_id,
            altseq: &rec.alt_seq_id,
            tid: rec.tid,
            layer: k.layer,
            trace: k.trace,
            dir: na(rec.dir.as_str()),
            sub: rec.sub_seq_id,
            module: na(k.module),
            op: na(k.op),
            kernel: &rec.short_name,
            params: &k.estimate.params,
            sil: rec.duration_ns,
            tc: k.estimate.tc,
            device: rec.device,
            stream: rec.stream,
            grid: rec.grid,
            block: rec.block,
            flops: k.estimate.flops,
            bytes: k.estimate.bytes,
        }
    }

    /// The value of `col`. Text is appended to `buf` (which the caller
    /// clears). `columnated` selects PyProf's short trace (the last frame's
    /// file name and line).
    pub fn value(&self, col: Column, columnated: bool, buf: &mut String) -> Value {
        match col {
            Column::Idx => Value::Int(i128::from(self.idx)),
            Column::Seq => ints(buf, self.seq),
            Column::AltSeq => ints(buf, self.altseq),
            Column::Tid => Value::Int(i128::from(self.tid)),
            Column::Layer => joined(buf, self.layer, ":"),
            Column::Trace => match self.trace.last() {
                Some(last) if columnated => {
                    buf.push_str(last.rsplit('/').next().unwrap_or(last));
                    Value::Text
                }
                _ => joined(buf, self.trace, ","),
            },
            Column::Dir => text(buf, self.dir),
            Column::Sub => Value::Int(i128::from(self.sub)),
            Column::Mod => text(buf, self.module),
            Column::Op => text(buf, self.op),
            Column::Kernel => {
                // PyProf's Data.name: spaces become underscores
                crate::printer::push_replacing(buf, self.kernel, b' ', '_');
                Value::Text
            }
            Column::Params => text(buf, self.params),
            Column::Sil => Value::Int(i128::from(self.sil)),
            Column::Tc => text(buf, self.tc.as_str()),
            Column::Device => Value::Int(i128::from(self.device)),
            Column::Stream => Value::Int(i128::from(self.stream)),
            Column::Grid => dims(buf, self.grid),
            Column::Block => dims(buf, self.block),
            Column::Flops => Value::Num(self.flops),
            Column::Bytes => Value::Num(self.bytes),
        }
    }
}

fn text(buf: &mut String, s: &str) -> Value {
    buf.push_str(s);
    Value::Text
}

/// `1,2,3`, or `-` when empty.
fn ints(buf: &mut String, v: &[i64]) -> Value {
    if v.is_empty() {
        buf.push('-');
    }
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            buf.push(',');
        }
        buf.push_str(itoa::Buffer::new().format(*x));
    }
    Value::Text
}

/// The strings joined by `sep`, or `-` when that is empty.
fn joined(buf: &mut String, v: StrList<'_>, sep: &str) -> Value {
    let start = buf.len();
    for (i, s) in v.iter().enumerate() {
        if i > 0 {
            buf.push_str(sep);
        }
        buf.push_str(s);
    }
    if buf.len() == start {
        buf.push('-');
    }
    Value::Text
}

/// `x,y,z`.
fn dims(buf: &mut String, d: [i64; 3]) -> Value {
    let mut digits = itoa::Buffer::new();
    for (i, x) in d.iter().enumerate() {
        if i > 0 {
            buf.push(',');
        }
        buf.push_str(digits.format(*x));
    }
    Value::Text
}
