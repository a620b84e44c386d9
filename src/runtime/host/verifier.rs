//! Verifier calls: the value checked against the verifier's rule and minted with its kind, or answered
//! with None (`or_none=True`), or the run stopped with a `VerificationError`; each use recorded.

use super::{RunHost, Stop};
use crate::label::{Label, Packed};
use crate::runtime::exec::HostReply;
use crate::trace::record::VerifierUse;
use crate::trace::{self, Record};
use crate::value::{LValue, Raw};

impl RunHost<'_, '_> {
    pub(super) fn verifier(
        &mut self,
        name: &str,
        args: Vec<(String, LValue)>,
        line: u32,
    ) -> HostReply {
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
}
