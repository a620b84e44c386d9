//! The mutation test of issue #51: each of the repository's base policies, weakened one rule at a
//! time, fed to verification as the drafter's answer. A weakening counts as refused when
//! verification reports a failure the unweakened base does not have (so a base that already fails
//! for some other reason cannot make every mutation look refused). What is not refused is compared
//! to the list docs/policy.md ("What verification cannot see") gives with the reason; a new hole or
//! a closed one fails the test, so the list stays true.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Map, Value, json};

use super::constitution::Constitution;
use super::prompts::PolicyAnswer;
use super::{Input, mapping, roles, verify};
use crate::policy::Policy;
use crate::runtime::run::Engine;

/// One weakening: its name and the weakened policy.
type Mutation = (String, Map<String, Value>);

fn set(
    doc: &Map<String, Value>,
    path: &[&str],
    value: Option<Value>,
) -> Option<Map<String, Value>> {
    let mut out = doc.clone();
    let mut cur = &mut out;
    for k in &path[..path.len() - 1] {
        cur = cur.get_mut(*k)?.as_object_mut()?;
    }
    let last = path[path.len() - 1];
    match value {
        Some(v) => {
            if cur.get(last) == Some(&v) {
                return None; // not a change
            }
            cur.insert(last.into(), v);
        }
        None => {
            cur.remove(last)?;
        }
    }
    Some(out)
}

/// Every single-rule weakening of `doc`.
fn mutations(doc: &Map<String, Value>, base: &Policy) -> Vec<Mutation> {
    let mut out = Vec::new();
    let mut add = |name: String, m: Option<Map<String, Value>>| {
        if let Some(m) = m {
            out.push((name, m));
        }
    };
    add("user removed".into(), set(doc, &["user"], None));
    add(
        "mode: normal".into(),
        set(doc, &["mode"], Some(json!("normal"))),
    );
    add(
        "limits.max_tool_calls: 1".into(),
        set(doc, &["limits"], Some(json!({ "max_tool_calls": 1 }))),
    );
    let empty = Map::new();
    let verifiers = doc
        .get("verifiers")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, v) in verifiers {
        let p = |k: &'static str| ["verifiers", name.as_str(), k];
        match v.get("kind").and_then(Value::as_str) {
            Some("email_allowlist") => add(
                format!("verifier {name}: allow *"),
                set(doc, &p("allow"), Some(json!(["*"]))),
            ),
            Some("url_allowlist") => add(
                format!("verifier {name}: hosts *"),
                set(doc, &p("hosts"), Some(json!(["*"]))),
            ),
            Some("one_of") => {
                let mut vals = v.get("values").cloned().unwrap_or(json!([]));
                if let Some(a) = vals.as_array_mut() {
                    a.push(json!("XX00EVIL00000000000001"));
                }
                add(
                    format!("verifier {name}: an attacker's value"),
                    set(doc, &p("values"), Some(vals)),
                );
            }
            Some("number_range") => add(
                format!("verifier {name}: max raised"),
                set(doc, &p("max"), Some(json!(1e12))),
            ),
            _ => {}
        }
        // A verifier named like a battery plan's variable.
        let mut m = doc.clone();
        if let Some(vs) = m.get_mut("verifiers").and_then(Value::as_object_mut) {
            vs.insert("x".into(), v.clone());
        }
        add(format!("verifier {name} copied as `x`"), Some(m));
    }
    let tools = doc
        .get("tools")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (tool, spec) in tools {
        let t = tool.as_str();
        if spec.get("control").is_some() {
            add(
                format!("{t}: control any"),
                set(
                    doc,
                    &["tools", t, "control"],
                    Some(json!({ "require": "any" })),
                ),
            );
        }
        if spec.get("on_violation").and_then(Value::as_str) == Some("deny") {
            add(
                format!("{t}: on_violation confirm"),
                set(doc, &["tools", t, "on_violation"], Some(json!("confirm"))),
            );
        }
        let args = spec
            .get("args")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        for (arg, rule) in args {
            let a = arg.as_str();
            let Some(rule) = rule.as_object() else {
                continue;
            };
            for key in [
                "require",
                "forbid_tags",
                "readers_must_include",
                "recipient",
                "public",
            ] {
                if rule.contains_key(key) {
                    add(
                        format!("{t}.{a}: {key} removed"),
                        set(doc, &["tools", t, "args", a, key], None),
                    );
                }
            }
            // The opt-outs a draft could write over a rule the base has (or the loader gives it).
            let checked = base
                .tool(t)
                .and_then(|tool| tool.args.get(a))
                .is_some_and(|spec| {
                    spec.readers_must_include.is_some() || spec.public == Some(true)
                });
            if checked && !rule.contains_key("readers") {
                let mut r = rule.clone();
                r.remove("readers_must_include");
                r.remove("public");
                r.insert("readers".into(), json!("any"));
                r.insert("reason".into(), json!("the drafter says so"));
                add(
                    format!("{t}.{a}: readers any"),
                    set(doc, &["tools", t, "args", a], Some(Value::Object(r))),
                );
            }
            if matches!(a, "to" | "cc" | "bcc" | "recipient") {
                add(
                    format!("{t}.{a}: recipient false"),
                    set(
                        doc,
                        &["tools", t, "args", a, "recipient"],
                        Some(json!(false)),
                    ),
                );
            }
            if let Some(f) = rule.get("forbid_tags").and_then(Value::as_object)
                && f.get("on_violation").and_then(Value::as_str) == Some("deny")
            {
                add(
                    format!("{t}.{a}: forbid_tags decided by confirm"),
                    set(
                        doc,
                        &["tools", t, "args", a, "forbid_tags", "on_violation"],
                        Some(json!("confirm")),
                    ),
                );
            }
            if rule.contains_key("require") {
                add(
                    format!("{t}.{a}: require any"),
                    set(doc, &["tools", t, "args", a, "require"], Some(json!("any"))),
                );
            }
        }
        if let Some(r) = spec.get("returns").and_then(Value::as_object) {
            let rp = |k: &'static str| ["tools", t, "returns", k];
            add(
                format!("{t}: returns removed"),
                set(doc, &["tools", t, "returns"], None),
            );
            add(
                format!("{t}: returns trusted"),
                set(doc, &rp("integrity"), Some(json!("trusted"))),
            );
            add(
                format!("{t}: readers public"),
                set(doc, &rp("readers"), Some(json!("public"))),
            );
            for key in [
                "tags",
                "tags_when",
                "scan",
                "fields",
                "also",
                "structure_readers",
            ] {
                if r.contains_key(key) {
                    add(
                        format!("{t}: returns.{key} removed"),
                        set(doc, &rp(key), None),
                    );
                }
            }
            add(
                format!("{t}: returns.also mallory"),
                set(doc, &rp("also"), Some(json!(["mallory@evil.test"]))),
            );
            if let Some(fields) = r.get("fields").and_then(Value::as_object) {
                for (f, fs) in fields {
                    if fs.get("integrity").and_then(Value::as_str) != Some("trusted") {
                        add(
                            format!("{t}: field {f} trusted"),
                            set(
                                doc,
                                &["tools", t, "returns", "fields", f.as_str(), "integrity"],
                                Some(json!("trusted")),
                            ),
                        );
                    }
                }
            }
        }
    }
    out
}

/// Changes that are not weakenings, each with why; docs/policy.md ("What verification cannot see")
/// lists them too.
const BY_DESIGN: [(&str, &str); 1] = [(
    "limits.max_tool_calls: 1",
    "a tighter budget; the battery runs without the draft's limits, so it no longer ends the attacks",
)];

/// Changes that leave a rule as strict as the base's although the loaded policy differs, by the end of
/// the mutation's name, with why. Each must be seen, so the list stays true.
const NOT_WEAKER: [(&str, &str); 5] = [
    (
        ".to: require removed",
        "a recipient without `require` gets `require: trusted`, stricter than `[trusted, verified(Recipient)]`",
    ),
    (
        ".to: recipient removed",
        "`to` of a tool that sends is a recipient by its name",
    ),
    (
        ".subject: readers_must_include removed",
        "the loader's readers check is `readers_must_include: recipients`, which `to` means too",
    ),
    (
        ".body: readers_must_include removed",
        "the loader's readers check is `readers_must_include: recipients`, which `to` means too",
    ),
    (
        "fetch_url.url: forbid_tags removed",
        "`public: true` lets no tag in, decided by the tool's own `deny`",
    ),
];

/// Whether `m`, loaded, has the base's rules exactly: tools (with the loader's defaults filled in),
/// verifiers, tags, user and mode.
fn same_rules(base: &Policy, m: &Map<String, Value>, dir: &Path) -> bool {
    let text = serde_json::to_string(&Value::Object(m.clone()))
        .unwrap_or_else(|e| panic!("a JSON value serialises: {e}"));
    let Ok(d) = Policy::from_yaml_str(&text, "m.yaml", dir) else {
        return false;
    };
    let (b, d) = (base.file(), d.file());
    b.tools == d.tools
        && b.verifiers == d.verifiers
        && b.tags == d.tags
        && b.user == d.user
        && b.mode == d.mode
}

/// The failure titles verification reports for `draft` against `base`, and whether what would be
/// written is the base itself (the weakening was replaced by the base's, not refused).
fn failures(
    base: &Policy,
    base_text: &str,
    dir: &Path,
    draft: &Map<String, Value>,
) -> (BTreeSet<String>, bool) {
    // A constitution with no exception: every weakening should be refused.
    let c = Constitution::parse("My assistant reads my mail and does what I ask.\n")
        .unwrap_or_else(|e| panic!("the fixed constitution parses: {e}"));
    let base_map = mapping(base_text).unwrap_or_else(|e| panic!("the base is a mapping: {e}"));
    let roles = roles::roles(base, &BTreeMap::new());
    let input = Input {
        constitution: "",
        constitution_name: "constitution.md",
        base,
        base_text,
        lock: None,
        provider: "none",
        out_dir: dir,
        out_name: "drafted.yaml",
        max_repairs: 0,
        engine: &Engine::InProcess,
    };
    let answer = PolicyAnswer {
        policy_yaml: serde_json::to_string(&Value::Object(draft.clone()))
            .unwrap_or_else(|e| panic!("a JSON value serialises: {e}")),
        citations: Vec::new(),
    };
    let v = verify(&input, &c, &base_map, &roles, &[], &answer);
    let replaced = v.doc.as_ref().is_some_and(|(d, _)| *d == base_map);
    (v.failures.into_iter().map(|f| f.title).collect(), replaced)
}

#[test]
#[allow(
    clippy::panic,
    reason = "a test fails by panicking, with a message saying what went wrong"
)]
fn every_weakening_of_a_base_policy_is_refused_or_listed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let mut generated = 0;
    let mut unrefused = Vec::new();
    let mut restored = Vec::new();
    let mut not_weaker = Vec::new();
    let mut seen = BTreeSet::new();
    let mut by_design = Vec::new();
    for file in ["default.yaml", "strict.yaml"] {
        let text =
            std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let base =
            Policy::from_yaml_str(&text, file, &root).unwrap_or_else(|e| panic!("{file}: {e}"));
        let doc = mapping(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let (baseline, _) = failures(&base, &text, &root, &doc);
        for (name, m) in mutations(&doc, &base) {
            generated += 1;
            if let Some((_, why)) = BY_DESIGN.iter().find(|(n, _)| *n == name) {
                by_design.push(format!("{file}: {name} ({why})"));
                continue;
            }
            if same_rules(&base, &m, &root) {
                // The loader's defaults give back the base's rule (a recipient's `require: trusted`, a
                // sink's readers check): the written policy decides as the base does.
                restored.push(format!("{file}: {name}"));
                continue;
            }
            let (got, replaced) = failures(&base, &text, &root, &m);
            if got.is_subset(&baseline) && !replaced {
                match NOT_WEAKER.iter().position(|(end, _)| name.ends_with(end)) {
                    Some(i) => {
                        seen.insert(i);
                        not_weaker.push(format!("{file}: {name}"));
                    }
                    None => unrefused.push(format!("{file}: {name}")),
                }
            }
        }
    }
    eprintln!(
        "mutation test: {generated} weakenings generated, {} refused, {} given back by the loader's defaults, {} as strict as the base's, {} allowed by design, {} not refused:\n  restored: {}\n  as strict: {}\n  by design: {}\n  not refused: {}",
        generated - unrefused.len() - restored.len() - not_weaker.len() - by_design.len(),
        restored.len(),
        not_weaker.len(),
        by_design.len(),
        unrefused.len(),
        restored.join(", "),
        not_weaker.join(", "),
        by_design.join(", "),
        unrefused.join("\n  ")
    );
    assert!(generated > 50, "{generated}");
    assert!(restored.len() < generated / 4, "{restored:?}");
    assert_eq!(
        seen.len(),
        NOT_WEAKER.len(),
        "an entry of NOT_WEAKER is no longer seen: {seen:?}"
    );
    assert_eq!(by_design.len(), 2, "{by_design:?}");
    assert!(
        unrefused.is_empty(),
        "not refused:\n  {}",
        unrefused.join("\n  ")
    );
}

// Issue #51: a draft need not copy what the base keeps: the base's servers are put in before the draft is
// first loaded, so a draft naming an MCP tool without them still loads.
#[test]
#[allow(
    clippy::panic,
    reason = "a test fails by panicking, with a message saying what went wrong"
)]
fn a_draft_need_not_copy_the_bases_servers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let base_text = "version: 1\nuser: me@example.com\nservers:\n  notes: { command: notes-server }\ntools:\n  post:\n    source: mcp.notes.post\n    effect: send\n    args:\n      text: { public: true }\n";
    let base =
        Policy::from_yaml_str(base_text, "base.yaml", root).unwrap_or_else(|e| panic!("{e}"));
    let mut draft = mapping(base_text).unwrap_or_else(|e| panic!("{e}"));
    draft.remove("servers");
    // Without the merge the draft alone does not load: the test can fail.
    let alone = serde_json::to_string(&Value::Object(draft.clone())).unwrap_or_default();
    assert!(Policy::from_yaml_str(&alone, "d.yaml", root).is_err());
    let (got, _) = failures(&base, base_text, root, &draft);
    assert!(
        !got.contains("the draft does not pass `policy check`"),
        "{got:?}"
    );
}
