//! The params column, written the way PyProf's `Data.setParams` prints a
//! model's ordered dict: `key=value,` per entry, only the type name (and a
//! comma) for keys containing `type`, spaces removed at the end.

use std::fmt::{self, Write as _};
use std::ops::Deref;

use crate::dtype::Dtype;
use crate::num::Num;

/// The params column of a row, and the floating-point element type its
/// math runs in (the first such type entry), typed: the roofline reads the
/// type from here, never from the text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamText {
    text: String,
    dtype: Option<Dtype>,
}

impl ParamText {
    /// Params text without a floating-point type entry.
    pub fn untyped(text: impl Into<String>) -> ParamText {
        ParamText {
            text: text.into(),
            dtype: None,
        }
    }

    /// Params text whose math runs in the floating-point type that
    /// `type_name` (as [`Dtype::name`] prints it) names, if it names one.
    pub(crate) fn with_type(text: String, type_name: &str) -> ParamText {
        ParamText {
            text,
            dtype: math_dtype(type_name),
        }
    }

    /// The printed text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The floating-point element type (`fp64`, `fp32`, `fp16`, `bf16`,
    /// `fp8…`) of the first type entry that names one.
    pub fn dtype(&self) -> Option<Dtype> {
        self.dtype
    }

    /// The text, owned.
    pub fn into_string(self) -> String {
        self.text
    }
}

impl Deref for ParamText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for ParamText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq<str> for ParamText {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for ParamText {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

/// The floating-point type a params type entry names (as [`Dtype::name`]
/// prints it), if it names one.
pub(crate) fn math_dtype(name: &str) -> Option<Dtype> {
    [
        Dtype::F64,
        Dtype::F32,
        Dtype::F16,
        Dtype::Bf16,
        Dtype::F8E4M3,
        Dtype::F8E5M2,
        Dtype::F8E8M0,
    ]
    .into_iter()
    .find(|d| d.name() == name)
}

/// Builds one params string.
#[derive(Debug, Default)]
pub(crate) struct Params {
    text: String,
    dtype: Option<Dtype>,
}

impl Params {
    pub(crate) fn new() -> Params {
        Params {
            text: String::with_capacity(48),
            dtype: None,
        }
    }

    /// `key=value,`
    pub(crate) fn kv(mut self, key: &str, value: impl std::fmt::Display) -> Params {
        let _ = write!(self.text, "{key}={value},");
        self
    }

    /// `key=(a,b),`
    pub(crate) fn shape(mut self, key: &str, shape: &[i64]) -> Params {
        self.text.push_str(key);
        self.text.push('=');
        write_tuple(&mut self.text, shape);
        self.text.push(',');
        self
    }

    /// `key=[(a,b),(c,)],`
    pub(crate) fn shapes<'s>(
        mut self,
        key: &str,
        shapes: impl IntoIterator<Item = &'s [i64]>,
    ) -> Params {
        self.text.push_str(key);
        self.text.push('=');
        write_shape_list(&mut self.text, shapes);
        self.text.push(',');
        self
    }

    /// A type entry: just `name,`. The first that names a floating-point
    /// type is the params' [`ParamText::dtype`].
    pub(crate) fn ty(mut self, name: &str) -> Params {
        self.text.push_str(name);
        self.text.push(',');
        if self.dtype.is_none() {
            self.dtype = math_dtype(name);
        }
        self
    }

    /// `key=N,` for a Python number.
    pub(crate) fn num(self, key: &str, n: Num) -> Params {
        self.kv(key, n)
    }

    /// Raw text, as is.
    pub(crate) fn raw(mut self, text: &str) -> Params {
        self.text.push_str(text);
        self
    }

    /// The final text, spaces removed as PyProf does, with its type.
    pub(crate) fn finish(mut self) -> ParamText {
        if self.text.contains(' ') {
            self.text.retain(|c| c != ' ');
        }
        // the typed element type is what a reader of the text would find
        // first (the roofline read it from the text before)
        debug_assert_eq!(
            self.dtype.map(Dtype::name),
            first_float_token(&self.text),
            "{}",
            self.text
        );
        ParamText {
            text: self.text,
            dtype: self.dtype,
        }
    }
}

/// Python's `str()` of a tuple of ints, without spaces: `(a,b)`, `(a,)`, `()`.
pub(crate) fn write_tuple(out: &mut String, shape: &[i64]) {
    out.push('(');
    for (i, d) in shape.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{d}");
    }
    if shape.len() == 1 {
        out.push(',');
    }
    out.push(')');
}

/// Python's `str()` of a list of int tuples, without spaces.
pub(crate) fn write_shape_list<'s>(out: &mut String, shapes: impl IntoIterator<Item = &'s [i64]>) {
    out.push('[');
    for (i, s) in shapes.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_tuple(out, s);
    }
    out.push(']');
}

/// A displayable tuple.
pub(crate) struct Tuple<'s>(pub &'s [i64]);

impl std::fmt::Display for Tuple<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        write_tuple(&mut s, self.0);
        f.write_str(&s)
    }
}

/// The first token of a params text that names a floating-point type, as
/// a reader of the printed column finds it: what [`ParamText::dtype`] must
/// agree with (checked in debug builds, so by every test).
pub(crate) fn first_float_token(params: &str) -> Option<&str> {
    params
        .split([',', '=', ' ', ';'])
        .map(|t| t.trim_matches(|c| c == '(' || c == ')' || c == '[' || c == ']'))
        .find(|t| matches!(*t, "fp64" | "fp32" | "fp16" | "bf16" | "tf32") || t.starts_with("fp8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_set_params() {
        let p = Params::new()
            .kv("M", 1024)
            .kv("N", 32)
            .kv("K", 512)
            .ty("fp32")
            .finish();
        assert_eq!(p, "M=1024,N=32,K=512,fp32,");
        let p = Params::new()
            .shapes("T", [&[35i64, 20, 200][..], &[35, 1, 200]])
            .ty("fp32")
            .finish();
        assert_eq!(p, "T=[(35,20,200),(35,1,200)],fp32,");
        let p = Params::new().shape("T", &[1024]).ty("fp16").finish();
        assert_eq!(p, "T=(1024,),fp16,");
        assert_eq!(Tuple(&[]).to_string(), "()");
        assert_eq!(Params::new().raw("a b").finish(), "ab");
    }

    #[test]
    fn the_first_float_type_entry_is_the_type() {
        let typed = |p: Params| p.finish().dtype();
        assert_eq!(typed(Params::new().kv("M", 1).ty("fp32")), Some(Dtype::F32));
        assert_eq!(
            typed(Params::new().ty("int64").ty("bf16")),
            Some(Dtype::Bf16)
        );
        assert_eq!(typed(Params::new().ty("fp16").ty("fp32")), Some(Dtype::F16));
        assert_eq!(typed(Params::new().ty("fp8e4m3")), Some(Dtype::F8E4M3));
        assert_eq!(typed(Params::new().shape("T", &[2]).ty("int64")), None);
        // PyProf's `Foo` lists the dtypes as Python strings: no type entry
        assert_eq!(typed(Params::new().raw("['float16']")), None);
        assert_eq!(ParamText::untyped("na=na,").dtype(), None);
        assert_eq!(
            ParamText::with_type("sizes=na,fp16,".into(), "fp16").dtype(),
            Some(Dtype::F16)
        );
        assert_eq!(
            ParamText::with_type("sizes=na,?,".into(), "?").dtype(),
            None
        );
    }

    #[test]
    fn the_reference_reader_of_the_text() {
        assert_eq!(first_float_token("M=128,N=64,K=256,fp32,"), Some("fp32"));
        assert_eq!(
            first_float_token("T=[(35,20,200),(35,1,200)],fp16,"),
            Some("fp16")
        );
        assert_eq!(first_float_token("na=na,"), None);
        assert_eq!(first_float_token("T=(2,),int64,"), None);
        assert_eq!(first_float_token("x,fp8e4m3,"), Some("fp8e4m3"));
    }
}
