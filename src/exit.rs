//! Process exit codes, the same for every command (PRODUCT.md).

/// Success.
pub const OK: i32 = 0;
/// The plan was rejected or failed (lint errors, a plan exception, a failed verifier).
pub const REJECTED: i32 = 1;
/// Usage or configuration error: a bad flag, an unreadable or invalid policy or file.
pub const USAGE: i32 = 2;
/// A tool call was denied by policy.
pub const DENIED: i32 = 3;
/// The run is suspended waiting for an approval.
pub const SUSPENDED: i32 = 4;
/// `verify` (and `view --export`) of a trace whose chain checks but that has no end record and waits on no
/// approval: the run was interrupted, or the end of the file was cut
/// (docs/trace.md, "What `zamburak verify` checks").
pub const INCOMPLETE: i32 = 5;
