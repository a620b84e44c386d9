//! `zamburak verify TRACE`: checks a trace's hash chain and prints the verdict.

use super::output::{errln, outln};
use std::path::Path;

use crate::digest::sha256_bytes;
use crate::exit;
use crate::runtime::snapshot;
use crate::text::visible;
use crate::trace::{VerifyReport, verify};

/// `zamburak verify FILE`: checks the hash chain. Returns the exit code.
///
/// Prints `ok: N records, head H` (exit 0); `broken at seq N (line L): why` (exit 1); `suspended at call #N,
/// waiting on SNAPSHOT until TIME` (exit 4, like the `run` that suspended: the chain checks and ends in a
/// `suspend` record); `expired claim at call #N: ...` (exit 4 too: the claim still waits, for a rejection only);
/// or `incomplete ...` (exit 5: the chain checks but has no end record, so a cut-off tail
/// cannot be ruled out). A file that cannot be read, or that is not a trace at all, is a usage error (exit 2,
/// one line on stderr).
pub fn verify_command(file: &Path) -> i32 {
    let report = match verify(file) {
        Ok(report) => report,
        Err(e) => {
            errln!("error: cannot read {e}");
            return exit::USAGE;
        }
    };
    if report.not_a_trace {
        let why = report.broken.as_ref().map_or("", |b| b.why.as_str());
        errln!(
            "error: {} is not a Zamburak trace ({})",
            file.display(),
            visible(why)
        );
        return exit::USAGE;
    }
    match (&report.broken, &report.suspended) {
        (None, Some(s)) if !report.complete => {
            let snapshot = snapshot::snapshot_path(file);
            let present =
                std::fs::read(&snapshot).is_ok_and(|b| sha256_bytes(&b) == s.snapshot_sha256);
            // A trace file is adversarial input: its text is escaped for the terminal.
            let expired = s
                .expires_at
                .parse::<jiff::Timestamp>()
                .is_ok_and(|t| jiff::Timestamp::now() > t);
            if expired {
                // Still waiting, but only for a rejection: an expired claim cannot be approved.
                outln!(
                    "expired claim at call #{}: {} waited until {} and can no longer be approved; `zamburak \
                     reject {}` closes the trace; {} records check, head {}",
                    s.call_id,
                    snapshot.display(),
                    visible(&s.expires_at),
                    snapshot.display(),
                    report.records,
                    visible(report.head.as_deref().unwrap_or("none"))
                );
                return exit::SUSPENDED;
            }
            outln!(
                "suspended at call #{}, waiting on {}{} until {}; {} records check, head {}",
                s.call_id,
                snapshot.display(),
                if present { "" } else { " (missing or changed)" },
                visible(&s.expires_at),
                report.records,
                visible(report.head.as_deref().unwrap_or("none"))
            );
            exit::SUSPENDED
        }
        _ => {
            outln!("{}", visible(&summary(&report)));
            if report.is_ok() {
                exit::OK
            } else if report.is_incomplete() {
                exit::INCOMPLETE
            } else {
                exit::REJECTED
            }
        }
    }
}

/// The one-line verdict `zamburak verify` prints for a report.
///
/// ```
/// use zamburak::cli::verify::summary;
/// use zamburak::trace::{Broken, VerifyReport};
/// let r = VerifyReport { records: 2, head: None, complete: false, suspended: None, not_a_trace: false,
///     broken: Some(Broken { seq: 2, line: 3, why: "hash does not match".into() }) };
/// assert_eq!(summary(&r), "broken at seq 2 (line 3): hash does not match");
/// ```
pub fn summary(report: &VerifyReport) -> String {
    let head = report.head.as_deref().unwrap_or("none");
    match &report.broken {
        Some(b) => format!("broken at seq {} (line {}): {}", b.seq, b.line, b.why),
        None if !report.complete => format!(
            "incomplete (no end record): {} records check, head {head}; the run was interrupted or is \
             suspended, or the end of the file was cut off",
            report.records
        ),
        None => format!("ok: {} records, head {head}", report.records),
    }
}
