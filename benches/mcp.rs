//! MCP calls through Zamburak against the bare client, in one run: 1,000 `echo` calls on the reference
//! server-everything (tests/mcp, `npm ci`), once as a plan run with every call decided, labelled and traced,
//! once as a plain loop over the same rmcp client Zamburak uses. Prints the added cost per call and the
//! ratio. Run with `cargo bench --bench mcp`; nothing here is asserted.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup that fails should stop it with a message saying what went wrong"
)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use zamburak::mcp::client::{Client, ServerCommand};
use zamburak::policy::Policy;
use zamburak::runtime::run::{Run, RunInput, Status, ToolBackend};
use zamburak::trace::TraceWriter;
use zamburak::trace::record::Header;

const CALLS: usize = 1000;
const ROUNDS: usize = 5;

fn server() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp/node_modules/.bin/mcp-server-everything");
    assert!(p.exists(), "run `npm ci` in tests/mcp first");
    p
}

/// The bare client: `calls` echo calls on a started server, timed without the start.
fn bare(client: &mut Client, calls: usize) -> Duration {
    let t = Instant::now();
    for _ in 0..calls {
        let mut args = Map::new();
        args.insert("message".into(), Value::String("hello".into()));
        client.call("echo", args).unwrap();
    }
    t.elapsed()
}

/// The same calls as a plan through `Run` (check, lower, pre-flight, Monty, decisions, labels, the trace),
/// on a backend whose server is already started.
fn through_zamburak(
    policy: &Policy,
    backend: &mut ToolBackend,
    calls: usize,
    dir: Option<&std::path::Path>,
) -> Duration {
    let plan = format!("for i in range({calls}):\n    echo(message=\"hello\")\n");
    let input = RunInput {
        source: &plan,
        policy,
        mode: policy.mode(),
    };
    let t = Instant::now();
    let mut writer = dir.map(|dir| {
        let header = Header::new(&plan, "sha256:bench".into(), "strict");
        TraceWriter::create(&dir.join("bench.zjson"), header).unwrap()
    });
    let report = Run::new(&input).execute(backend, writer.as_mut(), &mut |_| {});
    assert_eq!(report.status, Status::Completed, "{:?}", report.error);
    if let Some(w) = writer {
        w.close().unwrap();
    }
    t.elapsed()
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let policy_path = dir.path().join("zamburak.yaml");
    std::fs::write(
        &policy_path,
        format!(
            "version: 1\nlimits: {{ max_tool_calls: 5000, timeout_ms: 600000 }}\nservers:\n  every:\n    command: {:?}\ntools:\n  echo:\n    source: mcp.every.echo\n    effect: send\n    args:\n      message: {{ require: trusted }}\n",
            server().to_str().unwrap()
        ),
    )
    .unwrap();
    let policy = Policy::load(&policy_path).unwrap();
    zamburak::mcp::lock::build(&policy)
        .unwrap()
        .write_for(&policy_path)
        .unwrap();

    // Zamburak's per-call cost = (run of CALLS calls − run of 1 call) / (CALLS − 1): the plan's fixed costs
    // (check, lowering, pre-flight, trace header) cancel. Servers are started before timing, in both.
    let mut backend = ToolBackend::for_policy(&policy, Some(&policy_path)).unwrap();
    backend
        .hub()
        .unwrap()
        .start_for(&policy, &["echo".to_string()].into())
        .unwrap();
    let mut client = Client::start(&ServerCommand::scrubbed(
        server().to_str().unwrap(),
        &[],
        &[],
    ))
    .unwrap();
    // Warm both up.
    through_zamburak(&policy, &mut backend, 10, Some(dir.path()));
    bare(&mut client, 10);
    let mut z = Vec::new();
    let mut untraced = Vec::new();
    let mut b = Vec::new();
    for _ in 0..ROUNDS {
        let z1 = through_zamburak(&policy, &mut backend, 1, Some(dir.path()));
        let zn = through_zamburak(&policy, &mut backend, CALLS, Some(dir.path()));
        z.push(zn.saturating_sub(z1) / (CALLS as u32 - 1));
        let u1 = through_zamburak(&policy, &mut backend, 1, None);
        let un = through_zamburak(&policy, &mut backend, CALLS, None);
        untraced.push(un.saturating_sub(u1) / (CALLS as u32 - 1));
        b.push(bare(&mut client, CALLS) / CALLS as u32);
    }
    let untraced = median(untraced);
    client.shutdown();
    let (z, b) = (median(z), median(b));
    println!("mcp echo, {CALLS} calls, median of {ROUNDS} rounds");
    println!(
        "  bare rmcp client: {:>8.1} µs per call",
        b.as_secs_f64() * 1e6
    );
    println!(
        "  zamburak run:     {:>8.1} µs per call",
        z.as_secs_f64() * 1e6
    );
    println!(
        "  zamburak run without a trace: {:>8.1} µs per call",
        untraced.as_secs_f64() * 1e6
    );
    println!(
        "  added by zamburak: {:.1} µs per call; ratio {:.2}x",
        (z.as_secs_f64() - b.as_secs_f64()) * 1e6,
        z.as_secs_f64() / b.as_secs_f64()
    );
}
