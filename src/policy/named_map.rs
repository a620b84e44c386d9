//! A string-keyed map that keeps the order of the policy file.
//!
//! Order matters: a tool's `args` bind positionally in the order they are declared, and reasons, the
//! normalised output of `policy check` and the label space follow the file's order. A `Vec` of pairs is
//! enough for maps of a few dozen entries and avoids a dependency feature that would rebuild half the tree.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Entries in file order. Duplicate keys are refused when deserializing.
///
/// ```
/// use zamburak::policy::model::NamedMap;
/// let m: NamedMap<u32> = serde_json::from_str(r#"{"b": 1, "a": 2}"#).unwrap();
/// assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "a"]);
/// assert_eq!(m.get("a"), Some(&2));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedMap<V>(pub Vec<(String, V)>);

impl<V> Default for NamedMap<V> {
    fn default() -> Self {
        NamedMap(Vec::new())
    }
}

impl<V> NamedMap<V> {
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    /// The position of `key` in file order.
    pub fn position(&self, key: &str) -> Option<usize> {
        self.0.iter().position(|(k, _)| k == key)
    }
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut V)> {
        self.0.iter_mut().map(|(k, v)| (k.as_str(), v))
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<V: Serialize> Serialize for NamedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for NamedMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
            type Value = NamedMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping from names to entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(String, V)> = Vec::new();
                while let Some(key) = access.next_key::<String>()? {
                    if entries.iter().any(|(k, _)| *k == key) {
                        return Err(serde::de::Error::custom(
                            super::error::duplicate_key_message(&key),
                        ));
                    }
                    let value = access.next_value()?;
                    entries.push((key, value));
                }
                Ok(NamedMap(entries))
            }
        }
        deserializer.deserialize_map(MapVisitor(PhantomData))
    }
}

impl<V: JsonSchema> JsonSchema for NamedMap<V> {
    fn schema_name() -> Cow<'static, str> {
        format!("NamedMap_{}", V::schema_name()).into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let value = generator.subschema_for::<V>();
        json_schema!({
            "type": "object",
            "additionalProperties": value,
        })
    }
}
