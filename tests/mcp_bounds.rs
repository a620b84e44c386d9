//! A hostile MCP server cannot exhaust the host: a tool listing is bounded in pages, bytes and time, a reply
//! over the message limit is refused at once (not dropped and waited out), requests of the server's own are
//! bounded, and a server that lists one tool name twice is refused. The server is our own (tests/mcp/flood_server.py). Every test asserts the refusal
//! and that nothing reached the server; the host's peak memory is measured with
//! `getrusage(RUSAGE_CHILDREN)`, the largest peak of every process this test binary has waited for (hence
//! a test binary of its own, whose every run must stay under the bound).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking, with a message saying what went wrong"
)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The most any process here may hold at its peak. A debug build of `zamburak` refusing the floods below
/// peaks at 30–40 MiB; before listings were bounded, it reached 201 MiB (small pages) and 527 MiB (1 MiB
/// pages) within its 10 s call timeout.
const PEAK_BUDGET: u64 = 128 << 20;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

use common::cli::{output_text as text, zamburak_in as zamburak};

/// Peak resident set of the largest process this test binary has waited for, in bytes.
fn largest_child_peak() -> u64 {
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    u64::try_from(usage.max_rss()).unwrap() * 1024
}

fn assert_peak_bounded() {
    let peak = largest_child_peak();
    assert!(
        peak < PEAK_BUDGET,
        "a process peaked at {} MiB (budget {} MiB)",
        peak >> 20,
        PEAK_BUDGET >> 20
    );
}

/// A state directory for the flood server, and a policy using its tools (`add` asks for confirmation),
/// locked while the server behaves. `extra_server`: more lines under the server's entry.
fn setup(extra_server: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let server = repo().join("tests/mcp/flood_server.py");
    std::fs::write(
        dir.join("zamburak.yaml"),
        format!(
            "version: 1\nservers:\n  flood:\n    command: python3\n    args: [{:?}, {:?}]\n    call_timeout_ms: 10000\n{extra_server}\
             tools:\n  add:\n    source: mcp.flood.add\n    effect: write\n    args:\n      a: {{}}\n      b: {{}}\n    on_violation: confirm\n\
             \x20 huge:\n    source: mcp.flood.huge\n    effect: read\n    args:\n      mb: {{}}\n\
             \x20 ping:\n    source: mcp.flood.ping\n    effect: read\n    args: {{}}\n",
            server.to_str().unwrap(),
            dir.to_str().unwrap()
        ),
    )
    .unwrap();
    let out = zamburak(dir, &["mcp", "lock"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    tmp
}

fn set_mode(dir: &Path, mode: &str) {
    std::fs::write(dir.join("mode"), mode).unwrap();
    let _ = std::fs::remove_file(dir.join("pages"));
}

fn calls(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn pages(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join("pages"))
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

fn server_gone(dir: &Path) -> bool {
    let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
    // A zombie is not a running server; /proc/PID/stat's third field is the state.
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat.split_whitespace().nth(2) == Some("Z"),
    }
}

#[test]
fn an_honest_server_may_paginate() {
    let tmp = setup("");
    let dir = tmp.path();
    set_mode(dir, "paged");
    let out = zamburak(dir, &["mcp", "lock"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(pages(dir), 2);
    std::fs::write(dir.join("p.py"), "print(ping())\n").unwrap();
    let out = zamburak(dir, &["run", "p.py"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("pong"), "{}", text(&out));
    assert_eq!(pages(dir), 4);
    assert_peak_bounded();
}

#[test]
fn an_endless_listing_is_refused_at_lock_and_run_with_memory_bounded() {
    let tmp = setup("");
    let dir = tmp.path();
    std::fs::write(dir.join("p.py"), "print(ping())\n").unwrap();
    for mode in ["endless", "endless_big"] {
        for args in [&["mcp", "lock"][..], &["run", "p.py"], &["mcp", "diff"]] {
            set_mode(dir, mode);
            let started = Instant::now();
            let out = zamburak(dir, args);
            let t = text(&out);
            assert_eq!(out.status.code(), Some(2), "{mode} {args:?}: {t}");
            let expected = if mode == "endless" {
                "tool list is longer than 100 pages"
            } else {
                "tool list is larger than 16777216 bytes"
            };
            assert!(t.contains(expected), "{mode} {args:?}: {t}");
            // Refused by the bound, long before the call timeout (10 s).
            assert!(
                started.elapsed() < Duration::from_secs(8),
                "{mode} {args:?}: {:?}",
                started.elapsed()
            );
            assert!(pages(dir) <= 101, "{mode} {args:?}: {} pages", pages(dir));
            assert!(calls(dir).is_empty(), "a call reached the server");
            assert!(server_gone(dir));
            assert_peak_bounded();
        }
    }
    // Slow pages: the whole listing gets the call timeout (lowered to 2 s here), not each page.
    set_mode(dir, "slow_pages");
    let policy = std::fs::read_to_string(dir.join("zamburak.yaml")).unwrap();
    std::fs::write(
        dir.join("zamburak.yaml"),
        policy.replace("call_timeout_ms: 10000", "call_timeout_ms: 2000"),
    )
    .unwrap();
    let started = Instant::now();
    let out = zamburak(dir, &["run", "p.py"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains("did not answer within 2000 ms while listing its tools"),
        "{t}"
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    assert!(pages(dir) < 20, "{} pages", pages(dir));
    assert!(calls(dir).is_empty());
    std::fs::write(dir.join("zamburak.yaml"), policy).unwrap();
    // The lock is the one written while the server behaved.
    set_mode(dir, "");
    let out = zamburak(dir, &["mcp", "diff"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn an_endless_listing_refuses_an_approval_and_leaves_the_claim_pending() {
    let tmp = setup("");
    let dir = tmp.path();
    // The second call runs under a condition on a result: it asks for confirmation.
    std::fs::write(
        dir.join("p.py"),
        "r = add(a=1, b=2)\nif \"3\" in r:\n    add(a=5, b=5)\n",
    )
    .unwrap();
    let out = zamburak(dir, &["run", "p.py"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert_eq!(calls(dir).len(), 1);
    set_mode(dir, "endless");
    let code = common::cli::snapshot_claim_code(&dir.join("p.zsnap"));
    let out = zamburak(
        dir,
        &["approve", "p.zsnap", "--claim", &code, "--by", "tester"],
    );
    let t = text(&out);
    assert_ne!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("tool list is longer than 100 pages"), "{t}");
    assert_eq!(calls(dir).len(), 1, "the approved call reached the server");
    assert!(server_gone(dir));
    assert_peak_bounded();
    // The claim is still pending: approved once the server behaves.
    set_mode(dir, "");
    let code = common::cli::snapshot_claim_code(&dir.join("p.zsnap"));
    let out = zamburak(
        dir,
        &["approve", "p.zsnap", "--claim", &code, "--by", "tester"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let c = calls(dir);
    assert_eq!(c.len(), 2, "{c:?}");
    assert_eq!(c[1]["arguments"]["a"], 5);
}

#[test]
fn an_endless_listing_after_a_list_changed_announcement_stops_the_run() {
    let tmp = setup("");
    let dir = tmp.path();
    set_mode(dir, "after_call endless");
    std::fs::write(dir.join("p.py"), "ping()\nping()\n").unwrap();
    let started = Instant::now();
    let out = zamburak(dir, &["run", "p.py"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("tool list is longer than 100 pages"), "{t}");
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(calls(dir).len(), 1, "the run went on after the flood");
    assert!(server_gone(dir));
    assert_peak_bounded();
}

#[test]
fn a_reply_over_the_message_limit_is_refused_promptly_and_the_limit_can_be_moved() {
    let tmp = setup("");
    let dir = tmp.path();
    // 24 MiB: over the default 16 MiB. Refused as soon as the limit is passed, not at the 10 s timeout.
    std::fs::write(dir.join("big.py"), "r = huge(mb=24)\nprint(len(r))\n").unwrap();
    let started = Instant::now();
    let out = zamburak(dir, &["run", "big.py"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("a message larger than 16777216 bytes")
            && t.contains("`max_message_bytes`")
            && !t.contains("did not answer"),
        "{t}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("25165824"));
    assert!(server_gone(dir));
    assert_peak_bounded();

    // Under the default, 2 MiB is a value; with the limit lowered to 1 MiB it is refused.
    std::fs::write(dir.join("small.py"), "r = huge(mb=2)\nprint(len(r))\n").unwrap();
    let out = zamburak(dir, &["run", "small.py"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("2097152"));
    let lowered = setup("    max_message_bytes: 1048576\n");
    let dir = lowered.path();
    std::fs::write(dir.join("small.py"), "r = huge(mb=2)\nprint(len(r))\n").unwrap();
    let out = zamburak(dir, &["run", "small.py"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("a message larger than 1048576 bytes"), "{t}");
    assert_peak_bounded();
}

#[test]
fn a_server_flooding_requests_or_notifications_is_bounded() {
    let tmp = setup("");
    let dir = tmp.path();
    std::fs::write(dir.join("p.py"), "print(ping())\n").unwrap();
    // `ping` requests without end, never reading the answers: stopped at the 101st. (Before: 636 MiB in
    // the 10 s call timeout.)
    set_mode(dir, "ping_flood");
    let started = Instant::now();
    let out = zamburak(dir, &["run", "p.py"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("the server sent more than 100 requests of its own"),
        "{t}"
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("pong"));
    assert!(server_gone(dir));
    assert_peak_bounded();
    // Log notifications without end are dropped as they come; the call timeout ends the call.
    set_mode(dir, "log_flood");
    let policy = std::fs::read_to_string(dir.join("zamburak.yaml")).unwrap();
    std::fs::write(
        dir.join("zamburak.yaml"),
        policy.replace("call_timeout_ms: 10000", "call_timeout_ms: 2000"),
    )
    .unwrap();
    let out = zamburak(dir, &["run", "p.py"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("did not answer within 2000 ms"), "{t}");
    assert!(server_gone(dir));
    assert_peak_bounded();
}

#[test]
fn a_tool_listed_twice_is_refused_at_lock_run_and_diff() {
    let tmp = setup("");
    let dir = tmp.path();
    std::fs::write(dir.join("p.py"), "print(ping())\n").unwrap();
    set_mode(dir, "duplicate");
    for args in [&["mcp", "lock"][..], &["run", "p.py"], &["mcp", "diff"]] {
        let before = std::fs::read(dir.join("zamburak.mcp.lock")).unwrap();
        let out = zamburak(dir, args);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {t}");
        assert!(
            t.contains("lists tool `add` more than once"),
            "{args:?}: {t}"
        );
        assert!(!t.contains("matches its pin"), "{args:?}: {t}");
        assert_eq!(
            std::fs::read(dir.join("zamburak.mcp.lock")).unwrap(),
            before,
            "the lock changed"
        );
        assert!(calls(dir).is_empty(), "a call reached the server");
        assert!(server_gone(dir));
    }
    let out = zamburak(
        dir,
        &[
            "mcp",
            "list",
            "--",
            "python3",
            &repo().join("tests/mcp/flood_server.py").to_string_lossy(),
            &dir.to_string_lossy(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("more than once"), "{}", text(&out));
}
