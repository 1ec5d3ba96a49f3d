//! `rprof parse`: profile → one record per kernel.

use std::io::{IsTerminal, Write};

use anyhow::{Context, bail};
use rayon::prelude::*;
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::read::{self, ReadOptions};
use rprof_trace::record::{DICT_VERSION, Header};
use rprof_trace::{attribute, record::Record};

use crate::args::{Format, ParseArgs};
use crate::out;

pub fn run(args: &ParseArgs) -> anyhow::Result<()> {
    let path = &args.file;
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
            path.display(),
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
            for &r in enclosing.of(l) {
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
    let mut w = out::writer(args.output.as_deref())?;
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
    let built = build::build(
        &trace,
        &enclosing,
        BuildOptions {
            compat: args.compat,
        },
        |records| {
            for part in serialize(records, format) {
                w.write_all(&part).map_err(|e| rprof_trace::Error::Io {
                    path: args.output.clone().unwrap_or_else(|| "<stdout>".into()),
                    source: e,
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
    let built = built?;
    w.flush().context("writing records")?;
    if !args.quiet {
        let mut e = std::io::stderr().lock();
        let _ = writeln!(e, "{}", built.summary_line(&trace));
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
        if built.undecodable_markers > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: {} PyProf markers could not be read (kept as other markers)",
                path.display(),
                built.undecodable_markers
            );
        }
        if built.undemangled_names > 0 {
            let _ = writeln!(
                e,
                "rprof: {}: {} kernel names look mangled but do not demangle (kept raw)",
                path.display(),
                built.undemangled_names
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
    Ok(())
}

/// Serialize a chunk in parallel, in parts to be written in order: the
/// bytes are the same for any number of threads.
fn serialize(records: &[Record<'_>], format: Format) -> Vec<Vec<u8>> {
    records
        .par_chunks(1024)
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
