//! The servers of one run: started on first use, checked against the lock before their first call, and
//! shut down when the run ends (or when the hub is dropped on any other path).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::client::{Client, McpError, ServerCommand};
use super::lock::{LockError, LockFile, compare};
use super::{content, schema};
use crate::policy::Policy;
use crate::text::OutsideText;

/// Why an MCP call did not produce a value. The message is Zamburak's words only; what the server wrote
/// (its error text, the property names of its result) is outside text, reached through [`CallError::said`].
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The server no longer matches its lock: the run must stop as a configuration error.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The plan passed arguments the tool's schema refuses; nothing was sent.
    #[error("{0}")]
    Arguments(schema::SchemaError),
    /// The tool reported `isError`; its text may be attacker data, so it is kept apart.
    #[error("the tool reported an error")]
    Tool(OutsideText),
    #[error("server `{server}`: {source}")]
    Server {
        server: String,
        #[source]
        source: McpError,
    },
    /// The server's answer does not fit the tool's `outputSchema`.
    #[error("the result does not match the tool's output schema: {0}")]
    Output(schema::SchemaError),
    /// The server announced a changed tool list during the run, and a pinned tool changed.
    #[error("server `{0}` changed its tools during the run: {1}")]
    ToolsChanged(String, String),
}

impl CallError {
    /// What the server (or the plan's data, for arguments) wrote that this error is about, if anything: for
    /// the person at the terminal only.
    pub fn said(&self) -> Option<OutsideText> {
        match self {
            CallError::Tool(text) => Some(text.clone()),
            CallError::Server { source, .. } => source.said().cloned(),
            CallError::Lock(LockError::Server { source, .. }) => source.said().cloned(),
            CallError::Output(e) => e.said("the property names in the server's result"),
            CallError::Arguments(e) => e.said("the property names in the plan's argument"),
            CallError::Lock(_) | CallError::ToolsChanged(..) => None,
        }
    }
}

/// After a `notifications/tools/list_changed`, the server's tools are listed again and compared with the
/// lock: a change to any pinned tool stops the run. (An announcement alone does not: server-everything, for
/// one, announces a change right after every start, when it adds the tools that depend on the client's
/// capabilities; a change that touches no pinned tool cannot change what the reviewer locked.)
fn recheck(
    server: &str,
    client: &mut Client,
    locked: Option<&super::lock::LockedServer>,
) -> Result<(), CallError> {
    if !client.tools_changed() {
        return Ok(());
    }
    let live = client.list_tools().map_err(|source| CallError::Server {
        server: server.to_string(),
        source,
    })?;
    match locked {
        Some(locked) => compare(server, locked, &live)
            .map_err(|e| CallError::ToolsChanged(server.to_string(), e.to_string())),
        None => Err(CallError::ToolsChanged(
            server.to_string(),
            "the server is not locked".into(),
        )),
    }
}

/// The MCP servers of one run.
pub struct Hub {
    lock: LockFile,
    lock_sha256: String,
    specs: BTreeMap<String, ServerCommand>,
    running: BTreeMap<String, Client>,
}

impl Hub {
    /// The hub for `policy` (read from `policy_path`): reads the lock and checks, offline, that it covers
    /// the policy. Starts nothing.
    pub fn open(policy: &Policy, policy_path: &Path) -> Result<Hub, LockError> {
        let (lock, lock_sha256) = LockFile::read_for(policy_path)?;
        lock.check_covers(policy, policy_path)?;
        let specs = policy
            .servers()
            .map(|(name, spec)| (name.to_string(), ServerCommand::from_spec(spec)))
            .collect();
        Ok(Hub {
            lock,
            lock_sha256,
            specs,
            running: BTreeMap::new(),
        })
    }

    /// The sha256 of the lock file's bytes (recorded in the trace header).
    pub fn lock_sha256(&self) -> &str {
        &self.lock_sha256
    }

    /// `server/tool` → pin of every locked tool of the servers this run may start: what a claim made in
    /// this run was made under (see `runtime::snapshot`).
    pub fn pins(&self) -> BTreeMap<String, String> {
        self.specs
            .keys()
            .filter_map(|server| Some((server, self.lock.servers.get(server)?)))
            .flat_map(|(server, locked)| {
                locked
                    .tools
                    .iter()
                    .map(move |(tool, t)| (format!("{server}/{tool}"), t.sha256.clone()))
            })
            .collect()
    }

    /// The pin of server tool `tool` on `server`, as locked.
    pub fn tool_sha256(&self, server: &str, tool: &str) -> Option<&str> {
        Some(
            self.lock
                .servers
                .get(server)?
                .tools
                .get(tool)?
                .sha256
                .as_str(),
        )
    }

    /// Starts `server` (when not running) and checks its live tools against the lock. A server that no
    /// longer matches is shut down again and refused.
    pub fn ensure_started(&mut self, server: &str) -> Result<(), CallError> {
        if self.running.contains_key(server) {
            return Ok(());
        }
        let server_err = |source: McpError| CallError::Server {
            server: server.to_string(),
            source,
        };
        let Some(cmd) = self.specs.get(server) else {
            return Err(server_err(McpError::Protocol(
                "the server is not declared in the policy".into(),
            )));
        };
        let Some(locked) = self.lock.servers.get(server) else {
            return Err(server_err(McpError::Protocol(
                "the server is not locked".into(),
            )));
        };
        let mut client = Client::start(cmd).map_err(server_err)?;
        let live = client.list_tools().map_err(server_err)?;
        compare(server, locked, &live)?;
        self.running.insert(server.to_string(), client);
        Ok(())
    }

    /// Starts, and checks against the lock, every server serving a tool among `names` (the names the plan
    /// mentions, from its one parse: `plan::names::mentioned`; a plan can only call a tool by naming it).
    /// Run before the plan's first instruction, so a server that changed since `mcp lock` refuses the run
    /// before any call of any server. Returns the servers started, by name.
    pub fn start_for(
        &mut self,
        policy: &Policy,
        names: &std::collections::BTreeSet<String>,
    ) -> Result<Vec<String>, CallError> {
        let servers: std::collections::BTreeSet<String> = policy
            .mcp_tools()
            .filter(|(name, _)| names.contains(*name))
            .map(|(_, mcp)| mcp.server.clone())
            .collect();
        for server in &servers {
            self.ensure_started(server)?;
        }
        Ok(servers.into_iter().collect())
    }

    /// Calls `tool` on `server` with the plan's arguments: checked against the locked `inputSchema`
    /// first (a `None` for an argument the schema does not require is left out), then sent once.
    pub fn call(
        &mut self,
        server: &str,
        tool: &str,
        args: &Map<String, Value>,
    ) -> Result<Value, CallError> {
        let not_locked = || CallError::Server {
            server: server.to_string(),
            source: McpError::Protocol(format!("tool `{tool}` is not locked")),
        };
        let arguments = {
            let definition = &self
                .lock
                .servers
                .get(server)
                .and_then(|s| s.tools.get(tool))
                .ok_or_else(not_locked)?
                .definition;
            let input_schema = definition.get("inputSchema").unwrap_or(&Value::Null);
            let required = schema::required(input_schema);
            let arguments = Value::Object(
                args.iter()
                    .filter(|(k, v)| !v.is_null() || required.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            );
            schema::check(input_schema, &arguments, "").map_err(CallError::Arguments)?;
            arguments
        };
        let Value::Object(arguments) = arguments else {
            // Built as an object just above.
            return Err(not_locked());
        };

        self.ensure_started(server)?;
        let Hub { lock, running, .. } = self;
        let locked = lock.servers.get(server);
        let definition = &locked
            .and_then(|s| s.tools.get(tool))
            .ok_or_else(not_locked)?
            .definition;
        let client = running.get_mut(server).ok_or_else(|| CallError::Server {
            server: server.to_string(),
            source: McpError::Closed,
        })?;
        recheck(server, client, locked)?;
        let result = client
            .call(tool, arguments)
            .map_err(|source| CallError::Server {
                server: server.to_string(),
                source,
            })?;
        recheck(server, client, locked)?;
        let value = content::plan_value(&result)
            .map_err(|text| CallError::Tool(OutsideText::new("the tool's error text", text)))?;
        if result.get("structuredContent").is_some()
            && let Some(output_schema) = definition.get("outputSchema")
        {
            schema::check(output_schema, &value, "").map_err(CallError::Output)?;
            return Ok(content::unwrap_result(Some(output_schema), value));
        }
        Ok(value)
    }

    /// The process ids of the running servers (each leads its own process group).
    pub fn pids(&self) -> Vec<u32> {
        self.running.values().filter_map(Client::pid).collect()
    }

    /// Shuts every running server down (stdin closed, then a grace period, then killed).
    pub fn shutdown(&mut self) {
        for (_, client) in std::mem::take(&mut self.running) {
            client.shutdown();
        }
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.shutdown();
    }
}
