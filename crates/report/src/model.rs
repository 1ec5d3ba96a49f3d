//! What the op models say about each kernel, for the reports that
//! aggregate (`summary`, `gpu`, `export`): op, FLOPs, bytes, tensor cores.
//!
//! The flow of `rprof prof`, shared with them: first markers decoded
//! (cached, misses in parallel), then PyProf's backward lookup in input
//! order ([`Models::resolve`]), then the models in parallel
//! ([`estimate`]). Results keep input order, so the output is the same for
//! any number of threads. The reports use the default mode; `prof` also
//! `--compat`.

use std::sync::Arc;

use rayon::prelude::*;
use rprof_model::{KernelRef, Kernels};
use rprof_ops::{
    Engine, Estimate, KernelEstimate, Marker, MarkerCache, Mode, Outcome, Resolved, decode_marker,
    estimate_kernel,
};

/// The sequential state: the backward lookup and a marker cache.
#[derive(Debug)]
pub struct Models {
    engine: Engine,
    cache: MarkerCache,
}

impl Default for Models {
    fn default() -> Models {
        Models::new()
    }
}

impl Models {
    /// A new run (default mode: PyProf's models with its bugs fixed).
    pub fn new() -> Models {
        Models::with_mode(Mode::Fixed)
    }

    /// A new run in `mode`.
    pub fn with_mode(mode: Mode) -> Models {
        Models {
            engine: Engine::new(mode),
            cache: MarkerCache::default(),
        }
    }

    /// [`Models::resolve`] when `on`, else nothing (a report run without
    /// the models).
    pub fn resolve_if(&mut self, on: bool, ks: &Kernels<'_>) -> Vec<Resolved> {
        if on { self.resolve(ks) } else { Vec::new() }
    }

    /// Decode the first marker of each context of the chunk (the build's
    /// decoding, else through the cache, misses in parallel) and run the
    /// backward lookup on each row; call with the chunks in input order.
    pub fn resolve(&mut self, ks: &Kernels<'_>) -> Vec<Resolved> {
        let contexts = ks.contexts();
        let mut markers: Vec<Option<Arc<Marker>>> = vec![None; contexts.len()];
        let mut misses = Vec::new();
        for (i, c) in contexts.iter().enumerate() {
            if let Some(m) = &c.first_marker {
                markers[i] = Some(Arc::clone(m));
                continue;
            }
            match c.marker.first().map(|t| self.cache.get(t)) {
                None => {}
                Some(Some(m)) => markers[i] = m,
                Some(None) => misses.push(i),
            }
        }
        let decoded: Vec<Option<Arc<Marker>>> = misses
            .par_iter()
            .map(|&i| {
                contexts[i]
                    .marker
                    .first()
                    .and_then(|t| decode_marker(t))
                    .map(Arc::new)
            })
            .collect();
        for (&i, m) in misses.iter().zip(decoded) {
            if let Some(t) = contexts[i].marker.first() {
                self.cache.insert(t, m.clone());
            }
            markers[i] = m;
        }
        ks.iter()
            .map(|r| {
                let m = markers.get(r.ctx as usize).cloned().flatten();
                self.engine.resolve(r, m)
            })
            .collect()
    }
}

/// What the models say of a kernel they were not asked about (a report
/// run without them): nothing, as for a kernel without a marker (FLOPs and
/// bytes unknown).
pub fn unmodelled<'a>(r: KernelRef<'a, '_>) -> KernelEstimate<'a> {
    KernelEstimate {
        module: "",
        op: "",
        layer: rprof_ops::StrList::Row(r.layer()),
        trace: rprof_ops::StrList::Row(r.trace()),
        estimate: Estimate::no_marker(),
        anchor: "",
    }
}

/// Run the models on a chunk (in parallel; results in input order).
pub fn estimate<'a>(ks: &'a Kernels<'_>, resolved: &'a [Resolved]) -> Vec<KernelEstimate<'a>> {
    ks.rows()
        .par_iter()
        .zip(resolved.par_iter())
        .map(|(row, res)| estimate_kernel(ks.at(row), res, Mode::Fixed))
        .collect()
}

/// The FLOPs a model computed; `None` when no model ran (no marker, no
/// model for the op, `na`). PyProf's 0 for "no model" is not a count.
pub fn known_flops(e: &Estimate) -> Option<i128> {
    modelled(e).then_some(())?;
    e.flops.and_then(|n| n.trunc())
}

/// The bytes a model computed; `None` as for [`known_flops`].
pub fn known_bytes(e: &Estimate) -> Option<i128> {
    modelled(e).then_some(())?;
    e.bytes.and_then(|n| n.trunc())
}

fn modelled(e: &Estimate) -> bool {
    matches!(e.outcome, Outcome::Modelled | Outcome::Partial(_))
}
