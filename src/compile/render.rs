//! The text `policy compile` writes: the drafted policy as YAML with a comment per rule citing the
//! constitution lines it comes from, the base policy in the same layout (so the diff between them shows
//! rules, not formatting), the scenarios file, and the unified diff.
//!
//! The layout is fixed: top-level sections as blocks, one block per tool, one line per argument
//! requirement, verifier, provider or server, in flow style. Strings are quoted unless plainly safe, so
//! nothing the drafter wrote can be read back as another key, an alias or a comment.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::constitution::Constitution;
use crate::text::one_line;

/// Rule path (`tools.pay.args.iban`) to the constitution lines cited for it.
pub type Citations = BTreeMap<String, Vec<usize>>;

/// Top-level keys in the order written; others follow in the draft's order.
const ORDER: [&str; 12] = [
    "version",
    "mode",
    "user",
    "tags",
    "verifiers",
    "tools",
    "planner",
    "limits",
    "providers",
    "servers",
    "builtins",
    "mcp_lock",
];

/// Sections whose entries are written one per line.
const ENTRY_SECTIONS: [&str; 3] = ["verifiers", "providers", "servers"];

/// A key as YAML: plain when it is an identifier, quoted otherwise.
fn key(k: &str) -> String {
    if plain(k) {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

fn plain(s: &str) -> bool {
    let mut chars = s.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let reserved = ["true", "false", "null", "yes", "no", "on", "off", "y", "n"]
        .contains(&s.to_ascii_lowercase().as_str());
    first_ok
        && !reserved
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.@()-/".contains(c))
}

/// A value in flow style: YAML that reads back as exactly this JSON value.
pub fn flow(v: &Value) -> String {
    match v {
        Value::String(s) if plain(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(flow).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Object(m) => format!(
            "{{ {} }}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", key(k), flow(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// The comment lines citing `path`'s constitution lines, at `indent`.
fn cite(out: &mut String, indent: &str, path: &str, cites: &Citations, c: Option<&Constitution>) {
    let (Some(lines), Some(c)) = (cites.get(path), c) else {
        return;
    };
    for n in lines {
        let text = c.line(*n).map(|l| one_line(l, 100)).unwrap_or_default();
        let _ = writeln!(out, "{indent}# constitution line {n}: {text}");
    }
}

/// The policy mapping `doc` as YAML text, with `header` comment lines first and, when `c` is given, the
/// citations of `cites` above the rules they cite. Tools without a citation are marked as unchanged from
/// `base` or as uncited.
pub fn policy_yaml(
    doc: &Map<String, Value>,
    header: &[String],
    cites: &Citations,
    c: Option<&Constitution>,
    base: Option<&Map<String, Value>>,
) -> String {
    let mut out = String::new();
    for h in header {
        let _ = writeln!(out, "# {}", one_line(h, 200));
    }
    let mut keys: Vec<&String> = ORDER
        .iter()
        .filter_map(|k| doc.get_key_value(*k).map(|(k, _)| k))
        .collect();
    keys.extend(doc.keys().filter(|k| !ORDER.contains(&k.as_str())));
    for k in keys {
        let v = &doc[k];
        cite(&mut out, "", k, cites, c);
        match v {
            Value::Object(m) if k == "tools" && !m.is_empty() => {
                let _ = writeln!(out, "tools:");
                let base_tools = base.and_then(|b| b.get("tools")).and_then(Value::as_object);
                for (name, spec) in m {
                    tool(&mut out, name, spec, cites, c, base_tools);
                }
            }
            Value::Object(m) if !m.is_empty() => {
                let _ = writeln!(out, "{}:", key(k));
                for (name, entry) in m {
                    if ENTRY_SECTIONS.contains(&k.as_str()) {
                        cite(&mut out, "  ", &format!("{k}.{name}"), cites, c);
                    }
                    let _ = writeln!(out, "  {}: {}", key(name), flow(entry));
                }
            }
            _ => {
                let _ = writeln!(out, "{}: {}", key(k), flow(v));
            }
        }
    }
    out
}

fn tool(
    out: &mut String,
    name: &str,
    spec: &Value,
    cites: &Citations,
    c: Option<&Constitution>,
    base_tools: Option<&Map<String, Value>>,
) {
    let path = format!("tools.{name}");
    if c.is_some() && !cites.contains_key(&path) {
        let cited_below = cites.keys().any(|p| p.starts_with(&format!("{path}.")));
        if base_tools.and_then(|b| b.get(name)) == Some(spec) {
            let _ = writeln!(out, "  # unchanged from the base policy");
        } else if !cited_below {
            let _ = writeln!(out, "  # no constitution line cited");
        }
    }
    cite(out, "  ", &path, cites, c);
    let Some(fields) = spec.as_object() else {
        let _ = writeln!(out, "  {}: {}", key(name), flow(spec));
        return;
    };
    let _ = writeln!(out, "  {}:", key(name));
    for (field, value) in fields {
        cite(out, "    ", &format!("{path}.{field}"), cites, c);
        match value {
            Value::Object(args) if field == "args" && !args.is_empty() => {
                let _ = writeln!(out, "    args:");
                for (arg, req) in args {
                    cite(out, "      ", &format!("{path}.args.{arg}"), cites, c);
                    let _ = writeln!(out, "      {}: {}", key(arg), flow(req));
                }
            }
            _ => {
                let _ = writeln!(out, "    {}: {}", key(field), flow(value));
            }
        }
    }
}

/// A unified diff of `base` (named `base_name`) against `draft` (named `draft_name`); empty when equal.
pub fn diff(base: &str, draft: &str, base_name: &str, draft_name: &str) -> String {
    similar::TextDiff::from_lines(base, draft)
        .unified_diff()
        .context_radius(3)
        .header(base_name, draft_name)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flow_reads_back_as_the_same_value() {
        for v in [
            json!({"require": ["trusted", "verified(Recipient)"], "forbid_tags": "*"}),
            json!({"allow": ["*@example.com"], "mints": "Recipient", "n": 3.5, "t": true}),
            json!(["yes", "null", "a: b", "#x", "&a", "line\nbreak", "", "-1"]),
            json!({"key with space": {}, "k": []}),
        ] {
            let text = format!("v: {}\n", flow(&v));
            let back: Value = serde_saphyr::from_str(&text).unwrap();
            assert_eq!(back["v"], v, "{text}");
        }
    }

    #[test]
    fn citations_are_comments_that_stay_one_line() {
        let c = Constitution::parse("Pay only my landlord.\nevil\nline: x\n").unwrap();
        let doc = json!({"version": 1, "tools": {"pay": {"effect": "send", "args": {"iban": {"require": "trusted"}}}}});
        let mut cites = Citations::new();
        cites.insert("tools.pay.args.iban".into(), vec![1, 3]);
        let text = policy_yaml(
            doc.as_object().unwrap(),
            &["head\nline".into()],
            &cites,
            Some(&c),
            None,
        );
        assert!(text.contains("      # constitution line 1: Pay only my landlord.\n      # constitution line 3: line: x\n      iban: { require: trusted }\n"), "{text}");
        assert!(text.starts_with("# head line\n"), "{text}");
        let back: Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(back, doc);
    }
}
