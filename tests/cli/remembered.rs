//! Remembered values (issue #52; docs/semantics.md, "Remembered values"; docs/approvals.md): a value the
//! person approved with `--remember` is `known` to the next run and satisfies `known(ROLE)`; nothing but the
//! person's own approval remembers a value; a store edited outside Zamburak is refused; a look-alike is
//! flagged. Each security test asserts the decision and that the effect did not happen (outbox, store).

use crate::common;

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use common::world::{KNOWN_ENV, World, calls};

/// The plan: mail whoever `contact.txt` names. The address is untrusted (a file's content may come from
/// anyone), so `to` meets neither `trusted` nor `verified(Recipient)`: only `known(correspondent)`.
const PLAN: &str = "to = read_file(path=\"contact.txt\").strip()\nsend_email(to=to, subject=\"rent\", body=\"Paid.\")\n";

/// `policy` (the default's, which accepts an address the person remembered for `send_email` and
/// `draft_reply`), checked to still say so.
fn with_known(policy: &str) -> String {
    assert_eq!(
        policy.matches("known(correspondent)").count(),
        2,
        "the default policy changed"
    );
    policy.to_string()
}

/// The world's default policy with files that anyone may read, so the only thing in the way of the send is
/// who chose the address.
fn world(contact: &str) -> World {
    let w = World::new(None);
    let policy = std::fs::read_to_string(w.path("policy.yaml")).unwrap();
    let public_files = policy.replacen(
        "      tags: [PRIVATE]\n      readers: user\n      tags_when:",
        "      readers: public\n      tags_when:",
        1,
    );
    assert_ne!(
        policy, public_files,
        "the default policy's read_file changed"
    );
    std::fs::write(w.path("policy.yaml"), with_known(&public_files)).unwrap();
    std::fs::write(w.path("files/contact.txt"), contact).unwrap();
    w
}

fn zamburak(w: &World, args: &[&str]) -> Output {
    Command::cargo_bin("zamburak")
        .unwrap()
        .env(KNOWN_ENV, w.known())
        .current_dir(w.path(""))
        .args(args)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs the plan afresh: its exit code, the send's decision and what was printed.
fn run(w: &World) -> (Option<i32>, serde_json::Value, String) {
    for ext in ["zjson", "zsnap", "zvalues"] {
        let _ = std::fs::remove_file(w.path(&format!("plan.{ext}")));
    }
    let plan = w.write_plan("plan.py", PLAN);
    let out = w.run(&plan, &[]);
    let trace = w.path("plan.zjson");
    let sends = if trace.exists() {
        calls(&trace, Some("send_email"))
    } else {
        Vec::new()
    };
    let send = sends.last().cloned().unwrap_or_default();
    (out.status.code(), send, text(&out))
}

fn claim_code(printed: &str) -> String {
    printed
        .lines()
        .find_map(|l| l.strip_prefix("claim "))
        .unwrap_or_else(|| panic!("no claim in: {printed}"))
        .trim()
        .to_string()
}

/// `approve plan.zsnap --claim CODE --remember ARG --by BY`, with the code of the claim `printed` shows.
fn approve_remembering(w: &World, printed: &str, arg: &str, by: &str) -> Output {
    let snap = w.path("plan.zsnap");
    zamburak(
        w,
        &[
            "approve",
            snap.to_str().unwrap(),
            "--claim",
            &claim_code(printed),
            "--remember",
            arg,
            "--by",
            by,
        ],
    )
}

fn store_bytes(w: &World) -> Option<Vec<u8>> {
    std::fs::read(w.known()).ok()
}

#[test]
fn an_address_approved_and_remembered_is_known_to_the_next_run() {
    let w = world("landlord@rent.example\n");
    let (code, send, printed) = run(&w);
    assert_eq!(code, Some(4), "{printed}");
    assert_eq!(send["decision"], "confirm");
    assert!(printed.contains("NEW — never approved"), "{printed}");
    assert!(w.messages("out/outbox").is_empty());
    let out = approve_remembering(&w, &printed, "to", "alice");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("remembered: `to` = \"landlord@rent.example\" as correspondent"),
        "{}",
        text(&out)
    );
    assert_eq!(w.messages("out/outbox").len(), 1);

    // The next run: the same address is known, so the send goes unattended.
    let (code, send, printed) = run(&w);
    assert_eq!(code, Some(0), "{printed}");
    assert_eq!(send["decision"], "allow", "{send}");
    assert_eq!(w.messages("out/outbox").len(), 2);
    // The trace says the decision read the store (the status word, never the value), and its header
    // names the store's digest.
    assert_eq!(send["remembered"][0]["status"], "known", "{send}");
    let header = &common::world::records(&w.path("plan.zjson"))[0];
    assert!(
        header["known_sha256"]
            .as_str()
            .unwrap()
            .starts_with("sha256:"),
        "{header}"
    );
    let trace = std::fs::read_to_string(w.path("plan.zjson")).unwrap();
    assert!(
        !trace.contains("landlord@rent.example"),
        "the trace names the value"
    );

    // `known` lists it; `known forget` removes it, and the address waits again.
    let listed = text(&zamburak(&w, &["known"]));
    assert!(
        listed.contains("\"landlord@rent.example\"  send_email.to as correspondent  by alice"),
        "{listed}"
    );
    let out = zamburak(&w, &["known", "forget", "landlord@rent.example"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (code, send, _) = run(&w);
    assert_eq!(
        (code, send["decision"].as_str()),
        (Some(4), Some("confirm"))
    );
    assert_eq!(w.messages("out/outbox").len(), 2);
}

#[test]
fn no_path_but_the_persons_own_approval_remembers_a_value() {
    let w = world("attacker@evil.test\n");
    // A rejection, and an approval without `--remember`, remember nothing.
    let (code, _, printed) = run(&w);
    assert_eq!(code, Some(4), "{printed}");
    let snap = w.path("plan.zsnap");
    let snap = snap.to_str().unwrap();
    let out = zamburak(&w, &["reject", snap, "--by", "alice"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(store_bytes(&w), None);
    let (_, _, printed) = run(&w);
    let code = claim_code(&printed);
    // `--remember` with no argument is refused off a terminal (nothing approved, nothing sent, nothing kept).
    let out = zamburak(
        &w,
        &["approve", snap, "--claim", &code, "--remember", "--by", "a"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--remember ARG (this claim's: to)"),
        "{}",
        text(&out)
    );
    // An argument with no `known` role is refused the same way.
    let out = zamburak(
        &w,
        &[
            "approve",
            snap,
            "--claim",
            &code,
            "--remember",
            "body",
            "--by",
            "a",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(w.messages("out/outbox").is_empty());
    assert_eq!(store_bytes(&w), None);
    let out = zamburak(&w, &["approve", snap, "--claim", &code, "--by", "alice"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(w.messages("out/outbox").len(), 1);
    assert_eq!(store_bytes(&w), None, "an approval remembered a value");
    // So the next run waits again.
    let (code, send, _) = run(&w);
    assert_eq!(
        (code, send["decision"].as_str()),
        (Some(4), Some("confirm"))
    );

    // A plan cannot write the store: one kept where the tools write is refused before anything runs.
    let inside = w.path("files/known.json");
    let plan = w.write_plan("plan2.py", PLAN);
    let out = Command::cargo_bin("zamburak")
        .unwrap()
        .env(KNOWN_ENV, &inside)
        .args(["run", plan.to_str().unwrap(), "--policy"])
        .arg(w.path("policy.yaml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("where this policy's tools write"),
        "{}",
        text(&out)
    );
    assert!(!w.path("plan2.zjson").exists(), "the run started");
    assert_eq!(w.messages("out/outbox").len(), 1);
}

#[test]
fn a_store_edited_outside_zamburak_is_refused_not_trusted() {
    let w = world("landlord@rent.example\n");
    let (_, _, printed) = run(&w);
    let out = approve_remembering(&w, &printed, "to", "alice");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let sent = w.messages("out/outbox").len();
    // Someone rewrites the remembered address to theirs, and the contact file too.
    let edited = std::fs::read_to_string(w.known())
        .unwrap()
        .replace("landlord@rent.example", "attacker@evil.test");
    std::fs::write(w.known(), edited).unwrap();
    std::fs::write(w.path("files/contact.txt"), "attacker@evil.test\n").unwrap();
    let (code, _, printed) = run(&w);
    assert_eq!(code, Some(2), "{printed}");
    assert!(printed.contains("changed outside Zamburak"), "{printed}");
    assert!(!w.path("plan.zjson").exists(), "the run started");
    assert_eq!(w.messages("out/outbox").len(), sent, "sent to the attacker");
    let listed = zamburak(&w, &["known"]);
    assert_eq!(listed.status.code(), Some(2), "{}", text(&listed));
    // The way out: forget everything, and the address is new again.
    let out = zamburak(&w, &["known", "forget", "--all"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (code, send, _) = run(&w);
    assert_eq!(
        (code, send["decision"].as_str()),
        (Some(4), Some("confirm"))
    );
}

/// Remembers `known` for `to`, then runs with `contact` in the file: the claim's words.
fn after_remembering(known: &str, contact: &str) -> String {
    let w = world(&format!("{known}\n"));
    let (_, _, printed) = run(&w);
    let out = approve_remembering(&w, &printed, "to", "alice");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::write(w.path("files/contact.txt"), format!("{contact}\n")).unwrap();
    let (code, send, printed) = run(&w);
    assert_eq!(code, Some(4), "{printed}");
    assert_eq!(
        send["decision"], "confirm",
        "a look-alike was accepted: {send}"
    );
    assert_eq!(w.messages("out/outbox").len(), 1, "the look-alike was sent");
    printed
}

#[test]
fn a_look_alike_of_a_remembered_value_is_flagged_and_never_accepted() {
    // A Cyrillic `а` in the domain.
    let printed = after_remembering("landlord@rent.example", "landlord@rent.ex\u{0430}mple");
    assert!(printed.contains("LOOKS LIKE a known value"), "{printed}");
    assert!(printed.contains("\"landlord@rent.example\""), "{printed}");
    // The same local part at another domain.
    let printed = after_remembering("landlord@rent.example", "landlord@rent-example.test");
    assert!(printed.contains("LOOKS LIKE a known value"), "{printed}");
}

#[test]
fn a_policy_that_misnames_a_role_is_refused() {
    let w = World::new(None);
    let policy = with_known(&std::fs::read_to_string(w.path("policy.yaml")).unwrap());
    for (bad, says) in [
        (
            policy.replace(
                "correspondent: [send_email.to, draft_reply.to]",
                "correspondent: [send_email.to, send_email.nope]",
            ),
            "which is no argument of a tool",
        ),
        (
            policy.replace(
                "correspondent: [send_email.to, draft_reply.to]",
                "correspondent: [send_email.to]",
            ),
            "which role `correspondent` does not list",
        ),
        (
            policy.replace("expiry_days: 90", "expiry_days: 0"),
            "`expiry_days` is 0",
        ),
    ] {
        assert_ne!(bad, policy);
        let path = w.path("bad.yaml");
        std::fs::write(&path, bad).unwrap();
        let out = zamburak(&w, &["policy", "check", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(says), "{}", text(&out));
    }
}

/// Lint never reads the store: a plan that only a remembered value lets through is not "never passes".
#[test]
fn lint_predicts_may_be_known_without_reading_the_store() {
    let w = world("landlord@rent.example\n");
    let policy = std::fs::read_to_string(w.path("policy.yaml")).unwrap();
    // Only a remembered address may be mailed, with no approval to fall back on.
    let strict = policy.replacen(
        "    control: { require: trusted }   # untrusted data may not decide WHETHER a message is sent\n    on_violation: confirm",
        "    control: { require: trusted }\n    on_violation: deny",
        1,
    );
    assert_ne!(strict, policy);
    let plan = w.write_plan("plan.py", PLAN);
    let lint = |policy: &str| {
        std::fs::write(w.path("policy.yaml"), policy).unwrap();
        text(&zamburak(
            &w,
            &[
                "lint",
                plan.to_str().unwrap(),
                "--policy",
                w.path("policy.yaml").to_str().unwrap(),
            ],
        ))
    };
    let said = lint(&strict);
    assert!(!said.contains("Z201"), "{said}");
    // Without the `known` alternative the same plan can never pass, and lint says so.
    let unknown = strict.replacen(", \"known(correspondent)\"]", "]", 1);
    assert_ne!(unknown, strict);
    let said = lint(&unknown.replace(
        "correspondent: [send_email.to, draft_reply.to]",
        "correspondent: [draft_reply.to]",
    ));
    assert!(said.contains("Z201"), "{said}");
    assert!(Path::new(&w.path("policy.yaml")).exists());
}

/// Non-interference: two worlds that differ only in what the person remembered tell the planner the same
/// (`run --format json`'s `planner` field is the answer a planner model gets), whether the send then runs
/// unattended or waits; only whether the run is still going differs (the termination channel).
#[test]
fn the_planner_is_told_the_same_whatever_the_person_remembered() {
    let planner_of = |w: &World| {
        for ext in ["zjson", "zsnap", "zvalues"] {
            let _ = std::fs::remove_file(w.path(&format!("plan.{ext}")));
        }
        let plan = w.write_plan("plan.py", PLAN);
        let out = w.run(&plan, &["--format", "json"]);
        let doc: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
        (out.status.code(), doc["planner"].clone())
    };
    // A planner that may read untrusted values reads the file's (public) text: without the store, the cut
    // would come later than the send.
    let reading = |w: &World| {
        let policy = std::fs::read_to_string(w.path("policy.yaml")).unwrap();
        let policy = format!("{policy}\nplanner: {{ reads_untrusted: true }}\n");
        std::fs::write(w.path("policy.yaml"), policy).unwrap();
    };
    let remembering = world("landlord@rent.example\n");
    reading(&remembering);
    let (_, _, printed) = run(&remembering);
    let out = approve_remembering(&remembering, &printed, "to", "a");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let forgetting = world("landlord@rent.example\n");
    reading(&forgetting);
    let (code_known, mut known) = planner_of(&remembering);
    let (code_new, mut new) = planner_of(&forgetting);
    // The worlds really differ: one sends unattended, the other waits.
    assert_eq!((code_known, code_new), (Some(0), Some(4)));
    assert_eq!(remembering.messages("out/outbox").len(), 2);
    assert!(forgetting.messages("out/outbox").is_empty());
    for p in [&mut known, &mut new] {
        assert_eq!(p["status"], "for_the_person", "{p}");
        p.as_object_mut().unwrap().remove("ended");
        p.as_object_mut().unwrap().remove("trace");
        p.as_object_mut().unwrap().remove("run");
        p.as_object_mut().unwrap().remove("person");
    }
    assert_eq!(known, new);
    // The read is told (the planner may read it); the send, whose outcome is the store's, is not.
    assert_eq!(known["decisions"].as_array().unwrap().len(), 1, "{known}");
    assert!(!known.to_string().contains("send_email"), "{known}");
}

/// A value data chose that the policy gives no `known` role (here the file a plan would overwrite) is new to
/// the person, and stays new: the claim says so, and nothing can remember it (the attack the careful
/// person of docs/benchmark.md must refuse: an attacker's file id is no address).
#[test]
fn a_value_data_chose_with_no_role_is_new_and_cannot_be_remembered() {
    let w = world("notes.md\n");
    let plan = w.write_plan(
        "plan.py",
        "p = read_file(path=\"contact.txt\").strip()\nwrite_file(path=p, content=\"overwritten\")\n",
    );
    let out = w.run(&plan, &[]);
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(4), "{printed}");
    let claim = printed.split("waiting for approval").nth(1).unwrap_or("");
    let after_path = claim.split("  path = ").nth(1).unwrap_or("");
    assert!(
        after_path
            .lines()
            .nth(1)
            .unwrap_or("")
            .contains("NEW — never approved"),
        "{printed}"
    );
    let before = std::fs::read(w.path("files/notes.md")).unwrap();
    let out = approve_remembering(&w, &printed, "path", "a");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("a `known` role"), "{}", text(&out));
    assert_eq!(
        std::fs::read(w.path("files/notes.md")).unwrap(),
        before,
        "the file was written"
    );
    assert_eq!(store_bytes(&w), None);
}
