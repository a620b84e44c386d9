//! Raw containers (`src/lower/compiler/raw.rs`) change how the program is written, never what it computes:
//! plans built around a counting loop (and near misses of one), random plans and every corpus scenario,
//! compiled with the option on and off, must give the same labels at every call (each argument's whole
//! labelled value, and the control context) and end the same way, in both modes. The generators reach the
//! raw code's every path: a key there or not (also before the loop), a stored value of another type than
//! the addend (the general addition, or its `TypeError`), a key from data, a control context from data and
//! a no-sensitive-upgrade violation under it (an early exit), and the uses that keep a dict boxed.

use crate::common;

use common::differential;
use common::stmt;
use proptest::prelude::*;
use zamburak::lower::{Mode, Options, compile_with};
use zamburak::value::LValue;

const RAW: Options = Options {
    constant_labels: true,
    fused_idioms: true,
    raw_containers: true,
};
const BOXED: Options = Options {
    constant_labels: true,
    fused_idioms: true,
    raw_containers: false,
};

fn mail() -> LValue {
    differential::mail("x p", &["p", "Q", "p"], Some(3))
}

fn same_either_way(plan: &str) -> Result<(), TestCaseError> {
    differential::same_either_way(plan, RAW, BOXED, &mail())
}

/// `c` empty and `d` holding values of two types; `k` and `t` flat from data, `a` and `b` flat literals.
const HEADER: &str = "a = 'x'\nb = 1\nxs = ['s']\nd = {'k': 'v', 'p': 2}\nc = {}\ne = get()\nt = e['subject']\nk = e['from'].lower()\nn = len(e['tags'])\n";
/// Reads that keep the dicts raw-eligible (no bare use), each label and the order of the entries.
const FOOTER: &str = "sink(list(c.items()))\nsink(list(d.items()))\nsink(len(c))\nsink(len(d))\nsink(sorted(c.keys()))\nsink(t)\nsink(a)\nsink(b)\n";

/// One counting statement (or a near miss) inside a loop body.
fn counting() -> impl Strategy<Value = String> {
    let recv = prop::sample::select(vec!["c", "d"]);
    let key = prop::sample::select(vec!["w", "a", "k", "'p'", "'k'", "3", "b", "True", "1.0"]);
    let default = prop::sample::select(vec!["0", "''", "1.5", "None", "b", "a", "xs", "True"]);
    let y = prop::sample::select(vec!["1", "'z'", "2.5", "b", "a", "True", "n", "k"]);
    prop_oneof![
        4 => (recv.clone(), key.clone(), default.clone(), y.clone())
            .prop_map(|(r, k, d, y)| format!("{r}[{k}] = {r}.get({k}, {d}) + {y}\n")),
        // Near misses: the other dict on one side, another key, a statement that reads the dict boxed.
        1 => (recv.clone(), key.clone(), y.clone())
            .prop_map(|(r, k, y)| format!("{r}[{k}] = c.get({k}, 0) + {y}\n")),
        1 => (recv.clone(), key.clone()).prop_map(|(r, k)| format!("sink({r}.get({k}))\n")),
        1 => recv.clone().prop_map(|r| format!("sink({r})\n")),
        1 => (recv, key).prop_map(|(r, k)| format!("{r}[{k}] = 'set'\n")),
        // Statements beside the count that do not touch the dicts.
        1 => Just("t = t + w\n".to_string()),
        1 => Just("if w == 'p':\n    b = b + 1\n".to_string()),
        1 => Just("if w == 'Q':\n    break\n".to_string()),
        1 => Just("sink(w)\n".to_string()),
    ]
}

/// A loop over a string's words (flat elements), over a list from data (a flat key made from each), over a
/// literal range, over literal words, or over a list whose elements' labels differ (the steady path's
/// cache missed and refilled); at the top level, or (never raw) under a branch or twice nested.
fn counting_loop() -> impl Strategy<Value = String> {
    let indent = |s: &str, by: &str| s.lines().map(|l| format!("{by}{l}\n")).collect::<String>();
    (prop::collection::vec(counting(), 1..4), 0..8usize).prop_map(move |(body, ctx)| {
        let body = body.concat();
        match ctx {
            0 => format!("for w in t.split():\n{}", indent(&body, "    ")),
            1 => format!(
                "for v in e['tags']:\n    w = v.lower()\n{}",
                indent(&body, "    ")
            ),
            2 => format!("for w in 'p q p'.split():\n{}", indent(&body, "    ")),
            3 => format!(
                "for i in range(3):\n    w = str(i)\n{}",
                indent(&body, "    ")
            ),
            4 => format!(
                "if t == 'x p':\n    for w in t.split():\n{}",
                indent(&body, "        ")
            ),
            5 => format!(
                "for w in t.split():\n    for u in 'p q'.split():\n{}",
                indent(&body, "        ")
            ),
            6 => format!(
                "for v in [a, k, a, 'p', k]:\n    w = v.lower()\n{}",
                indent(&body, "    ")
            ),
            _ => format!(
                "for w in e['subject'].split(' '):\n{}",
                indent(&body, "    ")
            ),
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, .. ProptestConfig::default() })]
    #[test]
    fn counting_loops_see_the_same_labels_raw_or_boxed(body in prop::collection::vec(counting_loop(), 1..4)) {
        same_either_way(&format!("{HEADER}{}{FOOTER}", body.concat()))?;
    }

    #[test]
    fn random_plans_see_the_same_labels_raw_or_boxed(
        body in prop::collection::vec(prop_oneof![counting_loop(), stmt()], 1..6)
    ) {
        same_either_way(&format!("import json\nimport re\n{HEADER}{}{FOOTER}", body.concat()))?;
    }
}

/// The raw code is really what the counting loop compiles to (only with the option on, and only where the
/// dict cannot be seen otherwise), so the differential tests above compare two different programs.
#[test]
fn a_counting_loop_keeps_its_dict_raw() {
    let words = "doc = get()['subject']\ncounts = {}\nfor w in doc.split():\n    k = w.lower()\n    counts[k] = counts.get(k, 0) + 1\nsink(sorted(counts.items()))\n";
    let on = differential::compiled(words, Mode::Strict, RAW);
    assert!(!on.contains("_dinc(") && on.contains("_rr"), "{on}");
    // One count of literals: the steady path (raw.rs, `Steady`); two counts on the dict, or a name added:
    // none.
    assert!(on.contains("_sk"), "{on}");
    for count in [
        "    counts[k] = counts.get(k, 0) + 1\n    counts[w] = counts.get(w, 0) + 2\n",
        "    counts[k] = counts.get(k, 0) + n\n",
        "    counts[k] = counts.get(k, 0) + 1.5\n",
        "    counts[k] = counts.get(k, '') + 1\n",
        "    counts[k] = counts.get(k, 0) + True\n",
    ] {
        let plan = words.replace("    counts[k] = counts.get(k, 0) + 1\n", count);
        let plan = format!("n = 2\n{plan}");
        let code = differential::compiled(&plan, Mode::Strict, RAW);
        assert!(
            code.contains("_rr") && !code.contains("_sk"),
            "{plan}\n{code}"
        );
    }
    let off = differential::compiled(words, Mode::Strict, BOXED);
    assert!(
        off.contains("_dinc(counts_") && !off.contains("_rr"),
        "{off}"
    );
    // Every use that could hold the box keeps it boxed.
    for escape in [
        "sink(counts)\n",
        "other = counts\n",
        "xs = [counts]\n",
        "f = lambda: counts\n",
        "def g():\n    return len(counts)\n",
        "ys = [len(counts) for i in range(2)]\n",
        "z = counts or {}\n",
        "for q in counts:\n    sink(q)\n",
        "counts = []\n",
        "counts = dict()\n",
        "sink(f'{counts}')\n",
    ] {
        let plan = format!("{words}{escape}");
        let code = differential::compiled(&plan, Mode::Strict, RAW);
        assert!(code.contains("_dinc(counts_"), "{plan}\n{code}");
    }
    // Not at the top level, or the dict not surely a dict when the loop starts: boxed.
    for plan in [
        "doc = get()['subject']\ncounts = {}\nif doc:\n    for w in doc.split():\n        counts[w] = counts.get(w, 0) + 1\n",
        "doc = get()['subject']\nfor w in doc.split():\n    counts[w] = counts.get(w, 0) + 1\ncounts = {}\n",
        "doc = get()['subject']\nif doc:\n    counts = {}\nfor w in doc.split():\n    counts[w] = counts.get(w, 0) + 1\n",
        "doc = get()['subject']\ncounts = {}\nfor w in doc.split():\n    if w:\n        counts[w] = counts.get(w, 0) + 1\n",
    ] {
        let code = differential::compiled(plan, Mode::Strict, RAW);
        assert!(!code.contains("_rr"), "{plan}\n{code}");
    }
}

/// Hand-written edges: keys that compare equal across types, values of another type, a violation under a
/// control context, a dict filled before the loop and read after it.
#[test]
fn the_edges_see_the_same_labels() {
    let plans = [
        "for w in t.split():\n    c[w] = c.get(w, 0) + 1\n",
        "c['p'] = 'str'\nfor w in t.split():\n    c[w] = c.get(w, 0) + 1\n",
        "c[True] = 5\nfor w in t.split():\n    c[b] = c.get(b, 0) + 1\n    c[1] = c.get(1, 0) + 2.5\n",
        "for w in t.split():\n    c[k] = c.get(k, '') + a\n    c[w] = c.get(w, b) + b\n",
        "for v in e['tags']:\n    w = v.lower()\n    if w == 'q':\n        break\n    c[w] = c.get(w, 0) + 1\n",
        "for v in e['tags']:\n    w = v.lower()\n    c[w] = c.get(w, 0) + 1\n    if w == 'q':\n        break\n    d[w] = d.get(w, 0) + 1\n",
        "for w in 'p q'.split():\n    c[w] = c.get(w, 0) + 1\nfor w in t.split():\n    c[w] = c.get(w, 0) + n\n",
        "for w in t.split():\n    d['k'] = d.get('k', '') + a\n",
        "for w in t.split():\n    d['p'] = d.get('p', 0) + a\n",
        "for w in t.split():\n    c[w] = c.get(w, xs) + 1\n",
        "for w in t.split():\n    c[w] = c.get(w, 0) + 1\n    sink(len(t))\nsink(c['p'])\nsink(c.get('x'))\n",
        // The steady path: key labels that change and come back, a control context that rises, a dict
        // filled before the loop, strings and floats.
        "for v in [a, k, a, 'p', k, k]:\n    w = v.lower()\n    c[w] = c.get(w, 0) + 1\n",
        "for v in [a, k, a]:\n    if v == 'zz':\n        break\n    c['p'] = c.get('p', 0) + 1\n",
        "c['p'] = n\nfor w in 'p q p'.split():\n    c[w] = c.get(w, 0) + 1\n",
        "for w in t.split():\n    c[w] = c.get(w, '') + 'z'\n",
        "for v in [k, a, k]:\n    w = v.lower()\n    c[w] = c.get(w, 0.5) + 2.5\n",
    ];
    for p in plans {
        let plan = format!("{HEADER}{p}{FOOTER}");
        let raw = differential::compiled(&plan, Mode::Strict, RAW);
        assert!(
            raw.contains("_rr"),
            "the edge keeps a dict raw:\n{plan}\n{raw}"
        );
        same_either_way(&plan).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Each way the raw code could drop or forge a label, applied to the code the compiler wrote, is caught by
/// the edges above (the mutation checks of the raw code, kept as a test: a test that cannot fail is a
/// defect). Not in the list: dropping the key's and structure's labels (`ch`, or the key label from it) from the stored value's label,
/// which no plan can observe (every read of a raw-eligible dict, `get`, `[]`, `items`, `values`, joins the
/// structure and the key labels again, and the dict never reaches a tool whole), and dropping `_pc` from it or
/// from the structure (whenever the no-sensitive-upgrade check passes, the structure already holds `_pc`);
/// all are kept, as in `_dinc`, and so is the key label in the stored key (reads join the structure,
/// which holds it).
#[test]
fn every_dropped_join_in_the_raw_code_is_caught() {
    let mutations: &[(&str, &str, &str)] = &[
        (
            "the no-sensitive-upgrade check",
            r"_violation\(\d+\)",
            "pass",
        ),
        (
            "the key label in the structure",
            r"(_rs\d+) = _rs\d+ \| \(\([^\n]+",
            "$1 = $1",
        ),
        (
            "the structure written back",
            r"_rb\d+\[2\] = _rs\d+",
            "pass",
        ),
        (
            "the stored value label",
            r"(_re\d+\[[^\]]+\]) = \(([^,]+), \(([^,]+), _xl\d+\)\)",
            "$1 = ($2, ($3, _LIT))",
        ),
        // The steady path (raw.rs, `Steady`): taken for another key label or another control context, it
        // would skip the structure's update and the no-sensitive-upgrade check those need.
        (
            "the steady path's key-label test",
            r"if \S+ == (_sk\d+) and ",
            "if ",
        ),
        (
            "the steady path's control-context test",
            r" and _pc == _sp\d+:",
            ":",
        ),
        (
            "the steady path's start on an empty dict",
            r"(_so\d+) = not _rr\d+",
            "$1 = True",
        ),
    ];
    let plans = [
        "for w in t.split():\n    c[w] = c.get(w, 0) + 1\n",
        "for w in t.split():\n    c[k] = c.get(k, '') + a\n    c[w] = c.get(w, b) + b\n",
        "for w in 'p q'.split():\n    c['p'] = c.get('p', '') + k\n",
        "for v in e['tags']:\n    w = v.lower()\n    if w == 'q':\n        break\n    c[w] = c.get(w, 0) + 1\n",
        "for w in 'p q'.split():\n    if t == 'zzz':\n        break\n    c[w] = c.get(w, 0) + 1\nsink(c.get('p'))\nfor w in 'p q'.split():\n    c[w] = c.get(w, 0) + 1\n",
        "for v in e['tags']:\n    w = 'p'\n    c['p'] = c.get('p', 0) + 1\nsink(c.get('p'))\nsink(c)\n",
        // The key's label changes from one count to the next (a literal, then data).
        "for v in [a, k, a, k]:\n    w = v.lower()\n    c[w] = c.get(w, 0) + 1\n",
        // The control context changes under one key label (an early exit's test on data from the second
        // element on): the second count violates no-sensitive-upgrade.
        "for w in [a, k, a]:\n    if w == 'zz':\n        break\n    c['p'] = c.get('p', 0) + 1\n",
        // A dict holding a value from data when the loop starts: its label is not within the steady one.
        "c['p'] = n\nfor w in 'p q p'.split():\n    c[w] = c.get(w, 0) + 1\n",
    ];
    let sigs = common::get_and_sink();
    for (what, pattern, replacement) in mutations {
        let re = regex::Regex::new(pattern).unwrap();
        let mut caught = false;
        for p in plans {
            let plan = format!("{HEADER}{p}{FOOTER}");
            for mode in [Mode::Strict, Mode::Normal] {
                let module = common::parse(&plan);
                let mut lowered = compile_with(&module, &plan, &sigs, mode, RAW).unwrap();
                let mutated = re.replace_all(&lowered.snippet, *replacement).into_owned();
                if mutated == lowered.snippet {
                    continue;
                }
                lowered.snippet = mutated;
                let seen = differential::run(&lowered, &mail());
                let (off, off_end) = differential::calls(&plan, mode, BOXED, &mail());
                if seen != (off, off_end) {
                    caught = true;
                }
            }
        }
        assert!(caught, "dropping {what} is not caught");
    }
}

/// Every scenario of the corpora, in each mode it states, decides the same raw or boxed.
#[test]
fn every_corpus_scenario_decides_the_same_raw_or_boxed() {
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
        let on = reports(RAW);
        let off = reports(BOXED);
        assert_eq!(on.len(), off.len());
        for (a, b) in on.iter().zip(&off) {
            assert_eq!(a, b, "{}: {}", f.display(), a.0);
        }
        runs += on.len();
    }
    assert!(runs >= 800, "the corpora keep their scenarios: {runs} runs");
}
