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
//!     rprof_trace::Result::Ok(())
//! })?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod attribute;
pub mod build;
pub mod demangle;
pub mod error;
pub mod read;
pub mod sequence;

// The model (tables, string pool, markers, record format) lives in
// rprof-model, which has no I/O; re-exported whole as `rprof_trace::model`
// (one deliberate namespace) so that the readers and the binary need no
// second dependency.
pub use rprof_model as model;
pub(crate) use rprof_model::{FastMap, FastSet, markers, stock};

pub use error::{Error, Result};
