//! Inputs of the report commands: a profile (nsys or nvprof SQLite, Kineto
//! trace), parsed in-process, or a record file written by `rprof parse`
//! (JSON Lines or PyProf's `.dict`), from a path or standard input. Either
//! way the records reach the caller in chunks, in order.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use rayon::prelude::*;
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::model::{DeviceInfo, MemOp, Trace};
use rprof_trace::read::{self, FileKind, ReadOptions};
use rprof_trace::record::{Line, Record, read_line};

use crate::progress::{self, Phase};

/// Where records come from.
pub enum Input {
    /// A profile to parse.
    Profile(PathBuf),
    /// A record file (`None`: standard input).
    Records(Option<PathBuf>),
}

impl Input {
    /// Decide from the content of `path` (absent or `-`: standard input,
    /// which must hold records).
    pub fn detect(path: Option<&Path>) -> anyhow::Result<Input> {
        let Some(p) = path.filter(|p| *p != Path::new("-")) else {
            return Ok(Input::Records(None));
        };
        Ok(match read::sniff(p)? {
            FileKind::Sqlite | FileKind::Gzip => Input::Profile(p.to_owned()),
            FileKind::Json if !starts_with_record(p)? => Input::Profile(p.to_owned()),
            _ => Input::Records(Some(p.to_owned())),
        })
    }

    /// The name to use in messages.
    pub fn name(&self) -> String {
        match self {
            Input::Profile(p) | Input::Records(Some(p)) => p.display().to_string(),
            Input::Records(None) => "<stdin>".to_owned(),
        }
    }
}

/// True when the first line of `path` is a record or a record-file header
/// (JSON Lines): a Kineto trace is one JSON document over many lines.
fn starts_with_record(path: &Path) -> anyhow::Result<bool> {
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut first = String::new();
    BufReader::new(f.take(1 << 20))
        .read_line(&mut first)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(read_line(&first).is_ok_and(|l| !matches!(l, Line::Blank)))
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
    /// Memory copies and sets of a profile read with `Options::memops`
    /// (`None` for record files, which have none).
    pub memops: Option<Vec<MemOp>>,
}

/// At most this many devices are gathered from records (a hostile file
/// cannot grow the list without bound).
const MAX_DEVICES: usize = 4096;

/// Add the device of each record not yet in `devices`.
fn gather_devices(devices: &mut Vec<DeviceInfo>, recs: &[Record<'_>]) {
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
    mut each: impl FnMut(&[Record<'_>], &Info) -> anyhow::Result<()>,
) -> anyhow::Result<Info> {
    match input {
        Input::Profile(path) => {
            let (trace, enclosing) = load(path, opts)?;
            let info = Info {
                name: path.display().to_string(),
                devices: trace.devices.clone(),
                memops: opts.memops.then(|| trace.memops.clone()),
            };
            // the callback's own error (a closed pipe, say) is kept as is
            let mut failed: Option<anyhow::Error> = None;
            let phase = Phase::bar(
                progress::enabled(opts.quiet, opts.streams),
                trace.kernels.len() as u64,
                "building records",
                false,
            );
            let stats = build::build(
                &trace,
                &enclosing,
                BuildOptions {
                    compat: opts.compat,
                },
                |records| match each(records, &info) {
                    Ok(()) => {
                        phase.inc(records.len() as u64);
                        Ok(())
                    }
                    Err(e) => {
                        failed = Some(e);
                        Err(rprof_trace::Error::Record {
                            source_name: info.name.clone(),
                            line: 0,
                            detail: "stopped".into(),
                        })
                    }
                },
            );
            drop(phase);
            if let Some(e) = failed {
                return Err(e);
            }
            let stats = stats?;
            if !opts.quiet {
                parse_summary(&trace, &stats);
            }
            Ok(info)
        }
        Input::Records(path) => records(path.as_deref(), opts, each),
    }
}

/// A profile, read and attributed.
pub fn load(
    path: &Path,
    opts: Options,
) -> anyhow::Result<(Trace, rprof_trace::attribute::Enclosing)> {
    let on = progress::enabled(opts.quiet, false);
    let reading = Phase::spinner(on, &format!("reading {}", path.display()));
    let mut trace = read::read(
        path,
        ReadOptions {
            compat: opts.compat,
            memops: opts.memops,
            ..ReadOptions::default()
        },
    )?;
    drop(reading);
    let attributing = Phase::spinner(on, "attributing kernels to NVTX ranges");
    let enclosing = rprof_trace::attribute::attribute(&trace.launches, &mut trace.ranges);
    drop(attributing);
    Ok((trace, enclosing))
}

/// What reading a profile found, on stderr: the same lines for every
/// command.
pub fn parse_summary(trace: &Trace, built: &rprof_trace::build::BuildStats) {
    let path = &trace.path;
    let stats = &trace.stats;
    let (undecodable_markers, undemangled_names) =
        (built.undecodable_markers, built.undemangled_names);
    {
        let mut e = std::io::stderr().lock();
        let _ = writeln!(e, "{}", built.summary_line(trace));
        if stats.skipped_null > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: skipped {} kernel rows with {}",
                path.display(),
                stats.skipped_null,
                if trace.source == rprof_trace::model::Source::Kineto {
                    "a missing or mistyped name or time"
                } else {
                    "NULL start or end"
                }
            );
        }
        if stats.non_positive_duration > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: {} kernels end no later than they start (kept with duration 0, \"badTime\": true)",
                path.display(),
                stats.non_positive_duration
            );
        }
        if stats.ranges_skipped > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: skipped {} NVTX rows without start, thread or text",
                path.display(),
                stats.ranges_skipped
            );
        }
        if undecodable_markers > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: {} PyProf markers could not be read (kept as other markers)",
                path.display(),
                undecodable_markers
            );
        }
        if undemangled_names > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: {} kernel names look mangled but do not demangle (kept raw)",
                path.display(),
                undemangled_names
            );
        }
        if stats.kernel_rows == 0 {
            let _ = writeln!(
                e,
                "rprof: {}: note: no GPU kernels in this profile ({} NVTX rows): was CUDA traced?",
                path.display(),
                stats.nvtx_rows
            );
        }
        for note in &trace.notes {
            let _ = writeln!(e, "rprof: {}: note: {note}", path.display());
        }
    }
}

/// Reads a record file in blocks of whole lines: one buffer, refilled in
/// place, split at newlines; the lines of a block are parsed in parallel
/// straight from the buffer.
struct Blocks {
    input: Box<dyn Read>,
    buf: Vec<u8>,
    /// Bytes of `buf` that belong to the block returned last.
    used: usize,
    /// Bytes of `buf` read from the input.
    filled: usize,
    eof: bool,
}

impl Blocks {
    /// The next block of complete lines, at least `want` bytes unless the
    /// input ends first (`None` at the end).
    fn next(&mut self, want: usize) -> io::Result<Option<&[u8]>> {
        // keep the partial line after the previous block
        self.buf.copy_within(self.used..self.filled, 0);
        self.filled -= self.used;
        self.used = 0;
        loop {
            if let Some(end) = (self.filled >= want || self.eof)
                .then(|| memchr::memrchr(b'\n', &self.buf[..self.filled]))
                .flatten()
            {
                self.used = end + 1;
                return Ok(Some(&self.buf[..self.used]));
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
const MAX_BLOCK: usize = 1 << 20;

fn records(
    path: Option<&Path>,
    opts: Options,
    mut each: impl FnMut(&[Record<'_>], &Info) -> anyhow::Result<()>,
) -> anyhow::Result<Info> {
    let on = progress::enabled(opts.quiet, opts.streams);
    let (input, name, phase): (Box<dyn Read>, String, Phase) = match path {
        Some(p) => {
            let f = File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            let phase = Phase::bar(on, len, &format!("reading {}", p.display()), true);
            (Box::new(f), p.display().to_string(), phase)
        }
        None => (
            Box::new(io::stdin()),
            "<stdin>".to_owned(),
            Phase::spinner(on, "reading records from standard input"),
        ),
    };
    let mut info = Info {
        name,
        devices: Vec::new(),
        memops: None,
    };
    // the device table of the sidecar, when the records are a file that
    // has one; else the header line of a version 1 file, else the records'
    let mut table = false;
    if let Some(p) = path
        && let Some(h) = rprof_trace::record::read_sidecar(p).map_err(|e| anyhow!(e))?
    {
        info.devices = h.devices;
        table = true;
    }
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
        let block = match blocks.next(want) {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) => {
                return Err(anyhow::Error::new(e)
                    .context(format!("{}:{first_line}: cannot read the line", info.name)));
            }
        };
        phase.inc(block.len() as u64);
        let mut lines: Vec<&[u8]> = Vec::with_capacity(block.len() / 256);
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', block) {
            lines.push(&block[start..nl]);
            start = nl + 1;
        }
        if start < block.len() {
            lines.push(&block[start..]);
        }
        let parsed: Vec<Result<Line<'_>, String>> = lines
            .par_iter()
            .map(|l| {
                let l = std::str::from_utf8(l).map_err(|e| format!("not UTF-8 text ({e})"))?;
                read_line(l)
            })
            .collect();
        let mut recs = Vec::with_capacity(parsed.len());
        let mut error = None;
        for (i, p) in parsed.into_iter().enumerate() {
            match p {
                Ok(Line::Blank) => {}
                Ok(Line::Header(h)) => {
                    if !table {
                        info.devices = h.devices;
                        table = true;
                    }
                }
                Ok(Line::Record(rec)) => recs.push(*rec),
                Err(msg) => {
                    error = Some(anyhow!("{}:{}: {msg}", info.name, first_line + i as u64));
                    break;
                }
            }
        }
        if !table {
            gather_devices(&mut info.devices, &recs);
        }
        each(&recs, &info)?;
        if let Some(e) = error {
            return Err(e);
        }
        first_line += lines.len() as u64;
        want = (want * 2).min(MAX_BLOCK);
    }
    Ok(info)
}
