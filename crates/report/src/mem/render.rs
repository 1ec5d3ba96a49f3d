//! Output of `rprof mem`: a text report, CSV (one section at a time), JSON
//! (one document), and the curve as CSV.

use std::io::{self, Write};

use super::{CurvePoint, MemReport};
use crate::text;

/// Which table `--csv` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// One row per device.
    Devices,
    /// One row per op and device.
    Ops,
    /// One row per copy kind (and memset).
    Copies,
    /// One row per allocation alive at the end.
    Alive,
    /// One row per flagged (rule, op, API).
    Flags,
}

impl Section {
    /// Every section, in `--help` order.
    pub const ALL: [Section; 5] = [
        Section::Devices,
        Section::Ops,
        Section::Copies,
        Section::Alive,
        Section::Flags,
    ];

    /// The name users type.
    pub fn name(self) -> &'static str {
        match self {
            Section::Devices => "devices",
            Section::Ops => "ops",
            Section::Copies => "copies",
            Section::Alive => "alive",
            Section::Flags => "flags",
        }
    }

    /// The section with this name.
    pub fn from_name(s: &str) -> Option<Section> {
        Section::ALL.into_iter().find(|x| x.name() == s)
    }
}

/// Control characters of trace text, escaped for a terminal.
fn visible(s: &str) -> String {
    crate::escape::escape_control(s).into_owned()
}

fn opt_i(x: Option<i64>) -> String {
    x.map_or("na".to_owned(), |v| v.to_string())
}

fn csv_opt<T: ToString>(x: Option<T>) -> String {
    x.map_or(String::new(), |v| v.to_string())
}

/// Time relative to the first memory event (or the raw time when there
/// is none), in ms.
fn rel(r: &MemReport, ns: i64) -> String {
    match r.window_ns {
        Some([a, _]) => format!("+{} ms", text::ms(ns.saturating_sub(a))),
        None => format!("{ns} ns"),
    }
}

/// The report for people.
pub fn write_table<W: Write>(mut w: W, r: &MemReport, name_width: usize) -> io::Result<()> {
    writeln!(
        w,
        "{} ({}): {} memory events{}",
        visible(&r.file),
        r.source,
        r.events,
        if r.events_skipped > 0 {
            format!(
                " ({} skipped: missing or mistyped fields)",
                r.events_skipped
            )
        } else {
            String::new()
        }
    )?;
    if let Some([a, b]) = r.window_ns {
        writeln!(
            w,
            "Window: first to last memory event, {} ms ({a} to {b} ns on the file's clock); times below are from its start.",
            text::ms(b.saturating_sub(a))
        )?;
    }
    writeln!(w)?;
    writeln!(w, "## Allocations per device")?;
    writeln!(
        w,
        "Running sum = Σ bytes of the events in the window, from 0 before the first one (frees negative); peak and low are its highest and lowest values. Total Allocated / Reserved: the allocator's own figures, where the profiler recorded them."
    )?;
    let mut t = text::table(
        &[
            "Device",
            "Allocs",
            "Frees",
            "Allocated",
            "Freed",
            "Net",
            "Peak (window)",
            "At",
            "Op at peak",
            "Low (window)",
            "Peak Total Allocated",
            "Peak Total Reserved",
        ],
        &[1, 2, 3, 4, 5, 6, 9, 10, 11],
    );
    for d in &r.devices {
        t.add_row(vec![
            format!("{} {}", d.device_type, d.device),
            d.allocs.to_string(),
            d.frees.to_string(),
            d.alloc_bytes.to_string(),
            d.freed_bytes.to_string(),
            d.net_bytes.to_string(),
            d.peak_in_window_bytes.to_string(),
            rel(r, d.peak_in_window_ns),
            text::clip(
                &visible(d.peak_in_window_op.as_deref().unwrap_or(super::NO_OP)),
                name_width,
            ),
            d.min_in_window_bytes.to_string(),
            opt_i(d.peak_total_allocated_bytes),
            opt_i(d.peak_total_reserved_bytes),
        ]);
    }
    if r.devices.is_empty() {
        writeln!(w, "(no memory events)")?;
    } else {
        w.write_all(text::render(&t).as_bytes())?;
        for d in r.devices.iter().filter(|d| d.pool_events > 0) {
            writeln!(
                w,
                "{} {}: {} memory-pool events; peak of the pools' summed size {} bytes, of their used part {} bytes.",
                d.device_type,
                d.device,
                d.pool_events,
                opt_i(d.peak_pool_size_bytes),
                opt_i(d.peak_pool_utilized_bytes)
            )?;
        }
        if r.devices
            .iter()
            .any(|d| d.peak_total_allocated_bytes.is_none())
        {
            writeln!(
                w,
                "na: the profiler did not record Total Allocated / Total Reserved for that device (PyTorch before 1.10, nsys)."
            )?;
        }
    }

    writeln!(w)?;
    writeln!(w, "## Per op (bytes)")?;
    writeln!(
        w,
        "Self: events whose innermost enclosing op on their thread is this op. Incl.: events inside it at any depth. Increase = allocated - freed. Calls: instances of the op in the trace."
    )?;
    if r.ops.is_empty() {
        writeln!(w, "(no memory events)")?;
    } else {
        let mut t = text::table(
            &[
                "Op",
                "Device",
                "Calls",
                "Allocs",
                "Allocated",
                "Frees",
                "Freed",
                "Increase",
                "Incl. allocs",
                "Incl. allocated",
                "Incl. increase",
            ],
            &[2, 3, 4, 5, 6, 7, 8, 9, 10],
        );
        for o in &r.ops {
            t.add_row(vec![
                text::clip(&visible(&o.op), name_width),
                format!("{} {}", o.device_type, o.device),
                o.calls.to_string(),
                o.allocs.to_string(),
                o.alloc_bytes.to_string(),
                o.frees.to_string(),
                o.freed_bytes.to_string(),
                o.increase_bytes.to_string(),
                o.incl_allocs.to_string(),
                o.incl_alloc_bytes.to_string(),
                o.incl_increase_bytes.to_string(),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())?;
        if r.ops_hidden > 0 {
            writeln!(w, "... {} more rows; --top 0 shows all.", r.ops_hidden)?;
        }
    }

    writeln!(w)?;
    writeln!(w, "## Alive at the end of the window (leak candidates)")?;
    let a = &r.alive_total;
    writeln!(
        w,
        "{} allocations ({} bytes) never freed in the window; {} allocation events without an address, {} frees of memory allocated before the window, {} addresses allocated twice without a free.",
        a.count, a.bytes, a.without_addr, a.unmatched_frees, a.reused_addr
    )?;
    if !r.alive.is_empty() {
        let mut t = text::table(&["Device", "Address", "Bytes", "Allocated at", "Op"], &[2]);
        for x in &r.alive {
            t.add_row(vec![
                format!("{} {}", x.device_type, x.device),
                format!("0x{:x}", x.addr),
                x.bytes.to_string(),
                rel(r, x.ts_ns),
                text::clip(
                    &visible(x.op.as_deref().unwrap_or(super::NO_OP)),
                    name_width,
                ),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())?;
    }

    writeln!(w)?;
    writeln!(w, "## Copies and sets (GPU time)")?;
    if r.copies.is_empty() {
        writeln!(w, "(none)")?;
    } else {
        writeln!(
            w,
            "Mean GB/s = Σ bytes / Σ time of the operations with a known size and a positive time; max GB/s = the fastest single operation."
        )?;
        let mut t = text::table(
            &[
                "Kind",
                "Count",
                "Total (ns)",
                "Mean (ns)",
                "Median (ns)",
                "Min (ns)",
                "Max (ns)",
                "Bytes",
                "Mean bytes",
                "Mean GB/s",
                "Max GB/s",
            ],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        );
        for c in &r.copies {
            t.add_row(vec![
                c.kind.clone(),
                c.count.to_string(),
                c.total_ns.to_string(),
                format!("{:.0}", c.mean_ns),
                format!("{:.0}", c.median_ns),
                c.min_ns.to_string(),
                c.max_ns.to_string(),
                c.bytes.to_string(),
                text::opt(c.mean_bytes, 0),
                text::opt(c.mean_gbps, 3),
                text::opt(c.max_gbps, 3),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())?;
    }

    writeln!(w)?;
    writeln!(w, "## Copies and sets that make the host wait")?;
    for f in &r.flags {
        writeln!(
            w,
            "{}: {} operations, {} ns ({}){}",
            f.rule,
            f.count,
            f.total_ns,
            f.description,
            if f.unknown_api > 0 {
                format!(
                    "; {} operations without a launching call cannot be judged",
                    f.unknown_api
                )
            } else {
                String::new()
            }
        )?;
        for i in &f.issuers {
            writeln!(
                w,
                "  {} x {} ({} ns) in {}",
                i.count,
                visible(&i.api),
                i.total_ns,
                text::clip(&visible(&i.op), name_width)
            )?;
        }
    }
    if !r.notes.is_empty() {
        writeln!(w)?;
        for n in &r.notes {
            writeln!(w, "note: {}", visible(n))?;
        }
    }
    Ok(())
}

/// One section as CSV (a header, then one line per row; unknown values are
/// empty fields).
pub fn write_csv<W: Write>(w: W, r: &MemReport, section: Section) -> io::Result<()> {
    let mut c = csv::Writer::from_writer(w);
    match section {
        Section::Devices => {
            c.write_record([
                "device_type",
                "device",
                "allocs",
                "frees",
                "alloc_bytes",
                "freed_bytes",
                "net_bytes",
                "peak_in_window_bytes",
                "peak_in_window_ns",
                "peak_in_window_op",
                "min_in_window_bytes",
                "min_in_window_ns",
                "peak_total_allocated_bytes",
                "peak_total_allocated_ns",
                "peak_total_allocated_op",
                "peak_total_reserved_bytes",
                "peak_total_reserved_ns",
                "pool_events",
                "peak_pool_size_bytes",
                "peak_pool_utilized_bytes",
            ])?;
            for d in &r.devices {
                c.write_record([
                    d.device_type.clone(),
                    d.device.to_string(),
                    d.allocs.to_string(),
                    d.frees.to_string(),
                    d.alloc_bytes.to_string(),
                    d.freed_bytes.to_string(),
                    d.net_bytes.to_string(),
                    d.peak_in_window_bytes.to_string(),
                    d.peak_in_window_ns.to_string(),
                    d.peak_in_window_op.clone().unwrap_or_default(),
                    d.min_in_window_bytes.to_string(),
                    d.min_in_window_ns.to_string(),
                    csv_opt(d.peak_total_allocated_bytes),
                    csv_opt(d.peak_total_allocated_ns),
                    d.peak_total_allocated_op.clone().unwrap_or_default(),
                    csv_opt(d.peak_total_reserved_bytes),
                    csv_opt(d.peak_total_reserved_ns),
                    d.pool_events.to_string(),
                    csv_opt(d.peak_pool_size_bytes),
                    csv_opt(d.peak_pool_utilized_bytes),
                ])?;
            }
        }
        Section::Ops => {
            c.write_record([
                "op",
                "device_type",
                "device",
                "calls",
                "allocs",
                "alloc_bytes",
                "frees",
                "freed_bytes",
                "increase_bytes",
                "incl_allocs",
                "incl_alloc_bytes",
                "incl_increase_bytes",
            ])?;
            for o in &r.ops {
                c.write_record([
                    o.op.clone(),
                    o.device_type.clone(),
                    o.device.to_string(),
                    o.calls.to_string(),
                    o.allocs.to_string(),
                    o.alloc_bytes.to_string(),
                    o.frees.to_string(),
                    o.freed_bytes.to_string(),
                    o.increase_bytes.to_string(),
                    o.incl_allocs.to_string(),
                    o.incl_alloc_bytes.to_string(),
                    o.incl_increase_bytes.to_string(),
                ])?;
            }
        }
        Section::Copies => {
            c.write_record([
                "kind",
                "count",
                "total_ns",
                "mean_ns",
                "median_ns",
                "min_ns",
                "max_ns",
                "bytes",
                "bytes_unknown",
                "mean_bytes",
                "mean_gbps",
                "max_gbps",
            ])?;
            for x in &r.copies {
                c.write_record([
                    x.kind.clone(),
                    x.count.to_string(),
                    x.total_ns.to_string(),
                    x.mean_ns.to_string(),
                    x.median_ns.to_string(),
                    x.min_ns.to_string(),
                    x.max_ns.to_string(),
                    x.bytes.to_string(),
                    x.bytes_unknown.to_string(),
                    csv_opt(x.mean_bytes),
                    csv_opt(x.mean_gbps),
                    csv_opt(x.max_gbps),
                ])?;
            }
        }
        Section::Alive => {
            c.write_record(["device_type", "device", "addr", "bytes", "ts_ns", "op"])?;
            for x in &r.alive {
                c.write_record([
                    x.device_type.clone(),
                    x.device.to_string(),
                    x.addr.to_string(),
                    x.bytes.to_string(),
                    x.ts_ns.to_string(),
                    x.op.clone().unwrap_or_default(),
                ])?;
            }
        }
        Section::Flags => {
            c.write_record(["rule", "op", "api", "count", "total_ns"])?;
            for f in &r.flags {
                for i in &f.issuers {
                    c.write_record([
                        f.rule.to_owned(),
                        i.op.clone(),
                        i.api.clone(),
                        i.count.to_string(),
                        i.total_ns.to_string(),
                    ])?;
                }
            }
        }
    }
    c.flush()
}

/// The whole report as one JSON document (and a newline).
pub fn write_json<W: Write>(mut w: W, r: &MemReport) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut w, r).map_err(io::Error::other)?;
    w.write_all(b"\n")
}

/// The curve as CSV: one line per device and bucket.
pub fn write_curve<W: Write>(w: W, points: &[CurvePoint]) -> io::Result<()> {
    let mut c = csv::Writer::from_writer(w);
    c.write_record([
        "device_type",
        "device",
        "start_ns",
        "end_ns",
        "allocated_bytes",
        "max_allocated_bytes",
        "total_allocated_bytes",
        "total_reserved_bytes",
    ])?;
    for p in points {
        c.write_record([
            p.device_type.clone(),
            p.device.to_string(),
            p.start_ns.to_string(),
            p.end_ns.to_string(),
            p.allocated_bytes.to_string(),
            p.max_allocated_bytes.to_string(),
            csv_opt(p.total_allocated_bytes),
            csv_opt(p.total_reserved_bytes),
        ])?;
    }
    c.flush()
}
