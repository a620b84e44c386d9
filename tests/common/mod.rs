//! Random plans in the subset, shared by the property tests: statements over a mail `e` from `get()`, a
//! string `a`, an int `b`, a list `xs` and a dict `d`, calling `sink(x)`. Every construct the lowering
//! treats specially appears: branches, early exits, loops, plan functions, closures, lambdas, comprehensions,
//! mutation through aliases, and the builtins, methods, `json` and `re`.
#![allow(
    dead_code,
    reason = "each test crate uses its own part of the shared helpers"
)]

pub mod backend;
pub mod bounds;
pub mod chat;
pub mod cli;
pub mod differential;
pub mod fixes;
pub mod monty;
pub mod serve;
pub mod world;

use proptest::prelude::*;

/// The tools the random plans call: `get()`, which answers tool data, and `sink(x)`.
pub fn get_and_sink() -> zamburak::plan::Signatures {
    let mut sigs = zamburak::plan::Signatures::default();
    sigs.tools.insert("get".into(), vec![]);
    sigs.tools.insert("sink".into(), vec!["x".into()]);
    sigs
}

/// A generated plan, parsed (it always parses: a failure is the generator's bug).
pub fn parse(plan: &str) -> ruff_python_ast::ModModule {
    ruff_python_parser::parse_module(plan)
        .unwrap_or_else(|e| panic!("generated plan does not parse: {e:?}\n{plan}"))
        .into_syntax()
}

/// The scenario files of the five security corpora (tests/scenarios, its `spec`, `mcp`, `llm` and
/// `structure` folders), sorted: each over its own policy.
pub fn corpus_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = ["", "spec", "mcp", "llm", "structure"]
        .iter()
        .flat_map(|dir| {
            std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
        })
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(char::is_numeric)
        })
        .collect();
    files.sort();
    files
}

pub fn leaf() -> impl Strategy<Value = String> {
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

/// Containers built or reshaped from a string `E` (a placeholder for an expression of any label): every
/// operation that can make a container's length, keys or order depend on data. `len(C)`, `bool(C)` and
/// `not C` take the structure label only (the structure invariant, docs/semantics.md "Propagation"), so
/// the non-interference property checks each of them.
pub const CONTAINERS: &[&str] = &[
    "{E: 1, 'k': 2}",
    "{E, 'p'}",
    "E.split()",
    "E.split('e')",
    "E.rsplit('e', 1)",
    "['p'] * len(E)",
    "list(range(len(E) % 3))",
    "dict(zip([E, 'k'], [1, 2]))",
    "re.findall('.', E)",
    "re.split('e', E)",
    "list(E)",
    "tuple(E)",
    "sorted(set([E, 'p']))",
    "[t for t in ['p', 'q'] for u in E]",
    "[t for t in ['p', 'q'] if t in E]",
    "E.splitlines()",
    "set(['p']).union(set([E]))",
    "set(['p', 'x']).intersection(set([E]))",
    "set(['p', 'x']).difference(set([E]))",
    "xs[:len(E) % 3]",
    "[u for u in E.split('e') if u]",
    "list(filter(lambda t: t == E, ['p', 'x']))",
    "{t: 1 for t in [E, 'p']}",
    "{t for t in [E, 'p']}",
    "list(zip(['p', 'q', 'r'], E))",
    "list(enumerate(E))",
    "list(reversed(E.split('e')))",
    "E.partition('e')",
    "list(map(lambda t: t, E))",
    "json.loads(json.dumps(E.split('e')))",
    "(xs + E.split('e'))",
    "e['tags']",
    "list(d.items())",
];

/// Statements that reshape a container with data (`E`, as in [`CONTAINERS`]) and then sink its length.
pub const RESHAPES: &[&str] = &[
    "zs = ['p']\nzs.extend(E.split('e'))\nsink(len(zs))\n",
    "zs = ['p']\nzs += E.split('e')\nsink(len(zs))\n",
    "ss = set()\nss.add(E)\nss.add('x')\nsink(len(ss))\n",
    "ss = set(['x', 'p'])\nss.discard(E)\nsink(len(ss))\n",
    "d3 = {'x': 1}\nd3.pop(E, None)\nsink(len(d3))\n",
    "d3 = {'x': 1}\nd3.setdefault(E, 2)\nsink(len(d3))\n",
    "d3 = {'x': 1}\nd3.update({E: 2})\nsink(len(d3))\n",
    "d3 = {'x': 1}\nd3[E] = 2\nsink(len(d3))\nsink(not d3)\n",
    "zs = ['x', 'p']\nif E in zs:\n    zs.remove(E)\nsink(len(zs))\n",
    "zs = ['p', 'q']\nzs.insert(len(E) % 2, 'i')\nsink(zs[0])\nsink(len(zs))\n",
    "zs = [E, 'p']\nzs.sort()\nsink(len(zs))\nsink(zs.index('p'))\n",
    "ws = []\nfor w in E.split('e'):\n    ws.append(w)\nsink(len(ws))\nsink(bool(ws))\n",
    "ws = []\nfor w in ['p', 'q']:\n    if w in E:\n        ws.append(w)\nsink(len(ws))\n",
    "zs = ['p', 'q']\nzs.pop(len(E) % 2)\nsink(zs[0])\n",
    "ys4 = sorted([E, 'p'])\nsink(ys4[1])\nsink(ys4.index('p'))\n",
    "ys4 = [E, 'p']\nys4.sort()\nsink(ys4[1])\n",
    "ys4 = list(reversed(sorted([E, 'p'])))\nsink(ys4[0])\n",
    "ks = list({E: 1, 'p': 2}.keys())\nsink(ks[-1])\nsink(len(ks))\n",
    "ss = set(['p', 'x'])\nif E in ss:\n    ss.remove(E)\nsink(len(ss))\n",
];

/// Plan bodies over `e['subject']` that observe each container form's structure: `len`, `bool` and `not` of
/// it, an `if` on it, a return decided by its length inside a loop; then each reshaping statement.
pub fn structure_observations() -> Vec<String> {
    let mut forms = Vec::new();
    for c in CONTAINERS {
        let c = c.replace('E', "e['subject']");
        for wrap in ["len", "bool", "not "] {
            forms.push(format!("sink({wrap}({c}))\n"));
        }
        // In a condition too (STRICT: the structure label joins the control context).
        forms.push(format!("if {c}:\n    sink('t')\nsink('after')\n"));
        forms.push(format!(
            "def outer():\n    for t in ['p', 'q']:\n        if len({c}):\n            return t\n    return 'none'\nsink(outer())\n"
        ));
    }
    for r in RESHAPES {
        forms.push(r.replace('E', "e['subject']"));
    }
    forms
}

pub fn expr() -> impl Strategy<Value = String> {
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
            inner
                .clone()
                .prop_map(|e| format!("re.search('.', 'q' + str({e})).group(0)")),
            inner
                .clone()
                .prop_map(|e| format!("re.sub('e', 'y', str({e}))")),
            inner
                .clone()
                .prop_map(|e| format!("re.findall('.', 'w' + str({e}))[0]")),
            inner
                .clone()
                .prop_map(|e| format!("re.split('e', str({e}))[0]")),
            inner
                .clone()
                .prop_map(|e| format!("e['subject'][len(str({e})) % 2:]")),
            inner
                .clone()
                .prop_map(|e| format!("sum([1 for t in xs if t == {e}])")),
            (inner.clone(), prop::sample::select(CONTAINERS))
                .prop_map(|(e, c)| format!("len({})", c.replace('E', &format!("str({e})")))),
            (
                inner,
                prop::sample::select(CONTAINERS),
                prop::sample::select(vec!["bool", "not "])
            )
                .prop_map(|(e, c, f)| format!("({f}({}))", c.replace('E', &format!("str({e})")))),
        ]
    })
}

pub fn stmt() -> impl Strategy<Value = String> {
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
        1 => expr().prop_map(|c| format!("k = 0\nfor w in str({c}).split('e'):\n    if w == 'p':\n        k = k + 1\nsink(k)\n")),
        1 => expr().prop_map(|c| format!("for w in e['subject'].split():\n    d[w] = d.get(w, 0) + 1\n    if w == str({c}):\n        a = w.upper()\nsink(a)\nsink(len(d))\n")),
        1 => expr().prop_map(|c| format!("m = 0\nwhile True:\n    m += 1\n    if m > 2 or {c}:\n        break\nsink(m)\n")),
        1 => expr().prop_map(|c| format!("d2 = {{}}\nd2.update({{'k': 'v'}})\nif {c}:\n    d2.update({{'z': 1}})\nsink(len(d2))\nsink(d2.get('k'))\n")),
        // Plan code called by builtins and methods (catalogue rows with a callback), over untrusted and literal lists.
        1 => expr().prop_map(|c| format!("def kf(t):\n    if t == str({c}):\n        sink(t)\n    return t\nys2 = sorted(e['tags'], key=kf)\nsink(len(ys2))\n")),
        1 => expr().prop_map(|c| format!("ms = list(map(lambda t: [sink(t), t + str({c})][1], e['tags']))\nsink(len(ms))\n")),
        1 => expr().prop_map(|c| format!("cs = []\ndef kc(t):\n    cs.append(t)\n    return len(t)\nmm = min(['ab', str({c})], key=kc)\nsink(mm)\nsink(len(cs))\n")),
        1 => expr().prop_map(|c| format!("ts = list(e['tags'])\nts.sort(key=lambda t: [sink(str({c})), t][1])\nsink(ts)\n")),
        1 => expr().prop_map(|c| format!("mx = max(e['tags'], key=lambda t: t == str({c}), default='z')\nsink(mx)\nfs = list(filter(lambda t: sink(t) is None, ['p', str({c})]))\nsink(fs)\n")),
        1 => expr().prop_map(|c| format!("zs2 = list(map(lambda t, u: [sink(u), t][1], ['p', str({c})], e['tags']))\nsink(zs2)\n")),
        // Loops over ranges: of literals (labels known when compiling), of a bound data may reach, with a
        // counter data reaches inside the loop (src/lower/constant.rs).
        1 => (expr(), simple2.clone()).prop_map(|(c, t)| format!("for i in range(3):\n    b = b + i\n    if i == 1:\n        {t}    if {c}:\n        sink(i)\n")),
        1 => (expr(), simple2.clone()).prop_map(|(c, t)| format!("for i in range(min(b, 4)):\n    if {c}:\n        {t}    sink(i)\n")),
        1 => (expr(), simple2.clone()).prop_map(|(c, t)| format!("if {c}:\n    {t}    sink(a)\n    sink(b)\n")),
        1 => expr().prop_map(|c| format!("k = 0\nfor i in range(2, 9, 3):\n    k += i\n    if i > 4:\n        k = k + len(str({c}))\nsink(k)\n")),
        2 => (expr(), prop::sample::select(RESHAPES))
            .prop_map(|(c, r)| r.replace('E', &format!("str({c})"))),
        1 => (expr(), simple2).prop_map(|(c, t)| format!("def mk(w):\n    def inner():\n        return w\n    return inner\nfn = mk({c})\nif fn():\n    {t}sink(fn())\n")),
    ]
}
