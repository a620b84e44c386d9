//! The label-lowering compiler: a plan's AST in, one Monty program out, in which every value travels with its
//! label and the control context lives in plain variables.
//!
//! The representation and the rules are in `docs/lowering.md`; the helpers the output calls are in
//! `prelude.py` (embedded). Whitelist only: a construct the compiler does not know is a diagnostic, never
//! passed through. Plan identifiers are renamed to end in `_`, so plan code cannot name, shadow or reach
//! anything in the prelude (whose names start with `_` or are Python builtins).
//!
//! ```
//! use zamburak::lower::{compile, Mode};
//! use zamburak::plan::Signatures;
//! let src = "x = 1 + 2\nitems = [x, 'a']\n";
//! let module = ruff_python_parser::parse_module(src).unwrap().into_syntax();
//! let lowered = compile(&module, src, &Signatures::default(), Mode::Strict).unwrap();
//! // A scalar computed from scalars lives unboxed: raw value `x_`, label `x_l`. Computed from literals
//! // only, its label is known when compiling (the preamble's `x_l = _LIT`), so none is computed.
//! assert!(lowered.snippet.contains("x_ = (1 + 2)"));
//! assert!(lowered.snippet.contains("x_l = _LIT") && !lowered.snippet.contains("x_l = (_LIT | _UV)"));
//! // Containers are boxed; literals are boxed once (`_k0 = ('a', _LIT)`).
//! assert!(lowered.snippet.contains("items_ = _mk(_KL, [(x_, x_l), _k0], _pc)"));
//! ```

mod compiler;
mod constant;
mod flat;
pub(crate) mod generated;
mod prelude;
pub(crate) mod scope;

pub use compiler::{Options, check, compile, compile_labelled, compile_with};

/// Which propagation rules the lowered program follows.
pub use crate::mode::Mode;

/// The lowered program's global holding the plan line of the top-level statement that is running. It
/// is what a limit Monty raises without a traceback reports (`runtime::machine` reads it back).
pub const RUNNING_LINE: &str = "_zl";

/// The prelude's expression for the boxed key of a dict lookup whose `KeyError` ended the run (`None`
/// otherwise). The runtime shows that key when its label is trusted and public (`runtime::host`).
pub const MISSING_KEY: &str = "_ZK[0]";

/// A compiled plan: the plan's own code, fed to the prelude session that every run loads
/// ([`prelude_session`]), and its map back to plan lines (`snippet_map[i]` is the plan line, 1-based, of
/// snippet line `i + 1`; 0 for glue lines).
#[derive(Clone, Debug)]
pub struct Lowered {
    pub snippet: String,
    pub snippet_map: Vec<u32>,
}

impl Lowered {
    /// The plan line of a line of `snippet` (1-based), if it belongs to the plan.
    ///
    /// ```
    /// use zamburak::lower::{compile, Mode};
    /// use zamburak::plan::Signatures;
    /// let src = "x = 1\ny = x + 2\n";
    /// let module = ruff_python_parser::parse_module(src).unwrap().into_syntax();
    /// let lowered = compile(&module, src, &Signatures::default(), Mode::Strict).unwrap();
    /// let line = lowered.snippet.lines().position(|l| l.starts_with("y_ = (x_")).unwrap() + 1;
    /// assert_eq!(lowered.snippet_plan_line(line as u32), Some(2));
    /// assert_eq!(lowered.snippet_plan_line(1), None, "the constants come first");
    /// ```
    pub fn snippet_plan_line(&self, snippet_line: u32) -> Option<u32> {
        let idx = usize::try_from(snippet_line).ok()?.checked_sub(1)?;
        self.snippet_map.get(idx).copied().filter(|l| *l != 0)
    }

    /// The same program standalone, for reading it or running it on a plain `monty::MontyRun`: the
    /// prelude definitions the snippet reaches, then the snippet.
    ///
    /// ```
    /// use zamburak::lower::{compile, Mode};
    /// use zamburak::plan::Signatures;
    /// let src = "n = len([1, 2])\nprint(n)\n";
    /// let module = ruff_python_parser::parse_module(src).unwrap().into_syntax();
    /// let lowered = compile(&module, src, &Signatures::default(), Mode::Strict).unwrap();
    /// let code = lowered.standalone();
    /// assert!(code.contains("def _bi_len(") && code.ends_with(&lowered.snippet));
    /// let run = monty::MontyRun::new(code, "p.py", vec![], Default::default()).unwrap();
    /// let mut out = String::new();
    /// let print = monty_types::PrintWriter::CollectString(&mut out, None);
    /// run.run(vec![], monty_types::ResourceTracker::default(), print).unwrap();
    /// // Each print is framed with its label; the host reads the frames back.
    /// let printed = zamburak::runtime::output::segments(&out);
    /// assert_eq!(printed.len(), 1);
    /// assert_eq!(printed[0].1, "2\n");
    /// ```
    pub fn standalone(&self) -> String {
        let used = prelude::underscore_names(&self.snippet);
        let mut code = prelude::for_names(&used);
        if !code.ends_with('\n') {
            code.push('\n');
        }
        code.push_str(&self.snippet);
        code
    }
}

/// The whole prelude compiled into a Monty session at build time (`build.rs`), as a `monty::dump`.
///
/// ```
/// let session = monty::Dump::load(zamburak::lower::prelude_session()).unwrap();
/// assert!(matches!(session.state, monty::Session::Idle(_)));
/// ```
pub fn prelude_session() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/prelude.monty"))
}

/// The prelude text every lowered program starts with.
pub const PRELUDE: &str = include_str!("prelude.py");
