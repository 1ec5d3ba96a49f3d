//! Nsight Systems SQLite exports (2020.4 – 2026.x).
//!
//! Five bulk queries: `StringIds`, the kernel table, the launch calls
//! (`CUPTI_ACTIVITY_KIND_RUNTIME`, runtime and driver API alike), NVTX
//! ranges, and the GPU tables. Kernels join their launch on (process,
//! correlation id) in memory; NVTX ranges are kept only for threads that
//! launched a kernel.

use std::collections::{HashMap, HashSet};

use crate::error::Result;
use crate::model::{DeviceInfo, Kernel, Launch, MemOp, Range, RangeKind, ReadStats, Source, Trace};
use crate::read::ReadOptions;
use crate::read::sql::Db;
use crate::strings::{StrPool, StrRef};

const PID_MASK: u64 = !0xFF_FFFF;

/// nsys `eventType` values (ENUM_NSYS_EVENT_TYPE; identical in every export).
const NVTX_PUSHPOP: i64 = 59;
const NVTX_STARTEND: i64 = 60;
const NVTXT_PUSHPOP: i64 = 70;
const NVTXT_STARTEND: i64 = 71;
const NVTX_DOMAIN_CREATE: i64 = 75;

pub fn read(db: &Db, opts: ReadOptions) -> Result<Trace> {
    let mut strings = StrPool::new();
    let mut notes = Vec::new();
    let mut stats = ReadStats::default();

    let rows = read_string_ids(db)?;
    strings.load_file_strings(rows);

    let producer = producer(db);
    let mut kernels = match db.resolve("CUPTI_ACTIVITY_KIND_KERNEL") {
        Some(t) => read_kernels(db, &t, &mut strings, &mut stats)?,
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
        read_memops(db, &mut strings)?
    } else {
        Vec::new()
    };
    let launches = match db.resolve("CUPTI_ACTIVITY_KIND_RUNTIME") {
        Some(t) => read_launches(db, &t, &mut kernels, &mut memops, &mut strings)?,
        None => {
            if !kernels.is_empty() {
                notes.push("no CUDA API table (CUPTI_ACTIVITY_KIND_RUNTIME): kernels cannot be tied to threads or NVTX ranges".into());
            }
            Vec::new()
        }
    };
    stats.without_launch = kernels.iter().filter(|k| k.launch.is_none()).count() as u64;

    let threads: HashSet<u64> = launches.iter().map(|l| l.thread).collect();
    let capture_end = capture_end(db, &kernels, &launches);
    let (ranges, domains) = match db.resolve("NVTX_EVENTS") {
        Some(t) => read_nvtx(
            db,
            &t,
            &threads,
            capture_end,
            &mut strings,
            &mut stats,
            opts,
        )?,
        None => (Vec::new(), Vec::new()),
    };
    let devices = read_devices(db, &kernels, &launches, &mut notes)?;

    Ok(Trace {
        path: db.path.clone(),
        source: Source::Nsys,
        producer,
        strings,
        kernels,
        launches,
        ranges,
        range_meta: Vec::new(),
        memops: memops.into_iter().map(|(m, _)| m).collect(),
        domains,
        devices,
        stats,
        notes,
    })
}

fn read_string_ids(db: &Db) -> Result<Vec<(i64, String)>> {
    let run = || -> rusqlite::Result<Vec<(i64, String)>> {
        let mut st = db.conn.prepare("SELECT id, value FROM StringIds")?;
        let rows = st.query_map([], |r| {
            Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<String>>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            if let (Some(id), Some(v)) = row? {
                out.push((id, v));
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
) -> Result<Vec<Kernel>> {
    let (list, _) = db.select_list(table, KERNEL_COLS, &["start", "end"])?;
    let sql = format!("SELECT {list} FROM \"{table}\"");
    let mut kernels = Vec::new();
    let unknown = strings.push("<unknown kernel>");
    let mut run = || -> rusqlite::Result<()> {
        let mut st = db.conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        let mut row_no = 0u64;
        while let Some(r) = rows.next()? {
            row_no += 1;
            stats.kernel_rows += 1;
            let int = |i: usize| -> rusqlite::Result<Option<i64>> { r.get::<_, Option<i64>>(i) };
            let (Some(start), Some(end)) = (int(0)?, int(1)?) else {
                stats.skipped_null += 1;
                continue;
            };
            if end <= start {
                stats.non_positive_duration += 1;
            }
            let name_of = |i: usize| -> rusqlite::Result<Option<StrRef>> {
                Ok(int(i)?.and_then(|id| strings.by_file_id(id)))
            };
            let mangled = name_of(9)?;
            let name = name_of(7)?.or(name_of(8)?).or(mangled).unwrap_or(unknown);
            kernels.push(Kernel {
                row: row_no - 1,
                start_ns: start,
                end_ns: end,
                device: int(2)?.unwrap_or(0),
                context: int(3)?,
                stream: int(4)?.unwrap_or(0),
                correlation: int(5)?.unwrap_or(-1),
                global_pid: int(6)?.map(|p| p as u64),
                name,
                mangled,
                grid: [
                    int(10)?.unwrap_or(0),
                    int(11)?.unwrap_or(0),
                    int(12)?.unwrap_or(0),
                ],
                block: [
                    int(13)?.unwrap_or(0),
                    int(14)?.unwrap_or(0),
                    int(15)?.unwrap_or(0),
                ],
                registers_per_thread: int(16)?,
                static_smem_bytes: int(17)?,
                dynamic_smem_bytes: int(18)?,
                graph_id: int(19)?,
                graph_node_id: int(20)?,
                launch: None,
                kineto: None,
            });
        }
        Ok(())
    };
    run().map_err(|e| db.err(format!("reading table {table}"), e))?;
    Ok(kernels)
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

fn read_launches(
    db: &Db,
    table: &str,
    kernels: &mut [Kernel],
    memops: &mut [(MemOp, u64)],
    strings: &mut StrPool,
) -> Result<Vec<Launch>> {
    // (process bits, correlation id) → launch slot
    let mut want: HashMap<(u64, i64), u32> = HashMap::with_capacity(kernels.len());
    let keys = kernels
        .iter()
        .map(|k| (k.global_pid.unwrap_or(0) & PID_MASK, k.correlation))
        .chain(
            memops
                .iter()
                .map(|(m, pid)| (pid & PID_MASK, m.correlation)),
        );
    for key in keys {
        let next = want.len() as u32;
        want.entry(key).or_insert(next);
    }
    let mut slots: Vec<Option<(Launch, bool)>> = vec![None; want.len()];
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
    let sql = format!("SELECT {list} FROM \"{table}\"{filter}");
    let mut api_names: HashMap<i64, (StrRef, bool)> = HashMap::new();
    let mut run = || -> rusqlite::Result<()> {
        let mut st = db.conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let (Some(corr), Some(gtid)) =
                (r.get::<_, Option<i64>>(3)?, r.get::<_, Option<i64>>(2)?)
            else {
                continue;
            };
            let gtid = gtid as u64;
            let Some(&slot) = want.get(&(gtid & PID_MASK, corr)) else {
                continue;
            };
            let (Some(start), Some(end)) =
                (r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?)
            else {
                continue;
            };
            let (api, versioned) = match r.get::<_, Option<i64>>(4)? {
                Some(id) => match api_names.get(&id) {
                    Some(&(s, v)) => (Some(s), v),
                    None => {
                        let raw = strings.by_file_id(id).map(|s| strings.get(s).to_owned());
                        match raw {
                            Some(raw) => {
                                let (base, v) = api_base_name(&raw);
                                let s = strings.push(base);
                                api_names.insert(id, (s, v));
                                (Some(s), v)
                            }
                            None => (None, false),
                        }
                    }
                },
                None => (None, false),
            };
            let launch = Launch {
                start_ns: start,
                end_ns: end,
                thread: gtid,
                pid: (gtid >> 24) & 0xFF_FFFF,
                tid: gtid & 0xFF_FFFF,
                correlation: corr,
                api,
            };
            let cell = &mut slots[slot as usize];
            // Without eventClass (≤ 2020.x) CUDA backtrace rows duplicate a
            // call with the unversioned name: prefer the `_vNNNN` row.
            match cell {
                None => *cell = Some((launch, versioned)),
                Some((_, prev_versioned)) if !*prev_versioned && versioned => {
                    *cell = Some((launch, versioned))
                }
                Some(_) => {}
            }
        }
        Ok(())
    };
    run().map_err(|e| db.err(format!("reading table {table}"), e))?;

    let mut launches = Vec::new();
    let mut index = vec![u32::MAX; slots.len()];
    for (i, s) in slots.into_iter().enumerate() {
        if let Some((l, _)) = s {
            index[i] = launches.len() as u32;
            launches.push(l);
        }
    }
    let find = |key: (u64, i64)| -> Option<u32> {
        let li = index[*want.get(&key)? as usize];
        (li != u32::MAX).then_some(li)
    };
    for k in kernels.iter_mut() {
        k.launch = find((k.global_pid.unwrap_or(0) & PID_MASK, k.correlation));
    }
    for (m, pid) in memops.iter_mut() {
        m.launch = find((*pid & PID_MASK, m.correlation));
    }
    Ok(launches)
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

/// Memory copies and sets, with the process bits of each row.
fn read_memops(db: &Db, strings: &mut StrPool) -> Result<Vec<(MemOp, u64)>> {
    let mut out = Vec::new();
    let mut names: HashMap<&'static str, StrRef> = HashMap::new();
    for (logical, is_copy) in [
        ("CUPTI_ACTIVITY_KIND_MEMCPY", true),
        ("CUPTI_ACTIVITY_KIND_MEMSET", false),
    ] {
        let Some(table) = db.resolve(logical) else {
            continue;
        };
        let (list, _) = db.select_list(
            &table,
            &[
                "start",
                "end",
                "deviceId",
                "streamId",
                "correlationId",
                "globalPid",
                "bytes",
                "copyKind",
            ],
            &["start", "end"],
        )?;
        let sql = format!("SELECT {list} FROM \"{table}\"");
        let mut run = || -> rusqlite::Result<()> {
            let mut st = db.conn.prepare(&sql)?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let int =
                    |i: usize| -> rusqlite::Result<Option<i64>> { r.get::<_, Option<i64>>(i) };
                let (Some(start), Some(end)) = (int(0)?, int(1)?) else {
                    continue;
                };
                let label = if is_copy {
                    copy_kind(int(7)?)
                } else {
                    "Memset"
                };
                let name = *names.entry(label).or_insert_with(|| strings.push(label));
                out.push((
                    MemOp {
                        start_ns: start,
                        end_ns: end,
                        device: int(2)?.unwrap_or(0),
                        stream: int(3)?.unwrap_or(0),
                        correlation: int(4)?.unwrap_or(-1),
                        bytes: int(6)?,
                        name,
                        launch: None,
                    },
                    int(5)?.unwrap_or(0) as u64,
                ));
            }
            Ok(())
        };
        run().map_err(|e| db.err(format!("reading table {table}"), e))?;
    }
    Ok(out)
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

type Domains = Vec<((u64, i64), StrRef)>;

fn read_nvtx(
    db: &Db,
    table: &str,
    threads: &HashSet<u64>,
    capture_end: i64,
    strings: &mut StrPool,
    stats: &mut ReadStats,
    opts: ReadOptions,
) -> Result<(Vec<Range>, Domains)> {
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
    let filter = if has_type {
        format!(
            " WHERE eventType IN ({NVTX_PUSHPOP}, {NVTX_STARTEND}, {NVTXT_PUSHPOP}, {NVTXT_STARTEND}, {NVTX_DOMAIN_CREATE})"
        )
    } else {
        " WHERE \"end\" IS NOT NULL".to_owned()
    };
    // rowid is always selectable although pragma table_info does not list it
    let sql = format!("SELECT {list}, rowid FROM \"{table}\"{filter}");
    let mut ranges = Vec::new();
    let mut domains = Vec::new();
    let mut max_end = capture_end;
    let mut run = || -> rusqlite::Result<()> {
        let mut st = db.conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            stats.nvtx_rows += 1;
            let event_type = if has_type {
                r.get::<_, Option<i64>>(3)?.unwrap_or(NVTX_PUSHPOP)
            } else {
                NVTX_PUSHPOP
            };
            let Some(gtid) = r.get::<_, Option<i64>>(2)? else {
                stats.ranges_skipped += 1;
                continue;
            };
            let gtid = gtid as u64;
            if event_type == NVTX_DOMAIN_CREATE {
                let domain = r.get::<_, Option<i64>>(6)?.unwrap_or(0);
                if let Some(name) = text_of(r, strings)? {
                    domains.push(((gtid & PID_MASK, domain), name));
                }
                continue;
            }
            if !threads.contains(&gtid) {
                continue;
            }
            let kind = match event_type {
                NVTX_STARTEND | NVTXT_STARTEND => {
                    // A range that ended on another thread does not describe
                    // the starting thread's work (NVIDIA's reports skip them).
                    if !opts.compat
                        && r.get::<_, Option<i64>>(7)?
                            .is_some_and(|e| e as u64 != gtid)
                    {
                        continue;
                    }
                    RangeKind::StartEnd
                }
                _ => RangeKind::PushPop,
            };
            let Some(start) = r.get::<_, Option<i64>>(0)? else {
                stats.ranges_skipped += 1;
                continue;
            };
            let end = match r.get::<_, Option<i64>>(1)? {
                Some(e) => e,
                None => {
                    stats.ranges_open += 1;
                    i64::MAX
                }
            };
            let Some(text) = text_of(r, strings)? else {
                stats.ranges_skipped += 1;
                continue;
            };
            if end != i64::MAX {
                max_end = max_end.max(end);
            }
            stats.ranges += 1;
            ranges.push(Range {
                start_ns: start,
                end_ns: end,
                thread: gtid,
                text,
                domain: r.get::<_, Option<i64>>(6)?.unwrap_or(0),
                kind,
                order: r.get::<_, Option<i64>>(8)?.unwrap_or(0),
                meta: None,
            });
        }
        Ok(())
    };
    run().map_err(|e| db.err(format!("reading table {table}"), e))?;
    for r in &mut ranges {
        if r.end_ns == i64::MAX {
            r.end_ns = max_end;
        }
    }
    Ok((ranges, domains))
}

fn text_of(r: &rusqlite::Row<'_>, strings: &mut StrPool) -> rusqlite::Result<Option<StrRef>> {
    if let Some(t) = r.get::<_, Option<String>>(4)? {
        return Ok(Some(strings.push(&t)));
    }
    Ok(r.get::<_, Option<i64>>(5)?
        .and_then(|id| strings.by_file_id(id)))
}

fn read_devices(
    db: &Db,
    kernels: &[Kernel],
    launches: &[Launch],
    notes: &mut Vec<String>,
) -> Result<Vec<DeviceInfo>> {
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
    } else {
        let used: HashSet<i64> = kernels.iter().map(|k| k.device).collect();
        if !used.is_empty() {
            notes.push(
                "no GPU table (TARGET_INFO_GPU): device names and SM counts are unknown".into(),
            );
        }
    }
    let _ = launches;
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
                r.get::<_, Option<i64>>(0)?.unwrap_or(-1),
                r.get::<_, Option<i64>>(1)?.unwrap_or(-1),
                r.get::<_, Option<i64>>(2)?,
            ))
        })?;
        rows.collect()
    };
    run().map_err(|e| db.err("reading table TARGET_INFO_CUDA_DEVICE", e))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
