//! rprof-trace: the trace model of rprof, its readers (Nsight Systems and
//! nvprof SQLite), NVTX attribution, PyProf's marker heuristics and the
//! per-kernel record format.
//!
//! ```no_run
//! use rprof_trace::{attribute, build, read};
//! # fn main() -> rprof_trace::Result<()> {
//! let mut trace = read::read("net.sqlite".as_ref(), read::ReadOptions::default())?;
//! let enclosing = attribute::attribute(&trace.launches, &mut trace.ranges);
//! let mut out = Vec::new();
//! build::build(&trace, &enclosing, build::BuildOptions::default(), |records| {
//!     for r in records {
//!         r.write_json(&mut out);
//!     }
//!     Ok(())
//! })?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod attribute;
pub mod build;
pub mod demangle;
pub mod error;
pub mod markers;
pub mod model;
pub mod pylit;
pub mod read;
pub mod record;
pub mod sequence;
pub mod stock;
pub mod strings;

pub use error::{Error, Result};

/// `HashMap` with foldhash's fixed-seed hasher: several times faster than
/// SipHash on the integer keys of the joins, and deterministic. Never
/// iterated into output.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
/// `HashSet` counterpart of [`FastMap`].
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::FixedState>;
