//! Why a snapshot could not be written, read or decided on ([`SnapshotError`]), and why a run's lock could
//! not be taken ([`RunLockError`]). Each variant says what happened in the words `approve`, `reject`,
//! `pending` and the review queue print; programs match the variant.

use std::path::PathBuf;

use crate::mcp::hub::CallError;
use crate::mcp::lock::LockError;
use crate::policy::PolicyError;
use crate::runtime::machine::MachineError;
use crate::trace::TraceError;

/// Why the lock of a run ([`super::lock_run`]) could not be taken.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum RunLockError {
    /// Another `run`, `approve` or `reject` of the same run holds it: wait, then try again.
    #[error(
        "another run, approval or rejection of {} is in progress: wait for it to finish",
        trace.display()
    )]
    Busy { trace: PathBuf },
    /// The lock file could not be created or opened.
    #[error("cannot open the lock {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file system refused the lock.
    #[error("cannot lock {}: {source}", path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Why a snapshot could not be saved, read, or decided on. When it comes from deciding
/// ([`super::decide`]), nothing was run and the claim still waits, unless the variant says the decision
/// could not be recorded.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// `--remember ARG` names an argument whose values cannot be remembered: nothing was remembered or run.
    #[error("cannot remember `{arg}`: {why}")]
    NotRemembered { arg: String, why: String },
    /// The person's remembered values could not be read or written: nothing was run.
    #[error(transparent)]
    Remembered(#[from] crate::known::store::StoreError),
    /// The person's remembered values may not be used (changed outside Zamburak, or kept where the tools
    /// write): nothing was run.
    #[error(transparent)]
    RememberedRefused(#[from] crate::runtime::memory::Refused),
    // Reading the file (`peek`).
    /// The snapshot file is gone because its claim was decided: `decided` says by whom and when.
    #[error("{} is gone: {decided}", path.display())]
    Decided { path: PathBuf, decided: String },
    /// There is no snapshot file at `path` (and no trace beside it that says it was decided).
    #[error("cannot read {}: no such file", path.display())]
    Missing { path: PathBuf },
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is larger than {max} bytes", path.display())]
    TooLarge { path: PathBuf, max: u64 },
    /// Another snapshot format than this zamburak reads (`reads`).
    #[error("{} has snapshot format {found}; this zamburak reads format {reads}", path.display())]
    Format {
        path: PathBuf,
        found: u64,
        reads: u32,
    },
    #[error("{} is not a zamburak snapshot: {source}", path.display())]
    Malformed {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// Written by another zamburak version, whose compiled plan this one cannot resume.
    #[error("{} was written by zamburak {written}; this is {running}", path.display())]
    Version {
        path: PathBuf,
        written: String,
        running: &'static str,
    },
    /// The values the snapshot would show do not match the digests its claim records.
    #[error("the snapshot's values do not match its claim")]
    ValuesUnbound,

    // The checks before a decision (`open`).
    /// The snapshot holds another claim than the code the person gave (`given`, escaped for a terminal).
    #[error(
        "{} holds another claim than {given} (the plan ran again, or the file was replaced): nothing approved \
         or rejected; read the claim it holds with `zamburak approve {}` at a terminal, `zamburak pending` or \
         `zamburak view --queue`",
        path.display(),
        path.display()
    )]
    OtherClaim { path: PathBuf, given: String },
    /// An approval that names no claim code.
    #[error(
        "approving needs the code shown with the claim you read (`--claim CODE`), so that what runs is that \
         claim; or run `zamburak approve {}` at a terminal to see the claim again",
        path.display()
    )]
    CodeNeeded { path: PathBuf },
    #[error(transparent)]
    Locked(#[from] RunLockError),
    /// The trace could not be read or verified.
    #[error("cannot read the trace: {0}")]
    TraceUnreadable(#[source] TraceError),
    #[error("the trace {} is broken at seq {seq}: {why}", trace.display())]
    TraceBroken {
        trace: PathBuf,
        seq: u64,
        why: String,
    },
    /// The trace's last record is not a `suspend` (`last` is its type): decided already, or the run ended.
    #[error(
        "the trace {} is not waiting for this decision (its last record is `{last}`): the claim was already \
         decided, or the run ended",
        trace.display()
    )]
    NotWaiting { trace: PathBuf, last: String },
    /// The trace's `suspend` record names other snapshot bytes, call or position.
    #[error(
        "{} is not the snapshot the trace {} waits on (it was changed, or belongs to another run)",
        path.display(),
        trace.display()
    )]
    NotTheSnapshot { path: PathBuf, trace: PathBuf },
    /// An approval after `expires_at` (escaped for a terminal); a rejection is still accepted.
    #[error(
        "the claim expired at {expires_at}: renew it to decide it afresh (`zamburak claim renew {0}`, which shows it \
         again with a new expiry; nothing runs), or reject it (`zamburak reject {0}`)",
        path.display()
    )]
    Expired { path: PathBuf, expires_at: String },
    #[error("cannot read the plan {}: {source}", plan.display())]
    PlanUnreadable {
        plan: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the plan {} changed since the run was suspended", plan.display())]
    PlanChanged { plan: PathBuf },
    #[error("the plan is not UTF-8")]
    PlanNotUtf8,
    /// The policy the run used cannot be loaded now.
    #[error(transparent)]
    Policy(Box<PolicyError>),
    #[error("the policy changed since the run was suspended")]
    PolicyChanged,
    /// The claim, or the trace's record of it, does not match the claim's digest.
    #[error("{}: the claim does not match its digest", path.display())]
    ClaimDigest { path: PathBuf },
    /// The paused run could not be loaded into a machine.
    #[error("{}: {source}", path.display())]
    Restore {
        path: PathBuf,
        #[source]
        source: MachineError,
    },
    /// The paused run's call could not be decoded.
    #[error("{0}")]
    PausedCall(String),
    /// The paused run waits on another call than the claimed one.
    #[error("{}: the paused call is not the claimed one", path.display())]
    NotTheClaimedCall { path: PathBuf },
    #[error("cannot append to the trace: {0}")]
    TraceAppend(#[source] TraceError),

    // Deciding (`decide`).
    /// The policy's MCP servers have no usable lock now.
    #[error(transparent)]
    McpLock(#[from] LockError),
    /// A server the plan names could not be started again, or no longer matches the lock.
    #[error(transparent)]
    McpStart(CallError),
    /// `mcp lock` ran between the claim and the approval: `diff` lists each pin that differs.
    #[error(
        "the MCP lock changed since the claim was made (`mcp lock` ran in between), so the call would run \
         against other tool definitions than the claim was made under:\n{diff}\nreject this claim and run the \
         plan again"
    )]
    PinsChanged { diff: String },
    /// The decision could not be recorded in the trace: nothing ran.
    #[error("cannot record the decision in the trace: {0}")]
    RecordDecision(#[source] TraceError),

    // Saving (`suspend`).
    #[error("the run is not suspended")]
    NotSuspended,
    #[error("cannot encode the snapshot: {0}")]
    Encode(#[source] serde_json::Error),
    /// The trace's `suspend` record could not be written (no snapshot was saved).
    #[error("cannot write the trace: {0}")]
    TraceWrite(#[source] TraceError),
    #[error("cannot write the snapshot {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

// Boxed: a located policy error is large, and every function of this layer returns this error.
impl From<PolicyError> for SnapshotError {
    fn from(e: PolicyError) -> SnapshotError {
        SnapshotError::Policy(Box::new(e))
    }
}
