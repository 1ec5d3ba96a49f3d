//! `rprof steps`: training steps and where their time goes.
//!
//! Steps are the PyTorch profiler's `ProfilerStep#N` ranges, or NVTX /
//! annotation ranges whose name matches a pattern. Each step is aligned to
//! the GPU work it launched by the TensorBoard plugin's rule
//! ([`align`]), and its wall time is split in the plugin's priority order
//! Kernel > Memcpy > Memset > Communication > Runtime > DataLoader > CPU
//! exec > Other, each category counting only time no higher one covers, so
//! that the categories add up to the step time exactly. Definitions:
//! docs/reports.md, "Steps".

use std::io::{self, Write};

use regex::Regex;
use rprof_model::Intervals;
use rprof_model::{MemKind, Source, Trace};
use rprof_model::{median_of_sorted, percentile_of_sorted};
use serde::Serialize;

use crate::host::{self, OutFormat, safe};
use crate::text;

/// The plugin's names of communication operators (`NcclOpNameSet`,
/// `GlooOpNameSet`).
pub const COMM_OPS: [&str; 10] = [
    "nccl:broadcast",
    "nccl:reduce",
    "nccl:all_reduce",
    "nccl:all_gather",
    "nccl:reduce_scatter",
    "gloo:broadcast",
    "gloo:reduce",
    "gloo:all_reduce",
    "gloo:all_gather",
    "gloo:reduce_scatter",
];

/// Categories, in priority order.
pub const CATEGORIES: [&str; 8] = [
    "kernel",
    "memcpy",
    "memset",
    "communication",
    "runtime",
    "dataloader",
    "cpu_exec",
    "other",
];

/// Whether an operator is data loading for the plugin.
pub fn is_dataloader(name: &str) -> bool {
    (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__"))
        || name.starts_with("enumerate(DataPipe)#")
}

/// The default step names after `ProfilerStep#N`: `step`, `iteration`,
/// `iter`, optionally after `train`, optionally followed by a number.
pub const DEFAULT_STEP_PATTERN: &str =
    r"(?i)^(train[ _-]?)?(step|iteration|iter)([ _#:=-]*[0-9]+)?$";

/// How steps are found.
#[derive(Clone, Debug, Default)]
pub struct StepOptions {
    /// `--step REGEX` (searched anywhere in the range name).
    pub pattern: Option<Regex>,
}

/// One step.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Step {
    /// The range's name.
    pub name: String,
    /// The range as recorded on the host, ns.
    pub host_start_ns: i64,
    /// Host end, ns.
    pub host_end_ns: i64,
    /// Aligned start, ns.
    pub start_ns: i64,
    /// Aligned end, ns.
    pub end_ns: i64,
    /// `end_ns − start_ns`.
    pub total_ns: i64,
    /// Kernel time (not communication).
    pub kernel_ns: i64,
    /// Copies not under a kernel.
    pub memcpy_ns: i64,
    /// Sets not under a kernel or copy.
    pub memset_ns: i64,
    /// Communication kernels and operators not under the above.
    pub communication_ns: i64,
    /// CUDA runtime calls not under the above.
    pub runtime_ns: i64,
    /// Data loading not under the above.
    pub dataloader_ns: i64,
    /// Other CPU operators / ranges not under the above.
    pub cpu_exec_ns: i64,
    /// The rest.
    pub other_ns: i64,
    /// Time with at least one kernel (communication included) on any GPU.
    pub gpu_busy_ns: i64,
    /// `gpu_busy_ns / total_ns` (`None` for an empty step).
    pub gpu_util: Option<f64>,
    /// GPU operations launched from inside the host step.
    pub device_ops: u64,
    /// Outside the Tukey fences of the step times.
    pub outlier: bool,
}

impl Step {
    /// The eight categories, in priority order.
    pub fn categories(&self) -> [i64; 8] {
        [
            self.kernel_ns,
            self.memcpy_ns,
            self.memset_ns,
            self.communication_ns,
            self.runtime_ns,
            self.dataloader_ns,
            self.cpu_exec_ns,
            self.other_ns,
        ]
    }
}

/// Means over the steps.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Mean {
    /// Number of steps averaged.
    pub steps: usize,
    /// Mean step time, ns.
    pub total_ns: f64,
    /// Mean of each category, ns.
    pub kernel_ns: f64,
    /// See [`Step::memcpy_ns`].
    pub memcpy_ns: f64,
    /// See [`Step::memset_ns`].
    pub memset_ns: f64,
    /// See [`Step::communication_ns`].
    pub communication_ns: f64,
    /// See [`Step::runtime_ns`].
    pub runtime_ns: f64,
    /// See [`Step::dataloader_ns`].
    pub dataloader_ns: f64,
    /// See [`Step::cpu_exec_ns`].
    pub cpu_exec_ns: f64,
    /// See [`Step::other_ns`].
    pub other_ns: f64,
    /// Mean GPU busy time, ns.
    pub gpu_busy_ns: f64,
    /// Summed busy time / summed step time.
    pub gpu_util: Option<f64>,
}

/// Step-time spread.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Spread {
    /// Shortest step, ns.
    pub min_ns: i64,
    /// Median step, ns.
    pub median_ns: f64,
    /// Longest step, ns.
    pub max_ns: i64,
    /// Tukey fences (Q1 − 1.5·IQR, Q3 + 1.5·IQR), ns; `None` under 4 steps.
    pub fences_ns: Option<(f64, f64)>,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct StepsReport {
    /// Input file.
    pub input: String,
    /// How steps were found (`ProfilerStep#N ranges`, `--step 'iter'`, …).
    pub detection: String,
    /// Whether steps were aligned to their GPU work.
    pub aligned: bool,
    /// The steps, in start order.
    pub steps: Vec<Step>,
    /// Means over the steps (`None` without steps).
    pub mean: Option<Mean>,
    /// Spread of step times.
    pub spread: Option<Spread>,
    /// Names of the steps outside the fences.
    pub outliers: Vec<String>,
    /// Trailing steps dropped by the plugin's tail rule.
    pub dropped_tail_steps: Vec<String>,
    /// Why there are no figures, when there are none.
    pub na: Option<String>,
    /// What the input could not support, and other caveats.
    pub notes: Vec<String>,
}

/// Whether a range with this text may be a step without `--step`: an
/// operator's name begins its range's text, and both patterns want it to
/// begin with `P` (`ProfilerStep#`) or with `t`, `s` or `i` in either case
/// (the default pattern is anchored; non-ASCII letters such as `ſ` fold to
/// them). A cheap test that never says no to a step.
fn may_name_a_step(text: &str) -> bool {
    let first = text.bytes().next().map(|b| b.to_ascii_lowercase());
    matches!(first, Some(b'p' | b't' | b's' | b'i' | 0x80..))
}

/// Host step candidates: (range index) of the chosen ranges and how they
/// were chosen.
fn detect(trace: &Trace, opts: &StepOptions) -> (Vec<usize>, String) {
    // keep the outermost of nested matches on one thread, in start order
    let pick = |mut v: Vec<usize>| -> Vec<usize> {
        v.sort_by_key(|&i| {
            let r = &trace.ranges[i];
            (r.thread, r.start_ns, std::cmp::Reverse(r.end_ns), i)
        });
        let mut out: Vec<usize> = Vec::with_capacity(v.len());
        let mut last: Option<(u64, i64, i64)> = None;
        for i in v {
            let r = &trace.ranges[i];
            if let Some((t, s, e)) = last
                && t == r.thread
                && r.start_ns >= s
                && r.end_ns <= e
            {
                continue;
            }
            last = Some((r.thread, r.start_ns, r.end_ns));
            out.push(i);
        }
        out.sort_by_key(|&i| {
            let r = &trace.ranges[i];
            (r.start_ns, r.end_ns, r.thread, i)
        });
        out
    };
    if let Some(re) = &opts.pattern {
        let v = (0..trace.ranges.len())
            .filter(|&i| re.is_match(host::range_op_name(trace, &trace.ranges[i])))
            .collect();
        return (
            pick(v),
            format!("ranges matching --step '{}'", safe(re.as_str())),
        );
    }
    // one look at each name: ProfilerStep#N ranges, and (while there is
    // none) the ranges the default pattern matches
    let default = Regex::new(DEFAULT_STEP_PATTERN).ok();
    let (mut profiler, mut named) = (Vec::new(), Vec::new());
    for (i, r) in trace.ranges.iter().enumerate() {
        // most texts are passed over without parsing them (millions of ranges)
        if !may_name_a_step(trace.range_name(r)) {
            continue;
        }
        let n = host::range_op_name(trace, r);
        if n.starts_with("ProfilerStep#") {
            profiler.push(i);
        } else if profiler.is_empty() && default.as_ref().is_some_and(|re| re.is_match(n)) {
            named.push(i);
        }
    }
    if !profiler.is_empty() {
        return (
            pick(profiler),
            "ProfilerStep#N ranges (PyTorch profiler)".into(),
        );
    }
    if !named.is_empty() {
        return (
            pick(named),
            format!("ranges named like a step (default pattern '{DEFAULT_STEP_PATTERN}')"),
        );
    }
    (
        Vec::new(),
        "no ProfilerStep#N range and no range named step/iteration".into(),
    )
}

/// What [`align`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alignment {
    /// The aligned steps; `None` when no GPU operation was launched inside
    /// any step (then the host times stand).
    pub windows: Option<Vec<(i64, i64)>>,
    /// GPU operations matched to each step.
    pub matched: Vec<u64>,
    /// Trailing steps the plugin drops.
    pub dropped: usize,
}

/// The TensorBoard plugin's alignment of host steps to their GPU work
/// (`StepParser._find_device_steps` and `_update_steps_duration`).
///
/// `steps`: host (start, end), sorted by start. `launches`: (call start,
/// call end, first GPU start, last GPU end, number of GPU ops) of every
/// launch call that has GPU work, any order. `unlaunched_ends`: GPU ends of
/// operations whose call is unknown.
pub fn align(
    steps: &[(i64, i64)],
    launches: &mut [(i64, i64, i64, i64, u64)],
    unlaunched_ends: &[i64],
) -> Alignment {
    launches.sort_unstable();
    let n = steps.len();
    let mut dev: Vec<(i64, i64)> = vec![(i64::MAX, i64::MIN); n];
    let mut matched = vec![0u64; n];
    // a launch call is matched when it lies inside a step: start >= step
    // start and end <= step end (a call straddling a boundary is skipped)
    let mut matched_launch = vec![false; launches.len()];
    let (mut i_step, mut i_rt) = (0usize, 0usize);
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    while i_step < n && i_rt < launches.len() {
        let (ss, se) = steps[i_step];
        let (cs, ce, gs, ge, cnt) = launches[i_rt];
        if cs < ss {
            i_rt += 1;
        } else if ce <= se {
            lo = lo.min(gs);
            hi = hi.max(ge);
            matched[i_step] += cnt;
            matched_launch[i_rt] = true;
            i_rt += 1;
        } else if cs < se {
            i_rt += 1;
        } else {
            dev[i_step] = (lo, hi);
            i_step += 1;
            (lo, hi) = (i64::MAX, i64::MIN);
        }
    }
    if i_step < n {
        dev[i_step] = (lo, hi);
    }
    if !matched.iter().any(|&m| m > 0) {
        return Alignment {
            windows: None,
            matched,
            dropped: 0,
        };
    }
    let mut prev = steps[0].0;
    if dev[0].0 != i64::MAX {
        // GPU work not launched inside any step that ended before the first
        // step's GPU work began
        let first = dev[0].0;
        for (k, l) in launches.iter().enumerate() {
            if !matched_launch[k] && l.3 < first {
                prev = prev.max(l.3);
            }
        }
        for &e in unlaunched_ends {
            if e < first {
                prev = prev.max(e);
            }
        }
    }
    let mut out = Vec::with_capacity(n);
    for (i, &(hs, he)) in steps.iter().enumerate() {
        let start = prev.max(hs);
        let end = if dev[i].0 == i64::MAX {
            he.max(start)
        } else {
            he.max(dev[i].1).max(start)
        };
        out.push((start, end));
        prev = end;
    }
    let mut dropped = 0;
    if n > 1
        && let Some(last) = matched.iter().rposition(|&m| m > 0)
    {
        let mut keep = last + 1;
        if last > 0 && (matched[last - 1] as f64) * 0.8 > matched[last] as f64 {
            keep = last;
        }
        dropped = n - keep;
    }
    Alignment {
        windows: Some(out),
        matched,
        dropped,
    }
}

/// Add `[s, e)` to a list of intervals on its way to
/// [`Intervals::from_unsorted`], folded into the last one when it starts
/// inside it: the union is the same, the list shorter (an interval that
/// covers nothing folds into nothing).
fn push_merged(v: &mut Vec<(i64, i64)>, (s, e): (i64, i64)) {
    match v.last_mut() {
        Some(last) if last.0 <= s && s <= last.1 && last.0 < last.1 => last.1 = last.1.max(e),
        _ => v.push((s, e)),
    }
}

/// Compute the report. `launch_op[i]`: the innermost range enclosing
/// launch call `i` (from rprof-trace's attribution), when known.
pub fn compute(trace: &Trace, opts: &StepOptions, launch_op: &[Option<u32>]) -> StepsReport {
    let (chosen, detection) = detect(trace, opts);
    let mut report = StepsReport {
        input: trace.path.display().to_string(),
        detection,
        aligned: false,
        steps: Vec::new(),
        mean: None,
        spread: None,
        outliers: Vec::new(),
        dropped_tail_steps: Vec::new(),
        na: None,
        notes: trace.missing.clone(),
    };
    if chosen.is_empty() {
        report.na = Some(match &opts.pattern {
            Some(_) => "no range matches the --step pattern".into(),
            None => "no steps: the trace has no ProfilerStep#N range and no range named step/iteration (give --step REGEX)".into(),
        });
        return report;
    }
    let kineto = trace.source == Source::Kineto;
    let host: Vec<(i64, i64)> = chosen
        .iter()
        .map(|&i| {
            let r = &trace.ranges[i];
            (r.start_ns, r.end_ns.max(r.start_ns))
        })
        .collect();
    // GPU work per launch call
    let ops = host::gpu_ops(trace);
    let mut per_launch: Vec<(i64, i64, u64)> = vec![(i64::MAX, i64::MIN, 0); trace.launches.len()];
    let mut unlaunched = Vec::new();
    // the plugin reads `cuda_runtime` calls only: on Kineto input, work
    // launched by a driver call (`cuLaunchKernel`) is matched to no step
    let is_driver = |name: &str| name.starts_with("cu") && !name.starts_with("cuda");
    let runtime_launch = |l: &u32| {
        !kineto
            || trace
                .launches
                .get(*l as usize)
                .and_then(|x| x.api)
                .is_none_or(|a| !is_driver(trace.strings.get(a)))
    };
    for op in &ops {
        match op
            .launch
            .filter(runtime_launch)
            .and_then(|l| per_launch.get_mut(l as usize))
        {
            Some(p) => {
                p.0 = p.0.min(op.start_ns);
                p.1 = p.1.max(op.end_ns);
                p.2 += 1;
            }
            None => unlaunched.push(op.end_ns),
        }
    }
    // (each list of millions is let go once used: held together with the
    // categories' raw intervals they were 0.6 GB at the peak of `rprof
    // steps` on 3 M kernels and 25,500 steps)
    drop(ops);
    let mut calls: Vec<(i64, i64, i64, i64, u64)> = trace
        .launches
        .iter()
        .zip(&per_launch)
        .filter(|(_, p)| p.2 > 0)
        .map(|(l, p)| (l.start_ns, l.end_ns, p.0, p.1, p.2))
        .collect();
    drop(per_launch);
    let Alignment {
        windows: aligned,
        matched,
        dropped,
    } = align(&host, &mut calls, &unlaunched);
    drop((calls, unlaunched));
    report.aligned = aligned.is_some();
    let windows = aligned.unwrap_or_else(|| host.clone());
    if !report.aligned {
        report.notes.push(
            "no GPU operation was launched inside a step: steps keep their host times".into(),
        );
    }
    let keep = windows.len() - dropped;
    for &i in &chosen[keep..] {
        report
            .dropped_tail_steps
            .push(host::range_op_name(trace, &trace.ranges[i]).to_owned());
    }

    // categories over the whole trace
    let is_comm_name = |n: &str| COMM_OPS.contains(&n);
    let comm_kernel = |launch: Option<u32>, name: &str| -> bool {
        let by_op = launch
            .and_then(|l| launch_op.get(l as usize).copied().flatten())
            .and_then(|r| trace.ranges.get(r as usize))
            .is_some_and(|r| is_comm_name(host::range_op_name(trace, r)));
        by_op
            || (!kineto
                && name
                    .get(..4)
                    .is_some_and(|p| p.eq_ignore_ascii_case("nccl")))
    };
    // each category's intervals, merged as they come where they touch the
    // last one kept (a thread's nested ranges come outermost first: its
    // ranges fold into few), and as a merged set once complete
    let mut kern = Vec::new();
    let mut comm = Vec::new();
    let mut all_kernels = Vec::new();
    for k in &trace.kernels {
        let iv = (k.start_ns, k.end_ns);
        push_merged(&mut all_kernels, iv);
        if comm_kernel(k.launch.get(), trace.strings.get(k.name)) {
            push_merged(&mut comm, iv);
        } else {
            push_merged(&mut kern, iv);
        }
    }
    let busy = Intervals::from_unsorted(all_kernels);
    let kern = Intervals::from_unsorted(kern);
    let mut memcpy = Vec::new();
    let mut memset = Vec::new();
    for m in &trace.memops {
        match m.kind {
            MemKind::Copy(_) => push_merged(&mut memcpy, (m.start_ns, m.end_ns)),
            MemKind::Set => push_merged(&mut memset, (m.start_ns, m.end_ns)),
        }
    }
    let (memcpy, memset) = (
        Intervals::from_unsorted(memcpy),
        Intervals::from_unsorted(memset),
    );
    let mut runtime = Vec::new();
    if trace.api_calls.is_empty() && !trace.launch_calls_apart {
        for l in &trace.launches {
            push_merged(&mut runtime, (l.start_ns, l.end_ns));
        }
    } else {
        for c in trace.each_api_call() {
            let name = trace.strings.get(c.name);
            // the plugin reads `cuda_runtime` events only, not `cuda_driver`
            if kineto && is_driver(name) {
                continue;
            }
            push_merged(&mut runtime, (c.start_ns, c.end_ns));
        }
    }
    let runtime = Intervals::from_unsorted(runtime);
    let chosen_set: std::collections::HashSet<usize> = chosen.iter().copied().collect();
    let mut loader = Vec::new();
    let mut cpu = Vec::new();
    for (i, r) in trace.ranges.iter().enumerate() {
        if chosen_set.contains(&i) {
            continue;
        }
        let name = host::range_op_name(trace, r);
        if name.starts_with("ProfilerStep#") {
            continue;
        }
        let iv = (r.start_ns, r.end_ns);
        if is_dataloader(name) {
            push_merged(&mut loader, iv);
        } else if is_comm_name(name) {
            push_merged(&mut comm, iv);
        } else {
            push_merged(&mut cpu, iv);
        }
    }
    let windows = &windows[..keep];
    let mut avail = Intervals::from_unsorted(windows.to_vec());
    let mut cats: Vec<Intervals> = Vec::with_capacity(8);
    let (comm, loader, cpu) = (
        Intervals::from_unsorted(comm),
        Intervals::from_unsorted(loader),
        Intervals::from_unsorted(cpu),
    );
    for set in [kern, memcpy, memset, comm, runtime, loader, cpu] {
        let c = set.intersect(&avail);
        avail = avail.subtract(&c);
        cats.push(c);
    }
    cats.push(avail);

    for (k, &(s, e)) in windows.iter().enumerate() {
        let c: Vec<i64> = cats.iter().map(|iv| iv.covered_in(s, e)).collect();
        let total = e.saturating_sub(s);
        let gpu_busy = busy.covered_in(s, e);
        let r = &trace.ranges[chosen[k]];
        report.steps.push(Step {
            name: host::range_op_name(trace, r).to_owned(),
            host_start_ns: host[k].0,
            host_end_ns: host[k].1,
            start_ns: s,
            end_ns: e,
            total_ns: total,
            kernel_ns: c[0],
            memcpy_ns: c[1],
            memset_ns: c[2],
            communication_ns: c[3],
            runtime_ns: c[4],
            dataloader_ns: c[5],
            cpu_exec_ns: c[6],
            other_ns: c[7],
            gpu_busy_ns: gpu_busy,
            gpu_util: (total > 0).then(|| gpu_busy as f64 / total as f64),
            device_ops: matched[k],
            outlier: false,
        });
    }
    finish(&mut report);
    if trace.kernels.is_empty() && trace.memops.is_empty() {
        report
            .notes
            .push("the trace has no GPU operations: kernel, copy and set times are 0".into());
    }
    report
}

/// Mean, spread and outliers of the steps.
fn finish(report: &mut StepsReport) {
    let n = report.steps.len();
    if n == 0 {
        report.na = Some("every step was dropped".into());
        return;
    }
    let mean = |f: &dyn Fn(&Step) -> i64| -> f64 {
        report.steps.iter().map(|s| f(s) as i128).sum::<i128>() as f64 / n as f64
    };
    let sum_total: i128 = report.steps.iter().map(|s| s.total_ns as i128).sum();
    let sum_busy: i128 = report.steps.iter().map(|s| s.gpu_busy_ns as i128).sum();
    report.mean = Some(Mean {
        steps: n,
        total_ns: mean(&|s| s.total_ns),
        kernel_ns: mean(&|s| s.kernel_ns),
        memcpy_ns: mean(&|s| s.memcpy_ns),
        memset_ns: mean(&|s| s.memset_ns),
        communication_ns: mean(&|s| s.communication_ns),
        runtime_ns: mean(&|s| s.runtime_ns),
        dataloader_ns: mean(&|s| s.dataloader_ns),
        cpu_exec_ns: mean(&|s| s.cpu_exec_ns),
        other_ns: mean(&|s| s.other_ns),
        gpu_busy_ns: mean(&|s| s.gpu_busy_ns),
        gpu_util: (sum_total > 0).then(|| sum_busy as f64 / sum_total as f64),
    });
    let mut sorted: Vec<i64> = report.steps.iter().map(|s| s.total_ns).collect();
    sorted.sort_unstable();
    let fences = if n >= 4 {
        match (
            percentile_of_sorted(&sorted, 25.0),
            percentile_of_sorted(&sorted, 75.0),
        ) {
            (Some(q1), Some(q3)) => Some((q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1))),
            _ => None,
        }
    } else {
        None
    };
    if let Some((lo, hi)) = fences {
        for s in &mut report.steps {
            let t = s.total_ns as f64;
            if t < lo || t > hi {
                s.outlier = true;
                report.outliers.push(s.name.clone());
            }
        }
    }
    report.spread = Some(Spread {
        min_ns: sorted[0],
        median_ns: median_of_sorted(&sorted).unwrap_or(0.0),
        max_ns: sorted[n - 1],
        fences_ns: fences,
    });
}

/// Write the report.
pub fn write<W: Write>(
    w: &mut W,
    r: &StepsReport,
    format: OutFormat,
    name_width: usize,
) -> io::Result<()> {
    match format {
        OutFormat::Json => {
            serde_json::to_writer_pretty(&mut *w, r).map_err(io::Error::other)?;
            writeln!(w)
        }
        OutFormat::Csv => write_csv(w, r),
        OutFormat::Table => write_table(w, r, name_width),
    }
}

fn write_csv<W: Write>(w: &mut W, r: &StepsReport) -> io::Result<()> {
    let mut c = csv::Writer::from_writer(w);
    let mut head = vec!["name", "start_ns", "end_ns", "total_ns"];
    let cat_cols: Vec<String> = CATEGORIES.iter().map(|c| format!("{c}_ns")).collect();
    head.extend(cat_cols.iter().map(String::as_str));
    head.extend(["gpu_busy_ns", "gpu_util", "device_ops", "outlier"]);
    c.write_record(&head)?;
    let util = |u: Option<f64>| u.map_or(String::new(), |u| format!("{u:.6}"));
    for s in &r.steps {
        let mut row = vec![
            s.name.clone(),
            s.start_ns.to_string(),
            s.end_ns.to_string(),
            s.total_ns.to_string(),
        ];
        row.extend(s.categories().iter().map(i64::to_string));
        row.extend([
            s.gpu_busy_ns.to_string(),
            util(s.gpu_util),
            s.device_ops.to_string(),
            s.outlier.to_string(),
        ]);
        c.write_record(&row)?;
    }
    if let Some(m) = &r.mean {
        let mut row = vec![
            "mean".to_owned(),
            String::new(),
            String::new(),
            format!("{:.1}", m.total_ns),
        ];
        for v in [
            m.kernel_ns,
            m.memcpy_ns,
            m.memset_ns,
            m.communication_ns,
            m.runtime_ns,
            m.dataloader_ns,
            m.cpu_exec_ns,
            m.other_ns,
            m.gpu_busy_ns,
        ] {
            row.push(format!("{v:.1}"));
        }
        row.extend([util(m.gpu_util), String::new(), String::new()]);
        c.write_record(&row)?;
    }
    c.flush()
}

fn write_table<W: Write>(w: &mut W, r: &StepsReport, name_width: usize) -> io::Result<()> {
    if let Some(na) = &r.na {
        writeln!(w, "{}: steps: na ({na})", safe(&r.input))?;
        for n in &r.notes {
            writeln!(w, "note: {}", safe(n))?;
        }
        return Ok(());
    }
    writeln!(
        w,
        "{}: {} steps from {}, {}",
        safe(&r.input),
        r.steps.len(),
        r.detection,
        if r.aligned {
            "aligned to the GPU work they launched (TensorBoard plugin rule)"
        } else {
            "host times (no GPU work launched inside a step)"
        }
    )?;
    let mut t = text::table(
        &[
            "step",
            "start ms",
            "total ms",
            "kernel ms",
            "memcpy ms",
            "memset ms",
            "comm ms",
            "runtime ms",
            "dataload ms",
            "cpu exec ms",
            "other ms",
            "gpu util%",
            "outlier",
        ],
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    );
    let zero = r.steps.first().map_or(0, |s| s.start_ns);
    for s in &r.steps {
        let mut row = vec![
            text::clip(&safe(&s.name), name_width),
            text::ms(s.start_ns.saturating_sub(zero)),
            text::ms(s.total_ns),
        ];
        row.extend(s.categories().iter().map(|&v| text::ms(v)));
        row.push(text::pct(s.gpu_util, 1));
        row.push(if s.outlier { "yes" } else { "" }.to_owned());
        t.add_row(row);
    }
    if let Some(m) = &r.mean {
        let f = |v: f64| text::ms(v.round() as i64);
        t.add_row(vec![
            "mean".to_owned(),
            String::new(),
            f(m.total_ns),
            f(m.kernel_ns),
            f(m.memcpy_ns),
            f(m.memset_ns),
            f(m.communication_ns),
            f(m.runtime_ns),
            f(m.dataloader_ns),
            f(m.cpu_exec_ns),
            f(m.other_ns),
            text::pct(m.gpu_util, 1),
            String::new(),
        ]);
    }
    w.write_all(text::render(&t).as_bytes())?;
    if let Some(s) = &r.spread {
        write!(
            w,
            "step time: min {} ms, median {} ms, max {} ms",
            text::ms(s.min_ns),
            text::ms(s.median_ns.round() as i64),
            text::ms(s.max_ns)
        )?;
        match s.fences_ns {
            Some(_) if r.outliers.is_empty() => writeln!(w, "; no outliers (Tukey 1.5 IQR)")?,
            Some(_) => writeln!(
                w,
                "; outliers (Tukey 1.5 IQR): {}",
                r.outliers
                    .iter()
                    .map(|n| safe(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            )?,
            None => writeln!(w, "; outliers: na (fewer than 4 steps)")?,
        }
    }
    if !r.dropped_tail_steps.is_empty() {
        writeln!(
            w,
            "dropped {} trailing step(s) whose GPU work the profiler may not have captured (plugin rule): {}",
            r.dropped_tail_steps.len(),
            r.dropped_tail_steps
                .iter()
                .map(|n| safe(n))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    writeln!(
        w,
        "Each category counts only time no category to its left covers, so a row sums to its total. gpu util% = time with a kernel running on any GPU / the step's total."
    )?;
    for n in &r.notes {
        writeln!(w, "note: {}", safe(n))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Folding intervals into the last one kept gives the set the
        /// whole list gives, for any order, nesting, touching, empty and
        /// reversed intervals.
        #[test]
        fn merged_pushes_are_the_whole_list(
            ivs in proptest::collection::vec((-20i64..60, -20i64..60), 0..50),
        ) {
            let mut folded = Vec::new();
            for &iv in &ivs {
                push_merged(&mut folded, iv);
            }
            proptest::prop_assert!(folded.len() <= ivs.len());
            let (got, want) = (Intervals::from_unsorted(folded), Intervals::from_unsorted(ivs));
            proptest::prop_assert_eq!(got.as_slice(), want.as_slice());
        }
    }

    /// Nested ranges given outermost first fold into one interval.
    #[test]
    fn nested_ranges_fold_into_one() {
        let mut v = Vec::new();
        for iv in [
            (0, 100),
            (10, 50),
            (20, 30),
            (60, 100),
            (100, 120),
            (130, 140),
        ] {
            push_merged(&mut v, iv);
        }
        assert_eq!(v, [(0, 120), (130, 140)]);
    }

    #[test]
    fn alignment_follows_the_plugin() {
        // two host steps [0,100) and [100,200); step 0 launches GPU work that
        // runs [150,260), step 1 launches [270,300)
        let steps = [(0, 100), (100, 200)];
        let mut calls = vec![(10, 20, 150, 260, 1), (110, 120, 270, 300, 2)];
        let a = align(&steps, &mut calls, &[]);
        assert_eq!(a.windows, Some(vec![(0, 260), (260, 300)]));
        assert_eq!(a.matched, vec![1, 2]);
        assert_eq!(a.dropped, 0);
    }

    #[test]
    fn tail_steps_with_little_work_are_dropped() {
        let steps = [(0, 100), (100, 200), (200, 300)];
        let mut calls = vec![
            (10, 20, 30, 40, 10),
            (110, 120, 130, 140, 10),
            (210, 220, 230, 240, 7),
        ];
        // 10 * 0.8 > 7: the last step goes
        assert_eq!(align(&steps, &mut calls, &[]).dropped, 1);
    }

    #[test]
    fn straddling_calls_and_earlier_work() {
        // a call straddling the step start is not matched; unmatched GPU work
        // ending before step 0's first GPU op moves step 0's start
        let steps = [(100, 200)];
        let mut calls = vec![(90, 110, 150, 160, 1), (120, 130, 170, 180, 1)];
        let a = align(&steps, &mut calls, &[]);
        assert_eq!(a.matched, vec![1]);
        assert_eq!(a.windows, Some(vec![(160, 200)]));
    }

    #[test]
    fn dataloader_names() {
        assert!(is_dataloader(
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
        ));
        assert!(!is_dataloader("enumerate(DataLoader)#_X.__init__"));
        assert!(is_dataloader("enumerate(DataPipe)#Mapper"));
    }

    #[test]
    fn the_step_prefilter_never_drops_a_step() {
        let re = Regex::new(DEFAULT_STEP_PATTERN).unwrap();
        let mut seen = 0;
        // every first character up to U+2200, before step-like endings
        for c in (0u32..0x2200).filter_map(char::from_u32) {
            for rest in [
                "tep",
                "tep 3",
                "teration#2",
                "ter_7",
                "rain_step",
                "rofilerStep#4",
            ] {
                for tail in ["", ", seq = 3, op_id = 9", ", sizes = [[1]]"] {
                    let text = format!("{c}{rest}{tail}");
                    let name = rprof_model::stock::parse_head(&text).name;
                    if name.starts_with("ProfilerStep#") || re.is_match(name) {
                        seen += 1;
                        assert!(may_name_a_step(&text), "{text:?}");
                    }
                }
            }
        }
        // cases of s, S, ſ, t, T, i, I and P at least
        assert!(seen >= 8 * 3, "{seen}");
        assert!(!may_name_a_step("aten::mul, seq = 3"));
    }
}
