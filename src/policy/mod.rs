//! The policy: which tools a plan may call, how their results are labelled, what their arguments require.
//!
//! * [`model`] is the file format (serde + JSON Schema), [`Policy::load`] reads and checks a file and
//!   reports every mistake at its line and column ([`PolicyError`]).
//! * [`Policy`] gives the runtime what it needs: [`Policy::signatures`], [`Policy::label_space`], tools,
//!   verifiers and limits with defaults filled in.
//! * [`labelling::label_result`] labels a tool result; [`decide::decide`] is the pure decision procedure
//!   (docs/semantics.md, "Decisions").
//!
//! ```
//! use zamburak::policy::Policy;
//! let policy = Policy::bundled_default().unwrap();
//! assert!(policy.tool("send_email").is_some());
//! assert!(policy.signatures().is_callable("verify_recipient"));
//! ```

pub mod advice;
pub mod builtins;
pub mod decide;
pub mod discover;
mod error;
mod from_tree;
pub mod labelling;
mod load;
pub mod model;
mod named_map;
pub mod path_tags;
pub mod providers;
pub mod rule;
pub mod scan;
pub mod servers;
pub mod sinks;
pub mod starter;
mod tree;
pub mod url_rule;
mod validate;
pub use validate::is_free_name;

pub use decide::{
    ArgClaim, Claim, Decision, Outcome, Remembered, Texts, chosen_by_data, consults_remembered,
    decide, meets_but_known, non_readers, on_approval, reason_for_planner, violations,
};
pub use error::{KeyPath, KeySeg, PolicyError, PolicyErrorKind};
pub use labelling::label_result;
pub(crate) use load::yaml_error;
pub use load::{MAX_POLICY_BYTES, MAX_POLICY_DEPTH, rule_line, yaml_mapping};
pub use model::{Effect, Mode, OnViolation, PolicyFile, ResolvedLimits, Source, ToolSpec};
pub use rule::{Check, Rule};

use crate::label::{LabelSpace, SpaceError};
use crate::plan::Signatures;
use crate::policy::builtins::{BuiltinsConfig, VerifierSpec};

/// The text of `policies/default.yaml`, compiled into the binary.
pub const BUNDLED_DEFAULT: &str = include_str!("../../policies/default.yaml");

/// How messages name the built-in default: it is no file on disk, so no message names one.
pub const BUILT_IN_NAME: &str = "the built-in default policy";

/// A checked policy with every default filled in. Built by [`Policy::load`] or [`Policy::from_yaml_str`].
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    file: PolicyFile,
    /// The YAML it was read from, so a help can point at the line that states a rule.
    text: std::sync::Arc<str>,
    name: String,
    kinds: Vec<String>,
    /// Arguments that leave without a declared confidentiality check, and the check they were given
    /// ([`sinks::fill_defaults`]); `file` holds them already.
    defaulted: Vec<sinks::Defaulted>,
}

impl Policy {
    /// A policy for a unit test, from its text, with relative paths under `/base`; a text that does not
    /// load fails the test with the loader's message and the text.
    #[cfg(test)]
    #[allow(
        clippy::panic,
        reason = "a test fails by panicking, with a message saying what went wrong"
    )]
    pub(crate) fn for_test(text: &str) -> Policy {
        Policy::from_yaml_str(text, "t.yaml", std::path::Path::new("/base"))
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// The bundled `policies/default.yaml`. Its relative `builtins` paths are resolved against
    /// `CURRENT_DIR/policies`, i.e. as if the file were read from a checkout of this repository in the current
    /// directory, so `zamburak run examples/…` works from the repository root without a `--policy`.
    pub fn bundled_default() -> Result<Policy, PolicyError> {
        let base = std::env::current_dir().unwrap_or_default().join("policies");
        Policy::from_yaml_str(BUNDLED_DEFAULT, BUILT_IN_NAME, &base)
    }

    /// The YAML text the policy was read from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where `tools.TOOL.RULE` (`args.to.require`, `returns.readers`) is stated, as `NAME:LINE` for a file,
    /// or `the built-in default policy, line N`. `None` when no line states it.
    pub fn locate(&self, tool: &str, rule: &str) -> Option<String> {
        let line = load::rule_line(&self.text, tool, rule)?;
        Some(if self.name == BUILT_IN_NAME {
            format!("{BUILT_IN_NAME}, line {line}")
        } else {
            format!("{}:{line}", self.name)
        })
    }

    /// The name the policy was loaded under: its file's path, or the name given to [`Policy::from_yaml_str`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Arguments that leave the process whose policy entry declared no confidentiality check, with the check they
    /// were given (docs/policy.md, "Arguments that leave"). What `policy check` lists.
    pub fn defaulted(&self) -> &[sinks::Defaulted] {
        &self.defaulted
    }

    /// The normalised model (defaults filled in, paths resolved).
    pub fn file(&self) -> &PolicyFile {
        &self.file
    }
    /// The file name used in messages.
    pub fn display_name(&self) -> &str {
        &self.name
    }
    pub fn mode(&self) -> Mode {
        self.file.mode.unwrap_or(Mode::Strict)
    }
    /// The trusted principal, implicitly a reader of every value.
    pub fn user(&self) -> Option<&str> {
        self.file.user.as_deref()
    }
    /// Whether `principal` is the policy's user (case-insensitive, surrounding spaces ignored).
    pub fn is_user(&self, principal: &str) -> bool {
        // The user's mailbox, folded as the transport folds it: `me+notes@example.com` is the user too.
        self.user()
            .is_some_and(|u| crate::label::party(u) == crate::label::party(principal))
    }
    /// Declared tags, in order.
    pub fn tags(&self) -> &[String] {
        &self.file.tags
    }
    /// Verified kinds: the distinct `mints` of the verifiers, in declaration order.
    pub fn kinds(&self) -> &[String] {
        &self.kinds
    }
    pub fn tools(&self) -> impl Iterator<Item = (&str, &ToolSpec)> {
        self.file.tools.iter()
    }
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.file.tools.get(name)
    }
    /// The declared MCP servers.
    pub fn servers(&self) -> impl Iterator<Item = (&str, &model::ServerSpec)> {
        self.file.servers.iter()
    }
    pub fn server(&self, name: &str) -> Option<&model::ServerSpec> {
        self.file.servers.get(name)
    }
    /// The declared LLM provider `name`.
    pub fn provider(&self, name: &str) -> Option<&model::ProviderSpec> {
        self.file.providers.get(name)
    }
    /// Every tool served by an MCP server, with its source, in declaration order.
    pub fn mcp_tools(&self) -> impl Iterator<Item = (&str, &model::McpTool)> {
        self.tools()
            .filter_map(|(name, t)| Some((name, t.source.as_ref()?.mcp()?)))
    }
    pub fn verifiers(&self) -> impl Iterator<Item = (&str, &VerifierSpec)> {
        self.file.verifiers.iter()
    }
    pub fn verifier(&self, name: &str) -> Option<&VerifierSpec> {
        self.file.verifiers.get(name)
    }
    /// The planner's principal and mode, with defaults (`llm:planner`, untrusted values withheld).
    pub fn planner(&self) -> model::ResolvedPlanner {
        self.file.planner.clone().unwrap_or_default().resolved()
    }
    /// Why a planner model (`mcp serve`) may not have its plans run under this policy, if it may not: a
    /// normal-mode policy serves one only when `planner.mode: normal` says so (docs/semantics.md, "Control
    /// context and modes": the guarantee of "What is protected" is strict's).
    pub fn refuses_planner_model(&self) -> Option<String> {
        let consented = self.file.planner.as_ref().and_then(|p| p.mode) == Some(Mode::Normal);
        (self.mode() == Mode::Normal && !consented).then(|| {
            "the policy's mode is normal, in which a value set under a condition does not carry it, so data a \
             model may not read can choose what a plan does; serve it with `mode: strict`, or say \
             `planner: { mode: normal }` to accept that for a planner model"
                .to_string()
        })
    }
    /// Limits with defaults (5000 ms, 200 tool calls, recursion 200).
    pub fn limits(&self) -> ResolvedLimits {
        self.file.limits.clone().unwrap_or_default().resolved()
    }
    /// Where the built-in adapters find data, paths already resolved.
    pub fn builtins(&self) -> &BuiltinsConfig {
        static EMPTY: BuiltinsConfig = BuiltinsConfig {
            mail: None,
            files: None,
            web: None,
        };
        self.file.builtins.as_ref().unwrap_or(&EMPTY)
    }

    /// Where remembered values count (docs/semantics.md, "Remembered values"): the scope memories are kept
    /// under (`known.scope`, else the policy file's absolute path, else its name), and the days they last.
    pub fn known_scope(&self) -> String {
        if let Some(scope) = self.file.known.as_ref().and_then(|k| k.scope.clone()) {
            return scope;
        }
        if self.name == BUILT_IN_NAME {
            return "built-in".to_string();
        }
        std::fs::canonicalize(&self.name)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| self.name.clone())
    }
    /// Days a remembered value lasts (`known.expiry_days`, default 90).
    pub fn known_expiry_days(&self) -> u32 {
        self.file
            .known
            .as_ref()
            .and_then(|k| k.expiry_days)
            .unwrap_or(model::DEFAULT_EXPIRY_DAYS)
    }
    /// Whether any argument accepts `known(ROLE)`: only then does a run read the person's store.
    pub fn uses_known(&self) -> bool {
        self.tools()
            .any(|(name, t)| t.args.keys().any(|a| !self.known_roles(name, a).is_empty()))
    }
    /// The `known(ROLE)` roles of argument `arg` of `tool`, in the order its `require` names them.
    pub fn known_roles(&self, tool: &str, arg: &str) -> Vec<&str> {
        let Some(spec) = self.tool(tool).and_then(|t| t.args.get(arg)) else {
            return Vec::new();
        };
        spec.require
            .iter()
            .flat_map(|a| a.0.iter())
            .filter_map(|r| match r {
                model::Requirement::Known(role) => Some(role.as_str()),
                _ => None,
            })
            .collect()
    }
    /// The arguments a value remembered for `role` on `tool.arg` counts for: the role's list in
    /// `known.roles`, else that argument alone.
    pub fn known_role_args(&self, role: &str, tool: &str, arg: &str) -> Vec<(String, String)> {
        let listed = self.file.known.as_ref().and_then(|k| k.roles.get(role));
        match listed {
            Some(list) => list
                .iter()
                .filter_map(|e| e.split_once('.'))
                .map(|(t, a)| (t.to_string(), a.to_string()))
                .collect(),
            None => vec![(tool.to_string(), arg.to_string())],
        }
    }

    /// Callable names for the structural checks and the lowering.
    pub fn signatures(&self) -> Signatures {
        let mut s = Signatures::default();
        for (name, tool) in self.tools() {
            s.tools.insert(name.to_string(), tool.arg_names());
        }
        for (name, _) in self.verifiers() {
            s.verifiers.insert(name.to_string());
        }
        s
    }

    /// A fresh label space for one run: the policy's kinds and tags, no principals or calls yet.
    ///
    /// ```
    /// let p = zamburak::policy::Policy::bundled_default().unwrap();
    /// let space = p.label_space().unwrap();
    /// assert_eq!(space.kind_index("Recipient"), Some(0));
    /// ```
    pub fn label_space(&self) -> Result<LabelSpace, SpaceError> {
        let kinds: Vec<&str> = self.kinds.iter().map(String::as_str).collect();
        let tags: Vec<&str> = self.file.tags.iter().map(String::as_str).collect();
        let mut space = LabelSpace::new(&kinds, &tags)?;
        if let Some(user) = self.user() {
            space.set_user(user);
        }
        Ok(space)
    }

    /// The normalised policy as YAML (what `policy check` prints).
    pub fn to_yaml(&self) -> Result<String, String> {
        serde_saphyr::to_string(&self.file).map_err(|e| e.to_string())
    }

    /// The JSON Schema of the policy format (committed as `docs/policy.schema.json`).
    pub fn json_schema() -> serde_json::Value {
        schemars::schema_for!(PolicyFile).to_value()
    }
}
