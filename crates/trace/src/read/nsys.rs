//! Nsight Systems SQLite exports (2020.4 – 2026.x).
//!
//! The CUPTI tables nsys shares with nvprof (copies, sets, synchronisation
//! records) are read in [`super::cupti`].
//!
//! Five bulk queries: `StringIds`, the kernel table, the launch calls
//! (`CUPTI_ACTIVITY_KIND_RUNTIME`, runtime and driver API alike), NVTX
//! ranges, and the GPU tables. Kernels join their launch on (process,
//! correlation id) in memory; NVTX ranges are kept only for threads that
//! launched a kernel.

use crate::{FastMap as HashMap, FastSet as HashSet};

use crate::attribute::{CoverHints, LaunchCover, kernel_launches};
use crate::error::{Error, Result};
use crate::model::stock::parse_head;
use crate::model::{
    ApiCall, ApiKind, DeviceInfo, Kernel, Launch, MemDevice, MemEvent, MemOp, Range, ReadStats,
    Source, Trace, narrow,
};
use crate::model::{OptU32, SharedTexts, StrPool, StrRef};
use crate::read::ReadOptions;
use crate::read::cupti::{collect_rows, int_at, read_memop_tables, read_syncs};
use crate::read::join::JoinIndex;
use crate::read::sql::{Db, RawQuery};
use rprof_model::ClockOrigin;

const PID_MASK: u64 = !0xFF_FFFF;

/// nsys `eventType` values (ENUM_NSYS_EVENT_TYPE; identical in every export).
const NVTX_PUSHPOP: i64 = 59;
const NVTX_STARTEND: i64 = 60;
const NVTXT_PUSHPOP: i64 = 70;
const NVTXT_STARTEND: i64 = 71;
const NVTX_DOMAIN_CREATE: i64 = 75;

pub fn read(db: &Db, opts: ReadOptions) -> Result<Trace> {
    // NVTX_EVENTS is usually the largest table: read it on a second
    // connection while this one reads strings, kernels and launches.
    let nvtx_table = if opts.no_ranges {
        None
    } else {
        db.resolve("NVTX_EVENTS")
    };
    // every API call is wanted: the API table is read on a third
    // connection while this one reads the kernels (the calls are joined to
    // them afterwards); when only the blocking calls are kept, only while
    // the rows read ahead take at most READ_AHEAD_BYTES, as they are all
    // held at once (a quarter of a gigabyte at 3 M kernels), where reading
    // them after the kernels keeps only the calls wanted
    let runtime_table = db
        .resolve("CUPTI_ACTIVITY_KIND_RUNTIME")
        .filter(|_| opts.api_calls)
        .filter(|t| {
            !opts.blocking_calls_only
                || row_count_hint(db, t).saturating_mul(std::mem::size_of::<RuntimeRow>())
                    <= READ_AHEAD_BYTES
        });
    let path = db.path.clone();
    // ranges kept only where they enclose a launch: the NVTX table is read
    // once the launches are known
    let beside = !opts.enclosing_ranges_only;
    std::thread::scope(|scope| {
        let path = &path;
        let nvtx = nvtx_table
            .as_deref()
            .filter(|_| beside)
            .map(|t| scope.spawn(move || read_nvtx_split(path, t, opts, None)));
        let ahead = runtime_table
            .as_deref()
            .map(|t| scope.spawn(move || read_runtime_rows(path, t)));
        // nothing else reads beside the API table: a large one is read in
        // halves
        let split = (!(beside && nvtx_table.is_some())).then_some(RUNTIME_SPLIT_ROWS);
        let main = read_main(db, opts, ahead, split);
        let nvtx = match nvtx {
            Some(h) => Some(h.join().map_err(|_| Error::Sqlite {
                path: db.path.clone(),
                what: "reading NVTX_EVENTS".into(),
                source: rusqlite::Error::InvalidQuery,
            })??),
            None => None,
        };
        let (mut trace, unread_end) = main?;
        let nvtx = match (nvtx, nvtx_table.as_deref()) {
            (None, Some(t)) if !beside => {
                // (the callers build records of kernels alone: a range
                // that encloses only calls that launched copies or sets
                // is kept by none of their lists)
                let wanted = kernel_launches(&trace);
                let cover = LaunchCover::of(&trace.launches, wanted.as_deref());
                drop(wanted);
                Some(read_nvtx_split(path, t, opts, Some(&cover))?)
            }
            (nvtx, _) => nvtx,
        };
        if let Some(raw) = nvtx {
            let capture_end = capture_end(db, &trace.kernels, &trace.launches).max(unread_end);
            merge_nvtx(raw, &mut trace, capture_end, opts.all_ranges);
        }
        Ok(trace)
    })
}

/// The most memory the API rows read ahead may take when only the
/// blocking calls are kept ([`ReadOptions::blocking_calls_only`]): below
/// it, reading them beside the kernels saves time (a tenth of `idle`'s at
/// 1 M kernels, whose 1.9 M rows take 90 MB); above it, reading them after
/// the kernels saves their memory at the read's peak.
const READ_AHEAD_BYTES: usize = 128 << 20;

/// The rows of the API table, when another thread reads them.
type ReadAhead<'s> = std::thread::ScopedJoinHandle<'s, Result<(Vec<RuntimeRow>, bool)>>;

/// Everything but NVTX; the API table's rows from `ahead` when given,
/// else read in halves from `split` rows on ([`runtime_rows_halves`]).
/// With it, the latest end of the kernels counted but not kept
/// (`no_kernels`; `i64::MIN` if none), which the end of capture includes.
fn read_main(
    db: &Db,
    opts: ReadOptions,
    ahead: Option<ReadAhead<'_>>,
    split: Option<usize>,
) -> Result<(Trace, i64)> {
    let mut strings = StrPool::new();
    let mut notes = Vec::new();
    let mut missing = Vec::new();
    let mut stats = ReadStats::default();

    let rows = read_string_ids(db)?;
    strings.load_file_strings(rows);

    let producer = producer(db);
    // `no_kernels`: each kernel's join key in place of the kernel
    let mut unread: Vec<(u64, i64)> = Vec::new();
    let mut unread_end = i64::MIN;
    let mut kernels = match db.resolve("CUPTI_ACTIVITY_KIND_KERNEL") {
        Some(t) if opts.no_kernels => {
            (unread, unread_end) = count_kernels(db, &t, &mut stats)?;
            stats.kernels_unread = unread.len() as u64;
            Vec::new()
        }
        // (in halves: when the NVTX halves are read beside it they end
        // first, and the kernels' second half keeps the other core busy
        // while this thread reads on)
        Some(t) => read_kernels(db, &t, &mut strings, &mut stats, Some(KERNEL_SPLIT_ROWS))?,
        None => {
            notes.push(
                "no kernel table (CUPTI_ACTIVITY_KIND_KERNEL): the capture traced no CUDA kernels"
                    .into(),
            );
            Vec::new()
        }
    };
    if db.resolve("CUPTI_ACTIVITY_KIND_GRAPH_TRACE").is_some() {
        notes.push("CUDA graphs were traced at graph level: kernels inside graphs have no rows of their own".into());
    }
    let mut memops = if opts.memops {
        read_memops(db, &mut strings, &mut notes)?
    } else {
        Vec::new()
    };
    let mut api_calls = Vec::new();
    let mut launch_calls_apart = false;
    let launches = match db.resolve("CUPTI_ACTIVITY_KIND_RUNTIME") {
        // the caller asked about the kernels alone
        Some(_) if opts.no_launches && !opts.api_calls => Vec::new(),
        Some(t) => {
            let all = opts.api_calls.then_some(AllCalls {
                calls: &mut api_calls,
                blocking_only: opts.blocking_calls_only,
                dropped: &mut stats.api_calls_dropped,
                launches_apart: &mut launch_calls_apart,
            });
            let ahead = match ahead {
                Some(h) => Some(h.join().map_err(|_| Error::Sqlite {
                    path: db.path.clone(),
                    what: format!("reading table {t}"),
                    source: rusqlite::Error::InvalidQuery,
                })??),
                None => None,
            };
            let side = if opts.no_kernels {
                KernelSide::Keys(&unread)
            } else {
                KernelSide::Kernels(&mut kernels)
            };
            let joined: &mut [(MemOp, u64)] = if opts.memops_unlaunched {
                &mut []
            } else {
                &mut memops
            };
            let (launches, unlaunched) =
                read_launches(db, &t, side, joined, &mut strings, all, ahead, split)?;
            stats.without_launch = unlaunched;
            launches
        }
        None => {
            // none is joined (counted unless the caller asked for no join)
            if !opts.no_launches || opts.api_calls {
                stats.without_launch = kernels.len() as u64 + stats.kernels_unread;
            }
            if opts.api_calls {
                missing.push("CUDA API calls: no CUPTI_ACTIVITY_KIND_RUNTIME table".to_owned());
            }
            if !kernels.is_empty() || stats.kernels_unread > 0 {
                notes.push("no CUDA API table (CUPTI_ACTIVITY_KIND_RUNTIME): kernels cannot be tied to threads or NVTX ranges".into());
            }
            Vec::new()
        }
    };
    drop(unread);
    let any_kernels = !kernels.is_empty() || stats.kernels_unread > 0;
    let devices = read_devices(db, any_kernels, &mut notes)?;
    let mem_events = if opts.mem_events {
        match db.resolve("CUDA_GPU_MEMORY_USAGE_EVENTS") {
            Some(t) => read_mem_events(db, &t, &mut stats)?,
            None => {
                missing.push(
                    "memory events: not captured (nsys profile --cuda-memory-usage=true records them)"
                        .to_owned(),
                );
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let mem_pools = match db.resolve("CUDA_GPU_MEMORY_POOL_EVENTS") {
        Some(t) if opts.mem_events => {
            let (pools, skipped) = read_mem_pools(db, &t)?;
            if skipped > 0 {
                notes.push(format!(
                    "{skipped} rows of {t} without a time or an operation were skipped"
                ));
            }
            pools
        }
        _ => Vec::new(),
    };
    let syncs = if opts.syncs {
        match db.resolve("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") {
            Some(t) => read_syncs(db, &t, &mut notes)?,
            None => {
                missing.push(
                    "synchronisation records: no CUPTI_ACTIVITY_KIND_SYNCHRONIZATION table"
                        .to_owned(),
                );
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let mut trace = Trace::empty(db.path.clone(), Source::Nsys);
    trace.producer = producer;
    trace.strings = strings;
    trace.kernels = kernels;
    trace.launches = launches;
    trace.api_calls = api_calls;
    trace.launch_calls_apart = launch_calls_apart;
    trace.memops = memops.into_iter().map(|(m, _)| m).collect();
    // the list was made in the rows' allocation, which also held each
    // row's process and the slack of its growth (at 3 M kernels, 54 MB
    // over the copies and sets themselves)
    trace.memops.shrink_to_fit();
    trace.devices = devices;
    trace.mem_events = mem_events;
    trace.mem_pools = mem_pools;
    trace.syncs = syncs;
    trace.clock = clock_origin(db);
    trace.missing = missing;
    trace.stats = stats;
    // (the launch calls held apart count among the calls kept)
    trace.stats.api_calls = trace.api_call_count() as u64;
    trace.notes = notes;
    Ok((trace, unread_end))
}

/// The kernel table scanned for what [`ReadOptions::no_kernels`] keeps:
/// each kernel's join key (process bits, correlation id) as
/// [`read_launches`] takes it from a kernel, in scan order, and the latest
/// end; rows are counted into `stats` as [`scan_kernels`] counts them.
fn count_kernels(db: &Db, table: &str, stats: &mut ReadStats) -> Result<(Vec<(u64, i64)>, i64)> {
    let (list, _) = db.select_list(
        table,
        &["start", "end", "correlationId", "globalPid"],
        &["start", "end"],
    )?;
    let mut keys = with_room(row_count_hint(db, table));
    let mut last_end = i64::MIN;
    let sql = format!("SELECT {list} FROM \"{table}\"");
    let mut run = || -> rusqlite::Result<()> {
        let mut st = db.conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            stats.kernel_rows += 1;
            let (Some(start), Some(end)) = (int_at(r, 0)?, int_at(r, 1)?) else {
                stats.skipped_null += 1;
                continue;
            };
            if end <= start {
                stats.non_positive_duration += 1;
            }
            last_end = last_end.max(end);
            let correlation = int_at(r, 2)?.unwrap_or(-1);
            let pid = int_at(r, 3)?.map_or(0, |p| p as u64);
            keys.push((pid & PID_MASK, correlation));
        }
        Ok(())
    };
    run().map_err(|e| db.err(format!("reading table {table}"), e))?;
    Ok((keys, last_end))
}

/// The kernels [`read_launches`] joins: the kernels themselves, whose
/// `launch` it sets, or only their keys ([`count_kernels`]).
enum KernelSide<'a> {
    Kernels(&'a mut [Kernel]),
    Keys(&'a [(u64, i64)]),
}

/// Wall-clock time of the session start: `utcEpochNs`, which is the
/// absolute time of the file's time 0 (event times are offsets from it).
fn clock_origin(db: &Db) -> Option<ClockOrigin> {
    if !db.has_table("TARGET_INFO_SESSION_START_TIME") {
        return None;
    }
    let ns = db.scalar_i64("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")?;
    Some(ClockOrigin {
        epoch_ns: ns,
        method: "nsys session start (TARGET_INFO_SESSION_START_TIME.utcEpochNs)",
    })
}

/// `CUDA_GPU_MEMORY_USAGE_EVENTS` (`--cuda-memory-usage=true`): one row per
/// allocation (`memoryOperationType` 0) or release (1) of device memory.
fn read_mem_events(db: &Db, table: &str, stats: &mut ReadStats) -> Result<Vec<MemEvent>> {
    let (list, _) = db.select_list(
        table,
        &[
            "start",
            "globalPid",
            "deviceId",
            "address",
            "bytes",
            "memoryOperationType",
            "correlationId",
        ],
        &["start", "bytes"],
    )?;
    let sql = format!("SELECT {list} FROM \"{table}\" ORDER BY start, rowid");
    let (out, skipped) = collect_rows(db, &sql, table, |r| {
        let int = |i: usize| int_at(r, i);
        let (Some(ts), Some(bytes)) = (int(0)?, int(4)?) else {
            return Ok(None);
        };
        let sign = match int(5)? {
            Some(0) => 1,
            Some(1) => -1,
            _ => return Ok(None),
        };
        Ok(Some(MemEvent {
            ts_ns: ts,
            device_type: MemDevice::Cuda,
            device: int(2)?.unwrap_or(0),
            thread: None,
            pid: int(1)?.map(|g| crate::model::nsys_pid(g as u64)),
            addr: int(3)?.map(|a| a as u64),
            bytes: sign * bytes.abs(),
            total_allocated: None,
            total_reserved: None,
            correlation: int(6)?,
        }))
    })?;
    stats.mem_events_skipped += skipped;
    stats.mem_events = out.len() as u64;
    Ok(out)
}

/// `CUDA_GPU_MEMORY_POOL_EVENTS` rows (rprof_model::MemPoolEvent); rows
/// without a time or an operation are skipped.
fn read_mem_pools(db: &Db, table: &str) -> Result<(Vec<rprof_model::MemPoolEvent>, u64)> {
    use rprof_model::{MemPoolEvent, PoolOp};
    let (list, _) = db.select_list(
        table,
        &[
            "start",
            "globalPid",
            "deviceId",
            "address",
            "operationType",
            "poolType",
            "correlationId",
            "minBytesToKeep",
            "localMemoryPoolReleaseThreshold",
            "localMemoryPoolSize",
            "localMemoryPoolUtilizedSize",
        ],
        &["start", "operationType"],
    )?;
    let sql = format!("SELECT {list} FROM \"{table}\" ORDER BY start, rowid");
    collect_rows(db, &sql, table, |r| {
        let int = |i: usize| int_at(r, i);
        let (Some(ts), Some(op)) = (int(0)?, int(4)?) else {
            return Ok(None);
        };
        Ok(Some(MemPoolEvent {
            ts_ns: ts,
            pid: int(1)?.map(|g| crate::model::nsys_pid(g as u64)),
            device: int(2)?.unwrap_or(0),
            addr: int(3)?.map(|a| a as u64),
            op: PoolOp::from_code(op),
            pool_type: int(5)?,
            correlation: int(6)?,
            min_bytes_to_keep: int(7)?,
            release_threshold: int(8)?,
            size: int(9)?,
            utilized: int(10)?,
        }))
    })
}

fn read_string_ids(db: &Db) -> Result<Vec<(i64, String)>> {
    let run = || -> rusqlite::Result<Vec<(i64, String)>> {
        let mut rows = RawQuery::new(&db.conn, "SELECT id, value FROM StringIds")?;
        // a mistyped cell is a missing string, as other columns are read
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            if let (Some(id), Some(v)) = (r.int(0), r.text(1)) {
                out.push((id, v.into_owned()));
            }
        }
        Ok(out)
    };
    run().map_err(|e| db.err("reading table StringIds", e))
}

fn producer(db: &Db) -> Option<String> {
    let table = ["META_DATA_EXPORT", "EXPORT_META_DATA"]
        .into_iter()
        .find(|t| db.has_table(t))?;
    let get = |key: &str| -> Option<String> {
        db.conn
            .query_row(
                &format!("SELECT value FROM {table} WHERE name = ?1"),
                [key],
                |r| r.get::<_, Option<String>>(0),
            )
            .ok()
            .flatten()
    };
    let version = get("EXPORT_PRODUCT_VERSION")?;
    Some(match get("EXPORT_SCHEMA_VERSION") {
        Some(schema) => format!("nsys {version}, schema {schema}"),
        None => format!("nsys {version}"),
    })
}

const KERNEL_COLS: &[&str] = &[
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "correlationId",
    "globalPid",
    "demangledName",
    "shortName",
    "mangledName",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory",
    "graphId",
    "graphNodeId",
];

fn read_kernels(
    db: &Db,
    table: &str,
    strings: &mut StrPool,
    stats: &mut ReadStats,
    split_from: Option<usize>,
) -> Result<Vec<Kernel>> {
    let (list, _) = db.select_list(table, KERNEL_COLS, &["start", "end"])?;
    let hint = row_count_hint(db, table);
    let unknown = strings.push("<unknown kernel>");
    let strings: &StrPool = strings;
    let sql = format!("SELECT {list} FROM \"{table}\"");
    if split_from.is_none_or(|n| hint < n.max(2)) {
        let (kernels, _) = scan_kernels(db, table, &sql, strings, unknown, hint, stats)?;
        return Ok(kernels);
    }
    // two halves by rowid, the second on a connection of its own (the
    // read is most of the time of the questions about kernels alone, and
    // it stepped one connection while the other core waited); the halves
    // joined in rowid order are the one scan's rows
    let mid = i64::try_from(hint / 2).unwrap_or(i64::MAX);
    let first = format!("{sql} WHERE rowid <= {mid}");
    let second = format!("{sql} WHERE rowid > {mid}");
    let path = db.path.clone();
    let (a, b) = std::thread::scope(|sc| {
        let b = sc.spawn(move || -> Result<(Vec<Kernel>, ReadStats)> {
            let db2 = Db::open(&path)?;
            let mut st = ReadStats::default();
            let (k, _) = scan_kernels(&db2, table, &second, strings, unknown, hint / 2, &mut st)?;
            Ok((k, st))
        });
        // (room for both halves: the second's rows are appended in place)
        let a = scan_kernels(db, table, &first, strings, unknown, hint, stats);
        (a, b.join())
    });
    // errors in the order one scan meets them
    let (mut kernels, rows_before) = a?;
    let (tail, st) = b.map_err(|_| {
        db.err(
            format!("reading table {table}"),
            rusqlite::Error::InvalidQuery,
        )
    })??;
    stats.kernel_rows += st.kernel_rows;
    stats.skipped_null += st.skipped_null;
    stats.non_positive_duration += st.non_positive_duration;
    // (row numbers past u32 wrap as they do in one scan)
    let off = rows_before as u32;
    kernels.extend(tail.into_iter().map(|mut k| {
        k.row = k.row.wrapping_add(off);
        k
    }));
    Ok(kernels)
}

/// Kernel tables of at least this many rows (by rowid) are read in two
/// halves (see [`read_kernels`]).
const KERNEL_SPLIT_ROWS: usize = 1 << 18;

/// The kernels of the rows `sql` selects, `row` numbered from 0 in scan
/// order; with the number of rows scanned (skipped ones included).
fn scan_kernels(
    db: &Db,
    table: &str,
    sql: &str,
    strings: &StrPool,
    unknown: StrRef,
    capacity: usize,
    stats: &mut ReadStats,
) -> Result<(Vec<Kernel>, u64)> {
    let mut kernels = with_room(capacity);
    let mut row_no = 0u64;
    let mut run = || -> rusqlite::Result<()> {
        let mut rows = RawQuery::new(&db.conn, sql)?;
        while let Some(r) = rows.next()? {
            row_no += 1;
            stats.kernel_rows += 1;
            let int = |i: usize| r.int(i);
            let (Some(start), Some(end)) = (int(0), int(1)) else {
                stats.skipped_null += 1;
                continue;
            };
            if end <= start {
                stats.non_positive_duration += 1;
            }
            let name_of = |i: usize| int(i).and_then(|id| strings.by_file_id(id));
            let mangled = name_of(9);
            let name = name_of(7).or(name_of(8)).or(mangled).unwrap_or(unknown);
            kernels.push(Kernel {
                row: (row_no - 1) as u32,
                start_ns: start,
                end_ns: end,
                device: int(2).unwrap_or(0),
                context: OptU32::saturating(narrow(int(3))),
                stream: int(4).unwrap_or(0),
                correlation: int(5).unwrap_or(-1),
                global_pid_bits: int(6).map_or(crate::model::NO_PID, |p| p as u64),
                name,
                mangled: mangled.into(),
                grid: [
                    narrow(int(10)).unwrap_or(0),
                    narrow(int(11)).unwrap_or(0),
                    narrow(int(12)).unwrap_or(0),
                ],
                block: [
                    narrow(int(13)).unwrap_or(0),
                    narrow(int(14)).unwrap_or(0),
                    narrow(int(15)).unwrap_or(0),
                ],
                registers_per_thread: narrow(int(16)),
                static_smem_bytes: OptU32::saturating(narrow(int(17))),
                dynamic_smem_bytes: OptU32::saturating(narrow(int(18))),
                launch: OptU32::NONE,
                extra: crate::model::KernelExtra::of(narrow(int(19)), int(20), None),
            });
        }
        Ok(())
    };
    run().map_err(|e| db.err(format!("reading table {table}"), e))?;
    Ok((kernels, row_no))
}

/// Rows of `table` as far as its largest rowid tells (instant, unlike
/// `count(*)`), to size vectors once instead of doubling them: at millions
/// of rows the doubling slack is hundreds of megabytes.
pub(crate) fn row_count_hint(db: &Db, table: &str) -> usize {
    db.scalar_i64(&format!("SELECT max(rowid) FROM \"{table}\""))
        .map_or(0, |n| n.clamp(0, 200_000_000) as usize)
}

/// An empty vector with room for `n` items (a [`row_count_hint`]) when
/// the allocator grants it. A file's rowids can claim far more rows than
/// it holds (one row numbered 199,999,999 asked for 33 GB of kernels, and
/// the refused allocation aborted the process); the vector then starts
/// empty and grows as rows come.
pub(crate) fn with_room<T>(n: usize) -> Vec<T> {
    let mut v = Vec::new();
    // refused: `v` stays empty, and pushing grows it
    if v.try_reserve_exact(n).is_err() {
        return Vec::new();
    }
    v
}

/// Strip CUPTI's `_vNNNN` version suffix: `cudaLaunchKernel_v7000` →
/// `cudaLaunchKernel`.
pub(crate) fn api_base_name(name: &str) -> (&str, bool) {
    if let Some(pos) = name.rfind("_v") {
        let digits = &name[pos + 2..];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return (&name[..pos], true);
        }
    }
    (name, false)
}

/// One row of the CUDA API table, as read (what the join needs of it).
/// Packed (48 bytes, not the 64 of three `Option<i64>`): a large capture
/// holds millions of rows at once while the NVTX table is read beside them.
#[derive(Clone, Copy)]
struct RuntimeRow {
    start: i64,
    end: i64,
    gtid: u64,
    corr: i64,
    name_id: i64,
    /// [`TIMED`] and [`NAMED`].
    has: u8,
}

/// [`RuntimeRow::has`]: the row has both a start and an end.
const TIMED: u8 = 1;
/// [`RuntimeRow::has`]: the row has a name id.
const NAMED: u8 = 2;

impl RuntimeRow {
    fn new(
        start: Option<i64>,
        end: Option<i64>,
        gtid: u64,
        corr: i64,
        name_id: Option<i64>,
    ) -> RuntimeRow {
        let times = start.zip(end);
        RuntimeRow {
            start: times.map_or(0, |t| t.0),
            end: times.map_or(0, |t| t.1),
            gtid,
            corr,
            name_id: name_id.unwrap_or(0),
            has: if times.is_some() { TIMED } else { 0 }
                | if name_id.is_some() { NAMED } else { 0 },
        }
    }

    /// Start and end, when the row has both (a call needs both).
    fn times(&self) -> Option<(i64, i64)> {
        (self.has & TIMED != 0).then_some((self.start, self.end))
    }

    fn name_id(&self) -> Option<i64> {
        (self.has & NAMED != 0).then_some(self.name_id)
    }
}

/// The API table's query: its rows of calls (not the CUDA backtrace rows
/// of exports with `eventClass`), and whether it has `eventClass`.
fn runtime_query(db: &Db, table: &str) -> Result<(String, bool)> {
    let (list, present) = db.select_list(
        table,
        &[
            "start",
            "end",
            "globalTid",
            "correlationId",
            "nameId",
            "eventClass",
        ],
        &["start", "end", "globalTid", "correlationId"],
    )?;
    let has_class = present.get(5).copied().unwrap_or(false);
    let filter = if has_class {
        " WHERE eventClass IN (0, 1)"
    } else {
        ""
    };
    Ok((format!("SELECT {list} FROM \"{table}\"{filter}"), has_class))
}

/// Run the API table's query on `db`, handing each row with a thread and
/// a correlation id to `each`.
fn runtime_rows(db: &Db, sql: &str, mut each: impl FnMut(RuntimeRow)) -> rusqlite::Result<()> {
    let mut rows = RawQuery::new(&db.conn, sql)?;
    while let Some(r) = rows.next()? {
        let (Some(corr), Some(gtid)) = (r.int(3), r.int(2)) else {
            continue;
        };
        each(RuntimeRow::new(
            r.int(0),
            r.int(1),
            gtid as u64,
            corr,
            r.int(4),
        ));
    }
    Ok(())
}

/// Rows of the API table (by its largest rowid) from which
/// [`read_launches`] reads it in two halves when nothing else is read
/// beside it.
const RUNTIME_SPLIT_ROWS: usize = 1 << 20;

/// [`runtime_rows`] of the whole table (its query, and whether that has a
/// `WHERE` clause: [`runtime_query`]; `rows`: its largest rowid) in two
/// halves by rowid, the second read on a connection of its own while the
/// first is handed to `each`, then handed over itself: the rows in the
/// order of one scan. (One connection stepped the 5.6 M rows of a 3 M-kernel
/// export for 1.8 s while the other core waited.) The second half is held
/// until then: 48 bytes a row.
fn runtime_rows_halves(
    db: &Db,
    table: &str,
    (sql, filtered): (&str, bool),
    rows: usize,
    mut each: impl FnMut(RuntimeRow),
) -> Result<()> {
    let mid = rows / 2;
    let and = if filtered { "AND" } else { "WHERE" };
    let first = format!("{sql} {and} rowid <= {mid}");
    let second = format!("{sql} {and} rowid > {mid}");
    let path = db.path.clone();
    let (a, b) = std::thread::scope(|sc| {
        let b = sc.spawn(move || -> Result<Vec<RuntimeRow>> {
            let db2 = Db::open(&path)?;
            let mut out = with_room(rows - mid);
            runtime_rows(&db2, &second, |r| out.push(r))
                .map_err(|e| db2.err(format!("reading table {table}"), e))?;
            Ok(out)
        });
        let a = runtime_rows(db, &first, &mut each);
        (a, b.join())
    });
    // errors in the order one scan meets them
    a.map_err(|e| db.err(format!("reading table {table}"), e))?;
    let tail = b.map_err(|_| {
        db.err(
            format!("reading table {table}"),
            rusqlite::Error::InvalidQuery,
        )
    })??;
    tail.into_iter().for_each(each);
    Ok(())
}

/// Every row of the API table, read on a connection of its own (while the
/// caller's reads the kernels): for the readers that keep every call.
fn read_runtime_rows(path: &std::path::Path, table: &str) -> Result<(Vec<RuntimeRow>, bool)> {
    let db = Db::open(path)?;
    let (sql, has_class) = runtime_query(&db, table)?;
    // sized once by the largest rowid: doubling would leave up to half
    // of a vector of millions of rows unused (and hold both copies while
    // it moves)
    let mut out = with_room(row_count_hint(&db, table));
    runtime_rows(&db, &sql, |r| out.push(r))
        .map_err(|e| db.err(format!("reading table {table}"), e))?;
    Ok((out, has_class))
}

/// Where [`read_launches`] puts the API calls it reads.
struct AllCalls<'a> {
    /// The calls (with a start and an end).
    calls: &'a mut Vec<ApiCall>,
    /// Keep only those that block the host ([`ApiKind::blocks_host`]).
    blocking_only: bool,
    /// Counts the others then.
    dropped: &'a mut u64,
    /// Set when the launch calls were left out of `calls` (they are in
    /// the launches: `Trace::launch_calls_apart`).
    launches_apart: &'a mut bool,
}

/// The launch calls of `kernels` and `memops` (whose `launch` is set),
/// and how many of the kernels have none. The API table's rows are
/// `read_ahead`, or read here: in halves from `split` rows on.
#[allow(clippy::too_many_arguments)] // (the reader's state, passed down)
fn read_launches(
    db: &Db,
    table: &str,
    mut kernels: KernelSide<'_>,
    memops: &mut [(MemOp, u64)],
    strings: &mut StrPool,
    all: Option<AllCalls<'_>>,
    read_ahead: Option<(Vec<RuntimeRow>, bool)>,
    split: Option<usize>,
) -> Result<(Vec<Launch>, u64)> {
    // (process bits, correlation id) → launch slot, in the order of each
    // key's first kernel (then copy or set)
    let memop_keys = memops
        .iter()
        .map(|(m, pid)| (pid & PID_MASK, m.correlation));
    let mut want = match &kernels {
        KernelSide::Kernels(ks) => JoinIndex::new(
            ks.iter()
                .map(|k| (k.global_pid().unwrap_or(0) & PID_MASK, k.correlation))
                .chain(memop_keys),
        ),
        KernelSide::Keys(keys) => JoinIndex::new(keys.iter().copied().chain(memop_keys)),
    };
    // one slot per wanted launch; `start_ns == i64::MIN` marks an empty one
    const EMPTY: i64 = i64::MIN;
    let mut slots: Vec<Launch> = vec![
        Launch {
            start_ns: EMPTY,
            end_ns: 0,
            thread: 0,
            correlation: 0,
            api: None,
        };
        want.slots
    ];
    let mut versioned_slot = vec![false; want.slots];
    let mut api_names: HashMap<i64, (StrRef, bool, ApiKind)> = HashMap::default();
    // a call that launched a wanted kernel, copy or set fills its slot
    // (the slot the row now fills, if it does)
    let mut fill = |slot: Option<u32>, row: &RuntimeRow, api: Option<StrRef>, versioned: bool| {
        let (Some(slot), Some((start, end))) = (slot, row.times()) else {
            return None;
        };
        let launch = Launch {
            start_ns: start,
            end_ns: end,
            thread: row.gtid,
            correlation: row.corr,
            api,
        };
        // Without eventClass (≤ 2020.x) CUDA backtrace rows duplicate a
        // call with the unversioned name: prefer the `_vNNNN` row.
        let i = slot as usize;
        if slots[i].start_ns == EMPTY || (!versioned_slot[i] && versioned) {
            slots[i] = launch;
            versioned_slot[i] = versioned;
            return Some(i);
        }
        None
    };
    match (read_ahead, all) {
        // every call is wanted and its rows are in memory: the names are
        // interned first (in row order, as below), the launch slots filled,
        // then the rows turned into the list of calls and sorted
        (Some((rows, has_class)), Some(all)) => {
            let mut unnamed: Option<(StrRef, ApiKind)> = None;
            let mut last = None;
            for r in &rows {
                let named = match r.name_id() {
                    // consecutive rows often call the same function
                    Some(id) if last == Some(id) => true,
                    Some(id) => {
                        let named = api_name_of(id, &mut api_names, strings).0.is_some();
                        last = named.then_some(id);
                        named
                    }
                    None => false,
                };
                if !named && unnamed.is_none() && r.times().is_some() {
                    let n = strings.push("<unknown API>");
                    unnamed = Some((n, ApiKind::classify(strings.get(n))));
                }
            }
            let names = &api_names;
            // the row that fills each slot, where the launch calls are kept
            // once (in the launches) rather than also as calls: with
            // `eventClass` (no backtrace duplicates to fold first), every
            // call kept (not only the blocking ones)
            let apart = has_class && !all.blocking_only;
            let mut filler = vec![u32::MAX; if apart { want.slots } else { 0 }];
            for (i, r) in rows.iter().enumerate() {
                let slot = want.get(r.gtid & PID_MASK, r.corr);
                let filled = match r.name_id().and_then(|id| names.get(&id)) {
                    Some(&(api, versioned, _)) => fill(slot, r, Some(api), versioned),
                    None => fill(slot, r, None, false),
                };
                if let (Some(f), true) = (filled, apart) {
                    filler[f] = i as u32;
                }
            }
            // the rows of the named launches: each is the call its launch
            // stands for (the same start, end, thread, correlation id and
            // name, and the kind the name gives)
            let mut launch_rows = vec![false; if apart { rows.len() } else { 0 }];
            for (&row, l) in filler.iter().zip(&slots) {
                if l.start_ns != EMPTY
                    && l.api.is_some()
                    && let Some(flag) = launch_rows.get_mut(row as usize)
                {
                    *flag = true;
                }
            }
            drop(filler);
            // then the rows become the calls in their own memory (made on a
            // second thread beside the loop above, the calls were a second
            // list of millions beside the rows, at the read's peak)
            let (calls, dropped) = every_call(
                rows,
                names,
                unnamed,
                has_class,
                all.blocking_only,
                &launch_rows,
            );
            *all.calls = calls;
            *all.dropped += dropped;
            *all.launches_apart = apart;
        }
        (ahead, mut all) => {
            let (ahead, query, has_class) = match ahead {
                Some((rows, has_class)) => (Some(rows), None, has_class),
                None => {
                    let (sql, has_class) = runtime_query(db, table)?;
                    (None, Some(sql), has_class)
                }
            };
            // every call, for the timeline views; versioned flag for
            // de-duplicating backtrace rows of exports without eventClass
            let mut versioned_all: Vec<bool> = Vec::new();
            let mut unnamed: Option<(StrRef, ApiKind)> = None;
            let mut join = |row: RuntimeRow| {
                let slot = want.get(row.gtid & PID_MASK, row.corr);
                if slot.is_none() && all.is_none() {
                    return;
                }
                // the call's name, once per row (and its kind, once per name)
                let (api, versioned, kind) = match row.name_id() {
                    Some(id) => api_name_of(id, &mut api_names, strings),
                    None => (None, false, None),
                };
                if let Some(all) = all.as_mut()
                    && let Some((start, end)) = row.times()
                {
                    let (name, kind) = match (api, kind) {
                        (Some(n), Some(k)) => (n, k),
                        _ => *unnamed.get_or_insert_with(|| {
                            let n = strings.push("<unknown API>");
                            (n, ApiKind::classify(strings.get(n)))
                        }),
                    };
                    // (dropped as read only where no de-duplication
                    // follows, which must see every row)
                    if all.blocking_only && has_class && !kind.blocks_host() {
                        *all.dropped += 1;
                        fill(slot, &row, api, versioned);
                        return;
                    }
                    all.calls.push(ApiCall {
                        start_ns: start,
                        end_ns: end,
                        thread: row.gtid,
                        correlation: row.corr,
                        name,
                        kind,
                    });
                    versioned_all.push(versioned);
                }
                fill(slot, &row, api, versioned);
            };
            if let Some(rows) = ahead {
                rows.into_iter().for_each(&mut join);
            }
            if let Some(sql) = query {
                let rows = row_count_hint(db, table);
                if split.is_some_and(|from| rows >= from.max(2)) {
                    runtime_rows_halves(db, table, (&sql, has_class), rows, &mut join)?;
                } else {
                    runtime_rows(db, &sql, &mut join)
                        .map_err(|e| db.err(format!("reading table {table}"), e))?;
                }
            }
            if let Some(all) = all {
                if !has_class {
                    dedupe_backtrace_rows(all.calls, &versioned_all);
                    if all.blocking_only {
                        *all.dropped += ApiCall::keep_blocking(all.calls);
                    }
                }
                sort_calls(all.calls);
            }
        }
    }

    // compact in place: slot i becomes launch index[i]
    let mut index = vec![u32::MAX; slots.len()];
    let mut n = 0u32;
    for (i, l) in slots.iter().enumerate() {
        if l.start_ns != EMPTY {
            index[i] = n;
            n += 1;
        }
    }
    drop(versioned_slot);
    let mut launches = slots;
    launches.retain(|l| l.start_ns != EMPTY);
    let find = |item: usize| -> Option<u32> {
        let li = index[*want.slot_of.get(item)? as usize];
        (li != u32::MAX).then_some(li)
    };
    let (n, unlaunched) = match &mut kernels {
        KernelSide::Kernels(ks) => {
            let mut none = 0u64;
            for (i, k) in ks.iter_mut().enumerate() {
                k.launch = OptU32::saturating(find(i));
                none += u64::from(k.launch.get().is_none());
            }
            (ks.len(), none)
        }
        KernelSide::Keys(keys) => (
            keys.len(),
            (0..keys.len()).filter(|&i| find(i).is_none()).count() as u64,
        ),
    };
    for (i, (m, _)) in memops.iter_mut().enumerate() {
        m.launch = find(n + i);
    }
    Ok((launches, unlaunched))
}

/// The base name of API function `id` and whether it had a `_vNNNN` suffix,
/// interned once per id.
fn api_name_of(
    id: i64,
    cache: &mut HashMap<i64, (StrRef, bool, ApiKind)>,
    strings: &mut StrPool,
) -> (Option<StrRef>, bool, Option<ApiKind>) {
    if let Some(&(s, v, k)) = cache.get(&id) {
        return (Some(s), v, Some(k));
    }
    let Some(raw) = strings.by_file_id(id).map(|s| strings.get(s).to_owned()) else {
        return (None, false, None);
    };
    let (base, v) = api_base_name(&raw);
    let s = strings.push(base);
    let k = ApiKind::classify(strings.get(s));
    cache.insert(id, (s, v, k));
    (Some(s), v, Some(k))
}

/// Every call of `rows` with a start and an end, named from `names` (the
/// interned name of each function id) or `unnamed`, in the order of
/// [`sort_calls`], backtrace duplicates removed when the export has no
/// `eventClass`; of those, when `blocking_only`, the ones that block the
/// host, and how many did not. The rows flagged in `launch_rows` (the
/// launch calls, kept in the launches) are left out.
fn every_call(
    rows: Vec<RuntimeRow>,
    names: &HashMap<i64, (StrRef, bool, ApiKind)>,
    unnamed: Option<(StrRef, ApiKind)>,
    has_class: bool,
    blocking_only: bool,
    launch_rows: &[bool],
) -> (Vec<ApiCall>, u64) {
    let mut dropped = 0u64;
    let mut versioned_all = Vec::with_capacity(if has_class { 0 } else { rows.len() });
    // collected in the rows' own allocation (a call is smaller than a
    // row), then shrunk to the calls
    let mut all: Vec<ApiCall> = rows
        .into_iter()
        .enumerate()
        .filter_map(|(i, r)| {
            if launch_rows.get(i).copied().unwrap_or(false) {
                return None;
            }
            let (start, end) = r.times()?;
            let (name, kind, versioned) = match r.name_id().and_then(|id| names.get(&id)) {
                Some(&(name, versioned, kind)) => (name, kind, versioned),
                // interned by the caller whenever such a row exists
                None => {
                    let (name, kind) = unnamed?;
                    (name, kind, false)
                }
            };
            // (dropped as read only where no de-duplication follows)
            if has_class && blocking_only && !kind.blocks_host() {
                dropped += 1;
                return None;
            }
            if !has_class {
                versioned_all.push(versioned);
            }
            Some(ApiCall {
                start_ns: start,
                end_ns: end,
                thread: r.gtid,
                correlation: r.corr,
                name,
                kind,
            })
        })
        .collect();
    all.shrink_to_fit();
    if !has_class {
        dedupe_backtrace_rows(&mut all, &versioned_all);
        if blocking_only {
            dropped += ApiCall::keep_blocking(&mut all);
        }
    }
    sort_calls(&mut all);
    (all, dropped)
}

/// The order of `Trace::api_calls`: by start, thread, correlation id, then
/// end, name and kind, so that only calls equal in every field tie (and
/// such calls cannot be told apart): the order does not depend on the
/// number of threads. An unstable sort in place: a stable one kept a
/// scratch copy of the list (75 MB at 1 M kernels) beside the rest of the
/// read, and calls equal in the first three keys (never seen in a real
/// capture) were left in table order, which nothing relies on.
fn sort_calls(all: &mut [ApiCall]) {
    use rayon::slice::ParallelSliceMut;
    all.par_sort_unstable_by_key(|c| {
        (
            c.start_ns,
            c.thread,
            c.correlation,
            c.end_ns,
            c.name,
            c.kind,
        )
    });
}

/// Exports without `eventClass` (≤ 2020.x) repeat a call as a CUDA
/// backtrace row with the unversioned name: keep one row per (thread,
/// correlation id), the versioned one when there is one.
fn dedupe_backtrace_rows(all: &mut Vec<ApiCall>, versioned: &[bool]) {
    let mut order: Vec<u32> = (0..all.len() as u32).collect();
    order.sort_by_key(|&i| {
        let c = &all[i as usize];
        (c.thread, c.correlation, !versioned[i as usize], i)
    });
    let mut keep = vec![false; all.len()];
    let mut last: Option<(u64, i64)> = None;
    for i in order {
        let c = &all[i as usize];
        let key = (c.thread, c.correlation);
        if last != Some(key) {
            keep[i as usize] = true;
            last = Some(key);
        }
    }
    let mut i = 0;
    all.retain(|_| {
        let k = keep[i];
        i += 1;
        k
    });
}

/// Memory copies and sets, with the process bits of each row.
fn read_memops(
    db: &Db,
    strings: &mut StrPool,
    notes: &mut Vec<String>,
) -> Result<Vec<(MemOp, u64)>> {
    let tables: Vec<(String, bool)> = [
        ("CUPTI_ACTIVITY_KIND_MEMCPY", true),
        ("CUPTI_ACTIVITY_KIND_MEMSET", false),
    ]
    .into_iter()
    .filter_map(|(t, copy)| Some((db.resolve(t)?, copy)))
    .collect();
    read_memop_tables(db, &tables, strings, false, notes)
}

/// The end of capture, for ranges still open when it stopped.
fn capture_end(db: &Db, kernels: &[Kernel], launches: &[Launch]) -> i64 {
    let analysis = if db.has_table("ANALYSIS_DETAILS") {
        db.scalar_i64("SELECT duration FROM ANALYSIS_DETAILS")
    } else {
        None
    };
    let seen = kernels
        .iter()
        .map(|k| k.end_ns)
        .chain(launches.iter().map(|l| l.end_ns))
        .max()
        .unwrap_or(0);
    analysis.unwrap_or(0).max(seen)
}

/// Where a domain name is before the two connections' results are merged.
#[derive(Clone, Copy)]
enum Text {
    /// In the NVTX reader's own pool.
    Local(StrRef),
    /// A registered string: a `StringIds` id.
    FileId(i64),
}

/// What the NVTX connection read, before merging into the trace.
struct NvtxRaw {
    /// Inline texts; becomes the trace's pool (the other strings are
    /// appended to it, which copies the small side).
    pool: StrPool,
    /// Ranges; `text` is in `pool`, except for those in `pending`.
    ranges: Vec<Range>,
    /// Ranges whose text is a registered string: (range index, StringIds id).
    pending: Vec<(u32, i64)>,
    domains: Vec<((u64, u32), Text)>,
    rows: u64,
    skipped: u64,
    max_end: i64,
    /// The ranges dropped as read for enclosing no launch call that
    /// [`merge_nvtx`] would have kept, to count them as it would.
    dropped: Dropped,
}

/// Ranges [`read_nvtx_raw`] dropped for enclosing no launch call that
/// [`merge_nvtx`] would have counted (on a thread that launched, or any
/// thread with `all_ranges`).
#[derive(Default)]
struct Dropped {
    /// With an inline text: counted as ranges.
    ranges: u64,
    /// Of those, left open.
    open: u64,
    /// With a registered text: (StringIds id, left open), counted as a
    /// range or, if the id is unknown, as skipped.
    registered: Vec<(i64, bool)>,
}

/// Rows of NVTX_EVENTS above which its read is split in two by rowid, each
/// half on a connection of its own.
const NVTX_SPLIT_ROWS: usize = 1 << 20;

/// Read NVTX ranges on connections of their own (run in parallel with the
/// kernel and launch reads): a large table in two halves by rowid, read at
/// once and joined in rowid order, so that the result is the one read of
/// the whole table, string handles included.
fn read_nvtx_split(
    path: &std::path::Path,
    table: &str,
    opts: ReadOptions,
    cover: Option<&LaunchCover>,
) -> Result<NvtxRaw> {
    read_nvtx_split_above(path, table, opts, cover, NVTX_SPLIT_ROWS)
}

/// [`read_nvtx_split`], splitting from `split_rows` rows.
fn read_nvtx_split_above(
    path: &std::path::Path,
    table: &str,
    opts: ReadOptions,
    cover: Option<&LaunchCover>,
    split_rows: usize,
) -> Result<NvtxRaw> {
    let max_rowid = {
        let db = Db::open(path)?;
        row_count_hint(&db, table)
    };
    if max_rowid < split_rows.max(2) {
        return read_nvtx_raw(path, table, opts, cover, None, &mut []).map(|(raw, _)| raw);
    }
    let mid = max_rowid / 2;
    // One buffer for the whole table, each half written straight into its
    // own part: joining two separate lists held the table one and a half
    // times over (the largest allocation of a 3 M-kernel parse). The buffer
    // is lazily zeroed, so room the rows do not fill costs no memory; rows
    // past a part's room (rowids the hint did not foresee) go to that
    // half's own list. Without the buffer, both halves use lists.
    let mut buf: Vec<Range> = bytemuck::try_zeroed_vec(max_rowid).unwrap_or_default();
    let room1 = mid.min(buf.len());
    let (a, b) = buf.split_at_mut(room1);
    let (first, second) = std::thread::scope(|scope| {
        let second = scope.spawn(move || {
            read_nvtx_raw(path, table, opts, cover, Some((mid as i64, i64::MAX)), b)
        });
        let first = read_nvtx_raw(path, table, opts, cover, Some((i64::MIN, mid as i64)), a);
        (first, second.join())
    });
    let (mut first, n1) = first?;
    let (second, n2) = second.map_err(|_| Error::Sqlite {
        path: path.to_owned(),
        what: "reading NVTX_EVENTS".into(),
        source: rusqlite::Error::InvalidQuery,
    })??;
    // rowid order: first part, first list, second part, second list
    let base = n1 + first.ranges.len();
    if first.ranges.is_empty() {
        move_down(&mut buf, room1, n2, n1, MOVE_PART);
    } else {
        let tail = buf[room1..room1 + n2].to_vec();
        buf.truncate(n1);
        buf.append(&mut first.ranges);
        buf.extend(tail);
    }
    buf.shrink_to_fit();
    first.ranges = buf;
    first.join(second, base);
    Ok(first)
}

/// Ranges per part of [`move_down`]'s move: 16 MiB.
const MOVE_PART: usize = 1 << 19;

/// Move `buf[from..from + n]` down to `to` (`to <= from`) and cut `buf`
/// after it (its length is then `to + n`), holding at most a `part` of
/// ranges twice: the second half of a read of the NVTX rows lands far
/// above the first half's end when most rows are dropped, and moving it at
/// once made its new pages resident while the old ones still were (0.1 GB
/// at the end of a 3 M-kernel read). The ranges whose old places are
/// among the new ones (the first `to + n - from`) are set aside first;
/// the others move from the back a part at a time, each part's old place
/// given back (cut and shrunk: the allocator returns a large block's tail
/// to the system); then those set aside. Where they would be more than
/// the new pages below `from`, the move is one copy.
fn move_down(buf: &mut Vec<Range>, from: usize, n: usize, to: usize, part: usize) {
    let part = part.max(1);
    let overlap = (to + n).saturating_sub(from);
    if to > from || n <= part || from - to <= overlap {
        buf.copy_within(from..from + n, to);
        buf.truncate(to + n);
        return;
    }
    let aside = buf[from..from + overlap].to_vec();
    // (the new places all lie below `from + overlap`, where the ranges
    // still to move start)
    let mut left = n;
    while left > overlap {
        let step = (left - overlap).min(part);
        let src = from + left - step;
        buf.copy_within(src..src + step, to + left - step);
        buf.truncate(src);
        buf.shrink_to_fit();
        left -= step;
    }
    buf[to..to + overlap].copy_from_slice(&aside);
    buf.truncate(to + n);
}

impl NvtxRaw {
    /// Take in what the read of the rows after this one's found. Its
    /// ranges start at `base` in `self.ranges`: those it wrote into the
    /// shared buffer are in place already, those in `next.ranges` are
    /// appended.
    fn join(&mut self, next: NvtxRaw, base: usize) {
        let NvtxRaw {
            pool,
            ranges,
            pending,
            domains,
            rows,
            skipped,
            max_end,
            dropped,
        } = next;
        self.ranges.extend(ranges);
        // handles of `next`'s pool shift past ours: the same handles as
        // one read would have given (texts enter the pool in rowid order)
        let off = self.pool.append(pool);
        // (a range whose text is registered keeps its placeholder handle)
        for r in self.ranges.get_mut(base..).unwrap_or_default() {
            if r.text.0 != u32::MAX {
                r.text.0 += off;
            }
        }
        self.pending
            .extend(pending.into_iter().map(|(i, id)| (i + base as u32, id)));
        self.domains
            .extend(domains.into_iter().map(|(k, t)| match t {
                Text::Local(r) => (k, Text::Local(StrRef(r.0 + off))),
                t => (k, t),
            }));
        self.rows += rows;
        self.skipped += skipped;
        self.max_end = self.max_end.max(max_end);
        self.dropped.ranges += dropped.ranges;
        self.dropped.open += dropped.open;
        self.dropped.registered.extend(dropped.registered);
    }
}

/// Read the NVTX ranges with rowid in `(lo, hi]` (`None`: every row) on a
/// connection of its own. Keeps every thread; the caller filters. With a
/// `cover`, a range that encloses none of its launch calls is dropped
/// before its text is read (and counted in `dropped`). Ranges
/// fill `room` first, then `ranges` of the result; returns how many are in
/// `room` (range *i* of this read is the *i*-th of the two in that order).
fn read_nvtx_raw(
    path: &std::path::Path,
    table: &str,
    opts: ReadOptions,
    cover: Option<&LaunchCover>,
    rowids: Option<(i64, i64)>,
    room: &mut [Range],
) -> Result<(NvtxRaw, usize)> {
    let db = Db::open(path)?;
    let (list, present) = db.select_list(
        table,
        &[
            "start",
            "end",
            "globalTid",
            "eventType",
            "text",
            "textId",
            "domainId",
            "endGlobalTid",
        ],
        &["start", "globalTid"],
    )?;
    let has_type = present.get(3).copied().unwrap_or(false);
    // (compared one by one: SQLite tests a list of more than two values
    // with `IN` by a search of a temporary index built for it, row by
    // row, which made the scan of the table 1.2 x slower)
    let filter = if has_type {
        let kinds = [
            NVTX_PUSHPOP,
            NVTX_STARTEND,
            NVTXT_PUSHPOP,
            NVTXT_STARTEND,
            NVTX_DOMAIN_CREATE,
        ]
        .map(|k| format!("eventType = {k}"));
        format!(" WHERE ({})", kinds.join(" OR "))
    } else {
        " WHERE \"end\" IS NOT NULL".to_owned()
    };
    // a full scan returns rows in rowid order; inline texts enter the pool
    // in that order, which makes the text handle the file-order tie-break
    let sql = match rowids {
        None => format!("SELECT {list} FROM \"{table}\"{filter}"),
        Some((lo, hi)) => format!(
            "SELECT {list} FROM \"{table}\"{filter} {} rowid > {lo} AND rowid <= {hi}",
            if filter.is_empty() { "WHERE" } else { "AND" }
        ),
    };
    let mut raw = NvtxRaw {
        pool: StrPool::new(),
        ranges: with_room(match rowids {
            None => row_count_hint(&db, table),
            // a half reads into its room; the list takes what overflows
            Some(_) => 0,
        }),
        pending: Vec::new(),
        domains: Vec::new(),
        rows: 0,
        skipped: 0,
        max_end: i64::MIN,
        dropped: Dropped::default(),
    };
    let mut filled = 0usize;
    let mut hints = CoverHints::default();
    let mut heads = opts.range_heads.then(SharedTexts::default);
    let mut run = || -> rusqlite::Result<()> {
        let mut rows = RawQuery::new(&db.conn, &sql)?;
        while let Some(r) = rows.next()? {
            raw.rows += 1;
            let event_type = if has_type {
                r.int(3).unwrap_or(NVTX_PUSHPOP)
            } else {
                NVTX_PUSHPOP
            };
            let Some(gtid) = r.int(2) else {
                raw.skipped += 1;
                continue;
            };
            let gtid = gtid as u64;
            if event_type == NVTX_DOMAIN_CREATE {
                let text = match r.text(4) {
                    Some(t) => Some(Text::Local(raw.pool.push(&t))),
                    None => r.int(5).map(Text::FileId),
                };
                if let Some(t) = text {
                    raw.domains
                        .push(((gtid & PID_MASK, r.int(6).unwrap_or(0) as u32), t));
                }
                continue;
            }
            // A start/end range that ended on another thread does not
            // describe the starting thread's work (NVIDIA's reports skip them).
            if matches!(event_type, NVTX_STARTEND | NVTXT_STARTEND)
                && !opts.compat
                && r.int(7).is_some_and(|e| e as u64 != gtid)
            {
                continue;
            }
            let Some(start) = r.int(0) else {
                raw.skipped += 1;
                continue;
            };
            if let Some(cover) = cover {
                let end = r.int(1);
                // (open: it may enclose any later call)
                let launched = cover.encloses(gtid, start, end.unwrap_or(i64::MAX), &mut hints);
                if launched != Some(true) {
                    // counted as if read and kept: skipped without a text,
                    // and as `merge_nvtx` counts the ranges it keeps
                    let inline = r.is_text(4);
                    let id = if inline { None } else { r.int(5) };
                    if !inline && id.is_none() {
                        raw.skipped += 1;
                        continue;
                    }
                    if let Some(e) = end {
                        raw.max_end = raw.max_end.max(e);
                    }
                    if launched.is_some() || opts.all_ranges {
                        let open = end.is_none();
                        match id {
                            Some(id) => raw.dropped.registered.push((id, open)),
                            None => {
                                raw.dropped.ranges += 1;
                                raw.dropped.open += u64::from(open);
                            }
                        }
                    }
                    continue;
                }
            }
            let (text, pending) = match r.text(4) {
                Some(t) => match &mut heads {
                    Some(seen) => (raw.pool.push_shared(name_of_range(&t), seen), None),
                    None => (raw.pool.push(&t), None),
                },
                None => match r.int(5) {
                    Some(id) => (StrRef(u32::MAX), Some(id)),
                    None => {
                        raw.skipped += 1;
                        continue;
                    }
                },
            };
            let end = match r.int(1) {
                Some(e) => {
                    raw.max_end = raw.max_end.max(e);
                    e
                }
                // open at the end of capture: fixed in `merge_nvtx`
                None => i64::MAX,
            };
            if let Some(id) = pending {
                raw.pending.push(((filled + raw.ranges.len()) as u32, id));
            }
            let range = Range {
                start_ns: start,
                end_ns: end,
                thread: gtid,
                text,
                domain: r.int(6).unwrap_or(0) as u32,
            };
            match room.get_mut(filled) {
                Some(slot) if raw.ranges.is_empty() => {
                    *slot = range;
                    filled += 1;
                }
                _ => raw.ranges.push(range),
            }
        }
        Ok(())
    };
    run().map_err(|e| db.err(format!("reading table {table}"), e))?;
    Ok((raw, filled))
}

/// What [`ReadOptions::range_heads`] keeps of an inline range text: its
/// operator name ([`parse_head`]), or the whole text when the name read
/// again would lose more (`x, seq = 1, seq = 2` is named `x, seq = 1`,
/// which read again is `x`). Either way `parse_head` of what is kept
/// names the range as it names the text.
fn name_of_range(text: &str) -> &str {
    let name = parse_head(text).name;
    if parse_head(name).name == name {
        name
    } else {
        text
    }
}

/// Merge the NVTX connection's result into the trace: the NVTX pool becomes
/// the trace's (the smaller pool is appended to it and its handles
/// shifted), registered strings are resolved, only threads that launched
/// kernels are kept, and ranges left open end at the end of capture.
fn merge_nvtx(raw: NvtxRaw, trace: &mut Trace, capture_end: i64, all_threads: bool) {
    let NvtxRaw {
        mut pool,
        mut ranges,
        pending,
        domains,
        rows,
        skipped,
        max_end,
        dropped,
    } = raw;
    let off = pool.append(std::mem::take(&mut trace.strings));
    let shift = |r: &mut StrRef| r.0 += off;
    for k in &mut trace.kernels {
        shift(&mut k.name);
        if let Some(mut m) = k.mangled.get() {
            shift(&mut m);
            k.mangled = Some(m).into();
        }
    }
    for l in &mut trace.launches {
        if let Some(a) = &mut l.api {
            shift(a);
        }
    }
    for m in &mut trace.memops {
        shift(&mut m.name);
    }
    for c in &mut trace.api_calls {
        shift(&mut c.name);
    }
    trace.strings = pool;
    let stats = &mut trace.stats;
    stats.nvtx_rows += rows;
    stats.ranges_skipped += skipped;
    let mut unresolved = vec![false; 0];
    if !pending.is_empty() {
        unresolved = vec![false; ranges.len()];
        for (i, id) in pending {
            match trace.strings.by_file_id(id) {
                Some(t) => ranges[i as usize].text = t,
                None => unresolved[i as usize] = true,
            }
        }
    }
    let threads: HashSet<u64> = trace.launches.iter().map(|l| l.thread).collect();
    let end_of_capture = capture_end.max(max_end);
    let mut i = 0usize;
    let mut open = 0u64;
    let mut dropped_unresolved = 0u64;
    ranges.retain_mut(|r| {
        let idx = i;
        i += 1;
        if !all_threads && !threads.contains(&r.thread) {
            return false;
        }
        if unresolved.get(idx).copied().unwrap_or(false) {
            dropped_unresolved += 1;
            return false;
        }
        if r.end_ns == i64::MAX {
            open += 1;
            r.end_ns = end_of_capture;
        }
        true
    });
    // the ranges dropped as read, counted as if kept
    let mut counted = dropped.ranges;
    open += dropped.open;
    for (id, was_open) in dropped.registered {
        if trace.strings.by_file_id(id).is_some() {
            counted += 1;
            open += u64::from(was_open);
        } else {
            dropped_unresolved += 1;
        }
    }
    stats.ranges_open += open;
    stats.ranges_skipped += dropped_unresolved;
    stats.ranges = ranges.len() as u64 + counted;
    trace.domains = domains
        .into_iter()
        .filter_map(|(k, t)| {
            let s = match t {
                Text::Local(r) => Some(r),
                Text::FileId(id) => trace.strings.by_file_id(id),
            };
            s.map(|s| (k, s))
        })
        .collect();
    trace.ranges = ranges;
}

/// The GPUs of the export; `any_kernels`: whether it has kernels (without
/// a GPU table, a note says what is unknown about them).
fn read_devices(db: &Db, any_kernels: bool, notes: &mut Vec<String>) -> Result<Vec<DeviceInfo>> {
    let mut devices = Vec::new();
    if db.has_table("TARGET_INFO_GPU") {
        let gpu = read_target_info_gpu(db)?;
        if db.has_table("TARGET_INFO_CUDA_DEVICE") {
            // ≥ 2025.5: (pid, CUDA ordinal) → GPU id
            let map = cuda_device_map(db)?;
            for (gpu_id, cuda_id, pid) in map {
                if let Some((_, info)) = gpu.iter().find(|(id, _)| *id == gpu_id) {
                    let mut d = info.clone();
                    d.device = cuda_id;
                    d.pid = pid.map(|p| p as u64);
                    devices.push(d);
                }
            }
        } else {
            // match cuDevice to the kernels' ordinals; the nsys `id` is not
            // the CUDA ordinal (trace-formats.md §2.11)
            for (_, info) in &gpu {
                devices.push(info.clone());
            }
        }
    } else if db.has_table("TARGET_INFO_CUDA_GPU") {
        devices = read_target_info_cuda_gpu(db)?;
    } else if any_kernels {
        notes.push("no GPU table (TARGET_INFO_GPU): device names and SM counts are unknown".into());
    }
    Ok(devices)
}

const GPU_COLS: &[&str] = &[
    "id",
    "cuDevice",
    "name",
    "smCount",
    "computeMajor",
    "computeMinor",
    "clockRate",
    "memoryBandwidth",
    "threadsPerWarp",
    "maxWarpsPerSm",
    "maxBlocksPerSm",
    "maxThreadsPerBlock",
    "maxRegistersPerSm",
    "maxRegistersPerBlock",
    "maxShmemPerSm",
    "maxShmemPerBlock",
    "maxShmemPerBlockOptin",
];

fn read_target_info_gpu(db: &Db) -> Result<Vec<(i64, DeviceInfo)>> {
    let (list, _) = db.select_list("TARGET_INFO_GPU", GPU_COLS, &[])?;
    read_gpu_rows(
        db,
        &format!("SELECT {list} FROM TARGET_INFO_GPU"),
        "TARGET_INFO_GPU",
    )
}

fn read_target_info_cuda_gpu(db: &Db) -> Result<Vec<DeviceInfo>> {
    // 2020.x names (CUPTI device record)
    let cols = &[
        "deviceId",
        "deviceId",
        "name",
        "numMultiprocessors",
        "computeCapabilityMajor",
        "computeCapabilityMinor",
        "coreClockRate",
        "globalMemoryBandwidth",
        "numThreadsPerWarp",
        "maxWarpsPerMultiprocessor",
        "maxBlocksPerMultiprocessor",
        "maxThreadsPerBlock",
        "maxRegistersPerMultiprocessor",
        "maxRegistersPerBlock",
        "maxSharedMemoryPerMultiprocessor",
        "maxSharedMemoryPerBlock",
        "maxSharedMemoryPerBlockOptin",
    ];
    let (list, _) = db.select_list("TARGET_INFO_CUDA_GPU", cols, &[])?;
    Ok(read_gpu_rows(
        db,
        &format!("SELECT {list} FROM TARGET_INFO_CUDA_GPU"),
        "TARGET_INFO_CUDA_GPU",
    )?
    .into_iter()
    .map(|(_, d)| d)
    .collect())
}

fn read_gpu_rows(db: &Db, sql: &str, table: &str) -> Result<Vec<(i64, DeviceInfo)>> {
    let run = || -> rusqlite::Result<Vec<(i64, DeviceInfo)>> {
        let mut st = db.conn.prepare(sql)?;
        let rows = st.query_map([], |r| {
            let int = |i: usize| r.get::<_, Option<i64>>(i).ok().flatten();
            let id = int(0).unwrap_or(0);
            Ok((
                id,
                DeviceInfo {
                    device: int(1).unwrap_or(id),
                    pid: None,
                    name: r.get::<_, Option<String>>(2).ok().flatten(),
                    sm_count: int(3),
                    cc_major: int(4),
                    cc_minor: int(5),
                    clock_hz: int(6),
                    mem_bandwidth_bps: int(7),
                    threads_per_warp: int(8),
                    max_warps_per_sm: int(9),
                    max_blocks_per_sm: int(10),
                    max_threads_per_block: int(11),
                    max_regs_per_sm: int(12),
                    max_regs_per_block: int(13),
                    max_smem_per_sm: int(14),
                    max_smem_per_block: int(15),
                    max_smem_per_block_optin: int(16),
                },
            ))
        })?;
        rows.collect()
    };
    run().map_err(|e| db.err(format!("reading table {table}"), e))
}

fn cuda_device_map(db: &Db) -> Result<Vec<(i64, i64, Option<i64>)>> {
    let (list, _) = db.select_list(
        "TARGET_INFO_CUDA_DEVICE",
        &["gpuId", "cudaId", "pid"],
        &["gpuId", "cudaId"],
    )?;
    let run = || -> rusqlite::Result<Vec<(i64, i64, Option<i64>)>> {
        let mut st = db
            .conn
            .prepare(&format!("SELECT {list} FROM TARGET_INFO_CUDA_DEVICE"))?;
        let rows = st.query_map([], |r| {
            Ok((
                int_at(r, 0)?.unwrap_or(-1),
                int_at(r, 1)?.unwrap_or(-1),
                int_at(r, 2)?,
            ))
        })?;
        rows.collect()
    };
    run().map_err(|e| db.err("reading table TARGET_INFO_CUDA_DEVICE", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the blocking calls, read after the kernels (the path of large
    /// API tables, whose rows are not read ahead): the calls are the full
    /// read's blocking ones in the same order, the others are counted, and
    /// the launches are the same. A real export (committed fixture).
    /// [`move_down`] leaves what one `copy_within` and `truncate` would,
    /// whatever the places (overlapping or not) and the part's size.
    #[test]
    fn move_down_is_one_copy() {
        let r = |i: usize| Range {
            start_ns: i as i64,
            end_ns: -(i as i64),
            thread: i as u64 * 3,
            text: StrRef(i as u32),
            domain: i as u32 % 7,
        };
        let key = |v: &[Range]| -> Vec<(i64, i64, u64, u32, u32)> {
            v.iter()
                .map(|x| (x.start_ns, x.end_ns, x.thread, x.text.0, x.domain))
                .collect()
        };
        for len in [0usize, 1, 7, 40] {
            for from in 0..=len {
                for to in 0..=from {
                    for n in 0..=len - from {
                        for part in [0usize, 1, 2, 3, 64] {
                            let mut buf: Vec<Range> = (0..len).map(r).collect();
                            let mut want = buf.clone();
                            want.copy_within(from..from + n, to);
                            want.truncate(to + n);
                            move_down(&mut buf, from, n, to, part);
                            assert_eq!(key(&buf), key(&want), "{len} {from} {to} {n} {part}");
                        }
                    }
                }
            }
        }
    }

    /// The committed two-GPU nsys capture (fixtures/README.md).
    fn mfu_2gpu() -> Db {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/nsys-ai/mfu_2gpu_before.sqlite");
        Db::open(&path).unwrap()
    }

    #[test]
    fn api_table_read_in_halves_is_the_read_in_one() {
        let db = mfu_2gpu();
        for opts in [
            ReadOptions::default(),
            ReadOptions {
                api_calls: true,
                memops: true,
                ..ReadOptions::default()
            },
        ] {
            let (one, _) = read_main(&db, opts, None, None).unwrap();
            let (halves, _) = read_main(&db, opts, None, Some(0)).unwrap();
            assert!(one.launches.len() > 100);
            // (every field, launch indexes and string handles too)
            let all = |t: &Trace| {
                format!(
                    "{:?} {:?} {:?} {:?} {:?}",
                    t.launches, t.kernels, t.memops, t.api_calls, t.stats
                )
            };
            assert_eq!(all(&halves), all(&one));
        }
    }

    /// Copies and sets read to be summed only: none has a launch call, the
    /// calls held are exactly the kernels' (each kernel's call the same),
    /// and the ranges kept are those that enclose a kernel's call by the
    /// definition, checked against every range of the full read.
    #[test]
    fn unlaunched_copies_keep_the_kernels_calls_and_ranges() {
        let db = mfu_2gpu();
        let joined = ReadOptions {
            memops: true,
            enclosing_ranges_only: true,
            ..ReadOptions::default()
        };
        let all = read(
            &db,
            ReadOptions {
                enclosing_ranges_only: false,
                ..joined
            },
        )
        .unwrap();
        let lean = read(
            &db,
            ReadOptions {
                memops_unlaunched: true,
                ..joined
            },
        )
        .unwrap();
        assert!(all.memops.iter().any(|m| m.launch.is_some()));
        assert!(lean.memops.iter().all(|m| m.launch.is_none()));
        assert_eq!(lean.memops.len(), all.memops.len());
        let call = |t: &Trace, l: Option<u32>| {
            l.map(|l| {
                let l = &t.launches[l as usize];
                (l.start_ns, l.end_ns, l.thread, l.correlation)
            })
        };
        let mut used = std::collections::BTreeSet::new();
        for (a, b) in all.kernels.iter().zip(&lean.kernels) {
            assert_eq!(call(&all, a.launch.get()), call(&lean, b.launch.get()));
            used.extend(call(&all, a.launch.get()));
        }
        assert_eq!(lean.launches.len(), used.len());
        assert!(lean.launches.len() < all.launches.len());
        // the ranges of the full read that enclose a kernel's call
        let text = |t: &Trace, r: &Range| {
            (
                r.thread,
                r.start_ns,
                r.end_ns,
                t.strings.get(r.text).to_owned(),
            )
        };
        let mut want: Vec<_> = all
            .ranges
            .iter()
            .filter(|r| {
                used.iter()
                    .any(|&(s, e, t, _)| t == r.thread && r.start_ns < s && r.end_ns > e)
            })
            .map(|r| text(&all, r))
            .collect();
        let mut got: Vec<_> = lean.ranges.iter().map(|r| text(&lean, r)).collect();
        want.sort();
        got.sort();
        assert!(!got.is_empty());
        assert_eq!(got, want);
        // some range enclosed only the copies' calls, and was dropped
        let enclosing_a_call = all
            .ranges
            .iter()
            .filter(|r| {
                all.launches
                    .iter()
                    .any(|l| l.thread == r.thread && r.start_ns < l.start_ns && r.end_ns > l.end_ns)
            })
            .count();
        assert!(enclosing_a_call > got.len());
        // with the copies' calls joined, their ranges are dropped all the
        // same (the cover is of the kernels' calls)
        let joined = read(&db, joined).unwrap();
        let mut kept: Vec<_> = joined.ranges.iter().map(|r| text(&joined, r)).collect();
        kept.sort();
        assert_eq!(kept, got);
    }

    #[test]
    fn blocking_calls_read_after_the_kernels_as_the_full_read() {
        let db = mfu_2gpu();
        let opts = ReadOptions {
            api_calls: true,
            memops: true,
            ..ReadOptions::default()
        };
        // no read-ahead: the rows are read after the kernels
        let (full, _) = read_main(&db, opts, None, None).unwrap();
        let blocking = ReadOptions {
            blocking_calls_only: true,
            ..opts
        };
        let (lean, _) = read_main(&db, blocking, None, None).unwrap();
        let key = |t: &Trace, c: &ApiCall| {
            (
                c.start_ns,
                c.end_ns,
                c.thread,
                c.correlation,
                t.strings.get(c.name).to_owned(),
            )
        };
        let want: Vec<_> = full
            .api_calls
            .iter()
            .filter(|c| c.kind.blocks_host())
            .map(|c| key(&full, c))
            .collect();
        let got: Vec<_> = lean.api_calls.iter().map(|c| key(&lean, c)).collect();
        assert!(!want.is_empty() && want.len() < full.api_calls.len());
        assert_eq!(got, want);
        assert_eq!(
            lean.stats.api_calls + lean.stats.api_calls_dropped,
            full.api_calls.len() as u64
        );
        let launch = |t: &Trace| -> Vec<(i64, i64, u64, i64)> {
            t.launches
                .iter()
                .map(|l| (l.start_ns, l.end_ns, l.thread, l.correlation))
                .collect()
        };
        assert_eq!(launch(&lean), launch(&full));
    }

    /// The calls made beside the launch join: every row with times, named
    /// from the interned names (or the unknown name), backtrace duplicates
    /// of exports without `eventClass` dropped (the versioned row kept),
    /// by start, thread and correlation id, then end and name.
    #[test]
    fn every_call_names_dedupes_and_orders() {
        let (launch, launch_plain, sync, unknown) = (StrRef(1), StrRef(2), StrRef(3), StrRef(9));
        let mut names = HashMap::default();
        names.insert(10, (launch, true, ApiKind::Launch));
        names.insert(11, (launch_plain, false, ApiKind::Launch));
        names.insert(12, (sync, false, ApiKind::Sync));
        let row = |start, gtid, corr, name_id| {
            RuntimeRow::new(Some(start), Some(start + 1), gtid, corr, name_id)
        };
        let rows = vec![
            row(50, 7, 2, Some(12)),
            // a call and its backtrace duplicate (unversioned name first)
            row(30, 7, 1, Some(11)),
            row(30, 7, 1, Some(10)),
            row(20, 8, 5, None),
            RuntimeRow::new(Some(10), None, 7, 3, Some(12)),
            // equal in start, thread and correlation id: by end, then name
            row(40, 8, 6, Some(12)),
            row(40, 8, 6, Some(11)),
            RuntimeRow::new(Some(40), Some(39), 8, 6, Some(12)),
        ];
        let key = |c: &ApiCall| (c.start_ns, c.thread, c.correlation, c.name);
        let unknown_kind = ApiKind::classify("<unknown API>");
        let made_with = |has_class, blocking_only: bool, launch_rows: &[bool]| {
            every_call(
                rows.clone(),
                &names,
                Some((unknown, unknown_kind)),
                has_class,
                blocking_only,
                launch_rows,
            )
        };
        let made_keeping = |has_class, blocking_only| made_with(has_class, blocking_only, &[]);
        let made = |has_class| made_keeping(has_class, false).0;
        let calls = |has_class| -> Vec<_> { made(has_class).iter().map(key).collect() };
        assert_eq!(
            calls(false),
            vec![
                (20, 8, 5, unknown),
                (30, 7, 1, launch),
                (40, 8, 6, sync),
                (50, 7, 2, sync),
            ]
        );
        // with eventClass, no row is a duplicate; ties by end, then name
        // (`launch` is interned before `launch_plain`, which is before `sync`)
        let ends =
            |has_class| -> Vec<_> { made(has_class).iter().map(|c| (key(c), c.end_ns)).collect() };
        assert_eq!(
            ends(true),
            vec![
                ((20, 8, 5, unknown), 21),
                ((30, 7, 1, launch), 31),
                ((30, 7, 1, launch_plain), 31),
                ((40, 8, 6, sync), 39),
                ((40, 8, 6, launch_plain), 41),
                ((40, 8, 6, sync), 41),
                ((50, 7, 2, sync), 51),
            ]
        );
        // the launch rows flagged (the first row, and the second of the
        // pair at 30) are left out, the others made as before
        let flags = [true, false, true, false, false, false, false, false];
        let (apart, _) = made_with(true, false, &flags);
        assert_eq!(
            apart.iter().map(|c| (key(c), c.end_ns)).collect::<Vec<_>>(),
            vec![
                ((20, 8, 5, unknown), 21),
                ((30, 7, 1, launch_plain), 31),
                ((40, 8, 6, sync), 39),
                ((40, 8, 6, launch_plain), 41),
                ((40, 8, 6, sync), 41),
            ]
        );
        // only the blocking calls: the others counted, and with
        // duplicates left, as the list without them would have them (the
        // full list is 7 calls with eventClass, 4 without)
        for (has_class, full) in [(true, 7), (false, 4)] {
            let (kept, dropped) = made_keeping(has_class, true);
            let want: Vec<_> = made(has_class)
                .into_iter()
                .filter(|c| c.kind.blocks_host())
                .map(|c| (key(&c), c.end_ns))
                .collect();
            assert!(!want.is_empty());
            assert_eq!(
                kept.iter().map(|c| (key(c), c.end_ns)).collect::<Vec<_>>(),
                want
            );
            assert_eq!(kept.len() as u64 + dropped, full, "{has_class}");
        }
    }

    #[test]
    fn strips_version_suffix() {
        assert_eq!(
            api_base_name("cudaLaunchKernel_v7000"),
            ("cudaLaunchKernel", true)
        );
        assert_eq!(
            api_base_name("cuLaunchKernelEx"),
            ("cuLaunchKernelEx", false)
        );
        assert_eq!(api_base_name("cuMemAlloc_v2"), ("cuMemAlloc", true));
        assert_eq!(api_base_name("x_v"), ("x_v", false));
    }

    /// What a read of NVTX_EVENTS found, with texts instead of handles.
    #[allow(clippy::type_complexity)]
    fn plain(
        raw: &NvtxRaw,
    ) -> (
        Vec<(i64, i64, u64, u32, String, Option<i64>)>,
        Vec<((u64, u32), String)>,
        (u64, u64, i64),
    ) {
        let pending: HashMap<u32, i64> = raw.pending.iter().copied().collect();
        let ranges = raw
            .ranges
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let id = pending.get(&(i as u32)).copied();
                let text = if id.is_some() {
                    String::new()
                } else {
                    raw.pool.get(r.text).to_owned()
                };
                (r.start_ns, r.end_ns, r.thread, r.domain, text, id)
            })
            .collect();
        let domains = raw
            .domains
            .iter()
            .map(|(k, t)| {
                let t = match t {
                    Text::Local(r) => raw.pool.get(*r).to_owned(),
                    Text::FileId(id) => format!("#{id}"),
                };
                (*k, t)
            })
            .collect();
        (ranges, domains, (raw.rows, raw.skipped, raw.max_end))
    }

    /// The kernel table read in two halves gives the kernels, row numbers
    /// and counts of one scan, whatever the rowids (gaps, negative ones,
    /// rows without a start or end on either side of the split).
    #[test]
    fn kernels_read_in_two_halves_are_the_read_in_one() {
        let dir = tempfile::tempdir().unwrap();
        for (n, shift) in [(2i64, 1i64), (3, 1), (101, 1), (101, -79), (64, 1000)] {
            let path = dir.path().join(format!("k{n}_{shift}.sqlite"));
            let c = rusqlite::Connection::open(&path).unwrap();
            c.execute_batch(
                "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
                 INSERT INTO StringIds VALUES (1, 'kA'), (2, 'kB');
                 CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER,
                   deviceId INTEGER, streamId INTEGER, correlationId INTEGER,
                   demangledName INTEGER, gridX INTEGER);",
            )
            .unwrap();
            for i in 0..n {
                // every 7th row without an end; every 5th ends before it starts
                let end = (i % 7 != 3).then_some(if i % 5 == 0 { i * 10 - 1 } else { i * 10 + 4 });
                let name = (i % 4 != 2).then_some(1 + i % 2);
                c.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (rowid, start, end, deviceId, \
                     streamId, correlationId, demangledName, gridX) VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6, ?7)",
                    rusqlite::params![i * 3 + shift, i * 10, end, i % 3, 100 + i, name, i],
                )
                .unwrap();
            }
            drop(c);
            let read = |split: Option<usize>| {
                let db = Db::open(&path).unwrap();
                let mut strings = StrPool::new();
                strings.load_file_strings(read_string_ids(&db).unwrap());
                let mut stats = ReadStats::default();
                let k = read_kernels(
                    &db,
                    "CUPTI_ACTIVITY_KIND_KERNEL",
                    &mut strings,
                    &mut stats,
                    split,
                )
                .unwrap();
                let k: Vec<String> = k
                    .iter()
                    .map(|k| {
                        format!(
                            "{} {} {} {} {} {}",
                            k.row,
                            k.start_ns,
                            k.end_ns,
                            k.stream,
                            strings.get(k.name),
                            k.grid[0]
                        )
                    })
                    .collect();
                (
                    k,
                    stats.kernel_rows,
                    stats.skipped_null,
                    stats.non_positive_duration,
                )
            };
            let whole = read(None);
            assert!(!whole.0.is_empty() && whole.2 + whole.0.len() as u64 == whole.1);
            assert_eq!(read(Some(1)), whole, "{n} rows from rowid {shift}");
        }
    }

    #[test]
    fn nvtx_read_in_two_halves_is_the_read_in_one() {
        // rowids 1..=101, then -79..=21: the hint (the largest rowid) then
        // leaves the first half too little room, and its rows overflow
        for shift in [1i64, -79] {
            nvtx_halves_with_rowids_from(shift);
        }
    }

    fn nvtx_halves_with_rowids_from(shift: i64) {
        let path = std::env::temp_dir().join(format!(
            "rprof-nvtx-split-{}-{shift}.sqlite",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.execute_batch(
                "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, globalTid INTEGER, \
                 eventType INTEGER, text TEXT, textId INTEGER, domainId INTEGER, endGlobalTid INTEGER);",
            )
            .unwrap();
            let mut st = c
                .prepare(
                    "INSERT INTO NVTX_EVENTS (start, end, globalTid, eventType, text, textId, \
                     domainId, endGlobalTid, rowid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .unwrap();
            for i in 0..101i64 {
                let ty = [59, 60, 70, 71, 75, 34][(i % 6) as usize];
                let text = (i % 4 != 1).then(|| format!("range {i}"));
                let text_id = (i % 4 == 1).then_some(1000 + i);
                let end = (i % 9 != 0).then_some(i * 10 + 5);
                let start = (i % 13 != 3).then_some(i * 10);
                let tid = (1i64 << 24) + i % 3;
                let end_tid = if i % 11 == 0 { tid + 1 } else { tid };
                st.execute(rusqlite::params![
                    start,
                    end,
                    tid,
                    ty,
                    text,
                    text_id,
                    i % 2,
                    end_tid,
                    i + shift
                ])
                .unwrap();
            }
        }
        // launch calls inside the ranges of some rows, on two of the three
        // threads: with this cover about half the ranges are dropped
        let launches: Vec<Launch> = (0..101i64)
            .filter(|i| i % 3 != 2 && i % 5 != 0)
            .map(|i| Launch {
                start_ns: i * 10 + 2,
                end_ns: i * 10 + 3,
                thread: ((1i64 << 24) + i % 3) as u64,
                correlation: 0,
                api: None,
            })
            .collect();
        let cover = LaunchCover::new(&launches);
        let opts = ReadOptions::default();
        let dropped = |r: &NvtxRaw| {
            (
                r.dropped.ranges,
                r.dropped.open,
                r.dropped.registered.clone(),
            )
        };
        for cover in [None, Some(&cover)] {
            let whole = read_nvtx_raw(&path, "NVTX_EVENTS", opts, cover, None, &mut [])
                .unwrap()
                .0;
            assert!(whole.ranges.len() > 20 && !whole.pending.is_empty());
            assert!(!whole.domains.is_empty() && whole.skipped > 0);
            assert_eq!(whole.ranges.len() > 40, cover.is_none());
            assert_eq!(dropped(&whole).0 > 0, cover.is_some());
            for split in [0, 2, 100] {
                let halves =
                    read_nvtx_split_above(&path, "NVTX_EVENTS", opts, cover, split).unwrap();
                let what = format!("split from {split} rows, cover {}", cover.is_some());
                assert_eq!(plain(&halves), plain(&whole), "{what}");
                // the same handles, too
                let texts = |r: &NvtxRaw| r.ranges.iter().map(|x| x.text).collect::<Vec<_>>();
                assert_eq!(texts(&halves), texts(&whole), "{what}");
                assert_eq!(dropped(&halves), dropped(&whole), "{what}");
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}
