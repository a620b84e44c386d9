//! A mistake in a policy file, located by file, line and column, shown in the layout `lint` uses for plans
//! (rustc's): the message, ` --> FILE:LINE:COL`, the line itself and a caret. The command line prefixes
//! `error: `; this type never does, so no message says it twice.

use std::fmt;

use super::tree::Pos;

/// Why a policy could not be loaded.
///
/// Displays as `MESSAGE`, then ` --> FILE:LINE:COL`, the line with a caret under the column, and
/// `  = expected ...` when there is a useful hint. A file that cannot be read at all has no position
/// (`cannot read FILE: REASON`).
///
/// ```
/// use std::path::Path;
/// use zamburak::policy::Policy;
/// let err = Policy::from_yaml_str("version: 2\n", "p.yaml", Path::new(".")).unwrap_err();
/// assert_eq!((err.line, err.column), (1, 10));
/// let shown = err.to_string();
/// assert!(shown.contains("\n --> p.yaml:1:10\n  |\n1 | version: 2\n  |          ^"), "{shown}");
/// assert!(!shown.contains("error:"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    /// The file as the user named it.
    pub file: String,
    /// 1-based; 0 only when the file could not be read.
    pub line: u64,
    pub column: u64,
    /// What is wrong. Never contains more of the file than names and short scalars the user wrote.
    pub message: String,
    /// What would have been accepted, when that helps.
    pub expected: Option<String>,
    /// The text of line `line`, for the snippet (control characters escaped, long lines cut).
    pub source_line: Option<String>,
}

/// Longest line shown in a snippet, in characters: enough to see the key, bounded for a hostile file.
const MAX_SNIPPET_CHARS: usize = 200;

impl PolicyError {
    pub(crate) fn at(file: &str, pos: Pos, message: impl Into<String>) -> PolicyError {
        PolicyError {
            file: file.to_string(),
            line: pos.line,
            column: pos.column,
            message: message.into(),
            expected: None,
            source_line: None,
        }
    }

    /// Adds the line the error points at, from the text that was parsed.
    pub(crate) fn with_source(mut self, text: &str) -> PolicyError {
        if self.line == 0 || self.source_line.is_some() {
            return self;
        }
        let index = usize::try_from(self.line - 1).unwrap_or(usize::MAX);
        if let Some(line) = text.lines().nth(index) {
            let shown: String = line
                .chars()
                .take(MAX_SNIPPET_CHARS)
                .flat_map(|c| {
                    // A tab would move the caret; a control character could rewrite the terminal.
                    if c == '\t' {
                        vec![' ']
                    } else if c.is_control() {
                        c.escape_default().collect()
                    } else {
                        vec![c]
                    }
                })
                .collect();
            self.source_line = Some(shown);
        }
        self
    }

    pub(crate) fn expected(mut self, hint: impl Into<String>) -> PolicyError {
        self.expected = Some(hint.into());
        self
    }

    pub(crate) fn unreadable(file: &str, message: impl Into<String>) -> PolicyError {
        PolicyError {
            file: file.to_string(),
            line: 0,
            column: 0,
            message: message.into(),
            expected: None,
            source_line: None,
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            return write!(f, "cannot read {}: {}", self.file, self.message);
        }
        // The gutter is as wide as the line number, as in `lint`'s diagnostics (plan/render.rs).
        let gutter = " ".repeat(self.line.to_string().len());
        write!(f, "{}", self.message)?;
        write!(
            f,
            "\n{gutter}--> {}:{}:{}",
            self.file, self.line, self.column
        )?;
        if let Some(text) = &self.source_line {
            let caret_at = usize::try_from(self.column.saturating_sub(1))
                .unwrap_or(0)
                .min(text.chars().count());
            write!(
                f,
                "\n{gutter} |\n{} | {text}\n{gutter} | {}^",
                self.line,
                " ".repeat(caret_at)
            )?;
        }
        if let Some(hint) = &self.expected {
            write!(f, "\n{gutter} = expected {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PolicyError {}
