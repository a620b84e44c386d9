//! The abstract interpreter: walks a checked plan once (loops to a fixpoint, plan functions inlined up to a
//! depth) and records, for every tool call site, the may/must labels of each argument and of `pc`.
//!
//! It mirrors the runtime's rules (docs/lowering.md): the lexical `pc`, the raise after a branch or loop
//! that may leave early, STRICT's join of `pc` into assigned, stored and returned values, not-taken
//! branches, and per-container structure labels. Containers are summarised per allocation site and
//! updated weakly, so aliasing is covered: a mutation through any name reaches every alias.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ruff_python_ast::{
    BoolOp, Expr, ExprCall, InterpolatedStringElement, Parameters, Stmt, UnaryOp,
};
use ruff_text_size::Ranged;

use super::domain::{AVal, HeapObj, Shape, may_top, meet, must_bottom, neutral};
use crate::label::{Integrity, KindSet, Label, LabelSpace, Readers, TagSet};
use crate::lower::scope::{assigned_names, escapes, expr_walrus, mutation_receivers, target_names};
use crate::plan::catalogue::{self, Adds, Extra, Mutation, Yields};
use crate::plan::subset::Over;
use crate::policy::Policy;
use crate::policy::model::{IntegritySpec, ReadersSpec};

/// Deepest chain of plan-function calls followed; deeper calls give `top`.
const MAX_CALL_DEPTH: usize = 8;
/// Iterations of one loop before its changing values are widened to `top`.
const MAX_LOOP_ITERATIONS: usize = 24;
/// Abstract steps (statements and expressions) before the analysis gives up on precision.
const MAX_STEPS: usize = 2_000_000;

/// What one argument of a call site looked like, accumulated over every time the site was analysed.
#[derive(Clone, Debug)]
pub struct ArgAcc {
    pub name: String,
    pub start: usize,
    pub end: usize,
    pub val: AVal,
    /// Upper bound of the structure and of the elements, when the argument may be a container.
    pub struct_may: Option<Label>,
    pub elems_may: Option<Label>,
    /// When the argument is written as a list literal: an upper bound of each element, in order (it is
    /// certainly a list, so only the list reading applies).
    pub elem_labels: Option<Vec<Label>>,
    /// Lower bound of the label the runtime claims for it.
    pub claim_must: Label,
    /// Every string the argument (or its elements) can be; `None`: not known statically.
    pub texts: Option<BTreeSet<String>>,
}

/// A tool call site with everything the analysis learned about it.
#[derive(Clone, Debug)]
pub struct SiteAcc {
    pub tool: String,
    pub start: usize,
    pub end: usize,
    pub args: Vec<ArgAcc>,
    pub pc_may: Label,
    pub pc_must: Label,
    /// How often the site was analysed (0: never reached by the analysis).
    pub visits: u32,
    /// The outermost enclosing `if`, `for` or `while` whose test may depend on untrusted data, when the
    /// site is under one (what a STRICT implicit-flow note names).
    pub control: Option<Control>,
}

/// An enclosing control statement: where its test is and what the test may depend on.
#[derive(Clone, Debug)]
pub struct Control {
    /// Source offset of the test (the iterable of a `for`).
    pub at: usize,
    pub kind: ControlKind,
    pub test_may: Label,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlKind {
    If,
    For,
    While,
}

struct Func<'a> {
    params: Vec<String>,
    body: FuncBody<'a>,
    /// Serial of the frame the function was defined in (its enclosing scope).
    frame: u64,
}

#[derive(Clone, Copy)]
enum FuncBody<'a> {
    Stmts(&'a [Stmt]),
    Expr(&'a Expr),
}

type Env = BTreeMap<String, AVal>;

struct LoopCtx {
    /// What the loop's body may bind: the part of the environment its exits carry.
    names: BTreeSet<String>,
    exits_may: Label,
    break_env: Option<Env>,
    continue_env: Option<Env>,
}

struct FnCtx {
    ret: Option<AVal>,
}

struct Frame {
    env: Env,
    /// Frame to look names up in next.
    parent: Option<usize>,
    serial: u64,
}

/// The interpreter's state. Build with [`Interp::new`], run [`Interp::run`], read [`Interp::sites`].
pub struct Interp<'a> {
    policy: &'a Policy,
    pub space: LabelSpace,
    pub strict: bool,
    heap: Vec<HeapObj>,
    site_of: HashMap<(usize, u8), usize>,
    funcs: Vec<Func<'a>>,
    func_of: HashMap<usize, usize>,
    frames: Vec<Frame>,
    pc_may: Label,
    pc_must: Label,
    loops: Vec<LoopCtx>,
    fns: Vec<FnCtx>,
    /// The control statements around the statement being analysed, outermost first.
    controls: Vec<Control>,
    /// Call sites by source offset.
    pub sites: BTreeMap<usize, SiteAcc>,
    /// Source ids (the `sources` of lint labels) → (tool or verifier, call start offset).
    pub source_names: BTreeMap<u32, (String, usize)>,
    source_of: HashMap<usize, u32>,
    steps: usize,
    serials: u64,
    /// Bumped on every change to the heap, so a loop can tell cheaply whether it settled.
    heap_version: u64,
    /// The analysis stopped following something (depth, steps, widening): results there are `top`.
    pub imprecise: Vec<(usize, &'static str)>,
    /// Each element's upper bound (deep, as stored) of the list literal evaluated last: a tool argument
    /// written as `[a, b]` is checked element by element, as the runtime does (docs/semantics.md §5).
    last_list: Option<Vec<Label>>,
    /// For a name bound straight from `verify_x(v, or_none=True)`, in the frame at this depth: its value
    /// when it is not `None` (the verified one). `if name is not None:` and `if name:` narrow to it.
    when_present: BTreeMap<(usize, String), AVal>,
    /// The verified value of the `or_none` verifier call evaluated last.
    last_minted: Option<AVal>,
}

impl<'a> Interp<'a> {
    pub fn new(policy: &'a Policy, space: LabelSpace, strict: bool) -> Interp<'a> {
        Interp {
            policy,
            space,
            strict,
            heap: Vec::new(),
            site_of: HashMap::new(),
            funcs: Vec::new(),
            func_of: HashMap::new(),
            frames: vec![Frame {
                env: Env::new(),
                parent: None,
                serial: 0,
            }],
            pc_may: neutral(),
            pc_must: must_bottom(),
            loops: Vec::new(),
            fns: Vec::new(),
            controls: Vec::new(),
            sites: BTreeMap::new(),
            source_names: BTreeMap::new(),
            source_of: HashMap::new(),
            steps: 0,
            serials: 0,
            heap_version: 0,
            imprecise: Vec::new(),
            last_list: None,
            when_present: BTreeMap::new(),
            last_minted: None,
        }
    }

    /// Analyses a module body.
    pub fn run(&mut self, body: &'a [Stmt]) {
        self.block(body);
    }

    fn exhausted(&mut self) -> bool {
        self.steps += 1;
        if self.steps == MAX_STEPS {
            self.imprecise
                .push((0, "the plan is too large to analyse precisely"));
        }
        self.steps >= MAX_STEPS
    }

    // ---- environment ----------------------------------------------------------------------------------

    fn push_frame(&mut self, env: Env, parent: Option<usize>) {
        self.serials += 1;
        self.frames.push(Frame {
            env,
            parent,
            serial: self.serials,
        });
    }

    fn env(&mut self) -> &mut Env {
        let i = self.frames.len() - 1;
        &mut self.frames[i].env
    }

    fn lookup(&self, name: &str) -> Option<&AVal> {
        let mut i = Some(self.frames.len() - 1);
        while let Some(f) = i {
            if let Some(v) = self.frames[f].env.get(name) {
                return Some(v);
            }
            i = self.frames[f].parent;
        }
        None
    }

    fn bind(&mut self, name: &str, v: AVal) {
        let depth = self.frames.len();
        self.when_present.remove(&(depth, name.to_string()));
        let v = if self.strict {
            v.raised(&self.pc_may, &self.pc_must)
        } else {
            v
        };
        self.env().insert(name.to_string(), v);
    }

    /// The current frame's bindings of `names` (the only ones a block can change).
    fn snapshot(&self, names: &BTreeSet<String>) -> Env {
        let env = &self.frames[self.frames.len() - 1].env;
        names
            .iter()
            .filter_map(|n| env.get(n).map(|v| (n.clone(), v.clone())))
            .collect()
    }

    /// Sets the current frame's bindings of `names` to `snap` (unbinding the names it lacks).
    fn restore(&mut self, names: &BTreeSet<String>, snap: &Env) {
        let env = self.env();
        for n in names {
            match snap.get(n) {
                Some(v) => {
                    env.insert(n.clone(), v.clone());
                }
                None => {
                    env.remove(n);
                }
            }
        }
    }

    fn merge_env(a: &Env, b: &Env) -> Env {
        let mut out = Env::new();
        for (k, v) in a {
            let m = match b.get(k) {
                Some(w) => v.merge(w),
                // Undefined on the other path: reading it there raises, so only this path's value flows.
                None => AVal {
                    must: must_bottom(),
                    ..v.clone()
                },
            };
            out.insert(k.clone(), m);
        }
        for (k, v) in b {
            if !a.contains_key(k) {
                out.insert(
                    k.clone(),
                    AVal {
                        must: must_bottom(),
                        ..v.clone()
                    },
                );
            }
        }
        out
    }

    // ---- heap -----------------------------------------------------------------------------------------

    /// Changes one heap object, noting whether it changed.
    fn update(&mut self, s: usize, f: impl FnOnce(&mut HeapObj)) {
        let Some(h) = self.heap.get_mut(s) else {
            return;
        };
        let before = h.clone();
        f(h);
        if *h != before {
            self.heap_version += 1;
        }
    }

    fn alloc(&mut self, at: usize, tag: u8, obj: HeapObj) -> usize {
        match self.site_of.get(&(at, tag)) {
            Some(&s) => {
                self.update(s, |h| h.absorb(&obj));
                s
            }
            None => {
                self.heap_version += 1;
                self.heap.push(obj);
                let s = self.heap.len() - 1;
                self.site_of.insert((at, tag), s);
                s
            }
        }
    }

    /// Every site reachable from `sites`.
    fn reach(&self, sites: &BTreeSet<usize>) -> BTreeSet<usize> {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<usize> = sites.iter().copied().collect();
        while let Some(s) = todo.pop() {
            if s < self.heap.len() && seen.insert(s) {
                todo.extend(self.heap[s].kids.iter().copied());
            }
        }
        seen
    }

    /// Upper bound of everything a value holds: its own label, structures and elements, all the way down.
    fn deep_may(&self, v: &AVal) -> Label {
        let mut l = v.may.clone();
        for s in self.reach(&v.sites) {
            l = l
                .join(&self.heap[s].struct_may)
                .join(&self.heap[s].elem_may);
        }
        l
    }

    fn struct_may(&self, v: &AVal) -> Label {
        v.sites
            .iter()
            .fold(v.may.clone(), |l, &s| l.join(&self.heap[s].struct_may))
    }

    /// Lower bound of the label the runtime reads for `v` as a condition, claim or structure.
    fn claim_must(&self, v: &AVal) -> Label {
        match v.shape {
            Shape::Container if !v.sites.is_empty() => {
                let mut it = v.sites.iter().map(|&s| &self.heap[s].struct_must);
                let first = it.next().cloned().unwrap_or_else(must_bottom);
                let structure = it.fold(first, |acc, l| meet(&acc, l));
                v.must.join(&structure)
            }
            _ => v.must.clone(),
        }
    }

    fn elem_must(&self, v: &AVal) -> Option<Label> {
        let mut out: Option<Label> = None;
        for &s in &v.sites {
            let e = self.heap[s].elem_must.clone()?;
            out = Some(match out {
                Some(o) => meet(&o, &e),
                None => e,
            });
        }
        out
    }

    /// Raises the structure of every container `v` may be (a mutation).
    fn mutate(&mut self, v: &AVal, extra_may: &Label) {
        let mut l = extra_may.clone();
        if self.strict {
            l = l.join(&self.pc_may);
        }
        for &s in &v.sites {
            self.update(s, |h| h.struct_may = h.struct_may.join(&l));
        }
    }

    fn add_elem(&mut self, v: &AVal, e: &AVal) {
        let e = if self.strict {
            e.raised(&self.pc_may, &self.pc_must)
        } else {
            e.clone()
        };
        for &s in &v.sites {
            self.update(s, |h| h.add_elem(&e));
        }
    }

    /// A fresh container value allocated at `at`.
    fn container(&mut self, at: usize, tag: u8, mut obj: HeapObj, elems: &[AVal]) -> AVal {
        if self.strict {
            obj.struct_may = obj.struct_may.join(&self.pc_may);
            obj.struct_must = obj.struct_must.join(&self.pc_must);
        }
        for e in elems {
            let e = if self.strict {
                e.raised(&self.pc_may, &self.pc_must)
            } else {
                e.clone()
            };
            obj.add_elem(&e);
        }
        let s = self.alloc(at, tag, obj);
        AVal {
            sites: BTreeSet::from([s]),
            shape: Shape::Container,
            ..AVal::literal()
        }
    }

    /// A container whose structure and elements are all bounded by `may` (a builtin's result).
    fn opaque_container(&mut self, at: usize, tag: u8, may: Label, kids: BTreeSet<usize>) -> AVal {
        let mut obj = HeapObj::empty(may.clone(), must_bottom());
        obj.elem_may = may;
        obj.elem_must = Some(must_bottom());
        obj.kids = kids;
        obj.texts = None;
        let s = self.alloc(at, tag, obj);
        AVal {
            sites: BTreeSet::from([s]),
            shape: Shape::Mixed,
            ..AVal::literal()
        }
    }

    /// Reading one element of `c` with index/key `i`.
    fn element(&self, c: &AVal, i: Option<&AVal>) -> AVal {
        let lit = AVal::literal();
        let i = i.unwrap_or(&lit);
        let choice_may = self.struct_may(c).join(&self.deep_may(i));
        // `_gi`: an element joins the influence of the choice; a character of a string is computed.
        let mut may = match c.shape {
            Shape::Container => choice_may.influence(),
            _ => choice_may.computed(),
        };
        let mut kids = BTreeSet::new();
        let mut funcs = BTreeSet::new();
        let mut texts: Option<BTreeSet<String>> = Some(BTreeSet::new());
        for &s in &c.sites {
            let h = &self.heap[s];
            may = may.join(&h.elem_may);
            kids.extend(h.kids.iter().copied());
            funcs.extend(h.funcs.iter().copied());
            texts = match (texts, &h.texts) {
                (Some(a), Some(b)) => Some(a.union(b).cloned().collect()),
                _ => None,
            };
        }
        let choice_must = self.claim_must(c).join(&i.must);
        let must = match c.shape {
            Shape::Scalar => choice_must.computed(),
            Shape::Container => match self.elem_must(c) {
                Some(e) => e.join(&choice_must.influence()),
                None => choice_must.influence(),
            },
            Shape::Mixed => c.must.join(&i.must).influence(),
        };
        AVal {
            may,
            must,
            sites: kids,
            funcs,
            shape: if c.shape == Shape::Scalar {
                Shape::Scalar
            } else {
                Shape::Mixed
            },
            texts: if c.sites.is_empty() { None } else { texts },
        }
    }

    /// The label a value contributes as a condition (`_cl`), influenced.
    fn cond(&self, v: &AVal) -> (Label, Label) {
        (
            self.struct_may(v).influence(),
            self.claim_must(v).influence(),
        )
    }

    // ---- statements -----------------------------------------------------------------------------------

    fn block(&mut self, body: &'a [Stmt]) {
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
            Stmt::AugAssign(a) => {
                let cur = self.expr(&a.target);
                let v = self.expr(&a.value);
                let r = self.binop(s.range().start().to_usize(), &cur, &v);
                if let Expr::Subscript(_) | Expr::Name(_) = a.target.as_ref() {
                    self.assign(&a.target, r);
                }
            }
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
                    None => AVal::literal(),
                };
                let v = self.returned(v);
                if let Some(f) = self.fns.last_mut() {
                    f.ret = Some(match f.ret.take() {
                        Some(old) => old.merge(&v),
                        None => v,
                    });
                }
            }
            Stmt::FunctionDef(f) => {
                let id = self.func(
                    f.range().start().to_usize(),
                    Some(&f.parameters),
                    FuncBody::Stmts(&f.body),
                );
                let v = AVal {
                    funcs: BTreeSet::from([id]),
                    ..AVal::literal()
                };
                self.env().insert(f.name.id.to_string(), v);
            }
            // `import json` / `import re`, `pass`: nothing flows.
            _ => {}
        }
    }

    /// A returned value (`_ret`): it carries the early exits taken so far (part of `pc`, in both modes)
    /// and, in STRICT, the control context.
    fn returned(&self, v: AVal) -> AVal {
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

    fn func(&mut self, at: usize, params: Option<&'a Parameters>, body: FuncBody<'a>) -> usize {
        let serial = self.frames[self.frames.len() - 1].serial;
        if let Some(&id) = self.func_of.get(&at) {
            self.funcs[id].frame = serial;
            return id;
        }
        let params = params
            .map(|p| {
                p.args
                    .iter()
                    .map(|p| p.parameter.name.id.to_string())
                    .collect()
            })
            .unwrap_or_default();
        self.funcs.push(Func {
            params,
            body,
            frame: serial,
        });
        let id = self.funcs.len() - 1;
        self.func_of.insert(at, id);
        id
    }

    fn assign(&mut self, target: &'a Expr, v: AVal) {
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
        let obj = HeapObj::empty(Label::literal(), must_bottom());
        self.container(at, 4, obj, std::slice::from_ref(elem))
    }

    fn unpack(&mut self, targets: &'a [Expr], v: &AVal) {
        // `_unpack` reads the elements with the structure's influence.
        let e = self.element(v, None);
        for t in targets {
            self.assign(t, e.clone());
        }
    }

    /// Raises, in STRICT, what a branch or loop body may assign or mutate, whether or not it runs.
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

    fn iteration(&self, it: &AVal) -> (AVal, Label, Label) {
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
        let (exits, lp_may, lp_must) = self.fixpoint(body, names, |me, exits| {
            me.pc_may = ps_may.join(&s_may).join(exits);
            me.pc_must = ps_must.join(&s_must);
            me.assign(target, elem.clone());
            true
        });
        self.controls.pop();
        let _ = lp_must;
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
        let (exits, lp_may, _) = self.fixpoint(body, names, |me, exits| {
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
    /// body runs. Returns the join of the `pc` at every early exit, and the body's `pc` bounds.
    fn fixpoint(
        &mut self,
        body: &'a [Stmt],
        names: BTreeSet<String>,
        mut head: impl FnMut(&mut Self, &Label) -> bool,
    ) -> (Label, Label, Label) {
        let mut exits = neutral();
        let mut entry = self.snapshot(&names);
        let mut heap_before = self.heap_version;
        let mut iterations = 0;
        let mut body_pc = (neutral(), must_bottom());
        loop {
            iterations += 1;
            self.restore(&names, &entry);
            if !head(self, &exits) {
                break;
            }
            body_pc = (
                body_pc.0.join(&self.pc_may),
                if iterations == 1 {
                    self.pc_must.clone()
                } else {
                    meet(&body_pc.1, &self.pc_must)
                },
            );
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
        (exits, body_pc.0, body_pc.1)
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

    // ---- expressions ----------------------------------------------------------------------------------

    pub fn expr(&mut self, e: &'a Expr) -> AVal {
        if self.exhausted() {
            return AVal::top();
        }
        let at = e.range().start().to_usize();
        match e {
            Expr::StringLiteral(s) => AVal {
                texts: Some(BTreeSet::from([s.value.to_str().to_string()])),
                ..AVal::literal()
            },
            Expr::NumberLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::EllipsisLiteral(_)
            | Expr::BytesLiteral(_) => AVal::literal(),
            Expr::Name(n) => match self.lookup(n.id.as_str()) {
                Some(v) => v.clone(),
                // A builtin used as a value (`map(str, xs)`) carries no data.
                None if crate::plan::subset::is_builtin(n.id.as_str()) => AVal::literal(),
                // Not bound on the paths analysed (or a closure's scope is gone): assume the worst.
                None => AVal::top(),
            },
            Expr::BinOp(b) => {
                let l = self.expr(&b.left);
                let r = self.expr(&b.right);
                self.binop(at, &l, &r)
            }
            Expr::UnaryOp(u) => {
                let v = self.expr(&u.operand);
                let may = self.deep_may(&v).computed();
                let must = match u.op {
                    UnaryOp::Not => self.claim_must(&v).computed(),
                    _ => v.must.computed(),
                };
                AVal::scalar(may, must)
            }
            Expr::BoolOp(b) => {
                let (ps_may, ps_must) = (self.pc_may.clone(), self.pc_must.clone());
                let mut out: Option<AVal> = None;
                let mut conds = neutral();
                for (i, v) in b.values.iter().enumerate() {
                    let x = self.expr(v);
                    let x = AVal {
                        may: x.may.join(&conds),
                        ..x
                    };
                    out = Some(match out {
                        Some(o) => o.merge(&x),
                        None => x.clone(),
                    });
                    if i + 1 < b.values.len() {
                        let (cm, cu) = self.cond(&x);
                        conds = conds.join(&cm);
                        self.pc_may = self.pc_may.join(&cm);
                        self.pc_must = self.pc_must.join(&cu);
                    }
                }
                let _ = BoolOp::And;
                self.pc_may = ps_may;
                self.pc_must = ps_must;
                let mut v = out.unwrap_or_else(AVal::literal);
                v.must = must_bottom();
                v
            }
            Expr::If(x) => {
                let c = self.expr(&x.test);
                let (cm, cu) = self.cond(&c);
                let (ps_may, ps_must) = (self.pc_may.clone(), self.pc_must.clone());
                self.pc_may = ps_may.join(&cm);
                self.pc_must = ps_must.join(&cu);
                let a = self.expr(&x.body);
                let b = self.expr(&x.orelse);
                self.pc_may = ps_may;
                self.pc_must = ps_must;
                let m = a.merge(&b);
                // `_jv(chosen, _inf(_cl(test)))` in both modes.
                AVal {
                    may: m.may.join(&cm),
                    must: m.must.join(&cu),
                    ..m
                }
            }
            Expr::Compare(c) => {
                let mut vals = vec![self.expr(&c.left)];
                for x in c.comparators.iter() {
                    vals.push(self.expr(x));
                }
                let may = vals
                    .iter()
                    .fold(Label::literal(), |l, v| l.join(&self.deep_may(v)))
                    .computed();
                let must = vals
                    .iter()
                    .fold(must_bottom(), |l, v| l.join(&v.must))
                    .computed();
                AVal::scalar(may, must)
            }
            Expr::List(l) => {
                let elems: Vec<AVal> = l.elts.iter().map(|x| self.expr_elem(x)).collect();
                let obj = HeapObj::empty(Label::literal(), must_bottom());
                let v = self.container(at, 0, obj, &elems);
                // What `container` stores: each element raised by `pc` in STRICT.
                let labels = elems
                    .iter()
                    .map(|e| {
                        let l = self.deep_may(e);
                        if self.strict { l.join(&self.pc_may) } else { l }
                    })
                    .collect();
                self.last_list = Some(labels);
                v
            }
            Expr::Tuple(l) => {
                let elems: Vec<AVal> = l.elts.iter().map(|x| self.expr_elem(x)).collect();
                let obj = HeapObj::empty(Label::literal(), must_bottom());
                self.container(at, 0, obj, &elems)
            }
            Expr::Set(l) => {
                let elems: Vec<AVal> = l.elts.iter().map(|x| self.expr_elem(x)).collect();
                let structure = elems
                    .iter()
                    .fold(Label::literal(), |acc, v| acc.join(&self.deep_may(v)));
                let obj = HeapObj::empty(structure, must_bottom());
                self.container(at, 0, obj, &elems)
            }
            Expr::Dict(d) => {
                let mut elems = Vec::new();
                let mut structure = Label::literal();
                for item in &d.items {
                    match &item.key {
                        Some(k) => {
                            let kv = self.expr(k);
                            structure = structure.join(&self.deep_may(&kv));
                            elems.push(kv);
                            elems.push(self.expr(&item.value));
                        }
                        None => {
                            // `**other`: its keys and values, and its structure.
                            let o = self.expr(&item.value);
                            structure = structure.join(&self.deep_may(&o));
                            elems.push(self.element(&o, None));
                        }
                    }
                }
                let obj = HeapObj::empty(structure, must_bottom());
                self.container(at, 0, obj, &elems)
            }
            Expr::Subscript(s) => {
                let c = self.expr(&s.value);
                if let Expr::Slice(sl) = s.slice.as_ref() {
                    let mut bounds = Label::literal();
                    for b in [&sl.lower, &sl.upper, &sl.step].into_iter().flatten() {
                        let v = self.expr(b);
                        bounds = bounds.join(&self.deep_may(&v));
                    }
                    if c.shape == Shape::Scalar {
                        return AVal::scalar(c.may.join(&bounds).computed(), c.must.computed());
                    }
                    let may = self.deep_may(&c).join(&bounds);
                    let kids = self.reach(&c.sites);
                    let mut v = self.opaque_container(at, 0, may, kids);
                    if c.shape == Shape::Mixed {
                        // A string or a list (`_gs`): a string's slice carries the string's label, every
                        // element of a list's slice the influence of the list's label. Both are at least
                        // `c`'s own, so a body cut from a mail is as certainly untrusted as the body.
                        v.must = c.must.clone();
                    }
                    return v;
                }
                let i = self.expr(&s.slice);
                self.element(&c, Some(&i))
            }
            Expr::FString(f) => {
                let mut may = Label::literal();
                let mut must = must_bottom();
                for part in f.value.iter() {
                    if let ruff_python_ast::FStringPart::FString(fs) = part {
                        for el in fs.elements.iter() {
                            if let InterpolatedStringElement::Interpolation(i) = el {
                                let v = self.expr(&i.expression);
                                may = may.join(&self.deep_may(&v));
                                must = must.join(&v.must);
                                if let Some(spec) = &i.format_spec {
                                    for el in spec.elements.iter() {
                                        if let InterpolatedStringElement::Interpolation(j) = el {
                                            let w = self.expr(&j.expression);
                                            may = may.join(&self.deep_may(&w));
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                AVal::scalar(may.computed(), must.computed())
            }
            Expr::Call(c) => self.call(c),
            Expr::Named(n) => {
                let v = self.expr(&n.value);
                self.assign(&n.target, v.clone());
                v
            }
            Expr::Lambda(l) => {
                let id = self.func(at, l.parameters.as_deref(), FuncBody::Expr(&l.body));
                AVal {
                    funcs: BTreeSet::from([id]),
                    ..AVal::literal()
                }
            }
            Expr::ListComp(c) => self.comprehension(at, &c.generators, &[&c.elt], false),
            Expr::SetComp(c) => self.comprehension(at, &c.generators, &[&c.elt], true),
            Expr::Generator(c) => self.comprehension(at, &c.generators, &[&c.elt], false),
            Expr::DictComp(c) => match &c.key {
                Some(k) => self.comprehension(at, &c.generators, &[k, &c.value], true),
                None => self.comprehension(at, &c.generators, &[&c.value], false),
            },
            Expr::Starred(s) => self.expr(&s.value),
            _ => AVal::top(),
        }
    }

    /// An element of a literal: `*xs` spreads the elements of `xs`.
    fn expr_elem(&mut self, e: &'a Expr) -> AVal {
        match e {
            Expr::Starred(s) => {
                let v = self.expr(&s.value);
                self.element(&v, None)
            }
            _ => self.expr(e),
        }
    }

    fn binop(&mut self, at: usize, l: &AVal, r: &AVal) -> AVal {
        let may = self.deep_may(l).join(&self.deep_may(r)).computed();
        // Scalars: the join of both, computed. Sequences: a new container whose structure joins both
        // operands' structures (and so their reference labels); structures never carry kinds.
        let must = l.must.join(&r.must).computed();
        if l.shape == Shape::Scalar && r.shape == Shape::Scalar {
            return AVal::scalar(may, must);
        }
        let kids: BTreeSet<usize> = self
            .reach(&l.sites)
            .union(&self.reach(&r.sites))
            .copied()
            .collect();
        let mut v = self.opaque_container(at, 1, may.clone(), kids);
        v.may = may;
        v.must = must;
        v
    }

    /// `keyed`: a set or dict comprehension, whose first element is a key: equal keys collapse, so every
    /// key's label decides the result's length and joins its structure (the structure invariant).
    fn comprehension(
        &mut self,
        at: usize,
        generators: &'a [ruff_python_ast::Comprehension],
        elts: &[&'a Expr],
        keyed: bool,
    ) -> AVal {
        let parent = self.frames.len() - 1;
        self.push_frame(Env::new(), Some(parent));
        let (ps_may, ps_must) = (self.pc_may.clone(), self.pc_must.clone());
        let mut structure_may = neutral();
        for g in generators {
            let it = self.expr(&g.iter);
            let (e, sm, su) = self.iteration(&it);
            self.pc_may = self.pc_may.join(&sm);
            self.pc_must = self.pc_must.join(&su);
            structure_may = structure_may.join(&sm);
            self.assign(&g.target, e);
            for cond in &g.ifs {
                let c = self.expr(cond);
                let (cm, cu) = self.cond(&c);
                self.pc_may = self.pc_may.join(&cm);
                self.pc_must = self.pc_must.join(&cu);
                structure_may = structure_may.join(&cm);
            }
        }
        let mut elems = Vec::new();
        for e in elts {
            let v = self.expr(e);
            // Each element is produced under the comprehension's pc.
            elems.push(AVal {
                may: v.may.join(&self.pc_may),
                ..v
            });
        }
        if keyed && let Some(k) = elems.first() {
            structure_may = structure_may.join(&self.deep_may(k));
        }
        self.pc_may = ps_may;
        self.pc_must = ps_must;
        self.frames.pop();
        let mut obj = HeapObj::empty(
            Label::literal().join(&structure_may).join(&self.pc_may),
            must_bottom(),
        );
        for e in &elems {
            obj.add_elem(e);
        }
        obj.elem_may = obj.elem_may.join(&structure_may);
        let s = self.alloc(at, 0, obj);
        AVal {
            sites: BTreeSet::from([s]),
            shape: Shape::Container,
            ..AVal::literal()
        }
    }

    // ---- calls ----------------------------------------------------------------------------------------

    fn call(&mut self, c: &'a ExprCall) -> AVal {
        let at = c.range().start().to_usize();
        match c.func.as_ref() {
            Expr::Name(n) => {
                let name = n.id.as_str();
                if let Some(f) = self.lookup(name).cloned() {
                    let args = self.args(c);
                    return self.call_value(at, &f, args);
                }
                if self.policy.tool(name).is_some() {
                    return self.tool_call(c, name);
                }
                if let Some(v) = self.policy.verifier(name) {
                    let kind = self.space.kind_index(v.mints());
                    let args = self.args(c);
                    self.note_source(at, name);
                    // `or_none=True`: a value that fails gives None with the value's own label.
                    let or_none = c.arguments.keywords.iter().any(|k| {
                        k.arg.as_ref().is_some_and(|a| a.as_str() == "or_none")
                            && matches!(&k.value, Expr::BooleanLiteral(b) if b.value)
                    });
                    let positional: Vec<&AVal> = args
                        .iter()
                        .filter(|(n, _)| n.is_none())
                        .map(|(_, a)| a)
                        .collect();
                    return match (positional.as_slice(), kind) {
                        ([a], Some(k)) => {
                            let minted = AVal {
                                may: a.may.mint(k),
                                must: a.must.mint(k),
                                sites: BTreeSet::new(),
                                funcs: BTreeSet::new(),
                                shape: Shape::Scalar,
                                texts: a.texts.clone(),
                            };
                            if or_none {
                                self.last_minted = Some(minted.clone());
                                minted.merge(&AVal::scalar(a.may.clone(), a.must.clone()))
                            } else {
                                minted
                            }
                        }
                        // The runtime stops the plan with an error: nothing flows on.
                        _ => AVal::literal(),
                    };
                }
                let args = self.args(c);
                self.builtin(at, name, None, None, args)
            }
            Expr::Attribute(a) => {
                let method = a.attr.id.as_str();
                if let Expr::Name(m) = a.value.as_ref()
                    && catalogue::MODULES.contains(&m.id.as_str())
                    && self.lookup(m.id.as_str()).is_none()
                {
                    let args = self.args(c);
                    return self.builtin(at, method, Some(m.id.as_str()), None, args);
                }
                let recv = self.expr(&a.value);
                let args = self.args(c);
                self.builtin(at, method, None, Some(recv), args)
            }
            other => {
                let f = self.expr(other);
                let args = self.args(c);
                self.call_value(at, &f, args)
            }
        }
    }

    fn args(&mut self, c: &'a ExprCall) -> Vec<(Option<String>, AVal)> {
        let mut out = Vec::new();
        for a in c.arguments.args.iter() {
            let v = self.expr(a);
            let v = match a {
                Expr::Starred(_) => self.element(&v, None),
                _ => v,
            };
            out.push((None, v));
        }
        for k in c.arguments.keywords.iter() {
            let v = self.expr(&k.value);
            out.push((k.arg.as_ref().map(|a| a.id.to_string()), v));
        }
        out
    }

    fn note_source(&mut self, at: usize, name: &str) -> u32 {
        if let Some(id) = self.source_of.get(&at) {
            return *id;
        }
        let id = u32::try_from(self.source_names.len() + 1).unwrap_or(u32::MAX);
        self.source_of.insert(at, id);
        self.source_names.insert(id, (name.to_string(), at));
        self.space.record_call(id, name);
        id
    }

    /// Calls a function value: every plan function it may be is analysed with these arguments.
    fn call_value(&mut self, at: usize, f: &AVal, args: Vec<(Option<String>, AVal)>) -> AVal {
        if f.funcs.is_empty() {
            // Not a function: the runtime raises. A builtin passed as a value lands here too.
            let may = args
                .iter()
                .fold(f.may.clone(), |l, (_, a)| l.join(&self.deep_may(a)))
                .computed();
            return AVal::scalar(may, must_bottom());
        }
        if self.fns.len() >= MAX_CALL_DEPTH {
            self.imprecise
                .push((at, "plan functions nest too deeply to follow"));
            return self.give_up(&args);
        }
        let mut out: Option<AVal> = None;
        let ids: Vec<usize> = f.funcs.iter().copied().collect();
        for id in ids {
            let r = self.invoke(id, f, &args);
            out = Some(match out {
                Some(o) => o.merge(&r),
                None => r,
            });
        }
        out.unwrap_or_else(AVal::top)
    }

    /// The sound answer when a call cannot be followed: anything reachable may be changed by anything.
    fn give_up(&mut self, args: &[(Option<String>, AVal)]) -> AVal {
        let mut roots = BTreeSet::new();
        for (_, a) in args {
            roots.extend(a.sites.iter().copied());
        }
        for f in &self.frames {
            for v in f.env.values() {
                roots.extend(v.sites.iter().copied());
            }
        }
        for s in self.reach(&roots) {
            self.update(s, |h| {
                h.struct_may = may_top();
                h.elem_may = may_top();
                h.texts = None;
            });
        }
        AVal::top()
    }

    fn invoke(&mut self, id: usize, f: &AVal, args: &[(Option<String>, AVal)]) -> AVal {
        let Some(func) = self.funcs.get(id) else {
            return AVal::top();
        };
        let params = func.params.clone();
        // The enclosing scope, if it is still active; a closure that outlived it sees no free names
        // (each is `top`), which is sound.
        let parent = self.frames.iter().position(|f| f.serial == func.frame);
        let body = func.body;
        let mut env = Env::new();
        let mut positional = args.iter().filter(|(k, _)| k.is_none());
        for p in &params {
            let v = match args.iter().find(|(k, _)| k.as_deref() == Some(p.as_str())) {
                Some((_, v)) => Some(v.clone()),
                None => positional.next().map(|(_, v)| v.clone()),
            };
            // A missing argument raises at run time; nothing flows.
            env.insert(p.clone(), v.unwrap_or_else(AVal::literal));
        }
        let (ps_may, ps_must) = (self.pc_may.clone(), self.pc_must.clone());
        let (fm, fu) = (f.may.influence(), f.must.influence());
        self.pc_may = ps_may.join(&fm);
        self.pc_must = ps_must.join(&fu);
        self.push_frame(env, parent);
        let saved_loops = std::mem::take(&mut self.loops);
        let result = match body {
            FuncBody::Expr(e) => {
                let v = self.expr(e);
                self.returned(v)
            }
            FuncBody::Stmts(body) => {
                self.fns.push(FnCtx { ret: None });
                self.block(body);
                let ret = self.fns.pop().and_then(|f| f.ret);
                let falls_off = !matches!(body.last(), Some(Stmt::Return(_)));
                match (ret, falls_off) {
                    (Some(r), false) => r,
                    (Some(r), true) => r.merge(&AVal::literal()),
                    (None, _) => AVal::literal(),
                }
            }
        };
        self.loops = saved_loops;
        self.frames.pop();
        self.pc_may = ps_may;
        self.pc_must = ps_must;
        result
    }

    fn tool_call(&mut self, c: &'a ExprCall, tool: &str) -> AVal {
        let at = c.range().start().to_usize();
        let names = self
            .policy
            .tool(tool)
            .map(|t| t.arg_names())
            .unwrap_or_default();
        let mut bound: Vec<(String, &'a Expr, AVal)> = Vec::new();
        let mut lists: Vec<Option<Vec<Label>>> = Vec::new();
        for (i, a) in c.arguments.args.iter().enumerate() {
            self.last_list = None;
            let v = self.expr(a);
            lists.push(self.list_literal(a));
            let name = names.get(i).cloned().unwrap_or_else(|| format!("#{i}"));
            bound.push((name, a, v));
        }
        for k in c.arguments.keywords.iter() {
            self.last_list = None;
            let v = self.expr(&k.value);
            lists.push(self.list_literal(&k.value));
            let name = k
                .arg
                .as_ref()
                .map_or_else(|| "**".to_string(), |a| a.id.to_string());
            bound.push((name, &k.value, v));
        }
        let id = self.note_source(at, tool);
        let args: Vec<ArgAcc> = bound
            .iter()
            .zip(lists)
            .map(|((name, e, v), list)| ArgAcc {
                elem_labels: list,
                ..self.arg_acc(name, e, v)
            })
            .collect();
        let pc_may = self.pc_may.clone();
        let pc_must = self.pc_must.clone();
        let site = self.sites.entry(at).or_insert_with(|| SiteAcc {
            tool: tool.to_string(),
            start: at,
            end: c.range().end().to_usize(),
            args: Vec::new(),
            pc_may: Label::literal(),
            pc_must: pc_must.clone(),
            visits: 0,
            control: None,
        });
        if site.control.is_none() {
            site.control = self
                .controls
                .iter()
                .find(|c| c.test_may.integrity == Integrity::Untrusted)
                .cloned();
        }
        if site.visits == 0 {
            site.args = args;
            site.pc_may = pc_may;
            site.pc_must = pc_must;
        } else {
            for (old, new) in site.args.iter_mut().zip(args) {
                old.val = old.val.merge(&new.val);
                old.struct_may = match (old.struct_may.take(), new.struct_may) {
                    (Some(a), Some(b)) => Some(a.join(&b)),
                    (a, b) => a.or(b),
                };
                old.elems_may = match (old.elems_may.take(), new.elems_may) {
                    (Some(a), Some(b)) => Some(a.join(&b)),
                    (a, b) => a.or(b),
                };
                // The same literal on every visit: element i joins element i.
                old.elem_labels = match (old.elem_labels.take(), new.elem_labels) {
                    (Some(a), Some(b)) if a.len() == b.len() => {
                        Some(a.iter().zip(&b).map(|(x, y)| x.join(y)).collect())
                    }
                    _ => None,
                };
                old.claim_must = meet(&old.claim_must, &new.claim_must);
                old.texts = match (old.texts.take(), new.texts) {
                    (Some(a), Some(b)) => Some(a.union(&b).cloned().collect()),
                    _ => None,
                };
            }
            site.pc_may = site.pc_may.join(&pc_may);
            site.pc_must = meet(&site.pc_must, &pc_must);
        }
        site.visits += 1;

        let mut args_may = bound
            .iter()
            .fold(Label::literal(), |l, (_, _, v)| l.join(&self.deep_may(v)));
        // `returns.tags_when`: every tag a path the call may ask for can add (all of them for an unknown path).
        let rules = self
            .policy
            .tool(tool)
            .and_then(|t| t.returns().tags_when)
            .unwrap_or_default();
        let texts = |arg: &str| -> Option<Vec<String>> {
            match bound.iter().find(|(n, _, _)| n == arg) {
                Some((_, _, v)) => v.texts.as_ref().map(|t| t.iter().cloned().collect()),
                None => Some(Vec::new()),
            }
        };
        let by_path = crate::policy::path_tags::tags_may(&rules, &texts);
        args_may.tags = TagSet(args_may.tags.0 | self.tags(&by_path).0);
        let must_tags = self.tags(&crate::policy::path_tags::tags_must(&rules, &texts));
        self.tool_result(at, id, tool, &args_may, must_tags)
    }

    /// The element labels of an argument written as a list literal without `*`, just evaluated. The caller
    /// clears `last_list` before evaluating the argument, so an evaluation cut short (budget exhausted)
    /// yields `None` (the joined reading), never labels left over from another list.
    fn list_literal(&mut self, e: &Expr) -> Option<Vec<Label>> {
        let last = self.last_list.take();
        match e {
            Expr::List(l) if !l.elts.iter().any(|x| matches!(x, Expr::Starred(_))) => last,
            _ => None,
        }
    }

    fn arg_acc(&self, name: &str, e: &Expr, v: &AVal) -> ArgAcc {
        let (struct_may, elems_may) = if v.sites.is_empty() {
            (None, None)
        } else {
            let mut elems = neutral();
            for &s in &v.sites {
                elems = elems.join(&self.heap[s].elem_may);
                for k in self.reach(&self.heap[s].kids) {
                    elems = elems
                        .join(&self.heap[k].struct_may)
                        .join(&self.heap[k].elem_may);
                }
            }
            (Some(self.struct_may(v)), Some(elems))
        };
        let texts = if v.sites.is_empty() {
            v.texts.clone()
        } else {
            let mut t = match v.shape {
                Shape::Container => Some(BTreeSet::new()),
                _ => v.texts.clone(),
            };
            for &s in &v.sites {
                t = match (t, &self.heap[s].texts) {
                    (Some(a), Some(b)) => Some(a.union(b).cloned().collect()),
                    _ => None,
                };
            }
            t
        };
        ArgAcc {
            name: name.to_string(),
            start: e.range().start().to_usize(),
            end: e.range().end().to_usize(),
            val: v.clone(),
            struct_may,
            elems_may,
            claim_must: self.claim_must(v),
            texts,
            elem_labels: None,
        }
    }

    /// A tool's result, labelled as `label_result` will label it, bounded over every shape it may have.
    /// `must_tags`: tags the call certainly adds (`returns.tags_when` on a known path).
    fn tool_result(
        &mut self,
        at: usize,
        id: u32,
        tool: &str,
        args_may: &Label,
        must_tags: TagSet,
    ) -> AVal {
        let Some(spec) = self.policy.tool(tool) else {
            return AVal::top();
        };
        let r = spec.returns();
        let untrusted = r.integrity != Some(IntegritySpec::Trusted);
        let base_tags = self.tags(r.tags.as_deref().unwrap_or_default());
        let (readers_may, readers_must) = match &r.readers {
            Some(ReadersSpec::Public) => (Readers::Public, Readers::Public),
            Some(ReadersSpec::List(names)) => {
                let set: BTreeSet<u16> = names
                    .iter()
                    .filter_map(|n| self.space.principal(n))
                    .collect();
                (Readers::Only(set.clone()), Readers::Only(set))
            }
            // Fewest readers: a record without the fields has only the `also` principals (and the user).
            Some(ReadersSpec::FromFields { also, .. }) => (
                Readers::Only(
                    also.iter()
                        .filter_map(|n| self.space.principal(n))
                        .collect(),
                ),
                Readers::Public,
            ),
            Some(ReadersSpec::User) | None => (
                Readers::Only(BTreeSet::new()),
                Readers::Only(BTreeSet::new()),
            ),
        };
        // A declared `structure_readers` labels a list result's structure; the same call may return a dict
        // (labelled with `readers`), so the bounds cover both: fewest readers for `may`, most for `must`.
        let (readers_may, readers_must) = match &r.structure_readers {
            Some(declared) => {
                let s = match declared {
                    ReadersSpec::Public => Readers::Public,
                    ReadersSpec::List(names) => Readers::Only(
                        names
                            .iter()
                            .filter_map(|n| self.space.principal(n))
                            .collect(),
                    ),
                    ReadersSpec::User | ReadersSpec::FromFields { .. } => {
                        Readers::Only(BTreeSet::new())
                    }
                };
                let fewest = match (&readers_may, &s) {
                    (Readers::Public, r) | (r, Readers::Public) => r.clone(),
                    (Readers::Only(a), Readers::Only(b)) => {
                        Readers::Only(a.intersection(b).copied().collect())
                    }
                };
                let most = match (&readers_must, &s) {
                    (Readers::Only(a), Readers::Only(b)) => {
                        Readers::Only(a.union(b).copied().collect())
                    }
                    _ => Readers::Public,
                };
                (fewest, most)
            }
            None => (readers_may, readers_must),
        };
        let make = |untrusted: bool, tags: TagSet, readers: Readers| Label {
            integrity: if untrusted {
                Integrity::Untrusted
            } else {
                Integrity::Trusted
            },
            verified: KindSet::NONE,
            tags,
            readers,
            sources: BTreeSet::from([id]),
            unknown: false,
        };
        let top_may = make(untrusted, base_tags, readers_may.clone()).join(args_may);
        let top_must = Label {
            sources: BTreeSet::new(),
            ..make(
                untrusted,
                TagSet(base_tags.0 | must_tags.0),
                readers_must.clone(),
            )
        };
        let mut elem_may = top_may.clone();
        let mut elem_must = top_must.clone();
        if let Some(fields) = &r.fields {
            for (_, f) in fields.iter() {
                let fu = match f.integrity {
                    Some(IntegritySpec::Trusted) => false,
                    Some(IntegritySpec::Untrusted) => true,
                    None => untrusted,
                };
                let ft = match &f.tags {
                    Some(t) => self.tags(t),
                    None => base_tags,
                };
                elem_may = elem_may.join(&make(fu, ft, readers_may.clone()));
                elem_must = meet(
                    &elem_must,
                    &Label {
                        sources: BTreeSet::new(),
                        ..make(fu, TagSet(ft.0 | must_tags.0), readers_must.clone())
                    },
                );
            }
        }
        let mut obj = HeapObj::empty(top_may.clone(), top_must.clone());
        obj.elem_may = elem_may;
        obj.elem_must = Some(elem_must);
        obj.texts = None;
        let s = self.alloc(at, 2, obj);
        self.update(s, |h| {
            h.kids.insert(s);
        });
        AVal {
            may: top_may,
            must: top_must,
            sites: BTreeSet::from([s]),
            funcs: BTreeSet::new(),
            shape: Shape::Mixed,
            texts: None,
        }
    }

    fn tags(&self, names: &[String]) -> TagSet {
        // A tag the policy does not declare was refused when the policy was loaded.
        TagSet(
            names
                .iter()
                .filter_map(|n| self.space.tag_index(n))
                .fold(0u16, |acc, i| acc | (1 << i)),
        )
    }

    /// Builtins, `json`/`re` functions (`module`) and methods (`recv`), by their catalogue row.
    fn builtin(
        &mut self,
        at: usize,
        name: &str,
        module: Option<&str>,
        recv: Option<AVal>,
        args: Vec<(Option<String>, AVal)>,
    ) -> AVal {
        let inputs_may = args
            .iter()
            .fold(Label::literal(), |l, (_, a)| l.join(&self.deep_may(a)));
        let all_may = match &recv {
            Some(r) => inputs_may.join(&self.deep_may(r)),
            None => inputs_may.clone(),
        };
        // Function values given to map/filter/sorted/min/max/sort run on the elements, as the body of a loop
        // over the container (catalogue rows with a callback).
        let fn_results = self.callbacks(at, name, recv.as_ref(), &args);
        let all_may = all_may.join(&fn_results);
        // A checked plan calls only catalogue entries; were another to reach here, `Opaque` claims nothing
        // certain of its result, which is sound.
        let (yields, mutation) = match (&recv, module) {
            (Some(_), _) => catalogue::method_row(name).map(|m| (m.yields, m.mutation)),
            (None, Some(m)) => catalogue::module_fn_row(m, name).map(|f| (f.yields, None)),
            (None, None) => catalogue::builtin_row(name).map(|b| (b.yields, None)),
        }
        .unwrap_or((Yields::Opaque, None));
        if let (Some(r), Some(mutation)) = (&recv, mutation)
            && !r.sites.is_empty()
        {
            self.mutation(r, mutation, &args, &all_may);
        }
        self.yields(at, yields, recv.as_ref(), &args, all_may)
    }

    /// A mutating method's effect on its receiver `r` (catalogue `Mutation`).
    fn mutation(
        &mut self,
        r: &AVal,
        mutation: Mutation,
        args: &[(Option<String>, AVal)],
        all_may: &Label,
    ) {
        let arg = |i: usize| args.get(i).map(|(_, a)| a.clone());
        let extra = match mutation.extra {
            Extra::Nothing => Label::literal(),
            Extra::IndexInfluence => arg(0)
                .map(|a| self.deep_may(&a).influence())
                .unwrap_or_else(Label::literal),
            Extra::Inputs => all_may.clone(),
        };
        self.mutate(r, &extra);
        match mutation.adds {
            Adds::Nothing => {}
            Adds::First => {
                if let Some(a) = arg(0) {
                    self.add_elem(r, &a);
                }
            }
            Adds::Second | Adds::SecondAndKey => {
                if let Some(a) = arg(1) {
                    self.add_elem(r, &a);
                }
                if mutation.adds == Adds::SecondAndKey
                    && let Some(k) = arg(0)
                {
                    self.add_elem(r, &k);
                }
            }
            Adds::ElementsOfFirst => {
                if let Some(a) = arg(0) {
                    let e = self.element(&a, None);
                    self.add_elem(r, &e);
                }
                for (_, a) in args.iter().filter(|(k, _)| k.is_some()) {
                    self.add_elem(r, a);
                }
            }
        }
    }

    /// The result of a catalogue entry: its row's `Yields`, the lint's transfer function.
    fn yields(
        &mut self,
        at: usize,
        yields: Yields,
        recv: Option<&AVal>,
        args: &[(Option<String>, AVal)],
        all_may: Label,
    ) -> AVal {
        let arg = |i: usize| args.get(i).map(|(_, a)| a.clone());
        // Every input's certain label: the receiver's and the arguments'.
        let all_must = || {
            args.iter()
                .fold(
                    recv.map_or_else(Label::literal, |r| r.must.clone()),
                    |l, (_, a)| l.join(&a.must),
                )
                .computed()
        };
        let kids = |me: &Self| {
            let mut sites: BTreeSet<usize> =
                args.iter().flat_map(|(_, a)| a.sites.clone()).collect();
            if let Some(r) = recv {
                sites.extend(r.sites.iter().copied());
            }
            me.reach(&sites)
        };
        match yields {
            Yields::ScalarOfFirst => {
                let must = arg(0).map_or_else(must_bottom, |a| a.must.computed());
                AVal::scalar(all_may.computed(), must)
            }
            // `len(xs)`: the structure label, as the runtime takes it (the structure invariant).
            Yields::ScalarOfStructure => match arg(0) {
                Some(a) => AVal::scalar(
                    self.struct_may(&a).computed(),
                    self.claim_must(&a).computed(),
                ),
                None => AVal::scalar(all_may.computed(), must_bottom()),
            },
            // These run only on a string (or, `count`/`index`, on a list whose whole content joins in), so
            // the result carries at least the receiver's and the arguments' labels.
            Yields::ScalarOfAll => AVal::scalar(all_may.computed(), all_must()),
            Yields::Scalar => AVal::scalar(all_may.computed(), must_bottom()),
            Yields::Nothing => AVal::literal(),
            Yields::OneOfElements => {
                // One of the elements (or a default): it may be any container the arguments hold.
                AVal {
                    may: all_may.computed(),
                    must: must_bottom(),
                    sites: kids(self),
                    funcs: BTreeSet::new(),
                    shape: Shape::Mixed,
                    texts: None,
                }
            }
            Yields::Element { or_none } => {
                let Some(r) = recv else {
                    return AVal::scalar(all_may.computed(), must_bottom());
                };
                let args_may = args
                    .iter()
                    .fold(Label::literal(), |l, (_, a)| l.join(&self.deep_may(a)));
                let key = arg(0);
                let mut e = self.element(r, key.as_ref());
                if let Some(d) = arg(1) {
                    let (cm, cu) = (
                        self.struct_may(r).join(&args_may).influence(),
                        self.claim_must(r).influence(),
                    );
                    e = e.merge(&d.raised(&cm, &cu));
                }
                if or_none && arg(1).is_none() {
                    e = e.merge(&AVal::literal());
                }
                if r.shape != Shape::Container {
                    e.must = must_bottom();
                }
                e.may = e.may.join(&args_may.influence());
                e
            }
            Yields::Strings => {
                let may = all_may.computed();
                let must = all_must();
                let mut obj = HeapObj::empty(may.clone(), must.clone());
                obj.elem_may = may.clone();
                obj.elem_must = Some(must.clone());
                obj.texts = None;
                let s = self.alloc(at, 0, obj);
                AVal {
                    may,
                    must,
                    sites: BTreeSet::from([s]),
                    funcs: BTreeSet::new(),
                    shape: Shape::Mixed,
                    texts: None,
                }
            }
            Yields::Container | Yields::Opaque => {
                let kids = kids(self);
                let mut v = self.opaque_container(at, 1, all_may.clone(), kids);
                v.may = all_may.computed();
                if yields == Yields::Container {
                    v.shape = Shape::Container;
                }
                v
            }
        }
    }

    /// Runs the function values among `args` the way the runtime does: for a catalogue entry that calls plan
    /// code (catalogue rows with a callback), as the body of a loop over the container it iterates — `pc` joins that
    /// container's structure, each element carries it, and the body is repeated until the heap settles,
    /// like a `for` loop's. A function value anywhere else is called once on every element (the runtime
    /// raises there; this is only the conservative reading). Returns the join of the results' labels.
    fn callbacks(
        &mut self,
        at: usize,
        name: &str,
        recv: Option<&AVal>,
        args: &[(Option<String>, AVal)],
    ) -> Label {
        let fn_vals: Vec<AVal> = args
            .iter()
            .filter(|(_, a)| !a.funcs.is_empty())
            .map(|(_, a)| a.clone())
            .collect();
        if fn_vals.is_empty() {
            return Label::literal();
        }
        let data: Vec<&AVal> = args
            .iter()
            .filter(|(k, a)| k.is_none() && a.funcs.is_empty())
            .map(|(_, a)| a)
            .collect();
        // The containers iterated, and the values given to the function (each an element, or an argument).
        let (iterated, given): (Vec<&AVal>, Vec<AVal>) =
            match crate::plan::subset::callback(name, recv.is_some()).map(|c| c.over) {
                Some(Over::TheReceiver) => match recv {
                    Some(r) => (vec![r], vec![self.element(r, None)]),
                    None => (vec![], vec![]),
                },
                Some(Over::TheArgument) if data.len() != 1 => {
                    (vec![], data.iter().map(|a| (*a).clone()).collect())
                }
                Some(Over::TheArgument | Over::TheRest) => (
                    data.clone(),
                    data.iter().map(|a| self.element(a, None)).collect(),
                ),
                None => {
                    let mut given: Vec<AVal> = args
                        .iter()
                        .filter(|(_, a)| a.funcs.is_empty())
                        .map(|(_, a)| self.element(a, None))
                        .collect();
                    if let Some(r) = recv {
                        given.push(self.element(r, None));
                    }
                    (vec![], given)
                }
            };
        let (mut s_may, mut s_must) = (neutral(), neutral());
        for c in &iterated {
            let (m, u) = self.cond(c);
            s_may = s_may.join(&m);
            s_must = s_must.join(&u);
        }
        let elem = given
            .iter()
            .fold(None::<AVal>, |acc, e| {
                Some(match acc {
                    Some(a) => a.merge(e),
                    None => e.clone(),
                })
            })
            .unwrap_or_else(AVal::literal)
            .raised(&s_may, &s_must);
        let (ps_may, ps_must) = (self.pc_may.clone(), self.pc_must.clone());
        self.pc_may = ps_may.join(&s_may);
        self.pc_must = ps_must.join(&s_must);
        let mut results = Label::literal();
        let mut rounds = 0;
        loop {
            rounds += 1;
            let before = self.heap_version;
            for f in &fn_vals {
                let r = self.call_value(at, f, vec![(None, elem.clone()), (None, elem.clone())]);
                results = results.join(&self.deep_may(&r));
            }
            if self.heap_version == before || self.exhausted() {
                break;
            }
            if rounds >= MAX_LOOP_ITERATIONS {
                // What the callbacks may change still grows: everything reachable becomes `top`.
                self.imprecise.push((at, "callback"));
                let everything: Vec<(Option<String>, AVal)> = args
                    .iter()
                    .cloned()
                    .chain(recv.map(|r| (None, r.clone())))
                    .collect();
                self.give_up(&everything);
                results = may_top();
                break;
            }
        }
        self.pc_may = ps_may;
        self.pc_must = ps_must;
        results
    }
}

/// Whether a block calls a plan function (by name) or a function value, outside nested scopes.
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
