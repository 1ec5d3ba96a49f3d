//! The record format's versions and the sidecar header.

use serde::{Deserialize, Serialize};

/// Version of the JSON Lines format written by this crate (1: a header line
/// first; 2: records only, the header in a sidecar file, every key on every
/// line).
pub const DICT_VERSION: u32 = 2;

/// Minor version of the JSON Lines format: keys added within
/// [`DICT_VERSION`] that older readers ignore (1: `stackRuns`, `stackCut`,
/// `stackCutBytes`; 2: `stackNames`).
pub const DICT_MINOR: u32 = 2;

/// The sidecar of a record file `path`: `path` + `.meta.json`.
pub fn sidecar_path(path: &std::path::Path) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".meta.json");
    std::path::PathBuf::from(s)
}

/// Read the sidecar of a record file, if there is one (`Ok(None)` when
/// absent). Errors name the sidecar and the problem.
pub fn read_sidecar(path: &std::path::Path) -> Result<Option<Header>, String> {
    let side = sidecar_path(path);
    let text = match std::fs::read(&side) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: cannot read ({e})", side.display())),
    };
    // a device table is a few hundred bytes per GPU
    if text.len() > 16 << 20 {
        return Err(format!("{}: larger than 16 MiB", side.display()));
    }
    let h: Header = serde_json::from_slice(&text)
        .map_err(|e| format!("{}: not an rprof sidecar ({e})", side.display()))?;
    if h.version > DICT_VERSION {
        return Err(format!(
            "{}: record format version {} is newer than this rprof reads ({DICT_VERSION}); re-run `rprof parse` or update rprof",
            side.display(),
            h.version
        ));
    }
    Ok(Some(h))
}

/// What a record file says about its profile: the first line of a version
/// 1 file, the sidecar `FILE.meta.json` of a version 2 file, and the
/// key-value metadata of a Parquet record file (as JSON under `rprof`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always `"dict"`.
    pub rprof: String,
    /// Format version ([`DICT_VERSION`]).
    pub version: u32,
    /// Minor version ([`DICT_MINOR`]; 0 when absent, as in files written
    /// before it existed).
    #[serde(default)]
    pub minor: u32,
    /// `nsys`, `nvprof` or `kineto`.
    pub source: String,
    /// Producer and schema version of the input, when the file said.
    #[serde(default)]
    pub producer: Option<String>,
    /// True when written with `--compat`.
    #[serde(default)]
    pub compat: bool,
    /// The GPUs the profile describes (limits for occupancy estimates).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<crate::trace::DeviceInfo>,
}
