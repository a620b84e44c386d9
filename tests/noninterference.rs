//! Non-interference, tested: in STRICT mode, what a plan does at calls with a trusted control context, with
//! trusted arguments, cannot depend on attacker data. Random plans run twice on two mails that differ only in
//! attacker-controlled content; the trusted-observable calls must be the same in both runs (up to the point
//! where either run stops: termination-insensitive, SEMANTICS §1).

use proptest::prelude::*;
use zamburak::label::{LITERAL, Packed, UNTRUSTED_BIT};
use zamburak::lower::{Mode, compile};
use zamburak::plan::Signatures;
use zamburak::runtime::exec::{ExecLimits, Host, HostReply, execute};
use zamburak::runtime::value::{LValue, Raw};

const TAINT: i64 = LITERAL | UNTRUSTED_BIT;

fn s(v: &str, l: i64) -> LValue {
    LValue::new(Raw::Str(v.into()), Packed(l))
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
                    Packed(TAINT),
                ),
            ),
        ]),
        Packed(TAINT),
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
        if pc.0 & UNTRUSTED_BIT == 0 {
            let v = &args[0].1;
            let trusted = v.deep_label().0 & UNTRUSTED_BIT == 0;
            self.low.push(trusted.then(|| v.raw.clone()));
        }
        HostReply::Return(LValue::new(Raw::None, Packed::LITERAL))
    }
}

fn observe(plan: &str, result: LValue) -> Vec<Option<Raw>> {
    let mut sigs = Signatures::default();
    sigs.tools.insert("get".into(), vec![]);
    sigs.tools.insert("sink".into(), vec!["x".into()]);
    let module = ruff_python_parser::parse_module(plan)
        .unwrap_or_else(|e| panic!("generated plan does not parse: {e:?}\n{plan}"))
        .into_syntax();
    let lowered =
        compile(&module, plan, &sigs, Mode::Strict).unwrap_or_else(|d| panic!("{plan}\n{d:?}"));
    let limits = ExecLimits {
        timeout: std::time::Duration::from_secs(5),
        max_recursion: 100,
        max_host_calls: 500,
    };
    let mut host = Observer {
        result,
        low: Vec::new(),
    };
    let _ = execute(&lowered, &sigs, &mut host, &limits, &mut |_| {});
    host.low
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        (0i64..4).prop_map(|n| n.to_string()),
        Just("'me'".to_string()),
        Just("a".to_string()),
        Just("b".to_string()),
        Just("xs".to_string()),
        Just("d".to_string()),
        Just("e['subject']".to_string()),
        Just("e['from']".to_string()),
        Just("e['tags']".to_string()),
    ]
}

fn expr() -> impl Strategy<Value = String> {
    leaf().prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["==", "!=", "and", "or", "in"]),
                inner.clone()
            )
                .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, t, e)| format!("({t} if {c} else {e})")),
            inner.clone().prop_map(|e| format!("len(str({e}))")),
            inner.clone().prop_map(|e| format!("[{e}, 'k'][1]")),
            inner
                .clone()
                .prop_map(|e| format!("[x for x in ['p', 'q'] if x == {e}]")),
            inner
                .clone()
                .prop_map(|e| format!("sorted([str({e}), 'm'])[0]")),
            inner.clone().prop_map(|e| format!("d.get(str({e}), 'z')")),
            inner.clone().prop_map(|e| format!("f'<{{ ({e}) }}>'")),
            inner.clone().prop_map(|e| format!("max([str({e}), 'n'])")),
            (inner.clone(), inner.clone()).prop_map(|(l, r)| format!("({l} + {r})")),
            inner.clone().prop_map(|e| format!("str({e}).upper()")),
            inner
                .clone()
                .prop_map(|e| format!("xs[:len(str({e})) % 3]")),
            inner
                .clone()
                .prop_map(|e| format!("list(enumerate([str({e}), 'o']))")),
            inner
                .clone()
                .prop_map(|e| format!("list(zip(xs, [str({e})]))")),
            inner
                .clone()
                .prop_map(|e| format!("list(filter(lambda t: t == str({e}), ['p', 'q', 'x']))")),
            inner
                .clone()
                .prop_map(|e| format!("list(map(lambda t: t + 'z', [str({e})]))")),
            inner
                .clone()
                .prop_map(|e| format!("json.dumps({{'v': str({e})}})")),
            inner
                .clone()
                .prop_map(|e| format!("json.loads(json.dumps([str({e})]))[0]")),
            inner
                .clone()
                .prop_map(|e| format!("(re.search('x', str({e})) is None)")),
            inner
                .clone()
                .prop_map(|e| format!("any([t == str({e}) for t in ['p', 'x']])")),
            inner
                .clone()
                .prop_map(|e| format!("min(['pp', str({e})], key=len)")),
            inner
                .clone()
                .prop_map(|e| format!("sorted(['b', str({e})], key=lambda t: len(t))")),
            inner.clone().prop_map(|_| "list(d.keys())".to_string()),
            inner
                .clone()
                .prop_map(|e| format!("','.join([str({e}), 'j'])")),
            inner
                .clone()
                .prop_map(|e| format!("[t for t in e['tags'] if t != str({e})]")),
            inner
                .clone()
                .prop_map(|e| format!("{{'k': {e}, 'j': 'c'}}['j']")),
            inner
                .clone()
                .prop_map(|e| format!("len(set([str({e}), 'p']))")),
            inner
                .clone()
                .prop_map(|e| format!("str({e}).split('e')[0]")),
            inner.prop_map(|e| format!("sum([1 for t in xs if t == {e}])")),
        ]
    })
}

fn stmt() -> impl Strategy<Value = String> {
    let simple = prop_oneof![
        (prop::sample::select(vec!["a", "b"]), expr()).prop_map(|(v, e)| format!("{v} = {e}\n")),
        expr().prop_map(|e| format!("sink({e})\n")),
        expr().prop_map(|e| format!("xs.append({e})\n")),
        (expr(), expr()).prop_map(|(k, v)| format!("d[str({k})] = {v}\n")),
    ];
    let simple2 = simple.clone();
    prop_oneof![
        3 => simple,
        1 => (expr(), simple2.clone()).prop_map(|(c, t)| format!("if {c}:\n    {t}")),
        1 => (expr(), simple2.clone(), simple2.clone())
            .prop_map(|(c, t, e)| format!("if {c}:\n    {}else:\n    {}", t, e)),
        1 => (expr(), simple2.clone())
            .prop_map(|(c, t)| format!("for t in e['tags']:\n    if {c}:\n        break\n    {t}")),
        1 => (expr(), simple2.clone())
            .prop_map(|(c, t)| format!("def f(v):\n    if {c}:\n        return v\n    {t}    return 'r'\nsink(f('w'))\n")),
        1 => (expr(), simple2.clone())
            .prop_map(|(c, t)| format!("n = 0\nwhile n < 3:\n    n += 1\n    if {c}:\n        continue\n    {t}sink(n)\n")),
        1 => expr().prop_map(|c| format!("def g(ys):\n    ys.append(1)\nif {c}:\n    g(xs)\nsink(len(xs))\n")),
        1 => expr().prop_map(|c| format!("h = (lambda: 'p') if {c} else (lambda: 'q')\nsink(h())\n")),
        1 => expr().prop_map(|c| format!("for k, v in d.items():\n    if {c}:\n        d[k] = 'w'\nsink(d)\n")),
        1 => expr().prop_map(|c| format!("p, q = ('m', {c})\nsink(p)\nb += len(str(q))\n")),
        1 => (expr(), simple2.clone()).prop_map(|(c, t)| format!("if {c}:\n    pass\nelif len(xs) > 1:\n    {t}")),
        1 => expr().prop_map(|c| format!("ys = [3, 1]\nif {c}:\n    ys.sort()\nsink(ys[0])\nys.reverse()\nsink(ys.pop())\n")),
        1 => expr().prop_map(|c| format!("zs = ['m', 'n']\nif {c}:\n    zs.insert(0, 'i')\nsink(zs[1])\nfor p, q in [('a', zs[0])]:\n    sink(q)\n")),
        1 => expr().prop_map(|c| format!("if {c}:\n    d['k'] = 'w'\nsink(d['k'])\nsink('k' in d)\n")),
        1 => expr().prop_map(|c| format!("w = [[t, u] for t in ['p', 'q'] for u in e['tags'] if u == str({c})]\nsink(len(w))\n")),
        1 => expr().prop_map(|c| format!("def outer():\n    for t in ['p', 'q']:\n        if {c}:\n            return t\n    return 'none'\nsink(outer())\n")),
        1 => expr().prop_map(|c| format!("m = 0\nwhile True:\n    m += 1\n    if m > 2 or {c}:\n        break\nsink(m)\n")),
        1 => expr().prop_map(|c| format!("d2 = {{}}\nd2.update({{'k': 'v'}})\nif {c}:\n    d2.update({{'z': 1}})\nsink(len(d2))\nsink(d2.get('k'))\n")),
        1 => (expr(), simple2).prop_map(|(c, t)| format!("def mk(w):\n    def inner():\n        return w\n    return inner\nfn = mk({c})\nif fn():\n    {t}sink(fn())\n")),
    ]
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
                if v.label.0 & UNTRUSTED_BIT != 0 && v.label.0 & KIND0_UNVERIFIED == 0 {
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
    /// SEMANTICS §2.1: only a verifier adds a kind, and only data movement keeps it. So an untrusted value
    /// that reaches a sink still verified is exactly a value some verifier call returned.
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
        let limits = ExecLimits { timeout: std::time::Duration::from_secs(5), max_recursion: 100, max_host_calls: 500 };
        let mut host = KindObserver { result: mail("x", "mallory@evil.test", &["p"]), verified: Vec::new(), claimed: Vec::new() };
        let _ = execute(&lowered, &sigs, &mut host, &limits, &mut |_| {});
        for c in &host.claimed {
            prop_assert!(host.verified.contains(c), "{:?} reached a sink verified but no verifier returned it\n{}", c, plan);
        }
    }
}
