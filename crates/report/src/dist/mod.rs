//! `rprof dist`: the distributed view of a whole job.
//!
//! Each input file is reduced to per-rank summaries as soon as it is read
//! ([`summary::summarize`]); the job is then built from the summaries alone
//! ([`job::build`]): per-rank compute / communication / overlap / idle,
//! the TensorBoard plugin's and HTA's figures, wait vs transfer of matched
//! collectives, the collective table (nccl-tests' bandwidths), stragglers,
//! steps and clock alignment. [`render`] prints it. Definitions are in
//! docs/reports.md, section `dist`.

pub mod job;
pub mod render;
pub mod summary;

pub use job::{DistReport, JobError, build};
pub use render::{CsvTable, write_csv, write_json, write_table};
pub use summary::{FileSummary, RangeScan, scan_ranges, summarize, summarize_scanned};
