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
//! It is also the one run driver every front door goes through (`zamburak run`, `mcp serve`'s `run_plan`, the
//! Python package through `run`): [`check`] reads the plan's names from its one parse and checks its tools,
//! [`Checked::prepare`] takes the lock, starts exactly the MCP servers those names need and creates the
//! trace with its [`header`], and [`Prepared::run`] runs the plan, suspends it at a claim and closes the
//! trace. A decision on a claim continues the run through `runtime::snapshot::decide`, which starts its
//! servers from the same names ([`servers_for`]).
//!
//! Nothing here prints or picks an exit code: the CLI does, from the variant (`run`), as the Python package
//! and the MCP server will.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::known::store::Store;
use crate::lower::Mode;
use crate::mcp::hub::CallError;
use crate::mcp::lock::LockError;
use crate::plan::{Audience, Diagnostic, ParsedPlan};
use crate::planner::ContextLabel;
use crate::policy::discover::{Chosen, Origin};
use crate::policy::servers::ToolSource;
use crate::policy::{Policy, PolicyError};
use crate::runtime::machine::Machine;
use crate::runtime::run::{
    Approver, Backend, Engine, Failure, Run, RunInput, RunReport, Status, ToolBackend,
};
use crate::runtime::snapshot::{self, RunLockError, SnapshotError};
use crate::runtime::worker::stop::StopSwitch;
use crate::tools::{Builtins, ToolError};
use crate::trace::record::{Header, Record};
use crate::trace::{TraceError, TraceWriter};

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

/// A plan read, parsed once, and checked against what this machine can serve: the first half of a run's
/// setup, after which a front door says which policy decides (`run` prints it) before anything is locked,
/// started or written ([`Checked::prepare`]).
pub struct Checked<'c> {
    chosen: &'c Chosen,
    plan: PathBuf,
    source: String,
    /// The one parse of the plan: the run checks and lowers it, and its names pick the tools and servers.
    parsed: Result<ParsedPlan, Vec<Diagnostic>>,
    /// The identifiers the plan mentions (a superset of the tools it can call); empty when it does not
    /// parse.
    names: BTreeSet<String>,
    /// The mode that decides.
    pub mode: Mode,
}

/// Parses the plan `source` (read from `plan`) once and checks that every tool it names can work on this
/// machine under the chosen policy ([`problems`]). A plan that does not parse passes: the run reports it
/// with its diagnostics, and it needs no tool.
pub fn check<'c>(
    chosen: &'c Chosen,
    plan: &Path,
    source: String,
    mode: Mode,
) -> Result<Checked<'c>, RunSetupError> {
    let parsed = crate::plan::parse(&source);
    let names = match &parsed {
        Ok(p) => crate::plan::names::mentioned(&p.module),
        Err(_) => BTreeSet::new(),
    };
    let problems = problems(&chosen.policy, &names);
    if !problems.is_empty() {
        let plan = plan.to_path_buf();
        if chosen.origin == Origin::BuiltIn {
            return Err(RunSetupError::DefaultPolicyUnfit { plan, problems });
        }
        return Err(RunSetupError::ToolsUnready {
            plan,
            policy: chosen.display_path(),
            problems,
        });
    }
    Ok(Checked {
        chosen,
        plan: plan.to_path_buf(),
        source,
        parsed,
        names,
        mode,
    })
}

/// How a front door wants its run set up.
pub struct Setup<'s> {
    /// Where the trace is written.
    pub trace: PathBuf,
    /// Where the plan's interpreter runs.
    pub engine: Engine,
    /// The planner context the plan was written in (`mcp serve`): its literals carry that label, and the
    /// trace's header records it. `None`: a plan given as a file, trusted as written.
    pub context: Option<ContextLabel>,
    /// Ends the run from outside (`mcp serve`'s run timeout and shutdown): its MCP servers' process groups
    /// are attached to it, and once it is pulled no further tool call starts.
    pub stop: Option<Arc<StopSwitch>>,
    /// Keep the values the trace names by digest in `PLAN.zvalues`, for `view --reveal`.
    pub keep_values: bool,
    /// How long a claim waits for a decision.
    pub ttl_secs: u64,
    /// Called just before the first MCP server starts (`run` arms Ctrl-C to stop them).
    pub before_servers: Option<&'s dyn Fn()>,
}

/// The policy's MCP servers ready for a plan that mentions `names`: the lock must cover the policy, and
/// every server serving a tool among the names is started and must still match its lock, before anything
/// is written or run. Returns the backend and the servers started. `before_start` runs just before the
/// first server starts.
pub fn servers_for(
    policy: &Policy,
    policy_path: Option<&Path>,
    names: &BTreeSet<String>,
    before_start: Option<&dyn Fn()>,
) -> Result<(ToolBackend, Vec<String>), RunSetupError> {
    let mut backend = ToolBackend::for_policy(policy, policy_path)?;
    let mut started = Vec::new();
    if let Some(hub) = backend.hub() {
        if let Some(before) = before_start {
            before();
        }
        match hub.start_for(policy, names) {
            Ok(servers) => started = servers,
            Err(e) => {
                hub.shutdown();
                return Err(RunSetupError::McpStart(e));
            }
        }
    }
    Ok((backend, started))
}

/// The trace's header of a run: the one place a run's header is made, for every front door.
fn header(
    checked: &Checked<'_>,
    context: Option<&ContextLabel>,
    backend: &mut ToolBackend,
    servers: Vec<String>,
    known: Option<&Store>,
) -> Header {
    let chosen = checked.chosen;
    let mut header = Header::new(&checked.source, chosen.sha256.clone(), checked.mode.name())
        .with_policy(
            chosen.origin.kind(),
            &chosen.display_path(),
            &String::from_utf8_lossy(&chosen.text),
        );
    header.mcp_lock_sha256 = backend.hub().map(|hub| hub.lock_sha256().to_string());
    header.planner_context = context.cloned();
    header.known_sha256 = known.map(|k| k.digest().to_string());
    header.mcp_servers = servers;
    header
}

impl<'c> Checked<'c> {
    /// The second half of the setup: takes the run's lock ([`lock`]), starts the worker (its prelude
    /// session loads while the rest is set up), opens the person's remembered values, starts exactly the
    /// MCP servers the plan's names need ([`servers_for`]) and creates the trace.
    pub fn prepare(self, setup: Setup<'_>) -> Result<Prepared<'c>, RunSetupError> {
        let policy = &self.chosen.policy;
        let lock = lock(&self.plan, &setup.trace)?;
        let mut machine = setup.engine.machine();
        machine.prepare(&crate::runtime::run::machine_limits(policy));
        let known = crate::runtime::memory::open_for(policy)?;
        let (mut backend, servers) = servers_for(
            policy,
            self.chosen.origin.path(),
            &self.names,
            setup.before_servers,
        )?;
        if let (Some(stop), Some(hub)) = (&setup.stop, backend.hub()) {
            // Refused once the run is stopped: then its worker is refused too, and the run ends at once.
            let _ = stop.attach_groups(hub.pids());
        }
        let header = header(
            &self,
            setup.context.as_ref(),
            &mut backend,
            servers,
            known.as_ref(),
        );
        let mut writer = TraceWriter::create(&setup.trace, header).map_err(|source| {
            RunSetupError::TraceCreate {
                path: setup.trace.clone(),
                source,
            }
        })?;
        let mut values_warning = None;
        if setup.keep_values {
            let store = crate::trace::values::store_path(&setup.trace);
            match crate::trace::values::ValueStore::create(&store, writer.key()) {
                Ok(s) => writer.keep_values_in(s),
                Err(e) => {
                    values_warning = Some(format!(
                        "cannot keep values for `view --reveal` in {}: {e}",
                        store.display()
                    ))
                }
            }
        }
        Ok(Prepared {
            checked: self,
            trace: setup.trace,
            context: setup.context,
            stop: setup.stop,
            ttl_secs: setup.ttl_secs,
            machine,
            backend,
            writer,
            known,
            values_warning,
            lock,
        })
    }
}

/// A run ready to start: locked, its worker and servers up, its trace begun. Nothing of the plan ran.
pub struct Prepared<'c> {
    checked: Checked<'c>,
    trace: PathBuf,
    context: Option<ContextLabel>,
    stop: Option<Arc<StopSwitch>>,
    ttl_secs: u64,
    machine: Box<dyn Machine>,
    backend: ToolBackend,
    writer: TraceWriter,
    known: Option<Store>,
    /// The values for `view --reveal` cannot be kept (the run and its trace do not need them).
    pub values_warning: Option<String>,
    /// Held until the [`Finished`] run is dropped.
    lock: std::fs::File,
}

/// How the run meets its front door.
pub struct How<'p> {
    /// What the plan prints.
    pub print: &'p mut dyn FnMut(&str),
    /// Puts each `confirm` claim to a person at hand (`run --confirm ask`); else a claim suspends the run.
    pub approver: Option<&'p mut Approver>,
    /// Who reads the diagnostics of a plan refused before it runs.
    pub audience: Audience,
}

/// A run that ended: its report, where its claim's snapshot was saved, and its trace's head.
pub struct Finished {
    pub report: RunReport,
    /// The plan's text, as the run read it.
    pub source: String,
    /// The trace's path.
    pub trace: PathBuf,
    /// A suspended run: where its snapshot was saved, or why it could not be (then nobody can approve the
    /// claim, and the run is over).
    pub snapshot: Option<Result<PathBuf, SnapshotError>>,
    /// The trace's head, or why it could not be completed.
    pub head: Result<String, TraceError>,
    /// Values stopped being kept for `view --reveal` during the run.
    pub values_problem: Option<String>,
    /// The run's lock, held until this is dropped: a front door that reads the run back (`mcp serve`) does
    /// so before any other run or decision of the plan starts.
    pub lock: std::fs::File,
}

impl Prepared<'_> {
    /// Sees each record as it is appended, before its side effect (`run` prints the decision lines).
    pub fn observe(&mut self, observer: impl FnMut(&Record) + 'static) {
        self.writer.observe(observer);
    }

    /// Runs the plan to its end, a denial or a claim; saves a suspended run's snapshot, completes the
    /// trace and stops the run's MCP servers.
    pub fn run(self, how: How<'_>) -> Finished {
        let Prepared {
            checked,
            trace,
            context,
            stop,
            ttl_secs,
            machine,
            mut backend,
            mut writer,
            known,
            values_warning: _,
            lock,
        } = self;
        let Checked {
            chosen,
            plan,
            source,
            parsed,
            mode,
            ..
        } = checked;
        let input = RunInput {
            source: &source,
            policy: &chosen.policy,
            mode,
        };
        let mut run = Run::new(&input)
            .parsed(parsed)
            .on_machine(machine)
            .remembering(known.as_ref())
            .hints_for(how.audience);
        if let Some(context) = &context {
            run = run.in_context(context);
        }
        if let Some(approver) = how.approver {
            run = run.asking(approver);
        }
        let report = match &stop {
            Some(switch) => run.execute(
                &mut Stoppable {
                    inner: &mut backend,
                    switch,
                },
                Some(&mut writer),
                how.print,
            ),
            None => run.execute(&mut backend, Some(&mut writer), how.print),
        };
        let snapshot = (report.status == Status::Suspended).then(|| {
            let ctx = snapshot::SuspendContext {
                plan: &plan,
                plan_source: &source,
                policy: chosen.origin.path(),
                policy_bytes: &chosen.text,
                mode,
                trace: &trace,
                ttl_secs,
                mcp_pins: backend.hub().map(|h| h.pins()).unwrap_or_default(),
            };
            snapshot::suspend(&report, &ctx, &mut writer)
        });
        let values_problem = writer.values_problem().map(|p| p.to_string());
        let head = writer.close();
        if let Some(hub) = backend.hub() {
            if let Some(switch) = &stop {
                switch.detach_groups();
            }
            hub.shutdown();
        }
        Finished {
            report,
            source,
            trace,
            snapshot,
            head,
            values_problem,
            lock,
        }
    }
}

/// The run's tools, refused once its stop switch is pulled: a run stopped between two steps starts no
/// further effect.
struct Stoppable<'a> {
    inner: &'a mut ToolBackend,
    switch: &'a StopSwitch,
}

impl Backend for Stoppable<'_> {
    fn invoke(
        &mut self,
        tool: &str,
        source: Option<&ToolSource>,
        args: &Map<String, Value>,
        draft: Option<&str>,
    ) -> Result<Value, Failure> {
        if let Some(why) = self.switch.stopped() {
            return Err(Failure {
                stopped: Some(why),
                ..Failure::from("the run was stopped before this call; it was not made".to_string())
            });
        }
        // A call cut short by the stop (its server killed under it) fails because of the stop: the run
        // ends for that reason, whichever of the failure and the worker's kill the run meets first.
        self.inner
            .invoke(tool, source, args, draft)
            .map_err(|failure| Failure {
                stopped: failure.stopped.or_else(|| self.switch.stopped()),
                ..failure
            })
    }

    fn pin(&self, source: &ToolSource) -> Option<String> {
        self.inner.pin(source)
    }

    fn preview(
        &self,
        source: &ToolSource,
        args: &Map<String, Value>,
    ) -> Option<Result<Value, String>> {
        self.inner.preview(source, args)
    }
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
        let check_tools = |chosen: &Chosen, source: &str| {
            check(chosen, plan, source.to_string(), Mode::Strict).map(|_| ())
        };
        assert!(check_tools(&file, "print(1)\n").is_ok());
        assert!(
            check_tools(&file, "f(\n").is_ok(),
            "a plan that does not parse is the run's"
        );
        let e = check_tools(&file, "f()\n").unwrap_err();
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
        let e = check_tools(&chosen(Origin::BuiltIn), "f()\n").unwrap_err();
        assert!(
            matches!(e, RunSetupError::DefaultPolicyUnfit { .. }),
            "{e:?}"
        );
    }
}
