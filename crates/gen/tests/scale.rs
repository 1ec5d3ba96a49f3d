//! `rprof-gen scale` on a small nsys-shaped fixture (and on the real
//! nsys-ai export when the corpus is on this machine).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use rusqlite::Connection;

const BIN: &str = env!("CARGO_BIN_EXE_rprof-gen");

/// A tiny nsys-like export: two processes, four kernels, their launches,
/// NVTX ranges with inline and registered texts, a domain-create row,
/// a memcpy, a copied-once table and an index.
fn fixture(dir: &Path) -> PathBuf {
    let path = dir.join("src.sqlite");
    let c = Connection::open(&path).unwrap();
    c.execute_batch(
        r#"
        CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
            start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
            streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
            demangledName INTEGER NOT NULL, gridId INTEGER NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
            start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
            globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL);
        CREATE TABLE NVTX_EVENTS (
            start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
            text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
            start INTEGER NOT NULL, end INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
            bytes INTEGER NOT NULL);
        CREATE INDEX nvtx_start ON NVTX_EVENTS (start);

        INSERT INTO StringIds VALUES (1, 'kernel_a'), (2, 'cudaLaunchKernel_v7000'),
            (5, 'ncclSend'), (6, 'NCCL');
        INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2026.2.1');
        -- nsys packs globalTid = (.. pid) << 24 | tid; globalPid has tid 0
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
            (1100, 1200, 0, 7, 500, 16777360 << 24, 1, 40),
            (1300, 1400, 0, 7, 501, 16777360 << 24, 1, 41),
            (1150, 1250, 1, 7, 500, 16777361 << 24, 1, 40),
            (1500, 1900, 1, 7, 510, 16777361 << 24, 1, 42);
        INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
            (1000, 1010, 1, (16777360 << 24) + 11, 500, 2),
            (1020, 1030, 1, (16777360 << 24) + 11, 501, 2),
            (1005, 1015, 1, (16777361 << 24) + 12, 500, 2),
            (1040, 1050, 1, (16777361 << 24) + 12, 510, 2);
        INSERT INTO NVTX_EVENTS VALUES
            (10, NULL, 75, NULL, NULL, (16777361 << 24) + 12, 6, 1),
            (990, 1035, 59, NULL, 'aten::addmm, seq = 47890, op_id = 1000497', (16777360 << 24) + 11, NULL, 0),
            (995, 1020, 59, NULL, 'aten::empty, op_id = 1000490', (16777360 << 24) + 11, NULL, 0),
            (1000, 1060, 59, NULL, 'AddmmBackward0, seq = 47800, op_id = 1000600', (16777361 << 24) + 12, NULL, 0),
            (1039, 1055, 59, NULL, NULL, (16777361 << 24) + 12, 5, 1),
            (1001, 1100, 60, 3, 'step', (16777361 << 24) + 12, NULL, 0);
        INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1060, 2000, 511, 16777361 << 24, 64);
        "#,
    )
    .unwrap();
    path
}

fn scale(src: &Path, out: &Path, copies: u32) {
    let st = Command::new(BIN)
        .args(["scale", "-q", "--gap-ns", "100", "--copies"])
        .arg(copies.to_string())
        .arg("--source")
        .arg(src)
        .arg("-o")
        .arg(out)
        .status()
        .unwrap();
    assert!(st.success());
}

fn count(c: &Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn schema(c: &Connection) -> Vec<String> {
    let mut st = c
        .prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn three_copies_of_a_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture(dir.path());
    let out = dir.path().join("x3.sqlite");
    scale(&src, &out, 3);
    let s = Connection::open(&src).unwrap();
    let c = Connection::open(&out).unwrap();

    // same schema, including the index
    assert_eq!(schema(&s), schema(&c));

    // event tables ×3 (the domain-create row once), other tables once
    assert_eq!(
        count(&c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
        12
    );
    assert_eq!(
        count(&c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"),
        12
    );
    assert_eq!(
        count(&c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"),
        3
    );
    assert_eq!(count(&c, "SELECT count(*) FROM NVTX_EVENTS"), 1 + 5 * 3);
    assert_eq!(
        count(&c, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 75"),
        1
    );
    assert_eq!(count(&c, "SELECT count(*) FROM META_DATA_EXPORT"), 1);

    // time span of the source: 10 .. 2000, + gap 100
    let step = 2000 - 10 + 100;
    for k in 0..3i64 {
        assert_eq!(
            count(
                &c,
                &format!(
                    "SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = {}",
                    4 * k + 4
                )
            ),
            1500 + k * step
        );
    }
    // the kernel durations and launch order are unchanged
    assert_eq!(
        count(
            &c,
            "SELECT count(DISTINCT end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL"
        ),
        2
    );

    // correlation ids: unique per process, increasing in table order, and
    // every kernel still finds its launch on (process, correlation id)
    for table in ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"] {
        let pid = if table.ends_with("KERNEL") {
            "globalPid >> 24"
        } else {
            "globalTid >> 24"
        };
        let mut st = c
            .prepare(&format!(
                "SELECT {pid}, correlationId FROM {table} ORDER BY rowid"
            ))
            .unwrap();
        let rows: Vec<(i64, i64)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for p in [16777360i64, 16777361] {
            let ids: Vec<i64> = rows
                .iter()
                .filter(|(q, _)| *q == p)
                .map(|(_, id)| *id)
                .collect();
            assert_eq!(ids.len(), 6, "{table} pid {p}");
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{table}: {ids:?}");
        }
    }
    assert_eq!(
        count(
            &c,
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r \
             ON r.correlationId = k.correlationId AND r.globalTid >> 24 = k.globalPid >> 24"
        ),
        12
    );
    // grid ids and NVTX range ids fresh per copy
    assert_eq!(
        count(
            &c,
            "SELECT count(DISTINCT gridId) FROM CUPTI_ACTIVITY_KIND_KERNEL"
        ),
        9
    );
    assert_eq!(
        count(
            &c,
            "SELECT count(DISTINCT rangeId) FROM NVTX_EVENTS WHERE rangeId IS NOT NULL"
        ),
        3
    );

    // texts renumbered: seq span 47800..47890 → +91, op_id 1000490..1000600 → +111
    let texts: Vec<String> = {
        let mut st = c
            .prepare("SELECT text FROM NVTX_EVENTS WHERE text LIKE 'aten::addmm%' ORDER BY rowid")
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(
        texts,
        [
            "aten::addmm, seq = 47890, op_id = 1000497",
            "aten::addmm, seq = 47981, op_id = 1000608",
            "aten::addmm, seq = 48072, op_id = 1000719",
        ]
    );
    // three numbered texts per copy, and `step` (no numbers) in all
    assert_eq!(
        count(&c, "SELECT count(DISTINCT text) FROM NVTX_EVENTS"),
        3 * 3 + 1
    );

    // registered NVTX strings: a fresh StringIds row per copy, same text
    let mut st = c
        .prepare(
            "SELECT n.textId, s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId \
             WHERE n.eventType = 59 ORDER BY n.rowid",
        )
        .unwrap();
    let reg: Vec<(i64, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        reg,
        [
            (5, "ncclSend".to_owned()),
            (7, "ncclSend".to_owned()),
            (8, "ncclSend".to_owned())
        ]
    );
    // the domain name (one-off row) keeps its id
    assert_eq!(count(&c, "SELECT count(*) FROM StringIds"), 4 + 2);
}

#[test]
fn one_copy_is_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture(dir.path());
    let out = dir.path().join("x1.sqlite");
    scale(&src, &out, 1);
    let c = Connection::open(&out).unwrap();
    c.execute("ATTACH DATABASE ?1 AS s", [src.to_str().unwrap()])
        .unwrap();
    for t in [
        "StringIds",
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "NVTX_EVENTS",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
    ] {
        let diff = count(
            &c,
            &format!("SELECT count(*) FROM (SELECT * FROM main.{t} EXCEPT SELECT * FROM s.{t})"),
        );
        assert_eq!(diff, 0, "{t}");
    }
}

#[test]
fn refuses_to_overwrite_and_names_a_missing_source() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture(dir.path());
    let out = dir.path().join("x.sqlite");
    scale(&src, &out, 2);
    let o = Command::new(BIN)
        .args(["scale", "-n", "2", "--source"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));

    let o = Command::new(BIN)
        .args([
            "scale",
            "-n",
            "2",
            "--source",
            "/nonexistent/x.sqlite",
            "-o",
        ])
        .arg(dir.path().join("y.sqlite"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/nonexistent/x.sqlite") && err.contains("not found"),
        "{err}"
    );
    assert!(!dir.path().join("y.sqlite").exists());
}

/// The real nsys 2026.2 export the benchmarks scale, when present.
#[test]
fn real_export_scales() {
    let real = Path::new("/work/shared/corpus/nsys-ai/mfu_2gpu_before.sqlite");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/nsys-ai/mfu_2gpu_before.sqlite");
    let Some(src) = [fixture.as_path(), real].into_iter().find(|p| p.is_file()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x3.sqlite");
    scale(src, &out, 3);
    let s = Connection::open(src).unwrap();
    let c = Connection::open(&out).unwrap();
    assert_eq!(schema(&s), schema(&c));
    for t in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "NVTX_EVENTS",
    ] {
        let q = format!("SELECT count(*) FROM {t}");
        assert_eq!(count(&c, &q), 3 * count(&s, &q), "{t}");
    }
    let q = "SELECT count(DISTINCT text) FROM NVTX_EVENTS";
    assert_eq!(count(&c, q), 3 * count(&s, q));
    let q = "SELECT count(*) FROM (SELECT DISTINCT globalPid >> 24, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL)";
    assert_eq!(count(&c, q), 3 * count(&s, q));
}
