//! Plan code that a builtin or method calls (catalogue rows with a callback: key functions, `map`, `filter`,
//! `list.sort`) runs as the body of a loop over the container: its `pc` joins the container's structure
//! label and each element it gets carries that label (docs/semantics.md, "Callbacks").
//!
//! Red-team regression: on `a7b7e77` a key function ran under the caller's `pc`, so an attacker's mail
//! decided whether and how often a send happened, and neither `run` nor `lint` saw it. The end-to-end tests
//! use the real binary, the default policy and a copy of the bundled Maildir, and check the outbox. The
//! generated tests compare every catalogue row with the equivalent `for` loop, in both modes, at run time
//! (decisions and trace labels) and in lint (predicted decisions and `pc`).

use crate::common;

use std::path::Path;

use common::backend::get_returns;
use common::world::World;
use serde_json::{Value, json};
use zamburak::analysis::lint;
use zamburak::lower::Mode;
use zamburak::plan::subset::{CallableAt, Callback, Over, callbacks};
use zamburak::policy::Policy;
use zamburak::runtime::run::{Run, RunInput};
use zamburak::trace::TraceWriter;
use zamburak::trace::record::Header;

// ---- end to end: the red team's plans --------------------------------------------------------------------

/// Plans that send one message per matching mail from plan code a builtin or method calls.
fn side_effecting_callbacks() -> Vec<(&'static str, String)> {
    let def_k = "hits = search_email(query=\"meeting\")\ndef k(m):\n    send_email(to=\"me@example.com\", subject=\"ping\", body=\"one more\")\n    return 0\n";
    vec![
        ("sorted key", format!("{def_k}ordered = sorted(hits, key=k)\n")),
        ("min key", format!("{def_k}first = min(hits, key=k)\n")),
        ("max key", format!("{def_k}last = max(hits, key=k)\n")),
        ("list.sort key", format!("{def_k}hits.sort(key=k)\n")),
        ("map", format!("{def_k}r = list(map(k, hits))\n")),
        ("filter", format!("{def_k}r = list(filter(k, hits))\n")),
        (
            "lambda key",
            "hits = search_email(query=\"meeting\")\nordered = sorted(hits, key=lambda m: [send_email(to=\"me@example.com\", subject=\"ping\", body=\"one more\"), 0][1])\n".to_string(),
        ),
    ]
}

#[test]
fn a_send_inside_a_callback_over_mail_is_not_allowed() {
    for (what, plan) in side_effecting_callbacks() {
        let world = World::new(None);
        // The bundled inbox must hold matching mail, or the test could not fail.
        let probe = world.write_plan(
            "probe.py",
            "hits = search_email(query=\"meeting\")\nsend_email(to=\"me@example.com\", subject=\"n\", body=str(len(hits) > 0))\n",
        );
        let out = world.run(&probe, &[]);
        assert_eq!(out.status.code(), Some(0), "{what}: probe failed");
        assert!(world.messages("out/outbox")[0].contains("True"), "{what}");
        std::fs::remove_dir_all(world.path("out")).unwrap();

        let path = world.write_plan("plan.py", &plan);
        let trace = world.path("plan.zjson");
        let out = world.run(&path, &["--trace", trace.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // `send_email` violates `control.require: trusted`, whose `on_violation` is `confirm`: the run
        // stops for a human (exit 4) at the first attempt.
        assert_eq!(out.status.code(), Some(4), "{what}: {stderr}");
        assert!(
            world.messages("out/outbox").is_empty(),
            "{what}: a message was sent"
        );
        let text = std::fs::read_to_string(&trace).unwrap();
        let calls: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|r| r["type"] == "call" && r["tool"] == "send_email")
            .collect();
        assert_eq!(calls.len(), 1, "{what}: {text}");
        assert_eq!(calls[0]["decision"], "confirm", "{what}");
        assert_eq!(calls[0]["rule"], "control.require", "{what}");
        assert_eq!(calls[0]["pc"]["integrity"], "untrusted", "{what}");
    }
}

#[test]
fn lint_warns_about_a_send_inside_a_callback_over_mail() {
    for (what, plan) in side_effecting_callbacks() {
        let world = World::new(None);
        let path = world.write_plan("plan.py", &plan);
        let out = assert_cmd::Command::cargo_bin("zamburak")
            .unwrap()
            .args(["lint", "--format", "json", "--policy"])
            .arg(world.path("policy.yaml"))
            .arg(&path)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{what}: {e}: {}", String::from_utf8_lossy(&out.stdout)));
        let text = report.to_string();
        assert!(
            text.contains("Z203") && text.contains("control.require"),
            "{what}: lint did not predict the control violation: {text}"
        );
    }
}

// ---- generated: every catalogue row against its `for` loop ------------------------------------------------

const POLICY: &str = r#"
version: 1
mode: strict
user: me@example.com
tags: [PRIVATE, AUTH_SECRET]
tools:
  get:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: untrusted, tags: [PRIVATE], readers: user }
  sink:
    effect: send
    args:
      # Private data may go (no secret): what decides the call is the control context here. A `forbid_tags`
      # never replaces the readers check, so `x` says its readers are not checked (docs/policy.md,
      # "Arguments that leave").
      x: { forbid_tags: [AUTH_SECRET], readers: any, reason: "the test's sink: the condition decides" }
    control: { require: trusted }
    # A violation drafts instead of stopping the run, so every call is decided and recorded.
    on_violation: draft
"#;

/// The plan that hands the callback `k` to `row` over the untrusted list `xs`, binding `r`.
fn call_with(row: &Callback, k: &str) -> String {
    match (row.method, row.callable, row.over) {
        (true, CallableAt::Keyword(kw), Over::TheReceiver) => {
            format!("xs.{}({kw}={k})\nr = xs\n", row.name)
        }
        (false, CallableAt::Keyword(kw), Over::TheArgument) => {
            format!("r = {}(xs, {kw}={k})\n", row.name)
        }
        (false, CallableAt::First, Over::TheRest) => format!("r = list({}({k}, xs))\n", row.name),
        other => panic!(
            "tests/properties/callbacks.rs does not know how to call {} ({other:?}): add it here",
            row.name
        ),
    }
}

/// One pair for each row and body: the callback plan and the equivalent loop.
fn pairs() -> Vec<(String, String, String)> {
    let bodies = [
        // A tool call in the body: its pc must carry the list's structure, and its argument the element's.
        ("send", "sink(x=m)\n"),
        // A conditional send: the condition reads the element.
        (
            "conditional send",
            "if m == 'a':\n        sink(x='literal')\n",
        ),
    ];
    let mut out = Vec::new();
    for row in callbacks() {
        for (what, body) in bodies {
            let head = "xs = get()\n";
            let def = format!("def k(m):\n    {body}    return m\n");
            let callback = format!("{head}{def}{}sink(x='after')\n", call_with(&row, "k"));
            let looped = format!("{head}for m in xs:\n    {body}sink(x='after')\n");
            out.push((format!("{} / {what}", row.name), callback, looped));
        }
        // The same through a lambda.
        let lambda = "lambda m: [sink(x=m), m][1]";
        let callback = format!("xs = get()\n{}sink(x='after')\n", call_with(&row, lambda));
        let looped = "xs = get()\nfor m in xs:\n    sink(x=m)\nsink(x='after')\n".to_string();
        out.push((format!("{} / lambda", row.name), callback, looped));
    }
    // Several iterables: each argument carries every structure, as the unpacked target of a loop over zip.
    out.push((
        "map / two iterables".into(),
        "xs = get()
ys = ['p', 'q']
def k2(m, n):
    sink(x=m)
    sink(x=n)
    return m
r = list(map(k2, ys, xs))
sink(x='after')
"
        .into(),
        "xs = get()
ys = ['p', 'q']
for m, n in zip(ys, xs):
    sink(x=m)
    sink(x=n)
sink(x='after')
"
        .into(),
    ));
    // Several positional arguments to min/max: the key gets each argument, nothing is iterated.
    out.push((
        "max / several arguments".into(),
        "xs = get()
def k(m):
    sink(x=m)
    return m
r = max('p', xs[0], key=k)
sink(x='after')
"
        .into(),
        "xs = get()
def k(m):
    sink(x=m)
    return m
k('p')
k(xs[0])
sink(x='after')
"
        .into(),
    ));
    out
}

/// Each `sink` call of a run: (decision, rule, pc, label of `x`), from the trace.
fn sink_calls(plan: &str, policy: &Policy, mode: Mode) -> Vec<(String, String, Value, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.zjson");
    let mode_name = if mode == Mode::Strict {
        "strict"
    } else {
        "normal"
    };
    let mut writer =
        TraceWriter::create(&path, Header::new(plan, "sha256:x".into(), mode_name)).unwrap();
    let report = Run::new(&RunInput {
        source: plan,
        policy,
        mode,
    })
    .without_preflight()
    .execute(
        &mut get_returns(json!(["b", "a", "c"])),
        Some(&mut writer),
        &mut |_| {},
    );
    writer.close().unwrap();
    assert!(
        report.error.is_none(),
        "{mode:?}: {:?}\n{plan}",
        report.error
    );
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "call" && r["tool"] == "sink")
        .map(|r| {
            (
                r["decision"].as_str().unwrap().to_string(),
                r["rule"].as_str().unwrap().to_string(),
                r["pc"].clone(),
                r["args"][0]["label"].clone(),
            )
        })
        .collect()
}

#[test]
fn every_callback_runs_like_the_body_of_a_for_loop() {
    let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
    let pairs = pairs();
    assert!(pairs.len() >= 3 * callbacks().len());
    for (what, callback, looped) in pairs {
        for mode in [Mode::Strict, Mode::Normal] {
            let a = sink_calls(&callback, &policy, mode);
            let b = sink_calls(&looped, &policy, mode);
            // The key runs once per element (plus the final send) for the send bodies, so the comparison
            // covers several calls; a callback that sent nothing could not pass.
            assert!(a.len() >= 2, "{what}: {a:?}");
            // Calls inside the callback, in the same order as the loop's; then the send after it.
            assert_eq!(
                a.len(),
                b.len(),
                "{what} {mode:?}: callback {a:#?}\nloop {b:#?}"
            );
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(
                    (&x.0, &x.1),
                    (&y.0, &y.1),
                    "{what} {mode:?}: decisions differ\n{callback}\n{looped}"
                );
                assert_eq!(
                    x.2, y.2,
                    "{what} {mode:?}: pc differs\n{callback}\n{looped}"
                );
                assert_eq!(
                    x.3, y.3,
                    "{what} {mode:?}: label of x differs\n{callback}\n{looped}"
                );
            }
            if !what.contains("several arguments") {
                // Inside the callback the untrusted list decides: the send is drafted, never allowed.
                assert_eq!(a[0].0, "draft", "{what} {mode:?}");
                assert_eq!(a[0].1, "control.require", "{what} {mode:?}");
            }
        }
    }
}

#[test]
fn lint_predicts_every_callback_like_its_for_loop() {
    let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
    for (what, callback, looped) in pairs() {
        for mode in [Mode::Strict, Mode::Normal] {
            let a = lint(&callback, &policy, mode);
            let b = lint(&looped, &policy, mode);
            let first = |r: &zamburak::analysis::LintReport| {
                let c = r
                    .calls
                    .iter()
                    .find(|c| c.tool == "sink")
                    .unwrap_or_else(|| panic!("{what}: no sink site"));
                (
                    c.may.outcome,
                    c.must.outcome,
                    c.pc_may.integrity.clone(),
                    c.pc_may.tags.clone(),
                    c.pc_must.integrity.clone(),
                )
            };
            let (x, y) = (first(&a), first(&b));
            if what.contains("two iterables") {
                // Lint reads `zip(...)` as an opaque container, so the loop's `must` is weaker than the
                // callback's (the runtime's pc is untrusted either way); the worst case must agree.
                assert_eq!(
                    (&x.0, &x.2, &x.3),
                    (&y.0, &y.2, &y.3),
                    "{what} {mode:?}: lint differs\n{callback}\n{looped}"
                );
                assert!(x.1 >= y.1, "{what} {mode:?}");
            } else {
                assert_eq!(x, y, "{what} {mode:?}: lint differs\n{callback}\n{looped}");
            }
            if !what.contains("several arguments") {
                assert_eq!(
                    first(&a).0,
                    zamburak::policy::Outcome::Draft,
                    "{what} {mode:?}"
                );
            }
        }
    }
}

#[test]
fn a_key_that_counts_cannot_launder_the_length_of_private_data() {
    // STRICT data variant: a key function appends to an outer list once per element, so the outer list's
    // length is the private list's length. It must not come out trusted and public.
    let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
    for row in callbacks() {
        let plan = format!(
            "xs = get()\nout = []\ndef k(m):\n    out.append(1)\n    return m\n{}sink(x=len(out))\n",
            call_with(&row, "k")
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.zjson");
        let mut writer =
            TraceWriter::create(&path, Header::new(&plan, "sha256:x".into(), "strict")).unwrap();
        let report = Run::new(&RunInput {
            source: &plan,
            policy: &policy,
            mode: Mode::Strict,
        })
        .without_preflight()
        .execute(
            &mut get_returns(json!(["b", "a", "c"])),
            Some(&mut writer),
            &mut |_| {},
        );
        writer.close().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let sink: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["type"] == "call" && r["tool"] == "sink")
            .collect();
        match sink.first() {
            // The mutation under the list's structure is refused (no-sensitive-upgrade: the outer list
            // was not raised beforehand, as it is for a `for` loop).
            None => assert_eq!(report.outcome, "deny", "{}: {report:?}", row.name),
            Some(c) => {
                let label = &c["args"][0]["label"];
                assert_eq!(label["integrity"], "untrusted", "{}: {label}", row.name);
                assert!(
                    label["tags"].to_string().contains("PRIVATE"),
                    "{}: {label}",
                    row.name
                );
            }
        }
    }
}
