//! rprof-model: the typed trace model every rprof command works on. No I/O:
//! the readers (rprof-trace) fill it, the views (rprof-report) read it.
//!
//! - [`trace`]: one profile's tables (kernels, every CUDA API call, NVTX
//!   ranges and PyTorch-profiler operators, memory copies and sets, memory
//!   events, synchronisation records, devices), typed ids
//!   ([`ThreadId`], [`RankId`]) and the string pool they point into.
//! - [`job`]: several profiles (ranks) of one job, each with a rank id and
//!   a clock origin.
//! - [`interval`]: interval algebra on one track (union, intersection,
//!   difference, gaps, buckets).
//! - [`stats`]: mergeable statistics and a group-by.
//! - [`mempool`]: CUDA memory-pool events.
//! - [`markers`], [`stock`], [`pylit`]: the NVTX marker grammars (PyProf's
//!   dict markers, stock PyTorch markers) and the Python-literal parser.
//! - [`record`]: the per-kernel record, as serialized in `.dict` files.
//!
//! ```
//! use rprof_model::interval::Intervals;
//! let busy = Intervals::from_unsorted(vec![(0, 10), (5, 20), (30, 40)]);
//! assert_eq!(busy.total(), 30);
//! assert_eq!(busy.gaps_within(0, 50).total(), 20);
//! ```
#![deny(missing_docs)]

pub mod interval;
pub mod job;
pub mod markers;
pub mod mempool;
pub mod pylit;
pub mod record;
pub mod stack_form;
pub mod stats;
pub mod stats_data;
pub mod stock;
pub mod strings;
pub mod trace;

pub use job::{ClockOrigin, DistInfo, RankId};
pub use strings::{StrPool, StrRef};
pub use trace::{
    ApiCall, ApiKind, CommArgs, CopyKind, DeviceInfo, Kernel, KinetoKernel, Launch, MemDevice,
    MemEvent, MemKind, MemOp, MemoryKind, Range, RangeKind, RangeMeta, ReadStats, Source,
    SyncEvent, SyncKind, ThreadId, ThreadKey, Trace,
};

/// `HashMap` with foldhash's fixed-seed hasher: several times faster than
/// SipHash on the integer keys of the joins, and deterministic. Never
/// iterated into output.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
/// `HashSet` counterpart of [`FastMap`].
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::FixedState>;
