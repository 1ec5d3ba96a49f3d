//! Errors of the trace crate.

use std::path::PathBuf;

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong while reading a profile or a record file.
///
/// Messages are one line, lowercase, and name the file when there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path does not exist.
    #[error("{}: no such file", path.display())]
    NotFound {
        /// The input path.
        path: PathBuf,
    },
    /// The path is a directory.
    #[error("{}: is a directory, not a profile", path.display())]
    IsDirectory {
        /// The input path.
        path: PathBuf,
    },
    /// The file could not be read at all.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The input path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Not a SQLite database nor a Kineto trace.
    #[error("{}: not a SQLite database (nor a Kineto JSON trace)", path.display())]
    NotADatabase {
        /// The input path.
        path: PathBuf,
    },
    /// SQLite refused the file (not a database, truncated, corrupt).
    #[error("{}: {what}: {source}", path.display())]
    Sqlite {
        /// The input path.
        path: PathBuf,
        /// What rprof was doing.
        what: String,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// A SQLite file whose tables are neither an nsys nor an nvprof export.
    #[error(
        "{}: not an Nsight Systems or nvprof profile (no StringIds or StringTable table with CUDA or NVTX tables)",
        path.display()
    )]
    UnknownFormat {
        /// The input path.
        path: PathBuf,
    },
    /// The file is a profile but holds nothing rprof can use.
    #[error("{}: empty profile: {detail}", path.display())]
    Empty {
        /// The input path.
        path: PathBuf,
        /// What is missing.
        detail: String,
    },
    /// A table lacks a column rprof cannot do without.
    #[error("{}: table {table} has no column {column}", path.display())]
    MissingColumn {
        /// The input path.
        path: PathBuf,
        /// Table name.
        table: String,
        /// Column name.
        column: String,
    },
    /// Input that `--compat` refuses because apex.pyprof aborts on it.
    #[error("{}: {detail} (apex.pyprof aborts here; run without --compat to keep going)", path.display())]
    CompatAbort {
        /// The input path.
        path: PathBuf,
        /// What apex.pyprof would have tripped over.
        detail: String,
    },
    /// A Kineto trace that cannot be read.
    #[error("{}: {detail}", path.display())]
    Kineto {
        /// The input path.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A profile rprof refuses to read as it is (a view where a table
    /// should be, a hot journal, a value over a limit).
    #[error("{}: {detail}", path.display())]
    Refused {
        /// The input path.
        path: PathBuf,
        /// Why, and what to do.
        detail: String,
    },
    /// A line of a record file could not be read.
    #[error("{source_name}: line {line}: {detail}")]
    Record {
        /// File name or `<stdin>`.
        source_name: String,
        /// 1-based line number.
        line: u64,
        /// What is wrong with it.
        detail: String,
    },
}
