//! The export of a trace for a named reader (`zamburak view TRACE --export FILE.html --for READER`):
//! docs/semantics.md, "A shareable trace shares nothing private". A trace given to anyone else keeps only
//! what that reader may read: the planner's cut ([`crate::runtime::answer::tell`], the same function that
//! decides what a planner model is told) is applied with the reader in the planner's place, to the output,
//! the decisions, the labels and the plan text. Every record before the cut is kept as the trace has it
//! (keyed digests included, which name nothing without the run's key); nothing after it is, not even how
//! many records follow; the plan text is kept only when the planner context it was written in is one the
//! reader may read.
//!
//! Only an intact trace is exported for a reader: a broken chain could put a forged record before the cut.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::model::{ChainView, ExportFor, TraceView};
use crate::label::LabelView;
use crate::planner::{ContextIntegrity, ContextLabel};
use crate::policy::Policy;
use crate::policy::model::ResolvedPlanner;
use crate::runtime::answer::{About, Knows, planner_reads, tell};
use crate::trace::record::{Header, Record};

/// An export for a reader, and what the person who makes it is told about the trace.
#[derive(Debug)]
pub struct ForReader {
    pub view: TraceView,
    /// Records of the trace, and how many the export keeps (for the person's terminal only).
    pub records: usize,
    pub kept: usize,
    /// The trace has no end record and waits on no claim (an interrupted run).
    pub incomplete: bool,
}

/// Why no export for the reader was made. Nothing is written then.
#[derive(Debug, thiserror::Error)]
pub enum ForReaderError {
    #[error("name the reader the export is for (`--for llm:planner`, `--for bob@example.com`)")]
    NoReader,
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the trace's chain is broken at seq {seq}: an export for a reader is made only from a trace whose chain checks"
    )]
    Broken { seq: u64 },
    #[error("the trace has no readable header")]
    NoHeader,
    #[error(
        "the trace does not record its policy (format 1), so what a reader may read of it cannot be told; nothing was exported"
    )]
    NoPolicy,
    #[error("the policy recorded in the trace does not match its digest; nothing was exported")]
    PolicyMismatch,
    #[error("the policy recorded in the trace does not load ({0}); nothing was exported")]
    Policy(String),
}

/// A planner context as a label, for the reader's check of the plan text.
fn context_view(c: &ContextLabel) -> LabelView {
    LabelView {
        integrity: match c.integrity {
            ContextIntegrity::Trusted => "trusted",
            ContextIntegrity::Untrusted => "untrusted",
            ContextIntegrity::Unknown => "unknown",
        }
        .to_string(),
        verified: Vec::new(),
        tags: c.tags.iter().cloned().collect(),
        readers: c.readers.as_ref().map(|r| r.iter().cloned().collect()),
        sources: c.sources.iter().cloned().collect(),
    }
}

/// Every label a record carries: its own, its arguments' and their elements', its control context's.
fn labels(record: &Value) -> Vec<&Value> {
    let mut out: Vec<&Value> = ["label", "pc"]
        .iter()
        .filter_map(|k| record.get(*k))
        .collect();
    for a in record
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.extend(a.get("label"));
        out.extend(
            a.get("elements")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        );
    }
    out
}

/// Whether the reader may read every label `record` carries (a label that does not parse is not).
fn readable(planner: &ResolvedPlanner, record: &Value) -> bool {
    labels(record).into_iter().all(|l| {
        serde_json::from_value::<LabelView>(l.clone()).is_ok_and(|l| planner_reads(planner, &l))
    })
}

/// The record without the chain's fields, typed.
fn typed(record: &Value) -> Option<Record> {
    let Value::Object(o) = record else {
        return None;
    };
    let mut o = o.clone();
    for k in ["seq", "prev", "hash"] {
        o.shift_remove(k);
    }
    serde_json::from_value(Value::Object(o)).ok()
}

/// The export of the trace at `path` for `reader`: the view of the records before the cut.
pub fn load_for(path: &Path, reader: &str) -> Result<ForReader, ForReaderError> {
    let reader = reader.trim();
    if reader.is_empty() {
        return Err(ForReaderError::NoReader);
    }
    let file = std::fs::File::open(path).map_err(|source| ForReaderError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    // One reading for the check and the records, so what was checked is what is exported.
    let mut records: Vec<Value> = Vec::new();
    let report = crate::trace::verify::check(std::io::BufReader::new(file), |r| {
        records.push(Value::Object(r))
    })
    .map_err(|source| ForReaderError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if report.not_a_trace {
        return Err(crate::trace::TraceError::NotATrace {
            path: path.to_path_buf(),
            why: report.broken.map(|b| b.why).unwrap_or_default(),
        }
        .into());
    }
    if let Some(b) = report.broken {
        return Err(ForReaderError::Broken { seq: b.seq });
    }
    let Some(Record::Header(header)) = records.first().and_then(typed) else {
        return Err(ForReaderError::NoHeader);
    };
    let Some(recorded) = &header.policy else {
        return Err(ForReaderError::NoPolicy);
    };
    if crate::digest::sha256_bytes(recorded.text.as_bytes()) != header.policy_sha256 {
        return Err(ForReaderError::PolicyMismatch);
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let policy = Policy::from_yaml_str(&recorded.text, &recorded.path, base)
        .map_err(|e| ForReaderError::Policy(e.to_string()))?;
    let knows = Knows::for_reader(&policy, reader);
    let told = tell(
        &records,
        &knows,
        &About {
            run: "",
            trace: "",
            resumable: false,
            values: &BTreeMap::new(),
        },
    );
    // The cut as the planner's answer makes it; then, should a kept record still carry a label the reader
    // may not read (a prediction of lint, a failed verifier's input), the export stops there too.
    let mut kept = told.kept.min(records.len());
    if let Some(i) = records[..kept]
        .iter()
        .skip(1)
        .position(|r| !readable(&knows.planner, r))
    {
        kept = i + 1;
    }
    let plan_readable = header
        .planner_context
        .as_ref()
        .is_none_or(|c| planner_reads(&knows.planner, &context_view(c)));
    let mut typed_records: Vec<(Record, bool)> = Vec::with_capacity(kept);
    for r in &records[..kept] {
        match typed(r) {
            Some(Record::Header(mut h)) => {
                if !plan_readable {
                    withhold_plan(&mut h);
                }
                typed_records.push((Record::Header(h), false));
            }
            Some(rec) => typed_records.push((rec, false)),
            // The chain checked, so every record parses; should one not, the export stops before it.
            None => break,
        }
    }
    let kept = typed_records.len();
    let mut view = TraceView {
        file: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        chain: ChainView {
            ok: true,
            complete: kept == records.len() && report.complete,
            incomplete: false,
            records: kept,
            head: kept
                .checked_sub(1)
                .and_then(|i| records.get(i))
                .and_then(|r| r.get("hash"))
                .and_then(Value::as_str)
                .map(str::to_string),
            ..ChainView::default()
        },
        ..TraceView::default()
    };
    super::model::build(&mut view, typed_records);
    // The reader decides no claim: the pages name no snapshot and no command.
    view.pending = None;
    view.export_for = Some(ExportFor {
        reader: reader.to_string(),
        cut: kept < records.len(),
        plan_withheld: !plan_readable,
    });
    Ok(ForReader {
        view,
        records: records.len(),
        kept,
        incomplete: report.is_incomplete(),
    })
}

/// The header without the plan: its text, and its digest, which would confirm a guess of the text.
fn withhold_plan(h: &mut Header) {
    h.plan = String::new();
    h.plan_sha256 = "withheld".into();
}
