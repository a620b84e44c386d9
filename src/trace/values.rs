//! The owner's value store (`PLAN.zvalues`, beside the trace): the values the trace only names by digest,
//! and the run's digest key, kept so that `zamburak view --reveal` can show the user their own data. See
//! `docs/view.md`.
//!
//! The trace stays shareable because it never holds a private value, and names each by a digest keyed with
//! a secret of the run (docs/semantics.md, "A shareable trace shares nothing private"); this file holds the
//! values in clear and that key, so it is created readable and writable by its owner only (mode 0600 on
//! Unix) and is never read by `--export`. Its first line is `{"key": "<hex>"}`, each other line
//! `{"digest": "hmac-sha256:…", "value": …}`. Reading it trusts nothing: a value is kept only under the
//! digest it actually has under the store's key (recomputed here), so an edited store can hide a value but
//! never show a different one in its place. A store without a key line was written before digests were
//! keyed (trace format 4 and older): its values are matched by their plain sha256, as they were then.
//!
//! ```
//! use serde_json::json;
//! use zamburak::digest::DigestKey;
//! use zamburak::trace::values::{ValueStore, load};
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("plan.zvalues");
//! let key = DigestKey::fresh().unwrap();
//! let mut store = ValueStore::create(&path, &key).unwrap();
//! let digest = store.keep(&json!("hello")).unwrap();
//! let values = load(&path).unwrap();
//! assert_eq!(values.values.get(&digest), Some(&json!("hello")));
//! assert_eq!(values.key, Some(key));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::digest::DigestKey;
use crate::trace::TraceError;
use crate::trace::canonical::canonical;
use crate::trace::reader::{Lines, RawLine};
use crate::trace::redact::{digest, keyed_digest};

/// Largest store read back; the rest is reported, not loaded.
pub const MAX_STORE_BYTES: u64 = 256 * 1024 * 1024;
/// Longest line read back.
const MAX_VALUE_LINE: usize = 16 * 1024 * 1024;

/// The store beside a trace: `plan.zjson` → `plan.zvalues`.
pub fn store_path(trace: &Path) -> PathBuf {
    trace.with_extension("zvalues")
}

/// Appends values to the store, each distinct value once.
#[derive(Debug)]
pub struct ValueStore {
    file: File,
    key: DigestKey,
    kept: BTreeSet<String>,
}

/// The first line of a store: the run's digest key.
fn key_line(key: &DigestKey) -> String {
    format!("{{\"key\":{}}}\n", Value::String(key.to_hex()))
}

fn open_private(path: &Path, truncate: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.create(true);
    if truncate {
        o.write(true).truncate(true);
    } else {
        o.append(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let file = o.open(path)?;
    // An existing file keeps its mode on open: tighten it too.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

impl ValueStore {
    /// A new store holding the run's digest key `key` and no value yet (a previous run's store at `path` is
    /// replaced, as its trace is).
    pub fn create(path: &Path, key: &DigestKey) -> std::io::Result<ValueStore> {
        let mut file = open_private(path, true)?;
        file.write_all(key_line(key).as_bytes())?;
        Ok(ValueStore {
            file,
            key: key.clone(),
            kept: BTreeSet::new(),
        })
    }

    /// The store of a run that continues (after an approval) under the same key: appended to.
    pub fn open_append(path: &Path, key: &DigestKey) -> std::io::Result<ValueStore> {
        Ok(ValueStore {
            file: open_private(path, false)?,
            key: key.clone(),
            kept: BTreeSet::new(),
        })
    }

    /// Keeps `value` and returns its digest (the trace's). A value kept before in this process is not
    /// written again.
    pub fn keep(&mut self, value: &Value) -> std::io::Result<String> {
        let d = keyed_digest(&self.key, value);
        self.keep_digested(&d, value)?;
        Ok(d)
    }

    /// [`ValueStore::keep`] for a value whose digest the caller has just computed (the trace writer has, for
    /// its record), so a large value is not hashed twice. A wrong digest only hides the value: `load`
    /// recomputes it.
    pub fn keep_digested(&mut self, d: &str, value: &Value) -> std::io::Result<()> {
        if self.kept.contains(d) {
            return Ok(());
        }
        let mut line = format!(
            "{{\"digest\":{},\"value\":{}}}",
            Value::String(d.to_string()),
            canonical(value)
        );
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.kept.insert(d.to_string());
        Ok(())
    }
}

/// A store as read back: values by their recomputed digest, the run's key, and what could not be used.
#[derive(Debug, Default)]
pub struct Loaded {
    pub values: BTreeMap<String, Value>,
    /// The run's digest key; `None` for a store written before digests were keyed.
    pub key: Option<DigestKey>,
    pub problems: Vec<String>,
}

/// What a store's line is.
enum Line {
    Key(DigestKey),
    Value(String, Value),
    Other,
}

fn parse_line(bytes: &[u8]) -> Line {
    let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(bytes) else {
        return Line::Other;
    };
    match (o.get("key"), o.get("digest"), o.get("value")) {
        (Some(Value::String(k)), None, None) if o.len() == 1 => {
            DigestKey::from_hex(k).map_or(Line::Other, Line::Key)
        }
        (None, Some(Value::String(d)), Some(v)) => Line::Value(d.clone(), v.clone()),
        _ => Line::Other,
    }
}

/// Reads a store. `Err` only when the file cannot be opened; everything else is a problem in the result.
pub fn load(path: &Path) -> Result<Loaded, TraceError> {
    let file = File::open(path).map_err(|source| TraceError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Loaded::default();
    if file.metadata().map(|m| m.len()).unwrap_or(0) > MAX_STORE_BYTES {
        out.problems.push(format!(
            "the value store is larger than {MAX_STORE_BYTES} bytes; only its start is read"
        ));
    }
    let mut lines = Lines::new(BufReader::new(file), MAX_VALUE_LINE);
    let mut n = 0usize;
    let mut read = 0u64;
    let mut mismatched = 0usize;
    loop {
        let bytes = match lines.next_line() {
            Ok(Some(RawLine::Complete(b))) => b,
            Ok(Some(RawLine::Unterminated(_))) => {
                out.problems
                    .push("the value store's last line is cut off".into());
                break;
            }
            Ok(Some(RawLine::TooLong)) => {
                out.problems
                    .push(format!("line {} of the value store is too long", n + 1));
                break;
            }
            Ok(None) => break,
            Err(e) => {
                out.problems
                    .push(format!("reading the value store stopped: {e}"));
                break;
            }
        };
        n += 1;
        read += bytes.len() as u64 + 1;
        if read > MAX_STORE_BYTES {
            break;
        }
        let (claimed, value) = match parse_line(&bytes) {
            // The key comes first, before any value it names; a key line anywhere else is not the run's.
            Line::Key(k) if n == 1 => {
                out.key = Some(k);
                continue;
            }
            Line::Value(d, v) => (d, v),
            Line::Key(_) | Line::Other => {
                out.problems
                    .push(format!("line {n} of the value store is not a record"));
                continue;
            }
        };
        // Kept only under the digest it has: a store edited to put another value under a trace's digest
        // shows nothing for it, never the other value.
        let actual = match &out.key {
            Some(k) => keyed_digest(k, &value),
            None => digest(&value),
        };
        if actual == claimed {
            out.values.insert(claimed, value);
        } else {
            mismatched += 1;
        }
    }
    if out.key.is_none() && !out.values.is_empty() {
        out.problems.push(
            "the value store has no digest key: it was written before digests were keyed (trace format 4 \
             or older), so its values are matched by plain sha256, and that trace's digests let whoever \
             holds it confirm a guess of a value; do not share it"
                .into(),
        );
    }
    if mismatched > 0 {
        out.problems.push(format!(
            "{mismatched} value(s) in the store do not match their digest and are not shown"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_store_that_cannot_be_opened_is_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none.zvalues");
        let e = load(&path).unwrap_err();
        assert!(
            matches!(&e, TraceError::Unreadable { path: p, source }
                if *p == path && source.kind() == std::io::ErrorKind::NotFound),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("cannot read "), "{e}");
    }

    #[test]
    fn a_value_is_shown_only_under_its_own_digest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.zvalues");
        let key = DigestKey::fresh().unwrap();
        let mut s = ValueStore::create(&path, &key).unwrap();
        let a = s.keep(&json!({"b": 1, "a": "x"})).unwrap();
        let b = s.keep(&json!("secret")).unwrap();
        s.keep(&json!("secret")).unwrap();
        drop(s);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 3, "the key, then each value once");
        // Swap the values: neither digest shows the other's value.
        let forged = text.replace("\"secret\"", "\"forged\"");
        std::fs::write(&path, forged + "not json\n").unwrap();
        let l = load(&path).unwrap();
        assert_eq!(l.values.get(&a), Some(&json!({"a": "x", "b": 1})));
        assert_eq!(l.values.get(&b), None);
        assert_eq!(l.problems.len(), 2, "{:?}", l.problems);
    }

    #[test]
    fn values_are_matched_under_the_stores_key_and_an_old_store_by_plain_sha256() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.zvalues");
        let key = DigestKey::fresh().unwrap();
        let mut s = ValueStore::create(&path, &key).unwrap();
        let d = s.keep(&json!("123456")).unwrap();
        drop(s);
        assert!(d.starts_with("hmac-sha256:"), "{d}");
        assert_ne!(d, digest(&json!("123456")));
        let l = load(&path).unwrap();
        assert_eq!(l.key.as_ref(), Some(&key));
        assert_eq!(l.values.get(&d), Some(&json!("123456")));
        assert!(l.problems.is_empty(), "{:?}", l.problems);

        // Another key on the first line: no value matches, none is shown.
        let text = std::fs::read_to_string(&path).unwrap();
        let other = DigestKey::fresh().unwrap();
        let swapped = text.replacen(&key.to_hex(), &other.to_hex(), 1);
        std::fs::write(&path, swapped).unwrap();
        let l = load(&path).unwrap();
        assert!(l.values.is_empty());
        assert_eq!(l.problems.len(), 1, "{:?}", l.problems);

        // A key line after the first is not the run's key; a line that is neither is not a record.
        let late = format!(
            "{}{{\"key\":\"{}\"}}\n",
            std::fs::read_to_string(&path).unwrap(),
            key.to_hex()
        );
        std::fs::write(&path, late).unwrap();
        let l = load(&path).unwrap();
        assert_eq!(l.key.as_ref(), Some(&other));
        assert!(
            l.problems.iter().any(|p| p.contains("line 3")),
            "{:?}",
            l.problems
        );

        // A store from before keyed digests: read as it was, by plain sha256, and said so.
        let plain = digest(&json!("123456"));
        std::fs::write(
            &path,
            format!("{{\"digest\":\"{plain}\",\"value\":\"123456\"}}\n"),
        )
        .unwrap();
        let l = load(&path).unwrap();
        assert_eq!(l.key, None);
        assert_eq!(l.values.get(&plain), Some(&json!("123456")));
        assert!(
            l.problems.iter().any(|p| p.contains("no digest key")),
            "{:?}",
            l.problems
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_store_is_private_to_its_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.zvalues");
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        ValueStore::open_append(&path, &DigestKey::fresh().unwrap()).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
