//! The attributed kernel table (`build::build_tables_overlapped`): its
//! JSON lines, written straight from the table with each context's lists
//! written once, are serde_json's serialization of the records the table
//! gives (`Table::record`), line for line, for every profile in
//! `fixtures/` and every `--stack` form, with and without `--compat`
//! (serde_json is the independent writer here); and the overlapped table
//! build gives the records and counts of the plain `build::build`, in the
//! same order. That those records are right is the golden files' test
//! (`tests/parse.rs`, `tests/prof.rs`).

use rprof_trace::attribute;
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::model::{StackForm, StackMode};
use rprof_trace::read::{self, ReadOptions};

use crate::util::fixture;

const PROFILES: &[&str] = &[
    "profiling-lm/net.sql",
    "nsys-ai/mfu_2gpu_before.sqlite",
    "mordred/report1_2021.sqlite",
    "flameox/nsight-2025.5.2.sqlite",
    "kineto/alexnet_benchmark_trace.json.gz",
];

fn forms() -> Vec<StackForm> {
    vec![
        StackForm::default(),
        StackForm {
            mode: StackMode::Runs,
            max_bytes: 0,
        },
        StackForm {
            mode: StackMode::Inner,
            max_bytes: 0,
        },
        StackForm {
            mode: StackMode::None,
            max_bytes: 0,
        },
        StackForm {
            mode: StackMode::Full,
            max_bytes: 40,
        },
    ]
}

#[test]
fn table_json_is_serde_of_its_records_and_the_build_records() {
    for rel in PROFILES {
        let path = fixture(rel);
        for compat in [false, true] {
            let mut trace = read::read(
                &path,
                ReadOptions {
                    compat,
                    ..ReadOptions::default()
                },
            )
            .unwrap();
            let enclosing = attribute::attribute(&trace.launches, &mut trace.ranges);
            for stack in forms() {
                let opts = BuildOptions {
                    compat,
                    stack,
                    typed_stock: false,
                };
                // the records every other command consumes, one line each
                let mut want: Vec<String> = Vec::new();
                let plain = build::build(&trace, &enclosing, opts, |recs| {
                    want.extend(
                        recs.iter()
                            .map(|r| serde_json::to_string(&r.to_record()).unwrap()),
                    );
                    rprof_trace::Result::Ok(())
                });
                let mut got_json: Vec<u8> = Vec::new();
                let mut got_records: Vec<String> = Vec::new();
                let mut contexts = 0;
                let tables = build::build_tables_overlapped(&trace, &enclosing, opts, |t| {
                    t.write_json(0..t.len(), &mut got_json);
                    // the table's rows, as records, serialized by serde
                    for i in 0..t.len() {
                        let r = t.record(i).unwrap();
                        got_records.push(serde_json::to_string(&r).unwrap());
                    }
                    assert!(t.record(t.len()).is_none());
                    contexts += t.contexts();
                    rprof_trace::Result::Ok(())
                });
                match (plain, tables) {
                    (Ok(a), Ok(b)) => assert_eq!(a, b, "{rel} compat={compat}: build stats"),
                    // PyProf's aborts under --compat, the same for both
                    (Err(a), Err(b)) => {
                        assert_eq!(a.to_string(), b.to_string());
                        continue;
                    }
                    (a, b) => panic!("{rel} compat={compat}: {a:?} against {b:?}"),
                }
                assert_eq!(got_records, want, "{rel} compat={compat} {stack:?}");
                let got = String::from_utf8(got_json).unwrap();
                let lines: Vec<&str> = got.lines().collect();
                assert_eq!(lines.len(), want.len(), "{rel}: one line per kernel");
                for (i, (g, w)) in lines.iter().zip(&want).enumerate() {
                    assert_eq!(g, w, "{rel} compat={compat} {stack:?}: line {}", i + 1);
                }
                assert!(got.ends_with('\n') || want.is_empty());
                assert!(contexts <= want.len(), "at most a context per kernel");
                if !compat && !want.is_empty() {
                    // kernels under the same ranges share a context
                    assert!(contexts > 0);
                }
            }
        }
    }
}
