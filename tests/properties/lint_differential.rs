//! The lint against the runtime on random plans (the generator of the non-interference test): for every
//! call the runtime decides, in both modes, the lint's `may` prediction is at least as restrictive and its
//! `must` prediction at most as restrictive. A plan that lint declares clean is therefore never denied, and
//! a call lint proves denied is denied whenever it runs.

use crate::common;

use std::path::Path;

use common::bounds::{lint_bounds_runtime, lint_bounds_runtime_in};
use common::{expr, stmt};
use proptest::prelude::*;
use serde_json::{Value, json};
use zamburak::analysis::lint;
use zamburak::lower::Mode;
use zamburak::policy::Policy;

const POLICY: &str = r#"
version: 1
mode: strict
user: me@example.com
tags: [PRIVATE]
verifiers:
  check: { kind: one_of, values: [p, q, x], mints: Ok }
tools:
  get:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: untrusted, tags: [PRIVATE], readers: { from_fields: [from] } }
  sink:
    effect: send
    args:
      x: { require: [trusted, "verified(Ok)"], forbid_tags: [PRIVATE] }
    # A violation drafts instead of stopping the run, so every later call is decided and checked too.
    on_violation: draft
"#;

/// Plan functions with parameter defaults (#49): a default is evaluated once, at the definition, in the
/// defining scope (from a literal, from tool data, from any expression, under a branch, in a loop, a list
/// shared by every call), and a call that does not pass the argument gets it with its label; calls that
/// do and do not pass it, by position and by name, directly and as a callback.
fn default_stmt() -> impl Strategy<Value = String> {
    prop_oneof![
        (expr(), expr()).prop_map(|(c, v)| format!(
            "def fd(v, p='p'):\n    sink(p)\n    return v + p\nsink(fd({v}))\nsink(fd('q', {c}))\nsink(fd(v='r', p={c}))\n"
        )),
        expr().prop_map(|c| format!(
            "def fe(p=e['subject'], q={c}):\n    sink(q)\n    return p\nsink(fe())\nsink(fe('p'))\nsink(fe(q='x'))\n"
        )),
        (expr(), expr()).prop_map(|(c, v)| format!(
            "a2 = {v}\ndef fa(p=a2):\n    return p\na2 = str({c})\nsink(fa())\nsink(a2)\n"
        )),
        (expr(), expr()).prop_map(|(c, v)| format!(
            "if {c}:\n    def fc(p={v}):\n        return p\nelse:\n    def fc(p='q'):\n        return p\nsink(fc())\nsink(fc('x'))\n"
        )),
        expr().prop_map(|c| format!(
            "for t in e['tags']:\n    def fr(p=t, q=str({c})):\n        return p + q\n    sink(fr())\n    sink(fr('x', 'p'))\n"
        )),
        expr().prop_map(|c| format!(
            "def fl(v, ys=[]):\n    ys.append(v)\n    return ys\nfl({c})\nsink(len(fl('a')))\nsink(fl('b')[0])\n"
        )),
        expr().prop_map(|c| format!(
            "def kd(t, p={c}):\n    sink(p)\n    return t\nys3 = sorted(e['tags'], key=kd)\nsink(ys3)\nms3 = list(map(kd, ['p', 'q']))\nsink(ms3)\n"
        )),
        expr().prop_map(|c| format!(
            "def mk2(w):\n    def inner(p=w):\n        return p\n    return inner\ng1 = mk2('p')\ng2 = mk2({c})\nsink(g1())\nsink(g2())\n"
        )),
        expr().prop_map(|c| format!(
            "def fg(p=get()['subject']):\n    return p\nif {c}:\n    sink(fg())\nsink(fg('x'))\n"
        )),
    ]
}

/// The random plans' statements: those of the non-interference generator, and plan functions with
/// defaults.
fn any_stmt() -> impl Strategy<Value = String> {
    prop_oneof![4 => stmt(), 1 => default_stmt()]
}

fn check(plan: &str, mail: &Value, policy: &Policy, mode: Mode) -> Result<usize, String> {
    lint_bounds_runtime(plan, mail, policy, mode).map(|d| d.len())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, .. ProptestConfig::default() })]
    #[test]
    fn lint_bounds_the_runtime_on_random_plans(
        body in prop::collection::vec(any_stmt(), 1..7),
        subject in prop::sample::select(vec!["x", "p", "me", "urgent"]),
        tags in prop::sample::select(vec![vec![], vec!["p"], vec!["p", "q"]]),
    ) {
        let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
        let plan = format!(
            "import json\nimport re\na = 'x'\nb = 1\nxs = ['s']\nd = {{'k': 'v'}}\ne = get()\nv = check('p')\nsink(v)\n{}sink(a)\nsink(b)\nsink(xs)\nsink(d)\n",
            body.concat()
        );
        let mail = json!({"subject": subject, "from": "mallory@evil.test", "tags": tags});
        for mode in [Mode::Strict, Mode::Normal] {
            if let Err(e) = check(&plan, &mail, &policy, mode) {
                prop_assert!(false, "{e}\n--- plan ---\n{plan}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, .. ProptestConfig::default() })]
    /// [`lint_bounds_the_runtime_on_random_plans`] with plan functions with defaults in most plans (#49).
    #[test]
    fn lint_bounds_the_runtime_on_random_plans_with_defaults(
        body in prop::collection::vec(prop_oneof![1 => stmt(), 2 => default_stmt()], 1..5),
        subject in prop::sample::select(vec!["x", "p", "me", "urgent"]),
        tags in prop::sample::select(vec![vec![], vec!["p"], vec!["p", "q"]]),
    ) {
        let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
        let plan = format!(
            "import json\nimport re\na = 'x'\nb = 1\nxs = ['s']\nd = {{'k': 'v'}}\ne = get()\nv = check('p')\nsink(v)\n{}sink(a)\nsink(b)\nsink(xs)\nsink(d)\n",
            body.concat()
        );
        let mail = json!({"subject": subject, "from": "mallory@evil.test", "tags": tags});
        for mode in [Mode::Strict, Mode::Normal] {
            if let Err(e) = check(&plan, &mail, &policy, mode) {
                prop_assert!(false, "{e}\n--- plan ---\n{plan}");
            }
        }
    }
}

#[test]
fn the_check_sees_a_wrong_prediction() {
    // The property is only as good as its oracle: a plan whose send is certainly denied must be
    // reported as such by lint, and the runtime must agree.
    let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
    let plan = "e = get()\nsink(e['subject'])\n";
    let mail = json!({"subject": "x", "from": "a@b", "tags": []});
    assert_eq!(check(plan, &mail, &policy, Mode::Strict), Ok(2));
    let report = lint(plan, &policy, Mode::Strict);
    assert_eq!(report.diagnostics[0].code, "Z204");
    assert_eq!(
        report.calls[1].must.outcome,
        zamburak::policy::Outcome::Draft
    );
}

/// Lint's structure model against the runtime's, exhaustively over the container-building forms:
/// `len`, `bool`, `not` and `if` of each take the structure label at run time, so lint's bounds must
/// cover it (#19: lint's `len` reads the modelled structure; a set or dict comprehension's keys were
/// missing from it, found by 3,000 random cases).
#[test]
fn lint_bounds_len_and_truth_of_every_container_form() {
    let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
    let mut failures = Vec::new();
    let forms = common::structure_observations();
    for body in &forms {
        let plan = format!(
            "import json\nimport re\na = 'x'\nb = 1\nxs = ['s']\nd = {{'k': 'v'}}\ne = get()\nv = check('p')\nsink(v)\n{body}"
        );
        for subject in ["x", "k", "pe\nqe", ""] {
            let mail = json!({"subject": subject, "from": "mallory@evil.test", "tags": ["p"]});
            for mode in [Mode::Strict, Mode::Normal] {
                if let Err(e) = check(&plan, &mail, &policy, mode) {
                    failures.push(format!(
                        "{e}\n--- {mode:?}, subject {subject:?} ---\n{body}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The planner contexts a session may be in (docs/semantics.md, "The planner context label"): read
/// untrusted text, read private text some others may read, read only trusted text with a source, or
/// something whose label did not read back.
fn contexts() -> Vec<zamburak::planner::ContextLabel> {
    use zamburak::planner::{ContextIntegrity, ContextLabel};
    let source = |s: &str| [s.to_string()].into_iter().collect();
    vec![
        ContextLabel {
            integrity: ContextIntegrity::Untrusted,
            sources: source("run-1/get#1"),
            ..ContextLabel::trusted()
        },
        ContextLabel {
            integrity: ContextIntegrity::Untrusted,
            tags: ["PRIVATE".to_string()].into_iter().collect(),
            readers: Some(["llm:planner".to_string(), "mallory@evil.test".to_string()].into()),
            sources: source("run-2/get#4"),
        },
        ContextLabel {
            sources: source("run-3/get#1"),
            ..ContextLabel::trusted()
        },
        ContextLabel {
            integrity: ContextIntegrity::Unknown,
            ..ContextLabel::trusted()
        },
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 80, .. ProptestConfig::default() })]
    /// The same property as [`lint_bounds_the_runtime_on_random_plans`], with the plan written in a planner
    /// context: lint and the run label the literals alike (so `lint_plan` of `mcp serve` predicts the run).
    /// The verified `v` sent under a literal condition and in a `range` loop is allowed only where the
    /// condition is trusted: under an untrusted context the run raises `pc`, as lint does (no labels known
    /// at compile time).
    #[test]
    fn lint_bounds_the_runtime_in_a_planner_context(
        body in prop::collection::vec(any_stmt(), 1..7),
        subject in prop::sample::select(vec!["x", "p", "me", "urgent"]),
        which in 0usize..4,
    ) {
        let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
        let plan = format!(
            "import json\nimport re\na = 'x'\nb = 1\nxs = ['s']\nd = {{'k': 'v'}}\ne = get()\nv = check('p')\nsink(v)\nif b:\n    sink(v)\nfor i in range(2):\n    sink(v)\n{}sink(a)\nsink(b)\nsink(xs)\nsink(d)\n",
            body.concat()
        );
        let mail = json!({"subject": subject, "from": "mallory@evil.test", "tags": ["p"]});
        let context = &contexts()[which];
        for mode in [Mode::Strict, Mode::Normal] {
            if let Err(e) = lint_bounds_runtime_in(&plan, &mail, &policy, mode, context) {
                prop_assert!(false, "{e}\n--- context {context:?} ---\n{plan}");
            }
        }
    }
}

/// In an untrusted context a literal argument is certainly untrusted: lint proves the violation (its
/// `must` decision), the run meets it, and a verified literal still passes.
#[test]
fn lint_proves_what_a_literal_meets_in_a_planner_context() {
    let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
    let plan = "sink('p')\nsink(check('p'))\n";
    let mail = json!({"subject": "x", "from": "a@b", "tags": []});
    let context = &contexts()[0];
    let decisions = lint_bounds_runtime_in(plan, &mail, &policy, Mode::Strict, context).unwrap();
    let got: Vec<_> = decisions.iter().map(|d| d.decision).collect();
    use zamburak::policy::Outcome;
    assert_eq!(got, [Outcome::Draft, Outcome::Allow]);
    let report = zamburak::analysis::lint_in(plan, &policy, Mode::Strict, context);
    assert_eq!(report.calls[0].must.outcome, Outcome::Draft);
    assert_eq!(report.calls[1].may.outcome, Outcome::Allow);
    // The finding says where the literal's label comes from.
    let said: Vec<&str> = report
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert!(
        said.iter().any(|m| m.contains(
            "argument `x` derives from what the planner read earlier in this session (`planner-context#0`)"
        )),
        "{said:?}"
    );
    // The trusted context is the plain one.
    let trusted = zamburak::planner::ContextLabel::trusted();
    let decisions = lint_bounds_runtime_in(plan, &mail, &policy, Mode::Strict, &trusted).unwrap();
    assert!(decisions.iter().all(|d| d.decision == Outcome::Allow));
}
