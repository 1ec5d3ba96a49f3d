//! The op models' cache of PyProf argument markers decoded from text (the
//! markers of record files; a profile's come decoded with their records).
//! The decoding itself is `rprof_model::markers`'.

use std::collections::HashMap;
use std::sync::Arc;

pub use rprof_model::markers::{Arg, Marker, decode_marker};

/// Decoded markers by text. A training loop repeats the same marker texts
/// every iteration, so most kernels find theirs here instead of parsing it.
/// Bounded: it starts over when full.
#[derive(Debug)]
pub struct MarkerCache {
    map: HashMap<Box<str>, Option<Arc<Marker>>>,
    capacity: usize,
}

impl Default for MarkerCache {
    fn default() -> MarkerCache {
        MarkerCache::new(1 << 16)
    }
}

impl MarkerCache {
    /// A cache of at most `capacity` texts.
    pub fn new(capacity: usize) -> MarkerCache {
        MarkerCache {
            map: HashMap::new(),
            capacity: capacity.max(1),
        }
    }

    /// The decoded marker of `text`, if cached (`Some(None)`: cached as
    /// "not a PyProf marker").
    pub fn get(&self, text: &str) -> Option<Option<Arc<Marker>>> {
        self.map.get(text).cloned()
    }

    /// Remember the decoding of `text`.
    pub fn insert(&mut self, text: &str, marker: Option<Arc<Marker>>) {
        if self.map.len() >= self.capacity {
            self.map.clear();
        }
        self.map.insert(text.into(), marker);
    }

    /// Decode `text`, through the cache.
    pub fn decode(&mut self, text: &str) -> Option<Arc<Marker>> {
        if let Some(m) = self.get(text) {
            return m;
        }
        let m = decode_marker(text).map(Arc::new);
        self.insert(text, m.clone());
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_is_bounded() {
        let mut c = MarkerCache::new(2);
        let t = "{'mod': 'x', 'op': 'y', 'args': []}";
        let a = c.decode(t).unwrap();
        assert!(Arc::ptr_eq(&a, &c.decode(t).unwrap()));
        assert_eq!(c.decode("nope"), None);
        assert_eq!(c.get("nope"), Some(None));
        c.insert("z", None);
        assert_eq!(c.map.len(), 1);
    }
}
