//! The job-level views (`mem`, `dist`, `steps`, `idle`) as sections of the
//! page: each takes the view's own data, computed by its module, and only
//! chooses charts and tables for it.

use super::{Bar, Chart, Recommendation, Section, Series, Table};
use crate::dist::DistReport;
use crate::mem::{CurvePoint, MemReport};

fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn mib(b: i64) -> String {
    format!("{:.1}", b as f64 / (1u64 << 20) as f64)
}

fn pct(part: i64, whole: i64) -> String {
    if whole <= 0 {
        "na".into()
    } else {
        format!("{:.1}", 100.0 * part as f64 / whole as f64)
    }
}

/// The memory section: the curve per device, the device table, copies by
/// kind; recommendations from the copy rules.
pub fn mem_section(r: &MemReport, curve: &[CurvePoint]) -> (Section, Vec<Recommendation>) {
    let mut charts = Vec::new();
    let mut tables = Vec::new();
    let mut text = vec![
        "Allocated = running sum of allocations minus frees from the first memory event in the window (it starts at 0, so it can go negative when memory allocated before the window is freed); see docs/reports.md, mem.".to_owned(),
    ];
    text.extend(r.notes.iter().cloned());
    // one line per device; x in ms from the first bucket of any device
    let t0 = curve.iter().map(|c| c.start_ns).min().unwrap_or(0);
    let mut series: Vec<Series> = Vec::new();
    for c in curve {
        let name = format!("{} {}", c.device_type, c.device);
        let i = match series.iter().position(|s| s.name == name) {
            Some(i) => i,
            None => {
                series.push(Series {
                    name,
                    points: Vec::new(),
                });
                series.len() - 1
            }
        };
        series[i].points.push((
            (c.end_ns - t0) as f64 / 1e6,
            c.max_allocated_bytes as f64 / (1u64 << 20) as f64,
        ));
    }
    if !series.is_empty() {
        charts.push(Chart::Lines {
            id: "memory-curve".into(),
            title: "Memory allocated over time (highest running sum per bucket)".into(),
            x_label: "time since the first memory event (ms)".into(),
            y_label: "allocated (MiB)".into(),
            y_max: None,
            series,
        });
    }
    if !r.devices.is_empty() {
        tables.push(Table {
            caption: "Allocations per device".into(),
            headers: vec![
                "Device".into(),
                "Allocs".into(),
                "Frees".into(),
                "Allocated (MiB)".into(),
                "Freed (MiB)".into(),
                "Net (MiB)".into(),
                "Peak in window (MiB)".into(),
                "Op at the peak".into(),
                "Peak Total Allocated (MiB)".into(),
                "Peak Total Reserved (MiB)".into(),
            ],
            numeric: vec![false, true, true, true, true, true, true, false, true, true],
            rows: r
                .devices
                .iter()
                .map(|d| {
                    vec![
                        format!("{} {}", d.device_type, d.device),
                        d.allocs.to_string(),
                        d.frees.to_string(),
                        mib(d.alloc_bytes),
                        mib(d.freed_bytes),
                        mib(d.net_bytes),
                        mib(d.peak_in_window_bytes),
                        d.peak_in_window_op.clone().unwrap_or_default(),
                        d.peak_total_allocated_bytes.map(mib).unwrap_or_default(),
                        d.peak_total_reserved_bytes.map(mib).unwrap_or_default(),
                    ]
                })
                .collect(),
        });
    }
    if !r.copies.is_empty() {
        charts.push(Chart::Bars {
            id: "copies".into(),
            title: "Copy and set time by kind".into(),
            x_label: "GPU time (ms)".into(),
            bars: r
                .copies
                .iter()
                .map(|c| Bar {
                    label: c.kind.clone(),
                    value: c.total_ns as f64 / 1e6,
                    note: match c.mean_gbps {
                        Some(g) => format!("{} ops, mean {g:.1} GB/s", c.count),
                        None => format!("{} ops", c.count),
                    },
                })
                .collect(),
        });
        tables.push(Table {
            caption: "Copies and sets by kind".into(),
            headers: vec![
                "Kind".into(),
                "Count".into(),
                "Total (ms)".into(),
                "Median (ns)".into(),
                "Bytes".into(),
                "Mean GB/s".into(),
                "Max GB/s".into(),
            ],
            numeric: vec![false, true, true, true, true, true, true],
            rows: r
                .copies
                .iter()
                .map(|c| {
                    vec![
                        c.kind.clone(),
                        c.count.to_string(),
                        ms(c.total_ns),
                        format!("{:.0}", c.median_ns),
                        c.bytes.to_string(),
                        c.mean_gbps.map(|g| format!("{g:.1}")).unwrap_or_default(),
                        c.max_gbps.map(|g| format!("{g:.1}")).unwrap_or_default(),
                    ]
                })
                .collect(),
        });
    }
    let recs = r
        .flags
        .iter()
        .filter(|f| f.count > 0)
        .map(|f| Recommendation {
            title: format!("{}.", f.description),
            advice: match f.rule {
                "async_pageable" => "Pageable host memory makes async copies synchronous: pin the buffers (DataLoader(pin_memory=True), tensor.pin_memory()).".into(),
                "sync_memcpy" => "Synchronous copies block the host: use non_blocking=True copies from pinned memory.".into(),
                _ => "Synchronous sets block the host: use the async variant on a stream.".into(),
            },
            figure: format!(
                "{} operations, {} ms of GPU time{}",
                f.count,
                ms(f.total_ns),
                f.issuers
                    .first()
                    .map(|i| format!("; most issued by {} via {}", i.op, i.api))
                    .unwrap_or_default()
            ),
            section: "memory".into(),
            rule_of: format!("nsys analyze ({})", f.rule),
        })
        .collect();
    (
        Section {
            id: "memory".into(),
            title: "Memory and copies".into(),
            text,
            charts,
            tables,
        },
        recs,
    )
}

/// The distributed section: per-rank stacked bars and table, collectives,
/// step spread; recommendations for stragglers and exposed communication.
pub fn dist_section(r: &DistReport) -> (Section, Vec<Recommendation>) {
    let cats: Vec<String> = r.ranks.iter().map(|k| format!("rank {}", k.rank)).collect();
    let part = |f: &dyn Fn(&crate::dist::job::RankRow) -> i64| -> Vec<f64> {
        r.ranks.iter().map(|k| f(k) as f64 / 1e6).collect()
    };
    let mut charts = vec![
        Chart::Stacked {
            id: "ranks".into(),
            title: "Per rank: computation, communication, overlap, idle".into(),
            y_label: "time (ms)".into(),
            categories: cats.clone(),
            series: vec![
                (
                    "computation only".into(),
                    part(&|k| k.all.compute_ns - k.all.overlap_ns),
                ),
                (
                    "communication only".into(),
                    part(&|k| k.all.comm_ns - k.all.overlap_ns),
                ),
                ("overlap".into(), part(&|k| k.all.overlap_ns)),
                ("idle".into(), part(&|k| k.all.idle_ns())),
            ],
        },
        Chart::Stacked {
            id: "collective-waits".into(),
            title: "Per rank: collective transfer and wait".into(),
            y_label: "time (ms)".into(),
            categories: cats,
            series: vec![
                (
                    "transfer".into(),
                    part(&|k| k.comm_transfer_ns.unwrap_or(0)),
                ),
                ("wait".into(), part(&|k| k.comm_wait_ns.unwrap_or(0))),
            ],
        },
    ];
    // a chart of zeros says nothing (and plotted as one, its axis repeats
    // "0.0"): it is left out, and the text says why
    let no_waits = r
        .ranks
        .iter()
        .all(|k| k.comm_transfer_ns.unwrap_or(0) == 0 && k.comm_wait_ns.unwrap_or(0) == 0);
    if no_waits {
        charts.retain(|c| c.id() != "collective-waits");
    }
    let mut tables = vec![Table {
        caption: "Per rank (% of the rank's span)".into(),
        headers: [
            "Rank",
            "File",
            "Kernels",
            "Span (ms)",
            "Busy %",
            "Compute %",
            "Comm %",
            "Overlap %",
            "Idle %",
            "Transfer (ms)",
            "Wait (ms)",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![
            true, false, true, true, true, true, true, true, true, true, true,
        ],
        rows: r
            .ranks
            .iter()
            .map(|k| {
                let span = k.all.span_ns();
                vec![
                    k.rank.to_string(),
                    k.file.display().to_string(),
                    k.all.kernels.to_string(),
                    ms(span),
                    pct(k.all.busy_ns, span),
                    pct(k.all.compute_ns, span),
                    pct(k.all.comm_ns, span),
                    pct(k.all.overlap_ns, span),
                    pct(k.all.idle_ns(), span),
                    k.comm_transfer_ns.map(ms).unwrap_or_else(|| "na".into()),
                    k.comm_wait_ns.map(ms).unwrap_or_else(|| "na".into()),
                ]
            })
            .collect(),
    }];
    if !r.collectives.is_empty() {
        tables.push(Table {
            caption: "Collectives".into(),
            headers: [
                "Op",
                "Bytes/call",
                "Calls",
                "Ranks",
                "Total (ms)",
                "Mean (ms)",
                "algbw (GB/s)",
                "busbw (GB/s)",
            ]
            .map(String::from)
            .to_vec(),
            numeric: vec![false, true, true, true, true, true, true, true],
            rows: r
                .collectives
                .iter()
                .map(|c| {
                    vec![
                        c.op.as_str().to_owned(),
                        c.bytes.map_or("na".into(), |b| b.to_string()),
                        c.calls.to_string(),
                        c.ranks.to_string(),
                        ms(c.total_ns),
                        format!("{:.3}", c.mean_ns / 1e6),
                        c.algbw_gbps.map_or("na".into(), |g| format!("{g:.2}")),
                        c.busbw_gbps.map_or("na".into(), |g| format!("{g:.2}")),
                    ]
                })
                .collect(),
        });
    }
    let mut recs = Vec::new();
    for &s in &r.stragglers.stragglers {
        recs.push(Recommendation {
            title: format!("Rank {s} is a straggler."),
            advice: "It arrives last at most collectives: look at its input pipeline, its GPU's clocks and its share of the work.".into(),
            figure: match r.stragglers.most_last {
                Some((rank, times, late)) if rank == s => format!(
                    "last at {times} of {} matched collectives, {} ms late in all",
                    r.stragglers.matched,
                    ms(late)
                ),
                _ => format!("last at most of {} matched collectives", r.stragglers.matched),
            },
            section: "distributed".into(),
            rule_of: "rprof".into(),
        });
    }
    for k in &r.ranks {
        let span = k.all.span_ns();
        let exposed = k.all.comm_ns - k.all.overlap_ns;
        if span > 0 && exposed * 5 > span {
            recs.push(Recommendation {
                title: format!("Rank {}: communication is exposed.", k.rank),
                advice: "More than 20 % of the span is communication not overlapped with compute: overlap it (bucketed gradients, FSDP prefetch) or reduce it.".into(),
                figure: format!(
                    "communication not overlapped {} % of the span",
                    pct(exposed, span)
                ),
                section: "distributed".into(),
                rule_of: "TensorBoard plugin (communication share)".into(),
            });
        }
    }
    let mut text = vec![format!(
        "{} ranks from {} file{}. Computation only = compute − overlap; communication only = communication − overlap (the TensorBoard plugin's four numbers, which add up to the span with idle). Transfer = the shortest duration of each matched collective; wait = own duration − transfer. See docs/reports.md, dist.",
        r.ranks.len(),
        r.files.len(),
        if r.files.len() == 1 { "" } else { "s" }
    )];
    if no_waits {
        text.push(
            "No collective was matched across ranks: no transfer or wait to chart.".to_owned(),
        );
    }
    if let Some(m) = &r.clock.method {
        text.push(format!("Clocks: {m}."));
    }
    if let Some(reason) = &r.clock.reason {
        text.push(format!("Clocks: {reason}."));
    }
    text.extend(r.notes.iter().cloned());
    (
        Section {
            id: "distributed".into(),
            title: "Distributed job".into(),
            text,
            charts,
            tables,
        },
        recs,
    )
}

/// The page of a job of several files: an overview of the files and ranks,
/// then the distributed section.
pub fn job_page(r: &DistReport, command: &str) -> super::Page {
    let (section, recs) = dist_section(r);
    let mut overview = vec![
        ("Files".to_owned(), r.files.len().to_string()),
        ("Ranks".to_owned(), r.ranks.len().to_string()),
        (
            "Kernels".to_owned(),
            r.ranks
                .iter()
                .map(|k| k.all.kernels)
                .sum::<u64>()
                .to_string(),
        ),
    ];
    for f in &r.files {
        overview.push(("Input".to_owned(), f.display().to_string()));
    }
    let cannot_answer = r
        .ranks
        .iter()
        .filter_map(|k| k.note.as_ref().map(|n| format!("rank {}: {n}", k.rank)))
        .collect();
    super::Page {
        title: format!("rprof report: job of {} ranks", r.ranks.len()),
        overview,
        cannot_answer,
        recommendations: recs,
        sections: vec![section],
        footer: format!("Made by {command} (rprof {}).", env!("CARGO_PKG_VERSION")),
    }
}

/// The step section: the TensorBoard plugin's breakdown per step as stacked
/// bars, and the step table; a recommendation when data loading takes a
/// large share of the step.
pub fn steps_section(r: &crate::steps::StepsReport) -> Option<(Section, Vec<Recommendation>)> {
    if r.steps.is_empty() {
        return None;
    }
    let cats: Vec<String> = r.steps.iter().map(|s| s.name.clone()).collect();
    type Get = fn(&crate::steps::Step) -> i64;
    let parts: [(&str, Get); 8] = [
        ("Kernel", |s| s.kernel_ns),
        ("Memcpy", |s| s.memcpy_ns),
        ("Memset", |s| s.memset_ns),
        ("Communication", |s| s.communication_ns),
        ("Runtime", |s| s.runtime_ns),
        ("DataLoader", |s| s.dataloader_ns),
        ("CPU exec", |s| s.cpu_exec_ns),
        ("Other", |s| s.other_ns),
    ];
    let series = parts
        .iter()
        .map(|(name, f)| {
            (
                (*name).to_owned(),
                r.steps.iter().map(|s| f(s) as f64 / 1e6).collect(),
            )
        })
        .collect();
    let mut header = vec!["Step".to_owned(), "Total (ms)".to_owned()];
    header.extend(parts.iter().map(|(n, _)| format!("{n} (ms)")));
    header.push("GPU util (% of step)".into());
    let rows = r
        .steps
        .iter()
        .map(|s| {
            let mut row = vec![s.name.clone(), ms(s.total_ns)];
            row.extend(parts.iter().map(|(_, f)| ms(f(s))));
            row.push(
                s.gpu_util
                    .map_or("na".into(), |u| format!("{:.1}", 100.0 * u)),
            );
            row
        })
        .collect();
    let mut recs = Vec::new();
    if let Some(m) = &r.mean
        && m.total_ns > 0.0
    {
        let share = 100.0 * m.dataloader_ns / m.total_ns;
        if share > 5.0 {
            recs.push(Recommendation {
                title: "Data loading takes a large share of the step.".into(),
                advice: "Use more DataLoader workers, pin memory, prefetch, or move preprocessing off the training loop.".into(),
                figure: format!("DataLoader {share:.1} % of the mean step time"),
                section: "steps".into(),
                rule_of: "TensorBoard plugin (DataLoader share above 5 %)".into(),
            });
        }
    }
    let mut text = vec![format!(
        "Steps: {}. Each step's time is split in the TensorBoard plugin's priority order (Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU exec > Other): a category counts only time no higher category covers, so the parts add up to the step. See docs/reports.md, steps.",
        r.detection
    )];
    if let Some(na) = &r.na {
        text.push(format!("na: {na}"));
    }
    text.extend(r.notes.iter().cloned());
    Some((
        Section {
            id: "steps".into(),
            title: "Step breakdown".into(),
            text,
            charts: vec![Chart::Stacked {
                id: "steps".into(),
                title: "Step time by category".into(),
                y_label: "time (ms)".into(),
                categories: cats,
                series,
            }],
            tables: vec![Table {
                caption: "Per step".into(),
                numeric: (0..header.len()).map(|i| i > 0).collect(),
                headers: header,
                rows,
            }],
        },
        recs,
    ))
}

/// The idle section: idle time per stream by class, and the largest gaps
/// with their named causes.
pub fn idle_section(r: &crate::idle::IdleReport) -> Option<Section> {
    if r.streams.is_empty() {
        return None;
    }
    let cats: Vec<String> = r
        .streams
        .iter()
        .map(|s| format!("GPU {} stream {}", s.device, s.stream))
        .collect();
    let part = |f: fn(&crate::idle::StreamIdle) -> i64| -> Vec<f64> {
        r.streams.iter().map(|s| f(s) as f64 / 1e6).collect()
    };
    let charts = vec![Chart::Stacked {
        id: "idle".into(),
        title: "GPU idle time per stream by cause class".into(),
        y_label: "idle (ms)".into(),
        categories: cats,
        series: vec![
            ("host wait".into(), part(|s| s.host_wait_ns)),
            ("kernel wait".into(), part(|s| s.kernel_wait_ns)),
            ("other".into(), part(|s| s.other_ns)),
        ],
    }];
    let tables = vec![
        Table {
            caption: "Idle time per stream (% of the stream's span)".into(),
            headers: [
                "Device",
                "Stream",
                "Gaps",
                "Idle (ms)",
                "Idle %",
                "Host wait (ms)",
                "Kernel wait (ms)",
                "Other (ms)",
            ]
            .map(String::from)
            .to_vec(),
            numeric: vec![true; 8],
            rows: r
                .streams
                .iter()
                .map(|s| {
                    vec![
                        s.device.to_string(),
                        s.stream.to_string(),
                        s.gaps.to_string(),
                        ms(s.idle_ns),
                        pct(s.idle_ns, s.span_ns),
                        ms(s.host_wait_ns),
                        ms(s.kernel_wait_ns),
                        ms(s.other_ns),
                    ]
                })
                .collect(),
        },
        Table {
            caption: "The largest gaps and their causes".into(),
            headers: [
                "Device",
                "Stream",
                "Gap (ms)",
                "Class",
                "Next operation",
                "Cause",
            ]
            .map(String::from)
            .to_vec(),
            numeric: vec![true, true, true, false, false, false],
            rows: r
                .gaps
                .iter()
                .map(|g| {
                    vec![
                        g.device.to_string(),
                        g.stream.to_string(),
                        ms(g.gap_ns),
                        g.class.as_str().to_owned(),
                        g.next_op.clone(),
                        g.cause.clone(),
                    ]
                })
                .collect(),
        },
    ];
    let mut text = vec![format!(
        "Gaps between consecutive GPU operations (kernels, copies, sets) on each stream, classified as HTA does: host wait (the next operation's launch call began after the previous operation ended), kernel wait (otherwise, and shorter than {} µs), other. See docs/reports.md, idle.",
        r.kernel_wait_threshold_ns as f64 / 1e3
    )];
    if let Some(na) = &r.na {
        text.push(format!("na: {na}"));
    }
    text.extend(r.notes.iter().cloned());
    Some(Section {
        id: "idle".into(),
        title: "Why the GPU waits".into(),
        text,
        charts,
        tables,
    })
}
