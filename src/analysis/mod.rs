//! `zamburak lint`: predicts, before anything runs, the labels that reach every tool call and what the
//! policy will decide there.
//!
//! [`lint`] parses and checks the plan with the same front end `run` uses ([`crate::plan::check`] and the
//! lowering's own checks), then runs an abstract interpreter ([`interp`]) whose values carry two labels
//! ([`domain`]): `may`, the worst case over every path, and `must`, what holds on every path that reaches
//! the point. At each call site the policy's own [`decide`] is asked twice:
//!
//! * with the `must` labels: if that is `deny`, the call is denied whenever it is reached, and the plan can
//!   never pass (error `Z201`; `run` refuses it before any tool runs);
//! * with the `may` labels: if that is not `allow`, the call may be denied, held for confirmation or drafted
//!   at run time (warnings `Z202`–`Z204`). If it is `allow`, the runtime allows the call on every input.
//!
//! ```
//! use zamburak::analysis::lint;
//! use zamburak::lower::Mode;
//! use zamburak::policy::Policy;
//! let policy = Policy::bundled_default().unwrap();
//! let plan = "e = get_email(id='1')\nfetch_url(url=e['body'])\n";
//! let report = lint(plan, &policy, Mode::Strict);
//! assert_eq!(report.diagnostics[0].code, "Z201");
//! assert!(report.has_errors());
//! let clean = lint("send_email(to='me@example.com', subject='hi', body='done')\n", &policy, Mode::Strict);
//! assert!(clean.diagnostics.is_empty());
//! ```

mod arguments;
pub mod domain;
mod interp;
pub mod output;

use std::collections::BTreeMap;

use crate::label::{KindSet, Label, LabelView};
use crate::lower::{self, Mode};
use crate::plan::render::LineIndex;
use crate::plan::{self, Audience, Code, Diagnostic, Severity};
use crate::planner::ContextLabel;
use crate::policy::model::{ReadersSpec, Requirement};
use crate::policy::{
    ArgClaim, Check, Claim, Decision, Outcome, Policy, Rule, Texts, decide, violations,
};

use interp::{ArgAcc, ControlKind, Interp, SiteAcc};

/// A recipient the analysis cannot name: a reader of public data only.
const UNKNOWN_RECIPIENT: &str = "\u{0}a recipient chosen at run time";

/// What the lint predicts for one tool call site.
#[derive(Clone, Debug)]
pub struct CallPrediction {
    pub tool: String,
    /// Byte span of the call in the plan.
    pub start: usize,
    pub end: usize,
    pub line: u32,
    pub column: u32,
    /// The decision with the worst-case labels: what the call may get.
    pub may: Decision,
    /// The decision with the labels that hold on every path: what the call certainly gets when reached.
    pub must: Decision,
    /// Every requirement the worst-case labels break ([`crate::policy::violations`]), `may` among them.
    pub may_all: Vec<Decision>,
    /// Every requirement the certain labels break, `must` among them.
    pub must_all: Vec<Decision>,
    pub args: Vec<ArgPrediction>,
    pub pc_may: LabelView,
    pub pc_must: LabelView,
    /// The calls the control context may derive from.
    pub pc_sources: Vec<SourceRef>,
}

/// The predicted labels of one argument.
#[derive(Clone, Debug)]
pub struct ArgPrediction {
    pub name: String,
    /// Worst case: the argument with everything it holds.
    pub may: LabelView,
    /// What the argument certainly carries.
    pub must: LabelView,
    /// The calls the argument may derive from (`tool()` at line N), for a record of a call denied before
    /// the run, where no runtime source exists.
    pub sources: Vec<SourceRef>,
}

/// Everything `lint` found.
#[derive(Clone, Debug)]
pub struct LintReport {
    pub source: String,
    /// Sorted by position.
    pub diagnostics: Vec<Diagnostic>,
    /// One entry per tool call site the analysis reached, in source order.
    pub calls: Vec<CallPrediction>,
    /// Line starts of `source`, for positions.
    pub lines: LineIndex,
}

/// A call whose result a label derives from (also a diagnostic's secondary span).
pub use crate::plan::SourceRef;

impl LintReport {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity() == Severity::Error)
    }

    /// Call sites that are denied whenever reached.
    pub fn certain_denials(&self) -> impl Iterator<Item = &CallPrediction> {
        self.calls
            .iter()
            .filter(|c| c.must.outcome == Outcome::Deny)
    }
}

/// Checks and analyses a plan under a policy in a mode. Never panics on hostile input: a plan the front end
/// refuses gives its diagnostics and no predictions.
pub fn lint(source: &str, policy: &Policy, mode: Mode) -> LintReport {
    lint_in(source, policy, mode, &ContextLabel::trusted())
}

/// [`lint`] for a plan written by a planner whose context is `context` (docs/semantics.md, "The planner
/// context label"): its literals carry that label, as they do when the plan runs in that context.
pub fn lint_in(source: &str, policy: &Policy, mode: Mode, context: &ContextLabel) -> LintReport {
    lint_for(source, policy, mode, context, Audience::Person)
}

/// [`lint_in`] with the helps written for `audience`: for [`Audience::Planner`] (`lint_plan` of
/// `zamburak mcp serve`) they propose changes to the plan only, never to the policy or the mode.
pub fn lint_for(
    source: &str,
    policy: &Policy,
    mode: Mode,
    context: &ContextLabel,
    audience: Audience,
) -> LintReport {
    let sigs = policy.signatures();
    let mut report = LintReport {
        source: source.to_string(),
        diagnostics: Vec::new(),
        calls: Vec::new(),
        lines: LineIndex::new(source),
    };
    let parsed = match plan::check(source, &sigs) {
        Ok(p) => p,
        Err(diags) => {
            report.diagnostics = diags;
            return report;
        }
    };
    if let Err(diags) = lower::check(&parsed.module, source, &sigs, mode) {
        report.diagnostics = diags;
        return report;
    }
    let mut report = analyze_for(&parsed, policy, mode, context, audience);
    if plan::is_empty(source) {
        report.diagnostics.push(
            Diagnostic::new(
                Code::EmptyPlan,
                0,
                0,
                "the plan is empty: it calls no tool and prints nothing",
            )
            .with_hint("write the plan's statements in this file, or check the path"),
        );
    }
    report
}

/// The analysis proper, on a plan that passed [`plan::check`] and the lowering's checks (what `run` calls
/// before anything runs).
pub fn analyze(parsed: &plan::ParsedPlan, policy: &Policy, mode: Mode) -> LintReport {
    analyze_in(parsed, policy, mode, &ContextLabel::trusted())
}

/// [`analyze`] with the literals labelled by the planner context `context` (what `run` does in it).
pub fn analyze_in(
    parsed: &plan::ParsedPlan,
    policy: &Policy,
    mode: Mode,
    context: &ContextLabel,
) -> LintReport {
    analyze_for(parsed, policy, mode, context, Audience::Person)
}

/// [`analyze_in`] with the helps written for `audience` ([`lint_for`]).
pub fn analyze_for(
    parsed: &plan::ParsedPlan,
    policy: &Policy,
    mode: Mode,
    context: &ContextLabel,
    audience: Audience,
) -> LintReport {
    let source = parsed.source.as_str();
    let mut report = LintReport {
        source: source.to_string(),
        diagnostics: Vec::new(),
        calls: Vec::new(),
        lines: LineIndex::new(source),
    };
    let mut space = match policy.label_space() {
        Ok(s) => s,
        Err(e) => {
            report.diagnostics.push(
                Diagnostic::new(
                    Code::PolicyLabels,
                    0,
                    0,
                    format!("the policy's labels cannot be built: {e}"),
                )
                .with_hint(match audience {
                    Audience::Person => "fix the policy (`zamburak policy check`)",
                    Audience::Planner => {
                        "no plan can be checked here, whatever it says: tell the user that lint cannot run"
                    }
                }),
            );
            return report;
        }
    };
    let lit = context.label_in(&mut space);
    let mut interp = Interp::new(policy, space, mode == Mode::Strict).with_literal(lit);
    interp.run(&parsed.module.body);

    let mut found: Vec<Diagnostic> = Vec::new();
    for site in interp.sites.values().filter(|s| s.visits > 0) {
        let prediction = predict(policy, &interp, site, source, &report.lines, audience);
        if let Some(d) = verdict(
            policy,
            &interp,
            site,
            &prediction,
            source,
            &report.lines,
            audience,
        ) {
            found.push(d);
        }
        report.calls.push(prediction);
    }
    found.extend(suppressible(
        policy,
        &interp,
        &report.calls,
        source,
        &report.lines,
    ));
    if let Some((at, why)) = interp.imprecise.first() {
        found.push(
            Diagnostic::new(
                Code::AnalysisIncomplete,
                *at,
                *at,
                format!("the analysis lost precision here: {why}; predictions after this point assume the worst"),
            )
            .with_hint("simplify the plan: fewer nested plan-function calls, smaller loops"),
        );
    }
    found.extend(arguments::check(&parsed.module, policy, audience));
    found.sort_by_key(|d| (d.start, d.end, d.code));
    report.diagnostics = found;
    report
}

/// Z206, the termination channel (docs/semantics.md, "What is protected"): every call that changes the
/// world and comes after a point where data may stop the run, since the data then decides whether it
/// happens. A point is a verifier in the error form whose value the plan did not write, or a call whose
/// decision may stop the run (`deny` or `confirm`) on some inputs and not on others. Order is the plan's
/// text (a loop that stops in a later iteration is not followed round); a run-time error on data (an index
/// past the end) stops a run too, and is not flagged point by point (docs/lint.md, Z206).
fn suppressible(
    policy: &Policy,
    interp: &Interp<'_>,
    calls: &[CallPrediction],
    source: &str,
    lines: &LineIndex,
) -> Vec<Diagnostic> {
    let stops_here = |p: &CallPrediction| {
        matches!(p.may.outcome, Outcome::Deny | Outcome::Confirm)
            && matches!(p.must.outcome, Outcome::Allow | Outcome::Draft)
    };
    /// What a call uses of a stop point: the verified value of a verifier, the result of a call.
    enum Uses {
        Kind(Option<u8>),
        Source(Option<u32>),
    }
    let mut stops: Vec<(usize, String, Uses)> = interp
        .stops
        .iter()
        .map(|(at, (name, kind))| {
            (
                *at,
                format!("verifier `{name}` may refuse a value from data"),
                Uses::Kind(*kind),
            )
        })
        .collect();
    stops.extend(calls.iter().filter(|p| stops_here(p)).map(|p| {
        (
            p.start,
            format!("data may make `{}` wait for a person or be denied", p.tool),
            Uses::Source(interp.source_at(p.start)),
        )
    }));
    stops.sort_by_key(|s| s.0);
    let mut out = Vec::new();
    for p in calls {
        let effect = policy.tool(&p.tool).map(|t| t.effect);
        if matches!(
            effect,
            None | Some(crate::policy::Effect::Read | crate::policy::Effect::Pure)
        ) {
            continue;
        }
        // A call denied whenever it is reached (Z201) never runs: nothing to suppress.
        if p.must.outcome == Outcome::Deny {
            continue;
        }
        let Some(site) = interp.sites.get(&p.start) else {
            continue;
        };
        // A call that uses what the stop point checks or returns could not happen without it: stopping
        // there is the plan's intent for it (verify, then use), not a channel to it.
        let uses = |u: &Uses| {
            site.args.iter().any(|a| {
                let l = deep_may(a);
                match u {
                    // `may` keeps a kind only where every path verified the value.
                    Uses::Kind(Some(k)) => a.val.may.verified.contains(*k),
                    Uses::Kind(None) => false,
                    Uses::Source(Some(id)) => l.sources.contains(id),
                    Uses::Source(None) => false,
                }
            }) || matches!(u, Uses::Source(Some(id)) if site.pc_may.sources.contains(id))
        };
        let Some((at, what, used)) = stops.iter().find(|(at, _, u)| *at < p.start && !uses(u))
        else {
            continue;
        };
        let verifier = matches!(used, Uses::Kind(_));
        let (line, _) = lines.line_col(source, *at);
        let skip = if verifier {
            "; to skip a value instead of stopping, call the verifier with `or_none=True`"
        } else {
            ""
        };
        out.push(
            Diagnostic::new(
                Code::DataMayStopFirst,
                p.start,
                p.end,
                format!(
                    "`{}` runs only if the run is not stopped at line {line}, where {what}: the data decides whether this call happens",
                    p.tool
                ),
            )
            .with_hint(format!(
                "if the call must happen whatever the data, make it before line {line}{skip}"
            )),
        );
    }
    out
}

/// An argument's claim label, its elements (for a list reading) and its recipient texts.
type ClaimParts = (Label, Option<Vec<Label>>, Texts);

fn deep_may(a: &ArgAcc) -> Label {
    let mut l = a.val.may.clone();
    if let Some(s) = &a.struct_may {
        l = l.join(s);
    }
    if let Some(e) = &a.elems_may {
        l = l.join(e);
    }
    l
}

/// The recipients of the worst case: the strings the argument can be, or one that reads nothing. A value
/// computed at run time is taken to be a string; lint does not predict a malformed shape (docs/lint.md).
fn texts(a: &ArgAcc) -> Texts {
    match &a.texts {
        Some(t) => Texts::Strings(t.iter().cloned().collect()),
        None => Texts::one(UNKNOWN_RECIPIENT),
    }
}

fn predict(
    policy: &Policy,
    interp: &Interp<'_>,
    site: &SiteAcc,
    source: &str,
    lines: &LineIndex,
    audience: Audience,
) -> CallPrediction {
    let space = &interp.space;
    // Two readings of a value that may be a list or a dict: the list reading checks structure and elements
    // apart, the dict reading checks everything joined. The worst of both bounds the runtime's decision.
    let claims = |f: &dyn Fn(&ArgAcc) -> ClaimParts| -> Vec<ArgClaim> {
        site.args
            .iter()
            .map(|a| {
                let (label, elements, texts) = f(a);
                ArgClaim {
                    name: a.name.clone(),
                    label,
                    elements,
                    texts,
                    digest: String::new(),
                    remembered: crate::policy::Remembered::Nothing,
                }
            })
            .collect()
    };
    let list_reading = |a: &ArgAcc| {
        (
            a.struct_may.clone().unwrap_or_else(|| a.val.may.clone()),
            a.elem_labels
                .clone()
                .or_else(|| a.elems_may.clone().map(|e| vec![e])),
            texts(a),
        )
    };
    let as_list = claims(&list_reading);
    // A list literal is certainly a list: no dict reading for it.
    let as_whole = claims(&|a| match a.elem_labels {
        Some(_) => list_reading(a),
        None => (deep_may(a), None, texts(a)),
    });
    let mut must_args = claims(&|a| (a.claim_must.clone(), None, Texts::Unknown));
    // Lint never reads the person's store (docs/semantics.md, "Remembered values"): at best the value is
    // remembered, so the lower bound lets every `known` role hold; the worst case (the may-claims) none.
    for a in &mut must_args {
        a.remembered = crate::policy::Remembered::MayBe;
    }
    let claim = |args: Vec<ArgClaim>, pc: &Label| Claim {
        tool: site.tool.clone(),
        args,
        pc: pc.clone(),
        calls_so_far: 0,
    };
    let list_claim = claim(as_list, &site.pc_may);
    let whole_claim = claim(as_whole, &site.pc_may);
    let must_claim = claim(must_args, &site.pc_must);
    let a = decide(policy, space, &list_claim);
    let b = decide(policy, space, &whole_claim);
    let may = if b.outcome > a.outcome { b } else { a };
    let must = decide(policy, space, &must_claim);
    // Both readings' broken requirements, each rule once with its worse outcome.
    let mut may_all: Vec<Decision> = Vec::new();
    for v in violations(policy, space, &list_claim)
        .into_iter()
        .chain(violations(policy, space, &whole_claim))
    {
        match may_all.iter_mut().find(|w| w.rule == v.rule) {
            Some(w) if v.outcome > w.outcome => *w = v,
            Some(_) => {}
            None => may_all.push(v),
        }
    }
    let must_all = violations(policy, space, &must_claim);
    // A reason may say how the policy could change it; a planner is told only what the plan meets.
    let told = |d: Decision| match audience {
        Audience::Person => d,
        Audience::Planner => Decision {
            reason: crate::policy::reason_for_planner(&d.reason).to_string(),
            ..d
        },
    };
    let (may, must) = (told(may), told(must));
    let may_all: Vec<Decision> = may_all.into_iter().map(told).collect();
    let must_all: Vec<Decision> = must_all.into_iter().map(told).collect();
    let (line, column) = lines.line_col(source, site.start);
    let kinds = KindSet(((1u16 << policy.kinds().len().min(8)) - 1) as u8);
    let shown = |l: &Label| {
        space.describe(&Label {
            verified: KindSet(l.verified.0 & kinds.0),
            ..l.clone()
        })
    };
    CallPrediction {
        tool: site.tool.clone(),
        start: site.start,
        end: site.end,
        line,
        column,
        may,
        must,
        may_all,
        must_all,
        args: site
            .args
            .iter()
            .map(|a| ArgPrediction {
                name: a.name.clone(),
                may: shown(&deep_may(a)),
                must: shown(&a.claim_must),
                sources: sources(interp, &deep_may(a), source, lines),
            })
            .collect(),
        // `pc` never carries kinds (a trusted choice is neutral); showing "every kind" would mislead.
        pc_may: shown(&Label {
            verified: KindSet::NONE,
            ..site.pc_may.clone()
        }),
        pc_sources: sources(interp, &site.pc_may, source, lines),
        pc_must: shown(&Label {
            verified: KindSet::NONE,
            ..site.pc_must.clone()
        }),
    }
}

/// The argument a rule names (`args.to.require` → `to`).
fn sources(interp: &Interp<'_>, label: &Label, source: &str, lines: &LineIndex) -> Vec<SourceRef> {
    // One per tool and line (two calls of one tool on a line are named once), at the first of them.
    let mut out: BTreeMap<(u32, &str), usize> = BTreeMap::new();
    for id in &label.sources {
        if let Some((name, at)) = interp.source_names.get(id) {
            let first = out
                .entry((lines.line_col(source, *at).0, name.as_str()))
                .or_insert(*at);
            *first = (*first).min(*at);
        }
    }
    out.into_iter()
        .map(|((line, name), start)| SourceRef {
            line,
            name: name.to_string(),
            start,
        })
        .collect()
}

fn describe_sources(s: &[SourceRef]) -> String {
    let parts: Vec<String> = s
        .iter()
        .map(|r| format!("`{}()` at line {}", r.name, r.line))
        .collect();
    match parts.len() {
        0 => "tool output".to_string(),
        1 => parts[0].clone(),
        _ => {
            let (last, rest) = parts
                .split_last()
                .map_or((String::new(), &[][..]), |(l, r)| (l.clone(), r));
            format!("{} and {last}", rest.join(", "))
        }
    }
}

fn verdict(
    policy: &Policy,
    interp: &Interp<'_>,
    site: &SiteAcc,
    p: &CallPrediction,
    source: &str,
    lines: &LineIndex,
    audience: Audience,
) -> Option<Diagnostic> {
    let (decision, certain, all) = if p.must.outcome == Outcome::Deny {
        (&p.must, true, &p.must_all)
    } else if p.may.outcome > Outcome::Allow {
        (&p.may, p.must.outcome == p.may.outcome, &p.may_all)
    } else {
        return None;
    };
    let tool = &site.tool;
    let primary = Broken::of(policy, interp, site, decision, source, lines);
    let what = &primary.what;
    let (code, message) = match (decision.outcome, certain) {
        (Outcome::Deny, true) => (
            Code::DeniedWheneverReached,
            format!("`{tool}` is denied whenever it is reached: {what}"),
        ),
        (Outcome::Deny, false) => (
            Code::MayBeDenied,
            format!("`{tool}` may be denied at run time: {what}"),
        ),
        (Outcome::Confirm, true) => (
            Code::NeedsConfirmation,
            format!("`{tool}` will need a human's confirmation: {what}"),
        ),
        (Outcome::Confirm, false) => (
            Code::NeedsConfirmation,
            format!("`{tool}` may need a human's confirmation: {what}"),
        ),
        (_, true) => (
            Code::Drafted,
            format!("`{tool}` will only be drafted: {what}"),
        ),
        (_, false) => (
            Code::Drafted,
            format!("`{tool}` may only be drafted: {what}"),
        ),
    };
    // Every other requirement broken the same way: one diagnostic per call, a note for each, and one help
    // that addresses all of them, so one round of fixes is enough.
    let others: Vec<Broken<'_>> = all
        .iter()
        .filter(|d| d.outcome == decision.outcome && d.rule != decision.rule)
        .map(|d| Broken::of(policy, interp, site, d, source, lines))
        .collect();
    // One note per distinct cause; rules broken for the same reason share it.
    let mut causes: Vec<(&str, Vec<String>)> = Vec::new();
    for b in &others {
        if b.what == primary.what {
            continue;
        }
        match causes.iter_mut().find(|(what, _)| *what == b.what) {
            Some((_, rules)) => rules.push(b.rule.to_string()),
            None => causes.push((&b.what, vec![b.rule.to_string()])),
        }
    }
    let notes: Vec<String> = causes
        .iter()
        .map(|(what, rules)| format!("also: {what} ({})", rules.join(", ")))
        .collect();
    // In strict mode a value assigned where control depends on tool output loses its verified kinds, so
    // "pass it through a verifier" may already be what the plan does: say what removes the kind instead.
    let implicit = interp.strict && site.pc_may.integrity == crate::label::Integrity::Untrusted;
    let mut helps: Vec<String> = Vec::new();
    let mut notes = notes;
    for b in std::iter::once(&primary).chain(&others) {
        let arg = b.arg.map(|a| a.name.as_str());
        let h = match (arg, b.rule.check()) {
            (Some(name), Some(Check::Require)) if implicit => {
                let note = implicit_flow_note(policy, interp, site, name, source, lines);
                if !notes.contains(&note) {
                    notes.push(note);
                }
                // Never "run in normal mode", for either audience: there the data would choose the value
                // and nothing would say so (docs/semantics.md, "Control context and modes").
                format!(
                    "compute `{name}` (and verify it) outside the branches and loops that test tool output"
                )
            }
            (Some(name), Some(Check::ReadersMustInclude)) => {
                match per_record_lists(policy, &b.sources) {
                    Some((from, tools)) => {
                        let who = match audience {
                            Audience::Person => "often only you",
                            Audience::Planner => "often only the user",
                        };
                        let note = format!(
                            "`{name}` depends on an element of the list {from} returned; what is read from a \
                             list carries the list's readers, those every record in it allows ({who}), \
                             not only the record's own"
                        );
                        if !notes.contains(&note) {
                            notes.push(note);
                        }
                        match audience {
                            Audience::Person => format!(
                                "if the count and order of {tools}'s results are not secret, declare \
                                 `returns.structure_readers: public` for it in the policy; \
                                 otherwise keep its text out of `{name}`"
                            ),
                            Audience::Planner => format!("keep its text out of `{name}`"),
                        }
                    }
                    None => hint(policy, tool, b.rule, arg, audience),
                }
            }
            _ => hint(policy, tool, b.rule, arg, audience),
        };
        if !helps.contains(&h) {
            helps.push(h);
        }
    }
    // When the plan cannot meet the requirement at all, the policy is the other way out: name its line,
    // to the person who owns the policy only.
    let route = match audience {
        Audience::Person => policy_route(
            policy,
            tool,
            primary.rule,
            primary.arg.map(|a| a.name.as_str()),
            &primary.sources,
        ),
        Audience::Planner => None,
    };
    if let Some(r) = route.filter(|r| !helps.contains(r)) {
        helps.push(r);
    }
    let fix = if implicit {
        None
    } else {
        verifier_fix(policy, tool, primary.rule, primary.arg, source)
    };
    Some(Diagnostic {
        fix,
        hint: Some(helps.join("; and ")),
        tool: Some(tool.clone()),
        argument: primary.arg.map(|a| a.name.clone()),
        sources: primary.sources,
        notes,
        ..Diagnostic::new(code, primary.start, primary.end, message)
    })
}

/// One broken requirement of a call, described for a person: which argument (or the control context),
/// where its data comes from, and what is wrong with it.
struct Broken<'s> {
    rule: &'s Rule,
    arg: Option<&'s ArgAcc>,
    start: usize,
    end: usize,
    sources: Vec<SourceRef>,
    what: String,
}

impl<'s> Broken<'s> {
    fn of(
        policy: &Policy,
        interp: &Interp<'_>,
        site: &'s SiteAcc,
        decision: &'s Decision,
        source: &str,
        lines: &LineIndex,
    ) -> Broken<'s> {
        let rule = &decision.rule;
        let arg = rule
            .arg()
            .and_then(|n| site.args.iter().find(|a| a.name == n));
        let (start, end) = arg.map_or((site.start, site.end), |a| (a.start, a.end));
        let label = match arg {
            Some(a) => deep_may(a),
            None => site.pc_may.clone(),
        };
        let mut srcs = sources(interp, &label, source, lines);
        if matches!(rule, Rule::Control(_)) || rule.check() == Some(Check::Require) {
            // Name the untrusted sources: those are the ones the fix is about.
            let untrusted: Vec<SourceRef> = srcs
                .iter()
                .filter(|s| {
                    policy.tool(&s.name).is_some_and(|t| {
                        t.returns().integrity != Some(crate::policy::model::IntegritySpec::Trusted)
                    })
                })
                .cloned()
                .collect();
            if !untrusted.is_empty() {
                srcs = untrusted;
            }
        }
        let from = if srcs.is_empty() && label.sources.contains(&crate::planner::CONTEXT_CALL) {
            // A literal of a plan written in a planner context (docs/semantics.md, "The planner context
            // label"): the data it may hold is what the planner read, in earlier runs.
            format!(
                "what the planner read earlier in this session (`{}#{}`)",
                crate::planner::CONTEXT_SOURCE,
                crate::planner::CONTEXT_CALL
            )
        } else {
            describe_sources(&srcs)
        };
        let tool = &site.tool;
        let what = match (rule, arg) {
            (
                Rule::Arg {
                    check: Check::Require,
                    ..
                },
                Some(a),
            ) => format!("argument `{}` derives from {from} (untrusted)", a.name),
            (
                Rule::Arg {
                    check: Check::ForbidTags,
                    ..
                },
                Some(a),
            ) => format!(
                "argument `{}` carries tags from {from} that `{tool}` forbids",
                a.name
            ),
            (
                Rule::Arg {
                    check: Check::Public,
                    ..
                },
                Some(a),
            ) => format!(
                "argument `{}` holds data from {from}, which is not public",
                a.name
            ),
            (
                Rule::Arg {
                    check: Check::ReadersMustInclude,
                    ..
                },
                Some(a),
            ) => format!(
                "argument `{}` holds data from {from} that a recipient may not be allowed to read",
                a.name
            ),
            (Rule::Control(_), _) => format!("whether it runs depends on {from}"),
            _ => decision.reason.clone(),
        };
        Broken {
            rule,
            arg,
            start,
            end,
            sources: srcs,
            what,
        }
    }
}

/// What removed the verified kinds of argument `name` in strict mode: the loop or branch around the call
/// whose test reads tool data (its line and sources), and the kinds the argument accepts.
fn implicit_flow_note(
    policy: &Policy,
    interp: &Interp<'_>,
    site: &SiteAcc,
    name: &str,
    source: &str,
    lines: &LineIndex,
) -> String {
    let kinds: Vec<String> = kinds_accepted(policy, &site.tool, name)
        .iter()
        .map(|k| format!("`verified({k})`"))
        .collect();
    let removes = if kinds.is_empty() {
        "its verified kinds".to_string()
    } else {
        kinds.join(" and ")
    };
    let Some(ctl) = &site.control else {
        let from = describe_sources(&sources(interp, &site.pc_may, source, lines));
        return format!(
            "`{name}` is computed where control depends on {from}; in strict mode that removes {removes}"
        );
    };
    let from = describe_sources(&sources(interp, &ctl.test_may, source, lines));
    let (line, _) = lines.line_col(source, ctl.at);
    let place = match ctl.kind {
        ControlKind::For => format!("the loop at line {line}, which iterates over"),
        ControlKind::While => format!("the `while` at line {line}, which tests"),
        ControlKind::If => format!("the `if` at line {line}, which tests"),
    };
    format!(
        "`{name}` is computed inside {place} data from {from}; in strict mode that removes {removes}"
    )
}

/// The sources among `srcs` whose results are lists of records with per-record readers
/// (`readers: { from_fields }`) and no declared `structure_readers`: reading any element of such a list
/// takes the list's structure label, whose readers are those every record allows
/// (docs/semantics.md, "Propagation").
/// `None` when there are none; otherwise how to name them (with lines) and the tools alone.
fn per_record_lists(policy: &Policy, srcs: &[SourceRef]) -> Option<(String, String)> {
    let lists: Vec<SourceRef> = srcs
        .iter()
        .filter(|s| {
            policy.tool(&s.name).is_some_and(|t| {
                let r = t.returns();
                matches!(r.readers, Some(ReadersSpec::FromFields { .. }))
                    && r.structure_readers.is_none()
                    // Only a built-in adapter says whether its result is a list; for any other tool
                    // the cause is not certain and the general help stands.
                    && t.source
                        .as_ref()
                        .and_then(|s| s.builtin())
                        .is_some_and(|b| b.returns_list())
            })
        })
        .cloned()
        .collect();
    if lists.is_empty() {
        return None;
    }
    let mut tools: Vec<String> = lists.iter().map(|s| format!("`{}()`", s.name)).collect();
    tools.dedup();
    Some((describe_sources(&lists), tools.join(" and ")))
}

fn hint(policy: &Policy, tool: &str, rule: &Rule, arg: Option<&str>, audience: Audience) -> String {
    // Where the requirements are written down, for whoever reads this: the person has the policy, the
    // planner the catalogue `describe_tools` gives it.
    let requirements = match audience {
        Audience::Person => "see `zamburak policy check` for what this tool requires",
        Audience::Planner => "see `describe_tools` for what this tool requires",
    };
    let Some(name) = arg else {
        if matches!(rule, Rule::Control(_)) {
            return "move the call out of the `if`, loop or early exit that tests tool output; decide on \
                    values written in the plan or checked by a verifier"
                .into();
        }
        return requirements.into();
    };
    let check = rule.check();
    if check == Some(Check::Require) {
        let tool_kinds: Vec<String> = kinds_accepted(policy, tool, name);
        let verifiers: Vec<String> = policy
            .verifiers()
            .filter(|(_, v)| tool_kinds.iter().any(|k| k == v.mints()))
            .map(|(n, _)| format!("`{n}()`"))
            .collect();
        // Lint never reads the person's remembered values (docs/semantics.md, "Remembered values"): a
        // value may be known, which only the run can tell.
        let known = if policy.known_roles(tool, name).is_empty() {
            ""
        } else {
            " (a value the person approved and remembered passes too: the run tells, lint cannot)"
        };
        if verifiers.is_empty() {
            return format!(
                "use a value written in the plan (from the user's request) for `{name}`{known}"
            );
        }
        return format!(
            "pass `{name}` through {} first, or use a value written in the plan (from the user's request){known}",
            verifiers.join(" or ")
        );
    }
    if matches!(check, Some(Check::ForbidTags | Check::Public)) {
        return format!("keep tagged or private data out of `{name}`");
    }
    if check == Some(Check::ReadersMustInclude) {
        if let Some(reader) = provider_reader(policy, tool) {
            return match audience {
                Audience::Person => format!(
                    "the model reads as `{reader}`, which may not read this data: keep it out of `{name}`, or make \
                     `{reader}` a reader of it in the policy (below)"
                ),
                Audience::Planner => format!(
                    "the model reads as `{reader}`, which may not read this data: keep it out of `{name}`"
                ),
            };
        }
        return format!(
            "send `{name}` only to people who may read it, e.g. the user or the mail's own correspondents"
        );
    }
    requirements.into()
}

/// The principal an LLM tool's provider reads as (`llm:local`), when `tool` is served by one.
fn provider_reader<'p>(policy: &'p Policy, tool: &str) -> Option<&'p str> {
    let source = policy.tool(tool)?.source.as_ref()?;
    let crate::policy::servers::ToolSource::Llm(provider) = source else {
        return None;
    };
    policy
        .file()
        .providers
        .iter()
        .find(|(n, _)| *n == provider.as_str())
        .map(|(_, p)| p.reader.as_str())
}

/// The verifiers whose verified kind argument `arg` of `tool` accepts.
fn verifiers_for(policy: &Policy, tool: &str, arg: &str) -> Vec<String> {
    let kinds = kinds_accepted(policy, tool, arg);
    policy
        .verifiers()
        .filter(|(_, v)| kinds.iter().any(|k| k == v.mints()))
        .map(|(n, _)| n.to_string())
        .collect()
}

/// `to=m["from"]` → `to=verify_recipient(m["from"])`, when exactly one verifier mints a kind the argument
/// accepts. Unsafe: the verifier stops the run on a value it refuses, where the call used to wait for a
/// person.
fn verifier_fix(
    policy: &Policy,
    tool: &str,
    rule: &Rule,
    arg: Option<&ArgAcc>,
    source: &str,
) -> Option<crate::plan::diagnostic::Fix> {
    use crate::plan::diagnostic::{Edit, Fix};
    let arg = arg?;
    if rule.check() != Some(Check::Require) {
        return None;
    }
    let verifiers = verifiers_for(policy, tool, &arg.name);
    let [verifier] = verifiers.as_slice() else {
        return None;
    };
    let text = source.get(arg.start..arg.end)?;
    // A value that is already a verifier's result is not wrapped again.
    if text.starts_with(&format!("{verifier}(")) || text.is_empty() {
        return None;
    }
    Some(Fix::unsafe_(
        format!("pass `{}` through `{verifier}()`", arg.name),
        vec![
            Edit::insert(arg.start, format!("{verifier}(")),
            Edit::insert(arg.end, ")"),
        ],
    ))
}

/// The other way out when the plan cannot meet a requirement: the policy key (and line) that would allow it.
/// `None` when the plan can meet it (a verifier exists for a `require`), or for checks no single line
/// relaxes.
fn policy_route(
    policy: &Policy,
    tool: &str,
    rule: &Rule,
    arg: Option<&str>,
    sources: &[SourceRef],
) -> Option<String> {
    let name = arg?;
    let at = |t: &str, r: &str| {
        policy
            .locate(t, r)
            .map(|l| format!(" ({l})"))
            .unwrap_or_default()
    };
    match rule.check()? {
        Check::Require if verifiers_for(policy, tool, name).is_empty() => {
            let id = rule.to_string();
            Some(format!(
                "if the task needs `{name}` to come from tool data, only the policy can allow it: \
                 `tools.{tool}.{id}`{}",
                at(tool, &id)
            ))
        }
        Check::ReadersMustInclude => {
            let src = sources.iter().find(|s| policy.tool(&s.name).is_some())?;
            let party = match provider_reader(policy, tool) {
                Some(reader) => format!("`{reader}`"),
                None => "the recipients".to_string(),
            };
            Some(format!(
                "if {party} may read what `{}()` returns, add them to its readers in the policy: \
                 `tools.{}.returns.readers`{}",
                src.name,
                src.name,
                at(&src.name, "returns.readers")
            ))
        }
        _ => None,
    }
}

/// The verified kinds argument `arg` of `tool` accepts.
fn kinds_accepted(policy: &Policy, tool: &str, arg: &str) -> Vec<String> {
    policy
        .tool(tool)
        .and_then(|t| t.args.get(arg))
        .and_then(|a| a.require.as_ref())
        .map(|alts| {
            alts.0
                .iter()
                .filter_map(|r| match r {
                    Requirement::Verified(k) => Some(k.clone()),
                    Requirement::Trusted | Requirement::Known(_) => None,
                })
                .collect()
        })
        .unwrap_or_default()
}
