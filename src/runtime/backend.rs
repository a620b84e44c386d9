//! Performing a call the policy allowed: the [`Backend`] trait, and the built-in adapters behind it.

use serde_json::{Map, Value};

use crate::policy::Policy;

/// Performs tool calls the policy allowed.
pub trait Backend {
    /// Runs `tool` (served by `source`, when the policy names one) with raw arguments. `draft`: the decision
    /// was `draft`, so the effect must be prepared reversibly. The error text is shown to the user only.
    fn invoke(
        &mut self,
        tool: &str,
        source: Option<&str>,
        args: &Map<String, Value>,
        draft: bool,
    ) -> Result<Value, String>;
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
    fn invoke(
        &mut self,
        tool: &str,
        source: Option<&str>,
        args: &Map<String, Value>,
        draft: bool,
    ) -> Result<Value, String> {
        let Some(source) = source else {
            return Err(format!(
                "tool `{tool}` has no `source` in the policy, so nothing can serve it"
            ));
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
    }
}
