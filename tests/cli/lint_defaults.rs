//! A plan function's parameter defaults, as lint sees them (#49): a default is evaluated where the `def`
//! runs, as Python does, and a call that does not pass the argument gets it with its label, and in a
//! planner context with the context's literal label. Lint is an upper bound of the run only if it binds
//! the default as the run does: before, it bound a trusted literal, so a URL built from mail in a default
//! was `clean` while the run denied it, and a literal default of a plan written after reading mail was
//! `allow` while the run waited for the person.

use crate::common;

use std::path::Path;

use common::bounds::{lint_bounds_runtime, lint_bounds_runtime_in};
use common::cli::{output_text, zamburak_in};
use common::world::World;
use serde_json::json;
use zamburak::analysis::{lint, lint_in};
use zamburak::lower::Mode;
use zamburak::planner::{ContextIntegrity, ContextLabel};
use zamburak::policy::{Outcome, Policy};

/// A default cut out of the inbox: the run denies the fetch, so lint must say so.
const DEFAULT_FROM_MAIL: &str = "mails = read_inbox(limit=5)\n\
def f(p=mails[0][\"subject\"]):\n    fetch_url(url=\"http://x/\" + p)\n\
f()\n";

/// A literal default for a path: the plan's own, unless the plan was written after reading mail.
const LITERAL_DEFAULT_PATH: &str = "def f(p=\"d1.txt\"):\n    put(path=p)\nf()\n";

/// `put` cares about its path only: its control is free, so what decides is the default's label.
const PUT_POLICY: &str = r#"
version: 1
mode: strict
user: me@example.com
tags: [PRIVATE]
tools:
  get:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: untrusted, tags: [PRIVATE] }
  put:
    effect: write
    args:
      path: { require: trusted }
    control: { require: any }
    on_violation: confirm
"#;

fn put_policy() -> Policy {
    Policy::from_yaml_str(PUT_POLICY, "<test>", Path::new(".")).unwrap()
}

/// What a planner that read untrusted mail writes in (docs/semantics.md, "The planner context label").
fn read_mail() -> ContextLabel {
    ContextLabel {
        integrity: ContextIntegrity::Untrusted,
        sources: ["run-1/get#1".to_string()].into_iter().collect(),
        ..ContextLabel::trusted()
    }
}

#[test]
fn zamburak_lint_denies_a_url_built_from_mail_in_a_default_as_the_run_does() {
    let world = World::new(None);
    let plan = world.write_plan("plan.py", DEFAULT_FROM_MAIL);
    // The run: denied before any tool runs (exit 3), or at the call.
    let run = world.run(&plan, &[]);
    assert_eq!(run.status.code(), Some(3), "{}", output_text(&run));
    // Lint: the same call, certainly denied whenever it is reached.
    let out = zamburak_in(
        world.dir.path(),
        &["lint", "plan.py", "--policy", "policy.yaml"],
    );
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("error[Z201]: `fetch_url` is denied whenever it is reached"),
        "{text}"
    );
    assert!(text.contains("`read_inbox()` at line 1"), "{text}");
    // The flagged span is the call's argument, at line 3.
    assert!(text.contains("plan.py:3:"), "{text}");
}

#[test]
fn lint_in_a_planner_context_binds_a_literal_default_with_the_context_label() {
    let policy = put_policy();
    let mail = json!({"subject": "x", "from": "a@b", "tags": []});
    // The run waits for the person: the default `"d1.txt"` was written by a planner that read mail.
    let decisions = lint_bounds_runtime_in(
        LITERAL_DEFAULT_PATH,
        &mail,
        &policy,
        Mode::Strict,
        &read_mail(),
    )
    .unwrap();
    let got: Vec<_> = decisions.iter().map(|d| d.decision).collect();
    assert_eq!(got, [Outcome::Confirm]);
    let report = lint_in(LITERAL_DEFAULT_PATH, &policy, Mode::Strict, &read_mail());
    assert_eq!(report.calls.len(), 1);
    assert_eq!(report.calls[0].must.outcome, Outcome::Confirm);
    assert_eq!(report.calls[0].may.outcome, Outcome::Confirm);
    assert_eq!(report.diagnostics[0].code, "Z203");
    // In a trusted session the same plan is the plan's own: allowed, as the run allows it.
    let decisions =
        lint_bounds_runtime(LITERAL_DEFAULT_PATH, &mail, &policy, Mode::Strict).unwrap();
    assert_eq!(decisions[0].decision, Outcome::Allow);
    assert!(
        lint(LITERAL_DEFAULT_PATH, &policy, Mode::Strict)
            .diagnostics
            .is_empty()
    );
}

/// The default is evaluated once, at the definition: a name rebound later does not change it, a call
/// that passes the argument does not see it, and a tool called in a default is a call site lint checks.
#[test]
fn a_default_is_evaluated_at_the_definition_and_only_a_call_without_the_argument_gets_it() {
    let policy = put_policy();
    let mail = json!({"subject": "x", "from": "a@b", "tags": []});
    // The plan, the run's decisions (it stops at the first wait), and whether lint proves that wait.
    let cases: &[(&str, &[Outcome], bool)] = &[
        // Tool data in the default, the argument not passed: waits.
        (
            "e = get()\ndef f(p=e[\"subject\"]):\n    put(path=p)\nf()\n",
            &[Outcome::Allow, Outcome::Confirm],
            true,
        ),
        // The argument passed: the default does not flow.
        (
            "e = get()\ndef f(p=e[\"subject\"]):\n    put(path=p)\nf(\"ok.txt\")\nf(p=\"ok.txt\")\n",
            &[Outcome::Allow, Outcome::Allow, Outcome::Allow],
            false,
        ),
        // Evaluated at the definition: the name rebound afterwards changes nothing.
        (
            "n = \"a.txt\"\ndef f(p=n):\n    put(path=p)\ne = get()\nn = e[\"subject\"]\nf()\n",
            &[Outcome::Allow, Outcome::Allow],
            false,
        ),
        (
            "e = get()\nn = e[\"subject\"]\ndef f(p=n):\n    put(path=p)\nn = \"a.txt\"\nf()\n",
            &[Outcome::Allow, Outcome::Confirm],
            true,
        ),
        // A tool called in a default runs at the definition.
        (
            "def f(p=get()):\n    put(path=p[\"subject\"])\nf()\n",
            &[Outcome::Allow, Outcome::Confirm],
            true,
        ),
        // A mutable default is one list for every call: what one call appends the next one reads.
        (
            "e = get()\ndef f(v, xs=[]):\n    xs.append(v)\n    return xs[0]\nf(e[\"subject\"])\nput(path=f(\"a\"))\n",
            &[Outcome::Allow, Outcome::Confirm],
            false,
        ),
        // A callback given one element: its second parameter takes the default.
        (
            "e = get()\ndef k(t, p=e[\"subject\"]):\n    put(path=p)\n    return t\nys = sorted([\"a\", \"b\"], key=k)\n",
            &[Outcome::Allow, Outcome::Confirm],
            true,
        ),
    ];
    let mut failures = Vec::new();
    for (plan, want, proven) in cases {
        match lint_bounds_runtime(plan, &mail, &policy, Mode::Strict) {
            Ok(d) => {
                let got: Vec<_> = d.iter().map(|d| d.decision).collect();
                if got != *want {
                    failures.push(format!("the run decided {got:?}, not {want:?}\n{plan}"));
                }
            }
            Err(e) => failures.push(format!("{e}\n{plan}")),
        }
        // Where the run waits on every input, lint knows it will.
        let report = lint(plan, &policy, Mode::Strict);
        let puts: Vec<_> = report.calls.iter().filter(|c| c.tool == "put").collect();
        if *proven && !puts.iter().any(|c| c.must.outcome == Outcome::Confirm) {
            failures.push(format!("lint does not prove the wait\n{plan}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
