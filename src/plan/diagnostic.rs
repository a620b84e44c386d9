//! Diagnostics about a plan: a [`Code`], an exact span, a message and a fix hint, and for a finding of
//! the analysis its secondary spans (where the data comes from) and notes.

use serde::{Deserialize, Serialize};

use super::code::{Code, Severity};

/// One finding about a plan, located by byte offsets into the plan source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Stable code, e.g. `Z101`, with its severity; documented in docs/diagnostics.md.
    pub code: Code,
    /// Byte range in the plan source.
    pub start: usize,
    pub end: usize,
    /// Short statement of the problem. Never contains values from tools (plans only hold plan text).
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// The tool call the finding is about, when it is about one.
    pub tool: Option<String>,
    /// The argument of that call at fault (none: the call as a whole, e.g. its control context).
    pub argument: Option<String>,
    /// Secondary spans: the calls the flagged value derives from, in source order.
    pub sources: Vec<SourceRef>,
    /// One line each, shown before the help: the call's other broken requirements, or why the help is
    /// what it is.
    pub notes: Vec<String>,
}

/// A call a label derives from: where it starts in the plan (a secondary span of a diagnostic), its line
/// and the tool or verifier called.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceRef {
    /// 1-based line of `start`.
    pub line: u32,
    pub name: String,
    /// Byte offset where the call starts.
    pub start: usize,
}

impl Diagnostic {
    /// A diagnostic with no hint, sources or notes.
    pub fn new(code: Code, start: usize, end: usize, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            start,
            end,
            message: message.into(),
            hint: None,
            tool: None,
            argument: None,
            sources: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// With a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    /// The code's fixed severity.
    pub const fn severity(&self) -> Severity {
        self.code.severity()
    }
}
