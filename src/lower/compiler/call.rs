//! Lowering calls: builtins, `json`/`re` functions, methods (with their fast paths), plan functions and
//! function values, and tool calls with their arguments bound by name.

use super::*;
use crate::plan::catalogue::Keywords;

impl Compiler<'_> {
    /// A call of a catalogue builtin or module function: `helper(args, k=v, _zp=pc)`. The front end
    /// refused keywords the row does not take (Z109); one reaching here means the checks disagree (Z096).
    fn catalogue_call(
        &mut self,
        c: &ruff_python_ast::ExprCall,
        helper: String,
        what: &str,
        keywords: Keywords,
        pc: &str,
    ) -> String {
        let args = self.exprs(&c.arguments.args, pc);
        let Some(kws) = self.keywords(&c.arguments.keywords, pc, false) else {
            return "None".into();
        };
        if let Some((k, _)) = kws.iter().find(|(k, _)| !keywords.accepts(k)) {
            self.reject(
                c,
                Code::LowerArgument,
                format!("`{what}` does not take `{k}=` here"),
                "remove the keyword argument",
            );
            return "None".into();
        }
        let mut all: Vec<String> = if args.is_empty() { vec![] } else { vec![args] };
        all.extend(kws.into_iter().map(|(k, v)| format!("{k}={v}")));
        all.push(format!("_zp={pc}"));
        format!("{helper}({})", all.join(", "))
    }

    pub(super) fn keywords(
        &mut self,
        kws: &[ruff_python_ast::Keyword],
        pc: &str,
        mangle_names: bool,
    ) -> Option<Vec<(String, String)>> {
        let mut out = Vec::new();
        for k in kws {
            let Some(arg) = &k.arg else {
                self.reject(
                    k,
                    Code::LowerExpression,
                    "`**` arguments are not supported".into(),
                    "pass arguments by name",
                );
                return None;
            };
            let name = if mangle_names {
                mangle(arg.id.as_str())
            } else {
                arg.id.to_string()
            };
            out.push((name, self.expr(&k.value, pc)));
        }
        Some(out)
    }

    pub(super) fn call(&mut self, c: &ruff_python_ast::ExprCall, pc: &str) -> String {
        let line = self.line_of(c.range().start().to_usize());
        if c.arguments
            .args
            .iter()
            .any(|a| matches!(a, Expr::Starred(_)))
        {
            self.reject(
                c,
                Code::LowerExpression,
                "`*` arguments are not supported".into(),
                "pass the arguments one by one",
            );
            return "None".into();
        }
        match c.func.as_ref() {
            Expr::Name(n) if !self.is_local(n.id.as_str()) => {
                let name = n.id.as_str();
                if let Some(params) = self.sigs.tools.get(name).cloned() {
                    return self.tool_call(c, name, &params, pc, line);
                }
                if self.sigs.verifiers.contains(name) {
                    let or_none = match c.arguments.keywords.as_slice() {
                        [] => Some(false),
                        [k] if k.arg.as_ref().is_some_and(|a| a.as_str() == "or_none") => {
                            match &k.value {
                                Expr::BooleanLiteral(b) => Some(b.value),
                                _ => None,
                            }
                        }
                        _ => None,
                    };
                    let (Some(or_none), 1) = (or_none, c.arguments.args.len()) else {
                        self.reject(
                            c,
                            Code::LowerArgument,
                            format!("verifier `{name}` takes exactly one positional argument"),
                            "pass the value to check",
                        );
                        return "None".into();
                    };
                    let v = self.expr(&c.arguments.args[0], pc);
                    // `or_none` is the plan's own literal: the host reads it as a flag, not as data.
                    let flag = if or_none {
                        ", or_none=(True, _LIT)"
                    } else {
                        ""
                    };
                    return format!("{name}({v}{flag}, _zpc={pc}, _zline={line})");
                }
                if let Some(row) = catalogue::builtin_row(name) {
                    return self.catalogue_call(c, format!("_bi_{name}"), name, row.keywords, pc);
                }
                self.reject(
                    c,
                    Code::LowerName,
                    format!("`{name}` is not a tool, verifier, builtin or plan function"),
                    "call a declared tool",
                );
                "None".into()
            }
            Expr::Attribute(a) => {
                let method = a.attr.id.as_str();
                if let Expr::Name(m) = a.value.as_ref()
                    && self.imports.contains(m.id.as_str())
                    && !self.is_local(m.id.as_str())
                {
                    let module = m.id.as_str();
                    let Some(row) = catalogue::module_fn_row(module, method) else {
                        self.reject(
                            c,
                            Code::LowerMethod,
                            format!("`{module}.{method}` is not available"),
                            &format!(
                                "the functions available are {}",
                                crate::plan::subset::module_functions(module)
                            ),
                        );
                        return "None".into();
                    };
                    return self.catalogue_call(
                        c,
                        format!("_{module}_{method}"),
                        &format!("{module}.{method}"),
                        row.keywords,
                        pc,
                    );
                }
                let Some(row) = catalogue::method_row(method) else {
                    self.reject(
                        c,
                        Code::LowerMethod,
                        format!("method `{method}` is not available"),
                        "use a listed str, list, dict or set method",
                    );
                    return "None".into();
                };
                let flat_args = c.arguments.keywords.is_empty()
                    && c.arguments.args.len() <= crate::lower::generated::MAX_FLAT_ARGS
                    && c.arguments.args.iter().all(|x| self.is_flat_expr(x));
                if flat_args
                    && let Some((name, _)) = str_fast(method)
                    && crate::lower::generated::has_fast_path(name, c.arguments.args.len())
                {
                    let recv = self.expr(&a.value, pc);
                    let mut parts = vec![recv];
                    for arg in &c.arguments.args {
                        let f = self.flat(arg, pc);
                        parts.push(f.raw);
                        parts.push(f.label);
                    }
                    let n = c.arguments.args.len();
                    return format!("_ms_{name}_{n}({}, {pc}, {line})", parts.join(", "));
                }
                if method == "get"
                    && c.arguments.keywords.is_empty()
                    && (1..=2).contains(&c.arguments.args.len())
                    && self.is_flat_expr(&c.arguments.args[0])
                {
                    let recv = self.expr(&a.value, pc);
                    let k = self.flat(&c.arguments.args[0], pc);
                    let d = match c.arguments.args.get(1) {
                        Some(d) => self.expr(d, pc),
                        None => self.constant("(None, _LIT)".into()),
                    };
                    return format!("_mg2({recv}, {}, {}, {d}, {pc}, {line})", k.raw, k.label);
                }
                if self.fused
                    && method == "get"
                    && c.arguments.keywords.is_empty()
                    && let [k, Expr::List(empty)] = c.arguments.args.as_ref()
                    && empty.elts.is_empty()
                    && !matches!(k, Expr::Starred(_))
                {
                    // `d.get(k, [])` (lean.rs): `_m_get` with the new empty list made only if returned.
                    let recv = self.expr(&a.value, pc);
                    let k = self.expr(k, pc);
                    return format!("_mgl({recv}, {k}, {pc}, {line})");
                }
                if method == "append"
                    && c.arguments.keywords.is_empty()
                    && c.arguments.args.len() == 1
                    && !matches!(c.arguments.args[0], Expr::Starred(_))
                {
                    let recv = self.expr(&a.value, pc);
                    let v = self.expr(&c.arguments.args[0], pc);
                    return format!("_mapp({recv}, {v}, {pc}, {line})");
                }
                if method == "join"
                    && c.arguments.keywords.is_empty()
                    && c.arguments.args.len() == 1
                    && !matches!(c.arguments.args[0], Expr::Starred(_))
                    && self.is_flat_expr(&a.value)
                {
                    // `sep.join(xs)` with a flat separator: the strings are read straight from the box.
                    let sep = self.flat(&a.value, pc);
                    let v = self.expr(&c.arguments.args[0], pc);
                    return format!("_mjoin({}, {}, {v}, {pc}, {line})", sep.raw, sep.label);
                }
                let recv = self.expr(&a.value, pc);
                let args = self.exprs(&c.arguments.args, pc);
                let Some(kws) = self.keywords(&c.arguments.keywords, pc, false) else {
                    return "None".into();
                };
                if let Some((k, _)) = kws.iter().find(|(k, _)| !row.keywords.accepts(k)) {
                    self.reject(
                        c,
                        Code::LowerArgument,
                        format!("`.{method}()` does not take `{k}=` here"),
                        "remove the keyword argument",
                    );
                    return "None".into();
                }
                let kw = kws
                    .iter()
                    .map(|(k, v)| format!("{}: {v}", py_str(k)))
                    .collect::<Vec<_>>()
                    .join(", ");
                let args = if args.is_empty() {
                    "_NOARGS".to_string()
                } else {
                    format!("[{args}]")
                };
                let kw = if kw.is_empty() {
                    "_NOKW".to_string()
                } else {
                    format!("{{{kw}}}")
                };
                match method {
                    "get" => format!("_m_get({recv}, {args}, {kw}, {pc}, {line})"),
                    _ => format!("_m({recv}, '{method}', {args}, {kw}, {pc}, {line})"),
                }
            }
            callee => {
                // A plan function or a function value.
                let f = self.expr(callee, pc);
                if self.fused
                    && c.arguments.keywords.is_empty()
                    && let [arg] = c.arguments.args.as_ref()
                    && !matches!(arg, Expr::Starred(_))
                {
                    // One positional argument (lean.rs): `_call1`, `_call` without `*args, **kw`.
                    let a = self.expr(arg, pc);
                    return format!("_call1({f}, {pc}, {a})");
                }
                let args = self.exprs(&c.arguments.args, pc);
                let Some(kws) = self.keywords(&c.arguments.keywords, pc, true) else {
                    return "None".into();
                };
                let mut all = vec![f, pc.to_string()];
                if !args.is_empty() {
                    all.push(args);
                }
                all.extend(kws.into_iter().map(|(k, v)| format!("{k}={v}")));
                format!("_call({})", all.join(", "))
            }
        }
    }

    pub(super) fn tool_call(
        &mut self,
        c: &ruff_python_ast::ExprCall,
        name: &str,
        params: &[String],
        pc: &str,
        line: u32,
    ) -> String {
        let mut bound: Vec<(String, String)> = Vec::new();
        if c.arguments.args.len() > params.len() {
            self.reject(
                c,
                Code::LowerArgument,
                format!("`{name}` takes {} arguments", params.len()),
                "remove the extra arguments",
            );
            return "None".into();
        }
        for (i, a) in c.arguments.args.iter().enumerate() {
            let v = self.expr(a, pc);
            bound.push((params[i].clone(), v));
        }
        for k in c.arguments.keywords.iter() {
            let Some(arg) = &k.arg else {
                self.reject(
                    k,
                    Code::LowerExpression,
                    "`**` arguments are not supported".into(),
                    "pass arguments by name",
                );
                return "None".into();
            };
            let an = arg.id.as_str();
            if !params.iter().any(|p| p == an) || bound.iter().any(|(b, _)| b == an) {
                self.reject(
                    k,
                    Code::LowerArgument,
                    format!("`{name}` has no argument `{an}` (or it is given twice)"),
                    "use the argument names the policy declares",
                );
                return "None".into();
            }
            let v = self.expr(&k.value, pc);
            bound.push((an.to_string(), v));
        }
        if bound.len() != params.len() {
            self.reject(
                c,
                Code::LowerArgument,
                format!("`{name}` needs every argument: {}", params.join(", ")),
                "pass every argument",
            );
            return "None".into();
        }
        let mut args: Vec<String> = bound.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        args.push(format!("_zpc={pc}"));
        args.push(format!("_zline={line}"));
        format!("{name}({})", args.join(", "))
    }
}
