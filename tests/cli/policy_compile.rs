//! `zamburak policy compile` end to end: the real binary against a loopback OpenAI-compatible provider
//! of our own (tests/common/chat.rs) that plays a good drafter, a careless one (a payee data may
//! choose: the battery must catch it, with the scenario that exposes it, and the repair request must
//! carry that scenario) and a broken one (malformed YAML, wrong shapes, an oversized answer). Each test
//! checks what was written, and that nothing was when the draft was refused.

use crate::common;

use std::path::{Path, PathBuf};

use common::chat::{ChatServer, Reply, user_message};
use common::cli::{output_text, zamburak_in};
use serde_json::{Value, json};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo(rel)).unwrap()
}

/// The example's constitution and base policy in a fresh directory, the provider on `port`.
fn world(port: u16) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo("examples/compile/constitution.md"),
        dir.path().join("constitution.md"),
    )
    .unwrap();
    let base = read("examples/compile/zamburak.yaml")
        .replace(
            "http://127.0.0.1:8080/v1",
            &format!("http://127.0.0.1:{port}/v1"),
        )
        .replace("timeout_ms: 300000", "timeout_ms: 20000");
    std::fs::write(dir.path().join("zamburak.yaml"), base).unwrap();
    dir
}

fn roles() -> Value {
    json!({"roles": [
        {"tool": "get_email", "arg": "id", "role": "identifier"},
        {"tool": "send_email", "arg": "to", "role": "recipient"},
        {"tool": "send_email", "arg": "subject", "role": "content"},
        {"tool": "send_email", "arg": "body", "role": "content"},
        {"tool": "fetch_url", "arg": "url", "role": "url"},
        {"tool": "send_money", "arg": "recipient", "role": "payee"},
        {"tool": "send_money", "arg": "amount", "role": "amount"},
        {"tool": "send_money", "arg": "subject", "role": "content"},
    ]})
}

fn policy_answer(file: &str) -> Value {
    json!({
        "policy_yaml": read(file),
        "citations": [
            {"rule": "tools.send_email.args.to", "lines": [3, 4, 5]},
            {"rule": "tools.send_email.args.body", "lines": [5, 6]},
            {"rule": "tools.send_email.args.subject", "lines": [5, 6]},
            {"rule": "verifiers.verify_colleague", "lines": [4]},
            {"rule": "tools.fetch_url.args.url", "lines": [10, 11]},
            {"rule": "tools.send_money", "lines": [8, 9, 10]},
            {"rule": "verifiers.verify_payee", "lines": [9]},
            {"rule": "verifiers.verify_amount", "lines": [10]},
        ],
    })
}

fn scenarios_answer() -> Value {
    json!({
        "scenarios_yaml": read("tests/compile/good_scenarios.yaml"),
        "citations": [
            {"scenario": "a note to a colleague written in the plan is sent", "lines": [3, 4]},
            {"scenario": "a reply to an outside sender waits for approval", "lines": [4, 5]},
            {"scenario": "a payee read from a bill waits for approval", "lines": [8, 9, 10]},
        ],
    })
}

fn compile(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "policy",
        "compile",
        "constitution.md",
        "--policy",
        "zamburak.yaml",
        "--provider",
        "local",
        "-o",
        "drafted.yaml",
    ];
    args.extend_from_slice(extra);
    zamburak_in(dir, &args)
}

fn nothing_written(dir: &Path) {
    for f in ["drafted.yaml", "drafted.scenarios.yaml"] {
        assert!(!dir.join(f).exists(), "{f} was written");
    }
}

#[test]
fn a_good_drafter_gives_a_verified_policy_and_scenarios() {
    let s = ChatServer::start();
    s.answer("roles", roles());
    s.answer("policy", policy_answer("tests/compile/good_policy.yaml"));
    s.answer("scenarios", scenarios_answer());
    let dir = world(s.port);
    let out = compile(dir.path(), &[]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    // One request per step, no repair; the scenarios request never holds the draft.
    assert_eq!(s.requests().len(), 3, "{text}");
    let scen_req = user_message(&s.requests_for("scenarios")[0]);
    assert!(!scen_req.contains("verify_colleague"), "{scen_req}");
    assert!(scen_req.contains("L9: to my landlord"), "{scen_req}");

    let policy = std::fs::read_to_string(dir.path().join("drafted.yaml")).unwrap();
    assert!(
        policy.contains("# constitution line 9: to my landlord (DE89370400440532013000)"),
        "{policy}"
    );
    assert!(
        policy.starts_with("# Drafted by `zamburak policy compile`"),
        "{policy}"
    );
    // The diff against the base is on stdout and names the changed rule.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "+      recipient: { require: [trusted, verified(KnownPayee)], public: true }"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("-      recipient: {}"), "{stdout}");
    assert!(text.contains("battery 19/19 attacks refused"), "{text}");

    // What was written passes `policy check` and its scenarios pass `policy test`.
    let check = zamburak_in(dir.path(), &["policy", "check", "drafted.yaml"]);
    assert_eq!(check.status.code(), Some(0), "{}", output_text(&check));
    let test = zamburak_in(dir.path(), &["policy", "test", "drafted.scenarios.yaml"]);
    assert_eq!(test.status.code(), Some(0), "{}", output_text(&test));
    assert!(
        output_text(&test).contains("12 passed, 0 failed"),
        "{}",
        output_text(&test)
    );

    // It is never replaced without --force, and nothing is asked of the provider then.
    let again = compile(dir.path(), &[]);
    assert_eq!(again.status.code(), Some(2), "{}", output_text(&again));
    assert_eq!(s.requests().len(), 3);
}

#[test]
fn a_careless_drafter_is_refused_with_the_scenario_that_exposes_it() {
    let s = ChatServer::start();
    s.answer("roles", roles());
    s.answer(
        "policy",
        policy_answer("tests/compile/careless_policy.yaml"),
    );
    s.answer("scenarios", scenarios_answer());
    let dir = world(s.port);
    let out = compile(dir.path(), &[]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    nothing_written(dir.path());
    assert!(
        text.contains("FAILED battery: send_money.recipient (payee) chosen by data through `verify_payee` [strict]"),
        "{text}"
    );
    assert!(
        text.contains("send_money(recipient=verify_payee(zamburak_battery_value), "),
        "{text}"
    );
    assert!(
        text.contains("refused: the draft failed verification after 2 repairs"),
        "{text}"
    );
    // The repair loop sent the failing scenario back, twice, then stopped.
    let policy_requests = s.requests_for("policy");
    assert_eq!(policy_requests.len(), 3, "{text}");
    let first = user_message(&policy_requests[0]);
    assert!(!first.contains("failed verification"), "{first}");
    for repair in &policy_requests[1..] {
        let m = user_message(repair);
        assert!(m.contains("Your previous draft failed verification"), "{m}");
        assert!(
            m.contains("battery: send_money.recipient (payee) chosen by data"),
            "{m}"
        );
        assert!(
            m.contains("zamburak_battery_value = zamburak_battery_source()"),
            "{m}"
        );
    }
}

#[test]
fn the_battery_alone_catches_a_payee_no_drafted_scenario_covers() {
    let s = ChatServer::start();
    s.answer("roles", roles());
    s.answer(
        "policy",
        policy_answer("tests/compile/careless_policy.yaml"),
    );
    // Scenarios that never let data choose a payee: only the battery can see the careless rule.
    let scenarios = read("tests/compile/good_scenarios.yaml");
    let cut = scenarios
        .find("  - name: a payee read from a bill")
        .unwrap();
    let end = scenarios.find("  - name: a link in an e-mail").unwrap();
    let scenarios = format!("{}{}", &scenarios[..cut], &scenarios[end..]);
    s.answer(
        "scenarios",
        json!({"scenarios_yaml": scenarios, "citations": []}),
    );
    let dir = world(s.port);
    let out = compile(dir.path(), &["--max-repairs", "0"]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("scenarios 10/10 runs passed"), "{text}");
    assert!(
        text.contains("FAILED battery: send_money.recipient (payee) chosen by data through `verify_payee` [normal]"),
        "{text}"
    );
    assert!(text.contains("battery 14/15 attacks refused"), "{text}");
    nothing_written(dir.path());
}

#[test]
fn a_verifier_that_accepts_the_attackers_value_is_caught_like_a_missing_requirement() {
    let s = ChatServer::start();
    s.answer("roles", roles());
    let yaml = read("tests/compile/good_policy.yaml").replace(
        "allow: [\"*@example.com\"]",
        "allow: [\"*@example.com\", \"*@evil.test\"]",
    );
    assert!(yaml.contains("*@evil.test"));
    s.answer("policy", json!({"policy_yaml": yaml, "citations": []}));
    s.answer("scenarios", scenarios_answer());
    let dir = world(s.port);
    let out = compile(dir.path(), &["--max-repairs", "0"]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAILED battery: send_email.to (recipient) chosen by data through `verify_colleague` [strict]"),
        "{text}"
    );
    assert!(
        text.contains(
            "send_email(to=verify_colleague(zamburak_battery_value), subject=\"x\", body=\"x\")"
        ),
        "{text}"
    );
    assert!(text.contains("battery 18/19 attacks refused"), "{text}");
    nothing_written(dir.path());
}

#[test]
fn a_draft_cannot_change_the_user_or_where_data_lives() {
    let s = ChatServer::start();
    s.answer("roles", roles());
    let yaml = read("tests/compile/good_policy.yaml")
        .replace("user: me@example.com", "user: mallory@evil.test")
        + "builtins:\n  mail: { maildir: /, outbox: /tmp/out, drafts: /tmp/drafts }\n";
    s.answer("policy", json!({"policy_yaml": yaml, "citations": []}));
    s.answer("scenarios", scenarios_answer());
    let dir = world(s.port);
    let out = compile(dir.path(), &[]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("note: the draft's `user` was replaced by the base policy's"),
        "{text}"
    );
    assert!(
        text.contains("note: the draft's `builtins` was replaced by the base policy's"),
        "{text}"
    );
    let policy = std::fs::read_to_string(dir.path().join("drafted.yaml")).unwrap();
    assert!(policy.contains("\nuser: me@example.com\n"), "{policy}");
    assert!(!policy.contains("mallory"), "{policy}");
    assert!(policy.contains("maildir: mail/inbox"), "{policy}");
}

#[test]
fn a_drafter_that_repairs_its_draft_is_verified() {
    let s = ChatServer::start();
    s.answer("roles", roles());
    s.script(
        "policy",
        vec![
            Reply::Content(policy_answer("tests/compile/careless_policy.yaml").to_string()),
            Reply::Content(policy_answer("tests/compile/good_policy.yaml").to_string()),
        ],
    );
    s.answer("scenarios", scenarios_answer());
    let dir = world(s.port);
    let out = compile(dir.path(), &[]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("repair 1/2"), "{text}");
    assert!(text.contains("1 repair"), "{text}");
    assert_eq!(s.requests_for("policy").len(), 2);
    assert!(dir.path().join("drafted.yaml").exists());
}

#[test]
fn force_writes_a_draft_that_failed_but_says_so() {
    let s = ChatServer::start();
    s.answer("roles", roles());
    s.answer(
        "policy",
        policy_answer("tests/compile/careless_policy.yaml"),
    );
    s.answer("scenarios", scenarios_answer());
    let dir = world(s.port);
    let out = compile(dir.path(), &["--force", "--max-repairs", "0"]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(s.requests_for("policy").len(), 1, "{text}");
    let policy = std::fs::read_to_string(dir.path().join("drafted.yaml")).unwrap();
    assert!(policy.contains("# NOT VERIFIED"), "{policy}");
}

#[test]
fn a_named_exception_waives_one_attack_and_is_reported() {
    let s = ChatServer::start();
    s.answer("roles", roles());
    s.answer(
        "policy",
        policy_answer("tests/compile/careless_policy.yaml"),
    );
    s.answer("scenarios", scenarios_answer());
    let dir = world(s.port);
    let mut c = read("examples/compile/constitution.md");
    c.push_str("exception: send_money.recipient may be chosen by data because a test says so\n");
    std::fs::write(dir.path().join("constitution.md"), c).unwrap();
    let out = compile(dir.path(), &["--max-repairs", "0"]);
    let text = output_text(&out);
    assert!(
        text.contains("exception used (constitution line 13): send_money.recipient"),
        "{text}"
    );
    assert!(
        !text.contains("FAILED battery: send_money.recipient"),
        "{text}"
    );
    // Waived, the careless payee list is the person's word: the draft is written, and says so.
    assert_eq!(out.status.code(), Some(0), "{text}");
    let policy = std::fs::read_to_string(dir.path().join("drafted.yaml")).unwrap();
    assert!(
        policy.contains("# Exception (constitution line 13): send_money.recipient"),
        "{policy}"
    );

    // An exception that names no argument of the base is an input error, before any request.
    let s2 = ChatServer::start();
    let dir = world(s2.port);
    std::fs::write(
        dir.path().join("constitution.md"),
        "Be careful.\nexception: send_money.iban may be chosen by data because x\n",
    )
    .unwrap();
    let out = compile(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", output_text(&out));
    assert!(
        output_text(&out).contains("`send_money.iban`"),
        "{}",
        output_text(&out)
    );
    assert!(s2.requests().is_empty());
}

/// What a broken drafter answers, set up on its server.
type Setup = Box<dyn Fn(&ChatServer)>;

/// A drafter that answers the roles step well and the policy and scenarios steps with these answers.
fn drafts(policy: Value, scenarios: Value) -> Setup {
    Box::new(move |s| {
        s.answer("roles", roles());
        s.answer("policy", policy.clone());
        s.answer("scenarios", scenarios.clone());
    })
}

#[test]
fn a_broken_drafter_gets_a_clear_error_and_nothing_is_written() {
    let cases: Vec<(&str, Setup, i32, &str)> = vec![
        (
            "not JSON",
            Box::new(|s| {
                s.script(
                    "roles",
                    vec![Reply::Content("here are the roles: {".into())],
                )
            }),
            2,
            "the provider's answer to step `roles` is unusable: it is not JSON",
        ),
        (
            "wrong shape",
            Box::new(|s| s.answer("roles", json!({"roles": "all of them"}))),
            2,
            "the provider's answer to step `roles` is unusable: it does not match the step's schema",
        ),
        (
            "unknown role",
            Box::new(|s| {
                s.answer("roles", json!({"roles": [{"tool": "send_money", "arg": "recipient", "role": "friend"}]}))
            }),
            2,
            "does not match the step's schema",
        ),
        (
            "an argument no tool has",
            Box::new(|s| {
                s.answer(
                    "roles",
                    json!({"roles": [{"tool": "rm_rf", "arg": "path", "role": "path"}]}),
                )
            }),
            2,
            "it names an argument no tool of the base policy has",
        ),
        (
            "oversized",
            Box::new(|s| s.script("roles", vec![Reply::Huge(600 * 1024)])),
            2,
            "over 512 KiB",
        ),
        (
            "HTTP error",
            Box::new(|s| s.script("roles", vec![Reply::Status(500)])),
            2,
            "HTTP status 500",
        ),
        (
            "malformed policy YAML",
            drafts(
                json!({"policy_yaml": "version: 1\ntools: [unclosed\n  - {", "citations": []}),
                scenarios_answer(),
            ),
            1,
            "FAILED the draft does not pass `policy check`",
        ),
        (
            "policy YAML of the wrong shape",
            drafts(
                json!({"policy_yaml": "- just\n- a list\n", "citations": []}),
                scenarios_answer(),
            ),
            1,
            "a policy must be a mapping",
        ),
        (
            "policy citations of the wrong shape",
            Box::new(|s| {
                s.answer("roles", roles());
                s.answer("policy", json!({"policy_yaml": read("tests/compile/good_policy.yaml"), "citations": [{"rule": "x", "lines": "all"}]}));
            }),
            2,
            "the provider's answer to step `policy` is unusable",
        ),
        (
            "malformed scenarios",
            drafts(
                policy_answer("tests/compile/good_policy.yaml"),
                json!({"scenarios_yaml": "scenarios:\n  - name: x\n    plan: y\n    expect: { strict: maybe }\n", "citations": []}),
            ),
            2,
            "`scenarios_yaml` is not a scenarios file",
        ),
        (
            "a draft that loosens a limit",
            {
                let yaml =
                    read("tests/compile/good_policy.yaml") + "limits: { timeout_ms: 600000 }\n";
                drafts(
                    json!({"policy_yaml": yaml, "citations": []}),
                    scenarios_answer(),
                )
            },
            1,
            "FAILED the draft raises `limits.timeout_ms` to 600000, over the base policy's 5000",
        ),
        (
            "a draft that adds a tool and trusts mail",
            {
                let yaml = read("tests/compile/good_policy.yaml").replace(
                    "      integrity: untrusted\n      tags: [PRIVATE]",
                    "      integrity: trusted\n      tags: [PRIVATE]",
                ) + "  rm_rf:\n    effect: execute\n    args: { path: {} }\n";
                drafts(
                    json!({"policy_yaml": yaml, "citations": []}),
                    scenarios_answer(),
                )
            },
            1,
            "FAILED the draft marks the result of `get_email` trusted, which the base policy does not",
        ),
    ];
    for (name, setup, code, expected) in cases {
        let s = ChatServer::start();
        setup(&s);
        let dir = world(s.port);
        let out = compile(dir.path(), &["--max-repairs", "1"]);
        let text = output_text(&out);
        assert_eq!(out.status.code(), Some(code), "{name}: {text}");
        assert!(text.contains(expected), "{name}: {text}");
        assert!(!text.contains("panicked"), "{name}: {text}");
        nothing_written(dir.path());
    }
}

#[test]
fn the_help_ends_with_the_exit_codes() {
    let out = zamburak_in(Path::new("."), &["policy", "compile", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.trim_end()
            .ends_with("\"Compiling a policy from plain words\"."),
        "{text}"
    );
    assert!(
        text.contains("Exit codes: 0 the draft is verified and written, 1 refused"),
        "{text}"
    );
}

#[test]
fn a_fixture_provider_drafts_offline_keyed_by_each_request() {
    let dir = world(1);
    let base = std::fs::read_to_string(dir.path().join("zamburak.yaml")).unwrap();
    let at = base.find("providers:\n").unwrap();
    let end = base.find("builtins:\n").unwrap();
    let base = format!(
        "{}providers:\n  canned:\n    kind: fixture\n    reader: \"llm:canned\"\n    fixtures: answers.json\n{}",
        &base[..at],
        &base[end..]
    );
    std::fs::write(dir.path().join("zamburak.yaml"), base).unwrap();
    // Each run names the key of the first request it has no answer for: roles, policy, scenarios.
    let mut answers = serde_json::Map::new();
    let steps = [
        roles(),
        policy_answer("tests/compile/good_policy.yaml"),
        scenarios_answer(),
    ];
    for (i, answer) in steps.iter().enumerate() {
        std::fs::write(
            dir.path().join("answers.json"),
            Value::Object(answers.clone()).to_string(),
        )
        .unwrap();
        let out = zamburak_in(
            dir.path(),
            &[
                "policy",
                "compile",
                "constitution.md",
                "--provider",
                "canned",
                "-o",
                "drafted.yaml",
            ],
        );
        let text = output_text(&out);
        assert_eq!(out.status.code(), Some(2), "step {i}: {text}");
        nothing_written(dir.path());
        let key = text
            .split("the fixtures have no answer for request ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("step {i}: {text}"));
        answers.insert(key.to_string(), Value::String(answer.to_string()));
    }
    std::fs::write(
        dir.path().join("answers.json"),
        Value::Object(answers).to_string(),
    )
    .unwrap();
    let out = zamburak_in(
        dir.path(),
        &[
            "policy",
            "compile",
            "constitution.md",
            "--provider",
            "canned",
            "-o",
            "drafted.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert!(dir.path().join("drafted.scenarios.yaml").exists());
}

// Issue #51 regressions: a hostile drafter must not get a weakened policy "verified". Each asserts
// that nothing is written and that the attack is refused (exit 1).

fn refused_with(yaml: String, extra: &[&str]) -> String {
    refused_with_roles(roles(), yaml, extra)
}

/// [`refused_with`], with the drafter's roles given.
fn refused_with_roles(roles: Value, yaml: String, extra: &[&str]) -> String {
    let s = ChatServer::start();
    s.answer("roles", roles);
    s.answer("policy", json!({"policy_yaml": yaml, "citations": []}));
    s.answer("scenarios", scenarios_answer());
    let dir = world(s.port);
    let mut args = vec!["--max-repairs", "0"];
    args.extend_from_slice(extra);
    let out = compile(dir.path(), &args);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    nothing_written(dir.path());
    text
}

#[test]
fn issue51_a_verifier_named_like_the_batterys_variable_does_not_defeat_it() {
    // The careless payee plus a verifier named `x`: battery plans must not be shadowed by it.
    let yaml = read("tests/compile/careless_policy.yaml").replace(
        "verifiers:\n",
        "verifiers:\n  x: { kind: one_of, values: [a], mints: X }\n",
    );
    assert!(yaml.contains("  x: { kind"));
    let text = refused_with(yaml, &[]);
    assert!(
        text.contains("FAILED battery: send_money.recipient (payee) chosen by data"),
        "{text}"
    );
}

#[test]
fn issue51_a_call_budget_of_one_does_not_count_as_refusal() {
    let yaml = read("tests/compile/careless_policy.yaml") + "limits:\n  max_tool_calls: 1\n";
    let text = refused_with(yaml, &[]);
    assert!(
        text.contains(
            "FAILED battery: send_money.recipient (payee) chosen by data through `verify_payee`"
        ),
        "{text}"
    );
}

#[test]
fn issue51_a_payee_the_drafter_calls_other_is_still_attacked() {
    let mut r = roles();
    for e in r["roles"].as_array_mut().unwrap() {
        if e["arg"] == "recipient" {
            e["role"] = json!("other");
        }
    }
    let text = refused_with_roles(r, read("tests/compile/careless_policy.yaml"), &[]);
    // The attack itself, not the `battery targets:` line, which names every argument.
    assert!(
        text.contains(
            "FAILED battery: send_money.recipient (payee) chosen by data through `verify_payee`"
        ),
        "{text}"
    );
}

#[test]
fn issue51_result_readers_cannot_be_widened_to_public() {
    let yaml = read("tests/compile/good_policy.yaml").replace(
        "readers: { from_fields: [from, to, cc] }",
        "readers: public",
    );
    assert!(yaml.contains("readers: public\n      fields"));
    let text = refused_with(yaml, &[]);
    assert!(
        text.contains("the draft changes how the results of `get_email` are labelled"),
        "{text}"
    );
}

#[test]
fn issue51_a_base_without_user_is_refused_with_the_fix() {
    let s = ChatServer::start();
    s.answer("roles", roles());
    let yaml = read("tests/compile/good_policy.yaml")
        .replace("user: me@example.com", "user: mallory@evil.test");
    s.answer("policy", json!({"policy_yaml": yaml, "citations": []}));
    s.answer("scenarios", scenarios_answer());
    let dir = world(s.port);
    let base = std::fs::read_to_string(dir.path().join("zamburak.yaml")).unwrap();
    std::fs::write(
        dir.path().join("zamburak.yaml"),
        base.replace("user: me@example.com\n", ""),
    )
    .unwrap();
    let out = compile(dir.path(), &["--max-repairs", "0"]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    nothing_written(dir.path());
    assert!(
        text.contains(
            "FAILED the base policy has no `user:`, so the draft would choose who reads everything"
        ),
        "{text}"
    );
}

#[test]
fn issue51_the_drafters_role_does_not_pick_the_attackers_value() {
    // Calling `send_email.to` a URL once made the battery try only a URL, so an allowlist of the attacker's
    // domain passed. Every kind of value is tried, whatever the role.
    let mut r = roles();
    for e in r["roles"].as_array_mut().unwrap() {
        if e["tool"] == "send_email" && e["arg"] == "to" {
            e["role"] = json!("url");
        }
    }
    let yaml = read("tests/compile/good_policy.yaml").replace(
        "allow: [\"*@example.com\"]",
        "allow: [\"*@example.com\", \"*@evil.test\"]",
    );
    assert!(yaml.contains("*@evil.test"));
    let text = refused_with_roles(r, yaml, &[]);
    assert!(
        text.contains("FAILED battery: send_email.to (recipient) chosen by data through `verify_colleague` [strict]"),
        "{text}"
    );
}

#[test]
fn issue51_a_draft_that_loosens_a_rule_of_the_base_is_refused_naming_it() {
    // The base (tests' world) gets a readers check on `send_email.body` by default; a draft that says
    // `readers: any` over it would let private mail reach a non-reader unattended.
    let yaml = read("tests/compile/good_policy.yaml").replace(
        "body: { forbid_tags: { tags: [AUTH_SECRET], on_violation: deny }, readers_must_include: to }",
        "body: { forbid_tags: { tags: [AUTH_SECRET], on_violation: deny }, readers: any, reason: \"the drafter says so\" }",
    );
    assert!(yaml.contains("the drafter says so"), "{yaml}");
    let text = refused_with(yaml, &[]);
    assert!(
        text.contains("FAILED the draft loosens `send_email.body`'s readers check"),
        "{text}"
    );
}

#[test]
fn issue51_a_trusted_result_cannot_be_drafted() {
    // Flipping the mail's integrity would make every field trusted, the payee a bill names among them.
    let yaml = read("tests/compile/good_policy.yaml").replacen(
        "      integrity: untrusted\n      tags: [PRIVATE]",
        "      integrity: trusted\n      tags: [PRIVATE]",
        1,
    );
    assert!(
        yaml.contains("integrity: trusted\n      tags: [PRIVATE]"),
        "{yaml}"
    );
    let text = refused_with(yaml, &[]);
    assert!(
        text.contains("the draft changes how the results of `get_email` are labelled"),
        "{text}"
    );
}

#[test]
fn issue51_a_decoy_that_blocks_every_call_is_not_verified() {
    // `amount` accepts only a kind whose verifier accepts nothing a plan can write: every call of
    // `send_money` fails, so the payee's attack is never exercised, and that is a failure, not a pass.
    let yaml = read("tests/compile/good_policy.yaml")
        .replace(
            "verifiers:\n",
            "verifiers:\n  verify_decoy: { kind: email_allowlist, allow: [\"not an address\"], mints: Nothing }\n",
        )
        .replace(
            "amount: { require: [trusted, \"verified(SmallAmount)\"], public: true }",
            "amount: { require: \"verified(Nothing)\", public: true }",
        );
    assert!(yaml.contains("verified(Nothing)"), "{yaml}");
    let text = refused_with(yaml, &[]);
    assert!(
        text.contains("FAILED battery: attack not exercised: send_money.recipient"),
        "{text}"
    );
}

#[test]
fn issue51_a_drafted_mode_normal_is_replaced_by_the_bases_and_said() {
    let s = ChatServer::start();
    s.answer("roles", roles());
    let yaml = read("tests/compile/good_policy.yaml").replacen(
        "version: 1\n",
        "version: 1\nmode: normal\n",
        1,
    );
    s.answer("policy", json!({"policy_yaml": yaml, "citations": []}));
    s.answer("scenarios", scenarios_answer());
    let dir = world(s.port);
    let out = compile(dir.path(), &["--max-repairs", "0"]);
    let text = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("note: the draft's `mode` was replaced by the base policy's"),
        "{text}"
    );
    let written = std::fs::read_to_string(dir.path().join("drafted.yaml")).unwrap();
    assert!(!written.contains("mode: normal"), "{written}");
}
