//! Approvals end to end, each step a new process of the real binary on a real Maildir: a `confirm` claim
//! suspends the run (exit 4); `approve` runs exactly that call once and continues; everything else (a
//! second approval, an expired or tampered snapshot, a changed plan or policy, a rejection) leaves the
//! outbox untouched.

use crate::common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::world::{World, records};
use serde_json::Value;

/// Forwards a mail's body to a colleague who is not among its readers: `confirm` under the default policy.
const FORWARD: &str = "mails = read_inbox(limit=5)\nfirst = mails[0]\nsend_email(to=\"bob@example.com\", subject=\"fwd\", body=first[\"body\"])\nprint(\"forwarded\")\n";

fn zamburak(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::cargo_bin("zamburak")
        .unwrap()
        .env("ZAMBURAK_KNOWN", common::cli::no_store())
        .args(args)
        .output()
        .unwrap()
}

/// `approve|reject SNAPSHOT --claim CODE` with the code of the claim the snapshot holds (as a person copies it
/// from the claim `run` printed), and `--by tester`.
fn decide(verb: &str, snapshot: &Path) -> std::process::Output {
    let code = common::cli::snapshot_claim_code(snapshot);
    zamburak(&[
        verb.as_ref(),
        snapshot.as_os_str(),
        "--claim".as_ref(),
        code.as_ref(),
        "--by".as_ref(),
        "tester".as_ref(),
    ])
}

fn suspended(world: &World, plan: &str, extra: &[&str]) -> (PathBuf, PathBuf) {
    let plan = world.write_plan("plan.py", plan);
    let out = world.run(&plan, extra);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snapshot = world.path("plan.zsnap");
    assert!(snapshot.exists(), "a suspended run leaves a snapshot");
    assert!(
        world.messages("out/outbox").is_empty(),
        "nothing is sent before the decision"
    );
    (snapshot, world.path("plan.zjson"))
}

#[test]
fn approve_runs_the_claimed_call_exactly_once() {
    let world = World::new(None);
    let (snapshot, trace) = suspended(&world, FORWARD, &[]);
    let kept = world.path("kept.zsnap");
    std::fs::copy(&snapshot, &kept).unwrap();
    let out = decide("approve", &snapshot);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("forwarded"),
        "the plan continued"
    );
    // What was done, by whom, and that nothing is pending any more.
    assert!(
        stderr.contains("ran `send_email` #2 to bob@example.com"),
        "{stderr}"
    );
    assert!(stderr.contains("run completed"), "{stderr}");
    assert!(!snapshot.exists(), "the used snapshot is removed");
    let sent = world.messages("out/outbox");
    assert_eq!(sent.len(), 1, "the approved call ran once");
    assert!(sent[0].contains("bob@example.com"));

    // The trace: suspend, approval, result, end; and the chain verifies across the boundary.
    let recs = records(&trace);
    let kinds: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
    let s = kinds.iter().position(|k| *k == "suspend").unwrap();
    assert_eq!(&kinds[s..s + 3], ["suspend", "approval", "result"]);
    assert_eq!(recs[s + 1]["decision"], "approved");
    assert_eq!(recs[s + 1]["claim_digest"], recs[s]["claim_digest"]);
    assert_eq!(kinds.last(), Some(&"end"));
    let verify = zamburak(&["verify".as_ref(), trace.as_os_str()]);
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );

    // Single use: a second approval (even of a kept copy) is refused and sends nothing more.
    let again = decide("approve", &kept);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already decided"));
    assert_eq!(world.messages("out/outbox").len(), 1);
}

#[test]
fn reject_never_sends_and_ends_the_run_as_denied() {
    let world = World::new(None);
    let (snapshot, trace) = suspended(&world, FORWARD, &[]);
    let out = decide("reject", &snapshot);
    // The rejection was recorded: the command did what was asked (the run itself ended as denied).
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(world.messages("out/outbox").is_empty());
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("forwarded"),
        "the plan stopped at the call"
    );
    let recs = records(&trace);
    let approval = recs.iter().find(|r| r["type"] == "approval").unwrap();
    assert_eq!(approval["decision"], "rejected");
    let end = recs.last().unwrap();
    assert_eq!(
        (end["type"].as_str(), end["outcome"].as_str()),
        (Some("end"), Some("deny"))
    );
    assert_eq!(
        zamburak(&["verify".as_ref(), trace.as_os_str()])
            .status
            .code(),
        Some(0)
    );
    // Decided once: approving afterwards is refused.
    assert_eq!(decide("approve", &snapshot).status.code(), Some(2));
    assert!(world.messages("out/outbox").is_empty());
}

#[test]
fn an_expired_claim_cannot_be_approved() {
    let world = World::new(None);
    let (snapshot, _) = suspended(&world, FORWARD, &["--approval-ttl", "0"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let out = decide("approve", &snapshot);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expired"));
    assert!(world.messages("out/outbox").is_empty());
}

/// A claim held by its control context names where the condition's data came from, with the plan line of
/// that call, so the person can find the `if` or loop that decided whether the call happens.
#[test]
fn a_claim_held_by_a_condition_names_the_call_its_data_came_from() {
    let world = World::new(None);
    let plan = world.write_plan(
        "plan.py",
        "emails = read_inbox(limit=10)\nfor e in emails:\n    if \"Planning\" in e[\"subject\"]:\n        send_email(to=\"me@example.com\", subject=\"seen\", body=\"a planning mail\")\n",
    );
    let out = world.run(&plan, &[]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{said}");
    assert!(
        said.contains("! whether this call happens was decided by a condition or loop on data from read_inbox#1 (line 1)"),
        "{said}"
    );
    assert!(world.messages("out/outbox").is_empty());
}

/// An expired claim is renewed without re-running the plan: shown again, checked, with a new expiry; the
/// old snapshot's bytes no longer decide anything, and the renewed claim approves as any other.
#[test]
fn an_expired_claim_is_renewed_and_then_approved_without_running_the_plan_again() {
    let world = World::new(None);
    let (snapshot, trace) = suspended(&world, FORWARD, &["--approval-ttl", "0"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let expired = std::fs::read(&snapshot).unwrap();
    let calls_before = records(&trace)
        .iter()
        .filter(|r| r["type"] == "call")
        .count();
    let out = zamburak(&[
        "claim".as_ref(),
        "renew".as_ref(),
        snapshot.as_os_str(),
        "--approval-ttl".as_ref(),
        "3600".as_ref(),
    ]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("renewed claim") && said.contains("waiting for approval"),
        "{said}"
    );
    // Nothing ran: no new call, nothing sent; the trace names the renewed snapshot.
    let recs = records(&trace);
    assert_eq!(
        recs.iter().filter(|r| r["type"] == "call").count(),
        calls_before
    );
    assert_eq!(recs.last().unwrap()["type"], "suspend");
    assert!(world.messages("out/outbox").is_empty());
    // The expired bytes, put back, decide nothing.
    let renewed = std::fs::read(&snapshot).unwrap();
    std::fs::write(&snapshot, &expired).unwrap();
    assert_eq!(decide("approve", &snapshot).status.code(), Some(2));
    assert!(world.messages("out/outbox").is_empty());
    std::fs::write(&snapshot, &renewed).unwrap();
    let out = decide("approve", &snapshot);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(world.messages("out/outbox").len(), 1);
    assert_eq!(
        zamburak(&["verify".as_ref(), trace.as_os_str()])
            .status
            .code(),
        Some(0)
    );
    // Decided: renewing it again renews nothing.
    let again = zamburak(&["claim".as_ref(), "renew".as_ref(), snapshot.as_os_str()]);
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn a_tampered_snapshot_is_refused() {
    let world = World::new(None);
    let (snapshot, trace) = suspended(&world, FORWARD, &[]);
    let original = std::fs::read(&snapshot).unwrap();

    // One byte in the middle.
    let mut bytes = original.clone();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&snapshot, &bytes).unwrap();
    assert_eq!(decide("approve", &snapshot).status.code(), Some(2));
    assert!(world.messages("out/outbox").is_empty());

    // A label inside the paused state made "trusted" (the untrusted bit cleared in the space is not
    // even needed: any change of the bytes breaks the digest), with the trace's suspend record patched to
    // the new digest: the trace's chain then breaks.
    let text = String::from_utf8(original.clone()).unwrap();
    let forged = text.replacen(
        "\"integrity\":\"untrusted\"",
        "\"integrity\":\"trusted\"",
        1,
    );
    assert_ne!(forged, text, "the snapshot holds labels to forge");
    std::fs::write(&snapshot, &forged).unwrap();
    let digest = zamburak::trace::redact::sha256_bytes(forged.as_bytes());
    let trace_text = std::fs::read_to_string(&trace).unwrap();
    let old_digest = zamburak::trace::redact::sha256_bytes(&original);
    std::fs::write(&trace, trace_text.replace(&old_digest, &digest)).unwrap();
    let out = decide("approve", &snapshot);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken"));
    assert!(world.messages("out/outbox").is_empty());
}

#[test]
fn a_changed_plan_or_policy_makes_the_snapshot_unusable() {
    for change in ["plan.py", "policy.yaml"] {
        let world = World::new(None);
        let (snapshot, _) = suspended(&world, FORWARD, &[]);
        let p = world.path(change);
        let mut text = std::fs::read_to_string(&p).unwrap();
        text.push_str("\n# edited after the claim was made\n");
        std::fs::write(&p, text).unwrap();
        let out = decide("approve", &snapshot);
        assert_eq!(out.status.code(), Some(2), "{change}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("changed"),
            "{change}"
        );
        assert!(world.messages("out/outbox").is_empty(), "{change}");
    }
}

#[test]
fn garbage_snapshots_give_a_clear_error() {
    let world = World::new(None);
    for (name, bytes) in [
        ("empty.zsnap", Vec::new()),
        ("binary.zsnap", vec![0u8, 255, 7, 1]),
        ("json.zsnap", br#"{"format": 99}"#.to_vec()),
    ] {
        let p = world.path(name);
        std::fs::write(&p, bytes).unwrap();
        let out = decide("approve", &p);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("error:"),
            "{name}"
        );
    }
    assert_eq!(
        decide("approve", &world.path("missing.zsnap"))
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn confirm_ask_never_prompts_without_a_terminal() {
    let world = World::new(None);
    let plan = world.write_plan("plan.py", FORWARD);
    let out = Command::cargo_bin("zamburak")
        .unwrap()
        .arg("run")
        .arg(&plan)
        .arg("--policy")
        .arg(world.path("policy.yaml"))
        .args(["--confirm", "ask"])
        .write_stdin("y\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("[y/N]"));
    assert!(
        world.messages("out/outbox").is_empty(),
        "a `y` on a pipe approves nothing"
    );
}

/// The trace's calls, results and verifier uses, without chain fields, times and the approval records that
/// differ between an uninterrupted run and a suspended one.
fn effects(trace: &Path) -> Vec<Value> {
    records(trace)
        .into_iter()
        .filter(|r| {
            matches!(
                r["type"].as_str(),
                Some("call" | "result" | "verifier" | "end")
            )
        })
        .map(|mut r| {
            let o = r.as_object_mut().unwrap();
            for k in ["seq", "prev", "hash"] {
                o.remove(k);
            }
            // Digests are keyed per run (docs/trace.md): two runs name equal values differently.
            if let Some(args) = o.get_mut("args").and_then(Value::as_array_mut) {
                for a in args {
                    if let Some(a) = a.as_object_mut() {
                        a.remove("digest");
                    }
                }
            }
            o.remove("digest");
            // A sent message's id names the time and process that wrote it; its label is what matters.
            if o["type"] == "result" {
                o.remove("digest");
            }
            r
        })
        .collect()
}

#[test]
fn labels_after_resume_equal_labels_of_an_uninterrupted_run() {
    let plans = [
        // The approved call's result flows on; later calls see mail data.
        "mails = read_inbox(limit=5)\nfirst = mails[0]\nr = send_email(to=\"bob@example.com\", subject=\"fwd\", body=first[\"body\"])\nsend_email(to=\"me@example.com\", subject=r[\"status\"], body=str(len(mails)))\ndraft_reply(to=first[\"from\"], subject=\"re\", body=\"thanks\")\n",
        // Two claims in a loop: suspended and approved twice.
        "mails = read_inbox(limit=2)\nfor m in [mails[0], mails[1]]:\n    send_email(to=\"bob@example.com\", subject=\"fwd\", body=m[\"subject\"])\nsend_email(to=\"me@example.com\", subject=\"done\", body=\"two forwarded\")\n",
        // A verifier before and after the claim.
        "mails = read_inbox(limit=5)\nwho = verify_recipient(\"bob@example.com\")\nsend_email(to=who, subject=\"fwd\", body=mails[0][\"body\"])\nagain = verify_recipient(mails[0][\"to\"][0])\nsend_email(to=again, subject=\"fyi\", body=\"sent\")\n",
    ];
    for plan in plans {
        // Uninterrupted: a human approves on the spot.
        let direct = World::new(None);
        let plan_path = direct.write_plan("plan.py", plan);
        let policy = zamburak::policy::Policy::load(&direct.path("policy.yaml")).unwrap();
        let header = zamburak::trace::record::Header::new(plan, "sha256:x".into(), "strict");
        let trace_a = direct.path("plan.zjson");
        let mut writer = zamburak::trace::TraceWriter::create(&trace_a, header).unwrap();
        let mut backend = zamburak::runtime::run::BuiltinBackend::new(&policy);
        let mut yes = |_: &zamburak::trace::record::Call,
                       _: &zamburak::runtime::run::ClaimShown| {
            (true, "test".to_string())
        };
        let input = zamburak::runtime::run::RunInput {
            source: plan,
            policy: &policy,
            mode: zamburak::lower::Mode::Strict,
        };
        let report = zamburak::runtime::run::Run::new(&input)
            .asking(&mut yes)
            .execute(&mut backend, Some(&mut writer), &mut |_| {});
        writer.close().unwrap();
        assert_eq!(report.exit_code, 0, "{plan}: {:?}", report.decisions);
        let _ = plan_path;

        // Suspended and approved, each step in a new process.
        let world = World::new(None);
        let (snapshot, trace_b) = suspended(&world, plan, &[]);
        let mut rounds = 0;
        loop {
            let out = decide("approve", &snapshot);
            rounds += 1;
            match out.status.code() {
                Some(4) => continue,
                Some(0) => break,
                other => panic!(
                    "{plan}: approve ended with {other:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                ),
            }
        }
        assert!(rounds >= 1);
        assert_eq!(effects(&trace_b), effects(&trace_a), "{plan}");
        assert_eq!(
            world.messages("out/outbox").len(),
            direct.messages("out/outbox").len(),
            "{plan}"
        );
    }
}

/// The one draft in the world's drafts folder: its id (file name), path and `sha256:` digest.
fn the_draft(world: &World) -> (String, PathBuf, String) {
    let mut found = Vec::new();
    for sub in ["new", "cur"] {
        if let Ok(rd) = std::fs::read_dir(world.path("out/drafts").join(sub)) {
            found.extend(rd.map(|e| e.unwrap().path()));
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    let path = found.remove(0);
    let id = path.file_name().unwrap().to_string_lossy().to_string();
    // What a reviewer computes with `sha256sum` on the file.
    let digest = zamburak::trace::redact::sha256_bytes(&std::fs::read(&path).unwrap());
    (id, path, digest)
}

const DRAFT: &str = "mails = read_inbox(limit=5)\nfirst = mails[0]\nd = draft_reply(to=first[\"from\"], subject=\"re\", body=\"thanks\")\n";

#[test]
fn a_reviewed_draft_is_committed_to_the_outbox() {
    let world = World::new(None);
    let plan = world.write_plan("draft.py", DRAFT);
    assert_eq!(world.run(&plan, &[]).status.code(), Some(0));
    assert!(
        world.messages("out/outbox").is_empty(),
        "a draft is not sent"
    );
    let (id, path, digest) = the_draft(&world);

    // The user reviewed it and asks to send exactly that draft: the id and digest are in the request.
    let commit = world.write_plan(
        "commit.py",
        &format!("commit_draft(id=\"{id}\", sha256=\"{digest}\")\n"),
    );
    world.run_expect(&commit, &[], 0);
    assert_eq!(world.messages("out/outbox").len(), 1);
    assert!(!path.exists(), "the draft left the drafts folder");
}

#[test]
fn a_draft_edited_after_review_is_not_committed() {
    let world = World::new(None);
    let plan = world.write_plan("draft.py", DRAFT);
    assert_eq!(world.run(&plan, &[]).status.code(), Some(0));
    let (id, path, reviewed) = the_draft(&world);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\nP.S. also wire the money\n");
    std::fs::write(&path, &text).unwrap();

    let commit = world.write_plan(
        "commit.py",
        &format!("commit_draft(id=\"{id}\", sha256=\"{reviewed}\")\n"),
    );
    world.run_expect(&commit, &[], 1);
    assert!(world.messages("out/outbox").is_empty());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "the draft is left as it is"
    );
}

#[test]
fn an_approved_commit_of_a_draft_edited_meanwhile_is_refused() {
    // The plan drafts and then commits what it drafted: data chose the id, so the commit waits for a
    // human. The draft is edited while it waits; the approval covers the reviewed digest only.
    let world = World::new(None);
    let plan = format!("{DRAFT}commit_draft(id=d[\"id\"], sha256=d[\"sha256\"])\n");
    let (snapshot, _) = suspended(&world, &plan, &[]);
    let (_, path, _) = the_draft(&world);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\nedited\n");
    std::fs::write(&path, &text).unwrap();
    let out = decide("approve", &snapshot);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(world.messages("out/outbox").is_empty());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    // Unedited, the same flow delivers the draft.
    let world = World::new(None);
    let (snapshot, _) = suspended(&world, &plan, &[]);
    let out = decide("approve", &snapshot);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(world.messages("out/outbox").len(), 1);
}

#[test]
fn draft_ids_cannot_reach_outside_the_drafts_folder() {
    let world = World::new(None);
    for id in ["../inbox/cur/x", "..", ".hidden", "a/b", ""] {
        let commit = world.write_plan(
            "commit.py",
            &format!("commit_draft(id=\"{id}\", sha256=\"sha256:00\")\n"),
        );
        let out = world.run(&commit, &[]);
        assert_eq!(out.status.code(), Some(1), "{id}");
        assert!(world.messages("out/outbox").is_empty(), "{id}");
    }
}

#[test]
fn a_decision_in_progress_blocks_a_second_one() {
    // Two `approve` processes racing on one snapshot would both find the trace waiting, and a re-run
    // during a decision would replace the trace the approved effect is recorded in: `run`, `approve` and
    // `reject` of one plan hold the lock beside its trace for their whole length. Hold it here, as a
    // concurrent approve would.
    let world = World::new(None);
    let (snapshot, trace) = suspended(&world, FORWARD, &[]);
    let held = std::fs::File::open(trace.with_extension("zlock")).unwrap();
    held.lock().unwrap();
    let before = std::fs::read(&trace).unwrap();
    let out = decide("approve", &snapshot);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("in progress"));
    let rerun = world.run(&world.path("plan.py"), &[]);
    assert_eq!(rerun.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&rerun.stderr).contains("in progress"));
    assert!(world.messages("out/outbox").is_empty());
    assert_eq!(
        std::fs::read(&trace).unwrap(),
        before,
        "the trace is untouched"
    );
    held.unlock().unwrap();
    assert_eq!(decide("approve", &snapshot).status.code(), Some(0));
    assert_eq!(world.messages("out/outbox").len(), 1);
}

/// The bundled forward example: what the approver sees names the forwarded subject, marks it as written by
/// the mail's sender, and names every reader, the attacker included.
#[test]
fn the_claim_shows_the_values_and_names_their_readers() {
    let world = World::new(None);
    let plan =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/forward.py"))
            .unwrap();
    let plan = world.write_plan("plan.py", &plan);
    let out = world.run(&plan, &[]);
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The claim's code, and the commands that name it.
    let code = common::cli::snapshot_claim_code(&world.path("plan.zsnap"));
    assert!(stderr.contains(&format!("claim {code}\n")), "{stderr}");
    assert!(stderr.contains(&format!("--claim {code}")), "{stderr}");
    assert!(stderr.contains("quarterly numbers"), "{stderr}");
    assert!(
        stderr.contains("UNTRUSTED: written by whoever wrote read_inbox#1"),
        "{stderr}"
    );
    assert!(
        stderr.contains("readers: you, attacker@evil.test"),
        "{stderr}"
    );
    assert!(
        stderr.contains("not allowed to read `subject`: bob@example.com"),
        "{stderr}"
    );
    // The user is not counted as someone besides the user.
    assert!(
        stderr.contains("readers: 1 person besides the user"),
        "{stderr}"
    );
    assert!(world.messages("out/outbox").is_empty());

    // The JSON report carries the same claim, the values and the snapshot's path (a new run, once the
    // pending claim is rejected).
    assert_eq!(
        decide("reject", &world.path("plan.zsnap")).status.code(),
        Some(0)
    );
    let out = world.run(&plan, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(4));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let approval = &report["approval"];
    assert!(
        approval["snapshot"]
            .as_str()
            .unwrap()
            .ends_with("plan.zsnap")
    );
    assert!(approval["claim"].to_string().contains("attacker@evil.test"));
    assert!(
        approval["values"]["subject"]
            .as_str()
            .unwrap()
            .contains("quarterly numbers")
    );
    assert_eq!(approval["non_readers"]["body"][0], "bob@example.com");
}

/// An intact suspended trace verifies with its own exit code (4) and says where it waits; a tampered one
/// keeps the tamper code (1).
#[test]
fn verify_tells_a_suspended_trace_from_a_tampered_one() {
    let world = World::new(None);
    let (snapshot, trace) = suspended(&world, FORWARD, &[]);
    let out = zamburak(&["verify".as_ref(), trace.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{stdout}");
    assert!(stdout.contains("suspended at call #2"), "{stdout}");
    assert!(
        stdout.contains(&*snapshot.file_name().unwrap().to_string_lossy()),
        "{stdout}"
    );

    let text = std::fs::read_to_string(&trace).unwrap();
    let forged = text.replacen("\"confirm\"", "\"allow\"", 1);
    assert_ne!(forged, text, "the fixture has a decision to forge");
    std::fs::write(&trace, forged).unwrap();
    let out = zamburak(&["verify".as_ref(), trace.as_os_str()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The library's refusals are typed: a program (the Python package, the MCP server) tells them apart by
/// variant, and each one leaves the claim pending and the outbox empty.
#[test]
fn refusals_to_decide_are_snapshot_error_variants() {
    use zamburak::runtime::run::Engine;
    use zamburak::runtime::snapshot::{self, SnapshotError, Verdict};
    let world = World::new(None);
    let (snap, _trace) = suspended(&world, FORWARD, &[]);
    let engine = Engine::InProcess;
    let code = common::cli::snapshot_claim_code(&snap);
    // `Opened` holds a live machine and has no `Debug`: the refusal alone is kept.
    let open = |approve, code: Option<&str>| {
        snapshot::open(
            &snap,
            Verdict {
                approve,
                code,
                remember: &[],
            },
            &engine,
        )
        .err()
    };

    let e = open(true, None).expect("an approval names its claim");
    assert!(
        matches!(&e, SnapshotError::CodeNeeded { path } if *path == snap),
        "{e}"
    );
    let e = open(true, Some("0000-0000-0000")).expect("another claim's code");
    assert!(
        matches!(&e, SnapshotError::OtherClaim { given, .. } if given == "0000-0000-0000"),
        "{e}"
    );
    let plan = world.path("plan.py");
    let text = std::fs::read_to_string(&plan).unwrap();
    std::fs::write(&plan, format!("{text}# edited\n")).unwrap();
    let e = open(true, Some(&code)).expect("the plan changed");
    assert!(matches!(&e, SnapshotError::PlanChanged { .. }), "{e}");
    std::fs::write(&plan, &text).unwrap();
    assert!(world.messages("out/outbox").is_empty(), "nothing was sent");
    assert!(
        snapshot::pending_file(snap.clone()).is_some(),
        "the claim still waits"
    );

    assert_eq!(decide("reject", &snap).status.code(), Some(0));
    let e = snapshot::peek(&snap).expect_err("a decided snapshot is gone");
    assert!(
        matches!(&e, SnapshotError::Decided { decided, .. } if decided.contains("rejected by tester")),
        "{e}"
    );
    let e = snapshot::peek(&world.path("none.zsnap")).expect_err("no such file");
    assert!(matches!(e, SnapshotError::Missing { .. }), "{e}");
    std::fs::write(world.path("old.zsnap"), r#"{"format": 3}"#).unwrap();
    let e = snapshot::peek(&world.path("old.zsnap")).expect_err("an older format");
    assert!(
        matches!(e, SnapshotError::Format { found: 3, reads, .. } if reads == snapshot::FORMAT),
        "{e}"
    );
    assert!(world.messages("out/outbox").is_empty(), "nothing was sent");
}

/// `run --format json` names the claim (its code and the text a person reads) and carries the planner's
/// answer, which withholds the mail; `approve --format json` prints the continued run's document on stdout
/// (the plan's prints on stderr), and `reject --format json` the closed run's. A wrong code decides nothing
/// and says why as JSON too.
#[test]
fn approve_and_reject_report_the_continued_run_as_json() {
    for verb in ["approve", "reject"] {
        let world = World::new(None);
        let plan = world.write_plan("plan.py", FORWARD);
        let out = world.run(&plan, &["--format", "json"]);
        assert_eq!(out.status.code(), Some(4));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let snapshot = world.path("plan.zsnap");
        let code = common::cli::snapshot_claim_code(&snapshot);
        assert_eq!(doc["approval"]["code"], code.as_str());
        let text = doc["approval"]["text"].as_str().unwrap();
        assert!(
            text.contains("UNTRUSTED") && text.contains("bob@example.com"),
            "{text}"
        );
        // The read of the inbox cuts the planner's answer: the claim is the person's, named only above.
        assert_eq!(doc["planner"]["status"], "for_the_person");
        assert!(doc["planner"]["waiting"].is_null());
        assert!(!doc["planner"].to_string().contains(code.as_str()));
        let body = doc["approval"]["values"]["body"].as_str().unwrap();
        assert!(
            !doc["planner"].to_string().contains(body),
            "the planner is not told the mail"
        );

        let wrong = zamburak(&[
            verb.as_ref(),
            snapshot.as_os_str(),
            "--claim".as_ref(),
            "0000-0000-0000".as_ref(),
            "--by".as_ref(),
            "tester".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
        ]);
        assert_eq!(wrong.status.code(), Some(2));
        let refused: Value = serde_json::from_slice(&wrong.stdout).unwrap();
        assert!(
            refused["error"].as_str().unwrap().contains("claim"),
            "{refused}"
        );
        assert!(world.messages("out/outbox").is_empty());

        let out = zamburak(&[
            verb.as_ref(),
            snapshot.as_os_str(),
            "--claim".as_ref(),
            code.as_ref(),
            "--by".as_ref(),
            "tester".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
        ]);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let decisions: Vec<(&str, &Value)> = doc["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["tool"].as_str().unwrap(), &d["approval"]))
            .collect();
        if verb == "approve" {
            assert_eq!(out.status.code(), Some(0));
            assert_eq!(doc["status"], "completed");
            assert!(String::from_utf8_lossy(&out.stderr).contains("forwarded"));
            // "forwarded" follows the read: the person's (stderr), not the planner's.
            assert_eq!(doc["planner"]["output"], serde_json::json!([]));
            assert_eq!(doc["planner"]["status"], "for_the_person");
            assert_eq!(decisions[1], ("send_email", &Value::from("approved")));
            assert_eq!(world.messages("out/outbox").len(), 1);
        } else {
            assert_eq!(out.status.code(), Some(0));
            assert_eq!(doc["status"], "denied");
            assert_eq!(decisions[1], ("send_email", &Value::from("rejected")));
            assert!(world.messages("out/outbox").is_empty());
        }
        assert!(doc["approval"].is_null());
        assert_eq!(doc["trace"], world.path("plan.zjson").display().to_string());
    }
}
