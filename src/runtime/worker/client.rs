//! The parent side: a [`Machine`] whose Monty runs in a worker process, killed at its deadline (or from
//! outside, by its [`StopSwitch`]); the worker is started here or taken warm from a [`Pool`].

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use monty_types::{MontyObject, OOM_EXIT_CODE};
use serde_json::Value;

use super::pool::Pool;
use super::process::{Worker, WorkerArgs};
use super::stop::StopSwitch;
use super::{Reply, Request, write_frame};
use crate::runtime::machine::{Death, Event, Machine, MachineError, MachineLimits, RawCall, Step};

/// How long past the plan's time budget a step may take before the worker is killed. Monty raises
/// `TimeoutError` itself between instructions (with the line it stopped at), and the step still has to
/// cross the pipe: this leaves room for both on a busy machine, while one long operation, which Monty's
/// clock never interrupts, ends within this much of its deadline.
pub const DEADLINE_GRACE: Duration = Duration::from_secs(1);

/// A [`Machine`] in a worker process started from `exe` (this binary) on the first
/// [`Machine::start`] or [`Machine::restore`].
pub struct WorkerMachine {
    exe: PathBuf,
    worker: Option<Worker>,
    /// Warm workers to take instead of starting one (`mcp serve`).
    pool: Option<Arc<Pool>>,
    /// What kills this machine's worker from outside (`mcp serve`'s run timeout and shutdown).
    switch: Option<Arc<StopSwitch>>,
    /// The limits of a worker started by [`Machine::prepare`] that has not been asked anything yet: it is
    /// loading the prelude session, and the next `start` with the same limits uses it.
    prepared: Option<MachineLimits>,
}
impl WorkerMachine {
    /// A machine whose worker is `exe __worker`; `exe` must be a zamburak binary.
    pub fn new(exe: PathBuf) -> WorkerMachine {
        WorkerMachine {
            exe,
            worker: None,
            pool: None,
            switch: None,
            prepared: None,
        }
    }

    /// A machine that takes its worker from `pool` when one with the right limits is warm (else starts its
    /// own), and whose worker `switch` can kill from another thread.
    pub fn pooled(pool: Arc<Pool>, switch: Arc<StopSwitch>) -> WorkerMachine {
        WorkerMachine {
            exe: pool.exe().to_path_buf(),
            worker: None,
            pool: Some(pool),
            switch: Some(switch),
            prepared: None,
        }
    }

    /// Starts a worker under `limits`; `preload`: it loads the prelude session before its first request.
    fn spawn(&mut self, limits: &MachineLimits, preload: bool) -> Result<(), Death> {
        self.stop();
        let args = WorkerArgs::for_limits(limits);
        // A warm worker has its prelude loaded already, which a restore does not need but tolerates.
        let warm = self.pool.as_ref().and_then(|p| p.take(args));
        let worker = match warm {
            Some(warm) => warm,
            None => Worker::start(&self.exe, WorkerArgs { preload, ..args })?,
        };
        if let Some(switch) = &self.switch
            && let Err(why) = switch.attach(worker.pid())
        {
            worker.kill();
            return Err(Death::Stopped(why));
        }
        self.worker = Some(worker);
        Ok(())
    }

    /// One request, one reply; a worker that cannot answer is reaped and the reason returned. A step that
    /// runs the plan's code is announced ([`Reply::Running`], with the budget left) and waited for until the
    /// budget and [`DEADLINE_GRACE`] have passed; then the worker is killed and the step is a timeout.
    fn exchange(&mut self, request: &Request) -> Result<Reply, Death> {
        let Some(worker) = self.worker.as_mut() else {
            return Err(Death::Other("no worker is running".into()));
        };
        let bytes = serde_json::to_vec(request)
            .map_err(|e| Death::Other(format!("cannot encode a request: {e}")))?;
        // A worker that died before reading the request shows as a closed pipe; its reply channel then
        // says why.
        let _ = write_frame(&mut worker.input, &bytes);
        let mut running = false;
        let mut deadline: Option<Instant> = None;
        let stopped = loop {
            let next = match deadline {
                None => worker
                    .replies
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected),
                Some(at) => worker
                    .replies
                    .recv_timeout(at.saturating_duration_since(Instant::now())),
            };
            match next {
                Ok(Ok(Some(Reply::Running { budget_ms }))) if !running => {
                    running = true;
                    // No budget (or one past the clock's range): the CPU limit is the only backstop.
                    deadline = budget_ms.and_then(|ms| {
                        Instant::now()
                            .checked_add(Duration::from_millis(ms).checked_add(DEADLINE_GRACE)?)
                    });
                }
                Ok(Ok(Some(reply))) => return Ok(reply),
                Ok(Ok(None)) | Err(RecvTimeoutError::Disconnected) => break None,
                Ok(Err(problem)) => break Some(Death::Other(problem)),
                Err(RecvTimeoutError::Timeout) => break Some(Death::Time),
            }
        };
        Err(self.reap(stopped))
    }

    /// Ends the worker and says why it died: its own exit (the allocator's status, a signal) unless the
    /// parent stopped it (`stopped`, the reason).
    fn reap(&mut self, stopped: Option<Death>) -> Death {
        let Some(mut worker) = self.worker.take() else {
            return Death::Other("no worker is running".into());
        };
        drop(worker.input);
        // Detached before the worker is reaped, so the switch never signals a reused pid.
        let switched = self.switch.as_ref().and_then(|s| s.detach());
        if stopped.is_some() {
            let _ = worker.child.kill();
        }
        let status = worker.child.wait();
        let stderr = worker
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        // The switch killed it (or would have): that is why, whatever the pipe saw.
        if let Some(why) = switched {
            return Death::Stopped(why);
        }
        if let Some(death) = stopped {
            return death;
        }
        let stderr = String::from_utf8_lossy(&stderr);
        match status {
            Err(e) => Death::Other(format!("cannot wait for the worker: {e}")),
            Ok(s) if s.code() == Some(OOM_EXIT_CODE) => Death::Memory,
            Ok(_) if stderr.contains("overflowed its stack") => Death::Stack,
            Ok(s) if s.signal() == Some(nix::sys::signal::Signal::SIGXCPU as i32) => Death::Time,
            Ok(s) => Death::Other(match (s.code(), s.signal()) {
                (_, Some(sig)) => format!("the worker was ended by signal {sig}"),
                (Some(code), _) => format!("the worker exited with status {code}"),
                _ => "the worker ended".into(),
            }),
        }
    }

    fn stop(&mut self) {
        self.prepared = None;
        if let Some(worker) = self.worker.take() {
            if let Some(switch) = &self.switch {
                switch.detach();
            }
            worker.kill();
        }
    }

    fn step(&mut self, request: &Request) -> Step {
        match self.exchange(request) {
            Ok(Reply::Step(step)) => step,
            Ok(_) => {
                let death = self.reap(Some(Death::Other("the worker answered out of turn".into())));
                crashed(death)
            }
            Err(death) => crashed(death),
        }
    }
}

fn crashed(death: Death) -> Step {
    Step {
        printed: String::new(),
        event: Event::Crashed(death),
    }
}

impl Drop for WorkerMachine {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Machine for WorkerMachine {
    fn prepare(&mut self, limits: &MachineLimits) {
        if self.prepared.as_ref() == Some(limits) && self.worker.is_some() {
            return;
        }
        // A worker that cannot be started now is started (or fails to start, saying why) by `start`.
        if self.spawn(limits, true).is_ok() {
            self.prepared = Some(limits.clone());
        }
    }

    fn start(&mut self, snippet: &str, limits: &MachineLimits) -> Step {
        // The prepared worker, if it was started under these limits and has not been asked anything yet.
        let ready = self.prepared.take().is_some_and(|l| &l == limits) && self.worker.is_some();
        if !ready && let Err(death) = self.spawn(limits, true) {
            return crashed(death);
        }
        self.step(&Request::Start {
            snippet: snippet.to_string(),
            limits: limits.clone(),
        })
    }

    fn restore(&mut self, paused: &Value, limits: &MachineLimits) -> Result<RawCall, MachineError> {
        self.spawn(limits, false).map_err(MachineError::NoWorker)?;
        match self.exchange(&Request::Restore {
            paused: paused.clone(),
            limits: limits.clone(),
        }) {
            Ok(Reply::Restored(result)) => result,
            Ok(_) => Err(MachineError::OutOfTurn),
            Err(death) => Err(MachineError::RestoreDied(death)),
        }
    }

    fn resume(&mut self, value: MontyObject) -> Step {
        self.step(&Request::Resume { value })
    }

    fn park(&mut self) -> Result<Value, MachineError> {
        match self.exchange(&Request::Park) {
            Ok(Reply::Parked(result)) => result,
            Ok(_) => Err(MachineError::OutOfTurn),
            Err(death) => Err(MachineError::ParkDied(death)),
        }
    }
}
