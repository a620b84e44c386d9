//! The policy file as a tree of YAML nodes with their positions.
//!
//! `serde` reports where a *syntax or type* error is, but the checks that span several fields (an
//! undeclared tag, a kind no verifier mints) run after deserialization, when positions are gone. This tree is
//! a reading of the text that keeps the line and column of every key and value, so each of those errors can
//! point at the exact place. It goes through the same YAML deserializer and budget as the model, which is
//! usually read from this tree rather than from the text again (policy::from_tree).

use std::fmt;

use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_saphyr::Spanned;

/// A 1-based line and column. Line 0 means "unknown" and is never shown: lookups fall back to a parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: u64,
    pub column: u64,
}

impl Pos {
    pub const START: Pos = Pos { line: 1, column: 1 };

    pub fn from_location(loc: &serde_saphyr::Location) -> Pos {
        Pos {
            line: loc.line(),
            column: loc.column(),
        }
    }
    fn known(self) -> bool {
        self.line > 0
    }
}

/// A scalar as the YAML core schema resolved it.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
}

/// One node and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub pos: Pos,
    pub kind: NodeKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    Map(Vec<Entry>),
    Seq(Vec<Node>),
    Scalar(Scalar),
}

/// A mapping entry: the key, where the key is, and the value.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: String,
    pub key_pos: Pos,
    pub value: Node,
}

/// One step of a path into the tree.
#[derive(Clone, Copy, Debug)]
pub enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

impl Node {
    /// The entry for `key` if this is a mapping that has it.
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        match &self.kind {
            NodeKind::Map(entries) => entries.iter().find(|e| e.key == key),
            _ => None,
        }
    }

    fn child(&self, seg: Seg<'_>) -> Option<(Pos, &Node)> {
        match (seg, &self.kind) {
            (Seg::Key(k), NodeKind::Map(_)) => self.entry(k).map(|e| (e.key_pos, &e.value)),
            (Seg::Index(i), NodeKind::Seq(items)) => items.get(i).map(|n| (n.pos, n)),
            _ => None,
        }
    }

    /// Where the value at `path` is; the deepest existing ancestor when part of the path is missing
    /// (a default that was not written, an alias), so there is always a position to show.
    pub fn value_pos(&self, path: &[Seg<'_>]) -> Pos {
        self.walk(path).1
    }

    /// Where the key of the last step of `path` is (for "this name is wrong" errors); for an index step,
    /// where the element is. Falls back like [`Node::value_pos`].
    pub fn key_pos(&self, path: &[Seg<'_>]) -> Pos {
        self.walk(path).0
    }

    fn walk(&self, path: &[Seg<'_>]) -> (Pos, Pos) {
        let mut node = self;
        let mut best = if self.pos.known() {
            self.pos
        } else {
            Pos::START
        };
        let mut key_best = best;
        for seg in path {
            let Some((key_pos, child)) = node.child(*seg) else {
                return (key_best, best);
            };
            if key_pos.known() {
                key_best = key_pos;
            }
            if child.pos.known() {
                best = child.pos;
            } else if key_pos.known() {
                best = key_pos;
            }
            node = child;
        }
        (key_best, best)
    }

    /// The path to the deepest key or list element that starts at or before `pos`: where an error the YAML
    /// deserializer reported at `pos` is in the structure (an unknown key points at itself, a wrong value
    /// at its scalar, which is inside its key). Empty when nothing starts before `pos`.
    pub fn path_at(&self, pos: Pos) -> Vec<Seg<'_>> {
        let mut path = Vec::new();
        let mut node = self;
        loop {
            let step = match &node.kind {
                NodeKind::Map(entries) => entries
                    .iter()
                    .rev()
                    .find(|e| e.key_pos.known() && e.key_pos <= pos)
                    .map(|e| (Seg::Key(e.key.as_str()), &e.value)),
                NodeKind::Seq(items) => items
                    .iter()
                    .enumerate()
                    .rev()
                    .find(|(_, n)| n.pos.known() && n.pos <= pos)
                    .map(|(i, n)| (Seg::Index(i), n)),
                NodeKind::Scalar(_) => None,
            };
            let Some((seg, child)) = step else {
                return path;
            };
            path.push(seg);
            node = child;
        }
    }

    /// The node as JSON, for re-reading one part with a different deserializer. Depth is bounded by the
    /// YAML budget the tree was read with.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            NodeKind::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect(),
            ),
            NodeKind::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeKind::Scalar(s) => match s {
                Scalar::Null => Value::Null,
                Scalar::Bool(b) => Value::Bool(*b),
                Scalar::Int(i) => Value::from(*i),
                Scalar::UInt(u) => Value::from(*u),
                Scalar::Float(f) => {
                    serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
                }
                Scalar::Str(s) => Value::String(s.clone()),
            },
        }
    }
}

/// What the YAML deserializer fills in; positions come from the `Spanned` wrappers around it.
enum Raw {
    Map(Vec<(Spanned<String>, Spanned<Raw>)>),
    Seq(Vec<Spanned<Raw>>),
    Scalar(Scalar),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
                Ok(Raw::Scalar(Scalar::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
                Ok(Raw::Scalar(Scalar::Int(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
                Ok(Raw::Scalar(Scalar::UInt(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
                Ok(Raw::Scalar(Scalar::Float(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
                Ok(Raw::Scalar(Scalar::Str(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Raw, E> {
                Ok(Raw::Scalar(Scalar::Str(v)))
            }
            fn visit_unit<E>(self) -> Result<Raw, E> {
                Ok(Raw::Scalar(Scalar::Null))
            }
            fn visit_none<E>(self) -> Result<Raw, E> {
                Ok(Raw::Scalar(Scalar::Null))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
                Raw::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Raw::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    let value = map.next_value()?;
                    entries.push((key, value));
                }
                Ok(Raw::Map(entries))
            }
        }
        deserializer.deserialize_any(V)
    }
}

fn convert(spanned: Spanned<Raw>) -> Node {
    let pos = Pos::from_location(&spanned.referenced);
    let kind = match spanned.value {
        Raw::Map(entries) => NodeKind::Map(
            entries
                .into_iter()
                .map(|(k, v)| Entry {
                    key_pos: Pos::from_location(&k.referenced),
                    key: k.value,
                    value: convert(v),
                })
                .collect(),
        ),
        Raw::Seq(items) => NodeKind::Seq(items.into_iter().map(convert).collect()),
        Raw::Scalar(s) => NodeKind::Scalar(s),
    };
    Node { pos, kind }
}

/// Reads `text` as a positioned tree with the given YAML options (budget, duplicate keys).
pub fn parse(text: &str, options: serde_saphyr::Options) -> Result<Node, serde_saphyr::Error> {
    let raw: Spanned<Raw> = serde_saphyr::from_str_with_options(text, options)?;
    Ok(convert(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(text: &str) -> Node {
        parse(text, serde_saphyr::Options::default()).unwrap()
    }

    #[test]
    fn keys_and_values_have_their_own_positions() {
        let t = tree("a:\n  bb: [x, {c: 1}]\n");
        let p = [Seg::Key("a"), Seg::Key("bb")];
        assert_eq!(t.key_pos(&p), Pos { line: 2, column: 3 });
        assert_eq!(t.value_pos(&p), Pos { line: 2, column: 7 });
        let deep = [Seg::Key("a"), Seg::Key("bb"), Seg::Index(1), Seg::Key("c")];
        assert_eq!(
            t.key_pos(&deep),
            Pos {
                line: 2,
                column: 12
            }
        );
    }

    #[test]
    fn a_missing_step_falls_back_to_the_deepest_ancestor() {
        let t = tree("a:\n  b: 1\n");
        assert_eq!(
            t.value_pos(&[Seg::Key("a"), Seg::Key("zz"), Seg::Index(3)]),
            Pos { line: 2, column: 3 }
        );
        assert_eq!(t.value_pos(&[Seg::Key("nope")]), Pos::START);
    }

    #[test]
    fn a_position_is_found_in_the_structure() {
        let t = tree("a:\n  bb: [x, {c: 1}]\n  d: 2\ne: 3\n");
        let at = |line, column| t.path_at(Pos { line, column });
        let shown = |p: Vec<Seg<'_>>| crate::policy::KeyPath::of(&p).to_string();
        assert_eq!(shown(at(2, 3)), "a.bb");
        assert_eq!(shown(at(2, 15)), "a.bb[1].c");
        assert_eq!(shown(at(3, 6)), "a.d");
        assert_eq!(shown(at(4, 1)), "e");
        assert_eq!(shown(at(1, 1)), "a");
    }

    #[test]
    fn scalars_keep_their_types_in_json() {
        let t = tree("a: 1\nb: -2\nc: 1.5\nd: x\ne: ~\nf: true\n");
        assert_eq!(
            t.to_json(),
            serde_json::json!({"a": 1, "b": -2, "c": 1.5, "d": "x", "e": null, "f": true})
        );
    }
}
