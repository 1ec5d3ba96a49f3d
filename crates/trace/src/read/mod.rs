//! Readers: open a profile read-only, detect its format from what is in it,
//! and load it into a [`Trace`] with a few bulk queries.
//!
//! Detection never looks at file names or version strings (trace-formats.md
//! §9): SQLite files are told apart by their tables, and columns are read by
//! name, so columns added or moved by newer exporters are harmless.

mod cupti;
mod join;
pub mod kineto;
mod kineto_args;
mod kineto_split;
pub mod limits;
pub(crate) mod nsys;
mod nvprof;
pub(crate) mod sql;
pub mod stats_sql;

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};
use crate::model::{Source, Trace};

/// How to read.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions {
    /// Reproduce apex.pyprof's reading rules (nvprof: CONCURRENT_KERNEL
    /// only, abort where apex aborts).
    pub compat: bool,
    /// Also read memory copies and sets (for timelines and GPU views).
    pub memops: bool,
    /// With [`ReadOptions::memops`], leave the copies and sets without
    /// their launch calls (nsys): for a caller that only sums them. Their
    /// calls are then not held (a quarter of the calls of the 3 M-kernel
    /// benchmark), and every launch call is a kernel's.
    pub memops_unlaunched: bool,
    /// Also read every CUDA API call into [`Trace::api_calls`].
    pub api_calls: bool,
    /// Keep NVTX ranges (and profiler operators) on every thread, not only
    /// on threads that launched kernels.
    pub all_ranges: bool,
    /// Also read memory (allocation) events.
    pub mem_events: bool,
    /// Also read CUPTI synchronisation records.
    pub syncs: bool,
    /// Do not read NVTX ranges or profiler operators at all: for questions
    /// that need no attribution (kernel, copy and API sums, utilization),
    /// which then skip the largest table of most exports.
    pub no_ranges: bool,
    /// Do not join kernels to their launch calls (nsys exports: the CUDA
    /// API table is not read, so [`Trace::launches`] is empty, every
    /// kernel's `launch` is `None` and `stats.without_launch` is not
    /// counted (0)): for questions about the kernels alone (kernel sums by
    /// name, stream or device) whose caller prints no launch counts. Other
    /// formats read their launches as usual. Implies nothing about
    /// `no_ranges`, but ranges without launches enclose no kernel.
    pub no_launches: bool,
    /// Keep no kernels (nsys exports): the kernel table is scanned only to
    /// count its rows and to join each kernel to its launch call, so
    /// [`Trace::stats`], [`Trace::launches`] and the end of capture are as
    /// with the kernels, but [`Trace::kernels`] is empty and
    /// `stats.kernels_unread` counts them ([`Trace::kernel_count`]): for
    /// views that never look at a kernel (`mem`). At 3 M kernels the
    /// kernels were 0.5 GB. Other formats read their kernels as usual.
    pub no_kernels: bool,
    /// Keep of each inline NVTX text only the operator name the host views
    /// show ([`rprof_model::stock::parse_head`]'s name: the text without
    /// the fields PyTorch appends), stored once per distinct name (nsys
    /// exports): for views that name a range by that alone (`launch`,
    /// `steps`). A text whose name would read differently a second time
    /// is kept whole, so the name read from what is kept is always the
    /// text's. Each range keeps its own handle, numbered as without this,
    /// so ranges sort as they would. At 3 M kernels PyTorch's numbered
    /// texts were 0.6 GB, nearly all distinct.
    pub range_heads: bool,
    /// With `api_calls`, keep only the calls that block the host
    /// ([`rprof_model::ApiKind::blocks_host`]; the others are counted in
    /// `stats.api_calls_dropped`): for `idle`, which looks at no other
    /// call. At 3 M kernels the others were 0.2 GB.
    pub blocking_calls_only: bool,
    /// Keep only the ranges that may enclose a kernel's launch call (nsys
    /// exports: those that enclose none by [`crate::attribute`]'s rule are
    /// dropped as read, and their texts never stored; they are counted in
    /// [`rprof_model::ReadStats`] as if kept): for callers that build
    /// records of kernels alone and use the ranges only through
    /// [`crate::attribute::attribute_used_of`] with
    /// [`crate::attribute::kernel_launches`], which drops the same ranges
    /// (without [`ReadOptions::memops`] every launch call is a kernel's).
    /// The NVTX table is then read after the launches, not beside them. At
    /// 3 M kernels the ranges enclosing no launch and their texts were
    /// 0.5 GB at the read's peak; those enclosing only the calls that
    /// launched copies and sets, 0.1 GB at the peak of `summary`. Other
    /// formats keep every range.
    pub enclosing_ranges_only: bool,
}

impl ReadOptions {
    /// Everything the readers can see: for the timeline views.
    pub fn everything() -> ReadOptions {
        ReadOptions {
            compat: false,
            memops: true,
            memops_unlaunched: false,
            api_calls: true,
            all_ranges: true,
            mem_events: true,
            syncs: true,
            no_ranges: false,
            no_launches: false,
            no_kernels: false,
            range_heads: false,
            blocking_calls_only: false,
            enclosing_ranges_only: false,
        }
    }
}

/// What kind of file `path` is, judged from its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A SQLite database (nsys or nvprof; see [`Source`]).
    Sqlite,
    /// gzip-compressed data (a Kineto trace).
    Gzip,
    /// JSON text.
    Json,
    /// Anything else.
    Unknown,
}

/// Check that `path` is a readable regular file and sniff its first bytes.
pub fn sniff(path: &Path) -> Result<FileKind> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound {
            path: path.to_owned(),
        },
        _ => Error::Io {
            path: path.to_owned(),
            source: e,
        },
    })?;
    if meta.is_dir() {
        return Err(Error::IsDirectory {
            path: path.to_owned(),
        });
    }
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(path).map_err(|e| Error::Io {
        path: path.to_owned(),
        source: e,
    })?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(Error::Io {
                    path: path.to_owned(),
                    source: e,
                });
            }
        }
    }
    let head = &head[..n];
    Ok(if head.starts_with(b"SQLite format 3\0") {
        FileKind::Sqlite
    } else if head.starts_with(&[0x1f, 0x8b]) {
        FileKind::Gzip
    } else if head
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{' || *b == b'[')
    {
        FileKind::Json
    } else {
        FileKind::Unknown
    })
}

/// Open `path` and read the whole profile.
pub fn read(path: &Path, opts: ReadOptions) -> Result<Trace> {
    let mut trace = read_format(path, opts)?;
    if opts.blocking_calls_only {
        // (the nsys reader drops them as it reads, at its peak)
        trace.keep_blocking_calls();
    } else if opts.api_calls {
        // each launch call once, in `launches` (4 M calls of 40 bytes at
        // 3 M kernels)
        trace.fold_launch_calls();
    }
    Ok(trace)
}

/// [`read`] by the file's format.
fn read_format(path: &Path, opts: ReadOptions) -> Result<Trace> {
    match sniff(path)? {
        FileKind::Sqlite => {}
        FileKind::Gzip => return kineto::read_with(path, true, opts),
        FileKind::Json => return kineto::read_with(path, false, opts),
        FileKind::Unknown => {
            let empty = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) == 0;
            return Err(if empty {
                Error::Empty {
                    path: path.to_owned(),
                    detail: "the file is 0 bytes long".into(),
                }
            } else {
                Error::NotADatabase {
                    path: path.to_owned(),
                }
            });
        }
    }
    let db = sql::Db::open(path)?;
    if let Some(v) = db.view_named(&READ_TABLES) {
        return Err(Error::Refused {
            path: path.to_owned(),
            detail: format!(
                "{v} is a view, not a table; rprof reads tables only (a view's query can run without end)"
            ),
        });
    }
    match detect(&db)? {
        Source::Nvprof => nvprof::read(&db, opts),
        Source::Nsys => nsys::read(&db, opts),
        Source::Kineto => Err(Error::UnknownFormat {
            path: path.to_owned(),
        }),
    }
}

/// Names (and `_V<n>` families) of the tables the readers query: none of
/// them may be a view.
const READ_TABLES: [&str; 22] = [
    "StringIds",
    "StringTable",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_DRIVER",
    "CUPTI_ACTIVITY_KIND_MARKER",
    "CUPTI_ACTIVITY_KIND_MARKER_DATA",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_DEVICE",
    "CUPTI_ACTIVITY_KIND_NAME",
    "CUPTI_ACTIVITY_KIND_CONTEXT",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    "NVTX_EVENTS",
    "TARGET_INFO_GPU",
    "TARGET_INFO_CUDA_DEVICE",
    "TARGET_INFO_SESSION_START_TIME",
    "ThreadNames",
    "META_DATA_EXPORT",
    "ENUM_NSYS_EVENT_TYPE",
];

/// Tell nsys from nvprof by their tables.
pub fn detect(db: &sql::Db) -> Result<Source> {
    if db.has_table("StringTable")
        && (db.has_table("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL")
            || db.has_table("CUPTI_ACTIVITY_KIND_KERNEL")
            || db.has_table("CUPTI_ACTIVITY_KIND_MARKER")
            || db.has_table("CUPTI_ACTIVITY_KIND_RUNTIME"))
    {
        return Ok(Source::Nvprof);
    }
    if db.has_table("StringIds")
        && (db.resolve("CUPTI_ACTIVITY_KIND_KERNEL").is_some()
            || db.resolve("CUPTI_ACTIVITY_KIND_RUNTIME").is_some()
            || db.resolve("NVTX_EVENTS").is_some())
    {
        return Ok(Source::Nsys);
    }
    Err(Error::UnknownFormat {
        path: db.path.clone(),
    })
}
