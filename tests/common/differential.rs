//! The harness of the on/off differential tests (`constant_labels`, `fused_idioms`, `raw_containers`): an
//! option that changes how a plan is lowered must never change what it computes, so a plan is run with the
//! option on and off and every call's labelled arguments, its control context and the way the run ended are
//! compared. `get()` answers the test's mail; `sink(x)` answers `None`.

use proptest::prelude::*;
use zamburak::label::Packed;
use zamburak::lower::{Lowered, Mode, Options, compile_with};
use zamburak::runtime::exec::{ExecOutcome, Host, HostReply, execute};
use zamburak::value::{LValue, Raw};

/// A string with the packed label `l`.
pub fn s(v: &str, l: i64) -> LValue {
    LValue::new(Raw::Str(v.into()), Packed::from_bits(l))
}

/// The test's mail, every part of it untrusted data: `subject`, a `from` address, `tags` (a list), and, when
/// `count` is given, a field `n` holding that int.
pub fn mail(subject: &str, tags: &[&str], count: Option<i64>) -> LValue {
    use zamburak::label::{LITERAL, UNTRUSTED_BIT};
    let taint = LITERAL | UNTRUSTED_BIT;
    let mut fields = vec![
        (s("subject", LITERAL), s(subject, taint)),
        (s("from", LITERAL), s("mallory@evil.test", taint)),
    ];
    if let Some(n) = count {
        fields.push((
            s("n", LITERAL),
            LValue::new(Raw::Int(n), Packed::from_bits(taint)),
        ));
    }
    fields.push((
        s("tags", LITERAL),
        LValue::new(
            Raw::List(tags.iter().map(|t| s(t, taint)).collect()),
            Packed::from_bits(taint),
        ),
    ));
    LValue::new(Raw::Dict(fields), Packed::from_bits(taint))
}

/// Every call as the runtime sees it: the tool, each argument with all its labels, the control context.
#[derive(Debug, PartialEq)]
pub struct Seen {
    pub tool: String,
    pub args: Vec<(String, LValue)>,
    pub pc: i64,
}

struct Recorder<'m> {
    seen: Vec<Seen>,
    mail: &'m LValue,
}

impl Host for Recorder<'_> {
    fn call(&mut self, name: &str, args: Vec<(String, LValue)>, pc: Packed, _: u32) -> HostReply {
        self.seen.push(Seen {
            tool: name.to_string(),
            args,
            pc: pc.bits(),
        });
        if name == "get" {
            return HostReply::Return(self.mail.clone());
        }
        HostReply::Return(LValue::new(Raw::None, Packed::LITERAL))
    }
}

/// The lowered snippet of `plan`.
pub fn compiled(plan: &str, mode: Mode, options: Options) -> String {
    lowered(plan, mode, options).snippet
}

fn lowered(plan: &str, mode: Mode, options: Options) -> Lowered {
    let module = super::parse(plan);
    compile_with(&module, plan, &super::get_and_sink(), mode, options)
        .unwrap_or_else(|d| panic!("{plan}\n{d:?}"))
}

/// Runs a lowered plan: the calls it made and how it ended.
pub fn run(lowered: &Lowered, mail: &LValue) -> (Vec<Seen>, String) {
    let mut host = Recorder {
        seen: Vec::new(),
        mail,
    };
    let limits = super::monty::test_limits();
    let out = execute(
        lowered,
        &super::get_and_sink(),
        &mut host,
        &limits,
        &mut |_| {},
    );
    let ended = match out {
        // A timeout's line depends on how fast the code is, which is what the option changes.
        ExecOutcome::Halted { exc_type, .. } if exc_type == "TimeoutError" => exc_type,
        other => format!("{other:?}"),
    };
    (host.seen, ended)
}

/// Lowers `plan` under `options` and runs it.
pub fn calls(plan: &str, mode: Mode, options: Options, mail: &LValue) -> (Vec<Seen>, String) {
    run(&lowered(plan, mode, options), mail)
}

/// The same calls and the same ending under `on` and `off`, in both modes.
pub fn same_either_way(
    plan: &str,
    on: Options,
    off: Options,
    mail: &LValue,
) -> Result<(), TestCaseError> {
    for mode in [Mode::Strict, Mode::Normal] {
        let (a, a_end) = calls(plan, mode, on, mail);
        let (b, b_end) = calls(plan, mode, off, mail);
        prop_assert_eq!(&a, &b, "{:?}\n{}", mode, plan);
        prop_assert_eq!(&a_end, &b_end, "{:?}\n{}", mode, plan);
    }
    Ok(())
}
