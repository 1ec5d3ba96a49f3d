//! Facts about a kernel computed from its names alone, remembered per
//! thread.
//!
//! A run has thousands of distinct kernel names and millions of kernels;
//! the scans behind a fact (dozens of substring searches for the dtype, a
//! regex for tensor cores) cost several times more than hashing the names
//! once, so each thread keeps the answers it has computed. Hand-written
//! for speed; the answers are those of the plain functions (a memo of a
//! pure function), so the output does not depend on which thread asks.
//!
//! Bounded: names longer than [`MAX_KEY_BYTES`] are not kept, and a memo
//! is emptied when its keys pass [`MAX_BYTES`].

use std::cell::RefCell;

use rprof_model::FastMap;

/// Longest pair of names kept (a longer one is computed every time).
const MAX_KEY_BYTES: usize = 4 << 10;
/// Most bytes of names a memo keeps before it starts again.
const MAX_BYTES: usize = 8 << 20;

/// Answers by the pair of names `(short, long)`.
pub(crate) struct NameMemo<T> {
    map: FastMap<Box<str>, T>,
    bytes: usize,
    /// Scratch: the key of the pair asked about.
    key: String,
}

impl<T> Default for NameMemo<T> {
    fn default() -> NameMemo<T> {
        NameMemo {
            map: FastMap::default(),
            bytes: 0,
            key: String::new(),
        }
    }
}

impl<T: Copy> NameMemo<T> {
    /// `f(short, long)`, from the memo when it was asked before.
    pub(crate) fn get(&mut self, short: &str, long: &str, f: impl Fn(&str, &str) -> T) -> T {
        if short.len() + long.len() > MAX_KEY_BYTES {
            return f(short, long);
        }
        // the short name's length first: no two pairs share a key
        self.key.clear();
        self.key.push_str(itoa::Buffer::new().format(short.len()));
        self.key.push(':');
        self.key.push_str(short);
        self.key.push_str(long);
        if let Some(v) = self.map.get(self.key.as_str()) {
            return *v;
        }
        let v = f(short, long);
        if self.bytes + self.key.len() > MAX_BYTES {
            self.map.clear();
            self.bytes = 0;
        }
        self.bytes += self.key.len();
        self.map.insert(self.key.as_str().into(), v);
        v
    }
}

/// A per-thread memo of `f`, for `static`s declared with `thread_local!`.
pub(crate) fn memoised<T: Copy + 'static>(
    memo: &'static std::thread::LocalKey<RefCell<NameMemo<T>>>,
    short: &str,
    long: &str,
    f: impl Fn(&str, &str) -> T,
) -> T {
    memo.with(|m| match m.try_borrow_mut() {
        Ok(mut m) => m.get(short, long, &f),
        // asked again from inside `f` (never the case): no memo
        Err(_) => f(short, long),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_the_function() {
        let calls = std::cell::Cell::new(0);
        let f = |s: &str, l: &str| {
            calls.set(calls.get() + 1);
            s.len() * 1000 + l.len()
        };
        let mut m = NameMemo::default();
        assert_eq!(m.get("ab", "cde", f), 2003);
        assert_eq!(m.get("ab", "cde", f), 2003);
        assert_eq!(calls.get(), 1);
        // the same bytes split elsewhere are another pair
        assert_eq!(m.get("abc", "de", f), 3002);
        assert_eq!(m.get("a", "b:cde", f), 1005);
        assert_eq!(calls.get(), 3);
        // too long to keep: computed each time
        let long = "x".repeat(MAX_KEY_BYTES + 1);
        m.get("", &long, f);
        m.get("", &long, f);
        assert_eq!(calls.get(), 5);
    }

    #[test]
    fn bounded() {
        let mut m = NameMemo::default();
        let name = "y".repeat(MAX_KEY_BYTES - 16);
        for i in 0..(2 * MAX_BYTES / MAX_KEY_BYTES) {
            m.get(&i.to_string(), &name, |s, _| s.len());
        }
        assert!(m.bytes <= MAX_BYTES);
        assert!(m.map.len() <= MAX_BYTES / (MAX_KEY_BYTES - 16));
    }
}
