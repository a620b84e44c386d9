//! The holes of issue #50, each reached as `allow` (or as an approvable `confirm` where the contract says
//! `deny`) on `1bbed34` with the default policy, now refused: docs/semantics.md, "Stores keep labels",
//! "Recipients are a role", "A `forbid_tags` never replaces the readers check" and "A party may read its own
//! address, as recorded". Each asserts the decision on the real binary and that the effect did not happen.
//! The last test is a non-interference property over these worlds: two worlds that differ only in the
//! user's private notes look the same to everyone but the user.

use crate::common;

use common::world::{World, calls};

/// The secret in `examples/files/secrets/api_key.txt`.
const SECRET: &str = "sk-test-0000-FAKE-KEY";

fn trace_arg(world: &World) -> (std::path::PathBuf, Vec<String>) {
    let trace = world.path("plan.zjson");
    let args = vec!["--trace".to_string(), trace.to_str().unwrap().to_string()];
    (trace, args)
}

fn run(world: &World, plan: &str) -> (Option<i32>, Vec<serde_json::Value>, String) {
    let path = world.write_plan("plan.py", plan);
    let (trace, args) = trace_arg(world);
    let _ = std::fs::remove_file(&trace);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = world.run(&path, &args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let calls = if trace.exists() {
        calls(&trace, None)
    } else {
        Vec::new()
    };
    (out.status.code(), calls, stderr)
}

fn decision_of<'a>(calls: &'a [serde_json::Value], tool: &str) -> &'a serde_json::Value {
    calls
        .iter()
        .rev()
        .find(|c| c["tool"] == tool)
        .unwrap_or_else(|| panic!("no call of {tool}: {calls:?}"))
}

#[test]
fn a_secret_written_to_a_file_and_read_back_is_still_a_secret() {
    for to in ["me@example.com", "bob@example.com"] {
        let world = World::new(None);
        let (code, calls, stderr) = run(
            &world,
            &format!(
                "k = read_file(path=\"secrets/api_key.txt\")\nwrite_file(path=\"notes2.txt\", content=k)\nk2 = read_file(path=\"notes2.txt\")\nsend_email(to=\"{to}\", subject=\"notes\", body=k2)\n"
            ),
        );
        // Un-overridable: denied (exit 3), nothing to approve, nothing sent.
        assert_eq!(code, Some(3), "to {to}: {stderr}");
        let send = decision_of(&calls, "send_email");
        assert_eq!(send["decision"], "deny", "to {to}: {send}");
        assert!(
            send["rule"].as_str().unwrap().ends_with("forbid_tags"),
            "to {to}: {send}"
        );
        assert!(world.messages("out/outbox").is_empty(), "to {to}: sent");
        // The store itself is the user's: the write happened.
        assert_eq!(
            std::fs::read_to_string(world.path("files/notes2.txt"))
                .unwrap()
                .trim(),
            SECRET
        );
    }
}

#[test]
fn a_stored_label_outlives_the_run_that_wrote_it_and_not_an_outside_edit() {
    let world = World::new(None);
    let (code, _, stderr) = run(
        &world,
        "k = read_file(path=\"secrets/api_key.txt\")\nwrite_file(path=\"kept.txt\", content=k)\n",
    );
    assert_eq!(code, Some(0), "{stderr}");
    // A later run reads what the first wrote: the secret's label comes back with it.
    let send = "k2 = read_file(path=\"kept.txt\")\nsend_email(to=\"me@example.com\", subject=\"kept\", body=k2)\n";
    let (code, calls, stderr) = run(&world, send);
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(decision_of(&calls, "send_email")["decision"], "deny");
    assert!(world.messages("out/outbox").is_empty());
    // The person edits the file outside Zamburak: it now holds what they wrote, labelled by the policy
    // alone (private, the user's), and mailing it to themselves is allowed.
    std::fs::write(world.path("files/kept.txt"), "rewritten by hand").unwrap();
    let (code, calls, stderr) = run(&world, send);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(decision_of(&calls, "send_email")["decision"], "allow");
    assert_eq!(world.messages("out/outbox").len(), 1);
}

#[test]
fn a_label_store_the_plan_could_write_or_read_is_out_of_its_reach() {
    let world = World::new(None);
    let (code, _, stderr) = run(
        &world,
        "k = read_file(path=\"secrets/api_key.txt\")\nwrite_file(path=\"kept.txt\", content=k)\n",
    );
    assert_eq!(code, Some(0), "{stderr}");
    let names: Vec<String> = std::fs::read_dir(world.path("files"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    let before = common::world::file_tree(&world.path("files"));
    for plan in names
        .iter()
        .filter(|n| n.starts_with('.'))
        .map(|n| format!("write_file(path=\"{n}\", content=\"{{}}\")\n"))
        .chain(std::iter::once(
            "print(list_files(path=\".\"))\n".to_string(),
        ))
    {
        let (code, _, stderr) = run(&world, &plan);
        if plan.starts_with("print") {
            assert_eq!(code, Some(0), "{stderr}");
        } else {
            assert_ne!(code, Some(0), "{plan}: {stderr}");
        }
    }
    assert_eq!(common::world::file_tree(&world.path("files")), before);
    let path = world.write_plan("list.py", "print(list_files(path=\".\"))\n");
    let out = world.run(&path, &[]);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(!listed.contains(".zamburak"), "{listed}");
}

#[test]
fn a_forbid_tags_does_not_remove_the_readers_check() {
    let world = World::new(None);
    // As a policy owner might write it: the body forbids secrets and says nothing about readers.
    let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    let body = "      body:\n        forbid_tags: { tags: [AUTH_SECRET], on_violation: deny }   # no secrets in the body; no approval can override\n        readers_must_include: to    # private data only goes to its readers\n";
    assert!(policy.contains(body));
    let policy = policy.replacen(
        body,
        "      body:\n        forbid_tags: { tags: [AUTH_SECRET], on_violation: deny }\n",
        1,
    );
    std::fs::write(world.path("policy.yaml"), policy).unwrap();
    let (code, calls, stderr) = run(
        &world,
        "n = read_file(path=\"notes.md\")\nsend_email(to=\"bob@example.com\", subject=\"notes\", body=n)\n",
    );
    assert_eq!(code, Some(4), "{stderr}");
    let send = decision_of(&calls, "send_email");
    assert_eq!(send["decision"], "confirm", "{send}");
    assert_eq!(send["rule"], "args.body.readers_must_include", "{send}");
    assert!(world.messages("out/outbox").is_empty());
}

#[test]
fn an_address_computed_from_private_data_is_not_verified_into_a_recipient() {
    let world = World::new(None);
    let (code, calls, stderr) = run(
        &world,
        "n = read_file(path=\"notes.md\")\nto = verify_recipient(\"leak+\" + str(len(n)) + \"@example.com\")\nsend_email(to=to, subject=\"hi\", body=\"hello\")\n",
    );
    assert_eq!(code, Some(4), "{stderr}");
    let send = decision_of(&calls, "send_email");
    assert_eq!(send["decision"], "confirm", "{send}");
    assert_eq!(send["rule"], "args.to.readers_must_include", "{send}");
    assert!(world.messages("out/outbox").is_empty());
    // A plan's own literal, verified or not, still goes.
    let (code, _, stderr) = run(
        &world,
        "to = verify_recipient(\"leak+7@example.com\")\nsend_email(to=to, subject=\"hi\", body=\"hello\")\n",
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(world.messages("out/outbox").len(), 1);
}

#[test]
fn an_address_that_is_not_one_bare_address_is_refused() {
    for to in ["Bob <bob@example.com>", "me@example.com, bob@example.com"] {
        let world = World::new(None);
        let (code, calls, stderr) = run(
            &world,
            &format!("send_email(to=\"{to}\", subject=\"hi\", body=\"hello\")\n"),
        );
        assert_eq!(code, Some(3), "{to}: {stderr}");
        assert_eq!(
            decision_of(&calls, "send_email")["rule"],
            "fixed.malformed_recipients"
        );
        assert!(world.messages("out/outbox").is_empty(), "{to}");
    }
}

/// What everyone but the user sees of a run in `world`: every delivered message that names someone other
/// than the user, whole.
fn seen_by_others(world: &World) -> Vec<String> {
    let mut out: Vec<String> = world
        .messages("out/outbox")
        .into_iter()
        .filter(|m| {
            m.lines()
                .filter(|l| l.to_ascii_lowercase().starts_with("to:"))
                .any(|l| !l.eq_ignore_ascii_case("to: me@example.com"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn worlds_that_differ_in_private_notes_look_the_same_to_everyone_else() {
    let plans = [
        // A computed address.
        "n = read_file(path=\"notes.md\")\nto = verify_recipient(\"leak+\" + str(len(n)) + \"@example.com\")\nsend_email(to=to, subject=\"hi\", body=\"hello\")\n",
        // A store round trip, then a mail to someone else.
        "n = read_file(path=\"notes.md\")\nwrite_file(path=\"copy.txt\", content=n)\nc = read_file(path=\"copy.txt\")\nsend_email(to=\"bob@example.com\", subject=\"copy\", body=c)\n",
        // The round trip chooses the address.
        "n = read_file(path=\"notes.md\")\nwrite_file(path=\"who.txt\", content=\"x\" + str(len(n)))\nw = read_file(path=\"who.txt\")\nsend_email(to=verify_recipient(w + \"@example.com\"), subject=\"s\", body=\"b\")\n",
    ];
    for plan in plans {
        let mut seen = Vec::new();
        for notes in [
            "short",
            "a much longer private note about the salary review",
        ] {
            let world = World::new(None);
            std::fs::write(world.path("files/notes.md"), notes).unwrap();
            let (code, calls, stderr) = run(&world, plan);
            let decisions: Vec<String> = calls
                .iter()
                .map(|c| format!("{} {}", c["tool"], c["decision"]))
                .collect();
            seen.push((code, decisions, seen_by_others(&world), stderr));
        }
        let strip =
            |s: &(Option<i32>, Vec<String>, Vec<String>, String)| (s.0, s.1.clone(), s.2.clone());
        assert_eq!(
            strip(&seen[0]),
            strip(&seen[1]),
            "{plan}\n{}\n{}",
            seen[0].3,
            seen[1].3
        );
        assert!(seen[0].2.is_empty(), "{plan}: {:?}", seen[0].2);
    }
}

/// A draft says why it is one, where a person who sends it from their mail client sees it: the tool, the
/// line and the rule, and nothing of what the run read (docs/approvals.md, "Drafts and commits").
#[test]
fn a_draft_carries_its_provenance_and_no_value() {
    let world = World::new(None);
    let (code, calls, stderr) = run(
        &world,
        "m = read_inbox(limit=1)\ndraft_reply(to=m[0][\"from\"], subject=\"Re: hi\", body=\"Thanks.\")\n",
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(decision_of(&calls, "draft_reply")["decision"], "draft");
    let drafts = world.messages("out/drafts");
    assert_eq!(drafts.len(), 1, "{drafts:?}");
    assert!(world.messages("out/outbox").is_empty(), "a draft was sent");
    // The header as a mail client reads it: folded lines joined (RFC 5322, 2.2.3; the builder folds
    // with a tab before the space it breaks at).
    let head = drafts[0]
        .split("\r\n\r\n")
        .next()
        .unwrap()
        .replace("\r\n\t", "");
    let header = head
        .lines()
        .find(|l| l.starts_with("X-Zamburak-Draft:"))
        .unwrap_or_else(|| panic!("no provenance header: {}", drafts[0]));
    assert!(
        header.contains("`draft_reply` at line 2 of the plan (call #2), rule args.to.require"),
        "{header}"
    );
    // Nothing the run read is in it: not the sender's address, nor a reader's name.
    assert!(!header.contains('@'), "{header}");
}
