//! Fuzz harness on stable Rust: an in-process mutation loop over seeds,
//! one target per reader (docs/fuzz.md).
//!
//! Each target takes its seeds (the fixtures, a hand-written trace, lines
//! made from them), mutates them with a deterministic random generator
//! (bit flips, "interesting" bytes and integers, inserted, deleted,
//! duplicated and spliced ranges, truncation; for SQLite also cell-level
//! changes: NULLs, wrong types, huge numbers, long and control-character
//! strings) and runs the whole in-process pipeline on every input: read,
//! attribute, build records, the op models, `prof`'s rows, `summary`,
//! `gpu` with buckets, and a JSON and PyProf-dict round trip of every
//! record. A panic is a finding: the input is saved under
//! `target/fuzz-findings/` and the test fails naming it.
//!
//! `cargo test` runs each target for a couple of seconds;
//! `scripts/fuzz.sh` runs them for minutes (`RPROF_FUZZ_SECS`, and
//! `RPROF_FUZZ_SEED` for another sequence).

use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rprof_ops::{Mode, estimate_kernel};
use rprof_report::gpu::{GpuOptions, GpuReport};
use rprof_report::model::{self, Models};
use rprof_report::summary::{self, Key, Summarizer};
use rprof_report::{ColumnList, Format, Printer, Row};
use rprof_trace::attribute;
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::model::{Kernels, Line, read_line};
use rprof_trace::model::{markers, pylit, stock};
use rprof_trace::read::{self, ReadOptions};

use crate::util::{fixture, root};

/// xorshift64*: small, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.next().is_multiple_of(one_in)
    }
}

/// Seconds per target: `RPROF_FUZZ_SECS`, else 2 (the short run).
fn budget() -> Duration {
    let secs = std::env::var("RPROF_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(2.0);
    Duration::from_secs_f64(secs)
}

fn seed_for(target: &str) -> u64 {
    let base = std::env::var("RPROF_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0x5EED);
    // a different sequence per target, never 0 (xorshift's fixed point)
    target.bytes().fold(base ^ 0x9E37_79B9_7F4A_7C15, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
    }) | 1
}

const INTERESTING_U8: [u8; 10] = [0, 1, 0x7f, 0x80, 0xff, b'"', b'\\', b'\n', 0x1b, b'{'];
const INTERESTING_I64: [i64; 8] = [
    0,
    -1,
    1,
    i64::MAX,
    i64::MIN,
    i32::MAX as i64 + 1,
    1 << 62,
    4_000_000_000,
];

/// A few byte-level mutations of `data`, `other` for splicing.
fn mutate_bytes(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8]) {
    for _ in 0..1 + rng.below(8) {
        let len = data.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = INTERESTING_U8[rng.below(INTERESTING_U8.len())];
            }
            2 if len >= 8 => {
                let i = rng.below(len - 7);
                let v = INTERESTING_I64[rng.below(INTERESTING_I64.len())];
                let bytes = if rng.chance(2) {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                };
                data[i..i + 8].copy_from_slice(&bytes);
            }
            3 => {
                let i = rng.below(len + 1);
                let n = 1 + rng.below(16);
                let ins: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                data.splice(i..i, ins);
            }
            4 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                data.drain(i..i + n);
            }
            5 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(256));
                let copy = data[i..i + n].to_vec();
                let at = rng.below(len + 1);
                data.splice(at..at, copy);
            }
            6 if len > 0 && rng.chance(4) => data.truncate(rng.below(len)),
            7 if !other.is_empty() && len > 0 => {
                let i = rng.below(len);
                let j = rng.below(other.len());
                let n = 1 + rng.below((other.len() - j).min(512));
                let end = (i + n).min(len);
                data.splice(i..end, other[j..j + n].iter().copied());
            }
            _ if len > 0 => {
                // a decimal number in text replaced by an interesting one
                let i = rng.below(len);
                if let Some(p) = data[i..].iter().position(u8::is_ascii_digit) {
                    let s = i + p;
                    let e = data[s..]
                        .iter()
                        .position(|b| !b.is_ascii_digit())
                        .map_or(len, |q| s + q);
                    let v = INTERESTING_I64[rng.below(INTERESTING_I64.len())].to_string();
                    data.splice(s..e, v.into_bytes());
                }
            }
            _ => {}
        }
    }
}

/// Run `exec` on mutated seeds until the budget is spent; report and fail
/// on findings.
fn campaign(
    target: &str,
    seeds: &[Vec<u8>],
    mut make: impl FnMut(&mut Rng, &[u8], &[u8]) -> Vec<u8>,
    exec: impl Fn(&[u8]),
) {
    assert!(!seeds.is_empty(), "{target}: no seeds");
    let mut rng = Rng(seed_for(target));
    let t0 = Instant::now();
    let limit = budget();
    let (mut execs, mut slowest) = (0u64, Duration::ZERO);
    let mut findings: Vec<PathBuf> = Vec::new();
    // seeds first, unmutated
    let mut queue: Vec<Vec<u8>> = seeds.to_vec();
    while t0.elapsed() < limit || !queue.is_empty() {
        let input = match queue.pop() {
            Some(s) => s,
            None => {
                let a = &seeds[rng.below(seeds.len())];
                let b = &seeds[rng.below(seeds.len())];
                make(&mut rng, a, b)
            }
        };
        let t = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| exec(&input)));
        slowest = slowest.max(t.elapsed());
        execs += 1;
        if outcome.is_err() {
            let dir = root().join("target/fuzz-findings");
            let _ = std::fs::create_dir_all(&dir);
            let p = dir.join(format!("{target}-{execs}.bin"));
            let _ = std::fs::write(&p, &input);
            findings.push(p);
            if findings.len() >= 10 {
                break;
            }
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "fuzz {target}: {execs} executions in {:.1} s ({:.0}/s), slowest {:.3} s, {} findings{}",
        t0.elapsed().as_secs_f64(),
        execs as f64 / t0.elapsed().as_secs_f64().max(1e-9),
        slowest.as_secs_f64(),
        findings.len(),
        if findings.is_empty() {
            String::new()
        } else {
            format!(" saved as {findings:?}")
        }
    );
    assert!(
        findings.is_empty(),
        "fuzz {target}: inputs that panic: {findings:?}"
    );
}

/// Everything the commands do with records, in process.
fn consume_records(recs: &Kernels<'_>, compat: bool) {
    let mode = if compat { Mode::Apex } else { Mode::Fixed };
    let mut models = Models::with_mode(mode);
    let resolved = models.resolve(recs);
    let cols: ColumnList = "all".parse().expect("all columns");
    let mut printer =
        Printer::new(Vec::new(), &cols.0, Format::Columns(400), compat).expect("layout");
    let mut csv = Printer::new(Vec::new(), &cols.0, Format::Csv, compat).expect("layout");
    let _ = printer.write_header();
    for (i, (rec, res)) in recs.iter().zip(&resolved).enumerate() {
        let k = estimate_kernel(rec, res, mode);
        let row = Row::new(i as u64 + 1, rec, &k, compat);
        printer.write_row(&row).expect("row to memory");
        csv.write_row(&row).expect("row to memory");
    }
    let text = printer.into_inner().expect("to memory");
    // every table line is one row: no control character survives
    assert!(
        !String::from_utf8_lossy(&text)
            .chars()
            .any(|c| c.is_control() && c != '\n'),
        "a control character reached the table"
    );
    let est = model::estimate(recs, &resolved);
    let mut sum = Summarizer::new(Key::Nvtx);
    let mut by_kernel = Summarizer::new(Key::Kernel);
    let devices = Vec::new();
    let mut gpu = GpuReport::new(
        devices,
        GpuOptions {
            bucket_ns: Some(1_000_000),
            kineto_check: true,
            ..GpuOptions::default()
        },
    );
    for (r, e) in recs.iter().zip(&est) {
        sum.add(r, e);
        by_kernel.add(r, e);
        gpu.add(r, e);
    }
    let report = sum.finish(0);
    let _ = summary::write_table(Vec::new(), &report, Key::Nvtx, 80);
    let _ = summary::write_json(Vec::new(), &report);
    let _ = summary::write_csv(Vec::new(), &by_kernel.finish(5));
    let _ = gpu.write(Vec::new(), "fuzz");
    // round trips: what parse writes, prof reads back
    for r in recs {
        let r = r.to_record();
        let mut buf = Vec::new();
        r.write_json(&mut buf);
        let line = std::str::from_utf8(&buf).expect("records are UTF-8");
        match read_line(line) {
            Ok(Line::Record(_)) => {}
            other => panic!("a record written as JSON does not read back: {other:?}"),
        }
        let mut s = String::new();
        r.write_pydict(&mut s);
        if let Err(e) = read_line(&s) {
            panic!("a record written as a PyProf dict does not read back: {e}");
        }
    }
}

/// `rprof stats` on a profile: its own reader (every table), every report
/// written as CSV, and the reports in the window of the first NVTX range
/// (`--filter-nvtx` on its text).
fn consume_stats(path: &Path) {
    use rprof_report::stats::{self, View, render};
    let Ok(data) = rprof_trace::read::stats_sql::load(path, stats::Tables::all()) else {
        return;
    };
    let opts = render::Options {
        format: render::Format::Csv,
        time: render::TimeUnit::Ns,
        mem: render::MemUnit::B,
    };
    let first = data
        .nvtx
        .as_ref()
        .and_then(|r| r.first())
        .map(|r| data.names.get(r.text).to_owned());
    let window = first.and_then(|text| stats::find_nvtx_window(&data, &text).ok());
    for w in [None, window.as_ref()] {
        let view = View::new(&data, w);
        for info in stats::REPORTS {
            let Ok(req) = stats::Request::parse(info.name) else {
                continue;
            };
            let table = stats::run(&view, &req);
            let _ = render::write(&mut std::io::sink(), &table, &data.names, &opts);
        }
    }
}

/// Read a profile file and run everything on its records; the number of
/// records.
fn consume_profile(path: &Path, compat: bool) -> usize {
    consume_stats(path);
    // the read of the record-building views: only the ranges that enclose
    // a launch call (nsys), read after the launches
    if let Ok(mut lean) = read::read(
        path,
        ReadOptions {
            compat,
            memops: true,
            enclosing_ranges_only: true,
            ..ReadOptions::default()
        },
    ) {
        let _ = attribute::attribute(&lean.launches, &mut lean.ranges);
    }
    // every table the readers can fill, so that all of them are fuzzed
    let Ok(mut trace) = read::read(
        path,
        ReadOptions {
            compat,
            ..ReadOptions::everything()
        },
    ) else {
        return 0;
    };
    // the job-level views on the whole trace
    let _ = rprof_report::mem::compute(&trace, rprof_report::mem::MemOptions::default());
    let _ = rprof_report::idle::compute(&trace, &rprof_report::idle::IdleOptions::default());
    let step = regex::Regex::new(r"ProfilerStep#\d+").expect("pattern");
    let _ = rprof_report::dist::build(vec![rprof_report::dist::summarize(&trace, 0, &step)]);
    let enclosing = attribute::attribute(&trace.launches, &mut trace.ranges);
    let innermost: Vec<Option<u32>> = (0..trace.launches.len() as u32)
        .map(|l| enclosing.of(l).last().copied())
        .collect();
    let _ = rprof_report::steps::compute(
        &trace,
        &rprof_report::steps::StepOptions { pattern: None },
        &innermost,
    );
    let mut n = 0;
    let _ = build::build(
        &trace,
        &enclosing,
        BuildOptions {
            compat,
            ..BuildOptions::default()
        },
        |recs| {
            n += recs.len();
            consume_records(recs, compat);
            rprof_trace::Result::Ok(())
        },
    );
    n
}

/// The seeds themselves go all the way through the pipeline (else the
/// campaign would only exercise error paths).
fn assert_seeds_work(target: &str, seeds: &[Vec<u8>]) {
    for (i, s) in seeds.iter().enumerate() {
        let f = temp_input(s);
        assert!(
            consume_profile(f.path(), false) > 0,
            "{target}: seed {i} yields no records"
        );
    }
}

fn temp_input(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    f.write_all(bytes).expect("write temp file");
    f
}

/// SQLite inputs: half the time byte mutations of the file, half the time
/// cell mutations through SQL on a copy (NULLs, wrong types, extremes).
fn mutate_sqlite(rng: &mut Rng, seed: &[u8], other: &[u8]) -> Vec<u8> {
    let mut data = seed.to_vec();
    if rng.chance(2) {
        mutate_bytes(rng, &mut data, other);
        return data;
    }
    let f = temp_input(seed);
    let Ok(conn) = rusqlite::Connection::open(f.path()) else {
        return data;
    };
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut st| {
            st.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .unwrap_or_default();
    for _ in 0..1 + rng.below(6) {
        let Some(t) = tables.get(rng.below(tables.len())) else {
            break;
        };
        let cols: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{t}')"))
            .and_then(|mut st| {
                st.query_map([], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .unwrap_or_default();
        let Some(c) = cols.get(rng.below(cols.len())) else {
            continue;
        };
        let value = match rng.below(8) {
            0 => "NULL".to_owned(),
            1 => INTERESTING_I64[rng.below(INTERESTING_I64.len())].to_string(),
            2 => "'x\u{1b}]0;t\u{7}\n\r\u{8}'".to_owned(),
            3 => "X'00ff'".to_owned(),
            4 => "1e308".to_owned(),
            5 => "'12abc'".to_owned(),
            6 => format!("'{}'", "y".repeat(rng.below(5000))),
            _ => format!("{} - {}", rng.next() % 1000, rng.next() % 1000),
        };
        let filter = if rng.chance(3) {
            String::new()
        } else {
            format!(" WHERE rowid % {} = 0", 1 + rng.below(20))
        };
        let _ = conn.execute(&format!("UPDATE \"{t}\" SET \"{c}\" = {value}{filter}"), []);
    }
    drop(conn);
    std::fs::read(f.path()).unwrap_or(data)
}

fn sqlite_seeds(names: &[&str]) -> Vec<Vec<u8>> {
    names
        .iter()
        .map(|n| std::fs::read(fixture(n)).expect("fixture"))
        .collect()
}

fn profile_exec(bytes: &[u8]) {
    let f = temp_input(bytes);
    let _ = consume_profile(f.path(), bytes.len() % 2 == 1);
}

#[test]
fn fuzz_nsys_sqlite() {
    let seeds = sqlite_seeds(&[
        "flameox/nsight-2025.5.2.sqlite",
        "mordred/report1_2021.sqlite",
    ]);
    assert_seeds_work("nsys", &seeds);
    campaign("nsys", &seeds, mutate_sqlite, profile_exec);
}

#[test]
fn fuzz_nvprof_sqlite() {
    let seeds = sqlite_seeds(&["profiling-lm/net.sql"]);
    assert_seeds_work("nvprof", &seeds);
    campaign("nvprof", &seeds, mutate_sqlite, profile_exec);
}

/// A small Kineto trace with every event kind rprof reads.
const KINETO_SEED: &str = r#"{"schemaVersion": 1,
 "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42314694656,
   "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
   "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
   "sharedMemPerMultiprocessor": 167936, "numSms": 108, "sharedMemPerBlockOptin": 166912}],
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 2, "ts": 100.5, "dur": 900,
   "args": {"External id": 3, "Sequence number": 7, "Fwd thread id": 0, "Input Dims": [[8, 16], [32, 16], [32]], "Input type": ["float", "float", "float"], "Module Hierarchy": "top.fc", "Call stack": "a.py(1): f;b.py(2): g"}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 2, "ts": 110, "dur": 800,
   "args": {"External id": 4, "Sequence number": 8, "Input Dims": [[32], [8, 16], [16, 32]], "Input type": ["float", "float", "float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 120, "dur": 10,
   "args": {"correlation": 11, "External id": 4}},
  {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_32x32_sliced1x4_tn", "pid": 0, "tid": 7, "ts": 200.001, "dur": 3.5,
   "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 11, "registers per thread": 86,
   "shared memory": 16384, "blocks per SM": 0.07, "warps per SM": 0.3, "grid": [8, 1, 1], "block": [128, 1, 1],
   "est. achieved occupancy %": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 2, "ts": 130, "dur": 5,
   "args": {"correlation": 12}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 210, "dur": 1,
   "args": {"device": 0, "stream": 7, "correlation": 12, "bytes": 4096}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 2, "ts": 50, "dur": 2000},
  {"ph": "i", "cat": "kernel", "name": "instant", "pid": 0, "tid": 7, "ts": 300},
  {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}
 ]}"#;

fn kineto_seeds() -> Vec<Vec<u8>> {
    let mut seeds = vec![KINETO_SEED.as_bytes().to_vec()];
    // a small real trace when the shared corpus is there
    let p = root().join("../shared/corpus/kineto-hta/triton_example.json.gz");
    if let Ok(gz) = std::fs::read(&p) {
        let mut text = Vec::new();
        let ok =
            std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut text);
        if ok.is_ok() && text.len() < (4 << 20) {
            seeds.push(text);
        }
    }
    seeds
}

/// JSON-aware mutations on top of the byte ones: a value swapped for one of
/// another type, a field dropped, an event duplicated.
fn mutate_json(rng: &mut Rng, seed: &[u8], other: &[u8]) -> Vec<u8> {
    let mut data = seed.to_vec();
    if rng.chance(2) {
        const VALUES: [&str; 12] = [
            "null",
            "\"X\"",
            "5",
            "-1",
            "1e400",
            "[]",
            "{}",
            "\"\\u001b[2J\"",
            "18446744073709551615",
            "true",
            "\"kernel\"",
            "\"\"",
        ];
        for _ in 0..1 + rng.below(4) {
            // replace the value after a random `": `
            let positions: Vec<usize> = data
                .windows(2)
                .enumerate()
                .filter(|(_, w)| w == b"\":")
                .map(|(i, _)| i + 2)
                .collect();
            let Some(&at) = positions.get(rng.below(positions.len())) else {
                break;
            };
            let end = data[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']'))
                .map_or(data.len(), |p| at + p);
            let v = VALUES[rng.below(VALUES.len())];
            data.splice(at..end, format!(" {v}").into_bytes());
        }
    } else {
        mutate_bytes(rng, &mut data, other);
    }
    if rng.chance(8) {
        // as a gzip file, sometimes two members
        let mut gz = Vec::new();
        let mut e = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::fast());
        let cut = rng.below(data.len() + 1);
        let _ = e.write_all(&data[..cut]);
        let _ = e.finish();
        let mut e = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::fast());
        let _ = e.write_all(&data[cut..]);
        let _ = e.finish();
        return gz;
    }
    data
}

#[test]
fn fuzz_kineto_json() {
    let seeds = kineto_seeds();
    assert_seeds_work("kineto", &seeds);
    campaign("kineto", &seeds, mutate_json, profile_exec);
}

/// Record lines: PyProf dicts from the fixture and JSON Lines made from a
/// fixture profile.
fn record_seeds() -> Vec<Vec<u8>> {
    let dict = std::fs::read_to_string(fixture("profiling-lm/net.dict")).expect("fixture");
    let mut seeds: Vec<Vec<u8>> = dict
        .lines()
        .take(40)
        .map(|l| l.as_bytes().to_vec())
        .collect();
    let mut trace = read::read(
        &fixture("mordred/report1_2021.sqlite"),
        ReadOptions::default(),
    )
    .expect("fixture reads");
    let enclosing = attribute::attribute(&trace.launches, &mut trace.ranges);
    build::build(&trace, &enclosing, BuildOptions::default(), |recs| {
        for r in recs.iter().take(20) {
            let mut buf = Vec::new();
            r.to_record().write_json(&mut buf);
            seeds.push(buf);
        }
        rprof_trace::Result::Ok(())
    })
    .expect("fixture builds");
    seeds
}

fn records_exec(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let mut recs = Kernels::new();
    for line in text.lines() {
        if let Ok(Line::Record(r)) = read_line(line) {
            recs.push_record(*r);
        }
    }
    consume_records(&recs, bytes.len() % 2 == 1);
}

#[test]
fn fuzz_records() {
    let seeds = record_seeds();
    campaign(
        "records",
        &seeds,
        |rng, a, b| {
            let mut d = mutate_json(rng, a, b);
            if rng.chance(4) {
                d.push(b'\n');
                d.extend_from_slice(b);
            }
            d
        },
        records_exec,
    );
}

/// Marker texts: PyProf dict markers, stock PyTorch markers, layer and
/// trace markers.
fn marker_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = [
        "{'mod': 'torch.nn.functional', 'op': 'conv2d', 'args': [{'name': '', 'type': 'tensor', 'shape': (32, 3, 224, 224), 'dtype': 'float16'}, {'name': '', 'type': 'tensor', 'shape': (64, 3, 7, 7), 'dtype': 'float16'}, {'name': 'stride', 'type': 'tuple', 'value': (2, 2)}]}",
        "{'traceMarker': ['/a/b.py:10', '/a/c.py:20']}",
        "{'layer': 'Block1', 'mod': 'torch.nn', 'op': 'Linear'}",
        "aten::mm, seq = 12, op_id = 40, sizes = [[8, 16], [16, 32]], dtypes = [float, float]",
        "aten::convolution_backward, seq = 3, op_id = 2, sizes = [[1, 2, 3, 4], [], [5]], dtypes = [c10::Half, Half]",
        "autograd::engine::evaluate_function: AddmmBackward0, seq = 9",
        "layer:Encoder",
        "MulBackward0, seq = 1, sizes = [[2, 2]]",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let dict = std::fs::read_to_string(fixture("profiling-lm/net.dict")).expect("fixture");
    for line in dict.lines().take(10) {
        if let Ok(v) = pylit::parse(line) {
            let mut s = String::new();
            pylit::write_repr(&mut s, &v);
            seeds.push(s.into_bytes());
        }
    }
    seeds
}

fn markers_exec(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let parts: Vec<&str> = text.split('\u{1}').collect();
    for compat in [false, true] {
        for t in &parts {
            let _ = markers::prepare(t, compat);
        }
        let _ = markers::classify(&parts, compat);
    }
    for t in &parts {
        let _ = stock::parse(t);
        let _ = stock::parse_shapes(t);
        let _ = stock::is_backward_name(t);
    }
}

#[test]
fn fuzz_markers() {
    campaign(
        "markers",
        &marker_seeds(),
        |rng, a, b| {
            let mut d = a.to_vec();
            mutate_bytes(rng, &mut d, b);
            if rng.chance(3) {
                d.push(1);
                d.extend_from_slice(b);
            }
            d
        },
        markers_exec,
    );
}

fn literal_exec(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    if let Ok(v) = pylit::parse(&text) {
        let mut s = String::new();
        pylit::write_repr(&mut s, &v);
        if let Err(e) = pylit::parse(&s) {
            panic!("repr of a parsed literal does not parse: {e}: {s}");
        }
    }
}

#[test]
fn fuzz_literals() {
    let mut seeds = marker_seeds();
    seeds.extend(
        [
            "[1, -2.5e-3, 'a\\'b', \"c\\x1b\", (1,), {}, {'k': [None, True, False]}, 1e308, -0.0, inf]",
            "((((((((((1))))))))))",
            "{'a': (1, 2, [3, {'b': 'c'}])}",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec()),
    );
    campaign(
        "literals",
        &seeds,
        |rng, a, b| {
            let mut d = a.to_vec();
            mutate_bytes(rng, &mut d, b);
            if rng.chance(50) {
                // deep nesting
                let n = rng.below(100_000);
                let mut deep = "[".repeat(n).into_bytes();
                deep.extend(d);
                return deep;
            }
            d
        },
        literal_exec,
    );
}

/// Every input the fuzzer once found a panic with, run again: the small
/// ones are kept in `tests/fuzz-regressions/` (named `TARGET-N.bin`); those
/// of a local run in `target/fuzz-findings/` are replayed too.
#[test]
fn fuzz_regressions_replay() {
    let mut replayed = 0;
    for dir in [
        root().join("tests/fuzz-regressions"),
        root().join("target/fuzz-findings"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let bytes = std::fs::read(&p).expect("read a regression input");
            let target = name.split('-').next().unwrap_or("");
            let run = || match target {
                "nsys" | "nvprof" | "kineto" => profile_exec(&bytes),
                "records" => records_exec(&bytes),
                "markers" => markers_exec(&bytes),
                "literals" => literal_exec(&bytes),
                _ => {}
            };
            assert!(
                catch_unwind(AssertUnwindSafe(run)).is_ok(),
                "{} panics",
                p.display()
            );
            replayed += 1;
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "fuzz regressions: {replayed} inputs replayed"
    );
}
