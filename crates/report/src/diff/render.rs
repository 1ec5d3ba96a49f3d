//! `rprof diff` output: a table for people, CSV (one line per key) and
//! one JSON document.

use std::io::{self, Write};

use super::{DiffReport, DiffRow, RunRow};
use crate::text;

/// Trace text as printable text: control characters as `\u{…}` escapes.
fn printable(s: &str) -> String {
    crate::escape::escape_control(s).into_owned()
}

fn signed(x: i128) -> String {
    if x > 0 {
        format!("+{x}")
    } else {
        x.to_string()
    }
}

fn signed_pct(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() && v > 0.0 => format!("+{v:.2}"),
        Some(v) if v.is_finite() => format!("{v:.2}"),
        _ => "-".to_owned(),
    }
}

fn p_text(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 1e-4 => format!("{p:.1e}"),
        Some(p) => format!("{p:.4}"),
        None => "na".to_owned(),
    }
}

fn sig_text(s: Option<bool>) -> &'static str {
    match s {
        Some(true) => "yes",
        Some(false) => "no",
        None => "na",
    }
}

fn run_value(v: Option<f64>, unit: &str) -> String {
    match (v, unit) {
        (None, _) => "na".to_owned(),
        (Some(x), "%") => format!("{x:.2}"),
        (Some(x), _) => format!("{x:.0}"),
    }
}

fn run_delta(r: &RunRow) -> String {
    match (r.delta, r.unit) {
        (None, _) => "na".to_owned(),
        (Some(x), "%") if x > 0.0 => format!("+{x:.2} pt"),
        (Some(x), "%") => format!("{x:.2} pt"),
        (Some(x), _) if x > 0.0 => format!("+{x:.0}"),
        (Some(x), _) => format!("{x:.0}"),
    }
}

/// Write the report for people: who is compared and how the inputs
/// differ, what significance rests on, the whole-run figures, then the
/// keys by |Δ| with a total line equal to each run's summed kernel time.
/// Keys are clipped to `name_width` characters (0: never).
pub fn write_table<W: Write>(mut w: W, r: &DiffReport, name_width: usize) -> io::Result<()> {
    let side = |s: &super::SideSummary| {
        format!(
            "{} ({} kernels, {} steps, {} ns of kernel time)",
            printable(&s.name),
            s.kernels,
            s.steps.len(),
            s.total_ns
        )
    };
    writeln!(w, "base: {}", side(&r.base))?;
    writeln!(w, "test: {}", side(&r.test))?;
    if r.input_differences.is_empty() {
        let unlisted = if r.base.devices.is_empty() {
            " (neither input lists its GPUs)"
        } else {
            ""
        };
        writeln!(
            w,
            "Inputs: no difference in GPUs{unlisted}, devices used, ranks, processes or step counts."
        )?;
    } else {
        for d in &r.input_differences {
            writeln!(w, "NOTE: the inputs differ: {}.", printable(d))?;
        }
    }
    writeln!(
        w,
        "Steps: ranges matching {:?}. Significance: {}.",
        printable(&r.step_pattern),
        r.significance.note
    )?;
    for (s, what) in [(&r.base, "base"), (&r.test, "test")] {
        if !s.steps.is_empty() && s.kernels_outside_steps > 0 {
            writeln!(
                w,
                "{what}: {} kernels ({} ns) ran outside any step: in the totals, not in the per-step times.",
                s.kernels_outside_steps, s.outside_steps_ns
            )?;
        }
        if s.kernels_past_step_limit > 0 {
            writeln!(
                w,
                "{what}: {} kernels belong to steps past the limit of {} steps and count as outside any step.",
                s.kernels_past_step_limit,
                super::MAX_STEPS
            )?;
        }
        if s.step_ranges_past_limit > 0 {
            writeln!(
                w,
                "{what}: {} step ranges past the limit of {} steps are left out; their kernels count as outside any step.",
                s.step_ranges_past_limit,
                super::MAX_STEPS
            )?;
        }
        if s.timeline.untimed_kernels > 0 {
            writeln!(
                w,
                "{what}: {} kernels without start/end times are left out of the timeline figures.",
                s.timeline.untimed_kernels
            )?;
        }
    }
    writeln!(w)?;
    writeln!(
        w,
        "Whole run (compute / communication / idle: summed over devices; shares of span x devices; communication = NCCL kernels):"
    )?;
    let mut t = text::table(
        &[
            "Figure",
            "Base",
            "Test",
            "Delta",
            "Delta %",
            "p",
            "Significant",
        ],
        &[1, 2, 3, 4, 5],
    );
    for x in &r.run {
        let figure = if x.unit == "%" {
            format!("{} (%)", x.figure)
        } else if x.unit == "ns" {
            format!("{} (ns)", x.figure)
        } else {
            x.figure.to_owned()
        };
        t.add_row(vec![
            figure,
            run_value(x.base, x.unit),
            run_value(x.test, x.unit),
            run_delta(x),
            signed_pct(x.delta_pct),
            p_text(x.p_value),
            sig_text(x.significant).to_owned(),
        ]);
    }
    w.write_all(text::render(&t).as_bytes())?;
    writeln!(w)?;
    let rates = r.rows.iter().any(|x| {
        x.base_tflops.is_some()
            || x.test_tflops.is_some()
            || x.base_gbs.is_some()
            || x.test_gbs.is_some()
    });
    writeln!(
        w,
        "Per {} (--by {}), by |delta|. Delta = test - base; Delta % of the base; share = % of the total difference ({} ns; signed, all keys add up to 100).{}",
        r.key,
        r.by,
        signed(r.totals.delta_ns),
        if rates {
            " TFLOP/s and GB/s over the kernels the op models know."
        } else {
            ""
        }
    )?;
    let mut headers = vec![
        "Key",
        "Status",
        "Count base",
        "Count test",
        "Base (ns)",
        "Test (ns)",
        "Delta (ns)",
        "Delta %",
        "Share (%)",
        "Base mean",
        "Test mean",
    ];
    if rates {
        headers.extend(["Base TFLOP/s", "Test TFLOP/s", "Base GB/s", "Test GB/s"]);
    }
    headers.extend(["p", "Sig"]);
    let right: Vec<usize> = (2..headers.len()).collect();
    let mut t = text::table(&headers, &right);
    let row = |x: &DiffRow| {
        let mut v = vec![
            text::clip(&printable(&x.key), name_width),
            x.status.name().to_owned(),
            x.base_count.to_string(),
            x.test_count.to_string(),
            x.base_total_ns.to_string(),
            x.test_total_ns.to_string(),
            signed(x.delta_ns),
            signed_pct(x.delta_pct),
            text::opt(x.share_of_delta_pct, 1),
            text::opt(x.base_mean_ns, 0),
            text::opt(x.test_mean_ns, 0),
        ];
        if rates {
            v.push(text::opt(x.base_tflops, 3));
            v.push(text::opt(x.test_tflops, 3));
            v.push(text::opt(x.base_gbs, 1));
            v.push(text::opt(x.test_gbs, 1));
        }
        v.push(p_text(x.p_value));
        v.push(sig_text(x.significant).to_owned());
        v
    };
    for x in &r.rows {
        t.add_row(row(x));
    }
    let blank = |n: usize| vec![String::new(); n];
    if r.hidden.keys > 0 {
        let mut v = vec![
            format!("({} more keys; --top 0 shows all)", r.hidden.keys),
            String::new(),
            String::new(),
            String::new(),
            r.hidden.base_total_ns.to_string(),
            r.hidden.test_total_ns.to_string(),
            signed(r.hidden.test_total_ns - r.hidden.base_total_ns),
        ];
        v.extend(blank(headers.len() - v.len()));
        t.add_row(v);
    }
    let tot = &r.totals;
    let mut v = vec![
        format!(
            "Total ({} in both, {} added, {} removed)",
            tot.keys_both, tot.keys_added, tot.keys_removed
        ),
        String::new(),
        r.base.kernels.to_string(),
        r.test.kernels.to_string(),
        tot.base_total_ns.to_string(),
        tot.test_total_ns.to_string(),
        signed(tot.delta_ns),
        signed_pct(tot.delta_pct),
        if tot.delta_ns != 0 {
            "100.0".to_owned()
        } else {
            "-".to_owned()
        },
    ];
    v.extend(blank(headers.len() - v.len()));
    t.add_row(v);
    w.write_all(text::render(&t).as_bytes())?;
    if let Some(reg) = &r.regressions {
        if reg.is_empty() {
            writeln!(w, "No key regressed beyond the --fail-above threshold.")?;
        } else {
            writeln!(
                w,
                "{} key(s) regressed beyond the --fail-above threshold: {}",
                reg.len(),
                reg.iter()
                    .map(|k| printable(k))
                    .collect::<Vec<_>>()
                    .join("; ")
            )?;
        }
    }
    Ok(())
}

/// CSV column names, in order.
pub const CSV_HEADER: [&str; 19] = [
    "key",
    "status",
    "base_count",
    "test_count",
    "base_total_ns",
    "test_total_ns",
    "base_mean_ns",
    "test_mean_ns",
    "delta_ns",
    "delta_pct",
    "share_of_delta_pct",
    "base_tflops",
    "test_tflops",
    "base_gbs",
    "test_gbs",
    "base_step_ns",
    "test_step_ns",
    "p_value",
    "significant",
];

/// Write one line per key (unknown values: empty fields; per-step times
/// joined by `;`). Keys `--top` left out are not written.
pub fn write_csv<W: Write>(w: W, r: &DiffReport) -> io::Result<()> {
    let mut c = csv::Writer::from_writer(w);
    c.write_record(CSV_HEADER)?;
    let o = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    let steps = |v: &[i128]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(";")
    };
    for x in &r.rows {
        c.write_record([
            x.key.clone(),
            x.status.name().to_owned(),
            x.base_count.to_string(),
            x.test_count.to_string(),
            x.base_total_ns.to_string(),
            x.test_total_ns.to_string(),
            o(x.base_mean_ns),
            o(x.test_mean_ns),
            x.delta_ns.to_string(),
            o(x.delta_pct),
            o(x.share_of_delta_pct),
            o(x.base_tflops),
            o(x.test_tflops),
            o(x.base_gbs),
            o(x.test_gbs),
            steps(&x.base_step_ns),
            steps(&x.test_step_ns),
            o(x.p_value),
            x.significant.map(|s| s.to_string()).unwrap_or_default(),
        ])?;
    }
    c.flush()
}

/// Write the whole report as one JSON document (and a newline).
pub fn write_json<W: Write>(mut w: W, r: &DiffReport) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut w, r).map_err(io::Error::other)?;
    w.write_all(b"\n")
}
