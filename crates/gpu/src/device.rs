//! Which GPU a kernel ran on: its description (from the profile's device
//! table, a record file's header, or the record itself), limits and peaks.

use rprof_trace::model::DeviceInfo;

use crate::limits::Limits;
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
}

impl Devices {
    /// Devices the input describes (profile device table or record-file
    /// header; may be empty).
    pub fn new(known: Vec<DeviceInfo>) -> Devices {
        Devices {
            known,
            seen: Vec::new(),
            list: Vec::new(),
        }
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
        let limits = Limits::for_device(&info);
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
}
