//! `rprof stats` on exports with more rows than one batch or chunk of the
//! large-report paths (the NVTX scan's batches, the parallel measuring and
//! writing of rows, names fetched ahead): the rows, their order and the
//! text layout's widths against SQL over the same file, computed without
//! rprof.

use std::path::{Path, PathBuf};

use rprof_testkit::{Synth, SynthRange, global_tid};
use rusqlite::Connection;
use serde_json::Value;

use crate::util::{rprof, run};

/// Ranges: 30 001 (over three NVTX batches of 8192, and report rows over
/// many chunks of 2048), names shared by a few ranges each, registered or
/// inline, push/pop or start/end, some with control or non-ASCII
/// characters, on two processes.
fn many_ranges(dir: &Path) -> PathBuf {
    let p = dir.join("many.sqlite");
    // the file's tables from the test kit, the rows added here in one
    // transaction (a commit per row took minutes)
    let mut s = Synth::default();
    s.ranges.push(SynthRange::push("first", 0, 5));
    s.write_nsys(&p).unwrap();
    let mut c = Connection::open(&p).unwrap();
    let tx = c.transaction().unwrap();
    for k in 0..30_000i64 {
        let name = match k % 7 {
            0 => format!("op\t{}", k % 4001),
            1 => format!("\u{e9}tape {}", k % 4001),
            2 => format!("aten::empty, op_id = {}", k % 9001),
            _ => format!("r{}", k % 13_001),
        };
        let start = 10 + k * 10;
        let end = start + 1 + (k * 7919) % 500;
        // start/end every third range
        let ty = if k % 3 == 0 { 60 } else { 59 };
        let g = global_tid(100 + (k % 2) as u64, 7);
        if k % 5 == 0 {
            // a registered string
            let id = 1_000_000 + k;
            tx.execute(
                "INSERT INTO StringIds (id, value) VALUES (?1, ?2)",
                rusqlite::params![id, name],
            )
            .unwrap();
            tx.execute(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 0)",
                rusqlite::params![start, end, ty, g, id],
            )
            .unwrap();
        } else {
            tx.execute(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text, domainId) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 0)",
                rusqlite::params![start, end, ty, g, name],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
    p
}

/// nvtx_sum's rows by SQL: (range, style, instances, total), in nsys's
/// order (total descending, then the name's bytes, then the style).
fn expected(p: &Path) -> Vec<(String, String, i64, i64)> {
    let c = Connection::open(p).unwrap();
    let mut st = c
        .prepare(
            "SELECT coalesce(s.value, e.text) AS name,
                    CASE WHEN e.eventType IN (59, 70) THEN 'PushPop' ELSE 'StartEnd' END AS style,
                    count(*), sum(e.end - e.start) AS total
             FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId
             WHERE e.eventType IN (59, 60, 70, 71)
             GROUP BY name, style ORDER BY total DESC, name, style",
        )
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// `rprof stats --json -r nvtx_sum`'s rows: (range, style, instances,
/// total), in its order.
fn nvtx_sum_rows(p: &Path) -> Vec<(String, String, i64, i64)> {
    let out = run(rprof()
        .args(["stats", "-q", "--json", "-r", "nvtx_sum"])
        .arg(p));
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["Range"].as_str().unwrap().to_owned(),
                r["Style"].as_str().unwrap().to_owned(),
                r["Instances"].as_i64().unwrap(),
                r["Total Time (ns)"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// Control characters as the text layouts print them.
fn escaped(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                format!("\\x{:02x}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[test]
fn nvtx_sum_over_many_batches_and_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let p = many_ranges(dir.path());
    let want = expected(&p);
    assert!(want.len() > 3 * 2048, "{} rows", want.len());
    let got = nvtx_sum_rows(&p);
    assert!(got == want, "rows differ from SQL's");

    // the column layout: one line per row in the same order, every line
    // padded to the same width, the name column as wide as the widest
    // name printed (escaped)
    let out = run(rprof().args(["stats", "-q", "-r", "nvtx_sum"]).arg(&p));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().skip(3).filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), want.len() + 2);
    let width = |l: &str| l.chars().count();
    assert!(lines.iter().all(|l| width(l) == width(lines[0])));
    let widest = want
        .iter()
        .map(|r| escaped(&r.0).chars().count())
        .max()
        .unwrap();
    let dashes = lines[1].trim_end().rsplit(' ').next().unwrap();
    assert_eq!(dashes.chars().count(), widest.max("Range".len()));
    for (l, r) in lines[2..].iter().zip(&want) {
        let name = escaped(&r.0);
        assert!(
            l.trim_end().ends_with(&format!("  {name}")),
            "{l:?} does not end with {name:?}"
        );
    }

    // CSV: the same rows
    let out = run(rprof()
        .args(["stats", "-q", "--csv", "-r", "nvtx_sum"])
        .arg(&p));
    assert!(out.status.success());
    let mut rd = csv::Reader::from_reader(&out.stdout[..]);
    let heads = rd.headers().unwrap().clone();
    let col = |h: &str| heads.iter().position(|x| x == h).unwrap();
    let (nc, sc, ic, tc) = (
        col("Range"),
        col("Style"),
        col("Instances"),
        col("Total Time (ns)"),
    );
    let rows: Vec<(String, String, i64, i64)> = rd
        .records()
        .map(|r| {
            let r = r.unwrap();
            (
                r[nc].to_owned(),
                r[sc].to_owned(),
                r[ic].parse().unwrap(),
                r[tc].parse().unwrap(),
            )
        })
        .collect();
    assert!(rows == want, "CSV rows differ from SQL's");
}

/// `nvtx_kern_sum` over more kernels and hits than one block of its
/// parallel passes (16,384): 40,000 kernels on two threads of two
/// processes, launched inside nested push/pop ranges with a few hundred
/// names; every row's kernel count and total time against SQL over the
/// same file (a launch call inside a range of its thread), and the rows'
/// order (range name, then pid and tid, then total time descending).
#[test]
fn nvtx_kern_sum_over_many_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("kern.sqlite");
    let mut s = Synth::default();
    s.ranges.push(SynthRange::push("first", 0, 5));
    s.write_nsys(&p).unwrap();
    let mut c = Connection::open(&p).unwrap();
    let tx = c.transaction().unwrap();
    let id = |tx: &rusqlite::Transaction<'_>, v: &str| -> i64 {
        tx.execute("INSERT OR IGNORE INTO StringIds (value) VALUES (?1)", [v])
            .unwrap();
        tx.query_row("SELECT id FROM StringIds WHERE value = ?1", [v], |r| {
            r.get(0)
        })
        .unwrap()
    };
    let api = id(&tx, "cudaLaunchKernel_v7000");
    let knames: Vec<i64> = (0..7).map(|i| id(&tx, &format!("kernel_{i}"))).collect();
    for k in 0..40_000i64 {
        let (pid, tid) = (100 + (k % 2) as u64, 7 + (k % 4 / 2) as u64);
        let t = 1_000 + k * 1_000;
        let corr = 10 + k;
        // an outer range per 50 kernels, an inner one per kernel
        if k % 50 < 2 {
            let outer = k - k % 50;
            tx.execute(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text, domainId) \
                 VALUES (?1, ?2, 59, ?3, ?4, 0)",
                rusqlite::params![
                    t - 500,
                    t + 50 * 1_000,
                    global_tid(pid, tid),
                    format!("outer {}", outer / 50 % 300)
                ],
            )
            .unwrap();
        }
        tx.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, text, domainId) \
             VALUES (?1, ?2, 59, ?3, ?4, 0)",
            rusqlite::params![
                t - 400,
                t + 400,
                global_tid(pid, tid),
                format!("inner {}", k % 11)
            ],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, \
             correlationId, nameId, returnValue) VALUES (?1, ?2, 0, ?3, ?4, ?5, 0)",
            rusqlite::params![t - 100, t - 50, global_tid(pid, tid), corr, api],
        )
        .unwrap();
        let name = knames[(k % 7) as usize];
        tx.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, \
             correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, \
             gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, \
             localMemoryPerThread, localMemoryTotal, gridId) \
             VALUES (?1, ?2, 0, 1, 7, ?3, ?4, ?5, ?5, 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, ?3)",
            rusqlite::params![
                t,
                t + 10 + k % 97,
                corr,
                rprof_testkit::global_pid(pid),
                name
            ],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    // (range, kernel, pid, tid) → kernels, total ns; each kernel once per
    // range name however many ranges of that name enclose its launch
    let mut st = c
        .prepare(
            "SELECT e.text, s.value, r.globalTid, count(DISTINCT k.rowid),
                    sum(k.end - k.start)
             FROM (SELECT DISTINCT e.text AS text, k.rowid AS kid
                   FROM NVTX_EVENTS e
                   JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
                     ON r.globalTid = e.globalTid AND r.start >= e.start AND r.end <= e.end
                   JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
                   WHERE e.eventType = 59) AS e
             JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.rowid = e.kid
             JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
             JOIN StringIds s ON s.id = k.demangledName
             GROUP BY e.text, s.value, r.globalTid",
        )
        .unwrap();
    let mut want: Vec<(String, String, i64, i64, i64)> = st
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(want.len() > 2_000, "{} groups", want.len());
    want.sort();
    let out = run(rprof()
        .args(["stats", "-q", "--json", "-r", "nvtx_kern_sum"])
        .arg(&p));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v.as_array().unwrap();
    let field = |r: &Value, k: &str| r.get(k).cloned().unwrap_or(Value::Null);
    let int = |r: &Value, k: &str| field(r, k).as_i64().unwrap();
    let text = |r: &Value, k: &str| field(r, k).as_str().unwrap_or("").to_owned();
    let mut got: Vec<(String, String, i64, i64, i64)> = rows
        .iter()
        .filter(|r| !text(r, "NVTX Range").is_empty())
        .map(|r| {
            let (pid, tid) = (int(r, "PID") as u64, int(r, "TID") as u64);
            (
                text(r, "NVTX Range"),
                text(r, "Kernel Name"),
                global_tid(pid, tid),
                int(r, "Kern Inst"),
                int(r, "Total Time (ns)"),
            )
        })
        .collect();
    // nsys's order: range name, then pid and tid, then total descending
    let keys: Vec<(String, i64, i64)> = got.iter().map(|g| (g.0.clone(), g.2, -g.4)).collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "rows out of order");
    got.sort();
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);

    // nvtx_gpu_proj_sum on the same export: nsys's order, total projected
    // time descending, then the range's bytes, then the style; with ties
    // of the total (the order of their names is then the point)
    let out = run(rprof()
        .args(["stats", "-q", "--json", "-r", "nvtx_gpu_proj_sum"])
        .arg(&p));
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys: Vec<(i64, String, String)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                -int(r, "Total Proj Time (ns)"),
                text(r, "Range"),
                text(r, "Style"),
            )
        })
        .collect();
    assert!(keys.len() > 300, "{} rows", keys.len());
    assert!(
        keys.windows(2).all(|w| w[0] < w[1]),
        "proj rows out of order"
    );
    let tied = keys.windows(2).filter(|w| w[0].0 == w[1].0).count();
    assert!(tied > 10, "{tied} ties");
}

/// Groups of equal totals, among them one name in both styles, written
/// start/end first and in no order of their bytes: nvtx_sum orders them by
/// the name's bytes and then the style, as SQL does.
#[test]
fn nvtx_sum_orders_equal_totals_by_name_then_style() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ties.sqlite");
    let mut s = Synth::default();
    let mut t = 0;
    for (name, event_type) in [
        ("b", 60),
        ("a", 60),
        ("\u{e9}", 59),
        ("a", 59),
        ("b", 59),
        ("Z", 60),
        ("long", 59),
    ] {
        let mut r = SynthRange::push(name, t, t + if name == "long" { 50 } else { 10 });
        r.event_type = event_type;
        s.ranges.push(r);
        t += 100;
    }
    s.write_nsys(&p).unwrap();
    let want = expected(&p);
    let got = nvtx_sum_rows(&p);
    assert_eq!(got.len(), 7);
    assert_eq!((got[1].0.as_str(), got[2].0.as_str()), ("Z", "a"));
    assert_eq!(got, want);
}
