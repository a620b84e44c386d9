//! Parsing a plan and checking it against the subset of docs/semantics.md §6.
//!
//! [`check`] is the single entry point `lint` and `run` share: parse ([`parse::parse`]), the whitelist
//! ([`subset::check_subset`]), then name and argument resolution ([`structure::check_structure`]).
pub mod catalogue;
pub mod diagnostic;
pub mod parse;
pub mod render;
pub mod signatures;
pub mod structure;
pub mod subset;

pub use diagnostic::{Diagnostic, Severity};
pub use parse::{ParsedPlan, parse};
pub use render::{line_col, render};
pub use signatures::Signatures;

/// Most diagnostics [`check`] returns: enough to fix a plan, and a bound on the work of rendering them for
/// a hostile plan with one problem per line.
pub const MAX_DIAGNOSTICS: usize = 100;

/// Parses and checks a plan. `Err` holds the diagnostics (sorted by position, at most
/// [`MAX_DIAGNOSTICS`]) when any is an error.
///
/// ```
/// use zamburak::plan::{check, Signatures};
/// let mut sigs = Signatures::default();
/// sigs.tools.insert("search".into(), vec!["query".into()]);
/// assert!(check("r = search(query='x')\nprint(len(r))\n", &sigs).is_ok());
/// let err = check("r = search(qery='x')\n", &sigs).unwrap_err();
/// let codes: Vec<_> = err.iter().map(|d| d.code).collect();
/// assert_eq!(codes, ["Z103", "Z102"]); // `query` missing, `qery` unknown
/// ```
pub fn check(source: &str, sigs: &Signatures) -> Result<ParsedPlan, Vec<Diagnostic>> {
    let parsed = parse(source)?;
    let mut diags = subset::check_subset(&parsed.module);
    diags.extend(structure::check_structure(&parsed.module, sigs));
    diags.sort_by_key(|d| (d.start, d.end, d.code));
    diags.dedup();
    diags.truncate(MAX_DIAGNOSTICS);
    if diags.iter().any(|d| d.severity == Severity::Error) {
        Err(diags)
    } else {
        Ok(parsed)
    }
}
