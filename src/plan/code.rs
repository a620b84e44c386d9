//! Every diagnostic code `lint` and `run` can report, declared once (ruff's rule registry is the model).
//!
//! A [`Code`] variant carries everything fixed about its diagnostics: the stable string (`Z103`), a short
//! kebab-case name, the severity, a one-line summary and a help text. The construction sites name the
//! variant; the JSON output, the SARIF rules (`lint --format sarif`), the help links and the table of codes
//! in docs/diagnostics.md all read it from here.
//!
//! **Adding a code** is one variant in the `codes!` list below (a free number; a code never changes
//! meaning) and its documentation: a section headed by the code in docs/diagnostics.md, or for an analysis
//! code (`Z2xx`) a heading `### Z2xx: <name in words> (<severity>)` in docs/lint.md, then
//! `ZAMBURAK_BLESS=1 cargo test --test house diagnostic_codes` to regenerate the table. That test fails while a
//! code lacks its section or row, or the docs name a code that does not exist.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How bad a diagnostic is. Fixed per [`Code`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    /// `error` or `warning`, as printed and serialised.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// What is fixed about one code.
#[derive(Debug)]
pub struct Spec {
    /// The stable string, `Z` and three digits.
    pub code: &'static str,
    /// Short kebab-case name (`missing-argument`).
    pub name: &'static str,
    pub severity: Severity,
    /// One line: what the code is about (the SARIF rule's short description).
    pub summary: &'static str,
    /// What to do about it, in general; a diagnostic's own hint is more specific.
    pub help: &'static str,
}

/// Declares [`Code`] with one entry per variant, and its table of [`Spec`]s.
macro_rules! codes {
    ($(
        $(#[$doc:meta])*
        $variant:ident {
            code: $code:literal,
            name: $name:literal,
            severity: $severity:ident,
            summary: $summary:literal,
            help: $help:literal $(,)?
        }
    ),* $(,)?) => {
        /// A diagnostic code. Serialised as its string (`"Z103"`); ordered by it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in the order of their strings.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// Everything fixed about this code.
            pub const fn spec(self) -> &'static Spec {
                match self {
                    $(Code::$variant => &Spec {
                        code: $code,
                        name: $name,
                        severity: Severity::$severity,
                        summary: $summary,
                        help: $help,
                    },)*
                }
            }
        }
    };
}

codes! {
    /// Syntax error, or a plan that is not UTF-8 text.
    SyntaxError {
        code: "Z001",
        name: "syntax-error",
        severity: Error,
        summary: "syntax error",
        help: "correct the syntax at the marked position; save the plan as UTF-8",
    },
    /// Over 1 MiB, or nested deeper than the parser may go.
    TooLarge {
        code: "Z002",
        name: "plan-too-large",
        severity: Error,
        summary: "plan too large or too deeply nested",
        help: "split the work into several assignments or smaller plans",
    },
    /// Only blank lines and comments.
    EmptyPlan {
        code: "Z003",
        name: "empty-plan",
        severity: Warning,
        summary: "empty plan",
        help: "write the plan's statements in the file, or check the path",
    },
    ForbiddenStatement {
        code: "Z010",
        name: "statement-outside-subset",
        severity: Error,
        summary: "statement outside the subset",
        help: "restructure without the statement; a failed call already ends the plan",
    },
    ForbiddenExpression {
        code: "Z011",
        name: "expression-outside-subset",
        severity: Error,
        summary: "expression outside the subset",
        help: "use the plain expressions the subset lists",
    },
    InterpreterBuiltin {
        code: "Z012",
        name: "interpreter-builtin",
        severity: Error,
        summary: "builtin that reaches into the interpreter",
        help: "use the listed builtins; index a dict instead of reading an attribute",
    },
    ForbiddenMethod {
        code: "Z013",
        name: "method-outside-subset",
        severity: Error,
        summary: "method or module function outside the subset",
        help: "use a whitelisted method or module function",
    },
    AttributeAccess {
        code: "Z014",
        name: "attribute-access",
        severity: Error,
        summary: "attribute access that is not a whitelisted method call",
        help: "call an allowed method, or keep data in dicts and index them",
    },
    ForbiddenImport {
        code: "Z015",
        name: "forbidden-import",
        severity: Error,
        summary: "import other than json or re",
        help: "import only `json` and `re`, at the top of the plan, without `as`; tools do the I/O",
    },
    ReservedName {
        code: "Z016",
        name: "reserved-name",
        severity: Error,
        summary: "reserved name",
        help: "rename it without the leading underscore",
    },
    PercentFormat {
        code: "Z017",
        name: "percent-format",
        severity: Error,
        summary: "%-formatting of a string",
        help: "use an f-string or `str.format`",
    },
    Decorator {
        code: "Z018",
        name: "decorator",
        severity: Error,
        summary: "decorator",
        help: "remove the decorator and call the function explicitly",
    },
    Starred {
        code: "Z019",
        name: "starred-form",
        severity: Error,
        summary: "starred or double-starred form",
        help: "pass arguments by name, concatenate lists with `+`, merge dicts with `.update`",
    },
    /// The compiler's own whitelist (statements) refused what the checks accepted.
    LowerStatement {
        code: "Z090",
        name: "unlowerable-statement",
        severity: Error,
        summary: "construct the compiler cannot lower",
        help: "the two whitelists disagree: please report the plan",
    },
    /// The compiler's own whitelist (assignment targets).
    LowerTarget {
        code: "Z091",
        name: "unlowerable-target",
        severity: Error,
        summary: "construct the compiler cannot lower",
        help: "the two whitelists disagree: please report the plan",
    },
    /// The compiler's own whitelist (expressions).
    LowerExpression {
        code: "Z092",
        name: "unlowerable-expression",
        severity: Error,
        summary: "construct the compiler cannot lower",
        help: "the two whitelists disagree: please report the plan",
    },
    /// The compiler's own whitelist (function definitions).
    LowerFunction {
        code: "Z093",
        name: "unlowerable-function",
        severity: Error,
        summary: "construct the compiler cannot lower",
        help: "the two whitelists disagree: please report the plan",
    },
    /// The compiler's own whitelist (names).
    LowerName {
        code: "Z094",
        name: "unlowerable-name",
        severity: Error,
        summary: "construct the compiler cannot lower",
        help: "the two whitelists disagree: please report the plan",
    },
    /// The compiler's own whitelist (attributes).
    LowerAttribute {
        code: "Z095",
        name: "unlowerable-attribute",
        severity: Error,
        summary: "construct the compiler cannot lower",
        help: "the two whitelists disagree: please report the plan",
    },
    /// The compiler's own whitelist (call arguments).
    LowerArgument {
        code: "Z096",
        name: "unlowerable-argument",
        severity: Error,
        summary: "construct the compiler cannot lower",
        help: "the two whitelists disagree: please report the plan",
    },
    /// The compiler's own whitelist (methods and module functions).
    LowerMethod {
        code: "Z097",
        name: "unlowerable-method",
        severity: Error,
        summary: "construct the compiler cannot lower",
        help: "the two whitelists disagree: please report the plan",
    },
    /// The compiler would rely on a label it could not confirm.
    UnconfirmedLabel {
        code: "Z098",
        name: "unconfirmed-label",
        severity: Error,
        summary: "label the compiler could not confirm",
        help: "please report the plan; rewriting the line may avoid it",
    },
    UnknownName {
        code: "Z101",
        name: "unknown-name",
        severity: Error,
        summary: "unknown function or name",
        help: "use the name the policy declares, or define it before it is used",
    },
    UnknownArgument {
        code: "Z102",
        name: "unknown-argument",
        severity: Error,
        summary: "unknown tool argument",
        help: "use an argument name the tool declares",
    },
    MissingArgument {
        code: "Z103",
        name: "missing-argument",
        severity: Error,
        summary: "missing tool argument",
        help: "pass every argument the tool declares",
    },
    TooManyPositional {
        code: "Z104",
        name: "too-many-positional",
        severity: Error,
        summary: "too many positional arguments",
        help: "pass one value per declared argument, or pass them by name",
    },
    DuplicateArgument {
        code: "Z105",
        name: "duplicate-argument",
        severity: Error,
        summary: "tool argument given twice",
        help: "pass each argument once",
    },
    VerifierArity {
        code: "Z106",
        name: "verifier-arity",
        severity: Error,
        summary: "verifier called without exactly one positional argument",
        help: "pass one value per verifier call (and `or_none=True` at most)",
    },
    ToolAsValue {
        code: "Z107",
        name: "tool-as-value",
        severity: Error,
        summary: "tool or verifier used as a value",
        help: "call the tool or verifier directly where it is used",
    },
    ShadowedName {
        code: "Z108",
        name: "shadowed-name",
        severity: Error,
        summary: "plan name shadows a tool, verifier or builtin",
        help: "choose another name",
    },
    UnknownKeyword {
        code: "Z109",
        name: "unknown-keyword",
        severity: Error,
        summary: "keyword argument a builtin, method or module function does not take",
        help: "use a keyword the hint lists, or pass the value positionally",
    },
    /// A literal argument of a type the tool does not take.
    ArgumentType {
        code: "Z110",
        name: "argument-type",
        severity: Error,
        summary: "literal argument of a type the tool does not take",
        help: "write the value in the type the message names (`limit=5`, not `limit=\"5\"`)",
    },
    /// A literal URL no `builtins.web.allow` entry reaches.
    UrlNotAllowed {
        code: "Z111",
        name: "url-not-allowed",
        severity: Error,
        summary: "literal URL outside the web allow-list",
        help: "use a URL under one of the allow-list's entries (scheme, host, port and path prefix), or add an entry to the policy",
    },
    /// A key read from a tool's record that the record does not have.
    UnknownRecordKey {
        code: "Z112",
        name: "unknown-record-key",
        severity: Error,
        summary: "key a tool's record does not have",
        help: "read one of the keys the message lists",
    },
    /// The labels on every path to the call break a `deny` requirement.
    DeniedWheneverReached {
        code: "Z201",
        name: "denied-whenever-reached",
        severity: Error,
        summary: "tool call denied whenever it is reached",
        help: "verify the value, use one written in the plan, or move the call out of control that tests tool output",
    },
    /// The worst-case labels break a `deny` requirement; the certain ones do not.
    MayBeDenied {
        code: "Z202",
        name: "may-be-denied",
        severity: Warning,
        summary: "tool call may be denied at run time",
        help: "make the argument certain: literals or verified values on every path, data only to its readers",
    },
    NeedsConfirmation {
        code: "Z203",
        name: "needs-confirmation",
        severity: Warning,
        summary: "tool call needs a human's confirmation",
        help: "verify the value, or expect the confirmation",
    },
    Drafted {
        code: "Z204",
        name: "drafted",
        severity: Warning,
        summary: "tool call is drafted instead of run",
        help: "verify the recipient, or expect a draft for the user to review",
    },
    /// The analysis stopped following something and assumed the worst from there.
    AnalysisIncomplete {
        code: "Z205",
        name: "analysis-incomplete",
        severity: Warning,
        summary: "analysis incomplete",
        help: "simplify the plan: fewer nested plan-function calls, smaller loops",
    },
    /// A call that changes the world comes after a point where data may stop the run: data decides
    /// whether it happens (the termination channel, docs/semantics.md, "What is protected").
    DataMayStopFirst {
        code: "Z206",
        name: "data-may-stop-the-run-first",
        severity: Warning,
        summary: "data may stop the run before this call",
        help: "put a call that must happen whatever the data before the first point data may stop the run, or skip a value with `or_none=True` instead of stopping",
    },
    /// The policy's kinds and tags do not fit in a label, so nothing can be predicted.
    PolicyLabels {
        code: "Z209",
        name: "policy-labels-cannot-be-built",
        severity: Error,
        summary: "the policy's labels cannot be built",
        help: "fix the policy (`zamburak policy check`)",
    },
}

/// Where the code sections are published (help links).
const DOCS_BASE: &str = "https://github.com/zamburak/zamburak/blob/main";

/// The heading of the section the compiler's codes (`Z090`–`Z098`) share in docs/diagnostics.md.
pub const COMPILER_SECTION: &str = "Z090–Z098 (the compiler's own whitelist)";

impl Code {
    /// The stable string, e.g. `Z103`.
    pub const fn as_str(self) -> &'static str {
        self.spec().code
    }

    /// The short kebab-case name, e.g. `missing-argument`.
    pub const fn name(self) -> &'static str {
        self.spec().name
    }

    pub const fn severity(self) -> Severity {
        self.spec().severity
    }

    /// One line: what the code is about.
    pub const fn summary(self) -> &'static str {
        self.spec().summary
    }

    /// What to do about it, in general.
    pub const fn help(self) -> &'static str {
        self.spec().help
    }

    /// An analysis code (`Z2xx`): documented in docs/lint.md rather than docs/diagnostics.md.
    pub fn is_analysis(self) -> bool {
        self.as_str().starts_with("Z2")
    }

    /// The compiler's own whitelist (`Z09x`): one shared section.
    pub fn is_compiler(self) -> bool {
        self.as_str().starts_with("Z09")
    }

    /// The heading of the section that documents this code: `Z001` in docs/diagnostics.md,
    /// `Z201: denied whenever reached (error)` in docs/lint.md, [`COMPILER_SECTION`] for the compiler's.
    pub fn heading(self) -> String {
        if self.is_compiler() {
            COMPILER_SECTION.to_string()
        } else if self.is_analysis() {
            format!(
                "{}: {} ({})",
                self.as_str(),
                self.name().replace('-', " "),
                self.severity().as_str()
            )
        } else {
            self.as_str().to_string()
        }
    }

    /// The documentation page of this code, relative to the repository.
    pub fn page(self) -> &'static str {
        if self.is_analysis() {
            "docs/lint.md"
        } else {
            "docs/diagnostics.md"
        }
    }

    /// The anchor GitHub gives [`Code::heading`].
    pub fn anchor(self) -> String {
        github_slug(&self.heading())
    }

    /// The published section of this code (SARIF's `helpUri`).
    ///
    /// ```
    /// use zamburak::plan::Code;
    /// assert_eq!(
    ///     Code::MissingArgument.help_uri(),
    ///     "https://github.com/zamburak/zamburak/blob/main/docs/diagnostics.md#z103"
    /// );
    /// assert!(Code::DeniedWheneverReached.help_uri().ends_with("docs/lint.md#z201-denied-whenever-reached-error"));
    /// ```
    pub fn help_uri(self) -> String {
        format!("{DOCS_BASE}/{}#{}", self.page(), self.anchor())
    }
}

/// GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens.
fn github_slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Sorted by the string, so diagnostics at one place come in code order.
impl PartialOrd for Code {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Code {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// `d.code == "Z201"`: tests and callers may compare with the string.
impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Code> for &str {
    fn eq(&self, other: &Code) -> bool {
        *self == other.as_str()
    }
}

/// Not a code this build knows.
#[derive(Debug, thiserror::Error)]
#[error("unknown diagnostic code `{0}`")]
pub struct UnknownCode(String);

impl std::str::FromStr for Code {
    type Err = UnknownCode;

    /// ```
    /// use zamburak::plan::Code;
    /// assert_eq!("Z103".parse::<Code>().unwrap(), Code::MissingArgument);
    /// assert!("Z999".parse::<Code>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Code, UnknownCode> {
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCode(s.to_string()))
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Code, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_well_formed_and_listed_in_order() {
        for pair in Code::ALL.windows(2) {
            assert!(pair[0].as_str() < pair[1].as_str(), "{pair:?}");
        }
        let mut names: Vec<&str> = Code::ALL.iter().map(|c| c.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Code::ALL.len(), "names are unique");
        for c in Code::ALL {
            let s = c.as_str();
            assert!(
                s.len() == 4 && s.starts_with('Z') && s[1..].bytes().all(|b| b.is_ascii_digit()),
                "{s}"
            );
            assert!(
                c.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{}",
                c.name()
            );
            assert!(!c.summary().is_empty() && !c.help().is_empty(), "{s}");
            assert_eq!(serde_json::to_string(c).unwrap(), format!("\"{s}\""));
            assert_eq!(
                serde_json::from_str::<Code>(&format!("\"{s}\"")).unwrap(),
                *c
            );
        }
        assert!(serde_json::from_str::<Code>("\"Z999\"").is_err());
    }

    #[test]
    fn the_order_is_the_strings_order() {
        let mut sorted = Code::ALL.to_vec();
        sorted.sort();
        assert_eq!(sorted, Code::ALL);
        assert!(Code::TooLarge < Code::DeniedWheneverReached);
        assert!(Code::AnalysisIncomplete < Code::PolicyLabels);
    }

    #[test]
    fn help_links_follow_the_heading_rule() {
        assert_eq!(Code::SyntaxError.anchor(), "z001");
        assert_eq!(
            Code::LowerMethod.anchor(),
            "z090z098-the-compilers-own-whitelist"
        );
        assert_eq!(Code::MayBeDenied.heading(), "Z202: may be denied (warning)");
        assert_eq!(Code::MayBeDenied.page(), "docs/lint.md");
    }
}
