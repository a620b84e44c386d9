//! The owner's value store (`PLAN.zvalues`, beside the trace): the values the trace only names by digest,
//! kept so that `zamburak view --reveal` can show the user their own data. See `docs/view.md`.
//!
//! The trace stays shareable because it never holds a private value; this file holds them all in clear, so
//! it is created readable and writable by its owner only (mode 0600 on Unix) and is never read by
//! `--export`. Each line is `{"digest": "sha256:…", "value": …}`. Reading it trusts nothing: a value is kept
//! only under the digest it actually has (recomputed here), so an edited store can hide a value but never
//! show a different one in its place.
//!
//! ```
//! use serde_json::json;
//! use zamburak::trace::values::{ValueStore, load};
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("plan.zvalues");
//! let mut store = ValueStore::create(&path).unwrap();
//! let digest = store.keep(&json!("hello")).unwrap();
//! let values = load(&path).unwrap();
//! assert_eq!(values.values.get(&digest), Some(&json!("hello")));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::trace::TraceError;
use crate::trace::canonical::canonical;
use crate::trace::reader::{Lines, RawLine};
use crate::trace::redact::digest;

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
    kept: BTreeSet<String>,
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
    /// A new, empty store (a previous run's store at `path` is replaced, as its trace is).
    pub fn create(path: &Path) -> std::io::Result<ValueStore> {
        Ok(ValueStore {
            file: open_private(path, true)?,
            kept: BTreeSet::new(),
        })
    }

    /// The store of a run that continues (after an approval): appended to.
    pub fn open_append(path: &Path) -> std::io::Result<ValueStore> {
        Ok(ValueStore {
            file: open_private(path, false)?,
            kept: BTreeSet::new(),
        })
    }

    /// Keeps `value` and returns its digest (the trace's). A value kept before in this process is not
    /// written again.
    pub fn keep(&mut self, value: &Value) -> std::io::Result<String> {
        let d = digest(value);
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

/// A store as read back: values by their recomputed digest, and what could not be used.
#[derive(Debug, Default)]
pub struct Loaded {
    pub values: BTreeMap<String, Value>,
    pub problems: Vec<String>,
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
        let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(&bytes) else {
            out.problems
                .push(format!("line {n} of the value store is not a record"));
            continue;
        };
        let (Some(Value::String(claimed)), Some(value)) = (o.get("digest"), o.get("value")) else {
            out.problems
                .push(format!("line {n} of the value store is not a record"));
            continue;
        };
        // Kept only under the digest it has: a store edited to put another value under a trace's digest
        // shows nothing for it, never the other value.
        if digest(value) == *claimed {
            out.values.insert(claimed.clone(), value.clone());
        } else {
            mismatched += 1;
        }
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
        let mut s = ValueStore::create(&path).unwrap();
        let a = s.keep(&json!({"b": 1, "a": "x"})).unwrap();
        let b = s.keep(&json!("secret")).unwrap();
        s.keep(&json!("secret")).unwrap();
        drop(s);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "each value once");
        // Swap the values: neither digest shows the other's value.
        let forged = text.replace("\"secret\"", "\"forged\"");
        std::fs::write(&path, forged + "not json\n").unwrap();
        let l = load(&path).unwrap();
        assert_eq!(l.values.get(&a), Some(&json!({"a": "x", "b": 1})));
        assert_eq!(l.values.get(&b), None);
        assert_eq!(l.problems.len(), 2, "{:?}", l.problems);
    }

    #[cfg(unix)]
    #[test]
    fn the_store_is_private_to_its_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.zvalues");
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        ValueStore::open_append(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
