//! Reading only what the question needs (issue 17): `summary --no-models`
//! and `gpu --no-roofline` (and gpu's one-table CSV of devices or kernels)
//! do not read NVTX ranges; what they print must match the full read.

use crate::gpu::{roofline_trace, stdout_of};
use crate::util::{rprof, run};

/// The cells of a CSV line without quotes (the test traces' names have no
/// commas).
fn cells(line: &str) -> Vec<&str> {
    line.split(',').collect()
}

#[test]
fn summary_no_models_keeps_the_timing_columns_and_drops_the_models() {
    let dir = tempfile::tempdir().unwrap();
    let p = roofline_trace(dir.path(), true);
    let p = p.to_str().unwrap();
    for by in ["kernel", "stream", "device"] {
        let full = stdout_of(&["summary", "-q", "--by", by, "--csv", p]);
        let fast = stdout_of(&["summary", "-q", "--by", by, "--csv", "--no-models", p]);
        let (full, fast): (Vec<&str>, Vec<&str>) = (full.lines().collect(), fast.lines().collect());
        assert_eq!(full.len(), fast.len(), "--by {by}");
        assert_eq!(full[0], fast[0], "same header");
        let header = cells(full[0]);
        let flops_at = header.iter().position(|h| *h == "flops").unwrap();
        // the trace's sgemm has FLOPs from its marker: the full read knows them
        assert!(
            full[1..].iter().any(|l| !cells(l)[flops_at].is_empty()),
            "--by {by}: {full:?}"
        );
        for (a, b) in full[1..].iter().zip(&fast[1..]) {
            let (a, b) = (cells(a), cells(b));
            // key, count, times and share: the same
            assert_eq!(a[..flops_at], b[..flops_at], "--by {by}");
            // FLOPs and bytes unknown, from no kernel
            for (h, v) in header.iter().zip(&b).skip(flops_at) {
                let want = if h.ends_with("_kernels") { "0" } else { "" };
                assert_eq!(*v, want, "--by {by}: {h}");
            }
        }
    }
}

#[test]
fn summary_no_models_refuses_the_keys_that_need_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = roofline_trace(dir.path(), true);
    for by in ["op", "op-shape", "layer", "nvtx", "dir"] {
        let out = run(rprof().args(["summary", "--by", by, "--no-models"]).arg(&p));
        assert_eq!(out.status.code(), Some(2), "--by {by}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--no-models"), "{err}");
    }
}

#[test]
fn summary_no_models_says_the_ranges_were_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = roofline_trace(dir.path(), true);
    let out = run(rprof().args(["summary", "--no-models"]).arg(&p));
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("NVTX ranges not read"), "{err}");
    assert!(!err.contains("without an enclosing NVTX range"), "{err}");
}

#[test]
fn gpu_without_the_roofline_is_the_report_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = roofline_trace(dir.path(), true);
    let p = p.to_str().unwrap();
    let full = stdout_of(&["gpu", "-q", "--top", "0", p]);
    let fast = stdout_of(&["gpu", "-q", "--top", "0", "--no-roofline", p]);
    let at = full.find("\nRoofline").expect("a roofline") + 1;
    // a roofline with rows: the op models placed the sgemm
    assert!(full[at..].contains("\n| "), "{}", &full[at..]);
    // the full report minus its roofline section (the last one here)
    let want = full[..at].trim_end_matches('\n');
    assert_eq!(fast.trim_end_matches('\n'), want);
    // the one-table formats never need it
    for table in ["devices", "kernels"] {
        let json = stdout_of(&["gpu", "-q", "--format", "json", p]);
        let csv = stdout_of(&["gpu", "-q", "--format", "csv", "--table", table, p]);
        // every CSV row's first cell is in the JSON document's table
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        let t = doc["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == table)
            .unwrap();
        let rows = t["rows"].as_array().unwrap();
        assert_eq!(csv.lines().count() - 1, rows.len(), "{table}");
    }
}
