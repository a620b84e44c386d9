//! The three renderings of a [`LintReport`]: text for people, JSON for planners, SARIF for code scanning.
//!
//! ```
//! use zamburak::analysis::{lint, output};
//! use zamburak::lower::Mode;
//! let policy = zamburak::policy::Policy::bundled_default().unwrap();
//! let report = lint("e = get_email(id='1')\nfetch_url(url=e['body'])\n", &policy, Mode::Strict);
//! let json = output::json(&report, "plan.py");
//! assert_eq!(json["diagnostics"][0]["code"], "Z201");
//! assert_eq!(json["diagnostics"][0]["sources"][0]["name"], "get_email");
//! let sarif = output::sarif(&report, "plan.py");
//! assert_eq!(sarif["version"], "2.1.0");
//! assert_eq!(sarif["runs"][0]["results"][0]["level"], "error");
//! assert!(output::text(&report, "plan.py").contains("error[Z201]"));
//! ```

use serde::Serialize;
use serde_json::{Value, json};
use std::path::Path;

use crate::label::LabelView;
use crate::policy::Outcome;

use super::LintReport;
use crate::plan::{Severity, render};

/// Every code lint can report, with a one-line description (SARIF rules, docs/lint.md).
pub const CODES: &[(&str, &str)] = &[
    ("Z001", "syntax error"),
    ("Z002", "plan too large or too deeply nested"),
    ("Z003", "empty plan"),
    ("Z010", "statement outside the subset"),
    ("Z011", "expression outside the subset"),
    ("Z012", "builtin that reaches into the interpreter"),
    ("Z013", "method or module function outside the subset"),
    (
        "Z014",
        "attribute access that is not a whitelisted method call",
    ),
    ("Z015", "import other than json or re"),
    ("Z016", "reserved name"),
    ("Z017", "%-formatting of a string"),
    ("Z018", "decorator"),
    ("Z019", "starred or double-starred form"),
    ("Z090", "construct the compiler cannot lower"),
    ("Z091", "construct the compiler cannot lower"),
    ("Z092", "construct the compiler cannot lower"),
    ("Z093", "construct the compiler cannot lower"),
    ("Z094", "construct the compiler cannot lower"),
    ("Z095", "construct the compiler cannot lower"),
    ("Z096", "construct the compiler cannot lower"),
    ("Z097", "construct the compiler cannot lower"),
    ("Z098", "label the compiler could not confirm"),
    ("Z101", "unknown function or name"),
    ("Z102", "unknown tool argument"),
    ("Z103", "missing tool argument"),
    ("Z104", "too many positional arguments"),
    ("Z105", "tool argument given twice"),
    (
        "Z106",
        "verifier called without exactly one positional argument",
    ),
    ("Z107", "tool or verifier used as a value"),
    ("Z108", "plan name shadows a tool, verifier or builtin"),
    (
        "Z109",
        "keyword argument a builtin, method or module function does not take",
    ),
    ("Z201", "tool call denied whenever it is reached"),
    ("Z202", "tool call may be denied at run time"),
    ("Z203", "tool call needs a human's confirmation"),
    ("Z204", "tool call is drafted instead of run"),
    ("Z209", "analysis incomplete"),
];

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// rustc/ruff-style text: each diagnostic with its source line and carets, then a summary line.
pub fn text(report: &LintReport, filename: &str) -> String {
    let mut out = String::new();
    for (i, d) in report.diagnostics.iter().enumerate() {
        let notes = report.details.get(i).map_or(&[][..], |x| &x.notes[..]);
        if notes.is_empty() {
            out.push_str(&render(std::slice::from_ref(d), &report.source, filename));
            continue;
        }
        // rustc's order: the notes, then the one help.
        let mut bare = d.clone();
        let help = bare.hint.take();
        let block = render(std::slice::from_ref(&bare), &report.source, filename);
        out.push_str(block.trim_end_matches('\n'));
        out.push('\n');
        let width = report
            .lines
            .line_col(&report.source, d.start)
            .0
            .to_string()
            .len();
        let pad = " ".repeat(width);
        for note in notes {
            out.push_str(&format!("{pad} = note: {}\n", printable(note)));
        }
        if let Some(h) = help {
            out.push_str(&format!("{pad} = help: {}\n", printable(&h)));
        }
        out.push('\n');
    }
    let errors = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = report.diagnostics.len() - errors;
    out.push_str(&format!(
        "{filename}: {errors} error{}, {warnings} warning{}, {} tool call site{} checked\n",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
        report.calls.len(),
        if report.calls.len() == 1 { "" } else { "s" },
    ));
    out
}

/// Control and invisible characters from a hostile plan never reach the terminal raw (as in `plan::render`).
fn printable(s: &str) -> String {
    crate::text::visible(s)
}

/// One JSON document: diagnostics and the per-call-site predictions.
pub fn json(report: &LintReport, filename: &str) -> Value {
    serde_json::to_value(document(report, filename)).unwrap_or(Value::Null)
}

/// [`json`] as text, serialised straight from typed values (what `lint --format json` prints).
pub fn json_text(report: &LintReport, filename: &str) -> String {
    serde_json::to_string(&document(report, filename))
        .unwrap_or_else(|e| json!({ "error": e.to_string() }).to_string())
}

#[derive(Serialize)]
struct Document<'a> {
    file: &'a str,
    ok: bool,
    errors: usize,
    warnings: usize,
    diagnostics: Vec<JsonDiagnostic<'a>>,
    calls: Vec<JsonCall<'a>>,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'a str,
    severity: &'static str,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    message: &'a str,
    hint: Option<&'a str>,
    tool: Option<&'a str>,
    argument: Option<&'a str>,
    sources: Vec<JsonSource<'a>>,
    /// The call's other broken requirements (`also: ...`), when there are any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<&'a str>,
}

#[derive(Serialize)]
struct JsonSource<'a> {
    name: &'a str,
    line: u32,
}

#[derive(Serialize)]
struct Pair<T> {
    may: T,
    must: T,
}

#[derive(Serialize)]
struct JsonCall<'a> {
    tool: &'a str,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    predicted: Pair<Outcome>,
    rule: Pair<&'a crate::policy::Rule>,
    reason: Pair<&'a str>,
    pc: Pair<&'a LabelView>,
    args: Vec<JsonArg<'a>>,
}

#[derive(Serialize)]
struct JsonArg<'a> {
    name: &'a str,
    may: &'a LabelView,
    must: &'a LabelView,
}

fn document<'a>(report: &'a LintReport, filename: &'a str) -> Document<'a> {
    let src = &report.source;
    let diagnostics = report
        .diagnostics
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let (line, column) = report.lines.line_col(src, d.start);
            let (end_line, end_column) = report.lines.line_col(src, d.end.max(d.start));
            let detail = report.details.get(i);
            JsonDiagnostic {
                code: d.code,
                severity: severity(d.severity),
                line,
                column,
                end_line,
                end_column,
                message: &d.message,
                hint: d.hint.as_deref(),
                tool: detail.and_then(|x| x.tool.as_deref()),
                argument: detail.and_then(|x| x.argument.as_deref()),
                sources: detail
                    .map(|x| {
                        x.sources
                            .iter()
                            .map(|s| JsonSource {
                                name: &s.name,
                                line: s.line,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                notes: detail
                    .map(|x| x.notes.iter().map(String::as_str).collect())
                    .unwrap_or_default(),
            }
        })
        .collect();
    let calls = report
        .calls
        .iter()
        .map(|c| {
            let (end_line, end_column) = report.lines.line_col(src, c.end);
            JsonCall {
                tool: &c.tool,
                line: c.line,
                column: c.column,
                end_line,
                end_column,
                predicted: Pair {
                    may: c.may.outcome,
                    must: c.must.outcome,
                },
                rule: Pair {
                    may: &c.may.rule,
                    must: &c.must.rule,
                },
                reason: Pair {
                    may: &c.may.reason,
                    must: &c.must.reason,
                },
                pc: Pair {
                    may: &c.pc_may,
                    must: &c.pc_must,
                },
                args: c
                    .args
                    .iter()
                    .map(|a| JsonArg {
                        name: &a.name,
                        may: &a.may,
                        must: &a.must,
                    })
                    .collect(),
            }
        })
        .collect();
    let errors = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    Document {
        file: filename,
        ok: errors == 0,
        errors,
        warnings: report.diagnostics.len() - errors,
        diagnostics,
        calls,
    }
}

/// SARIF 2.1.0, for CI code scanning.
pub fn sarif(report: &LintReport, filename: &str) -> Value {
    let src = &report.source;
    let rules: Vec<Value> = CODES
        .iter()
        .map(|(id, desc)| {
            json!({
                "id": id,
                "shortDescription": { "text": desc },
                "helpUri": help_uri(id),
            })
        })
        .collect();
    // A relative plan path is relative to where lint ran: `%SRCROOT%`, declared below.
    let relative = !Path::new(filename).is_absolute();
    let artifact = if relative {
        json!({ "uri": uri_path(filename), "uriBaseId": "%SRCROOT%" })
    } else {
        json!({ "uri": format!("file://{}", uri_path(filename)) })
    };
    let at_line = |line: u32, text: String| {
        json!({
            "physicalLocation": {
                "artifactLocation": artifact,
                "region": { "startLine": line.max(1) }
            },
            "message": { "text": text },
        })
    };
    let results: Vec<Value> = report
        .diagnostics
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let (line, column) = report.lines.line_col(src, d.start);
            let (end_line, end_column) = report.lines.line_col(src, d.end.max(d.start));
            let detail = report.details.get(i);
            let mut text = d.message.clone();
            for note in detail.map_or(&[][..], |x| &x.notes[..]) {
                text.push_str("\nnote: ");
                text.push_str(note);
            }
            if let Some(h) = &d.hint {
                text.push_str("\nhelp: ");
                text.push_str(h);
            }
            let sink = json!({
                "physicalLocation": {
                    "artifactLocation": artifact,
                    "region": {
                        "startLine": line.max(1),
                        "startColumn": column.max(1),
                        "endLine": end_line.max(line).max(1),
                        "endColumn": if end_line > line { end_column.max(1) } else { end_column.max(column).max(1) },
                    }
                }
            });
            let mut result = json!({
                "ruleId": d.code,
                "level": severity(d.severity),
                "message": { "text": text },
                "locations": [sink],
            });
            if let Some(i) = CODES.iter().position(|(c, _)| *c == d.code) {
                result["ruleIndex"] = json!(i);
            }
            // Where the data comes from: each source call as a related location, and the path from the
            // sources to this call as a code flow (what code-scanning UIs draw as "source → sink").
            let sources = detail.map_or(&[][..], |x| &x.sources[..]);
            if !sources.is_empty() {
                let related: Vec<Value> = sources
                    .iter()
                    .enumerate()
                    .map(|(k, s)| {
                        let mut l = at_line(s.line, format!("`{}()` output", s.name));
                        l["id"] = json!(k);
                        l
                    })
                    .collect();
                let mut steps: Vec<Value> = sources
                    .iter()
                    .map(|s| json!({ "location": at_line(s.line, format!("`{}()` returns the data", s.name)) }))
                    .collect();
                let mut last = sink.clone();
                last["message"] = json!({ "text": format!("it reaches `{}`", detail.and_then(|x| x.tool.as_deref()).unwrap_or("the call")) });
                steps.push(json!({ "location": last }));
                result["relatedLocations"] = json!(related);
                result["codeFlows"] = json!([{ "threadFlows": [{ "locations": steps }] }]);
            }
            result
        })
        .collect();
    let mut run = json!({
        "tool": {
            "driver": {
                "name": "zamburak",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/zamburak/zamburak",
                "rules": rules,
            }
        },
        "results": results,
    });
    if relative && let Ok(cwd) = std::env::current_dir() {
        let root = format!(
            "file://{}/",
            uri_path(&cwd.to_string_lossy()).trim_end_matches('/')
        );
        run["originalUriBaseIds"] = json!({ "%SRCROOT%": { "uri": root } });
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    })
}

/// Where a code is documented: `docs/diagnostics.md` for the front-end codes, `docs/lint.md` for the
/// analysis codes, at the anchor GitHub gives the code's heading (computed from the docs this binary was
/// built with, so the two cannot drift apart).
pub fn help_uri(code: &str) -> String {
    const BASE: &str = "https://github.com/zamburak/zamburak/blob/main";
    const DOCS: [(&str, &str); 2] = [
        (
            "docs/diagnostics.md",
            include_str!("../../docs/diagnostics.md"),
        ),
        ("docs/lint.md", include_str!("../../docs/lint.md")),
    ];
    // The compiler's own codes share one section.
    let key = if code.starts_with("Z09") {
        "Z090"
    } else {
        code
    };
    for (file, text) in DOCS {
        let heading = text
            .lines()
            .filter_map(|l| l.strip_prefix("### ").or_else(|| l.strip_prefix("## ")))
            .find(|h| h.split([':', ' ', '\u{2013}']).next() == Some(key));
        if let Some(h) = heading {
            return format!("{BASE}/{file}#{}", github_slug(h));
        }
    }
    format!("{BASE}/docs/lint.md")
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

/// A path as a URI path: `/` separators kept, everything outside RFC 3986's unreserved set escaped.
fn uri_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char);
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A SARIF log for a lint that could not look at the plan (an unreadable plan or policy, a bad flag): no
/// results, and an unsuccessful invocation carrying the error, so a code-scanning upload reports the failure
/// instead of a clean plan, and a consumer that parses stdout always gets SARIF when it asked for it.
pub fn sarif_failure(message: &str) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "zamburak",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://github.com/zamburak/zamburak",
                }
            },
            "invocations": [{
                "executionSuccessful": false,
                "exitCode": crate::exit::USAGE,
                "toolExecutionNotifications": [{
                    "level": "error",
                    "message": { "text": message },
                }],
            }],
            "results": [],
        }],
    })
}
