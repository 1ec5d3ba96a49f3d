//! A stock marker's `sizes` (and Kineto's `dtypes`) as the argument
//! records the models read.
//!
//! `sizes` has one entry per op input in schema order; `[]` stands for a
//! scalar, an int list, `None` or a 0-dim tensor alike (pyprof-semantics.md
//! §10.1). Without dtypes a `[]` becomes a Python-scalar record (one
//! element, `float`), a shape a tensor of the kernel's data type, or
//! `int64` where the op's row says the entry is an index tensor. Kineto's
//! dtypes, when they match the sizes one for one, are exact: `''` is not
//! data, `Scalar` a scalar, a type name a tensor of that type.

use rprof_model::pylit::Value;

use crate::dtype::Dtype;
use crate::marker::Arg;
use crate::table::ArgMap;

/// The argument records, and whether some data tensor's type is unknown.
pub(crate) struct Built {
    /// Records in the order the rule reads them.
    pub(crate) args: Vec<Arg>,
    /// A data tensor got the `?` type.
    pub(crate) dtype_unknown: bool,
}

/// The printed type of a tensor whose type nothing tells.
pub(crate) const UNKNOWN: &str = "?";

/// Build the records of one marker.
pub(crate) fn build(
    sizes: &[Vec<i64>],
    dtypes: Option<&[&str]>,
    map: ArgMap,
    data: Option<Dtype>,
) -> Built {
    let kineto = dtypes.filter(|d| d.len() == sizes.len());
    let order: Vec<usize> = if map.pick.is_empty() {
        (0..sizes.len()).collect()
    } else {
        map.pick.to_vec()
    };
    let mut out = Built {
        args: Vec::with_capacity(order.len()),
        dtype_unknown: false,
    };
    for j in order {
        let Some(shape) = sizes.get(j) else {
            continue;
        };
        let index = map.int64.contains(&j);
        let arg = match kineto.and_then(|d| d.get(j)) {
            Some(&"") => Arg::new_value("", "NoneType", Value::None),
            Some(&"Scalar") => Arg::new_value("", "float", Value::None),
            Some(&name) => match Dtype::from_cpp(name) {
                Some(d) => Arg::new_tensor("", shape, d.spelling()),
                None if shape.is_empty() => Arg::new_value("", "NoneType", Value::None),
                None => {
                    out.dtype_unknown |= !index;
                    Arg::new_tensor("", shape, UNKNOWN)
                }
            },
            None if shape.is_empty() => Arg::new_value("", "float", Value::None),
            None if index => Arg::new_tensor("", shape, "int64"),
            None => match data {
                Some(d) => Arg::new_tensor("", shape, d.spelling()),
                None => {
                    out.dtype_unknown = true;
                    Arg::new_tensor("", shape, UNKNOWN)
                }
            },
        };
        out.args.push(arg);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: ArgMap = ArgMap {
        pick: &[],
        int64: &[],
    };

    #[test]
    fn nsys_sizes() {
        let sizes = vec![vec![1024], vec![32, 512], vec![512, 1024], vec![], vec![]];
        let b = build(&sizes, None, ALL, Some(Dtype::F16));
        assert_eq!(b.args.len(), 5);
        assert_eq!(b.args[1].tensor(), Some((&[32i64, 512][..], "float16")));
        assert_eq!(b.args[3].ty, "float");
        assert!(!b.dtype_unknown);
        let b = build(&sizes, None, ALL, None);
        assert_eq!(b.args[0].tensor(), Some((&[1024i64][..], "?")));
        assert!(b.dtype_unknown);
        // embedding(weight, indices) → (indices, weight)
        let map = ArgMap {
            pick: &[1, 0],
            int64: &[1],
        };
        let b = build(
            &[vec![100, 8], vec![4, 7], vec![]],
            None,
            map,
            Some(Dtype::F32),
        );
        assert_eq!(b.args[0].tensor(), Some((&[4i64, 7][..], "int64")));
        assert_eq!(b.args[1].tensor(), Some((&[100i64, 8][..], "float32")));
        // a pick past the end is skipped
        let b = build(&[vec![3]], None, map, None);
        assert_eq!(b.args.len(), 1);
    }

    #[test]
    fn kineto_dtypes() {
        let sizes = vec![vec![2, 3], vec![], vec![], vec![4]];
        let d = ["c10::Half", "Scalar", "", "TensorList"];
        let b = build(&sizes, Some(&d), ALL, Some(Dtype::F32));
        assert_eq!(b.args[0].tensor(), Some((&[2i64, 3][..], "float16")));
        assert_eq!(b.args[1].ty, "float");
        assert_eq!(b.args[2].ty, "NoneType");
        assert_eq!(b.args[3].tensor(), Some((&[4i64][..], "?")));
        assert!(b.dtype_unknown);
        // a 0-dim tensor
        let b = build(&[vec![]], Some(&["double"]), ALL, None);
        assert_eq!(b.args[0].tensor(), Some((&[][..], "float64")));
        // lengths differ: the kernel's type
        let b = build(
            &[vec![2], vec![2]],
            Some(&["float"]),
            ALL,
            Some(Dtype::Bf16),
        );
        assert_eq!(b.args[1].tensor(), Some((&[2i64][..], "bfloat16")));
    }
}
