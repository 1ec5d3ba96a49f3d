//! `rprof launch`: launch latency (kernel start − launch call end) and API
//! time per kernel, summarised per kernel name and per op as `nsys stats
//! --report cuda_kern_exec_sum` does; the launch queue of each stream over
//! time; and launch-bound kernels (shorter than their launch call).
//! Definitions: docs/reports.md, "Launch".

use std::collections::BTreeMap;
use std::io::{self, Write};

use rayon::slice::ParallelSliceMut;
use rprof_model::FastMap as HashMap;
use rprof_model::Stats;
use rprof_model::Trace;
use serde::Serialize;

use crate::host::{self, OutFormat, safe};
use crate::text;

/// One kernel's launch (kept only when asked for: `--table each`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KernelLaunch {
    /// Kernel start, ns.
    pub start_ns: i64,
    /// Device.
    pub device: i64,
    /// Stream.
    pub stream: i64,
    /// Kernel name.
    pub kernel: String,
    /// Op (innermost range around the launch call).
    pub op: String,
    /// Launch call duration, ns.
    pub api_ns: i64,
    /// Kernel start − launch call end, ns.
    pub latency_ns: i64,
    /// Kernel duration, ns.
    pub kernel_ns: i64,
}

/// The op of kernels launched outside any range.
pub const NO_RANGE: &str = "(no range)";

/// Per kernel name or per op.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    /// Kernel name or op.
    pub name: String,
    /// Kernels with a launch call.
    pub count: u64,
    /// Kernels whose latency is positive (nsys `QCount`).
    pub queued: u64,
    /// Launch call duration: mean, ns.
    pub api_mean_ns: f64,
    /// Median, ns.
    pub api_median_ns: f64,
    /// Min, ns.
    pub api_min_ns: i64,
    /// Max, ns.
    pub api_max_ns: i64,
    /// Launch latency (kernel start − call end): mean, ns.
    pub latency_mean_ns: f64,
    /// Median, ns.
    pub latency_median_ns: f64,
    /// Min, ns (negative: the kernel began before the call returned).
    pub latency_min_ns: i64,
    /// Max, ns.
    pub latency_max_ns: i64,
    /// Summed latency, ns.
    pub latency_total_ns: i64,
    /// Kernel duration: mean, ns.
    pub kernel_mean_ns: f64,
    /// Summed kernel time, ns.
    pub kernel_total_ns: i64,
}

/// The launch queue of one stream.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Queue {
    /// Device ordinal.
    pub device: i64,
    /// Stream id.
    pub stream: i64,
    /// Operations counted (launch call known and begun before the op).
    pub ops: u64,
    /// Operations that started before their launch call began (not counted).
    pub started_before_launch: u64,
    /// First launch call start to last op start, ns.
    pub span_ns: i64,
    /// Time-weighted mean queue length over the span.
    pub mean: Option<f64>,
    /// Largest queue length.
    pub max: u64,
    /// Time-weighted median.
    pub p50: u64,
    /// Time-weighted 90th percentile.
    pub p90: u64,
    /// Time-weighted 99th percentile.
    pub p99: u64,
    /// Time in the span with an empty queue, ns.
    pub empty_ns: i64,
    /// `empty_ns / span_ns`.
    pub empty_share_of_span: Option<f64>,
}

/// Launch-bound kernels of one (op, kernel) pair.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LaunchBound {
    /// The op that issued them.
    pub op: String,
    /// Kernel name.
    pub kernel: String,
    /// Kernels of the pair.
    pub count: u64,
    /// Of which shorter than their launch call.
    pub launch_bound: u64,
    /// Their summed kernel time, ns.
    pub kernel_ns: i64,
    /// Their summed launch-call time, ns.
    pub api_ns: i64,
}

/// The report.
#[derive(Clone, Debug, Serialize)]
pub struct LaunchReport {
    /// Input file.
    pub input: String,
    /// Kernels with a launch call.
    pub kernels: u64,
    /// Kernels without one (not in the summaries).
    pub kernels_without_launch: u64,
    /// All kernels together.
    pub overall: Option<Summary>,
    /// Per kernel name, by summed latency.
    pub by_kernel: Vec<Summary>,
    /// Per op (innermost range enclosing the launch call), by summed latency.
    pub by_op: Vec<Summary>,
    /// Per stream.
    pub queues: Vec<Queue>,
    /// Launch-bound pairs, most launch-bound kernels first.
    pub launch_bound: Vec<LaunchBound>,
    /// Launch-bound kernels over all kernels with a launch call.
    pub launch_bound_share: Option<f64>,
    /// Every kernel with a launch call, in start order (only when asked
    /// for).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub each: Vec<KernelLaunch>,
    /// Why there are no figures, when there are none.
    pub na: Option<String>,
    /// Caveats.
    pub notes: Vec<String>,
}

/// Sums, extremes and counts of one group (the medians are taken from
/// the [`Sample`]s).
#[derive(Default)]
struct Acc {
    api: Stats,
    lat: Stats,
    kern: Stats,
    queued: u64,
}

impl Acc {
    fn add(&mut self, api: i64, lat: i64, kern: i64) {
        self.api.add(api);
        self.lat.add(lat);
        self.kern.add(kern);
        if lat > 0 {
            self.queued += 1;
        }
    }

    /// The summary, with the group's (API-time, latency) medians.
    fn finish(self, name: String, (api_median, lat_median): Medians) -> Summary {
        Summary {
            name,
            count: self.lat.count(),
            queued: self.queued,
            api_mean_ns: self.api.mean().unwrap_or(0.0),
            api_median_ns: api_median.unwrap_or(0.0),
            api_min_ns: self.api.min().unwrap_or(0),
            api_max_ns: self.api.max().unwrap_or(0),
            latency_mean_ns: self.lat.mean().unwrap_or(0.0),
            latency_median_ns: lat_median.unwrap_or(0.0),
            latency_min_ns: self.lat.min().unwrap_or(0),
            latency_max_ns: self.lat.max().unwrap_or(0),
            latency_total_ns: self.lat.sum(),
            kernel_mean_ns: self.kern.mean().unwrap_or(0.0),
            kernel_total_ns: self.kern.sum(),
        }
    }
}

/// A group's (API-time, latency) medians.
type Medians = (Option<f64>, Option<f64>);

/// One kernel's launch-call time and latency with its kernel-name and op
/// groups: the samples of every median, kept once for the three summaries
/// (all kernels, per kernel name, per op) rather than once in each (at
/// 3 M kernels that was 140 MB more).
#[derive(Clone, Copy)]
struct Sample {
    kernel: u32,
    op: u32,
    api: i64,
    lat: i64,
}

/// Groups by name, numbered in the order first seen; their names borrow
/// from the trace (no allocation per kernel).
#[derive(Default)]
struct Groups<'t> {
    ids: HashMap<&'t str, u32>,
    names: Vec<&'t str>,
    accs: Vec<Acc>,
}

impl<'t> Groups<'t> {
    /// Add a kernel to group `name`; its group number.
    fn add(&mut self, name: &'t str, api: i64, lat: i64, kern: i64) -> u32 {
        let id = *self.ids.entry(name).or_insert_with(|| {
            self.names.push(name);
            self.accs.push(Acc::default());
            self.names.len() as u32 - 1
        });
        if let Some(acc) = self.accs.get_mut(id as usize) {
            acc.add(api, lat, kern);
        }
        id
    }

    /// The summaries, by summed latency, then name.
    fn sorted(self, medians: &[Medians]) -> Vec<Summary> {
        let mut v: Vec<Summary> = self
            .names
            .into_iter()
            .zip(self.accs)
            .enumerate()
            .map(|(i, (name, acc))| {
                acc.finish(name.to_owned(), medians.get(i).copied().unwrap_or_default())
            })
            .collect();
        v.sort_by(|a, b| {
            b.latency_total_ns
                .cmp(&a.latency_total_ns)
                .then_with(|| a.name.cmp(&b.name))
        });
        v
    }
}

/// The (API-time, latency) medians of each of `groups` groups, the group
/// of a sample given by `key`; `samples` is reordered.
fn medians(
    samples: &mut [Sample],
    groups: usize,
    key: impl Fn(&Sample) -> u32 + Sync,
) -> Vec<Medians> {
    let mut out = vec![(None, None); groups];
    samples.par_sort_unstable_by_key(&key);
    for run in samples.chunk_by_mut(|a, b| key(a) == key(b)) {
        let Some(slot) = run.first().and_then(|s| out.get_mut(key(s) as usize)) else {
            continue;
        };
        *slot = (median_by(run, |s| s.api), median_by(run, |s| s.lat));
    }
    out
}

/// The median of `value` over `run` ([`Stats::median`]'s rule: the mean
/// of the two middle values for an even count), by selection rather than
/// a sort; `run` is reordered.
fn median_by(run: &mut [Sample], value: impl Fn(&Sample) -> i64) -> Option<f64> {
    let n = run.len();
    if n == 0 {
        return None;
    }
    let (below, mid, _) = run.select_nth_unstable_by_key(n / 2, &value);
    let hi = value(mid);
    if n % 2 == 1 {
        return Some(hi as f64);
    }
    // the largest of the lower half is the other middle value
    let lo = below.iter().map(&value).max()?;
    Some((lo as f64 + hi as f64) / 2.0)
}

/// Queue-length figures of one stream from its launch calls' starts and
/// its ops' starts as two lists of equal length (pairs with `op start <=
/// call start` already taken out), sorted here in place: each call start adds one to the
/// queue and each op start takes one away, an op start first at the same
/// instant. Walking the two sorted lists together needs no list of events
/// beside them (at 3 M kernels on one stream that list was 96 MB).
pub fn queue_of_times(calls: &mut [i64], starts: &mut [i64]) -> Queue {
    let mut q = Queue {
        ops: calls.len() as u64,
        ..Queue::default()
    };
    calls.sort_unstable();
    starts.sort_unstable();
    // the events in time order, op starts (-1) before calls (+1) at a tie
    let mut c = calls.iter().copied().peekable();
    let mut s = starts.iter().copied().peekable();
    let events = std::iter::from_fn(|| match (c.peek(), s.peek()) {
        (Some(&tc), Some(&ts)) if tc < ts => c.next().map(|t| (t, 1)),
        (_, Some(_)) => s.next().map(|t| (t, -1)),
        (Some(_), None) => c.next().map(|t| (t, 1)),
        (None, None) => None,
    });
    let (Some(first), Some(last)) = (
        calls.first().min(starts.first()).copied(),
        calls.last().max(starts.last()).copied(),
    ) else {
        return q;
    };
    let mut hist: BTreeMap<u64, i64> = BTreeMap::new();
    let mut len: i64 = 0;
    let mut max: i64 = 0;
    let mut prev = first;
    for (t, d) in events {
        if t > prev {
            let slot = hist.entry(len.max(0) as u64).or_default();
            *slot = slot.saturating_add(t.saturating_sub(prev));
            prev = t;
        }
        len += d;
        max = max.max(len);
    }
    let span = last.saturating_sub(first);
    q.span_ns = span;
    q.max = max.max(0) as u64;
    q.empty_ns = hist.get(&0).copied().unwrap_or(0);
    if span > 0 {
        let weighted: i128 = hist.iter().map(|(&k, &v)| k as i128 * v as i128).sum();
        q.mean = Some(weighted as f64 / span as f64);
        q.empty_share_of_span = Some(q.empty_ns as f64 / span as f64);
        let pct = |p: f64| -> u64 {
            let want = p / 100.0 * span as f64;
            let mut acc = 0i64;
            for (&k, &v) in &hist {
                acc = acc.saturating_add(v);
                if acc as f64 >= want {
                    return k;
                }
            }
            q.max
        };
        q.p50 = pct(50.0);
        q.p90 = pct(90.0);
        q.p99 = pct(99.0);
    }
    q
}

/// Compute the report. `launch_op[i]`: the innermost range enclosing
/// launch call `i`.
pub fn compute(trace: &Trace, launch_op: &[Option<u32>], each: bool) -> LaunchReport {
    let mut report = LaunchReport {
        input: trace.path.display().to_string(),
        kernels: 0,
        kernels_without_launch: 0,
        overall: None,
        by_kernel: Vec::new(),
        by_op: Vec::new(),
        queues: Vec::new(),
        launch_bound: Vec::new(),
        launch_bound_share: None,
        each: Vec::new(),
        na: None,
        notes: trace.missing.clone(),
    };
    let op_of = |l: u32| -> &str {
        launch_op
            .get(l as usize)
            .copied()
            .flatten()
            .and_then(|r| trace.ranges.get(r as usize))
            .map_or(NO_RANGE, |r| host::range_op_name(trace, r))
    };
    let mut all = Acc::default();
    let mut by_kernel = Groups::default();
    let mut by_op = Groups::default();
    let mut samples: Vec<Sample> = Vec::with_capacity(trace.kernels.len());
    let mut bound: BTreeMap<(&str, &str), LaunchBound> = BTreeMap::new();
    let mut n_bound = 0u64;
    for k in &trace.kernels {
        let Some(li) = k.launch.get() else {
            report.kernels_without_launch += 1;
            continue;
        };
        let Some(l) = trace.launches.get(li as usize) else {
            report.kernels_without_launch += 1;
            continue;
        };
        let api = l.end_ns.saturating_sub(l.start_ns).max(0);
        let lat = k.start_ns.saturating_sub(l.end_ns);
        let dur = k.duration_ns();
        let kname = trace.strings.get(k.name);
        let op = op_of(li);
        all.add(api, lat, dur);
        if each {
            report.each.push(KernelLaunch {
                start_ns: k.start_ns,
                device: k.device,
                stream: k.stream,
                kernel: kname.to_owned(),
                op: op.to_owned(),
                api_ns: api,
                latency_ns: lat,
                kernel_ns: dur,
            });
        }
        samples.push(Sample {
            kernel: by_kernel.add(kname, api, lat, dur),
            op: by_op.add(op, api, lat, dur),
            api,
            lat,
        });
        let b = bound.entry((op, kname)).or_insert_with(|| LaunchBound {
            op: op.to_owned(),
            kernel: kname.to_owned(),
            count: 0,
            launch_bound: 0,
            kernel_ns: 0,
            api_ns: 0,
        });
        b.count += 1;
        if dur < api {
            b.launch_bound += 1;
            b.kernel_ns = b.kernel_ns.saturating_add(dur);
            b.api_ns = b.api_ns.saturating_add(api);
            n_bound += 1;
        }
    }
    report.kernels = all.lat.count();
    if report.kernels == 0 {
        report.na = Some(if trace.kernels.is_empty() {
            "the trace has no kernels".into()
        } else {
            "no kernel has a launch call (no CUDA API table, or it could not be joined)".into()
        });
    } else {
        let overall = medians(&mut samples, 1, |_| 0);
        report.overall = Some(all.finish("all kernels".into(), overall[0]));
        report.launch_bound_share = Some(n_bound as f64 / report.kernels as f64);
    }
    report
        .each
        .sort_by_key(|a| (a.start_ns, a.device, a.stream));
    let kernel_medians = medians(&mut samples, by_kernel.names.len(), |s| s.kernel);
    report.by_kernel = by_kernel.sorted(&kernel_medians);
    let op_medians = medians(&mut samples, by_op.names.len(), |s| s.op);
    drop(samples);
    report.by_op = by_op.sorted(&op_medians);
    let mut lb: Vec<LaunchBound> = bound.into_values().filter(|b| b.launch_bound > 0).collect();
    lb.sort_by(|a, b| {
        b.launch_bound
            .cmp(&a.launch_bound)
            .then_with(|| (&a.op, &a.kernel).cmp(&(&b.op, &b.kernel)))
    });
    report.launch_bound = lb;

    // queues: kernels, copies and sets with a launch call
    // (device, stream) → (call starts, op starts, ops started before their call)
    type PerStream = BTreeMap<(i64, i64), (Vec<i64>, Vec<i64>, u64)>;
    let mut per_stream: PerStream = BTreeMap::new();
    for op in host::each_gpu_op(trace) {
        let Some(l) = op.launch.and_then(|l| trace.launches.get(l as usize)) else {
            continue;
        };
        let e = per_stream.entry((op.device, op.stream)).or_default();
        if op.start_ns > l.start_ns {
            e.0.push(l.start_ns);
            e.1.push(op.start_ns);
        } else {
            e.2 += 1;
        }
    }
    for ((device, stream), (mut calls, mut starts, before)) in per_stream {
        let mut q = queue_of_times(&mut calls, &mut starts);
        drop((calls, starts));
        q.device = device;
        q.stream = stream;
        q.started_before_launch = before;
        report.queues.push(q);
    }
    if report.kernels_without_launch > 0 {
        report.notes.push(format!(
            "{} kernels have no launch call and are left out of the latency figures",
            report.kernels_without_launch
        ));
    }
    report
}

fn f1(v: f64) -> String {
    format!("{v:.1}")
}

fn us(v: f64) -> String {
    format!("{:.2}", v / 1000.0)
}

/// Write the report. `table`: which table CSV output holds (`kernels`,
/// `ops`, `queues`, `launch-bound`).
pub fn write<W: Write>(
    w: &mut W,
    r: &LaunchReport,
    format: OutFormat,
    csv_table: &str,
    top: usize,
    name_width: usize,
) -> io::Result<()> {
    match format {
        OutFormat::Json => {
            serde_json::to_writer_pretty(&mut *w, r).map_err(io::Error::other)?;
            writeln!(w)
        }
        OutFormat::Csv => write_csv(w, r, csv_table),
        OutFormat::Table => write_table(w, r, top, name_width),
    }
}

const SUMMARY_COLS: [&str; 14] = [
    "name",
    "count",
    "queued",
    "api_mean_ns",
    "api_median_ns",
    "api_min_ns",
    "api_max_ns",
    "latency_mean_ns",
    "latency_median_ns",
    "latency_min_ns",
    "latency_max_ns",
    "latency_total_ns",
    "kernel_mean_ns",
    "kernel_total_ns",
];

fn summary_row(s: &Summary) -> Vec<String> {
    vec![
        s.name.clone(),
        s.count.to_string(),
        s.queued.to_string(),
        f1(s.api_mean_ns),
        f1(s.api_median_ns),
        s.api_min_ns.to_string(),
        s.api_max_ns.to_string(),
        f1(s.latency_mean_ns),
        f1(s.latency_median_ns),
        s.latency_min_ns.to_string(),
        s.latency_max_ns.to_string(),
        s.latency_total_ns.to_string(),
        f1(s.kernel_mean_ns),
        s.kernel_total_ns.to_string(),
    ]
}

fn write_csv<W: Write>(w: &mut W, r: &LaunchReport, table: &str) -> io::Result<()> {
    let mut c = csv::Writer::from_writer(w);
    match table {
        "ops" | "kernels" => {
            c.write_record(SUMMARY_COLS)?;
            let rows = if table == "ops" {
                &r.by_op
            } else {
                &r.by_kernel
            };
            for s in rows {
                c.write_record(summary_row(s))?;
            }
        }
        "each" => {
            c.write_record([
                "start_ns",
                "device",
                "stream",
                "kernel",
                "op",
                "api_ns",
                "latency_ns",
                "kernel_ns",
            ])?;
            for k in &r.each {
                c.write_record([
                    k.start_ns.to_string(),
                    k.device.to_string(),
                    k.stream.to_string(),
                    k.kernel.clone(),
                    k.op.clone(),
                    k.api_ns.to_string(),
                    k.latency_ns.to_string(),
                    k.kernel_ns.to_string(),
                ])?;
            }
        }
        "queues" => {
            c.write_record([
                "device",
                "stream",
                "ops",
                "started_before_launch",
                "span_ns",
                "mean",
                "max",
                "p50",
                "p90",
                "p99",
                "empty_ns",
                "empty_share_of_span",
            ])?;
            for q in &r.queues {
                c.write_record([
                    q.device.to_string(),
                    q.stream.to_string(),
                    q.ops.to_string(),
                    q.started_before_launch.to_string(),
                    q.span_ns.to_string(),
                    q.mean.map_or(String::new(), |m| format!("{m:.4}")),
                    q.max.to_string(),
                    q.p50.to_string(),
                    q.p90.to_string(),
                    q.p99.to_string(),
                    q.empty_ns.to_string(),
                    q.empty_share_of_span
                        .map_or(String::new(), |m| format!("{m:.6}")),
                ])?;
            }
        }
        _ => {
            c.write_record([
                "op",
                "kernel",
                "count",
                "launch_bound",
                "kernel_ns",
                "api_ns",
            ])?;
            for b in &r.launch_bound {
                c.write_record([
                    b.op.clone(),
                    b.kernel.clone(),
                    b.count.to_string(),
                    b.launch_bound.to_string(),
                    b.kernel_ns.to_string(),
                    b.api_ns.to_string(),
                ])?;
            }
        }
    }
    c.flush()
}

fn take<T>(v: &[T], top: usize) -> &[T] {
    if top == 0 || top >= v.len() {
        v
    } else {
        &v[..top]
    }
}

fn write_table<W: Write>(w: &mut W, r: &LaunchReport, top: usize, width: usize) -> io::Result<()> {
    writeln!(w, "{}: kernel launch overhead and queues", safe(&r.input))?;
    if let Some(na) = &r.na {
        writeln!(w, "launch: na ({na})")?;
        return Ok(());
    }
    let summary_table = |title: &str, rows: &[Summary], w: &mut W| -> io::Result<()> {
        writeln!(w, "\n{title}")?;
        let mut t = text::table(
            &[
                "name",
                "count",
                "queued",
                "api mean us",
                "api med us",
                "lat mean us",
                "lat med us",
                "lat min us",
                "lat max us",
                "kernel mean us",
            ],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        );
        for s in rows {
            t.add_row(vec![
                text::clip(&safe(&s.name), width),
                s.count.to_string(),
                s.queued.to_string(),
                us(s.api_mean_ns),
                us(s.api_median_ns),
                us(s.latency_mean_ns),
                us(s.latency_median_ns),
                us(s.latency_min_ns as f64),
                us(s.latency_max_ns as f64),
                us(s.kernel_mean_ns),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())
    };
    if let Some(o) = &r.overall {
        summary_table("all kernels", std::slice::from_ref(o), w)?;
    }
    summary_table(
        "per kernel name (by summed latency)",
        take(&r.by_kernel, top),
        w,
    )?;
    summary_table("per op (by summed latency)", take(&r.by_op, top), w)?;
    writeln!(
        w,
        "latency = kernel start - launch call end (negative: the kernel began before the call returned); queued = kernels with latency > 0; api = launch call duration."
    )?;
    writeln!(
        w,
        "\nlaunch queue per stream (+1 at each launch call start, -1 at each op start)"
    )?;
    let mut t = text::table(
        &[
            "device",
            "stream",
            "ops",
            "mean",
            "max",
            "p50",
            "p90",
            "p99",
            "empty ms",
            "empty%",
            "before launch",
        ],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    for q in &r.queues {
        t.add_row(vec![
            q.device.to_string(),
            q.stream.to_string(),
            q.ops.to_string(),
            text::opt(q.mean, 2),
            q.max.to_string(),
            q.p50.to_string(),
            q.p90.to_string(),
            q.p99.to_string(),
            text::ms(q.empty_ns),
            text::pct(q.empty_share_of_span, 1),
            q.started_before_launch.to_string(),
        ]);
    }
    w.write_all(text::render(&t).as_bytes())?;
    writeln!(
        w,
        "mean and percentiles are weighted by time over the stream's span (first launch call start to last op start); empty% = time with no op queued / span."
    )?;
    writeln!(
        w,
        "\nlaunch-bound kernels (shorter than their launch call): {} of {} ({}%)",
        r.launch_bound.iter().map(|b| b.launch_bound).sum::<u64>(),
        r.kernels,
        text::pct(r.launch_bound_share, 1)
    )?;
    if !r.launch_bound.is_empty() {
        let mut t = text::table(
            &["op", "kernel", "bound", "of", "kernel us", "api us"],
            &[2, 3, 4, 5],
        );
        for b in take(&r.launch_bound, top) {
            t.add_row(vec![
                text::clip(&safe(&b.op), width),
                text::clip(&safe(&b.kernel), width),
                b.launch_bound.to_string(),
                b.count.to_string(),
                us(b.kernel_ns as f64),
                us(b.api_ns as f64),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())?;
    }
    for n in &r.notes {
        writeln!(w, "note: {}", safe(n))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Queue figures from `(launch call start, op start)` pairs.
    fn queue_of(pairs: &[(i64, i64)]) -> Queue {
        let (mut calls, mut starts): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
        queue_of_times(&mut calls, &mut starts)
    }

    #[test]
    fn queue_by_hand() {
        // launches at 0 and 10, ops start at 20 and 30: queue 1 on [0,10),
        // 2 on [10,20), 1 on [20,30); span 30
        let q = queue_of(&[(0, 20), (10, 30)]);
        assert_eq!(q.span_ns, 30);
        assert_eq!(q.max, 2);
        assert_eq!(q.mean, Some(40.0 / 30.0));
        assert_eq!(q.empty_ns, 0);
        assert_eq!((q.p50, q.p90), (1, 2));
        // a second burst after an empty stretch
        let q = queue_of(&[(0, 10), (20, 30)]);
        assert_eq!(q.empty_ns, 10);
        assert_eq!(q.p50, 1);
    }

    /// The queue length over time as a list of one event per call and per
    /// op start, sorted, with the length held between events (how the
    /// walk of the two sorted lists was first written).
    fn by_events(pairs: &[(i64, i64)]) -> (i64, u64, BTreeMap<u64, i64>) {
        let mut ev: Vec<(i64, i64)> = pairs.iter().flat_map(|&(l, s)| [(l, 1), (s, -1)]).collect();
        ev.sort_unstable();
        let mut hist = BTreeMap::new();
        let (mut len, mut max) = (0i64, 0i64);
        for w in ev.windows(2) {
            len += w[0].1;
            max = max.max(len);
            if w[1].0 > w[0].0 {
                *hist.entry(len.max(0) as u64).or_insert(0) += w[1].0 - w[0].0;
            }
        }
        let span = ev.last().map_or(0, |l| l.0) - ev.first().map_or(0, |f| f.0);
        (span, max.max(0) as u64, hist)
    }

    proptest::proptest! {
        /// Each group's medians by selection are those of the group's
        /// samples sorted ([`Stats::median`]), odd and even counts alike.
        #[test]
        fn medians_by_selection_agree_with_sorting(
            raw in proptest::collection::vec((0u32..4, -50i64..50, 0i64..30), 0..80),
        ) {
            let mut samples: Vec<Sample> = raw
                .iter()
                .map(|&(g, api, lat)| Sample { kernel: g, op: 3 - g, api, lat })
                .collect();
            let got = medians(&mut samples, 4, |s| s.kernel);
            for g in 0..4u32 {
                let (mut api, mut lat) = (Stats::with_samples(), Stats::with_samples());
                for &(_, a, l) in raw.iter().filter(|r| r.0 == g) {
                    api.add(a);
                    lat.add(l);
                }
                proptest::prop_assert_eq!(got[g as usize], (api.median(), lat.median()));
            }
        }

        /// Span, longest queue, empty time and mean as the events give
        /// them, with ties between calls and op starts.
        #[test]
        fn queue_walk_agrees_with_events(
            raw in proptest::collection::vec((0i64..40, 1i64..20), 0..50),
        ) {
            let pairs: Vec<(i64, i64)> = raw.iter().map(|&(l, d)| (l, l + d)).collect();
            let q = queue_of(&pairs);
            let (span, max, hist) = by_events(&pairs);
            proptest::prop_assert_eq!(q.ops, pairs.len() as u64);
            proptest::prop_assert_eq!(q.span_ns, span);
            proptest::prop_assert_eq!(q.max, max);
            proptest::prop_assert_eq!(q.empty_ns, hist.get(&0).copied().unwrap_or(0));
            if span > 0 {
                let weighted: i64 = hist.iter().map(|(&k, &v)| k as i64 * v).sum();
                proptest::prop_assert_eq!(q.mean, Some(weighted as f64 / span as f64));
            }
        }
    }
}
