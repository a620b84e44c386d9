//! The subset catalogue: every builtin, method and module function a plan may call, one row each, with
//! everything the rest of Zamburak needs to know about it — which keywords it takes, whether it may be
//! passed as a value, whether its result is a plain scalar, which code it calls back, what it mutates and
//! how labels flow through it (docs/semantics.md, "Propagation" and "Callbacks").
//!
//! It is the single source read by the subset check (`subset.rs`), the name and keyword check
//! (`structure.rs`), the lowering (`lower/`), the prelude's generated dispatch tables (`build.rs`) and the
//! lint's transfer functions (`analysis/interp.rs`). Adding a builtin is one row here plus one prelude helper
//! (see CONTRIBUTING.md); `build.rs` refuses a row without its helper, and the generated tests
//! (`tests/house/catalogue.rs`) run every row's example through plain Monty, the lowered program and lint.
//!
//! This file is also compiled by `build.rs` on its own (`#[path]`), so it depends on nothing else in the
//! crate.

/// Where a builtin or method takes the plan code it calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallableAt {
    /// A keyword argument (`key=`).
    Keyword(&'static str),
    /// The first positional argument (`map(f, xs)`).
    First,
}

/// What a callback is run over: the container whose elements it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    /// The one positional argument. With several positional arguments (`max(a, b, key=k)`) the callback
    /// is given the arguments themselves, a literal tuple, so nothing is iterated.
    TheArgument,
    /// Every positional argument after the function (`map(f, xs, ys)`), zipped.
    TheRest,
    /// The receiver (`xs.sort(key=k)`).
    TheReceiver,
}

/// A builtin or method that calls plan code (a function value or lambda) once per element. Each call runs
/// as the body of a `for` loop over the container: its `pc` joins the container's structure label and each
/// element it is given carries that label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Callback {
    pub name: &'static str,
    /// A method of the receiver, or a builtin.
    pub method: bool,
    pub callable: CallableAt,
    pub over: Over,
}

/// The keyword arguments an entry accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keywords {
    /// These, by name.
    Only(&'static [&'static str]),
    /// Any name (`dict(a=1)`, `"{a}".format(a=1)`).
    Any,
}

impl Keywords {
    pub fn accepts(self, name: &str) -> bool {
        match self {
            Keywords::Only(names) => names.contains(&name),
            Keywords::Any => true,
        }
    }
}

/// What a call gives back and which labels it certainly carries: the lint's transfer function for the
/// row. The runtime helper computes at least the `must` part and at most the `may` part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Yields {
    /// A scalar computed from the first argument, carrying at least its label (`str(x)`, `abs(x)`).
    ScalarOfFirst,
    /// A scalar carrying at least the first argument's structure label (`len(xs)`).
    ScalarOfStructure,
    /// A scalar carrying at least the receiver's and every argument's label (`s.lower()`, `s.find(t)`,
    /// `re.search(p, s)` and its match's `group(0)`: the prelude labels a match, or `None`, with its inputs).
    ScalarOfAll,
    /// A scalar of every input; nothing is certain of its label (`any(xs)`).
    Scalar,
    /// `None`, with the literal label (`print`, the mutating methods).
    Nothing,
    /// One of the elements given, or a default (`min`, `max`).
    OneOfElements,
    /// The receiver's element for a key (`d.get(k)`, `xs.pop()`). `or_none`: a missing key gives `None`.
    Element { or_none: bool },
    /// A new list of strings, each carrying at least every input's label (`s.split()`, `re.findall(p, s)`,
    /// whose elements the prelude boxes with the inputs' label).
    Strings,
    /// A new container built from the inputs' elements (`sorted(xs)`, `re.findall(p, s)`).
    Container,
    /// A value of unknown shape built from the inputs (`json.loads(s)`, `d.items()`).
    Opaque,
}

/// The label a mutating method adds to its receiver's structure, beyond the `pc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extra {
    /// Nothing: the change (one more element at the end, the order reversed) reveals nothing new.
    Nothing,
    /// The influence of the first argument, an index or key (`xs.insert(i, v)`, `xs.pop(i)`).
    IndexInfluence,
    /// Every input (`xs.remove(v)`, `xs.sort(key=k)`, `d.update(o)`).
    Inputs,
}

/// Which arguments a mutating method stores in its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adds {
    Nothing,
    /// The first argument (`append`, `add`).
    First,
    /// The second argument (`insert`).
    Second,
    /// The second argument, keyed by the first (`setdefault`).
    SecondAndKey,
    /// The elements of the first argument, and every keyword value (`extend`, `update`).
    ElementsOfFirst,
}

/// How a method changes its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mutation {
    pub extra: Extra,
    pub adds: Adds,
}

/// A receiver type a method is defined on; each has its own prelude helper per method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Receiver {
    Str,
    List,
    Tuple,
    Dict,
    Set,
    /// A `re.Match` (the result of `re.search` and friends).
    Match,
}

impl Receiver {
    pub const ALL: [Receiver; 6] = [
        Receiver::Str,
        Receiver::List,
        Receiver::Tuple,
        Receiver::Dict,
        Receiver::Set,
        Receiver::Match,
    ];

    /// The prefix of its prelude helpers (`_str_lower`) and the name of its dispatch table (`_STR_M`).
    pub fn helper_prefix(self) -> &'static str {
        match self {
            Receiver::Str => "str",
            Receiver::List => "list",
            Receiver::Tuple => "tuple",
            Receiver::Dict => "dict",
            Receiver::Set => "set",
            Receiver::Match => "match",
        }
    }
}

/// A builtin function a plan may call.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub keywords: Keywords,
    /// It may be passed as a function value (`sorted(xs, key=len)`); its helper is `_fn_<name>`.
    pub value: bool,
    /// Its result is an `int`, `float`, `str`, `bool` or `None` whatever it is given (or it raises), so
    /// the lowering may keep it unboxed (`lower/flat.rs`).
    pub flat: bool,
    pub yields: Yields,
    pub callback: Option<(CallableAt, Over)>,
    /// A call the generated tests run (names `s`, `xs`, `d`, `n` are bound to tool results there).
    pub example: &'static str,
}

/// A method a plan may call on a value of one of `receivers`. The receiver's type is known only at run
/// time, so a name has one row across the types that define it.
#[derive(Clone, Copy, Debug)]
pub struct Method {
    pub name: &'static str,
    pub receivers: &'static [Receiver],
    pub keywords: Keywords,
    /// On a flat receiver it may be applied to the raw value as written (a `str` method whose result is
    /// flat, raising on every other flat receiver as plainly).
    pub raw: bool,
    /// Its result is flat whatever the receiver.
    pub flat: bool,
    /// The compiler's generated fast path for a `str` receiver and flat arguments: `Some(list)`, where
    /// `list` says the result is a list of strings all carrying one label.
    pub str_fast: Option<bool>,
    pub mutation: Option<Mutation>,
    pub yields: Yields,
    pub callback: Option<(CallableAt, Over)>,
    pub example: &'static str,
}

/// A function of an importable module.
#[derive(Clone, Copy, Debug)]
pub struct ModuleFn {
    pub module: &'static str,
    pub name: &'static str,
    pub keywords: Keywords,
    pub yields: Yields,
    pub example: &'static str,
}

const NONE: Keywords = Keywords::Only(&[]);

const fn builtin(name: &'static str, yields: Yields, example: &'static str) -> Builtin {
    Builtin {
        name,
        keywords: NONE,
        value: false,
        flat: false,
        yields,
        callback: None,
        example,
    }
}

/// A builtin whose result is flat and that may be passed as a value.
const fn scalar_fn(name: &'static str, yields: Yields, example: &'static str) -> Builtin {
    Builtin {
        value: true,
        flat: true,
        ..builtin(name, yields, example)
    }
}

const fn with_keywords(b: Builtin, keywords: &'static [&'static str]) -> Builtin {
    Builtin {
        keywords: Keywords::Only(keywords),
        ..b
    }
}

const KEY: Option<(CallableAt, Over)> = Some((CallableAt::Keyword("key"), Over::TheArgument));
const FIRST: Option<(CallableAt, Over)> = Some((CallableAt::First, Over::TheRest));

/// Builtin functions a plan may call.
pub const BUILTINS: &[Builtin] = &[
    scalar_fn("len", Yields::ScalarOfStructure, "len(xs)"),
    scalar_fn("str", Yields::ScalarOfFirst, "str(n)"),
    with_keywords(
        scalar_fn("int", Yields::ScalarOfFirst, "int('ff', base=16)"),
        &["base"],
    ),
    scalar_fn("float", Yields::ScalarOfFirst, "float(n)"),
    scalar_fn("bool", Yields::ScalarOfFirst, "bool(s)"),
    builtin("range", Yields::Container, "list(range(n))"),
    Builtin {
        callback: KEY,
        ..with_keywords(
            builtin(
                "sorted",
                Yields::Container,
                "sorted(xs, key=len, reverse=True)",
            ),
            &["key", "reverse"],
        )
    },
    builtin("reversed", Yields::Container, "list(reversed(xs))"),
    Builtin {
        callback: KEY,
        ..with_keywords(
            builtin("min", Yields::OneOfElements, "min(xs, key=len)"),
            &["key", "default"],
        )
    },
    Builtin {
        callback: KEY,
        ..with_keywords(
            builtin("max", Yields::OneOfElements, "max([], default=s)"),
            &["key", "default"],
        )
    },
    with_keywords(
        builtin("sum", Yields::Scalar, "sum([n, n], start=1)"),
        &["start"],
    ),
    builtin("any", Yields::Scalar, "any(xs)"),
    builtin("all", Yields::Scalar, "all(xs)"),
    with_keywords(
        builtin(
            "enumerate",
            Yields::Container,
            "list(enumerate(xs, start=1))",
        ),
        &["start"],
    ),
    builtin("zip", Yields::Container, "list(zip(xs, xs))"),
    Builtin {
        callback: FIRST,
        ..builtin("map", Yields::Container, "list(map(len, xs))")
    },
    Builtin {
        callback: FIRST,
        ..builtin("filter", Yields::Container, "list(filter(len, xs))")
    },
    builtin("list", Yields::Container, "list(s)"),
    Builtin {
        keywords: Keywords::Any,
        ..builtin("dict", Yields::Container, "dict(d, extra=s)")
    },
    builtin("set", Yields::Container, "sorted(set(xs))"),
    builtin("tuple", Yields::Container, "tuple(xs)"),
    scalar_fn("abs", Yields::ScalarOfFirst, "abs(n - 10)"),
    Builtin {
        value: false,
        ..scalar_fn("round", Yields::ScalarOfFirst, "round(n / 3, 2)")
    },
    with_keywords(
        builtin("print", Yields::Nothing, "print(s, n, sep='-', end='!')"),
        &["sep", "end"],
    ),
];

use Receiver::{Dict, List, Match, Set, Str, Tuple};

/// A `str` method with a flat result that is applied raw to a flat receiver and has a fast path.
const fn str_raw(name: &'static str, example: &'static str) -> Method {
    Method {
        name,
        receivers: &[Str],
        keywords: NONE,
        raw: true,
        flat: true,
        str_fast: Some(false),
        mutation: None,
        yields: Yields::ScalarOfAll,
        callback: None,
        example,
    }
}

/// A `str` method giving a list of strings.
const fn str_split(
    name: &'static str,
    keywords: &'static [&'static str],
    example: &'static str,
) -> Method {
    Method {
        keywords: Keywords::Only(keywords),
        raw: false,
        flat: false,
        str_fast: Some(true),
        yields: Yields::Strings,
        ..str_raw(name, example)
    }
}

/// A method that builds a new value and changes nothing.
const fn reader(
    name: &'static str,
    receivers: &'static [Receiver],
    yields: Yields,
    example: &'static str,
) -> Method {
    Method {
        name,
        receivers,
        keywords: NONE,
        raw: false,
        flat: false,
        str_fast: None,
        mutation: None,
        yields,
        callback: None,
        example,
    }
}

/// A method that changes its receiver.
const fn mutator(
    name: &'static str,
    receivers: &'static [Receiver],
    extra: Extra,
    adds: Adds,
    yields: Yields,
    example: &'static str,
) -> Method {
    Method {
        mutation: Some(Mutation { extra, adds }),
        ..reader(name, receivers, yields, example)
    }
}

/// Methods a plan may call. The examples run with `s` a string, `xs` a list of strings, `d` a dict of
/// strings and `n` an int, each from a tool; a mutating example works on a copy.
pub const METHODS: &[Method] = &[
    str_raw("lower", "s.lower()"),
    str_raw("upper", "s.upper()"),
    str_raw("strip", "s.strip(' .')"),
    str_raw("lstrip", "s.lstrip()"),
    str_raw("rstrip", "s.rstrip('.')"),
    str_split(
        "split",
        &["sep", "maxsplit"],
        "s.split(sep=' ', maxsplit=1)",
    ),
    str_split("rsplit", &["sep", "maxsplit"], "s.rsplit(' ', 1)"),
    str_split("splitlines", &[], "s.splitlines()"),
    Method {
        raw: false,
        str_fast: None,
        ..str_raw("join", "', '.join(xs)")
    },
    str_raw("replace", "s.replace('a', 'b')"),
    str_raw("startswith", "s.startswith('a')"),
    str_raw("endswith", "s.endswith('a')"),
    str_raw("find", "s.find('a')"),
    Method {
        receivers: &[Str, List, Tuple],
        ..str_raw("count", "xs.count(s)")
    },
    Method {
        receivers: &[Str, List, Tuple],
        ..str_raw("index", "s.index(s[0:1])")
    },
    Method {
        keywords: Keywords::Any,
        raw: false,
        str_fast: None,
        ..str_raw("format", "'{} and {x}'.format(s, x=n)")
    },
    str_raw("title", "s.title()"),
    str_raw("zfill", "str(n).zfill(6)"),
    reader("partition", &[Str], Yields::Strings, "s.partition(' ')"),
    mutator(
        "append",
        &[List],
        Extra::Nothing,
        Adds::First,
        Yields::Nothing,
        "list(xs).append(s)",
    ),
    mutator(
        "extend",
        &[List],
        Extra::Inputs,
        Adds::ElementsOfFirst,
        Yields::Nothing,
        "list(xs).extend(xs)",
    ),
    mutator(
        "insert",
        &[List],
        Extra::IndexInfluence,
        Adds::Second,
        Yields::Nothing,
        "list(xs).insert(n % 2, s)",
    ),
    mutator(
        "pop",
        &[List, Dict],
        Extra::IndexInfluence,
        Adds::Nothing,
        Yields::Element { or_none: false },
        "list(xs).pop()",
    ),
    mutator(
        "remove",
        &[List, Set],
        Extra::Inputs,
        Adds::Nothing,
        Yields::Nothing,
        "list(xs).remove(xs[0])",
    ),
    Method {
        keywords: Keywords::Only(&["key", "reverse"]),
        callback: Some((CallableAt::Keyword("key"), Over::TheReceiver)),
        ..mutator(
            "sort",
            &[List],
            Extra::Inputs,
            Adds::Nothing,
            Yields::Nothing,
            "list(xs).sort(key=len, reverse=True)",
        )
    },
    mutator(
        "reverse",
        &[List],
        Extra::Nothing,
        Adds::Nothing,
        Yields::Nothing,
        "list(xs).reverse()",
    ),
    reader("copy", &[List, Dict], Yields::Opaque, "xs.copy()"),
    reader(
        "get",
        &[Dict],
        Yields::Element { or_none: true },
        "d.get('a', s)",
    ),
    reader("keys", &[Dict], Yields::Opaque, "list(d.keys())"),
    reader("values", &[Dict], Yields::Opaque, "list(d.values())"),
    reader("items", &[Dict], Yields::Opaque, "list(d.items())"),
    mutator(
        "update",
        &[Dict],
        Extra::Inputs,
        Adds::ElementsOfFirst,
        Yields::Nothing,
        "dict(d).update(d)",
    ),
    mutator(
        "setdefault",
        &[Dict],
        Extra::Inputs,
        Adds::SecondAndKey,
        Yields::Element { or_none: false },
        "dict(d).setdefault(s, n)",
    ),
    mutator(
        "add",
        &[Set],
        Extra::Inputs,
        Adds::First,
        Yields::Nothing,
        "set(xs).add(s)",
    ),
    mutator(
        "discard",
        &[Set],
        Extra::Inputs,
        Adds::Nothing,
        Yields::Nothing,
        "set(xs).discard(s)",
    ),
    reader("union", &[Set], Yields::Opaque, "sorted(set(xs).union(xs))"),
    reader(
        "intersection",
        &[Set],
        Yields::Opaque,
        "sorted(set(xs).intersection(xs))",
    ),
    reader(
        "difference",
        &[Set],
        Yields::Opaque,
        "sorted(set(xs).difference([s]))",
    ),
    reader(
        "group",
        &[Match],
        Yields::ScalarOfAll,
        "re.search('a', s).group(0)",
    ),
];

const fn module_fn(
    module: &'static str,
    name: &'static str,
    yields: Yields,
    example: &'static str,
) -> ModuleFn {
    ModuleFn {
        module,
        name,
        keywords: NONE,
        yields,
        example,
    }
}

/// Importable modules' functions a plan may call; the helper of `json.dumps` is `_json_dumps`.
pub const MODULE_FNS: &[ModuleFn] = &[
    ModuleFn {
        keywords: Keywords::Only(&["indent", "sort_keys"]),
        ..module_fn(
            "json",
            "dumps",
            Yields::Scalar,
            "json.dumps(d, sort_keys=True)",
        )
    },
    module_fn("json", "loads", Yields::Opaque, "json.loads('[1, 2]')"),
    module_fn(
        "re",
        "search",
        Yields::ScalarOfAll,
        "bool(re.search('a', s))",
    ),
    module_fn("re", "match", Yields::ScalarOfAll, "bool(re.match('a', s))"),
    module_fn(
        "re",
        "fullmatch",
        Yields::ScalarOfAll,
        "bool(re.fullmatch('a.*', s))",
    ),
    module_fn("re", "findall", Yields::Strings, "re.findall('[a-z]+', s)"),
    module_fn("re", "sub", Yields::ScalarOfAll, "re.sub('a', 'b', s)"),
    module_fn("re", "split", Yields::Strings, "re.split(' ', s)"),
];

/// The modules a plan may import.
pub const MODULES: &[&str] = &["json", "re"];

/// The row of a builtin.
pub fn builtin_row(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// The row of a method.
pub fn method_row(name: &str) -> Option<&'static Method> {
    METHODS.iter().find(|m| m.name == name)
}

/// The row of a module function.
pub fn module_fn_row(module: &str, name: &str) -> Option<&'static ModuleFn> {
    MODULE_FNS
        .iter()
        .find(|f| f.module == module && f.name == name)
}

/// The prelude helpers a row needs, by name: what `build.rs` checks and the lowering calls.
pub fn helpers() -> Vec<String> {
    let mut out = Vec::new();
    for b in BUILTINS {
        out.push(format!("_bi_{}", b.name));
        if b.value {
            out.push(format!("_fn_{}", b.name));
        }
    }
    for m in METHODS {
        for r in m.receivers {
            out.push(format!("_{}_{}", r.helper_prefix(), m.name));
        }
    }
    for f in MODULE_FNS {
        out.push(format!("_{}_{}", f.module, f.name));
    }
    out
}

/// The prelude's method dispatch tables, generated from [`METHODS`]: `_STR_M = {'lower': _str_lower, ...}`,
/// one per receiver type. `build.rs` appends this to the prelude.
pub fn dispatch_tables() -> String {
    let mut out = String::from("\n# Generated from src/plan/catalogue.rs by build.rs.\n");
    for r in Receiver::ALL {
        let entries: Vec<String> = METHODS
            .iter()
            .filter(|m| m.receivers.contains(&r))
            .map(|m| format!("'{0}': _{1}_{0}", m.name, r.helper_prefix()))
            .collect();
        out.push_str(&format!(
            "_{}_M = {{{}}}\n",
            r.helper_prefix().to_uppercase(),
            entries.join(", ")
        ));
    }
    out
}

/// Every entry that calls plan code, as the loop its calls run in.
pub fn callbacks() -> Vec<Callback> {
    let builtins = BUILTINS.iter().filter_map(|b| {
        b.callback.map(|(callable, over)| Callback {
            name: b.name,
            method: false,
            callable,
            over,
        })
    });
    let methods = METHODS.iter().filter_map(|m| {
        m.callback.map(|(callable, over)| Callback {
            name: m.name,
            method: true,
            callable,
            over,
        })
    });
    builtins.chain(methods).collect()
}

/// The callback row of a builtin (`method == false`) or method, if it calls plan code.
pub fn callback(name: &str, method: bool) -> Option<Callback> {
    let (name, (callable, over)) = if method {
        let m = method_row(name)?;
        (m.name, m.callback?)
    } else {
        let b = builtin_row(name)?;
        (b.name, b.callback?)
    };
    Some(Callback {
        name,
        method,
        callable,
        over,
    })
}
