//! Inputs of the report commands: a profile (nsys or nvprof SQLite, Kineto
//! trace), parsed in-process, or a record file written by `rprof parse`
//! (JSON Lines or PyProf's `.dict`), from a path or standard input. Either
//! way the records reach the caller in chunks, in order.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use rayon::prelude::*;
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::model::{DeviceInfo, Trace};
use rprof_trace::model::{Kernels, Line, read_line};
use rprof_trace::read::{self, FileKind, ReadOptions};

use crate::progress::{self, Phase};

/// Where records come from.
pub enum Input {
    /// A profile to parse.
    Profile(PathBuf),
    /// A record file (`None`: standard input).
    Records(Option<PathBuf>),
    /// Records from a pipe or FIFO (named by the path): the bytes read to
    /// detect the format, then the rest of the stream, read once.
    Stream(PathBuf, std::sync::Mutex<Option<Box<dyn Read + Send>>>),
}

impl Input {
    /// Decide from the content of `path` (absent or `-`: standard input,
    /// which must hold records).
    pub fn detect(path: Option<&Path>) -> anyhow::Result<Input> {
        let Some(p) = path.filter(|p| *p != Path::new("-")) else {
            return Ok(Input::Records(None));
        };
        let p = match spool::open(p)? {
            spool::Opened::File(p) => p,
            spool::Opened::Stream(r) => {
                return Ok(Input::Stream(p.to_owned(), std::sync::Mutex::new(Some(r))));
            }
        };
        Ok(if holds_records(&p)? {
            Input::Records(Some(p))
        } else {
            Input::Profile(p)
        })
    }

    /// Records are read with mimalloc ([`crate::alloc`]): many small,
    /// short-lived blocks per record, made and freed on several threads. A
    /// profile keeps glibc's allocator, which holds less memory.
    pub fn choose_allocator(&self) {
        if matches!(self, Input::Records(_)) {
            crate::alloc::use_mimalloc();
        }
    }

    /// True when `path` names records that [`Input::detect`] would read as
    /// such: standard input, or a regular file that is not a profile (a
    /// pipe or anything unreadable: false, and nothing is read from it).
    pub fn is_records_file(path: &Path) -> bool {
        if path == Path::new("-") {
            return true;
        }
        if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            return false;
        }
        holds_records(path).unwrap_or(false)
    }

    /// The name to use in messages.
    pub fn name(&self) -> String {
        match self {
            Input::Profile(p) | Input::Records(Some(p)) => spool::name(p),
            Input::Stream(p, _) => p.display().to_string(),
            Input::Records(None) => "<stdin>".to_owned(),
        }
    }
}

/// Whether the regular file `path` holds records rather than a profile
/// (SQLite, gzip, or a JSON document that does not start like a record).
fn holds_records(path: &Path) -> anyhow::Result<bool> {
    Ok(match read::sniff(path)? {
        FileKind::Sqlite | FileKind::Gzip => false,
        FileKind::Json => starts_with_record(path)?,
        _ => true,
    })
}

/// A profile argument of a command that reads the profile itself: `-`
/// is standard input, copied once into a temporary file (SQLite needs a
/// file it can seek in; messages still say `-`); any other path is
/// returned as it is.
pub fn profile_arg(path: &Path) -> anyhow::Result<PathBuf> {
    if path != Path::new("-") {
        return Ok(path.to_owned());
    }
    match spool::open_as(Path::new("/dev/stdin"), path)? {
        spool::Opened::File(p) => Ok(p),
        spool::Opened::Stream(_) => anyhow::bail!(
            "-: standard input holds records (or is not a profile); this command needs the profile itself (nsys or nvprof SQLite, or a PyTorch profiler trace)"
        ),
    }
}

/// The trace of a spooled input named as the user gave it (`-`, a FIFO),
/// not by its temporary copy: reports print `trace.path`.
pub fn as_given(trace: &mut Trace) {
    trace.path = PathBuf::from(spool::name(&trace.path));
}

/// Longest first line looked at to tell records from a Kineto trace.
const HEAD_BYTES: u64 = 1 << 20;

/// True when the first line of `path` is a record or a record-file header
/// (see [`looks_like_records`]).
pub fn starts_with_record(path: &Path) -> anyhow::Result<bool> {
    let f = File::open(path).with_context(|| format!("cannot open {}", spool::name(path)))?;
    let mut first = Vec::new();
    BufReader::new(f.take(HEAD_BYTES))
        .read_until(b'\n', &mut first)
        .with_context(|| format!("cannot read {}", spool::name(path)))?;
    Ok(looks_like_records(&first))
}

/// True when `head` (the start of a file) begins with a record or a
/// record-file header line (JSON Lines or PyProf's dicts): a Kineto trace
/// is one JSON document over many lines. A first line too long to check or
/// one that is not a valid record still counts when it starts like one, so
/// that the record reader reports what is wrong with it.
pub fn looks_like_records(head: &[u8]) -> bool {
    let head = head.strip_prefix(UTF8_BOM).unwrap_or(head);
    let first = match memchr::memchr(b'\n', head) {
        Some(i) => &head[..i],
        None => head,
    };
    let text = String::from_utf8_lossy(first);
    let t = text.trim_start();
    if t.starts_with("{\"rprof\"") || t.starts_with("{\"kShortName\"") || t.starts_with("{'") {
        return true;
    }
    read_line(&text).is_ok_and(|l| !matches!(l, Line::Blank))
}

/// The UTF-8 byte-order mark, skipped at the start of a record file.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Inputs that are not regular files (pipes, FIFOs, `<(zcat x.gz)`) are
/// read once. Records are streamed (the bytes read to detect the format
/// come first); a profile is copied into a temporary file, since SQLite
/// needs a file it can seek in. Messages name the input as given.
pub mod spool {
    use std::io::{Cursor, Read};
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    use anyhow::Context;

    /// (temporary file, name given) of every spooled input.
    static SPOOLED: Mutex<Vec<(tempfile::TempPath, PathBuf)>> = Mutex::new(Vec::new());

    /// An input ready to read.
    pub enum Opened {
        /// A regular file (maybe a temporary copy of a piped profile).
        File(PathBuf),
        /// Not a profile, from a pipe: to be read as records.
        Stream(Box<dyn Read + Send>),
    }

    /// `path` itself when it is a regular file (or missing: the reader
    /// reports that); else the stream, read once.
    pub fn open(path: &Path) -> anyhow::Result<Opened> {
        open_as(path, path)
    }

    /// [`open`] `path`, named `given` in messages (`-` for `/dev/stdin`).
    pub fn open_as(path: &Path, given: &Path) -> anyhow::Result<Opened> {
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() && !m.is_dir() => {}
            _ => return Ok(Opened::File(path.to_owned())),
        }
        let mut src = std::fs::File::open(path)
            .with_context(|| format!("cannot open {}", given.display()))?;
        // the first line (or the first MiB): enough to tell the formats apart
        let mut head = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        while (head.len() as u64) < super::HEAD_BYTES && !head.contains(&b'\n') {
            match src.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(
                        anyhow::Error::new(e).context(format!("cannot read {}", given.display()))
                    );
                }
            }
        }
        let profile = head.starts_with(b"SQLite format 3\0")
            || head.starts_with(&[0x1f, 0x8b])
            || (head
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|b| *b == b'{' || *b == b'[')
                && !super::looks_like_records(&head));
        if !profile {
            return Ok(Opened::Stream(Box::new(Cursor::new(head).chain(src))));
        }
        let mut tmp = tempfile::Builder::new()
            .prefix("rprof-input-")
            .tempfile()
            .context("cannot create a temporary file for a piped input")?;
        std::io::copy(&mut Cursor::new(head).chain(src), tmp.as_file_mut())
            .with_context(|| format!("cannot read {}", given.display()))?;
        let tmp = tmp.into_temp_path();
        let copy = tmp.to_path_buf();
        if let Ok(mut s) = SPOOLED.lock() {
            s.push((tmp, given.to_owned()));
        }
        Ok(Opened::File(copy))
    }

    /// The name to show for `path`: the input as given when `path` is a
    /// spooled copy.
    pub fn name(path: &Path) -> String {
        if let Ok(s) = SPOOLED.lock()
            && let Some((_, given)) = s.iter().find(|(t, _)| **t == *path)
        {
            return given.display().to_string();
        }
        path.display().to_string()
    }

    /// `message` with every spooled copy's path replaced by its name.
    pub fn rename_in(message: &str) -> String {
        let mut m = message.to_owned();
        if let Ok(s) = SPOOLED.lock() {
            for (t, given) in s.iter() {
                m = m.replace(&*t.display().to_string(), &given.display().to_string());
            }
        }
        m
    }

    /// Remove the temporary copies.
    pub fn clear() {
        if let Ok(mut s) = SPOOLED.lock() {
            s.clear();
        }
    }
}

/// How to turn a profile into records.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// PyProf's rules (`--compat`).
    pub compat: bool,
    /// Also read memory copies (for timelines).
    pub memops: bool,
    /// No parse summary or progress on stderr.
    pub quiet: bool,
    /// The command writes its output as it reads (prof): no progress when
    /// that output is the terminal.
    pub streams: bool,
}

/// What the input said about itself.
#[derive(Debug, Default)]
pub struct Info {
    /// File name or `<stdin>`.
    pub name: String,
    /// GPUs: from the profile, a record file's sidecar (or version 1
    /// header), else gathered from the records' own device fields as they
    /// are read (a device is in the list before its first record reaches
    /// the callback).
    pub devices: Vec<DeviceInfo>,
    /// The memory copies and sets of a profile read with
    /// `Options::memops`, summed (`None` for record files, which have
    /// none).
    pub memops: Option<rprof_report::summary::MemopSums>,
}

/// At most this many devices are gathered from records (a hostile file
/// cannot grow the list without bound).
const MAX_DEVICES: usize = 4096;

/// Add the device of each record not yet in `devices`.
fn gather_devices(devices: &mut Vec<DeviceInfo>, recs: &Kernels<'_>) {
    for r in recs {
        if devices.len() >= MAX_DEVICES {
            return;
        }
        if devices
            .iter()
            .any(|d| d.device == r.device && d.pid == r.pid)
        {
            continue;
        }
        devices.push(DeviceInfo {
            device: r.device,
            pid: r.pid,
            name: r.device_name.as_deref().map(str::to_owned),
            sm_count: r.sm_count,
            cc_major: r.cc_major,
            cc_minor: r.cc_minor,
            ..DeviceInfo::default()
        });
    }
}

/// Feed every record of `input` to `each`, a chunk at a time, in order.
/// Records of a profile borrow from the parsed trace; those of a record
/// file from the lines being read.
pub fn for_each_chunk(
    input: &Input,
    opts: Options,
    each: impl FnMut(&Kernels<'_>, &Info) -> anyhow::Result<()>,
) -> anyhow::Result<Info> {
    for_each_chunk_reading(input, opts, Ranges::Read, each)
}

/// Whether a profile's NVTX ranges (and profiler operators) are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranges {
    /// Read them and attribute every kernel to its enclosing ranges.
    Read,
    /// Neither read nor attributed (the records carry no markers): for
    /// questions whose answer does not depend on them, which then skip the
    /// largest table of most exports. Record files are read as they are.
    Skip,
}

/// [`for_each_chunk`], reading a profile's ranges or not.
pub fn for_each_chunk_reading(
    input: &Input,
    opts: Options,
    ranges: Ranges,
    mut each: impl FnMut(&Kernels<'_>, &Info) -> anyhow::Result<()>,
) -> anyhow::Result<Info> {
    for_each_chunk_prepared(
        input,
        opts,
        ranges,
        |_| (),
        |recs, (), info| each(recs, info),
    )
}

/// [`for_each_chunk_reading`] with a first stage: `prepare` runs on each
/// chunk in order (so it may keep state from chunk to chunk, as the op
/// models' backward lookup does), and `each` gets the chunk with what
/// `prepare` returned for it.
///
/// On a profile this is a pipeline of three threads: one builds a chunk's
/// records, a second prepares them, and this one runs `each` on the chunk
/// before. Call it from a thread of its own, not from a rayon task (see
/// `build::build_overlapped`). A record file is a pipeline too: one
/// thread reads and parses each block of lines, a second prepares it, and
/// this one consumes the block before (run in turn on this thread when
/// called from a rayon task); Parquet records too, read as the JSON Lines
/// records of their rows.
pub fn for_each_chunk_prepared<T: Send>(
    input: &Input,
    opts: Options,
    ranges: Ranges,
    prepare: impl FnMut(&Kernels<'_>) -> T + Send,
    mut each: impl FnMut(&Kernels<'_>, T, &Info) -> anyhow::Result<()>,
) -> anyhow::Result<Info> {
    match input {
        Input::Profile(path) => {
            let (mut trace, enclosing) = load_with(path, opts, ranges)?;
            // the copies and sets, summed and let go before the records
            // are built (from kernels alone): at 3 M kernels they were
            // 85 MB at the peak
            let info = Info {
                name: spool::name(path),
                devices: trace.devices.clone(),
                memops: opts
                    .memops
                    .then(|| rprof_report::summary::MemopSums::of(&trace.memops)),
            };
            trace.memops = Vec::new();
            let trace = trace;
            // what is left is building the records and modelling them:
            // small, short-lived blocks, faster with mimalloc; the trace
            // already read stays glibc's (crate::alloc)
            crate::alloc::use_mimalloc();
            // the callback's own error (a closed pipe, say) is kept as is
            let phase = Phase::bar(
                progress::enabled(opts.quiet, opts.streams),
                trace.kernels.len() as u64,
                "building records",
                false,
            );
            let stats = build::build_overlapped(
                &trace,
                &enclosing,
                BuildOptions {
                    compat: opts.compat,
                    // the records are modelled here, not written
                    typed_stock: true,
                    ..BuildOptions::default()
                },
                prepare,
                |records, prepared| {
                    each(records, prepared, &info)?;
                    phase.inc(records.len() as u64);
                    anyhow::Ok(())
                },
            );
            drop(phase);
            let stats = stats?;
            if !opts.quiet {
                parse_summary_reading(&trace, &stats, ranges);
            }
            Ok(info)
        }
        Input::Records(Some(p)) if is_parquet(p) => {
            let (lines, devices) = parquet_lines(p)?;
            records(
                lines,
                spool::name(p),
                None,
                Some(devices),
                opts,
                prepare,
                each,
            )
        }
        Input::Records(path) => {
            let (input, name): (Box<dyn Read + Send>, String) = match path {
                Some(p) => {
                    let f =
                        File::open(p).with_context(|| format!("cannot open {}", spool::name(p)))?;
                    (Box::new(f), spool::name(p))
                }
                None => (Box::new(io::stdin()), "<stdin>".to_owned()),
            };
            records(input, name, path.as_deref(), None, opts, prepare, each)
        }
        Input::Stream(p, stream) => {
            let taken = stream.lock().ok().and_then(|mut s| s.take());
            let Some(r) = taken else {
                anyhow::bail!("{}: the stream was already read", p.display());
            };
            records(r, p.display().to_string(), None, None, opts, prepare, each)
        }
    }
}

/// True when `path` starts with Parquet's magic bytes (`PAR1`): a
/// record file of `rprof parse --format parquet`, whatever its name.
pub fn is_parquet(path: &Path) -> bool {
    let mut head = [0u8; 4];
    File::open(path).is_ok_and(|mut f| f.read_exact(&mut head).is_ok())
        && &head == rprof_report::records::read::MAGIC
}

/// Rows per batch read from a Parquet record file: their lines (about
/// 1.3 KB a row) are held once more while the records pipeline reads them.
/// 64 Ki rows held 0.44 GB at the peak of `prof` on the 1 M-kernel file;
/// 4 Ki rows, 0.18-0.21 GB, at no cost in time (one run each of 1, 2, 4,
/// 16 and 64 Ki rows, twice).
const PARQUET_BATCH: usize = 4 << 10;

/// A Parquet record file as the JSON Lines records `rprof parse` writes
/// for it, and the device table of its `rprof` metadata (the sidecar's
/// header). Read through [`records`] like a JSON Lines file: the same
/// record parser and the same pipeline (the batches are decoded, and
/// their lines written, by its reading thread), so that every command
/// gives the same output for either file. Each batch was turned into
/// records and consumed in turn before, on one thread but for the parse:
/// `prof` on the 1 M-kernel Parquet file took 1.5 times its time on the
/// JSON Lines file, and 5 times before the lines were written straight
/// from the columns (`rprof_report::records::read::write_lines`).
fn parquet_lines(
    path: &Path,
) -> anyhow::Result<(Box<dyn Read + Send>, Vec<rprof_trace::model::DeviceInfo>)> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let name = spool::name(path);
    let f = File::open(path).with_context(|| format!("cannot open {name}"))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(f)
        .map_err(|e| anyhow!("{name}: not a readable Parquet file ({e})"))?
        .with_batch_size(PARQUET_BATCH);
    let header = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == "rprof"))
        .and_then(|k| k.value.clone());
    let Some(header) = header else {
        anyhow::bail!(
            "{name}: a Parquet file without rprof's metadata: not a record file of `rprof parse --format parquet`"
        );
    };
    if header.len() > 16 << 20 {
        anyhow::bail!("{name}: rprof metadata larger than 16 MiB");
    }
    let h: rprof_trace::model::Header =
        serde_json::from_str(&header).map_err(|e| anyhow!("{name}: bad rprof metadata ({e})"))?;
    if h.version > rprof_trace::model::DICT_VERSION {
        anyhow::bail!(
            "{name}: record format version {} is newer than this rprof reads ({}); re-run `rprof parse` or update rprof",
            h.version,
            rprof_trace::model::DICT_VERSION
        );
    }
    let reader = builder
        .build()
        .map_err(|e| anyhow!("{name}: cannot read ({e})"))?;
    let lines = ParquetLines {
        batches: reader,
        bufs: Vec::new(),
        at: 0,
        pos: 0,
    };
    Ok((Box::new(lines), h.devices))
}

/// The rows of a Parquet record file as JSON Lines bytes, a batch at a
/// time ([`rprof_report::records::read::write_lines`]); the buffers are
/// reused from one batch to the next.
struct ParquetLines {
    batches: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
    /// The current batch's lines, a buffer per group of rows.
    bufs: Vec<String>,
    /// The buffer being read, and the place in it.
    at: usize,
    pos: usize,
}

impl Read for ParquetLines {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(buf) = self.bufs.get(self.at) {
                let rest = buf.as_bytes().get(self.pos..).unwrap_or_default();
                if !rest.is_empty() {
                    let n = rest.len().min(out.len());
                    out[..n].copy_from_slice(&rest[..n]);
                    self.pos += n;
                    return Ok(n);
                }
                self.at += 1;
                self.pos = 0;
                continue;
            }
            match self.batches.next() {
                None => return Ok(0),
                Some(Err(e)) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("cannot read ({e})"),
                    ));
                }
                Some(Ok(batch)) => {
                    rprof_report::records::read::write_lines(&batch, &mut self.bufs)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                    self.at = 0;
                    self.pos = 0;
                }
            }
        }
    }
}

/// A profile, read (with its ranges or not) and attributed for building
/// records: the trace's ranges serve only to build them, so those
/// enclosing no launch call are left out (less memory and sorting on large
/// exports; the records are the same): by the nsys reader as it reads,
/// else before the attribution.
fn load_with(
    path: &Path,
    opts: Options,
    ranges: Ranges,
) -> anyhow::Result<(Trace, rprof_trace::attribute::Enclosing)> {
    let on = progress::enabled(opts.quiet, false);
    crate::cmd::map_large_blocks();
    // (the reader drops most of those ranges as it reads)
    let mut trace = read_profile(path, opts, ranges, true)?;
    let attributing = Phase::spinner(
        on && ranges == Ranges::Read,
        "attributing kernels to NVTX ranges",
    );
    // the records are of kernels alone: the calls that launched only
    // copies and sets (when those were read, to be summed) need no list
    let wanted = rprof_trace::attribute::kernel_launches(&trace);
    let wanted = wanted.as_deref();
    let enclosing = if trace.source == rprof_trace::model::Source::Nsys {
        // the reader kept only the ranges that may enclose a kernel's
        // launch (and those left open, which no launch's list names unless
        // it encloses one): a second pass would build its own index of the
        // calls, at the peak (0.13 GB at 3 M kernels), to drop next to
        // nothing
        rprof_trace::attribute::attribute_of(&trace.launches, wanted, &mut trace.ranges)
    } else {
        rprof_trace::attribute::attribute_used_of(&trace.launches, wanted, &mut trace.ranges).0
    };
    drop(attributing);
    crate::cmd::release_freed();
    Ok((trace, enclosing))
}

/// A profile, read, with its ranges in attribution order but not
/// attributed: for a caller that uses every range before it attributes
/// the kernels to those enclosing a launch call (`export` writes them all
/// first, then keeps those for the op models:
/// [`rprof_trace::attribute::attribute_used`]).
pub fn load_sorted(path: &Path, opts: Options) -> anyhow::Result<Trace> {
    let mut trace = read_profile(path, opts, Ranges::Read, false)?;
    rprof_trace::attribute::sort_ranges(&mut trace.ranges);
    Ok(trace)
}

/// Read a profile (with its ranges or not), as given; `enclosing`: the
/// ranges that enclose no launch call may be left out
/// ([`ReadOptions::enclosing_ranges_only`]).
fn read_profile(
    path: &Path,
    opts: Options,
    ranges: Ranges,
    enclosing: bool,
) -> anyhow::Result<Trace> {
    let on = progress::enabled(opts.quiet, false);
    let reading = Phase::spinner(on, &format!("reading {}", path.display()));
    let mut trace = read::read(
        path,
        ReadOptions {
            compat: opts.compat,
            memops: opts.memops,
            // the callers that keep only the ranges enclosing a launch
            // build records of kernels alone and only sum the copies and
            // sets (load_with)
            memops_unlaunched: enclosing,
            no_ranges: ranges == Ranges::Skip,
            enclosing_ranges_only: enclosing,
            ..ReadOptions::default()
        },
    )?;
    drop(reading);
    as_given(&mut trace);
    Ok(trace)
}

/// What reading a profile found, on stderr: the records headline, the
/// lines every command prints ([`crate::diag::detail_lines`]), and what
/// building the records found.
pub fn parse_summary(trace: &Trace, built: &rprof_trace::build::BuildStats) {
    parse_summary_reading(trace, built, Ranges::Read)
}

/// [`parse_summary`] of a profile read with or without its ranges.
pub fn parse_summary_reading(
    trace: &Trace,
    built: &rprof_trace::build::BuildStats,
    ranges: Ranges,
) {
    crate::diag::print(&parse_summary_lines(trace, built, ranges));
}

/// The lines [`parse_summary_reading`] prints.
pub fn parse_summary_lines(
    trace: &Trace,
    built: &rprof_trace::build::BuildStats,
    ranges: Ranges,
) -> Vec<String> {
    let path = crate::diag::name(trace);
    let headline = match ranges {
        Ranges::Read => built.summary_line(trace),
        // without ranges every kernel lacks one: say that they were not
        // read rather than count them
        Ranges::Skip => format!(
            "rprof: {path}: {} kernel rows, {} records, {} kernels without a launch call ({} not read: not needed)",
            trace.stats.kernel_rows,
            built.records,
            trace.stats.without_launch,
            if trace.source == rprof_trace::model::Source::Kineto {
                "CPU operators"
            } else {
                "NVTX ranges"
            },
        ),
    };
    let mut lines = vec![headline];
    lines.extend(crate::diag::detail_lines_of(trace, ranges == Ranges::Read));
    if built.undecodable_markers > 0 {
        lines.push(format!(
            "rprof: {path}: {} PyProf markers could not be read (kept as other markers)",
            built.undecodable_markers
        ));
    }
    if built.undemangled_names > 0 {
        lines.push(format!(
            "rprof: {path}: {} kernel names look mangled but do not demangle (kept raw)",
            built.undemangled_names
        ));
    }
    lines
}

/// Reads a record file in blocks of whole lines: one buffer, refilled in
/// place, split at newlines; the lines of a block are parsed in parallel
/// straight from the buffer.
struct Blocks {
    input: Box<dyn Read + Send>,
    buf: Vec<u8>,
    /// Bytes of `buf` that belong to the block returned last.
    used: usize,
    /// Bytes of `buf` read from the input.
    filled: usize,
    eof: bool,
}

impl Blocks {
    /// [`Blocks::next`] in a buffer of its own: the partial line after the
    /// block moves to `spare` (a buffer a consumed block gave back, else a
    /// new one), which the next block is read into.
    fn next_owned(&mut self, want: usize, spare: Option<Vec<u8>>) -> io::Result<Option<Vec<u8>>> {
        let Some(n) = self.next(want)?.map(<[u8]>::len) else {
            return Ok(None);
        };
        let tail = self.filled - n;
        let mut next = spare.unwrap_or_default();
        if next.len() < tail {
            next.resize(tail, 0);
        }
        next[..tail].copy_from_slice(&self.buf[n..self.filled]);
        let mut block = std::mem::replace(&mut self.buf, next);
        block.truncate(n);
        self.filled = tail;
        self.used = 0;
        Ok(Some(block))
    }

    /// The next block of complete lines, at least `want` bytes unless the
    /// input ends first (`None` at the end).
    fn next(&mut self, want: usize) -> io::Result<Option<&[u8]>> {
        // keep the partial line after the previous block
        self.buf.copy_within(self.used..self.filled, 0);
        self.filled -= self.used;
        self.used = 0;
        // each byte is searched for a newline once (a long line read in
        // many pieces was once re-scanned from its start on every read)
        let mut scanned = 0;
        let mut last_newline: Option<usize> = None;
        loop {
            if let Some(i) = memchr::memrchr(b'\n', &self.buf[scanned..self.filled]) {
                last_newline = Some(scanned + i);
            }
            scanned = self.filled;
            if let Some(end) = last_newline.filter(|_| self.filled >= want || self.eof) {
                self.used = end + 1;
                return Ok(Some(&self.buf[..self.used]));
            }
            if last_newline.is_none() && self.filled > MAX_LINE_BYTES {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "a line longer than {} MiB (rprof's limit for a record line): not a record file?",
                        MAX_LINE_BYTES >> 20
                    ),
                ));
            }
            if self.eof {
                if self.filled == 0 {
                    return Ok(None);
                }
                // a last line without a newline
                self.used = self.filled;
                return Ok(Some(&self.buf[..self.used]));
            }
            if self.buf.len() < self.filled + want.max(1 << 16) {
                self.buf.resize(self.filled + want.max(1 << 16), 0);
            }
            match self.input.read(&mut self.buf[self.filled..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Bytes per block of a record file: small first, so the first row shows at
/// once, then larger.
const FIRST_BLOCK: usize = 64 << 10;
/// Longest record line accepted. A record repeats its enclosing NVTX
/// texts, so deep nesting makes long lines, but not this long; beyond it
/// (`/dev/zero`, a binary file) the read stops with an error.
pub const MAX_LINE_BYTES: usize = 64 << 20;
const MAX_BLOCK: usize = 1 << 20;

self_cell::self_cell!(
    /// One block of a record file and the records read from it, which
    /// borrow its bytes: a block travels with its records from the thread
    /// that reads them to the threads that model and print them.
    struct Block {
        owner: Vec<u8>,
        #[covariant]
        dependent: Parsed,
    }
);

/// What the lines of a block hold.
struct Parsed<'a> {
    recs: Kernels<'a>,
    /// The first header line (a version 1 file's device table).
    header: Option<rprof_trace::model::Header>,
    /// Lines in the block.
    lines: u64,
    /// The first line that does not read: its index in the block, and why.
    /// The lines after it are not read.
    error: Option<(usize, String)>,
}

/// Read the lines of `block` in parallel (after a byte-order mark when
/// `bom`).
fn parse_block(block: &[u8], bom: bool) -> Parsed<'_> {
    let mut lines: Vec<&[u8]> = Vec::with_capacity(block.len() / 256);
    // a byte-order mark before the first line is not part of it
    let mut start = if bom && block.starts_with(UTF8_BOM) {
        UTF8_BOM.len()
    } else {
        0
    };
    for nl in memchr::memchr_iter(b'\n', block) {
        lines.push(&block[start..nl]);
        start = nl + 1;
    }
    if start < block.len() {
        lines.push(&block[start..]);
    }
    // each line read in parallel, and whether its lists are those of the
    // line before (parallel too), so that the one sequential pass only
    // places each row in the table
    let parsed: Vec<Result<Line<'_>, String>> = lines
        .par_iter()
        .map(|l| {
            let l = std::str::from_utf8(l)
                .map_err(|e| format!("not UTF-8 text (byte {})", e.valid_up_to() + 1))?;
            read_line(l)
        })
        .collect();
    let same: Vec<bool> = (0..parsed.len())
        .into_par_iter()
        .map(
            |i| match (i.checked_sub(1).map(|j| &parsed[j]), &parsed[i]) {
                (Some(Ok(Line::Record(a))), Ok(Line::Record(b))) => a.same_context(b),
                _ => false,
            },
        )
        .collect();
    let mut out = Parsed {
        recs: Kernels::with_capacity(parsed.len()),
        header: None,
        lines: lines.len() as u64,
        error: None,
    };
    for (i, (p, same)) in parsed.into_iter().zip(same).enumerate() {
        match p {
            Ok(Line::Blank) => {}
            Ok(Line::Header(h)) => {
                if out.header.is_none() {
                    out.header = Some(h);
                }
            }
            Ok(Line::Record(rec)) => out.recs.push_read(*rec, same),
            Err(msg) => {
                out.error = Some((i, msg));
                break;
            }
        }
    }
    out
}

/// Read `input` a block of lines at a time, each block's records parsed
/// in parallel, and hand each block with the number of its first line to
/// `send` until it returns false. A block with a line that does not read
/// is the last (its records before that line are read).
fn read_blocks(
    input: Box<dyn Read + Send>,
    name: &str,
    spares: &std::sync::mpsc::Receiver<Vec<u8>>,
    mut send: impl FnMut(Block, u64) -> bool,
) -> anyhow::Result<()> {
    let mut blocks = Blocks {
        input,
        buf: Vec::new(),
        used: 0,
        filled: 0,
        eof: false,
    };
    let mut want = FIRST_BLOCK;
    let mut first_line = 1u64;
    loop {
        let bytes = match blocks.next_owned(want, spares.try_recv().ok()) {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(()),
            Err(e) => {
                let what = if e.kind() == io::ErrorKind::InvalidData {
                    ""
                } else {
                    "cannot read: "
                };
                return Err(anyhow!("{name}:{first_line}: {what}{e}"));
            }
        };
        let first = first_line == 1;
        if first && bytes.starts_with(rprof_report::records::read::MAGIC) {
            anyhow::bail!(
                "{name}: Parquet records are read from a file (their index is at the end): give the file's path, not a pipe"
            );
        }
        let block = Block::new(bytes, |b| parse_block(b, first));
        let (lines, failed) = {
            let p = block.borrow_dependent();
            (p.lines, p.error.is_some())
        };
        if !send(block, first_line) || failed {
            // the consumer stopped, or reports the bad line
            return Ok(());
        }
        first_line += lines;
        want = (want * 2).min(MAX_BLOCK);
    }
}

/// A record file, as a pipeline of three threads: one reads each block of
/// lines and parses its records (in parallel), a second runs `prepare` on
/// them (in order), while `each` consumes the block before on the calling
/// thread. Each stage runs at most one block ahead of the next, so memory
/// stays bounded (a few blocks of at most [`MAX_BLOCK`] bytes); a block's
/// buffer goes back to the reader once consumed. Called from a rayon task
/// (`diff` reads its two runs side by side), the three run in turn on the
/// calling thread instead: stages waiting on each other there would hold
/// the pool's workers.
fn records<T: Send>(
    input: Box<dyn Read + Send>,
    name: String,
    path: Option<&Path>,
    devices: Option<Vec<rprof_trace::model::DeviceInfo>>,
    opts: Options,
    mut prepare: impl FnMut(&Kernels<'_>) -> T + Send,
    mut each: impl FnMut(&Kernels<'_>, T, &Info) -> anyhow::Result<()>,
) -> anyhow::Result<Info> {
    let on = progress::enabled(opts.quiet, opts.streams);
    let phase = match path
        .and_then(|p| std::fs::metadata(p).ok())
        .filter(|m| m.is_file())
    {
        Some(m) => Phase::bar(on, m.len(), &format!("reading {name}"), true),
        None => Phase::spinner(on, &format!("reading records from {name}")),
    };
    let mut info = Info {
        name,
        devices: Vec::new(),
        memops: None,
    };
    // the device table of the sidecar, when the records are a file that
    // has one; else the header line of a version 1 file, else the records'
    let mut table = false;
    if let Some(d) = devices {
        info.devices = d;
        table = true;
    } else if let Some(p) = path
        && let Some(h) = rprof_trace::model::read_sidecar(p).map_err(|e| anyhow!(e))?
    {
        info.devices = h.devices;
        table = true;
    }
    let name = info.name.clone();
    let (spare_tx, spare_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let mut consume = |block: Block, first_line: u64, prepared: T| -> anyhow::Result<()> {
        phase.inc(block.borrow_owner().len() as u64);
        let p = block.borrow_dependent();
        if let Some(h) = &p.header
            && !table
        {
            info.devices.clone_from(&h.devices);
            table = true;
        }
        if !table {
            gather_devices(&mut info.devices, &p.recs);
        }
        each(&p.recs, prepared, &info)?;
        if let Some((i, msg)) = &p.error {
            anyhow::bail!("{}:{}: {msg}", info.name, first_line + *i as u64);
        }
        // the buffer goes back to the reader (gone once it ended), unless
        // a long line made it large: what stays allocated is bounded by
        // the blocks in flight, not by the longest line seen
        let buf = block.into_owner();
        if buf.capacity() <= 4 * MAX_BLOCK {
            let _ = spare_tx.send(buf);
        }
        Ok(())
    };
    if rayon::current_thread_index().is_some() {
        let mut failed = None;
        let read = read_blocks(input, &name, &spare_rx, |block, first_line| {
            let prepared = prepare(&block.borrow_dependent().recs);
            match consume(block, first_line, prepared) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        read?;
        return Ok(info);
    }
    std::thread::scope(|scope| {
        let (read_tx, read_rx) = std::sync::mpsc::sync_channel::<(Block, u64)>(1);
        let (prepared_tx, prepared_rx) = std::sync::mpsc::sync_channel::<(Block, u64, T)>(1);
        let name = &name;
        let reader = scope.spawn(move || {
            read_blocks(input, name, &spare_rx, |block, first_line| {
                read_tx.send((block, first_line)).is_ok()
            })
        });
        let preparer = scope.spawn(move || {
            for (block, first_line) in read_rx.iter() {
                let prepared = prepare(&block.borrow_dependent().recs);
                if prepared_tx.send((block, first_line, prepared)).is_err() {
                    break;
                }
            }
        });
        let mut consumed = Ok(());
        for (block, first_line, prepared) in prepared_rx.iter() {
            consumed = consume(block, first_line, prepared);
            if consumed.is_err() {
                break;
            }
        }
        // the preparer's next send fails once the receiver is gone, and
        // the reader's once the preparer is
        drop(prepared_rx);
        if let Err(panic) = preparer.join() {
            std::panic::resume_unwind(panic)
        }
        let read = match reader.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        consumed?;
        read
    })?;
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which inputs count as records for the allocator's choice: each
    /// expected answer is what `Input::detect` makes of the same path.
    #[test]
    fn records_files_are_those_detect_reads_as_records() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let dir = tempfile::tempdir().expect("temporary directory");
        let jsonl = dir.path().join("r.jsonl");
        std::fs::write(&jsonl, "{\"kShortName\":\"k\"}\n").expect("write");
        // a PyTorch-profiler trace is one JSON document (synthetic)
        let kineto = dir.path().join("trace.json");
        std::fs::write(&kineto, "{\n  \"traceEvents\": []\n}\n").expect("write");
        let fifo = dir.path().join("fifo");
        let fifo_made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        let cases: Vec<(PathBuf, bool)> = vec![
            (root.join("profiling-lm/net.dict"), true),
            (jsonl.clone(), true),
            (root.join("mordred/report1_2021.sqlite"), false),
            (root.join("kineto/alexnet_benchmark_trace.json.gz"), false),
            (kineto, false),
            (dir.path().join("absent"), false),
            (dir.path().to_owned(), false),
        ];
        for (p, want) in &cases {
            assert_eq!(Input::is_records_file(p), *want, "{}", p.display());
            if p.is_file() {
                let detected = matches!(Input::detect(Some(p)), Ok(Input::Records(_)));
                assert_eq!(detected, *want, "detect on {}", p.display());
            }
        }
        assert!(Input::is_records_file(Path::new("-")));
        if fifo_made {
            // not opened: opening a FIFO with no writer would block
            assert!(!Input::is_records_file(&fifo));
        }
    }
}
