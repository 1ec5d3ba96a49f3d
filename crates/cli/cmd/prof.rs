//! `rprof prof`: records → table.
//!
//! Reads the records of `rprof parse` (JSON Lines) or PyProf's `.dict`
//! lines, auto-detected per line, in chunks: each chunk is parsed and its
//! markers decoded in parallel, the backward lookup runs in order, the
//! models run in parallel again, and this thread prints the rows in input
//! order. The first chunk is small and flushed at once, so the first row
//! appears before the input is read to the end.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, anyhow};
use clap::Args;
use rayon::prelude::*;
use rprof_ops::{
    Engine, KernelEstimate, Marker, MarkerCache, Mode, Resolved, Summary, decode_marker,
    estimate_kernel,
};
use rprof_report::{ColumnList, DEFAULT_COLUMNS, Format, Printer, Row};
use rprof_trace::record::{Line, Record, read_line};

use crate::out::{self, UsageError};

/// Print one row per GPU kernel: op, params, FLOPs, bytes, tensor cores.
///
/// Reads the records of `rprof parse` (JSON Lines) or PyProf's own `.dict`
/// files (Python-dict lines), detected line by line, from FILE or standard
/// input. Without --compat, PyProf's bugs that change numbers or crash are
/// fixed and unknown values print `na` (docs/compat.md).
#[derive(Args, Debug)]
#[command(after_help = after_help())]
pub struct ProfArgs {
    /// Columns to print, comma separated, in this order (`all`: every column).
    #[arg(short = 'c', long = "columns", value_name = "LIST", default_value = DEFAULT_COLUMNS)]
    pub columns: String,

    /// Columnated output, N characters wide (0: space separated).
    #[arg(
        short = 'w',
        long = "width",
        value_name = "N",
        default_value_t = 0,
        conflicts_with = "csv"
    )]
    pub width: usize,

    /// CSV output (every field quoted).
    #[arg(long)]
    pub csv: bool,

    /// Reproduce apex.pyprof exactly, bugs included (see docs/compat.md).
    #[arg(long)]
    pub compat: bool,

    /// No summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// Records to read (`-` or absent: standard input).
    pub file: Option<PathBuf>,
}

fn after_help() -> String {
    format!(
        "Columns (-c):\n{}\nExamples:\n  \
         rprof prof net.dict\n  \
         rprof prof -w 150 -c idx,dir,kernel,sil net.dict\n  \
         rprof prof --csv -c idx,dir,kernel,params,sil net.dict\n  \
         rprof parse net.sqlite | rprof prof -c op,flops | awk 'NR > 1 {{f[$1] += $2}} END {{for (o in f) print o, f[o]}}'",
        rprof_report::column::help_table()
    )
}

/// Lines per chunk: small first (the first row shows at once), then larger.
const FIRST_CHUNK: usize = 64;
const MAX_CHUNK: usize = 4096;

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

/// Parse one line (`None`: blank or header).
fn parse(line: &str) -> Result<Option<Record<'_>>, String> {
    match read_line(line)? {
        Line::Blank | Line::Header(_) => Ok(None),
        Line::Record(r) => Ok(Some(*r)),
    }
}

/// The decoded first marker of each record: from the cache, else decoded
/// in parallel (and cached).
fn markers(recs: &[Record<'_>], cache: &mut MarkerCache) -> Vec<Option<Arc<Marker>>> {
    let mut out = Vec::with_capacity(recs.len());
    let mut misses = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        match r.marker.first().map(|t| cache.get(t)) {
            None => out.push(None),
            Some(Some(m)) => out.push(m),
            Some(None) => {
                out.push(None);
                misses.push(i);
            }
        }
    }
    let decoded: Vec<Option<Arc<Marker>>> = misses
        .par_iter()
        .map(|&i| {
            recs[i]
                .marker
                .first()
                .and_then(|t| decode_marker(t))
                .map(Arc::new)
        })
        .collect();
    for (&i, m) in misses.iter().zip(decoded) {
        if let Some(t) = recs[i].marker.first() {
            cache.insert(t, m.clone());
        }
        out[i] = m;
    }
    out
}

pub fn run(args: &ProfArgs) -> anyhow::Result<()> {
    let columns: ColumnList = args
        .columns
        .parse()
        .map_err(|e| UsageError(format!("-c {}: {e}", args.columns)))?;
    let mode = if args.compat { Mode::Apex } else { Mode::Fixed };
    let format = match (args.csv, args.width) {
        (true, _) => Format::Csv,
        (false, 0) => Format::Space,
        (false, w) => Format::Columns(w),
    };
    // check the layout before reading anything
    if let Format::Columns(w) = format {
        rprof_report::printer::widths(&columns.0, w, args.compat)
            .map_err(|e| UsageError(e.to_string()))?;
    }
    let (input, name): (Box<dyn BufRead>, String) = match args.file.as_deref() {
        Some(p) if p != std::path::Path::new("-") => {
            let f = File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
            (
                Box::new(BufReader::with_capacity(1 << 16, f)),
                p.display().to_string(),
            )
        }
        _ => (
            Box::new(BufReader::with_capacity(1 << 16, io::stdin())),
            "<stdin>".to_owned(),
        ),
    };
    let mut printer = Printer::new(out::writer(None)?, &columns.0, format, args.compat)
        .map_err(|e| UsageError(e.to_string()))?;
    printer.write_header()?;
    let mut lines = Lines {
        input,
        bufs: Vec::new(),
        first_line: 1,
        len: 0,
    };
    let mut engine = Engine::new(mode);
    let mut cache = MarkerCache::default();
    let mut summary = Summary::default();
    let mut idx = 0u64;
    let mut chunk = FIRST_CHUNK;
    let mut flushed = false;
    loop {
        let read_error = lines.fill(chunk);
        if lines.len == 0 && read_error.is_none() {
            break;
        }
        let parsed: Vec<Result<Option<Record<'_>>, String>> =
            lines.lines().par_iter().map(|l| parse(l)).collect();
        let mut recs = Vec::with_capacity(parsed.len());
        let mut error = None;
        for (i, p) in parsed.into_iter().enumerate() {
            match p {
                Ok(None) => {}
                Ok(Some(rec)) => recs.push(rec),
                Err(msg) => {
                    error = Some(anyhow!("{name}:{}: {msg}", lines.first_line + i as u64));
                    break;
                }
            }
        }
        let decoded = markers(&recs, &mut cache);
        let items: Vec<(u64, Record<'_>, Resolved)> = recs
            .into_iter()
            .zip(decoded)
            .map(|(rec, marker)| {
                idx += 1;
                let res = engine.resolve(&rec, marker);
                (idx, rec, res)
            })
            .collect();
        let estimates: Vec<KernelEstimate<'_>> = items
            .par_iter()
            .map(|(_, rec, res)| estimate_kernel(rec, res, mode))
            .collect();
        for ((i, rec, _), k) in items.iter().zip(&estimates) {
            summary.add(*i, &k.estimate.outcome, k.op);
            printer.write_row(&Row::new(*i, rec, k, args.compat))?;
        }
        if let Some(e) = error {
            printer.flush()?;
            return Err(e);
        }
        if let Some((line, e)) = read_error {
            printer.flush()?;
            return Err(
                anyhow::Error::new(e).context(format!("{name}:{line}: cannot read the line"))
            );
        }
        if !flushed {
            printer.flush()?;
            flushed = true;
        }
        chunk = (chunk * 2).min(MAX_CHUNK);
    }
    printer.flush()?;
    if !args.quiet {
        let mut err = io::stderr().lock();
        for m in summary.messages(mode) {
            let _ = writeln!(err, "rprof: {name}: {m}");
        }
    }
    Ok(())
}
