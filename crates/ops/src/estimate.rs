//! What a model says about one kernel.

use std::borrow::Cow;
use std::fmt;

use crate::num::Num;
use crate::params::ParamText;

/// Which behaviour to reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `--compat`: apex.pyprof number for number, bugs included.
    Apex,
    /// The default: PyProf's models with the bugs that change numbers or
    /// crash fixed (docs/compat.md).
    Fixed,
}

impl Mode {
    /// True for [`Mode::Apex`].
    pub fn is_apex(self) -> bool {
        self == Mode::Apex
    }
}

/// The tensor-core column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tc {
    /// `1`: the kernel uses tensor cores.
    Yes,
    /// `0`: it could, but does not.
    No,
    /// `-`: not applicable to this op.
    NotApplicable,
    /// `na`: no model ran (no marker).
    Unknown,
}

impl Tc {
    /// The printed text.
    pub fn as_str(self) -> &'static str {
        match self {
            Tc::Yes => "1",
            Tc::No => "0",
            Tc::NotApplicable => "-",
            Tc::Unknown => "na",
        }
    }

    /// `Yes` or `No`.
    pub fn from_bool(b: bool) -> Tc {
        if b { Tc::Yes } else { Tc::No }
    }
}

impl fmt::Display for Tc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the numbers of a row came about.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// No usable PyProf marker: nothing to model (`na=na,`, tc `na`).
    NoMarker,
    /// A model ran.
    Modelled,
    /// No model exists for the op (PyProf's `Foo`: 0 FLOPs, 0 bytes).
    NoModel,
    /// Default mode: some values could not be known and print `na`.
    Partial(Cow<'static, str>),
    /// `--compat`: apex.pyprof would have aborted on this row; it prints
    /// `na`/0 instead.
    ApexAbort(Cow<'static, str>),
    /// Default mode, stock PyTorch marker: a model ran on values that rest
    /// on an assumption (e.g. a convolution's output size).
    Estimated(Cow<'static, str>),
    /// Default mode, stock PyTorch marker: the element type is unknown
    /// (`?` in params): FLOPs are computed, bytes are `na`.
    DtypeUnknown,
    /// Default mode, stock PyTorch marker without `sizes` (the profile was
    /// taken without `record_shapes`): the op is known, params, FLOPs and
    /// bytes are not.
    NoSizes,
}

/// Params, FLOPs, bytes and tensor-core use of one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The op name the model reports when it is not the marker's op: only
    /// Linear (`linear` or `bias`).
    pub op: Option<&'static str>,
    /// The params column, already in PyProf's printed form, with the
    /// floating-point type its math runs in.
    pub params: ParamText,
    /// FLOPs; `None` = unknown (`na`).
    pub flops: Option<Num>,
    /// Bytes moved to and from DRAM; `None` = unknown (`na`).
    pub bytes: Option<Num>,
    /// Tensor-core use.
    pub tc: Tc,
    /// How this came about.
    pub outcome: Outcome,
}

impl Estimate {
    /// PyProf's row for a kernel without a usable marker: `na=na,`, tc `na`,
    /// 0 FLOPs, 0 bytes.
    pub fn no_marker() -> Estimate {
        Estimate {
            op: None,
            params: ParamText::untyped("na=na,"),
            flops: Some(Num::ZERO),
            bytes: Some(Num::ZERO),
            tc: Tc::Unknown,
            outcome: Outcome::NoMarker,
        }
    }

    /// The `--compat` row where apex.pyprof would have aborted: like a
    /// kernel without a marker.
    pub fn apex_abort(why: Cow<'static, str>) -> Estimate {
        Estimate {
            outcome: Outcome::ApexAbort(why),
            ..Estimate::no_marker()
        }
    }
}
