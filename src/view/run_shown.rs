//! The person's view of one run on the review queue's run page (docs/serve.md, "What the planner can learn"):
//! everything the run printed, each segment with who wrote it and who may read it, and every decision, read
//! from the run's trace and its value store. This is the page the planner's answer links to; it is the
//! person's, shown only behind the queue's session (never to the model), and whatever the planner's answer
//! cut is here in full.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::label::LabelView;
use crate::text::visible;

/// One printed segment: its text and its label in words.
#[derive(Clone, Debug, Serialize)]
pub struct Printed {
    pub text: String,
    pub label: String,
    /// Written by the data, not by the plan: shown so.
    pub untrusted: bool,
}

/// One decision.
#[derive(Clone, Debug, Serialize)]
pub struct Decided {
    pub call_id: u64,
    pub line: u64,
    pub tool: String,
    pub decision: String,
    pub reason: String,
    pub approval: Option<String>,
}

/// The run as the person is shown it.
#[derive(Clone, Debug, Serialize)]
pub struct RunShown {
    pub printed: Vec<Printed>,
    pub decisions: Vec<Decided>,
    /// How the run ended (`completed`, `denied`…), or `waiting`/`unfinished`.
    pub state: String,
    pub error: Option<String>,
}

/// The run whose trace is `trace`, or `None` when it has none that can be read.
pub fn of_trace(trace: &Path) -> Option<RunShown> {
    let records = crate::trace::read(trace).ok()?;
    let values = crate::trace::values::load(&crate::trace::values::store_path(trace))
        .map(|l| l.values)
        .unwrap_or_default();
    let mut shown = RunShown {
        printed: Vec::new(),
        decisions: Vec::new(),
        state: "unfinished".into(),
        error: None,
    };
    for r in &records {
        let text = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
        match r.get("type").and_then(Value::as_str) {
            Some("output") => {
                let label: Option<LabelView> = r
                    .get("label")
                    .and_then(|l| serde_json::from_value(l.clone()).ok());
                let whole = r
                    .get("preview")
                    .and_then(Value::as_str)
                    .or_else(|| {
                        r.get("digest")
                            .and_then(Value::as_str)
                            .and_then(|d| values.get(d))
                            .and_then(Value::as_str)
                    })
                    .unwrap_or("<not kept: the value store beside the trace is missing>");
                shown.printed.push(Printed {
                    text: visible(whole),
                    label: label
                        .as_ref()
                        .map_or_else(|| "label unknown".into(), ToString::to_string),
                    untrusted: label.as_ref().is_none_or(|l| l.integrity != "trusted"),
                });
            }
            Some("call") => shown.decisions.push(Decided {
                call_id: r.get("call_id").and_then(Value::as_u64).unwrap_or(0),
                line: r.get("line").and_then(Value::as_u64).unwrap_or(0),
                tool: visible(&text("tool").unwrap_or_default()),
                decision: text("decision").unwrap_or_default(),
                reason: visible(&text("reason").unwrap_or_default()),
                approval: None,
            }),
            Some("approval") => {
                let id = r.get("call_id").and_then(Value::as_u64);
                if let Some(d) = shown
                    .decisions
                    .iter_mut()
                    .rev()
                    .find(|d| Some(d.call_id) == id)
                {
                    d.approval = text("decision");
                }
            }
            Some("error") => {
                shown.error = Some(visible(&format!(
                    "{}: {}",
                    text("exc_type").unwrap_or_default(),
                    text("message").unwrap_or_default()
                )));
            }
            Some("suspend") => shown.state = "waiting for you".into(),
            Some("end") => shown.state = text("status").unwrap_or_default(),
            _ => {}
        }
    }
    Some(shown)
}
