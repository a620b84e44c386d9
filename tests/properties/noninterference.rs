//! Non-interference, tested: in STRICT mode, what a plan does at calls with a trusted control context, with
//! trusted arguments, cannot depend on attacker data. Random plans run twice on two mails that differ only in
//! attacker-controlled content; the trusted-observable calls must be the same in both runs (up to the point
//! where either run stops: termination-insensitive, docs/semantics.md, "What is protected").

use crate::common;

use common::stmt;
use proptest::prelude::*;
use zamburak::label::{LITERAL, Packed, UNTRUSTED_BIT};
use zamburak::lower::{Mode, compile};
use zamburak::plan::Signatures;
use zamburak::runtime::exec::{ExecLimits, Host, HostReply, execute};
use zamburak::value::{LValue, Raw};

const TAINT: i64 = LITERAL | UNTRUSTED_BIT;

fn s(v: &str, l: i64) -> LValue {
    LValue::new(Raw::Str(v.into()), Packed::from_bits(l))
}

fn mail(subject: &str, from: &str, tags: &[&str]) -> LValue {
    LValue::new(
        Raw::Dict(vec![
            (s("subject", LITERAL), s(subject, TAINT)),
            (s("from", LITERAL), s(from, TAINT)),
            (
                s("tags", LITERAL),
                LValue::new(
                    Raw::List(tags.iter().map(|t| s(t, TAINT)).collect()),
                    Packed::from_bits(TAINT),
                ),
            ),
        ]),
        Packed::from_bits(TAINT),
    )
}

struct Observer {
    result: LValue,
    /// Calls made under a trusted pc: the argument if trusted, else `None` (its value is allowed to differ).
    low: Vec<Option<Raw>>,
}

impl Host for Observer {
    fn call(&mut self, name: &str, args: Vec<(String, LValue)>, pc: Packed, _: u32) -> HostReply {
        if name == "get" {
            return HostReply::Return(self.result.clone());
        }
        if pc.bits() & UNTRUSTED_BIT == 0 {
            let v = &args[0].1;
            let trusted = v.deep_label().bits() & UNTRUSTED_BIT == 0;
            self.low.push(trusted.then(|| v.raw.clone()));
        }
        HostReply::Return(LValue::new(Raw::None, Packed::LITERAL))
    }
}

fn observe(plan: &str, result: LValue) -> Vec<Option<Raw>> {
    let sigs = common::get_and_sink();
    let module = common::parse(plan);
    let lowered =
        compile(&module, plan, &sigs, Mode::Strict).unwrap_or_else(|d| panic!("{plan}\n{d:?}"));
    let limits = ExecLimits {
        timeout: std::time::Duration::from_secs(5),
        max_recursion: 100,
        max_host_calls: 500,
        max_memory_mb: 512,
    };
    let mut host = Observer {
        result,
        low: Vec::new(),
    };
    let _ = execute(&lowered, &sigs, &mut host, &limits, &mut |_| {});
    host.low
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]
    #[test]
    fn strict_mode_trusted_calls_do_not_depend_on_attacker_data(body in prop::collection::vec(stmt(), 1..7)) {
        let plan = format!("import json\nimport re\na = 'x'\nb = 1\nxs = ['s']\nd = {{'k': 'v'}}\ne = get()\n{}sink(a)\nsink(b)\nsink(xs)\nsink(d)\n", body.concat());
        let one = observe(&plan, mail("x", "mallory@evil.test", &["p"]));
        let two = observe(&plan, mail("q", "eve@evil.test", &["q", "p", "m"]));
        let n = one.len().min(two.len());
        prop_assert_eq!(&one[..n], &two[..n], "{}", plan);
    }
}

/// Records verifier outputs and what reaches sinks with the verified kind.
struct KindObserver {
    result: LValue,
    verified: Vec<Raw>,
    /// Untrusted sink arguments that carry kind 0.
    claimed: Vec<Raw>,
}

const KIND0_UNVERIFIED: i64 = 1 << 2;

impl Host for KindObserver {
    fn call(&mut self, name: &str, args: Vec<(String, LValue)>, _: Packed, _: u32) -> HostReply {
        match name {
            "get" => HostReply::Return(self.result.clone()),
            "verify" => {
                let v = args[0].1.clone();
                self.verified.push(v.raw.clone());
                HostReply::Return(LValue::new(v.raw, v.label.mint(0)))
            }
            _ => {
                let v = &args[0].1;
                if v.label.bits() & UNTRUSTED_BIT != 0 && v.label.bits() & KIND0_UNVERIFIED == 0 {
                    self.claimed.push(v.raw.clone());
                }
                HostReply::Return(LValue::new(Raw::None, Packed::LITERAL))
            }
        }
    }
}

fn kinds_reaching_sinks(plan: &str, mode: Mode) -> (Vec<Raw>, Vec<Raw>) {
    let mut sigs = Signatures::default();
    sigs.tools.insert("get".into(), vec![]);
    sigs.tools.insert("sink".into(), vec!["x".into()]);
    sigs.verifiers.insert("verify".into());
    let module = ruff_python_parser::parse_module(plan)
        .unwrap()
        .into_syntax();
    let lowered = compile(&module, plan, &sigs, mode).unwrap_or_else(|d| panic!("{plan}\n{d:?}"));
    let limits = ExecLimits {
        timeout: std::time::Duration::from_secs(5),
        max_recursion: 100,
        max_host_calls: 500,
        max_memory_mb: 512,
    };
    let mut host = KindObserver {
        result: mail("x", "mallory@evil.test", &["p"]),
        verified: Vec::new(),
        claimed: Vec::new(),
    };
    let _ = execute(&lowered, &sigs, &mut host, &limits, &mut |_| {});
    (host.verified, host.claimed)
}

#[test]
fn computing_on_two_verified_values_does_not_keep_the_kind() {
    for plan in [
        "e = get()\na = verify(e['from'])\nsink(a + a)\n",
        "e = get()\na = verify(e['from'])\nsink(f'{a}{a}')\n",
    ] {
        for mode in [Mode::Strict, Mode::Normal] {
            let (verified, claimed) = kinds_reaching_sinks(plan, mode);
            assert_eq!(verified.len(), 1);
            assert!(claimed.is_empty(), "{plan}: {claimed:?}");
        }
    }
    let (_, claimed) = kinds_reaching_sinks(
        "e = get()\na = verify(e['from'])\nsink([a][0])\n",
        Mode::Strict,
    );
    assert_eq!(claimed.len(), 1, "moving a verified value keeps the kind");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, .. ProptestConfig::default() })]
    /// docs/semantics.md, "Verified kinds belong to one exact value": only a verifier adds a kind, and only
    /// data movement keeps it. So an untrusted value that reaches a sink still verified is exactly a value
    /// some verifier call returned.
    #[test]
    fn a_verified_kind_is_never_forged(body in prop::collection::vec(stmt(), 1..6), mode in prop::sample::select(vec![Mode::Strict, Mode::Normal])) {
        let plan = format!(
            "a = verify(e['from']) if True else 'x'\nb = 1\nxs = [verify(e['subject'])]\nd = {{'k': verify(e['from'])}}\n{}sink(a)\nsink(xs[0])\nsink(d['k'])\nsink(b)\n",
            body.concat()
        );
        let plan = format!("import json\nimport re\ne = get()\n{plan}");
        let mut sigs = Signatures::default();
        sigs.tools.insert("get".into(), vec![]);
        sigs.tools.insert("sink".into(), vec!["x".into()]);
        sigs.verifiers.insert("verify".into());
        let module = ruff_python_parser::parse_module(&plan).unwrap().into_syntax();
        let lowered = compile(&module, &plan, &sigs, mode).unwrap_or_else(|d| panic!("{plan}\n{d:?}"));
        let limits = ExecLimits { timeout: std::time::Duration::from_secs(5), max_recursion: 100, max_host_calls: 500, max_memory_mb: 512 };
        let mut host = KindObserver { result: mail("x", "mallory@evil.test", &["p"]), verified: Vec::new(), claimed: Vec::new() };
        let _ = execute(&lowered, &sigs, &mut host, &limits, &mut |_| {});
        for c in &host.claimed {
            prop_assert!(host.verified.contains(c), "{:?} reached a sink verified but no verifier returned it\n{}", c, plan);
        }
    }
}

/// The structure invariant, exhaustively over the operations that build or reshape containers: `len`,
/// `bool` and `not` of each (and the reshaping statements' own sinks) take the structure label only, so
/// for every pair of attacker subjects chosen to collide with the plan's keys, split differently or be
/// empty, the trusted-observable calls must be the same (#19; before, `len` took the deep join).
#[test]
fn every_container_operation_keeps_the_structure_invariant() {
    let subjects = ["", "k", "p", "x", "pe\nqe", "e", "eee p"];
    let plans = common::structure_observations();
    let mut failures = Vec::new();
    for body in &plans {
        let plan = format!(
            "import json\nimport re\na = 'x'\nb = 1\nxs = ['s']\nd = {{'k': 'v'}}\ne = get()\n{body}"
        );
        for (i, one) in subjects.iter().enumerate() {
            for two in &subjects[i + 1..] {
                let x = observe(&plan, mail(one, "mallory@evil.test", &["p"]));
                let y = observe(&plan, mail(two, "mallory@evil.test", &["p"]));
                let n = x.len().min(y.len());
                if x[..n] != y[..n] {
                    failures.push(format!("{body}  with {one:?} / {two:?}: {x:?} vs {y:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
