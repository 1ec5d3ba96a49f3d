//! `build::build_overlapped` (the records of `rprof report`, built on a
//! second thread): the same records in the same order as `build::build`,
//! `prepare` called once per chunk in order, and a sink's error returned
//! with the builder stopped a bounded number of chunks ahead.

use rprof_trace::attribute;
use rprof_trace::build::{self, BuildOptions, CHUNK};
use rprof_trace::read::{self, ReadOptions};

/// A PyTorch-profiler trace (written in one go: a synthetic SQLite export
/// commits row by row) with kernels enough for several chunks: each
/// launched inside a per-kernel operator with a sequence number, every
/// tenth operator inside a layer annotation, some kernels without a launch.
fn synthetic(path: &std::path::Path) -> usize {
    let n = 2 * CHUNK + 123;
    let mut events: Vec<String> = Vec::with_capacity(4 * n);
    for i in 0..n {
        let t = 10 + i * 10; // µs
        if i % 10 == 0 {
            events.push(format!(
                r#"{{"ph":"X","cat":"user_annotation","name":"layer{}","pid":1,"tid":1,"ts":{t},"dur":99.9}}"#,
                i / 10
            ));
        }
        events.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{}.5,"dur":2,"args":{{"Sequence number":{i}}}}}"#,
            t
        ));
        let corr = i + 1;
        if i % 97 != 0 {
            events.push(format!(
                r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{}.6,"dur":1,"args":{{"correlation":{corr}}}}}"#,
                t
            ));
        }
        events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"k{}","pid":0,"tid":7,"ts":{}.2,"dur":{},"args":{{"device":0,"stream":7,"correlation":{corr}}}}}"#,
            i % 7,
            t + 4,
            1 + i % 5
        ));
    }
    let json = format!(r#"{{"traceEvents":[{}]}}"#, events.join(",\n"));
    std::fs::write(path, json).unwrap();
    n
}

#[test]
fn overlapped_build_gives_the_same_records_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    let n = synthetic(&path);
    let mut trace = read::read(&path, ReadOptions::everything()).unwrap();
    let enclosing = attribute::attribute(&trace.launches, &mut trace.ranges);

    let mut plain: Vec<String> = Vec::new();
    let plain_stats = build::build(&trace, &enclosing, BuildOptions::default(), |recs| {
        plain.extend(
            recs.iter()
                .map(|r| serde_json::to_string(&r.to_record()).unwrap()),
        );
        rprof_trace::Result::Ok(())
    })
    .unwrap();
    assert_eq!(plain.len(), n);

    // prepare sees the chunks in order: the number of records before each
    // chunk, which emit checks against its own count
    let mut seen_by_prepare = 0usize;
    let mut overlapped: Vec<String> = Vec::new();
    let mut chunks = 0usize;
    let stats = build::build_overlapped(
        &trace,
        &enclosing,
        BuildOptions::default(),
        |recs| {
            let before = seen_by_prepare;
            seen_by_prepare += recs.len();
            (before, recs.len())
        },
        |recs, (before, len)| {
            assert_eq!(before, overlapped.len());
            assert_eq!(len, recs.len());
            chunks += 1;
            overlapped.extend(
                recs.iter()
                    .map(|r| serde_json::to_string(&r.to_record()).unwrap()),
            );
            rprof_trace::Result::Ok(())
        },
    )
    .unwrap();
    assert_eq!(stats, plain_stats);
    assert!(chunks >= 3, "{chunks} chunks");
    assert_eq!(overlapped, plain);
    // every record in start order (the plain sort, independently)
    let starts: Vec<i64> = overlapped
        .iter()
        .map(|j| {
            let v: serde_json::Value = serde_json::from_str(j).unwrap();
            v["kStart"].as_i64().unwrap()
        })
        .collect();
    let mut sorted = starts.clone();
    sorted.sort_unstable();
    assert_eq!(starts, sorted);
}

#[test]
fn overlapped_build_stops_on_the_sinks_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    synthetic(&path);
    let mut trace = read::read(&path, ReadOptions::default()).unwrap();
    let enclosing = attribute::attribute(&trace.launches, &mut trace.ranges);
    let prepared = std::sync::atomic::AtomicUsize::new(0);
    let mut emitted = 0usize;
    let r = build::build_overlapped(
        &trace,
        &enclosing,
        BuildOptions::default(),
        |_| {
            prepared.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        },
        |_, ()| {
            emitted += 1;
            if emitted == 1 {
                Err(rprof_trace::Error::Empty {
                    path: "sink".into(),
                    detail: "stop".into(),
                })
            } else {
                Ok(())
            }
        },
    );
    let e = r.unwrap_err();
    assert!(e.to_string().contains("stop"), "{e}");
    assert_eq!(emitted, 1);
    // the chunk emitted, one waiting, one built and refused
    let p = prepared.load(std::sync::atomic::Ordering::SeqCst);
    assert!((1..=3).contains(&p), "{p} chunks prepared");
}
