//! The host side of a run: every tool or verifier call the plan makes arrives here and goes claim →
//! decision → record → act. It builds the claim from the labelled arguments, asks
//! [`crate::policy::decide`], records the call in the trace before anything happens, then performs it
//! through the [`Backend`] (or drafts, suspends, asks a human, or denies), and labels the result.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::backend::Backend;
use super::report::{
    CallDecision, ClaimShown, DraftLabels, HostState, OutputSegment, PlanError, Recorder,
    RunReport, ShownEffect, ShownPart, Status, Suspension, finish, serde_plain,
};
use crate::label::{Label, LabelSpace, Packed};
use crate::policy::servers::ToolSource;
use crate::policy::{self, ArgClaim, Claim, Outcome, Policy, Texts};
use crate::runtime::exec::{ExecOutcome, Host, HostReply};
use crate::runtime::machine::Stopped;
use crate::text::OutsideText;
use crate::trace::record::{
    Approval, ArgRecord, Call, CallResult, Output as OutputRecord, PlanError as ErrorRecord,
    VerifierUse,
};
use crate::trace::{self, Record};
use crate::value::{LValue, Raw};

/// Why the run stopped early, as the host saw it.
pub(super) enum Stop {
    Denied,
    Suspended,
    /// A human rejected a `confirm` claim.
    Rejected,
    VerifierFailed {
        line: u32,
        message: String,
    },
    /// A built-in tool's argument had the wrong type; the call was never performed.
    WrongType {
        line: u32,
        message: String,
    },
    ToolFailed {
        line: u32,
        message: String,
        /// What the tool, server or model wrote, for the person at the terminal only.
        tool_said: Option<OutsideText>,
    },
    /// The run was stopped from outside while a call was under way (the call failed because of it).
    Stopped {
        line: u32,
        why: Stopped,
    },
}

pub(super) struct RunHost<'a, 't> {
    pub(super) policy: &'a Policy,
    pub(super) backend: &'a mut dyn Backend,
    pub(super) space: LabelSpace,
    pub(super) recorder: Recorder<'t>,
    pub(super) next_call: u32,
    pub(super) tool_calls: u32,
    pub(super) decisions: Vec<CallDecision>,
    pub(super) calls_run: Vec<String>,
    pub(super) worst: Outcome,
    pub(super) stop: Option<Stop>,
    /// `tool#id` of every result or verifier output that was not trusted-and-public: an error message may
    /// depend on any of them.
    pub(super) tainted_sources: BTreeSet<String>,
    /// What the plan printed in this process, with labels.
    pub(super) output: Vec<OutputSegment>,
    /// The segment being printed (consecutive prints with one label), recorded at the next call or the end.
    pub(super) printing: Option<(Packed, String)>,
    /// Draft id → the labels of what this run wrote into it (shown when a commit of it is claimed).
    pub(super) drafts: std::collections::BTreeMap<String, DraftLabels>,
    /// The claim a suspended run waits on.
    pub(super) pending: Option<Pending>,
    /// Asks a human on the spot (`run --confirm ask` on a terminal): whether the claim is approved, and by
    /// whom. Without it, a `confirm` suspends the run.
    pub(super) approver: Option<&'a mut Approver>,
    /// The planner context the plan was written in, kept for a snapshot.
    pub(super) planner_context: crate::planner::ContextLabel,
    /// The packed label of the plan's literals in this run (the lowered program's `_LIT`): the literal
    /// label, or the planner context's ([`crate::planner::ContextLabel::literal_bits`]).
    pub(super) literal: Packed,
    /// What the run sent each party that keeps state ([`HostState::sent_to_stateful`]).
    pub(super) sent_to_stateful: std::collections::BTreeMap<String, Packed>,
    /// The person's remembered values, read when the run started or resumed, for `known(ROLE)`; `None`:
    /// none are consulted (the policy names no `known` role), so none hold.
    pub(super) known: Option<&'a crate::known::store::Store>,
}

/// Puts a `confirm` claim to a human on the spot: whether it is approved, and by whom.
pub type Approver = dyn FnMut(&Call, &ClaimShown) -> (bool, String);

/// A `confirm` claim waiting for a human.
pub(super) struct Pending {
    pub(super) call: Call,
    pub(super) claim_digest: String,
    pub(super) shown: ClaimShown,
}

impl<'a, 't> RunHost<'a, 't> {
    /// A host starting from `state` (fresh, or where a suspended run stopped).
    pub(super) fn new(
        policy: &'a Policy,
        backend: &'a mut dyn Backend,
        space: LabelSpace,
        recorder: Recorder<'t>,
        state: HostState,
        approver: Option<&'a mut Approver>,
    ) -> RunHost<'a, 't> {
        let HostState {
            next_call,
            tool_calls,
            decisions,
            calls_run,
            worst,
            tainted_sources,
            drafts,
            planner_context,
            sent_to_stateful,
        } = state;
        let mut space = space;
        let literal = Packed::from_bits(planner_context.literal_bits(&mut space));
        // A literal the planner may have copied from what it read can fill an error message: redact them
        // as if it were tool data (docs/semantics.md, "Redaction").
        let mut tainted_sources = tainted_sources;
        if !planner_context.is_clean() {
            tainted_sources.insert(format!(
                "{}#{}",
                crate::planner::CONTEXT_SOURCE,
                crate::planner::CONTEXT_CALL
            ));
        }
        RunHost {
            policy,
            backend,
            space,
            recorder,
            next_call,
            tool_calls,
            decisions,
            calls_run,
            worst,
            stop: None,
            tainted_sources,
            output: Vec::new(),
            printing: None,
            drafts,
            pending: None,
            approver,
            planner_context,
            literal,
            sent_to_stateful,
            known: None,
        }
    }
}

impl RunHost<'_, '_> {
    /// Ends the run: a suspended one keeps what a snapshot needs.
    pub(super) fn finish_run(
        mut self,
        outcome: ExecOutcome,
        parked: Option<crate::runtime::exec::PausedRun>,
    ) -> RunReport {
        self.flush_output();
        let state = HostState {
            next_call: self.next_call,
            tool_calls: self.tool_calls,
            decisions: self.decisions.clone(),
            calls_run: self.calls_run.clone(),
            worst: self.worst,
            tainted_sources: self.tainted_sources.clone(),
            drafts: self.drafts.clone(),
            planner_context: self.planner_context.clone(),
            sent_to_stateful: self.sent_to_stateful.clone(),
        };
        let space = self.space.clone();
        let paused = parked;
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
        // `verify_x(v, or_none=True)`: a value that fails is answered with None instead of an error. The
        // lowering passes the flag only as the plan's literal; anything else is refused.
        let mut args = args;
        let or_none = match args.iter().position(|(k, _)| k == "or_none") {
            Some(i) => match args.remove(i).1 {
                LValue {
                    raw: Raw::Bool(b),
                    label,
                } if label == self.literal => b,
                _ => {
                    return HostReply::Deny {
                        message: format!(
                            "`{name}`: `or_none` must be True or False, written in the plan"
                        ),
                    };
                }
            },
            None => false,
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
        let refused = if matches!(value.raw, Raw::List(_) | Raw::Tuple(_) | Raw::Dict(_)) {
            Some("a verifier checks one value, not a container".to_string())
        } else {
            crate::tools::verify::check(spec, &value.to_json()).err()
        };
        if let Some(why) = refused {
            if or_none {
                return self.verifier_none(name, call_id, line, value.label);
            }
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

    /// `or_none=True` and the value failed: recorded as a failed use, answered with None that carries
    /// the checked value's label (without the kind), so what depends on the outcome depends on that
    /// value, exactly as a run stopped by the error form would.
    fn verifier_none(&mut self, name: &str, call_id: u32, line: u32, label: Packed) -> HostReply {
        let view = self.space.describe(&self.space.decode(&label));
        if !trace::redact::is_clean(&self.space.decode(&label)) {
            self.tainted_sources.insert(format!("{name}#{call_id}"));
        }
        if !self.recorder.record(Record::Verifier(VerifierUse {
            call_id,
            verifier: name.to_string(),
            line,
            ok: false,
            label: view,
        })) {
            return self.trace_failed();
        }
        HostReply::Return(LValue::new(Raw::None, label))
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

    /// A built-in tool's argument of a type its schema does not allow stops the run before the call is
    /// performed: no effect. The message is Zamburak's (docs/semantics.md, "Redaction"): the
    /// argument and the type it must have; the type it had only when the value is the plan's own, since a
    /// value read from data could have its type chosen by whoever wrote the data.
    fn wrong_type(
        &mut self,
        name: &str,
        args: &[(String, LValue)],
        line: u32,
    ) -> Option<HostReply> {
        let source = self.policy.tool(name)?.source.as_ref()?.builtin()?;
        let json: Map<String, Value> = args.iter().map(|(n, v)| (n.clone(), v.to_json())).collect();
        let m = crate::tools::records::argument_mismatch(source, &json)?;
        let (_, value) = args.iter().find(|(n, _)| *n == m.arg)?;
        let label = self.space.decode(&value.deep_label());
        let got = if trace::redact::is_clean(&label) {
            format!("got {}", m.got)
        } else {
            let sources = self.space.describe(&label).sources;
            format!("got a value of another type, from {}", sources.join(", "))
        };
        let message = format!(
            "`{name}`: argument `{}` must be {}; {got}",
            m.arg, m.expected
        );
        self.recorder.record(Record::Error(ErrorRecord {
            line: Some(line),
            exc_type: "TypeError".into(),
            message: message.clone(),
        }));
        self.stop = Some(Stop::WrongType {
            line,
            message: message.clone(),
        });
        Some(HostReply::Fail {
            exc_type: "TypeError".into(),
            message,
        })
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
        let mut claim = Claim {
            tool: name.to_string(),
            args: args.iter().map(|(n, v)| self.arg_claim(n, v)).collect(),
            pc: self.space.decode(&pc.influence()),
            calls_so_far: self.tool_calls - 1,
        };
        let told = self.consult_remembered(&args, &mut claim);
        let decision = policy::decide(self.policy, &self.space, &claim);
        // Whether what the person remembered could change this decision: the outcome with every `known`
        // role holding against none. That depends on the policy and the labels alone; only then is the
        // decision the store's, and the trace marks it (the planner's answer is cut before it).
        let store_decides = !told.is_empty() && {
            let with = |r: &dyn Fn() -> policy::Remembered| {
                let mut c = claim.clone();
                for a in &mut c.args {
                    a.remembered = r();
                }
                policy::decide(self.policy, &self.space, &c).outcome
            };
            with(&|| policy::Remembered::MayBe) != with(&|| policy::Remembered::Nothing)
        };
        // What approving performs, when the call waits for a person: never stronger than the claim names.
        let approval_drafts = decision.outcome == Outcome::Confirm
            && policy::on_approval(self.policy, &self.space, &claim) == Outcome::Draft;
        let call = Call {
            call_id,
            line,
            tool: name.to_string(),
            args: args
                .iter()
                .zip(&claim.args)
                .map(|((n, v), c)| {
                    let json = v.to_json();
                    let whole = self.space.decode(&v.deep_label());
                    let (digest, preview) = self.recorder.stored(&json, &whole);
                    self.recorder.keep(&digest, &json);
                    // The whole value, not the list's own label: a list the plan wrote around a value
                    // read from data carries that value's label and sources.
                    let label = self.space.describe(&whole);
                    let elements = c.elements.as_ref().and_then(|els| {
                        let els = els.iter().map(|l| self.space.describe(l)).collect();
                        ArgRecord::elements_beside(&label, els)
                    });
                    ArgRecord {
                        name: n.clone(),
                        label,
                        elements,
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
            rule: decision.rule.to_string(),
            reason: decision.reason.clone(),
            before_run: false,
            tool_sha256: self
                .policy
                .tool(name)
                .and_then(|t| t.source.as_ref())
                .and_then(|s| self.backend.pin(s)),
            on_approval: approval_drafts.then(|| "draft".to_string()),
            remembered: if store_decides {
                crate::trace::record::RememberedUse::of(&told)
            } else {
                Vec::new()
            },
        };
        let recorded = self.recorder.record(Record::Call(call.clone()));
        self.decisions.push(CallDecision {
            call_id,
            tool: name.to_string(),
            line,
            decision: decision.outcome,
            rule: decision.rule.clone(),
            reason: decision.reason.clone(),
            approval: None,
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
                    effect: self.effect_shown(name, &args),
                    novelty: told,
                    conditions: self.conditions_of(&claim.pc),
                };
                if let Some(ask) = self.approver.as_mut() {
                    let (approved, by) = ask(&call, &shown);
                    let decision = if approved { "approved" } else { "rejected" };
                    self.mark_decided(call_id, decision);
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
                    return self.perform(name, call_id, &args, &pc, line, approval_drafts);
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

        self.perform(name, call_id, &args, &pc, line, draft)
    }

    /// What the call would act on beyond its arguments, for the person deciding its claim: for a commit, the
    /// draft as it would be sent, with the labels this run wrote it with (or none, when another run did).
    fn effect_shown(&self, name: &str, args: &[(String, LValue)]) -> Option<ShownEffect> {
        let source = self.policy.tool(name)?.source.as_ref()?;
        let raw: Map<String, Value> = args.iter().map(|(n, v)| (n.clone(), v.to_json())).collect();
        let view = match self.backend.preview(source, &raw)? {
            Ok(view) => view,
            Err(why) => {
                return Some(ShownEffect {
                    what: "the draft as it would be sent".into(),
                    parts: Vec::new(),
                    problem: Some(format!(
                        "it cannot be shown: {why}; committing it will fail"
                    )),
                });
            }
        };
        let known = raw
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| self.drafts.get(id));
        let label_of = |part: &str| {
            // `cc` is not a draft argument: its label is the recipients'.
            let arg = if part == "cc" { "to" } else { part };
            known.and_then(|k| {
                k.labels
                    .iter()
                    .find(|(n, _)| n == arg)
                    .map(|(_, l)| l.clone())
            })
        };
        let non_readers_of = |part: &str| {
            known
                .and_then(|k| k.non_readers.iter().find(|(n, _)| n == part))
                .map(|(_, who)| who.clone())
                .unwrap_or_default()
        };
        let parts = ["to", "cc", "subject", "body"]
            .iter()
            .filter(|p| !(*p == &"cc" && view["cc"].as_array().is_some_and(Vec::is_empty)))
            .map(|p| ShownPart {
                name: p.to_string(),
                value: view[*p].clone(),
                label: label_of(p),
                non_readers: non_readers_of(p),
            })
            .collect();
        let problem = (view["digest_matches"] != Value::Bool(true)).then(|| {
            "the draft changed since its digest was taken: committing it will be refused"
                .to_string()
        });
        Some(ShownEffect {
            what: "the draft as it would be sent".into(),
            parts,
            problem,
        })
    }

    /// Keeps the labels a draft was written with, so that a claim to commit it can show them.
    fn remember_draft(&mut self, name: &str, id: &str, args: &[(String, LValue)]) {
        let claim = Claim {
            tool: name.to_string(),
            args: args.iter().map(|(n, v)| self.arg_claim(n, v)).collect(),
            pc: Label::literal(),
            calls_so_far: 0,
        };
        let labels = args
            .iter()
            .map(|(n, v)| {
                (
                    n.clone(),
                    self.space.describe(&self.space.decode(&v.deep_label())),
                )
            })
            .collect();
        let non_readers = policy::non_readers(self.policy, &self.space, &claim);
        self.drafts.insert(
            id.to_string(),
            DraftLabels {
                labels,
                non_readers,
            },
        );
    }

    /// Records the output segment being printed, if any: in the trace (text only when trusted and public)
    /// and in the report.
    pub(super) fn flush_output(&mut self) {
        let Some((packed, text)) = self.printing.take() else {
            return;
        };
        let label = self.space.decode(&packed);
        let view = self.space.describe(&label);
        let value = Value::String(text);
        let (digest, preview) = self.recorder.stored(&value, &label);
        self.recorder.keep(&digest, &value);
        // A trace that cannot be written stops the run's effects at the next call; printing goes on.
        self.recorder.record(Record::Output(OutputRecord {
            after_call: self.next_call.saturating_sub(1),
            label: view.clone(),
            digest,
            preview,
        }));
        let Value::String(text) = value else {
            return;
        };
        self.output.push(OutputSegment {
            text: trace::redact::is_clean(&label).then(|| text.clone()),
            label: view,
            whole: text,
        });
    }

    /// Records on the reported decision of `call_id` what the person decided.
    pub(super) fn mark_decided(&mut self, call_id: u32, decision: &str) {
        if let Some(d) = self
            .decisions
            .iter_mut()
            .rev()
            .find(|d| d.call_id == call_id)
        {
            d.approval = Some(decision.to_string());
        }
    }

    /// Runs a decided call (allowed, drafted, or approved by a human) and labels and records its result.
    pub(super) fn perform(
        &mut self,
        name: &str,
        call_id: u32,
        args: &[(String, LValue)],
        pc: &Packed,
        line: u32,
        draft: bool,
    ) -> HostReply {
        // After the decision, so a shape the policy refuses (a recipient that is not text) stays a denial;
        // before the effect, so a call the policy allowed never reaches the adapter with the wrong type.
        if let Some(reply) = self.wrong_type(name, args, line) {
            return reply;
        }
        let raw_args: Map<String, Value> =
            args.iter().map(|(n, v)| (n.clone(), v.to_json())).collect();
        let source = self.policy.tool(name).and_then(|t| t.source.as_ref());
        let kept_before = self.send_to_stateful(source, args, pc);
        // A write whose label cannot be kept does not happen: read back, it would be labelled as if it held
        // nothing of what it does (docs/semantics.md, "Stores keep labels").
        // What a draft carries of why it is one: the rule and the call, never a value or a reader's name
        // (the person may send it from their mail client, and the header goes with it).
        let note = draft.then(|| {
            let rule = self
                .decisions
                .iter()
                .rev()
                .find(|d| d.call_id == call_id)
                .map_or_else(|| "on approval".to_string(), |d| d.rule.to_string());
            format!(
                "drafted by Zamburak instead of sent: `{name}` at line {line} of the plan (call #{call_id}), rule {rule}; the run's trace says why. Review it before you send it."
            )
        });
        let invoked = match self.keep_written_label(name, args, &raw_args, pc) {
            Ok(()) => self
                .backend
                .invoke(name, source, &raw_args, note.as_deref()),
            Err(e) => Err(super::backend::Failure::from(format!(
                "the label of what it writes could not be kept ({e})"
            ))),
        };
        let value = match invoked {
            Ok(value) => value,
            Err(failure) => {
                // The message is Zamburak's words; what the tool or server wrote is in the report and the
                // trace only redacted (its length and digest), and shown once on the terminal.
                let message = match &failure.said {
                    Some(said) => format!("{} {}", failure.message, said.redacted()),
                    None => failure.message,
                };
                let tool_said = failure.said;
                if let Some(why) = failure.stopped {
                    self.stop = Some(Stop::Stopped { line, why });
                    return HostReply::Fail {
                        exc_type: "ToolError".into(),
                        message: format!("{name} failed"),
                    };
                }
                self.recorder.record(Record::Error(ErrorRecord {
                    line: Some(line),
                    exc_type: "ToolError".into(),
                    message: format!("{name}#{call_id} failed"),
                }));
                self.stop = Some(Stop::ToolFailed {
                    line,
                    message: format!("{name}: {message}"),
                    tool_said,
                });
                return HostReply::Fail {
                    exc_type: "ToolError".into(),
                    message: format!("{name} failed"),
                };
            }
        };
        self.calls_run.push(name.to_string());
        if draft && let Some(id) = value.get("id").and_then(Value::as_str) {
            self.remember_draft(name, id, args);
        }
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
        // Content scanners (`returns.scan`): each only ever adds its tag, to every part of the result like
        // the path's tags, and names itself for the trace and for a refusal's reason.
        let scanners = self
            .policy
            .tool(name)
            .and_then(|t| t.returns().scan)
            .unwrap_or_default();
        let scanned = policy::scan::scan(&scanners, &value);
        let by_scan = policy::scan::findings_label(&self.space, &scanned);
        for finding in &scanned {
            self.space
                .record_scan(call_id, &finding.tag, finding.scanner.name());
        }
        let kept = self.recalled_label(name, call_id, &raw_args, &value);
        let mut args_join = args_join
            .join(&self.space.encode(&by_path))
            .join(&self.space.encode(&by_scan))
            .join(&kept);
        if let Some(before) = &kept_before {
            args_join = args_join.join(before);
        }
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
        let (digest, preview) = self.recorder.stored(&value, &label);
        self.recorder.keep(&digest, &value);
        let view = self.space.describe(&label);
        if !self.recorder.record(Record::Result(CallResult {
            call_id,
            tool: name.to_string(),
            label: view,
            digest,
            preview,
            scanned,
        })) {
            return self.trace_failed();
        }
        HostReply::Return(result)
    }

    /// The party a call of `source` goes to, when the policy declares it `stateful: true`: a provider
    /// (`provider:NAME`) or an MCP server (`server:NAME`).
    fn stateful_party(&self, source: Option<&ToolSource>) -> Option<String> {
        match source? {
            ToolSource::Llm(p) => self
                .policy
                .provider(p)
                .filter(|spec| spec.stateful)
                .map(|_| format!("provider:{p}")),
            ToolSource::Mcp(m) => self
                .policy
                .server(&m.server)
                .filter(|spec| spec.stateful)
                .map(|_| format!("server:{}", m.server)),
            ToolSource::Builtin(_) => None,
        }
    }

    /// Notes what a call sends a party that keeps state, before it is sent, and returns the join of what
    /// the run had sent it before (docs/semantics.md, "The quarantined model is stateless"): its answer may
    /// draw on all of it, so the answer's label joins it. The control context of each call is sent too:
    /// that the call was made at all is what the party learns first. `None`: the party keeps no state.
    fn send_to_stateful(
        &mut self,
        source: Option<&ToolSource>,
        args: &[(String, LValue)],
        pc: &Packed,
    ) -> Option<Packed> {
        let party = self.stateful_party(source)?;
        let sent = args
            .iter()
            .fold(pc.influence(), |acc, (_, v)| acc.join(&v.deep_label()));
        let before = self.sent_to_stateful.get(&party).cloned();
        let all = before
            .as_ref()
            .map_or_else(|| sent.clone(), |b| b.join(&sent));
        self.sent_to_stateful.insert(party, all);
        Some(before.unwrap_or(Packed::LITERAL))
    }

    /// The sources of an untrusted control context, each with the plan line of its call: what a person
    /// deciding a claim the condition holds needs to find the `if` or loop that tested it.
    fn conditions_of(&self, pc: &Label) -> Vec<(String, u32)> {
        if !pc.is_untrusted() {
            return Vec::new();
        }
        self.space
            .describe(pc)
            .sources
            .into_iter()
            .map(|source| {
                let line = source
                    .rsplit_once('#')
                    .and_then(|(_, id)| id.parse::<u32>().ok())
                    .and_then(|id| self.decisions.iter().find(|d| d.call_id == id))
                    .map_or(0, |d| d.line);
                (source, line)
            })
            .collect()
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
            // `None` names no one (an unset `cc`): it adds no recipient, and a call whose recipient
            // arguments all name no one is still refused as naming none.
            Raw::None => Texts::Strings(Vec::new()),
            _ => Texts::Malformed,
        };
        ArgClaim {
            name: name.to_string(),
            label,
            elements,
            texts,
            digest: self.recorder.digest(&v.to_json()),
            remembered: policy::Remembered::Nothing,
        }
    }

    fn redacted(&self, message: String) -> String {
        if self.tainted_sources.is_empty() {
            return message;
        }
        let sources: Vec<String> = self.tainted_sources.iter().cloned().collect();
        trace::redact::redact_message(&message, false, &sources)
    }

    /// The key a failed dict lookup missed, as Python writes it, when it is trusted and public (a key the
    /// plan wrote, or computed from such keys): that text is the plan's, not data, so it is shown even
    /// when the run has read untrusted or private data (docs/semantics.md, "Redaction").
    fn shown_key(&self, key: &LValue) -> Option<String> {
        if !trace::redact::is_clean(&self.space.decode(&key.label)) {
            return None;
        }
        match &key.raw {
            Raw::Str(s) => Some(format!("{s:?}")),
            Raw::Int(i) => Some(i.to_string()),
            _ => None,
        }
    }

    fn conclude(mut self, outcome: ExecOutcome) -> RunReport {
        let worst = self.worst;
        let mut tool_said = None;
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
            (_, Some(Stop::WrongType { line, message })) => {
                let error = PlanError {
                    line: Some(line),
                    exc_type: "TypeError".into(),
                    message,
                };
                (Status::Error, "error".into(), Some(error))
            }
            (_, Some(Stop::Stopped { line, why })) => {
                let (exc_type, message) = super::exec::stopped_error(why);
                let error = PlanError {
                    line: Some(line),
                    exc_type: exc_type.into(),
                    message,
                };
                (Status::Error, "error".into(), Some(error))
            }
            (
                _,
                Some(Stop::ToolFailed {
                    line,
                    message,
                    tool_said: said,
                }),
            ) => {
                tool_said = said;
                // `message` is Zamburak's words (a tool's own text is in `tool_said`, shown redacted): never
                // data, so never redacted (docs/semantics.md, "Redaction").
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
                // malformed argument or an exhausted budget. Like a policy denial (docs/semantics.md,
                // "Decisions").
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
                    missing_key,
                },
                stop,
            ) => {
                if matches!(stop, Some(Stop::Suspended)) {
                    (Status::Suspended, serde_plain(&Outcome::Confirm), None)
                } else if matches!(stop, Some(Stop::Denied | Stop::Rejected)) {
                    (Status::Denied, "deny".into(), None)
                } else {
                    let message = match missing_key.as_ref().and_then(|k| self.shown_key(k)) {
                        Some(key) if exc_type == "KeyError" => key,
                        _ => self.redacted(message),
                    };
                    plan_error(line, exc_type, message)
                }
            }
            // The runtime's own text (a limit, a dead interpreter) quotes no data: never redacted.
            (
                ExecOutcome::Halted {
                    exc_type,
                    message,
                    line,
                },
                _,
            ) => plan_error(line, exc_type, message),
        };
        let (status, outcome_name) = if status == Status::Completed && worst == Outcome::Deny {
            // Cannot happen (a deny stops the run), but never report a denial as success.
            (Status::Denied, "deny".to_string())
        } else {
            (status, outcome_name)
        };
        let decisions = std::mem::take(&mut self.decisions);
        let calls_run = std::mem::take(&mut self.calls_run);
        let mut report = finish(
            status,
            outcome_name,
            decisions,
            calls_run,
            error,
            &mut self.recorder,
        );
        report.tool_said = tool_said;
        report.output = std::mem::take(&mut self.output);
        report
    }
}

/// A run that ended in an error, with its message as it will be shown.
fn plan_error(
    line: Option<u32>,
    exc_type: String,
    message: String,
) -> (Status, String, Option<PlanError>) {
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

impl Host for RunHost<'_, '_> {
    fn printed(&mut self, label: Packed, text: &str) -> String {
        let decoded = self.space.decode(&label);
        let shown = if decoded.integrity == crate::label::Integrity::Trusted && !decoded.unknown {
            text.to_string()
        } else {
            crate::runtime::output::marked(text, &self.space.describe(&decoded).sources)
        };
        // Consecutive prints with one label are one segment: a loop of prints is one record, not one each.
        match &mut self.printing {
            Some((l, t)) if *l == label => t.push_str(text),
            _ => {
                self.flush_output();
                self.printing = Some((label, text.to_string()));
            }
        }
        shown
    }

    fn call(
        &mut self,
        name: &str,
        args: Vec<(String, LValue)>,
        pc: Packed,
        line: u32,
    ) -> HostReply {
        self.flush_output();
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
