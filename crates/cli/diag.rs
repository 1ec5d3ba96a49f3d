//! What reading a profile found, on standard error, in one wording for
//! every command: a headline of the tables read, then one line per kind of
//! row that was skipped or doubtful, then the reader's notes. `parse`,
//! `prof`, `summary`, `gpu` and `diff` add their record counts to the
//! headline ([`crate::input::parse_summary`]); the views that read the
//! trace itself (`steps`, `idle`, `launch`, `mem`, `dist`, `report`) use
//! [`trace_headline`]. Every line starts `rprof: FILE:`; trace text is
//! escaped.

use std::io::Write;

use rprof_trace::model::{Source, Trace};

use crate::input::spool;

/// The file as the user named it (a spooled pipe keeps its own name).
pub fn name(trace: &Trace) -> String {
    rprof_report::escape::escape_control(&spool::name(&trace.path)).into_owned()
}

/// The headline of a view: what was read, table by table (tables that
/// were not asked for or are empty are left out), and the kernels without
/// a launch call.
pub fn trace_headline(trace: &Trace) -> String {
    let mut parts = vec![format!("{} kernels", trace.kernel_count())];
    // only the blocking calls kept: say of how many
    let dropped = trace.stats.api_calls_dropped;
    let calls = match dropped {
        0 => "API calls".to_owned(),
        _ => format!(
            "of {} API calls (those that block the host)",
            trace.api_call_count() as u64 + dropped
        ),
    };
    for (n, what, read) in [
        (trace.memops.len(), "copies and sets", false),
        (trace.api_call_count(), calls.as_str(), dropped > 0),
        (trace.ranges.len(), "ranges", false),
        (trace.mem_events.len(), "memory events", false),
        (trace.syncs.len(), "synchronisation records", false),
    ] {
        // (a table read but left empty by a choice is still said)
        if n > 0 || read {
            parts.push(format!("{n} {what}"));
        }
    }
    if trace.stats.without_launch > 0 {
        parts.push(format!(
            "{} kernels without a launch call",
            trace.stats.without_launch
        ));
    }
    format!("rprof: {}: {}", name(trace), parts.join(", "))
}

/// The lines after the headline: skipped and doubtful rows, each counted
/// with its reason, and the reader's notes.
pub fn detail_lines(trace: &Trace) -> Vec<String> {
    detail_lines_of(trace, true)
}

/// [`detail_lines`] of a profile read with its ranges (`ranges_read`) or
/// without them (then no NVTX row was counted either).
pub fn detail_lines_of(trace: &Trace, ranges_read: bool) -> Vec<String> {
    let path = name(trace);
    let s = &trace.stats;
    let mut out = Vec::new();
    if s.skipped_null > 0 {
        out.push(format!(
            "rprof: {path}: skipped {} kernel rows with {}",
            s.skipped_null,
            if trace.source == Source::Kineto {
                "a missing or mistyped name or time"
            } else {
                "NULL start or end"
            }
        ));
    }
    if s.non_positive_duration > 0 {
        out.push(format!(
            "rprof: {path}: {} kernels end no later than they start (kept with duration 0, \"badTime\": true)",
            s.non_positive_duration
        ));
    }
    if s.ranges_skipped > 0 {
        out.push(format!(
            "rprof: {path}: skipped {} NVTX rows without start, thread or text",
            s.ranges_skipped
        ));
    }
    if s.mem_events_skipped > 0 {
        out.push(format!(
            "rprof: {path}: skipped {} memory events with missing or mistyped fields",
            s.mem_events_skipped
        ));
    }
    if s.kernel_rows == 0 && ranges_read {
        out.push(format!(
            "rprof: {path}: note: no GPU kernels in this profile ({} NVTX rows): was CUDA traced?",
            s.nvtx_rows
        ));
    } else if s.kernel_rows == 0 {
        out.push(format!(
            "rprof: {path}: note: no GPU kernels in this profile: was CUDA traced?"
        ));
    }
    for note in &trace.notes {
        out.push(format!(
            "rprof: {path}: note: {}",
            rprof_report::escape::escape_control(note)
        ));
    }
    out
}

/// The headline of a view and its detail lines.
pub fn trace_summary(trace: &Trace) -> Vec<String> {
    let mut out = vec![trace_headline(trace)];
    out.extend(detail_lines(trace));
    out
}

/// Print lines on standard error (a closed stderr is not an error).
pub fn print(lines: &[String]) {
    let mut e = std::io::stderr().lock();
    for l in lines {
        let _ = writeln!(e, "{l}");
    }
}
