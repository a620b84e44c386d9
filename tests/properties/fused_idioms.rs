//! Fused idioms (`src/lower/compiler/fused.rs`) and the lean forms of general helper calls
//! (`src/lower/compiler/lean.rs`: `_gif`, `_mgl`, `_call1`, `_fs`) change how the program is written, never what it
//! computes:
//! plans built around each idiom, random plans and every corpus scenario, compiled with the fused helpers
//! and without them, must give the same labels at every call (each argument's whole labelled value, and the
//! control context) and end the same way, in both modes. The generators reach each helper's every path:
//! a key there or not, a default or a stored value of another type than `y` (the general addition, or its
//! `TypeError`), a receiver that is not a dict, a no-sensitive-upgrade violation under a control context;
//! for the lean forms a key there or not (the `KeyError` and the key it names), a list or string indexed,
//! an equal key of another type, a call of a function of another arity, f-string values of every type.

use crate::common;

use common::differential;
use common::stmt;
use proptest::prelude::*;
use zamburak::lower::{Mode, Options, compile_with};
use zamburak::plan::Signatures;
use zamburak::value::LValue;

const FUSED: Options = Options {
    constant_labels: true,
    fused_idioms: true,
    raw_containers: true,
};
const UNFUSED: Options = Options {
    constant_labels: true,
    fused_idioms: false,
    raw_containers: true,
};

fn mail() -> LValue {
    differential::mail("x", &["p", "q", "p"], Some(3))
}

fn same_either_way(plan: &str) -> Result<(), TestCaseError> {
    differential::same_either_way(plan, FUSED, UNFUSED, &mail())
}

const HEADER: &str = "import json\nimport re\na = 'x'\nb = 1\nxs = ['s']\nd = {'k': 'v', 'p': 2}\nc = {}\ne = get()\nt = e['subject']\nn = len(e['tags'])\nw = 'p'\nu = e\nv = ['x', e][0]\n";
const FOOTER: &str = "sink(a)\nsink(b)\nsink(xs)\nsink(d)\nsink(c)\nsink(t)\nsink(u)\nsink(v)\n";

/// A statement of one of the fused shapes, or a near miss of one (which must compile unfused and agree),
/// with a `sink` of what it assigned right after it (inside the block: after the block, every variable it
/// may assign is raised anyway).
fn idiom() -> impl Strategy<Value = String> {
    // Receivers: a dict the plan built, one holding data, a list and a string (not dicts: the fallback).
    let recv = prop::sample::select(vec!["c", "d", "xs", "a", "u"]);
    // Keys: flat names (one from data), literals.
    let key = prop::sample::select(vec!["w", "a", "'p'", "'k'", "3", "b"]);
    let default = prop::sample::select(vec!["0", "''", "1.5", "None", "b", "a", "xs", "True"]);
    let y = prop::sample::select(vec!["1", "'z'", "2.5", "b", "a", "True", "n"]);
    let addend = prop::sample::select(vec![
        "'!'",
        "b",
        "t",
        "e['subject']",
        "xs",
        "1",
        "len(t)",
        "v",
    ]);
    // `v` is boxed but holds a literal: only the control context can raise its label.
    let target = prop::sample::select(vec!["t", "u", "a", "xs", "v"]);
    prop_oneof![
        (recv.clone(), key.clone(), default.clone(), y.clone()).prop_map(|(r, k, d, y)| format!(
            "{r}[{k}] = {r}.get({k}, {d}) + {y}\nsink({r})\nsink({r}[{k}])\n"
        )),
        // Near misses: another receiver or key on one side, one argument.
        (recv.clone(), key.clone(), default.clone(), y.clone())
            .prop_map(|(r, k, d, y)| format!("{r}[{k}] = c.get({k}, {d}) + {y}\nsink({r})\n")),
        (recv.clone(), key.clone(), default.clone(), y.clone())
            .prop_map(|(r, k, d, y)| format!("{r}[{k}] = {r}.get('k', {d}) + {y}\nsink({r})\n")),
        (recv.clone(), key.clone(), y.clone())
            .prop_map(|(r, k, y)| format!("{r}[{k}] = {r}.get({k}) + {y}\nsink({r})\n")),
        (target.clone(), addend.clone()).prop_map(|(x, v)| format!("{x} = {x} + {v}\nsink({x})\n")),
        (target, addend.clone(), addend)
            .prop_map(|(x, v, z)| format!("{x} = {v} + {z}\nsink({x})\n")),
    ]
}

/// An idiom at the top level, in a loop over data or over a string, under a branch on data, in a function.
fn in_context() -> impl Strategy<Value = String> {
    let indent = |s: &str, by: &str| s.lines().map(|l| format!("{by}{l}\n")).collect::<String>();
    (idiom(), 0..6usize).prop_map(move |(s, ctx)| match ctx {
        0 => s,
        1 => format!("for w in e['tags']:\n{}", indent(&s, "    ")),
        2 => format!("for w in 'p q p'.split():\n{}", indent(&s, "    ")),
        3 => format!("if e['subject'] == 'x':\n{}", indent(&s, "    ")),
        4 => format!(
            "for i in range(2):\n    if i == 1:\n{}",
            indent(&s, "        ")
        ),
        _ => format!(
            "def f(v):\n    c = {{}}\n    w = v\n    t = v\n    u = v\n{}    return c\nsink(f(t))\nsink(f('p'))\n",
            indent(&s, "    ")
        ),
    })
}

/// What the lean forms need beyond `HEADER`: a plan function, function values (`hf` chosen by data),
/// flat keys of other types equal to a stored one, a dict with int keys, one whose structure carries data
/// its values do not (`r`: a key from the mail).
const LEAN_HEADER: &str = "def g(z):\n    return z\ndef g2(y, z):\n    return y\nh = g\nm = [g, g2]\nhf = g if e['subject'] == 'x' else g2\nf = True\nfl = 1.0\nq = {1: 'one', 'x': e['from']}\nr = {e['subject']: 'lit', 'k': 'lit'}\n";

/// A subscript, a one-argument call or an f-string (the lean forms' shapes, or near misses of them).
fn lean() -> impl Strategy<Value = String> {
    let recv = prop::sample::select(vec![
        "c",
        "d",
        "xs",
        "a",
        "u",
        "v",
        "t",
        "q",
        "r",
        "e['tags']",
    ]);
    let key = prop::sample::select(vec![
        "w",
        "a",
        "'p'",
        "'k'",
        "0",
        "1",
        "3",
        "b",
        "f",
        "fl",
        "'subject'",
        "'x'",
        "n",
        "-1",
    ]);
    let callee = prop::sample::select(vec!["g", "h", "hf", "m[0]", "m[1]", "g2", "(lambda z: z)"]);
    let arg = prop::sample::select(vec!["t", "a", "b", "xs", "u", "1", "e['from']", "n"]);
    let part = prop::sample::select(vec![
        "a",
        "b",
        "t",
        "xs",
        "d",
        "v",
        "n",
        "fl",
        "f",
        "None",
        "e['from']",
        "u",
        "len(xs)",
        "q",
    ]);
    let tail = prop::sample::select(vec!["", "!r", "!s", ":>6", ":.2f", ":{b}"]);
    // Keys that are not flat (boxed: a mail field, a boxed literal, a list, a tuple) for `d.get(k, [])`.
    let boxed_key = prop::sample::select(vec![
        "e['from']",
        "e['subject']",
        "v",
        "xs",
        "(1, 2)",
        "u['n']",
    ]);
    prop_oneof![
        (recv.clone(), key).prop_map(|(r, k)| format!("sink({r}[{k}])\n")),
        (recv.clone(), boxed_key.clone()).prop_map(|(r, k)| format!("sink({r}.get({k}, []))\n")),
        (recv, boxed_key).prop_map(|(r, k)| format!(
            "ids = {r}.get({k}, [])\nids.append(e['from'])\n{r}[{k}] = ids\nsink({r})\nsink(ids)\n"
        )),
        (callee, arg).prop_map(|(f, x)| format!("sink({f}({x}))\n")),
        (part.clone(), part, tail)
            .prop_map(|(x, y, z)| format!("sink(f'{{{x}}} and {{{y}{z}}}.')\n")),
    ]
}

/// A lean form at the top level, in a loop over data, under a branch on data, in a function.
fn lean_in_context() -> impl Strategy<Value = String> {
    let indent = |s: &str, by: &str| s.lines().map(|l| format!("{by}{l}\n")).collect::<String>();
    (lean(), 0..4usize).prop_map(move |(s, ctx)| match ctx {
        0 => s,
        1 => format!("for w in e['tags']:\n{}", indent(&s, "    ")),
        2 => format!("if e['subject'] == 'x':\n{}", indent(&s, "    ")),
        _ => format!(
            "def k(v):\n    w = v\n    t = v\n{}    return 1\nsink(k(t))\nsink(k('p'))\n",
            indent(&s, "    ")
        ),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, .. ProptestConfig::default() })]
    #[test]
    fn plans_with_the_lean_forms_see_the_same_labels_or_not(body in prop::collection::vec(lean_in_context(), 1..5)) {
        same_either_way(&format!("{HEADER}{LEAN_HEADER}{}{FOOTER}", body.concat()))?;
    }

    #[test]
    fn plans_with_the_idioms_see_the_same_labels_fused_or_not(body in prop::collection::vec(in_context(), 1..5)) {
        same_either_way(&format!("{HEADER}{}{FOOTER}", body.concat()))?;
    }

    #[test]
    fn random_plans_see_the_same_labels_fused_or_not(body in prop::collection::vec(stmt(), 1..7)) {
        same_either_way(&format!("{HEADER}{}{FOOTER}", body.concat()))?;
    }
}

/// The fused helpers are really what the idioms compile to (and only with the option on), so the
/// differential tests above compare two different programs.
#[test]
fn the_idioms_compile_to_the_fused_helpers() {
    let words = "doc = get()['subject']\ncounts = {}\nfor w in doc.split():\n    k = w.lower()\n    counts[k] = counts.get(k, 0) + 1\nsink(counts)\n";
    let on = differential::compiled(words, Mode::Strict, FUSED);
    assert!(on.contains("_dinc(counts_, k_, k_l, _k"), "{on}");
    assert!(!on.contains("_mg2(") && !on.contains("_sif("), "{on}");
    let off = differential::compiled(words, Mode::Strict, UNFUSED);
    assert!(!off.contains("_dinc(") && off.contains("_mg2(") && off.contains("_sif("));
    let text = "out = get()['subject']\nfor t in get()['tags']:\n    out = out + t\n    out = out + '!'\nsink(out)\n";
    let on = differential::compiled(text, Mode::Strict, FUSED);
    assert!(on.contains("out_ = _addp(out_, t_, _pc)"), "{on}");
    assert!(on.contains("out_ = _addfp(out_, \"!\", _LIT, _pc)"), "{on}");
    // NORMAL never joins pc into values: nothing to fuse.
    let normal = differential::compiled(text, Mode::Normal, FUSED);
    assert!(
        !normal.contains("_addp(") && normal.contains("_add(out_, t_)"),
        "{normal}"
    );
    let off = differential::compiled(text, Mode::Strict, UNFUSED);
    assert!(!off.contains("_addp(") && !off.contains("_addfp("), "{off}");
    // The lean forms, in both modes.
    let lean = "def g(z):\n    return z\ne = get()\nk = 'from'\nsink(g(e[k]))\nsink(f'{e[\"subject\"]}: {len(e)}')\n";
    for mode in [Mode::Strict, Mode::Normal] {
        let on = differential::compiled(lean, mode, FUSED);
        assert!(on.contains("_call1(g_, _pc, _gif(e_, k_, _LIT))"), "{on}");
        assert!(
            on.contains("_fs([_gif(e_, \"subject\", _LIT), \": \", _bi_len("),
            "{on}"
        );
        assert!(
            !on.contains("_gi(") && !on.contains("_call(") && !on.contains("_fcat("),
            "{on}"
        );
        let grouping = "e = get()\nd = {}\nids = d.get(e['from'], [])\nsink(ids)\n";
        let g = differential::compiled(grouping, mode, FUSED);
        assert!(
            g.contains("_mgl(d_, _gif(e_, \"from\", _LIT), _pc, 3)"),
            "{g}"
        );
        let g = differential::compiled(grouping, mode, UNFUSED);
        assert!(!g.contains("_mgl(") && g.contains("_m_get("), "{g}");
        let off = differential::compiled(lean, mode, UNFUSED);
        assert!(
            !off.contains("_gif(") && !off.contains("_call1(") && !off.contains("_fs("),
            "{off}"
        );
    }
}

/// Hand-written edges: a count that meets a stored value of another type, a key from data, a dict mutated
/// under a branch on data (the violation must stop both programs at the same call), nested loops.
#[test]
fn the_edges_see_the_same_labels() {
    let plans = [
        "c['p'] = 'str'\nc['p'] = c.get('p', 0) + 1\n",
        "c[w] = c.get(w, 0) + 1\nc[w] = c.get(w, 0) + 2.5\nc[w] = c.get(w, 0) + 1\n",
        "for w in e['tags']:\n    c[w] = c.get(w, 0) + 1\nsink(c['p'])\n",
        "if e['subject'] == 'x':\n    c['p'] = c.get('p', 0) + 1\nsink(c)\n",
        "if e['subject'] == 'x':\n    d[w] = d.get(w, 0) + 1\nsink(d)\n",
        "c = {e['subject']: 1}\nfor w in e['tags']:\n    c[w] = c.get(w, n) + n\n",
        "for w in e['tags']:\n    for v in e['tags']:\n        c[v] = c.get(v, '') + w\n",
        "xs[0] = xs.get(0, 0) + 1\n",
        "a['k'] = a.get('k', 0) + 1\n",
        "u['n'] = u.get('n', 0) + 1\nsink(u['n'])\n",
        "for w in e['tags']:\n    t = t + w\n    xs = xs + [w]\n    u = u + 1\n",
        "if e['subject'] == 'x':\n    xs = xs + ['q']\n    t = t + e['from']\nsink(xs)\n",
        // The dict's structure or the key carries data the stored value does not.
        "if e['subject'] == 'x':\n    c['k'] = 1\nc['p'] = c.get('p', 0) + 1\nsink(c['p'])\n",
        "k2 = e['subject'].lower()\nc[k2] = c.get(k2, 0) + 1\nsink(c)\n",
        // Mutated under a branch on data through a function value (not pre-raised): a violation.
        "def inc(z):\n    z['p'] = z.get('p', 0) + 1\n    return 1\nh = inc\nif e['subject'] == 'x':\n    h(c)\nsink(c)\n",
        // A boxed value holding a literal: only the control context raises its label.
        "if e['subject'] == 'x':\n    v = v + '!'\n    sink(v)\n",
        "for w in e['tags']:\n    a = a + v\n    sink(a)\n",
        "for w in e['tags']:\n    v = v + b\n    sink(v)\n    xs = xs + ['q']\n    sink(xs)\n",
    ];
    for p in plans {
        let plan = format!("{HEADER}{p}{FOOTER}");
        same_either_way(&plan).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Every scenario of the corpora, in each mode it states, decides the same fused or not.
#[test]
fn every_corpus_scenario_decides_the_same_fused_or_not() {
    let files = common::corpus_files();
    let mut runs = 0;
    for f in &files {
        let reports = |options| {
            let mut out = Vec::new();
            zamburak::scenario::each_run_compiled_with(f, options, &mut |run| {
                let report = serde_json::to_value(&run.report).unwrap();
                out.push((run.name.to_string(), run.mode, report));
            })
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            out
        };
        let on = reports(FUSED);
        let off = reports(UNFUSED);
        assert_eq!(on.len(), off.len());
        for (a, b) in on.iter().zip(&off) {
            assert_eq!(a, b, "{}: {}", f.display(), a.0);
        }
        runs += on.len();
    }
    assert!(runs >= 800, "the corpora keep their scenarios: {runs} runs");
}

/// The option is an option of the compiler only: `Signatures` without tools compile the same way.
#[test]
fn the_option_changes_nothing_where_no_idiom_is() {
    let plan = "x = 1\ny = x + 2\nzs = [x, y]\nzs.append(3)\n";
    let module = common::parse(plan);
    let sigs = Signatures::default();
    let on = compile_with(&module, plan, &sigs, Mode::Strict, FUSED).unwrap();
    let off = compile_with(&module, plan, &sigs, Mode::Strict, UNFUSED).unwrap();
    assert_eq!(on.snippet, off.snippet);
}
