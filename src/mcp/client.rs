//! A synchronous MCP client over stdio, on the official `rmcp` SDK: start a server as a child process with a
//! scrubbed environment, list its tools, call one, notice a changed tool list, and shut it down.
//!
//! The rest of Zamburak is synchronous, so each client owns a single-threaded tokio runtime and blocks on
//! it for every request; the server's notifications are processed while a request is awaited. What a
//! server may ask of the client is refused: sampling (an LLM channel no label covers) answers "method not
//! found", elicitation is declined and roots are an empty list (rmcp's defaults, which this client keeps
//! by advertising none of those capabilities). Progress and log notifications are dropped, never printed.
//!
//! What a server sends is bounded ([`super::transport`]): one message by `max_message_bytes`, requests of
//! its own by [`MAX_SERVER_REQUESTS`] per request of the client's, a tool listing by [`MAX_LIST_PAGES`]
//! pages, the same number of bytes for all its pages together, and the call timeout for its whole duration;
//! a line that is not JSON ends the connection at once ([`McpError::NotJson`]).
//! A tool name listed twice is refused: a pin could not say which definition a call runs.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::ChildWrapper;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, ListToolsRequest, PaginatedRequestParams, ServerResult,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value};

use super::transport::{Bounded, Checked, MAX_SERVER_REQUESTS, Meter, OnBad, Watched};
use crate::text::OutsideText;

/// Most pages one tool listing may have. Servers that paginate at all send a few; a server that answers
/// every page with another cursor would otherwise be listed until memory or the timeout runs out.
pub const MAX_LIST_PAGES: usize = 100;

/// How long a server gets to exit after its stdin closes, and again after `SIGTERM` (rmcp's grace
/// periods, from the MCP specification's shutdown sequence).
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// Process groups of the servers running in this process: each server leads its own group, so a forced
/// stop reaches the processes it started too (an `npx` wrapper's node, a shell's children).
static LIVE_GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// Kills every running server's process group at once: for an interrupted run (Ctrl-C), which exits
/// without the orderly shutdown.
pub fn kill_all_servers() {
    let groups = match LIVE_GROUPS.lock() {
        Ok(g) => g.clone(),
        // A panic while holding the lock leaves the set intact; kill what it holds.
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    for pgid in groups {
        kill_group(Some(pgid));
    }
}

/// Kills what is left of a server's process group (children that outlived the server itself).
fn kill_group(pid: Option<u32>) {
    if let Some(pgid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

fn track(pid: Option<u32>, live: bool) {
    let Some(pid) = pid else { return };
    let mut groups = LIVE_GROUPS.lock().unwrap_or_else(|p| p.into_inner());
    if live {
        groups.insert(pid);
    } else {
        groups.remove(&pid);
    }
}

/// How to start one server.
#[derive(Clone, Debug)]
pub struct ServerCommand {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// The child's whole environment.
    pub env: Vec<(String, String)>,
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
    /// Largest message (one line of JSON-RPC) read from the server, and largest tool listing.
    pub max_message_bytes: u64,
}

impl ServerCommand {
    /// A command with the environment scrubbed to `PATH` and the `allowed` variables that are set here.
    pub fn scrubbed(program: &str, args: &[String], allowed: &[String]) -> ServerCommand {
        let env = std::iter::once("PATH")
            .chain(allowed.iter().map(String::as_str))
            .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
            .collect();
        ServerCommand {
            program: program.to_string(),
            args: args.to_vec(),
            cwd: None,
            env,
            startup_timeout: Duration::from_millis(
                crate::policy::servers::DEFAULT_STARTUP_TIMEOUT_MS,
            ),
            call_timeout: Duration::from_millis(crate::policy::servers::DEFAULT_CALL_TIMEOUT_MS),
            max_message_bytes: crate::policy::servers::DEFAULT_MAX_MESSAGE_BYTES,
        }
    }

    /// The command for a server the policy declares (paths already resolved by the policy loader).
    pub fn from_spec(spec: &crate::policy::servers::ServerSpec) -> ServerCommand {
        let mut cmd = ServerCommand::scrubbed(&spec.command, &spec.args, &spec.env);
        cmd.cwd = spec.cwd.clone();
        cmd.startup_timeout = Duration::from_millis(spec.startup_timeout_ms());
        cmd.call_timeout = Duration::from_millis(spec.call_timeout_ms());
        cmd.max_message_bytes = spec.max_message_bytes();
        cmd
    }
}

/// Why talking to a server failed. Messages never quote tool results or the server's own words (they may
/// be attacker data, and a message reaches the JSON report and the trace): the server's words are an
/// [`OutsideText`] beside the message ([`McpError::said`]), for the terminal only.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot start the server `{program}`: {reason}")]
    Start { program: String, reason: String },
    /// The MCP handshake failed; rmcp's account of it can quote what the server sent.
    #[error("cannot start the server `{program}`: the MCP handshake failed")]
    Handshake { program: String, said: OutsideText },
    #[error("the server did not answer within {ms} ms while {doing}")]
    Timeout { doing: &'static str, ms: u128 },
    #[error("the server closed the connection (it exited or crashed)")]
    Closed,
    /// A JSON-RPC error the server answered with; its message is the server's words.
    #[error("the server answered with an error")]
    Server(OutsideText),
    #[error("{0}")]
    Protocol(String),
    /// A message over the limit; the connection was closed where it began, and the server stopped.
    #[error(
        "the server sent a message larger than {max} bytes (its `max_message_bytes` in the policy) while {doing}"
    )]
    TooLarge { doing: &'static str, max: u64 },
    /// The server sent too many requests of its own during one of ours; the connection was closed.
    #[error(
        "the server sent more than {MAX_SERVER_REQUESTS} requests of its own (Zamburak asks nothing of servers) while {doing}"
    )]
    Flooded { doing: &'static str },
    /// A line that is not JSON (NaN where a number should be, say); the connection was closed where it
    /// began, and the server stopped.
    #[error(
        "the server sent a line that is not JSON while {doing}; the connection was closed and the server stopped"
    )]
    NotJson { doing: &'static str },
    #[error(
        "the server's tool list is longer than {MAX_LIST_PAGES} pages; it was refused and the server stopped"
    )]
    TooManyPages,
    #[error(
        "the server's tool list is larger than {max} bytes (its `max_message_bytes` in the policy); it was refused and the server stopped"
    )]
    ListTooLarge { max: u64 },
    /// The server listed one tool name twice. The name is shown only when it is a valid MCP tool name
    /// (letters, digits, `_`, `-`, `.`): server text never reaches the terminal otherwise.
    #[error("{}", duplicate_message(.0))]
    DuplicateTool(String),
}

fn duplicate_message(name: &str) -> String {
    let what = if crate::policy::servers::is_tool_name(name) {
        format!("tool `{name}`")
    } else {
        "a tool name (not a valid MCP tool name, not shown)".to_string()
    };
    format!(
        "the server lists {what} more than once, so a pin could not tell which definition a call runs; it was refused"
    )
}

impl McpError {
    /// The server's own words this error carries, if any (for the terminal only).
    pub fn said(&self) -> Option<&OutsideText> {
        match self {
            McpError::Handshake { said, .. } | McpError::Server(said) => Some(said),
            _ => None,
        }
    }
}

/// The server's identity, as it stated it in the handshake.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServerIdentity {
    pub name: String,
    pub version: String,
    pub protocol_version: String,
}

/// The client side of the connection: notes a changed tool list, refuses everything else by default.
struct Watcher {
    tools_changed: Arc<AtomicBool>,
}

impl ClientHandler for Watcher {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.tools_changed.store(true, Ordering::SeqCst);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        // No roots, sampling or elicitation capability: the server must not expect any of them.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("zamburak", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// One running server.
pub struct Client {
    runtime: tokio::runtime::Runtime,
    service: Option<RunningService<RoleClient, Watcher>>,
    /// The server process (its group leader), for the shutdown sequence.
    child: Option<Box<dyn ChildWrapper>>,
    tools_changed: Arc<AtomicBool>,
    identity: ServerIdentity,
    call_timeout: Duration,
    meter: Arc<Meter>,
    max_message_bytes: u64,
    pid: Option<u32>,
}

fn start_error(cmd: &ServerCommand, reason: impl ToString) -> McpError {
    McpError::Start {
        program: cmd.program.clone(),
        reason: reason.to_string(),
    }
}

fn service_error(e: rmcp::ServiceError) -> McpError {
    match e {
        rmcp::ServiceError::McpError(data) => McpError::Server(OutsideText::new(
            "the server's error message",
            data.message.to_string(),
        )),
        rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_) => {
            McpError::Closed
        }
        rmcp::ServiceError::Timeout { timeout } => McpError::Timeout {
            doing: "waiting for a reply",
            ms: timeout.as_millis(),
        },
        other => McpError::Protocol(other.to_string()),
    }
}

impl Client {
    /// Starts the server and completes the MCP handshake within the startup timeout. The server's stderr
    /// is discarded (`mcp list` shows it); its stdout is the protocol.
    pub fn start(cmd: &ServerCommand) -> Result<Client, McpError> {
        Client::start_with_stderr(cmd, std::process::Stdio::null())
    }

    /// [`Client::start`], with the server's stderr going to `stderr`.
    pub fn start_with_stderr(
        cmd: &ServerCommand,
        stderr: std::process::Stdio,
    ) -> Result<Client, McpError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| start_error(cmd, e))?;
        let mut command = tokio::process::Command::new(&cmd.program);
        command
            .args(&cmd.args)
            .env_clear()
            .envs(cmd.env.iter().cloned())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(stderr);
        if let Some(cwd) = &cmd.cwd {
            command.current_dir(cwd);
        }
        // The server leads its own process group (so killing it reaches its children), and dies with this
        // client should the client be dropped without a shutdown.
        let mut command = process_wrap::tokio::CommandWrap::from(command);
        command
            .wrap(process_wrap::tokio::ProcessGroup::leader())
            .wrap(process_wrap::tokio::KillOnDrop);
        let tools_changed = Arc::new(AtomicBool::new(false));
        let watcher = Watcher {
            tools_changed: tools_changed.clone(),
        };
        let meter = Arc::new(Meter::default());
        let (service, child, pid) = runtime.block_on(async {
            let mut child = command.spawn().map_err(|e| start_error(cmd, e))?;
            let pid = child.id();
            // Tracked while the handshake runs, so an interrupt then still reaches the server; a failed
            // start drops (and so kills) the child, and untracks it below.
            track(pid, true);
            let pipes = (
                child.inner_mut().stdout().take(),
                child.inner_mut().stdin().take(),
            );
            let (Some(stdout), Some(stdin)) = pipes else {
                kill_group(pid);
                track(pid, false);
                return Err(start_error(cmd, "its stdin or stdout is not a pipe"));
            };
            let stdout = Bounded::new(stdout, cmd.max_message_bytes, meter.clone());
            // A line that is not JSON ends the stream there too: rmcp alone would skip it, and the request
            // it answered would wait out its timeout.
            let stdout = Checked::new(stdout, OnBad::End(meter.clone()));
            // rmcp's own line limit (which drops a line and waits on) stays above ours, so ours decides.
            let rmcp_max = usize::try_from(cmd.max_message_bytes)
                .unwrap_or(usize::MAX)
                .saturating_add(2);
            let transport = Watched::new(
                AsyncRwTransport::<RoleClient, _, _>::new(stdout, stdin)
                    .with_max_line_length(rmcp_max),
                meter.clone(),
            );
            let started = tokio::time::timeout(cmd.startup_timeout, watcher.serve(transport)).await;
            if !matches!(started, Ok(Ok(_))) {
                kill_group(pid);
                track(pid, false);
            }
            match started {
                Ok(Ok(service)) => Ok((service, child, pid)),
                Ok(Err(_)) if meter.over() => Err(McpError::TooLarge {
                    doing: "starting",
                    max: cmd.max_message_bytes,
                }),
                Ok(Err(_)) if meter.flooded() => Err(McpError::Flooded { doing: "starting" }),
                Ok(Err(_)) if meter.garbled() => Err(McpError::NotJson { doing: "starting" }),
                Ok(Err(e)) => Err(McpError::Handshake {
                    program: cmd.program.clone(),
                    said: OutsideText::new(
                        "the handshake error (it may quote the server)",
                        e.to_string(),
                    ),
                }),
                Err(_) => Err(McpError::Timeout {
                    doing: "starting",
                    ms: cmd.startup_timeout.as_millis(),
                }),
            }
        })?;
        let identity = service
            .peer_info()
            .map(|info| ServerIdentity {
                name: info
                    .server_info
                    .as_ref()
                    .map(|i| i.name.clone())
                    .unwrap_or_default(),
                version: info
                    .server_info
                    .as_ref()
                    .map(|i| i.version.clone())
                    .unwrap_or_default(),
                protocol_version: info.protocol_version.to_string(),
            })
            .unwrap_or_default();
        Ok(Client {
            runtime,
            service: Some(service),
            child: Some(child),
            tools_changed,
            identity,
            call_timeout: cmd.call_timeout,
            meter,
            max_message_bytes: cmd.max_message_bytes,
            pid,
        })
    }

    /// `error` as the caller sees it: any failure after the server went over a bound is that.
    fn bounded(&self, error: McpError, doing: &'static str) -> McpError {
        if self.meter.over() {
            McpError::TooLarge {
                doing,
                max: self.max_message_bytes,
            }
        } else if self.meter.flooded() {
            McpError::Flooded { doing }
        } else if self.meter.garbled() {
            McpError::NotJson { doing }
        } else {
            error
        }
    }

    pub fn identity(&self) -> &ServerIdentity {
        &self.identity
    }

    /// The child's process id.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether the server announced `notifications/tools/list_changed` since it started, or since the
    /// last [`Client::list_tools`] that began after the announcement.
    pub fn tools_changed(&self) -> bool {
        self.tools_changed.load(Ordering::SeqCst)
    }

    fn service(&self) -> Result<&RunningService<RoleClient, Watcher>, McpError> {
        self.service.as_ref().ok_or(McpError::Closed)
    }

    /// Every tool the server offers, as the JSON it sent (all pages), within the listing's bounds.
    pub fn list_tools(&mut self) -> Result<Vec<Value>, McpError> {
        // A change announced before this listing is part of what it returns.
        self.tools_changed.store(false, Ordering::SeqCst);
        let service = self.service()?;
        let timeout = self.call_timeout;
        let listing = list_pages(service, &self.meter, self.max_message_bytes);
        let tools = self.runtime.block_on(async {
            tokio::time::timeout(timeout, listing)
                .await
                .map_err(|_| McpError::Timeout {
                    doing: "listing its tools",
                    ms: timeout.as_millis(),
                })?
        });
        tools.map_err(|e| self.bounded(e, "listing its tools"))
    }

    /// Calls `tool` once and returns the `CallToolResult` as JSON (`isError` included: the caller decides).
    /// Never retried: a call may have had its effect even when its reply is lost.
    pub fn call(&mut self, tool: &str, arguments: Map<String, Value>) -> Result<Value, McpError> {
        let service = self.service()?;
        let timeout = self.call_timeout;
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        self.meter.begin_request();
        let response = self
            .runtime
            .block_on(async {
                tokio::time::timeout(timeout, service.call_tool_once(params))
                    .await
                    .map_err(|_| McpError::Timeout {
                        doing: "running the tool",
                        ms: timeout.as_millis(),
                    })?
                    .map_err(service_error)
            })
            .map_err(|e| self.bounded(e, "running the tool"))?;
        match response {
            CallToolResponse::Complete(result) => {
                serde_json::to_value(&result).map_err(|e| McpError::Protocol(e.to_string()))
            }
            // Both would have the client act for the server mid-call, outside the plan and the policy.
            CallToolResponse::InputRequired(_) => Err(McpError::Protocol(
                "the server asked for input during the call; Zamburak answers no server requests"
                    .into(),
            )),
            _ => Err(McpError::Protocol(
                "the server answered with something other than a tool result".into(),
            )),
        }
    }

    /// Closes the server's stdin, waits a grace period, then terminates and kills it (rmcp's shutdown
    /// sequence from the MCP specification).
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let service = self.service.take();
        let child = self.child.take();
        self.runtime.block_on(async {
            // Ending the service closes the server's stdin.
            if let Some(service) = service {
                let _ = tokio::time::timeout(EXIT_GRACE, service.cancel()).await;
            }
            // Past both grace periods, the group is killed below (and the child when its handle drops,
            // `KillOnDrop`).
            if let Some(mut child) = child
                && tokio::time::timeout(EXIT_GRACE, child.wait())
                    .await
                    .is_err()
            {
                let _ = child.signal(nix::sys::signal::Signal::SIGTERM as i32);
                if tokio::time::timeout(EXIT_GRACE, child.wait())
                    .await
                    .is_err()
                {
                    // Killed and reaped here, so a server is gone when the run ends (the group below
                    // takes what it started).
                    let _ = child.start_kill();
                    let _ = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
                }
            }
        });
        kill_group(self.pid);
        track(self.pid, false);
    }
}

/// The pages of one tool listing, each asked of the server itself (rmcp's response cache is not used: a
/// listing is what the pins are checked against), until one has no next cursor. Refused past
/// [`MAX_LIST_PAGES`] pages, past `max_bytes` read from the server since the listing began, or at a tool
/// name listed twice.
async fn list_pages(
    service: &RunningService<RoleClient, Watcher>,
    meter: &Meter,
    max_bytes: u64,
) -> Result<Vec<Value>, McpError> {
    let start = meter.read();
    let mut tools = Vec::new();
    let mut names = BTreeSet::new();
    let mut cursor = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
        meter.begin_request();
        let ServerResult::ListToolsResult(page) =
            service.send_request(request).await.map_err(service_error)?
        else {
            return Err(McpError::Protocol(
                "the server answered a tool listing with something else".into(),
            ));
        };
        if meter.read().saturating_sub(start) > max_bytes {
            return Err(McpError::ListTooLarge { max: max_bytes });
        }
        for tool in &page.tools {
            if !names.insert(tool.name.to_string()) {
                return Err(McpError::DuplicateTool(tool.name.to_string()));
            }
            tools.push(serde_json::to_value(tool).map_err(|e| McpError::Protocol(e.to_string()))?);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
    Err(McpError::TooManyPages)
}

impl Drop for Client {
    fn drop(&mut self) {
        self.stop();
    }
}
