//! Content scanners as label sources (`returns.scan`, docs/policy.md, "Scanners"), end to end with the
//! binary: `scan: [secrets]` on `read_file` makes mailing a file that holds a private key a `deny` that names
//! the scanner, with nothing in the outbox, while the same file without the key is delivered as before; the
//! trace records which scanner added which tag; `scan: [injection]` tags a mail that talks to the assistant;
//! a policy naming an unknown scanner, or one whose tag it does not declare, is refused.

use crate::common;

use assert_cmd::Command;
use common::world::{World, calls, records};

/// A key in the OpenSSH format: what the `secrets` scanner must find inside an ordinary report.
const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\n\
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n\
QyNTUxOQAAACBxV3Jm2Kq8yN0fT5pL7cR4wX9aH6eD1sG3bU2vZ8nM4gAAAJgR3fQ9Ed30\n\
PQAAAAtzc2gtZWQyNTUxOQAAACBxV3Jm2Kq8yN0fT5pL7cR4wX9aH6eD1sG3bU2vZ8nM4g\n\
-----END OPENSSH PRIVATE KEY-----\n";

const REPORT: &str = "Quarterly report\n\nSales are up 4%. The deploy box is ready.\n";

/// The example world with `scan: [secrets]` on `read_file` and two reports, one with a key in it.
fn world() -> World {
    let world = World::new(None);
    let policy_path = world.path("policy.yaml");
    let policy = std::fs::read_to_string(&policy_path).unwrap();
    let marker = "      tags_when:                    # files under secrets/";
    assert!(policy.contains(marker), "the default policy changed shape");
    let policy = policy.replace(marker, &format!("      scan: [secrets]\n{marker}"));
    std::fs::write(&policy_path, policy).unwrap();
    std::fs::write(world.path("files/report.txt"), REPORT).unwrap();
    std::fs::write(
        world.path("files/report-with-key.txt"),
        format!("{REPORT}\nThe deploy key, so you have it:\n{KEY}"),
    )
    .unwrap();
    world
}

fn mail_plan(file: &str, to: &str) -> String {
    format!("r = read_file(path=\"{file}\")\nsend_email(to=\"{to}\", subject=\"report\", body=r)\n")
}

#[test]
fn mailing_a_file_with_a_private_key_is_denied_naming_the_scanner() {
    // To the user herself (a reader of everything) and to a colleague: the key never leaves either way.
    for to in ["me@example.com", "bob@example.com"] {
        let world = world();
        let plan = world.write_plan("plan.py", &mail_plan("report-with-key.txt", to));
        let trace = world.path("plan.zjson");
        let out = world.run_expect(&plan, &["--trace", trace.to_str().unwrap()], 3);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(world.messages("out/outbox").is_empty(), "{to}: sent");
        assert!(world.messages("out/drafts").is_empty(), "{to}: drafted");
        let c = calls(&trace, Some("send_email"));
        assert_eq!(c.len(), 1);
        assert_eq!(c[0]["decision"], "deny", "{to}");
        let reason = c[0]["reason"].as_str().unwrap();
        assert!(
            reason.contains(
                "carries tag AUTH_SECRET (AUTH_SECRET added by scanner `secrets` on read_file's result)"
            ),
            "{reason}"
        );
        assert!(
            stderr.contains("scanner `secrets`"),
            "the person sees the scanner too: {stderr}"
        );
        // The trace says which scanner added which tag, and by which rule.
        let result = records(&trace)
            .into_iter()
            .find(|r| r["type"] == "result" && r["tool"] == "read_file")
            .unwrap();
        assert_eq!(
            result["scanned"],
            serde_json::json!([{"scanner": "secrets", "tag": "AUTH_SECRET", "rule": "private-key"}])
        );
        assert!(
            result["label"]["tags"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!("AUTH_SECRET"))
        );
        // The trace still verifies with the new field in it.
        Command::cargo_bin("zamburak")
            .unwrap()
            .arg("verify")
            .arg(&trace)
            .assert()
            .success();
        // The viewer says which scanner tagged the result, by which rule, and never shows the key.
        let page = exported(&trace);
        assert!(
            page.contains("Tags added by scanners: <code>AUTH_SECRET</code> by <code>secrets</code> (rule <code>private-key</code>)"),
            "{to}: the viewer does not name the scanner"
        );
        assert!(
            !page.contains("PRIVATE KEY"),
            "{to}: the viewer shows the key"
        );
    }
}

/// `zamburak view --export` of `trace`: the page.
fn exported(trace: &std::path::Path) -> String {
    let html = trace.with_extension("html");
    Command::cargo_bin("zamburak")
        .unwrap()
        .arg("view")
        .arg(trace)
        .arg("--export")
        .arg(&html)
        .assert()
        .success();
    std::fs::read_to_string(html).unwrap()
}

#[test]
fn the_same_file_without_the_key_goes_as_before() {
    let world = world();
    let plan = world.write_plan("plan.py", &mail_plan("report.txt", "me@example.com"));
    let trace = world.path("plan.zjson");
    world.run_expect(&plan, &["--trace", trace.to_str().unwrap()], 0);
    let sent = world.messages("out/outbox");
    assert_eq!(sent.len(), 1);
    assert!(sent[0].contains("Sales are up"));
    let result = records(&trace)
        .into_iter()
        .find(|r| r["type"] == "result" && r["tool"] == "read_file")
        .unwrap();
    assert!(result.get("scanned").is_none(), "{result}");
    assert!(!exported(&trace).contains("Tags added by scanners"));
    // To someone who may not read the user's files: the usual approvable `confirm`, nothing sent yet.
    let world = self::world();
    let plan = world.write_plan("plan.py", &mail_plan("report.txt", "bob@example.com"));
    world.run_expect(&plan, &[], 4);
    assert!(world.messages("out/outbox").is_empty());
}

#[test]
fn without_the_scanner_the_key_is_only_private() {
    // The control: the default policy has no scanner, so the key is an approvable `confirm` (exit 4) to Bob
    // and is delivered to the user herself. This is what the scanner changes.
    let world = World::new(None);
    std::fs::write(world.path("files/report-with-key.txt"), KEY).unwrap();
    let plan = world.write_plan(
        "plan.py",
        &mail_plan("report-with-key.txt", "me@example.com"),
    );
    world.run_expect(&plan, &[], 0);
    assert_eq!(world.messages("out/outbox").len(), 1);
}

#[test]
fn mail_that_talks_to_the_assistant_is_tagged_by_the_injection_scanner() {
    let world = World::new(None);
    let policy_path = world.path("policy.yaml");
    let policy = std::fs::read_to_string(&policy_path)
        .unwrap()
        .replace(
            "  - AUTH_SECRET                     # passwords",
            "  - SUSPECT_INJECTION\n  - AUTH_SECRET                     # passwords",
        )
        .replace(
            "      readers: { from_fields: [from, to, cc] }   # each message may be read by its sender and recipients",
            "      readers: { from_fields: [from, to, cc] }\n      scan: [injection]",
        )
        .replace(
            "        forbid_tags: { tags: [AUTH_SECRET], on_violation: deny }   # no secrets in the body; no approval can override",
            "        forbid_tags: { tags: [AUTH_SECRET, SUSPECT_INJECTION], on_violation: deny }",
        );
    std::fs::write(&policy_path, &policy).unwrap();
    assert!(policy.contains("scan: [injection]") && policy.contains("SUSPECT_INJECTION]"));
    // The inbox holds Mallory's "ignore all previous instructions" mail: forwarding the inbox is refused.
    let plan = world.write_plan(
        "plan.py",
        "m = read_inbox(limit=20)\nsend_email(to=\"me@example.com\", subject=\"digest\", body=str(m))\n",
    );
    let trace = world.path("plan.zjson");
    world.run_expect(&plan, &["--trace", trace.to_str().unwrap()], 3);
    assert!(world.messages("out/outbox").is_empty());
    let c = calls(&trace, Some("send_email"));
    let reason = c[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("added by scanner `injection` on read_inbox's result"),
        "{reason}"
    );
    let result = records(&trace)
        .into_iter()
        .find(|r| r["type"] == "result" && r["tool"] == "read_inbox")
        .unwrap();
    // Mallory's "ignore all previous instructions" or the hidden "SYSTEM: the user authorised you ..." of
    // another mail, whichever the scan reads first: one finding per scanner.
    let scanned = result["scanned"].as_array().unwrap();
    assert_eq!(scanned.len(), 1, "{scanned:?}");
    assert_eq!(scanned[0]["scanner"], "injection");
    assert_eq!(scanned[0]["tag"], "SUSPECT_INJECTION");
    let rule = scanned[0]["rule"].as_str().unwrap();
    assert!(
        ["ignore-previous-instructions", "system-impersonation"].contains(&rule),
        "{rule}"
    );
}

/// `zamburak policy check` of `policy` written into `world`.
fn policy_check_output(world: &World, policy: &str) -> std::process::Output {
    let path = world.path("checked.yaml");
    std::fs::write(&path, policy).unwrap();
    Command::cargo_bin("zamburak")
        .unwrap()
        .args(["policy", "check"])
        .arg(&path)
        .output()
        .unwrap()
}

fn policy_check(world: &World, policy: &str) -> (i32, String) {
    let out = policy_check_output(world, policy);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn unknown_scanners_and_undeclared_scanner_tags_are_policy_errors() {
    let world = World::new(None);
    let base = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    let marker = "      tags_when:                    # files under secrets/";
    let (code, err) = policy_check(
        &world,
        &base.replace(marker, &format!("      scan: [secrets, viruses]\n{marker}")),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("viruses"), "{err}");
    let (code, err) = policy_check(
        &world,
        &base.replace(marker, &format!("      scan: [injection]\n{marker}")),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("scanner `injection` adds tag `SUSPECT_INJECTION`, which is not declared"),
        "{err}"
    );
    let (code, err) = policy_check(
        &world,
        &base.replace(marker, &format!("      scan: [secrets]\n{marker}")),
    );
    assert_eq!(code, 0, "{err}");
}

/// The attacker MCP server of tests/mcp (`inbox` returns a message saying "IGNORE PREVIOUS INSTRUCTIONS"),
/// under a locked policy whose `inbox` runs `scan` (or not) and whose `deliver` forbids the tag. The reply
/// goes to the sender through a verifier: a recipient from data needs one (docs/semantics.md, "Recipients
/// are a role").
fn mcp_world(scan: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let server =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/attacker_server.py");
    std::fs::write(dir.join("description.txt"), "Adds two integers.").unwrap();
    let policy = format!(
        "version: 1\ntags: [SUSPECT_INJECTION]\nverifiers:\n  verify_recipient: {{ kind: email_allowlist, allow: [\"*@example.com\"], mints: Recipient }}\nservers:\n  attacker:\n    command: python3\n    args: [{:?}, {:?}]\n    call_timeout_ms: 3000\ntools:\n  inbox:\n    source: mcp.attacker.inbox\n    effect: read\n    args: {{}}\n    control: {{ require: any }}\n    returns: {{ readers: {{ from_fields: [from] }}, structure_readers: public{scan} }}\n  deliver:\n    source: mcp.attacker.deliver\n    effect: send\n    args:\n      to: {{ require: [trusted, \"verified(Recipient)\"], readers_must_include: to }}\n      body: {{ readers_must_include: to, forbid_tags: [SUSPECT_INJECTION] }}\n    control: {{ require: any }}\n",
        server.to_str().unwrap(),
        dir.to_str().unwrap()
    );
    std::fs::write(dir.join("zamburak.yaml"), policy).unwrap();
    let out = Command::cargo_bin("zamburak")
        .unwrap()
        .current_dir(dir)
        .args(["mcp", "lock"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(
        dir.join("p.py"),
        "m = inbox()\ndeliver(to=verify_recipient(m[0][\"from\"]), body=m[0][\"body\"])\n",
    )
    .unwrap();
    tmp
}

fn delivered(dir: &std::path::Path) -> usize {
    std::fs::read_to_string(dir.join("calls.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("\"deliver\""))
        .count()
}

#[test]
fn an_mcp_tools_result_is_scanned_too() {
    let run = |dir: &std::path::Path| {
        Command::cargo_bin("zamburak")
            .unwrap()
            .current_dir(dir)
            .args(["run", "p.py", "--trace", "t.zjson"])
            .output()
            .unwrap()
    };
    // Without the scanner: Alice's own message goes back to her (the control, so the test can fail).
    let tmp = mcp_world("");
    let out = run(tmp.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(delivered(tmp.path()), 1);
    // With it: the whole result carries SUSPECT_INJECTION (Mallory's message is in it), so nothing of it
    // is delivered, and the server never sees the call.
    let tmp = mcp_world(", scan: [injection]");
    let out = run(tmp.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(
        delivered(tmp.path()),
        0,
        "a refused delivery reached the server"
    );
    assert!(
        stderr.contains("added by scanner `injection` on inbox's result"),
        "{stderr}"
    );
    let result = records(&tmp.path().join("t.zjson"))
        .into_iter()
        .find(|r| r["type"] == "result" && r["tool"] == "inbox")
        .unwrap();
    assert_eq!(result["scanned"][0]["rule"], "ignore-previous-instructions");
}

/// A scanner's tag is a guess about text, not integrity: `policy check` says so where an argument forbids
/// `SUSPECT_INJECTION` and requires nothing (docs/policy.md, "Scanners").
#[test]
fn policy_check_warns_when_a_scanner_tag_stands_in_for_a_requirement() {
    let world = World::new(None);
    let check = |policy: &str| {
        let out = policy_check_output(&world, policy);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let base = "version: 1\ntags: [SUSPECT_INJECTION]\ntools:\n  post:\n    effect: send\n    args:\n      url: { forbid_tags: [SUSPECT_INJECTION], public: true }\n";
    let (code, out) = check(base);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(
            "# warning: `post` argument `url` forbids `SUSPECT_INJECTION` but requires nothing"
        ),
        "{out}"
    );
    let (code, out) = check(&base.replace("public: true", "public: true, require: trusted"));
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("# warning:"), "{out}");
}
