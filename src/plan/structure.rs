//! Name resolution against the policy: every call goes to a builtin, a tool, a verifier or something the
//! plan defined, with arguments that match the tool's declaration.

use std::collections::BTreeSet;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, ExprCall, ExprContext, ModModule, Parameters, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::catalogue::{self, Keywords};
use super::code::Code;
use super::diagnostic::{Diagnostic, Edit, Fix};
use super::signatures::Signatures;
use super::subset::{is_builtin, is_forbidden_builtin, is_module};

/// Checks calls and names of a module (already through the subset check) against the signatures.
///
/// ```
/// use zamburak::plan::{parse::parse, structure::check_structure, Signatures};
/// let mut sigs = Signatures::default();
/// sigs.tools.insert("send_email".into(), vec!["to".into(), "body".into()]);
/// let p = parse("send_emial(to='a', body='b')\n").unwrap();
/// let d = check_structure(&p.module, &sigs);
/// assert_eq!(d[0].code, "Z101");
/// assert!(d[0].hint.as_deref().unwrap().contains("send_email"));
/// ```
pub fn check_structure(module: &ModModule, sigs: &Signatures) -> Vec<Diagnostic> {
    let mut defs = Definitions::default();
    defs.visit_body(&module.body);
    let mut c = Checker {
        sigs,
        defined: defs
            .names
            .iter()
            .map(|(n, _)| n.clone())
            .chain(defs.refused.iter().cloned())
            .collect(),
        diags: Vec::new(),
    };
    for (name, range) in &defs.names {
        if sigs.is_callable(name)
            || is_builtin(name)
            || is_forbidden_builtin(name)
            || is_module(name)
        {
            c.diags.push(err(
                Code::ShadowedName,
                *range,
                format!("`{name}` shadows a tool, verifier, builtin or module of the same name"),
                Some("pick a different name for this variable or function".into()),
            ));
        }
    }
    c.visit_body(&module.body);
    c.diags.sort_by_key(|d| (d.start, d.end));
    c.diags
}

fn err(code: Code, range: TextRange, message: String, hint: Option<String>) -> Diagnostic {
    Diagnostic {
        hint,
        ..Diagnostic::new(code, range.start().into(), range.end().into(), message)
    }
}

/// Every name the plan binds, anywhere: a flat set is enough because the subset has no classes or
/// globals, and the runtime catches a name read before it is bound.
#[derive(Default)]
struct Definitions {
    names: Vec<(String, TextRange)>,
    /// Names bound by statements the subset check already refused.
    refused: Vec<String>,
}

impl Definitions {
    fn params(&mut self, p: &Parameters) {
        for pa in p.posonlyargs.iter().chain(&p.args).chain(&p.kwonlyargs) {
            let id = &pa.parameter.name;
            self.names.push((id.as_str().to_owned(), id.range));
        }
    }
}

impl<'a> Visitor<'a> for Definitions {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(f) => {
                self.names.push((f.name.as_str().to_owned(), f.name.range));
                self.params(&f.parameters);
            }
            // Statements the subset refuses (Z010, Z015) still bind their names: the refusal is the one
            // error, and `m = Mailer()` after `class Mailer:` is not a second one.
            Stmt::ClassDef(c) => self.refused.push(c.name.as_str().to_owned()),
            Stmt::Import(i) => {
                for alias in &i.names {
                    let bound = alias.asname.as_ref().map_or_else(
                        || alias.name.as_str().split('.').next().unwrap_or_default(),
                        |a| a.as_str(),
                    );
                    self.refused.push(bound.to_owned());
                }
            }
            Stmt::ImportFrom(i) => {
                for alias in &i.names {
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name);
                    self.refused.push(bound.as_str().to_owned());
                }
            }
            Stmt::Global(g) => self
                .refused
                .extend(g.names.iter().map(|n| n.as_str().to_owned())),
            Stmt::Nonlocal(n) => self
                .refused
                .extend(n.names.iter().map(|n| n.as_str().to_owned())),
            Stmt::Try(t) => {
                for handler in &t.handlers {
                    let ruff_python_ast::ExceptHandler::ExceptHandler(h) = handler;
                    if let Some(name) = &h.name {
                        self.refused.push(name.as_str().to_owned());
                    }
                }
            }
            _ => {}
        }
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(n) if n.ctx == ExprContext::Store => {
                self.names.push((n.id.as_str().to_owned(), n.range));
            }
            Expr::Lambda(l) => {
                if let Some(p) = &l.parameters {
                    self.params(p);
                }
            }
            _ => {}
        }
        visitor::walk_expr(self, expr);
    }
}

struct Checker<'s> {
    sigs: &'s Signatures,
    defined: BTreeSet<String>,
    diags: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn nearest<'c>(&self, name: &str, candidates: impl Iterator<Item = &'c str>) -> Option<String> {
        candidates
            .map(|c| (edit_distance(name, c), c))
            .filter(|(d, c)| *d <= 2 + c.len() / 4)
            .min()
            .map(|(_, c)| c.to_owned())
    }

    /// Keyword arguments a builtin, method or module function does not take (its catalogue row's
    /// `keywords`). Names starting with `_` and `**` were refused by the subset check.
    fn catalogue_keywords(&mut self, what: &str, accepted: Keywords, call: &ExprCall) {
        let Keywords::Only(names) = accepted else {
            return;
        };
        for k in &call.arguments.keywords {
            let Some(id) = &k.arg else { continue };
            let kw = id.as_str();
            if names.contains(&kw) || kw.starts_with('_') {
                continue;
            }
            let takes = if names.is_empty() {
                "it takes no keyword arguments".to_string()
            } else {
                format!("it takes: {}", names.join(", "))
            };
            let hint = match self.nearest(kw, names.iter().copied()) {
                Some(s) => format!("did you mean `{s}`? {takes}"),
                None => takes,
            };
            self.diags.push(err(
                Code::UnknownKeyword,
                id.range,
                format!("`{what}` does not take the keyword argument `{kw}`"),
                Some(hint),
            ));
        }
    }

    fn call(&mut self, call: &ExprCall) {
        let func = match &*call.func {
            Expr::Name(func) => func,
            Expr::Attribute(a) => {
                let attr = a.attr.as_str();
                match &*a.value {
                    Expr::Name(m) if is_module(m.id.as_str()) => {
                        if let Some(row) = catalogue::module_fn_row(m.id.as_str(), attr) {
                            self.catalogue_keywords(
                                &format!("{}.{attr}", m.id.as_str()),
                                row.keywords,
                                call,
                            );
                        }
                    }
                    _ => {
                        if let Some(row) = catalogue::method_row(attr) {
                            self.catalogue_keywords(&format!(".{attr}()"), row.keywords, call);
                        }
                    }
                }
                return;
            }
            _ => return,
        };
        let name = func.id.as_str();
        if let Some(params) = self.sigs.tools.get(name) {
            self.tool_call(name, params, call);
        } else if self.sigs.verifiers.contains(name) {
            let args = &call.arguments;
            // `or_none=True` (a literal) returns None instead of stopping the run.
            let or_none_ok = match args.keywords.as_slice() {
                [] => true,
                [k] => {
                    k.arg.as_ref().is_some_and(|a| a.as_str() == "or_none")
                        && matches!(k.value, Expr::BooleanLiteral(_))
                }
                _ => false,
            };
            if args.args.len() != 1 || !or_none_ok {
                self.diags.push(err(
                    Code::VerifierArity,
                    call.range(),
                    format!(
                        "verifier `{name}` takes exactly one positional argument (and optionally `or_none=True`), got {} positional and {} keyword",
                        args.args.len(),
                        args.keywords.len()
                    ),
                    Some(format!(
                        "call it as `{name}(value)`, or `{name}(value, or_none=True)` to get None instead of an error"
                    )),
                ));
            }
        } else if let Some(row) = catalogue::builtin_row(name) {
            // A plan cannot bind a builtin's name (Z108), so the call reaches the builtin.
            self.catalogue_keywords(name, row.keywords, call);
        } else if self.defined.contains(name) || is_forbidden_builtin(name) {
            // Forbidden builtins were already reported by the subset check.
        } else {
            let suggestion = self.nearest(
                name,
                self.sigs
                    .tools
                    .keys()
                    .map(String::as_str)
                    .chain(self.sigs.verifiers.iter().map(String::as_str))
                    .chain(catalogue::BUILTINS.iter().map(|b| b.name))
                    .chain(self.defined.iter().map(String::as_str)),
            );
            let fix = suggestion.as_ref().map(|s| {
                let (a, b) = (
                    usize::from(func.range.start()),
                    usize::from(func.range.end()),
                );
                Fix::unsafe_(format!("call `{s}`"), vec![Edit::replace(a, b, s.clone())])
            });
            let tools: Vec<&str> = self.sigs.tools.keys().map(String::as_str).collect();
            self.diags.push(
                err(
                    Code::UnknownName,
                    func.range,
                    format!(
                        "unknown function `{name}`: not a tool, verifier, builtin or plan function"
                    ),
                    Some(match suggestion {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!(
                            "call one of the declared tools ({}), or define the function first",
                            tools.join(", ")
                        ),
                    }),
                )
                .with_fix(fix),
            );
        }
    }

    fn tool_call(&mut self, name: &str, params: &[String], call: &ExprCall) {
        let args = &call.arguments;
        let mut bound = vec![false; params.len()];
        for (i, a) in args.args.iter().enumerate() {
            match bound.get_mut(i) {
                Some(b) => *b = true,
                None => self.diags.push(
                    err(
                        Code::TooManyPositional,
                        a.range(),
                        format!(
                            "tool `{name}` takes {} argument(s) but more were given positionally",
                            params.len()
                        ),
                        Some(format!(
                            "its arguments are: {}; drop this one or pass what it meant inside one of them",
                            params.join(", ")
                        )),
                    )
                    .with_fix(drop_argument(call, a.range(), "drop the extra argument")),
                ),
            }
        }
        // Unknown keywords, reported once the missing arguments are known: a keyword far from every name
        // while exactly one argument is missing is that argument misnamed (`recipient=` for `to=`).
        let mut unknown: Vec<(&ruff_python_ast::Identifier, Option<String>)> = Vec::new();
        for k in &args.keywords {
            let Some(id) = &k.arg else {
                // `**kwargs` was already refused by the subset check.
                continue;
            };
            let kw = id.as_str();
            match params.iter().position(|p| p == kw) {
                Some(i) if bound[i] => self.diags.push(err(
                    Code::DuplicateArgument,
                    k.range,
                    format!("argument `{kw}` of tool `{name}` is given twice"),
                    Some("pass each argument once".into()),
                )),
                Some(i) => bound[i] = true,
                None => {
                    let nearest = self.nearest(kw, params.iter().map(String::as_str));
                    // `too=` for a missing `to`: the misspelling is the one mistake, so `to` is not
                    // also reported missing.
                    if let Some(i) = nearest
                        .as_ref()
                        .and_then(|s| params.iter().position(|p| p == s))
                    {
                        bound[i] = true;
                    }
                    unknown.push((id, nearest));
                }
            }
        }
        let missing: Vec<&str> = params
            .iter()
            .zip(&bound)
            .filter(|(_, b)| !**b)
            .map(|(p, _)| p.as_str())
            .collect();
        let unmatched = unknown.iter().filter(|(_, n)| n.is_none()).count();
        let paired = (unmatched == 1 && missing.len() == 1).then(|| missing[0].to_string());
        for (id, nearest) in unknown {
            let kw = id.as_str();
            let (suggestion, safe) = match nearest {
                Some(s) => (Some(s), true),
                None => (paired.clone(), false),
            };
            let hint = match &suggestion {
                Some(s) if safe => format!("did you mean `{s}`? arguments: {}", params.join(", ")),
                Some(s) => format!(
                    "did you mean `{s}`? it is the one argument missing; arguments: {}",
                    params.join(", ")
                ),
                None => format!("its arguments are: {}", params.join(", ")),
            };
            let fix = match suggestion {
                Some(s) => {
                    let (a, b) = (usize::from(id.range.start()), usize::from(id.range.end()));
                    let message = format!("rename `{kw}` to `{s}`");
                    let edits = vec![Edit::replace(a, b, s)];
                    Some(if safe {
                        Fix::safe(message, edits)
                    } else {
                        Fix::unsafe_(message, edits)
                    })
                }
                // Nothing it could mean and nothing missing: the tool does not take it (`timeout=10`).
                None if missing.is_empty() => args
                    .keywords
                    .iter()
                    .find(|k| k.arg.as_ref().is_some_and(|a| a.range == id.range))
                    .and_then(|k| {
                        drop_argument(
                            call,
                            k.range,
                            &format!("drop `{kw}`: `{name}` does not take it"),
                        )
                    }),
                None => None,
            };
            self.diags.push(
                err(
                    Code::UnknownArgument,
                    id.range,
                    format!("tool `{name}` has no argument `{kw}`"),
                    Some(hint),
                )
                .with_fix(fix),
            );
        }
        let missing: Vec<&str> = if paired.is_some() {
            Vec::new()
        } else {
            missing
        };
        if !missing.is_empty() {
            self.diags.push(err(
                Code::MissingArgument,
                call.range(),
                format!(
                    "call to tool `{name}` is missing argument(s): {}",
                    missing.join(", ")
                ),
                Some(format!(
                    "pass {} by keyword: `{name}({})`",
                    missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    params
                        .iter()
                        .map(|p| format!("{p}=…"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            ));
        }
    }

    /// A name read outside callee position.
    fn value_name(&mut self, name: &str, range: TextRange) {
        if self.sigs.is_callable(name) {
            self.diags.push(err(
                Code::ToolAsValue,
                range,
                format!("tool or verifier `{name}` is used as a value"),
                Some(format!("call it directly: `{name}(…)`")),
            ));
        } else if !(is_builtin(name)
            || self.defined.contains(name)
            || is_forbidden_builtin(name)
            || is_module(name)
            || name.starts_with('_'))
        {
            self.diags.push(err(
                Code::UnknownName,
                range,
                format!("unknown name `{name}`: it is never assigned in the plan"),
                Some("assign it before use".into()),
            ));
        }
    }
}

impl<'a> Visitor<'a> for Checker<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if let Stmt::Try(t) = stmt {
            // `try` is refused (Z010); the exception types it names (`except ValueError`) are part of
            // that one mistake. The code inside is still checked.
            self.visit_body(&t.body);
            for handler in &t.handlers {
                let ruff_python_ast::ExceptHandler::ExceptHandler(h) = handler;
                self.visit_body(&h.body);
            }
            self.visit_body(&t.orelse);
            self.visit_body(&t.finalbody);
            return;
        }
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Call(call) => {
                self.call(call);
                match &*call.func {
                    // The callee name is resolved by `call`; only its arguments remain.
                    Expr::Name(_) => {}
                    // A module receiver (`json.loads`) is not a value either; the subset check vetted it.
                    Expr::Attribute(a) if matches!(&*a.value, Expr::Name(m) if is_module(m.id.as_str())) =>
                        {}
                    func => self.visit_expr(func),
                }
                for a in &call.arguments.args {
                    self.visit_expr(a);
                }
                for k in &call.arguments.keywords {
                    self.visit_expr(&k.value);
                }
            }
            Expr::Name(n) if n.ctx == ExprContext::Load => self.value_name(n.id.as_str(), n.range),
            _ => visitor::walk_expr(self, expr),
        }
    }
}

/// Deletes one argument of `call` (at `range`) with the comma that separates it from its neighbour.
fn drop_argument(call: &ExprCall, range: TextRange, message: &str) -> Option<Fix> {
    let mut all: Vec<TextRange> = call
        .arguments
        .args
        .iter()
        .map(Ranged::range)
        .chain(call.arguments.keywords.iter().map(|k| k.range))
        .collect();
    all.sort_by_key(|r| r.start());
    let i = all.iter().position(|r| *r == range)?;
    let (start, end) = match (i.checked_sub(1).map(|p| all[p]), all.get(i + 1)) {
        // `f(a, x)`: from the end of `a` to the end of `x`.
        (Some(prev), _) => (prev.end(), range.end()),
        // `f(x, b)`: from `x` to the start of `b`.
        (None, Some(next)) => (range.start(), next.start()),
        (None, None) => (range.start(), range.end()),
    };
    Some(Fix::unsafe_(
        message,
        vec![Edit::delete(start.into(), end.into())],
    ))
}

/// Levenshtein distance over characters, for "did you mean" hints.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let subst = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = subst.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::parse::parse;

    fn sigs() -> Signatures {
        let mut s = Signatures::default();
        s.tools.insert(
            "send_email".into(),
            vec!["to".into(), "subject".into(), "body".into()],
        );
        s.verifiers.insert("verify_recipient".into());
        s
    }

    fn codes(src: &str) -> Vec<&'static str> {
        let p = parse(src).expect("test plan parses");
        check_structure(&p.module, &sigs())
            .iter()
            .map(|d| d.code.as_str())
            .collect()
    }

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn tool_arguments() {
        assert!(codes("send_email('a', 'b', body='c')\n").is_empty());
        // `bdy` is a misspelt `body`: one mistake, so `body` is not also missing.
        assert_eq!(codes("send_email('a', 'b', bdy='c')\n"), ["Z102"]);
        // `colour` is close to nothing, but `body` is the one argument missing: one mistake, one error,
        // whose fix renames it.
        assert_eq!(codes("send_email('a', 'b', colour='c')\n"), ["Z102"]);
        // Two unknown keywords and one missing argument: nothing pairs them.
        assert_eq!(
            codes("send_email('a', 'b', colour='c', size=1)\n"),
            ["Z103", "Z102", "Z102"]
        );
        assert_eq!(codes("send_email('a', 'b')\n"), ["Z103"]);
        assert_eq!(codes("send_email('a', 'b', 'c', 'd')\n"), ["Z104"]);
        assert_eq!(codes("send_email('a', 'b', 'c', to='d')\n"), ["Z105"]);
    }

    #[test]
    fn verifiers_and_values() {
        assert!(codes("x = verify_recipient('a')\n").is_empty());
        assert_eq!(codes("x = verify_recipient('a', 'b')\n"), ["Z106"]);
        assert_eq!(codes("x = verify_recipient(v='a')\n"), ["Z106"]);
        assert_eq!(codes("f = send_email\n"), ["Z107"]);
        assert_eq!(codes("send_email = 1\n"), ["Z108"]);
        assert_eq!(codes("def len(x):\n    return 1\n"), ["Z108"]);
    }

    #[test]
    fn catalogue_keywords() {
        assert!(codes("s = 'a b'\nx = s.split(sep=' ', maxsplit=1)\n").is_empty());
        assert!(codes("x = sorted([1], key=abs, reverse=True)\n").is_empty());
        assert!(codes("x = dict(a=1)\ny = '{a}'.format(a=1)\n").is_empty());
        assert_eq!(codes("x = sorted([1], foo=1)\n"), ["Z109"]);
        assert_eq!(codes("x = sorted([1], kye=abs)\n"), ["Z109"]);
        assert_eq!(codes("x = [1]\nx.append(v=1)\n"), ["Z109"]);
        assert_eq!(
            codes("import json\nx = json.loads('1', strict=True)\n"),
            ["Z109"]
        );
    }

    #[test]
    fn unknown_names() {
        assert_eq!(codes("frobnicate(1)\n"), ["Z101"]);
        assert_eq!(codes("x = y\n"), ["Z101"]);
        assert!(codes("def f(a):\n    return a\nf(1)\n").is_empty());
        assert!(codes("g = lambda a: a\ng(1)\n").is_empty());
    }
}
