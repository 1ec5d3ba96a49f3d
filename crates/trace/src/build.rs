//! From a [`Trace`] to the attributed kernel table ([`Kernels`]), in chunks.
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
use crate::model::{Kernel, Source, Trace};
use crate::model::{Kernels, StackStock};
use crate::sequence::SeqState;

mod table;

pub use table::Table;
use table::{NameMap, Names};

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
    /// (`Context::stack_stock`): each distinct range once per chunk, a
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

/// Kernel names, demangled once per distinct name.
fn names(trace: &Trace, compat: bool) -> NameMap {
    let mut keys: Vec<(StrRef, Option<StrRef>)> = trace
        .kernels
        .iter()
        .map(|k| (k.name, if compat { None } else { k.mangled.get() }))
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
            let json = |t: &str| {
                let mut b = Vec::with_capacity(t.len() + 2);
                crate::model::push_json_str(&mut b, t);
                b.into_boxed_slice()
            };
            (
                (name, mangled),
                Names {
                    long_json: json(&long),
                    short_json: json(&short),
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
    (k.name, if compat { None } else { k.mangled.get() })
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
    mut emit: impl FnMut(&Kernels<'_>) -> std::result::Result<(), E>,
) -> std::result::Result<BuildStats, E> {
    build_with(
        trace,
        enclosing,
        opts,
        Stages::PLAIN,
        |_| (),
        |c, ()| emit(&c.kernels),
    )
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
    mut prepare: impl FnMut(&Kernels<'_>) -> T + Send,
    mut emit: impl FnMut(&Kernels<'_>, T) -> std::result::Result<(), E>,
) -> std::result::Result<BuildStats, E> {
    build_with(
        trace,
        enclosing,
        opts,
        Stages::OVERLAPPED,
        |c| prepare(&c.kernels),
        |c, prepared| emit(&c.kernels, prepared),
    )
}

/// The attributed kernel table, a chunk at a time, built on a thread of
/// its own while `emit` consumes the chunk before on the calling thread
/// (the same chunks, in the same order, as [`build`]'s records).
///
/// Call it from a thread of its own, never from a rayon task (see
/// [`build_overlapped`]).
pub fn build_tables_overlapped<E: From<Error>>(
    trace: &Trace,
    enclosing: &Enclosing,
    opts: BuildOptions,
    mut emit: impl FnMut(&Table<'_>) -> std::result::Result<(), E>,
) -> std::result::Result<BuildStats, E> {
    build_with(
        trace,
        enclosing,
        opts,
        Stages::TABLES,
        |_| (),
        |c, ()| match &c.table {
            Some(t) => emit(t),
            None => Ok(()),
        },
    )
}

/// How [`build_with`] runs.
#[derive(Clone, Copy)]
struct Stages {
    /// Build, prepare and emit on three threads.
    overlap: bool,
    /// Make the chunk's [`Kernels`] (on the builder's thread).
    records: bool,
}

impl Stages {
    /// [`build`]: records, on the calling thread.
    const PLAIN: Stages = Stages {
        overlap: false,
        records: true,
    };
    /// [`build_overlapped`]: records, three threads.
    const OVERLAPPED: Stages = Stages {
        overlap: true,
        records: true,
    };
    /// [`build_tables_overlapped`]: the table itself, three threads.
    const TABLES: Stages = Stages {
        overlap: true,
        records: false,
    };
}

/// What the builder hands on: a chunk of the table, or its records when
/// they were asked for.
struct Chunk<'t> {
    table: Option<Table<'t>>,
    kernels: Kernels<'t>,
}

/// The key of a kernel's context in its chunk: its launch's stack node
/// (`u32::MAX`: none encloses it), or [`NO_LAUNCH`].
const NO_LAUNCH: u64 = u64::MAX;

/// What a context is worked out from: the ranges enclosing its launch
/// (outermost first; they make the stack), and under `--compat` the texts
/// PyProf still sees of them (it deleted some), which the markers are
/// classified from.
struct Input<'t> {
    launch: Option<u32>,
    ranges: Vec<u32>,
    seen: Option<Vec<(&'t str, StrRef)>>,
}

impl<'t> Input<'t> {
    /// The texts the markers are classified from: the ranges' (under
    /// compat, those PyProf still sees).
    fn texts<'i>(&'i self, trace: &'t Trace) -> impl Iterator<Item = (&'t str, StrRef)> + 'i {
        let (seen, all) = match &self.seen {
            Some(s) => (Some(s.iter().copied()), None),
            None => (None, Some(self.ranges.iter())),
        };
        let all = all.into_iter().flatten().map(move |&r| {
            let r = &trace.ranges[r as usize];
            (trace.strings.get(r.text), r.text)
        });
        seen.into_iter().flatten().chain(all)
    }
}

fn build_with<'n, T: Send, E: From<Error>>(
    trace: &'n Trace,
    enclosing: &Enclosing,
    opts: BuildOptions,
    stages: Stages,
    mut prepare: impl FnMut(&Chunk<'_>) -> T + Send,
    mut emit: impl FnMut(&Chunk<'_>, T) -> std::result::Result<(), E>,
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
    // ranges: each context holds its stack, so deep nesting makes smaller
    // chunks and memory stays bounded
    let mut chunks: Vec<&[u32]> = Vec::new();
    let mut rest = order.as_slice();
    while !rest.is_empty() {
        let mut n = 0usize;
        let mut depth = 0usize;
        while n < rest.len().min(CHUNK) && (n == 0 || depth < STACK_BUDGET) {
            if let Some(l) = trace.kernels[rest[n] as usize].launch.get() {
                depth += enclosing.depth(l);
            }
            n += 1;
        }
        let (c, r) = rest.split_at(n);
        chunks.push(c);
        rest = r;
    }
    let names = &names;
    let mut make = |chunk: &[u32], stats: &mut BuildStats| -> Chunk<'_> {
        // Each kernel's context: one per distinct list of enclosing ranges
        // (launches with the same stack node have the same list). In compat
        // mode PyProf has deleted, per thread, every range that ended
        // before an earlier processed kernel's launch started, so what each
        // kernel sees is its own: a context per kernel.
        let mut rows: Vec<table::Row> = Vec::with_capacity(chunk.len());
        let mut inputs: Vec<Input<'_>> = Vec::new();
        let mut by_key: HashMap<u64, u32> =
            HashMap::with_capacity_and_hasher(chunk.len(), Default::default());
        for &ki in chunk {
            let k = &trace.kernels[ki as usize];
            let context = if compat && let Some(li) = k.launch.get() {
                let l = &trace.launches[li as usize];
                let ranges = enclosing.of(li);
                let hw = high_water.get(&l.thread).copied().unwrap_or(i64::MIN);
                let seen = ranges
                    .iter()
                    .map(|&r| &trace.ranges[r as usize])
                    .filter(|r| r.end_ns >= hw)
                    .map(|r| (trace.strings.get(r.text), r.text))
                    .collect();
                let e = high_water.entry(l.thread).or_insert(i64::MIN);
                *e = (*e).max(l.start_ns);
                inputs.push(Input {
                    launch: Some(li),
                    ranges,
                    seen: Some(seen),
                });
                inputs.len() as u32 - 1
            } else {
                let key = match k.launch.get() {
                    None => NO_LAUNCH,
                    Some(li) => u64::from(enclosing.node(li).unwrap_or(u32::MAX)),
                };
                *by_key.entry(key).or_insert_with(|| {
                    inputs.push(Input {
                        launch: k.launch.get(),
                        ranges: k
                            .launch
                            .get()
                            .map(|li| enclosing.of(li))
                            .unwrap_or_default(),
                        seen: None,
                    });
                    inputs.len() as u32 - 1
                })
            };
            rows.push(table::Row {
                kernel: ki,
                context,
                fold: crate::sequence::Fold { cur: None, sub: 0 },
            });
        }
        // Work out each distinct text once: contexts of a chunk share most
        // of their enclosing ranges (a layer range encloses thousands). A
        // text is known by its address and length (an empty text starts
        // where the next one does).
        let mut slot: HashMap<(usize, usize), u32> = HashMap::default();
        let mut distinct: Vec<(&'n str, StrRef)> = Vec::new();
        let mut see = |(t, r): (&'n str, StrRef)| {
            slot.entry(text_key(t)).or_insert_with(|| {
                distinct.push((t, r));
                distinct.len() as u32 - 1
            });
        };
        for input in &inputs {
            input.texts(trace).for_each(&mut see);
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
        // (name taken whole, marker) of each distinct text, as a record's
        // reader would read it (told by `stack_names`); only when asked
        let (split, stock_table): (Vec<bool>, Vec<stock::StockMarker<'_>>) = if opts.typed_stock {
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
        // a text's head is its decoded marker's where there is one (the
        // same head: `stock`'s tests hold `parse(t).head() == parse_head(t)`),
        // not parsed a second time: the second parse was 2 % of the
        // instructions of `summary --by op` on a 100 k-kernel profile
        let prepared: Vec<markers::Prepared<'_>> = distinct
            .par_iter()
            .enumerate()
            .map(|(i, &(t, r))| {
                // an operator's own head (its typed fields) first
                let head = head_of(r).or_else(|| stock_table.get(i).map(stock::StockMarker::head));
                markers::prepare_with(t, compat, head)
            })
            .collect();
        // one table per chunk, shared by its records
        let stock_table: std::sync::Arc<[stock::StockMarker<'_>]> = stock_table.into();
        let decoded = |t: &str, whole_names: bool| {
            let i = *slot.get(&text_key(t))?;
            (*split.get(i as usize)? == whole_names).then_some(i)
        };
        let contexts: Vec<table::Context<'_>> = inputs
            .par_iter()
            .map_init(
                // the lists handed to the classifier, reused from context
                // to context
                || (Vec::new(), Vec::new()),
                |(plain, pre), input| {
                    plain.clear();
                    pre.clear();
                    for (t, _) in input.texts(trace) {
                        plain.push(t);
                        pre.push(&prepared[slot[&text_key(t)] as usize]);
                    }
                    let classified = markers::classify_prepared(plain, pre, compat);
                    let stock: Stock<'_, '_> = (opts.typed_stock, &stock_table, &decoded);
                    context(trace, input, classified, opts, stock)
                },
            )
            .collect();
        for row in &mut rows {
            let k = &trace.kernels[row.kernel as usize];
            let c = &contexts[row.context as usize].classified;
            row.fold = seq.step(&c.seq_ids, c.bprop, &c.op, &c.mod_);
            stats.undecodable_markers += u64::from(c.undecodable);
            match k.launch.get() {
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
        }
        stats.records += rows.len() as u64;
        let table = Table {
            trace,
            names,
            compat,
            rows,
            contexts,
        };
        if stages.records {
            Chunk {
                table: None,
                kernels: table.into_kernels(),
            }
        } else {
            Chunk {
                table: Some(table),
                kernels: Kernels::new(),
            }
        }
    };
    if !stages.overlap {
        for chunk in chunks {
            let built = make(chunk, &mut stats);
            let prepared = prepare(&built);
            emit(&built, prepared)?;
        }
        return Ok(stats);
    }
    std::thread::scope(|scope| {
        // three stages, a thread each: the records of a chunk are built,
        // then `prepare`d, then emitted; each stage runs at most one chunk
        // ahead of the next (a channel of one), so a slow sink holds back
        // the build and at most five chunks are alive at once
        let (built_tx, built_rx) = std::sync::mpsc::sync_channel::<Chunk<'_>>(1);
        let (tx, rx) = std::sync::mpsc::sync_channel::<(Chunk<'_>, T)>(1);
        let builder = scope.spawn(move || {
            for chunk in chunks {
                let built = make(chunk, &mut stats);
                if built_tx.send(built).is_err() {
                    // the sink stopped (its error is returned below)
                    break;
                }
            }
            stats
        });
        let preparer = scope.spawn(move || {
            for built in built_rx.iter() {
                let prepared = prepare(&built);
                if tx.send((built, prepared)).is_err() {
                    break;
                }
            }
        });
        let mut failed = None;
        for (built, prepared) in rx.iter() {
            if let Err(e) = emit(&built, prepared) {
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

/// Whether each stack entry's stock marker was asked for, the chunk's
/// table of them, and the place in it of a text read with its name whole
/// or not.
type Stock<'t, 'a> = (
    bool,
    &'a std::sync::Arc<[stock::StockMarker<'t>]>,
    &'a (dyn Fn(&str, bool) -> Option<u32> + Sync),
);

/// What the ranges of `input` say, for every kernel under them: the
/// classified markers (with the PyTorch profiler's own module path and
/// Python stack, from the innermost operator that has them) and the stack
/// as the records carry it.
fn context<'t>(
    trace: &'t Trace,
    input: &Input<'t>,
    mut c: Classified<'t>,
    opts: BuildOptions,
    (typed, table, decoded): Stock<'t, '_>,
) -> table::Context<'t> {
    let compat = opts.compat;
    // PyProf's own dict markers are already in `marker`, `reprMarkers` and
    // `trace`; the stack keeps every other enclosing range.
    // (a few are scanned; many, as under 702 nested markers, hashed)
    let set: HashSet<usize> = if c.consumed.len() > 8 {
        c.consumed.iter().map(|t| t.as_ptr() as usize).collect()
    } else {
        HashSet::default()
    };
    let consumed = |p: usize| {
        if c.consumed.len() > 8 {
            set.contains(&p)
        } else {
            c.consumed.iter().any(|t| t.as_ptr() as usize == p)
        }
    };
    // the kept ranges, walked once per list made from them (no list of
    // their own)
    let rs = || {
        input
            .ranges
            .iter()
            .map(|&r| &trace.ranges[r as usize])
            .filter(|r| !consumed(trace.strings.get(r.text).as_ptr() as usize))
    };
    let stack: Vec<Cow<'t, str>> = rs()
        .map(|r| Cow::Borrowed(trace.strings.get(r.text)))
        .collect();
    let domains: Vec<Cow<'t, str>> = if rs().any(|r| r.domain != 0) {
        rs().map(|r| match trace.domain_name(r.thread, r.domain) {
            Some(name) => Cow::Borrowed(name),
            None if r.domain == 0 => Cow::Borrowed(""),
            // the export lacks the domain's creation row
            None => Cow::Owned(format!("#{}", r.domain)),
        })
        .collect()
    } else {
        Vec::new()
    };
    // the length of every entry's name, or of none (PyTorch-profiler
    // operators; not under compat, where apex.pyprof's reading of the text
    // is the point)
    let names: Vec<u32> = if !compat {
        rs().map(|r| op_name_len(trace, r.text))
            .collect::<Option<Vec<u32>>>()
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    // every entry's decoding, each read as the record's reader would read
    // its text (name whole or not), or none
    let stock = if typed && input.launch.is_some() {
        let whole = !names.is_empty();
        StackStock::new(table, stack.iter().map(|t| decoded(t, whole)))
    } else {
        StackStock::default()
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
    if input.launch.is_some() && trace.source == Source::Kineto {
        // the PyTorch profiler's own module path and Python stack, from the
        // innermost operator that has them
        let meta = input
            .ranges
            .iter()
            .rev()
            .filter_map(|&r| trace.range_meta.get(&trace.ranges[r as usize].text));
        for m in meta {
            if c.layer.is_empty()
                && let Some(module) = m.module
            {
                c.layer = trace
                    .strings
                    .get(module)
                    .split("::")
                    .map(Cow::Borrowed)
                    .collect();
            }
            if c.trace.is_empty()
                && let Some(stack) = m.call_stack
            {
                // Kineto lists the innermost frame first; PyProf's trace is
                // outermost first
                c.trace = trace
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
    table::Context {
        classified: c,
        shaped,
        stock,
    }
}
