//! Chrome trace-event JSON (the format of chrome://tracing, which Perfetto
//! also loads), written event by event: nothing but the current event is
//! held in memory, whatever the size of the trace.
//!
//! The document is `{"displayTimeUnit":"ns","traceEvents":[…]}` with
//! complete events (`ph: X`), flow events (`ph: s` / `ph: f` with
//! `bp: e`, binding to the enclosing slice) and metadata (`ph: M`,
//! `process_name`, `thread_name`, `process_sort_index`). Timestamps and
//! durations are microseconds with exactly three decimals, i.e. exact
//! nanoseconds, relative to a zero the caller chooses.
//!
//! ```
//! use rprof_report::chrome::{Arg, ChromeWriter, Slice};
//!
//! let mut w = ChromeWriter::new(Vec::new(), 1_000).unwrap();
//! w.process_name(1, "GPU 0", 0).unwrap();
//! w.slice(&Slice { pid: 1, tid: 7, name: "gemm", cat: "kernel", start_ns: 2_500, dur_ns: 1_234, args: &[("flops", Arg::Int(42))] }).unwrap();
//! let out = String::from_utf8(w.finish().unwrap()).unwrap();
//! assert!(out.contains(r#""ts":1.500,"dur":1.234"#));
//! let v: serde_json::Value = serde_json::from_str(&out).unwrap();
//! // process_name, process_sort_index, the slice
//! assert_eq!(v["traceEvents"].as_array().unwrap().len(), 3);
//! ```

use std::io::{self, Write};

/// A value in an event's `args`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg<'a> {
    /// A string.
    Str(&'a str),
    /// An integer.
    Int(i128),
    /// A number.
    Float(f64),
    /// Three integers (grid, block), written as an array.
    Dims([i64; 3]),
}

/// A complete event (`ph: X`): a slice on the track `(pid, tid)`.
#[derive(Clone, Copy, Debug)]
pub struct Slice<'a> {
    /// Process id of the track.
    pub pid: u64,
    /// Thread id of the track.
    pub tid: u64,
    /// Name shown on the slice.
    pub name: &'a str,
    /// Category.
    pub cat: &'a str,
    /// Start, ns on the input's clock.
    pub start_ns: i64,
    /// Duration, ns.
    pub dur_ns: i64,
    /// Arguments shown when the slice is selected.
    pub args: &'a [(&'a str, Arg<'a>)],
}

/// Flow events bind to slices by id, category and name; every flow rprof
/// writes uses these two.
pub const FLOW_CAT: &str = "launch";
/// See [`FLOW_CAT`].
pub const FLOW_NAME: &str = "launch";

/// Counts of what was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Metadata events.
    pub metadata: u64,
    /// Complete events.
    pub slices: u64,
    /// Flow starts.
    pub flow_starts: u64,
    /// Flow ends.
    pub flow_ends: u64,
    /// Counter samples.
    pub counters: u64,
}

/// Streams one trace-event JSON document to `W`.
///
/// Events are written into a buffer of our own with `itoa` and the
/// records' string escaper, and the buffer goes to `W` in pieces of about
/// 64 KiB: hand-written because an export is a gigabyte of
/// small fields, and `write!` with a `Write` call per field was a fifth
/// of `export`'s time. Runs of events may also be formatted apart, on
/// other threads ([`ChromeWriter::piece`], [`ChromeWriter::append`]): the
/// document's bytes are the same as when each event is written here.
#[derive(Debug)]
pub struct ChromeWriter<W: Write> {
    w: W,
    ev: Events,
    first: bool,
}

/// Events formatted apart from the document, to be added to it in order
/// with [`ChromeWriter::append`] (for formatting runs of events on several
/// threads). Each event is preceded by its separator.
#[derive(Debug, Default)]
pub struct Events {
    buf: Vec<u8>,
    zero_ns: i64,
    counts: Counts,
}

/// Bytes gathered before they go to the writer.
const SPILL: usize = 1 << 16;

impl Counts {
    fn add(&mut self, o: Counts) {
        self.metadata += o.metadata;
        self.slices += o.slices;
        self.flow_starts += o.flow_starts;
        self.flow_ends += o.flow_ends;
        self.counters += o.counters;
    }
}

impl<W: Write> ChromeWriter<W> {
    /// Start the document; timestamps are written relative to `zero_ns`.
    pub fn new(w: W, zero_ns: i64) -> io::Result<ChromeWriter<W>> {
        let mut buf = Vec::with_capacity(SPILL + 4096);
        buf.extend_from_slice(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
        Ok(ChromeWriter {
            w,
            ev: Events {
                buf,
                zero_ns,
                counts: Counts::default(),
            },
            first: true,
        })
    }

    /// What was written so far.
    pub fn counts(&self) -> Counts {
        self.ev.counts
    }

    /// An empty run of events with this writer's zero, to be filled (on
    /// any thread) and then given to [`ChromeWriter::append`].
    pub fn piece(&self) -> Events {
        Events {
            buf: Vec::new(),
            zero_ns: self.ev.zero_ns,
            counts: Counts::default(),
        }
    }

    /// Make `piece` (emptied by [`ChromeWriter::append`]) ready to be
    /// filled again: the zero of the timestamps is the writer's now.
    pub fn reuse(&self, piece: &mut Events) {
        piece.buf.clear();
        piece.counts = Counts::default();
        piece.zero_ns = self.ev.zero_ns;
    }

    /// Add the events of `piece` (from [`ChromeWriter::piece`]) after those
    /// written so far, and empty it for reuse (its buffer kept: pieces
    /// made anew each time cost a fresh mapping of their pages).
    pub fn append(&mut self, piece: &mut Events) -> io::Result<()> {
        self.ev.counts.add(std::mem::take(&mut piece.counts));
        // every event of a piece comes after its `,`; the document's first
        // event has none
        let bytes = match piece.buf.split_first() {
            None => return Ok(()),
            Some((_, rest)) if self.first => {
                self.first = false;
                rest
            }
            Some(_) => &piece.buf[..],
        };
        let done = if self.ev.buf.len() + bytes.len() < SPILL {
            self.ev.buf.extend_from_slice(bytes);
            Ok(())
        } else {
            self.w
                .write_all(&self.ev.buf)
                .and_then(|()| self.w.write_all(bytes))
                .map(|()| self.ev.buf.clear())
        };
        piece.buf.clear();
        // a buffer a long event enlarged is not kept for the next piece
        if piece.buf.capacity() > 128 * SPILL {
            piece.buf = Vec::new();
        }
        done
    }

    /// Start an event: hand what the buffer holds to the writer when it
    /// is full, then the separator.
    fn begin(&mut self) -> io::Result<&mut Events> {
        let buf = &mut self.ev.buf;
        if buf.len() >= SPILL {
            self.w.write_all(buf)?;
            buf.clear();
            // a buffer a long event enlarged (a range's text of megabytes)
            // is not kept for the rest of the trace
            if buf.capacity() > 16 * SPILL {
                *buf = Vec::with_capacity(SPILL + 4096);
            }
        }
        if self.first {
            self.first = false;
            buf.push(b'\n');
        } else {
            buf.extend_from_slice(b",\n");
        }
        Ok(&mut self.ev)
    }

    /// Name process `pid` and say where it sorts among processes.
    pub fn process_name(&mut self, pid: u64, name: &str, sort_index: i64) -> io::Result<()> {
        self.begin()?
            .metadata("process_name", pid, 0, "name", Arg::Str(name));
        self.begin()?.metadata(
            "process_sort_index",
            pid,
            0,
            "sort_index",
            Arg::Int(i128::from(sort_index)),
        );
        Ok(())
    }

    /// Name thread `tid` of process `pid` and say where it sorts.
    pub fn thread_name(
        &mut self,
        pid: u64,
        tid: u64,
        name: &str,
        sort_index: i64,
    ) -> io::Result<()> {
        self.begin()?
            .metadata("thread_name", pid, tid, "name", Arg::Str(name));
        self.begin()?.metadata(
            "thread_sort_index",
            pid,
            tid,
            "sort_index",
            Arg::Int(i128::from(sort_index)),
        );
        Ok(())
    }

    /// Write a complete event.
    pub fn slice(&mut self, s: &Slice<'_>) -> io::Result<()> {
        self.begin()?.slice_body(s);
        Ok(())
    }

    /// Start flow `id` in the slice on `(pid, tid)` that encloses `ts_ns`
    /// (a launch call: write it at the call's start).
    pub fn flow_start(&mut self, id: u64, pid: u64, tid: u64, ts_ns: i64) -> io::Result<()> {
        self.begin()?.flow_start_body(id, pid, tid, ts_ns);
        Ok(())
    }

    /// End flow `id` in the slice on `(pid, tid)` enclosing `ts_ns` (`bp:
    /// e`; a kernel: write it at the kernel's start).
    pub fn flow_end(&mut self, id: u64, pid: u64, tid: u64, ts_ns: i64) -> io::Result<()> {
        self.begin()?.flow_end_body(id, pid, tid, ts_ns);
        Ok(())
    }

    /// A counter sample (`ph: C`): from `ts_ns` on, the counter `name` of
    /// process `pid` has `value` (Perfetto draws one counter track per
    /// process and name).
    pub fn counter(&mut self, pid: u64, name: &str, ts_ns: i64, value: f64) -> io::Result<()> {
        self.begin()?.counter_body(pid, name, ts_ns, value);
        Ok(())
    }

    /// Change the zero of the timestamps written from now on (several
    /// profiles in one trace, each aligned on its own start).
    pub fn set_zero(&mut self, zero_ns: i64) {
        self.ev.zero_ns = zero_ns;
    }

    /// Close the document, flush, and hand the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        self.ev.raw(b"\n]}\n");
        self.w.write_all(&self.ev.buf)?;
        self.ev.buf = Vec::new();
        self.w.flush()?;
        Ok(self.w)
    }
}

impl Events {
    /// A complete event, as [`ChromeWriter::slice`] writes it.
    pub fn slice(&mut self, s: &Slice<'_>) {
        self.raw(b",\n");
        self.slice_body(s);
    }

    /// A flow start, as [`ChromeWriter::flow_start`] writes it.
    pub fn flow_start(&mut self, id: u64, pid: u64, tid: u64, ts_ns: i64) {
        self.raw(b",\n");
        self.flow_start_body(id, pid, tid, ts_ns);
    }

    /// A flow end, as [`ChromeWriter::flow_end`] writes it.
    pub fn flow_end(&mut self, id: u64, pid: u64, tid: u64, ts_ns: i64) {
        self.raw(b",\n");
        self.flow_end_body(id, pid, tid, ts_ns);
    }

    /// Bytes the piece holds.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when the piece holds no event.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    fn raw(&mut self, s: &[u8]) {
        self.buf.extend_from_slice(s);
    }

    fn str(&mut self, s: &str) {
        rprof_model::push_json_str(&mut self.buf, s);
    }

    fn int(&mut self, i: impl itoa::Integer) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
    }

    /// Write `ns` as microseconds with three decimals.
    fn us(&mut self, ns: i64) {
        if ns < 0 {
            self.buf.push(b'-');
        }
        let a = ns.unsigned_abs();
        self.int(a / 1000);
        let frac = (a % 1000) as u16;
        self.buf.extend_from_slice(&[
            b'.',
            b'0' + (frac / 100) as u8,
            b'0' + (frac / 10 % 10) as u8,
            b'0' + (frac % 10) as u8,
        ]);
    }

    fn ts(&mut self, ns: i64) {
        self.us(ns.saturating_sub(self.zero_ns));
    }

    fn metadata(&mut self, what: &str, pid: u64, tid: u64, arg: &str, value: Arg<'_>) {
        self.raw(b"{\"ph\":\"M\",\"name\":");
        self.str(what);
        self.raw(b",\"pid\":");
        self.int(pid);
        self.raw(b",\"tid\":");
        self.int(tid);
        self.raw(b",\"args\":{");
        self.str(arg);
        self.raw(b":");
        self.arg(value);
        self.raw(b"}}");
        self.counts.metadata += 1;
    }

    fn arg(&mut self, a: Arg<'_>) {
        match a {
            Arg::Str(s) => self.str(s),
            Arg::Int(i) => self.int(i),
            // serde_json's shortest form, as before (rare: counters)
            Arg::Float(f) if f.is_finite() => match serde_json::to_vec(&f) {
                Ok(text) => self.raw(&text),
                Err(_) => self.raw(b"null"),
            },
            Arg::Float(_) => self.raw(b"null"),
            Arg::Dims(d) => {
                self.raw(b"[");
                self.int(d[0]);
                self.raw(b",");
                self.int(d[1]);
                self.raw(b",");
                self.int(d[2]);
                self.raw(b"]");
            }
        }
    }

    fn slice_body(&mut self, s: &Slice<'_>) {
        self.raw(b"{\"ph\":\"X\",\"cat\":");
        self.str(s.cat);
        self.raw(b",\"name\":");
        self.str(s.name);
        self.raw(b",\"pid\":");
        self.int(s.pid);
        self.raw(b",\"tid\":");
        self.int(s.tid);
        self.raw(b",\"ts\":");
        self.ts(s.start_ns);
        self.raw(b",\"dur\":");
        self.us(s.dur_ns.max(0));
        if !s.args.is_empty() {
            self.raw(b",\"args\":{");
            for (i, (k, v)) in s.args.iter().enumerate() {
                if i > 0 {
                    self.raw(b",");
                }
                self.str(k);
                self.raw(b":");
                self.arg(*v);
            }
            self.raw(b"}");
        }
        self.raw(b"}");
        self.counts.slices += 1;
    }

    fn flow(&mut self, ph: &str, id: u64, pid: u64, tid: u64, ts_ns: i64) {
        self.raw(b"{\"ph\":\"");
        self.raw(ph.as_bytes());
        self.raw(b"\",\"id\":");
        self.int(id);
        self.raw(b",\"cat\":\"");
        self.raw(FLOW_CAT.as_bytes());
        self.raw(b"\",\"name\":\"");
        self.raw(FLOW_NAME.as_bytes());
        self.raw(b"\",\"pid\":");
        self.int(pid);
        self.raw(b",\"tid\":");
        self.int(tid);
        self.raw(b",\"ts\":");
        self.ts(ts_ns);
        if ph == "f" {
            self.raw(b",\"bp\":\"e\"");
        }
        self.raw(b"}");
    }

    fn flow_start_body(&mut self, id: u64, pid: u64, tid: u64, ts_ns: i64) {
        self.flow("s", id, pid, tid, ts_ns);
        self.counts.flow_starts += 1;
    }

    fn flow_end_body(&mut self, id: u64, pid: u64, tid: u64, ts_ns: i64) {
        self.flow("f", id, pid, tid, ts_ns);
        self.counts.flow_ends += 1;
    }

    fn counter_body(&mut self, pid: u64, name: &str, ts_ns: i64, value: f64) {
        self.raw(b"{\"ph\":\"C\",\"name\":");
        self.str(name);
        self.raw(b",\"pid\":");
        self.int(pid);
        self.raw(b",\"tid\":0,\"ts\":");
        self.ts(ts_ns);
        self.raw(b",\"args\":{\"value\":");
        self.arg(Arg::Float(value));
        self.raw(b"}}");
        self.counts.counters += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_microseconds_and_escaping() {
        let mut w = ChromeWriter::new(Vec::new(), 1_000_000_000_000_000_000).unwrap();
        w.thread_name(5, 6, "stream \"7\"", 1).unwrap();
        w.slice(&Slice {
            pid: 5,
            tid: 6,
            name: "k<\\>",
            cat: "kernel",
            start_ns: 1_000_000_000_000_000_001,
            dur_ns: 999,
            args: &[
                ("grid", Arg::Dims([1, 2, 3])),
                ("x", Arg::Float(0.5)),
                ("nan", Arg::Float(f64::NAN)),
            ],
        })
        .unwrap();
        w.flow_start(1, 1, 2, 999_999_999_999_999_000).unwrap();
        w.flow_end(1, 5, 6, 1_000_000_000_000_000_001).unwrap();
        assert_eq!(
            w.counts(),
            Counts {
                metadata: 2,
                slices: 1,
                flow_starts: 1,
                flow_ends: 1,
                counters: 0
            }
        );
        let out = String::from_utf8(w.finish().unwrap()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        assert_eq!(ev.len(), 5);
        assert_eq!(ev[2]["name"], "k<\\>");
        assert_eq!(ev[2]["args"]["grid"], serde_json::json!([1, 2, 3]));
        assert!(ev[2]["args"]["nan"].is_null());
        assert_eq!(ev[0]["args"]["name"], "stream \"7\"");
        assert!(out.contains("\"ts\":0.001,\"dur\":0.999"), "{out}");
        assert!(out.contains("\"ts\":-1.000}"), "{out}");
        assert_eq!(ev[4]["bp"], "e");
        assert_eq!(ev[3]["ph"], "s");
    }

    /// Events formatted in pieces (empty ones among them, the first event
    /// of the document in a piece, pieces larger than a spill) and added
    /// in order give the bytes and counts of writing each event in turn.
    #[test]
    fn pieces_give_the_bytes_of_events_written_in_turn() {
        let ev = |i: i64| Slice {
            pid: i as u64 % 3,
            tid: i as u64,
            name: if i % 2 == 0 { "even \"k\"" } else { "odd" },
            cat: "kernel",
            start_ns: i * 997 - 3,
            dur_ns: i,
            args: &[],
        };
        // piece sizes, in events: 0 = an empty piece
        let sizes = [0usize, 3, 0, 1, 900, 0, 2, 5000, 1];
        let mut one = ChromeWriter::new(Vec::new(), 7).unwrap();
        let mut pieces = ChromeWriter::new(Vec::new(), 7).unwrap();
        let mut i = 0i64;
        let mut spare = pieces.piece();
        for &n in &sizes {
            pieces.reuse(&mut spare);
            for _ in 0..n {
                one.slice(&ev(i)).unwrap();
                one.flow_start(i as u64, 1, 2, i).unwrap();
                spare.slice(&ev(i));
                spare.flow_start(i as u64, 1, 2, i);
                i += 1;
            }
            pieces.append(&mut spare).unwrap();
            assert!(spare.buf.is_empty() && spare.counts == Counts::default());
        }
        one.counter(1, "u", 5, 0.5).unwrap();
        pieces.counter(1, "u", 5, 0.5).unwrap();
        assert_eq!(one.counts(), pieces.counts());
        assert_eq!(pieces.counts().slices, i as u64);
        let (a, b) = (one.finish().unwrap(), pieces.finish().unwrap());
        assert!(a.len() > 4 * SPILL);
        assert_eq!(
            String::from_utf8(a).unwrap(),
            String::from_utf8(b.clone()).unwrap()
        );
        // and it is one JSON document with every event
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(
            v["traceEvents"].as_array().unwrap().len(),
            2 * i as usize + 1
        );
    }

    /// Events past many spills of the buffer arrive whole and in order,
    /// each field as a JSON reader reads it (times computed here from the
    /// nanoseconds, names with escapes).
    #[test]
    fn many_events_across_spills() {
        let mut w = ChromeWriter::new(Vec::new(), 0).unwrap();
        let n = 20_000i64;
        for i in 0..n {
            let name = format!("k\"{i}\\\n");
            w.slice(&Slice {
                pid: i as u64,
                tid: u64::MAX - i as u64,
                name: &name,
                cat: "kernel",
                start_ns: i * 1_234_567 - 5_000,
                dur_ns: i,
                args: &[("i", Arg::Int(i128::from(i) - 7))],
            })
            .unwrap();
        }
        let out = w.finish().unwrap();
        assert!(out.len() > 4 * SPILL);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        assert_eq!(ev.len(), n as usize);
        for (i, e) in (0..n).zip(ev) {
            assert_eq!(e["name"], format!("k\"{i}\\\n"));
            assert_eq!(e["pid"], i as u64);
            assert_eq!(e["tid"], u64::MAX - i as u64);
            assert_eq!(e["args"]["i"], i - 7);
        }
        // the times exactly as written: microseconds with three decimals
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().skip(1).collect();
        for i in 0..n {
            let ts = i * 1_234_567 - 5_000;
            let sign = if ts < 0 { "-" } else { "" };
            let (a, d) = (ts.unsigned_abs(), i as u64);
            let want = format!(
                "\"ts\":{sign}{}.{:03},\"dur\":{}.{:03}",
                a / 1000,
                a % 1000,
                d / 1000,
                d % 1000
            );
            assert!(lines[i as usize].contains(&want), "{want}");
        }
    }
}
