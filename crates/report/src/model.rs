//! What the op models say about each record, for the reports that
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
use rprof_model::Record;
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
    pub fn resolve_if(&mut self, on: bool, recs: &[Record<'_>]) -> Vec<Resolved> {
        if on { self.resolve(recs) } else { Vec::new() }
    }

    /// Decode the first marker of each record and run the backward lookup;
    /// call with the chunks in input order.
    pub fn resolve(&mut self, recs: &[Record<'_>]) -> Vec<Resolved> {
        let mut markers: Vec<Option<Arc<Marker>>> = Vec::with_capacity(recs.len());
        let mut misses = Vec::new();
        for (i, r) in recs.iter().enumerate() {
            // decoded by the build (a profile), else through the cache
            if let Some(m) = &r.first_marker {
                markers.push(Some(Arc::clone(m)));
                continue;
            }
            match r.marker.first().map(|t| self.cache.get(t)) {
                None => markers.push(None),
                Some(Some(m)) => markers.push(m),
                Some(None) => {
                    markers.push(None);
                    misses.push(i);
                }
            }
        }
        let decoded: Vec<Option<Arc<Marker>>> = misses
            .par_iter()
            .map(|&i| {
                recs[i]
                    .marker
                    .first()
                    .and_then(|t| decode_marker(t))
                    .map(Arc::new)
            })
            .collect();
        for (&i, m) in misses.iter().zip(decoded) {
            if let Some(t) = recs[i].marker.first() {
                self.cache.insert(t, m.clone());
            }
            markers[i] = m;
        }
        recs.iter()
            .zip(markers)
            .map(|(rec, m)| self.engine.resolve(rec, m))
            .collect()
    }
}

/// What the models say of a kernel they were not asked about (a report
/// run without them): nothing, as for a kernel without a marker (FLOPs and
/// bytes unknown).
pub fn unmodelled<'a>(r: &'a Record<'a>) -> KernelEstimate<'a> {
    KernelEstimate {
        module: "",
        op: "",
        layer: rprof_ops::StrList::Record(&r.layer),
        trace: rprof_ops::StrList::Record(&r.trace),
        estimate: Estimate::no_marker(),
        anchor: "",
    }
}

/// Run the models on a chunk (in parallel; results in input order).
pub fn estimate<'a>(recs: &'a [Record<'a>], resolved: &'a [Resolved]) -> Vec<KernelEstimate<'a>> {
    recs.par_iter()
        .zip(resolved.par_iter())
        .map(|(rec, res)| estimate_kernel(rec, res, Mode::Fixed))
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
