//! CUDA memory-pool events (nsys `CUDA_GPU_MEMORY_POOL_EVENTS`, captured
//! with `--cuda-memory-usage=true`): a stream-ordered allocator's pool is
//! created, trimmed or destroyed, with its size and the part in use.
//!
//! Columns as the nsys exporter declares them (the table's DDL in the 2022.4
//! export of ../shared/corpus/nsys-nvtx-local): `start, globalPid, deviceId,
//! address, operationType` (`ENUM_CUDA_MEMPOOL_OPER`: 0 invalid, 1 created,
//! 2 destroyed, 3 trimmed), `poolType` (`ENUM_CUDA_MEMPOOL_TYPE`: 0 invalid,
//! 1 local, 2 imported), `correlationId, minBytesToKeep,
//! localMemoryPoolReleaseThreshold, localMemoryPoolSize,
//! localMemoryPoolUtilizedSize`.

/// What happened to a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PoolOp {
    /// Created.
    Created,
    /// Destroyed.
    Destroyed,
    /// Trimmed (memory released to the driver).
    Trimmed,
    /// Another number (0 is "invalid").
    Other(i64),
}

impl PoolOp {
    /// From `ENUM_CUDA_MEMPOOL_OPER`.
    pub fn from_code(code: i64) -> PoolOp {
        match code {
            1 => PoolOp::Created,
            2 => PoolOp::Destroyed,
            3 => PoolOp::Trimmed,
            n => PoolOp::Other(n),
        }
    }
}

/// One row of `CUDA_GPU_MEMORY_POOL_EVENTS`.
#[derive(Clone, Debug, PartialEq)]
pub struct MemPoolEvent {
    /// When, ns.
    pub ts_ns: i64,
    /// Process (24-bit nsys pid), when recorded.
    pub pid: Option<u64>,
    /// Device index.
    pub device: i64,
    /// Base address of the pool.
    pub addr: Option<u64>,
    /// Created, destroyed, trimmed.
    pub op: PoolOp,
    /// `poolType` as written (1 local, 2 imported).
    pub pool_type: Option<i64>,
    /// Correlation id of the API call.
    pub correlation: Option<i64>,
    /// `minBytesToKeep` (trims).
    pub min_bytes_to_keep: Option<i64>,
    /// `localMemoryPoolReleaseThreshold`.
    pub release_threshold: Option<i64>,
    /// `localMemoryPoolSize`: bytes the pool holds after the event.
    pub size: Option<i64>,
    /// `localMemoryPoolUtilizedSize`: bytes of it in use.
    pub utilized: Option<i64>,
}
