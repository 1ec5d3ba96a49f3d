//! `--format csv|tsv|json|parquet` and `-o` on every command that writes
//! data (stats, dist, mem, steps, idle, launch, diff): the Parquet file,
//! read back with the Rust parquet reader, holds the same values as the
//! command's CSV (parsed here with the csv crate), integers typed as
//! integers and unknowns as nulls; TSV lines have one field per column and
//! numeric columns parse; a closed pipe ends quietly; Parquet to a
//! terminal is refused.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use arrow_array::{
    Array, BooleanArray, Float64Array, Int64Array, ListArray, StringArray, UInt64Array,
};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::util::{fixture, rprof, run};

/// A Parquet file as its columns (name, type) and rows of cells written as
/// the CSV would write them (null: empty).
pub(crate) struct Pq {
    pub cols: Vec<(String, DataType)>,
    pub rows: Vec<Vec<Option<String>>>,
    pub meta: Vec<(String, String)>,
}

fn cell_text(col: &dyn Array, i: usize) -> Option<String> {
    if col.is_null(i) {
        return None;
    }
    let any = col.as_any();
    Some(if let Some(a) = any.downcast_ref::<Int64Array>() {
        a.value(i).to_string()
    } else if let Some(a) = any.downcast_ref::<UInt64Array>() {
        a.value(i).to_string()
    } else if let Some(a) = any.downcast_ref::<Float64Array>() {
        // compared as numbers by the caller
        format!("{:e}", a.value(i))
    } else if let Some(a) = any.downcast_ref::<StringArray>() {
        a.value(i).to_owned()
    } else if let Some(a) = any.downcast_ref::<BooleanArray>() {
        a.value(i).to_string()
    } else if let Some(a) = any.downcast_ref::<ListArray>() {
        let inner = a.value(i);
        let ints = inner.as_any().downcast_ref::<Int64Array>().unwrap();
        (0..ints.len())
            .map(|j| ints.value(j).to_string())
            .collect::<Vec<_>>()
            .join(";")
    } else {
        panic!("unexpected column type {:?}", col.data_type())
    })
}

pub(crate) fn read_pq(path: &Path) -> Pq {
    let f = std::fs::File::open(path).unwrap();
    let b = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    let meta = b
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|kv| Some((kv.key, kv.value?)))
        .collect();
    let cols = b
        .schema()
        .fields()
        .iter()
        .map(|f| {
            assert!(f.is_nullable(), "{}", f.name());
            (f.name().clone(), f.data_type().clone())
        })
        .collect();
    let mut rows = Vec::new();
    for batch in b.build().unwrap() {
        let batch = batch.unwrap();
        for i in 0..batch.num_rows() {
            rows.push(
                batch
                    .columns()
                    .iter()
                    .map(|c| cell_text(c.as_ref(), i))
                    .collect(),
            );
        }
    }
    Pq { cols, rows, meta }
}

/// Header and records of delimited text, read with the csv crate.
fn sv(text: &[u8], delimiter: u8) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .quoting(delimiter == b',')
        .from_reader(text);
    let head = r.headers().unwrap().iter().map(str::to_owned).collect();
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (head, rows)
}

fn ok(args: &[String]) -> Vec<u8> {
    let out = run(rprof().args(args));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// One command's table in CSV, TSV and Parquet: same columns, same rows
/// (less those `skip` drops), same values; returns the Parquet file.
fn agree(args: &[String], dir: &Path, skip: impl Fn(&[String]) -> bool) -> Pq {
    let with = |f: &[&str]| -> Vec<String> {
        let mut v = args.to_vec();
        v.extend(f.iter().map(|s| (*s).to_owned()));
        v
    };
    let (head, mut rows) = sv(&ok(&with(&["--format", "csv"])), b',');
    rows.retain(|r| !skip(r));
    // the shorthand is the same output
    if !args.iter().any(|a| a == "stats") {
        assert_eq!(ok(&with(&["--csv"])), ok(&with(&["--format", "csv"])));
    }
    let pq_path = dir.join(format!("t{}.parquet", rows.len() + head.len() * 1000));
    let _ = std::fs::remove_file(&pq_path);
    ok(&with(&[
        "--format",
        "parquet",
        "-o",
        pq_path.to_str().unwrap(),
    ]));
    let pq = read_pq(&pq_path);
    let names: Vec<&str> = pq.cols.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, head, "{args:?}");
    assert_eq!(pq.rows.len(), rows.len(), "{args:?}");
    for (r, (csv_row, pq_row)) in rows.iter().zip(&pq.rows).enumerate() {
        for (c, ((name, ty), (a, b))) in pq.cols.iter().zip(csv_row.iter().zip(pq_row)).enumerate()
        {
            let what = format!("{args:?} row {r} column {c} {name} ({ty:?})");
            match (a.as_str(), b) {
                ("", None) => {}
                ("na" | "-", None) => panic!("{what}: CSV writes {a:?} for unknown"),
                (_, None) => panic!("{what}: {a:?} became null"),
                (_, Some(b)) => match ty {
                    DataType::Float64 => {
                        let x: f64 = a.parse().unwrap_or_else(|_| panic!("{what}: {a:?}"));
                        let y: f64 = b.parse().unwrap();
                        assert_eq!(x, y, "{what}");
                    }
                    DataType::Int64 | DataType::UInt64 => {
                        assert_eq!(a.parse::<i128>().ok(), b.parse::<i128>().ok(), "{what}");
                        assert_eq!(a, b, "{what}");
                    }
                    _ => assert_eq!(a, b, "{what}"),
                },
            }
        }
    }
    // TSV: the same header, one field per column on every line, numbers
    // where Parquet has numbers
    let tsv = ok(&with(&["--format", "tsv"]));
    let text = String::from_utf8(tsv.clone()).unwrap();
    for (i, line) in text.lines().enumerate() {
        assert_eq!(
            line.split('\t').count(),
            head.len(),
            "{args:?} TSV line {i}: {line:?}"
        );
    }
    let (thead, trows) = sv(&tsv, b'\t');
    assert_eq!(thead, head);
    assert_eq!(trows.len(), rows.len(), "{args:?} TSV rows");
    for (r, row) in trows.iter().enumerate() {
        for ((name, ty), cell) in pq.cols.iter().zip(row) {
            if cell.is_empty() {
                continue;
            }
            match ty {
                DataType::Int64 => assert!(cell.parse::<i64>().is_ok(), "{name} {r}: {cell:?}"),
                DataType::UInt64 => assert!(cell.parse::<u64>().is_ok(), "{name} {r}: {cell:?}"),
                DataType::Float64 => assert!(cell.parse::<f64>().is_ok(), "{name} {r}: {cell:?}"),
                _ => {}
            }
        }
    }
    pq
}

fn ty<'p>(pq: &'p Pq, col: &str) -> &'p DataType {
    &pq.cols
        .iter()
        .find(|(n, _)| n == col)
        .unwrap_or_else(|| panic!("no column {col}"))
        .1
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

struct Inputs {
    _dir: tempfile::TempDir,
    out: PathBuf,
    host: PathBuf,
    mem: PathBuf,
}

fn inputs() -> Inputs {
    let dir = tempfile::tempdir().unwrap();
    let host = crate::hostviews::nsys_trace(dir.path());
    let mem = crate::mem::mem_trace(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    Inputs {
        _dir: dir,
        out,
        host,
        mem,
    }
}

#[test]
fn steps_idle_launch() {
    let i = inputs();
    let host = p(&i.host);
    let pq = agree(
        &s(&["steps", "-q", "--step", "^iteration", host]),
        &i.out,
        |r| r[0] == "mean" && r[1].is_empty(),
    );
    assert_eq!(pq.rows.len(), 3);
    assert_eq!(ty(&pq, "total_ns"), &DataType::Int64);
    assert_eq!(ty(&pq, "kernel_ns"), &DataType::Int64);
    assert_eq!(ty(&pq, "gpu_util"), &DataType::Float64);
    assert_eq!(ty(&pq, "outlier"), &DataType::Boolean);
    assert!(pq.meta.contains(&("rprof.report".into(), "steps".into())));
    let pq = agree(&s(&["idle", "-q", host]), &i.out, |_| false);
    assert_eq!(ty(&pq, "idle_ns"), &DataType::Int64);
    assert_eq!(ty(&pq, "idle_share_of_span"), &DataType::Float64);
    for t in ["kernels", "ops", "queues", "launch-bound", "each"] {
        let pq = agree(&s(&["launch", "-q", "--table", t, host]), &i.out, |_| false);
        assert!(!pq.cols.is_empty(), "{t}");
        if t == "each" {
            assert_eq!(pq.rows.len(), 4);
            assert_eq!(ty(&pq, "latency_ns"), &DataType::Int64);
            assert_eq!(ty(&pq, "start_ns"), &DataType::Int64);
        }
    }
}

#[test]
fn mem_every_table() {
    let i = inputs();
    for t in ["devices", "ops", "copies", "alive", "flags", "curve"] {
        let pq = agree(
            &s(&["mem", "--table", t, "--curve-buckets", "4", p(&i.mem)]),
            &i.out,
            |_| false,
        );
        assert!(!pq.rows.is_empty(), "{t}");
        match t {
            "devices" => {
                assert_eq!(ty(&pq, "peak_in_window_bytes"), &DataType::Int64);
                // nsys has no allocator totals: null, typed
                assert_eq!(ty(&pq, "peak_total_reserved_bytes"), &DataType::Int64);
            }
            "alive" => assert_eq!(ty(&pq, "addr"), &DataType::UInt64),
            "copies" => assert_eq!(ty(&pq, "total_ns"), &DataType::Int64),
            "curve" => assert_eq!(pq.rows.len(), 8),
            _ => {}
        }
    }
    // the old name of --table still works
    let a = ok(&s(&["mem", "--csv", "--section", "ops", p(&i.mem)]));
    let b = ok(&s(&["mem", "--csv", "--table", "ops", p(&i.mem)]));
    assert_eq!(a, b);
}

#[test]
fn dist_every_table() {
    let i = inputs();
    let job = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    for t in ["ranks", "collectives", "steps"] {
        let pq = agree(&s(&["dist", "-q", "--table", t, p(&job)]), &i.out, |_| {
            false
        });
        if t == "ranks" {
            assert_eq!(pq.rows.len(), 2);
            assert_eq!(ty(&pq, "busy_ns"), &DataType::Int64);
            assert_eq!(ty(&pq, "busy_pct"), &DataType::Float64);
        }
    }
}

#[test]
fn diff_keys() {
    let i = inputs();
    let a = fixture("flameox/nsight-2025.5.2.sqlite");
    let b = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    // keys in one run only: nulls, typed
    let pq = agree(&s(&["diff", "-q", p(&a), p(&b)]), &i.out, |_| false);
    assert_eq!(ty(&pq, "base_total_ns"), &DataType::Int64);
    assert_eq!(ty(&pq, "base_mean_ns"), &DataType::Float64);
    assert!(pq.rows.iter().any(|r| r[6].is_none()), "a null mean");
    // steps on both sides: lists of per-step ns
    let pq = agree(
        &s(&["diff", "-q", "--step", "^iteration", p(&i.host), p(&i.host)]),
        &i.out,
        |_| false,
    );
    assert!(matches!(ty(&pq, "base_step_ns"), DataType::List(_)));
    assert_eq!(ty(&pq, "significant"), &DataType::Boolean);
    let steps = pq
        .cols
        .iter()
        .position(|(n, _)| n == "base_step_ns")
        .unwrap();
    assert!(
        pq.rows
            .iter()
            .all(|r| r[steps].as_deref().unwrap().split(';').count() == 3)
    );
}

#[test]
fn stats_one_report() {
    let i = inputs();
    let f = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    for (r, unit) in [
        ("cuda_gpu_kern_sum", "ns"),
        ("cuda_api_sum", "us"),
        ("cuda_gpu_trace", "ns"),
        ("nvtx_sum", "ms"),
    ] {
        let pq = agree(
            &s(&["stats", "-q", "-r", r, "--timeunit", unit, p(&f)]),
            &i.out,
            |_| false,
        );
        assert!(!pq.rows.is_empty(), "{r}");
        let total = format!("Total Time ({unit})");
        if let Some((_, t)) = pq.cols.iter().find(|(n, _)| *n == total) {
            let want = if unit == "ns" {
                DataType::Int64
            } else {
                DataType::Float64
            };
            assert_eq!(t, &want, "{r}");
        }
        if let Some((_, t)) = pq.cols.iter().find(|(n, _)| n == "Time (%)") {
            assert_eq!(t, &DataType::Float64, "{r}");
        }
        // the JSON's rows hold the same numbers
        let json: serde_json::Value = serde_json::from_slice(&ok(&s(&[
            "stats",
            "-q",
            "-r",
            r,
            "--timeunit",
            unit,
            "--json",
            p(&f),
        ])))
        .unwrap();
        let rows = json.as_array().unwrap();
        assert_eq!(rows.len(), pq.rows.len());
        for (j, pr) in rows.iter().zip(&pq.rows) {
            for ((name, t), cell) in pq.cols.iter().zip(pr) {
                let v = &j[name];
                match (cell, t) {
                    (None, _) => assert!(v.is_null(), "{r} {name}"),
                    (Some(c), DataType::Int64) => {
                        assert_eq!(v.as_i64(), Some(c.parse().unwrap()), "{r} {name}")
                    }
                    (Some(c), DataType::Float64) => {
                        assert_eq!(v.as_f64(), Some(c.parse().unwrap()), "{r} {name}")
                    }
                    (Some(c), _) => assert_eq!(v.as_str(), Some(c.as_str()), "{r} {name}"),
                }
            }
        }
    }
    // several reports do not go into one Parquet file
    let out = run(rprof().args([
        "stats",
        "--format",
        "parquet",
        "-o",
        p(&i.out.join("x.parquet")),
        p(&f),
    ]));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--report NAME"));
    assert!(!i.out.join("x.parquet").exists());
}

/// `| head`: the reader goes away after a few bytes; rprof exits 0 with
/// nothing on stderr, for TSV and Parquet (to a pipe) alike.
#[test]
fn closed_pipe_ends_quietly() {
    let i = inputs();
    let big = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    let cases: Vec<Vec<String>> = vec![
        s(&[
            "launch",
            "-q",
            "--table",
            "each",
            "--format",
            "tsv",
            p(&big),
        ]),
        s(&[
            "launch",
            "-q",
            "--table",
            "each",
            "--format",
            "parquet",
            p(&big),
        ]),
        s(&[
            "stats",
            "-q",
            "-r",
            "cuda_gpu_trace",
            "--format",
            "parquet",
            p(&big),
        ]),
        s(&[
            "stats",
            "-q",
            "-r",
            "cuda_gpu_trace",
            "--format",
            "tsv",
            p(&big),
        ]),
        s(&["idle", "-q", "--format", "tsv", p(&i.host)]),
        s(&["mem", "-q", "--format", "parquet", p(&i.mem)]),
        s(&["dist", "-q", "--format", "tsv", p(&big)]),
        s(&["diff", "-q", "--format", "parquet", p(&big), p(&big)]),
        s(&["steps", "-q", "--format", "tsv", p(&i.host)]),
    ];
    for args in cases {
        let mut child = rprof()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = child.stdout.take().unwrap();
        let mut first = [0u8; 4];
        out.read_exact(&mut first).unwrap();
        if args.iter().any(|a| a == "parquet") {
            assert_eq!(&first, b"PAR1", "{args:?}");
        }
        drop(out);
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{args:?}: {:?}", o.status);
        assert!(
            o.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Parquet is binary: to a terminal it is refused (exit 2, one line),
/// under a pseudo-terminal made by script(1) when it is installed.
#[test]
fn parquet_to_a_terminal_is_refused() {
    let has_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        eprintln!("note: script(1) is absent; skipping the terminal test");
        return;
    }
    let i = inputs();
    let bin = env!("CARGO_BIN_EXE_rprof");
    for cmd in [
        format!("{bin} steps -q --format parquet {}", p(&i.host)),
        format!("{bin} idle -q --format parquet {}", p(&i.host)),
        format!("{bin} launch -q --format parquet {}", p(&i.host)),
        format!("{bin} mem --format parquet {}", p(&i.mem)),
        format!(
            "{bin} diff -q --format parquet {} {}",
            p(&i.host),
            p(&i.host)
        ),
        format!(
            "{bin} stats -q -r cuda_gpu_kern_sum --format parquet {}",
            p(&i.host)
        ),
        format!("{bin} dist -q --format parquet {}", p(&i.host)),
    ] {
        let out = run(std::process::Command::new("script")
            .args(["-qec", &format!("{cmd}; echo \"exit=$?\""), "/dev/null"])
            .stdin(Stdio::null()));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("exit=2"), "{cmd}: {text}");
        assert!(text.contains("binary"), "{cmd}: {text}");
        assert!(!text.contains("PAR1"), "{cmd}: {text}");
    }
}

/// The slices (`ph: X`) of a Chrome export: (name, start, end) in µs
/// from the export's zero, as integers of ns.
fn slices(path: &Path) -> Vec<(String, i64, i64)> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let events = v
        .get("traceEvents")
        .and_then(|e| e.as_array())
        .or_else(|| v.as_array())
        .unwrap()
        .clone();
    let mut out: Vec<(String, i64, i64)> = events
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| {
            let ts = (e["ts"].as_f64().unwrap() * 1000.0).round() as i64;
            let dur = (e["dur"].as_f64().unwrap() * 1000.0).round() as i64;
            (e["name"].as_str().unwrap().to_owned(), ts, ts + dur)
        })
        .collect();
    out.sort();
    out
}

/// `export --step N`: exactly the slices of the whole export that overlap
/// step N's window (the window `rprof steps` reports, by hand below),
/// nothing else; a step that does not exist is one line and exit 1.
#[test]
fn export_step_window() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("steps.pt.trace.json");
    std::fs::write(&trace, crate::hostviews::KINETO).unwrap();
    let all = dir.path().join("all.json");
    ok(&s(&["export", "--chrome", "-q", p(&trace), "-o", p(&all)]));
    let all = slices(&all);
    // the trace's first event is at 100 µs: the export's zero
    let zero = 100_000;
    // steps aligned to their GPU work (see hostviews::kineto_steps_by_hand):
    // step 1 [100, 210) µs, step 2 [210, 305) µs
    for (n, from, to) in [(1, 100_000, 210_000), (2, 210_000, 305_000)] {
        let out = dir.path().join(format!("step{n}.json"));
        ok(&s(&[
            "export",
            "--chrome",
            "-q",
            "--step",
            &n.to_string(),
            p(&trace),
            "-o",
            p(&out),
        ]));
        let got = slices(&out);
        let want: Vec<(String, i64, i64)> = all
            .iter()
            .filter(|(_, a, b)| a + zero < to && (b + zero > from || (a == b && a + zero == from)))
            .cloned()
            .collect();
        assert_eq!(got, want, "step {n}");
        let names: std::collections::BTreeSet<&str> = got.iter().map(|x| x.0.as_str()).collect();
        if n == 2 {
            // by hand: the NCCL kernel [170,210) and the copy's call
            // [205,209) belong to step 1; the copy [215,225) to step 2
            for x in [
                "ProfilerStep#2",
                "aten::item",
                "triton_",
                "add",
                "Memcpy HtoD (Pageable -> Device)",
                "Memset (Device)",
                "cudaMemsetAsync",
            ] {
                assert!(names.contains(x), "step 2 lacks {x}: {names:?}");
            }
            for x in [
                "ncclKernel_AllReduce",
                "gemm",
                "ProfilerStep#1",
                "aten::mm",
                "cudaMemcpyAsync",
            ] {
                assert!(!names.contains(x), "step 2 has {x}");
            }
        } else {
            for x in [
                "gemm",
                "ncclKernel_AllReduce",
                "ProfilerStep#1",
                "cudaMemcpyAsync",
            ] {
                assert!(names.contains(x), "step 1 lacks {x}: {names:?}");
            }
            assert!(!names.contains("add") && !names.contains("triton_"));
        }
    }
    // no step 7: exit 1, one line naming the file and the steps there are
    let out = run(rprof().args(["export", "--chrome", "--step", "7", p(&trace)]));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no step 7") && err.contains("1 to 2"), "{err}");
    assert!(err.contains("steps.pt.trace.json"), "{err}");
    // --step with --from is a usage error
    let out = run(rprof().args([
        "export",
        "--chrome",
        "--step",
        "1",
        "--from",
        "1ms",
        p(&trace),
    ]));
    assert_eq!(out.status.code(), Some(2));
}

/// `prof`, `summary`, `gpu` and `diff` on a Parquet record file (found by
/// its `PAR1` magic, whatever its name) print exactly what they print on
/// the JSON Lines records of the same profile.
#[test]
fn parquet_records_read_like_json_records() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    for f in [
        "nsys-ai/mfu_2gpu_before.sqlite",
        "profiling-lm/net.sql",
        "kineto/alexnet_benchmark_trace.json.gz",
        "mordred/report1_2021.sqlite",
    ] {
        let src = fixture(f);
        // the same name in two folders: JSON Lines (with its sidecar) and
        // Parquet, so that the outputs that name the input agree too
        let json = a.join("records");
        let pq = b.join("records");
        ok(&s(&["parse", "-q", p(&src), "-o", p(&json)]));
        ok(&s(&[
            "parse",
            "-q",
            "--format",
            "parquet",
            p(&src),
            "-o",
            p(&pq),
        ]));
        let mut magic = [0u8; 4];
        std::fs::File::open(&pq)
            .unwrap()
            .read_exact(&mut magic)
            .unwrap();
        assert_eq!(&magic, b"PAR1");
        for args in [
            vec!["prof"],
            vec![
                "prof",
                "--csv",
                "-c",
                "idx,op,kernel,sil,flops,bytes,tc,grid,block",
            ],
            vec!["prof", "--format", "json"],
            vec!["summary", "--by", "op"],
            vec!["summary", "--by", "kernel", "--csv"],
            vec!["summary", "--by", "nvtx", "--json"],
            vec!["gpu", "--top", "0"],
            vec!["gpu", "--format", "json"],
            vec!["diff", "--by", "op", "records", "records"],
        ] {
            let go = |d: &Path| {
                let mut cmd = rprof();
                cmd.current_dir(d).args(&args).arg("-q");
                if args[0] != "diff" {
                    cmd.arg("records");
                }
                let out = run(&mut cmd);
                assert!(
                    out.status.success(),
                    "{f} {args:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                out.stdout
            };
            let (x, y) = (go(&a), go(&b));
            assert!(!x.is_empty(), "{f} {args:?}");
            assert!(x == y, "{f} {args:?}: outputs differ");
        }
    }
    // through a pipe: one line saying to give the path
    let pq = b.join("records");
    let out = run(rprof()
        .args(["prof", "-q"])
        .stdin(std::fs::File::open(&pq).unwrap()));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("Parquet records"), "{err}");
}

/// A Parquet record file that is not one of `rprof parse`'s (written here
/// with the parquet crate, synthetic): a row that is not a record, a
/// column of a type no record column has, no rprof metadata. Each is one
/// line on stderr naming the file and the problem, exit 1. A file with no
/// rows reads as an empty JSON Lines file does.
#[test]
fn hostile_parquet_records_are_one_line_errors() {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int32Array, RecordBatch};
    use arrow_schema::{Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;

    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, cols: Vec<(&str, ArrayRef)>, meta: bool| -> PathBuf {
        let schema = Arc::new(Schema::new(
            cols.iter()
                .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
                .collect::<Vec<_>>(),
        ));
        let kv = meta.then(|| {
            vec![KeyValue::new(
                "rprof".to_owned(),
                r#"{"rprof":"dict","version":2,"source":"nsys"}"#.to_owned(),
            )]
        });
        let props = WriterProperties::builder()
            .set_key_value_metadata(kv)
            .build();
        let path = dir.path().join(name);
        let f = std::fs::File::create(&path).unwrap();
        let mut w = ArrowWriter::try_new(f, schema.clone(), Some(props)).unwrap();
        let batch =
            RecordBatch::try_new(schema, cols.into_iter().map(|(_, a)| a).collect()).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        path
    };
    let names = || -> ArrayRef { Arc::new(StringArray::from(vec!["k1", "k2", "k3"])) };
    // a record file of `rprof parse`, whose second row's duration is then
    // made null: not a record
    let good = dir.path().join("good.parquet");
    ok(&s(&[
        "parse",
        "-q",
        "--format",
        "parquet",
        p(&fixture("profiling-lm/net.sql")),
        "-o",
        p(&good),
    ]));
    let batch = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&good).unwrap())
        .unwrap()
        .build()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let schema = batch.schema();
    let cols: Vec<(&str, ArrayRef)> = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| {
            let c = if f.name() == "kDuration" {
                let d = c.as_any().downcast_ref::<Int64Array>().unwrap();
                Arc::new(Int64Array::from_iter(
                    d.iter().enumerate().map(|(i, v)| v.filter(|_| i != 1)),
                )) as ArrayRef
            } else {
                c.clone()
            };
            (f.name().as_str(), c)
        })
        .collect();
    let not_record = write("not-record.parquet", cols, true);
    let odd_type = write(
        "odd-type.parquet",
        vec![
            ("kShortName", names()),
            ("kDuration", Arc::new(Int32Array::from(vec![5, 6, 7]))),
        ],
        true,
    );
    let no_meta = write("no-meta.parquet", vec![("kShortName", names())], false);
    // no rows: what an empty JSON Lines file gives
    let empty = write(
        "empty.parquet",
        vec![(
            "kShortName",
            Arc::new(StringArray::from(Vec::<&str>::new())) as ArrayRef,
        )],
        true,
    );
    let empty_json = dir.path().join("empty.jsonl");
    std::fs::write(&empty_json, "").unwrap();
    for cmd in ["prof", "summary"] {
        let a = run(rprof().args([cmd, "-q", empty.to_str().unwrap()]));
        let b = run(rprof().args([cmd, "-q", empty_json.to_str().unwrap()]));
        assert_eq!(
            a.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&a.stderr)
        );
        assert!(!a.stdout.is_empty());
        assert_eq!(a.stdout, b.stdout, "{cmd}");
        assert_eq!(a.stderr, b.stderr, "{cmd}");
    }
    for (path, want) in [
        (&not_record, "not-record.parquet:2: "),
        (
            &odd_type,
            "column \"kDuration\" is of type Int32, which no rprof record column has",
        ),
        (
            &no_meta,
            "not a record file of `rprof parse --format parquet`",
        ),
    ] {
        for cmd in ["prof", "summary"] {
            let out = run(rprof().args([cmd, "-q", path.to_str().unwrap()]));
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{cmd} {}: {err}",
                path.display()
            );
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(want), "{cmd}: {err}");
            assert!(
                err.contains(path.file_name().unwrap().to_str().unwrap()),
                "{err}"
            );
        }
    }
}

/// `--timeunit` on the tables of idle, steps, dist and launch: every time
/// column (header ending in a unit) is shown in the unit asked for, the
/// same value as the CSV's ns.
#[test]
fn timeunit_on_every_table() {
    let i = inputs();
    let host = p(&i.host);
    let cells = |args: &[&str], header: &str| -> Vec<String> {
        let text = String::from_utf8(ok(&s(args))).unwrap();
        // the first table: its header, then its rows up to the first
        // line that is not a table line
        let mut lines = text
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'));
        let head: Vec<String> = lines
            .next()
            .unwrap()
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect();
        let col = head
            .iter()
            .position(|h| h == header)
            .unwrap_or_else(|| panic!("no {header} in {head:?}"));
        lines
            .skip(1)
            .map(|l| l.split('|').nth(col).unwrap().trim().to_owned())
            .collect()
    };
    // idle: span per stream, ns in the CSV
    let (_, csv) = sv(&ok(&s(&["idle", "-q", "--csv", host])), b',');
    let want: Vec<String> = csv
        .iter()
        .map(|r| {
            // the table prints ms to 3 decimals: whole µs
            let ms = (r[3].parse::<f64>().unwrap() / 1e6 * 1e3).round() / 1e3;
            format!("{:.0}", ms * 1e3)
        })
        .collect();
    let got = cells(&["idle", "-q", "--timeunit", "us", host], "span us");
    assert_eq!(&got[..want.len()], &want[..]);
    // steps: the kernel category, ns in the CSV, as s
    let (_, csv) = sv(
        &ok(&s(&["steps", "-q", "--step", "^iteration", "--csv", host])),
        b',',
    );
    let want: Vec<String> = csv
        .iter()
        .filter(|r| r[0] != "mean")
        .map(|r| format!("{:.6}", r[4].parse::<f64>().unwrap() / 1e9))
        .collect();
    let got = cells(
        &[
            "steps",
            "-q",
            "--step",
            "^iteration",
            "--timeunit",
            "s",
            host,
        ],
        "kernel s",
    );
    assert_eq!(&got[..want.len()], &want[..]);
    // launch: per kernel latency in ms (the table's us, 2 decimals, scaled)
    let got = cells(
        &["launch", "-q", "--timeunit", "ns", "--top", "0", host],
        "lat max ns",
    );
    assert!(
        got.iter().all(|c| c.is_empty() || !c.contains('.')),
        "{got:?}"
    );
    // dist: no header keeps its ms
    let text = String::from_utf8(ok(&s(&[
        "dist",
        "-q",
        "--timeunit",
        "us",
        p(&fixture("nsys-ai/mfu_2gpu_before.sqlite")),
    ])))
    .unwrap();
    assert!(
        text.contains("span us") && text.contains("total us"),
        "{text}"
    );
    assert!(!text.contains(" ms |"), "{text}");
}
