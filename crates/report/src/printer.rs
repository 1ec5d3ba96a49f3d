//! The three output formats, streaming, generic over `io::Write`.
//!
//! - **space** (default): values joined by one space. `--compat` prints
//!   PyProf's `str()` of each value verbatim; the default mode also writes
//!   whitespace inside a text cell as `_` and an empty text cell as `-`, so
//!   every row has the same number of fields for awk.
//! - **columnated** (`-w N`): fixed widths from [`COLUMNS`]'s minimums; the
//!   kernel and params columns share what is left of `N`. Text is
//!   left-aligned and truncated, numbers right-aligned and never truncated,
//!   FLOPs and bytes printed like Python's `%d`. `--compat` keeps PyProf's
//!   layout (every cell followed by a space, so lines are `N + #columns`
//!   wide, B19); the default mode separates cells by one space and fits
//!   lines in `N`.
//! - **CSV**: embedded quotes doubled by the `csv` crate (PyProf did not
//!   escape them, B18). With `--compat` every field is quoted and an
//!   unknown number is PyProf's `na`; in the default mode fields are quoted
//!   only when they must be and an unknown number is an empty, unquoted
//!   cell, so that DuckDB's `read_csv_auto`, Polars' `read_csv` (which
//!   reads `""` as an empty string, not a null) and pandas type the column
//!   as numbers.
//! - **TSV**: values separated by tabs, no quoting; tabs, newlines and
//!   other control characters inside text become spaces; unknown numbers as
//!   in CSV.
//!
//! [`COLUMNS`]: crate::column::COLUMNS

use std::io::{self, Write};

use crate::column::{Column, Kind};
use crate::escape::printable_ascii;
use crate::row::{Row, Value};

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Space-separated.
    Space,
    /// Columnated to this total width.
    Columns(usize),
    /// CSV.
    Csv,
    /// Tab-separated values.
    Tsv,
    /// JSON Lines: one object per row, keyed by column (`-c` names),
    /// numbers as numbers, unknown numbers `null`; no header line.
    Json,
}

/// `-w` is narrower than the chosen columns need.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("-w {width} is too narrow: columns {columns} need a width of at least {need}")]
pub struct LayoutError {
    /// The width asked for.
    pub width: usize,
    /// The minimum.
    pub need: usize,
    /// The columns, comma separated.
    pub columns: String,
}

/// Column widths of columnated output.
pub fn widths(columns: &[Column], width: usize, compat: bool) -> Result<Vec<usize>, LayoutError> {
    let mins: usize = columns.iter().map(|c| c.spec().min_width).sum();
    let seps = if compat {
        0
    } else {
        columns.len().saturating_sub(1)
    };
    let need = mins + seps;
    if width < need {
        return Err(LayoutError {
            width,
            need,
            columns: columns
                .iter()
                .map(|c| c.spec().key)
                .collect::<Vec<_>>()
                .join(","),
        });
    }
    let rem = width - need;
    let has = |c: Column| columns.contains(&c);
    let (kernel, params) = match (has(Column::Kernel), has(Column::Params)) {
        // PyProf gives each half, rounded down; the default mode gives the
        // odd column to the kernel so that lines are exactly `width` wide
        (true, true) if compat => (rem / 2, rem / 2),
        (true, true) => (rem - rem / 2, rem / 2),
        (true, false) => (rem, 0),
        (false, true) => (0, rem),
        (false, false) => (0, 0),
    };
    Ok(columns
        .iter()
        .map(|c| match c {
            Column::Kernel => kernel,
            Column::Params => params,
            c => c.spec().min_width,
        })
        .collect())
}

enum Sink<W: Write> {
    Space(W),
    Tsv(W),
    Json(W),
    Columns(W, Vec<usize>),
    Csv(Box<csv::Writer<W>>),
}

/// Writes a header and rows in one format.
pub struct Printer<W: Write> {
    sink: Sink<W>,
    columns: Vec<Column>,
    compat: bool,
    cell: String,
    line: String,
}

fn csv_io(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("CSV: {other:?}")),
    }
}

impl<W: Write> Printer<W> {
    /// A printer of `columns` in `format`. Fails when `-w` is too narrow.
    pub fn new(
        out: W,
        columns: &[Column],
        format: Format,
        compat: bool,
    ) -> Result<Printer<W>, LayoutError> {
        let sink = match format {
            Format::Space => Sink::Space(out),
            Format::Tsv => Sink::Tsv(out),
            Format::Json => Sink::Json(out),
            Format::Columns(w) => Sink::Columns(out, widths(columns, w, compat)?),
            Format::Csv => Sink::Csv(Box::new(
                csv::WriterBuilder::new()
                    .quote_style(if compat {
                        csv::QuoteStyle::Always
                    } else {
                        csv::QuoteStyle::Necessary
                    })
                    .from_writer(out),
            )),
        };
        Ok(Printer {
            sink,
            columns: columns.to_vec(),
            compat,
            cell: String::new(),
            line: String::with_capacity(256),
        })
    }

    /// The header line.
    pub fn write_header(&mut self) -> io::Result<()> {
        let headers = self.columns.iter().map(|c| c.spec().header);
        match &mut self.sink {
            Sink::Csv(w) => w.write_record(headers).map_err(csv_io),
            Sink::Space(w) => {
                let h: Vec<&str> = headers.collect();
                writeln!(w, "{}", h.join(" "))
            }
            Sink::Tsv(w) => {
                let h: Vec<&str> = headers.collect();
                writeln!(w, "{}", h.join("\t"))
            }
            Sink::Json(_) => Ok(()),
            Sink::Columns(w, widths) => {
                self.line.clear();
                for (i, (h, width)) in headers.zip(widths.iter()).enumerate() {
                    if i > 0 && !self.compat {
                        self.line.push(' ');
                    }
                    pad_text(&mut self.line, h, *width);
                    if self.compat {
                        self.line.push(' ');
                    }
                }
                self.line.push('\n');
                w.write_all(self.line.as_bytes())
            }
        }
    }

    /// One row.
    pub fn write_row(&mut self, row: &Row<'_>) -> io::Result<()> {
        let columnated = matches!(self.sink, Sink::Columns(..));
        self.line.clear();
        for (i, col) in self.columns.iter().enumerate() {
            self.cell.clear();
            let v = row.value(*col, columnated, &mut self.cell);
            // a columnated text cell shows its first `width` characters,
            // which are those of its first `width` escaped: the rest (most
            // of a long kernel name) is cut before it is looked at
            if let (Sink::Columns(_, widths), Value::Text, Kind::Text) =
                (&self.sink, v, col.spec().kind)
            {
                cut_chars(&mut self.cell, widths.get(i).copied().unwrap_or(0));
            }
            // trace text reaches a terminal here: control characters made
            // visible (CSV quotes its fields instead, and TSV writes them as
            // spaces)
            if matches!(v, Value::Text)
                && !matches!(self.sink, Sink::Csv(_) | Sink::Tsv(_))
                && !printable_ascii(self.cell.as_bytes())
                && self.cell.chars().any(char::is_control)
            {
                let raw = std::mem::take(&mut self.cell);
                crate::escape::push_escaped(&mut self.cell, &raw);
            }
            match &mut self.sink {
                Sink::Space(_) => {
                    if i > 0 {
                        self.line.push(' ');
                    }
                    match v {
                        Value::Text if !self.compat => spaced_text(&mut self.line, &self.cell),
                        Value::Text => self.line.push_str(&self.cell),
                        v => push_value(&mut self.line, v, false),
                    }
                }
                Sink::Json(_) => {
                    self.line.push(if i == 0 { '{' } else { ',' });
                    self.line.push_str(&json_string(col.spec().key));
                    self.line.push(':');
                    match v {
                        Value::Text => self.line.push_str(&json_string(&self.cell)),
                        Value::Num(None) => self.line.push_str("null"),
                        Value::Num(Some(n)) if !n.as_f64().is_finite() => {
                            self.line.push_str("null");
                        }
                        v => push_value(&mut self.line, v, false),
                    }
                }
                Sink::Tsv(_) => {
                    if i > 0 {
                        self.line.push('\t');
                    }
                    match v {
                        Value::Text if printable_ascii(self.cell.as_bytes()) => {
                            self.line.push_str(&self.cell);
                        }
                        Value::Text => self.line.extend(
                            self.cell
                                .chars()
                                .map(|c| if c.is_control() { ' ' } else { c }),
                        ),
                        Value::Num(None) if !self.compat => {}
                        v => push_value(&mut self.line, v, false),
                    }
                }
                Sink::Csv(w) => match v {
                    Value::Text => w.write_field(&self.cell).map_err(csv_io)?,
                    Value::Num(None) if !self.compat => w.write_field("").map_err(csv_io)?,
                    v => {
                        self.line.clear();
                        push_value(&mut self.line, v, false);
                        w.write_field(&self.line).map_err(csv_io)?;
                    }
                },
                Sink::Columns(_, widths) => {
                    let width = widths.get(i).copied().unwrap_or(0);
                    if i > 0 && !self.compat {
                        self.line.push(' ');
                    }
                    match (v, col.spec().kind) {
                        (Value::Text, Kind::Text) => pad_text(&mut self.line, &self.cell, width),
                        (Value::Text, Kind::Int) => pad_right(&mut self.line, &self.cell, width),
                        (v, _) => {
                            // the cell holds no text for a number
                            self.cell.clear();
                            push_value(&mut self.cell, v, true);
                            pad_right(&mut self.line, &self.cell, width);
                        }
                    }
                    if self.compat {
                        self.line.push(' ');
                    }
                }
            }
        }
        match &mut self.sink {
            Sink::Csv(w) => w.write_record(None::<&[u8]>).map_err(csv_io),
            Sink::Json(w) => {
                if self.line.is_empty() {
                    self.line.push('{');
                }
                self.line.push_str("}\n");
                w.write_all(self.line.as_bytes())
            }
            Sink::Space(w) | Sink::Tsv(w) | Sink::Columns(w, _) => {
                self.line.push('\n');
                w.write_all(self.line.as_bytes())
            }
        }
    }

    /// Flush buffered output.
    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Space(w) | Sink::Tsv(w) | Sink::Json(w) | Sink::Columns(w, _) => w.flush(),
            Sink::Csv(w) => w.flush(),
        }
    }

    /// Flush and return the writer.
    pub fn into_inner(self) -> io::Result<W> {
        match self.sink {
            Sink::Space(w) | Sink::Tsv(w) | Sink::Json(w) | Sink::Columns(w, _) => Ok(w),
            Sink::Csv(w) => w
                .into_inner()
                .map_err(|e| io::Error::new(e.error().kind(), e.error().to_string())),
        }
    }
}

/// A number: Python's `str()`, or `%d` in columnated output; `na` when
/// unknown.
fn push_value(out: &mut String, v: Value, percent_d: bool) {
    match v {
        Value::Int(i) => out.push_str(itoa::Buffer::new().format(i)),
        Value::Num(Some(n)) if percent_d => n.write_percent_d(out),
        Value::Num(Some(n)) => n.write_str(out),
        Value::Num(None) => out.push_str("na"),
        Value::Text => {}
    }
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// Default space mode: one field per cell.
fn spaced_text(out: &mut String, s: &str) {
    if s.is_empty() {
        out.push('-');
    } else if printable_ascii(s.as_bytes()) {
        // the only whitespace printable ASCII holds is the space: the
        // pieces between spaces copied whole, not a char at a time (the
        // char walk was 6 % of `prof`'s instructions)
        push_replacing(out, s, b' ', '_');
    } else {
        out.extend(s.chars().map(|c| if c.is_whitespace() { '_' } else { c }));
    }
}

/// Append `s` with every `from` (an ASCII character: its byte is always a
/// whole character) written as `to`: the pieces between them copied
/// whole, found by `memchr` (`str::split` took twice the instructions).
pub(crate) fn push_replacing(out: &mut String, s: &str, from: u8, to: char) {
    debug_assert!(from.is_ascii());
    let mut start = 0;
    for at in memchr::memchr_iter(from, s.as_bytes()) {
        out.push_str(s.get(start..at).unwrap_or_default());
        out.push(to);
        start = at + 1;
    }
    out.push_str(s.get(start..).unwrap_or_default());
}

/// `s` cut to its first `w` characters.
fn cut_chars(s: &mut String, w: usize) {
    let end = head_chars(s, w).0.len();
    s.truncate(end);
}

/// The first `w` characters of `s` (all of it when shorter), and how
/// many they are. When the first `w` bytes are ASCII they are the first
/// `w` characters, taken at once (a character at a time was 5 % of
/// `prof -w`'s instructions; the kernel names are long).
fn head_chars(s: &str, w: usize) -> (&str, usize) {
    if let Some(h) = s.get(..w.min(s.len())).filter(|h| h.is_ascii()) {
        return (h, h.len());
    }
    let end = s.char_indices().nth(w).map_or(s.len(), |(i, _)| i);
    let h = s.get(..end).unwrap_or(s);
    (h, h.chars().count())
}

/// Spaces, `n` of them.
fn push_spaces(out: &mut String, mut n: usize) {
    const SPACES: &str = "                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// Python's `'%-w.ws' % s`: truncated to `w` characters, padded to `w`.
fn pad_text(out: &mut String, s: &str, w: usize) {
    let (head, n) = head_chars(s, w);
    out.push_str(head);
    push_spaces(out, w - n);
}

/// Python's `'%wd'`: right-aligned, never truncated.
fn pad_right(out: &mut String, s: &str, w: usize) {
    let n = if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    };
    push_spaces(out, w.saturating_sub(n));
    out.push_str(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_like_pyprof() {
        let cols: Vec<Column> = "idx,dir,sub,mod,op,kernel,params,sil"
            .parse::<crate::ColumnList>()
            .unwrap()
            .0;
        let w = widths(&cols, 150, true).unwrap();
        assert_eq!(w, vec![7, 5, 3, 15, 15, 47, 47, 10]);
        let w = widths(&cols, 150, false).unwrap();
        assert_eq!(w.iter().sum::<usize>() + cols.len() - 1, 150);
        let e = widths(&cols, 54, true).unwrap_err();
        assert_eq!(e.need, 55);
        assert_eq!(
            e.to_string(),
            "-w 54 is too narrow: columns idx,dir,sub,mod,op,kernel,params,sil need a width of at least 55"
        );
        assert!(widths(&cols, 55, true).is_ok());
        assert!(widths(&cols, 55, false).is_err());
    }

    #[test]
    fn padding() {
        let mut s = String::new();
        pad_text(&mut s, "Direction", 5);
        pad_right(&mut s, "12", 4);
        pad_right(&mut s, "123456", 4);
        pad_text(&mut s, "é", 2);
        assert_eq!(s, "Direc  12123456é ");
    }

    /// Text of the characters the fast paths tell apart: printable ASCII,
    /// the space, ASCII and C1 controls, Unicode whitespace that is not
    /// ASCII, and other multi-byte characters.
    fn mixed_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let c = prop_oneof![
            6 => proptest::char::range('!', '~'),
            2 => Just(' '),
            1 => prop::sample::select(vec![
                '\t', '\n', '\x0b', '\x0c', '\r', '\x1b', '\x7f', '\u{85}', '\u{9f}',
                '\u{a0}', '\u{1680}', '\u{2003}', '\u{2028}', '\u{3000}', 'é', '°', '日',
                '🦀',
            ]),
        ];
        proptest::collection::vec(c, 0..80).prop_map(|v| v.into_iter().collect())
    }

    proptest::proptest! {
        /// Each fast path writes what the char-by-char definition writes.
        #[test]
        fn fast_paths_write_what_the_definitions_do(s in mixed_text(), w in 0usize..90) {
            let mut got = String::from("<");
            spaced_text(&mut got, &s);
            let want = if s.is_empty() {
                "<-".to_owned()
            } else {
                let t: String = s.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect();
                format!("<{t}")
            };
            proptest::prop_assert_eq!(&got, &want);

            let mut got = String::from(">");
            pad_text(&mut got, &s, w);
            let kept: String = s.chars().take(w).collect();
            let pad = w - kept.chars().count();
            proptest::prop_assert_eq!(got, format!(">{kept}{}", " ".repeat(pad)));

            let mut got = String::new();
            pad_right(&mut got, &s, w);
            let pad = w.saturating_sub(s.chars().count());
            proptest::prop_assert_eq!(got, format!("{}{s}", " ".repeat(pad)));

            let mut got = s.clone();
            cut_chars(&mut got, w);
            proptest::prop_assert_eq!(got, s.chars().take(w).collect::<String>());

            let mut got = String::new();
            push_replacing(&mut got, &s, b' ', '_');
            proptest::prop_assert_eq!(got, s.replace(' ', "_"));
        }

        /// A cell's control characters are found whether or not it is
        /// printable ASCII, and TSV writes them as spaces.
        #[test]
        fn control_characters_are_made_visible(s in mixed_text()) {
            let mut out = Vec::new();
            let mut p = Printer::new(&mut out, &[Column::Op], Format::Space, true).unwrap();
            let mut tsv_out = Vec::new();
            let mut tsv = Printer::new(&mut tsv_out, &[Column::Op], Format::Tsv, true).unwrap();
            let row = Row {
                idx: 1,
                seq: &[],
                altseq: &[],
                tid: 0,
                layer: rprof_ops::StrList::Owned(&[]),
                trace: rprof_ops::StrList::Owned(&[]),
                dir: "",
                sub: 0,
                module: "",
                op: &s,
                kernel: "",
                params: "",
                sil: 0,
                tc: rprof_ops::Tc::Unknown,
                device: 0,
                stream: 0,
                grid: [0; 3],
                block: [0; 3],
                flops: None,
                bytes: None,
            };
            let mut cols_out = Vec::new();
            let mut cols = Printer::new(&mut cols_out, &[Column::Op], Format::Columns(40), false).unwrap();
            p.write_row(&row).unwrap();
            tsv.write_row(&row).unwrap();
            cols.write_row(&row).unwrap();
            drop((p, tsv, cols));
            let mut want = String::new();
            crate::escape::push_escaped(&mut want, &s);
            proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), format!("{want}\n"));
            // the op column is 15 wide
            let shown: String = want.chars().take(15).collect();
            let pad = 15 - shown.chars().count();
            proptest::prop_assert_eq!(
                String::from_utf8(cols_out).unwrap(),
                format!("{shown}{}\n", " ".repeat(pad))
            );
            let want: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
            proptest::prop_assert_eq!(String::from_utf8(tsv_out).unwrap(), format!("{want}\n"));
        }
    }
}
