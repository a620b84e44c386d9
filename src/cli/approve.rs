//! `zamburak approve|reject SNAPSHOT`: records a human's decision on a suspended claim and continues the
//! run; and how a claim is put to a person on a terminal. With `--format json`, stdout carries one JSON
//! document of the continued run, as `run --format json` prints it, and the plan's prints go to stderr.

use super::output::{err, errln, out, outln};
use std::path::Path;

use crate::exit;
use crate::runtime::run::{ClaimShown, RunReport};
use crate::runtime::snapshot::{self, Decided, Verdict};

/// Longest stretch of one value shown to an approver before it is cut (the rest is counted; `run --format
/// json` carries it whole).
const SHOWN_CHARS: usize = 600;

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
    super::mcp::on_interrupt_kill_servers();
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

/// Who decides, as the trace records it: `--by`, else `$USER`; `None` when neither names anyone.
pub(super) fn decider(by: Option<&str>) -> Option<String> {
    // An MCP client may start `mcp serve` with almost no environment: the account's own name (from the
    // system's user database) stands in for an unset $USER.
    by.map(str::to_string)
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .or_else(|| {
            nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|u| u.name)
                .filter(|n| !n.is_empty())
        })
}

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

/// A value for a terminal: JSON (so quotes, newlines and escape sequences an attacker wrote are escaped,
/// never interpreted), cut after [`SHOWN_CHARS`] characters.
fn shown_value(v: &serde_json::Value) -> String {
    let text = visible(&v.to_string());
    let n = text.chars().count();
    if n <= SHOWN_CHARS {
        return text;
    }
    let head: String = text.chars().take(SHOWN_CHARS).collect();
    format!(
        "{head}… ({} more characters; `run --format json` shows them all)",
        n - SHOWN_CHARS
    )
}

/// The claim as the person deciding it sees it: each value in clear, marked where it came from tool data,
/// its readers by name, and who may not read what. The approver is the policy's user, who may read all
/// of it; nothing here goes into the trace.
pub fn claim_text(c: &crate::trace::record::Call, shown: &ClaimShown) -> String {
    let mut out = format!(
        "waiting for approval: line {}: `{}` (call #{})\n",
        c.line, c.tool, c.call_id
    );
    for a in &c.args {
        let value = shown
            .values
            .iter()
            .find(|(n, _)| *n == a.name)
            .map_or_else(|| format!("<{}>", a.digest), |(_, v)| shown_value(v));
        out.push_str(&format!("  {} = {value}\n", a.name));
        if a.label.integrity != "trusted" {
            let from = sources_text(&a.label);
            out.push_str(&format!(
                "      ! {}: written by whoever wrote {from}, not by you\n",
                a.label.integrity.to_uppercase()
            ));
        }
        out.push_str(&format!("      label: {}\n", a.label));
        if let Some(names) = &a.label.readers {
            let mut who = vec!["you".to_string()];
            who.extend(names.iter().map(|n| visible(n)));
            out.push_str(&format!("      readers: {}\n", who.join(", ")));
        }
        for (i, e) in a.elements.iter().flatten().enumerate() {
            out.push_str(&format!("      element {}: {e}\n", i + 1));
        }
    }
    if let Some(effect) = &shown.effect {
        out.push_str(&effect_text(effect));
    }
    for (arg, who) in &shown.non_readers {
        let who: Vec<String> = who.iter().map(|n| visible(n)).collect();
        out.push_str(&format!(
            "  not allowed to read `{arg}`: {}\n",
            who.join(", ")
        ));
    }
    out.push_str(&format!("  control context: {}\n", c.pc));
    out.push_str(&format!(
        "  why it waits: {} ({})\n",
        visible(&c.reason),
        c.rule
    ));
    if c.on_approval.as_deref() == Some("draft") {
        out.push_str(
            "  approving this writes a draft; it does not send (the call also breaks a rule that only a draft \
             may)\n",
        );
    }
    out
}

/// Who wrote a value, for "written by whoever wrote …": its sources, a call site's calls as one range
/// (`read_file#2–#96 (95 calls)`), or "tool data" when none is named.
fn sources_text(label: &crate::label::LabelView) -> String {
    if label.sources.is_empty() {
        return "tool data".to_string();
    }
    crate::label::compress_sources(&label.sources, &|_| None).join(", ")
}

/// What a call acts on beyond its arguments (the draft a commit sends), each part with its label.
fn effect_text(effect: &crate::runtime::run::ShownEffect) -> String {
    let mut out = format!("  {}:\n", effect.what);
    for p in &effect.parts {
        out.push_str(&format!("    {} = {}\n", p.name, shown_value(&p.value)));
        match &p.label {
            Some(label) => {
                if label.integrity != "trusted" {
                    let from = sources_text(label);
                    out.push_str(&format!(
                        "        ! {}: written by whoever wrote {from}, not by you\n",
                        label.integrity.to_uppercase()
                    ));
                }
                out.push_str(&format!("        label: {label}\n"));
                if let Some(names) = &label.readers {
                    let mut who = vec!["you".to_string()];
                    who.extend(names.iter().map(|n| visible(n)));
                    out.push_str(&format!("        readers: {}\n", who.join(", ")));
                }
            }
            None => out.push_str(
                "        ! NOT KNOWN: written outside this run, so who wrote it and who may read it are not \
                 recorded; read it as written by a stranger\n",
            ),
        }
        if !p.non_readers.is_empty() {
            let who: Vec<String> = p.non_readers.iter().map(|n| visible(n)).collect();
            out.push_str(&format!(
                "        not allowed to read it: {}\n",
                who.join(", ")
            ));
        }
    }
    if let Some(problem) = &effect.problem {
        out.push_str(&format!("    ! {}\n", visible(problem)));
    }
    out
}

/// The claim a suspended run waits on, and how to decide it.
pub fn describe_claim(report: &RunReport, snapshot: &Path) -> String {
    let Some(s) = &report.suspension else {
        return String::new();
    };
    let mut out = claim_text(&s.claim, &s.shown);
    let code = s.claim.claim_code();
    out.push_str(&format!(
        "claim {code}\napprove: zamburak approve {0} --claim {code}\nreject:  zamburak reject {0}",
        snapshot.display()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::{shown_value, visible};

    #[test]
    fn terminal_text_cannot_hide_or_reorder_what_is_sent() {
        // ANSI colour, a lone C1 CSI, a right-to-left override and a zero-width space.
        let attack = "ok\u{1b}[8mhidden\u{9b}2J\u{202e}txt.exe\u{200b}";
        let shown = visible(attack);
        assert!(!shown.chars().any(|c| c.is_control()));
        for tell in ["\\u{001b}", "\\u{009b}", "\\u{202e}", "\\u{200b}"] {
            assert!(shown.contains(tell), "{shown}");
        }
        let v = shown_value(&serde_json::json!(attack));
        assert!(!v.chars().any(|c| c.is_control() || c == '\u{202e}'));
        assert_eq!(visible("bob@example.com"), "bob@example.com");
    }

    #[test]
    fn long_values_are_cut_and_say_so() {
        let v = shown_value(&serde_json::json!("x".repeat(5000)));
        assert!(v.contains("more characters"), "{v}");
        assert!(v.chars().count() < 700);
    }
}
