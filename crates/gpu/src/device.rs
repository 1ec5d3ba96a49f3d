//! Which GPU a kernel ran on: its description (from the profile's device
//! table, a record file's header, or the record itself), limits and peaks.

use rprof_model::DeviceInfo;

use crate::limits::{Limits, LimitsSource};
use crate::spec::{self, GpuSpec};

/// One GPU as the reports use it.
#[derive(Clone, Debug)]
pub struct Device {
    /// CUDA device ordinal.
    pub device: i64,
    /// Name, when the input gives one.
    pub name: Option<String>,
    /// Per-SM limits and where they came from.
    pub limits: Limits,
    /// Peaks from rprof's GPU table (`None`: no name, or not in the table).
    pub spec: Option<&'static GpuSpec>,
    /// The SM count was inferred from Kineto's `blocks per SM` (grid blocks
    /// / blocks per SM), not read from a device table.
    pub sm_count_inferred: bool,
}

/// The lowest compute capability a kernel's name implies: architecture
/// prefixes of cuBLAS, cuDNN and CUTLASS kernels (`volta_`, `sm80_`,
/// `cutlass3x_sm90_`, `nvjet_`, …), at the start of the name or after `_`.
/// A kernel built for one architecture runs on that one or a later one of
/// the same family, so the highest such bound over a GPU's kernels is the
/// best guess for it. `None` when the name says nothing.
pub fn cc_from_kernel_name(name: &str) -> Option<(i64, i64)> {
    // (token, cc); tokens are matched at a word start (start or after '_')
    const TOKENS: &[(&str, (i64, i64))] = &[
        ("volta_", (7, 0)),
        ("sm70_", (7, 0)),
        ("turing_", (7, 5)),
        ("sm75_", (7, 5)),
        ("ampere_", (8, 0)),
        ("sm80_", (8, 0)),
        ("sm86_", (8, 6)),
        ("sm89_", (8, 9)),
        ("hopper", (9, 0)),
        ("sm90_", (9, 0)),
        ("sm90a_", (9, 0)),
        ("nvjet_", (9, 0)),
        ("sm100_", (10, 0)),
        ("sm100a_", (10, 0)),
        ("sm120_", (12, 0)),
    ];
    let b = name.as_bytes();
    let mut best: Option<(i64, i64)> = None;
    for i in 0..b.len() {
        // word starts only: the start, or after '_', ':', ' ', '<' or ','
        if i > 0 && !matches!(b[i - 1], b'_' | b':' | b' ' | b'<' | b',') {
            continue;
        }
        if !matches!(b[i], b'v' | b's' | b't' | b'a' | b'h' | b'n') {
            continue;
        }
        let rest = &b[i..];
        for &(t, cc) in TOKENS {
            if rest.starts_with(t.as_bytes()) {
                best = best.max(Some(cc));
            }
        }
    }
    best
}

/// The SM count Kineto's `blocks per SM` implies: grid blocks / blocks per
/// SM, when that is within 1 % of a positive whole number (Kineto rounds
/// what it writes). `None` otherwise.
pub fn sm_count_from_blocks_per_sm(grid_blocks: i64, blocks_per_sm: f64) -> Option<i64> {
    if grid_blocks <= 0 || !(blocks_per_sm.is_finite() && blocks_per_sm > 0.0) {
        return None;
    }
    let x = grid_blocks as f64 / blocks_per_sm;
    let n = x.round();
    ((1.0..=1e6).contains(&n) && (x - n).abs() <= 0.01 * n).then_some(n as i64)
}

/// What the kernels of one GPU say about it when the input has no device
/// table: the compute capability their names imply and the SM count their
/// `blocks per SM` implies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    /// The highest compute capability the kernel names imply.
    pub cc: Option<(i64, i64)>,
    /// The first SM count inferred from `blocks per SM`.
    pub sm_count: Option<i64>,
}

impl Device {
    /// `NAME` or `device N (name unknown)`.
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("device {} (name unknown)", self.device),
        }
    }
}

/// Resolves `(device, pid)` of each kernel to a [`Device`], once per pair.
#[derive(Clone, Debug, Default)]
pub struct Devices {
    known: Vec<DeviceInfo>,
    seen: Vec<((i64, Option<u64>), usize)>,
    list: Vec<Device>,
    hints: Vec<(i64, Hints)>,
}

impl Devices {
    /// Devices the input describes (profile device table or record-file
    /// header; may be empty).
    pub fn new(known: Vec<DeviceInfo>) -> Devices {
        Devices {
            known,
            seen: Vec::new(),
            list: Vec::new(),
            hints: Vec::new(),
        }
    }

    /// True once a kernel on ordinal `device` of process `pid` was resolved
    /// (later hints for it change nothing).
    pub fn is_resolved(&self, device: i64, pid: Option<u64>) -> bool {
        self.seen.iter().any(|(k, _)| *k == (device, pid))
    }

    /// Note what one kernel on ordinal `device` says about its GPU (name,
    /// grid blocks, Kineto's `blocks per SM`); used by [`Devices::resolve`]
    /// for what the device table lacks. Call for the kernels of a chunk
    /// before resolving any of them.
    pub fn hint(
        &mut self,
        device: i64,
        kernel_name: &str,
        grid_blocks: i64,
        blocks_per_sm: Option<f64>,
    ) {
        let cc = cc_from_kernel_name(kernel_name);
        let sms = blocks_per_sm.and_then(|b| sm_count_from_blocks_per_sm(grid_blocks, b));
        if cc.is_none() && sms.is_none() {
            return;
        }
        let i = match self.hints.iter().position(|(d, _)| *d == device) {
            Some(i) => i,
            None => {
                self.hints.push((device, Hints::default()));
                self.hints.len() - 1
            }
        };
        if let Some((_, h)) = self.hints.get_mut(i) {
            h.cc = h.cc.max(cc);
            h.sm_count = h.sm_count.or(sms);
        }
    }

    /// The hints noted for ordinal `device`.
    pub fn hints(&self, device: i64) -> Hints {
        self.hints
            .iter()
            .find(|(d, _)| *d == device)
            .map_or(Hints::default(), |(_, h)| *h)
    }

    /// Add descriptions of devices not described yet (same ordinal and
    /// process), as a record file's records reveal them; devices already
    /// resolved keep their row.
    pub fn learn(&mut self, more: &[DeviceInfo]) {
        for d in more {
            if !self
                .known
                .iter()
                .any(|k| k.device == d.device && k.pid == d.pid)
            {
                self.known.push(d.clone());
            }
        }
    }

    /// The index of the device of a kernel on ordinal `device` launched by
    /// process `pid`; `name` and `sm_count` are what the kernel's record
    /// says (used when the device table lacks them).
    pub fn resolve(
        &mut self,
        device: i64,
        pid: Option<u64>,
        name: Option<&str>,
        sm_count: Option<i64>,
    ) -> usize {
        if let Some(&(_, i)) = self.seen.iter().find(|(k, _)| *k == (device, pid)) {
            return i;
        }
        let mut info = self
            .known
            .iter()
            .find(|d| d.device == device && (d.pid.is_none() || pid.is_none() || d.pid == pid))
            .or_else(|| self.known.iter().find(|d| d.device == device))
            .cloned()
            .unwrap_or_else(|| DeviceInfo {
                device,
                ..DeviceInfo::default()
            });
        if info.name.is_none() {
            info.name = name.map(str::to_owned);
        }
        if info.sm_count.is_none() {
            info.sm_count = sm_count;
        }
        let hints = self.hints(device);
        let mut sm_count_inferred = false;
        if info.sm_count.is_none() && hints.sm_count.is_some() {
            info.sm_count = hints.sm_count;
            sm_count_inferred = true;
        }
        let mut limits = Limits::for_device(&info);
        if limits.source == LimitsSource::Assumed
            && let Some(mut l) = hints.cc.and_then(Limits::for_cc)
        {
            l.sm_count = limits.sm_count;
            l.source = LimitsSource::KernelNames;
            limits = l;
        }
        // one entry per physical description: processes sharing a GPU
        // share its row
        let i = match self
            .list
            .iter()
            .position(|d| d.device == device && d.name == info.name && d.limits == limits)
        {
            Some(i) => i,
            None => {
                self.list.push(Device {
                    device,
                    spec: info.name.as_deref().and_then(spec::lookup),
                    name: info.name,
                    limits,
                    sm_count_inferred,
                });
                self.list.len() - 1
            }
        };
        self.seen.push(((device, pid), i));
        i
    }

    /// The device at `index` (from [`Devices::resolve`]).
    pub fn get(&self, index: usize) -> Option<&Device> {
        self.list.get(index)
    }

    /// Every device resolved so far, in first-seen order.
    pub fn list(&self) -> &[Device] {
        &self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::LimitsSource;

    #[test]
    fn table_then_record_then_assumed() {
        let mut d = Devices::new(vec![DeviceInfo {
            device: 0,
            name: Some("NVIDIA A100-SXM4-40GB".into()),
            sm_count: Some(108),
            cc_major: Some(8),
            cc_minor: Some(0),
            ..DeviceInfo::default()
        }]);
        let a = d.resolve(0, Some(1), None, None);
        assert_eq!(d.resolve(0, Some(1), None, None), a);
        let dev = d.get(a).unwrap();
        assert_eq!(dev.limits.sm_count, Some(108));
        assert_eq!(dev.limits.source, LimitsSource::CcTable);
        assert_eq!(dev.spec.unwrap().bandwidth_gbs, 1555.0);
        let b = d.resolve(1, None, Some("Mystery GPU"), Some(20));
        let dev = d.get(b).unwrap();
        assert_eq!(dev.limits.source, LimitsSource::Assumed);
        assert_eq!(dev.limits.sm_count, Some(20));
        assert!(dev.spec.is_none());
        assert_eq!(dev.label(), "Mystery GPU");
        let c = d.resolve(2, None, None, None);
        assert_eq!(d.get(c).unwrap().label(), "device 2 (name unknown)");
        assert_eq!(d.list().len(), 3);
    }

    /// Names → compute capability, by the table; the highest wins.
    #[test]
    fn cc_from_kernel_names() {
        let cc = cc_from_kernel_name;
        assert_eq!(cc("volta_sgemm_128x64_nn"), Some((7, 0)));
        assert_eq!(cc("sm70_xmma_gemm"), Some((7, 0)));
        assert_eq!(cc("turing_h1688gemm_128x128_ldg8_tn"), Some((7, 5)));
        assert_eq!(cc("ampere_sgemm_128x64_nn"), Some((8, 0)));
        assert_eq!(cc("sm86_xmma_fprop"), Some((8, 6)));
        assert_eq!(cc("cutlass3x_sm90_tensorop_gemm"), Some((9, 0)));
        assert_eq!(cc("nvjet_tst_192x192"), Some((9, 0)));
        assert_eq!(cc("void hopper::fmha<int>(int)"), Some((9, 0)));
        assert_eq!(cc("sm100_xmma_gemm"), Some((10, 0)));
        // inside a word: no
        assert_eq!(cc("prism80_kernel"), None);
        assert_eq!(cc("elementwise_kernel"), None);
    }

    /// 216 blocks at 2.0 per SM: 108; Kineto's rounding tolerated, junk not.
    #[test]
    fn sm_count_from_kineto_blocks_per_sm() {
        assert_eq!(sm_count_from_blocks_per_sm(216, 2.0), Some(108));
        assert_eq!(sm_count_from_blocks_per_sm(1, 0.009259), Some(108));
        assert_eq!(sm_count_from_blocks_per_sm(100, 0.0), None);
        assert_eq!(sm_count_from_blocks_per_sm(100, f64::NAN), None);
        assert_eq!(sm_count_from_blocks_per_sm(0, 1.0), None);
        assert_eq!(sm_count_from_blocks_per_sm(3, 2.0), None);
    }
}
