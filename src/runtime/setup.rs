//! What a run needs from the machine before its first tool call (docs/policy.md, "Before a run"): every
//! tool the plan names has a source, and every built-in source finds its `builtins` section and the
//! directories it reads. A problem here is the policy's or the machine's, never the plan's or the data's,
//! so it is a configuration error (exit 2) reported before anything runs — not a failed call in the middle
//! of a run, after some effects already happened.
//!
//! MCP tools are checked by the lock ([`crate::mcp::lock::check_offline`]); LLM providers by the policy
//! loader.

use std::collections::BTreeSet;

use crate::policy::Policy;
use crate::tools::{Builtins, ToolError};

/// One thing that keeps a tool from working on this machine.
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
}
