//! One worker process as the parent holds it: started from this binary with its limits as arguments
//! ([`WorkerArgs`]), its stdin to write requests to, a thread reading its replies and one keeping the start
//! of its stderr. `client.rs` runs a plan on it; `pool.rs` keeps some started ahead.

use std::io::{BufReader, BufWriter, Read};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;

use super::{MAX_FRAME, Reply, SUBCOMMAND, read_frame};
use crate::runtime::machine::{Death, MachineLimits};

/// How much of a worker's stderr is kept to tell why it died.
const MAX_STDERR: u64 = 64 << 10;

/// The arguments a worker process starts with: its limits, armed before it reads a request. Workers
/// started with equal arguments are interchangeable until their first request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerArgs {
    pub memory_mb: u32,
    pub cpu_secs: u64,
    /// The worker loads the prelude session before its first request (while the parent checks and lowers
    /// the plan, or while it waits in a pool); a worker started to restore a paused run needs none.
    pub preload: bool,
}

/// One worker process and the threads that read it.
pub(super) struct Worker {
    pub(super) child: Child,
    pub(super) input: BufWriter<ChildStdin>,
    /// Replies, read and parsed by [`read_replies`] on a thread with a deep stack. `Ok(None)`: the worker
    /// closed its output; `Err`: a frame that is too large, too deep or malformed.
    pub(super) replies: Receiver<Result<Option<Reply>, String>>,
    pub(super) stderr: Option<JoinHandle<Vec<u8>>>,
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

impl WorkerArgs {
    /// The arguments of a worker enforcing `limits`.
    pub fn for_limits(limits: &MachineLimits) -> WorkerArgs {
        let mb = limits.max_memory.unwrap_or(usize::MAX) >> 20;
        // The parent's deadline stops a step that runs too long (`exchange`); the CPU limit stays as a
        // backstop should the parent not get to it, with room for the worker's own work on messages.
        WorkerArgs {
            memory_mb: u32::try_from(mb.max(1)).unwrap_or(u32::MAX),
            cpu_secs: (limits.timeout_ms / 1000)
                .saturating_mul(2)
                .saturating_add(5),
            preload: true,
        }
    }
}

impl Worker {
    /// Starts `exe __worker` with `args`; it arms its limits and waits for its first request.
    pub(super) fn start(exe: &Path, args: WorkerArgs) -> Result<Worker, Death> {
        let mut command = Command::new(exe);
        command
            .arg(SUBCOMMAND)
            .arg(args.memory_mb.to_string())
            .arg(args.cpu_secs.to_string());
        if args.preload {
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
            .map_err(|e| Death::Other(format!("cannot start the worker {}: {e}", exe.display())))?;
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
        Ok(Worker {
            child,
            input: BufWriter::new(input),
            replies,
            stderr: Some(stderr),
        })
    }

    /// The worker's process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process has ended already (an idle worker killed from outside).
    pub(super) fn has_ended(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the worker and reaps it.
    pub(super) fn kill(mut self) {
        drop(self.input);
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(h) = self.stderr.take() {
            let _ = h.join();
        }
    }
}
