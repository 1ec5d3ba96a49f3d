//! The files rprof writes, loaded by pandas, Polars and DuckDB with their
//! default readers (`read_json(lines=True)` / `read_ndjson` /
//! `read_json_auto`, `read_csv` / `read_csv_auto`, `read_parquet`): integer
//! columns stay integers and hold the values rprof wrote (read here in
//! Rust with serde_json, the csv crate and the parquet crate); and the
//! README's DuckDB recipe over a folder of per-rank Parquet files gives the
//! per-rank sums computed here from the records.
//!
//! Needs `python3` with `duckdb`, `polars` and `pandas`; skipped (with a
//! note on stderr) when any is missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{fixture, rprof, run};

const SCRIPT: &str = r#"
import json, math, sys
import duckdb, pandas as pd, polars as pl

def clean(v):
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v

spec = json.load(open(sys.argv[1]))
out = {}
for f in spec:
    path, kind, cols = f["path"], f["kind"], f["cols"]
    res = {}
    d = {"jsonl": lambda: pd.read_json(path, lines=True),
         "csv": lambda: pd.read_csv(path),
         "parquet": lambda: pd.read_parquet(path)}[kind]()
    res["pandas"] = {c: {"type": str(d[c].dtype), "values": [clean(v) for v in d[c].tolist()]}
                     for c in cols}
    d = {"jsonl": lambda: pl.read_ndjson(path),
         "csv": lambda: pl.read_csv(path),
         "parquet": lambda: pl.read_parquet(path)}[kind]()
    res["polars"] = {c: {"type": str(d.schema[c]), "values": d[c].to_list()} for c in cols}
    fn = {"jsonl": "read_json_auto", "csv": "read_csv_auto", "parquet": "read_parquet"}[kind]
    r = duckdb.sql(f"SELECT * FROM {fn}('{path}')")
    names = r.columns
    types = [str(t) for t in r.types]
    rows = r.fetchall()
    res["duckdb"] = {c: {"type": types[names.index(c)],
                         "values": [row[names.index(c)] for row in rows]} for c in cols}
    out[path] = res
if len(sys.argv) > 2:
    # the README's recipe: (rank, kernel, kernels, ms) rows
    out["recipe"] = duckdb.sql(open(sys.argv[2]).read()).fetchall()
json.dump(out, sys.stdout)
"#;

/// True when python3 can import duckdb, polars and pandas.
fn python_ok() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import duckdb, polars, pandas"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "note: python3 with duckdb, polars and pandas is not available; skipping the loader test"
        );
    }
    ok
}

fn ok(args: &[&str]) -> Vec<u8> {
    let out = run(rprof().args(args));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Integer columns as rprof wrote them (`None`: null / empty cell).
type Ints = BTreeMap<String, Vec<Option<i64>>>;

fn from_jsonl(path: &Path, cols: &[&str]) -> Ints {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out: Ints = cols.iter().map(|c| ((*c).to_owned(), Vec::new())).collect();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        for c in cols {
            let x = &v[*c];
            assert!(x.is_null() || x.is_i64() || x.is_u64(), "{c}: {x}");
            out.get_mut(*c).unwrap().push(x.as_i64());
        }
    }
    out
}

fn from_csv(path: &Path, cols: &[&str]) -> Ints {
    let mut r = csv::Reader::from_path(path).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    let mut out: Ints = cols.iter().map(|c| ((*c).to_owned(), Vec::new())).collect();
    for rec in r.records() {
        let rec = rec.unwrap();
        for c in cols {
            let i = head.iter().position(|h| h == c).unwrap();
            let cell = &rec[i];
            out.get_mut(*c).unwrap().push(if cell.is_empty() {
                None
            } else {
                Some(cell.parse().unwrap())
            });
        }
    }
    out
}

fn is_int_type(loader: &str, t: &str) -> bool {
    match loader {
        "polars" => t.starts_with("Int") || t.starts_with("UInt"),
        "duckdb" => [
            "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "UBIGINT", "UINTEGER", "HUGEINT",
        ]
        .contains(&t),
        _ => ["int64", "Int64", "uint64", "UInt64"].contains(&t),
    }
}

/// One file as the three loaders saw it, against rprof's values.
fn check(what: &str, kind: &str, seen: &Value, want: &Ints) {
    for loader in ["pandas", "polars", "duckdb"] {
        for (col, values) in want {
            let got = &seen[loader][col];
            let t = got["type"].as_str().unwrap();
            let vals = got["values"].as_array().unwrap();
            assert_eq!(vals.len(), values.len(), "{what} {loader} {col}");
            let has_null = values.iter().any(Option::is_none);
            if kind == "csv" && values.iter().all(Option::is_none) {
                // a column of empty cells says nothing of its type: text
                // files carry none (Parquet does, and is checked)
                assert!(vals.iter().all(Value::is_null), "{what} {loader} {col}");
                continue;
            }
            if loader == "pandas" && has_null {
                // pandas' default NumPy columns hold a missing value as
                // NaN, so an integer column with nulls is float64 there
                // (pandas' own rule, not rprof's: no other loader does it)
                assert!(
                    ["float64", "Int64", "UInt64"].contains(&t),
                    "{what} pandas {col}: {t}"
                );
                for (g, w) in vals.iter().zip(values) {
                    match w {
                        None => assert!(g.is_null(), "{what} pandas {col}"),
                        Some(w) => assert_eq!(g.as_f64(), Some(*w as f64), "{what} pandas {col}"),
                    }
                }
                continue;
            }
            assert!(is_int_type(loader, t), "{what} {loader} {col}: type {t}");
            for (i, (g, w)) in vals.iter().zip(values).enumerate() {
                assert_eq!(g.as_i64(), *w, "{what} {loader} {col} row {i}: {g}");
            }
        }
    }
}

struct File {
    path: PathBuf,
    kind: &'static str,
    want: Ints,
}

#[test]
fn pandas_polars_duckdb_default_readers() {
    if !python_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut files: Vec<File> = Vec::new();
    // records: a PyTorch-profiler trace (times since the epoch, above
    // 2^53 ns) and an nsys export (launch-call fields null for some rows)
    let rec_cols = [
        "kStart",
        "kEnd",
        "kDuration",
        "rStart",
        "rEnd",
        "corrId",
        "device",
        "stream",
        "pid",
        "tid",
    ];
    for (name, src) in [
        ("kineto", "kineto/alexnet_benchmark_trace.json.gz"),
        ("nsys", "nsys-ai/mfu_2gpu_before.sqlite"),
    ] {
        let jsonl = d.join(format!("{name}.jsonl"));
        let pq = d.join(format!("{name}.parquet"));
        ok(&["parse", "-q", p(&fixture(src)), "-o", p(&jsonl)]);
        ok(&[
            "parse",
            "-q",
            "--format",
            "parquet",
            p(&fixture(src)),
            "-o",
            p(&pq),
        ]);
        let want = from_jsonl(&jsonl, &rec_cols);
        if name == "kineto" {
            assert!(want["kStart"].iter().flatten().all(|&t| t > 1 << 53));
        } else {
            assert!(want["rStart"].iter().any(Option::is_none));
        }
        files.push(File {
            path: jsonl,
            kind: "jsonl",
            want: want.clone(),
        });
        files.push(File {
            path: pq,
            kind: "parquet",
            want,
        });
    }
    // tables: CSV and Parquet of the same command
    let nsys = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    let tables: [(&str, Vec<&str>, Vec<&str>); 4] = [
        (
            "summary",
            vec!["summary", "-q", "--by", "op", p(&nsys)],
            vec!["count", "total_ns", "min_ns", "max_ns", "flops", "bytes"],
        ),
        (
            "launch",
            vec!["launch", "-q", "--table", "each", p(&nsys)],
            vec![
                "start_ns",
                "device",
                "stream",
                "api_ns",
                "latency_ns",
                "kernel_ns",
            ],
        ),
        (
            "dist",
            vec!["dist", "-q", "--table", "ranks", p(&nsys)],
            vec![
                "rank", "kernels", "start_ns", "span_ns", "busy_ns", "idle_ns",
            ],
        ),
        (
            "stats",
            vec!["stats", "-q", "-r", "cuda_gpu_kern_sum", p(&nsys)],
            vec!["Instances", "Total Time (ns)", "Min (ns)", "Max (ns)"],
        ),
    ];
    for (name, args, cols) in &tables {
        let csv = d.join(format!("{name}.csv"));
        let pq = d.join(format!("{name}.table.parquet"));
        let mut a = args.clone();
        a.extend(["--format", "csv", "-o", p(&csv)]);
        ok(&a);
        let mut a = args.clone();
        a.extend(["--format", "parquet", "-o", p(&pq)]);
        ok(&a);
        let want = from_csv(&csv, cols);
        files.push(File {
            path: csv,
            kind: "csv",
            want: want.clone(),
        });
        files.push(File {
            path: pq,
            kind: "parquet",
            want,
        });
    }
    // the README's DuckDB recipe over a folder of per-rank files
    let job = d.join("job");
    std::fs::create_dir(&job).unwrap();
    let ranks = [
        "nsys-ai/mfu_2gpu_before.sqlite",
        "kineto/alexnet_benchmark_trace.json.gz",
    ];
    for (i, src) in ranks.iter().enumerate() {
        let out = job.join(format!("rank{i}.parquet"));
        ok(&[
            "parse",
            "-q",
            "--format",
            "parquet",
            p(&fixture(src)),
            "-o",
            p(&out),
        ]);
    }
    let readme = std::fs::read_to_string(crate::util::root().join("README.md")).unwrap();
    let start = readme
        .find("duckdb -c \"")
        .expect("the README's DuckDB recipe")
        + 11;
    let len = readme[start..].find('"').unwrap();
    let sql =
        readme[start..start + len].replace("job/*.parquet", &format!("{}/*.parquet", p(&job)));
    let sql_file = d.join("recipe.sql");
    std::fs::write(&sql_file, &sql).unwrap();

    let spec: Vec<Value> = files
        .iter()
        .map(|f| {
            serde_json::json!({
                "path": p(&f.path),
                "kind": f.kind,
                "cols": f.want.keys().collect::<Vec<_>>(),
            })
        })
        .collect();
    let spec_file = d.join("spec.json");
    std::fs::write(&spec_file, serde_json::to_vec(&spec).unwrap()).unwrap();
    let script = d.join("load.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let out = Command::new("python3")
        .args([p(&script), p(&spec_file), p(&sql_file)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    for f in &files {
        check(p(&f.path), f.kind, &seen[p(&f.path)], &f.want);
    }

    // the recipe, by hand: kernels and summed kDuration per (rank,
    // kShortName) from each rank's JSON Lines records
    let mut groups: Vec<(i64, String, i64, i64)> = Vec::new();
    for (rank, src) in ranks.iter().enumerate() {
        let jsonl = d.join(format!("rank{rank}.jsonl"));
        ok(&["parse", "-q", p(&fixture(src)), "-o", p(&jsonl)]);
        let mut by: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        for line in std::fs::read_to_string(&jsonl).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let e = by
                .entry(v["kShortName"].as_str().unwrap().to_owned())
                .or_default();
            e.0 += 1;
            e.1 += v["kDuration"].as_i64().unwrap();
        }
        groups.extend(by.into_iter().map(|(k, (n, ns))| (rank as i64, k, n, ns)));
    }
    let rows = seen["recipe"].as_array().unwrap();
    assert!(!rows.is_empty());
    // ORDER BY rank, ms DESC LIMIT 10: the same ms, in that order
    let ms = |ns: i64| (ns as f64 / 1e6 * 1000.0).round() / 1000.0;
    let mut want: Vec<(i64, f64)> = groups.iter().map(|g| (g.0, ms(g.3))).collect();
    want.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    want.truncate(rows.len());
    assert_eq!(rows.len(), 10.min(groups.len()));
    for (row, (rank, w_ms)) in rows.iter().zip(&want) {
        let r = row.as_array().unwrap();
        assert_eq!(r[0].as_i64(), Some(*rank), "{row}");
        assert!(
            (r[3].as_f64().unwrap() - w_ms).abs() < 1e-9,
            "{row} vs {w_ms}"
        );
        // and the row's own group: its count and its time
        let g = groups
            .iter()
            .find(|g| g.0 == *rank && Some(g.1.as_str()) == r[1].as_str())
            .unwrap_or_else(|| panic!("{row}: no such group"));
        assert_eq!(r[2].as_i64(), Some(g.2), "{row}");
        assert!((r[3].as_f64().unwrap() - ms(g.3)).abs() < 1e-9, "{row}");
    }
}
