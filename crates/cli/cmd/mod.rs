//! One module per subcommand.

pub mod export;
pub mod gpu;
pub mod hostview;
pub mod idle;
pub mod launch;
pub mod parse;
pub mod prof;
pub mod steps;
pub mod summary;
