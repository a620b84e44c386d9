//! `zamburak mcp serve`: Zamburak as an MCP server over stdio (rmcp's server side), so any MCP client's model
//! writes plans and Zamburak runs them under the policy. Four tools: `describe_tools` (what a planner is
//! given, `zamburak stubs --format markdown`; the stub module is also the resource `zamburak://stubs.pyi`),
//! `lint_plan` (lint's JSON document), `run_plan` (a run, each in its own worker process, answered by
//! [`answer`]) and `run_status` (a run's state later, read from its trace). No tool approves: a claim
//! waits for the person (docs/serve.md).
//!
//! The server never returns text the planner may not read (docs/semantics.md, "What the planner and the
//! person are told"). A bad request (a missing argument, a plan too large) is a tool error result; a run
//! that fails inside the server (a panic, a worker that died) is an error result too, and the server goes
//! on. Runs are bounded (`--max-runs`, `--run-timeout`) and their workers come warm from a pool
//! ([`runs`]); the session ends when the client closes stdin (or sends a message over
//! [`input::MAX_MESSAGE_BYTES`]) or at SIGTERM/SIGINT, and every child goes with it ([`session`]).
//!
//! Nothing here prints: the CLI announces the policy and reports a failure to start ([`ServeError`]).

pub mod answer;
pub mod input;
pub mod runner;
pub mod runs;
mod session;

pub use runs::Ops;
pub use session::Ended;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::policy::discover::Chosen;
use crate::runtime::setup::MAX_PLAN_BYTES;
use runner::Runner;

/// Why the server could not start or stopped on its own.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The policy's MCP lock is missing or stale: the stubs (and every run) need it.
    #[error(transparent)]
    Lock(Box<crate::mcp::lock::LockError>),
    /// This binary cannot be found to start the runs' workers.
    #[error(transparent)]
    Setup(Box<crate::runtime::setup::RunSetupError>),
    /// The runs directory cannot be created.
    #[error("cannot create the runs directory {}: {source}", path.display())]
    Runs {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The async runtime or the MCP session failed.
    #[error("the MCP session failed: {0}")]
    Session(String),
}

// Boxed: both are large, and every fallible step of the start returns this error.
impl From<crate::mcp::lock::LockError> for ServeError {
    fn from(e: crate::mcp::lock::LockError) -> ServeError {
        ServeError::Lock(Box::new(e))
    }
}

impl From<crate::runtime::setup::RunSetupError> for ServeError {
    fn from(e: crate::runtime::setup::RunSetupError) -> ServeError {
        ServeError::Setup(Box::new(e))
    }
}

/// The server: the policy, the stubs text made from it once, and where runs go.
struct Server {
    runner: Arc<Runner>,
    /// `zamburak stubs --format markdown`: what `describe_tools` answers.
    stubs: String,
    /// `zamburak stubs --format pyi`: the [`STUBS_URI`] resource, for clients that give the model files.
    pyi: String,
    next_run: AtomicU64,
    runs: Arc<runs::Runs>,
}

/// The stub module as an MCP resource.
const STUBS_URI: &str = "zamburak://stubs.pyi";

/// The tools' names.
const DESCRIBE: &str = "describe_tools";
const LINT: &str = "lint_plan";
const RUN: &str = "run_plan";
const STATUS: &str = "run_status";

fn schema(properties: Value, required: &[&str]) -> Arc<serde_json::Map<String, Value>> {
    let doc = json!({ "type": "object", "properties": properties, "required": required });
    Arc::new(doc.as_object().cloned().unwrap_or_default())
}

fn tools() -> Vec<Tool> {
    let plan = json!({ "plan": { "type": "string", "description": "The plan: Python in Zamburak's subset." } });
    vec![
        Tool::new(
            DESCRIBE,
            "What a plan may call under this server's policy: typed stubs of its tools and verifiers, what \
             each argument requires, the Python subset and example plans. Read it before writing a plan.",
            schema(json!({}), &[]),
        ),
        Tool::new(
            LINT,
            "Check a plan without running it: lint's JSON diagnostics (codes, lines, messages, fixes) and \
             the predicted decision of each tool call.",
            schema(plan.clone(), &["plan"]),
        ),
        Tool::new(
            RUN,
            "Run a plan under the policy. Returns the status, each tool call's decision, where the plan \
             stopped, and what it printed when you may read it; data you may not read is shown to the \
             person instead and named by its label. A call that needs the person's approval waits for \
             them: you cannot approve it.",
            schema(plan, &["plan"]),
        ),
        Tool::new(
            STATUS,
            "The state of an earlier run (pending, completed, denied, error…), e.g. after the person \
             decided on a waiting call.",
            schema(
                json!({ "run": { "type": "string", "description": "The run id run_plan returned, e.g. run-1." } }),
                &["run"],
            ),
        ),
    ]
}

/// A tool error result in Zamburak's words.
fn tool_error(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_string())])
}

/// The string argument `name`, or what to answer instead.
fn string_arg<'a>(request: &'a CallToolRequestParams, name: &str) -> Result<&'a str, String> {
    match request.arguments.as_ref().and_then(|a| a.get(name)) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("argument `{name}` must be a string")),
        None => Err(format!("missing argument `{name}` (a string)")),
    }
}

/// A plan argument within the size limit `zamburak run` has for plan files.
fn plan_arg(request: &CallToolRequestParams) -> Result<&str, String> {
    let plan = string_arg(request, "plan")?;
    if plan.len() as u64 > MAX_PLAN_BYTES {
        return Err(format!("the plan is larger than {MAX_PLAN_BYTES} bytes"));
    }
    Ok(plan)
}

impl Server {
    /// Lints on a blocking thread: a large plan takes a while, and the session's threads stay free.
    async fn lint(&self, plan: String) -> CallToolResult {
        let runner = Arc::clone(&self.runner);
        let linted = tokio::task::spawn_blocking(move || {
            let policy = &runner.chosen.policy;
            let report = crate::analysis::lint(&plan, policy, policy.mode());
            crate::analysis::output::json(&report, "plan.py")
        })
        .await;
        match linted {
            Ok(doc) => CallToolResult::structured(doc),
            Err(_) => tool_error("lint failed inside the server"),
        }
    }

    async fn run(&self, plan: String) -> CallToolResult {
        let ticket = match self.runs.begin().await {
            Ok(ticket) => ticket,
            Err(why) => return tool_error(&why),
        };
        let n = self.next_run.fetch_add(1, Ordering::Relaxed);
        match (self.runs)
            .run(Arc::clone(&self.runner), n, plan, ticket)
            .await
        {
            Ok(doc) => CallToolResult::structured(doc),
            Err(why) => tool_error(why),
        }
    }

    async fn status(&self, id: String) -> CallToolResult {
        let runner = Arc::clone(&self.runner);
        match tokio::task::spawn_blocking(move || runner.status(&id)).await {
            Ok(Ok(doc)) => CallToolResult::structured(doc),
            Ok(Err(message)) => tool_error(&message),
            Err(_) => tool_error("reading the run failed inside the server"),
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
            .with_server_info(Implementation::new("zamburak", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Zamburak runs the plans you write (Python in a small subset) under its user's policy. Call \
                 describe_tools first, lint_plan to check a plan, run_plan to run it. Data from tools is \
                 shown to the person, not to you; calls that need their approval wait for them.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let stubs = Resource::new(STUBS_URI, "stubs.pyi")
            .with_description("Typed stubs of the tools a plan may call under this server's policy")
            .with_mime_type("text/x-python");
        Ok(ListResourcesResult::with_all_items(vec![stubs]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != STUBS_URI {
            return Err(McpError::resource_not_found(
                format!("no such resource: the one resource is {STUBS_URI}"),
                None,
            ));
        }
        Ok(
            ReadResourceResult::new(vec![ResourceContents::text(self.pyi.clone(), STUBS_URI)])
                .into(),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let result = match request.name.as_ref() {
            DESCRIBE => CallToolResult::success(vec![ContentBlock::text(self.stubs.clone())]),
            LINT => match plan_arg(&request) {
                Ok(plan) => self.lint(plan.to_string()).await,
                Err(e) => tool_error(&e),
            },
            RUN => match plan_arg(&request) {
                Ok(plan) => self.run(plan.to_string()).await,
                Err(e) => tool_error(&e),
            },
            STATUS => match string_arg(&request, "run") {
                Ok(id) => self.status(id.to_string()).await,
                Err(e) => tool_error(&e),
            },
            _ => tool_error(
                "no such tool: the tools are describe_tools, lint_plan, run_plan and run_status",
            ),
        };
        Ok(result.into())
    }
}

/// Where runs go: `runs`, or a new private directory under the system's temporary directory.
pub fn runs_dir(runs: Option<PathBuf>) -> Result<PathBuf, ServeError> {
    use std::os::unix::fs::DirBuilderExt;
    let path = runs.unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "zamburak-serve-{}-{}",
            std::process::id(),
            jiff::Timestamp::now().as_millisecond()
        ))
    });
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&path)
        .map_err(|source| ServeError::Runs {
            path: path.clone(),
            source,
        })?;
    // Absolute, so the paths in answers and on stderr lead the person to the run from anywhere.
    Ok(std::fs::canonicalize(&path).unwrap_or(path))
}

/// Serves MCP on stdin/stdout with `chosen` deciding every run, runs kept under `runs` (or a new temporary
/// directory, [`runs_dir`]), until the client leaves or a signal comes ([`Ended`]); every child is gone
/// when it returns.
pub fn serve(
    chosen: Chosen,
    runs: PathBuf,
    approval_ttl_secs: u64,
    ops: &Ops,
) -> Result<Ended, ServeError> {
    let lock = crate::mcp::lock::check_offline(&chosen.policy, chosen.origin.path())?;
    let catalogue = crate::stubs::catalogue(&chosen.policy, lock.as_ref().map(|(l, _)| l));
    let stubs = crate::stubs::markdown::render(&catalogue, &chosen.policy);
    let pyi = crate::stubs::pyi::render(&catalogue);
    let exe = std::env::current_exe().map_err(crate::runtime::setup::RunSetupError::NoWorker)?;
    let limits = crate::runtime::run::machine_limits(&chosen.policy);
    let pool = crate::runtime::worker::pool::Pool::start(
        exe,
        crate::runtime::worker::process::WorkerArgs::for_limits(&limits),
        ops.warm_workers,
    );
    let live = runs::Runs::new(ops);
    let server = Server {
        runner: Arc::new(Runner {
            chosen,
            pool: Arc::clone(&pool),
            runs,
            approval_ttl_secs,
        }),
        stubs,
        pyi,
        next_run: AtomicU64::new(1),
        runs: Arc::clone(&live),
    };
    session::run(server, &live, &pool)
}
