//! The attributed kernel table: what every kernel-level command reads.
//!
//! One [`Kernels`] is a chunk of the table, in input order: a typed row per
//! kernel ([`KernelRow`]: names, times, launch configuration, device,
//! direction, sequence ids) and a [`Context`] per distinct set of what the
//! enclosing ranges say (op, module, layer and call stack as [`Sym`]s of the
//! chunk's [`Symbols`], the PyProf markers with the first one decoded once,
//! the NVTX stack with its stock markers decoded once). Kernels under the
//! same ranges share their context, so what the markers say is stored and
//! decoded once for all of them.
//!
//! Two producers fill it: the build, from a profile (`rprof-trace`'s
//! `Table::into_kernels`), and a record file read back
//! ([`Kernels::push_record`], [`Kernels::push_read`]: a `.dict` line is a
//! serialization of one row and its context). [`Record`] is only the serde
//! view of a line; [`KernelRef::to_record`] makes it again for writing.

use std::borrow::Cow;
use std::ops::Deref;
use std::sync::Arc;

use crate::markers::Marker;
use crate::record::{Dir, Record};
use crate::stock::{self, Head, StockMarker};

/// A list of symbols: up to four without an allocation (a kernel's op
/// and module lists hold one or two).
pub type Syms = smallvec::SmallVec<[Sym; 4]>;

/// A string of a chunk's [`Symbols`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub u32);

/// The op, module, layer and call-stack names of a chunk, each stored once.
#[derive(Clone, Debug, Default)]
pub struct Symbols<'a> {
    texts: Vec<Cow<'a, str>>,
    index: crate::FastMap<Cow<'a, str>, Sym>,
}

impl<'a> Symbols<'a> {
    /// The symbol of `text`, stored on first sight.
    pub fn intern(&mut self, text: Cow<'a, str>) -> Sym {
        if let Some(&s) = self.index.get(text.as_ref()) {
            return s;
        }
        // a chunk holds far fewer than 2^32 distinct names: it holds fewer
        // kernels than that
        let s = Sym(u32::try_from(self.texts.len()).unwrap_or(u32::MAX));
        self.texts.push(text.clone());
        self.index.insert(text, s);
        s
    }

    /// Every text of `texts` as symbols, in order, taking `prev`'s symbols
    /// when they name the same texts: a comparison instead of a hash per
    /// name, for the list of the context before (consecutive kernels
    /// mostly differ in their stack alone).
    pub fn intern_list(&mut self, texts: Vec<Cow<'a, str>>, prev: Option<&Syms>) -> Syms {
        match prev {
            _ if texts.is_empty() => Syms::new(),
            Some(p) if same_syms(&texts, p, self) => p.clone(),
            _ => self.intern_all(texts),
        }
    }

    /// Every text of `texts` as symbols, in order.
    fn intern_all(&mut self, texts: Vec<Cow<'a, str>>) -> Syms {
        let mut out = Syms::with_capacity(texts.len());
        for t in texts {
            out.push(self.intern(t));
        }
        out
    }

    /// The text of `s` (`""` for a symbol of another chunk).
    pub fn get(&self, s: Sym) -> &str {
        self.texts.get(s.0 as usize).map_or("", |t| t)
    }

    /// Distinct texts.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// True when no text is stored.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    fn texts(&self, ids: &[Sym]) -> Vec<Cow<'a, str>> {
        ids.iter()
            .map(|s| self.texts.get(s.0 as usize).cloned().unwrap_or_default())
            .collect()
    }
}

/// A list of symbols with the table that names them.
#[derive(Clone, Copy)]
pub struct SymList<'c> {
    symbols: &'c Symbols<'c>,
    ids: &'c [Sym],
}

impl std::fmt::Debug for SymList<'_> {
    /// The texts: two lists of the same names are the same, whatever
    /// their chunks.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'c> SymList<'c> {
    /// The texts, in order.
    pub fn iter(self) -> impl DoubleEndedIterator<Item = &'c str> + ExactSizeIterator + 'c {
        let symbols = self.symbols;
        self.ids.iter().map(move |&s| symbols.get(s))
    }

    /// Entry `i`.
    pub fn get(&self, i: usize) -> Option<&'c str> {
        self.ids.get(i).map(|&s| self.symbols.get(s))
    }

    /// The first entry.
    pub fn first(&self) -> Option<&'c str> {
        self.get(0)
    }

    /// The last entry.
    pub fn last(&self) -> Option<&'c str> {
        self.ids.last().map(|&s| self.symbols.get(s))
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The symbols.
    pub fn ids(&self) -> &'c [Sym] {
        self.ids
    }
}

/// What the enclosing ranges of a set of kernels say: shared by every row
/// of the chunk under the same ranges.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context<'a> {
    /// Layer names from `layer:` ranges, outermost first.
    pub layer: Syms,
    /// Python call stack of the innermost trace marker.
    pub trace: Syms,
    /// Module names.
    pub module: Syms,
    /// Op names.
    pub op: Syms,
    /// Module repr markers (raw text).
    pub repr_markers: Vec<Cow<'a, str>>,
    /// PyProf argument markers (raw text), outermost first.
    pub marker: Vec<Cow<'a, str>>,
    /// The first of `marker`, decoded once for every kernel of the
    /// context by the build; `None` in a context read back from a record
    /// file, whose text the op models' reader decodes once per context
    /// (`rprof_report::model::Models::resolve`, cached across chunks).
    pub first_marker: Option<Arc<Marker>>,
    /// PyTorch sequence markers after dedupe, sort and prune.
    pub seq_marker: Vec<Cow<'a, str>>,
    /// The NVTX ranges enclosing the launch, outermost first, as the
    /// records carry them.
    pub stack: Vec<Cow<'a, str>>,
    /// NVTX domain of each `stack` entry (`[]`: all default).
    pub domains: Vec<Cow<'a, str>>,
    /// Each `stack` entry's name length when known (`[]` otherwise).
    pub stack_names: Vec<u32>,
    /// Each `stack` entry's repeat count as written (`[]`: all 1).
    pub stack_runs: Vec<i64>,
    /// Each `stack` entry's stock marker, decoded once (by the build; a
    /// context read back decodes from the text on use).
    pub stack_stock: StackStock<'a>,
    /// Enclosing ranges `stack` leaves out.
    pub stack_cut: i64,
    /// Bytes of range text `stack` leaves out.
    pub stack_cut_bytes: i64,
}

/// The stock markers of a context's `stack` entries as the build decoded
/// them: a table of the markers its chunk decoded (shared by the chunk's
/// records) and each entry's place in it. A record costs no allocation of
/// its own for up to four entries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StackStock<'a> {
    table: Option<std::sync::Arc<[crate::stock::StockMarker<'a>]>>,
    at: smallvec::SmallVec<[u32; 4]>,
}

impl<'a> StackStock<'a> {
    /// The entries of `table` at `places`, one per stack entry; empty when
    /// a place is `None` or out of the table.
    pub fn new(
        table: &std::sync::Arc<[crate::stock::StockMarker<'a>]>,
        places: impl IntoIterator<Item = Option<u32>>,
    ) -> Self {
        let at: Option<smallvec::SmallVec<[u32; 4]>> = places
            .into_iter()
            .map(|i| i.filter(|&i| (i as usize) < table.len()))
            .collect();
        match at {
            Some(at) => StackStock {
                table: Some(std::sync::Arc::clone(table)),
                at,
            },
            None => StackStock::default(),
        }
    }

    /// Decoded entries (0: none).
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// True when no entry is decoded.
    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// The decoded marker of entry `i`.
    pub fn get(&self, i: usize) -> Option<&crate::stock::StockMarker<'a>> {
        let table = self.table.as_ref()?;
        table.get(*self.at.get(i)? as usize)
    }
}

/// One kernel: its own facts, and its [`Context`] by index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelRow<'a> {
    /// Short kernel name.
    pub short_name: Cow<'a, str>,
    /// Long (demangled) kernel name.
    pub long_name: Cow<'a, str>,
    /// GPU time, ns.
    pub duration_ns: i64,
    /// Forward, backward, or a record file's other text.
    pub dir: Dir<'a>,
    /// Sequence id(s).
    pub seq_id: Vec<i64>,
    /// Index among consecutive kernels of one op.
    pub sub_seq_id: i64,
    /// Other sequence ids of the enclosing markers.
    pub alt_seq_id: Vec<i64>,
    /// Launching thread id.
    pub tid: u64,
    /// Process id of the launching thread.
    pub pid: Option<u64>,
    /// CUDA device ordinal.
    pub device: i64,
    /// CUDA stream id.
    pub stream: i64,
    /// Grid dimensions.
    pub grid: [i64; 3],
    /// Block dimensions.
    pub block: [i64; 3],
    /// GPU start, ns.
    pub start_ns: Option<i64>,
    /// GPU end, ns.
    pub end_ns: Option<i64>,
    /// Launch call start, ns.
    pub launch_start_ns: Option<i64>,
    /// Launch call end, ns.
    pub launch_end_ns: Option<i64>,
    /// False when no launch call was found.
    pub launched: bool,
    /// Launch API.
    pub api: Option<Cow<'a, str>>,
    /// CUPTI correlation id.
    pub correlation: Option<i64>,
    /// CUDA context id.
    pub context: Option<i64>,
    /// Registers per thread.
    pub regs: Option<i64>,
    /// Static shared memory per block, bytes.
    pub static_smem_bytes: Option<i64>,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_smem_bytes: Option<i64>,
    /// CUDA graph id.
    pub graph_id: Option<i64>,
    /// CUDA graph node id.
    pub graph_node_id: Option<i64>,
    /// GPU name.
    pub device_name: Option<Cow<'a, str>>,
    /// SM count of the GPU.
    pub sm_count: Option<i64>,
    /// Compute capability, major.
    pub cc_major: Option<i64>,
    /// Compute capability, minor.
    pub cc_minor: Option<i64>,
    /// The kernel ended no later than it started.
    pub bad_time: bool,
    /// The PyTorch profiler's `blocks per SM`.
    pub kineto_blocks_per_sm: Option<f64>,
    /// The PyTorch profiler's `warps per SM`.
    pub kineto_warps_per_sm: Option<f64>,
    /// The PyTorch profiler's `est. achieved occupancy %`.
    pub kineto_occupancy_pct: Option<f64>,
    /// Index of the row's context in its chunk.
    pub ctx: u32,
}

/// A chunk of the attributed kernel table.
#[derive(Clone, Debug, Default)]
pub struct Kernels<'a> {
    rows: Vec<KernelRow<'a>>,
    contexts: Vec<Context<'a>>,
    symbols: Symbols<'a>,
    /// What a row whose context is missing reads (none is: rows are
    /// added with a context of the chunk).
    empty: Context<'a>,
}

/// A row with its chunk: the row's fields directly, its context's through
/// methods.
#[derive(Clone, Copy, Debug)]
pub struct KernelRef<'c, 'a> {
    row: &'c KernelRow<'a>,
    ctx: &'c Context<'a>,
    symbols: &'c Symbols<'a>,
}

impl<'a> Deref for KernelRef<'_, 'a> {
    type Target = KernelRow<'a>;

    fn deref(&self) -> &KernelRow<'a> {
        self.row
    }
}

impl<'a> Kernels<'a> {
    /// An empty chunk.
    pub fn new() -> Kernels<'a> {
        Kernels::default()
    }

    /// A chunk of `n` kernels to come.
    pub fn with_capacity(n: usize) -> Kernels<'a> {
        Kernels {
            rows: Vec::with_capacity(n),
            // read back, most records of a profile's file have a context
            // of their own (each operator range carries its own op id)
            contexts: Vec::with_capacity(n),
            ..Kernels::default()
        }
    }

    /// The records of a record file, read back: [`Kernels::push_record`]
    /// of each.
    pub fn from_records(recs: impl IntoIterator<Item = Record<'a>>) -> Kernels<'a> {
        let recs = recs.into_iter();
        let mut out = Kernels::with_capacity(recs.size_hint().0);
        for r in recs {
            out.push_record(r);
        }
        out
    }

    /// Kernels in the chunk.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when the chunk holds no kernel.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The distinct contexts, in the order the rows first name them.
    pub fn contexts(&self) -> &[Context<'a>] {
        &self.contexts
    }

    /// The rows' own fields, in order ([`Kernels::at`] gives a row with
    /// its context).
    pub fn rows(&self) -> &[KernelRow<'a>] {
        &self.rows
    }

    /// The chunk's names.
    pub fn symbols(&self) -> &Symbols<'a> {
        &self.symbols
    }

    /// Store each of `texts` in the chunk's names ([`Symbols::intern_list`]
    /// against the last context's list that `pick` chooses).
    pub fn intern_list(
        &mut self,
        texts: Vec<Cow<'a, str>>,
        pick: for<'x> fn(&'x Context<'a>) -> &'x Syms,
    ) -> Syms {
        let prev = self.contexts.last().map(pick);
        self.symbols.intern_list(texts, prev)
    }

    /// Add a context; its index, for [`Kernels::push_row`].
    pub fn push_context(&mut self, ctx: Context<'a>) -> u32 {
        self.contexts.push(ctx);
        u32::try_from(self.contexts.len() - 1).unwrap_or(u32::MAX)
    }

    /// Add a row whose `ctx` is an index [`Kernels::push_context`] gave.
    pub fn push_row(&mut self, row: KernelRow<'a>) {
        self.rows.push(row);
    }

    /// Row `i`.
    pub fn get(&self, i: usize) -> Option<KernelRef<'_, 'a>> {
        self.rows.get(i).map(|row| self.at(row))
    }

    /// Every row, in order.
    pub fn iter(&self) -> Iter<'_, 'a> {
        Iter {
            kernels: self,
            rows: self.rows.iter(),
        }
    }

    /// `row` (one of [`Kernels::rows`]) with its context.
    pub fn at<'c>(&'c self, row: &'c KernelRow<'a>) -> KernelRef<'c, 'a> {
        KernelRef {
            row,
            ctx: self.contexts.get(row.ctx as usize).unwrap_or(&self.empty),
            symbols: &self.symbols,
        }
    }

    /// Add one record read back: its own fields become a row; its lists a
    /// context, shared with the row before when they say the same (the
    /// rows of one op's kernels follow each other).
    pub fn push_record(&mut self, r: Record<'a>) {
        let same = self
            .rows
            .last()
            .and_then(|prev| self.contexts.get(prev.ctx as usize))
            .is_some_and(|c| says_the_same(&r, c, &self.symbols));
        self.push_read(r, same);
    }

    /// [`Kernels::push_record`], `same` saying whether the record's lists
    /// are those of the row before ([`Record::same_context`] of the two
    /// records, which can run in parallel): the sequential part of reading
    /// a block of records back. Each field is moved once, into the row or
    /// the context.
    pub fn push_read(&mut self, r: Record<'a>, same: bool) {
        let Record {
            short_name,
            duration_ns,
            layer,
            trace,
            repr_markers,
            marker,
            seq_marker,
            seq_id,
            sub_seq_id,
            alt_seq_id,
            dir,
            mod_,
            op,
            tid,
            device,
            stream,
            grid,
            block,
            long_name,
            start_ns,
            end_ns,
            launch_start_ns,
            launch_end_ns,
            launched,
            api,
            pid,
            correlation,
            context,
            regs,
            static_smem_bytes,
            dynamic_smem_bytes,
            graph_id,
            graph_node_id,
            device_name,
            sm_count,
            cc_major,
            cc_minor,
            stack,
            domains,
            stack_runs,
            stack_names,
            stack_cut,
            stack_cut_bytes,
            bad_time,
            kineto_blocks_per_sm,
            kineto_warps_per_sm,
            kineto_occupancy_pct,
        } = r;
        let prev = self.rows.last().map(|p| p.ctx).filter(|_| same);
        let ctx = match prev {
            Some(i) => i,
            None => {
                let last = self.contexts.last();
                let symbols = &mut self.symbols;
                let mut syms = |texts, pick: for<'x> fn(&'x Context<'a>) -> &'x Syms| {
                    symbols.intern_list(texts, last.map(pick))
                };
                let c = Context {
                    layer: syms(layer, |c| &c.layer),
                    trace: syms(trace, |c| &c.trace),
                    module: syms(mod_, |c| &c.module),
                    op: syms(op, |c| &c.op),
                    repr_markers,
                    marker,
                    // decoded by whoever models the rows (a record
                    // carries text)
                    first_marker: None,
                    seq_marker,
                    stack,
                    domains,
                    stack_names,
                    stack_runs,
                    stack_stock: StackStock::default(),
                    stack_cut,
                    stack_cut_bytes,
                };
                self.push_context(c)
            }
        };
        self.rows.push(KernelRow {
            short_name,
            long_name,
            duration_ns,
            dir,
            seq_id,
            sub_seq_id,
            alt_seq_id,
            tid,
            pid,
            device,
            stream,
            grid,
            block,
            start_ns,
            end_ns,
            launch_start_ns,
            launch_end_ns,
            launched,
            api,
            correlation,
            context,
            regs,
            static_smem_bytes,
            dynamic_smem_bytes,
            graph_id,
            graph_node_id,
            device_name,
            sm_count,
            cc_major,
            cc_minor,
            bad_time,
            kineto_blocks_per_sm,
            kineto_warps_per_sm,
            kineto_occupancy_pct,
            ctx,
        });
    }
}

/// The rows of a chunk, in order ([`Kernels::iter`]).
#[derive(Clone, Debug)]
pub struct Iter<'c, 'a> {
    kernels: &'c Kernels<'a>,
    rows: std::slice::Iter<'c, KernelRow<'a>>,
}

impl<'c, 'a> Iterator for Iter<'c, 'a> {
    type Item = KernelRef<'c, 'a>;

    fn next(&mut self) -> Option<KernelRef<'c, 'a>> {
        self.rows.next().map(|row| self.kernels.at(row))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.rows.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_, '_> {}

impl<'c, 'a> IntoIterator for &'c Kernels<'a> {
    type Item = KernelRef<'c, 'a>;
    type IntoIter = Iter<'c, 'a>;

    fn into_iter(self) -> Iter<'c, 'a> {
        self.iter()
    }
}

impl Record<'_> {
    /// True when `other`'s lists are this record's: read back, the two
    /// share one [`Context`] (a record file's consecutive kernels of one
    /// op do).
    pub fn same_context(&self, other: &Record<'_>) -> bool {
        self.stack == other.stack
            && self.op == other.op
            && self.mod_ == other.mod_
            && self.layer == other.layer
            && self.trace == other.trace
            && self.marker == other.marker
            && self.repr_markers == other.repr_markers
            && self.seq_marker == other.seq_marker
            && self.domains == other.domains
            && self.stack_names == other.stack_names
            && self.stack_runs == other.stack_runs
            && self.stack_cut == other.stack_cut
            && self.stack_cut_bytes == other.stack_cut_bytes
    }
}

impl<'a> FromIterator<Record<'a>> for Kernels<'a> {
    fn from_iter<I: IntoIterator<Item = Record<'a>>>(recs: I) -> Kernels<'a> {
        Kernels::from_records(recs)
    }
}

fn same_syms(texts: &[Cow<'_, str>], ids: &[Sym], symbols: &Symbols<'_>) -> bool {
    texts.len() == ids.len()
        && texts
            .iter()
            .zip(ids)
            .all(|(t, &s)| t.as_ref() == symbols.get(s))
}

/// True when context `c` says what record `r`'s lists say.
fn says_the_same(r: &Record<'_>, c: &Context<'_>, symbols: &Symbols<'_>) -> bool {
    r.marker == c.marker
        && r.stack == c.stack
        && same_syms(&r.op, &c.op, symbols)
        && same_syms(&r.mod_, &c.module, symbols)
        && same_syms(&r.layer, &c.layer, symbols)
        && same_syms(&r.trace, &c.trace, symbols)
        && r.repr_markers == c.repr_markers
        && r.seq_marker == c.seq_marker
        && r.domains == c.domains
        && r.stack_names == c.stack_names
        && r.stack_runs == c.stack_runs
        && r.stack_cut == c.stack_cut
        && r.stack_cut_bytes == c.stack_cut_bytes
}

impl<'c, 'a> KernelRef<'c, 'a> {
    /// The row's own fields.
    pub fn row(&self) -> &'c KernelRow<'a> {
        self.row
    }

    /// The row's context.
    pub fn context_of(&self) -> &'c Context<'a> {
        self.ctx
    }

    fn syms(&self, ids: &'c [Sym]) -> SymList<'c> {
        SymList {
            symbols: self.symbols_c(),
            ids,
        }
    }

    /// `Symbols<'a>` seen for `'c` (`'a` outlives `'c`; the texts are read
    /// only).
    fn symbols_c(&self) -> &'c Symbols<'c> {
        self.symbols
    }

    /// Layer names, outermost first.
    pub fn layer(&self) -> SymList<'c> {
        self.syms(&self.ctx.layer)
    }

    /// Call stack of the innermost trace marker.
    pub fn trace(&self) -> SymList<'c> {
        self.syms(&self.ctx.trace)
    }

    /// Module names.
    pub fn module(&self) -> SymList<'c> {
        self.syms(&self.ctx.module)
    }

    /// Op names.
    pub fn op(&self) -> SymList<'c> {
        self.syms(&self.ctx.op)
    }

    /// Module repr markers.
    pub fn repr_markers(&self) -> &'c [Cow<'a, str>] {
        &self.ctx.repr_markers
    }

    /// PyProf argument markers.
    pub fn marker(&self) -> &'c [Cow<'a, str>] {
        &self.ctx.marker
    }

    /// The first of [`KernelRef::marker`], decoded, when it was.
    pub fn first_marker(&self) -> Option<&'c Arc<Marker>> {
        self.ctx.first_marker.as_ref()
    }

    /// Sequence markers.
    pub fn seq_marker(&self) -> &'c [Cow<'a, str>] {
        &self.ctx.seq_marker
    }

    /// The enclosing NVTX ranges as the records carry them.
    pub fn stack(&self) -> &'c [Cow<'a, str>] {
        &self.ctx.stack
    }

    /// Domain of each [`KernelRef::stack`] entry (`[]`: all default).
    pub fn domains(&self) -> &'c [Cow<'a, str>] {
        &self.ctx.domains
    }

    /// Ranges the stack leaves out.
    pub fn stack_cut(&self) -> i64 {
        self.ctx.stack_cut
    }

    /// Bytes of range text the stack leaves out.
    pub fn stack_cut_bytes(&self) -> i64 {
        self.ctx.stack_cut_bytes
    }

    /// The length of stack entry `i`'s name, when known.
    pub fn stack_name_len(&self, i: usize) -> Option<usize> {
        let c = self.ctx;
        if c.stack_names.len() == c.stack.len() {
            c.stack_names.get(i).map(|&n| n as usize)
        } else {
            None
        }
    }

    /// The stock-marker head of stack entry `i` (empty past the end): the
    /// build's decoding, else read from the text.
    pub fn stack_head(&self, i: usize) -> Head<'c> {
        if let Some(m) = self.decoded(i) {
            return m.head();
        }
        let text = self.stack_text(i);
        match self.stack_name_len(i) {
            Some(n) => stock::parse_head_split(text, n),
            None => stock::parse_head(text),
        }
    }

    /// The stock marker of stack entry `i`, as [`KernelRef::stack_head`]
    /// reads its name.
    pub fn stack_marker(&self, i: usize) -> Cow<'c, StockMarker<'c>> {
        if let Some(m) = self.decoded(i) {
            return Cow::Borrowed(m);
        }
        let text = self.stack_text(i);
        Cow::Owned(match self.stack_name_len(i) {
            Some(n) => stock::parse_split(text, n),
            None => stock::parse(text),
        })
    }

    /// True when stack entry `i` has a `sizes` field, whether or not it
    /// reads.
    pub fn stack_has_sizes(&self, i: usize) -> bool {
        match self.decoded(i) {
            Some(m) if !m.malformed => m.sizes.is_some(),
            _ => self.stack_fields(i).contains(", sizes = ["),
        }
    }

    /// True when stack entry `i` has an `input_op_ids` field, whether or
    /// not it reads.
    pub fn stack_has_input_ids(&self, i: usize) -> bool {
        match self.decoded(i) {
            Some(m) if !m.malformed => m.input_op_ids.is_some(),
            _ => self.stack_fields(i).contains(", input_op_ids = ["),
        }
    }

    fn stack_text(&self, i: usize) -> &'c str {
        self.ctx.stack.get(i).map_or("", |t| t)
    }

    fn stack_fields(&self, i: usize) -> &'c str {
        let text = self.stack_text(i);
        self.stack_name_len(i)
            .and_then(|n| text.get(n..))
            .unwrap_or(text)
    }

    fn decoded(&self, i: usize) -> Option<&'c StockMarker<'c>> {
        let s = &self.ctx.stack_stock;
        if s.len() == self.ctx.stack.len() {
            s.get(i)
        } else {
            None
        }
    }

    /// The row as the record a `.dict` line serializes.
    pub fn to_record(&self) -> Record<'a> {
        let c = self.ctx.clone();
        let s = self.symbols;
        Record {
            layer: s.texts(&c.layer),
            trace: s.texts(&c.trace),
            repr_markers: c.repr_markers,
            marker: c.marker,
            seq_marker: c.seq_marker,
            mod_: s.texts(&c.module),
            op: s.texts(&c.op),
            stack: c.stack,
            domains: c.domains,
            stack_runs: c.stack_runs,
            stack_names: c.stack_names,
            stack_cut: c.stack_cut,
            stack_cut_bytes: c.stack_cut_bytes,
            ..self.row.clone().into_record()
        }
    }
}

impl<'a> KernelRow<'a> {
    /// The record of the row's own fields, every list empty: what a line
    /// says before the context's part.
    pub fn into_record(self) -> Record<'a> {
        let r = self;
        Record {
            short_name: r.short_name,
            duration_ns: r.duration_ns,
            seq_id: r.seq_id,
            sub_seq_id: r.sub_seq_id,
            alt_seq_id: r.alt_seq_id,
            dir: r.dir,
            tid: r.tid,
            device: r.device,
            stream: r.stream,
            grid: r.grid,
            block: r.block,
            long_name: r.long_name,
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            launch_start_ns: r.launch_start_ns,
            launch_end_ns: r.launch_end_ns,
            launched: r.launched,
            api: r.api,
            pid: r.pid,
            correlation: r.correlation,
            context: r.context,
            regs: r.regs,
            static_smem_bytes: r.static_smem_bytes,
            dynamic_smem_bytes: r.dynamic_smem_bytes,
            graph_id: r.graph_id,
            graph_node_id: r.graph_node_id,
            device_name: r.device_name,
            sm_count: r.sm_count,
            cc_major: r.cc_major,
            cc_minor: r.cc_minor,
            bad_time: r.bad_time,
            kineto_blocks_per_sm: r.kineto_blocks_per_sm,
            kineto_warps_per_sm: r.kineto_warps_per_sm,
            kineto_occupancy_pct: r.kineto_occupancy_pct,
            ..Record::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    /// True when two records' lists (what a context holds) are the same,
    /// compared field by field on the records themselves.
    fn same_lists(a: &Record<'_>, b: &Record<'_>) -> bool {
        a.layer == b.layer
            && a.trace == b.trace
            && a.mod_ == b.mod_
            && a.op == b.op
            && a.repr_markers == b.repr_markers
            && a.marker == b.marker
            && a.seq_marker == b.seq_marker
            && a.stack == b.stack
            && a.domains == b.domains
            && a.stack_names == b.stack_names
            && a.stack_runs == b.stack_runs
            && a.stack_cut == b.stack_cut
            && a.stack_cut_bytes == b.stack_cut_bytes
    }

    /// Records drawn whole, each followed by up to two kernels of the same
    /// op (same lists, other own fields), as a record file has them.
    fn arb_records() -> impl Strategy<Value = Vec<Record<'static>>> {
        proptest::collection::vec(
            (
                crate::record::tests::arb_record(),
                proptest::collection::vec(proptest::num::i64::ANY, 0..3),
            ),
            0..6,
        )
        .prop_map(|groups| {
            let mut out = Vec::new();
            for (r, durations) in groups {
                for d in &durations {
                    out.push(Record {
                        duration_ns: *d,
                        short_name: Cow::Owned(format!("k{d}")),
                        ..r.clone()
                    });
                }
                out.push(r);
            }
            out
        })
    }

    proptest! {
        /// A record file read back into the table writes the same records;
        /// kernels in a row with the same lists share one context; every
        /// op, module, layer and call-stack name is stored once.
        #[test]
        fn records_read_back_are_the_same_records(recs in arb_records()) {
            let k = Kernels::from_records(recs.clone());
            prop_assert_eq!(k.len(), recs.len());
            for (i, r) in recs.iter().enumerate() {
                let row = k.get(i).expect("a row per record");
                prop_assert_eq!(&row.to_record(), r);
            }
            let contexts = recs
                .iter()
                .enumerate()
                .filter(|&(i, r)| i == 0 || !same_lists(&recs[i - 1], r))
                .count();
            prop_assert_eq!(k.contexts().len(), contexts);
            let names: BTreeSet<&str> = recs
                .iter()
                .flat_map(|r| r.layer.iter().chain(&r.trace).chain(&r.mod_).chain(&r.op))
                .map(|s| s.as_ref())
                .collect();
            prop_assert_eq!(k.symbols().len(), names.len());
            // split first, the neighbours compared apart (as a block of a
            // record file is read): the same table
            let same: Vec<bool> = (0..recs.len())
                .map(|i| i > 0 && recs[i - 1].same_context(&recs[i]))
                .collect();
            let mut split = Kernels::new();
            for (r, same) in recs.iter().cloned().zip(same) {
                split.push_read(r, same);
            }
            prop_assert_eq!(split.contexts(), k.contexts());
            prop_assert_eq!(split.rows(), k.rows());
        }
    }

    #[test]
    fn a_rows_lists_are_its_contexts() {
        let r = Record {
            op: vec!["conv2d".into(), "relu".into()],
            mod_: vec!["torch.nn.functional".into()],
            layer: vec!["conv2d".into()],
            ..Record::default()
        };
        let k = Kernels::from_records([r.clone(), r]);
        let (a, b) = (k.get(0).expect("row 0"), k.get(1).expect("row 1"));
        assert_eq!(k.contexts().len(), 1);
        assert_eq!(a.op().iter().collect::<Vec<_>>(), ["conv2d", "relu"]);
        assert_eq!(a.op().last(), Some("relu"));
        assert_eq!(a.module().first(), Some("torch.nn.functional"));
        // "conv2d" is an op and a layer: one symbol
        assert_eq!(a.layer().ids(), &a.op().ids()[..1]);
        assert_eq!(k.symbols().len(), 3);
        assert_eq!(format!("{:?}", b.op()), r#"["conv2d", "relu"]"#);
        assert!(k.get(2).is_none());
    }
}
