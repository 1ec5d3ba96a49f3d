//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `rprof` binary under test.
pub fn rprof() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rprof"))
}

/// The repository root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A file under `fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    root().join("fixtures").join(rel)
}

/// The shared corpus (`../shared/corpus`), if this checkout has it. Tests
/// that need unlicensed corpus files use it and skip (with a note on stderr)
/// when it is absent, e.g. in a clean clone without the shared folder.
pub fn corpus() -> Option<PathBuf> {
    let p = root().join("../shared/corpus");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("note: ../shared/corpus is absent; skipping a test that reads it");
        None
    }
}

/// Run and capture; panics with stderr on a spawn failure only.
pub fn run(cmd: &mut Command) -> std::process::Output {
    cmd.output().expect("spawn rprof")
}

/// Skip the rest of a test when the shared corpus is absent.
macro_rules! corpus_or_skip {
    () => {
        match crate::util::corpus() {
            Some(p) => p,
            None => return,
        }
    };
}

/// The `key` of each of a JSON report's `rows`, in order.
pub fn row_keys(v: &serde_json::Value) -> Vec<&str> {
    texts_of(v, "rows", "key")
}

/// The text `field` of each object in the JSON report's list `list`, in
/// order.
pub fn texts_of<'v>(v: &'v serde_json::Value, list: &str, field: &str) -> Vec<&'v str> {
    v[list]
        .as_array()
        .expect("a list")
        .iter()
        .map(|r| r[field].as_str().expect("a text"))
        .collect()
}
