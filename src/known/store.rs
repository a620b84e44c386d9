//! The person's remembered values (docs/semantics.md, "Remembered values"): one JSON file private to the
//! user, sealed with a key kept beside it, so an edit outside Zamburak is detected and the file refused.
//!
//! Only the person writes it: `approve --remember`, the review queue's ticks and `zamburak known` are its
//! only writers. A run reads it, and only where the policy says `known(ROLE)`; the trace's header records
//! its digest ([`Store::digest`]).
//!
//! ```
//! use zamburak::known::store::{Entry, Store};
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("known.json");
//! let mut store = Store::open(&path).unwrap();
//! let entry = Entry::new("GB29NWBK60161331926819", "payee", "send_money", "recipient", "scope", "me", "alice", "ABCD-EFGH-JKLM", 90);
//! store.remember(entry);
//! store.save().unwrap();
//! let again = Store::open(&path).unwrap();
//! assert_eq!(again.entries().len(), 1);
//! // An edit outside Zamburak breaks the seal: the file is refused, not trusted.
//! let text = std::fs::read_to_string(&path).unwrap().replace("GB29", "GB30");
//! std::fs::write(&path, text).unwrap();
//! assert!(Store::open(&path).is_err());
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::digest::DigestKey;

/// The environment variable naming the store's file (tests, a second profile); else
/// `$XDG_DATA_HOME/zamburak/known.json`, else `~/.local/share/zamburak/known.json`.
pub const STORE_ENV: &str = "ZAMBURAK_KNOWN";

/// The format the file is written in.
const FORMAT: u64 = 1;

/// The most entries a store holds: a person ticks each one, so more is a file written by something else.
pub const MAX_ENTRIES: usize = 10_000;

/// The largest store file read (a bound on what a hostile file costs).
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// One remembered value, for one scope, user, role and tool argument.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The value in the canonical form the adapter sends ([`canonical`]).
    pub value: String,
    pub role: String,
    pub tool: String,
    pub arg: String,
    /// The policy's `known_scope`.
    pub scope: String,
    /// The policy's user (empty when it names none).
    pub user: String,
    /// Who remembered it, as the trace records deciders.
    pub by: String,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// Until when (RFC 3339, UTC).
    pub expires: String,
    /// The claim it was remembered from.
    pub claim: String,
}

impl Entry {
    /// An entry remembered now, lasting `days`.
    #[allow(
        clippy::too_many_arguments,
        reason = "an entry is these nine facts; a builder would only rename them"
    )]
    pub fn new(
        value: &str,
        role: &str,
        tool: &str,
        arg: &str,
        scope: &str,
        user: &str,
        by: &str,
        claim: &str,
        days: u32,
    ) -> Entry {
        let now = jiff::Timestamp::now();
        let expires = now
            .checked_add(jiff::SignedDuration::from_hours(24 * i64::from(days)))
            .unwrap_or(now);
        Entry {
            value: value.to_string(),
            role: role.to_string(),
            tool: tool.to_string(),
            arg: arg.to_string(),
            scope: scope.to_string(),
            user: user.to_string(),
            by: by.to_string(),
            at: now.to_string(),
            expires: expires.to_string(),
            claim: claim.to_string(),
        }
    }

    /// Whether it has expired at `now` (an expiry that does not parse has).
    pub fn expired(&self, now: jiff::Timestamp) -> bool {
        self.expires
            .parse::<jiff::Timestamp>()
            .ok()
            .is_none_or(|until| until <= now)
    }

    /// The day it was remembered, `YYYY-MM-DD`, as a claim shows it.
    pub fn day(&self) -> &str {
        self.at.get(..10).unwrap_or(&self.at)
    }
}

/// Where a value must have been remembered to count: a scope, a user, a role and the tool arguments the
/// role covers.
#[derive(Clone, Debug)]
pub struct Scope<'a> {
    pub scope: &'a str,
    pub user: &'a str,
    pub role: &'a str,
    pub args: &'a [(String, String)],
}

impl Scope<'_> {
    fn covers(&self, e: &Entry) -> bool {
        e.scope == self.scope
            && e.user == self.user
            && e.role == self.role
            && self.args.iter().any(|(t, a)| *t == e.tool && *a == e.arg)
    }
}

/// Why the store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read the remembered values in {path}: {why}")]
    Unreadable { path: String, why: String },
    #[error(
        "the remembered values in {path} were changed outside Zamburak ({why}), so none of them is trusted; \
         the file is JSON you may read, and `zamburak known forget --all` starts afresh"
    )]
    Edited { path: String, why: String },
    #[error("cannot write the remembered values to {path}: {why}")]
    Unwritable { path: String, why: String },
    #[error(
        "no place for remembered values: set ${STORE_ENV} to a file, or $HOME (they are kept in \
         ~/.local/share/zamburak/known.json)"
    )]
    NoPlace,
}

/// The file as written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: u64,
    entries: Vec<Entry>,
    /// HMAC-SHA256 of the entries' JSON under the key in `PATH.key`.
    seal: String,
}

/// The store, read and checked.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    entries: Vec<Entry>,
    /// `sha256:` of the file's bytes as read, or `none` when there was no file.
    digest: String,
    /// The sealing key, when the file (or its key) exists already.
    key: Option<DigestKey>,
}

/// The store's file: `$ZAMBURAK_KNOWN`, else under `$XDG_DATA_HOME` or `~/.local/share`.
pub fn default_path() -> Result<PathBuf, StoreError> {
    if let Some(p) = std::env::var_os(STORE_ENV).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|p| !p.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })
        .ok_or(StoreError::NoPlace)?;
    Ok(data.join("zamburak").join("known.json"))
}

/// The canonical form of a value as a store keeps it, or `None` for a value nobody remembers (a container,
/// `None`): a string as it is, except an `http`/`https` URL as the URL parser the web adapter uses writes it;
/// a number or a boolean as JSON writes it.
///
/// ```
/// use serde_json::json;
/// use zamburak::known::store::canonical;
/// assert_eq!(canonical(&json!("HTTPS://Example.COM/a/../b")).as_deref(), Some("https://example.com/b"));
/// assert_eq!(canonical(&json!("bob@example.com")).as_deref(), Some("bob@example.com"));
/// assert_eq!(canonical(&json!(100.5)).as_deref(), Some("100.5"));
/// assert_eq!(canonical(&json!(["a"])), None);
/// ```
pub fn canonical(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            let lower = s.get(..8).unwrap_or(s).to_ascii_lowercase();
            if (lower.starts_with("http://") || lower.starts_with("https://"))
                && let Ok(url) = url::Url::parse(s)
            {
                return Some(url.to_string());
            }
            Some(s.clone())
        }
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn key_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".key");
    PathBuf::from(p)
}

fn seal(key: &DigestKey, entries: &[Entry]) -> String {
    // serde_json writes the struct's fields in declaration order: the same entries give the same bytes.
    key.keyed(
        serde_json::to_string(entries)
            .unwrap_or_default()
            .as_bytes(),
    )
}

impl Store {
    /// Reads and checks the store at `path`; no file is an empty store. A file whose seal does not match
    /// its key (or whose key is missing) is refused.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let shown = path.display().to_string();
        let unreadable = |why: String| StoreError::Unreadable {
            path: shown.clone(),
            why,
        };
        let edited = |why: &str| StoreError::Edited {
            path: shown.clone(),
            why: why.to_string(),
        };
        let bytes = match read_bounded(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // No values yet; a key without a file means the file was removed, which forgets all.
                let key = read_key(&key_path(path)).map_err(unreadable)?;
                return Ok(Store {
                    path: path.to_path_buf(),
                    entries: Vec::new(),
                    digest: "none".into(),
                    key,
                });
            }
            Err(e) => return Err(unreadable(e.to_string())),
        };
        let digest = crate::digest::sha256_bytes(&bytes);
        let file: File = serde_json::from_slice(&bytes)
            .map_err(|e| edited(&format!("it is not a store Zamburak wrote: {e}")))?;
        if file.format != FORMAT {
            return Err(edited(&format!("format {} is not {FORMAT}", file.format)));
        }
        if file.entries.len() > MAX_ENTRIES {
            return Err(edited(&format!("more than {MAX_ENTRIES} entries")));
        }
        let Some(key) = read_key(&key_path(path)).map_err(unreadable)? else {
            return Err(edited("its key file is missing"));
        };
        if seal(&key, &file.entries) != file.seal {
            return Err(edited("its seal does not match"));
        }
        Ok(Store {
            path: path.to_path_buf(),
            entries: file.entries,
            digest,
            key: Some(key),
        })
    }

    /// An empty store with no file: where the environment names no place for one (no `$ZAMBURAK_KNOWN`,
    /// no `$HOME`), nothing is remembered, and remembering fails with [`StoreError::NoPlace`].
    pub fn nowhere() -> Store {
        Store {
            path: PathBuf::new(),
            entries: Vec::new(),
            digest: "none".into(),
            key: None,
        }
    }

    /// The file it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `sha256:` of the file as read, `none` when there was none: what the trace's header records.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry that makes `value` known in `scope` at `now`, if any.
    pub fn find(&self, scope: &Scope<'_>, value: &str, now: jiff::Timestamp) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.value == value && scope.covers(e) && !e.expired(now))
    }

    /// Every value remembered in `scope` and not expired at `now`: what a new value is compared with for
    /// "looks like".
    pub fn values_in(&self, scope: &Scope<'_>, now: jiff::Timestamp) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| scope.covers(e) && !e.expired(now))
            .collect()
    }

    /// Adds `entry`, replacing one for the same value, scope, user, role and argument (a renewal).
    pub fn remember(&mut self, entry: Entry) {
        self.entries.retain(|e| {
            !(e.value == entry.value
                && e.scope == entry.scope
                && e.user == entry.user
                && e.role == entry.role
                && e.tool == entry.tool
                && e.arg == entry.arg)
        });
        self.entries.push(entry);
    }

    /// Removes every entry of `value`; how many were removed.
    pub fn forget(&mut self, value: &str) -> usize {
        let before = self.entries.len();
        self.entries.retain(|e| e.value != value);
        before - self.entries.len()
    }

    /// Removes every entry.
    pub fn forget_all(&mut self) -> usize {
        let n = self.entries.len();
        self.entries.clear();
        n
    }

    /// Writes the store, sealed, readable by its owner only (a key is made on the first write). The file is
    /// replaced whole (written beside it, then renamed), so a crash leaves the old store or the new one.
    pub fn save(&mut self) -> Result<(), StoreError> {
        let shown = self.path.display().to_string();
        let unwritable = |why: String| StoreError::Unwritable {
            path: shown.clone(),
            why,
        };
        if self.path.as_os_str().is_empty() {
            return Err(StoreError::NoPlace);
        }
        if self.entries.len() > MAX_ENTRIES {
            return Err(unwritable(format!("more than {MAX_ENTRIES} entries")));
        }
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| unwritable(e.to_string()))?;
        }
        let key = match &self.key {
            Some(k) => k.clone(),
            None => {
                let k = DigestKey::fresh().map_err(|e| unwritable(e.to_string()))?;
                write_private(&key_path(&self.path), k.to_hex().as_bytes())
                    .map_err(|e| unwritable(e.to_string()))?;
                self.key = Some(k.clone());
                k
            }
        };
        let file = File {
            format: FORMAT,
            seal: seal(&key, &self.entries),
            entries: self.entries.clone(),
        };
        let text = serde_json::to_string_pretty(&file).map_err(|e| unwritable(e.to_string()))?;
        write_private(&self.path, text.as_bytes()).map_err(|e| unwritable(e.to_string()))?;
        self.digest = crate::digest::sha256_bytes(text.as_bytes());
        Ok(())
    }
}

fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(std::io::Error::other(format!(
            "it is larger than {MAX_BYTES} bytes"
        )));
    }
    Ok(bytes)
}

/// The key at `path`: `None` when there is none; `Err` when it cannot be read or is not a key.
fn read_key(path: &Path) -> Result<Option<DigestKey>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => DigestKey::from_hex(text.trim())
            .map(Some)
            .ok_or_else(|| format!("{} is not a key Zamburak wrote", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Writes `bytes` to `path` through a file beside it, mode 0600, then renames it into place.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// Removes the store's file and its key: `known forget --all` on a store that was refused.
pub fn remove(path: &Path) -> Result<(), StoreError> {
    for p in [path.to_path_buf(), key_path(path)] {
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(StoreError::Unwritable {
                    path: p.display().to_string(),
                    why: e.to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(value: &str) -> Entry {
        Entry::new(
            value,
            "payee",
            "send_money",
            "recipient",
            "s",
            "me",
            "alice",
            "C",
            90,
        )
    }

    #[test]
    fn a_store_round_trips_and_a_missing_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let mut s = Store::open(&path).unwrap();
        assert_eq!(s.digest(), "none");
        s.remember(entry("a"));
        s.remember(entry("a"));
        s.remember(entry("b"));
        s.save().unwrap();
        let s = Store::open(&path).unwrap();
        assert_eq!(s.entries().len(), 2, "remembering again replaces");
        assert!(s.digest().starts_with("sha256:"));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::remove_file(key_path(&path)).unwrap();
        let e = Store::open(&path).unwrap_err().to_string();
        assert!(e.contains("key file is missing"), "{e}");
    }

    #[test]
    fn an_added_entry_with_a_copied_seal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let mut s = Store::open(&path).unwrap();
        s.remember(entry("landlord"));
        s.save().unwrap();
        let mut doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut forged = doc["entries"][0].clone();
        forged["value"] = "attacker".into();
        doc["entries"].as_array_mut().unwrap().push(forged);
        std::fs::write(&path, doc.to_string()).unwrap();
        assert!(matches!(Store::open(&path), Err(StoreError::Edited { .. })));
        // Not JSON at all: refused the same way, never a panic.
        std::fs::write(&path, b"\xff\xfe{").unwrap();
        assert!(matches!(Store::open(&path), Err(StoreError::Edited { .. })));
    }

    #[test]
    fn scope_user_role_argument_and_expiry_all_bound_a_value() {
        let args = vec![("send_money".to_string(), "recipient".to_string())];
        let scope = Scope {
            scope: "s",
            user: "me",
            role: "payee",
            args: &args,
        };
        let mut s = Store {
            path: PathBuf::new(),
            entries: Vec::new(),
            digest: "none".into(),
            key: None,
        };
        s.remember(entry("x"));
        let now = jiff::Timestamp::now();
        assert!(s.find(&scope, "x", now).is_some());
        assert!(s.find(&scope, "X", now).is_none(), "exact values only");
        for other in [
            Scope {
                scope: "t",
                ..scope.clone()
            },
            Scope {
                user: "you",
                ..scope.clone()
            },
            Scope {
                role: "recipient",
                ..scope.clone()
            },
        ] {
            assert!(s.find(&other, "x", now).is_none());
        }
        let amount = vec![("send_money".to_string(), "amount".to_string())];
        assert!(
            s.find(
                &Scope {
                    args: &amount,
                    ..scope.clone()
                },
                "x",
                now
            )
            .is_none()
        );
        let later = now
            .checked_add(jiff::SignedDuration::from_hours(24 * 91))
            .unwrap();
        assert!(
            s.find(&scope, "x", later).is_none(),
            "expired after 90 days"
        );
    }
}
