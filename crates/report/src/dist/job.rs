//! The job: file summaries joined into ranks, collectives matched across
//! ranks, wait vs transfer, stragglers, steps, clock alignment.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rprof_model::Source;
use rprof_model::median_of_sorted;
use rprof_model::{RankCandidate, assign_ranks};

use super::summary::{Breakdown, Coll, CollOp, FileSummary, UnitSummary};

/// One rank: one GPU of one process.
#[derive(Clone, Debug, PartialEq)]
pub struct RankRow {
    /// Rank id.
    pub rank: u32,
    /// How the rank was decided.
    pub rank_from: &'static str,
    /// The file.
    pub file: PathBuf,
    /// Which profiler wrote it.
    pub source: Source,
    /// Process, when known.
    pub pid: Option<u64>,
    /// Device ordinal (`None`: the file has no kernels).
    pub device: Option<i64>,
    /// Whole-capture breakdown.
    pub all: Breakdown,
    /// Σ over the rank's matched collectives of the shortest matched
    /// duration; `None` when they cannot be matched.
    pub comm_transfer_ns: Option<i64>,
    /// Σ of (own duration − shortest matched duration).
    pub comm_wait_ns: Option<i64>,
    /// Matched collectives at which this rank arrived last (`None`: no
    /// clock alignment or nothing matched).
    pub times_last: Option<u64>,
    /// Σ of (last arrival − first arrival) at those collectives, ns.
    pub lateness_ns: Option<i64>,
    /// Estimated clock skew against the reference rank, ns.
    pub clock_skew_ns: Option<i64>,
    /// Kernels launched outside every step (when the rank has steps).
    pub outside_steps: u64,
    /// Why some figure is missing (`no kernels`).
    pub note: Option<String>,
}

/// One row of the collective table.
#[derive(Clone, Debug, PartialEq)]
pub struct CollRow {
    /// Operation.
    pub op: CollOp,
    /// Bytes per call (nccl-tests' size), when known.
    pub bytes: Option<i64>,
    /// Ranks in the communicator (the trace's `Group size`, else the ranks
    /// that took part), when known.
    pub group_size: Option<i64>,
    /// Kernels over all ranks.
    pub calls: u64,
    /// Ranks with at least one.
    pub ranks: u64,
    /// Σ kernel durations over all ranks, ns.
    pub total_ns: i64,
    /// total / calls, ns.
    pub mean_ns: f64,
    /// Mean transfer time (shortest duration of each matched collective),
    /// ns, over the matched collectives of this row.
    pub transfer_mean_ns: Option<f64>,
    /// Which time the bandwidths divide by: `transfer` or `duration`.
    pub bw_time: &'static str,
    /// Algorithm bandwidth, GB/s (10⁹ B/s): bytes / time.
    pub algbw_gbps: Option<f64>,
    /// Bus bandwidth, GB/s: algbw × nccl-tests' factor.
    pub busbw_gbps: Option<f64>,
    /// Smallest per-rank total of this row, ns.
    pub rank_min_ns: i64,
    /// Largest per-rank total, ns.
    pub rank_max_ns: i64,
    /// The rank with the largest total.
    pub rank_max: u32,
}

/// One step of one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct StepRow {
    /// Step name.
    pub step: String,
    /// Rank.
    pub rank: u32,
    /// CPU duration of the step range, ns.
    pub cpu_ns: i64,
    /// The kernels launched in it.
    pub gpu: Breakdown,
}

/// Step time across ranks.
#[derive(Clone, Debug, PartialEq)]
pub struct StepSpread {
    /// Step name.
    pub step: String,
    /// Ranks that have the step.
    pub ranks: u64,
    /// Shortest CPU step time, ns.
    pub min_ns: i64,
    /// Longest, ns.
    pub max_ns: i64,
    /// The rank with the longest.
    pub slowest_rank: u32,
}

/// How the files' clocks were put on one time line.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockInfo {
    /// The method, when aligned.
    pub method: Option<String>,
    /// Why not, when not.
    pub reason: Option<String>,
    /// Largest |estimated skew| over the ranks, ns.
    pub max_skew_ns: Option<i64>,
    /// The rank the skews are measured against.
    pub reference_rank: Option<u32>,
}

/// Who arrives last.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Stragglers {
    /// Matched collectives (each counted once, not per rank).
    pub matched: u64,
    /// Those where one rank arrived strictly last.
    pub with_last: u64,
    /// The rank last most often: (rank, times, Σ lateness ns).
    pub most_last: Option<(u32, u64, i64)>,
    /// The rank with the most compute time: (rank, compute ns).
    pub most_compute: Option<(u32, i64)>,
    /// Ranks called stragglers (last at more than half of the matched
    /// collectives with a last rank).
    pub stragglers: Vec<u32>,
    /// Why lateness is not given.
    pub reason: Option<String>,
}

/// Everything `rprof dist` prints.
#[derive(Clone, Debug, PartialEq)]
pub struct DistReport {
    /// Input files in order.
    pub files: Vec<PathBuf>,
    /// Ranks, by rank id.
    pub ranks: Vec<RankRow>,
    /// Collective table.
    pub collectives: Vec<CollRow>,
    /// Steps per rank.
    pub steps: Vec<StepRow>,
    /// Step time spread.
    pub step_spread: Vec<StepSpread>,
    /// Clock alignment.
    pub clock: ClockInfo,
    /// Stragglers.
    pub stragglers: Stragglers,
    /// What could not be computed and why; notes of the readers.
    pub notes: Vec<String>,
}

/// Files that cannot belong to one job.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct JobError(pub String);

/// Join file summaries (in file order) into the job report.
pub fn build(files: Vec<FileSummary>) -> Result<DistReport, JobError> {
    check_same_job(&files)?;
    let mut notes = Vec::new();
    for f in &files {
        for n in &f.notes {
            notes.push(format!("{}: {n}", f.file.display()));
        }
        if f.zero_length > 0 {
            notes.push(format!(
                "{}: {} kernels end at or before their start (counted, zero length)",
                f.file.display(),
                f.zero_length
            ));
        }
    }

    // rank candidates: every unit; a file without kernels gets one empty row
    let mut cands = Vec::new();
    let empty = UnitSummary {
        pid: None,
        device: -1,
        all: Breakdown::default(),
        colls: Vec::new(),
        steps: Vec::new(),
        outside_steps: 0,
    };
    for f in &files {
        let declared = if f.units.len() <= 1 {
            f.dist.as_ref().and_then(|d| d.rank)
        } else {
            None
        };
        if f.units.is_empty() {
            cands.push(RankCandidate {
                file_index: f.index,
                file: f.file.clone(),
                pid: None,
                device: -1,
                declared_rank: declared,
            });
        }
        for u in &f.units {
            cands.push(RankCandidate {
                file_index: f.index,
                file: f.file.clone(),
                pid: u.pid,
                device: u.device,
                declared_rank: declared,
            });
        }
    }
    let n_declared = cands.iter().filter(|c| c.declared_rank.is_some()).count();
    let sources = assign_ranks(cands);
    if n_declared > 0 && sources.iter().any(|s| s.rank_from != "distributedInfo") {
        notes.push(
            "the ranks the profiler declared are missing or not distinct; ranks follow the file and process order"
                .to_owned(),
        );
    }
    let by_index: BTreeMap<usize, &FileSummary> = files.iter().map(|f| (f.index, f)).collect();
    // (rank row, unit, file) in rank order
    let mut ranks: Vec<(RankRow, &UnitSummary, &FileSummary)> = Vec::new();
    for s in &sources {
        let Some(f) = by_index.get(&s.file_index) else {
            continue;
        };
        let unit = f
            .units
            .iter()
            .find(|u| u.pid == s.pid && u.device == s.device)
            .unwrap_or(&empty);
        let no_kernels = f.units.is_empty();
        ranks.push((
            RankRow {
                rank: s.rank.0,
                rank_from: s.rank_from,
                file: f.file.clone(),
                source: f.source,
                pid: unit.pid,
                device: (!no_kernels).then_some(unit.device),
                all: unit.all,
                comm_transfer_ns: None,
                comm_wait_ns: None,
                times_last: None,
                lateness_ns: None,
                clock_skew_ns: None,
                outside_steps: unit.outside_steps,
                note: no_kernels.then(|| "no kernels in this file".to_owned()),
            },
            unit,
            f,
        ));
    }

    let clock = align(&files);
    let offset = |f: &FileSummary| -> Option<i64> {
        clock.method.as_ref()?;
        if files.len() == 1 {
            return Some(0);
        }
        f.clock.as_ref().map(|c| c.epoch_ns)
    };

    // communicators: group name -> indexes into `ranks` of the participants
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (_, u, _)) in ranks.iter().enumerate() {
        let mut names: Vec<&str> = u.colls.iter().map(|c| c.group.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        for n in names {
            groups.entry(n).or_default().push(i);
        }
    }
    let world: Option<i64> = files
        .iter()
        .filter_map(|f| f.dist.as_ref().and_then(|d| d.world_size))
        .max();
    let mut transfer = vec![Some(0i64); ranks.len()];
    let mut wait = vec![Some(0i64); ranks.len()];
    let mut last = vec![0u64; ranks.len()];
    let mut late = vec![0i64; ranks.len()];
    let mut skew_samples: Vec<Vec<i64>> = vec![Vec::new(); ranks.len()];
    let reference = groups.values().flatten().min().copied();
    let mut stragglers = Stragglers::default();
    // per instance transfer times keyed like the collective table
    let mut row_transfer: BTreeMap<RowKey, (i64, u64)> = BTreeMap::new();
    let mut any_matched = false;
    for (name, members) in &groups {
        let seqs: Vec<Vec<&Coll>> = members
            .iter()
            .map(|&i| {
                ranks[i]
                    .1
                    .colls
                    .iter()
                    .filter(|c| c.group == *name)
                    .collect()
            })
            .collect();
        let counts: Vec<usize> = seqs.iter().map(Vec::len).collect();
        let unmatched = if let Some(w) = world.filter(|w| (ranks.len() as i64) < *w) {
            Some(format!(
                "only {} of the job's {w} ranks are present",
                ranks.len()
            ))
        } else if members.len() < 2 {
            Some(format!(
                "only rank {} has communication kernels in it",
                ranks[members[0]].0.rank
            ))
        } else if counts.iter().any(|c| *c != counts[0]) {
            let list: Vec<String> = members
                .iter()
                .zip(&counts)
                .map(|(&i, c)| format!("rank {}: {c}", ranks[i].0.rank))
                .collect();
            Some(format!(
                "the ranks have different numbers of collectives ({})",
                list.join(", ")
            ))
        } else {
            (0..counts[0])
                .find(|&k| seqs.iter().any(|s| s[k].kernel_op != seqs[0][k].kernel_op))
                .map(|k| {
                    let ops: Vec<String> = members
                        .iter()
                        .zip(&seqs)
                        .map(|(&i, s)| {
                            format!("rank {}: {}", ranks[i].0.rank, s[k].kernel_op.as_str())
                        })
                        .collect();
                    format!(
                        "collective #{} is not the same operation on every rank ({})",
                        k + 1,
                        ops.join(", ")
                    )
                })
        };
        if let Some(why) = unmatched {
            notes.push(format!(
                "communicator {}: collectives not matched across ranks: {why}; comm_transfer_ns and comm_wait_ns are null for its ranks",
                esc_group(name)
            ));
            for &i in members {
                transfer[i] = None;
                wait[i] = None;
            }
            continue;
        }
        any_matched = true;
        let offs: Vec<Option<i64>> = members.iter().map(|&i| offset(ranks[i].2)).collect();
        let aligned = offs.iter().all(Option::is_some);
        let ref_pos = reference.and_then(|r| members.iter().position(|&i| i == r));
        for k in 0..counts[0] {
            let durs: Vec<i64> = seqs.iter().map(|s| s[k].duration_ns()).collect();
            let t = durs.iter().copied().min().unwrap_or(0);
            for (j, &i) in members.iter().enumerate() {
                transfer[i] = transfer[i].map(|x| x.saturating_add(t));
                wait[i] = wait[i].map(|x| x.saturating_add(durs[j] - t));
            }
            let c0 = seqs[0][k];
            let n = c0.group_size.or(Some(members.len() as i64));
            let e = row_transfer.entry((c0.op, c0.bytes, n)).or_default();
            e.0 = e.0.saturating_add(t);
            e.1 += 1;
            stragglers.matched += 1;
            if aligned {
                let arr: Vec<i64> = seqs
                    .iter()
                    .zip(&offs)
                    .map(|(s, o)| s[k].start_ns.saturating_add(o.unwrap_or(0)))
                    .collect();
                let max = arr.iter().copied().max().unwrap_or(0);
                let min = arr.iter().copied().min().unwrap_or(0);
                let at_max: Vec<usize> = (0..arr.len()).filter(|&j| arr[j] == max).collect();
                if max > min && at_max.len() == 1 {
                    let i = members[at_max[0]];
                    last[i] += 1;
                    late[i] = late[i].saturating_add(max - min);
                    stragglers.with_last += 1;
                }
                if let Some(rp) = ref_pos {
                    let ends: Vec<i64> = seqs
                        .iter()
                        .zip(&offs)
                        .map(|(s, o)| s[k].end_ns.saturating_add(o.unwrap_or(0)))
                        .collect();
                    for (j, &i) in members.iter().enumerate() {
                        skew_samples[i].push(ends[j] - ends[rp]);
                    }
                }
            }
        }
    }
    let lateness_ok = clock.method.is_some() && any_matched;
    if clock.method.is_none() {
        stragglers.reason = clock.reason.clone();
    } else if !any_matched {
        stragglers.reason = Some("no collective could be matched across ranks".to_owned());
    }
    let mut max_skew: Option<i64> = None;
    for (i, (row, u, _)) in ranks.iter_mut().enumerate() {
        if row.device.is_some() {
            row.comm_transfer_ns = transfer[i];
            row.comm_wait_ns = wait[i];
        }
        let in_matched = !u.colls.is_empty() && transfer[i].is_some();
        if lateness_ok && in_matched {
            row.times_last = Some(last[i]);
            row.lateness_ns = Some(late[i]);
        }
        let s = &mut skew_samples[i];
        s.sort_unstable();
        if let Some(m) = median_of_sorted(s) {
            let m = m.round() as i64;
            row.clock_skew_ns = Some(m);
            max_skew = Some(max_skew.map_or(m.abs(), |x: i64| x.max(m.abs())));
        }
    }
    let mut clock = clock;
    clock.max_skew_ns = max_skew;
    clock.reference_rank = if max_skew.is_some() {
        reference.map(|r| ranks[r].0.rank)
    } else {
        None
    };
    if lateness_ok && stragglers.with_last > 0 {
        let best = (0..ranks.len())
            .filter(|&i| last[i] > 0)
            .max_by_key(|&i| (last[i], late[i], std::cmp::Reverse(ranks[i].0.rank)));
        if let Some(i) = best {
            stragglers.most_last = Some((ranks[i].0.rank, last[i], late[i]));
        }
        for i in 0..ranks.len() {
            if 2 * last[i] > stragglers.with_last {
                stragglers.stragglers.push(ranks[i].0.rank);
            }
        }
    }
    stragglers.most_compute = ranks
        .iter()
        .filter(|r| r.0.device.is_some())
        .max_by_key(|r| (r.0.all.compute_ns, std::cmp::Reverse(r.0.rank)))
        .map(|r| (r.0.rank, r.0.all.compute_ns));

    let collectives = coll_table(&ranks, &groups, &row_transfer);
    let (steps, step_spread) = step_tables(&ranks);
    if ranks.iter().any(|r| !r.1.steps.is_empty()) {
        let outside: u64 = ranks.iter().map(|r| r.0.outside_steps).sum();
        if outside > 0 {
            notes.push(format!(
                "{outside} kernels were launched outside every step (in the per-rank figures, not in the per-step ones)"
            ));
        }
    }
    let mixed = files.iter().any(|f| f.source != files[0].source);
    if mixed {
        notes.push(
            "nsys and PyTorch-profiler files are mixed: their clocks are not aligned".to_owned(),
        );
    }
    Ok(DistReport {
        files: files.iter().map(|f| f.file.clone()).collect(),
        ranks: ranks.into_iter().map(|r| r.0).collect(),
        collectives,
        steps,
        step_spread,
        clock,
        stragglers,
        notes,
    })
}

fn esc_group(s: &str) -> String {
    super::render::esc(s)
}

/// Different world sizes or process groups: one error naming two files.
fn check_same_job(files: &[FileSummary]) -> Result<(), JobError> {
    let with: Vec<&FileSummary> = files.iter().filter(|f| f.dist.is_some()).collect();
    let Some(first) = with.first() else {
        return Ok(());
    };
    let d0 = first.dist.as_ref();
    for f in &with[1..] {
        let d = f.dist.as_ref();
        let ws0 = d0.and_then(|d| d.world_size);
        let ws = d.and_then(|d| d.world_size);
        if ws0.is_some() && ws.is_some() && ws0 != ws {
            return Err(JobError(format!(
                "files of different jobs: {} has world size {} and {} has world size {}",
                first.file.display(),
                ws0.unwrap_or(0),
                f.file.display(),
                ws.unwrap_or(0)
            )));
        }
        let pg0 = d0.and_then(|d| d.pg_config.as_deref());
        let pg = d.and_then(|d| d.pg_config.as_deref());
        if pg0.is_some() && pg.is_some() && pg0 != pg {
            return Err(JobError(format!(
                "files of different jobs: {} and {} list different process groups (distributedInfo.pg_config)",
                first.file.display(),
                f.file.display()
            )));
        }
    }
    Ok(())
}

/// One file: one clock. Several: the files' own wall-clock origins, when
/// every file has one and all come from the same profiler.
fn align(files: &[FileSummary]) -> ClockInfo {
    let mut c = ClockInfo {
        method: None,
        reason: None,
        max_skew_ns: None,
        reference_rank: None,
    };
    if files.len() == 1 {
        c.method = Some("one file: all ranks share its clock".to_owned());
        return c;
    }
    if files.iter().any(|f| f.source != files[0].source) {
        c.reason = Some(
            "nsys and PyTorch-profiler files are mixed: their clocks are not aligned".to_owned(),
        );
        return c;
    }
    if let Some(f) = files.iter().find(|f| f.clock.is_none()) {
        c.reason = Some(format!(
            "{} does not say where its time zero is on the wall clock",
            f.file.display()
        ));
        return c;
    }
    let method = files
        .iter()
        .filter_map(|f| f.clock.as_ref())
        .map(|k| k.method)
        .next()
        .unwrap_or("");
    c.method = Some(format!("each file's wall-clock origin: {method}"));
    c
}

/// A row of the collective table: (op, bytes per call, group size).
type RowKey = (CollOp, Option<i64>, Option<i64>);

type RankRef<'a> = (RankRow, &'a UnitSummary, &'a FileSummary);

fn coll_table(
    ranks: &[RankRef<'_>],
    groups: &BTreeMap<&str, Vec<usize>>,
    row_transfer: &BTreeMap<RowKey, (i64, u64)>,
) -> Vec<CollRow> {
    // per key: per rank total and count
    let mut acc: BTreeMap<RowKey, BTreeMap<usize, (i64, u64)>> = BTreeMap::new();
    for (i, (_, u, _)) in ranks.iter().enumerate() {
        for c in &u.colls {
            let n = c
                .group_size
                .or_else(|| groups.get(c.group.as_str()).map(|m| m.len() as i64));
            let e = acc
                .entry((c.op, c.bytes, n))
                .or_default()
                .entry(i)
                .or_default();
            e.0 = e.0.saturating_add(c.duration_ns());
            e.1 += 1;
        }
    }
    let mut rows: Vec<CollRow> = acc
        .into_iter()
        .map(|((op, bytes, n), per)| {
            let calls: u64 = per.values().map(|v| v.1).sum();
            let total: i64 = per.values().map(|v| v.0).fold(0, i64::saturating_add);
            let mean = total as f64 / calls.max(1) as f64;
            let transfer_mean = row_transfer
                .get(&(op, bytes, n))
                .filter(|t| t.1 > 0)
                .map(|t| t.0 as f64 / t.1 as f64);
            let (time, bw_time) = match transfer_mean {
                Some(t) => (t, "transfer"),
                None => (mean, "duration"),
            };
            let algbw = bytes.filter(|_| time > 0.0).map(|b| b as f64 / time);
            let busbw = algbw.and_then(|a| op.bus_factor(n).map(|f| a * f));
            let (mut mn, mut mx, mut mx_rank) = (i64::MAX, i64::MIN, 0u32);
            for (&i, v) in &per {
                mn = mn.min(v.0);
                if v.0 > mx {
                    mx = v.0;
                    mx_rank = ranks[i].0.rank;
                }
            }
            CollRow {
                op,
                bytes,
                group_size: n,
                calls,
                ranks: per.len() as u64,
                total_ns: total,
                mean_ns: mean,
                transfer_mean_ns: transfer_mean,
                bw_time,
                algbw_gbps: algbw,
                busbw_gbps: busbw,
                rank_min_ns: mn,
                rank_max_ns: mx,
                rank_max: mx_rank,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then(a.op.cmp(&b.op))
            .then(a.bytes.cmp(&b.bytes))
            .then(a.group_size.cmp(&b.group_size))
    });
    rows
}

fn step_tables(ranks: &[RankRef<'_>]) -> (Vec<StepRow>, Vec<StepSpread>) {
    let mut steps = Vec::new();
    // step name -> (first start seen for ordering, per rank cpu ns)
    let mut spread: BTreeMap<&str, Vec<(u32, i64)>> = BTreeMap::new();
    let mut order: Vec<(&str, usize, i64)> = Vec::new();
    for (r, u, _) in ranks {
        for (k, s) in u.steps.iter().enumerate() {
            let cpu = s.end_ns.saturating_sub(s.start_ns);
            steps.push(StepRow {
                step: s.name.clone(),
                rank: r.rank,
                cpu_ns: cpu,
                gpu: s.gpu,
            });
            let e = spread.entry(s.name.as_str()).or_default();
            if e.is_empty() {
                order.push((s.name.as_str(), k, s.start_ns));
            }
            e.push((r.rank, cpu));
        }
    }
    // steps in the order of their position on the ranks, then name
    order.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(b.0)));
    let mut out = Vec::new();
    for (name, _, _) in order {
        let Some(v) = spread.get(name) else { continue };
        let min = v.iter().map(|x| x.1).min().unwrap_or(0);
        let max = v.iter().map(|x| x.1).max().unwrap_or(0);
        let slowest = v.iter().find(|x| x.1 == max).map_or(0, |x| x.0);
        out.push(StepSpread {
            step: name.to_owned(),
            ranks: v.len() as u64,
            min_ns: min,
            max_ns: max,
            slowest_rank: slowest,
        });
    }
    let pos: BTreeMap<&str, usize> = out
        .iter()
        .enumerate()
        .map(|(i, s)| (s.step.as_str(), i))
        .collect();
    steps.sort_by_key(|s| {
        (
            pos.get(s.step.as_str()).copied().unwrap_or(usize::MAX),
            s.rank,
        )
    });
    (steps, out)
}
