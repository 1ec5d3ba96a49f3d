//! Text from a trace is data: before it reaches a terminal, every control
//! character is made visible.
//!
//! [`escape_control`] turns C0 controls (NUL, BEL, backspace, tab, CR, LF,
//! ESC, …), DEL and the C1 controls into `\xNN` (or `\u{NNNN}` above
//! 0xFF), so that a kernel name cannot set the window title, clear the
//! screen, colour the output or split a row. Everything else, backslashes
//! included, is kept as is. CSV and JSON outputs quote their fields and do
//! not need it; every human-readable table and message does.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `s` with control characters written as visible escapes (borrowed when
/// there are none).
///
/// ```
/// use rprof_report::escape::escape_control;
/// assert_eq!(escape_control("a\x1b]0;x\x07b\n"), "a\\x1b]0;x\\x07b\\x0a");
/// assert_eq!(escape_control("plain é"), "plain é");
/// ```
pub fn escape_control(s: &str) -> Cow<'_, str> {
    // printable ASCII, the common case, checked first (the walk by chars
    // was a share of writing a large report)
    if printable_ascii(s.as_bytes()) || !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    push_escaped(&mut out, s);
    Cow::Owned(out)
}

/// Whether every byte of `s` is printable ASCII (0x20 to 0x7e).
/// Hand-written for speed: a large report checks a gigabyte of names, and
/// the byte-at-a-time walk of `Iterator::all` (which stops at the first
/// miss) is not vectorised; this checks 32 bytes per step without a branch
/// inside the step, which the compiler turns into vector instructions.
pub fn printable_ascii(s: &[u8]) -> bool {
    let mut blocks = s.chunks_exact(32);
    for block in &mut blocks {
        let mut outside = 0u8;
        for &b in block {
            // 0x20..=0x7e maps to 0..=0x5e; every other byte above it
            outside |= u8::from(b.wrapping_sub(0x20) > 0x5e);
        }
        if outside != 0 {
            return false;
        }
    }
    blocks
        .remainder()
        .iter()
        .all(|b| b.wrapping_sub(0x20) <= 0x5e)
}

/// Append `s` to `out`, control characters escaped as in [`escape_control`].
pub fn push_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        if c.is_control() {
            let n = u32::from(c);
            if n <= 0xFF {
                let _ = write!(out, "\\x{n:02x}");
            } else {
                let _ = write!(out, "\\u{{{n:04x}}}");
            }
        } else {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value at every position of strings longer and shorter
    /// than a block, against the definition.
    #[test]
    fn printable_ascii_is_the_byte_range() {
        for len in [0usize, 1, 31, 32, 33, 64, 95] {
            let clean: Vec<u8> = (0..len).map(|i| b' ' + (i % 95) as u8).collect();
            assert!(printable_ascii(&clean), "{len}");
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut s = clean.clone();
                    s[at] = b;
                    let want = (0x20..0x7f).contains(&b);
                    assert_eq!(printable_ascii(&s), want, "{len} {at} {b}");
                }
            }
        }
    }

    #[test]
    fn escapes_every_control_character() {
        for n in (0u32..0x20).chain(0x7f..0xa0) {
            let c = char::from_u32(n).unwrap();
            let got = escape_control(&c.to_string()).into_owned();
            assert_eq!(got, format!("\\x{n:02x}"));
            assert!(!got.chars().any(char::is_control));
        }
        assert!(matches!(escape_control("abc\\x"), Cow::Borrowed("abc\\x")));
    }
}
