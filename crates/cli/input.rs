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
use rprof_trace::model::{DeviceInfo, Trace};
use rprof_trace::read::{self, FileKind, ReadOptions};
use rprof_trace::record::{Line, Record, read_line};

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
    /// No parse summary on stderr.
    pub quiet: bool,
}

/// What the input said about itself.
#[derive(Debug, Default)]
pub struct Info {
    /// File name or `<stdin>`.
    pub name: String,
    /// GPUs (from the profile, or a record file's header).
    pub devices: Vec<DeviceInfo>,
}

/// Lines per chunk of a record file: small first, so the first row shows at
/// once, then larger.
pub const FIRST_CHUNK: usize = 64;
/// Largest chunk.
pub const MAX_CHUNK: usize = 4096;

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
            };
            // the callback's own error (a closed pipe, say) is kept as is
            let mut failed: Option<anyhow::Error> = None;
            let stats = build::build(
                &trace,
                &enclosing,
                BuildOptions {
                    compat: opts.compat,
                },
                |records| match each(records, &info) {
                    Ok(()) => Ok(()),
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
            if let Some(e) = failed {
                return Err(e);
            }
            let stats = stats?;
            if !opts.quiet {
                summary(&trace, stats.records, stats.without_nvtx);
            }
            Ok(info)
        }
        Input::Records(path) => records(path.as_deref(), each),
    }
}

/// A profile, read and attributed.
pub fn load(
    path: &Path,
    opts: Options,
) -> anyhow::Result<(Trace, rprof_trace::attribute::Enclosing)> {
    let mut trace = read::read(
        path,
        ReadOptions {
            compat: opts.compat,
            memops: opts.memops,
        },
    )?;
    let enclosing = rprof_trace::attribute::attribute(&trace.launches, &mut trace.ranges);
    Ok((trace, enclosing))
}

fn summary(trace: &Trace, records: u64, without_nvtx: u64) {
    let s = &trace.stats;
    let mut e = io::stderr().lock();
    let _ = writeln!(
        e,
        "rprof: {}: {} kernel rows, {} records, {} kernels without a launch call, {} without an enclosing range",
        trace.path.display(),
        s.kernel_rows,
        records,
        s.without_launch,
        without_nvtx
    );
    if s.skipped_null > 0 {
        let _ = writeln!(
            e,
            "rprof: {}: skipped {} kernel rows with NULL start or end",
            trace.path.display(),
            s.skipped_null
        );
    }
}

/// Line reader that reuses its buffers across chunks.
struct Lines {
    input: Box<dyn BufRead>,
    bufs: Vec<String>,
    /// Line number of `bufs[0]` (1-based).
    first_line: u64,
    len: usize,
}

impl Lines {
    /// Read up to `max` lines. Returns the error that stopped reading, if
    /// any, after the lines read before it.
    fn fill(&mut self, max: usize) -> Option<(u64, io::Error)> {
        self.first_line += self.len as u64;
        self.len = 0;
        while self.len < max {
            if self.bufs.len() <= self.len {
                self.bufs.push(String::new());
            }
            let buf = &mut self.bufs[self.len];
            buf.clear();
            match self.input.read_line(buf) {
                Ok(0) => break,
                Ok(_) => self.len += 1,
                Err(e) => return Some((self.first_line + self.len as u64, e)),
            }
        }
        None
    }

    fn lines(&self) -> &[String] {
        &self.bufs[..self.len]
    }
}

fn records(
    path: Option<&Path>,
    mut each: impl FnMut(&[Record<'_>], &Info) -> anyhow::Result<()>,
) -> anyhow::Result<Info> {
    let (input, name): (Box<dyn BufRead>, String) = match path {
        Some(p) => {
            let f = File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
            (
                Box::new(BufReader::with_capacity(1 << 16, f)),
                p.display().to_string(),
            )
        }
        None => (
            Box::new(BufReader::with_capacity(1 << 16, io::stdin())),
            "<stdin>".to_owned(),
        ),
    };
    let mut info = Info {
        name,
        devices: Vec::new(),
    };
    let mut lines = Lines {
        input,
        bufs: Vec::new(),
        first_line: 1,
        len: 0,
    };
    let mut chunk = FIRST_CHUNK;
    loop {
        let read_error = lines.fill(chunk);
        if lines.len == 0 && read_error.is_none() {
            break;
        }
        let parsed: Vec<Result<Line<'_>, String>> =
            lines.lines().par_iter().map(|l| read_line(l)).collect();
        let mut recs = Vec::with_capacity(parsed.len());
        let mut error = None;
        for (i, p) in parsed.into_iter().enumerate() {
            match p {
                Ok(Line::Blank) => {}
                Ok(Line::Header(h)) => info.devices = h.devices,
                Ok(Line::Record(rec)) => recs.push(*rec),
                Err(msg) => {
                    error = Some(anyhow!(
                        "{}:{}: {msg}",
                        info.name,
                        lines.first_line + i as u64
                    ));
                    break;
                }
            }
        }
        each(&recs, &info)?;
        if let Some(e) = error {
            return Err(e);
        }
        if let Some((line, e)) = read_error {
            return Err(anyhow::Error::new(e)
                .context(format!("{}:{line}: cannot read the line", info.name)));
        }
        chunk = (chunk * 2).min(MAX_CHUNK);
    }
    Ok(info)
}
