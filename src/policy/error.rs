//! A mistake in a policy file, located by file, line and column, shown in the layout `lint` uses for plans
//! (rustc's): the message, ` --> FILE:LINE:COL`, the line itself and a caret. The command line prefixes
//! `error: `; this type never does, so no message says it twice.
//!
//! Besides the words, each error says what kind of mistake it is ([`PolicyErrorKind`]) and where in the
//! policy's structure it is ([`KeyPath`]), so a program (the CLI, the Python package, the MCP server) can
//! act on it without reading the message.

use std::fmt;

use serde::Serialize;

use super::tree::{Pos, Seg};

/// What kind of mistake a [`PolicyError`] reports. New kinds may be added; match with a `_` arm.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyErrorKind {
    /// The file could not be read: missing, a directory, no permission.
    Unreadable,
    /// Larger than [`super::MAX_POLICY_BYTES`], or over the YAML budget (nesting, nodes, aliases).
    TooLarge,
    /// Not UTF-8, not YAML, or more than one YAML document.
    Syntax,
    /// A value of the wrong YAML type: a list where a mapping belongs, a policy that is not a mapping.
    WrongType,
    /// A key the format does not have (often a misspelling).
    UnknownKey,
    /// A key the format requires is missing, or an entry lacks what its kind needs.
    MissingKey,
    /// A key written twice in one mapping.
    DuplicateKey,
    /// A value the format does not accept: an unknown variant, a number out of range or zero, a malformed
    /// requirement, URL or glob.
    InvalidValue,
    /// A `version` this build does not read.
    UnsupportedVersion,
    /// A tag, kind, tool, verifier, argument, server or provider name that cannot be used.
    InvalidName,
    /// Two declarations share a name: a tag declared twice, a tool named like a verifier, an argument
    /// named like the server it goes to.
    NameClash,
    /// More tags or verified kinds than a label can hold.
    TooMany,
    /// A name that refers to nothing declared: a tag, a minted kind, a server, a provider, an argument.
    Undeclared,
    /// An empty value where that would name no one or accept nothing: a reader, a command, a list.
    Empty,
    /// A tool declaration its source cannot honour: a pure builtin or MCP tool, a draft the source cannot
    /// carry out, a builtin's or an LLM's arguments declared differently, an LLM answer declared trusted.
    SourceMismatch,
}

/// One step of a [`KeyPath`]: a mapping key or a list index (0-based).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum KeySeg {
    Key(String),
    Index(usize),
}

/// Where in the policy's structure a mistake is, from the top: `tools`, `send_email`, `args`, `to`. Empty
/// when the mistake is the whole file (unreadable, not YAML) or no key could be told.
///
/// Displays as `tools.send_email.args.to.require[1]`; a key that is not a plain name is quoted
/// (`servers["my.server"]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct KeyPath(Box<[KeySeg]>);

impl KeyPath {
    pub(crate) fn of(path: &[Seg<'_>]) -> KeyPath {
        KeyPath(
            path.iter()
                .map(|s| match s {
                    Seg::Key(k) => KeySeg::Key((*k).to_string()),
                    Seg::Index(i) => KeySeg::Index(*i),
                })
                .collect(),
        )
    }

    pub fn segments(&self) -> &[KeySeg] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the path is exactly these keys (indices written as their decimal text), for tests and
    /// callers that know the shape they look for.
    pub fn is(&self, keys: &[&str]) -> bool {
        self.0.len() == keys.len()
            && self.0.iter().zip(keys).all(|(seg, want)| match seg {
                KeySeg::Key(k) => k == want,
                KeySeg::Index(i) => i.to_string() == *want,
            })
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                KeySeg::Index(n) => write!(f, "[{n}]")?,
                KeySeg::Key(k)
                    if !k.is_empty()
                        && k.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
                {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                KeySeg::Key(k) => write!(f, "[{}]", serde_json::Value::from(k.as_str()))?,
            }
        }
        Ok(())
    }
}

/// Why a policy could not be loaded.
///
/// Displays as `MESSAGE`, then ` --> FILE:LINE:COL`, the line with a caret under the column, and
/// `  = expected ...` when there is a useful hint. A file that cannot be read at all has no position
/// (`cannot read FILE: REASON`).
///
/// ```
/// use std::path::Path;
/// use zamburak::policy::Policy;
/// use zamburak::policy::PolicyErrorKind;
/// let err = Policy::from_yaml_str("version: 2\n", "p.yaml", Path::new(".")).unwrap_err();
/// assert_eq!((err.line, err.column), (1, 10));
/// assert_eq!(err.kind, PolicyErrorKind::UnsupportedVersion);
/// assert_eq!(err.key_path.to_string(), "version");
/// let shown = err.to_string();
/// assert!(shown.contains("\n --> p.yaml:1:10\n  |\n1 | version: 2\n  |          ^"), "{shown}");
/// assert!(!shown.contains("error:"));
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    /// What kind of mistake this is.
    pub kind: PolicyErrorKind,
    /// Where in the policy's structure it is; empty when that is not known (see [`KeyPath`]).
    pub key_path: KeyPath,
    /// The file as the user named it.
    pub file: String,
    /// 1-based; 0 only when the file could not be read.
    pub line: u64,
    pub column: u64,
    /// What is wrong. Never contains more of the file than names and short scalars the user wrote.
    pub message: String,
    /// What would have been accepted, when that helps.
    // The two optional texts are boxed strings so that the error, which every loading function returns,
    // stays small (clippy's `result_large_err`).
    pub expected: Option<Box<str>>,
    /// The text of line `line`, for the snippet (control characters escaped, long lines cut).
    pub source_line: Option<Box<str>>,
}

/// Longest line shown in a snippet, in characters: enough to see the key, bounded for a hostile file.
const MAX_SNIPPET_CHARS: usize = 200;

impl PolicyError {
    pub(crate) fn at(
        kind: PolicyErrorKind,
        file: &str,
        pos: Pos,
        message: impl Into<String>,
    ) -> PolicyError {
        PolicyError {
            kind,
            key_path: KeyPath::default(),
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
            self.source_line = Some(shown.into());
        }
        self
    }

    pub(crate) fn expected(mut self, hint: impl Into<String>) -> PolicyError {
        self.expected = Some(hint.into().into());
        self
    }

    /// Sets where in the policy's structure the mistake is.
    pub(crate) fn in_path(mut self, key_path: KeyPath) -> PolicyError {
        self.key_path = key_path;
        self
    }

    pub(crate) fn unreadable(file: &str, message: impl Into<String>) -> PolicyError {
        PolicyError {
            kind: PolicyErrorKind::Unreadable,
            key_path: KeyPath::default(),
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

/// The message of a key written twice in one mapping. Our own deserializers (`NamedMap`, `forbid_tags`)
/// report it through serde's free-text error, so the reader recognises it by this one shared wording.
pub(crate) fn duplicate_key_message(key: &str) -> String {
    format!("{DUPLICATE_KEY}`{key}`")
}

const DUPLICATE_KEY: &str = "duplicate key ";

/// Whether a serde message is [`duplicate_key_message`]'s.
pub(crate) fn is_duplicate_key_message(message: &str) -> bool {
    message.starts_with(DUPLICATE_KEY)
}
