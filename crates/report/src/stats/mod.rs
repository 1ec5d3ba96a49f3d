//! `rprof stats`: the reports of `nsys stats`, with nsys's names, columns,
//! headings, row order and arithmetic, computed from [`StatsData`].
//!
//! Two of nsys's results are wrong and are not copied (see docs/stats.md):
//! `nvtx_kern_sum` counts a kernel once per nested instance of a range name
//! (rprof: once), and exports with CUDA backtrace rows double API calls
//! (rprof: the reader counts each call once).
//!
//! - [`table`]: cells, columns and nsys's aggregate arithmetic.
//! - [`render`]: column, table, CSV, TSV and JSON output with time and
//!   memory units.
//! - [`nvtx`]: the NVTX reports (range sums, kernel × range, GPU projection).

use std::borrow::Cow;

use rprof_model::{
    ApiRow, GpuKernel, GpuMemOp, KernelLaunch, NameId, NvtxRow, OsrtRow, RangeStyle, StatsData,
    UmFault,
};
use rprof_model::{FastMap, Source};
pub use rprof_model::{Names, Tables};

pub mod nvtx;
pub mod render;
pub mod table;

use table::{Agg, Cell, Col, Table, Unit, col, percent};

/// One report of the catalogue.
#[derive(Clone, Copy, Debug)]
pub struct ReportInfo {
    /// nsys's name.
    pub name: &'static str,
    /// nsys's display name.
    pub title: &'static str,
    /// Arguments it takes (`base`, `mangled`, `rows=N`).
    pub args: &'static str,
    /// What it computes, for `--help`.
    pub help: &'static str,
}

/// Every report, in `--help` order.
pub const REPORTS: &[ReportInfo] = &[
    ReportInfo {
        name: "cuda_api_sum",
        title: "CUDA API Summary",
        args: "",
        help: "CUDA runtime and driver API calls grouped by function: time share of all API \
               time, total, calls, avg/med/min/max/std dev of each call's duration. CUDA \
               backtrace duplicate rows are counted once (nsys counts them twice).",
    },
    ReportInfo {
        name: "cuda_api_trace",
        title: "CUDA API Trace",
        args: "",
        help: "Every CUDA API call in start order: start, duration, name, result, \
               correlation id, pid, tid, thread priority and name.",
    },
    ReportInfo {
        name: "cuda_gpu_kern_sum",
        title: "CUDA GPU Kernel Summary",
        args: "[:base|:mangled]",
        help: "Kernels grouped by name (demangled; :base the short name, :mangled the \
               mangled name): time share of all kernel time, total, instances, \
               avg/med/min/max/std dev. Sorted by total (desc), instances, name.",
    },
    ReportInfo {
        name: "cuda_gpu_kern_gb_sum",
        title: "CUDA GPU Kernel/Grid/Block Summary",
        args: "[:base|:mangled]",
        help: "As cuda_gpu_kern_sum, grouped by name, grid and block dimensions.",
    },
    ReportInfo {
        name: "cuda_gpu_mem_time_sum",
        title: "CUDA GPU MemOps Summary (by Time)",
        args: "",
        help: "Memory copies (by direction) and memsets: time share of all memory-operation \
               time, total, count, avg/med/min/max/std dev of durations.",
    },
    ReportInfo {
        name: "cuda_gpu_mem_size_sum",
        title: "CUDA GPU MemOps Summary (by Size)",
        args: "",
        help: "Memory copies (by direction) and memsets: total bytes, count, \
               avg/med/min/max/std dev of bytes per operation.",
    },
    ReportInfo {
        name: "cuda_gpu_sum",
        title: "CUDA GPU Summary (Kernels/MemOps)",
        args: "[:base|:mangled]",
        help: "Kernels and memory operations together, grouped by name: time share of all \
               GPU operation time, total, instances, avg/med/min/max/std dev, category.",
    },
    ReportInfo {
        name: "cuda_gpu_trace",
        title: "CUDA GPU Trace",
        args: "[:base|:mangled]",
        help: "Every kernel, copy and memset in start order: duration, correlation id, \
               grid, block, registers, shared memory, bytes, throughput (bytes × \
               (10^9 div duration), integer division as nsys), memory kinds, device, \
               context, green context, stream, name.",
    },
    ReportInfo {
        name: "cuda_kern_exec_sum",
        title: "CUDA Kernel Launch & Exec Time Summary",
        args: "[:base|:mangled]",
        help: "Per (pid, tid, device, launch function, kernel): count, queued count, and \
               avg/med/min/max/std dev of the total time (launch call start to the later \
               of call end and kernel end), of the API call, of the queue time (kernel \
               start - call end, when not negative) and of the kernel. Sorted by total avg.",
    },
    ReportInfo {
        name: "cuda_kern_exec_trace",
        title: "CUDA Kernel Launch & Exec Time Trace",
        args: "[:base|:mangled]",
        help: "Every kernel with its launch call, in call start order: API start and \
               duration, queue start and duration, kernel start and duration, total, pid, \
               tid, device, API function, grid, block, kernel name.",
    },
    ReportInfo {
        name: "nvtx_sum",
        title: "NVTX Range Summary",
        args: "",
        help: "NVTX ranges grouped by name (DOMAIN:name in named domains) and style \
               (PushPop, StartEnd): time share of all range time, total, instances, \
               avg/med/min/max/std dev. Ranges never closed end at the last NVTX timestamp.",
    },
    ReportInfo {
        name: "nvtx_pushpop_sum",
        title: "NVTX Push/Pop Range Summary",
        args: "",
        help: "As nvtx_sum, push/pop ranges only, grouped by name.",
    },
    ReportInfo {
        name: "nvtx_startend_sum",
        title: "NVTX Start/End Range Summary",
        args: "",
        help: "As nvtx_sum, start/end ranges only (including ranges ended on another \
               thread), grouped by name.",
    },
    ReportInfo {
        name: "nvtx_kern_sum",
        title: "NVTX Range Kernel Summary",
        args: "[:base|:mangled]",
        help: "Kernels grouped by (NVTX range name, style, pid, tid, kernel name): a \
               kernel belongs to every range of its launching thread that encloses the \
               launch call (ranges ended on another thread excluded). NVTX Inst: ranges; \
               Kern Inst: kernels; Total and avg/med/min/max/std dev over the group's \
               KERNELS, each counted once (nsys counts a kernel once per nested instance of \
               the same range name, inflating totals). Kernels in no range: empty range.",
    },
    ReportInfo {
        name: "nvtx_gpu_proj_sum",
        title: "NVTX GPU Projection Summary",
        args: "",
        help: "NVTX ranges projected onto the GPU: a range's projection runs from the first \
               start to the last end of the GPU operations (kernels, copies, memsets) \
               launched inside it on its thread. Per (name, style): total projected time, \
               total range time, instances, projected avg/med/min/max/std dev, GPU ops, avg \
               ops, avg nesting level, avg children with GPU ops.",
    },
    ReportInfo {
        name: "nvtx_gpu_proj_trace",
        title: "NVTX GPU Projection Trace",
        args: "",
        help: "Every NVTX range with GPU operations: projected start and duration, original \
               start and duration, style, pid, tid, GPU ops, level, children, range id, \
               parent id (tightest enclosing range on the thread), range stack.",
    },
    ReportInfo {
        name: "osrt_sum",
        title: "OS Runtime Summary",
        args: "",
        help: "OS runtime (libc, pthread, ...) calls grouped by function: time share, total, \
               calls, avg/med/min/max/std dev. Needs an export traced with osrt.",
    },
    ReportInfo {
        name: "um_sum",
        title: "Unified Memory Analysis Summary",
        args: "[:rows=N]",
        help: "Per virtual address: unified-memory HtoD and DtoH migration bytes, CPU and \
               GPU page faults, migration throughput (bytes × (10^9 div duration), integer \
               division as nsys). The N (default 50) highest-throughput addresses. Needs \
               unified-memory page-fault tables.",
    },
];

/// The report set of a bare `rprof stats FILE` (nsys's default set, minus
/// reports for APIs rprof does not read).
pub const DEFAULT_REPORTS: &[&str] = &[
    "nvtx_sum",
    "osrt_sum",
    "cuda_api_sum",
    "cuda_gpu_kern_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
    "um_sum",
];

/// Which kernel name a report groups by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NameKind {
    /// `demangledName` (nsys's default).
    #[default]
    Demangled,
    /// `shortName` (`:base`).
    Base,
    /// `mangledName` (`:mangled`), falling back to the demangled name.
    Mangled,
}

/// A report request: name and arguments, as `--report NAME[:ARG...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Catalogue entry.
    pub name: &'static str,
    /// Kernel name kind.
    pub names: NameKind,
    /// `um_sum:rows=N`.
    pub rows: usize,
    /// As written (`cuda_gpu_kern_sum:base`).
    pub spec: String,
}

impl Request {
    /// Parse `NAME[:ARG...]`.
    pub fn parse(s: &str) -> Result<Request, String> {
        let mut parts = s.split(':');
        let name = parts.next().unwrap_or("");
        let Some(info) = REPORTS.iter().find(|r| r.name == name) else {
            return Err(format!(
                "unknown report '{name}' (rprof stats --help lists them)"
            ));
        };
        let mut req = Request {
            name: info.name,
            names: NameKind::Demangled,
            rows: 50,
            spec: s.to_owned(),
        };
        for a in parts {
            match a {
                "base" if info.args.contains("base") => req.names = NameKind::Base,
                "mangled" if info.args.contains("mangled") => req.names = NameKind::Mangled,
                _ if info.args.contains("rows") && a.starts_with("rows=") => {
                    req.rows = a[5..]
                        .parse()
                        .map_err(|_| format!("{name}: rows= takes a number, not '{}'", &a[5..]))?;
                }
                _ => {
                    return Err(format!(
                        "{name}: unknown argument '{a}' (it takes {})",
                        if info.args.is_empty() {
                            "none"
                        } else {
                            info.args
                        }
                    ));
                }
            }
        }
        Ok(req)
    }
}

/// The time window of `--filter-time` / `--filter-nvtx`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Start, ns.
    pub start_ns: i64,
    /// End, ns.
    pub end_ns: i64,
    /// The thread of the NVTX range (`--filter-nvtx`): push/pop ranges keep
    /// CPU rows of that thread, start/end ranges those of its process; GPU
    /// rows are kept by process.
    pub thread: Option<(u64, u64, RangeStyle)>,
}

impl Window {
    /// nsys's overlap rule: the row starts in the window, ends in it, or
    /// spans it (a row with no end only by its start).
    pub fn overlaps(&self, start: i64, end: Option<i64>) -> bool {
        let (s, e) = (self.start_ns, self.end_ns);
        (start >= s && start < e)
            || end.is_some_and(|end| (end >= s && end < e) || (start < s && end >= e))
    }

    fn cpu_thread_ok(&self, pid: u64, tid: u64) -> bool {
        match self.thread {
            None => true,
            Some((p, t, RangeStyle::PushPop)) => p == pid && t == tid,
            Some((p, _, RangeStyle::StartEnd)) => p == pid,
        }
    }

    fn process_ok(&self, pid: Option<u64>) -> bool {
        match self.thread {
            None => true,
            Some((p, _, _)) => pid == Some(p),
        }
    }
}

/// Parse `--filter-time START/END` (either may be empty; each a number with
/// optional units, summed: `1s2ms`, `1.5e3us`).
pub fn parse_filter_time(s: &str) -> Result<(Option<i64>, Option<i64>), String> {
    let Some((a, b)) = s.split_once('/') else {
        return Err(format!("--filter-time '{s}': expected START/END"));
    };
    let a = if a.is_empty() {
        None
    } else {
        Some(parse_time(a)?)
    };
    let b = if b.is_empty() {
        None
    } else {
        Some(parse_time(b)?)
    };
    if a.is_none() && b.is_none() {
        return Err("--filter-time: give a start, an end or both".into());
    }
    if let (Some(x), Some(y)) = (a, b)
        && x > y
    {
        return Err("--filter-time: the start time cannot be greater than the end time".into());
    }
    Ok((a, b))
}

/// A time as nsys's `--filter-time` reads it: numbers each followed by an
/// optional unit (ns, us, ms, s, m, h and their long forms), summed.
pub fn parse_time(s: &str) -> Result<i64, String> {
    let bad = || format!("--filter-time: cannot read time '{s}'");
    let b = s.as_bytes();
    let mut i = 0;
    let mut total = 0f64;
    if b.is_empty() || s.len() > 200 {
        return Err(bad());
    }
    while i < b.len() {
        let start = i;
        if b[i] == b'+' || b[i] == b'-' {
            i += 1;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') && i > start {
            let save = i;
            i += 1;
            if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                i += 1;
            }
            let digits = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == digits {
                i = save;
            }
        }
        let num: f64 = s[start..i].parse().map_err(|_| bad())?;
        let ustart = i;
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
        let mult = match &s[ustart..i] {
            "" | "ns" | "nsec" => 1.0,
            "us" | "usec" => 1e3,
            "ms" | "msec" => 1e6,
            "s" | "sec" => 1e9,
            "m" | "min" => 60e9,
            "h" | "hour" => 3600e9,
            _ => return Err(bad()),
        };
        total += num * mult;
    }
    if !total.is_finite() || total.abs() > 9.2e18 {
        return Err(bad());
    }
    Ok(total.round() as i64)
}

/// `--filter-nvtx RANGE[@DOMAIN][/N]`: the N-th (0-based, by start) range of
/// that name; a trailing `/X` that is not a number belongs to the name.
pub fn find_nvtx_window(data: &StatsData, spec: &str) -> Result<Window, String> {
    let (name, index) = match spec.rsplit_once('/') {
        Some((n, i)) if !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) => {
            (n, i.parse::<usize>().unwrap_or(usize::MAX))
        }
        _ => (spec, 0),
    };
    let Some(ranges) = data.nvtx.as_ref() else {
        return Err(format!(
            "NVTX range '{spec}' could not be found (no NVTX data)"
        ));
    };
    let mut hits: Vec<&NvtxRow> = ranges
        .iter()
        .filter(|r| {
            let text = data.names.get(r.text);
            match r.domain() {
                Some(d) => {
                    let dn = data.names.get(d);
                    name.len() == text.len() + 1 + dn.len()
                        && name.starts_with(text)
                        && name.as_bytes()[text.len()] == b'@'
                        && name.ends_with(dn)
                }
                None => name == text,
            }
        })
        .collect();
    hits.sort_by_key(|r| (r.start_ns, r.id));
    let Some(r) = hits.get(index) else {
        return Err(format!(
            "NVTX range '{spec}' could not be found ({} instances)",
            hits.len()
        ));
    };
    let end = r
        .end_ns()
        .or(data.nvtx_max_ns)
        .unwrap_or(r.start_ns)
        .max(r.start_ns);
    let (pid, tid) = data.nvtx_thread(r);
    Ok(Window {
        start_ns: r.start_ns,
        end_ns: end,
        thread: Some((pid, tid, r.style)),
    })
}

/// The rows a report sees: everything, or what a window keeps.
pub struct View<'a> {
    /// The file's data (names, labels, thread names).
    pub data: &'a StatsData,
    /// Kernels.
    pub kernels: Option<Cow<'a, [GpuKernel]>>,
    /// Copies and sets.
    pub memops: Option<Cow<'a, [GpuMemOp]>>,
    /// API calls.
    pub api: Option<Cow<'a, [ApiRow]>>,
    /// NVTX ranges.
    pub nvtx: Option<Cow<'a, [NvtxRow]>>,
    /// OS runtime calls.
    pub osrt: Option<Cow<'a, [OsrtRow]>>,
    /// Unified-memory faults.
    pub um: Option<Cow<'a, [UmFault]>>,
}

fn keep<'a, T: Clone>(
    rows: &'a Option<Vec<T>>,
    w: Option<&Window>,
    f: impl Fn(&Window, &T) -> bool,
) -> Option<Cow<'a, [T]>> {
    let rows = rows.as_ref()?;
    Some(match w {
        None => Cow::Borrowed(rows.as_slice()),
        Some(w) => Cow::Owned(rows.iter().filter(|r| f(w, r)).cloned().collect()),
    })
}

impl<'a> View<'a> {
    /// The rows of `data` that `window` keeps (all without a window).
    pub fn new(data: &'a StatsData, window: Option<&Window>) -> View<'a> {
        View {
            data,
            kernels: keep(&data.kernels, window, |w, k| {
                w.overlaps(k.start_ns, Some(k.end_ns)) && w.process_ok(k.pid)
            }),
            memops: keep(&data.memops, window, |w, m| {
                w.overlaps(m.start_ns, Some(m.end_ns)) && w.process_ok(m.pid)
            }),
            api: keep(&data.api, window, |w, a| {
                w.overlaps(a.start_ns, Some(a.end_ns)) && w.cpu_thread_ok(a.pid, a.tid)
            }),
            nvtx: keep(&data.nvtx, window, |w, r| {
                w.overlaps(r.start_ns, r.end_ns()) && {
                    let (pid, tid) = data.nvtx_thread(r);
                    w.cpu_thread_ok(pid, tid)
                }
            }),
            osrt: keep(&data.osrt, window, |w, o| {
                w.overlaps(o.start_ns, Some(o.end_ns)) && w.cpu_thread_ok(o.pid, o.tid)
            }),
            um: keep(&data.um_faults, window, |w, u| {
                // CPU fault rows have no end: nsys does not filter them
                !u.gpu || (w.overlaps(u.start_ns, Some(u.end_ns)) && w.process_ok(u.pid))
            }),
        }
    }

    fn name(&self, id: NameId) -> &str {
        self.data.names.get(id)
    }

    fn kernel_name(&self, k: &GpuKernel, kind: NameKind) -> NameId {
        match kind {
            NameKind::Demangled => k.name,
            NameKind::Base => k.short.unwrap_or(k.name),
            NameKind::Mangled => k.mangled.unwrap_or(k.name),
        }
    }

    fn file(&self) -> String {
        String::new()
    }
}

fn dur(a: i64, b: i64) -> i64 {
    b.saturating_sub(a)
}

fn no_data(t: Table, what: &str) -> Table {
    t.skip(format!("the input does not contain {what}"))
}

fn base_note(v: &View<'_>, req: &Request, t: &mut Table) {
    if req.names == NameKind::Base
        && v.kernels
            .as_deref()
            .is_some_and(|k| k.iter().any(|k| k.short.is_none()))
    {
        t.notes
            .push("some kernels have no short name in the input: their full name is used".into());
    }
    if req.names == NameKind::Mangled
        && v.kernels
            .as_deref()
            .is_some_and(|k| k.iter().any(|k| k.mangled.is_none()))
    {
        t.notes.push(
            "some kernels have no mangled name in the input: their demangled name is used".into(),
        );
    }
}

/// The columns `Time, Total Time, <count>, Avg, Med, Min, Max, StdDev`.
fn sum_cols(count: &'static str) -> Vec<Col> {
    vec![
        col("Time", Unit::Percent),
        col("Total Time", Unit::Duration),
        col(count, Unit::None),
        col("Avg", Unit::Duration),
        col("Med", Unit::Duration),
        col("Min", Unit::Duration),
        col("Max", Unit::Duration),
        col("StdDev", Unit::Duration),
    ]
}

/// Groups of durations → rows `[Time, Total, N, Avg, Med, Min, Max, StdDev,
/// extra...]`, sorted by total (desc), then count (asc), then the key cells.
///
/// nsys sorts by total only (kernel sums: then instances and name) and leaves
/// ties in SQLite's GROUP BY order, the order of the group key: `tie` is that
/// order here.
fn sum_rows<K: std::hash::Hash + Eq, T: Ord>(
    groups: FastMap<K, Agg>,
    extra: impl Fn(&K) -> Vec<Cell>,
    by_count: bool,
    tie: impl Fn(&K) -> T,
) -> Vec<Vec<Cell>> {
    let grand: i128 = groups.values().map(|a| i128::from(a.sum())).sum();
    let mut rows: Vec<(i64, i64, T, Vec<Cell>)> = groups
        .into_iter()
        .map(|(k, a)| {
            let s = a.finish();
            let mut row = vec![
                percent(s.total, grand),
                Cell::Int(s.total),
                Cell::Int(s.count),
            ];
            row.extend(s.dur_cells());
            row.extend(extra(&k));
            (s.total, if by_count { s.count } else { 0 }, tie(&k), row)
        })
        .collect();
    // the tie keys are distinct (one per group): an unstable sort is exact
    rows.sort_unstable_by(|a, b| {
        b.0.cmp(&a.0)
            .then(a.1.cmp(&b.1))
            .then_with(|| a.2.cmp(&b.2))
    });
    rows.into_iter().map(|(_, _, _, r)| r).collect()
}

/// Order of key cells: text by bytes, numbers by value, `Null` first (as
/// SQLite sorts NULL first).
pub fn cmp_cells(a: &[Cell], b: &[Cell]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Cell::Null, Cell::Null) => Ordering::Equal,
            (Cell::Null, _) => Ordering::Less,
            (_, Cell::Null) => Ordering::Greater,
            (Cell::Text(p), Cell::Text(q)) => p.as_bytes().cmp(q.as_bytes()),
            (Cell::Text(_), _) => Ordering::Greater,
            (_, Cell::Text(_)) => Ordering::Less,
            _ => x.num().total_cmp(&y.num()),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn text(s: &str) -> Cell {
    Cell::Text(s.to_owned())
}

fn grid_text(d: [i64; 3]) -> String {
    format!("{:4} {:4} {:4}", d[0], d[1], d[2])
}

/// Compute one report.
pub fn run(v: &View<'_>, req: &Request) -> Table {
    let _ = v.file();
    match req.name {
        "cuda_gpu_kern_sum" => kern_sum(v, req, false),
        "cuda_gpu_kern_gb_sum" => kern_sum(v, req, true),
        "cuda_gpu_mem_time_sum" => mem_sum(v, false),
        "cuda_gpu_mem_size_sum" => mem_sum(v, true),
        "cuda_gpu_sum" => gpu_sum(v, req),
        "cuda_gpu_trace" => gpu_trace(v, req),
        "cuda_api_sum" => api_sum(v),
        "cuda_api_trace" => api_trace(v),
        "cuda_kern_exec_sum" => kern_exec(v, req, false),
        "cuda_kern_exec_trace" => kern_exec(v, req, true),
        "nvtx_sum" => nvtx::range_sum(v, None),
        "nvtx_pushpop_sum" => nvtx::range_sum(v, Some(RangeStyle::PushPop)),
        "nvtx_startend_sum" => nvtx::range_sum(v, Some(RangeStyle::StartEnd)),
        "nvtx_kern_sum" => nvtx::kern_sum(v, req),
        "nvtx_gpu_proj_sum" => nvtx::gpu_proj(v, false),
        "nvtx_gpu_proj_trace" => nvtx::gpu_proj(v, true),
        "osrt_sum" => osrt_sum(v),
        "um_sum" => um_sum(v, req),
        other => Table::new(other, "", Vec::new()).skip("unknown report"),
    }
}

fn title(name: &str) -> &'static str {
    REPORTS
        .iter()
        .find(|r| r.name == name)
        .map_or("", |r| r.title)
}

fn kern_sum(v: &View<'_>, req: &Request, gb: bool) -> Table {
    let name = if gb {
        "cuda_gpu_kern_gb_sum"
    } else {
        "cuda_gpu_kern_sum"
    };
    let mut cols = sum_cols("Instances");
    if gb {
        cols.push(col("GridXYZ", Unit::None));
        cols.push(col("BlockXYZ", Unit::None));
    }
    cols.push(col("Name", Unit::None));
    let mut t = Table::new(req.spec.clone(), title(name), cols);
    let Some(kernels) = v.kernels.as_deref() else {
        return no_data(t, "CUDA kernel data");
    };
    base_note(v, req, &mut t);
    if gb {
        // (the launch is read for this report: none only if the file has
        // no kernel table columns for it, then printed empty)
        type Dims = Option<([i64; 3], [i64; 3])>;
        let mut groups: FastMap<(NameId, Dims), Agg> = FastMap::default();
        for k in kernels {
            let dims = v.data.launch(k).map(|l| (l.grid, l.block));
            groups
                .entry((v.kernel_name(k, req.names), dims))
                .or_default()
                .add(dur(k.start_ns, k.end_ns));
        }
        // nsys orders by total, instances, name: ties in all three keep
        // grid and block order here
        t.rows = sum_rows(
            groups,
            |(n, dims)| {
                let dim = |d: Option<[i64; 3]>| d.map_or(Cell::Null, |d| Cell::Text(grid_text(d)));
                vec![
                    dim(dims.map(|d| d.0)),
                    dim(dims.map(|d| d.1)),
                    text(v.name(*n)),
                ]
            },
            true,
            |k| (v.name(k.0).as_bytes(), k.1),
        );
        t.rows.sort_by(|a, b| {
            b[1].num()
                .total_cmp(&a[1].num())
                .then(a[2].num().total_cmp(&b[2].num()))
                .then_with(|| cmp_cells(&a[10..11], &b[10..11]))
                .then_with(|| cmp_cells(&a[8..10], &b[8..10]))
        });
    } else {
        let mut groups: FastMap<NameId, Agg> = FastMap::default();
        for k in kernels {
            groups
                .entry(v.kernel_name(k, req.names))
                .or_default()
                .add(dur(k.start_ns, k.end_ns));
        }
        t.rows = sum_rows(
            groups,
            |n| vec![text(v.name(*n))],
            true,
            |n| v.name(*n).as_bytes(),
        );
    }
    t
}

fn mem_sum(v: &View<'_>, by_size: bool) -> Table {
    let name = if by_size {
        "cuda_gpu_mem_size_sum"
    } else {
        "cuda_gpu_mem_time_sum"
    };
    let cols = if by_size {
        vec![
            col("Total", Unit::Bytes),
            col("Count", Unit::None),
            col("Avg", Unit::Bytes),
            col("Med", Unit::Bytes),
            col("Min", Unit::Bytes),
            col("Max", Unit::Bytes),
            col("StdDev", Unit::Bytes),
            col("Operation", Unit::None),
        ]
    } else {
        let mut c = sum_cols("Count");
        c.push(col("Operation", Unit::None));
        c
    };
    let mut t = Table::new(name, title(name), cols);
    let Some(ops) = v.memops.as_deref() else {
        return no_data(t, "GPU memory data");
    };
    let mut groups: FastMap<NameId, Agg> = FastMap::default();
    let mut no_bytes = 0u64;
    for m in ops {
        let x = if by_size {
            match m.bytes {
                Some(b) => b,
                None => {
                    no_bytes += 1;
                    continue;
                }
            }
        } else {
            dur(m.start_ns, m.end_ns)
        };
        groups.entry(m.name).or_default().add(x);
    }
    if no_bytes > 0 {
        t.notes.push(format!(
            "{no_bytes} operations without a byte count are not counted"
        ));
    }
    if by_size {
        let mut rows: Vec<(i64, Vec<Cell>)> = groups
            .into_iter()
            .map(|(n, a)| {
                let s = a.finish();
                let mut row = vec![Cell::Int(s.total), Cell::Int(s.count)];
                row.extend(s.mem_cells());
                row.push(text(v.name(n)));
                (s.total, row)
            })
            .collect();
        rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| cmp_cells(&a.1[7..], &b.1[7..])));
        t.rows = rows.into_iter().map(|(_, r)| r).collect();
    } else {
        t.rows = sum_rows(
            groups,
            |n| vec![text(v.name(*n))],
            false,
            |n| v.name(*n).as_bytes(),
        );
    }
    t
}

fn gpu_sum(v: &View<'_>, req: &Request) -> Table {
    let mut cols = sum_cols("Instances");
    cols.push(col("Category", Unit::None));
    cols.push(col("Operation", Unit::None));
    let mut t = Table::new(req.spec.clone(), title("cuda_gpu_sum"), cols);
    if v.kernels.is_none() && v.memops.is_none() {
        return no_data(t, "GPU kernel/memory operations data");
    }
    base_note(v, req, &mut t);
    // nsys groups by name alone; the category is the first row's
    let mut groups: FastMap<NameId, Agg> = FastMap::default();
    let mut category: FastMap<NameId, &'static str> = FastMap::default();
    for k in v.kernels.as_deref().unwrap_or(&[]) {
        let n = v.kernel_name(k, req.names);
        groups.entry(n).or_default().add(dur(k.start_ns, k.end_ns));
        category.entry(n).or_insert("CUDA_KERNEL");
    }
    for m in v.memops.as_deref().unwrap_or(&[]) {
        groups
            .entry(m.name)
            .or_default()
            .add(dur(m.start_ns, m.end_ns));
        category.entry(m.name).or_insert("MEMORY_OPER");
    }
    t.rows = sum_rows(
        groups,
        |n| {
            vec![
                text(category.get(n).copied().unwrap_or("")),
                text(v.name(*n)),
            ]
        },
        false,
        |n| v.name(*n).as_bytes(),
    );
    t
}

fn device_text(v: &View<'_>, device: i64) -> String {
    match v.data.gpu_names.iter().find(|(d, _)| *d == device) {
        Some((_, n)) => format!("{} ({device})", v.name(*n)),
        // nsys's printf('%s (%d)') with a NULL name
        None => format!(" ({device})"),
    }
}

fn throughput(bytes: Option<i64>, duration: i64) -> Cell {
    match bytes {
        // nsys: bytes * (1000000000 / duration), an integer division
        Some(b) if duration > 0 => Cell::Int(b.saturating_mul(1_000_000_000 / duration)),
        _ => Cell::Null,
    }
}

fn gpu_trace(v: &View<'_>, req: &Request) -> Table {
    let cols = vec![
        col("Start", Unit::Timestamp),
        col("Duration", Unit::Duration),
        col("CorrId", Unit::None),
        col("GrdX", Unit::None),
        col("GrdY", Unit::None),
        col("GrdZ", Unit::None),
        col("BlkX", Unit::None),
        col("BlkY", Unit::None),
        col("BlkZ", Unit::None),
        col("Reg/Trd", Unit::None),
        col("StcSMem", Unit::Bytes),
        col("DymSMem", Unit::Bytes),
        col("Bytes", Unit::Bytes),
        col("Throughput", Unit::Throughput),
        col("SrcMemKd", Unit::None),
        col("DstMemKd", Unit::None),
        col("Device", Unit::None),
        col("Ctx", Unit::None),
        col("GreenCtx", Unit::None),
        col("Strm", Unit::None),
        col("Name", Unit::None),
    ];
    let mut t = Table::new(req.spec.clone(), title("cuda_gpu_trace"), cols);
    if v.kernels.is_none() && v.memops.is_none() {
        return no_data(t, "GPU trace data");
    }
    base_note(v, req, &mut t);
    let green = |g: Option<i64>| match g {
        Some(0) | None => Cell::Null,
        Some(x) => Cell::Int(x),
    };
    let mut rows: Vec<(i64, u8, usize, Vec<Cell>)> = Vec::new();
    for (i, k) in v.kernels.as_deref().unwrap_or(&[]).iter().enumerate() {
        let d = dur(k.start_ns, k.end_ns);
        // (the launch is read for this report: none, printed empty, only
        // if the reader could not give it)
        let l = v.data.launch(k);
        let int = |f: fn(&KernelLaunch) -> i64| l.map_or(Cell::Null, |l| Cell::Int(f(l)));
        let opt = |f: fn(&KernelLaunch) -> Option<i64>| Cell::opt(l.and_then(f));
        rows.push((
            k.start_ns,
            0,
            i,
            vec![
                Cell::Int(k.start_ns),
                Cell::Int(d),
                Cell::Int(k.correlation),
                int(|l| l.grid[0]),
                int(|l| l.grid[1]),
                int(|l| l.grid[2]),
                int(|l| l.block[0]),
                int(|l| l.block[1]),
                int(|l| l.block[2]),
                opt(|l| l.registers),
                opt(|l| l.static_smem),
                opt(|l| l.dynamic_smem),
                Cell::Null,
                Cell::Null,
                Cell::Null,
                Cell::Null,
                l.map_or(Cell::Null, |l| Cell::Text(device_text(v, l.device))),
                opt(|l| l.context),
                l.map_or(Cell::Null, |l| green(l.green_context)),
                int(|l| l.stream),
                // names as ids: a String each for a million rows cost more
                Cell::Name(v.kernel_name(k, req.names)),
            ],
        ));
    }
    for (i, m) in v.memops.as_deref().unwrap_or(&[]).iter().enumerate() {
        let d = dur(m.start_ns, m.end_ns);
        let kind = |k: Option<NameId>| k.map_or(Cell::Null, Cell::Name);
        let mut row = vec![
            Cell::Int(m.start_ns),
            Cell::Int(d),
            Cell::Int(m.correlation),
        ];
        row.extend(std::iter::repeat_n(Cell::Null, 9));
        row.extend([
            Cell::opt(m.bytes),
            throughput(m.bytes, d),
            kind(m.src_kind),
            kind(m.dst_kind),
            Cell::Text(device_text(v, m.device)),
            Cell::opt(m.context),
            green(m.green_context),
            Cell::Int(m.stream),
            Cell::Name(m.name),
        ]);
        rows.push((m.start_ns, 1 + u8::from(m.is_set), i, row));
    }
    rows.sort_by_key(|r| (r.0, r.1, r.2));
    t.rows = rows.into_iter().map(|r| r.3).collect();
    t
}

fn api_sum(v: &View<'_>) -> Table {
    let mut cols = sum_cols("Num Calls");
    cols.push(col("Name", Unit::None));
    let mut t = Table::new("cuda_api_sum", title("cuda_api_sum"), cols);
    let Some(api) = v.api.as_deref() else {
        return no_data(t, "CUDA trace data");
    };
    // grouped by the stored name, printed without the version suffix (as nsys)
    let mut groups: FastMap<NameId, Agg> = FastMap::default();
    let mut printed: FastMap<NameId, NameId> = FastMap::default();
    for a in api {
        groups
            .entry(a.raw_name)
            .or_default()
            .add(dur(a.start_ns, a.end_ns));
        printed.entry(a.raw_name).or_insert(a.name);
    }
    // ties in the file's string-id order (nsys groups by nameId)
    t.rows = sum_rows(
        groups,
        |raw| vec![text(v.name(printed.get(raw).copied().unwrap_or(*raw)))],
        false,
        |n| *n,
    );
    t
}

fn api_trace(v: &View<'_>) -> Table {
    let cols = vec![
        col("Start", Unit::Timestamp),
        col("Duration", Unit::Duration),
        col("Name", Unit::None),
        col("Result", Unit::None),
        col("CorrID", Unit::None),
        col("Pid", Unit::None),
        col("Tid", Unit::None),
        col("T-Pri", Unit::None),
        col("Thread Name", Unit::None),
    ];
    let mut t = Table::new("cuda_api_trace", title("cuda_api_trace"), cols);
    let Some(api) = v.api.as_deref() else {
        return no_data(t, "CUDA trace data");
    };
    let mut order: Vec<usize> = (0..api.len()).collect();
    order.sort_by_key(|&i| (api[i].start_ns, i));
    t.rows = order
        .into_iter()
        .map(|i| {
            let a = &api[i];
            let (prio, tname) = v
                .data
                .thread_names
                .get(&(a.pid, a.tid))
                .copied()
                .unwrap_or((None, None));
            vec![
                Cell::Int(a.start_ns),
                Cell::Int(dur(a.start_ns, a.end_ns)),
                text(v.name(a.name)),
                Cell::opt(a.result),
                Cell::Int(a.correlation),
                Cell::Int(a.pid as i64),
                Cell::Int(a.tid as i64),
                Cell::opt(prio),
                tname.map_or(Cell::Null, |n| text(v.name(n))),
            ]
        })
        .collect();
    t
}

/// The API calls of each (pid, correlation id): one sorted vector and a
/// binary search (a map of vectors costs an allocation per call, millions on
/// a large export). The keys are held in a vector of their own: searching
/// through the row references fetched two rows from memory at every step,
/// the larger part of the kernel and projection reports' own time.
pub struct ApiIndex<'v> {
    keys: Vec<(u64, i64)>,
    rows: Vec<&'v ApiRow>,
}

impl<'v> ApiIndex<'v> {
    /// The calls with this (pid, correlation id), in file order; `None`
    /// when there is none.
    pub fn get(&self, key: &(u64, i64)) -> Option<&[&'v ApiRow]> {
        let span = self.span(key);
        (!span.is_empty()).then(|| &self.rows[span])
    }
}

impl<'v> ApiIndex<'v> {
    /// Positions of the calls with this (pid, correlation id) (empty when
    /// there is none): each call has one position, `0..len()`.
    pub fn span(&self, key: &(u64, i64)) -> std::ops::Range<usize> {
        let lo = self.keys.partition_point(|k| k < key);
        let hi = lo + self.keys[lo..].partition_point(|k| k == key);
        lo..hi
    }

    /// [`span`](ApiIndex::span) of every key (`None`: no calls), found by
    /// one merge of the keys, sorted, with the index's. Hand-written for
    /// speed: a binary search per kernel, made twice per kernel by the
    /// kernel report, was a fifth of its own time on the 1 M-kernel export
    /// (a cache miss at most steps of each search).
    pub fn spans(&self, keys: &[Option<(u64, i64)>]) -> Vec<std::ops::Range<usize>> {
        use rayon::slice::ParallelSliceMut;
        let mut out = vec![0..0; keys.len()];
        let mut order: Vec<(u64, i64, usize)> = keys
            .iter()
            .enumerate()
            .filter_map(|(i, k)| k.map(|(pid, corr)| (pid, corr, i)))
            .collect();
        order.par_sort_unstable();
        let mut lo = 0;
        let mut last: Option<((u64, i64), std::ops::Range<usize>)> = None;
        for (pid, corr, i) in order {
            let key = (pid, corr);
            let span = match &last {
                Some((k, span)) if *k == key => span.clone(),
                _ => {
                    while self.keys.get(lo).is_some_and(|k| *k < key) {
                        lo += 1;
                    }
                    let mut hi = lo;
                    while self.keys.get(hi) == Some(&key) {
                        hi += 1;
                    }
                    last = Some((key, lo..hi));
                    lo..hi
                }
            };
            out[i] = span;
        }
        out
    }

    /// The call at position `i`.
    pub fn at(&self, i: usize) -> &'v ApiRow {
        self.rows[i]
    }

    /// Number of calls.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no calls.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// Index `api` by (pid, correlation id).
pub fn api_index(api: &[ApiRow]) -> ApiIndex<'_> {
    use rayon::slice::ParallelSliceMut;
    // by key, then file position: calls of one key stay in file order
    let mut order: Vec<((u64, i64), usize)> = api
        .iter()
        .enumerate()
        .map(|(i, a)| ((a.pid, a.correlation), i))
        .collect();
    order.par_sort_unstable();
    ApiIndex {
        keys: order.iter().map(|o| o.0).collect(),
        rows: order.iter().map(|o| &api[o.1]).collect(),
    }
}

fn kern_exec(v: &View<'_>, req: &Request, trace: bool) -> Table {
    let name = if trace {
        "cuda_kern_exec_trace"
    } else {
        "cuda_kern_exec_sum"
    };
    let cols = if trace {
        vec![
            col("API Start", Unit::Timestamp),
            col("API Dur", Unit::Duration),
            col("Queue Start", Unit::Timestamp),
            col("Queue Dur", Unit::Duration),
            col("Kernel Start", Unit::Timestamp),
            col("Kernel Dur", Unit::Duration),
            col("Total Dur", Unit::Duration),
            col("PID", Unit::None),
            col("TID", Unit::None),
            col("DevId", Unit::None),
            col("API Function", Unit::None),
            col("GridXYZ", Unit::None),
            col("BlockXYZ", Unit::None),
            col("Kernel Name", Unit::None),
        ]
    } else {
        let mut c = vec![
            col("PID", Unit::None),
            col("TID", Unit::None),
            col("DevId", Unit::None),
            col("Count", Unit::None),
            col("QCount", Unit::None),
        ];
        for p in ["T", "A", "Q", "K"] {
            for s in ["Avg", "Med", "Min", "Max", "StdDev"] {
                let h: &'static str = match (p, s) {
                    ("T", "Avg") => "TAvg",
                    ("T", "Med") => "TMed",
                    ("T", "Min") => "TMin",
                    ("T", "Max") => "TMax",
                    ("T", _) => "TStdDev",
                    ("A", "Avg") => "AAvg",
                    ("A", "Med") => "AMed",
                    ("A", "Min") => "AMin",
                    ("A", "Max") => "AMax",
                    ("A", _) => "AStdDev",
                    ("Q", "Avg") => "QAvg",
                    ("Q", "Med") => "QMed",
                    ("Q", "Min") => "QMin",
                    ("Q", "Max") => "QMax",
                    ("Q", _) => "QStdDev",
                    (_, "Avg") => "KAvg",
                    (_, "Med") => "KMed",
                    (_, "Min") => "KMin",
                    (_, "Max") => "KMax",
                    _ => "KStdDev",
                };
                c.push(col(h, Unit::Duration));
            }
        }
        c.push(col("API Name", Unit::None));
        c.push(col("Kernel Name", Unit::None));
        c
    };
    let mut t = Table::new(req.spec.clone(), title(name), cols);
    let Some(kernels) = v.kernels.as_deref() else {
        return no_data(t, "CUDA kernel data");
    };
    let Some(api) = v.api.as_deref() else {
        return no_data(t, "CUDA API data");
    };
    base_note(v, req, &mut t);
    let index = api_index(api);
    type Key = (u64, u64, Option<i64>, NameId, NameId);
    let mut groups: FastMap<Key, [Agg; 4]> = FastMap::default();
    let mut rows: Vec<(i64, usize, Vec<Cell>)> = Vec::new();
    let mut unmatched = 0u64;
    for (i, k) in kernels.iter().enumerate() {
        let Some(calls) = k.pid.and_then(|p| index.get(&(p, k.correlation))) else {
            unmatched += 1;
            continue;
        };
        let kname = v.kernel_name(k, req.names);
        for r in calls {
            let api_dur = dur(r.start_ns, r.end_ns);
            let queue = (k.start_ns - r.end_ns >= 0).then(|| k.start_ns - r.end_ns);
            let kdur = dur(k.start_ns, k.end_ns);
            let total = r.end_ns.max(k.end_ns) - r.start_ns;
            if trace {
                let dims = |f: fn(&KernelLaunch) -> [i64; 3]| {
                    let l = v.data.launch(k);
                    l.map_or(Cell::Null, |l| Cell::Text(grid_text(f(l))))
                };
                rows.push((
                    r.start_ns,
                    i,
                    vec![
                        Cell::Int(r.start_ns),
                        Cell::Int(api_dur),
                        queue.map_or(Cell::Null, |_| Cell::Int(r.end_ns)),
                        Cell::opt(queue),
                        Cell::Int(k.start_ns),
                        Cell::Int(kdur),
                        Cell::Int(total),
                        Cell::Int(r.pid as i64),
                        Cell::Int(r.tid as i64),
                        Cell::opt(v.data.launch(k).map(|l| l.device)),
                        Cell::Name(r.name),
                        dims(|l| l.grid),
                        dims(|l| l.block),
                        Cell::Name(kname),
                    ],
                ));
            } else {
                let g = groups
                    .entry((
                        r.pid,
                        r.tid,
                        v.data.launch(k).map(|l| l.device),
                        r.name,
                        kname,
                    ))
                    .or_default();
                g[0].add(total);
                g[1].add(api_dur);
                if let Some(q) = queue {
                    g[2].add(q);
                }
                g[3].add(kdur);
            }
        }
    }
    if unmatched > 0 {
        t.notes.push(format!(
            "{unmatched} kernels have no launch call in the input and are not in this report"
        ));
    }
    if trace {
        rows.sort_by_key(|r| (r.0, r.1));
        t.rows = rows.into_iter().map(|r| r.2).collect();
        return t;
    }
    let mut out: Vec<(f64, Vec<Cell>)> = groups
        .into_iter()
        .map(|((pid, tid, dev, api_name, kname), aggs)| {
            let [tot, a, q, kd] = aggs;
            let count = tot.count();
            let qcount = q.count();
            let mut row = vec![
                Cell::Int(pid as i64),
                Cell::Int(tid as i64),
                Cell::opt(dev),
                Cell::Int(count),
                Cell::Int(qcount),
            ];
            let ts = tot.finish();
            let tavg = ts.mean.map_or(f64::NEG_INFINITY, table::round1);
            row.extend(ts.dur_cells());
            row.extend(a.finish().dur_cells());
            if qcount == 0 {
                // no queue times: avg, median, min and max are NULL, the
                // std dev 0.0 (nsys's `stdev` aggregate, from the SQLite
                // it ships, gives 0.0 for fewer than two values, none too)
                row.extend(std::iter::repeat_n(Cell::Null, 4));
                row.push(Cell::Round1(0.0));
            } else {
                row.extend(q.finish().dur_cells());
            }
            row.extend(kd.finish().dur_cells());
            row.push(text(v.name(api_name)));
            row.push(text(v.name(kname)));
            (tavg, row)
        })
        .collect();
    out.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| cmp_cells(&a.1[..3], &b.1[..3]))
            .then_with(|| cmp_cells(&a.1[25..], &b.1[25..]))
    });
    t.rows = out.into_iter().map(|r| r.1).collect();
    t
}

fn osrt_sum(v: &View<'_>) -> Table {
    let mut cols = sum_cols("Num Calls");
    cols.push(col("Name", Unit::None));
    let mut t = Table::new("osrt_sum", title("osrt_sum"), cols);
    let Some(osrt) = v.osrt.as_deref() else {
        return no_data(t, "OS Runtime trace data");
    };
    let mut groups: FastMap<NameId, Agg> = FastMap::default();
    for o in osrt {
        groups
            .entry(o.name)
            .or_default()
            .add(dur(o.start_ns, o.end_ns));
    }
    // ties in the file's string-id order (nsys groups by nameId)
    t.rows = sum_rows(groups, |n| vec![text(v.name(*n))], false, |n| *n);
    t
}

fn um_sum(v: &View<'_>, req: &Request) -> Table {
    let cols = vec![
        col("Virtual Address", Unit::None),
        col("HtoD Migration size", Unit::Bytes),
        col("DtoH Migration size", Unit::Bytes),
        col("CPU Page Faults", Unit::None),
        col(" GPU Page Faults", Unit::None),
        col("Migration Throughput", Unit::Throughput),
    ];
    let mut t = Table::new(req.spec.clone(), title("um_sum"), cols);
    let (Some(faults), Some(mem)) = (v.um.as_deref(), v.memops.as_deref()) else {
        return no_data(t, "CUDA Unified Memory page-fault data");
    };
    #[derive(Default)]
    struct Addr {
        cpu: Option<i64>,
        gpu: Option<i64>,
        h2d: Option<(i64, i64)>,
        d2h: Option<(i64, i64)>,
    }
    let mut by: FastMap<i64, Addr> = FastMap::default();
    for f in faults {
        let a = by.entry(f.address).or_default();
        if f.gpu {
            *a.gpu.get_or_insert(0) += f.faults;
        } else {
            *a.cpu.get_or_insert(0) += 1;
        }
    }
    for m in mem {
        let slot = match m.copy_kind {
            Some(11) => 0,
            Some(12) => 1,
            _ => continue,
        };
        let Some(addr) = m.virtual_address else {
            continue;
        };
        let a = by.entry(addr).or_default();
        let s = if slot == 0 { &mut a.h2d } else { &mut a.d2h };
        let e = s.get_or_insert((0, 0));
        e.0 = e.0.saturating_add(m.bytes.unwrap_or(0));
        e.1 = e.1.saturating_add(dur(m.start_ns, m.end_ns));
    }
    let mut rows: Vec<(Option<i64>, i64, Vec<Cell>)> = by
        .into_iter()
        .map(|(addr, a)| {
            let migrated = a.h2d.is_some() || a.d2h.is_some();
            let bytes = a.h2d.map_or(0, |x| x.0) + a.d2h.map_or(0, |x| x.0);
            let time = a.h2d.map_or(0, |x| x.1) + a.d2h.map_or(0, |x| x.1);
            let tput = (migrated && time > 0).then(|| bytes.saturating_mul(1_000_000_000 / time));
            (
                tput,
                addr,
                vec![
                    // nsys prints addresses in hexadecimal
                    Cell::Text(format!("0x{addr:x}")),
                    Cell::opt(a.h2d.map(|x| x.0)),
                    Cell::opt(a.d2h.map(|x| x.0)),
                    Cell::opt(a.cpu),
                    Cell::opt(a.gpu),
                    Cell::opt(tput),
                ],
            )
        })
        .collect();
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    rows.truncate(req.rows);
    t.rows = rows.into_iter().map(|r| r.2).collect();
    t
}

/// The tables `report` reads.
pub fn tables_for(report: &str) -> Tables {
    let t = Tables::default();
    match report {
        "cuda_gpu_kern_sum" => Tables { kernels: true, ..t },
        "cuda_gpu_kern_gb_sum" => Tables {
            kernels: true,
            kernel_launch: true,
            ..t
        },
        "cuda_gpu_mem_time_sum" | "cuda_gpu_mem_size_sum" => Tables { memops: true, ..t },
        "cuda_gpu_sum" => Tables {
            kernels: true,
            memops: true,
            ..t
        },
        "cuda_gpu_trace" => Tables {
            kernels: true,
            kernel_launch: true,
            memops: true,
            gpus: true,
            ..t
        },
        "cuda_api_sum" => Tables { api: true, ..t },
        "cuda_api_trace" => Tables {
            api: true,
            thread_names: true,
            ..t
        },
        "cuda_kern_exec_sum" | "cuda_kern_exec_trace" => Tables {
            kernels: true,
            kernel_launch: true,
            api: true,
            ..t
        },
        "nvtx_sum" | "nvtx_pushpop_sum" | "nvtx_startend_sum" => Tables { nvtx: true, ..t },
        "nvtx_kern_sum" => Tables {
            kernels: true,
            api: true,
            nvtx: true,
            launching_only: true,
            ..t
        },
        "nvtx_gpu_proj_sum" | "nvtx_gpu_proj_trace" => Tables {
            kernels: true,
            memops: true,
            api: true,
            nvtx: true,
            launching_only: true,
            ..t
        },
        "osrt_sum" => Tables { osrt: true, ..t },
        "um_sum" => Tables {
            memops: true,
            um: true,
            ..t
        },
        _ => Tables::all(),
    }
}

/// Whether the input can answer `report` at all (for the notes of nvprof
/// and Kineto input).
pub fn applies(data: &StatsData, report: &str) -> Option<String> {
    let src = data.source;
    match report {
        "osrt_sum" if src != Source::Nsys => {
            Some(format!("{} input has no OS runtime trace", src.as_str()))
        }
        "um_sum" if src != Source::Nsys => Some(format!(
            "{} input has no unified-memory page-fault data",
            src.as_str()
        )),
        "nvtx_startend_sum" if src != Source::Nsys => Some(format!(
            "{} input does not tell push/pop from start/end ranges: nvtx_sum and \
             nvtx_pushpop_sum report them all",
            src.as_str()
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index's calls of each key are those a scan of the calls finds,
    /// in file order, for keys present, absent, repeated and at the ends.
    #[test]
    fn api_index_finds_what_a_scan_finds() {
        let api: Vec<ApiRow> = (0..5000i64)
            .map(|i| ApiRow {
                start_ns: i,
                end_ns: i + 1,
                raw_name: 0,
                name: 0,
                pid: (i * 7 % 3) as u64,
                tid: 1,
                // repeated and missing correlation ids
                correlation: (i * 7919) % 1700 - 5,
                result: None,
            })
            .collect();
        let index = api_index(&api);
        assert_eq!(index.len(), api.len());
        for pid in 0..4u64 {
            for corr in -8..1710i64 {
                let want: Vec<i64> = api
                    .iter()
                    .filter(|a| (a.pid, a.correlation) == (pid, corr))
                    .map(|a| a.start_ns)
                    .collect();
                let got: Vec<i64> = index
                    .span(&(pid, corr))
                    .map(|p| index.at(p).start_ns)
                    .collect();
                assert_eq!(got, want, "{pid} {corr}");
                let by_get: Vec<i64> = index
                    .get(&(pid, corr))
                    .unwrap_or(&[])
                    .iter()
                    .map(|a| a.start_ns)
                    .collect();
                assert_eq!(by_get, want);
            }
        }
        // every key's span at once, by the merge: as one search each finds
        // it (keys repeated, missing, absent and in no order)
        let keys: Vec<Option<(u64, i64)>> = (0..6000i64)
            .map(|i| (i % 11 != 0).then(|| ((i % 4) as u64, (i * 7717) % 1800 - 40)))
            .collect();
        let spans = index.spans(&keys);
        assert_eq!(spans.len(), keys.len());
        for (k, s) in keys.iter().zip(&spans) {
            let want = k.map_or(0..0, |k| index.span(&k));
            assert_eq!(*s, want, "{k:?}");
        }
    }
}
