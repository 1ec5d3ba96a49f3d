//! One module per subcommand.

pub mod export;
pub mod gpu;
pub mod parse;
pub mod prof;
pub mod stats;
pub mod summary;
