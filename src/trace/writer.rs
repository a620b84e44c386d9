//! Appending records to a trace and keeping the chain: each record's `prev` is the hash of the one before.
//!
//! ```
//! use zamburak::trace::record::{End, Header, Record};
//! use zamburak::trace::writer::TraceWriter;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("plan.zjson");
//! let mut w = TraceWriter::create(&path, Header::new("x = 1\n", "sha256:00".into(), "strict")).unwrap();
//! let (seq, _hash) = w
//!     .append(Record::End(End { status: "finished".into(), exit_code: 0, outcome: "allow".into() }))
//!     .unwrap();
//! assert_eq!(seq, 1);
//! let head = w.close().unwrap();
//! assert_eq!(zamburak::trace::verify::verify(&path).unwrap().head, Some(head));
//! ```

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::digest::DigestKey;
use crate::trace::canonical::{GENESIS, HASH_KEY, record_hash, render_line, survives_round_trip};
use crate::trace::error::TraceError;
use crate::trace::reader::MAX_LINE;
use crate::trace::record::{Header, Record};
use crate::trace::verify::check;

/// What [`TraceWriter::observe`] calls with each record written.
type Observer = Box<dyn FnMut(&Record)>;

/// Writes one trace file. Each record goes out in a single `write_all` of the whole line, `\n` included, on
/// an unbuffered file, so a crash leaves at most one partial last line, which the verifier reports as
/// truncated. Nothing is synced until [`TraceWriter::close`].
pub struct TraceWriter {
    file: File,
    path: PathBuf,
    next_seq: u64,
    head: String,
    ended: bool,
    poisoned: bool,
    /// The run's secret for the digests its records name values by (docs/semantics.md, "A shareable trace
    /// shares nothing private"). Never written to the trace.
    key: DigestKey,
    /// Where the values the records name by digest are kept for their owner (`view --reveal`).
    values: Option<crate::trace::values::ValueStore>,
    /// The first failure to keep a value; keeping stops there, the trace goes on.
    values_problem: Option<String>,
    /// Shown each record once it is written (`run` streams its decision lines from here).
    observer: Option<Observer>,
}

impl std::fmt::Debug for TraceWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceWriter")
            .field("path", &self.path)
            .field("next_seq", &self.next_seq)
            .field("head", &self.head)
            .field("ended", &self.ended)
            .field("poisoned", &self.poisoned)
            .finish_non_exhaustive()
    }
}

impl TraceWriter {
    /// Start a trace at `path` with `header` as seq 0. The caller picks the path (by default `PLAN.zjson`
    /// beside the plan) and a new run replaces the previous run's trace.
    ///
    /// The header is written to a new file beside `path` that then replaces it, so `path` is never an
    /// empty or headless file: a run killed before its header leaves the previous trace (or none), and
    /// it had done nothing yet. Records go on through the same descriptor, into the renamed file.
    ///
    /// The run's digest key is made here, fresh; without a random source the trace is not started.
    pub fn create(path: &Path, header: Header) -> Result<TraceWriter, TraceError> {
        let key = DigestKey::fresh().map_err(|e| TraceError::NoKey(e.to_string()))?;
        let io_err = |source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "trace".into());
        let fresh = path.with_file_name(format!(".{name}.new"));
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&fresh)
            .map_err(io_err)?;
        let mut writer = TraceWriter {
            file,
            path: fresh.clone(),
            next_seq: 0,
            head: GENESIS.to_string(),
            ended: false,
            poisoned: false,
            key,
            values: None,
            values_problem: None,
            observer: None,
        };
        let written = writer.write(Record::Header(header));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&fresh);
            return Err(e);
        }
        if let Err(source) = std::fs::rename(&fresh, path) {
            let _ = std::fs::remove_file(&fresh);
            return Err(io_err(source));
        }
        writer.path = path.to_path_buf();
        Ok(writer)
    }

    /// Continue an existing trace (a run resumed after an approval). The whole file is verified first; a
    /// broken trace is refused with [`TraceError::Broken`], one that already has its `end` record with
    /// [`TraceError::Ended`]. A suspended run therefore closes its trace without an `end` record.
    ///
    /// `key` is the run's digest key, kept where the run was suspended: the continued run names its values
    /// under the same key, so a value has the same digest before and after the approval.
    pub fn open_append(path: &Path, key: DigestKey) -> Result<TraceWriter, TraceError> {
        let io_err = |source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        };
        // One handle for checking and appending, so what was checked is what gets extended.
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(io_err)?;
        let report = check(BufReader::new(&file), |_| {}).map_err(io_err)?;
        if let Some(broken) = report.broken {
            return Err(TraceError::Broken(broken));
        }
        if report.complete {
            return Err(TraceError::Ended);
        }
        let head = report.head.ok_or_else(|| {
            // `check` marks a file with no records as broken, so a head exists here; stay closed anyway.
            TraceError::Serialize("verified trace without a head".into())
        })?;
        Ok(TraceWriter {
            file,
            path: path.to_path_buf(),
            next_seq: report.records as u64,
            head,
            ended: false,
            poisoned: false,
            key,
            values: None,
            values_problem: None,
            observer: None,
        })
    }

    /// Append a record; returns its `seq` and `hash`. Refused after the `end` record, for a header, and after a
    /// failed write.
    pub fn append(&mut self, rec: Record) -> Result<(u64, String), TraceError> {
        if matches!(rec, Record::Header(_)) {
            return Err(TraceError::HeaderNotFirst);
        }
        self.write(rec)
    }

    /// Calls `observer` with every record from now on, right after it is written: a decision is seen
    /// when it is recorded, before its side effect (what `run` prints as it goes).
    pub fn observe(&mut self, observer: impl FnMut(&Record) + 'static) {
        self.observer = Some(Box::new(observer));
    }

    /// The run's digest key: what the records' value digests are keyed with. For the value store and a
    /// suspended run's snapshot only, which are the user's.
    pub fn key(&self) -> &DigestKey {
        &self.key
    }

    /// Keep the values the records name by digest in `store` (see [`crate::trace::values`]), which must
    /// have been made with [`TraceWriter::key`].
    pub fn keep_values_in(&mut self, store: crate::trace::values::ValueStore) {
        self.values = Some(store);
    }

    /// Keeps one value, whose digest a record names, for its owner when a store is attached. A failure is
    /// remembered ([`TraceWriter::values_problem`]) and stops keeping; it never stops the trace.
    pub fn keep_value(&mut self, digest: &str, value: &Value) {
        if let Some(store) = self.values.as_mut()
            && let Err(e) = store.keep_digested(digest, value)
        {
            self.values_problem = Some(e.to_string());
            self.values = None;
        }
    }

    /// Why values stopped being kept, if they did.
    pub fn values_problem(&self) -> Option<&str> {
        self.values_problem.as_deref()
    }

    /// Hash of the last record written (64 zeros before the header).
    pub fn head(&self) -> &str {
        &self.head
    }

    /// The `seq` the next record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Sync the file to disk and return the head hash (keep it elsewhere to detect a rewritten tail).
    pub fn close(self) -> Result<String, TraceError> {
        self.file.sync_all().map_err(|source| TraceError::Io {
            path: self.path.clone(),
            source,
        })?;
        Ok(self.head)
    }

    fn write(&mut self, mut rec: Record) -> Result<(u64, String), TraceError> {
        if self.poisoned {
            return Err(TraceError::Poisoned);
        }
        if self.ended {
            return Err(TraceError::Ended);
        }
        drop_unstable_previews(&mut rec);
        let (mut line, hash) = match self.line_for(&rec) {
            // Previews are optional: a record too long with them is written with digests only.
            Err(TraceError::TooLarge { .. }) if drop_previews(&mut rec) => self.line_for(&rec)?,
            other => other?,
        };
        line.push('\n');
        if let Err(source) = self.file.write_all(line.as_bytes()) {
            self.poisoned = true;
            return Err(TraceError::Io {
                path: self.path.clone(),
                source,
            });
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.head.clone_from(&hash);
        self.ended = matches!(rec, Record::End(_));
        if let Some(observe) = self.observer.as_mut() {
            observe(&rec);
        }
        Ok((seq, hash))
    }
}

impl TraceWriter {
    /// The line (without `\n`) and hash `rec` gets as the next record.
    fn line_for(&self, rec: &Record) -> Result<(String, String), TraceError> {
        let Value::Object(fields) =
            serde_json::to_value(rec).map_err(|e| TraceError::Serialize(e.to_string()))?
        else {
            return Err(TraceError::Serialize(
                "a record is not a JSON object".into(),
            ));
        };
        let mut record = Map::new();
        record.insert("seq".into(), Value::from(self.next_seq));
        record.insert("prev".into(), Value::String(self.head.clone()));
        record.extend(fields);
        let hash = record_hash(&record);
        record.insert(HASH_KEY.into(), Value::String(hash.clone()));
        let line = render_line(&record);
        if line.len() > MAX_LINE {
            return Err(TraceError::TooLarge {
                len: line.len(),
                max: MAX_LINE,
            });
        }
        // Only a float can fail to read back as written (see `survives_round_trip`); a record without one
        // skips the re-parse, which costs as much as writing it.
        if record.values().any(has_float) {
            check_stable(&line)?;
        }
        Ok((line, hash))
    }
}

/// Remove every preview; true when there was one to remove.
fn drop_previews(rec: &mut Record) -> bool {
    let mut dropped = false;
    let mut clear = |p: &mut Option<Value>| dropped |= p.take().is_some();
    match rec {
        Record::Call(call) => call.args.iter_mut().for_each(|a| clear(&mut a.preview)),
        Record::Result(result) => clear(&mut result.preview),
        _ => {}
    }
    dropped
}

/// Drop previews that JSON would not read back exactly (a float serde_json's default parser reads one ulp
/// off), so every written line re-renders to its own bytes. The digest stays; a preview is informational.
fn drop_unstable_previews(rec: &mut Record) {
    let keep = |p: &mut Option<Value>| {
        if p.as_ref().is_some_and(|v| !survives_round_trip(v)) {
            *p = None;
        }
    };
    match rec {
        Record::Call(call) => call.args.iter_mut().for_each(|a| keep(&mut a.preview)),
        Record::Result(result) => keep(&mut result.preview),
        _ => {}
    }
}

/// Fail closed if a line would not read back as itself (the verifier would call the trace broken).
/// Whether `value` holds a float anywhere.
fn has_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(has_float),
        Value::Object(map) => map.values().any(has_float),
        _ => false,
    }
}

fn check_stable(line: &str) -> Result<(), TraceError> {
    let parsed: Map<String, Value> = serde_json::from_str(line)
        .map_err(|e| TraceError::Serialize(format!("record does not re-parse: {e}")))?;
    if render_line(&parsed) == line {
        Ok(())
    } else {
        Err(TraceError::Serialize(
            "record does not survive a JSON round trip".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::record::End;

    fn end() -> Record {
        Record::End(End {
            status: "finished".into(),
            exit_code: 0,
            outcome: "allow".into(),
        })
    }

    #[test]
    fn refuses_header_and_records_after_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.zjson");
        let mut w =
            TraceWriter::create(&path, Header::new("", "sha256:0".into(), "strict")).unwrap();
        assert!(matches!(
            w.append(Record::Header(Header::new("", "x".into(), "strict"))),
            Err(TraceError::HeaderNotFirst)
        ));
        w.append(end()).unwrap();
        assert!(matches!(w.append(end()), Err(TraceError::Ended)));
        w.close().unwrap();
        assert!(matches!(
            TraceWriter::open_append(&path, DigestKey::fresh().unwrap()),
            Err(TraceError::Ended)
        ));
    }

    #[test]
    fn open_append_continues_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.zjson");
        let w = TraceWriter::create(&path, Header::new("", "sha256:0".into(), "strict")).unwrap();
        let head = w.close().unwrap();
        let mut w = TraceWriter::open_append(&path, DigestKey::fresh().unwrap()).unwrap();
        assert_eq!(w.head(), head);
        assert_eq!(w.next_seq(), 1);
        let (seq, hash) = w.append(end()).unwrap();
        assert_eq!(seq, 1);
        assert_eq!(w.close().unwrap(), hash);
        let report = crate::trace::verify::verify(&path).unwrap();
        assert!(report.is_ok(), "{report:?}");
        assert_eq!(report.records, 2);
    }

    #[test]
    fn oversized_preview_is_dropped_but_an_oversized_plan_is_refused() {
        use crate::label::LabelView;
        use crate::trace::record::CallResult;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.zjson");
        let mut w =
            TraceWriter::create(&path, Header::new("", "sha256:0".into(), "strict")).unwrap();
        let big = "x".repeat(MAX_LINE);
        let (_, _) = w
            .append(Record::Result(CallResult {
                call_id: 1,
                tool: "t".into(),
                label: LabelView {
                    integrity: "trusted".into(),
                    verified: vec![],
                    tags: vec![],
                    readers: None,
                    sources: vec![],
                },
                digest: "sha256:x".into(),
                preview: Some(Value::String(big.clone())),
                scanned: Vec::new(),
            }))
            .unwrap();
        w.append(end()).unwrap();
        w.close().unwrap();
        let records = crate::trace::read(&path).unwrap();
        assert_eq!(records[1]["preview"], Value::Null);
        assert_eq!(records[1]["digest"], "sha256:x");

        let other = dir.path().join("u.zjson");
        let refused = TraceWriter::create(&other, Header::new(&big, "sha256:0".into(), "strict"));
        assert!(matches!(refused, Err(TraceError::TooLarge { .. })));
    }

    #[test]
    fn previews_that_would_not_read_back_are_dropped() {
        use crate::label::LabelView;
        use crate::trace::record::CallResult;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.zjson");
        let mut w =
            TraceWriter::create(&path, Header::new("", "sha256:0".into(), "strict")).unwrap();
        let label = LabelView {
            integrity: "trusted".into(),
            verified: vec![],
            tags: vec![],
            readers: None,
            sources: vec![],
        };
        // Floats with many digits and extreme exponents, where a non-exact parser drifts.
        for f in [
            9.87654321e299,
            1.2345678901234567e-300,
            0.1 + 0.2,
            -0.0,
            5e-324,
            f64::MAX,
            0.5,
        ] {
            let result = Record::Result(CallResult {
                call_id: 1,
                tool: "t".into(),
                label: label.clone(),
                digest: "sha256:x".into(),
                preview: Some(serde_json::json!({"v": [f]})),
                scanned: Vec::new(),
            });
            w.append(result).unwrap();
        }
        w.append(end()).unwrap();
        w.close().unwrap();
        let report = crate::trace::verify::verify(&path).unwrap();
        assert!(report.is_ok(), "{report:?}");
        // The plain 0.5 keeps its preview.
        let records = crate::trace::read(&path).unwrap();
        assert_eq!(records[7]["preview"], serde_json::json!({"v": [0.5]}));
    }
}
