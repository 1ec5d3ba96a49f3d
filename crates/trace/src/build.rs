//! From a [`Trace`] to PyProf-style [`Record`]s, in chunks.
//!
//! ```text
//! order kernels → (compat: emulate PyProf's marker deletion) →
//! classify markers (parallel) → sequence fold (in order) → records
//! ```

use crate::{FastMap as HashMap, FastSet as HashSet};
use std::borrow::Cow;

use rayon::prelude::*;

use crate::attribute::Enclosing;
use crate::demangle;
use crate::error::Error;
use crate::markers::{self, Classified};
use crate::model::StrRef;
use crate::model::stock;
use crate::model::{Dir, Record, StackStock};
use crate::model::{Kernel, Source, Trace};
use crate::sequence::SeqState;

/// Kernels per chunk: bounds memory, keeps the parallel part busy.
pub const CHUNK: usize = 4 * 1024;

/// Enclosing ranges (summed over its kernels) after which a chunk ends
/// early: bounds the memory of the stacks a chunk's records hold.
pub const STACK_BUDGET: usize = 1 << 20;

/// How to build records.
#[derive(Clone, Copy, Debug, Default)]
pub struct BuildOptions {
    /// Reproduce apex.pyprof.
    pub compat: bool,
    /// How much of the enclosing ranges each record carries (default: all,
    /// as the commands reading a profile directly need).
    pub stack: crate::model::StackForm,
    /// Hand the op models each stack entry's stock marker decoded
    /// (`Record::stack_stock`): each distinct range once per chunk, a
    /// PyTorch-profiler operator's from its typed fields. For the commands
    /// that model the records they build; a record file has no use for it.
    pub typed_stock: bool,
}

/// What happened, for the stderr summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Records produced.
    pub records: u64,
    /// Kernels with a launch call but no enclosing NVTX range.
    pub without_nvtx: u64,
    /// Records without a launch call (so without an enclosing range either).
    pub without_launch: u64,
    /// Records without an enclosing NVTX range (or CPU operator), for
    /// whatever reason: `without_nvtx` + `without_launch`.
    pub without_range: u64,
    /// Marker texts that looked like PyProf dicts but could not be read.
    pub undecodable_markers: u64,
    /// Kernel names that start like mangled names but do not demangle.
    pub undemangled_names: u64,
}

impl BuildStats {
    /// The first line of the stderr summary for a profile, worded the same
    /// by every command: kernel rows, records, kernels without a launch
    /// call, and kernels without an enclosing NVTX range (CPU operator for
    /// Kineto input), which counts the kernels without a launch call too:
    /// without a launch there is nothing for a range to enclose.
    pub fn summary_line(&self, trace: &Trace) -> String {
        let s = &trace.stats;
        format!(
            "rprof: {}: {} kernel rows, {} records, {} kernels without a launch call, {} without {} ({} of them because they have no launch call)",
            trace.path.display(),
            s.kernel_rows,
            self.records,
            s.without_launch,
            self.without_range,
            if trace.source == Source::Kineto {
                "an enclosing CPU operator"
            } else {
                "an enclosing NVTX range"
            },
            self.without_launch,
        )
    }
}

struct Names {
    long: String,
    short: String,
    failed: bool,
}

/// Kernel names, demangled once per distinct name.
fn names(trace: &Trace, compat: bool) -> HashMap<(StrRef, Option<StrRef>), Names> {
    let mut keys: Vec<(StrRef, Option<StrRef>)> = trace
        .kernels
        .iter()
        .map(|k| (k.name, if compat { None } else { k.mangled }))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.par_iter()
        .map(|&(name, mangled)| {
            let raw = trace.strings.get(name);
            let (long, failed) = match mangled.map(|m| trace.strings.get(m)) {
                // nsys ≥ 2021.5 stores the mangled name too: GNU-style long
                // names, as PyProf gets from nvprof, and no `<unnamed>`
                Some(m) if trace.source == Source::Nsys && m.starts_with("_Z") => {
                    match demangle::demangle(m) {
                        Some(d) => (d, false),
                        None => (raw.to_owned(), false),
                    }
                }
                _ if raw.starts_with("_Z") => match demangle::demangle(raw) {
                    Some(d) => (d, false),
                    None => (raw.to_owned(), true),
                },
                _ => (raw.to_owned(), false),
            };
            let short = if compat {
                demangle::short_name_pyprof(&long)
            } else {
                demangle::short_name(&long)
            };
            (
                (name, mangled),
                Names {
                    long,
                    short,
                    failed,
                },
            )
        })
        .collect()
}

/// The short name of each distinct kernel name of `trace` (key: the
/// kernel's `(name, mangled)` pair, `mangled` left out under `compat`),
/// worked out exactly as [`build`] gives it to the records, once per
/// distinct name; and how many names look mangled but do not demangle
/// ([`BuildStats::undemangled_names`]). For reports that need a kernel's
/// short name and not its record.
pub fn short_names(
    trace: &Trace,
    compat: bool,
) -> (HashMap<(StrRef, Option<StrRef>), String>, u64) {
    let names = names(trace, compat);
    let failed = names.values().filter(|n| n.failed).count() as u64;
    let short = names.into_iter().map(|(k, n)| (k, n.short)).collect();
    (short, failed)
}

/// The key of `k` in [`short_names`]' map.
pub fn name_key(k: &Kernel, compat: bool) -> (StrRef, Option<StrRef>) {
    (k.name, if compat { None } else { k.mangled })
}

/// Build every record, in PyProf's order, and hand them to `emit` a chunk
/// at a time.
///
/// `emit` is the sink, and its error type `E` is the consumer's own (an
/// `io::Error` of a writer, an `anyhow::Error`, …): the first error it
/// returns stops the build and is returned as it is. The build's own
/// errors (PyProf's aborts under `--compat`) become an `E` through
/// `From<Error>`.
pub fn build<E: From<Error>>(
    trace: &Trace,
    enclosing: &Enclosing,
    opts: BuildOptions,
    mut emit: impl FnMut(&[Record<'_>]) -> std::result::Result<(), E>,
) -> std::result::Result<BuildStats, E> {
    build_with(trace, enclosing, opts, false, |_| (), |recs, ()| emit(recs))
}

/// [`build`] as a pipeline of three threads: one builds each chunk's
/// records, a second runs `prepare` on them (in chunk order, so `prepare`
/// may keep state from chunk to chunk), while `emit` consumes the chunk
/// before on the calling thread, with what `prepare` returned for it. At
/// most five chunks are alive at once (one being built, one prepared, one
/// emitted, two waiting between the stages).
/// The output is the same as [`build`]'s: every chunk, in order.
///
/// Call it from a thread of its own, never from a rayon task: its stages
/// wait on each other through channels, and the builder's parallel work
/// needs the pool's workers free (two rayon tasks each waiting here hold
/// both workers of a two-core pool: a deadlock).
pub fn build_overlapped<T: Send, E: From<Error>>(
    trace: &Trace,
    enclosing: &Enclosing,
    opts: BuildOptions,
    prepare: impl FnMut(&[Record<'_>]) -> T + Send,
    emit: impl FnMut(&[Record<'_>], T) -> std::result::Result<(), E>,
) -> std::result::Result<BuildStats, E> {
    build_with(trace, enclosing, opts, true, prepare, emit)
}

fn build_with<T: Send, E: From<Error>>(
    trace: &Trace,
    enclosing: &Enclosing,
    opts: BuildOptions,
    overlap: bool,
    mut prepare: impl FnMut(&[Record<'_>]) -> T + Send,
    mut emit: impl FnMut(&[Record<'_>], T) -> std::result::Result<(), E>,
) -> std::result::Result<BuildStats, E> {
    let compat = opts.compat;
    let path = trace.path.clone();
    let names = names(trace, compat);
    if compat {
        if let Some(n) = names
            .values()
            .filter(|n| n.failed)
            .min_by(|a, b| a.long.cmp(&b.long))
        {
            return Err(Error::CompatAbort {
                path,
                detail: format!("kernel name {} is not a valid mangled name", n.long),
            }
            .into());
        }
        if let Some(k) = trace.kernels.iter().find(|k| k.end_ns <= k.start_ns) {
            return Err(Error::CompatAbort {
                path,
                detail: format!(
                    "kernel {} ends at {} ns but starts at {} ns",
                    k.row + 1,
                    k.end_ns,
                    k.start_ns
                ),
            }
            .into());
        }
    }
    let mut stats = BuildStats {
        undemangled_names: names.values().filter(|n| n.failed).count() as u64,
        ..BuildStats::default()
    };

    // PyProf order: kernel-table order in compat ([B5]), start time otherwise
    let mut order: Vec<u32> = (0..trace.kernels.len() as u32).collect();
    if !compat {
        order.par_sort_unstable_by_key(|&i| {
            let k = &trace.kernels[i as usize];
            (k.start_ns, k.row)
        });
    }

    let mut high_water: HashMap<u64, i64> = HashMap::default();
    let mut seq = SeqState::default();
    // chunks of at most CHUNK kernels and about STACK_BUDGET enclosing
    // ranges: each record holds its stack, so deep nesting makes smaller
    // chunks and memory stays bounded
    let mut chunks: Vec<&[u32]> = Vec::new();
    let mut rest = order.as_slice();
    while !rest.is_empty() {
        let mut n = 0usize;
        let mut depth = 0usize;
        while n < rest.len().min(CHUNK) && (n == 0 || depth < STACK_BUDGET) {
            if let Some(l) = trace.kernels[rest[n] as usize].launch {
                depth += enclosing.depth(l);
            }
            n += 1;
        }
        let (c, r) = rest.split_at(n);
        chunks.push(c);
        rest = r;
    }
    let mut make = |chunk: &[u32], stats: &mut BuildStats| -> Vec<Record<'_>> {
        // Which enclosing ranges each kernel sees. In compat mode PyProf has
        // deleted, per thread, every range that ended before an earlier
        // processed kernel's launch started.
        let candidates: Vec<Vec<(&str, StrRef)>> = chunk
            .iter()
            .map(|&ki| {
                let k = &trace.kernels[ki as usize];
                let Some(li) = k.launch else {
                    return Vec::new();
                };
                let l = &trace.launches[li as usize];
                let found = enclosing.of(li);
                let text = |r: &crate::model::Range| (trace.strings.get(r.text), r.text);
                let texts: Vec<(&str, StrRef)> = if compat {
                    let hw = high_water.get(&l.thread).copied().unwrap_or(i64::MIN);
                    found
                        .iter()
                        .map(|&r| &trace.ranges[r as usize])
                        .filter(|r| r.end_ns >= hw)
                        .map(text)
                        .collect()
                } else {
                    found
                        .iter()
                        .map(|&r| text(&trace.ranges[r as usize]))
                        .collect()
                };
                if compat {
                    let e = high_water.entry(l.thread).or_insert(i64::MIN);
                    *e = (*e).max(l.start_ns);
                }
                texts
            })
            .collect();
        // Work out each distinct text once: kernels of a chunk share most of
        // their enclosing ranges (a layer range encloses thousands). A text
        // is known by its address and length (an empty text starts where
        // the next one does).
        let mut slot: HashMap<(usize, usize), u32> = HashMap::default();
        let mut distinct: Vec<(&str, StrRef)> = Vec::new();
        for texts in &candidates {
            for &(t, r) in texts {
                slot.entry(text_key(t)).or_insert_with(|| {
                    distinct.push((t, r));
                    distinct.len() as u32 - 1
                });
            }
        }
        // an operator's name is taken whole, never read for fields: a
        // PyTorch-profiler operator's head and marker are its typed fields
        let head_of = |r: StrRef| {
            if compat {
                None
            } else {
                op_name_len(trace, r).and_then(|_| trace.op_head(r))
            }
        };
        let prepared: Vec<markers::Prepared<'_>> = distinct
            .par_iter()
            .map(|&(t, r)| markers::prepare_with(t, compat, head_of(r)))
            .collect();
        // (name taken whole, marker) of each distinct text, as a record's
        // reader would read it (told by `stack_names`); only when asked
        let (split, table): (Vec<bool>, Vec<stock::StockMarker<'_>>) = if opts.typed_stock {
            distinct
                .par_iter()
                .map(
                    |&(t, r)| match head_of(r).and_then(|_| trace.op_marker(r)) {
                        Some(op) => (true, op),
                        None => (false, stock::parse(t)),
                    },
                )
                .unzip()
        } else {
            (Vec::new(), Vec::new())
        };
        // one table per chunk, shared by its records
        let table: std::sync::Arc<[stock::StockMarker<'_>]> = table.into();
        let classified: Vec<Classified<'_>> = candidates
            .par_iter()
            .map(|cands| {
                let texts: Vec<&str> = cands.iter().map(|c| c.0).collect();
                let pre: Vec<&markers::Prepared<'_>> = texts
                    .iter()
                    .map(|t| &prepared[slot[&text_key(t)] as usize])
                    .collect();
                markers::classify_prepared(&texts, &pre, compat)
            })
            .collect();
        let mut records = Vec::with_capacity(chunk.len());
        for (&ki, c) in chunk.iter().zip(classified) {
            let k = &trace.kernels[ki as usize];
            let ids = seq.next(&c.seq_ids, c.bprop, &c.op, &c.mod_, compat);
            stats.undecodable_markers += u64::from(c.undecodable);
            match k.launch {
                Some(l) if enclosing.is_empty_for(l) => {
                    stats.without_nvtx += 1;
                    stats.without_range += 1;
                }
                Some(_) => {}
                None => {
                    stats.without_launch += 1;
                    stats.without_range += 1;
                }
            }
            let decoded = |t: &str, whole_names: bool| {
                let i = *slot.get(&text_key(t))?;
                (*split.get(i as usize)? == whole_names).then_some(i)
            };
            let stock = (opts.typed_stock, &table, decoded);
            records.push(record(trace, enclosing, k, &names, c, ids, opts, stock));
        }
        stats.records += records.len() as u64;
        records
    };
    if !overlap {
        for chunk in chunks {
            let records = make(chunk, &mut stats);
            let prepared = prepare(&records);
            emit(&records, prepared)?;
        }
        return Ok(stats);
    }
    std::thread::scope(|scope| {
        // three stages, a thread each: the records of a chunk are built,
        // then `prepare`d, then emitted; each stage runs at most one chunk
        // ahead of the next (a channel of one), so a slow sink holds back
        // the build and at most five chunks are alive at once
        let (built_tx, built_rx) = std::sync::mpsc::sync_channel::<Vec<Record<'_>>>(1);
        let (tx, rx) = std::sync::mpsc::sync_channel::<(Vec<Record<'_>>, T)>(1);
        let builder = scope.spawn(move || {
            for chunk in chunks {
                let records = make(chunk, &mut stats);
                if built_tx.send(records).is_err() {
                    // the sink stopped (its error is returned below)
                    break;
                }
            }
            stats
        });
        let preparer = scope.spawn(move || {
            for records in built_rx.iter() {
                let prepared = prepare(&records);
                if tx.send((records, prepared)).is_err() {
                    break;
                }
            }
        });
        let mut failed = None;
        for (records, prepared) in rx.iter() {
            if let Err(e) = emit(&records, prepared) {
                failed = Some(e);
                break;
            }
        }
        // the preparer's next send fails once the receiver is gone, and
        // the builder's once the preparer is
        drop(rx);
        if let Err(panic) = preparer.join() {
            std::panic::resume_unwind(panic)
        }
        let stats = match builder.join() {
            Ok(s) => s,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        match failed {
            Some(e) => Err(e),
            None => Ok(stats),
        }
    })
}

/// The length of the name a PyTorch-profiler operator's text `t` starts
/// with (`None` for any other range).
fn op_name_len(trace: &Trace, t: StrRef) -> Option<u32> {
    if trace.range_meta.is_empty() {
        return None;
    }
    let name = trace.strings.get(trace.range_meta.get(&t)?.name?);
    let len = u32::try_from(name.len()).ok()?;
    trace.strings.get(t).starts_with(name).then_some(len)
}

/// A text's identity in the trace's string pool: its address and length.
fn text_key(t: &str) -> (usize, usize) {
    (t.as_ptr() as usize, t.len())
}

#[allow(clippy::too_many_arguments)]
fn record<'t>(
    trace: &'t Trace,
    enclosing: &Enclosing,
    k: &Kernel,
    names: &'t HashMap<(StrRef, Option<StrRef>), Names>,
    c: Classified<'t>,
    ids: crate::sequence::SeqIds,
    opts: BuildOptions,
    // asked for, the chunk's table, and the place in it of a text read
    // with its name whole or not
    (typed, table, decoded): (
        bool,
        &std::sync::Arc<[stock::StockMarker<'t>]>,
        impl Fn(&str, bool) -> Option<u32>,
    ),
) -> Record<'t> {
    let compat = opts.compat;
    let key = name_key(k, compat);
    let (long, short) = names
        .get(&key)
        .map_or(("", ""), |n| (n.long.as_str(), n.short.as_str()));
    let launch = k.launch.map(|l| &trace.launches[l as usize]);
    let pid = launch.map(|l| l.pid);
    let dev = trace.device(k.device, pid);
    // PyProf's own dict markers are already in `marker`, `reprMarkers` and
    // `trace`; the stack keeps every other enclosing range.
    let consumed: HashSet<usize> = c.consumed.iter().map(|t| t.as_ptr() as usize).collect();
    let (stack, domains, names, stock) = match k.launch {
        Some(li) => {
            let rs: Vec<_> = enclosing
                .of(li)
                .iter()
                .map(|&r| &trace.ranges[r as usize])
                .filter(|r| !consumed.contains(&(trace.strings.get(r.text).as_ptr() as usize)))
                .collect();
            let stack: Vec<Cow<'t, str>> = rs
                .iter()
                .map(|r| Cow::Borrowed(trace.strings.get(r.text)))
                .collect();
            let domains: Vec<Cow<'t, str>> = if rs.iter().any(|r| r.domain != 0) {
                rs.iter()
                    .map(|r| match trace.domain_name(r.thread, r.domain) {
                        Some(name) => Cow::Borrowed(name),
                        None if r.domain == 0 => Cow::Borrowed(""),
                        // the export lacks the domain's creation row
                        None => Cow::Owned(format!("#{}", r.domain)),
                    })
                    .collect()
            } else {
                Vec::new()
            };
            // the length of every entry's name, or of none
            // (PyTorch-profiler operators; not under compat, where
            // apex.pyprof's reading of the text is the point)
            let names: Vec<u32> = if !compat {
                rs.iter()
                    .map(|r| op_name_len(trace, r.text))
                    .collect::<Option<Vec<u32>>>()
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            // every entry's decoding, each read as the record's reader
            // would read its text (name whole or not), or none
            let stock = if typed {
                let whole = !names.is_empty();
                StackStock::new(table, stack.iter().map(|t| decoded(t, whole)))
            } else {
                StackStock::default()
            };
            (stack, domains, names, stock)
        }
        None => (Vec::new(), Vec::new(), Vec::new(), StackStock::default()),
    };
    let full = stack.len();
    let shaped = opts.stack.shape(stack, domains, names);
    // the decoding holds only for the stack as it was
    let stock = if shaped.stack.len() == full
        && shaped.runs.is_empty()
        && shaped.cut == 0
        && shaped.cut_bytes == 0
    {
        stock
    } else {
        StackStock::default()
    };
    let (mut layer, mut trace_frames) = (c.layer, c.trace);
    if let Some(li) = k.launch.filter(|_| trace.source == Source::Kineto) {
        // the PyTorch profiler's own module path and Python stack, from the
        // innermost operator that has them
        let outer_first = enclosing.of(li);
        let meta = outer_first
            .iter()
            .rev()
            .filter_map(|&r| trace.range_meta.get(&trace.ranges[r as usize].text));
        for m in meta {
            if layer.is_empty()
                && let Some(module) = m.module
            {
                layer = trace
                    .strings
                    .get(module)
                    .split("::")
                    .map(Cow::Borrowed)
                    .collect();
            }
            if trace_frames.is_empty()
                && let Some(stack) = m.call_stack
            {
                // Kineto lists the innermost frame first; PyProf's trace is
                // outermost first
                trace_frames = trace
                    .strings
                    .get(stack)
                    .split(';')
                    .filter(|f| !f.is_empty())
                    .rev()
                    .map(Cow::Borrowed)
                    .collect();
            }
        }
    }
    Record {
        short_name: Cow::Borrowed(short),
        duration_ns: if compat {
            k.end_ns - k.start_ns
        } else {
            k.duration_ns()
        },
        layer,
        trace: trace_frames,
        repr_markers: c.repr,
        marker: c.marker,
        first_marker: c.first_marker,
        seq_marker: c.seq_marker,
        seq_id: ids.seq_id,
        sub_seq_id: ids.sub_seq_id,
        alt_seq_id: ids.alt_seq_id,
        dir: Dir::of(c.bprop),
        mod_: c.mod_,
        op: c.op,
        tid: launch.map_or(0, |l| l.tid),
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
        context: k.context.map(i64::from),
        regs: k.registers_per_thread.map(i64::from),
        static_smem_bytes: k.static_smem_bytes.map(i64::from),
        dynamic_smem_bytes: k.dynamic_smem_bytes.map(i64::from),
        graph_id: k.graph_id.map(i64::from),
        graph_node_id: k.graph_node_id,
        device_name: dev.and_then(|d| d.name.as_deref()).map(Cow::Borrowed),
        sm_count: dev.and_then(|d| d.sm_count),
        cc_major: dev.and_then(|d| d.cc_major),
        cc_minor: dev.and_then(|d| d.cc_minor),
        stack: shaped.stack,
        stack_names: shaped.names,
        stack_stock: stock,
        domains: shaped.domains,
        stack_runs: shaped.runs,
        stack_cut: shaped.cut,
        stack_cut_bytes: shaped.cut_bytes,
        bad_time: k.end_ns <= k.start_ns,
        kineto_blocks_per_sm: k.kineto.as_ref().and_then(|x| x.blocks_per_sm),
        kineto_warps_per_sm: k.kineto.as_ref().and_then(|x| x.warps_per_sm),
        kineto_occupancy_pct: k.kineto.as_ref().and_then(|x| x.occupancy_pct),
    }
}
