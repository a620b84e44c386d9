//! The lint against the runtime on random plans (the generator of the non-interference test): for every
//! call the runtime decides, in both modes, the lint's `may` prediction is at least as restrictive and its
//! `must` prediction at most as restrictive. A plan that lint declares clean is therefore never denied, and
//! a call lint proves denied is denied whenever it runs.

mod common;

use std::path::Path;

use common::backend::get_returns;
use common::stmt;
use proptest::prelude::*;
use serde_json::{Value, json};
use zamburak::analysis::lint;
use zamburak::lower::Mode;
use zamburak::policy::Policy;
use zamburak::runtime::run::{Run, RunInput};

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

fn check(plan: &str, mail: &Value, policy: &Policy, mode: Mode) -> Result<usize, String> {
    let report = Run::new(&RunInput {
        source: plan,
        policy,
        mode,
    })
    .without_preflight()
    .execute(&mut get_returns(mail.clone()), None, &mut |_| {});
    let lint = lint(plan, policy, mode);
    if let Some(c) = lint.calls.iter().find(|c| c.may.outcome < c.must.outcome) {
        return Err(format!(
            "{mode:?}: line {} `{}`: lint's may {:?} is milder than its must {:?}",
            c.line, c.tool, c.may.outcome, c.must.outcome
        ));
    }
    for d in &report.decisions {
        let sites: Vec<_> = lint
            .calls
            .iter()
            .filter(|c| c.line == d.line && c.tool == d.tool)
            .collect();
        let (Some(may), Some(must)) = (
            sites.iter().map(|c| c.may.outcome).max(),
            sites.iter().map(|c| c.must.outcome).min(),
        ) else {
            return Err(format!("no lint site for {} at line {}", d.tool, d.line));
        };
        if d.decision > may {
            return Err(format!(
                "{mode:?}: line {} `{}`: runtime {:?} ({}: {}) but lint's may is {may:?}",
                d.line, d.tool, d.decision, d.rule, d.reason
            ));
        }
        if d.decision < must {
            return Err(format!(
                "{mode:?}: line {} `{}`: runtime {:?} but lint's must is {must:?}",
                d.line, d.tool, d.decision
            ));
        }
    }
    Ok(report.decisions.len())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, .. ProptestConfig::default() })]
    #[test]
    fn lint_bounds_the_runtime_on_random_plans(
        body in prop::collection::vec(stmt(), 1..7),
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
