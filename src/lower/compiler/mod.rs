//! AST → lowered Python text. Each plan statement becomes one or more lines that call prelude helpers;
//! expressions become nested helper calls on boxed values.
//!
//! Split along its seams: this file holds the compiler's state, the entry points, linking and emission;
//! [`stmt`] lowers statements (assignments, branches, loops, `def`), [`expr`] expressions (names, operators,
//! f-strings, lambdas, comprehensions), [`call`] calls (builtins, methods, module functions, tools),
//! [`fast`] the unboxed scalars and generated fast paths (`flat.rs` decides which variables are flat), and
//! [`fused`] the statement shapes compiled to one fused helper, [`lean`] lean forms of four general helper
//! calls (behind the same option).

mod call;
mod expr;
mod fast;
mod fused;
mod lean;
mod raw;
mod stmt;

use std::collections::BTreeSet;

use ruff_python_ast::{
    BoolOp, CmpOp, ConversionFlag, Expr, FStringPart, InterpolatedStringElement, ModModule, Number,
    Operator, Parameters, Stmt, UnaryOp,
};
use ruff_text_size::Ranged;

use super::scope::{
    Escapes, assigned_names, chain_escapes, each_child, escapes, if_clauses, mutation_receivers,
};
use super::{Lowered, Mode};
use crate::label::{LITERAL, UNVERIFIED_MASK};
use crate::plan::{Code, Diagnostic, Signatures};

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
    /// Flat variables whose label is always the literal label (module scope only; see `constant.rs`):
    /// their label is never assigned after the preamble's `x_l = _LIT`.
    constant: BTreeSet<String>,
    /// `_pc` is known to be neutral at the code being compiled now (module scope only; `constant.rs`).
    neutral: bool,
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
    /// [`Options::constant_labels`].
    constant_labels: bool,
    /// [`Options::fused_idioms`].
    fused: bool,
    /// [`Options::raw_containers`].
    raw_containers: bool,
    /// The dicts living raw in the loop being compiled (`raw.rs`), by plan name.
    raw: std::collections::BTreeMap<String, raw::RawDict>,
    /// The plan's top-level statements (the raw containers' escape analysis reads every use).
    module: &'a [Stmt],
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

/// Compiles a parsed plan. `source` is the text the module was parsed from (for line numbers).
pub fn compile(
    module: &ModModule,
    source: &str,
    sigs: &Signatures,
    mode: Mode,
) -> Result<Lowered, Vec<Diagnostic>> {
    compile_with(module, source, sigs, mode, Options::default())
}

/// How the compiler may write the program. Every choice gives the same labels and decisions; the default
/// is the fastest. Tests compile with each to check that.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Drop the run-time label code of values whose label is known when compiling (`constant.rs`).
    pub constant_labels: bool,
    /// Compile common statement shapes to one fused helper call (`fused.rs`).
    pub fused_idioms: bool,
    /// Keep a plan-built dict that only a loop's counting idiom touches raw in that loop, its labels
    /// beside it (`raw.rs`).
    pub raw_containers: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            constant_labels: true,
            fused_idioms: true,
            raw_containers: true,
        }
    }
}

/// [`compile`] with explicit [`Options`].
pub fn compile_with(
    module: &ModModule,
    source: &str,
    sigs: &Signatures,
    mode: Mode,
    options: Options,
) -> Result<Lowered, Vec<Diagnostic>> {
    compile_labelled(module, source, sigs, mode, options, LITERAL)
}

/// [`compile_with`], the plan's literals labelled `literal` (packed, within 63 bits) instead of
/// [`LITERAL`]: the planner context label of a session in which the planner has read tool data
/// (docs/semantics.md, "The planner context label"). Every literal, and every value the prelude labels
/// like one, carries it. The label is made computed (every kind unverified), as a literal's is, so the
/// compile-time folding of `_LIT | _UV` into `_LIT` stays exact; a negative `literal` is not a label, and
/// is replaced by the unknown label (fail closed).
pub fn compile_labelled(
    module: &ModModule,
    source: &str,
    sigs: &Signatures,
    mode: Mode,
    options: Options,
    literal: i64,
) -> Result<Lowered, Vec<Diagnostic>> {
    let c = lower_plan(module, source, sigs, mode, options)?;
    let literal = if literal < 0 {
        crate::label::Packed::UNKNOWN.bits()
    } else {
        literal | UNVERIFIED_MASK
    };
    link(c, literal)
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
    lower_plan(module, source, sigs, mode, Options::default()).map(|_| ())
}

fn lower_plan<'a>(
    module: &'a ModModule,
    source: &str,
    sigs: &'a Signatures,
    mode: Mode,
    options: Options,
) -> Result<Compiler<'a>, Vec<Diagnostic>> {
    let mut line_starts = vec![0];
    line_starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
    let mut c = Compiler {
        sigs,
        strict: mode == Mode::Strict,
        constant_labels: options.constant_labels,
        fused: options.fused_idioms,
        raw_containers: options.raw_containers,
        raw: Default::default(),
        module: &module.body,
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
        constant: BTreeSet::new(),
        neutral: options.constant_labels,
    });
    let flat = c.infer_flat(&module.body, &BTreeSet::new());
    let constant = if options.constant_labels {
        let is_builtin_call = |n: &str| c.is_builtin_call(n);
        crate::lower::constant::infer(
            &module.body,
            &crate::lower::constant::Scope {
                flat: &flat,
                is_builtin_call: &is_builtin_call,
                range_is_builtin: !c.is_local("range"),
                strict: c.strict,
            },
        )
    } else {
        BTreeSet::new()
    };
    if let Some(f) = c.frames.last_mut() {
        f.flat = flat;
        f.constant = constant;
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

fn link(c: Compiler<'_>, literal: i64) -> Result<Lowered, Vec<Diagnostic>> {
    let header = format!(
        "_STRICT = {}\n_LIT = {}\n_UV = {}\n_NUV = ~_UV\n{} = 0\n",
        if c.strict { "True" } else { "False" },
        literal,
        UNVERIFIED_MASK,
        super::RUNNING_LINE
    );
    // The plan's own snippet: constants, boxed literals, the plan. It runs on the prelude session built at
    // build time (`runtime::exec`), which also holds the generated fast paths it calls (`generated.rs`).
    let mut snippet = String::with_capacity(header.len() + c.out.len() * 40);
    snippet.push_str(&header);
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

    /// A new temporary `_<stem><n>`. No stem is `k`: `_k<n>` names the boxed-literal constants
    /// ([`Self::constant`]), which a temporary of the same name would overwrite or shadow
    /// (`tests/properties/lower_exec.rs`, `temporaries_never_shadow_a_literal_constant`).
    fn fresh(&mut self, stem: &str) -> String {
        self.tmp += 1;
        format!("_{stem}{}", self.tmp)
    }

    fn reject(&mut self, node: &impl Ranged, code: Code, message: String, hint: &str) {
        let r = node.range();
        self.diags.push(
            Diagnostic::new(code, r.start().to_usize(), r.end().to_usize(), message)
                .with_hint(hint),
        );
    }

    #[expect(
        clippy::expect_used,
        reason = "the module frame is pushed first and never popped, so there is always one"
    )]
    fn frame(&self) -> &Frame {
        self.frames
            .last()
            .expect("compile() pushes the module frame before compiling")
    }

    fn is_local(&self, name: &str) -> bool {
        self.frames.iter().any(|f| f.locals.contains(name))
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
