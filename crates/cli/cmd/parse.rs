//! `rprof parse`: profile → one record per kernel.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, bail};
use rayon::prelude::*;
use rprof_trace::attribute;
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::model::{DICT_MINOR, DICT_VERSION, Header};
use rprof_trace::read::{self, ReadOptions};

use crate::args::{Format, ParseArgs};
use crate::progress::{self, Phase};
use crate::{input, out};

pub fn run(args: &ParseArgs) -> anyhow::Result<()> {
    let given = &args.file;
    let already = || {
        anyhow::anyhow!(
            "{}: this is already a records file (rprof parse output or PyProf's .dict); give it to rprof prof, summary or gpu",
            given.display()
        )
    };
    // a pipe or FIFO is read once: spooled to a file when it is a profile
    let path = &match input::spool::open(given)? {
        input::spool::Opened::File(p) => p,
        input::spool::Opened::Stream(mut r) => {
            let mut head = Vec::new();
            let _ =
                std::io::Read::read_to_end(&mut std::io::Read::take(&mut r, 1 << 16), &mut head);
            if input::looks_like_records(&head) {
                return Err(already());
            }
            bail!(rprof_trace::Error::NotADatabase {
                path: given.clone()
            });
        }
    };
    if read::sniff(path)? == read::FileKind::Json && input::starts_with_record(path)? {
        return Err(already());
    }
    let to_file = args.output.as_deref().filter(|p| *p != Path::new("-"));
    let on = progress::enabled(args.quiet, to_file.is_none());
    let reading = Phase::spinner(on, &format!("reading {}", path.display()));
    let mut trace = read::read(
        path,
        ReadOptions {
            compat: args.compat,
            ..ReadOptions::default()
        },
    )?;
    let stats = &trace.stats;
    if args.strict && (stats.skipped_null > 0 || stats.non_positive_duration > 0) {
        bail!(
            "{}: {} kernel rows with NULL start/end, {} with end <= start (--strict)",
            given.display(),
            stats.skipped_null,
            stats.non_positive_duration
        );
    }
    if stats.kernel_rows == 0 && stats.nvtx_rows == 0 {
        bail!(rprof_trace::Error::Empty {
            path: path.clone(),
            detail: "no GPU kernels and no NVTX ranges".into(),
        });
    }
    drop(reading);
    let attributing = Phase::spinner(on, "attributing kernels to NVTX ranges");
    let t0 = std::time::Instant::now();
    // the records name only ranges that enclose a launch call: the others
    // are dropped before the attribution
    let (enclosing, unused) = attribute::attribute_used(&trace.launches, &mut trace.ranges);
    drop(attributing);
    if std::env::var_os("RPROF_TIMING").is_some() {
        let _ = writeln!(
            std::io::stderr(),
            "timing: attribute: {:.3}s; ranges enclosing a launch: {} of {}",
            t0.elapsed().as_secs_f64(),
            trace.ranges.len(),
            trace.ranges.len() as u64 + unused
        );
    }
    let header = Header {
        rprof: "dict".into(),
        version: DICT_VERSION,
        minor: DICT_MINOR,
        source: trace.source.as_str().into(),
        producer: trace.producer.clone(),
        compat: args.compat,
        devices: trace.devices.clone(),
    };
    if args.format == Format::Parquet {
        return parquet(args, &trace, &enclosing, &header, (given, path), on);
    }
    let mut w = out::create(args.output.as_deref(), &[given, path])?;
    let progress = Phase::bar(on, trace.kernels.len() as u64, "writing records", false);
    let format = args.format;
    let row_bytes = AtomicUsize::new(ROW_BYTES_MIN);
    // the next chunk of the table is built on a second thread while this
    // one writes the chunk before; JSON lines are written straight from
    // the table, without making records
    let built = build::build_tables_overlapped(
        &trace,
        &enclosing,
        BuildOptions {
            compat: args.compat,
            stack: args.stack.form(args.stack_bytes),
            // records written are read back from their text
            typed_stock: false,
        },
        |table| {
            // a thousand records at a time, in parallel parts: the bytes
            // held before they are written stay bounded however long the
            // records are (at most 1024 × --stack-bytes of stacks)
            for start in (0..table.len()).step_by(1024) {
                let rows = start..(start + 1024).min(table.len());
                for part in serialize(table, rows, format, &row_bytes) {
                    w.write_all(&part)?;
                }
            }
            progress.inc(table.len() as u64);
            anyhow::Ok(())
        },
    );
    drop(progress);
    let built = built?;
    w.finish()?;
    if let (Some(p), Format::Json) = (to_file, args.format) {
        write_sidecar(p, &header)?;
    }
    report(args, &trace, &built);
    Ok(())
}

/// What the profile says about itself, next to the records: FILE.meta.json,
/// written whole to a temporary file and renamed.
fn write_sidecar(records: &Path, header: &Header) -> anyhow::Result<()> {
    let side = rprof_trace::model::sidecar_path(records);
    let mut tmp = side.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut text = serde_json::to_vec_pretty(header)?;
    text.push(b'\n');
    std::fs::write(&tmp, &text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &side).with_context(|| format!("cannot write {}", side.display()))?;
    Ok(())
}

/// `--format parquet`: the records as a Parquet file, one row group per
/// chunk of the builder.
fn parquet(
    args: &ParseArgs,
    trace: &rprof_trace::model::Trace,
    enclosing: &attribute::Enclosing,
    header: &Header,
    inputs: (&Path, &Path),
    on: bool,
) -> anyhow::Result<()> {
    use rprof_report::ParquetTable;
    let to_file = args.output.as_deref().filter(|p| *p != Path::new("-"));
    if to_file.is_none() && std::io::stdout().is_terminal() {
        return Err(out::UsageError(
            "--format parquet writes binary data: give -o FILE or redirect standard output".into(),
        )
        .into());
    }
    // written to a temporary file and renamed when complete (out::create)
    let out = out::create(args.output.as_deref(), &[inputs.0, inputs.1])?;
    let out_name = out.name().to_owned();
    let meta = [
        ("rprof", serde_json::to_string(header)?),
        ("rprof.source_file", args.file.display().to_string()),
    ];
    let mut table = ParquetTable::new(out, rprof_report::records::COLUMNS, &meta)
        .with_context(|| format!("writing {out_name}"))?;
    let progress = Phase::bar(
        on,
        trace.kernels.len() as u64,
        "writing Parquet records",
        false,
    );
    // a pipeline: one thread builds a chunk's records, a second makes
    // their columns, and this one encodes and writes the chunk before
    // (one thread did all three in turn: 2.4 times `parse`'s time with
    // JSON Lines on the 1 M-kernel profile)
    let built = build::build_overlapped(
        trace,
        enclosing,
        BuildOptions {
            compat: args.compat,
            stack: args.stack.form(args.stack_bytes),
            // records written are read back from their text
            typed_stock: false,
        },
        rprof_report::records::columns,
        |records, columns| {
            table
                .write_arrays(columns)
                .with_context(|| format!("writing {out_name}"))?;
            progress.inc(records.len() as u64);
            anyhow::Ok(())
        },
    );
    drop(progress);
    let built = built?;
    let out = table
        .finish()
        .with_context(|| format!("writing {out_name}"))?;
    out.finish()?;
    report(args, trace, &built);
    Ok(())
}

/// The parse summary on stderr (the wording every command uses).
fn report(args: &ParseArgs, trace: &rprof_trace::model::Trace, built: &build::BuildStats) {
    if !args.quiet {
        crate::input::parse_summary(trace, built);
    }
}

/// The least room per row a part's buffer starts with ([`serialize`]).
const ROW_BYTES_MIN: usize = 1024;
/// The most room per row a part's buffer starts with: a few records of
/// a huge stack do not make every later part reserve as much.
const ROW_BYTES_MAX: usize = 16 << 10;

/// Serialize rows `rows` of a chunk in parallel, in parts to be written in
/// order: the bytes are the same for any number of threads. Each part's
/// buffer starts with room for its rows at `row_bytes` each, a little
/// more than a recent part's rows took (within [`ROW_BYTES_MIN`] and
/// [`ROW_BYTES_MAX`]): a fixed 1 KB a row made every part of the 1 M-kernel
/// benchmark (1.3 KB a record) grow once, copying its first 128 KB, about 2 % of
/// `parse`'s instructions (callgrind).
fn serialize(
    table: &build::Table<'_>,
    rows: std::ops::Range<usize>,
    format: Format,
    row_bytes: &AtomicUsize,
) -> Vec<Vec<u8>> {
    let starts: Vec<usize> = rows.clone().step_by(128).collect();
    starts
        .par_iter()
        .map(|&start| {
            let part = start..(start + 128).min(rows.end);
            let (n, room) = (part.len(), row_bytes.load(Ordering::Relaxed));
            let mut buf = Vec::with_capacity(n * room);
            match format {
                Format::Json => table.write_json(part, &mut buf),
                Format::Parquet => {}
                Format::Pydict => {
                    let mut s = String::new();
                    for r in part.filter_map(|i| table.record(i)) {
                        s.clear();
                        r.write_pydict(&mut s);
                        buf.extend_from_slice(s.as_bytes());
                    }
                }
            }
            // (a capacity only: the bytes do not depend on it)
            let took = buf.len() / n.max(1);
            row_bytes.store(
                (took + took / 8).clamp(ROW_BYTES_MIN, ROW_BYTES_MAX),
                Ordering::Relaxed,
            );
            buf
        })
        .collect()
}
