//! Mail over a real Maildir (`cur/`, `new/`, `tmp/`), parsed with `mail-parser`; sending builds an RFC 5322
//! message with `mail-builder` and delivers it Maildir-style (write in `tmp/`, rename into `new/`).
//!
//! Messages are ordered by delivery time, newest first, never by their `Date:` header: a sender writes the
//! header, so a mail dated in the far future would stay at the front of every `read_inbox(limit=N)` window.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use mail_parser::{Address, MessageParser};
use serde_json::{Value, json};

use super::ToolError;

/// Messages larger than this are skipped: a mailbox is attacker-fillable.
const MAX_MESSAGE_BYTES: u64 = 10 << 20;

struct Entry {
    id: String,
    path: PathBuf,
    /// Delivery time, Unix seconds: see [`delivered_at`].
    delivered: i64,
}

/// When a message was delivered: the time a Maildir unique name starts with (the Maildir specification has
/// the delivery agent put the delivery time there), else the file's modification time (which delivery
/// agents such as Dovecot keep as the received date). The sender sets neither. The name comes first because
/// copying a Maildir (or checking it out of git) resets modification times but keeps names.
fn delivered_at(name: &str, path: &Path) -> i64 {
    let digits: String = name.chars().take_while(char::is_ascii_digit).collect();
    let from_name = name[digits.len()..]
        .starts_with('.')
        .then(|| digits.parse::<i64>().ok())
        .flatten();
    from_name.unwrap_or_else(|| {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_secs()).ok())
            .unwrap_or(0)
    })
}

fn entries(maildir: &Path) -> Result<Vec<Entry>, ToolError> {
    let mut out = Vec::new();
    let mut found_dir = false;
    for sub in ["cur", "new"] {
        let Ok(rd) = std::fs::read_dir(maildir.join(sub)) else {
            continue;
        };
        found_dir = true;
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let id = name.split(":2,").next().unwrap_or(&name).to_string();
            let path = e.path();
            let delivered = delivered_at(&name, &path);
            out.push(Entry {
                id,
                path,
                delivered,
            });
        }
    }
    if !found_dir {
        return Err(ToolError::Refused(
            "the configured Maildir has no cur/ or new/ folder",
        ));
    }
    Ok(out)
}

fn addresses(a: Option<&Address<'_>>) -> Vec<String> {
    a.map(|a| {
        a.iter()
            .filter_map(|x| x.address().map(str::to_string))
            .collect()
    })
    .unwrap_or_default()
}

/// The `Date:` header as RFC 3339, or `""` when it is missing or not a real date (never a made-up one).
fn header_date(d: Option<&mail_parser::DateTime>) -> String {
    d.filter(|d| d.is_valid())
        .map(|d| d.to_rfc3339())
        // `is_valid` accepts 31 February; a full parse does not.
        .filter(|s| s.parse::<jiff::Timestamp>().is_ok())
        .unwrap_or_default()
}

/// RFC 3339 UTC of a delivery time.
fn rfc3339(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// Parses one message file into the e-mail record; `None` when unreadable or not a message.
fn load(e: &Entry) -> Option<Value> {
    let meta = std::fs::metadata(&e.path).ok()?;
    if meta.len() > MAX_MESSAGE_BYTES {
        return None;
    }
    let bytes = std::fs::read(&e.path).ok()?;
    record(&bytes, &e.id, e.delivered)
}

/// The e-mail record of one RFC 5322 message (`None`: not a message): what the plan sees. Public for the
/// fuzzer (`fuzz/fuzz_targets/mail_message.rs`), which feeds it arbitrary bytes.
pub fn record(bytes: &[u8], id: &str, delivered: i64) -> Option<Value> {
    let msg = MessageParser::default().parse(bytes)?;
    let body = msg.body_text(0).map(|b| b.to_string()).unwrap_or_default();
    Some(json!({
        "id": id,
        "from": addresses(msg.from()).into_iter().next().unwrap_or_default(),
        "to": addresses(msg.to()),
        "cc": addresses(msg.cc()),
        "subject": msg.subject().unwrap_or_default(),
        // What the sender wrote: shown, never used to order.
        "date": header_date(msg.date()),
        "received": rfc3339(delivered),
        "body": body,
    }))
}

fn all(maildir: &Path) -> Result<Vec<Value>, ToolError> {
    let mut entries = entries(maildir)?;
    // Newest delivered first; ties by id so the order never depends on the file system.
    entries.sort_by(|a, b| b.delivered.cmp(&a.delivered).then_with(|| a.id.cmp(&b.id)));
    Ok(entries.iter().filter_map(load).collect())
}

/// The `limit` most recently delivered messages.
pub fn list(maildir: &Path, limit: usize) -> Result<Value, ToolError> {
    Ok(Value::Array(
        all(maildir)?.into_iter().take(limit).collect(),
    ))
}

/// One message by id.
pub fn get(maildir: &Path, id: &str) -> Result<Value, ToolError> {
    let e = entries(maildir)?
        .into_iter()
        .find(|e| e.id == id)
        .ok_or(ToolError::NotFound)?;
    load(&e).ok_or(ToolError::NotFound)
}

/// Messages whose sender, subject or body contains `query` (case-insensitive).
pub fn search(maildir: &Path, query: &str) -> Result<Value, ToolError> {
    let q = query.to_lowercase();
    let hits = all(maildir)?
        .into_iter()
        .filter(|m| {
            ["from", "subject", "body"]
                .iter()
                .any(|k| m[k].as_str().is_some_and(|s| s.to_lowercase().contains(&q)))
        })
        .collect();
    Ok(Value::Array(hits))
}

fn well_formed_address(a: &str) -> bool {
    let Some((local, domain)) = a.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.is_empty()
        && !a
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || ",;<>()\"\\".contains(c))
        && !local.contains('@')
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The header a draft carries its provenance in: why Zamburak drafted it instead of sending it, where the
/// person who may send it from their mail client sees it (docs/approvals.md, "Drafts and commits").
pub const DRAFT_HEADER: &str = "X-Zamburak-Draft";

/// Writes a message into `folder` (a Maildir), as sent or, with why, as a draft.
pub fn send(
    folder: &Path,
    from: &str,
    to: &[String],
    subject: &str,
    body: &str,
    draft: Option<&str>,
) -> Result<Value, ToolError> {
    if to.is_empty() || !to.iter().all(|a| well_formed_address(a)) || !well_formed_address(from) {
        return Err(ToolError::Refused(
            "a recipient is not a single well-formed e-mail address",
        ));
    }
    if subject.contains(['\r', '\n']) {
        return Err(ToolError::Refused(
            "the subject may not contain line breaks",
        ));
    }
    for sub in ["tmp", "new", "cur"] {
        std::fs::create_dir_all(folder.join(sub)).map_err(|_| ToolError::Io)?;
    }
    let now = jiff::Timestamp::now();
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let id = format!(
        "{}.M{}P{}Q{n}.zamburak",
        now.as_second(),
        now.subsec_microsecond(),
        std::process::id()
    );
    let mut builder = mail_builder::MessageBuilder::new()
        .from(from.to_string())
        .to(to.to_vec())
        .subject(subject.to_string())
        .date(now.as_second())
        .message_id(format!("{id}@zamburak.invalid"));
    if let Some(why) = draft {
        // Plain ASCII on one line, as written (a reader of the raw message sees it unencoded), so a note
        // can never end the header block early; under the 998 characters a line may hold.
        let why: String = why
            .chars()
            .map(|c| {
                if c.is_ascii() && !c.is_ascii_control() {
                    c
                } else {
                    ' '
                }
            })
            .take(900)
            .collect();
        builder = builder.header(DRAFT_HEADER, mail_builder::headers::raw::Raw::new(why));
    }
    let message = builder
        .text_body(body.to_string())
        .write_to_vec()
        .map_err(|_| ToolError::Io)?;
    let tmp = folder.join("tmp").join(&id);
    let digest = crate::digest::sha256_bytes(&message);
    std::fs::write(&tmp, message).map_err(|_| ToolError::Io)?;
    std::fs::rename(&tmp, folder.join("new").join(&id)).map_err(|_| ToolError::Io)?;
    if draft.is_some() {
        // The digest names the exact draft a reviewer saw; `commit` moves it only if it is unchanged.
        return Ok(json!({"id": id, "status": "drafted", "sha256": digest}));
    }
    Ok(json!({"id": id, "status": "sent"}))
}

/// The file of draft `id` in `drafts`. Ids are Maildir file names: no path separators, no leading dot.
fn draft_file(drafts: &Path, id: &str) -> Result<PathBuf, ToolError> {
    if id.is_empty() || id.starts_with('.') || id.contains(['/', '\\', '\0']) || id.contains("..") {
        return Err(ToolError::Refused("not a draft id"));
    }
    ["new", "cur"]
        .iter()
        .map(|sub| drafts.join(sub).join(id))
        .find(|p| p.symlink_metadata().is_ok_and(|m| m.is_file()))
        .ok_or(ToolError::Refused("no such draft"))
}

/// Draft `id` as `commit` would send it, for the person approving the commit: its recipients, subject and
/// body, and whether its bytes have the digest `sha256` (when not, committing it is refused).
pub fn draft_view(drafts: &Path, id: &str, sha256: &str) -> Result<Value, ToolError> {
    let path = draft_file(drafts, id)?;
    let bytes = std::fs::read(&path).map_err(|_| ToolError::Io)?;
    let msg = MessageParser::default()
        .parse(&bytes[..])
        .ok_or(ToolError::Refused("the draft is not an e-mail message"))?;
    Ok(json!({
        "to": addresses(msg.to()),
        "cc": addresses(msg.cc()),
        "subject": msg.subject().unwrap_or_default(),
        "body": msg.body_text(0).map(|b| b.to_string()).unwrap_or_default(),
        "digest_matches": crate::digest::sha256_bytes(&bytes) == sha256,
    }))
}

/// Moves draft `id` from `drafts` into `outbox`, if its bytes still have the digest `sha256` (the one
/// reviewed). Ids are Maildir file names: no path separators, no leading dot.
pub fn commit(drafts: &Path, outbox: &Path, id: &str, sha256: &str) -> Result<Value, ToolError> {
    let path = draft_file(drafts, id)?;
    let bytes = std::fs::read(&path).map_err(|_| ToolError::Io)?;
    if crate::digest::sha256_bytes(&bytes) != sha256 {
        return Err(ToolError::Refused(
            "the draft changed since it was reviewed; review it again",
        ));
    }
    for sub in ["tmp", "new", "cur"] {
        std::fs::create_dir_all(outbox.join(sub)).map_err(|_| ToolError::Io)?;
    }
    // Written as a new file first, so an outbox on another file system works and a crash leaves the draft.
    let tmp = outbox.join("tmp").join(id);
    std::fs::write(&tmp, &bytes).map_err(|_| ToolError::Io)?;
    std::fs::rename(&tmp, outbox.join("new").join(id)).map_err(|_| ToolError::Io)?;
    std::fs::remove_file(&path).map_err(|_| ToolError::Io)?;
    Ok(json!({"id": id, "status": "sent"}))
}
