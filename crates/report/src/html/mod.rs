//! `rprof report`: one self-contained HTML page (no external scripts,
//! styles, fonts or images), built from plain data: an overview, sections
//! of charts (inline SVG, see [`chart`]) and tables, and recommendations
//! each tied to the figure that triggered it.
//!
//! The page is also well-formed XML (XHTML syntax: every element closed,
//! attributes quoted, the small sorting script in a CDATA block), so that a
//! strict parser can check it; browsers read it as HTML5.

mod build;
pub mod chart;
mod views;

pub use build::{MAX_BUCKETS, PageBuilder, TOP, Timeline, Views};
pub use views::{dist_section, idle_section, job_page, mem_section, steps_section};

use std::io::{self, Write};

pub use chart::{Bar, Chart, RoofPoint, Series};

/// A table of a section.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Caption.
    pub caption: String,
    /// Column headings (with units).
    pub headers: Vec<String>,
    /// Which columns hold numbers (right-aligned, sorted numerically).
    pub numeric: Vec<bool>,
    /// Rows of cells (already formatted).
    pub rows: Vec<Vec<String>>,
}

/// One section of the page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Section {
    /// Anchor id (letters, digits, `-`).
    pub id: String,
    /// Heading.
    pub title: String,
    /// Paragraphs (definitions, notes).
    pub text: Vec<String>,
    /// Charts.
    pub charts: Vec<Chart>,
    /// Tables.
    pub tables: Vec<Table>,
}

/// A finding and what to try, with the figure that triggered it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recommendation {
    /// One line.
    pub title: String,
    /// What to try.
    pub advice: String,
    /// The figure (`GPU utilization 14.3 % of the span`).
    pub figure: String,
    /// Section id where the figure is shown.
    pub section: String,
    /// Whose rule it is (`TensorBoard plugin`, `nsys analyze`, `rprof`).
    pub rule_of: String,
}

/// The whole page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    /// Title.
    pub title: String,
    /// Overview: (label, value) pairs.
    pub overview: Vec<(String, String)>,
    /// What the capture cannot answer, stated.
    pub cannot_answer: Vec<String>,
    /// Recommendations.
    pub recommendations: Vec<Recommendation>,
    /// Sections, in order.
    pub sections: Vec<Section>,
    /// Footer (the command and version that made the page).
    pub footer: String,
}

/// Escape text for HTML element content and attribute values; control
/// characters become visible `\xNN` (they are invalid in XML and unsafe on
/// terminals).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {
                o.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => o.push(c),
        }
    }
    o
}

fn id_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

const STYLE: &str = "
body{font-family:sans-serif;max-width:1320px;margin:0 auto;padding:0 16px;color:#111}
h1{font-size:1.6em}h2{border-bottom:2px solid #08306b;padding-bottom:4px;margin-top:2em}
table{border-collapse:collapse;margin:8px 0 16px 0;font-size:13px}
th,td{border:1px solid #bbb;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#e8eef6;cursor:pointer}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
dl.ov{display:grid;grid-template-columns:max-content auto;gap:2px 16px}dl.ov dt{font-weight:bold}
dl.ov dd{margin:0}.rec{border-left:4px solid #e69f00;padding:4px 10px;margin:8px 0;background:#fff8ec}
.fig{color:#444;font-size:13px}.note{color:#444}figure{margin:8px 0 24px 0}
figcaption{font-size:13px;color:#444}
@media print{th{background:#eee}.rec{background:#fff}}
";

/// Sorts a table by the clicked column (numbers numerically); a few lines
/// and no library, as the page must work offline.
const SCRIPT: &str = "
document.querySelectorAll('table.sortable th').forEach(function(th){
 th.addEventListener('click',function(){
  var t=th.closest('table'),b=t.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th);
  var num=th.classList.contains('n'),dir=th.dataset.dir==='a'?-1:1;th.dataset.dir=dir===1?'a':'d';
  var rows=Array.prototype.slice.call(b.rows);
  rows.sort(function(x,y){var p=x.cells[i].textContent,q=y.cells[i].textContent;
   if(num){p=parseFloat(p.replace(/[^0-9.eE+-]/g,''));q=parseFloat(q.replace(/[^0-9.eE+-]/g,''));
    if(isNaN(p))p=-Infinity;if(isNaN(q))q=-Infinity;return dir*(q-p);}
   return dir*p.localeCompare(q);});
  rows.forEach(function(r){b.appendChild(r);});});});
";

/// Write `page` as one HTML document. Charts that fail to draw are replaced
/// by a note saying so (never a partial SVG).
pub fn write_html<W: Write>(mut w: W, page: &Page) -> io::Result<()> {
    writeln!(w, "<!DOCTYPE html>")?;
    writeln!(
        w,
        "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">"
    )?;
    writeln!(w, "<head><meta charset=\"utf-8\"/>")?;
    writeln!(
        w,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>"
    )?;
    writeln!(w, "<title>{}</title>", esc(&page.title))?;
    writeln!(w, "<style>{STYLE}</style></head>")?;
    writeln!(w, "<body>")?;
    writeln!(w, "<h1>{}</h1>", esc(&page.title))?;
    writeln!(w, "<nav><p>")?;
    let mut first = true;
    for (id, title) in std::iter::once(("overview".to_owned(), "Overview".to_owned()))
        .chain(
            (!page.recommendations.is_empty())
                .then(|| ("recommendations".to_owned(), "Recommendations".to_owned())),
        )
        .chain(
            page.sections
                .iter()
                .map(|s| (id_safe(&s.id), s.title.clone())),
        )
    {
        if !first {
            write!(w, " · ")?;
        }
        first = false;
        write!(w, "<a href=\"#{}\">{}</a>", esc(&id), esc(&title))?;
    }
    writeln!(w, "</p></nav>")?;

    writeln!(
        w,
        "<section id=\"overview\"><h2>Overview</h2><dl class=\"ov\">"
    )?;
    for (k, v) in &page.overview {
        writeln!(w, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v))?;
    }
    writeln!(w, "</dl>")?;
    if !page.cannot_answer.is_empty() {
        writeln!(w, "<h3>What this capture cannot answer</h3><ul>")?;
        for c in &page.cannot_answer {
            writeln!(w, "<li>{}</li>", esc(c))?;
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(w, "</section>")?;

    if !page.recommendations.is_empty() {
        writeln!(
            w,
            "<section id=\"recommendations\"><h2>Recommendations</h2>"
        )?;
        for r in &page.recommendations {
            writeln!(
                w,
                "<div class=\"rec\"><p><b>{}</b> {}</p><p class=\"fig\">Figure: {} (<a href=\"#{}\">see section</a>; rule of {})</p></div>",
                esc(&r.title),
                esc(&r.advice),
                esc(&r.figure),
                esc(&id_safe(&r.section)),
                esc(&r.rule_of)
            )?;
        }
        writeln!(w, "</section>")?;
    }

    for s in &page.sections {
        writeln!(
            w,
            "<section id=\"{}\"><h2>{}</h2>",
            esc(&id_safe(&s.id)),
            esc(&s.title)
        )?;
        for p in &s.text {
            writeln!(w, "<p class=\"note\">{}</p>", esc(p))?;
        }
        for c in &s.charts {
            writeln!(w, "<figure id=\"chart-{}\">", esc(&id_safe(c.id())))?;
            match chart::render_svg(c) {
                Ok(svg) => w.write_all(svg.as_bytes())?,
                Err(err) => writeln!(w, "<p class=\"note\">chart not drawn: {}</p>", esc(&err))?,
            }
            writeln!(w, "<figcaption>{}</figcaption></figure>", esc(c.title()))?;
        }
        for t in &s.tables {
            write_table(&mut w, t)?;
        }
        writeln!(w, "</section>")?;
    }
    writeln!(
        w,
        "<footer><p class=\"note\">{}</p></footer>",
        esc(&page.footer)
    )?;
    writeln!(w, "<script>//<![CDATA[{SCRIPT}//]]></script>")?;
    writeln!(w, "</body></html>")?;
    Ok(())
}

fn write_table<W: Write>(w: &mut W, t: &Table) -> io::Result<()> {
    writeln!(w, "<table class=\"sortable\">")?;
    if !t.caption.is_empty() {
        writeln!(w, "<caption>{}</caption>", esc(&t.caption))?;
    }
    write!(w, "<thead><tr>")?;
    for (i, h) in t.headers.iter().enumerate() {
        let n = t.numeric.get(i).copied().unwrap_or(false);
        write!(
            w,
            "<th{}>{}</th>",
            if n { " class=\"n\"" } else { "" },
            esc(h)
        )?;
    }
    writeln!(w, "</tr></thead><tbody>")?;
    for row in &t.rows {
        write!(w, "<tr>")?;
        for (i, c) in row.iter().enumerate() {
            let n = t.numeric.get(i).copied().unwrap_or(false);
            write!(
                w,
                "<td{}>{}</td>",
                if n { " class=\"n\"" } else { "" },
                esc(c)
            )?;
        }
        writeln!(w, "</tr>")?;
    }
    writeln!(w, "</tbody></table>")
}

/// Write every chart of `page` as its own SVG file into `dir`
/// (`<section>-<chart>.svg`); returns the paths written.
pub fn write_svgs(dir: &std::path::Path, page: &Page) -> io::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut out = Vec::new();
    for s in &page.sections {
        for c in &s.charts {
            let svg = chart::render_svg(c).map_err(io::Error::other)?;
            let p = dir.join(format!("{}-{}.svg", id_safe(&s.id), id_safe(c.id())));
            std::fs::write(&p, svg)?;
            out.push(p);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_trace_text() {
        assert_eq!(
            esc("<a href='x'>&\u{1b}"),
            "&lt;a href=&#39;x&#39;&gt;&amp;\\x1b"
        );
    }
}
