//! Warm workers for a long-lived process (`mcp serve`): a few worker processes started ahead of time, so a
//! run takes one that is ready instead of paying the process start. A worker still serves exactly one run
//! (its limits, its memory and its isolation are that run's): a run takes it out of the pool for good, and
//! the pool starts another in the background.
//!
//! Every pooled worker is started by the pool's own thread, which lives as long as the pool: a worker ties
//! its life to the thread that started it (`PR_SET_PDEATHSIG` follows the starting thread, not the
//! process), so a worker started on a short-lived thread would die with that thread. The thread ends only at
//! [`Pool::shutdown`], when every worker is to die anyway.
//!
//! Workers are interchangeable only when started with the same [`WorkerArgs`] (their limits are armed
//! before the first request): the pool holds workers for one set, that of the policy it serves; a run
//! asking for other limits starts its own.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::process::{Worker, WorkerArgs};
use super::stop::StopSwitch;

/// How long the pool waits before trying again when a worker cannot be started (out of processes or
/// memory); runs start their own meanwhile.
const RETRY: Duration = Duration::from_millis(500);

/// Warm workers of one binary and one set of limits.
pub struct Pool {
    exe: PathBuf,
    args: WorkerArgs,
    size: usize,
    state: Mutex<State>,
    /// Wakes the refill thread (a worker was taken, or the pool stops).
    wake: Condvar,
}

#[derive(Default)]
struct State {
    idle: VecDeque<Worker>,
    stopping: bool,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("exe", &self.exe)
            .field("args", &self.args)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

/// A run's engine in a served process: workers from `pool`, killed from outside by `switch`.
#[derive(Clone, Debug)]
pub struct Pooled {
    pub pool: Arc<Pool>,
    pub switch: Arc<StopSwitch>,
}

impl Pool {
    /// A pool keeping `size` workers of `exe` started with `args` ready (none when `size` is 0: every run
    /// starts its own), filled from now on by its own thread.
    pub fn start(exe: PathBuf, args: WorkerArgs, size: usize) -> Arc<Pool> {
        let pool = Arc::new(Pool {
            exe,
            args,
            size,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        if size > 0 {
            let filler = Arc::clone(&pool);
            // Without the thread the pool stays empty and every run starts its own worker: slower, not wrong.
            let _ = std::thread::Builder::new()
                .name("zamburak-pool".into())
                .spawn(move || filler.refill());
        }
        pool
    }

    /// The binary the workers run.
    pub fn exe(&self) -> &Path {
        &self.exe
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned queue is still a queue.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `size` workers ready until the pool stops. Workers are started outside the lock.
    fn refill(&self) {
        loop {
            {
                let mut state = self.lock();
                while !state.stopping && state.idle.len() >= self.size {
                    state = self
                        .wake
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                if state.stopping {
                    return;
                }
            }
            match Worker::start(&self.exe, self.args) {
                Ok(worker) => {
                    let mut state = self.lock();
                    if state.stopping {
                        drop(state);
                        worker.kill();
                        return;
                    }
                    state.idle.push_back(worker);
                }
                Err(_) => {
                    let state = self.lock();
                    if state.stopping {
                        return;
                    }
                    let _ = self.wake.wait_timeout(state, RETRY);
                }
            }
        }
    }

    /// A ready worker started with `args`, if the pool has one; the pool starts another in its place.
    pub(super) fn take(&self, args: WorkerArgs) -> Option<Worker> {
        if args != self.args {
            return None;
        }
        let mut ended = Vec::new();
        let found = {
            let mut state = self.lock();
            loop {
                let Some(mut worker) = state.idle.pop_front() else {
                    break None;
                };
                // Killed from outside while it waited: reaped, and not handed to a run.
                if worker.has_ended() {
                    ended.push(worker);
                } else {
                    break Some(worker);
                }
            }
        };
        self.wake.notify_all();
        for worker in ended {
            worker.kill();
        }
        found
    }

    /// How many workers wait ready now.
    pub fn ready(&self) -> usize {
        self.lock().idle.len()
    }

    /// Stops refilling and kills every waiting worker (the workers runs took are theirs to end).
    pub fn shutdown(&self) {
        let idle = {
            let mut state = self.lock();
            state.stopping = true;
            std::mem::take(&mut state.idle)
        };
        self.wake.notify_all();
        for worker in idle {
            worker.kill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A stand-in worker: a script that ignores its arguments and waits.
    fn fake_exe(dir: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let exe = dir.join("worker.sh");
        std::fs::write(&exe, "#!/bin/sh\nexec sleep 60\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        exe
    }

    fn wait_for(pool: &Pool, ready: usize) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while pool.ready() != ready {
            assert!(Instant::now() < deadline, "{} ready", pool.ready());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    }

    #[test]
    fn each_worker_is_taken_once_the_pool_refills_and_shutdown_kills_the_idle() {
        let tmp = tempfile::tempdir().unwrap();
        let args = WorkerArgs {
            memory_mb: 64,
            cpu_secs: 5,
            preload: false,
        };
        let pool = Pool::start(fake_exe(tmp.path()), args, 2);
        wait_for(&pool, 2);
        let a = pool.take(args).unwrap();
        let b = pool.take(args).unwrap();
        assert_ne!(a.pid(), b.pid(), "a worker is handed out once");
        // Other limits: not from this pool.
        let other = WorkerArgs {
            memory_mb: 65,
            ..args
        };
        assert!(pool.take(other).is_none());
        wait_for(&pool, 2);
        let idle: Vec<u32> = pool.lock().idle.iter().map(Worker::pid).collect();
        assert!(!idle.contains(&a.pid()) && !idle.contains(&b.pid()));
        // An idle worker killed from outside is not handed to a run.
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(idle[0]).unwrap()),
            nix::sys::signal::Signal::SIGKILL,
        );
        std::thread::sleep(Duration::from_millis(100));
        let c = pool.take(args).unwrap();
        assert_eq!(c.pid(), idle[1]);
        wait_for(&pool, 2);
        let idle: Vec<u32> = pool.lock().idle.iter().map(Worker::pid).collect();
        pool.shutdown();
        assert_eq!(pool.ready(), 0);
        for pid in &idle {
            assert!(!alive(*pid), "{pid} outlived the shutdown");
        }
        assert!(alive(a.pid()), "a taken worker is its run's to end");
        for w in [a, b, c] {
            w.kill();
        }
    }
}
