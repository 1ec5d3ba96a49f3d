//! `rprof diff`: what got slower between two runs, per key, and whether
//! it is more than noise.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use rprof_report::diff::{
    self, DEFAULT_STEP_PATTERN, DiffOptions, Key, RunInfo, Side, SideData, StepMatcher, StepRange,
};
use rprof_report::model::{self, Models};
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::model::StrRef;
use rprof_trace::model::Trace;
use rprof_trace::read::{self, ReadOptions};

use crate::input::{self, Input};
use crate::out::{self, UsageError};
use crate::style::{OutFormat, TableArgs, Wrap};
use rprof_report::ColumnType;
use rprof_report::DataFormat;

/// Column types that must not depend on the values.
const TYPES: &[(&str, ColumnType)] = &[
    ("key", ColumnType::Utf8),
    ("status", ColumnType::Utf8),
    ("base_count", ColumnType::Int64),
    ("test_count", ColumnType::Int64),
    ("base_total_ns", ColumnType::Int64),
    ("test_total_ns", ColumnType::Int64),
    ("base_mean_ns", ColumnType::Float64),
    ("test_mean_ns", ColumnType::Float64),
    ("delta_ns", ColumnType::Int64),
    ("delta_pct", ColumnType::Float64),
    ("share_of_delta_pct", ColumnType::Float64),
    ("base_tflops", ColumnType::Float64),
    ("test_tflops", ColumnType::Float64),
    ("base_gbs", ColumnType::Float64),
    ("test_gbs", ColumnType::Float64),
    ("base_step_ns", ColumnType::ListInt64),
    ("test_step_ns", ColumnType::ListInt64),
    ("p_value", ColumnType::Float64),
    ("significant", ColumnType::Bool),
];

/// Compare two runs: per key, time, FLOP rates and a significance test.
///
/// Per key (default: op + direction + input shapes): kernels, total and
/// mean time in each run, the difference (ns and % of the base), the
/// share of the total difference the key explains (signed; all keys add
/// up to 100 %), TFLOP/s and GB/s in each run where the op models know
/// FLOPs and bytes, and keys present in one run only (added / removed).
/// Rows are sorted by the absolute difference; the total line equals each
/// run's summed kernel time.
///
/// When both runs have steps (ranges matching --step, `ProfilerStep#N` by
/// default), each key's time per step is compared with a two-sided
/// Mann-Whitney U test (exact for small samples without ties, else the
/// normal approximation with tie and continuity corrections, as SciPy);
/// `significant` means p < --alpha. With fewer than two steps in a run,
/// significance cannot be assessed and the report says so. Then the
/// whole-run figures: step time, GPU span, utilization, and compute /
/// communication (NCCL kernels) / idle time. Inputs that differ (devices,
/// ranks, processes, step counts) are stated at the top. Times are ns.
/// See docs/reports.md.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct DiffArgs {
    /// What to key kernels by.
    #[arg(long, value_name = "KEY", default_value = "op-dir-shape", value_parser = key_parser())]
    pub by: Key,

    /// Steps: ranges (NVTX, or Kineto user annotations) whose text matches
    /// this regular expression (searched; anchor it with ^). A kernel
    /// belongs to the step range of its process in which its launch call
    /// starts, on any thread (record files: the outermost step range on the
    /// launching thread).
    #[arg(long, value_name = "REGEX", default_value = DEFAULT_STEP_PATTERN)]
    pub step: String,

    /// Significance level of the Mann-Whitney U test.
    #[arg(long, value_name = "A", default_value_t = diff::DEFAULT_ALPHA)]
    pub alpha: f64,

    /// Exit with status 3 when a key regressed by more than PCT % of its
    /// base time (a key new in the test run counts as an infinite
    /// increase) and the increase is significant (or cannot be assessed:
    /// then the difference alone decides, and stderr says so).
    #[arg(long, value_name = "PCT")]
    pub fail_above: Option<f64>,

    /// Show the N keys with the largest |difference| (0: all); the others
    /// are summed into one line.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub top: usize,

    /// Output format: table, csv, tsv or parquet (one row per key), or
    /// json (one document: rows, whole-run figures, inputs, significance).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = OutFormat::Table)]
    pub format: OutFormat,

    /// Same as --format csv (one line per key).
    #[arg(long, conflicts_with_all = ["json", "format"])]
    pub csv: bool,

    /// Same as --format json (one document: rows, whole-run figures,
    /// inputs, significance).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Write to FILE instead of standard output (`-`: standard output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub style: TableArgs,

    /// Clip keys in the table to N characters (0: never; CSV and JSON are
    /// never clipped).
    #[arg(long, value_name = "N", default_value_t = 80)]
    pub name_width: usize,

    /// No parse summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// The base run: a profile (nsys or nvprof SQLite, Kineto trace) or
    /// records of `rprof parse` (`-`: standard input).
    pub base: PathBuf,

    /// The test run, as the base.
    pub test: PathBuf,
}

const AFTER_HELP: &str = "\
Examples:
  rprof diff base.sqlite test.sqlite                 # op + direction + shapes
  rprof diff base.pt.trace.json.gz test.pt.trace.json.gz --by kernel
  rprof diff base.sqlite test.sqlite --by op --top 20
  rprof diff base test --json | jq '.rows[0]'
  rprof diff base test --fail-above 5                # CI gate: exit 3 on a regression
  rprof diff base test --format parquet -o diff.parquet

Exit status: 0 no key regressed beyond --fail-above (or no --fail-above),
1 bad input, 2 usage error, 3 a key regressed beyond --fail-above.";

fn key_parser() -> impl TypedValueParser<Value = Key> {
    PossibleValuesParser::new(Key::ALL.map(|k| PossibleValue::new(k.name()).help(k.help())))
        .map(|s| Key::from_name(&s).unwrap_or(Key::OpDirShape))
}

/// `--fail-above` found regressions (exit status 3).
#[derive(Debug)]
pub struct Regressed(pub String);

impl std::fmt::Display for Regressed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Regressed {}

/// What a profile says about itself: devices, rank.
fn run_info(trace: &Trace, name: &str) -> RunInfo {
    RunInfo {
        name: name.to_owned(),
        devices: devices(&trace.devices),
        rank: trace.dist.as_ref().and_then(|d| d.rank),
        world_size: trace.dist.as_ref().and_then(|d| d.world_size),
    }
}

/// The profile's step ranges (the regex runs once per distinct text).
fn step_ranges(trace: &Trace, steps: &StepMatcher) -> Vec<StepRange> {
    let mut cache: HashMap<StrRef, bool> = HashMap::new();
    trace
        .ranges
        .iter()
        .filter(|r| {
            *cache
                .entry(r.text)
                .or_insert_with(|| steps.is_match(trace.strings.get(r.text)))
        })
        .map(|r| StepRange {
            start_ns: r.start_ns,
            end_ns: r.end_ns.max(r.start_ns),
            pid: Some(trace.thread_id(r.thread).pid),
            text: trace.strings.get(r.text).to_owned(),
        })
        .collect()
}

fn devices(d: &[rprof_trace::model::DeviceInfo]) -> Vec<String> {
    let mut v: Vec<String> = d
        .iter()
        .map(|d| {
            format!(
                "{}: {}",
                d.device,
                d.name.as_deref().unwrap_or("unnamed GPU")
            )
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Read one run and group it.
/// A run, grouped, with what its read says on standard error (printed by
/// the caller, in the order of the command line: the two runs may be read
/// at once).
fn load(
    path: &Path,
    args: &DiffArgs,
    steps: &StepMatcher,
) -> anyhow::Result<(SideData, Vec<String>)> {
    let source = Input::detect(Some(path))?;
    let mut models = Models::new();
    let mut side = Side::new(args.by, steps);
    let opts = input::Options {
        compat: false,
        memops: false,
        quiet: args.quiet,
        streams: false,
    };
    match &source {
        Input::Profile(p) => {
            // ranges of every thread: the step ranges are often on a thread
            // that launched no kernel (the backward pass runs on another)
            let mut trace = read::read(
                p,
                ReadOptions {
                    all_ranges: true,
                    ..ReadOptions::default()
                },
            )?;
            let name = p.display().to_string();
            let info = run_info(&trace, &name);
            side.set_step_ranges(step_ranges(&trace, steps));
            // from here the ranges serve only to build the records: those
            // enclosing no launch call are dropped before the attribution,
            // as for every command that builds records (the records are the
            // same; a 3 M-kernel profile held 0.2 GB less)
            let (enclosing, _) =
                rprof_trace::attribute::attribute_used(&trace.launches, &mut trace.ranges);
            let opts = BuildOptions {
                typed_stock: true,
                ..BuildOptions::default()
            };
            let stats = build::build(&trace, &enclosing, opts, |recs| {
                let resolved = models.resolve(recs);
                let est = model::estimate(recs, &resolved);
                for (r, e) in recs.iter().zip(&est) {
                    side.add(r, e);
                }
                anyhow::Ok(())
            })?;
            let said = if args.quiet {
                Vec::new()
            } else {
                input::parse_summary_lines(&trace, &stats, input::Ranges::Read)
            };
            Ok((side.finish(info), said))
        }
        Input::Records(_) | Input::Stream(..) => {
            let info = input::for_each_chunk(&source, opts, |recs, _| {
                let resolved = models.resolve(recs);
                let est = model::estimate(recs, &resolved);
                for (r, e) in recs.iter().zip(&est) {
                    side.add(r, e);
                }
                anyhow::Ok(())
            })?;
            let side = side.finish(RunInfo {
                name: info.name,
                devices: devices(&info.devices),
                rank: None,
                world_size: None,
            });
            Ok((side, Vec::new()))
        }
    }
}

/// Bytes of input above which the two runs are read one after the other:
/// a profile's read holds about 1.2 × its file's size at its peak (1.47 GB
/// for two 0.6 GB exports of 1 M kernels), so this keeps two at once under
/// about 2 GB.
const AT_ONCE_BYTES: u64 = 3 << 29;

/// Whether the runs at `paths` are small enough to be read at once: their
/// files' sizes, a compressed file's counted ten times (a gzip-compressed
/// PyTorch-profiler trace holds about ten times its size in JSON; record
/// files, read a block at a time, hold less than their size). Standard
/// input counts nothing.
fn at_once(paths: &[&Path]) -> bool {
    let total: u64 = paths
        .iter()
        .map(|p| {
            let Ok(meta) = std::fs::metadata(p) else {
                return 0;
            };
            let gz = p.extension().is_some_and(|e| e.eq_ignore_ascii_case("gz"));
            if gz {
                meta.len().saturating_mul(10)
            } else {
                meta.len()
            }
        })
        .fold(0u64, u64::saturating_add);
    total <= AT_ONCE_BYTES
}

pub fn run(args: &DiffArgs) -> anyhow::Result<()> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(UsageError(format!(
            "--alpha {}: must be between 0 and 1 (exclusive)",
            args.alpha
        ))
        .into());
    }
    if let Some(p) = args.fail_above
        && !(p.is_finite() && p >= 0.0)
    {
        return Err(UsageError(format!(
            "--fail-above {p}: must be a percentage of 0 or more"
        ))
        .into());
    }
    let stdin = Path::new("-");
    if args.base == stdin && args.test == stdin {
        return Err(UsageError("only one of the two runs can be standard input".into()).into());
    }
    let steps = StepMatcher::new(&args.step).map_err(UsageError)?;
    if Input::is_records_file(&args.base) && Input::is_records_file(&args.test) {
        // two record files: read with mimalloc, as `prof` reads one
        // (crate::alloc); a profile on either side keeps glibc's, which
        // holds less
        crate::alloc::use_mimalloc();
    }
    // small runs at once, each read and grouped on its own (a read keeps
    // about one core busy: at 1 M kernels one after the other took 1.3 ×
    // the time); large ones one after the other, each let go once grouped
    // (read at once, two 3 M-kernel profiles held 4.1 GB together)
    let said = |run: &anyhow::Result<(SideData, Vec<String>)>| {
        if let Ok((_, lines)) = run {
            crate::diag::print(lines);
        }
    };
    let (base, test) = if at_once(&[args.base.as_path(), args.test.as_path()]) {
        let (base, test) = rayon::join(
            || load(&args.base, args, &steps),
            || load(&args.test, args, &steps),
        );
        said(&base);
        said(&test);
        (base, test)
    } else {
        let base = load(&args.base, args, &steps);
        said(&base);
        super::release_freed();
        // (an error in the base run is met before the test run is read)
        let test = match &base {
            Ok(_) => load(&args.test, args, &steps),
            Err(_) => Err(anyhow::anyhow!("not read")),
        };
        said(&test);
        (base, test)
    };
    let (base, _) = base?;
    let (test, _) = test?;
    let opts = DiffOptions {
        alpha: args.alpha,
        top: args.top,
        fail_above_pct: args.fail_above,
    };
    let report = diff::keyed(diff::compare(&base, &test, opts), args.by, &steps);
    let format = if args.csv {
        OutFormat::Csv
    } else if args.json {
        OutFormat::Json
    } else {
        args.format
    };
    let inputs = [args.base.as_path(), args.test.as_path()];
    match format.data() {
        None => {
            args.style.apply();
            let mut w = out::create(args.output.as_deref(), &inputs)?;
            match args.style.width() {
                Some(width) => {
                    let mut wrap = Wrap::new(&mut w, width);
                    diff::write_table(&mut wrap, &report, args.name_width)
                        .and_then(|()| wrap.flush())
                }
                None => diff::write_table(&mut w, &report, args.name_width),
            }
            .with_context(|| "cannot write the report")?;
            w.finish()?;
        }
        Some(DataFormat::Json) => {
            let mut w = out::create(args.output.as_deref(), &inputs)?;
            diff::write_json(&mut w, &report).with_context(|| "cannot write the report")?;
            w.finish()?;
        }
        Some(data) => {
            let mut csv = Vec::new();
            diff::write_csv(&mut csv, &report)?;
            let mut meta = super::report_metadata("diff", "keys", &inputs);
            meta.push(("rprof.by", args.by.name().to_owned()));
            super::write_csv_as(
                &csv,
                data,
                TYPES,
                &meta,
                args.output.as_deref(),
                &inputs,
                |_| false,
            )?;
        }
    }
    if let (Some(limit), Some(reg)) = (args.fail_above, &report.regressions)
        && !reg.is_empty()
    {
        let unassessed = if report.significance.assessable {
            String::new()
        } else {
            format!(
                " (significance {}: the difference alone decided)",
                report.significance.note
            )
        };
        return Err(Regressed(format!(
            "{} key(s) regressed by more than {limit} %{unassessed}; the largest: {}",
            reg.len(),
            reg.first().map_or("", String::as_str).escape_debug()
        ))
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs are read at once up to [`AT_ONCE_BYTES`] of input, a
    /// gzip-compressed file counting ten times its size and standard input
    /// nothing. The files are sparse: their sizes cost no disk.
    #[test]
    fn large_inputs_are_read_one_after_the_other() {
        let dir = tempfile::tempdir().unwrap();
        let sized = |name: &str, len: u64| {
            let p = dir.path().join(name);
            std::fs::File::create(&p).unwrap().set_len(len).unwrap();
            p
        };
        let half = sized("half.sqlite", AT_ONCE_BYTES / 2);
        let over = sized("over.sqlite", AT_ONCE_BYTES / 2 + 1);
        let gz = sized("t.json.GZ", AT_ONCE_BYTES / 20 + 1);
        let stdin = Path::new("-");
        assert!(at_once(&[&half, &half]));
        assert!(!at_once(&[&half, &over]));
        assert!(at_once(&[&over, stdin]));
        assert!(!at_once(&[&half, &gz]));
        assert!(at_once(&[&gz, stdin]));
    }
}
