//! The neutral description of one operator call that the op models work on.
//!
//! PyProf's argument markers are one source of [`OpCall`]s (see
//! [`crate::marker`]); stock PyTorch `aten::` markers with `sizes = […]` can
//! become another one without touching the models: a call is just a module,
//! an op name, argument records (shapes, dtypes, scalars), the direction,
//! the kernel and the kernel's index within the op.

use crate::marker::{Arg, Marker};

pub use rprof_model::Direction;

/// The kernel a call is costed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel<'a> {
    /// Short name with spaces replaced by `_` (PyProf's `Data.name`).
    pub name: &'a str,
    /// Long (demangled) name.
    pub long_name: &'a str,
    /// Grid dimensions.
    pub grid: [i64; 3],
}

/// One operator call as seen by one kernel.
#[derive(Clone, Copy, Debug)]
pub struct OpCall<'a> {
    /// Module (`torch`, `Tensor`, `torch.nn.functional`, a class name, …).
    pub module: &'a str,
    /// Op name (`linear`, `__add__`, …).
    pub op: &'a str,
    /// Argument records in call order.
    pub args: &'a [Arg],
    /// False when some argument records could not be read.
    pub args_complete: bool,
    /// Direction of the kernel.
    pub dir: Direction,
    /// Index of this kernel among the kernels of the op (PyProf's
    /// `subSeqId`): 0 for the first.
    pub sub: i64,
    /// The kernel.
    pub kernel: Kernel<'a>,
    /// The op's output shape when another marker told it (stock
    /// convolutions, pyprof-semantics.md §10.3); `None` otherwise.
    pub output: Option<&'a [i64]>,
}

impl<'a> OpCall<'a> {
    /// A call from a decoded PyProf marker.
    pub fn from_marker(m: &'a Marker, dir: Direction, sub: i64, kernel: Kernel<'a>) -> Self {
        OpCall {
            module: &m.module,
            op: &m.op,
            args: &m.args,
            args_complete: m.well_formed,
            dir,
            sub,
            kernel,
            output: None,
        }
    }

    /// The positional (unnamed) arguments, in order.
    pub fn positional(&self) -> impl Iterator<Item = &'a Arg> + Clone + use<'a> {
        self.args.iter().filter(|a| a.is_positional())
    }

    /// The first argument named `name`.
    pub fn named(&self, name: &str) -> Option<&'a Arg> {
        self.args.iter().find(|a| a.name == name)
    }
}
