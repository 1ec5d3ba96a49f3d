//! Where output goes, safely.
//!
//! API (for every command that writes data):
//! - [`check_stdout`]: call once at start-up, before any file is opened;
//!   it notes whether standard output is closed (`>&-`).
//! - [`create`]`(path, inputs)`: `None` or `-` is standard output
//!   (line-buffered on a terminal, block-buffered otherwise); a path is
//!   written to a temporary file in the same folder, renamed over `path` by
//!   [`Output::finish`]. A path that names one of `inputs` (directly,
//!   through `./`, a symbolic link or a hard link) is refused before
//!   anything is written. Dropping an [`Output`] without `finish` (an error,
//!   a panic) removes the temporary file; so does SIGINT, SIGTERM or SIGHUP.
//!   Either way no file named `path` is created or changed.
//! - Write errors name the output (`cannot write out.dict: ...`) and keep
//!   their [`io::ErrorKind`]. A broken pipe (`| head`) is remembered, and
//!   [`is_broken_pipe`] tells `main` to exit 0 quietly.
//! - A `-o` path that is a device or a FIFO (`/dev/null`) is written in
//!   place, never renamed over.
//! - [`same_file`]: the identity check on its own.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, LineWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;

/// An error in how rprof was called (exit status 2).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Set when a write hit a closed pipe.
static BROKEN_PIPE: AtomicBool = AtomicBool::new(false);
/// Set by [`check_stdout`] when file descriptor 1 is not open.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Note whether standard output was closed when rprof started (`>&-`).
/// Rust's runtime reopens a closed descriptor 1 on `/dev/null` before
/// `main`, read-write, so output would vanish with exit 0; a shell's
/// `> /dev/null` opens it write-only. So: descriptor 1 not open, or open on
/// `/dev/null` read-write, counts as closed.
pub fn check_stdout() {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        use std::os::unix::fs::MetadataExt;
        // SAFETY: fcntl(F_GETFL) only queries the descriptor's flags.
        let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
        if flags == -1 {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            return;
        }
        let (Ok(null), Ok(out)) = (
            std::fs::metadata("/dev/null"),
            std::fs::metadata("/proc/self/fd/1").or_else(|_| std::fs::metadata("/dev/stdout")),
        ) else {
            return;
        };
        if out.file_type().is_char_device()
            && out.rdev() == null.rdev()
            && flags & libc::O_ACCMODE == libc::O_RDWR
        {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
        }
    }
}

/// True when `a` and `b` are the same file (same device and inode), also
/// through symbolic or hard links. False when either does not exist.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }
}

/// Where a command's data goes. Write to it, then call [`Output::finish`].
pub struct Output {
    name: String,
    sink: Sink,
}

enum Sink {
    /// Standard output, or a device or FIFO written in place.
    Stdout(Box<dyn Write + Send>),
    File {
        w: BufWriter<File>,
        tmp: PathBuf,
        dest: PathBuf,
        /// Set once renamed (or when there is nothing left to remove).
        done: bool,
    },
}

/// Open the output: standard output for `None` or `-`, else a temporary
/// file next to `path`. `inputs` are the files the command reads; naming
/// one of them is a usage error.
pub fn create(path: Option<&Path>, inputs: &[&Path]) -> anyhow::Result<Output> {
    match path {
        Some(p) if p != Path::new("-") => {
            if let Some(i) = inputs.iter().find(|i| same_file(p, i)) {
                return Err(UsageError(format!(
                    "-o {}: this is the input file {}; refusing to overwrite it",
                    p.display(),
                    i.display()
                ))
                .into());
            }
            if p.is_dir() {
                return Err(UsageError(format!("-o {}: is a directory", p.display())).into());
            }
            // a device or a FIFO (`-o /dev/null`, `-o /dev/stderr`) is
            // written in place: renaming over it would replace it
            if std::fs::metadata(p).is_ok_and(|m| !m.is_file()) {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(p)
                    .with_context(|| format!("cannot create {}", p.display()))?;
                return Ok(Output {
                    name: p.display().to_string(),
                    sink: Sink::Stdout(Box::new(BufWriter::with_capacity(1 << 16, f))),
                });
            }
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
                _ => PathBuf::from("."),
            };
            let base = p.file_name().map_or_else(
                || "out".to_owned(),
                |n| n.to_string_lossy().chars().take(100).collect(),
            );
            let tmp = tempfile::Builder::new()
                .prefix(&format!(".{base}."))
                .suffix(".rprof-tmp")
                .tempfile_in(&dir)
                .with_context(|| format!("cannot create {}", p.display()))?;
            // rprof removes the file itself (on error, on drop, on a signal)
            let (file, tmp) = tmp
                .keep()
                .map_err(|e| e.error)
                .with_context(|| format!("cannot create {}", p.display()))?;
            signals::watch(&tmp);
            Ok(Output {
                name: p.display().to_string(),
                sink: Sink::File {
                    w: BufWriter::with_capacity(1 << 16, file),
                    tmp,
                    dest: p.to_owned(),
                    done: false,
                },
            })
        }
        _ => {
            if STDOUT_CLOSED.load(Ordering::Relaxed) {
                anyhow::bail!("cannot write <stdout>: standard output is closed");
            }
            let out = io::stdout();
            let w: Box<dyn Write + Send> = if out.is_terminal() {
                Box::new(LineWriter::new(out))
            } else {
                Box::new(BufWriter::with_capacity(1 << 16, out))
            };
            Ok(Output {
                name: "<stdout>".to_owned(),
                sink: Sink::Stdout(w),
            })
        }
    }
}

impl Output {
    /// The output's name for messages (`<stdout>` or the path).
    #[allow(dead_code)] // part of the API for commands that report it
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Flush, and for a file: sync it and rename it to its final name.
    pub fn finish(mut self) -> anyhow::Result<()> {
        self.flush()?;
        if let Sink::File { w, tmp, dest, done } = &mut self.sink {
            w.get_ref().sync_all().map_err(|e| named(&self.name, e))?;
            std::fs::rename(&*tmp, &*dest).map_err(|e| named(&self.name, e))?;
            *done = true;
            signals::unwatch();
        }
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Sink::File { tmp, done, .. } = &self.sink
            && !*done
        {
            let _ = std::fs::remove_file(tmp);
            signals::unwatch();
        }
    }
}

/// `cannot write NAME: cause`, keeping the error's kind (a broken pipe is
/// also remembered for [`is_broken_pipe`]).
fn named(name: &str, e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        BROKEN_PIPE.store(true, Ordering::Relaxed);
    }
    io::Error::new(e.kind(), format!("cannot write {name}: {e}"))
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = match &mut self.sink {
            Sink::Stdout(w) => w.write(buf),
            Sink::File { w, .. } => w.write(buf),
        };
        r.map_err(|e| named(&self.name, e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let r = match &mut self.sink {
            Sink::Stdout(w) => w.write_all(buf),
            Sink::File { w, .. } => w.write_all(buf),
        };
        r.map_err(|e| named(&self.name, e))
    }

    fn flush(&mut self) -> io::Result<()> {
        let r = match &mut self.sink {
            Sink::Stdout(w) => w.flush(),
            Sink::File { w, .. } => w.flush(),
        };
        r.map_err(|e| named(&self.name, e))
    }
}

/// True when the reader of the output went away (`| head`), which is not a
/// failure: a write hit a broken pipe, or the error chain holds one.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    BROKEN_PIPE.load(Ordering::Relaxed)
        || err.chain().any(|e| {
            e.downcast_ref::<io::Error>()
                .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
                || e.downcast_ref::<serde_json::Error>()
                    .and_then(serde_json::Error::io_error_kind)
                    == Some(io::ErrorKind::BrokenPipe)
        })
}

/// Removing the temporary output file when the process is interrupted.
mod signals {
    use std::ffi::CString;
    use std::path::Path;
    use std::sync::atomic::{AtomicPtr, Ordering};

    /// The temporary file to remove on a signal (a leaked C string), or null.
    static TMP: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

    extern "C" fn on_signal(sig: libc::c_int) {
        let p = TMP.swap(std::ptr::null_mut(), Ordering::SeqCst);
        // SAFETY: unlink, signal and raise are async-signal-safe; `p` is a
        // leaked, NUL-terminated string or null.
        unsafe {
            if !p.is_null() {
                libc::unlink(p);
            }
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }

    /// Remove `tmp` if SIGINT, SIGTERM or SIGHUP arrives before
    /// [`unwatch`].
    pub fn watch(tmp: &Path) {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let Ok(c) = CString::new(tmp.as_os_str().as_bytes()) else {
                return;
            };
            TMP.store(c.into_raw(), Ordering::SeqCst);
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                // SAFETY: installs a handler that only calls
                // async-signal-safe functions.
                unsafe {
                    libc::signal(sig, on_signal as *const () as libc::sighandler_t);
                }
            }
        }
    }

    /// The temporary file is gone or renamed: nothing to remove any more.
    pub fn unwatch() {
        let p = TMP.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: `p` came from CString::into_raw in `watch`.
            drop(unsafe { CString::from_raw(p) });
        }
    }
}
