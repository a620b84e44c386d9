//! One MCP session of `zamburak mcp serve`: one stdio client, one server process. It owns the session's
//! planner context label (docs/semantics.md, "The planner context label"): the join of the label of every
//! value the server has returned to the client's model. Every plan the session runs or lints later is
//! taken as written in that context. A new server process is a new session and starts trusted.
//!
//! Ordering: [`Session::has_read`] is called before the answer holding those values is handed to the
//! transport, and [`Session::context`] when a plan starts. A plan that arrived before an answer went out
//! cannot have been written from it; one that starts after may be given a context that includes it, which
//! only refuses more.

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

/// The state one client's session keeps.
#[derive(Debug, Default)]
pub struct Session {
    context: Mutex<ContextLabel>,
}

impl Session {
    /// A session whose planner has read nothing yet.
    pub fn new() -> Session {
        Session::default()
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

    /// The planner is being given values labelled `read`: the context joins it.
    pub fn has_read(&self, read: &ContextLabel) {
        if read.is_trusted() {
            return;
        }
        let mut context = self
            .context
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let joined = context.join(read);
        *context = joined;
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
        s.has_read(&mail);
        s.has_read(&ContextLabel::trusted());
        assert_eq!(s.context(), mail);
        let other = ContextLabel {
            tags: ["PRIVATE".to_string()].into(),
            ..ContextLabel::trusted()
        };
        s.has_read(&other);
        assert_eq!(s.context(), mail.join(&other));
        assert!(
            Session::new().context().is_trusted(),
            "a new session is trusted"
        );
    }
}
