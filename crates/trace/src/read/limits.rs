//! Bounds on what a hostile input can make the readers hold or do.
//!
//! Each limit is a named constant with a one-line error beyond it, so that
//! a crafted file ends with exit 1 instead of exhausting memory or time.

use std::io::{self, Read};

/// Longest JSON string (kernel name, operator name, call stack, any value)
/// accepted in a Kineto trace, in bytes of JSON text. Real names are at
/// most a few kilobytes; a multi-gigabyte string inside a small gzip file
/// would otherwise be captured whole.
pub const MAX_JSON_STRING_BYTES: usize = 4 << 20;

/// Longest text (kernel name, NVTX text) read from a SQLite profile, in
/// bytes. Each record repeats its enclosing NVTX texts, so one huge text
/// enclosing many kernels multiplies into the output.
pub const MAX_SQL_TEXT_BYTES: usize = 1 << 20;

/// SQLite virtual-machine steps allowed per query, in units of
/// [`PROGRESS_STEP`] instructions: a view over an endless recursive query
/// stops here instead of running forever. A real export needs a few dozen
/// instructions per row; 2^22 × 1000 steps allow billions of rows.
pub const MAX_SQL_PROGRESS_CALLS: u64 = 1 << 22;

/// Instructions between two calls of the SQLite progress handler.
pub const PROGRESS_STEP: i32 = 1000;

/// A reader that passes JSON text through and fails once a string is
/// longer than [`MAX_JSON_STRING_BYTES`]. It only tracks whether it is
/// inside a string, so it costs one scan of the text.
pub struct JsonStringCap<R> {
    inner: R,
    in_string: bool,
    escaped: bool,
    run: usize,
}

impl<R: Read> JsonStringCap<R> {
    /// Wrap `inner`.
    pub fn new(inner: R) -> Self {
        JsonStringCap {
            inner,
            in_string: false,
            escaped: false,
            run: 0,
        }
    }

    fn scan(&mut self, mut b: &[u8]) -> io::Result<()> {
        while !b.is_empty() {
            if self.escaped {
                self.escaped = false;
                self.run += 1;
                b = &b[1..];
                continue;
            }
            if !self.in_string {
                match memchr::memchr(b'"', b) {
                    Some(i) => {
                        self.in_string = true;
                        self.run = 0;
                        b = &b[i + 1..];
                    }
                    None => return Ok(()),
                }
            } else {
                match memchr::memchr2(b'"', b'\\', b) {
                    Some(i) => {
                        self.run += i;
                        if b[i] == b'"' {
                            self.in_string = false;
                        } else {
                            self.escaped = true;
                        }
                        b = &b[i + 1..];
                    }
                    None => {
                        self.run += b.len();
                        b = &[];
                    }
                }
                if self.run > MAX_JSON_STRING_BYTES {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "a JSON string is longer than {} MiB (rprof's limit)",
                            MAX_JSON_STRING_BYTES >> 20
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl<R: Read> Read for JsonStringCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.scan(&buf[..n])?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        // tiny reads, so that strings and escapes span several of them
        let mut r = JsonStringCap::new(text);
        let mut buf = [0u8; 7];
        loop {
            let n = r.read(&mut buf)?;
            if n == 0 {
                return Ok(out);
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    #[test]
    fn passes_text_and_stops_long_strings() {
        let ok = br#"{"a":"x\"y\\","b":[1,2,"z"]}"#;
        assert_eq!(read_all(ok).unwrap(), ok);
        let mut long = b"{\"a\":\"".to_vec();
        long.extend(std::iter::repeat_n(b'x', MAX_JSON_STRING_BYTES + 1));
        long.extend_from_slice(b"\"}");
        let e = read_all(&long).unwrap_err();
        assert!(e.to_string().contains("longer than 4 MiB"), "{e}");
        // many short strings adding up to more than the limit are fine
        let mut many = b"[".to_vec();
        for _ in 0..(MAX_JSON_STRING_BYTES / 1000 + 10) {
            many.extend_from_slice(b"\"");
            many.extend(std::iter::repeat_n(b'y', 1000));
            many.extend_from_slice(b"\",");
        }
        many.extend_from_slice(b"0]");
        assert_eq!(read_all(&many).unwrap().len(), many.len());
    }
}
