//! One MCP session of `zamburak mcp serve`: one stdio client, one server process. It owns the session's
//! planner context label (docs/semantics.md, "The planner context label"): the join of the label of every
//! value the server has returned to the client's model. Every plan the session runs or lints later is
//! taken as written in that context. A new server process is a new session and starts trusted.
//!
//! Ordering: [`Session::has_read`] is called before the answer holding those values is handed to the
//! transport, and [`Session::context`] when a plan starts. A plan that arrived before an answer went out
//! cannot have been written from it; one that starts after may be given a context that includes it, which
//! only refuses more.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::planner::ContextLabel;
use crate::policy::model::ResolvedPlanner;

/// What the client's model is told about the server when the session starts, in the planner mode of the
/// policy (docs/serve.md, "The two planner modes").
pub fn instructions(planner: &ResolvedPlanner) -> String {
    let start = "Zamburak runs the plans you write (Python in a small subset) under its user's policy. Call \
                 describe_tools first, lint_plan to check a plan, run_plan to run it.";
    let data = if planner.reads_untrusted {
        "Data from tools that you may read is returned to you, with its label. Once you have read untrusted \
         data, every value you write in a later plan of this session counts as untrusted too: a recipient \
         or URL you write then needs a verifier or the person's approval."
    } else {
        "Data from tools is shown to the person, not to you."
    };
    format!("{start} {data} Calls that need the person's approval wait for them.")
}

/// What `describe_tools` adds for a model that runs plans through the server: what it is told of a run,
/// and what to do with the link (docs/serve.md, "What the planner can learn").
pub fn what_you_are_told(planner: &ResolvedPlanner) -> String {
    let read = if planner.reads_untrusted {
        "data you may read (its label says so)"
    } else {
        "only trusted data you may read"
    };
    format!(
        "## What you are told of a run\n\n\
         `run_plan` and `run_status` tell you a run's decisions, what it printed and how it ended only up \
         to the point where it first depends on data you may not read (you may read {read}; a call whose \
         result you may not read is that point, after its decision). There the answer stops: `rest` says \
         the rest is for the person, and `person` is the link where the user sees everything (the output \
         with who wrote each part, every decision, and any call waiting for their approval). Give that \
         link to the user; do not open it yourself. To check a plan before running it, use `lint_plan`: \
         its predictions depend on the plan and the policy only. Nothing you call approves a claim; only \
         the user does.\n"
    )
}

/// The file in the runs directory that keeps the planner context between server processes (mode 0600).
pub const CONTEXT_FILE: &str = "planner-context.json";

/// The state one client's session keeps: the planner context, kept in memory and, when the session has a
/// runs directory, in [`CONTEXT_FILE`] there, so that a restarted server (whose client's model still holds
/// its conversation) starts from what the model was told (docs/semantics.md, "The planner context label").
/// Only the person resets it: `zamburak mcp forget-context`, or a new runs directory.
#[derive(Debug, Default)]
pub struct Session {
    context: Mutex<ContextLabel>,
    /// Where the context is kept; `None`: in memory only (tests, a session without a runs directory).
    file: Option<PathBuf>,
}

/// Why the kept context could not be read: the session then starts with a context that fails every sink.
#[derive(Debug)]
pub struct Unreadable {
    pub path: PathBuf,
    pub why: String,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the planner context kept in {} cannot be read ({}): every literal of this session counts as \
             unknown until the person runs `zamburak mcp forget-context --runs {}`",
            self.path.display(),
            self.why,
            self.path.parent().unwrap_or(Path::new(".")).display()
        )
    }
}

/// The context a kept file holds, or why it cannot be used.
fn read_kept(path: &Path) -> Result<ContextLabel, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ContextLabel::trusted()),
        Err(e) => return Err(e.to_string()),
    };
    if bytes.len() > 4 * 1024 * 1024 {
        return Err("larger than 4 MiB".into());
    }
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}

/// Writes `context` to `path` whole (a temporary file renamed over it), readable by the user only.
fn keep(path: &Path, context: &ContextLabel) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let text = serde_json::to_vec_pretty(context).map_err(std::io::Error::other)?;
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(&text)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Forgets the planner context kept in the runs directory `runs`: the person's act, never a tool's.
/// `Ok(false)`: there was none.
pub fn forget(runs: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(runs.join(CONTEXT_FILE)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

impl Session {
    /// A session whose planner has read nothing yet, kept in memory only.
    pub fn new() -> Session {
        Session::default()
    }

    /// The session of the runs directory `runs`: it starts from the context kept there. A kept context
    /// that cannot be read starts the session with an unknown context (every literal fails every sink),
    /// and says why.
    pub fn in_runs(runs: &Path) -> (Session, Option<Unreadable>) {
        let path = runs.join(CONTEXT_FILE);
        let (context, problem) = match read_kept(&path) {
            Ok(c) => (c, None),
            Err(why) => (
                ContextLabel {
                    integrity: crate::planner::ContextIntegrity::Unknown,
                    ..ContextLabel::trusted()
                },
                Some(Unreadable {
                    path: path.clone(),
                    why,
                }),
            ),
        };
        (
            Session {
                context: Mutex::new(context),
                file: Some(path),
            },
            problem,
        )
    }

    /// The planner context now: what a plan written now was written in.
    pub fn context(&self) -> ContextLabel {
        // A panic while the lock was held cannot leave a half-joined label (the join is computed first,
        // then stored in one assignment), so the value behind a poisoned lock is still the context.
        self.context
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The planner is being given values labelled `read`: the context joins it, and the join is kept
    /// before the answer goes out. When it cannot be kept the context in memory still holds it, and the
    /// error says so (the caller withholds the answer).
    pub fn has_read(&self, read: &ContextLabel) -> std::io::Result<()> {
        if read.is_trusted() {
            return Ok(());
        }
        let mut context = self
            .context
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let joined = context.join(read);
        if joined == *context {
            return Ok(());
        }
        *context = joined;
        match &self.file {
            // Several servers may share a runs directory: what another kept joins too, so a write never
            // drops what the other told its model. A kept file that cannot be read stays unknown here.
            Some(path) => {
                let kept = read_kept(path).unwrap_or_else(|_| ContextLabel {
                    integrity: crate::planner::ContextIntegrity::Unknown,
                    ..ContextLabel::trusted()
                });
                *context = context.join(&kept);
                keep(path, &context)
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::ContextIntegrity;

    #[test]
    fn the_instructions_say_what_the_model_is_given() {
        let mut planner = ResolvedPlanner {
            reader: "llm:planner".into(),
            reads_untrusted: false,
        };
        assert!(instructions(&planner).contains("shown to the person, not to you"));
        planner.reads_untrusted = true;
        let said = instructions(&planner);
        assert!(!said.contains("not to you"), "{said}");
        assert!(said.contains("counts as untrusted too"), "{said}");
    }

    #[test]
    fn a_session_starts_trusted_and_only_grows() {
        let s = Session::new();
        assert!(s.context().is_trusted());
        let mail = ContextLabel {
            integrity: ContextIntegrity::Untrusted,
            sources: ["run-1/read_inbox#1".to_string()].into(),
            ..ContextLabel::trusted()
        };
        s.has_read(&mail).unwrap();
        s.has_read(&ContextLabel::trusted()).unwrap();
        assert_eq!(s.context(), mail);
        let other = ContextLabel {
            tags: ["PRIVATE".to_string()].into(),
            ..ContextLabel::trusted()
        };
        s.has_read(&other).unwrap();
        assert_eq!(s.context(), mail.join(&other));
        assert!(
            Session::new().context().is_trusted(),
            "a new session is trusted"
        );
    }

    #[test]
    fn the_context_outlives_the_server_until_the_person_forgets_it() {
        let dir = tempfile::tempdir().unwrap();
        let mail = ContextLabel {
            integrity: ContextIntegrity::Untrusted,
            sources: ["run-1/read_inbox#1".to_string()].into(),
            ..ContextLabel::trusted()
        };
        let (s, problem) = Session::in_runs(dir.path());
        assert!(problem.is_none() && s.context().is_trusted());
        s.has_read(&mail).unwrap();
        drop(s);
        let (again, _) = Session::in_runs(dir.path());
        assert_eq!(
            again.context(),
            mail,
            "a restarted server keeps the context"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(CONTEXT_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A second server on the same runs directory keeps what the first told its model.
        let other = ContextLabel {
            tags: ["PRIVATE".to_string()].into(),
            ..ContextLabel::trusted()
        };
        let (second, _) = Session::in_runs(dir.path());
        let (third, _) = Session::in_runs(dir.path());
        let late = ContextLabel {
            sources: ["run-9/fetch_url#1".to_string()].into(),
            ..ContextLabel::trusted()
        };
        second.has_read(&other).unwrap();
        // The third started before the second kept `other`: its write must not drop it.
        third.has_read(&late).unwrap();
        assert_eq!(
            Session::in_runs(dir.path()).0.context(),
            mail.join(&other).join(&late)
        );
        assert!(forget(dir.path()).unwrap());
        assert!(Session::in_runs(dir.path()).0.context().is_trusted());
        // A kept context that does not parse fails closed.
        std::fs::write(dir.path().join(CONTEXT_FILE), "{not json").unwrap();
        let (broken, problem) = Session::in_runs(dir.path());
        assert!(problem.is_some());
        assert_eq!(broken.context().integrity, ContextIntegrity::Unknown);
    }
}
