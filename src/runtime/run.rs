//! One run of a plan: check it, lower it, execute it on Monty with every tool call decided by the policy,
//! and record everything in the trace.
//!
//! The pieces stay separate: [`crate::plan`] refuses what is outside the subset, [`crate::lower`] compiles,
//! [`super::exec`] talks to Monty, [`crate::policy::decide`] decides, a [`Backend`] performs allowed calls
//! (real adapters, or fixtures in `policy test`), and [`crate::trace`] records. This file only wires them:
//! the front end (check and lower), the pre-flight, and Monty's run or resumption; the host that decides
//! each call is `runtime::host`, the ending of a run `runtime::report`.

pub use super::backend::{Backend, BuiltinBackend, Failure, ToolBackend};
pub use super::host::Approver;
use super::host::{RunHost, Stop};
pub use super::report::{
    CallDecision, ClaimShown, DraftLabels, HostState, OutputSegment, PlanError, RunReport,
    ShownEffect, ShownPart, Status, Suspension,
};
use super::report::{Recorder, denied_before_run, finish, rejected};
use crate::label::LabelSpace;
use crate::lower::Lowered;
use crate::lower::{self, Mode};
use crate::plan::{self, Audience, Diagnostic, ParsedPlan, Signatures};
use crate::planner::ContextLabel;
use crate::policy::Policy;
use crate::runtime::exec::{self, ExecLimits, ExecOutcome, HostReply};
use crate::runtime::machine::{InProcess, Machine, MachineLimits, RawCall};
use crate::runtime::worker::client::WorkerMachine;
use crate::runtime::worker::pool::Pooled;
use crate::trace::TraceWriter;
use crate::trace::record::Call;

/// Where a run's interpreter runs.
#[derive(Clone, Debug)]
pub enum Engine {
    /// In this process ([`InProcess`]).
    InProcess,
    /// In a worker process started from this zamburak binary ([`WorkerMachine`]).
    Worker(std::path::PathBuf),
    /// In a worker process taken warm from a pool when one is ready, which a stop switch can kill from
    /// another thread (`mcp serve`).
    Pooled(Pooled),
}

impl Engine {
    /// A fresh machine on this engine.
    pub fn machine(&self) -> Box<dyn Machine> {
        match self {
            Engine::InProcess => Box::new(InProcess::new()),
            Engine::Worker(exe) => Box::new(WorkerMachine::new(exe.clone())),
            Engine::Pooled(p) => Box::new(WorkerMachine::pooled(
                std::sync::Arc::clone(&p.pool),
                std::sync::Arc::clone(&p.switch),
            )),
        }
    }
}

/// What a run needs besides the backend.
pub struct RunInput<'a> {
    pub source: &'a str,
    pub policy: &'a Policy,
    pub mode: Mode,
}

/// One run of a plan, configured then executed:
///
/// ```no_run
/// # use zamburak::runtime::run::{BuiltinBackend, Run, RunInput};
/// # let policy = zamburak::policy::Policy::bundled_default().unwrap();
/// let input = RunInput { source: "print(1)\n", policy: &policy, mode: policy.mode() };
/// let mut backend = BuiltinBackend::new(&policy);
/// let report = Run::new(&input).execute(&mut backend, None, &mut |text| print!("{text}"));
/// ```
///
/// A run never panics on adversarial plans, tool outputs or policies; every way it can end is a
/// [`RunReport`]. When a trace is given, every call, result, verifier use, denial and error is appended to
/// it, and a failure to write the trace stops the run before the next effect.
pub struct Run<'i, 'a> {
    input: &'i RunInput<'a>,
    preflight: bool,
    approver: Option<&'a mut Approver>,
    engine: Engine,
    /// A machine the caller made and prepared ([`Run::on_machine`]); else one of `engine`'s.
    machine: Option<Box<dyn Machine>>,
    compile: lower::Options,
    context: ContextLabel,
    /// Who reads the pre-flight's diagnostics ([`Run::hints_for`]).
    audience: Audience,
    /// The person's remembered values ([`Run::remembering`]).
    known: Option<&'a crate::known::store::Store>,
    /// The plan as the run's setup parsed it ([`Run::parsed`]); else parsed here.
    parsed: Option<Result<ParsedPlan, Vec<Diagnostic>>>,
}

impl<'i, 'a> Run<'i, 'a> {
    /// A run with the pre-flight analysis, suspending at `confirm` claims.
    pub fn new(input: &'i RunInput<'a>) -> Run<'i, 'a> {
        Run {
            input,
            preflight: true,
            approver: None,
            engine: Engine::InProcess,
            machine: None,
            compile: lower::Options::default(),
            context: ContextLabel::trusted(),
            audience: Audience::Person,
            known: None,
            parsed: None,
        }
    }

    /// The plan's source as `runtime::setup` parsed it (`plan::parse` of the input's source), so a run
    /// parses its plan once: the setup found the tools and servers from the same parse.
    pub fn parsed(self, parsed: Result<ParsedPlan, Vec<Diagnostic>>) -> Run<'i, 'a> {
        Run {
            parsed: Some(parsed),
            ..self
        }
    }

    /// Decides `known(ROLE)` requirements with the person's remembered values in `store` (read by
    /// [`crate::runtime::memory::open_for`]); without it no `known` role holds.
    pub fn remembering(self, store: Option<&'a crate::known::store::Store>) -> Run<'i, 'a> {
        Run {
            known: store,
            ..self
        }
    }

    /// The pre-flight's diagnostics (a plan denied before it runs) are read by `audience`: a planner
    /// (`run_plan` of `zamburak mcp serve`) gets helps that change only the plan ([`Audience`]).
    pub fn hints_for(self, audience: Audience) -> Run<'i, 'a> {
        Run { audience, ..self }
    }

    /// The plan was written by a planner whose context is `context` (docs/semantics.md, "The planner
    /// context label"): its literals carry that label instead of the trusted literal label, in the
    /// pre-flight analysis, in the run, and after a suspension (the snapshot keeps it).
    pub fn in_context(self, context: &ContextLabel) -> Run<'i, 'a> {
        Run {
            context: context.clone(),
            ..self
        }
    }

    /// Compiles the plan with `options` instead of the defaults. Every option gives the same labels and
    /// decisions; the tests that check that use this.
    pub fn compiled_with(self, options: lower::Options) -> Run<'i, 'a> {
        Run {
            compile: options,
            ..self
        }
    }

    /// Runs the plan's interpreter on `engine` (default: in this process). `zamburak run` uses a worker
    /// process, so a plan that exhausts memory or the stack ends the worker, not the run's process.
    pub fn on(self, engine: Engine) -> Run<'i, 'a> {
        Run { engine, ..self }
    }

    /// Runs the plan's interpreter on `machine`, which the caller made (and may have
    /// [`Machine::prepare`]d with [`machine_limits`], so its prelude session loads while the caller sets
    /// up the run; `zamburak run` does, before it starts MCP servers and the trace).
    pub fn on_machine(self, machine: Box<dyn Machine>) -> Run<'i, 'a> {
        Run {
            machine: Some(machine),
            ..self
        }
    }

    /// Without the pre-flight analysis: a call that lint proves denied is still attempted and denied when
    /// reached. Only for checking the analysis against the runtime (tests); never for users, since a plan
    /// may then half-run toward a certain denial.
    pub fn without_preflight(self) -> Run<'i, 'a> {
        Run {
            preflight: false,
            ..self
        }
    }

    /// With a human at hand: every `confirm` claim is put to `approver`, which answers whether it is
    /// approved and by whom (`run --confirm ask`). The answer is recorded in the trace; an approved call
    /// runs at once, a rejected one stops the run like a denial.
    pub fn asking(self, approver: &'a mut Approver) -> Run<'i, 'a> {
        Run {
            approver: Some(approver),
            ..self
        }
    }

    /// Checks, lowers and runs the plan.
    pub fn execute(
        self,
        backend: &'a mut dyn Backend,
        trace: Option<&mut TraceWriter>,
        print: &mut dyn FnMut(&str),
    ) -> RunReport {
        run_plan(self, backend, trace, print)
    }
}

fn exec_limits(policy: &Policy) -> ExecLimits {
    let limits = policy.limits();
    ExecLimits {
        timeout: std::time::Duration::from_millis(limits.timeout_ms),
        max_recursion: limits.max_recursion as usize,
        max_host_calls: (limits.max_tool_calls as usize)
            .saturating_mul(4)
            .saturating_add(64),
        max_memory_mb: limits.max_memory_mb,
    }
}

/// What the interpreter enforces for a run under `policy` (a restored snapshot's worker needs them).
pub fn machine_limits(policy: &Policy) -> MachineLimits {
    exec_limits(policy).machine()
}

/// The front end every run and resumption shares: the subset checks, then the lowering, the plan's
/// literals labelled `literal` (packed).
///
/// In a planner context that is not trusted the program is compiled without the labels known at compile
/// time: they rest on the literal label being neutral as a condition (`lower::constant`), which an
/// untrusted literal is not. So an `if` or a `range` loop on literals raises `pc` by the context, as
/// `lint` predicts. A resumption compiles with the same options, so its line map is the paused program's.
fn front_end(
    input: &RunInput<'_>,
    parsed: Option<Result<ParsedPlan, Vec<Diagnostic>>>,
    sigs: &Signatures,
    options: lower::Options,
    context: &ContextLabel,
    literal: i64,
) -> Result<(ParsedPlan, Lowered), Vec<Diagnostic>> {
    let options = if context.is_trusted() {
        options
    } else {
        // Both rest on literals being trusted, which a planner that read untrusted data does not give.
        lower::Options {
            constant_labels: false,
            fused_idioms: false,
            raw_containers: false,
        }
    };
    let parsed = match parsed {
        Some(parsed) => plan::checked(parsed?, sigs)?,
        None => plan::check(input.source, sigs)?,
    };
    let lowered = lower::compile_labelled(
        &parsed.module,
        input.source,
        sigs,
        input.mode,
        options,
        literal,
    )?;
    Ok((parsed, lowered))
}

/// Runs Monty. Monty documents internal assertions that may panic on an inconsistent VM state; a panic
/// must not take the process (and the trace) down with it: it ends the run as an error, and no further
/// call happens.
fn guarded(run: impl FnOnce() -> ExecOutcome) -> ExecOutcome {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|_| {
        ExecOutcome::Halted {
            exc_type: "InternalError".into(),
            message: "the interpreter failed; the run was stopped".into(),
            line: None,
        }
    })
}

fn run_plan<'a>(
    run: Run<'_, 'a>,
    backend: &'a mut dyn Backend,
    trace: Option<&mut TraceWriter>,
    print: &mut dyn FnMut(&str),
) -> RunReport {
    let Run {
        input,
        preflight,
        approver,
        engine,
        machine,
        compile,
        context,
        audience,
        known,
        parsed,
    } = run;
    let sigs = input.policy.signatures();
    let mut recorder = Recorder::new(trace);
    let exec_limits = exec_limits(input.policy);
    // The prelude session loads while the plan is checked, lowered and analysed (docs/lowering.md,
    // "Speed"); a plan refused on the way leaves it unused.
    let mut machine = machine.unwrap_or_else(|| engine.machine());
    machine.prepare(&exec_limits.machine());

    // The literal label is the context's in this run's label space (where its principals are interned
    // and its source recorded before any call); the host computes the same from the same space.
    let mut space = input.policy.label_space();
    let literal = match &mut space {
        Ok(space) => context.literal_bits(space),
        Err(_) => crate::label::LITERAL,
    };
    let (parsed, lowered) = match front_end(input, parsed, &sigs, compile, &context, literal) {
        Ok(both) => both,
        Err(diagnostics) => return rejected(diagnostics, &mut recorder),
    };
    let space = match space {
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
        // docs/semantics.md, "Pre-flight analysis": a plan with a call that is denied whenever it is reached
        // runs no tool at all.
        let analysis =
            crate::analysis::analyze_for(&parsed, input.policy, input.mode, &context, audience);
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

    let state = HostState {
        planner_context: context,
        ..HostState::fresh()
    };
    let mut host = RunHost::new(input.policy, backend, space, recorder, state, approver);
    host.known = known;
    let mut parked = None;
    let outcome = guarded(|| {
        exec::execute_on(
            machine.as_mut(),
            &lowered,
            &sigs,
            &mut host,
            &exec_limits,
            print,
            &mut parked,
        )
    });
    host.finish_run(outcome, parked)
}

/// A suspended run, ready to continue in a new process: the decision a human took on its claim.
pub struct Resumption<'a> {
    pub input: RunInput<'a>,
    /// The machine holding the paused run ([`Machine::restore`]d from the snapshot), and the call it waits
    /// on.
    pub machine: Box<dyn Machine>,
    pub call: RawCall,
    pub space: LabelSpace,
    pub state: HostState,
    /// The claim as it was recorded when the run was suspended.
    pub claim: Call,
    /// Approved (the claimed call runs now, exactly as claimed) or rejected (the run stops).
    pub approved: bool,
    /// The person's remembered values as they are now (an approval may just have added to them).
    pub known: Option<&'a crate::known::store::Store>,
    /// The plan's source as the caller parsed it (`plan::parse`), so it is parsed once; else parsed here.
    pub parsed: Option<Result<ParsedPlan, Vec<Diagnostic>>>,
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
    let mut recorder = Recorder::new(trace);
    // The snapshot's session was compiled with the defaults (`zamburak run` never changes them), in the
    // planner context the run started in. The paused program already holds its literal label; this
    // lowering only maps its lines back to the plan.
    let context = r.state.planner_context.clone();
    let mut space = r.space;
    let literal = context.literal_bits(&mut space);
    let lowered = match front_end(
        &r.input,
        r.parsed,
        &sigs,
        lower::Options::default(),
        &context,
        literal,
    ) {
        Ok((_, lowered)) => lowered,
        Err(diagnostics) => return rejected(diagnostics, &mut recorder),
    };
    let mut host = RunHost::new(r.input.policy, backend, space, recorder, r.state, None);
    host.known = r.known;
    let claim = &r.claim;
    host.mark_decided(
        claim.call_id,
        if r.approved { "approved" } else { "rejected" },
    );
    let reply = if !r.approved {
        host.stop = Some(Stop::Rejected);
        HostReply::Deny {
            message: format!("`{}` was rejected by the user", claim.tool),
        }
    } else {
        // The claim names what approving performs: the call, or (`on_approval: draft`) only its draft.
        let drafts = match claim.on_approval.as_deref() {
            None => Some(false),
            Some("draft") => Some(true),
            Some(_) => None,
        };
        match (exec::paused_call(&r.call), drafts) {
            (Ok(paused), Some(drafts))
                if paused.name == claim.tool && paused.line == claim.line =>
            {
                host.perform(
                    &paused.name,
                    claim.call_id,
                    &paused.args,
                    &paused.pc,
                    paused.line,
                    drafts,
                )
            }
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
    let mut machine = r.machine;
    let line = exec::paused_call(&r.call).map_or(0, |c| c.line);
    let outcome = guarded(|| {
        exec::resume(
            machine.as_mut(),
            line,
            reply,
            &lowered,
            &sigs,
            &mut host,
            &exec_limits,
            print,
            &mut parked,
        )
    });
    host.finish_run(outcome, parked)
}
