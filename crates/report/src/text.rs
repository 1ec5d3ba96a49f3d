//! Small helpers for the human-readable reports: a comfy-table table with
//! a fixed look and number formats. By default the bytes are the same
//! everywhere (no terminal-width or tty dependence); the binary may set a
//! [`TableStyle`] once (a width to fit, a time unit, thousands separators),
//! which [`render`] applies to every table, and may [`capture`] the tables
//! a report renders, for its machine-readable formats.

use std::cell::RefCell;
use std::sync::OnceLock;

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};

/// A time unit for the tables' `(ns)` and `(ms)` columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl TimeUnit {
    /// `ns`, `us`, `ms` or `s`.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        }
    }

    fn ns(self) -> f64 {
        match self {
            TimeUnit::Ns => 1.0,
            TimeUnit::Us => 1e3,
            TimeUnit::Ms => 1e6,
            TimeUnit::S => 1e9,
        }
    }
}

/// How [`render`] adapts every table (all off by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableStyle {
    /// Fit tables in this many characters: the widest text columns are
    /// clipped with `…`; numbers are never cut (a table whose numbers alone
    /// are wider stays wider).
    pub width: Option<usize>,
    /// Show times (columns headed `(ns)` or `(ms)`) in this unit.
    pub unit: Option<TimeUnit>,
    /// Group the digits of integers by three with `,`.
    pub thousands: bool,
}

static STYLE: OnceLock<TableStyle> = OnceLock::new();

/// Set the style of every table rendered from now on (once per process;
/// later calls are ignored).
pub fn set_style(style: TableStyle) {
    let _ = STYLE.set(style);
}

/// One table as rendered: headers and cells, as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

thread_local! {
    static CAPTURE: RefCell<Option<Vec<Captured>>> = const { RefCell::new(None) };
}

/// Run `f` and return, with its result, every table it rendered on this
/// thread (before any [`TableStyle`] is applied).
pub fn capture<T>(f: impl FnOnce() -> T) -> (T, Vec<Captured>) {
    CAPTURE.with(|c| *c.borrow_mut() = Some(Vec::new()));
    let out = f();
    let tables = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
    (out, tables)
}

/// A Markdown-style table with these headers; the columns whose index is
/// in `right` are right-aligned.
pub fn table(headers: &[&str], right: &[usize]) -> Table {
    let mut t = Table::new();
    t.load_style(presets::ASCII_MARKDOWN)
        .set_content_arrangement(ContentArrangement::Disabled)
        .force_no_tty()
        .set_header(headers.to_vec());
    for &i in right {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// Render a table, one line per row, each ending in `\n`.
pub fn render(t: &Table) -> String {
    let captured = || Captured {
        headers: t
            .header()
            .map(|h| h.cell_iter().map(|c| c.content()).collect())
            .unwrap_or_default(),
        rows: t
            .row_iter()
            .map(|r| r.cell_iter().map(|c| c.content()).collect())
            .collect(),
    };
    CAPTURE.with(|c| {
        if let Some(list) = c.borrow_mut().as_mut() {
            list.push(captured());
        }
    });
    match STYLE.get() {
        Some(style) if *style != TableStyle::default() => {
            let c = captured();
            let right = alignments(t, &c);
            restyle(c, &right, style)
        }
        _ => plain(t),
    }
}

fn plain(t: &Table) -> String {
    let mut s = String::new();
    for line in t.lines() {
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

/// Which columns are right-aligned (comfy-table has no getter): a column
/// is if a data cell shorter than the column starts with padding in the
/// plain rendering, or if every cell is a number.
fn alignments(t: &Table, c: &Captured) -> Vec<bool> {
    let len = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = c.headers.iter().map(|h| len(h)).collect();
    for row in &c.rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(len(cell));
        }
    }
    let lines: Vec<Vec<char>> = t.lines().skip(2).map(|l| l.chars().collect()).collect();
    (0..widths.len())
        .map(|i| {
            let start = 2 + widths[..i].iter().map(|w| w + 3).sum::<usize>();
            let padded = c.rows.iter().zip(&lines).any(|(row, line)| {
                row.get(i)
                    .is_some_and(|cell| len(cell) < widths[i] && !cell.is_empty())
                    && line.get(start) == Some(&' ')
            });
            // a column of numbers (some cells empty or `-`, as in a
            // total row) is right-aligned, so never clipped
            padded
                || (c.rows.iter().any(|r| r.get(i).is_some_and(|x| numeric(x)))
                    && c.rows.iter().all(|r| {
                        r.get(i)
                            .is_none_or(|x| numeric(x) || x == "-" || x.is_empty())
                    }))
        })
        .collect()
}

/// A header that names a time unit: `Total (ns)`, `Kernel (ms)`,
/// `lat mean us`, `span ms` → (the header before the unit, ns per unit,
/// whether the unit is in parentheses).
fn time_header(h: &str) -> Option<(String, f64, bool)> {
    for (unit, ns) in [("ns", 1.0), ("us", 1e3), ("ms", 1e6)] {
        if let Some(stem) = h.strip_suffix(&format!("({unit})")) {
            return Some((stem.to_owned(), ns, true));
        }
        if let Some(stem) = h.strip_suffix(&format!(" {unit}")) {
            return Some((stem.to_owned(), ns, false));
        }
    }
    None
}

/// A number cell: digits with at most one `.` and a leading `-`.
fn numeric(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_digit() || c == '.')
        && s.chars().filter(|&c| c == '.').count() <= 1
}

/// `1234567.5` → `1,234,567.5`.
fn group(s: &str) -> String {
    let (sign, rest) = s.strip_prefix('-').map_or(("", s), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(a, b)| (a, Some(b)));
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    out.push_str(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// The table again, with the style applied.
fn restyle(mut c: Captured, right: &[bool], style: &TableStyle) -> String {
    if let Some(unit) = style.unit {
        for (i, h) in c.headers.iter_mut().enumerate() {
            let Some((stem, from, paren)) = time_header(h) else {
                continue;
            };
            let scale = from / unit.ns();
            if scale == 1.0 {
                continue;
            }
            *h = if paren {
                format!("{stem}({})", unit.name())
            } else {
                format!("{stem} {}", unit.name())
            };
            let decimals = match unit {
                TimeUnit::Ns => 0,
                TimeUnit::Us => 3,
                TimeUnit::Ms => 3,
                TimeUnit::S => 6,
            };
            // no more decimals than the printed value supports: 0.039 ms
            // is 39 us, not 39.000 (the table printed ms to 3 decimals)
            let shift = scale.log10().round() as i64;
            for row in &mut c.rows {
                if let Some(cell) = row.get_mut(i).filter(|c| numeric(c))
                    && let Ok(v) = cell.parse::<f64>()
                {
                    let given = cell.split_once('.').map_or(0, |(_, f)| f.len()) as i64;
                    let d = usize::try_from((given - shift).clamp(0, decimals as i64)).unwrap_or(0);
                    *cell = format!("{:.d$}", v * scale);
                }
            }
        }
    }
    if style.thousands {
        for row in &mut c.rows {
            for cell in row.iter_mut() {
                if numeric(cell) {
                    *cell = group(cell);
                }
            }
        }
    }
    let n = c.headers.len();
    let len = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = c.headers.iter().map(|h| len(h)).collect();
    for row in &c.rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(len(cell));
        }
    }
    if let Some(limit) = style.width {
        // "| a | b |": 3 characters per column and 1
        let total = |w: &[usize]| w.iter().sum::<usize>() + 3 * n + 1;
        // clip the widest text column, one character at a time, down to
        // its header or 8 characters
        while total(&widths) > limit {
            let Some((i, _)) = widths
                .iter()
                .enumerate()
                .filter(|(i, w)| {
                    !right.get(*i).copied().unwrap_or(false)
                        && **w > 8.max(len(&c.headers[*i]).min(12))
                })
                .max_by_key(|(i, w)| (**w, std::cmp::Reverse(*i)))
            else {
                break;
            };
            widths[i] -= 1;
        }
        for (i, w) in widths.iter().enumerate() {
            if right.get(i).copied().unwrap_or(false) {
                continue;
            }
            c.headers[i] = clip(&c.headers[i], *w);
            for row in &mut c.rows {
                if let Some(cell) = row.get_mut(i) {
                    *cell = clip(cell, *w);
                }
            }
        }
    }
    let mut s = String::new();
    let line = |s: &mut String, cells: &[String]| {
        let mut l = String::from("|");
        for (i, w) in widths.iter().enumerate() {
            let cell = cells.get(i).map_or("", String::as_str);
            let pad = w.saturating_sub(len(cell));
            l.push(' ');
            if right.get(i).copied().unwrap_or(false) {
                l.extend(std::iter::repeat_n(' ', pad));
                l.push_str(cell);
            } else {
                l.push_str(cell);
                l.extend(std::iter::repeat_n(' ', pad));
            }
            l.push_str(" |");
        }
        s.push_str(l.trim_end());
        s.push('\n');
    };
    line(&mut s, &c.headers);
    let mut sep = String::from("|");
    for w in &widths {
        sep.extend(std::iter::repeat_n('-', w + 2));
        sep.push('|');
    }
    s.push_str(&sep);
    s.push('\n');
    for row in &c.rows {
        line(&mut s, row);
    }
    s
}

/// A count with an SI prefix and three significant digits: `4.19 G`,
/// `512`, `12.6 M`.
pub fn si(x: f64) -> String {
    if !x.is_finite() {
        return "-".to_owned();
    }
    const UNITS: [&str; 7] = ["", " k", " M", " G", " T", " P", " E"];
    let mut v = x.abs();
    let mut u = 0;
    while v >= 999.5 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    let sign = if x < 0.0 { "-" } else { "" };
    if u == 0 {
        return format!("{sign}{v:.0}");
    }
    let digits = if v >= 99.95 {
        0
    } else if v >= 9.995 {
        1
    } else {
        2
    };
    format!("{sign}{v:.digits$}{}", UNITS[u])
}

/// `x` with `d` decimals, or `-` when unknown.
pub fn opt(x: Option<f64>, d: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.d$}"),
        _ => "-".to_owned(),
    }
}

/// A ratio as a percentage with `d` decimals, or `-`.
pub fn pct(x: Option<f64>, d: usize) -> String {
    opt(x.map(|v| v * 100.0), d)
}

/// At most `width` characters of `s` (0: all), the cut marked with `…`.
/// Control characters are escaped first (trace text is data).
pub fn clip(s: &str, width: usize) -> String {
    let s = &*crate::escape::escape_control(s);
    if width == 0 || s.chars().count() <= width {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// ns as ms with 3 decimals, rounded half up in integers (no float).
pub fn ms(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let us = (ns.unsigned_abs() + 500) / 1000;
    format!("{sign}{}.{:03}", us / 1000, us % 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restyled_tables_fit_and_keep_numbers() {
        let c = Captured {
            headers: vec!["Name".into(), "Total (ns)".into()],
            rows: vec![
                vec!["a_very_long_kernel_name_indeed".into(), "1234567".into()],
                vec!["short".into(), "5".into()],
            ],
        };
        let style = TableStyle {
            width: Some(30),
            unit: Some(TimeUnit::Us),
            thousands: true,
        };
        let out = restyle(c, &[false, true], &style);
        assert_eq!(
            out,
            "| Name          | Total (us) |\n|---------------|------------|\n| a_very_long_… |  1,234.567 |\n| short         |      0.005 |\n"
        );
        assert!(out.lines().all(|l| l.chars().count() == 30));
        assert_eq!(group("-1234567.25"), "-1,234,567.25");
        assert_eq!(group("123"), "123");
    }

    #[test]
    fn capture_sees_every_table() {
        let ((), tables) = capture(|| {
            let mut t = table(&["a", "n"], &[1]);
            t.add_row(vec!["x", "1"]);
            let _ = render(&t);
        });
        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0].headers, ["a", "n"]);
        assert_eq!(tables[0].rows, [vec!["x".to_string(), "1".to_string()]]);
    }

    #[test]
    fn formats() {
        assert_eq!(si(512.0), "512");
        assert_eq!(si(4_194_304.0), "4.19 M");
        assert_eq!(si(12_600_000.0), "12.6 M");
        assert_eq!(si(999_999.0), "1.00 M");
        assert_eq!(si(140_000.0), "140 k");
        assert_eq!(si(2.5e15), "2.50 P");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
        assert_eq!(clip("abcdef", 0), "abcdef");
        assert_eq!(ms(12_345_678), "12.346");
        assert_eq!(ms(12_345_499), "12.345");
        assert_eq!(ms(-1_500_000), "-1.500");
        assert_eq!(pct(Some(0.625), 1), "62.5");
        assert_eq!(opt(None, 2), "-");
        let mut t = table(&["a", "n"], &[1]);
        t.add_row(vec!["x", "1"]).add_row(vec!["yy", "100"]);
        assert_eq!(
            render(&t),
            "| a  |   n |\n|----|-----|\n| x  |   1 |\n| yy | 100 |\n"
        );
    }
}
