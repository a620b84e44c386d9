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
use crate::plan::diagnostic::Applicability;
use crate::plan::render::render_with_notes;
use crate::plan::{Code, Severity};

/// rustc/ruff-style text: each diagnostic with its source line and carets, then a summary line.
pub fn text(report: &LintReport, filename: &str) -> String {
    let mut out = String::new();
    out.push_str(&render_with_notes(
        &report.diagnostics,
        &report.source,
        filename,
    ));
    let errors = report
        .diagnostics
        .iter()
        .filter(|d| d.severity() == Severity::Error)
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
    code: Code,
    severity: Severity,
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
    /// An edit that resolves the finding (`null` when the plan alone cannot say what to write).
    fix: Option<JsonFix<'a>>,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    message: &'a str,
    applicability: Applicability,
    edits: Vec<JsonEdit<'a>>,
}

/// An edit, by byte offsets into the plan (for programs) and by line and column (for people and editors).
#[derive(Serialize)]
struct JsonEdit<'a> {
    start: usize,
    end: usize,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    content: &'a str,
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
        .map(|d| {
            let (line, column) = report.lines.line_col(src, d.start);
            let (end_line, end_column) = report.lines.line_col(src, d.end.max(d.start));
            JsonDiagnostic {
                code: d.code,
                severity: d.severity(),
                line,
                column,
                end_line,
                end_column,
                message: &d.message,
                hint: d.hint.as_deref(),
                tool: d.tool.as_deref(),
                argument: d.argument.as_deref(),
                sources: d
                    .sources
                    .iter()
                    .map(|s| JsonSource {
                        name: &s.name,
                        line: s.line,
                    })
                    .collect(),
                notes: d.notes.iter().map(String::as_str).collect(),
                fix: d.fix.as_ref().map(|f| JsonFix {
                    message: &f.message,
                    applicability: f.applicability,
                    edits: f
                        .edits
                        .iter()
                        .map(|e| {
                            let (line, column) = report.lines.line_col(src, e.start);
                            let (end_line, end_column) = report.lines.line_col(src, e.end);
                            JsonEdit {
                                start: e.start,
                                end: e.end,
                                line,
                                column,
                                end_line,
                                end_column,
                                content: &e.content,
                            }
                        })
                        .collect(),
                }),
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
        .filter(|d| d.severity() == Severity::Error)
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
    let rules: Vec<Value> = Code::ALL
        .iter()
        .map(|code| {
            json!({
                "id": code,
                "shortDescription": { "text": code.summary() },
                "helpUri": code.help_uri(),
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
        .map(|d| {
            let (line, column) = report.lines.line_col(src, d.start);
            let (end_line, end_column) = report.lines.line_col(src, d.end.max(d.start));
            let mut text = d.message.clone();
            for note in &d.notes {
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
                "level": d.severity(),
                "message": { "text": text },
                "locations": [sink],
            });
            if let Some(i) = Code::ALL.iter().position(|c| *c == d.code) {
                result["ruleIndex"] = json!(i);
            }
            // Where the data comes from: each source call as a related location, and the path from the
            // sources to this call as a code flow (what code-scanning UIs draw as "source → sink").
            let sources = &d.sources;
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
                last["message"] = json!({ "text": format!("it reaches `{}`", d.tool.as_deref().unwrap_or("the call")) });
                steps.push(json!({ "location": last }));
                result["relatedLocations"] = json!(related);
                result["codeFlows"] = json!([{ "threadFlows": [{ "locations": steps }] }]);
            }
            result
        })
        .collect();
    let mut driver = sarif_driver();
    driver["rules"] = json!(rules);
    let mut run = json!({
        "tool": { "driver": driver },
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

/// The tool as SARIF names it, without its rules.
fn sarif_driver() -> Value {
    json!({
        "name": "zamburak",
        "version": env!("CARGO_PKG_VERSION"),
        "informationUri": "https://github.com/zamburak/zamburak",
    })
}

/// A SARIF log for a lint that could not look at the plan (an unreadable plan or policy, a bad flag): no
/// results, and an unsuccessful invocation carrying the error, so a code-scanning upload reports the failure
/// instead of a clean plan, and a consumer that parses stdout always gets SARIF when it asked for it.
pub fn sarif_failure(message: &str) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": sarif_driver() },
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
