//! Memory rows for synthetic nsys exports: `CUDA_GPU_MEMORY_USAGE_EVENTS`,
//! `CUDA_GPU_MEMORY_POOL_EVENTS`, `CUPTI_ACTIVITY_KIND_MEMCPY` and
//! `CUPTI_ACTIVITY_KIND_MEMSET` in the
//! column layout of an nsys 2026.2 export (schema 3.25.0), added to a file
//! that [`crate::Synth::write_nsys`] wrote. The launching API calls of
//! copies and sets go in [`crate::Synth::extra_calls`].

use std::path::Path;

use rusqlite::{Connection, params};

use crate::global_pid;

/// The nsys DDL of the four tables (nsys 2026.2 column lists; the pool
/// table's as the 2022.4 exporter declares it).
pub const MEM_DDL: &str = "
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (
    start INTEGER NOT NULL, globalPid INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, address INTEGER NOT NULL, pc INTEGER NOT NULL,
    bytes INTEGER NOT NULL, memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL,
    name TEXT, correlationId INTEGER, localMemoryPoolAddress INTEGER,
    localMemoryPoolReleaseThreshold INTEGER, localMemoryPoolSize INTEGER,
    localMemoryPoolUtilizedSize INTEGER, importedMemoryPoolAddress INTEGER,
    importedMemoryPoolProcessId INTEGER
);
CREATE TABLE CUDA_GPU_MEMORY_POOL_EVENTS (
    start INTEGER NOT NULL, globalPid INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    address INTEGER NOT NULL, operationType INTEGER NOT NULL, poolType INTEGER NOT NULL,
    correlationId INTEGER, minBytesToKeep INTEGER, localMemoryPoolReleaseThreshold INTEGER,
    localMemoryPoolSize INTEGER, localMemoryPoolUtilizedSize INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
    copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
    srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
    migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
    graphNodeId INTEGER, memKind INTEGER
);
";

/// One row of `CUDA_GPU_MEMORY_USAGE_EVENTS`.
#[derive(Clone, Debug)]
pub struct SynthMemEvent {
    /// Time, ns.
    pub start: i64,
    /// Process.
    pub pid: u64,
    /// Device.
    pub device: i64,
    /// Address.
    pub address: i64,
    /// Bytes (positive for both operations, as nsys writes them).
    pub bytes: i64,
    /// 0 allocation, 1 deallocation.
    pub op: i64,
    /// Correlation id of the API call.
    pub corr: Option<i64>,
}

impl SynthMemEvent {
    /// An allocation on device 0 of pid 100.
    pub fn alloc(start: i64, address: i64, bytes: i64, corr: i64) -> SynthMemEvent {
        SynthMemEvent {
            start,
            pid: 100,
            device: 0,
            address,
            bytes,
            op: 0,
            corr: Some(corr),
        }
    }

    /// A release on device 0 of pid 100.
    pub fn free(start: i64, address: i64, bytes: i64, corr: i64) -> SynthMemEvent {
        SynthMemEvent {
            op: 1,
            ..SynthMemEvent::alloc(start, address, bytes, corr)
        }
    }
}

/// One copy (`copy_kind` is `Some`) or set (`None`).
#[derive(Clone, Debug)]
pub struct SynthMemOp {
    /// GPU start, ns.
    pub start: i64,
    /// GPU end, ns.
    pub end: i64,
    /// Process.
    pub pid: u64,
    /// Device.
    pub device: i64,
    /// Stream.
    pub stream: i64,
    /// Correlation id.
    pub corr: i64,
    /// Bytes.
    pub bytes: i64,
    /// `copyKind` (nsys numbering), or `None` for a memset.
    pub copy_kind: Option<i64>,
    /// `srcKind` (copies) or `memKind` (sets), nsys numbering.
    pub src_kind: i64,
    /// `dstKind` (copies).
    pub dst_kind: i64,
}

impl SynthMemOp {
    /// A copy on device 0, stream 7, pid 100.
    pub fn copy(
        start: i64,
        end: i64,
        corr: i64,
        bytes: i64,
        kind: i64,
        src: i64,
        dst: i64,
    ) -> Self {
        SynthMemOp {
            start,
            end,
            pid: 100,
            device: 0,
            stream: 7,
            corr,
            bytes,
            copy_kind: Some(kind),
            src_kind: src,
            dst_kind: dst,
        }
    }

    /// A memset of memory kind `mem` on device 0, stream 7, pid 100.
    pub fn set(start: i64, end: i64, corr: i64, bytes: i64, mem: i64) -> Self {
        SynthMemOp {
            copy_kind: None,
            src_kind: mem,
            dst_kind: 0,
            ..SynthMemOp::copy(start, end, corr, bytes, 0, 0, 0)
        }
    }
}

/// One row of `CUDA_GPU_MEMORY_POOL_EVENTS` (local pool, pid 100).
#[derive(Clone, Debug)]
pub struct SynthPoolEvent {
    /// Time, ns.
    pub start: i64,
    /// Device.
    pub device: i64,
    /// Pool base address.
    pub address: i64,
    /// 1 created, 2 destroyed, 3 trimmed.
    pub op: i64,
    /// `localMemoryPoolSize`.
    pub size: i64,
    /// `localMemoryPoolUtilizedSize`.
    pub utilized: i64,
}

/// Memory rows to add to a synthetic export.
#[derive(Clone, Debug, Default)]
pub struct MemRows {
    /// Allocation and release rows.
    pub events: Vec<SynthMemEvent>,
    /// Memory-pool rows (the pool table is created only when there are some).
    pub pools: Vec<SynthPoolEvent>,
    /// Copies and sets.
    pub ops: Vec<SynthMemOp>,
    /// Create `CUDA_GPU_MEMORY_USAGE_EVENTS` even without rows (a capture
    /// with `--cuda-memory-usage=true` that saw none).
    pub usage_table: bool,
}

impl MemRows {
    /// Create the tables and insert the rows into the export at `path`
    /// (written before by [`crate::Synth::write_nsys`]). The usage table is
    /// created when there are events or `usage_table` is set, the pool table
    /// when there are pool rows; the copy and set tables always.
    pub fn add_to(&self, path: &Path) -> rusqlite::Result<()> {
        let conn = Connection::open(path)?;
        conn.execute_batch(MEM_DDL)?;
        if self.events.is_empty() && !self.usage_table {
            conn.execute_batch("DROP TABLE CUDA_GPU_MEMORY_USAGE_EVENTS")?;
        }
        if self.pools.is_empty() {
            conn.execute_batch("DROP TABLE CUDA_GPU_MEMORY_POOL_EVENTS")?;
        }
        for p in &self.pools {
            conn.execute(
                "INSERT INTO CUDA_GPU_MEMORY_POOL_EVENTS (start, globalPid, deviceId, address, operationType, poolType, localMemoryPoolSize, localMemoryPoolUtilizedSize) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7)",
                params![p.start, global_pid(100), p.device, p.address, p.op, p.size, p.utilized],
            )?;
        }
        for e in &self.events {
            conn.execute(
                "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, pc, bytes, memKind, memoryOperationType, correlationId) VALUES (?1, ?2, ?3, 1, ?4, 0, ?5, 2, ?6, ?7)",
                params![e.start, global_pid(e.pid), e.device, e.address, e.bytes, e.op, e.corr],
            )?;
        }
        for m in &self.ops {
            match m.copy_kind {
                Some(k) => conn.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    params![m.start, m.end, m.device, m.stream, m.corr, global_pid(m.pid), m.bytes, k, m.src_kind, m.dst_kind],
                )?,
                None => conn.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid, value, bytes, memKind) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, 0, ?7, ?8)",
                    params![m.start, m.end, m.device, m.stream, m.corr, global_pid(m.pid), m.bytes, m.src_kind],
                )?,
            };
        }
        Ok(())
    }
}
