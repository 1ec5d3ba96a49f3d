//! `rprof diff`: two runs side by side, per key (op + direction + input
//! shapes by default), with a Mann-Whitney U test over the per-step times
//! so that run-to-run noise is not called a regression, and the whole-run
//! figures (step time, utilization, compute / communication / idle).
//!
//! Flow: each run's records go through the op models as in `rprof
//! summary` ([`crate::model`]) and into a [`Side`], which groups them by
//! the key, per step; [`compare`] joins the two sides into a
//! [`DiffReport`]; [`write_table`], [`write_csv`] and [`write_json`]
//! print it.
//!
//! Definitions (docs/reports.md, "rprof diff"):
//! - Δ = test − base; Δ % = Δ / base × 100 (`None` when the base is 0);
//! - *share of Δ* = the key's Δ / the total Δ (test's summed kernel time
//!   − base's) × 100, signed: the shares of all keys add up to 100, and a
//!   key can explain more than 100 % when others got faster;
//! - a *step* is a range whose text matches the step pattern
//!   (`ProfilerStep#N` by default); a kernel belongs to the outermost step
//!   range enclosing its launch; per key and step, the summed duration of
//!   the key's kernels in the step (0 when it has none);
//! - the p-value is the two-sided Mann-Whitney U test of the base's
//!   per-step times against the test's ([`mwu`]); *significant* means
//!   p < α.

pub mod mwu;
mod render;

use std::collections::{BTreeSet, HashMap};

use regex::Regex;
use rprof_model::FastMap;
use rprof_model::Intervals;
use rprof_model::KernelRef;
use rprof_ops::KernelEstimate;
use serde::Serialize;

use crate::model::{known_bytes, known_flops};
pub use render::{CSV_HEADER, write_csv, write_json, write_table};

/// What to key kernels by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// Op, direction and the input shapes (the op model's params).
    OpDirShape,
    /// Op and the input shapes.
    OpShape,
    /// Op.
    Op,
    /// Layer names (`layer:` NVTX ranges), outermost first.
    Layer,
    /// Kernel short name.
    Kernel,
    /// The innermost NVTX range (or CPU op) enclosing the launch.
    Nvtx,
}

impl Key {
    /// Every key, in `--help` order.
    pub const ALL: [Key; 6] = [
        Key::OpDirShape,
        Key::OpShape,
        Key::Op,
        Key::Layer,
        Key::Kernel,
        Key::Nvtx,
    ];

    /// The name users type after `--by`.
    pub fn name(self) -> &'static str {
        match self {
            Key::OpDirShape => "op-dir-shape",
            Key::OpShape => "op-shape",
            Key::Op => "op",
            Key::Layer => "layer",
            Key::Kernel => "kernel",
            Key::Nvtx => "nvtx",
        }
    }

    /// One line for `--help`.
    pub fn help(self) -> &'static str {
        match self {
            Key::OpDirShape => "op, fprop/bprop and input shapes (the op model's params)",
            Key::OpShape => "op and input shapes",
            Key::Op => "op, as `rprof prof` prints it",
            Key::Layer => "layer names (layer: NVTX ranges), outermost first, joined by ':'",
            Key::Kernel => "kernel short name",
            Key::Nvtx => "innermost NVTX range (or CPU op) enclosing the launch",
        }
    }

    /// The key with this name.
    pub fn from_name(s: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|k| k.name() == s)
    }

    /// What the key is, for headings.
    pub fn describe(self) -> &'static str {
        match self {
            Key::OpDirShape => "op + direction + input shapes",
            Key::OpShape => "op + input shapes",
            Key::Op => "op",
            Key::Layer => "layer",
            Key::Kernel => "kernel name",
            Key::Nvtx => "innermost NVTX range",
        }
    }
}

/// The label of kernels that have no value for the key.
pub const NONE: &str = "(none)";

/// The default step pattern: the PyTorch profiler's step ranges.
pub const DEFAULT_STEP_PATTERN: &str = r"^ProfilerStep#\d+";

/// Most per-step values written in the rows (rows × (base + test steps)).
pub const MAX_STEP_CELLS: usize = 10_000_000;

/// Most steps kept per run; kernels of further steps count as outside any
/// step (and the report says how many).
pub const MAX_STEPS: usize = 100_000;

/// Which ranges are steps.
#[derive(Clone, Debug)]
pub struct StepMatcher(Regex);

impl StepMatcher {
    /// A matcher for `pattern` (a regular expression searched in the
    /// range text); the message says what is wrong with a bad one.
    pub fn new(pattern: &str) -> Result<StepMatcher, String> {
        Regex::new(pattern)
            .map(StepMatcher)
            .map_err(|e| format!("--step {pattern:?}: {e}"))
    }

    /// True when the range text `s` is a step.
    pub fn is_match(&self, s: &str) -> bool {
        self.0.is_match(s)
    }

    /// The pattern.
    pub fn pattern(&self) -> &str {
        self.0.as_str()
    }
}

/// What one run's input says about itself beyond its kernels.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunInfo {
    /// File name.
    pub name: String,
    /// GPUs the input describes, as `ORDINAL: NAME`.
    pub devices: Vec<String>,
    /// Rank (PyTorch-profiler `distributedInfo`).
    pub rank: Option<i64>,
    /// Number of ranks.
    pub world_size: Option<i64>,
}

/// A step range of a profile: its process, times and text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct StepRange {
    /// Start, ns (first: ranges sort by time).
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// Process of the thread that pushed it.
    pub pid: Option<u64>,
    /// The range text.
    pub text: String,
}

#[derive(Clone, Debug)]
struct Group {
    label: String,
    count: u64,
    total_ns: i128,
    flops: i128,
    flops_ns: i128,
    flops_n: u64,
    bytes: i128,
    bytes_ns: i128,
    bytes_n: u64,
    /// (step, ns) in arrival order; merged in [`Side::finish`].
    per_step: Vec<(u32, i128)>,
}

/// One kernel's place on the timeline.
#[derive(Clone, Copy, Debug)]
struct Span {
    device: i64,
    start_ns: i64,
    end_ns: i64,
    comm: bool,
}

/// True for communication kernels: NCCL's (`nccl` in the name, any case).
pub fn is_comm_kernel(name: &str) -> bool {
    name.as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"nccl"))
}

/// One run, grouped by a key and by step, a record at a time.
#[derive(Debug)]
pub struct Side {
    key: Key,
    steps: StepMatcher,
    groups: Vec<Group>,
    index: FastMap<String, u32>,
    step_names: Vec<String>,
    step_index: HashMap<String, u32>,
    kernels: u64,
    total_ns: i128,
    outside_kernels: u64,
    outside_ns: i128,
    steps_dropped: u64,
    /// Step ranges past [`MAX_STEPS`] (their kernels count as outside).
    ranges_dropped: u64,
    /// Step ranges per process: (start, end, step), by start.
    step_ranges: HashMap<Option<u64>, Vec<(i64, i64, u32)>>,
    /// True once the profile's step ranges are known: the launching
    /// thread's stack then adds nothing.
    ranges_known: bool,
    /// Each step's summed range time, ns (`None`: no range times).
    step_time_ns: Vec<Option<i64>>,
    spans: Vec<Span>,
    untimed: u64,
    processes: BTreeSet<u64>,
    scratch: String,
}

impl Side {
    /// An empty run keyed by `key`, with steps found by `steps`.
    pub fn new(key: Key, steps: &StepMatcher) -> Side {
        Side {
            key,
            steps: steps.clone(),
            groups: Vec::new(),
            index: FastMap::default(),
            step_names: Vec::new(),
            step_index: HashMap::new(),
            kernels: 0,
            total_ns: 0,
            outside_kernels: 0,
            outside_ns: 0,
            steps_dropped: 0,
            ranges_dropped: 0,
            step_ranges: HashMap::new(),
            ranges_known: false,
            step_time_ns: Vec::new(),
            spans: Vec::new(),
            untimed: 0,
            processes: BTreeSet::new(),
            scratch: String::new(),
        }
    }

    /// The key's label for a kernel, in `self.scratch`.
    fn label(&mut self, rec: KernelRef<'_, '_>, est: &KernelEstimate<'_>) {
        let s = &mut self.scratch;
        s.clear();
        let op_or_kernel = |s: &mut String| {
            if est.op.is_empty() {
                // no op: the kernel name, so that unknown kernels are not
                // lumped into one key
                s.push_str("kernel:");
                s.push_str(&rec.short_name);
            } else {
                s.push_str(est.op);
            }
        };
        let params = |s: &mut String| {
            let p = est.estimate.params.trim_end_matches(',');
            if !p.is_empty() && p != "na=na" {
                s.push(' ');
                s.push_str(p);
            }
        };
        match self.key {
            Key::OpDirShape => {
                op_or_kernel(s);
                if !rec.dir.as_str().is_empty() {
                    s.push(' ');
                    s.push_str(rec.dir.as_str());
                }
                params(s);
            }
            Key::OpShape => {
                op_or_kernel(s);
                params(s);
            }
            Key::Op => op_or_kernel(s),
            Key::Layer => {
                for (i, l) in est.layer.iter().enumerate() {
                    if i > 0 {
                        s.push(':');
                    }
                    s.push_str(l);
                }
            }
            Key::Kernel => s.push_str(&rec.short_name),
            Key::Nvtx => s.push_str(rec.stack().last().map_or("", |x| x.as_ref())),
        }
        if s.is_empty() {
            s.push_str(NONE);
        }
    }

    /// The step ranges of a profile (call before adding kernels): a
    /// kernel whose launch call starts inside one of its process's step
    /// ranges belongs to that step, whichever thread launched it (the
    /// backward pass runs on another thread than the step range's). Steps
    /// are numbered in time order. A text a process repeats (an NVTX
    /// `train_step` per iteration) makes one step per occurrence, the k-th
    /// named `TEXT #k` from the second on; the k-th occurrences in several
    /// processes (ranks in one file) are one step.
    pub fn set_step_ranges(&mut self, mut ranges: Vec<StepRange>) {
        self.ranges_known = true;
        ranges.sort();
        let mut seen: HashMap<(Option<u64>, &str), u64> = HashMap::new();
        for r in &ranges {
            let k = seen.entry((r.pid, r.text.as_str())).or_insert(0);
            *k += 1;
            let i = if *k == 1 {
                self.step_id(&r.text)
            } else {
                self.step_id(&format!("{} #{k}", r.text))
            };
            let Some(i) = i else {
                self.ranges_dropped += 1;
                continue;
            };
            if let Some(t) = self.step_time_ns.get_mut(i as usize) {
                *t = Some(
                    t.unwrap_or(0)
                        .saturating_add(r.end_ns.saturating_sub(r.start_ns)),
                );
            }
            self.step_ranges
                .entry(r.pid)
                .or_default()
                .push((r.start_ns, r.end_ns, i));
        }
    }

    /// The number of step `text`, new ones numbered in turn (`None` past
    /// [`MAX_STEPS`]).
    fn step_id(&mut self, text: &str) -> Option<u32> {
        if let Some(&i) = self.step_index.get(text) {
            return Some(i);
        }
        if self.step_names.len() >= MAX_STEPS {
            return None;
        }
        let i = self.step_names.len() as u32;
        self.step_names.push(text.to_owned());
        self.step_index.insert(text.to_owned(), i);
        self.step_time_ns.push(None);
        Some(i)
    }

    /// The step a kernel belongs to: the step range of its process in
    /// which its launch call starts, else the outermost step range
    /// enclosing the launch on the launching thread (record files).
    fn step_of(&mut self, rec: KernelRef<'_, '_>) -> Option<u32> {
        if let Some(list) = self.step_ranges.get(&rec.pid)
            && let Some(t) = rec.launch_start_ns.or(rec.start_ns)
        {
            let n = list.partition_point(|r| r.0 <= t);
            if let Some(&(_, end, i)) = n.checked_sub(1).and_then(|n| list.get(n))
                && t < end
            {
                return Some(i);
            }
        }
        if self.ranges_known {
            return None;
        }
        let text = rec.stack().iter().find(|t| self.steps.is_match(t))?;
        let id = self.step_id(text);
        if id.is_none() {
            self.steps_dropped += 1;
        }
        id
    }

    /// Count one kernel.
    pub fn add(&mut self, rec: KernelRef<'_, '_>, est: &KernelEstimate<'_>) {
        let dur = rec.duration_ns.max(0);
        self.kernels += 1;
        self.total_ns += i128::from(dur);
        if let Some(p) = rec.pid {
            self.processes.insert(p);
        }
        match (rec.start_ns, rec.end_ns) {
            (Some(s), Some(e)) if e >= s => self.spans.push(Span {
                device: rec.device,
                start_ns: s,
                end_ns: e,
                comm: is_comm_kernel(&rec.short_name),
            }),
            _ => self.untimed += 1,
        }
        let step = self.step_of(rec);
        if step.is_none() {
            self.outside_kernels += 1;
            self.outside_ns += i128::from(dur);
        }
        self.label(rec, est);
        let g = match self.index.get(self.scratch.as_str()) {
            Some(&i) => i as usize,
            None => {
                self.groups.push(Group {
                    label: self.scratch.clone(),
                    count: 0,
                    total_ns: 0,
                    flops: 0,
                    flops_ns: 0,
                    flops_n: 0,
                    bytes: 0,
                    bytes_ns: 0,
                    bytes_n: 0,
                    per_step: Vec::new(),
                });
                let i = self.groups.len() - 1;
                self.index.insert(self.scratch.clone(), i as u32);
                i
            }
        };
        let Some(g) = self.groups.get_mut(g) else {
            return;
        };
        g.count += 1;
        g.total_ns += i128::from(dur);
        if let Some(f) = known_flops(&est.estimate) {
            g.flops = g.flops.saturating_add(f);
            g.flops_ns += i128::from(dur);
            g.flops_n += 1;
        }
        if let Some(b) = known_bytes(&est.estimate) {
            g.bytes = g.bytes.saturating_add(b);
            g.bytes_ns += i128::from(dur);
            g.bytes_n += 1;
        }
        if let Some(s) = step {
            match g.per_step.last_mut() {
                Some(last) if last.0 == s => last.1 += i128::from(dur),
                _ => g.per_step.push((s, i128::from(dur))),
            }
        }
    }

    /// The run's groups and figures; `info` is what the input says about
    /// itself (devices, rank).
    pub fn finish(mut self, info: RunInfo) -> SideData {
        let step_time_ns = std::mem::take(&mut self.step_time_ns);
        let n_steps = self.step_names.len();
        let mut step_kernel_ns = vec![0i128; n_steps];
        let groups = self
            .groups
            .into_iter()
            .map(|mut g| {
                // (step, ns) arrive in runs: sort and merge
                g.per_step.sort_unstable_by_key(|e| e.0);
                let mut merged: Vec<(u32, i128)> = Vec::with_capacity(g.per_step.len());
                for (s, ns) in g.per_step {
                    if let Some(d) = step_kernel_ns.get_mut(s as usize) {
                        *d += ns;
                    }
                    match merged.last_mut() {
                        Some(last) if last.0 == s => last.1 += ns,
                        _ => merged.push((s, ns)),
                    }
                }
                GroupData {
                    label: g.label,
                    count: g.count,
                    total_ns: g.total_ns,
                    flops: (g.flops_n > 0).then_some((g.flops, g.flops_ns)),
                    bytes: (g.bytes_n > 0).then_some((g.bytes, g.bytes_ns)),
                    per_step: merged,
                }
            })
            .collect();
        let run = timeline(&mut self.spans, self.untimed);
        SideData {
            info,
            kernels: self.kernels,
            total_ns: self.total_ns,
            groups,
            steps: self.step_names,
            step_time_ns,
            step_kernel_ns,
            outside_kernels: self.outside_kernels,
            outside_ns: self.outside_ns,
            steps_dropped: self.steps_dropped,
            ranges_dropped: self.ranges_dropped,
            processes: self.processes.len(),
            run,
        }
    }
}

/// Busy, compute, communication and idle time of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Timeline {
    /// First kernel start to last kernel end on any device, ns.
    pub span_ns: Option<i64>,
    /// Devices that ran kernels.
    pub devices: usize,
    /// Σ over devices of the time with at least one kernel running, ns.
    pub busy_ns: i64,
    /// Σ over devices of the time with a compute (non-NCCL) kernel, ns.
    pub compute_ns: i64,
    /// Σ over devices of the time with an NCCL kernel and no compute
    /// kernel (communication not hidden behind compute), ns.
    pub comm_ns: i64,
    /// Σ over devices of the time with both, ns.
    pub comm_overlapped_ns: i64,
    /// Σ over devices of span − busy, ns.
    pub idle_ns: i64,
    /// Kernels without start and end times (left out of these figures).
    pub untimed_kernels: u64,
}

impl Timeline {
    /// span × devices: the denominator of utilization and the shares.
    pub fn device_time_ns(&self) -> Option<i128> {
        self.span_ns
            .map(|s| i128::from(s) * self.devices as i128)
            .filter(|&t| t > 0)
    }
}

fn timeline(spans: &mut [Span], untimed: u64) -> Timeline {
    let mut t = Timeline {
        untimed_kernels: untimed,
        ..Timeline::default()
    };
    if spans.is_empty() {
        return t;
    }
    let lo = spans.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let hi = spans.iter().map(|s| s.end_ns).max().unwrap_or(0);
    let span = hi.saturating_sub(lo);
    t.span_ns = Some(span);
    spans.sort_unstable_by_key(|s| s.device);
    for dev in spans.chunk_by(|a, b| a.device == b.device) {
        t.devices += 1;
        let pick = |comm: bool| {
            Intervals::from_unsorted(
                dev.iter()
                    .filter(|s| s.comm == comm)
                    .map(|s| (s.start_ns, s.end_ns))
                    .collect(),
            )
        };
        let compute = pick(false);
        let comm = pick(true);
        let busy = compute.union(&comm).total();
        let exposed = comm.subtract(&compute).total();
        t.busy_ns = t.busy_ns.saturating_add(busy);
        t.compute_ns = t.compute_ns.saturating_add(compute.total());
        t.comm_ns = t.comm_ns.saturating_add(exposed);
        t.comm_overlapped_ns = t
            .comm_overlapped_ns
            .saturating_add(comm.total().saturating_sub(exposed));
        t.idle_ns = t.idle_ns.saturating_add(span.saturating_sub(busy));
    }
    t
}

/// One key of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupData {
    /// The key's value.
    pub label: String,
    /// Kernels.
    pub count: u64,
    /// Σ durations, ns.
    pub total_ns: i128,
    /// Σ FLOPs and the time of the kernels with known FLOPs.
    pub flops: Option<(i128, i128)>,
    /// Σ bytes and the time of the kernels with known bytes.
    pub bytes: Option<(i128, i128)>,
    /// (step, Σ durations in it, ns) for the steps the key ran in, by
    /// step; 0 in the others.
    pub per_step: Vec<(u32, i128)>,
}

/// One run, grouped.
#[derive(Clone, Debug, PartialEq)]
pub struct SideData {
    /// What the input says about itself.
    pub info: RunInfo,
    /// Kernels.
    pub kernels: u64,
    /// Σ of every kernel's duration, ns.
    pub total_ns: i128,
    /// The keys, in arrival order.
    pub groups: Vec<GroupData>,
    /// Step names, in arrival order.
    pub steps: Vec<String>,
    /// Each step's range time, ns (`None`: not known).
    pub step_time_ns: Vec<Option<i64>>,
    /// Each step's summed kernel time, ns.
    pub step_kernel_ns: Vec<i128>,
    /// Kernels launched outside any step.
    pub outside_kernels: u64,
    /// Their summed duration, ns.
    pub outside_ns: i128,
    /// Kernels of steps beyond [`MAX_STEPS`].
    pub steps_dropped: u64,
    /// Step ranges beyond [`MAX_STEPS`] steps.
    pub ranges_dropped: u64,
    /// Distinct launching processes.
    pub processes: usize,
    /// Busy / compute / communication / idle time.
    pub run: Timeline,
}

/// How to compare.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiffOptions {
    /// Significance level of the Mann-Whitney test.
    pub alpha: f64,
    /// Rows shown (0: all); the others are summed into one line.
    pub top: usize,
    /// `--fail-above`: list the keys that regressed by more than this %.
    pub fail_above_pct: Option<f64>,
}

impl Default for DiffOptions {
    fn default() -> DiffOptions {
        DiffOptions {
            alpha: DEFAULT_ALPHA,
            top: 0,
            fail_above_pct: None,
        }
    }
}

/// The default significance level.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Where a key is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// In both runs.
    Both,
    /// In the test run only.
    Added,
    /// In the base run only.
    Removed,
}

impl Status {
    /// The word printed.
    pub fn name(self) -> &'static str {
        match self {
            Status::Both => "both",
            Status::Added => "added",
            Status::Removed => "removed",
        }
    }
}

/// One key, both runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffRow {
    /// The key's value.
    pub key: String,
    /// In both runs, or added / removed.
    pub status: Status,
    /// Kernels in the base run.
    pub base_count: u64,
    /// Kernels in the test run.
    pub test_count: u64,
    /// Σ durations in the base run, ns.
    pub base_total_ns: i128,
    /// Σ durations in the test run, ns.
    pub test_total_ns: i128,
    /// Mean duration in the base run, ns (`None`: no kernel).
    pub base_mean_ns: Option<f64>,
    /// Mean duration in the test run, ns.
    pub test_mean_ns: Option<f64>,
    /// test − base, ns.
    pub delta_ns: i128,
    /// Δ / base × 100 (`None`: the base is 0).
    pub delta_pct: Option<f64>,
    /// Δ / total Δ × 100, signed (`None`: the total Δ is 0).
    pub share_of_delta_pct: Option<f64>,
    /// FLOPs / time of the base's kernels with known FLOPs, TFLOP/s.
    pub base_tflops: Option<f64>,
    /// Same for the test run.
    pub test_tflops: Option<f64>,
    /// Bytes / time of the base's kernels with known bytes, GB/s.
    pub base_gbs: Option<f64>,
    /// Same for the test run.
    pub test_gbs: Option<f64>,
    /// The key's time in each base step, ns (steps in `base.steps` order).
    pub base_step_ns: Vec<i128>,
    /// The key's time in each test step, ns.
    pub test_step_ns: Vec<i128>,
    /// Two-sided Mann-Whitney U p-value (`None`: not assessable).
    pub p_value: Option<f64>,
    /// p < α (`None`: not assessable).
    pub significant: Option<bool>,
}

/// A whole-run figure, both runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRow {
    /// What it is.
    pub figure: &'static str,
    /// `ns`, `%` or `count`.
    pub unit: &'static str,
    /// The base run's value (`None`: the input cannot say).
    pub base: Option<f64>,
    /// The test run's value.
    pub test: Option<f64>,
    /// test − base.
    pub delta: Option<f64>,
    /// Δ / base × 100 (for `%` figures: not given, Δ is in points).
    pub delta_pct: Option<f64>,
    /// Mann-Whitney U p-value over the per-step values, where there are.
    pub p_value: Option<f64>,
    /// p < α.
    pub significant: Option<bool>,
}

/// One run as the report describes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SideSummary {
    /// File name.
    pub name: String,
    /// GPUs the input describes.
    pub devices: Vec<String>,
    /// Rank, when the input says.
    pub rank: Option<i64>,
    /// Number of ranks, when the input says.
    pub world_size: Option<i64>,
    /// Distinct launching processes.
    pub processes: usize,
    /// Kernels.
    pub kernels: u64,
    /// Σ of every kernel's duration, ns (= the rows' total).
    pub total_ns: i128,
    /// Step names, in order of first kernel.
    pub steps: Vec<String>,
    /// Kernels outside any step, and their time, ns.
    pub kernels_outside_steps: u64,
    /// Their summed duration, ns.
    pub outside_steps_ns: i128,
    /// Kernels of steps past the step limit (counted outside).
    pub kernels_past_step_limit: u64,
    /// Step ranges past the step limit (their kernels counted outside).
    pub step_ranges_past_limit: u64,
    /// The timeline figures.
    pub timeline: Timeline,
}

/// Whether significance can be assessed, and why not.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Significance {
    /// True when both runs have at least two steps.
    pub assessable: bool,
    /// The level.
    pub alpha: f64,
    /// The smallest p-value the exact test can give with these step
    /// counts (per-step times without ties).
    pub min_p_value: Option<f64>,
    /// In words.
    pub note: String,
}

/// Rows `--top` left out, summed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Hidden {
    /// Keys.
    pub keys: usize,
    /// Their base time, ns.
    pub base_total_ns: i128,
    /// Their test time, ns.
    pub test_total_ns: i128,
}

/// Totals of the rows (= each run's summed kernel time).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Keys in both runs.
    pub keys_both: usize,
    /// Keys in the test run only.
    pub keys_added: usize,
    /// Keys in the base run only.
    pub keys_removed: usize,
    /// Base run, ns.
    pub base_total_ns: i128,
    /// Test run, ns.
    pub test_total_ns: i128,
    /// test − base, ns.
    pub delta_ns: i128,
    /// Δ / base × 100.
    pub delta_pct: Option<f64>,
}

/// The finished comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffReport {
    /// The key (`--by`).
    pub by: &'static str,
    /// The key in words.
    pub key: &'static str,
    /// The step pattern.
    pub step_pattern: String,
    /// The base run.
    pub base: SideSummary,
    /// The test run.
    pub test: SideSummary,
    /// How the inputs differ (devices, ranks, processes), in words.
    pub input_differences: Vec<String>,
    /// What the significance rests on.
    pub significance: Significance,
    /// What `share_of_delta_pct` is a share of.
    pub share_of: &'static str,
    /// Whole-run figures.
    pub run: Vec<RunRow>,
    /// Keys by |Δ|, largest first (ties: key).
    pub rows: Vec<DiffRow>,
    /// Why the rows' per-step times are empty, when they are (too many).
    pub per_step_omitted: Option<String>,
    /// Keys left out by `--top`.
    pub hidden: Hidden,
    /// With `--fail-above PCT`: the keys that regressed by more than PCT %
    /// (see [`regressed`]), by |Δ|; `None` without the option.
    pub regressions: Option<Vec<String>>,
    /// Totals over every key.
    pub totals: Totals,
}

/// What `share_of_delta_pct` is a share of, in words.
pub const SHARE_OF: &str = "total difference: test's summed kernel time minus base's (signed; the shares of all keys add up to 100)";

fn pct(delta: f64, base: f64) -> Option<f64> {
    (base != 0.0).then(|| delta / base * 100.0)
}

fn rate(x: Option<(i128, i128)>, per: f64) -> Option<f64> {
    // FLOP/ns = GFLOP/s, bytes/ns = GB/s
    x.and_then(|(v, ns)| (ns > 0).then(|| v as f64 / (ns as f64 * per)))
}

/// A p-value and flag for two samples of `nb` and `nt` values (`base`
/// and `test` given, the others 0), when both have two values or more.
fn test(
    base: &[i128],
    nb: usize,
    test: &[i128],
    nt: usize,
    alpha: f64,
) -> (Option<f64>, Option<bool>) {
    if nb < 2 || nt < 2 {
        return (None, None);
    }
    match mwu::mann_whitney_sparse(base, nb, test, nt) {
        Some(r) => (Some(r.p_value), Some(r.p_value < alpha)),
        None => (None, None),
    }
}

fn describe(s: &SideData) -> SideSummary {
    SideSummary {
        name: s.info.name.clone(),
        devices: s.info.devices.clone(),
        rank: s.info.rank,
        world_size: s.info.world_size,
        processes: s.processes,
        kernels: s.kernels,
        total_ns: s.total_ns,
        steps: s.steps.clone(),
        kernels_outside_steps: s.outside_kernels,
        outside_steps_ns: s.outside_ns,
        kernels_past_step_limit: s.steps_dropped,
        step_ranges_past_limit: s.ranges_dropped,
        timeline: s.run.clone(),
    }
}

fn differences(b: &SideSummary, t: &SideSummary) -> Vec<String> {
    let mut out = Vec::new();
    let list = |v: &[String]| {
        if v.is_empty() {
            "none listed".to_owned()
        } else {
            v.join(", ")
        }
    };
    if b.devices != t.devices {
        out.push(format!(
            "devices differ: base {}; test {}",
            list(&b.devices),
            list(&t.devices)
        ));
    }
    if b.timeline.devices != t.timeline.devices {
        out.push(format!(
            "devices that ran kernels differ: base {}, test {}",
            b.timeline.devices, t.timeline.devices
        ));
    }
    let rank = |r: Option<i64>, w: Option<i64>| match (r, w) {
        (Some(r), Some(w)) => format!("rank {r} of {w}"),
        (Some(r), None) => format!("rank {r}"),
        (None, Some(w)) => format!("one of {w} ranks"),
        (None, None) => "no rank given".to_owned(),
    };
    if b.world_size != t.world_size || b.rank != t.rank {
        out.push(format!(
            "ranks differ: base {}, test {}",
            rank(b.rank, b.world_size),
            rank(t.rank, t.world_size)
        ));
    }
    if b.processes != t.processes {
        out.push(format!(
            "launching processes differ: base {}, test {}",
            b.processes, t.processes
        ));
    }
    if b.steps.len() != t.steps.len() {
        out.push(format!(
            "step counts differ: base {}, test {}",
            b.steps.len(),
            t.steps.len()
        ));
    }
    out
}

fn significance(nb: usize, nt: usize, alpha: f64) -> Significance {
    let min_p = (nb > 0 && nt > 0).then(|| mwu::min_p_value(nb, nt));
    let (assessable, note) = if nb == 0 || nt == 0 {
        (
            false,
            format!(
                "cannot be assessed: {}; p-values need per-step times on both sides",
                match (nb, nt) {
                    (0, 0) => "neither run has steps",
                    (0, _) => "the base run has no steps",
                    _ => "the test run has no steps",
                }
            ),
        )
    } else if nb < 2 || nt < 2 {
        (
            false,
            format!(
                "cannot be assessed: {nb} base step(s) and {nt} test step(s); the test needs at least two steps per side"
            ),
        )
    } else {
        let mp = min_p.unwrap_or(0.0);
        let mut note = format!(
            "two-sided Mann-Whitney U test of the {nb} base step times against the {nt} test step times, per key; significant when p < {alpha}"
        );
        if mp >= alpha {
            note.push_str(&format!(
                "; with so few steps, per-step times without ties cannot give a p-value below {mp:.4} (exact test)"
            ));
        }
        (true, note)
    };
    Significance {
        assessable,
        alpha,
        min_p_value: min_p,
        note,
    }
}

/// Join two runs.
pub fn compare(base: &SideData, test_side: &SideData, opts: DiffOptions) -> DiffReport {
    let alpha = opts.alpha;
    let sig = significance(base.steps.len(), test_side.steps.len(), alpha);
    let (nb, nt) = (base.steps.len(), test_side.steps.len());
    let mut by_label: HashMap<&str, (Option<&GroupData>, Option<&GroupData>)> = HashMap::new();
    for g in &base.groups {
        by_label.entry(g.label.as_str()).or_default().0 = Some(g);
    }
    for g in &test_side.groups {
        by_label.entry(g.label.as_str()).or_default().1 = Some(g);
    }
    let total_delta = test_side.total_ns - base.total_ns;
    let values = |g: Option<&GroupData>| -> Vec<i128> {
        g.map_or_else(Vec::new, |g| g.per_step.iter().map(|e| e.1).collect())
    };
    let mut rows: Vec<(DiffRow, Option<&GroupData>, Option<&GroupData>)> = by_label
        .into_iter()
        .map(|(label, (b, t))| {
            let (p_value, significant) = if sig.assessable {
                test(&values(b), nb, &values(t), nt, alpha)
            } else {
                (None, None)
            };
            let bt = b.map_or(0, |g| g.total_ns);
            let tt = t.map_or(0, |g| g.total_ns);
            let delta = tt - bt;
            let mean = |g: Option<&GroupData>| {
                g.filter(|g| g.count > 0)
                    .map(|g| g.total_ns as f64 / g.count as f64)
            };
            let row = DiffRow {
                key: label.to_owned(),
                status: match (b, t) {
                    (Some(_), Some(_)) => Status::Both,
                    (None, _) => Status::Added,
                    _ => Status::Removed,
                },
                base_count: b.map_or(0, |g| g.count),
                test_count: t.map_or(0, |g| g.count),
                base_total_ns: bt,
                test_total_ns: tt,
                base_mean_ns: mean(b),
                test_mean_ns: mean(t),
                delta_ns: delta,
                delta_pct: pct(delta as f64, bt as f64),
                share_of_delta_pct: (total_delta != 0)
                    .then(|| delta as f64 / total_delta as f64 * 100.0),
                base_tflops: rate(b.and_then(|g| g.flops), 1e3),
                test_tflops: rate(t.and_then(|g| g.flops), 1e3),
                base_gbs: rate(b.and_then(|g| g.bytes), 1.0),
                test_gbs: rate(t.and_then(|g| g.bytes), 1.0),
                base_step_ns: Vec::new(),
                test_step_ns: Vec::new(),
                p_value,
                significant,
            };
            (row, b, t)
        })
        .collect();
    rows.sort_by(|(a, _, _), (b, _, _)| {
        b.delta_ns
            .unsigned_abs()
            .cmp(&a.delta_ns.unsigned_abs())
            .then_with(|| a.key.cmp(&b.key))
    });
    let count = |st: Status| rows.iter().filter(|r| r.0.status == st).count();
    let keys = (
        count(Status::Both),
        count(Status::Added),
        count(Status::Removed),
    );
    let regressions = opts.fail_above_pct.map(|limit| {
        rows.iter()
            .filter(|r| regressed(&r.0, limit))
            .map(|r| r.0.key.clone())
            .collect()
    });
    let mut hidden = Hidden::default();
    if opts.top > 0 && rows.len() > opts.top {
        for (r, _, _) in rows.drain(opts.top..) {
            hidden.keys += 1;
            hidden.base_total_ns += r.base_total_ns;
            hidden.test_total_ns += r.test_total_ns;
        }
    }
    // the per-step times of the rows shown, unless they would be too many
    let cells = rows.len().saturating_mul(nb + nt);
    let per_step_omitted = (cells > MAX_STEP_CELLS).then(|| {
        format!(
            "{} rows x {} steps exceed {} per-step values: per-step times are left out of the rows (the tests use them all); --top N shows fewer rows",
            rows.len(),
            nb + nt,
            MAX_STEP_CELLS
        )
    });
    let dense = |g: Option<&GroupData>, n: usize| {
        let mut v = vec![0i128; n];
        for &(s, ns) in g.map_or(&[][..], |g| &g.per_step) {
            if let Some(d) = v.get_mut(s as usize) {
                *d = ns;
            }
        }
        v
    };
    let rows: Vec<DiffRow> = rows
        .into_iter()
        .map(|(mut r, b, t)| {
            if per_step_omitted.is_none() {
                r.base_step_ns = dense(b, nb);
                r.test_step_ns = dense(t, nt);
            }
            r
        })
        .collect();
    let totals = Totals {
        keys_both: keys.0,
        keys_added: keys.1,
        keys_removed: keys.2,
        base_total_ns: base.total_ns,
        test_total_ns: test_side.total_ns,
        delta_ns: total_delta,
        delta_pct: pct(total_delta as f64, base.total_ns as f64),
    };
    let bsum = describe(base);
    let tsum = describe(test_side);
    DiffReport {
        by: "",
        key: "",
        step_pattern: String::new(),
        input_differences: differences(&bsum, &tsum),
        run: run_rows(base, test_side, &sig),
        base: bsum,
        test: tsum,
        significance: sig,
        share_of: SHARE_OF,
        rows,
        per_step_omitted,
        hidden,
        regressions,
        totals,
    }
}

/// Set what the report is keyed by (the sides know, the join does not).
pub fn keyed(mut r: DiffReport, key: Key, steps: &StepMatcher) -> DiffReport {
    r.by = key.name();
    r.key = key.describe();
    r.step_pattern = steps.pattern().to_owned();
    r
}

fn run_rows(b: &SideData, t: &SideData, sig: &Significance) -> Vec<RunRow> {
    let mut out = Vec::new();
    let mut push = |figure: &'static str,
                    unit: &'static str,
                    base: Option<f64>,
                    test_v: Option<f64>,
                    samples: Option<(Vec<i128>, Vec<i128>)>| {
        let delta = base.zip(test_v).map(|(x, y)| y - x);
        let delta_pct = if unit == "%" {
            None
        } else {
            base.zip(delta).and_then(|(x, d)| pct(d, x))
        };
        let (p_value, significant) = match samples {
            Some((x, y)) if sig.assessable => test(&x, x.len(), &y, y.len(), sig.alpha),
            _ => (None, None),
        };
        out.push(RunRow {
            figure,
            unit,
            base,
            test: test_v,
            delta,
            delta_pct,
            p_value,
            significant,
        });
    };
    push(
        "kernels",
        "count",
        Some(b.kernels as f64),
        Some(t.kernels as f64),
        None,
    );
    push(
        "kernel time (sum of durations)",
        "ns",
        Some(b.total_ns as f64),
        Some(t.total_ns as f64),
        Some((b.step_kernel_ns.clone(), t.step_kernel_ns.clone())),
    );
    push(
        "steps",
        "count",
        Some(b.steps.len() as f64),
        Some(t.steps.len() as f64),
        None,
    );
    let step_times = |s: &SideData| -> Option<Vec<i128>> {
        if s.step_time_ns.is_empty() {
            return None;
        }
        s.step_time_ns
            .iter()
            .map(|t| t.map(i128::from))
            .collect::<Option<Vec<i128>>>()
    };
    let (bst, tst) = (step_times(b), step_times(t));
    let sum = |v: &Option<Vec<i128>>| v.as_ref().map(|v| v.iter().sum::<i128>() as f64);
    let mean = |v: &Option<Vec<i128>>| {
        v.as_ref()
            .filter(|v| !v.is_empty())
            .map(|v| v.iter().sum::<i128>() as f64 / v.len() as f64)
    };
    push(
        "step time (sum of step ranges)",
        "ns",
        sum(&bst),
        sum(&tst),
        bst.clone().zip(tst.clone()),
    );
    push("mean step time", "ns", mean(&bst), mean(&tst), bst.zip(tst));
    let (rb, rt) = (&b.run, &t.run);
    push(
        "GPU span (first kernel start to last kernel end)",
        "ns",
        rb.span_ns.map(|v| v as f64),
        rt.span_ns.map(|v| v as f64),
        None,
    );
    let share = |v: i64, r: &Timeline| r.device_time_ns().map(|d| v as f64 * 100.0 / d as f64);
    push(
        "utilization (busy / (span x devices))",
        "%",
        share(rb.busy_ns, rb),
        share(rt.busy_ns, rt),
        None,
    );
    let ns = |v: i64, r: &Timeline| r.span_ns.map(|_| v as f64);
    for (figure, fb, ft) in [
        ("compute time", rb.compute_ns, rt.compute_ns),
        (
            "communication time not overlapped with compute",
            rb.comm_ns,
            rt.comm_ns,
        ),
        (
            "communication time overlapped with compute",
            rb.comm_overlapped_ns,
            rt.comm_overlapped_ns,
        ),
        ("idle time", rb.idle_ns, rt.idle_ns),
    ] {
        push(figure, "ns", ns(fb, rb), ns(ft, rt), None);
    }
    for (figure, fb, ft) in [
        (
            "compute share of span x devices",
            rb.compute_ns,
            rt.compute_ns,
        ),
        (
            "communication (not overlapped) share of span x devices",
            rb.comm_ns,
            rt.comm_ns,
        ),
        ("idle share of span x devices", rb.idle_ns, rt.idle_ns),
    ] {
        push(figure, "%", share(fb, rb), share(ft, rt), None);
    }
    out
}

/// True when a key regressed by more than `limit` %: Δ > 0 and Δ % >
/// `limit` (a key new in the test run counts as an infinite increase),
/// and it is significant, or of unknown significance (the runs' steps
/// cannot tell: then the difference alone decides).
pub fn regressed(row: &DiffRow, limit: f64) -> bool {
    row.delta_ns > 0 && row.delta_pct.is_none_or(|p| p > limit) && row.significant != Some(false)
}

#[cfg(test)]
mod tests;
