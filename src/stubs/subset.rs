//! The Python subset as a planner is told it (docs/diagnostics.md, "What a plan may use"): what a plan may write and what it may
//! not, each with a small example. The builtins, methods and module functions are listed from the subset
//! catalogue (`plan::catalogue`), the one source `lint` and `run` check them against; the statements and
//! constructs are written here, and the tests below run every example through `plan::check`: each allowed
//! one must pass, each refused one must be refused, so this text cannot drift from what the check does.

use serde_json::{Value, json};

use crate::plan::catalogue::{BUILTINS, Keywords, METHODS, MODULE_FNS, Receiver};
use crate::plan::subset::FORBIDDEN_BUILTINS;

/// What a plan may write, each with an example that passes `plan::check`.
pub const ALLOWED: &[(&str, &str)] = &[
    (
        "assignment, also augmented (`+=`), to tuples and lists (unpacking) and to subscripts (`d[\"k\"] = v`)",
        "a, b = 1, 2\nd = {}\nd[\"k\"] = a\na += b\n",
    ),
    (
        "`if` / `elif` / `else`, `for`, `while`, `break`, `continue`, `pass`",
        "n = 0\nfor i in range(3):\n    if i == 1:\n        continue\n    elif i > 5:\n        break\n    n += i\nwhile n > 10:\n    n -= 1\n",
    ),
    (
        "`def` with plain parameters and defaults, `return`, recursion, `lambda` (no defaults)",
        "def total(xs, start=0):\n    return sum(xs) + start\nby_len = sorted(['ab', 'c'], key=lambda s: len(s))\n",
    ),
    (
        "list, dict and set literals and comprehensions, generator expressions, slices, conditional expressions",
        "xs = [i * 2 for i in range(5) if i % 2 == 0]\nd = {k: v for k, v in zip('ab', xs)}\nfirst = xs[1:3]\nbig = any(x > 3 for x in xs)\nlabel = 'big' if big else 'small'\n",
    ),
    (
        "f-strings (with format specs) and `str.format`",
        "n = 3.14159\ns = f\"{n:.2f} and {'x'!r}\" + '{} {k}'.format(1, k=2)\n",
    ),
    (
        "`:=` outside comprehensions",
        "if (n := len('abc')) > 2:\n    print(n)\n",
    ),
    (
        "`import json` and `import re` at the top level, and their functions listed below",
        "import json\nimport re\nd = json.loads('{\"a\": 1}')\nm = re.search('a+', 'caaat')\nprint(json.dumps(d), m.group(0) if m else '')\n",
    ),
];

/// What a plan may not write, each with an example `plan::check` refuses.
pub const REFUSED: &[(&str, &str)] = &[
    (
        "`async`, `await`, `async for`, `async with`: tools are plain synchronous calls",
        "async def f():\n    return 1\n",
    ),
    (
        "`try` / `except` / `finally`, `raise`, `assert`: a failing call stops the plan; a verifier's \
         `or_none=True` gives None instead",
        "try:\n    x = 1\nexcept ValueError:\n    x = 2\n",
    ),
    ("`class`", "class Mail:\n    pass\n"),
    ("`with`", "with x:\n    pass\n"),
    ("`match`", "match 1:\n    case 1:\n        pass\n"),
    ("`del`, `global`, `nonlocal`", "x = 1\ndel x\n"),
    (
        "imports other than `import json` and `import re`, `from … import …`, `import … as …`",
        "import os\n",
    ),
    (
        "annotations: `x: int = 1`, `def f(x: int) -> int`, type parameters, `type` aliases",
        "x: int = 1\n",
    ),
    (
        "decorators, `*args`, `**kwargs`, keyword-only and positional-only parameters, `*xs` and `**d` in \
         calls and literals",
        "def f(*args):\n    return args\n",
    ),
    (
        "`yield`, `yield from` (generator functions)",
        "def f():\n    yield 1\n",
    ),
    (
        "attributes other than an allowed method call: `x.attr`, `obj.field = v` (use a dict and `d[\"k\"]`)",
        "x = 'a'\ny = x.__class__\n",
    ),
    (
        "`%`-formatting of strings (use an f-string or `str.format`)",
        "s = 'a%s' % 1\n",
    ),
    (
        "`for … else`, `while … else`",
        "for i in range(2):\n    pass\nelse:\n    pass\n",
    ),
    (
        "`:=` inside a comprehension",
        "xs = [(y := i) for i in range(3)]\n",
    ),
    (
        "`...`, bytes literals, complex numbers, t-strings, the `@` operator",
        "x = b'bytes'\n",
    ),
    (
        "names starting with `_`: they belong to the runtime",
        "_hidden = 1\n",
    ),
    (
        "builtins that reach into the interpreter (listed below), e.g. `getattr`, `eval`, `open`, `isinstance`, `type`",
        "f = getattr\n",
    ),
    (
        "methods and module functions not listed below",
        "x = 'a'.casefold()\n",
    ),
];

fn keywords(k: Keywords) -> Option<String> {
    match k {
        Keywords::Only([]) => None,
        Keywords::Only(names) => Some(
            names
                .iter()
                .map(|n| format!("{n}="))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        Keywords::Any => Some("name=…".into()),
    }
}

fn receiver_name(r: Receiver) -> &'static str {
    match r {
        Receiver::Str => "str",
        Receiver::List => "list",
        Receiver::Tuple => "tuple",
        Receiver::Dict => "dict",
        Receiver::Set => "set",
        Receiver::Match => "re.Match",
    }
}

/// The allowed builtins, with the keywords each takes: `sorted(…, key=, reverse=)`.
pub fn builtins() -> Vec<String> {
    BUILTINS
        .iter()
        .map(|b| match keywords(b.keywords) {
            Some(k) => format!("{}(…, {k})", b.name),
            None => b.name.to_string(),
        })
        .collect()
}

/// The allowed methods, by receiver type: `("str", ["lower", "split(…, sep=, maxsplit=)", …])`.
pub fn methods() -> Vec<(&'static str, Vec<String>)> {
    Receiver::ALL
        .iter()
        .map(|&r| {
            let names = METHODS
                .iter()
                .filter(|m| m.receivers.contains(&r))
                .map(|m| match keywords(m.keywords) {
                    Some(k) => format!("{}(…, {k})", m.name),
                    None => m.name.to_string(),
                })
                .collect();
            (receiver_name(r), names)
        })
        .collect()
}

/// The allowed module functions: `json.dumps(…, indent=, sort_keys=)`.
pub fn module_functions() -> Vec<String> {
    MODULE_FNS
        .iter()
        .map(|f| match keywords(f.keywords) {
            Some(k) => format!("{}.{}(…, {k})", f.module, f.name),
            None => format!("{}.{}", f.module, f.name),
        })
        .collect()
}

/// The subset as Markdown.
pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str("A plan may use:\n\n");
    for (what, _) in ALLOWED {
        out.push_str(&format!("* {what}\n"));
    }
    out.push_str("\nA plan may not use:\n\n");
    for (what, _) in REFUSED {
        out.push_str(&format!("* {what}\n"));
    }
    let tick = |xs: &[String]| {
        xs.iter()
            .map(|x| format!("`{x}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push_str(&format!("\nBuiltins: {}.\n\n", tick(&builtins())));
    out.push_str("Methods, called as `x.name(…)`:\n\n");
    for (receiver, names) in methods() {
        out.push_str(&format!("* on a `{receiver}`: {}\n", tick(&names)));
    }
    out.push_str(&format!(
        "\nModule functions (after `import json` / `import re`): {}.\n\n",
        tick(&module_functions())
    ));
    let forbidden: Vec<String> = FORBIDDEN_BUILTINS.iter().map(|s| s.to_string()).collect();
    out.push_str(&format!(
        "Refused wherever they appear: {}.\n",
        tick(&forbidden)
    ));
    out
}

/// The subset as JSON.
pub fn json() -> Value {
    let pairs = |xs: &[(&str, &str)]| -> Value {
        xs.iter()
            .map(|(what, example)| json!({ "what": what, "example": example }))
            .collect()
    };
    json!({
        "allowed": pairs(ALLOWED),
        "refused": pairs(REFUSED),
        "builtins": builtins(),
        "methods": methods()
            .into_iter()
            .map(|(r, names)| (r.to_string(), json!(names)))
            .collect::<serde_json::Map<String, Value>>(),
        "module_functions": module_functions(),
        "modules": crate::plan::catalogue::MODULES,
        "forbidden_builtins": FORBIDDEN_BUILTINS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Signatures, check};

    #[test]
    fn every_allowed_example_passes_the_check_run_and_lint_use() {
        for (what, example) in ALLOWED {
            if let Err(d) = check(example, &Signatures::default()) {
                panic!("{what}: {example:?} is refused: {d:?}");
            }
        }
    }

    #[test]
    fn every_refused_example_is_refused_by_the_subset_check() {
        for (what, example) in REFUSED {
            let parsed = crate::plan::parse::parse(example)
                .unwrap_or_else(|d| panic!("{what}: {example:?} does not parse: {d:?}"));
            let diags = crate::plan::subset::check_subset(&parsed.module, &parsed.source);
            assert!(
                !diags.is_empty(),
                "{what}: {example:?} passes the subset check"
            );
        }
    }

    #[test]
    fn the_lists_come_from_the_catalogue() {
        let md = markdown();
        for b in BUILTINS {
            assert!(md.contains(&format!("`{}", b.name)), "{}", b.name);
        }
        for m in METHODS {
            assert!(md.contains(&format!("`{}", m.name)), "{}", m.name);
        }
        assert!(md.contains("`sorted(…, key=, reverse=)`"), "{md}");
        assert!(md.contains("`json.dumps(…, indent=, sort_keys=)`"), "{md}");
    }
}
