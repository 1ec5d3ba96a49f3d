//! PyProf's argument markers: `{'mod': …, 'op': …, 'args': [ … ]}`
//! (pyprof-semantics.md §2.5), decoded with the safe literal parser
//! ([`pylit`]). Nothing is ever evaluated. The build decodes each one once,
//! from the literal it parsed to classify it, and hands it to the op models
//! in the kernel table (`Context::first_marker`).
//!
//! Decoding is tolerant: a marker that is not such a dict is "not a PyProf
//! marker" (PyProf's `hasNVTX` is false), and an argument record with odd
//! contents keeps what could be read; the op models decide what they need.

use super::value_text;
use crate::pylit::{self, Value};

/// A decoded PyProf argument marker.
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    /// `mod`: `torch`, `Tensor`, `torch.nn.functional`, a class name, …
    pub module: String,
    /// `op`: the attribute name, e.g. `linear`, `__add__`.
    pub op: String,
    /// The argument records, in order (positional first, then keywords).
    pub args: Vec<Arg>,
    /// False when `args` was not a list of dicts each with a string `name`
    /// and `type` (the unreadable records are left out of `args`).
    pub well_formed: bool,
}

/// One argument record of a marker.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    /// `''` for a positional argument, the keyword otherwise.
    pub name: String,
    /// `tensor`, `ndarray`, `int`, `float`, `bool`, `NoneType`, `str`,
    /// `list`, `tuple`, … as PyProf wrote it.
    pub ty: String,
    /// `shape` of a tensor, when present and a tuple (or list) of ints.
    pub shape: Option<Vec<i64>>,
    /// `dtype` of a tensor, e.g. `float16`.
    pub dtype: Option<String>,
    /// `value` of a scalar, list or tuple record.
    pub value: Option<Value>,
}

impl Arg {
    /// A positional (unnamed) argument.
    pub fn is_positional(&self) -> bool {
        self.name.is_empty()
    }

    /// Shape and dtype when this record is a tensor with both.
    pub fn tensor(&self) -> Option<(&[i64], &str)> {
        if self.ty != "tensor" {
            return None;
        }
        Some((self.shape.as_deref()?, self.dtype.as_deref()?))
    }

    /// A tensor argument (for tests and for other marker sources).
    pub fn new_tensor(name: &str, shape: &[i64], dtype: &str) -> Arg {
        Arg {
            name: name.to_owned(),
            ty: "tensor".to_owned(),
            shape: Some(shape.to_vec()),
            dtype: Some(dtype.to_owned()),
            value: None,
        }
    }

    /// A scalar, list or tuple argument of PyProf type `ty`.
    pub fn new_value(name: &str, ty: &str, value: Value) -> Arg {
        Arg {
            name: name.to_owned(),
            ty: ty.to_owned(),
            shape: None,
            dtype: None,
            value: Some(value),
        }
    }
}

/// Decode a marker text. `None` when the text is not a dict literal with the
/// keys `mod`, `op` and `args` (PyProf's `hasNVTX`).
pub fn decode_marker(text: &str) -> Option<Marker> {
    decode_value(&pylit::parse(text).ok()?)
}

/// [`decode_marker`] of a text already parsed: `None` when `v` is not a
/// dict with the keys `mod`, `op` and `args`.
pub fn decode_value(v: &Value) -> Option<Marker> {
    if !matches!(v, Value::Dict(_)) {
        return None;
    }
    let (module, op, args) = (v.get("mod")?, v.get("op")?, v.get("args")?);
    let mut well_formed = true;
    let mut out = Vec::new();
    match args.as_seq() {
        Some(items) => {
            for item in items {
                match decode_arg(item) {
                    Some(a) => out.push(a),
                    None => well_formed = false,
                }
            }
        }
        None => well_formed = false,
    }
    Some(Marker {
        module: value_text(module),
        op: value_text(op),
        args: out,
        well_formed,
    })
}

fn decode_arg(v: &Value) -> Option<Arg> {
    let name = v.get("name")?.as_str()?.to_owned();
    let ty = v.get("type")?.as_str()?.to_owned();
    let shape = v.get("shape").and_then(|s| {
        s.as_seq()?
            .iter()
            .map(Value::as_int)
            .collect::<Option<Vec<i64>>>()
    });
    let dtype = v.get("dtype").and_then(Value::as_str).map(str::to_owned);
    let value = v.get("value").cloned();
    Some(Arg {
        name,
        ty,
        shape,
        dtype,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_pyprof_marker() {
        let t = "{'mod': 'Tensor', 'op': '__mul__', 'args': [{'name': '', 'type': 'tensor', 'shape': (35, 20, 200), 'dtype': 'float32'}, {'name': '', 'type': 'float', 'value': 14.142135623730951}]}";
        let m = decode_marker(t).unwrap();
        assert_eq!(m.module, "Tensor");
        assert_eq!(m.op, "__mul__");
        assert!(m.well_formed);
        assert_eq!(m.args[0].tensor(), Some((&[35i64, 20, 200][..], "float32")));
        assert_eq!(m.args[1].value, Some(Value::Float(14.142135623730951)));
        assert!(m.args[1].tensor().is_none());
    }

    #[test]
    fn not_a_marker() {
        assert!(decode_marker("{'traceMarker': ['a.py:1']}").is_none());
        assert!(decode_marker("aten::mm, seq = 3").is_none());
        assert!(decode_marker("{'mod': 'x', 'op': 'y'").is_none());
        let m = decode_marker("{'mod': 'x', 'op': 'y', 'args': 3}").unwrap();
        assert!(!m.well_formed);
        let m = decode_marker("{'mod': 'x', 'op': 'y', 'args': [{'type': 'int'}]}").unwrap();
        assert!(!m.well_formed);
        assert!(m.args.is_empty());
    }
}
