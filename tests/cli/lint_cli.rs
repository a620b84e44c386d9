//! `zamburak lint` as a user runs it: exit codes, one JSON document, SARIF valid against the official
//! schema, and hostile input that ends with a diagnostic instead of a crash.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use crate::common;

#[path = "../lint/generated.rs"]
mod generated;
use generated::generated_plan;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn lint(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("zamburak")
        .unwrap()
        .arg("lint")
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

/// Validates the SARIF log at `log` against the official schema (jsonschema, which .ci/run installs).
fn schema_check(log: &Path) -> std::process::Output {
    let schema = root().join("target/sarif/sarif-2.1.0-rtm.5.json");
    assert!(
        schema.exists(),
        "{} is missing: .ci/run fetches it (npm pack @microsoft/jest-sarif)",
        schema.display()
    );
    std::process::Command::new("python3")
        .args([
            "-c",
            "import json, sys, jsonschema\n\
             log = json.load(open(sys.argv[1]))\n\
             jsonschema.validate(log, json.load(open(sys.argv[2])))\n\
             assert log['version'] == '2.1.0'\n",
        ])
        .arg(log)
        .arg(&schema)
        .output()
        .expect("python3 with jsonschema (.ci/run installs it)")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn exit_codes_follow_the_contract() {
    // Clean, warnings only, errors, usage.
    assert_eq!(lint(&["examples/summary.py"]).status.code(), Some(0));
    assert_eq!(lint(&["examples/triage.py"]).status.code(), Some(0));
    let attack = lint(&["examples/attack.py"]);
    assert_eq!(attack.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&attack.stdout).contains("error[Z201]"));
    assert_eq!(lint(&["no/such/plan.py"]).status.code(), Some(2));
    assert_eq!(
        lint(&["examples/summary.py", "--policy", "no/such/policy.yaml"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        lint(&["examples/summary.py", "--format", "xml"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn json_is_exactly_one_document_on_stdout() {
    for plan in [
        "examples/attack.py",
        "examples/triage.py",
        "no/such/plan.py",
    ] {
        let out = lint(&[plan, "--format", "json"]);
        let text = String::from_utf8(out.stdout).unwrap();
        let doc: serde_json::Value = serde_json::from_str(text.trim())
            .unwrap_or_else(|e| panic!("{plan}: not one JSON document ({e}): {text}"));
        assert!(doc.is_object(), "{plan}");
    }
    let out = lint(&["examples/attack.py", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["ok"], false);
    let d = &doc["diagnostics"][0];
    assert_eq!(d["code"], "Z201");
    assert_eq!(d["tool"], "fetch_url");
    assert_eq!(d["argument"], "url");
    assert_eq!(d["line"], 7);
    // Sources are named by tool and line (the attack reads a mail at line 3).
    assert!(
        d["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "search_email" && s["line"] == 3),
        "{d}"
    );
}

#[test]
fn sarif_output_validates_against_the_official_schema() {
    let dir = tempfile::tempdir().unwrap();
    let mut plans: Vec<PathBuf> = [
        "examples/attack.py",
        "examples/triage.py",
        "examples/summary.py",
    ]
    .iter()
    .map(|p| root().join(p))
    .collect();
    for name in [
        "z001_syntax.py",
        "readers_unknown_recipient.py",
        "z102_unknown_arg.py",
    ] {
        plans.push(root().join("tests/lint/plans").join(name));
    }
    // Relative, as a user types it: locations then use `uriBaseId`.
    plans.push(PathBuf::from("examples/attack.py"));
    for plan in plans {
        let out = lint(&[
            plan.to_str().unwrap(),
            "--format",
            "sarif",
            "--policy",
            "tests/scenarios/policy.yaml",
        ]);
        let log = write(dir.path(), "out.sarif", &out.stdout);
        let check = schema_check(&log);
        assert!(
            check.status.success(),
            "{}: {}",
            plan.display(),
            String::from_utf8_lossy(&check.stderr)
        );
    }
}

/// A planner or CI job that asked for SARIF gets SARIF on stdout even when lint could not start: an
/// unsuccessful invocation with the error, valid against the schema, and exit 2.
#[test]
fn usage_errors_are_sarif_too() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["no-such-plan.py", "--format", "sarif"][..],
        &["--format=sarif"][..],
        &[
            "examples/attack.py",
            "--format",
            "sarif",
            "--policy",
            "no-such-policy.yaml",
        ][..],
        &["examples/attack.py", "--format", "sarif", "--no-such-flag"][..],
    ] {
        let out = lint(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{args:?}: not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        let invocation = &log["runs"][0]["invocations"][0];
        assert_eq!(invocation["executionSuccessful"], false, "{args:?}");
        assert!(invocation["toolExecutionNotifications"][0]["message"]["text"].is_string());
        assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
        let path = write(dir.path(), "usage.sarif", &out.stdout);
        let check = schema_check(&path);
        assert!(
            check.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
}

#[test]
fn the_schema_check_rejects_a_broken_log() {
    // The validator is only worth something if it can fail.
    let dir = tempfile::tempdir().unwrap();
    let log = write(
        dir.path(),
        "bad.sarif",
        br#"{"version": "2.1.0", "runs": [{"results": []}]}"#,
    );
    let check = schema_check(&log);
    assert!(
        !check.status.success(),
        "a run without `tool` must be invalid"
    );
}

#[test]
fn hostile_input_ends_with_a_diagnostic_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("binary.py", vec![0, 159, 146, 150, 255, 0, 1], "Z001"),
        ("huge.py", b"x = 1\n".repeat(300_000), "Z002"),
        (
            "deep.py",
            format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000)).into_bytes(),
            "Z002",
        ),
        (
            "chain.py",
            format!("x = 1{}\n", " + 1".repeat(100_000)).into_bytes(),
            "Z002",
        ),
        ("nul.py", b"x = 1\n\0\n".to_vec(), "Z001"),
        ("empty.py", Vec::new(), "Z003"),
    ];
    for (name, bytes, code) in cases {
        let p = write(dir.path(), name, &bytes);
        let out = lint(&[p.to_str().unwrap(), "--format", "json"]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        if code == "Z003" {
            // An empty plan is a warning: exit 0.
            assert_eq!(out.status.code(), Some(0), "{name}");
            assert_eq!(doc["diagnostics"][0]["code"], code, "{name}: {doc}");
        } else {
            assert_eq!(out.status.code(), Some(1), "{name}: {doc}");
            assert_eq!(doc["diagnostics"][0]["code"], code, "{name}: {doc}");
        }
    }
}

#[test]
fn a_big_generated_plan_is_analysed() {
    // 5,000 lines of reads, branches, loops and sends; lint must finish and find the certain denials.
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "big.py", generated_plan(5000).as_bytes());
    let out = lint(&[
        p.to_str().unwrap(),
        "--format",
        "json",
        "--policy",
        "tests/scenarios/policy.yaml",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1));
    // 500 blocks of ten lines, every fifth sending to the mail's sender.
    assert_eq!(doc["errors"], 100);
    assert_eq!(doc["calls"].as_array().unwrap().len(), 500 * 4);
}

#[test]
fn sarif_draws_the_flow_from_source_to_sink_and_links_the_right_docs() {
    let out = lint(&["examples/attack.py", "--format", "sarif"]);
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &log["runs"][0];
    let result = &run["results"][0];
    assert_eq!(result["ruleId"], "Z201");
    // The plan path is relative to where lint ran, declared once.
    let artifact = &result["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(artifact["uri"], "examples/attack.py");
    assert_eq!(artifact["uriBaseId"], "%SRCROOT%");
    let base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );
    // Sources (search_email at line 3, read_file at line 5) to the sink at line 7.
    let steps: Vec<u64> = result["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            l["location"]["physicalLocation"]["region"]["startLine"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(steps, [3, 5, 7]);
    let related: Vec<&str> = result["relatedLocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["message"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(related, ["`search_email()` output", "`read_file()` output"]);
    assert!(
        result["message"]["text"]
            .as_str()
            .unwrap()
            .contains("\nnote: also:")
    );

    // Every rule's helpUri names the file that documents it and an anchor of one of its headings.
    let slug = |h: &str| -> String {
        h.trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect()
    };
    for rule in run["tool"]["driver"]["rules"].as_array().unwrap() {
        let id = rule["id"].as_str().unwrap();
        let uri = rule["helpUri"].as_str().unwrap();
        let (file, anchor) = uri
            .strip_prefix("https://github.com/zamburak/zamburak/blob/main/")
            .and_then(|rest| rest.split_once('#'))
            .unwrap_or_else(|| panic!("{id}: {uri}"));
        let expected_file = if id.starts_with("Z2") {
            "docs/lint.md"
        } else {
            "docs/diagnostics.md"
        };
        assert_eq!(file, expected_file, "{id}");
        let doc = std::fs::read_to_string(root().join(file)).unwrap();
        assert!(
            doc.lines()
                .filter_map(|l| l.strip_prefix("### ").or_else(|| l.strip_prefix("## ")))
                .any(|h| slug(h) == anchor
                    && h.contains(if id.starts_with("Z09") { "Z090" } else { id })),
            "{id}: no heading for #{anchor} in {file}"
        );
    }
}

/// `examples/triage.py` with `verify_recipient` added: the reply's subject is drafted because it was read
/// from the inbox *list*, whose readers are those every message allows. Lint names that cause and a help
/// the plan does not already satisfy (before: "send `subject` only to … the mail's own correspondents",
/// which the plan does); following the help (the policy declares `structure_readers: public`) clears the
/// note and the run sends no draft (#20).
#[test]
fn the_triage_help_names_the_inbox_list_and_following_it_converges() {
    let world = common::world::World::new(None);
    let triage = std::fs::read_to_string(root().join("examples/triage.py")).unwrap();
    let plan = triage.replace(
        "draft_reply(to=e[\"from\"]",
        "draft_reply(to=verify_recipient(e[\"from\"])",
    );
    assert_ne!(plan, triage, "the example still has the reply line");
    let path = world.write_plan("t.py", &plan);
    let lint_with = |policy: &Path| {
        let out = Command::cargo_bin("zamburak")
            .unwrap()
            .args(["lint", "--mode", "normal", "--policy"])
            .arg(policy)
            .arg(&path)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
    };
    let before = lint_with(&world.path("policy.yaml"));
    assert!(
        before.contains(
            "note: `subject` depends on an element of the list `read_inbox()` at line 5 returned"
        ),
        "{before}"
    );
    assert!(
        before.contains("declare `returns.structure_readers: public`"),
        "{before}"
    );
    assert!(
        !before.contains("the mail's own correspondents"),
        "{before}"
    );

    let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    let fixed = policy.replacen(
        "      readers: { from_fields: [from, to, cc] }",
        "      structure_readers: public\n      readers: { from_fields: [from, to, cc] }",
        1,
    );
    assert_ne!(fixed, policy);
    std::fs::write(world.path("policy.yaml"), fixed).unwrap();
    let after = lint_with(&world.path("policy.yaml"));
    assert!(
        !after.contains("depends on an element of the list"),
        "{after}"
    );
    let out = world.run_expect(&path, &["--mode", "normal"], 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("completed (allow)"), "{err}");
    assert!(world.messages("out/drafts").is_empty(), "{err}");
    assert_eq!(world.messages("out/outbox").len(), 4, "{err}");
}

/// Lints `text` (written to `dir/name`) as JSON under `policy`: the exit code and the document.
fn lint_json(dir: &Path, name: &str, text: &str, policy: &str) -> (Option<i32>, serde_json::Value) {
    let plan = write(dir, name, text.as_bytes());
    let out = lint(&[
        plan.to_str().unwrap(),
        "--format",
        "json",
        "--policy",
        policy,
    ]);
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code(), doc)
}

/// The 1-based number of the first line of `policy` after the one starting `key:` that contains `text`.
fn policy_line(policy: &str, key: &str, text: &str) -> usize {
    let text_of = std::fs::read_to_string(root().join(policy)).unwrap();
    let lines: Vec<&str> = text_of.lines().collect();
    let from = lines
        .iter()
        .position(|l| l.trim_start().starts_with(&format!("{key}:")))
        .unwrap();
    from + lines[from..].iter().position(|l| l.contains(text)).unwrap() + 1
}

/// When the plan cannot meet a requirement, the help names the policy line that would allow it; for a model
/// that may not read the data, that is making the model a reader, not "send only to people who may read it"
/// (issue #35, errors that say what to change).
#[test]
fn a_denial_the_plan_cannot_fix_names_the_policy_line() {
    let dir = tempfile::tempdir().unwrap();
    let llm = "tests/scenarios/llm/policy.yaml";
    let (code, doc) = lint_json(
        dir.path(),
        "plan.py",
        "x = read_private(path=\"n\")\nr = ask(prompt=\"summarise\", data=x, schema={\"summary\": \"str\"})\nprint(r[\"summary\"])\n",
        llm,
    );
    assert_eq!(code, Some(1));
    let d = &doc["diagnostics"][0];
    assert_eq!(d["code"], "Z201", "{doc}");
    let hint = d["hint"].as_str().unwrap();
    assert!(hint.contains("the model reads as `llm:local`"), "{hint}");
    assert!(!hint.contains("send `data` only to people"), "{hint}");
    let line = policy_line(llm, "read_private", "readers: user");
    assert!(
        hint.contains(&format!(
            "`tools.read_private.returns.readers` ({llm}:{line})"
        )),
        "{hint}"
    );

    // A path chosen by data: no verifier can vouch for it, so the help names `require`'s line.
    let (_, doc) = lint_json(
        dir.path(),
        "write.py",
        "m = read_inbox(limit=1)\nwrite_file(path=m[0][\"subject\"], content=\"x\")\n",
        "policies/default.yaml",
    );
    let hint = doc["diagnostics"][0]["hint"].as_str().unwrap();
    let line = policy_line(
        "policies/default.yaml",
        "write_file",
        "path: { require: trusted }",
    );
    assert!(
        hint.contains(&format!(
            "`tools.write_file.args.path.require` (policies/default.yaml:{line})"
        )),
        "{hint}"
    );
}

/// The built-in tools' own types: a literal of the wrong type (Z110), a URL no allow-list entry reaches
/// (Z111, a port mismatch) and a key a record does not have (Z112), each an error with its fix where the
/// plan says what was meant.
#[test]
fn arguments_are_checked_against_the_built_in_tools() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc) = lint_json(
        dir.path(),
        "plan.py",
        "p = fetch_url(url=\"http://127.0.0.1:8080/help\")\nm = read_inbox(limit=\"5\")\nprint(m[0][\"sender\"], m[0][\"subjet\"])\n",
        "policies/default.yaml",
    );
    assert_eq!(code, Some(1));
    let found: Vec<(&str, Option<&str>)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let edit = &d["fix"]["edits"][0];
            (d["code"].as_str().unwrap(), edit["content"].as_str())
        })
        .collect();
    assert_eq!(
        found,
        [
            ("Z111", None),
            ("Z110", Some("5")),
            ("Z112", Some("\"from\"")),
            ("Z112", Some("\"subject\""))
        ],
        "{doc}"
    );
    let url = &doc["diagnostics"][0]["message"];
    assert!(
        url.as_str()
            .unwrap()
            .contains("its entries: http://127.0.0.1"),
        "{url}"
    );
}
