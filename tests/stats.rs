//! `rprof stats`: every report against an independent computation. The
//! expected rows come from SQL written for these tests (not nsys's, not
//! rprof's) plus a plain sort for medians and a two-pass standard deviation,
//! on the licensed exports in fixtures/ and, when present, the shared corpus.
//! Synthetic exports cover start/end ranges, ranges ended on another thread,
//! open ranges, domains, nested ranges of one name (nsys double-counts
//! them) and CUDA backtrace duplicate rows (nsys counts them twice).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rprof_testkit::stats::{SynthMemOp, add_memops, add_osrt, add_um_faults};
use rprof_testkit::{Synth, SynthKernel, SynthRange};
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};

use crate::util::{fixture, rprof, run};

type Row = Map<String, Value>;

fn open(p: &Path) -> Connection {
    Connection::open_with_flags(p, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

fn has_table(c: &Connection, t: &str) -> bool {
    c.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name = ?1",
        [t],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
        > 0
}

fn has_col(c: &Connection, t: &str, col: &str) -> bool {
    c.query_row(
        &format!("SELECT count(*) FROM pragma_table_info('{t}') WHERE name = ?1"),
        [col],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
        > 0
}

/// `rprof stats -r REPORT --json --memunit B`, parsed.
fn report(path: &Path, spec: &str, extra: &[&str]) -> Vec<Row> {
    let out = run(rprof()
        .args(["stats", "-q", "--json", "--memunit", "B", "-r", spec])
        .args(extra)
        .arg(path));
    assert!(
        out.status.success(),
        "{spec} on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_object().unwrap().clone())
        .collect()
}

/// `(key, value)` rows of `sql`, grouped by key.
fn samples(c: &Connection, sql: &str) -> BTreeMap<String, Vec<i64>> {
    let mut st = c.prepare(sql).unwrap();
    let mut out: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .unwrap();
    for r in rows {
        let (k, v) = r.unwrap();
        out.entry(k).or_default().push(v);
    }
    out
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// count, total, min, max, mean, median, sample std dev of `v`.
fn expect(v: &[i64]) -> (i64, i64, i64, i64, f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort();
    let n = s.len();
    let total: i64 = s.iter().sum();
    let mean = total as f64 / n as f64;
    let med = if n % 2 == 1 {
        s[n / 2] as f64
    } else {
        (s[n / 2 - 1] + s[n / 2]) as f64 / 2.0
    };
    let sd = if n < 2 {
        0.0
    } else {
        (s.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    };
    (n as i64, total, s[0], s[n - 1], mean, med, sd)
}

fn int(r: &Row, k: &str) -> i64 {
    r.get(k)
        .and_then(Value::as_i64)
        .unwrap_or_else(|| panic!("{k} in {r:?}"))
}

fn num(r: &Row, k: &str) -> f64 {
    r.get(k)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{k} in {r:?}"))
}

fn s(r: &Row, k: &str) -> String {
    match r.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// Check summary rows (`Total`, count, `Avg`, `Med`, `Min`, `Max`, `StdDev`
/// in `unit`) against the expected samples per key. Returns the rows.
fn check_sum(
    what: &str,
    rows: &[Row],
    key: impl Fn(&Row) -> String,
    count_col: &str,
    unit: &str,
    total_col: &str,
    exp: &BTreeMap<String, Vec<i64>>,
) -> usize {
    let keys: BTreeSet<String> = rows.iter().map(&key).collect();
    assert_eq!(keys.len(), rows.len(), "{what}: duplicate keys");
    let want: BTreeSet<String> = exp.keys().cloned().collect();
    assert_eq!(keys, want, "{what}: groups");
    let rounded = unit != "B";
    for r in rows {
        let (n, total, min, max, mean, med, sd) = expect(&exp[&key(r)]);
        let ctx = format!("{what} {}", key(r));
        assert_eq!(int(r, count_col), n, "{ctx} count");
        assert_eq!(
            int(r, &format!("{total_col} ({unit})")),
            total,
            "{ctx} total"
        );
        assert_eq!(int(r, &format!("Min ({unit})")), min, "{ctx} min");
        assert_eq!(int(r, &format!("Max ({unit})")), max, "{ctx} max");
        let close = |got: f64, want: f64, name: &str| {
            let tol = if rounded {
                0.1 + want.abs() * 1e-12
            } else {
                1e-6 * want.abs().max(1.0)
            };
            let want = if rounded { r1(want) } else { want };
            assert!((got - want).abs() <= tol, "{ctx} {name}: {got} vs {want}");
        };
        close(num(r, &format!("Avg ({unit})")), mean, "avg");
        close(num(r, &format!("Med ({unit})")), med, "median");
        close(num(r, &format!("StdDev ({unit})")), sd, "stddev");
    }
    // sorted by total, largest first
    let totals: Vec<i64> = rows
        .iter()
        .map(|r| int(r, &format!("{total_col} ({unit})")))
        .collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{what}: order");
    rows.len()
}

/// nsys's NVTX name: `DOMAIN:text` in a named domain (the first creation
/// per process and domain id), else the registered or inline text.
const NVTX_RANGES: &str = "
    WITH dom AS (
        SELECT globalTid >> 24 AS proc, domainId, text, min(start) FROM NVTX_EVENTS
        WHERE eventType = 75 GROUP BY 1, 2
    )
    SELECT n.rowid AS id, n.start AS start, n.end AS rawend, n.globalTid AS tid,
           n.endGlobalTid AS endtid,
           CASE WHEN dom.text IS NOT NULL THEN dom.text || ':' ELSE '' END
               || coalesce(s.value, n.text) AS name,
           CASE WHEN n.eventType IN (59, 70) THEN 'PushPop' ELSE 'StartEnd' END AS style
    FROM NVTX_EVENTS n
    LEFT JOIN StringIds s ON s.id = n.textId
    LEFT JOIN dom ON dom.proc = n.globalTid >> 24 AND dom.domainId = n.domainId
    WHERE n.eventType IN (59, 60, 70, 71)";

fn kernel_names(c: &Connection, col: &str) -> String {
    if has_col(c, "CUPTI_ACTIVITY_KIND_KERNEL", col) {
        format!("coalesce(k.{col}, k.demangledName)")
    } else {
        "k.demangledName".into()
    }
}

fn api_filter(c: &Connection) -> &'static str {
    if has_col(c, "CUPTI_ACTIVITY_KIND_RUNTIME", "eventClass") {
        "WHERE a.eventClass IS NOT 67"
    } else {
        ""
    }
}

/// Every report on one nsys export; returns (report, rows) for the log.
fn check_nsys_file(path: &Path) -> Vec<(String, usize)> {
    let c = open(path);
    let mut log = Vec::new();
    let kernels = has_table(&c, "CUPTI_ACTIVITY_KIND_KERNEL");
    let runtime = has_table(&c, "CUPTI_ACTIVITY_KIND_RUNTIME");
    let nvtx = has_table(&c, "NVTX_EVENTS");
    let memcpy = has_table(&c, "CUPTI_ACTIVITY_KIND_MEMCPY");
    let memset = has_table(&c, "CUPTI_ACTIVITY_KIND_MEMSET");
    let enums = has_table(&c, "ENUM_CUDA_MEMCPY_OPER");
    let name = |r: &Row| s(r, "Name");

    if kernels {
        for (spec, col) in [
            ("cuda_gpu_kern_sum", "demangledName"),
            ("cuda_gpu_kern_sum:base", "shortName"),
        ] {
            let exp = samples(
                &c,
                &format!(
                    "SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k \
                     JOIN StringIds s ON s.id = {}",
                    kernel_names(&c, col)
                ),
            );
            let rows = report(path, spec, &[]);
            log.push((
                spec.to_owned(),
                check_sum(spec, &rows, name, "Instances", "ns", "Total Time", &exp),
            ));
        }
        let exp = samples(
            &c,
            "SELECT s.value || '|' || printf('%4d %4d %4d', gridX, gridY, gridZ) || '|' || \
             printf('%4d %4d %4d', blockX, blockY, blockZ), k.end - k.start \
             FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName",
        );
        let rows = report(path, "cuda_gpu_kern_gb_sum", &[]);
        let key = |r: &Row| format!("{}|{}|{}", s(r, "Name"), s(r, "GridXYZ"), s(r, "BlockXYZ"));
        log.push((
            "cuda_gpu_kern_gb_sum".into(),
            check_sum("gb", &rows, key, "Instances", "ns", "Total Time", &exp),
        ));
    }

    // memory operations: labels from the export's enum table
    let mut mem_parts = Vec::new();
    if memcpy && enums {
        mem_parts.push(
            "SELECT '[CUDA memcpy ' || e.label || ']' AS op, m.end - m.start AS d, m.bytes AS b \
             FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN ENUM_CUDA_MEMCPY_OPER e ON e.id = m.copyKind",
        );
    }
    if memset {
        mem_parts
            .push("SELECT '[CUDA memset]', end - start, bytes FROM CUPTI_ACTIVITY_KIND_MEMSET");
    }
    if !mem_parts.is_empty() && (enums || !memcpy) {
        let union = mem_parts.join(" UNION ALL ");
        let exp = samples(&c, &format!("SELECT op, d FROM ({union})"));
        let rows = report(path, "cuda_gpu_mem_time_sum", &[]);
        let key = |r: &Row| s(r, "Operation");
        log.push((
            "cuda_gpu_mem_time_sum".into(),
            check_sum("memtime", &rows, key, "Count", "ns", "Total Time", &exp),
        ));
        let exp = samples(&c, &format!("SELECT op, b FROM ({union})"));
        let rows = report(path, "cuda_gpu_mem_size_sum", &[]);
        log.push((
            "cuda_gpu_mem_size_sum".into(),
            check_sum("memsize", &rows, key, "Count", "B", "Total", &exp),
        ));
        if kernels {
            let exp = samples(
                &c,
                &format!(
                    "SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k \
                     JOIN StringIds s ON s.id = k.demangledName \
                     UNION ALL SELECT op, d FROM ({union})"
                ),
            );
            let rows = report(path, "cuda_gpu_sum", &[]);
            log.push((
                "cuda_gpu_sum".into(),
                check_sum("gpusum", &rows, key, "Instances", "ns", "Total Time", &exp),
            ));
        }
    }

    if runtime {
        let filter = api_filter(&c);
        let exp = samples(
            &c,
            &format!(
                "SELECT CASE WHEN substr(s.value, -6, 2) = '_v' \
                 THEN substr(s.value, 1, length(s.value) - 6) ELSE s.value END, \
                 a.end - a.start FROM CUPTI_ACTIVITY_KIND_RUNTIME a \
                 JOIN StringIds s ON s.id = a.nameId {filter}"
            ),
        );
        let rows = report(path, "cuda_api_sum", &[]);
        log.push((
            "cuda_api_sum".into(),
            check_sum("api", &rows, name, "Num Calls", "ns", "Total Time", &exp),
        ));
        let n: i64 = c
            .query_row(
                &format!("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME a {filter}"),
                [],
                |r| r.get(0),
            )
            .unwrap();
        let rows = report(path, "cuda_api_trace", &[]);
        assert_eq!(rows.len() as i64, n, "api trace rows");
        assert!(
            rows.windows(2)
                .all(|w| int(&w[0], "Start (ns)") <= int(&w[1], "Start (ns)"))
        );
        log.push(("cuda_api_trace".into(), rows.len()));
    }

    if kernels && runtime {
        let filter = api_filter(&c).replace("WHERE", "AND");
        let join = format!(
            "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME a \
             ON a.correlationId = k.correlationId AND a.globalTid >> 24 = k.globalPid >> 24 {filter} \
             JOIN StringIds ks ON ks.id = k.demangledName JOIN StringIds an ON an.id = a.nameId"
        );
        let key = "((a.globalTid >> 24) & 16777215) || '|' || (a.globalTid & 16777215) || '|' || \
                   k.deviceId || '|' || CASE WHEN substr(an.value, -6, 2) = '_v' THEN \
                   substr(an.value, 1, length(an.value) - 6) ELSE an.value END || '|' || ks.value";
        let exp = samples(&c, &format!("SELECT {key}, k.end - k.start {join}"));
        let queued = samples(
            &c,
            &format!("SELECT {key}, k.start - a.end {join} WHERE k.start - a.end >= 0"),
        );
        let totals = samples(
            &c,
            &format!("SELECT {key}, max(a.end, k.end) - a.start {join}"),
        );
        let rows = report(path, "cuda_kern_exec_sum", &[]);
        let rkey = |r: &Row| {
            format!(
                "{}|{}|{}|{}|{}",
                int(r, "PID"),
                int(r, "TID"),
                int(r, "DevId"),
                s(r, "API Name"),
                s(r, "Kernel Name")
            )
        };
        let got: BTreeSet<String> = rows.iter().map(rkey).collect();
        assert_eq!(got, exp.keys().cloned().collect(), "kern exec groups");
        for r in &rows {
            let k = rkey(r);
            let (n, _, kmin, kmax, kmean, _, _) = expect(&exp[&k]);
            assert_eq!(int(r, "Count"), n, "{k}");
            assert_eq!(int(r, "KMin (ns)"), kmin, "{k}");
            assert_eq!(int(r, "KMax (ns)"), kmax, "{k}");
            assert!((num(r, "KAvg (ns)") - r1(kmean)).abs() <= 0.1, "{k}");
            let q = queued.get(&k).map_or(0, |v| v.len() as i64);
            assert_eq!(int(r, "QCount"), q, "{k}");
            if q == 0 {
                // nsys: avg, median, min and max of no values are NULL, its
                // `stdev` of no values is 0.0 (as of one value)
                for c in ["QAvg (ns)", "QMed (ns)", "QMin (ns)", "QMax (ns)"] {
                    assert!(r[c].is_null(), "{k} {c}");
                }
                assert_eq!(num(r, "QStdDev (ns)"), 0.0, "{k}");
            }
            let (_, _, tmin, tmax, _, _, _) = expect(&totals[&k]);
            assert_eq!(
                (int(r, "TMin (ns)"), int(r, "TMax (ns)")),
                (tmin, tmax),
                "{k}"
            );
        }
        log.push(("cuda_kern_exec_sum".into(), rows.len()));
        let n: usize = exp.values().map(Vec::len).sum();
        let rows = report(path, "cuda_kern_exec_trace", &[]);
        assert_eq!(rows.len(), n, "kern exec trace rows");
        log.push(("cuda_kern_exec_trace".into(), rows.len()));
    }

    if kernels || memcpy || memset {
        let mut n = 0i64;
        for t in [
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "CUPTI_ACTIVITY_KIND_MEMSET",
        ] {
            if has_table(&c, t) {
                n += c
                    .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| {
                        r.get::<_, i64>(0)
                    })
                    .unwrap();
            }
        }
        let rows = report(path, "cuda_gpu_trace", &[]);
        assert_eq!(rows.len() as i64, n, "gpu trace rows");
        assert!(
            rows.windows(2)
                .all(|w| int(&w[0], "Start (ns)") <= int(&w[1], "Start (ns)"))
        );
        log.push(("cuda_gpu_trace".into(), rows.len()));
    }

    if nvtx {
        let maxts = "(SELECT max(max(start), max(end)) FROM NVTX_EVENTS)";
        let base = format!(
            "SELECT name, style, coalesce(rawend, {maxts}) - start AS d FROM ({NVTX_RANGES})"
        );
        let exp = samples(&c, &format!("SELECT name || '|' || style, d FROM ({base})"));
        let rows = report(path, "nvtx_sum", &[]);
        let key = |r: &Row| format!("{}|{}", s(r, "Range"), s(r, "Style"));
        log.push((
            "nvtx_sum".into(),
            check_sum("nvtx", &rows, key, "Instances", "ns", "Total Time", &exp),
        ));
        for (spec, style) in [
            ("nvtx_pushpop_sum", "PushPop"),
            ("nvtx_startend_sum", "StartEnd"),
        ] {
            let exp = samples(
                &c,
                &format!("SELECT name, d FROM ({base}) WHERE style = '{style}'"),
            );
            let rows = report(path, spec, &[]);
            let key = |r: &Row| s(r, "Range");
            log.push((
                spec.into(),
                check_sum(spec, &rows, key, "Instances", "ns", "Total Time", &exp),
            ));
        }
    }

    if nvtx && runtime && kernels {
        log.extend(check_nvtx_kernels(&c, path));
    }
    if nvtx && runtime && (kernels || memcpy || memset) {
        log.extend(check_projection(&c, path, kernels, memcpy, memset));
    }
    if has_table(&c, "OSRT_API") {
        let exp = samples(
            &c,
            "SELECT s.value, o.end - o.start FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId \
             WHERE o.eventClass = 27",
        );
        let rows = report(path, "osrt_sum", &[]);
        log.push((
            "osrt_sum".into(),
            check_sum("osrt", &rows, name, "Num Calls", "ns", "Total Time", &exp),
        ));
    }
    log
}

/// A range as the kernel and projection reports index it.
struct TRange {
    id: i64,
    start: i64,
    end: i64,
    name: String,
    style: String,
}

/// Ranges by thread (`globalTid`), from SQL: ended on their own thread;
/// open ones end at the last range timestamp. Sorted by start.
fn ranges_by_thread(c: &Connection) -> BTreeMap<i64, Vec<TRange>> {
    let sql = format!(
        "SELECT id, start, coalesce(rawend, (SELECT max(max(start), max(end)) FROM NVTX_EVENTS \
         WHERE eventType IN (59, 60, 70, 71))), tid, name, style FROM ({NVTX_RANGES}) \
         WHERE endtid IS NULL ORDER BY start"
    );
    let mut st = c.prepare(&sql).unwrap();
    let mut out: BTreeMap<i64, Vec<TRange>> = BTreeMap::new();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(3)?,
                TRange {
                    id: r.get(0)?,
                    start: r.get(1)?,
                    end: r.get(2)?,
                    name: r.get(4)?,
                    style: r.get(5)?,
                },
            ))
        })
        .unwrap();
    for r in rows {
        let (t, r) = r.unwrap();
        out.entry(t).or_default().push(r);
    }
    out
}

/// The ranges of thread `tid` with `start <= a_start` and `end >= a_end`: a
/// plain scan (the SQL join is minutes slower).
fn around(ranges: &BTreeMap<i64, Vec<TRange>>, tid: i64, a_start: i64, a_end: i64) -> Vec<&TRange> {
    ranges.get(&tid).map_or(Vec::new(), |v| {
        v.iter()
            .take_while(|r| r.start <= a_start)
            .filter(|r| r.end >= a_end)
            .collect()
    })
}

/// `(op id, duration, op start, op end, name, correlation, call globalTid,
/// call start, call end)` of GPU operations joined to their launch calls.
type OpCall = (i64, i64, i64, i64, String, i64, i64, i64, i64);

fn op_calls(c: &Connection, ops_sql: &str) -> Vec<OpCall> {
    let filter = api_filter(c).replace("WHERE", "AND");
    let sql = format!(
        "SELECT o.id, o.end - o.start, o.start, o.end, o.name, o.correlationId, a.globalTid, \
         a.start, a.end FROM ({ops_sql}) o JOIN CUPTI_ACTIVITY_KIND_RUNTIME a \
         ON a.correlationId = o.correlationId AND a.globalTid >> 24 = o.globalPid >> 24 {filter}"
    );
    let mut st = c.prepare(&sql).unwrap();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
            ))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

fn check_nvtx_kernels(c: &Connection, path: &Path) -> Vec<(String, usize)> {
    let ranges = ranges_by_thread(c);
    let calls = op_calls(
        c,
        "SELECT k.rowid AS id, k.start, k.end, s.value AS name, k.correlationId, k.globalPid \
         FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName",
    );
    // group -> kernel id -> duration (each kernel once), and range ids
    let mut groups: BTreeMap<String, (BTreeMap<i64, i64>, BTreeSet<i64>)> = BTreeMap::new();
    let mut launched: BTreeSet<i64> = BTreeSet::new();
    let mut unranged: BTreeSet<String> = BTreeSet::new();
    for (kid, d, _, _, kname, _, gtid, a_start, a_end) in &calls {
        launched.insert(*kid);
        let enclosing = around(&ranges, *gtid, *a_start, *a_end);
        let (pid, tid) = ((gtid >> 24) & 0xFF_FFFF, gtid & 0xFF_FFFF);
        if enclosing.is_empty() {
            unranged.insert(format!("{pid}|{tid}|{kname}"));
        }
        for r in enclosing {
            let g = groups
                .entry(format!("{}|{}|{pid}|{tid}|{kname}", r.name, r.style))
                .or_default();
            g.0.insert(*kid, *d);
            g.1.insert(r.id);
        }
    }
    // kernels without a launch call: one row per kernel name
    let no_launch = samples(
        c,
        "SELECT s.value, k.rowid FROM CUPTI_ACTIVITY_KIND_KERNEL k \
         JOIN StringIds s ON s.id = k.demangledName",
    );
    for (name, ids) in &no_launch {
        if ids.iter().any(|id| !launched.contains(id)) {
            unranged.insert(format!("||{name}"));
        }
    }
    let rows = report(path, "nvtx_kern_sum", &[]);
    let ranged: Vec<Row> = rows
        .iter()
        .filter(|r| !s(r, "NVTX Range").is_empty() || !s(r, "Style").is_empty())
        .cloned()
        .collect();
    let key = |r: &Row| {
        format!(
            "{}|{}|{}|{}|{}",
            s(r, "NVTX Range"),
            s(r, "Style"),
            int(r, "PID"),
            int(r, "TID"),
            s(r, "Kernel Name")
        )
    };
    let keys: BTreeSet<String> = ranged.iter().map(key).collect();
    assert_eq!(keys, groups.keys().cloned().collect(), "nvtx kern groups");
    for r in &ranged {
        let k = key(r);
        let (kernels, rids) = &groups[&k];
        let d: Vec<i64> = kernels.values().copied().collect();
        let (n, total, min, max, mean, med, sd) = expect(&d);
        assert_eq!(int(r, "Kern Inst"), n, "{k}");
        assert_eq!(int(r, "NVTX Inst"), rids.len() as i64, "{k}");
        assert_eq!(int(r, "Total Time (ns)"), total, "{k}");
        assert_eq!((int(r, "Min (ns)"), int(r, "Max (ns)")), (min, max), "{k}");
        for (col, want) in [("Avg (ns)", mean), ("Med (ns)", med), ("StdDev (ns)", sd)] {
            assert!((num(r, col) - r1(want)).abs() <= 0.1, "{k} {col}");
        }
    }
    let outside: BTreeSet<String> = rows
        .iter()
        .filter(|r| s(r, "NVTX Range").is_empty() && s(r, "Style").is_empty())
        .map(|r| format!("{}|{}|{}", s(r, "PID"), s(r, "TID"), s(r, "Kernel Name")))
        .collect();
    assert_eq!(outside, unranged, "nvtx kern rows outside ranges");
    vec![("nvtx_kern_sum".into(), rows.len())]
}

fn check_projection(
    c: &Connection,
    path: &Path,
    kernels: bool,
    memcpy: bool,
    memset: bool,
) -> Vec<(String, usize)> {
    let ranges = ranges_by_thread(c);
    let mut ops = Vec::new();
    for (i, (t, yes)) in [
        ("CUPTI_ACTIVITY_KIND_KERNEL", kernels),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", memcpy),
        ("CUPTI_ACTIVITY_KIND_MEMSET", memset),
    ]
    .into_iter()
    .enumerate()
    {
        if yes {
            ops.push(format!(
                "SELECT rowid * 4 + {i} AS id, start, end, '' AS name, correlationId, globalPid FROM {t}"
            ));
        }
    }
    let calls = op_calls(c, &ops.join(" UNION ALL "));
    // range id -> (first start, last end, correlation ids)
    let mut proj: BTreeMap<i64, (i64, i64, BTreeSet<i64>)> = BTreeMap::new();
    let mut meta: BTreeMap<i64, (String, i64)> = BTreeMap::new();
    for (_, _, o_start, o_end, _, corr, gtid, a_start, a_end) in &calls {
        for r in around(&ranges, *gtid, *a_start, *a_end) {
            let p = proj
                .entry(r.id)
                .or_insert((*o_start, *o_end, BTreeSet::new()));
            p.0 = p.0.min(*o_start);
            p.1 = p.1.max(*o_end);
            p.2.insert(*corr);
            meta.insert(r.id, (format!("{}|{}", r.name, r.style), r.end - r.start));
        }
    }
    let mut exp: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut nops: BTreeMap<String, i64> = BTreeMap::new();
    let mut lens: BTreeMap<String, i64> = BTreeMap::new();
    for (id, (ps, pe, corr)) in &proj {
        let (k, len) = &meta[id];
        exp.entry(k.clone()).or_default().push(pe - ps);
        *nops.entry(k.clone()).or_default() += corr.len() as i64;
        *lens.entry(k.clone()).or_default() += len;
    }
    let rows = report(path, "nvtx_gpu_proj_sum", &[]);
    let key = |r: &Row| format!("{}|{}", s(r, "Range"), s(r, "Style"));
    let keys: BTreeSet<String> = rows.iter().map(key).collect();
    assert_eq!(keys, exp.keys().cloned().collect(), "projection groups");
    for r in &rows {
        let k = key(r);
        let (n, total, min, max, mean, med, sd) = expect(&exp[&k]);
        assert_eq!(int(r, "Range Instances"), n, "{k}");
        assert_eq!(int(r, "Total Proj Time (ns)"), total, "{k}");
        assert_eq!(
            (int(r, "Proj Min (ns)"), int(r, "Proj Max (ns)")),
            (min, max),
            "{k}"
        );
        for (col, want) in [
            ("Proj Avg (ns)", mean),
            ("Proj Med (ns)", med),
            ("Proj StdDev (ns)", sd),
        ] {
            assert!((num(r, col) - r1(want)).abs() <= 0.1, "{k} {col}");
        }
        assert_eq!(int(r, "Total GPU Ops"), nops[&k], "{k} ops");
        assert_eq!(int(r, "Total Range Time (ns)"), lens[&k], "{k} range time");
    }
    // plus one row for the operations launched outside every range
    let outside = calls
        .iter()
        .any(|(_, _, _, _, _, _, gtid, a_start, a_end)| {
            around(&ranges, *gtid, *a_start, *a_end).is_empty()
        });
    let trace = report(path, "nvtx_gpu_proj_trace", &[]);
    assert_eq!(
        trace.len(),
        proj.len() + usize::from(outside),
        "projection trace rows"
    );
    vec![
        ("nvtx_gpu_proj_sum".into(), rows.len()),
        ("nvtx_gpu_proj_trace".into(), trace.len()),
    ]
}

fn print_log(file: &Path, log: &[(String, usize)]) {
    for (r, n) in log {
        eprintln!("stats-rows {} {r} {n}", file.display());
    }
}

#[test]
fn every_report_matches_sql_on_the_fixtures() {
    for f in [
        "nsys-ai/mfu_2gpu_before.sqlite",
        "flameox/nsight-2025.5.2.sqlite",
        "mordred/report1_2021.sqlite",
    ] {
        let p = fixture(f);
        let log = check_nsys_file(&p);
        assert!(log.len() >= 5, "{f}: {log:?}");
        print_log(&p, &log);
    }
}

/// Each report reads only the tables and kernel columns it needs
/// (`tables_for`): alone, it prints what it prints beside every other
/// report, for which everything is read. A report that needed a column it
/// did not ask for would print it empty here.
#[test]
fn each_report_alone_prints_what_it_prints_among_all() {
    let names: Vec<&str> = rprof_report::stats::REPORTS
        .iter()
        .map(|r| r.name)
        .collect();
    assert!(names.len() >= 18, "{names:?}");
    for f in [
        "nsys-ai/mfu_2gpu_before.sqlite",
        "flameox/nsight-2025.5.2.sqlite",
        "mordred/report1_2021.sqlite",
    ] {
        let p = fixture(f);
        let json = |spec: &str| -> Value {
            let out = run(rprof()
                .args(["stats", "-q", "--format", "json", "-r", spec])
                .arg(&p));
            assert!(out.status.success(), "{f} {spec}");
            serde_json::from_slice(&out.stdout).unwrap()
        };
        let together = json(&names.join(","));
        let mut kernel_rows = 0;
        for name in &names {
            let alone = json(name);
            assert_eq!(&alone, &together[*name], "{f}: {name}");
            if *name == "cuda_gpu_trace" {
                kernel_rows = alone
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| !r["GrdX"].is_null())
                    .count();
            }
        }
        // the launch columns are there to compare
        assert!(kernel_rows > 0, "{f}");
    }
}

#[test]
fn every_report_matches_sql_on_the_corpus() {
    let corpus = corpus_or_skip!();
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [
        "mmagic_vsr_v2",
        "nsys-ai",
        "memfusion-trt",
        "nvfuser",
        "pipit",
        "nsys-nvtx-local",
    ] {
        let Ok(rd) = std::fs::read_dir(corpus.join(dir)) else {
            continue;
        };
        let mut v: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
            // the fixture test reads this one already
            .filter(|p| !p.ends_with("nsys-ai/mfu_2gpu_before.sqlite"))
            .collect();
        v.sort();
        files.extend(v);
    }
    for p in files {
        let log = check_nsys_file(&p);
        print_log(&p, &log);
    }
}

/// Grouped (count, total, min, max) tuples, without names.
fn tuples(rows: &[Row], count: &str, unit: &str, total: &str) -> Vec<(i64, i64, i64, i64)> {
    let mut v: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                int(r, count),
                int(r, &format!("{total} ({unit})")),
                int(r, &format!("Min ({unit})")),
                int(r, &format!("Max ({unit})")),
            )
        })
        .collect();
    v.sort();
    v
}

fn sql_tuples(c: &Connection, sql: &str) -> Vec<(i64, i64, i64, i64)> {
    let mut v: Vec<_> = samples(c, sql)
        .values()
        .map(|s| {
            let e = expect(s);
            (e.0, e.1, e.2, e.3)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn nvprof_database_kernel_api_and_copy_sums_match_sql() {
    let p = fixture("profiling-lm/net.sql");
    let c = open(&p);
    let kern = report(&p, "cuda_gpu_kern_sum", &[]);
    let want = sql_tuples(
        &c,
        "SELECT CAST(name AS TEXT), end - start FROM CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
    );
    assert_eq!(tuples(&kern, "Instances", "ns", "Total Time"), want);
    let api = report(&p, "cuda_api_sum", &[]);
    let want = sql_tuples(
        &c,
        "SELECT CAST(cbid AS TEXT), end - start FROM CUPTI_ACTIVITY_KIND_RUNTIME",
    );
    assert_eq!(tuples(&api, "Num Calls", "ns", "Total Time"), want);
    let mem = report(&p, "cuda_gpu_mem_size_sum", &[]);
    let want = sql_tuples(
        &c,
        "SELECT CAST(copyKind AS TEXT), bytes FROM CUPTI_ACTIVITY_KIND_MEMCPY \
         UNION ALL SELECT 'set', bytes FROM CUPTI_ACTIVITY_KIND_MEMSET",
    );
    assert_eq!(tuples(&mem, "Count", "B", "Total"), want);
    // OS runtime data does not exist in nvprof databases: skipped, said so
    let out = run(rprof().args(["stats", "-r", "osrt_sum", "--csv"]).arg(&p));
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not contain OS Runtime"));
}

#[test]
fn kineto_trace_kernel_sum_matches_a_hand_count() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.json");
    let trace = r#"{"traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 10.0, "dur": 2.0, "args": {"correlation": 1, "device": 0, "stream": 7}},
      {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 20.0, "dur": 4.0, "args": {"correlation": 2, "device": 0, "stream": 7}},
      {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 30.0, "dur": 1.0, "args": {"correlation": 3, "device": 0, "stream": 7}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 9.0, "dur": 0.5, "args": {"correlation": 1}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 19.0, "dur": 0.5, "args": {"correlation": 2}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 29.0, "dur": 0.5, "args": {"correlation": 3}}
    ]}"#;
    std::fs::write(&p, trace).unwrap();
    let rows = report(&p, "cuda_gpu_kern_sum", &[]);
    assert_eq!(rows.len(), 2);
    assert_eq!(s(&rows[0], "Name"), "k1");
    assert_eq!(int(&rows[0], "Total Time (ns)"), 6000);
    assert_eq!(int(&rows[0], "Instances"), 2);
    assert_eq!(num(&rows[0], "Med (ns)"), 3000.0);
    assert_eq!(int(&rows[1], "Total Time (ns)"), 1000);
    let api = report(&p, "cuda_api_sum", &[]);
    assert_eq!(api.len(), 1);
    assert_eq!(int(&api[0], "Num Calls"), 3);
    assert_eq!(int(&api[0], "Total Time (ns)"), 1500);
}

/// A synthetic export with nested same-name ranges, a start/end range ended
/// on another thread, an open range, a domain, a backtrace duplicate, copies,
/// OS runtime calls and unified-memory faults.
fn synthetic(dir: &Path) -> PathBuf {
    let p = dir.join("s.sqlite");
    let mut s = Synth::default();
    // kernels: A (100 ns) launched at 1000, B (300 ns) at 2000, C (50 ns) at 5000
    s.kernels
        .push(SynthKernel::new("kA", 1100, 1200, 1).launched_at(1000, 1010));
    s.kernels
        .push(SynthKernel::new("kB", 2100, 2400, 2).launched_at(2000, 2010));
    s.kernels
        .push(SynthKernel::new("kC", 5100, 5150, 3).launched_at(5000, 5010));
    // "step" nested in "step": nsys counts kA and kB twice in step's total
    s.ranges.push(SynthRange::push("step", 900, 3000));
    s.ranges.push(SynthRange::push("step", 950, 2500));
    // a start/end range on the launching thread, and one ended elsewhere
    s.ranges.push(SynthRange {
        event_type: 60,
        ..SynthRange::push("window", 1900, 2150)
    });
    s.ranges.push(SynthRange {
        event_type: 60,
        end_tid: Some(101),
        ..SynthRange::push("handoff", 4900, 5200)
    });
    // an open range (NULL end) on the launching thread
    s.ranges.push(SynthRange {
        end: None,
        ..SynthRange::push("open", 4950, 0)
    });
    // a domain and a range in it
    s.ranges.push(SynthRange {
        event_type: 75,
        end: None,
        domain: 5,
        ..SynthRange::push("dom", 10, 0)
    });
    s.ranges.push(SynthRange {
        domain: 5,
        ..SynthRange::push("inner", 990, 1020)
    });
    // a backtrace duplicate of kA's launch (eventClass 67) and a plain call
    s.extra_calls
        .push((999, 1012, 100, 100, 1, "cudaLaunchKernel".into(), 67));
    s.extra_calls.push((
        6000,
        6040,
        100,
        100,
        9,
        "cudaDeviceSynchronize_v3020".into(),
        0,
    ));
    s.write_nsys(&p).unwrap();
    add_memops(
        &p,
        &[
            SynthMemOp::copy(1, 3500, 3510, 4096, 10),
            SynthMemOp::copy(1, 3600, 3630, 1024, 11),
            SynthMemOp::set(3700, 3704, 4, 12),
            SynthMemOp {
                virtual_address: Some(0x1000),
                ..SynthMemOp::copy(11, 7000, 7100, 8192, 13)
            },
            SynthMemOp {
                virtual_address: Some(0x1000),
                ..SynthMemOp::copy(12, 7200, 7300, 4096, 14)
            },
        ],
    )
    .unwrap();
    add_osrt(
        &p,
        &[
            (100, 200, 100, 100, "poll"),
            (300, 350, 100, 100, "poll"),
            (400, 410, 100, 101, "read"),
        ],
    )
    .unwrap();
    add_um_faults(
        &p,
        &[(6900, 0x1000), (6950, 0x1000)],
        &[(6990, 7000, 0x1000, 3), (8000, 8010, 0x2000, 2)],
    )
    .unwrap();
    p
}

#[test]
fn synthetic_nvtx_kernel_sum_counts_each_kernel_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = synthetic(dir.path());
    let rows = report(&p, "nvtx_kern_sum", &[]);
    let step_a = rows
        .iter()
        .find(|r| s(r, "NVTX Range") == "step" && s(r, "Kernel Name") == "kA")
        .unwrap();
    // two "step" instances enclose kA's launch: nsys would say 200 ns
    assert_eq!(int(step_a, "NVTX Inst"), 2);
    assert_eq!(int(step_a, "Kern Inst"), 1);
    assert_eq!(int(step_a, "Total Time (ns)"), 100);
    let window = rows
        .iter()
        .find(|r| s(r, "NVTX Range") == "window")
        .unwrap();
    assert_eq!(s(window, "Style"), "StartEnd");
    assert_eq!(s(window, "Kernel Name"), "kB");
    // the range ended on another thread is not an enclosing range; the open
    // range (NULL end) encloses kC's launch
    assert!(!rows.iter().any(|r| s(r, "NVTX Range") == "handoff"));
    assert!(
        rows.iter()
            .any(|r| s(r, "NVTX Range") == "open" && s(r, "Kernel Name") == "kC")
    );
    // domain ranges are named DOMAIN:text
    assert!(
        rows.iter()
            .any(|r| s(r, "NVTX Range") == "dom:inner" && s(r, "Kernel Name") == "kA")
    );
}

#[test]
fn synthetic_nvtx_sums_styles_open_ranges_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let p = synthetic(dir.path());
    let rows = report(&p, "nvtx_sum", &[]);
    let get = |name: &str| rows.iter().find(|r| s(r, "Range") == name).unwrap().clone();
    assert_eq!(int(&get("step"), "Total Time (ns)"), 2100 + 1550);
    assert_eq!(s(&get("handoff"), "Style"), "StartEnd");
    // open: ends at the table's last timestamp (5200, handoff's end)
    assert_eq!(int(&get("open"), "Total Time (ns)"), 5200 - 4950);
    let se = report(&p, "nvtx_startend_sum", &[]);
    let names: BTreeSet<String> = se.iter().map(|r| s(r, "Range")).collect();
    assert_eq!(names, ["handoff", "window"].map(String::from).into());
    let pp = report(&p, "nvtx_pushpop_sum", &[]);
    assert_eq!(pp.len(), 3); // step, open, dom:inner; no start/end
    // --filter-time keeps rows overlapping [1000, 1150)
    let k = report(&p, "cuda_gpu_kern_sum", &["--filter-time", "1000/1150"]);
    assert_eq!(k.len(), 1);
    assert_eq!(s(&k[0], "Name"), "kA");
    // --filter-nvtx window (start/end range: its process)
    let k = report(&p, "cuda_gpu_kern_sum", &["--filter-nvtx", "window"]);
    assert_eq!(k.iter().map(|r| s(r, "Name")).collect::<Vec<_>>(), ["kB"]);
    // second instance of step: [950, 2500) holds kA and kB
    let k = report(&p, "cuda_gpu_kern_sum", &["--filter-nvtx", "step/1"]);
    assert_eq!(k.len(), 2);
    // a push/pop range in a domain: API rows of its thread in [990, 1020)
    // (kA's launch; its backtrace duplicate is not counted)
    let a = report(&p, "cuda_api_sum", &["--filter-nvtx", "inner@dom"]);
    assert_eq!(a.len(), 1);
    assert_eq!(int(&a[0], "Num Calls"), 1);
    let out = run(rprof()
        .args(["stats", "-r", "nvtx_sum", "--filter-nvtx", "nosuch"])
        .arg(&p));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not be found"));
}

/// A kernel that starts before its launch call returns has no queue time:
/// nsys prints its group's queue avg, median, min and max as NULL and the
/// std dev as 0.0 (its `stdev` of no values); the others as usual.
#[test]
fn synthetic_kern_exec_sum_without_queue_times() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("q.sqlite");
    let mut s = Synth::default();
    // launched 1000-1010, runs 1005-1105: no queue time
    s.kernels
        .push(SynthKernel::new("kQ", 1005, 1105, 1).launched_at(1000, 1010));
    s.write_nsys(&p).unwrap();
    let rows = report(&p, "cuda_kern_exec_sum", &[]);
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!((int(r, "Count"), int(r, "QCount")), (1, 0));
    for c in ["QAvg (ns)", "QMed (ns)", "QMin (ns)", "QMax (ns)"] {
        assert!(r[c].is_null(), "{c} in {r:?}");
    }
    assert_eq!(num(r, "QStdDev (ns)"), 0.0);
    // total: from the call's start to the later end, 1105 - 1000
    assert_eq!(int(r, "TMin (ns)"), 105);
    assert_eq!(int(r, "KMax (ns)"), 100);
    assert_eq!(num(r, "KStdDev (ns)"), 0.0);
}

#[test]
fn synthetic_api_sum_counts_backtrace_duplicates_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = synthetic(dir.path());
    let rows = report(&p, "cuda_api_sum", &[]);
    let launch = rows
        .iter()
        .find(|r| s(r, "Name") == "cudaLaunchKernel")
        .unwrap();
    assert_eq!(int(launch, "Num Calls"), 3);
    assert_eq!(int(launch, "Total Time (ns)"), 30);
    let exec = report(&p, "cuda_kern_exec_trace", &[]);
    assert_eq!(exec.len(), 3);
    let first = &exec[0];
    assert_eq!(int(first, "Queue Dur (ns)"), 1100 - 1010);
    assert_eq!(int(first, "Total Dur (ns)"), 1200 - 1000);
}

#[test]
fn synthetic_memory_osrt_um_and_projection() {
    let dir = tempfile::tempdir().unwrap();
    let p = synthetic(dir.path());
    let mem = report(&p, "cuda_gpu_mem_size_sum", &[]);
    let htod = mem
        .iter()
        .find(|r| s(r, "Operation") == "[CUDA memcpy Host-to-Device]")
        .unwrap();
    assert_eq!(int(htod, "Total (B)"), 5120);
    assert_eq!(num(htod, "Avg (B)"), 2560.0);
    assert_eq!(num(htod, "Med (B)"), 2560.0);
    let osrt = report(&p, "osrt_sum", &[]);
    assert_eq!(int(&osrt[0], "Num Calls"), 2);
    assert_eq!(s(&osrt[0], "Name"), "poll");
    let um = report(&p, "um_sum", &[]);
    assert_eq!(um.len(), 2);
    let a = &um[0];
    assert_eq!(s(a, "Virtual Address"), "0x1000");
    assert_eq!(int(a, "HtoD Migration size (B)"), 8192);
    assert_eq!(int(a, "DtoH Migration size (B)"), 4096);
    assert_eq!(int(a, "CPU Page Faults"), 2);
    assert_eq!(int(a, " GPU Page Faults"), 3);
    // (8192 + 4096) * (10^9 div 200)
    assert_eq!(int(a, "Migration Throughput (B/s)"), 12288 * 5_000_000);
    assert!(um[1].get("Migration Throughput (B/s)").unwrap().is_null());
    // projection: outer step [900, 3000) holds kA (1100-1200) and kB
    // (2100-2400): projected 1100..2400
    let proj = report(&p, "nvtx_gpu_proj_trace", &[]);
    let outer = proj
        .iter()
        .find(|r| s(r, "Name") == "step" && int(r, "Orig Start (ns)") == 900)
        .unwrap();
    assert_eq!(int(outer, "Projected Start (ns)"), 1100);
    assert_eq!(int(outer, "Projected Duration (ns)"), 1300);
    assert_eq!(int(outer, "NumGPUOps"), 2);
    assert_eq!(int(outer, "Lvl"), 0);
    assert_eq!(int(outer, "NumChild"), 1);
    let inner = proj
        .iter()
        .find(|r| s(r, "Name") == "step" && int(r, "Orig Start (ns)") == 950)
        .unwrap();
    assert_eq!(int(inner, "Lvl"), 1);
    assert_eq!(int(inner, "ParentId"), int(outer, "RangeId"));
    assert_eq!(
        s(inner, "RangeStack"),
        format!(":{}:{}", int(outer, "RangeId"), int(inner, "RangeId"))
    );
}

#[test]
fn formats_units_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = synthetic(dir.path());
    let csv = run(rprof()
        .args([
            "stats",
            "-q",
            "-r",
            "cuda_gpu_kern_sum",
            "--format",
            "csv",
            "--timeunit",
            "us",
        ])
        .arg(&p));
    let text = String::from_utf8(csv.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "Time (%),Total Time (us),Instances,Avg (us),Med (us),Min (us),Max (us),StdDev (us),Name"
    );
    assert_eq!(
        lines.next().unwrap(),
        "66.7,0.300,1,0.300,0.300,0.300,0.300,0.000,kB"
    );
    let col = run(rprof().args(["stats", "-q", "-r", "cuda_api_sum"]).arg(&p));
    let text = String::from_utf8(col.stdout).unwrap();
    assert!(text.contains(" ** CUDA API Summary (cuda_api_sum):"));
    assert!(text.contains(" --------  "));
    let out_file = dir.path().join("o.tsv");
    let st = run(rprof()
        .args(["stats", "-q", "-r", "osrt_sum", "-f", "tsv", "-o"])
        .arg(&out_file)
        .arg(&p));
    assert!(st.status.success());
    let tsv = std::fs::read_to_string(&out_file).unwrap();
    assert!(tsv.starts_with("Time (%)\tTotal Time (ns)\t"));
    let bad = run(rprof().args(["stats", "-r", "nosuch_sum"]).arg(&p));
    assert_eq!(bad.status.code(), Some(2));
    let bad = run(rprof()
        .args(["stats", "-r", "nvtx_sum", "--filter-time", "5/1"])
        .arg(&p));
    assert_eq!(bad.status.code(), Some(2));
    let missing = run(rprof().args(["stats"]).arg(dir.path().join("nope.sqlite")));
    assert_eq!(missing.status.code(), Some(1));
    let help = run(rprof().args(["stats", "--help"]));
    let h = String::from_utf8(help.stdout).unwrap();
    for r in [
        "cuda_gpu_kern_sum",
        "cuda_gpu_kern_gb_sum",
        "cuda_gpu_mem_time_sum",
        "cuda_gpu_mem_size_sum",
        "cuda_gpu_sum",
        "cuda_api_sum",
        "cuda_kern_exec_sum",
        "nvtx_sum",
        "nvtx_pushpop_sum",
        "nvtx_startend_sum",
        "nvtx_kern_sum",
        "nvtx_gpu_proj_sum",
        "osrt_sum",
        "um_sum",
        "cuda_gpu_trace",
        "cuda_api_trace",
        "cuda_kern_exec_trace",
        "nvtx_gpu_proj_trace",
    ] {
        assert!(h.contains(r), "--help lacks {r}");
    }
}

/// A range's GPU operations as `nvtx_gpu_proj_*` count them: distinct
/// correlation ids. Synthetic export: in "graph", one launch call and two
/// kernels of its correlation id (the second kernel has no call row of its
/// own); in "twice", two call rows of one correlation id, each kernel of
/// that id launched by both; in "two", two calls of two ids. Expected
/// values by hand from the times below.
#[test]
fn synthetic_projection_counts_correlation_ids_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ids.sqlite");
    let mut sy = Synth::default();
    sy.ranges.push(SynthRange::push("graph", 3000, 3600));
    sy.kernels
        .push(SynthKernel::new("g1", 3100, 3200, 7).launched_at(3010, 3020));
    sy.kernels.push(SynthKernel::new("g2", 3300, 3350, 7));
    sy.ranges.push(SynthRange::push("twice", 4000, 4600));
    sy.kernels
        .push(SynthKernel::new("t1", 4100, 4150, 9).launched_at(4010, 4020));
    sy.kernels
        .push(SynthKernel::new("t2", 4200, 4260, 9).launched_at(4030, 4040));
    sy.ranges.push(SynthRange::push("two", 5000, 5600));
    sy.kernels
        .push(SynthKernel::new("w1", 5100, 5110, 11).launched_at(5010, 5020));
    sy.kernels
        .push(SynthKernel::new("w2", 5400, 5500, 12).launched_at(5030, 5040));
    sy.write_nsys(&p).unwrap();
    let trace = report(&p, "nvtx_gpu_proj_trace", &[]);
    let row = |name: &str| {
        trace
            .iter()
            .find(|r| s(r, "Name") == name)
            .unwrap_or_else(|| panic!("no row {name}"))
            .clone()
    };
    // (name, ops, projected start, projected duration)
    for (name, ops, start, dur) in [
        ("graph", 1, 3100, 3350 - 3100),
        ("twice", 1, 4100, 4260 - 4100),
        ("two", 2, 5100, 5500 - 5100),
    ] {
        let r = row(name);
        assert_eq!(int(&r, "NumGPUOps"), ops, "{name} ops");
        assert_eq!(int(&r, "Projected Start (ns)"), start, "{name} start");
        assert_eq!(int(&r, "Projected Duration (ns)"), dur, "{name} duration");
    }
    let sums = report(&p, "nvtx_gpu_proj_sum", &[]);
    for (name, ops) in [("graph", 1), ("twice", 1), ("two", 2)] {
        let r = sums.iter().find(|r| s(r, "Range") == name).unwrap();
        assert_eq!(int(r, "Total GPU Ops"), ops, "{name} total ops");
    }
}

/// On an nsys export the default set reads `nvtx_sum`'s table apart from
/// the other reports' (docs/stats.md): its stdout is what the two parts
/// print when run alone, and stderr has each part's line of what it read,
/// in order.
#[test]
fn default_set_reads_nvtx_apart_with_the_same_rows() {
    let p = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    let rest: Vec<&str> = rprof_report::stats::DEFAULT_REPORTS[1..].to_vec();
    let all = run(rprof().args(["stats", "--json"]).arg(&p));
    assert!(
        all.status.success(),
        "{}",
        String::from_utf8_lossy(&all.stderr)
    );
    let nvtx = run(rprof().args(["stats", "--json", "-r", "nvtx_sum"]).arg(&p));
    let others = run(rprof()
        .args(["stats", "--json", "-r", &rest.join(",")])
        .arg(&p));
    let all_v: Value = serde_json::from_slice(&all.stdout).unwrap();
    let nvtx_v: Value = serde_json::from_slice(&nvtx.stdout).unwrap();
    let others_v: Value = serde_json::from_slice(&others.stdout).unwrap();
    let all_m = all_v.as_object().unwrap();
    assert_eq!(all_m.len(), rest.len() + 1);
    assert_eq!(all_m["nvtx_sum"], nvtx_v);
    assert!(nvtx_v.as_array().is_some_and(|a| !a.is_empty()));
    for r in &rest {
        assert_eq!(all_m[*r], others_v[*r], "{r}");
    }
    // each part's line of what it read: NVTX ranges alone, then the others
    let first_line = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .next()
            .unwrap()
            .to_owned()
    };
    let err = String::from_utf8_lossy(&all.stderr).into_owned();
    let read: Vec<&str> = err
        .lines()
        .filter(|l| l.contains(" kernels") || l.ends_with(" NVTX ranges"))
        .collect();
    assert_eq!(read, [first_line(&nvtx), first_line(&others)], "{err}");
    assert!(read[0].ends_with(" NVTX ranges") && !read[0].contains("kernels"));
    assert!(read[1].contains(" kernels") && !read[1].contains("NVTX"));
    // the NVTX count is the export's: push/pop and start/end ranges (NVTX and
    // NVTXT) with a start
    let c = open(&p);
    let n: i64 = c
        .query_row(
            "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71) AND start IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        read[0].ends_with(&format!(": {n} NVTX ranges")),
        "{} vs {n}",
        read[0]
    );
}

/// `nvtx_gpu_proj_sum` alone keeps only the API calls that launched a
/// kernel, copy or set and the ranges that enclose one of them on their
/// thread; the others are counted on stderr. Each count is worked out here
/// from SQL and a plain search of every call for every range; the rows
/// themselves are checked against the full read by
/// `each_report_alone_prints_what_it_prints_among_all` and against SQL by
/// `every_report_matches_sql_on_the_fixtures`.
#[test]
fn launching_only_reads_count_what_they_leave_out() {
    let p = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    let c = open(&p);
    let pid = |g: i64| ((g as u64) >> 24) & 0xFF_FFFF;
    let tid = |g: i64| (g as u64) & 0xFF_FFFF;
    // (pid, correlation id) of every kernel, copy and set
    let mut ops: BTreeSet<(u64, i64)> = BTreeSet::new();
    for t in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
    ] {
        if !has_table(&c, t) {
            continue;
        }
        let mut st = c
            .prepare(&format!("SELECT globalPid, correlationId FROM {t}"))
            .unwrap();
        let rows = st
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
            .unwrap();
        for r in rows {
            let (g, corr) = r.unwrap();
            ops.insert((pid(g), corr));
        }
    }
    let class = if has_col(&c, "CUPTI_ACTIVITY_KIND_RUNTIME", "eventClass") {
        " AND (eventClass IS NULL OR eventClass != 67)"
    } else {
        ""
    };
    let mut st = c
        .prepare(&format!(
            "SELECT globalTid, start, end, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME \
             WHERE start IS NOT NULL AND end IS NOT NULL{class}"
        ))
        .unwrap();
    let calls: Vec<(i64, i64, i64, i64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let launching: Vec<(u64, u64, i64, i64)> = calls
        .iter()
        .filter(|c| ops.contains(&(pid(c.0), c.3)))
        .map(|c| (pid(c.0), tid(c.0), c.1, c.2))
        .collect();
    let mut st = c
        .prepare(
            "SELECT globalTid, start, end FROM NVTX_EVENTS \
             WHERE eventType IN (59, 60, 70, 71) AND start IS NOT NULL",
        )
        .unwrap();
    let ranges: Vec<(i64, i64, Option<i64>)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // a range with an end that no launching call of its thread lies within
    let left_out = ranges
        .iter()
        .filter(|r| {
            r.2.is_some_and(|end| {
                !launching
                    .iter()
                    .any(|l| (l.0, l.1) == (pid(r.0), tid(r.0)) && l.2 >= r.1 && l.3 <= end)
            })
        })
        .count();
    let calls_out = calls.len() - launching.len();
    assert!(left_out > 0 && calls_out > 0, "{left_out} {calls_out}");
    let out = run(rprof()
        .args(["stats", "--json", "-r", "nvtx_gpu_proj_sum"])
        .arg(&p));
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains(&format!(
            ", {} API calls, {} NVTX ranges\n",
            launching.len(),
            ranges.len() - left_out
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "skipped {calls_out} CUDA API calls that launched no kernel, copy or set"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "skipped {left_out} NVTX ranges that enclose no CUDA call launching"
        )),
        "{err}"
    );
    // beside a report that needs every range or every call (read together:
    // the NVTX reports neither all first nor all last), or with a window
    // found among the ranges, nothing is left out
    for extra in [
        &["-r", "nvtx_gpu_proj_sum,nvtx_sum"][..],
        &["-r", "nvtx_gpu_proj_sum,cuda_api_sum,nvtx_kern_sum"],
        &["-r", "nvtx_gpu_proj_sum", "--filter-nvtx", "ncclSend"],
    ] {
        let out = run(rprof().args(["stats", "--json"]).args(extra).arg(&p));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success() && !err.contains("skipped"),
            "{extra:?}: {err}"
        );
        assert!(
            err.contains(&format!(
                ", {} API calls, {} NVTX ranges\n",
                calls.len(),
                ranges.len()
            )),
            "{extra:?}: {err}"
        );
    }
}
