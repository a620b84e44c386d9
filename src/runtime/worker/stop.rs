//! A run's stop switch: what another thread pulls to end a run from outside (`mcp serve`'s run timeout, its
//! shutdown). Pulling it kills the run's worker at once and the process groups of the run's MCP servers, and
//! refuses any worker started later; the run's own thread then meets a dead worker, ends the run with an
//! error naming why ([`Stopped`]) and writes the trace's `end` record as for any other crash.
//!
//! A pid is signalled only while it is attached: the worker's owner detaches it before reaping the
//! process, so the switch can never kill a pid the system has given to someone else.

use std::sync::{Mutex, MutexGuard, PoisonError};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use crate::runtime::machine::Stopped;

/// One run's switch.
#[derive(Debug, Default)]
pub struct StopSwitch {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    why: Option<Stopped>,
    /// The run's worker while it lives.
    worker: Option<u32>,
    /// Process groups of the run's MCP servers while they run.
    groups: Vec<u32>,
}

fn sigkill(pid: u32, group: bool) {
    let Ok(raw) = i32::try_from(pid) else { return };
    // 0 and 1 would reach this process's group or init: never a worker or a server's group.
    if raw <= 1 {
        return;
    }
    let pid = Pid::from_raw(raw);
    let _ = if group {
        killpg(pid, Signal::SIGKILL)
    } else {
        kill(pid, Signal::SIGKILL)
    };
}

impl StopSwitch {
    pub fn new() -> StopSwitch {
        StopSwitch::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned state is still whole.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops the run for `why` (the first reason stays): kills its worker and its servers' groups now.
    pub fn stop(&self, why: Stopped) {
        let mut state = self.lock();
        state.why.get_or_insert(why);
        if let Some(pid) = state.worker {
            sigkill(pid, false);
        }
        for &group in &state.groups {
            sigkill(group, true);
        }
    }

    /// Why the run was stopped, if it was.
    pub fn stopped(&self) -> Option<Stopped> {
        self.lock().why
    }

    /// Attaches the run's worker `pid`; refused once the run is stopped (the caller kills the worker).
    pub fn attach(&self, pid: u32) -> Result<(), Stopped> {
        let mut state = self.lock();
        match state.why {
            Some(why) => Err(why),
            None => {
                state.worker = Some(pid);
                Ok(())
            }
        }
    }

    /// Detaches the worker before it is reaped; returns why the run was stopped, if it was.
    pub fn detach(&self) -> Option<Stopped> {
        let mut state = self.lock();
        state.worker = None;
        state.why
    }

    /// Attaches the process groups of the run's MCP servers (each server leads its own); refused once the
    /// run is stopped (the caller shuts them down).
    pub fn attach_groups(&self, groups: impl IntoIterator<Item = u32>) -> Result<(), Stopped> {
        let mut state = self.lock();
        if let Some(why) = state.why {
            return Err(why);
        }
        state.groups.extend(groups);
        Ok(())
    }

    /// Detaches the servers' groups before the servers are shut down and reaped.
    pub fn detach_groups(&self) {
        self.lock().groups.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_switch_refuses_what_comes_later_and_keeps_the_first_reason() {
        let switch = StopSwitch::new();
        assert_eq!(switch.stopped(), None);
        assert_eq!(switch.detach(), None);
        switch.stop(Stopped::RunTimeout { secs: 3 });
        switch.stop(Stopped::Shutdown);
        assert_eq!(switch.stopped(), Some(Stopped::RunTimeout { secs: 3 }));
        assert_eq!(switch.attach(4242), Err(Stopped::RunTimeout { secs: 3 }));
        assert_eq!(
            switch.attach_groups([4243]),
            Err(Stopped::RunTimeout { secs: 3 })
        );
        assert_eq!(switch.detach(), Some(Stopped::RunTimeout { secs: 3 }));
    }

    #[test]
    fn stopping_kills_the_attached_process_and_nothing_after_detach() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let switch = StopSwitch::new();
        switch.attach(child.id()).unwrap();
        switch.stop(Stopped::Shutdown);
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "{status}");

        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let switch = StopSwitch::new();
        switch.attach(other.id()).unwrap();
        switch.detach();
        switch.stop(Stopped::Shutdown);
        assert!(
            other.try_wait().unwrap().is_none(),
            "a detached pid is left alone"
        );
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
