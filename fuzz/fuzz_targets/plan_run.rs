//! The plan front end, the lowering and the labelled run, on arbitrary plan text. Oracles:
//! * nothing panics or aborts (the subset check, the compiler, the prelude, the boxing);
//! * transparency: a plan that calls no tool and completes both plainly on Monty and lowered prints the
//!   same thing both ways (docs/semantics.md: labels never change what a plan computes);
//! * non-interference (STRICT): run twice with `get()` answering two different untrusted values, the calls
//!   made under a trusted control context, with their trusted arguments, are the same in both runs up to
//!   where either run stops;
//! * labels known at compile time change nothing: compiled with and without them, the plan compiles both
//!   ways (the compiler never refuses it with `Z098`) and makes the same calls with the same labels.
#![no_main]

use libfuzzer_sys::fuzz_target;
use monty::MontyRun;
use monty_types::{CompileOptions, PrintWriter, ResourceLimits, ResourceTracker};
use zamburak::label::{LITERAL, Packed, UNTRUSTED_BIT};
use zamburak::lower::{Mode, Options, compile, compile_with};
use zamburak::plan::Signatures;
use zamburak::runtime::exec::{ExecLimits, ExecOutcome, Host, HostReply, execute};
use zamburak::value::{LValue, Raw};

fn sigs() -> Signatures {
    let mut sigs = Signatures::default();
    sigs.tools.insert("get".into(), vec![]);
    sigs.tools.insert("sink".into(), vec!["x".into()]);
    sigs
}

fn untrusted(text: &str) -> LValue {
    LValue::new(
        Raw::Str(text.into()),
        Packed::from_bits(LITERAL | UNTRUSTED_BIT),
    )
}

struct Observer {
    answer: LValue,
    calls: usize,
    /// Calls under a trusted pc: the first argument if its label is trusted, else `None`.
    low: Vec<Option<Raw>>,
    /// Every call: the tool, its arguments with all their labels, the control context.
    seen: Vec<(String, Vec<(String, LValue)>, i64)>,
}

impl Host for Observer {
    fn call(&mut self, name: &str, args: Vec<(String, LValue)>, pc: Packed, _: u32) -> HostReply {
        self.calls += 1;
        self.seen.push((name.to_string(), args.clone(), pc.bits()));
        if name == "get" {
            return HostReply::Return(self.answer.clone());
        }
        if pc.bits() & UNTRUSTED_BIT == 0 {
            let trusted = args
                .first()
                .filter(|(_, v)| v.deep_label().bits() & UNTRUSTED_BIT == 0)
                .map(|(_, v)| v.raw.clone());
            self.low.push(trusted);
        }
        HostReply::Return(LValue::new(Raw::None, Packed::LITERAL))
    }
}

fn limits() -> ExecLimits {
    ExecLimits {
        timeout: std::time::Duration::from_millis(300),
        max_recursion: 50,
        max_host_calls: 200,
        max_memory_mb: 256,
    }
}

fn lowered_run(
    lowered: &zamburak::lower::Lowered,
    answer: &str,
) -> (ExecOutcome, String, Observer) {
    let mut host = Observer {
        answer: untrusted(answer),
        calls: 0,
        low: Vec::new(),
        seen: Vec::new(),
    };
    let mut out = String::new();
    let outcome = execute(lowered, &sigs(), &mut host, &limits(), &mut |t| {
        out.push_str(t)
    });
    (outcome, out, host)
}

/// What the plan prints plainly on Monty, if it completes.
fn plain_run(src: &str) -> Option<String> {
    let run = MontyRun::new(src.to_string(), "p.py", vec![], CompileOptions::default()).ok()?;
    let mut out = String::new();
    let tracker = ResourceTracker::new(ResourceLimits {
        max_duration: Some(std::time::Duration::from_millis(300)),
        max_memory: Some(256 << 20),
        max_recursion_depth: 50,
        ..ResourceLimits::default()
    });
    run.run(vec![], tracker, PrintWriter::CollectString(&mut out, None))
        .ok()?;
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if src.len() > 2000 {
        return;
    }
    let sigs = sigs();
    let Ok(parsed) = zamburak::plan::check(src, &sigs) else {
        return;
    };
    let off = Options {
        constant_labels: false,
    };
    let Ok(without) = compile_with(&parsed.module, src, &sigs, Mode::Strict, off) else {
        return;
    };
    let lowered = match compile(&parsed.module, src, &sigs, Mode::Strict) {
        Ok(lowered) => lowered,
        Err(d) => panic!("labels known at compile time refuse a plan that compiles without them: {d:?}\n{src}"),
    };
    // A run that hit the clock stops wherever the (faster or slower) code happened to be.
    let timed_out = |o: &ExecOutcome| matches!(o, ExecOutcome::Halted { exc_type, .. } if exc_type == "TimeoutError");
    let (off_end, _, off_run) = lowered_run(&without, "alpha");
    let (on_end, _, on_run) = lowered_run(&lowered, "alpha");
    if !timed_out(&off_end) && !timed_out(&on_end) {
        assert_eq!(off_run.seen, on_run.seen, "labels known at compile time:\n{src}");
        assert_eq!(off_end, on_end, "labels known at compile time:\n{src}");
    }
    let (one, printed, first) = lowered_run(&lowered, "alpha");
    let (two, _, second) = lowered_run(&lowered, "a much longer answer, with 3 words");
    let n = first.low.len().min(second.low.len());
    assert_eq!(first.low[..n], second.low[..n], "non-interference:\n{src}");
    if one == ExecOutcome::Completed && two == ExecOutcome::Completed {
        assert_eq!(first.low, second.low, "non-interference:\n{src}");
    }
    if first.calls == 0
        && one == ExecOutcome::Completed
        && let Some(plain) = plain_run(src)
    {
        assert_eq!(printed, plain, "transparency:\n{src}");
    }
});
