//! nvprof SQLite databases (`nvprof -o file.sql`, 2017–2020).
//!
//! Kernels: `CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL` (plus `…_KERNEL` outside
//! `--compat`), names are mangled ids into `StringTable`. Launches: the
//! runtime and driver API tables, joined on correlation id. NVTX: one
//! `CUPTI_ACTIVITY_KIND_MARKER` row per start (flags 2) and per end (flags 4),
//! paired by `id`; the thread is the 12-byte `objectId` blob.

use crate::{FastMap as HashMap, FastSet as HashSet};

use crate::error::{Error, Result};
use crate::model::{
    ApiCall, ApiKind, DeviceInfo, Kernel, Launch, MemOp, Range, ReadStats, Source, Trace, narrow,
};
use crate::model::{OptU32, StrPool, StrRef};
use crate::read::ReadOptions;
use crate::read::sql::Db;

const KERNEL_COLS: &[&str] = &[
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "correlationId",
    "name",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory",
];

/// CUPTI callback ids of launch-like calls (cupti_runtime_cbid.h /
/// cupti_driver_cbid.h); other ids print as `runtime#N` / `driver#N`.
fn api_name(driver: bool, cbid: i64) -> Option<&'static str> {
    Some(match (driver, cbid) {
        (false, 13) => "cudaLaunch",
        (false, 211) => "cudaLaunchKernel",
        (false, 214) => "cudaLaunchKernel_ptsz",
        (false, 269) => "cudaLaunchCooperativeKernel",
        (false, 270) => "cudaLaunchCooperativeKernel_ptsz",
        (false, 272) => "cudaLaunchCooperativeKernelMultiDevice",
        (false, 311) => "cudaGraphLaunch",
        (false, 312) => "cudaGraphLaunch_ptsz",
        (false, 430) => "cudaLaunchKernelExC",
        (false, 431) => "cudaLaunchKernelExC_ptsz",
        (false, 31) => "cudaMemcpy",
        (false, 41) => "cudaMemcpyAsync",
        (false, 51) => "cudaMemsetAsync",
        (true, 307) => "cuLaunchKernel",
        (true, 442) => "cuLaunchKernel_ptsz",
        (true, 477) => "cuLaunchCooperativeKernel",
        (true, 514) => "cuGraphLaunch",
        (true, 652) => "cuLaunchKernelEx",
        _ => return None,
    })
}

/// Thread key from nvprof's signed 32-bit process and thread ids.
pub(crate) fn thread_key(pid: i64, tid: i64) -> u64 {
    ((pid as u32 as u64) << 32) | (tid as u32 as u64)
}

pub fn read(db: &Db, opts: ReadOptions) -> Result<Trace> {
    let mut strings = StrPool::new();
    let mut stats = ReadStats::default();
    let mut notes = Vec::new();
    let rows = {
        let run = || -> rusqlite::Result<Vec<(i64, String)>> {
            let mut st = db.conn.prepare("SELECT _id_, value FROM StringTable")?;
            let rows = st.query_map([], |r| {
                // a mistyped cell is a missing string, as other columns are read
                let text = match r.get_ref(1)? {
                    rusqlite::types::ValueRef::Text(t) => {
                        Some(String::from_utf8_lossy(t).into_owned())
                    }
                    _ => None,
                };
                Ok((r.get::<_, Option<i64>>(0).ok().flatten(), text))
            })?;
            let mut out = Vec::new();
            for row in rows {
                if let (Some(id), Some(v)) = row? {
                    out.push((id, v));
                }
            }
            Ok(out)
        };
        run().map_err(|e| db.err("reading table StringTable", e))?
    };
    strings.load_file_strings(rows);
    let producer = db
        .has_table("Version")
        .then(|| db.scalar_i64("SELECT version FROM Version"))
        .flatten()
        .map(|v| format!("nvprof, database version {v}"));

    let mut tables = vec!["CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"];
    if !opts.compat {
        tables.push("CUPTI_ACTIVITY_KIND_KERNEL");
    }
    let mut kernels = Vec::new();
    for t in tables {
        if db.has_table(t) {
            read_kernels(db, t, &mut strings, &mut stats, &mut kernels, opts)?;
        }
    }
    let mut memops = if opts.memops {
        read_memops(db, &mut strings, &mut notes)?
    } else {
        Vec::new()
    };
    let launches = read_launches(db, &mut kernels, &mut memops, &mut strings, opts)?;
    stats.without_launch = kernels.iter().filter(|k| k.launch.get().is_none()).count() as u64;
    let threads: HashSet<u64> = launches.iter().map(|l| l.thread).collect();
    let capture_end = kernels
        .iter()
        .map(|k| k.end_ns)
        .chain(launches.iter().map(|l| l.end_ns))
        .max()
        .unwrap_or(0);
    let (ranges, domains) = if !opts.no_ranges && db.has_table("CUPTI_ACTIVITY_KIND_MARKER") {
        read_markers(db, &threads, capture_end, &strings, &mut stats, opts)?
    } else {
        (Vec::new(), Vec::new())
    };
    let devices = read_devices(db, &strings, &mut notes)?;
    let mut missing = Vec::new();
    let api_calls = if opts.api_calls {
        read_all_api_calls(db, &mut strings)?
    } else {
        Vec::new()
    };
    stats.api_calls = api_calls.len() as u64;
    let syncs = if opts.syncs {
        if db.has_table("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") {
            crate::read::cupti::read_syncs(db, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", &mut notes)?
        } else {
            missing.push(
                "synchronisation records: no CUPTI_ACTIVITY_KIND_SYNCHRONIZATION table".to_owned(),
            );
            Vec::new()
        }
    } else {
        Vec::new()
    };
    if opts.mem_events {
        missing.push("memory events: nvprof databases do not record allocations".to_owned());
    }
    let mut trace = Trace::empty(db.path.clone(), Source::Nvprof);
    trace.producer = producer;
    trace.strings = strings;
    trace.kernels = kernels;
    trace.launches = launches;
    trace.api_calls = api_calls;
    trace.ranges = ranges;
    trace.memops = memops;
    trace.domains = domains;
    trace.devices = devices;
    trace.syncs = syncs;
    // nvprof times are Unix-epoch nanoseconds already
    trace.clock = Some(rprof_model::ClockOrigin {
        epoch_ns: 0,
        method: "absolute timestamps (nvprof)",
    });
    trace.missing = missing;
    trace.stats = stats;
    trace.notes = notes;
    Ok(trace)
}

/// Every runtime and driver API call. nvprof stores callback ids, not
/// names: launch, copy and set calls are named (see [`api_name`]), the
/// rest print as `runtime#N` / `driver#N` and count as "other".
fn read_all_api_calls(db: &Db, strings: &mut StrPool) -> Result<Vec<ApiCall>> {
    let mut out = Vec::new();
    let mut names: HashMap<(bool, i64), StrRef> = HashMap::default();
    for (table, driver) in [
        ("CUPTI_ACTIVITY_KIND_RUNTIME", false),
        ("CUPTI_ACTIVITY_KIND_DRIVER", true),
    ] {
        if !db.has_table(table) {
            continue;
        }
        let (list, _) = db.select_list(
            table,
            &[
                "cbid",
                "start",
                "end",
                "processId",
                "threadId",
                "correlationId",
            ],
            &["start", "end", "processId", "threadId", "correlationId"],
        )?;
        let sql = format!("SELECT {list} FROM \"{table}\" ORDER BY _id_");
        let mut run = || -> rusqlite::Result<()> {
            let mut st = db.conn.prepare(&sql)?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let int = |i: usize| -> rusqlite::Result<Option<i64>> {
                    crate::read::cupti::int_at(r, i)
                };
                let (Some(start), Some(end), Some(pid), Some(tid), Some(corr)) =
                    (int(1)?, int(2)?, int(3)?, int(4)?, int(5)?)
                else {
                    continue;
                };
                let cbid = int(0)?.unwrap_or(-1);
                let name = *names.entry((driver, cbid)).or_insert_with(|| {
                    let n = api_name(driver, cbid)
                        .map(str::to_owned)
                        .unwrap_or_else(|| {
                            let kind = if driver { "driver" } else { "runtime" };
                            format!("{kind}#{cbid}")
                        });
                    strings.push(&n)
                });
                out.push(ApiCall {
                    start_ns: start,
                    end_ns: end,
                    thread: thread_key(pid, tid),
                    correlation: corr,
                    name,
                    kind: ApiKind::classify(strings.get(name)),
                });
            }
            Ok(())
        };
        run().map_err(|e| db.err(format!("reading table {table}"), e))?;
    }
    out.sort_by_key(|c| (c.start_ns, c.thread, c.correlation));
    Ok(out)
}

fn read_kernels(
    db: &Db,
    table: &str,
    strings: &mut StrPool,
    stats: &mut ReadStats,
    kernels: &mut Vec<Kernel>,
    opts: ReadOptions,
) -> Result<()> {
    let (list, _) = db.select_list(table, KERNEL_COLS, &["start", "end", "name"])?;
    let sql = format!("SELECT {list} FROM \"{table}\" ORDER BY _id_");
    let unknown = strings.push("<unknown kernel>");
    let mut compat_abort = None;
    let mut run = || -> rusqlite::Result<()> {
        let mut st = db.conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            stats.kernel_rows += 1;
            let int =
                |i: usize| -> rusqlite::Result<Option<i64>> { crate::read::cupti::int_at(r, i) };
            let (Some(start), Some(end)) = (int(0)?, int(1)?) else {
                stats.skipped_null += 1;
                continue;
            };
            if end <= start {
                stats.non_positive_duration += 1;
            }
            let name = match int(6)?.and_then(|id| strings.by_file_id(id)) {
                Some(n) => n,
                None => {
                    if opts.compat && compat_abort.is_none() {
                        compat_abort = Some(format!(
                            "kernel row {} names string id {}, which StringTable lacks",
                            stats.kernel_rows,
                            int(6)?.map_or_else(|| "NULL".to_owned(), |i| i.to_string())
                        ));
                    }
                    unknown
                }
            };
            let row = kernels.len() as u32;
            kernels.push(Kernel {
                row,
                start_ns: start,
                end_ns: end,
                device: int(2)?.unwrap_or(0),
                context: OptU32::saturating(narrow(int(3)?)),
                stream: int(4)?.unwrap_or(0),
                correlation: int(5)?.unwrap_or(-1),
                global_pid_bits: crate::model::NO_PID,
                name,
                mangled: Some(name).into(),
                grid: [
                    narrow(int(7)?).unwrap_or(0),
                    narrow(int(8)?).unwrap_or(0),
                    narrow(int(9)?).unwrap_or(0),
                ],
                block: [
                    narrow(int(10)?).unwrap_or(0),
                    narrow(int(11)?).unwrap_or(0),
                    narrow(int(12)?).unwrap_or(0),
                ],
                registers_per_thread: narrow(int(13)?),
                static_smem_bytes: OptU32::saturating(narrow(int(14)?)),
                dynamic_smem_bytes: OptU32::saturating(narrow(int(15)?)),
                launch: OptU32::NONE,
                extra: None,
            });
        }
        Ok(())
    };
    run().map_err(|e| db.err(format!("reading table {table}"), e))?;
    if let Some(detail) = compat_abort {
        return Err(Error::CompatAbort {
            path: db.path.clone(),
            detail,
        });
    }
    Ok(())
}

struct ApiRow {
    driver: bool,
    cbid: i64,
    start: i64,
    end: i64,
    pid: i64,
    tid: i64,
}

fn read_api_rows(
    db: &Db,
    table: &str,
    driver: bool,
    want: &HashSet<i64>,
    out: &mut HashMap<i64, Vec<ApiRow>>,
) -> Result<()> {
    let (list, _) = db.select_list(
        table,
        &[
            "cbid",
            "start",
            "end",
            "processId",
            "threadId",
            "correlationId",
        ],
        &["start", "end", "processId", "threadId", "correlationId"],
    )?;
    let sql = format!("SELECT {list} FROM \"{table}\" ORDER BY _id_");
    let mut run = || -> rusqlite::Result<()> {
        let mut st = db.conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let int =
                |i: usize| -> rusqlite::Result<Option<i64>> { crate::read::cupti::int_at(r, i) };
            let Some(corr) = int(5)? else { continue };
            if !want.contains(&corr) {
                continue;
            }
            let (Some(start), Some(end), Some(pid), Some(tid)) =
                (int(1)?, int(2)?, int(3)?, int(4)?)
            else {
                continue;
            };
            out.entry(corr).or_default().push(ApiRow {
                driver,
                cbid: int(0)?.unwrap_or(-1),
                start,
                end,
                pid,
                tid,
            });
        }
        Ok(())
    };
    run().map_err(|e| db.err(format!("reading table {table}"), e))
}

fn read_launches(
    db: &Db,
    kernels: &mut [Kernel],
    memops: &mut [MemOp],
    strings: &mut StrPool,
    opts: ReadOptions,
) -> Result<Vec<Launch>> {
    let want: HashSet<i64> = kernels
        .iter()
        .map(|k| k.correlation)
        .chain(memops.iter().map(|m| m.correlation))
        .collect();
    let mut runtime: HashMap<i64, Vec<ApiRow>> = HashMap::default();
    let mut driver: HashMap<i64, Vec<ApiRow>> = HashMap::default();
    if db.has_table("CUPTI_ACTIVITY_KIND_RUNTIME") {
        read_api_rows(
            db,
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            false,
            &want,
            &mut runtime,
        )?;
    }
    if db.has_table("CUPTI_ACTIVITY_KIND_DRIVER") {
        read_api_rows(db, "CUPTI_ACTIVITY_KIND_DRIVER", true, &want, &mut driver)?;
    }
    let mut names: HashMap<(bool, i64), StrRef> = HashMap::default();
    let mut by_corr: HashMap<i64, u32> = HashMap::default();
    let mut launches = Vec::new();
    // one launch per correlation id, shared by the kernels and copies it
    // started
    let mut link = |corr: i64, row: &ApiRow, strings: &mut StrPool| -> u32 {
        if let Some(&li) = by_corr.get(&corr) {
            return li;
        }
        let api = *names.entry((row.driver, row.cbid)).or_insert_with(|| {
            let name = api_name(row.driver, row.cbid)
                .map(str::to_owned)
                .unwrap_or_else(|| {
                    let kind = if row.driver { "driver" } else { "runtime" };
                    format!("{kind}#{}", row.cbid)
                });
            strings.push(&name)
        });
        let li = launches.len() as u32;
        launches.push(Launch {
            start_ns: row.start,
            end_ns: row.end,
            thread: thread_key(row.pid, row.tid),
            correlation: corr,
            api: Some(api),
        });
        by_corr.insert(corr, li);
        li
    };
    for (i, k) in kernels.iter_mut().enumerate() {
        let rt = runtime
            .get(&k.correlation)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let dr = driver.get(&k.correlation).map(Vec::as_slice).unwrap_or(&[]);
        if opts.compat {
            // apex.pyprof: one runtime row, else exactly one driver row
            let problem = if rt.len() > 1 {
                Some(format!(
                    "{} runtime calls share correlation id {}",
                    rt.len(),
                    k.correlation
                ))
            } else if rt.is_empty() && dr.len() != 1 {
                Some(format!(
                    "kernel {} (correlation id {}) has {} launch calls",
                    i + 1,
                    k.correlation,
                    dr.len()
                ))
            } else {
                None
            };
            if let Some(detail) = problem {
                return Err(Error::CompatAbort {
                    path: db.path.clone(),
                    detail,
                });
            }
        }
        if let Some(row) = rt.first().or(dr.first()) {
            k.launch = OptU32::saturating(Some(link(k.correlation, row, strings)));
        }
    }
    for m in memops.iter_mut() {
        let rt = runtime.get(&m.correlation).and_then(|v| v.first());
        if let Some(row) = rt.or_else(|| driver.get(&m.correlation).and_then(|v| v.first())) {
            m.launch = Some(link(m.correlation, row, strings));
        }
    }
    Ok(launches)
}

/// Memory copies and sets.
fn read_memops(db: &Db, strings: &mut StrPool, notes: &mut Vec<String>) -> Result<Vec<MemOp>> {
    let tables: Vec<(String, bool)> = [
        ("CUPTI_ACTIVITY_KIND_MEMCPY", true),
        ("CUPTI_ACTIVITY_KIND_MEMCPY2", true),
        ("CUPTI_ACTIVITY_KIND_MEMSET", false),
    ]
    .into_iter()
    .filter(|(t, _)| db.has_table(t))
    .map(|(t, copy)| (t.to_owned(), copy))
    .collect();
    let mut memops: Vec<MemOp> =
        crate::read::cupti::read_memop_tables(db, &tables, strings, true, notes)?
            .into_iter()
            .map(|(m, _)| m)
            .collect();
    // made in the rows' allocation, sized by the tables' largest rowids
    memops.shrink_to_fit();
    Ok(memops)
}

type Domains = Vec<((u64, u32), StrRef)>;

fn read_markers(
    db: &Db,
    threads: &HashSet<u64>,
    capture_end: i64,
    strings: &StrPool,
    stats: &mut ReadStats,
    opts: ReadOptions,
) -> Result<(Vec<Range>, Domains)> {
    let (list, _) = db.select_list(
        "CUPTI_ACTIVITY_KIND_MARKER",
        &["flags", "timestamp", "id", "objectId", "name", "domain"],
        &["flags", "timestamp", "id", "objectId", "name"],
    )?;
    let sql = format!("SELECT {list} FROM CUPTI_ACTIVITY_KIND_MARKER ORDER BY _id_");
    // id → (start, thread, name, domain)
    let mut open: HashMap<i64, (i64, u64, StrRef, u32)> = HashMap::default();
    let mut ranges = Vec::new();
    let mut domains: Domains = Vec::new();
    let mut max_end = capture_end;
    let mut run = || -> rusqlite::Result<()> {
        let mut st = db.conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let int =
                |i: usize| -> rusqlite::Result<Option<i64>> { crate::read::cupti::int_at(r, i) };
            let (Some(flags), Some(ts), Some(id)) = (int(0)?, int(1)?, int(2)?) else {
                stats.ranges_skipped += 1;
                continue;
            };
            if flags != 4 {
                stats.nvtx_rows += 1;
            }
            match flags {
                2 => {
                    let blob = r.get::<_, Option<Vec<u8>>>(3)?.unwrap_or_default();
                    let Some(thread) = blob_thread(&blob) else {
                        stats.ranges_skipped += 1;
                        continue;
                    };
                    let Some(name) = int(4)?.and_then(|n| strings.by_file_id(n)) else {
                        stats.ranges_skipped += 1;
                        continue;
                    };
                    let domain = int(5)?.unwrap_or(0) as u32;
                    open.insert(id, (ts, thread, name, domain));
                }
                4 => {
                    max_end = max_end.max(ts);
                    if let Some((start, thread, name, domain)) = open.remove(&id)
                        && (opts.all_ranges || threads.contains(&thread))
                    {
                        push_range(
                            &mut ranges,
                            &mut domains,
                            strings,
                            start,
                            ts,
                            thread,
                            name,
                            domain,
                        );
                    }
                }
                _ => {}
            }
        }
        Ok(())
    };
    run().map_err(|e| db.err("reading table CUPTI_ACTIVITY_KIND_MARKER", e))?;
    // Ranges still open when capture stopped. apex.pyprof's self-join drops
    // them; rprof keeps them open to the end of capture.
    if !opts.compat {
        let mut rest: Vec<_> = open.into_iter().collect();
        rest.sort_by_key(|(id, _)| *id);
        for (_, (start, thread, name, domain)) in rest {
            if opts.all_ranges || threads.contains(&thread) {
                stats.ranges_open += 1;
                push_range(
                    &mut ranges,
                    &mut domains,
                    strings,
                    start,
                    max_end,
                    thread,
                    name,
                    domain,
                );
            }
        }
    }
    stats.ranges = ranges.len() as u64;
    Ok((ranges, domains))
}

#[allow(clippy::too_many_arguments)]
fn push_range(
    ranges: &mut Vec<Range>,
    domains: &mut Domains,
    strings: &StrPool,
    start: i64,
    end: i64,
    thread: u64,
    name: StrRef,
    domain: u32,
) {
    if domain != 0 {
        let key = (thread >> 32, domain);
        if !domains.iter().any(|(k, _)| *k == key)
            && let Some(d) = strings.by_file_id(i64::from(domain))
        {
            domains.push((key, d));
        }
    }
    ranges.push(Range {
        start_ns: start,
        end_ns: end,
        thread,
        text: name,
        domain,
    });
}

/// CUPTI's object id for a thread: bytes 0–3 process id, 4–7 thread id,
/// both little-endian.
fn blob_thread(b: &[u8]) -> Option<u64> {
    let pid = u32::from_le_bytes(b.get(0..4)?.try_into().ok()?);
    let tid = u32::from_le_bytes(b.get(4..8)?.try_into().ok()?);
    Some(((pid as u64) << 32) | tid as u64)
}

fn read_devices(db: &Db, strings: &StrPool, notes: &mut Vec<String>) -> Result<Vec<DeviceInfo>> {
    if !db.has_table("CUPTI_ACTIVITY_KIND_DEVICE") {
        notes.push("no device table: device names and SM counts are unknown".into());
        return Ok(Vec::new());
    }
    let cols = &[
        "id",
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
    ];
    let (list, _) = db.select_list("CUPTI_ACTIVITY_KIND_DEVICE", cols, &["id"])?;
    let run = || -> rusqlite::Result<Vec<DeviceInfo>> {
        let mut st = db
            .conn
            .prepare(&format!("SELECT {list} FROM CUPTI_ACTIVITY_KIND_DEVICE"))?;
        let rows = st.query_map([], |r| {
            let int = |i: usize| r.get::<_, Option<i64>>(i).ok().flatten();
            Ok(DeviceInfo {
                device: int(0).unwrap_or(0),
                pid: None,
                name: int(1)
                    .and_then(|n| strings.by_file_id(n))
                    .map(|s| strings.get(s).to_owned()),
                sm_count: int(2),
                cc_major: int(3),
                cc_minor: int(4),
                // CUPTI: kHz and KB/s
                clock_hz: int(5).map(|v| v.saturating_mul(1000)),
                mem_bandwidth_bps: int(6).map(|v| v.saturating_mul(1000)),
                threads_per_warp: int(7),
                max_warps_per_sm: int(8),
                max_blocks_per_sm: int(9),
                max_threads_per_block: int(10),
                max_regs_per_sm: int(11),
                max_regs_per_block: int(12),
                max_smem_per_sm: int(13),
                max_smem_per_block: int(14),
                max_smem_per_block_optin: None,
            })
        })?;
        rows.collect()
    };
    run().map_err(|e| db.err("reading table CUPTI_ACTIVITY_KIND_DEVICE", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_object_id_blob() {
        // 423E0000 4037DCEA 00000000 = pid 15938, tid 0xEADC3740
        let b = [0x42, 0x3E, 0, 0, 0x40, 0x37, 0xDC, 0xEA, 0, 0, 0, 0];
        assert_eq!(blob_thread(&b), Some((15938u64 << 32) | 0xEADC3740));
        assert_eq!(blob_thread(&b[..5]), None);
        // the runtime table stores the same tid as a signed 32-bit value
        assert_eq!(
            thread_key(15938, -354_666_688),
            (15938u64 << 32) | 0xEADC3740
        );
    }
}
