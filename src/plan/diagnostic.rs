//! Diagnostics about a plan: a stable code, a severity, an exact span, a message and a fix hint.

use serde::{Deserialize, Serialize};

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// One finding about a plan, located by byte offsets into the plan source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Stable code, e.g. `Z101`; documented in docs/lint.md.
    pub code: &'static str,
    pub severity: Severity,
    /// Byte range in the plan source.
    pub start: usize,
    pub end: usize,
    /// Short statement of the problem. Never contains values from tools (plans only hold plan text).
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}
