//! Read-only SQLite access with table/column discovery.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

/// An open, read-only profile database and what tables it has.
pub struct Db {
    /// The connection (read-only, immutable: SQLite writes nothing, not even
    /// a journal or a lock file).
    pub conn: Connection,
    /// The input path, for messages.
    pub path: PathBuf,
    tables: Vec<String>,
}

impl Db {
    /// Open `path` read-only.
    pub fn open(path: &Path) -> Result<Db> {
        let uri = format!("file:{}?mode=ro&immutable=1", uri_escape(path));
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags).map_err(|e| Error::Sqlite {
            path: path.to_owned(),
            what: "cannot open".into(),
            source: e,
        })?;
        let mut db = Db {
            conn,
            path: path.to_owned(),
            tables: Vec::new(),
        };
        db.tables = db
            .strings("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
            .map_err(|e| match e {
                Error::Sqlite { source, .. } if is_not_a_database(&source) => Error::NotADatabase {
                    path: path.to_owned(),
                },
                Error::Sqlite { source, .. } => Error::Sqlite {
                    path: path.to_owned(),
                    what: "reading the list of tables".into(),
                    source,
                },
                other => other,
            })?;
        Ok(db)
    }

    /// Wrap a SQLite error with the file and the step.
    pub fn err(&self, what: impl Into<String>, source: rusqlite::Error) -> Error {
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

    /// True if a table (or view) of exactly this name exists.
    pub fn has_table(&self, name: &str) -> bool {
        self.tables.iter().any(|t| t == name)
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

fn uri_escape(path: &Path) -> String {
    let s = path.to_string_lossy();
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'?' | b'#' | b'%' => out.push_str(&format!("%{b:02X}")),
            _ => out.push(b as char),
        }
    }
    // non-ASCII bytes were pushed as Latin-1 chars above; redo them as escapes
    if s.is_ascii() {
        out
    } else {
        s.bytes()
            .map(|b| {
                if b.is_ascii() && !matches!(b, b'?' | b'#' | b'%') {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_escapes_specials() {
        assert_eq!(uri_escape(Path::new("/a/b?c#d%e")), "/a/b%3Fc%23d%25e");
        assert_eq!(uri_escape(Path::new("/é")), "/%C3%A9");
    }
}
