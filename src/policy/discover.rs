//! Which policy decides a plan, found the way ruff and cargo find their configuration: `--policy FILE`
//! wins; otherwise the nearest [`POLICY_FILE_NAME`] in the plan's directory or one of its parents;
//! otherwise the built-in default (a copy of `policies/default.yaml` compiled into the binary), which the
//! CLI announces. Editing a file on disk never changes what the built-in default says, so when one looks
//! like an edited copy of it, [`Chosen::warnings`] says so.
//!
//! This module only finds and loads; the CLI prints ([`Chosen::announce`]).

use std::path::{Path, PathBuf};

use super::{BUNDLED_DEFAULT, Policy, PolicyError};

/// The file name looked for beside the plan and in its parents.
pub const POLICY_FILE_NAME: &str = "zamburak.yaml";

/// Where the deciding policy came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `--policy FILE`.
    Flag(PathBuf),
    /// The nearest `zamburak.yaml` up from the plan.
    Discovered(PathBuf),
    /// The copy of `policies/default.yaml` compiled into the binary.
    BuiltIn,
}

impl Origin {
    /// `flag`, `discovered` or `built-in`, as the trace records it.
    pub fn kind(&self) -> &'static str {
        match self {
            Origin::Flag(_) => "flag",
            Origin::Discovered(_) => "discovered",
            Origin::BuiltIn => "built-in",
        }
    }

    /// The policy file's path, or `None` for the built-in default.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Origin::Flag(p) | Origin::Discovered(p) => Some(p),
            Origin::BuiltIn => None,
        }
    }
}

/// The policy that decides, with its exact text and where it came from.
#[derive(Clone, Debug)]
pub struct Chosen {
    pub policy: Policy,
    /// The bytes the policy was read from (what `sha256` digests and the trace stores).
    pub text: Vec<u8>,
    pub origin: Origin,
    /// `sha256:<hex>` of `text`.
    pub sha256: String,
    /// Things the user should know, e.g. an edited copy of the default that is not in use.
    pub warnings: Vec<String>,
}

impl Chosen {
    /// One line for stderr: `policy: PATH (sha256 …)` or `policy: built-in default (sha256 …)`.
    pub fn announce(&self) -> String {
        self.announce_with("")
    }

    /// The first line of a command that runs or predicts a run: [`Chosen::announce`] with the mode that
    /// decides, so nobody reads NORMAL's output as STRICT's (docs/semantics.md, "Control context and
    /// modes": the guarantee of "What is protected" is strict's).
    pub fn announce_in(&self, mode: crate::mode::Mode) -> String {
        let said = match mode {
            crate::mode::Mode::Strict => ", mode strict".to_string(),
            crate::mode::Mode::Normal => {
                ", mode normal (a value set under a condition does not carry it: the guarantee is strict's)"
                    .to_string()
            }
        };
        self.announce_with(&said)
    }

    fn announce_with(&self, mode: &str) -> String {
        let hex = self.sha256.trim_start_matches("sha256:");
        let short = &hex[..hex.len().min(12)];
        match &self.origin {
            Origin::Flag(p) | Origin::Discovered(p) => {
                format!("policy: {} (sha256 {short}){mode}", p.display())
            }
            Origin::BuiltIn => format!(
                "policy: built-in default (sha256 {short}){mode}; put a {POLICY_FILE_NAME} beside the plan or pass --policy to use your own"
            ),
        }
    }

    /// How the trace names the policy: its path, or `built-in default`.
    pub fn display_path(&self) -> String {
        self.origin.path().map_or_else(
            || "built-in default".to_string(),
            |p| p.display().to_string(),
        )
    }
}

/// Finds and loads the policy for `plan`. `flag` is `--policy`.
pub fn choose(flag: Option<&Path>, plan: &Path) -> Result<Chosen, PolicyError> {
    if let Some(path) = flag {
        return load(path, Origin::Flag(path.to_path_buf()));
    }
    if let Some(found) = nearest(plan) {
        return load(&found, Origin::Discovered(found.clone()));
    }
    let policy = Policy::bundled_default()?;
    let text = BUNDLED_DEFAULT.as_bytes().to_vec();
    Ok(Chosen {
        policy,
        sha256: crate::digest::sha256_bytes(&text),
        text,
        origin: Origin::BuiltIn,
        warnings: edited_defaults(plan),
    })
}

fn load(path: &Path, origin: Origin) -> Result<Chosen, PolicyError> {
    let (policy, text) = Policy::load_bytes(path)?;
    Ok(Chosen {
        policy,
        sha256: crate::digest::sha256_bytes(&text),
        text,
        origin,
        warnings: Vec::new(),
    })
}

/// The directories searched: the plan's own, then each parent up to the root.
fn ancestors(plan: &Path) -> Vec<PathBuf> {
    let dir = plan.parent().filter(|d| !d.as_os_str().is_empty());
    let start = match dir {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    // Absolute, so that `..` and the current directory's parents are searched too; a directory that
    // cannot be resolved is searched as given.
    let start = std::fs::canonicalize(&start).unwrap_or(start);
    start.ancestors().map(Path::to_path_buf).collect()
}

/// The nearest `zamburak.yaml` from the plan's directory upward, as a path the user can read.
fn nearest(plan: &Path) -> Option<PathBuf> {
    ancestors(plan)
        .into_iter()
        .map(|d| d.join(POLICY_FILE_NAME))
        .find(|p| p.is_file())
        .map(|p| relative_to_cwd(&p))
}

/// Files named `policies/default.yaml` up from the plan (or in the current directory) that differ from
/// the built-in copy: someone edited the default expecting it to apply.
fn edited_defaults(plan: &Path) -> Vec<String> {
    let mut dirs = ancestors(plan);
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd);
    }
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for d in dirs {
        let candidate = d.join("policies").join("default.yaml");
        if seen.contains(&candidate) {
            continue;
        }
        seen.push(candidate.clone());
        let Ok(bytes) = std::fs::read(&candidate) else {
            continue;
        };
        if bytes != BUNDLED_DEFAULT.as_bytes() {
            let shown = relative_to_cwd(&candidate);
            out.push(format!(
                "{} differs from the built-in default, which decided this run; to use it, pass --policy {} or copy it to {POLICY_FILE_NAME} beside the plan",
                shown.display(),
                shown.display()
            ));
        }
    }
    out
}

/// `p` relative to the current directory when it is below it, else as it is.
fn relative_to_cwd(p: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| {
            let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
            p.strip_prefix(&cwd).ok().map(Path::to_path_buf)
        })
        .filter(|r| !r.as_os_str().is_empty())
        .unwrap_or_else(|| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "version: 1\n";

    #[test]
    fn the_flag_wins_then_the_nearest_file_then_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let deep = root.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        let plan = deep.join("plan.py");
        std::fs::write(&plan, "x = 1\n").unwrap();

        std::fs::write(root.join(POLICY_FILE_NAME), MINIMAL).unwrap();
        let c = choose(None, &plan).unwrap();
        assert_eq!(c.origin, Origin::Discovered(root.join(POLICY_FILE_NAME)));

        // A nearer one wins.
        std::fs::write(
            root.join("a").join(POLICY_FILE_NAME),
            "version: 1\nmode: normal\n",
        )
        .unwrap();
        let c = choose(None, &plan).unwrap();
        assert_eq!(
            c.origin,
            Origin::Discovered(root.join("a").join(POLICY_FILE_NAME))
        );
        assert!(c.announce().contains("a/zamburak.yaml"), "{}", c.announce());
        assert!(
            c.announce_in(c.policy.mode())
                .contains("a/zamburak.yaml (sha256 "),
            "{}",
            c.announce()
        );
        assert!(c.announce_in(c.policy.mode()).contains(", mode normal ("));

        // The flag wins over both.
        let other = root.join("other.yaml");
        std::fs::write(&other, MINIMAL).unwrap();
        let c = choose(Some(&other), &plan).unwrap();
        assert_eq!(c.origin, Origin::Flag(other));
        assert_eq!(c.sha256, crate::digest::sha256_bytes(MINIMAL.as_bytes()));
    }

    #[test]
    fn a_broken_discovered_policy_is_an_error_not_a_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("plan.py");
        std::fs::write(dir.path().join(POLICY_FILE_NAME), "version: 7\n").unwrap();
        let e = choose(None, &plan).unwrap_err();
        assert!(e.to_string().contains("zamburak.yaml"), "{e}");
        assert_eq!(e.kind, crate::policy::PolicyErrorKind::UnsupportedVersion);
        assert!(e.key_path.is(&["version"]), "{}", e.key_path);
    }
}
