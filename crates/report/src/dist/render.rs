//! `rprof dist` output: a table, CSV (one table at a time), JSON.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::job::{CollRow, DistReport, RankRow, StepRow};
use super::summary::Breakdown;
use crate::text;

/// Control characters of trace text escaped (`\x1b`, as every table does), the rest as is.
pub fn esc(s: &str) -> String {
    crate::escape::escape_control(s).into_owned()
}

fn share(part: i64, whole: i64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn opt_ms(x: Option<i64>) -> String {
    x.map_or_else(|| "na".to_owned(), text::ms)
}

fn file_name(p: &std::path::Path) -> String {
    esc(&p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    ))
}

fn na(s: String) -> String {
    if s == "-" { "na".to_owned() } else { s }
}

fn bytes_str(b: Option<i64>) -> String {
    match b {
        None => "na".to_owned(),
        Some(b) if b < 1000 => format!("{b} B"),
        Some(b) => text::si(b as f64) + "B",
    }
}

/// The human-readable report.
pub fn write_table<W: Write>(mut w: W, r: &DistReport) -> io::Result<()> {
    let nfiles = r.files.len();
    writeln!(
        w,
        "rprof dist: {} rank{} from {} file{}",
        r.ranks.len(),
        if r.ranks.len() == 1 { "" } else { "s" },
        nfiles,
        if nfiles == 1 { "" } else { "s" }
    )?;
    match (&r.clock.method, &r.clock.reason) {
        (Some(m), _) => {
            write!(w, "clocks: aligned on {m}")?;
            match (r.clock.max_skew_ns, r.clock.reference_rank) {
                (Some(s), Some(rr)) => writeln!(
                    w,
                    "; estimated skew at most {} ms (median difference of matched collective end times against rank {rr})",
                    text::ms(s)
                )?,
                _ => writeln!(w, "; skew: na (no matched collectives)")?,
            }
        }
        (None, Some(why)) => writeln!(w, "clocks: not aligned: {}", esc(why))?,
        (None, None) => writeln!(w, "clocks: not aligned")?,
    }
    writeln!(w)?;
    writeln!(
        w,
        "Per rank (% of the rank's span: first kernel start to last kernel end on its GPU)"
    )?;
    let mut t = text::table(
        &[
            "rank",
            "file",
            "pid",
            "dev",
            "kernels",
            "comm k",
            "span ms",
            "busy %",
            "compute %",
            "comm %",
            "overlap %",
            "idle %",
            "transfer ms",
            "wait ms",
        ],
        &[0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
    );
    for x in &r.ranks {
        let a = &x.all;
        let sp = a.span_ns();
        let p = |v: i64| na(text::pct(share(v, sp), 1));
        if x.device.is_none() {
            t.add_row(vec![
                x.rank.to_string(),
                file_name(&x.file),
                "-".into(),
                "-".into(),
                "0".into(),
                "0".into(),
                "no kernels".into(),
            ]);
            continue;
        }
        t.add_row(vec![
            x.rank.to_string(),
            file_name(&x.file),
            x.pid.map_or_else(|| "-".to_owned(), |p| p.to_string()),
            x.device.map_or_else(|| "-".to_owned(), |d| d.to_string()),
            a.kernels.to_string(),
            a.comm_kernels.to_string(),
            text::ms(sp),
            p(a.busy_ns),
            p(a.compute_ns),
            p(a.comm_ns),
            p(a.overlap_ns),
            p(a.idle_ns()),
            opt_ms(x.comm_transfer_ns),
            opt_ms(x.comm_wait_ns),
        ]);
    }
    w.write_all(text::render(&t).as_bytes())?;
    writeln!(w)?;
    writeln!(
        w,
        "TensorBoard plugin and HTA figures (% of the rank's span; comm-comp overlap is % of communication time)"
    )?;
    let mut t = text::table(
        &[
            "rank",
            "computation",
            "communication",
            "overlap",
            "other",
            "hta idle",
            "hta compute",
            "hta non-compute",
            "comm-comp overlap",
        ],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8],
    );
    for x in r.ranks.iter().filter(|x| x.device.is_some()) {
        let a = &x.all;
        let sp = a.span_ns();
        let p = |v: i64| na(text::pct(share(v, sp), 1));
        t.add_row(vec![
            x.rank.to_string(),
            p(a.compute_ns - a.overlap_ns),
            p(a.comm_ns - a.overlap_ns),
            p(a.overlap_ns),
            p(a.idle_ns()),
            p(a.idle_ns()),
            p(a.compute_ns),
            p(a.busy_ns - a.compute_ns),
            na(text::pct(share(a.overlap_ns, a.comm_ns), 1)),
        ]);
    }
    w.write_all(text::render(&t).as_bytes())?;

    writeln!(w)?;
    if r.collectives.is_empty() {
        writeln!(w, "Collectives: no communication kernels")?;
    } else {
        writeln!(
            w,
            "Collectives (bandwidths in GB/s = 1e9 B/s, nccl-tests' definitions; time: transfer when matched, else kernel duration)"
        )?;
        let mut t = text::table(
            &[
                "op",
                "bytes/call",
                "ranks in group",
                "calls",
                "ranks",
                "total ms",
                "mean ms",
                "transfer ms",
                "algbw",
                "busbw",
                "rank min ms",
                "rank max ms",
                "max rank",
            ],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        );
        for c in &r.collectives {
            t.add_row(vec![
                c.op.as_str().to_owned(),
                bytes_str(c.bytes),
                c.group_size
                    .map_or_else(|| "na".to_owned(), |n| n.to_string()),
                c.calls.to_string(),
                c.ranks.to_string(),
                text::ms(c.total_ns),
                text::ms(c.mean_ns.round() as i64),
                c.transfer_mean_ns
                    .map_or_else(|| "na".to_owned(), |v| text::ms(v.round() as i64)),
                na(text::opt(c.algbw_gbps, 2)),
                na(text::opt(c.busbw_gbps, 2)),
                text::ms(c.rank_min_ns),
                text::ms(c.rank_max_ns),
                c.rank_max.to_string(),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())?;
    }

    writeln!(w)?;
    writeln!(
        w,
        "Stragglers (arrival = start of a rank's collective kernel on its GPU)"
    )?;
    let s = &r.stragglers;
    match &s.reason {
        Some(why) => writeln!(w, "  lateness: na: {}", esc(why))?,
        None => {
            writeln!(
                w,
                "  {} matched collectives, {} with one rank arriving last",
                s.matched, s.with_last
            )?;
            if let Some((rank, n, late)) = s.most_last {
                writeln!(
                    w,
                    "  rank {rank} arrived last most often: {n} times, {} ms later than the first rank in all",
                    text::ms(late)
                )?;
            }
            if s.stragglers.is_empty() {
                writeln!(
                    w,
                    "  no rank is a straggler (none is last at more than half of them)"
                )?;
            }
            for rank in &s.stragglers {
                writeln!(
                    w,
                    "  rank {rank} is a straggler: it arrives last at more than half of the matched collectives"
                )?;
            }
        }
    }
    if let Some((rank, c)) = s.most_compute {
        writeln!(w, "  most compute time: rank {rank}, {} ms", text::ms(c))?;
    }

    if !r.step_spread.is_empty() {
        writeln!(w)?;
        writeln!(
            w,
            "Step time across ranks (CPU duration of the step range, ms)"
        )?;
        let mut t = text::table(
            &["step", "ranks", "min", "max", "spread", "slowest rank"],
            &[1, 2, 3, 4, 5],
        );
        for s in &r.step_spread {
            t.add_row(vec![
                esc(&s.step),
                s.ranks.to_string(),
                text::ms(s.min_ns),
                text::ms(s.max_ns),
                text::ms(s.max_ns - s.min_ns),
                s.slowest_rank.to_string(),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())?;
        writeln!(w)?;
        writeln!(
            w,
            "Per step (kernels launched in the step; % of the step's GPU span)"
        )?;
        let mut t = text::table(
            &[
                "step",
                "rank",
                "cpu ms",
                "kernels",
                "gpu span",
                "busy %",
                "compute %",
                "comm %",
                "overlap %",
                "idle %",
            ],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        );
        for s in &r.steps {
            let g = &s.gpu;
            let sp = g.span_ns();
            let p = |v: i64| na(text::pct(share(v, sp), 1));
            t.add_row(vec![
                esc(&s.step),
                s.rank.to_string(),
                text::ms(s.cpu_ns),
                g.kernels.to_string(),
                text::ms(sp),
                p(g.busy_ns),
                p(g.compute_ns),
                p(g.comm_ns),
                p(g.overlap_ns),
                p(g.idle_ns()),
            ]);
        }
        w.write_all(text::render(&t).as_bytes())?;
    }
    if !r.notes.is_empty() {
        writeln!(w)?;
        for n in &r.notes {
            writeln!(w, "note: {}", esc(n))?;
        }
    }
    Ok(())
}

fn pct_json(part: i64, whole: i64) -> Value {
    share(part, whole).map_or(Value::Null, |v| json!(v * 100.0))
}

fn breakdown_json(b: &Breakdown) -> serde_json::Map<String, Value> {
    let sp = b.span_ns();
    let mut m = serde_json::Map::new();
    m.insert("kernels".into(), json!(b.kernels));
    m.insert("comm_kernels".into(), json!(b.comm_kernels));
    m.insert("start_ns".into(), json!(b.span.map(|s| s.0)));
    m.insert("span_ns".into(), json!(sp));
    m.insert("busy_ns".into(), json!(b.busy_ns));
    m.insert("compute_ns".into(), json!(b.compute_ns));
    m.insert("comm_ns".into(), json!(b.comm_ns));
    m.insert("overlap_ns".into(), json!(b.overlap_ns));
    m.insert("idle_ns".into(), json!(b.idle_ns()));
    m.insert("busy_pct".into(), pct_json(b.busy_ns, sp));
    m.insert("compute_pct".into(), pct_json(b.compute_ns, sp));
    m.insert("comm_pct".into(), pct_json(b.comm_ns, sp));
    m.insert("overlap_pct".into(), pct_json(b.overlap_ns, sp));
    m.insert("idle_pct".into(), pct_json(b.idle_ns(), sp));
    m
}

fn rank_json(x: &RankRow) -> Value {
    let a = &x.all;
    let sp = a.span_ns();
    let mut m = breakdown_json(a);
    m.insert("rank".into(), json!(x.rank));
    m.insert("rank_from".into(), json!(x.rank_from));
    m.insert("file".into(), json!(x.file.display().to_string()));
    m.insert("source".into(), json!(x.source.as_str()));
    m.insert("pid".into(), json!(x.pid));
    m.insert("device".into(), json!(x.device));
    m.insert(
        "tb_computation_ns".into(),
        json!(a.compute_ns - a.overlap_ns),
    );
    m.insert(
        "tb_communication_ns".into(),
        json!(a.comm_ns - a.overlap_ns),
    );
    m.insert("tb_overlap_ns".into(), json!(a.overlap_ns));
    m.insert("tb_other_ns".into(), json!(a.idle_ns()));
    m.insert("hta_idle_pct".into(), pct_json(a.idle_ns(), sp));
    m.insert("hta_compute_pct".into(), pct_json(a.compute_ns, sp));
    m.insert(
        "hta_non_compute_pct".into(),
        pct_json(a.busy_ns - a.compute_ns, sp),
    );
    m.insert(
        "hta_comm_comp_overlap_pct".into(),
        pct_json(a.overlap_ns, a.comm_ns),
    );
    m.insert("comm_transfer_ns".into(), json!(x.comm_transfer_ns));
    m.insert("comm_wait_ns".into(), json!(x.comm_wait_ns));
    m.insert("times_last".into(), json!(x.times_last));
    m.insert("lateness_ns".into(), json!(x.lateness_ns));
    m.insert("clock_skew_ns".into(), json!(x.clock_skew_ns));
    m.insert("kernels_outside_steps".into(), json!(x.outside_steps));
    m.insert("note".into(), json!(x.note));
    Value::Object(m)
}

fn coll_json(c: &CollRow) -> Value {
    json!({
        "op": c.op.as_str(),
        "bytes_per_call": c.bytes,
        "group_size": c.group_size,
        "calls": c.calls,
        "ranks": c.ranks,
        "total_ns": c.total_ns,
        "mean_ns": c.mean_ns,
        "transfer_mean_ns": c.transfer_mean_ns,
        "bw_time": c.bw_time,
        "algbw_gbps": c.algbw_gbps,
        "busbw_gbps": c.busbw_gbps,
        "rank_min_ns": c.rank_min_ns,
        "rank_max_ns": c.rank_max_ns,
        "rank_max": c.rank_max,
    })
}

fn step_json(s: &StepRow) -> Value {
    let mut m = breakdown_json(&s.gpu);
    m.insert("step".into(), json!(s.step));
    m.insert("rank".into(), json!(s.rank));
    m.insert("cpu_ns".into(), json!(s.cpu_ns));
    Value::Object(m)
}

/// The whole report as one JSON document.
pub fn to_json(r: &DistReport) -> Value {
    let s = &r.stragglers;
    json!({
        "files": r.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "ranks": r.ranks.iter().map(rank_json).collect::<Vec<_>>(),
        "collectives": r.collectives.iter().map(coll_json).collect::<Vec<_>>(),
        "steps": r.steps.iter().map(step_json).collect::<Vec<_>>(),
        "step_spread": r.step_spread.iter().map(|x| json!({
            "step": x.step, "ranks": x.ranks, "min_ns": x.min_ns, "max_ns": x.max_ns,
            "spread_ns": x.max_ns - x.min_ns, "slowest_rank": x.slowest_rank,
        })).collect::<Vec<_>>(),
        "clock": {
            "aligned": r.clock.method.is_some(),
            "method": r.clock.method,
            "reason": r.clock.reason,
            "max_skew_ns": r.clock.max_skew_ns,
            "reference_rank": r.clock.reference_rank,
        },
        "stragglers": {
            "matched_collectives": s.matched,
            "with_last_rank": s.with_last,
            "most_last": s.most_last.map(|(r, n, l)| json!({"rank": r, "times": n, "lateness_ns": l})),
            "most_compute": s.most_compute.map(|(r, c)| json!({"rank": r, "compute_ns": c})),
            "stragglers": s.stragglers,
            "reason": s.reason,
        },
        "notes": r.notes,
    })
}

/// JSON output.
pub fn write_json<W: Write>(mut w: W, r: &DistReport) -> io::Result<()> {
    // to a string first, so that a closed pipe stays an io::Error of its kind
    let text = serde_json::to_string_pretty(&to_json(r)).map_err(io::Error::other)?;
    w.write_all(text.as_bytes())?;
    writeln!(w)
}

/// Which table `--csv` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsvTable {
    /// One row per rank.
    Ranks,
    /// The collective table.
    Collectives,
    /// One row per (step, rank).
    Steps,
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// CSV output: the rows of one table with the JSON objects' keys as
/// headers (in the JSON schema's order); null is an empty field.
pub fn write_csv<W: Write>(w: W, r: &DistReport, table: CsvTable) -> io::Result<()> {
    let (cols, rows): (&[&str], Vec<Value>) = match table {
        CsvTable::Ranks => (
            &[
                "rank",
                "rank_from",
                "file",
                "source",
                "pid",
                "device",
                "kernels",
                "comm_kernels",
                "start_ns",
                "span_ns",
                "busy_ns",
                "compute_ns",
                "comm_ns",
                "overlap_ns",
                "idle_ns",
                "busy_pct",
                "compute_pct",
                "comm_pct",
                "overlap_pct",
                "idle_pct",
                "tb_computation_ns",
                "tb_communication_ns",
                "tb_overlap_ns",
                "tb_other_ns",
                "hta_idle_pct",
                "hta_compute_pct",
                "hta_non_compute_pct",
                "hta_comm_comp_overlap_pct",
                "comm_transfer_ns",
                "comm_wait_ns",
                "times_last",
                "lateness_ns",
                "clock_skew_ns",
                "kernels_outside_steps",
                "note",
            ],
            r.ranks.iter().map(rank_json).collect(),
        ),
        CsvTable::Collectives => (
            &[
                "op",
                "bytes_per_call",
                "group_size",
                "calls",
                "ranks",
                "total_ns",
                "mean_ns",
                "transfer_mean_ns",
                "bw_time",
                "algbw_gbps",
                "busbw_gbps",
                "rank_min_ns",
                "rank_max_ns",
                "rank_max",
            ],
            r.collectives.iter().map(coll_json).collect(),
        ),
        CsvTable::Steps => (
            &[
                "step",
                "rank",
                "cpu_ns",
                "kernels",
                "comm_kernels",
                "start_ns",
                "span_ns",
                "busy_ns",
                "compute_ns",
                "comm_ns",
                "overlap_ns",
                "idle_ns",
                "busy_pct",
                "compute_pct",
                "comm_pct",
                "overlap_pct",
                "idle_pct",
            ],
            r.steps.iter().map(step_json).collect(),
        ),
    };
    let mut c = csv::Writer::from_writer(w);
    c.write_record(cols).map_err(csv_err)?;
    for row in &rows {
        let rec: Vec<String> = cols.iter().map(|k| cell(&row[*k])).collect();
        c.write_record(&rec).map_err(csv_err)?;
    }
    c.flush()
}

fn csv_err(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}
