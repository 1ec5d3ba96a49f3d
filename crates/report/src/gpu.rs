//! `rprof gpu`: how busy each GPU was and how well its kernels fill it.
//!
//! Per device: the profiled span, busy time, utilization (optionally per
//! bucket), estimated SM efficiency and estimated achieved occupancy; a
//! kernel view per kernel name; a roofline per op or kernel; and, with
//! `--kineto-check`, rprof's occupancy estimate next to the one the
//! PyTorch profiler recorded. The math is in `rprof-gpu`; definitions and
//! formulas are in docs/reports.md and printed under each table.

use std::collections::HashMap;
use std::io::{self, Write};

use rprof_gpu::device::{Device, Devices};
use rprof_gpu::limits::{DEFAULT_SMEM_PER_BLOCK, LimitsSource};
use rprof_gpu::occupancy::{self, Launch, Limiter};
use rprof_gpu::roofline;
use rprof_gpu::spec::{GpuSpec, MathClass};
use rprof_gpu::timeline::Weighted;
use rprof_gpu::usage::{self, DeviceUsage, KernelTime};
use rprof_model::DeviceInfo;
use rprof_model::record::Record;
use rprof_ops::{KernelEstimate, Tc};

use crate::model::{dtype_of, known_bytes, known_flops};
use crate::text;

/// Most utilization buckets `rprof gpu --buckets` prints: a span of
/// about 17 minutes in 10 ms buckets. Two kernels far apart in time would
/// otherwise ask for billions of rows.
pub const MAX_BUCKETS: usize = 100_000;

/// Rows of the roofline: per op or per kernel name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoofBy {
    /// The op the models give.
    Op,
    /// Kernel short name.
    Kernel,
}

/// What to print.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuOptions {
    /// Utilization per bucket of this many ns (`None`: no buckets).
    pub bucket_ns: Option<i64>,
    /// Rows of the kernel view and the roofline (0: all).
    pub top: usize,
    /// Roofline rows.
    pub roof_by: RoofBy,
    /// Peak TFLOP/s for every math class, instead of the GPU table's.
    pub peak_tflops: Option<f64>,
    /// Memory bandwidth, GB/s, instead of the GPU table's.
    pub bandwidth_gbs: Option<f64>,
    /// Compare rprof's occupancy estimate with Kineto's recorded one.
    pub kineto_check: bool,
    /// Clip names to this many characters (0: never).
    pub name_width: usize,
    /// Write the roofline (the only part that needs the op models).
    pub roofline: bool,
}

impl Default for GpuOptions {
    fn default() -> GpuOptions {
        GpuOptions {
            bucket_ns: None,
            top: 15,
            roof_by: RoofBy::Op,
            peak_tflops: None,
            bandwidth_gbs: None,
            kineto_check: false,
            name_width: 60,
            roofline: true,
        }
    }
}

fn limiter_index(l: Limiter) -> usize {
    match l {
        Limiter::Blocks => 0,
        Limiter::Warps => 1,
        Limiter::Registers => 2,
        Limiter::SharedMemory => 3,
    }
}

const LIMITERS: [Limiter; 4] = [
    Limiter::Blocks,
    Limiter::Warps,
    Limiter::Registers,
    Limiter::SharedMemory,
];

#[derive(Clone, Debug, Default)]
struct KernelGroup {
    name: String,
    count: u64,
    total_ns: i64,
    blocks_per_sm: Weighted,
    achieved: Weighted,
    theoretical: Weighted,
    limiter_ns: [i64; 4],
    /// Some instance had a known limiter.
    limited: bool,
    /// Time of the kernels whose names say tensor cores.
    tc_ns: i64,
    /// The group's last long name and whether it says tensor cores (a
    /// short name such as `cutlass::Kernel` covers tensor-core and other
    /// kernels, so each kernel is tested; runs of one name are common).
    tc_last: Option<(String, bool)>,
}

/// Distinct long names whose tensor-core test is remembered (beyond: tested
/// each time; bounds memory on hostile input).
const TC_CACHE: usize = 65_536;

/// Tensor cores by kernel name, each distinct name tested once.
#[derive(Debug, Default)]
struct TcNames {
    known: HashMap<String, bool>,
}

impl TcNames {
    fn get(&mut self, group: &mut KernelGroup, short: &str, long: &str) -> bool {
        if let Some((name, tc)) = &group.tc_last
            && name == long
        {
            return *tc;
        }
        let tc = match self.known.get(long) {
            Some(&tc) => tc,
            None => {
                let tc = rprof_ops::tc::uses_tensor_cores(short, long);
                if self.known.len() < TC_CACHE {
                    self.known.insert(long.to_owned(), tc);
                }
                tc
            }
        };
        match &mut group.tc_last {
            Some((name, last)) => {
                // reuse the buffer
                name.clear();
                name.push_str(long);
                *last = tc;
            }
            None => group.tc_last = Some((long.to_owned(), tc)),
        }
        tc
    }
}

#[derive(Clone, Debug)]
struct RoofGroup {
    device: usize,
    label: String,
    class: MathClass,
    count: u64,
    dur_ns: i64,
    flops: i128,
    bytes: i128,
}

/// A launch configuration that Kineto and rprof rate differently.
#[derive(Clone, Debug)]
struct Differing {
    /// Long (demangled) name: short names such as `cutlass::Kernel` hide
    /// which kernel it is.
    name: String,
    grid: [i64; 3],
    block: [i64; 3],
    regs: Option<i64>,
    smem: i64,
    count: u64,
    rprof_pct: i64,
    kineto_pct: i64,
    rule_pct: Option<i64>,
}

/// Counts of `--kineto-check`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KinetoStats {
    /// Kernels with Kineto's occupancy and an rprof estimate.
    pub compared: u64,
    /// Kernels with Kineto's occupancy but no SM count (no estimate).
    pub skipped: u64,
    /// rprof's rounded percent equals Kineto's.
    pub equal: u64,
    /// |difference| ≤ 1 point.
    pub within_one: u64,
    /// Σ |difference|, points.
    pub sum_abs: u64,
    /// Largest |difference|, points.
    pub max_abs: u64,
    /// Differing kernels that use more than 48 KiB shared memory per block.
    pub differ_over_48k: u64,
    /// Kernels where Kineto's own rule (48 KiB default limit), computed by
    /// rprof, gives exactly the recorded value.
    pub rule_equal: u64,
    /// Kernels with Kineto's `blocks per SM`.
    pub blocks_compared: u64,
    /// … equal to rprof's within a relative 1e-6.
    pub blocks_equal: u64,
}

/// Kernel name, grid, block, registers per thread, shared memory.
type LaunchConfig = (String, [i64; 3], [i64; 3], Option<i64>, i64);

#[derive(Debug, Default)]
struct KinetoCheck {
    stats: KinetoStats,
    differing: Vec<Differing>,
    index: HashMap<LaunchConfig, usize>,
}

/// Accumulates the report, one record at a time, in input order.
#[derive(Debug)]
pub struct GpuReport {
    opts: GpuOptions,
    devices: Devices,
    usage: Vec<DeviceUsage>,
    kernels: Vec<KernelGroup>,
    kernel_index: HashMap<String, usize>,
    roof: Vec<RoofGroup>,
    roof_index: HashMap<(usize, String, MathClass), usize>,
    roof_unknown: (u64, i64),
    kineto: KinetoCheck,
    total: (u64, i64),
    no_regs: u64,
    /// Per device (index of `devices`): time of tensor-core kernels.
    tc_ns: Vec<i64>,
    tc_names: TcNames,
    /// Per device: kernels that do not fit its limits (0 resident blocks).
    unfit: Vec<u64>,
}

impl GpuReport {
    /// A report over the devices the input describes.
    pub fn new(devices: Vec<DeviceInfo>, opts: GpuOptions) -> GpuReport {
        GpuReport {
            opts,
            devices: Devices::new(devices),
            usage: Vec::new(),
            kernels: Vec::new(),
            kernel_index: HashMap::new(),
            roof: Vec::new(),
            roof_index: HashMap::new(),
            roof_unknown: (0, 0),
            kineto: KinetoCheck::default(),
            total: (0, 0),
            no_regs: 0,
            tc_ns: Vec::new(),
            tc_names: TcNames::default(),
            unfit: Vec::new(),
        }
    }

    /// Count a chunk of kernels: first note what the kernels of GPUs not
    /// seen yet say about them (compute capability from kernel names, SM
    /// count from Kineto's `blocks per SM`; used only where the input has
    /// no device table), then [`GpuReport::add`] each.
    pub fn add_chunk(&mut self, recs: &[Record<'_>], est: &[KernelEstimate<'_>]) {
        for rec in recs {
            if self.devices.is_resolved(rec.device, rec.pid) {
                continue;
            }
            let blocks = rec.grid.iter().map(|&g| g.max(1)).product::<i64>();
            let name = if rec.long_name.is_empty() {
                &rec.short_name
            } else {
                &rec.long_name
            };
            self.devices
                .hint(rec.device, name, blocks, rec.kineto_blocks_per_sm);
        }
        for (rec, e) in recs.iter().zip(est) {
            self.add(rec, e);
        }
    }

    /// Describe devices the input revealed after the report began (a
    /// record file's records); see [`Devices::learn`].
    pub fn learn_devices(&mut self, more: &[DeviceInfo]) {
        self.devices.learn(more);
    }

    /// Count one kernel.
    pub fn add(&mut self, rec: &Record<'_>, est: &KernelEstimate<'_>) {
        let di = self.devices.resolve(
            rec.device,
            rec.pid,
            rec.device_name.as_deref(),
            rec.sm_count,
        );
        let Some(dev) = self.devices.get(di) else {
            return;
        };
        let l = &dev.limits;
        let dur = rec.duration_ns.max(0);
        self.total.0 += 1;
        self.total.1 = self.total.1.saturating_add(dur);
        let smem = match (rec.static_smem_bytes, rec.dynamic_smem_bytes) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
        let launch = Launch {
            grid: rec.grid,
            block: rec.block,
            regs_per_thread: rec.regs,
            smem_per_block: smem,
        };
        // without registers per thread (PyProf's own .dict files) the
        // occupancy rules would only give an upper bound: say unknown
        let occ = rec.regs.map(|_| occupancy::occupancy(l, &launch));
        self.no_regs += u64::from(occ.is_none());
        if self.usage.len() <= di {
            self.usage.resize_with(di + 1, DeviceUsage::default);
            self.tc_ns.resize(di + 1, 0);
            self.unfit.resize(di + 1, 0);
        }
        // a kernel that ran had at least one resident block: 0 means the
        // limits (assumed or inferred) do not describe its GPU
        let occ = match occ {
            Some(o) if o.active_blocks == 0 => {
                self.unfit[di] += 1;
                None
            }
            o => o,
        };
        let sms = l.sm_count.unwrap_or(0);
        let sm_eff = occupancy::sm_efficiency(&launch, sms);
        let achieved = occ.and(occupancy::estimated_achieved(l, &launch));
        let per_sm = occupancy::blocks_per_sm(&launch, sms);
        self.usage[di].add(
            KernelTime {
                start_ns: rec.start_ns,
                end_ns: rec.end_ns,
                dur_ns: dur,
            },
            sm_eff,
            achieved,
            occ.map(|o| o.theoretical),
        );

        // kernel view
        let ki = match self.kernel_index.get(rec.short_name.as_ref()) {
            Some(&i) => i,
            None => {
                self.kernels.push(KernelGroup {
                    name: rec.short_name.to_string(),
                    ..KernelGroup::default()
                });
                self.kernel_index
                    .insert(rec.short_name.to_string(), self.kernels.len() - 1);
                self.kernels.len() - 1
            }
        };
        if let Some(k) = self.kernels.get_mut(ki) {
            k.count += 1;
            k.total_ns = k.total_ns.saturating_add(dur);
            if self.tc_names.get(k, &rec.short_name, &rec.long_name) {
                k.tc_ns = k.tc_ns.saturating_add(dur);
                self.tc_ns[di] = self.tc_ns[di].saturating_add(dur);
            }
            k.blocks_per_sm.add(dur, per_sm);
            k.achieved.add(dur, achieved);
            if let Some(o) = occ {
                k.theoretical.add(dur, Some(o.theoretical));
                let slot = &mut k.limiter_ns[limiter_index(o.limiter)];
                *slot = slot.saturating_add(dur);
                k.limited = true;
            }
        }

        // roofline
        match (known_flops(&est.estimate), known_bytes(&est.estimate)) {
            (Some(f), Some(b)) if dur > 0 && (f > 0 || b > 0) => {
                let label = match self.opts.roof_by {
                    RoofBy::Op if est.op.is_empty() => crate::summary::NONE.to_owned(),
                    RoofBy::Op => est.op.to_owned(),
                    RoofBy::Kernel => rec.short_name.to_string(),
                };
                let tc = match est.estimate.tc {
                    Tc::Yes => true,
                    Tc::No => false,
                    Tc::NotApplicable | Tc::Unknown => {
                        rprof_ops::tc::uses_tensor_cores(&rec.short_name, &rec.long_name)
                    }
                };
                let class = MathClass::classify(dtype_of(&est.estimate.params), tc);
                let key = (di, label, class);
                let ri = match self.roof_index.get(&key) {
                    Some(&i) => i,
                    None => {
                        self.roof.push(RoofGroup {
                            device: di,
                            label: key.1.clone(),
                            class,
                            count: 0,
                            dur_ns: 0,
                            flops: 0,
                            bytes: 0,
                        });
                        self.roof_index.insert(key, self.roof.len() - 1);
                        self.roof.len() - 1
                    }
                };
                if let Some(g) = self.roof.get_mut(ri) {
                    g.count += 1;
                    g.dur_ns = g.dur_ns.saturating_add(dur);
                    g.flops = g.flops.saturating_add(f);
                    g.bytes = g.bytes.saturating_add(b);
                }
            }
            _ => {
                self.roof_unknown.0 += 1;
                self.roof_unknown.1 = self.roof_unknown.1.saturating_add(dur);
            }
        }

        // Kineto's own figures
        if let Some(recorded) = rec.kineto_occupancy_pct {
            let ck = &mut self.kineto;
            match achieved {
                None => ck.stats.skipped += 1,
                Some(a) => {
                    let mine = occupancy::round_percent(a);
                    let theirs = recorded.round() as i64;
                    let rule = occupancy::kineto_percent(l, &launch);
                    let d = mine.abs_diff(theirs);
                    let s = &mut ck.stats;
                    s.compared += 1;
                    s.sum_abs = s.sum_abs.saturating_add(d);
                    s.max_abs = s.max_abs.max(d);
                    s.equal += u64::from(d == 0);
                    s.within_one += u64::from(d <= 1);
                    s.rule_equal += u64::from(rule == Some(theirs));
                    if d > 0 {
                        let over = smem.unwrap_or(0) > DEFAULT_SMEM_PER_BLOCK;
                        s.differ_over_48k += u64::from(over);
                        let key = (
                            if rec.long_name.is_empty() {
                                rec.short_name.to_string()
                            } else {
                                rec.long_name.to_string()
                            },
                            rec.grid,
                            rec.block,
                            rec.regs,
                            smem.unwrap_or(0),
                        );
                        let i = match ck.index.get(&key) {
                            Some(&i) => i,
                            None => {
                                ck.differing.push(Differing {
                                    name: key.0.clone(),
                                    grid: rec.grid,
                                    block: rec.block,
                                    regs: rec.regs,
                                    smem: smem.unwrap_or(0),
                                    count: 0,
                                    rprof_pct: mine,
                                    kineto_pct: theirs,
                                    rule_pct: rule,
                                });
                                ck.index.insert(key, ck.differing.len() - 1);
                                ck.differing.len() - 1
                            }
                        };
                        if let Some(x) = ck.differing.get_mut(i) {
                            x.count += 1;
                        }
                    }
                }
            }
            if let (Some(kb), Some(mb)) = (rec.kineto_blocks_per_sm, per_sm) {
                let s = &mut self.kineto.stats;
                s.blocks_compared += 1;
                s.blocks_equal += u64::from((kb - mb).abs() <= 1e-6 * mb.abs().max(1.0));
            }
        }
    }

    /// The `--kineto-check` counts so far.
    pub fn kineto_stats(&self) -> &KinetoStats {
        &self.kineto.stats
    }

    /// Busy fraction of each device over the common span, in device order
    /// (`None` without kernel times).
    pub fn utilization(&self) -> Vec<Option<f64>> {
        let span = usage::span(&self.usage);
        self.usage
            .iter()
            .map(|u| span.and_then(|(lo, hi)| u.utilization(lo, hi)))
            .collect()
    }

    /// Write the report as text. Fails before writing anything when the
    /// buckets asked for would be more than [`MAX_BUCKETS`].
    pub fn write<W: Write>(&self, mut w: W, name: &str) -> io::Result<()> {
        if let (Some(width), Some((lo, hi))) = (self.opts.bucket_ns, usage::span(&self.usage)) {
            let n = (i128::from(hi) - i128::from(lo)).div_euclid(i128::from(width.max(1))) + 1;
            if n > MAX_BUCKETS as i128 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{}: --buckets={} ms would print {n} buckets over the {} ms span, more than rprof's limit of {MAX_BUCKETS}; use wider buckets",
                        crate::escape::escape_control(name),
                        text::ms(width),
                        text::ms(hi.saturating_sub(lo)),
                    ),
                ));
            }
        }
        writeln!(w, "rprof gpu: {}", crate::escape::escape_control(name))?;
        if self.total.0 == 0 {
            writeln!(w, "No GPU kernels in this input.")?;
            return Ok(());
        }
        self.write_devices(&mut w)?;
        if let Some(width) = self.opts.bucket_ns {
            self.write_buckets(&mut w, width)?;
        }
        self.write_kernels(&mut w)?;
        if self.opts.roofline {
            self.write_roofline(&mut w)?;
        }
        if self.opts.kineto_check {
            self.write_kineto(&mut w)?;
        }
        Ok(())
    }

    /// The devices and their usage, by ordinal (then first seen).
    fn by_device(&self) -> Vec<(&Device, &DeviceUsage)> {
        self.by_device_index()
            .into_iter()
            .map(|(_, d, u)| (d, u))
            .collect()
    }

    /// [`GpuReport::by_device`] with each device's index.
    fn by_device_index(&self) -> Vec<(usize, &Device, &DeviceUsage)> {
        let mut v: Vec<(usize, &Device, &DeviceUsage)> = self
            .devices
            .list()
            .iter()
            .zip(&self.usage)
            .enumerate()
            .map(|(i, (d, u))| (i, d, u))
            .collect();
        v.sort_by(|a, b| a.1.device.cmp(&b.1.device).then(a.0.cmp(&b.0)));
        v
    }

    fn write_devices<W: Write>(&self, w: &mut W) -> io::Result<()> {
        let span = usage::span(&self.usage);
        writeln!(w)?;
        match span {
            Some((lo, hi)) => writeln!(
                w,
                "Span: {} ms, from the first kernel start to the last kernel end on any GPU in the input (t = 0 at the first kernel start).",
                text::ms(hi.saturating_sub(lo))
            )?,
            None => writeln!(
                w,
                "Span: unknown: the records have no kernel start/end times (PyProf's own .dict files do not); utilization needs records from `rprof parse` or the profile itself."
            )?,
        }
        writeln!(w)?;
        let mut t = text::table(
            &[
                "GPU",
                "Name",
                "SMs",
                "CC",
                "Limits from",
                "Kernels",
                "Kernel time (ms)",
                "Busy (ms)",
                "Util. (%)",
                "Est. SM eff. (%)",
                "Est. achieved occ. (%)",
                "Theor. occ. (%)",
                "TC time (%)",
            ],
            &[0, 2, 5, 6, 7, 8, 9, 10, 11, 12],
        );
        for (di, dev, u) in self.by_device_index() {
            let busy = span.map(|(lo, hi)| u.busy_ns(lo, hi));
            let l = &dev.limits;
            t.add_row(vec![
                dev.device.to_string(),
                dev.name.as_deref().map_or_else(
                    || "(unknown)".into(),
                    |n| crate::escape::escape_control(n).into_owned(),
                ),
                match l.sm_count {
                    None => "-".into(),
                    Some(n) if dev.sm_count_inferred => format!("{n} (inferred)"),
                    Some(n) => n.to_string(),
                },
                format!("{}.{}", l.cc.0, l.cc.1),
                l.source.as_str().to_owned(),
                u.kernels.to_string(),
                text::ms(u.kernel_ns),
                busy.map_or("-".into(), text::ms),
                text::pct(span.and_then(|(lo, hi)| u.utilization(lo, hi)), 2),
                text::pct(u.sm_efficiency.mean(), 2),
                text::pct(u.achieved.mean(), 2),
                text::pct(u.theoretical.mean(), 2),
                text::pct(
                    (u.kernel_ns > 0).then(|| {
                        self.tc_ns.get(di).copied().unwrap_or(0) as f64 / u.kernel_ns as f64
                    }),
                    2,
                ),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())?;
        writeln!(
            w,
            "Util. = utilization = busy time (time with at least one kernel running on the GPU; memory copies and sets do not count, unlike HTA: see rprof mem) / span. Kernel time = sum of kernel durations (overlaps count in full)."
        )?;
        writeln!(
            w,
            "Est. SM efficiency = min(blocks / SMs, 1) per kernel; est. achieved occupancy = min(resident blocks per SM, blocks / SMs) x threads per block / threads per SM per kernel; theoretical occupancy = resident warps / max warps per SM (CUDA occupancy rules). All three are means weighted by kernel duration."
        )?;
        writeln!(
            w,
            "TC time = kernel time using tensor cores: the time of kernels whose names say tensor cores, as a % of the GPU's kernel time (the TensorBoard plugin's 'Kernel Time using Tensor Cores')."
        )?;
        writeln!(
            w,
            "Limits from: file = the profile's device table; file cc + cc table = compute capability from the file, missing limits from rprof's table; cc inferred from kernel names = no device table, the compute capability the kernel names imply (volta_/sm70_ 7.0, turing_/sm75_ 7.5, ampere_/sm80_ 8.0, sm86_ 8.6, sm89_ 8.9, sm90_/nvjet_/hopper 9.0, sm100_ 10.0, sm120_ 12.0; the highest one seen); assumed (cc 8.0) = the input does not describe the GPU and its kernel names do not say. SMs (inferred) = grid blocks / the PyTorch profiler's `blocks per SM` (no device table)."
        )?;
        if self.no_regs > 0 {
            writeln!(
                w,
                "note: {} kernels have no registers per thread (PyProf's own .dict files lack them): their occupancy is unknown, not estimated.",
                self.no_regs
            )?;
        }
        for (di, dev, _) in self.by_device_index() {
            if let Some(&n) = self.unfit.get(di).filter(|&&n| n > 0) {
                writeln!(
                    w,
                    "note: {n} kernels on GPU {} do not fit its limits ({}; cc {}.{}: no resident block): their occupancy is unknown, not 0 %.",
                    dev.device,
                    dev.limits.source.as_str(),
                    dev.limits.cc.0,
                    dev.limits.cc.1
                )?;
            }
        }
        for dev in self.devices.list() {
            if dev.limits.source == LimitsSource::KernelNames {
                writeln!(
                    w,
                    "note: the input does not describe GPU {}: occupancy uses the limits of compute capability {}.{}, inferred from its kernel names{}.",
                    dev.device,
                    dev.limits.cc.0,
                    dev.limits.cc.1,
                    if dev.limits.sm_count.is_none() {
                        ", and SM efficiency and achieved occupancy need its SM count (unknown)"
                    } else {
                        ""
                    }
                )?;
            }
            if dev.limits.source == LimitsSource::Assumed {
                writeln!(
                    w,
                    "note: the input does not describe GPU {}: occupancy uses assumed compute capability 8.0 limits{}.",
                    dev.device,
                    if dev.limits.sm_count.is_none() {
                        ", and SM efficiency and achieved occupancy need its SM count (unknown)"
                    } else {
                        ""
                    }
                )?;
            }
        }
        Ok(())
    }

    fn write_buckets<W: Write>(&self, w: &mut W, width: i64) -> io::Result<()> {
        let Some((lo, hi)) = usage::span(&self.usage) else {
            return Ok(());
        };
        writeln!(w)?;
        writeln!(
            w,
            "Utilization per {} ms bucket (% of the bucket with at least one kernel running; t = 0 at the first kernel start)",
            text::ms(width)
        )?;
        // (device, [(bucket start, length, busy)])
        type Column = (i64, Vec<(i64, i64, i64)>);
        let cols: Vec<Column> = self
            .by_device()
            .into_iter()
            .map(|(d, u)| (d.device, u.buckets(lo, hi, width)))
            .collect();
        let mut line = format!("{:>12} {:>12}", "start (ms)", "end (ms)");
        for (d, _) in &cols {
            line.push_str(&format!(" {:>10}", format!("GPU {d}")));
        }
        writeln!(w, "{line}")?;
        let n = cols.first().map_or(0, |c| c.1.len());
        for i in 0..n {
            let Some(&(s, len, _)) = cols.first().and_then(|c| c.1.get(i)) else {
                break;
            };
            let mut line = format!(
                "{:>12} {:>12}",
                text::ms(s.saturating_sub(lo)),
                text::ms(s.saturating_sub(lo).saturating_add(len))
            );
            for (_, b) in &cols {
                let v = b
                    .get(i)
                    .map(|&(_, len, busy)| busy as f64 * 100.0 / len.max(1) as f64);
                line.push_str(&format!(" {:>10}", text::opt(v, 2)));
            }
            writeln!(w, "{line}")?;
        }
        Ok(())
    }

    fn write_kernels<W: Write>(&self, w: &mut W) -> io::Result<()> {
        let mut order: Vec<&KernelGroup> = self.kernels.iter().collect();
        order.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then(b.count.cmp(&a.count))
                .then_with(|| a.name.cmp(&b.name))
        });
        let shown = shown(self.opts.top, order.len());
        writeln!(w)?;
        writeln!(
            w,
            "Kernels: {} of {} names by total time (means weighted by kernel duration)",
            shown,
            order.len()
        )?;
        let mut t = text::table(
            &[
                "Kernel",
                "Count",
                "Total (ns)",
                "Mean blocks per SM",
                "Est. achieved occ. (%)",
                "Theor. occ. (%)",
                "Limited by",
                "Tensor cores (% of time)",
            ],
            &[1, 2, 3, 4, 5, 7],
        );
        for k in &order[..shown] {
            // the limiter of most of the kernel's time (ties: the first in
            // blocks, warps, registers, shared memory)
            let mut best = 0;
            for i in 1..4 {
                if k.limiter_ns[i] > k.limiter_ns[best] {
                    best = i;
                }
            }
            t.add_row(vec![
                text::clip(&k.name, self.opts.name_width),
                k.count.to_string(),
                k.total_ns.to_string(),
                text::opt(k.blocks_per_sm.mean(), 2),
                text::pct(k.achieved.mean(), 1),
                text::pct(k.theoretical.mean(), 1),
                if k.limited {
                    LIMITERS[best].as_str().to_owned()
                } else {
                    "-".to_owned()
                },
                text::pct(
                    (k.total_ns > 0).then(|| k.tc_ns as f64 / k.total_ns as f64),
                    1,
                ),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())?;
        writeln!(
            w,
            "Blocks per SM = grid blocks / SMs. Limited by = the resource that bounds resident blocks for most of the kernel's time. Tensor cores = the share of the group's time in kernels whose names (short or long) say tensor cores."
        )?;
        Ok(())
    }

    fn roof_peaks(&self, spec: Option<&'static GpuSpec>) -> Option<(Peaks, String)> {
        let o = &self.opts;
        match (spec, o.peak_tflops, o.bandwidth_gbs) {
            (_, Some(p), Some(b)) => Some((
                Peaks::Flat(p * 1e12, b * 1e9),
                format!(
                    "peak {p} TFLOP/s for every math class (--peak-tflops), bandwidth {b} GB/s (--bandwidth-gbs)"
                ),
            )),
            (Some(s), p, b) => {
                let bw = b.unwrap_or(s.bandwidth_gbs);
                let source = format!(
                    "rprof's GPU table row '{}'{}",
                    s.name,
                    match (p, b) {
                        (Some(_), _) => ", peak from --peak-tflops",
                        (_, Some(_)) => ", bandwidth from --bandwidth-gbs",
                        _ => "",
                    }
                );
                let text = match p {
                    Some(p) => format!(
                        "{source}: peak {p} TFLOP/s for every math class, bandwidth {bw} GB/s"
                    ),
                    None => format!(
                        "{source}: bandwidth {bw} GB/s; dense peak TFLOP/s fp64 {}, fp32 {}, tf32 tc {}, fp16/bf16 tc {}, fp8 tc {}",
                        s.fp64,
                        s.fp32,
                        peak_or_none(s.tf32),
                        peak_or_none(s.fp16),
                        peak_or_none(s.fp8)
                    ),
                };
                Some((
                    match p {
                        Some(p) => Peaks::Flat(p * 1e12, bw * 1e9),
                        None => Peaks::Table(s, bw * 1e9),
                    },
                    text,
                ))
            }
            (None, _, _) => None,
        }
    }

    fn write_roofline<W: Write>(&self, w: &mut W) -> io::Result<()> {
        let by = match self.opts.roof_by {
            RoofBy::Op => "op",
            RoofBy::Kernel => "kernel",
        };
        writeln!(w)?;
        if self.roof.is_empty() {
            writeln!(
                w,
                "Roofline: no kernel has both FLOPs and bytes from the op models (they need markers the models read: PyProf/emit_nvtx markers with shapes, or Kineto input dims)."
            )?;
            return Ok(());
        }
        let known_kernels: u64 = self.roof.iter().map(|g| g.count).sum();
        let known_ns: i64 = self
            .roof
            .iter()
            .map(|g| g.dur_ns)
            .fold(0, i64::saturating_add);
        // one section per GPU model (devices with the same label share it)
        let mut labels: Vec<(String, Option<&'static GpuSpec>, Vec<usize>)> = Vec::new();
        let mut order: Vec<(usize, &Device)> = self.devices.list().iter().enumerate().collect();
        order.sort_by(|a, b| a.1.device.cmp(&b.1.device).then(a.0.cmp(&b.0)));
        for (i, d) in order {
            let label = d.label();
            match labels.iter_mut().find(|x| x.0 == label) {
                Some(x) => x.2.push(i),
                None => labels.push((label, d.spec, vec![i])),
            }
        }
        for (label, spec, devs) in labels {
            let mut groups: Vec<RoofGroup> = Vec::new();
            for g in self.roof.iter().filter(|g| devs.contains(&g.device)) {
                match groups
                    .iter_mut()
                    .find(|x| x.label == g.label && x.class == g.class)
                {
                    Some(x) => {
                        x.count += g.count;
                        x.dur_ns = x.dur_ns.saturating_add(g.dur_ns);
                        x.flops = x.flops.saturating_add(g.flops);
                        x.bytes = x.bytes.saturating_add(g.bytes);
                    }
                    None => groups.push(g.clone()),
                }
            }
            if groups.is_empty() {
                continue;
            }
            let Some((peaks, source)) = self.roof_peaks(spec) else {
                writeln!(
                    w,
                    "Roofline by {by} on {label}: unknown GPU (not in rprof's GPU table); pass --peak-tflops and --bandwidth-gbs to place its ops under a roof."
                )?;
                continue;
            };
            groups.sort_by(|a, b| {
                b.dur_ns
                    .cmp(&a.dur_ns)
                    .then(b.count.cmp(&a.count))
                    .then_with(|| a.label.cmp(&b.label))
                    .then_with(|| a.class.as_str().cmp(b.class.as_str()))
            });
            let shown = shown(self.opts.top, groups.len());
            writeln!(
                w,
                "Roofline by {by} on {label} ({source}): {shown} of {} rows by time",
                groups.len()
            )?;
            let mut t = text::table(
                &[
                    if by == "op" { "Op" } else { "Kernel" },
                    "Math",
                    "Count",
                    "Time (ns)",
                    "FLOPs",
                    "Bytes",
                    "FLOP/byte",
                    "TFLOP/s",
                    "GB/s",
                    "Peak TFLOP/s",
                    "Bound",
                    "% of roof",
                ],
                &[2, 3, 4, 5, 6, 7, 8, 9, 11],
            );
            for g in &groups[..shown] {
                let (peak, bw) = peaks.get(g.class);
                let p = roofline::place(g.flops as f64, g.bytes as f64, g.dur_ns, peak, bw);
                t.add_row(vec![
                    text::clip(&g.label, self.opts.name_width),
                    g.class.as_str().to_owned(),
                    g.count.to_string(),
                    g.dur_ns.to_string(),
                    text::si(g.flops as f64),
                    text::si(g.bytes as f64),
                    p.map_or("-".into(), |p| {
                        if p.intensity.is_finite() {
                            format!("{:.2}", p.intensity)
                        } else {
                            "inf".into()
                        }
                    }),
                    text::opt(p.map(|p| p.achieved_flops / 1e12), 3),
                    text::opt(p.map(|p| p.achieved_bandwidth / 1e9), 1),
                    format!("{}", peak / 1e12),
                    p.map_or("-".into(), |p| p.bound.as_str().to_owned()),
                    text::pct(p.map(|p| p.share), 2),
                ]);
            }
            w.write_all(text::render(&t).as_bytes())?;
        }
        let total_ns = self.total.1.max(1);
        writeln!(
            w,
            "Only kernels whose FLOPs and bytes the op models know: {} of {} kernels, {:.2} % of kernel time. Math = element type and tensor cores (from the params and the kernel). Bound = compute when FLOP/byte >= peak FLOP/s / bandwidth (the ridge point), else memory. % of roof = achieved FLOP/s / peak (compute-bound) or achieved bytes/s / bandwidth (memory-bound). Bytes are the models' DRAM traffic estimates.",
            known_kernels,
            self.total.0,
            known_ns as f64 * 100.0 / total_ns as f64
        )?;
        Ok(())
    }

    fn write_kineto<W: Write>(&self, w: &mut W) -> io::Result<()> {
        let s = &self.kineto.stats;
        writeln!(w)?;
        if s.compared == 0 && s.skipped == 0 {
            writeln!(
                w,
                "Kineto check: no kernel in this input carries the PyTorch profiler's \"est. achieved occupancy %\" (only Kineto traces and their records do)."
            )?;
            return Ok(());
        }
        let pc = |n: u64| n as f64 * 100.0 / s.compared.max(1) as f64;
        writeln!(
            w,
            "Kineto check: rprof's estimated achieved occupancy vs the PyTorch profiler's recorded \"est. achieved occupancy %\" (both integer percent, rounded as Kineto does: (int)(0.5 + x * 100))"
        )?;
        writeln!(
            w,
            "  kernels compared: {}{}",
            s.compared,
            if s.skipped > 0 {
                format!(
                    " ({} more skipped: no SM count or registers per thread)",
                    s.skipped
                )
            } else {
                String::new()
            }
        )?;
        writeln!(
            w,
            "  equal: {} ({:.2} %); within 1 point: {} ({:.2} %); mean |difference| {:.3} points; largest {} points",
            s.equal,
            pc(s.equal),
            s.within_one,
            pc(s.within_one),
            s.sum_abs as f64 / s.compared.max(1) as f64,
            s.max_abs
        )?;
        let differ = s.compared - s.equal;
        writeln!(
            w,
            "  differing: {differ}, of which {} use more than 48 KiB of shared memory per block",
            s.differ_over_48k
        )?;
        writeln!(
            w,
            "  Kineto's own rule (the default 48 KiB per-block shared memory limit instead of the opt-in one) reproduces {} of {} recorded values",
            s.rule_equal, s.compared
        )?;
        if s.blocks_compared > 0 {
            writeln!(
                w,
                "  blocks per SM: rprof equals Kineto's (relative 1e-6) for {} of {}",
                s.blocks_equal, s.blocks_compared
            )?;
        }
        writeln!(
            w,
            "  Why: Kineto calls cudaOccMaxActiveBlocksPerMultiprocessor with the default shared memory limit (FUNC_SHMEM_LIMIT_DEFAULT), so a kernel that opted in to more than 48 KiB per block \"does not fit\" and is recorded as 0 %; rprof applies the opt-in limit the kernel ran with."
        )?;
        if self.kineto.differing.is_empty() {
            return Ok(());
        }
        let mut d: Vec<&Differing> = self.kineto.differing.iter().collect();
        d.sort_by(|a, b| {
            b.rprof_pct
                .abs_diff(b.kineto_pct)
                .cmp(&a.rprof_pct.abs_diff(a.kineto_pct))
                .then(b.count.cmp(&a.count))
                .then_with(|| a.name.cmp(&b.name))
                .then(a.grid.cmp(&b.grid))
                .then(a.block.cmp(&b.block))
                .then(a.smem.cmp(&b.smem))
        });
        let shown = shown(self.opts.top, d.len());
        writeln!(
            w,
            "Launch configurations that differ most ({shown} of {}):",
            d.len()
        )?;
        let mut t = text::table(
            &[
                "Kernel (full name)",
                "Count",
                "Grid",
                "Block",
                "Regs",
                "Shared mem (B)",
                "rprof (%)",
                "Kineto (%)",
                "Difference",
                "Kineto's rule (%)",
            ],
            &[1, 4, 5, 6, 7, 8, 9],
        );
        let dims = |v: [i64; 3]| format!("{},{},{}", v[0], v[1], v[2]);
        for x in &d[..shown] {
            t.add_row(vec![
                text::clip(&x.name, self.opts.name_width),
                x.count.to_string(),
                dims(x.grid),
                dims(x.block),
                x.regs.map_or("-".into(), |r| r.to_string()),
                x.smem.to_string(),
                x.rprof_pct.to_string(),
                x.kineto_pct.to_string(),
                format!("{:+}", i128::from(x.rprof_pct) - i128::from(x.kineto_pct)),
                x.rule_pct.map_or("-".into(), |r| r.to_string()),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())?;
        Ok(())
    }
}

/// A table peak, `none` when the GPU lacks the unit (0 in the table).
fn peak_or_none(x: f64) -> String {
    if x > 0.0 {
        x.to_string()
    } else {
        "none (fp32 used)".to_owned()
    }
}

/// How many of `n` rows `--top` shows.
fn shown(top: usize, n: usize) -> usize {
    if top == 0 { n } else { top.min(n) }
}

/// The roof of one GPU.
#[derive(Clone, Copy, Debug)]
enum Peaks {
    /// Per math class from the table; bandwidth in bytes/s.
    Table(&'static GpuSpec, f64),
    /// One peak FLOP/s and bandwidth.
    Flat(f64, f64),
}

impl Peaks {
    fn get(self, class: MathClass) -> (f64, f64) {
        match self {
            Peaks::Table(s, bw) => (s.peak_flops(class), bw),
            Peaks::Flat(p, bw) => (p, bw),
        }
    }
}
