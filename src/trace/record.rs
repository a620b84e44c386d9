//! The typed records of a trace. On disk each one also carries `seq`, `prev` and `hash` (see
//! [`crate::trace::canonical`]); those belong to the chain, not to the record.
//!
//! ```
//! use zamburak::trace::record::{End, Record};
//! let rec = Record::End(End { status: "finished".into(), exit_code: 0, outcome: "allow".into() });
//! let json = serde_json::to_value(&rec).unwrap();
//! assert_eq!(json["type"], "end");
//! assert_eq!(serde_json::from_value::<Record>(json).unwrap(), rec);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::label::LabelView;

/// The trace format this code writes. Format 2 added the header's `policy`; format 3 gives each argument the
/// whole value's label and a list's `elements` (format 2 recorded a list argument's own label); format 4 adds
/// `output` records and a claim's `on_approval`; format 5 names values by digests keyed with the run's secret
/// (`hmac-sha256:`, docs/semantics.md, "A shareable trace shares nothing private") where format 4 and older
/// named them by their plain `sha256:`. Formats 1 to 4 are read too.
pub const FORMAT: u32 = 5;
/// The oldest format this code reads.
pub const OLDEST_FORMAT: u32 = 1;

/// One trace record. Serialised with a `type` tag: `header`, `call`, `result`, `verifier`, `approval`,
/// `suspend`, `error`, `end`. Unknown fields are refused, so a record the reader accepts is one this version wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Header(Header),
    Call(Call),
    Result(CallResult),
    Verifier(VerifierUse),
    Output(Output),
    Approval(Approval),
    Suspend(Suspend),
    Error(PlanError),
    End(End),
}

impl Record {
    /// The `type` tag this record is written with.
    pub fn kind(&self) -> &'static str {
        match self {
            Record::Header(_) => "header",
            Record::Call(_) => "call",
            Record::Result(_) => "result",
            Record::Verifier(_) => "verifier",
            Record::Output(_) => "output",
            Record::Approval(_) => "approval",
            Record::Suspend(_) => "suspend",
            Record::Error(_) => "error",
            Record::End(_) => "end",
        }
    }
}

/// The first record (seq 0). Everything in it is trusted: it comes from the host, not from tools.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: u32,
    /// The zamburak version that wrote the trace.
    pub zamburak: String,
    /// `sha256:<hex>` of the plan source bytes.
    pub plan_sha256: String,
    /// `sha256:<hex>` of the policy file bytes.
    pub policy_sha256: String,
    /// `strict` or `normal`.
    pub mode: String,
    /// The plan source text (trusted when written before any tool data was seen; see `planner_context`).
    pub plan: String,
    /// RFC 3339 UTC time the run started.
    pub started_at: String,
    /// Which policy decided, with its text, so an auditor can read the rule behind every decision
    /// (format 2; absent in format 1 traces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyRecord>,
    /// `sha256:<hex>` of the MCP lock file the run checked its servers against (runs with MCP tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_lock_sha256: Option<String>,
    /// The planner context the plan was written in, for a plan a planner model wrote in a session
    /// (`mcp serve`): what the planner had read, whose label the plan's literals carry (docs/semantics.md,
    /// "The planner context label"). Absent for a plan given as a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planner_context: Option<crate::planner::ContextLabel>,
    /// `sha256:<hex>` of the person's remembered values as the run read them (`none`: there were none), for
    /// a run whose policy accepts `known(ROLE)` (docs/semantics.md, "Remembered values").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_sha256: Option<String>,
    /// The MCP servers the run started, by name: exactly those serving a tool the plan names (empty, and
    /// absent, when it started none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<String>,
}

/// The policy that decided a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyRecord {
    /// `flag` (`--policy`), `discovered` (the nearest `zamburak.yaml`) or `built-in`.
    pub origin: String,
    /// The file as the user named or found it, or `built-in default`.
    pub path: String,
    /// The policy's text; `policy_sha256` is its digest.
    pub text: String,
}

impl Header {
    /// A header for this zamburak version, started now; `plan_sha256` is computed from `plan`.
    ///
    /// ```
    /// use zamburak::trace::record::Header;
    /// let h = Header::new("x = 1\n", "sha256:00".into(), "strict");
    /// assert_eq!(h.format, 5);
    /// assert!(h.plan_sha256.starts_with("sha256:"));
    /// assert!(h.started_at.ends_with('Z'));
    /// ```
    pub fn new(plan: &str, policy_sha256: String, mode: &str) -> Header {
        Header {
            format: FORMAT,
            zamburak: env!("CARGO_PKG_VERSION").to_string(),
            plan_sha256: crate::trace::redact::sha256_bytes(plan.as_bytes()),
            policy_sha256,
            mode: mode.to_string(),
            plan: plan.to_string(),
            started_at: jiff::Timestamp::now().to_string(),
            policy: None,
            mcp_lock_sha256: None,
            planner_context: None,
            known_sha256: None,
            mcp_servers: Vec::new(),
        }
    }

    /// The same header naming the policy that decides.
    pub fn with_policy(mut self, origin: &str, path: &str, text: &str) -> Header {
        self.policy = Some(PolicyRecord {
            origin: origin.to_string(),
            path: path.to_string(),
            text: text.to_string(),
        });
        self
    }
}

/// One argument of a tool call as the claim saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgRecord {
    pub name: String,
    /// The label of the whole value: its own joined with everything inside it (what reaches the tool).
    pub label: LabelView,
    /// For a list or tuple whose elements' labels are not all the whole value's, each element's whole label,
    /// as the decision reads them (docs/semantics.md, "Further choices": list arguments); absent otherwise,
    /// where each element's label is `label` (so a long run of calls with lists pays nothing for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements: Option<Vec<LabelView>>,
    /// `hmac-sha256:<hex>` of the value's canonical JSON under the run's key (see
    /// [`crate::trace::redact::keyed_digest`]; `sha256:<hex>` in traces of format 4 and older).
    pub digest: String,
    /// The value itself, only when trusted and public (see [`crate::trace::redact::stored`]).
    pub preview: Option<Value>,
}

impl ArgRecord {
    /// What `elements` records for a list or tuple whose elements have these labels and whose whole value
    /// has `whole`: the elements, unless every one is the whole (then `None`, and each is `label`).
    pub fn elements_beside(whole: &LabelView, elements: Vec<LabelView>) -> Option<Vec<LabelView>> {
        elements.iter().any(|e| e != whole).then_some(elements)
    }
}

/// A tool call: the claim and the policy's decision on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub call_id: u32,
    /// 1-based plan line of the call site.
    pub line: u32,
    pub tool: String,
    pub args: Vec<ArgRecord>,
    /// The control context at the call.
    pub pc: LabelView,
    /// `allow`, `deny`, `confirm` or `draft`.
    pub decision: String,
    /// The policy rule that decided.
    pub rule: String,
    pub reason: String,
    /// True when the decision came from pre-flight analysis, before the plan ran.
    pub before_run: bool,
    /// For a tool served by an MCP server: the pin (sha256) of the tool definition the call was made
    /// against, as locked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_sha256: Option<String>,
    /// For a `confirm` claim: what approving it performs when that is weaker than the call itself
    /// (`draft`: the call also breaks a draft-level rule, which an approval does not lift; docs/semantics.md,
    /// "Approvals"). Part of the claim's digest, so the person approves exactly the effect the claim names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_approval: Option<String>,
    /// For a call whose decision the person's remembered values could change (docs/semantics.md,
    /// "Remembered values"): each value looked up and what the store said of it, never the value. Not part of the
    /// claim's digest: it is what the person is told about the claim, not what the claim performs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remembered: Vec<RememberedUse>,
}

/// One value a decision looked up among the remembered values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RememberedUse {
    pub arg: String,
    /// The element of a list, from 0; absent for the whole value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// `known`, `new` or `looks_like`.
    pub status: String,
}

impl RememberedUse {
    /// What the trace records of what the person was told: the status words, never a value.
    pub fn of(told: &[crate::known::Novelty]) -> Vec<RememberedUse> {
        told.iter()
            .map(|n| RememberedUse {
                arg: n.arg.clone(),
                index: n.index,
                status: n.status.clone(),
            })
            .collect()
    }
}

/// What a tool returned (`type: result`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallResult {
    pub call_id: u32,
    pub tool: String,
    pub label: LabelView,
    pub digest: String,
    pub preview: Option<Value>,
    /// Tags content scanners added to this result, each with the scanner and the rule that found it
    /// (docs/policy.md, "Scanners"). Absent when no scanner added one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scanned: Vec<crate::policy::scan::Finding>,
}

/// What one `print` of the plan showed the person (`type: output`): its label and sources, and its text only
/// when trusted and public (a digest otherwise), so an audit tells the agent's words from the data's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// The plan line of the last call before it, when known (0: before any call).
    pub after_call: u32,
    pub label: LabelView,
    pub digest: String,
    pub preview: Option<Value>,
}

/// A host verifier applied to a value (`type: verifier`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifierUse {
    pub call_id: u32,
    pub verifier: String,
    pub line: u32,
    pub ok: bool,
    /// The label of the verifier's result (or of its input when `ok` is false).
    pub label: LabelView,
}

/// A human decision on a `confirm` claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    pub call_id: u32,
    /// `approved` or `rejected`.
    pub decision: String,
    pub by: String,
    /// RFC 3339 time of the decision.
    pub at: String,
    /// Digest of the exact claim approved (tool + argument digests + plan position).
    pub claim_digest: String,
}

/// The run stopped at a `confirm` claim and waits for a human (`type: suspend`). A suspended trace has no
/// `end` record yet; `zamburak approve` or `reject` continues it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suspend {
    pub call_id: u32,
    /// Digest of the claim waiting for a decision (see [`Call::claim_digest`]).
    pub claim_digest: String,
    /// `sha256:<hex>` of the snapshot file's bytes: the only snapshot this trace can be resumed from.
    pub snapshot_sha256: String,
    /// RFC 3339 time after which the claim can no longer be approved.
    pub expires_at: String,
}

/// A plan exception or failed verifier that stopped the run (`type: error`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanError {
    pub line: Option<u32>,
    pub exc_type: String,
    /// Already redacted by the caller (see [`crate::trace::redact::redact_message`]).
    pub message: String,
}

/// The last record of a finished run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct End {
    /// How the run stopped, e.g. `finished`, `denied`, `error`, `rejected`.
    pub status: String,
    pub exit_code: i32,
    /// `allow`, `draft`, `confirm`, `deny`, `error` or `rejected` (docs/semantics.md, "Decisions").
    pub outcome: String,
}

impl Call {
    /// The digest a decision on a claim is bound to: tool, call id, plan line, each argument's name and value
    /// digest, and the control context. The value digests are keyed with the run's secret (format 5), so
    /// the claim digest, and the claim code the planner is told, cannot be recomputed from a guess of the
    /// values by anyone without the key (docs/semantics.md, "A shareable trace shares nothing private").
    pub fn claim_digest(&self) -> String {
        let args: Vec<Value> = self
            .args
            .iter()
            .map(|a| json!({"name": a.name, "digest": a.digest}))
            .collect();
        let mut body = json!({
            "tool": self.tool,
            "call_id": self.call_id,
            "line": self.line,
            "args": args,
            "pc": self.pc,
        });
        // Added only when present, so the digests of claims recorded before these fields stay the same.
        if let Some(effect) = &self.on_approval {
            body["on_approval"] = json!(effect);
        }
        if let Some(pin) = &self.tool_sha256 {
            body["tool_sha256"] = json!(pin);
        }
        crate::digest::sha256_bytes(body.to_string().as_bytes())
    }

    /// The short code a person gives `approve --claim` to say which claim they decided on: derived from
    /// [`Call::claim_digest`], so a different claim (another body, recipient or effect) has another code.
    pub fn claim_code(&self) -> String {
        claim_code(&self.claim_digest())
    }
}

/// The claim code of a claim digest (`sha256:<hex>`): its first 60 bits in Crockford base32, in three
/// groups of four (`7KQF-3MZD-A1XR`). Sixty bits: an attacker who shapes the data a claim is made of cannot
/// search for a second claim with the same code (2^60 digests), yet a person can read and type it.
pub fn claim_code(digest: &str) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    // 15 hex digits are 60 bits; a malformed digest still yields a code (that matches no real claim).
    let bits = u64::from_str_radix(hex.get(..15).unwrap_or("0"), 16).unwrap_or(0);
    let mut out = String::with_capacity(14);
    for i in 0..12 {
        if i > 0 && i % 4 == 0 {
            out.push('-');
        }
        let shift = 55 - 5 * i;
        out.push(char::from(ALPHABET[((bits >> shift) & 31) as usize]));
    }
    out
}

/// Whether `given` names the claim whose code is `code`: case, spaces and dashes do not matter, and the
/// letters Crockford base32 reads alike (`O`→`0`, `I`/`L`→`1`) are read as the digit.
pub fn same_claim_code(given: &str, code: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '-' | ' '))
            .map(|c| match c.to_ascii_uppercase() {
                'O' => '0',
                'I' | 'L' => '1',
                c => c,
            })
            .collect()
    };
    norm(given) == norm(code)
}

#[cfg(test)]
mod tests {
    #[test]
    fn claim_codes_are_sixty_bits_of_the_digest_and_read_forgivingly() {
        let a = format!("sha256:{}", "0".repeat(64));
        assert_eq!(claim_code(&a), "0000-0000-0000");
        let b = format!("sha256:fffffffffffffff{}", "0".repeat(49));
        assert_eq!(claim_code(&b), "ZZZZ-ZZZZ-ZZZZ");
        // The 61st bit onwards does not count; the 60th does.
        let c = format!("sha256:000000000000000f{}", "0".repeat(48));
        assert_eq!(claim_code(&c), claim_code(&a));
        let d = format!("sha256:000000000000001{}", "0".repeat(49));
        assert_eq!(claim_code(&d), "0000-0000-0001");
        assert!(same_claim_code("0000 oooo-ooo1", "0000-0000-0001"));
        assert!(same_claim_code("zzzz-zzzz-zzzz", "ZZZZ-ZZZZ-ZZZZ"));
        assert!(!same_claim_code("ZZZZ-ZZZZ-ZZZ", "ZZZZ-ZZZZ-ZZZZ"));
        assert!(!same_claim_code("", "ZZZZ-ZZZZ-ZZZZ"));
        assert_eq!(claim_code("garbage"), "0000-0000-0000");
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_are_refused_inside_the_tag() {
        let ok = json!({"type": "end", "status": "finished", "exit_code": 0, "outcome": "allow"});
        assert!(serde_json::from_value::<Record>(ok).is_ok());
        let extra = json!({"type": "end", "status": "finished", "exit_code": 0, "outcome": "allow", "x": 1});
        assert!(serde_json::from_value::<Record>(extra).is_err());
        let unknown_type = json!({"type": "bogus"});
        assert!(serde_json::from_value::<Record>(unknown_type).is_err());
    }

    #[test]
    fn tags_are_snake_case() {
        let r = Record::Error(PlanError {
            line: None,
            exc_type: "ValueError".into(),
            message: "m".into(),
        });
        assert_eq!(serde_json::to_value(&r).unwrap()["type"], "error");
        assert_eq!(r.kind(), "error");
        let r = Record::Result(CallResult {
            call_id: 1,
            tool: "t".into(),
            label: LabelView {
                integrity: "trusted".into(),
                verified: vec![],
                tags: vec![],
                readers: None,
                sources: vec![],
            },
            digest: "sha256:x".into(),
            preview: None,
            scanned: Vec::new(),
        });
        assert_eq!(serde_json::to_value(&r).unwrap()["type"], "result");
    }
}
