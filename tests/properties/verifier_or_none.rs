//! `verify_x(value, or_none=True)`: a value that fails the check gives `None` instead of stopping the run,
//! so a loop can skip strangers; what it returns is labelled as the raising form's (#20).

use crate::common;

use common::world::{World, calls, records};

const PLAN: &str = "emails = read_inbox(limit=20)\nfor e in emails:\n    who = verify_recipient(e[\"from\"], or_none=True)\n    if who is not None:\n        draft_reply(to=who, subject=\"Re: your mail\", body=\"Thanks, I will get back to you.\")\n";

#[test]
fn strangers_are_skipped_and_only_verified_recipients_get_replies() {
    let world = World::new(None);
    let plan = world.write_plan("replies.py", PLAN);
    let out = world.run_expect(&plan, &[], 0);
    let err = String::from_utf8_lossy(&out.stderr);
    let trace = plan.with_extension("zjson");
    let uses: Vec<serde_json::Value> = records(&trace)
        .into_iter()
        .filter(|r| r["type"] == "verifier")
        .collect();
    let failed = uses.iter().filter(|u| u["ok"] == false).count();
    let passed = uses.iter().filter(|u| u["ok"] == true).count();
    assert!(failed > 0 && passed > 0, "{err}");
    // Every reply went to a verified address, and there is one per verified sender.
    let replies = calls(&trace, Some("draft_reply"));
    assert_eq!(replies.len(), passed, "{err}");
    let drafted = world.messages("out/drafts");
    let sent = world.messages("out/outbox");
    assert_eq!(drafted.len() + sent.len(), passed, "{err}");
    for m in drafted.iter().chain(&sent) {
        let to = m
            .lines()
            .find_map(|l| l.strip_prefix("To: "))
            .unwrap_or_default();
        assert!(
            to.trim_end_matches('>').ends_with("@example.com"),
            "a reply to {to}"
        );
    }

    // The raising form stops at the first stranger, as before.
    let strict = world.write_plan("stop.py", &PLAN.replace(", or_none=True", ""));
    let out = world.run_expect(&strict, &[], 1);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("error[VerificationError]"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn lint_accepts_the_form_and_only_as_a_literal() {
    let dir = tempfile::tempdir().unwrap();
    let lint = |text: &str| {
        std::fs::write(dir.path().join("p.py"), text).unwrap();
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
            .current_dir(dir.path())
            .args(["lint", "p.py", "--format", "json"])
            .output()
            .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let codes: Vec<String> = doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap().to_string())
            .collect();
        (out.status.code(), codes)
    };
    let (code, codes) = lint(PLAN);
    assert_eq!(code, Some(0), "{codes:?}");
    assert!(!codes.iter().any(|c| c == "Z106"), "{codes:?}");
    // The flag is the plan's literal, never a value computed at run time.
    let (code, codes) =
        lint("flag = True\nwho = verify_recipient(\"a@example.com\", or_none=flag)\n");
    assert_eq!((code, codes), (Some(1), vec!["Z106".to_string()]));
    let (code, codes) = lint("who = verify_recipient(\"a@example.com\", maybe=True)\n");
    assert_eq!((code, codes), (Some(1), vec!["Z106".to_string()]));
}

#[test]
fn lint_narrows_on_a_none_check_in_normal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let lint = |text: &str| -> Vec<(String, String)> {
        std::fs::write(dir.path().join("p.py"), text).unwrap();
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
            .current_dir(dir.path())
            .args(["lint", "p.py", "--format", "json", "--mode", "normal"])
            .output()
            .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["calls"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["tool"] == "send_email")
            .map(|c| {
                (
                    c["predicted"]["may"].as_str().unwrap().to_string(),
                    c["rule"]["may"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let head =
        "emails = read_inbox(limit=5)\nwho = verify_recipient(emails[0][\"from\"], or_none=True)\n";
    // Checked: only the verified address reaches `to`.
    let checked = lint(&format!(
        "{head}if who is not None:\n    send_email(to=who, subject=\"hi\", body=\"Thanks.\")\n"
    ));
    assert_eq!(checked.len(), 1, "{checked:?}");
    assert!(
        checked.iter().all(|(_, rule)| rule != "args.to.require"),
        "{checked:?}"
    );
    // Unchecked: `to` may be None, which carries the unverified label.
    let unchecked = lint(&format!(
        "{head}send_email(to=who, subject=\"hi\", body=\"Thanks.\")\n"
    ));
    assert!(
        unchecked.iter().any(|(_, rule)| rule == "args.to.require"),
        "{unchecked:?}"
    );
    // A reassignment ends the narrowing.
    let reassigned = lint(&format!(
        "{head}if who is not None:\n    who = emails[1][\"from\"]\n    send_email(to=who, subject=\"hi\", body=\"Thanks.\")\n"
    ));
    assert!(
        reassigned.iter().any(|(_, rule)| rule == "args.to.require"),
        "{reassigned:?}"
    );
}
