//! Human-readable diagnostics in the familiar rustc/ruff layout.

use std::fmt::Write as _;

use super::diagnostic::{Diagnostic, Severity};

/// 1-based line and column (in characters) of a byte offset. Offsets past the end or inside a character
/// are clamped rather than trusted, so a bad span can never panic.
///
/// ```
/// use zamburak::plan::line_col;
/// assert_eq!(line_col("a = 1\nbé = 2\n", 10), (2, 4));
/// assert_eq!(line_col("x", 0), (1, 1));
/// assert_eq!(line_col("x", 99), (1, 2));
/// ```
pub fn line_col(source: &str, byte_offset: usize) -> (u32, u32) {
    let offset = floor_boundary(source, byte_offset);
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    let col = before[line_start..].chars().count() + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(col).unwrap_or(u32::MAX),
    )
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
/// use zamburak::plan::{render, Diagnostic, Severity};
/// let d = Diagnostic { code: "Z101", severity: Severity::Error, start: 6, end: 10,
///     message: "unknown function `sendd`".into(), hint: Some("did you mean `send`?".into()) };
/// let out = render(&[d], "x = 1\nsendd(1)\n", "plan.py");
/// assert!(out.contains("error[Z101]: unknown function `sendd`"));
/// assert!(out.contains(" --> plan.py:2:1"));
/// assert!(out.contains("2 | sendd(1)"));
/// assert!(out.contains("  | ^^^^"));
/// assert!(out.contains("  = help: did you mean `send`?"));
/// ```
pub fn render(diags: &[Diagnostic], source: &str, filename: &str) -> String {
    let mut out = String::new();
    for d in diags {
        render_one(&mut out, d, source, filename);
    }
    out
}

fn render_one(out: &mut String, d: &Diagnostic, source: &str, filename: &str) {
    let start = floor_boundary(source, d.start);
    let end = floor_boundary(source, d.end.max(d.start));
    let (line, col) = line_col(source, start);
    let level = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let line_start = source[..start].rfind('\n').map_or(0, |p| p + 1);
    let line_end = source[start..]
        .find('\n')
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
    let _ = writeln!(out, "{level}[{}]: {}", d.code, sanitize(&d.message));
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
    if let Some(h) = &d.hint {
        let _ = writeln!(out, "{pad} = help: {}", sanitize(h));
    }
    out.push('\n');
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(start: usize, end: usize) -> Diagnostic {
        Diagnostic {
            code: "Z011",
            severity: Severity::Error,
            start,
            end,
            message: "m".into(),
            hint: None,
        }
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
    fn line_col_counts_chars() {
        assert_eq!(line_col("éé\nxyz", 7), (2, 3));
        assert_eq!(line_col("éé", 1), (1, 1));
    }
}
