//! `rprof prof`: golden files of apex.pyprof, the parse → prof chain,
//! streaming, errors, and every documented difference from PyProf
//! (docs/compat.md, `## prof`).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use crate::util::{fixture, rprof, run};

const LM_COLS: &str = "kernel,mod,op,dir,sil,tc,flops,bytes,device,stream,block,grid";
const ALL: &str = "idx,seq,altseq,tid,layer,trace,dir,sub,mod,op,kernel,params,sil,tc,device,stream,grid,block,flops,bytes";

fn net_dict() -> std::path::PathBuf {
    fixture("profiling-lm/net.dict")
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", p.as_ref().display()))
}

/// Run `rprof prof ARGS` and return stdout; panics with stderr on failure.
fn prof(args: &[&str]) -> String {
    let out = run(rprof().arg("prof").args(args));
    assert!(
        out.status.success(),
        "prof {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Run `rprof prof ARGS` with `input` on stdin.
fn prof_stdin(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = rprof()
        .arg("prof")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn assert_same(got: &str, want: &str, what: &str) {
    if got != want {
        for (n, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "{what}: first difference at line {}", n + 1);
        }
        assert_eq!(
            got.len(),
            want.len(),
            "{what}: same lines, different length"
        );
    }
}

// ------------------------------------------------------------- goldens

#[test]
fn golden_lm_csv() {
    let got = prof(&[
        "--compat",
        "--csv",
        "-c",
        LM_COLS,
        net_dict().to_str().unwrap(),
    ]);
    assert_same(&got, &read(fixture("profiling-lm/lm.csv")), "lm.csv");
}

#[test]
fn golden_prof_all_csv() {
    let got = prof(&["--compat", "--csv", "-c", ALL, net_dict().to_str().unwrap()]);
    assert_same(
        &got,
        &read(fixture("profiling-lm/golden/prof-all.csv")),
        "prof-all.csv",
    );
    // `-c all` is the same list
    assert_eq!(
        prof(&[
            "--compat",
            "--csv",
            "-c",
            "all",
            net_dict().to_str().unwrap()
        ]),
        got
    );
}

#[test]
fn golden_prof_default() {
    let got = prof(&["--compat", net_dict().to_str().unwrap()]);
    assert_same(
        &got,
        &read(fixture("profiling-lm/golden/prof-default.txt")),
        "prof-default.txt",
    );
}

#[test]
fn golden_prof_w150() {
    let got = prof(&["--compat", "-w", "150", net_dict().to_str().unwrap()]);
    assert_same(
        &got,
        &read(fixture("profiling-lm/golden/prof-w150.txt")),
        "prof-w150.txt",
    );
}

#[test]
fn golden_prof_w200_cols() {
    let got = prof(&[
        "--compat",
        "-w",
        "200",
        "-c",
        "idx,seq,dir,sub,mod,op,kernel,params,sil,tc,flops,bytes",
        net_dict().to_str().unwrap(),
    ]);
    assert_same(
        &got,
        &read(fixture("profiling-lm/golden/prof-w200-cols.txt")),
        "prof-w200-cols.txt",
    );
}

#[test]
fn golden_prof_stdin_csv() {
    let out = prof_stdin(&["--compat", "--csv"], read(net_dict()).as_bytes());
    assert!(out.status.success());
    assert_same(
        &String::from_utf8(out.stdout).unwrap(),
        &read(fixture("profiling-lm/golden/prof-stdin-csv.csv")),
        "prof-stdin-csv.csv",
    );
    // `-` is standard input too
    let mut f = std::fs::File::open(net_dict()).unwrap();
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).unwrap();
    let dash = prof_stdin(&["--compat", "--csv", "-"], &buf);
    assert_eq!(
        dash.stdout,
        read(fixture("profiling-lm/golden/prof-stdin-csv.csv")).into_bytes()
    );
}

#[test]
fn golden_compat_prints_nothing_on_stderr() {
    let out = run(rprof()
        .args(["prof", "--compat", "-c", "all"])
        .arg(net_dict()));
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn golden_iotensor() {
    let dir = corpus_or_skip!().join("iotensor");
    let input = dir.join("net_1.dict");
    let got = prof(&["--compat", "--csv", "-c", ALL, input.to_str().unwrap()]);
    assert_same(
        &got,
        &read(dir.join("golden/prof-all.csv")),
        "iotensor prof-all.csv",
    );
    let got = prof(&["--compat", "-w", "150", input.to_str().unwrap()]);
    assert_same(
        &got,
        &read(dir.join("golden/prof-w150.txt")),
        "iotensor prof-w150.txt",
    );
}

// ------------------------------------------------------- parse → prof

fn parse_then_prof(parse_args: &[&str], prof_args: &[&str]) -> String {
    let parsed = run(rprof()
        .arg("parse")
        .args(parse_args)
        .arg(fixture("profiling-lm/net.sql")));
    assert!(
        parsed.status.success(),
        "{}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    let out = prof_stdin(prof_args, &parsed.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn chain_parse_json_to_prof_matches_goldens() {
    let got = parse_then_prof(&["--compat"], &["--compat", "--csv", "-c", LM_COLS]);
    assert_same(
        &got,
        &read(fixture("profiling-lm/lm.csv")),
        "parse | prof vs lm.csv",
    );
    // idx counts records, not lines: the JSON header is not a row
    let got = parse_then_prof(&["--compat"], &["--compat", "--csv", "-c", "all"]);
    assert_same(
        &got,
        &read(fixture("profiling-lm/golden/prof-all.csv")),
        "parse | prof vs prof-all.csv",
    );
}

#[test]
fn chain_parse_pydict_to_prof() {
    let got = parse_then_prof(
        &["--compat", "--format", "pydict"],
        &["--compat", "-w", "150"],
    );
    assert_same(
        &got,
        &read(fixture("profiling-lm/golden/prof-w150.txt")),
        "parse --format pydict | prof -w 150",
    );
}

#[test]
fn chain_default_modes_agree_on_json_and_pydict() {
    let a = parse_then_prof(&[], &["-c", "all"]);
    let b = prof(&["-c", "all", net_dict().to_str().unwrap()]);
    assert_same(&a, &b, "default parse | default prof vs net.dict");
}

// ------------------------------------------------------------ streaming

fn big_input(copies: usize) -> Vec<u8> {
    let one = read(net_dict());
    one.repeat(copies).into_bytes()
}

#[test]
fn closed_pipe_exits_zero_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.dict");
    std::fs::write(&path, big_input(8)).unwrap();
    let mut child = rprof()
        .args(["prof", "-c", "all"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert!(line.starts_with("Idx SeqId"));
        // dropped here: the reader goes away like `| head -1`
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "exit {status:?}, stderr {err}");
    assert!(err.is_empty(), "stderr: {err}");
}

#[test]
fn first_row_before_end_of_input() {
    let mut child = rprof()
        .args(["prof", "--compat", "-c", "idx,op"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // more than the first chunk, then the input stays open
    for line in read(net_dict()).lines().take(100) {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        let mut lines = Vec::new();
        for _ in 0..2 {
            let mut l = String::new();
            let _ = r.read_line(&mut l);
            lines.push(l);
        }
        let _ = tx.send(lines);
    });
    let lines = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("no row before the end of the input");
    assert_eq!(lines[0], "Idx Op\n");
    assert_eq!(lines[1], "1 embedding\n");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn same_bytes_for_any_thread_count() {
    let input = big_input(20);
    let mut outs = Vec::new();
    for threads in ["1", "2"] {
        for mode in [&["-c", "all"][..], &["--compat", "--csv", "-c", "all"][..]] {
            let mut cmd = rprof();
            cmd.env("RAYON_NUM_THREADS", threads);
            let mut child = cmd
                .arg("prof")
                .args(mode)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let data = input.clone();
            let w = std::thread::spawn(move || stdin.write_all(&data));
            let out = child.wait_with_output().unwrap();
            w.join().unwrap().unwrap();
            assert!(out.status.success());
            outs.push(out.stdout);
        }
    }
    assert_eq!(outs[0], outs[2], "default mode, 1 vs 2 threads");
    assert_eq!(outs[1], outs[3], "compat, 1 vs 2 threads");
    assert_eq!(
        String::from_utf8_lossy(&outs[1]).lines().count(),
        1 + 20 * 284
    );
}

// --------------------------------------------------------------- errors

fn one_line_stderr(out: &std::process::Output) -> String {
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "stderr: {err}");
    err
}

#[test]
fn bad_column_exits_2_naming_the_choices() {
    let out = run(rprof().args(["prof", "-c", "idx,bogus"]).arg(net_dict()));
    assert_eq!(out.status.code(), Some(2));
    let err = one_line_stderr(&out);
    assert!(err.contains("'bogus' is not a column"), "{err}");
    assert!(err.contains("idx,seq,altseq,tid,layer,trace,dir,sub,mod,op,kernel,params,sil,tc,device,stream,grid,block,flops,bytes"));
    assert!(out.stdout.is_empty());
}

#[test]
fn narrow_width_exits_2_naming_the_minimum() {
    // apex prints "Minimum width required ... = 55. Exiting." on stdout and exits 1
    let out = run(rprof()
        .args(["prof", "--compat", "-w", "54"])
        .arg(net_dict()));
    assert_eq!(out.status.code(), Some(2));
    let err = one_line_stderr(&out);
    assert!(err.contains("at least 55"), "{err}");
    assert!(out.stdout.is_empty());
    // the default mode counts the separators
    let out = run(rprof().args(["prof", "-w", "55"]).arg(net_dict()));
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("at least 62"));
    assert!(
        run(rprof()
            .args(["prof", "--compat", "-w", "55"])
            .arg(net_dict()))
        .status
        .success()
    );
}

#[test]
fn csv_and_width_conflict() {
    let out = run(rprof().args(["prof", "--csv", "-w", "100"]).arg(net_dict()));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn missing_file_exits_1() {
    let out = run(rprof().args(["prof", "/nonexistent/net.dict"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(one_line_stderr(&out).contains("/nonexistent/net.dict: no such file"));
}

/// `rprof prof` takes a profile too and parses it first: the same rows as
/// `rprof parse | rprof prof`, for nvprof, nsys and Kineto inputs.
#[test]
fn profile_input_equals_parse_then_prof() {
    let mut inputs = vec![
        crate::util::fixture("profiling-lm/net.sql"),
        crate::util::fixture("nsys-ai/mfu_2gpu_before.sqlite"),
    ];
    if let Some(c) = crate::util::corpus() {
        inputs.push(c.join("kineto-hta/alexnet_benchmark_trace.json.gz"));
    }
    for f in inputs {
        for compat in [false, true] {
            if compat && !f.ends_with("net.sql") {
                continue;
            }
            let mut parse = rprof();
            parse.args(["parse", "-q"]);
            let mut prof = rprof();
            prof.args(["prof", "-q", "-c", "all", "--csv"]);
            if compat {
                parse.arg("--compat");
                prof.arg("--compat");
            }
            let records = run(parse.arg(&f));
            assert!(records.status.success());
            let dir = tempfile::tempdir().unwrap();
            let dict = dir.path().join("r.dict");
            std::fs::write(&dict, &records.stdout).unwrap();
            let via_dict = run(prof.arg(&dict));
            let mut direct = rprof();
            direct.args(["prof", "-q", "-c", "all", "--csv"]);
            if compat {
                direct.arg("--compat");
            }
            let direct = run(direct.arg(&f));
            assert!(
                via_dict.status.success() && direct.status.success(),
                "{}",
                f.display()
            );
            assert!(via_dict.stdout == direct.stdout, "{}", f.display());
            assert!(direct.stdout.len() > 1000);
        }
    }
}

#[test]
fn garbage_line_exits_1_with_file_and_line_after_the_rows_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.dict");
    let mut text: String = read(net_dict())
        .lines()
        .take(3)
        .map(|l| format!("{l}\n"))
        .collect();
    let fourth = read(net_dict()).lines().nth(3).unwrap().to_owned();
    text.push_str(&fourth[..fourth.len() / 2]); // truncated record
    text.push('\n');
    text.push_str(&fourth);
    std::fs::write(&path, &text).unwrap();
    let out = run(rprof().args(["prof", "-c", "idx"]).arg(&path));
    assert_eq!(out.status.code(), Some(1));
    let err = one_line_stderr(&out);
    assert!(err.contains(&format!("{}:4:", path.display())), "{err}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Idx\n1\n2\n3\n");
    // not a record at all
    std::fs::write(&path, "hello\n").unwrap();
    let out = run(rprof().args(["prof"]).arg(&path));
    assert_eq!(out.status.code(), Some(1));
    assert!(one_line_stderr(&out).contains(":1: not a record"));
    // never evaluated
    std::fs::write(
        &path,
        "{'kShortName': __import__('os').system('touch /tmp/rprof-pwned')}\n",
    )
    .unwrap();
    let out = run(rprof().args(["prof"]).arg(&path));
    assert_eq!(out.status.code(), Some(1));
    assert!(!Path::new("/tmp/rprof-pwned").exists());
}

#[test]
fn future_format_version_exits_1() {
    let input = "{\"rprof\":\"dict\",\"version\":99,\"source\":\"nsys\"}\n";
    let out = prof_stdin(&[], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let err = one_line_stderr(&out);
    assert!(err.contains("<stdin>:1:") && err.contains("newer"), "{err}");
}

#[test]
fn invalid_utf8_exits_1_with_line() {
    let mut input = read(net_dict()).lines().next().unwrap().as_bytes().to_vec();
    input.extend_from_slice(b"\n{'kShortName': '\xff'}\n");
    let out = prof_stdin(&["-c", "idx"], &input);
    assert_eq!(out.status.code(), Some(1));
    assert!(one_line_stderr(&out).contains("<stdin>:2:"));
    assert_eq!(out.stdout, b"Idx\n1\n");
}

#[test]
fn help_lists_every_column() {
    for flag in ["-h", "--help"] {
        let out = run(rprof().args(["prof", flag]));
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        for c in rprof_report_keys() {
            assert!(
                text.lines().any(|l| l.trim_start().starts_with(c)),
                "{flag}: column {c} missing"
            );
        }
        assert!(text.contains("tensor cores"));
    }
}

fn rprof_report_keys() -> Vec<&'static str> {
    ALL.split(',').collect()
}

// ------------------------------------------- robustness (default mode)

/// A JSON record with one PyProf marker.
fn record(
    kernel: &str,
    dir: &str,
    seq: &[i64],
    sub: i64,
    module: &str,
    op: &str,
    marker: Option<&str>,
) -> String {
    serde_json::json!({
        "kShortName": kernel,
        "kDuration": 1000,
        "marker": marker.map(|m| vec![m]).unwrap_or_default(),
        "seqMarker": seq.iter().map(|s| format!("{op}, seq = {s}")).collect::<Vec<_>>(),
        "seqId": seq,
        "subSeqId": sub,
        "dir": dir,
        "mod": [module],
        "op": [op],
        "kLongName": kernel,
    })
    .to_string()
}

fn tensor(shape: &str, dtype: &str) -> String {
    format!("{{'name': '', 'type': 'tensor', 'shape': {shape}, 'dtype': '{dtype}'}}")
}

fn marker(module: &str, op: &str, args: &[String]) -> String {
    format!(
        "{{'mod': '{module}', 'op': '{op}', 'args': [{}]}}",
        args.join(", ")
    )
}

pub fn odd_records() -> String {
    let lines = [
        // bf16 GEMM: known by default, apex aborts
        record(
            "sm90_xmma_gemm_bf16bf16_bf16f32",
            "fprop",
            &[1],
            0,
            "torch",
            "mm",
            Some(&marker(
                "torch",
                "mm",
                &[
                    tensor("(64, 256)", "bfloat16"),
                    tensor("(256, 128)", "bfloat16"),
                ],
            )),
        ),
        // unknown dtype: FLOPs known, bytes not
        record(
            "elementwise_kernel",
            "fprop",
            &[2],
            0,
            "torch",
            "add",
            Some(&marker(
                "torch",
                "add",
                &[tensor("(10,)", "qint8"), tensor("(10,)", "qint8")],
            )),
        ),
        // fp8 and complex
        record(
            "elementwise_kernel",
            "fprop",
            &[3],
            0,
            "Tensor",
            "__mul__",
            Some(&marker(
                "Tensor",
                "__mul__",
                &[
                    tensor("(10,)", "float8_e4m3fn"),
                    tensor("(10,)", "float8_e4m3fn"),
                ],
            )),
        ),
        record(
            "elementwise_kernel",
            "fprop",
            &[4],
            0,
            "torch",
            "exp",
            Some(&marker("torch", "exp", &[tensor("(10,)", "complex64")])),
        ),
        // linear without its weight
        record(
            "volta_sgemm_128x64_tn",
            "fprop",
            &[5],
            0,
            "torch.nn.functional",
            "linear",
            Some(&marker(
                "torch.nn.functional",
                "linear",
                &[tensor("(32, 1024)", "float32")],
            )),
        ),
        // an op without a model, and a marker that is not a PyProf marker
        record(
            "k",
            "fprop",
            &[6],
            0,
            "torch",
            "frobnicate",
            Some(&marker("torch", "frobnicate", &[tensor("(3,)", "float32")])),
        ),
        record(
            "k",
            "fprop",
            &[7],
            0,
            "na",
            "x",
            Some("{'mod': 'torch', 'op'"),
        ),
        // a backward kernel that borrows the bf16 GEMM's marker
        record(
            "sm90_xmma_gemm_bf16bf16_bf16f32_nt",
            "bprop",
            &[1],
            0,
            "na",
            "MmBackward0",
            None,
        ),
        // a backward kernel without a sequence id: apex asserts
        record("k", "bprop", &[], 0, "na", "", None),
    ];
    lines.join("\n") + "\n"
}

#[test]
fn odd_dtypes_and_missing_args_print_na_without_crashing() {
    let out = prof_stdin(
        &["-c", "idx,op,params,tc,flops,bytes"],
        odd_records().as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[1], "1 mm M=128,N=64,K=256,bf16, 1 4194304 114688");
    assert_eq!(rows[2], "2 add T=[(10,),(10,)],qint8, - 10 na");
    assert_eq!(rows[3], "3 __mul__ T=[(10,),(10,)],fp8e4m3, - 10 30");
    assert_eq!(rows[4], "4 exp T=[(10,)],c64, - 200 160");
    assert_eq!(rows[5], "5 linear T=[(32,1024)],['float32'] - na na");
    assert_eq!(rows[6], "6 frobnicate T=[(3,)],['float32'] - 0 0");
    assert_eq!(rows[7], "7 x na=na, na 0 0");
    assert_eq!(rows[8], "8 mm M=128,N=64,K=256,bf16, 1 4194304 114688");
    assert_eq!(rows[9], "9 na na=na, na 0 0");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("2 rows with values that could not be computed (printed as na); first at row 2: unknown dtype 'qint8'"), "{err}");
    assert!(err.contains("1 rows of ops without a model"), "{err}");
    // -q: nothing
    let out = prof_stdin(&["-q"], odd_records().as_bytes());
    assert!(out.status.success() && out.stderr.is_empty());
}

#[test]
fn compat_counts_rows_where_apex_would_have_aborted() {
    let out = prof_stdin(
        &["--compat", "-c", "idx,op,params,tc,flops,bytes"],
        odd_records().as_bytes(),
    );
    assert!(out.status.success());
    let err = one_line_stderr(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[1], "1 mm na=na, na 0 0");
    assert_eq!(rows[5], "5 linear na=na, na 0 0");
    assert_eq!(rows[6], "6 frobnicate T=[(3,)],['float32'] - 0 0");
    assert_eq!(rows[9], "9  na=na, na 0 0");
    assert!(
        err.contains("7 rows where apex.pyprof would have aborted (printed with na/0 values); first at row 1: unsupported dtype 'bfloat16'"),
        "{err}"
    );
}

// ------------------------------------- documented differences (compat.md)

fn nth_row(text: &str, n: usize) -> &str {
    text.lines().nth(n).unwrap()
}

#[test]
fn default_mode_fixes_on_net_dict() {
    let f = net_dict();
    let cols = ["-c", "idx,sub,op,params,flops,bytes", f.to_str().unwrap()];
    let fixed = prof(&cols);
    let compat = prof(&[&["--compat"][..], &cols].concat());
    // Pointwise: PyProf HEAD's formulas, integers; the scalar counts 4 bytes
    assert_eq!(
        nth_row(&compat, 2),
        "2 0 __mul__ T=[(35,20,200)],fp32, 140000.0 1120000"
    );
    assert_eq!(
        nth_row(&fixed, 2),
        "2 0 __mul__ T=[(35,20,200)],fp32, 140000 1120004"
    );
    assert_eq!(
        nth_row(&compat, 4),
        "4 0 __add__ T=[(35,20,200),(35,1,200)],fp32, 143500.0 1148000"
    );
    assert_eq!(
        nth_row(&fixed, 4),
        "4 0 __add__ T=[(35,20,200),(35,1,200)],fp32, 140000 1148000"
    );
    // add_(t, alpha, t): HEAD aborts here; the alpha is not an operand
    assert_eq!(
        nth_row(&fixed, 257),
        "257 0 add_ T=[(600,200),(600,200)],fp32, 120000 1440000"
    );
    // [B24] linear bytes
    let lin = fixed
        .lines()
        .find(|l| l.contains("linear M=33278"))
        .unwrap();
    assert!(lin.ends_with(" 9317840000 120360800"), "{lin}");
    // norm of a later kernel: HEAD counts the first kernel only
    let norm_c = compat.lines().find(|l| l.starts_with("202 ")).unwrap();
    let norm_f = fixed.lines().find(|l| l.starts_with("202 ")).unwrap();
    assert_eq!(norm_c, "202 1 norm T=(600,),fp32, 1201 2400");
    assert_eq!(norm_f, "202 1 norm T=(600,),fp32, 0 0");
    // LogSoftmax FLOPs: 0 in apex, 21 per element in HEAD
    let ls = fixed.lines().find(|l| l.contains("log_softmax")).unwrap();
    assert!(ls.ends_with(" 489186600 279535200"), "{ls}");
}

#[test]
fn default_space_mode_has_one_field_per_cell() {
    let input = record("void foo<int> (x)", "fprop", &[], 0, "", "", None).replace(
        "\"kDuration\":1000",
        "\"kDuration\":5,\"layer\":[\"Block 1\"],\"trace\":[\"/my dir/x.py:3\"]",
    );
    let compat = prof_stdin(
        &["--compat", "-c", "kernel,mod,op,layer,trace,sil"],
        input.as_bytes(),
    );
    let fixed = prof_stdin(&["-c", "kernel,mod,op,layer,trace,sil"], input.as_bytes());
    // PyProf: the kernel's spaces are underscores, other cells verbatim, empty op/mod empty ([B17])
    assert_eq!(
        nth_row(&String::from_utf8(compat.stdout).unwrap(), 1),
        "void_foo<int>_(x)   Block 1 /my dir/x.py:3 5"
    );
    assert_eq!(
        nth_row(&String::from_utf8(fixed.stdout).unwrap(), 1),
        "void_foo<int>_(x) na na Block_1 /my_dir/x.py:3 5"
    );
}

#[test]
fn default_columnated_lines_fit_the_width() {
    let f = net_dict();
    let fixed = prof(&["-w", "150", f.to_str().unwrap()]);
    let compat = prof(&["--compat", "-w", "150", f.to_str().unwrap()]);
    assert!(
        compat
            .lines()
            .all(|l| l.ends_with(' ') && l.chars().count() == 157)
    );
    assert!(
        fixed
            .lines()
            .all(|l| !l.ends_with(' ') || l.starts_with("Idx"))
    );
    assert!(fixed.lines().all(|l| l.chars().count() <= 150));
    assert_eq!(nth_row(&fixed, 0).chars().count(), 150);
}

#[test]
fn csv_quotes_are_escaped() {
    let input = record("k\"q", "fprop", &[], 0, "na", "o\"p", None);
    for mode in [&["--compat", "--csv"][..], &["--csv"][..]] {
        let out = prof_stdin(&[mode, &["-c", "kernel,op"]].concat(), input.as_bytes());
        assert_eq!(
            nth_row(&String::from_utf8(out.stdout).unwrap(), 1),
            r#""k""q","o""p""#
        );
    }
}

#[test]
fn blank_lines_are_skipped() {
    // PyProf's eval() crashes on a blank line
    let text = read(net_dict());
    let mut input = String::new();
    for l in text.lines().take(3) {
        input.push_str(l);
        input.push_str("\n\n");
    }
    let out = prof_stdin(&["--compat", "-c", "idx"], input.as_bytes());
    assert!(out.status.success());
    assert_eq!(out.stdout, b"Idx\n1\n2\n3\n");
}

#[test]
fn tensor_core_column_by_mode() {
    let m = marker(
        "torch",
        "mm",
        &[
            tensor("(64, 256)", "float16"),
            tensor("(256, 128)", "float16"),
        ],
    );
    let input = [
        record("ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x3_tn", "fprop", &[1], 0, "torch", "mm", Some(&m)),
        record("Kernel", "fprop", &[2], 0, "torch", "mm", Some(&m))
            .replace("\"kLongName\":\"Kernel\"", "\"kLongName\":\"void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_f16_128x128_32x3_nn_align8>(Params)\""),
        record("turing_h1688gemm_128x128_ldg8_tn", "fprop", &[3], 0, "torch", "mm", Some(&m)),
    ]
    .join("\n");
    let compat = prof_stdin(&["--compat", "-c", "tc"], input.as_bytes());
    let fixed = prof_stdin(&["-c", "tc"], input.as_bytes());
    assert_eq!(compat.stdout, b"TC\n0\n0\n1\n");
    assert_eq!(fixed.stdout, b"TC\n1\n1\n1\n");
}

#[test]
fn backward_kernels_borrow_the_forward_marker() {
    // net.dict row 197 is a `mul` backward kernel costed from row 2's marker
    let f = net_dict();
    let out = prof(&[
        "--compat",
        "-c",
        "idx,seq,dir,mod,op,params,flops,bytes",
        f.to_str().unwrap(),
    ]);
    assert_eq!(
        nth_row(&out, 197),
        "197 116 bprop Tensor __mul__ T=[(35,20,200)],fp32, 140000.0 1120000"
    );
}

#[test]
fn json_extras_are_ignored() {
    // the JSON format carries extra keys; prof ignores them
    let parsed = run(rprof()
        .args(["parse", "--compat"])
        .arg(fixture("profiling-lm/net.sql")));
    let first = String::from_utf8(parsed.stdout)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    assert!(first.contains("\"stack\""));
    let out = prof_stdin(&["--compat", "-c", "idx,op,bytes"], first.as_bytes());
    assert_eq!(out.stdout, b"Idx Op Bytes\n1 embedding 1125600\n");
}

/// A record file of many blocks (read, parsed, modelled and printed by
/// three threads, a block each): every record in order, from a file and
/// from a pipe alike; a bad line deep in it stops the run naming that line,
/// after every record before it was printed.
#[test]
fn many_blocks_in_order_and_a_bad_line_named() {
    // PyProf's own lines, 1.3 KB each: 30 copies are ~11 MB, past the
    // largest block (1 MiB) many times, lines straddling block ends
    let one = read(net_dict());
    let n_one = one.lines().count();
    let copies = 30;
    let text = one.repeat(copies);
    let n = n_one * copies;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.dict");
    std::fs::write(&path, &text).unwrap();
    let cols = "idx,dir,op,kernel,params,sil,flops";
    let got = prof(&["-c", cols, "--csv", path.to_str().unwrap()]);
    // the expected rows: each copy's rows as prof prints the one file,
    // renumbered
    let single = prof(&["-c", cols, "--csv", net_dict().to_str().unwrap()]);
    let mut single_rows = single.lines();
    let header = single_rows.next().unwrap();
    let single_rows: Vec<&str> = single_rows.collect();
    assert_eq!(single_rows.len(), n_one);
    let mut want = vec![header.to_owned()];
    for c in 0..copies {
        for (i, row) in single_rows.iter().enumerate() {
            let (_, rest) = row.split_once(',').unwrap();
            want.push(format!("{},{rest}", c * n_one + i + 1));
        }
    }
    let got_lines: Vec<&str> = got.lines().collect();
    assert_eq!(got_lines.len(), n + 1);
    assert_eq!(got_lines, want);
    let piped = prof_stdin(&["-c", cols, "--csv", "-"], text.as_bytes());
    assert!(piped.status.success());
    assert_eq!(String::from_utf8(piped.stdout).unwrap(), got);

    // a line that is not a record, deep in the file
    let bad_at = n - 1234;
    let mut lines: Vec<&str> = text.lines().collect();
    lines[bad_at - 1] = "{'kShortName': ";
    let bad = dir.path().join("bad.dict");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let out = run(rprof().args(["prof", "-c", cols, "--csv"]).arg(&bad));
    assert_eq!(out.status.code(), Some(1));
    let err = one_line_stderr(&out);
    assert!(
        err.contains(&format!("{}:{bad_at}: ", bad.display())),
        "{err}"
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    let printed: Vec<&str> = printed.lines().collect();
    assert_eq!(printed.len(), bad_at);
    assert_eq!(printed, want[..bad_at]);
}
