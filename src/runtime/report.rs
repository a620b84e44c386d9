//! What a run produces: the [`RunReport`] (with a suspended run's [`Suspension`]), the [`Recorder`] that
//! appends to the trace, and how a run ends in both: a plan refused before it ran, a plan denied before it
//! ran (with what lint predicted), and the common ending every run goes through.

use serde::Serialize;
use serde_json::Value;

use std::collections::BTreeSet;

use serde::Deserialize;

use crate::exit;
use crate::label::LabelSpace;
use crate::plan::Diagnostic;
use crate::planner::ContextLabel;
use crate::policy::{Outcome, Rule};
use crate::trace::Record;
use crate::trace::TraceWriter;
use crate::trace::record::{ArgRecord, Call, End, PlanError as ErrorRecord};

pub(super) fn rejected(diagnostics: Vec<Diagnostic>, recorder: &mut Recorder<'_>) -> RunReport {
    let first = diagnostics.first();
    let error = first.map(|d| PlanError {
        line: None,
        exc_type: format!("rejected[{}]", d.code),
        message: d.message.clone(),
    });
    let mut report = finish(
        Status::Rejected,
        "rejected".into(),
        Vec::new(),
        Vec::new(),
        error,
        recorder,
    );
    report.diagnostics = diagnostics;
    report
}

/// A label lint predicted for a call denied before the run: no call ran, so its sources are the call
/// sites the value may derive from, written `tool (line N, predicted)` (docs/trace.md), never `tool#id`.
pub(super) fn predicted(
    label: &crate::label::LabelView,
    sources: &[crate::analysis::SourceRef],
) -> crate::label::LabelView {
    crate::label::LabelView {
        sources: sources
            .iter()
            .map(|s| format!("{} (line {}, predicted)", s.name, s.line))
            .collect(),
        ..label.clone()
    }
}

pub(super) fn denied_before_run(
    denials: &[crate::analysis::CallPrediction],
    recorder: &mut Recorder<'_>,
) -> RunReport {
    let mut decisions = Vec::new();
    for (i, d) in denials.iter().enumerate() {
        let call_id = u32::try_from(i + 1).unwrap_or(u32::MAX);
        recorder.record(Record::Call(Call {
            call_id,
            line: d.line,
            tool: d.tool.clone(),
            args: d
                .args
                .iter()
                .map(|a| ArgRecord {
                    name: a.name.clone(),
                    label: predicted(&a.must, &a.sources),
                    elements: None,
                    // No value exists before the run.
                    digest: "none".into(),
                    preview: None,
                })
                .collect(),
            pc: predicted(&d.pc_must, &d.pc_sources),
            decision: serde_plain(&Outcome::Deny),
            rule: d.must.rule.to_string(),
            reason: d.must.reason.clone(),
            before_run: true,
            tool_sha256: None,
            on_approval: None,
            remembered: Vec::new(),
        }));
        decisions.push(CallDecision {
            call_id,
            tool: d.tool.clone(),
            line: d.line,
            decision: Outcome::Deny,
            rule: d.must.rule.clone(),
            reason: format!("denied before the run: {}", d.must.reason),
            approval: None,
        });
    }
    finish(
        Status::Denied,
        serde_plain(&Outcome::Deny),
        decisions,
        Vec::new(),
        None,
        recorder,
    )
}

pub(super) fn finish(
    status: Status,
    outcome: String,
    decisions: Vec<CallDecision>,
    calls_run: Vec<String>,
    error: Option<PlanError>,
    recorder: &mut Recorder<'_>,
) -> RunReport {
    let exit_code = match status {
        Status::Completed => exit::OK,
        Status::Rejected | Status::Error => exit::REJECTED,
        Status::Denied => exit::DENIED,
        Status::Suspended => exit::SUSPENDED,
    };
    if let Some(e) = &error {
        recorder.record(Record::Error(ErrorRecord {
            line: e.line,
            exc_type: e.exc_type.clone(),
            message: e.message.clone(),
        }));
    }
    // A suspended run is not over: its trace continues when a human decides (see `approve`).
    if status != Status::Suspended {
        recorder.record(Record::End(End {
            status: serde_plain(&status),
            exit_code,
            outcome: outcome.clone(),
        }));
    }
    RunReport {
        status,
        outcome,
        exit_code,
        decisions,
        calls_run,
        error,
        diagnostics: Vec::new(),
        suspension: None,
        tool_said: None,
        output: Vec::new(),
    }
}

pub(super) fn serde_plain<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The plan ran to its end (possibly with drafted calls).
    Completed,
    /// The subset or structural check refused the plan; no tool ran.
    Rejected,
    /// A plan exception or a failed verifier stopped the run.
    Error,
    /// A tool call was denied (by the policy or a fixed rule) and the run stopped.
    Denied,
    /// A tool call needs a human's confirmation; the run stopped before it.
    Suspended,
}

/// One decided tool call, as reported to the caller (never with raw values).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CallDecision {
    pub call_id: u32,
    pub tool: String,
    pub line: u32,
    pub decision: Outcome,
    pub rule: Rule,
    pub reason: String,
    /// For a `confirm` decision a person took: `approved` or `rejected` (and by whom, in the trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
}

/// A plan error as reported: the message is already redacted when it may depend on tool data.
#[derive(Clone, Debug, Serialize)]
pub struct PlanError {
    pub line: Option<u32>,
    #[serde(rename = "type")]
    pub exc_type: String,
    pub message: String,
}

/// The result of a run (`runtime::run::Run`).
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub status: Status,
    /// `rejected`, `error`, or the most restrictive decision met (`deny` > `confirm` > `draft` > `allow`).
    pub outcome: String,
    pub exit_code: i32,
    pub decisions: Vec<CallDecision>,
    /// The tool calls that actually ran (allowed or drafted), in order.
    pub calls_run: Vec<String>,
    pub error: Option<PlanError>,
    #[serde(skip)]
    pub diagnostics: Vec<Diagnostic>,
    /// Set when the run is suspended at a `confirm` claim.
    #[serde(skip)]
    pub suspension: Option<Suspension>,
    /// What a failed tool, server or model wrote (redacted in `error`, never in JSON or the trace), for the
    /// person at the terminal.
    #[serde(skip)]
    pub tool_said: Option<crate::text::OutsideText>,
    /// What the plan printed, one segment per `print`, each with its label (docs/semantics.md, "What is
    /// protected"): the text only when trusted and public, as in the trace.
    pub output: Vec<OutputSegment>,
}

/// One `print` of the plan, as reported.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OutputSegment {
    /// The text, when its label is trusted and public; `None` otherwise (it went to the terminal only).
    pub text: Option<String>,
    pub label: crate::label::LabelView,
    /// The text whatever its label, for a reader its caller checked against `label` (the planner of
    /// `mcp serve` in the mode that lets it read untrusted text). Never serialised.
    #[serde(skip)]
    pub whole: String,
}

/// Appends to the trace if there is one, remembering the first failure (which stops further effects).
pub(super) struct Recorder<'t> {
    pub(super) trace: Option<&'t mut TraceWriter>,
    pub(super) failed: Option<String>,
    /// The key value digests are made with: the trace's ([`TraceWriter::key`]).
    key: Option<crate::digest::DigestKey>,
}

impl<'t> Recorder<'t> {
    /// Records into `trace`, naming values under its key; without a trace, under a fresh key nobody keeps
    /// (its digests are written nowhere).
    pub(super) fn new(trace: Option<&'t mut TraceWriter>) -> Recorder<'t> {
        let key = match trace.as_deref() {
            Some(t) => Some(t.key().clone()),
            None => crate::digest::DigestKey::fresh().ok(),
        };
        Recorder {
            trace,
            failed: None,
            key,
        }
    }
}

/// The digest of a value in a run that has no trace and got no random key: names nothing.
const NO_DIGEST: &str = "none";

/// What the person deciding a `confirm` claim sees besides the recorded claim. The approver is the
/// policy's user, who may read every value, so the values are shown in clear (never written to the trace).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimShown {
    /// Each argument's value, as JSON.
    pub values: Vec<(String, Value)>,
    /// Per guarded argument, the recipients who may not read it.
    pub non_readers: Vec<(String, Vec<String>)>,
    /// What the call acts on beyond its arguments (the draft a commit sends), when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<ShownEffect>,
    /// Each consequential value the decision looked up among the remembered ones: known, new, or like a
    /// known one (docs/semantics.md, "Remembered values").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub novelty: Vec<crate::known::Novelty>,
    /// Where an untrusted control context comes from: each source of it (`tool#id`) and the plan line of
    /// that call (0: not a call of this run, e.g. what the planner had read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<(String, u32)>,
}

/// What a call acts on beyond its arguments, shown with its claim (docs/approvals.md, "Drafts and commits").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShownEffect {
    /// What it is, for the person: `the draft as it would be sent`.
    pub what: String,
    /// Its parts (`to`, `cc`, `subject`, `body`), each with its label where the run knows it.
    pub parts: Vec<ShownPart>,
    /// Why it cannot be shown, or why acting on it will be refused (a draft changed since it was written).
    pub problem: Option<String>,
}

/// One part of a [`ShownEffect`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShownPart {
    pub name: String,
    pub value: Value,
    /// The label of the value as this run wrote it; `None`: written outside this run, so not known.
    pub label: Option<crate::label::LabelView>,
    /// Recipients of the effect who may not read this part (known with the label only).
    pub non_readers: Vec<String>,
}

/// The labels of a draft this run wrote, kept until a commit of it is shown to a person.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DraftLabels {
    /// `to`, `subject`, `body` → the label of the value the draft was written from.
    pub labels: Vec<(String, crate::label::LabelView)>,
    /// Per argument, the recipients who may not read it.
    pub non_readers: Vec<(String, Vec<String>)>,
}

/// What a suspended run needs to continue in another process, besides Monty's paused call.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HostState {
    pub next_call: u32,
    pub tool_calls: u32,
    pub decisions: Vec<CallDecision>,
    pub calls_run: Vec<String>,
    pub worst: Outcome,
    pub tainted_sources: BTreeSet<String>,
    /// Draft id → the labels it was written with, for drafts this run wrote.
    #[serde(default)]
    pub drafts: std::collections::BTreeMap<String, DraftLabels>,
    /// The planner context the plan was written in (docs/semantics.md, "The planner context label"): its
    /// literals carry it, before and after a suspension. Absent: trusted.
    #[serde(default, skip_serializing_if = "ContextLabel::is_trusted")]
    pub planner_context: ContextLabel,
    /// For each party declared `stateful: true` (`provider:NAME`, `server:NAME`), the join of the labels of
    /// everything the run sent it, with the control context of each call (docs/semantics.md, "The
    /// quarantined model is stateless"): its next answer carries it.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sent_to_stateful: std::collections::BTreeMap<String, crate::label::Packed>,
}

/// A run stopped at a `confirm` claim: everything a snapshot holds.
#[derive(Clone, Debug)]
pub struct Suspension {
    /// Monty's paused call, serialised (labels are ordinary values inside it).
    pub paused: Value,
    pub space: LabelSpace,
    pub state: HostState,
    /// The claim as recorded in the trace, and its digest.
    pub claim: Call,
    pub claim_digest: String,
    /// What the approver is shown.
    pub shown: ClaimShown,
}

impl Recorder<'_> {
    /// The keyed digest of `value` and its preview, as the trace records them ([`trace::redact::stored`]),
    /// under the trace's key. A run without a trace names values under a key made for it alone.
    pub(super) fn stored(
        &self,
        value: &Value,
        label: &crate::label::Label,
    ) -> (String, Option<Value>) {
        match &self.key {
            Some(key) => crate::trace::redact::stored(key, value, label),
            // No trace and no random source: a digest nobody could use, never a plain hash.
            None => (NO_DIGEST.to_string(), None),
        }
    }

    /// The keyed digest of `value` ([`Recorder::stored`] without the preview).
    pub(super) fn digest(&self, value: &Value) -> String {
        match &self.key {
            Some(key) => crate::trace::redact::keyed_digest(key, value),
            None => NO_DIGEST.to_string(),
        }
    }

    /// Keeps a value the trace names by `digest` in the owner's store, when there is one.
    pub(super) fn keep(&mut self, digest: &str, value: &Value) {
        if let Some(trace) = self.trace.as_deref_mut() {
            trace.keep_value(digest, value);
        }
    }

    pub(super) fn record(&mut self, record: Record) -> bool {
        if self.failed.is_some() {
            return false;
        }
        let Some(trace) = self.trace.as_deref_mut() else {
            return true;
        };
        match trace.append(record) {
            Ok(_) => true,
            Err(e) => {
                self.failed = Some(e.to_string());
                false
            }
        }
    }
}

impl HostState {
    /// The state a new run starts in.
    pub(super) fn fresh() -> HostState {
        HostState {
            next_call: 1,
            tool_calls: 0,
            decisions: Vec::new(),
            calls_run: Vec::new(),
            worst: Outcome::Allow,
            tainted_sources: BTreeSet::new(),
            drafts: std::collections::BTreeMap::new(),
            planner_context: ContextLabel::trusted(),
            sent_to_stateful: std::collections::BTreeMap::new(),
        }
    }
}
