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
    // printable ASCII, the common case, checked byte by byte first (the
    // walk by chars was a share of writing a large report)
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) || !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    push_escaped(&mut out, s);
    Cow::Owned(out)
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
