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
    let cli = args::Cli::parse();
    let result = match cli.command {
        args::Command::Parse(a) => cmd::parse::run(&a),
        args::Command::Prof(a) => cmd::prof::run(&a),
        args::Command::Summary(a) => cmd::summary::run(&a),
        args::Command::Gpu(a) => cmd::gpu::run(&a),
        args::Command::Export(a) => cmd::export::run(&a),
        args::Command::Stats(a) => cmd::stats::run(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if out::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let code = match err.downcast_ref::<out::UsageError>() {
                Some(_) => 2,
                None => 1,
            };
            let _ = writeln!(std::io::stderr(), "rprof: {err:#}");
            ExitCode::from(code)
        }
    }
}
