//! `rprof parse --stack` and `--stack-bytes`: records stay compact at any
//! nesting depth (what a record carries of its enclosing ranges grows with
//! the information, not with repetition), every line stays self-contained,
//! and the reports read from the records agree with the full form.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{fixture, rprof, run};

/// Parse `input` with extra arguments into `out`; returns the file size.
fn parse(input: &Path, out: &Path, extra: &[&str]) -> u64 {
    let o = run(rprof()
        .arg("parse")
        .arg("-q")
        .arg(input)
        .args(extra)
        .arg("-o")
        .arg(out));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::metadata(out).unwrap().len()
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn nested_profile(dir: &Path, n: usize, text: &dyn Fn(usize) -> String) -> PathBuf {
    let p = dir.join(format!("nested{n}.sqlite"));
    let _ = std::fs::remove_file(&p);
    rprof_testkit::nesting::nested(n, text)
        .write_nsys(&p)
        .unwrap();
    p
}

fn distinct(i: usize) -> String {
    format!("range number {i:05} of a deep stack")
}

#[test]
fn deep_nesting_grows_linearly_with_a_bounded_form() {
    let dir = tempfile::tempdir().unwrap();
    let (small, large) = (150, 300);
    let size = |n: usize, extra: &[&str]| {
        let p = nested_profile(dir.path(), n, &distinct);
        parse(&p, &dir.path().join("out.jsonl"), extra) as f64
    };
    // the full form repeats every enclosing text on every line: doubling N
    // nearly quadruples the file (this is what the bounded forms avoid, and
    // shows the test can fail)
    let full = size(large, &["--stack", "full", "--stack-bytes", "0"])
        / size(small, &["--stack", "full", "--stack-bytes", "0"]);
    assert!(full > 3.0, "full form grew {full:.2} x for 2 x the kernels");
    for extra in [
        &["--stack", "inner"][..],
        &["--stack", "none"][..],
        &["--stack", "full", "--stack-bytes", "256"][..],
        &["--stack", "runs", "--stack-bytes", "256"][..],
    ] {
        let ratio = size(large, extra) / size(small, extra);
        assert!(
            ratio < 2.2,
            "{extra:?}: output grew {ratio:.2} x for 2 x the kernels"
        );
    }
}

#[test]
fn repeated_nesting_is_linear_by_default_and_expands_back() {
    // the same text at every depth (a range left open in a loop): the
    // default writes it once per line with its count
    let dir = tempfile::tempdir().unwrap();
    let same = |_: usize| "step".to_owned();
    let (small, large) = (150, 300);
    let ps = nested_profile(dir.path(), small, &same);
    let pl = nested_profile(dir.path(), large, &same);
    let out = dir.path().join("d.jsonl");
    let a = parse(&ps, &out, &[]) as f64;
    let b = parse(&pl, &out, &[]) as f64;
    assert!(
        b / a < 2.2,
        "default grew {:.2} x for 2 x the kernels",
        b / a
    );
    // each line holds the text once and the depth as its count
    for (i, r) in records(&out).iter().enumerate() {
        assert_eq!(r["stack"], serde_json::json!(["step"]), "line {}", i + 1);
        // a count of 1 everywhere is written as []
        let runs = if i == 0 {
            serde_json::json!([])
        } else {
            serde_json::json!([i + 1])
        };
        assert_eq!(r["stackRuns"], runs, "line {}", i + 1);
        assert_eq!(r["stackCut"], 0);
    }
    // read back, the records are those of the full form: prof and summary
    // --by nvtx print the same bytes
    let full = dir.path().join("f.jsonl");
    parse(&pl, &full, &["--stack", "full", "--stack-bytes", "0"]);
    for args in [&["prof", "--csv"][..], &["summary", "--by", "nvtx"][..]] {
        let x = run(rprof().args(args).arg(&out));
        let y = run(rprof().args(args).arg(&full));
        assert!(x.status.success() && y.status.success());
        assert_eq!(
            String::from_utf8_lossy(&x.stdout),
            String::from_utf8_lossy(&y.stdout),
            "{args:?}"
        );
    }
}

#[test]
fn what_is_left_out_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let n = 40;
    let p = nested_profile(dir.path(), n, &distinct);
    let len = |i: usize| distinct(i).len() as i64;
    // inner: kernel i keeps range i and counts ranges 0..i and their bytes
    let out = dir.path().join("i.jsonl");
    parse(&p, &out, &["--stack", "inner"]);
    for (i, r) in records(&out).iter().enumerate() {
        assert_eq!(r["stack"], serde_json::json!([distinct(i)]));
        assert_eq!(r["stackCut"], i as i64);
        assert_eq!(r["stackCutBytes"], (0..i).map(len).sum::<i64>());
    }
    // a bound of 100 bytes: whole innermost texts while they fit, the next
    // one clipped to what remains, the rest left out, and the sums add up
    let out = dir.path().join("b.jsonl");
    parse(&p, &out, &["--stack", "full", "--stack-bytes", "100"]);
    for (i, r) in records(&out).iter().enumerate() {
        let stack: Vec<&str> = r["stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        let kept: i64 = stack.iter().map(|s| s.len() as i64).sum();
        let total: i64 = (0..=i).map(len).sum();
        assert!(kept <= 100, "line {}: {kept} bytes", i + 1);
        assert_eq!(kept + r["stackCutBytes"].as_i64().unwrap(), total);
        assert_eq!(
            stack.len() as i64 + r["stackCut"].as_i64().unwrap(),
            i as i64 + 1
        );
        // innermost first: the last entry is range i, whole
        assert_eq!(stack.last().copied(), Some(distinct(i).as_str()));
    }
}

/// Reports on the records of each `--stack` choice against those on the
/// full form (which tests/prof.rs and tests/records.rs check against the
/// profile). `runs` and `full` agree everywhere; `inner` keeps what
/// `summary --by nvtx` groups by, but `prof` and `summary --by op` resolve
/// stock PyTorch ops through the enclosing `aten::` ops, which `inner` and
/// `none` leave out; `none` has no range to group by.
#[test]
fn reports_on_each_stack_choice() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.jsonl");
    let other = dir.path().join("other.jsonl");
    let report = |args: &[&str], f: &Path| {
        let o = run(rprof().args(args).arg(f));
        assert!(o.status.success(), "{args:?}");
        o.stdout
    };
    for (fx, stock) in [
        ("profiling-lm/net.sql", false),
        ("nsys-ai/mfu_2gpu_before.sqlite", true),
        ("kineto/alexnet_benchmark_trace.json.gz", true),
        ("mordred/report1_2021.sqlite", false),
    ] {
        let p = fixture(fx);
        // the default form, read back, gives prof's output on the profile
        parse(&p, &other, &[]);
        assert_eq!(
            report(&["prof", "--csv"], &other),
            report(&["prof", "--csv"], &p),
            "{fx}: prof on the default records and on the profile"
        );
        parse(&p, &full, &["--stack", "full", "--stack-bytes", "0"]);
        for choice in ["full", "runs", "inner", "none"] {
            parse(&p, &other, &["--stack", choice]);
            let has_ranges = records(&full)
                .iter()
                .any(|r| r["stack"] != Value::Array(vec![]));
            let same_ops = matches!(choice, "full" | "runs") || !stock;
            let same_nvtx = choice != "none" || !has_ranges;
            for (args, expect) in [
                (&["prof", "--csv"][..], same_ops),
                (&["summary", "--by", "op"][..], same_ops),
                (&["summary", "--by", "nvtx"][..], same_nvtx),
            ] {
                assert_eq!(
                    report(args, &other) == report(args, &full),
                    expect,
                    "{fx} --stack {choice}: {args:?}"
                );
            }
        }
    }
}

#[test]
fn parquet_keeps_the_compact_form_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let same = |_: usize| "step".to_owned();
    let p = nested_profile(dir.path(), 100, &same);
    let pq = dir.path().join("r.parquet");
    let js = dir.path().join("r.jsonl");
    parse(&p, &pq, &["--format", "parquet"]);
    parse(&p, &js, &["--stack", "full", "--stack-bytes", "0"]);
    for args in [&["prof", "--csv"][..], &["summary", "--by", "nvtx"][..]] {
        let x = run(rprof().args(args).arg(&pq));
        let y = run(rprof().args(args).arg(&js));
        assert!(x.status.success(), "{}", String::from_utf8_lossy(&x.stderr));
        assert_eq!(x.stdout, y.stdout, "{args:?}");
    }
}

#[test]
fn hostile_runs_are_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = nested_profile(dir.path(), 3, &|_| "s".to_owned());
    let out = dir.path().join("r.jsonl");
    parse(&p, &out, &[]);
    let text = std::fs::read_to_string(&out).unwrap();
    let bad = text.replacen("\"stackRuns\":[2]", "\"stackRuns\":[99999999999]", 1);
    assert_ne!(bad, text);
    std::fs::write(&out, bad).unwrap();
    let o = run(rprof().arg("prof").arg(&out));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("stackRuns"), "{err}");
}

#[test]
fn one_huge_range_text_is_clipped_and_counted() {
    // the case in small (the nsys reader refuses texts above 1 MiB):
    // one range of a million bytes of text around 40 kernels was 40 copies
    // of it; the default keeps 64 KiB of range text per line
    let dir = tempfile::tempdir().unwrap();
    let huge = "x".repeat(1_000_000);
    let mut s = rprof_testkit::nesting::nested(40, |_| "inner".to_owned());
    s.ranges
        .push(rprof_testkit::SynthRange::push(&huge, 0, 10_000_000_000));
    let p = dir.path().join("huge.sqlite");
    s.write_nsys(&p).unwrap();
    let out = dir.path().join("r.jsonl");
    let size = parse(&p, &out, &["--stack", "full"]);
    assert!(size < 40 * (65_536 + 2_048), "{size} bytes");
    for r in records(&out) {
        let stack = r["stack"].as_array().unwrap();
        let kept: usize = stack.iter().map(|s| s.as_str().unwrap().len()).sum();
        assert_eq!(kept, 65_536);
        // the huge range is outermost: clipped, not left out
        assert_eq!(r["stackCut"], 0);
        assert_eq!(
            r["stackCutBytes"].as_u64().unwrap() as usize,
            huge.len() + "inner".len() * (stack.len() - 1) - kept
        );
    }
}
