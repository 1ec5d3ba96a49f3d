//! One profile reduced to per-rank summaries: the numbers `rprof dist`
//! needs from each (process, GPU) of a file, small enough that a job of
//! many ranks never holds all kernels at once. The caller drops the trace
//! as soon as [`summarize`] returns.

use std::collections::BTreeMap;
use std::path::PathBuf;

use regex::Regex;
use rprof_model::{
    ClockOrigin, CommArgs, DistInfo, FastMap, Kernel, Range, Source, ThreadKey, Trace,
};

/// The collective operations of the collective table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CollOp {
    /// all_reduce.
    AllReduce,
    /// all_gather.
    AllGather,
    /// reduce_scatter.
    ReduceScatter,
    /// broadcast.
    Broadcast,
    /// reduce.
    Reduce,
    /// all_to_all.
    AllToAll,
    /// send/recv (point to point; NCCL's `SendRecv` kernel).
    SendRecv,
    /// A communication kernel whose operation the name does not tell.
    Other,
}

impl CollOp {
    /// From a collective's name (`allreduce`, `_allgather_base`,
    /// `reduce_scatter`) or an NCCL kernel name
    /// (`ncclKernel_AllReduce_RING_LL_Sum_float`, `ncclDevKernel_SendRecv`).
    pub fn classify(name: &str) -> CollOp {
        let l: String = name
            .chars()
            .filter(|c| *c != '_' && *c != ' ')
            .flat_map(char::to_lowercase)
            .collect();
        if l.contains("allreduce") {
            CollOp::AllReduce
        } else if l.contains("reducescatter") {
            CollOp::ReduceScatter
        } else if l.contains("allgather") {
            CollOp::AllGather
        } else if l.contains("alltoall") {
            CollOp::AllToAll
        } else if l.contains("broadcast") || l.contains("bcast") {
            CollOp::Broadcast
        } else if l.contains("sendrecv") || l.contains("send") || l.contains("recv") {
            CollOp::SendRecv
        } else if l.contains("reduce") {
            CollOp::Reduce
        } else {
            CollOp::Other
        }
    }

    /// Name in the reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CollOp::AllReduce => "all_reduce",
            CollOp::AllGather => "all_gather",
            CollOp::ReduceScatter => "reduce_scatter",
            CollOp::Broadcast => "broadcast",
            CollOp::Reduce => "reduce",
            CollOp::AllToAll => "all_to_all",
            CollOp::SendRecv => "send_recv",
            CollOp::Other => "other",
        }
    }

    /// nccl-tests' bus-bandwidth factor for `n` ranks (PERFORMANCE.md of
    /// nccl-tests): all_reduce 2(n−1)/n; all_gather, reduce_scatter and
    /// all_to_all (n−1)/n; broadcast, reduce and send/recv 1. `None` when
    /// it needs `n` and `n` is unknown, or for unknown operations.
    pub fn bus_factor(self, n: Option<i64>) -> Option<f64> {
        let frac = |k: f64| {
            n.filter(|n| *n >= 1)
                .map(|n| k * (n as f64 - 1.0) / n as f64)
        };
        match self {
            CollOp::AllReduce => frac(2.0),
            CollOp::AllGather | CollOp::ReduceScatter | CollOp::AllToAll => frac(1.0),
            CollOp::Broadcast | CollOp::Reduce | CollOp::SendRecv => Some(1.0),
            CollOp::Other => None,
        }
    }
}

/// Whether a kernel is a communication kernel: its name (without a leading
/// `void `) starts with `nccl` or `rccl`, any case, or the profiler
/// recorded collective arguments on it.
pub fn is_comm_kernel(name: &str, k: &Kernel) -> bool {
    if k.kineto().is_some_and(|x| x.comm.is_some()) {
        return true;
    }
    let n = name.trim_start();
    let n = n.strip_prefix("void ").unwrap_or(n).trim_start();
    let head = n.get(..4).unwrap_or("");
    head.eq_ignore_ascii_case("nccl") || head.eq_ignore_ascii_case("rccl")
}

/// Bytes of one element of a PyTorch dtype as the profiler names it.
pub fn dtype_bytes(dtype: &str) -> Option<i64> {
    let d = dtype.to_ascii_lowercase();
    let d = d.trim_start_matches("torch.");
    Some(match d {
        "float" | "float32" | "int" | "int32" | "uint32" => 4,
        "double" | "float64" | "long" | "int64" | "uint64" | "complexfloat" | "complex64" => 8,
        "complexdouble" | "complex128" => 16,
        "half" | "float16" | "bfloat16" | "short" | "int16" | "uint16" => 2,
        "byte" | "uint8" | "char" | "int8" | "bool" => 1,
        _ if d.starts_with("float8") => 1,
        _ => return None,
    })
}

/// One communication kernel of a rank, in its start order.
#[derive(Clone, Debug, PartialEq)]
pub struct Coll {
    /// Communicator it belongs to: `pg NAME` (the process group the
    /// profiler names), else `default` (all of the rank's communication
    /// kernels).
    pub group: String,
    /// Operation: from the collective's name in the trace (the kernel's
    /// arguments, the `nccl:*` annotation or operator around its launch),
    /// else from the kernel name.
    pub op: CollOp,
    /// Operation as the kernel name tells (the same rule on every rank:
    /// what matching compares).
    pub kernel_op: CollOp,
    /// GPU start, ns, on the file's clock.
    pub start_ns: i64,
    /// GPU end, ns.
    pub end_ns: i64,
    /// Bytes per call (nccl-tests' size: max of input and output elements ×
    /// element size), when the trace says.
    pub bytes: Option<i64>,
    /// Ranks in the communicator, when the trace says.
    pub group_size: Option<i64>,
}

impl Coll {
    /// Duration, ns (0 when the file says `end <= start`).
    pub fn duration_ns(&self) -> i64 {
        self.end_ns.saturating_sub(self.start_ns).max(0)
    }
}

/// Busy, compute, communication and overlap of a set of kernels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// Kernels.
    pub kernels: u64,
    /// Communication kernels among them.
    pub comm_kernels: u64,
    /// First kernel start and last kernel end.
    pub span: Option<(i64, i64)>,
    /// Union of all kernels, ns.
    pub busy_ns: i64,
    /// Union of the non-communication kernels, ns.
    pub compute_ns: i64,
    /// Union of the communication kernels, ns.
    pub comm_ns: i64,
    /// compute ∩ communication, ns.
    pub overlap_ns: i64,
}

impl Breakdown {
    /// Last end − first start (0 without kernels).
    pub fn span_ns(&self) -> i64 {
        self.span.map_or(0, |(s, e)| e.saturating_sub(s))
    }

    /// span − busy.
    pub fn idle_ns(&self) -> i64 {
        self.span_ns().saturating_sub(self.busy_ns)
    }
}

/// The union of intervals given in start order, measured as they come:
/// only the interval being extended is held (a list of every kernel's
/// interval per rank and per step was 100 MB and more at 3 M kernels).
/// Exact: lengths add up in `i128`.
#[derive(Default)]
struct Sweep {
    /// The interval being extended.
    open: Option<(i64, i64)>,
    /// The length of the intervals closed before it.
    closed: i128,
}

impl Sweep {
    /// Add `[start, end)`; `start` is at or after every start added before.
    /// Empty and reversed intervals cover nothing.
    fn add(&mut self, start: i64, end: i64) {
        if end <= start {
            return;
        }
        match &mut self.open {
            Some(open) if start <= open.1 => open.1 = open.1.max(end),
            open => {
                if let Some((s, e)) = open.replace((start, end)) {
                    self.closed += i128::from(e) - i128::from(s);
                }
            }
        }
    }

    /// The length of the union.
    fn total(&self) -> i128 {
        self.closed + self.open.map_or(0, |(s, e)| i128::from(e) - i128::from(s))
    }
}

/// An exact length as the `i64` of [`rprof_model::Intervals::total`], which saturates.
fn clamp_ns(x: i128) -> i64 {
    i64::try_from(x).unwrap_or(if x < 0 { i64::MIN } else { i64::MAX })
}

/// Kernel intervals on their way to a [`Breakdown`], given in start order
/// (see [`kernels_by_start`]).
#[derive(Default)]
struct Acc {
    kernels: u64,
    comm_kernels: u64,
    span: Option<(i64, i64)>,
    compute: Sweep,
    comm: Sweep,
    busy: Sweep,
}

impl Acc {
    fn add(&mut self, start: i64, end: i64, comm: bool) {
        self.kernels += 1;
        let end = end.max(start);
        self.span = Some(match self.span {
            Some((s, e)) => (s.min(start), e.max(end)),
            None => (start, end),
        });
        if comm {
            self.comm_kernels += 1;
            self.comm.add(start, end);
        } else {
            self.compute.add(start, end);
        }
        self.busy.add(start, end);
    }

    fn finish(self) -> Breakdown {
        let (compute, comm, busy) = (self.compute.total(), self.comm.total(), self.busy.total());
        Breakdown {
            kernels: self.kernels,
            comm_kernels: self.comm_kernels,
            span: self.span,
            busy_ns: clamp_ns(busy),
            compute_ns: clamp_ns(compute),
            comm_ns: clamp_ns(comm),
            // |A ∩ B| = |A| + |B| − |A ∪ B|, exact in i128
            overlap_ns: clamp_ns(compute + comm - busy),
        }
    }
}

/// The kernels of `trace` in start order (ties in table order): the
/// table itself when it is in that order already (the usual case), else
/// a sorted list of positions.
fn kernels_by_start(trace: &Trace) -> Box<dyn Iterator<Item = &Kernel> + '_> {
    use rayon::prelude::*;
    let ks = &trace.kernels;
    if ks.windows(2).all(|w| w[0].start_ns <= w[1].start_ns) {
        return Box::new(ks.iter());
    }
    let mut order: Vec<u32> = (0..ks.len() as u32).collect();
    order.par_sort_unstable_by_key(|&i| (ks[i as usize].start_ns, i));
    Box::new(order.into_iter().map(move |i| &ks[i as usize]))
}

/// One step of one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepSummary {
    /// The step's name (the text the step pattern matched).
    pub name: String,
    /// CPU range start, ns (file clock).
    pub start_ns: i64,
    /// CPU range end, ns.
    pub end_ns: i64,
    /// The kernels launched inside the step.
    pub gpu: Breakdown,
}

/// One (process, GPU) of a file.
#[derive(Clone, Debug, PartialEq)]
pub struct UnitSummary {
    /// Process, when known.
    pub pid: Option<u64>,
    /// Device ordinal (−1 for a file without kernels).
    pub device: i64,
    /// The whole-capture breakdown.
    pub all: Breakdown,
    /// Communication kernels in start order.
    pub colls: Vec<Coll>,
    /// Steps, in start order (empty when the trace has none).
    pub steps: Vec<StepSummary>,
    /// Kernels launched outside every step (when there are steps).
    pub outside_steps: u64,
}

/// One file reduced.
#[derive(Clone, Debug, PartialEq)]
pub struct FileSummary {
    /// The file.
    pub file: PathBuf,
    /// Position on the command line (after directory expansion).
    pub index: usize,
    /// Which profiler wrote it.
    pub source: Source,
    /// Where its time zero is.
    pub clock: Option<ClockOrigin>,
    /// What it says about the job.
    pub dist: Option<DistInfo>,
    /// Its (process, GPU) units, by (pid, device); empty when the file has
    /// no kernels.
    pub units: Vec<UnitSummary>,
    /// Kernels with end ≤ start (kept, zero length in the unions).
    pub zero_length: u64,
    /// The reader's notes.
    pub notes: Vec<String>,
}

/// What [`summarize`] needs of a trace's ranges: the step ranges per
/// process and the communication ranges per thread. Taken while the ranges
/// are in file order (the order breaks ties between ranges with the same
/// times); the rest of the summary reads no range, so it can run after the
/// ranges are sorted ([`summarize_scanned`]).
pub struct RangeScan {
    step_ranges: BTreeMap<u64, Vec<(i64, i64, String)>>,
    comm_ranges: FastMap<ThreadKey, Vec<CommRange>>,
    profiler_steps: usize,
}

impl RangeScan {
    /// Number of ranges whose name begins with `ProfilerStep#` (counted
    /// in the same look at each name, for the HTML report's overview).
    pub fn profiler_steps(&self) -> usize {
        self.profiler_steps
    }
}

/// A communication range: start, end, place in the file, the range.
type CommRange = (i64, i64, usize, Range);

/// Find the step ranges (`steps` matches their names: the matched text is
/// the step's name, so `ProfilerStep#3, op_id = 9` and `ProfilerStep#3`
/// are the same step) and the communication ranges (`nccl:*` annotations,
/// operators with collective arguments).
pub fn scan_ranges(trace: &Trace, steps: &Regex) -> RangeScan {
    use rayon::prelude::*;
    // (place in the file, is a communication range, step name), in file
    // order: blocks of ranges side by side, each block with its own copy
    // of the regex (one regex shared by threads takes a lock per search)
    const BLOCK: usize = 1 << 16;
    // per block: its hits, and its number of ProfilerStep ranges
    type Hit = (usize, bool, Option<String>);
    let blocks: Vec<(Vec<Hit>, usize)> = trace
        .ranges
        .par_chunks(BLOCK)
        .enumerate()
        .map_init(
            || steps.clone(),
            |steps, (b, block)| {
                let mut hits = Vec::new();
                let mut profiler_steps = 0;
                for (j, r) in block.iter().enumerate() {
                    let name = trace.range_name(r);
                    profiler_steps += usize::from(name.starts_with("ProfilerStep#"));
                    let has_args = trace
                        .range_meta
                        .get(&r.text)
                        .is_some_and(|m| m.comm.is_some());
                    let comm = has_args || name.starts_with("nccl:");
                    let step = steps.find(name).map(|m| m.as_str().to_owned());
                    if comm || step.is_some() {
                        hits.push((b * BLOCK + j, comm, step));
                    }
                }
                (hits, profiler_steps)
            },
        )
        .collect();
    let profiler_steps = blocks.iter().map(|b| b.1).sum();
    let hits = blocks.into_iter().flat_map(|b| b.0);
    let mut step_ranges: BTreeMap<u64, Vec<(i64, i64, String)>> = BTreeMap::new();
    let mut comm_ranges: FastMap<ThreadKey, Vec<CommRange>> = FastMap::default();
    for (i, comm, step) in hits {
        let Some(r) = trace.ranges.get(i) else {
            continue;
        };
        if comm {
            comm_ranges
                .entry(r.thread)
                .or_default()
                .push((r.start_ns, r.end_ns, i, *r));
        }
        if let Some(name) = step {
            let pid = trace.thread_id(r.thread).pid;
            step_ranges
                .entry(pid)
                .or_default()
                .push((r.start_ns, r.end_ns.max(r.start_ns), name));
        }
    }
    RangeScan {
        step_ranges,
        comm_ranges,
        profiler_steps,
    }
}

/// Reduce a trace to its units. `steps` finds step ranges by name (see
/// [`scan_ranges`]).
pub fn summarize(trace: &Trace, index: usize, steps: &Regex) -> FileSummary {
    summarize_scanned(trace, index, scan_ranges(trace, steps))
}

/// [`summarize`] with the ranges already scanned; reads no range of
/// `trace` (they may have been reordered since the scan).
pub fn summarize_scanned(trace: &Trace, index: usize, scan: RangeScan) -> FileSummary {
    let RangeScan {
        mut step_ranges,
        mut comm_ranges,
        ..
    } = scan;
    // Kernels whose process the trace does not tell (Kineto kernels with no
    // launch row) belong to the file's only launching process, if there is one.
    let mut pids = trace.launches.iter().map(|l| trace.thread_id(l.thread).pid);
    let only_pid = match pids.next() {
        Some(p) if pids.all(|q| q == p) => Some(p),
        _ => None,
    };

    for v in step_ranges.values_mut() {
        v.sort();
        // one range per step name: the first (re-entered names are rare)
        let mut seen = std::collections::HashSet::new();
        v.retain(|s| seen.insert(s.2.clone()));
    }
    for v in comm_ranges.values_mut() {
        // places in the file are distinct: one order
        v.sort_unstable_by_key(|c| (c.0, c.1, c.2));
    }
    let all_steps: Vec<(i64, i64, String)> = {
        let mut v: Vec<_> = step_ranges.values().flatten().cloned().collect();
        v.sort();
        let mut seen = std::collections::HashSet::new();
        v.retain(|s| seen.insert(s.2.clone()));
        v
    };

    struct UnitAcc<'a> {
        all: Acc,
        colls: Vec<Coll>,
        steps: &'a [(i64, i64, String)],
        step_acc: Vec<Acc>,
        outside: u64,
    }
    let mut units: BTreeMap<(Option<u64>, i64), UnitAcc<'_>> = BTreeMap::new();
    let mut zero_length = 0u64;
    // in start order, for the unions' sweeps (the communication kernels
    // are sorted by start and end below, ties in table order, as before)
    for k in kernels_by_start(trace) {
        let pid = trace.kernel_pid(k).or(only_pid);
        let unit = units.entry((pid, k.device)).or_insert_with(|| {
            let steps: &[(i64, i64, String)] = match pid {
                Some(p) => step_ranges.get(&p).map_or(&[], |v| v.as_slice()),
                None => &all_steps,
            };
            UnitAcc {
                all: Acc::default(),
                colls: Vec::new(),
                steps,
                step_acc: (0..steps.len()).map(|_| Acc::default()).collect(),
                outside: 0,
            }
        });
        if k.end_ns <= k.start_ns {
            zero_length += 1;
        }
        let name = trace.strings.get(k.name);
        let comm = is_comm_kernel(name, k);
        unit.all.add(k.start_ns, k.end_ns, comm);
        if !unit.steps.is_empty() {
            // the step whose CPU range holds the launch (else the GPU start)
            let t = k
                .launch
                .get()
                .and_then(|i| trace.launches.get(i as usize))
                .map_or(k.start_ns, |l| l.start_ns);
            let i = unit.steps.partition_point(|s| s.0 <= t);
            match i.checked_sub(1) {
                Some(j) if t <= unit.steps[j].1 => unit.step_acc[j].add(k.start_ns, k.end_ns, comm),
                _ => unit.outside += 1,
            }
        }
        if comm {
            let kernel_op = CollOp::classify(name);
            // the kernel's own collective arguments, else those of the
            // operator or `nccl:*` annotation around its launch
            let around = enclosing_comm(trace, &comm_ranges, k);
            let args = k.kineto().and_then(|x| x.comm.as_deref()).or(around.args);
            let op_name = args
                .and_then(|a| a.collective)
                .map(|c| trace.strings.get(c))
                .filter(|s| CollOp::classify(s) != CollOp::Other);
            let op = match (op_name, around.op) {
                (Some(n), _) => CollOp::classify(n),
                (None, Some(op)) => op,
                (None, None) => kernel_op,
            };
            let group = match args.and_then(|a| a.pg_name) {
                Some(pg) => format!("pg {}", trace.strings.get(pg)),
                None => "default".to_owned(),
            };
            let bytes = args.and_then(|a| {
                let n = a.in_nelems.into_iter().chain(a.out_nelems).max()?;
                let size = dtype_bytes(trace.strings.get(a.dtype?))?;
                n.checked_mul(size).filter(|b| *b >= 0)
            });
            unit.colls.push(Coll {
                group,
                op,
                kernel_op,
                start_ns: k.start_ns,
                end_ns: k.end_ns,
                bytes,
                group_size: args.and_then(|a| a.group_size),
            });
        }
    }
    let units = units
        .into_iter()
        .map(|((pid, device), mut u)| {
            u.colls.sort_by_key(|c| (c.start_ns, c.end_ns));
            UnitSummary {
                pid,
                device,
                all: u.all.finish(),
                colls: u.colls,
                steps: u
                    .steps
                    .iter()
                    .zip(u.step_acc)
                    .map(|((s, e, n), acc)| StepSummary {
                        name: n.clone(),
                        start_ns: *s,
                        end_ns: *e,
                        gpu: acc.finish(),
                    })
                    .collect(),
                outside_steps: u.outside,
            }
        })
        .collect();
    FileSummary {
        file: trace.path.clone(),
        index,
        source: trace.source,
        clock: trace.clock.clone(),
        dist: trace.dist.clone(),
        units,
        zero_length,
        notes: trace.notes.clone(),
    }
}

/// What the ranges around a kernel's launch say about its collective.
#[derive(Default)]
struct Around<'t> {
    args: Option<&'t CommArgs>,
    op: Option<CollOp>,
}

/// How many enclosing candidates to look at, innermost first (collective
/// operators nest a level or two deep; this bounds hostile nesting).
const MAX_ENCLOSING: usize = 16;

/// The innermost communication ranges on the launching thread that hold
/// the launch: the first with collective arguments, and the first whose
/// name (`nccl:all_to_all, op_id = 7`) or arguments name the operation.
fn enclosing_comm<'t>(
    trace: &'t Trace,
    comm_ranges: &'t FastMap<ThreadKey, Vec<CommRange>>,
    k: &Kernel,
) -> Around<'t> {
    let mut out = Around::default();
    let Some(l) = k.launch.get().and_then(|i| trace.launches.get(i as usize)) else {
        return out;
    };
    let Some(v) = comm_ranges.get(&l.thread) else {
        return out;
    };
    let t = l.start_ns;
    let end = v.partition_point(|r| r.0 <= t);
    for (_, e, _, r) in v[..end].iter().rev().take(MAX_ENCLOSING) {
        if *e < t {
            continue;
        }
        let args = trace
            .range_meta
            .get(&r.text)
            .and_then(|m| m.comm.as_deref());
        if out.args.is_none() {
            out.args = args;
        }
        if out.op.is_none() {
            let from_args = args
                .and_then(|a| a.collective)
                .map(|c| CollOp::classify(trace.strings.get(c)));
            let name = trace.range_name(r);
            let from_name = name
                .strip_prefix("nccl:")
                .map(|n| CollOp::classify(n.split(',').next().unwrap_or(n)));
            out.op = from_args.or(from_name).filter(|op| *op != CollOp::Other);
        }
        if out.args.is_some() && out.op.is_some() {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The breakdown as the interval lists compute it: every kernel's
    /// interval kept, sorted, merged, united and intersected.
    fn by_lists(ks: &[(i64, i64, bool)]) -> (i64, i64, i64, i64) {
        let pick = |comm: bool| {
            rprof_model::Intervals::from_unsorted(
                ks.iter()
                    .filter(|k| k.2 == comm)
                    .map(|&(s, e, _)| (s, e.max(s)))
                    .collect(),
            )
        };
        let (compute, comm) = (pick(false), pick(true));
        (
            compute.union(&comm).total(),
            compute.total(),
            comm.total(),
            compute.intersect(&comm).total(),
        )
    }

    fn by_sweep(ks: &[(i64, i64, bool)]) -> (i64, i64, i64, i64) {
        let mut sorted = ks.to_vec();
        sorted.sort_by_key(|k| k.0);
        let mut acc = Acc::default();
        for &(s, e, comm) in &sorted {
            acc.add(s, e, comm);
        }
        let b = acc.finish();
        (b.busy_ns, b.compute_ns, b.comm_ns, b.overlap_ns)
    }

    proptest! {
        /// The sweep gives the figures of the lists, for overlapping,
        /// touching, empty and reversed intervals.
        #[test]
        fn sweep_is_the_lists(ks in proptest::collection::vec((0i64..60, 0i64..60, any::<bool>()), 0..40)) {
            prop_assert_eq!(by_sweep(&ks), by_lists(&ks));
        }

        /// And at the edges of `i64`, where the lists' lengths saturate.
        #[test]
        fn sweep_is_the_lists_at_the_edges(ks in proptest::collection::vec(
            (prop_oneof![Just(i64::MIN), Just(i64::MIN + 1), Just(-1i64), Just(0i64), Just(i64::MAX - 1), Just(i64::MAX)],
             prop_oneof![Just(i64::MIN), Just(-1i64), Just(0i64), Just(1i64), Just(i64::MAX)],
             any::<bool>()),
            0..8,
        )) {
            prop_assert_eq!(by_sweep(&ks), by_lists(&ks));
        }
    }

    /// Kernels out of start order in the table give the breakdown of the
    /// same kernels in order (expected: the interval lists' figures), and
    /// the communication kernels in start order, ties in table order.
    #[test]
    fn kernels_out_of_order_are_swept_in_order() {
        let mut t = Trace::empty("x".into(), rprof_model::Source::Nsys);
        let gemm = t.strings.push("ampere_sgemm_128x64_nn");
        let nccl = t.strings.push("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
        // (start, end, comm), not in start order
        let ks = [
            (50, 80, false),
            (10, 30, true),
            (20, 60, false),
            (10, 15, true),
            (70, 70, false),
            (90, 120, true),
            (5, 12, false),
        ];
        for (row, &(s, e, comm)) in ks.iter().enumerate() {
            t.kernels.push(rprof_model::Kernel {
                row: row as u32,
                start_ns: s,
                end_ns: e,
                device: 0,
                context: rprof_model::OptU32::NONE,
                stream: 7,
                correlation: row as i64,
                global_pid_bits: rprof_model::NO_PID,
                name: if comm { nccl } else { gemm },
                mangled: rprof_model::OptStr::NONE,
                grid: [1, 1, 1],
                block: [1, 1, 1],
                registers_per_thread: None,
                static_smem_bytes: rprof_model::OptU32::NONE,
                dynamic_smem_bytes: rprof_model::OptU32::NONE,
                launch: rprof_model::OptU32::NONE,
                extra: None,
            });
        }
        let f = summarize(&t, 0, &Regex::new("^ProfilerStep#[0-9]+").unwrap());
        assert_eq!(f.units.len(), 1);
        let u = &f.units[0];
        let b = u.all;
        assert_eq!(
            (b.busy_ns, b.compute_ns, b.comm_ns, b.overlap_ns),
            by_lists(&ks)
        );
        // by hand: compute [5,12) [20,80) = 67; comm [10,30) [90,120) = 50;
        // busy [5,80) [90,120) = 105; overlap [10,12) [20,30) = 12
        assert_eq!(
            (b.busy_ns, b.compute_ns, b.comm_ns, b.overlap_ns),
            (105, 67, 50, 12)
        );
        assert_eq!((b.kernels, b.comm_kernels, b.span), (7, 3, Some((5, 120))));
        let colls: Vec<(i64, i64)> = u.colls.iter().map(|c| (c.start_ns, c.end_ns)).collect();
        assert_eq!(colls, [(10, 15), (10, 30), (90, 120)]);
    }

    /// The scan runs in blocks side by side: over several blocks its hits
    /// are those of a plain loop, in file order (expected values from the
    /// names the test gave each range, not from the code's lookups).
    #[test]
    fn range_scan_in_blocks_keeps_file_order() {
        let mut t = Trace::empty("x".into(), rprof_model::Source::Nsys);
        let comm = t.strings.push("nccl:all_reduce");
        let other = t.strings.push("aten::mm");
        let n = 3 * (1 << 16) + 17;
        let mut want_comm: Vec<(u64, i64, i64, usize)> = Vec::new();
        let mut want_steps: Vec<(i64, String)> = Vec::new();
        for i in 0..n {
            let thread = (i % 2) as u64 + 1;
            let start = (n - i) as i64; // not in time order
            let text = if i % 1000 == 3 {
                want_comm.push((thread, start, start + 5, i));
                comm
            } else if i % 7919 == 11 {
                let name = format!("ProfilerStep#{i}");
                want_steps.push((start, name.clone()));
                t.strings.push(&name)
            } else {
                other
            };
            t.ranges.push(Range {
                start_ns: start,
                end_ns: start + 5,
                thread,
                text,
                domain: 0,
            });
        }
        let scan = scan_ranges(&t, &Regex::new(r"ProfilerStep#\d+").unwrap());
        let mut got_comm: Vec<(u64, i64, i64, usize)> = scan
            .comm_ranges
            .iter()
            .flat_map(|(th, v)| v.iter().map(move |c| (*th, c.0, c.1, c.2)))
            .collect();
        got_comm.sort_by_key(|c| c.3);
        assert_eq!(got_comm, want_comm);
        // within a thread, in file order
        for v in scan.comm_ranges.values() {
            assert!(v.windows(2).all(|w| w[0].2 < w[1].2));
        }
        let got_steps: Vec<(i64, String)> = scan
            .step_ranges
            .values()
            .flatten()
            .map(|(s, _, name)| (*s, name.clone()))
            .collect();
        assert_eq!(scan.profiler_steps(), want_steps.len());
        assert_eq!(got_steps, want_steps);
    }

    #[test]
    fn ops_from_names() {
        for (n, op) in [
            (
                "ncclKernel_AllReduce_RING_LL_Sum_float(x)",
                CollOp::AllReduce,
            ),
            (
                "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL",
                CollOp::ReduceScatter,
            ),
            ("ncclDevKernel_AllGather_RING_LL", CollOp::AllGather),
            ("ncclDevKernel_SendRecv", CollOp::SendRecv),
            ("ncclKernel_Broadcast_RING_LL_Sum_int8_t", CollOp::Broadcast),
            ("ncclDevKernel_Reduce_Sum_f32_RING_LL", CollOp::Reduce),
            ("allreduce", CollOp::AllReduce),
            ("_allgather_base", CollOp::AllGather),
            ("all_to_all", CollOp::AllToAll),
            ("ncclKernel_Foo", CollOp::Other),
        ] {
            assert_eq!(CollOp::classify(n), op, "{n}");
        }
        assert_eq!(CollOp::AllReduce.bus_factor(Some(4)), Some(1.5));
        assert_eq!(CollOp::AllGather.bus_factor(Some(4)), Some(0.75));
        assert_eq!(CollOp::AllGather.bus_factor(None), None);
        assert_eq!(CollOp::Broadcast.bus_factor(None), Some(1.0));
        assert_eq!(dtype_bytes("BFloat16"), Some(2));
        assert_eq!(dtype_bytes("Float"), Some(4));
        assert_eq!(dtype_bytes("Mystery"), None);
    }
}
