//! Transparency: a plan prints the same thing run plainly on Monty and run lowered (only labels differ).

use crate::common;

use common::monty::{lowered, plain};
use zamburak::lower::Mode;

const PLANS: &[&str] = &[
    "print(1 + 2 * 3 - 4 // 3 % 2, 7 / 2, 2 ** 10, -5 // 2, 1 << 3, 12 >> 1, 6 & 3, 6 | 1, 6 ^ 3)",
    "x = 5\nx += 2\nx -= 1\nx *= 3\nprint(x)",
    "print(not True, -3, +3, ~3)",
    "print(1 < 2 < 3, 3 < 2 < 4, 1 == 1.0, 'a' != 'b', 2 >= 2, None is None, 1 is not None)",
    "print(1 and 2, 0 and 2, 0 or 3, '' or 'x', None or 0)",
    "print('yes' if 3 > 2 else 'no', 'yes' if [] else 'no')",
    "xs = [3, 1, 2]\nxs.append(5)\nxs.insert(0, 9)\nxs.extend([7, 8])\nprint(xs, xs.pop(), xs.pop(0), xs)",
    "xs = [3, 1, 2, 1]\nxs.remove(1)\nprint(xs, xs.index(2), xs.count(1))\nxs.sort()\nprint(xs)\nxs.reverse()\nprint(xs, xs.copy())",
    "xs = ['bb', 'a', 'ccc']\nxs.sort(key=len, reverse=True)\nprint(xs)",
    "d = {'a': 1, 'b': 2}\nd['c'] = 3\nprint(d, d['a'], d.get('z'), d.get('z', 0), list(d.keys()), list(d.values()), list(d.items()))",
    "d = {'a': 1}\nd.update({'b': 2})\nprint(d.pop('a'), d, d.setdefault('c', 5), d.setdefault('b', 9), d, d.copy())",
    "s = {1, 2}\ns.add(3)\ns.discard(1)\ns.remove(2)\nprint(sorted(s), sorted(s.union({9})), sorted(s.intersection({3})), sorted({1, 2}.difference({1})))",
    "s = '  Hello, World  '\nprint(s.lower(), s.upper(), s.strip(), s.lstrip(), s.rstrip(), s.title())",
    "s = 'a,b,,c'\nprint(s.split(','), s.rsplit(',', 1), 'x\\ny'.splitlines(), '-'.join(['a', 'b']), s.replace(',', ';'))",
    "s = 'hello'\nprint(s.startswith('he'), s.endswith('x'), s.find('l'), s.count('l'), s.partition('l'), '{} {}'.format(1, 'a'), '{x}'.format(x=2))",
    "print(len([1, 2]), len('abc'), len({'a': 1}), str(12), int('7'), float('1.5'), bool(0), abs(-3), round(2.567, 2), round(2.5))",
    "print(list(range(5)), list(range(2, 8, 3)), sorted([3, 1, 2]), list(reversed([1, 2, 3])))",
    "print(min([3, 1, 2]), max(4, 9, 2), min(['bb', 'a'], key=len), max([], default=0), sum([1, 2, 3]), sum([1, 2], 10))",
    "print(any([0, 1]), all([1, 0]), any([]), all([]))",
    "print(list(enumerate(['a', 'b'])), list(enumerate(['a'], 1)), list(zip([1, 2], ['a', 'b', 'c'])))",
    "print(list(map(lambda x: x * 2, [1, 2])), list(filter(lambda x: x > 1, [1, 2, 3])), list(map(str, [1, 2])))",
    "print(list('ab'), tuple([1, 2]), sorted(set([2, 1, 2])), dict([('a', 1)]), dict(a=1))",
    "xs = [1, 2, 3, 4, 5]\nprint(xs[1:3], xs[::2], xs[-1], xs[:-2], 'hello'[1:4], 'hello'[-1], (1, 2, 3)[1:])",
    "a, b = 1, 2\n(c, d), e = (3, 4), 5\nprint(a, b, c, d, e)\na, b = b, a\nprint(a, b)",
    "x = 3\nprint(f'{x} and {x + 1:>4} and {x!r} and {\"s\"!r} and {3.14159:.2f} and {x:{\"03\"}}')",
    "print([x * x for x in range(5) if x % 2 == 0], {x: x + 1 for x in [1, 2]}, sorted({x % 3 for x in range(7)}))",
    "print([(x, y) for x in [1, 2] for y in 'ab' if x > 1])",
    "print(sum(x for x in range(4)), list(x + 1 for x in [1, 2]))",
    "def f(a, b=2):\n    return a + b\nprint(f(1), f(1, 5), f(a=3, b=4))",
    "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\nprint(fact(10))",
    "def make(n):\n    def add(x):\n        return x + n\n    return add\nadd3 = make(3)\nprint(add3(4))",
    "total = 0\nfor i in range(10):\n    if i == 7:\n        break\n    if i % 2:\n        continue\n    total += i\nprint(total)",
    "n = 0\nwhile n < 5:\n    n += 1\nprint(n)",
    "i = 0\nwhile True:\n    i += 1\n    if i > 3:\n        break\nprint(i)",
    "if 1 > 2:\n    x = 'a'\nelif 2 > 1:\n    x = 'b'\nelse:\n    x = 'c'\nprint(x)",
    "import json\nd = json.loads('{\"a\": [1, 2, {\"b\": null}]}')\nprint(d['a'][2], json.dumps(d), json.dumps({'k': 1}, sort_keys=True))",
    "import re\nm = re.search('(\\\\w+)@(\\\\w+)', 'mail bob@example now')\nprint(m.group(1), m.group(2), re.findall('[0-9]+', 'a1b22'), re.sub('a', 'b', 'aa'), re.split(',', 'a,b'))",
    "import re\nprint(re.match('a', 'ba') is None, re.fullmatch('a+', 'aaa') is not None)",
    "xs = [[1], [2]]\nxs[0].append(3)\nys = xs\nys[1] = 9\nprint(xs)",
    "d = {'k': []}\nd['k'].append(1)\nd['n'] = d.get('n', 0) + 1\nd['n'] += 1\nprint(d)",
    "print(1 in [1, 2], 3 not in [1, 2], 'a' in 'cat', 'k' in {'k': 1}, 2 in {2})",
    "print([1, 2] + [3], [0] * 3, (1,) + (2,), 'ab' * 2)",
    "xs = []\nfor k, v in {'a': 1, 'b': 2}.items():\n    xs.append(k * v)\nprint(xs)",
    "print(str([1, 'a', None]), str({'a': (1, 2)}), str(1.5), str(True))",
    "x = [1]\ny = x\ny += [2]\nprint(x, y)",
    "print(int('zz'))",
    "print([1][3])",
    "print({'a': 1}['b'])",
    "def f(x):\n    return x\nf = lambda x: x + 1\nprint(f(1))",
    "print(sorted(['b', 'a', 'c'], reverse=True), sorted([('a', 2), ('a', 1)]))",
    "if (n := 3) > 2:\n    print(n)",
    "xs = []\nxs.append(xs)\nprint(str(xs), len(xs), xs == xs)",
    // Unboxed scalars and the fast paths for flat arguments, including their fallbacks.
    "xs = [1, 2, 1]\nprint(xs.index(2), xs.count(1))",
    "d = {}\nprint(d.get('a'), d.get('a', 5), d.get(1))\nl = [1]\nprint(l.get(0))",
    "l = [0, 1]\nl[1] = 5\nprint(l)\nt = (1, 2)\nt[0] = 3",
    "for w in 'a b  c'.split(' '):\n    print('<' + w + '>')\nfor w in 'x\\ny'.splitlines():\n    print(w.upper())",
    "n = 5\nfor w in n.split():\n    print(w)",
    "xs = [1]\nfor w in xs.split():\n    print(w)",
    "s = 'abc'\nn = 0\nfor c in s:\n    n += 1\nprint(n, s.find('c'), s.startswith('a'), s.replace('a', 'b'), s[1], s[-1])",
    "x = 1\ny = x / 2\nz = -x\nprint(y, z, x == 1.0, not x, ~x, x is None, x is not None)",
    "x = 3\ny = 'q'\nprint(f'{x}-{x!r}-{y!r}-{y}')",
    "s = 'a'\nprint(s + 1)",
    "n = 10\nn //= 3\nn -= 1\nn *= 4\nn += 2\nprint(n)",
    "a = 7\nb = 0\nprint(a % b)",
    "x = 'a'\nprint(x * 3, x < 'b', 'a' in x, x != 'a')",
    "s = 'Hi There'\nw = s.split()\nprint(w, s.lower().title(), s.strip('H'), s.rstrip('e'), s.lstrip())",
    "x = None\ny = x is None\nprint(y, str(x), bool(x))",
    "x = True\nprint(x + 1, int(x), abs(-3), float(2), len('abc'))",
    "k = 1\nd = {1: 'a'}\nd[True] = 'b'\nprint(d.get(k), d.get(True), d)",
    "x = 1.5\nprint(round(x), x // 1, str(x), x - 1, x * 2)",
    "xs = [3]\nprint(xs + 1)",
    "xs = [3]\nprint(xs - 1, xs * 2)",
    "d = {'a': 1}\nk = 'a'\nd[k] = d.get(k, 0) + 1\nd[k + 'b'] = 1\nprint(d, len(d))",
    "s = 'abc'\nprint(s.index('z'))",
    "n = 3\nprint(n.lower())",
    "s = 'a b  c'\nprint(len(s.split()), len(s.split(' ')), len('x\\ny'.splitlines()))\nxs = [1]\nprint(len(xs.split()))",
    "xs = [[1, 2], [3, [4]]]\nys = [1, 'a', None]\nys.append(ys)\nprint(len(xs), len(ys), len(xs[1]))",
    "x = 0.1 + 0.2\nb = x > 0.3\nprint(f'{x}', f'{x!r}', f'{1e16}', f'{b}', f'{None}', f'{-0.0}', str(x), str(1e16))",
    "xs = ['a', 'b']\nprint(','.join(xs), ''.join(('x', 'y')), '-'.join({'k': 1}), ' '.join('ab'), ','.join([]))\nprint(','.join([1]))",
    "s = ','\nprint(s.join(['a']), s.join(5))",
    "print(sum([[1], [2, 3]], []), sum([(1,), (2,)], ()), sum([1, 2], 10), sum([]))\nprint(sum([[1]], 0))",
    "print(sum([1], []))",
    "print([1] in {'a': 1})",
    "print([1] in {1})",
    "print({'a': 1}.get([1]))",
    "print({'a': 1}.get([1], 0))",
    // Found by fuzzing (fuzz/fuzz_targets/plan_run.rs): equal elements of different types keep the first
    // one, as in Python; the lowering kept the last.
    "s = set([1, True, 3])\nprint(sorted(s), set([True, 1]), {1, True}, {True, 1.0})",
    "d = {1: 'a', True: 'b'}\nprint(d, dict([(1, 'a'), (True, 'b'), (1.0, 'c')]))",
    "d = {1: 'a'}\nd[True] = 'b'\nd.update({1.0: 'c'})\nprint(d, d.setdefault(True, 'z'))",
    "s = {1}\ns.add(True)\nprint(s, {1}.union({True, 2}), {True}.union([1]))",
    "d = {1: 'a'}\nd.update([(True, 'b')])\nprint(d, dict(d))",
];

#[test]
fn lowered_plans_print_what_plain_plans_print() {
    assert!(PLANS.len() >= 40);
    let mut failures = Vec::new();
    for plan in PLANS {
        let expected = plain(plan);
        for mode in [Mode::Strict, Mode::Normal] {
            let actual = lowered(plan, mode);
            if actual != expected {
                failures.push(format!(
                    "{plan}\n  plain:   {expected:?}\n  lowered: {actual:?} ({mode:?})"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

mod random_plans {
    use super::{Mode, lowered, plain};
    use proptest::prelude::*;

    fn expr() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            (0i64..20).prop_map(|n| n.to_string()),
            Just("a".to_string()),
            Just("b".to_string()),
            Just("s".to_string()),
            Just("xs".to_string()),
        ];
        leaf.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                (
                    inner.clone(),
                    prop::sample::select(vec!["+", "-", "*", "//", "%", "==", "<", "and", "or"]),
                    inner.clone()
                )
                    .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(c, t, e)| format!("({t} if {c} else {e})")),
                inner.clone().prop_map(|e| format!("len(str({e}))")),
                inner.clone().prop_map(|e| format!("f'<{{{e}}}>'")),
                inner.clone().prop_map(|e| format!("[{e}, 1][0]")),
                inner.clone().prop_map(|e| format!("(not {e})")),
                inner
                    .clone()
                    .prop_map(|e| format!("str({e}).upper().count('A')")),
                inner
                    .clone()
                    .prop_map(|e| format!("str({e}).strip('[').split(',')")),
                inner.clone().prop_map(|e| format!("d.get({e}, 0)")),
                (inner.clone(), inner).prop_map(|(x, y)| format!("sorted([str({x}), str({y})])")),
            ]
        })
    }

    fn stmt() -> impl Strategy<Value = String> {
        prop_oneof![
            (prop::sample::select(vec!["a", "b"]), expr())
                .prop_map(|(v, e)| format!("{v} = {e}\n")),
            expr().prop_map(|e| format!("print({e})\n")),
            expr().prop_map(|e| format!("xs.append({e})\n")),
            (expr(), expr())
                .prop_map(|(c, e)| format!("if {c}:\n    a = {e}\nelse:\n    xs.append(a)\n")),
            expr().prop_map(|e| format!(
                "for i in range(3):\n    b = b + len(str({e}))\n    if b > 40:\n        break\n"
            )),
            expr().prop_map(|e| format!(
                "for w in str({e}).split('1'):\n    d[w] = d.get(w, 0) + 1\n    if w == 'a':\n        b = b + 1\n"
            )),
            (expr(), expr()).prop_map(|(k, v)| format!("d[{k}] = {v}\n")),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]
        #[test]
        fn random_subset_plans_are_transparent(body in prop::collection::vec(stmt(), 1..6)) {
            let plan = format!("a = 3\nb = 5\ns = 'hey'\nxs = []\nd = {{}}\n{}print(a, b, s, xs, d)\n", body.concat());
            let expected = plain(&plan);
            for mode in [Mode::Strict, Mode::Normal] {
                prop_assert_eq!(&lowered(&plan, mode), &expected, "{}", plan);
            }
        }
    }
}
