//! One module per subcommand.

pub mod parse;
pub mod prof;
