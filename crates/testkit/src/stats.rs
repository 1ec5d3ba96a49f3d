//! Extra tables for the `rprof stats` tests: memory copies and sets (with
//! nsys's enum label tables), OS runtime calls and unified-memory page
//! faults, added to a file written by [`crate::Synth::write_nsys`]. Column
//! lists are nsys's own (2023.4–2026.2 exports).

use std::path::Path;

use rusqlite::{Connection, params};

use crate::{global_pid, global_tid};

const DDL: &str = "
CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_MEMCPY (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
    deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,
    srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
    graphNodeId INTEGER, virtualAddress INTEGER
);
CREATE TABLE IF NOT EXISTS CUPTI_ACTIVITY_KIND_MEMSET (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
    graphNodeId INTEGER, memKind INTEGER
);
CREATE TABLE IF NOT EXISTS ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);
INSERT OR IGNORE INTO ENUM_CUDA_MEMCPY_OPER VALUES
    (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'), (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'),
    (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'), (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device'),
    (10, 'CUDA_MEMCPY_KIND_PTOP', 'Peer-to-Peer'),
    (11, 'CUDA_MEMCPY_KIND_UVM_HTOD', 'Unified Host-to-Device'),
    (12, 'CUDA_MEMCPY_KIND_UVM_DTOH', 'Unified Device-to-Host');
INSERT OR IGNORE INTO ENUM_CUDA_MEM_KIND VALUES
    (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'), (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'),
    (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device'), (4, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED', 'Managed');
";

/// One copy (`copy_kind` Some) or memset (`None`) and its launch call.
#[derive(Clone, Debug)]
pub struct SynthMemOp {
    /// GPU start, ns.
    pub start: i64,
    /// GPU end, ns.
    pub end: i64,
    /// `copyKind` (1 HtoD, 2 DtoH, 8 DtoD, 11/12 unified); `None`: memset.
    pub copy_kind: Option<i64>,
    /// Bytes.
    pub bytes: i64,
    /// Correlation id.
    pub corr: i64,
    /// Process and launching thread.
    pub pid: u64,
    /// Launching thread.
    pub tid: u64,
    /// Launch call `(start, end, name)`; `None`: no API row.
    pub launch: Option<(i64, i64, String)>,
    /// Unified-memory virtual address.
    pub virtual_address: Option<i64>,
}

impl SynthMemOp {
    /// A copy of `kind` on pid/tid 100, launched by `cudaMemcpyAsync` just
    /// before it.
    pub fn copy(kind: i64, start: i64, end: i64, bytes: i64, corr: i64) -> SynthMemOp {
        SynthMemOp {
            start,
            end,
            copy_kind: Some(kind),
            bytes,
            corr,
            pid: 100,
            tid: 100,
            launch: Some((start - 20, start - 10, "cudaMemcpyAsync_v3020".into())),
            virtual_address: None,
        }
    }

    /// A memset on pid/tid 100.
    pub fn set(start: i64, end: i64, bytes: i64, corr: i64) -> SynthMemOp {
        SynthMemOp {
            copy_kind: None,
            launch: Some((start - 20, start - 10, "cudaMemsetAsync_v3020".into())),
            ..SynthMemOp::copy(0, start, end, bytes, corr)
        }
    }
}

fn string_id(conn: &Connection, s: &str) -> rusqlite::Result<i64> {
    if let Ok(id) = conn.query_row("SELECT id FROM StringIds WHERE value = ?1", [s], |r| {
        r.get::<_, i64>(0)
    }) {
        return Ok(id);
    }
    let next: i64 = conn.query_row("SELECT coalesce(max(id), 0) + 1 FROM StringIds", [], |r| {
        r.get(0)
    })?;
    conn.execute(
        "INSERT INTO StringIds (id, value) VALUES (?1, ?2)",
        params![next, s],
    )?;
    Ok(next)
}

/// Add copies and sets (and their launch calls) to an nsys file.
pub fn add_memops(path: &Path, ops: &[SynthMemOp]) -> rusqlite::Result<()> {
    let conn = Connection::open(path)?;
    conn.execute_batch(DDL)?;
    for m in ops {
        match m.copy_kind {
            Some(k) => conn.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind, virtualAddress) VALUES (?1, ?2, 0, 1, 7, ?3, ?4, ?5, ?6, 0, 2, ?7)",
                params![m.start, m.end, m.corr, global_pid(m.pid), m.bytes, k, m.virtual_address],
            )?,
            None => conn.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid, value, bytes, memKind) VALUES (?1, ?2, 0, 1, 7, ?3, ?4, 0, ?5, 2)",
                params![m.start, m.end, m.corr, global_pid(m.pid), m.bytes],
            )?,
        };
        if let Some((s, e, name)) = &m.launch {
            let id = string_id(&conn, name)?;
            conn.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) VALUES (?1, ?2, 0, ?3, ?4, ?5, 0)",
                params![s, e, global_tid(m.pid, m.tid), m.corr, id],
            )?;
        }
    }
    Ok(())
}

/// Add OS runtime calls `(start, end, pid, tid, function)`.
pub fn add_osrt(path: &Path, calls: &[(i64, i64, u64, u64, &str)]) -> rusqlite::Result<()> {
    let conn = Connection::open(path)?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER NOT NULL);",
    )?;
    for (s, e, pid, tid, name) in calls {
        let id = string_id(&conn, name)?;
        conn.execute(
            "INSERT INTO OSRT_API VALUES (?1, ?2, 27, ?3, ?4, 0, 0, 0)",
            params![s, e, global_tid(*pid, *tid), id],
        )?;
    }
    Ok(())
}

/// Add unified-memory page faults: CPU `(start, address)`, GPU `(start,
/// end, address, faults)`, all in process 100.
pub fn add_um_faults(
    path: &Path,
    cpu: &[(i64, i64)],
    gpu: &[(i64, i64, i64, i64)],
) -> rusqlite::Result<()> {
    let conn = Connection::open(path)?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS CUDA_UM_CPU_PAGE_FAULT_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL, address INTEGER NOT NULL, originalFaultPc INTEGER, CpuInstruction INTEGER NOT NULL, module INTEGER NOT NULL, unresolvedFaultPc INTEGER);
         CREATE TABLE IF NOT EXISTS CUDA_UM_GPU_PAGE_FAULT_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL, globalPid INTEGER NOT NULL, deviceId INTEGER NOT NULL, address INTEGER NOT NULL, numberOfPageFaults INTEGER NOT NULL, faultAccessType INTEGER NOT NULL);",
    )?;
    for (s, a) in cpu {
        conn.execute(
            "INSERT INTO CUDA_UM_CPU_PAGE_FAULT_EVENTS VALUES (?1, ?2, ?3, NULL, 0, 0, 0)",
            params![s, global_pid(100), a],
        )?;
    }
    for (s, e, a, n) in gpu {
        conn.execute(
            "INSERT INTO CUDA_UM_GPU_PAGE_FAULT_EVENTS VALUES (?1, ?2, ?3, 0, ?4, ?5, 0)",
            params![s, e, global_pid(100), a, n],
        )?;
    }
    Ok(())
}
