//! Small helpers for the human-readable reports: a comfy-table table with
//! a fixed look (no terminal-width or tty dependence, so the bytes are the
//! same everywhere) and number formats.

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};

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
    let mut s = String::new();
    for line in t.lines() {
        s.push_str(line.trim_end());
        s.push('\n');
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
