//! `rprof mem`: allocations over time, peaks, who allocates, alive memory,
//! and memory traffic (copies and sets).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use rprof_report::mem::render::{self, Section};
use rprof_report::mem::{self, MemOptions};
use rprof_trace::read::{self, ReadOptions};

use crate::input::Input;
use crate::out::{self, UsageError};

/// Memory: allocations per device, per op, alive at the end; copies and sets.
///
/// Allocations come from PyTorch-profiler `[memory]` events
/// (`profile_memory=True`) and nsys `CUDA_GPU_MEMORY_USAGE_EVENTS`
/// (`--cuda-memory-usage=true`): per device, allocations and frees, bytes,
/// the net change, the peak and the low of the running sum in the window
/// (from 0 before the first event; a negative low means memory allocated
/// before the window was freed in it), and the peak of the allocator's own
/// Total Allocated / Total Reserved where recorded (else `na`). Per op:
/// events attributed to the innermost op enclosing them on their thread
/// (self) and to every enclosing op (incl.). Alive: allocations never freed,
/// by address. Copies and sets (nsys, nvprof, PyTorch profiler): count,
/// time, bytes, bandwidth per kind; and the copies and sets that make the
/// host wait (async copies of pageable memory, synchronous copies and
/// sets), with the ops that issued them. See docs/reports.md, "mem".
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct MemArgs {
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "table",
          value_parser = ["table", "csv", "json"])]
    pub format: String,

    /// Shorthand for --format csv.
    #[arg(long, conflicts_with_all = ["json", "format"])]
    pub csv: bool,

    /// Shorthand for --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// The table --csv writes.
    #[arg(long, value_name = "SECTION", default_value = "devices", value_parser = section_parser())]
    pub section: Section,

    /// Write the memory curve per device (bucketed running sums) as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub curve: Option<PathBuf>,

    /// Buckets of the curve per device (1 to 100000; at most 1000000 rows in all).
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub curve_buckets: usize,

    /// Rows of the op and alive tables and issuers per flag (0: all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// Clip names in the table to N characters (0: never).
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub name_width: usize,

    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// A profile: nsys or nvprof SQLite, or a PyTorch-profiler trace.
    pub file: PathBuf,
}

const AFTER_HELP: &str = "\
Examples:
  rprof mem trace.pt.trace.json.gz            # PyTorch profiler run with profile_memory=True
  rprof mem net.sqlite                        # nsys: copies and sets; allocations with --cuda-memory-usage=true
  rprof mem net.sqlite --curve mem.csv        # the memory curve per device, for plotting
  rprof mem trace.json.gz --json
  rprof mem net.sqlite --csv --section copies";

fn section_parser() -> impl TypedValueParser<Value = Section> {
    PossibleValuesParser::new(Section::ALL.map(|s| PossibleValue::new(s.name())))
        .map(|s| Section::from_name(&s).unwrap_or(Section::Devices))
}

pub fn run(args: &MemArgs) -> anyhow::Result<()> {
    if !(1..=100_000).contains(&args.curve_buckets) {
        return Err(UsageError(format!(
            "--curve-buckets {}: must be from 1 to 100000",
            args.curve_buckets
        ))
        .into());
    }
    let format = if args.csv {
        "csv"
    } else if args.json {
        "json"
    } else {
        args.format.as_str()
    };
    if let Input::Records(_) = Input::detect(Some(&args.file))? {
        anyhow::bail!(
            "{}: a record file (rprof parse output or PyProf .dict) has no memory data: give rprof mem the profile itself",
            args.file.display()
        );
    }
    let trace = read::read(
        &args.file,
        ReadOptions {
            compat: false,
            memops: true,
            api_calls: true,
            all_ranges: true,
            mem_events: true,
            syncs: false,
            no_ranges: false,
        },
    )?;
    let (report, curve) = mem::compute(
        &trace,
        MemOptions {
            top: args.top,
            curve_buckets: args.curve_buckets,
        },
    );
    drop(trace);
    if let Some(p) = &args.curve {
        let f =
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?;
        let mut w = std::io::BufWriter::new(f);
        render::write_curve(&mut w, &curve)
            .and_then(|()| w.flush())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    let mut w = out::create(args.output.as_deref(), &[&args.file])?;
    match format {
        "csv" => render::write_csv(&mut w, &report, args.section)?,
        "json" => render::write_json(&mut w, &report)?,
        _ => render::write_table(&mut w, &report, args.name_width)?,
    }
    w.finish()?;
    Ok(())
}
