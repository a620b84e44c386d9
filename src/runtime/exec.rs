//! The loop over Monty's `RunProgress`: every external call is a declared tool, a declared verifier or the
//! runtime's own violation hook; anything else is denied and the run stops.

use std::time::Duration;

use monty_types::MontyObject;
use serde_json::Value;

use crate::label::Packed;
use crate::lower::Lowered;
use crate::plan::Signatures;
use crate::runtime::boxing::{rebox, unbox};
use crate::runtime::machine::{
    Death, Event, InProcess, Machine, MachineLimits, RawCall, Step, Stopped,
};
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

    /// What the plan printed, one `print` at a time with its label: returns the text to show the person
    /// (a host that keeps labels marks text the plan did not write).
    fn printed(&mut self, _label: Packed, text: &str) -> String {
        text.to_string()
    }
}

/// Resource limits of one run.
#[derive(Clone, Debug)]
pub struct ExecLimits {
    pub timeout: Duration,
    pub max_recursion: usize,
    pub max_host_calls: usize,
    /// `limits.max_memory_mb`: enforced in full in a worker process; in process, only Monty's checks
    /// before a large allocation (`"a" * 10**10`) apply.
    pub max_memory_mb: u32,
}

impl ExecLimits {
    /// What the interpreter itself enforces.
    pub fn machine(&self) -> MachineLimits {
        MachineLimits {
            timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            max_recursion_depth: self
                .max_recursion
                .saturating_mul(FRAMES_PER_CALL)
                .saturating_add(64),
            max_suspensions: self.max_host_calls,
            max_memory: Some((self.max_memory_mb as usize).saturating_mul(1 << 20)),
        }
    }

    /// What exceeding the memory limit is called in messages.
    fn memory(&self) -> String {
        format!("limits.max_memory_mb = {}", self.max_memory_mb)
    }

    fn time(&self) -> String {
        format!("limits.timeout_ms = {}", self.timeout.as_millis())
    }
}

/// How the Monty side of a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum ExecOutcome {
    Completed,
    /// Stopped by a denial: the host's, a no-sensitive-upgrade violation, an unknown function, a malformed
    /// argument or the call budget.
    Denied {
        line: u32,
        message: String,
    },
    /// Stopped by an exception; `message` is raw (the caller redacts it). `missing_key`: for a
    /// `KeyError` from a dict lookup, the key it missed, with its label (the caller decides whether it
    /// may be shown).
    Failed {
        exc_type: String,
        message: String,
        line: Option<u32>,
        missing_key: Option<LValue>,
    },
    /// Stopped by the runtime: a limit was exceeded or the interpreter failed. `message` is the runtime's
    /// own text and quotes no data ("the plan exceeded limits.max_memory_mb = 512").
    Halted {
        exc_type: String,
        message: String,
        line: Option<u32>,
    },
}

/// Frames the lowering adds per plan-level call (a plan call goes through `_call` and helpers).
const FRAMES_PER_CALL: usize = 3;

/// A run paused at a call, serialised by its machine ([`Machine::park`]).
pub type PausedRun = Value;

fn int_kwarg(kwargs: &[(MontyObject, MontyObject)], name: &str) -> Option<i64> {
    kwargs.iter().find_map(|(k, v)| match (k, v) {
        (MontyObject::String(k), MontyObject::Int(i)) if k == name => Some(*i),
        _ => None,
    })
}

/// Runs a lowered plan in this process to its end, a denial or an error.
pub fn execute(
    lowered: &Lowered,
    sigs: &Signatures,
    host: &mut dyn Host,
    limits: &ExecLimits,
    print: &mut dyn FnMut(&str),
) -> ExecOutcome {
    execute_on(
        &mut InProcess::new(),
        lowered,
        sigs,
        host,
        limits,
        print,
        &mut None,
    )
}

/// [`execute`] on `machine`; when the host suspends a call, the paused call is saved in `parked` (the run's
/// outcome is then `Denied` with the host's message).
pub fn execute_on(
    machine: &mut dyn Machine,
    lowered: &Lowered,
    sigs: &Signatures,
    host: &mut dyn Host,
    limits: &ExecLimits,
    print: &mut dyn FnMut(&str),
    parked: &mut Option<PausedRun>,
) -> ExecOutcome {
    let step = machine.start(&lowered.snippet, &limits.machine());
    drive(step, 0, machine, lowered, sigs, host, limits, print, parked)
}

/// A paused call as the host sees it: name, arguments, control label and plan line.
pub struct PausedCall {
    pub name: String,
    pub args: Vec<(String, LValue)>,
    pub pc: Packed,
    pub line: u32,
}

fn call_line(call: &RawCall) -> u32 {
    int_kwarg(&call.kwargs, "_zline")
        .and_then(|l| u32::try_from(l).ok())
        .unwrap_or(0)
}

/// Reads a paused call's name and arguments, exactly as [`execute`] hands them to the host.
pub fn paused_call(call: &RawCall) -> Result<PausedCall, String> {
    let line = call_line(call);
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

/// Continues a call `machine` has paused (restored from a snapshot) with the host's reply, then runs on
/// like [`execute`].
#[allow(
    clippy::too_many_arguments,
    reason = "the paused call and its reply, then exactly `execute_on`'s own"
)]
pub fn resume(
    machine: &mut dyn Machine,
    line: u32,
    reply: HostReply,
    lowered: &Lowered,
    sigs: &Signatures,
    host: &mut dyn Host,
    limits: &ExecLimits,
    print: &mut dyn FnMut(&str),
    parked: &mut Option<PausedRun>,
) -> ExecOutcome {
    let step = match answer(machine, reply, line, parked) {
        Ok(step) => step,
        Err(outcome) => return outcome,
    };
    drive(
        step, line, machine, lowered, sigs, host, limits, print, parked,
    )
}

/// Gives a paused call the host's reply: the run goes on (`Ok`) or stops here (`Err`), saving a
/// suspended call in `parked`.
fn answer(
    machine: &mut dyn Machine,
    reply: HostReply,
    line: u32,
    parked: &mut Option<PausedRun>,
) -> Result<Step, ExecOutcome> {
    match reply {
        HostReply::Return(v) => Ok(machine.resume(rebox(&v))),
        HostReply::Deny { message } => Err(ExecOutcome::Denied { line, message }),
        HostReply::Suspend { message } => {
            // Without the paused call nothing could resume; the host then fails closed (a denial).
            *parked = machine.park().ok();
            Err(ExecOutcome::Denied { line, message })
        }
        HostReply::Fail { exc_type, message } => Err(ExecOutcome::Failed {
            exc_type,
            message,
            missing_key: None,
            line: if line == 0 { None } else { Some(line) },
        }),
    }
}

/// How a step that did not pause at a call ends the run. `last_line`: the line of the last call, the best
/// place known when a worker dies between calls.
fn ending(event: Event, last_line: u32, lowered: &Lowered, limits: &ExecLimits) -> ExecOutcome {
    let known = |line: u32| (line != 0).then_some(line);
    let halted = |exc_type: &str, message: String, line: Option<u32>| ExecOutcome::Halted {
        exc_type: exc_type.into(),
        message,
        line,
    };
    match event {
        Event::Call(_) | Event::Complete => ExecOutcome::Completed,
        Event::Refused { message } => ExecOutcome::Denied {
            line: last_line,
            message,
        },
        Event::Failed {
            exc_type,
            message,
            snippet_lines,
            running_line,
            missing_key,
        } => {
            let line = snippet_lines
                .iter()
                .rev()
                .find_map(|l| lowered.snippet_plan_line(*l))
                .or(running_line);
            match exc_type.as_str() {
                "MemoryError" => halted(
                    "MemoryError",
                    format!("the plan exceeded {}", limits.memory()),
                    line,
                ),
                "TimeoutError" => halted(
                    "TimeoutError",
                    format!("the plan exceeded {}", limits.time()),
                    line,
                ),
                _ => ExecOutcome::Failed {
                    exc_type,
                    message,
                    line,
                    // A key that does not unbox (not a boxed scalar) is simply not shown.
                    missing_key: missing_key.and_then(|k| unbox(&k).ok()),
                },
            }
        }
        Event::Crashed(Death::Memory) => halted(
            "MemoryError",
            format!("the plan exceeded {}", limits.memory()),
            known(last_line),
        ),
        Event::Crashed(Death::Time) => halted(
            "TimeoutError",
            format!("the plan exceeded {}", limits.time()),
            known(last_line),
        ),
        Event::Crashed(Death::Stack) => halted(
            "InternalError",
            "the plan overflowed the interpreter's stack; the run was stopped".into(),
            known(last_line),
        ),
        Event::Crashed(Death::Stopped(why)) => {
            let (exc_type, message) = stopped_error(why);
            halted(exc_type, message, known(last_line))
        }
        Event::Crashed(Death::Other(why)) => halted(
            "InternalError",
            format!("the interpreter failed ({why}); the run was stopped"),
            known(last_line),
        ),
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "the step and where it came from, then `execute_on`'s own"
)]
fn drive(
    mut step: Step,
    mut last_line: u32,
    machine: &mut dyn Machine,
    lowered: &Lowered,
    sigs: &Signatures,
    host: &mut dyn Host,
    limits: &ExecLimits,
    print: &mut dyn FnMut(&str),
    parked: &mut Option<PausedRun>,
) -> ExecOutcome {
    let mut calls = 0usize;
    loop {
        for (label, text) in crate::runtime::output::segments(&step.printed) {
            let shown = host.printed(label, &text);
            print(&shown);
        }
        let call = match step.event {
            Event::Call(call) => call,
            other => return ending(other, last_line, lowered, limits),
        };
        let line = call_line(&call);
        last_line = line;
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
        step = match answer(machine, reply, line, parked) {
            Ok(step) => step,
            Err(outcome) => return outcome,
        };
    }
}

/// The error a run stopped from outside ends with (`mcp serve`'s run timeout, its shutdown, the client's
/// cancel), whether its worker's death or a call cut short by the stop is what the run met first.
pub(super) fn stopped_error(why: Stopped) -> (&'static str, String) {
    match why {
        Stopped::RunTimeout { secs } => (
            "TimeoutError",
            format!(
                "the run exceeded the server's run timeout of {secs} s (its tool calls included); the run was stopped"
            ),
        ),
        Stopped::Shutdown => (
            "InternalError",
            "the server shut down; the run was stopped".into(),
        ),
        Stopped::Cancelled => (
            "CancelledError",
            "the client cancelled the run (notifications/cancelled for its run_plan); the run was stopped \
             and no further tool call started"
                .into(),
        ),
    }
}
