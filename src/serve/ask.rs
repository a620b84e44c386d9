//! Asking the person through the MCP client: when a run waits on a claim and the client declared form
//! elicitation, the claim is put to the person as a form (MCP `elicitation/create`; on a 2026-07-28 session,
//! where a server may not send requests of its own, as an input-required result the client answers and
//! retries). The model is never asked and never answers: a form goes to the client's person-facing side.
//!
//! What the form shows is the claim, in the words `zamburak approve` uses at a terminal (every value,
//! checked against the claim's digests; who wrote each; who may read it; what approving does). Its answer
//! decides exactly that claim: the decision names the claim's code and is taken only if the snapshot still
//! holds the suspension shown (same digest, same trace position, same time), through
//! [`snapshot::decide`], as `zamburak approve` does. Accept with `approve` ticked approves; accept without
//! it, or decline, rejects (the person said no: the call does not run and the run stops); cancel, no
//! answer, or an answer that does not parse decides nothing, and the claim keeps waiting in the review
//! queue (docs/serve.md, "Approving in the client").
//!
//! A form's answer is only as good as the client: a client configured to answer forms by itself approves
//! without the person. `--no-elicit` turns forms off; the review queue stays.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{
    BooleanSchema, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
};
use serde_json::{Value, json};

use super::runner::Runner;
use crate::runtime::snapshot::{self, Snapshot, Verdict};

/// How the person is asked and named.
pub struct Person {
    /// Who decides: recorded in the trace's `approval` record (the queue's and the forms' decisions).
    pub by: String,
    /// Whether to ask through the client at all (`--no-elicit` turns it off).
    pub elicit: bool,
}

/// The key of the one input request of an input-required result.
pub const INPUT_KEY: &str = "zamburak_claim";

/// The form's one field.
const FIELD: &str = "approve";

/// A claim as a form showed it: which run and snapshot, and which suspension (a claim decided and made
/// again would be another one).
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    pub run: String,
    path: PathBuf,
    pub code: String,
    digest: String,
    trace_prev: String,
    created_at: String,
    /// How long the claim may still wait.
    pub left: Duration,
    /// The values the form offers to remember, in the order of its `remember_N` ticks (`ARG` or `ARG[i]`).
    ticks: Vec<String>,
}

impl Shown {
    fn of(run: &str, path: &Path, s: &Snapshot) -> Shown {
        let left = s
            .expires_at
            .parse::<jiff::Timestamp>()
            .ok()
            .and_then(|t| u64::try_from(t.duration_since(jiff::Timestamp::now()).as_secs()).ok())
            .unwrap_or(0);
        Shown {
            run: run.to_string(),
            path: path.to_path_buf(),
            code: s.claim_code(),
            digest: s.claim_digest.clone(),
            trace_prev: s.trace_prev.clone(),
            created_at: s.created_at.clone(),
            left: Duration::from_secs(left),
            ticks: offered(s).into_iter().map(|(place, _)| place).collect(),
        }
    }

    fn same_suspension(&self, s: &Snapshot) -> bool {
        s.claim_digest == self.digest
            && s.trace_prev == self.trace_prev
            && s.created_at == self.created_at
    }
}

/// The form for the claim run `run` waits on (its snapshot at `path`, code `code` as the run's answer
/// named it), or `None` when there is nothing a form could approve: no such pending claim, values that do
/// not match the claim's digests, or a claim past its time.
pub fn form(run: &str, path: &Path, code: &str) -> Option<(Shown, ElicitRequestParams)> {
    let (path, snap) = snapshot::pending_file(path.to_path_buf())?;
    if snap.claim_code() != code || snap.expired() {
        return None;
    }
    let shown = snap.shown_checked().ok()?;
    // The words `zamburak approve` and the review queue use (crate::claim), every value whole.
    let text = crate::claim::claim_text_full(&snap.claim, shown);
    let drafts = snap.claim.on_approval.as_deref() == Some("draft");
    let approving = if drafts {
        "writes this call as a draft, once; nothing is sent"
    } else {
        "runs exactly this call, once"
    };
    let message = format!(
        "Zamburak: a plan your agent wrote waits for your decision (claim {code}, {run}). The agent \
         cannot see these values and cannot answer this form.\n\n{text}\n\
         Approve (tick, then accept): {approving}. Accept unticked, or decline: rejects it; the call does \
         not run and the run stops. Cancel: decides nothing; the claim waits in the review queue until {}.",
        snap.expires_at
    );
    let mut schema = ElicitationSchema::builder().required_bool_with(FIELD, |b: BooleanSchema| {
        b.title(format!("Approve claim {code}"))
            .description(format!(
                "Tick to approve claim {code} exactly as shown above; leave unticked to reject it."
            ))
            .with_default(false)
    });
    // A tick per value the approval may also remember, unticked: one answer never remembers a value the
    // person did not look at (docs/approvals.md, "Remembered values").
    for (i, (_, words)) in offered(&snap).into_iter().enumerate() {
        schema = schema.optional_bool_with(format!("{REMEMBER}{i}"), |b: BooleanSchema| {
            b.title(format!("Also remember {words}"))
                .description(
                    "Tick to remember this value when approving: a later claim with it says `known`, and \
                     the policy may accept it without asking.",
                )
                .with_default(false)
        });
    }
    let schema = schema.build_unchecked();
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    };
    Some((Shown::of(run, &path, &snap), params))
}

/// The prefix of a form's tick to remember a value (`remember_0`, `remember_1`, …).
const REMEMBER: &str = "remember_";

/// The values a claim offers to remember, as `(ARG or ARG[i], the words the tick shows)`: each value the
/// decision looked up that is not known already.
fn offered(s: &Snapshot) -> Vec<(String, String)> {
    s.shown_checked()
        .map(|shown| {
            shown
                .novelty
                .iter()
                .filter(|n| n.status != "known" && !n.roles.is_empty())
                .map(|n| {
                    (
                        n.place(),
                        format!(
                            "{} = {} ({})",
                            n.place(),
                            serde_json::Value::String(crate::text::visible(&n.value)),
                            n.line()
                        ),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The values the person ticked to remember in `content` (an accepted form's fields).
pub fn ticked(content: Option<&Value>, shown: &Shown) -> Vec<String> {
    shown
        .ticks
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            content.and_then(|c| c.get(format!("{REMEMBER}{i}"))) == Some(&Value::Bool(true))
        })
        .map(|(_, place)| place.clone())
        .collect()
}

/// The values ticked in an elicitation's result ([`ticked`]); none unless it was accepted.
pub fn ticked_of(result: &ElicitResult, shown: &Shown) -> Vec<String> {
    match result.action {
        ElicitationAction::Accept => ticked(result.content.as_ref(), shown),
        _ => Vec::new(),
    }
}

/// The values ticked in an input-required retry's `inputResponses`.
pub fn ticked_in(responses: Option<&rmcp::model::InputResponses>, shown: &Shown) -> Vec<String> {
    responses
        .and_then(|r| r.get(INPUT_KEY))
        .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
        .map_or_else(Vec::new, |r| ticked_of(&r, shown))
}

/// What a form's answer decides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    Approve,
    Reject,
    /// Nothing: the claim keeps waiting.
    Undecided,
}

impl Answer {
    pub fn word(self) -> &'static str {
        match self {
            Answer::Approve => "approved",
            Answer::Reject => "rejected",
            Answer::Undecided => "undecided",
        }
    }
}

/// The decision a form's result carries: approve only for an accept whose `approve` is `true` (the
/// boolean, nothing that merely looks like it).
pub fn answer_of(result: &ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => match result.content.as_ref().and_then(|c| c.get(FIELD)) {
            Some(Value::Bool(true)) => Answer::Approve,
            Some(Value::Bool(false)) => Answer::Reject,
            _ => Answer::Undecided,
        },
        ElicitationAction::Decline => Answer::Reject,
        // Cancel, and whatever a later protocol adds: nothing is decided.
        _ => Answer::Undecided,
    }
}

/// The answer in an input-required retry's `inputResponses`, or [`Answer::Undecided`].
pub fn answer_in(responses: Option<&rmcp::model::InputResponses>) -> Answer {
    responses
        .and_then(|r| r.get(INPUT_KEY))
        .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
        .map_or(Answer::Undecided, |r| answer_of(&r))
}

/// Decides the claim a form showed, if its snapshot still holds that very suspension, and keeps what the
/// continued run printed in the run's `output.txt` (the person's). Blocking: the run continues in a
/// worker. `Err`: nothing was decided, and why (not for the model: it can name files).
pub fn decide(
    runner: &Runner,
    by: &str,
    shown: &Shown,
    approve: bool,
    remember: &[String],
) -> Result<(), String> {
    let (path, snap) = snapshot::pending_file(shown.path.clone())
        .ok_or_else(|| "the claim no longer waits".to_string())?;
    if !shown.same_suspension(&snap) {
        return Err("the snapshot holds another claim than the form showed".into());
    }
    let mut printed = String::new();
    snapshot::decide(
        &path,
        Verdict {
            approve,
            code: Some(&shown.code),
            remember: if approve { remember } else { &[] },
        },
        by,
        &runner.engine,
        &mut |text| printed.push_str(text),
    )
    .map_err(|e| e.to_string())?;
    if !printed.is_empty() {
        use std::io::Write;
        let out = path.with_file_name("output.txt");
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(out)
        {
            let _ = f.write_all(printed.as_bytes());
        }
    }
    Ok(())
}

/// What the model is told about the asking: that the person was asked, and what they decided.
pub fn told(answer: Answer, decided: bool) -> Value {
    let note = match (answer, decided) {
        (Answer::Undecided, _) => {
            "the person was asked in the client and decided nothing: the claim still waits for them"
        }
        (_, false) => {
            "the person answered in the client, but the decision could not be taken: the claim still \
             waits for them in the review queue"
        }
        (Answer::Approve, true) => "the person approved the claim in the client",
        (Answer::Reject, true) => "the person rejected the claim in the client",
    };
    json!({ "asked": "form", "answer": answer.word(), "decided": decided, "note": note })
}

/// Most forms of 2026-07-28 sessions awaiting their retry; past it the oldest are forgotten (their
/// retries then decide nothing, and the claims wait in the queue).
const MAX_ASKS: usize = 1024;

/// The forms put in input-required results, by the request state given with them: random, single use,
/// kept in this server's memory only (the state the client echoes is a handle, never trusted data).
#[derive(Default)]
pub struct Asks {
    inner: Mutex<(HashMap<String, Shown>, VecDeque<String>)>,
}

impl Asks {
    /// A fresh request state for `shown`.
    pub fn issue(&self, shown: Shown) -> Option<String> {
        let state = crate::view::server::token().ok()?;
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (live, order) = &mut *g;
        live.insert(state.clone(), shown);
        order.push_back(state.clone());
        while live.len() > MAX_ASKS || order.len() > 2 * MAX_ASKS {
            match order.pop_front() {
                Some(old) => {
                    live.remove(&old);
                }
                None => break,
            }
        }
        Some(state)
    }

    /// Takes the form a request state was issued for: whatever the retry says, the state is never good
    /// again.
    pub fn take(&self, state: &str) -> Option<Shown> {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.0.remove(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
        let mut r = ElicitResult::new(action);
        r.content = content;
        r
    }

    #[test]
    fn only_a_ticked_true_of_an_accepted_form_remembers() {
        use ElicitationAction::*;
        let shown = Shown {
            run: "run-1".into(),
            path: PathBuf::from("p.zsnap"),
            code: "C".into(),
            digest: "d".into(),
            trace_prev: "t".into(),
            created_at: "c".into(),
            left: Duration::from_secs(1),
            ticks: vec!["to".into(), "cc[0]".into()],
        };
        let content =
            json!({"approve": true, "remember_0": "true", "remember_1": true, "remember_7": true});
        assert_eq!(
            ticked_of(&result(Accept, Some(content.clone())), &shown),
            vec!["cc[0]".to_string()]
        );
        assert!(ticked_of(&result(Decline, Some(content.clone())), &shown).is_empty());
        assert!(ticked_of(&result(Cancel, Some(content)), &shown).is_empty());
        assert!(ticked_of(&result(Accept, Some(json!({"approve": true}))), &shown).is_empty());
    }

    #[test]
    fn only_an_accept_with_approve_true_approves() {
        use ElicitationAction::*;
        assert_eq!(
            answer_of(&result(Accept, Some(json!({"approve": true})))),
            Answer::Approve
        );
        assert_eq!(
            answer_of(&result(Accept, Some(json!({"approve": false})))),
            Answer::Reject
        );
        for content in [
            None,
            Some(json!({})),
            Some(json!({"approve": "true"})),
            Some(json!({"approve": 1})),
            Some(json!([true])),
        ] {
            assert_eq!(
                answer_of(&result(Accept, content.clone())),
                Answer::Undecided,
                "{content:?}"
            );
        }
        assert_eq!(answer_of(&result(Decline, None)), Answer::Reject);
        assert_eq!(
            answer_of(&result(Cancel, Some(json!({"approve": true})))),
            Answer::Undecided
        );
    }

    #[test]
    fn a_retry_without_a_parsable_answer_decides_nothing() {
        let mut r = rmcp::model::InputResponses::new();
        assert_eq!(answer_in(None), Answer::Undecided);
        assert_eq!(answer_in(Some(&r)), Answer::Undecided);
        r.insert(
            INPUT_KEY.into(),
            json!({"action": "accept", "content": {"approve": true}}),
        );
        assert_eq!(answer_in(Some(&r)), Answer::Approve);
        r.insert(INPUT_KEY.into(), json!({"action": "sure"}));
        assert_eq!(answer_in(Some(&r)), Answer::Undecided);
    }

    #[test]
    fn a_request_state_is_good_once() {
        let asks = Asks::default();
        let shown = Shown {
            run: "run-1".into(),
            path: PathBuf::from("/r/run-1/plan.zsnap"),
            code: "AAAA-BBBB-CCCC".into(),
            digest: "sha256:00".into(),
            trace_prev: "11".into(),
            created_at: "t".into(),
            left: Duration::from_secs(1),
            ticks: Vec::new(),
        };
        let state = asks.issue(shown.clone()).unwrap();
        assert_eq!(asks.take(&state), Some(shown));
        assert_eq!(asks.take(&state), None);
        assert_eq!(asks.take(""), None);
    }
}
