//! Ending the run: the status, outcome and error the report gives (redacted where data could show), and
//! for a suspended run what a snapshot keeps to resume it.

use super::{RunHost, Stop};
use crate::policy::Outcome;
use crate::runtime::exec::ExecOutcome;
use crate::runtime::report::{
    HostState, PlanError, RunReport, Status, Suspension, finish, serde_plain,
};
use crate::trace::record::PlanError as ErrorRecord;
use crate::trace::{self, Record};
use crate::value::{LValue, Raw};

impl RunHost<'_, '_> {
    /// Ends the run: a suspended one keeps what a snapshot needs.
    pub(in crate::runtime) fn finish_run(
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
                let (exc_type, message) = crate::runtime::exec::stopped_error(why);
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
