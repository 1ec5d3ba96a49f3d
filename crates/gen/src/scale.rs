//! `rprof-gen scale`: N copies of a real nsys export in one SQLite file.
//!
//! Everything runs inside SQLite: the source is ATTACHed and each copy of an
//! event table is one `INSERT … SELECT` with per-copy offsets bound as
//! parameters, in one transaction with the journal off. NVTX texts go
//! through a Rust SQL function ([`crate::text::shift`]).

use std::fmt;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use rusqlite::functions::FunctionFlags;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, Statement, ToSql};

use crate::text::{self, Span};

/// What to generate.
#[derive(Clone, Debug)]
pub struct Options {
    /// The real export to replicate.
    pub source: PathBuf,
    /// Copies of its events (≥ 1; copy 0 is the source itself).
    pub copies: u32,
    /// Idle time between copies, ns.
    pub gap_ns: i64,
    /// Output path.
    pub output: PathBuf,
    /// Replace an existing output.
    pub force: bool,
    /// Progress on stderr.
    pub progress: bool,
}

/// Tables with one row per event: replicated once per copy. Every other
/// table is copied once.
pub const EVENT_TABLES: &[&str] = &[
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "NVTX_EVENTS",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
];

/// Timestamp columns that are always set.
const TIME_COLS: &[&str] = &["start", "end"];
/// Timestamp columns where 0 means "not collected" (kept 0).
const OPTIONAL_TIME_COLS: &[&str] = &[
    "timestamp",
    "qmdBulkReleaseDone",
    "qmdPreexitDone",
    "qmdLastCtaDone",
];

/// NVTX event types that name or declare things once per process (domains,
/// categories, threads, devices, streams, NVTXT metadata): copy 0 only.
/// Values from ENUM_NSYS_EVENT_TYPE.
const ONE_OFF_NVTX_TYPES: &[i64] = &[33, 39, 64, 72, 73, 74, 75, 76, 97, 98, 99];

const NVTX: &str = "NVTX_EVENTS";
const KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
const TEXT_FN: &str = "rprof_gen_text";
const TEXTID_MAP: &str = "temp.rprof_gen_textids";

/// Rows per table and the output, for the summary line.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Output path.
    pub output: PathBuf,
    /// Copies made.
    pub copies: u32,
    /// (table, source rows, output rows) for the event tables.
    pub tables: Vec<(String, u64, u64)>,
    /// Rows added to `StringIds`.
    pub strings_added: u64,
    /// Shifts per copy: time (ns), correlation id, seq, op_id.
    pub steps: Steps,
    /// Output size, bytes.
    pub bytes: u64,
    /// Wall time, s.
    pub seconds: f64,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "rprof-gen: wrote {} ({:.0} MB) in {:.1} s: {} copies",
            self.output.display(),
            self.bytes as f64 / 1e6,
            self.seconds,
            self.copies
        )?;
        for (t, src, out) in &self.tables {
            writeln!(f, "  {t:<38} {src:>8} -> {out:>10} rows")?;
        }
        write!(
            f,
            "  StringIds: +{} rows; per copy: time +{} ns, correlationId +{}, seq +{}, op_id +{}",
            self.strings_added,
            self.steps.time,
            self.steps.correlation,
            self.steps.seq,
            self.steps.op_id
        )
    }
}

/// Per-copy shifts, derived from the source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Steps {
    /// Time, ns: span of all event timestamps + gap.
    pub time: i64,
    /// CUPTI correlation id.
    pub correlation: i64,
    /// Kernel `gridId`.
    pub grid: i64,
    /// NVTX `rangeId` (start/end ranges).
    pub range: i64,
    /// PyTorch autograd `seq = N`.
    pub seq: i64,
    /// PyTorch RecordFunction `op_id = M`.
    pub op_id: i64,
}

fn q(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

struct SchemaEntry {
    kind: String,
    name: String,
    sql: String,
}

fn schema(src: &Connection) -> rusqlite::Result<Vec<SchemaEntry>> {
    let mut st = src.prepare(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid",
    )?;
    let rows = st.query_map([], |r| {
        Ok(SchemaEntry {
            kind: r.get(0)?,
            name: r.get(1)?,
            sql: r.get(2)?,
        })
    })?;
    rows.collect()
}

fn columns(conn: &Connection, schema: &str, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(&format!("SELECT name FROM {schema}.pragma_table_info(?1)"))?;
    let rows = st.query_map([table], |r| r.get::<_, String>(0))?;
    rows.collect()
}

fn min_max(conn: &Connection, table: &str, col: &str, positive: bool) -> rusqlite::Result<Span> {
    let filter = if positive {
        format!(" WHERE {} > 0", q(col))
    } else {
        String::new()
    };
    let (lo, hi): (Option<i64>, Option<i64>) = conn.query_row(
        &format!(
            "SELECT min({c}), max({c}) FROM {t}{filter}",
            c = q(col),
            t = q(table)
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mut s = Span::default();
    if let (Some(lo), Some(hi)) = (lo, hi) {
        s.add(lo);
        s.add(hi);
    }
    Ok(s)
}

fn widen(into: &mut Span, s: Span) {
    if s.seen {
        into.add(s.min);
        into.add(s.max);
    }
}

/// What the source holds that the copies depend on.
struct Plan {
    /// Event tables present, with their columns.
    events: Vec<(String, Vec<String>)>,
    steps: Steps,
    /// `StringIds` ids referenced by replicated NVTX rows, in id order.
    text_ids: Vec<i64>,
    /// First free `StringIds` id.
    string_base: i64,
}

fn plan(src: &Connection, tables: &[&SchemaEntry], gap_ns: i64) -> anyhow::Result<Plan> {
    let mut events = Vec::new();
    for t in EVENT_TABLES {
        if tables.iter().any(|e| e.name == *t) {
            events.push((t.to_string(), columns(src, "main", t)?));
        }
    }
    if events.is_empty() {
        bail!(
            "the source has none of the event tables {}: is it an nsys SQLite export?",
            EVENT_TABLES.join(", ")
        );
    }
    let mut time = Span::default();
    let mut corr = Span::default();
    let mut grid = Span::default();
    let mut range = Span::default();
    for (t, cols) in &events {
        let has = |c: &str| cols.iter().any(|x| x == c);
        for c in TIME_COLS {
            if has(c) {
                widen(&mut time, min_max(src, t, c, false)?);
            }
        }
        if has("timestamp") {
            widen(&mut time, min_max(src, t, "timestamp", true)?);
        }
        if has("correlationId") {
            widen(&mut corr, min_max(src, t, "correlationId", false)?);
        }
        if t == KERNEL && has("gridId") {
            widen(&mut grid, min_max(src, t, "gridId", false)?);
        }
        if t == NVTX && has("rangeId") {
            widen(&mut range, min_max(src, t, "rangeId", false)?);
        }
    }
    if !time.seen {
        bail!("the source's event tables are empty: nothing to replicate");
    }

    let (mut seq, mut op_id) = (Span::default(), Span::default());
    let mut text_ids = Vec::new();
    let nvtx_cols = events
        .iter()
        .find(|(t, _)| t == NVTX)
        .map(|(_, c)| c.clone())
        .unwrap_or_default();
    let nvtx_has = |c: &str| nvtx_cols.iter().any(|x| x == c);
    let has_strings = tables.iter().any(|e| e.name == "StringIds");
    if nvtx_has("text") {
        let mut st = src.prepare("SELECT text FROM NVTX_EVENTS WHERE text IS NOT NULL")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            if let ValueRef::Text(t) = r.get_ref(0)? {
                text::scan(&String::from_utf8_lossy(t), &mut seq, &mut op_id);
            }
        }
    }
    if nvtx_has("textId") && has_strings {
        let filter = if nvtx_has("eventType") {
            format!(" AND eventType NOT IN ({})", one_off_list())
        } else {
            String::new()
        };
        let mut st = src.prepare(&format!(
            "SELECT DISTINCT n.textId, s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId \
             WHERE n.textId IS NOT NULL{filter} ORDER BY n.textId"
        ))?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            text_ids.push(r.get::<_, i64>(0)?);
            if let ValueRef::Text(t) = r.get_ref(1)? {
                text::scan(&String::from_utf8_lossy(t), &mut seq, &mut op_id);
            }
        }
    }
    let string_base = if has_strings {
        src.query_row("SELECT coalesce(max(id), -1) + 1 FROM StringIds", [], |r| {
            r.get::<_, i64>(0)
        })?
    } else {
        0
    };
    Ok(Plan {
        events,
        steps: Steps {
            time: time.max - time.min + gap_ns.max(0),
            correlation: corr.step(),
            grid: grid.step(),
            range: range.step(),
            seq: seq.step(),
            op_id: op_id.step(),
        },
        text_ids,
        string_base,
    })
}

fn one_off_list() -> String {
    ONE_OFF_NVTX_TYPES
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `INSERT … SELECT` that writes copy `:k` of `table`.
fn copy_sql(table: &str, cols: &[String]) -> String {
    let is_nvtx = table == NVTX;
    let exprs: Vec<String> = cols
        .iter()
        .map(|c| {
            let qc = q(c);
            match c.as_str() {
                c if TIME_COLS.contains(&c) => format!("{qc} + :toff"),
                c if OPTIONAL_TIME_COLS.contains(&c) => {
                    format!("CASE WHEN {qc} > 0 THEN {qc} + :toff ELSE {qc} END")
                }
                "correlationId" => format!("{qc} + :coff"),
                "gridId" if table == KERNEL => format!("{qc} + :goff"),
                "rangeId" if is_nvtx => format!("{qc} + :roff"),
                "text" if is_nvtx => format!("{TEXT_FN}({qc}, :k)"),
                "textId" if is_nvtx => format!(
                    "CASE WHEN :k = 0 OR {qc} IS NULL THEN {qc} ELSE coalesce(\
                     :sbase + (:k - 1) * :sm + (SELECT idx FROM {TEXTID_MAP} WHERE old = {qc}), {qc}) END"
                ),
                _ => qc,
            }
        })
        .collect();
    let filter = if is_nvtx && cols.iter().any(|c| c == "eventType") {
        format!(" WHERE :k = 0 OR \"eventType\" NOT IN ({})", one_off_list())
    } else {
        String::new()
    };
    format!(
        "INSERT INTO main.{t} SELECT {e} FROM src.{t}{filter}",
        t = q(table),
        e = exprs.join(", ")
    )
}

/// Bind the named parameters the statement has.
fn bind(st: &mut Statement<'_>, vals: &[(&str, i64)]) -> rusqlite::Result<()> {
    for (name, v) in vals {
        if let Some(i) = st.parameter_index(name)? {
            st.raw_bind_parameter(i, v)?;
        }
    }
    Ok(())
}

/// Result of the text function: the argument itself when unchanged (no copy).
enum TextOut {
    Same(rusqlite::functions::SqlFnArg),
    New(String),
}

impl ToSql for TextOut {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            TextOut::Same(a) => a.to_sql(),
            TextOut::New(s) => s.to_sql(),
        }
    }
}

fn register_text_fn(dst: &Connection, steps: Steps) -> rusqlite::Result<()> {
    dst.create_scalar_function(
        TEXT_FN,
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        move |ctx| {
            let k: i64 = ctx.get(1)?;
            let new = match ctx.get_raw(0) {
                ValueRef::Text(t) if k != 0 => std::str::from_utf8(t)
                    .ok()
                    .and_then(|s| text::shift(s, k * steps.seq, k * steps.op_id)),
                _ => None,
            };
            Ok(match new {
                Some(s) => TextOut::New(s),
                None => TextOut::Same(ctx.get_arg(0)),
            })
        },
    )
}

fn partial_path(output: &Path) -> PathBuf {
    let mut s = output.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

/// Generate the scaled file.
pub fn scale(opts: &Options) -> anyhow::Result<Summary> {
    let t0 = Instant::now();
    let source = &opts.source;
    if !source.is_file() {
        bail!(
            "source trace {} not found (a real nsys SQLite export is needed)",
            source.display()
        );
    }
    if opts.output.exists() && !opts.force {
        bail!(
            "{} exists (pass --force to replace it)",
            opts.output.display()
        );
    }
    let src_str = source
        .to_str()
        .with_context(|| format!("{}: path is not UTF-8", source.display()))?;
    let src = Connection::open_with_flags(source, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .with_context(|| format!("opening {}", source.display()))?;
    let entries =
        schema(&src).with_context(|| format!("{}: reading sqlite_master", source.display()))?;
    let tables: Vec<&SchemaEntry> = entries
        .iter()
        .filter(|e| e.kind == "table" && !e.name.starts_with("sqlite_"))
        .collect();
    let plan = plan(&src, &tables, opts.gap_ns)
        .with_context(|| format!("{}: reading the source", source.display()))?;
    let pragma = |name: &str| -> rusqlite::Result<i64> {
        src.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
    };
    let page_size = pragma("page_size")?;
    let auto_vacuum = pragma("auto_vacuum")?;
    let user_version = pragma("user_version")?;
    let application_id = pragma("application_id")?;
    let mut src_rows = Vec::new();
    for (t, _) in &plan.events {
        let n: i64 = src.query_row(&format!("SELECT count(*) FROM {}", q(t)), [], |r| r.get(0))?;
        src_rows.push(n as u64);
    }
    drop(src);

    let partial = partial_path(&opts.output);
    if partial.exists() {
        std::fs::remove_file(&partial)
            .with_context(|| format!("removing {}", partial.display()))?;
    }
    let dst =
        Connection::open(&partial).with_context(|| format!("creating {}", partial.display()))?;
    let ctx = |what: &str| format!("{}: {what}", partial.display());
    // page size and auto-vacuum must be set before the first table
    dst.execute_batch(&format!(
        "PRAGMA page_size = {page_size}; PRAGMA auto_vacuum = {auto_vacuum};"
    ))
    .with_context(|| ctx("setting the page size"))?;
    dst.pragma_update_and_check(None, "journal_mode", "OFF", |_| Ok(()))
        .with_context(|| ctx("journal_mode=OFF"))?;
    dst.execute_batch(&format!(
        "PRAGMA synchronous = OFF; PRAGMA main.locking_mode = EXCLUSIVE; \
         PRAGMA cache_size = -262144; PRAGMA temp_store = MEMORY; \
         PRAGMA user_version = {user_version}; PRAGMA application_id = {application_id};"
    ))
    .with_context(|| ctx("setting pragmas"))?;
    register_text_fn(&dst, plan.steps).with_context(|| ctx("registering the text function"))?;
    for t in &tables {
        dst.execute_batch(&t.sql)
            .with_context(|| ctx(&format!("creating table {}", t.name)))?;
    }
    dst.execute("ATTACH DATABASE ?1 AS src", [src_str])
        .with_context(|| ctx("attaching the source"))?;

    dst.execute_batch("BEGIN")?;
    // tables copied once
    for t in &tables {
        if EVENT_TABLES.contains(&t.name.as_str()) {
            continue;
        }
        dst.execute(
            &format!("INSERT INTO main.{n} SELECT * FROM src.{n}", n = q(&t.name)),
            [],
        )
        .with_context(|| ctx(&format!("copying table {}", t.name)))?;
    }

    // fresh StringIds rows for the registered NVTX strings of copies 1..N
    let m = plan.text_ids.len() as i64;
    let mut strings_added = 0u64;
    dst.execute_batch(&format!(
        "CREATE TABLE {TEXTID_MAP} (old INTEGER PRIMARY KEY, idx INTEGER NOT NULL)"
    ))?;
    {
        let mut ins = dst.prepare(&format!("INSERT INTO {TEXTID_MAP} VALUES (?1, ?2)"))?;
        for (i, id) in plan.text_ids.iter().enumerate() {
            ins.execute([*id, i as i64])?;
        }
    }
    if m > 0 {
        let mut st = dst.prepare(&format!(
            "INSERT INTO main.StringIds (id, value) \
             SELECT :sbase + (:k - 1) * :sm + m.idx, {TEXT_FN}(s.value, :k) \
             FROM {TEXTID_MAP} m JOIN src.StringIds s ON s.id = m.old ORDER BY m.idx"
        ))?;
        for k in 1..i64::from(opts.copies) {
            bind(
                &mut st,
                &[(":k", k), (":sbase", plan.string_base), (":sm", m)],
            )?;
            strings_added += st.raw_execute().with_context(|| ctx("adding strings"))? as u64;
        }
    }

    // event tables, copy by copy (rowid order = copy order)
    let s = plan.steps;
    let mut table_rows = Vec::new();
    for ((t, cols), src_n) in plan.events.iter().zip(&src_rows) {
        let sql = copy_sql(t, cols);
        let mut st = dst
            .prepare(&sql)
            .with_context(|| ctx(&format!("preparing {sql}")))?;
        let mut out_n = 0u64;
        let tick = (opts.copies / 20).max(1);
        let tty = opts.progress && std::io::stderr().is_terminal();
        for k in 0..i64::from(opts.copies) {
            bind(
                &mut st,
                &[
                    (":k", k),
                    (":toff", k * s.time),
                    (":coff", k * s.correlation),
                    (":goff", k * s.grid),
                    (":roff", k * s.range),
                    (":sbase", plan.string_base),
                    (":sm", m),
                ],
            )?;
            out_n += st
                .raw_execute()
                .with_context(|| ctx(&format!("copy {k} of {t}")))? as u64;
            if tty && (k as u32 + 1).is_multiple_of(tick) {
                eprint!(
                    "\rrprof-gen: {t}: copy {}/{} ({:.1} s)   ",
                    k + 1,
                    opts.copies,
                    t0.elapsed().as_secs_f64()
                );
            }
        }
        if opts.progress {
            let clear = if tty { "\r" } else { "" };
            eprintln!(
                "{clear}rprof-gen: {t}: {out_n} rows ({:.1} s)          ",
                t0.elapsed().as_secs_f64()
            );
        }
        table_rows.push((t.clone(), *src_n, out_n));
    }
    dst.execute_batch("COMMIT")
        .with_context(|| ctx("committing"))?;

    // indexes, views and triggers after the data (faster to build once)
    for e in entries.iter().filter(|e| e.kind != "table") {
        dst.execute_batch(&e.sql)
            .with_context(|| ctx(&format!("creating {} {}", e.kind, e.name)))?;
    }
    dst.execute_batch("DETACH DATABASE src")?;
    dst.close()
        .map_err(|(_, e)| e)
        .with_context(|| ctx("closing"))?;
    std::fs::rename(&partial, &opts.output).with_context(|| {
        format!(
            "renaming {} to {}",
            partial.display(),
            opts.output.display()
        )
    })?;
    let bytes = std::fs::metadata(&opts.output)
        .map(|m| m.len())
        .unwrap_or(0);
    Ok(Summary {
        output: opts.output.clone(),
        copies: opts.copies,
        tables: table_rows,
        strings_added,
        steps: s,
        bytes,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_sql_shifts_the_right_columns() {
        let cols: Vec<String> = ["start", "end", "eventType", "text", "textId", "rangeId"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let sql = copy_sql(NVTX, &cols);
        assert!(sql.starts_with("INSERT INTO main.\"NVTX_EVENTS\" SELECT \"start\" + :toff, \"end\" + :toff, \"eventType\", rprof_gen_text(\"text\", :k)"));
        assert!(sql.contains("\"rangeId\" + :roff"));
        assert!(sql.ends_with(
            "WHERE :k = 0 OR \"eventType\" NOT IN (33, 39, 64, 72, 73, 74, 75, 76, 97, 98, 99)"
        ));
        let k = copy_sql(
            KERNEL,
            &["correlationId".into(), "gridId".into(), "text".into()],
        );
        assert_eq!(
            k,
            "INSERT INTO main.\"CUPTI_ACTIVITY_KIND_KERNEL\" SELECT \"correlationId\" + :coff, \"gridId\" + :goff, \"text\" FROM src.\"CUPTI_ACTIVITY_KIND_KERNEL\""
        );
    }
}
