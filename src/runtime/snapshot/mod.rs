//! Suspended runs: the snapshot a `confirm` claim leaves behind, and the checks before a human's decision
//! may continue it.
//!
//! A snapshot holds Monty's paused call (labels are ordinary values inside it), the run's label space and
//! host state, and the claim. It is bound three ways, each checked on every use:
//! * **to the trace**: the trace's `suspend` record names the snapshot's sha256 and must be the trace's last
//!   record, so a changed snapshot (one byte is enough) or a second use of it is refused;
//! * **to the plan and the policy**: their sha256 must still match the files;
//! * **in time**: past `expires_at` it is refused.
//!
//! ```
//! use zamburak::trace::record::Call;
//! use zamburak::label::LabelView;
//! let view = LabelView { integrity: "trusted".into(), verified: vec![], tags: vec![], readers: None, sources: vec![] };
//! let call = Call { call_id: 2, line: 5, tool: "send_email".into(), args: vec![], pc: view,
//!     decision: "confirm".into(), rule: "r".into(), reason: "why".into(), before_run: false, tool_sha256: None,
//!     on_approval: None, remembered: Vec::new() };
//! let d = call.claim_digest();
//! assert!(d.starts_with("sha256:"));
//! let mut other = call.clone();
//! other.line = 6;
//! assert_ne!(other.claim_digest(), d);
//! ```

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::label::LabelSpace;
use crate::lower::Mode;
use crate::policy::Policy;
use crate::runtime::exec::paused_call;
use crate::runtime::machine::{Machine, RawCall};
use crate::runtime::run::{
    ClaimShown, Engine, HostState, Resumption, RunInput, RunReport, Status, ToolBackend,
    machine_limits, resume_plan,
};
use crate::trace::record::{Approval, Call, Record, Suspend, same_claim_code};
use crate::trace::redact::{keyed_digest, sha256_bytes};
use crate::trace::{TraceWriter, verify};

mod error;
pub mod remember;
pub use error::{RunLockError, SnapshotError};

/// The snapshot format this code writes and reads. 2: packed labels store readers inverted (a format-1
/// snapshot's labels would decode with the wrong readers, so it is refused). 3: the paused run is a Monty
/// session (prelude and plan snippet), not a one-shot run. 4: the snapshot keeps what the claim showed (so
/// `approve` at a terminal, `pending` and the review queue show it again) and the MCP pins the resumed run
/// may call. 5: the snapshot keeps the run's digest key (the trace names values by keyed digests), so the
/// continued run names them as the suspended one did; a format-4 snapshot's claim was made of plain digests
/// and is refused, to be made again by running the plan.
pub const FORMAT: u32 = 5;
/// How long a claim may wait for a decision unless `run --approval-ttl` says otherwise.
pub const DEFAULT_TTL_SECS: u64 = 600;
/// Largest snapshot read; a paused plan's state is far smaller.
const MAX_SNAPSHOT_BYTES: u64 = 256 << 20;

/// Everything a suspended run needs to continue in another process.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub format: u32,
    pub zamburak: String,
    /// The plan file and the sha256 of its bytes when the run started.
    pub plan: PathBuf,
    pub plan_sha256: String,
    /// The policy file (`None`: the bundled default) and the sha256 of its bytes.
    pub policy: Option<PathBuf>,
    pub policy_sha256: String,
    /// `strict` or `normal`.
    pub mode: Mode,
    /// The trace the run writes, and the hash of its record just before the `suspend` record.
    pub trace: PathBuf,
    pub trace_prev: String,
    pub created_at: String,
    pub expires_at: String,
    /// The claim as the trace recorded it, and its digest.
    pub claim: Call,
    pub claim_digest: String,
    /// The values the claim showed the person and who may not read them (live values: the file is the
    /// owner's only). Each value is checked against its digest in `claim` before it is shown again.
    pub shown: ClaimShown,
    /// `server/tool` → pin, for every MCP tool the resumed run may call, as locked when the run suspended.
    /// A re-lock in between refuses the approval with the difference.
    pub mcp_pins: BTreeMap<String, String>,
    /// Monty's paused call (serialised `crate::runtime::exec::PausedRun`).
    pub paused: Value,
    pub space: LabelSpace,
    pub state: HostState,
    /// The run's digest key (docs/semantics.md, "A shareable trace shares nothing private"): what the claim's
    /// value digests are keyed with. Kept here, in the user's private file, never in the trace.
    pub digest_key: crate::digest::DigestKey,
}

/// Where the snapshot of a run writing `trace` goes.
pub fn snapshot_path(trace: &Path) -> PathBuf {
    trace.with_extension("zsnap")
}

/// What `run` knows when it suspends.
pub struct SuspendContext<'a> {
    pub plan: &'a Path,
    pub plan_source: &'a str,
    pub policy: Option<&'a Path>,
    pub policy_bytes: &'a [u8],
    pub mode: Mode,
    pub trace: &'a Path,
    pub ttl_secs: u64,
    /// The MCP pins of the run's servers ([`crate::mcp::hub::Hub::pins`]); empty without servers.
    pub mcp_pins: BTreeMap<String, String>,
}

/// Writes the snapshot of a suspended run and the trace's `suspend` record. Returns the snapshot's path.
pub fn suspend(
    report: &RunReport,
    ctx: &SuspendContext<'_>,
    writer: &mut TraceWriter,
) -> Result<PathBuf, SnapshotError> {
    let Some(s) = &report.suspension else {
        return Err(SnapshotError::NotSuspended);
    };
    let now = jiff::Timestamp::now();
    let ttl = i64::try_from(ctx.ttl_secs).unwrap_or(i64::MAX);
    let expires = now
        .checked_add(jiff::SignedDuration::from_secs(ttl))
        .unwrap_or(jiff::Timestamp::MAX);
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let snap = Snapshot {
        format: FORMAT,
        zamburak: env!("CARGO_PKG_VERSION").to_string(),
        plan: abs(ctx.plan),
        plan_sha256: sha256_bytes(ctx.plan_source.as_bytes()),
        policy: ctx.policy.map(abs),
        policy_sha256: sha256_bytes(ctx.policy_bytes),
        mode: ctx.mode,
        trace: abs(ctx.trace),
        trace_prev: writer.head().to_string(),
        created_at: now.to_string(),
        expires_at: expires.to_string(),
        claim: s.claim.clone(),
        claim_digest: s.claim_digest.clone(),
        shown: s.shown.clone(),
        mcp_pins: ctx.mcp_pins.clone(),
        paused: s.paused.clone(),
        space: s.space.clone(),
        state: s.state.clone(),
        digest_key: writer.key().clone(),
    };
    let bytes = serde_json::to_vec(&snap).map_err(SnapshotError::Encode)?;
    let path = snapshot_path(ctx.trace);
    // The suspend record first: a snapshot the trace does not name can never be used.
    writer
        .append(suspend_record(&snap, &bytes))
        .map_err(SnapshotError::TraceWrite)?;
    write_private(&path, &bytes)?;
    Ok(path)
}

/// The `suspend` record naming the snapshot `snap` written as `bytes`: what makes those bytes, and no
/// others, the one snapshot a decision may use.
fn suspend_record(snap: &Snapshot, bytes: &[u8]) -> Record {
    Record::Suspend(Suspend {
        call_id: snap.claim.call_id,
        claim_digest: snap.claim_digest.clone(),
        snapshot_sha256: sha256_bytes(bytes),
        expires_at: snap.expires_at.clone(),
    })
}

/// Writes a file readable by its owner only, replacing it atomically.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), SnapshotError> {
    let tmp = path.with_extension("zsnap.tmp");
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let result = (|| {
        use std::io::Write;
        let mut f = opts.open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|source| SnapshotError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// A snapshot that passed every check, with what resuming it needs.
pub struct Opened {
    pub snapshot: Snapshot,
    pub policy: Policy,
    /// The bytes `policy` was parsed from, checked against the snapshot's digest.
    pub policy_bytes: Vec<u8>,
    pub plan_source: String,
    /// The machine holding the restored paused run, and the call it waits on.
    pub machine: Box<dyn Machine>,
    pub call: RawCall,
    pub writer: TraceWriter,
    /// Holds the trace's lock until the decision is done.
    pub lock: std::fs::File,
}

/// Where the lock serialising `run`, `approve` and `reject` of the run writing `trace` lives: beside the
/// trace, so a re-run cannot replace the trace while a decision on it is being recorded.
pub fn lock_path(trace: &Path) -> PathBuf {
    trace.with_extension("zlock")
}

/// Takes the lock of the run writing `trace` ([`lock_path`]), held until the returned file is dropped.
/// Refuses at once when another `run`, `approve` or `reject` of the same run holds it.
pub fn lock_run(trace: &Path) -> Result<std::fs::File, RunLockError> {
    let path = lock_path(trace);
    let file = match std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
    {
        Ok(file) => file,
        Err(source) => return Err(RunLockError::Open { path, source }),
    };
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(RunLockError::Busy {
            trace: trace.to_path_buf(),
        }),
        Err(std::fs::TryLockError::Error(source)) => Err(RunLockError::Lock { path, source }),
    }
}

/// The claim waiting for a decision on the run writing `trace`, if any: the snapshot beside the trace that
/// the trace's last record (a `suspend`) names. A snapshot the trace does not name is not pending.
pub fn pending_at(trace: &Path) -> Option<(PathBuf, Snapshot)> {
    let path = snapshot_path(trace);
    let (snapshot, bytes) = read_unchecked(&path, false).ok()?;
    waits_on(trace, &bytes).then_some((path, snapshot))
}

/// Whether the trace's last record is the `suspend` record naming exactly these snapshot bytes.
fn waits_on(trace: &Path, bytes: &[u8]) -> bool {
    let Ok(records) = crate::trace::read(trace) else {
        return false;
    };
    records.last().is_some_and(|last| {
        last["type"] == "suspend" && last["snapshot_sha256"] == json!(sha256_bytes(bytes))
    })
}

/// How deep [`find_pending`] looks below each directory it is given.
const PENDING_DEPTH: usize = 8;

/// Every claim pending under `dirs` (each searched to [`PENDING_DEPTH`] levels, skipping hidden
/// directories, `target` and `node_modules`): a `.zsnap` whose trace still waits on it, oldest first.
/// Snapshots that are not pending (decided, replaced, unreadable) are left out.
pub fn find_pending(dirs: &[PathBuf]) -> Vec<(PathBuf, Snapshot)> {
    let mut out: Vec<(PathBuf, Snapshot)> = snapshot_files(dirs)
        .into_iter()
        .filter_map(pending_file)
        .collect();
    out.sort_by(|a, b| a.1.created_at.cmp(&b.1.created_at));
    out
}

/// The claim the snapshot file at `path` holds, if it is pending: its trace's last record is the `suspend`
/// naming it ([`pending_at`]) at that place.
pub fn pending_file(path: PathBuf) -> Option<(PathBuf, Snapshot)> {
    // Read once: the trace must name these very bytes.
    let (snap, bytes) = read_unchecked(&path, false).ok()?;
    // The trace names the snapshot at its default place; a copy elsewhere is not the pending one.
    let at = snapshot_path(&snap.trace);
    let same = std::fs::canonicalize(&at).ok()? == std::fs::canonicalize(&path).ok()?;
    (same && waits_on(&snap.trace, &bytes)).then_some((path, snap))
}

/// Every `.zsnap` file [`find_pending`] looks at under `dirs`, pending or not, sorted.
pub fn snapshot_files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                let skip = name.starts_with('.') || name == "target" || name == "node_modules";
                if !skip && depth < PENDING_DEPTH {
                    walk(&path, depth + 1, found);
                }
            } else if kind.is_file() && name.ends_with(".zsnap") {
                found.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for d in dirs {
        walk(d, 0, &mut files);
    }
    files.sort();
    files.dedup();
    files
}

/// Reads a snapshot file without any of the checks [`open`] makes: for showing a claim (which checks the
/// shown values against the claim's digests) and listing pending ones. Never trust it to run anything.
pub fn peek(path: &Path) -> Result<(Snapshot, Vec<u8>), SnapshotError> {
    read_unchecked(path, true)
}

/// [`peek`]; `explain` whether a missing file's error says how its claim was decided, which reads and
/// verifies the whole trace beside it: every `zamburak run` looks for a pending snapshot first, and a
/// caller that only asks whether one is pending must not pay for a previous run's trace.
fn read_unchecked(path: &Path, explain: bool) -> Result<(Snapshot, Vec<u8>), SnapshotError> {
    let at = || path.to_path_buf();
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(match explain.then(|| decided_before(path)).flatten() {
                Some(decided) => SnapshotError::Decided {
                    path: at(),
                    decided,
                },
                None => SnapshotError::Missing { path: at() },
            });
        }
        Err(source) => return Err(SnapshotError::Unreadable { path: at(), source }),
    };
    let mut bytes = Vec::new();
    file.take(MAX_SNAPSHOT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| SnapshotError::Unreadable { path: at(), source })?;
    if bytes.len() as u64 > MAX_SNAPSHOT_BYTES {
        return Err(SnapshotError::TooLarge {
            path: at(),
            max: MAX_SNAPSHOT_BYTES,
        });
    }
    // The format first, so an older snapshot is named as such rather than as unreadable.
    let format = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v.get("format").and_then(Value::as_u64));
    if let Some(found) = format.filter(|f| *f != u64::from(FORMAT)) {
        return Err(SnapshotError::Format {
            path: at(),
            found,
            reads: FORMAT,
        });
    }
    let snapshot: Snapshot = serde_json::from_slice(&bytes)
        .map_err(|source| SnapshotError::Malformed { path: at(), source })?;
    if snapshot.zamburak != env!("CARGO_PKG_VERSION") {
        // The paused run carries the program another version compiled; resume it with that version.
        return Err(SnapshotError::Version {
            path: at(),
            written: snapshot.zamburak,
            running: env!("CARGO_PKG_VERSION"),
        });
    }
    Ok((snapshot, bytes))
}

/// For a snapshot file that is gone: who decided its claim and when, from the trace it sat beside (the
/// default place, `PLAN.zjson` beside `PLAN.zsnap`), when that trace says.
fn decided_before(path: &Path) -> Option<String> {
    let trace = path.with_extension("zjson");
    let records = crate::trace::read(&trace).ok()?;
    let last = records
        .iter()
        .rev()
        .find(|r| r["type"] == "approval" || r["type"] == "suspend")?;
    if last["type"] != "approval" {
        return None;
    }
    Some(format!(
        "its claim (call #{}) was {} by {} at {} (trace {})",
        last["call_id"],
        last["decision"].as_str().unwrap_or("decided"),
        crate::text::visible(last["by"].as_str().unwrap_or("?")),
        last["at"].as_str().unwrap_or("?"),
        trace.display()
    ))
}

/// A duration as a person reads it at a glance: `42s`, `7m`, `3h`, `2d` (how long a claim waited, or has
/// left).
pub fn short_duration(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}

impl Snapshot {
    /// The claim's code, which `approve --claim` must name ([`crate::trace::record::claim_code`]).
    pub fn claim_code(&self) -> String {
        crate::trace::record::claim_code(&self.claim_digest)
    }

    /// The values to show the person, each checked against the digest the claim records for its argument
    /// (a value that does not match is refused, so what is shown is what the claim's code binds).
    pub fn shown_checked(&self) -> Result<&ClaimShown, SnapshotError> {
        let bound = self.shown.values.len() == self.claim.args.len()
            && self
                .shown
                .values
                .iter()
                .zip(&self.claim.args)
                .all(|((n, v), a)| *n == a.name && keyed_digest(&self.digest_key, v) == a.digest);
        if bound && self.claim.claim_digest() == self.claim_digest {
            Ok(&self.shown)
        } else {
            Err(SnapshotError::ValuesUnbound)
        }
    }

    /// Whether the claim's time to decide has passed.
    pub fn expired(&self) -> bool {
        self.expires_at
            .parse::<jiff::Timestamp>()
            .map_or(true, |t| jiff::Timestamp::now() > t)
    }
}

/// What a person said when deciding: approve or reject, and which claim (its code, as shown with the
/// claim). An approval must name its claim; a rejection may leave it out (rejecting runs nothing).
#[derive(Clone, Copy, Debug)]
pub struct Verdict<'a> {
    pub approve: bool,
    pub code: Option<&'a str>,
    /// The arguments whose values an approval also remembers (`approve --remember ARG`, a tick per value
    /// on the queue page and in the form); empty: none.
    pub remember: &'a [String],
}

/// Reads and checks a snapshot: integrity against the trace, single use, the claim named by the verdict,
/// expiry (for an approval), unchanged plan and policy, and that the paused call is exactly the claimed one.
pub fn open(path: &Path, verdict: Verdict<'_>, engine: &Engine) -> Result<Opened, SnapshotError> {
    let at = || path.to_path_buf();
    let (snapshot, bytes) = peek(path)?;
    let digest_now = sha256_bytes(&bytes);

    // The claim the person named, before anything else: a snapshot path that now holds another claim (a
    // re-run, a swapped file) must never be approved under the old claim's code.
    // The refusals never print the code the snapshot holds now: copied from an error, it would approve a
    // claim nobody read.
    let code = snapshot.claim_code();
    match verdict.code {
        Some(given) if !same_claim_code(given, &code) => {
            return Err(SnapshotError::OtherClaim {
                path: at(),
                given: crate::text::visible(given),
            });
        }
        None if verdict.approve => {
            return Err(SnapshotError::CodeNeeded { path: at() });
        }
        _ => {}
    }

    // One decision at a time, and no re-run meanwhile: a second `approve`, or a `run` of the same plan that
    // would replace the trace, waits for this one. The lock is held until the decision is recorded and the
    // run has continued.
    let trace = &snapshot.trace;
    let lock = lock_run(trace)?;

    // Bound to the trace: it must verify, and its last record must be the suspend record naming exactly
    // these bytes. After a decision the trace moves on, so a snapshot is good for one decision only.
    let report = verify::verify(trace).map_err(SnapshotError::TraceUnreadable)?;
    if let Some(b) = report.broken {
        return Err(SnapshotError::TraceBroken {
            trace: trace.clone(),
            seq: b.seq,
            why: b.why,
        });
    }
    let records = crate::trace::read(trace).map_err(SnapshotError::TraceUnreadable)?;
    let last = records.last().cloned().unwrap_or(Value::Null);
    if last["type"] != "suspend" {
        return Err(SnapshotError::NotWaiting {
            trace: trace.clone(),
            last: last["type"].as_str().unwrap_or("none").to_string(),
        });
    }
    if last["snapshot_sha256"] != Value::String(digest_now.clone())
        || last["call_id"] != json!(snapshot.claim.call_id)
        || last["prev"] != Value::String(snapshot.trace_prev.clone())
    {
        return Err(SnapshotError::NotTheSnapshot {
            path: at(),
            trace: trace.clone(),
        });
    }
    // An expired claim can still be rejected: that runs nothing and closes the trace.
    if verdict.approve && snapshot.expired() {
        return Err(SnapshotError::Expired {
            path: at(),
            expires_at: crate::text::visible(&snapshot.expires_at),
        });
    }

    // Bound to the plan and the policy.
    let plan_bytes =
        std::fs::read(&snapshot.plan).map_err(|source| SnapshotError::PlanUnreadable {
            plan: snapshot.plan.clone(),
            source,
        })?;
    if sha256_bytes(&plan_bytes) != snapshot.plan_sha256 {
        return Err(SnapshotError::PlanChanged {
            plan: snapshot.plan.clone(),
        });
    }
    let plan_source = String::from_utf8(plan_bytes).map_err(|_| SnapshotError::PlanNotUtf8)?;
    let (policy, policy_bytes) = match &snapshot.policy {
        Some(p) => Policy::load_bytes(p)?,
        None => (
            Policy::bundled_default()?,
            crate::policy::BUNDLED_DEFAULT.as_bytes().to_vec(),
        ),
    };
    if sha256_bytes(&policy_bytes) != snapshot.policy_sha256 {
        return Err(SnapshotError::PolicyChanged);
    }

    // Exactly the claimed call, with exactly the claimed arguments.
    if snapshot.claim.claim_digest() != snapshot.claim_digest
        || last["claim_digest"] != json!(snapshot.claim_digest)
    {
        return Err(SnapshotError::ClaimDigest { path: at() });
    }
    // The paused run is Monty's state: it is loaded where the run continues (a worker for `approve`).
    let mut machine = engine.machine();
    let raw = machine
        .restore(&snapshot.paused, &machine_limits(&policy))
        .map_err(|source| SnapshotError::Restore { path: at(), source })?;
    let call = paused_call(&raw).map_err(SnapshotError::PausedCall)?;
    let same_args = call.args.len() == snapshot.claim.args.len()
        && call
            .args
            .iter()
            .zip(&snapshot.claim.args)
            .all(|((n, v), a)| {
                *n == a.name && keyed_digest(&snapshot.digest_key, &v.to_json()) == a.digest
            });
    if call.name != snapshot.claim.tool || call.line != snapshot.claim.line || !same_args {
        return Err(SnapshotError::NotTheClaimedCall { path: at() });
    }
    let mut writer = TraceWriter::open_append(trace, snapshot.digest_key.clone())
        .map_err(SnapshotError::TraceAppend)?;
    // The run kept values for `view --reveal` (its store exists): the continued run keeps its values too.
    let store = crate::trace::values::store_path(trace);
    if store.exists()
        && let Ok(s) = crate::trace::values::ValueStore::open_append(&store, &snapshot.digest_key)
    {
        writer.keep_values_in(s);
    }
    Ok(Opened {
        snapshot,
        policy,
        policy_bytes,
        plan_source,
        machine,
        call: raw,
        writer,
        lock,
    })
}

/// Renews the claim the snapshot at `path` waits on, expired or not (docs/approvals.md, "The life of a
/// claim"): the snapshot must check exactly as for a decision (bound to its trace, plan, policy and paused
/// call, its values to the claim's digests), and then waits again for the time-to-live the first suspension
/// had (or `ttl_secs`), from now, named by a new `suspend` record. Nothing runs. Returns the renewed
/// snapshot.
pub fn renew(
    path: &Path,
    ttl_secs: Option<u64>,
    engine: &Engine,
) -> Result<Snapshot, SnapshotError> {
    // A rejection's verdict opens an expired snapshot without a code: nothing is decided here.
    let verdict = Verdict {
        approve: false,
        code: None,
        remember: &[],
    };
    let Opened {
        snapshot,
        mut writer,
        lock: _lock,
        ..
    } = open(path, verdict, engine)?;
    snapshot.shown_checked()?;
    let now = jiff::Timestamp::now();
    let ttl = i64::try_from(ttl_secs.unwrap_or_else(|| ttl_left(&snapshot))).unwrap_or(i64::MAX);
    let renewed = Snapshot {
        created_at: now.to_string(),
        expires_at: now
            .checked_add(jiff::SignedDuration::from_secs(ttl))
            .unwrap_or(jiff::Timestamp::MAX)
            .to_string(),
        trace_prev: writer.head().to_string(),
        ..snapshot
    };
    let bytes = serde_json::to_vec(&renewed).map_err(SnapshotError::Encode)?;
    writer
        .append(suspend_record(&renewed, &bytes))
        .map_err(SnapshotError::TraceWrite)?;
    writer.close().map_err(SnapshotError::TraceWrite)?;
    write_private(path, &bytes)?;
    Ok(renewed)
}

/// The same time-to-live the first suspension had (a re-suspension does not extend a short one forever).
pub fn ttl_left(s: &Snapshot) -> u64 {
    let (Ok(a), Ok(b)) = (
        s.created_at.parse::<jiff::Timestamp>(),
        s.expires_at.parse::<jiff::Timestamp>(),
    ) else {
        return 0;
    };
    u64::try_from(b.duration_since(a).as_secs()).unwrap_or(0)
}

/// What a human's decision on a suspended claim led to (`zamburak approve|reject`).
pub struct Decided {
    /// The snapshot decided on: the claim, the plan and trace it belongs to.
    pub snapshot: Snapshot,
    /// The continued run (or the rejection's ending).
    pub report: RunReport,
    /// The run stopped at another `confirm` claim: where its new snapshot is, or why it could not be saved.
    pub suspended_again: Option<Result<PathBuf, SnapshotError>>,
    /// Whether the used snapshot was removed (a run that is over leaves none behind).
    pub snapshot_removed: Result<(), std::io::Error>,
    /// The trace's head after the decision, or why the trace could not be completed.
    pub head: Result<String, crate::trace::TraceError>,
    /// What the run's policy lets a planner be told: what a caller that hands the run back to a model may
    /// tell it (docs/semantics.md, "What the planner and the person are told").
    pub planner: crate::runtime::answer::Knows,
    /// The values the approval remembered ([`Verdict::remember`]).
    pub remembered: Vec<crate::known::store::Entry>,
}

impl Decided {
    /// What the decision did to the claimed call, in the words `approve`, `reject` and the review queue
    /// show: `approved by alice: ran `send_email` #2 to bob@example.com (line 6)`, or `drafted`, or
    /// `was called and failed`, or `rejected by …: … did not run`.
    pub fn headline(&self, approved: bool, by: &str) -> String {
        let c = &self.snapshot.claim;
        // Where the call went, when the plan wrote it (a trusted `to` or `url` is stored in the clear).
        let target = c
            .args
            .iter()
            .find(|a| matches!(a.name.as_str(), "to" | "url" | "path"))
            .and_then(|a| a.preview.as_ref())
            .map(|v| match v {
                Value::String(s) => format!(" to {}", crate::text::visible(s)),
                other => format!(" to {}", crate::text::visible(&other.to_string())),
            })
            .unwrap_or_default();
        let what = format!("`{}` #{}{target} (line {})", c.tool, c.call_id, c.line);
        // The claimed call ran when the run's list of calls that ran grew: the claim is the first call made.
        let ran = self.report.calls_run.len() > self.snapshot.state.calls_run.len();
        let by = crate::text::visible(by);
        if !approved {
            format!("rejected by {by}: {what} did not run")
        } else if ran && c.on_approval.as_deref() == Some("draft") {
            format!("approved by {by}: drafted {what}; as the claim said, nothing was sent")
        } else if ran {
            format!("approved by {by}: ran {what}")
        } else {
            format!("approved by {by}: {what} was called and failed; the approval is recorded")
        }
    }

    /// How the run ended after the decision; `None` when it suspended again (each caller says where the
    /// new claim is).
    pub fn ending(&self, approved: bool) -> Option<String> {
        Some(match self.report.status {
            Status::Suspended => return None,
            Status::Completed => format!(
                "run completed, nothing pending (most restrictive decision met: {}, now decided)",
                self.report.outcome
            ),
            Status::Denied | Status::Rejected if !approved => {
                "run stopped: the claim was rejected, nothing pending".to_string()
            }
            Status::Denied => "run stopped: a tool call was denied".to_string(),
            Status::Error => "run stopped by an error".to_string(),
            Status::Rejected => "run stopped: a claim was rejected".to_string(),
        })
    }
}

/// Records `by`'s decision on the claim the snapshot at `path` waits on, and continues the run (an approved
/// claim runs now, exactly as claimed; a rejected one stops the run). `Err`: nothing was run, because the
/// snapshot does not check or the decision could not be recorded.
pub fn decide(
    path: &Path,
    verdict: Verdict<'_>,
    by: &str,
    engine: &Engine,
    print: &mut dyn FnMut(&str),
) -> Result<Decided, SnapshotError> {
    let approve = verdict.approve;
    let Opened {
        snapshot,
        policy,
        policy_bytes,
        plan_source,
        machine,
        call,
        mut writer,
        lock: _lock,
    } = open(path, verdict, engine)?;
    // An approved run starts its servers again and re-checks them against the lock, and the lock against
    // the pins the claim was made under, before the decision is recorded: a refusal leaves the claim
    // pending. A rejection calls no tool, so it starts nothing.
    // The plan is parsed once here: its names pick the servers, and the resumption lowers the same parse.
    let parsed = crate::plan::parse(&plan_source);
    let mut backend = ToolBackend::for_policy(&policy, snapshot.policy.as_deref())?;
    let mut pins_now = BTreeMap::new();
    if let Some(hub) = backend.hub() {
        pins_now = hub.pins();
        if approve {
            let names = match &parsed {
                Ok(p) => crate::plan::names::mentioned(&p.module),
                Err(_) => Default::default(),
            };
            hub.start_for(&policy, &names)
                .map_err(SnapshotError::McpStart)?;
        }
    }
    if approve && pins_now != snapshot.mcp_pins {
        return Err(SnapshotError::PinsChanged {
            diff: pin_diff(&snapshot.mcp_pins, &pins_now),
        });
    }
    // Remembered values: the store must check before anything is recorded, and what the person asked to
    // remember is kept before the approval is (a store that cannot be written leaves the claim pending).
    if !approve && !verdict.remember.is_empty() {
        return Err(SnapshotError::NotRemembered {
            arg: crate::text::visible(&verdict.remember.join(", ")),
            why: "a rejection remembers nothing".into(),
        });
    }
    let mut known = crate::runtime::memory::open_for(&policy)?;
    let remembered = remember::entries(&snapshot, &policy, verdict.remember, by)?;
    if let Some(store) = known.as_mut().filter(|_| !remembered.is_empty()) {
        for entry in &remembered {
            store.remember(entry.clone());
        }
        store.save()?;
    }
    writer
        .append(Record::Approval(Approval {
            call_id: snapshot.claim.call_id,
            decision: if approve { "approved" } else { "rejected" }.into(),
            by: by.to_string(),
            at: jiff::Timestamp::now().to_string(),
            claim_digest: snapshot.claim_digest.clone(),
        }))
        .map_err(SnapshotError::RecordDecision)?;
    let mode = snapshot.mode;
    let report = resume_plan(
        Resumption {
            input: RunInput {
                source: &plan_source,
                policy: &policy,
                mode,
            },
            machine,
            call,
            space: snapshot.space.clone(),
            state: snapshot.state.clone(),
            claim: snapshot.claim.clone(),
            approved: approve,
            known: known.as_ref(),
            parsed: Some(parsed),
        },
        &mut backend,
        Some(&mut writer),
        print,
    );
    let mut suspended_again = None;
    if report.status == Status::Suspended {
        // The bytes `open` parsed the policy from and checked against the snapshot's digest.
        let ctx = SuspendContext {
            plan: &snapshot.plan,
            plan_source: &plan_source,
            policy: snapshot.policy.as_deref(),
            policy_bytes: &policy_bytes,
            mode,
            trace: &snapshot.trace,
            ttl_secs: ttl_left(&snapshot),
            mcp_pins: pins_now,
        };
        suspended_again = Some(suspend(&report, &ctx, &mut writer));
    }
    // The decision is in the trace, which is what makes the snapshot single-use; removing the file of a
    // run that is over leaves nothing that looks like a pending claim.
    let snapshot_removed = if report.status == Status::Suspended {
        Ok(())
    } else {
        std::fs::remove_file(path)
    };
    let head = writer.close();
    Ok(Decided {
        snapshot,
        report,
        suspended_again,
        snapshot_removed,
        head,
        planner: crate::runtime::answer::Knows::of(&policy),
        remembered,
    })
}

/// The pins that differ between the claim's time and now, one line each.
fn pin_diff(then: &BTreeMap<String, String>, now: &BTreeMap<String, String>) -> String {
    let mut lines = Vec::new();
    for (tool, pin) in then {
        match now.get(tool) {
            Some(p) if p == pin => {}
            Some(p) => lines.push(format!("  {tool}: {pin} at the claim, {p} now")),
            None => lines.push(format!("  {tool}: {pin} at the claim, not locked now")),
        }
    }
    for (tool, pin) in now {
        if !then.contains_key(tool) {
            lines.push(format!("  {tool}: not locked at the claim, {pin} now"));
        }
    }
    lines.join("\n")
}
