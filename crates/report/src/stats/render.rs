//! Output of the stats reports in nsys's formats: `column` (nsys's console
//! layout), `table` (boxed), `csv`, `tsv` and `json`, with `--timeunit` and
//! `--memunit` conversions as nsys prints them (µs: 3 decimals, ms and s: 4;
//! MB: 3). The layouts are written by hand because they must match nsys's
//! byte for byte (centred headings, two-space gaps), which no table crate
//! reproduces.

use std::borrow::Cow;
use std::io::{self, Write};

use rprof_model::{NameId, Names};

use super::table::{Cell, Col, Table, Unit};

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// nsys's human-readable columns.
    Column,
    /// A boxed table.
    Table,
    /// Comma-separated values.
    Csv,
    /// Tab-separated values.
    Tsv,
    /// JSON: an array of row objects keyed by heading.
    Json,
}

/// Time unit of duration and timestamp columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Nanoseconds (the data's own unit; no conversion).
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl TimeUnit {
    /// From `ns|us|ms|s` (and nsys's `nsec|usec|msec|sec`).
    pub fn parse(s: &str) -> Option<TimeUnit> {
        Some(match s {
            "ns" | "nsec" => TimeUnit::Ns,
            "us" | "usec" => TimeUnit::Us,
            "ms" | "msec" => TimeUnit::Ms,
            "s" | "sec" => TimeUnit::S,
            _ => return None,
        })
    }

    fn label(self) -> &'static str {
        match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        }
    }

    /// (divisor, decimals).
    fn scale(self) -> (f64, usize) {
        match self {
            TimeUnit::Ns => (1.0, 0),
            TimeUnit::Us => (1e3, 3),
            TimeUnit::Ms => (1e6, 4),
            TimeUnit::S => (1e9, 4),
        }
    }
}

/// Unit of byte columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemUnit {
    /// Bytes (no conversion).
    B,
    /// 10^3 bytes.
    Kb,
    /// 10^6 bytes (nsys's default).
    Mb,
    /// 10^9 bytes.
    Gb,
}

impl MemUnit {
    /// From `B|KB|MB|GB`.
    pub fn parse(s: &str) -> Option<MemUnit> {
        Some(match s {
            "B" => MemUnit::B,
            "KB" => MemUnit::Kb,
            "MB" => MemUnit::Mb,
            "GB" => MemUnit::Gb,
            _ => return None,
        })
    }

    fn label(self) -> &'static str {
        match self {
            MemUnit::B => "B",
            MemUnit::Kb => "KB",
            MemUnit::Mb => "MB",
            MemUnit::Gb => "GB",
        }
    }

    fn scale(self) -> f64 {
        match self {
            MemUnit::B => 1.0,
            MemUnit::Kb => 1e3,
            MemUnit::Mb => 1e6,
            MemUnit::Gb => 1e9,
        }
    }
}

/// Render options.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Format.
    pub format: Format,
    /// Time unit.
    pub time: TimeUnit,
    /// Memory unit.
    pub mem: MemUnit,
}

/// The heading of a column as nsys writes it (`Total Time (ns)`).
pub fn heading(c: &Col, o: &Options) -> String {
    match c.unit {
        Unit::None => c.head.to_owned(),
        Unit::Percent => format!("{} (%)", c.head),
        Unit::Duration | Unit::Timestamp => format!("{} ({})", c.head, o.time.label()),
        Unit::Bytes => format!("{} ({})", c.head, o.mem.label()),
        Unit::Throughput => format!("{} ({}/s)", c.head, o.mem.label()),
    }
}

/// A float as Python's `repr` writes it for ordinary magnitudes (`4.0`,
/// `8160379.586206896`).
fn py_float(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "nan".into()
        } else if f > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

/// A cell as text into `buf` (cleared first); `false` for `Null` (empty
/// text). Writes into one reused buffer: millions of cells are formatted per
/// report, and a `String` each was a large share of its time.
fn cell_into(c: &Cell, col: &Col, names: &Names, o: &Options, buf: &mut String) -> bool {
    use std::fmt::Write as _;
    buf.clear();
    let scaled = |buf: &mut String, v: f64, div: f64, dec: usize| {
        let _ = write!(buf, "{:.*}", dec, v / div);
    };
    match (c, col.unit) {
        (Cell::Null, _) => return false,
        (Cell::Text(s), _) => buf.push_str(s),
        (Cell::Name(id), _) => buf.push_str(names.get(*id)),
        (Cell::Int(i), Unit::Duration | Unit::Timestamp) if o.time != TimeUnit::Ns => {
            let (d, n) = o.time.scale();
            scaled(buf, *i as f64, d, n);
        }
        (Cell::Round1(f) | Cell::Float(f), Unit::Duration | Unit::Timestamp)
            if o.time != TimeUnit::Ns =>
        {
            let (d, n) = o.time.scale();
            scaled(buf, *f, d, n);
        }
        (Cell::Int(i), Unit::Bytes | Unit::Throughput) if o.mem != MemUnit::B => {
            scaled(buf, *i as f64, o.mem.scale(), 3);
        }
        (Cell::Round1(f) | Cell::Float(f), Unit::Bytes | Unit::Throughput)
            if o.mem != MemUnit::B =>
        {
            scaled(buf, *f, o.mem.scale(), 3);
        }
        (Cell::Int(i), _) => buf.push_str(itoa::Buffer::new().format(*i)),
        (Cell::Round1(f), _) => one_decimal(buf, *f),
        (Cell::Float(f), _) => buf.push_str(&py_float(*f)),
    }
    true
}

/// `{f:.1}`, as integers when `f` is a whole number of tenths (as
/// [`round1`](super::table::round1) leaves it): the float formatter's exact
/// path took most of a large report's output time.
fn one_decimal(buf: &mut String, f: f64) {
    use std::fmt::Write as _;
    let Some(m) = whole_tenths(f) else {
        let _ = write!(buf, "{f:.1}");
        return;
    };
    if m < 0 {
        buf.push('-');
    }
    let a = m.unsigned_abs();
    buf.push_str(itoa::Buffer::new().format(a / 10));
    buf.push('.');
    buf.push(char::from(b'0' + (a % 10) as u8));
}

/// `f` in tenths when [`one_decimal`] writes it from the integer; `None`
/// when it is not a whole number of tenths (a tie for the formatter), too
/// large for exact integers, or -0.0: the formatter itself writes those.
fn whole_tenths(f: f64) -> Option<i64> {
    let tenths = (f * 10.0).round();
    let whole = tenths.abs() < 1e15 && (f * 10.0 - tenths).abs() < 1e-6;
    (whole && !(f == 0.0 && f.is_sign_negative())).then_some(tenths as i64)
}

/// Decimal digits of `n`.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// The length of what [`cell_into`] writes, for the cells a large table
/// is mostly made of (integers, and values of whole tenths, unscaled),
/// without writing them: the width pass of the text layouts formatted
/// every cell once before the writing pass formatted it again. `None`:
/// format it to know.
fn cell_width(c: &Cell, col: &Col, o: &Options) -> Option<usize> {
    let scaled = match col.unit {
        Unit::Duration | Unit::Timestamp => o.time != TimeUnit::Ns,
        Unit::Bytes | Unit::Throughput => o.mem != MemUnit::B,
        Unit::None | Unit::Percent => false,
    };
    if scaled {
        return None;
    }
    match c {
        Cell::Int(i) => Some(usize::from(*i < 0) + digits(i.unsigned_abs())),
        Cell::Round1(f) => {
            let m = whole_tenths(*f)?;
            Some(usize::from(m < 0) + digits(m.unsigned_abs() / 10) + 2)
        }
        _ => None,
    }
}

/// A cell as text (`None`: empty, SQL NULL).
fn cell_text(c: &Cell, col: &Col, names: &Names, o: &Options) -> Option<String> {
    let mut s = String::new();
    cell_into(c, col, names, o, &mut s).then_some(s)
}

/// A cell as a JSON value.
fn cell_json(c: &Cell, col: &Col, names: &Names, o: &Options) -> serde_json::Value {
    use serde_json::Value;
    match c {
        Cell::Null => Value::Null,
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Name(id) => Value::String(names.get(*id).to_owned()),
        Cell::Int(i) => {
            let converted = match col.unit {
                Unit::Duration | Unit::Timestamp => o.time != TimeUnit::Ns,
                Unit::Bytes | Unit::Throughput => o.mem != MemUnit::B,
                _ => false,
            };
            if converted {
                cell_text(c, col, names, o)
                    .and_then(|s| s.parse::<f64>().ok())
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number)
            } else {
                Value::from(*i)
            }
        }
        Cell::Round1(_) | Cell::Float(_) => cell_text(c, col, names, o)
            .and_then(|s| s.parse::<f64>().ok())
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
    }
}

/// Control characters of trace text, escaped for a terminal or a
/// tab-separated line.
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    crate::escape::escape_control(s)
}

/// Python's `str.center`: the odd space goes left when the padding and the
/// width are both odd.
fn center(s: &str, width: usize) -> String {
    let len = s.chars().count();
    if len >= width {
        return s.to_owned();
    }
    let pad = width - len;
    let left = pad / 2 + (pad & width & 1);
    format!("{}{}{}", " ".repeat(left), s, " ".repeat(pad - left))
}

/// Write one report in `o.format`, its names from `names`. The column and
/// table layouts start with nsys's ` ** Title (name):` line.
pub fn write(w: &mut dyn Write, t: &Table, names: &Names, o: &Options) -> io::Result<()> {
    match o.format {
        Format::Column | Format::Table => write_text(w, t, names, o),
        Format::Csv | Format::Tsv => write_sv(w, t, names, o),
        Format::Json => write_json(w, t, names, o),
    }
}

/// The headings in the order a JSON object of them prints (serde_json's
/// map is sorted by key; a repeated heading keeps its last value), with
/// their column indices.
fn json_keys(t: &Table, o: &Options) -> Vec<(String, usize)> {
    let mut keys: std::collections::BTreeMap<String, usize> = Default::default();
    for (i, c) in t.cols.iter().enumerate() {
        keys.insert(heading(c, o), i);
    }
    keys.into_iter().collect()
}

/// The rows as one pretty JSON array, written row by row (as
/// `serde_json::to_writer_pretty` of [`json_rows`] writes it, byte for byte,
/// without holding the rows as JSON values).
fn write_json(w: &mut dyn Write, t: &Table, names: &Names, o: &Options) -> io::Result<()> {
    let keys: Vec<(String, usize)> = json_keys(t, o)
        .into_iter()
        .map(|(k, i)| (serde_json::to_string(&k).unwrap_or_default(), i))
        .collect();
    if t.row_count() == 0 {
        return writeln!(w, "[]");
    }
    w.write_all(b"[\n")?;
    t.format_rows(
        names,
        |first, r, _: &mut (), out| {
            if !first {
                out.extend_from_slice(b",\n");
            }
            // a row shorter than the headings has only its own keys
            let present = keys.iter().filter(|(_, i)| *i < r.len()).count();
            if present == 0 {
                out.extend_from_slice(b"  {}");
                return;
            }
            out.extend_from_slice(b"  {\n");
            for (n, (k, i)) in keys.iter().filter(|(_, i)| *i < r.len()).enumerate() {
                out.extend_from_slice(b"    ");
                out.extend_from_slice(k.as_bytes());
                out.extend_from_slice(b": ");
                // writing to memory: serde_json fails only on its own
                // errors, and strings and finite numbers have none
                let _ = match &r[*i] {
                    Cell::Text(s) => serde_json::to_writer(&mut *out, s),
                    Cell::Name(id) => serde_json::to_writer(&mut *out, names.get(*id)),
                    c => serde_json::to_writer(&mut *out, &cell_json(c, &t.cols[*i], names, o)),
                };
                out.extend_from_slice(if n + 1 < present { b",\n" } else { b"\n" });
            }
            out.extend_from_slice(b"  }");
        },
        |bytes| w.write_all(bytes),
    )?;
    w.write_all(b"\n]\n")
}

/// The rows as a JSON array of objects keyed by heading.
pub fn json_rows(t: &Table, names: &Names, o: &Options) -> serde_json::Value {
    let heads: Vec<String> = t.cols.iter().map(|c| heading(c, o)).collect();
    let mut rows = Vec::with_capacity(t.row_count());
    let _ = t.for_each_row(names, |r| -> Result<(), ()> {
        let mut m = serde_json::Map::new();
        for ((h, c), col) in heads.iter().zip(r).zip(&t.cols) {
            m.insert(h.clone(), cell_json(c, col, names, o));
        }
        rows.push(serde_json::Value::Object(m));
        Ok(())
    });
    serde_json::Value::Array(rows)
}

fn write_sv(w: &mut dyn Write, t: &Table, names: &Names, o: &Options) -> io::Result<()> {
    let tsv = o.format == Format::Tsv;
    let mut b = csv::WriterBuilder::new();
    b.delimiter(if tsv { b'\t' } else { b',' })
        .quote_style(csv::QuoteStyle::Necessary)
        .flexible(true);
    let mut cw = b.from_writer(&mut *w);
    let heads: Vec<String> = t.cols.iter().map(|c| heading(c, o)).collect();
    cw.write_record(&heads).map_err(io::Error::other)?;
    cw.flush()?;
    drop(cw);
    let ncols = t.cols.len();
    let delim = if tsv { b'\t' } else { b',' };
    t.format_rows(
        names,
        |_, r, fields: &mut Vec<String>, out| {
            fields.resize(ncols, String::new());
            let n = r.len().min(ncols);
            for ((c, col), f) in r.iter().zip(&t.cols).zip(fields.iter_mut()) {
                if let Cell::Name(_) = c {
                    // written from the arena below
                    continue;
                }
                cell_into(c, col, names, o, f);
                if tsv && f.chars().any(char::is_control) {
                    *f = escape_controls(f).into_owned();
                }
            }
            let field = |i: usize| -> Cow<'_, [u8]> {
                match r[i] {
                    Cell::Name(id) => {
                        let name = names.get(id);
                        if tsv && !crate::escape::printable_ascii(name.as_bytes()) {
                            Cow::Owned(escape_controls(name).into_owned().into_bytes())
                        } else {
                            Cow::Borrowed(name.as_bytes())
                        }
                    }
                    _ => Cow::Borrowed(fields[i].as_bytes()),
                }
            };
            sv_record(out, delim, (0..n).map(field));
        },
        |bytes| w.write_all(bytes),
    )
}

/// One CSV (or TSV) record, and its line end, onto `out`, quoted as the
/// `csv` crate quotes with `QuoteStyle::Necessary` (the header line is
/// written by the crate itself): a field holding the delimiter, a quote, a
/// CR or an LF is quoted, its quotes doubled; a record of nothing but one
/// empty field is `""`. Hand-written for speed: a writer of the crate made
/// for each row, or kept for a chunk and its bytes copied out, took a
/// fifth of the output time of reports with millions of rows, most of
/// whose fields are numbers that need no quoting.
fn sv_record<F: AsRef<[u8]>>(out: &mut Vec<u8>, delim: u8, fields: impl Iterator<Item = F>) {
    let start = out.len();
    for (i, f) in fields.enumerate() {
        let f = f.as_ref();
        if i > 0 {
            out.push(delim);
        }
        if f.iter()
            .any(|&b| b == delim || b == b'"' || b == b'\r' || b == b'\n')
        {
            out.push(b'"');
            for &b in f {
                if b == b'"' {
                    out.push(b'"');
                }
                out.push(b);
            }
            out.push(b'"');
        } else {
            out.extend_from_slice(f);
        }
    }
    if out.len() == start {
        out.extend_from_slice(b"\"\"");
    }
    out.push(b'\n');
}

/// Width in characters of a cell as the text layouts print it (control
/// characters escaped).
fn shown(s: &str) -> Cow<'_, str> {
    escape_controls(s)
}

/// A set of name ids, as one bit each.
#[derive(Clone)]
struct NameSet {
    bits: Vec<u64>,
}

impl NameSet {
    fn new(len: usize) -> NameSet {
        NameSet {
            bits: vec![0; len.div_ceil(64)],
        }
    }

    fn insert(&mut self, id: NameId) {
        if let Some(w) = self.bits.get_mut(id as usize / 64) {
            *w |= 1 << (id % 64);
        }
    }

    fn union(&mut self, o: &NameSet) {
        for (a, b) in self.bits.iter_mut().zip(&o.bits) {
            *a |= b;
        }
    }

    /// The ids, ascending.
    fn ids(&self) -> impl Iterator<Item = NameId> + '_ {
        self.bits.iter().enumerate().flat_map(|(k, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some((k * 64) as NameId + b)
            })
        })
    }

    /// The widest of the names as the text layouts print them. Hand-written
    /// for speed: the ids are visited in ascending order, which reads the
    /// arena front to back (fetching the names in row order was a cache
    /// and TLB miss each, a third of `nvtx_sum`'s time on a large export).
    fn widest(&self, names: &Names) -> usize {
        self.ids()
            .map(|id| shown_width(names.get(id)))
            .max()
            .unwrap_or(0)
    }
}

/// Characters of `s` as the text layouts print it (control characters
/// escaped); printable ASCII without the escaper.
fn shown_width(s: &str) -> usize {
    if crate::escape::printable_ascii(s.as_bytes()) {
        s.len()
    } else {
        shown(s).chars().count()
    }
}

/// The widest cell of each column as the text layouts print it, and
/// whether the column holds any text. The rows are measured in chunks on
/// the thread pool; names are measured after them, in arena order (see
/// [`NameSet::widest`]).
fn measure(t: &Table, names: &Names, o: &Options) -> (Vec<usize>, Vec<bool>) {
    use rayon::prelude::*;
    let ncols = t.cols.len();
    struct Acc {
        widths: Vec<usize>,
        text: Vec<bool>,
        named: Vec<Option<NameSet>>,
    }
    let new = || Acc {
        widths: vec![0; ncols],
        text: vec![false; ncols],
        named: (0..ncols).map(|_| None).collect(),
    };
    let n = t.row_count();
    let acc = (0..n.div_ceil(MEASURE_ROWS))
        .into_par_iter()
        .fold(new, |mut acc, k| {
            let mut buf = String::new();
            let rows = k * MEASURE_ROWS..((k + 1) * MEASURE_ROWS).min(n);
            let _ = t.rows_in(names, false, rows, |r| -> Result<(), ()> {
                for (i, c) in r.iter().enumerate().take(ncols) {
                    match c {
                        Cell::Name(id) => {
                            acc.text[i] = true;
                            acc.named[i]
                                .get_or_insert_with(|| NameSet::new(names.len()))
                                .insert(*id);
                            continue;
                        }
                        Cell::Text(_) => acc.text[i] = true,
                        _ => {}
                    }
                    let n = match cell_width(c, &t.cols[i], o) {
                        Some(n) => n,
                        None => {
                            cell_into(c, &t.cols[i], names, o, &mut buf);
                            // (numbers are ASCII without control characters)
                            if matches!(c, Cell::Text(_)) {
                                shown(&buf).chars().count()
                            } else {
                                buf.len()
                            }
                        }
                    };
                    acc.widths[i] = acc.widths[i].max(n);
                }
                Ok(())
            });
            acc
        })
        .reduce(new, |mut a, b| {
            for i in 0..ncols {
                a.widths[i] = a.widths[i].max(b.widths[i]);
                a.text[i] |= b.text[i];
                match (&mut a.named[i], &b.named[i]) {
                    (Some(x), Some(y)) => x.union(y),
                    (x @ None, Some(y)) => *x = Some(y.clone()),
                    _ => {}
                }
            }
            a
        });
    let mut widths = acc.widths;
    for (w, set) in widths.iter_mut().zip(&acc.named) {
        if let Some(set) = set {
            *w = (*w).max(set.widest(names));
        }
    }
    (widths, acc.text)
}

/// Rows per chunk of [`measure`].
const MEASURE_ROWS: usize = 16384;

/// Append `n` spaces.
fn push_spaces(line: &mut Vec<u8>, n: usize) {
    line.resize(line.len() + n, b' ');
}

/// How the text layouts lay out a line.
struct Layout<'a> {
    widths: &'a [usize],
    right: &'a [bool],
    boxed: bool,
    open: &'static str,
    sep: &'static str,
    close: &'static str,
}

impl Layout<'_> {
    /// Append one line of `cells` (column, text, whether to pad it) to
    /// `line` (which may hold lines before it).
    fn line_into(&self, line: &mut Vec<u8>, cells: &mut dyn Iterator<Item = (usize, &str, bool)>) {
        let start = line.len();
        line.extend_from_slice(self.open.as_bytes());
        let mut first = true;
        for (i, s, pad) in cells {
            if !first {
                line.extend_from_slice(self.sep.as_bytes());
            }
            first = false;
            if pad {
                let len = if s.is_ascii() {
                    s.len()
                } else {
                    s.chars().count()
                };
                let fill = self.widths[i].saturating_sub(len);
                if self.right[i] {
                    push_spaces(line, fill);
                    line.extend_from_slice(s.as_bytes());
                } else {
                    line.extend_from_slice(s.as_bytes());
                    push_spaces(line, fill);
                }
            } else {
                line.extend_from_slice(s.as_bytes());
            }
        }
        if first {
            line.truncate(start);
            if self.boxed {
                line.push(b'|');
            }
        } else {
            line.extend_from_slice(self.close.as_bytes());
        }
        line.push(b'\n');
    }
}

fn write_text(w: &mut dyn Write, t: &Table, names: &Names, o: &Options) -> io::Result<()> {
    writeln!(w)?;
    writeln!(w, " ** {} ({}):", t.title, escape_controls(&t.report))?;
    writeln!(w)?;
    if let Some(why) = &t.skipped {
        writeln!(w, "SKIPPED: {why}")?;
        writeln!(w)?;
        return Ok(());
    }
    let heads: Vec<String> = t.cols.iter().map(|c| heading(c, o)).collect();
    // first pass: the widths, and which plain columns hold only numbers
    let mut widths: Vec<usize> = heads.iter().map(|h| h.chars().count()).collect();
    let mut right: Vec<bool> = t.cols.iter().map(|c| c.unit != Unit::None).collect();
    let (cell_widths, text_seen) = measure(t, names, o);
    for (w, c) in widths.iter_mut().zip(cell_widths) {
        *w = (*w).max(c);
    }
    for (r, seen) in right.iter_mut().zip(&text_seen) {
        *r = *r || !seen;
    }
    let boxed = o.format == Format::Table;
    let rule = || -> String {
        let mut s = String::from("+");
        for &n in &widths {
            s.push_str(&"-".repeat(n + 2));
            s.push('+');
        }
        s
    };
    let (open, sep, close) = if boxed {
        ("| ", " | ", " |")
    } else {
        (" ", "  ", " ")
    };
    let layout = Layout {
        widths: &widths,
        right: &right,
        boxed,
        open,
        sep,
        close,
    };
    let mut line = Vec::new();
    let mut write_line =
        |w: &mut dyn Write, cells: &mut dyn Iterator<Item = (usize, &str, bool)>| {
            line.clear();
            layout.line_into(&mut line, cells);
            w.write_all(&line)
        };
    if boxed {
        writeln!(w, "{}", rule())?;
    }
    let centred: Vec<String> = heads
        .iter()
        .enumerate()
        .map(|(i, h)| center(h, widths[i]))
        .collect();
    write_line(
        w,
        &mut centred
            .iter()
            .enumerate()
            .map(|(i, s)| (i, s.as_str(), false)),
    )?;
    if boxed {
        writeln!(w, "{}", rule())?;
    } else {
        let dashes: Vec<String> = widths.iter().map(|&n| "-".repeat(n)).collect();
        write_line(
            w,
            &mut dashes
                .iter()
                .enumerate()
                .map(|(i, s)| (i, s.as_str(), false)),
        )?;
    }
    let ncols = t.cols.len();
    // per chunk: a cell's text, the row's cells, and which cells are names
    // shown as the arena holds them (laid out from there: copying every
    // name into a cell, the cells into a line and the line into the chunk
    // was a share of writing a large report)
    type Scratch = (String, Vec<String>, Vec<bool>);
    t.format_rows(
        names,
        |_, r, (buf, cells, as_held): &mut Scratch, out| {
            cells.resize(ncols, String::new());
            as_held.resize(ncols, false);
            let n = r.len().min(cells.len());
            for (i, c) in r.iter().enumerate().take(n) {
                cells[i].clear();
                as_held[i] = false;
                if let Cell::Name(id) = c {
                    match shown(names.get(*id)) {
                        Cow::Borrowed(_) => as_held[i] = true,
                        Cow::Owned(s) => cells[i].push_str(&s),
                    }
                    continue;
                }
                cell_into(c, &t.cols[i], names, o, buf);
                if matches!(c, Cell::Text(_)) {
                    cells[i].push_str(&shown(buf));
                } else {
                    cells[i].push_str(buf);
                }
            }
            layout.line_into(
                out,
                &mut cells[..n].iter().enumerate().map(|(i, s)| {
                    let text = match r[i] {
                        Cell::Name(id) if as_held[i] => names.get(id),
                        _ => s.as_str(),
                    };
                    (i, text, true)
                }),
            );
        },
        |bytes| w.write_all(bytes),
    )?;
    if boxed {
        writeln!(w, "{}", rule())?;
    }
    writeln!(w)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// `sv_record` against the `csv` crate writing the same record
        /// with the settings `write_sv` gives it, for either delimiter:
        /// fields from a small alphabet rich in the bytes that decide
        /// quoting (and multi-byte text), any number of them, empty ones
        /// included.
        #[test]
        fn records_as_the_csv_crate_writes_them(
            fields in proptest::collection::vec("[a,\t\"\r\n é0-9]{0,6}", 0..5),
            tsv in proptest::bool::ANY,
        ) {
            let delim = if tsv { b'\t' } else { b',' };
            let mut ours = Vec::new();
            sv_record(&mut ours, delim, fields.iter());
            let mut theirs = Vec::new();
            {
                let mut w = csv::WriterBuilder::new()
                    .delimiter(delim)
                    .quote_style(csv::QuoteStyle::Necessary)
                    .flexible(true)
                    .from_writer(&mut theirs);
                w.write_record(&fields).unwrap();
                w.flush().unwrap();
            }
            proptest::prop_assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs)
            );
        }
    }

    #[test]
    fn centers_like_python() {
        assert_eq!(
            center("Name", 21),
            format!("{}Name{}", " ".repeat(9), " ".repeat(8))
        );
        assert_eq!(center("ab", 5), "  ab ");
        assert_eq!(center("abc", 6), " abc  ");
    }

    proptest::proptest! {
        /// The width the width pass takes without formatting is the
        /// length of the formatted cell, for any integer and for values
        /// nsys rounds to tenths (and others), in every unit and scale; and
        /// an unscaled integer never needs formatting.
        #[test]
        fn widths_without_formatting_are_the_formatted_lengths(
            i in proptest::prelude::any::<i64>(),
            tenths in -100_000_000_000_000i64..100_000_000_000_000,
            f in proptest::prelude::any::<f64>(),
            unit in 0usize..6,
            time in 0usize..4,
            mem in 0usize..4,
        ) {
            let unit = [Unit::None, Unit::Percent, Unit::Duration, Unit::Timestamp, Unit::Bytes, Unit::Throughput][unit];
            let o = Options {
                format: Format::Column,
                time: [TimeUnit::Ns, TimeUnit::Us, TimeUnit::Ms, TimeUnit::S][time],
                mem: [MemUnit::B, MemUnit::Kb, MemUnit::Mb, MemUnit::Gb][mem],
            };
            let col = Col { head: "x", unit };
            let names = Names::default();
            let cells = [
                Cell::Int(i),
                Cell::Int(i64::MIN),
                Cell::Int(0),
                Cell::Round1(super::super::table::round1(tenths as f64 / 10.0)),
                Cell::Round1(f),
                Cell::Round1(-0.0),
                Cell::Float(f),
            ];
            for c in &cells {
                let mut buf = String::new();
                cell_into(c, &col, &names, &o, &mut buf);
                if let Some(n) = cell_width(c, &col, &o) {
                    proptest::prop_assert_eq!(n, buf.len(), "{:?} {:?}", c, buf);
                }
            }
            let unscaled = Options { time: TimeUnit::Ns, mem: MemUnit::B, ..o };
            proptest::prop_assert!(cell_width(&Cell::Int(i), &col, &unscaled).is_some());
        }
    }

    #[test]
    fn one_decimal_as_the_formatter() {
        let mut cases = vec![
            0.0, -0.0, 0.05, -0.05, 0.25, 0.35, 1e15, -1e16, 12.3, -12.3, 0.1,
        ];
        for i in -2000..2000 {
            cases.push(super::super::table::round1(f64::from(i) * 0.0137));
            cases.push(f64::from(i) * 1234.5678);
        }
        for f in cases {
            let mut s = String::new();
            one_decimal(&mut s, f);
            assert_eq!(s, format!("{f:.1}"), "{f}");
        }
    }

    /// The widest name of a set, measured in arena order, is the widest
    /// of the names as the writer prints them (escaped), measured one by
    /// one; ids past the arena or unset are not counted.
    #[test]
    fn name_widths_as_printed() {
        let mut names = Names::default();
        let texts = [
            "a",
            "tab\there",
            "\u{e9}t\u{e9}",
            "esc\x1b[2J",
            "plain text",
            "",
            "x\u{85}y",
        ];
        let ids: Vec<NameId> = texts.iter().map(|t| names.intern(t)).collect();
        for (k, t) in texts.iter().enumerate() {
            let mut set = NameSet::new(names.len());
            set.insert(ids[k]);
            assert_eq!(set.widest(&names), shown(t).chars().count(), "{t:?}");
            assert_eq!(set.ids().collect::<Vec<_>>(), vec![ids[k]]);
        }
        // every subset of the names, as a set (and as the union of two)
        for mask in 0u32..(1 << texts.len()) {
            let mut a = NameSet::new(names.len());
            let mut b = NameSet::new(names.len());
            for (k, &id) in ids.iter().enumerate() {
                if mask & (1 << k) != 0 {
                    if k % 2 == 0 { &mut a } else { &mut b }.insert(id);
                }
            }
            a.union(&b);
            let expected = (0..texts.len())
                .filter(|k| mask & (1 << k) != 0)
                .map(|k| shown(texts[k]).chars().count())
                .max()
                .unwrap_or(0);
            assert_eq!(a.widest(&names), expected, "{mask:b}");
        }
        // ids beyond 64 and 128, set out of order
        let more: Vec<NameId> = (0..200).map(|k| names.intern(&"w".repeat(k))).collect();
        let mut set = NameSet::new(names.len());
        for &id in more.iter().rev().step_by(7) {
            set.insert(id);
        }
        let mut expected: Vec<NameId> = more.iter().rev().step_by(7).copied().collect();
        expected.sort_unstable();
        assert_eq!(set.ids().collect::<Vec<_>>(), expected);
        assert_eq!(set.widest(&names), 199);
    }

    #[test]
    fn floats_like_python() {
        assert_eq!(py_float(4.0), "4.0");
        assert_eq!(py_float(8160379.586206896), "8160379.586206896");
    }
}
