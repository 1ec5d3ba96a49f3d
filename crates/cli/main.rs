//! `rprof`: GPU profiles of deep-learning jobs, kernel by kernel.
//!
//! The binary only parses arguments, runs one subcommand module and maps the
//! outcome to an exit code: 0 success (also when a reader closes the pipe),
//! 1 bad data or I/O, 2 usage (clap's own errors and our argument checks).

mod args;
mod cmd;
mod input;
mod out;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    out::check_stdout();
    let cli = args::Cli::parse();
    let result = match cli.command {
        args::Command::Parse(a) => cmd::parse::run(&a),
        args::Command::Prof(a) => cmd::prof::run(&a),
        args::Command::Summary(a) => cmd::summary::run(&a),
        args::Command::Gpu(a) => cmd::gpu::run(&a),
        args::Command::Export(a) => cmd::export::run(&a),
    };
    input::spool::clear();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if out::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let code = match err.downcast_ref::<out::UsageError>() {
                Some(_) => 2,
                None => 1,
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
