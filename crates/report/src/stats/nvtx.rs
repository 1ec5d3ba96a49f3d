//! The NVTX reports: range sums, kernels by enclosing range, and ranges
//! projected onto the GPU.

use rprof_model::FastMap;
use rprof_model::stats_data::{NameId, RangeStyle};

use super::table::{Agg, Cell, Table, Unit, col, round1};
use super::{Request, View, api_index, cmp_cells, no_data, sum_cols, sum_rows, text, title};

/// `nvtx_sum` (style `None`: grouped by name and style),
/// `nvtx_pushpop_sum`, `nvtx_startend_sum`.
pub fn range_sum(v: &View<'_>, style: Option<RangeStyle>) -> Table {
    let name = match style {
        None => "nvtx_sum",
        Some(RangeStyle::PushPop) => "nvtx_pushpop_sum",
        Some(RangeStyle::StartEnd) => "nvtx_startend_sum",
    };
    let mut cols = sum_cols("Instances");
    if style.is_none() {
        cols.push(col("Style", Unit::None));
    }
    cols.push(col("Range", Unit::None));
    let mut t = Table::new(name, title(name), cols);
    let Some(ranges) = v.nvtx.as_deref() else {
        return no_data(t, "NV Tools Extension (NVTX) data");
    };
    let max = v.data.nvtx_max_ns;
    let mut groups: FastMap<(NameId, Option<RangeStyle>), Agg> = FastMap::default();
    for r in ranges {
        if style.is_some_and(|s| s != r.style) {
            continue;
        }
        let Some(end) = r.end_ns.or(max) else {
            continue;
        };
        let key = (r.name, style.is_none().then_some(r.style));
        groups
            .entry(key)
            .or_default()
            .add(end.saturating_sub(r.start_ns));
    }
    t.rows = sum_rows(
        groups,
        |(n, s)| {
            let mut c = Vec::new();
            if let Some(s) = s {
                c.push(text(s.as_str()));
            }
            c.push(text(v.name(*n)));
            c
        },
        false,
        |k| (v.name(k.0).as_bytes(), k.1),
    );
    t
}

/// A range as nsys's kernel and projection reports index it: only ranges
/// that end on their own thread; open ranges end at the last range time.
#[derive(Clone, Copy, Debug)]
struct Ridx {
    id: i64,
    start: i64,
    end: i64,
    pid: u64,
    tid: u64,
    name: NameId,
    style: RangeStyle,
}

fn range_index(v: &View<'_>) -> Vec<Ridx> {
    let max = v.data.nvtx_range_max_ns;
    v.nvtx
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .filter(|r| !r.ends_elsewhere)
        .filter_map(|r| {
            Some(Ridx {
                id: r.id,
                start: r.start_ns,
                end: r.end_ns.or(max)?,
                pid: r.pid,
                tid: r.tid,
                name: r.name,
                style: r.style,
            })
        })
        .collect()
}

/// For each query `(pid, tid, start, end)`, the indices of the ranges of
/// the same thread with `start <= q.start` and `end >= q.end`. A sweep per
/// thread in start order keeps the ranges open at the current start, so the
/// cost is the queries times the nesting depth.
fn enclosing(ranges: &[Ridx], queries: &[(u64, u64, i64, i64)]) -> Vec<Vec<u32>> {
    let mut by_thread: FastMap<(u64, u64), (Vec<u32>, Vec<u32>)> = FastMap::default();
    for (i, r) in ranges.iter().enumerate() {
        by_thread
            .entry((r.pid, r.tid))
            .or_default()
            .0
            .push(i as u32);
    }
    for (i, q) in queries.iter().enumerate() {
        if let Some(e) = by_thread.get_mut(&(q.0, q.1)) {
            e.1.push(i as u32);
        }
    }
    let mut out = vec![Vec::new(); queries.len()];
    for (_, (mut rs, mut qs)) in by_thread {
        if qs.is_empty() {
            continue;
        }
        rs.sort_by_key(|&i| (ranges[i as usize].start, i));
        qs.sort_by_key(|&i| (queries[i as usize].2, i));
        let mut next = 0;
        let mut active: Vec<u32> = Vec::new();
        for qi in qs {
            let q = queries[qi as usize];
            while next < rs.len() && ranges[rs[next] as usize].start <= q.2 {
                active.push(rs[next]);
                next += 1;
            }
            active.retain(|&r| ranges[r as usize].end >= q.2);
            out[qi as usize] = active
                .iter()
                .copied()
                .filter(|&r| ranges[r as usize].end >= q.3)
                .collect();
        }
    }
    out
}

/// `nvtx_kern_sum`.
pub fn kern_sum(v: &View<'_>, req: &Request) -> Table {
    let cols = vec![
        col("NVTX Range", Unit::None),
        col("Style", Unit::None),
        col("PID", Unit::None),
        col("TID", Unit::None),
        col("NVTX Inst", Unit::None),
        col("Kern Inst", Unit::None),
        col("Total Time", Unit::Duration),
        col("Avg", Unit::Duration),
        col("Med", Unit::Duration),
        col("Min", Unit::Duration),
        col("Max", Unit::Duration),
        col("StdDev", Unit::Duration),
        col("Kernel Name", Unit::None),
    ];
    let mut t = Table::new(req.spec.clone(), title("nvtx_kern_sum"), cols);
    if v.nvtx.is_none() {
        return no_data(t, "NV Tools Extension (NVTX) data");
    }
    let Some(kernels) = v.kernels.as_deref() else {
        return no_data(t, "CUDA kernel data");
    };
    let Some(api) = v.api.as_deref() else {
        return no_data(t, "CUDA API data");
    };
    super::base_note(v, req, &mut t);
    let ranges = range_index(v);
    let index = api_index(api);
    // one query per launch call that launched a kernel
    let mut call_slot: FastMap<*const rprof_model::stats_data::ApiRow, u32> = FastMap::default();
    let mut queries = Vec::new();
    for k in kernels {
        if let Some(calls) = k.pid.and_then(|p| index.get(&(p, k.correlation))) {
            for c in calls {
                call_slot.entry(*c as *const _).or_insert_with(|| {
                    queries.push((c.pid, c.tid, c.start_ns, c.end_ns));
                    (queries.len() - 1) as u32
                });
            }
        }
    }
    let found = enclosing(&ranges, &queries);
    type Key = (
        Option<u64>,
        Option<u64>,
        Option<(NameId, RangeStyle)>,
        NameId,
    );
    #[derive(Default)]
    struct Group {
        ranges: Vec<i64>,
        kernels: Vec<u32>,
    }
    let mut groups: FastMap<Key, Group> = FastMap::default();
    for (ki, k) in kernels.iter().enumerate() {
        let kname = v.kernel_name(k, req.names);
        let calls = k.pid.and_then(|p| index.get(&(p, k.correlation)));
        let Some(calls) = calls else {
            groups
                .entry((None, None, None, kname))
                .or_default()
                .kernels
                .push(ki as u32);
            continue;
        };
        for c in calls {
            let slot = call_slot.get(&(*c as *const _)).copied().unwrap_or(0);
            let rs = &found[slot as usize];
            if rs.is_empty() {
                groups
                    .entry((Some(c.pid), Some(c.tid), None, kname))
                    .or_default()
                    .kernels
                    .push(ki as u32);
            }
            for &ri in rs {
                let r = &ranges[ri as usize];
                let g = groups
                    .entry((Some(c.pid), Some(c.tid), Some((r.name, r.style)), kname))
                    .or_default();
                g.ranges.push(r.id);
                g.kernels.push(ki as u32);
            }
        }
    }
    let mut rows: Vec<(Vec<Cell>, i64)> = groups
        .into_iter()
        .map(|((pid, tid, range, kname), mut g)| {
            g.ranges.sort_unstable();
            g.ranges.dedup();
            g.kernels.sort_unstable();
            g.kernels.dedup();
            // each kernel once, however many ranges of this name enclose it
            let mut agg = Agg::default();
            for &ki in &g.kernels {
                let k = &kernels[ki as usize];
                agg.add(k.end_ns.saturating_sub(k.start_ns));
            }
            let s = agg.finish();
            let mut row = vec![
                range.map_or(Cell::Null, |(n, _)| text(v.name(n))),
                range.map_or(Cell::Null, |(_, st)| text(st.as_str())),
                Cell::opt(pid.map(|p| p as i64)),
                Cell::opt(tid.map(|p| p as i64)),
                Cell::Int(g.ranges.len() as i64),
                Cell::Int(g.kernels.len() as i64),
                Cell::Int(s.total),
            ];
            row.extend(s.dur_cells());
            row.push(text(v.name(kname)));
            (row, s.total)
        })
        .collect();
    rows.sort_by(|a, b| {
        cmp_cells(&a.0[0..1], &b.0[0..1])
            .then_with(|| cmp_cells(&a.0[2..4], &b.0[2..4]))
            .then(b.1.cmp(&a.1))
            .then_with(|| cmp_cells(&a.0[1..2], &b.0[1..2]))
            .then_with(|| cmp_cells(&a.0[12..], &b.0[12..]))
    });
    t.rows = rows.into_iter().map(|r| r.0).collect();
    t
}

/// Most ids in a `RangeStack` cell (real traces nest over 1400 deep), and
/// in all of them together (a hostile file could nest a million ranges).
const MAX_STACK: usize = 4096;
const MAX_STACK_TOTAL: usize = 50_000_000;

/// `nvtx_gpu_proj_sum` and `nvtx_gpu_proj_trace`.
pub fn gpu_proj(v: &View<'_>, trace: bool) -> Table {
    let name = if trace {
        "nvtx_gpu_proj_trace"
    } else {
        "nvtx_gpu_proj_sum"
    };
    let cols = if trace {
        vec![
            col("Name", Unit::None),
            col("Projected Start", Unit::Timestamp),
            col("Projected Duration", Unit::Duration),
            col("Orig Start", Unit::Timestamp),
            col("Orig Duration", Unit::Duration),
            col("Style", Unit::None),
            col("PID", Unit::None),
            col("TID", Unit::None),
            col("NumGPUOps", Unit::None),
            col("Lvl", Unit::None),
            col("NumChild", Unit::None),
            col("RangeId", Unit::None),
            col("ParentId", Unit::None),
            col("RangeStack", Unit::None),
        ]
    } else {
        vec![
            col("Range", Unit::None),
            col("Style", Unit::None),
            col("Total Proj Time", Unit::Duration),
            col("Total Range Time", Unit::Duration),
            col("Range Instances", Unit::None),
            col("Proj Avg", Unit::Duration),
            col("Proj Med", Unit::Duration),
            col("Proj Min", Unit::Duration),
            col("Proj Max", Unit::Duration),
            col("Proj StdDev", Unit::Duration),
            col("Total GPU Ops", Unit::None),
            col("Avg GPU Ops", Unit::None),
            col("Avg Range Lvl", Unit::None),
            col("Avg Num Child", Unit::None),
        ]
    };
    let mut t = Table::new(name, title(name), cols);
    if v.nvtx.is_none() {
        return no_data(t, "NV Tools Extension (NVTX) data");
    }
    let Some(api) = v.api.as_deref() else {
        return no_data(t, "CUDA API data");
    };
    if v.kernels.is_none() && v.memops.is_none() {
        return no_data(t, "GPU operation data");
    }
    let ranges = range_index(v);
    let index = api_index(api);
    // GPU operations: (start, end, pid, correlation)
    let ops: Vec<(i64, i64, Option<u64>, i64)> = v
        .kernels
        .as_deref()
        .unwrap_or(&[])
        .iter()
        .map(|k| (k.start_ns, k.end_ns, k.pid, k.correlation))
        .chain(
            v.memops
                .as_deref()
                .unwrap_or(&[])
                .iter()
                .map(|m| (m.start_ns, m.end_ns, m.pid, m.correlation)),
        )
        .collect();
    let mut call_slot: FastMap<*const rprof_model::stats_data::ApiRow, u32> = FastMap::default();
    let mut queries = Vec::new();
    for op in &ops {
        if let Some(calls) = op.2.and_then(|p| index.get(&(p, op.3))) {
            for c in calls {
                call_slot.entry(*c as *const _).or_insert_with(|| {
                    queries.push((c.pid, c.tid, c.start_ns, c.end_ns));
                    (queries.len() - 1) as u32
                });
            }
        }
    }
    let found = enclosing(&ranges, &queries);
    // per range: first start, last end, distinct correlation ids
    let mut proj: Vec<Option<(i64, i64, Vec<i64>)>> = vec![None; ranges.len()];
    // operations launched outside every range: nsys's trace prints them as
    // one row without a range (first start, last end, distinct ids; pid and
    // tid of the first such call)
    let mut outside: Option<(i64, i64, Vec<i64>, u64, u64)> = None;
    for op in &ops {
        let Some(calls) = op.2.and_then(|p| index.get(&(p, op.3))) else {
            continue;
        };
        for c in calls {
            let slot = call_slot.get(&(*c as *const _)).copied().unwrap_or(0);
            if found[slot as usize].is_empty() {
                let o = outside.get_or_insert((op.0, op.1, Vec::new(), c.pid, c.tid));
                o.0 = o.0.min(op.0);
                o.1 = o.1.max(op.1);
                o.2.push(c.correlation);
            }
            for &ri in &found[slot as usize] {
                let p = proj[ri as usize].get_or_insert((op.0, op.1, Vec::new()));
                p.0 = p.0.min(op.0);
                p.1 = p.1.max(op.1);
                p.2.push(c.correlation);
            }
        }
    }
    // parents: the tightest enclosing range of the same thread; among equal
    // ranges the one with the lower id (nsys leaves that case circular)
    let queries: Vec<(u64, u64, i64, i64)> = ranges
        .iter()
        .map(|r| (r.pid, r.tid, r.start, r.end))
        .collect();
    let around = enclosing(&ranges, &queries);
    let mut parent: Vec<Option<u32>> = vec![None; ranges.len()];
    for (ci, cands) in around.iter().enumerate() {
        let c = &ranges[ci];
        let mut best: Option<(i64, i64, u32)> = None;
        for &pi in cands {
            let p = &ranges[pi as usize];
            if pi as usize == ci || (p.start == c.start && p.end == c.end && p.id > c.id) {
                continue;
            }
            let tight = (c.start - p.start).saturating_add(p.end - c.end);
            if best.is_none_or(|b| (tight, p.id) < (b.0, b.1)) {
                best = Some((tight, p.id, pi));
            }
        }
        parent[ci] = best.map(|b| b.2);
    }
    // levels, in an order where parents come first
    let mut order: Vec<u32> = (0..ranges.len() as u32).collect();
    order.sort_by_key(|&i| {
        let r = &ranges[i as usize];
        (r.start, std::cmp::Reverse(r.end), r.id)
    });
    let mut level = vec![0i64; ranges.len()];
    for &i in &order {
        if let Some(p) = parent[i as usize] {
            level[i as usize] = level[p as usize] + 1;
        }
    }
    let mut children = vec![0i64; ranges.len()];
    for (i, p) in parent.iter().enumerate() {
        if let Some(p) = p
            && proj[i].is_some()
        {
            children[*p as usize] += 1;
        }
    }
    if trace {
        let mut rows: Vec<(i64, i64, i64, Vec<Cell>)> = Vec::new();
        let mut stack_budget = MAX_STACK_TOTAL;
        for (i, p) in proj.iter_mut().enumerate() {
            let Some((ps, pe, corr)) = p else { continue };
            corr.sort_unstable();
            corr.dedup();
            let r = &ranges[i];
            // the ids from the root; past MAX_STACK levels (or once the total
            // budget is spent) only the innermost ones, after `:...`
            let mut stack = Vec::new();
            let mut cur = Some(i as u32);
            let mut cut = false;
            let cap = if stack_budget > 0 { MAX_STACK } else { 1 };
            while let Some(c) = cur {
                if stack.len() == cap {
                    cut = true;
                    break;
                }
                stack.push(ranges[c as usize].id);
                cur = parent[c as usize];
            }
            stack_budget = stack_budget.saturating_sub(stack.len());
            let mut text_stack = String::from(if cut { ":..." } else { "" });
            for id in stack.iter().rev() {
                text_stack.push_str(&format!(":{id}"));
            }
            let stack = text_stack;
            rows.push((
                *ps,
                *pe - *ps,
                r.id,
                vec![
                    text(v.name(r.name)),
                    Cell::Int(*ps),
                    Cell::Int(*pe - *ps),
                    Cell::Int(r.start),
                    Cell::Int(r.end - r.start),
                    text(r.style.as_str()),
                    Cell::Int(r.pid as i64),
                    Cell::Int(r.tid as i64),
                    Cell::Int(corr.len() as i64),
                    Cell::Int(level[i]),
                    Cell::Int(children[i]),
                    Cell::Int(r.id),
                    Cell::opt(parent[i].map(|p| ranges[p as usize].id)),
                    Cell::Text(stack),
                ],
            ));
        }
        // nsys's ORDER BY names the headings without their unit suffix, so
        // SQLite sorts by constants and the rows come in range-id order
        // (the row outside every range first): rprof keeps that order
        rows.sort_by_key(|r| r.2);
        if let Some((s0, e0, mut corr, pid, tid)) = outside {
            corr.sort_unstable();
            corr.dedup();
            let mut row = vec![Cell::Null, Cell::Int(s0), Cell::Int(e0 - s0)];
            row.extend([Cell::Null, Cell::Null, Cell::Null]);
            row.extend([
                Cell::Int(pid as i64),
                Cell::Int(tid as i64),
                Cell::Int(corr.len() as i64),
                Cell::Null,
                Cell::Int(0),
                Cell::Null,
                Cell::Null,
                Cell::Null,
            ]);
            rows.insert(0, (s0, e0 - s0, i64::MIN, row));
        }
        t.rows = rows.into_iter().map(|r| r.3).collect();
        return t;
    }
    #[derive(Default)]
    struct G {
        proj: Agg,
        range_total: i128,
        ops: i64,
        levels: i64,
        children: i64,
    }
    let mut groups: FastMap<(NameId, RangeStyle), G> = FastMap::default();
    for (i, p) in proj.iter_mut().enumerate() {
        let Some((ps, pe, corr)) = p else { continue };
        corr.sort_unstable();
        corr.dedup();
        let r = &ranges[i];
        let g = groups.entry((r.name, r.style)).or_default();
        g.proj.add(*pe - *ps);
        g.range_total += i128::from(r.end - r.start);
        g.ops += corr.len() as i64;
        g.levels += level[i];
        g.children += children[i];
    }
    let mut rows: Vec<(i64, Vec<Cell>)> = groups
        .into_iter()
        .map(|((n, st), g)| {
            let count = g.proj.count();
            let s = g.proj.finish();
            let avg = |x: i64| Cell::Round1(round1(x as f64 / count.max(1) as f64));
            let mut row = vec![
                text(v.name(n)),
                text(st.as_str()),
                Cell::Int(s.total),
                Cell::Int(g.range_total.clamp(0, i128::from(i64::MAX)) as i64),
                Cell::Int(count),
            ];
            row.extend(s.dur_cells());
            row.push(Cell::Int(g.ops));
            row.push(avg(g.ops));
            row.push(avg(g.levels));
            row.push(avg(g.children));
            (s.total, row)
        })
        .collect();
    rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| cmp_cells(&a.1[..2], &b.1[..2])));
    t.rows = rows.into_iter().map(|r| r.1).collect();
    t
}
