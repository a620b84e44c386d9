//! The lint's predictions against the runtime, on every scenario of the security corpora (built-in,
//! MCP-sourced and LLM tools), in both modes.
//!
//! For every tool call the runtime decides (run without pre-flight, so every reachable call is decided),
//! the lint must have seen its call site, and by monotonicity of the decision procedure:
//! * the runtime's decision is never worse than the lint's `may` prediction (a call lint declares clean is
//!   never denied), except a denial by the `max_tool_calls` budget, which lint does not predict;
//! * the runtime's decision is never milder than the lint's `must` prediction (a call lint proves denied
//!   is denied whenever reached).

use std::path::Path;

use zamburak::analysis::{CallPrediction, lint};
use zamburak::policy::Outcome;
use zamburak::scenario::each_run_without_preflight;

fn corpus_files() -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "tests/scenarios",
        "tests/scenarios/spec",
        "tests/scenarios/mcp",
        "tests/scenarios/llm",
        "tests/scenarios/structure",
    ] {
        let mut found: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x == "yaml")
                    && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with(|c: char| c.is_ascii_digit()) || n == "pending.yaml"
                    })
            })
            .collect();
        found.sort();
        files.extend(found);
    }
    files
}

#[test]
fn lint_predictions_bound_every_runtime_decision() {
    let mut failures = Vec::new();
    let mut checked = 0usize;
    let mut runs = 0usize;
    let mut certain = 0usize;
    let mut clean = 0usize;
    for file in corpus_files() {
        each_run_without_preflight(Path::new(&file), &mut |run| {
            runs += 1;
            let report = lint(run.plan, run.policy, run.mode);
            for d in &run.report.decisions {
                checked += 1;
                let sites: Vec<&CallPrediction> = report
                    .calls
                    .iter()
                    .filter(|c| c.line == d.line && c.tool == d.tool)
                    .collect();
                if sites.is_empty() {
                    failures.push(format!(
                        "{} [{:?}]: runtime decided {} at line {} but lint has no such call site",
                        run.name, run.mode, d.tool, d.line
                    ));
                    continue;
                }
                let may = sites.iter().map(|c| c.may.outcome).max().unwrap();
                let must = sites.iter().map(|c| c.must.outcome).min().unwrap();
                if must == Outcome::Deny {
                    certain += 1;
                }
                if may == Outcome::Allow {
                    clean += 1;
                }
                if d.decision > may && d.rule != "limits.max_tool_calls" {
                    failures.push(format!(
                        "{} [{:?}]: line {} {}: runtime {:?} ({}) is worse than lint's may {:?}",
                        run.name, run.mode, d.line, d.tool, d.decision, d.rule, may
                    ));
                }
                if d.decision < must {
                    failures.push(format!(
                        "{} [{:?}]: line {} {}: runtime {:?} is milder than lint's must {:?} ({})",
                        run.name, run.mode, d.line, d.tool, d.decision, must, sites[0].must.rule
                    ));
                }
            }
        })
        .unwrap();
    }
    eprintln!(
        "{runs} runs, {checked} runtime decisions checked; lint proved {certain} denials and declared {clean} clean"
    );
    assert!(runs > 1000, "the corpora were not found ({runs} runs)");
    assert!(
        failures.is_empty(),
        "{} inconsistencies:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
