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

/// Checks the shape of a plan-given relative path: no absolute paths, `..`, NUL or empty components.
fn relative(path: &str) -> Result<PathBuf, ToolError> {
    if path.contains('\0') {
        return Err(ToolError::Refused("path outside the files root"));
    }
    let p = Path::new(path);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(x) => out.push(x),
            Component::CurDir => {}
            _ => return Err(ToolError::Refused("path outside the files root")),
        }
    }
    Ok(out)
}

/// An existing path inside the root, with every symlink resolved.
fn existing(root_dir: &Path, path: &str) -> Result<PathBuf, ToolError> {
    let root = root(root_dir)?;
    let full = root
        .join(relative(path)?)
        .canonicalize()
        .map_err(|_| ToolError::NotFound)?;
    if !full.starts_with(&root) {
        return Err(ToolError::Refused("path outside the files root"));
    }
    Ok(full)
}

/// Names in a directory, sorted; directories end with `/`.
pub fn list(root_dir: &Path, path: &str) -> Result<Value, ToolError> {
    let dir = existing(root_dir, path)?;
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|_| ToolError::NotFound)?
        .flatten()
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
    let name = rel
        .file_name()
        .ok_or(ToolError::Refused("path names no file"))?
        .to_owned();
    let parent = root
        .join(rel.parent().unwrap_or(Path::new("")))
        .canonicalize()
        .map_err(|_| ToolError::NotFound)?;
    if !parent.starts_with(&root) {
        return Err(ToolError::Refused("path outside the files root"));
    }
    let target = parent.join(&name);
    if let Ok(meta) = std::fs::symlink_metadata(&target)
        && (meta.file_type().is_symlink() || meta.is_dir())
    {
        return Err(ToolError::Refused(
            "will not write through a symlink or over a directory",
        ));
    }
    let tmp = parent.join(format!(
        ".{}.zamburak-tmp-{}",
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
