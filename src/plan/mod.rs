//! Parsing a plan and checking it against the subset (docs/diagnostics.md, "What a plan may use").
//!
//! [`check`] is the single entry point `lint` and `run` share: parse ([`parse::parse`]), the whitelist
//! ([`subset::check_subset`]), then name and argument resolution ([`structure::check_structure`]).
pub mod catalogue;
pub mod code;
pub mod diagnostic;
pub mod fixes;
pub mod names;
pub mod parse;
pub mod render;
pub mod signatures;
pub mod structure;
pub mod subset;

pub use code::{Code, Severity};
pub use diagnostic::{Audience, Diagnostic, SourceRef};
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
/// assert_eq!(codes, ["Z102"]); // `qery` unknown (did you mean `query`?), and not `query` missing too
/// ```
pub fn check(source: &str, sigs: &Signatures) -> Result<ParsedPlan, Vec<Diagnostic>> {
    checked(parse(source)?, sigs)
}

/// [`check`] of a plan already parsed: the subset and structure checks, without parsing it again (a run
/// parses its plan once, in `runtime::setup`, and finds the tools and servers it needs from that parse).
pub fn checked(parsed: ParsedPlan, sigs: &Signatures) -> Result<ParsedPlan, Vec<Diagnostic>> {
    let mut diags = subset::check_subset(&parsed.module, &parsed.source);
    diags.extend(structure::check_structure(&parsed.module, sigs));
    diags.sort_by_key(|d| (d.start, d.end, d.code));
    diags.dedup();
    diags.truncate(MAX_DIAGNOSTICS);
    if diags.iter().any(|d| d.severity() == Severity::Error) {
        Err(diags)
    } else {
        Ok(parsed)
    }
}

/// The plan's bytes as text. A plan that is not UTF-8 gives Z001 at its first bad byte, with the text
/// decoded lossily so the diagnostic can show the line (the bad byte drawn as U+FFFD, which starts at the
/// same offset).
///
/// ```
/// let (text, d) = zamburak::plan::decode(b"x = 1\ny = '\xff'\n".to_vec()).unwrap_err();
/// assert_eq!((d.code.as_str(), d.start), ("Z001", 11));
/// assert_eq!(zamburak::plan::line_col(&text, d.start), (2, 6));
/// assert!(d.message.contains("0xff"));
/// ```
#[expect(
    clippy::result_large_err,
    reason = "a plan is decoded once, and its callers take the text and the diagnostic apart at once"
)]
pub fn decode(bytes: Vec<u8>) -> Result<String, (String, Diagnostic)> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let byte = bytes.get(at).copied().unwrap_or(0);
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let diagnostic = Diagnostic::new(
                Code::SyntaxError,
                at,
                at + '\u{fffd}'.len_utf8(),
                format!("the plan is not UTF-8 text: byte 0x{byte:02x} here"),
            )
            .with_hint("a plan is Python source in UTF-8; save the file as UTF-8");
            Err((text, diagnostic))
        }
    }
}

/// True when the plan has no statement: every line is blank or a comment. Such a plan calls no tool and
/// prints nothing, which is almost never what its writer meant (an empty file from a failed planner, the
/// wrong path), so `lint` warns (Z003) and `run` says so.
///
/// ```
/// assert!(zamburak::plan::is_empty("\n  # only a comment\n"));
/// assert!(!zamburak::plan::is_empty("# read\nprint(1)\n"));
/// ```
pub fn is_empty(source: &str) -> bool {
    source.lines().all(|line| {
        let line = line.trim_start_matches(['\u{feff}', ' ', '\t', '\x0c', '\r']);
        line.is_empty() || line.starts_with('#')
    })
}
