//! `rprof parse`: goldens, the corpus, synthetic nsys traces, bad input.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use rprof_testkit::{Synth, SynthGpu, SynthKernel, SynthRange};
use serde_json::Value;

use crate::util::{fixture, rprof, run};

fn stdout_of(args: &[&str]) -> String {
    let out = run(rprof().args(args));
    assert!(
        out.status.success(),
        "rprof {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Records of a JSON Lines output, checked to be of one schema (see
/// `crate::records::assert_one_schema`).
fn json_records(text: &str) -> Vec<Value> {
    crate::records::assert_one_schema(text)
}

fn parse_json(path: &Path) -> Vec<Value> {
    json_records(&stdout_of(&["parse", "-q", path.to_str().unwrap()]))
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

// ---------------------------------------------------------------- goldens

/// apex.pyprof's parse of run1 today (golden/parse-apex.dict), byte for byte.
#[test]
fn golden_compat_pydict_equals_apex_parse() {
    let got = stdout_of(&[
        "parse",
        "--compat",
        "--format",
        "pydict",
        fixture("profiling-lm/net.sql").to_str().unwrap(),
    ]);
    let want = std::fs::read_to_string(fixture("profiling-lm/golden/parse-apex.dict")).unwrap();
    assert_eq!(got.lines().count(), 284);
    assert!(
        got == want,
        "compat pydict output differs from golden/parse-apex.dict"
    );
}

/// The committed 2020 net.dict: every field equal; kLongName equal except
/// the 43 records whose 2020 demangler was wrong (golden/README.md).
#[test]
fn golden_compat_matches_2020_net_dict_up_to_the_old_demangler() {
    let got = stdout_of(&[
        "parse",
        "--compat",
        "--format",
        "pydict",
        fixture("profiling-lm/net.sql").to_str().unwrap(),
    ]);
    let want = std::fs::read_to_string(fixture("profiling-lm/net.dict")).unwrap();
    let old_demangler: Vec<usize> = [
        2, 131, 182, 197, 14, 49, 96, 102, 116, 124, 147, 153, 167, 175, 192,
    ]
    .into_iter()
    .chain(229..=256)
    .collect();
    assert_eq!(old_demangler.len(), 43);
    let (mut same, mut differ) = (0, 0);
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        let line = i + 1;
        let cut = |s: &str| s[..s.find(", 'kLongName': ").unwrap()].to_owned();
        assert_eq!(cut(g), cut(w), "record {line} differs before kLongName");
        if g == w {
            same += 1;
        } else {
            assert!(
                old_demangler.contains(&line),
                "record {line}: kLongName differs"
            );
            differ += 1;
        }
    }
    assert_eq!((same, differ), (241, 43));
}

/// The default mode reads the same file into the same kernel fields; of
/// the marker fields only those the documented fixes touch differ
/// (docs/compat.md: [B15] backward op names, [B16] seqId/altSeqId).
#[test]
fn default_json_on_nvprof_keeps_pyprof_fields() {
    let recs = parse_json(&fixture("profiling-lm/net.sql"));
    assert_eq!(recs.len(), 284);
    let golden = std::fs::read_to_string(fixture("profiling-lm/golden/parse-apex.dict")).unwrap();
    let compat = stdout_of(&[
        "parse",
        "--compat",
        fixture("profiling-lm/net.sql").to_str().unwrap(),
    ]);
    let compat = json_records(&compat);
    for (r, c) in recs.iter().zip(&compat) {
        for key in [
            "kShortName",
            "kDuration",
            "dir",
            "marker",
            "trace",
            "layer",
            "seqMarker",
            "tid",
            "grid",
            "block",
            "kLongName",
        ] {
            assert_eq!(r[key], c[key], "{key}");
        }
        assert!(r["kStart"].is_i64() && r["rStart"].is_i64());
        assert_eq!(r["deviceName"], "Tesla V100-SXM2-16GB");
        assert_eq!(r["smCount"], 80);
        assert_eq!(r["api"], "cudaLaunchKernel");
        assert_eq!(r["launched"], true);
    }
    assert_eq!(golden.lines().count(), recs.len());
    let differ = |key: &str| {
        recs.iter()
            .zip(&compat)
            .filter(|(r, c)| r[key] != c[key])
            .count()
    };
    // run1 never has two sequence ids left after the fold, so [B16] changes nothing
    assert_eq!((differ("seqId"), differ("altSeqId")), (0, 0));
    // [B15]: `ReluBackward0` is a backward node too: op ['threshold', 'Relu']
    assert_eq!((differ("op"), differ("mod")), (5, 5));
}

// ----------------------------------------------------------------- corpus

fn kernel_rows(path: &Path) -> u64 {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let count = |t: &str| -> u64 {
        if tables.iter().any(|x| x == t) {
            conn.query_row(&format!("SELECT count(*) FROM {t}"), [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap() as u64
        } else {
            0
        }
    };
    if tables.iter().any(|t| t == "StringTable") {
        count("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL") + count("CUPTI_ACTIVITY_KIND_KERNEL")
    } else {
        count("CUPTI_ACTIVITY_KIND_KERNEL")
    }
}

fn profiles_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            profiles_under(&p, out);
        } else if matches!(
            p.extension().and_then(|x| x.to_str()),
            Some("sqlite" | "sql" | "prof")
        ) {
            out.push(p);
        }
    }
}

/// Every profile of the shared corpus (and its nsys-nvtx-local exports)
/// parses with exit 0 and one record per kernel row. Reads ../shared: skipped
/// when absent.
#[test]
fn corpus_every_profile_parses_one_record_per_kernel_row() {
    let corpus = corpus_or_skip!();
    let mut files = Vec::new();
    profiles_under(&corpus, &mut files);
    files.sort();
    let mut checked = 0;
    for f in &files {
        if f.ends_with("dlprof_dldb.sqlite") {
            continue; // DLProf's own database, not a profiler export (see below)
        }
        let out = run(rprof().args(["parse", "-q"]).arg(f));
        assert!(
            out.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let records = crate::records::assert_one_schema(&text).len() as u64;
        assert_eq!(records, kernel_rows(f), "{}", f.display());
        checked += 1;
    }
    assert!(checked >= 17, "only {checked} profiles found");
}

/// DLProf's database is a SQLite file in the corpus but not a profile: a
/// clear error, not a crash.
#[test]
fn corpus_dlprof_database_is_rejected_clearly() {
    let corpus = corpus_or_skip!();
    let f = corpus.join("dlprof-odema/w_Relu/dlprof_dldb.sqlite");
    let out = run(rprof().arg("parse").arg(&f));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("dlprof_dldb.sqlite")
            && err.contains("not an Nsight Systems or nvprof profile"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

/// The 2022.1 export and its 2022.4 re-export of the same capture give the
/// same records (corpus README: identical kernel and NVTX rows).
#[test]
fn corpus_same_capture_two_schemas_same_records() {
    let corpus = corpus_or_skip!();
    let a = parse_json(&corpus.join("dlprof-odema/w_Relu/nsys_profile.sqlite"));
    let b =
        parse_json(&corpus.join("dlprof-odema/w_Relu/nsys_profile.reexported-nsys2022.4.2.sqlite"));
    assert_eq!(a.len(), 59);
    for (x, y) in a.iter().zip(&b) {
        for key in [
            "kShortName",
            "kDuration",
            "seqMarker",
            "seqId",
            "dir",
            "op",
            "marker",
            "stack",
            "grid",
            "block",
        ] {
            assert_eq!(x[key], y[key], "{key}");
        }
    }
}

/// NCCL ranges whose text is a registered string (textId) are read, with
/// their domain.
#[test]
fn registered_strings_and_domains_from_a_real_2026_export() {
    let recs = parse_json(&fixture("nsys-ai/mfu_2gpu_before.sqlite"));
    assert_eq!(recs.len(), 4010);
    // nsys's `<unnamed>` namespaces do not empty the short name
    assert!(recs.iter().all(|r| r["kShortName"] != ""));
    let nccl = recs
        .iter()
        .filter(|r| {
            r["stack"].as_array().is_some_and(|s| {
                s.iter()
                    .any(|t| t.as_str().is_some_and(|t| t.starts_with("nccl")))
            })
        })
        .count();
    assert!(nccl > 0, "no kernel under an NCCL range");
    let with_domain = recs
        .iter()
        .find(|r| {
            r["domains"]
                .as_array()
                .is_some_and(|d| d.iter().any(|x| x != ""))
        })
        .expect("a record with a non-default domain");
    // this trimmed export lost the domain-creation rows: the id is kept
    assert!(
        with_domain["domains"]
            .as_array()
            .unwrap()
            .contains(&Value::from("#1"))
    );
    // PyTorch 2.x markers: seq ids are read (PyProf crashes on `, op_id =`)
    assert!(
        recs.iter()
            .any(|r| !r["seqId"].as_array().unwrap().is_empty())
    );
    // kernels launched before the trimmed window have no launch row: kept
    assert_eq!(recs.iter().filter(|r| r["launched"] == false).count(), 24);
    assert!(
        recs.iter()
            .any(|r| r["api"] == "cuLaunchKernelEx" || r["api"] == "cuLaunchKernel")
    );
}

#[test]
fn old_2021_schema_without_mangled_names_or_metadata() {
    let recs = parse_json(&fixture("mordred/report1_2021.sqlite"));
    assert_eq!(recs.len(), 12);
    assert!(recs.iter().all(|r| r["deviceName"] == "Quadro RTX 6000"));
    assert!(recs.iter().all(|r| r["kShortName"] != ""));
}

#[test]
fn cuda_graph_export_parses() {
    let recs = parse_json(&fixture("flameox/nsight-2025.5.2.sqlite"));
    assert_eq!(recs.len(), 3);
    assert!(recs.iter().all(|r| r["kShortName"] == "add_one"));
}

// ------------------------------------------------------------- properties

fn sha(path: &Path) -> Vec<u8> {
    let mut f = std::fs::File::open(path).unwrap();
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).unwrap();
    buf
}

/// Inputs are opened read-only: the bytes (and the directory listing: no
/// journal or lock files) are unchanged.
#[test]
fn input_is_unchanged() {
    let dir = tmp();
    for src in ["nsys-ai/mfu_2gpu_before.sqlite", "profiling-lm/net.sql"] {
        let p = dir.path().join(Path::new(src).file_name().unwrap());
        std::fs::copy(fixture(src), &p).unwrap();
        let before = sha(&p);
        let meta_before = std::fs::metadata(&p).unwrap().modified().unwrap();
        stdout_of(&["parse", "-q", p.to_str().unwrap()]);
        assert!(sha(&p) == before, "{src} changed");
        assert_eq!(
            std::fs::metadata(&p).unwrap().modified().unwrap(),
            meta_before
        );
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn same_bytes_for_any_thread_count() {
    let f = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    let one = run(rprof()
        .env("RAYON_NUM_THREADS", "1")
        .args(["parse", "-q"])
        .arg(&f));
    let four = run(rprof()
        .env("RAYON_NUM_THREADS", "4")
        .args(["parse", "-q"])
        .arg(&f));
    assert!(one.status.success() && four.status.success());
    assert!(one.stdout == four.stdout);
}

/// `rprof parse big | head -1`: exit 0, nothing on stderr.
#[test]
fn closed_pipe_ends_quietly() {
    let mut child = rprof()
        .args(["parse"])
        .arg(fixture("nsys-ai/mfu_2gpu_before.sqlite"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("{\"kShortName\":"), "{first}");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn output_file_option() {
    let dir = tmp();
    let o = dir.path().join("net.dict");
    let out = run(rprof()
        .args(["parse", "-q", "-o"])
        .arg(&o)
        .arg(fixture("profiling-lm/net.sql")));
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&o).unwrap().lines().count(), 284);
}

#[test]
fn summary_on_stderr() {
    let out = run(rprof()
        .arg("parse")
        .arg(fixture("nsys-ai/mfu_2gpu_before.sqlite")));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("4010 kernel rows, 4010 records, 24 kernels without a launch call, 24 without an enclosing NVTX range (24 of them because they have no launch call)"),
        "{err}"
    );
}

// -------------------------------------------------------- synthetic traces

fn write(synth: &Synth, dir: &tempfile::TempDir, name: &str) -> PathBuf {
    let p = dir.path().join(name);
    synth.write_nsys(&p).unwrap();
    p
}

/// Push/pop nesting, start/end ranges, registered strings, domains, an open
/// range, a mark, a range on another thread, and a driver-API launch.
#[test]
fn synthetic_nvtx_features() {
    let dir = tmp();
    let mut s = Synth::default();
    s.gpus.push(SynthGpu::a100());
    s.kernels
        .push(SynthKernel::new("k_a", 1000, 1100, 1).launched_at(500, 520));
    let mut k2 = SynthKernel::new("k_b", 2000, 2100, 2).launched_at(1500, 1520);
    k2.launch = Some((1500, 1520, "cuLaunchKernelEx".into()));
    s.kernels.push(k2);
    s.ranges.push(SynthRange::push("outer", 100, 3000));
    s.ranges.push(SynthRange::push("inner", 400, 600));
    let mut reg = SynthRange::push("registered text", 450, 550);
    reg.registered = true;
    reg.domain = 1;
    s.ranges.push(reg);
    let mut dom = SynthRange::push("MyDomain", 0, 0);
    dom.event_type = 75;
    dom.end = None;
    dom.domain = 1;
    s.ranges.push(dom);
    let mut se = SynthRange::push("start-end", 1400, 1600);
    se.event_type = 60;
    s.ranges.push(se);
    let mut open = SynthRange::push("still open", 1450, 0);
    open.end = None;
    s.ranges.push(open);
    let mut mark = SynthRange::push("a mark", 1510, 0);
    mark.event_type = 34;
    mark.end = None;
    s.ranges.push(mark);
    let mut other = SynthRange::push("other thread", 0, 5000);
    other.tid = 101;
    s.ranges.push(other);
    let p = write(&s, &dir, "t.sqlite");
    let recs = parse_json(&p);
    assert_eq!(recs.len(), 2);
    assert_eq!(
        recs[0]["stack"],
        serde_json::json!(["outer", "inner", "registered text"])
    );
    assert_eq!(recs[0]["domains"], serde_json::json!(["", "", "MyDomain"]));
    assert_eq!(recs[0]["op"], serde_json::json!(["registered text"]));
    assert_eq!(
        recs[1]["stack"],
        serde_json::json!(["outer", "start-end", "still open"])
    );
    assert_eq!(recs[1]["api"], "cuLaunchKernelEx");
    assert_eq!(recs[0]["deviceName"], "NVIDIA A100-SXM4-40GB");
    assert_eq!(recs[0]["smCount"], 108);
    assert_eq!(recs[0]["tid"], 100);
    assert_eq!(recs[0]["pid"], 100);
}

/// Kernels come in start order; a kernel without a launch row is kept and
/// flagged; correlation ids that repeat across processes join to the right
/// process; CUDA backtrace duplicates (eventClass 67) are ignored.
#[test]
fn synthetic_joins() {
    let dir = tmp();
    let mut s = Synth::default();
    let mut a = SynthKernel::new("late", 5000, 5100, 7);
    a.pid = 200;
    a.tid = 201;
    s.kernels.push(a);
    s.kernels.push(SynthKernel::new("early", 1000, 1100, 7));
    let mut orphan = SynthKernel::new("graph_child", 3000, 3100, 99);
    orphan.launch = None;
    s.kernels.push(orphan);
    s.extra_calls
        .push((890, 960, 100, 100, 7, "cudaLaunchKernel".into(), 67));
    let mut r = SynthRange::push("proc200", 4000, 6000);
    r.pid = 200;
    r.tid = 201;
    s.ranges.push(r);
    s.ranges.push(SynthRange::push("proc100", 800, 1000));
    let p = write(&s, &dir, "t.sqlite");
    let out = run(rprof().arg("parse").arg(&p));
    assert!(out.status.success());
    let recs = json_records(std::str::from_utf8(&out.stdout).unwrap());
    let names: Vec<_> = recs
        .iter()
        .map(|r| r["kShortName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["early", "graph_child", "late"]);
    assert_eq!(recs[0]["stack"], serde_json::json!(["proc100"]));
    assert_eq!(recs[0]["rStart"], 900);
    assert_eq!(recs[2]["stack"], serde_json::json!(["proc200"]));
    assert_eq!(recs[2]["pid"], 200);
    assert_eq!(recs[1]["launched"], false);
    assert_eq!(recs[1]["op"], serde_json::json!([]));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("1 kernels without a launch call"), "{err}");
}

/// PyTorch 2.x markers: sequence ids are read, `Backward0`/`Backward1`
/// count as backward (the default mode fixes [B14]/[B15]).
#[test]
fn synthetic_modern_pytorch_markers() {
    let dir = tmp();
    let mut s = Synth::default();
    s.kernels
        .push(SynthKernel::new("gemm_fwd", 1000, 1100, 1).launched_at(300, 320));
    s.kernels
        .push(SynthKernel::new("gemm_bwd", 2000, 2100, 2).launched_at(1300, 1320));
    s.kernels
        .push(SynthKernel::new("mul_bwd", 3000, 3100, 3).launched_at(2300, 2320));
    s.ranges.push(SynthRange::push("aten::linear, seq = 10, op_id = 33, sizes = [[32, 512], [1024, 512], [1024]], input_op_ids = [(30,0), (31,0), (32,0)]", 100, 900));
    s.ranges.push(SynthRange::push(
        "aten::addmm, seq = 11, op_id = 35, sizes = [[1024], [32, 512], [512, 1024], [], []]",
        200,
        800,
    ));
    s.ranges.push(SynthRange::push(
        "autograd::engine::evaluate_function: AddmmBackward0",
        1100,
        1900,
    ));
    s.ranges.push(SynthRange::push(
        "AddmmBackward0, seq = 11, op_id = 80, sizes = [[32, 1024]]",
        1200,
        1800,
    ));
    s.ranges.push(SynthRange::push(
        "MulBackward1, seq = 12, op_id = 90",
        2200,
        2800,
    ));
    let p = write(&s, &dir, "t.sqlite");
    let recs = parse_json(&p);
    assert_eq!(recs[0]["dir"], "fprop");
    assert_eq!(recs[0]["seqId"], serde_json::json!([10]));
    assert_eq!(recs[0]["altSeqId"], serde_json::json!([11]));
    assert_eq!(recs[1]["dir"], "bprop");
    assert_eq!(recs[1]["seqId"], serde_json::json!([11]));
    assert_eq!(recs[1]["op"], serde_json::json!(["Addmm"]));
    assert_eq!(recs[2]["dir"], "bprop");
    assert_eq!(recs[2]["op"], serde_json::json!(["Mul"]));
    // --compat keeps PyProf's reading: Backward0/1 are not backward to it
    let compat = json_records(&stdout_of(&[
        "parse",
        "-q",
        "--compat",
        p.to_str().unwrap(),
    ]));
    assert_eq!(compat[1]["op"], serde_json::json!(["AddmmBackward0"]));
    assert_eq!(compat[2]["dir"], "fprop");
}

/// Zero-length and reversed kernels are kept (duration 0, flagged and
/// counted); `--strict` refuses them; `--compat` aborts like apex.pyprof.
#[test]
fn zero_length_kernels() {
    let dir = tmp();
    let mut s = Synth::default();
    s.kernels.push(SynthKernel::new("zero", 1000, 1000, 1));
    s.kernels.push(SynthKernel::new("reversed", 2000, 1990, 2));
    s.kernels.push(SynthKernel::new("fine", 3000, 3010, 3));
    let p = write(&s, &dir, "t.sqlite");
    let out = run(rprof().arg("parse").arg(&p));
    assert!(out.status.success());
    let recs = json_records(std::str::from_utf8(&out.stdout).unwrap());
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0]["kDuration"], 0);
    assert_eq!(recs[0]["badTime"], true);
    assert_eq!(recs[1]["kDuration"], 0);
    assert_eq!(recs[2]["kDuration"], 10);
    assert_eq!(recs[2]["badTime"], false);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("2 kernels end no later than they start"),
        "{err}"
    );
    let strict = run(rprof().args(["parse", "--strict"]).arg(&p));
    assert_eq!(strict.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("end <= start"));
    let compat = run(rprof().args(["parse", "--compat"]).arg(&p));
    assert_eq!(compat.status.code(), Some(1));
    let err = String::from_utf8_lossy(&compat.stderr);
    assert!(
        err.contains("apex.pyprof aborts here") && err.contains("t.sqlite"),
        "{err}"
    );
}

/// A kernel table whose rows have NULL times (a hand-edited or broken
/// export): those rows are skipped and counted; NULL sizes read as 0.
#[test]
fn null_fields() {
    let dir = tmp();
    let mut s = Synth::default();
    s.kernels.push(SynthKernel::new("ok", 1000, 1100, 1));
    s.kernels.push(SynthKernel::new("nulls", 2000, 2100, 2));
    let ddl = rprof_testkit::NSYS_DDL
        .replace(
            "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL",
            "start INTEGER, end INTEGER, deviceId INTEGER",
        )
        .replace("gridX INTEGER NOT NULL", "gridX INTEGER");
    let p = dir.path().join("t.sqlite");
    s.write_with(&p, &ddl).unwrap();
    let conn = rusqlite::Connection::open(&p).unwrap();
    conn.execute(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = NULL WHERE correlationId = 2",
        [],
    )
    .unwrap();
    conn.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = NULL, deviceId = NULL WHERE correlationId = 1", []).unwrap();
    drop(conn);
    let out = run(rprof().arg("parse").arg(&p));
    assert!(out.status.success());
    let recs = json_records(std::str::from_utf8(&out.stdout).unwrap());
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["grid"], serde_json::json!([0, 1, 1]));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("2 kernel rows, 1 records,"), "{err}");
    assert!(
        err.contains("skipped 1 kernel rows with NULL start or end"),
        "{err}"
    );
    let strict = run(rprof().args(["parse", "--strict"]).arg(&p));
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn malformed_markers_are_kept_and_counted() {
    let dir = tmp();
    let mut s = Synth::default();
    s.kernels.push(SynthKernel::new("k", 1000, 1100, 1));
    s.ranges.push(SynthRange::push(
        "{'mod': 'torch', 'op': 'add', 'args': [{'name': ''",
        100,
        990,
    ));
    s.ranges.push(SynthRange::push(
        "aten::mm, seq = 1, sizes = [[oops]]",
        200,
        980,
    ));
    s.ranges
        .push(SynthRange::push("\u{1}\u{7f} odd bytes é", 300, 970));
    let p = write(&s, &dir, "t.sqlite");
    let out = run(rprof().arg("parse").arg(&p));
    assert!(out.status.success());
    let recs = json_records(std::str::from_utf8(&out.stdout).unwrap());
    // the unreadable PyProf-looking marker is kept in the stack as text
    assert_eq!(recs[0]["stack"].as_array().unwrap().len(), 3);
    assert_eq!(recs[0]["marker"], serde_json::json!([]));
    assert_eq!(recs[0]["seqId"], serde_json::json!([1]));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("1 PyProf markers could not be read")
    );
    // pydict output of the same (escapes the control characters)
    let py = stdout_of(&["parse", "--format", "pydict", p.to_str().unwrap()]);
    assert!(py.contains("\\x01\\x7f odd bytes é") || !py.contains('\u{1}'));
}

// -------------------------------------------------------------- bad input

fn fails_with(args: &[&std::ffi::OsStr], code: i32, needles: &[&str]) {
    let out = run(rprof().args(args));
    assert_eq!(out.status.code(), Some(code), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err}");
    }
    assert!(out.stdout.is_empty(), "{args:?}: stdout not empty");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    if code == 1 {
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

#[test]
fn bad_missing_file_and_directory() {
    let dir = tmp();
    let missing = dir.path().join("nope.sqlite");
    fails_with(
        &[os("parse"), missing.as_os_str()],
        1,
        &["nope.sqlite", "no such file"],
    );
    assert!(!missing.exists(), "a missing input must not be created");
    fails_with(
        &[os("parse"), dir.path().as_os_str()],
        1,
        &["is a directory"],
    );
}

#[test]
fn bad_not_sqlite_and_empty_file() {
    let dir = tmp();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello, I am not a database\n").unwrap();
    fails_with(
        &[os("parse"), text.as_os_str()],
        1,
        &["notes.txt", "not a SQLite database"],
    );
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, "").unwrap();
    fails_with(
        &[os("parse"), empty.as_os_str()],
        1,
        &["empty.sqlite", "0 bytes"],
    );
}

#[test]
fn bad_sqlite_without_profile_tables() {
    let dir = tmp();
    let p = dir.path().join("other.sqlite");
    let conn = rusqlite::Connection::open(&p).unwrap();
    conn.execute_batch("CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('x');")
        .unwrap();
    drop(conn);
    fails_with(
        &[os("parse"), p.as_os_str()],
        1,
        &["other.sqlite", "not an Nsight Systems or nvprof profile"],
    );
}

#[test]
fn bad_empty_profile() {
    let dir = tmp();
    let p = write(&Synth::default(), &dir, "empty.sqlite");
    fails_with(
        &[os("parse"), p.as_os_str()],
        1,
        &["empty.sqlite", "empty profile"],
    );
}

#[test]
fn bad_truncated_and_corrupt_databases() {
    let dir = tmp();
    let src = std::fs::read(fixture("nsys-ai/mfu_2gpu_before.sqlite")).unwrap();
    let cut = dir.path().join("cut.sqlite");
    std::fs::write(&cut, &src[..src.len() / 3]).unwrap();
    let out = run(rprof().arg("parse").arg(&cut));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("cut.sqlite") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!err.contains("panicked"));

    let mut bad = src.clone();
    for b in &mut bad[8192..src.len() / 2] {
        *b = 0xA5;
    }
    let corrupt = dir.path().join("corrupt.sqlite");
    std::fs::write(&corrupt, &bad).unwrap();
    let out = run(rprof().arg("parse").arg(&corrupt));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("corrupt.sqlite") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn bad_usage_exits_2() {
    for args in [
        vec!["parse"],
        vec!["parse", "--bogus", "x"],
        vec!["parse", "--format", "xml", "x"],
        vec!["frobnicate"],
    ] {
        let out = run(rprof().args(&args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn nvtx_only_profile_is_not_an_error() {
    let dir = tmp();
    let mut s = Synth::default();
    s.ranges.push(SynthRange::push("only nvtx", 0, 10));
    let p = write(&s, &dir, "nvtx.sqlite");
    let out = run(rprof().arg("parse").arg(&p));
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 0);
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("no GPU kernels in this profile")
    );
}

/// nvprof input edited to lose one launch row and one end marker:
/// the default mode keeps the kernel (flagged) and the open range; apex
/// aborts on the missing launch (P4), and so does `--compat`.
#[test]
fn nvprof_missing_launch_and_unpaired_marker() {
    let dir = tmp();
    let p = dir.path().join("edited.sql");
    std::fs::copy(fixture("profiling-lm/net.sql"), &p).unwrap();
    let conn = rusqlite::Connection::open(&p).unwrap();
    conn.execute(
        "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ORDER BY _id_ LIMIT 1 OFFSET 5)",
        [],
    )
    .unwrap();
    // the outermost range of the first kernel loses its end row
    conn.execute(
        "DELETE FROM CUPTI_ACTIVITY_KIND_MARKER WHERE flags = 4 AND id = (SELECT min(id) FROM CUPTI_ACTIVITY_KIND_MARKER WHERE flags = 2)",
        [],
    )
    .unwrap();
    drop(conn);
    let out = run(rprof().arg("parse").arg(&p));
    assert!(out.status.success());
    let recs = json_records(std::str::from_utf8(&out.stdout).unwrap());
    assert_eq!(recs.len(), 284);
    assert_eq!(recs.iter().filter(|r| r["launched"] == false).count(), 1);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("1 kernels without a launch call"), "{err}");
    let compat = run(rprof().args(["parse", "--compat"]).arg(&p));
    assert_eq!(compat.status.code(), Some(1));
    let err = String::from_utf8(compat.stderr).unwrap();
    assert!(
        err.contains("has 0 launch calls") && err.contains("apex.pyprof aborts"),
        "{err}"
    );
}

/// PyProf processes kernels in table order and deletes, per thread, ranges
/// that ended before the launch it just handled ([B5]); a kernel that comes
/// later in the table but was launched earlier loses its ranges. `--compat`
/// reproduces that; the default mode sorts by start time and keeps them.
#[test]
fn compat_emulates_pyprof_marker_deletion() {
    let dir = tmp();
    let mut s = Synth::default();
    s.kernels
        .push(SynthKernel::new("second", 2000, 2100, 2).launched_at(1500, 1520));
    s.kernels
        .push(SynthKernel::new("first", 1000, 1100, 1).launched_at(500, 520));
    s.ranges.push(SynthRange::push("around first", 400, 600));
    let p = write(&s, &dir, "t.sqlite");
    let compat = json_records(&stdout_of(&[
        "parse",
        "-q",
        "--compat",
        p.to_str().unwrap(),
    ]));
    assert_eq!(compat[1]["kShortName"], "first");
    assert_eq!(compat[1]["op"], serde_json::json!([]));
    let fixed = parse_json(&p);
    assert_eq!(fixed[0]["kShortName"], "first");
    assert_eq!(fixed[0]["op"], serde_json::json!(["around first"]));
}
