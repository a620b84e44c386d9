//! What the viewer shows, read from a trace that is untrusted input: every line is parsed on its own, what
//! parses is kept, what does not is listed as a problem. Nothing here trusts a string from the trace; the
//! templates escape everything, and previews survive only where the record's own label allows showing them.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::label::LabelView;
use crate::trace::reader::{Lines, MAX_LINE, RawLine};
use crate::trace::record::{Call, CallResult, Record};
use crate::trace::{TraceError, verify};

/// Most records shown; a larger trace is cut with a problem noted.
pub const MAX_RECORDS: usize = 100_000;

/// The header, as shown.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HeaderView {
    pub plan_sha256: String,
    pub policy_sha256: String,
    /// `flag`, `discovered` or `built-in`; empty for a format 1 trace, which did not record it.
    pub policy_origin: String,
    /// The policy file as the run named it, or `built-in default`.
    pub policy_path: String,
    /// The policy's text, by line (empty for a format 1 trace).
    pub policy_lines: Vec<String>,
    pub mode: String,
    pub started_at: String,
    pub zamburak: String,
}

/// Whether the hash chain checks.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ChainView {
    pub ok: bool,
    pub complete: bool,
    /// Intact, no end record, and not waiting on an approval: an interrupted run or a cut file.
    pub incomplete: bool,
    pub records: usize,
    pub head: Option<String>,
    pub broken_seq: Option<u64>,
    pub broken_line: Option<usize>,
    pub broken_why: Option<String>,
}

/// One argument of a call, as shown.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ArgView {
    pub name: String,
    /// The whole value's label.
    pub label: LabelView,
    /// A list's or tuple's elements, as the decision read them, when the trace records them (they are not
    /// all the whole).
    pub elements: Vec<LabelView>,
    pub digest: String,
    /// Only for a trusted, public, untagged value.
    pub preview: Option<String>,
    /// Owner mode (`view --reveal`) only: the value from the owner's store.
    pub revealed: Option<Revealed>,
}

/// A value shown to its owner (`view --reveal`). The templates escape `text`; `untrusted` values are shown
/// quoted and attributed, because someone else wrote them.
#[derive(Clone, Debug, Serialize)]
pub struct Revealed {
    pub text: String,
    /// Characters left out after [`REVEAL_CHARS`].
    pub cut: usize,
    pub untrusted: bool,
    /// Who wrote it: the label's sources (`read_inbox#1`), a call site's calls as one range.
    pub from: Vec<String>,
}

/// Most characters of one revealed value on a page.
pub const REVEAL_CHARS: usize = 20_000;

fn revealed(
    label: &LabelView,
    digest: &str,
    values: &BTreeMap<String, Value>,
    lines: &BTreeMap<u32, u32>,
) -> Option<Revealed> {
    let v = values.get(digest)?;
    let full = match v {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
    };
    let n = full.chars().count();
    Some(Revealed {
        text: full.chars().take(REVEAL_CHARS).collect(),
        cut: n.saturating_sub(REVEAL_CHARS),
        untrusted: label.integrity != "trusted",
        from: crate::label::compress_sources(&label.sources, &|id| lines.get(&id).copied()),
    })
}

/// Owner mode: fills in every argument and result whose digest the store holds. The store was checked
/// digest by digest when it was loaded ([`crate::trace::values::load`]).
pub fn reveal(view: &mut TraceView, values: &crate::trace::values::Loaded) {
    view.revealed = true;
    view.problems.extend(values.problems.iter().cloned());
    let lines = view_lines(view);
    let mut shown = 0usize;
    for c in &mut view.calls {
        for a in &mut c.args {
            a.revealed = revealed(&a.label, &a.digest, &values.values, &lines);
            shown += usize::from(a.revealed.is_some());
        }
        if let Some(r) = &mut c.result {
            r.revealed = revealed(&r.label, &r.digest, &values.values, &lines);
            shown += usize::from(r.revealed.is_some());
        }
    }
    if shown == 0 {
        view.problems
            .push("owner mode: the value store holds none of this trace's values".into());
    }
}

/// A tool call with its result, approval and upstream calls.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CallView {
    pub id: u32,
    pub line: u32,
    pub tool: String,
    /// One of `allow`, `deny`, `confirm`, `draft`, or `unknown` for anything else.
    pub decision: String,
    pub rule: String,
    pub reason: String,
    pub before_run: bool,
    pub args: Vec<ArgView>,
    pub pc: LabelView,
    pub result: Option<ResultView>,
    pub approval: Option<String>,
    /// Calls whose results flow into an argument (data) or into the control context (control).
    pub data_from: Vec<u32>,
    pub control_from: Vec<u32>,
    /// The same calls for the call page, `(first id, text)`: `#1 read_inbox`, or a call site's calls as one
    /// range `#2–#96 read_file (95 calls, line 6)` ([`named_runs`]).
    pub data_from_named: Vec<(u32, String)>,
    pub control_from_named: Vec<(u32, String)>,
    /// The argument the deciding rule is about (`args.to.require` → `to`), or `control` for a control rule.
    pub failing: Option<String>,
    /// The calls before and after this one in the trace, for paging through a run.
    pub prev: Option<u32>,
    pub next: Option<u32>,
    /// The lines of the recorded policy around the rule that decided.
    pub policy_excerpt: Excerpt,
    /// For a call denied before the run: the call sites lint predicted its arguments and control context
    /// derive from (`tool (line N, predicted)`); no call ran, so there are no call ids.
    pub predicted_from: Vec<String>,
    /// The record is at or after the point where the hash chain breaks: it may be forged, and it is not
    /// counted in the summary.
    pub unverified: bool,
}

/// Lines of a policy: `(line number, text, whether it states the deciding rule)`.
pub type Excerpt = Vec<(u64, String, bool)>;

/// Lines of policy shown on each side of the deciding rule.
const EXCERPT_CONTEXT: u64 = 3;

/// The excerpt of `policy` around the line stating `rule` for `tool` (empty when no line states it).
fn excerpt(policy: &str, lines: &[String], tool: &str, rule: &str) -> Excerpt {
    let Some(at) = crate::policy::rule_line(policy, tool, rule) else {
        return Vec::new();
    };
    let first = at.saturating_sub(EXCERPT_CONTEXT).max(1);
    (first..=at + EXCERPT_CONTEXT)
        .filter_map(|n| {
            let i = usize::try_from(n - 1).ok()?;
            lines.get(i).map(|t| (n, t.clone(), n == at))
        })
        .collect()
}

#[derive(Clone, Debug, Serialize)]
pub struct ResultView {
    pub label: LabelView,
    pub digest: String,
    pub preview: Option<String>,
    pub revealed: Option<Revealed>,
    /// The tags content scanners added, with the scanner and the rule that matched (never the text).
    pub scanned: Vec<crate::policy::scan::Finding>,
}

/// One `print` of the plan: its label and sources, its text only when trusted and public.
#[derive(Clone, Debug, Serialize)]
pub struct OutputView {
    /// The call made just before it (0: before any).
    pub after_call: u32,
    pub label: LabelView,
    /// Shown only for a trusted, public, untagged segment ([`safe_preview`]).
    pub text: Option<String>,
    pub unverified: bool,
    /// Its sources as read ([`crate::label::compress_sources`]): a loop's calls as one range.
    pub from: Vec<String>,
}

/// A verifier use (a node of the graph too).
#[derive(Clone, Debug, Serialize)]
pub struct VerifierView {
    pub id: u32,
    pub line: u32,
    pub verifier: String,
    pub ok: bool,
    pub label: LabelView,
    pub data_from: Vec<u32>,
}

/// One plan line with the decisions of the calls on it.
#[derive(Clone, Debug, Serialize)]
pub struct PlanLine {
    pub no: usize,
    pub text: String,
    /// The calls made from this line, one chip per decision: `(decision, how many, first call id)`, most
    /// severe first. A loop's 500 calls are one chip, not 500 links.
    pub chips: Vec<(String, usize, u32)>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Counts {
    pub allow: usize,
    pub deny: usize,
    pub confirm: usize,
    pub draft: usize,
    /// Calls recorded after the chain breaks: shown, marked, never counted above.
    pub unverified: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct EndView {
    pub status: String,
    pub outcome: String,
    pub exit_code: i32,
    /// The end record is after the chain breaks.
    pub unverified: bool,
}

/// The claim a suspended run waits on, and how to decide it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PendingView {
    pub call_id: u32,
    /// The code `approve --claim` must name.
    pub code: String,
    /// The snapshot `run` saved beside the trace.
    pub snapshot: String,
    pub expires_at: String,
}

/// Everything the pages show.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TraceView {
    pub file: String,
    pub header: Option<HeaderView>,
    pub chain: ChainView,
    pub problems: Vec<String>,
    pub counts: Counts,
    pub end: Option<EndView>,
    pub suspended: bool,
    pub calls: Vec<CallView>,
    pub verifiers: Vec<VerifierView>,
    /// What the plan printed, in order.
    pub outputs: Vec<OutputView>,
    pub plan: Vec<PlanLine>,
    pub errors: Vec<String>,
    /// Owner mode (`view --reveal`): private values are on the pages.
    pub revealed: bool,
    /// The highest call or verifier id: calls and verifier uses share one numbering.
    pub last_id: u32,
    /// The claim the run waits on, when its last record is a `suspend` and the chain checks.
    pub pending: Option<PendingView>,
    /// An export for a named reader (view/reader.rs): who it is for, and what was left out.
    pub export_for: Option<ExportFor>,
}

/// A preview may be shown only for a trusted, public, untagged value: a forged record that carries one
/// for any other label does not get it shown.
pub fn safe_preview(label: &LabelView, preview: &Option<Value>) -> Option<String> {
    let shown = label.integrity == "trusted" && label.readers.is_none() && label.tags.is_empty();
    match preview {
        Some(v) if shown => Some(match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
        _ => None,
    }
}

/// The call sites a label of a call denied before the run names (`tool (line N, predicted)`).
pub fn predicted_sources(label: &LabelView) -> impl Iterator<Item = &String> {
    label.sources.iter().filter(|s| s.ends_with(", predicted)"))
}

/// The call ids a label's sources name (`tool#id`).
pub fn source_ids(label: &LabelView) -> Vec<u32> {
    let mut ids: Vec<u32> = label
        .sources
        .iter()
        .filter_map(|s| s.rsplit_once('#').and_then(|(_, id)| id.parse().ok()))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn known_decision(d: &str) -> String {
    match d {
        "allow" | "deny" | "confirm" | "draft" => d.to_string(),
        _ => "unknown".to_string(),
    }
}

/// Reads a trace tolerantly. `Err` only when the file cannot be opened, or is not a trace at all (nothing of
/// it would be worth a page).
pub fn load(path: &Path) -> Result<TraceView, TraceError> {
    let file = File::open(path).map_err(|source| TraceError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let mut view = TraceView {
        file: path.display().to_string(),
        ..TraceView::default()
    };
    match verify::verify(path) {
        Ok(r) if r.not_a_trace => {
            return Err(TraceError::NotATrace {
                path: path.to_path_buf(),
                why: r.broken.map(|b| b.why).unwrap_or_default(),
            });
        }
        Ok(r) => {
            view.chain = ChainView {
                ok: r.broken.is_none(),
                complete: r.complete,
                incomplete: r.is_incomplete(),
                records: r.records,
                head: r.head.clone(),
                broken_seq: r.broken.as_ref().map(|b| b.seq),
                broken_line: r.broken.as_ref().map(|b| b.line),
                broken_why: r.broken.as_ref().map(|b| b.why.clone()),
            };
        }
        Err(e) => view
            .problems
            .push(format!("the chain could not be checked: {e}")),
    }

    let mut lines = Lines::new(BufReader::new(file), MAX_LINE);
    let mut records = Vec::new();
    let mut n = 0usize;
    loop {
        let raw = match lines.next_line() {
            Ok(Some(raw)) => raw,
            Ok(None) => break,
            Err(e) => {
                view.problems.push(format!("reading stopped: {e}"));
                break;
            }
        };
        n += 1;
        let bytes = match raw {
            RawLine::Complete(b) => b,
            RawLine::Unterminated(b) => {
                view.problems.push(format!("line {n} is cut off"));
                b
            }
            RawLine::TooLong => {
                view.problems.push(format!(
                    "line {n} is longer than {MAX_LINE} bytes; the rest is not shown"
                ));
                break;
            }
        };
        if records.len() >= MAX_RECORDS {
            view.problems
                .push(format!("only the first {MAX_RECORDS} records are shown"));
            break;
        }
        // A record on or after the line where the chain breaks may be forged (the line number, not the
        // record's own `seq`, which a forger writes).
        let unverified = view.chain.broken_line.is_some_and(|b| n >= b);
        let parsed: Result<Record, String> = serde_json::from_slice::<Value>(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|v| {
                let Value::Object(mut o) = v else {
                    return Err("not a JSON object".into());
                };
                for k in ["seq", "prev", "hash"] {
                    o.shift_remove(k);
                }
                serde_json::from_value(Value::Object(o)).map_err(|e| e.to_string())
            });
        match parsed {
            Ok(r) => records.push((r, unverified)),
            Err(e) => view.problems.push(format!("line {n} is not a record: {e}")),
        }
    }
    build(&mut view, records);
    if !view.chain.ok || view.chain.complete {
        view.pending = None;
    }
    if let Some(p) = &mut view.pending {
        p.snapshot = crate::runtime::snapshot::snapshot_path(path)
            .display()
            .to_string();
    }
    Ok(view)
}

/// The plan line of every call and verifier use of `view`.
pub fn view_lines(view: &TraceView) -> BTreeMap<u32, u32> {
    view.calls
        .iter()
        .map(|c| (c.id, c.line))
        .chain(view.verifiers.iter().map(|v| (v.id, v.line)))
        .collect()
}

/// Calls for a list of links: `(id, "#id tool")`, and the calls of one call site (tool and line) as one
/// range `(first id, "#2–#96 read_file (95 calls, line 6)")` once there are
/// [`crate::label::SOURCE_RUN`] of them, in order of each site's first call.
///
/// ```
/// use std::collections::BTreeMap;
/// use zamburak::view::model::named_runs;
/// let tools: BTreeMap<u32, String> = (1..=5).map(|i| (i, if i == 1 { "read_inbox" } else { "read_file" }.into())).collect();
/// let lines: BTreeMap<u32, u32> = (1..=5).map(|i| (i, if i == 1 { 2 } else { 6 })).collect();
/// assert_eq!(named_runs(&[1, 2, 3, 4, 5], &tools, &lines),
///     [(1, "#1 read_inbox".to_string()), (2, "#2–#5 read_file (4 calls, line 6)".to_string())]);
/// ```
pub fn named_runs(
    ids: &[u32],
    tools: &BTreeMap<u32, String>,
    lines: &BTreeMap<u32, u32>,
) -> Vec<(u32, String)> {
    // Per site (tool and line), in order of first appearance: its calls.
    type Site = ((String, Option<u32>), Vec<u32>);
    let mut sites: Vec<Site> = Vec::new();
    for id in ids {
        let key = (
            tools.get(id).cloned().unwrap_or_else(|| "?".into()),
            lines.get(id).copied(),
        );
        match sites.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(*id),
            None => sites.push((key, vec![*id])),
        }
    }
    let mut out = Vec::new();
    for ((tool, line), list) in sites {
        match (list.iter().min(), list.iter().max()) {
            (Some(lo), Some(hi)) if list.len() >= crate::label::SOURCE_RUN => {
                let line = line.map(|l| format!(", line {l}")).unwrap_or_default();
                out.push((
                    *lo,
                    format!("#{lo}–#{hi} {tool} ({} calls{line})", list.len()),
                ));
            }
            _ => out.extend(list.iter().map(|id| (*id, format!("#{id} {tool}")))),
        }
    }
    out
}

/// Fills `view` from the records, in order (each with whether it is after the chain's break).
pub(super) fn build(view: &mut TraceView, records: Vec<(Record, bool)>) {
    let mut results: BTreeMap<u32, CallResult> = BTreeMap::new();
    let mut approvals: BTreeMap<u32, String> = BTreeMap::new();
    let mut calls: Vec<(Call, bool)> = Vec::new();
    let mut plan_text = String::new();
    let mut policy_text = String::new();
    for (r, unverified) in records {
        match r {
            Record::Header(h) => {
                plan_text = h.plan.clone();
                let (policy_origin, policy_path) = match &h.policy {
                    Some(p) => {
                        policy_text = p.text.clone();
                        (p.origin.clone(), p.path.clone())
                    }
                    None => (String::new(), String::new()),
                };
                view.header = Some(HeaderView {
                    plan_sha256: h.plan_sha256,
                    policy_sha256: h.policy_sha256,
                    policy_origin,
                    policy_path,
                    policy_lines: policy_text.lines().map(str::to_string).collect(),
                    mode: h.mode,
                    started_at: h.started_at,
                    zamburak: h.zamburak,
                });
            }
            Record::Call(c) => calls.push((c, unverified)),
            Record::Result(r) => {
                results.insert(r.call_id, r);
            }
            Record::Verifier(v) => view.verifiers.push(VerifierView {
                id: v.call_id,
                line: v.line,
                verifier: v.verifier,
                ok: v.ok,
                data_from: source_ids(&v.label)
                    .into_iter()
                    .filter(|s| *s < v.call_id)
                    .collect(),
                label: v.label,
            }),
            Record::Output(o) => view.outputs.push(OutputView {
                after_call: o.after_call,
                text: safe_preview(&o.label, &o.preview),
                label: o.label,
                unverified,
                from: Vec::new(),
            }),
            Record::Approval(a) => {
                let mark = if unverified { " (NOT VERIFIED)" } else { "" };
                approvals.insert(
                    a.call_id,
                    format!("{} by {} at {}{mark}", a.decision, a.by, a.at),
                );
            }
            Record::Suspend(s) => {
                view.suspended = true;
                view.pending = (!unverified).then(|| PendingView {
                    call_id: s.call_id,
                    code: crate::trace::record::claim_code(&s.claim_digest),
                    snapshot: String::new(),
                    expires_at: s.expires_at,
                });
            }
            Record::Error(e) => view.errors.push(format!(
                "{}{}: {}",
                e.exc_type,
                e.line.map(|l| format!(" at line {l}")).unwrap_or_default(),
                e.message
            )),
            Record::End(e) => {
                view.suspended = false;
                view.pending = None;
                view.end = Some(EndView {
                    status: e.status,
                    outcome: e.outcome,
                    exit_code: e.exit_code,
                    unverified,
                });
            }
        }
    }
    // Parsing the policy once per distinct (tool, rule), not once per call.
    let policy_lines: Vec<String> = policy_text.lines().map(str::to_string).collect();
    let mut excerpts: BTreeMap<(String, String), Excerpt> = BTreeMap::new();
    for (c, unverified) in calls {
        let decision = known_decision(&c.decision);
        match decision.as_str() {
            _ if unverified => view.counts.unverified += 1,
            "allow" => view.counts.allow += 1,
            "deny" => view.counts.deny += 1,
            "confirm" => view.counts.confirm += 1,
            "draft" => view.counts.draft += 1,
            _ => {}
        }
        let mut predicted_from: Vec<String> = Vec::new();
        if c.before_run {
            for s in c
                .args
                .iter()
                .flat_map(|a| predicted_sources(&a.label))
                .chain(predicted_sources(&c.pc))
            {
                if !predicted_from.contains(s) {
                    predicted_from.push(s.clone());
                }
            }
        }
        let mut data_from: Vec<u32> = c
            .args
            .iter()
            .flat_map(|a| source_ids(&a.label))
            .filter(|s| *s < c.call_id)
            .collect();
        data_from.sort_unstable();
        data_from.dedup();
        let control_from = source_ids(&c.pc)
            .into_iter()
            .filter(|s| *s < c.call_id)
            .collect();
        let result = results.remove(&c.call_id).map(|r| ResultView {
            preview: safe_preview(&r.label, &r.preview),
            label: r.label,
            digest: r.digest,
            revealed: None,
            scanned: r.scanned,
        });
        let policy_excerpt = excerpts
            .entry((c.tool.clone(), c.rule.clone()))
            .or_insert_with(|| excerpt(&policy_text, &policy_lines, &c.tool, &c.rule))
            .clone();
        let failing = match c.rule.split('.').collect::<Vec<_>>().as_slice() {
            ["args", name, ..] if decision != "allow" => Some((*name).to_string()),
            ["control", ..] if decision != "allow" => Some("control".to_string()),
            _ => None,
        };
        view.calls.push(CallView {
            id: c.call_id,
            line: c.line,
            decision,
            rule: c.rule,
            reason: c.reason,
            before_run: c.before_run,
            args: c
                .args
                .into_iter()
                .map(|a| ArgView {
                    preview: safe_preview(&a.label, &a.preview),
                    elements: a.elements.unwrap_or_default(),
                    name: a.name,
                    label: a.label,
                    digest: a.digest,
                    revealed: None,
                })
                .collect(),
            pc: c.pc,
            result,
            approval: approvals.remove(&c.call_id),
            data_from,
            control_from,
            policy_excerpt,
            predicted_from,
            unverified,
            failing,
            tool: c.tool,
            ..CallView::default()
        });
    }
    // Names of the calls each call reads from, and the neighbours in the trace.
    let tools: BTreeMap<u32, String> = view.calls.iter().map(|c| (c.id, c.tool.clone())).collect();
    let lines = view_lines(view);
    let named = |ids: &[u32]| named_runs(ids, &tools, &lines);
    let ids: Vec<u32> = view.calls.iter().map(|c| c.id).collect();
    for (i, c) in view.calls.iter_mut().enumerate() {
        c.data_from_named = named(&c.data_from);
        c.control_from_named = named(&c.control_from);
        c.prev = i.checked_sub(1).and_then(|j| ids.get(j)).copied();
        c.next = ids.get(i + 1).copied();
    }
    view.last_id = lines.keys().next_back().copied().unwrap_or(0);
    for o in &mut view.outputs {
        o.from = crate::label::compress_sources(&o.label.sources, &|id| lines.get(&id).copied());
    }
    let mut chips: BTreeMap<usize, Vec<(String, usize, u32)>> = BTreeMap::new();
    for c in &view.calls {
        let line = chips.entry(c.line as usize).or_default();
        match line.iter_mut().find(|(d, ..)| *d == c.decision) {
            Some((_, n, _)) => *n += 1,
            None => line.push((c.decision.clone(), 1, c.id)),
        }
    }
    let rank = |d: &str| {
        ["deny", "confirm", "draft", "allow"]
            .iter()
            .position(|x| *x == d)
    };
    view.plan = plan_text
        .lines()
        .enumerate()
        .map(|(i, text)| {
            let mut line_chips = chips.remove(&(i + 1)).unwrap_or_default();
            line_chips.sort_by_key(|(d, ..)| rank(d).unwrap_or(usize::MAX));
            PlanLine {
                no: i + 1,
                text: text.to_string(),
                chips: line_chips,
            }
        })
        .collect();
}

/// What an export for a reader says about itself, on every page.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ExportFor {
    /// The reader, as named (`llm:planner`, `bob@example.com`).
    pub reader: String,
    /// Records after some point were left out: the rest of the run is for the person.
    pub cut: bool,
    /// The plan's text (and its digest) were left out: the planner that wrote it had read what the reader
    /// may not.
    pub plan_withheld: bool,
}
