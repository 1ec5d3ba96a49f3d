use std::borrow::Cow;

use rprof_model::{Kernels, Record};

use super::*;
use crate::model::{Models, estimate};

/// A kernel `name` of `dur` ns starting at `start` on `device`, launched
/// inside `step` (a `ProfilerStep#N` range as Kineto writes it) or none.
fn rec(name: &str, dur: i64, step: Option<u32>, start: i64, device: i64) -> Record<'static> {
    let mut stack = vec![Cow::Borrowed("outer")];
    if let Some(s) = step {
        stack.push(Cow::Owned(format!("ProfilerStep#{s}, op_id = 5")));
    }
    stack.push(Cow::Owned(format!("inner {name}")));
    Record {
        short_name: Cow::Owned(name.to_owned()),
        duration_ns: dur,
        dir: rprof_model::Dir::Fprop,
        start_ns: Some(start),
        end_ns: Some(start + dur),
        device,
        pid: Some(1),
        stack,
        ..Record::default()
    }
}

fn side(recs: &[Record<'static>], key: Key) -> SideData {
    let steps = StepMatcher::new(DEFAULT_STEP_PATTERN).unwrap();
    let ks = Kernels::from_records(recs.iter().cloned());
    let mut m = Models::new();
    let res = m.resolve(&ks);
    let est = estimate(&ks, &res);
    let mut s = Side::new(key, &steps);
    for (r, e) in ks.iter().zip(&est) {
        s.add(r, e);
    }
    s.finish(RunInfo {
        name: "x".into(),
        ..RunInfo::default()
    })
}

/// Per step (3 steps): base a=100, b=50, c=30/31/29;
/// test a=200 (doubles), d=40 (appears), c=30/29/31 (noise); b vanishes.
fn pair() -> (Vec<Record<'static>>, Vec<Record<'static>>) {
    let mut base = Vec::new();
    let mut test = Vec::new();
    for (i, (cb, ct)) in [(30, 30), (31, 29), (29, 31)].into_iter().enumerate() {
        let s = Some(i as u32 + 1);
        let t0 = i as i64 * 1_000;
        base.push(rec("a", 100, s, t0, 0));
        base.push(rec("b", 50, s, t0 + 200, 0));
        base.push(rec("c", cb, s, t0 + 300, 0));
        test.push(rec("a", 200, s, t0, 0));
        test.push(rec("d", 40, s, t0 + 300, 0));
        test.push(rec("c", ct, s, t0 + 400, 0));
    }
    (base, test)
}

fn row<'a>(r: &'a DiffReport, key: &str) -> &'a DiffRow {
    r.rows.iter().find(|x| x.key == key).unwrap()
}

/// Base totals a 300, b 150, c 90 (540); test a 600, d 120, c 90 (810);
/// total Δ 270. a: +300 = +100 %, share 300/270; b: −150 = −100 %, share
/// −150/270; d: +120, no %, share 120/270; c: 0. Per-step p-values
/// (SciPy 1.17.1, `mannwhitneyu([100]*3, [200]*3).pvalue`):
/// 0.04685417760387376 for a, b and d (all tied within a side, so the
/// normal approximation); c's samples are the same set: p = 1.
#[test]
fn doubles_appears_vanishes_noise() {
    let (b, t) = pair();
    let opts = DiffOptions {
        fail_above_pct: Some(50.0),
        ..DiffOptions::default()
    };
    let r = compare(&side(&b, Key::Kernel), &side(&t, Key::Kernel), opts);
    let keys: Vec<&str> = r.rows.iter().map(|x| x.key.as_str()).collect();
    assert_eq!(keys, ["a", "b", "d", "c"]);
    let a = row(&r, "a");
    assert_eq!(
        (a.base_total_ns, a.test_total_ns, a.delta_ns),
        (300, 600, 300)
    );
    assert_eq!((a.base_count, a.test_count), (3, 3));
    assert_eq!(a.delta_pct, Some(100.0));
    assert_eq!((a.base_mean_ns, a.test_mean_ns), (Some(100.0), Some(200.0)));
    assert!((a.share_of_delta_pct.unwrap() - 300.0 / 270.0 * 100.0).abs() < 1e-9);
    assert_eq!(a.base_step_ns, [100, 100, 100]);
    assert_eq!(a.test_step_ns, [200, 200, 200]);
    let p = 0.04685417760387376;
    assert!((a.p_value.unwrap() - p).abs() < 1e-12);
    assert_eq!(a.significant, Some(true));
    let bb = row(&r, "b");
    assert_eq!(bb.status, Status::Removed);
    assert_eq!((bb.delta_ns, bb.delta_pct), (-150, Some(-100.0)));
    assert_eq!(bb.test_step_ns, [0, 0, 0]);
    assert!((bb.p_value.unwrap() - p).abs() < 1e-12);
    let d = row(&r, "d");
    assert_eq!(d.status, Status::Added);
    assert_eq!(
        (d.delta_ns, d.delta_pct, d.test_mean_ns),
        (120, None, Some(40.0))
    );
    assert_eq!(d.base_mean_ns, None);
    assert!((d.share_of_delta_pct.unwrap() - 120.0 / 270.0 * 100.0).abs() < 1e-9);
    let c = row(&r, "c");
    assert_eq!(
        (c.delta_ns, c.p_value, c.significant),
        (0, Some(1.0), Some(false))
    );
    let shares: f64 = r.rows.iter().filter_map(|x| x.share_of_delta_pct).sum();
    assert!((shares - 100.0).abs() < 1e-9);
    assert_eq!(
        (
            r.totals.base_total_ns,
            r.totals.test_total_ns,
            r.totals.delta_ns
        ),
        (540, 810, 270)
    );
    assert_eq!(
        (
            r.totals.keys_both,
            r.totals.keys_added,
            r.totals.keys_removed
        ),
        (2, 1, 1)
    );
    // a (+100 % > 50 %, significant) and d (new); not b (faster)
    assert_eq!(r.regressions, Some(vec!["a".to_owned(), "d".to_owned()]));
    assert!(r.significance.assessable);
    assert!(r.input_differences.is_empty());
    // kernel time per step: base 180, 181, 179; test 390, 389, 391: no
    // ties, exact: `mannwhitneyu([180,181,179],[390,389,391]).pvalue` = 0.1
    let kt = r
        .run
        .iter()
        .find(|x| x.figure.starts_with("kernel time"))
        .unwrap();
    assert_eq!(
        (kt.base, kt.test, kt.delta),
        (Some(540.0), Some(810.0), Some(270.0))
    );
    assert!((kt.p_value.unwrap() - 0.1).abs() < 1e-15);
    assert_eq!(kt.significant, Some(false));
    // the threshold above 100 %: only the new key
    let opts = DiffOptions {
        fail_above_pct: Some(100.0),
        ..DiffOptions::default()
    };
    let r = compare(&side(&b, Key::Kernel), &side(&t, Key::Kernel), opts);
    assert_eq!(r.regressions, Some(vec!["d".to_owned()]));
}

#[test]
fn against_itself_no_differences() {
    let (b, _) = pair();
    let s = side(&b, Key::Nvtx);
    let r = compare(&s, &s, DiffOptions::default());
    assert_eq!(r.rows.len(), 3);
    for x in &r.rows {
        assert_eq!(x.delta_ns, 0);
        assert_eq!(x.status, Status::Both);
        assert_eq!(x.share_of_delta_pct, None);
        assert_eq!(x.p_value, Some(1.0));
        assert_eq!(x.significant, Some(false));
    }
    for x in &r.run {
        assert!(x.delta.is_none_or(|d| d == 0.0), "{x:?}");
    }
    assert_eq!(r.totals.delta_ns, 0);
}

#[test]
fn one_step_per_side_cannot_be_assessed() {
    let b = vec![rec("a", 100, Some(1), 0, 0)];
    let t = vec![rec("a", 300, Some(7), 0, 0)];
    let opts = DiffOptions {
        fail_above_pct: Some(5.0),
        ..DiffOptions::default()
    };
    let r = compare(&side(&b, Key::Kernel), &side(&t, Key::Kernel), opts);
    assert!(!r.significance.assessable);
    assert!(
        r.significance.note.contains("cannot be assessed"),
        "{}",
        r.significance.note
    );
    assert_eq!((r.rows[0].p_value, r.rows[0].significant), (None, None));
    // unknown significance: the difference alone decides
    assert_eq!(r.regressions, Some(vec!["a".to_owned()]));
    // no steps at all
    let b = vec![rec("a", 100, None, 0, 0)];
    let r = compare(&side(&b, Key::Kernel), &side(&b, Key::Kernel), opts);
    assert!(r.significance.note.contains("neither run"));
    assert_eq!(r.regressions, Some(vec![]));
}

/// Device 0: compute [0, 100), NCCL [50, 150); device 1: compute
/// [200, 250). Span [0, 250) = 250 ns on 2 devices = 500 device-ns. Busy
/// 150 + 50 = 200 (40 %); compute 100 + 50 = 150; communication not
/// overlapped [100, 150) = 50, overlapped [50, 100) = 50; idle 100 + 200 =
/// 300.
#[test]
fn timeline_split() {
    let recs = vec![
        rec("gemm", 100, None, 0, 0),
        rec("ncclDevKernel_AllReduce", 100, None, 50, 0),
        rec("gemm", 50, None, 200, 1),
    ];
    let s = side(&recs, Key::Kernel);
    let t = &s.run;
    assert_eq!(t.span_ns, Some(250));
    assert_eq!(t.devices, 2);
    assert_eq!(
        (
            t.busy_ns,
            t.compute_ns,
            t.comm_ns,
            t.comm_overlapped_ns,
            t.idle_ns
        ),
        (200, 150, 50, 50, 300)
    );
    let r = compare(&s, &s, DiffOptions::default());
    let u = r
        .run
        .iter()
        .find(|x| x.figure.starts_with("utilization"))
        .unwrap();
    assert_eq!(u.base, Some(40.0));
    assert!(is_comm_kernel("ncclKernel_x") && !is_comm_kernel("gemm"));
}

#[test]
fn top_keeps_totals() {
    let (b, t) = pair();
    let opts = DiffOptions {
        top: 1,
        ..DiffOptions::default()
    };
    let r = compare(&side(&b, Key::Kernel), &side(&t, Key::Kernel), opts);
    assert_eq!(r.rows.len(), 1);
    assert_eq!(r.hidden.keys, 3);
    assert_eq!(r.hidden.base_total_ns + r.rows[0].base_total_ns, 540);
    assert_eq!(r.hidden.test_total_ns + r.rows[0].test_total_ns, 810);
    let mut out = Vec::new();
    write_table(&mut out, &r, 0).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("(3 more keys; --top 0 shows all)"), "{out}");
    assert!(
        out.contains("| Total (2 in both, 1 added, 1 removed) |"),
        "{out}"
    );
}

#[test]
fn outputs() {
    let (b, t) = pair();
    let r = compare(
        &side(&b, Key::Kernel),
        &side(&t, Key::Kernel),
        DiffOptions::default(),
    );
    let mut csv = Vec::new();
    write_csv(&mut csv, &r).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next().unwrap(), CSV_HEADER.join(","));
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("a,both,3,3,300,600,100,200,300,100,111.1"),
        "{csv}"
    );
    let mut j = Vec::new();
    write_json(&mut j, &r).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&j).unwrap();
    assert_eq!(v["rows"][2]["key"], "d");
    assert_eq!(v["rows"][2]["status"], "added");
    assert_eq!(v["rows"][2]["base_tflops"], serde_json::Value::Null);
    assert_eq!(v["rows"][0]["significant"], true);
    assert_eq!(v["totals"]["delta_ns"], 270);
    // control characters in trace text are escaped in the table
    let mut b2 = b.clone();
    b2[0].short_name = Cow::Borrowed("evil\x1b[2J");
    let r = compare(
        &side(&b2, Key::Kernel),
        &side(&t, Key::Kernel),
        DiffOptions::default(),
    );
    let mut out = Vec::new();
    write_table(&mut out, &r, 0).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(!out.contains('\x1b'));
    assert!(out.contains("evil\\x1b[2J"), "{out}");
}

#[test]
fn default_key_is_op_dir_shape() {
    // no op model: the kernel name stands in for the op
    let (b, _) = pair();
    let s = side(&b, Key::OpDirShape);
    let labels: Vec<&str> = s.groups.iter().map(|g| g.label.as_str()).collect();
    assert_eq!(
        labels,
        ["kernel:a fprop", "kernel:b fprop", "kernel:c fprop"]
    );
    let s = side(&b, Key::Layer);
    assert_eq!(s.groups[0].label, NONE);
}
