//! The page of `rprof report` for one profile, built in one pass: the
//! trace's own tables (kernels, copies, API calls, ranges) for the
//! timeline figures, and the per-kernel records (op, FLOPs, bytes) fed
//! chunk by chunk for the op, kernel and roofline sections.

use rprof_gpu::Devices;
use rprof_gpu::MathClass;
use rprof_model::Intervals;
use rprof_model::Kernels;
use rprof_model::{MemKind, Trace};
use rprof_ops::{Dtype, KernelEstimate};

use super::{Bar, Chart, Page, Recommendation, RoofPoint, Section, Series, Table};
use crate::model::{known_bytes, known_flops};
use crate::summary::{Key, Summarizer, SummaryReport};

/// Most buckets of the utilization chart (a bounded page for any span).
pub const MAX_BUCKETS: i64 = 400;
/// Rows of the top-op and top-kernel charts and tables.
pub const TOP: usize = 15;

/// The job-level views computed for the page, each by its own module.
#[derive(Default)]
pub struct Views {
    /// `rprof mem`'s report and curve.
    pub mem: Option<(crate::mem::MemReport, Vec<crate::mem::CurvePoint>)>,
    /// `rprof dist`'s report (shown when the input holds two ranks or more).
    pub dist: Option<crate::dist::DistReport>,
    /// `rprof steps`' report.
    pub steps: Option<crate::steps::StepsReport>,
    /// `rprof idle`'s report.
    pub idle: Option<crate::idle::IdleReport>,
    /// Ranges whose name begins with `ProfilerStep#`, when already counted
    /// ([`crate::dist::RangeScan::profiler_steps`]); else the overview
    /// counts them.
    pub profiler_steps: Option<usize>,
}

/// Collects the per-kernel part of the page.
pub struct PageBuilder {
    by_op: Summarizer,
    by_kernel: Summarizer,
    devices: Devices,
    /// (label, math class) → (time ns, flops, bytes) of kernels with both
    /// FLOPs and bytes known, for the roofline of the busiest device.
    roof: Vec<(String, MathClass, i64, i128, i128)>,
    roof_index: rprof_model::FastMap<(String, &'static str), usize>,
    tc_ns: i64,
    kernel_ns: i64,
}

impl PageBuilder {
    /// A builder for a profile with these devices.
    pub fn new(devices: Vec<rprof_model::DeviceInfo>) -> PageBuilder {
        PageBuilder {
            by_op: Summarizer::new(Key::Op),
            by_kernel: Summarizer::new(Key::Kernel),
            devices: Devices::new(devices),
            roof: Vec::new(),
            roof_index: Default::default(),
            tc_ns: 0,
            kernel_ns: 0,
        }
    }

    /// Feed one chunk of records and their estimates.
    pub fn add(&mut self, recs: &Kernels<'_>, est: &[KernelEstimate<'_>]) {
        for (r, e) in recs.iter().zip(est) {
            self.by_op.add(r, e);
            self.by_kernel.add(r, e);
            let dur = r.duration_ns.max(0);
            self.kernel_ns = self.kernel_ns.saturating_add(dur);
            let tc = match e.estimate.tc {
                rprof_ops::Tc::Yes => true,
                rprof_ops::Tc::No => false,
                _ => rprof_ops::uses_tensor_cores(&r.short_name, &r.long_name),
            };
            if tc {
                self.tc_ns = self.tc_ns.saturating_add(dur);
            }
            self.devices
                .resolve(r.device, r.pid, r.device_name.as_deref(), r.sm_count);
            if let (Some(f), Some(b)) = (known_flops(&e.estimate), known_bytes(&e.estimate))
                && dur > 0
                && (f > 0 || b > 0)
            {
                let class = MathClass::classify(e.estimate.params.dtype().map(Dtype::name), tc);
                let label = if e.op.is_empty() {
                    crate::summary::NONE.to_owned()
                } else {
                    e.op.to_owned()
                };
                let n = self.roof.len();
                let key = (label, class.as_str());
                match self
                    .roof_index
                    .get(&key)
                    .and_then(|&i| self.roof.get_mut(i))
                {
                    Some(g) => {
                        g.2 = g.2.saturating_add(dur);
                        g.3 = g.3.saturating_add(f);
                        g.4 = g.4.saturating_add(b);
                    }
                    None if n < 10_000 => {
                        self.roof.push((key.0.clone(), class, dur, f, b));
                        self.roof_index.insert(key, n);
                    }
                    None => {}
                }
            }
        }
    }

    /// The page. `trace` is the profile the records came from (its
    /// kernels, copies, API calls and ranges feed the timeline sections).
    pub fn finish(self, trace: &Trace, command: &str, views: Views) -> Page {
        self.finish_with(Timeline::new(trace, command, views))
    }

    /// The page, from the sections already drawn from the trace's own
    /// tables ([`Timeline::new`], which can run before the records so that
    /// the tables only it needs are freed first).
    pub fn finish_with(self, timeline: Timeline) -> Page {
        let Timeline {
            mut page,
            kernel_rows_at,
            after,
        } = timeline;
        let ops = self.by_op.finish(TOP);
        let kernels = self.by_kernel.finish(TOP);
        let at = kernel_rows_at.min(page.overview.len());
        page.overview.splice(
            at..at,
            [
                (
                    "Kernel time".to_owned(),
                    format!("{} (sum of kernel durations)", ms(self.kernel_ns)),
                ),
                (
                    "Kernel time on tensor cores".to_owned(),
                    format!("{} of kernel time", pct(self.tc_ns, self.kernel_ns)),
                ),
            ],
        );
        page.sections
            .push(summary_section("ops", "Top ops", &ops, "op"));
        page.sections.push(summary_section(
            "kernels",
            "Top kernels",
            &kernels,
            "kernel",
        ));
        if let Some(s) = roofline_section(&self.devices, self.roof) {
            page.sections.push(s);
        }
        page.sections.extend(after);
        page
    }
}

/// The part of the page drawn from the trace's own tables (kernels,
/// copies, API calls, ranges) and the job-level views: everything but the
/// per-kernel sections, which [`PageBuilder::finish_with`] adds.
pub struct Timeline {
    /// The page so far: overview, the sections before the op sections,
    /// every recommendation.
    page: Page,
    /// Where the kernel-time rows go in the overview.
    kernel_rows_at: usize,
    /// The sections after the op sections (memory, distributed).
    after: Vec<Section>,
}

impl Timeline {
    /// Draw the trace's part of the page of `trace`, made by `command`.
    pub fn new(trace: &Trace, command: &str, views: Views) -> Timeline {
        let mut page = Page {
            title: format!("rprof report: {}", trace.path.display()),
            footer: format!("Made by {command} (rprof {}).", env!("CARGO_PKG_VERSION")),
            ..Page::default()
        };
        let kernel_rows_at = overview(&mut page, trace, views.profiler_steps);
        let util = utilization_section(trace);
        if let Some((s, recs)) = util {
            page.sections.push(s);
            page.recommendations.extend(recs);
        }
        if let Some((s, recs)) = views.steps.as_ref().and_then(super::views::steps_section) {
            page.sections.push(s);
            page.recommendations.extend(recs);
        }
        if let Some(s) = views.idle.as_ref().and_then(super::views::idle_section) {
            page.sections.push(s);
        }
        let mut after = Vec::new();
        match &views.mem {
            Some((m, curve)) => {
                let (s, recs) = super::views::mem_section(m, curve);
                after.push(s);
                page.recommendations.extend(recs);
            }
            None => {
                if let Some(s) = copies_section(trace) {
                    after.push(s);
                }
            }
        }
        if let Some(d) = views.dist.as_ref().filter(|d| d.ranks.len() >= 2) {
            let (s, recs) = super::views::dist_section(d);
            after.push(s);
            page.recommendations.extend(recs);
        }
        page.recommendations
            .extend(api_recommendations(trace, views.mem.is_none()));
        Timeline {
            page,
            kernel_rows_at,
            after,
        }
    }
}

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn pct(part: i64, whole: i64) -> String {
    if whole <= 0 {
        "na (nothing to divide by)".to_owned()
    } else {
        format!("{:.1} %", 100.0 * part as f64 / whole as f64)
    }
}

/// The overview rows from the trace's tables; returns where the rows of
/// kernel time (from the records) go.
fn overview(page: &mut Page, trace: &Trace, profiler_steps: Option<usize>) -> usize {
    let o = &mut page.overview;
    o.push(("Input".into(), trace.path.display().to_string()));
    o.push((
        "Producer".into(),
        trace
            .producer
            .clone()
            .unwrap_or_else(|| trace.source.as_str().to_owned()),
    ));
    if trace.devices.is_empty() {
        o.push(("Devices".into(), "no device table in the input".into()));
    }
    for d in &trace.devices {
        o.push((
            format!("GPU {}", d.device),
            format!(
                "{} (cc {}, {} SMs)",
                d.name.as_deref().unwrap_or("name unknown"),
                match (d.cc_major, d.cc_minor) {
                    (Some(a), Some(b)) => format!("{a}.{b}"),
                    _ => "unknown".into(),
                },
                d.sm_count.map_or("unknown".into(), |n| n.to_string())
            ),
        ));
    }
    let span = kernel_span(trace);
    o.push((
        "Span".into(),
        match span {
            Some((a, b)) => format!("{} (first kernel start to last kernel end)", ms(b - a)),
            None => "na (no kernels)".into(),
        },
    ));
    o.push(("Kernels".into(), trace.kernels.len().to_string()));
    let kernel_rows_at = o.len();
    let copies = trace.memops.len();
    o.push(("Copies and sets".into(), copies.to_string()));
    let steps = profiler_steps.unwrap_or_else(|| {
        trace
            .ranges
            .iter()
            .filter(|r| trace.range_name(r).starts_with("ProfilerStep#"))
            .count()
    });
    o.push((
        "Steps".into(),
        if steps > 0 {
            format!("{steps} ProfilerStep ranges")
        } else {
            "none marked (no ProfilerStep ranges)".into()
        },
    ));
    if let Some(d) = &trace.dist {
        o.push((
            "Distributed".into(),
            format!(
                "rank {} of {} ({})",
                d.rank.map_or("?".into(), |r| r.to_string()),
                d.world_size.map_or("?".into(), |r| r.to_string()),
                d.backend.as_deref().unwrap_or("backend unknown")
            ),
        ));
    }
    page.cannot_answer.extend(trace.missing.iter().cloned());
    page.cannot_answer.extend(trace.notes.iter().cloned());
    if trace.stats.without_launch > 0 {
        page.cannot_answer.push(format!(
            "{} kernels have no launch call in the capture (CUDA graphs or a trimmed window): they have no op or range",
            trace.stats.without_launch
        ));
    }
    kernel_rows_at
}

fn kernel_span(trace: &Trace) -> Option<(i64, i64)> {
    let lo = trace.kernels.iter().map(|k| k.start_ns).min()?;
    let hi = trace.kernels.iter().map(|k| k.end_ns).max()?;
    Some((lo, hi))
}

/// Busy time per device (union of kernels), bucketed over the span of all
/// devices (the `gpu` command's definition).
fn utilization_section(trace: &Trace) -> Option<(Section, Vec<Recommendation>)> {
    let (lo, hi) = kernel_span(trace)?;
    let span = (hi - lo).max(1);
    let mut devices: Vec<i64> = trace.kernels.iter().map(|k| k.device).collect();
    devices.sort_unstable();
    devices.dedup();
    let width = ((span + MAX_BUCKETS - 1) / MAX_BUCKETS).max(1);
    let n = ((span + width - 1) / width) as usize;
    let mut series = Vec::new();
    let mut rows = Vec::new();
    let mut recs = Vec::new();
    for d in devices {
        let busy = Intervals::from_unsorted(
            trace
                .kernels
                .iter()
                .filter(|k| k.device == d)
                .map(|k| (k.start_ns, k.end_ns))
                .collect(),
        );
        let b = busy.buckets(lo, width, n);
        series.push(Series {
            name: format!("GPU {d}"),
            points: b
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let x = (i as f64 + 0.5) * width as f64 / 1e6;
                    (x, 100.0 * *v as f64 / width as f64)
                })
                .collect(),
        });
        let total = busy.total();
        let u = 100.0 * total as f64 / span as f64;
        rows.push(vec![
            format!("GPU {d}"),
            ms(total),
            ms(span),
            format!("{u:.1}"),
        ]);
        if u < 50.0 {
            recs.push(Recommendation {
                title: format!("GPU {d} is idle most of the time."),
                advice: "Look at what the host does between kernels (rprof idle), raise the batch size, overlap data loading, or capture CUDA graphs for launch-bound loops.".into(),
                figure: format!("GPU utilization {u:.1} % of the span (busy {} of {})", ms(total), ms(span)),
                section: "utilization".into(),
                rule_of: "TensorBoard plugin (low GPU utilization), nsys analyze (GPU starvation)".into(),
            });
        }
    }
    let section = Section {
        id: "utilization".into(),
        title: "GPU utilization over time".into(),
        text: vec![format!(
            "Busy = time with at least one kernel running on the GPU (union of kernel intervals; copies not counted); utilization = busy / span, where the span runs from the first kernel start to the last kernel end on any GPU. Buckets of {} each.",
            ms(width)
        )],
        charts: vec![Chart::Lines {
            id: "utilization".into(),
            title: "GPU utilization per bucket".into(),
            x_label: "time since the first kernel (ms)".into(),
            y_label: "utilization (% of bucket)".into(),
            y_max: Some(105.0),
            series,
        }],
        tables: vec![Table {
            caption: "Utilization per GPU".into(),
            headers: vec![
                "GPU".into(),
                "Busy".into(),
                "Span".into(),
                "Utilization (% of span)".into(),
            ],
            numeric: vec![false, true, true, true],
            rows,
        }],
    };
    Some((section, recs))
}

fn summary_section(id: &str, title: &str, r: &SummaryReport, what: &str) -> Section {
    let bars = r
        .rows
        .iter()
        .map(|row| Bar {
            label: row.key.clone(),
            value: row.total_ns as f64 / 1e6,
            note: match row.tflops {
                Some(t) => format!("{:.1} %, {t:.2} TFLOP/s", row.share_pct),
                None => format!("{:.1} %", row.share_pct),
            },
        })
        .collect();
    let rows = r
        .rows
        .iter()
        .map(|row| {
            vec![
                row.key.clone(),
                row.count.to_string(),
                format!("{:.3}", row.total_ns as f64 / 1e6),
                format!("{:.1}", row.share_pct),
                row.flops
                    .map_or(String::new(), |f| format!("{:.3e}", f as f64)),
                row.tflops.map_or(String::new(), |t| format!("{t:.2}")),
                row.gbs.map_or(String::new(), |g| format!("{g:.1}")),
            ]
        })
        .collect();
    Section {
        id: id.into(),
        title: title.into(),
        text: vec![format!(
            "The {} {what}s with the most kernel time of {} groups; share = % of {}.",
            r.rows.len(),
            r.groups,
            r.share_of
        )],
        charts: vec![Chart::Bars {
            id: id.into(),
            title: format!("{title} by kernel time"),
            x_label: "kernel time (ms)".into(),
            bars,
        }],
        tables: vec![Table {
            caption: format!("{title} (empty cells: the op models do not know)"),
            headers: vec![
                what.into(),
                "Kernels".into(),
                "Time (ms)".into(),
                "Share (%)".into(),
                "FLOPs".into(),
                "TFLOP/s".into(),
                "GB/s".into(),
            ],
            numeric: vec![false, true, true, true, true, true, true],
            rows,
        }],
    }
}

fn roofline_section(
    devices: &Devices,
    mut roof: Vec<(String, MathClass, i64, i128, i128)>,
) -> Option<Section> {
    let dev = devices.list().iter().find(|d| d.spec.is_some())?;
    let spec = dev.spec?;
    if roof.is_empty() {
        return None;
    }
    roof.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    roof.truncate(40);
    // the roof of the class with the most time
    let class = roof[0].1;
    let peak = spec.peak_flops(class) / 1e12;
    let bw = spec.bandwidth() / 1e9;
    let points = roof
        .iter()
        .filter(|g| g.1 == class && g.4 > 0)
        .map(|g| RoofPoint {
            label: g.0.clone(),
            intensity: g.3 as f64 / g.4 as f64,
            tflops: g.3 as f64 / g.2 as f64 / 1e3,
        })
        .collect();
    Some(Section {
        id: "roofline".into(),
        title: "Roofline".into(),
        text: vec![format!(
            "Ops whose models give FLOPs and bytes, against the {} roofs for {} math ({} from rprof's GPU table). Intensity = FLOPs / bytes; throughput = FLOPs / kernel time.",
            dev.label(),
            class.as_str(),
            spec.name
        )],
        charts: vec![Chart::Roofline {
            id: "roofline".into(),
            title: format!("Roofline ({} math)", class.as_str()),
            peak_tflops: peak,
            bandwidth_gbs: bw,
            points,
        }],
        tables: Vec::new(),
    })
}

fn copies_section(trace: &Trace) -> Option<Section> {
    if trace.memops.is_empty() {
        return None;
    }
    let mut kinds: Vec<(String, u64, i64, i64)> = Vec::new();
    for m in &trace.memops {
        let k = match m.kind {
            MemKind::Copy(c) => format!("Memcpy {}", c.as_str()),
            MemKind::Set => "Memset".into(),
        };
        match kinds.iter_mut().find(|x| x.0 == k) {
            Some(x) => {
                x.1 += 1;
                x.2 = x.2.saturating_add(m.duration_ns());
                x.3 = x.3.saturating_add(m.bytes.unwrap_or(0));
            }
            None => kinds.push((k, 1, m.duration_ns(), m.bytes.unwrap_or(0))),
        }
    }
    kinds.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    Some(Section {
        id: "copies".into(),
        title: "Copies and sets".into(),
        text: vec!["GPU time of memory copies and sets per kind.".into()],
        charts: vec![Chart::Bars {
            id: "copies".into(),
            title: "Copy and set time by kind".into(),
            x_label: "GPU time (ms)".into(),
            bars: kinds
                .iter()
                .map(|k| Bar {
                    label: k.0.clone(),
                    value: k.2 as f64 / 1e6,
                    note: format!("{} ops, {} bytes", k.1, k.3),
                })
                .collect(),
        }],
        tables: vec![Table {
            caption: "Copies and sets by kind".into(),
            headers: vec![
                "Kind".into(),
                "Count".into(),
                "Time (ms)".into(),
                "Bytes".into(),
            ],
            numeric: vec![false, true, true, true],
            rows: kinds
                .iter()
                .map(|k| {
                    vec![
                        k.0.clone(),
                        k.1.to_string(),
                        format!("{:.3}", k.2 as f64 / 1e6),
                        k.3.to_string(),
                    ]
                })
                .collect(),
        }],
    })
}

/// `nsys analyze`'s rules on API calls: synchronisation calls, synchronous
/// copies and sets, asynchronous copies from pageable memory.
fn api_recommendations(trace: &Trace, copy_rules: bool) -> Vec<Recommendation> {
    use rprof_model::{ApiKind, MemoryKind};
    let mut out = Vec::new();
    let syncs: Vec<_> = trace
        .each_api_call()
        .filter(|c| c.kind == ApiKind::Sync)
        .collect();
    if !syncs.is_empty() {
        let ns: i64 = syncs.iter().map(|c| c.duration_ns()).sum();
        out.push(Recommendation {
            title: "The host blocks in synchronisation calls.".into(),
            advice: "Each sync stalls the launch queue; remove needless .item()/.cpu() calls and explicit synchronizations from the training loop.".into(),
            figure: format!("{} synchronisation calls, {} of host time", syncs.len(), ms(ns)),
            section: "overview".into(),
            rule_of: "nsys analyze (cuda_api_sync)".into(),
        });
    }
    if !copy_rules {
        // the memory view applies the copy rules itself
        return out;
    }
    let blocking = trace
        .each_api_call()
        .filter(|c| matches!(c.kind, ApiKind::Memcpy | ApiKind::Memset))
        .count();
    if blocking > 0 {
        out.push(Recommendation {
            title: "Synchronous copies or sets.".into(),
            advice: "Use cudaMemcpyAsync / non_blocking=True copies from pinned memory so the host does not wait.".into(),
            figure: format!("{blocking} synchronous cudaMemcpy/cudaMemset calls"),
            section: "copies".into(),
            rule_of: "nsys analyze (cuda_memcpy_sync, cuda_memset_sync)".into(),
        });
    }
    let pageable = trace
        .memops
        .iter()
        .filter(|m| {
            matches!(m.kind, MemKind::Copy(_))
                && (m.src_mem == MemoryKind::Pageable || m.dst_mem == MemoryKind::Pageable)
        })
        .filter(|m| {
            m.launch
                .and_then(|i| trace.launches.get(i as usize))
                .and_then(|l| l.api)
                .is_some_and(|a| trace.strings.get(a).contains("Async"))
        })
        .count();
    if pageable > 0 {
        out.push(Recommendation {
            title: "Asynchronous copies from pageable memory.".into(),
            advice: "Pageable memory makes async copies synchronous; pin the host buffers (DataLoader(pin_memory=True)).".into(),
            figure: format!("{pageable} async copies to or from pageable memory"),
            section: "copies".into(),
            rule_of: "nsys analyze (cuda_memcpy_async)".into(),
        });
    }
    out
}
