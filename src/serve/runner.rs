//! One `run_plan` of `zamburak mcp serve`, as `zamburak run` does it but printing nothing: the plan is
//! written to its own directory under the server's runs directory (`RUNS/run-N/plan.py`), checked, run in a
//! worker process with its trace beside it (`plan.zjson`, values in `plan.zvalues` for the person's
//! viewer), and saved as a snapshot when a claim waits. What the plan printed goes to `output.txt` there,
//! for the person; the planner's answer is [`super::answer`]'s.
//!
//! Blocking: the server calls it on a blocking thread, one per run. The run's worker comes from the
//! server's warm pool, and its stop switch ([`StopSwitch`]) ends it from outside (the run timeout, the
//! shutdown): once pulled, no further tool call starts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::answer;
use super::context::Session;
use crate::plan::Audience;
use crate::policy::discover::Chosen;
use crate::runtime::run::Engine;
use crate::runtime::setup::{self, RunSetupError};
use crate::runtime::snapshot;
use crate::runtime::worker::pool::{Pool, Pooled};
use crate::runtime::worker::stop::StopSwitch;

/// What every run of one server shares.
pub struct Runner {
    pub chosen: Chosen,
    /// Warm workers, one per run.
    pub pool: Arc<Pool>,
    /// What a run continues on once the person decided its claim in the client's form (a worker of its
    /// own, outside the pool and the run timeout, as `zamburak approve` continues it).
    pub engine: Engine,
    /// Where each run gets its directory.
    pub runs: PathBuf,
    /// How long a claim waits for the person (`--approval-ttl`).
    pub approval_ttl_secs: u64,
}

/// Writes `bytes` to `path`, readable by the user only (the person's data).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)
}

/// The file a run that did not start leaves in its directory: why, in Zamburak's words.
const NOT_STARTED: &str = "not_started.txt";

/// What the model is told of a run refused because the person's remembered values cannot be used.
const REMEMBERED_REFUSED: &str = "the person's remembered values cannot be used, so no run can start: only the person can fix it";

/// Longest run id accepted from the client (`run-` and a number).
const MAX_RUN_ID: usize = 24;

/// The directory of run `id` when `id` is one this server could have made (`run-` and digits), so a
/// client cannot name a path of its choosing.
pub fn run_dir(runs: &Path, id: &str) -> Option<PathBuf> {
    let digits = id.strip_prefix("run-")?;
    let ok =
        id.len() <= MAX_RUN_ID && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| runs.join(id))
}

impl Runner {
    /// A fresh run directory: `run-N` with the first N not taken (several servers may share a runs
    /// directory; `create_dir` is the atomic claim).
    fn new_run_dir(&self, from: u64) -> std::io::Result<(String, PathBuf)> {
        let mut n = from;
        loop {
            let id = format!("run-{n}");
            let dir = self.runs.join(&id);
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok((id, dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n = n.saturating_add(1),
                Err(e) => return Err(e),
            }
        }
    }

    /// A directory for run number `n` (or the next free one): its id and path, or the answer when none
    /// can be made.
    pub fn claim(&self, n: u64) -> Result<(String, PathBuf), Value> {
        self.new_run_dir(n).map_err(|e| {
            answer::Answer::not_started(
                "none",
                &format!(
                    "cannot create a run directory under {}: {e}",
                    self.runs.display()
                ),
            )
            .to_value()
        })
    }

    /// Runs `source` as run `id` in its directory `dir` ([`Runner::claim`]) and returns the planner's
    /// answer; `switch` stops it from outside. The plan is taken as written in `session`'s planner
    /// context, and what the answer returns is joined into that context first.
    pub fn run_claimed(
        &self,
        id: &str,
        dir: &Path,
        source: &str,
        switch: &Arc<StopSwitch>,
        session: &Session,
    ) -> Value {
        let plan = dir.join("plan.py");
        if let Err(e) = std::fs::write(&plan, source) {
            return answer::Answer::not_started(
                id,
                &format!("cannot write {}: {e}", plan.display()),
            )
            .to_value();
        }
        match self.run_in(id, &plan, source, switch, session) {
            Ok(doc) => doc,
            Err(e) => {
                let why = match &e {
                    // Whether the person's remembered values check is theirs, not the model's: the model is
                    // told that much in fixed words, the person the reason (docs/semantics.md, "Remembered
                    // values").
                    RunSetupError::Remembered(_) => {
                        let _ = write_private(&dir.join("output.txt"), e.to_string().as_bytes());
                        REMEMBERED_REFUSED.to_string()
                    }
                    _ => e.to_string(),
                };
                // So `run_status` can tell a run that never started from one about to.
                let _ = std::fs::write(dir.join(NOT_STARTED), &why);
                answer::Answer::not_started(id, &why).to_value()
            }
        }
    }

    /// The run through the one run driver ([`setup::check`], [`setup::Checked::prepare`],
    /// [`setup::Prepared::run`]), then the planner's answer read back from the trace just written.
    fn run_in(
        &self,
        id: &str,
        plan: &Path,
        source: &str,
        switch: &Arc<StopSwitch>,
        session: &Session,
    ) -> Result<Value, RunSetupError> {
        let policy = &self.chosen.policy;
        let checked = setup::check(&self.chosen, plan, source.to_string(), policy.mode())?;
        let trace_path = plan.with_extension("zjson");
        let prepared = checked.prepare(setup::Setup {
            trace: trace_path.clone(),
            engine: Engine::Pooled(Pooled {
                pool: Arc::clone(&self.pool),
                switch: Arc::clone(switch),
            }),
            context: Some(session.context()),
            stop: Some(Arc::clone(switch)),
            // The person's viewer (`view --reveal`) shows the values the trace names by digest; a store
            // that cannot be made only costs the person that view.
            keep_values: true,
            ttl_secs: self.approval_ttl_secs,
            before_servers: None,
        })?;
        // What the plan prints is for the person: kept in the run's directory, never sent to the client.
        let mut printed = String::new();
        // The model reads the diagnostics of a plan refused before it runs: their helps change only the
        // plan (docs/serve.md).
        let finished = prepared.run(setup::How {
            print: &mut |text| printed.push_str(text),
            approver: None,
            audience: Audience::Planner,
        });
        let _ = write_private(&plan.with_file_name("output.txt"), printed.as_bytes());
        let report = &finished.report;
        // The planner's answer is read back from the trace just written, as `run_status` reads it.
        let knows = answer::Knows::of(policy);
        let mut told = answer::read_back(id, &trace_path, &knows);
        told.answer.diagnostics = answer::diagnostics(report, source);
        if let Err(e) = session.has_read(&told.read) {
            return Ok(answer::Answer::withheld(id, &e.to_string()).to_value());
        }
        let mut doc = told.answer.to_value();
        // What went wrong in the server after the run is said only where nothing was cut: after a cut,
        // even that a claim was reached is the person's.
        if !told.answer.is_cut() {
            if let Some(Err(why)) = &finished.snapshot {
                // Nobody can approve a claim whose snapshot was not saved: the run is over.
                doc["status"] = "error".into();
                doc["waiting"] = Value::Null;
                doc["error"] = serde_json::json!({
                    "type": "SuspendError",
                    "message": format!("the run cannot be suspended: {why}"),
                });
            }
            if finished.head.is_err() {
                doc["error"] = serde_json::json!({
                    "type": "TraceError",
                    "message": "the trace could not be completed",
                });
                doc["status"] = "error".into();
            }
        }
        Ok(doc)
    }

    /// The state of run `id`, read from its trace and snapshot (what it returns is joined into `session`'s
    /// planner context first).
    pub fn status(&self, id: &str, session: &Session) -> Result<Value, String> {
        let Some(dir) = run_dir(&self.runs, id) else {
            return Err(format!(
                "`{}` is not a run of this server (run ids look like `run-1`)",
                crate::text::visible(&id.chars().take(40).collect::<String>())
            ));
        };
        let trace = dir.join("plan.zjson");
        if !dir.is_dir() {
            return Err(format!("no run `{id}` in {}", self.runs.display()));
        }
        if let Ok(why) = std::fs::read_to_string(dir.join(NOT_STARTED)) {
            return Ok(answer::Answer::not_started(id, &why).to_value());
        }
        if !trace.exists() {
            // The directory is made before the run takes its lock and creates its trace.
            return Ok(answer::Answer::state(id, "starting").to_value());
        }
        // A run (or the person's decision on it) under way holds the run's lock: its trace is still being
        // written. The lock is only tested, and let go at once.
        if let Err(snapshot::RunLockError::Busy { .. }) = snapshot::lock_run(&trace) {
            return Ok(answer::Answer::state(id, "running").to_value());
        }
        let knows = answer::Knows::of(&self.chosen.policy);
        let told = answer::read_back(id, &trace, &knows);
        if let Err(e) = session.has_read(&told.read) {
            return Ok(answer::Answer::withheld(id, &e.to_string()).to_value());
        }
        Ok(told.answer.to_value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_id_names_only_a_run_directory() {
        let runs = Path::new("/r");
        assert_eq!(run_dir(runs, "run-12"), Some(PathBuf::from("/r/run-12")));
        for bad in [
            "run-",
            "../x",
            "run-1/../../etc",
            "run-1x",
            "run-١",
            "run-99999999999999999999999",
            "",
        ] {
            assert_eq!(run_dir(runs, bad), None, "{bad}");
        }
    }
}
