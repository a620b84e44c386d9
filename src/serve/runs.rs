//! The runs under way in one server: how many may run at once, each one's wall-clock timeout, and stopping
//! them all at shutdown.
//!
//! Each run has a slot ([`Ticket`]) for as long as its thread works on it, and a stop switch
//! ([`StopSwitch`]) that kills its worker and its MCP servers from here. At `--run-timeout` the switch is
//! pulled and the client is answered: with the run's own answer when its thread ends within
//! [`STOP_GRACE`] (the trace ended with a `TimeoutError`), else with a timeout answer that says the trace
//! ends when the tool call under way returns. At shutdown every switch is pulled and the threads get
//! [`STOP_GRACE`] to write their traces' `end` records.
//!
//! A run whose request the client cancels (`notifications/cancelled`) is stopped the same way, its switch
//! pulled for [`Stopped::Cancelled`] as the future waiting on it is dropped: no further tool call starts,
//! and its trace ends with the cancellation.
//!
//! At most `--max-runs` run at once; more wait for a slot (their timeout starts with the run), and past
//! [`MAX_WAITING`] waiting the request is refused at once, so a client cannot make the server hold an
//! unbounded number of plans.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::context::Session;
use super::runner::Runner;
use crate::runtime::machine::Stopped;
use crate::runtime::worker::stop::StopSwitch;

/// Default `--run-timeout`: a minute, the request timeout many MCP clients keep by default (a plan's own
/// interpreter budget is the policy's `limits.timeout_ms`, 5 s by default; the rest is its tool calls).
pub const DEFAULT_RUN_TIMEOUT_SECS: u64 = 60;

/// Default `--warm-workers`.
pub const DEFAULT_WARM_WORKERS: usize = 2;

/// Default `--max-runs`.
pub const DEFAULT_MAX_RUNS: usize = 8;

/// Most runs that may wait for a slot; one more is refused.
pub const MAX_WAITING: usize = 64;

/// How long a stopped run's thread gets to end its trace before the answer (or the shutdown) goes on
/// without it.
pub const STOP_GRACE: Duration = Duration::from_secs(3);

/// The server's operational settings (`mcp serve`'s flags).
#[derive(Clone, Copy, Debug)]
pub struct Ops {
    /// Wall-clock time a run may take, its tool calls included.
    pub run_timeout: Duration,
    /// Workers kept started ahead of runs.
    pub warm_workers: usize,
    /// Runs under way at once.
    pub max_runs: usize,
}

impl Default for Ops {
    fn default() -> Ops {
        Ops {
            run_timeout: Duration::from_secs(DEFAULT_RUN_TIMEOUT_SECS),
            warm_workers: DEFAULT_WARM_WORKERS,
            max_runs: DEFAULT_MAX_RUNS,
        }
    }
}

/// The runs under way.
pub struct Runs {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    timeout: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    stopping: bool,
    next: u64,
    live: BTreeMap<u64, Arc<StopSwitch>>,
}

/// One run's slot: held by the run's thread until it ends.
pub struct Ticket {
    runs: Arc<Runs>,
    key: u64,
    switch: Arc<StopSwitch>,
    _slot: OwnedSemaphorePermit,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.runs.lock().live.remove(&self.key);
    }
}

impl Runs {
    pub fn new(ops: &Ops) -> Arc<Runs> {
        Arc::new(Runs {
            slots: Arc::new(Semaphore::new(ops.max_runs.max(1))),
            waiting: AtomicUsize::new(0),
            timeout: ops.run_timeout,
            state: Mutex::new(State::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned map is still whole.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for one run, once one is free; refused while the server stops or when too many wait.
    pub async fn begin(self: &Arc<Self>) -> Result<Ticket, String> {
        let slot = match Arc::clone(&self.slots).try_acquire_owned() {
            Ok(slot) => slot,
            Err(tokio::sync::TryAcquireError::Closed) => return Err(shutting_down()),
            Err(tokio::sync::TryAcquireError::NoPermits) => {
                // Counted back however the wait ends, a request the client cancelled included.
                let _waiting = Waiting::enter(&self.waiting).ok_or_else(|| {
                    format!(
                        "the server is busy ({MAX_WAITING} runs wait for a slot already); try again later"
                    )
                })?;
                Arc::clone(&self.slots)
                    .acquire_owned()
                    .await
                    .map_err(|_| shutting_down())?
            }
        };
        let mut state = self.lock();
        if state.stopping {
            return Err(shutting_down());
        }
        let key = state.next;
        state.next = state.next.wrapping_add(1);
        let switch = Arc::new(StopSwitch::new());
        state.live.insert(key, Arc::clone(&switch));
        drop(state);
        Ok(Ticket {
            runs: Arc::clone(self),
            key,
            switch,
            _slot: slot,
        })
    }

    /// Stops every run under way (their workers and MCP servers are killed now) and refuses new ones.
    pub fn stop_all(&self) {
        let live: Vec<Arc<StopSwitch>> = {
            let mut state = self.lock();
            state.stopping = true;
            state.live.values().cloned().collect()
        };
        self.slots.close();
        for switch in live {
            switch.stop(Stopped::Shutdown);
        }
    }

    /// Waits until every run's thread has ended, at most `grace`; whether they all did.
    pub async fn drained(&self, grace: Duration) -> bool {
        let until = Instant::now() + grace;
        loop {
            if self.lock().live.is_empty() {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Runs `plan` as run number `n` in the slot `ticket`, within the run timeout. `Err`: the run's thread
    /// failed (a panic), for an error result.
    pub async fn run(
        &self,
        runner: Arc<Runner>,
        n: u64,
        plan: String,
        ticket: Ticket,
        context: Arc<Session>,
    ) -> Result<Value, &'static str> {
        let (id, dir) = match runner.claim(n) {
            Ok(both) => both,
            Err(doc) => return Ok(doc),
        };
        let switch = Arc::clone(&ticket.switch);
        let mut job = {
            let (id, dir, switch) = (id.clone(), dir.clone(), Arc::clone(&switch));
            // A blocking thread per run; its interpreter runs in a worker process of its own. The slot is
            // the thread's until the run (and its trace) has ended.
            tokio::task::spawn_blocking(move || {
                let _slot = ticket;
                runner.run_claimed(&id, &dir, &plan, &switch, &context)
            })
        };
        // Until the run's answer is in, dropping this future (the client cancelled the request) stops the run.
        let guard = CancelOnDrop(Some(Arc::clone(&switch)));
        let joined = match tokio::time::timeout(self.timeout, &mut job).await {
            Ok(joined) => joined,
            Err(_) => {
                let secs = self.timeout.as_secs();
                switch.stop(Stopped::RunTimeout { secs });
                match tokio::time::timeout(STOP_GRACE, &mut job).await {
                    Ok(joined) => joined,
                    Err(_) => {
                        guard.disarm();
                        return Ok(still_stopping(&id, &dir, secs));
                    }
                }
            }
        };
        guard.disarm();
        let mut doc = joined
            .map_err(|_| "the run failed inside the server and was stopped; nothing more ran")?;
        if let Some(Stopped::RunTimeout { secs }) = switch.stopped() {
            timed_out(&mut doc, secs);
        }
        Ok(doc)
    }
}

/// A run's stop switch, pulled with [`Stopped::Cancelled`] when dropped armed: the future waiting on the run
/// was dropped before the run ended, so nobody waits for its answer and no further tool call may start.
struct CancelOnDrop(Option<Arc<StopSwitch>>);

impl CancelOnDrop {
    /// The run has been answered: leave it be.
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(switch) = self.0.take() {
            switch.stop(Stopped::Cancelled);
        }
    }
}

/// A run stopped at its timeout that ended in some other error: the tool call under way failed when its
/// server was killed (the trace records that failure). The answer names the timeout as the cause.
fn timed_out(doc: &mut Value, secs: u64) {
    if doc["status"] == "for_the_person" {
        // After a cut the planner is told only that the run hit the timeout (the timing channel,
        // docs/serve.md), in fixed words: never what the call under way was or how it failed.
        doc["error"] = json!({
            "type": "TimeoutError",
            "line": Value::Null,
            "message": format!(
                "the run exceeded the server's run timeout of {secs} s (its tool calls included) and was \
                 stopped"
            ),
        });
        return;
    }
    let error = &doc["error"];
    if doc["status"] != "error" || error["type"] == "TimeoutError" {
        return;
    }
    let then = error["message"].as_str().unwrap_or("it failed");
    doc["error"] = json!({
        "type": "TimeoutError",
        "line": error["line"].clone(),
        "message": format!(
            "the run exceeded the server's run timeout of {secs} s (its tool calls included) and was \
             stopped; the call under way then failed: {then}"
        ),
    });
}

/// One request waiting for a slot, counted while it waits.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    /// Counts one more waiting request, unless [`MAX_WAITING`] already wait.
    fn enter(count: &'a AtomicUsize) -> Option<Waiting<'a>> {
        count
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_WAITING).then_some(n + 1)
            })
            .ok()
            .map(|_| Waiting(count))
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn shutting_down() -> String {
    "the server is shutting down; no new run starts".into()
}

/// The answer to a run stopped at its timeout whose thread is still inside a tool call: the run is over
/// (no further call starts), and its trace ends when that call returns.
fn still_stopping(id: &str, dir: &Path, secs: u64) -> Value {
    // Nothing of the run is read back yet (its trace is still open): the answer is cut where it starts,
    // and says only that the timeout stopped it (the timing channel, docs/serve.md).
    let mut answer = crate::runtime::answer::Answer::state(id, "for_the_person");
    answer.rest = Some(crate::runtime::answer::CUT_MARKER);
    answer.trace = Some(dir.join("plan.zjson").display().to_string());
    answer.error = Some(crate::runtime::answer::ToldError {
        exc_type: "TimeoutError".into(),
        line: None,
        message: format!(
            "the run exceeded the server's run timeout of {secs} s (its tool calls included) and was \
             stopped; a tool call under way has not returned yet, and the trace ends when it does \
             (run_status tells)"
        ),
    });
    answer.to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_requests_are_bounded_and_counted_back_when_dropped() {
        let count = AtomicUsize::new(0);
        let all: Vec<Waiting<'_>> = (0..MAX_WAITING)
            .map(|_| Waiting::enter(&count).unwrap())
            .collect();
        assert!(Waiting::enter(&count).is_none(), "one past the bound");
        drop(all);
        assert_eq!(count.load(Ordering::SeqCst), 0);
        assert!(Waiting::enter(&count).is_some());
    }

    #[test]
    fn dropping_an_armed_guard_cancels_the_run_and_a_disarmed_one_does_not() {
        let switch = Arc::new(StopSwitch::new());
        CancelOnDrop(Some(Arc::clone(&switch))).disarm();
        assert_eq!(switch.stopped(), None);
        drop(CancelOnDrop(Some(Arc::clone(&switch))));
        assert_eq!(switch.stopped(), Some(Stopped::Cancelled));
    }

    #[test]
    fn a_run_stopped_at_its_timeout_answers_timeout_whatever_it_ended_in() {
        let mut doc =
            json!({"status": "error", "error": {"type": "ToolError", "line": 2, "message": "m"}});
        timed_out(&mut doc, 7);
        assert_eq!(doc["error"]["type"], "TimeoutError");
        assert_eq!(doc["error"]["line"], 2);
        let message = doc["error"]["message"].as_str().unwrap();
        assert!(message.contains("run timeout of 7 s") && message.ends_with(": m"));
        let mut done = json!({"status": "completed", "error": null});
        timed_out(&mut done, 7);
        assert_eq!(done, json!({"status": "completed", "error": null}));
    }
}
