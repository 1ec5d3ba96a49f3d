//! A kernel's direction, typed: PyProf's `dir` column.
//!
//! A profile's records are `fprop` or `bprop` (the build decides from the
//! markers, pyprof-semantics.md §4.3); a record file written by another
//! tool may say anything, and that text is kept as it was read so that
//! every command prints it back unchanged. Commands test the variant, never
//! the text.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Forward or backward pass, or neither: what the op models branch on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// `fprop`
    #[default]
    Fprop,
    /// `bprop`
    Bprop,
    /// Anything else a record may say (PyProf's models treat it as
    /// backward: they test `dir == "fprop"`).
    Other,
}

impl Direction {
    /// From a record's `dir` text.
    pub fn parse(text: &str) -> Direction {
        match text {
            "fprop" => Direction::Fprop,
            "bprop" => Direction::Bprop,
            _ => Direction::Other,
        }
    }

    /// True for `fprop`.
    pub fn is_fprop(self) -> bool {
        self == Direction::Fprop
    }
}

/// A record's `dir`: [`Direction`] with the text of [`Direction::Other`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dir<'a> {
    /// `fprop`
    Fprop,
    /// `bprop`
    Bprop,
    /// Any other text, as read (`""` when the record had none).
    Other(Cow<'a, str>),
}

impl Default for Dir<'_> {
    /// No direction: the empty text, as a record without a `dir` key reads.
    fn default() -> Self {
        Dir::Other(Cow::Borrowed(""))
    }
}

impl<'a> Dir<'a> {
    /// `bprop` when `bprop`, else `fprop`: the build's two outcomes.
    pub fn of(bprop: bool) -> Dir<'static> {
        if bprop { Dir::Bprop } else { Dir::Fprop }
    }

    /// From a record's text: `fprop` and `bprop` become their variants,
    /// anything else is kept.
    pub fn from_text(text: Cow<'a, str>) -> Dir<'a> {
        match Direction::parse(&text) {
            Direction::Fprop => Dir::Fprop,
            Direction::Bprop => Dir::Bprop,
            Direction::Other => Dir::Other(text),
        }
    }

    /// The variant without its text.
    pub fn kind(&self) -> Direction {
        match self {
            Dir::Fprop => Direction::Fprop,
            Dir::Bprop => Direction::Bprop,
            Dir::Other(_) => Direction::Other,
        }
    }

    /// True for `fprop`.
    pub fn is_fprop(&self) -> bool {
        matches!(self, Dir::Fprop)
    }

    /// True for `bprop`.
    pub fn is_bprop(&self) -> bool {
        matches!(self, Dir::Bprop)
    }

    /// The text a record file holds.
    pub fn as_str(&self) -> &str {
        match self {
            Dir::Fprop => "fprop",
            Dir::Bprop => "bprop",
            Dir::Other(t) => t,
        }
    }

    /// The same direction, owning its text.
    pub fn into_owned(self) -> Dir<'static> {
        match self {
            Dir::Fprop => Dir::Fprop,
            Dir::Bprop => Dir::Bprop,
            Dir::Other(t) => Dir::Other(Cow::Owned(t.into_owned())),
        }
    }
}

impl fmt::Display for Dir<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Dir<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Dir<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let super::BorrowedStr(text) = super::BorrowedStr::deserialize(d)?;
        Ok(Dir::from_text(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_and_only_two_texts_are_known() {
        for t in ["fprop", "bprop", "", "Fprop", "bprop ", "fwd"] {
            let d = Dir::from_text(Cow::Borrowed(t));
            assert_eq!(d.as_str(), t);
            // the variant agrees with a plain comparison of the text
            assert_eq!(d.is_fprop(), t == "fprop");
            assert_eq!(d.is_bprop(), t == "bprop");
            assert_eq!(d.kind(), Direction::parse(t));
            let json = serde_json::to_string(&d).unwrap();
            let back: Dir<'_> = serde_json::from_str(&json).unwrap();
            assert_eq!(back, d);
        }
        assert_eq!(Dir::of(true), Dir::Bprop);
        assert_eq!(Dir::of(false), Dir::Fprop);
        assert_eq!(Dir::default().as_str(), "");
    }
}
