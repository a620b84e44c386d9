//! The prelude helpers generated from the catalogue (`src/plan/catalogue.rs`): a fast path per `str` method
//! the compiler calls with flat arguments (`_ms_<method>_<n>`), and the raw loop over a split string
//! (`_msr_<method>_<n>`), for every such method and every number of arguments up to [`MAX_FLAT_ARGS`].
//! They do not depend on the plan, so `build.rs` compiles them into the prelude session with the rest of
//! the prelude, and a plan's snippet only calls them: Monty's compile of the snippet is linear in its text,
//! and a plan's own copies of them were about a tenth of it (docs/lowering.md, "Speed").
//!
//! This file is also compiled into `build.rs` (`#[path]`), so it names nothing of the crate: the methods
//! come in as `(name, gives a list)` pairs.

/// The most positional arguments a generated fast path takes (`s.replace(a, b)`, `s.split(sep, n)`): the
/// compiler calls one only for calls with that many or fewer, all flat.
pub const MAX_FLAT_ARGS: usize = 2;

/// How many positional arguments a method takes in Python, where fewer than `0..=MAX_FLAT_ARGS` (every
/// other method gets all of those). Only a matter of size: every generated helper is loaded with the
/// prelude session on every run, and a call with another number of arguments is compiled to the general
/// helper, which raises as Python does.
const ARITIES: &[(&str, &[usize])] = &[
    ("lower", &[0]),
    ("upper", &[0]),
    ("title", &[0]),
    ("strip", &[0, 1]),
    ("lstrip", &[0, 1]),
    ("rstrip", &[0, 1]),
    ("splitlines", &[0, 1]),
    ("replace", &[2]),
    ("startswith", &[1, 2]),
    ("endswith", &[1, 2]),
    ("find", &[1, 2]),
    ("count", &[1, 2]),
    ("index", &[1, 2]),
    ("zfill", &[1]),
];

/// Whether `method` called with `n` flat positional arguments has a generated helper.
pub fn has_fast_path(method: &str, n: usize) -> bool {
    n <= MAX_FLAT_ARGS
        && ARITIES
            .iter()
            .find(|(m, _)| *m == method)
            .is_none_or(|(_, ns)| ns.contains(&n))
}

/// The text of every generated helper, for the `str` methods with a fast path (`(name, list)`: `list`, the
/// method gives a list of strings, which also gets a raw loop).
pub fn helpers<'a>(methods: impl IntoIterator<Item = (&'a str, bool)>) -> String {
    let mut out =
        String::from("\n# Generated from src/plan/catalogue.rs by src/lower/generated.rs.\n");
    for (method, list) in methods {
        for n in (0..=MAX_FLAT_ARGS).filter(|n| has_fast_path(method, *n)) {
            out.push_str(&str_method_helper(method, n, list));
            if list {
                out.push_str(&split_iter_helper(method, n));
            }
        }
    }
    out
}

/// The helper for `for x in s.split(a0, ...)`: the raw list and the one label every element and the
/// structure carry (what `_box` would give each of them). On anything but a `str` the general `_m` raises.
fn split_iter_helper(method: &str, n: usize) -> String {
    let FlatArgs {
        params,
        raws,
        label,
        boxed,
    } = flat_args(n);
    format!(
        "def _msr_{method}_{n}(c{params}, pc, line):\n    x = c[0]\n    if type(x) is str:\n        return (x.{method}({raws}), {label} | _UV)\n    _m(c, '{method}', {boxed}, _NOKW, pc, line)\n    raise TypeError('{method}() needs a str')\n"
    )
}

/// The pieces of a generated helper over a receiver `c` and `n` flat arguments passed as raw value and
/// label (`a0, l0, ...`).
struct FlatArgs {
    /// `, a0, l0, a1, l1` (empty without arguments).
    params: String,
    /// `a0, a1`.
    raws: String,
    /// The join of the receiver's and the arguments' labels.
    label: String,
    /// The arguments boxed again, for the general helper.
    boxed: String,
}

fn flat_args(n: usize) -> FlatArgs {
    let raws: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    let boxed: Vec<String> = (0..n).map(|i| format!("(a{i}, l{i})")).collect();
    FlatArgs {
        params: (0..n).map(|i| format!(", a{i}, l{i}")).collect(),
        raws: raws.join(", "),
        label: std::iter::once("c[1]".to_string())
            .chain((0..n).map(|i| format!("l{i}")))
            .collect::<Vec<_>>()
            .join(" | "),
        boxed: if n > 0 {
            format!("[{}]", boxed.join(", "))
        } else {
            "_NOARGS".into()
        },
    }
}

/// The helper for `s.method(a0, ...)` with `n` flat arguments passed as raw value and label: on a `str`
/// receiver it applies the method to raw values (the label is the join of all, computed); anything else
/// goes through the general `_m` with the arguments boxed again.
fn str_method_helper(method: &str, n: usize, list: bool) -> String {
    let FlatArgs {
        params,
        raws,
        label,
        boxed,
    } = flat_args(n);
    let result = format!("x.{method}({raws})");
    // A list of strings all carrying the one label (the catalogue's `str_fast: Some(true)`): boxed as
    // `_box` boxes it, without its per-element type test.
    let ret = if list {
        format!("l = {label} | _UV\n        return ([_KL, [(e, l) for e in {result}], l], l)")
    } else {
        format!("return ({result}, {label} | _UV)")
    };
    format!(
        "def _ms_{method}_{n}(c{params}, pc, line):\n    x = c[0]\n    if type(x) is str:\n        {ret}\n    return _m(c, '{method}', {boxed}, _NOKW, pc, line)\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::catalogue::METHODS;

    /// Every helper the compiler may call ([`has_fast_path`]) is in the text the session is built from, and
    /// a call Python refuses for its number of arguments gets none (it goes through the general helper).
    #[test]
    fn the_compiler_calls_only_helpers_that_exist() {
        let methods: Vec<(&str, bool)> = METHODS
            .iter()
            .filter_map(|m| m.str_fast.map(|list| (m.name, list)))
            .collect();
        let text = helpers(methods.iter().copied());
        for (m, list) in &methods {
            for n in 0..=MAX_FLAT_ARGS + 1 {
                let has = has_fast_path(m, n);
                assert_eq!(text.contains(&format!("def _ms_{m}_{n}(")), has, "{m} {n}");
                assert_eq!(text.contains(&format!("def _msr_{m}_{n}(")), has && *list);
            }
        }
        assert!(!has_fast_path("lower", 1) && has_fast_path("split", 2));
    }
}
