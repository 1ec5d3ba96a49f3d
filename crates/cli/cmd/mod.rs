//! One module per subcommand.

pub mod export;
pub mod gpu;
pub mod mem;
pub mod parse;
pub mod prof;
pub mod summary;
