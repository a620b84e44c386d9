//! The security corpus: every scenario file under tests/scenarios runs through `policy test`'s library entry
//! point (real checker, lowering, Monty and decision procedure; fixtures stand in for adapters).

use std::path::Path;

use crate::common;
use zamburak::runtime::run::Engine;

#[test]
fn every_corpus_scenario_meets_its_expectation() {
    // Five corpora, each over its own policy: tests/scenarios, the larger tests/scenarios/spec,
    // tests/scenarios/mcp (MCP-sourced tools, offline), tests/scenarios/llm (the quarantined LLM) and
    // tests/scenarios/structure (`returns.structure_readers`).
    let files = common::corpus_files();
    let (mut passed, mut failed) = (0, 0);
    let mut report = String::new();
    for f in &files {
        let totals = zamburak::scenario::run_file(f, None, &Engine::InProcess, &mut |line| {
            if !line.starts_with("ok ") {
                report.push_str(line);
                report.push('\n');
            }
        })
        .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        passed += totals.passed;
        failed += totals.failed;
    }
    assert_eq!(failed, 0, "{report}");
    assert!(
        passed >= 800,
        "both corpora must keep their scenarios (about 550, in both modes), ran {passed}"
    );
}

#[test]
fn a_wrong_expectation_is_reported_as_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/policy.yaml");
    std::fs::copy(&policy, dir.path().join("policy.yaml")).unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(
        &file,
        "policy: policy.yaml\nscenarios:\n  - name: wrong on purpose\n    plan: |\n      e = get_email(id=\"1\")\n      send_email(to=e[\"from\"], subject=\"s\", body=\"b\")\n    tools: { get_email: [{from: \"x@evil.test\", to: [], cc: [], subject: \"s\", body: \"b\", id: \"1\", date: \"d\"}] }\n    expect: { strict: allow, normal: deny }\n    expect_calls: { normal: [get_email, send_email] }\n",
    )
    .unwrap();
    let mut lines = Vec::new();
    let totals = zamburak::scenario::run_file(&file, None, &Engine::InProcess, &mut |l| {
        lines.push(l.to_string())
    })
    .unwrap();
    assert_eq!(totals.passed, 0);
    assert_eq!(
        totals.failed, 2,
        "strict: wrong outcome; normal: right outcome but wrong calls"
    );
    let text = lines.join("\n");
    assert!(
        text.contains("expected: allow") && text.contains("actual:   deny"),
        "{text}"
    );
    // The send is denied whenever it is reached, so the pre-flight analysis refuses the plan before
    // `get_email` runs (docs/semantics.md, "Pre-flight analysis").
    assert!(text.contains("actual calls:   []"), "{text}");
    assert!(
        !text.contains("x@evil.test"),
        "reports never show raw values: {text}"
    );
}

#[test]
fn policy_test_command_prints_totals_and_exit_code() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/06_trifecta.yaml");
    let out = assert_cmd::Command::cargo_bin("zamburak")
        .unwrap()
        .args(["policy", "test"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.trim_end().ends_with("20 passed, 0 failed"),
        "{stdout}"
    );
}
