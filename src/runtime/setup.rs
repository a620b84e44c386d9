//! What must hold before a plan runs, each with its typed error ([`RunSetupError`]), checked before a trace
//! is written or any tool runs: the plan is readable UTF-8 text; every tool it names can work on this machine
//! (docs/policy.md, "Before a run": it has a source, and a built-in source finds its `builtins` section and
//! the directories it reads); no other run or decision of it is under way and no claim of it waits; this
//! binary can start the plan's worker; the MCP servers it names match their lock. A problem here is the
//! policy's or the machine's, never the plan's or the data's, so it is a configuration error reported before
//! anything runs — not a failed call in the middle of a run, after some effects already happened. Finding the
//! policy is [`crate::policy::discover`]'s; its [`PolicyError`] is one of the variants here.
//!
//! MCP tools are checked by the lock ([`crate::mcp::lock::check_offline`]); LLM providers by the policy
//! loader.
//!
//! Nothing here prints or picks an exit code: the CLI does, from the variant (`run`), as the Python package
//! and the MCP server will.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::mcp::hub::CallError;
use crate::mcp::lock::LockError;
use crate::plan::Diagnostic;
use crate::policy::discover::{Chosen, Origin};
use crate::policy::{Policy, PolicyError};
use crate::runtime::run::Engine;
use crate::runtime::snapshot::{self, RunLockError};
use crate::tools::{Builtins, ToolError};
use crate::trace::TraceError;

/// Largest plan file accepted; a plan is a short program written by a planner.
pub const MAX_PLAN_BYTES: u64 = 1 << 20;

/// Why a run did not start. Nothing was run and, unless the variant says otherwise, nothing was written.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum RunSetupError {
    /// The policy could not be loaded: the `--policy` file, or the one found beside the plan, is missing or
    /// broken (its kind and key path say which mistake, and where).
    #[error(transparent)]
    Policy(Box<PolicyError>),
    /// The plan file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    PlanUnreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The plan file is larger than [`MAX_PLAN_BYTES`].
    #[error("{} is larger than {max} bytes", path.display())]
    PlanTooLarge { path: PathBuf, max: u64 },
    /// The plan is not UTF-8: a diagnostic of the plan (`Z001`) rather than a usage error, shown like
    /// `lint` shows it, in `text` (the plan with the bad bytes replaced).
    #[error("{}", diagnostic.message)]
    PlanNotUtf8 {
        text: String,
        /// Boxed: a diagnostic is large, and every step of the setup returns this error.
        diagnostic: Box<Diagnostic>,
    },
    /// Tools the plan names cannot work on this machine under the built-in default policy, whose data paths
    /// are this repository's examples.
    #[error(
        "{} needs tools whose data the built-in default policy keeps in this repository's examples/, which is \
         not here: run `zamburak policy init` to write a zamburak.yaml for this directory (then edit its \
         `builtins:` paths), or pass --policy FILE",
        plan.display()
    )]
    DefaultPolicyUnfit {
        plan: PathBuf,
        problems: Vec<SetupProblem>,
    },
    /// Tools the plan names cannot work on this machine under its policy: each problem names the key to
    /// change.
    #[error("{}", unready(plan, policy, problems))]
    ToolsUnready {
        plan: PathBuf,
        /// The policy's path as the trace would name it.
        policy: String,
        problems: Vec<SetupProblem>,
    },
    /// The run's lock could not be taken: another run, approval or rejection of the same plan holds it.
    #[error(transparent)]
    Locked(#[from] RunLockError),
    /// A claim of this plan waits for a decision; a re-run would replace the trace it is bound to.
    #[error(
        "a claim is pending for {}: approve or reject it first (claim {code}, `zamburak approve {} --claim \
         {code}` or `zamburak reject {}`)",
        plan.display(),
        snapshot.display(),
        snapshot.display()
    )]
    ClaimPending {
        plan: PathBuf,
        /// The pending snapshot.
        snapshot: PathBuf,
        /// The claim's code ([`crate::trace::record::claim_code`]).
        code: String,
    },
    /// This zamburak binary cannot be found, so no worker can run the plan.
    #[error("cannot find this zamburak binary to start the plan's worker: {0}")]
    NoWorker(#[source] std::io::Error),
    /// The policy's MCP servers have no usable lock (missing, stale, unreadable).
    #[error(transparent)]
    McpLock(#[from] LockError),
    /// An MCP server the plan names could not be started or no longer matches its lock. What the server
    /// said, if anything, is [`CallError::said`] (outside text: for the terminal only).
    #[error(transparent)]
    McpStart(CallError),
    /// The person's remembered values could not be read, were changed outside Zamburak, or lie where the
    /// policy's tools write: a policy that accepts `known(ROLE)` runs only on a store that checks
    /// (docs/semantics.md, "Remembered values").
    #[error(transparent)]
    Remembered(#[from] crate::runtime::memory::Refused),
    /// The trace could not be created.
    #[error("cannot write the trace {}: {source}", path.display())]
    TraceCreate {
        path: PathBuf,
        #[source]
        source: TraceError,
    },
}

// Boxed: a located policy error is large, and every function of this layer returns this error.
impl From<PolicyError> for RunSetupError {
    fn from(e: PolicyError) -> RunSetupError {
        RunSetupError::Policy(Box::new(e))
    }
}

/// Reads and decodes the plan at `path`: at most [`MAX_PLAN_BYTES`], UTF-8.
pub fn read_plan(path: &Path) -> Result<String, RunSetupError> {
    let unreadable = |source| RunSetupError::PlanUnreadable {
        path: path.to_path_buf(),
        source,
    };
    let bytes = crate::capped::read(path, MAX_PLAN_BYTES).map_err(|e| match e {
        crate::capped::CappedError::TooLarge(max) => RunSetupError::PlanTooLarge {
            path: path.to_path_buf(),
            max,
        },
        crate::capped::CappedError::Io(e) => unreadable(e),
    })?;
    crate::plan::decode(bytes).map_err(|(text, diagnostic)| RunSetupError::PlanNotUtf8 {
        text,
        diagnostic: Box::new(diagnostic),
    })
}

/// Every tool the plan in `source` names can work on this machine under the chosen policy ([`problems`]). A
/// plan that does not parse passes: the run reports it with its diagnostics.
pub fn check_tools(chosen: &Chosen, source: &str, plan: &Path) -> Result<(), RunSetupError> {
    let Ok(parsed) = crate::plan::parse(source) else {
        return Ok(());
    };
    let problems = problems(
        &chosen.policy,
        &crate::plan::names::mentioned(&parsed.module),
    );
    if problems.is_empty() {
        return Ok(());
    }
    let plan = plan.to_path_buf();
    if chosen.origin == Origin::BuiltIn {
        return Err(RunSetupError::DefaultPolicyUnfit { plan, problems });
    }
    Err(RunSetupError::ToolsUnready {
        plan,
        policy: chosen.display_path(),
        problems,
    })
}

/// The message of [`RunSetupError::ToolsUnready`]: the plan, how many tools, and one line per problem.
fn unready(plan: &Path, policy: &str, problems: &[SetupProblem]) -> String {
    let mut message = format!(
        "{} cannot run: {} in {policy} cannot work on this machine (nothing ran)",
        plan.display(),
        match problems.len() {
            1 => "1 tool it names".to_string(),
            n => format!("{n} tools it names"),
        },
    );
    for p in problems {
        message.push_str(&format!("\n  {p}; change `{}`", p.key()));
    }
    message
}

/// Takes the lock of the run of `plan` writing `trace`, held until the returned file is dropped, and
/// checks that no claim of it waits: one run or decision of a plan at a time, and a claim that waits is
/// never replaced by a re-run (its trace is where the approved effect will be recorded).
pub fn lock(plan: &Path, trace: &Path) -> Result<std::fs::File, RunSetupError> {
    let lock = snapshot::lock_run(trace)?;
    if let Some((pending, snap)) = snapshot::pending_at(trace) {
        return Err(RunSetupError::ClaimPending {
            plan: plan.to_path_buf(),
            snapshot: pending,
            code: snap.claim_code(),
        });
    }
    Ok(lock)
}

/// The engine that runs plans in a worker started from this very binary.
pub fn worker_engine() -> Result<Engine, RunSetupError> {
    std::env::current_exe()
        .map(Engine::Worker)
        .map_err(RunSetupError::NoWorker)
}

/// One thing that keeps a tool from working on this machine.
#[non_exhaustive]
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupProblem {
    /// The policy declares the tool without `source:`, so nothing can serve it.
    #[error("tool `{tool}` has no `source:` in the policy, so nothing can serve it")]
    NoSource { tool: String },
    /// A built-in source that cannot work here (its section or a directory it reads is missing).
    #[error("tool `{tool}`: {error}")]
    Builtin { tool: String, error: ToolError },
}

impl SetupProblem {
    /// The policy key to change: `tools.NAME.source`, or the `builtins` entry.
    pub fn key(&self) -> String {
        match self {
            SetupProblem::NoSource { tool } => format!("tools.{tool}.source"),
            SetupProblem::Builtin { error, tool } => match error {
                ToolError::MissingPath { key, .. } => format!("builtins.{key}"),
                ToolError::NotConfigured(part) => format!("builtins.{part}"),
                _ => format!("tools.{tool}.source"),
            },
        }
    }
}

/// The problems of the policy's tools that `called` names (the plan's identifiers: a superset of the tools
/// it can call), in tool order. A tool the plan never names cannot fail it, so an unused part of a policy
/// (a mail section on a machine without mail) does not stop a plan that only reads files.
pub fn problems(policy: &Policy, called: &BTreeSet<String>) -> Vec<SetupProblem> {
    let builtins = Builtins::new(
        policy
            .file()
            .builtins
            .as_ref()
            .unwrap_or(&Default::default()),
        policy.user().unwrap_or_default(),
    );
    let mut out = Vec::new();
    for (name, tool) in policy.file().tools.iter() {
        if !called.contains(name) {
            continue;
        }
        match &tool.source {
            None => out.push(SetupProblem::NoSource {
                tool: name.to_string(),
            }),
            Some(source) => {
                if let Some(b) = source.builtin()
                    && let Err(error) = builtins.ready(b.name())
                {
                    out.push(SetupProblem::Builtin {
                        tool: name.to_string(),
                        error,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str, dir: &std::path::Path) -> Policy {
        Policy::from_yaml_str(text, "p.yaml", dir).unwrap()
    }

    fn names(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_named_tool_without_a_source_or_data_is_a_problem_and_an_unnamed_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("files")).unwrap();
        let p = policy(
            "version: 1\nbuiltins:\n  files: { root: files }\n  mail: { maildir: nowhere, outbox: o, drafts: d }\n\
             tools:\n  f: { effect: read, args: {} }\n  read_file: { source: builtin.files.read, effect: read, args: { path: {} } }\n\
             \x20 read_inbox: { source: builtin.mail.list, effect: read, args: { limit: {} } }\n",
            dir.path(),
        );
        assert_eq!(problems(&p, &names(&["read_file"])), vec![]);
        let found = problems(&p, &names(&["f", "read_inbox", "read_file", "print"]));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0], SetupProblem::NoSource { tool: "f".into() });
        assert_eq!(found[0].key(), "tools.f.source");
        assert!(matches!(
            &found[1],
            SetupProblem::Builtin { tool, error: ToolError::MissingPath { key: "mail.maildir", .. } } if tool == "read_inbox"
        ));
        assert_eq!(found[1].key(), "builtins.mail.maildir");
    }

    #[test]
    fn a_plan_is_read_or_refused_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.py");
        let e = read_plan(&missing).unwrap_err();
        assert!(
            matches!(&e, RunSetupError::PlanUnreadable { path, source }
                if *path == missing && source.kind() == std::io::ErrorKind::NotFound),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("cannot read "), "{e}");

        let big = dir.path().join("big.py");
        std::fs::write(&big, vec![b'#'; MAX_PLAN_BYTES as usize + 1]).unwrap();
        let e = read_plan(&big).unwrap_err();
        assert!(
            matches!(e, RunSetupError::PlanTooLarge { max, .. } if max == MAX_PLAN_BYTES),
            "{e:?}"
        );

        let latin1 = dir.path().join("latin1.py");
        std::fs::write(&latin1, b"x = '\xe9'\n").unwrap();
        let e = read_plan(&latin1).unwrap_err();
        let RunSetupError::PlanNotUtf8 { text, diagnostic } = &e else {
            panic!("{e:?}");
        };
        assert_eq!((text.as_str(), diagnostic.start), ("x = '\u{fffd}'\n", 5));

        let fine = dir.path().join("fine.py");
        std::fs::write(&fine, "print(1)\n").unwrap();
        assert_eq!(read_plan(&fine).unwrap(), "print(1)\n");
    }

    #[test]
    fn a_second_run_of_the_same_plan_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("plan.py");
        let trace = dir.path().join("plan.zjson");
        let held = lock(&plan, &trace).unwrap();
        let e = lock(&plan, &trace).unwrap_err();
        assert!(
            matches!(&e, RunSetupError::Locked(RunLockError::Busy { trace: t }) if *t == trace),
            "{e:?}"
        );
        drop(held);
        assert!(lock(&plan, &trace).is_ok());
    }

    #[test]
    fn tools_that_cannot_work_refuse_the_run_with_their_keys() {
        let dir = tempfile::tempdir().unwrap();
        let chosen = |origin| Chosen {
            policy: policy(
                "version: 1\ntools:\n  f: { effect: read, args: {} }\n",
                dir.path(),
            ),
            text: Vec::new(),
            origin,
            sha256: String::new(),
            warnings: Vec::new(),
        };
        let plan = Path::new("p.py");
        let file = chosen(Origin::Flag(PathBuf::from("pol.yaml")));
        assert!(check_tools(&file, "print(1)\n", plan).is_ok());
        assert!(
            check_tools(&file, "f(\n", plan).is_ok(),
            "a plan that does not parse is the run's"
        );
        let e = check_tools(&file, "f()\n", plan).unwrap_err();
        let RunSetupError::ToolsUnready {
            problems, policy, ..
        } = &e
        else {
            panic!("{e:?}");
        };
        assert_eq!(policy, "pol.yaml");
        assert_eq!(problems, &[SetupProblem::NoSource { tool: "f".into() }]);
        assert_eq!(
            e.to_string(),
            "p.py cannot run: 1 tool it names in pol.yaml cannot work on this machine (nothing ran)\n  \
             tool `f` has no `source:` in the policy, so nothing can serve it; change `tools.f.source`"
        );
        let e = check_tools(&chosen(Origin::BuiltIn), "f()\n", plan).unwrap_err();
        assert!(
            matches!(e, RunSetupError::DefaultPolicyUnfit { .. }),
            "{e:?}"
        );
    }
}
