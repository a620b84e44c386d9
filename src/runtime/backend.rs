//! Performing a call the policy allowed: the [`Backend`] trait, and [`ToolBackend`], which serves each
//! tool from its `source` (a built-in adapter or an MCP server).

use serde_json::{Map, Value};

use crate::mcp::hub::Hub;
use crate::policy::Policy;
use crate::policy::servers::ToolSource;
use crate::runtime::machine::Stopped;
use crate::text::OutsideText;

/// Why an allowed call produced no value. The run stops with outcome `error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Zamburak's words: never quotes what a tool, a server or a model wrote.
    pub message: String,
    /// What the tool, server or model wrote that the failure is about (an MCP tool's error text, a server's
    /// error message, the property names of a result or answer that does not fit its schema): redacted in
    /// the report and the trace, shown once on the terminal.
    pub said: Option<OutsideText>,
    /// The run was stopped from outside while the call was under way (`mcp serve`'s run timeout or
    /// shutdown killed the server it waited on): the run ends for that reason, not as a tool's failure.
    pub stopped: Option<Stopped>,
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            message,
            said: None,
            stopped: None,
        }
    }
}

/// Performs tool calls the policy allowed.
pub trait Backend {
    /// Runs `tool` (served by `source`, when the policy names one) with raw arguments. `draft`: the decision
    /// was `draft`, so the effect must be prepared reversibly; it holds why, for the draft to carry
    /// (docs/approvals.md, "Drafts and commits"). The error text is shown to the user only.
    fn invoke(
        &mut self,
        tool: &str,
        source: Option<&ToolSource>,
        args: &Map<String, Value>,
        draft: Option<&str>,
    ) -> Result<Value, Failure>;

    /// The pin of the tool definition `source` will be called against, when the source is pinned (an MCP
    /// tool); recorded with each call.
    fn pin(&self, _source: &ToolSource) -> Option<String> {
        None
    }

    /// What a call would act on beyond its arguments, for the person deciding its claim (the draft a
    /// commit would send). `None`: the arguments are the whole effect.
    fn preview(
        &self,
        _source: &ToolSource,
        _args: &Map<String, Value>,
    ) -> Option<Result<Value, String>> {
        None
    }
}

/// The built-in adapters of `crate::tools`, configured by the policy's `builtins:` section.
pub struct BuiltinBackend {
    builtins: crate::tools::Builtins,
    /// The policy's file name, for errors about its `builtins` section.
    policy_name: String,
}

impl BuiltinBackend {
    pub fn new(policy: &Policy) -> BuiltinBackend {
        BuiltinBackend {
            builtins: crate::tools::Builtins::new(
                policy.builtins(),
                policy.user().unwrap_or_default(),
            ),
            policy_name: policy.name().to_string(),
        }
    }
}

impl Backend for BuiltinBackend {
    fn preview(
        &self,
        source: &ToolSource,
        args: &Map<String, Value>,
    ) -> Option<Result<Value, String>> {
        let name = source.builtin()?.name();
        Some(
            self.builtins
                .preview(name, args)?
                .map_err(|e| e.to_string()),
        )
    }

    fn invoke(
        &mut self,
        tool: &str,
        source: Option<&ToolSource>,
        args: &Map<String, Value>,
        draft: Option<&str>,
    ) -> Result<Value, Failure> {
        let Some(source) = source.and_then(ToolSource::builtin).map(|s| s.name()) else {
            return Err(format!(
                "tool `{tool}` has no built-in `source` in the policy, so nothing here can serve it"
            )
            .into());
        };
        self.builtins
            .call(source, args, draft)
            .map_err(|e| match e {
                crate::tools::ToolError::MissingPath { .. } => {
                    format!(
                        "{e} (relative paths resolve against the policy file, {})",
                        self.policy_name
                    )
                }
                e => e.to_string(),
            })
            .map_err(Failure::from)
    }
}

/// Serves every tool from its source: built-in adapters, and MCP servers through a [`Hub`] when the
/// policy declares any.
pub struct ToolBackend {
    builtins: BuiltinBackend,
    mcp: Option<Hub>,
    /// The policy's LLM providers, by name.
    providers: std::collections::BTreeMap<String, crate::policy::model::ProviderSpec>,
}

impl ToolBackend {
    /// The backend for `policy`, read from `policy_path`: the built-in adapters and, when the policy uses
    /// MCP tools, its servers, after checking offline that the lock beside the policy covers them. No
    /// server is started yet.
    pub fn for_policy(
        policy: &Policy,
        policy_path: Option<&std::path::Path>,
    ) -> Result<ToolBackend, crate::mcp::lock::LockError> {
        let backend = ToolBackend::new(policy);
        if policy.mcp_tools().next().is_none() {
            return Ok(backend);
        }
        // Only a policy read from a file can use MCP tools (the built-in default has none); without a
        // path there is no lock to check, which refuses.
        let path = policy_path.unwrap_or(std::path::Path::new(policy.name()));
        Ok(backend.with_mcp(Hub::open(policy, path)?))
    }

    /// Built-in adapters only; an MCP-sourced call fails.
    pub fn new(policy: &Policy) -> ToolBackend {
        ToolBackend {
            builtins: BuiltinBackend::new(policy),
            mcp: None,
            providers: policy
                .file()
                .providers
                .iter()
                .map(|(n, p)| (n.to_string(), p.clone()))
                .collect(),
        }
    }

    /// Also serve MCP tools, from `hub`'s servers.
    pub fn with_mcp(self, hub: Hub) -> ToolBackend {
        ToolBackend {
            mcp: Some(hub),
            ..self
        }
    }

    pub fn hub(&mut self) -> Option<&mut Hub> {
        self.mcp.as_mut()
    }
}

impl Backend for ToolBackend {
    fn preview(
        &self,
        source: &ToolSource,
        args: &Map<String, Value>,
    ) -> Option<Result<Value, String>> {
        self.builtins.preview(source, args)
    }

    fn pin(&self, source: &ToolSource) -> Option<String> {
        let mcp = source.mcp()?;
        Some(
            self.mcp
                .as_ref()?
                .tool_sha256(&mcp.server, &mcp.tool)?
                .to_string(),
        )
    }

    fn invoke(
        &mut self,
        tool: &str,
        source: Option<&ToolSource>,
        args: &Map<String, Value>,
        draft: Option<&str>,
    ) -> Result<Value, Failure> {
        let mcp = match source {
            Some(ToolSource::Mcp(mcp)) => mcp,
            Some(ToolSource::Llm(provider)) => {
                let Some(spec) = self.providers.get(provider) else {
                    return Err(format!("provider `{provider}` is not declared").into());
                };
                if draft.is_some() {
                    return Err(format!("`{tool}` cannot carry out a draft").into());
                }
                return crate::tools::llm::ask(spec, args).map_err(|e| Failure {
                    message: e.to_string(),
                    said: e.said(),
                    stopped: None,
                });
            }
            _ => return self.builtins.invoke(tool, source, args, draft),
        };
        let Some(hub) = self.mcp.as_mut() else {
            return Err(format!(
                "tool `{tool}` is served by MCP server `{}`, which this run did not connect",
                mcp.server
            )
            .into());
        };
        if draft.is_some() {
            // Validation refuses `draft` for MCP tools; should one reach here, nothing is sent.
            return Err(format!("`{tool}` cannot carry out a draft").into());
        }
        hub.call(&mcp.server, &mcp.tool, args).map_err(|e| Failure {
            message: e.to_string(),
            said: e.said(),
            stopped: None,
        })
    }
}
