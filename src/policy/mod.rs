//! (in progress)
use std::path::Path;

/// `zamburak policy check FILE`: validates a policy and prints it normalised. Returns the exit code.
pub fn check_command(file: &Path) -> i32 {
    let _ = file;
    eprintln!("zamburak policy check: not built yet");
    crate::exit::USAGE
}
