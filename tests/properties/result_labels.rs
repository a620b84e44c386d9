//! Labelling a tool's result (`src/policy/labelling.rs`, docs/semantics.md, "Propagation") on results a
//! hostile server could return: random JSON in the shapes tools return (a record, a list of records, lists of
//! anything, scalars, nesting), with addresses in the reader fields, other records' addresses elsewhere, and
//! keys that collide with the policy's field names. For every part of the labelled value:
//!
//! * the plan receives exactly the result (the labelled value's JSON is the result's);
//! * integrity: a tool declared untrusted gives untrusted parts, except the values of a field the policy
//!   itself declares trusted; an untrusted argument makes every part untrusted;
//! * tags: every part carries the tool's tags;
//! * readers are never invented: a part of record `i` of a list may be read only by the user, the policy's
//!   `also` readers and the addresses in record `i`'s own reader fields, never another record's; a list's
//!   own readers are every element's readers (or exactly the declared `structure_readers`);
//! * every part names the call as its source.

use std::collections::BTreeSet;
use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value};
use zamburak::label::{LabelSpace, Packed};
use zamburak::policy::{Policy, label_result};
use zamburak::value::{LValue, Raw};

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
      readers: { from_fields: [from, to] }
      fields:
        id: { integrity: trusted }
        body: { tags: [PRIVATE, PII] }
  inbox:
    effect: read
    args: {}
    returns: { tags: [PRIVATE], readers: { from_fields: [from, to], also: ["llm:local"] } }
  listing:
    effect: read
    args: {}
    returns: { readers: { from_fields: [to] }, structure_readers: public }
  team:
    effect: read
    args: {}
    returns: { integrity: trusted, readers: [a@x.test, b@x.test] }
  web:
    effect: read
    args: {}
    returns: { integrity: untrusted, readers: public }
"#;

const TOOLS: [&str; 5] = ["get_email", "inbox", "listing", "team", "web"];
const CALL: u32 = 7;

/// What the policy above says about each tool, for the oracle.
struct Declared {
    untrusted: bool,
    trusted_fields: &'static [&'static str],
    tags: &'static [&'static str],
    reader_fields: &'static [&'static str],
    also: &'static [&'static str],
    /// `Some(list)`: a fixed readers list (empty: the user only); `None` with no reader fields: public.
    fixed: Option<&'static [&'static str]>,
    structure_public: bool,
}

fn declared(tool: &str) -> Declared {
    let base = Declared {
        untrusted: true,
        trusted_fields: &[],
        tags: &[],
        reader_fields: &[],
        also: &[],
        fixed: None,
        structure_public: false,
    };
    match tool {
        "get_email" => Declared {
            trusted_fields: &["id"],
            tags: &["PRIVATE"],
            reader_fields: &["from", "to"],
            ..base
        },
        "inbox" => Declared {
            tags: &["PRIVATE"],
            reader_fields: &["from", "to"],
            also: &["llm:local"],
            ..base
        },
        "listing" => Declared {
            reader_fields: &["to"],
            structure_public: true,
            ..base
        },
        "team" => Declared {
            untrusted: false,
            fixed: Some(&["a@x.test", "b@x.test"]),
            ..base
        },
        _ => base,
    }
}

fn address() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a@x.test",
        "B@X.test",
        " c@x.test ",
        "me@example.com",
        "llm:local",
        "public",
        "",
        "*",
    ])
    .prop_map(str::to_string)
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["from", "to", "id", "body", "subject", "result", "x"])
        .prop_map(str::to_string)
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        address().prop_map(Value::String),
        "[a-z ]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A record as tools return them: reader fields holding an address or a list of them, and anything else.
fn record() -> impl Strategy<Value = Value> {
    (
        prop::option::of(address()),
        prop::option::of(prop::collection::vec(address(), 0..3)),
        prop::collection::vec((key(), json()), 0..3),
    )
        .prop_map(|(from, to, rest)| {
            let mut m: Map<String, Value> = rest.into_iter().collect();
            if let Some(f) = from {
                m.insert("from".into(), Value::String(f));
            }
            if let Some(t) = to {
                m.insert("to".into(), Value::from(t));
            }
            Value::Object(m)
        })
}

fn result() -> impl Strategy<Value = Value> {
    prop_oneof![
        record(),
        prop::collection::vec(record(), 0..5).prop_map(Value::Array),
        prop::collection::vec(prop_oneof![record(), json()], 0..5).prop_map(Value::Array),
        json(),
    ]
}

fn setup() -> (Policy, LabelSpace) {
    // The policy is this file's constant: a parse failure is the test's own bug, reported as such.
    let p = Policy::from_yaml_str(POLICY, "t.yaml", Path::new(".")).expect("the test policy loads");
    let s = p.label_space().expect("the test policy has a label space");
    (p, s)
}

fn norm(s: &str) -> String {
    s.trim().to_ascii_lowercase()
}

/// The readers a record's own reader fields name, as principals.
fn own_readers(record: &Value, d: &Declared) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = d.also.iter().map(|a| norm(a)).collect();
    if let Value::Object(m) = record {
        for f in d.reader_fields {
            match m.get(*f) {
                Some(Value::String(s)) => {
                    out.insert(norm(s));
                }
                Some(Value::Array(items)) => {
                    out.extend(items.iter().filter_map(Value::as_str).map(norm));
                }
                _ => {}
            }
        }
    }
    out
}

struct Oracle<'a> {
    space: &'a LabelSpace,
    tool: &'static str,
    d: Declared,
    untrusted_args: bool,
}

impl Oracle<'_> {
    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| norm(n)).collect()
    }

    /// The readers bound for a part that is not inside a record: `None` is public.
    fn scalar_bound(&self) -> Option<BTreeSet<String>> {
        if !self.d.reader_fields.is_empty() {
            return Some(Self::set(self.d.also));
        }
        self.d.fixed.map(Self::set)
    }

    fn record_bound(&self, record: &Value) -> Option<BTreeSet<String>> {
        if !self.d.reader_fields.is_empty() {
            return Some(own_readers(record, &self.d));
        }
        self.d.fixed.map(Self::set)
    }

    /// One part, not what is inside it: readers within `allowed` (`None`: public allowed), untrusted
    /// unless `trusted_here`, the tool's tags, the call as source.
    fn node(
        &self,
        v: &LValue,
        allowed: Option<&BTreeSet<String>>,
        trusted_here: bool,
    ) -> Result<(), TestCaseError> {
        prop_assert!(!v.label.is_unknown(), "unknown label on {:?}", v.to_json());
        let view = self.space.describe(&self.space.decode(&v.label));
        if self.untrusted_args || (self.d.untrusted && !trusted_here) {
            prop_assert_eq!(view.integrity.as_str(), "untrusted", "{:?}", v.to_json());
        }
        for t in self.d.tags {
            prop_assert!(
                view.tags.iter().any(|x| x == t),
                "tag {} missing on {:?}",
                t,
                v.to_json()
            );
        }
        let source = format!("{}#{CALL}", self.tool);
        prop_assert!(view.sources.contains(&source), "{:?}", view.sources);
        if let Some(allowed) = allowed {
            let Some(readers) = view.readers else {
                return Err(TestCaseError::fail(format!(
                    "public part where readers are bounded: {:?}",
                    v.to_json()
                )));
            };
            for r in readers {
                prop_assert!(
                    allowed.contains(&r),
                    "reader {:?} not in {:?} on {:?}",
                    r,
                    allowed,
                    v.to_json()
                );
            }
        }
        Ok(())
    }

    /// `v` and everything inside it.
    fn deep(
        &self,
        v: &LValue,
        allowed: Option<&BTreeSet<String>>,
        trusted_here: bool,
    ) -> Result<(), TestCaseError> {
        self.node(v, allowed, trusted_here)?;
        match &v.raw {
            Raw::List(items) | Raw::Tuple(items) => {
                for i in items {
                    self.deep(i, allowed, trusted_here)?;
                }
            }
            Raw::Dict(entries) => {
                for (k, val) in entries {
                    self.deep(k, allowed, trusted_here)?;
                    self.deep(val, allowed, trusted_here)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A record: its structure and keys bounded by its own readers, each field's value too, trusted only
    /// where the policy trusts that field.
    fn record(&self, v: &LValue, record: &Value) -> Result<(), TestCaseError> {
        let bound = self.record_bound(record);
        self.node(v, bound.as_ref(), false)?;
        let Raw::Dict(entries) = &v.raw else {
            return Err(TestCaseError::fail("a record is not a dict"));
        };
        for (k, val) in entries {
            self.deep(k, bound.as_ref(), false)?;
            let trusted =
                matches!(&k.raw, Raw::Str(name) if self.d.trusted_fields.contains(&name.as_str()));
            self.deep(val, bound.as_ref(), trusted)?;
        }
        Ok(())
    }

    fn result(&self, v: &LValue, value: &Value) -> Result<(), TestCaseError> {
        match value {
            Value::Object(_) => self.record(v, value),
            Value::Array(items) => {
                let Raw::List(elements) = &v.raw else {
                    return Err(TestCaseError::fail("a list result is not a list"));
                };
                let list = self.space.describe(&self.space.decode(&v.label));
                if self.d.structure_public {
                    prop_assert_eq!(&list.readers, &None, "declared structure_readers: public");
                    self.node(v, None, false)?;
                } else {
                    // Nobody reads the list's count and order who may not read every element.
                    for e in elements {
                        if let Some(el) = self.space.describe(&self.space.decode(&e.label)).readers
                        {
                            let allowed: BTreeSet<String> = el.into_iter().collect();
                            self.node(v, Some(&allowed), false)?;
                        }
                    }
                    self.node(
                        v,
                        self.scalar_bound().as_ref().filter(|_| items.is_empty()),
                        false,
                    )?;
                }
                for (e, item) in elements.iter().zip(items) {
                    match item {
                        Value::Object(_) => self.record(e, item)?,
                        _ => self.deep(e, self.scalar_bound().as_ref(), false)?,
                    }
                }
                Ok(())
            }
            _ => self.deep(v, self.scalar_bound().as_ref(), false),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]
    #[test]
    fn result_labels_never_launder_integrity_or_invent_readers(
        which in 0..TOOLS.len(),
        value in result(),
        untrusted_args in any::<bool>(),
    ) {
        let (policy, mut space) = setup();
        let tool = TOOLS[which];
        let args = if untrusted_args {
            let mut l = zamburak::label::Label::literal();
            l.integrity = zamburak::label::Integrity::Untrusted;
            space.encode(&l)
        } else {
            Packed::LITERAL
        };
        let v = label_result(&policy, tool, &value, &mut space, CALL, args);
        prop_assert_eq!(v.to_json(), value.clone(), "the plan receives exactly the result");
        let oracle = Oracle { space: &space, tool, d: declared(tool), untrusted_args };
        oracle.result(&v, &value)?;
    }
}

/// The oracle can fail: a record's reader read from another record, a trusted part of an untrusted tool,
/// and a missing tag are each caught.
#[test]
fn the_oracle_catches_a_foreign_reader_a_trusted_part_and_a_missing_tag() {
    let (policy, mut space) = setup();
    let two =
        serde_json::json!([{"from": "a@x.test", "body": "1"}, {"from": "c@x.test", "body": "2"}]);
    let v = label_result(&policy, "inbox", &two, &mut space, CALL, Packed::LITERAL);
    let oracle = Oracle {
        space: &space,
        tool: "inbox",
        d: declared("inbox"),
        untrusted_args: false,
    };
    assert!(oracle.result(&v, &two).is_ok());
    // Record 1 labelled with record 0's readers: `c@x.test` may not read record 0's parts... and the
    // reverse, `a@x.test` reading record 1's.
    let Raw::List(elements) = &v.raw else {
        panic!("a list")
    };
    let swapped = LValue::new(
        Raw::List(vec![elements[1].clone(), elements[0].clone()]),
        v.label.clone(),
    );
    assert!(
        oracle.result(&swapped, &two).is_err(),
        "a foreign reader is caught"
    );
    // The same value with the `team` tool's trusted label, checked as `web` (untrusted, public).
    let team = label_result(&policy, "team", &two, &mut space, CALL, Packed::LITERAL);
    let web = Oracle {
        space: &space,
        tool: "team",
        d: declared("web"),
        untrusted_args: false,
    };
    assert!(
        web.result(&team, &two).is_err(),
        "a trusted part of an untrusted tool is caught"
    );
    let tagged = Oracle {
        space: &space,
        tool: "team",
        d: Declared {
            tags: &["PRIVATE"],
            ..declared("team")
        },
        untrusted_args: false,
    };
    assert!(
        tagged.result(&team, &two).is_err(),
        "a missing tag is caught"
    );
}
