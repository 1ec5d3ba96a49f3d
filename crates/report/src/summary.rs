//! `rprof summary`: kernel time grouped by a key, with count, total, mean,
//! standard deviation, min and max, the share of the summed kernel time,
//! and, where the op models know them, FLOPs, bytes and achieved rates.
//!
//! Definitions (docs/reports.md):
//! - durations are each kernel's GPU time (`kDuration`, ns);
//! - *median* is the middle duration (the mean of the two middle ones for
//!   an even count);
//! - *std dev* is the sample standard deviation (n − 1 in the denominator;
//!   0 for a single kernel), computed from exact integer sums;
//! - *share* is the group's total over the **sum of all kernel durations**
//!   in the input (overlapping kernels each count in full), not over the
//!   wall-clock span and not over the rows shown;
//! - FLOPs and bytes are summed over the kernels whose model gave them, and
//!   TFLOP/s and GB/s divide by the time of those kernels only.

use std::io::{self, Write};

use rprof_model::KernelRef;
use rprof_ops::KernelEstimate;
use serde::Serialize;

use crate::model::{known_bytes, known_flops};
use crate::text;

/// What to group kernels by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// Kernel short name.
    Kernel,
    /// The op the models give (as `prof` prints it): PyProf's attribution,
    /// in which a backward kernel takes its forward op.
    Op,
    /// The innermost NVTX range or CPU operator with its input shapes (the
    /// PyTorch TensorBoard plugin's "group by input shape").
    OpShape,
    /// Layer names (`layer:` NVTX ranges), outermost first, joined by `:`.
    Layer,
    /// The name of the innermost NVTX range (or CPU operator) enclosing the
    /// launch, without stock PyTorch's `seq`, `op_id`, `sizes`,
    /// `input_op_ids` and `dtypes` fields.
    Nvtx,
    /// Device and stream.
    Stream,
    /// Device.
    Device,
    /// `fprop` / `bprop`.
    Dir,
}

impl Key {
    /// Every key, in `--help` order.
    pub const ALL: [Key; 8] = [
        Key::Kernel,
        Key::Op,
        Key::OpShape,
        Key::Layer,
        Key::Nvtx,
        Key::Stream,
        Key::Device,
        Key::Dir,
    ];

    /// The name users type after `--by`.
    pub fn name(self) -> &'static str {
        match self {
            Key::Kernel => "kernel",
            Key::Op => "op",
            Key::OpShape => "op-shape",
            Key::Layer => "layer",
            Key::Nvtx => "nvtx",
            Key::Stream => "stream",
            Key::Device => "device",
            Key::Dir => "dir",
        }
    }

    /// One line for `--help`.
    pub fn help(self) -> &'static str {
        match self {
            Key::Kernel => "kernel short name",
            Key::Op => {
                "op as `rprof prof` prints it: PyProf's attribution (backward kernels take their forward op; models may rename)"
            }
            Key::OpShape => {
                "innermost NVTX range / CPU op name with its input shapes (TensorBoard plugin's group by input shape)"
            }
            Key::Layer => "layer names (layer: NVTX ranges), outermost first, joined by ':'",
            Key::Nvtx => {
                "name of the innermost NVTX range (or CPU op) enclosing the launch, without seq/op_id/sizes fields"
            }
            Key::Stream => "device and stream, as DEVICE:STREAM",
            Key::Device => "CUDA device ordinal",
            Key::Dir => "fprop or bprop",
        }
    }

    /// The key with this name.
    pub fn from_name(s: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|k| k.name() == s)
    }

    /// Column header of the key.
    pub fn header(self) -> &'static str {
        match self {
            Key::Kernel => "Kernel",
            Key::Op => "Op",
            Key::OpShape => "Op [input shapes]",
            Key::Layer => "Layer",
            Key::Nvtx => "NVTX range (innermost)",
            Key::Stream => "Device:Stream",
            Key::Device => "Device",
            Key::Dir => "Direction",
        }
    }
}

/// The label of kernels that have no value for the key.
pub const NONE: &str = "(none)";

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum SortKey {
    Num(i64, i64),
    Text(String),
}

#[derive(Clone, Debug)]
struct Group {
    label: String,
    sort: SortKey,
    count: u64,
    total_ns: i128,
    sumsq: u128,
    min_ns: i64,
    max_ns: i64,
    flops: i128,
    flops_ns: i128,
    flops_n: u64,
    bytes: i128,
    bytes_ns: i128,
    bytes_n: u64,
    /// Every duration, for the median: `u32` where it fits (kernels shorter
    /// than 4.3 s, nearly all) to halve the memory, the rest in `long_ns`.
    short_ns: Vec<u32>,
    long_ns: Vec<i64>,
}

impl Group {
    fn new(label: String, sort: SortKey) -> Group {
        Group {
            label,
            sort,
            count: 0,
            total_ns: 0,
            sumsq: 0,
            min_ns: i64::MAX,
            max_ns: i64::MIN,
            flops: 0,
            flops_ns: 0,
            flops_n: 0,
            bytes: 0,
            bytes_ns: 0,
            bytes_n: 0,
            short_ns: Vec::new(),
            long_ns: Vec::new(),
        }
    }

    fn add(&mut self, dur: i64, flops: Option<i128>, bytes: Option<i128>) {
        self.count += 1;
        self.total_ns += i128::from(dur);
        self.sumsq = self
            .sumsq
            .saturating_add(u128::from(dur.unsigned_abs()).pow(2));
        self.min_ns = self.min_ns.min(dur);
        self.max_ns = self.max_ns.max(dur);
        match u32::try_from(dur) {
            Ok(d) => self.short_ns.push(d),
            Err(_) => self.long_ns.push(dur),
        }
        if let Some(f) = flops {
            self.flops = self.flops.saturating_add(f);
            self.flops_ns += i128::from(dur);
            self.flops_n += 1;
        }
        if let Some(b) = bytes {
            self.bytes = self.bytes.saturating_add(b);
            self.bytes_ns += i128::from(dur);
            self.bytes_n += 1;
        }
    }

    /// The median duration: the middle one of the sorted durations, or the
    /// mean of the two middle ones for an even count (numpy's definition); 0 for an empty group.
    fn median_ns(&self) -> f64 {
        let mut all: Vec<i64> = self.short_ns.iter().map(|&d| i64::from(d)).collect();
        all.extend_from_slice(&self.long_ns);
        let n = all.len();
        if n == 0 {
            return 0.0;
        }
        let (_, &mut hi, _) = all.select_nth_unstable(n / 2);
        if n % 2 == 1 {
            return hi as f64;
        }
        // the largest of the lower half
        let lo = all[..n / 2].iter().copied().max().unwrap_or(hi);
        (lo as f64 + hi as f64) / 2.0
    }

    /// Sample standard deviation from the exact sums.
    fn std_ns(&self) -> f64 {
        let n = u128::from(self.count);
        if n < 2 {
            return 0.0;
        }
        let total = self.total_ns.unsigned_abs();
        let num = n
            .checked_mul(self.sumsq)
            .zip(total.checked_mul(total))
            .map(|(a, b)| a.saturating_sub(b) as f64)
            .unwrap_or_else(|| {
                let mean = total as f64 / n as f64;
                (self.sumsq as f64 - n as f64 * mean * mean).max(0.0) * n as f64
            });
        (num / (n * (n - 1)) as f64).sqrt()
    }
}

/// One printed group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryRow {
    /// The key's value (`(none)` for kernels without one).
    pub key: String,
    /// Kernels.
    pub count: u64,
    /// Σ durations, ns.
    pub total_ns: i128,
    /// Mean duration, ns.
    pub mean_ns: f64,
    /// Median duration, ns (the mean of the two middle ones for an even
    /// count).
    pub median_ns: f64,
    /// Sample standard deviation, ns.
    pub std_ns: f64,
    /// Shortest, ns.
    pub min_ns: i64,
    /// Longest, ns.
    pub max_ns: i64,
    /// % of the summed kernel time of the whole input.
    pub share_pct: f64,
    /// Σ FLOPs of the kernels whose model gave FLOPs (`None`: no kernel).
    pub flops: Option<i128>,
    /// Kernels with known FLOPs.
    pub flops_kernels: u64,
    /// Σ bytes of the kernels whose model gave bytes.
    pub bytes: Option<i128>,
    /// Kernels with known bytes.
    pub bytes_kernels: u64,
    /// FLOPs / time of the kernels with known FLOPs, TFLOP/s.
    pub tflops: Option<f64>,
    /// Bytes / time of the kernels with known bytes, GB/s.
    pub gbs: Option<f64>,
}

/// The finished summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryReport {
    /// The grouping key (`--by`).
    pub by: &'static str,
    /// What `share_pct` is a share of.
    pub share_of: &'static str,
    /// Kernels in the input.
    pub kernels: u64,
    /// Σ of every kernel's duration, ns: the denominator of the shares.
    pub total_ns: i128,
    /// Groups in the input.
    pub groups: usize,
    /// The groups shown, by total time (then count, then key).
    pub rows: Vec<SummaryRow>,
    /// Groups left out by `--top`.
    pub hidden_groups: usize,
    /// Their summed kernel time, ns.
    pub hidden_ns: i128,
    /// Copies and sets, so that GPU time is complete (profiles only: a
    /// record file has no copies; absent from the JSON then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_time: Option<GpuTime>,
}

/// What `share_pct` is a share of, in words.
pub const SHARE_OF: &str =
    "sum of all kernel durations in the input (overlapping kernels each count in full)";

/// Groups kernels, one record at a time, in input order.
#[derive(Debug)]
pub struct Summarizer {
    key: Key,
    groups: Vec<Group>,
    by_text: rprof_model::FastMap<String, usize>,
    by_num: rprof_model::FastMap<(i64, i64), usize>,
    kernels: u64,
    total_ns: i128,
    scratch: String,
}

impl Summarizer {
    /// An empty summary by `key`.
    pub fn new(key: Key) -> Summarizer {
        Summarizer {
            key,
            groups: Vec::new(),
            by_text: rprof_model::FastMap::default(),
            by_num: rprof_model::FastMap::default(),
            kernels: 0,
            total_ns: 0,
            scratch: String::new(),
        }
    }

    /// Count one kernel.
    pub fn add(&mut self, rec: KernelRef<'_, '_>, est: &KernelEstimate<'_>) {
        let flops = known_flops(&est.estimate);
        let bytes = known_bytes(&est.estimate);
        let g = match self.key {
            Key::Stream | Key::Device => self.num_group(rec.device, rec.stream),
            _ => {
                let mut scratch = std::mem::take(&mut self.scratch);
                let text: &str = match self.key {
                    Key::Kernel => &rec.short_name,
                    Key::Op => est.op,
                    // one group per range or op name, not per call: stock
                    // PyTorch's fields (seq, op_id, sizes) differ per call
                    Key::Nvtx => match rec.stack().len() {
                        0 => "",
                        n => rec.stack_head(n - 1).name,
                    },
                    Key::OpShape => {
                        scratch.clear();
                        if let Some(last) = rec.stack().len().checked_sub(1) {
                            let m = rec.stack_marker(last);
                            push_op_shape(m.name, m.sizes.as_ref(), &mut scratch);
                        }
                        &scratch
                    }
                    Key::Dir => rec.dir.as_str(),
                    _ => {
                        scratch.clear();
                        for (i, l) in est.layer.iter().enumerate() {
                            if i > 0 {
                                scratch.push(':');
                            }
                            scratch.push_str(l);
                        }
                        &scratch
                    }
                };
                let g = self.text_group(text);
                self.scratch = scratch;
                g
            }
        };
        self.add_to(g, rec.duration_ns, flops, bytes);
    }

    /// The group of kernels whose key is `text` (`(none)` when empty),
    /// made on first use: a handle for [`Summarizer::add_unmodelled`], so
    /// that a caller that knows many kernels share a key (the kernels of
    /// one name) looks it up once.
    pub fn text_group(&mut self, text: &str) -> usize {
        let text = if text.is_empty() { NONE } else { text };
        match self.by_text.get(text) {
            Some(&i) => i,
            None => {
                self.groups
                    .push(Group::new(text.to_owned(), SortKey::Text(text.to_owned())));
                self.by_text.insert(text.to_owned(), self.groups.len() - 1);
                self.groups.len() - 1
            }
        }
    }

    /// The group of `device` and `stream` (`--by stream`; `--by device`
    /// ignores the stream), made on first use.
    pub fn num_group(&mut self, device: i64, stream: i64) -> usize {
        let k = if self.key == Key::Stream {
            (device, stream)
        } else {
            (device, 0)
        };
        let key = self.key;
        let groups = &mut self.groups;
        *self.by_num.entry(k).or_insert_with(|| {
            let label = match key {
                Key::Stream => format!("{}:{}", k.0, k.1),
                _ => k.0.to_string(),
            };
            groups.push(Group::new(label, SortKey::Num(k.0, k.1)));
            groups.len() - 1
        })
    }

    /// Count one kernel of `duration_ns` in group `g` (of
    /// [`Summarizer::text_group`] or [`Summarizer::num_group`]) without op
    /// models: FLOPs and bytes unknown, as [`Summarizer::add`] with an
    /// unmodelled estimate.
    pub fn add_unmodelled(&mut self, g: usize, duration_ns: i64) {
        self.add_to(g, duration_ns, None, None);
    }

    fn add_to(&mut self, g: usize, duration_ns: i64, flops: Option<i128>, bytes: Option<i128>) {
        let dur = duration_ns.max(0);
        self.kernels += 1;
        self.total_ns += i128::from(dur);
        if let Some(g) = self.groups.get_mut(g) {
            g.add(dur, flops, bytes);
        }
    }

    /// The groups by total time, descending (ties: more kernels first, then
    /// the key ascending); the first `top` (0: all).
    pub fn finish(self, top: usize) -> SummaryReport {
        let mut groups = self.groups;
        groups.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then(b.count.cmp(&a.count))
                .then_with(|| a.sort.cmp(&b.sort))
        });
        let n = groups.len();
        let shown = if top == 0 { n } else { top.min(n) };
        let hidden_ns = groups[shown..].iter().map(|g| g.total_ns).sum();
        let total = self.total_ns;
        let rows = groups[..shown]
            .iter()
            .map(|g| {
                // FLOP/ns = GFLOP/s and bytes/ns = GB/s
                let rate =
                    |x: i128, ns: i128, per: f64| (ns > 0).then(|| x as f64 / (ns as f64 * per));
                SummaryRow {
                    key: g.label.clone(),
                    count: g.count,
                    total_ns: g.total_ns,
                    mean_ns: g.total_ns as f64 / g.count.max(1) as f64,
                    median_ns: g.median_ns(),
                    std_ns: g.std_ns(),
                    min_ns: g.min_ns,
                    max_ns: g.max_ns,
                    share_pct: if total > 0 {
                        g.total_ns as f64 * 100.0 / total as f64
                    } else {
                        0.0
                    },
                    flops: (g.flops_n > 0).then_some(g.flops),
                    flops_kernels: g.flops_n,
                    bytes: (g.bytes_n > 0).then_some(g.bytes),
                    bytes_kernels: g.bytes_n,
                    tflops: (g.flops_n > 0)
                        .then(|| rate(g.flops, g.flops_ns, 1e3))
                        .flatten(),
                    gbs: (g.bytes_n > 0)
                        .then(|| rate(g.bytes, g.bytes_ns, 1.0))
                        .flatten(),
                }
            })
            .collect();
        SummaryReport {
            by: self.key.name(),
            share_of: SHARE_OF,
            kernels: self.kernels,
            total_ns: total,
            groups: n,
            rows,
            hidden_groups: n - shown,
            hidden_ns,
            gpu_time: None,
        }
    }
}

/// `NAME [[d, …], …]`: the stock marker's name and input shapes, or the
/// name alone when the marker has no readable `sizes` field.
fn push_op_shape(name: &str, sizes: Option<&Vec<Vec<i64>>>, out: &mut String) {
    use std::fmt::Write as _;
    out.push_str(name);
    if let Some(sizes) = sizes {
        let _ = write!(out, " {sizes:?}");
    }
}

/// Write the report as a table for people: a heading that says what the
/// share is of, the table (key column clipped to `name_width` characters,
/// 0: not clipped), and a line for the groups `--top` left out. The FLOP
/// and byte columns appear when some row has them.
pub fn write_table<W: Write>(
    mut w: W,
    r: &SummaryReport,
    key: Key,
    name_width: usize,
) -> io::Result<()> {
    writeln!(
        w,
        "{} kernels in {} groups by {}; {} ns of kernel time in all (the sum of kernel durations; overlapping kernels each count in full).",
        r.kernels, r.groups, r.by, r.total_ns
    )?;
    let rates = r
        .rows
        .iter()
        .any(|x| x.flops.is_some() || x.bytes.is_some());
    writeln!(
        w,
        "Share = % of that sum. Median = the middle duration (mean of the two middle ones for an even count). Std dev = sample standard deviation.{}",
        if rates {
            " FLOPs and bytes: sums over the kernels the op models know; TFLOP/s and GB/s over those kernels' time."
        } else {
            ""
        }
    )?;
    let mut headers = vec![
        key.header(),
        "Count",
        "Total (ns)",
        "Mean (ns)",
        "Median (ns)",
        "Std dev (ns)",
        "Min (ns)",
        "Max (ns)",
        "Share (%)",
    ];
    if rates {
        headers.extend(["FLOPs", "Bytes", "TFLOP/s", "GB/s"]);
    }
    let right: Vec<usize> = (1..headers.len()).collect();
    let mut t = text::table(&headers, &right);
    for x in &r.rows {
        let mut row = vec![
            text::clip(&x.key, name_width),
            x.count.to_string(),
            x.total_ns.to_string(),
            format!("{:.0}", x.mean_ns),
            format!("{:.0}", x.median_ns),
            format!("{:.0}", x.std_ns),
            x.min_ns.to_string(),
            x.max_ns.to_string(),
            format!("{:.2}", x.share_pct),
        ];
        if rates {
            row.push(x.flops.map_or("-".into(), |f| text::si(f as f64)));
            row.push(x.bytes.map_or("-".into(), |b| text::si(b as f64)));
            row.push(text::opt(x.tflops, 3));
            row.push(text::opt(x.gbs, 1));
        }
        t.add_row(row);
    }
    w.write_all(text::render(&t).as_bytes())?;
    if r.hidden_groups > 0 {
        let share = if r.total_ns > 0 {
            r.hidden_ns as f64 * 100.0 / r.total_ns as f64
        } else {
            0.0
        };
        writeln!(
            w,
            "... {} more groups ({} ns, {:.2} % of kernel time) not shown; --top 0 shows every group.",
            r.hidden_groups, r.hidden_ns, share
        )?;
    }
    if let Some(g) = &r.gpu_time {
        write_gpu_time_table(&mut w, g)?;
    }
    Ok(())
}

/// CSV column names, in order.
pub const CSV_HEADER: [&str; 15] = [
    "key",
    "count",
    "total_ns",
    "mean_ns",
    "median_ns",
    "std_ns",
    "min_ns",
    "max_ns",
    "share_pct",
    "flops",
    "flops_kernels",
    "bytes",
    "bytes_kernels",
    "tflops",
    "gbs",
];

/// Write the rows as CSV (a header, then one line per group; unknown
/// values are empty fields). `share_pct` is a % of the summed kernel time.
pub fn write_csv<W: Write>(w: W, r: &SummaryReport) -> io::Result<()> {
    write_csv_rows(w, r, false)
}

/// [`write_csv`] with a trailing `kind` column (`kernel`, `memcpy`,
/// `memset`) and, after the kernel groups, one row per copy direction and
/// one for sets from [`SummaryReport::gpu_time`] (`summary --copies`).
/// `share_pct` stays a % of the summed kernel time on every row.
pub fn write_csv_with_copies<W: Write>(w: W, r: &SummaryReport) -> io::Result<()> {
    write_csv_rows(w, r, true)
}

fn write_csv_rows<W: Write>(w: W, r: &SummaryReport, kind: bool) -> io::Result<()> {
    let mut c = csv::Writer::from_writer(w);
    if kind {
        c.write_record(CSV_HEADER.iter().chain(&["kind"]))?;
    } else {
        c.write_record(CSV_HEADER)?;
    }
    let o = |x: Option<String>| x.unwrap_or_default();
    for x in &r.rows {
        let mut rec = vec![
            x.key.clone(),
            x.count.to_string(),
            x.total_ns.to_string(),
            x.mean_ns.to_string(),
            x.median_ns.to_string(),
            x.std_ns.to_string(),
            x.min_ns.to_string(),
            x.max_ns.to_string(),
            x.share_pct.to_string(),
            o(x.flops.map(|v| v.to_string())),
            x.flops_kernels.to_string(),
            o(x.bytes.map(|v| v.to_string())),
            x.bytes_kernels.to_string(),
            o(x.tflops.map(|v| v.to_string())),
            o(x.gbs.map(|v| v.to_string())),
        ];
        if kind {
            rec.push("kernel".to_owned());
        }
        c.write_record(&rec)?;
    }
    if let Some(g) = r.gpu_time.as_ref().filter(|_| kind) {
        for x in &g.rows {
            // share_pct: of the summed kernel time, as for the kernel rows
            let share = (r.total_ns > 0).then(|| x.total_ns as f64 * 100.0 / r.total_ns as f64);
            c.write_record([
                x.key.clone(),
                x.count.to_string(),
                x.total_ns.to_string(),
                x.mean_ns.to_string(),
                x.median_ns.to_string(),
                x.std_ns.to_string(),
                x.min_ns.to_string(),
                x.max_ns.to_string(),
                o(share.map(|v| v.to_string())),
                String::new(),
                "0".to_owned(),
                o(x.bytes.map(|v| v.to_string())),
                x.bytes_ops.to_string(),
                String::new(),
                o(x.gbs.map(|v| v.to_string())),
                x.kind.to_owned(),
            ])?;
        }
    }
    c.flush()
}

/// Copies and sets next to the kernels: the GPU time the kernel rows leave
/// out. Rows are per copy direction (`HtoD`, `DtoH`, …) and one for sets,
/// whatever `--by` is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuTime {
    /// What `share_pct` of these rows is a share of.
    pub share_of: &'static str,
    /// Σ kernel durations, ns.
    pub kernel_ns: i128,
    /// Σ copy durations, ns.
    pub memcpy_ns: i128,
    /// Σ set durations, ns.
    pub memset_ns: i128,
    /// Kernels + copies + sets, ns: the denominator of `share_pct` here.
    pub total_ns: i128,
    /// Kernels' share of `total_ns`, %.
    pub kernel_pct: f64,
    /// One row per copy kind, then sets, by total time descending.
    pub rows: Vec<MemopRow>,
}

/// Copies of one kind, or sets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemopRow {
    /// `memcpy` or `memset`.
    pub kind: &'static str,
    /// `HtoD`, `DtoH`, `DtoD`, …, or `memset`.
    pub key: String,
    /// Operations.
    pub count: u64,
    /// Σ durations, ns.
    pub total_ns: i128,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Median, ns.
    pub median_ns: f64,
    /// Sample standard deviation, ns.
    pub std_ns: f64,
    /// Shortest, ns.
    pub min_ns: i64,
    /// Longest, ns.
    pub max_ns: i64,
    /// % of kernels + copies + sets.
    pub share_pct: f64,
    /// Σ bytes of the operations whose size is known.
    pub bytes: Option<i128>,
    /// Operations with a known size.
    pub bytes_ops: u64,
    /// Σ bytes / Σ time of the operations with a known size, GB/s.
    pub gbs: Option<f64>,
}

/// What the copy rows' `share_pct` is a share of.
pub const GPU_TIME_SHARE_OF: &str =
    "sum of the durations of all kernels, copies and sets in the input (overlaps count in full)";

/// The copies and sets of a profile summed by direction (and sets), for
/// [`gpu_time`]: what the report needs of them, 4-8 bytes per operation
/// (its duration, for the median) where the operations take 88, so that a
/// caller can let them go before the kernels are summed.
#[derive(Debug, Default)]
pub struct MemopSums(Vec<(rprof_model::MemKind, Group)>);

impl MemopSums {
    /// The sums of `memops`.
    pub fn of(memops: &[rprof_model::MemOp]) -> MemopSums {
        use rprof_model::MemKind;
        let mut groups: Vec<(MemKind, Group)> = Vec::new();
        for m in memops {
            let i = match groups.iter().position(|(k, _)| *k == m.kind) {
                Some(i) => i,
                None => {
                    let label = match m.kind {
                        MemKind::Copy(c) => c.as_str(),
                        MemKind::Set => "memset",
                    };
                    groups.push((
                        m.kind,
                        Group::new(label.to_owned(), SortKey::Text(String::new())),
                    ));
                    groups.len() - 1
                }
            };
            if let Some((_, g)) = groups.get_mut(i) {
                g.add(m.duration_ns(), None, m.bytes.map(i128::from));
            }
        }
        MemopSums(groups)
    }
}

/// The copies and sets of a profile ([`MemopSums`]), next to its summed
/// kernel time `kernel_ns`.
pub fn gpu_time(kernel_ns: i128, sums: &MemopSums) -> GpuTime {
    use rprof_model::MemKind;
    let mut groups: Vec<&(MemKind, Group)> = sums.0.iter().collect();
    let sum = |set: bool| -> i128 {
        groups
            .iter()
            .filter(|(k, _)| (*k == MemKind::Set) == set)
            .map(|(_, g)| g.total_ns)
            .sum()
    };
    let (memcpy_ns, memset_ns) = (sum(false), sum(true));
    let total = kernel_ns + memcpy_ns + memset_ns;
    let pct = |x: i128| {
        if total > 0 {
            x as f64 * 100.0 / total as f64
        } else {
            0.0
        }
    };
    groups.sort_by(|a, b| {
        b.1.total_ns
            .cmp(&a.1.total_ns)
            .then(b.1.count.cmp(&a.1.count))
            .then(a.0.cmp(&b.0))
    });
    let rows = groups
        .iter()
        .map(|(k, g)| MemopRow {
            kind: if *k == MemKind::Set {
                "memset"
            } else {
                "memcpy"
            },
            key: g.label.clone(),
            count: g.count,
            total_ns: g.total_ns,
            mean_ns: g.total_ns as f64 / g.count.max(1) as f64,
            median_ns: g.median_ns(),
            std_ns: g.std_ns(),
            min_ns: g.min_ns,
            max_ns: g.max_ns,
            share_pct: pct(g.total_ns),
            bytes: (g.bytes_n > 0).then_some(g.bytes),
            bytes_ops: g.bytes_n,
            gbs: (g.bytes_ns > 0).then(|| g.bytes as f64 / g.bytes_ns as f64),
        })
        .collect();
    GpuTime {
        share_of: GPU_TIME_SHARE_OF,
        kernel_ns,
        memcpy_ns,
        memset_ns,
        total_ns: total,
        kernel_pct: pct(kernel_ns),
        rows,
    }
}

fn write_gpu_time_table<W: Write>(mut w: W, g: &GpuTime) -> io::Result<()> {
    writeln!(w)?;
    writeln!(
        w,
        "GPU time with copies and sets: {} ns (the sum of the durations of all kernels, copies and sets): kernels {} ns ({:.2} %), copies {} ns, sets {} ns. Share below = % of that sum.",
        g.total_ns, g.kernel_ns, g.kernel_pct, g.memcpy_ns, g.memset_ns
    )?;
    if g.rows.is_empty() {
        writeln!(w, "(no copies or sets in the input)")?;
        return Ok(());
    }
    let mut t = text::table(
        &[
            "Kind",
            "Direction",
            "Count",
            "Total (ns)",
            "Mean (ns)",
            "Median (ns)",
            "Std dev (ns)",
            "Min (ns)",
            "Max (ns)",
            "Share (%)",
            "Bytes",
            "GB/s",
        ],
        &[2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    );
    for x in &g.rows {
        t.add_row(vec![
            x.kind.to_owned(),
            if x.kind == "memset" {
                "-".to_owned()
            } else {
                x.key.clone()
            },
            x.count.to_string(),
            x.total_ns.to_string(),
            format!("{:.0}", x.mean_ns),
            format!("{:.0}", x.median_ns),
            format!("{:.0}", x.std_ns),
            x.min_ns.to_string(),
            x.max_ns.to_string(),
            format!("{:.2}", x.share_pct),
            x.bytes.map_or("-".into(), |b| b.to_string()),
            text::opt(x.gbs, 3),
        ]);
    }
    w.write_all(text::render(&t).as_bytes())
}

/// Write the whole report as one JSON document (and a newline).
pub fn write_json<W: Write>(mut w: W, r: &SummaryReport) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut w, r).map_err(io::Error::other)?;
    w.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use rprof_model::{Kernels, Record};

    use super::*;
    use crate::model::{Models, estimate};

    fn rec(name: &str, dur: i64, stream: i64) -> Record<'static> {
        Record {
            short_name: Cow::Owned(name.to_owned()),
            duration_ns: dur,
            dir: rprof_model::Dir::Fprop,
            stream,
            ..Record::default()
        }
    }

    fn run(recs: &[Record<'static>], key: Key, top: usize) -> SummaryReport {
        let ks = Kernels::from_records(recs.iter().cloned());
        let mut m = Models::new();
        let res = m.resolve(&ks);
        let est = estimate(&ks, &res);
        let mut s = Summarizer::new(key);
        for (r, e) in ks.iter().zip(&est) {
            s.add(r, e);
        }
        s.finish(top)
    }

    /// a: 10, 20, 30, 40 ns → total 100, mean 25, sample std dev
    /// sqrt(((15² + 5² + 5² + 15²) / 3) = sqrt(500/3) = 12.909944;
    /// b: 100 → std dev 0; c: 100 as well, fewer kernels first? no: equal
    /// totals, equal counts, key order: b before c.
    #[test]
    fn hand_computed_stats() {
        let recs = vec![
            rec("a", 10, 7),
            rec("b", 100, 7),
            rec("a", 20, 7),
            rec("a", 30, 8),
            rec("c", 100, 8),
            rec("a", 40, 8),
        ];
        let r = run(&recs, Key::Kernel, 0);
        assert_eq!((r.kernels, r.total_ns, r.groups), (6, 300, 3));
        let keys: Vec<&str> = r.rows.iter().map(|x| x.key.as_str()).collect();
        // a: 100 with 4 kernels wins the tie with b and c (more kernels)
        assert_eq!(keys, ["a", "b", "c"]);
        let a = &r.rows[0];
        assert_eq!((a.count, a.total_ns, a.min_ns, a.max_ns), (4, 100, 10, 40));
        assert_eq!(a.mean_ns, 25.0);
        assert!((a.std_ns - (500.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert!((a.share_pct - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(r.rows[1].std_ns, 0.0);
        assert_eq!(a.flops, None);
        let s = run(&recs, Key::Stream, 1);
        assert_eq!(s.rows.len(), 1);
        assert_eq!(s.rows[0].key, "0:8");
        assert_eq!((s.hidden_groups, s.hidden_ns), (1, 130));
        let n = run(&recs, Key::Nvtx, 0);
        assert_eq!(n.rows[0].key, NONE);
    }

    #[test]
    fn outputs() {
        let recs = vec![rec("k,1", 10, 7), rec("k,1", 30, 7)];
        let r = run(&recs, Key::Kernel, 0);
        let mut csv = Vec::new();
        write_csv(&mut csv, &r).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "key,count,total_ns,mean_ns,median_ns,std_ns,min_ns,max_ns,share_pct,flops,flops_kernels,bytes,bytes_kernels,tflops,gbs\n\"k,1\",2,40,20,20,14.142135623730951,10,30,100,,0,,0,,\n"
        );
        let mut t = Vec::new();
        write_table(&mut t, &r, Key::Kernel, 0).unwrap();
        let t = String::from_utf8(t).unwrap();
        assert!(t.contains("| k,1    |     2 |         40 |"), "{t}");
        let mut j = Vec::new();
        write_json(&mut j, &r).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&j).unwrap();
        assert_eq!(v["rows"][0]["total_ns"], 40);
        assert_eq!(v["share_of"], SHARE_OF);
    }

    /// Odd count: the middle one; even: the mean of the two middle ones;
    /// durations beyond u32 (4.29 s) are kept exactly.
    #[test]
    fn median_by_hand() {
        let recs = vec![rec("a", 30, 7), rec("a", 10, 7), rec("a", 20, 7)];
        assert_eq!(run(&recs, Key::Kernel, 0).rows[0].median_ns, 20.0);
        let recs = vec![
            rec("a", 40, 7),
            rec("a", 10, 7),
            rec("a", 25, 7),
            rec("a", 1, 7),
        ];
        assert_eq!(run(&recs, Key::Kernel, 0).rows[0].median_ns, 17.5);
        let big = 5_000_000_000;
        let recs = vec![rec("a", big, 7), rec("a", big + 2, 7), rec("a", 1, 7)];
        assert_eq!(run(&recs, Key::Kernel, 0).rows[0].median_ns, big as f64);
        let recs = vec![rec("a", big, 7), rec("a", big + 2, 7)];
        assert_eq!(
            run(&recs, Key::Kernel, 0).rows[0].median_ns,
            (big + 1) as f64
        );
    }
}
