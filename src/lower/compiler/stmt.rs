//! Lowering statements: assignments and unpacking, augmented assignment, the raise before a branch or
//! loop that may leave early, `if`/`for`/`while`, and plan functions.

use super::*;

impl Compiler<'_> {
    // ---- statements -----------------------------------------------------------------------------------
    pub(super) fn block(&mut self, body: &[Stmt], indent: usize) {
        if body.is_empty() {
            self.emit(indent, "pass".into());
        }
        // A name assigned by a statement of this block is bound for the statements after it (a statement
        // that raises ends the run), so loads there need no `_ld` check.
        let mut added = Vec::new();
        for stmt in body {
            self.note_running_line(stmt, indent);
            self.stmt(stmt, indent);
            for n in statement_targets(stmt, false) {
                if self.frame().sure.insert_new(&n) {
                    added.push(n);
                }
            }
        }
        for n in added {
            self.frame().sure.borrow_mut().remove(&n);
        }
    }

    /// Records the plan line of a statement outside any loop or function (`_zl = LINE`), which is what a
    /// timeout reports when Monty raises it between instructions, without a traceback
    /// (`runtime::machine::read_back`). Two instructions per such statement, none per iteration.
    fn note_running_line(&mut self, stmt: &Stmt, indent: usize) {
        let top_level = self.frames.len() == 1 && self.frame().loops.is_empty();
        if top_level && !matches!(stmt, Stmt::FunctionDef(_) | Stmt::Import(_) | Stmt::Pass(_)) {
            let line = self.line_of(stmt.range().start().to_usize());
            self.out.push((
                indent,
                format!("{} = {line}", crate::lower::RUNNING_LINE),
                line,
            ));
        }
    }

    pub(super) fn stmt(&mut self, stmt: &Stmt, indent: usize) {
        self.line = self.line_of(stmt.range().start().to_usize());
        match stmt {
            Stmt::Pass(_) => self.emit(indent, "pass".into()),
            Stmt::Break(_) => self.emit(indent, "break".into()),
            Stmt::Continue(_) => self.emit(indent, "continue".into()),
            Stmt::Expr(s) => {
                let e = self.expr(&s.value, "_pc");
                self.flush_pre(indent);
                self.emit(indent, e);
            }
            Stmt::Assign(s) if matches!(s.targets.as_slice(), [Expr::Name(n)] if self.is_shadow(n.id.as_str())) =>
            {
                let v = self.flat(&s.value, "_pc");
                self.flush_pre(indent);
                if let Expr::Name(n) = &s.targets[0] {
                    self.assign_flat(n.id.as_str(), v, indent);
                }
            }
            Stmt::Assign(s) => {
                if self.raw_increment(s, indent) || self.fused_assign(s, indent) {
                    return;
                }
                let v = self.expr(&s.value, "_pc");
                self.flush_pre(indent);
                if s.targets.len() == 1 {
                    self.assign(&s.targets[0], v, indent);
                } else {
                    let t = self.fresh("v");
                    self.emit(indent, format!("{t} = {v}"));
                    for target in &s.targets {
                        self.assign(target, t.clone(), indent);
                    }
                }
            }
            Stmt::AugAssign(s) => self.aug_assign(s, indent),
            Stmt::If(s) => self.if_chain(&s.test, &s.body, &if_clauses(s), indent),
            Stmt::For(s) => {
                if !s.orelse.is_empty() || s.is_async {
                    self.reject(
                        stmt,
                        Code::LowerStatement,
                        "`for ... else` is not supported".into(),
                        "move the else block after the loop",
                    );
                    return;
                }
                self.for_loop(&s.target, &s.iter, &s.body, indent);
            }
            Stmt::While(s) => {
                if !s.orelse.is_empty() {
                    self.reject(
                        stmt,
                        Code::LowerStatement,
                        "`while ... else` is not supported".into(),
                        "move the else block after the loop",
                    );
                    return;
                }
                self.while_loop(&s.test, &s.body, indent);
            }
            Stmt::FunctionDef(f) => self.function_def(f, indent),
            Stmt::Return(r) => {
                let Some(xf) = self.frame().xf.clone() else {
                    self.reject(
                        stmt,
                        Code::LowerStatement,
                        "`return` outside a function".into(),
                        "remove it",
                    );
                    return;
                };
                let v = match &r.value {
                    Some(v) => self.expr(v, "_pc"),
                    None => "(None, _LIT)".into(),
                };
                self.flush_pre(indent);
                self.emit(indent, format!("return _ret({v}, _pc, {xf})"));
            }
            Stmt::Import(imp) => {
                for alias in &imp.names {
                    let name = alias.name.id.as_str();
                    if alias.asname.is_some() || !(name == "json" || name == "re") || indent != 0 {
                        self.reject(
                            stmt,
                            Code::LowerStatement,
                            format!("`import {name}` is not supported"),
                            "only `import json` and `import re` at the top level are available",
                        );
                    } else {
                        self.imports.insert(name.to_string());
                    }
                }
                self.emit(indent, "pass".into());
            }
            other => {
                let kind = stmt_kind(other);
                self.reject(
                    other,
                    Code::LowerStatement,
                    format!("`{kind}` statements are not supported in plans"),
                    "rewrite the plan without it",
                );
            }
        }
    }

    pub(super) fn assign(&mut self, target: &Expr, value: String, indent: usize) {
        match target {
            Expr::Name(n) if self.is_shadow(n.id.as_str()) => {
                let (raw, label) = if is_atom(&value) {
                    (format!("{value}[0]"), format!("{value}[1]"))
                } else {
                    let t = self.fresh("v");
                    self.emit(indent, format!("{t} = {value}"));
                    (format!("{t}[0]"), format!("{t}[1]"))
                };
                self.assign_flat(n.id.as_str(), Flat { raw, label }, indent);
            }
            Expr::Name(n) => {
                let name = mangle(n.id.as_str());
                if self.strict && !self.neutral() {
                    // `_as` written out: no call when `_pc` is neutral (0), the common case.
                    self.emit(indent, format!("{name} = {value}"));
                    self.emit(indent, "if _pc:".into());
                    self.emit(indent + 1, format!("{name} = ({name}[0], {name}[1] | _pc)"));
                } else {
                    // NORMAL never joins pc into values: `_as` would be the identity.
                    self.emit(indent, format!("{name} = {value}"));
                }
            }
            Expr::Tuple(t) => self.unpack(&t.elts, value, indent),
            Expr::List(t) => self.unpack(&t.elts, value, indent),
            Expr::Subscript(s) => {
                if matches!(s.slice.as_ref(), Expr::Slice(_)) {
                    self.reject(
                        target,
                        Code::LowerTarget,
                        "assigning to a slice is not supported".into(),
                        "build a new list instead",
                    );
                    return;
                }
                let v = self.fresh("v");
                self.emit(indent, format!("{v} = {value}"));
                let obj = self.expr(&s.value, "_pc");
                let line = self.line;
                if self.is_flat_expr(&s.slice) {
                    let k = self.flat(&s.slice, "_pc");
                    self.flush_pre(indent);
                    self.emit(
                        indent,
                        format!("_sif({obj}, {}, {}, {v}, _pc, {line})", k.raw, k.label),
                    );
                    return;
                }
                let idx = self.expr(&s.slice, "_pc");
                self.flush_pre(indent);
                self.emit(indent, format!("_si({obj}, {idx}, {v}, _pc, {line})"));
            }
            other => self.reject(
                other,
                Code::LowerTarget,
                "this assignment target is not supported".into(),
                "assign to a name, a subscript or a tuple of names",
            ),
        }
    }

    pub(super) fn unpack(&mut self, elts: &[Expr], value: String, indent: usize) {
        if elts.iter().any(|e| matches!(e, Expr::Starred(_))) {
            self.reject(
                &elts[0],
                Code::LowerTarget,
                "starred unpacking is not supported".into(),
                "index the elements instead",
            );
            return;
        }
        let t = self.fresh("u");
        self.emit(indent, format!("{t} = _unpack({value}, {})", elts.len()));
        for (i, e) in elts.iter().enumerate() {
            self.assign(e, format!("{t}[{i}]"), indent);
        }
    }

    pub(super) fn aug_assign(&mut self, s: &ruff_python_ast::StmtAugAssign, indent: usize) {
        let Some(op) = op_name(s.op) else {
            self.reject(
                s,
                Code::LowerExpression,
                "the `@` operator is not supported".into(),
                "use an explicit computation",
            );
            return;
        };
        let line = self.line;
        match s.target.as_ref() {
            Expr::Name(n)
                if self.is_shadow(n.id.as_str())
                    && crate::lower::flat::flat_operator(s.op)
                    && self.is_flat_expr(&s.value) =>
            {
                let name = n.id.as_str();
                let cur = self.load_name(name, n.range().start().to_usize());
                let v = self.flat(&s.value, "_pc");
                self.flush_pre(indent);
                let label = join_uv(&format!("{name}_l"), &v.label);
                let raw = format!("({cur} {op} {})", v.raw);
                self.assign_flat(name, Flat { raw, label }, indent);
            }
            Expr::Name(n) if self.is_shadow(n.id.as_str()) => {
                // Not reached (the inference keeps such names boxed); compiled through the helper anyway.
                let name = n.id.as_str();
                let cur = self.load_name(name, n.range().start().to_usize());
                let v = self.expr(&s.value, "_pc");
                self.flush_pre(indent);
                let t = self.fresh("v");
                self.emit(
                    indent,
                    format!("{t} = _iop('{op}', ({cur}, {name}_l), {v}, _pc, {line})"),
                );
                self.assign(&s.target, t, indent);
            }
            Expr::Name(n) => {
                let cur = self.load_name(n.id.as_str(), n.range().start().to_usize());
                let v = self.expr(&s.value, "_pc");
                self.flush_pre(indent);
                let name = mangle(n.id.as_str());
                self.emit(
                    indent,
                    format!("{name} = _as(_iop('{op}', {cur}, {v}, _pc, {line}), _pc)"),
                );
            }
            Expr::Subscript(sub) if !matches!(sub.slice.as_ref(), Expr::Slice(_)) => {
                let o = self.fresh("o");
                let k = self.fresh("ky");
                let obj = self.expr(&sub.value, "_pc");
                let idx = self.expr(&sub.slice, "_pc");
                let v = self.expr(&s.value, "_pc");
                self.flush_pre(indent);
                self.emit(indent, format!("{o} = {obj}"));
                self.emit(indent, format!("{k} = {idx}"));
                self.emit(
                    indent,
                    format!(
                        "_si({o}, {k}, _iop('{op}', _gi({o}, {k}), {v}, _pc, {line}), _pc, {line})"
                    ),
                );
            }
            other => self.reject(
                other,
                Code::LowerTarget,
                "this augmented assignment target is not supported".into(),
                "assign to a name or a subscript",
            ),
        }
    }

    /// Pre-raises (STRICT) every container the block may mutate, with the current `_pc`.
    pub(super) fn preraise(&mut self, bodies: &[&[Stmt]], indent: usize) {
        if !self.strict {
            return;
        }
        let mut receivers = Vec::new();
        for b in bodies {
            mutation_receivers(b, &mut receivers);
            // A plan function called directly in the block may mutate what it is given and the module
            // containers it names: pre-raise those too (docs/semantics.md, "Further choices":
            // mutation through a function value).
            let mut calls = Vec::new();
            direct_calls(b, &mut calls);
            for call in calls {
                let Expr::Name(f) = call.func.as_ref() else {
                    continue;
                };
                let Some(body) = self.functions.get(f.id.as_str()).copied() else {
                    continue;
                };
                receivers.extend(
                    call.arguments
                        .args
                        .iter()
                        .filter(|a| matches!(a, Expr::Name(_))),
                );
                receivers.extend(
                    call.arguments
                        .keywords
                        .iter()
                        .map(|k| &k.value)
                        .filter(|a| matches!(a, Expr::Name(_))),
                );
                let mut inner = Vec::new();
                mutation_receivers(body, &mut inner);
                receivers.extend(inner.into_iter().filter(|r| matches!(r, Expr::Name(_))));
            }
        }
        let mut seen = BTreeSet::new();
        for r in receivers {
            let Some(code) = self.receiver_code(r) else {
                continue;
            };
            if !seen.insert(code.clone()) {
                continue;
            }
            match r {
                Expr::Name(_) => self.emit(indent, format!("_pr({code}, _pc)")),
                _ => self.emit(indent, format!("_prp(lambda: {code}, _pc)")),
            }
        }
    }

    /// Side-effect-free code for a receiver made of names and constant or name subscripts.
    pub(super) fn receiver_code(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Name(n) => {
                let name = n.id.as_str();
                // A flat variable is never a container, so it has nothing to raise.
                if !self.is_local(name) || self.is_shadow(name) {
                    return None;
                }
                Some(mangle(name))
            }
            Expr::Subscript(s) => {
                let base = self.receiver_code(&s.value)?;
                let idx = match s.slice.as_ref() {
                    Expr::StringLiteral(l) => format!("({}, _LIT)", py_str(l.value.to_str())),
                    Expr::NumberLiteral(n) => match &n.value {
                        Number::Int(i) => format!("({i}, _LIT)"),
                        _ => return None,
                    },
                    Expr::Name(n) if self.is_shadow(n.id.as_str()) => {
                        format!("({}, {}_l)", mangle(n.id.as_str()), n.id.as_str())
                    }
                    Expr::Name(n) if self.is_local(n.id.as_str()) => mangle(n.id.as_str()),
                    _ => return None,
                };
                Some(format!("_gi({base}, {idx})"))
            }
            _ => None,
        }
    }

    /// Raises one variable's label by `label` (not-taken branches, loop exits).
    pub(super) fn raise_name(&mut self, name: &str, label: &str, indent: usize) {
        if self.frame().constant.contains(name) {
            // `constant.rs` keeps only variables no branch or loop raises; a raise here disagrees.
            self.unproved_constant(&format!("`{name}`"));
        }
        if self.is_shadow(name) {
            self.emit(indent, format!("{name}_l = ({name}_l | {label})"));
        } else {
            let m = mangle(name);
            self.emit(indent, format!("{m} = _rz({m}, {label})"));
        }
    }

    /// Variables the block may assign are raised by `_pc` afterwards (STRICT; not-taken branches).
    pub(super) fn raise_assigned(&mut self, bodies: &[&[Stmt]], label: &str, indent: usize) {
        if !self.strict {
            return;
        }
        let mut names = BTreeSet::new();
        for b in bodies {
            assigned_names(b, &mut names);
        }
        for n in names {
            self.raise_name(&n, label, indent);
        }
    }

    /// Accumulators an early exit raises: the innermost loop's for break/continue, the function's and
    /// every enclosing loop's for return.
    pub(super) fn exit_accumulators(&self, esc: Escapes) -> Vec<String> {
        let f = self.frame();
        let mut acc = Vec::new();
        if esc.loop_exit
            && let Some(l) = f.loops.last()
        {
            acc.push(l.clone());
        }
        if esc.ret {
            acc.extend(f.loops.iter().cloned());
            if let Some(xf) = &f.xf {
                acc.push(xf.clone());
            }
        }
        acc.sort();
        acc.dedup();
        acc
    }

    pub(super) fn if_chain(
        &mut self,
        test: &Expr,
        body: &[Stmt],
        rest: &[(Option<&Expr>, &[Stmt])],
        indent: usize,
    ) {
        let before = self.neutral();
        let mut bodies: Vec<&[Stmt]> = vec![body];
        bodies.extend(rest.iter().map(|(_, b)| *b));
        // Later `elif` tests run only when this one failed, so their branches are part of this decision.
        let esc = chain_escapes(body, rest);
        let escaping = esc.loop_exit || esc.ret;
        if before && self.is_flat_expr(test) && self.is_constant_expr(test) {
            self.quiet_if(test, body, rest, indent);
            // Nothing to join: the condition's influence is neutral, so every accumulator and every
            // variable a branch not taken assigns would be raised by nothing.
            self.set_neutral(before && !escaping);
            return;
        }
        self.set_neutral(false);
        let c = self.fresh("c");
        let ps = self.fresh("ps");
        let l = self.fresh("l");
        // A flat condition is tested raw; its label needs no structure (it is not a container).
        let flat_test = self.is_flat_expr(test);
        if flat_test {
            let f = self.flat(test, "_pc");
            self.flush_pre(indent);
            self.emit(indent, format!("{c} = {}", f.raw));
            self.emit(indent, format!("{ps} = _pc"));
            self.emit(indent, format!("{l} = {}", f.label));
        } else {
            let t = self.expr(test, "_pc");
            self.flush_pre(indent);
            self.emit(indent, format!("{c} = {t}"));
            self.emit(indent, format!("{ps} = _pc"));
            self.emit(indent, format!("{l} = _cl({c})"));
        }
        // `_pc = _j(_pc, _inf(label))`, written out: this runs for every `if`, so no helper calls.
        self.emit(
            indent,
            format!("{l} = ({l} | _UV) if {l} & 1 else ({l} & _NUV)"),
        );
        self.emit(indent, format!("_pc = _pc | {l}"));
        for acc in self.exit_accumulators(esc) {
            self.emit(indent, format!("{acc} = ({acc} | {l})"));
        }
        if self.strict {
            // Joining an unchanged pc would change nothing: pre-raise only when the condition raised it.
            let mark = self.out.len();
            self.preraise(&bodies, indent + 1);
            if self.out.len() > mark {
                self.out
                    .insert(mark, (indent, format!("if _pc != {ps}:"), self.line));
            }
        }
        if flat_test {
            self.emit(indent, format!("if {c}:"));
        } else {
            self.emit(
                indent,
                format!("if ({c}[0] if type({c}[0]) is not list else {c}[0][1]):"),
            );
        }
        self.branches(body, rest, indent);
        if escaping {
            // What follows runs only if no branch left early: it depends on the condition.
            self.emit(indent, format!("_pc = ({ps} | {l})"));
        } else {
            self.emit(indent, format!("_pc = {ps}"));
        }
        self.raise_assigned(&bodies, &format!("({ps} | {l})"), indent);
        self.set_neutral(before && !escaping);
    }

    /// The branches after an `if` line: its body, then `else:` with the next `elif` (as an `if` chain) or
    /// the `else` body.
    fn branches(&mut self, body: &[Stmt], rest: &[(Option<&Expr>, &[Stmt])], indent: usize) {
        self.block(body, indent + 1);
        if let Some(((next_test, next_body), tail)) = rest.split_first() {
            self.emit(indent, "else:".into());
            match next_test {
                Some(t) => self.if_chain(t, next_body, tail, indent + 1),
                None => self.block(next_body, indent + 1),
            }
        }
    }

    /// An `if` on a constant condition at a neutral point: tested raw, with no `_pc` bookkeeping (its
    /// influence is neutral), its branches neutral too.
    fn quiet_if(
        &mut self,
        test: &Expr,
        body: &[Stmt],
        rest: &[(Option<&Expr>, &[Stmt])],
        indent: usize,
    ) {
        let f = self.flat(test, "_pc");
        if f.label != "_LIT" {
            self.unproved_constant("this condition");
        }
        self.flush_pre(indent);
        self.emit(indent, format!("if {}:", f.raw));
        self.branches(body, rest, indent);
    }

    /// `for x in range(...)` of constant arguments at a neutral point, without early exits: the raw range,
    /// no `_pc` bookkeeping, a neutral body. `None` when the loop is not one.
    fn quiet_range_loop(
        &mut self,
        target: &Expr,
        iter: &Expr,
        body: &[Stmt],
        indent: usize,
    ) -> Option<()> {
        let esc = escapes(body);
        if !self.neutral() || esc.loop_exit || esc.ret || !self.is_constant_range(iter) {
            return None;
        }
        let args = self.range_args(iter)?;
        let mut raws = Vec::new();
        for a in args {
            let f = self.flat(a, "_pc");
            if f.label != "_LIT" {
                self.unproved_constant("this range");
            }
            raws.push(f.raw);
        }
        self.flush_pre(indent);
        // Never read (no early exit), but a nested construct finds the loop's accumulator where it looks.
        let x = self.fresh("x");
        self.emit(indent, format!("{x} = _NEUTRAL"));
        let range = format!("range({})", raws.join(", "));
        match target {
            Expr::Name(n) if self.frame().constant.contains(n.id.as_str()) => {
                self.emit(indent, format!("for {} in {range}:", mangle(n.id.as_str())));
            }
            Expr::Name(n) if self.is_shadow(n.id.as_str()) => {
                let e = self.fresh("e");
                self.emit(indent, format!("for {e} in {range}:"));
                let v = Flat {
                    raw: e,
                    label: "_LIT".into(),
                };
                self.assign_flat(n.id.as_str(), v, indent + 1);
            }
            _ => {
                let e = self.fresh("e");
                self.emit(indent, format!("for {e}r in {range}:"));
                self.assign(target, format!("({e}r, _LIT)"), indent + 1);
            }
        }
        self.loop_body(target, x, body, indent + 1);
        Some(())
    }

    /// A `for` loop's body, with `x` as the loop's exit accumulator. The target is assigned at the top of
    /// every iteration: loads of it in the body need no check.
    fn loop_body(&mut self, target: &Expr, x: String, body: &[Stmt], indent: usize) {
        let mut targets = BTreeSet::new();
        collect_target_names(target, &mut targets);
        let added: Vec<String> = targets
            .into_iter()
            .filter(|t| self.frame().sure.insert_new(t))
            .collect();
        if let Some(f) = self.frames.last_mut() {
            f.loops.push(x);
        }
        self.block(body, indent);
        if let Some(f) = self.frames.last_mut() {
            f.loops.pop();
            for t in &added {
                f.sure.borrow_mut().remove(t);
            }
        }
    }

    pub(super) fn for_loop(&mut self, target: &Expr, iter: &Expr, body: &[Stmt], indent: usize) {
        if self.quiet_range_loop(target, iter, body, indent).is_some() {
            return;
        }
        let before = self.neutral();
        // Known when compiling even where the loop is not quiet (NORMAL, or a loop with early exits).
        let constant_elements = self.is_constant_range(iter);
        let it = self.fresh("it");
        let ps = self.fresh("ps");
        let x = self.fresh("x");
        let lp = self.fresh("lp");
        let e = self.fresh("e");
        // `for x in range(...)` iterates the raw range: no list of boxes is built. Every element carries
        // the range's label (its arguments' join), which is also its structure label.
        let raw_iter = match (self.range_args(iter), self.split_iter(iter)) {
            (Some(args), _) => {
                let args = self.exprs(args, "_pc");
                Some(format!("_rng([{args}])"))
            }
            (None, Some((method, recv, args))) => {
                let mut parts = vec![self.expr(recv, "_pc")];
                for a in args {
                    let f = self.flat(a, "_pc");
                    parts.push(f.raw);
                    parts.push(f.label);
                }
                let line = self.line;
                Some(format!(
                    "_msr_{method}_{}({}, _pc, {line})",
                    args.len(),
                    parts.join(", ")
                ))
            }
            (None, None) => None,
        };
        let (struct_label, header) = match raw_iter {
            Some(code) => {
                self.flush_pre(indent);
                self.emit(indent, format!("{it} = {code}"));
                // The one label of every element, read once.
                self.emit(indent, format!("{it}l = {it}[1]"));
                (format!("{it}l"), format!("for {e}r in {it}[0]:"))
            }
            None => {
                let v = self.expr(iter, "_pc");
                self.flush_pre(indent);
                self.emit(indent, format!("{it} = {v}"));
                (
                    format!("_struct({it})"),
                    format!("for {e} in _elems({it}):"),
                )
            }
        };
        let is_range = header.contains(&format!("{e}r in"));
        self.set_neutral(false);
        self.emit(indent, format!("{ps} = _pc"));
        self.emit(indent, format!("{x} = _NEUTRAL"));
        self.emit(indent, format!("_pc = (_pc | _inf({struct_label}))"));
        let esc = escapes(body);
        if esc.loop_exit || esc.ret {
            // Whether the loop is left early also depends on how many elements there are.
            self.emit(indent, format!("{x} = ({x} | _inf({struct_label}))"));
        }
        if esc.ret {
            for acc in self.exit_accumulators(Escapes {
                loop_exit: false,
                ret: true,
            }) {
                self.emit(indent, format!("{acc} = ({acc} | _inf({struct_label}))"));
            }
        }
        self.emit(indent, format!("{lp} = _pc"));
        self.preraise(&[body], indent);
        // A dict only this loop's counting idiom touches lives raw inside it (`raw.rs`), unpacked after
        // the pre-raise (which raises the box's structure label) and written back after the loop.
        let raw = self
            .raw_region(
                target,
                iter,
                body,
                indent,
                target.range().start().to_usize(),
            )
            .map(|name| {
                let steady = self.raw_steady(body, &name);
                let r = self.raw_enter(&name, steady, indent);
                self.raw.insert(name.clone(), r.clone());
                (name, r, self.out.len())
            });
        self.emit(indent, header);
        let shadow_target = match target {
            Expr::Name(n) if is_range && self.is_shadow(n.id.as_str()) => Some(n.id.to_string()),
            _ => None,
        };
        if is_range && shadow_target.is_none() {
            self.emit(indent + 1, format!("{e} = ({e}r, {it}l)"));
        }
        if esc.loop_exit || esc.ret {
            self.emit(indent + 1, format!("_pc = ({lp} | {x})"));
        } else {
            // Without early exits the accumulator stays neutral and every `if` restores `_pc`.
            self.emit(indent + 1, format!("_pc = {lp}"));
        }
        match &shadow_target {
            Some(name) => {
                let label = if constant_elements {
                    "_LIT".to_string()
                } else {
                    format!("{it}l")
                };
                let v = Flat {
                    raw: format!("{e}r"),
                    label,
                };
                self.assign_flat(name, v, indent + 1);
            }
            None => self.assign(target, e.clone(), indent + 1),
        }
        self.loop_body(target, x.clone(), body, indent + 1);
        if let Some((name, r, from)) = raw {
            self.raw.remove(&name);
            // The analysis said nothing in the loop reads the box; the code written must agree.
            if self.names_box_since(&name, from) {
                self.unproved_constant(&format!("`{name}` kept raw in a loop"));
            }
            self.raw_leave(&r, indent);
        }
        self.emit(indent, format!("_pc = ({ps} | {x})"));
        if self.strict {
            let mut names = BTreeSet::new();
            assigned_names(body, &mut names);
            let mut tn = BTreeSet::new();
            collect_target_names(target, &mut tn);
            names.extend(tn);
            for n in names {
                self.raise_name(&n, &format!("({lp} | {x})"), indent);
            }
        }
        self.set_neutral(before && !(esc.loop_exit || esc.ret));
    }

    pub(super) fn while_loop(&mut self, test: &Expr, body: &[Stmt], indent: usize) {
        let ps = self.fresh("ps");
        let x = self.fresh("x");
        let w = self.fresh("w");
        let c = self.fresh("c");
        let before = self.set_neutral(false);
        self.emit(indent, format!("{ps} = _pc"));
        self.emit(indent, format!("{x} = _NEUTRAL"));
        self.emit(indent, format!("{w} = _NEUTRAL"));
        self.emit(indent, "while True:".into());
        let i1 = indent + 1;
        self.emit(i1, format!("_pc = (({ps} | {x}) | {w})"));
        let t = self.expr(test, "_pc");
        self.flush_pre(i1);
        self.emit(i1, format!("{c} = {t}"));
        self.emit(i1, format!("{w} = ({w} | _inf(_cl({c})))"));
        self.emit(i1, format!("_pc = (_pc | _inf(_cl({c})))"));
        let esc = escapes(body);
        if esc.loop_exit || esc.ret {
            self.emit(i1, format!("{x} = ({x} | {w})"));
        }
        if esc.ret {
            for acc in self.exit_accumulators(Escapes {
                loop_exit: false,
                ret: true,
            }) {
                self.emit(i1, format!("{acc} = ({acc} | {w})"));
            }
        }
        self.preraise(&[body], i1);
        self.emit(i1, format!("if not _tr({c}):"));
        self.emit(i1 + 1, "break".into());
        if let Some(f) = self.frames.last_mut() {
            f.loops.push(x.clone());
        }
        self.block(body, i1);
        if let Some(f) = self.frames.last_mut() {
            f.loops.pop();
        }
        self.emit(indent, format!("_pc = ({ps} | {x})"));
        self.raise_assigned(&[body], &format!("(({ps} | {x}) | {w})"), indent);
        self.set_neutral(before && !(esc.loop_exit || esc.ret));
    }

    pub(super) fn params(
        &mut self,
        params: &Parameters,
        node: &impl Ranged,
    ) -> Option<Vec<String>> {
        if !params.posonlyargs.is_empty()
            || params.vararg.is_some()
            || params.kwarg.is_some()
            || !params.kwonlyargs.is_empty()
        {
            self.reject(
                node,
                Code::LowerFunction,
                "only plain parameters (with optional defaults) are supported".into(),
                "remove `*args`, `**kwargs`, `/` and `*`",
            );
            return None;
        }
        let mut out = Vec::new();
        for p in &params.args {
            let name = mangle(p.parameter.name.id.as_str());
            match &p.default {
                Some(d) => {
                    let v = self.expr(d, "_pc");
                    out.push(format!("{name}={v}"));
                }
                None => out.push(name),
            }
        }
        Some(out)
    }

    pub(super) fn function_def(&mut self, f: &ruff_python_ast::StmtFunctionDef, indent: usize) {
        if !f.decorator_list.is_empty() || f.is_async || f.type_params.is_some() {
            self.reject(
                f,
                Code::LowerFunction,
                "decorators, `async def` and type parameters are not supported".into(),
                "write a plain `def`",
            );
            return;
        }
        let Some(mut params) = self.params(&f.parameters, f) else {
            return;
        };
        self.flush_pre(indent);
        params.push("_zp=_NEUTRAL".into());
        let name = mangle(f.name.id.as_str());
        self.emit(indent, format!("def {name}({}):", params.join(", ")));
        let xf = self.fresh("xf");
        let mut locals = BTreeSet::new();
        assigned_names(&f.body, &mut locals);
        let param_names: BTreeSet<String> = f
            .parameters
            .args
            .iter()
            .map(|p| p.parameter.name.id.to_string())
            .collect();
        let i1 = indent + 1;
        self.emit(i1, "_pc = _zp".into());
        self.emit(i1, format!("{xf} = _NEUTRAL"));
        let mut all = locals.clone();
        all.extend(param_names.iter().cloned());
        self.frames.push(Frame {
            loops: Vec::new(),
            xf: Some(xf.clone()),
            locals: all,
            first_def: {
                let mut d = first_defs(&f.body);
                d.extend(
                    f.parameters
                        .args
                        .iter()
                        .map(|p| (p.parameter.name.id.to_string(), 0)),
                );
                d
            },
            sure: SureSet::default(),
            flat: BTreeSet::new(),
            constant: BTreeSet::new(),
            neutral: false,
        });
        let flat = self.infer_flat(&f.body, &param_names);
        if let Some(fr) = self.frames.last_mut() {
            fr.flat = flat;
        }
        for n in locals.difference(&param_names) {
            self.emit(i1, format!("{} = _UNDEF", mangle(n)));
            if self.is_shadow(n) {
                self.emit(i1, format!("{n}_l = _LIT"));
            }
        }
        self.block(&f.body, i1);
        self.emit(i1, format!("return _ret((None, _LIT), _pc, {xf})"));
        self.frames.pop();
        self.emit(indent, format!("{name} = _as(({name}, _LIT), _pc)"));
    }
}
