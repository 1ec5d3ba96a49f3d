//! One module per subcommand.

pub mod diff;
pub mod export;
pub mod gpu;
pub mod parse;
pub mod prof;
pub mod summary;
