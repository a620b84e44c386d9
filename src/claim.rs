//! How a claim is put to a person, in the words the terminal, the review queue and the MCP client's form
//! share (`claim_text`, `describe_claim`), and who decides (`decider`). Used by `approve`, `run` and
//! `mcp serve` and the review queue, so it sits above the runtime and below all of them (no function
//! pointer carries it up).

use std::path::Path;

use crate::runtime::run::{ClaimShown, RunReport};
use crate::text::visible;

/// Longest stretch of one value shown to an approver before it is cut (the rest is counted; `run --format
/// json` carries it whole).
const SHOWN_CHARS: usize = 600;

/// Who decides, as the trace records it: `--by`, else `$USER`; `None` when neither names anyone.
pub fn decider(by: Option<&str>) -> Option<String> {
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

/// A value for a terminal: JSON (so quotes, newlines and escape sequences an attacker wrote are escaped,
/// never interpreted), cut after [`SHOWN_CHARS`] characters when `cut` (whole beside an Approve button,
/// and for `approve --full`).
fn shown_value_cut(v: &serde_json::Value, cut: bool) -> String {
    let text = visible(&v.to_string());
    let n = text.chars().count();
    if n <= SHOWN_CHARS || !cut {
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
    claim_text_cut(c, shown, true).0
}

/// The claim with every value whole: what the review queue and the MCP client's form show beside their
/// Approve button, where a long value scrolls rather than being cut.
pub fn claim_text_full(c: &crate::trace::record::Call, shown: &ClaimShown) -> String {
    claim_text_cut(c, shown, false).0
}

/// Whether [`claim_text`] cuts a value of this claim: a person may not approve from that view
/// (`approve --full` shows it whole).
pub fn claim_is_cut(shown: &ClaimShown) -> bool {
    let long = |v: &serde_json::Value| visible(&v.to_string()).chars().count() > SHOWN_CHARS;
    shown.values.iter().any(|(_, v)| long(v))
        || shown
            .effect
            .iter()
            .flat_map(|e| e.parts.iter())
            .any(|p| long(&p.value))
}

/// The claim's text, each value cut after [`SHOWN_CHARS`] when `cut`, and whether any was.
fn claim_text_cut(c: &crate::trace::record::Call, shown: &ClaimShown, cut: bool) -> (String, bool) {
    let mut out = format!(
        "waiting for approval: line {}: `{}` (call #{})\n",
        c.line, c.tool, c.call_id
    );
    for a in &c.args {
        let value = shown.values.iter().find(|(n, _)| *n == a.name).map_or_else(
            || format!("<{}>", a.digest),
            |(_, v)| shown_value_cut(v, cut),
        );
        out.push_str(&format!("  {} = {value}\n", a.name));
        // Known, new, or like a known value: the same words on every surface, never coloured by data.
        for n in shown.novelty.iter().filter(|n| n.arg == a.name) {
            let place = match n.index {
                Some(i) => format!("element {}: ", i + 1),
                None => String::new(),
            };
            out.push_str(&format!("      {place}{}\n", n.line()));
        }
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
        out.push_str(&effect_text(effect, cut));
    }
    for (arg, who) in &shown.non_readers {
        let who: Vec<String> = who.iter().map(|n| visible(n)).collect();
        out.push_str(&format!(
            "  not allowed to read `{arg}`: {}\n",
            who.join(", ")
        ));
    }
    out.push_str(&format!("  control context: {}\n", c.pc));
    if !shown.conditions.is_empty() {
        let from: Vec<String> = shown
            .conditions
            .iter()
            .map(|(source, line)| match line {
                0 => visible(source),
                l => format!("{} (line {l})", visible(source)),
            })
            .collect();
        out.push_str(&format!(
            "      ! whether this call happens was decided by a condition or loop on data from {}: approving \
             lifts that for this call only\n",
            from.join(", ")
        ));
    }
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
    (out, cut && claim_is_cut(shown))
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
fn effect_text(effect: &crate::runtime::run::ShownEffect, cut: bool) -> String {
    let mut out = format!("  {}:\n", effect.what);
    for p in &effect.parts {
        out.push_str(&format!(
            "    {} = {}\n",
            p.name,
            shown_value_cut(&p.value, cut)
        ));
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
    if claim_is_cut(&s.shown) {
        out.push_str(&format!(
            "a value above is cut: see the claim whole before approving it: zamburak approve {} --full\n",
            snapshot.display()
        ));
    }
    out.push_str(&format!(
        "claim {code}\napprove: zamburak approve {0} --claim {code}\nreject:  zamburak reject {0}",
        snapshot.display()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::{shown_value_cut, visible};
    fn shown_value(v: &serde_json::Value) -> String {
        shown_value_cut(v, true)
    }

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
