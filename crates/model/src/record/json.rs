//! The hand-written JSON Lines writer of [`Record`].

use std::borrow::Cow;

use super::Record;

impl Record<'_> {
    /// Append this record as one JSON line (with `\n`).
    ///
    /// Hand-written because it is the hot loop of `rprof parse` (a million
    /// records are a gigabyte of JSON); it writes exactly what serde_json
    /// writes for this struct, which a test checks on random records.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        self.write_json_shared(out, &Shared::default());
    }

    /// [`Record::write_json`], with the parts that `shared` holds already
    /// written (by [`write_markers_json`], [`write_seq_json`],
    /// [`write_ops_json`], [`write_stack_json`] or [`push_json_str`]) copied
    /// in place of this record's own fields: the records of one set of
    /// enclosing ranges share their lists, and a kernel name is escaped
    /// once for all its kernels. The line is the same as `write_json`'s
    /// when each part holds what the record's own fields would write.
    pub fn write_json_shared(&self, out: &mut Vec<u8>, shared: &Shared<'_>) {
        let w = &mut JsonWriter { out };
        w.raw("{\"kShortName\":");
        match shared.short_name {
            Some(b) => w.out.extend_from_slice(b),
            None => w.str(&self.short_name),
        }
        w.raw(",\"kDuration\":");
        w.int(self.duration_ns);
        match shared.markers {
            Some(b) => w.out.extend_from_slice(b),
            None => write_markers_json(
                w.out,
                [
                    &self.layer,
                    &self.trace,
                    &self.repr_markers,
                    &self.marker,
                    &self.seq_marker,
                ],
            ),
        }
        match shared.seq {
            Some(b) => w.out.extend_from_slice(b),
            None => write_seq_json(w.out, &self.seq_id, self.sub_seq_id, &self.alt_seq_id),
        }
        match shared.ops {
            Some(b) => w.out.extend_from_slice(b),
            None => write_ops_json(w.out, self.dir.as_str(), &self.mod_, &self.op),
        }
        w.raw(",\"tid\":");
        w.uint(self.tid);
        w.raw(",\"device\":");
        w.int(self.device);
        w.raw(",\"stream\":");
        w.int(self.stream);
        w.key_ints("grid", &self.grid);
        w.key_ints("block", &self.block);
        w.raw(",\"kLongName\":");
        match shared.long_name {
            Some(b) => w.out.extend_from_slice(b),
            None => w.str(&self.long_name),
        }
        w.opt_int("kStart", self.start_ns);
        w.opt_int("kEnd", self.end_ns);
        w.opt_int("rStart", self.launch_start_ns);
        w.opt_int("rEnd", self.launch_end_ns);
        w.raw(if self.launched {
            ",\"launched\":true"
        } else {
            ",\"launched\":false"
        });
        w.raw(",\"api\":");
        match &self.api {
            Some(api) => w.str(api),
            None => w.raw("null"),
        }
        w.raw(",\"pid\":");
        match self.pid {
            Some(pid) => w.uint(pid),
            None => w.raw("null"),
        }
        w.opt_int("corrId", self.correlation);
        w.opt_int("context", self.context);
        w.opt_int("regs", self.regs);
        w.opt_int("smemStatic", self.static_smem_bytes);
        w.opt_int("smemDynamic", self.dynamic_smem_bytes);
        w.opt_int("graphId", self.graph_id);
        w.opt_int("graphNodeId", self.graph_node_id);
        w.raw(",\"deviceName\":");
        match &self.device_name {
            Some(name) => w.str(name),
            None => w.raw("null"),
        }
        w.opt_int("smCount", self.sm_count);
        w.opt_int("ccMajor", self.cc_major);
        w.opt_int("ccMinor", self.cc_minor);
        match shared.stack {
            Some(b) => w.out.extend_from_slice(b),
            None => write_stack_json(
                w.out,
                StackJson {
                    stack: &self.stack,
                    domains: &self.domains,
                    runs: &self.stack_runs,
                    names: &self.stack_names,
                    cut: self.stack_cut,
                    cut_bytes: self.stack_cut_bytes,
                },
            ),
        }
        w.raw(if self.bad_time {
            ",\"badTime\":true"
        } else {
            ",\"badTime\":false"
        });
        w.opt_float("kinetoBlocksPerSm", self.kineto_blocks_per_sm);
        w.opt_float("kinetoWarpsPerSm", self.kineto_warps_per_sm);
        w.opt_float("kinetoOccupancy", self.kineto_occupancy_pct);
        w.raw("}\n");
    }
}

/// Parts of a record's JSON line written beforehand, for
/// [`Record::write_json_shared`]; a part left `None` is written from the
/// record's own fields.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shared<'p> {
    /// `kShortName`'s value, as [`push_json_str`] writes it.
    pub short_name: Option<&'p [u8]>,
    /// `layer` to `seqMarker`, as [`write_markers_json`] writes them.
    pub markers: Option<&'p [u8]>,
    /// `seqId` to `altSeqId`, as [`write_seq_json`] writes them.
    pub seq: Option<&'p [u8]>,
    /// `dir`, `mod` and `op`, as [`write_ops_json`] writes them.
    pub ops: Option<&'p [u8]>,
    /// `kLongName`'s value, as [`push_json_str`] writes it.
    pub long_name: Option<&'p [u8]>,
    /// `stack` to `stackCutBytes`, as [`write_stack_json`] writes them.
    pub stack: Option<&'p [u8]>,
}

/// The keys `layer`, `trace`, `reprMarkers`, `marker` and `seqMarker` of a
/// record line, each with its list (`lists` in that order), each preceded
/// by a comma.
pub fn write_markers_json(out: &mut Vec<u8>, lists: [&[Cow<'_, str>]; 5]) {
    let w = &mut JsonWriter { out };
    for (key, list) in ["layer", "trace", "reprMarkers", "marker", "seqMarker"]
        .into_iter()
        .zip(lists)
    {
        w.key_strs(key, list);
    }
}

/// The keys `seqId`, `subSeqId` and `altSeqId` of a record line.
pub fn write_seq_json(out: &mut Vec<u8>, seq_id: &[i64], sub_seq_id: i64, alt_seq_id: &[i64]) {
    let w = &mut JsonWriter { out };
    w.key_ints("seqId", seq_id);
    w.raw(",\"subSeqId\":");
    w.int(sub_seq_id);
    w.key_ints("altSeqId", alt_seq_id);
}

/// The keys `dir`, `mod` and `op` of a record line.
pub fn write_ops_json(out: &mut Vec<u8>, dir: &str, mod_: &[Cow<'_, str>], op: &[Cow<'_, str>]) {
    let w = &mut JsonWriter { out };
    w.raw(",\"dir\":");
    w.str(dir);
    w.key_strs("mod", mod_);
    w.key_strs("op", op);
}

/// A record's written stack, for [`write_stack_json`].
#[derive(Clone, Copy, Debug)]
pub struct StackJson<'s, 'a> {
    /// `stack`.
    pub stack: &'s [Cow<'a, str>],
    /// `domains`.
    pub domains: &'s [Cow<'a, str>],
    /// `stackRuns`.
    pub runs: &'s [i64],
    /// `stackNames`.
    pub names: &'s [u32],
    /// `stackCut`.
    pub cut: i64,
    /// `stackCutBytes`.
    pub cut_bytes: i64,
}

/// The keys `stack`, `domains`, `stackRuns`, `stackNames`, `stackCut` and
/// `stackCutBytes` of a record line.
pub fn write_stack_json(out: &mut Vec<u8>, s: StackJson<'_, '_>) {
    let w = &mut JsonWriter { out };
    w.key_strs("stack", s.stack);
    w.key_strs("domains", s.domains);
    w.key_ints("stackRuns", s.runs);
    w.key_uints("stackNames", s.names);
    w.raw(",\"stackCut\":");
    w.int(s.cut);
    w.raw(",\"stackCutBytes\":");
    w.int(s.cut_bytes);
}

/// Bytes that need escaping in a JSON string: control characters, `"`
/// and `\\`.
pub(super) const ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// From `i`, past the bytes none of which needs escaping (most text has
/// no escapes): an index at or before the first byte that needs one, with
/// every byte before it clean (at most a few bytes before it, or the last
/// few bytes of `bytes`).
pub(super) fn skip_clean_words(bytes: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    while let Some(chunk) = bytes.get(i..i + 16) {
        match first_escape_16(chunk) {
            Some(at) => return i + at,
            None => i += 16,
        }
    }
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        if word_needs_escape(u64::from_le_bytes(w)) {
            break;
        }
        i += 8;
    }
    i
}

/// The position of the first of sixteen bytes that needs escaping (below
/// 0x20, `"` or `\\`), if any. SSE2, which every x86-64 processor has:
/// the record readers and writers scan every string of every record (the
/// long kernel name is a third of a record's bytes), and sixteen bytes
/// compared at once, with the exact position from the mask, took fewer
/// instructions than the eight-byte word test with its byte-by-byte end.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(super) fn first_escape_16(chunk: &[u8]) -> Option<usize> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let chunk: &[u8; 16] = chunk.try_into().ok()?;
    // SAFETY: SSE2 is enabled on every x86_64 target, so these functions
    // may be called; the unaligned load reads the sixteen bytes of
    // `chunk`, which it borrows
    let mask = unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // unsigned: a byte is below 0x20 exactly when max(byte, 0x1f) is
        // 0x1f
        let low = _mm_set1_epi8(0x1f);
        let control = _mm_cmpeq_epi8(_mm_max_epu8(v, low), low);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control))
    };
    (mask != 0).then(|| mask.trailing_zeros() as usize)
}

/// True if any of the eight bytes is below 0x20, `"` or `\\` (bit tricks
/// from "Bit Twiddling Hacks": a byte below n sets its high bit in
/// `(x - n·0x01…) & !x & 0x80…`, exactly for n ≤ 128).
#[inline]
pub(super) fn word_needs_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    let control = below(w, 0x20);
    let quote = below(w ^ (ONES * u64::from(b'"')), 1);
    let backslash = below(w ^ (ONES * u64::from(b'\\')), 1);
    (control | quote | backslash) != 0
}

/// Append `s` to `out` as a JSON string (quoted), escaped exactly as
/// serde_json escapes it: the hand-written writers (records, the Chrome
/// trace) share it. Eight clean bytes are skipped at a time.
pub fn push_json_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    loop {
        i = skip_clean_words(bytes, i);
        let Some(&b) = bytes.get(i) else {
            break;
        };
        if ESCAPE[b as usize] {
            out.extend_from_slice(&bytes[start..i]);
            escape(out, b);
            start = i + 1;
        }
        i += 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// The escape of byte `b` (one of [`ESCAPE`]), as serde_json writes it.
fn escape(out: &mut Vec<u8>, b: u8) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 0xf) as usize]);
        }
    }
}

struct JsonWriter<'o> {
    out: &'o mut Vec<u8>,
}

impl JsonWriter<'_> {
    fn raw(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }

    fn int(&mut self, v: i64) {
        let mut b = itoa::Buffer::new();
        self.out.extend_from_slice(b.format(v).as_bytes());
    }

    fn uint(&mut self, v: u64) {
        let mut b = itoa::Buffer::new();
        self.out.extend_from_slice(b.format(v).as_bytes());
    }

    /// A JSON string, escaped as serde_json escapes it.
    fn str(&mut self, s: &str) {
        push_json_str(self.out, s);
    }

    fn key(&mut self, key: &str) {
        self.out.extend_from_slice(b",\"");
        self.raw(key);
        self.raw("\":");
    }

    fn key_strs(&mut self, key: &str, v: &[Cow<'_, str>]) {
        self.key(key);
        self.out.push(b'[');
        for (i, s) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.str(s);
        }
        self.out.push(b']');
    }

    fn key_ints(&mut self, key: &str, v: &[i64]) {
        self.key_list(key, v, |w, n| w.int(n));
    }

    fn key_uints(&mut self, key: &str, v: &[u32]) {
        self.key_list(key, v, |w, n| w.uint(u64::from(n)));
    }

    /// `,"key":[…]`, each item written by `item`.
    fn key_list<T: Copy>(&mut self, key: &str, v: &[T], mut item: impl FnMut(&mut Self, T)) {
        self.key(key);
        self.out.push(b'[');
        for (i, &n) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            item(self, n);
        }
        self.out.push(b']');
    }

    /// A float as serde_json writes it (`null` when not finite); floats are
    /// rare (Kineto occupancy figures), so serde_json itself writes them.
    fn opt_float(&mut self, key: &str, v: Option<f64>) {
        self.key(key);
        match v {
            Some(v) => {
                if serde_json::to_writer(&mut *self.out, &v).is_err() {
                    self.raw("null");
                }
            }
            None => self.raw("null"),
        }
    }

    /// Every key is written on every line (`null` when unknown), so that
    /// each line has the same keys: readers that infer a schema from the
    /// first lines (Polars, DuckDB) see every column.
    fn opt_int(&mut self, key: &str, v: Option<i64>) {
        self.key(key);
        match v {
            Some(v) => self.int(v),
            None => self.raw("null"),
        }
    }
}
