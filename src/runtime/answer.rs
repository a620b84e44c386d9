//! The planner's answer: what a planner model is told about a run (docs/semantics.md, "What the planner and
//! the person are told"). One typed value, [`Answer`], built by one function, [`tell`], from the run's trace
//! records in order; every surface that hands a run to a model uses it: `run_plan` and `run_status` of
//! `zamburak mcp serve`, the `planner` field of `zamburak run --format json`, and the Python package (which
//! reads that field).
//!
//! **The cut.** The answer is a sink, and its shape is data too: which events it holds, in which order,
//! with which labels and counts. So it is covered by one floating label that starts at the planner context
//! and only rises, and the answer stops at the first point where that label is one the planner may not
//! read. This module keeps a bound of that label that depends on the policy alone: the floating label
//! rises to "unreadable" the moment a tool call whose outcome the planner may not read in every world is
//! performed (its decision is shown; its result, its error, and everything after are not). Before that
//! point every value in the run is made of literals, of what the planner context already holds, and of
//! results the planner may read, so every condition, failure, decision and printed segment before it is
//! one the planner may read; and whether the point is reached depends only on the tool being called, which
//! is decided by what came before. The cut is therefore never later than the floating label's first
//! unreadable point, and its place never depends on what the planner may not read. A tool is
//! *transparent* ([`Knows::transparent`]) when the policy labels every result it can give (every
//! field, every record, its structure) with integrity and readers the planner reads whatever the data is: readers chosen by data (`from_fields`) count only when the
//! planner is in `also`. A tool error is an outcome of the same call, so it is shown only for a transparent
//! tool. Verifiers are pure functions of the policy and the (readable) value, so they never cut. A decision
//! the person's remembered values could change cuts before it (its outcome is the store's). Anything
//! the walk does not recognise cuts (fail closed).
//!
//! After the cut the planner gets one fixed marker, [`CUT_MARKER`], that names nothing the data chose, and
//! the status `for_the_person`, with where the person sees the rest ([`Answer::person`]). It never learns how
//! the run ended, whether a claim waits, or how many calls followed: only whether the run is still going
//! (the termination channel, accepted and documented in docs/serve.md).
//!
//! **What the planner read.** [`Told::read`] is the join of the labels of everything the answer tells
//! (results of transparent tools, printed segments, decisions' arguments and control contexts): the session's
//! planner context joins it before the answer is handed over.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::label::LabelView;
use crate::planner::ContextLabel;
use crate::policy::Policy;
use crate::policy::model::{IntegritySpec, ReadersSpec, ResolvedPlanner};

/// What the planner is told in place of everything after the cut. Fixed: it names no label, source, count,
/// length or digest.
pub const CUT_MARKER: &str =
    "<the rest of this run depends on data you may not read: it is for the person>";

/// Whether the planner may read a value with this label: the planner among its readers (public counts),
/// and trusted, or untrusted where the policy lets it read untrusted values. Unknown never.
pub fn planner_reads(planner: &ResolvedPlanner, label: &LabelView) -> bool {
    let integrity = match label.integrity.as_str() {
        "trusted" => true,
        "untrusted" => planner.reads_untrusted,
        _ => false,
    };
    integrity
        && match &label.readers {
            None => true,
            Some(readers) => readers
                .iter()
                .any(|r| r.trim().eq_ignore_ascii_case(&planner.reader)),
        }
}

/// What the answer's builder knows of the policy: who the planner is, and which tools' outcomes it may
/// read in every world.
#[derive(Clone, Debug)]
pub struct Knows {
    pub planner: ResolvedPlanner,
    transparent: BTreeSet<String>,
}

impl Knows {
    /// From the policy that decided the run.
    pub fn of(policy: &Policy) -> Knows {
        let planner = policy.planner();
        let transparent = policy
            .tools()
            .filter(|(_, spec)| transparent(&planner, spec))
            .map(|(name, _)| name.to_string())
            .collect();
        Knows {
            planner,
            transparent,
        }
    }

    /// What a named reader may be told of a run under `policy`: the same cut as the planner's, with
    /// `reader` in its place (docs/semantics.md, "A shareable trace shares nothing private": an export for
    /// a named reader). The policy's own planner reads as the policy says; any other reader is a party
    /// whose confidentiality counts, not its trust, so untrusted values it is among the readers of are
    /// readable to it (unknown integrity never is).
    pub fn for_reader(policy: &Policy, reader: &str) -> Knows {
        let planner = policy.planner();
        let reader = reader.trim().to_lowercase();
        let planner = if reader == planner.reader {
            planner
        } else {
            ResolvedPlanner {
                reader,
                reads_untrusted: true,
            }
        };
        let transparent = policy
            .tools()
            .filter(|(_, spec)| transparent(&planner, spec))
            .map(|(name, _)| name.to_string())
            .collect();
        Knows {
            planner,
            transparent,
        }
    }

    /// Whether the planner may read every outcome of a call of `tool` (its result in every world, or its
    /// error) by the policy alone. A tool the policy does not declare is not.
    pub fn transparent(&self, tool: &str) -> bool {
        self.transparent.contains(tool)
    }
}

/// Whether readers given by `spec` always include the planner, whatever the data.
fn readers_include(planner: &ResolvedPlanner, spec: &ReadersSpec) -> bool {
    let named = |names: &[String]| {
        names
            .iter()
            .any(|n| n.trim().eq_ignore_ascii_case(&planner.reader))
    };
    match spec {
        ReadersSpec::Public => true,
        ReadersSpec::User => false,
        ReadersSpec::List(names) => named(names),
        // The addresses come from the data; only `also` is the policy's.
        ReadersSpec::FromFields { also, .. } => named(also),
    }
}

/// Whether the policy labels every result of `spec` so that the planner reads it in every world.
fn transparent(planner: &ResolvedPlanner, spec: &crate::policy::model::ToolSpec) -> bool {
    let r = spec.returns();
    let integrity_ok = |i: Option<IntegritySpec>| match i {
        Some(IntegritySpec::Trusted) => true,
        Some(IntegritySpec::Untrusted) | None => planner.reads_untrusted,
    };
    integrity_ok(r.integrity)
        && r.fields
            .iter()
            .flat_map(|f| f.values())
            .all(|f| f.integrity.is_none() || integrity_ok(f.integrity))
        && r.readers
            .as_ref()
            .is_some_and(|readers| readers_include(planner, readers))
        && r.structure_readers
            .as_ref()
            .is_none_or(|readers| readers_include(planner, readers))
}

/// One decided call as the planner is told it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToldDecision {
    pub call_id: u64,
    pub tool: String,
    pub line: u64,
    pub decision: String,
    pub rule: String,
    /// The person's decision on a `confirm`, once made: `approved` or `rejected`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
}

/// One printed segment as the planner is told it: its text, and its label in words unless it is the plain
/// literal's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToldText {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// The error that stopped the run, before the cut.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToldError {
    #[serde(rename = "type")]
    pub exc_type: String,
    pub line: Option<u64>,
    pub message: String,
}

/// A lint diagnostic of the run's pre-flight check (plan and policy only).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToldDiagnostic {
    pub code: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
    pub hint: Option<String>,
}

/// A claim that waits for the person, told only when it was reached before the cut.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToldWaiting {
    pub tool: String,
    pub line: u64,
    pub note: String,
}

/// The planner's answer about one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Answer {
    pub run: String,
    /// `completed`, `denied`, `error`, `rejected`, `waiting_for_the_person`; `for_the_person` after a cut;
    /// `running`, `starting`, `not_started`, `unfinished`, `unresumable` for a run not (or no longer) under
    /// way.
    pub status: String,
    /// `allow`, `confirm`, `draft`, `deny`…: the run's outcome, when nothing was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    pub decisions: Vec<ToldDecision>,
    pub output: Vec<ToldText>,
    pub error: Option<ToldError>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<ToldDiagnostic>,
    pub waiting: Option<ToldWaiting>,
    /// [`CUT_MARKER`] where the answer was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rest: Option<&'static str>,
    /// Where the person sees the whole run (its output with labels, decisions, any claim): the review
    /// queue's page of the run, or the command that shows it. Hand it to the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// Whether the run is over (after a cut: the termination channel, docs/serve.md).
    pub ended: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

impl Answer {
    /// An answer with nothing but a state: a run that did not start, is starting or running.
    pub fn state(run: &str, status: &str) -> Answer {
        Answer {
            run: run.to_string(),
            status: status.to_string(),
            outcome: None,
            decisions: Vec::new(),
            output: Vec::new(),
            error: None,
            diagnostics: Vec::new(),
            waiting: None,
            rest: None,
            person: None,
            ended: false,
            trace: None,
        }
    }

    /// A run that did not start (its setup failed): nothing ran and nothing of the data was read. `why` is
    /// Zamburak's words about the plan, the policy or the server, never data.
    pub fn not_started(run: &str, why: &str) -> Answer {
        let mut a = Answer::state(run, "not_started");
        a.ended = true;
        a.error = Some(ToldError {
            exc_type: "SetupError".into(),
            line: None,
            message: why.to_string(),
        });
        a
    }

    /// An answer withheld whole because what it would tell could not be recorded in the planner context
    /// (docs/semantics.md, "The planner context label"): cut where it starts.
    pub fn withheld(run: &str, why: &str) -> Answer {
        let mut a = Answer::state(run, "for_the_person");
        a.rest = Some(CUT_MARKER);
        a.error = Some(ToldError {
            exc_type: "ContextError".into(),
            line: None,
            message: format!(
                "the planner context could not be kept ({why}): this answer is withheld"
            ),
        });
        a
    }

    /// Whether the answer was cut.
    pub fn is_cut(&self) -> bool {
        self.rest.is_some()
    }

    /// As JSON, for the transports.
    pub fn to_value(&self) -> Value {
        // Serialising this struct cannot fail: every field is a string, number, bool, list or option of
        // those (no map with non-string keys, no float).
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The answer and what telling it gives the planner to read.
#[derive(Clone, Debug)]
pub struct Told {
    pub answer: Answer,
    /// The join of the labels of everything the answer tells (docs/semantics.md, "The planner context
    /// label"), sources qualified by the run.
    pub read: ContextLabel,
    /// How many of the records, from the first, the answer tells: all of them when nothing was cut, else
    /// those before the cut (with the call whose decision was told and whose outcome was not). An export
    /// for a reader keeps exactly these.
    pub kept: usize,
}

/// The run the answer is about, and where its parts are.
pub struct About<'a> {
    pub run: &'a str,
    /// The trace's path, as the answer names it.
    pub trace: &'a str,
    /// Whether the claim a `suspend` record names can still be decided (its snapshot is there and matches).
    pub resumable: bool,
    /// Printed text by digest, for a segment the trace keeps only as a digest (the value store).
    pub values: &'a BTreeMap<String, Value>,
}

/// The label of a record's field, `None` when missing or malformed.
fn label_of(r: &Value, key: &str) -> Option<LabelView> {
    r.get(key)
        .and_then(|l| serde_json::from_value::<LabelView>(l.clone()).ok())
}

fn is_plain(label: &LabelView) -> bool {
    label.integrity == "trusted"
        && label.tags.is_empty()
        && label.readers.is_none()
        && label.sources.is_empty()
}

/// An error message as the planner may be told it: one that names what a tool or server wrote (even only
/// as a length and digest) or that was redacted is replaced by fixed words.
fn told_message(message: &str) -> String {
    if message.contains("<redacted") {
        "the message depends on data: it is shown to the person".into()
    } else {
        message.to_string()
    }
}

/// The planner's answer about a run, from its trace records in order (`records[0]` the header), under the
/// cut rule of the module's preamble.
pub fn tell(records: &[Value], knows: &Knows, about: &About<'_>) -> Told {
    let planner = &knows.planner;
    let mut read = ContextLabel::trusted();
    let mut answer = Answer::state(about.run, "unfinished");
    answer.trace = Some(about.trace.to_string());
    let mut cut = false;
    let mut tools: BTreeMap<u64, String> = BTreeMap::new();
    let mut ended: Option<(String, String)> = None;
    let mut suspended = false;
    let join = |read: &mut ContextLabel, label: &LabelView| {
        *read = read.join(&ContextLabel::of_view(label, about.run));
    };
    // Every record before `kept` is told; a cut leaves it where the cut is.
    let mut kept = 0usize;
    for (i, r) in records.iter().enumerate() {
        kept = i;
        let kind = r.get("type").and_then(Value::as_str).unwrap_or("");
        let num = |k: &str| r.get(k).and_then(Value::as_u64);
        let text = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
        match kind {
            "header" => {}
            "call" => {
                let (Some(call_id), Some(tool), Some(decision)) =
                    (num("call_id"), text("tool"), text("decision"))
                else {
                    cut = true;
                    break;
                };
                // The decision read the arguments' labels and the control context: all readable here,
                // and what the planner is told of them joins what it read.
                let pc = label_of(r, "pc");
                let args: Option<Vec<LabelView>> = r
                    .get("args")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(|arg| label_of(arg, "label")).collect())
                    .unwrap_or(Some(Vec::new()));
                let (Some(pc), Some(args)) = (pc, args) else {
                    cut = true;
                    break;
                };
                let told = ToldDecision {
                    call_id,
                    tool: tool.clone(),
                    line: num("line").unwrap_or(0),
                    decision: decision.clone(),
                    rule: text("rule").unwrap_or_default(),
                    approval: None,
                };
                // A decision the person's remembered values could change depends on the store, which only the
                // user reads (docs/semantics.md, "Remembered values"): the cut is before it. Whether it read
                // the store depends on the policy and labels alone, so the cut's place does too.
                if r.get("remembered")
                    .and_then(Value::as_array)
                    .is_some_and(|a| !a.is_empty())
                {
                    cut = true;
                    break;
                }
                // A call decided before the run is lint's: its labels are predictions from the plan, the
                // policy and the planner context alone, so the planner is told it whatever they are.
                if r.get("before_run").and_then(Value::as_bool) == Some(true) {
                    answer.decisions.push(told);
                    continue;
                }
                if std::iter::once(&pc)
                    .chain(args.iter())
                    .any(|l| !planner_reads(planner, l))
                {
                    cut = true;
                    break;
                }
                join(&mut read, &pc);
                args.iter().for_each(|l| join(&mut read, l));
                tools.insert(call_id, tool.clone());
                answer.decisions.push(told);
                let performed = matches!(decision.as_str(), "allow" | "draft");
                if performed && !knows.transparent(&tool) {
                    // The decision is told; what the call did is not.
                    kept = i + 1;
                    cut = true;
                    break;
                }
            }
            "approval" => {
                let (Some(call_id), Some(decision)) = (num("call_id"), text("decision")) else {
                    cut = true;
                    break;
                };
                if let Some(d) = answer
                    .decisions
                    .iter_mut()
                    .rev()
                    .find(|d| d.call_id == call_id)
                {
                    d.approval = Some(decision.clone());
                }
                suspended = false;
                answer.waiting = None;
                let performed = decision == "approved";
                let transparent = tools.get(&call_id).is_some_and(|t| knows.transparent(t));
                if performed && !transparent {
                    cut = true;
                    break;
                }
            }
            "result" | "verifier" => {
                let failed = kind == "verifier" && r.get("ok") == Some(&Value::Bool(false));
                if failed {
                    // A failed check depends on the value checked (readable here) and the policy; the
                    // error record that follows says so.
                    continue;
                }
                match label_of(r, "label") {
                    Some(label) if planner_reads(planner, &label) => join(&mut read, &label),
                    _ => {
                        cut = true;
                        break;
                    }
                }
            }
            "output" => {
                let Some(label) = label_of(r, "label").filter(|l| planner_reads(planner, l)) else {
                    cut = true;
                    break;
                };
                let preview = r.get("preview").and_then(Value::as_str);
                let kept = r
                    .get("digest")
                    .and_then(Value::as_str)
                    .and_then(|d| about.values.get(d))
                    .and_then(Value::as_str);
                // Readable, but its text was not kept (the value store could not be written): the planner
                // is told that much, in fixed words.
                let shown = preview
                    .or(kept)
                    .unwrap_or("<text not kept: shown to the person>");
                join(&mut read, &label);
                answer.output.push(ToldText {
                    text: shown.to_string(),
                    label: (!is_plain(&label)).then(|| label.to_string()),
                });
            }
            "error" => {
                answer.error = Some(ToldError {
                    exc_type: text("exc_type").unwrap_or_else(|| "Error".into()),
                    line: num("line"),
                    message: told_message(&text("message").unwrap_or_default()),
                });
            }
            "suspend" => {
                suspended = true;
                let call_id = num("call_id").unwrap_or(0);
                let (tool, line) = answer
                    .decisions
                    .iter()
                    .rev()
                    .find(|d| d.call_id == call_id)
                    .map(|d| (d.tool.clone(), d.line))
                    .unwrap_or_default();
                answer.waiting = Some(ToldWaiting {
                    tool,
                    line,
                    note:
                        "waiting for the person: only they can approve or reject it; hand them the \
                           link in `person`, and call run_status later to learn the outcome"
                            .into(),
                });
            }
            "end" => {
                ended = Some((
                    text("status").unwrap_or_else(|| "unknown".into()),
                    text("outcome").unwrap_or_default(),
                ));
            }
            _ => {
                cut = true;
                break;
            }
        }
    }
    if cut {
        let over = records
            .last()
            .and_then(|r| r.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|k| k == "end");
        answer.status = "for_the_person".into();
        answer.outcome = None;
        answer.error = None;
        answer.waiting = None;
        answer.rest = Some(CUT_MARKER);
        answer.ended = over;
        return Told { answer, read, kept };
    }
    let kept = records.len();
    match (ended, suspended) {
        (Some((status, outcome)), _) => {
            answer.status = status;
            answer.outcome = Some(outcome);
            answer.ended = true;
        }
        (None, true) if about.resumable => answer.status = "waiting_for_the_person".into(),
        (None, true) => {
            // A suspend record whose snapshot is gone or no longer matches: nobody can approve it.
            answer.status = "unresumable".into();
            answer.waiting = None;
            answer.ended = true;
        }
        (None, false) => answer.status = "unfinished".into(),
    }
    Told { answer, read, kept }
}

#[cfg(test)]
mod tests;

/// The planner's answer about the run whose trace is `trace`, read back from it (and from the value store
/// beside it, and its snapshot while a claim waits). A trace that cannot be read tells nothing: the answer
/// is cut where it starts (fail closed).
pub fn read_back(run: &str, trace: &std::path::Path, knows: &Knows) -> Told {
    let shown = trace.display().to_string();
    let records = match crate::trace::read(trace) {
        Ok(records) => records,
        Err(_) => {
            let mut answer = Answer::state(run, "for_the_person");
            answer.rest = Some(CUT_MARKER);
            answer.trace = Some(shown);
            return Told {
                answer,
                read: ContextLabel::trusted(),
                kept: 0,
            };
        }
    };
    let values = crate::trace::values::load(&crate::trace::values::store_path(trace))
        .map(|l| l.values)
        .unwrap_or_default();
    let resumable = crate::runtime::snapshot::pending_at(trace).is_some();
    tell(
        &records,
        knows,
        &About {
            run,
            trace: &shown,
            resumable,
            values: &values,
        },
    )
}

/// The pre-flight lint diagnostics of a run's report, as the planner is told them (they depend on the plan,
/// the policy and the planner context only).
pub fn diagnostics(report: &crate::runtime::run::RunReport, source: &str) -> Vec<ToldDiagnostic> {
    report
        .diagnostics
        .iter()
        .map(|d| {
            let (line, column) = crate::plan::line_col(source, d.start);
            ToldDiagnostic {
                code: d.code.as_str().to_string(),
                line,
                column,
                message: d.message.clone(),
                hint: d.hint.clone(),
            }
        })
        .collect()
}
