//! Labels kept beside what the files sandbox stores (docs/semantics.md, "Stores keep labels").
//!
//! A file a plan writes may be read back by a later call or a later run; without its label, reading it back
//! would launder an `AUTH_SECRET` into a `PRIVATE` note. So the host keeps, before each write, the label of
//! what it writes, keyed by the item and bound to the digest of the exact content; a read of that item joins
//! the kept label into the policy's. An item whose content is no longer the kept one was written outside
//! Zamburak (the person edited it): it gets the policy's label alone.
//!
//! The records live in `ROOT/.zamburak/labels/`, one file per item (a run never loses another's record),
//! private to the user (0700/0600). The files adapter refuses every path through `.zamburak`, so no plan can
//! read, forge or remove a record. A record that cannot be read fails closed: the read is labelled unknown.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ToolError;
use super::files::RESERVED_PREFIX;

/// The label of what was written, in names that mean the same in every run's label space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kept {
    /// The item, relative to the files root.
    pub item: String,
    /// `sha256:<hex>` of the content this label belongs to.
    pub content: String,
    pub untrusted: bool,
    pub tags: Vec<String>,
    /// `None`: public; else the principals who may read it (the user always may).
    pub readers: Option<Vec<String>>,
    /// The calls the content derived from, as `tool#id` of the run that wrote it (for the person).
    pub sources: Vec<String>,
    /// The run that wrote it, when known.
    #[serde(default)]
    pub run: Option<String>,
}

/// What a read finds kept for an item.
#[derive(Debug, PartialEq, Eq)]
pub enum Recalled {
    /// Nothing kept, or what is kept belongs to other content: the policy's label alone.
    Nothing,
    Kept(Kept),
    /// A record exists and cannot be read: the read must fail closed.
    Broken,
}

fn dir(root: &Path) -> PathBuf {
    root.join(RESERVED_PREFIX).join("labels")
}

fn record_path(root: &Path, item: &str) -> PathBuf {
    let key = crate::digest::sha256_bytes(item.as_bytes());
    dir(root).join(format!("{}.json", key.trim_start_matches("sha256:")))
}

/// Keeps `kept` for its item, atomically, before the write it describes. An error means the write must
/// not happen: a file whose label was not kept would be read back as the policy's label alone.
pub fn keep(root: &Path, kept: &Kept) -> Result<(), ToolError> {
    let dir = dir(root);
    std::fs::create_dir_all(&dir).map_err(|_| ToolError::Io)?;
    private(&root.join(RESERVED_PREFIX), 0o700)?;
    private(&dir, 0o700)?;
    let path = record_path(root, &kept.item);
    let text = serde_json::to_vec(kept).map_err(|_| ToolError::Io)?;
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|_| ToolError::Io)?;
    private(&tmp, 0o600)?;
    std::fs::rename(&tmp, &path).map_err(|_| {
        let _ = std::fs::remove_file(&tmp);
        ToolError::Io
    })
}

/// What is kept for `item` whose content now is `content`.
pub fn recall(root: &Path, item: &str, content: &str) -> Recalled {
    let path = record_path(root, item);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Recalled::Nothing,
        Err(_) => return Recalled::Broken,
    };
    let Ok(kept) = serde_json::from_slice::<Kept>(&bytes) else {
        return Recalled::Broken;
    };
    if kept.item != item {
        return Recalled::Broken;
    }
    if kept.content != crate::digest::sha256_bytes(content.as_bytes()) {
        return Recalled::Nothing;
    }
    Recalled::Kept(kept)
}

#[cfg(unix)]
fn private(path: &Path, mode: u32) -> Result<(), ToolError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|_| ToolError::Io)
}

#[cfg(not(unix))]
fn private(_path: &Path, _mode: u32) -> Result<(), ToolError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(item: &str, content: &str) -> Kept {
        Kept {
            item: item.into(),
            content: crate::digest::sha256_bytes(content.as_bytes()),
            untrusted: true,
            tags: vec!["AUTH_SECRET".into()],
            readers: Some(vec![]),
            sources: vec!["read_file#1".into()],
            run: None,
        }
    }

    #[test]
    fn a_kept_label_comes_back_only_with_its_content() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(recall(root.path(), "a.txt", "x"), Recalled::Nothing);
        keep(root.path(), &kept("a.txt", "x")).unwrap();
        assert_eq!(
            recall(root.path(), "a.txt", "x"),
            Recalled::Kept(kept("a.txt", "x"))
        );
        assert_eq!(recall(root.path(), "a.txt", "y"), Recalled::Nothing);
        assert_eq!(recall(root.path(), "b.txt", "x"), Recalled::Nothing);
    }

    #[test]
    fn a_record_that_cannot_be_read_fails_closed() {
        let root = tempfile::tempdir().unwrap();
        keep(root.path(), &kept("a.txt", "x")).unwrap();
        std::fs::write(record_path(root.path(), "a.txt"), "{not json").unwrap();
        assert_eq!(recall(root.path(), "a.txt", "x"), Recalled::Broken);
        // A record moved to another item's name is not that item's.
        let other = serde_json::to_vec(&kept("b.txt", "x")).unwrap();
        std::fs::write(record_path(root.path(), "a.txt"), other).unwrap();
        assert_eq!(recall(root.path(), "a.txt", "x"), Recalled::Broken);
    }
}
