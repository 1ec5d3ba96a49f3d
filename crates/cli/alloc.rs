//! The allocator, chosen per command and phase.
//!
//! Reading records and modelling them make and free a few small strings
//! and lists per record on several threads; there mimalloc is faster than
//! glibc's allocator. Reading a profile is not (`parse`: no gain), and
//! mimalloc holds about 30 % more of what a whole read trace takes
//! (`summary` at 1 M kernels: 655 MB against 500 MB), where the memory
//! targets bind. So mimalloc serves:
//!
//! - `prof`, `summary` and `gpu` on a records file or standard input
//!   ([`crate::input::Input::choose_allocator`]), and `diff` of two record
//!   files: 0.78-0.89 × the wall time (medians of paired runs on the
//!   1 M-record file) for 50 MB more;
//! - the same three on a profile once the trace is read and attributed
//!   (`input::for_each_chunk_prepared`): the records phase, 0.86-0.94 ×
//!   the wall time at 3 M kernels, with the same peak for `summary` (it
//!   comes during the read), 11 MB more for `prof` and 47 MB more for
//!   `gpu`;
//! - `export --chrome` once the ranges are written and the kernels
//!   attributed: 0.83-0.90 × at 1 M kernels, 19 MB more at 3 M
//!
//! (BENCHMARKS.md, twenty-seventh pass). `parse`, `report` (1.98-2.00 GB
//! at 3 M kernels: no room) and the other views keep glibc's throughout.
//!
//! So the binary's allocator hands out glibc blocks until
//! [`use_mimalloc`] is called, and mimalloc's after. A block is freed (or
//! grown) by the allocator that made it: mimalloc knows its own address
//! ranges (`mi_is_in_heap_region`, a lookup in its page map), and nothing
//! else asks, so until the switch every call goes straight to glibc.
//! We found no maintained crate that switches allocators at run time,
//! hence this small wrapper over the two crates that do the work.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

use mimalloc::MiMalloc;

/// New blocks come from mimalloc.
static MI_NEW: AtomicBool = AtomicBool::new(false);
/// Some block may have come from mimalloc (set before [`MI_NEW`], never
/// cleared).
static MI_SEEN: AtomicBool = AtomicBool::new(false);

/// The binary's allocator: glibc's, or mimalloc's once switched.
pub struct Switch;

/// From now on, new blocks come from mimalloc (blocks made before are
/// still freed by glibc). For a phase whose allocations are many, small
/// and short-lived: reading and modelling records.
pub fn use_mimalloc() {
    MI_SEEN.store(true, Ordering::Relaxed);
    // released: a thread that sees the switch (acquiring it) and makes a
    // block has `MI_SEEN` set before, and so has any thread the block is
    // handed to, which frees it
    MI_NEW.store(true, Ordering::Release);
}

/// Whether mimalloc made the block at `ptr`.
#[inline]
fn from_mimalloc(ptr: *mut u8) -> bool {
    // SAFETY: the lookup reads mimalloc's page map only, and any address
    // may be asked about (before mimalloc has set up its map, the answer
    // is false)
    MI_SEEN.load(Ordering::Relaxed)
        && unsafe { libmimalloc_sys::mi_is_in_heap_region(ptr.cast::<std::ffi::c_void>()) }
}

// SAFETY: every block is made by one of the two allocators and freed,
// grown or shrunk by the same one (`from_mimalloc`), each of which upholds
// the GlobalAlloc contract for its own blocks.
unsafe impl GlobalAlloc for Switch {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, passed on
        unsafe {
            if MI_NEW.load(Ordering::Acquire) {
                MiMalloc.alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`
        unsafe {
            if MI_NEW.load(Ordering::Acquire) {
                MiMalloc.alloc_zeroed(layout)
            } else {
                System.alloc_zeroed(layout)
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the block was made by the allocator that frees it
        unsafe {
            if from_mimalloc(ptr) {
                MiMalloc.dealloc(ptr, layout)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the block is grown or shrunk by the allocator that made it
        unsafe {
            if from_mimalloc(ptr) {
                MiMalloc.realloc(ptr, layout, new_size)
            } else {
                System.realloc(ptr, layout, new_size)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks made before and after the switch are each freed and grown by
    /// their own allocator: the process survives a mix of both (a block
    /// freed by the wrong one aborts in glibc's or mimalloc's checks), and
    /// the contents survive growing.
    #[test]
    fn blocks_of_both_allocators_live_side_by_side() {
        let before: Vec<Vec<u8>> = (0..1000).map(|i| vec![i as u8; 1 + i % 300]).collect();
        use_mimalloc();
        let after: Vec<Vec<u8>> = (0..1000).map(|i| vec![i as u8; 1 + i % 300]).collect();
        assert!(after.iter().all(|v| from_mimalloc(v.as_ptr().cast_mut())));
        assert!(before.iter().all(|v| !from_mimalloc(v.as_ptr().cast_mut())));
        let mut grown = Vec::new();
        for (mut a, mut b) in before.into_iter().zip(after) {
            let (n, m) = (a.len(), b.len());
            a.resize(n + 5000, 7);
            b.resize(m + 5000, 9);
            assert!(a[..n].iter().all(|&x| x == a[0]) && a[n..].iter().all(|&x| x == 7));
            assert!(b[..m].iter().all(|&x| x == b[0]) && b[m..].iter().all(|&x| x == 9));
            grown.push((a, b));
        }
        drop(grown);
    }
}
