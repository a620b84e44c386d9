//! Raw containers: a plan-built dict that only a loop's counting idiom touches lives raw inside that loop,
//! its labels beside it, exact per element (docs/lowering.md, "Raw containers"; issue #40's lever 2).
//!
//! Inside the loop, `c[k] = c.get(k, d) + y` (the shape `fused.rs` compiles to `_dinc`) becomes inline code
//! on three plain dicts, raw key to raw value, to the key's box and to the value's label, and two plain
//! variables for the box label and the structure label: no helper call, no boxed pair per element. The box
//! is unpacked before the loop and written back after it (in place, so every holder of the box sees it).
//!
//! The escape analysis ([`Compiler::raw_region`]) makes sure nothing can see the box while it is stale:
//! * module scope, a `for` statement at the module's top level, without `else`;
//! * every binding of `c` in the plan is a dict display, and one precedes the loop at the top level (so `c`
//!   is a dict when the loop starts);
//! * outside the loop, `c` is only read where the box cannot be captured: a method's receiver, a subscript's
//!   value, a comparison's operand, an argument of `len`/`sorted`/`list`/`sum`/`max`/`min`/`str`/`bool`;
//!   no function, lambda or comprehension mentions it; so no other name, container, tool or function
//!   ever holds the box;
//! * inside the loop, `c` appears only in idiom statements directly in the body.
//!
//! Guarded like the constant labels: after compiling the loop, the compiler checks that its code does not
//! name the box (`c_`) between unpacking and writing back; if it does, the analysis and the code disagree
//! and the plan is refused with `Z098` rather than run on a stale box. Each idiom makes the checks of
//! `_dinc` in the same order with the same labels; `tests/properties/raw_containers.rs` compares the option on and off.

use ruff_python_ast::StmtAssign;
use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};

use super::*;

/// The plain variables a raw dict lives in during its loop.
#[derive(Clone)]
pub(super) struct RawDict {
    /// The box (`c_[0]`): written back after the loop.
    pub(super) boxed: String,
    /// The box label (`c_[1]`): constant during the loop.
    pub(super) label: String,
    /// The structure label (`c_[0][2]`).
    pub(super) structure: String,
    /// Raw key → raw value.
    pub(super) values: String,
    /// Raw key → `(raw key as last written, (key label, value label))`: the key's box and the value's
    /// label, in one entry so the steady path writes one.
    pub(super) entries: String,
    /// The steady path's cache, where the loop may take it ([`Steady`]).
    pub(super) steady: Option<Steady>,
}

/// The steady path of a raw counting loop (docs/lowering.md, "Raw containers"; issue #40's lever 3).
///
/// Once a count has run the general way with key label `K` under control context `P`, the next count with
/// the same `K` and `P` changes no label but the value's: the structure already holds `K` and `P` (so its
/// update and the no-sensitive-upgrade check are no-ops), `ch` is what it was, the addition takes the raw
/// path, and the value's label is `C = ch | d's label | y's label | _UV (| P, STRICT)`. The loop caches
/// `(K, P)` and `(K, C)` after each general count and, while they match, only adds and stores the pair.
///
/// It is taken only where that is exact whatever the data (checked by [`Compiler::raw_steady`] and at the
/// loop's start):
/// * the loop has one counting statement on the dict, so only it changes the structure, and only on its
///   general path (which refreshes the cache);
/// * `d` and `y` are literals of one type among `int`, `float` and `str` and the dict is empty when the loop
///   starts, so every value is of that type and the addition always takes the raw path (`_dinc`'s type
///   test passes), and `d`'s and `y`'s labels are `_LIT`;
/// * every value label in the dict is then within `C`: each was `_LIT` (within `C`) or set by an earlier count,
///   whose `ch` only held labels the structure has gathered since (the structure only grows, `ch` is its
///   normalisation with the box label and `K`, and normalising only sets or clears `_UV`, which `C` holds);
///   so `al | C` is `C`.
#[derive(Clone)]
pub(super) struct Steady {
    /// Whether the loop may take the steady path (the dict was empty when it started).
    pub(super) ok: String,
    /// The key label `K` of the cached count (`None` before the first).
    pub(super) key: String,
    /// The control context `P` of the cached count.
    pub(super) pc: String,
    /// `(K, C)`: the key label and the value label every steady count stores.
    pub(super) pair: String,
}

/// Builtins that never return their argument itself (a new value, or an element or count of it).
const NON_CAPTURING_BUILTINS: &[&str] =
    &["len", "sorted", "list", "sum", "max", "min", "str", "bool"];

/// Whether `name` occurs anywhere in `e`.
fn mentions(e: &Expr, name: &str) -> bool {
    let mut found = false;
    each_child(e, &mut |c| {
        if let Expr::Name(n) = c
            && n.id.as_str() == name
        {
            found = true;
        }
        !found
    });
    found || mentions_deep(e, name)
}

/// The same through every node kind (`each_child` does not enter lambdas and comprehensions).
fn mentions_deep(e: &Expr, name: &str) -> bool {
    let mut f = Find { name, found: false };
    f.visit_expr(e);
    f.found
}

/// Whether `name` occurs anywhere in `s`, as a name or as the name of a function it defines.
fn stmt_mentions(s: &Stmt, name: &str) -> bool {
    let mut f = Find { name, found: false };
    f.visit_stmt(s);
    f.found
}

/// Looks for `name` through every node kind.
struct Find<'n> {
    name: &'n str,
    found: bool,
}

impl<'b> Visitor<'b> for Find<'_> {
    fn visit_expr(&mut self, e: &'b Expr) {
        if let Expr::Name(n) = e
            && n.id.as_str() == self.name
        {
            self.found = true;
        }
        walk_expr(self, e);
    }

    fn visit_stmt(&mut self, s: &'b Stmt) {
        if let Stmt::FunctionDef(f) = s
            && f.name.id.as_str() == self.name
        {
            self.found = true;
        }
        walk_stmt(self, s);
    }
}

/// Checks every use of `name` in the plan: false where one could capture the box or rebind it to
/// something that is not a dict display.
struct Uses<'c, 'n> {
    name: &'n str,
    ok: bool,
    builtin: &'c dyn Fn(&str) -> bool,
}

impl<'b> Visitor<'b> for Uses<'_, '_> {
    fn visit_stmt(&mut self, s: &'b Stmt) {
        match s {
            Stmt::FunctionDef(_) => {
                if stmt_mentions(s, self.name) {
                    self.ok = false;
                }
            }
            Stmt::Assign(a) => {
                for t in &a.targets {
                    match t {
                        Expr::Name(n) if n.id.as_str() == self.name => {
                            if !matches!(a.value.as_ref(), Expr::Dict(_)) {
                                self.ok = false;
                            }
                        }
                        Expr::Subscript(sub) if is_name(&sub.value, self.name) => {
                            self.visit_expr(&sub.slice)
                        }
                        other => self.visit_expr(other),
                    }
                }
                self.visit_expr(&a.value);
            }
            Stmt::AugAssign(a) => {
                match a.target.as_ref() {
                    Expr::Subscript(sub) if is_name(&sub.value, self.name) => {
                        self.visit_expr(&sub.slice)
                    }
                    other => self.visit_expr(other),
                }
                self.visit_expr(&a.value);
            }
            _ => walk_stmt(self, s),
        }
    }

    fn visit_expr(&mut self, e: &'b Expr) {
        match e {
            Expr::Name(n) if n.id.as_str() == self.name => self.ok = false,
            Expr::Call(call) => {
                match call.func.as_ref() {
                    Expr::Attribute(a) if is_name(&a.value, self.name) => {}
                    Expr::Name(f)
                        if NON_CAPTURING_BUILTINS.contains(&f.id.as_str())
                            && (self.builtin)(f.id.as_str()) =>
                    {
                        for a in call.arguments.args.iter() {
                            if !is_name(a, self.name) {
                                self.visit_expr(a);
                            }
                        }
                        for k in call.arguments.keywords.iter() {
                            self.visit_expr(&k.value);
                        }
                        return;
                    }
                    f => self.visit_expr(f),
                }
                for a in call.arguments.args.iter() {
                    self.visit_expr(a);
                }
                for k in call.arguments.keywords.iter() {
                    self.visit_expr(&k.value);
                }
            }
            Expr::Subscript(sub) if is_name(&sub.value, self.name) => self.visit_expr(&sub.slice),
            Expr::Compare(c) => {
                for x in std::iter::once(c.left.as_ref()).chain(c.comparators.iter()) {
                    if !is_name(x, self.name) {
                        self.visit_expr(x);
                    }
                }
            }
            Expr::Lambda(_)
            | Expr::ListComp(_)
            | Expr::SetComp(_)
            | Expr::DictComp(_)
            | Expr::Generator(_) => {
                if mentions_deep(e, self.name) {
                    self.ok = false;
                }
            }
            _ => walk_expr(self, e),
        }
    }
}

fn is_name(e: &Expr, name: &str) -> bool {
    matches!(e, Expr::Name(n) if n.id.as_str() == name)
}

impl Compiler<'_> {
    /// The dict a top-level `for` loop may keep raw, if any (the rules in the module comment).
    pub(super) fn raw_region(
        &self,
        target: &Expr,
        iter: &Expr,
        body: &[Stmt],
        indent: usize,
        start: usize,
    ) -> Option<String> {
        if !self.raw_containers || self.frames.len() != 1 || indent != 0 {
            return None;
        }
        let candidate = body.iter().find_map(|s| match s {
            Stmt::Assign(a) => self.static_increment(a),
            _ => None,
        })?;
        let c = candidate.as_str();
        if mentions(target, c) || mentions(iter, c) {
            return None;
        }
        // Inside the loop: only idiom statements directly in the body name it.
        for s in body {
            let idiom =
                matches!(s, Stmt::Assign(a) if self.static_increment(a).as_deref() == Some(c));
            if !idiom && stmt_mentions(s, c) {
                return None;
            }
        }
        // A dict when the loop starts: assigned by an earlier top-level statement (only dict displays bind
        // it, checked below).
        if self.frame().first_def.get(c).is_none_or(|end| *end > start) {
            return None;
        }
        let builtin = |n: &str| self.is_builtin_call(n);
        let mut uses = Uses {
            name: c,
            ok: true,
            builtin: &builtin,
        };
        for s in self.module {
            uses.visit_stmt(s);
        }
        uses.ok.then(|| candidate.clone())
    }

    /// The receiver of `c[k] = c.get(k, d) + y` if the statement has that shape whatever is known while
    /// compiling (a subset of what `dict_increment` accepts): `c` a local boxed name, `k` the same flat
    /// name or literal, `d` a literal or a name, `y` a literal or a flat name assigned by an earlier
    /// top-level statement.
    pub(super) fn static_increment(&self, s: &StmtAssign) -> Option<String> {
        let inc = self.increment(s)?;
        let y_fits = match inc.addend {
            Expr::Name(n) => {
                self.is_shadow(n.id.as_str())
                    && self
                        .frame()
                        .first_def
                        .get(n.id.as_str())
                        .is_some_and(|end| *end <= n.range().start().to_usize())
            }
            other => self.is_quiet_flat(other),
        };
        y_fits.then(|| inc.name.to_string())
    }

    /// Whether the loop over `body` may take the steady path for the raw dict `name` ([`Steady`]): one
    /// counting statement on it, whose `d` and `y` are literals of one type among `int`, `float` and `str`.
    pub(super) fn raw_steady(&self, body: &[Stmt], name: &str) -> bool {
        let mut counts = body.iter().filter_map(|s| match s {
            Stmt::Assign(a) => self.increment(a).filter(|i| i.name == name),
            _ => None,
        });
        let (Some(only), None) = (counts.next(), counts.next()) else {
            return false;
        };
        match (literal_type(only.default), literal_type(only.addend)) {
            (Some(d), Some(y)) => d == y,
            _ => false,
        }
    }

    /// Unpacks the box of `name` into plain variables (before the loop header); `steady` from
    /// [`Compiler::raw_steady`].
    pub(super) fn raw_enter(&mut self, name: &str, steady: bool, indent: usize) -> RawDict {
        let r = RawDict {
            boxed: self.fresh("rb"),
            label: self.fresh("rl"),
            structure: self.fresh("rs"),
            values: self.fresh("rr"),
            entries: self.fresh("re"),
            steady: steady.then(|| Steady {
                ok: self.fresh("so"),
                key: self.fresh("sk"),
                pc: self.fresh("sp"),
                pair: self.fresh("sc"),
            }),
        };
        let c = mangle(name);
        let (q, qq) = (self.fresh("q"), self.fresh("q"));
        for line in [
            format!("{} = {c}[0]", r.boxed),
            format!("{} = {c}[1]", r.label),
            format!("{} = {}[2]", r.structure, r.boxed),
            format!("{} = {{}}", r.values),
            format!("{} = {{}}", r.entries),
            format!("for {q}, {qq} in {}[1].items():", r.boxed),
        ] {
            self.emit(indent, line);
        }
        self.emit(indent + 1, format!("{}[{q}] = {qq}[1][0]", r.values));
        self.emit(
            indent + 1,
            format!(
                "{}[{q}] = ({qq}[0][0], ({qq}[0][1], {qq}[1][1]))",
                r.entries
            ),
        );
        if let Some(st) = &r.steady {
            // `None` never equals a label (an int), so the first count takes the general path.
            self.emit(indent, format!("{} = not {}", st.ok, r.values));
            self.emit(indent, format!("{} = None", st.key));
            self.emit(indent, format!("{} = None", st.pc));
        }
        r
    }

    /// Writes the raw dict back into its box, in place (after the loop).
    pub(super) fn raw_leave(&mut self, r: &RawDict, indent: usize) {
        let (d, q, e) = (self.fresh("rd"), self.fresh("q"), self.fresh("q"));
        self.emit(indent, format!("{d} = {}[1]", r.boxed));
        self.emit(indent, format!("for {q} in {}:", r.values));
        self.emit(indent + 1, format!("{e} = {}[{q}]", r.entries));
        self.emit(
            indent + 1,
            format!(
                "{d}[{q}] = (({e}[0], {e}[1][0]), ({}[{q}], {e}[1][1]))",
                r.values
            ),
        );
        self.emit(indent, format!("{}[2] = {}", r.boxed, r.structure));
    }

    /// Whether the code written from `from` on names the box of `name` (the check behind `Z098`).
    pub(super) fn names_box_since(&self, name: &str, from: usize) -> bool {
        let needle = mangle(name);
        self.out[from..].iter().any(|(_, text, _)| {
            text.match_indices(&needle).any(|(i, _)| {
                let before = text[..i].chars().next_back();
                let after = text[i + needle.len()..].chars().next();
                let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !ident(before) && !ident(after)
            })
        })
    }

    /// `c[k] = c.get(k, d) + y` on a raw dict: `_dinc`'s steps written out on the plain variables, behind
    /// the steady path where the loop may take it ([`Steady`]).
    pub(super) fn raw_increment(&mut self, s: &StmtAssign, indent: usize) -> bool {
        let Some(name) = self.static_increment(s) else {
            return false;
        };
        let Some(r) = self.raw.get(&name).cloned() else {
            return false;
        };
        let Some(inc) = self.increment(s) else {
            return false;
        };
        let line = self.line;
        // Evaluated in `_dinc`'s argument order: the key, the default, the addend (quiet).
        let k = self.flat(inc.key, "_pc");
        let d = self.expr(inc.default, "_pc");
        let y = self.flat(inc.addend, "_pc");
        self.flush_pre(indent);
        let [dd, ch, a, al, t, x, xl, w] =
            ["dd", "ch", "a", "al", "t", "x", "xl", "w"].map(|s| self.fresh(s));
        let (kr, kl) = (k.raw, k.label);
        let (yr, yl) = (y.raw, y.label);
        let RawDict {
            label,
            structure: st,
            values,
            entries,
            steady,
            ..
        } = &r;
        let mut lines = Vec::new();
        let i = match steady {
            Some(sd) => {
                // `d` is a literal here (`raw_steady`): its raw form is `y`'s kind of code.
                let dr = self.flat(inc.default, "_pc").raw;
                lines.extend([
                    (
                        indent,
                        format!("if {kl} == {} and _pc == {}:", sd.key, sd.pc),
                    ),
                    (
                        indent + 1,
                        format!("{values}[{kr}] = {values}.get({kr}, {dr}) + {yr}"),
                    ),
                    (indent + 1, format!("{entries}[{kr}] = ({kr}, {})", sd.pair)),
                    (indent, "else:".into()),
                ]);
                indent + 1
            }
            None => indent,
        };
        lines.extend([
            (i, format!("{dd} = {d}")),
            (i, format!("{ch} = {label} | {st} | {kl}")),
            (
                i,
                format!("{ch} = ({ch} | _UV) if {ch} & 1 else ({ch} & _NUV)"),
            ),
            (i, format!("if {kr} in {values}:")),
            (i + 1, format!("{a} = {values}[{kr}]")),
            (i + 1, format!("{al} = {entries}[{kr}][1][1]")),
            (i, "else:".into()),
            (i + 1, format!("{a} = {dd}[0]")),
            (i + 1, format!("{al} = {dd}[1]")),
            (i, format!("{t} = type({a})")),
            (
                i,
                format!("if ({t} is int or {t} is str or {t} is float) and type({yr}) is {t}:"),
            ),
            (i + 1, format!("{x} = {a} + {yr}")),
            (i + 1, format!("{xl} = {al} | {ch} | {yl} | _UV")),
            (i, "else:".into()),
            (
                i + 1,
                format!("{w} = _bin('+', ({a}, {al} | {ch}), ({yr}, {yl}))"),
            ),
            (i + 1, format!("{x} = {w}[0]")),
            (i + 1, format!("{xl} = {w}[1]")),
        ]);
        if self.strict {
            lines.extend([
                (i, "if _pc:".into()),
                (i + 1, format!("if ({st} | _pc | _UV) != ({st} | _UV):")),
                (i + 2, format!("_violation({line})")),
                (i + 1, format!("{xl} = {xl} | _pc")),
                (i + 1, format!("{st} = {st} | _pc")),
            ]);
        }
        lines.extend([
            (i, format!("{values}[{kr}] = {x}")),
            (i, format!("{entries}[{kr}] = ({kr}, ({kl}, {xl}))")),
            (
                i,
                format!("{st} = {st} | (({kl} | _UV) if {kl} & 1 else {kl})"),
            ),
        ]);
        if let Some(sd) = steady {
            // The cache: `ch` as the next count with this key label and context computes it (after this
            // count's structure update), and the value label `C` it stores.
            let pc_join = if self.strict { " | _pc" } else { "" };
            lines.extend([
                (i, format!("if {}:", sd.ok)),
                (i + 1, format!("{} = {kl}", sd.key)),
                (i + 1, format!("{} = _pc", sd.pc)),
                (i + 1, format!("{ch} = {label} | {st} | {kl}")),
                (
                    i + 1,
                    format!("{ch} = ({ch} | _UV) if {ch} & 1 else ({ch} & _NUV)"),
                ),
                (
                    i + 1,
                    format!("{} = ({kl}, {dd}[1] | {ch} | {yl} | _UV{pc_join})", sd.pair),
                ),
            ]);
        }
        for (ind, text) in lines {
            self.emit(ind, text);
        }
        true
    }
}

/// The type of a literal the steady path accepts for `d` and `y`: an int, a finite float or a string (not
/// a bool: `True + 1` is an int).
fn literal_type(e: &Expr) -> Option<&'static str> {
    match e {
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(_) => Some("int"),
            Number::Float(f) if f.is_finite() => Some("float"),
            _ => None,
        },
        Expr::StringLiteral(_) => Some("str"),
        _ => None,
    }
}
