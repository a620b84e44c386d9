//! What a plan receives from an MCP tool call: the `CallToolResult` turned into a plain value.
//!
//! * `structuredContent`, when present (checked against the tool's `outputSchema` by the caller), unwrapped
//!   when it is the `{"result": X}` wrapper the MCP Python SDK puts around a result that is not an object;
//! * else the text parts, joined by newlines, when every part is text;
//! * else a list with one entry per part: text as a string; images, audio and resources as small dicts
//!   (`type`, `mimeType`, `size` in bytes of their data) — the plan never gets binary data, only its shape.
//!
//! `isError: true` is not a value: it is reported as the tool's failure.

use serde_json::{Map, Value, json};

/// The result of a call, or the tool's own error text when it reported `isError`.
pub fn plan_value(result: &Value) -> Result<Value, String> {
    let parts: &[Value] = result
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(texts(parts).unwrap_or_default());
    }
    if let Some(structured) = result.get("structuredContent") {
        return Ok(structured.clone());
    }
    if let Some(text) = texts(parts) {
        return Ok(Value::String(text));
    }
    Ok(Value::Array(parts.iter().map(part).collect()))
}

/// The value inside a wrapped structured result. The MCP Python SDK (FastMCP) returns a result that is not an
/// object, such as a list or a number, as `{"result": X}`, with an `outputSchema` whose only property is the
/// required `result`. The plan receives `X`, so that a policy's `fields` and `from_fields` rules apply to the
/// records of a list result as they do to a built-in tool's. Anything else is returned unchanged: the
/// unwrapping needs both the schema's and the value's word that the object is only a wrapper.
pub fn unwrap_result(output_schema: Option<&Value>, value: Value) -> Value {
    let schema_wraps = output_schema.is_some_and(wraps_result);
    match value {
        Value::Object(mut map) if schema_wraps && map.len() == 1 => match map.remove("result") {
            Some(inner) => inner,
            // The one key is not `result`: the value is not the wrapper the schema describes.
            None => Value::Object(map),
        },
        other => other,
    }
}

/// Whether an `outputSchema` describes the `{"result": X}` wrapper: its only property is the required
/// `result`. What [`unwrap_result`] needs from the schema, and what `zamburak stubs` reads to type a tool's
/// result as `X`.
pub fn wraps_result(schema: &Value) -> bool {
    let one_property = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.len() == 1 && p.contains_key("result"));
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|k| k.as_str() == Some("result")));
    one_property && required
}

/// The text of `parts` joined by newlines, when every part is text.
fn texts(parts: &[Value]) -> Option<String> {
    let all: Option<Vec<&str>> = parts
        .iter()
        .map(|p| {
            (p.get("type").and_then(Value::as_str) == Some("text"))
                .then(|| p.get("text").and_then(Value::as_str))
                .flatten()
        })
        .collect();
    Some(all?.join("\n"))
}

/// Size in bytes of base64 `data` (without decoding it).
fn base64_size(data: &str) -> u64 {
    let trimmed = data.trim_end_matches('=');
    (trimmed.len() as u64) * 3 / 4
}

fn part(p: &Value) -> Value {
    let ty = p.get("type").and_then(Value::as_str).unwrap_or("unknown");
    match ty {
        "text" => p.get("text").cloned().unwrap_or(Value::Null),
        "image" | "audio" => json!({
            "type": ty,
            "mimeType": p.get("mimeType").cloned().unwrap_or(Value::Null),
            "size": base64_size(p.get("data").and_then(Value::as_str).unwrap_or("")),
        }),
        "resource" => {
            let r = p.get("resource").cloned().unwrap_or_default();
            let size = match (r.get("text"), r.get("blob")) {
                (Some(Value::String(t)), _) => t.len() as u64,
                (_, Some(Value::String(b))) => base64_size(b),
                _ => 0,
            };
            json!({
                "type": "resource",
                "uri": r.get("uri").cloned().unwrap_or(Value::Null),
                "mimeType": r.get("mimeType").cloned().unwrap_or(Value::Null),
                "size": size,
            })
        }
        "resource_link" => json!({
            "type": "resource_link",
            "uri": p.get("uri").cloned().unwrap_or(Value::Null),
            "mimeType": p.get("mimeType").cloned().unwrap_or(Value::Null),
        }),
        other => {
            let mut m = Map::new();
            m.insert("type".into(), Value::String(other.to_string()));
            Value::Object(m)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_result_is_unwrapped_only_when_schema_and_value_agree() {
        let wrapper = json!({"type": "object", "properties": {"result": {"type": "array"}}, "required": ["result"]});
        let list = json!({"result": [{"a": 1}]});
        assert_eq!(
            unwrap_result(Some(&wrapper), list.clone()),
            json!([{"a": 1}])
        );
        // No schema, a schema with more properties, or `result` not required: unchanged.
        assert_eq!(unwrap_result(None, list.clone()), list);
        let two = json!({"type": "object", "properties": {"result": {}, "x": {}}, "required": ["result"]});
        assert_eq!(unwrap_result(Some(&two), list.clone()), list);
        let optional = json!({"type": "object", "properties": {"result": {}}});
        assert_eq!(unwrap_result(Some(&optional), list.clone()), list);
        // A value with another key, or more keys, is not the wrapper.
        let other = json!({"results": 1});
        assert_eq!(unwrap_result(Some(&wrapper), other.clone()), other);
        let more = json!({"result": 1, "x": 2});
        assert_eq!(unwrap_result(Some(&wrapper), more.clone()), more);
    }

    #[test]
    fn text_structured_mixed_and_errors() {
        let text =
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert_eq!(plan_value(&text).unwrap(), json!("a\nb"));
        let structured = json!({"content": [{"type": "text", "text": "{}"}], "structuredContent": {"content": "x"}});
        assert_eq!(plan_value(&structured).unwrap(), json!({"content": "x"}));
        let mixed = json!({"content": [{"type": "text", "text": "pic"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]});
        assert_eq!(
            plan_value(&mixed).unwrap(),
            json!(["pic", {"type": "image", "mimeType": "image/png", "size": 3}])
        );
        let error = json!({"content": [{"type": "text", "text": "no such file"}], "isError": true});
        assert_eq!(plan_value(&error).unwrap_err(), "no such file");
        assert_eq!(plan_value(&json!({})).unwrap(), json!(""));
    }
}
