//! One module per subcommand.

pub mod diff;
pub mod dist;
pub mod export;
pub mod gpu;
pub mod hostview;
pub mod idle;
pub mod launch;
pub mod mem;
pub mod parse;
pub mod prof;
pub mod report;
pub mod steps;
pub mod summary;
