//! Peak memory of the whole process tree (`zamburak run` and its worker) on the two plans that used to abort
//! the process or grow without bound, under the default limits. Alone in its test binary: the measure is
//! `getrusage(RUSAGE_CHILDREN)`, the largest peak of every process this test has waited for.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking, with a message saying what went wrong"
)]

use std::time::{Duration, Instant};

mod common;
use common::world::World;

/// Peak resident set of the largest descendant waited for so far, in bytes.
fn largest_child_peak() -> u64 {
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    u64::try_from(usage.max_rss()).unwrap() * 1024
}

/// Resident set of `pid` and its children now, in bytes (0 once gone).
fn tree_rss(pid: u32) -> u64 {
    let rss = |p: &str| -> u64 {
        std::fs::read_to_string(format!("/proc/{p}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmRSS:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .unwrap_or(0)
            * 1024
    };
    rss(&pid.to_string())
        + common::world::child_pids(pid)
            .iter()
            .map(|c| rss(&c.to_string()))
            .sum::<u64>()
}

#[test]
fn both_hostile_plans_stay_under_1_5_gb_for_the_whole_process_tree() {
    const BUDGET: u64 = 1536 << 20;
    let world = World::new(None);
    let plans = [
        ("big.py", "s = \"a\" * (10**11)\nprint(len(s))\n"),
        (
            "join.py",
            "x = \"a\" * 1000000\ns = \"\".join([x] * 100000)\nprint(len(s))\n",
        ),
    ];
    let mut sampled_peak = 0;
    for (name, text) in plans {
        let plan = world.write_plan(name, text);
        let mut child = world.spawn_run(&plan);
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            sampled_peak = sampled_peak.max(tree_rss(child.id()));
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "{name} did not end");
            std::thread::sleep(Duration::from_millis(2));
        };
        assert_eq!(status.code(), Some(1), "{name}");
    }
    // Exact per process: the tree's peak is at most the parent's plus the worker's, each at most the
    // largest peak of any descendant.
    let largest = largest_child_peak();
    eprintln!(
        "largest process peak {} MiB, sampled tree peak {} MiB",
        largest >> 20,
        sampled_peak >> 20
    );
    assert!(2 * largest < BUDGET, "largest process peak {largest} bytes");
    assert!(
        sampled_peak < BUDGET,
        "sampled tree peak {sampled_peak} bytes"
    );
    // And the limit did bind: the worker grew toward 512 MiB on the join.
    assert!(largest > 256 << 20, "largest process peak {largest} bytes");
}
