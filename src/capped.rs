//! Reading a file that must stay small (a plan, a policy, a scenarios file, a snapshot): at most `max` bytes
//! are read, whatever its size said a moment before, so a file that grows between a size check and the read
//! cannot make the reader hold more. Each layer turns [`CappedError`] into its own error.

use std::io::Read;
use std::path::Path;

/// Why a capped read gave nothing.
#[derive(Debug, thiserror::Error)]
pub enum CappedError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file holds more than the cap.
    #[error("larger than {0} bytes")]
    TooLarge(u64),
}

/// The bytes of `path`, when it holds at most `max` of them.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let p = dir.path().join("f");
/// std::fs::write(&p, "12345").unwrap();
/// assert_eq!(zamburak::capped::read(&p, 5).unwrap(), b"12345");
/// assert!(matches!(zamburak::capped::read(&p, 4), Err(zamburak::capped::CappedError::TooLarge(4))));
/// ```
pub fn read(path: &Path, max: u64) -> Result<Vec<u8>, CappedError> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(CappedError::TooLarge(max));
    }
    Ok(bytes)
}
