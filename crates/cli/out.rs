//! Where output goes: stdout or `-o FILE`, buffered; broken pipes are success.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, LineWriter, Write};
use std::path::Path;

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

/// Stdout (line-buffered on a terminal, block-buffered otherwise) or a file.
pub fn writer(path: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    match path {
        Some(p) if p != Path::new("-") => {
            let f = File::create(p).with_context(|| format!("cannot create {}", p.display()))?;
            Ok(Box::new(BufWriter::with_capacity(1 << 16, f)))
        }
        _ => {
            let out = io::stdout();
            if out.is_terminal() {
                Ok(Box::new(LineWriter::new(out)))
            } else {
                Ok(Box::new(BufWriter::with_capacity(1 << 16, out)))
            }
        }
    }
}

/// True when the error chain holds a broken pipe: the reader went away
/// (`| head`), which is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}
