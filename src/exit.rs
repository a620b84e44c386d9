//! Process exit codes, the same for every command (PRODUCT.md): the [`Exit`] enum is the one list, and the
//! constants below are its codes for the layers that report a code in a value (a run's report).

/// How the process ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Success.
    Ok = 0,
    /// The plan was rejected or failed (lint errors, a plan exception, a failed verifier).
    Rejected = 1,
    /// Usage or configuration error: a bad flag, an unreadable or invalid policy or file.
    Usage = 2,
    /// A tool call was denied by policy.
    Denied = 3,
    /// The run is suspended waiting for an approval.
    Suspended = 4,
    /// `verify` (and `view --export`) of a trace whose chain checks but that has no end record and waits on
    /// no approval: the run was interrupted, or the end of the file was cut
    /// (docs/trace.md, "What `zamburak verify` checks").
    Incomplete = 5,
    /// `mcp serve` stopped by SIGINT (128 + 2).
    Interrupted = 130,
    /// `mcp serve` stopped by SIGTERM (128 + 15).
    Terminated = 143,
}

impl Exit {
    /// The exit of `code`; a code that is none of them is a usage error (fail closed: never success).
    ///
    /// ```
    /// use zamburak::exit::Exit;
    /// assert_eq!(Exit::from_code(4), Exit::Suspended);
    /// assert_eq!(Exit::from_code(-1), Exit::Usage);
    /// ```
    pub fn from_code(code: i32) -> Exit {
        [
            Exit::Ok,
            Exit::Rejected,
            Exit::Usage,
            Exit::Denied,
            Exit::Suspended,
            Exit::Incomplete,
            Exit::Interrupted,
            Exit::Terminated,
        ]
        .into_iter()
        .find(|e| *e as i32 == code)
        .unwrap_or(Exit::Usage)
    }
}

impl std::process::Termination for Exit {
    fn report(self) -> std::process::ExitCode {
        std::process::ExitCode::from(self as u8)
    }
}

/// Success.
pub const OK: i32 = Exit::Ok as i32;
/// The plan was rejected or failed (lint errors, a plan exception, a failed verifier).
pub const REJECTED: i32 = Exit::Rejected as i32;
/// Usage or configuration error: a bad flag, an unreadable or invalid policy or file.
pub const USAGE: i32 = Exit::Usage as i32;
/// A tool call was denied by policy.
pub const DENIED: i32 = Exit::Denied as i32;
/// The run is suspended waiting for an approval.
pub const SUSPENDED: i32 = Exit::Suspended as i32;
/// A trace intact but with no end record ([`Exit::Incomplete`]).
pub const INCOMPLETE: i32 = Exit::Incomplete as i32;
