//! One run of a plan: check it, lower it, execute it on Monty with every tool call decided by the policy,
//! and record everything in the trace.
//!
//! The pieces stay separate: [`crate::plan`] refuses what is outside the subset, [`crate::lower`] compiles,
//! [`super::exec`] talks to Monty, [`crate::policy::decide`] decides, a [`Backend`] performs allowed calls
//! (real adapters, or fixtures in `policy test`), and [`crate::trace`] records. This file only wires them.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::exit;
use crate::label::{Label, LabelSpace, Packed};
use crate::lower::{self, Mode};
use crate::plan::{self, Diagnostic};
use crate::policy::{self, ArgClaim, Claim, Outcome, Policy, Texts};
use crate::runtime::exec::{self, ExecLimits, ExecOutcome, Host, HostReply};
use crate::trace::record::{
    Approval, ArgRecord, Call, CallResult, End, PlanError as ErrorRecord, VerifierUse,
};
use crate::trace::{self, Record, TraceWriter};
use crate::value::{LValue, Raw};

/// Performs tool calls the policy allowed.
pub trait Backend {
    /// Runs `tool` (served by `source`, when the policy names one) with raw arguments. `draft`: the decision
    /// was `draft`, so the effect must be prepared reversibly. The error text is shown to the user only.
    fn invoke(
        &mut self,
        tool: &str,
        source: Option<&str>,
        args: &Map<String, Value>,
        draft: bool,
    ) -> Result<Value, String>;
}

/// The built-in adapters of `crate::tools`, configured by the policy's `builtins:` section.
pub struct BuiltinBackend {
    builtins: crate::tools::Builtins,
    /// The policy's file name, for errors about its `builtins` section.
    policy_name: String,
}

impl BuiltinBackend {
    pub fn new(policy: &Policy) -> BuiltinBackend {
        BuiltinBackend {
            builtins: crate::tools::Builtins::new(
                policy.builtins(),
                policy.user().unwrap_or_default(),
            ),
            policy_name: policy.name().to_string(),
        }
    }
}

impl Backend for BuiltinBackend {
    fn invoke(
        &mut self,
        tool: &str,
        source: Option<&str>,
        args: &Map<String, Value>,
        draft: bool,
    ) -> Result<Value, String> {
        let Some(source) = source else {
            return Err(format!(
                "tool `{tool}` has no `source` in the policy, so nothing can serve it"
            ));
        };
        self.builtins
            .call(source, args, draft)
            .map_err(|e| match e {
                crate::tools::ToolError::MissingPath { .. } => {
                    format!(
                        "{e} (relative paths resolve against the policy file, {})",
                        self.policy_name
                    )
                }
                e => e.to_string(),
            })
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
    pub rule: String,
    pub reason: String,
}

/// A plan error as reported: the message is already redacted when it may depend on tool data.
#[derive(Clone, Debug, Serialize)]
pub struct PlanError {
    pub line: Option<u32>,
    #[serde(rename = "type")]
    pub exc_type: String,
    pub message: String,
}

/// The result of [`execute_plan`].
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
}

/// What a run needs besides the backend.
pub struct RunInput<'a> {
    pub source: &'a str,
    pub policy: &'a Policy,
    pub mode: Mode,
}

/// Checks, lowers and runs a plan. Never panics on adversarial plans, tool outputs or policies; every way
/// a run can end is a [`RunReport`]. When `trace` is given, every call, result, verifier use, denial and
/// error is appended to it, and a failure to write the trace stops the run before the next effect.
pub fn execute_plan(
    input: &RunInput<'_>,
    backend: &mut dyn Backend,
    trace: Option<&mut TraceWriter>,
    print: &mut dyn FnMut(&str),
) -> RunReport {
    run_plan(input, backend, trace, print, true, None)
}

/// [`execute_plan`] without the pre-flight analysis: a call that lint proves denied is still attempted and
/// denied when reached. Only for checking the analysis against the runtime (tests); never for users, since
/// a plan may then half-run toward a certain denial.
pub fn execute_plan_without_preflight(
    input: &RunInput<'_>,
    backend: &mut dyn Backend,
    trace: Option<&mut TraceWriter>,
    print: &mut dyn FnMut(&str),
) -> RunReport {
    run_plan(input, backend, trace, print, false, None)
}

/// [`execute_plan`] with a human at hand: every `confirm` claim is put to `approver`, which answers whether
/// it is approved and by whom (`run --confirm ask`). The answer is recorded in the trace; an approved call
/// runs at once, a rejected one stops the run like a denial.
pub fn execute_plan_asking(
    input: &RunInput<'_>,
    backend: &mut dyn Backend,
    trace: Option<&mut TraceWriter>,
    print: &mut dyn FnMut(&str),
    approver: &mut Approver,
) -> RunReport {
    run_plan(input, backend, trace, print, true, Some(approver))
}

fn exec_limits(policy: &Policy) -> ExecLimits {
    let limits = policy.limits();
    ExecLimits {
        timeout: std::time::Duration::from_millis(limits.timeout_ms),
        max_recursion: limits.max_recursion as usize,
        max_host_calls: (limits.max_tool_calls as usize)
            .saturating_mul(4)
            .saturating_add(64),
    }
}

fn run_plan<'a>(
    input: &RunInput<'a>,
    backend: &'a mut dyn Backend,
    trace: Option<&mut TraceWriter>,
    print: &mut dyn FnMut(&str),
    preflight: bool,
    approver: Option<&'a mut Approver>,
) -> RunReport {
    let sigs = input.policy.signatures();
    let mut recorder = Recorder {
        trace,
        failed: None,
    };

    let parsed = match plan::check(input.source, &sigs) {
        Ok(parsed) => parsed,
        Err(diagnostics) => return rejected(diagnostics, &mut recorder),
    };
    let lowered = match lower::compile(&parsed.module, input.source, &sigs, input.mode) {
        Ok(lowered) => lowered,
        Err(diagnostics) => return rejected(diagnostics, &mut recorder),
    };
    let space = match input.policy.label_space() {
        Ok(space) => space,
        Err(e) => {
            // The policy loader validates budgets, so this is a defect; fail closed all the same.
            let error = PlanError {
                line: None,
                exc_type: "PolicyError".into(),
                message: e.to_string(),
            };
            return finish(
                Status::Error,
                "error".into(),
                Vec::new(),
                Vec::new(),
                Some(error),
                &mut recorder,
            );
        }
    };

    if preflight {
        // docs/semantics.md §5: a plan with a call that is denied whenever it is reached runs no tool at all.
        let analysis = crate::analysis::analyze(&parsed, input.policy, input.mode);
        let denials: Vec<_> = analysis.certain_denials().cloned().collect();
        if !denials.is_empty() {
            let mut report = denied_before_run(&denials, &mut recorder);
            // The lint's own diagnostics say why, with the sources and a fix.
            report.diagnostics = analysis
                .diagnostics
                .into_iter()
                .filter(|d| d.code == "Z201")
                .collect();
            return report;
        }
    }

    let exec_limits = exec_limits(input.policy);
    let mut host = RunHost {
        policy: input.policy,
        backend,
        space,
        recorder,
        next_call: 1,
        tool_calls: 0,
        decisions: Vec::new(),
        calls_run: Vec::new(),
        worst: Outcome::Allow,
        stop: None,
        tainted_sources: BTreeSet::new(),
        pending: None,
        approver,
    };
    let mut parked = None;
    // Monty documents internal assertions that may panic on an inconsistent VM state. A panic must not take
    // the process (and the trace) down with it: it ends the run as an error, and no further call happens.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        exec::execute_parking(&lowered, &sigs, &mut host, &exec_limits, print, &mut parked)
    }))
    .unwrap_or_else(|_| ExecOutcome::Failed {
        exc_type: "InternalError".into(),
        message: "the interpreter failed; the run was stopped".into(),
        line: None,
    });
    host.finish_run(outcome, parked)
}

/// A suspended run, ready to continue in a new process: the decision a human took on its claim.
pub struct Resumption<'a> {
    pub input: RunInput<'a>,
    pub paused: crate::runtime::exec::PausedRun,
    pub space: LabelSpace,
    pub state: HostState,
    /// The claim as it was recorded when the run was suspended.
    pub claim: Call,
    /// Approved (the claimed call runs now, exactly as claimed) or rejected (the run stops).
    pub approved: bool,
}

/// Continues a suspended run after the human's decision (already recorded in the trace by the caller).
/// The paused call must be exactly the claimed one; any difference refuses to run it.
pub fn resume_plan(
    r: Resumption<'_>,
    backend: &mut dyn Backend,
    trace: Option<&mut TraceWriter>,
    print: &mut dyn FnMut(&str),
) -> RunReport {
    let sigs = r.input.policy.signatures();
    let mut recorder = Recorder {
        trace,
        failed: None,
    };
    let lowered = match plan::check(r.input.source, &sigs)
        .and_then(|p| lower::compile(&p.module, r.input.source, &sigs, r.input.mode))
    {
        Ok(l) => l,
        Err(diagnostics) => return rejected(diagnostics, &mut recorder),
    };
    let HostState {
        next_call,
        tool_calls,
        decisions,
        calls_run,
        worst,
        tainted_sources,
    } = r.state;
    let mut host = RunHost {
        policy: r.input.policy,
        backend,
        space: r.space,
        recorder,
        next_call,
        tool_calls,
        decisions,
        calls_run,
        worst,
        stop: None,
        tainted_sources,
        pending: None,
        approver: None,
    };
    let claim = &r.claim;
    let reply = if !r.approved {
        host.stop = Some(Stop::Rejected);
        HostReply::Deny {
            message: format!("`{}` was rejected by the user", claim.tool),
        }
    } else {
        match exec::paused_call(&r.paused) {
            Ok(paused) if paused.name == claim.tool && paused.line == claim.line => host.perform(
                &paused.name,
                claim.call_id,
                &paused.args,
                paused.line,
                false,
            ),
            _ => {
                host.stop = Some(Stop::Denied);
                HostReply::Deny {
                    message: "the paused call is not the claimed one".into(),
                }
            }
        }
    };
    let exec_limits = exec_limits(r.input.policy);
    let mut parked = None;
    let paused = r.paused;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        exec::resume(
            paused,
            reply,
            &lowered,
            &sigs,
            &mut host,
            &exec_limits,
            print,
            &mut parked,
        )
    }))
    .unwrap_or_else(|_| ExecOutcome::Failed {
        exc_type: "InternalError".into(),
        message: "the interpreter failed; the run was stopped".into(),
        line: None,
    });
    host.finish_run(outcome, parked)
}

fn rejected(diagnostics: Vec<Diagnostic>, recorder: &mut Recorder<'_>) -> RunReport {
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
fn predicted(
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

fn denied_before_run(
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
                    // No value exists before the run.
                    digest: "none".into(),
                    preview: None,
                })
                .collect(),
            pc: predicted(&d.pc_must, &d.pc_sources),
            decision: serde_plain(&Outcome::Deny),
            rule: d.must.rule.clone(),
            reason: d.must.reason.clone(),
            before_run: true,
        }));
        decisions.push(CallDecision {
            call_id,
            tool: d.tool.clone(),
            line: d.line,
            decision: Outcome::Deny,
            rule: d.must.rule.clone(),
            reason: format!("denied before the run: {}", d.must.reason),
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

fn finish(
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
    }
}

fn serde_plain<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// Appends to the trace if there is one, remembering the first failure (which stops further effects).
struct Recorder<'t> {
    trace: Option<&'t mut TraceWriter>,
    failed: Option<String>,
}

impl Recorder<'_> {
    /// Keeps a value the trace names by `digest` in the owner's store, when there is one.
    fn keep(&mut self, digest: &str, value: &Value) {
        if let Some(trace) = self.trace.as_deref_mut() {
            trace.keep_value(digest, value);
        }
    }

    fn record(&mut self, record: Record) -> bool {
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

/// Why the run stopped early, as the host saw it.
enum Stop {
    Denied,
    Suspended,
    /// A human rejected a `confirm` claim.
    Rejected,
    VerifierFailed {
        line: u32,
        message: String,
    },
    ToolFailed {
        line: u32,
        message: String,
    },
}

struct RunHost<'a, 't> {
    policy: &'a Policy,
    backend: &'a mut dyn Backend,
    space: LabelSpace,
    recorder: Recorder<'t>,
    next_call: u32,
    tool_calls: u32,
    decisions: Vec<CallDecision>,
    calls_run: Vec<String>,
    worst: Outcome,
    stop: Option<Stop>,
    /// `tool#id` of every result or verifier output that was not trusted-and-public: an error message may
    /// depend on any of them.
    tainted_sources: BTreeSet<String>,
    /// The claim a suspended run waits on.
    pending: Option<Pending>,
    /// Asks a human on the spot (`run --confirm ask` on a terminal): whether the claim is approved, and by
    /// whom. Without it, a `confirm` suspends the run.
    approver: Option<&'a mut Approver>,
}

/// Puts a `confirm` claim to a human on the spot: whether it is approved, and by whom.
pub type Approver = dyn FnMut(&Call, &ClaimShown) -> (bool, String);

/// What the person deciding a `confirm` claim sees besides the recorded claim. The approver is the
/// policy's user, who may read every value, so the values are shown in clear (never written to the trace).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimShown {
    /// Each argument's value, as JSON.
    pub values: Vec<(String, Value)>,
    /// Per guarded argument, the recipients who may not read it.
    pub non_readers: Vec<(String, Vec<String>)>,
}

/// A `confirm` claim waiting for a human.
struct Pending {
    call: Call,
    claim_digest: String,
    shown: ClaimShown,
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

impl RunHost<'_, '_> {
    /// Ends the run: a suspended one keeps what a snapshot needs.
    fn finish_run(
        mut self,
        outcome: ExecOutcome,
        parked: Option<crate::runtime::exec::PausedRun>,
    ) -> RunReport {
        let state = HostState {
            next_call: self.next_call,
            tool_calls: self.tool_calls,
            decisions: self.decisions.clone(),
            calls_run: self.calls_run.clone(),
            worst: self.worst,
            tainted_sources: self.tainted_sources.clone(),
        };
        let space = self.space.clone();
        let paused = parked.and_then(|p| serde_json::to_value(&p).ok());
        let pending = self.pending.take();
        if matches!(self.stop, Some(Stop::Suspended)) && (paused.is_none() || pending.is_none()) {
            // Without the paused call nothing could ever be resumed: fail closed as a denial.
            self.stop = Some(Stop::Denied);
        }
        let mut report = self.conclude(outcome);
        if report.status == Status::Suspended
            && let (Some(paused), Some(p)) = (paused, pending)
        {
            report.suspension = Some(Suspension {
                paused,
                space,
                state,
                claim: p.call,
                claim_digest: p.claim_digest,
                shown: p.shown,
            });
        }
        report
    }

    fn fresh_call(&mut self, name: &str) -> u32 {
        let id = self.next_call;
        self.next_call = self.next_call.saturating_add(1);
        self.space.record_call(id, name);
        id
    }

    fn verifier(&mut self, name: &str, args: Vec<(String, LValue)>, line: u32) -> HostReply {
        let Some(spec) = self.policy.verifier(name) else {
            return HostReply::Deny {
                message: format!("`{name}` is not a verifier of this policy"),
            };
        };
        let call_id = self.fresh_call(name);
        let Some(kind) = self.space.kind_index(spec.mints()) else {
            return HostReply::Deny {
                message: format!("verifier `{name}` mints an undeclared kind"),
            };
        };
        let value = match <[(String, LValue); 1]>::try_from(args) {
            Ok([(_, value)]) => value,
            Err(_) => {
                return self.verifier_failed(
                    name,
                    call_id,
                    line,
                    "a verifier takes exactly one argument",
                );
            }
        };
        if matches!(value.raw, Raw::List(_) | Raw::Tuple(_) | Raw::Dict(_)) {
            return self.verifier_failed(
                name,
                call_id,
                line,
                "a verifier checks one value, not a container",
            );
        }
        if let Err(why) = crate::tools::verify::check(spec, &value.to_json()) {
            return self.verifier_failed(name, call_id, line, &why);
        }
        let minted = LValue::new(value.raw, value.label.mint(kind));
        let label = self.space.decode(&minted.label);
        if !trace::redact::is_clean(&label) {
            self.tainted_sources.insert(format!("{name}#{call_id}"));
        }
        let view = self.space.describe(&label);
        if !self.recorder.record(Record::Verifier(VerifierUse {
            call_id,
            verifier: name.to_string(),
            line,
            ok: true,
            label: view,
        })) {
            return self.trace_failed();
        }
        HostReply::Return(minted)
    }

    fn verifier_failed(&mut self, name: &str, call_id: u32, line: u32, why: &str) -> HostReply {
        let view = self.space.describe(&Label::unknown());
        self.recorder.record(Record::Verifier(VerifierUse {
            call_id,
            verifier: name.to_string(),
            line,
            ok: false,
            label: view,
        }));
        let message = format!("{name}: {why}");
        self.stop = Some(Stop::VerifierFailed {
            line,
            message: message.clone(),
        });
        HostReply::Fail {
            exc_type: "VerificationError".into(),
            message,
        }
    }

    fn trace_failed(&mut self) -> HostReply {
        self.stop = Some(Stop::Denied);
        HostReply::Deny {
            message: "the trace could not be written, so no further effect may happen".into(),
        }
    }

    fn tool(
        &mut self,
        name: &str,
        args: Vec<(String, LValue)>,
        pc: Packed,
        line: u32,
    ) -> HostReply {
        let call_id = self.fresh_call(name);
        self.tool_calls = self.tool_calls.saturating_add(1);
        let claim = Claim {
            tool: name.to_string(),
            args: args.iter().map(|(n, v)| self.arg_claim(n, v)).collect(),
            pc: self.space.decode(&pc.influence()),
            calls_so_far: self.tool_calls - 1,
        };
        let decision = policy::decide(self.policy, &self.space, &claim);
        let call = Call {
            call_id,
            line,
            tool: name.to_string(),
            args: args
                .iter()
                .zip(&claim.args)
                .map(|((n, v), c)| {
                    let json = v.to_json();
                    let (digest, preview) =
                        trace::redact::stored(&json, &self.space.decode(&v.deep_label()));
                    self.recorder.keep(&digest, &json);
                    ArgRecord {
                        name: n.clone(),
                        label: self.space.describe(&c.label),
                        digest,
                        preview,
                    }
                })
                .collect(),
            // `pc` is checked for integrity, tags and readers; as a choice it carries no kinds, and listing
            // "every kind" (the neutral influence) would mislead a reader of the trace.
            pc: self.space.describe(&Label {
                verified: crate::label::KindSet::NONE,
                ..claim.pc.clone()
            }),
            decision: serde_plain(&decision.outcome),
            rule: decision.rule.clone(),
            reason: decision.reason.clone(),
            before_run: false,
        };
        let recorded = self.recorder.record(Record::Call(call.clone()));
        self.decisions.push(CallDecision {
            call_id,
            tool: name.to_string(),
            line,
            decision: decision.outcome,
            rule: decision.rule.clone(),
            reason: decision.reason.clone(),
        });
        self.worst = self.worst.max(decision.outcome);
        if !recorded {
            return self.trace_failed();
        }
        let draft = match decision.outcome {
            Outcome::Allow => false,
            Outcome::Draft => true,
            Outcome::Confirm => {
                let digest = call.claim_digest();
                let shown = ClaimShown {
                    values: args.iter().map(|(n, v)| (n.clone(), v.to_json())).collect(),
                    non_readers: policy::non_readers(self.policy, &self.space, &claim),
                };
                if let Some(ask) = self.approver.as_mut() {
                    let (approved, by) = ask(&call, &shown);
                    let decision = if approved { "approved" } else { "rejected" };
                    if !self.recorder.record(Record::Approval(Approval {
                        call_id,
                        decision: decision.into(),
                        by,
                        at: jiff::Timestamp::now().to_string(),
                        claim_digest: digest,
                    })) {
                        return self.trace_failed();
                    }
                    if !approved {
                        self.stop = Some(Stop::Rejected);
                        return HostReply::Deny {
                            message: format!("`{name}` was rejected by the user"),
                        };
                    }
                    return self.perform(name, call_id, &args, line, false);
                }
                self.stop = Some(Stop::Suspended);
                self.pending = Some(Pending {
                    call,
                    claim_digest: digest,
                    shown,
                });
                return HostReply::Suspend {
                    message: format!("`{name}` needs confirmation: {}", decision.reason),
                };
            }
            Outcome::Deny => {
                self.stop = Some(Stop::Denied);
                return HostReply::Deny {
                    message: format!("`{name}` denied: {}", decision.reason),
                };
            }
        };

        self.perform(name, call_id, &args, line, draft)
    }

    /// Runs a decided call (allowed, drafted, or approved by a human) and labels and records its result.
    fn perform(
        &mut self,
        name: &str,
        call_id: u32,
        args: &[(String, LValue)],
        line: u32,
        draft: bool,
    ) -> HostReply {
        let raw_args: Map<String, Value> =
            args.iter().map(|(n, v)| (n.clone(), v.to_json())).collect();
        let source = self
            .policy
            .tool(name)
            .and_then(|t| t.source.map(|s| s.name()));
        let value = match self.backend.invoke(name, source, &raw_args, draft) {
            Ok(value) => value,
            Err(message) => {
                self.recorder.record(Record::Error(ErrorRecord {
                    line: Some(line),
                    exc_type: "ToolError".into(),
                    message: format!("{name}#{call_id} failed"),
                }));
                self.stop = Some(Stop::ToolFailed {
                    line,
                    message: format!("{name}: {message}"),
                });
                return HostReply::Fail {
                    exc_type: "ToolError".into(),
                    message: format!("{name} failed"),
                };
            }
        };
        self.calls_run.push(name.to_string());
        let args_join = args
            .iter()
            .fold(Packed::LITERAL, |acc, (_, v)| acc.join(&v.deep_label()));
        // Tags the policy gives results by the path asked for (`returns.tags_when`), on every part of it.
        let rules = self
            .policy
            .tool(name)
            .and_then(|t| t.returns().tags_when)
            .unwrap_or_default();
        let mut by_path = crate::label::Label::literal();
        for tag in policy::path_tags::tags_for_call(&rules, &raw_args) {
            match self.space.tag_index(&tag) {
                Some(i) => by_path.tags.0 |= 1 << i,
                // Validation refused undeclared tags; should one slip through, the result is unknown.
                None => by_path.unknown = true,
            }
        }
        let args_join = args_join.join(&self.space.encode(&by_path));
        let result = policy::label_result(
            self.policy,
            name,
            &value,
            &mut self.space,
            call_id,
            args_join,
        );
        let label = self.space.decode(&result.deep_label());
        if !trace::redact::is_clean(&label) {
            self.tainted_sources.insert(format!("{name}#{call_id}"));
        }
        let (digest, preview) = trace::redact::stored(&value, &label);
        self.recorder.keep(&digest, &value);
        let view = self.space.describe(&label);
        if !self.recorder.record(Record::Result(CallResult {
            call_id,
            tool: name.to_string(),
            label: view,
            digest,
            preview,
        })) {
            return self.trace_failed();
        }
        HostReply::Return(result)
    }

    fn arg_claim(&self, name: &str, v: &LValue) -> ArgClaim {
        let (label, elements) = match &v.raw {
            Raw::List(items) | Raw::Tuple(items) => (
                self.space.decode(&v.label),
                Some(
                    items
                        .iter()
                        .map(|i| self.space.decode(&i.deep_label()))
                        .collect(),
                ),
            ),
            Raw::Dict(_) => (self.space.decode(&v.deep_label()), None),
            _ => (self.space.decode(&v.label), None),
        };
        // Recipients are a string or a flat list or tuple of strings; any other shape is `Malformed`,
        // which the decision refuses wherever it names recipients.
        let texts = match &v.raw {
            Raw::Str(s) => Texts::one(s.clone()),
            Raw::List(items) | Raw::Tuple(items) => items
                .iter()
                .map(|i| match &i.raw {
                    Raw::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .collect::<Option<Vec<String>>>()
                .map_or(Texts::Malformed, Texts::Strings),
            _ => Texts::Malformed,
        };
        ArgClaim {
            name: name.to_string(),
            label,
            elements,
            texts,
            digest: trace::redact::digest(&v.to_json()),
        }
    }

    fn redacted(&self, message: String) -> String {
        if self.tainted_sources.is_empty() {
            return message;
        }
        let sources: Vec<String> = self.tainted_sources.iter().cloned().collect();
        trace::redact::redact_message(&message, false, &sources)
    }

    fn conclude(mut self, outcome: ExecOutcome) -> RunReport {
        let worst = self.worst;
        let (status, outcome_name, error) = match (outcome, self.stop.take()) {
            (ExecOutcome::Completed, _) => (Status::Completed, serde_plain(&worst), None),
            (ExecOutcome::Denied { .. }, Some(Stop::Suspended)) => {
                (Status::Suspended, serde_plain(&Outcome::Confirm), None)
            }
            (_, Some(Stop::VerifierFailed { line, message })) => {
                let message = self.redacted(message);
                let error = PlanError {
                    line: Some(line),
                    exc_type: "VerificationError".into(),
                    message,
                };
                (Status::Error, "error".into(), Some(error))
            }
            (_, Some(Stop::ToolFailed { line, message })) => {
                let message = self.redacted(message);
                let error = PlanError {
                    line: Some(line),
                    exc_type: "ToolError".into(),
                    message,
                };
                (Status::Error, "error".into(), Some(error))
            }
            (ExecOutcome::Denied { .. }, Some(Stop::Denied | Stop::Rejected)) => {
                (Status::Denied, "deny".into(), None)
            }
            (ExecOutcome::Denied { line, message }, None) => {
                // A denial by the runtime itself: a no-sensitive-upgrade violation, an unknown function, a
                // malformed argument or an exhausted budget. Like a policy denial (docs/semantics.md §5).
                self.recorder.record(Record::Error(ErrorRecord {
                    line: Some(line),
                    exc_type: "Denied".into(),
                    message: message.clone(),
                }));
                let error = PlanError {
                    line: Some(line),
                    exc_type: "Denied".into(),
                    message,
                };
                (Status::Denied, "deny".into(), Some(error))
            }
            (
                ExecOutcome::Failed {
                    exc_type,
                    message,
                    line,
                },
                stop,
            ) => {
                if matches!(stop, Some(Stop::Suspended)) {
                    (Status::Suspended, serde_plain(&Outcome::Confirm), None)
                } else if matches!(stop, Some(Stop::Denied | Stop::Rejected)) {
                    (Status::Denied, "deny".into(), None)
                } else {
                    let message = self.redacted(message);
                    (
                        Status::Error,
                        "error".into(),
                        Some(PlanError {
                            line,
                            exc_type,
                            message,
                        }),
                    )
                }
            }
        };
        let (status, outcome_name) = if status == Status::Completed && worst == Outcome::Deny {
            // Cannot happen (a deny stops the run), but never report a denial as success.
            (Status::Denied, "deny".to_string())
        } else {
            (status, outcome_name)
        };
        let decisions = std::mem::take(&mut self.decisions);
        let calls_run = std::mem::take(&mut self.calls_run);
        finish(
            status,
            outcome_name,
            decisions,
            calls_run,
            error,
            &mut self.recorder,
        )
    }
}

impl Host for RunHost<'_, '_> {
    fn call(
        &mut self,
        name: &str,
        args: Vec<(String, LValue)>,
        pc: Packed,
        line: u32,
    ) -> HostReply {
        if self.stop.is_some() {
            return HostReply::Deny {
                message: "the run is stopping".into(),
            };
        }
        if self.policy.verifier(name).is_some() {
            self.verifier(name, args, line)
        } else {
            self.tool(name, args, pc, line)
        }
    }
}
