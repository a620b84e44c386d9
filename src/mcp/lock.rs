//! The lock file beside a policy (`zamburak.yaml` → `zamburak.mcp.lock`): for every server the policy
//! declares, how it was started, what it said it is, and the pin of every tool the policy uses from it.
//!
//! `zamburak mcp lock` writes it; `run` and `lint` refuse a policy whose lock is missing or stale (a tool or
//! server the lock does not cover, or a server started differently), and `run` compares each server's live
//! tools with their pins before the first call. The full pinned definitions are kept, so `mcp diff` can
//! show what changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::client::{Client, McpError, ServerCommand, ServerIdentity};
use super::pin;
use super::review::{self, ToolText};
use crate::policy::Policy;

/// Largest lock file read; a lock holds a few tool definitions.
const MAX_LOCK_BYTES: u64 = 16 << 20;

/// The lock format version this build reads and writes.
pub const LOCK_VERSION: u64 = 1;

/// The lock file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    pub version: u64,
    pub servers: BTreeMap<String, LockedServer>,
}

/// One server, as it was when locked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedServer {
    /// The command and arguments it was started with (a different command is a different server).
    pub command: String,
    pub args: Vec<String>,
    /// The name and version it gave in the handshake.
    pub server: ServerIdentity,
    /// Server tool name → its pin.
    pub tools: BTreeMap<String, LockedTool>,
}

/// One tool's pin and the definition it was computed from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedTool {
    pub sha256: String,
    /// The pinned fields of the definition (see [`pin::PINNED_FIELDS`]).
    pub definition: Value,
}

/// Why a lock cannot be used. Every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "the policy uses MCP tools but has no lock file {}; run `zamburak mcp lock --policy {}` after reviewing its servers",
        path.display(), policy.display()
    )]
    Missing { path: PathBuf, policy: PathBuf },
    #[error("cannot read the lock file {}: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("the lock file {} is stale: {reason}; run `zamburak mcp lock --policy {}` again after reviewing the change", path.display(), policy.display())]
    Stale {
        path: PathBuf,
        policy: PathBuf,
        reason: String,
    },
    #[error("server `{server}`: {source}")]
    Server {
        server: String,
        #[source]
        source: McpError,
    },
    #[error("server `{server}` has no tool `{tool}` (the policy declares `mcp.{server}.{tool}`)")]
    NoSuchTool { server: String, tool: String },
    #[error(
        "server `{server}` changed tool `{tool}` since it was locked ({}); run `zamburak mcp diff` to see the change",
        fields.join(", ")
    )]
    Changed {
        server: String,
        tool: String,
        fields: Vec<&'static str>,
    },
    #[error("server `{server}` no longer offers tool `{tool}`, which it had when locked")]
    Vanished { server: String, tool: String },
    #[error("tool `{tool}` (mcp.{server}.{mcp_tool}): {problem}")]
    Signature {
        tool: String,
        server: String,
        mcp_tool: String,
        problem: String,
    },
    #[error("cannot write the lock file {}: {reason}", path.display())]
    Write { path: PathBuf, reason: String },
    /// The definition the lock keeps of a tool (what the stubs are made from) is not the one its pin was
    /// computed from: the lock was edited, so what a model would read was never reviewed.
    #[error(
        "the lock file {} keeps a definition of `{server}.{tool}` that does not match its pin (the file was edited); review the server's tools with `zamburak mcp list` and run `zamburak mcp lock --policy {}` again",
        path.display(), policy.display()
    )]
    Unpinned {
        path: PathBuf,
        policy: PathBuf,
        server: String,
        tool: String,
    },
}

/// Where the lock of the policy at `policy_path` lives.
///
/// ```
/// use std::path::Path;
/// use zamburak::mcp::lock::lock_path;
/// assert_eq!(lock_path(Path::new("dir/zamburak.yaml")), Path::new("dir/zamburak.mcp.lock"));
/// ```
pub fn lock_path(policy_path: &Path) -> PathBuf {
    policy_path.with_extension("mcp.lock")
}

impl LockFile {
    /// Reads the lock of the policy at `policy_path`, and its bytes' sha256 (which the trace records).
    pub fn read_for(policy_path: &Path) -> Result<(LockFile, String), LockError> {
        let path = lock_path(policy_path);
        let unreadable = |reason: String| LockError::Unreadable {
            path: path.clone(),
            reason,
        };
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(LockError::Missing {
                    path: path.clone(),
                    policy: policy_path.to_path_buf(),
                });
            }
            Err(e) => return Err(unreadable(e.to_string())),
        };
        if meta.len() > MAX_LOCK_BYTES {
            return Err(unreadable(format!(
                "it is larger than {} MiB",
                MAX_LOCK_BYTES >> 20
            )));
        }
        let bytes = std::fs::read(&path).map_err(|e| unreadable(e.to_string()))?;
        let lock: LockFile = serde_json::from_slice(&bytes)
            .map_err(|e| unreadable(format!("not a lock file: {e}")))?;
        if lock.version != LOCK_VERSION {
            return Err(unreadable(format!(
                "lock format version {} (this zamburak reads {LOCK_VERSION})",
                lock.version
            )));
        }
        lock.check_pins(&path, policy_path)?;
        Ok((lock, crate::digest::sha256_bytes(&bytes)))
    }

    /// Every tool's kept definition is exactly the pinned fields its pin was computed from. The stubs are
    /// made from the kept definition and a run compares the live server with the pin, so a definition edited
    /// after locking would show a model words no pin covers.
    fn check_pins(&self, path: &Path, policy_path: &Path) -> Result<(), LockError> {
        for (server, locked) in &self.servers {
            for (tool, t) in &locked.tools {
                if pin::pinned(&t.definition) != t.definition
                    || pin::tool_hash(&t.definition) != t.sha256
                {
                    return Err(LockError::Unpinned {
                        path: path.to_path_buf(),
                        policy: policy_path.to_path_buf(),
                        server: server.clone(),
                        tool: tool.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Checks, without starting anything, that the lock covers the policy: every server the policy's MCP
    /// tools use is locked with the same command and arguments, and every such tool is pinned.
    pub fn check_covers(&self, policy: &Policy, policy_path: &Path) -> Result<(), LockError> {
        let stale = |reason: String| LockError::Stale {
            path: lock_path(policy_path),
            policy: policy_path.to_path_buf(),
            reason,
        };
        for (name, mcp) in policy.mcp_tools() {
            let Some(spec) = policy.server(&mcp.server) else {
                // Validation refuses undeclared servers; fail closed all the same.
                return Err(stale(format!("server `{}` is not declared", mcp.server)));
            };
            let Some(locked) = self.servers.get(&mcp.server) else {
                return Err(stale(format!("server `{}` is not locked", mcp.server)));
            };
            if locked.command != spec.command || locked.args != spec.args {
                return Err(stale(format!(
                    "server `{}` is now started as a different command",
                    mcp.server
                )));
            }
            if !locked.tools.contains_key(&mcp.tool) {
                return Err(stale(format!(
                    "tool `{name}` (mcp.{}.{}) is not locked",
                    mcp.server, mcp.tool
                )));
            }
        }
        Ok(())
    }

    /// Writes the lock as pretty JSON, atomically (a temporary file renamed over the old lock).
    pub fn write_for(&self, policy_path: &Path) -> Result<PathBuf, LockError> {
        let path = lock_path(policy_path);
        let write_err = |reason: String| LockError::Write {
            path: path.clone(),
            reason,
        };
        let mut text = serde_json::to_string_pretty(self).map_err(|e| write_err(e.to_string()))?;
        text.push('\n');
        let tmp = path.with_extension("mcp.lock.tmp");
        std::fs::write(&tmp, text).map_err(|e| write_err(e.to_string()))?;
        std::fs::rename(&tmp, &path).map_err(|e| write_err(e.to_string()))?;
        Ok(path)
    }
}

/// The offline check `lint` and `run` share: a policy that uses MCP tools has a lock beside it that covers
/// them. Returns the lock and its digest (`None` for a policy without MCP tools).
pub fn check_offline(
    policy: &Policy,
    policy_path: Option<&Path>,
) -> Result<Option<(LockFile, String)>, LockError> {
    if policy.mcp_tools().next().is_none() {
        return Ok(None);
    }
    // Only a policy read from a file can use MCP tools (the built-in default has none).
    let path = policy_path.unwrap_or(Path::new(policy.name()));
    let (lock, sha) = LockFile::read_for(path)?;
    lock.check_covers(policy, path)?;
    Ok(Some((lock, sha)))
}

/// The server tool names the policy uses from `server`, each with the plan-facing names that use it.
fn used_tools<'p>(policy: &'p Policy, server: &str) -> BTreeMap<&'p str, Vec<&'p str>> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, mcp) in policy.mcp_tools() {
        if mcp.server == server {
            out.entry(mcp.tool.as_str()).or_default().push(name);
        }
    }
    out
}

/// The policy's arguments for `tool` fit the tool's `inputSchema`: each is a property, and every property
/// the schema requires is declared (a plan must pass every declared argument, so it could never pass an
/// undeclared required one).
pub fn check_signature(
    policy: &Policy,
    name: &str,
    server: &str,
    mcp_tool: &str,
    definition: &Value,
) -> Result<(), LockError> {
    let problem = |problem: String| LockError::Signature {
        tool: name.to_string(),
        server: server.to_string(),
        mcp_tool: mcp_tool.to_string(),
        problem,
    };
    let Some(spec) = policy.tool(name) else {
        return Ok(());
    };
    let schema = definition.get("inputSchema").cloned().unwrap_or_default();
    let props = schema.get("properties").and_then(Value::as_object);
    for arg in spec.args.keys() {
        if !props.is_some_and(|p| p.contains_key(arg)) {
            let known: Vec<&str> = props
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(problem(format!(
                "the policy declares argument `{arg}`, which the tool does not take (it takes: {})",
                known.join(", ")
            )));
        }
    }
    for r in super::schema::required(&schema) {
        if spec.args.get(r).is_none() {
            return Err(problem(format!(
                "the tool requires argument `{r}`, which the policy does not declare"
            )));
        }
    }
    Ok(())
}

/// Starts every server the policy's MCP tools use, and pins those tools. Servers are shut down before
/// this returns.
pub fn build(policy: &Policy) -> Result<LockFile, LockError> {
    let mut servers = BTreeMap::new();
    for (server_name, spec) in policy.servers() {
        let used = used_tools(policy, server_name);
        let server_err = |source: McpError| LockError::Server {
            server: server_name.to_string(),
            source,
        };
        let mut client = Client::start(&ServerCommand::from_spec(spec)).map_err(server_err)?;
        let live = client.list_tools().map_err(server_err)?;
        let identity = client.identity().clone();
        client.shutdown();
        let mut tools = BTreeMap::new();
        for (mcp_tool, names) in used {
            let Some(def) = live
                .iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some(mcp_tool))
            else {
                return Err(LockError::NoSuchTool {
                    server: server_name.to_string(),
                    tool: mcp_tool.to_string(),
                });
            };
            for name in names {
                check_signature(policy, name, server_name, mcp_tool, def)?;
            }
            tools.insert(
                mcp_tool.to_string(),
                LockedTool {
                    sha256: pin::tool_hash(def),
                    definition: pin::pinned(def),
                },
            );
        }
        servers.insert(
            server_name.to_string(),
            LockedServer {
                command: spec.command.clone(),
                args: spec.args.clone(),
                server: identity,
                tools,
            },
        );
    }
    Ok(LockFile {
        version: LOCK_VERSION,
        servers,
    })
}

/// Compares a running server's tools with their pins: the first locked tool that vanished or changed.
pub fn compare(server: &str, locked: &LockedServer, live: &[Value]) -> Result<(), LockError> {
    for (tool, pinned) in &locked.tools {
        let Some(def) = live
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(tool.as_str()))
        else {
            return Err(LockError::Vanished {
                server: server.to_string(),
                tool: tool.clone(),
            });
        };
        if pin::tool_hash(def) != pinned.sha256 {
            let mut fields = pin::changed_fields(&pinned.definition, &pin::pinned(def));
            if fields.is_empty() {
                // The stored definition was edited by hand: the pin, not the server, disagrees.
                fields.push("sha256");
            }
            return Err(LockError::Changed {
                server: server.to_string(),
                tool: tool.clone(),
                fields,
            });
        }
    }
    Ok(())
}

/// One difference between a lock and a live server, for `mcp diff`.
#[derive(Debug, PartialEq)]
pub struct Difference {
    pub server: String,
    pub tool: String,
    /// `None`: the tool is gone from the server.
    pub field: Option<&'static str>,
    /// The field's canonical JSON in the lock and live (absent: `None`).
    pub locked: Option<String>,
    pub live: Option<String>,
    /// The field's texts a model may read ([`review::texts`]) that only the lock has, and that only the live
    /// server has.
    pub locked_texts: Vec<ToolText>,
    pub live_texts: Vec<ToolText>,
}

/// Every difference between the lock and the live servers (started and shut down here).
pub fn diff(policy: &Policy, lock: &LockFile) -> Result<Vec<Difference>, LockError> {
    let mut out = Vec::new();
    for (server_name, locked) in &lock.servers {
        let Some(spec) = policy.server(server_name) else {
            continue;
        };
        let server_err = |source: McpError| LockError::Server {
            server: server_name.clone(),
            source,
        };
        let mut client = Client::start(&ServerCommand::from_spec(spec)).map_err(server_err)?;
        let live = client.list_tools().map_err(server_err)?;
        client.shutdown();
        for (tool, pinned) in &locked.tools {
            let def = live
                .iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some(tool.as_str()));
            let Some(def) = def else {
                out.push(Difference {
                    server: server_name.clone(),
                    tool: tool.clone(),
                    field: None,
                    locked: None,
                    live: None,
                    locked_texts: Vec::new(),
                    live_texts: Vec::new(),
                });
                continue;
            };
            let now = pin::pinned(def);
            for field in pin::changed_fields(&pinned.definition, &now) {
                let (locked_texts, live_texts) =
                    review::changed_texts(&pinned.definition, &now, field);
                out.push(Difference {
                    server: server_name.clone(),
                    tool: tool.clone(),
                    field: Some(field),
                    locked: pinned.definition.get(field).map(pin::canonical),
                    live: now.get(field).map(pin::canonical),
                    locked_texts,
                    live_texts,
                });
            }
        }
    }
    Ok(out)
}
