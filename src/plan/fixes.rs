//! Edits that turn a plan outside the subset into one inside it, for the mistakes code-writing models make
//! most (`await`, `try`, annotations, `from json import loads`, `m.subject`, `%`-formatting, `if __name__
//! == "__main__":`, `:=` in a comprehension, `import asyncio` + `asyncio.run(main())`). The subset check
//! (`plan::subset`) attaches them to its diagnostics; lint's JSON carries them for a repair loop.
//!
//! Every function here reads only the plan (its syntax tree and text) and returns `None` rather than a
//! guess: a fix is offered only where the plan alone says what to write. Each edit is computed from the
//! node's own range, so it never reaches outside the statement or expression the diagnostic marks (the
//! module-wide renames of an import are the one exception, and they rename only that import's names).

use std::collections::BTreeMap;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, ExprContext, ModModule, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::diagnostic::{Edit, Fix};

fn at(r: TextRange) -> (usize, usize) {
    (r.start().into(), r.end().into())
}

/// The text of `r` in `src` (empty when the range is not on character boundaries, which a parser's range
/// always is).
fn text(src: &str, r: TextRange) -> &str {
    let (s, e) = at(r);
    src.get(s..e).unwrap_or_default()
}

/// The byte offset where the line holding `offset` starts.
fn line_start(src: &str, offset: usize) -> usize {
    src.get(..offset)
        .and_then(|s| s.rfind('\n'))
        .map_or(0, |i| i + 1)
}

/// The byte offset just past the line holding `offset` (after its newline, or the end of the text).
fn line_end(src: &str, offset: usize) -> usize {
    src.get(offset..)
        .and_then(|s| s.find('\n'))
        .map_or(src.len(), |i| offset + i + 1)
}

/// The indentation (leading spaces and tabs) of the line holding `offset`.
fn indent_of(src: &str, offset: usize) -> &str {
    let start = line_start(src, offset);
    let line = src.get(start..).unwrap_or_default();
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// `await x` → `x`: a plan's calls are already synchronous.
pub fn remove_await(await_range: TextRange, value: &Expr) -> Fix {
    let (start, _) = at(await_range);
    let (value_start, _) = at(value.range());
    Fix::safe(
        "remove `await`: tool calls in a plan return their result directly",
        vec![Edit::delete(start, value_start)],
    )
}

/// `async def f():` → `def f():`.
pub fn remove_async(src: &str, def_range: TextRange) -> Option<Fix> {
    let (start, end) = at(def_range);
    let body = src.get(start..end)?;
    let at_async = body.find("async")?;
    let after = &body[at_async + "async".len()..];
    let gap = after.len() - after.trim_start().len();
    if !after.trim_start().starts_with("def") || gap == 0 {
        return None;
    }
    let from = start + at_async;
    Some(Fix::safe(
        "remove `async`: a plan's functions are plain functions",
        vec![Edit::delete(from, from + "async".len() + gap)],
    ))
}

/// The statements `blocks` (each a body of the statement at `stmt_range`) as text, one indentation level
/// out, replacing the whole statement: `try:` → its body, `if __name__ == "__main__":` → its body.
pub fn unwrap_blocks(
    src: &str,
    stmt_range: TextRange,
    blocks: &[&[Stmt]],
    message: &str,
    safe: bool,
) -> Option<Fix> {
    let (stmt_start, stmt_end) = at(stmt_range);
    let outer = indent_of(src, stmt_start).to_string();
    let mut lines = Vec::new();
    for block in blocks {
        let (Some(first), Some(last)) = (block.first(), block.last()) else {
            continue;
        };
        let inner = indent_of(src, first.start().into());
        if !inner.starts_with(&outer) || inner.len() <= outer.len() {
            return None;
        }
        let from = line_start(src, first.start().into());
        let to = usize::from(last.end());
        for line in src.get(from..to)?.split('\n') {
            // Blank lines and lines of a multi-line string that are less indented stay as they are.
            lines.push(match line.strip_prefix(inner) {
                Some(rest) => format!("{outer}{rest}"),
                None => line.to_string(),
            });
        }
    }
    if lines.is_empty() {
        return None;
    }
    let replacement = lines.join("\n");
    let from = line_start(src, stmt_start);
    let edits = vec![Edit::replace(from, stmt_end, replacement)];
    Some(if safe {
        Fix::safe(message, edits)
    } else {
        Fix::unsafe_(message, edits)
    })
}

/// `x: int = 1` → `x = 1`.
pub fn annotated_assignment(target: &Expr, value: Option<&Expr>) -> Option<Fix> {
    let value = value?;
    let (_, target_end) = at(target.range());
    let (value_start, _) = at(value.range());
    Some(Fix::safe(
        "drop the annotation: plans are not type-annotated",
        vec![Edit::replace(target_end, value_start, " = ")],
    ))
}

/// `x: int` in a parameter list → `x`.
pub fn parameter_annotation(name_end: usize, annotation: &Expr) -> Fix {
    let (_, end) = at(annotation.range());
    Fix::safe(
        "drop the annotation: plans are not type-annotated",
        vec![Edit::delete(name_end, end)],
    )
}

/// `def f(x) -> int:` → `def f(x):`.
pub fn return_annotation(parameters_end: usize, returns: &Expr) -> Fix {
    let (_, end) = at(returns.range());
    Fix::safe(
        "drop the return annotation: plans are not type-annotated",
        vec![Edit::delete(parameters_end, end)],
    )
}

/// `m.subject` (a read, not a method call) → `m["subject"]`: a tool's records are dicts.
pub fn attribute_to_key(value: &Expr, attr: &str, range: TextRange) -> Fix {
    let (_, value_end) = at(value.range());
    let (_, end) = at(range);
    Fix::unsafe_(
        format!("read the key: `[\"{attr}\"]` (tool results are dicts)"),
        vec![Edit::replace(value_end, end, format!("[\"{attr}\"]"))],
    )
}

/// `"%s: %d" % (a, b)` → `"{}: {}".format(a, b)`, for a plain string literal with only `%s`, `%d`, `%i` and
/// `%%`, and as many values as fields.
pub fn percent_format(src: &str, whole: TextRange, left: &Expr, right: &Expr) -> Option<Fix> {
    let Expr::StringLiteral(lit) = left else {
        return None;
    };
    if lit.value.is_implicit_concatenated() {
        return None;
    }
    let raw = text(src, lit.range);
    let quote_at = raw.find(['"', '\''])?;
    if quote_at != 0 {
        // A prefix (`r`, `b`, `u`): leave it to the person.
        return None;
    }
    let mut template = String::new();
    let mut fields = 0usize;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '%' => match chars.next()? {
                '%' => template.push('%'),
                's' | 'd' | 'i' => {
                    template.push_str("{}");
                    fields += 1;
                }
                _ => return None,
            },
            '{' => template.push_str("{{"),
            '}' => template.push_str("}}"),
            c => template.push(c),
        }
    }
    let values: Vec<&str> = match right {
        Expr::Tuple(t) => t.elts.iter().map(|e| text(src, e.range())).collect(),
        other => vec![text(src, other.range())],
    };
    if values.len() != fields || values.iter().any(|v| v.is_empty()) {
        return None;
    }
    let (start, end) = at(whole);
    Some(Fix::unsafe_(
        "use `str.format`",
        vec![Edit::replace(
            start,
            end,
            format!("{template}.format({})", values.join(", ")),
        )],
    ))
}

/// Module-wide facts the per-node fixes need: which names an import binds and where they are read, and the
/// comprehensions that hold a `:=`.
pub struct Context<'m> {
    src: &'m str,
    module: &'m ModModule,
    /// Every read of a plain name, by name.
    loads: BTreeMap<String, Vec<TextRange>>,
    /// `asyncio.run(X)` calls: the call's range and `X`'s.
    asyncio_runs: Vec<(TextRange, TextRange)>,
    /// Other uses of `asyncio` (`asyncio.gather`, …), which no fix removes.
    other_asyncio: usize,
    /// Every comprehension, for the `:=` fix.
    comprehensions: Vec<&'m Expr>,
}

impl<'m> Context<'m> {
    pub fn new(src: &'m str, module: &'m ModModule) -> Context<'m> {
        let mut c = Collect {
            loads: BTreeMap::new(),
            asyncio_runs: Vec::new(),
            other_asyncio: 0,
            comprehensions: Vec::new(),
        };
        for s in &module.body {
            c.visit_stmt(s);
        }
        Context {
            src,
            module,
            loads: c.loads,
            asyncio_runs: c.asyncio_runs,
            other_asyncio: c.other_asyncio,
            comprehensions: c.comprehensions,
        }
    }

    pub fn src(&self) -> &'m str {
        self.src
    }

    fn delete_line_or_alias(
        &self,
        stmt_range: TextRange,
        alias_count: usize,
        alias: TextRange,
    ) -> Vec<Edit> {
        let (s, e) = at(stmt_range);
        if alias_count == 1 {
            vec![Edit::delete(line_start(self.src, s), line_end(self.src, e))]
        } else {
            // `import os, json`: drop `os` and the comma that follows or precedes it.
            let (a, b) = at(alias);
            let after = self.src.get(b..e).unwrap_or_default();
            let comma_after = after.find(',').filter(|i| after[..*i].trim().is_empty());
            match comma_after {
                Some(i) => {
                    let rest = &after[i + 1..];
                    let spaces = rest.len() - rest.trim_start().len();
                    vec![Edit::delete(a, b + i + 1 + spaces)]
                }
                None => {
                    let before = self.src.get(s..a).unwrap_or_default();
                    let comma = before.rfind(',').map_or(a, |i| s + i);
                    vec![Edit::delete(comma, b)]
                }
            }
        }
    }

    /// `import os` that nothing reads → delete it; `import asyncio` used only as `asyncio.run(main())` →
    /// delete it and call `main()` directly.
    pub fn refused_import(
        &self,
        stmt_range: TextRange,
        alias_count: usize,
        alias: TextRange,
        bound: &str,
    ) -> Option<Fix> {
        let reads = self.loads.get(bound).map_or(0, Vec::len);
        if reads == 0 {
            return Some(Fix::safe(
                format!("remove the unused import of `{bound}`"),
                self.delete_line_or_alias(stmt_range, alias_count, alias),
            ));
        }
        if bound == "asyncio" && self.other_asyncio == 0 && reads == self.asyncio_runs.len() {
            let mut edits = self.delete_line_or_alias(stmt_range, alias_count, alias);
            for (call, arg) in &self.asyncio_runs {
                let (s, e) = at(*call);
                edits.push(Edit::replace(s, e, text(self.src, *arg)));
            }
            return Some(Fix::safe(
                "remove `asyncio`: call the plan's function directly",
                edits,
            ));
        }
        None
    }

    /// `from json import loads` → `import json`, and each `loads(` → `json.loads(`.
    pub fn from_import(
        &self,
        stmt: &ruff_python_ast::StmtImportFrom,
        allowed: impl Fn(&str, &str) -> bool,
    ) -> Option<Fix> {
        let module = stmt.module.as_ref()?.as_str();
        if stmt.level != 0 || !matches!(module, "json" | "re") {
            return None;
        }
        let already = self.module.body.iter().any(|s| {
            matches!(s, Stmt::Import(i) if i.names.iter().any(|a| a.name.as_str() == module && a.asname.is_none()))
        });
        let (s, e) = at(stmt.range);
        let mut edits = vec![if already {
            Edit::delete(line_start(self.src, s), line_end(self.src, e))
        } else {
            Edit::replace(s, e, format!("import {module}"))
        }];
        for alias in &stmt.names {
            let name = alias.name.as_str();
            if !allowed(module, name) {
                return None;
            }
            let bound = alias.asname.as_ref().unwrap_or(&alias.name).as_str();
            for r in self.loads.get(bound).into_iter().flatten() {
                let (a, b) = at(*r);
                edits.push(Edit::replace(a, b, format!("{module}.{name}")));
            }
        }
        Some(Fix::safe(
            format!("import `{module}` and call its functions through it"),
            edits,
        ))
    }

    /// `[y for m in ms if (y := f(m))]` → `[f(m) for m in ms if f(m)]`: the value written where the name
    /// was read (evaluated twice, so not safe when it calls a tool).
    pub fn walrus_in_comprehension(&self, named: &ruff_python_ast::ExprNamed) -> Option<Fix> {
        let Expr::Name(target) = &*named.target else {
            return None;
        };
        let (ns, ne) = at(named.range);
        let comp = self
            .comprehensions
            .iter()
            .filter(|c| {
                let (s, e) = at(c.range());
                s <= ns && ne <= e
            })
            .min_by_key(|c| c.range().len())?;
        let (cs, ce) = at(comp.range());
        let value = text(self.src, named.value.range());
        let value = if matches!(
            &*named.value,
            Expr::Name(_) | Expr::Call(_) | Expr::Subscript(_) | Expr::Attribute(_)
        ) {
            value.to_string()
        } else {
            format!("({value})")
        };
        // The parenthesised `(y := v)` is replaced whole when its parentheses are the walrus's own.
        let (mut s, mut e) = (ns, ne);
        let before = self.src.get(..s).unwrap_or_default().trim_end();
        let after = self.src.get(e..).unwrap_or_default().trim_start();
        if before.ends_with('(') && after.starts_with(')') {
            s = before.len() - 1;
            e = self.src.len() - after.len() + 1;
        }
        let mut edits = vec![Edit::replace(s, e, value.clone())];
        for r in self.loads.get(target.id.as_str()).into_iter().flatten() {
            let (a, b) = at(*r);
            if cs <= a && b <= ce && !(s <= a && b <= e) {
                edits.push(Edit::replace(a, b, value.clone()));
            }
        }
        Some(Fix::unsafe_(
            format!(
                "write the value where `{}` is read (it is computed again there)",
                target.id.as_str()
            ),
            edits,
        ))
    }
}

struct Collect<'m> {
    loads: BTreeMap<String, Vec<TextRange>>,
    asyncio_runs: Vec<(TextRange, TextRange)>,
    other_asyncio: usize,
    comprehensions: Vec<&'m Expr>,
}

impl<'m> Visitor<'m> for Collect<'m> {
    fn visit_expr(&mut self, expr: &'m Expr) {
        match expr {
            Expr::Name(n) if n.ctx == ExprContext::Load => {
                self.loads
                    .entry(n.id.to_string())
                    .or_default()
                    .push(n.range);
            }
            Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
                self.comprehensions.push(expr);
            }
            Expr::Call(c) => {
                if let Expr::Attribute(a) = &*c.func
                    && let Expr::Name(m) = &*a.value
                    && m.id.as_str() == "asyncio"
                {
                    match (
                        a.attr.as_str(),
                        c.arguments.args.as_ref(),
                        c.arguments.keywords.is_empty(),
                    ) {
                        ("run", [arg], true) => self.asyncio_runs.push((c.range(), arg.range())),
                        _ => self.other_asyncio += 1,
                    }
                }
            }
            Expr::Attribute(a) => {
                if let Expr::Name(m) = &*a.value
                    && m.id.as_str() == "asyncio"
                    && !matches!(a.attr.as_str(), "run")
                {
                    self.other_asyncio += 1;
                }
            }
            _ => {}
        }
        visitor::walk_expr(self, expr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::parse;

    fn first_stmt(src: &str) -> Stmt {
        parse(src).unwrap().module.body[0].clone()
    }

    #[test]
    fn a_try_becomes_its_body_and_else_and_finally_one_level_out() {
        let src = "x = 1\nif x:\n    try:\n        a = read(p=1)\n        b = 2\n    except Exception as e:\n        print(e)\n    else:\n        c = 3\n    finally:\n        print('done')\n";
        let m = parse(src).unwrap().module;
        let Stmt::If(i) = &m.body[1] else { panic!() };
        let Stmt::Try(t) = &i.body[0] else { panic!() };
        let fix = unwrap_blocks(
            src,
            t.range,
            &[&t.body, &t.orelse, &t.finalbody],
            "m",
            false,
        )
        .unwrap();
        assert_eq!(
            fix.apply(src).unwrap(),
            "x = 1\nif x:\n    a = read(p=1)\n    b = 2\n    c = 3\n    print('done')\n"
        );
    }

    #[test]
    fn percent_formatting_becomes_format() {
        let src = "s = \"%s has %d {x} 100%%\" % (name, n)\n";
        let Stmt::Assign(a) = first_stmt(src) else {
            panic!()
        };
        let Expr::BinOp(b) = &*a.value else { panic!() };
        let fix = percent_format(src, b.range, &b.left, &b.right).unwrap();
        assert_eq!(
            fix.apply(src).unwrap(),
            "s = \"{} has {} {{x}} 100%\".format(name, n)\n"
        );
        let src = "s = \"%.2f\" % x\n";
        let Stmt::Assign(a) = first_stmt(src) else {
            panic!()
        };
        let Expr::BinOp(b) = &*a.value else { panic!() };
        assert!(percent_format(src, b.range, &b.left, &b.right).is_none());
    }

    #[test]
    fn asyncio_run_becomes_a_plain_call() {
        let src = "import asyncio\nasync def main():\n    return 1\nasyncio.run(main())\n";
        let p = parse(src).unwrap();
        let ctx = Context::new(src, &p.module);
        let Stmt::Import(i) = &p.module.body[0] else {
            panic!()
        };
        let fix = ctx
            .refused_import(i.range, 1, i.names[0].range, "asyncio")
            .unwrap();
        assert_eq!(
            fix.apply(src).unwrap(),
            "async def main():\n    return 1\nmain()\n"
        );
    }

    #[test]
    fn an_unused_import_goes_and_a_used_one_stays() {
        let src = "import os, json\nx = json.loads('1')\n";
        let p = parse(src).unwrap();
        let ctx = Context::new(src, &p.module);
        let Stmt::Import(i) = &p.module.body[0] else {
            panic!()
        };
        let fix = ctx
            .refused_import(i.range, 2, i.names[0].range, "os")
            .unwrap();
        assert_eq!(
            fix.apply(src).unwrap(),
            "import json\nx = json.loads('1')\n"
        );
        let src = "import os\nprint(os.getcwd())\n";
        let p = parse(src).unwrap();
        let ctx = Context::new(src, &p.module);
        let Stmt::Import(i) = &p.module.body[0] else {
            panic!()
        };
        assert!(
            ctx.refused_import(i.range, 1, i.names[0].range, "os")
                .is_none()
        );
    }

    #[test]
    fn from_json_import_becomes_import_json() {
        let src = "from json import loads, dumps as d\nx = loads('1')\nprint(d(x))\n";
        let p = parse(src).unwrap();
        let ctx = Context::new(src, &p.module);
        let Stmt::ImportFrom(f) = &p.module.body[0] else {
            panic!()
        };
        let fix = ctx.from_import(f, |_, _| true).unwrap();
        assert_eq!(
            fix.apply(src).unwrap(),
            "import json\nx = json.loads('1')\nprint(json.dumps(x))\n"
        );
    }

    #[test]
    fn a_walrus_in_a_comprehension_is_written_out() {
        let src = "ys = [y for m in ms if (y := m[\"s\"])]\n";
        let p = parse(src).unwrap();
        let ctx = Context::new(src, &p.module);
        let mut named = None;
        struct Find<'a>(&'a mut Option<ruff_python_ast::ExprNamed>);
        impl<'b> Visitor<'b> for Find<'_> {
            fn visit_expr(&mut self, e: &'b Expr) {
                if let Expr::Named(n) = e {
                    *self.0 = Some(n.clone());
                }
                visitor::walk_expr(self, e);
            }
        }
        Find(&mut named).visit_stmt(&p.module.body[0]);
        let fix = ctx.walrus_in_comprehension(&named.unwrap()).unwrap();
        assert_eq!(
            fix.apply(src).unwrap(),
            "ys = [m[\"s\"] for m in ms if m[\"s\"]]\n"
        );
    }

    #[test]
    fn await_and_async_and_annotations_go() {
        let src = "async def main(x: int) -> int:\n    return await f(x)\n";
        let Stmt::FunctionDef(f) = first_stmt(src) else {
            panic!()
        };
        let fix = remove_async(src, f.range).unwrap();
        assert_eq!(
            fix.apply(src).unwrap(),
            "def main(x: int) -> int:\n    return await f(x)\n"
        );
        let p = &f.parameters.args[0].parameter;
        let fix = parameter_annotation(
            usize::from(p.name.range.end()),
            p.annotation.as_deref().unwrap(),
        );
        assert_eq!(
            fix.apply(src).unwrap(),
            "async def main(x) -> int:\n    return await f(x)\n"
        );
        let fix = return_annotation(
            usize::from(f.parameters.range.end()),
            f.returns.as_deref().unwrap(),
        );
        assert_eq!(
            fix.apply(src).unwrap(),
            "async def main(x: int):\n    return await f(x)\n"
        );
        let Stmt::Return(r) = &f.body[0] else {
            panic!()
        };
        let Some(Expr::Await(a)) = r.value.as_deref() else {
            panic!()
        };
        let fix = remove_await(a.range, &a.value);
        assert_eq!(
            fix.apply(src).unwrap(),
            "async def main(x: int) -> int:\n    return f(x)\n"
        );
    }
}
