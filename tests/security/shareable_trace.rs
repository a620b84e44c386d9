//! A shareable trace shares nothing private (issue #50, docs/semantics.md, "A shareable trace shares nothing
//! private"). On `f7924b0` the trace named every value by the plain sha256 of its JSON, so whoever held the
//! trace confirmed a guess of a private value offline (a one-time code, an amount, a yes/no), and the claim
//! code the planner is told was 60 bits of a digest over the same plain hashes. Each test runs the real
//! binary and asserts the decision, the effect, and what the trace lets a holder without the key compute.

use crate::common;

use assert_cmd::Command;
use common::world::{World, records};
use serde_json::Value;
use zamburak::trace::record::{Call, claim_code};
use zamburak::trace::redact::digest as plain_digest;

/// Forwards the newest mail's body to a colleague who is not among its readers: `confirm` (exit 4).
const FORWARD: &str = "mails = read_inbox(limit=1)\nfirst = mails[0]\nsend_email(to=\"bob@example.com\", subject=\"fwd\", body=first[\"body\"])\nprint(\"forwarded\")\n";

fn zamburak(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("zamburak")
        .unwrap()
        .args(args)
        .env("USER", "alice")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// The claim code `run` printed with the claim (`claim XXXX-XXXX-XXXX`).
fn printed_code(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("claim "))
        .unwrap_or_else(|| panic!("no claim code in: {stderr}"))
        .trim()
        .to_string()
}

/// Every value the store beside a trace holds, as JSON (its lines after the key, if any).
fn stored_values(store: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(store)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|l| l.get("value").cloned())
        .collect()
}

/// Every `digest` field of the records' arguments, results and outputs.
fn value_digests(records: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for r in records {
        if let Some(d) = r.get("digest").and_then(Value::as_str) {
            out.push(d.to_string());
        }
        for a in r
            .get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.push(a["digest"].as_str().unwrap().to_string());
        }
    }
    out
}

/// The hole and its fix on the real binary: a run that reads a private mail and waits on a claim to send
/// it. Whoever holds the trace must not find any value's plain digest in it, nor derive the claim code
/// from plain digests of guessed values; the person's approval with the printed code still binds the claim
/// and sends it, exactly once; `verify` checks the trace.
#[test]
fn a_trace_names_private_values_by_digests_only_the_key_holder_can_make() {
    let world = World::new(None);
    let plan = world.write_plan("plan.py", FORWARD);
    let run = world.run(&plan, &[]);
    assert_eq!(run.status.code(), Some(4), "{}", text(&run.stderr));
    assert!(world.messages("out/outbox").is_empty(), "nothing sent yet");
    let code = printed_code(&text(&run.stderr));
    let trace = world.path("plan.zjson");
    let store = world.path("plan.zvalues");
    let recs = records(&trace);
    let send = recs
        .iter()
        .find(|r| r["type"] == "call" && r["tool"] == "send_email")
        .unwrap();
    assert_eq!(send["decision"], "confirm", "{send}");

    // No value of the run is named by its plain sha256: a guess of the mail's body cannot be confirmed.
    let values = stored_values(&store);
    assert!(values.len() >= 3, "{values:?}");
    let digests = value_digests(&recs);
    assert!(!digests.is_empty());
    for v in &values {
        let plain = plain_digest(v);
        assert!(
            !digests.contains(&plain),
            "the trace names {v} by its plain sha256 {plain}"
        );
    }
    for d in &digests {
        assert!(d.starts_with("hmac-sha256:"), "not a keyed digest: {d}");
    }

    // The claim code is not the one a holder of the trace computes from plain digests of the values.
    let mut call: Call = {
        let mut o = send.as_object().unwrap().clone();
        for k in ["seq", "prev", "hash", "type"] {
            o.shift_remove(k);
        }
        serde_json::from_value(Value::Object(o)).unwrap()
    };
    assert_eq!(call.claim_code(), code, "the code is the recorded claim's");
    let shown: Vec<(String, Value)> = {
        let snap: Value =
            serde_json::from_slice(&std::fs::read(world.path("plan.zsnap")).unwrap()).unwrap();
        serde_json::from_value(snap["shown"]["values"].clone()).unwrap()
    };
    for (arg, (name, value)) in call.args.iter_mut().zip(&shown) {
        assert_eq!(&arg.name, name);
        arg.digest = plain_digest(value);
    }
    let guessed = claim_code(&call.claim_digest());
    assert_ne!(
        guessed, code,
        "the claim code is derived from plain digests of the values"
    );

    // The key is the user's: in the store (mode 0600), never in the trace.
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&store)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let key = first["key"].as_str().unwrap();
    assert_eq!(key.len(), 64);
    assert!(!std::fs::read_to_string(&trace).unwrap().contains(key));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&store).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // The person approves with the code they were shown: bound to the same claim, the mail goes out once.
    let snapshot = world.path("plan.zsnap");
    let approve = zamburak(&["approve", snapshot.to_str().unwrap(), "--claim", &code]);
    assert_eq!(approve.status.code(), Some(0), "{}", text(&approve.stderr));
    assert_eq!(world.messages("out/outbox").len(), 1);
    let after = records(&trace);
    let approval = after.iter().find(|r| r["type"] == "approval").unwrap();
    assert_eq!(approval["claim_digest"], Value::String(call_digest(send)));
    // The continued run names its values under the same key: the store still shows them all.
    let reveal_values = stored_values(&store);
    for d in value_digests(&after) {
        assert!(d.starts_with("hmac-sha256:"), "{d}");
    }
    assert!(reveal_values.len() >= values.len());

    // `verify` still checks the user's trace.
    let verify = zamburak(&["verify", trace.to_str().unwrap()]);
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify.stdout));
    assert!(text(&verify.stdout).starts_with("ok: "));
}

/// The claim digest of a recorded call, as the trace's approval records it.
fn call_digest(rec: &Value) -> String {
    let mut o = rec.as_object().unwrap().clone();
    for k in ["seq", "prev", "hash", "type"] {
        o.shift_remove(k);
    }
    serde_json::from_value::<Call>(Value::Object(o))
        .unwrap()
        .claim_digest()
}

/// Two runs of the same plan on the same data name the same value by different digests: a digest seen in
/// one shared trace says nothing about a value in another.
#[test]
fn the_same_value_has_another_digest_in_another_run() {
    let world = World::new(None);
    let plan = world.write_plan(
        "plan.py",
        "k = read_file(path=\"secrets/api_key.txt\")\nprint(\"read\")\n",
    );
    let digest_of_read = || {
        let out = world.run(&plan, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let recs = records(&world.path("plan.zjson"));
        let r = recs.iter().find(|r| r["type"] == "result").unwrap();
        assert_eq!(r["preview"], Value::Null, "a secret is never previewed");
        r["digest"].as_str().unwrap().to_string()
    };
    let a = digest_of_read();
    let b = digest_of_read();
    assert_ne!(a, b);
    assert_ne!(
        a,
        plain_digest(&Value::String("sk-test-0000-FAKE-KEY".into()))
    );
    assert!(world.messages("out/outbox").is_empty());
}

/// Exports `trace` to `out` with `extra` arguments; the exit code and stderr.
fn export_to(trace: &std::path::Path, out: &std::path::Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec![
        "view",
        trace.to_str().unwrap(),
        "--export",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = zamburak(&args);
    (o.status.code().unwrap_or(-1), text(&o.stderr))
}

/// Reads the user's private notes, decides on them and tries to mail them to a colleague (held for the
/// person, nothing sent). The export for the planner, or for the colleague, keeps the run up to the read
/// and nothing the notes decided: not the read's result, not what was printed after, not the claim, not
/// how the run stands. On `f7924b0` the only export was the whole trace (no `--for`), which held all of
/// these.
const READS_NOTES: &str = "print(\"starting\")\nt = read_file(path=\"todo.txt\")\nif \"Alice\" in t:\n    print(\"mentions Alice\")\nsend_email(to=\"bob@example.com\", subject=\"todo\", body=t)\n";

#[test]
fn an_export_for_a_reader_keeps_only_what_the_reader_may_read() {
    let world = World::new(None);
    let plan = world.write_plan("plan.py", READS_NOTES);
    let run = world.run(&plan, &[]);
    assert_eq!(run.status.code(), Some(4), "{}", text(&run.stderr));
    assert!(world.messages("out/outbox").is_empty(), "nothing sent");
    let trace = world.path("plan.zjson");
    let recs = records(&trace);
    let result = recs.iter().find(|r| r["type"] == "result").unwrap();
    let send = recs
        .iter()
        .find(|r| r["type"] == "call" && r["tool"] == "send_email")
        .unwrap();
    assert_eq!(send["decision"], "confirm");
    // Every argument's and result's digest recorded after the read's decision, and the last record's hash
    // (the pages show no output's digest: outputs are counted below).
    let read_at = recs
        .iter()
        .position(|r| r["type"] == "call" && r["tool"] == "read_file")
        .unwrap();
    let later: Vec<Value> = recs[read_at + 1..]
        .iter()
        .filter(|r| r["type"] != "output")
        .cloned()
        .collect();
    let mut private = value_digests(&later);
    assert!(private.contains(&result["digest"].as_str().unwrap().to_string()));
    assert!(private.len() >= 4, "{private:?}");
    private.push(recs.last().unwrap()["hash"].as_str().unwrap().to_string());

    // The user's own export has them all: what the test looks for is there to find.
    let whole = world.path("whole.html");
    let (code, stderr) = export_to(&trace, &whole, &[]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&whole).unwrap();
    for p in &private {
        assert!(html.contains(p.as_str()), "the whole export lacks {p}");
    }
    assert_eq!(html.matches("<li class=\"output").count(), 2);

    for reader in ["llm:planner", "bob@example.com"] {
        let out = world.path("for-reader.html");
        let _ = std::fs::remove_file(&out);
        let (code, stderr) = export_to(&trace, &out, &["--for", reader]);
        assert_eq!(code, 0, "for {reader}: {stderr}");
        let html = std::fs::read_to_string(&out).unwrap();
        assert!(html.contains("Export for"), "for {reader}");
        assert!(html.contains(reader), "for {reader}");
        // Before the cut: what was printed first and the read's decision.
        assert!(html.contains("starting"), "for {reader}");
        assert!(html.contains("id=\"call-1\""), "for {reader}");
        // After it: nothing, not even the denial or the printed line the secret chose.
        for p in &private {
            assert!(
                !html.contains(p.as_str()),
                "for {reader}: {p} is in the export"
            );
        }
        assert!(
            !html.contains("id=\"call-2\""),
            "for {reader}: the held call"
        );
        assert!(
            html.contains("<td class=\"decision-confirm\">0</td>"),
            "for {reader}"
        );
        assert_eq!(
            html.matches("<li class=\"output").count(),
            1,
            "for {reader}"
        );
    }
}

/// A trace whose chain is broken is not exported for a reader (a forged record could sit before the cut):
/// refused, nothing written.
#[test]
fn a_broken_trace_is_not_exported_for_a_reader() {
    let world = World::new(None);
    let plan = world.write_plan("plan.py", "print(\"hello\")\n");
    world.run_expect(&plan, &[], 0);
    let trace = world.path("plan.zjson");
    let t = std::fs::read_to_string(&trace).unwrap();
    std::fs::write(&trace, t.replacen("hello", "hullo", 1)).unwrap();
    let out = world.path("for.html");
    let (code, stderr) = export_to(&trace, &out, &["--for", "llm:planner"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("broken"), "{stderr}");
    assert!(!out.exists());
}

/// A plan a planner wrote after reading the user's private data carries that data's label: an export for
/// someone who may not read it leaves the plan's text and its digest out; one for a reader who may keeps it.
#[test]
fn the_plan_text_is_exported_only_to_a_reader_of_what_its_planner_had_read() {
    use zamburak::planner::{ContextIntegrity, ContextLabel};
    use zamburak::trace::TraceWriter;
    use zamburak::trace::record::{End, Header, Record};
    let world = World::new(None);
    let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    let plan = "print(\"the amount is 4711\")\n";
    let mut header = Header::new(
        plan,
        zamburak::digest::sha256_bytes(policy.as_bytes()),
        "strict",
    )
    .with_policy("flag", "policy.yaml", &policy);
    header.planner_context = Some(ContextLabel {
        integrity: ContextIntegrity::Trusted,
        readers: Some(["carol@example.com".to_string()].into()),
        ..ContextLabel::trusted()
    });
    let plan_sha256 = header.plan_sha256.clone();
    let trace = world.path("written.zjson");
    let mut w = TraceWriter::create(&trace, header).unwrap();
    w.append(Record::End(End {
        status: "finished".into(),
        exit_code: 0,
        outcome: "allow".into(),
    }))
    .unwrap();
    w.close().unwrap();

    let out = world.path("bob.html");
    let (code, stderr) = export_to(&trace, &out, &["--for", "bob@example.com"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("plan's text is left out"), "{stderr}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(!html.contains("4711"), "the plan's text is in the export");
    assert!(!html.contains(plan_sha256.trim_start_matches("sha256:")));
    assert!(html.contains("The plan's text is left out"));

    let out = world.path("carol.html");
    let (code, stderr) = export_to(&trace, &out, &["--for", "carol@example.com"]);
    assert_eq!(code, 0, "{stderr}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        html.contains("4711"),
        "carol may read what the planner had read"
    );
    assert!(html.contains(plan_sha256.trim_start_matches("sha256:")));
}
