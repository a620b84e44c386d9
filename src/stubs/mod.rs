//! `zamburak stubs`: what a planner is given to write a plan for a policy. One typed Python stub per tool
//! the policy declares and per verifier, each argument's requirement in words, the Python subset, how
//! `query_llm` shapes work and example plans; as a `.pyi` module, as Markdown for a system prompt, or as
//! JSON for programs.
//!
//! Everything is read from the sources `run` and `lint` read, never restated:
//! * the callable names and each tool's arguments in positional order: [`Policy::signatures`], what the
//!   structural check (`plan::structure`) holds every call to;
//! * argument and result types: the built-in adapters' schemas (`tools::records`), the MCP tools' pinned
//!   `inputSchema`/`outputSchema` in the policy's lock (never a live server), read as `mcp::content` reads
//!   a result (the `{"result": X}` wrapper unwrapped);
//! * requirements: the normalised policy, through [`words::rule_words`];
//! * the subset: the catalogue (`plan::catalogue`) and [`subset`]'s table of what is refused, which a test
//!   runs through `plan::subset`.
//!
//! Output is deterministic: tools and verifiers sorted by name, no time, no absolute path.

pub mod json;
pub mod markdown;
pub mod pyi;
pub mod subset;
pub mod types;
pub mod words;

use serde_json::{Value, json};

use crate::mcp::content::wraps_result;
use crate::mcp::lock::LockFile;
use crate::policy::Policy;
use crate::policy::builtins::VerifierSpec;
use crate::policy::model::{Effect, Requirement, ToolSource};
use crate::tools::records;
use types::{Converter, Position, Py, Registry};

/// One argument of a tool.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub ty: Py,
    /// The tool's own description of it (an MCP server's words), on one line.
    pub doc: Option<String>,
    /// What the policy requires of it, in words ([`words::arg_words`]).
    pub requires: String,
}

/// What a tool is served by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Served {
    Builtin,
    Mcp,
    /// The quarantined LLM of a provider (`query_llm`).
    Llm,
    /// No source: only `policy test` can call it; `run` refuses it.
    Nothing,
}

/// One tool, as a stub.
#[derive(Clone, Debug)]
pub struct ToolStub {
    pub name: String,
    /// The policy's `source`, as written (`builtin.mail.send`, `mcp.bank.send_money`); empty when none.
    pub source: String,
    pub served: Served,
    pub effect: Effect,
    /// The MCP server's description of the tool, on one line.
    pub description: Option<String>,
    pub params: Vec<Param>,
    pub returns: Py,
    /// The schema of the result's description or title, on one line.
    pub returns_doc: Option<String>,
    pub input_schema: Value,
    pub output_schema: Value,
    /// [`words::effect_words`], [`words::control_words`], [`words::returns_words`].
    pub effect_words: String,
    pub conditions: String,
    pub labels: String,
    /// Why the types are unknown, when they are.
    pub note: Option<String>,
}

/// One verifier, as a stub.
#[derive(Clone, Debug)]
pub struct VerifierStub {
    pub name: String,
    /// The policy's `kind` (`email_allowlist`, …).
    pub kind: &'static str,
    pub mints: String,
    /// The type of the value it checks and returns: `str`, or `int | float` for a number range.
    pub number: bool,
    /// What it accepts, in words.
    pub accepts: String,
    /// The tool arguments whose `require` names its kind (`send_money.recipient`).
    pub accepted_by: Vec<String>,
}

/// The catalogue of one policy: what every format renders.
#[derive(Debug)]
pub struct Catalogue {
    pub tools: Vec<ToolStub>,
    pub verifiers: Vec<VerifierStub>,
    /// The records and aliases the tools' types name.
    pub registry: Registry,
    /// The deepest shape a `query_llm` schema may nest (`tools::llm`).
    pub max_shape_depth: usize,
}

impl Catalogue {
    /// The tools served by an LLM provider.
    pub fn llm_tools(&self) -> impl Iterator<Item = &ToolStub> {
        self.tools.iter().filter(|t| t.served == Served::Llm)
    }
}

/// The MCP definition of `tool` on `server` in the lock, if pinned.
fn locked<'l>(lock: Option<&'l LockFile>, server: &str, tool: &str) -> Option<&'l Value> {
    Some(&lock?.servers.get(server)?.tools.get(tool)?.definition)
}

/// Builds the catalogue of `policy`. `lock` is its MCP lock (`mcp::lock::check_offline`), needed for the
/// types of MCP tools: without it they are `Any`, with a note saying so.
///
/// ```
/// use zamburak::policy::Policy;
/// let p = Policy::bundled_default().unwrap();
/// let c = zamburak::stubs::catalogue(&p, None);
/// let send = c.tools.iter().find(|t| t.name == "send_email").unwrap();
/// let names: Vec<&str> = send.params.iter().map(|p| p.name.as_str()).collect();
/// assert_eq!(names, ["to", "subject", "body"]);
/// assert_eq!(send.params[0].ty.render(zamburak::stubs::types::Position::Input), "str | Sequence[str]");
/// ```
pub fn catalogue(policy: &Policy, lock: Option<&LockFile>) -> Catalogue {
    let sigs = policy.signatures();
    let reserved = sigs
        .tools
        .keys()
        .cloned()
        .chain(sigs.verifiers.iter().cloned())
        .chain(
            crate::plan::catalogue::BUILTINS
                .iter()
                .map(|b| b.name.to_string()),
        )
        .chain(
            crate::plan::subset::FORBIDDEN_BUILTINS
                .iter()
                .map(|b| b.to_string()),
        )
        .chain(
            crate::plan::catalogue::MODULES
                .iter()
                .map(|m| m.to_string()),
        );
    let mut registry = Registry::new(reserved);
    let mut tools = Vec::new();
    for (name, arg_names) in &sigs.tools {
        let Some(spec) = policy.tool(name) else {
            continue;
        };
        let hint = types::camel(name);
        let (served, input, output, description, mut note) = match &spec.source {
            Some(ToolSource::Builtin(s)) => (
                Served::Builtin,
                records::input_schema(*s),
                records::output_schema(*s),
                None,
                None,
            ),
            Some(ToolSource::Llm(_)) => (
                Served::Llm,
                records::llm_input_schema(),
                json!({ "description": "the answer, in the shape `schema` asks for" }),
                None,
                None,
            ),
            Some(ToolSource::Mcp(m)) => match locked(lock, &m.server, &m.tool) {
                Some(def) => (
                    Served::Mcp,
                    def.get("inputSchema").cloned().unwrap_or(json!({})),
                    def.get("outputSchema").cloned().unwrap_or(Value::Null),
                    def.get("description")
                        .and_then(Value::as_str)
                        .map(|t| crate::text::one_line(t, types::MAX_DOC))
                        .filter(|d| !d.is_empty()),
                    None,
                ),
                None => (
                    Served::Mcp,
                    json!({}),
                    Value::Null,
                    None,
                    Some(
                        "its server's lock has no definition of it, so its types are unknown"
                            .into(),
                    ),
                ),
            },
            None => (
                Served::Nothing,
                json!({}),
                Value::Null,
                None,
                Some("it has no `source`: only `policy test` can call it, `run` refuses it".into()),
            ),
        };
        let mut params = Vec::new();
        for arg in arg_names {
            let mut conv = Converter::new(&mut registry, Position::Input);
            let ty = match served {
                // `data` takes any value the plan has.
                Served::Llm if arg == "data" => Py::Object,
                _ => conv
                    .convert_property(&input, arg, &format!("{hint}{}", types::camel(arg)))
                    .unwrap_or(Py::Any),
            };
            let doc = input
                .get("properties")
                .and_then(|p| p.get(arg))
                .and_then(types::doc_of);
            params.push(Param {
                name: arg.clone(),
                ty,
                doc,
                requires: words::arg_words(policy, name, arg),
            });
        }
        let mut conv = Converter::new(&mut registry, Position::Output);
        let (returns, returns_doc) = match served {
            Served::Llm | Served::Nothing => (Py::Any, None),
            Served::Mcp if output.is_null() => {
                if note.is_none() {
                    note = Some(
                        "its server declares no output schema: its result is usually text, but may be any value"
                            .into(),
                    );
                }
                (Py::Any, None)
            }
            Served::Mcp if wraps_result(&output) => (
                conv.convert_property(&output, "result", &format!("{hint}Result"))
                    .unwrap_or(Py::Any),
                output
                    .get("properties")
                    .and_then(|p| p.get("result"))
                    .and_then(|r| r.get("description"))
                    .and_then(Value::as_str)
                    .map(|t| crate::text::one_line(t, types::MAX_DOC))
                    .filter(|d| !d.is_empty()),
            ),
            Served::Builtin | Served::Mcp => {
                (conv.convert_root(&output, &format!("{hint}Result")), None)
            }
        };
        tools.push(ToolStub {
            name: name.clone(),
            source: spec
                .source
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            served,
            effect: spec.effect,
            description,
            params,
            returns,
            returns_doc,
            input_schema: input,
            output_schema: output,
            effect_words: words::effect_words(policy, name),
            conditions: words::control_words(policy, name),
            labels: words::returns_words(policy, name),
            note,
        });
    }
    let renames = registry.merge_duplicates();
    for t in &mut tools {
        t.returns.rename(&renames);
        for p in &mut t.params {
            p.ty.rename(&renames);
        }
    }
    let mut verifiers: Vec<VerifierStub> = policy
        .verifiers()
        .map(|(name, spec)| verifier(policy, name, spec))
        .collect();
    verifiers.sort_by(|a, b| a.name.cmp(&b.name));
    Catalogue {
        tools,
        verifiers,
        registry,
        max_shape_depth: crate::tools::llm::MAX_SHAPE_DEPTH,
    }
}

/// Most values of a `one_of` verifier listed.
const MAX_VALUES: usize = 20;

/// "`a`, `b` or `c`", at most [`MAX_VALUES`] of them.
fn ticked(items: &[String]) -> String {
    let mut shown: Vec<String> = items
        .iter()
        .take(MAX_VALUES)
        .map(|s| format!("`{}`", crate::text::one_line(s, types::MAX_DOC)))
        .collect();
    if items.len() > MAX_VALUES {
        shown.push(format!("… ({} in all)", items.len()));
    }
    match shown.split_last() {
        Some((last, init)) if !init.is_empty() => format!("{} or {last}", init.join(", ")),
        _ => shown.join(""),
    }
}

fn verifier(policy: &Policy, name: &str, spec: &VerifierSpec) -> VerifierStub {
    let (kind, number, accepts) = match spec {
        VerifierSpec::EmailAllowlist { allow, .. } => (
            "email_allowlist",
            false,
            format!("a single e-mail address matching {}", ticked(allow)),
        ),
        VerifierSpec::UrlAllowlist {
            schemes,
            hosts,
            paths,
            ..
        } => (
            "url_allowlist",
            false,
            format!(
                "a URL with scheme {} and host {}{}",
                ticked(schemes),
                ticked(hosts),
                match paths {
                    Some(p) => format!(", at or below one of the paths {}", ticked(p)),
                    None => String::new(),
                }
            ),
        ),
        VerifierSpec::NumberRange { min, max, .. } => (
            "number_range",
            true,
            format!("a number (int or float) from {min} to {max}"),
        ),
        VerifierSpec::OneOf { values, .. } => (
            "one_of",
            false,
            format!("a string equal to {}", ticked(values)),
        ),
    };
    let mints = spec.mints().to_string();
    let mut accepted_by = Vec::new();
    let mut tools: Vec<_> = policy.tools().collect();
    tools.sort_by_key(|(n, _)| *n);
    for (tool, t) in tools {
        for (arg, a) in t.args.iter() {
            let names_kind = a.require.as_ref().is_some_and(|r| {
                r.0.iter()
                    .any(|req| matches!(req, Requirement::Verified(k) if *k == mints))
            });
            if names_kind {
                accepted_by.push(format!("{tool}.{arg}"));
            }
        }
    }
    VerifierStub {
        name: name.to_string(),
        kind,
        mints,
        number,
        accepts,
        accepted_by,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::verify::check;

    /// A verifier's stub takes what `tools::verify` accepts: a string, or a number for a number range.
    #[test]
    fn verifier_types_are_what_the_verifiers_accept() {
        let specs = [
            VerifierSpec::EmailAllowlist {
                allow: vec!["*@example.com".into()],
                mints: "K".into(),
            },
            VerifierSpec::UrlAllowlist {
                schemes: vec!["https".into()],
                hosts: vec!["example.com".into()],
                paths: None,
                mints: "K".into(),
            },
            VerifierSpec::NumberRange {
                min: 0.0,
                max: 10.0,
                mints: "K".into(),
            },
            VerifierSpec::OneOf {
                values: vec!["5".into()],
                mints: "K".into(),
            },
        ];
        let policy = Policy::bundled_default().unwrap();
        for spec in specs {
            let stub = verifier(&policy, "v", &spec);
            let good = match &spec {
                VerifierSpec::EmailAllowlist { .. } => json!("a@example.com"),
                VerifierSpec::UrlAllowlist { .. } => json!("https://example.com/"),
                VerifierSpec::NumberRange { .. } => json!(5),
                VerifierSpec::OneOf { .. } => json!("5"),
            };
            assert!(check(&spec, &good).is_ok(), "{}", stub.kind);
            if stub.number {
                assert!(check(&spec, &json!(5.5)).is_ok());
                assert!(check(&spec, &json!("5")).is_err(), "{}", stub.kind);
            } else {
                assert!(check(&spec, &json!(5)).is_err(), "{}", stub.kind);
            }
        }
    }

    /// The review cannot drift from the stubs: every word of a server's that the stubs print (what
    /// `describe_tools` answers) is among the texts `mcp list`, `mcp lock` and `mcp diff` show of the tool
    /// (`mcp::review::texts`). The schemas are generated with every text slot (values and names, in every
    /// keyword, at every depth) holding its own marker `Mk<n>x`; a marker in the stubs must be in the review.
    mod review_covers_the_stubs {
        use super::*;
        use crate::mcp::lock::{LOCK_VERSION, LockedServer, LockedTool};
        use proptest::prelude::*;
        use serde_json::Map;

        /// A slot for a server's word; numbered into a marker afterwards.
        const W: &str = "\u{0}";

        fn obj(pairs: Vec<(String, Value)>) -> Value {
            Value::Object(pairs.into_iter().collect::<Map<String, Value>>())
        }

        fn schema() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(json!({"type": "string"})),
                Just(json!({"type": "integer", "description": W})),
                Just(json!({"type": "string", "enum": [W, W, null, 3]})),
                Just(json!({"const": W, "title": W})),
                Just(json!({"type": "string", "title": W, "default": W, "examples": [W]})),
                Just(json!({"$ref": "#/$defs/MkD0x"})),
                Just(json!({"$ref": "#/definitions/MkD1x", "description": W})),
                Just(
                    json!({"type": "string", "format": W, "pattern": W, "x-note": W, "$comment": W})
                ),
                Just(json!(true)),
                Just(json!({})),
            ];
            leaf.prop_recursive(5, 64, 4, |inner| {
                prop_oneof![
                    (prop::collection::vec(inner.clone(), 1..4), any::<bool>()).prop_map(
                        |(props, titled)| {
                            let props = props.into_iter().map(|p| (W.to_string(), p)).collect();
                            let mut pairs = vec![
                                ("type".to_string(), json!("object")),
                                ("properties".to_string(), Value::Array(props_slots(props))),
                                ("description".to_string(), json!(W)),
                            ];
                            if titled {
                                pairs.push(("title".to_string(), json!(W)));
                            }
                            obj(pairs)
                        }
                    ),
                    inner
                        .clone()
                        .prop_map(|i| json!({"type": "array", "items": i, "description": W})),
                    prop::collection::vec(inner.clone(), 1..3).prop_map(|a| json!({"anyOf": a})),
                    prop::collection::vec(inner.clone(), 1..3)
                        .prop_map(|a| json!({"oneOf": a, "title": W})),
                    inner
                        .clone()
                        .prop_map(|i| json!({"allOf": [i], "description": W})),
                    inner.clone().prop_map(
                        |i| json!({"type": "object", "additionalProperties": i, "title": W})
                    ),
                    inner
                        .clone()
                        .prop_map(|i| json!({"type": ["object", "null"],
                        "properties": [[W, i]], "nullable": true})),
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({
                        "properties": [[W, a]], "$defs": {"MkD0x": b}, "required": [W]})),
                    (inner.clone(), inner).prop_map(|(a, b)| json!({"type": "object",
                        "properties": [[W, a]], "definitions": {"MkD1x": b}})),
                ]
            })
        }

        /// `properties` are generated as a list of `[name, schema]` pairs (a map could not hold one slot
        /// name twice); [`number`] turns them into a map of numbered names.
        fn props_slots(props: Vec<(String, Value)>) -> Vec<Value> {
            props.into_iter().map(|(k, v)| json!([k, v])).collect()
        }

        /// Every slot made a distinct marker, `properties` lists made maps.
        fn number(v: &Value, n: &mut usize) -> Value {
            match v {
                Value::String(s) if s == W => {
                    *n += 1;
                    Value::String(format!("Mk{n}x"))
                }
                Value::Array(items) => Value::Array(items.iter().map(|i| number(i, n)).collect()),
                Value::Object(map) => {
                    let mut out = Map::new();
                    for (k, v) in map {
                        if k == "properties"
                            && let Value::Array(pairs) = v
                        {
                            let mut props = Map::new();
                            for pair in pairs {
                                let schema = number(&pair[1], n);
                                *n += 1;
                                props.insert(format!("Mk{n}x"), schema);
                            }
                            out.insert(k.clone(), Value::Object(props));
                        } else {
                            let v = number(v, n);
                            out.insert(k.clone(), v);
                        }
                    }
                    Value::Object(out)
                }
                other => other.clone(),
            }
        }

        fn markers(text: &str) -> std::collections::BTreeSet<String> {
            let re = regex::Regex::new(r"Mk(?:D\d|\d+)x").unwrap();
            re.find_iter(text).map(|m| m.as_str().to_string()).collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
            #[test]
            fn every_server_word_in_the_stubs_is_reviewed(
                args in prop::collection::vec(schema(), 1..4),
                defs in (schema(), schema()),
                output in schema(),
                wrapped in any::<bool>(),
            ) {
                let mut n = 0;
                let args = Value::Array(args.into_iter().map(|a| json!([W, a])).collect());
                let input = number(&json!({"type": "object", "description": W, "title": W,
                    "properties": args, "$defs": {"MkD0x": defs.0}, "definitions": {"MkD1x": defs.1}}), &mut n);
                let output = number(&output, &mut n);
                let output = if wrapped {
                    json!({"type": "object", "properties": {"result": output}, "required": ["result"]})
                } else {
                    output
                };
                let tool = json!({"name": "tool", "title": "Mk0x", "description": "the tool Mk00x",
                    "inputSchema": input, "outputSchema": output});
                let names: Vec<String> = input["properties"].as_object().unwrap().keys().cloned().collect();
                let mut yaml = String::from("version: 1\nservers:\n  s:\n    command: \"true\"\ntools:\n  t:\n    source: mcp.s.tool\n    effect: read\n    args:\n");
                for a in &names {
                    yaml.push_str(&format!("      {a}: {{}}\n"));
                }
                let policy = Policy::from_yaml_str(&yaml, "p.yaml", std::path::Path::new(".")).unwrap();
                let definition = crate::mcp::pin::pinned(&tool);
                let lock = LockFile {
                    version: LOCK_VERSION,
                    servers: [("s".to_string(), LockedServer {
                        command: "true".into(),
                        args: vec![],
                        server: crate::mcp::client::ServerIdentity {
                            name: "s".into(), version: "1".into(), protocol_version: "x".into() },
                        tools: [("tool".to_string(), LockedTool {
                            sha256: crate::mcp::pin::tool_hash(&definition), definition: definition.clone() })]
                            .into_iter().collect(),
                    })].into_iter().collect(),
                };
                let c = catalogue(&policy, Some(&lock));
                let stubs = pyi::render(&c);
                let reviewed: std::collections::BTreeSet<String> = crate::mcp::review::texts(&definition)
                    .iter()
                    .flat_map(|t| markers(&t.text))
                    .collect();
                let shown = markers(&stubs);
                let missing: Vec<&String> = shown.difference(&reviewed).collect();
                prop_assert!(missing.is_empty(), "not reviewed: {missing:?}\n{stubs}\n{definition:#}");
                // The test means something: the stubs do show server words.
                prop_assert!(shown.contains("Mk00x"), "{stubs}");
            }
        }
    }

    #[test]
    fn a_policy_without_its_lock_gets_any_with_a_note() {
        let path = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/bench/agentdojo/policies/banking.yaml"
        ));
        let policy = Policy::load(path).unwrap();
        let c = catalogue(&policy, None);
        let send = c.tools.iter().find(|t| t.name == "send_money").unwrap();
        assert_eq!(send.returns, Py::Any);
        assert!(send.params.iter().all(|p| p.ty == Py::Any));
        assert!(send.note.as_deref().unwrap().contains("lock"));
        let (lock, _) = crate::mcp::lock::check_offline(&policy, Some(path))
            .unwrap()
            .unwrap();
        let c = catalogue(&policy, Some(&lock));
        let send = c.tools.iter().find(|t| t.name == "send_money").unwrap();
        assert_eq!(send.params[1].ty, Py::Float);
        assert!(send.note.is_none());
    }
}
