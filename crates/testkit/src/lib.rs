//! rprof-testkit: synthetic Nsight Systems exports for tests and benches.
//!
//! [`Synth`] describes a small trace (kernels, their launch calls, NVTX
//! ranges, a GPU) and [`Synth::write_nsys`] writes it as a SQLite file in the
//! exact table layout of an nsys 2026.2 export (schema 3.25.0): the
//! `CREATE TABLE` statements below are the exporter's own column lists. Files
//! made here are synthetic and say so in `META_DATA_EXPORT`
//! (`EXPORT_PRODUCT_NAME` = `rprof-testkit synthetic`).
//!
//! The modules stay public namespaces on purpose: each adds the tables one
//! view's tests need ([`dist`], [`hostview`], [`mem`], [`nesting`],
//! [`stats`]), written separately, and several define a row type of the
//! same name for their own table layout (`mem::SynthMemOp`,
//! `hostview::SynthMemOp`, `stats::SynthMemOp`), so a test names the view
//! whose rows it writes.
#![deny(missing_docs)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod mem;
pub mod nesting;
pub mod stats;

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, params};

pub mod dist;
pub mod hostview;

/// The nsys 2026.2 DDL of the tables rprof reads.
pub const NSYS_DDL: &str = "
CREATE TABLE StringIds (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    value                       TEXT      NOT NULL
);
CREATE TABLE META_DATA_EXPORT (
    name                        TEXT      NOT NULL,
    value                       TEXT
);
CREATE TABLE ANALYSIS_DETAILS (
    globalVid                   INTEGER   NOT NULL,
    duration                    INTEGER   NOT NULL,
    startTime                   INTEGER   NOT NULL,
    stopTime                    INTEGER   NOT NULL
);
CREATE TABLE TARGET_INFO_GPU (
    vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER,
    l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
    smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER,
    ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, nodeMask INTEGER, constantMemory INTEGER,
    maxIPC INTEGER, maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER,
    maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER,
    threadsPerWarp INTEGER, asyncEngines INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER,
    maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER, maxBlockDimZ INTEGER,
    maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER, computeMajor INTEGER,
    computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
    shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
    registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
    gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
    blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
    dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
    localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
    graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER,
    qmdPreexitDone INTEGER, qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER,
    clusterY INTEGER, clusterZ INTEGER, clusterSchedulingPolicy INTEGER,
    maxPotentialClusterSize INTEGER, maxActiveClusters INTEGER,
    sharedMemoryRequestedPercentage INTEGER, tensorSizeMinusOneElements INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL, callchainId INTEGER
);
CREATE TABLE NVTX_EVENTS (
    start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
    category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
    textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
    doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL,
    jsonTextId INTEGER, jsonText TEXT, binaryData TEXT
);
";

/// nsys packs machine, process and thread into one integer.
pub fn global_tid(pid: u64, tid: u64) -> i64 {
    ((1u64 << 48) | (pid << 24) | tid) as i64
}

/// nsys `globalPid`: the process bits alone.
pub fn global_pid(pid: u64) -> i64 {
    ((1u64 << 48) | (pid << 24)) as i64
}

/// One kernel and, optionally, the API call that launched it.
#[derive(Clone, Debug)]
pub struct SynthKernel {
    /// Demangled name.
    pub name: String,
    /// Mangled name, if the export should carry one.
    pub mangled: Option<String>,
    /// GPU start, ns.
    pub start: i64,
    /// GPU end, ns.
    pub end: i64,
    /// Correlation id.
    pub corr: i64,
    /// Process id.
    pub pid: u64,
    /// Launching thread id; the launch row uses it.
    pub tid: u64,
    /// Launch call `(start, end, api name with suffix)`; `None` = no row.
    pub launch: Option<(i64, i64, String)>,
    /// Grid.
    pub grid: [i64; 3],
    /// Block.
    pub block: [i64; 3],
    /// Device ordinal.
    pub device: i64,
    /// Stream.
    pub stream: i64,
    /// Registers per thread.
    pub regs: i64,
    /// Static and dynamic shared memory, bytes.
    pub smem: (i64, i64),
}

impl SynthKernel {
    /// A kernel on pid 100 / tid 100, launched by `cudaLaunchKernel`
    /// 100 ns before it starts and taking 50 ns.
    pub fn new(name: &str, start: i64, end: i64, corr: i64) -> SynthKernel {
        SynthKernel {
            name: name.to_owned(),
            mangled: None,
            start,
            end,
            corr,
            pid: 100,
            tid: 100,
            launch: Some((start - 100, start - 50, "cudaLaunchKernel_v7000".to_owned())),
            grid: [1, 1, 1],
            block: [128, 1, 1],
            device: 0,
            stream: 7,
            regs: 32,
            smem: (0, 0),
        }
    }

    /// Launch call at `[start, end]` on the same thread.
    pub fn launched_at(mut self, start: i64, end: i64) -> SynthKernel {
        let api = self
            .launch
            .as_ref()
            .map_or("cudaLaunchKernel_v7000".to_owned(), |l| l.2.clone());
        self.launch = Some((start, end, api));
        self
    }
}

/// One NVTX row.
#[derive(Clone, Debug)]
pub struct SynthRange {
    /// Message.
    pub text: String,
    /// Start, ns.
    pub start: i64,
    /// End, ns (`None` = NULL, as for marks or per the docs for open ranges).
    pub end: Option<i64>,
    /// 59 push/pop, 60 start/end, 34 mark, 75 domain create.
    pub event_type: i64,
    /// Process and thread.
    pub pid: u64,
    /// Thread id.
    pub tid: u64,
    /// Store the text as a registered string (`textId`), not inline.
    pub registered: bool,
    /// Domain id (0 = default).
    pub domain: i64,
    /// Ending thread for start/end ranges that end elsewhere.
    pub end_tid: Option<u64>,
}

impl SynthRange {
    /// A push/pop range on pid 100 / tid 100.
    pub fn push(text: &str, start: i64, end: i64) -> SynthRange {
        SynthRange {
            text: text.to_owned(),
            start,
            end: Some(end),
            event_type: 59,
            pid: 100,
            tid: 100,
            registered: false,
            domain: 0,
            end_tid: None,
        }
    }
}

/// A GPU description row.
#[derive(Clone, Debug)]
pub struct SynthGpu {
    /// CUDA ordinal.
    pub cu_device: i64,
    /// Name.
    pub name: String,
    /// SMs.
    pub sm_count: i64,
    /// Compute capability.
    pub cc: (i64, i64),
    /// Bytes/s.
    pub bandwidth: i64,
    /// Hz.
    pub clock: i64,
}

impl SynthGpu {
    /// An A100-SXM4-40GB as nsys describes it.
    pub fn a100() -> SynthGpu {
        SynthGpu {
            cu_device: 0,
            name: "NVIDIA A100-SXM4-40GB".into(),
            sm_count: 108,
            cc: (8, 0),
            bandwidth: 1_555_200_000_000,
            clock: 1_410_000_000,
        }
    }
}

/// A whole synthetic trace.
#[derive(Clone, Debug, Default)]
pub struct Synth {
    /// Kernels in table order.
    pub kernels: Vec<SynthKernel>,
    /// NVTX rows in table order.
    pub ranges: Vec<SynthRange>,
    /// GPUs.
    pub gpus: Vec<SynthGpu>,
    /// Extra runtime rows `(start, end, pid, tid, corr, name, eventClass)`.
    pub extra_calls: Vec<(i64, i64, u64, u64, i64, String, i64)>,
}

impl Synth {
    /// Write the trace as an nsys-schema SQLite file (the file must not exist).
    pub fn write_nsys(&self, path: &Path) -> rusqlite::Result<()> {
        self.write_with(path, NSYS_DDL)
    }

    /// Write with a custom DDL (for schema variants and broken files).
    pub fn write_with(&self, path: &Path, ddl: &str) -> rusqlite::Result<()> {
        let conn = Connection::open(path)?;
        conn.execute_batch(ddl)?;
        let mut w = Writer {
            conn: &conn,
            ids: HashMap::new(),
        };
        w.meta()?;
        for g in &self.gpus {
            w.conn.execute(
                "INSERT INTO TARGET_INFO_GPU (vmId, id, name, smCount, computeMajor, computeMinor, memoryBandwidth, clockRate, cuDevice, maxWarpsPerSm, maxBlocksPerSm, maxThreadsPerBlock, maxRegistersPerSm, maxRegistersPerBlock, maxShmemPerSm, maxShmemPerBlock, maxShmemPerBlockOptin, threadsPerWarp) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 64, 32, 1024, 65536, 65536, 167936, 49152, 166912, 32)",
                params![g.cu_device + 1, g.name, g.sm_count, g.cc.0, g.cc.1, g.bandwidth, g.clock, g.cu_device],
            )?;
        }
        for k in &self.kernels {
            let name = w.id(&k.name)?;
            let short = w.id(k.name.split(['<', '(']).next().unwrap_or(&k.name))?;
            let mangled = match &k.mangled {
                Some(m) => Some(w.id(m)?),
                None => None,
            };
            w.conn.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName, mangledName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, 0, 0, ?5)",
                params![k.start, k.end, k.device, k.stream, k.corr, global_pid(k.pid), name, short, mangled, k.regs, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.smem.0, k.smem.1],
            )?;
            if let Some((s, e, api)) = &k.launch {
                let api = w.id(api)?;
                let class = i64::from(w_is_driver(&k.launch));
                w.conn.execute(
                    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
                    params![s, e, class, global_tid(k.pid, k.tid), k.corr, api],
                )?;
            }
        }
        for (s, e, pid, tid, corr, name, class) in &self.extra_calls {
            let api = w.id(name)?;
            w.conn.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
                params![s, e, class, global_tid(*pid, *tid), corr, api],
            )?;
        }
        for r in &self.ranges {
            let (text, text_id) = if r.registered {
                (None, Some(w.id(&r.text)?))
            } else {
                (Some(r.text.clone()), None)
            };
            w.conn.execute(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, textId, domainId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![r.start, r.end, r.event_type, text, global_tid(r.pid, r.tid), r.end_tid.map(|t| global_tid(r.pid, t)), text_id, r.domain],
            )?;
        }
        let end = self
            .kernels
            .iter()
            .map(|k| k.end)
            .chain(self.ranges.iter().filter_map(|r| r.end))
            .max()
            .unwrap_or(0);
        w.conn.execute(
            "INSERT INTO ANALYSIS_DETAILS (globalVid, duration, startTime, stopTime) VALUES (1, ?1, 0, ?1)",
            params![end],
        )?;
        Ok(())
    }
}

/// Lays out operator ranges and the kernels they launch on a timeline,
/// the way PyTorch's `emit_nvtx` nests them: [`OpTimeline::op`] opens the
/// ranges of `stack` (outermost first) on one thread, launches each kernel
/// inside the innermost one, and closes them; the kernels run on the GPU in
/// launch order, after their launch. Times and correlation ids only grow.
#[derive(Clone, Debug)]
pub struct OpTimeline {
    /// The trace being built.
    pub synth: Synth,
    cpu_ns: i64,
    gpu_ns: i64,
    corr: i64,
}

impl Default for OpTimeline {
    fn default() -> OpTimeline {
        OpTimeline::new()
    }
}

impl OpTimeline {
    /// An empty trace on an A100, starting at 1 ms.
    pub fn new() -> OpTimeline {
        let mut synth = Synth::default();
        synth.gpus.push(SynthGpu::a100());
        OpTimeline {
            synth,
            cpu_ns: 1_000_000,
            gpu_ns: 1_000_000,
            corr: 1,
        }
    }

    /// Nested push/pop ranges with the texts of `stack` on thread `tid`
    /// (pid 100), one launch per kernel (demangled names) inside the
    /// innermost; returns the kernels' correlation ids.
    pub fn op(&mut self, tid: u64, stack: &[&str], kernels: &[&str]) -> Vec<i64> {
        let depth = i64::try_from(stack.len()).unwrap_or(0);
        let start = self.cpu_ns;
        let mut t = start + 10 * depth + 10;
        let mut ids = Vec::new();
        for name in kernels {
            let mut k = SynthKernel::new(name, 0, 0, self.corr);
            k.tid = tid;
            k.launch = Some((t, t + 50, "cudaLaunchKernel_v7000".to_owned()));
            let gpu = self.gpu_ns.max(t + 1_000);
            k.start = gpu;
            k.end = gpu + 500;
            self.gpu_ns = gpu + 600;
            self.synth.kernels.push(k);
            ids.push(self.corr);
            self.corr += 1;
            t += 100;
        }
        let end = t + 10 * depth + 10;
        for (i, text) in stack.iter().enumerate() {
            let i = i64::try_from(i).unwrap_or(0);
            let mut r = SynthRange::push(text, start + 10 * i, end - 10 * i);
            r.tid = tid;
            self.synth.ranges.push(r);
        }
        self.cpu_ns = end + 100;
        ids
    }
}

fn w_is_driver(l: &Option<(i64, i64, String)>) -> bool {
    l.as_ref()
        .is_some_and(|(_, _, api)| api.starts_with("cu") && !api.starts_with("cuda"))
}

struct Writer<'c> {
    conn: &'c Connection,
    ids: HashMap<String, i64>,
}

impl Writer<'_> {
    fn id(&mut self, s: &str) -> rusqlite::Result<i64> {
        if let Some(&id) = self.ids.get(s) {
            return Ok(id);
        }
        let id = self.ids.len() as i64 + 1;
        self.conn.execute(
            "INSERT INTO StringIds (id, value) VALUES (?1, ?2)",
            params![id, s],
        )?;
        self.ids.insert(s.to_owned(), id);
        Ok(id)
    }

    fn meta(&mut self) -> rusqlite::Result<()> {
        for (k, v) in [
            ("EXPORT_PRODUCT_NAME", "rprof-testkit synthetic"),
            ("EXPORT_PRODUCT_VERSION", "2026.2.1.210"),
            ("EXPORT_SCHEMA_VERSION", "3.25.0"),
        ] {
            self.conn.execute(
                "INSERT INTO META_DATA_EXPORT (name, value) VALUES (?1, ?2)",
                params![k, v],
            )?;
        }
        Ok(())
    }
}
