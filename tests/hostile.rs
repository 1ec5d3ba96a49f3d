//! Hostile input (issue 19) and output safety (issue 18, items 5-7): one
//! regression test per failure found, named after it. Inputs that once
//! exhausted memory or time run under a memory cap (`ulimit -v`) and a time
//! limit (`timeout`) and must end with exit 0, 1 or 2.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::{fixture, rprof, run};

const NSYS: &str = "mordred/report1_2021.sqlite";

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A copy of a fixture in `dir`.
fn copy(dir: &Path, rel: &str, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(fixture(rel), &p).unwrap();
    p
}

/// Run rprof with `args` under a virtual-memory cap (MiB) and a time limit
/// (s), through `sh -c 'ulimit -v …; exec timeout …'`.
fn run_limited(args: &[&str], mem_mib: u64, secs: u64) -> Output {
    let bin = env!("CARGO_BIN_EXE_rprof");
    let quoted: Vec<String> = std::iter::once(bin)
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let script = format!(
        "ulimit -v {}; exec timeout -s KILL {secs} {}",
        mem_mib * 1024,
        quoted.join(" ")
    );
    Command::new("sh").arg("-c").arg(script).output().unwrap()
}

/// Exit 0, 1 or 2 (not a panic's 101, an abort's 134, a kill by timeout).
fn assert_clean_exit(o: &Output, want: i32) {
    assert_eq!(o.status.code(), Some(want), "stderr: {}", stderr(o));
    let e = stderr(o);
    assert!(!e.contains("panicked"), "{e}");
    for line in e.lines() {
        assert!(
            line.starts_with("rprof: "),
            "a message line without rprof: {line:?}"
        );
        assert!(
            !line.chars().any(char::is_control),
            "a control character: {line:?}"
        );
    }
}

/// A Kineto trace with these kernel events (already JSON) and a device.
fn kineto(dir: &Path, name: &str, warp: &str, kernels: &[String]) -> PathBuf {
    let text = format!(
        r#"{{"deviceProperties": [{{"id": 0, "name": "NVIDIA A100", "computeMajor": 8, "computeMinor": 0,
 "numSms": 108, "warpSize": {warp}, "maxThreadsPerMultiprocessor": 2048, "regsPerMultiprocessor": 65536,
 "regsPerBlock": 65536, "maxThreadsPerBlock": 1024, "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936}}],
 "traceEvents": [{}]}}"#,
        kernels.join(",\n")
    );
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn kernel_event(name: &str, ts_us: &str, regs: i64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "kernel", "name": {}, "pid": 0, "tid": 7, "ts": {ts_us}, "dur": 2,
 "args": {{"device": 0, "stream": 7, "correlation": 1, "registers per thread": {regs}, "grid": [4, 1, 1], "block": [128, 1, 1]}}}}"#,
        serde_json::to_string(name).unwrap()
    )
}

// ---- 1. panics -------------------------------------------------------------

#[test]
fn gpu_huge_warp_size_does_not_divide_by_zero() {
    let dir = tempfile::tempdir().unwrap();
    // registers × warp size wrapped to 0 and divided: from Kineto's
    // deviceProperties, and through a records header
    for warp in ["4611686018427387904", "9223372036854775807", "-5", "0"] {
        let t = kineto(dir.path(), "w.json", warp, &[kernel_event("k", "10", 64)]);
        let o = run(rprof().args(["gpu", "-q"]).arg(&t));
        assert_clean_exit(&o, 0);
        assert!(stdout(&o).contains("1 "), "{}", stdout(&o));
        let recs = dir.path().join("w.dict");
        let o = run(rprof().args(["parse", "-q"]).arg(&t).arg("-o").arg(&recs));
        assert_clean_exit(&o, 0);
        let o = run(rprof().args(["gpu", "-q"]).arg(&recs));
        assert_clean_exit(&o, 0);
        // and from an nsys device table
        let p = copy(dir.path(), NSYS, "warp.sqlite");
        {
            let c = rusqlite::Connection::open(&p).unwrap();
            c.execute(
                &format!("UPDATE TARGET_INFO_GPU SET threadsPerWarp = {warp}"),
                [],
            )
            .unwrap();
        }
        let o = run(rprof().args(["gpu", "-q"]).arg(&p));
        assert_clean_exit(&o, 0);
    }
}

#[test]
fn prof_width_u64_max_is_a_usage_error() {
    for w in ["18446744073709551615", "4000000000", "100001"] {
        let o = run(rprof()
            .args(["prof", "-w", w])
            .arg(fixture("profiling-lm/net.dict")));
        assert_clean_exit(&o, 2);
        assert!(stderr(&o).contains("limit of 100000"), "{}", stderr(&o));
    }
    // the limit itself works
    let o = run_limited(
        &[
            "prof",
            "-w",
            "100000",
            "-c",
            "idx,kernel",
            fixture("profiling-lm/net.dict").to_str().unwrap(),
        ],
        4096,
        120,
    );
    assert_clean_exit(&o, 0);
}

// ---- 2. allocation and unbounded memory ------------------------------------

#[test]
fn gpu_buckets_over_limit_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // two kernels 2^62 ns apart: 4.6e11 buckets of 10 ms
    let far = (1u64 << 62) / 1000;
    let t = kineto(
        dir.path(),
        "far.json",
        "32",
        &[
            kernel_event("a", "0", 32),
            kernel_event("b", &far.to_string(), 32),
        ],
    );
    let o = run_limited(&["gpu", "-q", "--buckets", t.to_str().unwrap()], 2048, 60);
    assert_clean_exit(&o, 1);
    assert!(
        stderr(&o).contains("more than rprof's limit of 100000"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty(), "nothing printed before the error");
    // without --buckets the same file is fine
    let o = run_limited(&["gpu", "-q", t.to_str().unwrap()], 2048, 60);
    assert_clean_exit(&o, 0);
}

#[test]
fn sqlite_view_over_endless_cte_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), NSYS, "view.sqlite");
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch(
            "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;
             CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS
               WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)
               SELECT x AS start, x + 1 AS end, 0 AS deviceId, 0 AS streamId,
                      x AS correlationId, 1 AS shortName FROM n;",
        )
        .unwrap();
    }
    let o = run_limited(&["summary", p.to_str().unwrap()], 2048, 60);
    assert_clean_exit(&o, 1);
    assert!(
        stderr(&o).contains("CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn kineto_huge_string_in_small_gzip_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // a 64 MiB kernel name compresses to a few tens of KB
    let name = "a".repeat(64 << 20);
    let t = kineto(
        dir.path(),
        "big.json",
        "32",
        &[kernel_event(&name, "1", 32)],
    );
    let gz = dir.path().join("big.json.gz");
    let mut e = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::best(),
    );
    e.write_all(&std::fs::read(&t).unwrap()).unwrap();
    e.finish().unwrap();
    drop(name);
    let o = run_limited(&["summary", gz.to_str().unwrap()], 1024, 60);
    assert_clean_exit(&o, 1);
    assert!(stderr(&o).contains("longer than 4 MiB"), "{}", stderr(&o));
}

#[test]
fn nvtx_text_over_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), NSYS, "nvtx.sqlite");
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        // a 20 MB string in the string table: more than the 1 MiB limit
        c.execute(
            "UPDATE StringIds SET value = printf('%.*c', 20000000, 'x') WHERE id = (SELECT min(id) FROM StringIds)",
            [],
        )
        .unwrap();
    }
    let o = run_limited(&["parse", p.to_str().unwrap()], 2048, 120);
    assert_clean_exit(&o, 1);
    assert!(
        stderr(&o).contains("a text or blob longer than 1 MiB (rprof's limit)"),
        "{}",
        stderr(&o)
    );
}

// ---- 3. quadratic cost -----------------------------------------------------

#[test]
fn records_line_without_newline_is_linear_and_capped() {
    // /dev/zero never ends and has no newline: an error at the line limit
    let o = run_limited(&["prof", "/dev/zero"], 2048, 120);
    assert_clean_exit(&o, 1);
    assert!(
        stderr(&o).contains("a line longer than 64 MiB"),
        "{}",
        stderr(&o)
    );
    // a 60 MB line (under the limit) is read once, not re-scanned per read:
    // it is an error (not a record), found in linear time
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("long.dict");
    std::fs::write(&p, vec![b'x'; 60 << 20]).unwrap();
    let o = run_limited(&["prof", p.to_str().unwrap()], 2048, 60);
    assert_clean_exit(&o, 1);
    assert!(
        stderr(&o).contains("long.dict:1: not a record"),
        "{}",
        stderr(&o)
    );
}

// ---- 4. data loss ----------------------------------------------------------

#[test]
fn o_naming_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), NSYS, "in.sqlite");
    let before = std::fs::read(&p).unwrap();
    std::os::unix::fs::symlink(&p, dir.path().join("sym")).unwrap();
    std::fs::hard_link(&p, dir.path().join("hard")).unwrap();
    for out in ["in.sqlite", "./in.sqlite", "sym", "hard"] {
        for cmd in [&["parse"][..], &["export", "--chrome"][..]] {
            let o = run(rprof()
                .current_dir(dir.path())
                .args(cmd)
                .arg("in.sqlite")
                .args(["-o", out]));
            assert_clean_exit(&o, 2);
            assert!(
                stderr(&o).contains("refusing to overwrite"),
                "{}",
                stderr(&o)
            );
        }
    }
    assert_eq!(std::fs::read(&p).unwrap(), before, "the input is unchanged");
}

#[test]
fn o_to_a_device_or_fifo_writes_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), NSYS, "in.sqlite");
    let o = run(rprof()
        .args(["parse", "-q"])
        .arg(&p)
        .args(["-o", "/dev/null"]));
    assert_clean_exit(&o, 0);
    let meta = std::fs::metadata("/dev/null").unwrap();
    assert!(!meta.is_file(), "/dev/null is still a device");
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = run(rprof().args(["parse", "-q"]).arg(&p).arg("-o").arg(&fifo));
    assert_clean_exit(&o, 0);
    let got = reader.join().unwrap();
    assert_eq!(got, run(rprof().args(["parse", "-q"]).arg(&p)).stdout);
}

/// Names in `dir` other than `keep`.
fn leftovers(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

#[test]
fn o_failed_run_keeps_the_earlier_file_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.sqlite");
    std::fs::write(&bad, b"SQLite format 3\0 but then nothing").unwrap();
    let out = dir.path().join("out.dict");
    std::fs::write(&out, b"earlier\n").unwrap();
    let o = run(rprof().arg("parse").arg(&bad).arg("-o").arg(&out));
    assert_clean_exit(&o, 1);
    assert_eq!(std::fs::read(&out).unwrap(), b"earlier\n");
    assert_eq!(
        leftovers(dir.path(), &["bad.sqlite", "out.dict"]),
        Vec::<String>::new()
    );
    // a run that succeeds replaces it whole
    let good = copy(dir.path(), NSYS, "good.sqlite");
    let o = run(rprof().args(["parse", "-q"]).arg(&good).arg("-o").arg(&out));
    assert_clean_exit(&o, 0);
    let direct = run(rprof().args(["parse", "-q"]).arg(&good));
    assert_eq!(std::fs::read(&out).unwrap(), direct.stdout);
}

#[test]
fn o_interrupted_run_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "nsys-ai/mfu_2gpu_before.sqlite", "in.sqlite");
    let mut interrupted = 0;
    for delay_ms in (0..800).step_by(40) {
        let out = dir.path().join("out.json");
        let _ = std::fs::remove_file(&out);
        let mut child = rprof()
            .args(["export", "--chrome", "-q"])
            .arg(&p)
            .arg("-o")
            .arg(&out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // SAFETY: kill(2) on our own child's pid
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let status = child.wait().unwrap();
        // a run that finished is complete; an interrupted one left no file,
        // or, when the signal came after the file was renamed into place
        // (between the rename and the exit: seen under load), the whole file
        let complete = |out: &Path| {
            let text = std::fs::read_to_string(out).unwrap();
            serde_json::from_str::<serde_json::Value>(&text).is_ok()
        };
        if status.success() {
            assert!(complete(&out), "a finished run left a partial {out:?}");
        } else {
            interrupted += 1;
            assert!(
                !out.exists() || complete(&out),
                "an interrupted run left a partial {out:?}"
            );
        }
        assert_eq!(
            leftovers(dir.path(), &["in.sqlite", "out.json"]),
            Vec::<String>::new()
        );
    }
    assert!(interrupted > 0, "no run was interrupted");
}

/// Copy the database and its `-wal` or `-journal` file while `hold` keeps
/// the writing connection open.
fn snapshot(src: &Path, dst: &Path, side: &str) {
    std::fs::copy(src, dst).unwrap();
    let s = PathBuf::from(format!("{}{side}", src.display()));
    if s.exists() {
        std::fs::copy(&s, format!("{}{side}", dst.display())).unwrap();
    }
}

fn kernel_count(p: &Path) -> Option<u64> {
    let o = run(rprof().args(["summary", "--json", "-q"]).arg(p));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).ok()?;
    v["kernels"].as_u64()
}

#[test]
fn wal_mode_committed_rows_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), NSYS, "w.sqlite");
    let before = kernel_count(&p).unwrap();
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 2;",
    )
    .unwrap();
    let copy_path = dir.path().join("copy.sqlite");
    snapshot(&p, &copy_path, "-wal");
    drop(c);
    assert!(dir.path().join("copy.sqlite-wal").exists());
    assert_eq!(kernel_count(&copy_path), Some(before + 2));
}

#[test]
fn hot_journal_is_refused_not_read_as_data() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), NSYS, "j.sqlite");
    let c = rusqlite::Connection::open(&p).unwrap();
    // a tiny cache makes the uncommitted change spill into the file
    c.execute_batch(
        "PRAGMA journal_mode = DELETE; PRAGMA cache_size = 1; BEGIN;
         UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 1000000000000, end = end + 1000000000000;
         UPDATE StringIds SET value = value || 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx';",
    )
    .unwrap();
    let hot = dir.path().join("hot.sqlite");
    snapshot(&p, &hot, "-journal");
    c.execute_batch("ROLLBACK").unwrap();
    drop(c);
    assert!(dir.path().join("hot.sqlite-journal").exists());
    let o = run(rprof().arg("summary").arg(&hot));
    assert_clean_exit(&o, 1);
    assert!(stderr(&o).contains("hot journal"), "{}", stderr(&o));
}

#[test]
fn kineto_mistyped_ph_or_cat_is_counted_and_bad_time_once() {
    let dir = tempfile::tempdir().unwrap();
    let k = |ph: &str, cat: &str, ts: &str| {
        format!(
            r#"{{"ph": {ph}, "cat": {cat}, "name": "k", "pid": 0, "tid": 7, "ts": {ts}, "dur": 2, "args": {{"device": 0, "stream": 7}}}}"#
        )
    };
    let events = vec![
        k("\"X\"", "\"kernel\"", "1"),
        k("\"X\"", "\"kernel\"", "5"),
        k("5", "\"kernel\"", "10"),
        k("null", "\"kernel\"", "20"),
        k("\"X\"", "7", "30"),
        k("\"X\"", "null", "40"),
        k("\"B\"", "\"kernel\"", "50"),
        k("\"X\"", "\"kernel\"", "\"soon\""),
    ];
    let t = kineto(dir.path(), "t.json", "32", &events);
    let o = run(rprof().arg("parse").arg(&t));
    assert_clean_exit(&o, 0);
    let e = stderr(&o);
    // 2 kernels read; 3 kernels of 5 rows (one with a bad time) in the counts
    assert!(e.contains("3 kernel rows, 2 records,"), "{e}");
    assert!(
        e.contains("skipped 1 kernel rows with a missing or mistyped name or time"),
        "{e}"
    );
    assert!(
        e.contains("4 trace events with a missing or mistyped \"ph\" or \"cat\""),
        "{e}"
    );
    assert!(e.contains("1 kernel events that are not complete"), "{e}");
    // the bad time is not counted a second time as a skipped event
    assert!(
        !e.contains("missing or mistyped fields were skipped"),
        "{e}"
    );
}

#[test]
fn closed_stdout_is_an_error_for_every_command() {
    let f = fixture(NSYS);
    let f = f.to_str().unwrap();
    for cmd in ["parse", "prof", "summary", "gpu", "export --chrome"] {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "'{}' {cmd} -q '{f}' >&-",
                env!("CARGO_BIN_EXE_rprof")
            ))
            .output()
            .unwrap();
        assert_clean_exit(&o, 1);
        assert!(
            stderr(&o).contains("cannot write <stdout>: standard output is closed"),
            "{cmd}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn write_error_names_the_output() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let f = fixture(NSYS);
    for cmd in [&["parse"][..], &["summary", "--json"][..], &["prof"][..]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = rprof()
            .args(cmd)
            .arg("-q")
            .arg(&f)
            .stdout(full)
            .output()
            .unwrap();
        assert_clean_exit(&o, 1);
        assert!(
            stderr(&o).contains("cannot write <stdout>: No space left"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn broken_pipe_is_quiet_for_every_command_and_format() {
    let f = fixture(NSYS);
    let dict = fixture("profiling-lm/net.dict");
    let cases: Vec<(Vec<&str>, &Path)> = vec![
        (vec!["parse"], &f),
        (vec!["parse", "--format", "pydict"], &f),
        (vec!["prof"], &dict),
        (vec!["prof", "--csv"], &dict),
        (vec!["prof", "-w", "200"], &dict),
        (vec!["summary"], &f),
        (vec!["summary", "--json"], &f),
        (vec!["summary", "--csv"], &f),
        (vec!["gpu", "--buckets=0.01"], &f),
        (vec!["export", "--chrome"], &f),
    ];
    for (args, input) in cases {
        let mut child = rprof()
            .args(&args)
            .arg("-q")
            .arg(input)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // the reader goes away at once, as `| head -c0` does
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

// ---- 5. messages -----------------------------------------------------------

#[test]
fn corrupt_create_statement_is_one_line_without_raw_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), NSYS, "schema.sqlite");
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch("PRAGMA writable_schema = ON;").unwrap();
        c.execute(
            "UPDATE sqlite_master SET sql = ?1 WHERE name = 'StringIds'",
            ["CREATE TABLE StringIds(\x1b]0;owned\x07\n\x1b[2J id INTEGER,\nvalue TEXT"],
        )
        .unwrap();
    }
    let o = run(rprof().arg("summary").arg(&p));
    assert_clean_exit(&o, 1);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("schema.sqlite"), "{}", stderr(&o));
    assert!(stderr(&o).contains("\\x1b"), "{}", stderr(&o));
}

#[test]
fn sqlite_cause_is_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("trunc.sqlite");
    let bytes = std::fs::read(fixture(NSYS)).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() / 3]).unwrap();
    let o = run(rprof().arg("summary").arg(&p));
    assert_clean_exit(&o, 1);
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    for word in ["malformed", "corrupt", "not a database"] {
        assert!(e.matches(word).count() <= 1, "{e}");
    }
}

#[test]
fn mistyped_string_cell_does_not_abort_the_parse() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), NSYS, "typed.sqlite");
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute(
            "UPDATE StringIds SET value = X'00ff' WHERE id = (SELECT max(id) FROM StringIds)",
            [],
        )
        .unwrap();
    }
    let o = run(rprof().args(["summary", "-q"]).arg(&p));
    assert_clean_exit(&o, 0);
}

#[test]
fn records_with_long_or_malformed_first_line_are_called_records() {
    let dir = tempfile::tempdir().unwrap();
    // a record line of 2 MiB (a long kernel name), then a malformed one
    let long = format!(
        "{{\"kShortName\": \"{}\", \"kDuration\": 5}}\n",
        "k".repeat(2 << 20)
    );
    let p = dir.path().join("long.dict");
    std::fs::write(&p, &long).unwrap();
    let o = run(rprof().args(["summary", "-q"]).arg(&p));
    assert!(!stderr(&o).contains("Kineto"), "{}", stderr(&o));
    let bad = dir.path().join("bad.dict");
    std::fs::write(&bad, "{\"kShortName\": 5, \"kDuration\": }\n").unwrap();
    let o = run(rprof().args(["summary", "-q"]).arg(&bad));
    assert_clean_exit(&o, 1);
    assert!(stderr(&o).contains("bad.dict:1:"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("Kineto"), "{}", stderr(&o));
    // parse on a records file says what it is
    let recs = dir.path().join("r.dict");
    let o = run(rprof()
        .args(["parse", "-q"])
        .arg(fixture(NSYS))
        .arg("-o")
        .arg(&recs));
    assert_clean_exit(&o, 0);
    for f in [&recs, &fixture("profiling-lm/net.dict")] {
        let o = run(rprof().arg("parse").arg(f));
        assert_clean_exit(&o, 1);
        assert!(
            stderr(&o).contains("this is already a records file"),
            "{}",
            stderr(&o)
        );
    }
}

// ---- 6. terminal injection -------------------------------------------------

#[test]
fn control_characters_in_trace_text_are_escaped_in_tables() {
    let dir = tempfile::tempdir().unwrap();
    let evil = "k\x1b]0;title\x07\x1b[2J\0\x08\r\nrow";
    let p = dir.path().join("evil.sqlite");
    std::fs::copy(fixture(NSYS), &p).unwrap();
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute(
            "UPDATE StringIds SET value = ?1 WHERE id IN
               (SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL
                UNION SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL)",
            [evil],
        )
        .unwrap();
    }
    let recs = dir.path().join("evil.dict");
    let o = run(rprof().args(["parse", "-q"]).arg(&p).arg("-o").arg(&recs));
    assert_clean_exit(&o, 0);
    // records of schema version 2: one line per kernel, no header line
    let n = std::fs::read_to_string(&recs).unwrap().lines().count();
    for args in [
        &["prof", "-w", "300", "-c", "idx,kernel"][..],
        &["prof", "-c", "idx,kernel"][..],
        &["prof", "--compat", "-w", "300", "-c", "idx,kernel"][..],
        &["summary"][..],
        &["gpu"][..],
    ] {
        let o = run(rprof().args(args).arg("-q").arg(&recs));
        assert_clean_exit(&o, 0);
        let out = stdout(&o);
        assert!(
            !out.chars().any(|c| c.is_control() && c != '\n'),
            "{args:?}: {out:?}"
        );
        if args[0] == "prof" {
            // one line per kernel, plus the header
            assert_eq!(out.lines().count(), n + 1, "{args:?}");
            assert!(out.contains("\\x1b]0;title\\x07"), "{args:?}: {out}");
        }
    }
    // TSV writes each control character as a space (docs/reports.md), so
    // that a row stays one line of the same fields
    let o = run(rprof()
        .args(["prof", "--format", "tsv", "-c", "idx,kernel", "-q"])
        .arg(&recs));
    assert_clean_exit(&o, 0);
    let out = stdout(&o);
    assert!(
        !out.chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{out:?}"
    );
    assert_eq!(out.lines().count(), n + 1);
    assert!(out.contains("\tk ]0;title  [2J    row\n"), "{out:?}");
    // machine-readable output keeps the text as it is
    let o = run(rprof().args(["summary", "--json", "-q"]).arg(&recs));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.to_string().contains("\\u001b]0;title\\u0007"));
}

// ---- 7. encodings ----------------------------------------------------------

#[test]
fn utf8_bom_records_file_is_readable() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(fixture("profiling-lm/net.dict")).unwrap();
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(&plain);
    let p = dir.path().join("bom.dict");
    std::fs::write(&p, bom).unwrap();
    let a = run(rprof().args(["prof", "-q"]).arg(&p));
    let b = run(rprof()
        .args(["prof", "-q"])
        .arg(fixture("profiling-lm/net.dict")));
    assert_clean_exit(&a, 0);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn compat_message_has_no_rust_debug_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(dir.path(), "profiling-lm/net.sql", "n.sql");
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute(
            "UPDATE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL SET name = 99999999
             WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)",
            [],
        )
        .unwrap();
    }
    let o = run(rprof().args(["parse", "--compat"]).arg(&p));
    assert_clean_exit(&o, 1);
    assert!(stderr(&o).contains("string id 99999999"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("Some("), "{}", stderr(&o));
}

/// Rowids claiming far more rows than the file holds (one kernel, API call
/// and NVTX row numbered 199,999,999): the vectors sized by the largest
/// rowid are refused by the allocator under a 3 GiB cap (the kernels' alone
/// would be 33 GB), and every command reads on with the same answers as on
/// the file numbered densely. Before, the refused allocation aborted.
#[test]
fn rowids_claiming_millions_of_rows_do_not_abort() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy(
        dir.path(),
        "nsys-ai/mfu_2gpu_before.sqlite",
        "rowids.sqlite",
    );
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        for t in [
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            "NVTX_EVENTS",
        ] {
            let n = c
                .execute(
                    &format!(
                        "UPDATE {t} SET rowid = 199999999 WHERE rowid = (SELECT max(rowid) FROM {t})"
                    ),
                    [],
                )
                .unwrap();
            assert_eq!(n, 1, "{t}");
        }
    }
    let odd = p.to_str().unwrap();
    let dense = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    for cmd in [
        &["summary", "-q"][..],
        &["parse", "-q"],
        &["steps", "-q"],
        &["idle", "-q"],
        &["stats", "-q", "--report", "cuda_gpu_kern_sum"],
        &["stats", "-q", "--report", "nvtx_sum"],
    ] {
        let mut args = cmd.to_vec();
        args.push(odd);
        let o = run_limited(&args, 3 << 10, 120);
        assert_clean_exit(&o, 0);
        let want = run(rprof().args(cmd).arg(&dense));
        let got = stdout(&o).replace(odd, &dense.display().to_string());
        assert_eq!(got, stdout(&want), "{cmd:?}");
    }
}

// ---- 8. paths --------------------------------------------------------------

#[test]
fn non_utf8_and_double_slash_paths_open() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let odd = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"prof\xff ?#%.sqlite"));
    std::fs::copy(fixture(NSYS), &odd).unwrap();
    let o = run(rprof().args(["summary", "-q"]).arg(&odd));
    assert_clean_exit(&o, 0);
    let want = run(rprof().args(["summary", "-q"]).arg(fixture(NSYS))).stdout;
    assert_eq!(o.stdout, want);
    let slashes = format!("/{}", dir.path().join("x.sqlite").display());
    std::fs::copy(fixture(NSYS), dir.path().join("x.sqlite")).unwrap();
    let o = run(rprof().args(["summary", "-q"]).arg(&slashes));
    assert_clean_exit(&o, 0);
    assert_eq!(o.stdout, want);
}

#[test]
fn fifo_and_pipe_inputs_are_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("r.dict");
    let o = run(rprof()
        .args(["parse", "-q"])
        .arg(fixture(NSYS))
        .arg("-o")
        .arg(&recs));
    assert_clean_exit(&o, 0);
    let want_prof = run(rprof().args(["prof", "-q"]).arg(&recs)).stdout;
    let want_summary = run(rprof().args(["summary", "-q"]).arg(fixture(NSYS))).stdout;
    for (file, cmd, want) in [
        (recs.clone(), "prof", &want_prof),
        (fixture(NSYS), "summary", &want_summary),
    ] {
        let fifo = dir.path().join(format!("fifo-{cmd}"));
        let ok = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(ok.success());
        let writer = {
            let (fifo, file) = (fifo.clone(), file.clone());
            std::thread::spawn(move || {
                let mut w = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                let _ = w.write_all(&std::fs::read(file).unwrap());
            })
        };
        let o = run(rprof().args([cmd, "-q"]).arg(&fifo));
        writer.join().unwrap();
        assert_clean_exit(&o, 0);
        assert_eq!(&o.stdout, want, "{cmd} from a FIFO");
        // process substitution: /dev/fd/N, a pipe
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "'{}' {cmd} -q <(cat '{}')",
                env!("CARGO_BIN_EXE_rprof"),
                file.display()
            ))
            .output()
            .unwrap();
        assert_clean_exit(&o, 0);
        assert_eq!(&o.stdout, want, "{cmd} from <(cat)");
    }
}

#[test]
fn multi_member_gzip_is_read_like_zcat() {
    let dir = tempfile::tempdir().unwrap();
    let events: Vec<String> = (0..6)
        .map(|i| kernel_event(&format!("k{}", i % 2), &(i * 10).to_string(), 32))
        .collect();
    let t = kineto(dir.path(), "t.json", "32", &events);
    let text = std::fs::read(&t).unwrap();
    let gz = dir.path().join("t.json.gz");
    let mut all = Vec::new();
    for part in [&text[..text.len() / 2], &text[text.len() / 2..]] {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(part).unwrap();
        all.extend(e.finish().unwrap());
    }
    std::fs::write(&gz, all).unwrap();
    let a = run(rprof().args(["summary", "-q"]).arg(&gz));
    let b = run(rprof().args(["summary", "-q"]).arg(&t));
    assert_clean_exit(&a, 0);
    assert_eq!(a.stdout, b.stdout);
    assert!(stdout(&a).starts_with("6 kernels"), "{}", stdout(&a));
}

// ---- 3. quadratic attribution ----------------------------------------------

/// A Kineto trace: `n` nested annotations on one thread, and `n` kernels
/// launched inside all of them.
fn nested_trace(dir: &Path, n: usize) -> PathBuf {
    let mut ev = Vec::with_capacity(3 * n);
    let end = 10 * n as u64 + 10_000;
    for i in 0..n {
        ev.push(format!(
            r#"{{"ph": "X", "cat": "user_annotation", "name": "r{i}", "pid": 1, "tid": 2, "ts": {i}, "dur": {}}}"#,
            end - 2 * i as u64
        ));
    }
    for j in 0..n {
        let ts = n + 5 * j;
        ev.push(format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": {ts}, "dur": 1, "args": {{"correlation": {j}}}}}"#
        ));
        ev.push(format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {}, "dur": 1, "args": {{"device": 0, "stream": 7, "correlation": {j}}}}}"#,
            end + 10 * j as u64
        ));
    }
    kineto(dir, "nested.json", "32", &ev)
}

#[test]
fn deep_nesting_is_not_quadratic_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    // the output holds every stack (n² texts, ~90 MB): it is streamed to
    // the file, and the lists are shared stacks (the attribution's own test
    // checks n = 8000 takes n nodes)
    let n = 1500;
    let t = nested_trace(dir.path(), n);
    let out = dir.path().join("nested.dict");
    let o = run_limited(
        &[
            "parse",
            "-q",
            t.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        400,
        300,
    );
    assert_clean_exit(&o, 0);
    let text = std::fs::read_to_string(&out).unwrap();
    // one line per kernel (records of schema version 2 have no header line)
    assert_eq!(text.lines().count(), n);
    // the last kernel sits in every range, outermost first
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let stack = last["stack"].as_array().unwrap();
    assert_eq!(stack.len(), n);
    assert_eq!(stack[0], "r0");
    assert_eq!(stack[n - 1], format!("r{}", n - 1));
}

// ---- 7. encodings (continued) ----------------------------------------------

#[test]
fn encoding_errors_are_worded_alike() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bad.json");
    std::fs::write(
        &json,
        b"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\xff\", \"ts\": 1, \"dur\": 1}]}",
    )
    .unwrap();
    let dict = dir.path().join("bad.dict");
    std::fs::write(&dict, b"{\"kShortName\": \"a\xff\", \"kDuration\": 1}\n").unwrap();
    let o = run(rprof().arg("summary").arg(&json));
    assert_clean_exit(&o, 1);
    assert!(
        stderr(&o).contains("bad.json:1:57: not UTF-8 text"),
        "{}",
        stderr(&o)
    );
    let o = run(rprof().arg("summary").arg(&dict));
    assert_clean_exit(&o, 1);
    assert!(
        stderr(&o).contains("bad.dict:1: not UTF-8 text (byte 18)"),
        "{}",
        stderr(&o)
    );
}
