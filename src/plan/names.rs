//! The names a plan mentions: a superset of the tools it can call, for checks that need to know which
//! tools a run may reach before it starts (`runtime::setup`). No analysis: every identifier counts, so a
//! tool named only inside a branch that never runs is still checked.

use std::collections::BTreeSet;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, ModModule};

/// Every identifier the plan reads, calls or assigns.
///
/// ```
/// let parsed = zamburak::plan::parse("x = read_file(path='a')\nif x:\n    send_email(to=x)\n").unwrap();
/// let names = zamburak::plan::names::mentioned(&parsed.module);
/// assert!(names.contains("read_file") && names.contains("send_email") && names.contains("x"));
/// ```
pub fn mentioned(module: &ModModule) -> BTreeSet<String> {
    let mut names = Names(BTreeSet::new());
    for stmt in &module.body {
        names.visit_stmt(stmt);
    }
    names.0
}

struct Names(BTreeSet<String>);

impl<'a> Visitor<'a> for Names {
    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr {
            self.0.insert(name.id.to_string());
        }
        visitor::walk_expr(self, expr);
    }
}
