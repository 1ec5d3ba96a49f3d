//! `rprof dist`: hand-computed figures on small synthetic jobs (nsys exports
//! with several processes and NCCL kernels, PyTorch-profiler rank files
//! with distributedInfo), the bad-input cases, and the corpus's multi-rank
//! captures. Unions and intersections are computed here by a plain
//! sort-and-merge, independently of rprof's interval algebra.

use std::path::{Path, PathBuf};

use rprof_testkit::dist::{JobSynth, NCCL_ALLREDUCE, NCCL_SENDRECV};
use serde_json::Value;

use crate::util::{fixture, rprof, run};

/// Length of the union of half-open intervals: sort, merge, add up.
fn union_len(mut v: Vec<(i64, i64)>) -> i64 {
    v.retain(|(s, e)| e > s);
    v.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(i64, i64)> = None;
    for (s, e) in v {
        cur = match cur {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = cur {
        total += ce - cs;
    }
    total
}

/// Expected (span, busy, compute, comm, overlap, idle) of a rank's kernels
/// `(start, end, is_comm)`; overlap by inclusion–exclusion.
fn expected(k: &[(i64, i64, bool)]) -> [i64; 6] {
    let all: Vec<_> = k.iter().map(|x| (x.0, x.1)).collect();
    let comp: Vec<_> = k.iter().filter(|x| !x.2).map(|x| (x.0, x.1)).collect();
    let comm: Vec<_> = k.iter().filter(|x| x.2).map(|x| (x.0, x.1)).collect();
    let span = k.iter().map(|x| x.1).max().unwrap() - k.iter().map(|x| x.0).min().unwrap();
    let busy = union_len(all);
    let (c, m) = (union_len(comp), union_len(comm));
    [span, busy, c, m, c + m - busy, span - busy]
}

fn figures(rank: &Value) -> [i64; 6] {
    let g = |k: &str| rank[k].as_i64().unwrap_or_else(|| panic!("{k} in {rank}"));
    [
        g("span_ns"),
        g("busy_ns"),
        g("compute_ns"),
        g("comm_ns"),
        g("overlap_ns"),
        g("idle_ns"),
    ]
}

fn dist_json(args: &[&Path]) -> Value {
    let out = run(rprof().arg("dist").arg("--json").args(args));
    assert!(
        out.status.success(),
        "rprof dist failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn rank(doc: &Value, r: u64) -> &Value {
    doc["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["rank"] == r)
        .unwrap_or_else(|| panic!("no rank {r} in {doc}"))
}

/// Rank A (pid 100, GPU 0) and rank B (pid 200, GPU 1) in one export:
/// compute kernels overlapping each other, a communication kernel nested
/// in another, communication overlapping compute.
/// A rank's kernels: (start, end, is communication).
type Spans = Vec<(i64, i64, bool)>;

/// A Kineto kernel: (name, launch µs, ts µs, dur µs, (nelems, collective)).
type KKernel<'a> = (&'a str, f64, f64, f64, Option<(i64, &'a str)>);

fn two_process_job() -> (JobSynth, Spans, Spans) {
    let a = vec![
        (10_000, 20_000, false, "gemm_a", 7),
        (15_000, 25_000, false, "gemm_b", 8),
        (22_000, 30_000, true, NCCL_ALLREDUCE, 20),
        (24_000, 28_000, true, NCCL_ALLREDUCE, 21),
        (40_000, 50_000, false, "gemm_c", 7),
        (45_000, 60_000, true, NCCL_SENDRECV, 20),
    ];
    let b = vec![
        (10_000, 12_000, false, "gemm_a", 7),
        (20_000, 30_000, true, NCCL_ALLREDUCE, 20),
        (26_000, 28_000, true, NCCL_ALLREDUCE, 21),
        (52_000, 60_000, true, NCCL_SENDRECV, 20),
        (61_000, 70_000, false, "gemm_d", 7),
    ];
    let mut job = JobSynth::new();
    for (pid, dev, ks) in [(100u64, 0i64, &a), (200, 1, &b)] {
        for &(s, e, _, name, stream) in ks.iter() {
            job.kernel(pid, dev, stream, name, s, e);
        }
    }
    let strip = |v: &[(i64, i64, bool, &str, i64)]| v.iter().map(|x| (x.0, x.1, x.2)).collect();
    (job, strip(&a), strip(&b))
}

#[test]
fn one_export_two_processes_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("job.sqlite");
    let (job, a, b) = two_process_job();
    job.write(&p, Some(1_700_000_000_000_000_000)).unwrap();
    let doc = dist_json(&[&p]);
    let (ra, rb) = (rank(&doc, 0), rank(&doc, 1));
    assert_eq!(
        (ra["pid"].as_u64(), ra["device"].as_i64()),
        (Some(100), Some(0))
    );
    assert_eq!(
        (rb["pid"].as_u64(), rb["device"].as_i64()),
        (Some(200), Some(1))
    );
    assert_eq!(ra["rank_from"], "process order");
    // by hand, then by sort-and-merge
    assert_eq!(figures(ra), [50_000, 40_000, 25_000, 23_000, 8_000, 10_000]);
    assert_eq!(figures(rb), [60_000, 29_000, 11_000, 18_000, 0, 31_000]);
    assert_eq!(figures(ra), expected(&a));
    assert_eq!(figures(rb), expected(&b));
    assert_eq!(
        (ra["kernels"].as_u64(), ra["comm_kernels"].as_u64()),
        (Some(6), Some(3))
    );
    // TensorBoard plugin: computation = compute − overlap, communication = comm − overlap
    assert_eq!(ra["tb_computation_ns"], 17_000);
    assert_eq!(ra["tb_communication_ns"], 15_000);
    assert_eq!(ra["tb_other_ns"], 10_000);
    // HTA: overlap % of communication
    let o = ra["hta_comm_comp_overlap_pct"].as_f64().unwrap();
    assert!((o - 100.0 * 8_000.0 / 23_000.0).abs() < 1e-9, "{o}");
    // matched: i-th collective of each rank; transfer = min duration
    // durations A: 8000, 4000, 15000; B: 10000, 2000, 8000
    assert_eq!(ra["comm_transfer_ns"], 18_000);
    assert_eq!(rb["comm_transfer_ns"], 18_000);
    assert_eq!(ra["comm_wait_ns"], 9_000);
    assert_eq!(rb["comm_wait_ns"], 2_000);
    // arrivals: A 22000/B 20000 (A last by 2000), A 24000/B 26000 (B by
    // 2000), A 45000/B 52000 (B by 7000)
    assert_eq!(ra["times_last"], 1);
    assert_eq!(ra["lateness_ns"], 2_000);
    assert_eq!(rb["times_last"], 2);
    assert_eq!(rb["lateness_ns"], 9_000);
    let s = &doc["stragglers"];
    assert_eq!(s["matched_collectives"], 3);
    assert_eq!(s["stragglers"], serde_json::json!([1]));
    assert_eq!(s["most_compute"]["rank"], 0);
    assert_eq!(doc["clock"]["aligned"], true);
    assert_eq!(doc["clock"]["max_skew_ns"], 0);
    // collective table
    let colls = doc["collectives"].as_array().unwrap();
    let ar = colls.iter().find(|c| c["op"] == "all_reduce").unwrap();
    assert_eq!(ar["calls"], 4);
    assert_eq!(ar["total_ns"], 24_000);
    assert_eq!(ar["transfer_mean_ns"].as_f64(), Some(5_000.0));
    assert_eq!(ar["bytes_per_call"], Value::Null);
    assert_eq!(ar["algbw_gbps"], Value::Null);
    let sr = colls.iter().find(|c| c["op"] == "send_recv").unwrap();
    assert_eq!(
        (sr["calls"].as_u64(), sr["total_ns"].as_i64()),
        (Some(2), Some(23_000))
    );
    assert_eq!(
        (sr["rank_max"].as_u64(), sr["rank_max_ns"].as_i64()),
        (Some(0), Some(15_000))
    );

    // the table says it too
    let out = run(rprof().arg("dist").arg(&p));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("rank 1 is a straggler"), "{text}");
    assert!(text.contains("clocks: aligned on one file"), "{text}");
}

#[test]
fn csv_rows_match_json() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("job.sqlite");
    two_process_job().0.write(&p, None).unwrap();
    let out = run(rprof().args(["dist", "--csv"]).arg(&p));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 2);
    let col = |name: &str| h.iter().position(|x| x == name).unwrap();
    assert_eq!(&rows[0][col("busy_ns")], "40000");
    assert_eq!(&rows[1][col("comm_wait_ns")], "2000");
    let out = run(rprof()
        .args(["dist", "--csv", "--table", "collectives"])
        .arg(&p));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("op,bytes_per_call,group_size,calls"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 3);
}

/// A PyTorch-profiler rank trace: kernels `(name, ts µs, dur µs, comm)`
/// each launched at `launch µs`, and step ranges.
fn kineto_rank(
    rank: i64,
    world: i64,
    base_ns: i64,
    pid: u64,
    kernels: &[KKernel<'_>],
    steps: &[(&str, f64, f64)],
) -> String {
    let mut ev = Vec::new();
    for (i, (name, launch, ts, dur, comm)) in kernels.iter().enumerate() {
        let corr = i + 1;
        ev.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":{pid},"tid":{pid},"ts":{launch},"dur":2,"args":{{"correlation":{corr}}}}}"#
        ));
        let extra = match comm {
            Some((n, op)) => format!(
                r#","Collective name":"{op}","In msg nelems":{n},"Out msg nelems":{n},"Group size":2,"dtype":"Float","Process Group Name":"0","Process Group Ranks":"[0, 1]""#
            ),
            None => String::new(),
        };
        ev.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7,"correlation":{corr}{extra}}}}}"#
        ));
    }
    for (name, ts, dur) in steps {
        ev.push(format!(
            r#"{{"ph":"X","cat":"user_annotation","name":"{name}","pid":{pid},"tid":{pid},"ts":{ts},"dur":{dur}}}"#
        ));
    }
    format!(
        r#"{{"schemaVersion":1,"distributedInfo":{{"backend":"nccl","rank":{rank},"world_size":{world},"pg_count":1,"pg_config":[{{"pg_name":"0","pg_size":{world},"ranks":[0,1]}}]}},"baseTimeNanoseconds":{base_ns},"traceEvents":[{}]}}"#,
        ev.join(",\n")
    )
}

const B0: i64 = 1_000_000_000_000_000_000;
const AR: &str = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";

/// Two rank files: `a` declares rank 1, `b` (5 µs later base time) rank 0.
fn write_kineto_job(dir: &Path, second_comm: bool) -> (PathBuf, PathBuf) {
    let x = kineto_rank(
        1,
        2,
        B0,
        11,
        &[
            ("gemm", 10.0, 30.0, 20.0, None),
            (AR, 20.0, 40.0, 30.0, Some((1000, "allreduce"))),
            ("gemm", 110.0, 130.0, 20.0, None),
            (AR, 120.0, 150.0, 10.0, Some((1000, "allreduce"))),
        ],
        &[
            ("ProfilerStep#1", 0.0, 100.0),
            ("ProfilerStep#2", 100.0, 60.0),
        ],
    );
    let mut yk = vec![
        ("gemm", 10.0, 20.0, 25.0, None),
        (AR, 20.0, 50.0, 20.0, Some((1000, "allreduce"))),
        ("gemm", 110.0, 120.0, 10.0, None),
    ];
    if second_comm {
        yk.push((AR, 120.0, 140.0, 20.0, Some((1000, "allreduce"))));
    }
    let y = kineto_rank(
        0,
        2,
        B0 + 5_000,
        22,
        &yk,
        &[
            ("ProfilerStep#1", 0.0, 90.0),
            ("ProfilerStep#2", 90.0, 80.0),
        ],
    );
    let pa = dir.join("a.pt.trace.json");
    std::fs::write(&pa, x).unwrap();
    let pb = dir.join("b.pt.trace.json.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, y.as_bytes()).unwrap();
    std::fs::write(&pb, gz.finish().unwrap()).unwrap();
    (pa, pb)
}

#[test]
fn kineto_directory_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    write_kineto_job(dir.path(), true);
    let doc = dist_json(&[dir.path()]);
    let (r0, r1) = (rank(&doc, 0), rank(&doc, 1));
    assert_eq!(r0["rank_from"], "distributedInfo");
    assert!(r0["file"].as_str().unwrap().ends_with("b.pt.trace.json.gz"));
    assert_eq!(r1["pid"], 11);
    // rank 1 (a): compute [30,50) [130,150), comm [40,70) [150,160) µs
    let a = [
        (30_000, 50_000, false),
        (40_000, 70_000, true),
        (130_000, 150_000, false),
        (150_000, 160_000, true),
    ];
    let b = [
        (20_000, 45_000, false),
        (50_000, 70_000, true),
        (120_000, 130_000, false),
        (140_000, 160_000, true),
    ];
    assert_eq!(figures(r1), expected(&a));
    assert_eq!(
        figures(r1),
        [130_000, 70_000, 40_000, 40_000, 10_000, 60_000]
    );
    assert_eq!(figures(r0), expected(&b));
    // durations rank 1: 30, 10 µs; rank 0: 20, 20 µs → transfer 20 + 10
    assert_eq!(r1["comm_transfer_ns"], 30_000);
    assert_eq!(r0["comm_transfer_ns"], 30_000);
    assert_eq!(r1["comm_wait_ns"], 10_000);
    assert_eq!(r0["comm_wait_ns"], 10_000);
    // aligned on baseTimeNanoseconds: rank 0 starts its first all-reduce at
    // B0 + 55 µs, rank 1 at B0 + 40 µs; the second at B0 + 145 / B0 + 150
    assert_eq!(doc["clock"]["aligned"], true);
    assert!(
        doc["clock"]["method"]
            .as_str()
            .unwrap()
            .contains("baseTimeNanoseconds")
    );
    assert_eq!(
        (r0["times_last"].as_u64(), r0["lateness_ns"].as_i64()),
        (Some(1), Some(15_000))
    );
    assert_eq!(
        (r1["times_last"].as_u64(), r1["lateness_ns"].as_i64()),
        (Some(1), Some(5_000))
    );
    assert_eq!(doc["stragglers"]["stragglers"], serde_json::json!([]));
    // ends: rank 1 at B0+70 / B0+160, rank 0 at B0+75 / B0+165
    assert_eq!(r1["clock_skew_ns"], -5_000);
    assert_eq!(doc["clock"]["max_skew_ns"], 5_000);
    // collective table: 1000 floats = 4000 B; mean transfer 15 µs
    let c = &doc["collectives"][0];
    assert_eq!(c["op"], "all_reduce");
    assert_eq!(c["bytes_per_call"], 4_000);
    assert_eq!(c["group_size"], 2);
    assert_eq!(c["calls"], 4);
    assert_eq!(c["total_ns"], 80_000);
    assert_eq!(c["bw_time"], "transfer");
    let algbw = c["algbw_gbps"].as_f64().unwrap();
    assert!((algbw - 4_000.0 / 15_000.0).abs() < 1e-12, "{algbw}");
    // all_reduce bus factor 2(n−1)/n = 1 for n = 2
    assert!((c["busbw_gbps"].as_f64().unwrap() - algbw).abs() < 1e-12);
    // steps: kernels by launch time; step time spread across ranks
    let steps = doc["steps"].as_array().unwrap();
    let st = |name: &str, r: u64| {
        steps
            .iter()
            .find(|s| s["step"] == name && s["rank"] == r)
            .unwrap()
    };
    assert_eq!(figures(st("ProfilerStep#1", 1)), expected(&a[..2]));
    assert_eq!(figures(st("ProfilerStep#2", 1)), expected(&a[2..]));
    assert_eq!(figures(st("ProfilerStep#2", 0)), expected(&b[2..]));
    assert_eq!(st("ProfilerStep#1", 0)["cpu_ns"], 90_000);
    let sp = &doc["step_spread"];
    assert_eq!(sp[0]["step"], "ProfilerStep#1");
    assert_eq!(
        (sp[0]["spread_ns"].as_i64(), sp[0]["slowest_rank"].as_u64()),
        (Some(10_000), Some(1))
    );
    assert_eq!(
        (sp[1]["spread_ns"].as_i64(), sp[1]["slowest_rank"].as_u64()),
        (Some(20_000), Some(0))
    );
}

#[test]
fn unmatched_collectives_are_null_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    write_kineto_job(dir.path(), false);
    let doc = dist_json(&[dir.path()]);
    for r in [0, 1] {
        assert_eq!(rank(&doc, r)["comm_transfer_ns"], Value::Null);
        assert_eq!(rank(&doc, r)["comm_wait_ns"], Value::Null);
        assert_eq!(rank(&doc, r)["lateness_ns"], Value::Null);
    }
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("different numbers of collectives (rank 0: 1, rank 1: 2)"),
        "{notes}"
    );
    assert!(doc["stragglers"]["reason"].is_string());
    // the per-rank breakdown needs no matching
    assert_eq!(rank(&doc, 0)["comm_ns"], 20_000);
}

#[test]
fn rank_file_without_kernels_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (p1, p2) = (dir.path().join("r0.sqlite"), dir.path().join("r1.sqlite"));
    let mut job = JobSynth::new();
    job.kernel(100, 0, 7, "gemm", 10_000, 20_000);
    job.write(&p1, Some(B0)).unwrap();
    JobSynth::new().write(&p2, Some(B0)).unwrap();
    let doc = dist_json(&[&p1, &p2]);
    let r1 = rank(&doc, 1);
    assert_eq!(r1["kernels"], 0);
    assert_eq!(r1["device"], Value::Null);
    assert_eq!(r1["note"], "no kernels in this file");
    assert_eq!(rank(&doc, 0)["busy_ns"], 10_000);
    let out = run(rprof().arg("dist").arg(&p1).arg(&p2));
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("no kernels")
    );
}

#[test]
fn files_of_different_jobs_are_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(
        &a,
        kineto_rank(0, 2, B0, 1, &[("k", 1.0, 2.0, 1.0, None)], &[]),
    )
    .unwrap();
    std::fs::write(
        &b,
        kineto_rank(1, 4, B0, 2, &[("k", 1.0, 2.0, 1.0, None)], &[]),
    )
    .unwrap();
    let out = run(rprof().arg("dist").arg(&a).arg(&b));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("different jobs") && err.contains("a.json") && err.contains("b.json"),
        "{err}"
    );
}

#[test]
fn missing_file_is_an_error_and_nothing_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("job.sqlite");
    two_process_job().0.write(&p, None).unwrap();
    let gone = dir.path().join("rank9.sqlite");
    let out = run(rprof().arg("dist").arg(&p).arg(&gone));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("rank9.sqlite") && err.contains("no such file"),
        "{err}"
    );
    // an empty directory is an error too
    let empty = tempfile::tempdir().unwrap();
    let out = run(rprof().arg("dist").arg(empty.path()));
    assert_eq!(out.status.code(), Some(1));
    // a bad step pattern is a usage error
    let out = run(rprof().args(["dist", "--step", "("]).arg(&p));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn mixed_nsys_and_kineto_are_not_aligned() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, _) = write_kineto_job(dir.path(), true);
    let p = dir.path().join("job.sqlite");
    two_process_job().0.write(&p, Some(B0)).unwrap();
    let doc = dist_json(&[&p, &pa]);
    assert_eq!(doc["clock"]["aligned"], false);
    assert!(
        doc["clock"]["reason"]
            .as_str()
            .unwrap()
            .contains("not aligned")
    );
    assert!(doc["notes"].to_string().contains("mixed"));
    for r in doc["ranks"].as_array().unwrap() {
        assert_eq!(r["lateness_ns"], Value::Null);
    }
}

#[test]
fn nsys_files_align_on_session_start() {
    // the same job split into two files, the second's capture started 3 µs
    // later: its times are 3 µs smaller for the same instants
    let dir = tempfile::tempdir().unwrap();
    let (p1, p2) = (dir.path().join("r0.sqlite"), dir.path().join("r1.sqlite"));
    let mut j1 = JobSynth::new();
    j1.kernel(100, 0, 7, NCCL_ALLREDUCE, 20_000, 30_000);
    j1.write(&p1, Some(B0)).unwrap();
    let mut j2 = JobSynth::new();
    // absolute start B0 + 24 µs: 4 µs after rank 0
    j2.kernel(100, 0, 7, NCCL_ALLREDUCE, 21_000, 27_000);
    j2.write(&p2, Some(B0 + 3_000)).unwrap();
    let doc = dist_json(&[&p1, &p2]);
    assert!(
        doc["clock"]["method"]
            .as_str()
            .unwrap()
            .contains("session start")
    );
    assert_eq!(rank(&doc, 1)["times_last"], 1);
    assert_eq!(rank(&doc, 1)["lateness_ns"], 4_000);
    assert_eq!(rank(&doc, 0)["comm_wait_ns"], 4_000);
    assert_eq!(rank(&doc, 1)["clock_skew_ns"], 0);
    // without a session start: no lateness, and the output says why
    let p3 = dir.path().join("r1b.sqlite");
    j2.write(&p3, None).unwrap();
    let doc = dist_json(&[&p1, &p3]);
    assert_eq!(rank(&doc, 1)["lateness_ns"], Value::Null);
    assert!(
        doc["stragglers"]["reason"]
            .as_str()
            .unwrap()
            .contains("r1b.sqlite")
    );
    assert_eq!(rank(&doc, 1)["comm_wait_ns"], 0);
}

#[test]
fn same_bytes_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    write_kineto_job(dir.path(), true);
    let p = dir.path().join("job.sqlite");
    two_process_job().0.write(&p, None).unwrap();
    let go = |n: &str| {
        run(rprof()
            .env("RAYON_NUM_THREADS", n)
            .args(["dist", "--json"])
            .arg(dir.path().join("a.pt.trace.json"))
            .arg(dir.path().join("b.pt.trace.json.gz")))
        .stdout
    };
    assert_eq!(go("1"), go("2"));
}

/// The committed 2-rank capture: one export, two processes on two GPUs;
/// figures against a sort-and-merge of the kernel table read with SQL.
#[test]
fn mfu_2gpu_fixture_against_sql() {
    let p = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    let doc = dist_json(&[&p]);
    let db = rusqlite::Connection::open_with_flags(&p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut q = db
        .prepare(
            "SELECT k.deviceId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.demangledName",
        )
        .unwrap();
    let mut per_dev: std::collections::BTreeMap<i64, Vec<(i64, i64, bool)>> = Default::default();
    for row in q
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, String>(3)?,
            ))
        })
        .unwrap()
    {
        let (d, s, e, n) = row.unwrap();
        let comm = n.to_ascii_lowercase().starts_with("nccl");
        per_dev.entry(d).or_default().push((s, e, comm));
    }
    assert_eq!(doc["ranks"].as_array().unwrap().len(), 2);
    for (r, (dev, ks)) in per_dev.iter().enumerate() {
        let x = rank(&doc, r as u64);
        assert_eq!(x["device"], *dev);
        assert_eq!(x["kernels"], ks.len());
        assert_eq!(x["comm_kernels"], ks.iter().filter(|k| k.2).count());
        assert_eq!(figures(x), expected(ks), "rank {r}");
        assert!(x["comm_transfer_ns"].is_i64());
    }
    // 33 send/recv kernels on each GPU, matched in order
    assert_eq!(doc["stragglers"]["matched_collectives"], 33);
}

#[test]
fn corpus_h100_2gpu() {
    let c = corpus_or_skip!();
    let p = c.join("nsys-ai/h100_2gpu_1s.sqlite");
    let doc = dist_json(&[&p]);
    let ranks = doc["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    for r in ranks {
        assert_eq!(r["kernels"], 1721);
        assert_eq!(
            r["busy_ns"].as_i64().unwrap() + r["idle_ns"].as_i64().unwrap(),
            r["span_ns"]
        );
    }
}

#[test]
fn corpus_hta_nccl_one_rank_of_two() {
    let c = corpus_or_skip!();
    let p = c.join("hta-nccl/nccl_data.json.gz");
    let doc = dist_json(&[&p]);
    let r0 = rank(&doc, 0);
    assert_eq!(r0["rank_from"], "distributedInfo");
    assert_eq!(r0["kernels"], 2700);
    assert_eq!(r0["comm_kernels"], 21);
    // only one of the two ranks: nothing to match against
    assert_eq!(r0["comm_transfer_ns"], Value::Null);
    assert!(
        doc["notes"]
            .to_string()
            .contains("only 1 of the job's 2 ranks")
    );
    // bytes per call from the kernels' own args: In msg nelems × 4 (Float)
    let f = std::fs::File::open(&p).unwrap();
    let v: Value = serde_json::from_reader(flate2::read::GzDecoder::new(f)).unwrap();
    let mut sizes: Vec<i64> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["args"]["Collective name"] == "allreduce")
        .map(|e| e["args"]["In msg nelems"].as_i64().unwrap() * 4)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut got: Vec<i64> = doc["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["op"] == "all_reduce")
        .map(|c| c["bytes_per_call"].as_i64().unwrap())
        .collect();
    got.sort_unstable();
    assert_eq!(got, sizes);
    assert_eq!(doc["step_spread"].as_array().unwrap().len(), 3);
}

#[test]
fn op_from_the_annotation_around_the_launch() {
    // rank A's send/recv kernel is launched inside `nccl:all_to_all`
    // (emit_nvtx text); rank B's is not: the collective table names A's
    // all_to_all, and matching still pairs them (same kernel)
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("job.sqlite");
    let mut job = JobSynth::new();
    job.kernel(100, 0, 20, NCCL_SENDRECV, 10_000, 14_000);
    job.kernel(200, 1, 20, NCCL_SENDRECV, 11_000, 14_000);
    // launches are at start − 1000
    let mut r = rprof_testkit::SynthRange::push("nccl:all_to_all, op_id = 7", 8_500, 9_500);
    (r.pid, r.tid) = (100, 100);
    job.synth.ranges.push(r);
    job.write(&p, None).unwrap();
    let doc = dist_json(&[&p]);
    let ops: Vec<(String, u64)> = doc["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["op"].as_str().unwrap().to_owned(),
                c["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ops,
        [("all_to_all".to_owned(), 1), ("send_recv".to_owned(), 1)]
    );
    assert_eq!(rank(&doc, 0)["comm_wait_ns"], 1_000);
    assert_eq!(rank(&doc, 1)["comm_transfer_ns"], 3_000);
}
