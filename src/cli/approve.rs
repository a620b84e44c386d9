//! `zamburak approve|reject SNAPSHOT`: records a human's decision on a suspended claim and continues the
//! run; and how a claim is put to a person on a terminal. With `--format json`, stdout carries one JSON
//! document of the continued run, as `run --format json` prints it, and the plan's prints go to stderr.

use super::output::{err, errln, out, outln};
use std::path::Path;

use super::claim::{claim_text, decider, describe_claim};
use crate::exit;
use crate::runtime::snapshot::{self, Decided, Verdict};

/// `zamburak approve|reject SNAPSHOT [--claim CODE] [--by NAME] [--format json]`: records the decision in
/// the trace and continues the run. An approval names its claim: by `--claim`, or by the person's `y` after
/// the claim is shown again at a terminal.
pub fn decide_command(
    path: &Path,
    approve: bool,
    claim: Option<&str>,
    by: Option<&str>,
    json: bool,
) -> i32 {
    // Nothing was decided: said on stderr, and on stdout as `{"error": …}` when the caller asked for JSON.
    let nothing_run = |message: &str| {
        errln!("error: {message}");
        errln!("nothing was run.");
        if json {
            outln!("{}", serde_json::json!({ "error": message }));
        }
        exit::USAGE
    };
    let Some(by) = decider(by) else {
        return nothing_run(
            "who decides is recorded in the trace: name yourself with `--by NAME` (no $USER is set and the account has no name)",
        );
    };
    let verb = if approve { "approve" } else { "reject" };
    let mut code = claim.map(str::to_string);
    if code.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        // Show the claim again, exactly as the snapshot's code binds it, and let the person say.
        match ask_again(path, verb) {
            Ok(Some(c)) => code = Some(c),
            Ok(None) => {
                errln!("not {verb}d: the claim still waits.");
                if json {
                    outln!(
                        "{}",
                        serde_json::json!({ "error": format!("not {verb}d: the claim still waits") })
                    );
                }
                return exit::USAGE;
            }
            Err(e) => return nothing_run(&e),
        }
    }
    // A resumed run may start MCP servers again.
    super::interrupt::on_interrupt_kill_servers();
    let engine = match super::worker_engine() {
        Ok(engine) => engine,
        Err(e) => return nothing_run(&e.to_string()),
    };
    let verdict = Verdict {
        approve,
        code: code.as_deref(),
    };
    let decided = match snapshot::decide(path, verdict, &by, &engine, &mut |text| {
        // In JSON mode stdout carries only the document, as for `run`.
        let text = crate::text::visible_lines(text);
        if json {
            err!("{text}");
        } else {
            out!("{text}");
        }
    }) {
        Ok(d) => d,
        Err(e) => return nothing_run(&e.to_string()),
    };
    let headline = decided.headline(approve, &by);
    let ending = decided.ending(approve);
    let Decided {
        snapshot,
        report,
        suspended_again,
        snapshot_removed,
        head,
        planner,
    } = decided;
    let filename = super::output::shown_path(&snapshot.plan)
        .display()
        .to_string();
    let mut code = report.exit_code;
    match &suspended_again {
        Some(Ok(p)) => errln!("{}", describe_claim(&report, p)),
        Some(Err(e)) => {
            errln!("error: {e}");
            code = exit::USAGE;
        }
        None => {}
    }
    errln!("{}", headline);
    for d in report.decisions.iter().skip(snapshot.state.decisions.len()) {
        errln!(
            "{filename}:{}: {} {}: {} ({})",
            d.line,
            serde_json::to_value(d.decision)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            d.tool,
            visible(&d.reason),
            d.rule
        );
    }
    if let Some(e) = &report.error {
        // The plan's text for the snippet, only if it is still the plan that ran.
        let source = std::fs::read(&snapshot.plan)
            .ok()
            .filter(|b| crate::digest::sha256_bytes(b) == snapshot.plan_sha256)
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default();
        err!(
            "{}",
            crate::plan::render::render_runtime(
                &e.exc_type,
                &e.message,
                &source,
                &filename,
                e.line
            )
        );
    }
    if let Some(said) = &report.tool_said {
        // The tool's, server's or model's own words: escaped, on the terminal only.
        errln!("  {}", said.for_terminal());
    }
    let ended = ending.unwrap_or_else(|| {
        "suspended again: another call waits for your decision (exit 4)".to_string()
    });
    errln!("{ended}");
    if let Err(e) = snapshot_removed {
        errln!(
            "warning: the used snapshot {} was not removed: {e}",
            path.display()
        );
    }
    let head = match head {
        Ok(head) => {
            errln!(
                "trace: {} (head {head})",
                super::output::shown_path(&snapshot.trace).display()
            );
            head
        }
        Err(e) => {
            errln!("error: the trace could not be completed: {e}");
            if json {
                outln!(
                    "{}",
                    serde_json::json!({ "error": format!("the trace could not be completed: {e}") })
                );
            }
            return exit::USAGE;
        }
    };
    if json {
        let again = suspended_again.as_ref().and_then(|r| r.as_ref().ok());
        let doc = super::run::json_document(
            &report,
            "",
            &snapshot.trace,
            Some(&head),
            again.map(|p| p.as_path()),
            None,
            &planner,
        );
        match serde_json::to_string_pretty(&doc) {
            Ok(text) => outln!("{text}"),
            Err(e) => errln!("error: cannot print the report: {e}"),
        }
    }
    // A rejection that is recorded is the command succeeding: the run stopped as asked.
    if !approve && code == report.exit_code {
        return exit::OK;
    }
    code
}

pub use crate::text::visible;

/// At a terminal without `--claim`: shows the snapshot's claim again (its values checked against the
/// claim's digests) and asks. Returns the code of the claim shown when the person says yes.
fn ask_again(path: &Path, verb: &str) -> Result<Option<String>, String> {
    use std::io::Write;
    let (snap, _) = snapshot::peek(path).map_err(|e| e.to_string())?;
    let shown = snap.shown_checked().map_err(|e| e.to_string())?;
    let code = snap.claim_code();
    let mut err = std::io::stderr().lock();
    let expired = if snap.expired() { " (expired)" } else { "" };
    let _ = write!(
        err,
        "{}  claim {code}, waiting since {}, until {}{expired}\n{verb} claim {code}? [y/N] ",
        claim_text(&snap.claim, shown),
        visible(&snap.created_at),
        visible(&snap.expires_at)
    );
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin()
        .read_line(&mut answer)
        .map_err(|e| format!("cannot read the answer: {e}"))?;
    let yes = matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    Ok(yes.then_some(code))
}
