//! Pinned texts: every `--help` page, and the text tables of `summary`,
//! `gpu` and `stats` on bundled fixtures, as insta snapshots in
//! `tests/snapshots/`. A change to any of them shows up as a reviewed
//! snapshot diff (`INSTA_UPDATE=always cargo test --test integration
//! snapshots`, then read `git diff tests/snapshots`). The values in the
//! tables are checked against SQL elsewhere (tests/summary.rs,
//! tests/gpu.rs, tests/stats.rs); these snapshots pin their layout.

use crate::util::{root, rprof, run};

/// Every subcommand, as `rprof --help` lists them.
const COMMANDS: &[&str] = &[
    "parse",
    "prof",
    "summary",
    "gpu",
    "mem",
    "export",
    "report",
    "dist",
    "diff",
    "steps",
    "idle",
    "launch",
    "completions",
    "man",
    "stats",
];

/// Standard output of `rprof ARGS` run in the repository root (paths in
/// ARGS are relative, so the output is the same in any clone), which must
/// succeed. Help is wrapped at a fixed width so that the snapshot does not
/// depend on the terminal.
fn stdout_of(args: &[&str]) -> String {
    let out = run(rprof()
        .current_dir(root())
        .args(args)
        .env("COLUMNS", "100")
        .env("NO_COLOR", "1"));
    assert!(
        out.status.success(),
        "rprof {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

#[test]
fn every_help_page_is_pinned() {
    insta::assert_snapshot!("help", stdout_of(&["--help"]));
    for cmd in COMMANDS {
        insta::assert_snapshot!(format!("help_{cmd}"), stdout_of(&[cmd, "--help"]));
    }
}

/// The list above is the list the binary prints: a new subcommand must get
/// its pinned help page.
#[test]
fn the_pinned_commands_are_all_the_commands() {
    let help = stdout_of(&["--help"]);
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    let mut want: Vec<&str> = COMMANDS.to_vec();
    let mut got = listed.clone();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want);
}

#[test]
fn summary_gpu_and_stats_tables_are_pinned() {
    let net = "fixtures/profiling-lm/net.sql";
    let mfu = "fixtures/nsys-ai/mfu_2gpu_before.sqlite";
    insta::assert_snapshot!("summary_op", stdout_of(&["summary", "-q", net]));
    insta::assert_snapshot!(
        "summary_kernel",
        stdout_of(&["summary", "-q", "--by", "kernel", mfu])
    );
    insta::assert_snapshot!("gpu", stdout_of(&["gpu", "-q", net]));
    insta::assert_snapshot!(
        "stats_kern_sum",
        stdout_of(&["stats", "-q", "--report", "cuda_gpu_kern_sum", mfu])
    );
    insta::assert_snapshot!(
        "stats_nvtx_sum",
        stdout_of(&["stats", "-q", "--report", "nvtx_sum", net])
    );
}
