//! Statements, beside `src/lower/compiler/stmt.rs`: assignment and unpacking, augmented assignment, the
//! raise of what a branch or loop body may change whether or not it runs, `if`/`for`/`while` (loops run to
//! a fixpoint, widened after a bound), `break`/`continue`/`return`, and plan functions.

use std::collections::BTreeSet;

use ruff_python_ast::{Expr, Parameters, Stmt, StmtAugAssign, StmtFunctionDef};
use ruff_text_size::Ranged;

use super::{
    Control, ControlKind, Env, Func, FuncBody, Interp, LoopCtx, MAX_LOOP_ITERATIONS, MAX_STEPS,
};
use crate::analysis::domain::{AVal, HeapObj, may_top, must_bottom, neutral};
use crate::label::Label;
use crate::lower::scope::{assigned_names, escapes, expr_walrus, mutation_receivers, target_names};

impl<'a> Interp<'a> {
    // ---- statements -----------------------------------------------------------------------------------

    pub(super) fn block(&mut self, body: &'a [Stmt]) {
        for s in body {
            if self.exhausted() {
                return;
            }
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &'a Stmt) {
        match s {
            Stmt::Expr(e) => {
                self.expr(&e.value);
            }
            Stmt::Assign(a) => {
                self.last_minted = None;
                let v = self.expr(&a.value);
                // Only `name = verify_x(v, or_none=True)` itself: anything computed from it is not narrowed.
                let minted = self
                    .last_minted
                    .take()
                    .filter(|_| matches!(a.value.as_ref(), Expr::Call(_)));
                for t in &a.targets {
                    self.assign(t, v.clone());
                }
                if let (Some(m), [Expr::Name(n)]) = (minted, a.targets.as_slice()) {
                    let m = if self.strict {
                        m.raised(&self.pc_may, &self.pc_must)
                    } else {
                        m
                    };
                    self.when_present
                        .insert((self.frames.len(), n.id.to_string()), m);
                }
            }
            Stmt::AugAssign(a) => self.aug_assign(a),
            Stmt::If(i) => {
                let mut clauses: Vec<(Option<&'a Expr>, &'a [Stmt])> =
                    vec![(Some(&*i.test), i.body.as_slice())];
                clauses.extend(
                    i.elif_else_clauses
                        .iter()
                        .map(|c| (c.test.as_ref(), c.body.as_slice())),
                );
                self.if_chain(&clauses);
            }
            Stmt::For(f) => self.for_loop(&f.target, &f.iter, &f.body),
            Stmt::While(w) => self.while_loop(&w.test, &w.body),
            Stmt::Break(_) | Stmt::Continue(_) => {
                let pc = self.pc_may.clone();
                let env = match self.loops.last() {
                    Some(l) => self.snapshot(&l.names),
                    None => Env::new(),
                };
                let is_break = matches!(s, Stmt::Break(_));
                if let Some(l) = self.loops.last_mut() {
                    l.exits_may = l.exits_may.join(&pc);
                    let slot = if is_break {
                        &mut l.break_env
                    } else {
                        &mut l.continue_env
                    };
                    *slot = Some(match slot.take() {
                        Some(e) => Self::merge_env(&e, &env),
                        None => env,
                    });
                }
            }
            Stmt::Return(r) => {
                let v = match &r.value {
                    Some(e) => self.expr(e),
                    None => self.lit_val(),
                };
                let v = self.returned(v);
                if let Some(f) = self.fns.last_mut() {
                    f.ret = Some(match f.ret.take() {
                        Some(old) => old.merge(&v),
                        None => v,
                    });
                }
            }
            Stmt::FunctionDef(f) => self.function_def(f),
            // `import json` / `import re`, `pass`: nothing flows.
            _ => {}
        }
    }

    /// A returned value (`_ret`): it carries the early exits taken so far (part of `pc`, in both modes)
    /// and, in STRICT, the control context.
    pub(super) fn returned(&self, v: AVal) -> AVal {
        AVal {
            may: v.may.join(&self.pc_may),
            must: if self.strict {
                v.must.join(&self.pc_must)
            } else {
                v.must.clone()
            },
            ..v
        }
    }

    /// Registers the function defined at `at` (once per definition site) and returns its id. `defaults`
    /// are the parameters' default values just evaluated, one per parameter (`None` where it has none);
    /// a definition that runs again (in a loop, or in a function called twice) merges its defaults into
    /// those of the runs before, since a function value made by an earlier run may still be called.
    pub(super) fn func(
        &mut self,
        at: usize,
        params: Option<&'a Parameters>,
        body: FuncBody<'a>,
        defaults: Vec<Option<AVal>>,
    ) -> usize {
        let serial = self.frames[self.frames.len() - 1].serial;
        if let Some(&id) = self.func_of.get(&at) {
            let f = &mut self.funcs[id];
            f.frame = serial;
            for (old, new) in f.defaults.iter_mut().zip(defaults) {
                *old = match (old.take(), new) {
                    (Some(a), Some(b)) => Some(a.merge(&b)),
                    (a, b) => a.or(b),
                };
            }
            return id;
        }
        let params: Vec<String> = params
            .map(|p| {
                p.args
                    .iter()
                    .map(|p| p.parameter.name.id.to_string())
                    .collect()
            })
            .unwrap_or_default();
        let mut defaults = defaults;
        defaults.resize(params.len(), None);
        self.funcs.push(Func {
            params,
            defaults,
            body,
            frame: serial,
        });
        let id = self.funcs.len() - 1;
        self.func_of.insert(at, id);
        id
    }

    /// The parameters' defaults of a `def`, evaluated now, left to right, in the defining scope: what
    /// the lowering writes into the `def` line, so Python evaluates it once, when the definition runs
    /// (`src/lower/compiler/stmt.rs`, `params`). A tool called in a default is called then.
    fn defaults(&mut self, params: &'a Parameters) -> Vec<Option<AVal>> {
        params
            .args
            .iter()
            .map(|p| p.default.as_deref().map(|d| self.expr(d)))
            .collect()
    }

    pub(super) fn assign(&mut self, target: &'a Expr, v: AVal) {
        match target {
            Expr::Name(n) => self.bind(n.id.as_str(), v),
            Expr::Tuple(t) => self.unpack(&t.elts, &v),
            Expr::List(t) => self.unpack(&t.elts, &v),
            Expr::Subscript(s) => {
                let c = self.expr(&s.value);
                let k = self.expr(&s.slice);
                let km = self.deep_may(&k);
                self.mutate(&c, &km);
                self.add_elem(&c, &v);
            }
            Expr::Starred(st) => {
                let v = self.list_of(target.range().start().to_usize(), &v);
                self.assign(&st.value, v);
            }
            _ => {}
        }
    }

    fn list_of(&mut self, at: usize, elem: &AVal) -> AVal {
        let obj = HeapObj::empty(self.lit(), must_bottom());
        self.container(at, 4, obj, std::slice::from_ref(elem))
    }

    fn unpack(&mut self, targets: &'a [Expr], v: &AVal) {
        // `_unpack` reads the elements with the structure's influence.
        let e = self.element(v, None);
        for t in targets {
            self.assign(t, e.clone());
        }
    }

    /// `x += v`, `xs[i] += v`: the operator's result (allocated at the statement, for a sequence), assigned back.
    fn aug_assign(&mut self, a: &'a StmtAugAssign) {
        let cur = self.expr(&a.target);
        let v = self.expr(&a.value);
        let r = self.binop(a.range().start().to_usize(), &cur, &v);
        if let Expr::Subscript(_) | Expr::Name(_) = a.target.as_ref() {
            self.assign(&a.target, r);
        }
    }

    /// Raises, in STRICT, what a branch or loop body may assign or mutate, whether or not it runs. The
    /// compiler does this in two steps: `preraise` (the containers, before the block) and
    /// `raise_assigned` (the names, after it).
    fn not_taken(&mut self, bodies: &[&'a [Stmt]], may: &Label, must: &Label) {
        if !self.strict {
            return;
        }
        let mut names = BTreeSet::new();
        for b in bodies {
            assigned_names(b, &mut names);
        }
        for n in names {
            if let Some(v) = self.env().get(&n).cloned() {
                let r = v.raised(may, must);
                self.env().insert(n, r);
            }
        }
        let mut receivers = Vec::new();
        for b in bodies {
            mutation_receivers(b, &mut receivers);
        }
        let mut roots = BTreeSet::new();
        for r in receivers {
            let mut e = r;
            loop {
                match e {
                    Expr::Subscript(s) => e = &s.value,
                    Expr::Attribute(a) => e = &a.value,
                    Expr::Call(c) => e = &c.func,
                    _ => break,
                }
            }
            if let Expr::Name(n) = e
                && let Some(v) = self.lookup(n.id.as_str())
            {
                roots.extend(v.sites.iter().copied());
            }
        }
        // A plan function called in the body may mutate anything it can reach.
        if bodies.iter().any(|b| calls_plan_function(b, self)) {
            for f in &self.frames {
                for v in f.env.values() {
                    roots.extend(v.sites.iter().copied());
                }
            }
        }
        for s in self.reach(&roots) {
            self.update(s, |h| h.struct_may = h.struct_may.join(may));
        }
    }

    fn if_chain(&mut self, clauses: &[(Option<&'a Expr>, &'a [Stmt])]) {
        let Some(((test, body), rest)) = clauses.split_first() else {
            return;
        };
        let Some(test) = test else {
            // A bare `else`.
            self.block(body);
            return;
        };
        let c = self.expr(test);
        let (cm, cu) = self.cond(&c);
        let (ps_may, ps_must) = (self.pc_may.clone(), self.pc_must.clone());
        self.pc_may = ps_may.join(&cm);
        self.pc_must = ps_must.join(&cu);
        let mut bodies: Vec<&'a [Stmt]> = vec![body];
        bodies.extend(rest.iter().map(|(_, b)| *b));
        let mut names = BTreeSet::new();
        for b in &bodies {
            assigned_names(b, &mut names);
        }
        for (t, _) in rest {
            if let Some(t) = t {
                expr_walrus(t, &mut names);
            }
        }
        // `if who is not None:` / `if who:` on a name from `verify_x(v, or_none=True)`: in the body it is
        // the verified value (a `None` never gets there).
        let narrowed = present_test(test).and_then(|name| {
            self.when_present
                .get(&(self.frames.len(), name.to_string()))
                .map(|v| (name.to_string(), v.clone()))
        });
        if let Some((name, _)) = &narrowed {
            names.insert(name.clone());
        }
        let before = self.snapshot(&names);
        if let Some((name, v)) = narrowed {
            self.env().insert(name, v);
        }
        self.controls.push(Control {
            at: test.range().start().to_usize(),
            kind: ControlKind::If,
            test_may: cm.clone(),
        });
        self.block(body);
        let after_then = self.snapshot(&names);
        self.restore(&names, &before);
        self.if_chain(rest);
        self.controls.pop();
        let after_else = self.snapshot(&names);
        let merged = Self::merge_env(&after_then, &after_else);
        self.restore(&names, &merged);
        let esc = bodies.iter().any(|b| {
            let e = escapes(b);
            e.loop_exit || e.ret
        });
        let l_may = ps_may.join(&cm);
        let l_must = ps_must.join(&cu);
        if esc {
            self.pc_may = l_may.clone();
            self.pc_must = l_must.clone();
        } else {
            self.pc_may = ps_may;
            self.pc_must = ps_must;
        }
        self.not_taken(&bodies, &l_may, &l_must);
    }

    pub(super) fn iteration(&self, it: &AVal) -> (AVal, Label, Label) {
        let (sm, su) = self.cond(it);
        let e = self.element(it, None);
        (e, sm, su)
    }

    fn for_loop(&mut self, target: &'a Expr, iter: &'a Expr, body: &'a [Stmt]) {
        let it = self.expr(iter);
        let (elem, s_may, s_must) = self.iteration(&it);
        let (ps_may, ps_must) = (self.pc_may.clone(), self.pc_must.clone());
        let esc = escapes(body);
        let esc_any = esc.loop_exit || esc.ret;
        let mut names = BTreeSet::new();
        assigned_names(body, &mut names);
        target_names(target, &mut names);
        self.controls.push(Control {
            at: iter.range().start().to_usize(),
            kind: ControlKind::For,
            test_may: s_may.clone(),
        });
        let (exits, lp_may) = self.fixpoint(body, names, |me, exits| {
            me.pc_may = ps_may.join(&s_may).join(exits);
            me.pc_must = ps_must.join(&s_must);
            me.assign(target, elem.clone());
            true
        });
        self.controls.pop();
        self.pc_may = ps_may.join(&exits);
        self.pc_must = ps_must.clone();
        if esc_any {
            self.pc_may = self.pc_may.join(&s_may);
            self.pc_must = self.pc_must.join(&s_must);
        }
        let raise_may = lp_may.join(&exits);
        self.not_taken(&[body], &raise_may, &ps_must.join(&s_must));
        if self.strict {
            let mut tn = BTreeSet::new();
            target_names(target, &mut tn);
            for n in tn {
                if let Some(v) = self.env().get(&n).cloned() {
                    let r = v.raised(&raise_may, &ps_must.join(&s_must));
                    self.env().insert(n, r);
                }
            }
        }
    }

    fn while_loop(&mut self, test: &'a Expr, body: &'a [Stmt]) {
        let (ps_may, ps_must) = (self.pc_may.clone(), self.pc_must.clone());
        let esc = escapes(body);
        let mut cond_may = neutral();
        let mut names = BTreeSet::new();
        assigned_names(body, &mut names);
        expr_walrus(test, &mut names);
        self.controls.push(Control {
            at: test.range().start().to_usize(),
            kind: ControlKind::While,
            test_may: neutral(),
        });
        let (exits, lp_may) = self.fixpoint(body, names, |me, exits| {
            me.pc_may = ps_may.join(exits);
            me.pc_must = ps_must.clone();
            let c = me.expr(test);
            let (cm, cu) = me.cond(&c);
            cond_may = cond_may.join(&cm);
            // The body's own controls are closed by now: the last one is this loop's.
            if let Some(ctl) = me.controls.last_mut() {
                ctl.test_may = ctl.test_may.join(&cm);
            }
            me.pc_may = me.pc_may.join(&cm);
            me.pc_must = me.pc_must.join(&cu);
            true
        });
        self.controls.pop();
        // The test also runs once more, to leave the loop: its condition label is part of what follows
        // only when the body may leave early (like the runtime's exit accumulator).
        self.pc_may = ps_may.join(&exits);
        self.pc_must = ps_must.clone();
        if esc.loop_exit || esc.ret {
            self.pc_may = self.pc_may.join(&cond_may);
        }
        let raise_may = lp_may.join(&exits).join(&cond_may);
        self.not_taken(&[body], &raise_may, &ps_must);
    }

    /// Runs a loop body to a fixpoint. `head` sets up each iteration (pc, target) and returns whether the
    /// body runs. Returns the join of the `pc` at every early exit, and the upper bound of the body's `pc`.
    fn fixpoint(
        &mut self,
        body: &'a [Stmt],
        names: BTreeSet<String>,
        mut head: impl FnMut(&mut Self, &Label) -> bool,
    ) -> (Label, Label) {
        let mut exits = neutral();
        let mut entry = self.snapshot(&names);
        let mut heap_before = self.heap_version;
        let mut iterations = 0;
        let mut body_may = neutral();
        loop {
            iterations += 1;
            self.restore(&names, &entry);
            if !head(self, &exits) {
                break;
            }
            body_may = body_may.join(&self.pc_may);
            self.loops.push(LoopCtx {
                names: names.clone(),
                exits_may: neutral(),
                break_env: None,
                continue_env: None,
            });
            self.block(body);
            let ctx = self.loops.pop();
            let end = self.snapshot(&names);
            let mut next = Self::merge_env(&entry, &end);
            let mut breaks = None;
            if let Some(ctx) = ctx {
                exits = exits.join(&ctx.exits_may);
                if let Some(c) = ctx.continue_env {
                    next = Self::merge_env(&next, &c);
                }
                breaks = ctx.break_env;
            }
            let stable = next == entry && self.heap_version == heap_before;
            if stable || self.steps >= MAX_STEPS {
                let out = match breaks {
                    Some(b) => Self::merge_env(&next, &b),
                    None => next,
                };
                self.restore(&names, &out);
                break;
            }
            if iterations >= MAX_LOOP_ITERATIONS {
                self.widen(&entry, &mut next);
            }
            entry = next;
            heap_before = self.heap_version;
            if iterations > MAX_LOOP_ITERATIONS + 4 {
                // Widening makes every changing value `top`, which is stable; this only guards against a
                // bug in that argument.
                self.imprecise.push((
                    body.first().map_or(0, |s| s.range().start().to_usize()),
                    "loop",
                ));
                self.restore(&names, &entry);
                break;
            }
        }
        (exits, body_may)
    }

    fn widen(&mut self, old: &Env, next: &mut Env) {
        for (k, v) in next.iter_mut() {
            if old.get(k) != Some(v) {
                v.may = may_top();
                v.must = must_bottom();
                v.texts = None;
            }
        }
        for s in 0..self.heap.len() {
            self.update(s, |h| {
                h.struct_may = may_top();
                h.elem_may = may_top();
                h.texts = None;
            });
        }
    }

    /// `def name(...)`: binds the name to a function value (its body is analysed at each call).
    fn function_def(&mut self, f: &'a StmtFunctionDef) {
        let defaults = self.defaults(&f.parameters);
        let id = self.func(
            f.range().start().to_usize(),
            Some(&f.parameters),
            FuncBody::Stmts(&f.body),
            defaults,
        );
        let v = AVal {
            funcs: BTreeSet::from([id]),
            ..self.lit_val()
        };
        self.env().insert(f.name.id.to_string(), v);
    }
}

/// The name a test checks to be present: `name is not None`, or `name` alone.
fn present_test(test: &Expr) -> Option<&str> {
    match test {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Compare(c)
            if c.ops.as_ref() == [ruff_python_ast::CmpOp::IsNot]
                && matches!(c.comparators.as_ref(), [Expr::NoneLiteral(_)]) =>
        {
            match c.left.as_ref() {
                Expr::Name(n) => Some(n.id.as_str()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether a block calls a plan function (by name) or a function value, outside nested scopes.
fn calls_plan_function(body: &[Stmt], me: &Interp<'_>) -> bool {
    let mut found = false;
    for s in body {
        each_expr_in_stmt(s, &mut |e| {
            if let Expr::Call(c) = e {
                match c.func.as_ref() {
                    Expr::Name(n) => {
                        if me
                            .lookup(n.id.as_str())
                            .is_some_and(|v| !v.funcs.is_empty())
                        {
                            found = true;
                        }
                    }
                    Expr::Attribute(_) => {}
                    _ => found = true,
                }
            }
        });
    }
    found
}

/// Visits every expression of a statement and its nested blocks (not nested `def`s).
fn each_expr_in_stmt(s: &Stmt, f: &mut dyn FnMut(&Expr)) {
    fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
        crate::lower::scope::each_child(e, &mut |x| {
            f(x);
            // Comprehensions and lambdas have scopes of their own, but run here: look inside too.
            match x {
                Expr::ListComp(c) => {
                    visit(&c.elt, f);
                    generators(&c.generators, f);
                }
                Expr::SetComp(c) => {
                    visit(&c.elt, f);
                    generators(&c.generators, f);
                }
                Expr::Generator(c) => {
                    visit(&c.elt, f);
                    generators(&c.generators, f);
                }
                Expr::DictComp(c) => {
                    if let Some(k) = &c.key {
                        visit(k, f);
                    }
                    visit(&c.value, f);
                    generators(&c.generators, f);
                }
                Expr::Lambda(l) => visit(&l.body, f),
                _ => {}
            }
            true
        })
    }
    fn generators(gs: &[ruff_python_ast::Comprehension], f: &mut dyn FnMut(&Expr)) {
        for g in gs {
            visit(&g.iter, f);
            g.ifs.iter().for_each(|i| visit(i, f));
        }
    }
    match s {
        Stmt::Expr(e) => visit(&e.value, f),
        Stmt::Assign(a) => {
            visit(&a.value, f);
            a.targets.iter().for_each(|t| visit(t, f));
        }
        Stmt::AugAssign(a) => {
            visit(&a.value, f);
            visit(&a.target, f);
        }
        Stmt::Return(r) => {
            if let Some(v) = &r.value {
                visit(v, f);
            }
        }
        Stmt::If(i) => {
            visit(&i.test, f);
            i.body.iter().for_each(|s| each_expr_in_stmt(s, f));
            for c in &i.elif_else_clauses {
                if let Some(t) = &c.test {
                    visit(t, f);
                }
                c.body.iter().for_each(|s| each_expr_in_stmt(s, f));
            }
        }
        Stmt::For(l) => {
            visit(&l.iter, f);
            l.body.iter().for_each(|s| each_expr_in_stmt(s, f));
        }
        Stmt::While(w) => {
            visit(&w.test, f);
            w.body.iter().for_each(|s| each_expr_in_stmt(s, f));
        }
        _ => {}
    }
}
