//! A tool call up to its decision: the claim built from the labelled arguments, the policy's decision (and
//! whether the person's remembered values made it), the call's record written before anything happens,
//! then deny, suspend, ask a human on the spot, or go on to perform it; and what a person deciding
//! a `confirm` claim is shown of it.

use serde_json::{Map, Value};

use super::{Pending, RunHost, Stop};
use crate::label::{Label, Packed};
use crate::policy::{self, ArgClaim, Claim, Decision, Outcome, Texts};
use crate::runtime::exec::HostReply;
use crate::runtime::report::{CallDecision, ClaimShown, ShownEffect, ShownPart, serde_plain};
use crate::trace::Record;
use crate::trace::record::{Approval, ArgRecord, Call, RememberedUse};
use crate::value::{LValue, Raw};

impl RunHost<'_, '_> {
    pub(super) fn tool(
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
        let remembered = if store_decides {
            RememberedUse::of(&told)
        } else {
            Vec::new()
        };
        let call = self.record_call(
            call_id,
            line,
            &args,
            &claim,
            &decision,
            approval_drafts,
            remembered,
        );
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

    /// The trace's record of a decided call, written before anything happens: each argument's label,
    /// digest and preview (the value kept beside the trace), the control context, the decision and its rule,
    /// the pin of the tool's definition, what approving performs when that is a draft, and what the person
    /// was told of their remembered values when those made the decision.
    #[allow(
        clippy::too_many_arguments,
        reason = "the call's place, arguments and claim and what was decided of it: each a part of the record"
    )]
    fn record_call(
        &mut self,
        call_id: u32,
        line: u32,
        args: &[(String, LValue)],
        claim: &Claim,
        decision: &Decision,
        approval_drafts: bool,
        remembered: Vec<RememberedUse>,
    ) -> Call {
        Call {
            call_id,
            line,
            tool: claim.tool.clone(),
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
                .tool(&claim.tool)
                .and_then(|t| t.source.as_ref())
                .and_then(|s| self.backend.pin(s)),
            on_approval: approval_drafts.then(|| "draft".to_string()),
            remembered,
        }
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

    pub(super) fn arg_claim(&self, name: &str, v: &LValue) -> ArgClaim {
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
}
