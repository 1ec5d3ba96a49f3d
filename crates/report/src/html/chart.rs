//! Charts as inline SVG, drawn with plotters' SVG backend (no fonts are
//! loaded: the browser renders the text).
//!
//! Every chart is plain data ([`Chart`]) rendered by [`render_svg`]; the
//! palette ([`PALETTE`]) steps in lightness so that series stay apart when
//! printed in greyscale (a unit test checks it).

use plotters::coord::Shift;
use plotters::prelude::*;

/// Chart width, px: readable on a 1400-px-wide page.
pub const WIDTH: u32 = 1280;

/// Series colours, ordered so that neighbours differ in lightness.
pub const PALETTE: &[(u8, u8, u8)] = &[
    (8, 48, 107),    // dark blue
    (230, 159, 0),   // orange
    (215, 48, 39),   // red
    (166, 219, 160), // light green
    (117, 107, 177), // purple
    (254, 224, 144), // pale yellow
    (77, 77, 77),    // grey
    (146, 197, 222), // light blue
];

/// A colour of the palette.
pub fn color(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// One line of a line chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points (x, y), x ascending.
    pub points: Vec<(f64, f64)>,
}

/// One bar of a bar chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// Label (drawn inside the plot, left of the bar).
    pub label: String,
    /// Length.
    pub value: f64,
    /// Extra text after the bar (e.g. TFLOP/s).
    pub note: String,
}

/// One point of a roofline.
#[derive(Clone, Debug, PartialEq)]
pub struct RoofPoint {
    /// Label.
    pub label: String,
    /// Arithmetic intensity, FLOP/byte.
    pub intensity: f64,
    /// Achieved TFLOP/s.
    pub tflops: f64,
}

/// A chart, as data.
#[derive(Clone, Debug, PartialEq)]
pub enum Chart {
    /// Lines over a numeric x axis.
    Lines {
        /// File-name-safe id.
        id: String,
        /// Title.
        title: String,
        /// x-axis label with unit.
        x_label: String,
        /// y-axis label with unit.
        y_label: String,
        /// Upper end of the y axis (`None`: from the data).
        y_max: Option<f64>,
        /// The lines.
        series: Vec<Series>,
    },
    /// Horizontal bars, largest first.
    Bars {
        /// File-name-safe id.
        id: String,
        /// Title.
        title: String,
        /// Value-axis label with unit.
        x_label: String,
        /// The bars, top to bottom.
        bars: Vec<Bar>,
    },
    /// Vertical stacked bars: one bar per category, one segment per series.
    Stacked {
        /// File-name-safe id.
        id: String,
        /// Title.
        title: String,
        /// y-axis label with unit.
        y_label: String,
        /// Bar labels.
        categories: Vec<String>,
        /// Segments: (name, one value per category).
        series: Vec<(String, Vec<f64>)>,
    },
    /// Roofline: log-log intensity against throughput, with the device's
    /// memory and compute roofs.
    Roofline {
        /// File-name-safe id.
        id: String,
        /// Title.
        title: String,
        /// Peak compute, TFLOP/s.
        peak_tflops: f64,
        /// Memory bandwidth, GB/s.
        bandwidth_gbs: f64,
        /// Points.
        points: Vec<RoofPoint>,
    },
}

impl Chart {
    /// The chart's id.
    pub fn id(&self) -> &str {
        match self {
            Chart::Lines { id, .. }
            | Chart::Bars { id, .. }
            | Chart::Stacked { id, .. }
            | Chart::Roofline { id, .. } => id,
        }
    }

    /// The chart's title.
    pub fn title(&self) -> &str {
        match self {
            Chart::Lines { title, .. }
            | Chart::Bars { title, .. }
            | Chart::Stacked { title, .. }
            | Chart::Roofline { title, .. } => title,
        }
    }
}

/// Text from a trace, made safe for SVG: control characters become visible
/// escapes (XML forbids most of them), long labels are clipped.
pub fn label(s: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n >= max_chars {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Room right of a stacked chart's plot for its legend, and the longest
/// series name shown there.
const LEGEND_PX: u32 = 200;
const LEGEND_CHARS: usize = 22;

/// Width of a character of a bar label (13 px sans-serif), generously
/// rounded up so that a clipped label fits.
const LABEL_CHAR_PX: f64 = 7.5;

type DrawResult = Result<(), String>;

fn e<T: std::fmt::Display>(x: T) -> String {
    x.to_string()
}

/// Render one chart to an SVG document.
pub fn render_svg(chart: &Chart) -> Result<String, String> {
    let height = match chart {
        Chart::Bars { bars, .. } => 80 + 26 * bars.len().max(1) as u32,
        _ => 420,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        match chart {
            Chart::Lines {
                title,
                x_label,
                y_label,
                y_max,
                series,
                ..
            } => lines(&root, title, x_label, y_label, *y_max, series)?,
            Chart::Bars {
                title,
                x_label,
                bars: b,
                ..
            } => bars(&root, title, x_label, b)?,
            Chart::Stacked {
                title,
                y_label,
                categories,
                series,
                ..
            } => stacked(&root, title, y_label, categories, series)?,
            Chart::Roofline {
                title,
                peak_tflops,
                bandwidth_gbs,
                points,
                ..
            } => roofline(&root, title, *peak_tflops, *bandwidth_gbs, points)?,
        }
        root.present().map_err(e)?;
    }
    Ok(svg)
}

fn finite_max(it: impl Iterator<Item = f64>) -> f64 {
    it.filter(|v| v.is_finite()).fold(0.0, f64::max)
}

fn lines(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    y_max: Option<f64>,
    series: &[Series],
) -> DrawResult {
    let pts = || series.iter().flat_map(|s| s.points.iter());
    let x_min = pts()
        .map(|p| p.0)
        .filter(|v| v.is_finite())
        .fold(f64::INFINITY, f64::min);
    let x_min = if x_min.is_finite() { x_min } else { 0.0 };
    let mut x_max = finite_max(pts().map(|p| p.0));
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let y_top = y_max
        .unwrap_or_else(|| finite_max(pts().map(|p| p.1)) * 1.05)
        .max(1e-9);
    let mut c = ChartBuilder::on(root)
        .caption(label(title, 120), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x_min..x_max, 0.0..y_top)
        .map_err(e)?;
    c.configure_mesh()
        .x_desc(label(x_label, 80))
        .y_desc(label(y_label, 80))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    for (i, s) in series.iter().enumerate() {
        let col = color(i);
        c.draw_series(LineSeries::new(
            s.points
                .iter()
                .copied()
                .filter(|p| p.0.is_finite() && p.1.is_finite()),
            col.stroke_width(2),
        ))
        .map_err(e)?
        .label(label(&s.name, 60))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], col.stroke_width(3)));
    }
    if series.len() > 1 {
        c.configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

fn bars(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    x_label: &str,
    bars: &[Bar],
) -> DrawResult {
    let n = bars.len().max(1);
    let top = finite_max(bars.iter().map(|b| b.value)).max(1e-9) * 1.45;
    let mut c = ChartBuilder::on(root)
        .caption(label(title, 120), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(10)
        .build_cartesian_2d(0.0..top, 0.0..n as f64)
        .map_err(e)?;
    c.configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_desc(label(x_label, 80))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    for (i, b) in bars.iter().enumerate() {
        let y0 = (n - i) as f64 - 0.85;
        let y1 = (n - i) as f64 - 0.15;
        let v = if b.value.is_finite() {
            b.value.max(0.0)
        } else {
            0.0
        };
        c.draw_series(std::iter::once(Rectangle::new(
            [(0.0, y0), (v, y1)],
            color(0).mix(0.85).filled(),
        )))
        .map_err(e)?;
        // the label goes right of its bar and is clipped to the room left
        // before the plot's right edge (a long kernel name after the
        // longest bar ran off the chart); the note is kept whole
        let room_px = (1.0 - v / top - 0.005) * f64::from(WIDTH.saturating_sub(34));
        let budget = ((room_px / LABEL_CHAR_PX) as usize).max(12);
        let text = if b.note.is_empty() {
            label(&b.label, budget.min(90))
        } else {
            let note = label(&b.note, 60);
            let room = budget.saturating_sub(note.chars().count() + 4).clamp(8, 90);
            format!("{}  ({note})", label(&b.label, room))
        };
        c.draw_series(std::iter::once(Text::new(
            text,
            (v + top * 0.005, (y0 + y1) / 2.0 + 0.25),
            ("sans-serif", 13).into_font(),
        )))
        .map_err(e)?;
    }
    Ok(())
}

fn stacked(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
) -> DrawResult {
    let n = categories.len().max(1);
    let totals: Vec<f64> = (0..n)
        .map(|i| {
            series
                .iter()
                .map(|(_, v)| {
                    v.get(i)
                        .copied()
                        .filter(|x| x.is_finite())
                        .unwrap_or(0.0)
                        .max(0.0)
                })
                .sum()
        })
        .collect();
    let top = finite_max(totals.iter().copied()).max(1e-9) * 1.1;
    // a segmented axis puts each category's label under the middle of its
    // bar (plotters makes one segment per value of the closed range 0..=n-1;
    // a single bar gets an empty second segment, as 0..0 would draw nothing)
    let mut c = ChartBuilder::on(root)
        .caption(label(title, 120), ("sans-serif", 20))
        .margin(12)
        // the legend goes right of the plot, where it covers no bar
        .margin_right(12 + LEGEND_PX)
        .x_label_area_size(60)
        .y_label_area_size(70)
        .build_cartesian_2d((0..(n as i32 - 1).max(1)).into_segmented(), 0.0..top)
        .map_err(e)?;
    let cats: Vec<String> = categories.iter().map(|s| label(s, 24)).collect();
    // at most 40 labels; with more bars every k-th is labelled
    let every = n.div_ceil(40).max(1);
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(n.min(40))
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) if (*i as usize).is_multiple_of(every) => {
                cats.get(*i as usize).cloned().unwrap_or_default()
            }
            _ => String::new(),
        })
        .y_desc(label(y_label, 80))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    let mut base = vec![0.0f64; n];
    for (si, (_, vals)) in series.iter().enumerate() {
        let col = color(si);
        let rects: Vec<_> = (0..n)
            .map(|i| {
                let v = vals
                    .get(i)
                    .copied()
                    .filter(|x| x.is_finite())
                    .unwrap_or(0.0)
                    .max(0.0);
                let mut r = Rectangle::new(
                    [
                        (SegmentValue::Exact(i as i32), base[i]),
                        (SegmentValue::Exact(i as i32 + 1), base[i] + v),
                    ],
                    col.filled(),
                );
                r.set_margin(0, 0, 6, 6);
                base[i] += v;
                r
            })
            .collect();
        c.draw_series(rects).map_err(e)?;
    }
    // the legend, drawn on the whole chart right of the plot (plotters'
    // own legend clips its swatches to the plot)
    let (x0, y0) = c.plotting_area().get_base_pixel();
    let (plot_w, _) = c.plotting_area().dim_in_pixel();
    let x = x0 + i32::try_from(plot_w).unwrap_or(0) + 14;
    for (si, (name, _)) in series.iter().enumerate() {
        let y = y0 + 8 + 20 * i32::try_from(si).unwrap_or(0);
        root.draw(&Rectangle::new(
            [(x, y - 6), (x + 14, y + 6)],
            color(si).filled(),
        ))
        .map_err(e)?;
        root.draw(&Rectangle::new(
            [(x, y - 6), (x + 14, y + 6)],
            BLACK.stroke_width(1),
        ))
        .map_err(e)?;
        root.draw(&Text::new(
            label(name, LEGEND_CHARS),
            (x + 20, y - 7),
            ("sans-serif", 13).into_font(),
        ))
        .map_err(e)?;
    }
    Ok(())
}

fn roofline(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    peak_tflops: f64,
    bandwidth_gbs: f64,
    points: &[RoofPoint],
) -> DrawResult {
    let ok = |p: &&RoofPoint| p.intensity.is_finite() && p.intensity > 0.0 && p.tflops > 0.0;
    let ridge = peak_tflops * 1e3 / bandwidth_gbs.max(1e-9);
    let xs = points.iter().filter(ok).map(|p| p.intensity);
    let x_lo = xs.clone().fold(ridge / 100.0, f64::min).max(1e-4) / 2.0;
    let x_hi = xs.fold(ridge * 100.0, f64::max) * 2.0;
    let y_hi = peak_tflops.max(finite_max(points.iter().map(|p| p.tflops))) * 2.0;
    let y_lo = (bandwidth_gbs * x_lo / 1e3)
        .min(
            points
                .iter()
                .filter(ok)
                .map(|p| p.tflops)
                .fold(f64::INFINITY, f64::min),
        )
        .max(1e-6)
        / 2.0;
    let mut c = ChartBuilder::on(root)
        .caption(label(title, 120), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale())
        .map_err(e)?;
    c.configure_mesh()
        .x_desc("arithmetic intensity (FLOP/byte)")
        .y_desc("achieved TFLOP/s")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    // memory roof up to the ridge, compute roof after it
    let roof = vec![
        (x_lo, bandwidth_gbs * x_lo / 1e3),
        (ridge, peak_tflops),
        (x_hi, peak_tflops),
    ];
    c.draw_series(LineSeries::new(roof, BLACK.stroke_width(2)))
        .map_err(e)?
        .label(format!(
            "roofs: {bandwidth_gbs:.0} GB/s, {peak_tflops:.1} TFLOP/s"
        ))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.stroke_width(2)));
    let col = color(1);
    c.draw_series(
        points
            .iter()
            .filter(ok)
            .map(|p| Circle::new((p.intensity, p.tflops), 5, col.filled())),
    )
    .map_err(e)?
    .label("ops (time-weighted)")
    .legend(move |(x, y)| Circle::new((x + 8, y), 5, col.filled()));
    for p in points.iter().filter(ok).take(12) {
        c.draw_series(std::iter::once(Text::new(
            label(&p.label, 40),
            (p.intensity * 1.1, p.tflops),
            ("sans-serif", 12).into_font(),
        )))
        .map_err(e)?;
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
        let lin = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    }

    #[test]
    fn neighbouring_colours_differ_in_greyscale() {
        // the first four (the most a stacked chart of the step breakdown
        // shows side by side) pairwise; every neighbour pair too
        for (i, a) in PALETTE.iter().take(4).enumerate() {
            for (j, b) in PALETTE.iter().enumerate().take(4).skip(i + 1) {
                let d = (luminance(*a) - luminance(*b)).abs();
                assert!(d > 0.05, "colours {i} and {j} look alike in grey ({d})");
            }
        }
        for w in PALETTE.windows(2) {
            assert!((luminance(w[0]) - luminance(w[1])).abs() > 0.05);
        }
    }

    #[test]
    fn labels_are_safe() {
        assert_eq!(label("a\u{1b}]0;x\u{7}", 50), "a\\x1b]0;x\\x07");
        assert_eq!(label("abcdef", 3), "abc…");
    }
}

#[cfg(test)]
mod snapshots {
    use super::*;

    /// The structure of an SVG document: element names with their count in
    /// order of first appearance, then every text, so a snapshot pins what
    /// is drawn and labelled without pinning sub-pixel coordinates.
    fn structure(svg: &str) -> String {
        let doc = roxmltree::Document::parse(svg).unwrap();
        let mut counts: Vec<(String, usize)> = Vec::new();
        let mut texts = Vec::new();
        for n in doc.descendants().filter(|n| n.is_element()) {
            let name = n.tag_name().name().to_owned();
            match counts.iter_mut().find(|c| c.0 == name) {
                Some(c) => c.1 += 1,
                None => counts.push((name.clone(), 1)),
            }
            if name == "text" {
                texts.push(n.text().unwrap_or("").trim().to_owned());
            }
        }
        let mut out = String::new();
        for (n, c) in counts {
            out.push_str(&format!("{n}: {c}\n"));
        }
        out.push_str("texts:\n");
        for t in texts {
            out.push_str(&format!("  {t}\n"));
        }
        out
    }

    fn lines() -> Chart {
        Chart::Lines {
            id: "u".into(),
            title: "GPU utilization per bucket".into(),
            x_label: "time (ms)".into(),
            y_label: "utilization (%)".into(),
            y_max: Some(105.0),
            series: vec![
                Series {
                    name: "GPU 0".into(),
                    points: vec![(0.5, 100.0), (1.5, 50.0), (2.5, 0.0)],
                },
                Series {
                    name: "GPU 1".into(),
                    points: vec![(0.5, 20.0), (1.5, 80.0), (2.5, 10.0)],
                },
            ],
        }
    }

    /// A long label after the longest bar stays inside the chart: its
    /// text starts at its `x` and, at a generous 7 px a character (13 px
    /// sans-serif), ends before the right edge; a short label is whole.
    #[test]
    fn bar_labels_stay_inside() {
        let long = format!("sm80_xmma_gemm_{}_cublas", "f32f32_".repeat(30));
        let c = Chart::Bars {
            id: "kernels".into(),
            title: "Top kernels".into(),
            x_label: "kernel time (ms)".into(),
            bars: vec![
                Bar {
                    label: long.clone(),
                    value: 30.0,
                    note: "69.4 %".into(),
                },
                Bar {
                    label: "elementwise_kernel".into(),
                    value: 1.0,
                    note: "2.3 %".into(),
                },
            ],
        };
        let svg = render_svg(&c).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let text_of = |start: &str| {
            doc.descendants()
                .find(|n| {
                    n.tag_name().name() == "text"
                        && n.text().is_some_and(|t| t.trim().starts_with(start))
                })
                .unwrap_or_else(|| panic!("no text starting {start}"))
        };
        let t = text_of("sm80_xmma_gemm_");
        let text = t.text().unwrap().trim();
        let x: f64 = t.attribute("x").unwrap().parse().unwrap();
        assert!(text.contains('…') && text.ends_with("(69.4 %)"), "{text}");
        assert!(
            x + 7.0 * text.chars().count() as f64 <= f64::from(WIDTH),
            "{x} {text}"
        );
        let short = text_of("elementwise_kernel").text().unwrap().trim();
        assert_eq!(short, "elementwise_kernel  (2.3 %)");
    }

    #[test]
    fn line_chart() {
        insta::assert_snapshot!(structure(&render_svg(&lines()).unwrap()));
    }

    #[test]
    fn bar_chart() {
        let c = Chart::Bars {
            id: "ops".into(),
            title: "Top ops".into(),
            x_label: "kernel time (ms)".into(),
            bars: vec![
                Bar {
                    label: "aten::mm".into(),
                    value: 3.0,
                    note: "60.0 %, 12.00 TFLOP/s".into(),
                },
                Bar {
                    label: "void k<\u{1b}float>".into(),
                    value: 2.0,
                    note: String::new(),
                },
            ],
        };
        insta::assert_snapshot!(structure(&render_svg(&c).unwrap()));
    }

    #[test]
    fn stacked_chart() {
        let c = Chart::Stacked {
            id: "steps".into(),
            title: "Step breakdown".into(),
            y_label: "time (ms)".into(),
            categories: vec!["step 1".into(), "step 2".into()],
            series: vec![
                ("Kernel".into(), vec![3.0, 4.0]),
                ("Memcpy".into(), vec![1.0, 0.5]),
                ("CPU exec".into(), vec![0.5, 0.5]),
            ],
        };
        let svg = render_svg(&c).unwrap();
        insta::assert_snapshot!(structure(&svg));
        // the legend covers no bar: every label of it starts right of the
        // right edge of every bar (the chart's background, as wide as the
        // chart, aside)
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let num = |n: roxmltree::Node<'_, '_>, a: &str| -> f64 {
            n.attribute(a).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        };
        let bars_end = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "rect")
            .filter(|n| num(*n, "width") > 20.0 && num(*n, "width") < f64::from(WIDTH) / 2.0)
            .map(|n| num(n, "x") + num(n, "width"))
            .fold(0.0, f64::max);
        assert!(bars_end > 0.0);
        for name in ["Kernel", "Memcpy", "CPU exec"] {
            let t = doc
                .descendants()
                .find(|n| n.tag_name().name() == "text" && n.text().map(str::trim) == Some(name))
                .unwrap_or_else(|| panic!("no legend entry {name}"));
            assert!(
                num(t, "x") > bars_end,
                "{name} at {} ≤ {bars_end}",
                num(t, "x")
            );
        }
    }

    #[test]
    fn roofline_chart() {
        let c = Chart::Roofline {
            id: "roof".into(),
            title: "Roofline (fp16 math)".into(),
            peak_tflops: 312.0,
            bandwidth_gbs: 2039.0,
            points: vec![
                RoofPoint {
                    label: "aten::mm".into(),
                    intensity: 200.0,
                    tflops: 150.0,
                },
                RoofPoint {
                    label: "aten::add".into(),
                    intensity: 0.25,
                    tflops: 0.4,
                },
            ],
        };
        insta::assert_snapshot!(structure(&render_svg(&c).unwrap()));
    }
}
