//! `rprof`: GPU profiles of deep-learning jobs, kernel by kernel.
//!
//! The binary only parses arguments, runs one subcommand module and maps the
//! outcome to an exit code: 0 success (also when a reader closes the pipe),
//! 1 bad data or I/O, 2 usage (clap's own errors and our argument checks),
//! 3 `rprof diff --fail-above` found a regression.

mod alloc;
mod args;
mod cmd;
mod diag;
mod input;
mod out;
mod progress;
mod style;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

/// glibc's allocator, or mimalloc's for the commands faster with it.
#[global_allocator]
static ALLOC: alloc::Switch = alloc::Switch;

fn main() -> ExitCode {
    out::check_stdout();
    let cli = args::Cli::parse();
    let result = match cli.command {
        args::Command::Parse(a) => cmd::parse::run(&a),
        args::Command::Prof(a) => cmd::prof::run(&a),
        args::Command::Summary(a) => cmd::summary::run(&a),
        args::Command::Gpu(a) => cmd::gpu::run(&a),
        args::Command::Mem(a) => cmd::mem::run(&a),
        args::Command::Export(a) => cmd::export::run(&a),
        args::Command::Report(a) => cmd::report::run(&a),
        args::Command::Dist(a) => cmd::dist::run(&a),
        args::Command::Diff(a) => cmd::diff::run(&a),
        args::Command::Steps(a) => cmd::steps::run(&a),
        args::Command::Idle(a) => cmd::idle::run(&a),
        args::Command::Launch(a) => cmd::launch::run(&a),
        args::Command::Completions(a) => cmd::shell::completions(&a),
        args::Command::Man(a) => cmd::shell::man(&a),
        args::Command::Stats(a) => cmd::stats::run(&a),
    };
    input::spool::clear();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if out::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let code = if err.downcast_ref::<out::UsageError>().is_some() {
                2
            } else if err.downcast_ref::<cmd::diff::Regressed>().is_some() {
                3
            } else {
                1
            };
            let _ = writeln!(std::io::stderr(), "rprof: {}", one_line(&err));
            ExitCode::from(code)
        }
    }
}

/// The error and its causes on one line, `: `-separated, a cause left out
/// when the message before it already says it (SQLite's text often
/// repeats), and control characters escaped (a message may quote the file).
fn one_line(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = cause.to_string();
        // SQLite's own error repeats the message after its code
        let text = match text.strip_prefix("Error code ") {
            Some(rest) => rest.split_once(": ").map_or(rest, |(_, m)| m),
            None => &text,
        };
        let text = text.trim();
        if text.is_empty() || parts.iter().any(|p| p.contains(text)) {
            continue;
        }
        parts.push(text.to_owned());
    }
    let mut line = String::new();
    let text = input::spool::rename_in(&parts.join(": "));
    rprof_report::escape::push_escaped(&mut line, &text);
    line
}
