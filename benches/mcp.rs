//! MCP calls through Zamburak against the bare client, in one run: 1,000 `echo` calls on the reference
//! server-everything (tests/mcp, `npm ci`), once as a plan run with every call decided, labelled and traced,
//! once as a plain loop over the same rmcp client Zamburak uses. Prints the added cost per call and the
//! ratio. Run with `cargo bench --bench mcp`; nothing here is asserted.

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

/// The bare client: start, `calls` echo calls, shut down.
fn bare(calls: usize) -> Duration {
    let cmd = ServerCommand::scrubbed(server().to_str().unwrap(), &[], &[]);
    let t = Instant::now();
    let mut client = Client::start(&cmd).unwrap();
    for _ in 0..calls {
        let mut args = Map::new();
        args.insert("message".into(), Value::String("hello".into()));
        client.call("echo", args).unwrap();
    }
    client.shutdown();
    t.elapsed()
}

/// The same calls as a plan through `Run`, with the trace written.
fn through_zamburak(
    policy: &Policy,
    policy_path: &std::path::Path,
    calls: usize,
    dir: &std::path::Path,
) -> Duration {
    let plan = format!("for i in range({calls}):\n    echo(message=\"hello\")\n");
    let input = RunInput {
        source: &plan,
        policy,
        mode: policy.mode(),
    };
    let t = Instant::now();
    let mut backend = ToolBackend::for_policy(policy, Some(policy_path)).unwrap();
    backend.hub().unwrap().start_named(policy, &plan).unwrap();
    let header = Header::new(&plan, "sha256:bench".into(), "strict");
    let mut writer = TraceWriter::create(&dir.join("bench.zjson"), header).unwrap();
    let report = Run::new(&input).execute(&mut backend, Some(&mut writer), &mut |_| {});
    assert_eq!(report.status, Status::Completed, "{:?}", report.error);
    writer.close().unwrap();
    drop(backend);
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

    // Per-call cost = (time for CALLS calls − time for 1 call) / (CALLS − 1): startup and shutdown cancel.
    let mut z = Vec::new();
    let mut b = Vec::new();
    for _ in 0..ROUNDS {
        let z1 = through_zamburak(&policy, &policy_path, 1, dir.path());
        let zn = through_zamburak(&policy, &policy_path, CALLS, dir.path());
        z.push(zn.saturating_sub(z1) / (CALLS as u32 - 1));
        let b1 = bare(1);
        let bn = bare(CALLS);
        b.push(bn.saturating_sub(b1) / (CALLS as u32 - 1));
    }
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
        "  added by zamburak: {:.1} µs per call; ratio {:.2}x",
        (z.as_secs_f64() - b.as_secs_f64()) * 1e6,
        z.as_secs_f64() / b.as_secs_f64()
    );
}
