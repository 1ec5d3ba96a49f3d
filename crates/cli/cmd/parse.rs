//! `rprof parse`: profile → one record per kernel.

use std::io::{IsTerminal, Write};

use anyhow::bail;
use rayon::prelude::*;
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::read::{self, ReadOptions};
use rprof_trace::record::{DICT_VERSION, Header};
use rprof_trace::{attribute, record::Record};

use crate::args::{Format, ParseArgs};
use crate::{input, out};

pub fn run(args: &ParseArgs) -> anyhow::Result<()> {
    let given = &args.file;
    let already = || {
        anyhow::anyhow!(
            "{}: this is already a records file (rprof parse output or PyProf's .dict); give it to rprof prof, summary or gpu",
            given.display()
        )
    };
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
    let t0 = std::time::Instant::now();
    let enclosing = attribute::attribute(&trace.launches, &mut trace.ranges);
    if std::env::var_os("RPROF_TIMING").is_some() {
        let mut used = vec![false; trace.ranges.len()];
        for l in 0..trace.launches.len() as u32 {
            for r in enclosing.of(l) {
                used[r as usize] = true;
            }
        }
        let _ = writeln!(
            std::io::stderr(),
            "timing: attribute: {:.3}s; ranges enclosing a launch: {} of {}",
            t0.elapsed().as_secs_f64(),
            used.iter().filter(|u| **u).count(),
            used.len()
        );
    }
    let mut w = out::create(args.output.as_deref(), &[given, path])?;
    if args.format == Format::Json {
        let header = Header {
            rprof: "dict".into(),
            version: DICT_VERSION,
            source: trace.source.as_str().into(),
            producer: trace.producer.clone(),
            compat: args.compat,
            devices: trace.devices.clone(),
        };
        serde_json::to_writer(&mut w, &header)?;
        w.write_all(b"\n")?;
    }
    let progress = (!args.quiet && std::io::stderr().is_terminal() && trace.kernels.len() > 50_000)
        .then(|| indicatif::ProgressBar::new(trace.kernels.len() as u64));
    let format = args.format;
    let mut write_error: Option<std::io::Error> = None;
    let built = build::build(
        &trace,
        &enclosing,
        BuildOptions {
            compat: args.compat,
        },
        |records| {
            // a few hundred records at a time: the bytes held before they
            // are written stay bounded however long the records are
            for part in records.chunks(256).flat_map(|sub| serialize(sub, format)) {
                w.write_all(&part).map_err(|e| {
                    write_error = Some(e);
                    rprof_trace::Error::Record {
                        source_name: String::new(),
                        line: 0,
                        detail: "stopped".into(),
                    }
                })?;
            }
            if let Some(p) = &progress {
                p.inc(records.len() as u64);
            }
            Ok(())
        },
    );
    if let Some(p) = &progress {
        p.finish_and_clear();
    }
    if let Some(e) = write_error {
        return Err(e.into());
    }
    let built = built?;
    w.finish()?;
    if !args.quiet {
        let mut e = std::io::stderr().lock();
        let _ = writeln!(
            e,
            "rprof: {}: {} kernel rows, {} records written, {} kernels without a launch call, {} without {}",
            given.display(),
            stats.kernel_rows,
            built.records,
            stats.without_launch,
            built.without_nvtx,
            if trace.source == rprof_trace::model::Source::Kineto {
                "an enclosing CPU operator"
            } else {
                "an NVTX range"
            },
        );
        if stats.skipped_null > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: skipped {} kernel rows with {}",
                given.display(),
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
                given.display(),
                stats.non_positive_duration
            );
        }
        if stats.ranges_skipped > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: skipped {} NVTX rows without start, thread or text",
                given.display(),
                stats.ranges_skipped
            );
        }
        if built.undecodable_markers > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: {} PyProf markers could not be read (kept as other markers)",
                given.display(),
                built.undecodable_markers
            );
        }
        if built.undemangled_names > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: {} kernel names look mangled but do not demangle (kept raw)",
                given.display(),
                built.undemangled_names
            );
        }
        if stats.kernel_rows == 0 {
            let _ = writeln!(
                e,
                "rprof: {}: note: no GPU kernels in this profile ({} NVTX rows): was CUDA traced?",
                given.display(),
                stats.nvtx_rows
            );
        }
        for note in &trace.notes {
            // notes may quote the file (table or column names): escaped
            let _ = writeln!(
                e,
                "rprof: {}: note: {}",
                rprof_report::escape::escape_control(&given.display().to_string()),
                rprof_report::escape::escape_control(note)
            );
        }
    }
    Ok(())
}

/// Serialize a chunk in parallel, in parts to be written in order: the
/// bytes are the same for any number of threads.
fn serialize(records: &[Record<'_>], format: Format) -> Vec<Vec<u8>> {
    records
        .par_chunks(16)
        .map(|part| {
            let mut buf = Vec::with_capacity(part.len() * 1024);
            let mut s = String::new();
            for r in part {
                match format {
                    Format::Json => r.write_json(&mut buf),
                    Format::Pydict => {
                        s.clear();
                        r.write_pydict(&mut s);
                        buf.extend_from_slice(s.as_bytes());
                    }
                }
            }
            buf
        })
        .collect()
}
