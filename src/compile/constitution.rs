//! The constitution `policy compile` drafts from: plain-language lines, numbered from 1 so rules and
//! scenarios can cite them, and the named exceptions to the attack battery written in it
//! (docs/policy.md, "Compiling a policy from plain words").
//!
//! An exception is a line of its own:
//!
//! ```text
//! exception: TOOL.ARG may be chosen by data because REASON
//! ```
//!
//! Nothing else waives a battery attack: the drafter's answers cannot, and a line that starts with
//! `exception:` but does not have this form is an error rather than ignored.

use std::collections::BTreeSet;

/// Largest constitution read: a few pages of prose, so the requests built from it stay bounded.
pub const MAX_BYTES: usize = 32 * 1024;

/// A constitution, split into lines.
#[derive(Debug)]
pub struct Constitution {
    lines: Vec<String>,
    pub exceptions: Vec<Exception>,
}

/// A named exception: the battery does not attack `tool.arg`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exception {
    pub tool: String,
    pub arg: String,
    pub reason: String,
    /// Its line in the constitution, from 1.
    pub line: usize,
}

/// Why a constitution cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConstitutionError {
    #[error("the constitution is larger than {MAX_BYTES} bytes")]
    TooLarge,
    #[error("the constitution is empty")]
    Empty,
    #[error(
        "line {0}: an exception is written `exception: TOOL.ARG may be chosen by data because REASON`"
    )]
    BadException(usize),
}

impl Constitution {
    /// Splits `text` into lines and reads its exceptions.
    ///
    /// ```
    /// use zamburak::compile::constitution::Constitution;
    /// let c = Constitution::parse("Pay only my landlord.\nexception: fetch_url.url may be chosen by data because I read links I get\n").unwrap();
    /// assert_eq!(c.exceptions[0].tool, "fetch_url");
    /// assert_eq!(c.exceptions[0].line, 2);
    /// assert!(Constitution::parse("exception: whatever\n").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Constitution, ConstitutionError> {
        if text.len() > MAX_BYTES {
            return Err(ConstitutionError::TooLarge);
        }
        if text.trim().is_empty() {
            return Err(ConstitutionError::Empty);
        }
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut exceptions = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = line.trim().strip_prefix("exception:") else {
                continue;
            };
            exceptions
                .push(exception(rest.trim(), i + 1).ok_or(ConstitutionError::BadException(i + 1))?);
        }
        Ok(Constitution { lines, exceptions })
    }

    /// Line `n` (from 1), if there is one.
    pub fn line(&self, n: usize) -> Option<&str> {
        n.checked_sub(1)
            .and_then(|i| self.lines.get(i))
            .map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The text with each line prefixed by its number (`L3: …`), as the drafter is given it.
    pub fn numbered(&self) -> String {
        self.lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("L{}: {l}\n", i + 1))
            .collect()
    }

    /// The `(tool, arg)` pairs the constitution exempts from the battery.
    pub fn exempt(&self) -> BTreeSet<(String, String)> {
        self.exceptions
            .iter()
            .map(|e| (e.tool.clone(), e.arg.clone()))
            .collect()
    }
}

fn identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `TOOL.ARG may be chosen by data because REASON`, with a non-empty reason.
fn exception(rest: &str, line: usize) -> Option<Exception> {
    let (target, after) = rest.split_once(char::is_whitespace)?;
    let reason = after
        .trim()
        .strip_prefix("may be chosen by data because")?
        .trim();
    let (tool, arg) = target.split_once('.')?;
    if !identifier(tool) || !identifier(arg) || reason.is_empty() {
        return None;
    }
    Some(Exception {
        tool: tool.to_string(),
        arg: arg.to_string(),
        reason: reason.to_string(),
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exceptions_are_exact_or_refused() {
        let c = Constitution::parse(
            "a\n  exception: send_email.to may be chosen by data because I reply to whoever writes\n",
        )
        .unwrap();
        assert_eq!(
            c.exceptions,
            [Exception {
                tool: "send_email".into(),
                arg: "to".into(),
                reason: "I reply to whoever writes".into(),
                line: 2
            }]
        );
        for bad in [
            "exception: send_email.to may be chosen by data because",
            "exception: send_email may be chosen by data because x",
            "exception: send_email.to.x may be chosen by data because x",
            "exception: send_email.to is fine",
        ] {
            assert_eq!(
                Constitution::parse(bad).unwrap_err(),
                ConstitutionError::BadException(1),
                "{bad}"
            );
        }
        assert_eq!(
            Constitution::parse(" \n").unwrap_err(),
            ConstitutionError::Empty
        );
        assert_eq!(
            c.line(2).map(|l| l.trim_start().starts_with("exception")),
            Some(true)
        );
        assert_eq!(c.line(0), None);
        assert_eq!(c.line(3), None);
    }
}
