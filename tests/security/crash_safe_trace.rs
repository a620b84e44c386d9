//! `kill -9` at any point of a run never leaves a side effect without its record: the decision is written
//! (one `write` per record, no buffering) before the effect and the result after it. A plan sending a few
//! hundred real Maildir messages is killed at points spread over its run; each time the trace verifies as
//! intact (complete or cut after a whole record) and every delivered message has its `allow` record.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::world::{World, records};

const SENDS: usize = 300;

fn world() -> World {
    let world = World::new(None);
    let policy = std::fs::read_to_string(world.path("policy.yaml")).unwrap();
    let policy = policy
        .replace("max_tool_calls: 200", "max_tool_calls: 1000")
        .replace("timeout_ms: 5000", "timeout_ms: 60000");
    assert!(policy.contains("max_tool_calls: 1000"));
    std::fs::write(world.path("policy.yaml"), policy).unwrap();
    world.write_plan(
        "many.py",
        &format!(
            "for i in range({SENDS}):\n    send_email(to=\"me@example.com\", subject=\"n\" + str(i), body=\"b\")\n"
        ),
    );
    world
}

fn start(world: &World) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("zamburak"))
        .arg("run")
        .arg(world.path("many.py"))
        .arg("--policy")
        .arg(world.path("policy.yaml"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Subjects of the delivered messages.
fn delivered(world: &World) -> BTreeSet<String> {
    world
        .messages("out/outbox")
        .iter()
        .filter_map(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("Subject: ").map(|s| s.trim().to_string()))
        })
        .collect()
}

#[test]
fn killing_the_run_anywhere_never_leaves_a_send_without_its_record() {
    // How long a whole run takes here, to spread the kill points over it.
    let full = world();
    let started = Instant::now();
    let status = start(&full).wait().unwrap();
    let whole = started.elapsed();
    assert_eq!(status.code(), Some(0));
    assert_eq!(delivered(&full).len(), SENDS);

    let mut cut_midway = 0;
    // From just after start-up to past the end, unevenly, so kills land between and inside calls; and
    // every 2 ms of the first 20, where the trace file is being created (a kill at 15.8 ms once found it
    // empty, with no header: the file is now created with its header in place).
    let mut points: Vec<Duration> = (0..12u32)
        .map(|k| whole.mul_f64(f64::from(k * k + 1) / 120.0))
        .collect();
    points.extend((1..=10u64).map(|ms| Duration::from_millis(2 * ms)));
    for (k, at) in points.into_iter().enumerate() {
        let world = world();
        let mut child = start(&world);
        std::thread::sleep(at);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        // The worker notices its parent is gone (its pipe closes) and ends; give it a moment.
        std::thread::sleep(Duration::from_millis(50));

        let trace = world.path("many.zjson");
        let verify = assert_cmd::Command::cargo_bin("zamburak")
            .unwrap()
            .arg("verify")
            .arg(&trace)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&verify.stdout).to_string()
            + &String::from_utf8_lossy(&verify.stderr);
        if !trace.exists() {
            // Killed before the trace was created: nothing may have been sent.
            assert!(
                delivered(&world).is_empty(),
                "kill {k}: sends without a trace"
            );
            continue;
        }
        assert!(
            said.starts_with("ok:") || said.starts_with("incomplete (no end record)"),
            "kill {k} at {at:?}: {said}"
        );
        if said.starts_with("incomplete") {
            cut_midway += 1;
        }
        // The n-th allowed send_email is the plan's i = n: subjects n0..n{allowed-1}.
        let allowed = records(&trace)
            .iter()
            .filter(|r| {
                r["type"] == "call" && r["tool"] == "send_email" && r["decision"] == "allow"
            })
            .count();
        let recorded: BTreeSet<String> = (0..allowed).map(|i| format!("n{i}")).collect();
        let sent = delivered(&world);
        assert!(
            sent.is_subset(&recorded),
            "kill {k}: sent without a record: {:?}",
            sent.difference(&recorded).collect::<Vec<_>>()
        );
        // At most the one in flight when the kill came is recorded but not delivered.
        assert!(
            allowed - sent.len() <= 1,
            "kill {k}: {allowed} allowed, {} sent",
            sent.len()
        );
    }
    assert!(
        cut_midway >= 6,
        "most kills should land inside the run ({cut_midway} did)"
    );
}
