//! Expressions, beside `src/lower/compiler/expr.rs`: names and literals, operators and comparisons,
//! `and`/`or` and the ternary (which join the choice), container displays, subscripts and slices,
//! f-strings, `:=`, lambdas and comprehensions.

use std::collections::BTreeSet;

use ruff_python_ast::{Expr, ExprFString, ExprLambda, InterpolatedStringElement, UnaryOp};
use ruff_text_size::Ranged;

use super::{Env, FuncBody, Interp};
use crate::analysis::domain::{AVal, HeapObj, Shape, must_bottom, neutral};

impl<'a> Interp<'a> {
    // ---- expressions ----------------------------------------------------------------------------------

    fn load_name(&self, name: &str) -> AVal {
        match self.lookup(name) {
            Some(v) => v.clone(),
            // A builtin used as a value (`map(str, xs)`) carries no data.
            None if crate::plan::subset::is_builtin(name) => self.lit_val(),
            // Not bound on the paths analysed (or a closure's scope is gone): assume the worst.
            None => AVal::top(),
        }
    }

    pub(super) fn expr(&mut self, e: &'a Expr) -> AVal {
        if self.exhausted() {
            return AVal::top();
        }
        let at = e.range().start().to_usize();
        match e {
            Expr::StringLiteral(s) => AVal {
                texts: Some(BTreeSet::from([s.value.to_str().to_string()])),
                ..self.lit_val()
            },
            Expr::NumberLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::EllipsisLiteral(_)
            | Expr::BytesLiteral(_) => self.lit_val(),
            Expr::Name(n) => self.load_name(n.id.as_str()),
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
                    .fold(self.lit(), |l, v| l.join(&self.deep_may(v)))
                    .computed();
                let must = vals
                    .iter()
                    .fold(must_bottom(), |l, v| l.join(&v.must))
                    .computed();
                AVal::scalar(may, must)
            }
            Expr::List(l) => {
                let elems: Vec<AVal> = l.elts.iter().map(|x| self.expr_elem(x)).collect();
                let obj = HeapObj::empty(self.lit(), must_bottom());
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
                let obj = HeapObj::empty(self.lit(), must_bottom());
                self.container(at, 0, obj, &elems)
            }
            Expr::Set(l) => {
                let elems: Vec<AVal> = l.elts.iter().map(|x| self.expr_elem(x)).collect();
                let structure = elems
                    .iter()
                    .fold(self.lit(), |acc, v| acc.join(&self.deep_may(v)));
                let obj = HeapObj::empty(structure, must_bottom());
                self.container(at, 0, obj, &elems)
            }
            Expr::Dict(d) => {
                let mut elems = Vec::new();
                let mut structure = self.lit();
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
                    let mut bounds = self.lit();
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
            Expr::FString(f) => self.fstring(f),
            Expr::Call(c) => self.call(c),
            Expr::Named(n) => {
                let v = self.expr(&n.value);
                self.assign(&n.target, v.clone());
                v
            }
            Expr::Lambda(l) => self.lambda(l),
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

    pub(super) fn binop(&mut self, at: usize, l: &AVal, r: &AVal) -> AVal {
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

    /// An f-string: a computed scalar joining every interpolated value (deeply) and its format spec's.
    fn fstring(&mut self, f: &'a ExprFString) -> AVal {
        let mut may = self.lit();
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

    /// A lambda: a function value (its body is analysed at each call).
    fn lambda(&mut self, l: &'a ExprLambda) -> AVal {
        let at = l.range().start().to_usize();
        // A lambda has no defaults: the front end refuses them (Z011).
        let id = self.func(
            at,
            l.parameters.as_deref(),
            FuncBody::Expr(&l.body),
            Vec::new(),
        );
        AVal {
            funcs: BTreeSet::from([id]),
            ..self.lit_val()
        }
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
            self.lit().join(&structure_may).join(&self.pc_may),
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
            ..self.lit_val()
        }
    }
}
