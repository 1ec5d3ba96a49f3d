//! `rprof export --chrome`: structure of the trace-event JSON on synthetic
//! traces and the corpus (well-formed, every flow start has its end,
//! counts match the profile), exact timestamps, bad input.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rprof_testkit::{Synth, SynthGpu, SynthKernel, SynthRange};
use serde_json::Value;

use crate::gpu::{roofline_trace, stdout_of};
use crate::util::{fixture, rprof, run};

/// Two kernels on device 0 (streams 7 and 8), one on device 1, a memcpy
/// on device 0 stream 7 launched by cudaMemcpyAsync, all under the NVTX
/// range `step` [800, 8000) on pid/tid 100.
fn timeline_trace(dir: &Path) -> PathBuf {
    let mut s = Synth::default();
    s.gpus.push(SynthGpu::a100());
    s.gpus.push(SynthGpu {
        cu_device: 1,
        ..SynthGpu::a100()
    });
    let mut a = SynthKernel::new("void k_a<int>(int)", 1_000, 3_000, 1);
    a.grid = [216, 1, 1];
    a.block = [256, 1, 1];
    s.kernels.push(a);
    let mut b = SynthKernel::new("void k_b<int>(int)", 2_000, 4_000, 2);
    b.stream = 8;
    b.smem = (1024, 49152);
    s.kernels.push(b);
    let mut c = SynthKernel::new("void k_c<int>(int)", 1_500, 1_750, 3);
    c.device = 1;
    s.kernels.push(c);
    s.ranges.push(SynthRange::push("step", 800, 8_000));
    s.extra_calls.push((
        5_000,
        5_100,
        100,
        100,
        50,
        "cudaMemcpyAsync_v3020".into(),
        0,
    ));
    let p = dir.join("timeline.sqlite");
    s.write_nsys(&p).unwrap();
    let conn = rusqlite::Connection::open(&p).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);
         INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (5200, 6200, 0, 1, 7, 50, {}, 4096, 1);",
        rprof_testkit::global_pid(100)
    ))
    .unwrap();
    p
}

fn events(json: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(json).expect("well-formed JSON");
    assert_eq!(v["displayTimeUnit"], "ns");
    v["traceEvents"].as_array().unwrap().clone()
}

/// Checks every trace must pass: every flow start has exactly one end and
/// the reverse, both bound to slices on their tracks at their timestamps;
/// every event has a known phase. Returns slices per category.
fn check(ev: &[Value]) -> BTreeMap<String, usize> {
    let mut cats = BTreeMap::new();
    // track → slice (start, end) in µs, and the exact start texts
    let mut slices: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    let mut starts: BTreeMap<u64, &Value> = BTreeMap::new();
    let mut ends: BTreeMap<u64, &Value> = BTreeMap::new();
    for e in ev {
        let track = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        assert!(track.0 <= u64::from(u32::MAX) && track.1 <= u64::from(u32::MAX));
        match e["ph"].as_str().unwrap() {
            "M" => assert!(e["args"].is_object()),
            "C" => {
                let v = e["args"]["value"].as_f64().unwrap();
                assert!((0.0..=100.0).contains(&v), "{e}");
                *cats.entry("counter".to_owned()).or_insert(0) += 1;
            }
            "X" => {
                *cats
                    .entry(e["cat"].as_str().unwrap().to_owned())
                    .or_insert(0) += 1;
                let ts = e["ts"].as_f64().unwrap();
                let dur = e["dur"].as_f64().unwrap();
                assert!(ts >= 0.0 && dur >= 0.0, "{e}");
                slices.entry(track).or_default().push((ts, ts + dur));
            }
            "s" => assert!(starts.insert(e["id"].as_u64().unwrap(), e).is_none(), "{e}"),
            "f" => {
                assert_eq!(e["bp"], "e");
                assert!(ends.insert(e["id"].as_u64().unwrap(), e).is_none(), "{e}");
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    assert_eq!(
        starts.keys().collect::<Vec<_>>(),
        ends.keys().collect::<Vec<_>>(),
        "flow starts and ends pair up"
    );
    for e in starts.values().chain(ends.values()) {
        assert_eq!(
            (e["cat"].as_str(), e["name"].as_str()),
            (Some("launch"), Some("launch"))
        );
        let track = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        let ts = e["ts"].as_f64().unwrap();
        assert!(
            slices
                .get(&track)
                .is_some_and(|v| v.iter().any(|&(a, b)| a <= ts && ts <= b)),
            "flow event outside any slice of its track: {e}"
        );
    }
    cats.insert("flows".into(), starts.len());
    cats
}

#[test]
fn synthetic_structure_and_exact_times() {
    let dir = tempfile::tempdir().unwrap();
    let p = timeline_trace(dir.path());
    let out = stdout_of(&["export", "-q", "--chrome", p.to_str().unwrap()]);
    let ev = events(&out);
    let cats = check(&ev);
    let want: BTreeMap<String, usize> = [
        ("counter", 8),
        ("cuda_api", 4),
        ("flows", 4),
        ("gpu_memcpy", 1),
        ("kernel", 3),
        ("nvtx", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(cats, want);
    // utilization counters, by hand: the kernels span [1000, 4000) ns, so
    // buckets of 1 µs (the minimum) from 1000; GPU 0 runs k_a and k_b over
    // all of it, GPU 1 runs k_c [1500, 1750) in the first bucket only; a
    // last sample of 0 at the end of the span
    let counter = |gpu_name: &str| -> Vec<(String, f64)> {
        let pid = ev
            .iter()
            .find(|e| {
                e["name"] == "process_name"
                    && e["args"]["name"].as_str().unwrap().starts_with(gpu_name)
            })
            .unwrap()["pid"]
            .clone();
        ev.iter()
            .filter(|e| e["ph"] == "C" && e["pid"] == pid)
            .map(|e| (e["ts"].to_string(), e["args"]["value"].as_f64().unwrap()))
            .collect()
    };
    let at = |v: &[(&str, f64)]| {
        v.iter()
            .map(|(t, x)| ((*t).to_owned(), *x))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        counter("GPU 0"),
        at(&[("0.2", 100.0), ("1.2", 100.0), ("2.2", 100.0), ("3.2", 0.0)])
    );
    assert_eq!(
        counter("GPU 1"),
        at(&[("0.2", 25.0), ("1.2", 0.0), ("2.2", 0.0), ("3.2", 0.0)])
    );
    // t = 0 at the earliest event (the range at 800 ns); exact µs
    assert!(out.contains(r#""name":"k_a","pid":"#), "{out}");
    assert!(out.contains(r#""ts":0.200,"dur":2.000"#), "{out}");
    assert!(out.contains(r#""ts":0.700,"dur":0.250"#), "k_c\n{out}");
    assert!(
        out.contains(r#""name":"step","pid":100,"tid":100,"ts":0.000,"dur":7.200"#),
        "{out}"
    );
    assert!(out.contains(r#""name":"Memcpy HtoD","#), "{out}");

    // tracks: one CPU process, two GPU processes with their streams
    let meta: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "M").collect();
    let names: BTreeSet<(String, String)> = meta
        .iter()
        .filter(|e| e["name"] == "process_name" || e["name"] == "thread_name")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["args"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for (kind, name) in [
        ("process_name", "CPU process 100"),
        ("thread_name", "thread 100"),
        ("process_name", "GPU 0: NVIDIA A100-SXM4-40GB"),
        ("process_name", "GPU 1: NVIDIA A100-SXM4-40GB"),
        ("thread_name", "stream 7"),
        ("thread_name", "stream 8"),
    ] {
        assert!(
            names.contains(&(kind.to_owned(), name.to_owned())),
            "{kind} {name}: {names:?}"
        );
    }
    let pid_of = |name: &str| -> u64 {
        meta.iter()
            .find(|e| e["name"] == "process_name" && e["args"]["name"] == name)
            .unwrap()["pid"]
            .as_u64()
            .unwrap()
    };
    let gpu0 = pid_of("GPU 0: NVIDIA A100-SXM4-40GB");
    let gpu1 = pid_of("GPU 1: NVIDIA A100-SXM4-40GB");
    assert!(gpu0 != 100 && gpu1 != 100 && gpu0 != gpu1);

    // kernel args and tracks
    let kernel = |name: &str| {
        ev.iter()
            .find(|e| e["cat"] == "kernel" && e["name"] == name)
            .unwrap()
    };
    let a = kernel("k_a");
    assert_eq!(
        (a["pid"].as_u64(), a["tid"].as_u64()),
        (Some(gpu0), Some(7))
    );
    assert_eq!(a["args"]["grid"], serde_json::json!([216, 1, 1]));
    assert_eq!(a["args"]["block"], serde_json::json!([256, 1, 1]));
    assert_eq!(a["args"]["registers per thread"], 32);
    assert_eq!(a["args"]["nvtx"], "step");
    let b = kernel("k_b");
    assert_eq!(b["tid"], 8);
    assert_eq!(b["args"]["static shared memory"], 1024);
    assert_eq!(b["args"]["dynamic shared memory"], 49152);
    assert_eq!(kernel("k_c")["pid"].as_u64(), Some(gpu1));
    let m = ev.iter().find(|e| e["cat"] == "gpu_memcpy").unwrap();
    assert_eq!(m["args"]["bytes"], 4096);
    assert_eq!(
        (m["pid"].as_u64(), m["tid"].as_u64()),
        (Some(gpu0), Some(7))
    );
    // the memcpy's flow starts in cudaMemcpyAsync
    let api = ev
        .iter()
        .find(|e| e["cat"] == "cuda_api" && e["name"] == "cudaMemcpyAsync")
        .unwrap();
    assert_eq!(api["ts"].as_f64(), Some(4.2));
}

/// op, params, FLOPs and bytes from the op models on each kernel.
#[test]
fn kernel_args_carry_the_models() {
    let dir = tempfile::tempdir().unwrap();
    let p = roofline_trace(dir.path(), true);
    let ev = events(&stdout_of(&[
        "export",
        "-q",
        "--chrome",
        p.to_str().unwrap(),
    ]));
    check(&ev);
    let mm = ev
        .iter()
        .find(|e| e["name"] == "volta_sgemm_128x64_nn")
        .unwrap();
    assert_eq!(mm["args"]["op"], "mm");
    assert_eq!(mm["args"]["params"], "M=128,N=64,K=256,fp32,");
    assert_eq!(mm["args"]["flops"], 4194304);
    assert_eq!(mm["args"]["bytes"], 229376);
    assert_eq!(mm["args"]["tensor cores"], "0");
    let other = ev.iter().find(|e| e["name"] == "other_kernel").unwrap();
    assert!(other["args"].get("flops").is_none());
    assert_eq!(other["args"]["tensor cores"], "na");
}

#[test]
fn output_file_and_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = timeline_trace(dir.path());
    let o = dir.path().join("t.json");
    let out = run(rprof().args(["export", "--chrome", "-o"]).arg(&o).arg(&p));
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "wrote 3 kernels, 1 memory operations, 4 launch calls, 1 ranges and 4 flow arrows to"
        ),
        "{err}"
    );
    check(&events(&std::fs::read_to_string(&o).unwrap()));

    // a record file: export needs the profile
    let dict = dir.path().join("t.dict");
    assert!(
        run(rprof().args(["parse", "-q", "-o"]).arg(&dict).arg(&p))
            .status
            .success()
    );
    let out = run(rprof().args(["export", "--chrome"]).arg(&dict));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("a record file; export needs the profile itself"),
        "{err}"
    );
    // missing file: exit 1; no --chrome: usage, exit 2
    let out = run(rprof()
        .args(["export", "--chrome"])
        .arg(dir.path().join("nope.sqlite")));
    assert_eq!(out.status.code(), Some(1));
    let out = run(rprof().args(["export"]).arg(&p));
    assert_eq!(out.status.code(), Some(2));
}

/// The committed fixtures: every kernel, copy, set, launch call and range
/// of the profile is in the timeline, and every launched kernel or copy
/// has its flow.
#[test]
fn fixtures_counts_match() {
    let ev = events(&stdout_of(&[
        "export",
        "-q",
        "--chrome",
        fixture("profiling-lm/net.sql").to_str().unwrap(),
    ]));
    let cats = check(&ev);
    assert_eq!(cats["kernel"], 284);
    assert_eq!(cats["gpu_memcpy"], 35);
    assert_eq!(cats["gpu_memset"], 12);
    assert_eq!(cats["cuda_api"], 331);
    assert_eq!(cats["flows"], 284 + 35 + 12);
    assert_eq!(cats["nvtx"], 1194);

    let ev = events(&stdout_of(&[
        "export",
        "-q",
        "--chrome",
        fixture("nsys-ai/mfu_2gpu_before.sqlite").to_str().unwrap(),
    ]));
    let cats = check(&ev);
    assert_eq!(cats["kernel"], 4010);
    // 24 kernels have no launch call (parse's summary): no flow for them
    let kernel_flows = ev
        .iter()
        .filter(|e| e["ph"] == "s" && e["id"].as_u64().unwrap() <= 4010)
        .count();
    assert_eq!(kernel_flows, 4010 - 24);
}

/// A PyTorch profiler trace: CPU ops as ranges, kernels with flows.
#[test]
fn corpus_kineto_trace() {
    let corpus = corpus_or_skip!();
    let f = corpus.join("kineto-hta/alexnet_benchmark_trace.json.gz");
    let ev = events(&stdout_of(&[
        "export",
        "-q",
        "--chrome",
        f.to_str().unwrap(),
    ]));
    let cats = check(&ev);
    assert_eq!(cats["kernel"], 79);
    assert_eq!(
        cats["flows"],
        cats["kernel"]
            + cats.get("gpu_memcpy").copied().unwrap_or(0)
            + cats.get("gpu_memset").copied().unwrap_or(0)
    );
    assert!(cats["cpu_op"] > 0);
}
