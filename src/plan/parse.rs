//! Turning plan text into a ruff AST, refusing inputs that could exhaust memory or the stack first.

use ruff_python_ast::ModModule;
use ruff_text_size::{Ranged, TextSize};

use super::code::Code;
use super::diagnostic::Diagnostic;

/// Largest plan accepted, in bytes. Plans are short programs written by a model; anything bigger is refused.
pub const MAX_SOURCE_BYTES: usize = 1 << 20;

/// Deepest bracket or indentation nesting accepted. ruff's parser recurses per nesting level, so a deeper
/// input could overflow the stack before any check of ours runs.
pub const MAX_NESTING: usize = 64;

/// Largest estimated expression depth tolerated in one statement. ruff recurses on prefix operators,
/// right-associative chains (`**`, `a if b else c if …`) and lambdas, and the AST it builds for long
/// left-associative chains (`a + b + …`, `x[0][0]…`, `a.b.c…`) is as deep as the chain, which recursive
/// walks and drops then follow.
pub const MAX_EXPRESSION_DEPTH: usize = 200;

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
        return Err(vec![
            Diagnostic::new(
                Code::TooLarge,
                0,
                0,
                format!(
                    "plan is {} bytes; the limit is {MAX_SOURCE_BYTES} bytes",
                    source.len()
                ),
            )
            .with_hint("split the work into smaller plans"),
        ]);
    }
    if let Some(d) = prescan(source).or_else(|| expression_depth(source)) {
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
            Err(vec![
                Diagnostic::new(
                    Code::SyntaxError,
                    start,
                    end,
                    format!("syntax error: {}", e.error),
                )
                .with_hint("the plan must be valid Python 3 source"),
            ])
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
    Diagnostic::new(
        Code::TooLarge,
        offset,
        end,
        format!("{what} nested deeper than {limit} levels"),
    )
    .with_hint("flatten the expression into several assignments")
}

/// A deliberately crude, string-unaware bracket count that points at the exact offending bracket. Brackets
/// inside string literals count too, which can only refuse a plan that would have parsed. Closers inside
/// strings can hide real depth from it; [`expression_depth`] uses the real tokens and catches that.
fn prescan(source: &str) -> Option<Diagnostic> {
    let mut depth: usize = 0;
    for (i, b) in source.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(too_deep(i, source, "brackets", MAX_NESTING));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Nesting that one bracket level contributes to the expression depth estimate.
#[derive(Default)]
struct Level {
    /// Operators, keywords and postfix accesses since the last comma at this level.
    chain: usize,
    /// Lambdas at this level: their parameter lists contain commas, yet each nests the next.
    lambdas: usize,
}

/// Estimates, from ruff's (iterative) lexer, how deep the AST of each statement will be, counting
/// every token that can add a level, and bounds bracket and block nesting. Overestimates are fine (fail
/// closed); the estimate must never be lower than the parser's recursion depth.
fn expression_depth(source: &str) -> Option<Diagnostic> {
    use ruff_python_ast::token::TokenKind as T;
    let mut lexer = ruff_python_parser::lexer::lex(source, ruff_python_parser::Mode::Module);
    let mut stack: Vec<Level> = vec![Level::default()];
    // The lexer does not expose token offsets; physical lines are counted to point near the culprit.
    let mut line = 0usize;
    let mut blocks = 0usize;
    loop {
        let kind = lexer.next_token();
        // The stack always holds the statement level: it is only popped down to one entry.
        let top = stack.len() - 1;
        match kind {
            T::EndOfFile => return None,
            T::Lpar | T::Lsqb | T::Lbrace | T::FStringStart | T::TStringStart => {
                stack[top].chain += 1;
                stack.push(Level::default());
            }
            T::Rpar | T::Rsqb | T::Rbrace | T::FStringEnd | T::TStringEnd if stack.len() > 1 => {
                stack.pop();
            }
            T::Comma => stack[top].chain = 0,
            T::Indent => blocks += 1,
            T::Dedent => blocks = blocks.saturating_sub(1),
            T::Newline | T::Semi => {
                stack.clear();
                stack.push(Level::default());
            }
            T::Lambda => stack[top].lambdas += 1,
            T::Plus
            | T::Minus
            | T::Star
            | T::Slash
            | T::Vbar
            | T::Amper
            | T::Less
            | T::Greater
            | T::Dot
            | T::Percent
            | T::EqEqual
            | T::NotEqual
            | T::LessEqual
            | T::GreaterEqual
            | T::Tilde
            | T::CircumFlex
            | T::LeftShift
            | T::RightShift
            | T::DoubleStar
            | T::DoubleSlash
            | T::ColonEqual
            | T::At
            | T::And
            | T::Await
            | T::If
            | T::In
            | T::Is
            | T::Not
            | T::Or
            | T::Yield => stack[top].chain += 1,
            _ => {}
        }
        if matches!(kind, T::Newline | T::NonLogicalNewline) {
            line += 1;
        }
        let estimate: usize =
            stack.iter().map(|l| l.chain + l.lambdas).sum::<usize>() + stack.len();
        let problem = if stack.len() > MAX_NESTING + 1 {
            Some(format!("brackets nested deeper than {MAX_NESTING} levels"))
        } else if blocks > MAX_NESTING {
            Some(format!(
                "indentation nested deeper than {MAX_NESTING} levels"
            ))
        } else if estimate > MAX_EXPRESSION_DEPTH {
            Some(format!(
                "expression nested too deeply (more than {MAX_EXPRESSION_DEPTH} operators, accesses or lambdas in one chain)"
            ))
        } else {
            None
        };
        if let Some(message) = problem {
            let start = source
                .split_inclusive('\n')
                .take(line)
                .map(str::len)
                .sum::<usize>()
                .min(source.len());
            let end = source[start..]
                .find('\n')
                .map_or(source.len(), |e| start + e);
            return Some(
                Diagnostic::new(Code::TooLarge, start, end, message)
                    .with_hint("split the statement or block into smaller pieces"),
            );
        }
    }
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
            ("lambda a, b: ", "1"),
            ("1 if 1 else ", "1"),
            ("await ", "x"),
            ("~", "x"),
            ("1 + ", "1"),
            ("1 / ", "1"),
            ("x.", "y"),
            ("1 < ", "1"),
        ] {
            let src = format!("y = {}{}\n", p.repeat(200_000), e);
            let err = parse(&src).unwrap_err();
            assert_eq!(err[0].code, "Z002", "{p:?}");
        }
        for postfix in ["[0]", "(0)", ".a"] {
            let src = format!("y = x{}\n", postfix.repeat(200_000));
            assert_eq!(parse(&src).unwrap_err()[0].code, "Z002", "{postfix}");
        }
    }

    #[test]
    fn depth_error_points_at_the_line() {
        let src = format!("a = 1\nb = 2\ny = {}1\n", "-".repeat(300));
        let d = &parse(&src).unwrap_err()[0];
        assert_eq!((d.code.as_str(), d.start), ("Z002", 12));
    }

    #[test]
    fn wide_flat_data_is_accepted() {
        let records = "{\"to\": \"a@b.example\", \"n\": -1}, ".repeat(2000);
        assert!(parse(&format!("data = [\n{records}\n]\n")).is_ok());
        let sum = (0..150)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" + ");
        assert!(parse(&format!("s = {sum}\n")).is_ok());
    }

    /// The deepest inputs the pre-scan lets through must parse, be checked and drop on a small stack.
    #[test]
    fn deepest_accepted_inputs_fit_a_small_stack() {
        let cases = [
            format!("y = {}1\n", "-".repeat(190)),
            format!("y = {}1\n", "lambda: ".repeat(190)),
            format!("y = {}1{}\n", "(".repeat(64), ")".repeat(64)),
            format!("y = {}1{}\n", "(not ".repeat(64), ")".repeat(64)),
            format!("y = x{}\n", "[0]".repeat(190)),
        ];
        let handle = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || {
                let sigs = crate::plan::Signatures::default();
                for src in &cases {
                    assert!(parse(src).is_ok(), "{}", &src[..20]);
                    // The subset and structure walks recurse too; they must fit as well.
                    let _ = crate::plan::check(src, &sigs);
                }
            })
            .expect("spawn");
        assert!(handle.join().is_ok());
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
    fn brackets_hidden_by_string_closers_are_still_counted() {
        let src = format!(
            "x = {}\")))))))))))))))))))))))))))))))))))))))))))))))))))))))))))\" {}1",
            "(".repeat(60),
            "(".repeat(60)
        );
        assert_eq!(parse(&src).unwrap_err()[0].code, "Z002");
    }

    #[test]
    fn indentation_inside_strings_is_not_nesting() {
        let mut src = String::from("x = \"\"\"\n");
        for i in 0..100 {
            src.push_str(&" ".repeat(i));
            src.push_str("text\n");
        }
        src.push_str("\"\"\"\n");
        assert!(parse(&src).is_ok());
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
