//! Integration tests: one binary, one module per subcommand (ripgrep's layout).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod util;

mod comparisons;
mod convention;
mod dataformats;
mod diff;
mod dist;
mod export;
mod fuzz;
mod gpu;
mod hostile;
mod hostviews;
mod kernel_sums;
mod kineto;
mod loaders;
mod mem;
mod model;
mod overlap;
mod parse;
mod prof;
mod records;
mod report;
mod snapshots;
mod speed;
mod stack;
mod stats;
mod stats_many_rows;
mod stock;
mod summary;
mod table;
