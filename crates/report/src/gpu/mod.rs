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

use rprof_gpu::Weighted;
use rprof_gpu::occupancy::{self, Launch, Limiter};
use rprof_gpu::roofline;
use rprof_gpu::usage::{self, DeviceUsage, KernelTime};
use rprof_gpu::{DEFAULT_SMEM_PER_BLOCK, LimitsSource};
use rprof_gpu::{Device, Devices};
use rprof_gpu::{GpuSpec, MathClass};
use rprof_model::DeviceInfo;
use rprof_model::{KernelRef, Kernels};
use rprof_ops::{Dtype, KernelEstimate, Tc};

use crate::model::{known_bytes, known_flops};
use crate::text;

mod render;

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
                let tc = rprof_ops::uses_tensor_cores(short, long);
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
    pub fn add_chunk(&mut self, recs: &Kernels<'_>, est: &[KernelEstimate<'_>]) {
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
    pub fn add(&mut self, rec: KernelRef<'_, '_>, est: &KernelEstimate<'_>) {
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
                        rprof_ops::uses_tensor_cores(&rec.short_name, &rec.long_name)
                    }
                };
                let class = MathClass::classify(est.estimate.params.dtype().map(Dtype::name), tc);
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
}
