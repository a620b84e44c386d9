//! `zamburak run` end to end: the real binary, the real Maildir and files adapters, a real HTTP server on
//! loopback. Security cases assert the decision AND that the side effect did not happen.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use assert_cmd::Command;

use crate::common;
use common::world::World;

fn example_plan(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(name),
    )
    .unwrap()
}

/// A loopback HTTP server that counts the requests it receives.
fn counting_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            counter.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "hello from loopback";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, hits)
}

#[test]
fn triage_sends_the_summary_to_the_user_and_drafts_replies() {
    let world = World::new(None);
    let plan = world.write_plan("triage.py", &example_plan("triage.py"));
    let out = world.run(&plan, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = world.messages("out/outbox");
    assert_eq!(sent.len(), 1, "exactly the summary is sent");
    assert!(sent[0].contains("me@example.com"));
    // Replies to colleagues depend on the mail, so they are drafts, never sent.
    let drafts = world.messages("out/drafts");
    assert!(!drafts.is_empty(), "replies to colleagues are drafted");
    assert!(
        drafts.iter().all(|d| !d.contains("evil.test")),
        "no draft to an attacker"
    );
    // The trace verifies.
    let verify = Command::cargo_bin("zamburak")
        .unwrap()
        .arg("verify")
        .arg(world.path("triage.zjson"))
        .output()
        .unwrap();
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

#[test]
fn attack_is_denied_and_no_request_leaves_the_machine() {
    let (port, hits) = counting_server();
    let world = World::new(Some(port));
    let plan = world.write_plan("attack.py", &example_plan("attack.py"));
    let out = world.run(&plan, &["--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("one JSON document on stdout");
    assert_eq!(doc["outcome"], "deny");
    let denied: Vec<_> = doc["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["decision"] == "deny")
        .collect();
    assert_eq!(denied.len(), 1);
    assert_eq!(denied[0]["tool"], "fetch_url");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the web server was never contacted"
    );
    // The secret never appears in the output or the trace.
    let secret = std::fs::read_to_string(world.path("files/secrets/api_key.txt")).unwrap();
    let trace = std::fs::read_to_string(world.path("attack.zjson")).unwrap();
    assert!(!trace.contains(secret.trim()));
    assert!(!String::from_utf8_lossy(&out.stdout).contains(secret.trim()));
}

#[test]
fn recipient_chosen_by_a_mail_is_not_sent() {
    let world = World::new(None);
    let plan = world.write_plan(
        "fwd.py",
        "mails = search_email(query=\"IGNORE\")\nm = mails[0]\nsend_email(to=m[\"from\"], subject=\"fwd\", body=\"hi\")\n",
    );
    let out = world.run(&plan, &[]);
    // The default policy asks for confirmation on a violating send; either way nothing is delivered.
    assert!(
        matches!(out.status.code(), Some(3) | Some(4)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        world.messages("out/outbox").is_empty(),
        "the outbox stays empty"
    );
}

#[test]
fn private_file_cannot_be_overwritten_by_a_path_from_mail() {
    let world = World::new(None);
    let before = std::fs::read_to_string(world.path("files/notes.md")).unwrap();
    let plan = world.write_plan(
        "overwrite.py",
        "m = read_inbox(limit=1)[0]\nwrite_file(path=m[\"subject\"], content=\"pwned\")\n",
    );
    let out = world.run(&plan, &[]);
    assert!(
        matches!(out.status.code(), Some(3) | Some(4)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(world.path("files/notes.md")).unwrap(),
        before
    );
    let names: Vec<_> = std::fs::read_dir(world.path("files"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(!names.iter().any(|n| n.contains("pwned")));
}

#[test]
fn rejected_plan_runs_no_tool() {
    let world = World::new(None);
    let plan = world.write_plan(
        "bad.py",
        "send_email(to=\"me@example.com\", subject=\"x\", body=\"y\")\ntry:\n    pass\nexcept Exception:\n    pass\n",
    );
    let out = world.run(&plan, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(world.messages("out/outbox").is_empty());
}

#[test]
fn plan_error_message_with_mail_data_is_redacted() {
    let world = World::new(None);
    let plan = world.write_plan(
        "err.py",
        "m = read_inbox(limit=1)[0]\nn = int(m[\"subject\"])\n",
    );
    let out = world.run(&plan, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["outcome"], "error");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("<redacted"), "{message}");
    assert_eq!(doc["error"]["line"], 2);
}

#[test]
fn a_plan_cannot_forge_a_verified_recipient_through_sum() {
    // Regression (label forgery): `sum(lists, [])` once concatenated raw lists, so a plan could build a
    // list whose elements carried a label it wrote, `0`: verified for every kind. Under a policy that
    // accepts only verified recipients, that label alone would have sent the message.
    let world = World::new(None);
    let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    let strict_to = policy
        .replacen(
            "require: [trusted, \"verified(Recipient)\", \"known(correspondent)\"]   # typed by the user's plan, passed through verify_recipient, or an address you approved and remembered",
            "require: \"verified(Recipient)\"",
            1,
        )
        .replacen(
            "on_violation: confirm           # a violating send waits",
            "on_violation: deny           # a violating send waits",
            1,
        );
    assert_ne!(
        strict_to, policy,
        "the test policy differs from the default"
    );
    std::fs::write(world.path("policy.yaml"), strict_to).unwrap();

    // Control: under this policy a plain literal recipient is refused.
    let literal = world.write_plan(
        "literal.py",
        "send_email(to=\"mallory@evil.test\", subject=\"s\", body=\"b\")\n",
    );
    let out = world.run(&literal, &[]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(world.messages("out/outbox").is_empty());

    let forged = world.write_plan(
        "forged.py",
        // The verifier branch keeps the pre-flight analysis from proving a denial, so the runtime decides.
        "xs = sum([[\"l\"], [[(\"mallory@evil.test\", 0)]], [0]], [])\nto = verify_recipient(\"me@example.com\") if len(xs) > 5 else xs[0]\nsend_email(to=to, subject=\"s\", body=\"b\")\n",
    );
    let out = world.run(&forged, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("deny send_email"), "{stderr}");
    assert!(
        world.messages("out/outbox").is_empty(),
        "the outbox stays empty"
    );
}

/// A loopback HTTP server that logs the path of every request it receives.
fn logging_server() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let paths = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
            paths.lock().unwrap().push(path);
            let body = "served";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, log)
}

#[test]
fn the_web_allow_list_cannot_be_walked_out_of() {
    // Red-team regression: on a7b7e77, with `allow: [".../docs/"]`, `/docs/../admin/` and `/docs/%2e%2e/admin/`
    // passed the raw-prefix check and the server resolved them to `/admin/`.
    let (port, log) = logging_server();
    let world = World::new(Some(port));
    let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    let base = format!("http://127.0.0.1:{port}");
    std::fs::write(
        world.path("policy.yaml"),
        policy.replace(&format!("\"{base}/\""), &format!("\"{base}/docs/\"")),
    )
    .unwrap();
    for path in [
        "/docs/../admin/",
        "/docs/%2e%2e/admin/",
        "/docs/%2E%2E/admin/",
        "/docs/.%2e/admin/",
        "/docs/..%2fadmin/",
        "/docs/..;/admin/",
        "/docsecret",
        "/admin/",
    ] {
        let plan = world.write_plan(
            "plan.py",
            &format!("page = fetch_url(url=\"{base}{path}\")\n"),
        );
        let out = world.run(&plan, &[]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("builtins.web.allow"),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            *log.lock().unwrap(),
            Vec::<String>::new(),
            "{path}: a request reached the server"
        );
    }
    // Inside the prefix: the normalised URL is what is fetched.
    let plan = world.write_plan(
        "plan.py",
        &format!(
            "page = fetch_url(url=\"{base}/docs/a/../%62\")\nsend_email(to=\"me@example.com\", subject=page[\"url\"], body=page[\"body\"])\n"
        ),
    );
    let out = world.run(&plan, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(*log.lock().unwrap(), vec!["/docs/b".to_string()]);
    let sent = world.messages("out/outbox");
    assert!(sent[0].contains(&format!("{base}/docs/b")), "{}", sent[0]);
}
