//! Diagnostics about a plan: a [`Code`], an exact span, a message and a fix hint, and for a finding of
//! the analysis its secondary spans (where the data comes from) and notes.

use serde::{Deserialize, Serialize};

use super::code::{Code, Severity};

/// Who reads a diagnostic's help: it decides what the help may propose.
///
/// * [`Audience::Person`] (`zamburak lint`, `zamburak run`): the person who owns the policy. Where the
///   plan cannot meet a requirement, the help names the policy line that would allow it, and it may
///   mention the other mode.
/// * [`Audience::Planner`] (`lint_plan` and `run_plan` of `zamburak mcp serve`): a model writing the
///   plan. Its help proposes only changes to the plan: never a change to the policy, the policy's file or
///   a line of it, nor a run in the other mode (docs/serve.md). What the policy does is not the model's
///   to change, and a model told how to loosen it could talk a person into doing so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Audience {
    #[default]
    Person,
    Planner,
}

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
    /// An edit of the plan that resolves the finding, when one can be computed from the plan alone.
    pub fix: Option<Fix>,
}

/// A change to the plan's text that resolves a diagnostic (ruff's fixes are the model): what it does in
/// words, whether it keeps the plan's meaning, and the edits. A repair loop applies it without reading the
/// words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    /// What the fix does, e.g. "rename `count` to `limit`".
    pub message: String,
    pub applicability: Applicability,
    /// Non-overlapping edits, in source order.
    pub edits: Vec<Edit>,
}

/// Whether applying a [`Fix`] keeps what the plan means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// The plan means what it meant (a misspelt name, an annotation, an `await` on a plain call).
    Safe,
    /// The plan does something close but not the same (an error is no longer caught, a value is verified
    /// and may now be refused): read it before running.
    Unsafe,
}

/// Replace the bytes `start..end` of the plan with `content` (an insertion when the range is empty).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub content: String,
}

impl Edit {
    pub fn replace(start: usize, end: usize, content: impl Into<String>) -> Edit {
        Edit {
            start,
            end,
            content: content.into(),
        }
    }
    pub fn delete(start: usize, end: usize) -> Edit {
        Edit::replace(start, end, "")
    }
    pub fn insert(at: usize, content: impl Into<String>) -> Edit {
        Edit::replace(at, at, content)
    }
}

impl Fix {
    pub fn safe(message: impl Into<String>, edits: Vec<Edit>) -> Fix {
        Fix::new(message, Applicability::Safe, edits)
    }
    pub fn unsafe_(message: impl Into<String>, edits: Vec<Edit>) -> Fix {
        Fix::new(message, Applicability::Unsafe, edits)
    }
    fn new(message: impl Into<String>, applicability: Applicability, mut edits: Vec<Edit>) -> Fix {
        edits.sort_by_key(|e| (e.start, e.end));
        Fix {
            message: message.into(),
            applicability,
            edits,
        }
    }

    /// `source` with the edits applied; `None` when edits overlap or fall outside it (a defect in the
    /// fix, never applied half-way).
    ///
    /// ```
    /// use zamburak::plan::diagnostic::{Edit, Fix};
    /// let f = Fix::safe("rename", vec![Edit::replace(11, 16, "limit")]);
    /// assert_eq!(f.apply("read_inbox(count=5)").as_deref(), Some("read_inbox(limit=5)"));
    /// ```
    pub fn apply(&self, source: &str) -> Option<String> {
        let mut out = String::with_capacity(source.len());
        let mut at = 0;
        for e in &self.edits {
            if e.start < at || e.end < e.start {
                return None;
            }
            out.push_str(source.get(at..e.start)?);
            out.push_str(&e.content);
            at = e.end;
        }
        out.push_str(source.get(at..)?);
        Some(out)
    }
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
            fix: None,
        }
    }

    /// With a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    /// With a fix.
    pub fn with_fix(mut self, fix: Option<Fix>) -> Diagnostic {
        self.fix = fix;
        self
    }

    /// The code's fixed severity.
    pub const fn severity(&self) -> Severity {
        self.code.severity()
    }
}
