//! rprof-trace: the trace model of rprof, its readers (Nsight Systems and
//! nvprof SQLite), NVTX attribution, PyProf's marker heuristics and the
//! per-kernel record format.
//!
//! Public namespaces, one per stage of the pipeline, each with its entry
//! point, options and result types (kept as namespaces because callers
//! name the stage: `read::read`, `attribute::attribute`, `build::build`):
//! [`read`], [`attribute`], [`build`]; and [`model`], the whole
//! `rprof-model` crate, so that the binary needs no second dependency.
//! At the root: [`Error`] and [`Result`]. Demangling and PyProf's sequence
//! rules are private to `build`.
//!
//! ```no_run
//! use rprof_trace::{attribute, build, read};
//! # fn main() -> rprof_trace::Result<()> {
//! let mut trace = read::read("net.sqlite".as_ref(), read::ReadOptions::default())?;
//! let enclosing = attribute::attribute(&trace.launches, &mut trace.ranges);
//! let mut out = Vec::new();
//! build::build(&trace, &enclosing, build::BuildOptions::default(), |kernels| {
//!     // a chunk of the attributed kernel table; each row as its record
//!     for r in kernels {
//!         r.to_record().write_json(&mut out);
//!     }
//!     rprof_trace::Result::Ok(())
//! })?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod attribute;
pub mod build;
mod demangle;
mod error;
pub mod read;
mod sequence;

// The model (tables, string pool, markers, record format) lives in
// rprof-model, which has no I/O; re-exported whole as `rprof_trace::model`
// (one deliberate namespace) so that the readers and the binary need no
// second dependency.
pub use rprof_model as model;
pub(crate) use rprof_model::{FastMap, FastSet, markers, stock};

pub use error::{Error, Result};
