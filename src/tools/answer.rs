//! An LLM's answer, read strictly: parsed with every repeated key refused (serde_json keeps the last one
//! silently, so a model could show a checker one value and the plan another), then checked exactly
//! against the plan's shape (`"int"` is a JSON integer within 64 signed bits, never `5.0` or a number past
//! `i64`). Nothing here quotes the answer: messages name places by the shape's own keys.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why an answer was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not JSON at all (or trailing bytes, or nested past serde_json's limit).
    NotJson,
    /// An object repeats a key.
    Duplicate,
    /// It does not have the shape; the text says where and what was expected.
    Shape(String),
}

/// A JSON value whose objects never repeat a key.
struct Unique(Value);

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Unique, D::Error> {
        deserializer.deserialize_any(UniqueVisitor)
    }
}

/// The marker message of a repeated key, told apart from other parse errors by [`parse`].
const DUPLICATE: &str = "a key is repeated";

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Unique, E> {
        Ok(Unique(Value::Bool(b)))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Unique, E> {
        Ok(Unique(Value::Number(n.into())))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Unique, E> {
        Ok(Unique(Value::Number(n.into())))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Unique, E> {
        // serde_json never hands over a non-finite number; were one to come, it is not JSON.
        Ok(Unique(
            Number::from_f64(f).map_or(Value::Null, Value::Number),
        ))
    }
    fn visit_str<E>(self, s: &str) -> Result<Unique, E> {
        Ok(Unique(Value::String(s.to_string())))
    }
    fn visit_string<E>(self, s: String) -> Result<Unique, E> {
        Ok(Unique(Value::String(s)))
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Unique, E> {
        Ok(Unique(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        let mut items = Vec::new();
        while let Some(Unique(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Unique(Value::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Unique(value) = map.next_value()?;
            if out.contains_key(&key) {
                return Err(de::Error::custom(DUPLICATE));
            }
            out.insert(key, value);
        }
        Ok(Unique(Value::Object(out)))
    }
}

/// Parses `text` as JSON, refusing repeated keys. Numbers keep serde_json's reading: an integer literal
/// that fits 64 bits is an integer, anything else a float.
///
/// ```
/// use zamburak::tools::answer::{parse, Refusal};
/// assert!(parse(r#"{"a": 1, "b": [1, 2.5]}"#).is_ok());
/// assert_eq!(parse(r#"{"a": 1, "a": 2}"#), Err(Refusal::Duplicate));
/// assert_eq!(parse(r#"[{"x": {"y": 1, "y": 1}}]"#), Err(Refusal::Duplicate));
/// assert_eq!(parse("{"), Err(Refusal::NotJson));
/// ```
pub fn parse(text: &str) -> Result<Value, Refusal> {
    match serde_json::from_str::<Unique>(text) {
        Ok(Unique(value)) => Ok(value),
        Err(e) if e.is_data() && e.to_string().starts_with(DUPLICATE) => Err(Refusal::Duplicate),
        Err(_) => Err(Refusal::NotJson),
    }
}

fn place(path: &str) -> String {
    if path.is_empty() {
        "the answer".to_string()
    } else {
        format!("`{path}`")
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() => "an integer",
        Value::Number(n) if n.is_u64() => "an integer past 64 signed bits",
        Value::Number(_) => "a number with a fraction or exponent, or past 64 bits",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a dict",
    }
}

/// Checks `value` against `shape` (a shape `llm::shape_schema` accepted) and returns it as the
/// plan receives it: exactly the shape, with a whole number where `"float"` was asked made a float.
///
/// ```
/// use serde_json::json;
/// use zamburak::tools::answer::{exact, Refusal};
/// let shape = json!({"n": "int", "x": "float", "tags": ["str"]});
/// assert_eq!(exact(&shape, &json!({"n": 5, "x": 2, "tags": []}), "").unwrap(), json!({"n": 5, "x": 2.0, "tags": []}));
/// assert!(matches!(exact(&shape, &json!({"n": 5.0, "x": 2, "tags": []}), ""), Err(Refusal::Shape(_))));
/// assert!(matches!(exact(&shape, &json!({"n": 5, "x": 2}), ""), Err(Refusal::Shape(_))));
/// ```
pub fn exact(shape: &Value, value: &Value, path: &str) -> Result<Value, Refusal> {
    let wrong = |expected: &str| {
        Refusal::Shape(format!(
            "{} must be {expected}, not {}",
            place(path),
            kind(value)
        ))
    };
    match shape {
        Value::String(scalar) => match (scalar.as_str(), value) {
            ("str", Value::String(_)) | ("bool", Value::Bool(_)) => Ok(value.clone()),
            ("int", Value::Number(n)) if n.is_i64() => Ok(value.clone()),
            ("int", _) => Err(wrong("an integer within 64 signed bits")),
            ("float", Value::Number(n)) => n
                .as_f64()
                .and_then(Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| wrong("a finite number")),
            ("float", _) => Err(wrong("a number")),
            ("str", _) => Err(wrong("a string")),
            ("bool", _) => Err(wrong("a boolean")),
            _ => Err(Refusal::Shape(format!(
                "{} has an unknown shape",
                place(path)
            ))),
        },
        Value::Array(item_shape) => {
            let [item_shape] = item_shape.as_slice() else {
                return Err(Refusal::Shape(format!(
                    "{} has an unknown shape",
                    place(path)
                )));
            };
            let Value::Array(items) = value else {
                return Err(wrong("a list"));
            };
            items
                .iter()
                .enumerate()
                .map(|(i, item)| exact(item_shape, item, &format!("{path}[{i}]")))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        Value::Object(fields) => {
            let Value::Object(map) = value else {
                return Err(wrong("a dict"));
            };
            let join = |k: &str| {
                if path.is_empty() {
                    k.to_string()
                } else {
                    format!("{path}.{k}")
                }
            };
            if map.keys().any(|k| !fields.contains_key(k)) {
                // The key is the model's text: not quoted.
                return Err(Refusal::Shape(format!(
                    "{} has a field the shape does not name",
                    place(path)
                )));
            }
            let mut out = Map::new();
            for (k, field_shape) in fields {
                let Some(v) = map.get(k) else {
                    return Err(Refusal::Shape(format!("{} is missing", place(&join(k)))));
                };
                out.insert(k.clone(), exact(field_shape, v, &join(k))?);
            }
            Ok(Value::Object(out))
        }
        _ => Err(Refusal::Shape(format!(
            "{} has an unknown shape",
            place(path)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_are_exact() {
        let int = json!("int");
        for ok in ["0", "-7", "9223372036854775807", "-9223372036854775808"] {
            let v = parse(ok).unwrap();
            assert_eq!(exact(&int, &v, "n").unwrap(), v, "{ok}");
        }
        for bad in [
            "5.0",
            "5e0",
            "9223372036854775808",
            "18446744073709551616",
            "100000000000000000000000",
            "-9223372036854775809",
            "\"5\"",
            "true",
        ] {
            let v = parse(bad).unwrap();
            assert!(
                matches!(exact(&int, &v, "n"), Err(Refusal::Shape(m)) if m.starts_with("`n` must be an integer")),
                "{bad}"
            );
        }
    }

    #[test]
    fn floats_take_whole_numbers_as_floats() {
        let v = exact(&json!("float"), &parse("12").unwrap(), "").unwrap();
        assert!(v.as_f64() == Some(12.0) && !v.is_i64());
        assert!(exact(&json!("float"), &json!("12"), "").is_err());
    }

    #[test]
    fn duplicates_are_refused_at_any_depth_and_order_is_kept() {
        assert_eq!(
            parse(r#"{"have_enough_information": true, "answer": 1, "answer": 2}"#),
            Err(Refusal::Duplicate)
        );
        assert_eq!(
            parse(r#"{"a": {"b": [{"c": 1, "c": 1}]}}"#),
            Err(Refusal::Duplicate)
        );
        let v = parse(r#"{"z": 1, "a": 2}"#).unwrap();
        assert_eq!(
            v.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["z", "a"]
        );
        assert_eq!(parse("[1] x"), Err(Refusal::NotJson));
        assert_eq!(parse(&"[".repeat(1000)), Err(Refusal::NotJson));
    }

    #[test]
    fn dicts_have_exactly_the_named_fields_and_unknown_names_are_not_quoted() {
        let shape = json!({"who": {"name": "str"}});
        let err = exact(&shape, &json!({"who": {"name": "a", "\u{1b}[2J": 1}}), "").unwrap_err();
        assert_eq!(
            err,
            Refusal::Shape("`who` has a field the shape does not name".into())
        );
        assert_eq!(
            exact(&shape, &json!({}), "").unwrap_err(),
            Refusal::Shape("`who` is missing".into())
        );
        assert!(exact(&json!(["int"]), &json!([1, 2.5]), "").is_err());
    }
}
