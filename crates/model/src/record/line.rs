//! Reading one line of a record file, JSON or pydict.

use super::{DICT_VERSION, Header, Record};
use crate::pylit;

/// What a line of a record file holds.
#[derive(Debug)]
pub enum Line<'a> {
    /// The header line of a version 1 JSON Lines file.
    Header(Header),
    /// A kernel record.
    Record(Box<Record<'a>>),
    /// A blank line.
    Blank,
}

/// Parse one line of a record file, JSON or pydict, told apart by content.
pub fn read_line(line: &str) -> Result<Line<'_>, String> {
    let t = line.trim();
    if t.is_empty() {
        return Ok(Line::Blank);
    }
    if t.starts_with("{\"") || t == "{}" {
        if t.starts_with("{\"rprof\"") {
            let h: Header = serde_json::from_str(t).map_err(|e| format!("bad header: {e}"))?;
            if h.version > DICT_VERSION {
                return Err(format!(
                    "record format version {} is newer than this rprof reads ({DICT_VERSION}); re-run `rprof parse` or update rprof",
                    h.version
                ));
            }
            return Ok(Line::Header(h));
        }
        // our own lines by the fast reader, anything else by serde
        let mut r: Record<'_> = match super::fast::read(t) {
            Some(r) => r,
            None => serde_json::from_str(t).map_err(|e| e.to_string())?,
        };
        if !r.stack_runs.is_empty() {
            let runs = std::mem::take(&mut r.stack_runs);
            crate::stack_form::expand_runs(
                &mut r.stack,
                &mut r.domains,
                &mut r.stack_names,
                &runs,
            )?;
        }
        return Ok(Line::Record(Box::new(r)));
    }
    if t.starts_with('{') {
        let v = pylit::parse(t).map_err(|e| e.to_string())?;
        return Record::from_pydict(&v).map(|r| Line::Record(Box::new(r)));
    }
    Err("not a record (expected a JSON object or a Python dict)".into())
}
