//! What `rprof steps`, `rprof idle` and `rprof launch` share: output flags
//! and reading a profile with every table they need.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{Args, ValueEnum};
use rprof_report::host::OutFormat;
use rprof_trace::model::Trace;
use rprof_trace::read::{self, ReadOptions};

use crate::input::Input;
use crate::out;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Tables for people.
    Table,
    /// CSV.
    Csv,
    /// One JSON document.
    Json,
}

/// Output flags.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,

    /// Same as --format csv.
    #[arg(long, conflicts_with_all = ["json", "format"])]
    pub csv: bool,

    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Clip names in tables to N characters (0: never; CSV and JSON are
    /// never clipped).
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub name_width: usize,

    /// No summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

impl OutputArgs {
    /// The chosen format.
    pub fn format(&self) -> OutFormat {
        if self.csv {
            OutFormat::Csv
        } else if self.json {
            OutFormat::Json
        } else {
            match self.format {
                FormatArg::Table => OutFormat::Table,
                FormatArg::Csv => OutFormat::Csv,
                FormatArg::Json => OutFormat::Json,
            }
        }
    }

    /// Run `write` on the chosen output and flush it.
    pub fn emit(
        &self,
        input: &Path,
        write: impl FnOnce(&mut out::Output) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        let mut w = out::create(self.output.as_deref(), &[input])?;
        write(&mut w)?;
        w.finish()?;
        Ok(())
    }
}

/// Read a profile with API calls, copies and sets, ranges on every thread
/// (and sync records when `syncs`), then find the innermost range
/// enclosing each launch call.
pub fn load(file: &Path, syncs: bool, quiet: bool) -> anyhow::Result<(Trace, Vec<Option<u32>>)> {
    let path = match Input::detect(Some(file))? {
        Input::Profile(p) => p,
        // not JSON either: let the reader say what the file is not
        Input::Records(_) if read::sniff(file)? != read::FileKind::Json => file.to_owned(),
        Input::Records(_) | Input::Stream(..) => bail!(
            "{}: a record file; this command needs the profile itself (nsys or nvprof SQLite, or a PyTorch profiler trace), since records lack API calls, ranges and copies",
            file.display()
        ),
    };
    let mut trace = read::read(
        &path,
        ReadOptions {
            compat: false,
            memops: true,
            api_calls: true,
            all_ranges: true,
            mem_events: false,
            syncs,
            no_ranges: false,
        },
    )?;
    let enclosing = rprof_trace::attribute::attribute(&trace.launches, &mut trace.ranges);
    let innermost: Vec<Option<u32>> = (0..trace.launches.len() as u32)
        .map(|l| enclosing.of(l).last().copied())
        .collect();
    if !quiet {
        let s = &trace.stats;
        let mut e = std::io::stderr().lock();
        let _ = writeln!(
            e,
            "rprof: {}: {} kernels, {} copies/sets, {} API calls, {} ranges, {} kernels without a launch call",
            trace.path.display(),
            trace.kernels.len(),
            trace.memops.len(),
            trace.api_calls.len(),
            trace.ranges.len(),
            s.without_launch
        );
        for n in &trace.notes {
            let _ = writeln!(e, "rprof: {}: {}", trace.path.display(), n);
        }
    }
    Ok((trace, innermost))
}
