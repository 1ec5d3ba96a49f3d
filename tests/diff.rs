//! `rprof diff`: hand-computed expectations on synthetic pairs (a key that
//! doubles, one that appears, one that vanishes, noise), a file against
//! itself, the exit status of `--fail-above`, record files, the corpus's
//! PyTorch-profiler traces, bad input.

use std::path::{Path, PathBuf};

use rprof_testkit::{Synth, SynthGpu, SynthKernel, SynthRange};
use serde_json::Value;

use crate::util::{rprof, run};

/// `name` of `dur` ns at `start`, launched 100 ns before by thread `tid`.
fn k(name: &str, start: i64, dur: i64, corr: i64, tid: u64) -> SynthKernel {
    let mut k = SynthKernel::new(name, start, start + dur, corr);
    k.tid = tid;
    k
}

/// Steps `ProfilerStep#1..=n` on thread 100 at [10 000·i, 10 000·i +
/// 9 000). Per step i (0-based), base: a 1000 ns, b 500 ns, c 300/310/290
/// ns; test: a 2000 ns, d 400 ns, c 300/290/310. Every kernel is launched
/// by another thread (300; b and d by 200), inside its step by time only,
/// as the backward pass's kernels are (and so the op models do not take
/// the step range for the op).
fn pair_trace(dir: &Path, name: &str, test: bool, steps: usize) -> PathBuf {
    let mut s = Synth::default();
    s.gpus.push(SynthGpu::a100());
    let noise = [0, 10, -10];
    let mut corr = 1;
    for i in 0..steps {
        let s0 = 10_000 * (i as i64 + 1);
        s.ranges.push(SynthRange::push(
            &format!("ProfilerStep#{}", i + 1),
            s0,
            s0 + 9_000,
        ));
        let mut add = |name: &str, at: i64, dur: i64, tid: u64| {
            s.kernels.push(k(name, s0 + at, dur, corr, tid));
            corr += 1;
        };
        if test {
            add("a", 1_000, 2_000, 300);
            add("d", 4_000, 400, 200);
            add("c", 5_000, 300 - noise[i % 3], 300);
        } else {
            add("a", 1_000, 1_000, 300);
            add("b", 3_000, 500, 200);
            add("c", 5_000, 300 + noise[i % 3], 300);
        }
    }
    let p = dir.join(name);
    s.write_nsys(&p).unwrap();
    p
}

fn diff_json(args: &[&str]) -> (Value, i32) {
    let out = run(rprof().args(["diff", "-q", "--json"]).args(args));
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 3,
        "rprof diff {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (serde_json::from_slice(&out.stdout).unwrap(), code)
}

fn rows_by_key(v: &Value) -> std::collections::HashMap<String, &Value> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["key"].as_str().unwrap().to_owned(), r))
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// By hand: base a 3000, b 1500, c 900 (5400 ns); test a 6000, d 1200, c
/// 900 (8100 ns); Δ 2700. a +3000 (+100 %, share 3000/2700 = 111.1 %),
/// b −1500 (−100 %, removed), d +1200 (added, no %), c 0. Per step a is
/// [1000]×3 vs [2000]×3: SciPy 1.17.1 `mannwhitneyu([1000]*3,
/// [2000]*3).pvalue` = 0.04685417760387376 (significant at 0.05), as for
/// b and d; c's per-step samples are the same values: p = 1.
#[test]
fn synthetic_pair_hand_computed() {
    let dir = tempfile::tempdir().unwrap();
    let base = pair_trace(dir.path(), "base.sqlite", false, 3);
    let test = pair_trace(dir.path(), "test.sqlite", true, 3);
    let (v, code) = diff_json(&["--by", "kernel", s(&base), s(&test)]);
    assert_eq!(code, 0);
    assert_eq!(v["by"], "kernel");
    let keys = crate::util::row_keys(&v);
    assert_eq!(keys, ["a", "b", "d", "c"]);
    let rows = rows_by_key(&v);
    let a = rows["a"];
    for (field, want) in [
        ("base_count", 3),
        ("test_count", 3),
        ("base_total_ns", 3000),
        ("test_total_ns", 6000),
        ("delta_ns", 3000),
    ] {
        assert_eq!(a[field], want, "{field}");
    }
    assert_eq!(a["delta_pct"], 100.0);
    assert!((a["share_of_delta_pct"].as_f64().unwrap() - 3000.0 / 27.0).abs() < 1e-9);
    assert_eq!(a["base_step_ns"], serde_json::json!([1000, 1000, 1000]));
    assert_eq!(a["test_step_ns"], serde_json::json!([2000, 2000, 2000]));
    let p = 0.04685417760387376;
    for key in ["a", "b", "d"] {
        assert!(
            (rows[key]["p_value"].as_f64().unwrap() - p).abs() < 1e-12,
            "{key}"
        );
        assert_eq!(rows[key]["significant"], true, "{key}");
    }
    // b runs on another thread than the step ranges: in its step by time
    assert_eq!(
        rows["b"]["base_step_ns"],
        serde_json::json!([500, 500, 500])
    );
    assert_eq!(rows["b"]["status"], "removed");
    assert_eq!(rows["b"]["delta_pct"], -100.0);
    assert_eq!(rows["d"]["status"], "added");
    assert_eq!(rows["d"]["delta_pct"], Value::Null);
    assert_eq!(rows["d"]["base_tflops"], Value::Null);
    assert_eq!(rows["c"]["delta_ns"], 0);
    assert_eq!(rows["c"]["p_value"], 1.0);
    assert_eq!(v["totals"]["base_total_ns"], 5400);
    assert_eq!(v["totals"]["test_total_ns"], 8100);
    assert_eq!(v["totals"]["delta_ns"], 2700);
    assert_eq!(v["base"]["steps"].as_array().unwrap().len(), 3);
    assert_eq!(v["significance"]["assessable"], true);
    assert_eq!(v["input_differences"], serde_json::json!([]));
    // whole run: step ranges 3 × 9000 ns each side; the span runs from the
    // first kernel start (11 000) to the last kernel end (base 35 290, test
    // 35 310); kernels never overlap, so busy = kernel time
    let fig = |name: &str| {
        v["run"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["figure"].as_str().unwrap().starts_with(name))
            .unwrap()
            .clone()
    };
    let st = fig("step time");
    assert_eq!(
        (st["base"].as_f64(), st["test"].as_f64()),
        (Some(27000.0), Some(27000.0))
    );
    assert_eq!(st["p_value"], 1.0);
    let span = fig("GPU span");
    assert_eq!(
        (span["base"].as_f64(), span["test"].as_f64()),
        (Some(24290.0), Some(24310.0))
    );
    let u = fig("utilization");
    assert!((u["base"].as_f64().unwrap() - 5400.0 / 24290.0 * 100.0).abs() < 1e-9);
    assert!((u["test"].as_f64().unwrap() - 8100.0 / 24310.0 * 100.0).abs() < 1e-9);
    let idle = fig("idle time");
    assert_eq!(idle["base"].as_f64(), Some(24290.0 - 5400.0));
    let comm = fig("communication time not");
    assert_eq!(comm["base"].as_f64(), Some(0.0));

    // the table: totals line and the same order
    let out = run(rprof().args(["diff", "-q", "--by", "kernel", s(&base), s(&test)]));
    assert!(out.status.success());
    let t = String::from_utf8(out.stdout).unwrap();
    let total = t
        .lines()
        .find(|l| l.starts_with("| Total (2 in both, 1 added, 1 removed)"))
        .unwrap_or_else(|| panic!("{t}"));
    let cells: Vec<&str> = total.split('|').map(str::trim).collect();
    assert_eq!(&cells[3..9], ["9", "9", "5400", "8100", "+2700", "+50.00"]);
    // the default key: op + direction + shapes; no op model here, so the
    // kernel name stands in for the op
    let (v, _) = diff_json(&[s(&base), s(&test)]);
    assert_eq!(v["by"], "op-dir-shape");
    assert_eq!(v["rows"][0]["key"], "kernel:a fprop", "{}", v["rows"]);
}

/// `--fail-above`: exit 3 when a significant key regressed beyond the
/// threshold (a: +100 %; d: new), 0 otherwise.
#[test]
fn fail_above_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let base = pair_trace(dir.path(), "base.sqlite", false, 3);
    let test = pair_trace(dir.path(), "test.sqlite", true, 3);
    let out = run(rprof().args([
        "diff",
        "-q",
        "--by",
        "kernel",
        "--fail-above",
        "50",
        s(&base),
        s(&test),
    ]));
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("2 key(s) regressed by more than 50 %"),
        "{err}"
    );
    // the other way round nothing got slower but c (0): exit 0
    let out = run(rprof().args([
        "diff",
        "-q",
        "--by",
        "kernel",
        "--fail-above",
        "0",
        s(&test),
        s(&base),
    ]));
    assert_eq!(out.status.code(), Some(3), "b is new in that direction");
    // c alone: base and test per step 300/310/290 vs 300/290/310: never
    let (v, code) = diff_json(&["--by", "kernel", "--fail-above", "0", s(&base), s(&base)]);
    assert_eq!(code, 0);
    assert_eq!(v["regressions"], serde_json::json!([]));
}

/// A file against itself: every Δ is 0, every p-value 1, nothing added
/// or removed, exit 0 even with `--fail-above 0`.
#[test]
fn file_against_itself() {
    let dir = tempfile::tempdir().unwrap();
    let base = pair_trace(dir.path(), "base.sqlite", false, 3);
    let (v, code) = diff_json(&["--fail-above", "0", s(&base), s(&base)]);
    assert_eq!(code, 0);
    for r in v["rows"].as_array().unwrap() {
        assert_eq!(r["delta_ns"], 0);
        assert_eq!(r["status"], "both");
        assert_eq!(r["p_value"], 1.0);
    }
    for r in v["run"].as_array().unwrap() {
        assert!(r["delta"].is_null() || r["delta"] == 0.0, "{r}");
    }
}

/// What the two reads say on standard error comes in the order of the
/// command line, whichever read ends first (they run at once for small
/// runs): here the base run is much larger, so its read ends last.
#[test]
fn reads_are_reported_in_command_line_order() {
    let dir = tempfile::tempdir().unwrap();
    let base = pair_trace(dir.path(), "big.sqlite", false, 1000);
    let test = pair_trace(dir.path(), "small.sqlite", true, 2);
    for _ in 0..3 {
        let out = run(rprof().args(["diff", s(&base), s(&test)]));
        assert_eq!(out.status.code(), Some(0));
        let err = String::from_utf8(out.stderr).unwrap();
        let at = |name: &str| {
            err.find(&format!("{name}: "))
                .unwrap_or_else(|| panic!("{name} not named: {err}"))
        };
        assert!(at("big.sqlite") < at("small.sqlite"), "{err}");
    }
}

/// One step per side: significance cannot be assessed, and says so; the
/// gate then goes by the difference alone.
#[test]
fn one_step_cannot_be_assessed() {
    let dir = tempfile::tempdir().unwrap();
    let base = pair_trace(dir.path(), "base.sqlite", false, 1);
    let test = pair_trace(dir.path(), "test.sqlite", true, 1);
    let out = run(rprof().args(["diff", "-q", "--fail-above", "10", s(&base), s(&test)]));
    assert_eq!(out.status.code(), Some(3));
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(
        t.contains("Significance: cannot be assessed: 1 base step(s) and 1 test step(s)"),
        "{t}"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("the difference alone decided"), "{err}");
    let (v, _) = diff_json(&[s(&base), s(&test)]);
    assert_eq!(v["rows"][0]["p_value"], Value::Null);
    assert_eq!(v["rows"][0]["significant"], Value::Null);
}

/// Records of `rprof parse` against the profile they came from: the same
/// keys and totals (record files carry no range times, so steps come from
/// the launching thread's ranges only: none here).
#[test]
fn record_file_against_profile() {
    let dir = tempfile::tempdir().unwrap();
    let base = pair_trace(dir.path(), "base.sqlite", false, 3);
    let dict = dir.path().join("base.dict");
    let out = run(rprof().args(["parse", "-q", "-o", s(&dict), s(&base)]));
    assert!(out.status.success());
    let (v, _) = diff_json(&["--by", "kernel", s(&dict), s(&base)]);
    for r in v["rows"].as_array().unwrap() {
        assert_eq!(r["delta_ns"], 0, "{r}");
    }
    assert_eq!(v["totals"]["base_total_ns"], 5400);
    let csv = run(rprof().args(["diff", "-q", "--csv", "--by", "kernel", s(&base), s(&dict)]));
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(
        csv.starts_with("key,status,base_count,test_count,base_total_ns,"),
        "{csv}"
    );
    assert!(
        csv.contains("\na,both,3,3,3000,3000,1000,1000,0,0,"),
        "{csv}"
    );
}

#[test]
fn bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let base = pair_trace(dir.path(), "base.sqlite", false, 1);
    let missing = dir.path().join("nope.sqlite");
    let out = run(rprof().args(["diff", "-q", s(&base), s(&missing)]));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("nope.sqlite"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"traceEvents\": [").unwrap();
    let out = run(rprof().args(["diff", "-q", s(&base), s(&junk)]));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("junk.json"));
    for args in [
        vec!["--step", "("],
        vec!["--alpha", "1.5"],
        vec!["--fail-above", "-1"],
        vec!["--by", "stream"],
    ] {
        let out = run(rprof().arg("diff").args(&args).args([s(&base), s(&base)]));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let out = run(rprof().args(["diff", "-", "-"]));
    assert_eq!(out.status.code(), Some(2));
}

/// ProfilerStep events and the summed kernel time of a Kineto trace,
/// read straight from its JSON (durations in µs).
fn kineto_facts(path: &Path) -> (usize, i128, usize) {
    let f = std::fs::File::open(path).unwrap();
    let v: Value = serde_json::from_reader(flate2::read::GzDecoder::new(f)).unwrap();
    let ev = v["traceEvents"].as_array().unwrap();
    let kernels: Vec<&Value> = ev
        .iter()
        .filter(|e| e["ph"] == "X" && (e["cat"] == "kernel" || e["cat"] == "Kernel"))
        .collect();
    let ns: i128 = kernels
        .iter()
        .map(|e| (e["dur"].as_f64().unwrap() * 1000.0).round() as i128)
        .sum();
    let steps = ev
        .iter()
        .filter(|e| {
            e["ph"] == "X"
                && e["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("ProfilerStep#"))
        })
        .count();
    (kernels.len(), ns, steps)
}

/// The corpus's PyTorch-profiler traces (reads ../shared; skipped when
/// absent): a trace against itself shows no difference; HTA's
/// trace_diff_control against the TensorBoard plugin's ResNet-50 run (two
/// different jobs) shows the inputs' differences at the top, totals equal
/// to each trace's summed kernel durations, and kernel and step counts
/// equal to the traces' own.
#[test]
fn corpus_kineto_traces() {
    let corpus = corpus_or_skip!();
    let control = corpus.join("kineto-hta/trace_diff_control.json.gz");
    let resnet = corpus
        .join("kineto-tbplugin/resnet50_num_workers_4_worker0.1623212756351.pt.trace.json.gz");
    let (v, code) = diff_json(&["--fail-above", "0", s(&control), s(&control)]);
    assert_eq!(code, 0);
    assert!(
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["delta_ns"] == 0)
    );
    let (kc, nsc, stc) = kineto_facts(&control);
    let (kr, nsr, str_) = kineto_facts(&resnet);
    let (v, _) = diff_json(&["--by", "op", s(&control), s(&resnet)]);
    assert_eq!(v["base"]["kernels"], kc as u64);
    assert_eq!(v["test"]["kernels"], kr as u64);
    assert_eq!(v["totals"]["base_total_ns"].as_i64().unwrap() as i128, nsc);
    assert_eq!(v["totals"]["test_total_ns"].as_i64().unwrap() as i128, nsr);
    assert_eq!(v["base"]["steps"].as_array().unwrap().len(), stc);
    assert_eq!(v["test"]["steps"].as_array().unwrap().len(), str_);
    let rows = v["rows"].as_array().unwrap();
    let sum = |f: &str| {
        rows.iter()
            .map(|r| r[f].as_i64().unwrap() as i128)
            .sum::<i128>()
    };
    assert_eq!((sum("base_total_ns"), sum("test_total_ns")), (nsc, nsr));
    let diffs = v["input_differences"].as_array().unwrap();
    assert!(
        diffs
            .iter()
            .any(|d| d.as_str().unwrap().starts_with("devices differ")),
        "{diffs:?}"
    );
    assert!(
        diffs
            .iter()
            .any(|d| d.as_str().unwrap().starts_with("ranks differ")),
        "{diffs:?}"
    );
    // sorted by |Δ|, largest first
    let deltas: Vec<i128> = rows
        .iter()
        .map(|r| (r["delta_ns"].as_i64().unwrap() as i128).abs())
        .collect();
    assert!(deltas.windows(2).all(|w| w[0] >= w[1]));
    // the ResNet run has convolutions with FLOPs: TFLOP/s on the test side
    let conv = rows.iter().find(|r| r["key"] == "conv2d").unwrap();
    assert!(conv["test_tflops"].as_f64().unwrap() > 0.0);
    assert_eq!(conv["status"], "added");
}

/// A PyTorch-profiler trace with one `aten::mm` of [64, 256] × [256, 128]
/// fp32 whose kernel takes `dur_us` µs.
fn mm_trace(dir: &Path, name: &str, dur_us: u32) -> PathBuf {
    let json = format!(
        r#"{{"traceEvents":[
{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":10,"dur":100,"args":{{"Input Dims":[[64,256],[256,128]],"Input type":["float","float"]}}}},
{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":20,"dur":5,"args":{{"correlation":9}}}},
{{"ph":"X","cat":"kernel","name":"gemm_kernel","pid":0,"tid":7,"ts":200,"dur":{dur_us},"args":{{"device":0,"stream":7,"correlation":9,"grid":[64,1,1],"block":[128,1,1]}}}}
]}}"#
    );
    let p = dir.join(name);
    std::fs::write(&p, json).unwrap();
    p
}

/// The op models' FLOPs and bytes reach the rows, by hand: an M×K · K×N
/// GEMM is 2·M·N·K = 2·64·128·256 = 4 194 304 FLOPs and moves (M·K + K·N +
/// M·N)·4 = (16 384 + 32 768 + 8 192)·4 = 229 376 bytes; in 4000 ns that is
/// 1.048576 TFLOP/s and 57.344 GB/s, in 8000 ns half of each. One run of
/// each has no steps: significance cannot be assessed.
#[test]
fn flop_rates_per_side() {
    let dir = tempfile::tempdir().unwrap();
    let base = mm_trace(dir.path(), "base.json", 4);
    let test = mm_trace(dir.path(), "test.json", 8);
    let (v, _) = diff_json(&[s(&base), s(&test)]);
    let r = &v["rows"][0];
    assert_eq!(r["key"], "mm fprop M=128,N=64,K=256,fp32");
    assert_eq!(
        (r["base_total_ns"].as_i64(), r["test_total_ns"].as_i64()),
        (Some(4000), Some(8000))
    );
    let close = |x: &Value, want: f64| (x.as_f64().unwrap() - want).abs() < 1e-9;
    assert!(close(&r["base_tflops"], 1.048576), "{r}");
    assert!(close(&r["test_tflops"], 0.524288), "{r}");
    assert!(close(&r["base_gbs"], 57.344), "{r}");
    assert!(close(&r["test_gbs"], 28.672), "{r}");
    assert_eq!(r["p_value"], Value::Null);
    assert_eq!(v["significance"]["assessable"], false);
}

/// An NVTX `train_step` range per iteration (same text each time): one
/// step per occurrence, in time order, with `--step`.
#[test]
fn repeated_step_text_is_one_step_per_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let mut sy = Synth::default();
    sy.gpus.push(SynthGpu::a100());
    for (i, dur) in [100, 200, 300].into_iter().enumerate() {
        let s0 = 10_000 * (i as i64 + 1);
        sy.ranges
            .push(SynthRange::push("train_step", s0, s0 + 9_000));
        sy.kernels.push(k("a", s0 + 1_000, dur, i as i64 + 1, 300));
    }
    let p = dir.path().join("steps.sqlite");
    sy.write_nsys(&p).unwrap();
    let (v, _) = diff_json(&["--by", "kernel", "--step", "^train_step$", s(&p), s(&p)]);
    assert_eq!(
        v["base"]["steps"],
        serde_json::json!(["train_step", "train_step #2", "train_step #3"])
    );
    assert_eq!(
        v["rows"][0]["base_step_ns"],
        serde_json::json!([100, 200, 300])
    );
    // 3 steps each, the same values: p = 1
    assert_eq!(v["rows"][0]["p_value"], 1.0);
    let st = v["run"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["figure"].as_str().unwrap().starts_with("step time"))
        .unwrap()
        .clone();
    assert_eq!(st["base"].as_f64(), Some(27_000.0));
}
