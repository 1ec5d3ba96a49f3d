//! PyTorch profiler (Kineto) traces as input: the corpus traces and small
//! hand-written ones for the edge cases.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{rprof, run};

fn records(path: &Path) -> (Vec<Value>, String) {
    let out = run(rprof().args(["parse"]).arg(path));
    assert!(
        out.status.success(),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    (
        crate::records::assert_one_schema(&text),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn write(dir: &tempfile::TempDir, name: &str, json: &str, gzip: bool) -> PathBuf {
    let p = dir.path().join(name);
    let f = std::fs::File::create(&p).unwrap();
    if gzip {
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        gz.write_all(json.as_bytes()).unwrap();
        gz.finish().unwrap();
    } else {
        let mut f = f;
        f.write_all(json.as_bytes()).unwrap();
    }
    p
}

/// Kernel events in the corpus traces, counted independently of rprof.
fn kernel_events(path: &Path) -> usize {
    let f = std::fs::File::open(path).unwrap();
    let v: Value = serde_json::from_reader(flate2::read::GzDecoder::new(f)).unwrap();
    v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && (e["cat"] == "kernel" || e["cat"] == "Kernel"))
        .count()
}

/// The four HTA traces (2022–2024 Kineto): one record per kernel event,
/// joined to their launch calls and enclosing CPU operators. Reads
/// ../shared: skipped when absent.
#[test]
fn corpus_traces_one_record_per_kernel() {
    let corpus = corpus_or_skip!();
    let dir = corpus.join("kineto-hta");
    let mut total = 0;
    for name in [
        "alexnet_benchmark_trace.json.gz",
        "negative_queue_rank0.json.gz",
        "trace_diff_control.json.gz",
        "triton_example.json.gz",
    ] {
        let path = dir.join(name);
        let (recs, err) = records(&path);
        assert_eq!(recs.len(), kernel_events(&path), "{name}");
        assert!(err.contains("kernel rows"), "{err}");
        total += recs.len();
        // kernel args the profiler recorded are carried over
        assert!(
            recs.iter()
                .all(|r| r["regs"].is_i64() || r["regs"].is_null())
        );
        let with_op = recs
            .iter()
            .filter(|r| !r["stack"].as_array().is_none_or(Vec::is_empty))
            .count();
        assert!(
            with_op * 2 > recs.len(),
            "{name}: only {with_op} kernels inside an operator"
        );
    }
    assert_eq!(total, 79 + 6080 + 8568 + 1);
}

/// Input Dims and Input type become the operator's sizes and dtypes.
#[test]
fn corpus_shapes_and_dtypes_reach_the_records() {
    let corpus = corpus_or_skip!();
    let (recs, _) = records(&corpus.join("kineto-hta/trace_diff_control.json.gz"));
    let with_sizes = recs
        .iter()
        .filter(|r| {
            r["stack"].as_array().is_some_and(|s| {
                s.iter().any(|t| {
                    t.as_str()
                        .is_some_and(|t| t.contains(", sizes = ") && t.contains(", dtypes = ['"))
                })
            })
        })
        .count();
    assert!(
        with_sizes * 10 > recs.len() * 9,
        "{with_sizes} of {}",
        recs.len()
    );
    // backward operators run on the autograd thread
    assert!(recs.iter().any(|r| r["dir"] == "bprop"));
    assert!(recs.iter().any(|r| r["dir"] == "fprop"));
    // occupancy figures of the profiler
    assert!(recs.iter().any(|r| r["kinetoOccupancy"].is_number()));
}

const SMALL: &str = r#"{"schemaVersion": 1,
 "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "numSms": 108, "computeMajor": 8, "computeMinor": 0,
   "maxThreadsPerMultiprocessor": 2048, "warpSize": 32, "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 167936}],
 "baseTimeNanoseconds": 1700000000000000000,
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 10, "tid": 11, "ts": 100.000, "dur": 50.000,
   "args": {"External id": 1, "Sequence number": 5, "Input Dims": [[32, 512], [1024, 512], [1024]], "Input type": ["c10::Half", "c10::Half", "c10::Half"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 10, "tid": 11, "ts": 101.500, "dur": 40.000,
   "args": {"External id": 2, "Sequence number": 6, "Input Dims": [[1024], [32, 512], [512, 1024], [], []], "Input type": ["c10::Half", "c10::Half", "c10::Half", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 110.250, "dur": 5.125,
   "args": {"External id": 2, "cbid": 211, "correlation": 77}},
  {"ph": "X", "cat": "kernel", "name": "ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x3_tn", "pid": 0, "tid": 7, "ts": 120.001, "dur": 30.999,
   "args": {"External id": 2, "device": 0, "context": 1, "stream": 7, "correlation": 77, "registers per thread": 230,
            "shared memory": 73728, "blocks per SM": 1.185185, "warps per SM": 4.740741, "grid": [32, 4, 1], "block": [128, 1, 1],
            "est. achieved occupancy %": 0}},
  {"ph": "X", "cat": "kernel", "name": "no_launch_kernel", "pid": 0, "tid": 7, "ts": 200, "dur": 2,
   "args": {"device": 0, "stream": 7, "correlation": 999}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 300, "dur": 1,
   "args": {"cbid": 211, "correlation": 78}},
  {"ph": "X", "cat": "kernel", "name": "outside_any_op", "pid": 0, "tid": 7, "ts": 305, "dur": 1,
   "args": {"device": 0, "stream": 7, "correlation": 78}},
  {"ph": "X", "cat": "kernel", "name": 12345, "pid": 0, "tid": 7, "ts": 400, "dur": 1, "args": {"correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "bad_time", "pid": 0, "tid": 7, "ts": "soon", "dur": 1, "args": {}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 90, "dur": 3,
   "args": {"device": 0, "stream": 7, "correlation": 70, "bytes": 4096}},
  {"ph": "f", "id": 77, "pid": 0, "tid": 7, "ts": 120.001, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "M", "name": "process_name", "pid": 10, "args": {"name": "python"}},
  "not an event",
  {"ph": "X", "cat": "kernel", "name": "last", "pid": 0, "tid": 7, "ts": 500, "dur": 1, "args": {"correlation": 79}}
 ]}"#;

/// Exact µs → ns, joins, kernels without launch or outside any operator
/// kept and counted, mistyped events skipped and counted; gzip and plain
/// JSON alike, detected from content (not the file name).
#[test]
fn small_trace_edge_cases() {
    let dir = tempfile::tempdir().unwrap();
    for (name, gz) in [
        ("t.json", false),
        ("t.json.gz", true),
        ("misnamed.sqlite", true),
        ("noext", false),
    ] {
        let p = write(&dir, name, SMALL, gz);
        let (recs, err) = records(&p);
        // 7 kernel events: 2 mistyped (a number as name, a text as time)
        assert_eq!(recs.len(), 4, "{name}");
        assert!(
            err.contains("6 kernel rows, 4 records, 2 kernels without a launch call"),
            "{name}: {err}"
        );
        assert!(
            err.contains("skipped 2 kernel rows with a missing or mistyped name or time"),
            "{err}"
        );
        assert!(
            err.contains("trace events with missing or mistyped fields were skipped"),
            "{err}"
        );
        let gemm = &recs[0];
        assert_eq!(gemm["kStart"], 120_001);
        assert_eq!(gemm["kDuration"], 30_999);
        assert_eq!(gemm["rStart"], 110_250);
        assert_eq!(gemm["rEnd"], 115_375);
        assert_eq!(gemm["grid"], serde_json::json!([32, 4, 1]));
        assert_eq!(gemm["regs"], 230);
        assert_eq!(gemm["deviceName"], "NVIDIA A100-SXM4-40GB");
        assert_eq!(gemm["kinetoOccupancy"], 0.0);
        assert_eq!(gemm["pid"], 10);
        assert_eq!(gemm["tid"], 11);
        assert_eq!(
            gemm["stack"],
            serde_json::json!([
                "aten::linear, seq = 5, op_id = 1, sizes = [[32, 512], [1024, 512], [1024]], dtypes = ['c10::Half', 'c10::Half', 'c10::Half']",
                "aten::addmm, seq = 6, op_id = 2, sizes = [[1024], [32, 512], [512, 1024], [], []], dtypes = ['c10::Half', 'c10::Half', 'c10::Half', 'Scalar', 'Scalar']"
            ])
        );
        assert_eq!(recs[1]["kShortName"], "no_launch_kernel");
        assert_eq!(recs[1]["launched"], false);
        assert_eq!(recs[2]["kShortName"], "outside_any_op");
        assert_eq!(recs[2]["stack"], serde_json::json!([]));
        assert_eq!(recs[3]["launched"], false);
    }
}

#[test]
fn truncated_and_malformed_traces_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cut = write(&dir, "cut.json.gz", &SMALL[..SMALL.len() / 2], true);
    let out = run(rprof().arg("parse").arg(&cut));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("cut.json.gz") && err.contains("truncated"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);

    let broken = write(
        &dir,
        "broken.json",
        "{\"traceEvents\": [ {\"ph\": \"X\",, } ]}",
        false,
    );
    let out = run(rprof().arg("parse").arg(&broken));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("broken.json") && err.contains("not a valid Kineto trace"),
        "{err}"
    );

    let other = write(&dir, "other.json", "{\"hello\": [1, 2, 3]}", false);
    let out = run(rprof().arg("parse").arg(&other));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not an Nsight Systems or nvprof profile")
    );

    let not_gzip = dir.path().join("bad.gz");
    std::fs::write(&not_gzip, [0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5]).unwrap();
    let out = run(rprof().arg("parse").arg(&not_gzip));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("bad.gz") && !err.contains("panicked"), "{err}");
}

/// Old (2021) Kineto spellings: `Kernel`, `Runtime`, `Operator`, `external id`.
#[test]
fn old_capitalised_categories() {
    let dir = tempfile::tempdir().unwrap();
    let json = r#"{"traceEvents": [
      {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1618000000000000, "dur": 100, "args": {"Input Dims": [[4, 8], [8, 2]], "Input type": ["float", "float"]}},
      {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1618000000000010, "dur": 5, "args": {"correlation": 3, "external id": 1}},
      {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_32x32_sliced1x4_nn", "pid": 0, "tid": "stream 7", "ts": 1618000000000020, "dur": 4, "args": {"correlation": 3, "external id": 1, "device": 0, "stream": 7}}
    ]}"#;
    let p = write(&dir, "old.json", json, false);
    let (recs, _) = records(&p);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["kStart"], 1_618_000_000_000_020_000i64);
    assert_eq!(
        recs[0]["stack"][0],
        "aten::mm, sizes = [[4, 8], [8, 2]], dtypes = ['float', 'float']"
    );
}

/// A record file and a Kineto trace are both JSON: `prof` tells them apart.
#[test]
fn prof_takes_kineto_traces() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "t.json", SMALL, false);
    let out = run(rprof().args(["prof", "-q", "-c", "idx,kernel,sil"]).arg(&p));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(text.contains("ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x3_tn 30999"));
}

/// A user annotation whose name looks like a stock marker's fields, and an
/// operator with shapes. Synthetic.
const LOOKALIKE: &str = r#"{"schemaVersion": 1,
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "LinearBackward0, seq = 3", "pid": 10, "tid": 11, "ts": 100, "dur": 50,
   "args": {"External id": 9}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 11, "ts": 101, "dur": 40,
   "args": {"External id": 10, "Sequence number": 4, "Input Dims": [[64, 128], [128, 256]], "Input type": ["float", "float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 110, "dur": 5,
   "args": {"External id": 10, "cbid": 211, "correlation": 77}},
  {"ph": "X", "cat": "kernel", "name": "sgemm_kernel", "pid": 0, "tid": 7, "ts": 120, "dur": 30,
   "args": {"External id": 10, "device": 0, "stream": 7, "correlation": 77, "grid": [8, 1, 1], "block": [128, 1, 1]}},
  {"ph": "X", "cat": "user_annotation", "name": "mark, seq = 8", "pid": 10, "tid": 11, "ts": 200, "dur": 50,
   "args": {"External id": 11}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 210, "dur": 5,
   "args": {"External id": 11, "cbid": 211, "correlation": 78}},
  {"ph": "X", "cat": "kernel", "name": "other_kernel", "pid": 0, "tid": 7, "ts": 220, "dur": 10,
   "args": {"External id": 11, "device": 0, "stream": 7, "correlation": 78, "grid": [1, 1, 1], "block": [32, 1, 1]}}
 ]}"#;

/// The profiler's operator fields reach the classification and the op
/// models as they are, not printed as marker text and parsed back: an
/// annotation named `LinearBackward0, seq = 3` is not a backward node (it
/// has no sequence number), and `mark, seq = 8` keeps its whole name. Read
/// back from the text, both would lose their `, seq = N` to the grammar.
#[test]
fn operator_fields_are_not_parsed_back_from_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(&dir, "t.json", LOOKALIKE, false);
    let (recs, _) = records(&p);
    assert_eq!(recs.len(), 2);
    // the sgemm runs inside aten::mm inside the annotation: forward
    assert_eq!(recs[0]["dir"], "fprop");
    assert_eq!(recs[1]["dir"], "fprop");
    assert_eq!(recs[1]["op"], serde_json::json!(["mark, seq = 8"]));
    // the names' lengths, counted by hand: 24, 8 and 13 bytes
    assert_eq!(recs[0]["stackNames"], serde_json::json!([24, 8]));
    assert_eq!(recs[1]["stackNames"], serde_json::json!([13]));

    // prof: aten::mm [64,128] x [128,256] is 2*64*128*256 FLOPs, by hand
    let out = run(rprof()
        .args(["prof", "-q", "-c", "idx,dir,op,flops"])
        .arg(&p));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows[0], format!("1 fprop mm {}", 2 * 64 * 128 * 256));

    // summary by range: one group per annotation's whole name
    let out = run(rprof()
        .args(["summary", "-q", "--by", "nvtx", "--json"])
        .arg(&p));
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = crate::util::row_keys(&v);
    assert_eq!(keys, ["aten::mm", "mark, seq = 8"]);

    // the host views name a launch's innermost operator the same way
    // (`launch`, by operator)
    let out = run(rprof().args(["launch", "-q", "--format", "json"]).arg(&p));
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ops = crate::util::texts_of(&v, "by_op", "name");
    assert_eq!(ops, ["aten::mm", "mark, seq = 8"]);

    // the record file (JSON Lines and Parquet) keeps the lengths: `prof`
    // on it prints what it prints on the trace
    let dict = dir.path().join("t.dict");
    let pq = dir.path().join("t.parquet");
    for (file, format) in [(&dict, "json"), (&pq, "parquet")] {
        let out = run(rprof()
            .args(["parse", "-q", "--format", format, "-o"])
            .arg(file)
            .arg(&p));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = run(rprof()
            .args(["prof", "-q", "-c", "idx,dir,op,flops"])
            .arg(file));
        assert!(out.status.success());
        assert_eq!(String::from_utf8(out.stdout).unwrap(), text, "{format}");
    }
}
