//! Calls, beside `src/lower/compiler/call.rs`: plan functions and function values (inlined up to a depth),
//! verifiers, tool calls (what each call site records, and the result the policy's `returns` gives), and
//! catalogue entries — builtins, `json`/`re` functions and methods, by their row's `Yields` and `Mutation`,
//! with the callbacks some of them run as the body of a loop.

use std::collections::BTreeSet;

use ruff_python_ast::{Expr, ExprCall, Stmt};
use ruff_text_size::Ranged;

use super::{ArgAcc, Env, FnCtx, FuncBody, Interp, MAX_CALL_DEPTH, MAX_LOOP_ITERATIONS, SiteAcc};
use crate::analysis::domain::{AVal, HeapObj, Shape, may_top, meet, must_bottom, neutral};
use crate::label::{Integrity, KindSet, Label, Readers, TagSet};
use crate::plan::catalogue::{self, Adds, Extra, Mutation, Yields};
use crate::plan::subset::Over;
use crate::policy::model::{IntegritySpec, ReadersSpec};

impl<'a> Interp<'a> {
    // ---- calls ----------------------------------------------------------------------------------------

    pub(super) fn call(&mut self, c: &'a ExprCall) -> AVal {
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
                    // Whether the run stops here is the value's to decide when the plan did not write
                    // it: a stop in the error form suppresses every later effect (docs/lint.md, Z206).
                    if !or_none
                        && let [a] = positional.as_slice()
                        && !a.may.is_clean()
                    {
                        self.stops
                            .entry(at)
                            .or_insert_with(|| (name.to_string(), kind));
                    }
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
                self.catalogue_call(at, name, None, None, args)
            }
            Expr::Attribute(a) => {
                let method = a.attr.id.as_str();
                if let Expr::Name(m) = a.value.as_ref()
                    && catalogue::MODULES.contains(&m.id.as_str())
                    && self.lookup(m.id.as_str()).is_none()
                {
                    let args = self.args(c);
                    return self.catalogue_call(at, method, Some(m.id.as_str()), None, args);
                }
                let recv = self.expr(&a.value);
                let args = self.args(c);
                self.catalogue_call(at, method, None, Some(recv), args)
            }
            other => {
                let f = self.expr(other);
                let args = self.args(c);
                self.call_value(at, &f, args)
            }
        }
    }

    /// The arguments of a call in order, positional (`None`; `*xs` gives one of its elements) then by
    /// keyword (the compiler's `exprs` and `keywords`).
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

    /// The source id of the call at `at`, once the analysis has reached it.
    pub fn source_at(&self, at: usize) -> Option<u32> {
        self.source_of.get(&at).copied()
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
        let defaults = func.defaults.clone();
        // The enclosing scope, if it is still active; a closure that outlived it sees no free names
        // (each is `top`), which is sound.
        let parent = self.frames.iter().position(|f| f.serial == func.frame);
        let body = func.body;
        let mut env = Env::new();
        let mut positional = args.iter().filter(|(k, _)| k.is_none());
        for (p, default) in params.iter().zip(defaults) {
            let v = match args.iter().find(|(k, _)| k.as_deref() == Some(p.as_str())) {
                Some((_, v)) => Some(v.clone()),
                None => positional.next().map(|(_, v)| v.clone()),
            };
            // An argument not passed takes the default the definition evaluated, with its label (and, in
            // a planner context, the literal label it was written with); one without a default raises at
            // run time, and nothing flows.
            env.insert(p.clone(), v.or(default).unwrap_or_else(AVal::literal));
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
                    (Some(r), true) => r.merge(&self.lit_val()),
                    (None, _) => self.lit_val(),
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
        let mut by_path = crate::policy::path_tags::tags_may(&rules, &texts);
        // `returns.scan`: lint cannot read the result, so every scanner's tag may be added (never must).
        let scanners = self
            .policy
            .tool(tool)
            .and_then(|t| t.returns().scan)
            .unwrap_or_default();
        by_path.extend(scanners.iter().map(|s| s.tag().to_string()));
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
    fn catalogue_call(
        &mut self,
        at: usize,
        name: &str,
        module: Option<&str>,
        recv: Option<AVal>,
        args: Vec<(Option<String>, AVal)>,
    ) -> AVal {
        let inputs_may = args
            .iter()
            .fold(self.lit(), |l, (_, a)| l.join(&self.deep_may(a)));
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
            Extra::Nothing => self.lit(),
            Extra::IndexInfluence => arg(0)
                .map(|a| self.deep_may(&a).influence())
                .unwrap_or_else(|| self.lit()),
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
            Yields::Nothing => self.lit_val(),
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
                    .fold(self.lit(), |l, (_, a)| l.join(&self.deep_may(a)));
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
                    e = e.merge(&self.lit_val());
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
            return self.lit();
        }
        let data: Vec<&AVal> = args
            .iter()
            .filter(|(k, a)| k.is_none() && a.funcs.is_empty())
            .map(|(_, a)| a)
            .collect();
        // The containers iterated, and the values given to the function (each an element, or an argument).
        let over = crate::plan::subset::callback(name, recv.is_some()).map(|c| c.over);
        // How many arguments each call of the function gets: one element of each container zipped
        // (`map(f, xs, ys)`), else one. A parameter past them takes its default, as at run time. A function
        // value given to anything else is refused at run time; two arguments there are only a reading.
        let arity = match over {
            Some(Over::TheRest) => data.len().max(1),
            Some(Over::TheArgument | Over::TheReceiver) => 1,
            None => 2,
        };
        let (iterated, given): (Vec<&AVal>, Vec<AVal>) = match over {
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
        let mut results = self.lit();
        let mut rounds = 0;
        loop {
            rounds += 1;
            let before = self.heap_version;
            for f in &fn_vals {
                let r = self.call_value(at, f, vec![(None, elem.clone()); arity]);
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
