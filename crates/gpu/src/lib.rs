//! rprof-gpu: what the GPU can do, for rprof's efficiency views.
//!
//! - [`device`]: which GPU a kernel ran on, its limits and peaks;
//! - [`limits`]: per-SM resources, from the profile or a compute-capability
//!   table;
//! - [`occupancy`]: the CUDA occupancy rules and the PyTorch profiler's
//!   estimated achieved occupancy and SM efficiency;
//! - [`spec`]: peak FLOP/s and memory bandwidth of known GPUs;
//! - [`timeline`]: busy time, utilization, time-weighted means;
//! - [`usage`]: one device's kernels accumulated into those figures;
//! - [`roofline`]: compute- or memory-bound, and the share of the roof.
//!
//! ```
//! use rprof_gpu::{limits::Limits, occupancy};
//! let a100 = Limits::for_cc((8, 0)).unwrap();
//! let launch = occupancy::Launch { grid: [1000, 1, 1], block: [256, 1, 1], regs_per_thread: Some(32), smem_per_block: Some(0) };
//! assert_eq!(occupancy::occupancy(&a100, &launch).active_blocks, 8);
//! ```
#![deny(missing_docs)]

pub mod device;
pub mod limits;
pub mod occupancy;
pub mod roofline;
pub mod spec;
pub mod timeline;
pub mod usage;
