//! Labelling a tool result per the tool's `returns` (docs/semantics.md, "Propagation": tool results).
//!
//! Every label is the policy's label for that part of the result, joined with the join of the call's
//! argument labels (an attacker-chosen query gives an attacker-chosen answer), plus the call's source.
//!
//! Choices that fail closed:
//! * an unknown tool, a tag the label space does not know, or a malformed argument label: the whole result
//!   is labelled `unknown`, which every sink denies;
//! * nesting deeper than [`MAX_RESULT_DEPTH`]: the deeper part is replaced by `None` labelled `unknown`;
//! * `from_fields` on a record that lacks the fields, or on a result that is not a record: readers are the
//!   user only; values of those fields that are neither strings nor lists of strings name nobody;
//! * an empty list result with `from_fields` readers has the user as its only reader (there is no record
//!   to take readers from);
//! * principals past the label space's budget are never readers;
//! * integers beyond `i64` become floats (a value change, never a label change).

use serde_json::Value;

use super::Policy;
use super::model::{IntegritySpec, ReadersSpec, ReturnsSpec};
use crate::label::{Label, LabelSpace, Packed};
use crate::value::{LValue, Raw};

/// Deepest nesting of a tool result that is labelled; JSON parsers stop well before this anyway.
pub const MAX_RESULT_DEPTH: usize = 128;

/// Labels `value`, the JSON result of call `call_id` of `tool`, whose arguments' labels join to `args_join`.
///
/// Records the call in `space` (so its source decodes as `tool#call_id`) and interns the principals found by
/// `from_fields`.
///
/// ```
/// use serde_json::json;
/// use zamburak::label::Packed;
/// use zamburak::policy::{Policy, label_result};
/// use zamburak::value::Raw;
/// let policy = Policy::bundled_default().unwrap();
/// let mut space = policy.label_space().unwrap();
/// let mail = json!({"id": "1", "from": "a@x.test", "to": [], "cc": [], "subject": "s", "date": "d", "body": "b"});
/// let v = label_result(&policy, "get_email", &mail, &mut space, 3, Packed::LITERAL);
/// let Raw::Dict(entries) = &v.raw else { panic!() };
/// let body = &entries.iter().find(|(k, _)| k.raw == Raw::Str("body".into())).unwrap().1;
/// let label = space.decode(&body.label);
/// assert!(label.is_untrusted());
/// assert_eq!(space.describe(&label).sources, ["get_email#3"]);
/// ```
pub fn label_result(
    policy: &Policy,
    tool: &str,
    value: &Value,
    space: &mut LabelSpace,
    call_id: u32,
    args_join: Packed,
) -> LValue {
    space.record_call(call_id, tool);
    let Some(spec) = policy.tool(tool) else {
        return unknown(value, 0);
    };
    let args = space.decode(&args_join);
    let mut labeller = Labeller {
        space,
        call_id,
        returns: spec.returns(),
        args,
        failed: false,
    };
    let out = labeller.top(value);
    if labeller.failed {
        return unknown(value, 0);
    }
    out
}

/// The principals a readers spec names for a whole value (`None`: public). Per-record readers name nobody
/// for the whole: only the user.
fn readers_list(spec: &ReadersSpec) -> Option<Vec<String>> {
    match spec {
        ReadersSpec::Public => None,
        ReadersSpec::List(names) => Some(names.clone()),
        ReadersSpec::User => Some(Vec::new()),
        // No record to read fields from: only the principals named for every part of the result.
        ReadersSpec::FromFields { also, .. } => Some(also.clone()),
    }
}

struct Labeller<'a> {
    space: &'a mut LabelSpace,
    call_id: u32,
    returns: ReturnsSpec,
    args: Label,
    /// A tag the space does not know: the result cannot be labelled faithfully.
    failed: bool,
}

impl Labeller<'_> {
    fn top(&mut self, value: &Value) -> LValue {
        match value {
            Value::Object(_) => self.record(value),
            Value::Array(items) => {
                self.intern_by_field(items);
                let elements: Vec<LValue> = items
                    .iter()
                    .map(|item| match item {
                        Value::Object(_) => self.record(item),
                        other => {
                            let label = self.label(None, self.scalar_readers());
                            deep(other, label, 1)
                        }
                    })
                    .collect();
                // docs/semantics.md, "Propagation": the structure's readers are the declared
                // `structure_readers`, or else the result's readers intersected with every element's.
                if let Some(declared) = self.returns.structure_readers.clone() {
                    let readers = readers_list(&declared);
                    let structure = self.label_exact(None, readers);
                    return LValue::new(Raw::List(elements), self.space.encode(&structure));
                }
                let list_readers = match self.returns.readers {
                    // Per-record readers: the list itself has none of its own, so it is bounded only by its
                    // elements; with no element, nobody but the user.
                    Some(ReadersSpec::FromFields { .. }) if !items.is_empty() => None,
                    _ => self.scalar_readers(),
                };
                let mut structure = self.label_exact(None, list_readers);
                for el in &elements {
                    let readers_only = Label {
                        readers: self.space.decode(&el.label).readers,
                        ..Label::literal()
                    };
                    structure = structure.join(&readers_only);
                }
                LValue::new(Raw::List(elements), self.space.encode(&structure))
            }
            other => {
                let label = self.label(None, self.scalar_readers());
                deep(other, label, 0)
            }
        }
    }

    /// Spends the principal budget field by field across the records (every record's first `from_fields`
    /// field, then every record's second, …), so that one record with many `cc` addresses cannot take it
    /// from the senders of the records after it (docs/semantics.md, "Budgets").
    fn intern_by_field(&mut self, items: &[Value]) {
        let Some(ReadersSpec::FromFields { fields, also }) = &self.returns.readers else {
            return;
        };
        let (fields, also) = (fields.clone(), also.clone());
        // The principals the policy names come first: data never takes their place.
        for name in &also {
            self.space.principal(name);
        }
        for f in &fields {
            for item in items {
                let Value::Object(map) = item else { continue };
                match map.get(f) {
                    Some(Value::String(s)) => {
                        self.space.principal(s);
                    }
                    Some(Value::Array(xs)) => {
                        for x in xs.iter().filter_map(Value::as_str) {
                            self.space.principal(x);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Readers for a value that is not a record: the spec's, with `from_fields` meaning the user only.
    fn scalar_readers(&self) -> Option<Vec<String>> {
        self.returns
            .readers
            .as_ref()
            .map_or(Some(Vec::new()), readers_list)
    }

    fn record(&mut self, value: &Value) -> LValue {
        let Value::Object(map) = value else {
            return unknown(value, 0);
        };
        let readers = match &self.returns.readers {
            Some(ReadersSpec::FromFields { fields, also }) => {
                let mut names = also.clone();
                for f in fields {
                    match map.get(f) {
                        Some(Value::String(s)) => names.push(s.clone()),
                        Some(Value::Array(items)) => names
                            .extend(items.iter().filter_map(|v| v.as_str().map(str::to_string))),
                        _ => {}
                    }
                }
                Some(names)
            }
            _ => self.scalar_readers(),
        };
        let structure = self.label(None, readers.clone());
        let address_fields: Vec<String> = match &self.returns.readers {
            Some(ReadersSpec::FromFields { fields, .. }) => fields.clone(),
            _ => Vec::new(),
        };
        let mark = self.own_address_mark();
        let entries = map
            .iter()
            .map(|(k, v)| {
                let field_label = self.label(Some(k), readers.clone());
                let mut value = deep(v, field_label, 1);
                if let Some(kind) = mark
                    && address_fields.contains(k)
                {
                    mark_addresses(&mut value, kind);
                }
                (LValue::new(Raw::Str(k.clone()), structure.clone()), value)
            })
            .collect();
        LValue::new(Raw::Dict(entries), structure)
    }

    /// The own-address mark to put on the addresses of this result's address fields (the `from_fields`
    /// ones: docs/semantics.md, "A party may read its own address, as recorded"), when the result is not
    /// chosen by anything a party could not read: with an argument that is untrusted, tagged or restricted
    /// (a secret search query), the choice of which addresses come back is itself private, so none is marked.
    fn own_address_mark(&self) -> Option<u8> {
        let clean = !self.args.is_untrusted()
            && !self.args.unknown
            && self.args.tags.is_empty()
            && self.args.readers == crate::label::Readers::Public;
        if clean {
            self.space.own_address()
        } else {
            None
        }
    }

    fn label(&mut self, field: Option<&str>, readers: Option<Vec<String>>) -> Packed {
        let l = self.label_exact(field, readers);
        self.space.encode(&l)
    }

    /// The label of `field` (or of the result's structure) for a record with these readers.
    fn label_exact(&mut self, field: Option<&str>, readers: Option<Vec<String>>) -> Label {
        let over = field.and_then(|f| self.returns.fields.as_ref().and_then(|m| m.get(f)));
        let integrity = over
            .and_then(|o| o.integrity)
            .or(self.returns.integrity)
            .unwrap_or(IntegritySpec::Untrusted);
        let tags: Vec<String> = over
            .and_then(|o| o.tags.clone())
            .or_else(|| self.returns.tags.clone())
            .unwrap_or_default();
        let tag_refs: Vec<&str> = tags.iter().map(String::as_str).collect();
        let reader_refs: Option<Vec<&str>> = readers
            .as_ref()
            .map(|r| r.iter().map(String::as_str).collect());
        match self.space.tool_result(
            self.call_id,
            integrity == IntegritySpec::Untrusted,
            &tag_refs,
            reader_refs.as_deref(),
        ) {
            Ok(l) => l.join(&self.args),
            Err(_) => {
                self.failed = true;
                Label::unknown()
            }
        }
    }
}

/// Marks every address an address field holds (a string, or the strings of a list) as its party's own.
fn mark_addresses(value: &mut LValue, kind: u8) {
    match &mut value.raw {
        Raw::Str(_) => value.label = value.label.mint(kind),
        Raw::List(items) => {
            for item in items.iter_mut().filter(|i| matches!(i.raw, Raw::Str(_))) {
                item.label = item.label.mint(kind);
            }
        }
        _ => {}
    }
}

/// `value` with `label` on it and on everything inside it.
fn deep(value: &Value, label: Packed, depth: usize) -> LValue {
    if depth > MAX_RESULT_DEPTH {
        return LValue::new(Raw::None, Packed::UNKNOWN);
    }
    let raw = match value {
        Value::Null => Raw::None,
        Value::Bool(b) => Raw::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Raw::Int(i),
            None => Raw::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Raw::Str(s.clone()),
        Value::Array(items) => Raw::List(
            items
                .iter()
                .map(|v| deep(v, label.clone(), depth + 1))
                .collect(),
        ),
        Value::Object(map) => Raw::Dict(
            map.iter()
                .map(|(k, v)| {
                    (
                        LValue::new(Raw::Str(k.clone()), label.clone()),
                        deep(v, label.clone(), depth + 1),
                    )
                })
                .collect(),
        ),
    };
    LValue::new(raw, label)
}

fn unknown(value: &Value, depth: usize) -> LValue {
    deep(value, Packed::UNKNOWN, depth)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::label::{Integrity, Readers};

    const POLICY: &str = r#"
version: 1
user: me@example.com
tags: [PRIVATE, PII]
tools:
  get_email:
    effect: read
    args: { id: {} }
    returns:
      tags: [PRIVATE]
      readers: { from_fields: [from, to, cc] }
      fields:
        id: { integrity: trusted }
        body: { tags: [PRIVATE, PII] }
  list_emails:
    effect: read
    args: { limit: {} }
    returns: { tags: [PRIVATE], readers: { from_fields: [from, to] } }
  inbox:
    effect: read
    args: { limit: {} }
    returns: { tags: [PRIVATE], readers: { from_fields: [from, to] }, structure_readers: public }
  model_inbox:
    effect: read
    args: { limit: {} }
    returns: { tags: [PRIVATE], readers: { from_fields: [from, to], also: ["llm:local"] } }
  lookup:
    effect: read
    args: { q: {} }
    returns: { integrity: trusted, readers: public }
  team:
    effect: read
    args: {}
    returns: { integrity: trusted, readers: [a@x.test, b@x.test] }
"#;

    fn setup() -> (Policy, LabelSpace) {
        let p = Policy::from_yaml_str(POLICY, "t.yaml", Path::new(".")).unwrap();
        let s = p.label_space().unwrap();
        (p, s)
    }

    fn field<'a>(v: &'a LValue, key: &str) -> &'a LValue {
        let Raw::Dict(entries) = &v.raw else {
            panic!("not a dict: {v:?}")
        };
        &entries
            .iter()
            .find(|(k, _)| k.raw == Raw::Str(key.into()))
            .expect(key)
            .1
    }

    fn readers(space: &LabelSpace, p: &Packed) -> Option<Vec<String>> {
        space.describe(&space.decode(p)).readers
    }

    fn mail(from: &str, to: &[&str]) -> Value {
        json!({"id": "7", "from": from, "to": to, "cc": [], "subject": "s", "body": "b"})
    }

    #[test]
    fn fields_override_integrity_and_tags_and_readers_come_from_the_record() {
        let (p, mut s) = setup();
        let v = label_result(
            &p,
            "get_email",
            &mail("Bob@X.test", &["c@x.test"]),
            &mut s,
            4,
            Packed::LITERAL,
        );
        let id = s.decode(&field(&v, "id").label);
        assert_eq!(id.integrity, Integrity::Trusted);
        let body = s.describe(&s.decode(&field(&v, "body").label));
        assert_eq!(body.tags, ["PRIVATE", "PII"]);
        assert_eq!(body.integrity, "untrusted");
        assert_eq!(body.sources, ["get_email#4"]);
        let subject = s.describe(&s.decode(&field(&v, "subject").label));
        assert_eq!(subject.tags, ["PRIVATE"]);
        assert_eq!(
            readers(&s, &v.label),
            Some(vec!["bob@x.test".to_string(), "c@x.test".to_string()])
        );
        // Nested values (the `to` list and its elements) carry the field's label.
        let Raw::List(to) = &field(&v, "to").raw else {
            panic!()
        };
        assert_eq!(
            s.decode(&to[0].label).tags,
            s.decode(&field(&v, "subject").label).tags
        );
    }

    #[test]
    fn argument_labels_join_into_every_part() {
        let (p, mut s) = setup();
        let untrusted_arg = s.encode(&Label {
            integrity: Integrity::Untrusted,
            ..Label::literal()
        });
        let v = label_result(&p, "lookup", &json!({"k": "v"}), &mut s, 1, untrusted_arg);
        assert!(
            s.decode(&v.label).is_untrusted(),
            "an untrusted query makes even a trusted source untrusted"
        );
        assert!(s.decode(&field(&v, "k").label).is_untrusted());
        let v = label_result(&p, "lookup", &json!({"k": "v"}), &mut s, 2, Packed::LITERAL);
        assert!(!s.decode(&field(&v, "k").label).is_untrusted());
        assert_eq!(s.decode(&v.label).readers, Readers::Public);
    }

    #[test]
    fn declared_structure_readers_change_only_the_structures_readers() {
        let (p, mut s) = setup();
        let list = json!([
            mail("a@x.test", &["me@example.com"]),
            mail("c@x.test", &["b@x.test"])
        ]);
        let v = label_result(&p, "inbox", &list, &mut s, 6, Packed::LITERAL);
        let structure = s.decode(&v.label);
        assert_eq!(structure.readers, Readers::Public);
        // Integrity, tags and sources stay the result's.
        assert!(structure.is_untrusted());
        assert_eq!(s.describe(&structure).tags, ["PRIVATE"]);
        assert_eq!(s.describe(&structure).sources, ["inbox#6"]);
        // Each message keeps exactly its own readers: never widened to another message's.
        let Raw::List(items) = &v.raw else { panic!() };
        assert_eq!(
            readers(&s, &items[0].label),
            Some(vec!["a@x.test".to_string()])
        );
        assert_eq!(
            readers(&s, &items[1].label),
            Some(vec!["c@x.test".to_string(), "b@x.test".to_string()])
        );
    }

    #[test]
    fn list_structure_readers_are_the_intersection_of_the_elements() {
        let (p, mut s) = setup();
        let list = json!([
            mail("a@x.test", &["me@example.com"]),
            mail("a@x.test", &["b@x.test"])
        ]);
        let v = label_result(&p, "list_emails", &list, &mut s, 5, Packed::LITERAL);
        assert_eq!(readers(&s, &v.label), Some(vec!["a@x.test".to_string()]));
        let Raw::List(items) = &v.raw else { panic!() };
        assert_eq!(
            readers(&s, &items[1].label),
            Some(vec!["a@x.test".to_string(), "b@x.test".to_string()])
        );
        assert!(s.decode(&v.label).is_untrusted());
    }

    #[test]
    fn also_readers_join_every_records_own_and_stand_alone_where_fields_are_missing() {
        let (p, mut s) = setup();
        let list = json!([
            mail("a@x.test", &["me@example.com"]),
            mail("c@x.test", &["b@x.test"])
        ]);
        let v = label_result(&p, "model_inbox", &list, &mut s, 7, Packed::LITERAL);
        let Raw::List(items) = &v.raw else { panic!() };
        // Each message: its own addresses and the model, never another message's addresses.
        assert_eq!(
            readers(&s, &field(&items[0], "body").label),
            Some(vec!["llm:local".to_string(), "a@x.test".to_string()])
        );
        assert_eq!(
            readers(&s, &field(&items[1], "body").label),
            Some(vec![
                "llm:local".to_string(),
                "c@x.test".to_string(),
                "b@x.test".to_string()
            ])
        );
        // The list's structure: what every message allows, the model included.
        assert_eq!(readers(&s, &v.label), Some(vec!["llm:local".to_string()]));
        // No record to read fields from: the model and the user only.
        let v = label_result(
            &p,
            "model_inbox",
            &json!("text"),
            &mut s,
            8,
            Packed::LITERAL,
        );
        assert_eq!(readers(&s, &v.label), Some(vec!["llm:local".to_string()]));
        let v = label_result(&p, "model_inbox", &json!([]), &mut s, 9, Packed::LITERAL);
        assert_eq!(readers(&s, &v.label), Some(vec!["llm:local".to_string()]));
    }

    #[test]
    fn empty_lists_and_non_records_fail_closed_to_the_user() {
        let (p, mut s) = setup();
        let v = label_result(&p, "list_emails", &json!([]), &mut s, 6, Packed::LITERAL);
        assert_eq!(readers(&s, &v.label), Some(vec![]));
        let v = label_result(
            &p,
            "list_emails",
            &json!("just text"),
            &mut s,
            7,
            Packed::LITERAL,
        );
        assert_eq!(readers(&s, &v.label), Some(vec![]));
        let v = label_result(
            &p,
            "get_email",
            &json!({"from": 42, "to": [1, "z@x.test"]}),
            &mut s,
            8,
            Packed::LITERAL,
        );
        assert_eq!(readers(&s, &v.label), Some(vec!["z@x.test".to_string()]));
    }

    #[test]
    fn list_readers_intersect_with_the_policy_readers() {
        let (p, mut s) = setup();
        let v = label_result(&p, "team", &json!(["x", "y"]), &mut s, 9, Packed::LITERAL);
        assert_eq!(
            readers(&s, &v.label),
            Some(vec!["a@x.test".to_string(), "b@x.test".to_string()])
        );
        let v = label_result(&p, "team", &json!([]), &mut s, 10, Packed::LITERAL);
        assert_eq!(
            readers(&s, &v.label),
            Some(vec!["a@x.test".to_string(), "b@x.test".to_string()])
        );
    }

    #[test]
    fn unknown_tools_and_malformed_argument_labels_give_unknown_labels() {
        let (p, mut s) = setup();
        let v = label_result(&p, "nope", &json!({"a": [1]}), &mut s, 11, Packed::LITERAL);
        assert!(v.label.is_unknown() && field(&v, "a").label.is_unknown());
        let v = label_result(&p, "lookup", &json!("x"), &mut s, 12, Packed::from_bits(-1));
        assert!(s.decode(&v.label).unknown);
    }

    #[test]
    fn a_space_without_the_policy_tags_fails_closed() {
        let (p, _) = setup();
        let mut other = LabelSpace::new(&[], &[]).unwrap();
        let v = label_result(
            &p,
            "get_email",
            &mail("a@x.test", &[]),
            &mut other,
            1,
            Packed::LITERAL,
        );
        assert!(v.label.is_unknown());
    }

    #[test]
    fn deep_results_do_not_overflow() {
        let (p, mut s) = setup();
        let mut v = json!(1);
        for _ in 0..(MAX_RESULT_DEPTH + 10) {
            v = json!([v]);
        }
        let out = label_result(&p, "lookup", &v, &mut s, 1, Packed::LITERAL);
        assert!(out.deep_label().is_unknown());
        assert_eq!(json!(u64::MAX).as_i64(), None);
        let big = label_result(&p, "lookup", &json!(u64::MAX), &mut s, 2, Packed::LITERAL);
        assert!(matches!(big.raw, Raw::Float(_)));
    }

    /// docs/semantics.md, "Budgets": an attacker's mail with a full `to` line spent the principal budget
    /// before the next sender was met, so a reply to that sender was refused (#50). The budget is spent on
    /// every record's sender first now, and what was dropped is remembered for the reason.
    #[test]
    fn one_record_with_many_recipients_does_not_spend_the_next_senders_budget() {
        let (p, mut s) = setup();
        let flood: Vec<String> = (0..20).map(|i| format!("x{i}@evil.test")).collect();
        let flood: Vec<&str> = flood.iter().map(String::as_str).collect();
        let list = json!([
            mail("mallory@evil.test", &flood),
            mail("carol@x.test", &["me@example.com"])
        ]);
        let v = label_result(&p, "list_emails", &list, &mut s, 5, Packed::LITERAL);
        let Raw::List(items) = &v.raw else { panic!() };
        let carol = readers(&s, &field(&items[1], "body").label).unwrap();
        assert!(carol.contains(&"carol@x.test".to_string()), "{carol:?}");
        assert!(!s.dropped().is_empty());
        // (The user reads everything anyway: where their address was dropped, nothing is lost.)
        assert!(
            s.dropped()
                .iter()
                .all(|d| d.ends_with("@evil.test") || d == "me@example.com"),
            "{:?}",
            s.dropped()
        );
    }
}
