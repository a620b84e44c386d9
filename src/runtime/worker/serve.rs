//! The worker side: limits first, then one reply per request until the parent closes the pipe.

use std::io::{self, BufReader, BufWriter};

use super::{Reply, Request, read_frame, write_frame};
use crate::runtime::machine::{Death, Event, InProcess, Machine, Step};

/// Exit status when the worker cannot arm its limits or its pipe fails (`EX_SOFTWARE`).
pub const BROKEN_EXIT_CODE: i32 = 70;

/// Largest request read: a snapshot's paused run is at most 256 MiB of JSON; anything larger would be
/// refused by the allocator anyway.
const MAX_REQUEST: usize = 512 << 20;

/// Address space beyond the memory budget: the binary, its mappings and the allocator's slack.
const ADDRESS_SPACE_HEADROOM: u64 = 1 << 30;

/// Runs a worker on stdin/stdout until the parent closes stdin. Returns the process's exit status.
/// `preload`: load the prelude session before the first request, while the parent is still checking and
/// lowering the plan (a worker started for a new run; one that restores a paused run needs none).
pub fn serve(max_memory_mb: u32, cpu_secs: u64, preload: bool) -> i32 {
    if !die_with_parent() {
        return BROKEN_EXIT_CODE;
    }
    close_inherited_descriptors();
    // A panic inside Monty is answered as a crashed step; its message would only be noise on stderr.
    std::panic::set_hook(Box::new(|_| {}));
    let budget = u64::from(max_memory_mb).saturating_mul(1 << 20);
    set_os_limits(budget, cpu_secs);
    // Armed before the first message is read, so every byte a request or the plan brings counts.
    if monty_alloc::set_limit(usize::try_from(budget).ok(), false).is_err() {
        eprintln!("zamburak worker: the memory limit cannot be enforced in this build");
        return BROKEN_EXIT_CODE;
    }
    // Parsing a request and running the plan both recurse with the data's nesting: a deep stack of
    // their own (an overflow would still only end this worker).
    std::thread::Builder::new()
        .name("zamburak-worker".into())
        .stack_size(super::PARSE_STACK)
        .spawn(move || answer_requests(preload))
        .map_or(BROKEN_EXIT_CODE, |t| t.join().unwrap_or(BROKEN_EXIT_CODE))
}

/// One reply per request until the parent closes the pipe; the worker's exit status.
fn answer_requests(preload: bool) -> i32 {
    // A run that has ended leaves this worker only waiting to be ended: its session is not freed.
    let mut machine = InProcess::leaving_finished_sessions();
    if preload {
        // Under the memory limit already: the session counts against the plan's budget, as it always did.
        machine.preload();
    }
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    loop {
        let request = match read_frame(&mut input, MAX_REQUEST) {
            Ok(Some(frame)) => super::parse::<Request>(&frame),
            Ok(None) => return 0,
            Err(_) => return BROKEN_EXIT_CODE,
        };
        let Ok(request) = request else {
            return BROKEN_EXIT_CODE;
        };
        // The parent's deadline starts now: whatever the plan runs next is timed.
        let budget = match &request {
            Request::Start { limits, .. } => Some(Some(limits.timeout_ms)),
            Request::Resume { .. } => Some(
                machine
                    .time_left()
                    .map(|left| u64::try_from(left.as_millis()).unwrap_or(u64::MAX)),
            ),
            Request::Restore { .. } | Request::Park => None,
        };
        if let Some(budget_ms) = budget {
            let notice = serde_json::to_vec(&Reply::Running { budget_ms })
                .map_err(io::Error::other)
                .and_then(|bytes| write_frame(&mut output, &bytes));
            if notice.is_err() {
                return BROKEN_EXIT_CODE;
            }
        }
        let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            handle(&mut machine, request)
        }))
        .unwrap_or_else(|_| {
            Reply::Step(Step {
                printed: String::new(),
                event: Event::Crashed(Death::Other("the interpreter panicked".into())),
            })
        });
        let sent = serde_json::to_vec(&reply)
            .map_err(io::Error::other)
            .and_then(|bytes| write_frame(&mut output, &bytes));
        if sent.is_err() {
            return BROKEN_EXIT_CODE;
        }
    }
}

fn handle(machine: &mut InProcess, request: Request) -> Reply {
    match request {
        Request::Start { snippet, limits } => Reply::Step(machine.start(&snippet, &limits)),
        Request::Restore { paused, limits } => Reply::Restored(machine.restore(&paused, &limits)),
        Request::Resume { value } => Reply::Step(machine.resume(value)),
        Request::Park => Reply::Parked(machine.park()),
    }
}

/// Closes every descriptor but stdin, stdout and stderr: whatever the parent's own parent left open
/// (a terminal, a socket) is not the plan's.
fn close_inherited_descriptors() {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in fds {
        // The directory's own descriptor is already closed by now: EBADF, ignored.
        let _ = nix::unistd::close(fd);
    }
}

/// A worker never outlives the process that started it (a `run`, an `approve`, `mcp serve`): when that process
/// dies, even by SIGKILL, the kernel kills the worker too, instead of leaving it to spin until its CPU limit.
/// `false`: the worker must not start.
fn die_with_parent() -> bool {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::Signal;
        let parent = std::os::unix::process::parent_id();
        if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err() {
            eprintln!("zamburak worker: cannot tie this worker's life to its parent's");
            return false;
        }
        // Adopted between the two reads: the parent is gone, and no signal will come. (A parent gone even
        // before the first read leaves the worker a closed stdin, on which it ends at once.)
        if std::os::unix::process::parent_id() != parent {
            return false;
        }
    }
    true
}

/// Backstops under the allocator's count: address space (a direct mapping the count misses), CPU time (a
/// loop that never reaches a time check) and no core file (it would hold the user's data).
fn set_os_limits(budget: u64, cpu_secs: u64) {
    use nix::sys::resource::{Resource, setrlimit};
    let address_space = budget
        .saturating_mul(2)
        .saturating_add(ADDRESS_SPACE_HEADROOM);
    // Each is best effort: a limit the system refuses leaves the allocator's count in force.
    let _ = setrlimit(Resource::RLIMIT_CORE, 0, 0);
    let _ = setrlimit(Resource::RLIMIT_AS, address_space, address_space);
    let _ = setrlimit(Resource::RLIMIT_CPU, cpu_secs, cpu_secs.saturating_add(2));
}
