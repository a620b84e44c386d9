//! The terminal, without panics: `println!` panics when stdout cannot be written (`> /dev/full`, a closed
//! pipe), which would abort a command halfway, with its trace unfinished. Every command prints through
//! [`outln!`]/[`out!`] and [`errln!`]/[`err!`] instead: a failed write is remembered, the command finishes
//! what it was doing, and [`failure`] turns the first failure into a clear error and exit code 2.

use std::fmt;
use std::io::Write;
use std::sync::Mutex;

/// The first failed write to stdout, if any.
static STDOUT_FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Writes to stdout (or stderr), remembering the first stdout failure. A stderr failure has nowhere to be
/// reported and is dropped.
pub fn write(to_stderr: bool, args: fmt::Arguments<'_>) {
    let result = if to_stderr {
        std::io::stderr().lock().write_fmt(args)
    } else {
        let mut out = std::io::stdout().lock();
        out.write_fmt(args).and_then(|()| out.flush())
    };
    if let Err(e) = result
        && !to_stderr
    {
        let mut failed = STDOUT_FAILED.lock().unwrap_or_else(|p| p.into_inner());
        failed.get_or_insert_with(|| e.to_string());
    }
}

/// Why stdout could not be written, once a write failed.
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
