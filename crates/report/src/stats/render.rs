//! Output of the stats reports in nsys's formats: `column` (nsys's console
//! layout), `table` (boxed), `csv`, `tsv` and `json`, with `--timeunit` and
//! `--memunit` conversions as nsys prints them (µs: 3 decimals, ms and s: 4;
//! MB: 3). The layouts are written by hand because they must match nsys's
//! byte for byte (centred headings, two-space gaps), which no table crate
//! reproduces.

use std::borrow::Cow;
use std::io::{self, Write};

use rprof_model::Names;

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
fn cell_into(c: &Cell, col: &Col, o: &Options, buf: &mut String) -> bool {
    use std::fmt::Write as _;
    buf.clear();
    let scaled = |buf: &mut String, v: f64, div: f64, dec: usize| {
        let _ = write!(buf, "{:.*}", dec, v / div);
    };
    match (c, col.unit) {
        (Cell::Null, _) => return false,
        (Cell::Text(s), _) => buf.push_str(s),
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
    let tenths = (f * 10.0).round();
    // not a whole number of tenths (a tie for the formatter), too large for
    // exact integers, or -0.0: the formatter itself
    if !(tenths.abs() < 1e15 && (f * 10.0 - tenths).abs() < 1e-6)
        || (f == 0.0 && f.is_sign_negative())
    {
        let _ = write!(buf, "{f:.1}");
        return;
    }
    let m = tenths as i64;
    if m < 0 {
        buf.push('-');
    }
    let a = m.unsigned_abs();
    buf.push_str(itoa::Buffer::new().format(a / 10));
    buf.push('.');
    buf.push(char::from(b'0' + (a % 10) as u8));
}

/// A cell as text (`None`: empty, SQL NULL).
fn cell_text(c: &Cell, col: &Col, o: &Options) -> Option<String> {
    let mut s = String::new();
    cell_into(c, col, o, &mut s).then_some(s)
}

/// A cell as a JSON value.
fn cell_json(c: &Cell, col: &Col, o: &Options) -> serde_json::Value {
    use serde_json::Value;
    match c {
        Cell::Null => Value::Null,
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Int(i) => {
            let converted = match col.unit {
                Unit::Duration | Unit::Timestamp => o.time != TimeUnit::Ns,
                Unit::Bytes | Unit::Throughput => o.mem != MemUnit::B,
                _ => false,
            };
            if converted {
                cell_text(c, col, o)
                    .and_then(|s| s.parse::<f64>().ok())
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number)
            } else {
                Value::from(*i)
            }
        }
        Cell::Round1(_) | Cell::Float(_) => cell_text(c, col, o)
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
    let mut first = true;
    w.write_all(b"[\n")?;
    t.for_each_row(names, |r| {
        if !first {
            w.write_all(b",\n")?;
        }
        first = false;
        // a row shorter than the headings has only its own keys
        let present = keys.iter().filter(|(_, i)| *i < r.len()).count();
        if present == 0 {
            return w.write_all(b"  {}");
        }
        w.write_all(b"  {\n")?;
        for (n, (k, i)) in keys.iter().filter(|(_, i)| *i < r.len()).enumerate() {
            w.write_all(b"    ")?;
            w.write_all(k.as_bytes())?;
            w.write_all(b": ")?;
            match &r[*i] {
                Cell::Text(s) => serde_json::to_writer(&mut *w, s),
                c => serde_json::to_writer(&mut *w, &cell_json(c, &t.cols[*i], o)),
            }
            .map_err(io::Error::other)?;
            w.write_all(if n + 1 < present { b",\n" } else { b"\n" })?;
        }
        w.write_all(b"  }")
    })?;
    w.write_all(b"\n]\n")
}

/// The rows as a JSON array of objects keyed by heading.
pub fn json_rows(t: &Table, names: &Names, o: &Options) -> serde_json::Value {
    let heads: Vec<String> = t.cols.iter().map(|c| heading(c, o)).collect();
    let mut rows = Vec::with_capacity(t.row_count());
    let _ = t.for_each_row(names, |r| -> Result<(), ()> {
        let mut m = serde_json::Map::new();
        for ((h, c), col) in heads.iter().zip(r).zip(&t.cols) {
            m.insert(h.clone(), cell_json(c, col, o));
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
        .quote_style(csv::QuoteStyle::Necessary);
    let mut cw = b.from_writer(w);
    let heads: Vec<String> = t.cols.iter().map(|c| heading(c, o)).collect();
    cw.write_record(&heads).map_err(io::Error::other)?;
    let mut fields: Vec<String> = vec![String::new(); t.cols.len()];
    t.for_each_row(names, |r| {
        let n = r.len().min(fields.len());
        for ((c, col), f) in r.iter().zip(&t.cols).zip(fields.iter_mut()) {
            cell_into(c, col, o, f);
            if tsv && f.chars().any(char::is_control) {
                *f = escape_controls(f).into_owned();
            }
        }
        cw.write_record(fields[..n].iter().map(|f| f.as_bytes()))
            .map_err(io::Error::other)
    })?;
    cw.flush()
}

/// Width in characters of a cell as the text layouts print it (control
/// characters escaped).
fn shown(s: &str) -> Cow<'_, str> {
    escape_controls(s)
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
    let mut text_seen = vec![false; t.cols.len()];
    let mut buf = String::new();
    t.for_each_row(names, |r| -> io::Result<()> {
        for (i, c) in r.iter().enumerate().take(widths.len()) {
            if matches!(c, Cell::Text(_)) {
                text_seen[i] = true;
            }
            cell_into(c, &t.cols[i], o, &mut buf);
            let n = shown(&buf).chars().count();
            widths[i] = widths[i].max(n);
        }
        Ok(())
    })?;
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
    let mut line = String::new();
    let mut write_line =
        |w: &mut dyn Write, cells: &mut dyn Iterator<Item = (usize, &str, bool)>| {
            line.clear();
            line.push_str(open);
            let mut first = true;
            for (i, s, pad) in cells {
                if !first {
                    line.push_str(sep);
                }
                first = false;
                if pad {
                    let fill = widths[i].saturating_sub(s.chars().count());
                    if right[i] {
                        line.extend(std::iter::repeat_n(' ', fill));
                        line.push_str(s);
                    } else {
                        line.push_str(s);
                        line.extend(std::iter::repeat_n(' ', fill));
                    }
                } else {
                    line.push_str(s);
                }
            }
            if first && !boxed {
                line.clear();
            } else if first {
                line.clear();
                line.push('|');
            } else {
                line.push_str(close);
            }
            line.push('\n');
            w.write_all(line.as_bytes())
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
    let mut cells: Vec<String> = vec![String::new(); t.cols.len()];
    t.for_each_row(names, |r| {
        let n = r.len().min(cells.len());
        for (i, c) in r.iter().enumerate().take(n) {
            cell_into(c, &t.cols[i], o, &mut buf);
            cells[i].clear();
            cells[i].push_str(&shown(&buf));
        }
        write_line(
            w,
            &mut cells[..n]
                .iter()
                .enumerate()
                .map(|(i, s)| (i, s.as_str(), true)),
        )
    })?;
    if boxed {
        writeln!(w, "{}", rule())?;
    }
    writeln!(w)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centers_like_python() {
        assert_eq!(
            center("Name", 21),
            format!("{}Name{}", " ".repeat(9), " ".repeat(8))
        );
        assert_eq!(center("ab", 5), "  ab ");
        assert_eq!(center("abc", 6), " abc  ");
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

    #[test]
    fn floats_like_python() {
        assert_eq!(py_float(4.0), "4.0");
        assert_eq!(py_float(8160379.586206896), "8160379.586206896");
    }
}
