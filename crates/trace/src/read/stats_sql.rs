//! The rows of `rprof stats`, read straight from an export.
//!
//! Why a reader of its own rather than the trace model: nsys's stats reports
//! group and label by columns the model does not keep (NVTX `eventType`,
//! i.e. push/pop vs start/end, and `endGlobalTid`; kernel `shortName`; the
//! export's own `ENUM_CUDA_MEMCPY_OPER` / `ENUM_CUDA_MEM_KIND` labels; API
//! `returnValue`; `ThreadNames`; `TARGET_INFO_GPU`; `OSRT_API`; unified-memory
//! page faults). Adding them to the model would grow every reader and every
//! view for one command, so nsys exports are read here with a handful of
//! plain queries, each column by name (absent columns read as NULL).
//! nvprof databases and Kineto traces go through the model's readers and are
//! converted ([`from_trace`]).

use std::path::Path;

use rprof_model::{
    ApiRow, GpuKernel, GpuMemOp, KernelLaunch, NvtxRow, OsrtRow, RangeStyle, StatsData, Tables,
    ThreadIndex, UmFault, strip_api_version,
};

use crate::error::Result;
use crate::model::{MemKind, MemoryKind, RangeKind, Source, Trace};
use crate::read::sql::{Db, RawQuery, RawRow};
use crate::read::{FileKind, ReadOptions, sniff};
use crate::{FastMap, FastSet};

/// nsys `eventType` values of NVTX ranges and domain creation.
const NVTX_PUSHPOP: i64 = 59;
const NVTX_STARTEND: i64 = 60;
const NVTXT_PUSHPOP: i64 = 70;
const NVTXT_STARTEND: i64 = 71;
const NVTX_DOMAIN_CREATE: i64 = 75;
/// `ENUM_NSYS_EVENT_CLASS`: CUDA backtrace rows duplicate an API call.
const EVENT_CLASS_CUDA_BACKTRACE: i64 = 67;
/// `ENUM_NSYS_EVENT_CLASS`: OS runtime calls.
const EVENT_CLASS_OSRT: i64 = 27;

/// Read the `want`ed tables of any supported profile (nvprof and Kineto
/// input: all of them, through the model's readers). The names come back
/// sealed ([`Names::seal`](rprof_model::Names::seal)): the reports look
/// names up and intern none.
pub fn load(path: &Path, want: Tables) -> Result<StatsData> {
    let mut data = read_any(path, want)?;
    data.names.seal();
    Ok(data)
}

/// True when `path` is an nsys export, whose tables are read one by one:
/// reading some of them and then the others costs what reading them all
/// together does, so `stats` can hold fewer at once. Other inputs are read
/// whole whatever is asked for.
pub fn reads_tables_apart(path: &Path) -> Result<bool> {
    if sniff(path)? != FileKind::Sqlite {
        return Ok(false);
    }
    let db = Db::open(path)?;
    Ok(crate::read::detect(&db)? == Source::Nsys)
}

fn read_any(path: &Path, want: Tables) -> Result<StatsData> {
    if sniff(path)? == FileKind::Sqlite {
        let db = Db::open(path)?;
        if crate::read::detect(&db)? == Source::Nsys {
            return read_nsys(&db, want);
        }
    }
    let opts = ReadOptions {
        memops: true,
        api_calls: true,
        all_ranges: true,
        ..ReadOptions::default()
    };
    let trace = crate::read::read(path, opts)?;
    Ok(from_trace(&trace))
}

fn int_at(r: &RawRow<'_>, i: usize) -> rusqlite::Result<Option<i64>> {
    crate::read::cupti::int_at(r, i)
}

fn text_at(r: &RawRow<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(x) => Some(x.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Null | ValueRef::Blob(_) => None,
    })
}

/// Run `sql` and hand each row to `f`.
fn each_row(
    db: &Db,
    what: &str,
    sql: &str,
    mut f: impl FnMut(&RawRow<'_>) -> rusqlite::Result<()>,
) -> Result<()> {
    let mut run = || -> rusqlite::Result<()> {
        let mut rows = RawQuery::new(&db.conn, sql)?;
        while let Some(r) = rows.next()? {
            f(&r)?;
        }
        Ok(())
    };
    run().map_err(|e| db.err(format!("reading {what}"), e))
}

/// `StringIds` mapped into the data's own interner, by file id.
struct FileStrings {
    dense: Vec<u32>,
    sparse: FastMap<i64, u32>,
}

impl FileStrings {
    fn load(db: &Db, data: &mut StatsData) -> Result<FileStrings> {
        let mut fs = FileStrings {
            dense: Vec::new(),
            sparse: FastMap::default(),
        };
        if !db.has_table("StringIds") {
            return Ok(fs);
        }
        each_row(
            db,
            "table StringIds",
            "SELECT id, value FROM StringIds",
            |r| {
                if let (Some(id), Some(v)) = (int_at(r, 0)?, text_at(r, 1)?) {
                    let n = data.names.intern(&v);
                    if (0..50_000_000).contains(&id) {
                        let i = id as usize;
                        if fs.dense.len() <= i {
                            fs.dense.resize(i + 1, u32::MAX);
                        }
                        fs.dense[i] = n;
                    } else {
                        fs.sparse.insert(id, n);
                    }
                }
                Ok(())
            },
        )?;
        Ok(fs)
    }

    fn get(&self, id: Option<i64>) -> Option<u32> {
        let id = id?;
        if id >= 0
            && let Some(&n) = self.dense.get(id as usize)
        {
            return (n != u32::MAX).then_some(n);
        }
        self.sparse.get(&id).copied()
    }
}

fn pid_of(global: i64) -> u64 {
    crate::model::nsys_pid(global as u64)
}

fn tid_of(global: i64) -> u64 {
    (global as u64) & 0xFF_FFFF
}

/// Labels of an `ENUM_*` table by id, when the export has it.
fn enum_labels(db: &Db, table: &str) -> Result<Option<FastMap<i64, String>>> {
    if !db.has_table(table) {
        return Ok(None);
    }
    let mut out = FastMap::default();
    each_row(
        db,
        &format!("table {table}"),
        &format!("SELECT id, label FROM \"{table}\""),
        |r| {
            if let (Some(id), Some(l)) = (int_at(r, 0)?, text_at(r, 1)?) {
                out.insert(id, l);
            }
            Ok(())
        },
    )?;
    Ok(Some(out))
}

/// nsys's labels when the export has no `ENUM_CUDA_MEMCPY_OPER` (before
/// 2022.4): the short names older nsys versions printed.
fn fallback_copy_label(kind: i64) -> &'static str {
    match kind {
        1 => "HtoD",
        2 => "DtoH",
        3 => "HtoA",
        4 => "AtoH",
        5 => "AtoA",
        6 => "AtoD",
        7 => "DtoA",
        8 => "DtoD",
        9 => "HtoH",
        10 => "PtoP",
        11 => "Unified HtoD",
        12 => "Unified DtoH",
        13 => "Unified DtoD",
        _ => "Unknown",
    }
}

/// nsys's `ENUM_CUDA_MEM_KIND` labels, for exports without the table.
fn fallback_mem_kind(kind: i64) -> &'static str {
    match kind {
        0 => "Pageable",
        1 => "Pinned",
        2 => "Device",
        3 => "Array",
        4 => "Managed",
        5 => "Device Static",
        6 => "Managed Static",
        _ => "Unknown",
    }
}

/// Read the `want`ed tables of an nsys export.
pub fn read_nsys(db: &Db, want: Tables) -> Result<StatsData> {
    let mut data = StatsData::new(Source::Nsys);
    let strings = FileStrings::load(db, &mut data)?;
    if want.nvtx
        && want.launching_only
        && want.kernels
        && want.api
        && db.resolve("NVTX_EVENTS").is_some()
    {
        read_launching_nvtx(db, &strings, want, &mut data)?;
    } else if want.nvtx
        && (want.kernels || want.memops || want.api)
        && db.resolve("NVTX_EVENTS").is_some()
    {
        read_beside_nvtx(db, &strings, want, &mut data)?;
    } else if want.kernels && want.api && !want.nvtx {
        read_api_beside(db, &strings, want, &mut data)?;
    } else {
        if want.kernels {
            read_kernels(db, &strings, want.kernel_launch, &mut data)?;
        }
        if want.memops {
            read_memops(db, &mut data)?;
        }
        if want.api {
            read_api(db, &strings, &mut data)?;
        }
        if want.nvtx {
            read_nvtx(
                db,
                &strings,
                &mut data,
                Helper::Now(NVTX_SPLIT_ROWS),
                NVTX_CHUNK_ROWIDS,
                None,
            )?;
        }
    }
    if want.osrt {
        read_osrt(db, &strings, &mut data)?;
    }
    if want.um {
        read_um(db, &mut data)?;
    }
    if want.gpus && db.has_table("TARGET_INFO_GPU") {
        let (list, _) = db.select_list("TARGET_INFO_GPU", &["id", "name"], &[])?;
        let mut gpus = Vec::new();
        each_row(
            db,
            "table TARGET_INFO_GPU",
            &format!("SELECT {list} FROM TARGET_INFO_GPU"),
            |r| {
                if let (Some(id), Some(name)) = (int_at(r, 0)?, text_at(r, 1)?) {
                    gpus.push((id, name));
                }
                Ok(())
            },
        )?;
        for (id, name) in gpus {
            if !data.gpu_names.iter().any(|(d, _)| *d == id) {
                let n = data.names.intern(&name);
                data.gpu_names.push((id, n));
            }
        }
    }
    if want.thread_names && db.has_table("ThreadNames") {
        let (list, _) = db.select_list("ThreadNames", &["globalTid", "priority", "nameId"], &[])?;
        let mut rows = Vec::new();
        each_row(
            db,
            "table ThreadNames",
            &format!("SELECT {list} FROM ThreadNames"),
            |r| {
                if let Some(g) = int_at(r, 0)? {
                    rows.push((g, int_at(r, 1)?, strings.get(int_at(r, 2)?)));
                }
                Ok(())
            },
        )?;
        for (g, prio, name) in rows {
            data.thread_names
                .entry((pid_of(g), tid_of(g)))
                .or_insert((prio, name));
        }
    }
    Ok(data)
}

/// The kernel, copy and API tables read on this connection while the NVTX
/// table is read on a second one (the reports that need both spent their
/// reading time on one table after the other). The NVTX read interns its
/// texts meanwhile; the other tables' own names (`<unknown kernel>` aside)
/// are interned after it, and the notes keep the order of one thread's
/// read: the same data and the same messages.
fn read_beside_nvtx(
    db: &Db,
    strings: &FileStrings,
    want: Tables,
    data: &mut StatsData,
) -> Result<()> {
    let unknown = (want.kernels && db.resolve("CUPTI_ACTIVITY_KIND_KERNEL").is_some())
        .then(|| data.names.intern("<unknown kernel>"));
    let (notes, dropped) = (data.notes.len(), data.dropped.len());
    let nvtx_db = Db::open(&db.path)?;
    let reborrowed = &mut *data;
    let (side, nvtx) = std::thread::scope(|sc| {
        // (a second NVTX reader helps once this thread's reads are done:
        // until then they keep the other core busy)
        let (go, helper) = std::sync::mpsc::channel();
        let nvtx = sc.spawn(move || {
            read_nvtx(
                &nvtx_db,
                strings,
                reborrowed,
                Helper::After(helper),
                NVTX_CHUNK_ROWIDS,
                None,
            )
        });
        let side = (|| -> Result<_> {
            let k = match unknown {
                Some(u) => scan_kernels(db, strings, u, want.kernel_launch)?,
                None => None,
            };
            let m = if want.memops { scan_memops(db)? } else { None };
            let a = if want.api {
                scan_api(db, strings)?
            } else {
                None
            };
            Ok((k, m, a))
        })();
        // (on an error too: the sooner the NVTX read ends)
        let _ = go.send(());
        (side, nvtx.join())
    });
    // errors in the order one thread met them
    let (k, m, a) = side?;
    nvtx.map_err(|_| {
        db.err(
            "reading table NVTX_EVENTS".to_owned(),
            rusqlite::Error::InvalidQuery,
        )
    })??;
    let nvtx_notes = data.notes.split_off(notes);
    let nvtx_dropped = data.dropped.split_off(dropped);
    finish_kernels(data, k);
    finish_memops(data, m);
    finish_api(data, a);
    data.notes.extend(nvtx_notes);
    data.dropped.extend(nvtx_dropped);
    Ok(())
}

/// The kernel, copy and API tables (on two connections, as
/// [`read_api_beside`]), then only the calls and ranges
/// [`Tables::launching_only`] keeps: the calls that launched a kernel, copy
/// or set, and the NVTX ranges that enclose one of them (the table read on
/// two connections too). Read beside the other tables, every range and its
/// text were held at once: 14.3 M ranges and 13.9 M distinct texts on the
/// 3 M-kernel export, of which half enclose no launch. The notes come in
/// the order of [`read_beside_nvtx`]'s, the rows left out after the table's
/// own.
fn read_launching_nvtx(
    db: &Db,
    strings: &FileStrings,
    want: Tables,
    data: &mut StatsData,
) -> Result<()> {
    read_api_beside(db, strings, want, data)?;
    let launches = Launches::keep(data);
    read_nvtx(
        db,
        strings,
        data,
        Helper::Now(NVTX_SPLIT_ROWS),
        NVTX_CHUNK_ROWIDS,
        launches.as_ref(),
    )
}

/// The CUDA calls that launched a kernel, copy or set (those whose process
/// and correlation id one of them carries), by thread: what an NVTX range
/// must enclose to count in `nvtx_kern_sum` or the GPU projection, whose
/// searches look for the ranges of a call's thread with `start <= call
/// start` and `end >= call end` (and, the sweep's own test, `end >= call
/// start`: so a range this keeps may still enclose nothing, never the
/// reverse).
struct Launches {
    /// (pid, tid) → its calls in `starts` and `min_end`
    threads: FastMap<(u64, u64), (usize, usize)>,
    /// each thread's calls' starts, sorted, the threads one after the other
    starts: Vec<i64>,
    /// the least end of the thread's calls from this one on (in start
    /// order): a range encloses a call iff the first call starting at or
    /// after the range's start has a `min_end` at or before its end
    min_end: Vec<i64>,
}

impl Launches {
    /// Leave out of `data`'s API calls those that launched nothing
    /// (counted), and index the others. `None` without an API table.
    fn keep(data: &mut StatsData) -> Option<Launches> {
        use rayon::slice::ParallelSliceMut;
        let mut keys: Vec<(u64, i64)> = data
            .kernels
            .iter()
            .flatten()
            .filter_map(|k| Some((k.pid?, k.correlation)))
            .chain(
                data.memops
                    .iter()
                    .flatten()
                    .filter_map(|m| Some((m.pid?, m.correlation))),
            )
            .collect();
        keys.par_sort_unstable();
        keys.dedup();
        let api = data.api.as_mut()?;
        let before = api.len();
        api.retain(|a| keys.binary_search(&(a.pid, a.correlation)).is_ok());
        api.shrink_to_fit();
        drop(keys);
        let calls: Vec<(u64, u64, i64, i64)> = api
            .iter()
            .map(|a| (a.pid, a.tid, a.start_ns, a.end_ns))
            .collect();
        let left_out = (before - api.len()) as u64;
        data.drop_rows(
            "CUDA API calls that launched no kernel, copy or set (the reports asked for look at \
             no others)",
            left_out,
        );
        Some(Launches::of(calls))
    }

    /// The index of `calls`: (pid, tid, start, end), in any order.
    fn of(mut calls: Vec<(u64, u64, i64, i64)>) -> Launches {
        use rayon::slice::ParallelSliceMut;
        calls.par_sort_unstable();
        let mut threads: FastMap<(u64, u64), (usize, usize)> = FastMap::default();
        let mut starts = Vec::with_capacity(calls.len());
        let mut min_end = Vec::with_capacity(calls.len());
        for run in calls.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
            let at = starts.len();
            starts.extend(run.iter().map(|c| c.2));
            min_end.extend(run.iter().map(|c| c.3));
            for i in (at..min_end.len().saturating_sub(1)).rev() {
                min_end[i] = min_end[i].min(min_end[i + 1]);
            }
            if let Some(c) = run.first() {
                threads.insert((c.0, c.1), (at, starts.len()));
            }
        }
        Launches {
            threads,
            starts,
            min_end,
        }
    }

    /// The calls of the thread of `globalTid` `g`, as a range of indices.
    fn thread(&self, g: i64) -> (usize, usize) {
        self.threads
            .get(&(pid_of(g), tid_of(g)))
            .copied()
            .unwrap_or((0, 0))
    }

    /// Whether a call of `calls` (a [`Launches::thread`]) starts at or
    /// after `start` and ends at or before `end`.
    fn encloses(&self, (a, b): (usize, usize), start: i64, end: i64) -> bool {
        let Some(starts) = self.starts.get(a..b) else {
            return false;
        };
        let i = a + starts.partition_point(|&s| s < start);
        i < b && self.min_end.get(i).is_some_and(|&e| e <= end)
    }
}

/// The API table read on a second connection while this one reads the
/// kernel and copy tables (what `stats`' default set reads once its NVTX
/// reports are done, and `cuda_kern_exec_*`): the same data, names
/// interned and notes kept in the order of [`read_kernels`],
/// [`read_memops`] and [`read_api`] run in turn.
fn read_api_beside(
    db: &Db,
    strings: &FileStrings,
    want: Tables,
    data: &mut StatsData,
) -> Result<()> {
    let unknown = db
        .resolve("CUPTI_ACTIVITY_KIND_KERNEL")
        .is_some()
        .then(|| data.names.intern("<unknown kernel>"));
    let api_db = Db::open(&db.path)?;
    let (side, api) = std::thread::scope(|sc| {
        let api = sc.spawn(move || scan_api(&api_db, strings));
        let side = (|| -> Result<_> {
            let k = match unknown {
                Some(u) => scan_kernels(db, strings, u, want.kernel_launch)?,
                None => None,
            };
            let m = if want.memops { scan_memops(db)? } else { None };
            Ok((k, m))
        })();
        (side, api.join())
    });
    // errors in the order one thread met them
    let (k, m) = side?;
    let a = api.map_err(|_| {
        db.err(
            "reading the CUDA API tables".to_owned(),
            rusqlite::Error::InvalidQuery,
        )
    })??;
    finish_kernels(data, k);
    finish_memops(data, m);
    finish_api(data, a);
    Ok(())
}

fn read_kernels(db: &Db, strings: &FileStrings, launch: bool, data: &mut StatsData) -> Result<()> {
    if db.resolve("CUPTI_ACTIVITY_KIND_KERNEL").is_none() {
        return Ok(());
    }
    let unknown = data.names.intern("<unknown kernel>");
    let scan = scan_kernels(db, strings, unknown, launch)?;
    finish_kernels(data, scan);
    Ok(())
}

/// What [`scan_kernels`] read: the kernels, their launches, rows without a
/// start or end, kernels without a name.
type KernelScan = Option<(Vec<GpuKernel>, Vec<KernelLaunch>, u64, u64)>;

/// The kernel table's rows (names: the file's strings, `unknown` for
/// none; with `launch`, their [`KernelLaunch`] columns), without touching
/// the data (it may run beside the NVTX read).
fn scan_kernels(db: &Db, strings: &FileStrings, unknown: u32, launch: bool) -> Result<KernelScan> {
    let Some(table) = db.resolve("CUPTI_ACTIVITY_KIND_KERNEL") else {
        return Ok(None);
    };
    let mut cols = vec![
        "start",
        "end",
        "correlationId",
        "globalPid",
        "demangledName",
        "shortName",
        "mangledName",
    ];
    // (from column 7 on)
    if launch {
        cols.extend([
            "deviceId",
            "contextId",
            "greenContextId",
            "streamId",
            "gridX",
            "gridY",
            "gridZ",
            "blockX",
            "blockY",
            "blockZ",
            "registersPerThread",
            "staticSharedMemory",
            "dynamicSharedMemory",
        ]);
    }
    let (list, _) = db.select_list(&table, &cols, &["start", "end"])?;
    let hint = crate::read::nsys::row_count_hint(db, &table);
    let mut out = crate::read::nsys::with_room(hint);
    let mut launches = crate::read::nsys::with_room(if launch { hint } else { 0 });
    let mut nulls = 0u64;
    let mut unnamed = 0u64;
    let mut row = 0u64;
    each_row(
        db,
        &format!("table {table}"),
        &format!("SELECT {list} FROM \"{table}\""),
        |r| {
            row += 1;
            let int = |i| int_at(r, i);
            let (Some(start), Some(end)) = (int(0)?, int(1)?) else {
                nulls += 1;
                return Ok(());
            };
            let short = strings.get(int(5)?);
            let mangled = strings.get(int(6)?);
            let name = match strings.get(int(4)?).or(short) {
                Some(n) => n,
                None => {
                    unnamed += 1;
                    unknown
                }
            };
            let launch = if launch {
                let at = u32::try_from(launches.len()).ok();
                launches.push(KernelLaunch {
                    device: int(7)?.unwrap_or(0),
                    context: int(8)?,
                    green_context: int(9)?,
                    stream: int(10)?.unwrap_or(0),
                    grid: [
                        int(11)?.unwrap_or(0),
                        int(12)?.unwrap_or(0),
                        int(13)?.unwrap_or(0),
                    ],
                    block: [
                        int(14)?.unwrap_or(0),
                        int(15)?.unwrap_or(0),
                        int(16)?.unwrap_or(0),
                    ],
                    registers: int(17)?,
                    static_smem: int(18)?,
                    dynamic_smem: int(19)?,
                });
                at
            } else {
                None
            };
            out.push(GpuKernel {
                row: row - 1,
                start_ns: start,
                end_ns: end,
                correlation: int(2)?.unwrap_or(-1),
                pid: int(3)?.map(pid_of),
                name,
                short,
                mangled,
                launch,
            });
            Ok(())
        },
    )?;
    Ok(Some((out, launches, nulls, unnamed)))
}

fn finish_kernels(data: &mut StatsData, scan: KernelScan) {
    let Some((out, launches, nulls, unnamed)) = scan else {
        return;
    };
    data.kernel_launches = launches;
    data.drop_rows("kernel rows with a NULL start or end", nulls);
    if unnamed > 0 {
        data.notes.push(format!(
            "{unnamed} kernels have no name in the export: shown as <unknown kernel>"
        ));
    }
    data.kernels = Some(out);
}

fn read_memops(db: &Db, data: &mut StatsData) -> Result<()> {
    let scan = scan_memops(db)?;
    finish_memops(data, scan);
    Ok(())
}

/// What [`scan_memops`] read: the copy and set tables' rows (each with
/// whether it is the set table), the file's label tables, whether it has a
/// copy table.
struct MemScan {
    tables: Vec<(bool, Vec<[Option<i64>; 14]>)>,
    oper: Option<FastMap<i64, String>>,
    kinds: Option<FastMap<i64, String>>,
    has_copies: bool,
}

/// Columns of [`scan_memops`]'s rows.
const MEMOP_COLS: [&str; 14] = [
    "start",
    "end",
    "deviceId",
    "contextId",
    "greenContextId",
    "streamId",
    "correlationId",
    "globalPid",
    "bytes",
    "copyKind",
    "srcKind",
    "dstKind",
    "memKind",
    "virtualAddress",
];

/// The copy and set tables' rows, without touching the data (it may run
/// beside the NVTX read).
fn scan_memops(db: &Db) -> Result<Option<MemScan>> {
    let copy_table = db.resolve("CUPTI_ACTIVITY_KIND_MEMCPY");
    let set_table = db.resolve("CUPTI_ACTIVITY_KIND_MEMSET");
    if copy_table.is_none() && set_table.is_none() {
        return Ok(None);
    }
    let oper = enum_labels(db, "ENUM_CUDA_MEMCPY_OPER")?;
    let kinds = enum_labels(db, "ENUM_CUDA_MEM_KIND")?;
    let mut tables = Vec::new();
    for (table, is_set) in [(&copy_table, false), (&set_table, true)] {
        let Some(table) = table else { continue };
        let (list, _) = db.select_list(table, &MEMOP_COLS, &["start", "end"])?;
        let mut rows = Vec::new();
        each_row(
            db,
            &format!("table {table}"),
            &format!("SELECT {list} FROM \"{table}\""),
            |r| {
                let mut v = [None; 14];
                for (i, slot) in v.iter_mut().enumerate() {
                    *slot = int_at(r, i)?;
                }
                rows.push(v);
                Ok(())
            },
        )?;
        tables.push((is_set, rows));
    }
    Ok(Some(MemScan {
        tables,
        oper,
        kinds,
        has_copies: copy_table.is_some(),
    }))
}

fn finish_memops(data: &mut StatsData, scan: Option<MemScan>) {
    let Some(MemScan {
        tables,
        oper,
        kinds,
        has_copies,
    }) = scan
    else {
        return;
    };
    if has_copies && oper.is_none() {
        data.notes.push(
            "no ENUM_CUDA_MEMCPY_OPER table (exports before nsys 2022.4): copies are labelled \
             HtoD, DtoH, ... (nsys stats skips the memory reports on such files)"
                .into(),
        );
    }
    let mut label_ids: FastMap<String, u32> = FastMap::default();
    let mut label = |data: &mut StatsData, s: String| -> u32 {
        *label_ids
            .entry(s)
            .or_insert_with_key(|k| data.names.intern(k))
    };
    let mut out = Vec::new();
    let mut nulls = 0u64;
    for (is_set, rows) in tables {
        for v in rows {
            let (Some(start), Some(end)) = (v[0], v[1]) else {
                nulls += 1;
                continue;
            };
            let kind_label =
                |data: &mut StatsData,
                 k: Option<i64>,
                 label: &mut dyn FnMut(&mut StatsData, String) -> u32| {
                    k.map(|k| {
                        let s = match kinds.as_ref() {
                            Some(m) => m.get(&k).cloned().unwrap_or_else(|| "Unknown".into()),
                            None => fallback_mem_kind(k).to_owned(),
                        };
                        label(data, s)
                    })
                };
            let (name, src, dst) = if is_set {
                let name = label(data, "[CUDA memset]".to_owned());
                let src = kind_label(data, v[12], &mut label);
                (name, src, None)
            } else {
                let k = v[9].unwrap_or(0);
                let text = match oper.as_ref() {
                    Some(m) => m.get(&k).cloned().unwrap_or_else(|| "Unknown".into()),
                    None => fallback_copy_label(k).to_owned(),
                };
                let name = label(data, format!("[CUDA memcpy {text}]"));
                let src = kind_label(data, v[10], &mut label);
                let dst = kind_label(data, v[11], &mut label);
                (name, src, dst)
            };
            out.push(GpuMemOp {
                start_ns: start,
                end_ns: end,
                is_set,
                name,
                bytes: v[8],
                src_kind: src,
                dst_kind: dst,
                copy_kind: if is_set { None } else { v[9] },
                virtual_address: v[13],
                device: v[2].unwrap_or(0),
                context: v[3],
                green_context: v[4],
                stream: v[5].unwrap_or(0),
                correlation: v[6].unwrap_or(-1),
                pid: v[7].map(pid_of),
            });
        }
    }
    data.drop_rows("memcpy/memset rows with a NULL start or end", nulls);
    data.memops = Some(out);
}

fn read_api(db: &Db, strings: &FileStrings, data: &mut StatsData) -> Result<()> {
    let scan = scan_api(db, strings)?;
    finish_api(data, scan);
    Ok(())
}

/// An API call as [`scan_api`] reads it: start, end, stored name
/// ([`UNKNOWN_API`] for none), global thread id, correlation id, result.
type PendingCall = (i64, i64, u32, i64, i64, Option<i64>);

/// A call without a name, until `<unknown API>` is interned.
const UNKNOWN_API: u32 = u32::MAX - 1;

/// What [`scan_api`] read: the calls, rows without a start or end,
/// backtrace rows, whether the table has `eventClass`.
type ApiScan = Option<(Vec<PendingCall>, u64, u64, bool)>;

/// The API table's rows, without touching the data (it may run beside the
/// NVTX read).
fn scan_api(db: &Db, strings: &FileStrings) -> Result<ApiScan> {
    let Some(table) = db.resolve("CUPTI_ACTIVITY_KIND_RUNTIME") else {
        return Ok(None);
    };
    let (list, present) = db.select_list(
        &table,
        &[
            "start",
            "end",
            "nameId",
            "globalTid",
            "correlationId",
            "returnValue",
            "eventClass",
        ],
        &["start", "end"],
    )?;
    let has_class = present[6];
    let mut nulls = 0u64;
    let mut backtrace = 0u64;
    let mut pending: Vec<PendingCall> =
        crate::read::nsys::with_room(crate::read::nsys::row_count_hint(db, &table));
    each_row(
        db,
        &format!("table {table}"),
        &format!("SELECT {list} FROM \"{table}\""),
        |r| {
            let (Some(start), Some(end)) = (int_at(r, 0)?, int_at(r, 1)?) else {
                nulls += 1;
                return Ok(());
            };
            if has_class && int_at(r, 6)? == Some(EVENT_CLASS_CUDA_BACKTRACE) {
                backtrace += 1;
                return Ok(());
            }
            let g = int_at(r, 3)?.unwrap_or(0);
            let raw = strings.get(int_at(r, 2)?).unwrap_or(UNKNOWN_API);
            pending.push((
                start,
                end,
                raw,
                g,
                int_at(r, 4)?.unwrap_or(-1),
                int_at(r, 5)?,
            ));
            Ok(())
        },
    )?;
    Ok(Some((pending, nulls, backtrace, has_class)))
}

fn finish_api(data: &mut StatsData, scan: ApiScan) {
    let Some((pending, nulls, mut backtrace, has_class)) = scan else {
        return;
    };
    let unknown = data.names.intern("<unknown API>");
    let mut stripped: FastMap<u32, u32> = FastMap::default();
    let mut out = Vec::with_capacity(pending.len());
    for (start, end, raw, g, corr, result) in pending {
        let raw = if raw == UNKNOWN_API { unknown } else { raw };
        let name = match stripped.get(&raw) {
            Some(&n) => n,
            None => {
                let text = data.names.get(raw).to_owned();
                let n = data.names.intern(strip_api_version(&text));
                stripped.insert(raw, n);
                n
            }
        };
        out.push(ApiRow {
            start_ns: start,
            end_ns: end,
            raw_name: raw,
            name,
            pid: pid_of(g),
            tid: tid_of(g),
            correlation: corr,
            result,
        });
    }
    if !has_class {
        backtrace = dedupe_unversioned(&mut out);
    }
    data.drop_rows("CUDA API rows with a NULL start or end", nulls);
    if backtrace > 0 {
        data.notes.push(format!(
            "{backtrace} CUDA backtrace rows duplicate API calls already counted: counted once \
             (nsys stats counts them twice)"
        ));
    }
    data.api = Some(out);
}

/// Exports without `eventClass` (≤ 2021.4) write a backtrace duplicate of a
/// call as a second row with the same thread and correlation id and the
/// unversioned name: drop an unversioned row when a versioned row of the same
/// base name exists for its (thread, correlation id). Returns rows dropped.
fn dedupe_unversioned(rows: &mut Vec<ApiRow>) -> u64 {
    let versioned: FastSet<(u64, u64, i64, u32)> = rows
        .iter()
        .filter(|r| r.raw_name != r.name)
        .map(|r| (r.pid, r.tid, r.correlation, r.name))
        .collect();
    if versioned.is_empty() {
        return 0;
    }
    let before = rows.len();
    rows.retain(|r| {
        r.raw_name != r.name || !versioned.contains(&(r.pid, r.tid, r.correlation, r.name))
    });
    (before - rows.len()) as u64
}

/// A range without text, until the empty name is interned.
const NO_TEXT: u32 = u32::MAX;

/// Rows, and bytes of inline text, per batch of the NVTX read.
const NVTX_BATCH_ROWS: usize = 8192;
const NVTX_BATCH_TEXT: usize = 1 << 20;

/// An NVTX range's text as the scan finds it.
enum PendingText {
    /// A registered string, already interned.
    Known(u32),
    /// Inline text: bytes `a..b` of its batch's text.
    Inline(usize, usize),
    /// None.
    None,
}

/// An NVTX range as the scan reads it, its text not yet interned.
struct PendingRange {
    id: i64,
    start: i64,
    end: Option<i64>,
    style: RangeStyle,
    g: i64,
    ends_elsewhere: bool,
    text: PendingText,
    domain: i64,
}

/// Rows of the NVTX scan on their way to the interner.
#[derive(Default)]
struct NvtxBatch {
    rows: Vec<PendingRange>,
    text: String,
}

/// What one reader of the NVTX table gathers besides the rows it sends on
/// (see [`read_nvtx`]).
#[derive(Default)]
struct NvtxScan {
    /// domains: the first creation per (process, domain id), by start
    /// and then rowid (the readers see the rows in different orders):
    /// start, rowid, text
    domains: FastMap<(u64, i64), (i64, i64, String)>,
    /// range rows with a NULL start
    nulls: u64,
    /// ranges left out: they enclose no launching call ([`Launches`])
    unlaunched: u64,
    /// the last range's `globalTid` and its thread's calls (consecutive
    /// ranges are mostly on one thread)
    last_thread: Option<(i64, (usize, usize))>,
    /// the largest time in the table and among the ranges alone, as
    /// `max(max(start), max(end))` computes them, from this one scan (two
    /// more full scans took a large share of the NVTX reports' time)
    all_max: TimeMax,
    range_max: TimeMax,
    /// the rows not yet sent
    batch: NvtxBatch,
}

impl NvtxScan {
    /// Take one row of the table; a full batch goes to `send`, which
    /// gives the next one.
    fn row(
        &mut self,
        r: &RawRow<'_>,
        strings: &FileStrings,
        launches: Option<&Launches>,
        send: &mut dyn FnMut(NvtxBatch) -> NvtxBatch,
    ) -> rusqlite::Result<()> {
        use rusqlite::types::ValueRef;
        let ty = match r.get_ref(3)? {
            ValueRef::Integer(x) => Some(x),
            _ => None,
        };
        let is_range = matches!(
            ty,
            Some(NVTX_PUSHPOP | NVTX_STARTEND | NVTXT_PUSHPOP | NVTXT_STARTEND)
        );
        let (s0, e0) = (r.get_ref(1)?, r.get_ref(2)?);
        self.all_max.add(s0, e0);
        if is_range {
            self.range_max.add(s0, e0);
        } else if ty != Some(NVTX_DOMAIN_CREATE) {
            return Ok(());
        }
        let ty = ty.unwrap_or(0);
        let g = int_at(r, 4)?.unwrap_or(0);
        let Some(start) = int_at(r, 1)? else {
            if ty != NVTX_DOMAIN_CREATE {
                self.nulls += 1;
            }
            return Ok(());
        };
        if ty == NVTX_DOMAIN_CREATE {
            let key = (pid_of(g), int_at(r, 6)?.unwrap_or(0));
            let at = (start, int_at(r, 0)?.unwrap_or(0));
            let text = text_at(r, 8)?.unwrap_or_default();
            match self.domains.get(&key) {
                Some((s, id, _)) if (*s, *id) <= at => {}
                _ => {
                    self.domains.insert(key, (at.0, at.1, text));
                }
            }
            return Ok(());
        }
        let style = if ty == NVTX_PUSHPOP || ty == NVTXT_PUSHPOP {
            RangeStyle::PushPop
        } else {
            RangeStyle::StartEnd
        };
        let end = int_at(r, 2)?;
        // (an open range ends at the last range time, not known yet: kept)
        if let (Some(l), Some(end)) = (launches, end) {
            let calls = match self.last_thread {
                Some((last, calls)) if last == g => calls,
                _ => {
                    let calls = l.thread(g);
                    self.last_thread = Some((g, calls));
                    calls
                }
            };
            if !l.encloses(calls, start, end) {
                self.unlaunched += 1;
                return Ok(());
            }
        }
        // inline texts copied from SQLite's own buffer, without a String
        // each
        let batch = &mut self.batch;
        let text = match strings.get(int_at(r, 7)?) {
            Some(t) => PendingText::Known(t),
            None => {
                let a = batch.text.len();
                let some = match r.get_ref(8)? {
                    ValueRef::Text(t) => {
                        match std::str::from_utf8(t) {
                            Ok(s) => batch.text.push_str(s),
                            Err(_) => batch.text.push_str(&String::from_utf8_lossy(t)),
                        }
                        true
                    }
                    _ => text_at(r, 8)?.map(|s| batch.text.push_str(&s)).is_some(),
                };
                if some {
                    PendingText::Inline(a, batch.text.len())
                } else {
                    PendingText::None
                }
            }
        };
        batch.rows.push(PendingRange {
            id: int_at(r, 0)?.unwrap_or(0),
            start,
            end,
            style,
            g,
            ends_elsewhere: int_at(r, 5)?.is_some(),
            text,
            domain: int_at(r, 6)?.unwrap_or(0),
        });
        if batch.rows.len() >= NVTX_BATCH_ROWS || batch.text.len() >= NVTX_BATCH_TEXT {
            let full = std::mem::take(batch);
            *batch = send(full);
        }
        Ok(())
    }
}

/// A batch's rows made (their inline texts interned together, the
/// table's slots fetched ahead, then taken in row order) onto `out`, each
/// row's domain id onto `raw_domains`; the batch is left empty.
fn intern_batch(
    batch: &mut NvtxBatch,
    names: &mut rprof_model::Names,
    threads: &mut ThreadIndex,
    ids: &mut Vec<u32>,
    out: &mut Vec<NvtxRow>,
    raw_domains: &mut Vec<i64>,
) {
    ids.clear();
    {
        let texts: Vec<&str> = batch
            .rows
            .iter()
            .filter_map(|p| match p.text {
                PendingText::Inline(a, b) => Some(batch.text.get(a..b).unwrap_or("")),
                _ => None,
            })
            .collect();
        names.intern_batch(&texts, ids);
    }
    let mut inline = ids.iter();
    for p in batch.rows.drain(..) {
        let text = match p.text {
            PendingText::Known(t) => t,
            PendingText::Inline(..) => inline.next().copied().unwrap_or(NO_TEXT),
            PendingText::None => NO_TEXT,
        };
        let thread = threads.id((pid_of(p.g), tid_of(p.g)));
        let mut row = NvtxRow::new(p.id, p.start, p.end, p.style, thread, text);
        row.ends_elsewhere = p.ends_elsewhere;
        out.push(row);
        raw_domains.push(p.domain);
    }
    batch.text.clear();
}

/// Rowids from which [`read_nvtx`]'s second reader helps.
const NVTX_SPLIT_ROWS: i64 = 1 << 18;

/// Most names [`read_nvtx`] reserves room for up front (beyond it the
/// table grows as needed).
const MAX_NAMES_RESERVED: usize = 1 << 23;

/// `max(max(start), max(end))` over integer columns, one row at a time.
#[derive(Default)]
struct TimeMax {
    start: Option<i64>,
    end: Option<i64>,
    /// A value that is neither an integer nor NULL was seen: SQLite orders
    /// such values by type, so its own query must answer.
    odd: bool,
}

impl TimeMax {
    fn add(&mut self, start: rusqlite::types::ValueRef<'_>, end: rusqlite::types::ValueRef<'_>) {
        use rusqlite::types::ValueRef;
        for (v, m) in [(start, &mut self.start), (end, &mut self.end)] {
            match v {
                ValueRef::Integer(x) => *m = Some(m.map_or(x, |y| y.max(x))),
                ValueRef::Null => {}
                _ => self.odd = true,
            }
        }
    }

    /// Both scans' maxima, as one scan of their rows.
    fn merge(&mut self, o: &TimeMax) {
        let max = |a: Option<i64>, b: Option<i64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, None) => x,
            (None, y) => y,
        };
        self.start = max(self.start, o.start);
        self.end = max(self.end, o.end);
        self.odd |= o.odd;
    }

    /// NULL when either column has no value, as SQLite's two-argument
    /// `max` is.
    fn value(&self) -> Option<i64> {
        Some(self.start?.max(self.end?))
    }
}

/// Rowids per chunk of the NVTX table's read (see [`read_nvtx`]).
const NVTX_CHUNK_ROWIDS: i64 = 1 << 15;

/// Most chunks the NVTX table is cut into: a table whose rowids spread
/// wider (a hostile file's may span all 64 bits) has wider chunks.
const NVTX_MAX_CHUNKS: i128 = 1 << 16;

/// When a second connection helps [`read_nvtx`] read the NVTX table.
enum Helper {
    /// From the start, for a table that spans at least this many rowids.
    Now(i64),
    /// Once `go` receives (not if its sender is dropped first), for a table
    /// that spans at least [`NVTX_SPLIT_ROWS`] rowids: when this thread's
    /// core is busy with other tables until then.
    After(std::sync::mpsc::Receiver<()>),
}

/// The NVTX table's rowids `first..=last` cut into chunks, which the
/// readers claim in order.
struct Chunks {
    first: i128,
    last: i128,
    /// rowids per chunk
    size: i128,
    count: u64,
    next: std::sync::atomic::AtomicU64,
    /// a reader met an error: no more claims
    failed: std::sync::atomic::AtomicBool,
}

impl Chunks {
    /// Chunks of at least `size` rowids.
    fn new(first: i64, last: i64, size: i64) -> Chunks {
        let (first, last) = (i128::from(first), i128::from(last));
        let span = (last - first + 1).max(0);
        let size = (span / NVTX_MAX_CHUNKS + 1).max(i128::from(size).max(1));
        Chunks {
            first,
            last,
            size,
            // (at most NVTX_MAX_CHUNKS + 1)
            count: u64::try_from((span + size - 1) / size).unwrap_or(0),
            next: Default::default(),
            failed: Default::default(),
        }
    }

    /// The next chunk: its index and its first and last rowids.
    fn claim(&self) -> Option<(u64, i64, i64)> {
        use std::sync::atomic::Ordering::Relaxed;
        if self.failed.load(Relaxed) {
            return None;
        }
        let i = self.next.fetch_add(1, Relaxed);
        if i >= self.count {
            return None;
        }
        let a = self.first + i128::from(i) * self.size;
        let b = (a + self.size - 1).min(self.last);
        Some((i, i64::try_from(a).ok()?, i64::try_from(b).ok()?))
    }
}

/// A batch from `pool` (a used one, cleared, if there is one: fresh ones
/// were fresh pages for the kernel to clear).
fn pooled(pool: &std::sync::Mutex<Vec<NvtxBatch>>) -> NvtxBatch {
    pool.lock()
        .ok()
        .and_then(|mut p| p.pop())
        .unwrap_or_default()
}

/// One reader of [`read_nvtx`]: claims chunks until none is left and sends
/// each chunk's batches, in row order, with the chunk's index. An error
/// ends the claims (both readers') and comes back with its chunk's index.
/// `sql` reads a chunk; `what` names the table in errors.
fn read_chunks(
    db: &Db,
    (sql, what): (&str, &str),
    strings: &FileStrings,
    chunks: &Chunks,
    launches: Option<&Launches>,
    pool: &std::sync::Mutex<Vec<NvtxBatch>>,
    tx: &std::sync::mpsc::SyncSender<(u64, Vec<NvtxBatch>)>,
) -> (NvtxScan, Option<(u64, crate::error::Error)>) {
    let mut scan = NvtxScan::default();
    let mut st = None;
    while let Some((i, a, b)) = chunks.claim() {
        let mut sent = Vec::new();
        let mut read = || -> rusqlite::Result<()> {
            let st = match &mut st {
                Some(st) => st,
                None => st.insert(RawQuery::new(&db.conn, sql)?),
            };
            st.restart(&[a, b])?;
            while let Some(r) = st.next()? {
                scan.row(&r, strings, launches, &mut |full| {
                    sent.push(full);
                    pooled(pool)
                })?;
            }
            Ok(())
        };
        if let Err(e) = read() {
            chunks
                .failed
                .store(true, std::sync::atomic::Ordering::Relaxed);
            return (scan, Some((i, db.err(format!("reading {what}"), e))));
        }
        if !scan.batch.rows.is_empty() {
            sent.push(std::mem::replace(&mut scan.batch, pooled(pool)));
        }
        // the interner stopped (it panicked): its join says so
        if tx.send((i, sent)).is_err() {
            break;
        }
    }
    (scan, None)
}

/// Read the NVTX table. It is read in chunks of rowids, in order, and with
/// `helper` a second connection claims chunks too (one connection stepped
/// through the table while the other core waited: the read took most of
/// the NVTX reports' time); the chunks' rows reach the interner in rowid
/// order, so the names' ids are the ones one reader gives.
/// `chunk`: rowids per chunk, at least. With `launches`, only the ranges
/// that may enclose one of its calls are kept (see [`Launches`]).
fn read_nvtx(
    db: &Db,
    strings: &FileStrings,
    data: &mut StatsData,
    helper: Helper,
    chunk: i64,
    launches: Option<&Launches>,
) -> Result<()> {
    let Some(table) = db.resolve("NVTX_EVENTS") else {
        return Ok(());
    };
    let (list, _) = db.select_list(
        &table,
        &[
            "start",
            "end",
            "eventType",
            "globalTid",
            "endGlobalTid",
            "domainId",
            "textId",
            "text",
        ],
        &["start", "eventType"],
    )?;
    let names = &mut data.names;
    // the arena's table sized once: growing it re-hashed millions of texts
    // (rows with a registered string need no entry, so this is at most)
    let rows = db
        .scalar_i64(&format!("SELECT max(rowid) FROM \"{table}\""))
        .unwrap_or(0);
    names.reserve(usize::try_from(rows).unwrap_or(0).min(MAX_NAMES_RESERVED));
    let first = db
        .scalar_i64(&format!("SELECT min(rowid) FROM \"{table}\""))
        .unwrap_or(0);
    let chunks = Chunks::new(first, rows, chunk);
    let span = rows.saturating_sub(first);
    let helper = match helper {
        Helper::Now(n) if span >= n => Some(None),
        Helper::After(go) if span >= NVTX_SPLIT_ROWS => Some(Some(go)),
        _ => None,
    };
    let sql = format!("SELECT rowid, {list} FROM \"{table}\" WHERE rowid BETWEEN ?1 AND ?2");
    let what = format!("table {table}");
    let pool = std::sync::Mutex::new(Vec::new());
    // Threads: the readers step SQLite and take each row's values, another
    // interns the inline texts (millions on a large export, nearly all
    // distinct) and makes the rows, chunk by chunk in rowid order. Stepping
    // and interning took about the same time one after the other.
    let (made, first_reader, second_reader) = std::thread::scope(|sc| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(u64, Vec<NvtxBatch>)>(4);
        let pool = &pool;
        let interner = sc.spawn(move || {
            // the rows, as the scan makes them (their names are the texts
            // until the domains are known), and each row's domain id
            let mut out: Vec<NvtxRow> = Vec::new();
            let mut threads = ThreadIndex::default();
            let mut raw_domains: Vec<i64> = Vec::new();
            let mut ids: Vec<u32> = Vec::new();
            // chunks that came before the ones ahead of them
            let mut early: std::collections::BTreeMap<u64, Vec<NvtxBatch>> = Default::default();
            let mut next = 0u64;
            for (i, batches) in rx {
                early.insert(i, batches);
                while let Some(batches) = early.remove(&next) {
                    next += 1;
                    for mut batch in batches {
                        intern_batch(
                            &mut batch,
                            names,
                            &mut threads,
                            &mut ids,
                            &mut out,
                            &mut raw_domains,
                        );
                        if let Ok(mut p) = pool.lock() {
                            p.push(batch);
                        }
                    }
                }
            }
            (out, threads.into_list(), raw_domains)
        });
        let second = helper.map(|go| {
            let (sql, what, path, chunks, tx) = (&sql, &what, db.path.clone(), &chunks, tx.clone());
            sc.spawn(move || {
                if let Some(go) = go
                    && go.recv().is_err()
                {
                    return None;
                }
                // a helper without a connection leaves the chunks to the
                // first reader
                let db2 = Db::open(&path).ok()?;
                Some(read_chunks(
                    &db2,
                    (sql, what),
                    strings,
                    chunks,
                    launches,
                    pool,
                    &tx,
                ))
            })
        });
        let first_reader = read_chunks(db, (&sql, &what), strings, &chunks, launches, pool, &tx);
        drop(tx);
        let second = second.map(|h| h.join());
        (interner.join(), first_reader, second)
    });
    let failed = || {
        db.err(
            format!("reading table {table}"),
            rusqlite::Error::InvalidQuery,
        )
    };
    let (mut scan, mut error) = first_reader;
    match second_reader {
        Some(Ok(Some((half, e)))) => {
            // the error of the first chunk with one: the one a single
            // reader meets first
            if let Some((i, e)) = e
                && error.as_ref().is_none_or(|(j, _)| i < *j)
            {
                error = Some((i, e));
            }
            scan.nulls += half.nulls;
            scan.unlaunched += half.unlaunched;
            scan.all_max.merge(&half.all_max);
            scan.range_max.merge(&half.range_max);
            for (key, d) in half.domains {
                match scan.domains.get(&key) {
                    Some(have) if (have.0, have.1) <= (d.0, d.1) => {}
                    _ => {
                        scan.domains.insert(key, d);
                    }
                }
            }
        }
        Some(Ok(None)) | None => {}
        Some(Err(_)) => return Err(failed()),
    }
    if let Some((_, e)) = error {
        return Err(e);
    }
    let NvtxScan {
        domains,
        nulls,
        unlaunched,
        all_max,
        range_max,
        batch: _,
        last_thread: _,
    } = scan;
    let (mut out, threads, raw_domains) = made.map_err(|_| failed())?;
    if all_max.odd || range_max.odd {
        // values other than integers: SQLite's own ordering of types
        data.nvtx_max_ns = db.scalar_i64(&format!(
            "SELECT max(max(start), max(end)) FROM \"{table}\""
        ));
        data.nvtx_range_max_ns = db.scalar_i64(&format!(
            "SELECT max(max(start), max(end)) FROM \"{table}\" WHERE eventType IN \
             ({NVTX_PUSHPOP}, {NVTX_STARTEND}, {NVTXT_PUSHPOP}, {NVTXT_STARTEND})"
        ));
    } else {
        data.nvtx_max_ns = all_max.value();
        data.nvtx_range_max_ns = range_max.value();
    }
    let empty = data.names.intern("");
    let mut domain_ids: FastMap<(u64, i64), u32> = FastMap::default();
    let mut joined: FastMap<(u32, u32), u32> = FastMap::default();
    for (row, &raw_domain) in out.iter_mut().zip(&raw_domains) {
        if row.text == NO_TEXT {
            row.text = empty;
        }
        let pid = threads.get(row.thread as usize).map_or(u64::MAX, |t| t.0);
        let domain = domains.get(&(pid, raw_domain)).map(|(_, _, d)| {
            *domain_ids
                .entry((pid, raw_domain))
                .or_insert_with(|| data.names.intern(d))
        });
        if let Some(d) = domain {
            let text = row.text;
            row.name = *joined.entry((d, text)).or_insert_with(|| {
                let s = format!("{}:{}", data.names.get(d), data.names.get(text));
                data.names.intern(&s)
            });
        } else {
            row.name = row.text;
        }
        row.set_domain(domain);
    }
    drop(raw_domains);
    data.drop_rows("NVTX range rows with a NULL start", nulls);
    data.drop_rows(
        "NVTX ranges that enclose no CUDA call launching a kernel, copy or set on their thread \
         (the reports asked for look at no others)",
        unlaunched,
    );
    let open = out.iter().filter(|r| r.end_ns().is_none()).count();
    if open > 0 {
        data.notes.push(format!(
            "{open} NVTX ranges were still open when the capture stopped: they end at the last \
             NVTX timestamp, as in nsys stats"
        ));
    }
    data.nvtx = Some(out);
    data.nvtx_threads = threads;
    Ok(())
}

fn read_osrt(db: &Db, strings: &FileStrings, data: &mut StatsData) -> Result<()> {
    let Some(table) = db.resolve("OSRT_API") else {
        return Ok(());
    };
    let (list, _) = db.select_list(
        &table,
        &["start", "end", "nameId", "globalTid", "eventClass"],
        &["start", "end"],
    )?;
    let unknown = data.names.intern("<unknown function>");
    let mut out = Vec::new();
    let mut nulls = 0u64;
    each_row(
        db,
        &format!("table {table}"),
        &format!("SELECT {list} FROM \"{table}\""),
        |r| {
            if int_at(r, 4)? != Some(EVENT_CLASS_OSRT) {
                return Ok(());
            }
            let (Some(start), Some(end)) = (int_at(r, 0)?, int_at(r, 1)?) else {
                nulls += 1;
                return Ok(());
            };
            let g = int_at(r, 3)?.unwrap_or(0);
            out.push(OsrtRow {
                start_ns: start,
                end_ns: end,
                name: strings.get(int_at(r, 2)?).unwrap_or(unknown),
                pid: pid_of(g),
                tid: tid_of(g),
            });
            Ok(())
        },
    )?;
    data.drop_rows("OS runtime rows with a NULL start or end", nulls);
    data.osrt = Some(out);
    Ok(())
}

fn read_um(db: &Db, data: &mut StatsData) -> Result<()> {
    let cpu = db.resolve("CUDA_UM_CPU_PAGE_FAULT_EVENTS");
    let gpu = db.resolve("CUDA_UM_GPU_PAGE_FAULT_EVENTS");
    let (Some(cpu), Some(gpu)) = (cpu, gpu) else {
        return Ok(());
    };
    let mut out = Vec::new();
    let mut nulls = 0u64;
    for (table, is_gpu) in [(cpu, false), (gpu, true)] {
        let (list, _) = db.select_list(
            &table,
            &["start", "end", "address", "numberOfPageFaults", "globalPid"],
            &["start", "address"],
        )?;
        each_row(
            db,
            &format!("table {table}"),
            &format!("SELECT {list} FROM \"{table}\""),
            |r| {
                let (Some(start), Some(address)) = (int_at(r, 0)?, int_at(r, 2)?) else {
                    nulls += 1;
                    return Ok(());
                };
                out.push(UmFault {
                    start_ns: start,
                    end_ns: int_at(r, 1)?.unwrap_or(start),
                    address,
                    faults: if is_gpu {
                        int_at(r, 3)?.unwrap_or(0)
                    } else {
                        1
                    },
                    gpu: is_gpu,
                    pid: int_at(r, 4)?.map(pid_of),
                });
                Ok(())
            },
        )?;
    }
    data.drop_rows(
        "unified-memory fault rows with a NULL time or address",
        nulls,
    );
    data.um_faults = Some(out);
    Ok(())
}

/// The stats rows of an nvprof database or a Kineto trace, from the model.
pub fn from_trace(trace: &Trace) -> StatsData {
    let mut data = StatsData::new(trace.source);
    let thread = |key: u64| trace.thread_id(key);
    if !trace.kernels.is_empty() || trace.source != Source::Kineto {
        let mut out = Vec::with_capacity(trace.kernels.len());
        let mut launches = Vec::with_capacity(trace.kernels.len());
        for k in &trace.kernels {
            let raw = trace.strings.get(k.name);
            // nvprof stores mangled names; print them demangled as nvprof
            // and nsys do, keeping the raw name for `:mangled`
            let (name, short, mangled) = if trace.source == Source::Nvprof {
                let long = crate::demangle::demangle(raw).unwrap_or_else(|| raw.to_owned());
                let short = crate::demangle::short_name(&long);
                (
                    data.names.intern(&long),
                    Some(data.names.intern(&short)),
                    Some(data.names.intern(raw)),
                )
            } else {
                let m = k
                    .mangled
                    .get()
                    .map(|m| data.names.intern(trace.strings.get(m)));
                (data.names.intern(raw), None, m)
            };
            out.push(GpuKernel {
                row: u64::from(k.row),
                start_ns: k.start_ns,
                end_ns: k.end_ns,
                correlation: k.correlation,
                pid: trace.kernel_pid(k),
                name,
                short,
                mangled,
                launch: u32::try_from(launches.len()).ok(),
            });
            launches.push(KernelLaunch {
                device: k.device,
                context: k.context.get().map(i64::from),
                green_context: None,
                stream: k.stream,
                grid: k.grid.map(i64::from),
                block: k.block.map(i64::from),
                registers: k.registers_per_thread.map(i64::from),
                static_smem: k.static_smem_bytes.get().map(i64::from),
                dynamic_smem: k.dynamic_smem_bytes.get().map(i64::from),
            });
        }
        data.kernel_launches = launches;
        data.kernels = Some(out);
    }
    let mut mem = Vec::with_capacity(trace.memops.len());
    for m in &trace.memops {
        let (is_set, label) = match m.kind {
            MemKind::Set => (true, "[CUDA memset]".to_owned()),
            MemKind::Copy(c) => (false, format!("[CUDA memcpy {}]", copy_label(c))),
        };
        let name = data.names.intern(&label);
        let kind = |data: &mut StatsData, k: MemoryKind| -> Option<u32> {
            (k != MemoryKind::Unknown).then(|| data.names.intern(mem_kind_label(k)))
        };
        let src = kind(&mut data, m.src_mem);
        let dst = if is_set {
            None
        } else {
            kind(&mut data, m.dst_mem)
        };
        mem.push(GpuMemOp {
            start_ns: m.start_ns,
            end_ns: m.end_ns,
            is_set,
            name,
            bytes: m.bytes,
            src_kind: src,
            dst_kind: dst,
            copy_kind: None,
            virtual_address: None,
            device: m.device,
            context: None,
            green_context: None,
            stream: m.stream,
            correlation: m.correlation,
            pid: m.pid.or_else(|| {
                m.launch
                    .and_then(|i| trace.launches.get(i as usize))
                    .map(|l| trace.thread_id(l.thread).pid)
            }),
        });
    }
    if !mem.is_empty() || trace.source == Source::Nvprof {
        data.memops = Some(mem);
    }
    if !trace
        .missing
        .iter()
        .any(|m| m.starts_with("CUDA API calls"))
    {
        let calls = trace.api_calls_in_order();
        let mut api = Vec::with_capacity(calls.len());
        for c in &calls {
            let name = data.names.intern(trace.strings.get(c.name));
            let t = thread(c.thread);
            api.push(ApiRow {
                start_ns: c.start_ns,
                end_ns: c.end_ns,
                raw_name: name,
                name,
                pid: t.pid,
                tid: t.tid,
                correlation: c.correlation,
                result: None,
            });
        }
        data.api = Some(api);
    }
    // NVTX ranges (nvprof markers, Kineto user annotations); Kineto CPU
    // operators are not NVTX ranges and are left out
    let mut nvtx = Vec::new();
    let mut threads = ThreadIndex::default();
    let mut others = 0u64;
    for (i, r) in trace.ranges.iter().enumerate() {
        let kind = trace
            .range_meta
            .get(&r.text)
            .map_or(RangeKind::Nvtx, |m| m.kind);
        if kind == RangeKind::CpuOp {
            others += 1;
            continue;
        }
        let text = data.names.intern(trace.range_name(r));
        let domain = trace
            .domain_name(r.thread, r.domain)
            .map(|d| data.names.intern(d));
        let name = match domain {
            Some(d) => {
                let s = format!("{}:{}", data.names.get(d), data.names.get(text));
                data.names.intern(&s)
            }
            None => text,
        };
        let t = thread(r.thread);
        let mut row = NvtxRow::new(
            i as i64 + 1,
            r.start_ns,
            Some(r.end_ns),
            RangeStyle::PushPop,
            threads.id((t.pid, t.tid)),
            text,
        );
        row.name = name;
        row.set_domain(domain);
        nvtx.push(row);
    }
    let max = nvtx
        .iter()
        .map(|r| r.end_ns().unwrap_or(r.start_ns).max(r.start_ns))
        .max();
    data.nvtx_max_ns = max;
    data.nvtx_range_max_ns = max;
    match trace.source {
        Source::Kineto => {
            data.notes.push(format!(
                "PyTorch-profiler trace: user annotations are reported as push/pop NVTX ranges; \
                 {others} CPU operators (cpu_op) are not NVTX ranges and are not counted"
            ));
            data.notes.push(
                "PyTorch-profiler trace: API names are the profiler's (cudaLaunchKernel), \
                 without return values; no OS runtime or unified-memory data"
                    .into(),
            );
        }
        Source::Nvprof => {
            data.notes.push(
                "nvprof database: NVTX start/end markers are reported as push/pop-style ranges \
                 of their starting thread; kernel names are demangled by rprof (:base: rprof's short \
                 names); no OS runtime \
                 or unified-memory data"
                    .into(),
            );
        }
        Source::Nsys => {}
    }
    if !nvtx.is_empty() || trace.source == Source::Nvprof {
        data.nvtx = Some(nvtx);
        data.nvtx_threads = threads.into_list();
    }
    data
}

fn copy_label(c: crate::model::CopyKind) -> &'static str {
    use crate::model::CopyKind as C;
    match c {
        C::HtoD => "HtoD",
        C::DtoH => "DtoH",
        C::DtoD => "DtoD",
        C::HtoH => "HtoH",
        C::PtoP => "PtoP",
        C::HtoA => "HtoA",
        C::AtoH => "AtoH",
        C::AtoA => "AtoA",
        C::AtoD => "AtoD",
        C::DtoA => "DtoA",
        C::Other => "Unknown",
    }
}

fn mem_kind_label(k: MemoryKind) -> &'static str {
    match k {
        MemoryKind::Unknown => "Unknown",
        MemoryKind::Pageable => "Pageable",
        MemoryKind::Pinned => "Pinned",
        MemoryKind::Device => "Device",
        MemoryKind::Array => "Array",
        MemoryKind::Managed => "Managed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// [`Launches::encloses`] against a search of every call: calls and
        /// ranges on a few threads (some of them without calls), times
        /// from a small span so that they tie and touch, inverted calls
        /// and ranges.
        #[test]
        fn launches_find_what_a_search_of_every_call_finds(
            calls in proptest::collection::vec((0u64..3, 0u64..2, -20i64..20, -20i64..20), 0..40),
            ranges in proptest::collection::vec((0u64..4, 0u64..2, -25i64..25, -25i64..25), 1..40),
        ) {
            let l = Launches::of(calls.clone());
            for &(pid, tid, start, end) in &ranges {
                let g = ((pid << 24) | tid) as i64;
                let want = calls
                    .iter()
                    .any(|c| (c.0, c.1) == (pid, tid) && c.2 >= start && c.3 <= end);
                proptest::prop_assert_eq!(l.encloses(l.thread(g), start, end), want);
            }
        }
    }

    /// An NVTX table of `n` rows with every kind the reader tells apart:
    /// push/pop and start/end ranges with inline texts and registered
    /// ones, NULL starts and ends, ranges ended on another thread, and the
    /// same domain created again at earlier, equal and later times (so
    /// that which creation wins depends on every chunk).
    fn nvtx_table(path: &Path, n: i64) {
        let c = rusqlite::Connection::open(path).unwrap();
        c.execute_batch(
            "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
             INSERT INTO StringIds VALUES (1, 'registered'), (2, 'other');
             CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER,
               globalTid INTEGER, endGlobalTid INTEGER, domainId INTEGER,
               textId INTEGER, text TEXT);",
        )
        .unwrap();
        let tid = |t: i64| (7i64 << 24) | t;
        let mut st = c
            .prepare("INSERT INTO NVTX_EVENTS VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
            .unwrap();
        for i in 0..n {
            // a small deterministic mix (no generator crate needed)
            let k = (i * 7919) % 23;
            let start = (k != 5).then_some(1000 + (i * 37) % 5000);
            let end = (k != 6).then(|| 6000 + (i * 53) % 4000);
            let ty = match k % 5 {
                0 | 1 => 59,
                2 => 60,
                3 => 70,
                _ if i % 2 == 0 => 75,
                _ => 71,
            };
            let (text_id, text) = match k % 3 {
                0 => (Some(1 + i % 2), None),
                1 => (None, Some(format!("r{}", i % 11))),
                _ => (None, Some(format!("dom{}", i % 3))),
            };
            let domain = i % 3;
            let start = if ty == 75 {
                Some(100 + (i * 13) % 7)
            } else {
                start
            };
            st.execute(rusqlite::params![
                start,
                end,
                ty,
                tid(i % 2),
                (k == 7).then(|| tid(9)),
                domain,
                text_id,
                text,
            ])
            .unwrap();
        }
    }

    /// The table as `read_nvtx` reads it: `None`, in one piece by one
    /// reader; `Some(n)`, in chunks of `n` rowids by two readers.
    fn read(path: &Path, chunks: Option<i64>) -> String {
        let db = Db::open(path).unwrap();
        let mut data = StatsData::new(Source::Nsys);
        let strings = FileStrings::load(&db, &mut data).unwrap();
        let (helper, chunk) = match chunks {
            None => (Helper::Now(i64::MAX), i64::MAX),
            Some(n) => (Helper::Now(1), n),
        };
        read_nvtx(&db, &strings, &mut data, helper, chunk, None).unwrap();
        assert!(data.nvtx.as_ref().is_some_and(|r| !r.is_empty()));
        format!("{data:?}")
    }

    /// The table read in chunks by two readers gives the data one reader
    /// gives in one piece: the same rows in the same order, the same name
    /// ids, domains, maxima and counts of dropped rows, whatever the
    /// chunks' size and whichever reader gets which chunk.
    #[test]
    fn chunks_read_as_one() {
        let dir = tempfile::tempdir().unwrap();
        for n in [2i64, 3, 10, 101, 400] {
            let path = dir.path().join(format!("nvtx{n}.sqlite"));
            nvtx_table(&path, n);
            let whole = read(&path, None);
            for chunk in [1, 2, 3, 7, n - 1, n, n + 1] {
                assert_eq!(
                    read(&path, Some(chunk)),
                    whole,
                    "{n} rows, chunks of {chunk}"
                );
            }
        }
        // rowids at both ends of 64 bits (a hostile file): in chunks, in
        // order, without overflow
        let path = dir.path().join("extremes.sqlite");
        nvtx_table(&path, 5);
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "UPDATE NVTX_EVENTS SET rowid = -9223372036854775807 WHERE rowid = 1;
             UPDATE NVTX_EVENTS SET rowid = 9223372036854775807 WHERE rowid = 5;",
        )
        .unwrap();
        drop(c);
        let whole = read(&path, None);
        assert_eq!(read(&path, Some(1)), whole, "extreme rowids");
        assert_eq!(
            read(&path, Some(i64::MAX)),
            whole,
            "extreme rowids, wide chunks"
        );
    }
}
