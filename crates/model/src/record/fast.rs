//! The hand-written reader of the JSON lines [`Record::write_json`] writes.
//!
//! Hand-written because reading records is half of `rprof prof`'s time on a
//! record file, and serde's derived reader pays per key for not knowing
//! their order (matching each key's name, then the value's type). Our
//! writer always writes the same keys in the same order, without spaces,
//! so this reader expects exactly that and reads each value in place. The
//! moment a line differs in anything (another order, a missing or extra
//! key, spaces, a number serde would refuse or read differently, a string
//! serde would refuse) it gives up and serde reads the line, so that what
//! a line means, and every error message, stays serde's. A test checks on
//! random records, and on every record of the corpus, that both readers
//! give the same record.

use std::borrow::Cow;

use super::json::skip_clean_words;
use super::{Dir, Record};

/// `,"name":`, the form [`Cursor::key`] steps over.
macro_rules! k {
    ($name:literal) => {
        concat!(",\"", $name, "\":")
    };
}

/// A line's bytes and the reading position.
struct Cursor<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.s.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.i).copied()
    }

    /// Step over `lit` (a key with its quotes and colon, say). Inlined, as
    /// are the readers that take a key, so that each key is a constant
    /// where it is compared: a few loads rather than a call to `memcmp`
    /// (three per key, 5 % of `prof`'s instructions on a record file).
    #[inline(always)]
    fn lit(&mut self, lit: &str) -> Option<()> {
        let end = self.i.checked_add(lit.len())?;
        (self.bytes().get(self.i..end)? == lit.as_bytes()).then(|| self.i = end)
    }

    /// `,"key":`, given whole ([`k!`]): one comparison with a constant,
    /// not three (the key's name, then its quotes and colon, took 0.45 of
    /// the reader's own instructions, 4 % of `prof -w`'s).
    #[inline(always)]
    fn key(&mut self, quoted: &str) -> Option<()> {
        self.lit(quoted)
    }

    /// `null` (true) or not (false, nothing read).
    fn null(&mut self) -> bool {
        self.lit("null").is_some()
    }

    /// A string, borrowed from the line when it has no escapes. A string
    /// with escapes is decoded by serde_json (rare: names with quotes or
    /// backslashes); one with a raw control character is serde's to refuse.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.lit("\"")?;
        let b = self.bytes();
        let start = self.i;
        let mut i = start;
        loop {
            i = skip_clean_words(b, i);
            match *b.get(i)? {
                b'"' => {
                    self.i = i + 1;
                    return self.s.get(start..i).map(Cow::Borrowed);
                }
                b'\\' => return self.escaped(start),
                c if c < 0x20 => return None,
                _ => i += 1,
            }
        }
    }

    /// The rest of a string that holds an escape, from `start` (just after
    /// its opening quote), decoded by serde_json.
    fn escaped(&mut self, start: usize) -> Option<Cow<'a, str>> {
        let b = self.bytes();
        let mut i = start;
        loop {
            match *b.get(i)? {
                b'\\' => i += 2,
                b'"' => break,
                _ => i += 1,
            }
        }
        let text: String = serde_json::from_str(self.s.get(start - 1..=i)?).ok()?;
        self.i = i + 1;
        Some(Cow::Owned(text))
    }

    /// The digits of an integer as serde_json reads one for an integer
    /// field: no leading zero, no fraction, no exponent (serde refuses
    /// those, or reads them otherwise); `None` on overflow.
    fn uint(&mut self) -> Option<u64> {
        let b = self.bytes();
        let start = self.i;
        // up to 19 digits cannot overflow, and are summed unchecked (with
        // the checks per digit, reading integers took 1.18 × the
        // instructions); 20 or more are summed again, checked
        let mut i = start;
        let mut v: u64 = 0;
        while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|&d| d <= 9) {
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            i += 1;
        }
        self.i = i;
        let len = i - start;
        if len > 19 {
            v = 0;
            for &c in b.get(start..self.i)? {
                v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            }
        }
        let leading_zero = len > 1 && b.get(start) == Some(&b'0');
        let float = matches!(self.peek(), Some(b'.' | b'e' | b'E'));
        (len > 0 && !leading_zero && !float).then_some(v)
    }

    fn int(&mut self) -> Option<i64> {
        if self.lit("-").is_some() {
            // serde_json reads `-0` as a float, which an integer field
            // refuses; down to i64::MIN, whose magnitude i64 cannot hold
            let v = self.uint().filter(|&v| v != 0)?;
            0i64.checked_sub_unsigned(v)
        } else {
            i64::try_from(self.uint()?).ok()
        }
    }

    /// `null`, or what `value` reads.
    fn opt<T>(&mut self, value: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.null() {
            Some(None)
        } else {
            value(self).map(Some)
        }
    }

    /// A float, read by serde_json itself from the number's text (its
    /// rounding is what a record file means).
    fn opt_float(&mut self) -> Option<Option<f64>> {
        if self.null() {
            return Some(None);
        }
        let b = self.bytes();
        let start = self.i;
        while b
            .get(self.i)
            .is_some_and(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            self.i += 1;
        }
        serde_json::from_str(self.s.get(start..self.i)?)
            .ok()
            .map(Some)
    }

    fn bool(&mut self) -> Option<bool> {
        if self.lit("true").is_some() {
            Some(true)
        } else {
            self.lit("false").map(|()| false)
        }
    }

    /// `[item,item,…]`.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        self.lit("[")?;
        let mut out = Vec::new();
        if self.lit("]").is_some() {
            return Some(out);
        }
        loop {
            out.push(item(self)?);
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }

    #[inline(always)]
    fn strs(&mut self, key: &str) -> Option<Vec<Cow<'a, str>>> {
        self.key(key)?;
        self.list(Self::string)
    }

    #[inline(always)]
    fn ints(&mut self, key: &str) -> Option<Vec<i64>> {
        self.key(key)?;
        self.list(Self::int)
    }

    #[inline(always)]
    fn three(&mut self, key: &str) -> Option<[i64; 3]> {
        self.ints(key)?.try_into().ok()
    }
}

impl<'a> Record<'a> {
    /// The record of a line exactly as [`Record::write_json`] writes it
    /// (without its newline), or `None` when the line is anything else:
    /// [`read_line`](super::read_line) reads every line, taking this way
    /// first.
    pub fn from_written_json(line: &'a str) -> Option<Record<'a>> {
        read(line)
    }
}

/// [`Record::from_written_json`].
pub(super) fn read(line: &str) -> Option<Record<'_>> {
    let c = &mut Cursor { s: line, i: 0 };
    c.lit("{\"kShortName\":")?;
    let short_name = c.string()?;
    c.key(k!("kDuration"))?;
    let duration_ns = c.int()?;
    let layer = c.strs(k!("layer"))?;
    let trace = c.strs(k!("trace"))?;
    let repr_markers = c.strs(k!("reprMarkers"))?;
    let marker = c.strs(k!("marker"))?;
    let seq_marker = c.strs(k!("seqMarker"))?;
    let seq_id = c.ints(k!("seqId"))?;
    c.key(k!("subSeqId"))?;
    let sub_seq_id = c.int()?;
    let alt_seq_id = c.ints(k!("altSeqId"))?;
    c.key(k!("dir"))?;
    let dir = Dir::from_text(c.string()?);
    let mod_ = c.strs(k!("mod"))?;
    let op = c.strs(k!("op"))?;
    c.key(k!("tid"))?;
    let tid = c.uint()?;
    c.key(k!("device"))?;
    let device = c.int()?;
    c.key(k!("stream"))?;
    let stream = c.int()?;
    let grid = c.three(k!("grid"))?;
    let block = c.three(k!("block"))?;
    c.key(k!("kLongName"))?;
    let long_name = c.string()?;
    c.key(k!("kStart"))?;
    let start_ns = c.opt(Cursor::int)?;
    c.key(k!("kEnd"))?;
    let end_ns = c.opt(Cursor::int)?;
    c.key(k!("rStart"))?;
    let launch_start_ns = c.opt(Cursor::int)?;
    c.key(k!("rEnd"))?;
    let launch_end_ns = c.opt(Cursor::int)?;
    c.key(k!("launched"))?;
    let launched = c.bool()?;
    c.key(k!("api"))?;
    let api = c.opt(Cursor::string)?;
    c.key(k!("pid"))?;
    let pid = c.opt(Cursor::uint)?;
    c.key(k!("corrId"))?;
    let correlation = c.opt(Cursor::int)?;
    c.key(k!("context"))?;
    let context = c.opt(Cursor::int)?;
    c.key(k!("regs"))?;
    let regs = c.opt(Cursor::int)?;
    c.key(k!("smemStatic"))?;
    let static_smem_bytes = c.opt(Cursor::int)?;
    c.key(k!("smemDynamic"))?;
    let dynamic_smem_bytes = c.opt(Cursor::int)?;
    c.key(k!("graphId"))?;
    let graph_id = c.opt(Cursor::int)?;
    c.key(k!("graphNodeId"))?;
    let graph_node_id = c.opt(Cursor::int)?;
    c.key(k!("deviceName"))?;
    let device_name = c.opt(Cursor::string)?;
    c.key(k!("smCount"))?;
    let sm_count = c.opt(Cursor::int)?;
    c.key(k!("ccMajor"))?;
    let cc_major = c.opt(Cursor::int)?;
    c.key(k!("ccMinor"))?;
    let cc_minor = c.opt(Cursor::int)?;
    let stack = c.strs(k!("stack"))?;
    let domains = c.strs(k!("domains"))?;
    let stack_runs = c.ints(k!("stackRuns"))?;
    c.key(k!("stackNames"))?;
    let stack_names = c.list(|c| u32::try_from(c.uint()?).ok())?;
    c.key(k!("stackCut"))?;
    let stack_cut = c.int()?;
    c.key(k!("stackCutBytes"))?;
    let stack_cut_bytes = c.int()?;
    c.key(k!("badTime"))?;
    let bad_time = c.bool()?;
    c.key(k!("kinetoBlocksPerSm"))?;
    let kineto_blocks_per_sm = c.opt_float()?;
    c.key(k!("kinetoWarpsPerSm"))?;
    let kineto_warps_per_sm = c.opt_float()?;
    c.key(k!("kinetoOccupancy"))?;
    let kineto_occupancy_pct = c.opt_float()?;
    c.lit("}")?;
    if c.i != line.len() {
        return None;
    }
    Some(Record {
        short_name,
        duration_ns,
        layer,
        trace,
        repr_markers,
        marker,
        seq_marker,
        seq_id,
        sub_seq_id,
        alt_seq_id,
        dir,
        mod_,
        op,
        tid,
        device,
        stream,
        grid,
        block,
        long_name,
        start_ns,
        end_ns,
        launch_start_ns,
        launch_end_ns,
        launched,
        api,
        pid,
        correlation,
        context,
        regs,
        static_smem_bytes,
        dynamic_smem_bytes,
        graph_id,
        graph_node_id,
        device_name,
        sm_count,
        cc_major,
        cc_minor,
        stack,
        domains,
        stack_runs,
        stack_names,
        stack_cut,
        stack_cut_bytes,
        bad_time,
        kineto_blocks_per_sm,
        kineto_warps_per_sm,
        kineto_occupancy_pct,
    })
}

#[cfg(test)]
mod tests {
    use super::Cursor;

    proptest::proptest! {
        /// An integer's digits, at any place in the line and followed by
        /// anything, read as `str::parse` reads them; the reading stops
        /// after the last digit.
        #[test]
        fn integers_read_as_parse_reads_them(
            before in "[a-z:]{0,9}",
            digits in "[0-9]{0,24}",
            after in "[0-9a-z,.:\\]}é\"-]{0,10}",
        ) {
            let line = format!("{before}{digits}{after}");
            let mut c = Cursor { s: &line, i: before.len() };
            let got = c.uint();
            let all: String = line[before.len()..].chars().take_while(char::is_ascii_digit).collect();
            let leading_zero = all.len() > 1 && all.starts_with('0');
            let float = matches!(
                line[before.len() + all.len()..].bytes().next(),
                Some(b'.' | b'e' | b'E')
            );
            let plain = !all.is_empty() && !leading_zero && !float;
            let want = all.parse::<u64>().ok().filter(|_| plain);
            proptest::prop_assert_eq!(got, want, "{}", line);
            if want.is_some() {
                proptest::prop_assert_eq!(c.i, before.len() + all.len());
            }
        }
    }
}
