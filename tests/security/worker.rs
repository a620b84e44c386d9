//! A hostile plan cannot take `zamburak run` down: the plan's interpreter runs in a worker process under
//! `limits.max_memory_mb`, a CPU limit and no core dumps, with nothing of the user's environment or open
//! descriptors. Each test runs the real binary on a copy of the example world and asserts the outcome, the
//! message, the trace and that no side effect happened.

use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::world::{World, records};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// The trace verifies and ends with an `end` record of status `error`.
fn assert_ended_in_error(trace: &Path) {
    let out = assert_cmd::Command::cargo_bin("zamburak")
        .unwrap()
        .arg("verify")
        .arg(trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let last = records(trace).pop().unwrap();
    assert_eq!(last["type"], "end", "{last}");
    assert_eq!(last["status"], "error", "{last}");
}

fn assert_no_crash_output(err: &str) {
    for bad in [
        "panicked",
        "backtrace",
        "RUST_BACKTRACE",
        "memory allocation of",
        "SIGABRT",
    ] {
        assert!(!err.contains(bad), "`{bad}` in:\n{err}");
    }
}

#[test]
fn a_huge_repetition_ends_the_run_as_a_memory_error_not_an_abort() {
    let world = World::new(None);
    let plan = world.write_plan("big.py", "s = \"a\" * (10**11)\nprint(len(s))\n");
    let out = world.run_expect(&plan, &[], 1);
    let err = stderr(&out);
    assert!(
        err.contains(
            "error[MemoryError]: the plan exceeded limits.max_memory_mb = 512 at line 1\n --> "
        ) && err.contains("big.py:1:1\n"),
        "{err}"
    );
    assert_no_crash_output(&err);
    assert_ended_in_error(&world.path("big.zjson"));
}

#[test]
fn a_join_that_grows_past_the_limit_ends_as_a_memory_error() {
    let world = World::new(None);
    let plan = world.write_plan(
        "join.py",
        "x = \"a\" * 1000000\ns = \"\".join([x] * 100000)\nprint(len(s))\n",
    );
    let started = Instant::now();
    let out = world.run_expect(&plan, &[], 1);
    let err = stderr(&out);
    assert!(
        err.contains("MemoryError]: the plan exceeded limits.max_memory_mb = 512"),
        "{err}"
    );
    assert_no_crash_output(&err);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("100000000000"),
        "nothing printed"
    );
    // Stopped by memory, not by the 5 s timeout.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_ended_in_error(&world.path("join.zjson"));
}

#[test]
fn an_email_choosing_the_size_cannot_crash_the_run_and_nothing_is_sent() {
    let world = World::new(None);
    let msg = "From: mallory@evil.example\r\nTo: me@example.com\r\nSubject: count\r\n\
               Message-ID: <count@evil.example>\r\nDate: Mon, 3 Nov 2025 09:00:00 +0000\r\n\r\n100000000000\r\n";
    std::fs::write(world.path("mail/inbox/new/1762399999.M9P9.example"), msg).unwrap();
    let plan = world.write_plan(
        "count.py",
        "emails = search_email(query=\"count\")\nn = int(emails[0][\"body\"].strip())\ns = \"a\" * n\n\
         send_email(to=\"me@example.com\", subject=\"size\", body=str(len(s)))\n",
    );
    let out = world.run_expect(&plan, &[], 1);
    let err = stderr(&out);
    assert!(
        err.contains("error[MemoryError]") && err.contains("count.py:3:"),
        "{err}"
    );
    assert_no_crash_output(&err);
    assert!(world.messages("out/outbox").is_empty(), "nothing was sent");
    assert_ended_in_error(&world.path("count.zjson"));
}

#[test]
fn the_policy_sets_the_memory_limit_and_a_plan_under_it_runs() {
    let world = World::new(None);
    let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    let policy = policy.replace("max_memory_mb: 512", "max_memory_mb: 64");
    assert!(policy.contains("max_memory_mb: 64"));
    std::fs::write(world.path("policy.yaml"), policy).unwrap();
    // About 100 MB of strings: over 64.
    let over = world.write_plan(
        "over.py",
        "xs = []\nfor i in range(100):\n    xs.append(\"a\" * 1000000 + str(i))\nprint(len(xs))\n",
    );
    let out = world.run_expect(&over, &[], 1);
    let err = stderr(&out);
    assert!(
        err.contains("MemoryError]: the plan exceeded limits.max_memory_mb = 64"),
        "{err}"
    );
    assert_no_crash_output(&err);
    // About 20 MB: under it.
    let under = world.write_plan(
        "under.py",
        "xs = []\nfor i in range(20):\n    xs.append(\"a\" * 1000000 + str(i))\nprint(len(xs))\n",
    );
    let out = world.run_expect(&under, &[], 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("20"));
}

#[test]
fn a_zero_or_huge_memory_limit_is_refused_when_the_policy_loads() {
    let world = World::new(None);
    let plan = world.write_plan("one.py", "print(1)\n");
    for bad in ["0", "70000"] {
        let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
        let policy = policy.replace("max_memory_mb: 512", &format!("max_memory_mb: {bad}"));
        std::fs::write(world.path(&format!("p{bad}.yaml")), policy).unwrap();
        let out = assert_cmd::Command::cargo_bin("zamburak")
            .unwrap()
            .arg("run")
            .arg(&plan)
            .arg("--policy")
            .arg(world.path(&format!("p{bad}.yaml")))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("`max_memory_mb` is {bad}")),
            "{}",
            stderr(&out)
        );
        assert!(!world.path("one.zjson").exists(), "nothing ran");
    }
}

#[test]
fn a_deeply_nested_argument_stops_the_run_without_reaching_the_tool() {
    let world = World::new(None);
    let plan = world.write_plan(
        "nest.py",
        "x = []\nfor i in range(100000):\n    x = [x]\nsend_email(to=\"me@example.com\", subject=\"s\", body=x)\n",
    );
    // The prelude stops boxing far below 100,000 levels; what crosses the pipe is parsed on a deep stack
    // and the host refuses it as it always did.
    let out = world.run_expect(&plan, &[], 3);
    let err = stderr(&out);
    assert!(err.contains("value nested too deeply"), "{err}");
    assert_no_crash_output(&err);
    assert!(world.messages("out/outbox").is_empty());
    let last = records(&world.path("nest.zjson")).pop().unwrap();
    assert_eq!(last["status"], "denied", "{last}");
}

/// The worker's pid while `parent` runs it (its only child).
fn worker_of(parent: u32) -> Option<u32> {
    let children =
        std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).ok()?;
    children.split_whitespace().next()?.parse().ok()
}

#[test]
fn the_worker_gets_no_environment_no_inherited_descriptors_and_no_core_dumps() {
    let world = World::new(None);
    let plan = world.write_plan("spin.py", "x = 0\nwhile True:\n    x = x + 1\n");
    let bin = assert_cmd::cargo::cargo_bin("zamburak");
    // fd 7 is left open (not close-on-exec) for zamburak, as a careless caller would.
    let script = format!(
        "exec 7</etc/hostname; exec {} run {} --policy {}",
        bin.display(),
        plan.display(),
        world.path("policy.yaml").display()
    );
    let mut child = StdCommand::new("bash")
        .arg("-c")
        .arg(script)
        .env("OPENAI_API_KEY", "sk-secret-in-the-parent")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(4);
    let worker = loop {
        if let Some(w) = worker_of(child.id()) {
            // Past exec and its own start-up (it closes descriptors first thing).
            std::thread::sleep(Duration::from_millis(300));
            break w;
        }
        assert!(Instant::now() < deadline, "no worker appeared");
        std::thread::sleep(Duration::from_millis(10));
    };
    let parent_fds: Vec<String> = std::fs::read_dir(format!("/proc/{}/fd", child.id()))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        parent_fds.contains(&"7".to_string()),
        "the parent inherited fd 7"
    );
    let environ = std::fs::read(format!("/proc/{worker}/environ")).unwrap();
    let cmdline = std::fs::read_to_string(format!("/proc/{worker}/cmdline")).unwrap();
    let mut fds: Vec<String> = std::fs::read_dir(format!("/proc/{worker}/fd"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    fds.sort();
    let limits = std::fs::read_to_string(format!("/proc/{worker}/limits")).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(cmdline.contains("__worker"), "{cmdline}");
    assert!(environ.is_empty(), "{}", String::from_utf8_lossy(&environ));
    assert_eq!(fds, ["0", "1", "2"]);
    let core = limits
        .lines()
        .find(|l| l.starts_with("Max core file size"))
        .unwrap();
    assert!(core.split_whitespace().nth(4) == Some("0"), "{core}");
    for name in ["Max cpu time", "Max address space"] {
        let line = limits.lines().find(|l| l.starts_with(name)).unwrap();
        assert!(!line.contains("unlimited"), "{line}");
    }
}

#[test]
fn a_killed_worker_ends_the_run_as_an_error_with_an_end_record() {
    let world = World::new(None);
    let plan = world.write_plan("spin.py", "x = 0\nwhile True:\n    x = x + 1\n");
    let bin = assert_cmd::cargo::cargo_bin("zamburak");
    let child = StdCommand::new(bin)
        .arg("run")
        .arg(&plan)
        .arg("--policy")
        .arg(world.path("policy.yaml"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(4);
    let worker = loop {
        if let Some(w) = worker_of(child.id()) {
            break w;
        }
        assert!(Instant::now() < deadline, "no worker appeared");
        std::thread::sleep(Duration::from_millis(10));
    };
    std::thread::sleep(Duration::from_millis(200));
    let killed = StdCommand::new("kill")
        .args(["-9", &worker.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("InternalError]: the interpreter failed (the worker was ended by signal 9)"),
        "{err}"
    );
    assert_no_crash_output(&err);
    assert_ended_in_error(&world.path("spin.zjson"));
}

#[test]
fn a_value_nested_as_deep_as_the_host_accepts_crosses_the_pipe_both_ways() {
    let world = World::new(None);
    // 120 levels out to the host (allowed, then refused by the tool for its type), and a result nested
    // 100 levels deep back into the plan (a JSON file the files tool reads and the plan parses).
    let nested = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    std::fs::write(world.path("files/deep.json"), &nested).unwrap();
    let plan = world.write_plan(
        "deep.py",
        "import json\nv = json.loads(read_file(path=\"deep.json\"))\nfor i in range(100):\n    v = v[0]\nprint(v + 99)\nx = []\nfor i in range(120):\n    x = [x]\nr = read_file(path=x)\n",
    );
    let out = world.run_expect(&plan, &[], 1);
    let err = stderr(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("100"),
        "{err}"
    );
    assert!(err.contains("deep.py:9: allow read_file"), "{err}");
    // Allowed, then refused for its type before it reaches the adapter, in Zamburak's words.
    assert!(
        err.contains("error[TypeError]: `read_file`: argument `path` must be str")
            && err.contains("deep.py:9:"),
        "{err}"
    );
    assert_no_crash_output(&err);
}

/// Found by fuzzing (`plan_run` timed out): one big-integer power runs for many seconds between two of
/// Monty's clock checks. The host's deadline stops it (the worker's CPU limit, 2 × timeout + 5 s, is the
/// backstop behind it) and the run says which limit it exceeded.
#[test]
fn one_long_arithmetic_operation_is_stopped_as_a_timeout() {
    let world = World::new(None);
    let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    std::fs::write(
        world.path("policy.yaml"),
        policy.replace("timeout_ms: 5000", "timeout_ms: 1000"),
    )
    .unwrap();
    let plan = world.write_plan("pow.py", "x = 22 ** 22222672\nprint(1)\n");
    let started = Instant::now();
    let out = world.run_expect(&plan, &[], 1);
    let err = stderr(&out);
    assert!(
        err.contains("TimeoutError]: the plan exceeded limits.timeout_ms = 1000"),
        "{err}"
    );
    assert_no_crash_output(&err);
    assert!(
        started.elapsed() < Duration::from_secs(1 + 3),
        "{:?}",
        started.elapsed()
    );
    assert_ended_in_error(&world.path("pow.zjson"));
}

/// `limits.timeout_ms` is a wall-clock limit even for one operation Monty's clock never interrupts: the host
/// kills the worker at the deadline plus a grace second, whatever it is doing, and the run ends as a
/// timeout with an `end` record. (Before, only the CPU limit stopped it: 2 × timeout + 5 s of CPU, far
/// longer in wall time on a busy machine.) The bound is generous for a loaded two-core machine.
#[test]
fn one_long_operation_is_stopped_at_the_deadline_and_recorded_as_a_timeout() {
    let world = World::new(None);
    let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    std::fs::write(
        world.path("policy.yaml"),
        policy.replace("timeout_ms: 5000", "timeout_ms: 2000"),
    )
    .unwrap();
    let plan = world.write_plan(
        "pow.py",
        "print(\"before\")\nx = 10 ** (10 ** 8)\nprint(\"after\")\n",
    );
    let started = Instant::now();
    let out = world.run_expect(&plan, &[], 1);
    let elapsed = started.elapsed();
    let err = stderr(&out);
    assert!(
        err.contains("TimeoutError]: the plan exceeded limits.timeout_ms = 2000"),
        "{err}"
    );
    assert_no_crash_output(&err);
    assert!(
        elapsed < Duration::from_secs(2 + 3),
        "the run ended {elapsed:?} after it started, for a 2 s deadline"
    );
    // What the step printed before the kill is lost with it, as with any worker death; the rest never ran.
    assert!(!String::from_utf8_lossy(&out.stdout).contains("after"));
    assert_ended_in_error(&world.path("pow.zjson"));
    let error = records(&world.path("pow.zjson"))
        .into_iter()
        .find(|r| r["type"] == "error")
        .expect("an error record");
    assert_eq!(error["exc_type"], "TimeoutError", "{error}");
    assert_eq!(
        error["message"], "the plan exceeded limits.timeout_ms = 2000",
        "{error}"
    );
}

fn alive(pid: u32) -> bool {
    // A zombie has given its memory and CPU back; only a running or sleeping process is an orphan.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()
                .map(|rest| rest.trim_start().to_string())
        })
        .is_some_and(|rest| !rest.starts_with('Z'))
}

/// A worker never outlives what started it: a `run` killed by SIGKILL (nothing of it can clean up) takes its
/// worker with it, even one spinning in a loop that would otherwise burn CPU until its limit (2 × timeout +
/// 5 s, here 65 s).
#[cfg(target_os = "linux")]
#[test]
fn a_worker_dies_with_the_run_that_started_it() {
    let world = World::new(None);
    let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    std::fs::write(
        world.path("policy.yaml"),
        policy.replace("timeout_ms: 5000", "timeout_ms: 30000"),
    )
    .unwrap();
    let plan = world.write_plan("spin.py", "n = 0\nwhile True:\n    n = n + 1\n");
    let mut run = world.spawn_run(&plan);
    let started = std::time::Instant::now();
    let worker = loop {
        if let Some(w) = common::world::child_pids(run.id()).first() {
            break *w;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "no worker started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // Let it reach the loop.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(alive(worker), "the worker should be running the plan");
    run.kill().unwrap();
    run.wait().unwrap();
    let killed = std::time::Instant::now();
    while alive(worker) && killed.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!alive(worker), "worker {worker} outlived its run");
}

/// A worker started ahead (`Machine::prepare`, loading the prelude while the plan is lowered) runs the plan
/// only under the limits it was started with: a `start` under other limits gets a new worker under those.
#[test]
fn a_prepared_worker_is_used_only_under_the_limits_it_was_started_with() {
    use zamburak::runtime::machine::{Event, MachineLimits};
    use zamburak::runtime::run::Engine;
    let limits = |mb: usize| MachineLimits {
        timeout_ms: 20_000,
        max_recursion_depth: 300,
        max_suspensions: 10,
        max_memory: Some(mb << 20),
    };
    // About 100 MB of strings.
    let plan = "xs = []\nfor i in range(100):\n    xs.append('a' * 1000000 + str(i))\n";
    let module = ruff_python_parser::parse_module(plan)
        .unwrap()
        .into_syntax();
    let lowered = zamburak::lower::compile(
        &module,
        plan,
        &zamburak::plan::Signatures::default(),
        zamburak::lower::Mode::Strict,
    )
    .unwrap();
    let engine = Engine::Worker(assert_cmd::cargo::cargo_bin("zamburak"));
    let run = |prepared: usize, started: usize| {
        let mut machine = engine.machine();
        machine.prepare(&limits(prepared));
        machine.start(&lowered.snippet, &limits(started)).event
    };
    let over = |e: &Event| {
        matches!(e, Event::Failed { exc_type, .. } if exc_type == "MemoryError")
            || matches!(e, Event::Crashed(zamburak::runtime::machine::Death::Memory))
    };
    assert!(matches!(run(512, 512), Event::Complete), "under the limit");
    let e = run(512, 64);
    assert!(
        over(&e),
        "the prepared worker's 512 MB must not serve a 64 MB start: {e:?}"
    );
    let e = run(64, 64);
    assert!(over(&e), "{e:?}");
    assert!(
        matches!(run(64, 512), Event::Complete),
        "a new worker under 512 MB"
    );
}
