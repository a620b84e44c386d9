//! The summary of a long run: its calls grouped by call site (plan line and tool), failures first, and one
//! headline sentence for the most severe decision. A 1,000-call run has a handful of call sites; this is
//! what a person reads first (the iterations are one click further).
//!
//! The renderer computes them for the pages. Everything here is derived from the calls [`super::model`]
//! read, and only from records before a broken chain: a forged record after the break is listed, marked,
//! but decides no headline and no count.

use std::collections::BTreeMap;

use serde::Serialize;

use super::model::CallView;

/// The calls made at one plan line to one tool.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SiteView {
    pub line: u32,
    pub tool: String,
    /// The most severe decision among its verified calls (`deny` > `confirm` > `draft` > `allow`).
    pub worst: String,
    pub allow: usize,
    pub deny: usize,
    pub confirm: usize,
    pub draft: usize,
    /// Calls after a broken chain: shown, not counted.
    pub unverified: usize,
    /// The rules that decided its calls other than `allow`, each once, in order of appearance.
    pub rules: Vec<String>,
    /// Its calls, in order: `(id, decision, after a broken chain)`.
    pub calls: Vec<(u32, String, bool)>,
}

/// Severity order of a decision, most severe highest.
fn severity(decision: &str) -> u8 {
    match decision {
        "deny" => 4,
        "confirm" => 3,
        "draft" => 2,
        "allow" => 1,
        _ => 0,
    }
}

/// Groups calls by (line, tool), failures first: by worst decision, then by line.
///
/// ```
/// use zamburak::view::model::CallView;
/// use zamburak::view::sites::group;
/// let call = |id, line, tool: &str, decision: &str| CallView {
///     id, line, tool: tool.into(), decision: decision.into(), ..CallView::default() };
/// let sites = group(&[call(1, 5, "read", "allow"), call(2, 9, "send", "draft"), call(3, 9, "send", "draft")]);
/// assert_eq!((sites[0].line, sites[0].draft, sites[0].calls.len()), (9, 2, 2));
/// assert_eq!((sites[1].line, sites[1].allow), (5, 1));
/// ```
pub fn group(calls: &[CallView]) -> Vec<SiteView> {
    let mut sites: Vec<SiteView> = Vec::new();
    let mut index: std::collections::BTreeMap<(u32, &str), usize> = Default::default();
    for c in calls {
        let at = *index.entry((c.line, c.tool.as_str())).or_insert_with(|| {
            sites.push(SiteView {
                line: c.line,
                tool: c.tool.clone(),
                worst: "allow".into(),
                ..SiteView::default()
            });
            sites.len() - 1
        });
        let site = &mut sites[at];
        site.calls.push((c.id, c.decision.clone(), c.unverified));
        if c.unverified {
            site.unverified += 1;
            continue;
        }
        match c.decision.as_str() {
            "allow" => site.allow += 1,
            "deny" => site.deny += 1,
            "confirm" => site.confirm += 1,
            "draft" => site.draft += 1,
            _ => {}
        }
        if severity(&c.decision) > severity(&site.worst) {
            site.worst.clone_from(&c.decision);
        }
        if c.decision != "allow" && !site.rules.contains(&c.rule) {
            site.rules.push(c.rule.clone());
        }
    }
    sites.sort_by(|a, b| {
        severity(&b.worst)
            .cmp(&severity(&a.worst))
            .then(a.line.cmp(&b.line))
            .then(a.tool.cmp(&b.tool))
    });
    sites
}

/// One sentence for the most severe decision of the run: what happened, where, and where the data that
/// decided it came from. `None` for a run without calls.
///
/// ```
/// use zamburak::label::LabelView;
/// use zamburak::view::model::{ArgView, CallView};
/// use zamburak::view::sites::headline;
/// let url = ArgView { name: "url".into(), label: LabelView { integrity: "untrusted".into(),
///     tags: vec!["PRIVATE".into()], sources: vec!["search_email#1".into(), "read_file#2".into()],
///     ..LabelView::default() }, ..ArgView::default() };
/// let call = CallView { id: 3, line: 7, tool: "fetch_url".into(), decision: "deny".into(),
///     rule: "args.url.require".into(), args: vec![url], ..CallView::default() };
/// assert_eq!(headline(&[call]).unwrap(),
///     "Denied `fetch_url` at line 7: `url` built from search_email#1 and read_file#2 (untrusted, tags PRIVATE)");
/// ```
pub fn headline(calls: &[CallView]) -> Option<String> {
    let counted = calls.iter().filter(|c| !c.unverified);
    // The first call with the most severe decision: the one that ended or shaped the run.
    let worst = counted
        .clone()
        .fold(None::<&CallView>, |best, c| match best {
            Some(b) if severity(&b.decision) >= severity(&c.decision) => Some(b),
            _ => Some(c),
        })?;
    let verb = match worst.decision.as_str() {
        "deny" => "Denied",
        "confirm" => "Held for confirmation:",
        "draft" => "Drafted",
        "allow" => {
            let n = counted.count();
            return Some(if n == 1 {
                "The one call was allowed.".to_string()
            } else {
                format!("All {n} calls were allowed.")
            });
        }
        _ => "Decided",
    };
    let lines: BTreeMap<u32, u32> = calls.iter().map(|c| (c.id, c.line)).collect();
    let mut sentence = format!("{verb} `{}` at line {}", worst.tool, worst.line);
    let parts: Vec<&str> = worst.rule.split('.').collect();
    let cause = match parts.as_slice() {
        ["args", name, ..] => worst.args.iter().find(|a| a.name == *name).map(|a| {
            let label = &a.label;
            let mut what = label.integrity.clone();
            if !label.tags.is_empty() {
                what.push_str(&format!(", tags {}", label.tags.join("+")));
            }
            if label.readers.is_some() {
                what.push_str(", not public");
            }
            format!(
                "`{name}` built from {} ({what})",
                sources(&label.sources, worst.before_run, &lines)
            )
        }),
        ["control", ..] => Some(format!(
            "whether it ran depended on {}",
            sources(&worst.pc.sources, worst.before_run, &lines)
        )),
        _ => None,
    };
    match cause {
        Some(c) => sentence.push_str(&format!(": {c}")),
        None if !worst.reason.is_empty() => sentence.push_str(&format!(": {}", worst.reason)),
        None => {}
    }
    Some(sentence)
}

/// `a and b`, `a, b and c` (a call denied before the run names the predicted call sites, `tool (line
/// N)`), or "values written in the plan" when a label names no source. A call site's calls are one range
/// (`read_file#2–#96 (95 calls, line 6)`).
fn sources(names: &[String], before_run: bool, lines: &BTreeMap<u32, u32>) -> String {
    let names: Vec<String> = names
        .iter()
        .filter(|s| !before_run || s.ends_with(", predicted)"))
        .map(|s| s.replace(", predicted)", ")"))
        .collect();
    let names = crate::label::compress_sources(&names, &|id| lines.get(&id).copied());
    match names.as_slice() {
        [] => "values written in the plan".to_string(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
