//! Lowering expressions: names, literals, operators, comparisons, f-strings, lambdas and comprehensions
//! (hoisted into helper functions).

use super::*;

impl Compiler<'_> {
    // ---- expressions ------------------------------------------------------------------------------------
    pub(super) fn load_name(&mut self, name: &str, offset: usize) -> String {
        let frame = self.frame();
        let surely_assigned = frame.sure.contains(name)
            || frame.first_def.get(name).is_some_and(|end| *end <= offset);
        if surely_assigned {
            mangle(name)
        } else if self.is_local(name) {
            format!("_ld({}, {})", mangle(name), py_str(name))
        } else {
            // Not bound anywhere in the plan: Monty raises NameError on the mangled name.
            mangle(name)
        }
    }

    pub(super) fn expr(&mut self, e: &Expr, pc: &str) -> String {
        if matches!(
            e,
            Expr::BinOp(_)
                | Expr::UnaryOp(_)
                | Expr::Compare(_)
                | Expr::Call(_)
                | Expr::FString(_)
                | Expr::Subscript(_)
        ) && let Some(f) = self.try_flat(e, pc)
        {
            return format!("({}, {})", f.raw, f.label);
        }
        match e {
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => self.constant(format!("({i}, _LIT)")),
                Number::Float(f) if f.is_finite() => format!("({f:?}, _LIT)"),
                _ => {
                    self.reject(
                        e,
                        Code::LowerExpression,
                        "this number literal is not supported".into(),
                        "use an int or a finite float",
                    );
                    "None".into()
                }
            },
            Expr::StringLiteral(s) => {
                self.constant(format!("({}, _LIT)", py_str(s.value.to_str())))
            }
            Expr::BooleanLiteral(b) => {
                format!("({}, _LIT)", if b.value { "True" } else { "False" })
            }
            Expr::NoneLiteral(_) => "(None, _LIT)".into(),
            Expr::Name(n) => {
                let name = n.id.as_str();
                if self.is_shadow(name) {
                    let raw = self.load_name(name, n.range().start().to_usize());
                    format!("({raw}, {name}_l)")
                } else if self.is_local(name) {
                    self.load_name(name, n.range().start().to_usize())
                } else if catalogue::builtin_row(name).is_some_and(|b| b.value) {
                    format!("(_fn_{name}, _LIT)")
                } else if self.sigs.is_callable(name) {
                    self.reject(
                        e,
                        Code::LowerName,
                        format!("`{name}` can only be called directly"),
                        "call it where you need its result",
                    );
                    "None".into()
                } else {
                    self.reject(
                        e,
                        Code::LowerName,
                        format!("`{name}` is not defined in the plan"),
                        "assign it before use",
                    );
                    "None".into()
                }
            }
            Expr::BinOp(b) => {
                let Some(op) = op_name(b.op) else {
                    self.reject(
                        e,
                        Code::LowerExpression,
                        "the `@` operator is not supported".into(),
                        "use an explicit computation",
                    );
                    return "None".into();
                };
                let l = self.expr(&b.left, pc);
                if matches!(op, "+" | "-" | "*") && self.is_flat_expr(&b.right) {
                    // A flat right operand is passed as raw value and label: no tuple for it.
                    let r = self.flat(&b.right, pc);
                    let f = match op {
                        "+" => "_addf",
                        "-" => "_subf",
                        _ => "_mulf",
                    };
                    return format!("{f}({l}, {}, {})", r.raw, r.label);
                }
                let r = self.expr(&b.right, pc);
                match op {
                    "+" => format!("_add({l}, {r})"),
                    "-" => format!("_sub({l}, {r})"),
                    "*" => format!("_mul({l}, {r})"),
                    "%" => format!("_mod({l}, {r})"),
                    "//" => format!("_fdiv({l}, {r})"),
                    _ => format!("_bin('{op}', {l}, {r})"),
                }
            }
            Expr::UnaryOp(u) => {
                let op = unary_name(u.op);
                let v = self.expr(&u.operand, pc);
                format!("_un('{op}', {v})")
            }
            Expr::BoolOp(b) => {
                let mut acc = self.expr(&b.values[0], pc);
                for next in &b.values[1..] {
                    let t = self.fresh("t");
                    let inner_pc = format!("({pc} | _inf(_cl({t})))");
                    let rhs = self.expr(next, &inner_pc);
                    acc = match b.op {
                        BoolOp::And => {
                            format!(
                                "({t} if not _tr({t} := {acc}) else _jv({rhs}, _inf(_cl({t}))))"
                            )
                        }
                        BoolOp::Or => {
                            format!("({t} if _tr({t} := {acc}) else _jv({rhs}, _inf(_cl({t}))))")
                        }
                    };
                }
                acc
            }
            Expr::If(x) => {
                let t = self.fresh("t");
                let test = self.expr(&x.test, pc);
                let inner_pc = format!("({pc} | _inf(_cl({t})))");
                let body = self.expr(&x.body, &inner_pc);
                let orelse = self.expr(&x.orelse, &inner_pc);
                format!(
                    "(_jv({body}, _inf(_cl({t}))) if _tr({t} := {test}) else _jv({orelse}, _inf(_cl({t}))))"
                )
            }
            Expr::Compare(c) => {
                let mut left = self.expr(&c.left, pc);
                let mut acc: Option<String> = None;
                for (i, (op, right)) in c.ops.iter().zip(c.comparators.iter()).enumerate() {
                    let last = i + 1 == c.ops.len();
                    let r = self.expr(right, pc);
                    let (r_use, r_next) = if last {
                        (r, String::new())
                    } else {
                        let rt = self.fresh("r");
                        (format!("({rt} := {r})"), rt)
                    };
                    let this = match op {
                        CmpOp::Eq => format!("_eq({left}, {r_use})"),
                        CmpOp::NotEq => format!("_ne({left}, {r_use})"),
                        CmpOp::Lt => format!("_lt({left}, {r_use})"),
                        CmpOp::Gt => format!("_gt({left}, {r_use})"),
                        other => format!("_cmp('{}', {left}, {r_use})", cmp_name(*other)),
                    };
                    acc = Some(match acc {
                        None => this,
                        Some(prev) => {
                            let t = self.fresh("t");
                            format!(
                                "({t} if not _tr({t} := {prev}) else _jv({this}, _inf(_cl({t}))))"
                            )
                        }
                    });
                    left = r_next;
                }
                acc.unwrap_or_else(|| "None".into())
            }
            Expr::List(l) => {
                let items = self.exprs(&l.elts, pc);
                format!("_mk(_KL, [{items}], {pc})")
            }
            Expr::Tuple(t) => {
                let items = self.exprs(&t.elts, pc);
                format!("_mk(_KT, [{items}], {pc})")
            }
            Expr::Set(s) => {
                let items = self.exprs(&s.elts, pc);
                format!("_mks([{items}], {pc})")
            }
            Expr::Dict(d) => {
                let mut keys = Vec::new();
                let mut vals = Vec::new();
                for item in &d.items {
                    let Some(k) = &item.key else {
                        self.reject(
                            e,
                            Code::LowerExpression,
                            "`**` in a dict literal is not supported".into(),
                            "use `update`",
                        );
                        return "None".into();
                    };
                    keys.push(self.expr(k, pc));
                    vals.push(self.expr(&item.value, pc));
                }
                format!("_mkd([{}], [{}], {pc})", keys.join(", "), vals.join(", "))
            }
            Expr::Subscript(s) => {
                let v = self.expr(&s.value, pc);
                match s.slice.as_ref() {
                    Expr::Slice(sl) => {
                        let mut parts = Vec::new();
                        for p in [&sl.lower, &sl.upper, &sl.step] {
                            parts.push(match p {
                                Some(x) => self.expr(x, pc),
                                None => "(None, _LIT)".into(),
                            });
                        }
                        format!("_gs({v}, {})", parts.join(", "))
                    }
                    idx if self.fused && self.is_simple_flat_key(idx) => {
                        // A literal or flat-name key given raw (lean.rs: `_gif`, `_gi`'s dict fast path).
                        let k = self.flat(idx, pc);
                        format!("_gif({v}, {}, {})", k.raw, k.label)
                    }
                    idx => {
                        let i = self.expr(idx, pc);
                        format!("_gi({v}, {i})")
                    }
                }
            }
            Expr::FString(f) => self.fstring(f, pc),
            Expr::Call(c) => self.call(c, pc),
            Expr::Named(n) => {
                let Expr::Name(target) = n.target.as_ref() else {
                    self.reject(
                        e,
                        Code::LowerExpression,
                        "`:=` needs a plain name".into(),
                        "assign to a name",
                    );
                    return "None".into();
                };
                if self.frame().xf.is_none() && self.frames.len() > 1 {
                    // unreachable in practice: frames other than the module always have xf
                }
                let v = self.expr(&n.value, pc);
                format!("({} := _as({v}, {pc}))", mangle(target.id.as_str()))
            }
            Expr::Lambda(l) => self.lambda(l, pc),
            Expr::ListComp(c) => self.comprehension(e, "l", &c.generators, Some(&c.elt), None, pc),
            Expr::Generator(c) => self.comprehension(e, "l", &c.generators, Some(&c.elt), None, pc),
            Expr::SetComp(c) => self.comprehension(e, "s", &c.generators, Some(&c.elt), None, pc),
            Expr::DictComp(c) => match &c.key {
                Some(k) => self.comprehension(e, "d", &c.generators, Some(k), Some(&c.value), pc),
                None => {
                    self.reject(
                        e,
                        Code::LowerExpression,
                        "`**` in a dict comprehension is not supported".into(),
                        "use `update`",
                    );
                    "None".into()
                }
            },
            Expr::Attribute(_) => {
                self.reject(
                    e,
                    Code::LowerAttribute,
                    "attribute access is only allowed as a method call".into(),
                    "call a listed method, e.g. `s.lower()`",
                );
                "None".into()
            }
            other => {
                let kind = expr_kind(other);
                self.reject(
                    other,
                    Code::LowerExpression,
                    format!("{kind} is not supported in plans"),
                    "rewrite the plan without it",
                );
                "None".into()
            }
        }
    }

    pub(super) fn exprs(&mut self, es: &[Expr], pc: &str) -> String {
        let mut out = Vec::new();
        for e in es {
            if let Expr::Starred(_) = e {
                self.reject(
                    e,
                    Code::LowerExpression,
                    "`*` unpacking is not supported here".into(),
                    "concatenate lists with `+`",
                );
                continue;
            }
            out.push(self.expr(e, pc));
        }
        out.join(", ")
    }

    pub(super) fn fstring(&mut self, f: &ruff_python_ast::ExprFString, pc: &str) -> String {
        if self.fused {
            return self.fstring_fast(f, pc);
        }
        let mut parts = Vec::new();
        for part in f.value.iter() {
            match part {
                FStringPart::Literal(l) => parts.push(format!("({}, _LIT)", py_str(&l.value))),
                FStringPart::FString(fs) => {
                    for el in fs.elements.iter() {
                        match self.fstring_element(el, pc) {
                            Some(p) => parts.push(p),
                            None => return "None".into(),
                        }
                    }
                }
            }
        }
        format!("_fcat([{}])", parts.join(", "))
    }

    pub(super) fn fstring_element(
        &mut self,
        el: &InterpolatedStringElement,
        pc: &str,
    ) -> Option<String> {
        match el {
            InterpolatedStringElement::Literal(l) => Some(format!("({}, _LIT)", py_str(&l.value))),
            InterpolatedStringElement::Interpolation(i) => {
                if i.debug_text.is_some() {
                    self.reject(
                        i,
                        Code::LowerExpression,
                        "`=` in f-strings is not supported".into(),
                        "write the name out",
                    );
                    return None;
                }
                let conv = match i.conversion {
                    ConversionFlag::None => "None",
                    ConversionFlag::Str => "'s'",
                    ConversionFlag::Repr => "'r'",
                    ConversionFlag::Ascii => {
                        self.reject(
                            i,
                            Code::LowerExpression,
                            "`!a` is not supported".into(),
                            "use `!r`",
                        );
                        return None;
                    }
                };
                let v = self.expr(&i.expression, pc);
                let spec = match &i.format_spec {
                    None => "None".into(),
                    Some(spec) => {
                        let mut ps = Vec::new();
                        for el in spec.elements.iter() {
                            ps.push(self.fstring_element(el, pc)?);
                        }
                        format!("_fcat([{}])", ps.join(", "))
                    }
                };
                Some(format!("_fv({v}, {conv}, {spec})"))
            }
        }
    }

    /// Compiles `body` into a hoisted helper `def` emitted before the current statement.
    pub(super) fn hoist(
        &mut self,
        header: String,
        predeclare: BTreeSet<String>,
        mut locals: BTreeSet<String>,
        build: &mut dyn FnMut(&mut Self, usize),
    ) {
        let saved_out = std::mem::take(&mut self.out);
        let saved_pre = std::mem::take(&mut self.pre);
        self.emit(0, header);
        self.emit(1, "_pc = _zp".into());
        for n in &predeclare {
            self.emit(1, format!("{} = _UNDEF", mangle(n)));
        }
        locals.extend(predeclare);
        self.frames.push(Frame {
            loops: Vec::new(),
            xf: None,
            locals,
            first_def: Default::default(),
            sure: SureSet::default(),
            flat: BTreeSet::new(),
            constant: BTreeSet::new(),
            neutral: false,
        });
        build(self, 1);
        self.frames.pop();
        let def = std::mem::replace(&mut self.out, saved_out);
        self.pre = saved_pre;
        self.pre.extend(def);
    }

    pub(super) fn lambda(&mut self, l: &ruff_python_ast::ExprLambda, pc: &str) -> String {
        let params = match &l.parameters {
            Some(p) => {
                if p.args.iter().any(|a| a.default.is_some()) {
                    self.reject(
                        l,
                        Code::LowerFunction,
                        "lambda defaults are not supported".into(),
                        "use a def",
                    );
                    return "None".into();
                }
                match self.params(p, l) {
                    Some(ps) => ps,
                    None => return "None".into(),
                }
            }
            None => Vec::new(),
        };
        if contains_walrus(&l.body) {
            self.reject(
                l,
                Code::LowerExpression,
                "`:=` inside a lambda is not supported".into(),
                "use a def",
            );
            return "None".into();
        }
        let name = self.fresh("lam");
        let mut header_params = params.clone();
        header_params.push("_zp=_NEUTRAL".into());
        let header = format!("def {name}({}):", header_params.join(", "));
        let locals: BTreeSet<String> = l
            .parameters
            .as_ref()
            .map(|p| {
                p.args
                    .iter()
                    .map(|a| a.parameter.name.id.to_string())
                    .collect()
            })
            .unwrap_or_default();
        let body = &l.body;
        let mut build = |this: &mut Self, indent: usize| {
            let v = this.expr(body, "_pc");
            this.flush_pre(indent);
            this.emit(indent, format!("return _ret({v}, _pc, _NEUTRAL)"));
        };
        // Parameters are always bound: no `_UNDEF` pre-declaration.
        self.hoist(header, BTreeSet::new(), locals, &mut build);
        format!("_as(({name}, _LIT), {pc})")
    }

    pub(super) fn comprehension(
        &mut self,
        node: &Expr,
        kind: &str,
        generators: &[ruff_python_ast::Comprehension],
        elt: Option<&Expr>,
        value: Option<&Expr>,
        pc: &str,
    ) -> String {
        if generators.iter().any(|g| g.is_async) {
            self.reject(
                node,
                Code::LowerExpression,
                "async comprehensions are not supported".into(),
                "use a plain comprehension",
            );
            return "None".into();
        }
        let mut walrus = elt.is_some_and(contains_walrus) || value.is_some_and(contains_walrus);
        for g in generators {
            walrus |= contains_walrus(&g.iter) || g.ifs.iter().any(contains_walrus);
        }
        if walrus {
            self.reject(
                node,
                Code::LowerExpression,
                "`:=` inside a comprehension is not supported".into(),
                "use a for loop",
            );
            return "None".into();
        }
        let name = self.fresh("comp");
        let mut locals = BTreeSet::new();
        for g in generators {
            collect_target_names(&g.target, &mut locals);
        }
        let header = format!("def {name}(_zp):");
        let empty = match kind {
            "l" => "[]",
            _ => "{}",
        };
        let strict = self.strict;
        let mut build = |this: &mut Self, indent: usize| {
            let res = this.fresh("res");
            let s0 = if strict { "(_LIT | _zp)" } else { "_LIT" };
            let kind_code = match kind {
                "l" => "_KL",
                "s" => "_KS",
                _ => "_KD",
            };
            this.emit(indent, format!("{res} = _new({kind_code}, {empty}, {s0})"));
            let mut depth = indent;
            for g in generators {
                let it = this.fresh("it");
                let lp = this.fresh("lp");
                let e = this.fresh("e");
                let v = this.expr(&g.iter, "_pc");
                this.flush_pre(depth);
                this.emit(depth, format!("{it} = {v}"));
                this.emit(
                    depth,
                    format!("{res}[0][2] = ({res}[0][2] | _struct({it}))"),
                );
                this.emit(depth, format!("_pc = (_pc | _inf(_struct({it})))"));
                this.emit(depth, format!("{lp} = _pc"));
                this.emit(depth, format!("for {e} in _elems({it}):"));
                depth += 1;
                this.emit(depth, format!("_pc = {lp}"));
                this.assign(&g.target, e, depth);
                for cond in &g.ifs {
                    let c = this.fresh("c");
                    let t = this.expr(cond, "_pc");
                    this.flush_pre(depth);
                    this.emit(depth, format!("{c} = {t}"));
                    this.emit(
                        depth,
                        format!("{res}[0][2] = ({res}[0][2] | _inf(_cl({c})))"),
                    );
                    this.emit(depth, format!("_pc = (_pc | _inf(_cl({c})))"));
                    this.emit(depth, format!("if not _tr({c}):"));
                    this.emit(depth + 1, "continue".into());
                }
            }
            match (kind, elt, value) {
                ("d", Some(k), Some(v)) => {
                    let kk = this.expr(k, "_pc");
                    let vv = this.expr(v, "_pc");
                    this.flush_pre(depth);
                    let kt = this.fresh("ky");
                    this.emit(depth, format!("{kt} = {kk}"));
                    this.emit(
                        depth,
                        format!("{res}[0][1][_key({kt})] = ({kt}, _as({vv}, _pc))"),
                    );
                    this.emit(depth, format!("{res}[0][2] = ({res}[0][2] | _deep({kt}))"));
                }
                ("s", Some(x), _) => {
                    let xx = this.expr(x, "_pc");
                    this.flush_pre(depth);
                    let xt = this.fresh("ky");
                    this.emit(depth, format!("{xt} = _as({xx}, _pc)"));
                    this.emit(depth, format!("{res}[0][1][_key({xt})] = {xt}"));
                    this.emit(depth, format!("{res}[0][2] = ({res}[0][2] | _deep({xt}))"));
                }
                (_, Some(x), _) => {
                    let xx = this.expr(x, "_pc");
                    this.flush_pre(depth);
                    this.emit(depth, format!("{res}[0][1].append(_as({xx}, _pc))"));
                }
                _ => {}
            }
            this.emit(indent, format!("return {res}"));
        };
        self.hoist(header, locals, BTreeSet::new(), &mut build);
        format!("{name}({pc})")
    }
}
