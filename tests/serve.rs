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
        // Run directories only: the runs directory also holds the queue's address (queue.url).
        .filter_map(|d| std::fs::read_dir(d.unwrap().path()).ok())
        .flatten()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "zsnap"))
        .expect("a snapshot");
    let doc: Value = serde_json::from_slice(&std::fs::read(&snap).unwrap()).unwrap();
    let at = |k: &str| doc[k].as_str().unwrap().parse::<jiff::Timestamp>().unwrap();
    let waits = at("expires_at").duration_since(at("created_at")).as_secs();
    assert!((7199..=7201).contains(&waits), "{waits} s: {doc}");
    assert!(world.messages("out/outbox").is_empty());
}

/// The review queue inside `mcp serve` and the person's forms, driven through the SDK by tests/serve/agent.py
/// (`queue`: the issue's end-to-end agent approving on the queue page; `form:MODE`: an accepting, a declining
/// and a cancelling person answering forms, on a legacy session and on a 2026-07-28 one).
fn agent_scenario(scenario: &str) {
    let Some(python) = sdk_python() else {
        return;
    };
    let world = World::new(None);
    let out = Command::new(python)
        .arg(root().join("tests/serve/agent.py"))
        .arg(assert_cmd::cargo::cargo_bin("zamburak"))
        .arg(world.dir.path())
        .arg(scenario)
        .env("USER", "person")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "agent {scenario} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("every check passed"), "{stdout}");
}

#[test]
fn the_scripted_agent_waits_and_the_person_approves_on_the_queue_page() {
    agent_scenario("queue");
}

#[test]
fn a_person_answers_the_claim_in_a_form_of_a_legacy_session() {
    agent_scenario("form:legacy");
}

#[test]
fn a_person_answers_the_claim_in_an_input_required_result_of_a_2026_07_28_session() {
    agent_scenario("form:2026-07-28");
}

/// One HTTP/1.1 request on loopback: (status, head, body).
fn http(url: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    let mut req = format!(
        "{method} /{path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {host}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream.write_all(req.as_bytes()).unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut stream, &mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_string(), body.to_string())
}

/// Starts a raw session whose first run waits on a claim; returns the server and the run's answer.
fn waiting_run(world: &World, extra: &[&str]) -> (Raw, Value) {
    let mut s = Raw::start_with(world.dir.path(), extra);
    s.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
    );
    s.answer(1);
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let plan = "m = read_inbox(limit=1)\nsend_email(to=\"bob@example.com\", subject=\"fwd\", body=m[0][\"body\"])\n";
    let r = s.call(2, "run_plan", json!({"plan": plan}));
    let doc = r["result"]["structuredContent"].clone();
    assert_eq!(doc["status"], json!("waiting_for_the_person"), "{r}");
    (s, doc)
}

/// The claim's link goes to the model: alone it shows nothing of the claim and decides nothing (a model with
/// a fetch or shell tool holds no more than the link); the queue answers only to its loopback address; the
/// person's browser opens it after the queue's own address, which only the person is given, set its session.
#[test]
fn the_claim_link_the_model_gets_opens_nothing_without_the_persons_session() {
    let world = World::new(None);
    let (_s, doc) = waiting_run(&world, &[]);
    let url = doc["waiting"]["url"].as_str().unwrap().to_string();
    let code = doc["waiting"]["claim"].as_str().unwrap().to_string();
    let address = std::fs::read_to_string(world.path("runs/queue.url"))
        .unwrap()
        .trim()
        .to_string();
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(world.path("runs/queue.url"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o077, 0, "queue.url is readable by others: {mode:o}");
    let token = address
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    assert!(!url.contains(&token), "{url}");
    assert!(
        !doc.to_string().contains(&token),
        "the answer carries the queue's token: {doc}"
    );

    // Without the session: a page that says where the person looks, nothing of the claim.
    let (status, _, body) = http(&url, "GET", &[], "");
    assert_eq!(status, 403, "{body}");
    assert!(
        !body.contains(&code) && !body.contains(&token) && !body.contains("bob@example.com"),
        "{body}"
    );
    for injected in [
        "IGNORE PREVIOUS INSTRUCTIONS",
        "mallory@evil.test",
        "Revenue 1.2M",
    ] {
        assert!(!body.contains(injected), "{body}");
    }
    let base = url.split("/run/").next().unwrap().to_string();
    let (status, _, _) = http(&format!("{base}/"), "GET", &[], "");
    assert_eq!(status, 403);
    // A forged decision: refused at the door (no session) and behind the token (no form token of the queue's).
    let form = "csrf=00&digest=x&decision=approve";
    let ct = ("Content-Type", "application/x-www-form-urlencoded");
    let (status, _, _) = http(&url, "POST", &[ct], form);
    assert_eq!(status, 403);
    let (status, _, _) = http(&format!("{address}decide"), "POST", &[ct], form);
    assert_eq!(status, 403);

    // Another name for 127.0.0.1 (a rebinding page) gets nothing, even with the token.
    let host = base.strip_prefix("http://").unwrap().to_string();
    let port = host.rsplit(':').next().unwrap();
    let evil = format!("evil.test:{port}");
    let (status, _, body) = http(&address, "GET", &[("Host", &evil)], "");
    assert_eq!(status, 421, "{body}");

    // The person: the queue's own address gives the session; the link then shows the claim in full.
    let (status, head, _) = http(&address, "GET", &[], "");
    assert_eq!(status, 200);
    let cookie = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("set-cookie: ")
                .or_else(|| l.strip_prefix("Set-Cookie: "))
        })
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    assert!(
        head.contains("HttpOnly") && head.contains("SameSite=Lax"),
        "{head}"
    );
    let (status, _, page) = http(&url, "GET", &[("Cookie", &cookie)], "");
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains(&format!("Claim <code>{code}</code>")),
        "{page}"
    );
    assert!(
        page.contains("bob@example.com") && page.contains("UNTRUSTED"),
        "{page}"
    );
    // A stale link (another claim's code) says so, and shows what the run waits on now.
    let stale = url.replace(&code, "AAAA-BBBB-CCCC");
    let (status, _, page) = http(&stale, "GET", &[("Cookie", &cookie)], "");
    assert_eq!(status, 200);
    assert!(
        page.contains("claim AAAA-BBBB-CCCC no longer waits"),
        "{page}"
    );
    // A run that is not there, and a name that is not a run's.
    let (status, _, page) = http(
        &format!("{base}/run/run-99"),
        "GET",
        &[("Cookie", &cookie)],
        "",
    );
    assert_eq!(status, 200);
    assert!(page.contains("no claim of run-99 waits"), "{page}");
    let (status, _, _) = http(
        &format!("{base}/run/..%2f..%2fetc"),
        "GET",
        &[("Cookie", &cookie)],
        "",
    );
    assert_eq!(status, 404);
    assert!(world.messages("out/outbox").is_empty());
}

/// `--no-queue`: no queue, no link; a queue address off loopback is refused before anything starts.
#[test]
fn no_queue_means_no_link_and_the_queue_listens_only_on_loopback() {
    let world = World::new(None);
    let (_s, doc) = waiting_run(&world, &["--no-queue"]);
    assert!(doc["waiting"].get("url").is_none(), "{doc}");
    assert!(
        doc["waiting"]["note"]
            .as_str()
            .unwrap()
            .contains("zamburak view --queue"),
        "{doc}"
    );
    assert!(!world.path("runs/queue.url").exists());
    let out = Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .args(["mcp", "serve", "--policy"])
        .arg(world.path("policy.yaml"))
        .args(["--queue-addr", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a loopback address"));
}

/// The MCP Inspector's CLI (npm `@modelcontextprotocol/inspector`, pinned in tests/mcp/package-lock.json), or
/// `None` (after saying so) where it is not installed outside CI.
fn inspector() -> Option<PathBuf> {
    let bin = root().join("tests/mcp/node_modules/.bin/mcp-inspector");
    if bin.exists() {
        return Some(bin);
    }
    let message = format!(
        "{} is missing: `mcp serve` is not tested with the MCP Inspector. Install it with\n  (cd tests/mcp && npm ci)",
        bin.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{message}");
    }
    eprintln!("\n!!!!!!!!\n!!! SKIPPED: {message}\n!!!!!!!!\n");
    None
}

/// `npx mcp-inspector --cli` against the server: one request per process, its JSON answer on stdout.
fn inspect(world: &World, home: &Path, args: &[&str]) -> Value {
    let out = Command::new("npx")
        .current_dir(root().join("tests/mcp"))
        .env("HOME", home)
        .args(["--no-install", "mcp-inspector", "--cli", "--cwd"])
        .arg(world.dir.path())
        .arg(assert_cmd::cargo::cargo_bin("zamburak"))
        .args(["mcp", "serve", "--policy"])
        .arg(world.path("policy.yaml"))
        .arg("--runs")
        .arg(world.path("runs"))
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "inspector {args:?} failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The JSON document, after whatever the server said on stderr and the Inspector relayed.
    let start = stdout.find("\n{").map_or(0, |i| i + 1);
    serde_json::from_str(&stdout[start..]).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn the_mcp_inspector_cli_lists_the_tools_and_calls_them() {
    if inspector().is_none() {
        return;
    }
    let world = World::new(None);
    let home = tempfile::tempdir().unwrap();
    let tools = inspect(&world, home.path(), &["--method", "tools/list"]);
    let mut names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["describe_tools", "lint_plan", "run_plan", "run_status"]
    );

    let call = |tool: &str, arg: Option<&str>| {
        let mut args = vec!["--method", "tools/call", "--tool-name", tool];
        if let Some(a) = arg {
            args.extend(["--tool-arg", a]);
        }
        inspect(&world, home.path(), &args)
    };
    let stubs = call("describe_tools", None);
    let text = stubs["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("def read_inbox(") && text.contains("def send_email("),
        "{text}"
    );

    let lint = call("lint_plan", Some("plan=x = read_inbox(limt=1)\n"));
    let doc = &lint["structuredContent"];
    assert_eq!(doc["ok"], json!(false), "{lint}");
    assert_eq!(doc["diagnostics"][0]["code"], json!("Z102"), "{lint}");

    let ran = call(
        "run_plan",
        Some(
            "plan=m = read_inbox(limit=3)\nfor x in m:\n    print(x[\"subject\"])\nprint(\"done\")\n",
        ),
    );
    let doc = &ran["structuredContent"];
    assert_eq!(doc["status"], json!("completed"), "{ran}");
    assert_eq!(
        doc["output"].as_array().unwrap().last(),
        Some(&json!({"text": "done\n"}))
    );
    let waiting = call(
        "run_plan",
        Some(
            "plan=m = read_inbox(limit=1)\nsend_email(to=\"bob@example.com\", subject=\"f\", body=m[0][\"body\"])\n",
        ),
    );
    let doc = &waiting["structuredContent"];
    assert_eq!(doc["status"], json!("waiting_for_the_person"), "{waiting}");
    assert!(
        doc["waiting"]["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
    let everything = format!("{tools}{stubs}{lint}{ran}{waiting}");
    for injected in [
        "IGNORE PREVIOUS INSTRUCTIONS",
        "mallory@evil.test",
        "Planning meeting on Thursday",
    ] {
        assert!(
            !everything.contains(injected),
            "{injected} reached the client"
        );
    }
    assert!(world.messages("out/outbox").is_empty());
}
