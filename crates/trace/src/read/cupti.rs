//! The CUPTI activity tables that nsys exports and nvprof databases share
//! (copies, sets, synchronisation records) and the lenient column readers
//! both layouts use. Columns are read by name; those a layout lacks read as
//! NULL.

use crate::FastMap as HashMap;
use crate::error::Result;
use crate::model::{CopyKind, MemKind, MemOp, MemoryKind, SyncEvent, SyncKind};
use crate::model::{StrPool, StrRef};
use crate::read::sql::{Cells, Db, RawQuery, RawRow};

/// An integer column, whatever SQLite's storage class (NULL → `None`).
#[inline]
pub(crate) fn int_at(r: &impl Cells, i: usize) -> rusqlite::Result<Option<i64>> {
    use rusqlite::types::ValueRef;
    Ok(match r.cell(i)? {
        ValueRef::Integer(x) => Some(x),
        ValueRef::Real(f) => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|t| t.trim().parse().ok()),
        ValueRef::Null | ValueRef::Blob(_) => None,
    })
}

/// Run `sql` (a query on `table`) and map each row: `Ok(Some(x))` keeps
/// `x`, `Ok(None)` skips the row and counts it. Returns the kept rows and
/// the count of skipped ones; an SQLite error names the table.
pub(crate) fn collect_rows<T>(
    db: &Db,
    sql: &str,
    table: &str,
    row: impl FnMut(&RawRow<'_>) -> rusqlite::Result<Option<T>>,
) -> Result<(Vec<T>, u64)> {
    let mut out = Vec::new();
    let skipped = collect_rows_into(db, sql, table, &mut out, row)?;
    // the list is kept for the trace's life: without the slack of its
    // doubling (at 3 M kernels, 26 MB of the synchronisation records' 46)
    out.shrink_to_fit();
    Ok((out, skipped))
}

/// [`collect_rows`] appending to `out`; the number of rows skipped.
pub(crate) fn collect_rows_into<T>(
    db: &Db,
    sql: &str,
    table: &str,
    out: &mut Vec<T>,
    mut row: impl FnMut(&RawRow<'_>) -> rusqlite::Result<Option<T>>,
) -> Result<u64> {
    let mut skipped = 0u64;
    let mut run = || -> rusqlite::Result<()> {
        let mut rows = RawQuery::new(&db.conn, sql)?;
        while let Some(r) = rows.next()? {
            let r = &r;
            match row(r)? {
                Some(x) => out.push(x),
                None => skipped += 1,
            }
        }
        Ok(())
    };
    run().map_err(|e| db.err(format!("reading table {table}"), e))?;
    Ok(skipped)
}

/// `copyKind` names (ENUM_CUDA_MEMCPY_OPER; CUPTI uses the same numbers).
pub(crate) fn copy_kind(kind: Option<i64>) -> &'static str {
    match kind {
        Some(1) => "Memcpy HtoD",
        Some(2) => "Memcpy DtoH",
        Some(3) => "Memcpy HtoA",
        Some(4) => "Memcpy AtoH",
        Some(5) => "Memcpy AtoA",
        Some(6) => "Memcpy AtoD",
        Some(7) => "Memcpy DtoA",
        Some(8) => "Memcpy DtoD",
        Some(9) => "Memcpy HtoH",
        Some(10) => "Memcpy PtoP",
        _ => "Memcpy",
    }
}

/// Rows of memcpy (`true`) and memset (`false`) tables, nsys or CUPTI
/// (nvprof) layout alike: columns are read by name and those a layout lacks
/// read as NULL. Returns each operation with the process bits of its row
/// (`globalPid`, nsys only). Rows without a start or an end are skipped and
/// counted in a note per table.
pub(crate) fn read_memop_tables(
    db: &Db,
    tables: &[(String, bool)],
    strings: &mut StrPool,
    cupti_mem_kinds: bool,
    notes: &mut Vec<String>,
) -> Result<Vec<(MemOp, u64)>> {
    let mem_kind = |code: Option<i64>| {
        if cupti_mem_kinds {
            MemoryKind::from_cupti(code)
        } else {
            MemoryKind::from_nsys(code)
        }
    };
    // room for every table's rows at once (by their largest rowids):
    // growing by doubling, and then joining the tables' lists, held up to
    // twice the copies and sets at the read's peak (3 M kernels: 1 M rows)
    let room = tables
        .iter()
        .map(|(t, _)| crate::read::nsys::row_count_hint(db, t))
        .fold(0usize, usize::saturating_add);
    let mut out = crate::read::nsys::with_room(room);
    let mut names: HashMap<&'static str, StrRef> = HashMap::default();
    for (table, is_copy) in tables {
        let (list, _) = db.select_list(
            table,
            &[
                "start",
                "end",
                "deviceId",
                "streamId",
                "correlationId",
                "globalPid",
                "bytes",
                "copyKind",
                "srcKind",
                "dstKind",
                "memKind",
                "memoryKind",
            ],
            &["start", "end"],
        )?;
        let sql = format!("SELECT {list} FROM \"{table}\"");
        let skipped = collect_rows_into(db, &sql, table, &mut out, |r| {
            let int = |i: usize| int_at(r, i);
            let (Some(start), Some(end)) = (int(0)?, int(1)?) else {
                return Ok(None);
            };
            let label = if *is_copy {
                copy_kind(int(7)?)
            } else {
                "Memset"
            };
            let name = *names.entry(label).or_insert_with(|| strings.push(label));
            let (kind, src_mem, dst_mem) = if *is_copy {
                (
                    MemKind::Copy(CopyKind::from_code(int(7)?)),
                    mem_kind(int(8)?),
                    mem_kind(int(9)?),
                )
            } else {
                (
                    MemKind::Set,
                    mem_kind(int(10)?.or(int(11)?)),
                    MemoryKind::Unknown,
                )
            };
            let gpid = int(5)?;
            Ok(Some((
                MemOp {
                    start_ns: start,
                    end_ns: end,
                    device: int(2)?.unwrap_or(0),
                    stream: int(3)?.unwrap_or(0),
                    correlation: int(4)?.unwrap_or(-1),
                    bytes: int(6)?,
                    name,
                    launch: None,
                    kind,
                    src_mem,
                    dst_mem,
                    pid: gpid.map(|g| crate::model::nsys_pid(g as u64)),
                },
                gpid.unwrap_or(0) as u64,
            )))
        })?;
        if skipped > 0 {
            notes.push(skipped_note(skipped, table));
        }
    }
    Ok(out)
}

/// The note for rows of `table` dropped for a NULL start or end.
fn skipped_note(rows: u64, table: &str) -> String {
    format!("{rows} rows of {table} without a start or an end were skipped")
}

/// `CUPTI_ACTIVITY_KIND_SYNCHRONIZATION` rows (nsys and nvprof layouts).
/// Rows without a start or an end are skipped and counted in a note.
pub(crate) fn read_syncs(db: &Db, table: &str, notes: &mut Vec<String>) -> Result<Vec<SyncEvent>> {
    let (list, _) = db.select_list(
        table,
        &[
            "start",
            "end",
            "deviceId",
            "streamId",
            "correlationId",
            "globalPid",
            "syncType",
            "type",
        ],
        &["start", "end"],
    )?;
    let sql = format!("SELECT {list} FROM \"{table}\" ORDER BY start, rowid");
    let (out, skipped) = collect_rows(db, &sql, table, |r| {
        let int = |i: usize| int_at(r, i);
        let (Some(start), Some(end)) = (int(0)?, int(1)?) else {
            return Ok(None);
        };
        Ok(Some(SyncEvent {
            start_ns: start,
            end_ns: end,
            device: int(2)?,
            stream: int(3)?,
            correlation: int(4)?,
            pid: int(5)?.map(|g| crate::model::nsys_pid(g as u64)),
            kind: SyncKind::from_code(int(6)?.or(int(7)?)),
        }))
    })?;
    if skipped > 0 {
        notes.push(skipped_note(skipped, table));
    }
    Ok(out)
}
