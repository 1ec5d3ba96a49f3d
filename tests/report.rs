//! `rprof report`: the page is well-formed, self-contained, has the expected
//! sections and charts, its figures equal independent computations, and a
//! real browser draws it.

use std::path::Path;

use crate::util::{fixture, rprof, run};

/// Parse the page strictly (XML rules: every element closed, attributes
/// quoted, entities defined), allowing the HTML5 doctype.
fn parse(html: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(html, opts).expect("the page is well-formed")
}

fn report(input: &Path, dir: &Path) -> String {
    let out = dir.join("r.html");
    let o = run(rprof().args(["report", "-q", "-o"]).arg(&out).arg(input));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out).unwrap()
}

/// Every attribute that could load something must point inside the page.
fn assert_self_contained(doc: &roxmltree::Document<'_>, html: &str) {
    for n in doc.descendants().filter(|n| n.is_element()) {
        for a in n.attributes() {
            if matches!(a.name(), "src" | "href" | "srcset" | "data" | "action") {
                assert!(
                    a.value().starts_with('#'),
                    "external reference {}={}",
                    a.name(),
                    a.value()
                );
            }
        }
        assert!(
            !matches!(
                n.tag_name().name(),
                "link" | "iframe" | "img" | "object" | "embed"
            ),
            "element {} loads content",
            n.tag_name().name()
        );
    }
    assert!(!html.contains("url("), "a style loads a resource");
    assert!(!html.contains("@import"));
}

fn section_ids(doc: &roxmltree::Document<'_>) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.tag_name().name() == "section")
        .filter_map(|n| n.attribute("id").map(str::to_owned))
        .collect()
}

/// Busy time of every device: the union of kernel intervals, computed with a
/// plain sort-and-merge in SQL's rows (not with rprof's interval code).
fn busy_ns(rows: &mut [(i64, i64)]) -> i64 {
    rows.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(i64, i64)> = None;
    for &(s, e) in rows.iter() {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    if let Some((cs, ce)) = cur {
        total += ce - cs;
    }
    total
}

#[test]
fn report_on_nvprof_fixture_is_wellformed_and_selfcontained() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("profiling-lm/net.sql");
    let html = report(&input, dir.path());
    let doc = parse(&html);
    assert_self_contained(&doc, &html);
    let ids = section_ids(&doc);
    for want in ["overview", "utilization", "ops", "kernels", "memory"] {
        assert!(ids.iter().any(|i| i == want), "no section {want}: {ids:?}");
    }
    let svgs = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "svg")
        .count();
    assert!(svgs >= 4, "{svgs} charts");

    // utilization of the one GPU equals busy / span computed here from SQL
    let db =
        rusqlite::Connection::open_with_flags(&input, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut st = db
        .prepare("SELECT start, \"end\" FROM CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL")
        .unwrap();
    let mut rows: Vec<(i64, i64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let lo = rows.iter().map(|r| r.0).min().unwrap();
    let hi = rows.iter().map(|r| r.1).max().unwrap();
    let busy = busy_ns(&mut rows);
    let want = format!("{:.1}", 100.0 * busy as f64 / (hi - lo) as f64);
    let cell = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "tr")
        .find(|tr| {
            tr.children()
                .next()
                .and_then(|td| td.text())
                .is_some_and(|t| t == "GPU 0")
        })
        .and_then(|tr| {
            tr.children()
                .filter(|c| c.is_element())
                .nth(3)
                .and_then(|c| c.text())
        })
        .unwrap();
    assert_eq!(cell, want);
    let busy_ms = format!("{:.3} ms", busy as f64 / 1e6);
    assert!(html.contains(&busy_ms), "busy {busy_ms} not shown");
}

#[test]
fn report_names_no_external_resources_and_escapes_trace_text() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.json");
    std::fs::write(
        &p,
        r#"{"traceEvents":[
          {"ph":"X","cat":"cpu_op","name":"aten::mm</script><img src=x>","pid":1,"tid":2,"ts":10,"dur":100,"args":{}},
          {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":20,"dur":5,"args":{"correlation":9}},
          {"ph":"X","cat":"kernel","name":"k\u001b]0;pwn\u0007<b>","pid":0,"tid":7,"ts":200,"dur":4,"args":{"correlation":9,"device":0,"stream":7}}
        ]}"#,
    )
    .unwrap();
    let html = report(&p, dir.path());
    let doc = parse(&html);
    assert_self_contained(&doc, &html);
    assert!(!html.contains('\u{1b}'), "raw ESC in the page");
    assert!(!html.contains("<img"), "trace text became markup");
    assert!(html.contains("\\x1b]0;pwn"));
}

#[test]
fn svg_files_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let plots = dir.path().join("plots");
    let o = run(rprof()
        .args(["report", "-q", "--svg"])
        .arg(&plots)
        .arg(fixture("profiling-lm/net.sql")));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let files: Vec<_> = std::fs::read_dir(&plots)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(files.len() >= 4);
    for f in files {
        let s = std::fs::read_to_string(&f).unwrap();
        roxmltree::Document::parse(&s).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    }
    // -o naming the input is refused, the input untouched
    let copy = dir.path().join("net.sql");
    std::fs::copy(fixture("profiling-lm/net.sql"), &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let o = run(rprof().args(["report", "-o"]).arg(&copy).arg(&copy));
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    // neither -o nor --svg: usage error
    let o = run(rprof().arg("report").arg(&copy));
    assert_eq!(o.status.code(), Some(2));
}

/// Headless Chromium draws the page: the screenshot has the asked size and
/// is not blank. `.ci/run` installs Chromium; elsewhere the test says it is
/// skipped.
#[test]
fn a_real_browser_renders_the_report() {
    let Some(browser) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!(
            "note: no Chromium on this machine; skipping the browser test (.ci/run installs it)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let _ = report(&fixture("profiling-lm/net.sql"), dir.path());
    let page = dir.path().join("r.html");
    let shot = dir.path().join("shot.png");
    let profile = dir.path().join("profile");
    let o = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1400,1800",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        shot.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1400, 1800));
    let px = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let first = &pixels[..px];
    let differing = pixels.chunks(px).filter(|p| p != &first).count();
    let total = pixels.len() / px;
    // text, bars and lines: a good share of the screen is not background
    assert!(
        differing * 100 > total,
        "blank page: {differing} of {total} pixels differ"
    );
    // and the dark chart colour is there (the utilization line, the bars)
    let dark_blue = pixels
        .chunks(px)
        .filter(|p| p[0] < 40 && p[1] < 80 && p[2] > 80 && p[2] < 140)
        .count();
    assert!(
        dark_blue > 100,
        "no chart drawn ({dark_blue} dark-blue pixels)"
    );
}

/// One export holding two processes: the page has the memory and the
/// distributed sections, and each rank's busy % equals the union of its
/// kernels (SQL rows merged here) over its own span.
#[test]
fn report_of_two_processes_has_memory_and_distributed_sections() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("nsys-ai/mfu_2gpu_before.sqlite");
    let html = report(&input, dir.path());
    let doc = parse(&html);
    assert_self_contained(&doc, &html);
    let ids = section_ids(&doc);
    for want in ["memory", "distributed"] {
        assert!(ids.iter().any(|i| i == want), "no section {want}: {ids:?}");
    }
    let db =
        rusqlite::Connection::open_with_flags(&input, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut st = db
        .prepare("SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY globalPid")
        .unwrap();
    let pids: Vec<i64> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(pids.len(), 2);
    let table = doc
        .descendants()
        .find(|n| {
            n.tag_name().name() == "caption" && n.text().is_some_and(|t| t.starts_with("Per rank"))
        })
        .and_then(|c| c.parent())
        .unwrap();
    let rows: Vec<Vec<String>> = table
        .descendants()
        .filter(|n| n.tag_name().name() == "tr")
        .skip(1)
        .map(|tr| {
            tr.children()
                .filter(|c| c.is_element())
                .map(|c| c.text().unwrap_or("").to_owned())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 2);
    for (rank, pid) in pids.iter().enumerate() {
        let mut st = db
            .prepare("SELECT start, \"end\" FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = ?1")
            .unwrap();
        let mut iv: Vec<(i64, i64)> = st
            .query_map([pid], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let lo = iv.iter().map(|r| r.0).min().unwrap();
        let hi = iv.iter().map(|r| r.1).max().unwrap();
        let busy = busy_ns(&mut iv);
        let want = format!("{:.1}", 100.0 * busy as f64 / (hi - lo) as f64);
        assert_eq!(rows[rank][0], rank.to_string());
        assert_eq!(rows[rank][4], want, "rank {rank}");
    }
}

/// Several rank files make the job page.
#[test]
fn report_of_a_job_directory() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job");
    std::fs::create_dir(&job).unwrap();
    for rank in 0..2 {
        let k2 = 300 + rank * 100;
        std::fs::write(
            job.join(format!("rank{rank}.pt.trace.json")),
            format!(
                r#"{{"distributedInfo":{{"backend":"nccl","rank":{rank},"world_size":2}},
                "traceEvents":[
                  {{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":2,"args":{{"correlation":1}}}},
                  {{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":2,"args":{{"correlation":2}}}},
                  {{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":100,"dur":100,"args":{{"correlation":1,"device":0,"stream":7}}}},
                  {{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":7,"ts":{k2},"dur":50,"args":{{"correlation":2,"device":0,"stream":7}}}}
                ]}}"#
            ),
        )
        .unwrap();
    }
    let html = report(&job, dir.path());
    let doc = parse(&html);
    assert_self_contained(&doc, &html);
    assert_eq!(section_ids(&doc), ["overview", "distributed"]);
    assert!(html.contains("job of 2 ranks"));
}

/// A PyTorch-profiler run with steps: the page has the step breakdown and
/// the idle sections, and in every step row the eight categories add up to
/// the step's total (to the rounding of the printed milliseconds).
#[test]
fn report_with_steps_has_breakdown_and_idle_sections() {
    let corpus = corpus_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    let Some(input) = std::fs::read_dir(corpus.join("kineto-tbplugin"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().ends_with(".json.gz"))
    else {
        return;
    };
    let html = report(&input, dir.path());
    let doc = parse(&html);
    let ids = section_ids(&doc);
    for want in ["steps", "idle", "memory"] {
        assert!(ids.iter().any(|i| i == want), "no section {want}: {ids:?}");
    }
    let table = doc
        .descendants()
        .find(|n| n.tag_name().name() == "caption" && n.text() == Some("Per step"))
        .and_then(|c| c.parent())
        .unwrap();
    let mut rows = 0;
    for tr in table
        .descendants()
        .filter(|n| n.tag_name().name() == "tr")
        .skip(1)
    {
        let cells: Vec<f64> = tr
            .children()
            .filter(|c| c.is_element())
            .skip(1)
            .map(|c| c.text().unwrap_or("").parse::<f64>().unwrap_or(f64::NAN))
            .collect();
        let parts: f64 = cells[1..9].iter().sum();
        assert!((parts - cells[0]).abs() < 0.01, "{cells:?}");
        rows += 1;
    }
    assert!(rows >= 1);
}

/// The collective transfer-and-wait chart is drawn only when there are
/// collectives: on a two-process capture with NCCL kernels (counted in
/// SQL here) it is on the page; on one without any it is left out (a chart
/// of zeros said nothing) and the section's text says why. The second
/// capture is read from ../shared/corpus (skipped when it is absent).
#[test]
fn collective_chart_only_with_collectives() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = vec![fixture("nsys-ai/mfu_2gpu_before.sqlite")];
    if let Some(corpus) = crate::util::corpus() {
        inputs.push(corpus.join("nsys-ai/h100_2gpu_1s.sqlite"));
    }
    for input in inputs {
        let name = input.display();
        let db = rusqlite::Connection::open_with_flags(
            &input,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        let nccl: i64 = db
            .query_row(
                "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k \
                 JOIN StringIds s ON s.id = k.shortName WHERE s.value LIKE '%nccl%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let html = report(&input, dir.path());
        let doc = parse(&html);
        let ids = section_ids(&doc);
        assert!(ids.iter().any(|i| i == "distributed"), "{name}: {ids:?}");
        let chart = doc
            .descendants()
            .any(|n| n.attribute("id") == Some("chart-collective-waits"));
        assert_eq!(chart, nccl > 0, "{name}: {nccl} NCCL kernels");
        assert_eq!(
            html.contains("No collective was matched across ranks"),
            nccl == 0,
            "{name}"
        );
    }
}
