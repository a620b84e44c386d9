//! The catalogue as one JSON document, for programs: the same tools, types, requirements, subset and
//! examples as the other formats, each type both as Python writes it and as the JSON Schema it came from.

use serde_json::{Value, json};

use super::types::{Def, Position};
use super::{Catalogue, Served, markdown, pyi, subset};
use crate::policy::Policy;

/// The version of this document's layout.
pub const FORMAT: u64 = 1;

fn served(s: Served) -> &'static str {
    match s {
        Served::Builtin => "builtin",
        Served::Mcp => "mcp",
        Served::Llm => "llm",
        Served::Nothing => "none",
    }
}

/// The catalogue as JSON.
pub fn render(c: &Catalogue, policy: &Policy) -> Value {
    let tools: Vec<Value> = c
        .tools
        .iter()
        .map(|t| {
            let params: Vec<Value> = t
                .params
                .iter()
                .map(|p| {
                    json!({
                        "name": p.name,
                        "type": c.registry.render_input(&p.ty),
                        "description": p.doc,
                        "requires": p.requires,
                    })
                })
                .collect();
            json!({
                "name": t.name,
                "source": t.source,
                "served_by": served(t.served),
                "effect": t.effect,
                "description": t.description,
                "note": t.note,
                "params": params,
                "returns": {
                    "type": t.returns.render(Position::Output),
                    "description": t.returns_doc,
                    "labels": t.labels,
                },
                "effect_words": t.effect_words,
                "conditions": t.conditions,
                "input_schema": t.input_schema,
                "output_schema": t.output_schema,
            })
        })
        .collect();
    let verifiers: Vec<Value> = c
        .verifiers
        .iter()
        .map(|v| {
            json!({
                "name": v.name,
                "kind": v.kind,
                "mints": v.mints,
                "type": if v.number { "int | float" } else { "str" },
                "accepts": v.accepts,
                "accepted_by": v.accepted_by,
            })
        })
        .collect();
    let types: serde_json::Map<String, Value> = c
        .registry
        .named
        .iter()
        .map(|(name, named)| {
            let pos = named.position();
            let v = match &named.def {
                Def::Record(fields) => json!({
                    "kind": "TypedDict",
                    "description": named.doc,
                    "fields": fields.iter().map(|f| json!({
                        "key": f.key,
                        "type": f.ty.render(pos),
                        "required": f.required,
                        "description": f.doc,
                    })).collect::<Vec<_>>(),
                }),
                Def::Alias(t) => json!({
                    "kind": "alias",
                    "description": named.doc,
                    "type": t.render(pos),
                }),
            };
            (name.clone(), v)
        })
        .collect();
    let examples: Vec<Value> = markdown::examples(policy)
        .into_iter()
        .map(|(path, text)| json!({ "path": path, "plan": text }))
        .collect();
    let llm: Vec<&str> = c.llm_tools().map(|t| t.name.as_str()).collect();
    json!({
        "format": FORMAT,
        "tools": tools,
        "verifiers": verifiers,
        "types": types,
        "subset": subset::json(),
        "query_llm": if llm.is_empty() { Value::Null } else { json!({
            "tools": llm,
            "shapes": ["str", "int", "float", "bool", "[SCALAR]", "{KEY: SHAPE, …}"],
            "max_depth": c.max_shape_depth,
            "shape_schema": crate::tools::records::llm_shape_schema(),
        }) },
        "examples": examples,
        "pyi": pyi::render(c),
    })
}
