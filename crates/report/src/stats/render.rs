//! Output of the stats reports in nsys's formats: `column` (nsys's console
//! layout), `table` (boxed), `csv`, `tsv` and `json`, with `--timeunit` and
//! `--memunit` conversions as nsys prints them (µs: 3 decimals, ms and s: 4;
//! MB: 3). The layouts are written by hand because they must match nsys's
//! byte for byte (centred headings, two-space gaps), which no table crate
//! reproduces.

use std::borrow::Cow;
use std::io::{self, Write};

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

/// A cell as text (`None`: empty, SQL NULL); text cells are borrowed.
fn cell_text<'c>(c: &'c Cell, col: &Col, o: &Options) -> Option<Cow<'c, str>> {
    if let Cell::Text(s) = c {
        return Some(Cow::Borrowed(s));
    }
    cell_number(c, col, o).map(Cow::Owned)
}

fn cell_number(c: &Cell, col: &Col, o: &Options) -> Option<String> {
    let scaled = |v: f64, div: f64, dec: usize| format!("{:.*}", dec, v / div);
    Some(match (c, col.unit) {
        (Cell::Null, _) => return None,
        (Cell::Text(s), _) => s.clone(),
        (Cell::Int(i), Unit::Duration | Unit::Timestamp) if o.time != TimeUnit::Ns => {
            let (d, n) = o.time.scale();
            scaled(*i as f64, d, n)
        }
        (Cell::Round1(f) | Cell::Float(f), Unit::Duration | Unit::Timestamp)
            if o.time != TimeUnit::Ns =>
        {
            let (d, n) = o.time.scale();
            scaled(*f, d, n)
        }
        (Cell::Int(i), Unit::Bytes | Unit::Throughput) if o.mem != MemUnit::B => {
            scaled(*i as f64, o.mem.scale(), 3)
        }
        (Cell::Round1(f) | Cell::Float(f), Unit::Bytes | Unit::Throughput)
            if o.mem != MemUnit::B =>
        {
            scaled(*f, o.mem.scale(), 3)
        }
        (Cell::Int(i), _) => i.to_string(),
        (Cell::Round1(f), _) => format!("{f:.1}"),
        (Cell::Float(f), _) => py_float(*f),
    })
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

fn is_numeric(col: &Col, cells: &[Vec<Cell>], i: usize) -> bool {
    col.unit != Unit::None
        || cells
            .iter()
            .all(|r| !matches!(r.get(i), Some(Cell::Text(_))))
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

/// Write one report in `o.format`. `title` adds nsys's ` ** Title (name):`
/// line before the column and table layouts.
pub fn write(w: &mut dyn Write, t: &Table, o: &Options) -> io::Result<()> {
    match o.format {
        Format::Column | Format::Table => write_text(w, t, o),
        Format::Csv | Format::Tsv => write_sv(w, t, o),
        Format::Json => {
            let v = json_rows(t, o);
            serde_json::to_writer_pretty(&mut *w, &v).map_err(io::Error::other)?;
            writeln!(w)
        }
    }
}

/// The rows as a JSON array of objects keyed by heading.
pub fn json_rows(t: &Table, o: &Options) -> serde_json::Value {
    let heads: Vec<String> = t.cols.iter().map(|c| heading(c, o)).collect();
    serde_json::Value::Array(
        t.rows
            .iter()
            .map(|r| {
                let mut m = serde_json::Map::new();
                for ((h, c), col) in heads.iter().zip(r).zip(&t.cols) {
                    m.insert(h.clone(), cell_json(c, col, o));
                }
                serde_json::Value::Object(m)
            })
            .collect(),
    )
}

fn write_sv(w: &mut dyn Write, t: &Table, o: &Options) -> io::Result<()> {
    let tsv = o.format == Format::Tsv;
    let mut b = csv::WriterBuilder::new();
    b.delimiter(if tsv { b'\t' } else { b',' })
        .quote_style(csv::QuoteStyle::Necessary);
    let mut cw = b.from_writer(w);
    let heads: Vec<String> = t.cols.iter().map(|c| heading(c, o)).collect();
    cw.write_record(&heads).map_err(io::Error::other)?;
    for r in &t.rows {
        let fields: Vec<Cow<'_, str>> = r
            .iter()
            .zip(&t.cols)
            .map(|(c, col)| {
                let s = cell_text(c, col, o).unwrap_or_default();
                if tsv && s.chars().any(char::is_control) {
                    Cow::Owned(escape_controls(&s).into_owned())
                } else {
                    s
                }
            })
            .collect();
        cw.write_record(fields.iter().map(|f| f.as_bytes()))
            .map_err(io::Error::other)?;
    }
    cw.flush()
}

fn write_text(w: &mut dyn Write, t: &Table, o: &Options) -> io::Result<()> {
    writeln!(w)?;
    writeln!(w, " ** {} ({}):", t.title, escape_controls(&t.report))?;
    writeln!(w)?;
    if let Some(why) = &t.skipped {
        writeln!(w, "SKIPPED: {why}")?;
        writeln!(w)?;
        return Ok(());
    }
    let heads: Vec<String> = t.cols.iter().map(|c| heading(c, o)).collect();
    let cells: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| {
            r.iter()
                .zip(&t.cols)
                .map(|(c, col)| {
                    escape_controls(&cell_text(c, col, o).unwrap_or_default()).into_owned()
                })
                .collect()
        })
        .collect();
    let right: Vec<bool> = t
        .cols
        .iter()
        .enumerate()
        .map(|(i, c)| is_numeric(c, &t.rows, i))
        .collect();
    let widths: Vec<usize> = heads
        .iter()
        .enumerate()
        .map(|(i, h)| {
            cells
                .iter()
                .map(|r| r.get(i).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
                .max(h.chars().count())
        })
        .collect();
    let pad = |s: &str, i: usize| -> String {
        let n = s.chars().count();
        let fill = " ".repeat(widths[i].saturating_sub(n));
        if right[i] {
            format!("{fill}{s}")
        } else {
            format!("{s}{fill}")
        }
    };
    if o.format == Format::Column {
        let line = |parts: Vec<String>| -> String {
            let mut s = String::new();
            for p in parts {
                s.push(' ');
                s.push_str(&p);
                s.push(' ');
            }
            s
        };
        writeln!(
            w,
            "{}",
            line(
                heads
                    .iter()
                    .enumerate()
                    .map(|(i, h)| center(h, widths[i]))
                    .collect()
            )
        )?;
        writeln!(
            w,
            "{}",
            line(widths.iter().map(|&n| "-".repeat(n)).collect())
        )?;
        for r in &cells {
            writeln!(
                w,
                "{}",
                line(r.iter().enumerate().map(|(i, s)| pad(s, i)).collect())
            )?;
        }
    } else {
        let rule: String = {
            let mut s = String::from("+");
            for &n in &widths {
                s.push_str(&"-".repeat(n + 2));
                s.push('+');
            }
            s
        };
        let line = |parts: Vec<String>| -> String {
            let mut s = String::from("|");
            for p in parts {
                s.push(' ');
                s.push_str(&p);
                s.push_str(" |");
            }
            s
        };
        writeln!(w, "{rule}")?;
        writeln!(
            w,
            "{}",
            line(
                heads
                    .iter()
                    .enumerate()
                    .map(|(i, h)| center(h, widths[i]))
                    .collect()
            )
        )?;
        writeln!(w, "{rule}")?;
        for r in &cells {
            writeln!(
                w,
                "{}",
                line(r.iter().enumerate().map(|(i, s)| pad(s, i)).collect())
            )?;
        }
        writeln!(w, "{rule}")?;
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
    fn floats_like_python() {
        assert_eq!(py_float(4.0), "4.0");
        assert_eq!(py_float(8160379.586206896), "8160379.586206896");
    }
}
