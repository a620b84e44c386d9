//! The parent side: a [`Machine`] whose Monty runs in a worker process, killed at its deadline.

use std::io::{BufReader, BufWriter, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use monty_types::{MontyObject, OOM_EXIT_CODE};
use serde_json::Value;

use super::{MAX_FRAME, Reply, Request, SUBCOMMAND, read_frame, write_frame};
use crate::runtime::machine::{Death, Event, Machine, MachineError, MachineLimits, RawCall, Step};

/// How much of a worker's stderr is kept to tell why it died.
const MAX_STDERR: u64 = 64 << 10;

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
    /// The limits of a worker started by [`Machine::prepare`] that has not been asked anything yet: it is
    /// loading the prelude session, and the next `start` with the same limits uses it.
    prepared: Option<MachineLimits>,
}

struct Worker {
    child: Child,
    input: BufWriter<ChildStdin>,
    /// Replies, read and parsed by [`read_replies`] on a thread with a deep stack. `Ok(None)`: the worker
    /// closed its output; `Err`: a frame that is too large, too deep or malformed.
    replies: Receiver<Result<Option<Reply>, String>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

/// Reads the worker's replies until it closes its output or sends something unreadable. Parsing recurses
/// once per nesting level of a value (up to [`super::MAX_JSON_DEPTH`]), hence its own thread and stack.
fn read_replies(output: ChildStdout, replies: Sender<Result<Option<Reply>, String>>) {
    let mut output = BufReader::new(output);
    loop {
        let reply = match read_frame(&mut output, MAX_FRAME) {
            Ok(Some(frame)) => super::parse::<Reply>(&frame)
                .map(Some)
                .map_err(|e| format!("the worker's reply is malformed: {e}")),
            Ok(None) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err(e.to_string()),
            Err(_) => Ok(None),
        };
        let last = !matches!(reply, Ok(Some(_)));
        if replies.send(reply).is_err() || last {
            return;
        }
    }
}

impl WorkerMachine {
    /// A machine whose worker is `exe __worker`; `exe` must be a zamburak binary.
    pub fn new(exe: PathBuf) -> WorkerMachine {
        WorkerMachine {
            exe,
            worker: None,
            prepared: None,
        }
    }

    /// Starts a worker under `limits`; `preload`: it loads the prelude session before its first request.
    fn spawn(&mut self, limits: &MachineLimits, preload: bool) -> Result<(), Death> {
        self.stop();
        let mb = limits.max_memory.unwrap_or(usize::MAX) >> 20;
        let mb = u32::try_from(mb.max(1)).unwrap_or(u32::MAX);
        // The parent's deadline stops a step that runs too long (`exchange`); the CPU limit stays as a
        // backstop should the parent not get to it, with room for the worker's own work on messages.
        let cpu_secs = (limits.timeout_ms / 1000)
            .saturating_mul(2)
            .saturating_add(5);
        let mut command = Command::new(&self.exe);
        command
            .arg(SUBCOMMAND)
            .arg(mb.to_string())
            .arg(cpu_secs.to_string());
        if preload {
            command.arg("--preload");
        }
        let mut child = command
            // The plan's process gets nothing of the user's environment (API keys live there).
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                Death::Other(format!(
                    "cannot start the worker {}: {e}",
                    self.exe.display()
                ))
            })?;
        let (Some(input), Some(output), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Death::Other("the worker's pipes are missing".into()));
        };
        let stderr = std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut stderr = stderr;
            let _ = (&mut stderr).take(MAX_STDERR).read_to_end(&mut kept);
            // Drain the rest so the worker never blocks on a full pipe.
            let _ = std::io::copy(&mut stderr, &mut std::io::sink());
            kept
        });
        let (send, replies) = std::sync::mpsc::channel();
        let reader = std::thread::Builder::new()
            .name("zamburak-worker-replies".into())
            .stack_size(super::PARSE_STACK)
            .spawn(move || read_replies(output, send));
        if let Err(e) = reader {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Death::Other(format!(
                "cannot read the worker's replies: {e}"
            )));
        }
        self.worker = Some(Worker {
            child,
            input: BufWriter::new(input),
            replies,
            stderr: Some(stderr),
        });
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
        if stopped.is_some() {
            let _ = worker.child.kill();
        }
        let status = worker.child.wait();
        let stderr = worker
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
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
        if let Some(mut worker) = self.worker.take() {
            drop(worker.input);
            let _ = worker.child.kill();
            let _ = worker.child.wait();
            if let Some(h) = worker.stderr.take() {
                let _ = h.join();
            }
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
