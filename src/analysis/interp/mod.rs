//! The abstract interpreter: walks a checked plan once (loops to a fixpoint, plan functions inlined up to a
//! depth) and records, for every tool call site, the may/must labels of each argument and of `pc`.
//!
//! It mirrors the runtime's rules (docs/lowering.md): the lexical `pc`, the raise after a branch or loop
//! that may leave early, STRICT's join of `pc` into assigned, stored and returned values, not-taken
//! branches, and per-container structure labels. Containers are summarised per allocation site and
//! updated weakly, so aliasing is covered: a mutation through any name reaches every alias.
//!
//! Split like the compiler it must agree with (`src/lower/compiler/`), file for file and, where the compiler
//! has a function for a construct, name for name, so that whoever changes how a construct is lowered finds
//! its abstract counterpart: this file holds the state, the entry point and the environment (frames,
//! bindings, merging two paths); [`heap`] the per-site summaries of containers and reading from them (what
//! the prelude's `_gi`, `_cl` and `_unpack` do at run time); [`stmt`] statements (`assign`, `aug_assign`,
//! `if_chain`, `for_loop`, `while_loop`, `function_def`, and the loop fixpoint); [`expr`] expressions
//! (operators, literals, f-strings, lambdas, comprehensions); [`call`] calls (plan functions and function
//! values, tools and their results, catalogue entries and the callbacks they run). The compiler's `fast.rs`
//! has no counterpart: unboxed scalars change how a label is carried, never which label it is.

mod call;
mod expr;
mod heap;
mod stmt;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ruff_python_ast::{Expr, Stmt};

use super::domain::{AVal, HeapObj, must_bottom, neutral};
use crate::label::{Label, LabelSpace};
use crate::policy::Policy;

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
    /// Each parameter's default, evaluated where the `def` ran (as Python does, once per definition),
    /// merged over every time it ran: the value a call that does not pass that argument binds
    /// (docs/semantics.md, "Pre-flight analysis"). `None`: no default (a call without it raises).
    defaults: Vec<Option<AVal>>,
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
    /// Verifier calls in the error form whose value may come from data or be private, by source offset:
    /// the data decides whether the run stops there (the termination channel).
    /// With each, the kind the verifier mints: a call whose argument carries it uses the verified value,
    /// and the stop is the point of verifying it, not a channel to that call.
    pub stops: BTreeMap<usize, (String, Option<u8>)>,
    /// The analysis stopped following something (depth, steps, widening): results there are `top`.
    pub imprecise: Vec<(usize, &'static str)>,
    /// Each element's upper bound (deep, as stored) of the list literal evaluated last: a tool argument
    /// written as `[a, b]` is checked element by element, as the runtime does (docs/semantics.md, "Further
    /// choices": list arguments).
    last_list: Option<Vec<Label>>,
    /// For a name bound straight from `verify_x(v, or_none=True)`, in the frame at this depth: its value
    /// when it is not `None` (the verified one). `if name is not None:` and `if name:` narrow to it.
    when_present: BTreeMap<(usize, String), AVal>,
    /// The verified value of the `or_none` verifier call evaluated last.
    last_minted: Option<AVal>,
    /// The label of a plan literal: [`Label::literal`], or the planner context label of the session the
    /// plan was written in (docs/semantics.md, "The planner context label"). The runtime's `_LIT`.
    lit: Label,
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
            stops: BTreeMap::new(),
            imprecise: Vec::new(),
            last_list: None,
            when_present: BTreeMap::new(),
            last_minted: None,
            lit: Label::literal(),
        }
    }

    /// Plan literals (and every value the runtime labels like one, its `_LIT`) carry `lit`: the label
    /// [`crate::planner::ContextLabel::label_in`] gives them in this interpreter's label space.
    pub fn with_literal(self, lit: Label) -> Interp<'a> {
        Interp { lit, ..self }
    }

    /// The literal label, as the upper bound of what the runtime's `_LIT` is.
    fn lit(&self) -> Label {
        self.lit.clone()
    }

    /// A plan literal (not a string). Under the trusted literal label, the bounds are as they always were
    /// ([`AVal::literal`]: the lower one claims nothing). Under a planner context, the runtime's label is
    /// exactly the context's, with no kind (only a verifier adds one, and lint mints on `must` too), so
    /// both bounds are it: lint then proves that a literal recipient needs the person, as the run finds.
    fn lit_val(&self) -> AVal {
        if self.lit == Label::literal() {
            return AVal::literal();
        }
        AVal {
            may: self.lit.clone(),
            must: self.lit.clone(),
            ..AVal::literal()
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
}
