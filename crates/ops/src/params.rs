//! The params column, written the way PyProf's `Data.setParams` prints a
//! model's ordered dict: `key=value,` per entry, only the type name (and a
//! comma) for keys containing `type`, spaces removed at the end.

use std::fmt::Write as _;

use crate::num::Num;

/// Builds one params string.
#[derive(Debug, Default)]
pub(crate) struct Params(String);

impl Params {
    pub(crate) fn new() -> Params {
        Params(String::with_capacity(48))
    }

    /// `key=value,`
    pub(crate) fn kv(mut self, key: &str, value: impl std::fmt::Display) -> Params {
        let _ = write!(self.0, "{key}={value},");
        self
    }

    /// `key=(a,b),`
    pub(crate) fn shape(mut self, key: &str, shape: &[i64]) -> Params {
        self.0.push_str(key);
        self.0.push('=');
        write_tuple(&mut self.0, shape);
        self.0.push(',');
        self
    }

    /// `key=[(a,b),(c,)],`
    pub(crate) fn shapes<'s>(
        mut self,
        key: &str,
        shapes: impl IntoIterator<Item = &'s [i64]>,
    ) -> Params {
        self.0.push_str(key);
        self.0.push('=');
        write_shape_list(&mut self.0, shapes);
        self.0.push(',');
        self
    }

    /// A type entry: just `name,`.
    pub(crate) fn ty(mut self, name: &str) -> Params {
        self.0.push_str(name);
        self.0.push(',');
        self
    }

    /// `key=N,` for a Python number.
    pub(crate) fn num(self, key: &str, n: Num) -> Params {
        self.kv(key, n)
    }

    /// Raw text, as is.
    pub(crate) fn raw(mut self, text: &str) -> Params {
        self.0.push_str(text);
        self
    }

    /// The final string, spaces removed as PyProf does.
    pub(crate) fn finish(mut self) -> String {
        if self.0.contains(' ') {
            self.0.retain(|c| c != ' ');
        }
        self.0
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
}
