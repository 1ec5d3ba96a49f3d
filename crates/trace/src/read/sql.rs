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
