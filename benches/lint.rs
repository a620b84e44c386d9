//! `zamburak lint` as a planner calls it: the whole command, process start included, on a 200-line plan and
//! a generated 5,000-line plan, with `ruff check` on the same files as a reference point when it is
//! installed (`pip install ruff`). Run with `cargo bench --bench lint`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup that fails should stop it with a message saying what went wrong"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

#[path = "../tests/lint/generated.rs"]
mod generated;

fn main() {
    divan::main();
}

fn plan(lines: usize) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"));
    let path = dir.path().join(format!("plan_{lines}.py"));
    if !path.exists() {
        std::fs::write(&path, generated::generated_plan(lines)).expect("writable temp dir");
    }
    path
}

fn policy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/policy.yaml")
}

fn zamburak_lint(lines: usize) {
    let out = Command::new(env!("CARGO_BIN_EXE_zamburak"))
        .arg("lint")
        .arg(plan(lines))
        .arg("--policy")
        .arg(policy())
        .arg("--format")
        .arg("json")
        .output()
        .expect("the zamburak binary runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "the generated plans have certain denials"
    );
}

fn ruff_check(lines: usize) {
    let _ = Command::new("ruff")
        .args(["check", "--no-cache", "--quiet"])
        .arg(plan(lines))
        .output();
}

#[divan::bench]
fn lint_200_lines() {
    zamburak_lint(200);
}

#[divan::bench]
fn lint_5000_lines() {
    zamburak_lint(5000);
}

#[divan::bench]
fn ruff_200_lines() {
    ruff_check(200);
}

#[divan::bench]
fn ruff_5000_lines() {
    ruff_check(5000);
}

/// The analysis alone, without process start and policy loading.
#[divan::bench(args = [200, 5000])]
fn analysis_only(bencher: divan::Bencher, lines: usize) {
    let policy = zamburak::policy::Policy::load(&policy()).expect("the corpus policy loads");
    let source = generated::generated_plan(lines);
    bencher.bench(|| zamburak::analysis::lint(&source, &policy, zamburak::lower::Mode::Strict));
}
