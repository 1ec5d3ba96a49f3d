//! Progress on stderr (indicatif), only when stderr is a terminal and not
//! with `-q`: a spinner with the phase and the time so far while a profile
//! is read, a bar with rate and ETA where the amount of work is known.
//! Every bar is cleared when its phase ends, so nothing of it stays on the
//! screen or reaches a file.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// One phase of work: a spinner or a bar, or nothing.
pub struct Phase(Option<ProgressBar>);

/// Whether progress may be shown: stderr is a terminal, not `-q`, and the
/// command's data does not stream to the same terminal (its lines would
/// break the bar).
pub fn enabled(quiet: bool, streams_to_stdout: bool) -> bool {
    !quiet
        && std::io::stderr().is_terminal()
        && !(streams_to_stdout && std::io::stdout().is_terminal())
}

impl Phase {
    /// A spinner labelled `label` with the elapsed time, redrawn every
    /// 100 ms (so it shows within the first half second).
    pub fn spinner(on: bool, label: &str) -> Phase {
        if !on {
            return Phase(None);
        }
        let p = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            p.set_style(style);
        }
        p.set_message(label.to_owned());
        p.enable_steady_tick(Duration::from_millis(100));
        p.tick();
        Phase(Some(p))
    }

    /// A bar of `len` units (`unit`: "kernels", "bytes", …) with rate and
    /// ETA.
    pub fn bar(on: bool, len: u64, label: &str, bytes: bool) -> Phase {
        if !on {
            return Phase(None);
        }
        let p = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        let template = if bytes {
            "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}"
        } else {
            "{msg} [{bar:30}] {human_pos}/{human_len} {per_sec} ETA {eta}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            p.set_style(style.progress_chars("=> "));
        }
        p.set_message(label.to_owned());
        p.enable_steady_tick(Duration::from_millis(200));
        p.tick();
        Phase(Some(p))
    }

    /// `n` more units done.
    pub fn inc(&self, n: u64) {
        if let Some(p) = &self.0 {
            p.inc(n);
        }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            p.finish_and_clear();
        }
    }
}
