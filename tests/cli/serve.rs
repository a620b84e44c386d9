//! `zamburak mcp serve` with clients nobody here wrote and with hostile input: the official MCP Python SDK
//! drives a scripted agent (tests/serve/agent.py) over a copy of the example world, and raw JSON-RPC lines
//! check that bad requests and a run whose worker dies get error results while the server goes on, and that
//! closing stdin ends it.
//!
//! The SDK runs from tests/serve/.venv (`.ci/run` builds it). Without it the agent test says so loudly and
//! passes, except in CI (`CI=true`), where a missing client is a failure.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common;
use common::serve::{Raw, installed, sdk_python};
use common::world::World;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_and_the_session_goes_on() {
    let world = World::new(None);
    let mut s = Raw::start_in(world.dir.path(), &[]);
    let parse_error =
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
    for line in [
        &b"{not json"[..],
        b"[1, 2",
        b"\xff\xfe",
        b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"} x",
    ] {
        s.send(line);
        let doc = s.unnamed_answer(Duration::from_secs(10));
        assert_eq!(
            doc.as_ref(),
            Some(&parse_error),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    // JSON that is no message: Invalid request, with the same null id.
    s.send(br#"{"a":1}"#);
    let doc = s
        .unnamed_answer(Duration::from_secs(10))
        .expect("an answer");
    assert_eq!(doc["error"]["code"], -32600, "{doc}");
    assert!(doc["id"].is_null(), "{doc}");
    // Blank lines are no messages: nothing answers them.
    s.send(b"");
    s.send(b"   ");
    // The session goes on.
    s.request(2, "ping", json!({}));
    assert!(s.answer(2)["result"].is_object());
    let r = s.call(3, "run_plan", json!({"plan": "print(\"still here\")\n"}));
    assert_eq!(
        r["result"]["structuredContent"]["status"], "completed",
        "{r}"
    );
    assert_eq!(s.unnamed_answer(Duration::from_millis(200)), None);
    drop(s.child.stdin.take());
    assert!(s.exit_status(Duration::from_secs(10)).success());
}

#[test]
fn hostile_requests_and_a_dying_worker_get_error_results_and_the_server_goes_on() {
    let world = World::new(None);
    let mut s = Raw::spawn_in(world.dir.path(), &[]);
    s.handshake(1);

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
    let mut s = Raw::spawn_in(world.dir.path(), &["--approval-ttl", "7200"]);
    s.handshake(1);
    let plan =
        "m = read_inbox(limit=1)\nsend_email(to=m[0][\"from\"], subject=\"re\", body=\"ok\")\n";
    let r = s.call(2, "run_plan", json!({"plan": plan}));
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The read of the inbox cuts the answer: that a claim waits is the person's to know.
    assert!(text.contains("for_the_person"), "{r}");
    assert!(!text.contains("waiting_for_the_person"), "{r}");
    let snap = std::fs::read_dir(world.dir.path().join("runs"))
        .unwrap()
        .map(|d| d.unwrap().path())
        // Run directories only: the queue's address file sits beside them.
        .filter(|p| p.is_dir())
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "zsnap"))
        .expect("a snapshot");
    let doc: Value = serde_json::from_slice(&std::fs::read(&snap).unwrap()).unwrap();
    let at = |k: &str| doc[k].as_str().unwrap().parse::<jiff::Timestamp>().unwrap();
    let waits = at("expires_at").duration_since(at("created_at")).as_secs();
    assert!((7199..=7201).contains(&waits), "{waits} s: {doc}");
    assert!(world.messages("out/outbox").is_empty());
}

// ---- The two planner modes (docs/serve.md, "The two planner modes"; docs/semantics.md, "The planner
// context label").

/// The example world with a policy whose planner reads untrusted values (`planner: { reads_untrusted: true
/// }`) and whose mail the planner may read (`also: [llm:planner]`): what a run prints of the inbox goes
/// back to the planner, so every later plan of the session is written in the context of the mail.
fn reading_world() -> World {
    let world = World::new(None);
    let path = world.path("policy.yaml");
    let policy = std::fs::read_to_string(&path).unwrap();
    let from = "readers: { from_fields: [from, to, cc] }";
    assert!(policy.contains(from), "the example policy changed");
    let policy = policy.replace(
        from,
        "readers: { from_fields: [from, to, cc], also: [\"llm:planner\"] }",
    ) + "\nplanner:\n  reads_untrusted: true\n";
    std::fs::write(&path, policy).unwrap();
    world
}

/// A server on `world` past the MCP handshake.
fn session(world: &Path) -> Raw {
    let mut s = Raw::spawn_in(world, &[]);
    s.handshake(1);
    s
}

/// A store of remembered values changed outside Zamburak refuses every run, and the model is told so in
/// fixed words: not the store's path, not why, nothing of what it holds (issue #52). Nothing is sent.
#[test]
fn a_broken_store_of_remembered_values_is_told_to_the_model_in_fixed_words() {
    let world = World::new(None);
    std::fs::write(
        world.known(),
        "{\"format\": 1, \"entries\": [{\"value\": \"mallory@evil.test\"}]}",
    )
    .unwrap();
    let mut s = session(world.dir.path());
    let r = s.call(
        2,
        "run_plan",
        json!({"plan": "send_email(to=\"me@example.com\", subject=\"s\", body=\"b\")\n"}),
    );
    let told = r.to_string();
    assert!(told.contains("remembered values cannot be used"), "{told}");
    for private in ["mallory", "known.json", "seal", "outside Zamburak"] {
        assert!(!told.contains(private), "{private}: {told}");
    }
    assert!(world.messages("out/outbox").is_empty());
    // The person reads why, in the run's own directory.
    let output = std::fs::read_to_string(world.path("runs/run-1/output.txt")).unwrap();
    assert!(output.contains("changed outside Zamburak"), "{output}");
}

/// The structured answer of a tool call, failing on an error result.
fn doc_of(r: &Value) -> &Value {
    assert_ne!(r["result"]["isError"], json!(true), "{r}");
    &r["result"]["structuredContent"]
}

/// `lint_plan`'s predicted (may, must) decisions of each call, in order.
fn predicted(r: &Value) -> Vec<(String, String)> {
    doc_of(r)["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["predicted"]["may"].as_str().unwrap().to_string(),
                c["predicted"]["must"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const PRINT_THE_INBOX: &str =
    "for m in read_inbox(limit=10):\n    print(m[\"subject\"])\nprint(\"done\")\n";
/// A send whose every argument the plan wrote: allowed when the planner has read nothing untrusted.
const SEND_TO_A_LITERAL: &str =
    "send_email(to=\"bob@example.com\", subject=\"hi\", body=\"see you on Thursday\")\n";

#[test]
fn a_planner_that_reads_mail_can_no_longer_choose_a_recipient() {
    let world = reading_world();
    let mut s = session(world.dir.path());

    // Before the planner read anything, a literal recipient is the plan's own: lint predicts `allow`.
    let lint = s.call(2, "lint_plan", json!({"plan": SEND_TO_A_LITERAL}));
    assert_eq!(
        predicted(&lint),
        vec![("allow".to_string(), "allow".to_string())],
        "{lint}"
    );

    // The planner reads the inbox: the attacker's subject comes back, as untrusted text with its label.
    let r = s.call(3, "run_plan", json!({"plan": PRINT_THE_INBOX}));
    let doc = doc_of(&r);
    assert_eq!(doc["status"], json!("completed"), "{r}");
    let text = doc["output"].to_string();
    assert!(text.contains("IGNORE PREVIOUS INSTRUCTIONS"), "{r}");
    let inbox = doc["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| {
            o["text"]
                .as_str()
                .is_some_and(|t| t.contains("IGNORE PREVIOUS"))
        })
        .unwrap();
    let label = inbox["label"].as_str().unwrap();
    assert!(
        label.starts_with("untrusted") && label.contains("from read_inbox#1"),
        "{label}"
    );
    // The label names how many readers, never who.
    assert!(!label.contains("mallory@evil.test"), "{label}");

    // The same send, now written by a planner that has read the mail: its literals are untrusted, so the
    // recipient needs the person, and lint says so before the run.
    // (At best the address is one the person remembered, which lint cannot know: the lower bound allows.)
    let lint = s.call(4, "lint_plan", json!({"plan": SEND_TO_A_LITERAL}));
    assert_eq!(
        predicted(&lint),
        vec![("confirm".to_string(), "allow".to_string())],
        "{lint}"
    );
    let r = s.call(5, "run_plan", json!({"plan": SEND_TO_A_LITERAL}));
    let doc = doc_of(&r);
    assert_eq!(doc["status"], json!("waiting_for_the_person"), "{r}");
    assert_eq!(doc["decisions"][0]["decision"], json!("confirm"), "{r}");
    assert_eq!(doc["decisions"][0]["rule"], json!("args.to.require"), "{r}");
    assert!(
        world.messages("out/outbox").is_empty(),
        "a send chosen by a planner that read the mail went out"
    );

    // The audit shows the context the plan was written in, in its trace's header.
    let trace = std::path::PathBuf::from(doc["trace"].as_str().unwrap());
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let context = &header["planner_context"];
    assert_eq!(context["integrity"], json!("untrusted"), "{header}");
    assert_eq!(context["tags"], json!(["PRIVATE"]), "{header}");
    assert!(
        context["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x.as_str().unwrap().ends_with("/read_inbox#1")),
        "{header}"
    );

    // A new server process on the same runs directory keeps the context (the client's model still holds
    // what it read): the literal recipient still needs the person.
    drop(s);
    let mut restarted = session(world.dir.path());
    let lint = restarted.call(2, "lint_plan", json!({"plan": SEND_TO_A_LITERAL}));
    assert_eq!(
        predicted(&lint),
        vec![("confirm".to_string(), "allow".to_string())],
        "{lint}"
    );
    drop(restarted);
    assert!(world.messages("out/outbox").is_empty());
    // Only the person returns it to trusted: then the same send is allowed, and goes out.
    let forgot = Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .args(["mcp", "forget-context", "--runs"])
        .arg(world.path("runs"))
        .output()
        .unwrap();
    assert!(forgot.status.success(), "{forgot:?}");
    let mut fresh = session(world.dir.path());
    let lint = fresh.call(2, "lint_plan", json!({"plan": SEND_TO_A_LITERAL}));
    assert_eq!(
        predicted(&lint),
        vec![("allow".to_string(), "allow".to_string())],
        "{lint}"
    );
    let r = fresh.call(3, "run_plan", json!({"plan": SEND_TO_A_LITERAL}));
    // The send was allowed and performed; its outcome is the person's.
    assert_eq!(
        doc_of(&r)["decisions"][0]["decision"],
        json!("allow"),
        "{r}"
    );
    assert_eq!(doc_of(&r)["status"], json!("for_the_person"), "{r}");
    let trace = std::path::PathBuf::from(doc_of(&r)["trace"].as_str().unwrap());
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        header["planner_context"]["integrity"],
        json!("trusted"),
        "{header}"
    );
    assert_eq!(world.messages("out/outbox").len(), 1);
}

/// The default mode is unchanged: the same policy without `reads_untrusted` returns no mail text, so the
/// session stays trusted and a literal recipient stays the plan's own.
#[test]
fn a_planner_that_is_not_given_the_mail_keeps_its_literals() {
    let world = World::new(None);
    let mut s = session(world.dir.path());
    let r = s.call(2, "run_plan", json!({"plan": PRINT_THE_INBOX}));
    let doc = doc_of(&r);
    assert!(!doc.to_string().contains("IGNORE PREVIOUS"), "{r}");
    // The answer stops at the read: even the plan's own "done" comes after it.
    assert_eq!(doc["output"], json!([]), "{r}");
    assert_eq!(doc["status"], json!("for_the_person"), "{r}");
    let lint = s.call(3, "lint_plan", json!({"plan": SEND_TO_A_LITERAL}));
    assert_eq!(
        predicted(&lint),
        vec![("allow".to_string(), "allow".to_string())],
        "{lint}"
    );
}

/// A run written in a tainted context keeps its context across a suspension: approved later with
/// `zamburak approve` (a new process, from the snapshot), its later literal send waits for the person
/// too. In a fresh session the same plan, approved the same way, sends both.
#[test]
fn an_approved_run_keeps_the_context_it_was_written_in() {
    // The verifier's `or_none` flag must be the plan's literal, which after the approval still carries the
    // context: the resumed host must know it (the snapshot keeps the context).
    let plan = "m = read_inbox(limit=1)\nsend_email(to=m[0][\"from\"], subject=\"re\", body=\"ok\")\nme = verify_recipient(\"me@example.com\", or_none=True)\nsend_email(to=\"me@example.com\", subject=\"copy\", body=\"sent a reply\")\n";
    // The person approves from what they are shown (the snapshot in the run's directory), never from
    // the model's answer, which names no claim.
    let approve = |world: &World, doc: &Value| {
        let (snapshot, code) = claim_of(world, doc["run"].as_str().unwrap());
        std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
            .arg("approve")
            .arg(snapshot)
            .args(["--claim", &code, "--by", "person"])
            .current_dir(world.dir.path())
            .output()
            .unwrap()
    };

    // Tainted: the planner read the inbox first.
    let world = reading_world();
    let mut s = session(world.dir.path());
    let r = s.call(2, "run_plan", json!({"plan": PRINT_THE_INBOX}));
    assert!(doc_of(&r).to_string().contains("IGNORE PREVIOUS"), "{r}");
    let r = s.call(3, "run_plan", json!({"plan": plan}));
    let doc = doc_of(&r).clone();
    // The read of the inbox is transparent to this planner; the claim comes before any cut.
    assert_eq!(doc["status"], json!("waiting_for_the_person"), "{r}");
    let out = approve(&world, &doc);
    let said =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(4),
        "the second send must wait too: {said}"
    );
    assert_eq!(world.messages("out/outbox").len(), 1, "{said}");
    let after = s.call(4, "run_status", json!({"run": doc["run"]}));
    let after = doc_of(&after);
    // The approved send ran: what followed it is the person's.
    assert_eq!(after["status"], json!("for_the_person"), "{after}");
    let decisions: Vec<&str> = after["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["decision"].as_str())
        .collect();
    assert_eq!(decisions, ["allow", "confirm"], "{after}");

    // Trusted: a fresh world and session, the same plan; after the approval the literal send runs.
    let world = World::new(None);
    let mut s = session(world.dir.path());
    let r = s.call(2, "run_plan", json!({"plan": plan}));
    let doc = doc_of(&r).clone();
    // This planner may not read the mail: the answer stops at the read, and the claim is the person's.
    assert_eq!(doc["status"], json!("for_the_person"), "{r}");
    let out = approve(&world, &doc);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(world.messages("out/outbox").len(), 2);
}

/// The other planner mode with the official SDK as the client: the mail comes back, and the session's
/// later literal recipient waits for the person, until a new session (tests/serve/agent.py).
#[test]
fn a_scripted_agent_that_reads_mail_loses_its_literal_recipients() {
    let Some(python) = sdk_python() else {
        return;
    };
    let world = reading_world();
    let out = Command::new(python)
        .arg(root().join("tests/serve/agent.py"))
        .arg(assert_cmd::cargo::cargo_bin("zamburak"))
        .arg(world.dir.path())
        .arg("reads-untrusted")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "agent failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("every check passed"), "{stdout}");
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
    let mut s = Raw::spawn_in(world.dir.path(), extra);
    s.handshake(1);
    let plan = "m = read_inbox(limit=1)\nsend_email(to=\"bob@example.com\", subject=\"fwd\", body=m[0][\"body\"])\n";
    let r = s.call(2, "run_plan", json!({"plan": plan}));
    let doc = r["result"]["structuredContent"].clone();
    // The read cuts the answer: the claim is the person's.
    assert_eq!(doc["status"], json!("for_the_person"), "{r}");
    assert!(!doc.to_string().contains("claim"), "{r}");
    (s, doc)
}

/// A run that waits, as the model and the person each have it: the link the model was given, the claim's
/// code (from the run's directory), the run's id and the queue's own address (the person's).
struct Waiting {
    link: String,
    code: String,
    run: String,
    address: String,
}

fn waiting_of(world: &World, doc: &Value) -> Waiting {
    let run = doc["run"].as_str().unwrap().to_string();
    Waiting {
        link: doc["person"].as_str().unwrap().to_string(),
        code: claim_of(world, &run).1,
        address: std::fs::read_to_string(world.path("runs/queue.url"))
            .unwrap()
            .trim()
            .to_string(),
        run,
    }
}

/// The claim run `run` waits on, as the person finds it in the run's directory: its snapshot and code.
fn claim_of(world: &World, run: &str) -> (PathBuf, String) {
    let snapshot = world.path(&format!("runs/{run}/plan.zsnap"));
    let doc: Value = serde_json::from_slice(&std::fs::read(&snapshot).unwrap()).unwrap();
    let code = zamburak::trace::record::claim_code(doc["claim_digest"].as_str().unwrap());
    (snapshot, code)
}

/// The claim's link goes to the model: alone it shows nothing of the claim and decides nothing (a model with
/// a fetch or shell tool holds no more than the link); the queue answers only to its loopback address; the
/// person's browser opens it once it has opened the queue's own address, which only the person is given
/// (its pages keep it in their origin's storage, which no other port can read and no request carries).
#[test]
fn the_claim_link_the_model_gets_opens_nothing_without_the_persons_session() {
    let world = World::new(None);
    let (_s, doc) = waiting_run(&world, &[]);
    let url = doc["person"].as_str().unwrap().to_string();
    let (_, code) = claim_of(&world, doc["run"].as_str().unwrap());
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
    // A forged decision: refused at the door (the link decides nothing) and behind the token (no form token of
    // the queue's).
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

    // The person: the queue's own address; its pages remember it in the origin's storage, and the link's
    // page, the same for every client, opens the same page behind the token there (the script the
    // queue's policy allows, and no other). As that script does, the person's browser then asks for the
    // link's path behind the token, and gets the claim in full.
    let (status, head, queue_page) = http(&address, "GET", &[], "");
    assert_eq!(status, 200);
    let script = format!("<script>{}</script>", zamburak::view::server::LINK_SCRIPT);
    assert!(queue_page.contains(&script), "{queue_page}");
    let csp = zamburak::view::server::QUEUE_LINK_CSP;
    assert!(head.contains(csp), "{head}");
    let (status, head, door) = http(&url, "GET", &[], "");
    assert_eq!(status, 403);
    assert!(door.contains(&script) && head.contains(csp), "{door}");
    let behind = |link: &str| link.replacen(&format!("{base}/"), &address, 1);
    let (status, _, page) = http(&behind(&url), "GET", &[], "");
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
    let stale = format!("{url}?claim=AAAA-BBBB-CCCC");
    let (status, _, page) = http(&behind(&stale), "GET", &[], "");
    assert_eq!(status, 200);
    assert!(
        page.contains("claim AAAA-BBBB-CCCC no longer waits"),
        "{page}"
    );
    // A run that is not there, and a name that is not a run's.
    let (status, _, page) = http(&format!("{address}run/run-99"), "GET", &[], "");
    assert_eq!(status, 200);
    assert!(page.contains("no claim of run-99 waits"), "{page}");
    let (status, _, _) = http(&format!("{address}run/..%2f..%2fetc"), "GET", &[], "");
    assert_eq!(status, 404);
    // A browser that remembered an earlier queue's token on this port is told so, by a page with no script.
    let (status, _, page) = http(
        &format!("{base}/{}/run/run-1", "0".repeat(64)),
        "GET",
        &[],
        "",
    );
    assert_eq!(status, 404);
    assert!(
        page.contains("an earlier review queue") && !page.contains("<script"),
        "{page}"
    );
    assert!(world.messages("out/outbox").is_empty());
}

/// The queue of `mcp serve` answers only its own page (tests/cli/queue.rs has the same for `view --queue`): another
/// Host is refused (a rebinding name, another port), so is a request from a page of another origin (an
/// `Origin` of another port, a fetch or frame another page asked for), and every POST that does not say it
/// comes from the queue's own page (`Sec-Fetch-Site: same-origin`; a missing one is refused), each with a real
/// form of the queue's: the claim still waits and nothing is sent. And it sets no cookie: a browser sends a
/// cookie of 127.0.0.1 to every port of 127.0.0.1, so a page on any of them would receive it.
#[test]
fn the_queue_of_mcp_serve_answers_only_its_own_page_and_sets_no_cookie() {
    let world = World::new(None);
    let (_s, doc) = waiting_run(&world, &[]);
    let Waiting {
        link,
        code,
        run,
        address,
    } = waiting_of(&world, &doc);
    let page = format!("{address}run/{run}?claim={code}");
    let base = link.split("/run/").next().unwrap().to_string();
    let port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    let other = format!("http://127.0.0.1:{}", port ^ 1);
    let snapshot = world.path(&format!("runs/{run}/plan.zsnap"));
    let ct = ("Content-Type", "application/x-www-form-urlencoded");
    let unchanged = |why: &str| {
        assert!(
            world.messages("out/outbox").is_empty(),
            "{why} sent the mail"
        );
        assert!(snapshot.exists(), "{why}: the claim no longer waits");
    };
    let shows_nothing = |body: &str, why: &str| {
        assert!(
            !body.contains(&format!("Approve claim {code}")) && !body.contains("csrf"),
            "{why} showed the claim: {body}"
        );
    };
    // A fresh form of the claim, from its page behind the token: (action URL, body approving it).
    let form = || {
        let (status, _, body) = http(&page, "GET", &[], "");
        assert_eq!(status, 200, "{body}");
        let re = regex::Regex::new(
            r#"action="([^"]+)">\s*<input type="hidden" name="csrf" value="([0-9a-f]{64})">\s*<input type="hidden" name="digest" value="(sha256:[0-9a-f]{64})">"#,
        )
        .unwrap();
        let c = re
            .captures(&body)
            .unwrap_or_else(|| panic!("no form: {body}"));
        let action = c[1].replace("&#x2f;", "/");
        (
            format!("{base}{action}"),
            format!(
                "csrf={}&digest={}&decision=approve",
                &c[2],
                c[3].replace(':', "%3A")
            ),
        )
    };

    // (d) No cookie, on any page: not the queue's own address, not the claim's page, not the link.
    for url in [&address, &page, &link] {
        let (_, head, _) = http(url, "GET", &[], "");
        assert!(
            !head.to_ascii_lowercase().contains("set-cookie"),
            "{url} sets a cookie, which every port of 127.0.0.1 would be sent: {head}"
        );
    }

    // (a) Another Host, even with the token; its own by name is its own.
    for host in [
        format!("evil.test:{port}"),
        format!("127.0.0.1:{}", port ^ 1),
    ] {
        let (status, _, body) = http(&page, "GET", &[("Host", &host)], "");
        assert_eq!(status, 421, "{host}: {body}");
        shows_nothing(&body, &host);
        let (action, approve) = form();
        let (status, _, _) = http(
            &action,
            "POST",
            &[("Host", &host), ct, ("Sec-Fetch-Site", "same-origin")],
            &approve,
        );
        assert_eq!(status, 421);
        unchanged(&host);
    }
    let (status, _, body) = http(&page, "GET", &[("Host", &format!("localhost:{port}"))], "");
    assert_eq!(status, 200, "{body}");

    // (b) A page of another origin: an Origin of another port, a fetch or a frame another page asked for.
    for url in [&page, &link, &address] {
        let (status, _, body) = http(url, "GET", &[("Origin", &other)], "");
        assert_eq!(status, 403, "{url}: {body}");
        shows_nothing(&body, "another Origin");
        let (status, _, body) = http(
            url,
            "GET",
            &[
                ("Sec-Fetch-Site", "same-site"),
                ("Sec-Fetch-Mode", "no-cors"),
                ("Sec-Fetch-Dest", "iframe"),
            ],
            "",
        );
        assert_eq!(status, 403, "{url}: {body}");
        shows_nothing(&body, "a frame of another page");
    }
    let (action, approve) = form();
    let (status, _, _) = http(
        &action,
        "POST",
        &[("Origin", &other), ct, ("Sec-Fetch-Site", "same-origin")],
        &approve,
    );
    assert_eq!(status, 403);
    unchanged("a POST with another Origin");

    // (c) A POST that does not say it comes from the queue's own page.
    for site in [None, Some("same-site"), Some("cross-site"), Some("none")] {
        let (action, approve) = form();
        let mut headers = vec![ct];
        if let Some(site) = site {
            headers.push(("Sec-Fetch-Site", site));
        }
        let (status, _, body) = http(&action, "POST", &headers, &approve);
        assert_eq!(status, 403, "{site:?}: {body}");
        assert!(body.contains("nothing was decided"), "{body}");
        unchanged(&format!("a POST with Sec-Fetch-Site {site:?}"));
    }

    // The queue's own form, as Chromium sends it, decides.
    let (action, approve) = form();
    let (status, _, body) = http(
        &action,
        "POST",
        &[ct, ("Origin", "null"), ("Sec-Fetch-Site", "same-origin")],
        &approve,
    );
    assert_eq!(status, 303, "{body}");
    assert_eq!(world.messages("out/outbox").len(), 1);
}

/// A page on another port of 127.0.0.1, in the person's own Chromium after it opened the queue and the
/// claim's link (tests/browser/attack.mjs): it reads nothing of the claim (fetch, iframe, a window it opens),
/// its form POSTs approve nothing, even with a real form token; its server is sent no credential of the
/// queue's in any request header, so a replay from outside the browser has none either. The claim still
/// waits and nothing is sent; the person's own browser did open the claim from its link.
#[test]
fn a_page_on_another_port_reads_nothing_of_the_queue_and_approves_nothing() {
    let dir = root().join("tests/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed: run `cd tests/browser && npm ci` (.ci/run does)"
    );
    let world = World::new(None);
    let (_s, doc) = waiting_run(&world, &[]);
    let Waiting {
        link,
        code,
        run,
        address,
    } = waiting_of(&world, &doc);
    let token = address
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    // The worst case: the attacker holds a live form token of the claim (and the queue's address).
    let (status, _, page) = http(&format!("{address}run/{run}?claim={code}"), "GET", &[], "");
    assert_eq!(status, 200, "{page}");
    let re = regex::Regex::new(
        r#"name="csrf" value="([0-9a-f]{64})">\s*<input type="hidden" name="digest" value="(sha256:[0-9a-f]{64})">"#,
    )
    .unwrap();
    let c = re.captures(&page).unwrap();
    let (csrf, digest) = (c[1].to_string(), c[2].to_string());

    let out = Command::new("node")
        .arg(dir.join("attack.mjs"))
        .args([&address, &link, &csrf, &digest])
        .output()
        .expect("node (.ci/run uses it for the MCP servers too)");
    assert!(
        out.status.success(),
        "the browser run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();

    // Nothing was decided.
    assert!(
        world.messages("out/outbox").is_empty(),
        "the attacker's page approved the claim: {report:#}"
    );
    assert!(
        world.path(&format!("runs/{run}/plan.zsnap")).exists(),
        "the claim no longer waits: {report:#}"
    );
    // The attacker's server was sent no credential of the queue's.
    let received = report["received"].as_array().unwrap();
    assert!(
        received.iter().any(|r| r["url"] == "/done"),
        "the attacker's page did not finish: {report:#}"
    );
    for r in received {
        let headers = r["headers"].as_object().unwrap();
        assert!(
            !headers.contains_key("cookie"),
            "the attacker's server was sent a cookie: {r}"
        );
        let text = r["headers"].to_string();
        assert!(!text.contains(&token), "{r}");
    }
    assert_eq!(report["replay"], json!([]), "{report:#}");
    // The page read nothing of the claim.
    let reports = report["reports"].as_array().unwrap();
    assert!(reports.len() >= 10, "{report:#}");
    for r in reports {
        let text = r["result"].to_string();
        for secret in [
            code.as_str(),
            token.as_str(),
            "bob@example.com",
            "Approve claim",
            "csrf",
        ] {
            assert!(
                !text.contains(secret),
                "the attacker's page read {secret}: {r}"
            );
        }
    }
    // What the queue answered the browser on the attacker page's behalf: every POST refused, every read
    // refused but the window it opened on the link, which opens as a link the person clicks does (and
    // which the page cannot read, above).
    let answered = report["answered"].as_array().unwrap();
    for a in answered {
        eprintln!("the queue answered the attacker's page: {a}");
        if a["method"] == "POST" {
            assert_eq!(a["status"], 403, "{a}");
        }
    }
    assert!(
        answered.iter().filter(|a| a["method"] == "POST").count() >= 4,
        "{report:#}"
    );
    // The person's browser opened the claim from its link.
    let legit = &report["legit"];
    assert!(
        legit["html"]
            .as_str()
            .unwrap()
            .contains(&format!("Approve claim {code}")),
        "the person's browser did not open the claim from its link: {legit}"
    );
}

/// `--no-queue`: no queue, no link; a queue address off loopback is refused before anything starts.
#[test]
fn no_queue_means_no_link_and_the_queue_listens_only_on_loopback() {
    let world = World::new(None);
    let (_s, doc) = waiting_run(&world, &["--no-queue"]);
    assert!(
        doc["person"]
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

/// The MCP Inspector's CLI (npm `@modelcontextprotocol/inspector`, pinned in tests/mcp/package-lock.json).
fn inspector() -> Option<PathBuf> {
    installed(
        root().join("tests/mcp/node_modules/.bin/mcp-inspector"),
        "the MCP Inspector",
        "(cd tests/mcp && npm ci)",
    )
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
    // The answer stops at the read; the person's link carries the rest.
    assert_eq!(doc["status"], json!("for_the_person"), "{ran}");
    assert_eq!(doc["output"], json!([]), "{ran}");
    assert!(
        doc["person"].as_str().unwrap().contains("/run/run-1"),
        "{ran}"
    );
    let waiting = call(
        "run_plan",
        Some(
            "plan=m = read_inbox(limit=1)\nsend_email(to=\"bob@example.com\", subject=\"f\", body=m[0][\"body\"])\n",
        ),
    );
    let doc = &waiting["structuredContent"];
    // The read cuts the answer: the model gets the link of the run's page for the person.
    assert_eq!(doc["status"], json!("for_the_person"), "{waiting}");
    assert!(
        doc["person"]
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

/// An error message a literal of a tainted session could fill (here with text the planner may have
/// copied from a mail) is redacted like one from tool data, for the planner and in the trace.
#[test]
fn an_error_in_a_session_that_read_mail_is_redacted() {
    let world = reading_world();
    let mut s = session(world.dir.path());
    let r = s.call(2, "run_plan", json!({"plan": PRINT_THE_INBOX}));
    assert!(doc_of(&r).to_string().contains("IGNORE PREVIOUS"), "{r}");
    let plan = "x = int(\"Revenue 1.2M, costs 0.9M\")\n";
    let r = s.call(3, "run_plan", json!({"plan": plan}));
    let doc = doc_of(&r);
    assert_eq!(doc["status"], json!("error"), "{r}");
    assert_eq!(doc["error"]["type"], json!("ValueError"), "{r}");
    assert!(!doc.to_string().contains("Revenue"), "{r}");
    // Told in fixed words: no source list, length or digest of what the message held.
    assert_eq!(
        doc["error"]["message"],
        json!("the message depends on data: it is shown to the person"),
        "{r}"
    );
    let trace = std::fs::read_to_string(doc["trace"].as_str().unwrap()).unwrap();
    // The plan's own text is in the header, as for every run; no other record repeats it.
    let records: Vec<&str> = trace.lines().skip(1).collect();
    assert!(records.iter().all(|l| !l.contains("Revenue")), "{trace}");
}

// NORMAL says what it is (issue #50; docs/semantics.md, "Control context and modes"): a mail that chooses
// the recipient through a condition is refused in strict mode, and a planner model's plans run in normal
// mode only when the policy says so for the planner.

/// The mail chooses who gets the summary, only through the `if`.
const THE_MAIL_CHOOSES: &str = "mails = read_inbox(limit=1)\nto = \"me@example.com\"\nif \"urgent\" in mails[0][\"body\"]:\n    to = \"boss@example.com\"\nsend_email(to=to, subject=\"summary\", body=\"there is mail\")\n";

/// The decisions of `send_email` calls the run's trace records (the person's record of the run).
fn send_decisions(r: &Value) -> Vec<String> {
    let trace = std::fs::read_to_string(doc_of(r)["trace"].as_str().unwrap()).unwrap();
    trace
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|rec| rec["tool"] == json!("send_email"))
        .filter_map(|rec| rec["decision"].as_str().map(str::to_string))
        .collect()
}

/// The example world with its policy's `mode:` line replaced by `mode`, and `extra` appended.
fn world_in_mode(mode: &str, extra: &str) -> World {
    let world = World::new(None);
    let path = world.path("policy.yaml");
    let policy = std::fs::read_to_string(&path).unwrap();
    let line = policy
        .lines()
        .find(|l| l.starts_with("mode:"))
        .expect("the default policy names its mode")
        .to_string();
    std::fs::write(
        &path,
        policy.replace(&line, &format!("mode: {mode}")) + extra,
    )
    .unwrap();
    world
}

#[test]
fn in_strict_mode_the_mail_cannot_choose_the_recipient_through_a_condition() {
    let world = world_in_mode("strict", "");
    let mut s = session(world.dir.path());
    let r = s.call(2, "run_plan", json!({"plan": THE_MAIL_CHOOSES}));
    // The model is told only the read; the send's decision depends on the mail, so it is the person's.
    let decisions = send_decisions(&r);
    assert_eq!(decisions.len(), 1, "{r}");
    assert_ne!(decisions[0], "allow", "{r}");
    assert!(world.messages("out/outbox").is_empty());
}

#[test]
fn mcp_serve_refuses_a_normal_mode_policy_unless_it_says_so_for_the_planner() {
    let world = world_in_mode("normal", "");
    let out = Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .args([
            "mcp",
            "serve",
            "--policy",
            "policy.yaml",
            "--no-queue",
            "--runs",
            "runs",
        ])
        .current_dir(world.dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the policy's mode is normal")
            && stderr.contains("planner: { mode: normal }"),
        "{stderr}"
    );
    assert!(!world.path("runs").exists(), "nothing was set up");
    assert!(world.messages("out/outbox").is_empty());

    // Said for the planner: served, the first line names the mode, and the mail does choose the recipient
    // (what `planner: { mode: normal }` accepts).
    let world = world_in_mode("normal", "\nplanner:\n  mode: normal\n");
    let mut s = session(world.dir.path());
    let r = s.call(2, "run_plan", json!({"plan": THE_MAIL_CHOOSES}));
    assert_eq!(send_decisions(&r), vec!["allow".to_string()], "{r}");
    assert_eq!(world.messages("out/outbox").len(), 1);
}
