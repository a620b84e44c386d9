//! The `zamburak` command line: parsing the arguments and dispatching to the command modules below. This
//! layer is the only place that prints and picks exit codes; the library below it returns values and
//! typed errors.

pub mod approve;
pub mod compile;
pub mod decisions;
pub mod interrupt;
pub mod known;
pub mod lint;
pub mod mcp;
pub mod output;
pub mod pending;
pub mod policy;
pub mod run;
pub mod stubs;
pub mod verify;
pub mod view;

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// Run an AI agent's Python plan on private data without letting prompt injection steer it.
///
/// Typical use: `zamburak lint plan.py` while the planner drafts, `zamburak run plan.py` to execute it under
/// the policy, `zamburak verify plan.zjson` and `zamburak view plan.zjson` to audit what happened.
///
/// Exit codes: 0 success, 1 plan rejected or failed (or a tampered trace), 2 usage or configuration error
/// (or a file that is not a trace), 3 a tool call was denied by policy, 4 the run is suspended waiting for
/// an approval, 5 a trace is intact but incomplete (no end record: the run was interrupted).
#[derive(Parser, Debug)]
#[command(name = "zamburak", version, about, long_about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What each command's exit codes mean, shown at the end of its `--help` (PRODUCT.md's table, per command).
mod exit_help {
    pub const LINT: &str = "Exit codes: 0 no errors (warnings only), 1 the plan has errors, 2 usage or configuration \
error (unreadable plan, invalid policy).";
    pub const RUN: &str = "Exit codes: 0 the run completed, 1 the plan was rejected or failed (lint error, exception, \
failed verifier), 2 usage or configuration error (nothing ran), 3 a tool call was denied by policy, 4 the run is \
suspended waiting for an approval (see `zamburak pending`).";
    pub const APPROVE: &str = "Exit codes: 0 the continued run completed, 1 it failed, 3 a later call was denied, \
4 it is suspended again on the next claim, 2 nothing was decided (wrong or missing --claim, expired claim, \
unreadable snapshot).";
    pub const REJECT: &str = "Exit codes: 0 the claim was rejected and the run closed, 2 when nothing was decided \
(wrong --claim, unreadable snapshot).";
    pub const PENDING: &str =
        "Exit codes: 0 listed (even when nothing waits), 2 a directory cannot be read.";
    pub const RENEW: &str = "Exit codes: 0 renewed: the claim waits again (approve or reject it as shown), 2 \
nothing was renewed (the snapshot does not check against its trace, plan, policy or claim).";
    pub const KNOWN: &str = "Exit codes: 0 listed or forgotten, 2 the remembered values cannot be read or were \
changed outside Zamburak (`known forget --all` removes them), or the value to forget is not remembered.";
    pub const VERIFY: &str = "Exit codes: 0 the chain checks and the run ended, 1 broken (tampered: an edited, \
removed, reordered or cut record), 2 the file cannot be read or is not a Zamburak trace, 4 the chain checks and the \
run is suspended waiting for an approval (or its claim expired and waits for a rejection), 5 incomplete: the chain \
checks but has no end record (the run was interrupted, or the end of the file was cut off).";
    pub const VIEW: &str = "Exit codes: 0 served until stopped or exported, 1 exported a trace whose chain is broken, \
2 usage error (unreadable file or not a Zamburak trace: nothing is written; address not on loopback), 5 exported a \
trace that is intact but has no end record (an interrupted run; also said on stderr).";
    pub const POLICY_INIT: &str = "Exit codes: 0 written, 2 usage error (FILE exists without --force, a folder \
cannot be created, the server cannot be started).";
    pub const POLICY_CHECK: &str =
        "Exit codes: 0 the policy is valid, 2 it is not (the error says where and why).";
    pub const POLICY_COMPILE: &str = "Exit codes: 0 the draft is verified and written, 1 refused: the draft \
failed verification (nothing written; with --force, written anyway), 2 usage or input error (bad flag, unreadable \
constitution or base policy, unknown provider, a provider that fails or answers unusably; nothing written). \
See docs/policy.md, \"Compiling a policy from plain words\".";
    pub const POLICY_TEST: &str = "Exit codes: 0 every scenario passed, 1 a scenario failed, 2 the scenarios file or \
the policy cannot be used. The file format is in docs/policy-test.md.";
    pub const MCP_LIST: &str =
        "Exit codes: 0 listed, 2 the server cannot be started or speaks no MCP.";
    pub const MCP_LOCK: &str =
        "Exit codes: 0 locked, 2 usage error (no policy, a server cannot be started).";
    pub const MCP_DIFF: &str =
        "Exit codes: 0 the servers match the lock, 1 a pinned tool changed, 2 usage error.";
    pub const MCP_FORGET_CONTEXT: &str =
        "Exit codes: 0 forgotten (or none was kept), 2 the kept context cannot be removed.";
    pub const MCP_SERVE: &str = "Exit codes: 0 the client closed the session, 2 the policy, its MCP lock or the runs \
         directory cannot be used, the review queue cannot be started, or the session failed (a message larger \
         than 8 MiB closes it), 143 stopped by SIGTERM, 130 by SIGINT. Every worker and MCP server the server \
         started is gone when it exits.";
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check a plan before it runs: predicts the labels reaching every tool call and rejects plans the
    /// policy can never allow.
    #[command(after_help = exit_help::LINT)]
    Lint(lint::LintArgs),
    /// Run a plan with every tool call checked against the policy, writing a hash-chained trace.
    #[command(after_help = exit_help::RUN)]
    Run(run::RunArgs),
    /// Approve the claim a suspended run waits on, and continue the run.
    #[command(after_help = exit_help::APPROVE)]
    Approve(approve::ApproveArgs),
    /// Reject the claim a suspended run waits on: the call never happens and the run stops.
    #[command(after_help = exit_help::REJECT)]
    Reject(approve::RejectArgs),
    /// A suspended run's claim: renew it (`claim renew SNAPSHOT`).
    Claim {
        #[command(subcommand)]
        action: ClaimAction,
    },
    /// List the values you remembered when approving (`approve --remember`), or forget one.
    #[command(after_help = exit_help::KNOWN)]
    Known {
        #[command(subcommand)]
        action: Option<KnownAction>,
        #[arg(long, value_enum, default_value_t = RunFormat::Text)]
        format: RunFormat,
    },
    /// List every claim waiting for a decision under the given directories (default: the current one).
    #[command(after_help = exit_help::PENDING)]
    Pending {
        /// Directories to search (each to 8 levels).
        dirs: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = RunFormat::Text)]
        format: RunFormat,
    },
    /// Check a trace's hash chain; prints the head hash, or the first broken record (exit 1).
    #[command(after_help = exit_help::VERIFY)]
    Verify {
        /// The trace file (.zjson).
        trace: PathBuf,
    },
    /// Serve a trace as a redacted lineage graph on loopback, or export it to one HTML file; with
    /// --queue, serve the claims waiting for a decision, to approve or reject in the browser.
    #[command(after_help = exit_help::VIEW)]
    View {
        /// The trace file (.zjson); with --queue, the directories to search for pending claims (default:
        /// the current one).
        #[arg(value_name = "TRACE|DIR")]
        paths: Vec<PathBuf>,
        /// Loopback address to bind, e.g. 127.0.0.1:8080. Default: a free port on 127.0.0.1.
        #[arg(long)]
        addr: Option<String>,
        /// Write one self-contained HTML file and exit instead of serving.
        #[arg(long, conflicts_with = "queue")]
        export: Option<PathBuf>,
        /// Owner mode: show your own private values (from PLAN.zvalues) on the served pages.
        #[arg(long, conflicts_with = "queue")]
        reveal: bool,
        /// Keep only what READER may read (a principal: `llm:planner`, an address), cut where the
        /// planner's answer is cut: the trace as you may give it to READER.
        #[arg(long = "for", value_name = "READER", conflicts_with_all = ["queue", "reveal"])]
        for_reader: Option<String>,
        /// Serve the review queue: every claim pending under the directories, each with its own Approve
        /// and Reject buttons.
        #[arg(long)]
        queue: bool,
        /// With --queue: who decides (recorded in the trace). Default: $USER.
        #[arg(long, requires = "queue")]
        by: Option<String>,
    },
    /// Print what a planner is given: typed stubs of the policy's tools and verifiers, what each argument
    /// requires, the Python subset and example plans.
    ///
    /// Exit codes: 0 printed, 2 the policy or its MCP lock cannot be used.
    Stubs {
        /// Policy file (YAML). Default: the nearest zamburak.yaml up from here, else the built-in default.
        #[arg(long)]
        policy: Option<PathBuf>,
        /// `pyi`: a stub module for type checkers; `markdown`: the text for a planner's system prompt;
        /// `json`: the same for programs.
        #[arg(long, value_enum, default_value_t = StubsFormat::Pyi)]
        format: StubsFormat,
    },
    /// Work with policy files.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// The plan's interpreter in a worker process (started by `run` and `approve`; not for people).
    #[command(name = "__worker", hide = true)]
    Worker {
        max_memory_mb: u32,
        cpu_secs: u64,
        /// Load the prelude session before the first request.
        #[arg(long)]
        preload: bool,
    },
    /// MCP servers: list a server's tools, pin the policy's tools in a lock file, show what changed;
    /// serve Zamburak to an MCP client.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
}

/// `zamburak claim renew`.
#[derive(Subcommand, Debug)]
pub enum ClaimAction {
    /// Show a claim again with a new expiry, so that it can be decided afresh without re-running the plan
    /// (an expired claim included). Nothing runs.
    #[command(after_help = exit_help::RENEW)]
    Renew {
        /// The snapshot `run` wrote (TRACE.zsnap).
        snapshot: PathBuf,
        /// Seconds the renewed claim may wait. Default: as long as it could when it was made.
        #[arg(long, value_name = "SECONDS")]
        approval_ttl: Option<u64>,
    },
}

/// `zamburak known forget`.
#[derive(Subcommand, Debug)]
pub enum KnownAction {
    /// Forget a remembered value (every tool argument it was remembered for), or all of them.
    #[command(after_help = exit_help::KNOWN)]
    Forget {
        /// The value, exactly as `zamburak known` lists it.
        #[arg(required_unless_present = "all")]
        value: Option<String>,
        /// Forget every remembered value (also the way out of a store that was changed outside Zamburak).
        #[arg(long, conflicts_with = "value")]
        all: bool,
    },
}

#[derive(Subcommand, Debug)]
enum McpCommand {
    /// Start a server and print its tools, with their arguments, hints and pins.
    #[command(after_help = exit_help::MCP_LIST)]
    List {
        /// Print the server's tool definitions as JSON.
        #[arg(long)]
        json: bool,
        /// Pass this environment variable to the server (repeatable); it gets only these and PATH.
        #[arg(long = "env", value_name = "VAR")]
        env: Vec<String>,
        /// The server command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Start the policy's servers and pin every tool the policy uses in POLICY.mcp.lock.
    #[command(after_help = exit_help::MCP_LOCK)]
    Lock {
        /// The policy file. Default: zamburak.yaml in the current directory.
        #[arg(long)]
        policy: Option<PathBuf>,
    },
    /// Compare the policy's live servers with the lock; exit 1 when a pinned tool changed.
    #[command(after_help = exit_help::MCP_DIFF)]
    Diff {
        /// The policy file. Default: zamburak.yaml in the current directory.
        #[arg(long)]
        policy: Option<PathBuf>,
    },
    /// Serve Zamburak to an MCP client over stdio: the client's model writes plans, Zamburak runs them
    /// under the policy and tells the model only what it may read (docs/serve.md).
    #[command(after_help = exit_help::MCP_SERVE)]
    Serve {
        /// Policy file (YAML). Default: the nearest zamburak.yaml up from here, else the built-in default.
        #[arg(long)]
        policy: Option<PathBuf>,
        /// Keep each run (plan, trace, snapshot, output) under this directory. Default: a new directory
        /// under the system's temporary directory, named on stderr.
        #[arg(long, value_name = "DIR")]
        runs: Option<PathBuf>,
        /// Seconds a `confirm` claim waits for the person (default 600): an agent's person may be slower
        /// than a terminal's.
        #[arg(long, value_name = "SECONDS")]
        approval_ttl: Option<u64>,
        /// Wall-clock seconds a run may take, its tool calls included (default 60); then its worker and
        /// MCP servers are killed, its trace ends with a TimeoutError, and the answer says it timed out.
        #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86400))]
        run_timeout: Option<u64>,
        /// Worker processes kept started ahead of runs, so a run does not wait for one (default 2; 0:
        /// each run starts its own). A worker serves one run only.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=64))]
        warm_workers: Option<u64>,
        /// Runs under way at once (default 8); more wait for a slot, and past 64 waiting a run is refused.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
        max_runs: Option<u64>,
        #[command(flatten)]
        person: mcp::PersonArgs,
    },
    /// Forget the planner context kept in a runs directory (what a `reads_untrusted` planner was told):
    /// the next session there starts trusted. Only you do this; no tool of the server can.
    #[command(after_help = exit_help::MCP_FORGET_CONTEXT)]
    ForgetContext {
        /// The runs directory `mcp serve --runs` was given.
        #[arg(long, value_name = "DIR")]
        runs: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
enum PolicyCommand {
    /// Write a starting policy: for the built-in mail, files and web tools (the built-in default with its
    /// data paths relative to FILE, creating the empty folders it reads), or with --mcp for an MCP
    /// server's tools (safe by default), locked.
    #[command(after_help = exit_help::POLICY_INIT)]
    Init {
        /// The server's name in the policy (tools get `source: mcp.NAME.TOOL`); give its command after `--`.
        #[arg(long, value_name = "NAME")]
        mcp: Option<String>,
        /// The policy file to write.
        #[arg(
            short = 'o',
            long = "output",
            value_name = "FILE",
            default_value = "zamburak.yaml"
        )]
        output: PathBuf,
        /// Pass this environment variable to the server (repeatable); it gets only these and PATH.
        #[arg(long = "env", value_name = "VAR", requires = "mcp")]
        env: Vec<String>,
        /// Replace FILE if it exists.
        #[arg(long)]
        force: bool,
        /// With --mcp: the server command and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    #[command(after_help = exit_help::POLICY_CHECK)]
    Check {
        /// The policy file (YAML).
        file: PathBuf,
    },
    /// Draft a policy from a plain-language constitution with an LLM provider of the base policy, verify
    /// it (policy check, drafted scenarios, the attack battery), and write it with its scenarios only when
    /// verified; prints the diff against the base. Never applied automatically.
    #[command(after_help = exit_help::POLICY_COMPILE)]
    Compile {
        /// The constitution: plain-language lines (a line `exception: TOOL.ARG may be chosen by data
        /// because REASON` waives one battery attack).
        constitution: PathBuf,
        /// The base policy: its tools, providers, servers and builtins. Default: the nearest
        /// zamburak.yaml up from the constitution, else the built-in default.
        #[arg(long, value_name = "BASE")]
        policy: Option<PathBuf>,
        /// The provider that drafts, one of the base policy's `providers:`.
        #[arg(long, value_name = "NAME")]
        provider: String,
        /// The policy file to write.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
        /// Where the drafted scenarios go. Default: FILE with the extension `.scenarios.yaml`.
        #[arg(long, value_name = "FILE")]
        scenarios_out: Option<PathBuf>,
        /// Write the diff against the base policy to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        diff: Option<PathBuf>,
        /// Replace existing files, and write a draft that loads but failed verification.
        #[arg(long)]
        force: bool,
        /// How many times failures go back to the provider for a new draft.
        #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=10))]
        max_repairs: u8,
    },
    /// Run policy scenarios (plan snippets with fixed tool results and expected decisions per mode).
    #[command(after_help = exit_help::POLICY_TEST)]
    Test {
        /// The scenarios file (YAML).
        scenarios: PathBuf,
        /// Use this policy instead of the one the scenarios file names.
        #[arg(long)]
        policy: Option<PathBuf>,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum StubsFormat {
    Pyi,
    Markdown,
    Json,
}

/// `--format` of the commands that print a run or a list: text for a person, or one JSON document.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunFormat {
    Text,
    Json,
}

/// The policy that decides a plan, and the mode it decides in: `--policy` and `--mode` of `lint` and `run`,
/// said once.
#[derive(clap::Args, Debug, Clone)]
pub struct PolicyArgs {
    /// Policy file (YAML). Default: the nearest zamburak.yaml up from the plan, else the built-in default.
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// Override the policy's mode. Keep the policy's (strict unless it says otherwise): strict also
    /// labels what a plan assigns inside an `if` or loop that tool data decides, so data cannot leak
    /// through which branch ran. Pick normal only to see whether a plan fails for that reason alone.
    #[arg(long, value_enum)]
    pub mode: Option<crate::mode::Mode>,
}

/// Adds "a similar subcommand exists" to an unknown subcommand when clap found none: clap only suggests
/// names that are alike by Jaro similarity, which misses short slips (`rn` for `run`, `lnt` for `lint`).
fn suggest_subcommand(error: &mut clap::Error) {
    use clap::CommandFactory;
    use clap::error::{ContextKind, ContextValue};
    if error.get(ContextKind::SuggestedSubcommand).is_some() {
        return;
    }
    let Some(ContextValue::String(typed)) = error.get(ContextKind::InvalidSubcommand) else {
        return;
    };
    let typed = typed.clone();
    // The command whose subcommand was mistyped: follow the known names given before it.
    let mut command = Cli::command();
    for arg in std::env::args().skip(1) {
        if arg == typed {
            break;
        }
        if let Some(sub) = command.find_subcommand(&arg) {
            command = sub.clone();
        }
    }
    let best = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(|sub| sub.get_name().to_string())
        .map(|name| (crate::plan::structure::edit_distance(&typed, &name), name))
        .filter(|(distance, name)| *distance <= 2 && *distance < name.len())
        .min();
    if let Some((_, name)) = best {
        error.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(vec![name]),
        );
    }
}

/// Whether the command line is a `lint` that asked for SARIF (`--format sarif` or `--format=sarif`), read
/// from the raw arguments because clap could not parse them.
fn wants_sarif() -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let lint = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .is_some_and(|a| a == "lint");
    let sarif = args
        .windows(2)
        .any(|w| w[0] == "--format" && w[1] == "sarif")
        || args.iter().any(|a| a == "--format=sarif");
    lint && sarif
}

/// Where `run` and `approve` run a plan's interpreter: a worker process started from this binary.
fn worker_engine() -> Result<crate::runtime::run::Engine, crate::runtime::setup::RunSetupError> {
    crate::runtime::setup::worker_engine()
}

/// Runs the command line and returns the process exit code.
pub fn main() -> crate::exit::Exit {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(mut e) => {
            suggest_subcommand(&mut e);
            let _ = e.print();
            if e.use_stderr() && wants_sarif() {
                lint::sarif_usage_error(&e.kind().to_string());
            }
            // clap uses 0 for --help/--version and 2 for usage errors, which matches our contract.
            return crate::exit::Exit::from_code(e.exit_code());
        }
    };
    let code = match cli.command {
        Command::Lint(args) => lint::lint_command(&args),
        Command::Run(args) => run::run_command(&args),
        Command::Approve(args) => approve::approve_command(&args),
        Command::Reject(args) => approve::reject_command(&args),
        Command::Claim {
            action:
                ClaimAction::Renew {
                    snapshot,
                    approval_ttl,
                },
        } => approve::renew_command(&snapshot, approval_ttl),
        Command::Known { action, format } => {
            known::command(action, matches!(format, RunFormat::Json))
        }
        Command::Pending { dirs, format } => {
            pending::pending_command(&dirs, matches!(format, RunFormat::Json))
        }
        Command::Verify { trace } => verify::verify_command(&trace),
        Command::Worker {
            max_memory_mb,
            cpu_secs,
            preload,
        } => crate::runtime::worker::serve::serve(max_memory_mb, cpu_secs, preload),
        Command::View {
            paths,
            addr,
            export,
            reveal,
            for_reader,
            queue,
            by,
        } => match (queue, paths.as_slice()) {
            (true, dirs) => view::queue_command(dirs, addr.as_deref(), by.as_deref()),
            (false, [trace]) => view::view_command(
                trace,
                view::Show {
                    addr: addr.as_deref(),
                    export: export.as_deref(),
                    reveal,
                    for_reader: for_reader.as_deref(),
                },
            ),
            (false, _) => {
                output::errln!(
                    "error: `view` shows one trace (`zamburak view TRACE.zjson`), or with --queue the claims \
                     pending under directories (`zamburak view --queue [DIR…]`)"
                );
                crate::exit::USAGE
            }
        },
        Command::Stubs { policy, format } => stubs::stubs_command(
            policy.as_deref(),
            match format {
                StubsFormat::Pyi => stubs::Format::Pyi,
                StubsFormat::Markdown => stubs::Format::Markdown,
                StubsFormat::Json => stubs::Format::Json,
            },
        ),
        Command::Mcp { command } => match command {
            McpCommand::List { json, env, command } => mcp::list_command(&command, &env, json),
            McpCommand::Lock { policy } => mcp::lock_command(policy.as_deref()),
            McpCommand::Diff { policy } => mcp::diff_command(policy.as_deref()),
            McpCommand::Serve {
                policy,
                runs,
                approval_ttl,
                run_timeout,
                warm_workers,
                max_runs,
                person,
            } => {
                let mut ops = crate::serve::Ops::default();
                if let Some(secs) = run_timeout {
                    ops.run_timeout = std::time::Duration::from_secs(secs);
                }
                if let Some(n) = warm_workers.and_then(|n| usize::try_from(n).ok()) {
                    ops.warm_workers = n;
                }
                if let Some(n) = max_runs.and_then(|n| usize::try_from(n).ok()) {
                    ops.max_runs = n;
                }
                mcp::serve_command(policy.as_deref(), runs, approval_ttl, &ops, &person)
            }
            McpCommand::ForgetContext { runs } => mcp::forget_context_command(&runs),
        },
        Command::Policy { command } => match command {
            PolicyCommand::Init {
                mcp: server,
                output,
                env,
                force,
                command,
            } => match server {
                Some(server) => mcp::init_command(&server, &output, &command, &env, force),
                None if command.is_empty() => policy::init_command(&output, force),
                None => {
                    output::errln!(
                        "error: a server command after `--` needs --mcp NAME (the server's name in the policy)"
                    );
                    crate::exit::USAGE
                }
            },
            PolicyCommand::Check { file } => policy::check_command(&file),
            PolicyCommand::Compile {
                constitution,
                policy,
                provider,
                output,
                scenarios_out,
                diff,
                force,
                max_repairs,
            } => compile::compile_command(&compile::CompileArgs {
                constitution,
                policy,
                provider,
                output,
                scenarios_out,
                diff,
                force,
                max_repairs: usize::from(max_repairs),
            }),
            PolicyCommand::Test { scenarios, policy } => {
                policy::test_command(&scenarios, policy.as_deref())
            }
        },
    };
    // A command whose output could not be written did not do its job for whoever reads it: say so, and do
    // not report success.
    let code = match output::failure() {
        Some(e) => {
            output::errln!("error: cannot write the output to stdout: {e}");
            if code == crate::exit::OK {
                crate::exit::USAGE
            } else {
                code
            }
        }
        None => code,
    };
    crate::exit::Exit::from_code(code)
}
