//! `rprof steps`, `rprof idle`, `rprof launch`: hand-computed expectations
//! on a small synthetic nsys export and a small inline PyTorch-profiler
//! trace, and independent recomputations on the corpus traces with
//! ProfilerSteps. The timelines and every expected number are worked out in
//! the comments next to them.

use std::path::{Path, PathBuf};

use rprof_testkit::hostview::{HostSynth, SynthMemOp, SynthSync};
use rprof_testkit::{SynthGpu, SynthKernel, SynthRange};
use serde_json::Value;

use crate::util::{rprof, run};

/// The synthetic nsys export (ns; pid 100, launching thread 100, a data
/// loader thread 101):
///
/// NVTX on tid 100: `iteration 1` [1000,5000), `iteration 2` [5000,9000),
/// `iteration 3` [9000,13000), `forward` [1100,2000), `loss.item()`
/// [2640,3660). On tid 101: `enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`
/// [0,1150).
///
/// GPU, device 0:
/// - stream 7: K1 `gemm` [1500,2500) (call [1200,1300)), K2 `relu`
///   [2510,2600) (call [1400,1450)), C1 HtoD copy [2600,2700) (call
///   [1460,1480)), K3 `add` [3800,3850) (call [3700,3790)), S1 memset
///   [40000,40100) (call [3795,3798));
/// - stream 8: C2 copy [2550,2650) (call [1490,1495)), overlapping C1 and K2;
/// - stream 9: K5 `tail` [50000,50100) (call [9100,9150)).
///
/// Host: `cudaStreamSynchronize` [2650,3650) on tid 100 inside
/// `loss.item()`, with a CUPTI stream-sync record at the same times.
pub(crate) fn nsys_trace(dir: &Path) -> PathBuf {
    let mut h = HostSynth::default();
    h.base.gpus.push(SynthGpu::a100());
    let k = |name: &str, s: i64, e: i64, corr: i64, cs: i64, ce: i64, stream: i64| {
        let mut k = SynthKernel::new(name, s, e, corr).launched_at(cs, ce);
        k.stream = stream;
        k
    };
    h.base.kernels = vec![
        k("gemm", 1500, 2500, 1, 1200, 1300, 7),
        k("relu", 2510, 2600, 2, 1400, 1450, 7),
        k("add", 3800, 3850, 5, 3700, 3790, 7),
        k("tail", 50000, 50100, 7, 9100, 9150, 9),
    ];
    h.memops = vec![
        SynthMemOp::copy(2600, 2700, 3, 1460, 1480),
        SynthMemOp::copy(2550, 2650, 4, 1490, 1495).on_stream(8),
        SynthMemOp::set(40000, 40100, 6, 3795, 3798),
    ];
    h.call(2650, 3650, 100, 100, 8, "cudaStreamSynchronize_v3020");
    h.syncs.push(SynthSync {
        start: 2650,
        end: 3650,
        device: 0,
        stream: 7,
        corr: 8,
        pid: 100,
        sync_type: 3,
    });
    for (text, s, e) in [
        ("iteration 1", 1000, 5000),
        ("iteration 2", 5000, 9000),
        ("iteration 3", 9000, 13000),
        ("forward", 1100, 2000),
        ("loss.item()", 2640, 3660),
    ] {
        h.base.ranges.push(SynthRange::push(text, s, e));
    }
    let mut dl = SynthRange::push(
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        0,
        1150,
    );
    dl.tid = 101;
    h.base.ranges.push(dl);
    let path = dir.join("host.sqlite");
    h.write_nsys(&path).unwrap();
    path
}

fn json(args: &[&str], file: &Path) -> Value {
    let out = run(rprof().args(args).arg("--json").arg("-q").arg(file));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn cats(step: &Value) -> Vec<i64> {
    [
        "kernel_ns",
        "memcpy_ns",
        "memset_ns",
        "communication_ns",
        "runtime_ns",
        "dataloader_ns",
        "cpu_exec_ns",
        "other_ns",
    ]
    .iter()
    .map(|k| step[k].as_i64().unwrap())
    .collect()
}

#[test]
fn nsys_steps_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let f = nsys_trace(dir.path());
    let v = json(&["steps"], &f);
    assert!(
        v["detection"]
            .as_str()
            .unwrap()
            .contains("named like a step"),
        "{}",
        v["detection"]
    );
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    // alignment: iteration 1 launched K1, K2, C1, C2, K3, S1 (GPU [1500,
    // 40100)), so it ends at 40100; iteration 2 launched nothing: it starts
    // at the previous end, 40100, and ends there (max(9000, 40100));
    // iteration 3 launched K5 and runs [40100, 50100)
    let w: Vec<(i64, i64)> = steps
        .iter()
        .map(|s| {
            (
                s["start_ns"].as_i64().unwrap(),
                s["end_ns"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(w, vec![(1000, 40100), (40100, 40100), (40100, 50100)]);
    // iteration 1, window [1000, 40100) = 39100 ns:
    // kernel = 1000 + 90 + 50 = 1140
    // memcpy = [2550,2700) minus K2's [2550,2600) = 100
    // memset = 100
    // runtime = calls 100+50+20+5 (before 1500) + sync [2700,3650) 950
    //   (its [2650,2700) is under C1) + K3's 90 + S1's 3 + K5's 50 = 1268
    // dataloader = [1000,1150) = 150 (on the other thread)
    // cpu exec = forward's [1150,1200)+[1300,1400)+[1450,1460)+[1480,1490)
    //   +[1495,1500) = 175, loss.item()'s [3650,3660) = 10: 185
    // other = 39100 - 2943 = 36157
    assert_eq!(
        cats(&steps[0]),
        vec![1140, 100, 100, 0, 1268, 150, 185, 36157]
    );
    assert_eq!(steps[0]["total_ns"], 39100);
    assert_eq!(steps[0]["gpu_busy_ns"], 1140);
    assert_eq!(steps[0]["device_ops"], 6);
    // iteration 2: no GPU work, zero length, utilization na (null)
    assert_eq!(cats(&steps[1]), vec![0; 8]);
    assert!(steps[1]["gpu_util"].is_null());
    // iteration 3: K5 100 ns, the rest other
    assert_eq!(cats(&steps[2]), vec![100, 0, 0, 0, 0, 0, 0, 9900]);
    for s in steps {
        assert_eq!(cats(s).iter().sum::<i64>(), s["total_ns"].as_i64().unwrap());
    }
    // mean over 3 steps: (39100 + 0 + 10000) / 3, kernel (1140 + 100) / 3
    let m = &v["mean"];
    assert!((m["total_ns"].as_f64().unwrap() - 49100.0 / 3.0).abs() < 1e-6);
    assert!((m["kernel_ns"].as_f64().unwrap() - 1240.0 / 3.0).abs() < 1e-6);
    assert_eq!(v["spread"]["min_ns"], 0);
    assert_eq!(v["spread"]["median_ns"], 10000.0);
    assert_eq!(v["spread"]["max_ns"], 39100);
    // fewer than 4 steps: no fences
    assert!(v["spread"]["fences_ns"].is_null());
}

#[test]
fn nsys_steps_pattern_and_na() {
    let dir = tempfile::tempdir().unwrap();
    let f = nsys_trace(dir.path());
    // only iteration 3 [9000,13000): it launched K5 [50000,50100); the GPU
    // work launched outside it that ended before 50000 moves its start to
    // the latest such end, S1's 40100
    let v = json(&["steps", "--step", "^iteration 3$"], &f);
    let s = &v["steps"][0];
    assert_eq!(s["start_ns"], 40100);
    assert_eq!(s["end_ns"], 50100);
    let v = json(&["steps", "--step", "no such range"], &f);
    assert!(v["steps"].as_array().unwrap().is_empty());
    assert!(v["na"].as_str().unwrap().contains("no range matches"));
    let out = run(rprof().args(["steps", "--step", "("]).arg(&f));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn nsys_idle_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let f = nsys_trace(dir.path());
    let v = json(&["idle"], &f);
    let streams = v["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 3);
    // stream 7: gaps K1→K2 10 ns (K2's call began before K1 ended, < 30 us:
    // kernel wait), C1→K3 1100 ns (K3's call began at 3700 > 2700: host
    // wait), K3→S1 36150 ns (S1's call began at 3795 < 3850, >= 30 us: other)
    let s7 = &streams[0];
    assert_eq!(
        (s7["device"].as_i64(), s7["stream"].as_i64()),
        (Some(0), Some(7))
    );
    assert_eq!(s7["gaps"], 3);
    assert_eq!(s7["idle_ns"], 37260);
    assert_eq!(s7["host_wait_ns"], 1100);
    assert_eq!(s7["kernel_wait_ns"], 10);
    assert_eq!(s7["other_ns"], 36150);
    assert_eq!(s7["span_ns"], 40100 - 1500);
    // streams 8 and 9 have one op each
    assert_eq!(streams[1]["gaps"], 0);
    assert_eq!(streams[2]["gaps"], 0);
    assert_eq!(v["totals"]["idle_ns"], 37260);
    let gaps = v["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 3);
    assert_eq!(gaps[0]["gap_ns"], 36150);
    assert_eq!(gaps[0]["class"], "other");
    // the gap before K3: the stream sync overlapped 950 of its 1100 ns
    let g = &gaps[1];
    assert_eq!(g["gap_ns"], 1100);
    assert_eq!(g["class"], "host_wait");
    assert_eq!(
        g["cause"],
        "blocked in cudaStreamSynchronize called from `loss.item()`"
    );
    assert_eq!(g["sync_calls"][0]["overlap_ns"], 950);
    assert_eq!(g["sync_records"][0]["kind"], "stream");
    assert_eq!(g["sync_records"][0]["overlap_ns"], 950);
    assert_eq!(gaps[2]["class"], "kernel_wait");
    // a threshold of 5 ns makes the 10 ns gap "other"
    let v = json(&["idle", "--kernel-wait-us", "0.005"], &f);
    assert_eq!(v["streams"][0]["kernel_wait_ns"], 0);
    assert_eq!(v["streams"][0]["other_ns"], 36160);
}

#[test]
fn nsys_launch_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let f = nsys_trace(dir.path());
    let v = json(&["launch"], &f);
    // latency = start - call end: K1 1500-1300 = 200, K2 2510-1450 = 1060,
    // K3 3800-3790 = 10, K5 50000-9150 = 40850; API 100, 50, 90, 50
    let o = &v["overall"];
    assert_eq!(o["count"], 4);
    assert_eq!(o["queued"], 4);
    assert_eq!(o["latency_mean_ns"], 42120.0 / 4.0);
    assert_eq!(o["latency_median_ns"], 630.0);
    assert_eq!(o["latency_min_ns"], 10);
    assert_eq!(o["latency_max_ns"], 40850);
    assert_eq!(o["api_mean_ns"], 72.5);
    assert_eq!(o["api_median_ns"], 70.0);
    // per op: innermost range enclosing the call
    let ops: Vec<(String, i64, i64)> = v["by_op"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["count"].as_i64().unwrap(),
                s["latency_total_ns"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ops,
        vec![
            ("iteration 3".to_owned(), 1, 40850),
            ("forward".to_owned(), 2, 1260),
            ("iteration 1".to_owned(), 1, 10),
        ]
    );
    // K3 (50 ns) is shorter than its call (90 ns)
    let lb = v["launch_bound"].as_array().unwrap();
    assert_eq!(lb.len(), 1);
    assert_eq!(lb[0]["op"], "iteration 1");
    assert_eq!(lb[0]["kernel"], "add");
    assert_eq!(v["launch_bound_share"], 0.25);
    // queue of stream 7 (+1 at call start, -1 at op start): 1 on
    // [1200,1400), 2 on [1400,1460), 3 on [1460,1500), 2 on [1500,2510),
    // 1 on [2510,2600), 0 on [2600,3700), 1 on [3700,3795), 2 on
    // [3795,3800), 1 on [3800,40000): span 38800, sum q*dt 38855
    let q = &v["queues"][0];
    assert_eq!(
        (q["device"].as_i64(), q["stream"].as_i64()),
        (Some(0), Some(7))
    );
    assert_eq!(q["ops"], 5);
    assert_eq!(q["span_ns"], 38800);
    assert_eq!(q["max"], 3);
    assert_eq!(q["empty_ns"], 1100);
    assert!((q["mean"].as_f64().unwrap() - 38855.0 / 38800.0).abs() < 1e-12);
    assert_eq!((q["p50"].as_u64(), q["p99"].as_u64()), (Some(1), Some(2)));
    // one CSV row per kernel, in start order
    let out = run(rprof()
        .args(["launch", "--csv", "--table", "each", "-q"])
        .arg(&f));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 5, "{text}");
    assert_eq!(rows[3], "3800,0,7,add,iteration 1,90,10,50");
}

/// A PyTorch-profiler trace (µs): steps 1–3 as `ProfilerStep#N` user
/// annotations on pid 1 / tid 1.
///
/// Step 1 [100,200): DataLoader `__next__` [105,115); `aten::mm` [120,140)
/// launches `gemm` [150,180) (stream 7) by a call at [125,130);
/// `nccl:all_reduce` [145,155) launches an NCCL kernel [170,210) (stream 8)
/// by a call at [147,150); a driver call `cuLaunchKernel` [190,195)
/// launches `triton_` [240,250) (stream 7).
/// Step 2 [200,300): `cudaMemcpyAsync` [205,209) → copy [215,225) (stream
/// 7); `cudaMemsetAsync` [210,212) → set [220,230) (stream 9); `aten::item`
/// [255,285) around `cudaStreamSynchronize` [260,280); a launch at
/// [286,290) → `add` [300,305) (stream 7).
/// Step 3 [300,310): nothing.
pub(crate) const KINETO: &str = r#"{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":100,"args":{}},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":200,"dur":100,"args":{}},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":300,"dur":10,"args":{}},
{"ph":"X","cat":"cpu_op","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":105,"dur":10,"args":{}},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":120,"dur":20,"args":{"External id":5}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":125,"dur":5,"args":{"correlation":1,"External id":5}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":150,"dur":30,"args":{"correlation":1,"device":0,"stream":7}},
{"ph":"X","cat":"cpu_op","name":"nccl:all_reduce","pid":1,"tid":1,"ts":145,"dur":10,"args":{"External id":6}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":147,"dur":3,"args":{"correlation":2,"External id":6}},
{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce","pid":0,"tid":8,"ts":170,"dur":40,"args":{"correlation":2,"device":0,"stream":8}},
{"ph":"X","cat":"cuda_driver","name":"cuLaunchKernel","pid":1,"tid":1,"ts":190,"dur":5,"args":{"correlation":5}},
{"ph":"X","cat":"kernel","name":"triton_","pid":0,"tid":7,"ts":240,"dur":10,"args":{"correlation":5,"device":0,"stream":7}},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":205,"dur":4,"args":{"correlation":3}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":215,"dur":10,"args":{"correlation":3,"device":0,"stream":7,"bytes":64}},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemsetAsync","pid":1,"tid":1,"ts":210,"dur":2,"args":{"correlation":4}},
{"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":9,"ts":220,"dur":10,"args":{"correlation":4,"device":0,"stream":9,"bytes":64}},
{"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":1,"ts":255,"dur":30,"args":{}},
{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":260,"dur":20,"args":{"correlation":6}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":286,"dur":4,"args":{"correlation":7}},
{"ph":"X","cat":"kernel","name":"add","pid":0,"tid":7,"ts":300,"dur":5,"args":{"correlation":7,"device":0,"stream":7}}
]}"#;

fn kineto_trace(dir: &Path) -> PathBuf {
    let p = dir.join("steps.pt.trace.json");
    std::fs::write(&p, KINETO).unwrap();
    p
}

#[test]
fn kineto_steps_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let f = kineto_trace(dir.path());
    let v = json(&["steps"], &f);
    assert!(v["detection"].as_str().unwrap().starts_with("ProfilerStep"));
    // matched GPU ops: step 1 two (gemm, nccl), step 2 three (copy, set,
    // add; the triton kernel came from a driver call, which the plugin
    // does not read), step 3 none: the tail rule drops step 3 only
    // (2 * 0.8 > 3 is false)
    assert_eq!(
        v["dropped_tail_steps"],
        serde_json::json!(["ProfilerStep#3"])
    );
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    // step 1: [100, max(200, 210)) µs; step 2: [210, max(300, 305))
    assert_eq!(steps[0]["start_ns"], 100_000);
    assert_eq!(steps[0]["end_ns"], 210_000);
    assert_eq!(steps[1]["start_ns"], 210_000);
    assert_eq!(steps[1]["end_ns"], 305_000);
    // step 1 (110 µs): kernel gemm 30; comm = NCCL kernel [180,210) 30 +
    // the nccl:all_reduce op's [145,150) 5 = 35; runtime [125,130) 5 (the
    // NCCL launch call is under the comm op); dataloader 10; cpu exec
    // aten::mm [120,140) - [125,130) = 15; other 110 - 95 = 15
    let us = |v: Vec<i64>| v.into_iter().map(|x| x * 1000).collect::<Vec<_>>();
    assert_eq!(cats(&steps[0]), us(vec![30, 0, 0, 35, 5, 10, 15, 15]));
    assert_eq!(steps[0]["gpu_busy_ns"], 60_000);
    // step 2 (95 µs): kernel triton 10 + add 5 = 15; memcpy 10; memset
    // [225,230) 5 (a tie with the copy goes to the copy); runtime [210,212)
    // 2 + sync 20 + launch 4 = 26; cpu exec aten::item 30 - 20 = 10;
    // other 95 - 66 = 29
    assert_eq!(cats(&steps[1]), us(vec![15, 10, 5, 0, 26, 0, 10, 29]));
    let m = &v["mean"];
    assert_eq!(m["total_ns"], 102_500.0);
    assert_eq!(m["communication_ns"], 17_500.0);
    assert!((m["gpu_util"].as_f64().unwrap() - 75_000.0 / 205_000.0).abs() < 1e-12);
}

#[test]
fn kineto_idle_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let f = kineto_trace(dir.path());
    let v = json(&["idle"], &f);
    // stream 7: gemm [150,180), copy [215,225), triton [240,250), add
    // [300,305): gaps 35 (copy's call at 205 > 180: host wait), 15
    // (triton's call at 190 < 225, < 30 µs: kernel wait), 50 (add's call
    // at 286 > 250: host wait)
    let s7 = v["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stream"] == 7)
        .unwrap()
        .clone();
    assert_eq!(s7["idle_ns"], 100_000);
    assert_eq!(s7["host_wait_ns"], 85_000);
    assert_eq!(s7["kernel_wait_ns"], 15_000);
    assert_eq!(s7["span_ns"], 155_000);
    // the 50 µs gap [250,300): the sync (20 µs) covers less than half;
    // ProfilerStep#2 (50) and aten::item (30) cover at least half, the
    // innermost is aten::item
    let g = &v["gaps"][0];
    assert_eq!(g["gap_ns"], 50_000);
    assert_eq!(g["cause"], "host busy in `aten::item`");
    assert_eq!(g["sync_calls"][0]["name"], "cudaStreamSynchronize");
    assert_eq!(g["sync_calls"][0]["called_from"], "aten::item");
    assert_eq!(g["sync_calls"][0]["overlap_ns"], 20_000);
}

#[test]
fn outputs_csv_and_table() {
    let dir = tempfile::tempdir().unwrap();
    let f = kineto_trace(dir.path());
    let out = run(rprof().args(["steps", "--csv", "-q"]).arg(&f));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("name,start_ns,end_ns,total_ns,kernel_ns,"));
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[3].starts_with("mean,"));
    for cmd in ["steps", "idle", "launch"] {
        let out = run(rprof().args([cmd, "-q"]).arg(&f));
        assert!(out.status.success());
        assert!(!out.stdout.is_empty());
    }
    let out = run(rprof()
        .args(["launch", "--csv", "--table", "queues", "-q"])
        .arg(&f));
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("device,stream,ops,")
    );
    // a record file is refused with a one-line error
    let rec = dir.path().join("x.json");
    std::fs::write(&rec, "{\"x\":1}\n").unwrap();
    let out = run(rprof().args(["idle"]).arg(&rec));
    assert_eq!(out.status.code(), Some(1));
    // garbage: one line naming the file and what it is not
    let bad = dir.path().join("bad.bin");
    std::fs::write(&bad, b"\x00\x01garbage").unwrap();
    for cmd in ["steps", "idle", "launch"] {
        let out = run(rprof().arg(cmd).arg(&bad));
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("bad.bin: not a SQLite database"), "{err}");
    }
}

/// Times of a Kineto trace's events as exact ns, from the JSON text.
fn ns(v: &Value) -> i64 {
    let t = v.to_string();
    let (int, frac) = t.split_once('.').unwrap_or((&t, ""));
    let mut f = frac.to_owned();
    f.truncate(3);
    while f.len() < 3 {
        f.push('0');
    }
    int.parse::<i64>().unwrap() * 1000 + f.parse::<i64>().unwrap()
}

/// GPU events of a Kineto trace: (cat, stream, start, end), read with
/// serde_json independently of rprof's reader.
fn gpu_events(path: &Path) -> Vec<(String, i64, i64, i64)> {
    let f = std::fs::File::open(path).unwrap();
    let v: Value = serde_json::from_reader(flate2::read::GzDecoder::new(f)).unwrap();
    let evs = match &v {
        Value::Array(a) => a.clone(),
        _ => v["traceEvents"].as_array().unwrap().clone(),
    };
    evs.iter()
        .filter(|e| e["ph"] == "X")
        .filter_map(|e| {
            let cat = e["cat"].as_str()?.to_ascii_lowercase();
            if !matches!(
                cat.as_str(),
                "kernel" | "gpu_memcpy" | "gpu_memset" | "memcpy" | "memset"
            ) {
                return None;
            }
            let s = ns(&e["ts"]);
            let d = ns(&e["dur"]);
            Some((cat, e["args"]["stream"].as_i64().unwrap_or(0), s, s + d))
        })
        .collect()
}

/// Covered ns of the union of `ivs` inside [lo, hi), by sort and merge.
fn covered(ivs: &[(i64, i64)], lo: i64, hi: i64) -> i64 {
    let mut v: Vec<(i64, i64)> = ivs
        .iter()
        .map(|&(s, e)| (s.max(lo), e.min(hi)))
        .filter(|(s, e)| e > s)
        .collect();
    v.sort();
    let mut total = 0;
    let mut cur: Option<(i64, i64)> = None;
    for (s, e) in v {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

#[test]
fn corpus_steps_and_idle_recomputed() {
    let corpus = corpus_or_skip!();
    for rel in [
        "kineto-tbplugin/resnet50_num_workers_4_worker0.1623212756351.pt.trace.json.gz",
        "hta-nccl/nccl_data.json.gz",
        "kineto-hta/trace_diff_control.json.gz",
    ] {
        let path = corpus.join(rel);
        let v = json(&["steps"], &path);
        let steps = v["steps"].as_array().unwrap();
        assert!(!steps.is_empty(), "{rel}: no steps");
        assert!(v["detection"].as_str().unwrap().starts_with("ProfilerStep"));
        let gpu = gpu_events(&path);
        let kernels: Vec<(i64, i64)> = gpu
            .iter()
            .filter(|g| g.0 == "kernel")
            .map(|g| (g.2, g.3))
            .collect();
        let mut prev_end = i64::MIN;
        for s in steps {
            let (a, b) = (
                s["start_ns"].as_i64().unwrap(),
                s["end_ns"].as_i64().unwrap(),
            );
            assert!(a >= prev_end && b >= a, "{rel}: steps overlap");
            prev_end = b;
            assert_eq!(cats(s).iter().sum::<i64>(), b - a, "{rel}");
            assert_eq!(
                s["gpu_busy_ns"].as_i64().unwrap(),
                covered(&kernels, a, b),
                "{rel}: GPU busy time of {}",
                s["name"]
            );
        }
        // idle per stream: sort by start, running max end, sum of gaps
        let v = json(&["idle"], &path);
        for st in v["streams"].as_array().unwrap() {
            let mut ops: Vec<(i64, i64)> = gpu
                .iter()
                .filter(|g| g.1 == st["stream"].as_i64().unwrap())
                .map(|g| (g.2, g.3))
                .collect();
            ops.sort();
            let mut end = ops[0].1;
            let (mut idle, mut n) = (0, 0);
            for &(s, e) in &ops[1..] {
                if s > end {
                    idle += s - end;
                    n += 1;
                }
                end = end.max(e);
            }
            assert_eq!(
                st["idle_ns"].as_i64().unwrap(),
                idle,
                "{rel}: stream {}",
                st["stream"]
            );
            assert_eq!(st["gaps"].as_i64().unwrap(), n, "{rel}");
            assert_eq!(
                st["host_wait_ns"].as_i64().unwrap()
                    + st["kernel_wait_ns"].as_i64().unwrap()
                    + st["other_ns"].as_i64().unwrap(),
                idle
            );
        }
    }
}

/// What each view reads, as its stderr headline counts it (on an nsys
/// export with kernels, launch calls, other API calls and ranges): `steps`
/// and `idle` read every API call; `launch` only the launch calls, so its
/// headline has kernels and ranges but no API calls; `mem` counts the
/// kernels it does not keep, as many as the others read.
#[test]
fn each_view_reads_what_it_reports_on() {
    let f = crate::util::fixture("nsys-ai/mfu_2gpu_before.sqlite");
    let db = rusqlite::Connection::open(&f).unwrap();
    let kernels: i64 = db
        .query_row("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", [], |r| {
            r.get(0)
        })
        .unwrap();
    let headline = |cmd: &str| -> String {
        let out = run(rprof().arg(cmd).arg(&f));
        assert!(out.status.success(), "{cmd}");
        let err = String::from_utf8(out.stderr).unwrap();
        err.lines().next().unwrap_or("").to_owned()
    };
    let calls: i64 = db
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start IS NOT NULL AND \"end\" IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    for cmd in ["steps", "idle", "launch", "mem"] {
        let h = headline(cmd);
        assert!(h.contains(&format!(": {kernels} kernels")), "{cmd}: {h}");
        assert!(h.contains(" ranges"), "{cmd}: {h}");
        assert_eq!(h.contains(" API calls"), cmd != "launch", "{cmd}: {h}");
        // idle keeps the calls that block the host, and says of how many
        let kept = format!(" of {calls} API calls (those that block the host)");
        assert_eq!(h.contains(&kept), cmd == "idle", "{cmd}: {h}");
    }
}
