//! `rprof gpu`: utilization, buckets, SM efficiency, occupancy, kernel
//! view, roofline and the Kineto check, against hand-computed numbers on
//! synthetic traces, and the corpus.

use std::path::{Path, PathBuf};

use rprof_testkit::{Synth, SynthGpu, SynthKernel, SynthRange};

use crate::util::{fixture, rprof, run};

pub fn stdout_of(args: &[&str]) -> String {
    let out = run(rprof().args(args));
    assert!(
        out.status.success(),
        "rprof {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The cells of the table row whose first cell is `first`, after the line
/// that contains `after`.
pub fn row(text: &str, after: &str, first: &str) -> Vec<String> {
    let start = text
        .find(after)
        .unwrap_or_else(|| panic!("no {after:?} in\n{text}"));
    text[start..]
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_owned())
                .collect::<Vec<_>>()
        })
        .find(|cells| cells[0] == first)
        .unwrap_or_else(|| panic!("no row {first:?} after {after:?} in\n{text}"))
}

fn kernel(name: &str, start: i64, end: i64, corr: i64) -> SynthKernel {
    SynthKernel::new(name, start, end, corr)
}

/// Device 0 (an A100: 108 SMs, 64 warps and 164 KiB shared memory per SM):
/// - `k_full` [1000, 3000) stream 7: 216 blocks of 256 threads, 32 regs;
/// - `k_regs` [2000, 4000) stream 8, overlapping: 54 blocks of 128, 128 regs;
/// - `k_smem` [6000, 7000) stream 7 after a gap: 1080 blocks of 128, 32
///   regs, 48 KiB dynamic shared memory.
///
/// Device 1: `k_other` [1000, 1500), 108 blocks of 64 threads, 16 regs.
pub fn three_kernels(dir: &Path) -> PathBuf {
    let mut s = Synth::default();
    s.gpus.push(SynthGpu::a100());
    s.gpus.push(SynthGpu {
        cu_device: 1,
        ..SynthGpu::a100()
    });
    let mut k = kernel("void k_full<int>(int)", 1000, 3000, 1);
    k.grid = [216, 1, 1];
    k.block = [256, 1, 1];
    s.kernels.push(k);
    let mut k = kernel("void k_regs<int>(int)", 2000, 4000, 2);
    k.grid = [54, 1, 1];
    k.block = [128, 1, 1];
    k.regs = 128;
    k.stream = 8;
    s.kernels.push(k);
    let mut k = kernel("void k_smem<int>(int)", 6000, 7000, 3);
    k.grid = [1080, 1, 1];
    k.block = [128, 1, 1];
    k.smem = (0, 49152);
    s.kernels.push(k);
    let mut k = kernel("void k_other<int>(int)", 1000, 1500, 4);
    k.grid = [108, 1, 1];
    k.block = [64, 1, 1];
    k.regs = 16;
    k.device = 1;
    s.kernels.push(k);
    let p = dir.join("three.sqlite");
    s.write_nsys(&p).unwrap();
    p
}

/// Span [1000, 7000) = 6000 ns. Device 0 is busy [1000, 4000) and
/// [6000, 7000): 4000 ns = 66.67 %; device 1: 500 ns = 8.33 %.
///
/// Per kernel (A100 limits): k_full: blocks/SM = 2 → SM eff. 1;
/// resident blocks min(32 blocks, 64/8 warps, regs 8, smem 164) = 8 →
/// theoretical 8·8/64 = 100 %, achieved min(2, 8)·256/2048 = 25 %.
/// k_regs: 0.5 blocks/SM → SM eff. 0.5; 128 regs → 4096 per warp →
/// 4 warps per partition → 16 warps → 4 blocks of 4 warps (registers) →
/// theoretical 25 %, achieved 0.5·128/2048 = 3.125 %.
/// k_smem: 10 blocks/SM → 1; 48 KiB + 1 KiB reserved → 3 blocks (shared
/// memory) → theoretical 3·4/64 = 18.75 %, achieved 3·128/2048 = 18.75 %.
/// Weighted by 2000, 2000, 1000 ns: SM eff. 4000/5000 = 80 %, achieved
/// 750/5000 = 15 %, theoretical 2687.5/5000 = 53.75 %.
#[test]
fn utilization_efficiency_occupancy_hand_computed() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_kernels(dir.path());
    let out = stdout_of(&["gpu", "-q", p.to_str().unwrap()]);
    assert!(out.contains("Span: 0.006 ms"), "{out}");
    let d0 = row(&out, "| GPU", "0");
    assert_eq!(
        d0[1..],
        [
            "NVIDIA A100-SXM4-40GB",
            "108",
            "8.0",
            "file",
            "3",
            "0.005",
            "0.004",
            "66.67",
            "80.00",
            "15.00",
            "53.75",
            "0.00"
        ]
    );
    // k_other: 1 block per SM (SM eff. 100 %); 2 warps per block, 16 regs
    // → blocks limit 32 → 32·2/64 = 100 % theoretical; achieved 1·64/2048
    let d1 = row(&out, "| GPU", "1");
    assert_eq!(
        d1[5..],
        [
            "1", "0.001", "0.001", "8.33", "100.00", "3.12", "100.00", "0.00"
        ]
    );

    let k = row(&out, "Kernels:", "k_full");
    assert_eq!(
        k[1..],
        ["1", "2000", "2.00", "25.0", "100.0", "warps", "0.0"]
    );
    let k = row(&out, "Kernels:", "k_regs");
    assert_eq!(
        k[1..],
        ["1", "2000", "0.50", "3.1", "25.0", "registers", "0.0"]
    );
    let k = row(&out, "Kernels:", "k_smem");
    assert_eq!(
        k[1..],
        ["1", "1000", "10.00", "18.8", "18.8", "shared memory", "0.0"]
    );
}

/// Buckets of 2 µs over [1000, 7000): [1000, 3000) fully busy on device 0,
/// [3000, 5000) half (k_regs until 4000), [5000, 7000) half (k_smem);
/// device 1 is busy 500 of the first bucket's 2000 ns.
#[test]
fn buckets_hand_computed() {
    let dir = tempfile::tempdir().unwrap();
    let p = three_kernels(dir.path());
    let out = stdout_of(&["gpu", "-q", "--buckets=0.002", p.to_str().unwrap()]);
    let start = out.find("Utilization per 0.002 ms bucket").expect(&out);
    let lines: Vec<Vec<&str>> = out[start..]
        .lines()
        .skip(2)
        .take(3)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines,
        [
            ["0.000", "0.002", "100.00", "25.00"],
            ["0.002", "0.004", "50.00", "0.00"],
            ["0.004", "0.006", "50.00", "0.00"]
        ]
    );
    // --buckets alone means 10 ms
    let out = stdout_of(&["gpu", "-q", "--buckets", p.to_str().unwrap()]);
    assert!(out.contains("Utilization per 10.000 ms bucket"), "{out}");
}

const MM: &str = "{'mod': 'torch', 'op': 'mm', 'args': [{'name': '', 'type': 'tensor', 'shape': (64, 256), 'dtype': 'float32'}, {'name': '', 'type': 'tensor', 'shape': (256, 128), 'dtype': 'float32'}]}";
const ADD: &str = "{'mod': 'Tensor', 'op': '__add__', 'args': [{'name': '', 'type': 'tensor', 'shape': (1000,), 'dtype': 'float32'}, {'name': '', 'type': 'tensor', 'shape': (1000,), 'dtype': 'float32'}]}";

/// An mm (10 µs) and an add (100 ns) under PyProf markers, and a kernel
/// without a marker; `gpu`: with an A100 device table or none.
pub fn roofline_trace(dir: &Path, gpu: bool) -> PathBuf {
    let mut s = Synth::default();
    if gpu {
        s.gpus.push(SynthGpu::a100());
    }
    s.kernels
        .push(kernel("volta_sgemm_128x64_nn", 10_000, 20_000, 1));
    s.ranges.push(SynthRange::push(MM, 9_800, 9_990));
    s.kernels.push(kernel(
        "void elementwise_kernel<int>(int)",
        30_000,
        30_100,
        2,
    ));
    s.ranges.push(SynthRange::push(ADD, 29_800, 29_990));
    s.kernels
        .push(kernel("void other_kernel<int>(int)", 40_000, 41_000, 3));
    let p = dir.join(if gpu {
        "roof.sqlite"
    } else {
        "roof-nogpu.sqlite"
    });
    s.write_nsys(&p).unwrap();
    p
}

/// mm: 2·128·64·256 = 4194304 FLOPs, (128·256 + 256·64 + 128·64)·4 =
/// 229376 bytes in 10 µs: intensity 18.29 ≥ the A100's FP32 ridge
/// 19.5e12 / 1555e9 = 12.54 → compute-bound at 0.419 TFLOP/s = 2.15 % of
/// 19.5. add: 1000 FLOPs, 12000 bytes in 100 ns: intensity 0.083 →
/// memory-bound at 120 GB/s = 7.72 % of 1555. With --peak-tflops 10
/// --bandwidth-gbs 200 the ridge is 50: both memory-bound, 22.94/200 =
/// 11.47 % and 120/200 = 60 %.
#[test]
fn roofline_hand_computed() {
    let dir = tempfile::tempdir().unwrap();
    let p = roofline_trace(dir.path(), true);
    let out = stdout_of(&["gpu", "-q", p.to_str().unwrap()]);
    assert!(out.contains("Roofline by op on NVIDIA A100-SXM4-40GB (rprof's GPU table row 'A100': bandwidth 1555 GB/s"), "{out}");
    let mm = row(&out, "Roofline", "mm");
    assert_eq!(
        mm[1..],
        [
            "fp32", "1", "10000", "4.19 M", "229 k", "18.29", "0.419", "22.9", "19.5", "compute",
            "2.15"
        ]
    );
    let add = row(&out, "Roofline", "__add__");
    assert_eq!(
        add[1..],
        [
            "fp32", "1", "100", "1.00 k", "12.0 k", "0.08", "0.010", "120.0", "19.5", "memory",
            "7.72"
        ]
    );
    assert!(
        out.contains("2 of 3 kernels, 90.99 % of kernel time"),
        "{out}"
    );

    let out = stdout_of(&[
        "gpu",
        "-q",
        "--peak-tflops",
        "10",
        "--bandwidth-gbs",
        "200",
        p.to_str().unwrap(),
    ]);
    assert_eq!(row(&out, "Roofline", "mm")[10..], ["memory", "11.47"]);
    assert_eq!(row(&out, "Roofline", "__add__")[10..], ["memory", "60.00"]);
    assert!(
        out.contains("peak 10 TFLOP/s for every math class (--peak-tflops), bandwidth 200 GB/s")
    );

    let out = stdout_of(&["gpu", "-q", "--roofline-by", "kernel", p.to_str().unwrap()]);
    assert_eq!(
        row(&out, "Roofline by kernel", "volta_sgemm_128x64_nn")[10],
        "compute"
    );
}

/// No device table: the GPU is unknown, so no roof is guessed; the flags
/// supply one. Occupancy uses the limits of the compute capability the
/// kernel names imply (`volta_sgemm…`: 7.0) and says so.
#[test]
fn unknown_gpu_is_said_not_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let p = roofline_trace(dir.path(), false);
    let out = stdout_of(&["gpu", "-q", p.to_str().unwrap()]);
    assert!(out.contains("Roofline by op on device 0 (name unknown): unknown GPU (not in rprof's GPU table); pass --peak-tflops and --bandwidth-gbs"), "{out}");
    assert!(!out.contains("| mm "), "{out}");
    assert_eq!(
        row(&out, "| GPU", "0")[1..5],
        ["(unknown)", "-", "7.0", "cc inferred from kernel names"]
    );
    assert!(out.contains("note: the input does not describe GPU 0: occupancy uses the limits of compute capability 7.0, inferred from its kernel names, and SM efficiency and achieved occupancy need its SM count (unknown)."), "{out}");
    let out = stdout_of(&[
        "gpu",
        "-q",
        "--peak-tflops",
        "19.5",
        "--bandwidth-gbs",
        "1555",
        p.to_str().unwrap(),
    ]);
    assert_eq!(row(&out, "Roofline", "mm")[10..], ["compute", "2.15"]);
}

/// A Kineto trace with three kernels: one that fits in 48 KiB (both agree),
/// one with 64 KiB of shared memory (rprof: 2 resident blocks of 256
/// threads under the opt-in limit → min(10, 2)·256/2048 = 25 %; Kineto's
/// default 48 KiB limit: 0 %), and one without Kineto's figure.
pub const KINETO: &str = r#"{"deviceProperties":[{"id":0,"name":"NVIDIA A100-SXM4-40GB","computeMajor":8,"computeMinor":0,"numSms":108,"warpSize":32,"maxThreadsPerBlock":1024,"maxThreadsPerMultiprocessor":2048,"regsPerBlock":65536,"regsPerMultiprocessor":65536,"sharedMemPerBlock":49152,"sharedMemPerMultiprocessor":167936,"sharedMemPerBlockOptin":166912}],
"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":10,"dur":100,"args":{"Input Dims":[[64,256],[256,128]],"Input type":["float","float"]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":20,"dur":5,"args":{"correlation":9}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":30,"dur":5,"args":{"correlation":10}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":40,"dur":5,"args":{"correlation":11}},
{"ph":"X","cat":"kernel","name":"small_kernel","pid":0,"tid":7,"ts":200,"dur":4,"args":{"device":0,"stream":7,"correlation":9,"grid":[64,1,1],"block":[128,1,1],"registers per thread":90,"shared memory":49152,"blocks per SM":0.5925926,"warps per SM":2.3703704,"est. achieved occupancy %":4}},
{"ph":"X","cat":"kernel","name":"big_smem_kernel","pid":0,"tid":7,"ts":210,"dur":6,"args":{"device":0,"stream":7,"correlation":10,"grid":[1080,1,1],"block":[256,1,1],"registers per thread":32,"shared memory":65536,"blocks per SM":10,"warps per SM":80,"est. achieved occupancy %":0}},
{"ph":"X","cat":"kernel","name":"plain_kernel","pid":0,"tid":7,"ts":220,"dur":2,"args":{"device":0,"stream":7,"correlation":11,"grid":[1,1,1],"block":[32,1,1]}}
]}"#;

#[test]
fn kineto_check_explains_the_48k_cases() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.pt.trace.json");
    std::fs::write(&p, KINETO).unwrap();
    let out = stdout_of(&["gpu", "-q", "--kineto-check", p.to_str().unwrap()]);
    assert!(out.contains("  kernels compared: 2\n"), "{out}");
    assert!(out.contains("  equal: 1 (50.00 %); within 1 point: 1 (50.00 %); mean |difference| 12.500 points; largest 25 points"), "{out}");
    assert!(
        out.contains("  differing: 1, of which 1 use more than 48 KiB of shared memory per block"),
        "{out}"
    );
    assert!(out.contains("reproduces 2 of 2 recorded values"), "{out}");
    assert!(
        out.contains("blocks per SM: rprof equals Kineto's (relative 1e-6) for 2 of 2"),
        "{out}"
    );
    let r = row(&out, "differ most", "big_smem_kernel");
    assert_eq!(
        r[1..],
        [
            "1", "1080,1,1", "256,1,1", "32", "65536", "25", "0", "+25", "0"
        ]
    );
    // an nsys profile has nothing to compare
    let nsys = three_kernels(dir.path());
    let out = stdout_of(&["gpu", "-q", "--kineto-check", nsys.to_str().unwrap()]);
    assert!(
        out.contains("Kineto check: no kernel in this input carries"),
        "{out}"
    );
}

/// The four Kineto traces of the corpus: rprof's estimate equals the
/// recorded "est. achieved occupancy %" for 13418 of 14728 kernels; every
/// one that differs uses more than 48 KiB of shared memory per block, and
/// Kineto's own rule (48 KiB default limit), computed by rprof, reproduces
/// all 14728 recorded values, as well as every "blocks per SM".
#[test]
fn corpus_kineto_occupancy_agreement() {
    let corpus = corpus_or_skip!();
    let mut totals = [0u64; 5];
    for (name, compared, equal) in [
        ("alexnet_benchmark_trace.json.gz", 79, 73),
        ("negative_queue_rank0.json.gz", 6080, 6000),
        ("trace_diff_control.json.gz", 8568, 7344),
        ("triton_example.json.gz", 1, 1),
    ] {
        let f = corpus.join("kineto-hta").join(name);
        let out = stdout_of(&["gpu", "-q", "--kineto-check", f.to_str().unwrap()]);
        let num = |prefix: &str| -> u64 {
            let l = out
                .lines()
                .find(|l| l.trim_start().starts_with(prefix))
                .unwrap_or_else(|| panic!("{name}: no {prefix:?}\n{out}"));
            l.trim_start()[prefix.len()..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let c = num("kernels compared: ");
        let e = num("equal: ");
        let d = num("differing: ");
        assert_eq!((c, e, d), (compared, equal, compared - equal), "{name}");
        assert!(
            out.contains(&format!(
                "differing: {d}, of which {d} use more than 48 KiB"
            )),
            "{name}\n{out}"
        );
        assert!(
            out.contains(&format!("reproduces {c} of {c} recorded values")),
            "{name}\n{out}"
        );
        assert!(
            out.contains(&format!("for {c} of {c}\n")),
            "{name}: blocks per SM\n{out}"
        );
        totals[0] += c;
        totals[1] += e;
    }
    assert_eq!(totals[..2], [14728, 13418]);
}

/// The committed nvprof and nsys fixtures: a V100 described by the file,
/// and two H100s the 2026 export does not describe.
#[test]
fn fixtures_devices_and_limits() {
    let out = stdout_of(&[
        "gpu",
        "-q",
        fixture("profiling-lm/net.sql").to_str().unwrap(),
    ]);
    let d = row(&out, "| GPU", "0");
    assert_eq!(
        d[1..6],
        ["Tesla V100-SXM2-16GB", "80", "7.0", "file", "284"]
    );
    assert!(out.contains("Roofline by op on Tesla V100-SXM2-16GB (rprof's GPU table row 'V100'"));
    let out = stdout_of(&[
        "gpu",
        "-q",
        fixture("nsys-ai/mfu_2gpu_before.sqlite").to_str().unwrap(),
    ]);
    for dev in ["0", "1"] {
        let d = row(&out, "| GPU", dev);
        // H100s: nvjet_ and sm90_ kernels say compute capability 9.0
        assert_eq!(
            d[1..5],
            ["(unknown)", "-", "9.0", "cc inferred from kernel names"]
        );
    }
    let kernels: u64 = ["0", "1"]
        .iter()
        .map(|d| row(&out, "| GPU", d)[5].parse::<u64>().unwrap())
        .sum();
    assert_eq!(kernels, 4010);
}

/// apex.pyprof's own net.dict has no times, registers or device table:
/// what cannot be known is said, not estimated.
#[test]
fn pyprof_dict_says_what_is_unknown() {
    let out = stdout_of(&[
        "gpu",
        "-q",
        fixture("profiling-lm/net.dict").to_str().unwrap(),
    ]);
    assert!(
        out.contains("Span: unknown: the records have no kernel start/end times"),
        "{out}"
    );
    assert_eq!(
        row(&out, "| GPU", "0")[1..],
        [
            "(unknown)",
            "-",
            // a V100 run: volta_ kernels
            "7.0",
            "cc inferred from kernel names",
            "284",
            "8.271",
            "-",
            "-",
            "-",
            "-",
            "-",
            "0.00"
        ]
    );
    assert!(
        out.contains("note: 284 kernels have no registers per thread"),
        "{out}"
    );
    assert_eq!(
        row(&out, "Kernels:", "elementwise_kernel")[3..7],
        ["-", "-", "-", "-"]
    );
}

/// A record file keeps the device table in its header: the same report as
/// from the profile.
#[test]
fn record_file_and_profile_agree() {
    let dir = tempfile::tempdir().unwrap();
    for p in [three_kernels(dir.path()), fixture("profiling-lm/net.sql")] {
        let dict = dir.path().join("r.dict");
        assert!(
            run(rprof().args(["parse", "-q", "-o"]).arg(&dict).arg(&p))
                .status
                .success()
        );
        let a = stdout_of(&["gpu", "-q", "--buckets=1", p.to_str().unwrap()]);
        let b = stdout_of(&["gpu", "-q", "--buckets=1", dict.to_str().unwrap()]);
        let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
        assert_eq!(body(&a), body(&b), "{}", p.display());
    }
}
