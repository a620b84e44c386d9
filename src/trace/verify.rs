//! Checking a trace: every line in canonical form, every `seq` in order, every `hash` recomputed, every
//! `prev` equal to the hash before it, every record a well-formed record of this format, one header first,
//! nothing after the end record. The first failure stops the check and names its `seq` and line.
//!
//! ```no_run
//! let report = zamburak::trace::verify::verify(std::path::Path::new("plan.zjson")).unwrap();
//! match (&report.broken, report.complete) {
//!     (Some(b), _) => println!("broken at seq {} (line {}): {}", b.seq, b.line, b.why),
//!     (None, false) => println!("incomplete"),
//!     (None, true) => println!("ok, head {}", report.head.unwrap_or_default()),
//! }
//! ```

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::trace::canonical::{GENESIS, HASH_KEY, is_hash_hex, record_hash, render_line};
pub use crate::trace::error::Broken;
use crate::trace::error::TraceError;
use crate::trace::reader::{Lines, MAX_LINE, RawLine};
use crate::trace::record::{FORMAT, OLDEST_FORMAT, Record};

/// The outcome of checking a trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    /// Records that checked, from seq 0 on (all of them when nothing is broken).
    pub records: usize,
    /// Hash of the last record that checked.
    pub head: Option<String>,
    /// The chain ends with an `end` record. A trace without one (interrupted, or suspended for an approval)
    /// can verify up to its last record but cannot prove nothing was cut off after it.
    pub complete: bool,
    /// The first thing that does not check.
    pub broken: Option<Broken>,
    /// When the last record is a `suspend`: the run waits for a human decision.
    pub suspended: Option<Suspended>,
    /// The file is not a Zamburak trace at all (empty, or its first line is neither a trace line nor a
    /// header record): `broken` says what its first line is. Not evidence of tampering; nothing to verify.
    pub not_a_trace: bool,
}

/// A run that stopped for an approval: what its last record says it waits on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Suspended {
    pub call_id: u32,
    /// `sha256:<hex>` of the only snapshot the run can be resumed from.
    pub snapshot_sha256: String,
    /// When the claim can no longer be approved (RFC 3339).
    pub expires_at: String,
}

impl VerifyReport {
    /// Intact and complete: what `zamburak verify` accepts with exit code 0.
    pub fn is_ok(&self) -> bool {
        self.broken.is_none() && self.complete
    }

    /// Intact as far as it goes, but without an `end` record and not waiting on an approval: the run was
    /// interrupted, or the end of the file was cut at a line boundary
    /// (docs/trace.md, "What `zamburak verify` checks").
    pub fn is_incomplete(&self) -> bool {
        self.broken.is_none() && !self.complete && self.suspended.is_none()
    }
}

/// Why a file's first line is not a trace's, or `None` when it is one: the layout every record line starts
/// with (`{"seq":`), or a JSON object saying it is a `header`. A file that fails both (a YAML file, a
/// picture, a plan, JSON of another program) is not a Zamburak trace; one that passes and then does not
/// check is a broken trace.
fn not_a_trace(raw: &RawLine) -> Option<&'static str> {
    const START: &[u8] = b"{\"seq\":";
    let bytes = match raw {
        // A first line cut short of the start every record has is a cut trace, not another file.
        RawLine::Unterminated(b) if START.starts_with(b) => return None,
        RawLine::Complete(b) | RawLine::Unterminated(b) => b,
        RawLine::TooLong => return Some("its first line is longer than any trace record"),
    };
    if bytes.starts_with(START) {
        return None;
    }
    match serde_json::from_slice::<Value>(bytes) {
        Err(_) => Some("its first line is not JSON"),
        Ok(v) if v.get("type").and_then(Value::as_str) == Some("header") => None,
        Ok(_) => Some("its first line is not a trace record"),
    }
}

/// Check the trace at `path`. `Err` only when the file cannot be opened or read.
pub fn verify(path: &Path) -> Result<VerifyReport, TraceError> {
    let io_err = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    verify_reader(BufReader::new(file)).map_err(io_err)
}

/// Check a trace from any reader (e.g. bytes in memory). `Err` only for a read error.
///
/// ```
/// use zamburak::trace::verify::verify_reader;
/// let report = verify_reader(&b"not a trace\n"[..]).unwrap();
/// assert!(report.not_a_trace);
/// assert_eq!(report.broken.unwrap().seq, 0);
/// ```
pub fn verify_reader<R: BufRead>(reader: R) -> io::Result<VerifyReport> {
    check(reader, |_| {})
}

/// The check, handing every record that passes to `sink` (the reader keeps them; `verify` drops them).
pub(crate) fn check<R: BufRead>(
    reader: R,
    mut sink: impl FnMut(Map<String, Value>),
) -> io::Result<VerifyReport> {
    let mut lines = Lines::new(reader, MAX_LINE);
    let mut report = VerifyReport {
        records: 0,
        head: None,
        complete: false,
        broken: None,
        suspended: None,
        not_a_trace: false,
    };
    while let Some(raw) = lines.next_line()? {
        let seq = report.records as u64;
        let line = report.records + 1;
        let foreign = if seq == 0 { not_a_trace(&raw) } else { None };
        match check_line(raw, seq, report.head.as_deref(), report.complete) {
            Ok(checked) => {
                report.records += 1;
                report.complete = checked.is_end;
                report.head = Some(checked.hash);
                report.suspended = suspended(&checked.record);
                sink(checked.record);
            }
            Err(why) => {
                report.not_a_trace = foreign.is_some();
                let why = foreign.map_or(why, str::to_string);
                report.broken = Some(Broken { seq, line, why });
                return Ok(report);
            }
        }
    }
    if report.records == 0 && report.broken.is_none() {
        report.not_a_trace = true;
        report.broken = Some(Broken {
            seq: 0,
            line: 1,
            why: "the file is empty".into(),
        });
    }
    Ok(report)
}

/// The suspension a record states, if it is a `suspend` record (already checked well formed).
fn suspended(record: &Map<String, Value>) -> Option<Suspended> {
    if record.get("type").and_then(Value::as_str) != Some("suspend") {
        return None;
    }
    Some(Suspended {
        call_id: u32::try_from(record.get("call_id")?.as_u64()?).ok()?,
        snapshot_sha256: record.get("snapshot_sha256")?.as_str()?.to_string(),
        expires_at: record.get("expires_at")?.as_str()?.to_string(),
    })
}

struct Checked {
    record: Map<String, Value>,
    hash: String,
    is_end: bool,
}

/// Check one line that should hold record `seq`, following `head` (`None` before the header).
fn check_line(raw: RawLine, seq: u64, head: Option<&str>, ended: bool) -> Result<Checked, String> {
    let bytes = match raw {
        RawLine::Complete(bytes) => bytes,
        RawLine::Unterminated(_) => {
            return Err("truncated: the last line has no newline (an interrupted write, or the file was cut)".into());
        }
        RawLine::TooLong => return Err(format!("line longer than {MAX_LINE} bytes; not read")),
    };
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(record) = value else {
        return Err("not a JSON object".into());
    };
    let found = record
        .get("seq")
        .and_then(Value::as_u64)
        .ok_or("no numeric seq")?;
    if found != seq {
        return Err(if found > seq {
            format!(
                "record seq {seq} is missing here (found seq {found}): records removed or reordered"
            )
        } else {
            format!(
                "found seq {found} where seq {seq} was expected: records duplicated or reordered"
            )
        });
    }
    let prev = record
        .get("prev")
        .and_then(Value::as_str)
        .ok_or("no prev")?;
    let hash = record
        .get(HASH_KEY)
        .and_then(Value::as_str)
        .ok_or("no hash")?;
    if !is_hash_hex(prev) || !is_hash_hex(hash) {
        return Err("prev or hash is not 64 lowercase hex digits".into());
    }
    if render_line(&record).as_bytes() != bytes.as_slice() {
        return Err(
            "line is not in canonical form: bytes were changed (whitespace, key order or escaping)"
                .into(),
        );
    }
    if record_hash(&record) != hash {
        return Err("hash does not match the record's content: the record was changed".into());
    }
    let expected_prev = head.unwrap_or(GENESIS);
    if prev != expected_prev {
        return Err(match seq {
            0 => "header prev is not 64 zeros".to_string(),
            _ => format!(
                "prev does not match the hash of seq {}: that record was changed, or records were removed or inserted",
                seq - 1
            ),
        });
    }
    if ended {
        return Err("record after the end record: appended after the run finished".into());
    }
    let hash = hash.to_string();
    let mut body = record.clone();
    for key in ["seq", "prev", HASH_KEY] {
        body.shift_remove(key);
    }
    let typed: Record = serde_json::from_value(Value::Object(body))
        .map_err(|e| format!("not a valid record: {e}"))?;
    let is_end = match (&typed, seq) {
        (Record::Header(h), 0) if !(OLDEST_FORMAT..=FORMAT).contains(&h.format) => {
            return Err(format!(
                "unsupported trace format {} (this zamburak reads formats {OLDEST_FORMAT} to {FORMAT})",
                h.format
            ));
        }
        (Record::Header(_), 0) => false,
        (_, 0) => {
            return Err(format!(
                "first record is a {} record, not a header",
                typed.kind()
            ));
        }
        (Record::Header(_), _) => return Err("duplicate header: only seq 0 may be a header".into()),
        (Record::End(_), _) => true,
        _ => false,
    };
    Ok(Checked {
        record,
        hash,
        is_end,
    })
}
/// Every record of a trace as JSON, in file order, once the whole chain has checked.
///
/// Fails with [`TraceError::Broken`] when the trace does not verify. An incomplete trace (no `end` record) is
/// returned: a viewer shows interrupted and suspended runs too; [`verify`] says which.
pub fn read(path: &Path) -> Result<Vec<Value>, TraceError> {
    let io_err = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let mut out = Vec::new();
    let report = check(BufReader::new(file), |record| {
        out.push(Value::Object(record))
    })
    .map_err(io_err)?;
    match report.broken {
        Some(broken) => Err(TraceError::Broken(broken)),
        None => Ok(out),
    }
}
