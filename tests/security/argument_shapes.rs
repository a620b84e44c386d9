//! Arguments of every shape are checked: recipients that are not a string or a flat list of strings are
//! refused (`fixed.malformed_recipients`), and `forbid_tags`, `public` and `require` see the labels inside
//! dicts, nested lists and `None`.
//!
//! Red-team regression: on `a7b7e77`, `send_email(to={"bob@example.com": 1}, body=read_file(...))`,
//! `to=[["bob@example.com"]]` and `to=None` were decided `allow` (the recipient list read as empty), and
//! only the Maildir adapter's own parsing stopped delivery; a tool without that check would have delivered.

use crate::common;

use std::path::Path;

use common::backend::Canned;
use common::world::{World, calls};
use serde_json::Value;
use zamburak::lower::Mode;
use zamburak::policy::Policy;
use zamburak::runtime::run::{Run, RunInput};

#[test]
fn malformed_recipients_are_denied_and_nothing_is_sent() {
    let shapes = [
        "{\"bob@example.com\": 1}",
        "[[\"bob@example.com\"]]",
        "None",
        "[]",
        "(\"bob@example.com\", 3)",
        "[\"bob@example.com\", None]",
        "3",
    ];
    for to in shapes {
        let world = World::new(None);
        let plan = world.write_plan(
            "plan.py",
            &format!(
                "notes = read_file(path=\"notes.md\")\nsend_email(to={to}, subject=\"s\", body=notes)\n"
            ),
        );
        let trace = world.path("plan.zjson");
        let out = world.run(&plan, &["--trace", trace.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "to={to}: {stderr}");
        assert!(world.messages("out/outbox").is_empty(), "to={to}");
        assert!(world.messages("out/drafts").is_empty(), "to={to}");
        let calls = calls(&trace, Some("send_email"));
        assert_eq!(calls.len(), 1, "to={to}");
        assert_eq!(calls[0]["decision"], "deny", "to={to}");
        assert_eq!(calls[0]["rule"], "fixed.malformed_recipients", "to={to}");
    }
}

#[test]
fn well_formed_recipients_still_pass() {
    // The same plans with a string and a flat list, tuple or set: the rule does not refuse what is well
    // formed.
    for to in [
        "\"me@example.com\"",
        "[\"me@example.com\"]",
        "(\"me@example.com\",)",
        "{\"me@example.com\"}",
    ] {
        let world = World::new(None);
        let plan = world.write_plan(
            "plan.py",
            &format!(
                "notes = read_file(path=\"notes.md\")\nsend_email(to={to}, subject=\"s\", body=notes)\n"
            ),
        );
        let out = world.run(&plan, &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "to={to}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(world.messages("out/outbox").len(), 1, "to={to}");
    }
}

const POLICY: &str = r#"
version: 1
mode: strict
user: me@example.com
tags: [PRIVATE]
tools:
  secret:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: trusted, tags: [PRIVATE], readers: user }
  restricted:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: trusted, readers: user }
  attacker:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: untrusted, readers: public }
  no_tags:
    effect: send
    args: { x: { forbid_tags: [PRIVATE] } }
  only_public:
    effect: send
    args: { x: { public: true } }
  only_trusted:
    effect: send
    args: { x: { require: trusted } }
"#;

#[test]
fn forbid_tags_public_and_require_see_inside_every_shape() {
    let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
    let rules = [
        ("secret", "no_tags", "args.x.forbid_tags"),
        ("restricted", "only_public", "args.x.public"),
        ("attacker", "only_trusted", "args.x.require"),
    ];
    // `v` carries the offending label; each shape wraps it. `None if ... else None` is a None whose label
    // is the choice's.
    let shapes = [
        "{'k': v}",
        "{v: 'k'}",
        "[[v]]",
        "[('a', [v])]",
        "None if v == '' else None",
        "[None if v == '' else None]",
    ];
    for (source, sink, rule) in rules {
        for shape in shapes {
            for mode in [Mode::Strict, Mode::Normal] {
                let plan = format!("v = {source}()\n{sink}(x={shape})\n");
                let mut tools = Canned::new(|_| Value::String("v".into()));
                let report = Run::new(&RunInput {
                    source: &plan,
                    policy: &policy,
                    mode,
                })
                .without_preflight()
                .execute(&mut tools, None, &mut |_| {});
                let d = report
                    .decisions
                    .iter()
                    .find(|d| d.tool == sink)
                    .unwrap_or_else(|| panic!("{plan}: {report:?}"));
                assert_eq!(
                    (d.decision, d.rule.to_string().as_str()),
                    (zamburak::policy::Outcome::Deny, rule),
                    "{mode:?} {plan}"
                );
                assert_eq!(
                    tools.calls,
                    vec![source.to_string()],
                    "{plan}: the sink ran"
                );
            }
        }
    }
}

/// A built-in tool's argument of the wrong type stops the run before the effect, in Zamburak's words: the
/// argument and the type it must have. The type the value had is named only for the plan's own value; for a
/// value from data (whose type an attacker may choose) the message names its source instead. Nothing is sent.
#[test]
fn a_wrong_argument_type_names_the_type_only_for_the_plans_own_value() {
    for (body, shown, hidden) in [
        ("42", "got int", "another type"),
        (
            "len(read_inbox(limit=2))",
            "got a value of another type, from read_inbox#1",
            "got int",
        ),
    ] {
        let world = World::new(None);
        let plan = world.write_plan(
            "plan.py",
            &format!("send_email(to=\"me@example.com\", subject=\"s\", body={body})\n"),
        );
        let out = world.run_expect(&plan, &[], 1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("error[TypeError]: `send_email`: argument `body` must be str; "),
            "{stderr}"
        );
        assert!(stderr.contains(shown), "{body}: {stderr}");
        assert!(!stderr.contains(hidden), "{body}: {stderr}");
        assert!(!stderr.contains("<redacted"), "{body}: {stderr}");
        assert!(world.messages("out/outbox").is_empty(), "{body}");
        assert!(world.messages("out/drafts").is_empty(), "{body}");
    }
}
