//! Turning plan text into a ruff AST, refusing inputs that could exhaust memory or the stack first.

use ruff_python_ast::ModModule;
use ruff_text_size::{Ranged, TextSize};

use super::diagnostic::{Diagnostic, Severity};

/// Largest plan accepted, in bytes. Plans are short programs written by a model; anything bigger is refused.
pub const MAX_SOURCE_BYTES: usize = 1 << 20;

/// Deepest bracket or indentation nesting accepted. ruff's parser recurses per nesting level, so a deeper
/// input could overflow the stack before any check of ours runs.
pub const MAX_NESTING: usize = 64;

/// Most operator tokens (`not and or if lambda await yield - + ~ *`) tolerated on one logical line. ruff
/// recurses on prefix operators and right-associative chains (`**`, `a if b else c if …`) too, and telling
/// those apart from harmless left-associative sums would need a real tokenizer; a plain count is enough
/// for the short statements plans consist of.
pub const MAX_OPERATORS_PER_LINE: usize = 256;

/// A plan that parsed: its source and the module AST.
#[derive(Clone, Debug)]
pub struct ParsedPlan {
    pub source: String,
    pub module: ModModule,
}

/// Parses a plan, refusing oversized or overly nested input before handing it to the parser.
///
/// ```
/// use zamburak::plan::parse::parse;
/// assert!(parse("x = 1\n").is_ok());
/// let err = parse("x = (\n").unwrap_err();
/// assert_eq!(err[0].code, "Z001");
/// let err = parse(&"(".repeat(100_000)).unwrap_err();
/// assert_eq!(err[0].code, "Z002");
/// ```
pub fn parse(source: &str) -> Result<ParsedPlan, Vec<Diagnostic>> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(vec![Diagnostic {
            code: "Z002",
            severity: Severity::Error,
            start: 0,
            end: 0,
            message: format!(
                "plan is {} bytes; the limit is {MAX_SOURCE_BYTES} bytes",
                source.len()
            ),
            hint: Some("split the work into smaller plans".into()),
        }]);
    }
    if let Some(d) = prescan(source) {
        return Err(vec![d]);
    }
    match ruff_python_parser::parse_module(source) {
        Ok(parsed) => Ok(ParsedPlan {
            source: source.to_owned(),
            module: parsed.into_syntax(),
        }),
        Err(e) => {
            let range = e.range();
            let (start, end) = clamp(source, range.start(), range.end());
            Err(vec![Diagnostic {
                code: "Z001",
                severity: Severity::Error,
                start,
                end,
                message: format!("syntax error: {}", e.error),
                hint: Some("the plan must be valid Python 3 source".into()),
            }])
        }
    }
}

/// Byte offsets from the parser, kept inside the source and on character boundaries.
fn clamp(source: &str, start: TextSize, end: TextSize) -> (usize, usize) {
    let mut s = usize::from(start).min(source.len());
    while !source.is_char_boundary(s) {
        s -= 1;
    }
    let mut e = usize::from(end).clamp(s, source.len());
    while !source.is_char_boundary(e) {
        e += 1;
    }
    (s, e)
}

fn too_deep(offset: usize, source: &str, what: &str, limit: usize) -> Diagnostic {
    let end = source[offset..]
        .chars()
        .next()
        .map_or(offset, |c| offset + c.len_utf8());
    Diagnostic {
        code: "Z002",
        severity: Severity::Error,
        start: offset,
        end,
        message: format!("{what} nested deeper than {limit} levels"),
        hint: Some("flatten the expression into several assignments".into()),
    }
}

/// A deliberately crude, string-unaware scan: brackets inside string literals count too. That can only
/// refuse a plan that would have parsed (fail closed), never let a deep one through.
fn prescan(source: &str) -> Option<Diagnostic> {
    let bytes = source.as_bytes();
    let mut depth: usize = 0;
    let mut indents: Vec<usize> = vec![0];
    let mut chain: usize = 0;
    let mut at_line_start = true;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if at_line_start {
            at_line_start = false;
            if depth == 0 {
                let width = bytes[i..]
                    .iter()
                    .take_while(|c| **c == b' ' || **c == b'\t')
                    .count();
                let rest = bytes.get(i + width).copied();
                let blank = matches!(rest, None | Some(b'\n' | b'\r' | b'#'));
                if !blank {
                    while indents.last().is_some_and(|w| *w > width) {
                        indents.pop();
                    }
                    if indents.last().is_some_and(|w| *w < width) {
                        indents.push(width);
                    }
                    if indents.len() > MAX_NESTING {
                        return Some(too_deep(i, source, "indentation", MAX_NESTING));
                    }
                }
            }
        }
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(too_deep(i, source, "brackets", MAX_NESTING));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' => {
                at_line_start = true;
                // A backslash continuation keeps the logical line (and its operator chain) going.
                let continued = i > 0 && bytes[i - 1] == b'\\'
                    || i > 1 && bytes[i - 1] == b'\r' && bytes[i - 2] == b'\\';
                if depth == 0 && !continued {
                    chain = 0;
                }
            }
            b'-' | b'+' | b'~' | b'*' => chain += 1,
            _ if b.is_ascii_alphabetic() => {
                let word_start = i == 0 || !is_ident_byte(bytes[i - 1]);
                if word_start {
                    let len = bytes[i..].iter().take_while(|c| is_ident_byte(**c)).count();
                    let word = &bytes[i..i + len];
                    if matches!(
                        word,
                        b"not" | b"lambda" | b"await" | b"if" | b"yield" | b"and" | b"or"
                    ) {
                        chain += 1;
                    }
                    i += len;
                    continue;
                }
            }
            _ => {}
        }
        if chain > MAX_OPERATORS_PER_LINE {
            return Some(Diagnostic {
                message: format!("more than {MAX_OPERATORS_PER_LINE} operators in one statement"),
                ..too_deep(i, source, "operators", MAX_OPERATORS_PER_LINE)
            });
        }
        i += 1;
    }
    None
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_error_has_span() {
        let err = parse("x = 1\ny = = 2\n").unwrap_err();
        assert_eq!(err[0].code, "Z001");
        assert!(err[0].start >= 6, "error on line 2, got {}", err[0].start);
    }

    #[test]
    fn deep_inputs_are_refused_without_overflow() {
        for src in [
            "(".repeat(100_000),
            format!("x = {}1{}", "[".repeat(1000), "]".repeat(1000)),
            format!("x = {}1{}", "(".repeat(65), ")".repeat(65)),
        ] {
            let err = parse(&src).unwrap_err();
            assert_eq!(err[0].code, "Z002", "{}", &src[..20]);
        }
        let ok = format!("x = {}1{}\n", "(".repeat(60), ")".repeat(60));
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn operator_chains_are_refused_without_overflow() {
        for (p, e) in [
            ("not ", "x"),
            ("-", "x"),
            ("2**", "2"),
            ("lambda: ", "1"),
            ("1 if 1 else ", "1"),
            ("await ", "x"),
            ("~", "x"),
        ] {
            let src = format!("y = {}{}\n", p.repeat(200_000), e);
            let err = parse(&src).unwrap_err();
            assert_eq!(err[0].code, "Z002", "{p:?}");
        }
    }

    #[test]
    fn deep_indentation_is_refused() {
        let mut src = String::new();
        for i in 0..100 {
            src.push_str(&" ".repeat(i));
            src.push_str("if x:\n");
        }
        src.push_str(&" ".repeat(100));
        src.push_str("pass\n");
        assert_eq!(parse(&src).unwrap_err()[0].code, "Z002");
    }

    #[test]
    fn oversized_is_refused() {
        let src = "x = 1\n".repeat(400_000);
        assert_eq!(parse(&src).unwrap_err()[0].code, "Z002");
    }

    #[test]
    fn nul_bytes_are_a_syntax_error() {
        let err = parse("x = 1\0\n").unwrap_err();
        assert_eq!(err[0].code, "Z001");
    }
}
