//! Running a plan plainly on Monty and lowered (with no tools), for the transparency tests: both return what
//! the plan printed, followed by `ERROR <type>` when it raised.
#![allow(
    dead_code,
    reason = "each test crate uses its own part of the shared helpers"
)]

use monty::MontyRun;
use monty_types::{CompileOptions, PrintWriter, ResourceTracker};
use zamburak::lower::{Mode, compile};
use zamburak::plan::Signatures;
use zamburak::runtime::exec::{ExecLimits, ExecOutcome, Host, HostReply, execute};
use zamburak::value::LValue;

struct NoTools;
impl Host for NoTools {
    fn call(
        &mut self,
        name: &str,
        _: Vec<(String, LValue)>,
        _: zamburak::label::Packed,
        _: u32,
    ) -> HostReply {
        HostReply::Deny {
            message: format!("no tool {name} in this test"),
        }
    }
}

pub fn plain(plan: &str) -> String {
    let run = MontyRun::new(plan.to_string(), "p.py", vec![], CompileOptions::default()).unwrap();
    let mut out = String::new();
    let r = run.run(
        vec![],
        ResourceTracker::default(),
        PrintWriter::CollectString(&mut out, None),
    );
    if let Err(e) = r {
        out.push_str(&format!("ERROR {:?}", e.exc_type()));
    }
    out
}

/// The limits a test run of a small plan gets: generous, so only a runaway plan meets them.
pub fn test_limits() -> ExecLimits {
    ExecLimits {
        timeout: std::time::Duration::from_secs(10),
        max_recursion: 200,
        max_host_calls: 500,
        max_memory_mb: 512,
    }
}

pub fn lowered(plan: &str, mode: Mode) -> String {
    let module = ruff_python_parser::parse_module(plan)
        .unwrap()
        .into_syntax();
    let sigs = Signatures::default();
    let low = compile(&module, plan, &sigs, mode).unwrap_or_else(|d| panic!("{plan}\n{d:?}"));
    let limits = test_limits();
    let mut out = String::new();
    let r = execute(&low, &sigs, &mut NoTools, &limits, &mut |t| out.push_str(t));
    match r {
        ExecOutcome::Completed => {}
        ExecOutcome::Failed { exc_type, .. } | ExecOutcome::Halted { exc_type, .. } => {
            out.push_str(&format!("ERROR {exc_type}"))
        }
        ExecOutcome::Denied { message, .. } => out.push_str(&format!("DENIED {message}")),
    }
    out
}
