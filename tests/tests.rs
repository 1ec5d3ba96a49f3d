//! Integration tests: one binary, one module per subcommand (ripgrep's layout).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod util;

mod export;
mod fuzz;
mod gpu;
mod hostile;
mod kineto;
mod parse;
mod prof;
mod stock;
mod summary;
