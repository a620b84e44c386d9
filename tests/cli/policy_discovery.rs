//! Which policy decided is never a guess: `--policy` wins, then the nearest `zamburak.yaml` up from the
//! plan, then the built-in default, announced. The trace records the policy's path, digest and text, and the
//! viewer shows the rule that decided. On `a7b7e77` an edited `policies/default.yaml` changed nothing,
//! silently, and nothing but a hash named the policy.

use crate::common;

use std::path::Path;

use assert_cmd::Command;
use common::world::{copy_dir, file_tree};
use serde_json::Value;

/// A fresh copy of `examples/` and `policies/` in a temporary directory (the layout of a checkout).
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["examples", "policies"] {
        copy_dir(&root.join(sub), &dir.path().join(sub));
    }
    dir
}

fn zamburak(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("zamburak")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn header(trace: &Path) -> Value {
    let text = std::fs::read_to_string(trace).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

/// The default policy with `draft_reply` denying instead of drafting.
fn strict_drafts(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("policies/default.yaml")).unwrap();
    // Without the remembered-address alternative too: lint cannot tell whether a value is remembered, so
    // only a policy that never accepts one lets it prove the denial.
    let edited = text
        .replace(
            "    on_violation: draft             # written to builtins.mail.drafts for the user to review, never sent",
            "    on_violation: deny",
        )
        .replace(
            "require: [trusted, \"verified(Recipient)\", \"known(correspondent)\"]   # a reply to an unverified sender",
            "require: [trusted, \"verified(Recipient)\"]   # a reply to an unverified sender",
        );
    assert_ne!(edited, text, "the default policy changed: update this test");
    edited
}

#[test]
fn a_zamburak_yaml_beside_the_plan_decides_and_is_recorded() {
    let dir = checkout();
    let policy = strict_drafts(dir.path());
    std::fs::write(dir.path().join("examples/zamburak.yaml"), &policy).unwrap();
    let (code, _, stderr) = zamburak(dir.path(), &["run", "examples/triage.py"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("policy: examples/zamburak.yaml (sha256 "),
        "{stderr}"
    );
    assert!(stderr.contains("deny draft_reply"), "{stderr}");
    let h = header(&dir.path().join("examples/triage.zjson"));
    assert_eq!(h["format"], zamburak::trace::record::FORMAT);
    assert_eq!(h["format"], 5);
    assert_eq!(h["policy"]["origin"], "discovered");
    assert_eq!(h["policy"]["path"], "examples/zamburak.yaml");
    assert_eq!(h["policy"]["text"], policy.as_str());
    assert_eq!(
        h["policy_sha256"],
        zamburak::trace::redact::sha256_bytes(policy.as_bytes())
    );
    // Nothing was drafted or sent.
    assert!(
        !dir.path().join("examples/out/drafts/new").exists()
            || std::fs::read_dir(dir.path().join("examples/out/drafts/new"))
                .unwrap()
                .next()
                .is_none()
    );

    // Lint finds the same file and says so.
    let (code, _, stderr) = zamburak(dir.path(), &["lint", "examples/triage.py"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("policy: examples/zamburak.yaml"),
        "{stderr}"
    );

    // The viewer names it and marks the rule that decided.
    let html = dir.path().join("view.html");
    let (code, _, stderr) = zamburak(
        dir.path(),
        &[
            "view",
            "examples/triage.zjson",
            "--export",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("policy: examples/zamburak.yaml"),
        "{stderr}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("examples&#x2f;zamburak.yaml (found beside the plan)"));
    let hit = page
        .split("class=\"pl hit\"")
        .nth(1)
        .expect("the deciding rule is marked");
    let hit_line = hit.split("</span>\n").next().unwrap();
    assert!(hit_line.contains("require"), "{hit_line}");
}

#[test]
fn the_flag_wins_over_a_discovered_file() {
    let dir = checkout();
    std::fs::write(
        dir.path().join("examples/zamburak.yaml"),
        strict_drafts(dir.path()),
    )
    .unwrap();
    let (code, _, stderr) = zamburak(
        dir.path(),
        &[
            "run",
            "examples/triage.py",
            "--policy",
            "policies/default.yaml",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("policy: policies/default.yaml"), "{stderr}");
    let h = header(&dir.path().join("examples/triage.zjson"));
    assert_eq!(h["policy"]["origin"], "flag");
}

#[test]
fn without_a_policy_file_the_built_in_default_is_announced_and_an_edited_copy_is_flagged() {
    let dir = checkout();
    let (code, _, stderr) = zamburak(dir.path(), &["run", "examples/triage.py"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("policy: built-in default (sha256 "),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    let h = header(&dir.path().join("examples/triage.zjson"));
    assert_eq!(h["policy"]["origin"], "built-in");
    assert_eq!(h["policy"]["path"], "built-in default");
    assert_eq!(h["policy"]["text"], zamburak::policy::BUNDLED_DEFAULT);

    // Editing policies/default.yaml does not change the built-in default: say so.
    std::fs::write(
        dir.path().join("policies/default.yaml"),
        strict_drafts(dir.path()),
    )
    .unwrap();
    let (code, _, stderr) = zamburak(dir.path(), &["run", "examples/triage.py"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning: policies/default.yaml differs from the built-in default"),
        "{stderr}"
    );
}

#[test]
fn policy_test_names_the_policy_it_ran() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, stdout, stderr) =
        zamburak(root, &["policy", "test", "tests/scenarios/01_sinks.yaml"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout
            .lines()
            .next()
            .unwrap()
            .starts_with("policy: tests/scenarios/"),
        "{stdout}"
    );
}

#[test]
fn a_missing_builtins_directory_names_the_key_the_path_and_the_policy() {
    let dir = checkout();
    let text = std::fs::read_to_string(dir.path().join("policies/default.yaml")).unwrap();
    std::fs::write(
        dir.path().join("examples/zamburak.yaml"),
        text.replace("root: ../examples/files", "root: ../examples/no-such-dir"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("examples/read.py"),
        "x = read_file(path=\"notes.md\")\n",
    )
    .unwrap();
    let (code, _, stderr) = zamburak(dir.path(), &["run", "examples/read.py"]);
    // A configuration error, found before the run: no trace, nothing called.
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nothing ran"), "{stderr}");
    assert!(!dir.path().join("examples/read.zjson").exists());
    assert!(stderr.contains("`builtins.files.root`"), "{stderr}");
    assert!(
        stderr.contains("examples/../examples/no-such-dir"),
        "{stderr}"
    );
    assert!(stderr.contains("examples/zamburak.yaml"), "{stderr}");
}

/// An empty directory outside any checkout, with nothing but the plan.
fn elsewhere(plan: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.py"), plan).unwrap();
    dir
}

const MAIL_AND_FILES: &str = "msgs = read_inbox(limit=3)\nprint(len(msgs))\n\
write_file(path=\"note.txt\", content=\"hello\")\nprint(read_file(path=\"note.txt\"))\n";

#[test]
fn outside_the_repository_the_built_in_default_says_what_to_do_and_runs_nothing() {
    let dir = elsewhere(MAIL_AND_FILES);
    let before = file_tree(dir.path());
    let (code, stdout, stderr) = zamburak(dir.path(), &["run", "plan.py"]);
    assert_eq!(code, 2, "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(first.contains("zamburak policy init"), "{stderr}");
    assert!(first.contains("--policy"), "{stderr}");
    // It never names a policy file that is not there.
    assert!(!stderr.contains("policies/default.yaml"), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(
        file_tree(dir.path()),
        before,
        "nothing is written: no trace, no file"
    );
}

#[test]
fn outside_the_repository_a_plan_that_names_no_data_tool_runs_on_the_default() {
    let dir = elsewhere("print(1 + 1)\n");
    let (code, _, stderr) = zamburak(dir.path(), &["run", "plan.py"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn policy_init_then_run_works_from_an_empty_directory() {
    let dir = elsewhere(MAIL_AND_FILES);
    let (code, stdout, stderr) = zamburak(dir.path(), &["policy", "init"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("wrote zamburak.yaml"), "{stdout}");
    for folder in [
        "mail/inbox/cur",
        "mail/inbox/new",
        "mail/inbox/tmp",
        "files",
    ] {
        assert!(dir.path().join(folder).is_dir(), "{folder}");
    }
    let (code, stdout, stderr) = zamburak(dir.path(), &["run", "plan.py"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.starts_with("policy: zamburak.yaml"), "{stderr}");
    assert!(
        stdout.contains("0\n") && stdout.contains("hello"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("files/note.txt")).unwrap(),
        "hello"
    );
    // The written policy is the default's rules: a data-chosen recipient still waits for a person.
    let text = std::fs::read_to_string(dir.path().join("zamburak.yaml")).unwrap();
    assert!(text.contains("maildir: mail/inbox"), "{text}");
    assert!(text.contains("on_violation: confirm"), "{text}");
}

#[test]
fn policy_init_never_replaces_a_file_or_touches_an_existing_folder_without_force() {
    let dir = elsewhere("print(1)\n");
    std::fs::write(dir.path().join("zamburak.yaml"), "version: 1\n").unwrap();
    std::fs::create_dir_all(dir.path().join("files")).unwrap();
    std::fs::write(dir.path().join("files/mine.txt"), "keep").unwrap();
    let before = file_tree(dir.path());
    let (code, _, stderr) = zamburak(dir.path(), &["policy", "init"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(file_tree(dir.path()), before);
    let (code, _, stderr) = zamburak(dir.path(), &["policy", "init", "--force"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("files/mine.txt")).unwrap(),
        "keep"
    );
    assert_ne!(
        std::fs::read_to_string(dir.path().join("zamburak.yaml")).unwrap(),
        "version: 1\n"
    );
}

#[test]
fn a_tool_without_a_source_stops_the_run_before_it_starts_and_an_unnamed_one_does_not() {
    let dir = elsewhere("x = lookup(q=\"a\")\nprint(x)\n");
    std::fs::write(
        dir.path().join("zamburak.yaml"),
        "version: 1\ntools:\n  lookup: { effect: read, args: { q: {} } }\n",
    )
    .unwrap();
    let before = file_tree(dir.path());
    let (code, _, stderr) = zamburak(dir.path(), &["run", "plan.py"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("tool `lookup` has no `source:`"),
        "{stderr}"
    );
    assert!(stderr.contains("`tools.lookup.source`"), "{stderr}");
    assert_eq!(file_tree(dir.path()), before, "no trace, no lock");
    std::fs::write(dir.path().join("other.py"), "print(2)\n").unwrap();
    let (code, _, stderr) = zamburak(dir.path(), &["run", "other.py"]);
    assert_eq!(code, 0, "{stderr}");
    // `policy check` names it too, and still ends with its verdict.
    let (code, stdout, _) = zamburak(dir.path(), &["policy", "check", "zamburak.yaml"]);
    assert_eq!(code, 0);
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(
            "# valid: zamburak.yaml (1 tool, 0 verifiers, mode strict); 1 tool cannot work"
        ),
        "{stdout}"
    );
}
