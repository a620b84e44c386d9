//! (in progress)
use std::path::Path;

/// `zamburak verify FILE`: checks the hash chain. Returns the exit code.
pub fn verify_command(file: &Path) -> i32 {
    let _ = file;
    eprintln!("zamburak verify: not built yet");
    crate::exit::USAGE
}
