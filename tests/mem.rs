//! `rprof mem`: hand-computed figures on synthetic nsys exports and small
//! PyTorch-profiler traces, the corpus copies against SQL sums, the 2021
//! ResNet-50 trace against a plain recount of its events, bad input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rprof_testkit::mem::{MemRows, SynthMemEvent, SynthMemOp, SynthPoolEvent};
use rprof_testkit::{Synth, SynthGpu, SynthRange};
use serde_json::Value;

use crate::gpu::stdout_of;
use crate::util::{rprof, run};

fn json_of(path: &Path) -> Value {
    let out = run(rprof().args(["mem", "--json", "--top", "0"]).arg(path));
    assert!(
        out.status.success(),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn call(s: &mut Synth, start: i64, end: i64, corr: i64, name: &str) {
    s.extra_calls
        .push((start, end, 100, 100, corr, name.to_owned(), 0));
}

/// The nsys export of the hand-computed cases (times in ns).
///
/// Memory events, device 0 (running sum after each):
/// 1100 +100 @0x1000 in op_a (100), 1200 +300 @0x2000 in op_a > op_a_child
/// (400), 1500 −100 @0x1000 in op_a (300), 3500 −50 @0x9000 in op_b (250;
/// allocated before the window), 3600 +1000 @0x3000 in op_b (1250), 3700
/// −300 @0x2000 without an API call (950). Device 1: 5000 −64 @0xA (−64),
/// 5100 +32 @0xB (−32).
///
/// Copies and sets: HtoD pageable→device 1000 B in 100 ns (cudaMemcpyAsync
/// inside `loader`), HtoD pinned→device 500 B in 25 ns (cudaMemcpyAsync,
/// no range), DtoH device→pageable 2000 B in 400 ns (cudaMemcpy inside
/// `loader2`), DtoD 10 B in 0 ns (no API call), memset pinned 64 B in 10
/// ns (cudaMemset), memset device 128 B in 100 ns (cudaMemsetAsync).
pub(crate) fn mem_trace(dir: &Path) -> PathBuf {
    let mut s = Synth::default();
    s.gpus.push(SynthGpu::a100());
    s.ranges
        .push(SynthRange::push("op_a, seq = 1, op_id = 7", 1_000, 2_000));
    s.ranges.push(SynthRange::push("op_a_child", 1_150, 1_300));
    s.ranges.push(SynthRange::push("op_b", 3_000, 4_000));
    s.ranges
        .push(SynthRange::push("op_a, seq = 2, op_id = 9", 8_000, 8_100));
    s.ranges.push(SynthRange::push("loader", 8_900, 9_100));
    s.ranges.push(SynthRange::push("loader2", 9_250, 10_900));
    for (t, corr) in [
        (1_100, 11),
        (1_200, 12),
        (1_500, 13),
        (3_500, 14),
        (3_600, 15),
    ] {
        let name = if corr == 13 || corr == 14 {
            "cudaFree_v3020"
        } else {
            "cudaMalloc_v3020"
        };
        call(&mut s, t - 5, t + 5, corr, name);
    }
    call(&mut s, 9_000, 9_050, 21, "cudaMemcpyAsync_v3020");
    call(&mut s, 9_200, 9_210, 22, "cudaMemcpyAsync_v3020");
    call(&mut s, 9_300, 10_800, 23, "cudaMemcpy_v3020");
    call(&mut s, 10_950, 11_020, 24, "cudaMemset_v3020");
    call(&mut s, 11_050, 11_060, 25, "cudaMemsetAsync_v3020");
    // one kernel of 1000 ns, for summary's GPU time
    s.kernels.push(rprof_testkit::SynthKernel::new(
        "void k(int)",
        20_000,
        21_000,
        50,
    ));
    let p = dir.join("mem.sqlite");
    s.write_nsys(&p).unwrap();
    let mut d1 = SynthMemEvent::free(5_000, 0xA, 64, 0);
    d1.device = 1;
    d1.corr = None;
    let mut d1b = SynthMemEvent::alloc(5_100, 0xB, 32, 0);
    d1b.device = 1;
    d1b.corr = None;
    MemRows {
        events: vec![
            SynthMemEvent::alloc(1_100, 0x1000, 100, 11),
            SynthMemEvent::alloc(1_200, 0x2000, 300, 12),
            SynthMemEvent::free(1_500, 0x1000, 100, 13),
            SynthMemEvent::free(3_500, 0x9000, 50, 14),
            SynthMemEvent::alloc(3_600, 0x3000, 1000, 15),
            SynthMemEvent::free(3_700, 0x2000, 300, 99),
            d1,
            d1b,
        ],
        ops: vec![
            SynthMemOp::copy(10_000, 10_100, 21, 1000, 1, 0, 2),
            SynthMemOp::copy(10_200, 10_225, 22, 500, 1, 1, 2),
            SynthMemOp::copy(10_300, 10_700, 23, 2000, 2, 2, 0),
            SynthMemOp::copy(12_000, 12_000, 98, 10, 8, 2, 2),
            SynthMemOp::set(11_000, 11_010, 24, 64, 1),
            SynthMemOp::set(11_100, 11_200, 25, 128, 2),
        ],
        pools: Vec::new(),
        usage_table: true,
    }
    .add_to(&p)
    .unwrap();
    p
}

fn find(rows: &Value, f: impl Fn(&Value) -> bool) -> &Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| f(r))
        .unwrap_or_else(|| panic!("no such row in {rows:#}"))
}

#[test]
fn nsys_allocations_hand_computed() {
    let dir = tempfile::tempdir().unwrap();
    let v = json_of(&mem_trace(dir.path()));
    assert_eq!(v["source"], "nsys");
    assert_eq!(v["events"], 8);
    assert_eq!(v["window_ns"], serde_json::json!([1100, 5100]));
    let d0 = &v["devices"][0];
    assert_eq!(d0["device_type"], "cuda");
    assert_eq!(d0["device"], 0);
    assert_eq!(
        (d0["allocs"].as_i64(), d0["frees"].as_i64()),
        (Some(3), Some(3))
    );
    assert_eq!(d0["alloc_bytes"], 1400);
    assert_eq!(d0["freed_bytes"], 450);
    assert_eq!(d0["net_bytes"], 950);
    assert_eq!(d0["peak_in_window_bytes"], 1250);
    assert_eq!(d0["peak_in_window_ns"], 3600);
    assert_eq!(d0["peak_in_window_op"], "op_b");
    assert_eq!(d0["min_in_window_bytes"], 100);
    assert_eq!(d0["peak_total_allocated_bytes"], Value::Null);
    // device 1 starts with a free: negative sums, reported as such
    let d1 = &v["devices"][1];
    assert_eq!(d1["device"], 1);
    assert_eq!(d1["net_bytes"], -32);
    assert_eq!(d1["peak_in_window_bytes"], -32);
    assert_eq!(d1["min_in_window_bytes"], -64);
    assert_eq!(d1["min_in_window_ns"], 5000);
    assert_eq!(d1["peak_in_window_op"], Value::Null);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("cuda 1: the running sum goes negative"),
        "{notes}"
    );

    // per op; seq/op_id fields are not part of the name
    let ops = &v["ops"];
    let op = |name: &str, dev: i64| find(ops, |r| r["op"] == name && r["device"] == dev);
    let a = op("op_a", 0);
    assert_eq!(a["calls"], 2);
    assert_eq!(
        (a["allocs"].as_i64(), a["alloc_bytes"].as_i64()),
        (Some(1), Some(100))
    );
    assert_eq!(
        (a["frees"].as_i64(), a["freed_bytes"].as_i64()),
        (Some(1), Some(100))
    );
    assert_eq!(a["increase_bytes"], 0);
    assert_eq!(a["incl_allocs"], 2);
    assert_eq!(a["incl_alloc_bytes"], 400);
    assert_eq!(a["incl_increase_bytes"], 300);
    let c = op("op_a_child", 0);
    assert_eq!(
        (c["calls"].as_i64(), c["alloc_bytes"].as_i64()),
        (Some(1), Some(300))
    );
    assert_eq!(c["incl_alloc_bytes"], 300);
    let b = op("op_b", 0);
    assert_eq!(
        (b["alloc_bytes"].as_i64(), b["freed_bytes"].as_i64()),
        (Some(1000), Some(50))
    );
    assert_eq!(b["increase_bytes"], 950);
    let none0 = op("(no op)", 0);
    assert_eq!(
        (none0["frees"].as_i64(), none0["increase_bytes"].as_i64()),
        (Some(1), Some(-300))
    );
    assert_eq!(none0["incl_allocs"], 0);
    let none1 = op("(no op)", 1);
    assert_eq!(
        (none1["allocs"].as_i64(), none1["frees"].as_i64()),
        (Some(1), Some(1))
    );
    assert_eq!(ops.as_array().unwrap().len(), 5);
    // sorted by self allocated bytes
    assert_eq!(ops[0]["op"], "op_b");

    // alive at the end
    let alive = v["alive"].as_array().unwrap();
    assert_eq!(alive.len(), 2);
    assert_eq!(alive[0]["addr"], 0x3000);
    assert_eq!(alive[0]["bytes"], 1000);
    assert_eq!(alive[0]["op"], "op_b");
    assert_eq!(
        (alive[1]["addr"].as_i64(), alive[1]["device"].as_i64()),
        (Some(0xB), Some(1))
    );
    let t = &v["alive_total"];
    assert_eq!(
        (t["count"].as_i64(), t["bytes"].as_i64()),
        (Some(2), Some(1032))
    );
    assert_eq!(t["unmatched_frees"], 2);
    assert_eq!(t["without_addr"], 0);
}

#[test]
fn nsys_copies_and_flags_hand_computed() {
    let dir = tempfile::tempdir().unwrap();
    let v = json_of(&mem_trace(dir.path()));
    let kinds = crate::util::texts_of(&v, "copies", "kind");
    assert_eq!(kinds, ["HtoD", "DtoH", "DtoD", "memset"]);
    let h = &v["copies"][0];
    assert_eq!(
        (h["count"].as_i64(), h["total_ns"].as_i64()),
        (Some(2), Some(125))
    );
    assert_eq!(
        (h["min_ns"].as_i64(), h["max_ns"].as_i64()),
        (Some(25), Some(100))
    );
    assert_eq!(h["mean_ns"], 62.5);
    assert_eq!(h["median_ns"], 62.5);
    assert_eq!(h["bytes"], 1500);
    assert_eq!(h["mean_bytes"], 750.0);
    assert_eq!(h["mean_gbps"], 12.0);
    assert_eq!(h["max_gbps"], 20.0);
    let d = &v["copies"][1];
    assert_eq!(
        (d["total_ns"].as_i64(), d["bytes"].as_i64()),
        (Some(400), Some(2000))
    );
    assert_eq!(d["mean_gbps"], 5.0);
    let dd = &v["copies"][2];
    assert_eq!(
        (dd["count"].as_i64(), dd["total_ns"].as_i64()),
        (Some(1), Some(0))
    );
    assert_eq!(dd["mean_gbps"], Value::Null);
    assert_eq!(dd["max_gbps"], Value::Null);
    let m = &v["copies"][3];
    assert_eq!(
        (m["count"].as_i64(), m["total_ns"].as_i64()),
        (Some(2), Some(110))
    );
    assert_eq!(m["median_ns"], 55.0);
    assert_eq!(m["bytes"], 192);
    assert_eq!(m["max_gbps"], 6.4);
    assert!((m["mean_gbps"].as_f64().unwrap() - 192.0 / 110.0).abs() < 1e-12);

    let flag = |rule: &str| find(&v["flags"], |f| f["rule"] == rule).clone();
    let a = flag("async_pageable");
    assert_eq!(
        (a["count"].as_i64(), a["total_ns"].as_i64()),
        (Some(1), Some(100))
    );
    assert_eq!(a["unknown_api"], 1);
    assert_eq!(a["issuers"][0]["op"], "loader");
    assert_eq!(a["issuers"][0]["api"], "cudaMemcpyAsync");
    let s = flag("sync_memcpy");
    assert_eq!(
        (s["count"].as_i64(), s["total_ns"].as_i64()),
        (Some(1), Some(400))
    );
    assert_eq!(s["issuers"][0]["op"], "loader2");
    assert_eq!(s["issuers"][0]["api"], "cudaMemcpy");
    let z = flag("sync_memset");
    assert_eq!(
        (z["count"].as_i64(), z["total_ns"].as_i64()),
        (Some(1), Some(10))
    );
    assert_eq!(z["issuers"][0]["op"], "(no op)");
    assert_eq!(z["unknown_api"], 0);

    // CSV of one section, and the table
    let out = run(rprof()
        .args(["mem", "--csv", "--section", "copies"])
        .arg(dir.path().join("mem.sqlite")));
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        "kind,count,total_ns,mean_ns,median_ns,min_ns,max_ns,bytes,bytes_unknown,mean_bytes,mean_gbps,max_gbps"
    );
    assert_eq!(
        csv.lines().nth(1).unwrap(),
        "HtoD,2,125,62.5,62.5,25,100,1500,0,750,12,20"
    );
    let out = run(rprof().arg("mem").arg(dir.path().join("mem.sqlite")));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("| cuda 1 |"), "{table}");
    assert!(
        table.contains("async_pageable: 1 operations, 100 ns"),
        "{table}"
    );
}

/// nsys without `CUDA_GPU_MEMORY_USAGE_EVENTS`: says so, copies still there.
#[test]
fn nsys_without_memory_events() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Synth::default();
    s.gpus.push(SynthGpu::a100());
    let p = dir.path().join("nomem.sqlite");
    s.write_nsys(&p).unwrap();
    MemRows {
        ops: vec![SynthMemOp::copy(100, 300, 1, 400, 1, 1, 2)],
        ..MemRows::default()
    }
    .add_to(&p)
    .unwrap();
    let v = json_of(&p);
    assert_eq!(v["devices"], serde_json::json!([]));
    assert_eq!(v["ops"], serde_json::json!([]));
    let notes = v["notes"].to_string();
    assert!(notes.contains("memory events: not captured"), "{notes}");
    assert!(notes.contains("no memory events"), "{notes}");
    assert_eq!(v["copies"][0]["kind"], "HtoD");
    assert_eq!(v["copies"][0]["mean_gbps"], 2.0);
}

/// Kineto with `Total Allocated` / `Total Reserved` and addresses (µs):
/// cuda:0 +1024 @100 at 15 in aten::empty (TA 1024), +4096 @200 at 37 in
/// aten::conv > aten::empty (TA 5120), −1024 @100 at 45 in aten::conv
/// (TA 4096); TR 2 MiB throughout; cpu +8 @300 at 60 outside any op.
fn kineto_mem(totals: bool) -> String {
    let t = |ta: i64| {
        if totals {
            format!(r#","Total Allocated":{ta},"Total Reserved":2097152"#)
        } else {
            String::new()
        }
    };
    format!(
        r#"{{"schemaVersion":1,"traceEvents":[
  {{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":10,"dur":10,"args":{{}}}},
  {{"ph":"X","cat":"cpu_op","name":"aten::conv","pid":1,"tid":1,"ts":30,"dur":20,"args":{{}}}},
  {{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":35,"dur":5,"args":{{}}}},
  {{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":15,"args":{{"Device Type":1,"Device Id":0,"Addr":100,"Bytes":1024{}}}}},
  {{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":37,"args":{{"Device Type":1,"Device Id":0,"Addr":200,"Bytes":4096{}}}}},
  {{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":45,"args":{{"Device Type":1,"Device Id":0,"Addr":100,"Bytes":-1024{}}}}},
  {{"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":60,"args":{{"Device Type":0,"Device Id":-1,"Addr":300,"Bytes":8}}}},
  {{"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":70,"dur":2,"args":{{"device":0,"stream":7,"correlation":5,"bytes":4000}}}}
]}}"#,
        t(1024),
        t(5120),
        t(4096)
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn kineto_with_totals_hand_computed() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "t.json", &kineto_mem(true));
    let v = json_of(&p);
    assert_eq!(v["window_ns"], serde_json::json!([15000, 60000]));
    let c = &v["devices"][0];
    assert_eq!(
        (c["device_type"].as_str(), c["device"].as_i64()),
        (Some("cuda"), Some(0))
    );
    assert_eq!(
        (c["allocs"].as_i64(), c["frees"].as_i64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        (c["alloc_bytes"].as_i64(), c["freed_bytes"].as_i64()),
        (Some(5120), Some(1024))
    );
    assert_eq!(c["net_bytes"], 4096);
    assert_eq!(c["peak_in_window_bytes"], 5120);
    assert_eq!(c["peak_in_window_ns"], 37000);
    assert_eq!(c["peak_in_window_op"], "aten::empty");
    assert_eq!(c["peak_total_allocated_bytes"], 5120);
    assert_eq!(c["peak_total_allocated_ns"], 37000);
    assert_eq!(c["peak_total_allocated_op"], "aten::empty");
    assert_eq!(c["peak_total_reserved_bytes"], 2097152);
    assert_eq!(c["peak_total_reserved_ns"], 15000);
    let cpu = &v["devices"][1];
    assert_eq!(
        (cpu["device_type"].as_str(), cpu["device"].as_i64()),
        (Some("cpu"), Some(-1))
    );
    assert_eq!(cpu["peak_in_window_bytes"], 8);
    assert_eq!(cpu["peak_total_allocated_bytes"], Value::Null);

    let ops = &v["ops"];
    let e = find(ops, |r| r["op"] == "aten::empty");
    assert_eq!(
        (e["calls"].as_i64(), e["allocs"].as_i64()),
        (Some(2), Some(2))
    );
    assert_eq!(
        (e["alloc_bytes"].as_i64(), e["increase_bytes"].as_i64()),
        (Some(5120), Some(5120))
    );
    let conv = find(ops, |r| r["op"] == "aten::conv");
    assert_eq!(
        (conv["allocs"].as_i64(), conv["frees"].as_i64()),
        (Some(0), Some(1))
    );
    assert_eq!(conv["increase_bytes"], -1024);
    assert_eq!(conv["incl_allocs"], 1);
    assert_eq!(conv["incl_alloc_bytes"], 4096);
    assert_eq!(conv["incl_increase_bytes"], 3072);
    let none = find(ops, |r| r["op"] == "(no op)");
    assert_eq!(
        (none["device_type"].as_str(), none["alloc_bytes"].as_i64()),
        (Some("cpu"), Some(8))
    );

    let alive = v["alive"].as_array().unwrap();
    assert_eq!(alive.len(), 2);
    assert_eq!(
        (alive[0]["addr"].as_i64(), alive[0]["bytes"].as_i64()),
        (Some(200), Some(4096))
    );
    assert_eq!(alive[0]["op"], "aten::empty");
    assert_eq!(alive[1]["op"], Value::Null);
    assert_eq!(v["alive_total"]["bytes"], 4104);

    // copies from a Kineto trace: the memset, 4000 B in 2 µs = 2 GB/s
    assert_eq!(v["copies"][0]["kind"], "memset");
    assert_eq!(v["copies"][0]["mean_gbps"], 2.0);
}

#[test]
fn kineto_without_totals() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "t.json", &kineto_mem(false));
    let v = json_of(&p);
    let c = &v["devices"][0];
    assert_eq!(c["peak_total_allocated_bytes"], Value::Null);
    assert_eq!(c["peak_total_reserved_bytes"], Value::Null);
    assert_eq!(c["peak_in_window_bytes"], 5120);
    let out = run(rprof().arg("mem").arg(&p));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("| na |") || table.contains("na |"),
        "{table}"
    );
}

/// Window [15000, 60000] in 3 buckets of 15001 ns.
#[test]
fn curve_buckets_hand_computed() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "t.json", &kineto_mem(true));
    let curve = dir.path().join("curve.csv");
    let out = run(rprof()
        .args(["mem", "--curve-buckets", "3", "--curve"])
        .arg(&curve)
        .arg(&p));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&curve).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "device_type,device,start_ns,end_ns,allocated_bytes,max_allocated_bytes,total_allocated_bytes,total_reserved_bytes",
            "cuda,0,15000,30001,1024,1024,1024,2097152",
            "cuda,0,30001,45002,4096,5120,4096,2097152",
            "cuda,0,45002,60003,4096,4096,4096,2097152",
            "cpu,-1,15000,30001,0,0,,",
            "cpu,-1,30001,45002,0,0,,",
            "cpu,-1,45002,60003,8,8,,",
        ]
    );
}

#[test]
fn bad_input() {
    let dir = tempfile::tempdir().unwrap();
    // no memory events: said so, copies still reported
    let p = write(
        dir.path(),
        "nomem.json",
        r#"{"traceEvents":[{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":1,"dur":1,"args":{"bytes":1000}}]}"#,
    );
    let v = json_of(&p);
    assert!(v["notes"].to_string().contains("no memory events"));
    assert_eq!(v["copies"][0]["kind"], "DtoH");
    // truncated JSON: one line naming the file, exit 1
    let bad = write(dir.path(), "bad.json", r#"{"traceEvents":[{"ph":"i","#);
    let out = run(rprof().arg("mem").arg(&bad));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.json"), "{err}");
    // a record file has no memory data: refused with one line
    let out = run(rprof()
        .arg("mem")
        .arg(crate::util::fixture("profiling-lm/net.dict")));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("net.dict: a record file"), "{err}");
    // usage errors: exit 2
    let out = run(rprof().args(["mem", "--curve-buckets", "0"]).arg(&p));
    assert_eq!(out.status.code(), Some(2));
    let out = run(rprof().args(["mem", "--section", "nope"]).arg(&p));
    assert_eq!(out.status.code(), Some(2));
    // mistyped memory events are counted, not fatal; control characters in
    // op names are escaped in the table
    let p = write(
        dir.path(),
        "odd.json",
        r#"{"traceEvents":[
  {"ph":"X","cat":"cpu_op","name":"op\u001b[31m","pid":1,"tid":1,"ts":10,"dur":10,"args":{}},
  {"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":12,"args":{"Device Type":1,"Device Id":0,"Bytes":"many"}},
  {"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":13,"args":{"Device Type":1,"Device Id":0,"Bytes":64}}
]}"#,
    );
    let out = run(rprof().arg("mem").arg(&p));
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("1 memory events (1 skipped"), "{table}");
    assert!(!table.contains('\u{1b}'), "{table}");
    assert!(table.contains("op\\x1b[31m"), "{table}");
}

/// Copies and sets per kind of every nsys and nvprof file of the corpus
/// against SQL sums over the tables. Reads ../shared: skipped when absent.
#[test]
fn corpus_copies_match_sql() {
    let corpus = corpus_or_skip!();
    let mut files = Vec::new();
    let mut stack = vec![corpus];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("sqlite" | "sql" | "prof")
            ) && !p.to_string_lossy().contains("dlprof_dldb")
            {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 15, "{files:?}");
    let mut checked = 0;
    for f in &files {
        let expect = sql_copies(f);
        let v = json_of(f);
        let mut got: BTreeMap<String, (i64, i64, i64, i64, i64)> = BTreeMap::new();
        for c in v["copies"].as_array().unwrap() {
            got.insert(
                c["kind"].as_str().unwrap().to_owned(),
                (
                    c["count"].as_i64().unwrap(),
                    c["total_ns"].as_i64().unwrap(),
                    c["bytes"].as_i64().unwrap(),
                    c["min_ns"].as_i64().unwrap(),
                    c["max_ns"].as_i64().unwrap(),
                ),
            );
        }
        assert_eq!(got, expect, "{}", f.display());
        checked += usize::from(!expect.is_empty());
    }
    assert!(checked >= 10, "{checked}");
}

/// (count, Σ duration, Σ bytes, min, max) per kind, by SQL.
fn sql_copies(path: &Path) -> BTreeMap<String, (i64, i64, i64, i64, i64)> {
    let db =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let has = |t: &str| {
        db.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [t],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            > 0
    };
    let mut out = BTreeMap::new();
    let d = "max(\"end\" - start, 0)";
    let label = |k: i64| match k {
        1 | 11 => "HtoD",
        2 | 12 => "DtoH",
        3 => "HtoA",
        4 => "AtoH",
        5 => "AtoA",
        6 => "AtoD",
        7 => "DtoA",
        8 | 13 => "DtoD",
        9 => "HtoH",
        10 => "PtoP",
        _ => "other",
    };
    for t in ["CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMCPY2"] {
        if !has(t) {
            continue;
        }
        let sql = format!(
            "SELECT copyKind, count(*), sum({d}), sum(bytes), min({d}), max({d}) FROM {t} WHERE start IS NOT NULL AND \"end\" IS NOT NULL GROUP BY copyKind"
        );
        let mut st = db.prepare(&sql).unwrap();
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, Option<i64>>(0)?.unwrap_or(0),
                    (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?),
                ))
            })
            .unwrap();
        for row in rows {
            let (k, x): (i64, (i64, i64, i64, i64, i64)) = row.unwrap();
            let e = out
                .entry(label(k).to_owned())
                .or_insert((0, 0, 0, i64::MAX, i64::MIN));
            *e = (e.0 + x.0, e.1 + x.1, e.2 + x.2, e.3.min(x.3), e.4.max(x.4));
        }
    }
    if has("CUPTI_ACTIVITY_KIND_MEMSET") {
        let sql = format!(
            "SELECT count(*), sum({d}), sum(bytes), min({d}), max({d}) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE start IS NOT NULL AND \"end\" IS NOT NULL"
        );
        let x: (i64, Option<i64>, Option<i64>, Option<i64>, Option<i64>) = db
            .query_row(&sql, [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap();
        if x.0 > 0 {
            out.insert(
                "memset".to_owned(),
                (
                    x.0,
                    x.1.unwrap_or(0),
                    x.2.unwrap_or(0),
                    x.3.unwrap_or(0),
                    x.4.unwrap_or(0),
                ),
            );
        }
    }
    out
}

/// The 2021 ResNet-50 trace of the TensorBoard plugin: allocations per
/// device and the copies, against a plain recount of its events. Reads
/// ../shared: skipped when absent.
#[test]
fn tbplugin_resnet50_recount() {
    let corpus = corpus_or_skip!();
    let dir = corpus.join("kineto-tbplugin");
    let Some(path) = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".json.gz"))
    else {
        panic!("no trace in {}", dir.display());
    };
    let f = std::fs::File::open(&path).unwrap();
    let doc: Value = serde_json::from_reader(flate2::read::GzDecoder::new(f)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    // (device type, id) → (allocs, frees, alloc bytes, freed bytes, peak)
    let mut mem: Vec<(i64, i64, i64)> = events
        .iter()
        .filter(|e| e["name"] == "[memory]")
        .map(|e| {
            (
                e["ts"].as_i64().unwrap(),
                e["args"]["Device Type"].as_i64().unwrap(),
                e["args"]["Bytes"].as_i64().unwrap(),
            )
        })
        .collect();
    mem.sort_by_key(|m| m.0); // stable: file order within a microsecond
    let mut per: BTreeMap<i64, (i64, i64, i64, i64, i64, i64)> = BTreeMap::new();
    for (_, t, b) in &mem {
        let e = per.entry(*t).or_insert((0, 0, 0, 0, 0, i64::MIN));
        if *b >= 0 {
            e.0 += 1;
            e.2 += b;
        } else {
            e.1 += 1;
            e.3 -= b;
        }
        e.4 += b;
        e.5 = e.5.max(e.4);
    }
    let v = json_of(&path);
    assert_eq!(v["events"].as_u64().unwrap() as usize, mem.len());
    for d in v["devices"].as_array().unwrap() {
        let t = if d["device_type"] == "cuda" { 1 } else { 0 };
        let e = per[&t];
        assert_eq!(d["allocs"], e.0);
        assert_eq!(d["frees"], e.1);
        assert_eq!(d["alloc_bytes"], e.2);
        assert_eq!(d["freed_bytes"], e.3);
        assert_eq!(d["net_bytes"], e.4);
        assert_eq!(d["peak_in_window_bytes"], e.5);
        assert_eq!(d["peak_total_allocated_bytes"], Value::Null);
    }
    assert_eq!(v["devices"].as_array().unwrap().len(), per.len());
    // copies: count and Σ bytes per name
    let mut copies: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    for e in events {
        let kind = match e["cat"].as_str() {
            Some("Memcpy") => "HtoD",
            Some("Memset") => "memset",
            _ => continue,
        };
        assert!(kind == "memset" || e["name"].as_str().unwrap().contains("HtoD"));
        let c = copies.entry(kind).or_insert((0, 0));
        c.0 += 1;
        c.1 += e["args"]["bytes"].as_i64().unwrap();
    }
    for c in v["copies"].as_array().unwrap() {
        let e = copies[c["kind"].as_str().unwrap()];
        assert_eq!(
            (c["count"].as_i64().unwrap(), c["bytes"].as_i64().unwrap()),
            e
        );
    }
    // all 12 copies are cudaMemcpyAsync from pageable memory
    assert_eq!(v["flags"][0]["rule"], "async_pageable");
    assert_eq!(v["flags"][0]["count"], copies["HtoD"].0);
}

/// `summary` completes GPU time with the copies and sets of a profile:
/// kernel 1000 ns; copies 100 + 25 + 400 + 0 = 525 ns; sets 10 + 100 = 110
/// ns; 1635 ns in all.
#[test]
fn summary_counts_copies_and_sets() {
    let dir = tempfile::tempdir().unwrap();
    let p = mem_trace(dir.path());
    let p = p.to_str().unwrap();
    let j: Value = serde_json::from_str(&stdout_of(&["summary", "-q", "--json", p])).unwrap();
    let g = &j["gpu_time"];
    assert_eq!(g["kernel_ns"], 1000);
    assert_eq!(g["memcpy_ns"], 525);
    assert_eq!(g["memset_ns"], 110);
    assert_eq!(g["total_ns"], 1635);
    assert!((g["kernel_pct"].as_f64().unwrap() - 100_000.0 / 1635.0).abs() < 1e-9);
    let keys: Vec<&str> = g["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["DtoH", "HtoD", "memset", "DtoD"]);
    assert_eq!(g["rows"][1]["count"], 2);
    assert_eq!(g["rows"][1]["bytes"], 1500);
    let csv = stdout_of(&["summary", "-q", "--csv", "--copies", p]);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].ends_with(",gbs,kind"), "{csv}");
    assert!(
        lines[1].starts_with("k,1,1000,") && lines[1].ends_with(",kernel"),
        "{csv}"
    );
    assert!(
        lines[2].starts_with("DtoH,1,400,400,400,0,400,400,40,,0,2000,1,,5,memcpy"),
        "{csv}"
    );
    assert!(lines[4].starts_with("memset,2,110,55,"), "{csv}");
    assert_eq!(lines.len(), 6);
    // without --copies the CSV has the kernel groups only
    let plain = stdout_of(&["summary", "-q", "--csv", p]);
    assert_eq!(plain.lines().count(), 2);
    let table = stdout_of(&["summary", "-q", p]);
    assert!(
        table.contains("GPU time with copies and sets: 1635 ns"),
        "{table}"
    );
    // gpu says that busy time leaves copies out
    let gpu = stdout_of(&["gpu", "-q", p]);
    assert!(gpu.contains("memory copies and sets do not count"), "{gpu}");
}

/// 300 nested ops around one allocation: only the innermost 256 count it,
/// and a note says so.
#[test]
fn deep_nesting_is_cut_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut ev: Vec<String> = (0..300)
        .map(|i| {
            format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"op{i}","pid":1,"tid":1,"ts":{i},"dur":{},"args":{{}}}}"#,
                1000 - 2 * i
            )
        })
        .collect();
    ev.push(r#"{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":500,"args":{"Device Type":1,"Device Id":0,"Bytes":64}}"#.to_owned());
    let p = write(
        dir.path(),
        "deep.json",
        &format!(r#"{{"traceEvents":[{}]}}"#, ev.join(",")),
    );
    let v = json_of(&p);
    let ops = v["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 256);
    assert_eq!(ops[0]["op"], "op299");
    assert_eq!(ops[0]["alloc_bytes"], 64);
    assert!(ops.iter().any(|o| o["op"] == "op44"));
    assert!(!ops.iter().any(|o| o["op"] == "op43"));
    assert!(
        v["notes"]
            .to_string()
            .contains("1 memory events are inside more than 256 nested ops")
    );
}

/// Memory-pool events (nsys): pool A created with 1000 B (0 used), pool B
/// created with 500 B (200 used), A trimmed to 600 B (100 used), B
/// destroyed. Summed sizes 1000, 1500, 1100, 600: peak 1500; used 0, 200,
/// 300, 100: peak 300. Device 2 has pool events only.
#[test]
fn nsys_memory_pools_hand_computed() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Synth::default();
    s.gpus.push(SynthGpu::a100());
    let p = dir.path().join("pools.sqlite");
    s.write_nsys(&p).unwrap();
    let ev = |start, address, op, size, utilized| SynthPoolEvent {
        start,
        device: 2,
        address,
        op,
        size,
        utilized,
    };
    MemRows {
        pools: vec![
            ev(100, 0xA000, 1, 1000, 0),
            ev(200, 0xB000, 1, 500, 200),
            ev(300, 0xA000, 3, 600, 100),
            ev(400, 0xB000, 2, 500, 200),
        ],
        usage_table: true,
        ..MemRows::default()
    }
    .add_to(&p)
    .unwrap();
    let v = json_of(&p);
    let d = &v["devices"][0];
    assert_eq!(
        (d["device_type"].as_str(), d["device"].as_i64()),
        (Some("cuda"), Some(2))
    );
    assert_eq!(d["pool_events"], 4);
    assert_eq!(d["peak_pool_size_bytes"], 1500);
    assert_eq!(d["peak_pool_utilized_bytes"], 300);
    assert_eq!(d["allocs"], 0);
    let table = stdout_of(&["mem", p.to_str().unwrap()]);
    assert!(table.contains("cuda 2: 4 memory-pool events; peak of the pools' summed size 1500 bytes, of their used part 300 bytes."), "{table}");
}
