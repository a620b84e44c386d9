//! Labels known when the plan is compiled. Some flat values can only ever carry the literal label: a loop
//! counter over `range(10)`, `total = total + i * 2`, `str(i)`, a comparison of such values. For those the
//! lowered program need not compute a label at run time, and a branch or loop that depends only on them
//! cannot raise the program counter (`_inf` of the literal label is neutral: trusted, and every kind
//! unverified, which `_inf` clears). This module decides, before any code is emitted, which variables of
//! the module scope are such *constant* variables; the compiler then drops their label assignments and the
//! program-counter bookkeeping of the branches and loops that depend only on them (`docs/lowering.md`,
//! "Labels known at compile time").
//!
//! The rules, all conservative (anything they do not know is left to run time, which only costs speed):
//!
//! * A *constant expression* is a flat expression built only from literals, constant variables, operators,
//!   comparisons, the flat builtins and raw `str` methods, f-strings and subscripts, in exactly the forms
//!   the compiler writes out raw (`compiler::fast::try_flat`); its label is the join of literal labels,
//!   which is the literal label.
//! * A point of the module's code is *neutral* when `_pc` is known to be neutral there: the module starts
//!   neutral; the body of an `if` whose test is constant, or of a `for` over `range(...)` of constant
//!   arguments without `break`, `continue` or `return` in it, is as neutral as the statement; every other
//!   body is not; after a statement with no early exit in it the point is as neutral as before.
//! * A variable is constant if it is flat and every binding of it assigns a constant expression (a `for`
//!   target: over `range` of constant arguments), at a neutral point in STRICT (where assignments join
//!   `_pc`). This is a greatest fixpoint: dropping a variable can make a test non-constant, hence a point
//!   non-neutral, hence drop more.
//!
//! Plan functions, lambdas and comprehensions are other scopes, called under their caller's `_pc`: nothing
//! in them is constant. The compiler checks, where it relies on a constant label, that the label code it
//! wrote folds to the literal label, and rejects the plan with an internal error if it does not (fail
//! closed: a wrong constant would be a dropped label).

use std::collections::{BTreeMap, BTreeSet};

use ruff_python_ast::{ConversionFlag, Expr, FStringPart, InterpolatedStringElement, Number, Stmt};

use super::flat::{Names, flat_operator, is_flat, is_flat_builtin, is_raw_method};
use super::scope::{chain_escapes, escapes, if_clauses};

/// The facts the rules read about names, besides the flat set.
pub(crate) struct Scope<'a> {
    /// The flat variables of the module scope (`flat::infer`).
    pub flat: &'a BTreeSet<String>,
    /// A call of this name reaches the builtin.
    pub is_builtin_call: &'a dyn Fn(&str) -> bool,
    /// Whether the range is not shadowed by a plan variable.
    pub range_is_builtin: bool,
    /// STRICT: assignments join `_pc`, so bindings must be at neutral points.
    pub strict: bool,
}

/// The constant variables of the module scope whose statements are `body`.
///
/// Whether a binding keeps its variable constant depends on the names its value and (STRICT) the tests and
/// ranges around it read, and on nothing else of `known`: each binding is collected once with its verdict
/// for the forms alone and the flat names it depends on, then a worklist drops names (linear in the plan,
/// like `flat::infer`; re-walking the plan per dropped name was quadratic: 6 s for a 3,000-line chain).
pub(crate) fn infer(body: &[Stmt], scope: &Scope) -> BTreeSet<String> {
    let mut w = Walk {
        scope,
        guards: Vec::new(),
        bindings: Vec::new(),
    };
    w.block(body, true);
    let mut known = scope.flat.clone();
    let mut users: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut work = Vec::new();
    for (i, b) in w.bindings.iter().enumerate() {
        for d in &b.deps {
            users.entry(d.as_str()).or_default().push(i);
        }
        if !b.forms_ok {
            work.push(i);
        }
    }
    while let Some(i) = work.pop() {
        let name = w.bindings[i].name.as_str();
        if known.remove(name)
            && let Some(us) = users.get(name)
        {
            work.extend(us.iter().copied());
        }
    }
    known
}

/// One binding of a flat variable: constant if its forms allow it and every name in `deps` is constant.
struct Binding {
    name: String,
    forms_ok: bool,
    deps: BTreeSet<String>,
}

/// What makes the code being walked neutral: a test that must be constant, or a range loop's iterable.
enum Guard<'e> {
    Test(&'e Expr),
    Range(&'e Expr),
}

struct Walk<'a, 'b, 'e> {
    scope: &'b Scope<'a>,
    /// The tests and ranges the current point's neutrality depends on, outermost first.
    guards: Vec<Guard<'e>>,
    bindings: Vec<Binding>,
}

impl<'e> Walk<'_, '_, 'e> {
    /// Records a binding of `name` to a value whose forms are `ok` and that reads `value`'s names, at a
    /// point that is `neutral` (structurally) under the current guards.
    fn bind(&mut self, name: &str, ok: bool, value: &[&Expr], neutral: bool) {
        if !self.scope.flat.contains(name) {
            return;
        }
        let mut deps = BTreeSet::new();
        for e in value {
            self.names_in(e, &mut deps);
        }
        let mut forms_ok = ok;
        if self.scope.strict {
            forms_ok &= neutral;
            for g in &self.guards {
                let (e, g_ok) = match g {
                    Guard::Test(e) => (*e, is_constant(e, self.scope.flat, self.scope)),
                    Guard::Range(e) => (*e, constant_range(e, self.scope.flat, self.scope)),
                };
                forms_ok &= g_ok;
                self.names_in(e, &mut deps);
            }
        }
        self.bindings.push(Binding {
            name: name.to_string(),
            forms_ok,
            deps,
        });
    }

    /// The flat names `e` reads (a superset of what its constancy depends on).
    fn names_in(&self, e: &Expr, out: &mut BTreeSet<String>) {
        super::scope::each_child(e, &mut |c| {
            if let Expr::Name(n) = c
                && self.scope.flat.contains(n.id.as_str())
            {
                out.insert(n.id.to_string());
            }
            true
        });
    }

    /// `e` is constant when every flat name it reads is (its forms checked against the flat set).
    fn forms(&self, e: &Expr) -> bool {
        is_constant(e, self.scope.flat, self.scope)
    }

    /// Walks a block entered at a point that is `neutral` (structurally: no `while` or early exit around
    /// it) under the current guards.
    fn block(&mut self, body: &'e [Stmt], mut neutral: bool) {
        for stmt in body {
            match stmt {
                Stmt::Assign(s) => {
                    // With several targets the compiler assigns one boxed value to each (its label is
                    // read at run time): only `x = e` writes a flat value out.
                    let ok = s.targets.len() == 1 && self.forms(&s.value);
                    for t in &s.targets {
                        if let Expr::Name(n) = t {
                            self.bind(n.id.as_str(), ok, &[&s.value], neutral);
                        }
                    }
                }
                Stmt::AugAssign(s) => {
                    if let Expr::Name(n) = s.target.as_ref() {
                        // `x op= e` reads `x` too.
                        let ok = flat_operator(s.op) && self.forms(&s.value);
                        self.bind(n.id.as_str(), ok, &[&s.value, &s.target], neutral);
                    }
                }
                Stmt::For(s) => {
                    let exits = escapes(&s.body);
                    let exits = exits.loop_exit || exits.ret;
                    let over_constant = constant_range(&s.iter, self.scope.flat, self.scope);
                    let inner = neutral && over_constant && !exits;
                    self.guards.push(Guard::Range(&s.iter));
                    if let Expr::Name(n) = s.target.as_ref() {
                        self.bind(n.id.as_str(), over_constant, &[&s.iter], inner);
                    }
                    self.block(&s.body, inner);
                    self.guards.pop();
                    neutral &= !exits;
                }
                Stmt::While(s) => {
                    self.block(&s.body, false);
                    let exits = escapes(&s.body);
                    neutral &= !(exits.loop_exit || exits.ret);
                }
                Stmt::If(s) => {
                    let clauses = if_clauses(s);
                    self.chain(&s.test, &s.body, &clauses, neutral);
                    let exits = chain_escapes(&s.body, &clauses);
                    neutral &= !(exits.loop_exit || exits.ret);
                }
                // Another scope: its body never binds a module variable that is flat (`flat::infer` keeps
                // every name a nested scope mentions boxed).
                _ => {}
            }
        }
    }

    /// An `if`/`elif`/`else` chain as the compiler lowers it: each `elif` is an `if` in the else branch,
    /// under every test before it.
    fn chain(
        &mut self,
        test: &'e Expr,
        body: &'e [Stmt],
        rest: &[(Option<&'e Expr>, &'e [Stmt])],
        neutral: bool,
    ) {
        self.guards.push(Guard::Test(test));
        self.block(body, neutral);
        if let Some(((next_test, next_body), tail)) = rest.split_first() {
            match next_test {
                Some(t) => self.chain(t, next_body, tail, neutral),
                None => self.block(next_body, neutral),
            }
        }
        self.guards.pop();
    }
}

/// `range(a[, b[, c]])` of constant arguments, as the compiler iterates it raw.
pub(crate) fn constant_range(iter: &Expr, known: &BTreeSet<String>, scope: &Scope) -> bool {
    match iter {
        Expr::Call(c) => {
            matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == "range")
                && scope.range_is_builtin
                && c.arguments.keywords.is_empty()
                && (1..=3).contains(&c.arguments.args.len())
                && c.arguments
                    .args
                    .iter()
                    .all(|a| is_constant(a, known, scope))
        }
        _ => false,
    }
}

struct FlatNames<'a> {
    scope: &'a Scope<'a>,
}

impl Names for FlatNames<'_> {
    fn is_flat_name(&self, name: &str) -> bool {
        self.scope.flat.contains(name)
    }
    fn is_builtin_call(&self, name: &str) -> bool {
        (self.scope.is_builtin_call)(name)
    }
}

/// A constant expression: flat, and in one of the forms whose label the compiler writes out as the join
/// of its parts' labels, every part constant.
pub(crate) fn is_constant(e: &Expr, known: &BTreeSet<String>, scope: &Scope) -> bool {
    let names = FlatNames { scope };
    if !is_flat(e, &names) {
        return false;
    }
    let c = |x: &Expr| is_constant(x, known, scope);
    match e {
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(_) => true,
            Number::Float(f) => f.is_finite(),
            _ => false,
        },
        Expr::StringLiteral(_) | Expr::BooleanLiteral(_) | Expr::NoneLiteral(_) => true,
        Expr::Name(n) => known.contains(n.id.as_str()),
        Expr::BinOp(b) => flat_operator(b.op) && c(&b.left) && c(&b.right),
        Expr::UnaryOp(u) => c(&u.operand),
        Expr::Compare(cmp) => cmp.ops.len() == 1 && c(&cmp.left) && c(&cmp.comparators[0]),
        Expr::Call(call) if call.arguments.keywords.is_empty() => match call.func.as_ref() {
            Expr::Name(f) => {
                let name = f.id.as_str();
                is_flat_builtin(name)
                    && name != "round"
                    && (scope.is_builtin_call)(name)
                    && call.arguments.args.len() == 1
                    && c(&call.arguments.args[0])
            }
            Expr::Attribute(a) => {
                is_raw_method(a.attr.id.as_str())
                    && c(&a.value)
                    && call.arguments.args.iter().all(c)
            }
            _ => false,
        },
        Expr::FString(f) => f.value.iter().all(|part| match part {
            FStringPart::Literal(_) => true,
            FStringPart::FString(fs) => fs.elements.iter().all(|el| match el {
                InterpolatedStringElement::Literal(_) => true,
                InterpolatedStringElement::Interpolation(i) => {
                    i.debug_text.is_none()
                        && i.format_spec.is_none()
                        && i.conversion != ConversionFlag::Ascii
                        && c(&i.expression)
                }
            }),
        }),
        Expr::Subscript(s) => {
            !matches!(s.slice.as_ref(), Expr::Slice(_)) && c(&s.value) && c(&s.slice)
        }
        _ => false,
    }
}

/// Whether label code the compiler wrote is the literal label: made only of `_LIT`, `_UV`, the labels of
/// constant variables (`x_l`), `|` and parentheses. The compiler calls it wherever it relies on a constant.
/// The code is split on those delimiters only, so a plan name in any script (`ߚ_l`) stays one word.
pub(crate) fn folds_to_literal(code: &str, known: &BTreeSet<String>) -> bool {
    code.split([' ', '|', '(', ')'])
        .filter(|word| !word.is_empty())
        .all(|word| {
            word == "_LIT"
                || word == "_UV"
                || word
                    .strip_suffix("_l")
                    .is_some_and(|name| known.contains(name))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constants(src: &str, strict: bool) -> BTreeSet<String> {
        let m = ruff_python_parser::parse_module(src)
            .expect("test plans parse")
            .into_syntax();
        let is_range = |e: &Expr| matches!(e, Expr::Call(c) if matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == "range"));
        let flat = super::super::flat::infer(&m.body, &BTreeSet::new(), &|_| true, &is_range);
        let builtin = |n: &str| n != "get_text";
        infer(
            &m.body,
            &Scope {
                flat: &flat,
                is_builtin_call: &builtin,
                range_is_builtin: true,
                strict,
            },
        )
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn counters_and_arithmetic_on_literals_are_constant() {
        let src = "t = 0\nfor i in range(10):\n    t = t + i * 2\n    s = str(i)\n    if i % 3 == 0:\n        u = f'{s}!'\n";
        assert_eq!(constants(src, true), set(&["i", "s", "t", "u"]));
    }

    #[test]
    fn data_spreads_through_bindings_and_branches() {
        // `n` depends on a tool result; `k` is assigned under a branch on `n` (STRICT joins the pc), `j`
        // inside a loop over a range of `n`.
        let src = "d = get_text()\nn = len(d)\nk = 0\nif n > 3:\n    k = 1\nfor j in range(n):\n    pass\nm = k + 1\nz = 2\n";
        assert_eq!(constants(src, true), set(&["z"]));
        // NORMAL never joins the pc into values: `k` and `m` stay constant there.
        assert_eq!(constants(src, false), set(&["k", "m", "z"]));
    }

    #[test]
    fn early_exits_and_while_loops_make_their_bodies_unknown() {
        let src = "a = 0\nfor i in range(5):\n    if i == 2:\n        break\n    a = i\nb = 1\nwhile b < 3:\n    b = b + 1\nc = 2\n";
        // The loop has a `break`: its body (and `i`, `a`) are not neutral, nor is anything after it.
        assert_eq!(constants(src, true), set(&[]));
        let src = "b = 1\nwhile b < 3:\n    b = b + 1\nc = 2\n";
        assert_eq!(constants(src, true), set(&["c"]));
    }

    #[test]
    fn a_long_chain_is_followed_to_its_end() {
        // x0 is last bound to data; every x_i depends on x_{i-1}, and `k` is assigned under a test on the
        // last of them. (Walking the plan again per dropped name took 6 s here; the worklist is linear.)
        let mut src = String::from("x0 = 1\ny = 2\nk = 0\n");
        for i in 1..3000 {
            src.push_str(&format!("x{i} = x{} + y\n", i - 1));
        }
        src.push_str("x0 = len(get_text())\nif x2999 > 1:\n    k = 1\n");
        assert_eq!(constants(&src, true), set(&["y"]));
        assert_eq!(constants(&src, false), set(&["k", "y"]));
    }

    #[test]
    fn several_targets_are_left_to_run_time() {
        // Found by fuzzing: `a = a = a` was refused with Z098 (the compiler boxes such a value).
        assert_eq!(constants("p = q = 3\nr = 1\n", true), set(&["r"]));
    }

    #[test]
    fn only_the_written_out_forms_fold() {
        let known = set(&["i", "t"]);
        assert!(folds_to_literal("(t_l | i_l | _UV)", &known));
        assert!(folds_to_literal("_LIT", &known));
        assert!(!folds_to_literal("(t_l | j_l | _UV)", &known));
        assert!(!folds_to_literal("_f3[1]", &known));
        assert!(!folds_to_literal("_pc", &known));
        assert!(!folds_to_literal("_LITX", &known));
        assert!(!folds_to_literal("_l", &known));
        assert!(!folds_to_literal("(t_l|_f3[1])", &known));
        // Plan names outside ASCII (found by fuzzing: `ߚ -= 1` was refused with Z098).
        assert!(folds_to_literal("(ߚ_l | _UV)", &set(&["ߚ"])));
        assert!(!folds_to_literal("(ߚ_l | _UV)", &known));
    }
}
