//! A mistake in a policy file, located by file, line and column.

use std::fmt;

use super::tree::Pos;

/// Why a policy could not be loaded.
///
/// Displays as `FILE:LINE:COL: error: MESSAGE`, then `  expected ...` on a second line when there is a
/// useful hint. Only a file that cannot be read at all has no position (`FILE: error: ...`).
///
/// ```
/// use std::path::Path;
/// use zamburak::policy::Policy;
/// let err = Policy::from_yaml_str("version: 2\n", "p.yaml", Path::new(".")).unwrap_err();
/// assert_eq!((err.line, err.column), (1, 10));
/// assert!(err.to_string().starts_with("p.yaml:1:10: error: "));
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
}

impl PolicyError {
    pub(crate) fn at(file: &str, pos: Pos, message: impl Into<String>) -> PolicyError {
        PolicyError {
            file: file.to_string(),
            line: pos.line,
            column: pos.column,
            message: message.into(),
            expected: None,
        }
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
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: error: {}", self.file, self.message)?;
        } else {
            write!(
                f,
                "{}:{}:{}: error: {}",
                self.file, self.line, self.column, self.message
            )?;
        }
        if let Some(hint) = &self.expected {
            write!(f, "\n  expected {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PolicyError {}
