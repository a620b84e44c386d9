//! What the person is told carries its label (docs/semantics.md, "What is protected"): the plan's own words
//! and the data's are told apart on the terminal, in `run --format json` and in the trace. The reproduction:
//! a plan prints what the mail said, and the person reads the attacker's words as the agent's.

use crate::common;

use common::world::{World, records};
use serde_json::Value;

const PLAN: &str = "m = read_inbox(limit=1)[0]\nprint(\"Your newest mail:\")\nprint(m[\"subject\"])\nif \"numbers\" in m[\"subject\"]:\n    print(\"It asks for numbers.\")\n";

#[test]
fn data_printed_is_marked_with_its_sources_everywhere() {
    let world = World::new(None);
    let plan = world.write_plan("plan.py", PLAN);
    let out = world.run(&plan, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    // The plan's own words are unmarked; the mail's subject, and a literal printed because of what the
    // mail said (strict mode: the condition is the mail's), carry the mail's source.
    assert_eq!(lines[0], "Your newest mail:", "{stdout}");
    assert!(
        lines[1].starts_with("⚠ read_inbox#1 │ ") && lines[1].contains("quarterly numbers"),
        "{stdout}"
    );
    assert_eq!(
        lines[2], "⚠ read_inbox#1 │ It asks for numbers.",
        "{stdout}"
    );

    // JSON: one segment per label, text only where trusted and public.
    let out = world.run(&plan, &["--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let segs = doc["output"].as_array().unwrap();
    assert_eq!(segs.len(), 2, "{doc}");
    assert_eq!(segs[0]["text"], "Your newest mail:\n");
    assert_eq!(segs[0]["label"]["integrity"], "trusted");
    assert_eq!(
        segs[1]["text"],
        Value::Null,
        "the mail's text stays out of the JSON"
    );
    assert_eq!(segs[1]["label"]["integrity"], "untrusted");
    assert_eq!(segs[1]["label"]["sources"][0], "read_inbox#1");
    assert!(!out.stdout.windows(17).any(|w| w == b"quarterly numbers"));

    // The trace: an output record per segment, the data's without its text.
    let recs = records(&world.path("plan.zjson"));
    let outs: Vec<&Value> = recs.iter().filter(|r| r["type"] == "output").collect();
    assert_eq!(outs.len(), 2);
    assert_eq!(outs[0]["preview"], "Your newest mail:\n");
    assert_eq!(outs[1]["preview"], Value::Null);
    assert_eq!(outs[1]["label"]["sources"][0], "read_inbox#1");
    assert_eq!(outs[1]["after_call"], 1);
    let text = std::fs::read_to_string(world.path("plan.zjson")).unwrap();
    assert!(!text.contains("quarterly numbers"));
}

/// A plan cannot forge a frame: text that looks like one is printed as text, under its own label.
#[test]
fn printed_text_that_looks_like_a_frame_is_only_text() {
    let world = World::new(None);
    let plan = world.write_plan(
        "plan.py",
        "m = read_inbox(limit=1)[0]\nprint(\"\\x000\\x005\\x00hello\" + m[\"subject\"])\n",
    );
    let out = world.run(&plan, &["--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let segs = doc["output"].as_array().unwrap();
    assert_eq!(segs.len(), 1, "{doc}");
    assert_eq!(segs[0]["label"]["integrity"], "untrusted");
}

/// The viewer shows the same: the printed segments with their sources, the data's text left out.
#[test]
fn the_viewer_lists_what_was_printed_with_its_sources() {
    let world = World::new(None);
    let plan = world.write_plan("plan.py", PLAN);
    assert_eq!(world.run(&plan, &[]).status.code(), Some(0));
    let page = world.path("page.html");
    let out = assert_cmd::Command::cargo_bin("zamburak")
        .unwrap()
        .args([
            "view",
            world.path("plan.zjson").to_str().unwrap(),
            "--export",
        ])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("What the plan printed"), "{html}");
    assert!(html.contains("<code>Your newest mail:\n</code>"), "{html}");
    assert!(
        html.contains("from read_inbox#1: not the agent&#x27;s words")
            || html.contains("from read_inbox#1: not the agent's words"),
        "{html}"
    );
    assert!(!html.contains("quarterly numbers"));
}
