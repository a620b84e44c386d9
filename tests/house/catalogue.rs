//! Every row of the subset catalogue (`src/plan/catalogue.rs`), generated: its example runs
//! * plainly on Monty and lowered, in both modes, printing the same thing (transparency);
//! * on untrusted, private tool data into a sink, where the runtime's decision lies between lint's `must` and
//!   `may` predictions, in both modes;
//! * for a mutating method, on a receiver whose structure the plan fixed, raising that structure by at
//!   least what the row's `Extra` says;
//!
//! the checks accept every example, and the builtin list in `docs/diagnostics.md` is the catalogue's. A new row is covered by adding it: no
//! test to write.

use crate::common;

use std::path::Path;

use common::bounds::lint_bounds_runtime;
use common::monty::{lowered, plain};
use serde_json::json;
use zamburak::label::{LITERAL, Packed, UNTRUSTED_BIT};
use zamburak::lower::Mode;
use zamburak::plan::catalogue::{BUILTINS, METHODS, MODULE_FNS};
use zamburak::policy::{Outcome, Policy};
use zamburak::runtime::exec::{ExecOutcome, Host, HostReply, execute};
use zamburak::value::{LValue, Raw};

/// Every example, with the imports it may need.
fn examples() -> Vec<(String, &'static str)> {
    let b = BUILTINS
        .iter()
        .map(|b| (format!("builtin {}", b.name), b.example));
    let m = METHODS
        .iter()
        .map(|m| (format!("method .{}()", m.name), m.example));
    let f = MODULE_FNS
        .iter()
        .map(|f| (format!("{}.{}", f.module, f.name), f.example));
    b.chain(m).chain(f).collect()
}

/// The names the examples use, as literals (for plain Monty) or from a tool (for the labelled run).
const LITERALS: &str =
    "s = 'hello world. a'\nxs = ['b', 'a', 'ccc']\nd = {'a': 'x', 'b': 'y'}\nn = 7\n";
const FROM_TOOL: &str = "r = get()\ns = r['s']\nxs = r['xs']\nd = r['d']\nn = r['n']\n";

#[test]
fn every_row_prints_what_plain_monty_prints() {
    let mut failures = Vec::new();
    for (what, example) in examples() {
        let plan = format!("import json\nimport re\n{LITERALS}print({example})\n");
        let expected = plain(&plan);
        assert!(
            !expected.contains("ERROR"),
            "{what}: the example `{example}` fails plainly: {expected}"
        );
        for mode in [Mode::Strict, Mode::Normal] {
            let actual = lowered(&plan, mode);
            if actual != expected {
                failures.push(format!(
                    "{what}: {example}\n  plain:   {expected:?}\n  lowered: {actual:?} ({mode:?})"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const POLICY: &str = r#"
version: 1
mode: strict
user: me@example.com
tags: [PRIVATE]
tools:
  get:
    effect: read
    args: {}
    control: { require: any }
    returns: { integrity: untrusted, tags: [PRIVATE], readers: { from_fields: [from] } }
  sink:
    effect: send
    args:
      x: { require: [trusted], forbid_tags: [PRIVATE] }
    # A violation drafts instead of stopping the run, so the call after it is decided too.
    on_violation: draft
"#;

#[test]
fn lint_bounds_the_runtime_on_every_row() {
    let policy = Policy::from_yaml_str(POLICY, "<test>", Path::new(".")).unwrap();
    let data = json!({
        "s": "hello world. a", "xs": ["b", "a", "ccc"], "d": {"a": "x", "b": "y"}, "n": 7,
        "from": "mallory@evil.test",
    });
    let mut failures = Vec::new();
    let mut drafted = 0;
    for (what, example) in examples() {
        // The result itself, then a literal sent under a condition on it (its label reaches `pc`).
        let plan = format!(
            "import json\nimport re\n{FROM_TOOL}v = {example}\nsink(x=v)\nif v:\n    sink(x='literal')\n"
        );
        if let Err(d) = zamburak::plan::check(&plan, &policy.signatures()) {
            failures.push(format!("{what}: the checks refuse the example: {d:?}"));
            continue;
        }
        for mode in [Mode::Strict, Mode::Normal] {
            match lint_bounds_runtime(&plan, &data, &policy, mode) {
                Ok(decisions) => {
                    assert!(
                        decisions.len() >= 2,
                        "{what}: the example did not reach the sink ({mode:?})"
                    );
                    drafted += decisions
                        .iter()
                        .filter(|d| d.tool == "sink" && d.decision == Outcome::Draft)
                        .count();
                }
                Err(e) => failures.push(format!("{what} ({mode:?}): {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The oracle sees labels: untrusted private data reaches most sinks.
    assert!(drafted > examples().len(), "only {drafted} sinks drafted");
}

/// The list of builtins, methods and module functions in docs/diagnostics.md is the catalogue's.
#[test]
fn the_documented_subset_is_the_catalogue() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/diagnostics.md"))
        .unwrap();
    let section = doc
        .split("## What a plan may use")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/diagnostics.md has the section");
    let words: Vec<&str> = section
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .collect();
    for (what, name) in BUILTINS
        .iter()
        .map(|b| ("builtin", b.name.to_string()))
        .chain(METHODS.iter().map(|m| ("method", m.name.to_string())))
        .chain(
            MODULE_FNS
                .iter()
                .map(|f| ("function", format!("{}.{}", f.module, f.name))),
        )
    {
        assert!(
            words.contains(&name.as_str()) || words.contains(&name.rsplit('.').next().unwrap()),
            "{what} `{name}` is missing from docs/diagnostics.md, \"What a plan may use\""
        );
    }
}

/// Box kinds are bytes (docs/lowering.md, "Unforgeable boxes"), so no plan may ever hold a bytes value:
/// every way Python has to make one is refused before the run.
#[test]
fn no_plan_can_make_bytes() {
    let sigs = zamburak::plan::Signatures::default();
    for plan in [
        "x = b'l'\n",
        "x = 'l'.encode()\n",
        "x = bytes(1)\n",
        "x = bytearray(1)\n",
        "x = memoryview(b'')\n",
        "x = str.encode('l')\n",
        "import json\nx = json.loads('1').to_bytes(1, 'big')\n",
        "x = (1).to_bytes(1, 'big')\n",
    ] {
        assert!(
            zamburak::plan::check(plan, &sigs).is_err(),
            "the checks accept a plan that makes bytes: {plan}"
        );
    }
    // The catalogue has no entry that could: no row is named for bytes.
    for m in METHODS {
        assert!(
            !["encode", "to_bytes", "hex", "fromhex"].contains(&m.name),
            "{}",
            m.name
        );
    }
    assert!(
        BUILTINS
            .iter()
            .all(|b| !["bytes", "bytearray", "memoryview"].contains(&b.name))
    );
}

/// Records the label of every `sink` argument; `get` answers the tool data every example reads.
struct StructureHost {
    seen: Vec<i64>,
}

impl Host for StructureHost {
    fn call(&mut self, name: &str, args: Vec<(String, LValue)>, _: Packed, _: u32) -> HostReply {
        if name == "sink" {
            self.seen.push(args[0].1.label.bits());
            return HostReply::Return(LValue::new(Raw::None, Packed::LITERAL));
        }
        let taint = Packed::from_bits(LITERAL | UNTRUSTED_BIT);
        let s = |v: &str| LValue::new(Raw::Str(v.into()), taint.clone());
        let field = |k: &str, v: LValue| (LValue::new(Raw::Str(k.into()), Packed::LITERAL), v);
        HostReply::Return(LValue::new(
            Raw::Dict(vec![
                field("s", s("hello world. a")),
                field(
                    "xs",
                    LValue::new(Raw::List(vec![s("b"), s("a"), s("ccc")]), taint.clone()),
                ),
                field(
                    "d",
                    LValue::new(
                        Raw::Dict(vec![(s("a"), s("x")), (s("b"), s("y"))]),
                        taint.clone(),
                    ),
                ),
                field("n", LValue::new(Raw::Int(7), taint.clone())),
            ]),
            Packed::LITERAL,
        ))
    }
}

/// Each mutating method's row says what its change reveals (`Extra`): the runtime must raise the
/// receiver's structure by at least that. A receiver whose structure the plan fixed (a literal) is changed
/// by the row's example call with untrusted arguments (and, for a list, an untrusted element, since `sort`
/// compares elements); `len` of it must then be untrusted. The row is the one statement of the rule: a
/// prelude helper that raises less fails here.
#[test]
fn every_mutator_raises_the_structure_by_what_its_row_says() {
    use zamburak::plan::catalogue::Extra;
    let mut sigs = zamburak::plan::Signatures::default();
    sigs.tools.insert("get".into(), vec![]);
    sigs.tools.insert("sink".into(), vec!["x".into()]);
    let mut checked = 0;
    for m in METHODS {
        let Some(mutation) = m.mutation else { continue };
        if mutation.extra == Extra::Nothing {
            continue;
        }
        let call = format!(".{}(", m.name);
        let (receiver, rest) = m
            .example
            .split_once(&call)
            .unwrap_or_else(|| panic!("{}: the example calls the method", m.name));
        let args = rest.strip_suffix(')').unwrap_or(rest);
        let literal = match receiver {
            "list(xs)" => "[xs[0], 'a', 'ccc']",
            "dict(d)" => "{'a': 'x', 'b': 'y'}",
            "set(xs)" => "{'b', 'a', 'ccc'}",
            other => panic!("{}: a receiver this test does not know: {other}", m.name),
        };
        // An index that decides what changes: given untrusted, when the example gives none.
        let args = match (mutation.extra, args) {
            (Extra::IndexInfluence, "") => "n % 2",
            _ => args,
        };
        let plan = format!(
            "{FROM_TOOL}c = {literal}\nsink(x=len(c))\nc.{}({args})\nsink(x=len(c))\n",
            m.name
        );
        for mode in [Mode::Strict, Mode::Normal] {
            let module = ruff_python_parser::parse_module(&plan)
                .unwrap()
                .into_syntax();
            let lowered = zamburak::lower::compile(&module, &plan, &sigs, mode)
                .unwrap_or_else(|d| panic!("{plan}\n{d:?}"));
            let limits = common::monty::test_limits();
            let mut host = StructureHost { seen: Vec::new() };
            let out = execute(&lowered, &sigs, &mut host, &limits, &mut |_| {});
            assert_eq!(out, ExecOutcome::Completed, "{plan}");
            assert_eq!(host.seen.len(), 2, "{plan}");
            assert_eq!(
                host.seen[0] & UNTRUSTED_BIT,
                0,
                "{}: the plan fixed the structure before the call ({mode:?})\n{plan}",
                m.name
            );
            assert_ne!(
                host.seen[1] & UNTRUSTED_BIT,
                0,
                "{}: the row says {:?}, but the runtime left the structure trusted ({mode:?})\n{plan}",
                m.name,
                mutation.extra
            );
        }
        checked += 1;
    }
    assert!(checked >= 7, "only {checked} mutators checked");
}
