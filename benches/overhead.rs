//! Plain Monty against Zamburak's lowered program, side by side on the same workloads, plus the per-call
//! costs of the decision procedure and the trace. Run with `cargo bench --bench overhead`; the ratios go
//! into the notes, tests never time anything.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup that fails should stop it with a message saying what went wrong"
)]

use std::time::Duration;

use divan::Bencher;
use monty::{MontyRun, RunProgress};
use monty_types::{CompileOptions, MontyObject, PrintWriter, ResourceTracker};
use serde_json::{Value, json};
use zamburak::label::Packed;
use zamburak::lower::{Mode, Options, compile, compile_with};
use zamburak::plan::Signatures;
use zamburak::policy::{Claim, Policy, decide, label_result};
use zamburak::runtime::exec::{ExecLimits, Host, HostReply, execute_on};
use zamburak::runtime::run::Engine;
use zamburak::value::LValue;

fn main() {
    divan::main();
}

#[path = "common/plans.rs"]
mod plans;
use plans::*;

/// Runs a plan on plain Monty, answering every external call with `result`.
fn run_plain(code: &str, result: &MontyObject) {
    let run = MontyRun::new(code.to_string(), "p.py", vec![], CompileOptions::default()).unwrap();
    let mut progress = run
        .start(vec![], ResourceTracker::default(), PrintWriter::Disabled)
        .unwrap();
    loop {
        match progress {
            RunProgress::Complete(_) => return,
            RunProgress::FunctionCall(call) => {
                progress = call.resume(result.clone(), PrintWriter::Disabled).unwrap();
            }
            _ => panic!("unexpected progress"),
        }
    }
}

struct FixedHost(LValue);
impl Host for FixedHost {
    fn call(&mut self, _: &str, _: Vec<(String, LValue)>, _: Packed, _: u32) -> HostReply {
        HostReply::Return(self.0.clone())
    }
}

fn sigs() -> Signatures {
    let mut s = Signatures::default();
    s.tools.insert("get_emails".into(), vec!["limit".into()]);
    s.tools.insert("get_text".into(), vec!["name".into()]);
    s.tools.insert(
        "send_email".into(),
        vec!["to".into(), "subject".into(), "body".into()],
    );
    s
}

/// Answers every call with a short text labelled as the runtime labels call `n`'s result.
struct CountingHost {
    policy: Policy,
    space: zamburak::label::LabelSpace,
    n: u32,
}
impl Host for CountingHost {
    fn call(&mut self, _: &str, _: Vec<(String, LValue)>, _: Packed, _: u32) -> HostReply {
        self.n += 1;
        HostReply::Return(label_result(
            &self.policy,
            "read_inbox",
            &json!("a line of text "),
            &mut self.space,
            self.n,
            Packed::LITERAL,
        ))
    }
}

/// Compiles and runs a plan lowered, the host answering with `result` labelled as untrusted mail.
fn run_lowered(code: &str, result: &LValue) {
    run_lowered_with(code, &mut FixedHost(result.clone()));
}

fn run_lowered_with(code: &str, host: &mut dyn Host) {
    run_on(&Engine::InProcess, code, host);
}

/// A plan of 1,000 tool calls, run on `engine`: in process, or in a worker process (what `zamburak run`
/// does); the difference per call is the worker boundary's cost.
const CALLS_1000_PLAN: &str =
    "n = 0\nfor i in range(1000):\n    n = n + len(get_text(name=\"n\"))\n";

fn run_on(engine: &Engine, code: &str, host: &mut dyn Host) {
    run_compiled_with(engine, code, host, Options::default());
}

/// As `zamburak run` does it: the machine is prepared (its prelude session starts loading) before the plan
/// is lowered.
fn run_compiled_with(engine: &Engine, code: &str, host: &mut dyn Host, options: Options) {
    let limits = ExecLimits {
        timeout: Duration::from_secs(60),
        max_recursion: 200,
        max_host_calls: 5000,
        max_memory_mb: 512,
    };
    let mut machine = engine.machine();
    machine.prepare(&limits.machine());
    let module = ruff_python_parser::parse_module(code)
        .unwrap()
        .into_syntax();
    let lowered = compile_with(&module, code, &sigs(), Mode::Strict, options).unwrap();
    let out = execute_on(
        machine.as_mut(),
        &lowered,
        &sigs(),
        host,
        &limits,
        &mut |_| {},
        &mut None,
    );
    assert_eq!(out, zamburak::runtime::exec::ExecOutcome::Completed);
}

fn worker() -> Engine {
    Engine::Worker(env!("CARGO_BIN_EXE_zamburak").into())
}

#[divan::bench(sample_count = 10)]
fn calls_1000_in_process(b: Bencher) {
    let r = labelled(&json!("a line of text "));
    b.bench(|| {
        run_on(
            &Engine::InProcess,
            CALLS_1000_PLAN,
            &mut FixedHost(r.clone()),
        )
    });
}

#[divan::bench(sample_count = 10)]
fn calls_1000_worker(b: Bencher) {
    let r = labelled(&json!("a line of text "));
    let engine = worker();
    b.bench(|| run_on(&engine, CALLS_1000_PLAN, &mut FixedHost(r.clone())));
}

/// The fixed cost of a worker: start the process, load the prelude, run `x = 1`, end.
#[divan::bench(sample_count = 30)]
fn one_line_in_process(b: Bencher) {
    let r = labelled(&Value::Null);
    b.bench(|| run_on(&Engine::InProcess, "x = 1\n", &mut FixedHost(r.clone())));
}

#[divan::bench(sample_count = 30)]
fn one_line_worker(b: Bencher) {
    let engine = worker();
    let r = labelled(&Value::Null);
    b.bench(|| run_on(&engine, "x = 1\n", &mut FixedHost(r.clone())));
}

fn labelled(v: &Value) -> LValue {
    let policy = Policy::bundled_default().unwrap();
    let mut space = policy.label_space().unwrap();
    label_result(&policy, "read_inbox", v, &mut space, 1, Packed::LITERAL)
}

#[divan::bench(sample_count = 30)]
fn agent_plan_plain(b: Bencher) {
    let r = to_monty(&emails());
    b.bench(|| run_plain(AGENT_PLAN, &r));
}

#[divan::bench(sample_count = 30)]
fn agent_plan_lowered(b: Bencher) {
    let r = labelled(&emails());
    b.bench(|| run_lowered(AGENT_PLAN, &r));
}

#[divan::bench(sample_count = 5)]
fn loop_100k_plain(b: Bencher) {
    b.bench(|| run_plain(LOOP_PLAN, &MontyObject::None));
}

#[divan::bench(sample_count = 5)]
fn loop_100k_lowered(b: Bencher) {
    let r = labelled(&Value::Null);
    b.bench(|| run_lowered(LOOP_PLAN, &r));
}

/// The same loop with the labels known at compile time left to run time (src/lower/constant.rs): what
/// that analysis saves, in the same run.
#[divan::bench(sample_count = 5)]
fn loop_100k_lowered_without_constant_labels(b: Bencher) {
    let r = labelled(&Value::Null);
    let off = Options {
        constant_labels: false,
        ..Options::default()
    };
    b.bench(|| {
        run_compiled_with(
            &Engine::InProcess,
            LOOP_PLAN,
            &mut FixedHost(r.clone()),
            off,
        )
    });
}

#[divan::bench(sample_count = 10)]
fn calls_500_plain(b: Bencher) {
    b.bench(|| run_plain(CALLS_PLAN, &MontyObject::String("a line of text ".into())));
}

#[divan::bench(sample_count = 10)]
fn calls_500_lowered(b: Bencher) {
    let policy = Policy::bundled_default().unwrap();
    b.bench(|| {
        let space = policy.label_space().unwrap();
        run_lowered_with(
            CALLS_PLAN,
            &mut CountingHost {
                policy: policy.clone(),
                space,
                n: 0,
            },
        )
    });
}

#[divan::bench(sample_count = 10)]
fn len_mails_100_plain(b: Bencher) {
    let r = to_monty(&emails());
    b.bench(|| run_plain(LEN_PLAN, &r));
}

#[divan::bench(sample_count = 10)]
fn len_mails_100_lowered(b: Bencher) {
    let r = labelled(&emails());
    b.bench(|| run_lowered(LEN_PLAN, &r));
}

#[divan::bench(sample_count = 5)]
fn words_100k_plain(b: Bencher) {
    let r = to_monty(&big_text());
    b.bench(|| run_plain(WORDS_PLAN, &r));
}

#[divan::bench(sample_count = 5)]
fn words_100k_lowered(b: Bencher) {
    let r = labelled(&big_text());
    b.bench(|| run_lowered(WORDS_PLAN, &r));
}

#[divan::bench]
fn decision_per_call(b: Bencher) {
    let policy = Policy::bundled_default().unwrap();
    let mut space = policy.label_space().unwrap();
    let mail = label_result(
        &policy,
        "get_email",
        &emails()[0],
        &mut space,
        1,
        Packed::LITERAL,
    );
    let body = space.decode(&mail.deep_label());
    let arg = |name: &str, label| zamburak::policy::ArgClaim {
        name: name.into(),
        label,
        elements: None,
        texts: zamburak::policy::Texts::one("me@example.com"),
        digest: "sha256:00".into(),
        remembered: Default::default(),
    };
    let claim = Claim {
        tool: "send_email".into(),
        args: vec![
            arg("to", zamburak::label::Label::literal()),
            arg("subject", body.clone()),
            arg("body", body),
        ],
        pc: zamburak::label::Label::literal(),
        calls_so_far: 3,
    };
    b.bench(|| decide(&policy, &space, divan::black_box(&claim)));
}

#[divan::bench]
fn trace_append(b: Bencher) {
    use zamburak::trace::record::{End, Header};
    let dir = tempfile::tempdir().unwrap();
    let mut w = zamburak::trace::TraceWriter::create(
        &dir.path().join("t.zjson"),
        Header::new("x = 1\n", "sha256:00".into(), "strict"),
    )
    .unwrap();
    let mut n = 0u64;
    b.bench_local(|| {
        n += 1;
        let rec = zamburak::trace::Record::Error(zamburak::trace::record::PlanError {
            line: Some(1),
            exc_type: "ValueError".into(),
            message: format!("<redacted: depends on get_email#{n}>"),
        });
        w.append(rec).unwrap();
    });
    let _ = End {
        status: String::new(),
        exit_code: 0,
        outcome: String::new(),
    };
}

/// The part of `agent_plan_lowered` that is Zamburak's own compiler: parse, check, lower to text.
#[divan::bench(sample_count = 30)]
fn agent_plan_lowering_only(b: Bencher) {
    b.bench(|| {
        let module = ruff_python_parser::parse_module(AGENT_PLAN)
            .unwrap()
            .into_syntax();
        compile(&module, AGENT_PLAN, &sigs(), Mode::Strict).unwrap()
    });
}

/// Loading the prelude session every run starts from (compiled at build time).
#[divan::bench(sample_count = 30)]
fn prelude_session_load(b: Bencher) {
    b.bench(|| monty::Dump::load(zamburak::lower::prelude_session()).unwrap());
}

/// What compiling the prelude at run time would cost instead: the agent plan as one standalone program.
#[divan::bench(sample_count = 30)]
fn agent_plan_standalone_compile(b: Bencher) {
    let module = ruff_python_parser::parse_module(AGENT_PLAN)
        .unwrap()
        .into_syntax();
    let lowered = compile(&module, AGENT_PLAN, &sigs(), Mode::Strict).unwrap();
    b.bench(|| {
        MontyRun::new(
            lowered.standalone(),
            "p.py",
            vec![],
            CompileOptions::default(),
        )
        .unwrap()
    });
}

/// Plain Monty compiling the agent plan (the part of `agent_plan_plain` that is not running it).
#[divan::bench(sample_count = 30)]
fn agent_plan_plain_compile(b: Bencher) {
    b.bench(|| {
        MontyRun::new(
            AGENT_PLAN.to_string(),
            "p.py",
            vec![],
            CompileOptions::default(),
        )
        .unwrap()
    });
}
