//! Lineage is exact: the sources a trace records for an argument are exactly the calls its value derives
//! from, however many calls the run made (they were folded modulo 19 once, so call #88 showed as derived
//! from #1, #20, #39, #58 and #77). The expectations are computed here from the plan's own structure (call
//! `k` of the loop is read_file #k), independently of the label code.

use crate::common;

use std::collections::BTreeSet;

use common::world::{LIST_AROUND_A_READ, World, calls};
use serde_json::Value;

fn sources(call: &Value, arg: &str) -> BTreeSet<String> {
    let a = call["args"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == arg)
        .unwrap_or_else(|| panic!("no argument {arg} in {call}"));
    a["label"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn ids(ids: &[u32]) -> BTreeSet<String> {
    ids.iter().map(|i| format!("read_file#{i}")).collect()
}

#[test]
fn the_twenty_first_read_is_the_only_source() {
    let world = World::new(None);
    let plan = world.write_plan(
        "plan.py",
        "for i in range(20):\n    read_file(path=\"notes.md\")\nx = read_file(path=\"todo.txt\")\nsend_email(to=\"me@example.com\", subject=\"todo\", body=x)\n",
    );
    world.run_expect(&plan, &[], 0);
    let calls = calls(&world.path("plan.zjson"), None);
    let send = calls.iter().find(|c| c["tool"] == "send_email").unwrap();
    assert_eq!(send["call_id"], 22);
    assert_eq!(sources(send, "body"), ids(&[21]));
    assert!(sources(send, "subject").is_empty());
    assert_eq!(world.messages("out/outbox").len(), 1);
}

#[test]
fn a_long_run_records_the_exact_sources_of_every_sink() {
    let world = World::new(None);
    // 120 reads (calls 1..=120), then sinks over chosen reads. Indices that are equal modulo 19 (5, 24, 43,
    // 62, 81, 100, 119) are exactly the ones a folded label would have confused.
    let picks: [&[u32]; 5] = [
        &[1],
        &[20],
        &[5, 24, 43],
        &[62, 100, 119, 120],
        &[3, 21, 64, 65, 88],
    ];
    let mut plan = String::from(
        "xs = []\nfor i in range(120):\n    xs.append(read_file(path=\"notes.md\"))\n",
    );
    for p in &picks {
        let parts: Vec<String> = p.iter().map(|k| format!("xs[{}]", k - 1)).collect();
        plan.push_str(&format!(
            "send_email(to=\"me@example.com\", subject=\"lineage\", body={})\n",
            parts.join(" + ")
        ));
    }
    let plan = world.write_plan("plan.py", &plan);
    world.run_expect(&plan, &[], 0);
    let calls = calls(&world.path("plan.zjson"), None);
    let sends: Vec<&Value> = calls.iter().filter(|c| c["tool"] == "send_email").collect();
    assert_eq!(sends.len(), picks.len());
    for (send, p) in sends.iter().zip(picks) {
        assert_eq!(sources(send, "body"), ids(p), "call {}", send["call_id"]);
        assert!(sources(send, "subject").is_empty());
        assert!(sources(send, "to").is_empty());
    }
    // The control context of the sends: the loop ran over a trusted range, so no source.
    for send in &sends {
        assert!(send["pc"]["sources"].as_array().unwrap().is_empty());
    }
}

/// A list argument is what its elements are: a recipient read from a file, inside a list the plan wrote,
/// makes the whole `to` untrusted and derived from that read, in the trace (lineage, the viewer's edges)
/// and on the approval screen. The trace once recorded the list's own label ("trusted, public", no
/// source) while the decision read the element, so the screen said "label: trusted, public" above "why
/// it waits: element 2 … must be trusted; it is: untrusted".
#[test]
fn a_list_arguments_label_and_sources_are_its_elements() {
    let world = World::new(None);
    let plan = world.write_plan("plan.py", LIST_AROUND_A_READ);
    let out = world.run_expect(&plan, &[], 4);
    assert!(
        world.messages("out/outbox").is_empty(),
        "a held send sent nothing"
    );
    let calls = calls(&world.path("plan.zjson"), None);
    let send = calls.iter().find(|c| c["tool"] == "send_email").unwrap();
    assert_eq!(send["decision"], "confirm");
    assert_eq!(sources(send, "to"), ids(&[1]));
    let to = send["args"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "to")
        .unwrap();
    assert_eq!(to["label"]["integrity"], "untrusted", "{to}");
    // Each element as the decision read it: the plan's address, then the read.
    let elements: Vec<&str> = to["elements"]
        .as_array()
        .unwrap_or_else(|| panic!("no elements in {to}"))
        .iter()
        .map(|e| e["integrity"].as_str().unwrap())
        .collect();
    assert_eq!(elements, ["trusted", "untrusted"]);
    let screen = String::from_utf8_lossy(&out.stderr);
    let block: String = screen
        .lines()
        .skip_while(|l| !l.starts_with("  to = "))
        .take_while(|l| !l.starts_with("  subject = "))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(block.contains("! UNTRUSTED"), "{block}");
    assert!(!block.contains("label: trusted"), "{block}");
    assert!(block.contains("element 2: untrusted"), "{block}");
}

/// A list whose elements all carry the whole value's label records no `elements`: a long run of calls with
/// lists pays for them only where they tell something.
#[test]
fn a_list_of_like_elements_records_only_the_whole() {
    let world = World::new(None);
    let plan = world.write_plan(
        "plan.py",
        "send_email(to=[\"me@example.com\", \"me@example.com\"], subject=\"s\", body=\"b\")\n",
    );
    world.run_expect(&plan, &[], 0);
    assert_eq!(world.messages("out/outbox").len(), 1);
    let calls = calls(&world.path("plan.zjson"), None);
    let to = calls[0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "to")
        .unwrap();
    assert_eq!(to["label"]["integrity"], "trusted", "{to}");
    assert!(to.get("elements").is_none(), "{to}");
}
