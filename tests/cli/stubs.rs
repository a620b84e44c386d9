//! `zamburak stubs`: what it prints for the default policy and AgentDojo's (committed under tests/stubs/;
//! `ZAMBURAK_BLESS=1 cargo test --test cli stubs` rewrites them), that it agrees with `policy check` and with
//! the signatures `run` holds calls to, that a hostile MCP lock cannot break the module it prints, and that
//! a real type checker (mypy, pinned in tests/typecheck/requirements.txt) accepts every committed plan
//! against its policy's stubs and reports each planted mistake.
//!
//! The type checker runs from tests/typecheck/.venv (`.ci/run` builds it). Without it these tests say so
//! loudly and pass, except in CI (`CI=true`), where a missing checker is a failure.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn zamburak_in(dir: &Path, args: &[&str]) -> Output {
    Command::cargo_bin("zamburak")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// `zamburak stubs ARGS…` from the repository root: its stdout, after checking it succeeded.
fn stubs(args: &[&str]) -> String {
    let mut all = vec!["stubs"];
    all.extend_from_slice(args);
    let out = zamburak_in(root(), &all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stubs {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The policies whose stubs are checked, with the plans written for each.
fn suites() -> Vec<(&'static str, PathBuf, Vec<PathBuf>)> {
    let mut out = Vec::new();
    let py_files = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "py"))
            .collect();
        v.sort();
        v
    };
    out.push((
        "default",
        root().join("policies/default.yaml"),
        py_files(&root().join("examples")),
    ));
    for suite in ["banking", "slack", "travel", "workspace"] {
        out.push((
            suite,
            root().join(format!("bench/agentdojo/policies/{suite}.yaml")),
            py_files(&root().join(format!("bench/agentdojo/plans/{suite}")))
                .into_iter()
                .chain(py_files(
                    &root().join(format!("bench/agentdojo/plans-naive/{suite}")),
                ))
                .collect(),
        ));
    }
    out
}

fn policy_arg(policy: &Path) -> String {
    policy
        .strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Compares `actual` with the committed file, or writes it with ZAMBURAK_BLESS set.
fn snapshot(name: &str, actual: &str) {
    let path = root().join("tests/stubs").join(name);
    if std::env::var_os("ZAMBURAK_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with ZAMBURAK_BLESS=1 cargo test --test cli stubs",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "tests/stubs/{name} differs from what `zamburak stubs` prints, first at line {}:\n  committed: {:?}\n  printed:   {:?}\nreview the change and rewrite it with ZAMBURAK_BLESS=1 cargo test --test cli stubs",
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}

#[test]
fn the_stubs_of_the_default_and_agentdojo_policies_are_as_committed() {
    for (name, args) in [
        ("default", vec!["--policy", "policies/default.yaml"]),
        (
            "banking",
            vec!["--policy", "bench/agentdojo/policies/banking.yaml"],
        ),
        (
            "workspace",
            vec!["--policy", "bench/agentdojo/policies/workspace.yaml"],
        ),
    ] {
        let pyi = stubs(&args);
        snapshot(&format!("{name}.pyi"), &pyi);
        if name != "workspace" {
            let mut md_args = args.clone();
            md_args.extend(["--format", "markdown"]);
            let md = stubs(&md_args);
            assert!(
                md.contains(&pyi),
                "{name}: the Markdown holds the stub module"
            );
            snapshot(&format!("{name}.md"), &md);
            let mut json_args = args.clone();
            json_args.extend(["--format", "json"]);
            let json = stubs(&json_args);
            let doc: Value = serde_json::from_str(&json).unwrap();
            assert_eq!(
                doc["pyi"],
                pyi.as_str(),
                "{name}: the JSON holds the stub module"
            );
            snapshot(&format!("{name}.json"), &json);
        }
    }
}

#[test]
fn output_is_the_same_from_any_directory_and_names_no_path() {
    // Without --policy and no zamburak.yaml around, the built-in default: the same as policies/default.yaml.
    let empty = tempfile::tempdir().unwrap();
    let out = zamburak_in(empty.path(), &["stubs"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("policy: built-in default"),
        "the policy is named on stderr"
    );
    let here = String::from_utf8(out.stdout).unwrap();
    assert_eq!(here, stubs(&["--policy", "policies/default.yaml"]));
    for format in ["pyi", "markdown", "json"] {
        let a = stubs(&[
            "--policy",
            "bench/agentdojo/policies/banking.yaml",
            "--format",
            format,
        ]);
        let abs = root().join("bench/agentdojo/policies/banking.yaml");
        let b = stubs(&["--policy", abs.to_str().unwrap(), "--format", format]);
        assert_eq!(a, b, "{format}: the same whichever way the policy is named");
        for p in [root().to_str().unwrap(), "/tmp", "/home"] {
            assert!(!a.contains(p), "{format} names the path {p}");
        }
    }
}

#[test]
fn usage_and_configuration_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = zamburak_in(dir.path(), &["stubs", "--policy", "missing.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let out = zamburak_in(
        dir.path(),
        &["stubs", "--policy", "missing.yaml", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["error"].as_str().unwrap().contains("missing.yaml"));
    let out = zamburak_in(dir.path(), &["stubs", "--format", "rst"]);
    assert_eq!(out.status.code(), Some(2));
    // An MCP policy without its lock: the types cannot be known, and no server is started to learn them.
    let policy = dir.path().join("banking.yaml");
    std::fs::copy(
        root().join("bench/agentdojo/policies/banking.yaml"),
        &policy,
    )
    .unwrap();
    let out = zamburak_in(dir.path(), &["stubs", "--policy", "banking.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no lock file") && err.contains("zamburak mcp lock"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// The tools `zamburak policy check FILE` prints.
fn policy_check_tools(policy: &str) -> BTreeSet<String> {
    let out = zamburak_in(root(), &["policy", "check", policy]);
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_saphyr::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap();
    doc["tools"].as_object().unwrap().keys().cloned().collect()
}

#[test]
fn stubs_agree_with_policy_check_and_with_the_signatures_run_holds_calls_to() {
    for (name, policy_path, _) in suites() {
        let policy = policy_arg(&policy_path);
        let listed = policy_check_tools(&policy);
        let doc: Value =
            serde_json::from_str(&stubs(&["--policy", &policy, "--format", "json"])).unwrap();
        let stubbed: BTreeSet<String> = doc["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            listed, stubbed,
            "{name}: policy check and stubs list other tools"
        );
        // The parameters, in order, are the signatures `plan::check` holds every call to.
        let loaded = zamburak::policy::Policy::load(&policy_path).unwrap();
        let sigs = loaded.signatures();
        for t in doc["tools"].as_array().unwrap() {
            let params: Vec<&str> = t["params"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            assert_eq!(
                params,
                sigs.tools[t["name"].as_str().unwrap()],
                "{name}: {}",
                t["name"]
            );
        }
        let verifiers: BTreeSet<String> = doc["verifiers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(verifiers, sigs.verifiers, "{name}: verifiers");
    }
}

/// A policy whose MCP server's pinned definition is hostile: text that would end a docstring, a comment or
/// a Markdown fence, names that are keywords or reach for the runtime, a `$ref` cycle, deep nesting.
fn hostile_world(dir: &Path) {
    std::fs::write(
        dir.join("zamburak.yaml"),
        "version: 1\nuser: me\nservers:\n  evil:\n    command: python3\n    args: [\"-c\", \"pass\"]\n    reader: me\n\
         tools:\n  evil_tool:\n    source: mcp.evil.x\n    effect: read\n    args: { a: {}, b: {} }\n    control: { require: any }\n",
    )
    .unwrap();
    let mut deep = serde_json::json!({"type": "string"});
    // Past the converter's depth, within the 128 levels a lock may nest.
    for _ in 0..50 {
        deep = serde_json::json!({"type": "object", "properties": {"d": deep}, "required": ["d"]});
    }
    let breaker = "\"\"\"\nimport os\nos.system('x')\n\"\"\"\n```\n# heading\n\\";
    let definition = serde_json::json!({
        "name": "x",
        "description": breaker,
        "inputSchema": {
            "type": "object",
            "$defs": {"Loop": {"anyOf": [{"$ref": "#/$defs/Loop"}, {"type": "array", "items": {"$ref": "#/$defs/Loop"}}]}},
            "properties": {
                "a": {"$ref": "#/$defs/Loop", "description": breaker},
                "b": {"title": "class", "type": "object", "properties": {
                    "__class__": {"type": "string", "description": breaker},
                    "\"); import os; (\"": {"enum": [breaker, 1, null]},
                    "def": deep,
                }},
            },
            "required": ["a", "b"],
        },
        "outputSchema": {"type": "object", "title": "_private", "properties": {"result": {"$ref": "https://evil.test/s"}}, "required": ["result"]},
    });
    let lock = serde_json::json!({
        "version": 1,
        "servers": {"evil": {
            "command": "python3", "args": ["-c", "pass"],
            "server": {"name": "evil", "version": "1", "protocol_version": "2025-06-18"},
            // The lock's pin of the definition it keeps: a lock whose kept definition does not hash to its
            // pin is refused before any stub is made (tests/cli/mcp_servers.rs).
            "tools": {"x": {"sha256": zamburak::mcp::pin::tool_hash(&definition), "definition": definition}},
        }},
    });
    std::fs::write(
        dir.join("zamburak.mcp.lock"),
        serde_json::to_string_pretty(&lock).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_hostile_lock_cannot_break_out_of_the_stubs() {
    let dir = tempfile::tempdir().unwrap();
    hostile_world(dir.path());
    for format in ["pyi", "markdown", "json"] {
        let out = zamburak_in(dir.path(), &["stubs", "--format", format]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let pyi = String::from_utf8(zamburak_in(dir.path(), &["stubs"]).stdout).unwrap();
    // Outside docstrings and comments, only the stub's own statements: no line the server wrote.
    assert!(
        !pyi.lines()
            .any(|l| l.starts_with("import os") || l.starts_with("os.system")),
        "{pyi}"
    );
    let md = String::from_utf8(zamburak_in(dir.path(), &["stubs", "--format", "markdown"]).stdout)
        .unwrap();
    assert!(
        !md.lines().any(|l| l == "# heading"),
        "the server's text opened no heading"
    );
    assert!(
        md.contains("````python\n"),
        "the fence outlasts the server's backticks"
    );
    // The module defines what the policy declares and nothing else, and a checker reads it.
    if let Some(mypy) = mypy() {
        let plan = "r = evil_tool(a=[[]], b={\"__class__\": \"x\"})\nprint(r)\n";
        let errors = check_plans(&mypy, &pyi, &[("plan".into(), plan.into())]);
        assert!(errors.is_empty(), "{errors:#?}\n{pyi}");
        let planted = check_plans(&mypy, &pyi, &[("plan".into(), "os.system('x')\n".into())]);
        assert!(
            planted.iter().any(|e| e.contains("\"os\" is not defined")),
            "{planted:?}"
        );
    }
}

/// The pinned mypy, or `None` (after saying so) where it is not installed outside CI.
fn mypy() -> Option<PathBuf> {
    let mypy = root().join("tests/typecheck/.venv/bin/mypy");
    if mypy.is_file() {
        return Some(mypy);
    }
    let message = format!(
        "{} is missing: the stubs are not type-checked. Install it with\n  python3 -m venv tests/typecheck/.venv && tests/typecheck/.venv/bin/pip install -r tests/typecheck/requirements.txt",
        mypy.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{message}");
    }
    eprintln!("\n!!!!!!!!\n!!! SKIPPED: {message}\n!!!!!!!!\n");
    None
}

/// Type-checks `plans` (name, source) against `pyi`; the errors, as `NAME:LINE: error: …` with the plan's own
/// line numbers.
fn check_plans(mypy: &Path, pyi: &str, plans: &[(String, String)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("zamburak_tools.pyi"), pyi).unwrap();
    let mut files = Vec::new();
    for (name, source) in plans {
        let file = format!("plan_{name}.py");
        std::fs::write(
            dir.path().join(&file),
            format!("from zamburak_tools import *\n{source}"),
        )
        .unwrap();
        files.push(file);
    }
    let out = std::process::Command::new(mypy)
        .current_dir(dir.path())
        .arg("--config-file")
        .arg(root().join("tests/typecheck/mypy.ini"))
        .args(["--no-error-summary", "--show-error-codes"])
        .args(&files)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let errors: Vec<String> = stdout
        .lines()
        .filter(|l| l.contains(": error: "))
        .map(|l| {
            // `plan_NAME.py:LINE: error: …` → `NAME:LINE-1: error: …` (the import line is not the plan's).
            let rest = l.strip_prefix("plan_").unwrap_or(l);
            match rest.split_once(".py:").and_then(|(name, tail)| {
                let (line, msg) = tail.split_once(':')?;
                Some(format!("{name}:{}:{msg}", line.parse::<u32>().ok()? - 1))
            }) {
                Some(e) => e,
                None => l.to_string(),
            }
        })
        .collect();
    // mypy exits 1 with errors, 0 without; anything else (2: a crash, a bad config) is no verdict at all.
    assert!(
        matches!(out.status.code(), Some(0 | 1))
            && (out.status.code() == Some(1)) != errors.is_empty(),
        "mypy failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    errors
}

#[test]
fn every_committed_plan_type_checks_against_its_policy_stubs() {
    let Some(mypy) = mypy() else { return };
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, policy, plans) in suites() {
        let pyi = stubs(&["--policy", &policy_arg(&policy)]);
        let sources: Vec<(String, String)> = plans
            .iter()
            .map(|p| {
                // A careful and a naive plan share a file name: the naive one's is told apart.
                let naive = p.components().any(|c| c.as_os_str() == "plans-naive");
                let stem = p.file_stem().unwrap().to_string_lossy();
                (
                    if naive {
                        format!("naive_{stem}")
                    } else {
                        stem.into_owned()
                    },
                    std::fs::read_to_string(p).unwrap(),
                )
            })
            .collect();
        count += sources.len();
        for e in check_plans(&mypy, &pyi, &sources) {
            failures.push(format!("{name}/{e}"));
        }
    }
    assert_eq!(
        count,
        4 + 97 + 97,
        "the examples and AgentDojo's 97 careful and 97 naive plans"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A planted mistake: a banking plan with one line changed, and what mypy and `lint` must say.
struct Planted {
    what: &'static str,
    from: &'static str,
    to: &'static str,
    /// A part of mypy's message, at the changed line.
    mypy: &'static str,
    /// The lint code that reports it too, when lint checks that kind of mistake.
    lint: Option<&'static str>,
}

const PLANTED: &[Planted] = &[
    Planted {
        what: "unknown tool",
        from: "send_money(recipient=sender",
        to: "send_monies(recipient=sender",
        mypy: "Name \"send_monies\" is not defined; did you mean \"send_money\"?  [name-defined]",
        lint: Some("Z101"),
    },
    Planted {
        what: "misspelt keyword",
        from: "send_money(recipient=sender",
        to: "send_money(recipent=sender",
        mypy: "Unexpected keyword argument \"recipent\" for \"send_money\"; did you mean \"recipient\"?  [call-arg]",
        lint: Some("Z102"),
    },
    Planted {
        what: "missing argument",
        from: ", date=\"2022-04-01\")",
        to: ")",
        mypy: "Missing positional argument \"date\" in call to \"send_money\"  [call-arg]",
        lint: Some("Z103"),
    },
    Planted {
        what: "wrong literal type",
        from: "get_most_recent_transactions(n=100)",
        to: "get_most_recent_transactions(n=\"100\")",
        mypy: "Argument \"n\" to \"get_most_recent_transactions\" has incompatible type \"str\"; expected \"int\"  [arg-type]",
        lint: None,
    },
    Planted {
        what: "record key that does not exist",
        from: "transactions = get_most_recent_transactions(n=100)",
        to: "transactions = get_most_recent_transactions(n=100)\nprint(transactions[0][\"amout\"])",
        mypy: "TypedDict \"Transaction\" has no key \"amout\"  [typeddict-item]",
        lint: None,
    },
    Planted {
        what: "a query_llm shape that is not one",
        from: "schema={\"amount\": \"float\"}",
        to: "schema={\"amount\": float}",
        mypy: "[dict-item]",
        lint: None,
    },
];

#[test]
fn each_planted_mistake_is_reported_where_it_is() {
    let Some(mypy) = mypy() else { return };
    let policy_path = root().join("bench/agentdojo/policies/banking.yaml");
    let pyi = stubs(&["--policy", "bench/agentdojo/policies/banking.yaml"]);
    let base = std::fs::read_to_string(root().join("bench/agentdojo/plans/banking/user_task_4.py"))
        .unwrap();
    let policy = zamburak::policy::Policy::load(&policy_path).unwrap();
    assert!(check_plans(&mypy, &pyi, &[("base".into(), base.clone())]).is_empty());
    assert!(!zamburak::analysis::lint(&base, &policy, policy.mode()).has_errors());
    let plans: Vec<(String, String)> = PLANTED
        .iter()
        .enumerate()
        .map(|(i, p)| {
            assert_eq!(
                base.matches(p.from).count(),
                1,
                "{}: `{}` once in the plan",
                p.what,
                p.from
            );
            (format!("m{i}"), base.replacen(p.from, p.to, 1))
        })
        .collect();
    let errors = check_plans(&mypy, &pyi, &plans);
    for (i, p) in PLANTED.iter().enumerate() {
        let (_, source) = &plans[i];
        // The first line that differs from the plan it was planted in.
        let line = source
            .lines()
            .zip(base.lines())
            .position(|(a, b)| a != b)
            .unwrap()
            + 1;
        let mine: Vec<&String> = errors
            .iter()
            .filter(|e| e.starts_with(&format!("m{i}:")))
            .collect();
        assert!(
            mine.iter()
                .any(|e| e.starts_with(&format!("m{i}:{line}: error:")) && e.contains(p.mypy)),
            "{}: mypy should report `{}` at line {line}; it said {mine:#?}",
            p.what,
            p.mypy
        );
        // What `run` checks before anything runs says so too, where it checks that kind of mistake.
        if let Some(code) = p.lint {
            let report = zamburak::analysis::lint(source, &policy, policy.mode());
            assert!(
                report.diagnostics.iter().any(|d| d.code == code),
                "{}: lint should report {code}",
                p.what
            );
        }
    }
}

/// The done-when check of issue #35 (`zamburak stubs`), as a user would run it.
#[test]
fn banking_stubs_check_the_16_banking_plans_and_report_a_misspelt_keyword() {
    let Some(mypy) = mypy() else { return };
    let pyi = stubs(&["--policy", "bench/agentdojo/policies/banking.yaml"]);
    let dir = root().join("bench/agentdojo/plans/banking");
    let mut plans: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    plans.sort();
    assert_eq!(plans.len(), 16);
    assert_eq!(check_plans(&mypy, &pyi, &plans), Vec::<String>::new());
    let slipped = plans[0].1.replace("file_path=", "filepath=");
    assert_ne!(slipped, plans[0].1);
    let errors = check_plans(&mypy, &pyi, &[("slip".into(), slipped)]);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("Unexpected keyword argument \"filepath\" for \"read_file\"; did you mean \"file_path\"?")),
        "{errors:?}"
    );
}

#[test]
fn the_stub_docs_stubs_md_shows_is_what_stubs_prints() {
    let doc = std::fs::read_to_string(root().join("docs/stubs.md")).unwrap();
    let section = doc.split("## What a stub says").nth(1).unwrap();
    let block = section
        .split("```python\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap();
    let pyi = stubs(&["--policy", "bench/agentdojo/policies/banking.yaml"]);
    assert!(
        pyi.contains(block),
        "docs/stubs.md shows a `send_money` stub that `zamburak stubs` no longer prints"
    );
}

#[test]
fn a_full_stdout_is_exit_2_and_a_reader_that_stops_is_not_an_error() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .current_dir(root())
        .args(["stubs", "--format", "markdown"])
        .stdout(std::process::Stdio::from(full))
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write the output to stdout"), "{err}");
    // `zamburak stubs | head -c 3`: the reader has what it wanted. The document is larger than a pipe holds,
    // so the command does write into the closed pipe.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .current_dir(root())
        .args([
            "stubs",
            "--policy",
            "bench/agentdojo/policies/workspace.yaml",
            "--format",
            "json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 3];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_eq!(&first, b"{\n ");
    assert_eq!(status.code(), Some(0));
}
