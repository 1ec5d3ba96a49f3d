//! Puts the git commit in `rprof --version` (RPROF_GIT_COMMIT): the short
//! hash of HEAD (uncommitted changes are not tracked); `unknown commit`
//! when this is not a git checkout or git is missing (a source tarball,
//! `cargo install` from a registry).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(hash) => format!("commit {hash}"),
        None => "unknown commit".to_owned(),
    };
    println!("cargo:rustc-env=RPROF_GIT_COMMIT={commit}");
    // rebuild when HEAD moves (a commit, a checkout)
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/logs/HEAD");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
