//! `rprof export --chrome`: Chrome trace-event JSON (the format of
//! chrome://tracing, which Perfetto also loads).
//!
//! - `writer.rs`: [`ChromeWriter`], the event-by-event JSON writer.
//! - `layout.rs`: [`Timeline`], which lays out profiles as tracks, slices,
//!   flows and counters through it.

mod layout;
mod writer;

pub use layout::{Profile, Timeline, Window, Written, step_window, zero_ns};
pub use writer::{Arg, ChromeWriter, Counts, Events, FLOW_CAT, FLOW_NAME, Slice};
