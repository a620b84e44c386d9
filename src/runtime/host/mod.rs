//! The host side of a run: every tool or verifier call the plan makes arrives here and goes claim →
//! decision → record → act. It builds the claim from the labelled arguments, asks
//! [`crate::policy::decide`], records the call in the trace before anything happens, then performs it
//! through the [`Backend`] (or drafts, suspends, asks a human, or denies), and labels the result.
//!
//! Split along its seams: this file holds the host's state ([`RunHost`], why a run stops, the claim a
//! suspended run waits on), the numbering of calls, the plan's printed output, and the [`Host`] boundary
//! that sends each call to a verifier or a tool; [`tool`] a tool call up to its decision (the claim, the
//! decision, the call's record, then confirm, ask, suspend or deny) and what a person deciding it is shown;
//! [`perform`] performing a decided call (argument types, what a stateful party was sent, the effect, the
//! result's label and record); [`verifier`] verifier calls (`or_none` included); [`conclude`] ending the
//! run: its status, error and report, and what a snapshot keeps.

mod conclude;
mod perform;
mod tool;
mod verifier;

use std::collections::BTreeSet;

use serde_json::Value;

use super::backend::Backend;
use super::report::{CallDecision, ClaimShown, DraftLabels, HostState, OutputSegment, Recorder};
use crate::label::{LabelSpace, Packed};
use crate::policy::{Outcome, Policy};
use crate::runtime::exec::{Host, HostReply};
use crate::runtime::machine::Stopped;
use crate::text::OutsideText;
use crate::trace::record::{Call, Output as OutputRecord};
use crate::trace::{self, Record};
use crate::value::LValue;

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

    fn fresh_call(&mut self, name: &str) -> u32 {
        let id = self.next_call;
        self.next_call = self.next_call.saturating_add(1);
        self.space.record_call(id, name);
        id
    }

    fn trace_failed(&mut self) -> HostReply {
        self.stop = Some(Stop::Denied);
        HostReply::Deny {
            message: "the trace could not be written, so no further effect may happen".into(),
        }
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
