//! What the command line prints around the work: a command whose stdout cannot be written (`> /dev/full`)
//! finishes its work, says so on stderr and exits 2 (or its own non-zero code), instead of panicking halfway
//! with exit 101 (#18); a reader that stops reading (`| head -1`) is not an error at all; errors have one
//! `error:` prefix and point at the line; mistyped commands get a suggestion (#20).

use crate::common;

use std::path::Path;
use std::process::Stdio;

fn to_dev_full(args: &[&str], dir: &Path) -> std::process::Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux");
    std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_full_stdout_is_an_error_not_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = to_dev_full(&["policy", "check", "policies/default.yaml"], root);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write the output to stdout"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_run_with_a_full_stdout_still_completes_its_trace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.py"), "print('hello')\n").unwrap();
    let out = to_dev_full(&["run", "p.py"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let verify = std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .args(["verify", dir.path().join("p.zjson").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

fn zamburak() -> std::process::Command {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
}

/// Runs `args` with stdout a pipe whose reader takes the first line and closes it, like `| head -1`.
fn into_head_1(args: &[&str], dir: &Path) -> (Option<i32>, String, String) {
    use std::io::{BufRead, Read};
    let mut child = zamburak()
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        reader.read_line(&mut first).unwrap();
        // Dropping the reader closes the pipe: every later write gets EPIPE.
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code(), first, err)
}

#[test]
fn a_reader_that_stops_reading_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.py"),
        "for i in range(100000):\n    print(i)\n",
    )
    .unwrap();
    let (code, first, err) = into_head_1(&["run", "p.py"], dir.path());
    assert_eq!(first, "0\n");
    assert_eq!(code, Some(0), "the run's own exit code: {err}");
    assert!(!err.contains("panicked") && !err.contains("error"), "{err}");
    assert!(err.contains("completed (allow)"), "{err}");
    let verify = zamburak()
        .args(["verify", dir.path().join("p.zjson").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(0), "the trace is complete");

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, first, err) = into_head_1(&["policy", "check", "policies/default.yaml"], root);
    assert_eq!(first, "version: 1\n");
    assert_eq!((code, err.as_str()), (Some(0), ""));
}

#[test]
fn a_mistyped_command_gets_a_suggestion() {
    for (args, suggested) in [
        (&["rn", "p.py"][..], "'run'"),
        (&["lnt", "p.py"][..], "'lint'"),
        (&["policy", "chek", "x.yaml"][..], "'check'"),
    ] {
        let out = zamburak().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("tip: a similar subcommand exists: {suggested}")),
            "{args:?}: {err}"
        );
    }
    // Nothing close: no tip rather than a wild guess.
    let out = zamburak().args(["frobnicate"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("tip:"));
}

#[test]
fn an_empty_plan_gets_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("e.py"), "\n# nothing yet\n").unwrap();
    let lint = zamburak()
        .current_dir(dir.path())
        .args(["lint", "e.py"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&lint.stdout);
    assert_eq!(lint.status.code(), Some(0), "a warning, not an error");
    assert!(
        out.contains("warning[Z003]: the plan is empty") && out.contains("0 errors, 1 warning"),
        "{out}"
    );
    let run = zamburak()
        .current_dir(dir.path())
        .args(["run", "e.py"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{err}");
    assert!(err.contains("warning: e.py is empty"), "{err}");
}

#[test]
fn a_plan_that_is_not_utf8_points_at_the_bad_byte() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.py"), b"x = 1\ny = \"\xff\"\n").unwrap();
    for command in ["lint", "run"] {
        let out = zamburak()
            .current_dir(dir.path())
            .args([command, "b.py"])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{command}: {text}");
        assert!(
            text.contains("error[Z001]: the plan is not UTF-8 text: byte 0xff here")
                && text.contains("--> b.py:2:6"),
            "{command}: {text}"
        );
    }
    assert!(!dir.path().join("b.zjson").exists(), "nothing ran");
}

#[test]
fn file_errors_have_one_prefix_and_point_at_the_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.yaml"), "version: 1\nmode: [\n").unwrap();
    std::fs::write(dir.path().join("ok.py"), "print(1)\n").unwrap();
    std::fs::write(
        dir.path().join("scen.yaml"),
        "scenarios:\n  - name: x\n    plan: 'print(1)'\n    colour: red\n",
    )
    .unwrap();
    let cases: [&[&str]; 5] = [
        &["policy", "check", "bad.yaml"],
        &["lint", "ok.py", "--policy", "bad.yaml"],
        &["run", "ok.py", "--policy", "bad.yaml"],
        &["mcp", "lock", "--policy", "bad.yaml"],
        &["policy", "test", "scen.yaml"],
    ];
    for args in cases {
        let out = zamburak()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: one error line:\n{err}");
        assert!(errors[0].starts_with("error: "), "{args:?}: {err}");
        assert!(
            !err.contains("<input>"),
            "{args:?}: the file is named: {err}"
        );
        if args[1] == "test" {
            assert!(
                err.contains("--> scen.yaml:4:") && err.contains("4 |     colour: red"),
                "{err}"
            );
        } else {
            assert!(
                err.contains("--> bad.yaml:2:7\n  |\n2 | mode: [\n  |       ^"),
                "{args:?}: {err}"
            );
        }
    }
    for (args, missing) in [
        (&["verify", "nope.zjson"][..], "nope.zjson"),
        (&["policy", "check", "nope.yaml"][..], "nope.yaml"),
        (&["policy", "test", "nope.yaml"][..], "nope.yaml"),
        (&["lint", "ok.py", "--policy", "nope.yaml"][..], "nope.yaml"),
    ] {
        let out = zamburak()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.lines()
                .any(|l| l.starts_with(&format!("error: cannot read {missing}: "))),
            "{args:?}: {err}"
        );
        assert_eq!(err.matches("error:").count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn json_output_gets_json_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok.py"), "print(1)\n").unwrap();
    for command in ["lint", "run"] {
        let out = zamburak()
            .current_dir(dir.path())
            .args([
                command,
                "ok.py",
                "--policy",
                "nope.yaml",
                "--format",
                "json",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{command}: stdout is JSON ({e}): {:?}", out.stdout));
        assert!(
            doc["error"]
                .as_str()
                .is_some_and(|m| m.starts_with("cannot read nope.yaml")),
            "{doc}"
        );
    }
}

#[test]
fn runtime_errors_point_at_the_plan_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.yaml"),
        "version: 1\nlimits:\n  timeout_ms: 300\n",
    )
    .unwrap();
    let cases = [
        // Monty raises these timeouts between instructions, without a traceback: the running top-level
        // statement is the line (before: no line at all).
        (
            "x = 0\nprint('start')\n\nwhile True:\n    x = x + 1\n",
            "error[TimeoutError]: the plan exceeded limits.timeout_ms = 300 at line 4\n --> p.py:4:1\n  |\n4 | while True:\n  | ^^^^^^^^^^^\n",
        ),
        (
            "def spin(n):\n    t = 0\n    for i in range(n):\n        t = t + i\n    return t\nys = [1]\nif len(ys) > 0:\n    print(spin(10**9))\n",
            "error[TimeoutError]: the plan exceeded limits.timeout_ms = 300 at line 8\n --> p.py:8:5\n  |\n8 |     print(spin(10**9))\n  |     ^^^^^^^^^^^^^^^^^^\n",
        ),
        (
            "x = 1\ny = x / 0\n",
            "error[ZeroDivisionError]: division by zero at line 2\n --> p.py:2:1\n  |\n2 | y = x / 0\n  | ^^^^^^^^^\n",
        ),
    ];
    for (plan, expected) in cases {
        std::fs::write(dir.path().join("p.py"), plan).unwrap();
        let out = zamburak()
            .current_dir(dir.path())
            .args(["run", "p.py", "--policy", "p.yaml"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(expected), "{plan}\n{err}");
    }
}

#[test]
fn decisions_stream_as_calls_happen_and_the_last_line_sums_up() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.yaml"),
        "version: 1\nlimits:\n  timeout_ms: 3000\ntools:\n  note:\n    source: builtin.files.read\n    effect: read\n    args: { path: {} }\nbuiltins:\n  files: { root: files }\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("files")).unwrap();
    std::fs::write(dir.path().join("files/a.txt"), "a").unwrap();
    // One call, then three seconds of computing: the call's line must be on the terminal while the plan
    // still runs, not when it ends.
    std::fs::write(
        dir.path().join("p.py"),
        "x = note(path='a.txt')\nn = 0\nwhile True:\n    n = n + 1\n",
    )
    .unwrap();
    let mut child = zamburak()
        .current_dir(dir.path())
        .args(["run", "p.py", "--policy", "p.yaml"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let first_decision = lines
        .by_ref()
        .map(Result::unwrap)
        .find(|l| l.starts_with("p.py:1: allow note"))
        .expect("a decision line");
    assert!(
        child.try_wait().unwrap().is_none(),
        "`{first_decision}` came only after the run ended"
    );
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert_eq!(child.wait().unwrap().code(), Some(1));
    assert!(
        rest.iter().any(|l| l == "stopped by an error: 1 allowed"),
        "{rest:?}"
    );
}

#[test]
fn a_run_with_drafts_says_where_they_are() {
    let world = common::world::World::new(None);
    let plan = world.write_plan(
        "triage.py",
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/triage.py"))
            .unwrap(),
    );
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .current_dir(world.path(""))
        .args(["run", "triage.py", "--policy", "policy.yaml"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.lines()
            .any(|l| l == "completed (draft): 2 allowed, 3 drafted → out/drafts/new"),
        "{err}"
    );
    assert_eq!(world.messages("out/drafts").len(), 3);
    let _ = plan;
}

/// A `KeyError` names the key when the plan wrote it (its label is trusted and public), even after the run
/// read mail; a key taken from the mail stays redacted, and a key a pre-raise missed earlier (STRICT,
/// caught inside the prelude) is never shown for a later error it did not cause (#20).
#[test]
fn key_errors_show_keys_the_plan_wrote_and_never_data() {
    let world = common::world::World::new(None);
    let cases: [(&str, &[&str], Option<&str>); 4] = [
        (
            "e = read_inbox(limit=5)\nx = e[0][\"subjct\"]\n",
            &[],
            Some("error[KeyError]: \"subjct\" at line 2\n --> "),
        ),
        (
            "e = read_inbox(limit=5)\nk = \"sub\" + \"jct\"\nfor m in e:\n    x = m[k]\n",
            &["--mode", "strict"],
            Some("error[KeyError]: \"subjct\" at line 4\n --> "),
        ),
        (
            "e = read_inbox(limit=5)\nx = e[0][e[1][\"subject\"]]\n",
            &[],
            None,
        ),
        (
            "e = read_inbox(limit=5)\nd = {}\nif len(e) > 100:\n    d[\"k\"].append(1)\nx = d.pop(e[0][\"subject\"])\n",
            &["--mode", "strict"],
            None,
        ),
    ];
    for (plan, flags, shown) in cases {
        let path = world.write_plan("k.py", plan);
        let out = world.run_expect(&path, flags, 1);
        let err = String::from_utf8_lossy(&out.stderr);
        let trace = common::world::records(&world.path("k.zjson"));
        let recorded = trace
            .iter()
            .find(|r| r["type"] == "error")
            .unwrap_or_else(|| panic!("an error record: {trace:?}"));
        match shown {
            Some(expected) => {
                assert!(err.contains(expected), "{plan}\n{err}");
                assert_eq!(recorded["message"], "\"subjct\"", "{plan}");
            }
            None => {
                assert!(
                    err.contains("error[KeyError]: <redacted: depends on read_inbox#1>"),
                    "{plan}\n{err}"
                );
                assert!(
                    recorded["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with("<redacted")),
                    "{plan}: {recorded}"
                );
            }
        }
    }
}

/// Every command a person types (`zamburak X --help`) ends by saying what its exit codes mean; the
/// subcommand list is clap's own, so a new command without them fails here.
#[test]
fn every_command_help_lists_its_exit_codes() {
    fn commands(prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut args = prefix.to_vec();
        args.push("--help".into());
        let help = zamburak().args(&args).output().unwrap();
        let text = String::from_utf8_lossy(&help.stdout).into_owned();
        let mut in_list = false;
        let mut subs = Vec::new();
        for line in text.lines() {
            if line.starts_with("Commands:") {
                in_list = true;
                continue;
            }
            if in_list {
                // A command's own line is indented by two; its wrapped description by more.
                let own = line.strip_prefix("  ").filter(|l| !l.starts_with(' '));
                match own.and_then(|l| l.split_whitespace().next()) {
                    Some(name) if name != "help" => subs.push(name.to_string()),
                    Some(_) => {}
                    None if line.trim().is_empty() => in_list = false,
                    None => {}
                }
            }
        }
        if subs.is_empty() {
            out.push(prefix.to_vec());
        }
        for sub in subs {
            let mut p = prefix.to_vec();
            p.push(sub);
            commands(&p, out);
        }
    }
    let mut all = Vec::new();
    commands(&[], &mut all);
    assert!(all.len() >= 13, "{all:?}");
    for command in &all {
        let mut args = command.clone();
        args.push("--help".into());
        let out = zamburak().args(&args).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("Exit codes: 0 "),
            "`zamburak {}` --help: {help}",
            command.join(" ")
        );
    }
    let verify = zamburak().args(["verify", "--help"]).output().unwrap();
    // Clap wraps the help to the terminal's width: compare the words, not the line breaks.
    let verify = String::from_utf8_lossy(&verify.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        verify.contains(", 4 the chain checks and the run is suspended"),
        "{verify}"
    );
    let run = zamburak().args(["run", "--help"]).output().unwrap();
    let run = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.contains("Pick normal only"),
        "--mode says which to pick: {run}"
    );
}

/// #39: repeated decisions of one call site are one line and a count, not one line per call; `-v` prints
/// every call and `-q` only the outcome. The run is the same (the trace records every call).
#[test]
fn repeated_decisions_are_grouped_by_call_site() {
    let world = common::world::World::new(None);
    let plan = world.write_plan(
        "loop.py",
        "for i in range(40):\n    note = read_file(path=\"todo.txt\")\nemails = read_inbox(limit=20)\nfor e in emails:\n    draft_reply(to=e[\"from\"], subject=\"Re\", body=\"Thanks\")\n",
    );
    let run = |flag: Option<&str>| {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"));
        cmd.current_dir(world.path(""))
            .args(["run", "loop.py", "--policy", "policy.yaml"]);
        if let Some(f) = flag {
            cmd.arg(f);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let grouped = run(None);
    let drafts = common::world::calls(&plan.with_extension("zjson"), Some("draft_reply")).len();
    assert!(drafts > 1);
    let lines: Vec<&str> = grouped
        .lines()
        .filter(|l| l.starts_with("loop.py:"))
        .collect();
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("loop.py:2: allow read_file"))
            .count(),
        2,
        "the first call in full, then the count: {grouped}"
    );
    assert!(
        lines.contains(&"loop.py:2: allow read_file ×40 (allow; -v shows every call)"),
        "{grouped}"
    );
    assert!(
        lines.contains(
            &"loop.py:3: allow read_inbox: every requirement of `read_inbox` holds (allow)"
        )
    );
    assert!(
        lines.iter().any(|l| *l
            == format!(
                "loop.py:5: draft draft_reply ×{drafts} (args.to.require; -v shows every call)"
            )),
        "{grouped}"
    );
    assert_eq!(lines.len(), 5, "{grouped}");

    let every = run(Some("-v"));
    assert_eq!(
        every
            .lines()
            .filter(|l| l.starts_with("loop.py:2: allow read_file:"))
            .count(),
        40
    );
    assert!(!every.contains('×'), "{every}");

    let quiet = run(Some("-q"));
    assert!(!quiet.lines().any(|l| l.starts_with("loop.py:")), "{quiet}");
    assert!(
        quiet
            .lines()
            .any(|l| l.starts_with(&format!("completed (draft): 41 allowed, {drafts} drafted"))),
        "{quiet}"
    );
    // Every call is in the trace, whatever was printed.
    assert_eq!(
        common::world::calls(&plan.with_extension("zjson"), Some("read_file")).len(),
        40
    );
}
