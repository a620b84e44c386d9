//! Hints for whom (#49): lint's helps for a planner model (`lint_plan` and `run_plan` of `zamburak mcp
//! serve`, [`Audience::Planner`]) propose changes to the plan only. They never propose a change to the
//! policy, never name the policy's file or a line of it, and never suggest running in normal mode; the
//! person's `zamburak lint` ([`Audience::Person`]) keeps those helps. One plan per help that has a
//! person's variant.

use std::path::Path;

use serde_json::Value;
use zamburak::analysis::{lint_for, output};
use zamburak::plan::Audience;
use zamburak::planner::ContextLabel;
use zamburak::policy::Policy;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where the person keeps the policy: its name is the path `lint` names in a help.
const PATH: &str = "/home/you/agent/zamburak.yaml";

fn load(file: &str) -> Policy {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let dir = root().join(file).parent().unwrap().to_path_buf();
    Policy::from_yaml_str(&text, PATH, &dir).unwrap()
}

/// A send tool whose argument declares no check: it gets the default one, and its reason says how the
/// policy would change it.
const DEFAULTED: &str = r#"
version: 1
mode: strict
user: me@example.com
tags: [PRIVATE]
tools:
  get:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: untrusted, tags: [PRIVATE], readers: user }
  sink:
    effect: send
    args:
      x: {}
"#;

/// Plan functions nested deeper than lint follows: the argument's label is unknown.
fn too_deep() -> String {
    let mut plan = "def f0(x):\n    return x\n".to_string();
    for i in 1..12 {
        plan += &format!("def f{i}(x):\n    return f{}(x)\n", i - 1);
    }
    plan + "send_email(to=\"me@example.com\", subject=\"s\", body=f11(\"b\"))\n"
}

/// (policy, plan, what the person's help says that the planner's must not).
fn cases() -> Vec<(Policy, String, &'static str)> {
    let default = load("policies/default.yaml");
    let llm = load("tests/scenarios/llm/policy.yaml");
    let defaulted = Policy::from_yaml_str(DEFAULTED, PATH, Path::new(".")).unwrap();
    vec![
        // Strict mode's implicit flow: what removes the kind (never the other mode, for either audience).
        (
            default.clone(),
            "for m in read_inbox(limit=3):\n    who = verify_recipient(m[\"from\"])\n    send_email(to=who, subject=\"hi\", body=\"hello\")\n".into(),
            "compute `to` (and verify it) outside the branches and loops that test tool output",
        ),
        // A list of records with per-record readers: `structure_readers`.
        (
            default.clone(),
            "for e in read_inbox(limit=5):\n    draft_reply(to=verify_recipient(e[\"from\"]), subject=\"Re: \" + e[\"subject\"], body=\"ok\")\n".into(),
            "declare `returns.structure_readers: public` for it in the policy",
        ),
        // A `require` no verifier meets: the policy line that would allow it.
        (
            default.clone(),
            "e = get_email(id=\"1\")\ncommit_draft(id=e[\"subject\"], sha256=\"x\")\n".into(),
            "only the policy can allow it: `tools.commit_draft.args.id.require` (/home/you/agent/zamburak.yaml:",
        ),
        // Readers: the source's readers in the policy.
        (
            default.clone(),
            "t = read_file(path=\"notes.txt\")\nsend_email(to=\"bob@example.com\", subject=\"notes\", body=t)\n".into(),
            "add them to its readers in the policy: `tools.read_file.returns.readers` (/home/you/agent/zamburak.yaml:",
        ),
        // A literal URL no allow-list entry reaches (Z111).
        (
            default.clone(),
            "fetch_url(url=\"http://evil.test/\")\n".into(),
            "or add one to `builtins.web.allow` in the policy",
        ),
        // Lint could not follow: where the requirements are written.
        (
            default,
            too_deep(),
            "see `zamburak policy check` for what this tool requires",
        ),
        // A model as a reader: make it one in the policy.
        (
            llm.clone(),
            "t = read_private(path=\"a\")\nask(prompt=\"sum\", data=t, schema=\"str\")\n".into(),
            "or make `llm:local` a reader of it in the policy (below)",
        ),
        (
            llm,
            "t = read_private(path=\"a\")\npay_confirmed(iban=t, amount=1)\n".into(),
            "only the policy can allow it: `tools.pay_confirmed.args.iban.require`",
        ),
        // The default check of an argument that leaves: its reason says how to declare another.
        (
            defaulted,
            "e = get()\nsink(x=e[\"subject\"])\n".into(),
            "declare one in the policy to change it",
        ),
    ]
}

/// `lint --format json` of `plan` for `audience`, as `lint_plan` answers it.
fn doc(policy: &Policy, plan: &str, audience: Audience) -> Value {
    let report = lint_for(
        plan,
        policy,
        policy.mode(),
        &ContextLabel::trusted(),
        audience,
    );
    output::json(&report, "plan.py")
}

/// Every text of the document that tells the reader what to do: hints, notes, fixes' messages, and the
/// predicted decisions' reasons.
fn advice(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for d in doc["diagnostics"].as_array().unwrap() {
        out.extend(d["hint"].as_str().map(str::to_string));
        for n in d["notes"].as_array().into_iter().flatten() {
            out.extend(n.as_str().map(str::to_string));
        }
        out.extend(d["fix"]["message"].as_str().map(str::to_string));
    }
    for c in doc["calls"].as_array().unwrap() {
        for side in ["may", "must"] {
            out.extend(c["reason"][side].as_str().map(str::to_string));
        }
    }
    out
}

/// What a planner is never told: anything about the policy as a thing to change (no advice mentions the
/// policy at all), its file, or the other mode (nowhere in the document).
fn planner_violations(doc: &Value) -> Vec<String> {
    let mut bad: Vec<String> = advice(doc)
        .into_iter()
        .filter(|a| a.to_lowercase().contains("policy"))
        .collect();
    let all = doc.to_string();
    for word in [PATH, "zamburak.yaml", ".yaml", "normal mode", "--mode"] {
        if all.contains(word) {
            bad.push(format!("the document says `{word}`"));
        }
    }
    bad
}

#[test]
fn a_planner_is_never_told_to_change_the_policy_and_the_person_still_is() {
    let mut failures = Vec::new();
    for (policy, plan, person) in cases() {
        let theirs = doc(&policy, &plan, Audience::Person);
        if !advice(&theirs).iter().any(|a| a.contains(person)) {
            failures.push(format!(
                "the person's help lacks {person:?}\n{plan}\n{:#?}",
                advice(&theirs)
            ));
        }
        // Nobody is told to run in normal mode, where the data would choose and nothing would say so
        // (docs/semantics.md, "Control context and modes").
        if theirs.to_string().contains("normal mode") {
            failures.push(format!("the person is told to use normal mode\n{plan}"));
        }
        let planner = doc(&policy, &plan, Audience::Planner);
        let bad = planner_violations(&planner);
        if !bad.is_empty() {
            failures.push(format!("the planner is told {bad:#?}\n{plan}"));
        }
        // Same findings, same predictions: only the words differ.
        let codes = |d: &Value| {
            d["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["code"].clone())
                .collect::<Vec<_>>()
        };
        if codes(&theirs) != codes(&planner)
            || theirs["calls"].as_array().unwrap().len()
                != planner["calls"].as_array().unwrap().len()
        {
            failures.push(format!("the audiences get different findings\n{plan}"));
        }
        // And each planner diagnostic still has a help.
        for d in planner["diagnostics"].as_array().unwrap() {
            if d["hint"].as_str().is_none_or(str::is_empty) {
                failures.push(format!("no help for the planner: {d}\n{plan}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
