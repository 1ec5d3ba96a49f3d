//! One module per subcommand.

pub mod diff;
pub mod dist;
pub mod export;
pub mod gpu;
pub mod mem;
pub mod parse;
pub mod prof;
pub mod report;
pub mod summary;
