//! A job: one or more profiles (ranks) of one training run.
//!
//! A rank is one GPU of one process. Its id comes from the profiler when it
//! says (`distributedInfo.rank` in PyTorch-profiler traces), else from the
//! process order within a file, else from the file order (see
//! [`assign_ranks`]). Times of different files are compared only through
//! their [`ClockOrigin`]s.

use std::path::PathBuf;

/// Rank of a worker in a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RankId(pub u32);

impl std::fmt::Display for RankId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a file's time zero lies on the wall clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockOrigin {
    /// Unix-epoch nanoseconds of the file's time 0 (add a file time to get
    /// an absolute time).
    pub epoch_ns: i64,
    /// How it was found (`TARGET_INFO_SESSION_START_TIME.utcEpochNs`,
    /// `baseTimeNanoseconds`, `absolute timestamps`).
    pub method: &'static str,
}

/// What a PyTorch-profiler trace says about the distributed job.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DistInfo {
    /// Rank of this process.
    pub rank: Option<i64>,
    /// Number of ranks.
    pub world_size: Option<i64>,
    /// Backend (`nccl`, `gloo`).
    pub backend: Option<String>,
    /// Process groups as written (`pg_config`), for matching jobs.
    pub pg_config: Option<String>,
}

/// Where one rank's data is: the file, the process in it, the GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankSource {
    /// The rank.
    pub rank: RankId,
    /// How the rank was decided (`distributedInfo`, `process order`, `file order`).
    pub rank_from: &'static str,
    /// The profile it comes from.
    pub file: PathBuf,
    /// Position of the file on the command line (or in the directory).
    pub file_index: usize,
    /// Process in the file.
    pub pid: Option<u64>,
    /// Device ordinal as seen by the process.
    pub device: i64,
}

/// What is known of one (file, process, device) before ranks are assigned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankCandidate {
    /// Position of the file.
    pub file_index: usize,
    /// The file.
    pub file: PathBuf,
    /// Process in the file.
    pub pid: Option<u64>,
    /// Device ordinal.
    pub device: i64,
    /// The rank the profiler recorded for this process, if any.
    pub declared_rank: Option<i64>,
}

/// Give every (file, process, device) a rank: the declared rank when every
/// candidate has one and they are distinct; otherwise ranks in order of
/// (file, process, device). Deterministic.
pub fn assign_ranks(mut cands: Vec<RankCandidate>) -> Vec<RankSource> {
    cands.sort_by_key(|c| (c.file_index, c.pid, c.device));
    let declared: Vec<i64> = cands.iter().filter_map(|c| c.declared_rank).collect();
    let mut uniq = declared.clone();
    uniq.sort_unstable();
    uniq.dedup();
    let use_declared = !cands.is_empty()
        && declared.len() == cands.len()
        && uniq.len() == cands.len()
        && uniq.iter().all(|r| *r >= 0 && *r <= i64::from(u32::MAX));
    let files: std::collections::BTreeSet<usize> = cands.iter().map(|c| c.file_index).collect();
    let one_file = files.len() == 1;
    let mut out: Vec<RankSource> = cands
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let (rank, from) = match (use_declared, c.declared_rank) {
                (true, Some(r)) => (r as u32, "distributedInfo"),
                _ if one_file => (i as u32, "process order"),
                _ => (i as u32, "file order"),
            };
            RankSource {
                rank: RankId(rank),
                rank_from: from,
                file: c.file,
                file_index: c.file_index,
                pid: c.pid,
                device: c.device,
            }
        })
        .collect();
    out.sort_by_key(|r| r.rank);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(file: usize, pid: u64, dev: i64, rank: Option<i64>) -> RankCandidate {
        RankCandidate {
            file_index: file,
            file: PathBuf::from(format!("f{file}")),
            pid: Some(pid),
            device: dev,
            declared_rank: rank,
        }
    }

    #[test]
    fn declared_ranks_win_when_complete_and_distinct() {
        let r = assign_ranks(vec![cand(0, 5, 0, Some(1)), cand(1, 6, 0, Some(0))]);
        assert_eq!(r[0].rank, RankId(0));
        assert_eq!(r[0].file_index, 1);
        assert_eq!(r[0].rank_from, "distributedInfo");
    }

    #[test]
    fn duplicate_declared_ranks_fall_back_to_order() {
        let r = assign_ranks(vec![cand(0, 5, 0, Some(0)), cand(1, 6, 0, Some(0))]);
        assert_eq!((r[0].file_index, r[1].file_index), (0, 1));
        assert_eq!(r[1].rank_from, "file order");
    }

    #[test]
    fn one_file_several_processes() {
        let r = assign_ranks(vec![cand(0, 9, 0, None), cand(0, 3, 1, None)]);
        assert_eq!(r[0].pid, Some(3));
        assert_eq!(r[0].rank_from, "process order");
    }
}
