//! Unboxed (flat) scalars and the fast paths for them: which expressions are flat, compiling them to a raw
//! value and a label, and the `range`/`split` loops that iterate raw.

use super::*;

impl Compiler<'_> {
    // ---- flat (unboxed) values --------------------------------------------------------------------------
    /// A variable of the current scope kept unboxed (`x_`, `x_l`).
    pub(super) fn is_shadow(&self, name: &str) -> bool {
        self.frame().flat.contains(name)
    }

    /// A call of `name` reaches the builtin: the plan does not bind it and the policy declares no tool or
    /// verifier of that name (the order `call` resolves names in).
    pub(super) fn is_builtin_call(&self, name: &str) -> bool {
        !self.is_local(name)
            && !self.sigs.tools.contains_key(name)
            && !self.sigs.verifiers.contains(name)
            && catalogue::builtin_row(name).is_some()
    }

    /// The arguments of `range(...)` when a `for` iterates it raw.
    pub(super) fn range_args<'e>(&self, iter: &'e Expr) -> Option<&'e [Expr]> {
        match iter {
            Expr::Call(c)
                if matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == "range" && !self.is_local("range"))
                    && c.arguments.keywords.is_empty()
                    && (1..=3).contains(&c.arguments.args.len())
                    && !c
                        .arguments
                        .args
                        .iter()
                        .any(|a| matches!(a, Expr::Starred(_))) =>
            {
                Some(&c.arguments.args)
            }
            _ => None,
        }
    }

    /// `for x in recv.split(args)` with flat arguments (not a module's `re.split`): the loop iterates the
    /// raw list of strings.
    pub(super) fn split_iter<'e>(
        &self,
        iter: &'e Expr,
    ) -> Option<(&'static str, &'e Expr, &'e [Expr])> {
        let Expr::Call(c) = iter else {
            return None;
        };
        let Expr::Attribute(a) = c.func.as_ref() else {
            return None;
        };
        let method = split_method(a.attr.id.as_str())?;
        let module =
            matches!(a.value.as_ref(), Expr::Name(m) if matches!(m.id.as_str(), "json" | "re"));
        let ok = !module
            && c.arguments.keywords.is_empty()
            && crate::lower::generated::has_fast_path(method, c.arguments.args.len())
            && c.arguments.args.iter().all(|x| self.is_flat_expr(x));
        ok.then_some((method, a.value.as_ref(), c.arguments.args.as_ref()))
    }

    /// The flat variables of a scope (the current frame must be that scope's, already pushed).
    pub(super) fn infer_flat(&self, body: &[Stmt], params: &BTreeSet<String>) -> BTreeSet<String> {
        crate::lower::flat::infer(body, params, &|n| self.is_builtin_call(n), &|e| {
            self.range_args(e).is_some() || self.split_iter(e).is_some()
        })
    }

    pub(super) fn is_flat_expr(&self, e: &Expr) -> bool {
        crate::lower::flat::is_flat(e, self)
    }

    /// A flat expression as raw and label code: written out where the rules allow, else the boxed code
    /// split through a temporary.
    pub(super) fn flat(&mut self, e: &Expr, pc: &str) -> Flat {
        if let Some(mut f) = self.try_flat(e, pc) {
            if f.label != "_LIT" && self.folds(&f.label) {
                f.label = "_LIT".into();
            }
            return f;
        }
        let code = self.expr(e, pc);
        let t = self.fresh("f");
        Flat {
            raw: format!("({t} := {code})[0]"),
            label: format!("{t}[1]"),
        }
    }

    /// Raw code for a flat expression whose operation applies to raw values exactly as in the plain plan;
    /// `None` (before compiling anything) when it does not.
    pub(super) fn try_flat(&mut self, e: &Expr, pc: &str) -> Option<Flat> {
        use crate::lower::flat::{flat_operator, is_flat_builtin, is_raw_method};
        if !self.is_flat_expr(e) {
            return None;
        }
        let lit = |raw: String| {
            Some(Flat {
                raw,
                label: "_LIT".into(),
            })
        };
        match e {
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => lit(format!("{i}")),
                Number::Float(f) if f.is_finite() => lit(format!("{f:?}")),
                _ => None,
            },
            Expr::StringLiteral(s) => lit(py_str(s.value.to_str())),
            Expr::BooleanLiteral(b) => lit(if b.value { "True" } else { "False" }.into()),
            Expr::NoneLiteral(_) => lit("None".into()),
            Expr::Name(n) if self.is_shadow(n.id.as_str()) => {
                let name = n.id.as_str();
                Some(Flat {
                    raw: self.load_name(name, n.range().start().to_usize()),
                    label: format!("{name}_l"),
                })
            }
            Expr::BinOp(b) if flat_operator(b.op) => {
                let op = op_name(b.op)?;
                let l = self.flat(&b.left, pc);
                let r = self.flat(&b.right, pc);
                let label = join_uv(&l.label, &r.label);
                Some(Flat {
                    raw: format!("({} {op} {})", l.raw, r.raw),
                    label,
                })
            }
            Expr::UnaryOp(u) if self.is_flat_expr(&u.operand) => {
                let op = unary_name(u.op);
                let sep = if u.op == UnaryOp::Not { " " } else { "" };
                let v = self.flat(&u.operand, pc);
                Some(Flat {
                    raw: format!("({op}{sep}{})", v.raw),
                    label: computed(&v.label),
                })
            }
            Expr::Compare(c)
                if c.ops.len() == 1
                    && self.is_flat_expr(&c.left)
                    && self.is_flat_expr(&c.comparators[0]) =>
            {
                // Every comparison applies to raw flat values as written.
                let op = cmp_name(c.ops[0]);
                let l = self.flat(&c.left, pc);
                let r = self.flat(&c.comparators[0], pc);
                let label = join_uv(&l.label, &r.label);
                Some(Flat {
                    raw: format!("({} {op} {})", l.raw, r.raw),
                    label,
                })
            }
            // `len(s.split(...))`: the length of the raw list; its deep label is the one label of the words.
            Expr::Call(c)
                if matches!(c.func.as_ref(), Expr::Name(f) if f.id.as_str() == "len" && self.is_builtin_call("len"))
                    && c.arguments.keywords.is_empty()
                    && c.arguments.args.len() == 1
                    && self.split_iter(&c.arguments.args[0]).is_some() =>
            {
                let (method, recv, args) = self.split_iter(&c.arguments.args[0])?;
                let mut parts = vec![self.expr(recv, pc)];
                for a in args {
                    let f = self.flat(a, pc);
                    parts.push(f.raw);
                    parts.push(f.label);
                }
                let t = self.fresh("f");
                let line = self.line;
                Some(Flat {
                    raw: format!(
                        "len(({t} := _msr_{method}_{}({}, {pc}, {line}))[0])",
                        args.len(),
                        parts.join(", ")
                    ),
                    label: format!("{t}[1]"),
                })
            }
            Expr::Call(c)
                if c.arguments.keywords.is_empty()
                    && c.arguments.args.iter().all(|a| self.is_flat_expr(a)) =>
            {
                match c.func.as_ref() {
                    Expr::Name(f)
                        if is_flat_builtin(f.id.as_str())
                            && f.id.as_str() != "round"
                            && self.is_builtin_call(f.id.as_str())
                            && c.arguments.args.len() == 1 =>
                    {
                        let v = self.flat(&c.arguments.args[0], pc);
                        Some(Flat {
                            raw: format!("{}({})", f.id.as_str(), v.raw),
                            label: computed(&v.label),
                        })
                    }
                    Expr::Attribute(a)
                        if is_raw_method(a.attr.id.as_str()) && self.is_flat_expr(&a.value) =>
                    {
                        let recv = self.flat(&a.value, pc);
                        let mut raws = Vec::new();
                        let mut label = recv.label;
                        for arg in &c.arguments.args {
                            let v = self.flat(arg, pc);
                            raws.push(v.raw);
                            label = join_uv(&label, &v.label);
                        }
                        if c.arguments.args.is_empty() {
                            label = computed(&label);
                        }
                        Some(Flat {
                            raw: format!(
                                "({}).{}({})",
                                recv.raw,
                                a.attr.id.as_str(),
                                raws.join(", ")
                            ),
                            label,
                        })
                    }
                    _ => None,
                }
            }
            Expr::FString(f) => self.flat_fstring(f, pc),
            Expr::Subscript(s)
                if !matches!(s.slice.as_ref(), Expr::Slice(_)) && self.is_flat_expr(&s.value) =>
            {
                let v = self.flat(&s.value, pc);
                let i = self.flat(&s.slice, pc);
                let label = join_uv(&v.label, &i.label);
                Some(Flat {
                    raw: format!("({})[{}]", v.raw, i.raw),
                    label,
                })
            }
            _ => None,
        }
    }

    /// An f-string of flat interpolations without format specs, as string concatenation (`format(x, '')`
    /// is `str(x)` for every flat type).
    pub(super) fn flat_fstring(
        &mut self,
        f: &ruff_python_ast::ExprFString,
        pc: &str,
    ) -> Option<Flat> {
        let mut elements = Vec::new();
        for part in f.value.iter() {
            match part {
                FStringPart::Literal(l) => elements.push(Err(py_str(&l.value))),
                FStringPart::FString(fs) => {
                    for el in fs.elements.iter() {
                        match el {
                            InterpolatedStringElement::Literal(l) => {
                                elements.push(Err(py_str(&l.value)))
                            }
                            InterpolatedStringElement::Interpolation(i) => {
                                let conv = match i.conversion {
                                    ConversionFlag::None | ConversionFlag::Str => "str",
                                    ConversionFlag::Repr => "repr",
                                    ConversionFlag::Ascii => return None,
                                };
                                if i.debug_text.is_some()
                                    || i.format_spec.is_some()
                                    || !self.is_flat_expr(&i.expression)
                                {
                                    return None;
                                }
                                elements.push(Ok((conv, &*i.expression)));
                            }
                        }
                    }
                }
            }
        }
        let mut raws = Vec::new();
        let mut label = "_LIT".to_string();
        for el in elements {
            match el {
                Err(text) => raws.push(text),
                Ok((conv, e)) => {
                    let v = self.flat(e, pc);
                    raws.push(format!("{conv}({})", v.raw));
                    label = join_uv(&label, &v.label);
                }
            }
        }
        let raw = if raws.is_empty() {
            "''".to_string()
        } else {
            format!("({})", raws.join(" + "))
        };
        Some(Flat { raw, label })
    }

    // ---- labels known when compiling (`constant.rs`) -------------------------------------------------------
    /// `_pc` is known to be neutral at the code being compiled now.
    pub(super) fn neutral(&self) -> bool {
        self.frame().neutral
    }

    /// Sets what is known about `_pc` for the code compiled next; returns what it was.
    pub(super) fn set_neutral(&mut self, neutral: bool) -> bool {
        match self.frames.last_mut() {
            Some(f) => std::mem::replace(&mut f.neutral, neutral),
            None => false,
        }
    }

    /// A constant expression of the current scope (its label is the literal label).
    pub(super) fn is_constant_expr(&self, e: &Expr) -> bool {
        if !self.constant_labels || self.frames.len() > 1 {
            // With the option off, or outside the module scope: nothing is constant.
            return false;
        }
        let f = self.frame();
        let is_builtin_call = |n: &str| self.is_builtin_call(n);
        crate::lower::constant::is_constant(e, &f.constant, &self.constant_scope(&is_builtin_call))
    }

    /// `for x in range(...)` of constant arguments.
    pub(super) fn is_constant_range(&self, iter: &Expr) -> bool {
        if !self.constant_labels || self.frames.len() > 1 {
            return false;
        }
        let f = self.frame();
        let is_builtin_call = |n: &str| self.is_builtin_call(n);
        self.range_args(iter).is_some()
            && crate::lower::constant::constant_range(
                iter,
                &f.constant,
                &self.constant_scope(&is_builtin_call),
            )
    }

    fn constant_scope<'s>(
        &'s self,
        is_builtin_call: &'s dyn Fn(&str) -> bool,
    ) -> crate::lower::constant::Scope<'s> {
        crate::lower::constant::Scope {
            flat: &self.frame().flat,
            is_builtin_call,
            range_is_builtin: !self.is_local("range"),
            strict: self.strict,
        }
    }

    /// Label code that is the literal label whatever the run (only literal and constant labels in it).
    pub(super) fn folds(&self, label: &str) -> bool {
        self.constant_labels
            && crate::lower::constant::folds_to_literal(label, &self.frame().constant)
    }

    /// Where the compiler relies on a constant label that its code does not show, it refuses the plan
    /// rather than drop a label (a disagreement between `constant.rs` and the code written).
    pub(super) fn unproved_constant(&mut self, what: &str) {
        let start = self
            .line_starts
            .get((self.line as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0);
        self.diags.push(
            Diagnostic::new(
                Code::UnconfirmedLabel,
                start,
                start,
                format!("internal error: the compiler could not confirm the label of {what}"),
            )
            .with_hint("please report the plan; rewriting this line may avoid it"),
        );
    }

    /// Assigns a flat value to a shadowed variable (raw first: the label code may read temporaries it binds).
    /// STRICT: a shadowed variable assigned under `_pc` carries it (joined in the same statement). A
    /// constant variable keeps the literal label the preamble gave it: only its raw value is assigned.
    pub(super) fn assign_flat(&mut self, name: &str, v: Flat, indent: usize) {
        let m = mangle(name);
        if self.frame().constant.contains(name) {
            if !((self.neutral() || !self.strict) && (v.label == "_LIT" || self.folds(&v.label))) {
                self.unproved_constant(&format!("`{name}`"));
            }
            self.emit(indent, format!("{m} = {}", v.raw));
            return;
        }
        self.emit(indent, format!("{m} = {}", v.raw));
        if self.strict && self.neutral() {
            self.emit(indent, format!("{name}_l = {}", v.label));
        } else if self.strict {
            self.emit(indent, format!("{name}_l = {} | _pc", v.label));
        } else {
            self.emit(indent, format!("{name}_l = {}", v.label));
        }
    }
}
