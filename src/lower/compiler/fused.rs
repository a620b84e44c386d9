//! Fused idioms: a statement shape common in plans compiled to one prelude helper call where the general
//! rules write two or three (docs/lowering.md, "Speed"). Each helper makes the same checks in the same
//! order and gives the same labels as the calls it replaces, and falls back to exactly those calls where its
//! fast path does not apply; `tests/properties/fused_idioms.rs` compiles every corpus scenario and random plans with
//! and without them ([`super::Options::fused_idioms`]) and requires the same labels at every call.
//!
//! * `c[k] = c.get(k, d) + y` (a dict of counts): `_dinc`, for `_mg2`, `_addf` and `_sif`. Only where
//!   evaluating the two `c`s and `k`s once is evaluating them twice: `c` a local boxed name, `k` the same
//!   flat name or literal, `d` a literal or a name (evaluated where it was), and `y` a flat literal or a
//!   surely assigned flat name (evaluated before the lookup instead of after: it cannot raise).
//! * `x = a + b` under a control context (STRICT): `_addp`/`_addfp`, the addition and the assignment's join
//!   of `_pc` in one call.

use super::*;
use ruff_python_ast::{ExprSubscript, StmtAssign};

/// The parts of `c[k] = c.get(k, d) + y` ([`Compiler::increment`]).
pub(super) struct Increment<'s> {
    /// `c`.
    pub name: &'s str,
    /// `c[k]`.
    pub target: &'s ExprSubscript,
    pub key: &'s Expr,
    pub default: &'s Expr,
    /// `y`.
    pub addend: &'s Expr,
}

impl Compiler<'_> {
    /// Compiles `s` as a fused idiom if it is one; `false` (nothing compiled) otherwise.
    pub(super) fn fused_assign(&mut self, s: &StmtAssign, indent: usize) -> bool {
        if !self.fused {
            return false;
        }
        self.dict_increment(s, indent) || self.add_under_pc(s, indent)
    }

    /// `c[k] = c.get(k, d) + y`.
    fn dict_increment(&mut self, s: &StmtAssign, indent: usize) -> bool {
        let Some(inc) = self.increment(s) else {
            return false;
        };
        if !self.is_quiet_flat(inc.addend) {
            return false;
        }
        let (target, key, default, addend) = (inc.target, inc.key, inc.default, inc.addend);
        let line = self.line;
        let recv = self.expr(&target.value, "_pc");
        let k = self.flat(key, "_pc");
        let d = self.expr(default, "_pc");
        let y = self.flat(addend, "_pc");
        self.flush_pre(indent);
        self.emit(
            indent,
            format!(
                "_dinc({recv}, {}, {}, {d}, {}, {}, _pc, {line})",
                k.raw, k.label, y.raw, y.label
            ),
        );
        true
    }

    /// `s` as `c[k] = c.get(k, d) + y` where evaluating the two `c`s and `k`s once is evaluating them twice:
    /// `c` a local boxed name, `k` the same flat name or literal, `d` a literal or a name. What `y` may be is
    /// the caller's to check (the fused helper and the raw loop accept different ones).
    pub(super) fn increment<'s>(&self, s: &'s StmtAssign) -> Option<Increment<'s>> {
        let [Expr::Subscript(target)] = s.targets.as_slice() else {
            return None;
        };
        let Expr::BinOp(sum) = s.value.as_ref() else {
            return None;
        };
        let Expr::Call(get) = sum.left.as_ref() else {
            return None;
        };
        let Expr::Attribute(method) = get.func.as_ref() else {
            return None;
        };
        let (Expr::Name(c), Expr::Name(c2)) = (target.value.as_ref(), method.value.as_ref()) else {
            return None;
        };
        let name = c.id.as_str();
        let [key, default] = get.arguments.args.as_ref() else {
            return None;
        };
        let fits = sum.op == Operator::Add
            && method.attr.id.as_str() == "get"
            && get.arguments.keywords.is_empty()
            && name == c2.id.as_str()
            && self.is_local(name)
            && !self.is_shadow(name)
            && self.same_simple_key(&target.slice, key)
            && matches!(
                default,
                Expr::NumberLiteral(_)
                    | Expr::StringLiteral(_)
                    | Expr::BooleanLiteral(_)
                    | Expr::NoneLiteral(_)
                    | Expr::Name(_)
            );
        fits.then_some(Increment {
            name,
            target,
            key,
            default,
            addend: &sum.right,
        })
    }

    /// The same key twice, and one whose evaluation reads a flat name or is a literal (so evaluating it
    /// once gives what evaluating it twice would).
    pub(super) fn same_simple_key(&self, a: &Expr, b: &Expr) -> bool {
        match (a, b) {
            (Expr::Name(x), Expr::Name(y)) => x.id == y.id && self.is_shadow(x.id.as_str()),
            (Expr::StringLiteral(x), Expr::StringLiteral(y)) => {
                x.value.to_str() == y.value.to_str()
            }
            (Expr::NumberLiteral(x), Expr::NumberLiteral(y)) => match (&x.value, &y.value) {
                (Number::Int(i), Number::Int(j)) => i == j,
                _ => false,
            },
            _ => false,
        }
    }

    /// A flat value whose evaluation cannot raise or run anything: a literal, or a flat name surely
    /// assigned here.
    pub(super) fn is_quiet_flat(&self, e: &Expr) -> bool {
        match e {
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(_) => true,
                Number::Float(f) => f.is_finite(),
                _ => false,
            },
            Expr::StringLiteral(_) | Expr::BooleanLiteral(_) => true,
            Expr::Name(n) => {
                let frame = self.frame();
                let name = n.id.as_str();
                self.is_shadow(name)
                    && (frame.sure.contains(name)
                        || frame
                            .first_def
                            .get(name)
                            .is_some_and(|end| *end <= n.range().start().to_usize()))
            }
            _ => false,
        }
    }

    /// `x = a + b` to a boxed name, STRICT, where `_pc` may not be neutral: the general code would add,
    /// then join `_pc` in a second step (`assign`).
    fn add_under_pc(&mut self, s: &StmtAssign, indent: usize) -> bool {
        let [Expr::Name(target)] = s.targets.as_slice() else {
            return false;
        };
        let Expr::BinOp(sum) = s.value.as_ref() else {
            return false;
        };
        // A flat sum is computed raw (`expr` tries that first); only a boxed one reaches `_add`.
        if sum.op != Operator::Add
            || !self.strict
            || self.neutral()
            || self.is_shadow(target.id.as_str())
            || self.is_flat_expr(&s.value)
        {
            return false;
        }
        // What `expr` writes for `+` (expr.rs), with `_pc` joined inside.
        let l = self.expr(&sum.left, "_pc");
        let code = if self.is_flat_expr(&sum.right) {
            let r = self.flat(&sum.right, "_pc");
            format!("_addfp({l}, {}, {}, _pc)", r.raw, r.label)
        } else {
            let r = self.expr(&sum.right, "_pc");
            format!("_addp({l}, {r}, _pc)")
        };
        self.flush_pre(indent);
        self.emit(indent, format!("{} = {code}", mangle(target.id.as_str())));
        true
    }
}
