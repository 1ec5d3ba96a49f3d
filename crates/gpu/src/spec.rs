//! Peak arithmetic throughput and memory bandwidth of known GPUs, by name.
//!
//! Dense (no structured sparsity) peaks from NVIDIA's product datasheets;
//! boost clocks. The table is a convenience: every number can be overridden
//! on the command line, and a GPU that is not here gets none (reports then
//! say the roofline is unknown rather than guess).

/// Peaks of one GPU model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuSpec {
    /// Name fragment matched against the device name.
    pub name: &'static str,
    /// FP64 (vector) TFLOP/s.
    pub fp64: f64,
    /// FP32 (CUDA cores) TFLOP/s.
    pub fp32: f64,
    /// TF32 tensor-core TFLOP/s (0 = none).
    pub tf32: f64,
    /// FP16/BF16 tensor-core TFLOP/s (FP32 accumulate where it differs).
    pub fp16: f64,
    /// FP8 tensor-core TFLOP/s (0 = none).
    pub fp8: f64,
    /// DRAM bandwidth, GB/s.
    pub bandwidth_gbs: f64,
}

const fn g(
    name: &'static str,
    fp64: f64,
    fp32: f64,
    tf32: f64,
    fp16: f64,
    fp8: f64,
    bw: f64,
) -> GpuSpec {
    GpuSpec {
        name,
        fp64,
        fp32,
        tf32,
        fp16,
        fp8,
        bandwidth_gbs: bw,
    }
}

/// Most specific names first: the first row whose name is contained in the
/// device name wins.
pub const GPUS: &[GpuSpec] = &[
    g("GB200", 40.0, 80.0, 1250.0, 2500.0, 5000.0, 8000.0),
    g("B200", 37.0, 75.0, 1100.0, 2250.0, 4500.0, 8000.0),
    g("B100", 30.0, 60.0, 875.0, 1750.0, 3500.0, 8000.0),
    g("GH200", 34.0, 67.0, 494.7, 989.4, 1978.9, 4000.0),
    g("H200", 34.0, 67.0, 494.7, 989.4, 1978.9, 4800.0),
    g("H100 NVL", 30.0, 60.0, 417.5, 835.0, 1670.0, 3900.0),
    g("H100 PCIe", 25.6, 51.2, 378.0, 756.0, 1513.0, 2000.0),
    g("H100", 34.0, 67.0, 494.7, 989.4, 1978.9, 3350.0),
    g("H800", 1.0, 67.0, 494.7, 989.4, 1978.9, 3350.0),
    g("A100-SXM4-80GB", 9.7, 19.5, 156.0, 312.0, 0.0, 2039.0),
    g("A100 80GB PCIe", 9.7, 19.5, 156.0, 312.0, 0.0, 1935.0),
    g("A100-PCIE-80GB", 9.7, 19.5, 156.0, 312.0, 0.0, 1935.0),
    g("A100", 9.7, 19.5, 156.0, 312.0, 0.0, 1555.0),
    g("A800", 9.7, 19.5, 156.0, 312.0, 0.0, 2039.0),
    g("A30", 5.2, 10.3, 82.0, 165.0, 0.0, 933.0),
    g("A40", 0.6, 37.4, 74.8, 149.7, 0.0, 696.0),
    g("A10G", 0.5, 31.2, 62.5, 125.0, 0.0, 600.0),
    g("A10", 0.5, 31.2, 62.5, 125.0, 0.0, 600.0),
    g("L40S", 1.4, 91.6, 183.0, 362.0, 733.0, 864.0),
    g("L40", 1.4, 90.5, 90.5, 181.0, 362.0, 864.0),
    g("L4", 0.5, 30.3, 60.0, 121.0, 242.0, 300.0),
    g("RTX 6000 Ada", 1.4, 91.1, 91.1, 182.2, 364.4, 960.0),
    g("RTX A6000", 1.2, 38.7, 77.4, 154.8, 0.0, 768.0),
    g("RTX 4090", 1.3, 82.6, 82.6, 165.2, 330.3, 1008.0),
    g("RTX 4080", 0.8, 48.7, 48.7, 97.5, 195.0, 717.0),
    g("RTX 3090", 0.6, 35.6, 35.6, 71.0, 0.0, 936.0),
    g("RTX 3080", 0.5, 29.8, 29.8, 59.5, 0.0, 760.0),
    g("RTX 3070", 0.3, 20.3, 20.3, 40.6, 0.0, 448.0),
    g("RTX 3060", 0.2, 12.7, 12.7, 25.5, 0.0, 360.0),
    g("TITAN RTX", 0.5, 16.3, 0.0, 130.5, 0.0, 672.0),
    g("Quadro RTX 6000", 0.5, 16.3, 0.0, 130.5, 0.0, 672.0),
    g("Quadro RTX 8000", 0.5, 16.3, 0.0, 130.5, 0.0, 672.0),
    g("RTX 2080 Ti", 0.4, 13.4, 0.0, 107.6, 0.0, 616.0),
    g("RTX 2070 SUPER", 0.3, 9.1, 0.0, 72.5, 0.0, 448.0),
    g("T4", 0.25, 8.1, 0.0, 65.0, 0.0, 320.0),
    g("V100S", 8.2, 16.4, 0.0, 130.0, 0.0, 1134.0),
    g("V100-PCIE", 7.0, 14.0, 0.0, 112.0, 0.0, 900.0),
    g("V100", 7.8, 15.7, 0.0, 125.0, 0.0, 900.0),
    g("P100", 4.7, 9.3, 0.0, 18.7, 0.0, 732.0),
    g("GeForce 840M", 0.02, 0.79, 0.0, 0.0, 0.0, 16.0),
];

/// The spec of the first table row whose name the device name contains.
pub fn lookup(device_name: &str) -> Option<&'static GpuSpec> {
    GPUS.iter().find(|s| device_name.contains(s.name))
}

/// Numeric class of an op's math, for picking the peak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MathClass {
    /// FP64.
    Fp64,
    /// FP32 on CUDA cores.
    Fp32,
    /// TF32 tensor cores.
    Tf32,
    /// FP16 or BF16 on tensor cores.
    Fp16Tensor,
    /// FP16/BF16 without tensor cores (counted at the FP32 rate).
    Fp16,
    /// FP8 tensor cores.
    Fp8,
}

impl MathClass {
    /// The class of an op's math from its element type (a dtype name as
    /// rprof's params print it: `fp32`, `fp16`, `bf16`, `fp64`, `fp8e4m3`,
    /// …) and whether its kernel uses tensor cores. No dtype: FP32, or
    /// FP16 on tensor cores when the kernel uses them.
    pub fn classify(dtype: Option<&str>, tensor_cores: bool) -> MathClass {
        match (dtype, tensor_cores) {
            (Some("fp64"), _) => MathClass::Fp64,
            (Some(d), _) if d.starts_with("fp8") => MathClass::Fp8,
            (Some("fp16" | "bf16"), true) => MathClass::Fp16Tensor,
            (Some("fp16" | "bf16"), false) => MathClass::Fp16,
            (Some("fp32"), true) => MathClass::Tf32,
            (None, true) => MathClass::Fp16Tensor,
            _ => MathClass::Fp32,
        }
    }

    /// Short name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            MathClass::Fp64 => "fp64",
            MathClass::Fp32 => "fp32",
            MathClass::Tf32 => "tf32 tc",
            MathClass::Fp16Tensor => "fp16/bf16 tc",
            MathClass::Fp16 => "fp16/bf16",
            MathClass::Fp8 => "fp8 tc",
        }
    }
}

impl GpuSpec {
    /// Peak FLOP/s for a math class (falls back to FP32 where the GPU has
    /// no such unit).
    pub fn peak_flops(&self, class: MathClass) -> f64 {
        let t = match class {
            MathClass::Fp64 => self.fp64,
            MathClass::Fp32 | MathClass::Fp16 => self.fp32,
            MathClass::Tf32 => self.tf32,
            MathClass::Fp16Tensor => self.fp16,
            MathClass::Fp8 => self.fp8,
        };
        if t > 0.0 { t * 1e12 } else { self.fp32 * 1e12 }
    }

    /// Bandwidth, bytes/s.
    pub fn bandwidth(&self) -> f64 {
        self.bandwidth_gbs * 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_to_the_specific_row() {
        assert_eq!(
            lookup("NVIDIA A100-SXM4-80GB").unwrap().bandwidth_gbs,
            2039.0
        );
        assert_eq!(
            lookup("NVIDIA A100-SXM4-40GB").unwrap().bandwidth_gbs,
            1555.0
        );
        assert_eq!(lookup("NVIDIA H100 PCIe").unwrap().bandwidth_gbs, 2000.0);
        assert_eq!(
            lookup("NVIDIA H100 80GB HBM3").unwrap().bandwidth_gbs,
            3350.0
        );
        assert_eq!(lookup("NVIDIA GH200 480GB").unwrap().bandwidth_gbs, 4000.0);
        assert_eq!(lookup("NVIDIA L40S").unwrap().fp8, 733.0);
        assert_eq!(lookup("NVIDIA L4").unwrap().fp32, 30.3);
        assert_eq!(lookup("Tesla V100-SXM2-16GB").unwrap().fp16, 125.0);
        assert_eq!(
            lookup("NVIDIA GeForce RTX 3060").unwrap().bandwidth_gbs,
            360.0
        );
        assert!(lookup("Some Future GPU").is_none());
    }

    /// A row whose name contains an earlier row's name could never match.
    #[test]
    fn every_row_is_reachable() {
        for (i, a) in GPUS.iter().enumerate() {
            for b in &GPUS[i + 1..] {
                assert!(!b.name.contains(a.name), "{} shadows {}", a.name, b.name);
            }
            assert_eq!(lookup(&format!("NVIDIA {}", a.name)).unwrap().name, a.name);
        }
    }

    #[test]
    fn classes() {
        assert_eq!(MathClass::classify(Some("fp32"), false), MathClass::Fp32);
        assert_eq!(MathClass::classify(Some("fp32"), true), MathClass::Tf32);
        assert_eq!(
            MathClass::classify(Some("bf16"), true),
            MathClass::Fp16Tensor
        );
        assert_eq!(MathClass::classify(Some("fp16"), false), MathClass::Fp16);
        assert_eq!(MathClass::classify(Some("fp8e4m3"), true), MathClass::Fp8);
        assert_eq!(MathClass::classify(Some("fp64"), true), MathClass::Fp64);
        assert_eq!(MathClass::classify(None, true), MathClass::Fp16Tensor);
        assert_eq!(MathClass::classify(Some("int64"), false), MathClass::Fp32);
    }

    #[test]
    fn peaks_fall_back_to_fp32() {
        let v100 = lookup("Tesla V100-SXM2-16GB").unwrap();
        assert_eq!(v100.peak_flops(MathClass::Tf32), 15.7e12);
        assert_eq!(v100.peak_flops(MathClass::Fp16Tensor), 125e12);
    }
}
