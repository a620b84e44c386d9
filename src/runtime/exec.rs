//! The loop over Monty's `RunProgress`: every external call is a declared tool, a declared verifier or the
//! runtime's own violation hook; anything else is denied and the run stops.

use std::time::Duration;

use monty::{Dump, ReplFunctionCall, ReplProgress, ReplStartError, Session};
use monty_types::{MontyException, MontyObject, PrintWriter, ResourceLimits, ResourceTracker};

use crate::label::Packed;
use crate::lower::Lowered;
use crate::plan::Signatures;
use crate::runtime::boxing::{rebox, unbox};
use crate::value::LValue;

/// What the host answers to a tool or verifier call.
pub enum HostReply {
    /// The call's value in the plan.
    Return(LValue),
    /// The call is refused; the run stops.
    Deny { message: String },
    /// The call failed (e.g. a verifier rejected its input); the run stops with an error.
    Fail { exc_type: String, message: String },
    /// The call waits for a human: the run stops here and the paused call is handed back (see
    /// [`execute_parking`]) so it can be saved and resumed later.
    Suspend { message: String },
}

/// The host side of a run: decides and performs tool and verifier calls.
pub trait Host {
    fn call(&mut self, name: &str, args: Vec<(String, LValue)>, pc: Packed, line: u32)
    -> HostReply;
}

/// Resource limits of one run.
#[derive(Clone, Debug)]
pub struct ExecLimits {
    pub timeout: Duration,
    pub max_recursion: usize,
    pub max_host_calls: usize,
}

/// How the Monty side of a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecOutcome {
    Completed,
    /// Stopped by a denial: the host's, a no-sensitive-upgrade violation, an unknown function, a malformed
    /// argument or the call budget.
    Denied {
        line: u32,
        message: String,
    },
    /// Stopped by an exception; `message` is raw (the caller redacts it).
    Failed {
        exc_type: String,
        message: String,
        line: Option<u32>,
    },
}

/// Frames the lowering adds per plan-level call (a plan call goes through `_call` and helpers).
const FRAMES_PER_CALL: usize = 3;
/// Largest print output kept per run.
const MAX_PRINT: usize = 1 << 20;

/// A run paused at a call: Monty's session with the prelude and the plan, waiting for the call's result.
pub type PausedRun = ReplFunctionCall;

/// The snippet name Monty gives the plan's code: the prelude session was fed one snippet (`build.rs`), so
/// the plan is the second. Traceback frames elsewhere are the prelude's.
const PLAN_SNIPPET: &str = "<python-input-1>";

fn plan_line(lowered: &Lowered, exc: &MontyException) -> Option<u32> {
    exc.traceback()
        .iter()
        .rev()
        .filter(|f| f.filename == PLAN_SNIPPET)
        .find_map(|f| lowered.snippet_plan_line(f.start.line))
}

/// What running or resuming Monty gives back.
type Progress = Result<ReplProgress, Box<ReplStartError>>;

fn failed(lowered: &Lowered, exc: &MontyException) -> ExecOutcome {
    ExecOutcome::Failed {
        exc_type: format!("{:?}", exc.exc_type()),
        message: exc.message().unwrap_or_default().to_string(),
        line: plan_line(lowered, exc),
    }
}

fn int_kwarg(kwargs: &[(MontyObject, MontyObject)], name: &str) -> Option<i64> {
    kwargs.iter().find_map(|(k, v)| match (k, v) {
        (MontyObject::String(k), MontyObject::Int(i)) if k == name => Some(*i),
        _ => None,
    })
}

/// Runs a lowered plan to its end, a denial or an error.
pub fn execute(
    lowered: &Lowered,
    sigs: &Signatures,
    host: &mut dyn Host,
    limits: &ExecLimits,
    print: &mut dyn FnMut(&str),
) -> ExecOutcome {
    execute_parking(lowered, sigs, host, limits, print, &mut None)
}

/// [`execute`], and when the host suspends a call, the paused call is left in `parked` (the run's outcome
/// is then `Denied` with the host's message).
pub fn execute_parking(
    lowered: &Lowered,
    sigs: &Signatures,
    host: &mut dyn Host,
    limits: &ExecLimits,
    print: &mut dyn FnMut(&str),
    parked: &mut Option<PausedRun>,
) -> ExecOutcome {
    // The prelude session built at build time; the plan's snippet is compiled and run on it.
    let mut session = match Dump::load(crate::lower::prelude_session()).map(|d| d.state) {
        Ok(Session::Idle(repl)) => repl,
        _ => {
            return ExecOutcome::Failed {
                exc_type: "InternalError".into(),
                message: "the prelude session of this build cannot be loaded".into(),
                line: None,
            };
        }
    };
    let tracker = ResourceTracker::new(ResourceLimits {
        max_duration: Some(limits.timeout),
        max_recursion_depth: limits
            .max_recursion
            .saturating_mul(FRAMES_PER_CALL)
            .saturating_add(64),
        max_suspensions: limits.max_host_calls,
        ..ResourceLimits::default()
    });
    *session.tracker_mut() = tracker;
    let mut out = String::new();
    let progress = session.feed_start(
        &lowered.snippet,
        Vec::new(),
        PrintWriter::CollectString(&mut out, Some(MAX_PRINT)),
    );
    if !out.is_empty() {
        print(&out);
    }
    drive(progress, lowered, sigs, host, limits, print, parked)
}

/// A paused call as the host sees it: name, arguments, control label and plan line.
pub struct PausedCall {
    pub name: String,
    pub args: Vec<(String, LValue)>,
    pub pc: Packed,
    pub line: u32,
}

/// Reads a paused call's name and arguments, exactly as [`execute`] hands them to the host.
pub fn paused_call(call: &PausedRun) -> Result<PausedCall, String> {
    let line = int_kwarg(&call.kwargs, "_zline")
        .and_then(|l| u32::try_from(l).ok())
        .unwrap_or(0);
    let name = call.function_name.clone();
    let Some(pc) = call.kwargs.iter().find_map(|(k, v)| match k {
        MontyObject::String(k) if k == "_zpc" => crate::runtime::boxing::packed_of(v),
        _ => None,
    }) else {
        return Err(format!(
            "call to `{name}` without a well-formed control label"
        ));
    };
    let mut args = Vec::new();
    for (k, v) in &call.kwargs {
        let MontyObject::String(k) = k else {
            return Err("malformed argument name".into());
        };
        if k == "_zpc" || k == "_zline" {
            continue;
        }
        args.push((
            k.clone(),
            unbox(v).map_err(|e| format!("argument `{k}` of `{name}`: {e}"))?,
        ));
    }
    for (i, v) in call.args.iter().enumerate() {
        let key = if i == 0 {
            "value".to_string()
        } else {
            format!("arg{i}")
        };
        args.push((
            key,
            unbox(v).map_err(|e| format!("argument of `{name}`: {e}"))?,
        ));
    }
    Ok(PausedCall {
        name,
        args,
        pc,
        line,
    })
}

/// Continues a paused call with the host's reply (a resumed approval), then runs on like [`execute`].
#[allow(clippy::too_many_arguments)] // the paused call and its reply, then exactly `execute_parking`'s own
pub fn resume(
    call: PausedRun,
    reply: HostReply,
    lowered: &Lowered,
    sigs: &Signatures,
    host: &mut dyn Host,
    limits: &ExecLimits,
    print: &mut dyn FnMut(&str),
    parked: &mut Option<PausedRun>,
) -> ExecOutcome {
    let line = paused_call(&call).map_or(0, |c| c.line);
    let mut out = String::new();
    let progress = match answer(call, reply, line, &mut out, parked) {
        Ok(progress) => progress,
        Err(outcome) => return outcome,
    };
    if !out.is_empty() {
        print(&out);
    }
    drive(progress, lowered, sigs, host, limits, print, parked)
}

/// Gives a paused call the host's reply: the run goes on (`Ok`) or stops here (`Err`), leaving a
/// suspended call in `parked`.
fn answer(
    call: PausedRun,
    reply: HostReply,
    line: u32,
    out: &mut String,
    parked: &mut Option<PausedRun>,
) -> Result<Progress, ExecOutcome> {
    match reply {
        HostReply::Return(v) => {
            Ok(call.resume(rebox(&v), PrintWriter::CollectString(out, Some(MAX_PRINT))))
        }
        HostReply::Deny { message } => Err(ExecOutcome::Denied { line, message }),
        HostReply::Suspend { message } => {
            *parked = Some(call);
            Err(ExecOutcome::Denied { line, message })
        }
        HostReply::Fail { exc_type, message } => Err(ExecOutcome::Failed {
            exc_type,
            message,
            line: if line == 0 { None } else { Some(line) },
        }),
    }
}

fn drive(
    mut progress: Progress,
    lowered: &Lowered,
    sigs: &Signatures,
    host: &mut dyn Host,
    limits: &ExecLimits,
    print: &mut dyn FnMut(&str),
    parked: &mut Option<PausedRun>,
) -> ExecOutcome {
    let mut out = String::new();
    let mut calls = 0usize;
    loop {
        if !out.is_empty() {
            print(&out);
            out.clear();
        }
        let call = match progress {
            Err(e) => return failed(lowered, &e.error),
            Ok(ReplProgress::Complete { .. }) => return ExecOutcome::Completed,
            Ok(ReplProgress::FunctionCall(call)) => call,
            Ok(ReplProgress::OsCall(_)) => {
                return ExecOutcome::Denied {
                    line: 0,
                    message: "operating-system access is not available to plans".into(),
                };
            }
            // The lowered program defines every name it reads; an undefined one means the prelude the
            // binary loaded is not the one the compiler emitted code for.
            Ok(ReplProgress::NameLookup(lookup)) => {
                return ExecOutcome::Denied {
                    line: 0,
                    message: format!(
                        "unsupported interpreter request: name `{}` is not defined",
                        lookup.name
                    ),
                };
            }
            Ok(ReplProgress::ResolveFutures(_)) => {
                return ExecOutcome::Denied {
                    line: 0,
                    message: "unsupported interpreter request".into(),
                };
            }
        };
        let line = int_kwarg(&call.kwargs, "_zline")
            .and_then(|l| u32::try_from(l).ok())
            .unwrap_or(0);
        let name = call.function_name.clone();
        if name == "_zb_violation" {
            return ExecOutcome::Denied {
                line,
                message: "a container was mutated under a control context it did not carry (no-sensitive-upgrade)"
                    .into(),
            };
        }
        if !sigs.is_callable(&name) {
            return ExecOutcome::Denied {
                line,
                message: format!("`{name}` is not a tool or verifier of the policy"),
            };
        }
        calls += 1;
        if calls > limits.max_host_calls {
            return ExecOutcome::Denied {
                line,
                message: "the run made too many calls".into(),
            };
        }
        let PausedCall { args, pc, .. } = match paused_call(&call) {
            Ok(c) => c,
            Err(message) => return ExecOutcome::Denied { line, message },
        };
        let reply = host.call(&name, args, pc, line);
        progress = match answer(call, reply, line, &mut out, parked) {
            Ok(progress) => progress,
            Err(outcome) => return outcome,
        };
    }
}
