//! `zamburak pending [DIR…]`: every claim that waits for a person under the given directories, one entry
//! each, with what a person needs to pick it up (plan and line, tool, the reason, age, expiry, claim code).

use super::output::{errln, outln};
use std::path::PathBuf;

use super::output::shown_path;
use crate::exit;
use crate::runtime::snapshot::{self, Snapshot};
use crate::text::visible;

/// Lists pending claims (text or JSON). Exit 0 whether or not any waits; 2 when a directory is unreadable.
pub fn pending_command(dirs: &[PathBuf], json: bool) -> i32 {
    let dirs = match search_dirs(dirs) {
        Ok(d) => d,
        Err(e) => {
            errln!("error: {e}");
            return exit::USAGE;
        }
    };
    let found = snapshot::find_pending(&dirs);
    let now = jiff::Timestamp::now();
    if json {
        let list: Vec<serde_json::Value> = found
            .iter()
            .map(|(path, s)| {
                serde_json::json!({
                    "snapshot": shown_path(path).display().to_string(),
                    "claim": s.claim_code(),
                    "claim_digest": s.claim_digest,
                    "plan": s.plan.display().to_string(),
                    "line": s.claim.line,
                    "tool": s.claim.tool,
                    "call_id": s.claim.call_id,
                    "rule": s.claim.rule,
                    "reason": s.claim.reason,
                    "on_approval": s.claim.on_approval,
                    "created_at": s.created_at,
                    "expires_at": s.expires_at,
                    "expired": s.expired(),
                })
            })
            .collect();
        outln!("{}", serde_json::json!({ "pending": list }));
        return exit::OK;
    }
    for (path, s) in &found {
        outln!("{}", entry(path, s, now));
    }
    match found.len() {
        0 => errln!("no claim is pending"),
        n => errln!(
            "{n} claim{} pending: decide with `zamburak approve SNAPSHOT --claim CODE` or `zamburak reject \
             SNAPSHOT` (or all in the browser: `zamburak view --queue`)",
            if n == 1 { "" } else { "s" }
        ),
    }
    exit::OK
}

/// The directories `pending` and `view --queue` search: those given, else the current one; each must be one.
pub(super) fn search_dirs(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let dirs: Vec<PathBuf> = if dirs.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        dirs.to_vec()
    };
    match dirs.iter().find(|d| !d.is_dir()) {
        Some(d) => Err(format!("{} is not a directory", d.display())),
        None => Ok(dirs),
    }
}

/// One pending claim as two lines: where and what, then why.
fn entry(path: &std::path::Path, s: &Snapshot, now: jiff::Timestamp) -> String {
    let age = s
        .created_at
        .parse::<jiff::Timestamp>()
        .map(|t| crate::runtime::snapshot::short_duration(now.duration_since(t).as_secs()))
        .unwrap_or_else(|_| "?".into());
    let expiry = match s.expires_at.parse::<jiff::Timestamp>() {
        Ok(t) if t > now => format!(
            "expires in {}",
            crate::runtime::snapshot::short_duration(t.duration_since(now).as_secs())
        ),
        Ok(_) => "expired: reject it to close the run".into(),
        Err(_) => "expiry unreadable".into(),
    };
    let effect = if s.claim.on_approval.as_deref() == Some("draft") {
        " (approving drafts it)"
    } else {
        ""
    };
    format!(
        "{}  claim {}  {}:{} `{}` #{}{effect}  waiting {age}, {expiry}\n    why: {}",
        shown_path(path).display(),
        s.claim_code(),
        shown_path(&s.plan).display(),
        s.claim.line,
        s.claim.tool,
        s.claim.call_id,
        visible(&s.claim.reason)
    )
}
