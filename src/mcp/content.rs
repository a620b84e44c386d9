//! What a plan receives from an MCP tool call: the `CallToolResult` turned into a plain value.
//!
//! * `structuredContent`, when present (checked against the tool's `outputSchema` by the caller);
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
