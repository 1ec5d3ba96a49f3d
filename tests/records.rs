//! Record files that load cleanly into data tools: one schema per file
//! (no header line, every key on every line, one JSON type per key), the
//! sidecar, version 1 files still read, Parquet with the same values.

use std::collections::BTreeMap;
use std::path::Path;

use arrow_array::{
    Array, BooleanArray, Float64Array, Int64Array, ListArray, StringArray, UInt64Array,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Value, json};

use crate::util::{fixture, rprof, run};

/// The JSON type of a value, telling integers from floats (what pandas,
/// Polars and DuckDB infer a column's type from).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int",
        Value::Number(_) => "float",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every line of `text` is a JSON object with the same keys in the same
/// order as the first, and each key holds one JSON type (or null) on every
/// line; arrays hold one element type. Returns the records.
pub fn assert_one_schema(text: &str) -> Vec<Value> {
    let mut keys: Option<Vec<String>> = None;
    let mut types: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut elems: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        let obj = v
            .as_object()
            .unwrap_or_else(|| panic!("line {}: not an object", n + 1));
        let these: Vec<String> = obj.keys().cloned().collect();
        match &keys {
            None => keys = Some(these),
            Some(k) => assert_eq!(k, &these, "line {}: other keys than line 1", n + 1),
        }
        for (k, x) in obj {
            let t = kind(x);
            if t != "null" {
                let prev = types.entry(k.clone()).or_insert(t);
                assert_eq!(*prev, t, "line {}: key {k} changes type", n + 1);
            }
            if let Value::Array(a) = x {
                for e in a {
                    let prev = elems.entry(k.clone()).or_insert(kind(e));
                    assert_eq!(*prev, kind(e), "line {}: {k} mixes element types", n + 1);
                }
            }
        }
        out.push(v);
    }
    out
}

fn stdout(args: &[&str]) -> String {
    let out = run(rprof().args(args));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every committed profile: one record per line, one schema; timestamps
/// above 2^53 are integers in the text (no float rounding on the way out).
#[test]
fn every_fixture_gives_one_schema() {
    for f in [
        "profiling-lm/net.sql",
        "nsys-ai/mfu_2gpu_before.sqlite",
        "flameox/nsight-2025.5.2.sqlite",
        "mordred/report1_2021.sqlite",
        "kineto/alexnet_benchmark_trace.json.gz",
    ] {
        let text = stdout(&["parse", "-q", fixture(f).to_str().unwrap()]);
        let recs = assert_one_schema(&text);
        assert!(!recs.is_empty(), "{f}");
        assert!(recs.iter().all(|r| r.get("rprof").is_none()), "{f}");
    }
    // the nsys export's clock is ns since boot or epoch: check an exact value
    let text = stdout(&[
        "parse",
        "-q",
        fixture("nsys-ai/mfu_2gpu_before.sqlite").to_str().unwrap(),
    ]);
    let first = text.lines().next().unwrap();
    let k_start: i64 = serde_json::from_str::<Value>(first).unwrap()["kStart"]
        .as_i64()
        .unwrap();
    assert!(first.contains(&format!("\"kStart\":{k_start},")));
}

/// `-o FILE` puts the profile's description in FILE.meta.json; the records
/// stay records only.
#[test]
fn sidecar_holds_source_and_devices() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("net.jsonl");
    let out = run(rprof()
        .args(["parse", "-q", "-o"])
        .arg(&o)
        .arg(fixture("profiling-lm/net.sql")));
    assert!(out.status.success());
    let side: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("net.jsonl.meta.json")).unwrap())
            .unwrap();
    assert_eq!(side["rprof"], "dict");
    assert_eq!(side["version"], 2);
    assert_eq!(side["source"], "nvprof");
    assert_eq!(side["devices"][0]["name"], "Tesla V100-SXM2-16GB");
    assert_eq!(side["devices"][0]["max_regs_per_sm"], 65536);
    assert_eq!(
        assert_one_schema(&std::fs::read_to_string(&o).unwrap()).len(),
        284
    );
}

/// A version 1 file (header line first) reads as before: prof and gpu
/// print the same as from the version 2 file and its sidecar.
#[test]
fn version_1_files_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = dir.path().join("v2.dict");
    assert!(
        run(rprof()
            .args(["parse", "-q", "-o"])
            .arg(&v2)
            .arg(fixture("profiling-lm/net.sql")))
        .status
        .success()
    );
    let side: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("v2.dict.meta.json")).unwrap())
            .unwrap();
    // the header line as version 1 wrote it: "rprof" first
    let header = format!(
        "{{\"rprof\":\"dict\",\"version\":1,\"source\":{},\"producer\":{},\"compat\":false,\"devices\":{}}}",
        side["source"], side["producer"], side["devices"]
    );
    let v1 = dir.path().join("v1.dict");
    std::fs::write(
        &v1,
        format!("{header}\n{}", std::fs::read_to_string(&v2).unwrap()),
    )
    .unwrap();
    for cmd in [
        &["prof", "-q", "-c", "all"][..],
        &["gpu", "-q"][..],
        &["summary", "-q"][..],
    ] {
        let a = stdout(&[cmd, &[v1.to_str().unwrap()]].concat());
        let b = stdout(&[cmd, &[v2.to_str().unwrap()]].concat());
        let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
        assert_eq!(body(&a), body(&b), "{cmd:?}");
    }
    let gpu = stdout(&["gpu", "-q", v1.to_str().unwrap()]);
    assert!(
        gpu.lines()
            .any(|l| l.contains("Tesla V100") && l.contains("| file ")),
        "{gpu}"
    );
}

/// Records piped without their sidecar: each record's deviceName, smCount
/// and compute capability still describe the GPU (limits from the cc table).
#[test]
fn piped_records_describe_their_gpu() {
    let text = stdout(&[
        "parse",
        "-q",
        fixture("profiling-lm/net.sql").to_str().unwrap(),
    ]);
    let gpu = stdin_to(&["gpu", "-q", "-"], text.as_bytes());
    let line = gpu.lines().find(|l| l.contains("Tesla V100")).unwrap();
    assert!(
        line.contains("|  80 | 7.0 | file cc + cc table |"),
        "{line}"
    );
}

/// Run rprof with `input` on standard input; its standard output.
pub fn stdin_to(args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = rprof()
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// One arrow cell as the JSON value the JSON Lines record holds.
fn cell(col: &dyn Array, i: usize) -> Value {
    if col.is_null(i) {
        return Value::Null;
    }
    let any = col.as_any();
    if let Some(a) = any.downcast_ref::<Int64Array>() {
        return json!(a.value(i));
    }
    if let Some(a) = any.downcast_ref::<UInt64Array>() {
        return json!(a.value(i));
    }
    if let Some(a) = any.downcast_ref::<Float64Array>() {
        return json!(a.value(i));
    }
    if let Some(a) = any.downcast_ref::<StringArray>() {
        return json!(a.value(i));
    }
    if let Some(a) = any.downcast_ref::<BooleanArray>() {
        return json!(a.value(i));
    }
    if let Some(a) = any.downcast_ref::<ListArray>() {
        let inner = a.value(i);
        return Value::Array((0..inner.len()).map(|j| cell(inner.as_ref(), j)).collect());
    }
    panic!("unexpected column type {:?}", col.data_type());
}

/// Read a Parquet file with the Rust reader: rows as JSON objects, and the
/// `rprof` metadata.
pub fn read_parquet(path: &Path) -> (Vec<BTreeMap<String, Value>>, BTreeMap<String, String>) {
    let f = std::fs::File::open(path).unwrap();
    let b = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    let meta: BTreeMap<String, String> = b
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|kv| Some((kv.key, kv.value?)))
        .collect();
    let mut rows = Vec::new();
    for batch in b.build().unwrap() {
        let batch = batch.unwrap();
        let schema = batch.schema();
        for i in 0..batch.num_rows() {
            rows.push(
                schema
                    .fields()
                    .iter()
                    .zip(batch.columns())
                    .map(|(f, c)| (f.name().clone(), cell(c.as_ref(), i)))
                    .collect(),
            );
        }
    }
    (rows, meta)
}

/// `parse --format parquet`: the same values as the JSON Lines records,
/// key by key, read back with the Rust parquet reader; the metadata holds
/// what the sidecar holds.
#[test]
fn parquet_round_trips_to_the_json_records() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "nsys-ai/mfu_2gpu_before.sqlite",
        "profiling-lm/net.sql",
        "kineto/alexnet_benchmark_trace.json.gz",
    ] {
        let json = dir.path().join("r.jsonl");
        let pq = dir.path().join("r.parquet");
        assert!(
            run(rprof()
                .args(["parse", "-q", "-o"])
                .arg(&json)
                .arg(fixture(f)))
            .status
            .success()
        );
        let out = run(rprof()
            .args(["parse", "-q", "--format", "parquet", "-o"])
            .arg(&pq)
            .arg(fixture(f)));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let recs = assert_one_schema(&std::fs::read_to_string(&json).unwrap());
        let (rows, meta) = read_parquet(&pq);
        assert_eq!(rows.len(), recs.len(), "{f}");
        for (n, (row, rec)) in rows.iter().zip(&recs).enumerate() {
            let obj = rec.as_object().unwrap();
            assert_eq!(
                row.keys().collect::<std::collections::BTreeSet<_>>(),
                obj.keys().collect::<std::collections::BTreeSet<_>>(),
                "{f}"
            );
            for (k, v) in obj {
                assert_eq!(&row[k], v, "{f}: record {} key {k}", n + 1);
            }
        }
        let side: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("r.jsonl.meta.json")).unwrap())
                .unwrap();
        let in_file: Value = serde_json::from_str(&meta["rprof"]).unwrap();
        assert_eq!(in_file, side, "{f}");
    }
}

/// Parquet to a terminal is refused; to a pipe it is a Parquet file.
#[test]
fn parquet_to_stdout_pipe() {
    let out = run(rprof()
        .args(["parse", "-q", "--format", "parquet"])
        .arg(fixture("flameox/nsight-2025.5.2.sqlite")));
    assert!(out.status.success());
    assert_eq!(&out.stdout[..4], b"PAR1");
    assert_eq!(&out.stdout[out.stdout.len() - 4..], b"PAR1");
}

/// Every line `rprof parse` writes, on the fixtures and (when ../shared is
/// there) the corpus's PyTorch-profiler and NVTX-heavy captures, is read by
/// the fast reader of our own lines, and it reads the record serde reads
/// (`--stack full` too, which writes every range's text).
#[test]
fn the_fast_reader_takes_every_written_line_and_reads_what_serde_reads() {
    let mut inputs = vec![
        fixture("nsys-ai/mfu_2gpu_before.sqlite"),
        fixture("kineto/alexnet_benchmark_trace.json.gz"),
        fixture("profiling-lm/net.sql"),
        fixture("mordred/report1_2021.sqlite"),
    ];
    if let Some(c) = crate::util::corpus() {
        for rel in [
            "kineto-tbplugin/resnet50_num_workers_4_worker0.1623212756351.pt.trace.json.gz",
            "kineto-hta/trace_diff_control.json.gz",
            "hta-nccl/nccl_data.json.gz",
            "mmagic_vsr_v2/net.sqlite",
        ] {
            inputs.push(c.join(rel));
        }
    }
    let mut lines = 0;
    for input in &inputs {
        for extra in [&[][..], &["--stack", "full"][..]] {
            let out = run(rprof().arg("parse").arg("-q").args(extra).arg(input));
            assert!(out.status.success(), "{}", input.display());
            let text = String::from_utf8(out.stdout).expect("utf-8");
            for (n, line) in text.lines().enumerate() {
                let fast = rprof_trace::model::Record::from_written_json(line);
                let serde: rprof_trace::model::Record<'_> = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{} line {}: {e}", input.display(), n + 1));
                assert_eq!(fast, Some(serde), "{} line {}", input.display(), n + 1);
                lines += 1;
            }
        }
    }
    assert!(lines > 1000, "{lines} lines");
}
