//! Element types as PyProf's markers spell them (`str(dtype)` after the last
//! `.`, or a Python scalar type name), their sizes and their printed names.
//!
//! apex.pyprof knows eleven spellings (pyprof-semantics.md §5.1, plus `bool`)
//! and aborts on anything else; the default mode also knows bf16, the
//! complex, float8 and wide unsigned types (B20) and leaves the byte
//! count of any other type unknown (`na`) instead of aborting.

/// An element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// `uint8`, `byte`, `char`
    U8,
    /// `int8`
    I8,
    /// `bool`
    Bool,
    /// `float16`, `half`
    F16,
    /// `int16`, `short`
    I16,
    /// `float32`, `float` (also the Python `float` scalar)
    F32,
    /// `int32`, `int` (also the Python `int` scalar)
    I32,
    /// `int64`, `long`
    I64,
    /// `float64`, `double`
    F64,
    /// `bfloat16` (default mode only)
    Bf16,
    /// `complex32`, `chalf` (default mode only)
    C32,
    /// `complex64`, `cfloat` (default mode only)
    C64,
    /// `complex128`, `cdouble` (default mode only)
    C128,
    /// `float8_e4m3fn`, `float8_e4m3fnuz` (default mode only)
    F8E4M3,
    /// `float8_e5m2`, `float8_e5m2fnuz` (default mode only)
    F8E5M2,
    /// `float8_e8m0fnu` (default mode only)
    F8E8M0,
    /// `uint16` (default mode only)
    U16,
    /// `uint32` (default mode only)
    U32,
    /// `uint64` (default mode only)
    U64,
}

/// The spellings apex.pyprof's `Utility` accepts (`typeToBytes`,
/// `typeToString`), in its order.
const APEX: &[(&str, Dtype)] = &[
    ("uint8", Dtype::U8),
    ("int8", Dtype::I8),
    ("byte", Dtype::U8),
    ("char", Dtype::U8),
    ("bool", Dtype::Bool),
    ("float16", Dtype::F16),
    ("half", Dtype::F16),
    ("int16", Dtype::I16),
    ("short", Dtype::I16),
    ("float32", Dtype::F32),
    ("float", Dtype::F32),
    ("int32", Dtype::I32),
    ("int", Dtype::I32),
    ("int64", Dtype::I64),
    ("long", Dtype::I64),
    ("float64", Dtype::F64),
    ("double", Dtype::F64),
];

/// Spellings only the default mode knows (B20).
const EXTENDED: &[(&str, Dtype)] = &[
    ("bfloat16", Dtype::Bf16),
    ("complex32", Dtype::C32),
    ("chalf", Dtype::C32),
    ("complex64", Dtype::C64),
    ("cfloat", Dtype::C64),
    ("complex128", Dtype::C128),
    ("cdouble", Dtype::C128),
    ("float8_e4m3fn", Dtype::F8E4M3),
    ("float8_e4m3fnuz", Dtype::F8E4M3),
    ("float8_e5m2", Dtype::F8E5M2),
    ("float8_e5m2fnuz", Dtype::F8E5M2),
    ("float8_e8m0fnu", Dtype::F8E8M0),
    ("uint16", Dtype::U16),
    ("uint32", Dtype::U32),
    ("uint64", Dtype::U64),
];

impl Dtype {
    /// A spelling apex.pyprof accepts; `None` where apex would abort.
    pub fn parse_apex(text: &str) -> Option<Dtype> {
        APEX.iter().find(|(t, _)| *t == text).map(|(_, d)| *d)
    }

    /// Any spelling the default mode knows; `None` for an unknown type
    /// (its byte count is then unknown, never a crash).
    pub fn parse(text: &str) -> Option<Dtype> {
        Dtype::parse_apex(text)
            .or_else(|| EXTENDED.iter().find(|(t, _)| *t == text).map(|(_, d)| *d))
    }

    /// Size of one element, bytes.
    pub fn size_bytes(self) -> u64 {
        match self {
            Dtype::U8 | Dtype::I8 | Dtype::Bool => 1,
            Dtype::F8E4M3 | Dtype::F8E5M2 | Dtype::F8E8M0 => 1,
            Dtype::F16 | Dtype::I16 | Dtype::Bf16 | Dtype::U16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::C32 | Dtype::U32 => 4,
            Dtype::I64 | Dtype::F64 | Dtype::C64 | Dtype::U64 => 8,
            Dtype::C128 => 16,
        }
    }

    /// The name printed in params (apex's `typeToString` for its types).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8",
            Dtype::I8 => "int8",
            Dtype::Bool => "bool",
            Dtype::F16 => "fp16",
            Dtype::I16 => "int16",
            Dtype::F32 => "fp32",
            Dtype::I32 => "int32",
            Dtype::I64 => "int64",
            Dtype::F64 => "fp64",
            Dtype::Bf16 => "bf16",
            Dtype::C32 => "c32",
            Dtype::C64 => "c64",
            Dtype::C128 => "c128",
            Dtype::F8E4M3 => "fp8e4m3",
            Dtype::F8E5M2 => "fp8e5m2",
            Dtype::F8E8M0 => "fp8e8m0",
            Dtype::U16 => "uint16",
            Dtype::U32 => "uint32",
            Dtype::U64 => "uint64",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apex_table_matches_utility() {
        assert_eq!(Dtype::parse_apex("float32").map(Dtype::size_bytes), Some(4));
        assert_eq!(Dtype::parse_apex("char").map(Dtype::name), Some("uint8"));
        assert_eq!(Dtype::parse_apex("bool").map(Dtype::size_bytes), Some(1));
        assert_eq!(Dtype::parse_apex("bfloat16"), None);
        assert_eq!(Dtype::parse_apex("NoneType"), None);
        assert_eq!(Dtype::parse("bfloat16").map(Dtype::name), Some("bf16"));
        assert_eq!(Dtype::parse("complex128").map(Dtype::size_bytes), Some(16));
        assert_eq!(
            Dtype::parse("float8_e4m3fn").map(Dtype::size_bytes),
            Some(1)
        );
        assert_eq!(Dtype::parse("qint8"), None);
    }

    #[test]
    fn no_spelling_twice() {
        let mut all: Vec<&str> = APEX.iter().chain(EXTENDED).map(|(t, _)| *t).collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
