//! Multi-rank synthetic jobs for `rprof dist`: nsys exports holding
//! several processes and GPUs with NCCL kernels, and the session start that
//! puts a file's clock on the wall clock.

use std::path::Path;

use rusqlite::{Connection, params};

use crate::{Synth, SynthGpu, SynthKernel};

/// nsys's table of the capture's wall-clock start (2026.2 columns).
pub const SESSION_START_DDL: &str = "
CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER
);";

/// A kernel of process `pid` on GPU `device`, stream `stream`, launched
/// 1 µs before it starts by thread `pid` (as the main thread of a rank).
pub fn rank_kernel(
    name: &str,
    start: i64,
    end: i64,
    corr: i64,
    pid: u64,
    device: i64,
    stream: i64,
) -> SynthKernel {
    let mut k = SynthKernel::new(name, start, end, corr);
    k.pid = pid;
    k.tid = pid;
    k.device = device;
    k.stream = stream;
    k.launch = Some((
        start - 1_000,
        start - 900,
        "cudaLaunchKernel_v7000".to_owned(),
    ));
    k
}

/// An NCCL all-reduce kernel (the name NCCL 2.19+ gives it).
pub const NCCL_ALLREDUCE: &str =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
/// An NCCL send/recv kernel.
pub const NCCL_SENDRECV: &str = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";

/// A job: kernels of several processes in one trace. Correlation ids are
/// handed out in order; every process gets a GPU row.
#[derive(Clone, Debug)]
pub struct JobSynth {
    /// The trace.
    pub synth: Synth,
    next_corr: i64,
}

impl Default for JobSynth {
    fn default() -> JobSynth {
        JobSynth::new()
    }
}

impl JobSynth {
    /// An empty job.
    pub fn new() -> JobSynth {
        JobSynth {
            synth: Synth::default(),
            next_corr: 1,
        }
    }

    /// Add a kernel of `(pid, device)` at `[start, end)` on `stream`.
    pub fn kernel(&mut self, pid: u64, device: i64, stream: i64, name: &str, start: i64, end: i64) {
        let k = rank_kernel(name, start, end, self.next_corr, pid, device, stream);
        self.next_corr += 1;
        self.synth.kernels.push(k);
        if !self.synth.gpus.iter().any(|g| g.cu_device == device) {
            let mut g = SynthGpu::a100();
            g.cu_device = device;
            self.synth.gpus.push(g);
        }
    }

    /// Write it as an nsys export whose capture started at
    /// `session_start_epoch_ns` on the wall clock (`None`: no such table).
    pub fn write(&self, path: &Path, session_start_epoch_ns: Option<i64>) -> rusqlite::Result<()> {
        write_with_session_start(&self.synth, path, session_start_epoch_ns)
    }
}

/// Write `synth` as an nsys export and record the capture's wall-clock
/// start when given.
pub fn write_with_session_start(
    synth: &Synth,
    path: &Path,
    session_start_epoch_ns: Option<i64>,
) -> rusqlite::Result<()> {
    synth.write_nsys(path)?;
    if let Some(ns) = session_start_epoch_ns {
        let conn = Connection::open(path)?;
        conn.execute_batch(SESSION_START_DDL)?;
        conn.execute(
            "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, localTime, systemClockNs) VALUES (?1, 'synthetic', 'synthetic', 0)",
            params![ns],
        )?;
    }
    Ok(())
}
