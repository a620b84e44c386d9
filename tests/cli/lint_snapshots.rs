//! `zamburak lint` on 50 plans (tests/lint/plans): clean ones, every warning and error of the analysis, and
//! one of each front-end code. Each plan's first line states the codes it must produce (written before the
//! lint existed, from the policy and docs/semantics.md); the rendered text and JSON are snapshots on top.

use std::path::Path;

use zamburak::analysis::{lint, output};
use zamburak::lower::Mode;
use zamburak::plan::Code;
use zamburak::policy::Policy;

#[test]
fn every_plan_gets_exactly_its_expected_codes_and_renders_as_reviewed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Named as a user in the checkout would name it, so a help that points at a policy line reads the same
    // in every checkout.
    let text = std::fs::read_to_string(root.join("tests/scenarios/policy.yaml")).unwrap();
    let policy = Policy::from_yaml_str(
        &text,
        "tests/scenarios/policy.yaml",
        &root.join("tests/scenarios"),
    )
    .unwrap();
    let mut plans: Vec<_> = std::fs::read_dir(root.join("tests/lint/plans"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    plans.sort();
    assert!(plans.len() >= 40, "only {} plans", plans.len());
    let mut mismatches = Vec::new();
    for path in &plans {
        let source = std::fs::read_to_string(path).unwrap();
        let expected: Vec<&str> = source
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect:"))
            .expect("each plan starts with `# expect: CODES`")
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        let report = lint(&source, &policy, Mode::Strict);
        let mut got: Vec<&str> = report.diagnostics.iter().map(|d| d.code.as_str()).collect();
        got.sort();
        got.dedup();
        if got != expected {
            mismatches.push(format!(
                "{}: expected {expected:?}, got {got:?}",
                path.display()
            ));
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        insta::with_settings!({snapshot_path => "../lint/snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(format!("{name}.text"), output::text(&report, "plan.py"));
            insta::assert_json_snapshot!(format!("{name}.json"), output::json(&report, "plan.py"));
        });
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn every_code_lint_can_report_is_documented() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/lint.md")).unwrap();
    for code in Code::ALL.iter().map(|c| c.as_str()) {
        let listed = doc.contains(&format!("`{code}`"))
            || doc.contains(&format!("### {code}"))
            || (code.starts_with("Z09") && doc.contains("`Z090`–`Z098`"));
        assert!(listed, "{code} is not in docs/lint.md");
    }
}
