//! The repair loop, measured (issue #35, measure repair; docs/lint.md "Repair loop: measured"). Each plan of
//! `tests/repair/plans` is a plan as a code-writing model writes it, with the mistake its first line names. A
//! scripted repairer applies only what `zamburak lint --format json` says, the `fix` of its diagnostics
//! (tests/common/fixes.rs), for at most two rounds; a plan that then lints with exit 0 (warnings allowed) has
//! converged, and is run under the default policy in a fresh copy of `examples/` and `policies/`. The table of
//! outcomes must equal the one in docs/lint.md: when lint's fixes change, paste the table this test prints.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common;
use common::fixes::{self, Edit, Fix};
use common::world::copy_dir;

/// Repair rounds a plan gets after the first lint.
const ROUNDS: usize = 2;

/// The page the loopback docs server answers every request with.
const DOCS_PAGE: &str =
    "Onboarding\n\nWelcome to the team. Read the handbook, then set up your laptop.\n";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The corpus, sorted by name.
fn plans() -> Vec<PathBuf> {
    let mut plans: Vec<PathBuf> = std::fs::read_dir(root().join("tests/repair/plans"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    plans.sort();
    plans
}

/// What the first line says the model got wrong: `# mistake: SHORT — WHAT A CORRECT PLAN DOES`.
fn mistake(plan: &str) -> Option<(&str, &str)> {
    plan.lines()
        .next()?
        .strip_prefix("# mistake: ")?
        .split_once(" — ")
}

/// A loopback HTTP server answering [`DOCS_PAGE`] to every request: the docs server the fetching plans
/// name as `http://127.0.0.1/…`. Returns its port.
fn docs_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{DOCS_PAGE}",
                DOCS_PAGE.len()
            );
        }
    });
    port
}

/// A fresh copy of `examples/` and `policies/` (the layout of a checkout), whose default policy lets
/// `fetch_url` reach the docs server on `port` instead of port 80.
fn checkout(port: u16) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["examples", "policies"] {
        copy_dir(&root().join(sub), &dir.path().join(sub));
    }
    let policy = dir.path().join("policies/default.yaml");
    let text = std::fs::read_to_string(&policy).unwrap();
    let moved = text.replace(
        "allow: [\"http://127.0.0.1\"]",
        &format!("allow: [\"http://127.0.0.1:{port}\"]"),
    );
    assert_ne!(
        moved, text,
        "the default policy's web allow-list changed: update this test"
    );
    std::fs::write(&policy, moved).unwrap();
    dir
}

fn zamburak(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("zamburak")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// `lint --format json` of `text` written to `dir/name`, under the default policy as committed (the copy
/// in `dir` differs only in the web allow-list, which the plans' literal `http://127.0.0.1/` URLs match).
/// Returns the exit code and the document.
fn lint(dir: &Path, name: &str, text: &str) -> (i32, Value) {
    std::fs::write(dir.join(name), text).unwrap();
    let policy = root().join("policies/default.yaml");
    let out = zamburak(
        dir,
        &[
            "lint",
            name,
            "--policy",
            policy.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let code = out.status.code().unwrap_or(-1);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{name}: lint did not print one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    if code == 0 || code == 1 {
        assert_eq!(
            code == 0,
            doc["errors"] == 0,
            "{name}: lint's exit code {code} disagrees with its error count: {doc}"
        );
    }
    (code, doc)
}

/// One plan's way through the loop.
struct Outcome {
    name: String,
    mistake: String,
    /// Repair rounds applied (each applied at least one fix).
    rounds: usize,
    converged: bool,
    /// The exit code of `zamburak run` on the converged plan.
    run: Option<i32>,
}

/// Lints `text`, then applies lint's fixes for up to [`ROUNDS`] rounds while it has errors. Returns the rounds
/// applied, whether the last lint exited 0, and the plan as repaired. Says what each round did on stdout.
fn repair(dir: &Path, name: &str, mut text: String) -> (usize, bool, String) {
    let (mut code, mut doc) = lint(dir, name, &text);
    let mut rounds = 0;
    while doc["errors"].as_u64().is_some_and(|n| n > 0) && rounds < ROUNDS {
        let all = fixes::fixes_of(&doc, &text)
            .unwrap_or_else(|e| panic!("{name}: lint broke the fix contract: {e}"));
        let (chosen, dropped) = fixes::choose(all);
        if chosen.is_empty() {
            // Nothing to apply: lint would say the same again.
            break;
        }
        for f in &chosen {
            println!(
                "  {name} round {}: {} ({}) {}",
                rounds + 1,
                f.code,
                f.applicability,
                f.message
            );
        }
        for f in &dropped {
            println!(
                "  {name} round {}: dropped {} (overlaps): {}",
                rounds + 1,
                f.code,
                f.message
            );
        }
        text = fixes::apply(&text, &chosen);
        rounds += 1;
        (code, doc) = lint(dir, name, &text);
    }
    let codes: Vec<&str> = doc["diagnostics"]
        .as_array()
        .map(|ds| ds.iter().filter_map(|d| d["code"].as_str()).collect())
        .unwrap_or_default();
    println!("  {name}: lint exit {code} after {rounds} round(s) {codes:?}");
    (rounds, code == 0, text)
}

/// `zamburak run` of `text` under the default policy, with the docs server's port in its loopback URLs.
fn run(dir: &Path, name: &str, text: &str, port: u16) -> i32 {
    let text = text.replace("http://127.0.0.1/", &format!("http://127.0.0.1:{port}/"));
    std::fs::write(dir.join(name), text).unwrap();
    let out = zamburak(dir, &["run", name, "--policy", "policies/default.yaml"]);
    let code = out.status.code().unwrap_or(-1);
    let last = String::from_utf8_lossy(&out.stderr)
        .lines()
        .rfind(|l| !l.trim().is_empty() && !l.starts_with("trace:"))
        .unwrap_or("")
        .to_string();
    println!("  {name}: run exit {code}: {last}");
    code
}

fn measure() -> Vec<Outcome> {
    let port = docs_server();
    plans()
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            let (short, _) =
                mistake(&text).unwrap_or_else(|| panic!("{file}: no `# mistake: … — …` line"));
            let dir = checkout(port);
            let (rounds, converged, repaired) = repair(dir.path(), &file, text.clone());
            let run = converged.then(|| run(dir.path(), &file, &repaired, port));
            Outcome {
                name: file.trim_end_matches(".py").to_string(),
                mistake: short.replace('|', "\\|"),
                rounds,
                converged,
                run,
            }
        })
        .collect()
}

/// The table and totals as docs/lint.md shows them.
fn report(outcomes: &[Outcome]) -> String {
    let mut s =
        String::from("| plan | mistake | rounds | converged | run exit |\n|---|---|---|---|---|\n");
    for o in outcomes {
        let run = o.run.map_or("—".to_string(), |c| c.to_string());
        let converged = if o.converged { "yes" } else { "no" };
        s.push_str(&format!(
            "| `{}` | {} | {} | {converged} | {run} |\n",
            o.name, o.mistake, o.rounds
        ));
    }
    let total = outcomes.len();
    let converged = outcomes.iter().filter(|o| o.converged).count();
    let exits = |c: i32| outcomes.iter().filter(|o| o.run == Some(c)).count();
    let other = converged - [0, 4, 3, 1].iter().map(|&c| exits(c)).sum::<usize>();
    let per_mille = converged * 1000 / total.max(1);
    s.push_str(&format!(
        "\n**Totals:** {total} plans; **{converged} converge** to a plan that lints clean in ≤ {ROUNDS} rounds \
         ({}.{}%). Of those, **{} run without a confirmation** (exit 0), {} wait for a person (exit 4), {} are \
         denied (exit 3), {} stop with an error (exit 1){}.\n",
        per_mille / 10,
        per_mille % 10,
        exits(0),
        exits(4),
        exits(3),
        exits(1),
        if other > 0 { format!(", {other} end otherwise") } else { String::new() },
    ));
    s
}

const BEGIN: &str = "<!-- repair-table:begin -->";
const END: &str = "<!-- repair-table:end -->";

#[test]
fn the_repair_loop_converges_as_docs_lint_md_says() {
    let outcomes = measure();
    assert_eq!(outcomes.len(), 40, "the corpus has 40 plans");
    let table = report(&outcomes);
    println!("{table}");
    let docs = std::fs::read_to_string(root().join("docs/lint.md")).unwrap();
    let written = docs
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(block, _)| block.trim());
    assert!(
        written == Some(table.trim()),
        "docs/lint.md, \"Repair loop: measured\", is out of date: paste this between `{BEGIN}` and `{END}`:\n\n{table}"
    );
}

#[test]
fn fetching_plans_reach_the_loopback_docs_server() {
    // The harness's own plumbing: a plan that names `http://127.0.0.1/…` runs against the docs server, and
    // the page it fetched is what reaches the outbox.
    let port = docs_server();
    let dir = checkout(port);
    let plan = "page = fetch_url(url=\"http://127.0.0.1/docs/onboarding\")\nsend_email(to=\"me@example.com\", subject=\"Onboarding doc\", body=page[\"body\"])\n";
    let (rounds, converged, repaired) = repair(dir.path(), "fetch.py", plan.to_string());
    assert_eq!((rounds, converged, repaired.as_str()), (0, true, plan));
    assert_eq!(run(dir.path(), "fetch.py", plan, port), 0);
    let outbox = dir.path().join("examples/out/outbox/new");
    let sent: Vec<String> = std::fs::read_dir(&outbox)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains("Welcome to the team."), "{}", sent[0]);
}

#[test]
fn every_plan_names_its_mistake_and_what_a_correct_plan_does() {
    let plans = plans();
    assert_eq!(plans.len(), 40);
    for path in plans {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            name.len() > 3 && name[..2].bytes().all(|b| b.is_ascii_digit()) && &name[2..3] == "_",
            "{name}: not NN_short_name.py"
        );
        let (short, fix) =
            mistake(&text).unwrap_or_else(|| panic!("{name}: no `# mistake: … — …` line"));
        assert!(!short.is_empty() && !fix.is_empty(), "{name}");
    }
}

// The repairer itself, on hand-made fixes: today's lint emits none, so without these the application code
// would be untested.

fn edit(start: usize, end: usize, content: &str) -> Edit {
    Edit {
        start,
        end,
        content: content.to_string(),
    }
}

fn fix(code: &str, edits: Vec<Edit>) -> Fix {
    Fix {
        code: code.to_string(),
        message: String::new(),
        applicability: "safe".to_string(),
        edits,
    }
}

/// A lint document with one diagnostic per entry: `None` has no `fix` key, `Some(v)` has `"fix": v`.
fn doc(fixes: Vec<Option<Value>>) -> Value {
    let diagnostics: Vec<Value> = fixes
        .into_iter()
        .map(|f| {
            let mut d = serde_json::json!({"code": "Z102", "severity": "error"});
            if let Some(f) = f {
                d["fix"] = f;
            }
            d
        })
        .collect();
    serde_json::json!({"ok": false, "errors": diagnostics.len(), "diagnostics": diagnostics})
}

#[test]
fn fixes_are_read_from_lint_json_and_checked_against_the_plan() {
    let plan = "emails = read_inbox(count=5)\nsend_email(to=\"é\", subjet=\"x\", body=\"y\")\n";
    // `count` is bytes 20..25 on line 1; `subjet` is bytes 49..55, columns 20..26 of line 2 (the `é` before
    // it is 2 bytes and 1 column).
    assert_eq!(plan.find("subjet"), Some(49));
    let rename = |start: usize, end: usize, line: usize, col: usize, end_col: usize, to: &str| {
        serde_json::json!({"message": format!("rename to `{to}`"), "applicability": "safe", "edits": [
            {"start": start, "end": end, "line": line, "column": col, "end_line": line, "end_column": end_col, "content": to}]})
    };
    let good = doc(vec![
        None,
        Some(Value::Null),
        Some(rename(20, 25, 1, 21, 26, "limit")),
        Some(rename(49, 55, 2, 20, 26, "subject")),
    ]);
    let fixes = fixes::fixes_of(&good, plan).unwrap();
    assert_eq!(fixes.len(), 2, "a missing or null fix is no fix");
    let (chosen, dropped) = fixes::choose(fixes);
    assert!(dropped.is_empty());
    assert_eq!(
        fixes::apply(plan, &chosen),
        "emails = read_inbox(limit=5)\nsend_email(to=\"é\", subject=\"x\", body=\"y\")\n"
    );
    // Contract violations are errors, not guesses.
    for bad in [
        rename(20, 99, 1, 21, 100, "limit"),  // past the end
        rename(25, 20, 1, 26, 21, "limit"),   // reversed
        rename(20, 25, 1, 20, 26, "limit"),   // column off by one
        rename(45, 46, 2, 17, 18, "e"),       // inside the `é`
        rename(49, 55, 2, 21, 27, "subject"), // columns counted in bytes
        serde_json::json!({"message": "m", "applicability": "maybe", "edits": []}),
        serde_json::json!({"message": "m", "applicability": "safe", "edits": []}),
        serde_json::json!({"message": "m", "applicability": "safe", "edits": [
            {"start": 20, "end": 25, "line": 1, "column": 21, "end_line": 1, "end_column": 26, "content": "a"},
            {"start": 22, "end": 23, "line": 1, "column": 23, "end_line": 1, "end_column": 24, "content": "b"}]}),
    ] {
        assert!(
            fixes::fixes_of(&doc(vec![Some(bad.clone())]), plan).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn overlapping_fixes_lose_to_the_first_and_edits_apply_from_the_end() {
    let plan = "send_email(to=e[\"from\"], subject=s, body=b)";
    let to = plan.find("e[\"from\"]").unwrap();
    let to_end = to + "e[\"from\"]".len();
    // Wrap the recipient (two insertions), then a fix that replaces the same span (dropped), then one that
    // inserts where the wrap inserts (dropped), then a fix of the subject after it (kept).
    let wrap = fix(
        "Z201",
        vec![edit(to, to, "verify_recipient("), edit(to_end, to_end, ")")],
    );
    let replace = fix("Z203", vec![edit(to, to_end, "\"me@example.com\"")]);
    let insert = fix("Z203", vec![edit(to_end, to_end, " ")]);
    let s = plan.find("=s,").unwrap() + 1;
    let rename = fix("Z101", vec![edit(s, s + 1, "\"Re\"")]);
    let (chosen, dropped) = fixes::choose(vec![
        wrap.clone(),
        replace.clone(),
        insert.clone(),
        rename.clone(),
    ]);
    assert_eq!(chosen, vec![wrap, rename]);
    assert_eq!(dropped, vec![replace, insert]);
    assert_eq!(
        fixes::apply(plan, &chosen),
        "send_email(to=verify_recipient(e[\"from\"]), subject=\"Re\", body=b)"
    );
    // Adjacent edits both apply: a replacement and an insertion at its end, a deletion before them.
    let plan = "abcdef";
    let chosen = vec![
        fix("A", vec![edit(2, 4, "XY")]),
        fix("B", vec![edit(4, 4, "+")]),
        fix("C", vec![edit(0, 2, "")]),
    ];
    let (chosen, dropped) = fixes::choose(chosen);
    assert!(dropped.is_empty());
    assert_eq!(fixes::apply(plan, &chosen), "XY+ef");
}
