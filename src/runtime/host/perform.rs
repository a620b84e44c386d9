//! Performing a decided call (allowed, drafted, or approved): a built-in tool's argument types checked
//! first, what a party that keeps state was sent, the effect through the backend, and the result labelled
//! (path tags, scanners, stores) and recorded; a draft's labels kept for the claim that commits it.

use serde_json::{Map, Value};

use super::{RunHost, Stop};
use crate::label::{Label, Packed};
use crate::policy::servers::ToolSource;
use crate::policy::{self, Claim};
use crate::runtime::exec::HostReply;
use crate::runtime::report::DraftLabels;
use crate::trace::record::{CallResult, PlanError as ErrorRecord};
use crate::trace::{self, Record};
use crate::value::LValue;

impl RunHost<'_, '_> {
    /// Runs a decided call (allowed, drafted, or approved by a human) and labels and records its result.
    pub(in crate::runtime) fn perform(
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
            Err(e) => Err(crate::runtime::backend::Failure::from(format!(
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
}
