//! `rprof summary`: hand-computed statistics on synthetic traces, every
//! key, the three output formats, profiles vs record files, the corpus,
//! bad input.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use rprof_testkit::{Synth, SynthGpu, SynthKernel, SynthRange};

use crate::gpu::{roofline_trace, stdout_of};
use crate::util::{fixture, rprof, run};

fn k(name: &str, start: i64, dur: i64, corr: i64, stream: i64) -> SynthKernel {
    let mut k = SynthKernel::new(name, start, start + dur, corr);
    k.stream = stream;
    k
}

/// `a` four times (10, 20, 30, 40 ns; streams 7, 7, 8, 8), `b` once (100
/// ns) on device 1, `c` once (100 ns). `a`'s launches run inside the NVTX
/// ranges `step` ⊃ `layer:Conv1` ⊃ `inner`; `b` and `c` are outside any.
fn stats_trace(dir: &Path) -> PathBuf {
    let mut s = Synth::default();
    s.gpus.push(SynthGpu::a100());
    s.kernels.push(k("void a<int>(int)", 1_000, 10, 1, 7));
    s.kernels.push(k("void a<int>(int)", 2_000, 20, 2, 7));
    s.kernels.push(k("void a<int>(int)", 3_000, 30, 3, 8));
    s.kernels.push(k("void a<int>(int)", 4_000, 40, 4, 8));
    let mut b = k("void b<int>(int)", 5_000, 100, 5, 7);
    b.device = 1;
    s.kernels.push(b);
    s.kernels.push(k("void c<int>(int)", 6_000, 100, 6, 7));
    s.ranges.push(SynthRange::push("step", 500, 4_500));
    s.ranges.push(SynthRange::push("layer:Conv1", 600, 4_400));
    s.ranges.push(SynthRange::push("inner", 700, 4_300));
    let p = dir.join("stats.sqlite");
    s.write_nsys(&p).unwrap();
    p
}

/// CSV rows without the header (fields with quotes: `"…"`, `""` inside).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip(1)
        .map(|line| {
            let mut fields = Vec::new();
            let mut cur = String::new();
            let mut quoted = false;
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '"' if quoted && chars.peek() == Some(&'"') => {
                        cur.push('"');
                        chars.next();
                    }
                    '"' => quoted = !quoted,
                    ',' if !quoted => fields.push(std::mem::take(&mut cur)),
                    c => cur.push(c),
                }
            }
            fields.push(cur);
            fields
        })
        .collect()
}

/// a: count 4, total 100, mean 25, sample std dev sqrt((15² + 5² + 5² +
/// 15²) / 3) = sqrt(500/3) = 12.909944487358056, min 10, max 40, share
/// 100/300 = 33.33 %. b and c: 100 each, std dev 0; the tie goes to the
/// key order (b before c).
#[test]
fn stats_hand_computed_csv() {
    let dir = tempfile::tempdir().unwrap();
    let p = stats_trace(dir.path());
    let out = stdout_of(&["summary", "-q", "--csv", p.to_str().unwrap()]);
    assert_eq!(
        out.lines().next().unwrap(),
        "key,count,total_ns,mean_ns,median_ns,std_ns,min_ns,max_ns,share_pct,flops,flops_kernels,bytes,bytes_kernels,tflops,gbs"
    );
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[0],
        [
            "a",
            "4",
            "100",
            "25",
            "25",
            "12.909944487358056",
            "10",
            "40",
            "33.333333333333336",
            "",
            "0",
            "",
            "0",
            "",
            ""
        ]
    );
    assert_eq!(
        rows[1][..9],
        [
            "b",
            "1",
            "100",
            "100",
            "100",
            "0",
            "100",
            "100",
            "33.333333333333336"
        ]
    );
    assert_eq!(rows[2][0], "c");
}

/// Every key on the same trace.
#[test]
fn every_key() {
    let dir = tempfile::tempdir().unwrap();
    let p = stats_trace(dir.path());
    let keys = |by: &str| -> Vec<(String, String)> {
        csv_rows(&stdout_of(&[
            "summary",
            "-q",
            "--csv",
            "--by",
            by,
            p.to_str().unwrap(),
        ]))
        .into_iter()
        .map(|r| (r[0].clone(), r[2].clone()))
        .collect()
    };
    let v = |x: &[(&str, &str)]| -> Vec<(String, String)> {
        x.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        keys("kernel"),
        v(&[("a", "100"), ("b", "100"), ("c", "100")])
    );
    // the innermost range: `inner` for a, none for b and c
    assert_eq!(keys("nvtx"), v(&[("(none)", "200"), ("inner", "100")]));
    assert_eq!(keys("layer"), v(&[("(none)", "200"), ("Conv1", "100")]));
    // device 0 stream 7: 10 + 20 + 100 (c); stream 8: 30 + 40; device 1: b
    assert_eq!(
        keys("stream"),
        v(&[("0:7", "130"), ("1:7", "100"), ("0:8", "70")])
    );
    assert_eq!(keys("device"), v(&[("0", "200"), ("1", "100")]));
    assert_eq!(keys("dir"), v(&[("fprop", "300")]));
    // PyProf's rule: without an op marker, the innermost other range is the op
    assert_eq!(keys("op"), v(&[("(none)", "200"), ("inner", "100")]));
}

/// FLOPs and bytes where the models know them: the mm (4194304 FLOPs,
/// 229376 bytes in 10000 ns → 0.4194304 TFLOP/s, 22.9376 GB/s) and the add
/// (1000 FLOPs, 12000 bytes in 100 ns → 0.01 TFLOP/s, 120 GB/s); the third
/// kernel has no marker: no numbers, not zeros.
#[test]
fn flops_bytes_and_rates() {
    let dir = tempfile::tempdir().unwrap();
    let p = roofline_trace(dir.path(), true);
    let rows = csv_rows(&stdout_of(&[
        "summary",
        "-q",
        "--csv",
        "--by",
        "op",
        p.to_str().unwrap(),
    ]));
    let mm = rows.iter().find(|r| r[0] == "mm").unwrap();
    assert_eq!(
        mm[9..],
        ["4194304", "1", "229376", "1", "0.4194304", "22.9376"]
    );
    let add = rows.iter().find(|r| r[0] == "__add__").unwrap();
    assert_eq!(add[9..], ["1000", "1", "12000", "1", "0.01", "120"]);
    let none = rows.iter().find(|r| r[0] == "(none)").unwrap();
    assert_eq!(none[9..], ["", "0", "", "0", "", ""]);
    let table = stdout_of(&["summary", "-q", "--by", "op", p.to_str().unwrap()]);
    let mm = crate::gpu::row(&table, "| Op", "mm");
    assert_eq!(
        mm[1..],
        [
            "1", "10000", "10000", "10000", "0", "10000", "10000", "90.09", "4.19 M", "229 k",
            "0.419", "22.9"
        ]
    );
    let none = crate::gpu::row(&table, "| Op", "(none)");
    assert_eq!(none[9..], ["-", "-", "-", "-"]);
}

#[test]
fn table_json_and_top() {
    let dir = tempfile::tempdir().unwrap();
    let p = stats_trace(dir.path());
    let t = stdout_of(&["summary", "-q", "--top", "1", p.to_str().unwrap()]);
    assert!(t.starts_with("6 kernels in 3 groups by kernel; 300 ns of kernel time in all (the sum of kernel durations; overlapping kernels each count in full).\nShare = % of that sum."), "{t}");
    assert_eq!(
        crate::gpu::row(&t, "| Kernel", "a")[1..],
        ["4", "100", "25", "25", "13", "10", "40", "33.33"]
    );
    assert!(t.contains("... 2 more groups (200 ns, 66.67 % of kernel time) not shown; --top 0 shows every group."), "{t}");
    // no FLOP columns when nothing is known
    assert!(!t.contains("TFLOP/s"), "{t}");
    let j: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "summary",
        "-q",
        "--json",
        "--by",
        "stream",
        p.to_str().unwrap(),
    ]))
    .unwrap();
    assert_eq!(j["by"], "stream");
    assert_eq!(j["kernels"], 6);
    assert_eq!(j["total_ns"], 300);
    assert!(
        j["share_of"]
            .as_str()
            .unwrap()
            .starts_with("sum of all kernel durations")
    );
    assert_eq!(j["rows"][0]["key"], "0:7");
    assert_eq!(j["rows"][0]["count"], 3);
    assert_eq!(j["rows"][0]["min_ns"], 10);
    assert!(j["rows"][0]["flops"].is_null());
}

/// A profile, its records (file and stdin) and PyProf-format records give
/// the same summary.
#[test]
fn profile_and_record_file_agree() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixture("profiling-lm/net.sql");
    let dict = dir.path().join("net.dict");
    let out = run(rprof().args(["parse", "-q", "-o"]).arg(&dict).arg(&f));
    assert!(out.status.success());
    for by in ["op", "kernel", "layer", "stream"] {
        let a = stdout_of(&["summary", "-q", "--csv", "--by", by, f.to_str().unwrap()]);
        let b = stdout_of(&["summary", "-q", "--csv", "--by", by, dict.to_str().unwrap()]);
        assert_eq!(a, b, "--by {by}");
        let mut child = rprof()
            .args(["summary", "-q", "--csv", "--by", by])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let data = std::fs::read(&dict).unwrap();
        let mut stdin = child.stdin.take().unwrap();
        std::thread::spawn(move || stdin.write_all(&data).unwrap());
        let c = child.wait_with_output().unwrap();
        assert_eq!(String::from_utf8(c.stdout).unwrap(), a, "stdin --by {by}");
    }
    // run1: 284 kernels; the linear op's 15 kernels lead by time
    let rows = csv_rows(&stdout_of(&[
        "summary",
        "-q",
        "--csv",
        "--by",
        "op",
        f.to_str().unwrap(),
    ]));
    let count: u64 = rows.iter().map(|r| r[1].parse::<u64>().unwrap()).sum();
    assert_eq!(count, 284);
    assert_eq!(rows[0][..3], ["linear", "15", "3202713"]);
    let share: f64 = rows.iter().map(|r| r[8].parse::<f64>().unwrap()).sum();
    assert!((share - 100.0).abs() < 1e-9);
}

/// apex.pyprof's own net.dict has no times: summary still works from
/// kDuration.
#[test]
fn pyprof_dict_works() {
    let rows = csv_rows(&stdout_of(&[
        "summary",
        "-q",
        "--csv",
        fixture("profiling-lm/net.dict").to_str().unwrap(),
    ]));
    assert_eq!(
        rows.iter()
            .map(|r| r[1].parse::<u64>().unwrap())
            .sum::<u64>(),
        284
    );
}

#[test]
fn same_bytes_for_any_thread_count() {
    let f = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    for args in [
        vec!["summary", "-q", "--by", "op", "--top", "0"],
        vec!["summary", "-q", "--by", "nvtx", "--csv"],
        vec!["gpu", "-q", "--buckets=5", "--top", "0"],
        vec!["export", "-q", "--chrome"],
    ] {
        let one = run(rprof().env("RAYON_NUM_THREADS", "1").args(&args).arg(&f));
        let four = run(rprof().env("RAYON_NUM_THREADS", "4").args(&args).arg(&f));
        assert!(one.status.success() && four.status.success(), "{args:?}");
        assert!(!one.stdout.is_empty());
        assert!(one.stdout == four.stdout, "{args:?}");
    }
}

/// `rprof summary … | head -1` and `rprof export … | head -1`: exit 0,
/// no error.
#[test]
fn closed_pipe_ends_quietly() {
    for args in [
        vec!["summary", "--top", "0", "--by", "kernel"],
        vec!["export", "--chrome"],
        vec!["gpu", "--buckets=0.01", "--top", "0"],
    ] {
        let mut child = rprof()
            .args(&args)
            .arg(fixture("nsys-ai/mfu_2gpu_before.sqlite"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("Broken pipe") && !err.contains("error"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.sqlite");
    let junk = dir.path().join("junk.txt");
    std::fs::write(&junk, "hello\n").unwrap();
    for (args, code) in [
        (vec!["summary".to_owned(), missing.display().to_string()], 1),
        (vec!["summary".to_owned(), junk.display().to_string()], 1),
        (vec!["gpu".to_owned(), missing.display().to_string()], 1),
        (
            vec![
                "summary".to_owned(),
                "--by".into(),
                "colour".into(),
                "x".into(),
            ],
            2,
        ),
        (
            vec![
                "summary".to_owned(),
                "--csv".into(),
                "--json".into(),
                "x".into(),
            ],
            2,
        ),
        (vec!["gpu".to_owned(), "--buckets=0".into(), "x".into()], 2),
        (
            vec![
                "gpu".to_owned(),
                "--peak-tflops".into(),
                "-3".into(),
                "x".into(),
            ],
            2,
        ),
        (
            vec![
                "gpu".to_owned(),
                "--bandwidth-gbs".into(),
                "abc".into(),
                "x".into(),
            ],
            2,
        ),
    ] {
        let out = run(rprof().args(&args));
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        if code == 1 {
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.starts_with("rprof: "), "{err}");
        }
    }
}

/// The corpus nsys file with 4010 kernels on two H100s: every key sums to
/// the same kernel count and time.
#[test]
fn fixture_every_key_adds_up() {
    let f = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    let mut seen = None;
    for by in ["kernel", "op", "layer", "nvtx", "stream", "device", "dir"] {
        let j: serde_json::Value = serde_json::from_str(&stdout_of(&[
            "summary",
            "-q",
            "--json",
            "--by",
            by,
            f.to_str().unwrap(),
        ]))
        .unwrap();
        let rows = j["rows"].as_array().unwrap();
        let count: u64 = rows.iter().map(|r| r["count"].as_u64().unwrap()).sum();
        let total: i64 = rows.iter().map(|r| r["total_ns"].as_i64().unwrap()).sum();
        assert_eq!(count, 4010, "{by}");
        assert_eq!(total, j["total_ns"].as_i64().unwrap(), "{by}");
        if let Some(s) = seen {
            assert_eq!(s, total);
        }
        seen = Some(total);
        // sorted by total, descending
        assert!(
            rows.windows(2)
                .all(|w| w[0]["total_ns"].as_i64() >= w[1]["total_ns"].as_i64()),
            "{by}"
        );
    }
}
