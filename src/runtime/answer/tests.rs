use serde_json::json;

use super::*;

fn policy(yaml: &str) -> Policy {
    match Policy::from_yaml_str(yaml, "t.yaml", std::path::Path::new(".")) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

const BASE: &str = "version: 1\nuser: me@example.com\ntags: [PRIVATE]\ntools:\n";

fn knows(tools: &str, planner: &str) -> Knows {
    Knows::of(&policy(&format!("{BASE}{tools}{planner}")))
}

const TOOLS: &str = r#"  read_file:
    effect: read
    args: { path: {} }
    control: { require: any }
    returns: { integrity: untrusted, tags: [PRIVATE], readers: user }
  fetch_url:
    effect: read
    args: { url: {} }
    control: { require: any }
    returns: { integrity: untrusted, readers: public }
  clock:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: trusted, readers: public }
  inbox:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: trusted, readers: { from_fields: [from] } }
  inbox_for_planner:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: trusted, readers: { from_fields: [from], also: ["llm:planner"] } }
  counted:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: trusted, readers: public, structure_readers: user }
  send:
    effect: send
    args: { to: {} }
"#;

#[test]
fn a_tool_is_transparent_only_when_every_result_is_readable_whatever_the_data() {
    let strict = knows(TOOLS, "");
    assert!(strict.transparent("clock"));
    assert!(strict.transparent("inbox_for_planner"));
    for opaque in [
        "read_file",
        "fetch_url",
        "inbox",
        "counted",
        "send",
        "undeclared",
    ] {
        assert!(!strict.transparent(opaque), "{opaque}");
    }
    let reading = knows(TOOLS, "planner: { reads_untrusted: true }\n");
    assert!(reading.transparent("fetch_url"));
    assert!(!reading.transparent("read_file"));
}

#[test]
fn the_default_policies_cut_at_every_read() {
    let default = Knows::of(&Policy::bundled_default().unwrap_or_else(|e| panic!("{e}")));
    for (name, _) in Policy::bundled_default()
        .unwrap_or_else(|e| panic!("{e}"))
        .tools()
    {
        assert!(!default.transparent(name), "{name}");
    }
}

fn plain() -> Value {
    json!({"integrity": "trusted", "verified": [], "tags": [], "readers": null, "sources": []})
}

fn secret() -> Value {
    json!({"integrity": "untrusted", "verified": [], "tags": ["PRIVATE"], "readers": [], "sources": ["read_file#1"]})
}

fn call(id: u64, tool: &str, decision: &str) -> Value {
    json!({"type": "call", "call_id": id, "line": id, "tool": tool, "args": [], "pc": plain(),
           "decision": decision, "rule": "r", "reason": "why", "before_run": false})
}

fn out(text: &str, label: Value) -> Value {
    json!({"type": "output", "after_call": 0, "label": label, "digest": "sha256:x", "preview": text})
}

fn tell_of(records: &[Value], knows: &Knows) -> Answer {
    let values = BTreeMap::new();
    tell(
        records,
        knows,
        &About {
            run: "run-1",
            trace: "t.zjson",
            resumable: true,
            values: &values,
        },
    )
    .answer
}

#[test]
fn a_read_the_planner_may_not_read_cuts_the_answer_after_its_decision_in_every_world() {
    let k = knows(TOOLS, "");
    let header = json!({"type": "header"});
    // `print(c); if k[i] == c: print("hit")`: the worlds differ only after the read.
    let world = |hits: &[bool]| {
        let mut r = vec![
            header.clone(),
            out("start", plain()),
            call(1, "read_file", "allow"),
        ];
        r.push(
            json!({"type": "result", "call_id": 1, "tool": "read_file", "label": secret(),
                      "digest": "sha256:y", "preview": null}),
        );
        for (i, hit) in hits.iter().enumerate() {
            r.push(out(&format!("{i}"), plain()));
            if *hit {
                r.push(out("hit", plain()));
            }
        }
        r.push(json!({"type": "end", "status": "completed", "exit_code": 0, "outcome": "allow"}));
        r
    };
    let a = tell_of(&world(&[true, false, false]), &k);
    let b = tell_of(&world(&[false, false, true]), &k);
    assert_eq!(a, b);
    assert!(a.is_cut());
    assert_eq!(a.status, "for_the_person");
    assert_eq!(
        a.output,
        vec![ToldText {
            text: "start".into(),
            label: None
        }]
    );
    assert_eq!(a.decisions.len(), 1);
    assert!(a.ended);
    // The same run as it suspends later: still the same answer, but for whether it ended.
    let mut waiting = world(&[true]);
    waiting.pop();
    waiting.push(call(2, "send", "confirm"));
    waiting.push(
        json!({"type": "suspend", "call_id": 2, "claim_digest": "d", "snapshot_sha256": "s",
                        "expires_at": "t"}),
    );
    let w = tell_of(&waiting, &k);
    assert_eq!(
        (w.decisions.len(), w.waiting.is_none(), w.ended),
        (1, true, false)
    );
}

#[test]
fn a_transparent_tool_shows_its_result_and_what_follows() {
    let k = knows(TOOLS, "");
    let records = vec![
        json!({"type": "header"}),
        call(1, "clock", "allow"),
        json!({"type": "result", "call_id": 1, "tool": "clock", "label": plain(), "digest": "d", "preview": 1}),
        out("it is late", plain()),
        call(2, "send", "confirm"),
        json!({"type": "suspend", "call_id": 2, "claim_digest": "d", "snapshot_sha256": "s", "expires_at": "t"}),
    ];
    let a = tell_of(&records, &k);
    assert!(!a.is_cut());
    assert_eq!(a.status, "waiting_for_the_person");
    assert_eq!(a.output[0].text, "it is late");
    assert_eq!(a.waiting.as_ref().map(|w| w.tool.as_str()), Some("send"));
    // The person approves: the send runs, and its outcome is theirs.
    let mut approved = records.clone();
    approved.push(
        json!({"type": "approval", "call_id": 2, "decision": "approved", "by": "me", "at": "t",
                         "claim_digest": "d"}),
    );
    approved
        .push(json!({"type": "end", "status": "completed", "exit_code": 0, "outcome": "confirm"}));
    let a = tell_of(&approved, &k);
    assert!(a.is_cut());
    assert_eq!(a.decisions[1].approval.as_deref(), Some("approved"));
    // Rejected: nothing ran, and the end is the planner's to know.
    let mut rejected = records;
    rejected.push(
        json!({"type": "approval", "call_id": 2, "decision": "rejected", "by": "me", "at": "t",
                         "claim_digest": "d"}),
    );
    rejected
        .push(json!({"type": "end", "status": "rejected", "exit_code": 1, "outcome": "rejected"}));
    let a = tell_of(&rejected, &k);
    assert!(!a.is_cut());
    assert_eq!(a.status, "rejected");
}

#[test]
fn what_the_walk_does_not_know_or_may_not_read_cuts() {
    let k = knows(TOOLS, "");
    for odd in [
        json!({"type": "bogus"}),
        out("x", secret()),
        out("x", json!("garbage")),
        json!({"type": "call", "call_id": 1}),
        json!({"type": "result", "call_id": 1, "tool": "clock", "label": secret(), "digest": "d", "preview": null}),
    ] {
        let a = tell_of(
            &[
                json!({"type": "header"}),
                out("before", plain()),
                odd.clone(),
            ],
            &k,
        );
        assert!(a.is_cut(), "{odd}");
        assert_eq!(a.output.len(), 1, "{odd}");
        let said = a.to_value().to_string();
        assert!(
            !said.contains("PRIVATE") && !said.contains("read_file#1"),
            "{said}"
        );
    }
}

#[test]
fn a_redacted_error_is_told_in_fixed_words() {
    let k = knows(TOOLS, "");
    let records = vec![
        json!({"type": "header"}),
        json!({"type": "error", "line": 3, "exc_type": "ToolError",
               "message": "clock failed <redacted: what the tool wrote, 12 characters, sha256:abc>"}),
        json!({"type": "end", "status": "error", "exit_code": 1, "outcome": "error"}),
    ];
    let a = tell_of(&records, &k).to_value().to_string();
    assert!(
        !a.contains("12 characters") && !a.contains("sha256:abc"),
        "{a}"
    );
}

#[test]
fn the_cut_answer_names_nothing_the_data_chose() {
    let said = serde_json::to_string(CUT_MARKER).unwrap_or_default();
    for word in ["#", "sha256", "label", "PRIVATE", "untrusted"] {
        assert!(!said.contains(word), "{word}");
    }
}

#[test]
fn a_denial_before_the_run_is_told_whatever_labels_lint_predicted() {
    let k = knows(TOOLS, "");
    let mut denied = call(1, "send", "deny");
    denied["before_run"] = json!(true);
    denied["args"] = json!([{"name": "to", "label": secret(), "digest": "none", "preview": null}]);
    let records = vec![
        json!({"type": "header"}),
        denied,
        json!({"type": "end", "status": "denied", "exit_code": 3, "outcome": "deny"}),
    ];
    let a = tell_of(&records, &k);
    assert!(!a.is_cut());
    assert_eq!(a.status, "denied");
    assert_eq!(a.decisions[0].decision, "deny");
}

#[test]
fn a_decision_that_read_the_remembered_values_is_cut_before_in_every_world() {
    // docs/semantics.md, "Remembered values": whether a payee is remembered is the user's. Two worlds that
    // differ only in the store: in one the send is allowed (and runs), in the other it waits. The planner is
    // told the same in both, and nothing of the send.
    let k = knows(TOOLS, "");
    let header = json!({"type": "header"});
    let with_store = |mut c: Value, status: &str| {
        c["remembered"] = json!([{"arg": "to", "status": status}]);
        c
    };
    let known = vec![
        header.clone(),
        out("start", plain()),
        call(1, "clock", "allow"),
        json!({"type": "result", "call_id": 1, "tool": "clock", "label": plain(), "digest": "sha256:c",
               "preview": "noon"}),
        with_store(call(2, "send", "allow"), "known"),
        json!({"type": "result", "call_id": 2, "tool": "send", "label": plain(), "digest": "sha256:s",
               "preview": null}),
        out("sent", plain()),
        json!({"type": "end", "status": "completed", "exit_code": 0, "outcome": "allow"}),
    ];
    let new = vec![
        header.clone(),
        out("start", plain()),
        call(1, "clock", "allow"),
        json!({"type": "result", "call_id": 1, "tool": "clock", "label": plain(), "digest": "sha256:c",
               "preview": "noon"}),
        with_store(call(2, "send", "confirm"), "new"),
        json!({"type": "suspend", "call_id": 2, "claim_digest": "d", "snapshot_sha256": "s",
               "expires_at": "t"}),
    ];
    let a = tell_of(&known, &k);
    let mut b = tell_of(&new, &k);
    assert!(a.is_cut() && b.is_cut());
    // Only whether the run is still going may differ (the termination channel, docs/serve.md).
    assert!(a.ended && !b.ended);
    b.ended = a.ended;
    assert_eq!(a, b);
    assert_eq!(a.decisions.len(), 1, "{:?}", a.decisions);
    assert_eq!(a.decisions[0].tool, "clock");
    // Without the store's mark the same allowed send is told (the control: the cut is the store's).
    let mut unmarked = known.clone();
    unmarked[4] = call(2, "send", "allow");
    assert_eq!(tell_of(&unmarked, &k).decisions.len(), 2);
}
