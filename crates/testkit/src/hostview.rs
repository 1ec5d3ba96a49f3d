//! Synthetic nsys exports for the host views (`rprof steps`, `rprof idle`,
//! `rprof launch`): kernels and NVTX ranges as in [`Synth`], plus memory
//! copies and sets with the API calls that issued them, any other API call
//! (synchronisation, blocking copies), and CUPTI synchronisation records,
//! in the nsys 2026.2 (schema 3.25.0) column layout of
//! `CUPTI_ACTIVITY_KIND_MEMCPY`, `_MEMSET` and `_SYNCHRONIZATION`.

use std::path::Path;

use rusqlite::{Connection, params};

use crate::{Synth, global_pid, global_tid};

/// The nsys 2026.2 DDL of the copy, set and synchronisation tables.
pub const HOST_DDL: &str = "
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
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, deprecatedSyncType INTEGER,
    syncType INTEGER NOT NULL, eventId INTEGER NOT NULL, eventSyncId INTEGER
);
";

/// A copy (`copy_kind` Some: nsys `copyKind`, 1 HtoD, 2 DtoH, 8 DtoD) or a
/// set (`None`) on the GPU, with the API call that issued it.
#[derive(Clone, Debug)]
pub struct SynthMemOp {
    /// GPU start, ns.
    pub start: i64,
    /// GPU end, ns.
    pub end: i64,
    /// Device.
    pub device: i64,
    /// Stream.
    pub stream: i64,
    /// Correlation id (shared with the call).
    pub corr: i64,
    /// Bytes.
    pub bytes: i64,
    /// `Some(copyKind)` for a copy, `None` for a set.
    pub copy_kind: Option<i64>,
    /// Process of the op and its call.
    pub pid: u64,
    /// Calling thread.
    pub tid: u64,
    /// The call `(start, end, name with suffix)`; `None` = no row.
    pub call: Option<(i64, i64, String)>,
}

impl SynthMemOp {
    /// An HtoD copy on device 0 stream 7, pid/tid 100, issued by
    /// `cudaMemcpyAsync` at `[call_start, call_end]`.
    pub fn copy(start: i64, end: i64, corr: i64, call_start: i64, call_end: i64) -> SynthMemOp {
        SynthMemOp {
            start,
            end,
            device: 0,
            stream: 7,
            corr,
            bytes: 1 << 20,
            copy_kind: Some(1),
            pid: 100,
            tid: 100,
            call: Some((call_start, call_end, "cudaMemcpyAsync_v3020".to_owned())),
        }
    }

    /// A memset on device 0 stream 7 issued by `cudaMemsetAsync`.
    pub fn set(start: i64, end: i64, corr: i64, call_start: i64, call_end: i64) -> SynthMemOp {
        SynthMemOp {
            copy_kind: None,
            call: Some((call_start, call_end, "cudaMemsetAsync_v3020".to_owned())),
            ..SynthMemOp::copy(start, end, corr, call_start, call_end)
        }
    }

    /// On this stream.
    pub fn on_stream(mut self, stream: i64) -> SynthMemOp {
        self.stream = stream;
        self
    }
}

/// A CUPTI synchronisation record.
#[derive(Clone, Debug)]
pub struct SynthSync {
    /// Start, ns.
    pub start: i64,
    /// End, ns.
    pub end: i64,
    /// Device.
    pub device: i64,
    /// Stream.
    pub stream: i64,
    /// Correlation id of the API call that waited.
    pub corr: i64,
    /// Process.
    pub pid: u64,
    /// `ENUM_CUPTI_SYNC_TYPE`: 1 event, 2 stream wait event, 3 stream,
    /// 4 context.
    pub sync_type: i64,
}

/// A trace for the host views.
#[derive(Clone, Debug, Default)]
pub struct HostSynth {
    /// Kernels, their launches, NVTX ranges, GPUs and extra API calls.
    pub base: Synth,
    /// Copies and sets.
    pub memops: Vec<SynthMemOp>,
    /// CUPTI synchronisation records.
    pub syncs: Vec<SynthSync>,
}

impl HostSynth {
    /// An API call that is not a launch (`cudaStreamSynchronize_v3020`,
    /// `cudaMemcpy_v3020`, …) on `pid`/`tid`.
    pub fn call(&mut self, start: i64, end: i64, pid: u64, tid: u64, corr: i64, name: &str) {
        self.base
            .extra_calls
            .push((start, end, pid, tid, corr, name.to_owned(), class(name)));
    }

    /// Write the export (the file must not exist).
    pub fn write_nsys(&self, path: &Path) -> rusqlite::Result<()> {
        let mut base = self.base.clone();
        for m in &self.memops {
            if let Some((s, e, name)) = &m.call {
                base.extra_calls
                    .push((*s, *e, m.pid, m.tid, m.corr, name.clone(), class(name)));
            }
        }
        base.write_nsys(path)?;
        let conn = Connection::open(path)?;
        conn.execute_batch(HOST_DDL)?;
        for m in &self.memops {
            match m.copy_kind {
                Some(kind) => conn.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, 0, 2)",
                    params![m.start, m.end, m.device, m.stream, m.corr, global_pid(m.pid), m.bytes, kind],
                )?,
                None => conn.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid, value, bytes, memKind) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, 0, ?7, 2)",
                    params![m.start, m.end, m.device, m.stream, m.corr, global_pid(m.pid), m.bytes],
                )?,
            };
        }
        for s in &self.syncs {
            conn.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId, globalPid, syncType, eventId) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, 0)",
                params![s.start, s.end, s.device, s.stream, s.corr, global_pid(s.pid), s.sync_type],
            )?;
        }
        Ok(())
    }
}

/// nsys `eventClass`: 0 for the runtime API (`cuda…`), 1 for the driver.
fn class(name: &str) -> i64 {
    i64::from(!name.starts_with("cuda"))
}

/// The packed thread id of `pid`/`tid`, as the runtime rows store it.
pub fn thread(pid: u64, tid: u64) -> i64 {
    global_tid(pid, tid)
}
