//! One convention for every command (--format, -o, -w, --timeunit), data
//! files that type-infer, progress only on a terminal, shell integration,
//! the Chrome export's gzip / window / ranks / utilization counter, and the
//! documented examples.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::records::read_parquet;
use crate::util::{fixture, root, rprof, run};

fn ok(args: &[&str]) -> String {
    let out = run(rprof().args(args));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn f(rel: &str) -> String {
    fixture(rel).to_str().unwrap().to_owned()
}

/// CSV rows as maps, read with the csv crate.
fn csv_rows(text: &str, delimiter: u8) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    r.records()
        .map(|rec| {
            headers
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(str::to_owned))
                .collect()
        })
        .collect()
}

/// Default-mode CSV and TSV: every cell of a number column is a number or
/// empty (what read_csv_auto / Polars need to type it); --compat keeps
/// PyProf's `na`.
#[test]
fn csv_and_tsv_cells_are_numbers_or_empty() {
    // a stock-PyTorch profile: NCCL and Triton kernels have no FLOP model
    let dict = f("nsys-ai/mfu_2gpu_before.sqlite");
    let cols = "idx,op,sil,flops,bytes";
    let csv = ok(&["prof", "-q", "--csv", "-c", cols, &dict]);
    let tsv = ok(&["prof", "-q", "--format", "tsv", "-c", cols, &dict]);
    for (rows, what) in [
        (csv_rows(&csv, b','), "csv"),
        (csv_rows(&tsv, b'\t'), "tsv"),
    ] {
        assert_eq!(rows.len(), 4010, "{what}");
        let mut empty = 0;
        for r in &rows {
            for c in ["Idx", "Sil(ns)", "FLOPs", "Bytes"] {
                let v = &r[c];
                if v.is_empty() {
                    empty += 1;
                } else {
                    assert!(v.parse::<f64>().is_ok(), "{what}: {c} = {v:?}");
                }
            }
        }
        assert!(empty > 0, "{what}");
    }
    // odd records: the cells the space-separated table prints as `na` are
    // exactly the empty CSV cells
    let input = crate::prof::odd_records();
    let cols = ["-c", "idx,flops,bytes"];
    let space = crate::records::stdin_to(&["prof", "-q", cols[0], cols[1]], input.as_bytes());
    let csv2 =
        crate::records::stdin_to(&["prof", "-q", "--csv", cols[0], cols[1]], input.as_bytes());
    let mut na = 0;
    for (s, c) in space.lines().skip(1).zip(csv_rows(&csv2, b',')) {
        let cells: Vec<&str> = s.split(' ').collect();
        for (i, k) in ["FLOPs", "Bytes"].iter().enumerate() {
            if cells[i + 1] == "na" {
                na += 1;
                assert_eq!(c[*k], "", "{s}");
            } else {
                assert_eq!(c[*k], cells[i + 1], "{s}");
            }
        }
    }
    assert!(na >= 3);
    // unknown cells are unquoted in the default mode: `,,` or a line end
    assert!(!csv.contains("\"\""));
}

/// summary in every format: the same rows; Parquet read back with the
/// Rust reader equals the CSV, typed.
#[test]
fn summary_formats_agree() {
    let dir = tempfile::tempdir().unwrap();
    let p = f("nsys-ai/mfu_2gpu_before.sqlite");
    let csv = csv_rows(
        &ok(&["summary", "-q", "--by", "op", "--format", "csv", &p]),
        b',',
    );
    let tsv = csv_rows(
        &ok(&["summary", "-q", "--by", "op", "--format", "tsv", &p]),
        b'\t',
    );
    assert_eq!(csv, tsv);
    // --csv is the same as --format csv
    assert_eq!(
        ok(&["summary", "-q", "--by", "op", "--csv", &p]),
        ok(&["summary", "-q", "--by", "op", "--format", "csv", &p])
    );
    let pq = dir.path().join("s.parquet");
    ok(&[
        "summary",
        "-q",
        "--by",
        "op",
        "--format",
        "parquet",
        "-o",
        pq.to_str().unwrap(),
        &p,
    ]);
    let (rows, meta) = read_parquet(&pq);
    assert_eq!(meta["rprof.report"], "summary");
    assert_eq!(meta["rprof.by"], "op");
    assert_eq!(rows.len(), csv.len());
    let mut total = 0i64;
    for (r, c) in rows.iter().zip(&csv) {
        assert_eq!(r["key"], Value::String(c["key"].clone()));
        assert_eq!(r["count"].as_i64().unwrap().to_string(), c["count"]);
        assert_eq!(r["total_ns"].as_i64().unwrap().to_string(), c["total_ns"]);
        assert_eq!(
            r["share_pct"].as_f64().unwrap(),
            c["share_pct"].parse::<f64>().unwrap()
        );
        // no FLOPs known for these ops: null, not 0
        assert_eq!(c["flops"], "");
        assert_eq!(r["flops"], Value::Null);
        total += r["total_ns"].as_i64().unwrap();
    }
    // the groups add up to the kernel time of the profile (summed by hand
    // from the records)
    let recs = ok(&["parse", "-q", &p]);
    let want: i64 = recs
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["kDuration"]
                .as_i64()
                .unwrap()
        })
        .sum();
    assert_eq!(total, want);
    assert_eq!(meta["rprof.total_ns"], want.to_string());
}

/// gpu: JSON with every table, CSV of one, -o FILE; the numbers are the
/// table's.
#[test]
fn gpu_machine_readable() {
    let p = f("profiling-lm/net.sql");
    let doc: Value = serde_json::from_str(&ok(&["gpu", "-q", "--format", "json", &p])).unwrap();
    let tables = doc["tables"].as_array().unwrap();
    let names: Vec<&str> = tables.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["devices", "kernels", "roofline"]);
    let dev = &tables[0]["rows"][0];
    assert_eq!(dev["name"], "Tesla V100-SXM2-16GB");
    assert_eq!(dev["sms"], 80);
    assert_eq!(dev["cc"], "7.0");
    assert_eq!(dev["kernels"], 284);
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("k.csv");
    ok(&[
        "gpu",
        "-q",
        "--format",
        "csv",
        "--table",
        "kernels",
        "--top",
        "0",
        "-o",
        o.to_str().unwrap(),
        &p,
    ]);
    let rows = csv_rows(&std::fs::read_to_string(&o).unwrap(), b',');
    // every kernel once: the counts add up to the profile's 284 kernels
    let n: u64 = rows
        .iter()
        .map(|r| r["count"].parse::<u64>().unwrap())
        .sum();
    assert_eq!(n, 284);
    // names are never clipped outside the table format
    assert!(rows.iter().all(|r| !r["kernel"].contains('…')));
}

/// -w fits tables (names clipped with …, numbers whole) and wraps notes;
/// --timeunit converts, --thousands groups.
/// (145: the copy-and-set table of a profile, with its median column, is
/// 142 characters of numbers, which are never cut)
#[test]
fn tables_fit_the_width_and_convert_units() {
    let p = f("nsys-ai/mfu_2gpu_before.sqlite");
    let wide = ok(&["summary", "-q", "--name-width", "0", &p]);
    let narrow = ok(&["summary", "-q", "--name-width", "0", "-w", "145", &p]);
    assert!(wide.lines().any(|l| l.chars().count() > 145));
    assert!(narrow.lines().all(|l| l.chars().count() <= 145), "{narrow}");
    assert!(narrow.contains('…'));
    // the totals column is whole in both: the same numbers in the same order
    let totals = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| Kernel"))
            .map(|l| l.split('|').nth(3).unwrap().trim().to_owned())
            .collect()
    };
    assert_eq!(totals(&wide), totals(&narrow));
    // ms with 3 decimals, from the ns of the CSV, with thousands separators
    let csv = csv_rows(&ok(&["summary", "-q", "--csv", &p]), b',');
    let ms = ok(&["summary", "-q", "--timeunit", "ms", "--thousands", &p]);
    assert!(ms.contains("| Total (ms) |"), "{ms}");
    let first: f64 = csv[0]["total_ns"].parse().unwrap();
    let want = format!("{:.3}", first / 1e6);
    let shown = totals(&ms)[0].replace(',', "");
    assert_eq!(shown, want);
}

/// prof: --format json (JSON Lines, null for unknown), -o FILE, and
/// --format parquet refused with a pointer to parse.
#[test]
fn prof_json_and_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let dict = f("profiling-lm/net.dict");
    let o = dir.path().join("rows.jsonl");
    ok(&[
        "prof",
        "-q",
        "--format",
        "json",
        "-c",
        "idx,op,sil,flops",
        "-o",
        o.to_str().unwrap(),
        &dict,
    ]);
    let text = std::fs::read_to_string(&o).unwrap();
    let rows = crate::records::assert_one_schema(&text);
    assert_eq!(rows.len(), 284);
    let csv = csv_rows(
        &ok(&["prof", "-q", "--csv", "-c", "idx,op,sil,flops", &dict]),
        b',',
    );
    for (j, c) in rows.iter().zip(&csv) {
        assert_eq!(j["idx"].to_string(), c["Idx"]);
        assert_eq!(j["sil"].to_string(), c["Sil(ns)"]);
        match c["FLOPs"].as_str() {
            "" => assert!(j["flops"].is_null()),
            v => assert_eq!(j["flops"].as_f64().unwrap(), v.parse::<f64>().unwrap()),
        }
    }
    let out = run(rprof().args(["prof", "--format", "parquet", &dict]));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rprof parse --format parquet"));
}

/// Completions for three shells, the man page, --version with the commit.
#[test]
fn shell_integration() {
    for shell in ["bash", "zsh", "fish"] {
        let s = ok(&["completions", shell]);
        for word in ["summary", "timeunit", "parquet"] {
            assert!(s.contains(word), "{shell}: {word}");
        }
    }
    let man = ok(&["man"]);
    assert!(
        man.starts_with(".ie") || man.contains(".TH rprof 1"),
        "{}",
        &man[..100]
    );
    assert!(man.contains("completions"));
    let dir = tempfile::tempdir().unwrap();
    ok(&["man", "--dir", dir.path().to_str().unwrap()]);
    for page in ["rprof.1", "rprof-summary.1", "rprof-parse.1"] {
        assert!(dir.path().join(page).is_file(), "{page}");
    }
    let v = ok(&["--version"]);
    assert!(v.starts_with("rprof 0."), "{v}");
    // the commit this test was built from, when this is a git checkout
    // the commit this test was built from, when this is a git checkout
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success());
    match head {
        Some(o) => {
            let head = String::from_utf8(o.stdout).unwrap();
            assert!(v.contains(&format!("(commit {})", head.trim())), "{v}");
        }
        None => assert!(v.contains("(unknown commit)"), "{v}"),
    }
}

/// `script` (util-linux) runs a command on a pseudo-terminal.
fn script() -> bool {
    Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Progress on a terminal only: under a pseudo-terminal the phases show on
/// stderr; piped, or with -q, nothing.
#[test]
fn progress_only_on_a_terminal() {
    let p = f("nsys-ai/mfu_2gpu_before.sqlite");
    let bin = env!("CARGO_BIN_EXE_rprof");
    // piped: stderr holds the parse summary only
    let out = run(rprof().args(["summary", &p]));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.lines().all(|l| l.starts_with("rprof: ")), "{err}");
    assert!(!err.contains('\u{1b}') && !err.contains("reading"), "{err}");
    if !script() {
        eprintln!("note: `script` (util-linux) is absent; skipping the pseudo-terminal part");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("s.csv");
    // the data goes to a file, so the bar has the terminal to itself
    let tty = |extra: &str| -> String {
        let cmd = format!("{bin} summary {extra} --csv -o {} {p}", o.display());
        let out = Command::new("script")
            .args(["-q", "-e", "-c", &cmd, "/dev/null"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = tty("");
    for phase in [
        "reading ",
        "attributing kernels to NVTX ranges",
        "building records",
    ] {
        assert!(shown.contains(phase), "{phase}: {shown:?}");
    }
    let quiet = tty("-q");
    assert!(
        !quiet.contains("reading ") && !quiet.contains("building records"),
        "{quiet:?}"
    );
}

/// export: gzip by name, a window, two ranks in one trace, the
/// utilization counter.
#[test]
fn export_gzip_window_ranks_counter() {
    let dir = tempfile::tempdir().unwrap();
    let p = f("profiling-lm/net.sql");
    let gz = dir.path().join("t.json.gz");
    ok(&["export", "-q", "--chrome", "-o", gz.to_str().unwrap(), &p]);
    let bytes = std::fs::read(&gz).unwrap();
    assert_eq!(&bytes[..2], [0x1f, 0x8b]);
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(bytes.as_slice()),
        &mut text,
    )
    .unwrap();
    let full: Value = serde_json::from_str(&text).unwrap();
    let ev = full["traceEvents"].as_array().unwrap();
    let kernels: Vec<&Value> = ev.iter().filter(|e| e["cat"] == "kernel").collect();
    assert_eq!(kernels.len(), 284);
    // the counter: per bucket, the share of the bucket with a kernel
    // running; its time-weighted mean is the utilization (busy / span)
    let counter: Vec<(f64, f64)> = ev
        .iter()
        .filter(|e| e["ph"] == "C")
        .map(|e| {
            (
                e["ts"].as_f64().unwrap(),
                e["args"]["value"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(counter.len() > 100);
    let mut busy = 0.0;
    for w in counter.windows(2) {
        busy += (w[1].0 - w[0].0) * w[0].1 / 100.0;
    }
    // the union of the kernels' intervals, by a plain sort and merge
    let mut iv: Vec<(f64, f64)> = kernels
        .iter()
        .map(|k| {
            let s = k["ts"].as_f64().unwrap();
            (s, s + k["dur"].as_f64().unwrap())
        })
        .collect();
    iv.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut union = 0.0;
    let mut cur = iv[0];
    for &(s, e) in &iv[1..] {
        if s > cur.1 {
            union += cur.1 - cur.0;
            cur = (s, e);
        } else {
            cur.1 = cur.1.max(e);
        }
    }
    union += cur.1 - cur.0;
    // bucket values are rounded to 0.01 %
    assert!(
        (busy - union).abs() <= union * 1e-3 + 1.0,
        "{busy} vs {union}"
    );

    // a window: only events overlapping [from, to) from the trace's start
    let first = kernels
        .iter()
        .map(|k| k["ts"].as_f64().unwrap())
        .fold(f64::MAX, f64::min);
    let from_us = first + 5_000.0;
    let to_us = first + 10_000.0;
    let win = ok(&[
        "export",
        "-q",
        "--chrome",
        "--from",
        &format!("{from_us}us"),
        "--to",
        &format!("{to_us}us"),
        &p,
    ]);
    let wv: Value = serde_json::from_str(&win).unwrap();
    let in_window: Vec<&Value> = wv["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .collect();
    let want = kernels
        .iter()
        .filter(|k| {
            let s = k["ts"].as_f64().unwrap();
            let e = s + k["dur"].as_f64().unwrap();
            e >= from_us - 0.0005 && s < to_us
        })
        .count();
    assert!(want > 0 && want < 284);
    assert_eq!(in_window.len(), want);

    // two ranks: every process named "rank N: …", sorted by rank, kernels of both
    let two = ok(&[
        "export",
        "-q",
        "--chrome",
        &p,
        &f("flameox/nsight-2025.5.2.sqlite"),
    ]);
    let tv: Value = serde_json::from_str(&two).unwrap();
    let ev = tv["traceEvents"].as_array().unwrap();
    let names: Vec<&str> = ev
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("rank 0: ") || n.starts_with("rank 1: ")),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n.starts_with("rank 1: GPU")));
    let pids_by_rank = |r: &str| -> std::collections::BTreeSet<u64> {
        ev.iter()
            .filter(|e| {
                e["name"] == "process_name" && e["args"]["name"].as_str().unwrap().starts_with(r)
            })
            .map(|e| e["pid"].as_u64().unwrap())
            .collect()
    };
    assert!(pids_by_rank("rank 0").is_disjoint(&pids_by_rank("rank 1")));
    let k = ev.iter().filter(|e| e["cat"] == "kernel").count();
    assert_eq!(k, 284 + 3);
    // flow ids are unique across the ranks
    let starts: Vec<u64> = ev
        .iter()
        .filter(|e| e["ph"] == "s")
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    let unique: std::collections::BTreeSet<u64> = starts.iter().copied().collect();
    assert_eq!(unique.len(), starts.len());
}

/// Every `sh` block of docs/examples.md runs from a folder that has the
/// fixtures, with this rprof on PATH.
#[test]
fn examples_run() {
    let doc = std::fs::read_to_string(root().join("docs/examples.md")).unwrap();
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in doc.lines() {
        match (&mut cur, line.trim_start()) {
            (None, "```sh") => cur = Some(String::new()),
            (Some(b), "```") => {
                blocks.push(std::mem::take(b));
                cur = None;
            }
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            _ => {}
        }
    }
    assert!(blocks.len() >= 3);
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join("fixtures"), dir.path().join("fixtures")).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_rprof")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for b in &blocks {
        let out = Command::new("sh")
            .args(["-e", "-c", b])
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{b}\n{err}");
        assert!(
            !err.contains("Error") && !err.contains("panicked"),
            "{b}\n{err}"
        );
    }
    // the awk example printed real numbers: op names with FLOP sums > 0
    let awk = Command::new("sh")
        .args([
            "-c",
            "rprof parse fixtures/profiling-lm/net.sql | rprof prof -c op,flops | awk 'NR > 1 {f[$1] += $2} END {for (o in f) print o, f[o]}' | sort -k2,2nr | head -5",
        ])
        .current_dir(dir.path())
        .env("PATH", &path)
        .output()
        .unwrap();
    let text = String::from_utf8(awk.stdout).unwrap();
    assert_eq!(text.lines().count(), 5, "{text}");
    for l in text.lines() {
        let n: f64 = l.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(n > 0.0, "{l}");
    }
    for f in [
        "net.jsonl",
        "net.jsonl.meta.json",
        "kernels.csv",
        "job/rank0.parquet",
        "job/rank1.parquet",
        "timeline.json.gz",
    ] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
}

/// `-` is standard input for every command that reads the profile itself
/// (issue 18 item 4): the profile piped in gives the same output as the
/// file named, and the messages name it `-`. A record file on standard
/// input is refused by a command that needs the profile, in one line.
#[test]
fn every_profile_command_reads_standard_input() {
    use std::io::Write;
    let p = f("nsys-ai/mfu_2gpu_before.sqlite");
    let bytes = std::fs::read(&p).unwrap();
    let piped = |args: &[&str], input: &[u8]| {
        let mut child = rprof()
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().unwrap();
        // the command may stop reading early (an error): a broken pipe here
        let _ = writer.join().unwrap();
        out
    };
    // CSV: a table's column widths would differ with the file's name
    for cmd in [
        &[
            "stats",
            "-r",
            "cuda_gpu_kern_sum,nvtx_sum",
            "--format",
            "csv",
        ][..],
        &["mem", "--format", "csv"],
        &["steps", "--format", "csv"],
        &["idle", "--format", "csv"],
        &["launch", "--format", "csv"],
        &["dist", "--format", "csv"],
    ] {
        let mut named: Vec<&str> = cmd.to_vec();
        named.push(&p);
        let want = run(rprof().args(&named));
        assert!(want.status.success(), "{named:?}");
        let mut dash: Vec<&str> = cmd.to_vec();
        dash.push("-");
        let got = piped(&dash, &bytes);
        assert!(
            got.status.success(),
            "{dash:?}: {}",
            String::from_utf8_lossy(&got.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&got.stdout),
            String::from_utf8_lossy(&want.stdout).replace(p.as_str(), "-"),
            "{dash:?}"
        );
        let err = String::from_utf8(got.stderr).unwrap();
        assert!(err.lines().any(|l| l.starts_with("rprof: -: ")), "{err}");
        assert!(
            !err.contains("rprof-input-"),
            "a temporary name leaked: {err}"
        );
    }
    // report and export write files: the same bytes as from the file named
    let dir = tempfile::tempdir().unwrap();
    for (cmd, ext) in [(&["report"][..], "html"), (&["export", "--chrome"], "json")] {
        let a = dir.path().join(format!("named.{ext}"));
        let b = dir.path().join(format!("piped.{ext}"));
        let mut named: Vec<&str> = cmd.to_vec();
        named.extend(["-q", "-o", a.to_str().unwrap(), &p]);
        assert!(run(rprof().args(&named)).status.success(), "{named:?}");
        let mut dash: Vec<&str> = cmd.to_vec();
        dash.extend(["-q", "-o", b.to_str().unwrap(), "-"]);
        let got = piped(&dash, &bytes);
        assert!(got.status.success(), "{dash:?}");
        let (a, b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        // the page names its input: `-` instead of the path
        assert_eq!(
            String::from_utf8_lossy(&a).replace(p.as_str(), "-"),
            String::from_utf8_lossy(&b),
            "{dash:?}"
        );
    }
    // records on standard input: one line, exit 1
    let records = std::fs::read(root().join("fixtures/profiling-lm/net.dict")).unwrap();
    let out = piped(&["steps", "-"], &records);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("needs the profile itself"), "{err}");
}

/// The long commands that read a profile show what they are doing on a
/// terminal (a pseudo-terminal here, through `script`) and nothing with
/// `-q` (issue 18 item 8).
#[test]
fn every_long_command_shows_progress_on_a_terminal() {
    if !script() {
        eprintln!("note: `script` (util-linux) is absent; skipping the pseudo-terminal test");
        return;
    }
    let p = f("nsys-ai/mfu_2gpu_before.sqlite");
    let bin = env!("CARGO_BIN_EXE_rprof");
    let dir = tempfile::tempdir().unwrap();
    for (cmd, label) in [
        ("stats -r cuda_gpu_kern_sum --format csv", "reading "),
        ("mem --format csv", "reading "),
        ("steps --format csv", "reading "),
        ("idle --format csv", "reading "),
        ("launch --format csv", "reading "),
        ("dist --format csv", "reading profiles"),
        ("report", "reading "),
    ] {
        let o = dir.path().join("out");
        let tty = |extra: &str| -> String {
            let line = format!("{bin} {cmd} {extra} -o {} {p}", o.display());
            let out = Command::new("script")
                .args(["-q", "-e", "-c", &line, "/dev/null"])
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{line}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let shown = tty("");
        assert!(shown.contains(label), "{cmd}: {shown:?}");
        let quiet = tty("-q");
        assert!(!quiet.contains(label), "{cmd} -q: {quiet:?}");
    }
}
