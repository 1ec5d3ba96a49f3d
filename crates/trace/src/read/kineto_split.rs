//! Splits a Kineto trace's JSON text into its top-level members and the
//! elements of `traceEvents`, without interpreting them.
//!
//! Hand-written for speed. serde_json's stream reader takes the text one
//! byte at a time through `Read`, which was about half of the read time of
//! a large trace; its slice reader is about twice as fast. No JSON crate
//! hands out the elements of one array inside a stream as slices while
//! holding only a bounded part of the stream, so this splitter does that
//! much: it tracks strings and bracket depth only. Every element and member
//! is then parsed by serde_json from its slice, which checks the JSON fully;
//! the splitter itself checks only the punctuation between them, which
//! serde never sees.

use std::io::{self, Read};

/// Bytes read from the input at a time.
const BLOCK_BYTES: usize = 1 << 20;

/// Bytes of events gathered before they are handed over together.
pub(super) const BATCH_BYTES: usize = 4 << 20;

/// Longest top-level member other than `traceEvents` kept for parsing
/// (`deviceProperties`, `distributedInfo` and the like are a few kB).
pub(super) const MAX_MEMBER_BYTES: usize = 64 << 20;

/// Longest single event accepted, in bytes of JSON text. Real events are a
/// few kB; an event is held whole before it is parsed, so a crafted one
/// (a gigantic ignored field) must not grow memory without bound.
pub(super) const MAX_EVENT_BYTES: usize = 64 << 20;

/// A position in the input: 1-based line, and the bytes before it on its
/// line (serde_json's column convention).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Pos {
    /// 1-based line.
    pub line: u64,
    /// Bytes before the position on its line.
    pub col: u64,
}

impl Pos {
    /// Where a position `rel` inside a piece that starts at `self` lies in
    /// the whole input (`rel` as serde_json reports it for the piece).
    pub fn offset(self, rel: Pos) -> Pos {
        if rel.line <= 1 {
            Pos {
                line: self.line,
                col: self.col + rel.col,
            }
        } else {
            Pos {
                line: self.line + rel.line - 1,
                col: rel.col,
            }
        }
    }
}

/// What the splitter found, in input order.
pub(super) enum Piece {
    /// A member of the root object other than an array `traceEvents`.
    Member {
        /// The key's JSON text, quotes included.
        key: Vec<u8>,
        /// The value's JSON text (empty when longer than the limit and not
        /// kept).
        value: Vec<u8>,
        /// Where the value starts.
        at: Pos,
    },
    /// The start of an events array (a root array, or `traceEvents`).
    EventsStart,
    /// Some consecutive events: their text, back to back, and where each
    /// one ends in `bytes` and starts in the input.
    Events {
        /// The events' JSON text.
        bytes: Vec<u8>,
        /// End offset in `bytes` and input position of each event.
        ends: Vec<(usize, Pos)>,
    },
}

/// Why the splitter stopped.
#[derive(Debug)]
pub(super) enum SplitError {
    /// Reading or decompressing failed.
    Io(io::Error),
    /// The input ends inside the document.
    Truncated,
    /// Wrong punctuation between members or elements.
    Syntax {
        /// What was expected.
        what: &'static str,
        /// Where.
        at: Pos,
    },
}

impl From<io::Error> for SplitError {
    fn from(e: io::Error) -> Self {
        SplitError::Io(e)
    }
}

/// Append `seg` to the value kept in `out` since `start_len`, or, once
/// the value would pass `keep_max` bytes, drop what was kept and stop
/// keeping (`kept` becomes false).
fn keep(out: &mut Vec<u8>, start_len: usize, seg: &[u8], keep_max: usize, kept: &mut bool) {
    if !*kept {
        return;
    }
    if out.len() - start_len + seg.len() <= keep_max {
        out.extend_from_slice(seg);
    } else {
        out.truncate(start_len);
        *kept = false;
    }
}

/// The reading state: a block of input, the read position, and the line
/// count up to `counted`.
struct Scanner<R> {
    reader: R,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    eof: bool,
    /// Newlines before `buf[counted]` are counted in `line`.
    counted: usize,
    line: u64,
    /// Bytes since the last newline, up to `buf[counted]`.
    col: u64,
}

impl<R: Read> Scanner<R> {
    fn new(reader: R) -> Self {
        Scanner {
            reader,
            buf: vec![0; BLOCK_BYTES],
            pos: 0,
            len: 0,
            eof: false,
            counted: 0,
            line: 1,
            col: 0,
        }
    }

    /// Count lines up to `upto` in the current block.
    fn count_to(&mut self, upto: usize) {
        let seg = &self.buf[self.counted..upto];
        match memchr::memrchr(b'\n', seg) {
            Some(last) => {
                self.line += memchr::memchr_iter(b'\n', seg).count() as u64;
                self.col = (seg.len() - last - 1) as u64;
            }
            None => self.col += seg.len() as u64,
        }
        self.counted = upto;
    }

    /// The position of `buf[self.pos]`.
    fn here(&mut self) -> Pos {
        self.count_to(self.pos);
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    /// Make `buf[pos]` available; false at the end of the input.
    fn fill(&mut self) -> io::Result<bool> {
        if self.pos < self.len {
            return Ok(true);
        }
        if self.eof {
            return Ok(false);
        }
        self.count_to(self.len);
        self.pos = 0;
        self.counted = 0;
        self.len = 0;
        loop {
            match self.reader.read(&mut self.buf) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.len = n;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next byte that is not JSON white space, not consumed; `None` at
    /// the end of the input.
    fn peek_token(&mut self) -> io::Result<Option<u8>> {
        loop {
            if !self.fill()? {
                return Ok(None);
            }
            let b = self.buf[self.pos];
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                return Ok(Some(b));
            }
        }
    }

    /// Append one JSON value's text to `out`, consumed; the value starts at
    /// the next token. Stops keeping bytes beyond `keep_max` but still
    /// consumes the value; returns whether all of it was kept.
    fn take_value(&mut self, out: &mut Vec<u8>, keep_max: usize) -> Result<bool, SplitError> {
        let start_len = out.len();
        let mut kept = true;
        let first = self.peek_token()?.ok_or(SplitError::Truncated)?;
        match first {
            b'{' | b'[' => {
                let mut depth: u64 = 0;
                let mut in_string = false;
                let mut escaped = false;
                loop {
                    if !self.fill()? {
                        return Err(SplitError::Truncated);
                    }
                    let seg = &self.buf[self.pos..self.len];
                    let mut i = 0;
                    let mut done = false;
                    while i < seg.len() {
                        if in_string {
                            let (next, closed) = string_step(seg, i, &mut escaped);
                            i = next;
                            in_string = !closed;
                            continue;
                        }
                        match seg[i] {
                            b'"' => in_string = true,
                            b'{' | b'[' => depth += 1,
                            b'}' | b']' => {
                                depth -= 1;
                                if depth == 0 {
                                    i += 1;
                                    done = true;
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    keep(out, start_len, &seg[..i], keep_max, &mut kept);
                    self.pos += i;
                    if done {
                        return Ok(kept);
                    }
                }
            }
            b'"' => {
                // the opening quote, then up to the closing one
                out.push(b'"');
                self.pos += 1;
                let mut escaped = false;
                loop {
                    if !self.fill()? {
                        return Err(SplitError::Truncated);
                    }
                    let seg = &self.buf[self.pos..self.len];
                    let mut i = 0;
                    let mut done = false;
                    while i < seg.len() {
                        let (next, closed) = string_step(seg, i, &mut escaped);
                        i = next;
                        if closed {
                            done = true;
                            break;
                        }
                    }
                    keep(out, start_len, &seg[..i], keep_max, &mut kept);
                    self.pos += i;
                    if done {
                        return Ok(kept);
                    }
                }
            }
            b',' | b']' | b'}' | b':' => Err(SplitError::Syntax {
                what: "expected a value",
                at: self.here(),
            }),
            _ => {
                // a number or literal: up to the next delimiter; serde
                // checks its spelling
                loop {
                    if !self.fill()? {
                        return Ok(kept);
                    }
                    let seg = &self.buf[self.pos..self.len];
                    let i = seg
                        .iter()
                        .position(|b| {
                            matches!(b, b',' | b']' | b'}' | b':' | b' ' | b'\t' | b'\n' | b'\r')
                        })
                        .unwrap_or(seg.len());
                    if out.len() - start_len + i > keep_max.min(1 << 10) {
                        return Err(SplitError::Syntax {
                            what: "a number or literal longer than 1 KiB",
                            at: self.here(),
                        });
                    }
                    out.extend_from_slice(&seg[..i]);
                    self.pos += i;
                    if self.pos < self.len {
                        return Ok(kept);
                    }
                }
            }
        }
    }

    /// Consume `b` as the next token, or fail with `what`.
    fn expect(&mut self, b: u8, what: &'static str) -> Result<(), SplitError> {
        match self.peek_token()? {
            Some(x) if x == b => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => Err(SplitError::Syntax {
                what,
                at: self.here(),
            }),
            None => Err(SplitError::Truncated),
        }
    }
}

/// Split the JSON text from `reader`, handing each piece to `sink` in input
/// order. Returns at the end of the document; `sink` returning false stops
/// early (the receiver is gone).
pub(super) fn split<R: Read>(
    reader: R,
    mut sink: impl FnMut(Piece) -> bool,
) -> Result<(), SplitError> {
    let mut s = Scanner::new(reader);
    match s.peek_token()? {
        None => return Err(SplitError::Truncated),
        Some(b'[') => {
            s.pos += 1;
            if !sink(Piece::EventsStart) || !events(&mut s, &mut sink)? {
                return Ok(());
            }
        }
        Some(b'{') => {
            s.pos += 1;
            if !root_members(&mut s, &mut sink)? {
                return Ok(());
            }
        }
        Some(_) => {
            return Err(SplitError::Syntax {
                what: "expected a Kineto trace: an object with traceEvents, or an array of events",
                at: s.here(),
            });
        }
    }
    match s.peek_token()? {
        None => Ok(()),
        Some(_) => Err(SplitError::Syntax {
            what: "trailing characters after the trace",
            at: s.here(),
        }),
    }
}

/// The members of the root object, after its `{`. False when the sink
/// stopped.
fn root_members<R: Read>(
    s: &mut Scanner<R>,
    sink: &mut impl FnMut(Piece) -> bool,
) -> Result<bool, SplitError> {
    if s.peek_token()? == Some(b'}') {
        s.pos += 1;
        return Ok(true);
    }
    loop {
        if s.peek_token()? != Some(b'"') {
            return match s.peek_token()? {
                None => Err(SplitError::Truncated),
                Some(_) => Err(SplitError::Syntax {
                    what: "expected a key",
                    at: s.here(),
                }),
            };
        }
        let mut key = Vec::new();
        if !s.take_value(&mut key, 1 << 10)? {
            return Err(SplitError::Syntax {
                what: "a key longer than 1 KiB",
                at: s.here(),
            });
        }
        s.expect(b':', "expected `:` after a key")?;
        let at = {
            s.peek_token()?;
            s.here()
        };
        if key == b"\"traceEvents\"" && s.peek_token()? == Some(b'[') {
            s.pos += 1;
            if !sink(Piece::EventsStart) || !events(s, sink)? {
                return Ok(false);
            }
        } else {
            let mut value = Vec::new();
            if !s.take_value(&mut value, MAX_MEMBER_BYTES)? {
                value.clear();
            }
            if !sink(Piece::Member { key, value, at }) {
                return Ok(false);
            }
        }
        match s.peek_token()? {
            Some(b',') => s.pos += 1,
            Some(b'}') => {
                s.pos += 1;
                return Ok(true);
            }
            Some(_) => {
                return Err(SplitError::Syntax {
                    what: "expected `,` or `}` after a member",
                    at: s.here(),
                });
            }
            None => return Err(SplitError::Truncated),
        }
    }
}

/// The elements of an events array, after its `[`, in batches. False when
/// the sink stopped.
fn events<R: Read>(
    s: &mut Scanner<R>,
    sink: &mut impl FnMut(Piece) -> bool,
) -> Result<bool, SplitError> {
    let mut bytes = Vec::with_capacity(BATCH_BYTES + (64 << 10));
    let mut ends = Vec::new();
    if s.peek_token()? == Some(b']') {
        s.pos += 1;
        return Ok(true);
    }
    loop {
        s.peek_token()?;
        let at = s.here();
        if !s.take_value(&mut bytes, MAX_EVENT_BYTES)? {
            return Err(SplitError::Syntax {
                what: "an event longer than 64 MiB (rprof's limit)",
                at,
            });
        }
        ends.push((bytes.len(), at));
        if bytes.len() >= BATCH_BYTES {
            let full = std::mem::replace(&mut bytes, Vec::with_capacity(BATCH_BYTES + (64 << 10)));
            if !sink(Piece::Events {
                bytes: full,
                ends: std::mem::take(&mut ends),
            }) {
                return Ok(false);
            }
        }
        match s.peek_token()? {
            Some(b',') => s.pos += 1,
            Some(b']') => {
                s.pos += 1;
                break;
            }
            Some(_) => {
                return Err(SplitError::Syntax {
                    what: "expected `,` or `]` after an event",
                    at: s.here(),
                });
            }
            None => return Err(SplitError::Truncated),
        }
    }
    Ok(ends.is_empty() || sink(Piece::Events { bytes, ends }))
}

/// One step inside a JSON string from `seg[i]`: past the character an
/// escape (`escaped`) left pending, else up to and past the next quote or
/// backslash (the end of `seg` when there is none). Returns where the
/// string goes on from, and whether that step closed it.
fn string_step(seg: &[u8], i: usize, escaped: &mut bool) -> (usize, bool) {
    if *escaped {
        *escaped = false;
        return (i + 1, false);
    }
    match memchr::memchr2(b'"', b'\\', &seg[i..]) {
        Some(j) if seg[i + j] == b'"' => (i + j + 1, true),
        Some(j) => {
            *escaped = true;
            (i + j + 1, false)
        }
        None => (seg.len(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns at most `n` bytes per call, so that values
    /// span blocks.
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[derive(Debug, PartialEq)]
    enum P {
        M(String, String, Pos),
        Start,
        E(Vec<(String, Pos)>),
    }

    fn run(text: &str, step: usize) -> Result<Vec<P>, SplitError> {
        let mut out = Vec::new();
        split(Trickle(text.as_bytes(), step), |p| {
            out.push(match p {
                Piece::Member { key, value, at } => P::M(
                    String::from_utf8(key).unwrap(),
                    String::from_utf8(value).unwrap(),
                    at,
                ),
                Piece::EventsStart => P::Start,
                Piece::Events { bytes, ends } => {
                    let mut from = 0;
                    P::E(
                        ends.into_iter()
                            .map(|(end, at)| {
                                let e = String::from_utf8(bytes[from..end].to_vec()).unwrap();
                                from = end;
                                (e, at)
                            })
                            .collect(),
                    )
                }
            });
            true
        })?;
        Ok(out)
    }

    fn pos(line: u64, col: u64) -> Pos {
        Pos { line, col }
    }

    #[test]
    fn splits_members_and_events_at_any_read_size() {
        let text = "{\"a\": {\"x\": \"}]\\\"\"},\n \"traceEvents\": [\n  {\"ph\": \"X\", \"n\": [1, {\"q\": \"[\"}]},\n  7 , \"s\\\\\", [] ],\n\"b\":-1.5e3}\n";
        let want = vec![
            P::M("\"a\"".into(), "{\"x\": \"}]\\\"\"}".into(), pos(1, 6)),
            P::Start,
            P::E(vec![
                (
                    "{\"ph\": \"X\", \"n\": [1, {\"q\": \"[\"}]}".into(),
                    pos(3, 2),
                ),
                ("7".into(), pos(4, 2)),
                ("\"s\\\\\"".into(), pos(4, 6)),
                ("[]".into(), pos(4, 13)),
            ]),
            P::M("\"b\"".into(), "-1.5e3".into(), pos(5, 4)),
        ];
        for step in [1, 2, 3, 7, 64, 1 << 20] {
            assert_eq!(run(text, step).unwrap(), want, "read size {step}");
        }
        // a root array
        let got = run(" [ {\"a\":1} ]", 5).unwrap();
        assert_eq!(
            got,
            vec![P::Start, P::E(vec![("{\"a\":1}".into(), pos(1, 3))])]
        );
        assert_eq!(run("{\"traceEvents\":[]}", 4).unwrap(), vec![P::Start]);
        assert_eq!(run("{}", 4).unwrap(), vec![]);
    }

    #[test]
    fn bad_punctuation_and_truncation() {
        let cases = [
            ("", "truncated"),
            ("{\"traceEvents\": [{\"a\": 1}", "truncated"),
            ("{\"traceEvents\": [{\"a\": \"x", "truncated"),
            ("{\"traceEvents\": [{\"a\": 1} {}]}", "expected `,` or `]`"),
            ("{\"traceEvents\": [} ", "expected a value"),
            ("{\"a\" 1}", "expected `:`"),
            ("{\"a\": 1 \"b\": 2}", "expected `,` or `}`"),
            ("{1: 2}", "expected a key"),
            ("{} x", "trailing"),
            ("7", "expected a Kineto trace"),
        ];
        for (text, want) in cases {
            let e = run(text, 3).unwrap_err();
            let got = match e {
                SplitError::Truncated => "truncated".to_owned(),
                SplitError::Syntax { what, .. } => what.to_owned(),
                SplitError::Io(e) => e.to_string(),
            };
            assert!(got.contains(want), "{text:?}: {got}");
        }
    }

    #[test]
    fn an_event_over_the_limit_is_an_error_and_not_held() {
        // one event of many short strings (each under the string limit)
        let mut text = b"{\"traceEvents\": [{\"junk\": [".to_vec();
        while text.len() < MAX_EVENT_BYTES + 1024 {
            text.extend_from_slice(b"\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\",");
        }
        text.extend_from_slice(b"0]}]}");
        let mut held = 0usize;
        let e = split(Trickle(&text, 1 << 20), |p| {
            if let Piece::Events { bytes, .. } = p {
                held = held.max(bytes.len());
            }
            true
        })
        .unwrap_err();
        assert!(
            matches!(e, SplitError::Syntax { what, .. } if what.contains("longer than 64 MiB")),
            "{e:?}"
        );
        assert_eq!(held, 0);
    }

    #[test]
    fn offsets_combine() {
        assert_eq!(pos(3, 10).offset(pos(1, 5)), pos(3, 15));
        assert_eq!(pos(3, 10).offset(pos(2, 5)), pos(4, 5));
    }
}
