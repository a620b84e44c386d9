//! The terminal, without panics: `println!` panics when stdout cannot be written (`> /dev/full`, a closed
//! pipe), which would abort a command halfway, with its trace unfinished. Every command prints through
//! [`outln!`]/[`out!`] and [`errln!`]/[`err!`] instead: a failed write is remembered, the command finishes
//! what it was doing, and [`failure`] turns the first failure into a clear error and exit code 2.
//!
//! A closed pipe is not a failure: `zamburak run plan.py | head -1` means the reader has seen enough. Like
//! ripgrep and ruff, the command then stops writing to stdout, finishes its work (the trace is still
//! completed) and exits with its own code, saying nothing.

use std::fmt;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The first failed write to stdout, if any.
static STDOUT_FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Set once a write found stdout's reader gone; later writes to stdout are skipped.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes to stdout (or stderr), remembering the first stdout failure. A stderr failure has nowhere to be
/// reported and is dropped.
pub fn write(to_stderr: bool, args: fmt::Arguments<'_>) {
    let result = if to_stderr {
        std::io::stderr().lock().write_fmt(args)
    } else if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    } else {
        let mut out = std::io::stdout().lock();
        out.write_fmt(args).and_then(|()| out.flush())
    };
    if let Err(e) = result
        && !to_stderr
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            return;
        }
        let mut failed = STDOUT_FAILED.lock().unwrap_or_else(|p| p.into_inner());
        failed.get_or_insert_with(|| e.to_string());
    }
}

/// Why stdout could not be written, once a write failed (a closed pipe is not a failure).
pub fn failure() -> Option<String> {
    STDOUT_FAILED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// `println!` that never panics.
macro_rules! outln {
    () => { $crate::cli::output::write(false, format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::output::write(false, format_args!("{}\n", format_args!($($arg)*))) };
}
/// `print!` that never panics.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::output::write(false, format_args!($($arg)*)) };
}
/// `eprintln!` that never panics.
macro_rules! errln {
    () => { $crate::cli::output::write(true, format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::output::write(true, format_args!("{}\n", format_args!($($arg)*))) };
}
/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => { $crate::cli::output::write(true, format_args!($($arg)*)) };
}
pub(crate) use {err, errln, out, outln};

/// `path` as a person would write it: `..` folded away, and relative to the working directory when it lies
/// below it (`/home/me/policies/../examples/out` → `examples/out`).
pub fn shown_path(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut clean = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir if clean.file_name().is_some() => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            clean
                .strip_prefix(cwd)
                .ok()
                .map(std::path::Path::to_path_buf)
        })
        .unwrap_or(clean)
}
