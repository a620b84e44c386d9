//! Where a lowered run's time goes, phase by phase, for the overhead bench's workloads: Zamburak's lowering,
//! loading the prelude session, Monty compiling the snippet, running it (with the conversions at each tool
//! call), and dropping the finished session. Medians on a shared machine swing; instruction counts do not,
//! so the same phases are also run once under callgrind (`benches/callgrind.sh`), whose inclusive counts of
//! the `phase_*` functions below (and of Monty's compiler and conversion functions inside them) go into
//! `benches/results/overhead.md`.
//!
//! `cargo bench --bench phases` prints the medians; `cargo bench --bench phases -- --once agent` runs the
//! agent plan once (what callgrind measures); `-- --snippet agent` prints its lowered snippet, and
//! `-- --once agent --from FILE` runs a hand-edited snippet in its place (to measure a compiler change before
//! making it).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark's setup that fails should stop it with a message saying what went wrong"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use monty::{Dump, MontyRepl, MontyRun, ReplProgress, RunProgress, Session};
use monty_types::{CompileOptions, MontyObject, PrintWriter, ResourceTracker};
use serde_json::{Value, json};
use zamburak::label::Packed;
use zamburak::lower::{Lowered, Mode, compile};
use zamburak::plan::Signatures;
use zamburak::policy::{Policy, label_result};
use zamburak::runtime::boxing::{rebox, unbox};
use zamburak::runtime::exec::{ExecLimits, ExecOutcome, Host, HostReply, execute_on};
use zamburak::runtime::machine::Machine;
use zamburak::runtime::run::Engine;
use zamburak::value::LValue;

#[path = "common/plans.rs"]
mod plans;

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

fn labelled(v: &Value) -> LValue {
    let policy = Policy::bundled_default().unwrap();
    let mut space = policy.label_space().unwrap();
    label_result(&policy, "read_inbox", v, &mut space, 1, Packed::LITERAL)
}

#[inline(never)]
fn phase_lower(code: &str) -> Lowered {
    let module = ruff_python_parser::parse_module(code)
        .unwrap()
        .into_syntax();
    compile(&module, code, &sigs(), Mode::Strict).unwrap()
}

#[inline(never)]
fn phase_load() -> Box<MontyRepl> {
    match Dump::load(zamburak::lower::prelude_session())
        .unwrap()
        .state
    {
        Session::Idle(repl) => repl,
        _ => panic!("the prelude session is not idle"),
    }
}

/// Monty compiling the snippet without running it: the snippet under a condition that is false at run time
/// (not a constant, so nothing is folded away), fed to a loaded session.
#[inline(never)]
fn phase_compile(repl: Box<MontyRepl>, snippet: &str) {
    let mut guarded = String::with_capacity(snippet.len() * 2);
    guarded.push_str("if _ZK[0] == 1:\n");
    for line in snippet.lines() {
        guarded.push_str("    ");
        guarded.push_str(line);
        guarded.push('\n');
    }
    let mut out = String::new();
    let p = repl
        .feed_start(
            &guarded,
            Vec::new(),
            PrintWriter::CollectString(&mut out, None),
        )
        .unwrap();
    assert!(matches!(p, ReplProgress::Complete { .. }));
    // Leaked on purpose: the drop is measured on its own.
    std::mem::forget(p);
}

/// Answers one call: the host's side of the boundary (arguments unboxed, the result boxed).
#[inline(never)]
fn phase_convert(
    args: &[MontyObject],
    kwargs: &[(MontyObject, MontyObject)],
    result: &LValue,
) -> MontyObject {
    for a in args {
        black_box(unbox(a).unwrap());
    }
    for (k, v) in kwargs {
        if let MontyObject::String(k) = k
            && k.starts_with("_z")
        {
            continue;
        }
        black_box(unbox(v).unwrap());
    }
    rebox(result)
}

/// Compiles and runs the snippet on `repl` to its end, answering every call with `result`; returns the
/// finished session (not dropped: [`phase_drop`]).
#[inline(never)]
fn phase_run(repl: Box<MontyRepl>, snippet: &str, result: &LValue) -> MontyRepl {
    let mut out = String::new();
    let mut progress = repl
        .feed_start(
            snippet,
            Vec::new(),
            PrintWriter::CollectString(&mut out, None),
        )
        .unwrap();
    loop {
        match progress {
            ReplProgress::Complete { repl, .. } => return repl,
            ReplProgress::FunctionCall(call) => {
                let value = phase_convert(&call.args, &call.kwargs, result);
                progress = call
                    .resume(value, PrintWriter::CollectString(&mut out, None))
                    .unwrap();
            }
            _ => panic!("unexpected progress"),
        }
    }
}

#[inline(never)]
fn phase_drop(repl: MontyRepl) {
    drop(repl);
}

/// The whole lowered pipeline once, phase by phase (what `zamburak run` does in its interpreter).
#[inline(never)]
fn lowered_once(code: &str, result: &LValue) {
    let lowered = phase_lower(code);
    let repl = phase_load();
    let repl = phase_run(repl, &lowered.snippet, result);
    phase_drop(repl);
}

struct FixedHost(LValue);
impl Host for FixedHost {
    fn call(&mut self, _: &str, _: Vec<(String, LValue)>, _: Packed, _: u32) -> HostReply {
        HostReply::Return(self.0.clone())
    }
}

/// What `zamburak run` does in its interpreter, end to end on `engine`: the machine made (and, with
/// `prepare`, its prelude session loading ahead), the plan lowered, the run to its end.
fn end_to_end(engine: &Engine, code: &str, result: &LValue, prepare: bool) {
    let limits = ExecLimits {
        timeout: Duration::from_secs(60),
        max_recursion: 200,
        max_host_calls: 5000,
        max_memory_mb: 512,
    };
    let mut machine: Box<dyn Machine> = engine.machine();
    if prepare {
        machine.prepare(&limits.machine());
    }
    let lowered = phase_lower(code);
    let out = execute_on(
        machine.as_mut(),
        &lowered,
        &sigs(),
        &mut FixedHost(result.clone()),
        &limits,
        &mut |_| {},
        &mut None,
    );
    assert_eq!(out, ExecOutcome::Completed);
}

/// Plain Monty on the same plan, answering with the raw result.
#[inline(never)]
fn plain_once(code: &str, result: &MontyObject) {
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

fn workload(name: &str) -> (&'static str, Value) {
    match name {
        "agent" => (plans::AGENT_PLAN, plans::emails()),
        "words" => (plans::WORDS_PLAN, plans::big_text()),
        "loop" => (plans::LOOP_PLAN, Value::Null),
        "calls" => (plans::CALLS_PLAN, json!("a line of text ")),
        other => panic!("unknown workload {other}: agent, words, loop or calls"),
    }
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn time(n: usize, mut f: impl FnMut()) -> Duration {
    median(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn report(name: &str, n: usize) {
    let (code, data) = workload(name);
    let result = labelled(&data);
    let plain_result = plans::to_monty(&data);
    let lowered = phase_lower(code);
    let whole = time(n, || lowered_once(code, &result));
    let plain = time(n, || plain_once(code, &plain_result));
    let lower = time(n, || {
        black_box(phase_lower(code));
    });
    let load = time(n, || std::mem::forget(black_box(phase_load())));
    // Compile only, timed inside (the load outside the measurement).
    let compile = {
        let mut ds = Vec::new();
        for _ in 0..n {
            let repl = phase_load();
            let t = Instant::now();
            phase_compile(repl, &lowered.snippet);
            ds.push(t.elapsed());
        }
        median(ds)
    };
    let mut run_and_compile = Vec::new();
    let mut drops = Vec::new();
    for _ in 0..n {
        let repl = phase_load();
        let t = Instant::now();
        let repl = phase_run(repl, &lowered.snippet, &result);
        run_and_compile.push(t.elapsed());
        let t = Instant::now();
        phase_drop(repl);
        drops.push(t.elapsed());
    }
    let run_and_compile = median(run_and_compile);
    // Interleaved, so both see the same machine.
    let (mut ahead, mut not) = (Vec::new(), Vec::new());
    for _ in 0..n {
        for (prepare, into) in [(true, &mut ahead), (false, &mut not)] {
            let t = Instant::now();
            end_to_end(&Engine::InProcess, code, &result, prepare);
            into.push(t.elapsed());
        }
    }
    println!(
        "{name}: in process end to end {} prepared, {} not | plain {}",
        ms(median(ahead)),
        ms(median(not)),
        ms(plain),
    );
    println!(
        "{name}: whole {} | plain {} | ratio {:.2}x | lowering {} | load {} | compile {} | compile+run {} | drop {}",
        ms(whole),
        ms(plain),
        whole.as_secs_f64() / plain.as_secs_f64(),
        ms(lower),
        ms(load),
        ms(compile),
        ms(run_and_compile),
        ms(median(drops)),
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if let Some(pos) = args.iter().position(|a| a == "--snippet") {
        let name = args.get(pos + 1).map_or("agent", String::as_str);
        print!("{}", phase_lower(workload(name).0).snippet);
        return;
    }
    if let Some(pos) = args.iter().position(|a| a == "--once") {
        let name = args.get(pos + 1).map_or("agent", String::as_str);
        let (code, data) = workload(name);
        let result = labelled(&data);
        if args.iter().any(|a| a == "--plain") {
            plain_once(code, &plans::to_monty(&data));
        } else if args.iter().any(|a| a == "--end-to-end") {
            end_to_end(&Engine::InProcess, code, &result, false);
        } else if args.iter().any(|a| a == "--compile-only") {
            let lowered = phase_lower(code);
            phase_compile(phase_load(), &lowered.snippet);
        } else if let Some(file) = args
            .iter()
            .position(|a| a == "--from")
            .and_then(|i| args.get(i + 1))
        {
            // A hand-edited snippet of the workload (what a compiler change would write), run in its place.
            let snippet = std::fs::read_to_string(file).unwrap();
            let repl = phase_load();
            phase_drop(phase_run(repl, &snippet, &result));
        } else {
            lowered_once(code, &result);
        }
        return;
    }
    let names: Vec<&str> = match args.first() {
        Some(n) if !n.starts_with('-') => vec![n.as_str()],
        _ => vec!["agent", "loop", "calls", "words"],
    };
    for name in names {
        let n = match name {
            "agent" | "calls" => 200,
            _ => 7,
        };
        report(name, n);
    }
}
