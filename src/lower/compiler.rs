//! AST → lowered Python text. Each plan statement becomes one or more lines that call prelude helpers;
//! expressions become nested helper calls on boxed values.

use std::collections::BTreeSet;

use ruff_python_ast::{
    BoolOp, CmpOp, ConversionFlag, Expr, FStringPart, InterpolatedStringElement, ModModule, Number,
    Operator, Parameters, Stmt, UnaryOp,
};
use ruff_text_size::Ranged;

use super::scope::{Escapes, assigned_names, each_child, escapes, mutation_receivers};
use super::{Lowered, Mode};
use crate::label::{LITERAL, UNVERIFIED_MASK};
use crate::plan::{Diagnostic, Severity, Signatures};

use crate::plan::catalogue;

type Line = (usize, String, u32);

struct Frame {
    /// Loop exit accumulators of the enclosing loops in this function, innermost last.
    loops: Vec<String>,
    /// The function's return accumulator, `None` at module level.
    xf: Option<String>,
    /// Names bound in this scope (loads of them go through `_ld` unless surely assigned).
    locals: BTreeSet<String>,
    /// For names assigned by a top-level statement of this scope: the end offset of the first such statement.
    /// Top-level statements run in order, so a load after that offset in this scope's own code (not in a
    /// nested function) always finds the name assigned and needs no `_ld` check.
    first_def: std::collections::BTreeMap<String, usize>,
    /// Names surely assigned in the code being compiled now (loop targets inside their loop body).
    sure: SureSet,
    /// Flat variables of this scope, kept unboxed as `x_` (raw) and `x_l` (label); see `flat.rs`.
    flat: BTreeSet<String>,
}

/// A flat expression compiled to two pieces of code: `raw` (evaluated first) and `label` (side-effect free;
/// it may read temporaries `raw` binds).
struct Flat {
    raw: String,
    label: String,
}

/// A label code marked computed (every kind unverified), without writing `| _UV` twice.
fn computed(code: &str) -> String {
    if code.ends_with(" | _UV)") {
        code.to_string()
    } else {
        format!("({code} | _UV)")
    }
}

/// Joins two label codes and marks the result computed (every kind unverified).
fn join_uv(a: &str, b: &str) -> String {
    if a == "_LIT" {
        return computed(b);
    }
    if b == "_LIT" {
        return computed(a);
    }
    format!("({} | {} | _UV)", strip_uv(a), strip_uv(b))
}

/// A label code without a trailing `| _UV` (the caller adds its own; OR is idempotent).
fn strip_uv(code: &str) -> &str {
    code.strip_prefix('(')
        .and_then(|c| c.strip_suffix(" | _UV)"))
        .filter(|inner| is_atom(inner))
        .unwrap_or(code)
}

/// Code that can be written twice without evaluating anything twice.
fn is_atom(code: &str) -> bool {
    code.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'[' || b == b']')
}

/// A set behind a `RefCell`, so it can be updated through `&self` accessors.
#[derive(Default)]
struct SureSet(std::cell::RefCell<BTreeSet<String>>);

impl SureSet {
    /// Inserts `name`; true if it was not there (so the caller removes it again afterwards).
    fn insert_new(&self, name: &str) -> bool {
        self.0.borrow_mut().insert(name.to_string())
    }
    fn contains(&self, name: &str) -> bool {
        self.0.borrow().contains(name)
    }
    fn borrow_mut(&self) -> std::cell::RefMut<'_, BTreeSet<String>> {
        self.0.borrow_mut()
    }
}

struct Compiler<'a> {
    sigs: &'a Signatures,
    strict: bool,
    out: Vec<Line>,
    /// Hoisted definitions (lambdas, comprehensions) waiting to be emitted before the current statement.
    pre: Vec<Line>,
    line: u32,
    tmp: usize,
    diags: Vec<Diagnostic>,
    imports: BTreeSet<String>,
    frames: Vec<Frame>,
    /// Line starts, for offset → line.
    line_starts: Vec<usize>,
    /// Boxed literals shared by every use (immutable tuples), emitted once after the prelude.
    constants: std::collections::BTreeMap<String, String>,
    /// Plan functions defined at module level, by name: a direct call's mutation set is pre-raised.
    functions: std::collections::BTreeMap<String, &'a [Stmt]>,
    /// `str` method fast paths used (method, number of flat arguments); their helpers are generated.
    str_methods: BTreeSet<(&'static str, usize)>,
    /// `for x in s.split(...)` loops iterating the raw list (method, number of flat arguments).
    split_iters: BTreeSet<(&'static str, usize)>,
}

/// A method whose result a `for` loop iterates raw (a list of `str` that all carry one label), and its
/// catalogue name.
fn split_method(name: &str) -> Option<&'static str> {
    catalogue::method_row(name)
        .filter(|m| m.str_fast == Some(true))
        .map(|m| m.name)
}

/// A `str` method with a generated fast path for flat arguments, its catalogue name and whether the result
/// is a list.
fn str_fast(name: &str) -> Option<(&'static str, bool)> {
    catalogue::method_row(name).and_then(|m| m.str_fast.map(|list| (m.name, list)))
}

/// The helper for `for x in s.split(a0, ...)`: the raw list and the one label every element and the
/// structure carry (what `_box` would give each of them). On anything but a `str` the general `_m` raises.
fn split_iter_helper(method: &str, n: usize) -> String {
    let FlatArgs {
        params,
        raws,
        label,
        boxed,
    } = flat_args(n);
    format!(
        "def _msr_{method}_{n}(c{params}, pc, line):\n    x = c[0]\n    if type(x) is str:\n        return (x.{method}({raws}), {label} | _UV)\n    _m(c, '{method}', {boxed}, _NOKW, pc, line)\n    raise TypeError('{method}() needs a str')\n"
    )
}

/// The pieces of a generated helper over a receiver `c` and `n` flat arguments passed as raw value and
/// label (`a0, l0, ...`).
struct FlatArgs {
    /// `, a0, l0, a1, l1` (empty without arguments).
    params: String,
    /// `a0, a1`.
    raws: String,
    /// The join of the receiver's and the arguments' labels.
    label: String,
    /// The arguments boxed again, for the general helper.
    boxed: String,
}

fn flat_args(n: usize) -> FlatArgs {
    let raws: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    let boxed: Vec<String> = (0..n).map(|i| format!("(a{i}, l{i})")).collect();
    FlatArgs {
        params: (0..n).map(|i| format!(", a{i}, l{i}")).collect(),
        raws: raws.join(", "),
        label: std::iter::once("c[1]".to_string())
            .chain((0..n).map(|i| format!("l{i}")))
            .collect::<Vec<_>>()
            .join(" | "),
        boxed: if n > 0 {
            format!("[{}]", boxed.join(", "))
        } else {
            "_NOARGS".into()
        },
    }
}

/// The helper for `s.method(a0, ...)` with `n` flat arguments passed as raw value and label: on a `str`
/// receiver it applies the method to raw values (the label is the join of all, computed); anything else
/// goes through the general `_m` with the arguments boxed again.
fn str_method_helper(method: &str, n: usize, list: bool) -> String {
    let FlatArgs {
        params,
        raws,
        label,
        boxed,
    } = flat_args(n);
    let result = format!("x.{method}({raws})");
    let ret = if list {
        format!("_box({result}, {label} | _UV)")
    } else {
        format!("({result}, {label} | _UV)")
    };
    format!(
        "def _ms_{method}_{n}(c{params}, pc, line):\n    x = c[0]\n    if type(x) is str:\n        return {ret}\n    return _m(c, '{method}', {boxed}, _NOKW, pc, line)\n"
    )
}

/// Compiles a parsed plan. `source` is the text the module was parsed from (for line numbers).
pub fn compile(
    module: &ModModule,
    source: &str,
    sigs: &Signatures,
    mode: Mode,
) -> Result<Lowered, Vec<Diagnostic>> {
    let c = lower_plan(module, source, sigs, mode)?;
    link(c)
}

/// Only the compiler's own checks (the `Z09x` codes), without building the program: what `lint` needs.
///
/// ```
/// use zamburak::lower::{check, Mode};
/// use zamburak::plan::Signatures;
/// let module = ruff_python_parser::parse_module("x = 1\n").unwrap().into_syntax();
/// assert!(check(&module, "x = 1\n", &Signatures::default(), Mode::Strict).is_ok());
/// ```
pub fn check(
    module: &ModModule,
    source: &str,
    sigs: &Signatures,
    mode: Mode,
) -> Result<(), Vec<Diagnostic>> {
    lower_plan(module, source, sigs, mode).map(|_| ())
}

fn lower_plan<'a>(
    module: &'a ModModule,
    source: &str,
    sigs: &'a Signatures,
    mode: Mode,
) -> Result<Compiler<'a>, Vec<Diagnostic>> {
    let mut line_starts = vec![0];
    line_starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
    let mut c = Compiler {
        sigs,
        strict: mode == Mode::Strict,
        out: Vec::new(),
        pre: Vec::new(),
        line: 0,
        tmp: 0,
        diags: Vec::new(),
        imports: BTreeSet::new(),
        frames: Vec::new(),
        line_starts,
        constants: Default::default(),
        functions: module
            .body
            .iter()
            .filter_map(|s| match s {
                Stmt::FunctionDef(f) => Some((f.name.id.to_string(), f.body.as_slice())),
                _ => None,
            })
            .collect(),
        str_methods: BTreeSet::new(),
        split_iters: BTreeSet::new(),
    };
    let mut names = BTreeSet::new();
    assigned_names(&module.body, &mut names);
    c.frames.push(Frame {
        loops: Vec::new(),
        xf: None,
        locals: names.clone(),
        first_def: first_defs(&module.body),
        sure: SureSet::default(),
        flat: BTreeSet::new(),
    });
    let flat = c.infer_flat(&module.body, &BTreeSet::new());
    if let Some(f) = c.frames.last_mut() {
        f.flat = flat;
    }
    c.emit(0, "_pc = _NEUTRAL".into());
    for n in &names {
        c.emit(0, format!("{} = _UNDEF", mangle(n)));
        if c.is_shadow(n) {
            c.emit(0, format!("{}_l = _LIT", n));
        }
    }
    c.block(&module.body, 0);
    if !c.diags.is_empty() {
        return Err(c.diags);
    }
    Ok(c)
}

fn link(c: Compiler<'_>) -> Result<Lowered, Vec<Diagnostic>> {
    let header = format!(
        "_STRICT = {}\n_LIT = {}\n_UV = {}\n_NUV = ~_UV\n",
        if c.strict { "True" } else { "False" },
        LITERAL,
        UNVERIFIED_MASK
    );
    let mut generated = String::new();
    for (method, n) in &c.str_methods {
        let list = str_fast(method).is_some_and(|(_, list)| list);
        generated.push_str(&str_method_helper(method, *n, list));
    }
    for (method, n) in &c.split_iters {
        generated.push_str(&split_iter_helper(method, *n));
    }
    // The plan's own snippet: constants, generated helpers, boxed literals, the plan. It runs on the
    // prelude session built at build time (`runtime::exec`).
    let mut snippet = String::with_capacity(header.len() + generated.len() + c.out.len() * 40);
    snippet.push_str(&header);
    snippet.push_str(&generated);
    for (boxed, name) in &c.constants {
        snippet.push_str(&format!("{name} = {boxed}\n"));
    }
    let mut snippet_map = vec![0u32; snippet.lines().count()];
    for (indent, text, line) in &c.out {
        for _ in 0..*indent {
            snippet.push_str("    ");
        }
        snippet.push_str(text);
        snippet.push('\n');
        snippet_map.push(*line);
    }
    Ok(Lowered {
        snippet,
        snippet_map,
    })
}

fn mangle(name: &str) -> String {
    format!("{name}_")
}

fn py_str(s: &str) -> String {
    // A JSON string literal is a valid Python string literal with the same value.
    serde_json::to_string(s).unwrap_or_else(|_| "''".into())
}

fn op_name(op: Operator) -> Option<&'static str> {
    Some(match op {
        Operator::Add => "+",
        Operator::Sub => "-",
        Operator::Mult => "*",
        Operator::Div => "/",
        Operator::FloorDiv => "//",
        Operator::Mod => "%",
        Operator::Pow => "**",
        Operator::LShift => "<<",
        Operator::RShift => ">>",
        Operator::BitOr => "|",
        Operator::BitXor => "^",
        Operator::BitAnd => "&",
        Operator::MatMult => return None,
    })
}

fn unary_name(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Not => "not",
        UnaryOp::USub => "-",
        UnaryOp::UAdd => "+",
        UnaryOp::Invert => "~",
    }
}

fn cmp_name(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::NotEq => "!=",
        CmpOp::Lt => "<",
        CmpOp::LtE => "<=",
        CmpOp::Gt => ">",
        CmpOp::GtE => ">=",
        CmpOp::Is => "is",
        CmpOp::IsNot => "is not",
        CmpOp::In => "in",
        CmpOp::NotIn => "not in",
    }
}

impl super::flat::Names for Compiler<'_> {
    fn is_flat_name(&self, name: &str) -> bool {
        self.is_shadow(name)
    }
    fn is_builtin_call(&self, name: &str) -> bool {
        Compiler::is_builtin_call(self, name)
    }
}

impl Compiler<'_> {
    fn line_of(&self, offset: usize) -> u32 {
        let idx = self.line_starts.partition_point(|s| *s <= offset);
        u32::try_from(idx).unwrap_or(u32::MAX)
    }

    fn emit(&mut self, indent: usize, text: String) {
        self.out.push((indent, text, self.line));
    }

    fn flush_pre(&mut self, indent: usize) {
        let pre = std::mem::take(&mut self.pre);
        for (i, text, line) in pre {
            self.out.push((indent + i, text, line));
        }
    }

    /// A name for a boxed literal; short literals only, so the shared table stays small.
    fn constant(&mut self, boxed: String) -> String {
        if boxed.len() > 80 {
            return boxed;
        }
        let next = self.constants.len();
        self.constants
            .entry(boxed)
            .or_insert_with(|| format!("_k{next}"))
            .clone()
    }

    fn fresh(&mut self, stem: &str) -> String {
        self.tmp += 1;
        format!("_{stem}{}", self.tmp)
    }

    fn reject(&mut self, node: &impl Ranged, code: &'static str, message: String, hint: &str) {
        let r = node.range();
        self.diags.push(Diagnostic {
            code,
            severity: Severity::Error,
            start: r.start().to_usize(),
            end: r.end().to_usize(),
            message,
            hint: Some(hint.to_string()),
        });
    }

    fn frame(&self) -> &Frame {
        // The module frame is pushed first and never popped, so there is always one.
        self.frames
            .last()
            .expect("compile() pushes the module frame before compiling")
    }

    fn is_local(&self, name: &str) -> bool {
        self.frames.iter().any(|f| f.locals.contains(name))
    }

    // ---- flat (unboxed) values --------------------------------------------------------------------------

    /// A variable of the current scope kept unboxed (`x_`, `x_l`).
    fn is_shadow(&self, name: &str) -> bool {
        self.frame().flat.contains(name)
    }

    /// A call of `name` reaches the builtin: the plan does not bind it and the policy declares no tool or
    /// verifier of that name (the order `call` resolves names in).
    fn is_builtin_call(&self, name: &str) -> bool {
        !self.is_local(name)
            && !self.sigs.tools.contains_key(name)
            && !self.sigs.verifiers.contains(name)
            && catalogue::builtin_row(name).is_some()
    }

    /// The arguments of `range(...)` when a `for` iterates it raw.
    fn range_args<'e>(&self, iter: &'e Expr) -> Option<&'e [Expr]> {
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
    fn split_iter<'e>(&self, iter: &'e Expr) -> Option<(&'static str, &'e Expr, &'e [Expr])> {
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
            && c.arguments.args.len() <= 2
            && c.arguments.args.iter().all(|x| self.is_flat_expr(x));
        ok.then_some((method, a.value.as_ref(), c.arguments.args.as_ref()))
    }

    /// The flat variables of a scope (the current frame must be that scope's, already pushed).
    fn infer_flat(&self, body: &[Stmt], params: &BTreeSet<String>) -> BTreeSet<String> {
        super::flat::infer(body, params, &|n| self.is_builtin_call(n), &|e| {
            self.range_args(e).is_some() || self.split_iter(e).is_some()
        })
    }

    fn is_flat_expr(&self, e: &Expr) -> bool {
        super::flat::is_flat(e, self)
    }

    /// A flat expression as raw and label code: written out where the rules allow, else the boxed code
    /// split through a temporary.
    fn flat(&mut self, e: &Expr, pc: &str) -> Flat {
        if let Some(f) = self.try_flat(e, pc) {
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
    fn try_flat(&mut self, e: &Expr, pc: &str) -> Option<Flat> {
        use super::flat::{flat_operator, is_flat_builtin, is_raw_method};
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
                self.split_iters.insert((method, args.len()));
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
    fn flat_fstring(&mut self, f: &ruff_python_ast::ExprFString, pc: &str) -> Option<Flat> {
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

    /// Assigns a flat value to a shadowed variable (raw first: the label code may read temporaries it binds).
    /// STRICT: a shadowed variable assigned under `_pc` carries it (joined in the same statement).
    fn assign_flat(&mut self, name: &str, v: Flat, indent: usize) {
        let m = mangle(name);
        self.emit(indent, format!("{m} = {}", v.raw));
        if self.strict {
            self.emit(indent, format!("{name}_l = {} | _pc", v.label));
        } else {
            self.emit(indent, format!("{name}_l = {}", v.label));
        }
    }

    // ---- statements -----------------------------------------------------------------------------------

    fn block(&mut self, body: &[Stmt], indent: usize) {
        if body.is_empty() {
            self.emit(indent, "pass".into());
        }
        // A name assigned by a statement of this block is bound for the statements after it (a statement
        // that raises ends the run), so loads there need no `_ld` check.
        let mut added = Vec::new();
        for stmt in body {
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

    fn stmt(&mut self, stmt: &Stmt, indent: usize) {
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
            Stmt::If(s) => {
                let clauses: Vec<(Option<&Expr>, &[Stmt])> = s
                    .elif_else_clauses
                    .iter()
                    .map(|c| (c.test.as_ref(), c.body.as_slice()))
                    .collect();
                self.if_chain(&s.test, &s.body, &clauses, indent);
            }
            Stmt::For(s) => {
                if !s.orelse.is_empty() || s.is_async {
                    self.reject(
                        stmt,
                        "Z090",
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
                        "Z090",
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
                        "Z090",
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
                            "Z090",
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
                    "Z090",
                    format!("`{kind}` statements are not supported in plans"),
                    "rewrite the plan without it",
                );
            }
        }
    }

    fn assign(&mut self, target: &Expr, value: String, indent: usize) {
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
                if self.strict {
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
                        "Z091",
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
                "Z091",
                "this assignment target is not supported".into(),
                "assign to a name, a subscript or a tuple of names",
            ),
        }
    }

    fn unpack(&mut self, elts: &[Expr], value: String, indent: usize) {
        if elts.iter().any(|e| matches!(e, Expr::Starred(_))) {
            self.reject(
                &elts[0],
                "Z091",
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

    fn aug_assign(&mut self, s: &ruff_python_ast::StmtAugAssign, indent: usize) {
        let Some(op) = op_name(s.op) else {
            self.reject(
                s,
                "Z092",
                "the `@` operator is not supported".into(),
                "use an explicit computation",
            );
            return;
        };
        let line = self.line;
        match s.target.as_ref() {
            Expr::Name(n)
                if self.is_shadow(n.id.as_str())
                    && super::flat::flat_operator(s.op)
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
                let k = self.fresh("k");
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
                "Z091",
                "this augmented assignment target is not supported".into(),
                "assign to a name or a subscript",
            ),
        }
    }

    /// Pre-raises (STRICT) every container the block may mutate, with the current `_pc`.
    fn preraise(&mut self, bodies: &[&[Stmt]], indent: usize) {
        if !self.strict {
            return;
        }
        let mut receivers = Vec::new();
        for b in bodies {
            mutation_receivers(b, &mut receivers);
            // A plan function called directly in the block may mutate what it is given and the module
            // containers it names: pre-raise those too (docs/semantics.md §4, static mutation set).
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
    fn receiver_code(&self, e: &Expr) -> Option<String> {
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
    fn raise_name(&mut self, name: &str, label: &str, indent: usize) {
        if self.is_shadow(name) {
            self.emit(indent, format!("{name}_l = ({name}_l | {label})"));
        } else {
            let m = mangle(name);
            self.emit(indent, format!("{m} = _rz({m}, {label})"));
        }
    }

    /// Variables the block may assign are raised by `_pc` afterwards (STRICT; not-taken branches).
    fn raise_assigned(&mut self, bodies: &[&[Stmt]], label: &str, indent: usize) {
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
    fn exit_accumulators(&self, esc: Escapes) -> Vec<String> {
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

    fn if_chain(
        &mut self,
        test: &Expr,
        body: &[Stmt],
        rest: &[(Option<&Expr>, &[Stmt])],
        indent: usize,
    ) {
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
        let mut bodies: Vec<&[Stmt]> = vec![body];
        bodies.extend(rest.iter().map(|(_, b)| *b));
        // Later `elif` tests run only when this one failed, so their branches are part of this decision.
        let mut esc = escapes(body);
        for (_, b) in rest {
            let e = escapes(b);
            esc.loop_exit |= e.loop_exit;
            esc.ret |= e.ret;
        }
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
        self.block(body, indent + 1);
        if let Some(((next_test, next_body), tail)) = rest.split_first() {
            self.emit(indent, "else:".into());
            match next_test {
                Some(t) => self.if_chain(t, next_body, tail, indent + 1),
                None => self.block(next_body, indent + 1),
            }
        }
        let escaping = esc.loop_exit || esc.ret;
        if escaping {
            // What follows runs only if no branch left early: it depends on the condition.
            self.emit(indent, format!("_pc = ({ps} | {l})"));
        } else {
            self.emit(indent, format!("_pc = {ps}"));
        }
        self.raise_assigned(&bodies, &format!("({ps} | {l})"), indent);
    }

    fn for_loop(&mut self, target: &Expr, iter: &Expr, body: &[Stmt], indent: usize) {
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
                self.split_iters.insert((method, args.len()));
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
                let v = Flat {
                    raw: format!("{e}r"),
                    label: format!("{it}l"),
                };
                self.assign_flat(name, v, indent + 1);
            }
            None => self.assign(target, e.clone(), indent + 1),
        }
        // The target is assigned at the top of every iteration: loads of it in the body need no check.
        let mut targets = BTreeSet::new();
        collect_target_names(target, &mut targets);
        let added: Vec<String> = targets
            .into_iter()
            .filter(|t| self.frame().sure.insert_new(t))
            .collect();
        if let Some(f) = self.frames.last_mut() {
            f.loops.push(x.clone());
        }
        self.block(body, indent + 1);
        if let Some(f) = self.frames.last_mut() {
            f.loops.pop();
            for t in &added {
                f.sure.borrow_mut().remove(t);
            }
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
    }

    fn while_loop(&mut self, test: &Expr, body: &[Stmt], indent: usize) {
        let ps = self.fresh("ps");
        let x = self.fresh("x");
        let w = self.fresh("w");
        let c = self.fresh("c");
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
    }

    fn params(&mut self, params: &Parameters, node: &impl Ranged) -> Option<Vec<String>> {
        if !params.posonlyargs.is_empty()
            || params.vararg.is_some()
            || params.kwarg.is_some()
            || !params.kwonlyargs.is_empty()
        {
            self.reject(
                node,
                "Z093",
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

    fn function_def(&mut self, f: &ruff_python_ast::StmtFunctionDef, indent: usize) {
        if !f.decorator_list.is_empty() || f.is_async || f.type_params.is_some() {
            self.reject(
                f,
                "Z093",
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

    // ---- expressions ------------------------------------------------------------------------------------

    fn load_name(&mut self, name: &str, offset: usize) -> String {
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

    fn expr(&mut self, e: &Expr, pc: &str) -> String {
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
                        "Z092",
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
                        "Z094",
                        format!("`{name}` can only be called directly"),
                        "call it where you need its result",
                    );
                    "None".into()
                } else {
                    self.reject(
                        e,
                        "Z094",
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
                        "Z092",
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
                            "Z092",
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
                        "Z092",
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
                        "Z092",
                        "`**` in a dict comprehension is not supported".into(),
                        "use `update`",
                    );
                    "None".into()
                }
            },
            Expr::Attribute(_) => {
                self.reject(
                    e,
                    "Z095",
                    "attribute access is only allowed as a method call".into(),
                    "call a listed method, e.g. `s.lower()`",
                );
                "None".into()
            }
            other => {
                let kind = expr_kind(other);
                self.reject(
                    other,
                    "Z092",
                    format!("{kind} is not supported in plans"),
                    "rewrite the plan without it",
                );
                "None".into()
            }
        }
    }

    fn exprs(&mut self, es: &[Expr], pc: &str) -> String {
        let mut out = Vec::new();
        for e in es {
            if let Expr::Starred(_) = e {
                self.reject(
                    e,
                    "Z092",
                    "`*` unpacking is not supported here".into(),
                    "concatenate lists with `+`",
                );
                continue;
            }
            out.push(self.expr(e, pc));
        }
        out.join(", ")
    }

    fn fstring(&mut self, f: &ruff_python_ast::ExprFString, pc: &str) -> String {
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

    fn fstring_element(&mut self, el: &InterpolatedStringElement, pc: &str) -> Option<String> {
        match el {
            InterpolatedStringElement::Literal(l) => Some(format!("({}, _LIT)", py_str(&l.value))),
            InterpolatedStringElement::Interpolation(i) => {
                if i.debug_text.is_some() {
                    self.reject(
                        i,
                        "Z092",
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
                        self.reject(i, "Z092", "`!a` is not supported".into(), "use `!r`");
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

    fn keywords(
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
                    "Z092",
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

    fn call(&mut self, c: &ruff_python_ast::ExprCall, pc: &str) -> String {
        let line = self.line_of(c.range().start().to_usize());
        if c.arguments
            .args
            .iter()
            .any(|a| matches!(a, Expr::Starred(_)))
        {
            self.reject(
                c,
                "Z092",
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
                    if c.arguments.args.len() != 1 || !c.arguments.keywords.is_empty() {
                        self.reject(
                            c,
                            "Z096",
                            format!("verifier `{name}` takes exactly one positional argument"),
                            "pass the value to check",
                        );
                        return "None".into();
                    }
                    let v = self.expr(&c.arguments.args[0], pc);
                    return format!("{name}({v}, _zpc={pc}, _zline={line})");
                }
                if let Some(row) = catalogue::builtin_row(name) {
                    let args = self.exprs(&c.arguments.args, pc);
                    let Some(kws) = self.keywords(&c.arguments.keywords, pc, false) else {
                        return "None".into();
                    };
                    for (k, _) in &kws {
                        if !row.keywords.accepts(k) {
                            self.reject(
                                c,
                                "Z096",
                                format!("`{name}` does not take `{k}=` here"),
                                "remove the keyword argument",
                            );
                            return "None".into();
                        }
                    }
                    let mut all: Vec<String> = if args.is_empty() { vec![] } else { vec![args] };
                    all.extend(kws.into_iter().map(|(k, v)| format!("{k}={v}")));
                    all.push(format!("_zp={pc}"));
                    return format!("_bi_{name}({})", all.join(", "));
                }
                self.reject(
                    c,
                    "Z094",
                    format!("`{name}` is not a tool, verifier, builtin or plan function"),
                    "call a tool the policy declares",
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
                            "Z097",
                            format!("`{module}.{method}` is not available"),
                            "see the list of json and re functions in docs/diagnostics.md",
                        );
                        return "None".into();
                    };
                    let args = self.exprs(&c.arguments.args, pc);
                    let Some(kws) = self.keywords(&c.arguments.keywords, pc, false) else {
                        return "None".into();
                    };
                    if let Some((k, _)) = kws.iter().find(|(k, _)| !row.keywords.accepts(k)) {
                        self.reject(
                            c,
                            "Z096",
                            format!("`{module}.{method}` does not take `{k}=` here"),
                            "remove the keyword argument",
                        );
                        return "None".into();
                    }
                    let mut all: Vec<String> = if args.is_empty() { vec![] } else { vec![args] };
                    all.extend(kws.into_iter().map(|(k, v)| format!("{k}={v}")));
                    all.push(format!("_zp={pc}"));
                    return format!("_{module}_{method}({})", all.join(", "));
                }
                let Some(row) = catalogue::method_row(method) else {
                    self.reject(
                        c,
                        "Z097",
                        format!("method `{method}` is not available"),
                        "use a listed str, list, dict or set method",
                    );
                    return "None".into();
                };
                let flat_args = c.arguments.keywords.is_empty()
                    && c.arguments.args.len() <= 2
                    && c.arguments.args.iter().all(|x| self.is_flat_expr(x));
                if flat_args && let Some((name, _)) = str_fast(method) {
                    let recv = self.expr(&a.value, pc);
                    let mut parts = vec![recv];
                    for arg in &c.arguments.args {
                        let f = self.flat(arg, pc);
                        parts.push(f.raw);
                        parts.push(f.label);
                    }
                    let n = c.arguments.args.len();
                    self.str_methods.insert((name, n));
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
                        "Z096",
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

    fn tool_call(
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
                "Z096",
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
                    "Z092",
                    "`**` arguments are not supported".into(),
                    "pass arguments by name",
                );
                return "None".into();
            };
            let an = arg.id.as_str();
            if !params.iter().any(|p| p == an) || bound.iter().any(|(b, _)| b == an) {
                self.reject(
                    k,
                    "Z096",
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
                "Z096",
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

    /// Compiles `body` into a hoisted helper `def` emitted before the current statement.
    fn hoist(
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
        });
        build(self, 1);
        self.frames.pop();
        let def = std::mem::replace(&mut self.out, saved_out);
        self.pre = saved_pre;
        self.pre.extend(def);
    }

    fn lambda(&mut self, l: &ruff_python_ast::ExprLambda, pc: &str) -> String {
        let params = match &l.parameters {
            Some(p) => {
                if p.args.iter().any(|a| a.default.is_some()) {
                    self.reject(
                        l,
                        "Z093",
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
                "Z092",
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

    fn comprehension(
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
                "Z092",
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
                "Z092",
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
                    let kt = this.fresh("k");
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
                    let xt = this.fresh("k");
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

/// The names an assignment statement binds (and a `def`'s name, with `defs`).
fn statement_targets(stmt: &Stmt, defs: bool) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    match stmt {
        Stmt::Assign(a) => a
            .targets
            .iter()
            .for_each(|t| collect_target_names(t, &mut names)),
        Stmt::AugAssign(a) => collect_target_names(&a.target, &mut names),
        Stmt::FunctionDef(f) if defs => {
            names.insert(f.name.id.to_string());
        }
        _ => {}
    }
    names
}

/// Names assigned by top-level statements of a body, with the end offset of the first assigning statement.
fn first_defs(body: &[Stmt]) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for stmt in body {
        for n in statement_targets(stmt, true) {
            out.entry(n).or_insert(stmt.range().end().to_usize());
        }
    }
    out
}

/// Calls in a block's statements (not in nested defs), for the callee mutation sets.
fn direct_calls<'b>(body: &'b [Stmt], out: &mut Vec<&'b ruff_python_ast::ExprCall>) {
    fn in_expr<'b>(e: &'b Expr, out: &mut Vec<&'b ruff_python_ast::ExprCall>) {
        if let Expr::Call(c) = e {
            out.push(c);
            c.arguments.args.iter().for_each(|a| in_expr(a, out));
            c.arguments
                .keywords
                .iter()
                .for_each(|k| in_expr(&k.value, out));
        }
        match e {
            Expr::BinOp(b) => {
                in_expr(&b.left, out);
                in_expr(&b.right, out);
            }
            Expr::BoolOp(b) => b.values.iter().for_each(|v| in_expr(v, out)),
            Expr::If(x) => {
                in_expr(&x.body, out);
                in_expr(&x.orelse, out);
            }
            Expr::List(l) => l.elts.iter().for_each(|v| in_expr(v, out)),
            Expr::Tuple(l) => l.elts.iter().for_each(|v| in_expr(v, out)),
            Expr::Compare(c) => {
                in_expr(&c.left, out);
                c.comparators.iter().for_each(|v| in_expr(v, out));
            }
            _ => {}
        }
    }
    for stmt in body {
        match stmt {
            Stmt::Expr(e) => in_expr(&e.value, out),
            Stmt::Assign(a) => in_expr(&a.value, out),
            Stmt::AugAssign(a) => in_expr(&a.value, out),
            Stmt::Return(r) => {
                if let Some(v) = &r.value {
                    in_expr(v, out);
                }
            }
            Stmt::If(s) => {
                in_expr(&s.test, out);
                direct_calls(&s.body, out);
                for c in &s.elif_else_clauses {
                    direct_calls(&c.body, out);
                }
            }
            Stmt::For(s) => {
                in_expr(&s.iter, out);
                direct_calls(&s.body, out);
            }
            Stmt::While(s) => {
                in_expr(&s.test, out);
                direct_calls(&s.body, out);
            }
            _ => {}
        }
    }
}

fn collect_target_names(t: &Expr, out: &mut BTreeSet<String>) {
    super::scope::target_names(t, out);
}

fn contains_walrus(e: &Expr) -> bool {
    let mut found = false;
    each_child(e, &mut |c| {
        if matches!(c, Expr::Named(_)) {
            found = true;
        }
        true
    });
    found
}

fn stmt_kind(s: &Stmt) -> &'static str {
    match s {
        Stmt::ClassDef(_) => "class",
        Stmt::Delete(_) => "del",
        Stmt::TypeAlias(_) => "type",
        Stmt::AnnAssign(_) => "annotated assignment",
        Stmt::With(_) => "with",
        Stmt::Match(_) => "match",
        Stmt::Raise(_) => "raise",
        Stmt::Try(_) => "try",
        Stmt::Assert(_) => "assert",
        Stmt::ImportFrom(_) => "from ... import",
        Stmt::Global(_) => "global",
        Stmt::Nonlocal(_) => "nonlocal",
        Stmt::IpyEscapeCommand(_) => "IPython escape",
        _ => "this",
    }
}

fn expr_kind(e: &Expr) -> &'static str {
    match e {
        Expr::Await(_) => "`await`",
        Expr::Yield(_) | Expr::YieldFrom(_) => "`yield`",
        Expr::TString(_) => "a t-string",
        Expr::BytesLiteral(_) => "a bytes literal",
        Expr::EllipsisLiteral(_) => "`...`",
        Expr::Starred(_) => "`*` unpacking",
        Expr::Slice(_) => "a slice outside `[]`",
        Expr::IpyEscapeCommand(_) => "an IPython escape",
        _ => "this expression",
    }
}
