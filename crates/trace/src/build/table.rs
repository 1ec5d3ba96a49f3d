//! The attributed kernel table, one chunk at a time.
//!
//! A row per kernel (typed: the kernel, its place among the chunk's
//! contexts, PyProf's sequence fold) and a context per distinct set of
//! enclosing ranges: what the markers say (op, module, layer, direction,
//! the decoded PyProf marker) and the stack as the records carry it.
//! Kernels under the same ranges share one context: their markers are
//! classified once. The commands that read kernels get the chunk as the
//! model's [`Kernels`] ([`Table::into_kernels`]: contexts moved, op,
//! module, layer and call stack stored once as symbols). A [`Record`] is
//! the serde view of one row, made for writing ([`Table::record`]);
//! `rprof parse` writes the JSON lines straight from the table
//! ([`Table::write_json`]: no record is made, no list copied), the same
//! bytes as [`Record::write_json`] of that view (`tests/table.rs` checks
//! them against serde_json on every fixture).

use std::borrow::Cow;
use std::ops::Range;

use crate::FastMap as HashMap;
use crate::markers::Classified;
use crate::model::{Context as KContext, KernelRow, Kernels};
use crate::model::{Dir, Kernel, Record, Shared, StackJson, StackStock, StrRef, Trace};
use crate::model::{write_markers_json, write_ops_json, write_seq_json, write_stack_json};
use crate::sequence::Fold;

/// A kernel's long and short name, worked out once per distinct name.
pub(super) struct Names {
    pub(super) long: String,
    pub(super) short: String,
    /// `long` and `short` as JSON strings (quoted and escaped): written
    /// into every record of the name as they are.
    pub(super) long_json: Box<[u8]>,
    pub(super) short_json: Box<[u8]>,
    /// Looked mangled but did not demangle.
    pub(super) failed: bool,
}

/// The names of each distinct `(name, mangled)` pair of a trace.
pub(super) type NameMap = HashMap<(StrRef, Option<StrRef>), Names>;

/// What the enclosing ranges of a set of kernels say, worked out once for
/// all of them.
#[derive(Clone, Default)]
pub(super) struct Context<'t> {
    /// What the markers say; `layer` and `trace` from the PyTorch
    /// profiler's own fields where it has them.
    pub(super) classified: Classified<'t>,
    /// The stack as the records carry it (`--stack`).
    pub(super) shaped: crate::model::Shaped<'t>,
    /// Each stack entry's stock marker, when the build was asked for them.
    pub(super) stock: StackStock<'t>,
}

/// One kernel of the table.
#[derive(Clone, Copy, Debug)]
pub(super) struct Row {
    /// Index in the trace's kernels.
    pub(super) kernel: u32,
    /// Index in the table's contexts.
    pub(super) context: u32,
    /// PyProf's sequence fold for this kernel.
    pub(super) fold: Fold,
}

/// One chunk of the attributed kernel table, in PyProf's order.
pub struct Table<'t> {
    pub(super) trace: &'t Trace,
    pub(super) names: &'t NameMap,
    pub(super) compat: bool,
    pub(super) rows: Vec<Row>,
    pub(super) contexts: Vec<Context<'t>>,
}

impl<'t> Table<'t> {
    /// Kernels in the chunk.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when the chunk holds no kernel.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The distinct sets of enclosing ranges of the chunk's kernels (each
    /// classified once).
    pub fn contexts(&self) -> usize {
        self.contexts.len()
    }

    /// The kernel of row `i`.
    pub fn kernel(&self, i: usize) -> Option<&'t Kernel> {
        let row = self.rows.get(i)?;
        self.trace.kernels.get(row.kernel as usize)
    }

    /// Row `i` as a [`Record`] (`None` past the end).
    pub fn record(&self, i: usize) -> Option<Record<'t>> {
        let mut r = self.record_shell(i)?;
        let ctx = self.contexts.get(self.rows.get(i)?.context as usize)?;
        lists_into(&mut r, ctx.clone());
        Some(r)
    }

    /// Row `i`'s record with its kernel's fields, its sequence ids and the
    /// scalars of its context; the context's lists left empty.
    fn record_shell(&self, i: usize) -> Option<Record<'t>> {
        let row = self.rows.get(i)?;
        let ctx = self.contexts.get(row.context as usize)?;
        let c = &ctx.classified;
        let ids = row.fold.lists(&c.seq_ids, self.compat);
        Some(Record {
            seq_id: ids.seq_id,
            sub_seq_id: ids.sub_seq_id,
            alt_seq_id: ids.alt_seq_id,
            dir: Dir::of(c.bprop),
            stack_cut: ctx.shaped.cut,
            stack_cut_bytes: ctx.shaped.cut_bytes,
            ..self.bare(row, self.names_of(row))
        })
    }

    /// The chunk as rows of the kernel table: each context's lists moved
    /// (op, module, layer and call stack stored once as the chunk's
    /// symbols), each row's own fields and sequence ids made.
    pub fn into_kernels(mut self) -> Kernels<'t> {
        let mut out = Kernels::with_capacity(self.rows.len());
        for i in 0..self.rows.len() {
            let row = self.rows[i];
            let Some(ctx) = self.contexts.get(row.context as usize) else {
                continue;
            };
            let c = &ctx.classified;
            let ids = row.fold.lists(&c.seq_ids, self.compat);
            out.push_row(KernelRow {
                seq_id: ids.seq_id,
                sub_seq_id: ids.sub_seq_id,
                alt_seq_id: ids.alt_seq_id,
                dir: Dir::of(c.bprop),
                ctx: row.context,
                ..self.bare_row(&row, self.names_of(&row))
            });
        }
        for ctx in std::mem::take(&mut self.contexts) {
            let Context {
                classified: c,
                shaped: s,
                stock,
            } = ctx;
            let typed = KContext {
                layer: out.intern_list(c.layer, |c| &c.layer),
                trace: out.intern_list(c.trace, |c| &c.trace),
                module: out.intern_list(c.mod_, |c| &c.module),
                op: out.intern_list(c.op, |c| &c.op),
                repr_markers: c.repr,
                marker: c.marker,
                first_marker: c.first_marker,
                seq_marker: c.seq_marker,
                stack: s.stack,
                domains: s.domains,
                stack_names: s.names,
                stack_runs: s.runs,
                stack_stock: stock,
                stack_cut: s.cut,
                stack_cut_bytes: s.cut_bytes,
            };
            out.push_context(typed);
        }
        out
    }

    /// Rows `rows` as JSON lines, appended to `out`: the bytes
    /// [`Record::write_json`] writes for [`Table::record`] of each, written
    /// from the table without making the records (no list is copied, and
    /// each kernel name was escaped once for all its kernels).
    pub fn write_json(&self, rows: Range<usize>, out: &mut Vec<u8>) {
        let Some(rows) = self.rows.get(rows) else {
            return;
        };
        // the parts of a line written from the row's context, reused from
        // line to line
        let (mut markers, mut seq, mut ops, mut stack) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut alt = Vec::new();
        for row in rows {
            let Some(ctx) = self.contexts.get(row.context as usize) else {
                continue;
            };
            let c = &ctx.classified;
            markers.clear();
            write_markers_json(
                &mut markers,
                [&c.layer, &c.trace, &c.repr, &c.marker, &c.seq_marker],
            );
            seq.clear();
            // the fixed mode's lists without making them
            match (!self.compat)
                .then(|| row.fold.fixed_lists(&c.seq_ids, &mut alt))
                .flatten()
            {
                Some(cur) => write_seq_json(&mut seq, cur.as_slice(), row.fold.sub, &alt),
                None => {
                    let l = row.fold.lists(&c.seq_ids, self.compat);
                    write_seq_json(&mut seq, &l.seq_id, l.sub_seq_id, &l.alt_seq_id);
                }
            }
            ops.clear();
            write_ops_json(&mut ops, Dir::of(c.bprop).as_str(), &c.mod_, &c.op);
            stack.clear();
            let s = &ctx.shaped;
            write_stack_json(
                &mut stack,
                StackJson {
                    stack: &s.stack,
                    domains: &s.domains,
                    runs: &s.runs,
                    names: &s.names,
                    cut: s.cut,
                    cut_bytes: s.cut_bytes,
                },
            );
            let names = self.names_of(row);
            let shared = Shared {
                short_name: names.map(|n| &*n.short_json),
                markers: Some(&markers),
                seq: Some(&seq),
                ops: Some(&ops),
                long_name: names.map(|n| &*n.long_json),
                stack: Some(&stack),
            };
            self.bare(row, names).write_json_shared(out, &shared);
        }
    }

    /// The names of `row`'s kernel.
    fn names_of(&self, row: &Row) -> Option<&'t Names> {
        let k = self.trace.kernels.get(row.kernel as usize)?;
        self.names.get(&super::name_key(k, self.compat))
    }

    /// The record of `row` with its kernel's own fields (`names`: its
    /// kernel's, [`Table::names_of`]) and every list empty.
    fn bare(&self, row: &Row, names: Option<&'t Names>) -> Record<'t> {
        self.bare_row(row, names).into_record()
    }

    /// [`Table::bare`] as a row of the kernel table.
    fn bare_row(&self, row: &Row, names: Option<&'t Names>) -> KernelRow<'t> {
        let trace = self.trace;
        let Some(k) = trace.kernels.get(row.kernel as usize) else {
            return KernelRow::default();
        };
        let compat = self.compat;
        let (long, short) = names.map_or(("", ""), |n| (n.long.as_str(), n.short.as_str()));
        let launch = k.launch.get().and_then(|l| trace.launches.get(l as usize));
        let thread = launch.map(|l| trace.thread_id(l.thread));
        let pid = thread.map(|t| t.pid);
        let dev = trace.device(k.device, pid);
        KernelRow {
            short_name: Cow::Borrowed(short),
            duration_ns: if compat {
                k.end_ns - k.start_ns
            } else {
                k.duration_ns()
            },
            tid: thread.map_or(0, |t| t.tid),
            device: k.device,
            stream: k.stream,
            grid: k.grid.map(i64::from),
            block: k.block.map(i64::from),
            long_name: Cow::Borrowed(long),
            start_ns: Some(k.start_ns),
            end_ns: Some(k.end_ns),
            launch_start_ns: launch.map(|l| l.start_ns),
            launch_end_ns: launch.map(|l| l.end_ns),
            launched: launch.is_some(),
            api: launch
                .and_then(|l| l.api)
                .map(|a| Cow::Borrowed(trace.strings.get(a))),
            pid,
            correlation: Some(k.correlation),
            context: k.context.get().map(i64::from),
            regs: k.registers_per_thread.map(i64::from),
            static_smem_bytes: k.static_smem_bytes.get().map(i64::from),
            dynamic_smem_bytes: k.dynamic_smem_bytes.get().map(i64::from),
            graph_id: k.graph_id().map(i64::from),
            graph_node_id: k.graph_node_id(),
            device_name: dev.and_then(|d| d.name.as_deref()).map(Cow::Borrowed),
            sm_count: dev.and_then(|d| d.sm_count),
            cc_major: dev.and_then(|d| d.cc_major),
            cc_minor: dev.and_then(|d| d.cc_minor),
            bad_time: k.end_ns <= k.start_ns,
            kineto_blocks_per_sm: k.kineto().and_then(|x| x.blocks_per_sm),
            kineto_warps_per_sm: k.kineto().and_then(|x| x.warps_per_sm),
            kineto_occupancy_pct: k.kineto().and_then(|x| x.occupancy_pct),
            ..KernelRow::default()
        }
    }
}

/// Move context `ctx`'s lists into record `r`: the one place that says
/// which record field each list fills.
fn lists_into<'t>(r: &mut Record<'t>, ctx: Context<'t>) {
    let Context {
        classified: c,
        shaped: s,
        stock: _,
    } = ctx;
    r.layer = c.layer;
    r.trace = c.trace;
    r.repr_markers = c.repr;
    r.marker = c.marker;
    r.seq_marker = c.seq_marker;
    r.mod_ = c.mod_;
    r.op = c.op;
    r.stack = s.stack;
    r.stack_names = s.names;
    r.domains = s.domains;
    r.stack_runs = s.runs;
}
