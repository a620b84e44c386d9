//! Table-driven tests of the decision procedure.

use std::collections::BTreeSet;
use std::path::Path;

use super::*;
use crate::label::{Integrity, KindSet};

const POLICY: &str = r#"
version: 1
user: me@example.com
tags: [PRIVATE, PII, AUTH_SECRET]
verifiers:
  verify_recipient: { kind: email_allowlist, allow: ["*@example.com"], mints: Recipient }
  verify_url: { kind: url_allowlist, schemes: [https], hosts: [docs.example.com], mints: SafeUrl }
tools:
  send_email:
    effect: send
    args:
      to: { require: [trusted, "verified(Recipient)"] }
      subject: {}
      body: { forbid_tags: [AUTH_SECRET], readers_must_include: to }
    on_violation: confirm
  draft_email:
    effect: send
    args:
      to: { require: trusted }
      body: {}
    on_violation: draft
  fetch_url:
    effect: read
    args:
      url: { forbid_tags: "*", require: [trusted, "verified(SafeUrl)"] }
  publish:
    effect: send
    args: { text: { public: true } }
  read_local:
    effect: read
    args: { path: {} }
    control: { require: any }
  add:
    effect: pure
    args: { a: {}, b: {} }
limits: { max_tool_calls: 10 }
"#;

struct World {
    policy: Policy,
    space: LabelSpace,
}

fn world() -> World {
    let policy = Policy::from_yaml_str(POLICY, "t.yaml", Path::new(".")).unwrap();
    let mut space = policy.label_space().unwrap();
    space.record_call(1, "get_email");
    space.record_call(2, "read_file");
    for p in ["alice@x.test", "bob@x.test"] {
        space.principal(p);
    }
    World { policy, space }
}

// Label builders. `from(1)` is "untrusted, from get_email#1".
fn lit() -> Label {
    Label::literal()
}
fn from(call: u32) -> Label {
    Label {
        integrity: Integrity::Untrusted,
        sources: BTreeSet::from([call]),
        ..Label::literal()
    }
}
fn with_tags(w: &World, mut l: Label, tags: &[&str]) -> Label {
    for t in tags {
        l.tags.0 |= 1 << w.space.tag_index(t).unwrap();
    }
    l
}
fn readers(w: &World, mut l: Label, names: &[&str]) -> Label {
    l.readers = Readers::Only(
        names
            .iter()
            .map(|n| w.space.find_principal(n).unwrap())
            .collect(),
    );
    l
}
fn verified(w: &World, l: Label, kind: &str) -> Label {
    l.mint(w.space.kind_index(kind).unwrap())
}
fn trusted(mut l: Label) -> Label {
    l.integrity = Integrity::Trusted;
    l
}

fn arg(name: &str, label: Label) -> ArgClaim {
    ArgClaim {
        name: name.into(),
        label,
        elements: None,
        texts: Texts::Unknown,
        digest: "sha256:00".into(),
        remembered: Default::default(),
    }
}
fn text_arg(name: &str, label: Label, text: &str) -> ArgClaim {
    ArgClaim {
        texts: Texts::one(text),
        ..arg(name, label)
    }
}
fn list_arg(name: &str, structure: Label, elements: Vec<Label>, texts: &[&str]) -> ArgClaim {
    ArgClaim {
        elements: Some(elements),
        texts: Texts::Strings(texts.iter().map(|s| s.to_string()).collect()),
        ..arg(name, structure)
    }
}

fn claim(tool: &str, args: Vec<ArgClaim>) -> Claim {
    Claim {
        tool: tool.into(),
        args,
        pc: lit(),
        calls_so_far: 0,
    }
}
fn send(to: ArgClaim, body: Label) -> Claim {
    claim(
        "send_email",
        vec![to, arg("subject", lit()), arg("body", body)],
    )
}
fn under(pc: Label, mut c: Claim) -> Claim {
    c.pc = pc;
    c
}

#[test]
fn decision_table() {
    let w = world();
    let private_for_alice = readers(&w, with_tags(&w, from(2), &["PRIVATE"]), &["alice@x.test"]);
    let secret = with_tags(&w, lit(), &["AUTH_SECRET"]);
    let cases: Vec<(&str, Claim, Outcome, &str)> = vec![
        // --- require on a scalar
        (
            "trusted recipient",
            send(text_arg("to", lit(), "a@b.test"), lit()),
            Outcome::Allow,
            "allow",
        ),
        (
            "untrusted recipient",
            send(text_arg("to", from(1), "a@b.test"), lit()),
            Outcome::Confirm,
            "args.to.require",
        ),
        (
            "verified recipient",
            send(
                text_arg("to", verified(&w, from(1), "Recipient"), "a@b.test"),
                lit(),
            ),
            Outcome::Allow,
            "allow",
        ),
        (
            "verified with the wrong kind",
            send(
                text_arg("to", verified(&w, from(1), "SafeUrl"), "a@b.test"),
                lit(),
            ),
            Outcome::Confirm,
            "args.to.require",
        ),
        (
            "single requirement: trusted",
            claim(
                "draft_email",
                vec![text_arg("to", from(1), "x"), arg("body", lit())],
            ),
            Outcome::Draft,
            "args.to.require",
        ),
        // --- require on a list
        (
            "list: trusted structure, trusted and verified elements",
            send(
                list_arg(
                    "to",
                    lit(),
                    vec![lit(), verified(&w, from(1), "Recipient")],
                    &["me@example.com", "bob@example.com"],
                ),
                lit(),
            ),
            Outcome::Allow,
            "allow",
        ),
        (
            "list: untrusted structure",
            send(
                list_arg("to", from(1), vec![lit()], &["a@example.com"]),
                lit(),
            ),
            Outcome::Confirm,
            "args.to.require",
        ),
        (
            "list: structure untrusted even if verified",
            send(
                list_arg(
                    "to",
                    verified(&w, from(1), "Recipient"),
                    vec![lit()],
                    &["a@example.com"],
                ),
                lit(),
            ),
            Outcome::Confirm,
            "args.to.require",
        ),
        (
            "list: one untrusted element",
            send(
                list_arg(
                    "to",
                    lit(),
                    vec![lit(), from(1)],
                    &["a@example.com", "b@example.com"],
                ),
                lit(),
            ),
            Outcome::Confirm,
            "args.to.require",
        ),
        (
            // No recipient: refused, whatever the labels (docs/policy.md, fixed rules).
            "list: empty, trusted structure",
            send(list_arg("to", lit(), vec![], &[]), lit()),
            Outcome::Deny,
            "fixed.malformed_recipients",
        ),
        // --- forbid_tags
        (
            "forbidden tag on body",
            send(text_arg("to", lit(), "me@example.com"), secret.clone()),
            Outcome::Confirm,
            "args.body.forbid_tags",
        ),
        (
            "other tag on body is fine for forbid_tags",
            send(
                text_arg("to", lit(), "me@example.com"),
                with_tags(&w, lit(), &["PII"]),
            ),
            Outcome::Allow,
            "allow",
        ),
        (
            "forbid * on url",
            claim(
                "fetch_url",
                vec![arg("url", with_tags(&w, lit(), &["PII"]))],
            ),
            Outcome::Deny,
            "args.url.forbid_tags",
        ),
        (
            "forbid * looks at list elements",
            claim(
                "fetch_url",
                vec![list_arg(
                    "url",
                    lit(),
                    vec![with_tags(&w, lit(), &["PRIVATE"])],
                    &[],
                )],
            ),
            Outcome::Deny,
            "args.url.forbid_tags",
        ),
        (
            "verified url",
            claim(
                "fetch_url",
                vec![arg("url", verified(&w, from(1), "SafeUrl"))],
            ),
            Outcome::Allow,
            "allow",
        ),
        (
            "untrusted url",
            claim("fetch_url", vec![arg("url", from(1))]),
            Outcome::Deny,
            "args.url.require",
        ),
        // --- public
        (
            "public text",
            claim("publish", vec![arg("text", lit())]),
            Outcome::Allow,
            "allow",
        ),
        (
            "tagged text",
            claim("publish", vec![arg("text", with_tags(&w, lit(), &["PII"]))]),
            Outcome::Deny,
            "args.text.public",
        ),
        (
            "restricted readers",
            claim(
                "publish",
                vec![arg("text", readers(&w, lit(), &["alice@x.test"]))],
            ),
            Outcome::Deny,
            "args.text.public",
        ),
        // --- readers_must_include
        (
            "reader recipient",
            send(
                text_arg("to", lit(), "alice@x.test"),
                private_for_alice.clone(),
            ),
            Outcome::Allow,
            "allow",
        ),
        (
            "reader recipient, other case",
            send(
                text_arg("to", lit(), " Alice@X.test"),
                private_for_alice.clone(),
            ),
            Outcome::Allow,
            "allow",
        ),
        (
            "non-reader recipient",
            send(
                text_arg("to", lit(), "bob@x.test"),
                private_for_alice.clone(),
            ),
            Outcome::Confirm,
            "args.body.readers_must_include",
        ),
        (
            "never-seen recipient",
            send(
                text_arg("to", lit(), "eve@evil.test"),
                private_for_alice.clone(),
            ),
            Outcome::Confirm,
            "args.body.readers_must_include",
        ),
        (
            "the user always reads",
            send(
                text_arg("to", lit(), "ME@example.com"),
                private_for_alice.clone(),
            ),
            Outcome::Allow,
            "allow",
        ),
        (
            "public body to anyone",
            send(text_arg("to", lit(), "eve@evil.test"), from(1)),
            Outcome::Allow,
            "allow",
        ),
        (
            "list of recipients, one not a reader",
            send(
                list_arg(
                    "to",
                    lit(),
                    vec![lit(), lit()],
                    &["alice@x.test", "bob@x.test"],
                ),
                private_for_alice.clone(),
            ),
            Outcome::Confirm,
            "args.body.readers_must_include",
        ),
        (
            "list of recipients, all readers",
            send(
                list_arg(
                    "to",
                    lit(),
                    vec![lit(), lit()],
                    &["alice@x.test", "me@example.com"],
                ),
                private_for_alice.clone(),
            ),
            Outcome::Allow,
            "allow",
        ),
        // --- the control context
        (
            "untrusted pc",
            under(
                from(1),
                send(text_arg("to", lit(), "me@example.com"), lit()),
            ),
            Outcome::Confirm,
            "control.require",
        ),
        (
            "untrusted pc, control any",
            under(from(1), claim("read_local", vec![arg("path", lit())])),
            Outcome::Allow,
            "allow",
        ),
        (
            "pc with a forbidden tag",
            under(
                secret.clone(),
                send(text_arg("to", lit(), "me@example.com"), lit()),
            ),
            Outcome::Confirm,
            "control.forbid_tags",
        ),
        (
            "pc with any tag under forbid *",
            under(
                trusted(with_tags(&w, lit(), &["PRIVATE"])),
                claim("fetch_url", vec![arg("url", lit())]),
            ),
            Outcome::Deny,
            "control.forbid_tags",
        ),
        (
            "pc not readable by the recipient",
            under(
                readers(&w, lit(), &["alice@x.test"]),
                send(text_arg("to", lit(), "bob@x.test"), lit()),
            ),
            Outcome::Confirm,
            "control.readers_must_include",
        ),
        (
            "pc readable by the recipient",
            under(
                readers(&w, lit(), &["alice@x.test"]),
                send(text_arg("to", lit(), "alice@x.test"), lit()),
            ),
            Outcome::Allow,
            "allow",
        ),
        (
            "pc must be public for a public argument",
            under(
                readers(&w, lit(), &["alice@x.test"]),
                claim("publish", vec![arg("text", lit())]),
            ),
            Outcome::Deny,
            "control.public",
        ),
        // --- first violation in declaration order on ties
        (
            "several violations: first declared wins",
            under(
                from(1),
                send(text_arg("to", from(1), "bob@x.test"), secret.clone()),
            ),
            Outcome::Confirm,
            "args.to.require",
        ),
        // --- pure tools
        (
            "pure tool ignores labels",
            under(
                from(1),
                claim("add", vec![arg("a", from(1)), arg("b", secret.clone())]),
            ),
            Outcome::Allow,
            "allow",
        ),
        (
            "pure tool: unknown label still denied",
            claim("add", vec![arg("a", Label::unknown()), arg("b", lit())]),
            Outcome::Deny,
            "fixed.unknown_label",
        ),
        (
            "pure tool: missing argument still denied",
            claim("add", vec![arg("a", lit())]),
            Outcome::Deny,
            "fixed.missing_argument",
        ),
        // --- fixed rules
        (
            "unknown tool",
            claim("rm_rf", vec![]),
            Outcome::Deny,
            "fixed.unknown_tool",
        ),
        (
            "a verifier is not a tool",
            claim("verify_url", vec![arg("x", lit())]),
            Outcome::Deny,
            "fixed.unknown_tool",
        ),
        (
            "unknown argument",
            claim("fetch_url", vec![arg("url", lit()), arg("headers", lit())]),
            Outcome::Deny,
            "fixed.unknown_argument",
        ),
        (
            "argument given twice",
            claim("fetch_url", vec![arg("url", lit()), arg("url", lit())]),
            Outcome::Deny,
            "fixed.unknown_argument",
        ),
        (
            "missing argument",
            claim(
                "send_email",
                vec![text_arg("to", lit(), "x"), arg("body", lit())],
            ),
            Outcome::Deny,
            "fixed.missing_argument",
        ),
        (
            "unknown argument label",
            send(text_arg("to", Label::unknown(), "x"), lit()),
            Outcome::Deny,
            "fixed.unknown_label",
        ),
        (
            "unknown element label",
            send(
                list_arg("to", lit(), vec![lit(), Label::unknown()], &[]),
                lit(),
            ),
            Outcome::Deny,
            "fixed.unknown_label",
        ),
        (
            "unknown pc",
            under(
                Label::unknown(),
                claim("read_local", vec![arg("path", lit())]),
            ),
            Outcome::Deny,
            "fixed.unknown_label",
        ),
        (
            "fixed rules beat on_violation",
            send(text_arg("to", from(1), "x"), Label::unknown()),
            Outcome::Deny,
            "fixed.unknown_label",
        ),
    ];
    let mut failures = Vec::new();
    for (name, c, outcome, rule) in &cases {
        let d = decide(&w.policy, &w.space, c);
        if d.outcome != *outcome || d.rule != *rule {
            failures.push(format!(
                "{name}: expected {outcome:?} {rule}, got {:?} {} ({})",
                d.outcome, d.rule, d.reason
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn the_tool_call_cap_counts_calls_already_made() {
    let w = world();
    let mut c = claim("read_local", vec![arg("path", lit())]);
    c.calls_so_far = 9;
    assert_eq!(decide(&w.policy, &w.space, &c).outcome, Outcome::Allow);
    c.calls_so_far = 10;
    let d = decide(&w.policy, &w.space, &c);
    assert_eq!(
        (d.outcome, d.rule.to_string().as_str()),
        (Outcome::Deny, "limits.max_tool_calls")
    );
    c.tool = "add".into();
    c.args = vec![arg("a", lit()), arg("b", lit())];
    assert_eq!(
        decide(&w.policy, &w.space, &c).rule,
        "limits.max_tool_calls",
        "pure calls count too"
    );
}

#[test]
fn reasons_name_labels_and_sources_never_values() {
    let w = world();
    let body = readers(&w, with_tags(&w, from(2), &["PRIVATE"]), &["alice@x.test"]);
    let mut c = send(text_arg("to", lit(), "eve@evil.test"), body);
    c.args[2].digest = "sha256:feedface".into();
    let d = decide(&w.policy, &w.space, &c);
    assert_eq!(d.rule, "args.body.readers_must_include");
    assert!(
        d.reason.contains("PRIVATE")
            && d.reason.contains("read_file#2")
            && d.reason.contains("1 person besides the user")
            && !d.reason.contains("alice@x.test"),
        "{}",
        d.reason
    );
    // The plan wrote the recipient (trusted), so the reason names it; never a value's digest.
    assert!(
        d.reason.contains("`eve@evil.test` (recipient 1 in `to`)")
            && !d.reason.contains("feedface"),
        "{}",
        d.reason
    );
    // A recipient chosen by data is counted, never echoed.
    let mut c = send(
        list_arg(
            "to",
            lit(),
            vec![lit(), from(1)],
            &["me@example.com", "eve@evil.test"],
        ),
        lit(),
    );
    c.pc = readers(&w, with_tags(&w, lit(), &["PRIVATE"]), &["alice@x.test"]);
    let d = decide(&w.policy, &w.space, &c);
    assert!(!d.reason.contains("eve@evil.test"), "{}", d.reason);

    let d = decide(
        &w.policy,
        &w.space,
        &send(text_arg("to", from(1), "eve@evil.test"), lit()),
    );
    assert!(
        d.reason.contains("trusted or verified(Recipient)") && d.reason.contains("get_email#1"),
        "{}",
        d.reason
    );
    assert!(!d.reason.contains("eve@evil.test"), "{}", d.reason);
}

#[test]
fn outcomes_order_by_restrictiveness_and_serialise_lowercase() {
    assert!(
        Outcome::Allow < Outcome::Draft
            && Outcome::Draft < Outcome::Confirm
            && Outcome::Confirm < Outcome::Deny
    );
    assert_eq!(
        serde_json::to_string(&Outcome::Confirm).unwrap(),
        "\"confirm\""
    );
    assert_eq!(
        serde_json::from_str::<Outcome>("\"draft\"").unwrap(),
        Outcome::Draft
    );
}

#[test]
fn a_kind_missing_from_the_space_never_satisfies_verified() {
    let w = world();
    // A label space built for another policy: kind 0 there is not `Recipient` here.
    let other = LabelSpace::new(&[], &["PRIVATE", "PII", "AUTH_SECRET"]).unwrap();
    let l = Label {
        verified: KindSet::ALL,
        ..from(1)
    };
    let d = decide(&w.policy, &other, &send(text_arg("to", l, "x"), lit()));
    assert_eq!(d.rule, "args.to.require");
}

#[test]
fn recipients_that_are_not_strings_are_refused_whatever_the_labels() {
    let w = world();
    // Trusted, public data to a trusted recipient: only the recipients' shape can be wrong.
    let shapes = [
        ("a dict, a nested list, None or a number", Texts::Malformed),
        ("an empty list", Texts::Strings(vec![])),
    ];
    for (what, texts) in shapes {
        let to = ArgClaim {
            texts,
            ..arg("to", lit())
        };
        let d = decide(&w.policy, &w.space, &send(to, lit()));
        assert_eq!(
            (d.outcome, d.rule.to_string().as_str()),
            (Outcome::Deny, "fixed.malformed_recipients"),
            "{what}: {}",
            d.reason
        );
    }
    // The rule names recipients only: a malformed body (a dict) is checked by its labels, as before.
    let body = ArgClaim {
        texts: Texts::Malformed,
        ..arg("body", lit())
    };
    let c = claim(
        "send_email",
        vec![
            text_arg("to", lit(), "me@example.com"),
            arg("subject", lit()),
            body,
        ],
    );
    assert_eq!(decide(&w.policy, &w.space, &c).outcome, Outcome::Allow);
    // A flat list of strings is read as recipients.
    let to = list_arg(
        "to",
        lit(),
        vec![lit(), lit()],
        &["me@example.com", "bob@example.com"],
    );
    assert_eq!(
        decide(&w.policy, &w.space, &send(to, lit())).outcome,
        Outcome::Allow
    );
}

#[test]
fn a_forbid_tags_with_its_own_on_violation_decides_its_violations() {
    let text = POLICY.replace(
        "body: { forbid_tags: [AUTH_SECRET], readers_must_include: to }",
        "body: { forbid_tags: { tags: [AUTH_SECRET], on_violation: deny }, readers_must_include: to }",
    );
    assert_ne!(text, POLICY);
    let policy = Policy::from_yaml_str(&text, "t.yaml", Path::new(".")).unwrap();
    let w = world();
    let secret = with_tags(&w, lit(), &["AUTH_SECRET"]);
    let to = || text_arg("to", lit(), "me@example.com");
    // The tool says `confirm`; the requirement says `deny`: deny, even though the user may read it.
    let d = decide(&policy, &w.space, &send(to(), secret.clone()));
    assert_eq!(
        (d.outcome, d.rule.to_string().as_str()),
        (Outcome::Deny, "args.body.forbid_tags")
    );
    // Through the control context too.
    let d = decide(&policy, &w.space, &under(secret.clone(), send(to(), lit())));
    assert_eq!(
        (d.outcome, d.rule.to_string().as_str()),
        (Outcome::Deny, "control.forbid_tags")
    );
    // Without it, the tool's `on_violation` as before.
    let d = decide(&w.policy, &w.space, &send(to(), secret));
    assert_eq!(d.outcome, Outcome::Confirm);
    // The form round-trips through the printed policy.
    let printed = serde_saphyr::to_string(policy.file()).unwrap();
    assert!(printed.contains("on_violation: deny"), "{printed}");
    let again = Policy::from_yaml_str(&printed, "p.yaml", Path::new(".")).unwrap();
    assert_eq!(again.file(), policy.file());
}

/// Arguments that leave and declare no check get one against their party (policy::sinks), and the decision
/// applies it like any declared requirement, to the argument and to the control context.
#[test]
fn an_argument_that_leaves_without_a_check_is_checked_against_its_party() {
    let text = r#"
version: 1
user: me@example.com
tags: [PRIVATE, AUTH_SECRET]
providers:
  local: { kind: fixture, fixtures: f.json, reader: "llm:local" }
servers:
  own: { command: srv, reader: "mcp:own" }
  other: { command: srv }
tools:
  ask:
    source: builtin.llm.local
    effect: send
    args:
      prompt: { forbid_tags: { tags: [AUTH_SECRET], on_violation: deny }, readers_must_include: provider }
      data: { readers_must_include: provider }
      schema: { require: trusted }
    control: { require: any }
    on_violation: confirm
  store:
    source: mcp.own.store
    effect: write
    args: { key: {} }
    control: { require: any }
  post:
    source: mcp.other.post
    effect: read
    args: { text: {} }
    control: { require: any }
"#;
    let policy = Policy::from_yaml_str(text, "t.yaml", Path::new(".")).unwrap();
    let mut space = policy.label_space().unwrap();
    space.record_call(1, "read_config");
    for p in ["llm:local", "mcp:own"] {
        space.principal(p);
    }
    let w = World { policy, space };
    let secret = trusted(with_tags(&w, readers(&w, from(1), &[]), &["AUTH_SECRET"]));
    let private = trusted(with_tags(&w, readers(&w, from(1), &[]), &["PRIVATE"]));
    let ask = |schema: Label| {
        claim(
            "ask",
            vec![
                arg("prompt", lit()),
                arg("data", lit()),
                arg("schema", schema),
            ],
        )
    };
    let rule = |d: &Decision| (d.outcome, d.rule.to_string());
    // The issue's bypass: a secret in the schema. Readable by the provider, it is still AUTH_SECRET, which
    // `prompt` forbids with its own `deny`: the schema gets both.
    let readable = readers(&w, secret.clone(), &["llm:local"]);
    let d = decide(&w.policy, &w.space, &ask(readable));
    assert_eq!(rule(&d), (Outcome::Deny, "args.schema.forbid_tags".into()));
    assert!(
        d.reason.ends_with(
            "(the default check for an argument that leaves: declare one in the policy to change it)"
        ),
        "{}",
        d.reason
    );
    // Private data the provider may not read: its readers.
    let d = decide(&w.policy, &w.space, &ask(private.clone()));
    assert_eq!(
        rule(&d),
        (Outcome::Confirm, "args.schema.readers_must_include".into())
    );
    assert!(d.reason.contains("`llm:local`"), "{}", d.reason);
    // A literal schema chosen under a private condition: the control context.
    let d = decide(&w.policy, &w.space, &under(private.clone(), ask(lit())));
    assert_eq!(
        rule(&d),
        (Outcome::Confirm, "control.readers_must_include".into())
    );
    assert_eq!(
        decide(&w.policy, &w.space, &ask(lit())).outcome,
        Outcome::Allow
    );
    // An MCP server with a reader: `readers_must_include: server`; the user's data may not go, what the
    // server may read may.
    let d = decide(
        &w.policy,
        &w.space,
        &claim("store", vec![arg("key", private.clone())]),
    );
    assert_eq!(
        rule(&d),
        (Outcome::Deny, "args.key.readers_must_include".into())
    );
    assert!(d.reason.contains("`mcp:own`"), "{}", d.reason);
    let shared = readers(&w, private.clone(), &["mcp:own"]);
    let d = decide(
        &w.policy,
        &w.space,
        &claim("store", vec![arg("key", shared)]),
    );
    assert_eq!(d.outcome, Outcome::Allow, "{}", d.reason);
    // A claim cannot name the implicit recipient itself: naming the user (a reader of everything) changes
    // nothing, the server's own reader is checked.
    let d = decide(
        &w.policy,
        &w.space,
        &claim(
            "store",
            vec![
                arg("key", private.clone()),
                text_arg("server", lit(), "me@example.com"),
            ],
        ),
    );
    assert_eq!(
        rule(&d),
        (Outcome::Deny, "args.key.readers_must_include".into())
    );
    // A server without a reader is anyone: public only.
    let d = decide(
        &w.policy,
        &w.space,
        &claim("post", vec![arg("text", private)]),
    );
    assert_eq!(rule(&d), (Outcome::Deny, "args.text.public".into()));
    assert_eq!(
        decide(
            &w.policy,
            &w.space,
            &claim("post", vec![arg("text", lit())])
        )
        .outcome,
        Outcome::Allow
    );
}

/// docs/semantics.md, "A party may read its own address, as recorded": a contact from the user's private
/// address book may be mailed alone; two of them may not be mailed together (each would learn the other's
/// address); an address computed from one carries no mark.
#[test]
fn a_party_may_read_its_own_address_as_recorded_and_nothing_more() {
    let policy = Policy::from_yaml_str(
        "version: 1\nuser: me@example.com\ntags: [PRIVATE]\ntools:\n  contacts:\n    effect: read\n    args: {}\n    control: { require: any }\n    returns: { integrity: trusted, tags: [PRIVATE], readers: { from_fields: [email] } }\n  send:\n    effect: send\n    args: { to: { require: trusted }, body: { readers_must_include: to } }\n",
        "t.yaml",
        Path::new("."),
    )
    .unwrap();
    let mut space = policy.label_space().unwrap();
    let book = serde_json::json!([{"email": "ann@x.test"}, {"email": "Bo+work@X.test"}]);
    let v = crate::policy::label_result(
        &policy,
        "contacts",
        &book,
        &mut space,
        1,
        crate::label::Packed::LITERAL,
    );
    // `book[i]["email"]` with a literal index: the field, the record's and the list's structure as choices.
    let email = |i: usize| -> (String, Label) {
        let crate::value::Raw::List(items) = &v.raw else {
            panic!()
        };
        let crate::value::Raw::Dict(fields) = &items[i].raw else {
            panic!()
        };
        let (_, field) = &fields[0];
        let crate::value::Raw::Str(text) = &field.raw else {
            panic!()
        };
        let label = space
            .decode(&field.label)
            .join(&space.decode(&items[i].label).influence())
            .join(&space.decode(&v.label).influence());
        (text.clone(), label)
    };
    let claim = |to: ArgClaim| Claim {
        tool: "send".into(),
        args: vec![
            to,
            ArgClaim {
                name: "body".into(),
                label: Label::literal(),
                elements: None,
                texts: Texts::one("hi"),
                digest: String::new(),
                remembered: Default::default(),
            },
        ],
        pc: Label::literal(),
        calls_so_far: 0,
    };
    let scalar = |(text, label): (String, Label)| ArgClaim {
        name: "to".into(),
        label,
        elements: None,
        texts: Texts::one(text),
        digest: String::new(),
        remembered: Default::default(),
    };
    let rule = |c: &Claim| decide(&policy, &space, c).rule.to_string();
    for i in [0, 1] {
        assert_eq!(rule(&claim(scalar(email(i)))), "allow", "contact {i} alone");
    }
    let (a, b) = (email(0), email(1));
    let both = ArgClaim {
        name: "to".into(),
        label: Label::literal(),
        elements: Some(vec![a.1.clone(), b.1.clone()]),
        texts: Texts::Strings(vec![a.0.clone(), b.0.clone()]),
        digest: String::new(),
        remembered: Default::default(),
    };
    assert_eq!(rule(&claim(both)), "args.to.readers_must_include");
    let computed = (format!("{}x", a.0), a.1.computed());
    assert_eq!(
        rule(&claim(scalar(computed))),
        "args.to.readers_must_include"
    );
    // Without the mark (the same label, computed on), the contact alone is no reader of the book's
    // structure: the mark is what lets them be mailed.
    assert_eq!(
        rule(&claim(scalar((a.0.clone(), a.1.computed())))),
        "args.to.readers_must_include"
    );
}
