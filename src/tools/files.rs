//! A sandboxed directory: paths are relative, canonicalised, and must stay inside the root; nothing is read
//! or written through a symlink that leaves it.

use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use super::ToolError;

/// Largest file `read` returns.
const MAX_READ_BYTES: u64 = 1 << 20;

/// The root, canonicalised.
fn root(root: &Path) -> Result<PathBuf, ToolError> {
    root.canonicalize()
        .map_err(|_| ToolError::Refused("the configured files root does not exist"))
}

/// Names that begin with this are Zamburak's own inside the root (the label store, a write's temporary
/// file): no plan reads, writes or lists them, so no plan can forge or drop a stored label.
pub const RESERVED_PREFIX: &str = ".zamburak";

const RESERVED: ToolError = ToolError::Refused("the path is reserved for Zamburak's own records");

fn is_reserved(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().starts_with(RESERVED_PREFIX)
}

/// Checks the shape of a plan-given relative path: no absolute paths, `..`, NUL or empty components, and
/// nothing of Zamburak's own.
fn relative(path: &str) -> Result<PathBuf, ToolError> {
    if path.contains('\0') {
        return Err(ToolError::Refused("path outside the files root"));
    }
    let p = Path::new(path);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(x) if is_reserved(x) => return Err(RESERVED),
            Component::Normal(x) => out.push(x),
            Component::CurDir => {}
            _ => return Err(ToolError::Refused("path outside the files root")),
        }
    }
    Ok(out)
}

/// `full` (canonical) inside `root` (canonical), and through nothing of Zamburak's own: a symlink the plan
/// names may resolve into the label store.
fn inside(root: &Path, full: &Path) -> Result<(), ToolError> {
    let rel = full
        .strip_prefix(root)
        .map_err(|_| ToolError::Refused("path outside the files root"))?;
    if rel.components().any(|c| is_reserved(c.as_os_str())) {
        return Err(RESERVED);
    }
    Ok(())
}

/// An existing path inside the root, with every symlink resolved.
fn existing(root_dir: &Path, path: &str) -> Result<PathBuf, ToolError> {
    let root = root(root_dir)?;
    let full = root
        .join(relative(path)?)
        .canonicalize()
        .map_err(|_| ToolError::NotFound)?;
    inside(&root, &full)?;
    Ok(full)
}

/// The item `path` names, as the label store keys it: its path relative to the canonical root, with every
/// symlink of an existing file resolved and, for a file not written yet, its directory's (the same name
/// [`read`] and [`write`] reach).
pub fn item(root_dir: &Path, path: &str) -> Result<(PathBuf, String), ToolError> {
    let root = root(root_dir)?;
    let full = match existing(root_dir, path) {
        Ok(full) => full,
        Err(ToolError::NotFound) => target(&root, path)?,
        Err(e) => return Err(e),
    };
    let rel = full
        .strip_prefix(&root)
        .map_err(|_| ToolError::Refused("path outside the files root"))?
        .to_string_lossy()
        .to_string();
    Ok((root, rel))
}

/// Where [`write`] puts `path`: in its directory, resolved, inside the root.
fn target(root: &Path, path: &str) -> Result<PathBuf, ToolError> {
    let rel = relative(path)?;
    let name = rel
        .file_name()
        .ok_or(ToolError::Refused("path names no file"))?
        .to_owned();
    let parent = root
        .join(rel.parent().unwrap_or(Path::new("")))
        .canonicalize()
        .map_err(|_| ToolError::NotFound)?;
    inside(root, &parent)?;
    Ok(parent.join(name))
}

/// Names in a directory, sorted; directories end with `/`.
pub fn list(root_dir: &Path, path: &str) -> Result<Value, ToolError> {
    let dir = existing(root_dir, path)?;
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|_| ToolError::NotFound)?
        .flatten()
        .filter(|e| !is_reserved(&e.file_name()))
        .map(|e| {
            let mut n = e.file_name().to_string_lossy().to_string();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                n.push('/');
            }
            n
        })
        .collect();
    names.sort();
    Ok(json!(names))
}

/// A text file's content.
pub fn read(root_dir: &Path, path: &str) -> Result<Value, ToolError> {
    let file = existing(root_dir, path)?;
    let meta = std::fs::metadata(&file).map_err(|_| ToolError::NotFound)?;
    if !meta.is_file() {
        return Err(ToolError::NotFound);
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(ToolError::Refused("file too large"));
    }
    let bytes = std::fs::read(&file).map_err(|_| ToolError::Io)?;
    String::from_utf8(bytes)
        .map(Value::String)
        .map_err(|_| ToolError::Refused("not a UTF-8 text file"))
}

/// Creates or replaces a file atomically. Its directory must exist inside the root; the file itself may not
/// be a symlink.
pub fn write(root_dir: &Path, path: &str, content: &str) -> Result<Value, ToolError> {
    let root = root(root_dir)?;
    let rel = relative(path)?;
    let target = target(&root, path)?;
    let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(ToolError::Refused("path names no file"));
    };
    let (parent, name) = (parent.to_path_buf(), name.to_owned());
    if let Ok(meta) = std::fs::symlink_metadata(&target)
        && (meta.file_type().is_symlink() || meta.is_dir())
    {
        return Err(ToolError::Refused(
            "will not write through a symlink or over a directory",
        ));
    }
    let tmp = parent.join(format!(
        "{RESERVED_PREFIX}-tmp-{}-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, content).map_err(|_| ToolError::Io)?;
    std::fs::rename(&tmp, &target).map_err(|_| {
        let _ = std::fs::remove_file(&tmp);
        ToolError::Io
    })?;
    Ok(json!({"path": rel.to_string_lossy(), "bytes": content.len()}))
}
