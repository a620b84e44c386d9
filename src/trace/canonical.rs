//! Canonical JSON, the on-disk line layout and the record hash.
//!
//! Canonical JSON is serde_json's compact output with every object's keys sorted by byte order, recursively.
//! The crate enables serde_json's `preserve_order`, so a `Map` keeps insertion order and we sort here.
//!
//! A trace line is a function of its content alone: `seq`, `prev`, `type` first, the other keys in byte
//! order, `hash` last, nested objects canonical, no whitespace. The verifier re-renders every parsed line
//! and compares bytes, so a change that JSON parsing would forgive (whitespace, key order, an escape
//! spelled differently) is still caught.
//!
//! ```
//! use serde_json::json;
//! use zamburak::trace::canonical::canonical;
//! assert_eq!(canonical(&json!({"b": [1, {"d": 2, "c": 3}], "a": "x"})), r#"{"a":"x","b":[1,{"c":3,"d":2}]}"#);
//! ```

use serde_json::{Map, Value};

/// Keys that lead a trace line, in this order; everything else follows sorted, then `hash`.
const LEADING: [&str; 3] = ["seq", "prev", "type"];
/// The key that closes a trace line and is left out of the hashed form.
pub const HASH_KEY: &str = "hash";
/// `prev` of the header: there is no previous record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Canonical JSON of `value` (keys sorted by bytes, recursively; no whitespace).
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

/// Work left to do while writing a value; an explicit stack, so a deeply nested value (a plan can build one
/// in a loop) cannot overflow the thread's stack.
enum Step<'a> {
    Value(&'a Value),
    Key(&'a str),
    Text(&'static str),
}

fn write_canonical(value: &Value, out: &mut String) {
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(k) => {
                write_key(k, out);
                out.push(':');
            }
            Step::Value(Value::Object(map)) => {
                out.push('{');
                stack.push(Step::Text("}"));
                push_entries(map, |_| true, &mut stack);
            }
            Step::Value(Value::Array(items)) => {
                out.push('[');
                stack.push(Step::Text("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Step::Value(item));
                    if i > 0 {
                        stack.push(Step::Text(","));
                    }
                }
            }
            Step::Value(scalar) => write_scalar(scalar, out),
        }
    }
}

/// Push the entries `keep` accepts, sorted by key bytes, so that popping writes them in order.
fn push_entries<'a>(
    map: &'a Map<String, Value>,
    keep: impl Fn(&str) -> bool,
    stack: &mut Vec<Step<'a>>,
) {
    let mut entries: Vec<(&'a String, &'a Value)> = map.iter().filter(|(k, _)| keep(k)).collect();
    // `str`'s `Ord` compares UTF-8 bytes, which is the order the format documents.
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (i, (key, value)) in entries.into_iter().enumerate().rev() {
        stack.push(Step::Value(value));
        stack.push(Step::Key(key));
        if i > 0 {
            stack.push(Step::Text(","));
        }
    }
}

/// An object with the keys `keep` accepts, sorted by bytes, values canonical.
fn write_sorted_object(map: &Map<String, Value>, keep: impl Fn(&str) -> bool, out: &mut String) {
    out.push('{');
    let mut stack = Vec::new();
    push_entries(map, keep, &mut stack);
    while let Some(step) = stack.pop() {
        match step {
            Step::Value(v) => write_canonical(v, out),
            Step::Key(k) => {
                write_key(k, out);
                out.push(':');
            }
            Step::Text(t) => out.push_str(t),
        }
    }
    out.push('}');
}

fn write_key(key: &str, out: &mut String) {
    // Serialising a `&str` to a string cannot fail; the fallback keeps this panic-free regardless.
    match serde_json::to_string(key) {
        Ok(s) => out.push_str(&s),
        Err(_) => out.push_str("\"\""),
    }
}

fn write_scalar(value: &Value, out: &mut String) {
    // Serialising a scalar `Value` to a string cannot fail: no maps with non-string keys, no I/O.
    match serde_json::to_string(value) {
        Ok(s) => out.push_str(&s),
        Err(_) => out.push_str("null"),
    }
}

/// The exact bytes of a trace line for this record object (without the trailing newline).
pub fn render_line(record: &Map<String, Value>) -> String {
    let mut out = String::from("{");
    let mut first = true;
    let mut put = |key: &str, value: &Value, out: &mut String| {
        if !first {
            out.push(',');
        }
        first = false;
        write_key(key, out);
        out.push(':');
        write_canonical(value, out);
    };
    for key in LEADING {
        if let Some(v) = record.get(key) {
            put(key, v, &mut out);
        }
    }
    let mut rest: Vec<&String> = record
        .keys()
        .filter(|k| !LEADING.contains(&k.as_str()) && k.as_str() != HASH_KEY)
        .collect();
    rest.sort();
    for key in rest {
        if let Some(v) = record.get(key) {
            put(key, v, &mut out);
        }
    }
    if let Some(v) = record.get(HASH_KEY) {
        put(HASH_KEY, v, &mut out);
    }
    out.push('}');
    out
}

/// blake3 (lowercase hex) over the canonical JSON of `record` without its `hash` key.
pub fn record_hash(record: &Map<String, Value>) -> String {
    let mut hashed = String::new();
    write_sorted_object(record, |k| k != HASH_KEY, &mut hashed);
    blake3::hash(hashed.as_bytes()).to_hex().to_string()
}

/// True when parsing the canonical JSON of `value` gives it back exactly. Only floats can fail: serde_json's
/// default parser (the crate does not enable `float_roundtrip`) may land one ulp away from what it printed,
/// e.g. for `9.87654321e299`, and a trace line must re-render to the same bytes when it is read.
///
/// ```
/// use serde_json::json;
/// use zamburak::trace::canonical::survives_round_trip;
/// assert!(survives_round_trip(&json!({"a": [1, 0.5, "x"]})));
/// ```
pub fn survives_round_trip(value: &Value) -> bool {
    let text = canonical(value);
    serde_json::from_str::<Value>(&text).is_ok_and(|back| canonical(&back) == text)
}

/// True when `s` is 64 lowercase hex digits (the form of `hash` and `prev`).
pub fn is_hash_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorts_keys_by_bytes_recursively() {
        // Uppercase sorts before lowercase in byte order; "é" (0xC3..) after ASCII.
        let v = json!({"é": 1, "b": {"z": null, "Z": true}, "B": [{"y": 1.5, "x": "\n"}]});
        assert_eq!(
            canonical(&v),
            "{\"B\":[{\"x\":\"\\n\",\"y\":1.5}],\"b\":{\"Z\":true,\"z\":null},\"é\":1}"
        );
    }

    #[test]
    fn line_layout_leads_with_seq_prev_type_and_ends_with_hash() {
        let mut m = Map::new();
        m.insert("hash".into(), json!("h"));
        m.insert("zeta".into(), json!(1));
        m.insert("type".into(), json!("end"));
        m.insert("alpha".into(), json!({"b": 1, "a": 2}));
        m.insert("prev".into(), json!("p"));
        m.insert("seq".into(), json!(3));
        assert_eq!(
            render_line(&m),
            r#"{"seq":3,"prev":"p","type":"end","alpha":{"a":2,"b":1},"zeta":1,"hash":"h"}"#
        );
    }

    #[test]
    fn hash_is_blake3_of_sorted_form_without_hash() {
        let mut m = Map::new();
        m.insert("seq".into(), json!(0));
        m.insert("hash".into(), json!("ignored"));
        m.insert("a".into(), json!("x"));
        // Independent expectation: hash the literal canonical text directly.
        let expected = blake3::hash(br#"{"a":"x","seq":0}"#).to_hex().to_string();
        assert_eq!(record_hash(&m), expected);
        // Known blake3 vector for the empty input guards against a wrong hash function.
        assert_eq!(
            blake3::hash(b"").to_hex().as_str(),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
    }

    #[test]
    fn round_trip_agrees_with_a_bitwise_float_check() {
        assert!(survives_round_trip(&json!([0.1, "s", null, {"b": 1}])));
        // Some of these drift under serde_json's default parser (9.87654321e299 does at the time of writing).
        for f in [
            9.87654321e299,
            1.2345678901234567e-300,
            0.1 + 0.2,
            -0.0,
            5e-324,
            f64::MAX,
            1e-7,
            123.456,
        ] {
            let text = serde_json::to_string(&f).unwrap();
            let back: f64 = serde_json::from_str(&text).unwrap();
            let exact = back.to_bits() == f.to_bits();
            assert_eq!(survives_round_trip(&Value::from(f)), exact, "{f:e}");
            assert_eq!(survives_round_trip(&json!({"x": [f]})), exact, "{f:e}");
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        const DEPTH: usize = 200_000;
        let mut v = json!(1);
        for _ in 0..DEPTH {
            v = Value::Array(vec![v]);
        }
        let text = canonical(&v);
        // Too deep for serde_json's parser, so no preview would keep it.
        let survives = survives_round_trip(&v);
        // Dropping a deep `Value` recurses in serde_json; unwind it by hand before any assertion can panic.
        let mut cur = v;
        while let Value::Array(mut items) = cur {
            cur = items.pop().unwrap_or(Value::Null);
        }
        assert_eq!(text, format!("{}1{}", "[".repeat(DEPTH), "]".repeat(DEPTH)));
        assert!(!survives);
    }

    #[test]
    fn hash_hex_shape() {
        assert!(is_hash_hex(GENESIS));
        assert!(!is_hash_hex(&"A".repeat(64)));
        assert!(!is_hash_hex(&"a".repeat(63)));
    }
}
