//! `zamburak mcp serve` with clients nobody here wrote and with hostile input: the official MCP Python SDK
//! drives a scripted agent (tests/serve/agent.py) over a copy of the example world, and raw JSON-RPC lines
//! check that bad requests and a run whose worker dies get error results while the server goes on, and that
//! closing stdin ends it.
//!
//! The SDK runs from tests/serve/.venv (`.ci/run` builds it). Without it the agent test says so loudly and
//! passes, except in CI (`CI=true`), where a missing client is a failure.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking, with a message saying what went wrong"
)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::world::World;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pinned SDK's Python, or `None` (after saying so) where it is not installed outside CI.
fn sdk_python() -> Option<PathBuf> {
    let python = root().join("tests/serve/.venv/bin/python");
    if python.is_file() {
        return Some(python);
    }
    let message = format!(
        "{} is missing: `mcp serve` is not tested with the MCP Python SDK. Install it with\n  python3 -m venv tests/serve/.venv && tests/serve/.venv/bin/pip install -r tests/serve/requirements.txt",
        python.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{message}");
    }
    eprintln!("\n!!!!!!!!\n!!! SKIPPED: {message}\n!!!!!!!!\n");
    None
}

#[test]
fn a_scripted_agent_on_the_python_sdk_never_receives_mail_text() {
    let Some(python) = sdk_python() else {
        return;
    };
    let world = World::new(None);
    let out = Command::new(python)
        .arg(root().join("tests/serve/agent.py"))
        .arg(assert_cmd::cargo::cargo_bin("zamburak"))
        .arg(world.dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "agent failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("every check passed"), "{stdout}");
}

/// A server on raw stdio, its answers read by id.
struct Raw {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    /// Answers read while waiting for another.
    early: std::collections::BTreeMap<u64, Value>,
}

impl Raw {
    fn start(world: &Path) -> Raw {
        Raw::start_with(world, &[])
    }

    fn start_with(world: &Path, extra: &[&str]) -> Raw {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
            .args(["mcp", "serve", "--policy"])
            .arg(world.join("policy.yaml"))
            .arg("--runs")
            .arg(world.join("runs"))
            .args(extra)
            .current_dir(world)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Raw {
            child,
            lines,
            early: Default::default(),
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, id: u64, method: &str, params: Value) {
        let doc = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(doc.to_string().as_bytes());
    }

    /// The answer to request `id` (answers to others are kept for later, notifications skipped).
    fn answer(&mut self, id: u64) -> Value {
        if let Some(doc) = self.early.remove(&id) {
            return doc;
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to request {id}"));
            let doc: Value = serde_json::from_str(&line).unwrap();
            match doc["id"].as_u64() {
                Some(got) if got == id => return doc,
                Some(other) => {
                    self.early.insert(other, doc);
                }
                None => {}
            }
        }
    }

    fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        self.request(id, "tools/call", json!({"name": tool, "arguments": args}));
        self.answer(id)
    }
}

#[test]
fn hostile_requests_and_a_dying_worker_get_error_results_and_the_server_goes_on() {
    let world = World::new(None);
    let mut s = Raw::start(world.dir.path());
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    );
    assert!(s.answer(1)["result"]["serverInfo"]["name"] == "zamburak");
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    // Not JSON, and not UTF-8: whatever the transport makes of them, the server still answers after.
    s.send(b"{not json");
    s.send(b"{\"jsonrpc\":\"2.0\",\"id\":90,\"method\":\"tools/call\",\"params\":{\"name\":\"run_plan\",\"arguments\":{\"plan\":\"print(\xff\xfe)\"}}}");

    let r = s.call(2, "run_plan", json!({"plan": 123}));
    assert_eq!(r["result"]["isError"], json!(true), "{r}");
    let r = s.call(3, "run_plan", json!({}));
    assert_eq!(r["result"]["isError"], json!(true), "{r}");
    let r = s.call(4, "approve", json!({"snapshot": "x"}));
    assert_eq!(r["result"]["isError"], json!(true), "{r}");
    let r = s.call(5, "run_status", json!({"run": "/etc/passwd"}));
    assert_eq!(r["result"]["isError"], json!(true), "{r}");

    // A plan whose worker runs out of memory: the run ends in an error, the server does not.
    let r = s.call(
        6,
        "run_plan",
        json!({"plan": "x = \"a\" * 1000000\ns = \"\".join([x] * 100000)\nprint(len(s))\n"}),
    );
    let doc = &r["result"]["structuredContent"];
    assert_eq!(doc["status"], json!("error"), "{r}");

    let r = s.call(7, "run_plan", json!({"plan": "print(\"still here\")\n"}));
    let doc = &r["result"]["structuredContent"];
    assert_eq!(doc["status"], json!("completed"), "{r}");
    assert_eq!(doc["output"], json!([{"text": "still here\n"}]), "{r}");

    // Two runs at once, each in its own directory and worker.
    s.request(
        8,
        "tools/call",
        json!({"name": "run_plan", "arguments": {"plan": "print(\"eight\")\n"}}),
    );
    s.request(
        9,
        "tools/call",
        json!({"name": "run_plan", "arguments": {"plan": "print(\"nine\")\n"}}),
    );
    let (a, b) = (s.answer(8), s.answer(9));
    assert_eq!(
        a["result"]["structuredContent"]["output"],
        json!([{"text": "eight\n"}]),
        "{a}"
    );
    assert_eq!(
        b["result"]["structuredContent"]["output"],
        json!([{"text": "nine\n"}]),
        "{b}"
    );
    assert_ne!(
        a["result"]["structuredContent"]["run"],
        b["result"]["structuredContent"]["run"]
    );

    // stdin closed: the server ends by itself.
    drop(s.child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not end when stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}

/// `--approval-ttl` is how long a claim the server's runs make waits for the person: the snapshot's expiry is
/// that far after its creation.
#[test]
fn a_claim_waits_as_long_as_approval_ttl_says() {
    let world = World::new(None);
    let mut s = Raw::start_with(world.dir.path(), &["--approval-ttl", "7200"]);
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    );
    s.answer(1);
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let plan =
        "m = read_inbox(limit=1)\nsend_email(to=m[0][\"from\"], subject=\"re\", body=\"ok\")\n";
    let r = s.call(2, "run_plan", json!({"plan": plan}));
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.contains("waiting_for_the_person"), "{r}");
    let snap = std::fs::read_dir(world.dir.path().join("runs"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "zsnap"))
        .expect("a snapshot");
    let doc: Value = serde_json::from_slice(&std::fs::read(&snap).unwrap()).unwrap();
    let at = |k: &str| doc[k].as_str().unwrap().parse::<jiff::Timestamp>().unwrap();
    let waits = at("expires_at").duration_since(at("created_at")).as_secs();
    assert!((7199..=7201).contains(&waits), "{waits} s: {doc}");
    assert!(world.messages("out/outbox").is_empty());
}
