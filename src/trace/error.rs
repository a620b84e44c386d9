//! Errors of the trace writer and reader, and where a chain breaks.

use std::path::PathBuf;

use serde::Serialize;

/// Where and why a trace stops checking.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Broken {
    /// The `seq` of the first record that does not check; when a record is missing, cut, unreadable or out
    /// of place, the `seq` that was expected at that line.
    pub seq: u64,
    /// 1-based line in the file.
    pub line: usize,
    pub why: String,
}

/// Why a trace could not be written or read.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened, read, written or synced.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A trace or value store that is read tolerantly (`view`, `view --reveal`) could not be opened at all.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not a Zamburak trace at all (`why` says what its first line is): nothing to verify or show.
    #[error("{} is not a Zamburak trace ({why})", path.display())]
    NotATrace { path: PathBuf, why: String },
    /// The existing trace does not verify (from `read` or `open_append`).
    #[error("trace is broken at seq {} (line {}): {}", .0.seq, .0.line, .0.why)]
    Broken(Broken),
    /// `open_append` on a trace that already has its `end` record: anything after it would be a forgery.
    #[error("trace already ended; nothing may be appended after its end record")]
    Ended,
    /// A header can only be written by `TraceWriter::create`, as seq 0.
    #[error("a header record can only start a trace")]
    HeaderNotFirst,
    /// A record would make a line longer than the reader accepts.
    #[error("record of {len} bytes is longer than the {max}-byte line limit")]
    TooLarge { len: usize, max: usize },
    /// A record could not be turned into JSON, or is not stable under a JSON round trip.
    #[error("record cannot be serialised: {0}")]
    Serialize(String),
    /// The operating system gave no random bytes for the run's digest key: the run does not start, since
    /// its trace would name private values by digests anyone could recompute.
    #[error("no random key for the trace's digests: {0}")]
    NoKey(String),
    /// An earlier write failed part-way; the file may end in a partial line, so the writer stops.
    #[error("an earlier write to this trace failed; no more records can be appended")]
    Poisoned,
}
