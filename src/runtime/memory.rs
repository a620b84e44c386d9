//! Opening the person's remembered values for a run (docs/semantics.md, "Remembered values"): only for a
//! policy that accepts `known(ROLE)`, only where the policy's own tools cannot write, and only when the
//! store's seal checks. Shared by every front door and by `approve`.

use std::path::{Path, PathBuf};

use crate::known::store::{self, Store, StoreError};
use crate::policy::Policy;

/// Why a run may not use the store.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The store lies where the policy's tools write: a plan could then rewrite it.
    #[error(
        "the remembered values {} lie under {}, where this policy's tools write: keep them elsewhere (set \
         ${} to a file outside it)",
        store.display(),
        dir.display(),
        store::STORE_ENV
    )]
    Exposed { store: PathBuf, dir: PathBuf },
}

/// The person's remembered values, for a policy that accepts `known(ROLE)`; `None` for one that does not
/// (its runs never read the store). A store that does not check refuses the run: a value trusted because a
/// file says so must be one the person put there.
pub fn open_for(policy: &Policy) -> Result<Option<Store>, Refused> {
    if !policy.uses_known() {
        return Ok(None);
    }
    let path = match store::default_path() {
        Ok(p) => p,
        // No place for a store (an MCP client may start `mcp serve` with no $HOME): nothing is remembered,
        // so nothing is known, and remembering says why it cannot.
        Err(StoreError::NoPlace) => return Ok(Some(Store::nowhere())),
        Err(e) => return Err(e.into()),
    };
    if let Some(dir) = writable_by_tools(policy, &path) {
        return Err(Refused::Exposed { store: path, dir });
    }
    Ok(Some(Store::open(&path)?))
}

/// A directory the policy's built-in tools write into (or read from) that holds `store`.
fn writable_by_tools(policy: &Policy, store: &Path) -> Option<PathBuf> {
    let b = policy.builtins();
    let dirs = b.files.iter().map(|f| f.root.clone()).chain(
        b.mail
            .iter()
            .flat_map(|m| [m.outbox.clone(), m.drafts.clone(), m.maildir.clone()]),
    );
    // The store's directory as the file system resolves it (the file itself may not exist yet).
    let parent = store
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let resolved = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    dirs.filter_map(|d| std::fs::canonicalize(&d).ok())
        .find(|d| resolved.starts_with(d))
}
