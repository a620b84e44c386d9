//! The lint against the runtime on one plan: for every call the runtime decides, the lint's `may`
//! prediction is at least as restrictive and its `must` prediction at most as restrictive.
#![allow(
    dead_code,
    reason = "each test crate uses its own part of the shared helpers"
)]

use serde_json::Value;
use zamburak::analysis::lint_in;
use zamburak::lower::Mode;
use zamburak::planner::ContextLabel;
use zamburak::policy::Policy;
use zamburak::runtime::run::{CallDecision, Run, RunInput};

use super::backend::get_returns;

/// Runs `plan` (every tool answering `data`) and lints it; `Err` says where a prediction does not bound
/// the runtime's decision. Returns the runtime's decisions.
pub fn lint_bounds_runtime(
    plan: &str,
    data: &Value,
    policy: &Policy,
    mode: Mode,
) -> Result<Vec<CallDecision>, String> {
    lint_bounds_runtime_in(plan, data, policy, mode, &ContextLabel::trusted())
}

/// [`lint_bounds_runtime`] for a plan written in a planner context: the run and the lint both label its
/// literals with it.
pub fn lint_bounds_runtime_in(
    plan: &str,
    data: &Value,
    policy: &Policy,
    mode: Mode,
    context: &ContextLabel,
) -> Result<Vec<CallDecision>, String> {
    let report = Run::new(&RunInput {
        source: plan,
        policy,
        mode,
    })
    .without_preflight()
    .in_context(context)
    .execute(&mut get_returns(data.clone()), None, &mut |_| {});
    let lint = lint_in(plan, policy, mode, context);
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
    Ok(report.decisions)
}
