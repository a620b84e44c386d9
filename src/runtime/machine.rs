//! Where the plan's interpreter runs. A [`Machine`] holds one Monty session (the prelude and the plan's
//! compiled snippet), runs it to its next external call and hands that call over as plain data
//! ([`RawCall`]). It decides nothing: what a call means, whether it may happen and what it returns are the
//! host's (`runtime::exec` and `runtime::host`), which never see Monty's own types beyond the values.
//!
//! [`InProcess`] runs Monty in this process (library users, tests, benchmarks); `runtime::worker` runs the
//! same code in a child process under memory and CPU limits, which is what `zamburak run` uses, so a plan
//! that exhausts memory or the stack ends its worker, not the process holding the policy and the trace.

use monty::{Dump, MontyRepl, ReplFunctionCall, ReplProgress, ReplStartError, Session};
use monty_types::{MontyException, MontyObject, PrintWriter, ResourceLimits, ResourceTracker};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

/// An external call the plan's program made, as Monty hands it over.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RawCall {
    pub function_name: String,
    pub args: Vec<MontyObject>,
    pub kwargs: Vec<(MontyObject, MontyObject)>,
}

/// Why a worker process ended without answering (see `runtime::worker`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Death {
    /// It went over its memory ceiling (or the system refused it memory).
    Memory,
    /// It ran out of time: the host stopped it at its deadline, or it used up its CPU-time limit.
    Time,
    /// It overflowed its stack.
    Stack,
    /// Anything else: a signal, an unexpected exit, a malformed message. The text says which.
    Other(String),
    /// The process running the run stopped it from outside ([`Stopped`]): `mcp serve`'s run timeout, its
    /// shutdown, or the client's cancel.
    Stopped(Stopped),
}

/// Why the host stopped a run's worker from outside the run (`runtime::worker::pool::StopSwitch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stopped {
    /// The run's whole wall-clock time (its tool calls included) passed this many seconds.
    RunTimeout { secs: u64 },
    /// The server shut down (its client left, or it was signalled).
    Shutdown,
    /// The client cancelled the request the run answers (`notifications/cancelled` for its `run_plan`).
    Cancelled,
}

/// Why a machine could not load or save a paused call. Crosses the worker's pipe, so it is data.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum MachineError {
    /// The paused run (a snapshot's `paused`) is not one Monty can read.
    #[error("the paused run cannot be read: {0}")]
    Unreadable(String),
    /// The paused run was read but is not waiting on a call.
    #[error("the paused run cannot be read")]
    NotACall,
    /// [`Machine::park`] with no call waiting.
    #[error("no call is waiting to be saved")]
    NothingPaused,
    /// The paused call could not be serialised.
    #[error("cannot save the paused run: {0}")]
    Unsaveable(String),
    /// The worker process could not be started.
    #[error("{0:?}")]
    NoWorker(Death),
    /// The worker sent another reply than the request asks for.
    #[error("the worker answered out of turn")]
    OutOfTurn,
    /// The worker ended while loading the paused run.
    #[error("the worker could not load the paused run: {0:?}")]
    RestoreDied(Death),
    /// The worker ended while saving the paused run.
    #[error("the worker could not save the paused run: {0:?}")]
    ParkDied(Death),
}

/// Where a run stands after a step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Event {
    /// Paused at an external call, waiting for its value.
    Call(RawCall),
    /// The program ran to its end.
    Complete,
    /// The program raised. `snippet_lines`: the traceback's lines in the plan's snippet, outermost first.
    /// `running_line`: for a limit Monty enforces between instructions, whose error has no traceback, the
    /// plan line of the top-level statement that was running (the lowered program's `_zl`).
    Failed {
        exc_type: String,
        message: String,
        snippet_lines: Vec<u32>,
        #[serde(default)]
        running_line: Option<u32>,
        /// For a `KeyError` from a dict lookup: the boxed key (value and label) the lookup missed, read
        /// back from the session (the prelude's `_ZK`). Whether it may be shown is the host's decision.
        #[serde(default)]
        missing_key: Option<MontyObject>,
    },
    /// The program asked for something plans never get (operating-system access, an undefined name,
    /// futures).
    Refused { message: String },
    /// The interpreter itself failed (a panic in Monty, a dead worker).
    Crashed(Death),
}

/// One step of a run: what the program printed on the way, and where it stopped.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Step {
    pub printed: String,
    pub event: Event,
}

impl Step {
    fn crashed(death: Death) -> Step {
        Step {
            printed: String::new(),
            event: Event::Crashed(death),
        }
    }
}

/// What the interpreter enforces itself, from the policy's `limits:`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineLimits {
    pub timeout_ms: u64,
    pub max_recursion_depth: usize,
    pub max_suspensions: usize,
    /// Bytes the program may allocate; enforced only where the allocator counts them (a worker).
    pub max_memory: Option<usize>,
}

/// Runs the plan's program and hands over each external call. A machine that cannot do what is asked says
/// so with [`Event::Crashed`] (or `Err`), never by panicking.
pub trait Machine {
    /// Gets ready for [`Machine::start`] with these limits: the prelude session starts loading now, while
    /// the caller checks and lowers the plan, instead of after (a worker process is started and loads it
    /// before its first request). Optional: `start` loads it itself when this was not called, and a
    /// `start` with other limits starts afresh.
    fn prepare(&mut self, _limits: &MachineLimits) {}
    /// Loads the prelude session and runs `snippet` to its first external call or its end.
    fn start(&mut self, snippet: &str, limits: &MachineLimits) -> Step;
    /// Loads a paused call saved by [`Machine::park`] and returns the call it waits on.
    fn restore(&mut self, paused: &Value, limits: &MachineLimits) -> Result<RawCall, MachineError>;
    /// Gives the paused call its value and runs on to the next call or the end.
    fn resume(&mut self, value: MontyObject) -> Step;
    /// The paused call, serialised for a snapshot. The machine has no paused call afterwards.
    fn park(&mut self) -> Result<Value, MachineError>;
}

/// Largest print output kept per step. Each `print` is framed with its label (`runtime::output`), about
/// 25 bytes besides its text: 4 MiB holds the 100,000 short lines 1 MiB held unframed.
const MAX_PRINT: usize = 4 << 20;

/// The snippet name Monty gives the plan's code: the prelude session was fed one snippet (`build.rs`), so
/// the plan is the second. Traceback frames elsewhere are the prelude's.
const PLAN_SNIPPET: &str = "<python-input-1>";

/// Monty in this process.
#[derive(Default)]
pub struct InProcess {
    paused: Option<ReplFunctionCall>,
    /// What is left of the paused call's time budget (`None`: no budget).
    time_left: Option<Duration>,
    /// The prelude session loaded ahead of `start` ([`Machine::prepare`]).
    ready: Option<Preload>,
    /// What becomes of a session whose run has ended.
    finished: Finished,
}

/// A prelude session loaded ahead: on a thread of its own (in process), or already (a worker, before its
/// first request). `None` inside: it could not be loaded; `start` then says so.
enum Preload {
    Loading(std::thread::JoinHandle<Option<Box<MontyRepl>>>),
    Loaded(Option<Box<MontyRepl>>),
}

/// What becomes of a session once its run has ended (completed, failed or refused).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Finished {
    /// Freed at once. Freeing a session's heap entry by entry costs about a tenth of a lowered agent
    /// plan's run; handing it to a background thread instead was measured slower in process (the freeing
    /// competes with the next run for the allocator), so it stays on the run's path here.
    #[default]
    Freed,
    /// Left to the process's exit: a worker whose run has ended is only waiting to be ended (it is never
    /// reused: every run and every restore starts a new worker), and its memory budget bounds what it holds.
    LeftToExit,
}

/// The session the build compiled (`build.rs`), loaded; `None` if it cannot be (a defect of the build).
fn load_prelude() -> Option<Box<MontyRepl>> {
    match Dump::load(crate::lower::prelude_session()).map(|d| d.state) {
        Ok(Session::Idle(repl)) => Some(repl),
        _ => None,
    }
}

/// What is left of a session's time budget: Monty's clock counts execution only, across every step.
fn time_left(progress: &ReplProgress) -> Option<Duration> {
    let tracker = progress.tracker();
    tracker
        .max_duration()
        .map(|max| max.saturating_sub(tracker.elapsed()))
}

impl InProcess {
    pub fn new() -> InProcess {
        InProcess::default()
    }

    /// A machine that leaves a finished session to the process's exit ([`Finished::LeftToExit`]).
    pub fn leaving_finished_sessions() -> InProcess {
        InProcess {
            finished: Finished::LeftToExit,
            ..InProcess::default()
        }
    }

    /// Loads the prelude session now, on this thread (a worker, before its first request).
    pub fn preload(&mut self) {
        self.ready = Some(Preload::Loaded(load_prelude()));
    }

    /// The prelude session: the one loaded ahead, or loaded now.
    fn session(&mut self) -> Option<Box<MontyRepl>> {
        match self.ready.take() {
            Some(Preload::Loaded(repl)) => repl,
            // A loading thread that panicked gave nothing: load it here.
            Some(Preload::Loading(handle)) => handle.join().ok().flatten().or_else(load_prelude),
            None => load_prelude(),
        }
    }

    /// Disposes of a session whose run has ended ([`Finished`]).
    fn finish(&self, repl: MontyRepl) {
        match self.finished {
            Finished::Freed => drop(repl),
            Finished::LeftToExit => std::mem::forget(repl),
        }
    }

    /// What is left of the paused call's time budget: the most the plan may still run when it resumes.
    pub fn time_left(&self) -> Option<Duration> {
        self.time_left
    }

    fn step(
        &mut self,
        progress: Result<ReplProgress, Box<ReplStartError>>,
        printed: String,
    ) -> Step {
        self.time_left = progress.as_ref().ok().and_then(time_left);
        let event = match progress {
            Err(e) => {
                let ReplStartError { mut repl, error } = *e;
                let mut event = failed(&error);
                if let Event::Failed {
                    exc_type,
                    snippet_lines,
                    running_line,
                    missing_key,
                    ..
                } = &mut event
                {
                    if snippet_lines.is_empty()
                        && (exc_type == "TimeoutError" || exc_type == "MemoryError")
                    {
                        let (line, rest) = read_back(repl, crate::lower::RUNNING_LINE);
                        repl = rest;
                        *running_line = match line {
                            Some(MontyObject::Int(line)) => {
                                u32::try_from(line).ok().filter(|l| *l > 0)
                            }
                            _ => None,
                        };
                    } else if exc_type == "KeyError" {
                        let (key, rest) = read_back(repl, crate::lower::MISSING_KEY);
                        repl = rest;
                        *missing_key = key.filter(|k| !matches!(k, MontyObject::None));
                    }
                }
                self.finish(repl);
                event
            }
            Ok(ReplProgress::Complete { repl, .. }) => {
                self.finish(repl);
                Event::Complete
            }
            Ok(ReplProgress::FunctionCall(call)) => {
                let raw = RawCall {
                    function_name: call.function_name.clone(),
                    args: call.args.clone(),
                    kwargs: call.kwargs.clone(),
                };
                self.paused = Some(call);
                Event::Call(raw)
            }
            Ok(progress @ ReplProgress::OsCall(_)) => {
                self.finish(progress.into_repl());
                Event::Refused {
                    message: "operating-system access is not available to plans".into(),
                }
            }
            // The lowered program defines every name it reads; an undefined one means the prelude the
            // binary loaded is not the one the compiler emitted code for.
            Ok(ReplProgress::NameLookup(lookup)) => {
                let message = format!(
                    "unsupported interpreter request: name `{}` is not defined",
                    lookup.name
                );
                self.finish(lookup.into_repl());
                Event::Refused { message }
            }
            Ok(progress @ ReplProgress::ResolveFutures(_)) => {
                self.finish(progress.into_repl());
                Event::Refused {
                    message: "unsupported interpreter request".into(),
                }
            }
        };
        Step { printed, event }
    }
}

fn failed(exc: &MontyException) -> Event {
    Event::Failed {
        exc_type: format!("{:?}", exc.exc_type()),
        message: exc.message().unwrap_or_default().to_string(),
        snippet_lines: exc
            .traceback()
            .iter()
            .filter(|f| f.filename == PLAN_SNIPPET)
            .map(|f| f.start.line)
            .collect(),
        running_line: None,
        missing_key: None,
    }
}

/// Reads a prelude global back from a session that stopped with an error: Monty checks time and memory
/// between instructions and raises there without a traceback, but leaves the session usable. The read gets
/// a fresh 100 ms budget; anything unexpected gives nothing rather than a wrong value. The session comes
/// back with the value.
fn read_back(mut repl: MontyRepl, expr: &str) -> (Option<MontyObject>, MontyRepl) {
    *repl.tracker_mut() = ResourceTracker::new(ResourceLimits {
        max_duration: Some(std::time::Duration::from_millis(100)),
        ..ResourceLimits::default()
    });
    let mut out = String::new();
    // The session is handed back either way, for the caller to dispose of ([`Finished`]).
    match repl.feed_start(
        expr,
        Vec::new(),
        PrintWriter::CollectString(&mut out, Some(0)),
    ) {
        Ok(ReplProgress::Complete { value, repl }) => (Some(value), repl),
        Ok(progress) => (None, progress.into_repl()),
        Err(e) => (None, e.repl),
    }
}

fn tracker(limits: &MachineLimits) -> ResourceTracker {
    ResourceTracker::new(ResourceLimits {
        max_duration: Some(std::time::Duration::from_millis(limits.timeout_ms)),
        max_memory: limits.max_memory,
        max_recursion_depth: limits.max_recursion_depth,
        max_suspensions: limits.max_suspensions,
        ..ResourceLimits::default()
    })
}

impl Machine for InProcess {
    fn prepare(&mut self, _limits: &MachineLimits) {
        if self.ready.is_some() {
            return;
        }
        // The limits are set on the session at `start`; loading needs none. Where no thread can be started,
        // `start` loads it.
        self.ready = std::thread::Builder::new()
            .name("zamburak-load-prelude".into())
            .spawn(load_prelude)
            .ok()
            .map(Preload::Loading);
    }

    fn start(&mut self, snippet: &str, limits: &MachineLimits) -> Step {
        self.paused = None;
        // The prelude session built at build time (loaded ahead when `prepare` was called); the plan's
        // snippet is compiled and run on it.
        let Some(mut session) = self.session() else {
            return Step::crashed(Death::Other(
                "the prelude session of this build cannot be loaded".into(),
            ));
        };
        *session.tracker_mut() = tracker(limits);
        let mut out = String::new();
        let progress = session.feed_start(
            snippet,
            Vec::new(),
            PrintWriter::CollectString(&mut out, Some(MAX_PRINT)),
        );
        self.step(progress, out)
    }

    fn restore(
        &mut self,
        paused: &Value,
        _limits: &MachineLimits,
    ) -> Result<RawCall, MachineError> {
        // The paused session carries the tracker (and so the limits) it was suspended with.
        let call: ReplFunctionCall = serde_json::from_value(paused.clone())
            .map_err(|e| MachineError::Unreadable(e.to_string()))?;
        let raw = RawCall {
            function_name: call.function_name.clone(),
            args: call.args.clone(),
            kwargs: call.kwargs.clone(),
        };
        // The tracker is read through the progress it belongs to.
        let progress = ReplProgress::FunctionCall(call);
        self.time_left = time_left(&progress);
        let ReplProgress::FunctionCall(call) = progress else {
            return Err(MachineError::NotACall);
        };
        self.paused = Some(call);
        Ok(raw)
    }

    fn resume(&mut self, value: MontyObject) -> Step {
        let Some(call) = self.paused.take() else {
            return Step::crashed(Death::Other("no call is waiting for a value".into()));
        };
        let mut out = String::new();
        let progress = call.resume(value, PrintWriter::CollectString(&mut out, Some(MAX_PRINT)));
        self.step(progress, out)
    }

    fn park(&mut self) -> Result<Value, MachineError> {
        let call = self.paused.take().ok_or(MachineError::NothingPaused)?;
        serde_json::to_value(&call).map_err(|e| MachineError::Unsaveable(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paused_run_that_cannot_be_loaded_or_saved_says_which_by_variant() {
        let mut m = InProcess::new();
        assert_eq!(m.park(), Err(MachineError::NothingPaused));
        let limits = MachineLimits {
            timeout_ms: 1000,
            max_recursion_depth: 10,
            max_suspensions: 10,
            max_memory: None,
        };
        let e = m
            .restore(&serde_json::json!({"not": "a paused run"}), &limits)
            .unwrap_err();
        assert!(matches!(&e, MachineError::Unreadable(_)), "{e:?}");
        assert!(
            e.to_string().starts_with("the paused run cannot be read: "),
            "{e}"
        );
        // The worker sends it over its pipe: it survives the trip as the same variant.
        let sent = serde_json::to_string(&MachineError::RestoreDied(Death::Memory)).unwrap();
        let got: MachineError = serde_json::from_str(&sent).unwrap();
        assert_eq!(got, MachineError::RestoreDied(Death::Memory));
        assert_eq!(
            got.to_string(),
            "the worker could not load the paused run: Memory"
        );
    }

    fn lowered(plan: &str) -> String {
        let module = ruff_python_parser::parse_module(plan)
            .unwrap()
            .into_syntax();
        crate::lower::compile(
            &module,
            plan,
            &crate::plan::Signatures::default(),
            crate::lower::Mode::Strict,
        )
        .unwrap()
        .snippet
    }

    #[test]
    fn a_session_loaded_ahead_runs_the_plan_as_one_loaded_at_start() {
        let limits = MachineLimits {
            timeout_ms: 5000,
            max_recursion_depth: 100,
            max_suspensions: 10,
            max_memory: None,
        };
        let snippet = lowered("xs = [1, 2]\nprint(len(xs) + 40)\n");
        let mut ahead = InProcess::new();
        ahead.prepare(&limits);
        // Preparing again while loading changes nothing.
        ahead.prepare(&limits);
        let with = ahead.start(&snippet, &limits);
        let without = InProcess::leaving_finished_sessions().start(&snippet, &limits);
        assert!(matches!(with.event, Event::Complete), "{:?}", with.event);
        assert!(
            matches!(without.event, Event::Complete),
            "{:?}",
            without.event
        );
        assert_eq!(with.printed, without.printed);
        assert!(with.printed.contains("42"), "{}", with.printed);
        // The loaded session was used up: the next start loads another.
        assert!(ahead.ready.is_none());
        let again = ahead.start(&snippet, &limits);
        assert_eq!(again.printed, with.printed);
    }
}
