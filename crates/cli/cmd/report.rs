//! `rprof report`: one self-contained HTML page with charts, or the charts
//! alone as SVG files.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rprof_report::html::{self, PageBuilder};
use rprof_report::model::{self, Models};
use rprof_trace::build::{self, BuildOptions};
use rprof_trace::read::{self, ReadOptions};

use crate::out::UsageError;

/// One self-contained HTML report: overview, utilization over time, top ops
/// and kernels, roofline, copies, recommendations.
///
/// The page has no external scripts, styles, fonts or images and opens
/// offline in any browser; its charts are inline SVG. Every figure says what
/// it is a share of (see docs/reports.md, "report"). With `--svg DIR` the
/// charts are also written as SVG files, for slides and papers.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ReportArgs {
    /// Write the page to FILE (required unless --svg is given; `-`: stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also write every chart as an SVG file into DIR.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,

    /// No parse summary on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// A profile: nsys or nvprof SQLite, or a PyTorch-profiler trace.
    pub file: PathBuf,
}

const AFTER_HELP: &str = "\
Examples:
  rprof report net.sqlite -o report.html
  rprof report trace.pt.trace.json.gz -o report.html
  rprof report net.sqlite --svg plots/";

pub fn run(args: &ReportArgs) -> anyhow::Result<()> {
    if args.output.is_none() && args.svg.is_none() {
        return Err(UsageError("give -o FILE (the page) or --svg DIR (the charts)".into()).into());
    }
    if let Some(o) = &args.output
        && o.as_os_str() != "-"
        && same_file(o, &args.file)
    {
        return Err(UsageError(format!(
            "-o {}: that is the input; refusing to overwrite it",
            o.display()
        ))
        .into());
    }
    let mut trace = read::read(
        &args.file,
        ReadOptions {
            compat: false,
            ..ReadOptions::everything()
        },
    )?;
    // attribution needs only the ranges of launching threads; the page's
    // other figures read the trace's own tables
    let enclosing = rprof_trace::attribute::attribute(&trace.launches, &mut trace.ranges);
    let mut builder = PageBuilder::new(trace.devices.clone());
    let mut models = Models::new();
    let stats = build::build(&trace, &enclosing, BuildOptions { compat: false }, |recs| {
        let resolved = models.resolve(recs);
        let est = model::estimate(recs, &resolved);
        builder.add(recs, &est);
        Ok(())
    })?;
    if !args.quiet {
        eprintln!(
            "rprof: {}: {} kernels, {} records, {} copies and sets, {} API calls",
            trace.path.display(),
            trace.kernels.len(),
            stats.records,
            trace.memops.len(),
            trace.api_calls.len()
        );
    }
    let command = format!("rprof report {}", args.file.display());
    let page = builder.finish(&trace, &command);
    if let Some(dir) = &args.svg {
        let written = html::write_svgs(dir, &page)
            .with_context(|| format!("cannot write the charts into {}", dir.display()))?;
        if !args.quiet {
            eprintln!(
                "rprof: {} charts written to {}",
                written.len(),
                dir.display()
            );
        }
    }
    if let Some(o) = &args.output {
        if o.as_os_str() == "-" {
            let mut w = crate::out::writer(None)?;
            html::write_html(&mut w, &page)?;
            w.flush()?;
        } else {
            write_atomically(o, |w| html::write_html(w, &page))
                .with_context(|| format!("cannot write {}", o.display()))?;
        }
    }
    Ok(())
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Write to a temporary file beside `path`, then rename: never a partial
/// page under the final name.
fn write_atomically(
    path: &std::path::Path,
    f: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{}.rprof-tmp-{}",
        name.unwrap_or_else(|| "out".into()),
        std::process::id()
    ));
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::new(file);
        f(&mut w)?;
        w.flush()?;
        w.get_ref().sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
