//! rprof-gpu: what the GPU can do, for rprof's efficiency views.
//!
//! At the root: [`Devices`] / [`Device`] (which GPU a kernel ran on, its
//! limits and peaks), [`Limits`] (per-SM resources, from the profile or a
//! compute-capability table), [`GpuSpec`] (peak FLOP/s and memory bandwidth
//! of known GPUs) and [`Weighted`] (time-weighted means).
//!
//! Three public namespaces, kept because they are mostly free functions
//! that read best qualified (`occupancy::occupancy`, `usage::span`,
//! `roofline::…`):
//! - [`occupancy`]: the CUDA occupancy rules and the PyTorch profiler's
//!   estimated achieved occupancy and SM efficiency;
//! - [`usage`]: one device's kernels accumulated into busy time,
//!   utilization and time-weighted means;
//! - [`roofline`]: compute- or memory-bound, and the share of the roof.
//!
//! ```
//! use rprof_gpu::{Limits, occupancy};
//! let a100 = Limits::for_cc((8, 0)).unwrap();
//! let launch = occupancy::Launch { grid: [1000, 1, 1], block: [256, 1, 1], regs_per_thread: Some(32), smem_per_block: Some(0) };
//! assert_eq!(occupancy::occupancy(&a100, &launch).active_blocks, 8);
//! ```
#![deny(missing_docs)]

mod device;
mod limits;
pub mod occupancy;
pub mod roofline;
mod spec;
mod timeline;
pub mod usage;

pub use device::{Device, Devices, Hints};
pub use limits::{DEFAULT_SMEM_PER_BLOCK, Limits, LimitsSource};
pub use spec::{GpuSpec, MathClass};
pub use timeline::Weighted;
