//! `zamburak approve|reject SNAPSHOT`: records a human's decision on a suspended claim and continues the
//! run; and how a claim is put to a person on a terminal.

use super::output::{err, errln, out};
use std::path::Path;

use crate::exit;
use crate::runtime::run::{ClaimShown, RunReport, Status};
use crate::runtime::snapshot::{self, Decided};
use crate::text::visible;

/// Longest stretch of one value shown to an approver before it is cut (the rest is counted; `run --format
/// json` carries it whole).
const SHOWN_CHARS: usize = 600;

/// `zamburak approve|reject SNAPSHOT [--by NAME]`: records the decision in the trace and continues the run.
pub fn decide_command(path: &Path, approve: bool, by: Option<&str>) -> i32 {
    let by = by
        .map(str::to_string)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".into());
    // A resumed run may start MCP servers again.
    super::mcp::on_interrupt_kill_servers();
    let engine = match super::worker_engine() {
        Ok(engine) => engine,
        Err(e) => {
            errln!("error: {e}");
            errln!("nothing was run.");
            return exit::USAGE;
        }
    };
    let decided = match snapshot::decide(path, approve, &by, &engine, &mut |text| {
        out!("{}", crate::text::visible_lines(text))
    }) {
        Ok(d) => d,
        Err(e) => {
            errln!("error: {e}");
            errln!("nothing was run.");
            return exit::USAGE;
        }
    };
    let Decided {
        snapshot,
        report,
        suspended_again,
        snapshot_removed,
        head,
    } = decided;
    let filename = snapshot.plan.display().to_string();
    let mut code = report.exit_code;
    match &suspended_again {
        Some(Ok(p)) => errln!("{}", describe_claim(&report, p)),
        Some(Err(e)) => {
            errln!("error: {e}");
            code = exit::USAGE;
        }
        None => {}
    }
    let c = &snapshot.claim;
    // Where the call went, when the plan wrote it (a trusted `to` or `url` is stored in the clear).
    let target = c
        .args
        .iter()
        .find(|a| matches!(a.name.as_str(), "to" | "url" | "path"))
        .and_then(|a| a.preview.as_ref())
        .map(|v| match v {
            serde_json::Value::String(s) => format!(" to {s}"),
            other => format!(" to {other}"),
        })
        .unwrap_or_default();
    if approve {
        errln!(
            "approved by {by}: ran `{}` #{}{target} (line {})",
            c.tool,
            c.call_id,
            c.line
        );
    } else {
        errln!(
            "rejected by {by}: `{}` #{}{target} (line {}) did not run",
            c.tool,
            c.call_id,
            c.line
        );
    }
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
    let ended = match report.status {
        Status::Suspended => {
            "suspended again: another call waits for your decision (exit 4)".to_string()
        }
        Status::Completed => format!(
            "run completed, nothing pending (most restrictive decision met: {}, now decided)",
            report.outcome
        ),
        Status::Denied => "run stopped: a tool call was denied".to_string(),
        Status::Error => "run stopped by an error".to_string(),
        Status::Rejected => "run rejected".to_string(),
    };
    errln!("{ended}");
    if let Err(e) = snapshot_removed {
        errln!(
            "warning: the used snapshot {} was not removed: {e}",
            path.display()
        );
    }
    match head {
        Ok(head) => errln!("trace: {} (head {head})", snapshot.trace.display()),
        Err(e) => {
            errln!("error: the trace could not be completed: {e}");
            return exit::USAGE;
        }
    }
    code
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
        "waiting for approval: line {}: `{}` (call {})\n",
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
            let from = if a.label.sources.is_empty() {
                "tool data".to_string()
            } else {
                a.label.sources.join(", ")
            };
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
    out
}

/// The claim a suspended run waits on, and how to decide it.
pub fn describe_claim(report: &RunReport, snapshot: &Path) -> String {
    let Some(s) = &report.suspension else {
        return String::new();
    };
    let mut out = claim_text(&s.claim, &s.shown);
    out.push_str(&format!(
        "approve: zamburak approve {0}\nreject:  zamburak reject {0}",
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
