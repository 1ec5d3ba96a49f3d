//! rprof-model: the typed trace model every rprof command works on. No I/O:
//! the readers (rprof-trace) fill it, the views (rprof-report) read it.
//!
//! At the root (the modules are private; each item is re-exported here):
//! - one profile's tables, [`Trace`]: kernels, every CUDA API call, NVTX
//!   ranges and PyTorch-profiler operators, memory copies and sets, memory
//!   events, synchronisation records, devices; typed ids ([`ThreadId`],
//!   [`RankId`]) and the string pool ([`StrPool`]) they point into;
//! - several profiles (ranks) of one job: [`assign_ranks`], [`ClockOrigin`];
//! - interval algebra on one track ([`Intervals`]: union, intersection,
//!   difference, gaps, buckets);
//! - mergeable statistics and a group-by ([`Stats`], [`GroupBy`]);
//! - CUDA memory-pool events ([`MemPoolEvent`]);
//! - the `nsys stats` tables ([`StatsData`]);
//! - the per-kernel record as serialized in `.dict` files ([`Record`],
//!   [`read_line`], [`Header`]) and its NVTX stack form ([`StackForm`]).
//!
//! Three public namespaces, kept because they are grammars whose free
//! functions read best qualified (`pylit::parse`, `stock::parse`,
//! `markers::classify`): [`markers`] (PyProf's dict markers), [`stock`]
//! (stock PyTorch markers) and [`pylit`] (the Python-literal parser).
//!
//! ```
//! use rprof_model::Intervals;
//! let busy = Intervals::from_unsorted(vec![(0, 10), (5, 20), (30, 40)]);
//! assert_eq!(busy.total(), 30);
//! assert_eq!(busy.gaps_within(0, 50).total(), 20);
//! ```
#![deny(missing_docs)]

mod interval;
mod job;
mod kernels;
pub mod markers;
mod mempool;
mod opt;
pub mod pylit;
mod record;
mod stack_form;
mod stats;
mod stats_data;
pub mod stock;
mod strings;
mod trace;

pub use interval::Intervals;
pub use job::{ClockOrigin, DistInfo, RankCandidate, RankId, RankSource, assign_ranks};
pub use kernels::{
    Context, Iter, KernelRef, KernelRow, Kernels, StackStock, Sym, SymList, Symbols, Syms,
};
pub use mempool::{MemPoolEvent, PoolOp};
pub use opt::{OptStr, OptU32};
pub use record::{
    DICT_MINOR, DICT_VERSION, Dir, Direction, Header, Line, Record, Shared, StackJson,
    push_json_str, read_line, read_sidecar, sidecar_path, write_markers_json, write_ops_json,
    write_seq_json, write_stack_json,
};
pub use stack_form::{Shaped, StackForm, StackMode};
pub use stats::{GroupBy, Stats, WeightedMean, median_of_sorted, percentile_of_sorted};
pub use stats_data::{
    ApiRow, GpuKernel, GpuMemOp, KernelLaunch, NameId, Names, NvtxRow, OsrtRow, RangeStyle,
    StatsData, Tables, ThreadIndex, UmFault, strip_api_version,
};
pub use strings::{SharedTexts, StrPool, StrRef};
pub use trace::{
    ApiCall, ApiKind, CommArgs, CopyKind, DeviceInfo, Kernel, KernelExtra, KinetoKernel, Launch,
    MemDevice, MemEvent, MemKind, MemOp, MemoryKind, NO_PID, OpFields, Range, RangeKind, RangeMeta,
    RangeMetas, ReadStats, Source, SyncEvent, SyncKind, ThreadId, ThreadKey, Trace, narrow,
    nsys_pid,
};

/// `HashMap` with foldhash's fixed-seed hasher: several times faster than
/// SipHash on the integer keys of the joins, and deterministic. Never
/// iterated into output.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
/// `HashSet` counterpart of [`FastMap`].
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::FixedState>;
