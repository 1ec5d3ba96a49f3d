//! `summary --no-models` on a profile (issue 17 target 2): kernel sums by
//! name, stream or device straight from the kernel table, with no records
//! and (under `--quiet`) no launch calls. Expected values come from SQL on
//! the synthetic export, or from the record path (`rprof parse`, then
//! `summary` of the records), which shares none of the new code.

use std::path::Path;

use rprof_testkit::{Synth, SynthKernel};

use crate::util::{rprof, run};

fn out(args: &[&str], file: &Path) -> (String, String) {
    let o = run(rprof().args(args).arg(file));
    assert!(
        o.status.success(),
        "rprof {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

/// Six kernels, three names (one of them twice, under two streams), two
/// devices; the last kernel has no launch row.
fn six_kernels(dir: &Path) -> std::path::PathBuf {
    let mut s = Synth::default();
    let mut add = |name: &str, start: i64, end: i64, corr: i64, dev: i64, stream: i64| {
        let mut k = SynthKernel::new(name, start, end, corr);
        k.device = dev;
        k.stream = stream;
        s.kernels.push(k);
    };
    add("void a_kernel<float>(float*)", 1_000, 1_500, 1, 0, 7);
    add("void a_kernel<float>(float*)", 2_000, 2_900, 2, 0, 8);
    add("void a_kernel<float>(float*)", 3_000, 3_100, 3, 1, 7);
    add("b_kernel", 4_000, 4_700, 4, 0, 7);
    add("c_kernel", 5_000, 5_050, 5, 1, 9);
    add("c_kernel", 6_000, 6_020, 6, 1, 9);
    if let Some(k) = s.kernels.last_mut() {
        k.launch = None;
    }
    let p = dir.join("six.sqlite");
    s.write_nsys(&p).unwrap();
    p
}

/// (key, count, total_ns) of each CSV row.
fn sums(csv: &str) -> Vec<(String, i64, i64)> {
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let mut rows: Vec<(String, i64, i64)> = r
        .records()
        .map(|x| {
            let x = x.unwrap();
            (
                x[0].to_owned(),
                x[1].parse().unwrap(),
                x[2].parse().unwrap(),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn kernel_sums_by_stream_and_device_are_the_kernel_tables() {
    let dir = tempfile::tempdir().unwrap();
    let p = six_kernels(dir.path());
    let db = rusqlite::Connection::open(&p).unwrap();
    for (by, sql) in [
        (
            "stream",
            "SELECT deviceId || ':' || streamId, count(*), sum(\"end\" - start) \
             FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId, streamId",
        ),
        (
            "device",
            "SELECT CAST(deviceId AS TEXT), count(*), sum(\"end\" - start) \
             FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId",
        ),
    ] {
        let mut want: Vec<(String, i64, i64)> = db
            .prepare(sql)
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        want.sort();
        let (quiet, _) = out(&["summary", "-q", "--no-models", "--csv", "--by", by], &p);
        assert_eq!(sums(&quiet), want, "--by {by}");
        // with or without the launch calls (read only for stderr's count)
        let (loud, _) = out(&["summary", "--no-models", "--csv", "--by", by], &p);
        assert_eq!(quiet, loud, "--by {by}");
    }
}

#[test]
fn kernel_sums_by_name_group_the_kernels_of_one_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = six_kernels(dir.path());
    let (csv, err) = out(&["summary", "--no-models", "--csv"], &p);
    // by hand: a_kernel 500 + 900 + 100, b_kernel 700, c_kernel 50 + 20
    assert_eq!(
        sums(&csv),
        vec![
            ("a_kernel".to_owned(), 3, 1_500),
            ("b_kernel".to_owned(), 1, 700),
            ("c_kernel".to_owned(), 2, 70),
        ]
    );
    // the stderr summary still counts the kernel without a launch call
    assert!(
        err.contains("6 kernel rows, 6 records, 1 kernels without a launch call"),
        "{err}"
    );
    let (quiet, qerr) = out(&["summary", "-q", "--no-models", "--csv"], &p);
    assert_eq!(quiet, csv);
    assert_eq!(qerr, "");
}

/// On real profiles: the kernel-table summary prints what the summary of
/// the profile's records prints (the record path: `rprof parse`, then
/// `summary` of the record file), in every format that has no copies.
#[test]
fn kernel_sums_are_the_records_summary_on_the_corpus() {
    let corpus = corpus_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "nsys-ai/mfu_2gpu_before.sqlite",
        "mmagic_vsr_v2/net.sqlite",
        "dlprof-odema/w_Relu/nsys_profile.sqlite",
        "nvfuser/report1_f6ab0c3_nsys2024.6.2.sqlite",
        "kineto-hta/alexnet_benchmark_trace.json.gz",
        "nlp-ir-nvprof2017/trace_name.prof",
    ] {
        let f = corpus.join(rel);
        if !f.exists() {
            eprintln!("note: {} is absent; skipped", f.display());
            continue;
        }
        let recs = dir.path().join("r.jsonl");
        let o = run(rprof().args(["parse", "-q", "-o"]).arg(&recs).arg(&f));
        assert!(o.status.success(), "{rel}");
        for by in ["kernel", "stream", "device"] {
            let args = ["summary", "-q", "--no-models", "--csv", "--by", by];
            let (want, _) = out(&args, &recs);
            let (got, _) = out(&args, &f);
            assert_eq!(got, want, "{rel} --by {by}");
            assert!(want.lines().count() > 1, "{rel} --by {by}: no kernels");
        }
    }
}
