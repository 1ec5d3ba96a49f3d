//! A small reader and writer for Python literals.
//!
//! PyProf writes its markers and its `.dict` records as the `repr()` of Python
//! values and reads them back with `eval()`. rprof never evaluates input: this
//! module parses the literal subset those files use (strings with escapes,
//! integers, floats, `None`, `True`, `False`, lists, tuples and dicts) and keeps
//! anything else it meets (a bare name such as `inf`, `device(type='cuda')`)
//! as an opaque [`Value::Other`] token instead of failing, so one odd marker
//! never stops a run.

use std::fmt::Write as _;

/// A parsed Python literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `None`
    None,
    /// `True` / `False`
    Bool(bool),
    /// An integer that fits in `i64`.
    Int(i64),
    /// A float (also integers too large for `i64`).
    Float(f64),
    /// A string.
    Str(String),
    /// `[a, b]`
    List(Vec<Value>),
    /// `(a, b)`
    Tuple(Vec<Value>),
    /// `{k: v}`, keys in the order written.
    Dict(Vec<(Value, Value)>),
    /// Text that is not a literal (a call, a bare name), kept verbatim.
    Other(String),
}

impl Value {
    /// The value under string key `key` when `self` is a dict.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Dict(items) => items
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string inside a `Str`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer inside an `Int`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The items of a list or a tuple.
    pub fn as_seq(&self) -> Option<&[Value]> {
        match self {
            Value::List(v) | Value::Tuple(v) => Some(v),
            _ => None,
        }
    }

    /// Python's `repr()` of this value.
    pub fn to_repr(&self) -> String {
        let mut out = String::new();
        write_repr(&mut out, self);
        out
    }
}

/// Why a text is not a literal.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a Python literal at byte {at}: {why}")]
pub struct ParseError {
    /// Byte offset of the problem.
    pub at: usize,
    /// What was expected.
    pub why: &'static str,
}

/// Parse one literal; the whole text must be consumed (surrounding
/// whitespace is allowed).
pub fn parse(text: &str) -> Result<Value, ParseError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("trailing text"));
    }
    Ok(v)
}

const MAX_DEPTH: usize = 200;

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, why: &'static str) -> ParseError {
        ParseError { at: self.i, why }
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        self.ws();
        let Some(c) = self.peek() else {
            return Err(self.err("unexpected end"));
        };
        match c {
            b'\'' | b'"' => self.string().map(Value::Str),
            b'[' => self.nested(b']', |items| Ok(Value::List(items))),
            b'(' => self.tuple(),
            b'{' => self.dict(),
            b'-' | b'+' | b'0'..=b'9' | b'.' => self.number(),
            _ => self.word(),
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        Ok(())
    }

    /// Items separated by commas up to `close`; a trailing comma is allowed.
    fn items(&mut self, close: u8) -> Result<(Vec<Value>, bool), ParseError> {
        self.enter()?;
        self.i += 1; // opening bracket
        let mut items = Vec::new();
        let mut trailing_comma = false;
        loop {
            self.ws();
            match self.peek() {
                None => return Err(self.err("unclosed bracket")),
                Some(c) if c == close => {
                    self.i += 1;
                    break;
                }
                _ => {}
            }
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    trailing_comma = true;
                }
                Some(c) if c == close => {
                    self.i += 1;
                    trailing_comma = false;
                    break;
                }
                _ => return Err(self.err("expected ',' or a closing bracket")),
            }
        }
        self.depth -= 1;
        Ok((items, trailing_comma))
    }

    fn nested(
        &mut self,
        close: u8,
        make: impl FnOnce(Vec<Value>) -> Result<Value, ParseError>,
    ) -> Result<Value, ParseError> {
        let (items, _) = self.items(close)?;
        make(items)
    }

    fn tuple(&mut self) -> Result<Value, ParseError> {
        let (items, trailing_comma) = self.items(b')')?;
        // `(x)` is just x in Python; `(x,)` is a 1-tuple.
        if items.len() == 1 && !trailing_comma {
            return items
                .into_iter()
                .next()
                .ok_or_else(|| self.err("empty parentheses"));
        }
        Ok(Value::Tuple(items))
    }

    fn dict(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.ws();
            match self.peek() {
                None => return Err(self.err("unclosed dict")),
                Some(b'}') => {
                    self.i += 1;
                    break;
                }
                _ => {}
            }
            let k = self.value()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':' in dict"));
            }
            self.i += 1;
            let v = self.value()?;
            items.push((k, v));
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    break;
                }
                _ => return Err(self.err("expected ',' or '}' in dict")),
            }
        }
        self.depth -= 1;
        Ok(Value::Dict(items))
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'+' | b'_') {
                self.i += 1;
            } else {
                break;
            }
        }
        let tok = &self.text[start..self.i];
        let clean: String = tok.chars().filter(|c| *c != '_').collect();
        if let Ok(i) = clean.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        if let Ok(f) = clean.parse::<f64>() {
            return Ok(Value::Float(f));
        }
        Ok(Value::Other(tok.to_owned()))
    }

    /// A bare word: `None`, `True`, `False`, or anything else up to the next
    /// top-level separator, kept as [`Value::Other`].
    fn word(&mut self) -> Result<Value, ParseError> {
        let start = self.i;
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                b',' | b':' if depth == 0 => break,
                b'\'' | b'"' => {
                    // skip a quoted string inside the token
                    self.string()?;
                    continue;
                }
                _ => {}
            }
            self.i += 1;
        }
        let tok = self.text[start..self.i].trim_end();
        match tok {
            "None" => Ok(Value::None),
            "True" => Ok(Value::Bool(true)),
            "False" => Ok(Value::Bool(false)),
            "" => Err(self.err("expected a value")),
            _ => Ok(Value::Other(tok.to_owned())),
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let quote = self.s[self.i];
        self.i += 1;
        let mut out = String::new();
        let mut run_start = self.i;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err("unterminated string"));
            };
            if c == quote {
                out.push_str(&self.text[run_start..self.i]);
                self.i += 1;
                return Ok(out);
            }
            if c != b'\\' {
                self.i += 1;
                continue;
            }
            out.push_str(&self.text[run_start..self.i]);
            self.i += 1;
            let Some(e) = self.peek() else {
                return Err(self.err("unterminated escape"));
            };
            self.i += 1;
            match e {
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'0' => out.push('\0'),
                b'a' => out.push('\u{7}'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'v' => out.push('\u{b}'),
                b'\\' => out.push('\\'),
                b'\'' => out.push('\''),
                b'"' => out.push('"'),
                b'\n' => {}
                b'x' => out.push(self.hex_escape(2)?),
                b'u' => out.push(self.hex_escape(4)?),
                b'U' => out.push(self.hex_escape(8)?),
                _ => {
                    // Python keeps unknown escapes verbatim.
                    out.push('\\');
                    self.i -= 1;
                }
            }
            run_start = self.i;
        }
    }

    fn hex_escape(&mut self, n: usize) -> Result<char, ParseError> {
        let end = self.i + n;
        let digits = self
            .text
            .get(self.i..end)
            .ok_or_else(|| self.err("short hex escape"))?;
        let code = u32::from_str_radix(digits, 16).map_err(|_| self.err("bad hex escape"))?;
        self.i = end;
        char::from_u32(code).ok_or_else(|| self.err("escape is not a character"))
    }
}

/// Append Python's `repr()` of `v` to `out`.
pub fn write_repr(out: &mut String, v: &Value) {
    match v {
        Value::None => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::Str(s) => write_str_repr(out, s),
        Value::List(items) => {
            out.push('[');
            write_items(out, items);
            out.push(']');
        }
        Value::Tuple(items) => {
            out.push('(');
            write_items(out, items);
            if items.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        Value::Dict(items) => {
            out.push('{');
            for (n, (k, v)) in items.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write_repr(out, k);
                out.push_str(": ");
                write_repr(out, v);
            }
            out.push('}');
        }
        Value::Other(t) => out.push_str(t),
    }
}

fn write_items(out: &mut String, items: &[Value]) {
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        write_repr(out, item);
    }
}

/// Python's `repr()` of a string: single quotes unless the text holds a `'`
/// and no `"`.
pub fn write_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `str()`/`repr()` of a float: the shortest round-trip digits,
/// with `.0` on integral values and exponent form from 1e16 on (and below
/// 1e-4).
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: d.ddddde±x
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exp) {
        // positional
        let point = exp + 1; // digits before the decimal point
        let mut s = String::from(sign);
        if point <= 0 {
            s.push_str("0.");
            for _ in 0..(-point) {
                s.push('0');
            }
            s.push_str(&digits);
        } else {
            let point = point as usize;
            if digits.len() <= point {
                s.push_str(&digits);
                for _ in digits.len()..point {
                    s.push('0');
                }
                s.push_str(".0");
            } else {
                s.push_str(&digits[..point]);
                s.push('.');
                s.push_str(&digits[point..]);
            }
        }
        s
    } else {
        let mut s = String::from(sign);
        s.push_str(&digits[..1]);
        if digits.len() > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        let _ = write!(s, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pyprof_marker() {
        let t = "{'mod': 'Tensor', 'op': '__mul__', 'args': [{'name': '', 'type': 'tensor', 'shape': (35, 20, 200), 'dtype': 'float32'}, {'name': '', 'type': 'float', 'value': 14.142135623730951}]}";
        let v = parse(t).unwrap();
        assert_eq!(v.get("op").and_then(Value::as_str), Some("__mul__"));
        let args = v.get("args").and_then(Value::as_seq).unwrap();
        assert_eq!(
            args[0].get("shape"),
            Some(&Value::Tuple(vec![
                Value::Int(35),
                Value::Int(20),
                Value::Int(200)
            ]))
        );
        assert_eq!(
            args[1].get("value"),
            Some(&Value::Float(14.142135623730951))
        );
        assert_eq!(v.to_repr(), t);
    }

    #[test]
    fn one_tuples_and_parenthesised_values() {
        assert_eq!(parse("(3,)").unwrap(), Value::Tuple(vec![Value::Int(3)]));
        assert_eq!(parse("(3)").unwrap(), Value::Int(3));
        assert_eq!(parse("()").unwrap(), Value::Tuple(vec![]));
        assert_eq!(parse("(3,)").unwrap().to_repr(), "(3,)");
    }

    #[test]
    fn strings_choose_quotes_like_python() {
        let mut s = String::new();
        write_str_repr(&mut s, "{'a': 1}");
        assert_eq!(s, "\"{'a': 1}\"");
        s.clear();
        write_str_repr(&mut s, "it's \"x\"");
        assert_eq!(s, "'it\\'s \"x\"'");
        assert_eq!(parse(&s).unwrap(), Value::Str("it's \"x\"".into()));
        s.clear();
        write_str_repr(&mut s, "a\nb\\c\u{1}é");
        assert_eq!(s, "'a\\nb\\\\c\\x01é'");
        assert_eq!(parse(&s).unwrap(), Value::Str("a\nb\\c\u{1}é".into()));
    }

    #[test]
    fn unknown_tokens_are_kept_not_evaluated() {
        let v = parse("[device(type='cuda', index=0), inf, __import__('os')]").unwrap();
        assert_eq!(
            v,
            Value::List(vec![
                Value::Other("device(type='cuda', index=0)".into()),
                Value::Other("inf".into()),
                Value::Other("__import__('os')".into()),
            ])
        );
    }

    #[test]
    fn errors_instead_of_panics() {
        for bad in [
            "", "[1, 2", "{'a' 1}", "'abc", "(1, 2", "{1: }", "[,]", "'\\x4'",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let deep = "[".repeat(10_000);
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn floats_print_like_python() {
        assert_eq!(float_repr(140000.0), "140000.0");
        assert_eq!(float_repr(4.5), "4.5");
        assert_eq!(float_repr(1.5e16), "1.5e+16");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(9999999999999998.0), "9999999999999998.0");
        assert_eq!(float_repr(3699376128.0), "3699376128.0");
        assert_eq!(float_repr(0.0001), "0.0001");
        assert_eq!(float_repr(0.00001), "1e-05");
        assert_eq!(float_repr(-2.5), "-2.5");
        assert_eq!(float_repr(14.142135623730951), "14.142135623730951");
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,80}") {
            let _ = parse(&s);
        }

        #[test]
        fn strings_round_trip(s in "\\PC{0,40}") {
            let mut r = String::new();
            write_str_repr(&mut r, &s);
            proptest::prop_assert_eq!(parse(&r).unwrap(), Value::Str(s));
        }
    }
}
