//! One module per subcommand.

pub mod diff;
pub mod dist;
pub mod export;
pub mod gpu;
pub mod hostview;
pub mod idle;
pub mod launch;
pub mod mem;
pub mod parse;
pub mod prof;
pub mod report;
pub mod shell;
pub mod stats;
pub mod steps;
pub mod summary;

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::Context;
use rprof_report::ColumnType;
use rprof_report::{DataFormat, DataTable};

use crate::out;

/// Write one data table to `-o FILE` or standard output. Parquet to a
/// terminal is refused (it is binary).
pub fn write_data(
    table: &DataTable,
    format: DataFormat,
    types: &[(&str, ColumnType)],
    metadata: &[(&str, String)],
    output: Option<&Path>,
    inputs: &[&Path],
) -> anyhow::Result<()> {
    let to_file = output.filter(|p| *p != Path::new("-"));
    let name = to_file.map_or("<stdout>".to_owned(), |p| p.display().to_string());
    match (format, to_file) {
        (DataFormat::Parquet, None) if std::io::stdout().is_terminal() => Err(out::UsageError(
            "--format parquet writes binary data: give -o FILE or redirect standard output".into(),
        )
        .into()),
        (DataFormat::Parquet, Some(p)) => {
            // a temporary file beside FILE, renamed when complete
            let f = out::create(Some(p), inputs)?;
            let f = table
                .write(f, format, types, metadata)
                .with_context(|| format!("writing {name}"))?;
            f.finish()
        }
        (DataFormat::Parquet, None) => {
            let mut w = table.write(
                std::io::BufWriter::new(std::io::stdout()),
                format,
                types,
                metadata,
            )?;
            w.flush()?;
            Ok(())
        }
        _ => {
            let mut w = out::create(output, inputs)?;
            let mut buf = table.write(Vec::new(), format, types, metadata)?;
            w.write_all(&buf)?;
            buf.clear();
            w.finish()
        }
    }
}

/// Write a report's CSV (`csv`, as its CSV writer made it) in `format`:
/// CSV as it is, TSV and Parquet through [`DataTable`] (`types` fixes the
/// columns whose type must not depend on the values; `skip_row` leaves
/// rows out of TSV and Parquet, such as a CSV's summary line). JSON is each
/// command's own document, not written here.
pub fn write_csv_as(
    csv: &[u8],
    format: DataFormat,
    types: &[(&str, ColumnType)],
    metadata: &[(&str, String)],
    output: Option<&Path>,
    inputs: &[&Path],
    skip_row: impl Fn(&[String]) -> bool,
) -> anyhow::Result<()> {
    if format == DataFormat::Csv {
        let mut w = out::create(output, inputs)?;
        w.write_all(csv)?;
        return w.finish();
    }
    let mut table = DataTable::from_csv("table", csv)?;
    table.rows.retain(|r| !skip_row(r));
    write_data(&table, format, types, metadata, output, inputs)
}

/// The metadata every report's Parquet file carries: the report, its table
/// and its inputs.
pub fn report_metadata(report: &str, table: &str, inputs: &[&Path]) -> Vec<(&'static str, String)> {
    vec![
        ("rprof.report", report.to_owned()),
        ("rprof.table", table.to_owned()),
        (
            "rprof.inputs",
            inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    ]
}

/// Give the memory the allocator kept of what was freed back to the system
/// (glibc keeps the freed pages of its arenas, and a thread's arena does not
/// reuse another's: after the first of two 3 M-kernel profiles, `diff` kept
/// 0.18 GB more resident while the second was read).
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and only returns free pages of
    // the allocator's own arenas; any thread may call it at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Have the allocator map blocks of 16 MiB and more on their own, so
/// that freeing one returns it to the system. glibc raises its threshold
/// for that to the largest mapped block freed so far (up to 32 MiB), after
/// which such blocks come from the heaps of the threads that made them,
/// where they stay resident once freed; a command whose phases run on
/// different threads then holds each phase's freed scratch at its peak.
/// (`report` at 3 M kernels: 65 MB less at the peak, the same CPU time
/// over 3 paired runs; at 4 MiB it was 0.1 GB less, but every chunk's
/// buffers were then mapped afresh, page by page.)
pub fn map_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt takes no pointer and changes a setting of the
    // allocator, which glibc reads under its own lock
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 16 << 20);
    }
}
