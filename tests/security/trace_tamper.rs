//! Tampering with a real trace: every change must be reported, naming the record it hit.
//!
//! The exhaustive loops use the library on bytes in memory; a few cases go through `zamburak verify`. Hashes
//! for forged records are computed here with an independent canonicaliser, not the library's.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{Map, Value, json};
use zamburak::label::LabelView;
use zamburak::trace::record::{
    Approval, ArgRecord, Call, CallResult, End, Header, PlanError, Record, VerifierUse,
};
use zamburak::trace::verify::{VerifyReport, verify_reader};
use zamburak::trace::{TraceError, TraceWriter};

const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn view(integrity: &str, tags: &[&str], readers: Option<&[&str]>, sources: &[&str]) -> LabelView {
    let strings = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    LabelView {
        integrity: integrity.into(),
        verified: vec![],
        tags: strings(tags),
        readers: readers.map(strings),
        sources: strings(sources),
    }
}

/// A trace with every record type, strings that need escaping, and a non-ASCII plan.
struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    head: String,
    bytes: Vec<u8>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.zjson");
    let plan = "mail = get_email(id=2)\nto = check_addr(mail[\"from\"])  # café \u{2603}\nsend_email(to=to, body=\"hi\\n\")\n";
    let header = Header::new(plan, "sha256:abc".into(), "strict");
    let mut w = TraceWriter::create(&path, header).unwrap();
    let trusted = view("trusted", &[], None, &[]);
    let secret = view(
        "untrusted",
        &["PRIVATE"],
        Some(&["bob@example.com"]),
        &["get_email#1"],
    );
    let records = vec![
        Record::Call(Call {
            call_id: 1,
            line: 1,
            tool: "get_email".into(),
            args: vec![ArgRecord {
                name: "id".into(),
                elements: None,
                label: trusted.clone(),
                digest: "sha256:11".into(),
                preview: Some(json!(2)),
            }],
            pc: trusted.clone(),
            decision: "allow".into(),
            rule: "tools.get_email".into(),
            reason: "read tool, trusted arguments".into(),
            before_run: false,
            tool_sha256: None,
            on_approval: None,
            remembered: Vec::new(),
        }),
        Record::Result(CallResult {
            call_id: 1,
            tool: "get_email".into(),
            label: secret.clone(),
            digest: "sha256:22".into(),
            preview: None,
            scanned: Vec::new(),
        }),
        Record::Verifier(VerifierUse {
            call_id: 1,
            verifier: "check_addr".into(),
            line: 2,
            ok: true,
            label: secret.clone(),
        }),
        Record::Call(Call {
            call_id: 2,
            line: 3,
            tool: "send_email".into(),
            args: vec![
                ArgRecord {
                    name: "to".into(),
                    elements: None,
                    label: secret.clone(),
                    digest: "sha256:33".into(),
                    preview: None,
                },
                ArgRecord {
                    name: "body".into(),
                    elements: None,
                    label: trusted.clone(),
                    digest: "sha256:44".into(),
                    preview: Some(
                        json!({"text": "hi\n\"quoted\" \u{e9}", "n": [1, 2.5, null, true]}),
                    ),
                },
            ],
            pc: trusted.clone(),
            decision: "confirm".into(),
            rule: "tools.send_email.to".into(),
            reason: "recipient is untrusted".into(),
            before_run: false,
            tool_sha256: None,
            on_approval: None,
            remembered: Vec::new(),
        }),
        Record::Approval(Approval {
            call_id: 2,
            decision: "approved".into(),
            by: "alice".into(),
            at: "2025-01-02T03:04:05Z".into(),
            claim_digest: "sha256:55".into(),
        }),
        Record::Error(PlanError {
            line: Some(3),
            exc_type: "ValueError".into(),
            message: "<redacted: depends on get_email#1>".into(),
        }),
        Record::End(End {
            status: "error".into(),
            exit_code: 1,
            outcome: "error".into(),
        }),
    ];
    for rec in records {
        w.append(rec).unwrap();
    }
    let head = w.close().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    Fixture {
        _dir: dir,
        path,
        head,
        bytes,
    }
}

fn check(bytes: &[u8]) -> VerifyReport {
    verify_reader(bytes).unwrap()
}

/// Lines including their `\n`.
fn lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// Independent canonical JSON: rebuild every object with keys inserted in sorted order (the crate's
/// `preserve_order` then serialises them in that order).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&map[k]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        v => v.clone(),
    }
}

/// Hash a record (object without `hash`) the way docs/trace.md tells a user to.
fn independent_hash(record: &Map<String, Value>) -> String {
    let mut without = record.clone();
    without.shift_remove("hash");
    let text = serde_json::to_string(&sorted(&Value::Object(without))).unwrap();
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// A line in the writer's layout: seq, prev, type, other keys sorted, hash; all nested objects sorted.
fn forge_line(mut record: Map<String, Value>) -> Vec<u8> {
    let hash = independent_hash(&record);
    record.shift_remove("hash");
    let mut out = Map::new();
    for k in ["seq", "prev", "type"] {
        if let Some(v) = record.shift_remove(k) {
            out.insert(k.into(), v);
        }
    }
    let Value::Object(rest) = sorted(&Value::Object(record)) else {
        unreachable!()
    };
    out.extend(rest);
    out.insert("hash".into(), Value::String(hash));
    let mut line = serde_json::to_vec(&Value::Object(out)).unwrap();
    line.push(b'\n');
    line
}

fn parse(line: &[u8]) -> Map<String, Value> {
    serde_json::from_slice(line).unwrap()
}

fn assert_broken_at(report: &VerifyReport, seq: u64, context: &str) {
    let broken = report
        .broken
        .as_ref()
        .unwrap_or_else(|| panic!("{context}: not reported: {report:?}"));
    assert_eq!(broken.seq, seq, "{context}: {broken:?}");
    assert_eq!(broken.line as u64, seq + 1, "{context}: {broken:?}");
    assert!(!report.is_ok());
}

fn zamburak_verify(path: &Path) -> assert_cmd::assert::Assert {
    Command::cargo_bin("zamburak")
        .unwrap()
        .arg("verify")
        .arg(path)
        .assert()
}

#[test]
fn intact_trace_verifies_and_cli_prints_the_writers_head() {
    let f = fixture();
    let report = check(&f.bytes);
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(report.records, 8);
    assert_eq!(report.head.as_deref(), Some(f.head.as_str()));

    let out = zamburak_verify(&f.path).code(0).get_output().stdout.clone();
    let out = String::from_utf8(out).unwrap();
    assert_eq!(out.trim_end(), format!("ok: 8 records, head {}", f.head));
}

#[test]
fn every_line_hash_matches_an_independent_computation() {
    let f = fixture();
    let mut prev = GENESIS.to_string();
    for (i, line) in lines(&f.bytes).iter().enumerate() {
        let record = parse(line);
        assert_eq!(record["seq"], json!(i), "line {i}");
        assert_eq!(record["prev"], json!(prev), "line {i}");
        let hash = independent_hash(&record);
        assert_eq!(record["hash"], json!(hash), "line {i}");
        // The writer's bytes are exactly the documented layout.
        assert_eq!(forge_line(record), *line, "line {i}");
        prev = hash;
    }
    assert_eq!(prev, f.head);
}

#[test]
fn every_flipped_byte_is_caught_at_its_record() {
    let f = fixture();
    // Record index of every byte: a line's `\n` belongs to that line.
    let mut owner = Vec::with_capacity(f.bytes.len());
    for (i, line) in lines(&f.bytes).iter().enumerate() {
        owner.extend(std::iter::repeat_n(i as u64, line.len()));
    }
    for mask in [0x01u8, 0x20, 0x80] {
        for offset in 0..f.bytes.len() {
            let mut bytes = f.bytes.clone();
            bytes[offset] ^= mask;
            let report = check(&bytes);
            assert_broken_at(
                &report,
                owner[offset],
                &format!("mask {mask:#x} offset {offset}"),
            );
        }
    }
}

#[test]
fn every_deleted_line_is_caught() {
    let f = fixture();
    let all = lines(&f.bytes);
    for i in 0..all.len() {
        let mut kept = all.clone();
        kept.remove(i);
        let report = check(&kept.concat());
        if i + 1 == all.len() {
            // Cutting the end record leaves a chain that checks but cannot prove its tail: not ok.
            assert_eq!(report.broken, None);
            assert!(!report.complete);
            assert!(!report.is_ok());
        } else {
            assert_broken_at(&report, i as u64, &format!("deleted line {i}"));
            assert!(report.broken.unwrap().why.contains("missing"));
        }
    }
}

#[test]
fn every_adjacent_swap_is_caught() {
    let f = fixture();
    let all = lines(&f.bytes);
    for i in 0..all.len() - 1 {
        let mut swapped = all.clone();
        swapped.swap(i, i + 1);
        assert_broken_at(&check(&swapped.concat()), i as u64, &format!("swap {i}"));
    }
}

#[test]
fn every_truncation_is_caught() {
    let f = fixture();
    let ends: Vec<usize> = lines(&f.bytes)
        .iter()
        .scan(0, |acc, l| {
            *acc += l.len();
            Some(*acc)
        })
        .collect();
    for len in 0..f.bytes.len() {
        let report = check(&f.bytes[..len]);
        let whole_lines = ends.iter().filter(|&&e| e <= len).count();
        if len == 0 {
            assert_broken_at(&report, 0, "empty file");
        } else if ends.contains(&len) {
            assert_eq!(report.broken, None, "cut at boundary {len}");
            assert_eq!(report.records, whole_lines);
            assert!(!report.complete && !report.is_ok(), "cut at boundary {len}");
        } else {
            assert_broken_at(&report, whole_lines as u64, &format!("cut at {len}"));
            assert!(report.broken.unwrap().why.contains("truncated"));
        }
    }
}

#[test]
fn cli_reports_truncation_and_incomplete_trace() {
    let f = fixture();
    let all = lines(&f.bytes);
    let mid = f.bytes.len() - all.last().unwrap().len() / 2;
    std::fs::write(&f.path, &f.bytes[..mid]).unwrap();
    zamburak_verify(&f.path)
        .code(1)
        .stdout(predicates::str::starts_with(
            "broken at seq 7 (line 8): truncated",
        ));

    // Intact but without its end record: an interrupted run, with a code of its own (#39).
    std::fs::write(&f.path, all[..7].concat()).unwrap();
    zamburak_verify(&f.path)
        .code(5)
        .stdout(predicates::str::starts_with(
            "incomplete (no end record): 7 records check",
        ));
    let out = Command::cargo_bin("zamburak")
        .unwrap()
        .arg("view")
        .arg(&f.path)
        .arg("--export")
        .arg(f.path.with_extension("html"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "warning: the trace is incomplete: its 7 records check but it has no end record"
        ),
        "{stderr}"
    );
}

/// #39: a file that is not a trace is not reported as tampered: one line, exit 2, no verdict on a chain, and
/// `view` writes no page. A trace cut inside its first line is still a broken trace.
#[test]
fn a_file_that_is_not_a_trace_is_said_to_be_one_and_shown_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("notatrace.yaml", &b"tools:\n  send_email: {}\n"[..]),
        ("other.json", &b"{\"type\":\"call\",\"seq\":0}\n"[..]),
        ("empty.zjson", &b""[..]),
        ("picture.png", &b"\x89PNG\r\n\x1a\n\x00\x00"[..]),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = Command::cargo_bin("zamburak")
            .unwrap()
            .arg("verify")
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(out.stdout.is_empty(), "{name}: no verdict on a chain");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.starts_with(&format!(
                "error: {} is not a Zamburak trace (",
                path.display()
            )),
            "{name}: {stderr}"
        );
        let html = path.with_extension("html");
        let out = Command::cargo_bin("zamburak")
            .unwrap()
            .arg("view")
            .arg(&path)
            .arg("--export")
            .arg(&html)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(!html.exists(), "{name}: no page written");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.contains("is not a Zamburak trace"),
            "{name}: {stderr}"
        );
    }
    // A real trace cut after its first bytes, and one whose header was edited, are broken traces (exit 1).
    let f = fixture();
    std::fs::write(&f.path, &f.bytes[..4]).unwrap();
    zamburak_verify(&f.path)
        .code(1)
        .stdout(predicates::str::starts_with(
            "broken at seq 0 (line 1): truncated",
        ));
    let mut bytes = f.bytes.clone();
    let at = bytes.windows(6).position(|w| w == b"strict").unwrap();
    bytes[at] = b'S';
    std::fs::write(&f.path, &bytes).unwrap();
    zamburak_verify(&f.path)
        .code(1)
        .stdout(predicates::str::starts_with("broken at seq 0 (line 1): "));
}

#[test]
fn forged_record_after_end_is_caught_even_with_a_correct_hash() {
    let f = fixture();
    let mut forged = Map::new();
    forged.insert("seq".into(), json!(8));
    forged.insert("prev".into(), json!(f.head));
    forged.insert("type".into(), json!("approval"));
    forged.insert("call_id".into(), json!(2));
    forged.insert("decision".into(), json!("approved"));
    forged.insert("by".into(), json!("mallory"));
    forged.insert("at".into(), json!("2025-01-02T03:04:06Z"));
    forged.insert("claim_digest".into(), json!("sha256:55"));
    let mut bytes = f.bytes.clone();
    bytes.extend(forge_line(forged));
    let report = check(&bytes);
    assert_broken_at(&report, 8, "appended after end");
    assert!(
        report
            .broken
            .as_ref()
            .unwrap()
            .why
            .contains("after the end")
    );

    std::fs::write(&f.path, &bytes).unwrap();
    zamburak_verify(&f.path)
        .code(1)
        .stdout(predicates::str::starts_with(
            "broken at seq 8 (line 9): record after the end record",
        ));
}

#[test]
fn rechained_record_is_caught_by_the_next_prev() {
    let f = fixture();
    let all = lines(&f.bytes);
    for k in 0..all.len() {
        let mut record = parse(&all[k]);
        // A change an attacker wants: the decision, the outcome, or the plan.
        let (key, new) = match record["type"].as_str().unwrap() {
            "header" => ("plan", json!("send_email(to=\"mallory@evil.test\")\n")),
            "call" => ("decision", json!("deny")),
            "end" => ("outcome", json!("allow")),
            "error" => ("message", json!("forged")),
            "approval" => ("by", json!("mallory")),
            _ => ("call_id", json!(99)),
        };
        record.insert(key.into(), new);
        let mut tampered = all.clone();
        tampered[k] = forge_line(record);
        let report = check(&tampered.concat());
        if k + 1 < all.len() {
            assert_broken_at(&report, k as u64 + 1, &format!("re-chained {k}"));
            assert!(report.broken.unwrap().why.contains("prev"));
        } else {
            // The last record has no successor: the chain checks, with a different head. Comparing the head
            // with the one the run printed is what catches this (docs/trace.md).
            assert!(report.is_ok());
            assert_ne!(report.head.as_deref(), Some(f.head.as_str()));
        }
    }
}

#[test]
fn fully_rechained_duplicate_header_is_caught() {
    let f = fixture();
    let all = lines(&f.bytes);
    let mut out = vec![all[0].clone()];
    let mut prev = parse(&all[0])["hash"].as_str().unwrap().to_string();
    let mut inserted = parse(&all[0]);
    inserted.insert("seq".into(), json!(1));
    let sources = std::iter::once(inserted).chain(all[1..].iter().enumerate().map(|(i, l)| {
        let mut r = parse(l);
        r.insert("seq".into(), json!(i + 2));
        r
    }));
    for mut r in sources {
        r.insert("prev".into(), json!(prev));
        let line = forge_line(r);
        prev = parse(&line)["hash"].as_str().unwrap().to_string();
        out.push(line);
    }
    let report = check(&out.concat());
    assert_broken_at(&report, 1, "duplicate header");
    assert!(report.broken.unwrap().why.contains("duplicate header"));
}

#[test]
fn reformatted_lines_are_caught_though_they_parse_the_same() {
    let f = fixture();
    let all = lines(&f.bytes);
    let text = String::from_utf8(all[2].clone()).unwrap();
    let variants = [
        text.replacen(",", ", ", 1),
        text.replacen("\n", " \n", 1),
        text.replacen("\n", "\r\n", 1),
        // Same JSON value, key order changed: the hash still matches, the bytes do not.
        {
            let mut m = parse(&all[2]);
            let hash = m.shift_remove("hash").unwrap();
            let mut reordered = Map::new();
            reordered.insert("hash".into(), hash);
            reordered.extend(m);
            format!("{}\n", serde_json::to_string(&reordered).unwrap())
        },
        // An escape spelled differently.
        text.replacen("\"type\"", "\"typ\\u0065\"", 1),
    ];
    for v in variants {
        let mut tampered = all.clone();
        tampered[2] = v.clone().into_bytes();
        assert_broken_at(&check(&tampered.concat()), 2, &v);
    }
}

#[test]
fn junk_lines_are_caught() {
    let f = fixture();
    let all = lines(&f.bytes);
    for junk in [
        &b"\n"[..],
        b"not json\n",
        b"[1,2]\n",
        b"{}\n",
        b"\xff\xfe\n",
    ] {
        let mut tampered = all.clone();
        tampered.insert(3, junk.to_vec());
        assert_broken_at(
            &check(&tampered.concat()),
            3,
            &String::from_utf8_lossy(junk),
        );
    }
    // A trace that starts with anything but a header, and one with an unknown record type.
    assert_broken_at(&check(&all[1..].concat()), 0, "no header");
}

#[test]
fn oversized_line_is_reported_not_loaded() {
    let f = fixture();
    let all = lines(&f.bytes);
    let mut bytes = all[..2].concat();
    bytes.extend(std::iter::repeat_n(b'a', 16 * 1024 * 1024 + 1));
    bytes.push(b'\n');
    let report = check(&bytes);
    assert_broken_at(&report, 2, "huge line");
    assert!(report.broken.unwrap().why.contains("longer than"));
}

#[test]
fn unreadable_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    zamburak_verify(&dir.path().join("missing.zjson"))
        .code(2)
        .stderr(predicates::str::contains("cannot read"));
    // A directory cannot be read as a trace either.
    zamburak_verify(dir.path()).code(2);
}

#[test]
fn cli_names_the_record_of_a_flipped_byte() {
    let f = fixture();
    let all = lines(&f.bytes);
    let mut bytes = f.bytes.clone();
    // A byte in the middle of record 4 (the send_email call).
    let offset = all[..4].iter().map(Vec::len).sum::<usize>() + all[4].len() / 2;
    bytes[offset] ^= 0x01;
    std::fs::write(&f.path, &bytes).unwrap();
    zamburak_verify(&f.path)
        .code(1)
        .stdout(predicates::str::starts_with("broken at seq 4 (line 5): "));
}

#[test]
fn read_and_open_append_refuse_a_broken_trace() {
    let f = fixture();
    let records = zamburak::trace::read(&f.path).unwrap();
    assert_eq!(records.len(), 8);
    assert_eq!(records[7]["type"], "end");

    let mut bytes = f.bytes.clone();
    let n = bytes.len();
    bytes[n - 10] ^= 0x01;
    std::fs::write(&f.path, &bytes).unwrap();
    assert!(matches!(zamburak::trace::read(&f.path), Err(TraceError::Broken(b)) if b.seq == 7));
    // Without its end record the trace could be continued, but not with a broken line.
    let all = lines(&f.bytes);
    let mut cut = all[..7].concat();
    cut.extend_from_slice(&all[7][..5]);
    std::fs::write(&f.path, &cut).unwrap();
    assert!(
        matches!(TraceWriter::open_append(&f.path, zamburak::digest::DigestKey::fresh().unwrap()), Err(TraceError::Broken(b)) if b.seq == 7)
    );
}
