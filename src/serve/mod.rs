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
//! A run that waits on a claim is the person's to decide: its answer carries the link of the claim's page
//! in the review queue the server serves on loopback ([`queue`]), and where the client declared form
//! elicitation the claim is also put to the person as a form ([`ask`]).
//!
//! Nothing here prints: the CLI announces the policy and reports a failure to start ([`ServeError`]).

pub use crate::runtime::answer;
pub mod ask;
pub mod context;
pub mod input;
pub mod queue;
pub mod runner;
pub mod runs;
mod session;
mod tools;

pub use runs::Ops;
pub use session::Ended;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::handler::server::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    Implementation, InputRequest, InputRequests, InputRequiredResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;

use crate::policy::discover::Chosen;
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
    /// The review queue could not be started (`--queue-addr`, or `--no-queue` to go without).
    #[error("the review queue cannot be started: {0}")]
    Queue(#[source] crate::view::server::ServeError),
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
    /// The planner context label of this client's session (docs/semantics.md, "The planner context
    /// label").
    context: Arc<context::Session>,
    runs: Arc<runs::Runs>,
    /// How the person is asked and named.
    person: ask::Person,
    /// The review queue, when served.
    queue: Option<queue::Served>,
    /// Forms put in input-required results, awaiting the client's retry.
    asks: ask::Asks,
    /// The four tools ([`tools`]).
    tools: ToolRouter<Server>,
}

/// The stub module as an MCP resource.
const STUBS_URI: &str = "zamburak://stubs.pyi";

/// A tool error result in Zamburak's words.
fn tool_error(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_string())])
}

impl Server {
    /// Lints on a blocking thread: a large plan takes a while, and the session's threads stay free.
    async fn lint(&self, plan: String) -> CallToolResult {
        let runner = Arc::clone(&self.runner);
        // Lint predicts the run of this plan in this session: its literals carry the planner context.
        let context = self.context.context();
        let linted = tokio::task::spawn_blocking(move || {
            let policy = &runner.chosen.policy;
            // Its helps are for the model: they change the plan, never the policy or the mode.
            let report = crate::analysis::lint_for(
                &plan,
                policy,
                policy.mode(),
                &context,
                crate::plan::Audience::Planner,
            );
            crate::analysis::output::json(&report, "plan.py")
        })
        .await;
        match linted {
            Ok(doc) => CallToolResult::structured(doc),
            Err(_) => tool_error("lint failed inside the server"),
        }
    }

    async fn run(&self, plan: String) -> Result<Value, CallToolResult> {
        let ticket = match self.runs.begin().await {
            Ok(ticket) => ticket,
            Err(why) => return Err(tool_error(&why)),
        };
        let n = self.next_run.fetch_add(1, Ordering::Relaxed);
        match (self.runs)
            .run(
                Arc::clone(&self.runner),
                n,
                plan,
                ticket,
                Arc::clone(&self.context),
            )
            .await
        {
            Ok(mut doc) => {
                self.link(&mut doc);
                Ok(doc)
            }
            Err(why) => Err(tool_error(why)),
        }
    }

    async fn status_doc(&self, id: String) -> Result<Value, CallToolResult> {
        let runner = Arc::clone(&self.runner);
        let session = Arc::clone(&self.context);
        match tokio::task::spawn_blocking(move || runner.status(&id, &session)).await {
            Ok(Ok(mut doc)) => {
                self.link(&mut doc);
                Ok(doc)
            }
            Ok(Err(message)) => Err(tool_error(&message)),
            Err(_) => Err(tool_error("reading the run failed inside the server")),
        }
    }

    async fn status(&self, id: String) -> CallToolResult {
        match self.status_doc(id).await {
            Ok(doc) => CallToolResult::structured(doc),
            Err(e) => e,
        }
    }

    /// Where the person sees the run, in the answer's `person`: the run's page in the review queue (no
    /// secret in the link: it opens only in the person's browser), or the command that serves it.
    fn link(&self, doc: &mut Value) {
        let Some(run) = doc.get("run").and_then(Value::as_str).map(str::to_string) else {
            return;
        };
        if runner::run_dir(&self.runner.runs, &run).is_none() {
            return;
        }
        let person = match &self.queue {
            Some(queue) => queue.run_url(&run),
            None => format!(
                "zamburak view --queue {} (the person's review queue; this server serves none)",
                self.runner.runs.display()
            ),
        };
        doc["person"] = person.into();
    }

    /// The claim run `run` waits on, if any: its snapshot and code (the person's; never in the answer).
    fn pending_claim(&self, run: &str) -> Option<(PathBuf, String)> {
        let dir = runner::run_dir(&self.runner.runs, run)?;
        let (path, snapshot) = crate::runtime::snapshot::pending_at(&dir.join("plan.zjson"))?;
        Some((path, snapshot.claim_code()))
    }

    /// A run's answer; when it waits on a claim and the client can show the person a form, the form
    /// first ([`ask`]).
    async fn run_answer(
        &self,
        doc: Value,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let complete = |doc: Value| CallToolResult::structured(doc).into();
        if !self.person.elicit {
            return complete(doc);
        }
        let form_ok = context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        // Whether a claim waits is read from the run's directory, not from the answer: a claim reached
        // after the answer's cut is still put to the person, and the answer still says nothing of it.
        let Some(run) = doc["run"].as_str().map(str::to_string) else {
            return complete(doc);
        };
        let Some((path, code)) = self.pending_claim(&run) else {
            return complete(doc);
        };
        if !form_ok {
            return complete(doc);
        }
        let formed = tokio::task::spawn_blocking(move || ask::form(&run, &path, &code)).await;
        let Ok(Some((shown, params))) = formed else {
            return complete(doc);
        };
        let modern = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        if modern {
            // A 2026-07-28 session: the server may not ask mid-call; the client asks and retries.
            let Some(state) = self.asks.issue(shown) else {
                return complete(doc);
            };
            let mut requests = InputRequests::new();
            requests.insert(
                ask::INPUT_KEY.to_string(),
                InputRequest::Elicitation(ElicitRequest::new(params)),
            );
            return InputRequiredResult::new(Some(requests), Some(state)).into();
        }
        let (answer, remember) = match context
            .peer
            .create_elicitation_with_timeout(params, Some(shown.left))
            .await
        {
            Ok(result) => (ask::answer_of(&result), ask::ticked_of(&result, &shown)),
            Err(_) => (ask::Answer::Undecided, Vec::new()),
        };
        complete(self.settle(doc, &shown, answer, remember).await)
    }

    /// Takes the person's answer to a form: decides the claim (or not) and answers with the run's state.
    async fn settle(
        &self,
        doc: Value,
        shown: &ask::Shown,
        answer: ask::Answer,
        remember: Vec<String>,
    ) -> Value {
        let approve = match answer {
            ask::Answer::Approve => true,
            ask::Answer::Reject => false,
            ask::Answer::Undecided => {
                let mut doc = doc;
                tell_person(&mut doc, ask::told(answer, false));
                return doc;
            }
        };
        let runner = Arc::clone(&self.runner);
        let by = format!("{} (in the MCP client's form)", self.person.by);
        let what = shown.clone();
        let decided = tokio::task::spawn_blocking(move || {
            ask::decide(&runner, &by, &what, approve, &remember)
        })
        .await
        .is_ok_and(|r| r.is_ok());
        let mut doc = match self.status_doc(shown.run.clone()).await {
            Ok(now) => now,
            Err(_) => doc,
        };
        tell_person(&mut doc, ask::told(answer, decided));
        doc
    }

    /// A 2026-07-28 client's retry of `run_plan` with the person's answer to the form it was given.
    async fn answered(&self, request: &CallToolRequestParams, state: &str) -> CallToolResult {
        let Some(shown) = self.asks.take(state) else {
            return tool_error(
                "this answer is to no form this server is waiting on (unknown, or already answered): nothing \
                 was decided; call run_status to see the run",
            );
        };
        let answer = ask::answer_in(request.input_responses.as_ref());
        let remember = ask::ticked_in(request.input_responses.as_ref(), &shown);
        let doc = match self.status_doc(shown.run.clone()).await {
            Ok(doc) => doc,
            Err(e) => return e,
        };
        CallToolResult::structured(self.settle(doc, &shown, answer, remember).await)
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
        .with_instructions(context::instructions(&self.runner.chosen.policy.planner()))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.list_all()))
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
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request, context).await
    }
}

/// What the person did with the form, in the answer's `decided`: only where the answer was not cut (after a
/// cut, even that a claim was reached is the person's).
fn tell_person(doc: &mut Value, told: Value) {
    if doc.get("rest").is_none_or(Value::is_null) {
        doc["decided"] = told;
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
    // Private to the user whoever made it: the runs hold the person's data (output, values, snapshots). A
    // directory that cannot be made private is refused rather than used.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).map_err(|source| {
        ServeError::Runs {
            path: path.clone(),
            source,
        }
    })?;
    // Absolute, so the paths in answers and on stderr lead the person to the run from anywhere.
    Ok(std::fs::canonicalize(&path).unwrap_or(path))
}

/// Serves MCP on stdin/stdout with `chosen` deciding every run, runs kept under `runs` (or a new temporary
/// directory, [`runs_dir`]), until the client leaves or a signal comes ([`Ended`]); every child is gone
/// when it returns. The review queue of `runs` is served on `queue_addr` (a loopback address; `None`: no
/// queue), and `ready` is given its own address (the person's) once it listens.
pub fn serve(
    chosen: Chosen,
    runs: PathBuf,
    approval_ttl_secs: u64,
    ops: &Ops,
    person: ask::Person,
    queue_addr: Option<std::net::SocketAddr>,
    ready: &mut dyn FnMut(&str),
) -> Result<Ended, ServeError> {
    let lock = crate::mcp::lock::check_offline(&chosen.policy, chosen.origin.path())?;
    let catalogue = crate::stubs::catalogue(&chosen.policy, lock.as_ref().map(|(l, _)| l));
    let stubs = format!(
        "{}\n{}",
        crate::stubs::markdown::render(&catalogue, &chosen.policy),
        context::what_you_are_told(&chosen.policy.planner())
    );
    let pyi = crate::stubs::pyi::render(&catalogue);
    let exe = std::env::current_exe().map_err(crate::runtime::setup::RunSetupError::NoWorker)?;
    let limits = crate::runtime::run::machine_limits(&chosen.policy);
    let pool = crate::runtime::worker::pool::Pool::start(
        exe,
        crate::runtime::worker::process::WorkerArgs::for_limits(&limits),
        ops.warm_workers,
    );
    let live = runs::Runs::new(ops);
    // A kept context that cannot be read fails closed here; the CLI said why before starting
    // (`context::Session::in_runs`).
    let (session_context, _) = context::Session::in_runs(&runs);
    let engine = crate::runtime::setup::worker_engine()?;
    let review = crate::view::queue::Queue {
        dirs: vec![runs.clone()],
        by: person.by.clone(),
        engine: engine.clone(),
    };
    let server = Server {
        runner: Arc::new(Runner {
            chosen,
            pool: Arc::clone(&pool),
            engine,
            runs,
            approval_ttl_secs,
        }),
        stubs,
        pyi,
        next_run: AtomicU64::new(1),
        context: Arc::new(session_context),
        runs: Arc::clone(&live),
        person,
        queue: None,
        asks: ask::Asks::default(),
        tools: Server::tool_router(),
    };
    let queue = queue_addr.map(|addr| session::QueueStart {
        review,
        addr,
        ready,
    });
    session::run(server, &live, &pool, queue)
}
