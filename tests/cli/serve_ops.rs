//! `zamburak mcp serve` as an operator sees it: several runs at once, the per-run wall-clock timeout (tool
//! calls included), a worker killed by a signal or by its memory limit, shutdown on stdin closed, SIGTERM and
//! SIGINT with no orphan left (the server's process tree is listed before and checked after), a client's
//! giant line, and a small load through the official MCP Python SDK (benches/serve_load.py).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common;
use common::serve::{Raw, sdk_python};
use common::world::World;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn zamburak() -> PathBuf {
    assert_cmd::cargo::cargo_bin("zamburak")
}

/// `(ppid, start time)` of a live, non-zombie process.
fn stat_of(pid: u32) -> Option<(u32, String)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields[0] == "Z" {
        return None;
    }
    Some((fields[1].parse().ok()?, fields[19].to_string()))
}

/// Every live process under `root`, with its start time (so a reused pid is not taken for it).
fn descendants(root: u32) -> BTreeMap<u32, String> {
    let all: BTreeMap<u32, (u32, String)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, stat_of(pid)?)))
        .collect();
    let mut found = BTreeMap::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (pid, (ppid, start)) in &all {
            if *ppid == p && !found.contains_key(pid) {
                found.insert(*pid, start.clone());
                frontier.push(*pid);
            }
        }
    }
    found
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// The worker processes under the server.
fn workers(server: u32) -> Vec<u32> {
    descendants(server)
        .into_keys()
        .filter(|p| cmdline(*p).contains("__worker"))
        .collect()
}

/// Asserts that none of `tree` is alive any more (within a moment).
fn assert_all_gone(tree: &BTreeMap<u32, String>) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive: Vec<(u32, String)> = tree
            .iter()
            .filter(|(pid, start)| stat_of(**pid).is_some_and(|(_, s)| &s == *start))
            .map(|(pid, _)| (*pid, cmdline(*pid)))
            .collect();
        if alive.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "orphans: {alive:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn verify(trace: &Path) -> Option<i32> {
    Command::new(zamburak())
        .arg("verify")
        .arg(trace)
        .output()
        .unwrap()
        .status
        .code()
}

fn trace_of(doc: &Value) -> PathBuf {
    PathBuf::from(doc["trace"].as_str().unwrap())
}

const LOOP: &str = "while True:\n    pass\n";

#[test]
fn runs_go_at_once_and_the_run_timeout_stops_one_while_the_server_goes_on() {
    let world = World::new(None);
    let mut s = Raw::start_in(world.dir.path(), &["--run-timeout", "2"]);
    let started = Instant::now();
    s.run_plan(1, LOOP);
    s.run_plan(2, LOOP);
    s.run_plan(3, "print(\"three\")\n");
    // The short run is answered while both loops still run: runs do not queue behind each other.
    let three = s.run_answer(3);
    assert_eq!(three["status"], "completed", "{three}");
    assert!(
        !s.answered(1) && !s.answered(2),
        "the loops ended before the short run was answered"
    );
    let mut ids = vec![three["run"].clone()];
    for id in [1, 2] {
        let doc = s.run_answer(id);
        let waited = started.elapsed();
        assert_eq!(doc["status"], "error", "{doc}");
        assert_eq!(doc["error"]["type"], "TimeoutError", "{doc}");
        let message = doc["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("run timeout of 2 s"),
            "the server's timeout, not the policy's 5 s: {doc}"
        );
        // Not before the timeout; how long after depends on the machine's load, which a test never
        // judges (the message above says which timeout stopped it).
        assert!(waited >= Duration::from_secs(2), "{waited:?}");
        // The trace ended properly: its chain checks and it has its `end` record.
        assert_eq!(verify(&trace_of(&doc)), Some(0), "{doc}");
        ids.push(doc["run"].clone());
    }
    ids.sort_by_key(|v| v.to_string());
    ids.dedup();
    assert_eq!(ids.len(), 3, "each run has its own directory");
    s.run_plan(4, "print(\"still here\")\n");
    assert_eq!(s.run_answer(4)["status"], "completed");
    drop(s.child.stdin.take());
    assert!(s.exit_status(Duration::from_secs(10)).success());
}

#[test]
fn a_worker_killed_by_a_signal_or_its_memory_limit_ends_only_its_run() {
    let world = World::new(None);
    // No warm workers: the only worker under the server is the run's own.
    let mut s = Raw::start_in(world.dir.path(), &["--warm-workers", "0"]);
    let server = s.pid();
    s.run_plan(1, LOOP);
    wait_until("the run's worker", || workers(server).len() == 1);
    let worker = workers(server)[0];
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(worker as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let doc = s.run_answer(1);
    assert_eq!(doc["status"], "error", "{doc}");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains("signal 9"), "{doc}");
    assert_eq!(verify(&trace_of(&doc)), Some(0), "{doc}");

    // Past the hard memory limit in one burst: the worker's allocator ends it.
    s.run_plan(
        2,
        "x = \"a\" * 1000000\ns = \"\".join([x] * 100000)\nprint(len(s))\n",
    );
    let doc = s.run_answer(2);
    assert_eq!(doc["status"], "error", "{doc}");
    assert_eq!(doc["error"]["type"], "MemoryError", "{doc}");
    assert_eq!(verify(&trace_of(&doc)), Some(0), "{doc}");

    s.run_plan(3, "print(\"still here\")\n");
    let doc = s.run_answer(3);
    assert_eq!(doc["status"], "completed", "{doc}");
    assert_eq!(doc["output"], json!([{"text": "still here\n"}]));
    drop(s.child.stdin.take());
    assert!(s.exit_status(Duration::from_secs(10)).success());
}

#[test]
fn a_run_stuck_in_a_builtin_call_is_answered_at_its_timeout_and_its_trace_ends_later() {
    // A web server that accepts and never answers: the fetch waits out its own 5 s timeout.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            held.push(conn);
        }
    });
    let world = World::new(Some(port));
    let mut s = Raw::start_in(world.dir.path(), &["--run-timeout", "1"]);
    s.run_plan(
        1,
        &format!("p = fetch_url(url=\"http://127.0.0.1:{port}/page\")\nprint(\"fetched\")\n"),
    );
    let doc = s.run_answer(1);
    // The slow tool's result is not the planner's to read: the answer is cut after its decision, and
    // says only that the run hit the timeout.
    assert_eq!(doc["status"], "for_the_person", "{doc}");
    assert_eq!(doc["error"]["type"], "TimeoutError", "{doc}");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .contains("has not returned yet"),
        "{doc}"
    );
    // Answered at the run timeout and the grace for the stopped run, not after the fetch's own 5 s: the
    // message above says the call had not returned (no wall-clock bound, which a loaded machine breaks).
    // The trace ends once the fetch gives up: nothing is lost.
    let run = doc["run"].as_str().unwrap().to_string();
    let mut id = 2;
    wait_until("the run's end", || {
        s.request(
            id,
            "tools/call",
            json!({"name": "run_status", "arguments": {"run": run}}),
        );
        let status = s.answer(id)["result"]["structuredContent"]["status"].clone();
        id += 1;
        status != "running"
    });
    assert_eq!(verify(&trace_of(&doc)), Some(0), "{doc}");
    drop(s.child.stdin.take());
    assert!(s.exit_status(Duration::from_secs(10)).success());
}

#[test]
fn a_cancelled_run_starts_no_further_tool_call() {
    // A web server that holds the fetch until the test lets it answer.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (accepted_tx, accepted) = std::sync::mpsc::channel::<()>();
    let (release, released) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let Ok((mut conn, _)) = listener.accept() else {
            return;
        };
        let _ = accepted_tx.send(());
        let _ = released.recv();
        let _ = conn.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
        );
    });
    let world = World::new(Some(port));
    let mut s = Raw::start_in(world.dir.path(), &["--warm-workers", "0"]);
    let server = s.pid();
    s.run_plan(
        1,
        &format!(
            "p = fetch_url(url=\"http://127.0.0.1:{port}/page\")\nsend_email(to=\"me@example.com\", subject=\"s\", body=\"sent after the cancel\")\n"
        ),
    );
    accepted
        .recv_timeout(Duration::from_secs(30))
        .expect("the fetch reached the web server");
    s.send(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"the user left"}}"#,
    );
    // The session has read the cancellation once it answers a later request.
    s.request(2, "ping", json!({}));
    assert!(s.answer(2)["result"].is_object());
    // The cancel kills the run's worker (today's code leaves it; the send below then shows it).
    let deadline = Instant::now() + Duration::from_secs(5);
    while !workers(server).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    release.send(()).unwrap();
    let trace = world.path("runs/run-1/plan.zjson");
    wait_until("the run's end", || {
        std::fs::read_to_string(&trace).is_ok_and(|t| t.contains("\"type\":\"end\""))
    });
    assert!(
        world.messages("out/outbox").is_empty(),
        "a cancelled run sent mail"
    );
    let records = common::world::records(&trace);
    assert!(
        common::world::calls(&trace, Some("send_email")).is_empty(),
        "{records:?}"
    );
    let error = records
        .iter()
        .rev()
        .find(|r| r["type"] == "error")
        .unwrap_or_else(|| panic!("no error record: {records:?}"));
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("the client cancelled the run"),
        "{error}"
    );
    assert_eq!(verify(&trace), Some(0));
    assert!(!s.answered(1), "a cancelled request is not answered");
    s.run_plan(3, "print(\"still here\")\n");
    assert_eq!(s.run_answer(3)["status"], "completed");
    drop(s.child.stdin.take());
    assert!(s.exit_status(Duration::from_secs(10)).success());
}

/// A policy whose one tool `slow` is served by the attacker server (tests/mcp/attacker_server.py), which
/// answers after 3 s; `stubborn` makes the server ignore stdin closing and SIGTERM.
fn slow_server_policy(dir: &Path, stubborn: bool) -> PathBuf {
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("description.txt"), "Adds two integers.").unwrap();
    if stubborn {
        std::fs::write(state.join("mode"), "stubborn").unwrap();
    }
    let server = root().join("tests/mcp/attacker_server.py");
    let policy = dir.join("zamburak.yaml");
    std::fs::write(
        &policy,
        format!(
            "version: 1\nservers:\n  attacker:\n    command: python3\n    args: [{:?}, {:?}]\n    call_timeout_ms: 20000\ntools:\n  slow:\n    source: mcp.attacker.slow\n    effect: read\n    args: {{}}\n",
            server.to_str().unwrap(),
            state.to_str().unwrap()
        ),
    )
    .unwrap();
    let out = Command::new(zamburak())
        .args(["mcp", "lock"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    policy
}

fn mcp_server_pid(dir: &Path) -> Option<u32> {
    std::fs::read_to_string(dir.join("state/pid"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[test]
fn the_run_timeout_counts_tool_calls_and_kills_the_runs_mcp_server() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let policy = slow_server_policy(dir, true);
    let mut s = Raw::start(&policy, &dir.join("runs"), dir, &["--run-timeout", "1"]);
    // Three calls of 3 s each: the plan's own time is nothing, its tool calls are all of it.
    s.run_plan(1, "slow()\nslow()\nslow()\n");
    let doc = s.run_answer(1);
    // The slow tool's result is not the planner's to read: the answer is cut after its decision, and
    // says only that the run hit the timeout.
    assert_eq!(doc["status"], "for_the_person", "{doc}");
    assert_eq!(doc["error"]["type"], "TimeoutError", "{doc}");
    // That the timeout cut the tool calls short is shown by the calls that reached the server (below),
    // not by a wall-clock bound a loaded machine could break.
    assert_eq!(verify(&trace_of(&doc)), Some(0), "{doc}");
    // Only the first call reached the server.
    let calls = std::fs::read_to_string(dir.join("state/calls.log")).unwrap_or_default();
    assert_eq!(calls.lines().count(), 1, "{calls}");
    // The stubborn server was killed, not left to finish.
    let pid = mcp_server_pid(dir).unwrap();
    wait_until("the MCP server's end", || stat_of(pid).is_none());
    s.run_plan(2, "print(\"still here\")\n");
    assert_eq!(s.run_answer(2)["status"], "completed");
    drop(s.child.stdin.take());
    assert!(s.exit_status(Duration::from_secs(10)).success());
}

/// Starts a server with a run in a slow MCP call (a stubborn server) and warm workers, and returns it with
/// its process tree then.
fn serving_a_slow_call(dir: &Path) -> (Raw, BTreeMap<u32, String>) {
    let policy = slow_server_policy(dir, true);
    let mut s = Raw::start(
        &policy,
        &dir.join("runs"),
        dir,
        &["--warm-workers", "2", "--run-timeout", "30"],
    );
    s.run_plan(1, "slow()\nslow()\nslow()\n");
    let server = s.pid();
    wait_until("the MCP call", || {
        dir.join("state/calls.log").exists() && mcp_server_pid(dir).is_some()
    });
    // Two warm workers and the run's own.
    wait_until("the workers", || workers(server).len() == 3);
    let tree = descendants(server);
    assert!(tree.contains_key(&mcp_server_pid(dir).unwrap()), "{tree:?}");
    (s, tree)
}

fn the_run_ended_with_its_trace(dir: &Path) {
    let trace = dir.join("runs/run-1/plan.zjson");
    assert_eq!(verify(&trace), Some(0), "{}", trace.display());
}

#[test]
fn closing_stdin_kills_every_child_and_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut s, tree) = serving_a_slow_call(tmp.path());
    drop(s.child.stdin.take());
    let status = s.exit_status(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{status}");
    assert_all_gone(&tree);
    the_run_ended_with_its_trace(tmp.path());
}

#[test]
fn sigterm_kills_every_child_and_exits_143() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut s, tree) = serving_a_slow_call(tmp.path());
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.pid() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = s.exit_status(Duration::from_secs(10));
    assert_eq!(status.code(), Some(143), "{status}");
    assert_all_gone(&tree);
    the_run_ended_with_its_trace(tmp.path());
    assert!(s.stderr().contains("stopped by signal 15"));
}

#[test]
fn sigint_kills_every_child_and_exits_130() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut s, tree) = serving_a_slow_call(tmp.path());
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.pid() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = s.exit_status(Duration::from_secs(10));
    assert_eq!(status.code(), Some(130), "{status}");
    assert_all_gone(&tree);
    the_run_ended_with_its_trace(tmp.path());
}

#[test]
fn a_giant_line_closes_the_session_without_holding_it() {
    let world = World::new(None);
    let mut s = Raw::start_in(world.dir.path(), &[]);
    let server = s.pid();
    s.run_plan(1, "print(\"before\")\n");
    assert_eq!(s.run_answer(1)["status"], "completed");
    let tree = descendants(server);
    // 64 MiB without a newline, written until the server stops reading.
    let stdin = s.child.stdin.as_mut().unwrap();
    let chunk = vec![b'x'; 1 << 20];
    let mut written = 0usize;
    for _ in 0..64 {
        if stdin.write_all(&chunk).is_err() {
            break;
        }
        written += chunk.len();
    }
    let status = s.exit_status(Duration::from_secs(20));
    assert_eq!(status.code(), Some(2), "{status}");
    assert!(
        written < 16 << 20,
        "the server read {written} bytes of one line"
    );
    assert_all_gone(&tree);
    let stderr = s.stderr();
    assert!(stderr.contains("larger than 8388608 bytes"), "{stderr}");
}

#[test]
fn a_small_load_loses_no_record_and_leaves_no_orphan() {
    let Some(python) = sdk_python() else {
        return;
    };
    let out = Command::new(python)
        .arg(root().join("benches/serve_load.py"))
        .arg(zamburak())
        .args(["--clients", "2", "--runs", "40"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "load failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("no lost record, no orphan"), "{stdout}");
    let report: Value = serde_json::from_str(&stdout[..stdout.rfind('}').unwrap() + 1]).unwrap();
    // The warm-up run and the forty.
    assert_eq!(report["run_dirs"], 41, "{report}");
    assert_eq!(report["orphans"], 0, "{report}");
}
