//! `zamburak mcp serve` on raw stdio, one JSON-RPC document a line, for the tests that need what no SDK
//! sends (malformed lines, a giant line, a worker killed mid-run) or that watch the server's processes; and
//! the installed real clients (the MCP Python SDK), skipped loudly outside CI and required in it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A server on raw stdio, its answers read by id.
pub struct Raw {
    pub child: Child,
    lines: Receiver<String>,
    /// Answers read while waiting for another; notifications are skipped.
    early: BTreeMap<u64, Value>,
    /// Answers with `"id": null` (to lines that did not parse), in order.
    unnamed: std::collections::VecDeque<Value>,
    stderr: JoinHandle<String>,
}

impl Raw {
    /// A server started with `policy`, `--runs runs` and `extra` in `cwd`, before the MCP handshake.
    pub fn spawn(policy: &Path, runs: &Path, cwd: &Path, extra: &[&str]) -> Raw {
        Raw::spawn_remembering(policy, runs, cwd, extra, &super::cli::no_store())
    }

    /// [`Raw::spawn`] with the person's remembered values in `known`.
    pub fn spawn_remembering(
        policy: &Path,
        runs: &Path,
        cwd: &Path,
        extra: &[&str],
        known: &Path,
    ) -> Raw {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
            .env("ZAMBURAK_KNOWN", known)
            .args(["mcp", "serve", "--policy"])
            .arg(policy)
            .arg("--runs")
            .arg(runs)
            .args(extra)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Read to the end, so the server never blocks on a full stderr pipe.
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Raw {
            child,
            lines,
            early: BTreeMap::new(),
            unnamed: std::collections::VecDeque::new(),
            stderr,
        }
    }

    /// A server on a world directory (its `policy.yaml`, its `runs/`), before the handshake.
    pub fn spawn_in(world: &Path, extra: &[&str]) -> Raw {
        // The world's own store of remembered values, as `World::known` names it.
        Raw::spawn_remembering(
            &world.join("policy.yaml"),
            &world.join("runs"),
            world,
            extra,
            &world.join("known.json"),
        )
    }

    /// [`Raw::spawn`], past the MCP handshake (request id 0).
    pub fn start(policy: &Path, runs: &Path, cwd: &Path, extra: &[&str]) -> Raw {
        let mut raw = Raw::spawn(policy, runs, cwd, extra);
        raw.handshake(0);
        raw
    }

    /// [`Raw::spawn_in`], past the MCP handshake (request id 0).
    pub fn start_in(world: &Path, extra: &[&str]) -> Raw {
        let mut raw = Raw::spawn_in(world, extra);
        raw.handshake(0);
        raw
    }

    /// `initialize` as request `id`, checked to come from zamburak, then `notifications/initialized`.
    pub fn handshake(&mut self, id: u64) {
        self.request(
            id,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
        );
        let r = self.answer(id);
        assert_eq!(r["result"]["serverInfo"]["name"], "zamburak", "{r}");
        self.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// One line: `bytes` and a newline.
    pub fn send(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn request(&mut self, id: u64, method: &str, params: Value) {
        let doc = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(doc.to_string().as_bytes());
    }

    /// Calls `tool`, and waits for the answer.
    pub fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        self.request(id, "tools/call", json!({"name": tool, "arguments": args}));
        self.answer(id)
    }

    /// Asks for a run of `plan`, without waiting for the answer.
    pub fn run_plan(&mut self, id: u64, plan: &str) {
        self.request(
            id,
            "tools/call",
            json!({"name": "run_plan", "arguments": {"plan": plan}}),
        );
    }

    /// Whether the answer to `id` has arrived (read so far).
    pub fn answered(&mut self, id: u64) -> bool {
        while let Ok(line) = self.lines.try_recv() {
            self.keep(&line);
        }
        self.early.contains_key(&id)
    }

    fn keep(&mut self, line: &str) {
        let doc: Value = serde_json::from_str(line).unwrap();
        if let Some(id) = doc["id"].as_u64() {
            self.early.insert(id, doc);
        } else if doc.get("id").is_some_and(Value::is_null) {
            self.unnamed.push_back(doc);
        }
    }

    /// The answer to request `id`, within 60 s.
    pub fn answer(&mut self, id: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(doc) = self.early.remove(&id) {
                return doc;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to request {id}"));
            self.keep(&line);
        }
    }

    /// The next answer with `"id": null`, within `within`; `None` when none came.
    pub fn unnamed_answer(&mut self, within: Duration) -> Option<Value> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(doc) = self.unnamed.pop_front() {
                return Some(doc);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).ok()?;
            self.keep(&line);
        }
    }

    /// The run document of the answer to `id`.
    pub fn run_answer(&mut self, id: u64) -> Value {
        let r = self.answer(id);
        let doc = r["result"]["structuredContent"].clone();
        assert!(doc.is_object(), "{r}");
        doc
    }

    /// Waits for the server to exit by itself.
    pub fn exit_status(&mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What the server wrote to stderr, once it has exited.
    pub fn stderr(self) -> String {
        self.stderr.join().unwrap()
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `path`, a test dependency `.ci/run` installs, or `None` (after saying so) where it is missing outside CI;
/// in CI a missing one fails the test, so nothing is skipped there.
pub fn installed(path: PathBuf, what: &str, install: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "{} is missing: `mcp serve` is not tested with {what}. Install it with\n  {install}",
        path.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{message}");
    }
    eprintln!("\n!!!!!!!!\n!!! SKIPPED: {message}\n!!!!!!!!\n");
    None
}

/// The pinned MCP Python SDK's Python.
pub fn sdk_python() -> Option<PathBuf> {
    installed(
        root().join("tests/serve/.venv/bin/python"),
        "the MCP Python SDK",
        "python3 -m venv tests/serve/.venv && tests/serve/.venv/bin/pip install -r tests/serve/requirements.txt",
    )
}
