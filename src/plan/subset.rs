//! The whitelist (docs/diagnostics.md, "What a plan may use"): which statements, expressions, builtins,
//! methods and modules a plan may use. Every AST variant is matched explicitly, so a new ruff variant fails
//! to compile here instead of slipping through.

use ruff_python_ast::{
    Comprehension, Expr, ExprCall, FStringPart, Identifier, InterpolatedStringElement,
    InterpolatedStringElements, ModModule, Number, Operator, Parameters, Stmt,
};
use ruff_text_size::{Ranged, TextRange};

use super::catalogue;
use super::code::Code;
use super::diagnostic::{Diagnostic, Fix};
use super::fixes;

/// Builtins that are refused by name wherever they appear (called or not), because they reach into
/// the interpreter rather than compute on values.
pub const FORBIDDEN_BUILTINS: &[&str] = &[
    "getattr",
    "setattr",
    "hasattr",
    "delattr",
    "type",
    "id",
    "hash",
    "eval",
    "exec",
    "globals",
    "locals",
    "vars",
    "dir",
    "__import__",
    "open",
    "compile",
    "isinstance",
    "issubclass",
    "input",
    "breakpoint",
    "help",
    "memoryview",
    "object",
    "super",
    "classmethod",
    "staticmethod",
    "property",
];

/// Python's hard keywords: never a name. No tool, verifier or argument of a policy can be called or passed
/// by one (`policy::validate`), and no key can be written as a field in `class X(TypedDict):` syntax
/// (`stubs::types`): the one list both read.
pub const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

pub use super::catalogue::{CallableAt, Callback, Over, callback, callbacks};

/// Is `name` an allowed builtin?
///
/// ```
/// use zamburak::plan::subset::{is_builtin, is_method};
/// assert!(is_builtin("sorted") && !is_builtin("eval"));
/// assert!(is_method("group") && !is_method("__class__"));
/// ```
pub fn is_builtin(name: &str) -> bool {
    catalogue::builtin_row(name).is_some()
}

pub fn is_forbidden_builtin(name: &str) -> bool {
    FORBIDDEN_BUILTINS.contains(&name)
}

pub fn is_method(name: &str) -> bool {
    catalogue::method_row(name).is_some()
}

pub fn is_module(name: &str) -> bool {
    catalogue::MODULES.contains(&name)
}

/// The functions of `module` a plan may call, as a sentence for a hint: `json.dumps, json.loads`.
pub(crate) fn module_functions(module: &str) -> String {
    catalogue::MODULE_FNS
        .iter()
        .filter(|f| f.module == module)
        .map(|f| format!("`{module}.{}`", f.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks a module against the whitelist, returning every violation found (empty when it conforms).
///
/// ```
/// use zamburak::plan::{parse::parse, subset::check_subset};
/// let p = parse("import re\nm = re.search('a', 'abc')\nprint(m.group(0))\n").unwrap();
/// assert!(check_subset(&p.module, &p.source).is_empty());
/// let p = parse("x = eval('1')\n").unwrap();
/// assert_eq!(check_subset(&p.module, &p.source)[0].code, "Z012");
/// ```
pub fn check_subset(module: &ModModule, source: &str) -> Vec<Diagnostic> {
    let mut imported = Vec::new();
    let mut refused_imports = Vec::new();
    for stmt in &module.body {
        match stmt {
            Stmt::Import(imp) => {
                for alias in &imp.names {
                    let name = alias.name.as_str();
                    if alias.asname.is_none() && is_module(name) {
                        imported.push(name.to_owned());
                    } else {
                        let bound = alias.asname.as_ref().map_or_else(
                            || name.split('.').next().unwrap_or_default(),
                            |a| a.as_str(),
                        );
                        refused_imports.push(bound.to_owned());
                    }
                }
            }
            Stmt::ImportFrom(imp) => refused_imports.extend(
                imp.names
                    .iter()
                    .map(|a| a.asname.as_ref().unwrap_or(&a.name).as_str().to_owned()),
            ),
            _ => {}
        }
    }
    let mut w = Walker {
        diags: Vec::new(),
        imported,
        refused_imports,
        comprehension_depth: 0,
        fixes: fixes::Context::new(source, module),
    };
    w.stmts(&module.body, true);
    w.diags
}

struct Walker<'m> {
    diags: Vec<Diagnostic>,
    /// What the fixes need to know about the whole plan.
    fixes: fixes::Context<'m>,
    imported: Vec<String>,
    /// Names bound by imports refused with Z015: `os.listdir()` after `import os` is not a second error.
    refused_imports: Vec<String>,
    comprehension_depth: usize,
}

fn err(code: Code, range: TextRange, message: String, hint: Option<&str>) -> Diagnostic {
    Diagnostic {
        hint: hint.map(str::to_owned),
        ..Diagnostic::new(code, range.start().into(), range.end().into(), message)
    }
}

impl Walker<'_> {
    fn push(&mut self, code: Code, range: TextRange, message: String, hint: Option<&str>) {
        self.diags.push(err(code, range, message, hint));
    }

    fn push_fixed(
        &mut self,
        code: Code,
        range: TextRange,
        message: String,
        hint: &str,
        fix: Option<Fix>,
    ) {
        self.diags
            .push(err(code, range, message, Some(hint)).with_fix(fix));
    }

    fn unsupported_stmt(&mut self, range: TextRange, what: &str) {
        self.unsupported_stmt_fixed(range, what, None);
    }

    fn unsupported_stmt_fixed(&mut self, range: TextRange, what: &str, fix: Option<Fix>) {
        self.push_fixed(
            Code::ForbiddenStatement,
            range,
            format!("`{what}` is not supported in plans"),
            statement_help(what),
            fix,
        );
    }

    fn unsupported_expr(&mut self, range: TextRange, what: &str) {
        self.unsupported_expr_fixed(range, what, None);
    }

    fn unsupported_expr_fixed(&mut self, range: TextRange, what: &str, fix: Option<Fix>) {
        self.push_fixed(
            Code::ForbiddenExpression,
            range,
            format!("{what} is not supported in plans"),
            expression_help(what),
            fix,
        );
    }

    fn reserved(&mut self, name: &str, range: TextRange) -> bool {
        if name.starts_with('_') {
            self.push(
                Code::ReservedName,
                range,
                format!(
                    "`{name}` is a reserved name: names starting with `_` belong to the runtime"
                ),
                Some(if name.trim_start_matches('_').is_empty() {
                    "give it a plain name, e.g. `item`"
                } else {
                    "rename it without the leading underscore"
                }),
            );
            true
        } else {
            false
        }
    }

    fn ident(&mut self, id: &Identifier) {
        self.reserved(id.as_str(), id.range);
    }

    fn stmts(&mut self, body: &[Stmt], top_level: bool) {
        for s in body {
            self.stmt(s, top_level);
        }
    }

    fn stmt(&mut self, stmt: &Stmt, top_level: bool) {
        match stmt {
            Stmt::FunctionDef(f) => {
                if f.is_async {
                    let fix = fixes::remove_async(self.fixes.src(), f.range);
                    self.unsupported_stmt_fixed(f.range, "async def", fix);
                }
                for d in &f.decorator_list {
                    self.push(
                        Code::Decorator,
                        d.range,
                        "decorators are not supported in plans".into(),
                        Some("call the function explicitly instead of decorating it"),
                    );
                }
                if let Some(tp) = &f.type_params {
                    self.unsupported_expr(tp.range, "a type parameter list");
                }
                if let Some(r) = &f.returns {
                    let fix = fixes::return_annotation(f.parameters.range.end().into(), r);
                    self.unsupported_expr_fixed(r.range(), "a return annotation", Some(fix));
                }
                self.ident(&f.name);
                self.parameters(&f.parameters, false);
                self.stmts(&f.body, false);
            }
            Stmt::ClassDef(s) => self.unsupported_stmt(s.range, "class"),
            Stmt::Return(r) => {
                if let Some(v) = &r.value {
                    self.expr(v);
                }
            }
            Stmt::Delete(s) => self.unsupported_stmt(s.range, "del"),
            Stmt::TypeAlias(s) => self.unsupported_stmt(s.range, "type"),
            Stmt::Assign(a) => {
                for t in &a.targets {
                    self.target(t);
                }
                self.expr(&a.value);
            }
            Stmt::AugAssign(a) => {
                self.target(&a.target);
                if a.op == Operator::MatMult {
                    self.unsupported_expr(a.range, "the `@` operator");
                }
                self.expr(&a.value);
            }
            Stmt::AnnAssign(s) => {
                let fix = fixes::annotated_assignment(&s.target, s.value.as_deref());
                self.unsupported_stmt_fixed(s.range, "annotated assignment", fix);
            }
            Stmt::For(f) => {
                if f.is_async {
                    self.unsupported_stmt(f.range, "async for");
                }
                if let Some(first) = f.orelse.first() {
                    self.unsupported_stmt(first.range(), "for … else");
                }
                self.target(&f.target);
                self.expr(&f.iter);
                self.stmts(&f.body, false);
                self.stmts(&f.orelse, false);
            }
            Stmt::While(w) => {
                if let Some(first) = w.orelse.first() {
                    self.unsupported_stmt(first.range(), "while … else");
                }
                self.expr(&w.test);
                self.stmts(&w.body, false);
                self.stmts(&w.orelse, false);
            }
            Stmt::If(i) if is_main_guard(i) => {
                let fix = fixes::unwrap_blocks(
                    self.fixes.src(),
                    i.range,
                    &[&i.body],
                    "write the body without the guard: a plan is always run as the main program",
                    true,
                );
                self.push_fixed(
                    Code::ReservedName,
                    i.test.range(),
                    "`__name__` is a reserved name: names starting with `_` belong to the runtime".into(),
                    "a plan always runs as the main program: write the guarded statements at the top level",
                    fix,
                );
                self.stmts(&i.body, false);
            }
            Stmt::If(i) => {
                self.expr(&i.test);
                self.stmts(&i.body, false);
                for clause in &i.elif_else_clauses {
                    if let Some(t) = &clause.test {
                        self.expr(t);
                    }
                    self.stmts(&clause.body, false);
                }
            }
            Stmt::With(s) => self.unsupported_stmt(s.range, "with"),
            Stmt::Match(s) => self.unsupported_stmt(s.range, "match"),
            Stmt::Raise(s) => self.unsupported_stmt(s.range, "raise"),
            Stmt::Try(t) => {
                let fix = fixes::unwrap_blocks(
                    self.fixes.src(),
                    t.range,
                    &[&t.body, &t.orelse, &t.finalbody],
                    "write the body without `try`: a failed call ends the plan with its error",
                    false,
                );
                self.unsupported_stmt_fixed(t.range, "try", fix);
            }
            Stmt::Assert(s) => self.unsupported_stmt(s.range, "assert"),
            Stmt::Import(imp) => {
                if !top_level {
                    self.push(
                        Code::ForbiddenImport,
                        imp.range,
                        "imports are only allowed at the top level of a plan".into(),
                        Some("move `import json` / `import re` to the top of the plan"),
                    );
                }
                for alias in &imp.names {
                    let name = alias.name.as_str();
                    if !is_module(name) {
                        let bound = alias.asname.as_ref().map_or_else(
                            || name.split('.').next().unwrap_or_default(),
                            |a| a.as_str(),
                        );
                        let fix = self.fixes.refused_import(
                            imp.range,
                            imp.names.len(),
                            alias.range,
                            bound,
                        );
                        self.push_fixed(
                            Code::ForbiddenImport,
                            alias.range,
                            format!("importing `{name}` is not allowed"),
                            "only `import json` and `import re` are available; the plan's data comes from the tools",
                            fix,
                        );
                    } else if let Some(asname) = &alias.asname {
                        self.push(
                            Code::ForbiddenImport,
                            asname.range,
                            format!("`import {name} as …` is not allowed"),
                            Some("write the import without `as`"),
                        );
                    }
                }
            }
            Stmt::ImportFrom(s) => {
                let fix = self
                    .fixes
                    .from_import(s, |m, f| catalogue::module_fn_row(m, f).is_some());
                self.push_fixed(
                    Code::ForbiddenImport,
                    s.range,
                    "`from … import …` is not allowed".into(),
                    "write `import json` or `import re` and use `json.loads(…)` / `re.search(…)`",
                    fix,
                );
            }
            Stmt::Global(s) => self.unsupported_stmt(s.range, "global"),
            Stmt::Nonlocal(s) => self.unsupported_stmt(s.range, "nonlocal"),
            Stmt::Expr(e) => self.expr(&e.value),
            Stmt::Pass(_) | Stmt::Break(_) | Stmt::Continue(_) => {}
            Stmt::IpyEscapeCommand(s) => self.unsupported_stmt(s.range, "IPython escape command"),
        }
    }

    fn parameters(&mut self, p: &Parameters, is_lambda: bool) {
        for pa in p.posonlyargs.iter().chain(&p.kwonlyargs) {
            self.unsupported_expr(pa.range, "a positional-only or keyword-only parameter");
        }
        for pa in [&p.vararg, &p.kwarg].into_iter().flatten() {
            self.push(
                Code::Starred,
                pa.range,
                "`*args` / `**kwargs` parameters are not supported".into(),
                Some("take a list or dict parameter instead"),
            );
        }
        for pa in p.posonlyargs.iter().chain(&p.args).chain(&p.kwonlyargs) {
            self.ident(&pa.parameter.name);
            if let Some(a) = &pa.parameter.annotation {
                let fix = fixes::parameter_annotation(pa.parameter.name.range.end().into(), a);
                self.unsupported_expr_fixed(a.range(), "a parameter annotation", Some(fix));
            }
            if let Some(d) = &pa.default {
                if is_lambda {
                    self.unsupported_expr(d.range(), "a lambda parameter default");
                }
                self.expr(d);
            }
        }
        for pa in [&p.vararg, &p.kwarg].into_iter().flatten() {
            self.ident(&pa.name);
        }
    }

    /// An assignment target: names, tuple/list unpacking and subscripts only.
    fn target(&mut self, t: &Expr) {
        match t {
            Expr::Name(n) => {
                self.reserved(n.id.as_str(), n.range);
            }
            Expr::Tuple(tu) => tu.elts.iter().for_each(|e| self.target(e)),
            Expr::List(l) => l.elts.iter().for_each(|e| self.target(e)),
            Expr::Subscript(s) => {
                self.expr(&s.value);
                self.expr(&s.slice);
            }
            Expr::Attribute(a) => {
                if !self.reserved(a.attr.as_str(), a.attr.range) {
                    self.push(
                        Code::AttributeAccess,
                        a.range,
                        "assigning to an attribute is not allowed".into(),
                        Some("use a dict and assign to a key: `d[\"name\"] = …`"),
                    );
                }
            }
            Expr::Starred(s) => self.starred(s.range),
            other => self.expr(other),
        }
    }

    fn starred(&mut self, range: TextRange) {
        self.push(
            Code::Starred,
            range,
            "starred expressions (`*x`, `**x`) are not supported".into(),
            Some("pass or unpack elements explicitly, or index the list"),
        );
    }

    fn comprehensions(&mut self, gens: &[Comprehension]) {
        for g in gens {
            if g.is_async {
                self.unsupported_expr(g.range, "`async for` in a comprehension");
            }
            self.target(&g.target);
            self.expr(&g.iter);
            for cond in &g.ifs {
                self.expr(cond);
            }
        }
    }

    fn interpolations(&mut self, elements: &InterpolatedStringElements) {
        for el in elements {
            match el {
                InterpolatedStringElement::Literal(_) => {}
                InterpolatedStringElement::Interpolation(i) => {
                    self.expr(&i.expression);
                    if let Some(spec) = &i.format_spec {
                        self.interpolations(&spec.elements);
                    }
                }
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::BoolOp(b) => b.values.iter().for_each(|v| self.expr(v)),
            Expr::Named(n) => {
                if self.comprehension_depth > 0 {
                    let fix = self.fixes.walrus_in_comprehension(n);
                    self.unsupported_expr_fixed(n.range, "`:=` inside a comprehension", fix);
                }
                self.target(&n.target);
                self.expr(&n.value);
            }
            Expr::BinOp(b) => {
                match b.op {
                    Operator::Mod
                        if matches!(*b.left, Expr::StringLiteral(_) | Expr::FString(_)) =>
                    {
                        let fix =
                            fixes::percent_format(self.fixes.src(), b.range, &b.left, &b.right);
                        self.push_fixed(
                            Code::PercentFormat,
                            b.range,
                            "`%`-formatting of strings is not supported".into(),
                            "use an f-string or `str.format` instead",
                            fix,
                        );
                    }
                    Operator::MatMult => self.unsupported_expr(b.range, "the `@` operator"),
                    Operator::Add
                    | Operator::Sub
                    | Operator::Mult
                    | Operator::Div
                    | Operator::Mod
                    | Operator::Pow
                    | Operator::LShift
                    | Operator::RShift
                    | Operator::BitOr
                    | Operator::BitXor
                    | Operator::BitAnd
                    | Operator::FloorDiv => {}
                }
                self.expr(&b.left);
                self.expr(&b.right);
            }
            Expr::UnaryOp(u) => self.expr(&u.operand),
            Expr::Lambda(l) => {
                if let Some(p) = &l.parameters {
                    self.parameters(p, true);
                }
                self.expr(&l.body);
            }
            Expr::If(i) => {
                self.expr(&i.test);
                self.expr(&i.body);
                self.expr(&i.orelse);
            }
            Expr::Dict(d) => {
                for item in &d.items {
                    match &item.key {
                        Some(k) => self.expr(k),
                        None => self.starred(item.value.range()),
                    }
                    self.expr(&item.value);
                }
            }
            Expr::Set(s) => s.elts.iter().for_each(|v| self.expr(v)),
            Expr::ListComp(c) => {
                self.comprehension_depth += 1;
                self.expr(&c.elt);
                self.comprehensions(&c.generators);
                self.comprehension_depth -= 1;
            }
            Expr::SetComp(c) => {
                self.comprehension_depth += 1;
                self.expr(&c.elt);
                self.comprehensions(&c.generators);
                self.comprehension_depth -= 1;
            }
            Expr::DictComp(c) => {
                self.comprehension_depth += 1;
                if let Some(k) = &c.key {
                    self.expr(k);
                }
                self.expr(&c.value);
                self.comprehensions(&c.generators);
                self.comprehension_depth -= 1;
            }
            Expr::Generator(c) => {
                self.comprehension_depth += 1;
                self.expr(&c.elt);
                self.comprehensions(&c.generators);
                self.comprehension_depth -= 1;
            }
            Expr::Await(a) => {
                let fix = fixes::remove_await(a.range, &a.value);
                self.unsupported_expr_fixed(a.range, "`await`", Some(fix));
                self.expr(&a.value);
            }
            Expr::Yield(y) => self.unsupported_expr(y.range, "`yield`"),
            Expr::YieldFrom(y) => self.unsupported_expr(y.range, "`yield from`"),
            Expr::Compare(c) => {
                self.expr(&c.left);
                c.comparators.iter().for_each(|v| self.expr(v));
            }
            Expr::Call(c) => self.call(c),
            Expr::FString(f) => {
                for part in f.value.iter() {
                    match part {
                        FStringPart::Literal(_) => {}
                        FStringPart::FString(fs) => self.interpolations(&fs.elements),
                    }
                }
            }
            Expr::TString(t) => self.unsupported_expr(t.range, "a t-string"),
            Expr::StringLiteral(_) | Expr::BooleanLiteral(_) | Expr::NoneLiteral(_) => {}
            Expr::BytesLiteral(b) => self.unsupported_expr(b.range, "a bytes literal"),
            Expr::NumberLiteral(n) => match n.value {
                Number::Int(_) | Number::Float(_) => {}
                Number::Complex { .. } => self.unsupported_expr(n.range, "a complex number"),
            },
            Expr::EllipsisLiteral(x) => self.unsupported_expr(x.range, "`...`"),
            Expr::Attribute(a) if self.is_refused_import_path(&a.value) => {}
            Expr::Attribute(a) => {
                let attr = a.attr.as_str();
                if !self.reserved(attr, a.attr.range) {
                    // A method named without its call is a slip for the call; anything else is a record's
                    // field read the way an object's is.
                    let (help, fix) = if is_method(attr) {
                        (format!("call the method: `x.{attr}(…)`"), None)
                    } else {
                        (
                            format!(
                                "tool results are dicts: read the key, `x[\"{attr}\"]`, or call an allowed method such as `x.get(\"{attr}\")`"
                            ),
                            Some(fixes::attribute_to_key(&a.value, attr, a.range)),
                        )
                    };
                    self.push_fixed(
                        Code::AttributeAccess,
                        a.range,
                        format!("attribute access `.{attr}` is only allowed as a whitelisted method call"),
                        &help,
                        fix,
                    );
                }
                self.expr(&a.value);
            }
            Expr::Subscript(s) => {
                self.expr(&s.value);
                self.expr(&s.slice);
            }
            Expr::Starred(s) => {
                self.starred(s.range);
                self.expr(&s.value);
            }
            Expr::Name(n) => self.name(n.id.as_str(), n.range),
            Expr::List(l) => l.elts.iter().for_each(|v| self.expr(v)),
            Expr::Tuple(t) => t.elts.iter().for_each(|v| self.expr(v)),
            Expr::Slice(s) => {
                for part in [&s.lower, &s.upper, &s.step].into_iter().flatten() {
                    self.expr(part);
                }
            }
            Expr::IpyEscapeCommand(x) => {
                self.unsupported_expr(x.range, "an IPython escape command")
            }
        }
    }

    fn name(&mut self, name: &str, range: TextRange) {
        if self.reserved(name, range) {
            return;
        }
        if is_forbidden_builtin(name) {
            self.push(
                Code::InterpreterBuiltin,
                range,
                format!("the builtin `{name}` is not allowed in plans"),
                Some(&format!(
                    "plans may only use these builtins: {}",
                    catalogue::BUILTINS
                        .iter()
                        .map(|b| b.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        } else if is_module(name) {
            self.push(
                Code::AttributeAccess,
                range,
                format!(
                    "the module `{name}` can only be used to call one of its allowed functions"
                ),
                Some("call it directly, e.g. `json.loads(text)`"),
            );
        }
    }

    /// Whether `e` is a refused import's name or an attribute path from one (`os`, `os.path`).
    fn is_refused_import_path(&self, mut e: &Expr) -> bool {
        while let Expr::Attribute(a) = e {
            e = &a.value;
        }
        matches!(e, Expr::Name(n) if self.refused_imports.iter().any(|r| r == n.id.as_str()))
    }

    fn call(&mut self, c: &ExprCall) {
        match &*c.func {
            Expr::Attribute(a) if self.is_refused_import_path(&a.value) => {}
            Expr::Attribute(a) => {
                let attr = a.attr.as_str();
                if !self.reserved(attr, a.attr.range) {
                    match &*a.value {
                        Expr::Name(m) if is_module(m.id.as_str()) => {
                            self.module_call(m.id.as_str(), attr, a.range)
                        }
                        receiver => {
                            if !is_method(attr) {
                                self.push(
                                    Code::ForbiddenMethod,
                                    a.attr.range,
                                    format!("the method `.{attr}()` is not allowed in plans"),
                                    Some(&allowed_methods()),
                                );
                            }
                            if attr == "format"
                                && let Expr::StringLiteral(lit) = receiver
                                && let Some(field) = format_field_access(lit.value.to_str())
                            {
                                self.push(
                                    Code::AttributeAccess,
                                    lit.range,
                                    format!(
                                        "format field `{{{field}}}` reads an attribute or index; only plain fields are allowed"
                                    ),
                                    Some("pass the value itself: `\"{}\".format(d[\"key\"])`"),
                                );
                            }
                            self.expr(receiver);
                        }
                    }
                }
            }
            func => self.expr(func),
        }
        for a in &c.arguments.args {
            self.expr(a);
        }
        for k in &c.arguments.keywords {
            match &k.arg {
                Some(id) => self.ident(id),
                None => self.starred(k.range),
            }
            self.expr(&k.value);
        }
    }

    fn module_call(&mut self, module: &str, func: &str, range: TextRange) {
        if catalogue::module_fn_row(module, func).is_none() {
            let hint = format!("the functions available are {}", module_functions(module));
            self.push(
                Code::ForbiddenMethod,
                range,
                format!("`{module}.{func}` is not allowed in plans"),
                Some(&hint),
            );
        } else if !self.imported.iter().any(|m| m == module) {
            self.push(
                Code::ForbiddenImport,
                range,
                format!("`{module}.{func}` is used but `{module}` is not imported"),
                Some("add the import at the top level of the plan"),
            );
        }
    }
}

/// `if __name__ == "__main__":` with no `elif` or `else`.
fn is_main_guard(i: &ruff_python_ast::StmtIf) -> bool {
    let Expr::Compare(c) = &*i.test else {
        return false;
    };
    i.elif_else_clauses.is_empty()
        && matches!(&*c.left, Expr::Name(n) if n.id.as_str() == "__name__")
        && matches!(c.comparators.as_ref(), [Expr::StringLiteral(l)] if l.value.to_str() == "__main__")
}

/// The methods a plan may call, for a help that stands alone.
fn allowed_methods() -> String {
    let mut names: Vec<&str> = catalogue::METHODS.iter().map(|m| m.name).collect();
    names.sort_unstable();
    names.dedup();
    let shown: Vec<String> = names.iter().map(|n| format!(".{n}()")).collect();
    format!("the allowed methods are {}", shown.join(", "))
}

/// What to write instead of a statement outside the subset: the help of its Z010, standing alone (a
/// planner model cannot open the docs).
fn statement_help(what: &str) -> &'static str {
    match what {
        "async def" => {
            "define it with `def`: tool calls return their results directly, nothing is awaited"
        }
        "class" => "use dicts for records and plain functions for behaviour",
        "del" => "assign a new value instead, or build a new list or dict without the item",
        "type" => "remove the type alias: plans are not type-annotated",
        "annotated assignment" => "write `name = value` without the annotation",
        "async for" => "write a plain `for` loop: tool calls return their results directly",
        "for … else" | "while … else" => {
            "set a flag before the loop, clear it where you `break`, and test it after the loop"
        }
        "with" => "call the tool that reads or writes the data instead of opening it",
        "match" => "test the value with `if` / `elif`",
        "raise" => {
            "print what went wrong and skip the rest of the work with `if`; a failed tool call already ends the plan"
        }
        "try" => {
            "write the body without `try`: a failed tool call ends the plan with its error, and nothing can catch it"
        }
        "assert" => "test it with `if not …:` and skip the work",
        "global" | "nonlocal" => {
            "return the new value from the function and assign it where it is called"
        }
        _ => {
            "a plan may use assignments, `if`, `for`, `while`, `def`, `return`, `break`, `continue`, `pass` and `import json` / `import re`"
        }
    }
}

/// What to write instead of an expression outside the subset (the help of its Z011).
fn expression_help(what: &str) -> &'static str {
    match what {
        "`await`" => "remove `await`: tool calls return their results directly",
        "`yield`" | "`yield from`" => "build a list and return it",
        "`:=` inside a comprehension" => {
            "compute the value in the comprehension's expression and its `if`, or write a `for` loop"
        }
        "a parameter annotation" | "a return annotation" | "a type parameter list" => {
            "remove the annotation: plans are not type-annotated"
        }
        "a positional-only or keyword-only parameter" => "declare plain parameters (no `/` or `*`)",
        "a lambda parameter default" => {
            "define a function with `def` when a parameter needs a default"
        }
        "the `@` operator" => "multiply element by element in a loop or comprehension",
        "a bytes literal" => "use a `str` literal",
        "a t-string" => "use an f-string",
        "a complex number" | "`...`" => "use an `int`, a `float` or `None`",
        _ => {
            "use plain values, operators, calls of tools and allowed builtins, f-strings and comprehensions"
        }
    }
}

/// The first replacement field of a `str.format` template whose name goes beyond a plain position or
/// keyword (`{0.attr}`, `{x[k]}`), which `str.format` would resolve by attribute lookup or indexing on the
/// argument, outside the plan's view. Nested fields in a format spec are checked too.
fn format_field_access(template: &str) -> Option<String> {
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
            }
            '{' => {
                let mut field = String::new();
                let mut depth = 1usize;
                for c in chars.by_ref() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    field.push(c);
                }
                // The spec after `:` may hold nested fields: `{x:{width}}`.
                for part in field.split(['{', '}']) {
                    let name = part.split(['!', ':']).next().unwrap_or("");
                    if name.contains(['.', '[']) {
                        return Some(field);
                    }
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::parse::parse;

    fn codes(src: &str) -> Vec<&'static str> {
        let p = parse(src).expect("test plan parses");
        check_subset(&p.module, &p.source)
            .iter()
            .map(|d| d.code.as_str())
            .collect()
    }

    #[test]
    fn whitelisted_calls_pass() {
        assert!(codes("import json\nx = json.loads('{}')\ny = x.get('a')\n").is_empty());
    }

    #[test]
    fn module_needs_import() {
        assert_eq!(codes("x = json.loads('{}')\n"), ["Z015"]);
        assert_eq!(codes("import json\nx = json.load(f)\n"), ["Z013"]);
        assert_eq!(codes("import json\nx = json\n"), ["Z014"]);
    }

    #[test]
    fn percent_only_on_literal_strings() {
        assert_eq!(codes("x = 'a%s' % 1\n"), ["Z017"]);
        assert_eq!(codes("x = f'a{y}%s' % 1\n"), ["Z017"]);
        assert!(codes("x = 7 % 3\n").is_empty());
    }

    #[test]
    fn reserved_everywhere() {
        assert_eq!(codes("_x = 1\n"), ["Z016"]);
        assert_eq!(codes("x.__class__\n"), ["Z016"]);
        assert_eq!(codes("f(_k=1)\n"), ["Z016"]);
        assert_eq!(codes("def f(_a):\n    pass\n"), ["Z016"]);
        assert_eq!(codes("y = lambda _a: 1\n"), ["Z016"]);
        assert_eq!(codes("x.__len__()\n"), ["Z016"]);
    }

    #[test]
    fn walrus_in_comprehension_rejected() {
        assert_eq!(codes("x = [(y := 1) for z in w]\n"), ["Z011"]);
        assert!(codes("if (y := 1):\n    pass\n").is_empty());
    }

    #[test]
    fn format_fields_must_be_plain() {
        assert!(codes("x = '{} {0} {name!r:>{w}} {{.x}}'.format(1, name=2, w=3)\n").is_empty());
        assert_eq!(codes("x = '{0.__class__}'.format(1)\n"), ["Z014"]);
        assert_eq!(codes("x = '{a[k]}'.format(a=1)\n"), ["Z014"]);
        assert_eq!(codes("x = '{a:{b.c}}'.format(a=1, b=2)\n"), ["Z014"]);
        assert_eq!(format_field_access("{"), None);
    }

    #[test]
    fn forbidden_builtin_as_value() {
        assert_eq!(codes("f = getattr\n"), ["Z012"]);
    }
}
