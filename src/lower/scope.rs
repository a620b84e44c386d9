//! Static facts the compiler needs about a block of statements: which names it may assign, which containers
//! it may mutate, and whether it can leave early. All of them stop at nested `def`s, lambdas and
//! comprehensions, which have scopes of their own.

use std::collections::BTreeSet;

use ruff_python_ast::{Expr, Stmt};

/// Whether a method mutates its receiver (a receiver of one is raised before a branch that may call it).
pub fn is_mutating_method(name: &str) -> bool {
    crate::plan::catalogue::method_row(name).is_some_and(|m| m.mutation.is_some())
}

/// Names a block may bind (assignment and augmented targets, `for` targets, walrus targets, `def` names).
pub fn assigned_names(body: &[Stmt], out: &mut BTreeSet<String>) {
    for stmt in body {
        match stmt {
            Stmt::Assign(s) => {
                for t in &s.targets {
                    target_names(t, out);
                }
                expr_walrus(&s.value, out);
            }
            Stmt::AugAssign(s) => {
                target_names(&s.target, out);
                expr_walrus(&s.value, out);
            }
            Stmt::For(s) => {
                target_names(&s.target, out);
                expr_walrus(&s.iter, out);
                assigned_names(&s.body, out);
            }
            Stmt::While(s) => {
                expr_walrus(&s.test, out);
                assigned_names(&s.body, out);
            }
            Stmt::If(s) => {
                expr_walrus(&s.test, out);
                assigned_names(&s.body, out);
                for c in &s.elif_else_clauses {
                    if let Some(t) = &c.test {
                        expr_walrus(t, out);
                    }
                    assigned_names(&c.body, out);
                }
            }
            Stmt::FunctionDef(f) => {
                out.insert(f.name.id.to_string());
            }
            Stmt::Expr(e) => expr_walrus(&e.value, out),
            Stmt::Return(r) => {
                if let Some(v) = &r.value {
                    expr_walrus(v, out);
                }
            }
            _ => {}
        }
    }
}

/// Names an assignment target binds (`a`, `a, b`, `[a, *b]`).
pub(crate) fn target_names(t: &Expr, out: &mut BTreeSet<String>) {
    match t {
        Expr::Name(n) => {
            out.insert(n.id.to_string());
        }
        Expr::Tuple(t) => t.elts.iter().for_each(|e| target_names(e, out)),
        Expr::List(t) => t.elts.iter().for_each(|e| target_names(e, out)),
        Expr::Starred(s) => target_names(&s.value, out),
        _ => {}
    }
}

/// Walrus targets inside an expression (not inside lambdas or comprehensions, where they are rejected).
pub(crate) fn expr_walrus(e: &Expr, out: &mut BTreeSet<String>) {
    each_child(e, &mut |c| {
        if let Expr::Named(n) = c {
            target_names(&n.target, out);
        }
        true
    });
}

/// Visits `e` and its sub-expressions, not descending into lambdas or comprehensions; `f` returns whether
/// to descend into the visited node.
pub fn each_child(e: &Expr, f: &mut dyn FnMut(&Expr) -> bool) {
    if !f(e) {
        return;
    }
    match e {
        Expr::BoolOp(x) => x.values.iter().for_each(|v| each_child(v, f)),
        Expr::Named(x) => each_child(&x.value, f),
        Expr::BinOp(x) => {
            each_child(&x.left, f);
            each_child(&x.right, f);
        }
        Expr::UnaryOp(x) => each_child(&x.operand, f),
        Expr::If(x) => {
            each_child(&x.test, f);
            each_child(&x.body, f);
            each_child(&x.orelse, f);
        }
        Expr::Dict(x) => {
            for item in &x.items {
                if let Some(k) = &item.key {
                    each_child(k, f);
                }
                each_child(&item.value, f);
            }
        }
        Expr::Set(x) => x.elts.iter().for_each(|v| each_child(v, f)),
        Expr::List(x) => x.elts.iter().for_each(|v| each_child(v, f)),
        Expr::Tuple(x) => x.elts.iter().for_each(|v| each_child(v, f)),
        Expr::Compare(x) => {
            each_child(&x.left, f);
            x.comparators.iter().for_each(|v| each_child(v, f));
        }
        Expr::Call(x) => {
            each_child(&x.func, f);
            x.arguments.args.iter().for_each(|v| each_child(v, f));
            x.arguments
                .keywords
                .iter()
                .for_each(|k| each_child(&k.value, f));
        }
        Expr::FString(x) => {
            for part in x.value.iter() {
                if let ruff_python_ast::FStringPart::FString(fs) = part {
                    for el in fs.elements.iter() {
                        if let ruff_python_ast::InterpolatedStringElement::Interpolation(i) = el {
                            each_child(&i.expression, f);
                        }
                    }
                }
            }
        }
        Expr::Attribute(x) => each_child(&x.value, f),
        Expr::Subscript(x) => {
            each_child(&x.value, f);
            each_child(&x.slice, f);
        }
        Expr::Slice(x) => {
            for v in [&x.lower, &x.upper, &x.step].into_iter().flatten() {
                each_child(v, f);
            }
        }
        Expr::Starred(x) => each_child(&x.value, f),
        _ => {}
    }
}

/// Receivers of mutations in a block: `x` in `x.append(..)`, `x[k] = v`, `x[k] += v`, nested ones included.
pub fn mutation_receivers<'a>(body: &'a [Stmt], out: &mut Vec<&'a Expr>) {
    for stmt in body {
        match stmt {
            Stmt::Assign(s) => {
                for t in &s.targets {
                    subscript_receivers(t, out);
                }
                expr_receivers(&s.value, out);
            }
            Stmt::AugAssign(s) => {
                subscript_receivers(&s.target, out);
                if let Expr::Name(_) = s.target.as_ref() {
                    // `x += [..]` extends a list in place.
                    out.push(&s.target);
                }
                expr_receivers(&s.value, out);
            }
            Stmt::For(s) => {
                expr_receivers(&s.iter, out);
                mutation_receivers(&s.body, out);
            }
            Stmt::While(s) => {
                expr_receivers(&s.test, out);
                mutation_receivers(&s.body, out);
            }
            Stmt::If(s) => {
                expr_receivers(&s.test, out);
                mutation_receivers(&s.body, out);
                for c in &s.elif_else_clauses {
                    if let Some(t) = &c.test {
                        expr_receivers(t, out);
                    }
                    mutation_receivers(&c.body, out);
                }
            }
            Stmt::Expr(e) => expr_receivers(&e.value, out),
            Stmt::Return(r) => {
                if let Some(v) = &r.value {
                    expr_receivers(v, out);
                }
            }
            _ => {}
        }
    }
}

fn subscript_receivers<'a>(t: &'a Expr, out: &mut Vec<&'a Expr>) {
    match t {
        Expr::Subscript(s) => out.push(&s.value),
        Expr::Tuple(t) => t.elts.iter().for_each(|e| subscript_receivers(e, out)),
        Expr::List(t) => t.elts.iter().for_each(|e| subscript_receivers(e, out)),
        _ => {}
    }
}

fn expr_receivers<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    // A small explicit walk (each_child's callback cannot hand out borrows of the tree).
    if let Expr::Call(c) = e
        && let Expr::Attribute(a) = c.func.as_ref()
        && is_mutating_method(a.attr.id.as_str())
    {
        out.push(&a.value);
    }
    match e {
        Expr::Call(c) => {
            expr_receivers(&c.func, out);
            c.arguments.args.iter().for_each(|v| expr_receivers(v, out));
            c.arguments
                .keywords
                .iter()
                .for_each(|k| expr_receivers(&k.value, out));
        }
        Expr::Attribute(a) => expr_receivers(&a.value, out),
        Expr::BoolOp(x) => x.values.iter().for_each(|v| expr_receivers(v, out)),
        Expr::Named(x) => expr_receivers(&x.value, out),
        Expr::BinOp(x) => {
            expr_receivers(&x.left, out);
            expr_receivers(&x.right, out);
        }
        Expr::UnaryOp(x) => expr_receivers(&x.operand, out),
        Expr::If(x) => {
            expr_receivers(&x.test, out);
            expr_receivers(&x.body, out);
            expr_receivers(&x.orelse, out);
        }
        Expr::List(x) => x.elts.iter().for_each(|v| expr_receivers(v, out)),
        Expr::Tuple(x) => x.elts.iter().for_each(|v| expr_receivers(v, out)),
        Expr::Set(x) => x.elts.iter().for_each(|v| expr_receivers(v, out)),
        Expr::Dict(x) => x.items.iter().for_each(|i| {
            if let Some(k) = &i.key {
                expr_receivers(k, out);
            }
            expr_receivers(&i.value, out);
        }),
        Expr::Compare(x) => {
            expr_receivers(&x.left, out);
            x.comparators.iter().for_each(|v| expr_receivers(v, out));
        }
        Expr::Subscript(x) => {
            expr_receivers(&x.value, out);
            expr_receivers(&x.slice, out);
        }
        // Comprehensions and lambdas run in helper functions: their mutations are checked by the
        // no-sensitive-upgrade rule at run time.
        _ => {}
    }
}

/// What a block can do to leave early.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Escapes {
    /// `break` or `continue` that leaves the innermost enclosing loop.
    pub loop_exit: bool,
    /// `return`.
    pub ret: bool,
}

/// The `elif` and `else` clauses of an `if`, as (test, body); `else` has no test.
pub fn if_clauses(s: &ruff_python_ast::StmtIf) -> Vec<(Option<&Expr>, &[Stmt])> {
    s.elif_else_clauses
        .iter()
        .map(|c| (c.test.as_ref(), c.body.as_slice()))
        .collect()
}

/// Early exits in any branch of an `if` chain (its body, then its `elif`/`else` clauses).
pub fn chain_escapes(body: &[Stmt], rest: &[(Option<&Expr>, &[Stmt])]) -> Escapes {
    let mut e = escapes(body);
    for (_, b) in rest {
        let x = escapes(b);
        e.loop_exit |= x.loop_exit;
        e.ret |= x.ret;
    }
    e
}

/// Early exits in a block: break/continue not inside a nested loop, return not inside a nested def.
pub fn escapes(body: &[Stmt]) -> Escapes {
    let mut e = Escapes::default();
    for stmt in body {
        match stmt {
            Stmt::Break(_) | Stmt::Continue(_) => e.loop_exit = true,
            Stmt::Return(_) => e.ret = true,
            Stmt::If(s) => {
                let mut all = vec![escapes(&s.body)];
                all.extend(s.elif_else_clauses.iter().map(|c| escapes(&c.body)));
                for x in all {
                    e.loop_exit |= x.loop_exit;
                    e.ret |= x.ret;
                }
            }
            Stmt::For(s) => e.ret |= escapes(&s.body).ret,
            Stmt::While(s) => e.ret |= escapes(&s.body).ret,
            _ => {}
        }
    }
    e
}
