//! Read-only SQLite access with table/column discovery.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

/// An open, read-only profile database and what tables it has.
pub struct Db {
    /// The connection (read-only: SQLite never writes the database; it
    /// reads committed rows of a `-wal` file and refuses a hot journal it
    /// would have to roll back).
    pub conn: Connection,
    /// The input path, for messages.
    pub path: PathBuf,
    tables: Vec<String>,
    /// Views: never read (a view's query can run without end), only named
    /// in the error when one stands where a table should be.
    views: Vec<String>,
}

impl Db {
    /// Open `path` read-only.
    pub fn open(path: &Path) -> Result<Db> {
        // not immutable=1: that would ignore a WAL file's committed rows
        // and read a hot journal's uncommitted pages as data
        let uri = format!("{}?mode=ro", uri_escape(path));
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags).map_err(|e| Error::Sqlite {
            path: path.to_owned(),
            what: "cannot open".into(),
            source: e,
        })?;
        // no text or blob longer than this is ever materialised
        conn.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
            super::limits::MAX_SQL_TEXT_BYTES as i32,
        )
        .map_err(|e| Error::Sqlite {
            path: path.to_owned(),
            what: "cannot open".into(),
            source: e,
        })?;
        let mut db = Db {
            conn,
            path: path.to_owned(),
            tables: Vec::new(),
            views: Vec::new(),
        };
        let cant_read = |e: Error| {
            match e {
            Error::Sqlite { source, .. } if is_not_a_database(&source) => Error::NotADatabase {
                path: path.to_owned(),
            },
            Error::Sqlite { source, .. } if is_readonly_rollback(&source) => Error::Refused {
                path: path.to_owned(),
                detail: "has a hot journal (a write was interrupted): open it once with sqlite3 to roll it back, or copy it with its -journal file; rprof opens profiles read-only".into(),
            },
            Error::Sqlite { source, .. } => Error::Sqlite {
                path: path.to_owned(),
                what: "reading the list of tables".into(),
                source,
            },
            other => other,
        }
        };
        db.views = db
            .strings("SELECT name FROM sqlite_master WHERE type = 'view'")
            .map_err(cant_read)?;
        db.tables = db
            .strings("SELECT name FROM sqlite_master WHERE type = 'table'")
            .map_err(cant_read)?;
        Ok(db)
    }

    /// Wrap a SQLite error with the file and the step.
    pub fn err(&self, what: impl Into<String>, source: rusqlite::Error) -> Error {
        if matches!(&source, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::TooBig)
        {
            return Error::Refused {
                path: self.path.clone(),
                detail: format!(
                    "{}: a text or blob longer than {} MiB (rprof's limit)",
                    what.into(),
                    super::limits::MAX_SQL_TEXT_BYTES >> 20
                ),
            };
        }
        Error::Sqlite {
            path: self.path.clone(),
            what: what.into(),
            source,
        }
    }

    /// All values of a one-column text query.
    pub fn strings(&self, sql: &str) -> Result<Vec<String>> {
        let run = || -> rusqlite::Result<Vec<String>> {
            let mut st = self.conn.prepare(sql)?;
            let rows = st.query_map([], |r| r.get::<_, Option<String>>(0))?;
            let mut out = Vec::new();
            for r in rows {
                if let Some(s) = r? {
                    out.push(s);
                }
            }
            Ok(out)
        };
        run().map_err(|e| self.err(sql.to_owned(), e))
    }

    /// True if a table of exactly this name exists.
    pub fn has_table(&self, name: &str) -> bool {
        self.tables.iter().any(|t| t == name)
    }

    /// A view whose name is one rprof reads as a table (`NAME` or
    /// `NAME_V<n>` of one of `names`), if there is one.
    pub fn view_named(&self, names: &[&str]) -> Option<&str> {
        self.views
            .iter()
            .find(|v| {
                names.iter().any(|n| {
                    v.as_str() == *n
                        || v.strip_prefix(n)
                            .and_then(|r| r.strip_prefix("_V"))
                            .is_some_and(|d| d.parse::<u32>().is_ok())
                })
            })
            .map(String::as_str)
    }

    /// The physical name of a logical table: the exact name, else the
    /// highest `NAME_V<n>` (reported by a third-party reader for some newer
    /// nsys exports; harmless when absent).
    pub fn resolve(&self, name: &str) -> Option<String> {
        if self.has_table(name) {
            return Some(name.to_owned());
        }
        let prefix = format!("{name}_V");
        self.tables
            .iter()
            .filter_map(|t| {
                let n: u32 = t.strip_prefix(&prefix)?.parse().ok()?;
                Some((n, t))
            })
            .max()
            .map(|(_, t)| t.clone())
    }

    /// Column names of `table`, in table order.
    pub fn columns(&self, table: &str) -> Result<Vec<String>> {
        let sql = format!(
            "SELECT name FROM pragma_table_info('{}')",
            table.replace('\'', "''")
        );
        self.strings(&sql).map_err(|e| match e {
            Error::Sqlite { source, .. } => {
                self.err(format!("reading the columns of {table}"), source)
            }
            other => other,
        })
    }

    /// Build `SELECT` expressions for `wanted` columns of `table`: the column
    /// itself when it exists, else `NULL`. Fails naming the first missing
    /// column of `required`.
    pub fn select_list(
        &self,
        table: &str,
        wanted: &[&str],
        required: &[&str],
    ) -> Result<(String, Vec<bool>)> {
        let cols = self.columns(table)?;
        for r in required {
            if !cols.iter().any(|c| c == r) {
                return Err(Error::MissingColumn {
                    path: self.path.clone(),
                    table: table.to_owned(),
                    column: (*r).to_owned(),
                });
            }
        }
        let mut present = Vec::with_capacity(wanted.len());
        let list = wanted
            .iter()
            .map(|w| {
                let has = cols.iter().any(|c| c == w);
                present.push(has);
                if has {
                    format!("\"{w}\"")
                } else {
                    "NULL".to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        Ok((list, present))
    }

    /// One integer from a scalar query, `None` on NULL, no row or error.
    pub fn scalar_i64(&self, sql: &str) -> Option<i64> {
        self.conn
            .query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
            .ok()
            .flatten()
    }
}

/// A query stepped through SQLite's C interface, for the large tables
/// read row by row (kernels, API calls, NVTX ranges).
///
/// Hand-written for speed: rusqlite's `Row::get_ref` asks SQLite for the
/// column count, the value's type and the value (three calls, each behind
/// checks and a `Result`, two of which find the column again), where a
/// value needs one call to find it ([`RawRow`]'s `value`). Column
/// access was 14 % of `parse`'s CPU samples on the 1 M-kernel benchmark
/// (perf: `sqlite3_column_int64`, `sqlite3_column_type`, `value_ref`,
/// `int_at`, `sqlite3_column_count`). The statement is prepared,
/// stepped and finalized here; errors are rusqlite's, made as rusqlite
/// makes them (the step's result code and `sqlite3_errmsg`).
pub(crate) struct RawQuery<'c> {
    stmt: std::ptr::NonNull<rusqlite::ffi::sqlite3_stmt>,
    db: *mut rusqlite::ffi::sqlite3,
    /// Result columns: an index past them reads as NULL.
    cols: usize,
    _conn: std::marker::PhantomData<&'c Connection>,
}

impl<'c> RawQuery<'c> {
    /// Prepare `sql` (one statement) on `conn`.
    pub(crate) fn new(conn: &'c Connection, sql: &str) -> rusqlite::Result<RawQuery<'c>> {
        use rusqlite::ffi;
        let len = std::ffi::c_int::try_from(sql.len()).map_err(|_| {
            rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_TOOBIG), None)
        })?;
        // SAFETY: the handle is the open connection's, which `'c` keeps
        // alive (and unmoved: it is behind rusqlite's `RefCell`) for as
        // long as this query; rusqlite uses it on this thread only while
        // the caller holds no query of its own on it.
        let db = unsafe { conn.handle() };
        let mut stmt = std::ptr::null_mut();
        // SAFETY: `sql` is valid for `len` bytes (SQLite reads no further
        // when given the length), `stmt` is a valid place for the result.
        let rc = unsafe {
            ffi::sqlite3_prepare_v2(
                db,
                sql.as_ptr().cast(),
                len,
                &mut stmt,
                std::ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            // (SQLite leaves `stmt` null on failure.) An error in the SQL
            // itself says where, as rusqlite's `prepare` does.
            return Err(match raw_error(db, rc) {
                rusqlite::Error::SqliteFailure(error, msg)
                    if error.code == ffi::ErrorCode::Unknown =>
                {
                    // SAFETY: the open connection whose last call failed
                    match unsafe { ffi::sqlite3_error_offset(db) } {
                        offset if offset >= 0 => rusqlite::Error::SqlInputError {
                            error,
                            msg: msg.unwrap_or_else(|| "error".to_owned()),
                            sql: sql.to_owned(),
                            offset,
                        },
                        _ => rusqlite::Error::SqliteFailure(error, msg),
                    }
                }
                e => e,
            });
        }
        let stmt = std::ptr::NonNull::new(stmt).ok_or(rusqlite::Error::InvalidQuery)?;
        // SAFETY: a prepared statement.
        let cols = unsafe { ffi::sqlite3_column_count(stmt.as_ptr()) }.max(0) as usize;
        Ok(RawQuery {
            stmt,
            db,
            cols,
            _conn: std::marker::PhantomData,
        })
    }

    /// Run the query again from its first row, with its parameters
    /// (`?1`, `?2`, …) bound to `params`.
    pub(crate) fn restart(&mut self, params: &[i64]) -> rusqlite::Result<()> {
        use rusqlite::ffi;
        let stmt = self.stmt.as_ptr();
        // SAFETY: a prepared statement; reset before binding, as SQLite
        // asks of a statement that has been stepped. (Reset reports the
        // last step's error again, which `next` returned already.)
        let wanted = unsafe {
            ffi::sqlite3_reset(stmt);
            ffi::sqlite3_bind_parameter_count(stmt).max(0) as usize
        };
        if wanted != params.len() {
            return Err(rusqlite::Error::InvalidParameterCount(params.len(), wanted));
        }
        for (k, &v) in params.iter().enumerate() {
            // SAFETY: as above; `k + 1` is a parameter of the statement
            let rc = unsafe { ffi::sqlite3_bind_int64(stmt, k as std::ffi::c_int + 1, v) };
            if rc != ffi::SQLITE_OK {
                return Err(raw_error(self.db, rc));
            }
        }
        Ok(())
    }

    /// The next row; `None` after the last.
    #[inline]
    pub(crate) fn next(&mut self) -> rusqlite::Result<Option<RawRow<'_>>> {
        use rusqlite::ffi;
        // SAFETY: a prepared statement, not finalized until drop; no row
        // of the last step is alive (they borrow `self` mutably).
        match unsafe { ffi::sqlite3_step(self.stmt.as_ptr()) } {
            ffi::SQLITE_ROW => Ok(Some(RawRow {
                stmt: self.stmt,
                cols: self.cols,
                _query: std::marker::PhantomData,
            })),
            ffi::SQLITE_DONE => Ok(None),
            rc => Err(raw_error(self.db, rc)),
        }
    }
}

impl Drop for RawQuery<'_> {
    fn drop(&mut self) {
        // SAFETY: prepared by `new`, finalized once, here.
        unsafe {
            rusqlite::ffi::sqlite3_finalize(self.stmt.as_ptr());
        }
    }
}

/// rusqlite's error for result code `rc` on connection `db`.
fn raw_error(db: *mut rusqlite::ffi::sqlite3, rc: std::ffi::c_int) -> rusqlite::Error {
    // SAFETY: `db` is an open connection; `sqlite3_errmsg` returns a
    // NUL-terminated string owned by it, `sqlite3_errstr` a static one,
    // copied out at once. (The connection's message when its last error
    // is this one, else the code's own words, as rusqlite chooses.)
    let message = unsafe {
        let m = if rusqlite::ffi::sqlite3_errcode(db) == rc {
            rusqlite::ffi::sqlite3_errmsg(db)
        } else {
            rusqlite::ffi::sqlite3_errstr(rc)
        };
        (!m.is_null()).then(|| std::ffi::CStr::from_ptr(m).to_string_lossy().into_owned())
    };
    rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rc), message)
}

/// The current row of a [`RawQuery`]; its texts are valid until the next
/// step, which the borrow forbids while the row lives.
pub(crate) struct RawRow<'q> {
    stmt: std::ptr::NonNull<rusqlite::ffi::sqlite3_stmt>,
    cols: usize,
    _query: std::marker::PhantomData<&'q mut ()>,
}

impl<'q> RawRow<'q> {
    /// Column `i` of the current row and its storage class; `None` past
    /// the last column.
    ///
    /// One call into SQLite for the value, where `sqlite3_column_type`
    /// and then `sqlite3_column_int64` each find the column (and take the
    /// connection's mutex, when it has one) again. SQLite calls the
    /// value this returns "unprotected": the `sqlite3_value_*` functions
    /// that read it take no mutex, which matters only when another
    /// thread uses the connection meanwhile. None does: a connection is
    /// opened by the thread that reads it, and a query cannot leave its
    /// thread (it holds raw pointers, so it is neither `Send` nor `Sync`).
    #[inline]
    fn value(&self, i: usize) -> Option<(*mut rusqlite::ffi::sqlite3_value, std::ffi::c_int)> {
        if i >= self.cols {
            return None;
        }
        // SAFETY: a statement on a row (the borrow of the query), `i` one
        // of its result columns; the value lives until the next step.
        unsafe {
            let v = rusqlite::ffi::sqlite3_column_value(self.stmt.as_ptr(), i as std::ffi::c_int);
            (!v.is_null()).then(|| (v, rusqlite::ffi::sqlite3_value_type(v)))
        }
    }

    /// The bytes of a text (or blob) value of the current row.
    #[inline]
    fn bytes(v: *mut rusqlite::ffi::sqlite3_value, text: bool) -> &'q [u8] {
        use rusqlite::ffi;
        // SAFETY: a value of the current row (see `value`): SQLite returns
        // its bytes (as UTF-8 for a text) and then their number, as its
        // documentation asks, valid until the next step; a null pointer
        // (out of memory, or an empty blob) reads as empty.
        unsafe {
            let p: *const u8 = if text {
                ffi::sqlite3_value_text(v)
            } else {
                ffi::sqlite3_value_blob(v).cast()
            };
            let n = ffi::sqlite3_value_bytes(v).max(0) as usize;
            if p.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(p, n)
            }
        }
    }

    /// An integer column, whatever its storage class, as
    /// [`crate::read::cupti::int_at`] reads it (NULL or a blob → `None`).
    #[inline]
    pub(crate) fn int(&self, i: usize) -> Option<i64> {
        use rusqlite::ffi;
        let (v, kind) = self.value(i)?;
        match kind {
            // SAFETY: an integer or float value of the current row
            ffi::SQLITE_INTEGER => Some(unsafe { ffi::sqlite3_value_int64(v) }),
            ffi::SQLITE_FLOAT => Some(unsafe { ffi::sqlite3_value_double(v) } as i64),
            ffi::SQLITE_TEXT => std::str::from_utf8(Self::bytes(v, true))
                .ok()
                .and_then(|t| t.trim().parse().ok()),
            _ => None,
        }
    }

    /// A text column without an intermediate `String` (invalid UTF-8 is
    /// replaced); `None` unless the value is text.
    #[inline]
    pub(crate) fn text(&self, i: usize) -> Option<std::borrow::Cow<'q, str>> {
        let (v, kind) = self.value(i)?;
        (kind == rusqlite::ffi::SQLITE_TEXT).then(|| {
            let t = Self::bytes(v, true);
            match std::str::from_utf8(t) {
                Ok(s) => std::borrow::Cow::Borrowed(s),
                Err(_) => String::from_utf8_lossy(t),
            }
        })
    }

    /// Whether column `i` holds text.
    #[inline]
    pub(crate) fn is_text(&self, i: usize) -> bool {
        self.value(i)
            .is_some_and(|(_, kind)| kind == rusqlite::ffi::SQLITE_TEXT)
    }

    /// Column `i` as rusqlite's `Row::get_ref` gives it (an index past
    /// the last column is its error too).
    #[inline]
    pub(crate) fn get_ref(&self, i: usize) -> rusqlite::Result<rusqlite::types::ValueRef<'q>> {
        use rusqlite::{ffi, types::ValueRef};
        let Some((v, kind)) = self.value(i) else {
            return Err(rusqlite::Error::InvalidColumnIndex(i));
        };
        // SAFETY: values of the current row, read as their storage class
        // says
        Ok(match kind {
            ffi::SQLITE_INTEGER => ValueRef::Integer(unsafe { ffi::sqlite3_value_int64(v) }),
            ffi::SQLITE_FLOAT => ValueRef::Real(unsafe { ffi::sqlite3_value_double(v) }),
            ffi::SQLITE_TEXT => ValueRef::Text(Self::bytes(v, true)),
            ffi::SQLITE_BLOB => ValueRef::Blob(Self::bytes(v, false)),
            _ => ValueRef::Null,
        })
    }
}

/// A row's cells, whichever way the row was read (rusqlite's rows and
/// [`RawRow`]s), for the lenient column readers both use.
pub(crate) trait Cells {
    /// Column `i`, as `Row::get_ref`.
    fn cell(&self, i: usize) -> rusqlite::Result<rusqlite::types::ValueRef<'_>>;
}

impl Cells for rusqlite::Row<'_> {
    #[inline]
    fn cell(&self, i: usize) -> rusqlite::Result<rusqlite::types::ValueRef<'_>> {
        self.get_ref(i)
    }
}

impl Cells for RawRow<'_> {
    #[inline]
    fn cell(&self, i: usize) -> rusqlite::Result<rusqlite::types::ValueRef<'_>> {
        self.get_ref(i)
    }
}

/// SQLite's own words for "this is not a database".
pub fn is_not_a_database(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::NotADatabase
    )
}

/// SQLite refused to roll back a hot journal on a read-only connection.
fn is_readonly_rollback(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK
    )
}

/// A `file:` URI for `path`, from its bytes (a file name need not be
/// UTF-8): bytes other than ASCII letters, digits and `/-._~` are
/// %-escaped. An absolute path gets an empty authority (`file:///…`), so
/// that a path starting with `//` is not read as a host name.
fn uri_escape(path: &Path) -> String {
    #[cfg(unix)]
    let bytes: Vec<u8> = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes: Vec<u8> = path.to_string_lossy().as_bytes().to_vec();
    let mut out = String::from(if bytes.first() == Some(&b'/') {
        "file://"
    } else {
        "file:"
    });
    for &b in &bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table with a value of every storage class (and texts that are
    /// and are not numbers, and invalid UTF-8), in memory.
    fn every_kind() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t(a, b);
             INSERT INTO t VALUES (1, 'one'), (2.75, NULL), ('12', X'00ff'), (' 7 ', 3),
               ('x', -0.5), (X'0102', ''), (NULL, 'é'), (CAST(X'ff41' AS TEXT), 9),
               (-9223372036854775808, 9223372036854775807);",
        )
        .unwrap();
        conn
    }

    /// Each row's cells through `cell`, and `int_at` of each.
    type Cells2 = Vec<(Vec<String>, Vec<Option<i64>>)>;

    #[test]
    fn raw_rows_read_what_rusqlite_rows_read() {
        let conn = every_kind();
        let sql = "SELECT a, b FROM t ORDER BY rowid";
        // (rusqlite's own reading: the values compared by their Debug
        // form, which names the storage class and holds the bytes)
        let mut want: Cells2 = Vec::new();
        let mut st = conn.prepare(sql).unwrap();
        let mut rows = st.query([]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            want.push((
                (0..3).map(|i| format!("{:?}", r.get_ref(i))).collect(),
                (0..2)
                    .map(|i| crate::read::cupti::int_at(r, i).unwrap())
                    .collect(),
            ));
        }
        drop(rows);
        let mut got: Cells2 = Vec::new();
        let mut q = RawQuery::new(&conn, sql).unwrap();
        while let Some(r) = q.next().unwrap() {
            got.push((
                (0..3).map(|i| format!("{:?}", r.get_ref(i))).collect(),
                (0..2).map(|i| r.int(i)).collect(),
            ));
            // the shortcuts agree with the full reading
            for i in 0..3 {
                let v = r.get_ref(i);
                let text = matches!(v, Ok(rusqlite::types::ValueRef::Text(_)));
                assert_eq!(r.is_text(i), text);
                assert_eq!(r.text(i).is_some(), text);
                assert_eq!(r.int(i), crate::read::cupti::int_at(&r, i).unwrap_or(None));
            }
        }
        assert_eq!(got.len(), 9);
        assert_eq!(got, want);
        // and the texts, invalid UTF-8 replaced as rusqlite's callers did
        let mut q = RawQuery::new(&conn, "SELECT a FROM t WHERE rowid = 8").unwrap();
        let r = q.next().unwrap().unwrap();
        assert_eq!(r.text(0).as_deref(), Some("\u{fffd}A"));
    }

    #[test]
    fn raw_query_restarts_with_parameters_and_reports_errors_as_rusqlite() {
        let conn = every_kind();
        let mut q = RawQuery::new(
            &conn,
            "SELECT rowid FROM t WHERE rowid > ?1 AND rowid <= ?2",
        )
        .unwrap();
        for (lo, hi) in [(0, 2), (5, 9), (3, 3), (1, 4)] {
            q.restart(&[lo, hi]).unwrap();
            let mut ids = Vec::new();
            while let Some(r) = q.next().unwrap() {
                ids.push(r.int(0).unwrap());
            }
            assert_eq!(ids, ((lo + 1)..=hi).collect::<Vec<_>>());
        }
        assert!(matches!(
            q.restart(&[1]),
            Err(rusqlite::Error::InvalidParameterCount(1, 2))
        ));
        // an error while stepping (integer overflow) and one preparing
        let overflow = "SELECT abs(a) FROM t WHERE rowid = 9";
        let want = conn
            .prepare(overflow)
            .unwrap()
            .query([])
            .unwrap()
            .next()
            .map(|_| ())
            .unwrap_err();
        let got = RawQuery::new(&conn, overflow)
            .unwrap()
            .next()
            .map(|_| ())
            .unwrap_err();
        assert_eq!(got.to_string(), want.to_string());
        assert_eq!(got.sqlite_error_code(), want.sqlite_error_code());
        let bad = "SELECT nope FROM t";
        let want = conn.prepare(bad).map(|_| ()).unwrap_err();
        let got = RawQuery::new(&conn, bad).map(|_| ()).unwrap_err();
        assert_eq!(got.to_string(), want.to_string());
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
    }

    #[test]
    fn uri_escapes_specials() {
        assert_eq!(
            uri_escape(Path::new("/a/b?c#d%e")),
            "file:///a/b%3Fc%23d%25e"
        );
        assert_eq!(uri_escape(Path::new("/é")), "file:///%C3%A9");
        assert_eq!(uri_escape(Path::new("//srv/x")), "file:////srv/x");
        assert_eq!(uri_escape(Path::new("rel/a b")), "file:rel/a%20b");
    }
}
