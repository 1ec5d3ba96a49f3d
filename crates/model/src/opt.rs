//! Optional 4-byte fields in 4 bytes.
//!
//! `Option<u32>` takes 8 bytes (a tag and the value); a profile holds
//! millions of kernels, and each of their optional 4-byte fields costs
//! 12 MB at 3 M kernels. Here the one value no file can mean (a shared-memory
//! size of 4 GiB per block, a string handle past the 4-billionth string)
//! stands for none.

use crate::StrRef;

/// An optional `u32` in 4 bytes: `u32::MAX` is none, so the largest
/// value it holds is `u32::MAX − 1` ([`OptU32::saturating`] clamps to it).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct OptU32(u32);

impl OptU32 {
    /// No value.
    pub const NONE: OptU32 = OptU32(u32::MAX);

    /// `v`, with `u32::MAX` clamped to `u32::MAX − 1` (the largest value
    /// held): for sizes read from a file, which [`crate::narrow`] already
    /// saturates at the top of the range.
    pub fn saturating(v: Option<u32>) -> OptU32 {
        match v {
            Some(x) => OptU32(x.min(u32::MAX - 1)),
            None => OptU32::NONE,
        }
    }

    /// The value, if any.
    #[inline]
    pub fn get(self) -> Option<u32> {
        (self.0 != u32::MAX).then_some(self.0)
    }
}

impl std::fmt::Debug for OptU32 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// An optional [`StrRef`] in 4 bytes: handle `u32::MAX` is none (a pool
/// never hands it out: it would be the pool's 4,294,967,296th string).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct OptStr(u32);

impl OptStr {
    /// No string.
    pub const NONE: OptStr = OptStr(u32::MAX);

    /// The handle, if any.
    #[inline]
    pub fn get(self) -> Option<StrRef> {
        (self.0 != u32::MAX).then_some(StrRef(self.0))
    }
}

impl From<Option<StrRef>> for OptStr {
    fn from(s: Option<StrRef>) -> OptStr {
        match s {
            // (a handle of u32::MAX is none either way: see the type)
            Some(r) => OptStr(r.0),
            None => OptStr::NONE,
        }
    }
}

impl std::fmt::Debug for OptStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::{OptStr, OptU32};
    use crate::StrRef;

    /// Every value but the sentinel reads back as given; the sentinel's
    /// neighbours stay values; the top of the range clamps to the largest
    /// value held, never to none.
    #[test]
    fn values_read_back() {
        for v in [0, 1, 48 << 10, u32::MAX - 2, u32::MAX - 1] {
            assert_eq!(OptU32::saturating(Some(v)).get(), Some(v));
            assert_eq!(OptStr::from(Some(StrRef(v))).get(), Some(StrRef(v)));
        }
        assert_eq!(OptU32::saturating(None).get(), None);
        assert_eq!(OptU32::saturating(Some(u32::MAX)).get(), Some(u32::MAX - 1));
        assert_eq!(OptStr::from(None).get(), None);
        assert_eq!(std::mem::size_of::<OptU32>(), 4);
        assert_eq!(std::mem::size_of::<OptStr>(), 4);
        assert_eq!(format!("{:?}", OptU32::saturating(Some(7))), "Some(7)");
        assert_eq!(format!("{:?}", OptStr::NONE), "None");
    }
}
