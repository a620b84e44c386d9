//! Which plan variables can live unboxed. A *flat* value is an `int`, `float`, `str`, `bool` or `None`:
//! its raw form is exactly the plain Python value, so an operator, comparison or `str` method applied to the
//! raw form behaves (result and exception type) as it does in the plain plan. The compiler keeps a flat
//! variable `x` as two variables, `x_` (raw) and `x_l` (label), and computes on them without allocating a
//! `(raw, label)` tuple per intermediate value (`docs/lowering.md`, "Shadow scalars").
//!
//! The inference is flow-insensitive and conservative: a variable is flat only if *every* binding of it in
//! its scope is a flat expression, it is not a parameter, `def`, walrus or unpacking target, and no nested
//! function, lambda or comprehension mentions it (those read variables by name, boxed). Anything the rules
//! do not know is not flat, which only costs speed.

use std::collections::{BTreeMap, BTreeSet};

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{Expr, Number, Operator, Stmt, UnaryOp};

use super::scope::{each_child, target_names};
use crate::plan::catalogue;

/// A `str` method whose result is flat and that may be applied to a flat receiver as written (it raises on
/// every other flat receiver, as plainly). `index` and `count` also exist on lists and tuples, where they
/// return an int.
pub(crate) fn is_raw_method(name: &str) -> bool {
    catalogue::method_row(name).is_some_and(|m| m.raw)
}

/// A method whose result is flat whatever the receiver: the raw ones, and `join` and `format` (which take
/// a list or keyword arguments, so they are never applied raw).
pub(crate) fn is_flat_method(name: &str) -> bool {
    catalogue::method_row(name).is_some_and(|m| m.flat)
}

/// A builtin whose result is flat whatever it is given (or that raises).
pub(crate) fn is_flat_builtin(name: &str) -> bool {
    catalogue::builtin_row(name).is_some_and(|b| b.flat)
}

/// The facts about names that decide whether an expression is flat.
pub(crate) trait Names {
    /// A flat variable of the current scope.
    fn is_flat_name(&self, name: &str) -> bool;
    /// A call `name(...)` reaches the builtin (not a plan variable, tool or verifier of that name).
    fn is_builtin_call(&self, name: &str) -> bool;
}

/// Operators whose result on two flat values is flat (`**` can make a complex number; `@` is rejected).
pub(crate) fn flat_operator(op: Operator) -> bool {
    !matches!(op, Operator::Pow | Operator::MatMult)
}

/// Whether `e` always evaluates to a flat value (or raises).
pub(crate) fn is_flat(e: &Expr, names: &dyn Names) -> bool {
    match e {
        Expr::NumberLiteral(n) => matches!(n.value, Number::Int(_) | Number::Float(_)),
        Expr::StringLiteral(_) | Expr::BooleanLiteral(_) | Expr::NoneLiteral(_) => true,
        Expr::Name(n) => names.is_flat_name(n.id.as_str()),
        Expr::BinOp(b) => {
            flat_operator(b.op) && is_flat(&b.left, names) && is_flat(&b.right, names)
        }
        Expr::UnaryOp(u) => u.op == UnaryOp::Not || is_flat(&u.operand, names),
        // Every comparison, chained or not, is a bool.
        Expr::Compare(_) => true,
        Expr::BoolOp(b) => b.values.iter().all(|v| is_flat(v, names)),
        Expr::If(x) => is_flat(&x.body, names) && is_flat(&x.orelse, names),
        Expr::FString(_) => true,
        Expr::Named(n) => is_flat(&n.value, names),
        Expr::Subscript(s) => {
            is_flat(&s.value, names)
                && match s.slice.as_ref() {
                    Expr::Slice(sl) => [&sl.lower, &sl.upper, &sl.step]
                        .into_iter()
                        .flatten()
                        .all(|x| is_flat(x, names)),
                    idx => is_flat(idx, names),
                }
        }
        Expr::Call(c) => match c.func.as_ref() {
            Expr::Name(f) => is_flat_builtin(f.id.as_str()) && names.is_builtin_call(f.id.as_str()),
            // A module function (`json.loads`) is never flat here: only methods are.
            Expr::Attribute(a) => {
                is_flat_method(a.attr.id.as_str())
                    && !matches!(a.value.as_ref(), Expr::Name(m) if matches!(m.id.as_str(), "json" | "re"))
            }
            _ => false,
        },
        _ => false,
    }
}

/// How a name is bound somewhere in a scope.
enum Binding<'a> {
    /// `x = e`.
    Value(&'a Expr),
    /// `x op= e`.
    Aug(Operator, &'a Expr),
    /// `for x in range(...)` or another iterable of flat elements the compiler iterates raw.
    Range,
    /// Anything else (parameters, `def`, unpacking, walrus, other `for` targets).
    Other,
}

/// The flat variables of a scope whose statements are `body`. `params` are the scope's parameters;
/// `is_range` says whether the compiler iterates a `for` iterable raw (`range(...)`, `s.split(...)`): its
/// elements are then flat.
pub(crate) fn infer(
    body: &[Stmt],
    params: &BTreeSet<String>,
    is_builtin_call: &dyn Fn(&str) -> bool,
    is_range: &dyn Fn(&Expr) -> bool,
) -> BTreeSet<String> {
    let mut bindings: Vec<(String, Binding)> = Vec::new();
    collect_bindings(body, is_range, &mut bindings);
    let mut excluded: BTreeSet<String> = params.clone();
    excluded.extend(nested_names(body));
    for (name, b) in &bindings {
        if matches!(b, Binding::Other) {
            excluded.insert(name.clone());
        }
    }
    let mut flat: BTreeSet<String> = bindings
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| !excluded.contains(n))
        .collect();
    // Greatest fixpoint: assume every candidate flat, drop those with a binding that is not, and re-check
    // only the bindings that mention a dropped name (linear in the plan, not quadratic).
    let mut users: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (_, b)) in bindings.iter().enumerate() {
        if let Binding::Value(e) | Binding::Aug(_, e) = b {
            let mut names = BTreeSet::new();
            each_child(e, &mut |c| {
                if let Expr::Name(n) = c {
                    names.insert(n.id.to_string());
                }
                true
            });
            for n in names {
                users.entry(n).or_default().push(i);
            }
        }
    }
    let mut work: Vec<usize> = (0..bindings.len()).collect();
    while let Some(i) = work.pop() {
        let (name, b) = &bindings[i];
        if !flat.contains(name) {
            continue;
        }
        let view = View {
            flat: &flat,
            is_builtin_call,
        };
        let ok = match b {
            Binding::Value(e) => is_flat(e, &view),
            Binding::Aug(op, e) => flat_operator(*op) && is_flat(e, &view),
            Binding::Range => true,
            Binding::Other => false,
        };
        if !ok {
            flat.remove(name);
            if let Some(us) = users.get(name) {
                work.extend(us.iter().copied());
            }
        }
    }
    flat
}

struct View<'a> {
    flat: &'a BTreeSet<String>,
    is_builtin_call: &'a dyn Fn(&str) -> bool,
}

impl Names for View<'_> {
    fn is_flat_name(&self, name: &str) -> bool {
        self.flat.contains(name)
    }
    fn is_builtin_call(&self, name: &str) -> bool {
        (self.is_builtin_call)(name)
    }
}

fn collect_bindings<'a>(
    body: &'a [Stmt],
    is_range: &dyn Fn(&Expr) -> bool,
    out: &mut Vec<(String, Binding<'a>)>,
) {
    let walrus = |e: &'a Expr, out: &mut Vec<(String, Binding<'a>)>| {
        let mut names = BTreeSet::new();
        super::scope::expr_walrus(e, &mut names);
        out.extend(names.into_iter().map(|n| (n, Binding::Other)));
    };
    for stmt in body {
        match stmt {
            Stmt::Assign(s) => {
                for t in &s.targets {
                    match t {
                        Expr::Name(n) => out.push((n.id.to_string(), Binding::Value(&s.value))),
                        other => {
                            let mut names = BTreeSet::new();
                            target_names(other, &mut names);
                            out.extend(names.into_iter().map(|n| (n, Binding::Other)));
                        }
                    }
                }
                walrus(&s.value, out);
            }
            Stmt::AugAssign(s) => {
                if let Expr::Name(n) = s.target.as_ref() {
                    out.push((n.id.to_string(), Binding::Aug(s.op, &s.value)));
                }
                walrus(&s.value, out);
            }
            Stmt::For(s) => {
                match s.target.as_ref() {
                    Expr::Name(n) if is_range(&s.iter) => {
                        out.push((n.id.to_string(), Binding::Range));
                    }
                    other => {
                        let mut names = BTreeSet::new();
                        target_names(other, &mut names);
                        out.extend(names.into_iter().map(|n| (n, Binding::Other)));
                    }
                }
                walrus(&s.iter, out);
                collect_bindings(&s.body, is_range, out);
            }
            Stmt::While(s) => {
                walrus(&s.test, out);
                collect_bindings(&s.body, is_range, out);
            }
            Stmt::If(s) => {
                walrus(&s.test, out);
                collect_bindings(&s.body, is_range, out);
                for c in &s.elif_else_clauses {
                    if let Some(t) = &c.test {
                        walrus(t, out);
                    }
                    collect_bindings(&c.body, is_range, out);
                }
            }
            Stmt::FunctionDef(f) => out.push((f.name.id.to_string(), Binding::Other)),
            Stmt::Expr(e) => walrus(&e.value, out),
            Stmt::Return(r) => {
                if let Some(v) = &r.value {
                    walrus(v, out);
                }
            }
            _ => {}
        }
    }
}

/// Every name read or written inside a nested `def` (defaults included), lambda or comprehension of
/// `body` that the nested scope does not bind itself: those reach the enclosing variable by name.
fn nested_names(body: &[Stmt]) -> BTreeSet<String> {
    struct Walk {
        /// Names bound by each nested scope being walked, innermost last.
        bound: Vec<BTreeSet<String>>,
        names: BTreeSet<String>,
    }
    impl Walk {
        fn nested(&mut self, bound: BTreeSet<String>, walk: impl FnOnce(&mut Self)) {
            self.bound.push(bound);
            walk(self);
            self.bound.pop();
        }
    }
    fn param_names(p: &ruff_python_ast::Parameters) -> BTreeSet<String> {
        p.iter().map(|a| a.name().id.to_string()).collect()
    }
    impl<'a> Visitor<'a> for Walk {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if let Stmt::FunctionDef(f) = stmt {
                // Defaults are evaluated where the `def` is: walk them in the current scope.
                for p in f.parameters.iter() {
                    if let Some(d) = p.default() {
                        self.visit_expr(d);
                    }
                }
                let mut bound = param_names(&f.parameters);
                super::scope::assigned_names(&f.body, &mut bound);
                self.nested(bound, |w| {
                    // Record the def's own name use as free in nothing: only its body matters here.
                    for s in &f.body {
                        w.visit_stmt(s);
                    }
                });
            } else {
                walk_stmt(self, stmt);
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Lambda(l) => {
                    let bound = l.parameters.as_deref().map(param_names).unwrap_or_default();
                    self.nested(bound, |w| w.visit_expr(&l.body));
                }
                Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
                    let generators = match expr {
                        Expr::ListComp(c) => &c.generators,
                        Expr::SetComp(c) => &c.generators,
                        Expr::DictComp(c) => &c.generators,
                        Expr::Generator(c) => &c.generators,
                        _ => return,
                    };
                    let mut bound = BTreeSet::new();
                    for g in generators {
                        target_names(&g.target, &mut bound);
                    }
                    self.nested(bound, |w| walk_expr(w, expr));
                }
                Expr::Name(n) => {
                    let name = n.id.as_str();
                    if !self.bound.is_empty() && !self.bound.iter().any(|b| b.contains(name)) {
                        self.names.insert(name.to_string());
                    }
                }
                _ => walk_expr(self, expr),
            }
        }
    }
    let mut w = Walk {
        bound: Vec::new(),
        names: BTreeSet::new(),
    };
    for s in body {
        w.visit_stmt(s);
    }
    w.names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat_of(src: &str) -> BTreeSet<String> {
        let m = ruff_python_parser::parse_module(src)
            .expect("test plans parse")
            .into_syntax();
        let is_range = |e: &Expr| matches!(e, Expr::Call(c) if matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == "range"));
        infer(&m.body, &BTreeSet::new(), &|_| true, &is_range)
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn scalars_computed_from_scalars_are_flat() {
        let src = "t = 0\nfor i in range(10):\n    t = t + i * 2\n    s = str(i)\n    b = i > 3\n";
        assert_eq!(flat_of(src), set(&["b", "i", "s", "t"]));
    }

    #[test]
    fn one_container_binding_makes_a_name_boxed() {
        // `x` is bound to a list once; `y` depends on `x`, so it goes too (fixpoint).
        let src = "x = 1\nif c:\n    x = [1]\ny = x + 1\nz = len(x)\n";
        assert_eq!(flat_of(src), set(&["z"]));
    }

    #[test]
    fn a_long_dependency_chain_is_followed_to_its_end() {
        // x0 is boxed by its last binding; every x_i depends on x_{i-1}, so none is flat, and `y` stays flat.
        let mut src = String::from("x0 = 1\ny = 2\n");
        for i in 1..3000 {
            src.push_str(&format!("x{i} = x{} + y\n", i - 1));
        }
        src.push_str("x0 = []\n");
        assert_eq!(flat_of(&src), set(&["y"]));
    }

    #[test]
    fn names_seen_by_nested_scopes_stay_boxed() {
        let src = "a = 1\nb = 2\nc = 3\nd = 4\ndef f():\n    return a\ng = lambda: b\nh = [c for q in range(3)]\n";
        assert_eq!(flat_of(src), set(&["d"]));
        // A name the nested scope binds itself is its own variable.
        let src = "k = 1\nv = 2\nw = 3\nx = [k for k in range(3)]\ny = lambda v: v\ndef f(w=w):\n    w = 2\n";
        assert_eq!(flat_of(src), set(&["k", "v", "w"]));
    }

    #[test]
    fn unpacking_walrus_and_other_loops_stay_boxed() {
        let src = "a, b = 1, 2\nif (c := 3):\n    pass\nfor d in [1]:\n    pass\ne = 1\ne += 2\nf = 1\nf **= 2\n";
        assert_eq!(flat_of(src), set(&["e"]));
    }

    #[test]
    fn method_and_tool_results() {
        let src = "s = get_text()\nl = s.lower()\nw = s.split()\nn = s.count(\"a\") + 1\n";
        assert_eq!(flat_of(src), set(&["l", "n"]));
    }
}
