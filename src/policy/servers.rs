//! The policy's `servers:` section (MCP servers a tool may be served by) and a tool's `source`, which names
//! either a built-in adapter (`builtin.mail.send`) or one tool of a declared server (`mcp.fs.write_file`).
//!
//! The built-in sources are listed here too ([`Source`]). Only the description lives here; starting servers, pinning their tools and calling them is
//! the job of the MCP client module (`mcp`).

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Unexpected, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Default time a server has to start and answer the handshake.
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 10_000;
/// Default time one tool call may take.
pub const DEFAULT_CALL_TIMEOUT_MS: u64 = 30_000;
/// Default limit on one message from a server, and on one tool listing's pages together: rmcp's own
/// default line limit.
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 16 << 20;

/// One MCP server, started as a child process speaking MCP over stdio.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// The program. A relative path with a `/` is relative to the policy file; a bare name is looked up
    /// on `PATH`.
    pub command: String,
    /// Its arguments, passed as given.
    #[serde(default)]
    pub args: Vec<String>,
    /// Working directory. Default (and base of a relative one): the policy file's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Names of environment variables passed to the server. It gets these (when set) and `PATH`, nothing
    /// else: a server can read, and some tools return, its whole environment.
    #[serde(default)]
    pub env: Vec<String>,
    /// The principal the server reads as, such as `mcp:fs`, or the user's address for a server that
    /// already holds the user's data. Every argument of its tools goes to it: an argument without a declared
    /// check must have it among its readers (`readers_must_include: server`). Absent: the server is anyone,
    /// and such an argument must be public (docs/policy.md, "Arguments that leave").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader: Option<String>,
    /// Milliseconds the server has to start and answer the handshake (default 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_ms: Option<u64>,
    /// Milliseconds one tool call may take (default 30000). A tool listing gets as long, all its pages
    /// together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_timeout_ms: Option<u64>,
    /// Largest message the server may send, in bytes (default 16777216, 16 MiB); also the most all the
    /// pages of one tool listing may hold together. A larger one stops the server at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_message_bytes: Option<u64>,
    /// The server keeps what its tools are sent (a session, a memory, a model's conversation): then each
    /// of its results carries the labels of everything the run sent the server before, through any of its
    /// tools (docs/semantics.md, "The quarantined model is stateless"). Default false: each call's result
    /// carries that call's arguments only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stateful: bool,
}

impl ServerSpec {
    pub fn startup_timeout_ms(&self) -> u64 {
        self.startup_timeout_ms
            .unwrap_or(DEFAULT_STARTUP_TIMEOUT_MS)
    }
    pub fn call_timeout_ms(&self) -> u64 {
        self.call_timeout_ms.unwrap_or(DEFAULT_CALL_TIMEOUT_MS)
    }
    pub fn max_message_bytes(&self) -> u64 {
        self.max_message_bytes.unwrap_or(DEFAULT_MAX_MESSAGE_BYTES)
    }
}

/// The name `readers_must_include` uses for the server of an MCP tool whose server declares a `reader`.
pub const SERVER_RECIPIENT: &str = "server";

/// One tool of a declared MCP server: `mcp.<server>.<tool>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct McpTool {
    pub server: String,
    /// The tool's name on the server (may differ from the plan-facing name).
    pub tool: String,
}

/// What serves a tool: a built-in adapter, a tool of an MCP server, or an LLM provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolSource {
    Builtin(Source),
    Mcp(McpTool),
    /// `builtin.llm.PROVIDER`: the quarantined LLM of a provider declared under `providers`.
    Llm(String),
}

impl ToolSource {
    /// Parses `builtin.…` or `mcp.<server>.<tool>`.
    ///
    /// ```
    /// use zamburak::policy::servers::ToolSource;
    /// let s = ToolSource::parse("mcp.fs.write_file").unwrap();
    /// assert_eq!(s.to_string(), "mcp.fs.write_file");
    /// assert!(ToolSource::parse("mcp.fs").is_none());
    /// assert!(ToolSource::parse("builtin.mail.send").is_some());
    /// ```
    pub fn parse(text: &str) -> Option<ToolSource> {
        if let Some(provider) = text.strip_prefix("builtin.llm.") {
            return is_server_name(provider).then(|| ToolSource::Llm(provider.to_string()));
        }
        if let Some(rest) = text.strip_prefix("mcp.") {
            let (server, tool) = rest.split_once('.')?;
            return (is_server_name(server) && is_tool_name(tool)).then(|| {
                ToolSource::Mcp(McpTool {
                    server: server.to_string(),
                    tool: tool.to_string(),
                })
            });
        }
        Source::ALL
            .into_iter()
            .find(|s| s.name() == text)
            .map(ToolSource::Builtin)
    }

    /// The built-in adapter, when this is one.
    pub fn builtin(&self) -> Option<Source> {
        match self {
            ToolSource::Builtin(s) => Some(*s),
            ToolSource::Mcp(_) | ToolSource::Llm(_) => None,
        }
    }

    /// The MCP tool, when this is one.
    pub fn mcp(&self) -> Option<&McpTool> {
        match self {
            ToolSource::Mcp(t) => Some(t),
            ToolSource::Builtin(_) | ToolSource::Llm(_) => None,
        }
    }

    /// The LLM provider, when this is one.
    pub fn llm(&self) -> Option<&str> {
        match self {
            ToolSource::Llm(p) => Some(p),
            ToolSource::Builtin(_) | ToolSource::Mcp(_) => None,
        }
    }
}

/// A server name: letters, digits, `_` and `-` (no dots, so `mcp.<server>.<tool>` splits unambiguously).
pub fn is_server_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// An MCP tool name as the MCP specification allows it: 1–128 of letters, digits, `_`, `-` and `.`.
pub fn is_tool_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl fmt::Display for ToolSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolSource::Builtin(s) => f.write_str(s.name()),
            ToolSource::Mcp(t) => write!(f, "mcp.{}.{}", t.server, t.tool),
            ToolSource::Llm(p) => write!(f, "builtin.llm.{p}"),
        }
    }
}

impl Serialize for ToolSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ToolSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ToolSource;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                let builtins: Vec<&str> = Source::ALL.iter().map(|s| s.name()).collect();
                write!(
                    f,
                    "one of {}, builtin.llm.PROVIDER, or mcp.SERVER.TOOL",
                    builtins.join(", ")
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<ToolSource, E> {
                ToolSource::parse(s).ok_or_else(|| E::invalid_value(Unexpected::Str(s), &self))
            }
        }
        deserializer.deserialize_str(V)
    }
}

impl JsonSchema for ToolSource {
    fn schema_name() -> Cow<'static, str> {
        "ToolSource".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let builtins: Vec<&str> = Source::ALL.iter().map(|s| s.name()).collect();
        json_schema!({
            "description": "A built-in adapter; `builtin.llm.PROVIDER`, the quarantined LLM of a provider declared under `providers`; or `mcp.SERVER.TOOL`: the tool named TOOL on the server declared as SERVER under `servers`.",
            "anyOf": [
                { "type": "string", "enum": builtins },
                { "type": "string", "pattern": "^mcp\\.[A-Za-z0-9_-]{1,64}\\.[A-Za-z0-9_.-]{1,128}$" },
                { "type": "string", "pattern": "^builtin\\.llm\\.[A-Za-z0-9_-]{1,64}$" }
            ]
        })
    }
}

/// The built-in adapters a tool can be served by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Source {
    #[serde(rename = "builtin.mail.list")]
    MailList,
    #[serde(rename = "builtin.mail.get")]
    MailGet,
    #[serde(rename = "builtin.mail.search")]
    MailSearch,
    #[serde(rename = "builtin.mail.send")]
    MailSend,
    /// Moves a reviewed draft to the outbox, if its content still has the reviewed digest.
    #[serde(rename = "builtin.mail.commit")]
    MailCommit,
    #[serde(rename = "builtin.files.list")]
    FilesList,
    #[serde(rename = "builtin.files.read")]
    FilesRead,
    #[serde(rename = "builtin.files.write")]
    FilesWrite,
    #[serde(rename = "builtin.web.get")]
    WebGet,
}

impl Source {
    /// Every built-in source, in documentation order.
    pub const ALL: [Source; 9] = [
        Source::MailList,
        Source::MailGet,
        Source::MailSearch,
        Source::MailSend,
        Source::MailCommit,
        Source::FilesList,
        Source::FilesRead,
        Source::FilesWrite,
        Source::WebGet,
    ];

    /// The name used in policy files.
    ///
    /// ```
    /// use zamburak::policy::model::Source;
    /// assert_eq!(Source::MailSend.name(), "builtin.mail.send");
    /// assert_eq!(Source::MailSend.args(), ["to", "subject", "body"]);
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Source::MailList => "builtin.mail.list",
            Source::MailGet => "builtin.mail.get",
            Source::MailSearch => "builtin.mail.search",
            Source::MailSend => "builtin.mail.send",
            Source::MailCommit => "builtin.mail.commit",
            Source::FilesList => "builtin.files.list",
            Source::FilesRead => "builtin.files.read",
            Source::FilesWrite => "builtin.files.write",
            Source::WebGet => "builtin.web.get",
        }
    }

    /// The adapter's argument names, in positional order.
    pub fn args(self) -> &'static [&'static str] {
        match self {
            Source::MailList => &["limit"],
            Source::MailGet => &["id"],
            Source::MailSearch => &["query"],
            Source::MailSend => &["to", "subject", "body"],
            Source::MailCommit => &["id", "sha256"],
            Source::FilesList | Source::FilesRead => &["path"],
            Source::FilesWrite => &["path", "content"],
            Source::WebGet => &["url"],
        }
    }

    /// Whether the adapter's result is a list (of messages or file names), not one record.
    pub fn returns_list(self) -> bool {
        matches!(
            self,
            Source::MailList | Source::MailSearch | Source::FilesList
        )
    }

    /// Whether the adapter sends its arguments out of the process (docs/semantics.md, "Decisions"): mail to
    /// its recipients, a URL to a web server. The rest read or write the user's own data on this machine
    /// (`builtin.mail.commit` sends a reviewed draft, not its arguments).
    pub fn transmits(self) -> bool {
        matches!(self, Source::MailSend | Source::WebGet)
    }

    /// Whether the adapter can carry out a `draft` decision (write a draft instead of acting).
    pub fn supports_draft(self) -> bool {
        self == Source::MailSend
    }
}
