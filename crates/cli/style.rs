//! The output convention every command shares: `--format`, `-o`, table
//! width, time unit and thousands separators, and prose wrapped to the
//! width of the tables.

use std::io::{self, IsTerminal, Write};

use clap::{Args, ValueEnum};
use rprof_report::DataFormat;
use rprof_report::text::{self, TableStyle, TimeUnit};

/// Output format of a command that writes data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutFormat {
    /// Text for people (tables, notes).
    Table,
    /// Comma-separated values; unknown numbers are empty cells.
    Csv,
    /// Tab-separated values; unknown numbers are empty cells.
    Tsv,
    /// JSON (one document; JSON Lines where a command writes a row per kernel).
    Json,
    /// Apache Parquet (binary: needs -o FILE or a redirect).
    Parquet,
}

impl OutFormat {
    /// The data format, `None` for a table.
    pub fn data(self) -> Option<DataFormat> {
        match self {
            OutFormat::Table => None,
            OutFormat::Csv => Some(DataFormat::Csv),
            OutFormat::Tsv => Some(DataFormat::Tsv),
            OutFormat::Json => Some(DataFormat::Json),
            OutFormat::Parquet => Some(DataFormat::Parquet),
        }
    }
}

/// Time unit of the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UnitArg {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

/// How tables look (`--format table`).
#[derive(Args, Debug, Clone)]
pub struct TableArgs {
    /// Fit tables and notes in N characters: long names are clipped with
    /// `…`, numbers never (default: the terminal's width when standard
    /// output is a terminal, else no limit; 0: no limit).
    #[arg(short = 'w', long = "width", value_name = "N")]
    pub width: Option<usize>,

    /// Show the tables' times in this unit (default: as each table says,
    /// ns or ms).
    #[arg(long, value_enum, value_name = "UNIT")]
    pub timeunit: Option<UnitArg>,

    /// Group the digits of numbers in tables by three (`1,234,567`).
    #[arg(long)]
    pub thousands: bool,
}

/// The terminal's width, when standard output is one.
pub fn terminal_width() -> Option<usize> {
    if !io::stdout().is_terminal() {
        return None;
    }
    terminal_size::terminal_size().map(|(w, _)| usize::from(w.0))
}

impl TableArgs {
    /// The width to fit (None: no limit).
    pub fn width(&self) -> Option<usize> {
        match self.width {
            Some(0) => None,
            Some(w) => Some(w),
            None => terminal_width(),
        }
    }

    /// Apply the style to every table of this run.
    pub fn apply(&self) {
        text::set_style(TableStyle {
            width: self.width(),
            unit: self.timeunit.map(|u| match u {
                UnitArg::Ns => TimeUnit::Ns,
                UnitArg::Us => TimeUnit::Us,
                UnitArg::Ms => TimeUnit::Ms,
                UnitArg::S => TimeUnit::S,
            }),
            thousands: self.thousands,
        });
    }
}

/// Wraps lines that are not table rows (notes, footnotes) at spaces to a
/// width; table rows (starting with `|`) and lines without spaces pass
/// unchanged, so a number is never split.
pub struct Wrap<W: Write> {
    inner: W,
    width: usize,
    line: Vec<u8>,
}

impl<W: Write> Wrap<W> {
    /// Wrap at `width` characters.
    pub fn new(inner: W, width: usize) -> Wrap<W> {
        Wrap {
            inner,
            width,
            line: Vec::new(),
        }
    }

    fn emit(&mut self) -> io::Result<()> {
        let text = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if text.starts_with('|') || text.chars().count() <= self.width {
            self.inner.write_all(text.as_bytes())?;
            return self.inner.write_all(b"\n");
        }
        let indent: String = text.chars().take_while(|c| *c == ' ').collect();
        let mut cur = String::new();
        for word in text.split(' ').filter(|w| !w.is_empty()) {
            let n = cur.chars().count();
            if n > 0 && n + 1 + word.chars().count() > self.width {
                self.inner.write_all(cur.as_bytes())?;
                self.inner.write_all(b"\n")?;
                cur = format!("{indent}  ");
            } else if n > 0 && !cur.ends_with(' ') {
                cur.push(' ');
            } else if n == 0 {
                cur.push_str(&indent);
            }
            cur.push_str(word);
        }
        self.inner.write_all(cur.as_bytes())?;
        self.inner.write_all(b"\n")
    }
}

impl<W: Write> Write for Wrap<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for &b in buf {
            if b == b'\n' {
                self.emit()?;
            } else {
                self.line.push(b);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.line.is_empty() {
            self.emit()?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_prose_not_tables() {
        let mut w = Wrap::new(Vec::new(), 12);
        w.write_all(b"| a table row longer than twelve |\none two three four 123456789012345\n")
            .unwrap();
        w.flush().unwrap();
        assert_eq!(
            String::from_utf8(w.inner).unwrap(),
            "| a table row longer than twelve |\none two\n  three four\n  123456789012345\n"
        );
    }
}
