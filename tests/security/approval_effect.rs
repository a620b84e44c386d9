//! Approving a claim never performs a stronger effect than the claim names (docs/semantics.md, "Approvals"),
//! over random policies and argument labels.
//!
//! The oracle is independent of how `on_approval` is computed: an approval lifts exactly the confirm-level
//! violations, so what it performs must equal the decision of the same call under the same policy with
//! every confirm-level rule taken out. And the claim text a person reads says "writes a draft" exactly when
//! the approval drafts.

use std::collections::BTreeSet;
use std::path::Path;

use proptest::prelude::*;
use zamburak::label::{Integrity, Label, LabelSpace, LabelView, Readers};
use zamburak::policy::{ArgClaim, Claim, Outcome, Policy, Texts, decide, on_approval};
use zamburak::runtime::run::ClaimShown;
use zamburak::trace::record::Call;

/// One rule's level: its own `on_violation`, or the tool's.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Level {
    Tool,
    Confirm,
    Draft,
    Deny,
}

#[derive(Clone, Debug)]
struct Shape {
    tool_level: &'static str,
    to_require: Option<&'static str>,
    body_forbid: Option<Level>,
    body_readers_of_to: bool,
    control_trusted: bool,
}

#[derive(Clone, Debug)]
struct Labels {
    to_trusted: bool,
    to_verified: bool,
    to: &'static str,
    body_trusted: bool,
    body_pii: bool,
    body_readers: Option<Vec<&'static str>>,
    pc_trusted: bool,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        prop_oneof![Just("confirm"), Just("draft")],
        prop_oneof![
            Just(None),
            Just(Some("trusted")),
            Just(Some("[trusted, \"verified(Recipient)\"]"))
        ],
        prop_oneof![
            Just(None),
            Just(Some(Level::Tool)),
            Just(Some(Level::Confirm)),
            Just(Some(Level::Draft)),
            Just(Some(Level::Deny))
        ],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(tool_level, to_require, body_forbid, body_readers_of_to, control_trusted)| Shape {
                tool_level,
                to_require,
                body_forbid,
                body_readers_of_to,
                control_trusted,
            },
        )
}

fn labels() -> impl Strategy<Value = Labels> {
    (
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just("alice@x.test"), Just("bob@x.test")],
        any::<bool>(),
        any::<bool>(),
        prop_oneof![
            Just(None),
            Just(Some(vec!["alice@x.test"])),
            Just(Some(vec!["bob@x.test"])),
            Just(Some(vec![]))
        ],
        any::<bool>(),
    )
        .prop_map(
            |(to_trusted, to_verified, to, body_trusted, body_pii, body_readers, pc_trusted)| {
                Labels {
                    to_trusted,
                    to_verified,
                    to,
                    body_trusted,
                    body_pii,
                    body_readers,
                    pc_trusted,
                }
            },
        )
}

/// The policy of `shape`; with `lifted`, every rule whose level is `confirm` is taken out.
fn policy_yaml(s: &Shape, lifted: bool) -> String {
    let level_of = |l: Level| match l {
        Level::Tool => s.tool_level,
        Level::Confirm => "confirm",
        Level::Draft => "draft",
        Level::Deny => "deny",
    };
    let keep = |l: Level| !lifted || level_of(l) != "confirm";
    // An argument without `readers_must_include` says its readers are not checked, so the loader adds no
    // default readers check (docs/semantics.md: every argument that leaves is a sink) to either policy: a
    // `forbid_tags` no longer stands in for one.
    let stated = "forbid_tags: { tags: [NEVER], on_violation: deny }".to_string();
    let unchecked = "readers: any, reason: \"the property's own readers rule\"".to_string();
    let mut to = vec![stated.clone(), unchecked.clone()];
    if let Some(r) = s.to_require.filter(|_| keep(Level::Tool)) {
        to.push(format!("require: {r}"));
    }
    let mut body = Vec::new();
    match s.body_forbid {
        Some(l) if keep(l) => match l {
            Level::Tool => body.push("forbid_tags: [PII]".to_string()),
            other => body.push(format!(
                "forbid_tags: {{ tags: [PII], on_violation: {} }}",
                level_of(other)
            )),
        },
        _ => body.push(stated.clone()),
    }
    if s.body_readers_of_to && keep(Level::Tool) {
        body.push("readers_must_include: to".into());
    } else {
        body.push(unchecked.clone());
    }
    let control = if s.control_trusted && keep(Level::Tool) {
        "trusted"
    } else {
        "any"
    };
    format!(
        "version: 1\nuser: me@example.com\ntags: [PII, NEVER]\nverifiers:\n  verify_recipient: {{ kind: email_allowlist, allow: [\"*@x.test\"], mints: Recipient }}\ntools:\n  send:\n    source: builtin.mail.send\n    effect: send\n    args:\n      to: {{ {} }}\n      subject: {{ {stated}, {unchecked} }}\n      body: {{ {} }}\n    control: {{ require: {control} }}\n    on_violation: {}\n",
        to.join(", "),
        body.join(", "),
        s.tool_level
    )
}

fn claim(space: &mut LabelSpace, l: &Labels) -> Claim {
    space.record_call(1, "read_inbox");
    let mut to = Label::literal();
    if !l.to_trusted {
        to.integrity = Integrity::Untrusted;
        to.sources = BTreeSet::from([1]);
    }
    if l.to_verified {
        to = to.mint(space.kind_index("Recipient").unwrap());
    }
    let mut body = Label::literal();
    if !l.body_trusted {
        body.integrity = Integrity::Untrusted;
        body.sources = BTreeSet::from([1]);
    }
    if l.body_pii {
        body.tags.0 |= 1 << space.tag_index("PII").unwrap();
    }
    if let Some(names) = &l.body_readers {
        body.readers = Readers::Only(names.iter().map(|n| space.principal(n).unwrap()).collect());
    }
    let mut pc = Label::literal();
    if !l.pc_trusted {
        pc.integrity = Integrity::Untrusted;
        pc.sources = BTreeSet::from([1]);
    }
    Claim {
        tool: "send".into(),
        args: vec![
            ArgClaim {
                name: "to".into(),
                label: to,
                elements: None,
                texts: Texts::one(l.to),
                digest: "sha256:00".into(),
                remembered: Default::default(),
            },
            ArgClaim {
                name: "subject".into(),
                label: Label::literal(),
                elements: None,
                texts: Texts::Unknown,
                digest: "sha256:02".into(),
                remembered: Default::default(),
            },
            ArgClaim {
                name: "body".into(),
                label: body,
                elements: None,
                texts: Texts::Unknown,
                digest: "sha256:01".into(),
                remembered: Default::default(),
            },
        ],
        pc,
        calls_so_far: 0,
    }
}

fn load(yaml: &str) -> Policy {
    Policy::from_yaml_str(yaml, "p.yaml", Path::new(".")).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// The claim text a person reads, for a claim whose approval performs `effect`.
fn claim_text(effect: Outcome) -> String {
    let view = LabelView {
        integrity: "trusted".into(),
        ..LabelView::default()
    };
    let call = Call {
        call_id: 2,
        line: 1,
        tool: "send".into(),
        args: vec![],
        pc: view,
        decision: "confirm".into(),
        rule: "r".into(),
        reason: "why".into(),
        before_run: false,
        tool_sha256: None,
        on_approval: (effect == Outcome::Draft).then(|| "draft".into()),
        remembered: Vec::new(),
    };
    zamburak::claim::claim_text(&call, &ClaimShown::default())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn an_approval_performs_exactly_what_its_claim_names(s in shape(), l in labels()) {
        let policy = load(&policy_yaml(&s, false));
        let mut space = policy.label_space().unwrap();
        let c = claim(&mut space, &l);
        let d = decide(&policy, &space, &c);
        if d.outcome != Outcome::Confirm {
            // Only a claim held for confirmation reaches a person.
            return Ok(());
        }
        let performed = on_approval(&policy, &space, &c);

        let lifted = load(&policy_yaml(&s, true));
        let mut lifted_space = lifted.label_space().unwrap();
        // `to` is a recipient, so with no `require` it gets `require: trusted` at the tool's level
        // (docs/semantics.md, "Recipients are a role"): no policy text takes that rule out, so the lifted
        // claim meets it instead.
        let mut met = l.clone();
        met.to_trusted |= s.tool_level == "confirm";
        let lc = claim(&mut lifted_space, &met);
        let oracle = decide(&lifted, &lifted_space, &lc).outcome;
        prop_assert_eq!(performed, oracle, "policy:\n{}\nlabels: {:?}", policy_yaml(&s, false), l);
        prop_assert!(performed <= Outcome::Draft);

        let text = claim_text(performed);
        let says_draft = text.contains("approving this writes a draft; it does not send");
        prop_assert_eq!(says_draft, performed == Outcome::Draft, "{}", text);
    }
}

/// The oracle can tell: a call that breaks both a draft-level and a confirm-level rule drafts when approved.
#[test]
fn the_reproduction_drafts() {
    let s = Shape {
        tool_level: "draft",
        to_require: Some("trusted"),
        body_forbid: Some(Level::Confirm),
        body_readers_of_to: false,
        control_trusted: false,
    };
    let l = Labels {
        to_trusted: false,
        to_verified: false,
        to: "bob@x.test",
        body_trusted: true,
        body_pii: true,
        body_readers: None,
        pc_trusted: true,
    };
    let policy = load(&policy_yaml(&s, false));
    let mut space = policy.label_space().unwrap();
    let c = claim(&mut space, &l);
    assert_eq!(decide(&policy, &space, &c).outcome, Outcome::Confirm);
    assert_eq!(on_approval(&policy, &space, &c), Outcome::Draft);
}
