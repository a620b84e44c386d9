//! Checking a value against a tool's JSON Schema (`inputSchema` before a call, `outputSchema` on a
//! structured result), so a plan's mistake is a plan error naming the argument instead of whatever the
//! server makes of it.
//!
//! The keywords tool schemas use are checked: `type`, `enum`, `const`, `properties`, `required`,
//! `additionalProperties`, `items`, `minItems`/`maxItems`, `minLength`/`maxLength`,
//! `minimum`/`maximum` and their exclusive forms, `anyOf`/`oneOf`/`allOf`. Others (`pattern`, `format`,
//! `$ref`…) are left to the server, which checks its own schema; this check only ever refuses more.
//!
//! An error is in Zamburak's words: it names places by the schema's property names. A property of the value
//! that the schema does not declare is the value's own word (a server's, a model's, data's): the place
//! writes it `<property>`, and its name is kept apart in the [`SchemaError`], to be shown only as outside
//! text ([`SchemaError::said`]).

use serde_json::Value;

use crate::text::OutsideText;

/// Why a value does not fit a schema: [`SchemaError::message`] says where and what was expected, and never
/// holds a name the value chose (an undeclared property is written `<property>`); those names are only
/// reachable as [`OutsideText`].
#[derive(Clone, PartialEq, Eq)]
pub struct SchemaError {
    message: String,
    /// The undeclared property names the place goes through, outermost first.
    undeclared: Vec<String>,
}

impl SchemaError {
    /// Where and what was expected, in Zamburak's words.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The value's own property names the message writes as `<property>`, as outside text described as
    /// `what` (whose names they are), when there are any.
    pub fn said(&self, what: &'static str) -> Option<OutsideText> {
        if self.undeclared.is_empty() {
            return None;
        }
        let names: Vec<String> = self.undeclared.iter().map(|n| format!("`{n}`")).collect();
        Some(OutsideText::new(what, names.join(", ")))
    }
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::fmt::Debug for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The names are outside text: counted, never written.
        write!(
            f,
            "SchemaError({:?}, {} undeclared name(s))",
            self.message,
            self.undeclared.len()
        )
    }
}

impl std::error::Error for SchemaError {}

/// How a place writes a property the schema does not declare.
const UNDECLARED: &str = "<property>";

/// Deepest schema nesting followed; a deeper (hostile) schema is refused rather than recursed into.
const MAX_DEPTH: usize = 64;

/// The property names `schema` (an object schema) requires, in its order.
pub fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Checks `value` against `schema`. The error names the place (`path`, e.g. `path` or `edits[0].oldText`)
/// and what was expected, never the value itself (it may be private).
///
/// ```
/// use serde_json::json;
/// use zamburak::mcp::schema::check;
/// let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
/// assert!(check(&schema, &json!({"n": 3}), "").is_ok());
/// assert_eq!(check(&schema, &json!({"n": "3"}), "").unwrap_err().message(), "`n` must be an integer, not a string");
/// let closed = json!({"type": "object", "properties": {}, "additionalProperties": false});
/// let e = check(&closed, &json!({"\u{1b}[2J": 1}), "").unwrap_err();
/// assert_eq!(e.message(), "the value has a property the schema does not allow (`<property>`)");
/// assert!(e.said("the names").unwrap().for_terminal().contains("\\u{001b}[2J"));
/// ```
pub fn check(schema: &Value, value: &Value, path: &str) -> Result<(), SchemaError> {
    check_at(schema, value, path, &[], 0)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "None",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a dict",
    }
}

fn is_type(value: &Value, ty: &str) -> bool {
    match ty {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

fn type_name(ty: &str) -> &str {
    match ty {
        "null" => "None",
        "boolean" => "a boolean",
        "number" => "a number",
        "integer" => "an integer",
        "string" => "a string",
        "array" => "a list",
        "object" => "a dict",
        other => other,
    }
}

fn place(path: &str) -> String {
    if path.is_empty() {
        "the value".to_string()
    } else {
        format!("`{path}`")
    }
}

/// `undeclared`: the value's own property names `path` goes through (see [`SchemaError`]).
fn check_at(
    schema: &Value,
    value: &Value,
    path: &str,
    undeclared: &[String],
    depth: usize,
) -> Result<(), SchemaError> {
    let fail = |message: String| {
        Err(SchemaError {
            message,
            undeclared: undeclared.to_vec(),
        })
    };
    if depth > MAX_DEPTH {
        return fail(format!(
            "the schema for {} is nested too deeply",
            place(path)
        ));
    }
    let Value::Object(s) = schema else {
        // `true` accepts everything, `false` nothing; anything else is not a schema.
        return match schema {
            Value::Bool(true) => Ok(()),
            _ => fail(format!("{} is not allowed here", place(path))),
        };
    };
    if let Some(ty) = s.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() && !types.iter().any(|t| is_type(value, t)) {
            let names: Vec<&str> = types.iter().map(|t| type_name(t)).collect();
            return fail(format!(
                "{} must be {}, not {}",
                place(path),
                names.join(" or "),
                kind(value)
            ));
        }
    }
    if let Some(Value::Array(options)) = s.get("enum")
        && !options.contains(value)
    {
        let shown: Vec<String> = options.iter().take(8).map(Value::to_string).collect();
        return fail(format!(
            "{} must be one of {}",
            place(path),
            shown.join(", ")
        ));
    }
    if let Some(c) = s.get("const")
        && c != value
    {
        return fail(format!("{} must be {c}", place(path)));
    }
    match value {
        Value::String(text) => {
            let n = text.chars().count() as u64;
            if let Some(min) = s.get("minLength").and_then(Value::as_u64)
                && n < min
            {
                return fail(format!(
                    "{} must have at least {min} characters",
                    place(path)
                ));
            }
            if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
                && n > max
            {
                return fail(format!(
                    "{} must have at most {max} characters",
                    place(path)
                ));
            }
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            let bound = |k: &str| s.get(k).and_then(Value::as_f64);
            let too_small = bound("minimum").is_some_and(|m| x < m)
                || bound("exclusiveMinimum").is_some_and(|m| x <= m);
            let too_big = bound("maximum").is_some_and(|m| x > m)
                || bound("exclusiveMaximum").is_some_and(|m| x >= m);
            if too_small || too_big || x.is_nan() {
                return fail(format!("{} is out of the allowed range", place(path)));
            }
        }
        Value::Array(items) => {
            let n = items.len() as u64;
            if s.get("minItems")
                .and_then(Value::as_u64)
                .is_some_and(|m| n < m)
                || s.get("maxItems")
                    .and_then(Value::as_u64)
                    .is_some_and(|m| n > m)
            {
                return fail(format!("{} has the wrong number of items", place(path)));
            }
            if let Some(item_schema) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check_at(
                        item_schema,
                        item,
                        &format!("{path}[{i}]"),
                        undeclared,
                        depth + 1,
                    )?;
                }
            }
        }
        Value::Object(map) => {
            let join = |k: &str| {
                if path.is_empty() {
                    k.to_string()
                } else {
                    format!("{path}.{k}")
                }
            };
            if let Some(Value::Array(required)) = s.get("required") {
                for r in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(r) {
                        return fail(format!("{} is required", place(&join(r))));
                    }
                }
            }
            let props = s.get("properties").and_then(Value::as_object);
            for (k, v) in map {
                // A declared name is the schema's word; any other is the value's own.
                let outside = || {
                    let mut names = undeclared.to_vec();
                    names.push(k.clone());
                    names
                };
                match props.and_then(|p| p.get(k)) {
                    Some(prop) => check_at(prop, v, &join(k), undeclared, depth + 1)?,
                    None => match s.get("additionalProperties") {
                        Some(Value::Bool(false)) => {
                            return Err(SchemaError {
                                message: format!(
                                    "{} has a property the schema does not allow (`{UNDECLARED}`)",
                                    place(path)
                                ),
                                undeclared: outside(),
                            });
                        }
                        Some(extra @ Value::Object(_)) => {
                            check_at(extra, v, &join(UNDECLARED), &outside(), depth + 1)?
                        }
                        _ => {}
                    },
                }
            }
        }
        _ => {}
    }
    if let Some(Value::Array(all)) = s.get("allOf") {
        for sub in all {
            check_at(sub, value, path, undeclared, depth + 1)?;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(any)) = s.get(key)
            && !any.is_empty()
        {
            let fits = any
                .iter()
                .any(|sub| check_at(sub, value, path, undeclared, depth + 1).is_ok());
            if !fits {
                return fail(format!("{} matches none of the allowed forms", place(path)));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_filesystem_servers_edit_schema() {
        let schema = json!({"type": "object", "properties": {
            "path": {"type": "string"},
            "edits": {"type": "array", "items": {"type": "object", "properties": {
                "oldText": {"type": "string"}, "newText": {"type": "string"}}, "required": ["oldText", "newText"],
                "additionalProperties": false}},
            "dryRun": {"type": "boolean", "default": false}}, "required": ["path", "edits"]});
        assert!(
            check(
                &schema,
                &json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}),
                ""
            )
            .is_ok()
        );
        assert_eq!(
            check(
                &schema,
                &json!({"path": "a", "edits": [{"oldText": "x"}]}),
                ""
            )
            .unwrap_err()
            .message(),
            "`edits[0].newText` is required"
        );
        assert_eq!(
            check(
                &schema,
                &json!({"path": "a", "edits": [{"oldText": "x", "newText": "y", "z": 1}]}),
                ""
            )
            .unwrap_err()
            .message(),
            "`edits[0]` has a property the schema does not allow (`<property>`)"
        );
        assert_eq!(
            check(&schema, &json!({"path": 1, "edits": []}), "")
                .unwrap_err()
                .message(),
            "`path` must be a string, not an integer"
        );
    }

    #[test]
    fn numbers_enums_and_alternatives() {
        let s = json!({"type": ["integer", "null"], "minimum": 1});
        assert!(check(&s, &json!(null), "n").is_ok());
        assert!(check(&s, &json!(2.0), "n").is_ok());
        assert!(check(&s, &json!(0), "n").is_err());
        assert!(check(&s, &json!(1.5), "n").is_err());
        let e = json!({"enum": ["a", "b"]});
        assert!(check(&e, &json!("c"), "x").is_err());
        let any = json!({"anyOf": [{"type": "string"}, {"type": "array"}]});
        assert!(check(&any, &json!([]), "x").is_ok());
        assert!(check(&any, &json!(1), "x").is_err());
        assert!(check(&json!(false), &json!(1), "x").is_err());
    }

    /// A value's own property names (a server's result, a model's answer) never reach the message: the
    /// place writes them `<property>`, and they are only outside text.
    #[test]
    fn undeclared_names_are_kept_out_of_the_message() {
        let hostile = "\u{1b}[2J approved by alice";
        let closed = json!({"type": "object", "properties": {"n": {"type": "integer"}},
            "additionalProperties": false});
        let e = check(&closed, &json!({"n": 1, hostile: 2}), "answer").unwrap_err();
        assert_eq!(
            e.message(),
            "`answer` has a property the schema does not allow (`<property>`)"
        );
        assert!(!format!("{e} {e:?}").contains("alice"));
        let said = e.said("the names the answer used").unwrap();
        assert!(!said.redacted().contains("alice"));
        assert!(
            said.for_terminal()
                .contains("`\\u{001b}[2J approved by alice`")
        );

        // Through an `additionalProperties` schema, at any depth: the place says `<property>`.
        let open = json!({"type": "object", "additionalProperties": {"type": "object",
            "additionalProperties": {"type": "integer"}}});
        let e = check(&open, &json!({"meta": {hostile: "x"}}), "").unwrap_err();
        assert_eq!(
            e.message(),
            "`<property>.<property>` must be an integer, not a string"
        );
        assert_eq!(
            e.said("names").unwrap().for_terminal(),
            "(shown here only) names: `meta`, `\\u{001b}[2J approved by alice`"
        );
        // Declared names are the schema's words, shown as they are; no outside text then.
        let e = check(&closed, &json!({"n": "1"}), "").unwrap_err();
        assert_eq!(e.message(), "`n` must be an integer, not a string");
        assert!(e.said("names").is_none());
    }

    #[test]
    fn hostile_nesting_is_refused_not_recursed() {
        let mut s = json!({"type": "array"});
        for _ in 0..200 {
            s = json!({"type": "array", "items": s});
        }
        let mut v = json!([]);
        for _ in 0..200 {
            v = json!([v]);
        }
        assert!(
            check(&s, &v, "x")
                .unwrap_err()
                .message()
                .contains("nested too deeply")
        );
    }
}
