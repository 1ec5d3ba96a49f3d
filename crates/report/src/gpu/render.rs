//! The text report of `rprof gpu`: the device table, utilization buckets,
//! the kernel view, the roofline and the Kineto check, each with the
//! definitions printed under it (the data are computed in the parent
//! module).

use super::*;

impl GpuReport {
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
