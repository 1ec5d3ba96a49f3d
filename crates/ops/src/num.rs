//! FLOP and byte counts as PyProf computed them: Python numbers.
//!
//! PyProf's models return Python ints, except where a formula uses true
//! division (`/`), which turns the value into a float that prints as
//! `140000.0` (`str`) or `140000` (`%d` in columnated mode). [`Num`] keeps
//! that distinction so `--compat` can print exactly what apex.pyprof printed;
//! the default mode only ever produces [`Num::Int`].

use std::fmt::{self, Write as _};

/// A Python `int` or `float`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// An integer (Python ints are unbounded; 128 bits is plenty for shapes).
    Int(i128),
    /// A float, the result of a true division in PyProf's formula.
    Float(f64),
}

impl Num {
    /// Integer zero.
    pub const ZERO: Num = Num::Int(0);

    /// `self * other` with Python's int/float promotion; `None` on integer
    /// overflow.
    pub fn checked_mul(self, other: Num) -> Option<Num> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.checked_mul(b).map(Num::Int),
            (a, b) => Some(Num::Float(a.as_f64() * b.as_f64())),
        }
    }

    /// `self + other`; `None` on integer overflow.
    pub fn checked_add(self, other: Num) -> Option<Num> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.checked_add(b).map(Num::Int),
            (a, b) => Some(Num::Float(a.as_f64() + b.as_f64())),
        }
    }

    /// `self - other`; `None` on integer overflow.
    pub fn checked_sub(self, other: Num) -> Option<Num> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.checked_sub(b).map(Num::Int),
            (a, b) => Some(Num::Float(a.as_f64() - b.as_f64())),
        }
    }

    /// Python's true division `self / other` (always a float); `None` when
    /// dividing by zero (Python raises `ZeroDivisionError`).
    pub fn truediv(self, other: Num) -> Option<Num> {
        let d = other.as_f64();
        if d == 0.0 {
            return None;
        }
        Some(Num::Float(self.as_f64() / d))
    }

    /// The value as a float (Python's `float(x)`).
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// Python's `int(x)`: truncation toward zero; `None` for NaN/infinity.
    pub fn trunc(self) -> Option<i128> {
        match self {
            Num::Int(i) => Some(i),
            Num::Float(f) if f.is_finite() && f.abs() < 1.0e38 => Some(f.trunc() as i128),
            Num::Float(_) => None,
        }
    }

    /// Append Python's `str(x)`: `140000`, `140000.0`, `1.5e+16`.
    pub fn write_str(self, out: &mut String) {
        match self {
            Num::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Num::Float(f) => out.push_str(&rprof_model::pylit::float_repr(f)),
        }
    }

    /// Append Python's `'%d' % x`: floats are truncated toward zero and
    /// printed with all their integer digits.
    pub fn write_percent_d(self, out: &mut String) {
        match self {
            Num::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Num::Float(f) if !f.is_finite() => out.push_str(&rprof_model::pylit::float_repr(f)),
            Num::Float(f) => {
                let t = f.trunc();
                if t == 0.0 {
                    out.push('0');
                } else {
                    let _ = write!(out, "{t:.0}");
                }
            }
        }
    }
}

impl fmt::Display for Num {
    /// Python's `str(x)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write_str(&mut s);
        f.write_str(&s)
    }
}

impl From<i128> for Num {
    fn from(v: i128) -> Num {
        Num::Int(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: Num) -> String {
        n.to_string()
    }

    fn d(n: Num) -> String {
        let mut out = String::new();
        n.write_percent_d(&mut out);
        out
    }

    #[test]
    fn prints_like_python() {
        assert_eq!(s(Num::Int(140000)), "140000");
        assert_eq!(s(Num::Float(140000.0)), "140000.0");
        assert_eq!(s(Num::Float(4.5)), "4.5");
        assert_eq!(s(Num::Float(1.5e16)), "1.5e+16");
        assert_eq!(d(Num::Float(4.5)), "4");
        assert_eq!(d(Num::Float(-0.5)), "0");
        assert_eq!(d(Num::Float(1.5e16)), "15000000000000000");
        assert_eq!(d(Num::Float(3699376128.0)), "3699376128");
    }

    #[test]
    fn promotes_like_python() {
        let e = Num::Int(143500 * 2);
        assert_eq!(e.truediv(Num::Int(2)), Some(Num::Float(143500.0)));
        assert_eq!(
            Num::Int(3).checked_mul(Num::Float(0.5)),
            Some(Num::Float(1.5))
        );
        assert_eq!(Num::Int(3).truediv(Num::Int(0)), None);
        assert_eq!(Num::Int(i128::MAX).checked_mul(Num::Int(2)), None);
        assert_eq!(Num::Float(2.9).trunc(), Some(2));
        assert_eq!(Num::Float(f64::NAN).trunc(), None);
    }
}
