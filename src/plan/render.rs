//! Human-readable diagnostics in the familiar rustc/ruff layout.

use std::fmt::Write as _;

use super::diagnostic::Diagnostic;

/// 1-based line and column (in characters) of a byte offset. Lines end at `\n`, `\r\n` or a lone `\r`, as
/// in Python, so the numbers agree with the interpreter's. Offsets past the end or inside a character are
/// clamped rather than trusted, so a bad span can never panic.
///
/// ```
/// use zamburak::plan::line_col;
/// assert_eq!(line_col("a = 1\nbé = 2\n", 10), (2, 4));
/// assert_eq!(line_col("a\r\nb\rc", 5), (3, 1));
/// assert_eq!(line_col("x", 0), (1, 1));
/// assert_eq!(line_col("x", 99), (1, 2));
/// ```
pub fn line_col(source: &str, byte_offset: usize) -> (u32, u32) {
    let offset = floor_boundary(source, byte_offset);
    let before = &source[..offset];
    let line = before
        .bytes()
        .enumerate()
        .filter(|(i, _)| is_line_end(source, *i))
        .count()
        + 1;
    let line_start = line_start(source, offset);
    let col = before[line_start..].chars().count() + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(col).unwrap_or(u32::MAX),
    )
}

/// Line starts of one source, for many [`line_col`] look-ups in O(log n) each.
///
/// ```
/// use zamburak::plan::render::{LineIndex, line_col};
/// let src = "a = 1\nbé = 2\r\nc\rd";
/// let index = LineIndex::new(src);
/// for offset in 0..=src.len() + 2 {
///     assert_eq!(index.line_col(src, offset), line_col(src, offset));
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(source: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            (0..source.len())
                .filter(|&i| is_line_end(source, i))
                .map(|i| i + 1),
        );
        LineIndex { starts }
    }

    /// Same as [`line_col`] on the source this index was built from.
    pub fn line_col(&self, source: &str, byte_offset: usize) -> (u32, u32) {
        let offset = floor_boundary(source, byte_offset);
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        // An index built for another (or no) source must still not panic: clamp everything.
        let start = self.starts.get(line - 1).copied().unwrap_or(0).min(offset);
        let col = source.get(start..offset).map_or(0, |s| s.chars().count()) + 1;
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(col).unwrap_or(u32::MAX),
        )
    }
}

/// Does the line terminator that ends a line sit at byte `i`? For `\r\n` only the `\n` counts.
fn is_line_end(source: &str, i: usize) -> bool {
    let b = source.as_bytes();
    match b.get(i) {
        Some(b'\n') => true,
        Some(b'\r') => b.get(i + 1) != Some(&b'\n'),
        _ => false,
    }
}

/// Byte offset where the line holding `offset` begins.
fn line_start(source: &str, offset: usize) -> usize {
    source.as_bytes()[..offset]
        .iter()
        .enumerate()
        .rev()
        .find(|(i, _)| is_line_end(source, *i))
        .map_or(0, |(i, _)| i + 1)
}

fn floor_boundary(source: &str, offset: usize) -> usize {
    let mut o = offset.min(source.len());
    while !source.is_char_boundary(o) {
        o -= 1;
    }
    o
}

/// Renders diagnostics one after another, each with the offending source line and carets under the span.
///
/// ```
/// use zamburak::plan::{render, Code, Diagnostic};
/// let d = Diagnostic::new(Code::UnknownName, 6, 10, "unknown function `sendd`")
///     .with_hint("did you mean `send`?");
/// let out = render(&[d], "x = 1\nsendd(1)\n", "plan.py");
/// assert!(out.contains("error[Z101]: unknown function `sendd`"));
/// assert!(out.contains(" --> plan.py:2:1"));
/// assert!(out.contains("2 | sendd(1)"));
/// assert!(out.contains("  | ^^^^"));
/// assert!(out.contains("  = help: did you mean `send`?"));
/// ```
///
/// A diagnostic's notes are left out (what `run` prints); [`render_with_notes`] shows them.
pub fn render(diags: &[Diagnostic], source: &str, filename: &str) -> String {
    let mut out = String::new();
    for d in diags {
        render_one(&mut out, d, &[], source, filename);
    }
    out
}

/// [`render`] with each diagnostic's notes, in rustc's order: the notes, then the one help (what `lint`
/// prints).
///
/// ```
/// use zamburak::plan::{render::render_with_notes, Code, Diagnostic};
/// let mut d = Diagnostic::new(Code::DeniedWheneverReached, 0, 1, "denied").with_hint("verify it");
/// d.notes.push("also: another rule".into());
/// let out = render_with_notes(&[d], "x\n", "plan.py");
/// assert!(out.ends_with("  |\n1 | x\n  | ^\n  = note: also: another rule\n  = help: verify it\n\n"), "{out}");
/// ```
pub fn render_with_notes(diags: &[Diagnostic], source: &str, filename: &str) -> String {
    let mut out = String::new();
    for d in diags {
        render_one(&mut out, d, &d.notes, source, filename);
    }
    out
}

fn render_one(out: &mut String, d: &Diagnostic, notes: &[String], source: &str, filename: &str) {
    let head = format!("{}[{}]", d.severity().as_str(), d.code);
    let span = Span {
        start: d.start,
        end: d.end,
        message: &d.message,
        notes,
        hint: d.hint.as_deref(),
    };
    render_span(out, &head, &span, source, filename);
}

/// What [`render_span`] draws: a message about a span, with notes and a help under it.
struct Span<'a> {
    start: usize,
    end: usize,
    message: &'a str,
    notes: &'a [String],
    hint: Option<&'a str>,
}

/// An error the run stopped with, in the layout of [`render`]: `error[TYPE]: MESSAGE at line N`, the
/// location, and the plan line with carets under its statement. Without a line (a crash before the plan
/// ran), the head line alone.
///
/// ```
/// use zamburak::plan::render::render_runtime;
/// let src = "x = 0\nwhile True:\n    x = x + 1\n";
/// let out = render_runtime("TimeoutError", "the plan exceeded limits.timeout_ms = 300", src, "loop.py", Some(2));
/// assert!(out.starts_with("error[TimeoutError]: the plan exceeded limits.timeout_ms = 300 at line 2\n"));
/// assert!(out.contains(" --> loop.py:2:1\n  |\n2 | while True:\n  | ^^^^^^^^^^^\n"), "{out}");
/// let out = render_runtime("InternalError", "the worker died", src, "loop.py", None);
/// assert_eq!(out, "error[InternalError]: the worker died\n --> loop.py\n\n");
/// ```
pub fn render_runtime(
    kind: &str,
    message: &str,
    source: &str,
    filename: &str,
    line: Option<u32>,
) -> String {
    let mut out = String::new();
    let head = format!("error[{}]", sanitize(kind));
    let span = line.and_then(|n| {
        let index = usize::try_from(n).ok()?.checked_sub(1)?;
        let starts = LineIndex::new(source).starts;
        let start = *starts.get(index)?;
        let text = &source[start..];
        let text = &text[..text.find(['\n', '\r']).unwrap_or(text.len())];
        let indent = text.len() - text.trim_start().len();
        Some((start + indent, start + text.trim_end().len().max(indent)))
    });
    match span {
        Some((start, end)) => {
            let message = format!("{message} at line {}", line.unwrap_or_default());
            let span = Span {
                start,
                end,
                message: &message,
                notes: &[],
                hint: None,
            };
            render_span(&mut out, &head, &span, source, filename);
        }
        None => {
            // No line, or a source that does not have it (a plan changed since): the location alone.
            let _ = match line {
                Some(n) => writeln!(
                    out,
                    "{head}: {} at line {n}\n --> {filename}:{n}",
                    sanitize(message)
                ),
                None => writeln!(out, "{head}: {}\n --> {filename}", sanitize(message)),
            };
            out.push('\n');
        }
    }
    out
}

fn render_span(out: &mut String, head: &str, d: &Span<'_>, source: &str, filename: &str) {
    let start = floor_boundary(source, d.start);
    let end = floor_boundary(source, d.end.max(d.start));
    let (line, col) = line_col(source, start);
    let line_start = line_start(source, start);
    let line_end = source[start..]
        .find(['\n', '\r'])
        .map_or(source.len(), |p| start + p);
    let text = source[line_start..line_end].trim_end_matches('\r');
    // Control characters (NUL, escape sequences) in a hostile plan must not reach the terminal raw.
    let shown: String = text
        .chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect();
    let gutter = line.to_string().len();
    let pad = " ".repeat(gutter);
    let _ = writeln!(out, "{head}: {}", sanitize(d.message));
    let _ = writeln!(out, "{pad}--> {filename}:{line}:{col}");
    let _ = writeln!(out, "{pad} |");
    let _ = writeln!(out, "{line} | {shown}");
    let caret_start = source[line_start..start].chars().count();
    let span_end = end.min(line_end).max(start);
    let width = source[start..span_end].chars().count().max(1);
    let lead: String = source[line_start..start]
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    debug_assert_eq!(lead.chars().count(), caret_start);
    let _ = writeln!(out, "{pad} | {lead}{}", "^".repeat(width));
    for note in d.notes {
        let _ = writeln!(out, "{pad} = note: {}", sanitize(note));
    }
    if let Some(h) = d.hint {
        let _ = writeln!(out, "{pad} = help: {}", sanitize(h));
    }
    out.push('\n');
}

/// A message line for the terminal: what a person cannot see (escape sequences, bidi controls, invisible
/// format characters) written as `\u{..}` (messages can quote a plan's strings, or data).
fn sanitize(s: &str) -> String {
    crate::text::visible(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Code;

    fn diag(start: usize, end: usize) -> Diagnostic {
        Diagnostic::new(Code::ForbiddenExpression, start, end, "m")
    }

    #[test]
    fn carets_sit_under_the_span() {
        let src = "a = 1\nb = await c\n";
        let out = render(&[diag(10, 17)], src, "p.py");
        let expected = "error[Z011]: m\n --> p.py:2:5\n  |\n2 | b = await c\n  |     ^^^^^^^\n\n";
        assert_eq!(out, expected);
    }

    #[test]
    fn bad_spans_do_not_panic() {
        let src = "é\0x";
        for (s, e) in [(1, 1), (0, 99), (99, 0), (3, 2)] {
            let out = render(&[diag(s, e)], src, "p.py");
            assert!(out.contains("error[Z011]"));
            assert!(!out.contains('\0'));
        }
        assert_eq!(render(&[diag(0, 0)], "", "p.py").lines().count(), 6);
    }

    #[test]
    fn carriage_returns_end_lines() {
        let src = "a = 1\rb = await c\r";
        let out = render(&[diag(10, 17)], src, "p.py");
        assert!(
            out.contains("p.py:2:5\n  |\n2 | b = await c\n  |     ^^^^^^^\n"),
            "{out}"
        );
    }

    #[test]
    fn line_col_counts_chars() {
        assert_eq!(line_col("éé\nxyz", 7), (2, 3));
        assert_eq!(line_col("éé", 1), (1, 1));
    }
}
