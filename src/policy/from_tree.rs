//! The typed policy model read from the positioned tree, so that a policy's YAML is parsed once, not twice.
//!
//! Loading a policy needs the positioned tree (policy::tree) for its checks and error positions, and the
//! typed model ([`super::model::PolicyFile`]). Reading the model with the YAML deserializer means parsing
//! the text a second time; this module reads it from the tree instead, and refuses (returns `None`)
//! whenever it cannot be sure the YAML deserializer would have read the same value. The caller then reads
//! the text with the YAML deserializer, exactly as before, so a refusal costs time and never changes what
//! is accepted, what is refused, or any error.
//!
//! Why a value read here is the value serde_saphyr would read (checked against it by the tests below, over
//! every policy of the repository and random edits of the bundled one):
//!
//! * The tree is what serde_saphyr's `deserialize_any` reported for every value node, and its
//!   `deserialize_string` for every key (policy::tree). A text without `!` has no YAML tags, and only tags
//!   make serde_saphyr treat a node differently depending on the visitor (`!!binary`, `!Variant` enum
//!   tags, tagged nodes buffered as maps), so a text containing `!` is refused outright.
//! * Each request is answered only from the node kind that serde_saphyr's own method would have read the
//!   same way, and refused otherwise:
//!   - `deserialize_any` replays the node. For keys (which the tree holds as text) only a plain word that
//!     no YAML type resolves (not a boolean, null, number or non-finite float spelling) is answered, as a
//!     string, which is what serde_saphyr's `deserialize_any` resolves such a word to.
//!   - strings and identifiers: a string node only. A scalar `deserialize_any` resolved to a string is
//!     neither null-like nor tagged, and `deserialize_str`/`deserialize_string` then return the same text.
//!   - `bool`: a boolean node only (both parse it with the same YAML 1.1 rule).
//!   - `u8`..`u64`: an unsigned integer node only (both parse the text with the same `parse_int_unsigned`,
//!     which fails when the value does not fit the narrower type; so does the conversion here).
//!   - `Option`: `None` for a null node, else `Some`: both decide with the same `scalar_is_null`.
//!   - sequences, maps and structs: the matching container node; enums: a string node as a unit variant.
//!   - everything else (signed integers, floats, chars, bytes, unit, map-form enums, ignored values) is
//!     refused; the model does not ask for them outside the internally tagged verifiers, which serde buffers
//!     through `deserialize_any` and so sees the replayed node.

use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Visitor};

use super::tree::{Node, NodeKind, Scalar};

/// Reads `T` from `tree`, the positioned tree of `text`; `None` when the YAML deserializer must read the
/// text instead (see the module documentation).
pub(crate) fn read<T: DeserializeOwned>(text: &str, tree: &Node) -> Option<T> {
    if text.contains('!') {
        return None;
    }
    T::deserialize(NodeDe(tree)).ok()
}

/// "Not read here": the message is never shown, the caller falls back to the YAML deserializer.
#[derive(Debug)]
struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not read from the tree")
    }
}

impl std::error::Error for Refused {}

impl de::Error for Refused {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Refused
    }
}

/// Requests this module does not answer.
macro_rules! refuse {
    ($($method:ident)*) => {
        $(fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Refused> {
            Err(Refused)
        })*
    };
}

/// The tuple and unit-struct requests, which no policy type makes: refused by both deserializers.
macro_rules! refuse_shapes {
    () => {
        fn deserialize_unit_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            _: V,
        ) -> Result<V::Value, Refused> {
            Err(Refused)
        }
        fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Refused> {
            Err(Refused)
        }
        fn deserialize_tuple_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            _: usize,
            _: V,
        ) -> Result<V::Value, Refused> {
            Err(Refused)
        }
    };
}

struct NodeDe<'a>(&'a Node);

impl NodeDe<'_> {
    fn scalar(&self) -> Option<&Scalar> {
        match &self.0.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }
    fn unsigned(&self) -> Result<u64, Refused> {
        match self.scalar() {
            Some(Scalar::UInt(u)) => Ok(*u),
            _ => Err(Refused),
        }
    }
}

impl<'de> de::Deserializer<'de> for NodeDe<'_> {
    type Error = Refused;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match &self.0.kind {
            NodeKind::Map(entries) => visitor.visit_map(Entries(entries.iter(), None)),
            NodeKind::Seq(items) => visitor.visit_seq(Items(items.iter())),
            NodeKind::Scalar(s) => match s {
                Scalar::Null => visitor.visit_unit(),
                Scalar::Bool(b) => visitor.visit_bool(*b),
                Scalar::Int(i) => visitor.visit_i64(*i),
                Scalar::UInt(u) => visitor.visit_u64(*u),
                Scalar::Float(f) => visitor.visit_f64(*f),
                Scalar::Str(s) => visitor.visit_str(s),
            },
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match self.scalar() {
            Some(Scalar::Str(s)) => visitor.visit_str(s),
            _ => Err(Refused),
        }
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        self.deserialize_str(visitor)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match self.scalar() {
            Some(Scalar::Bool(b)) => visitor.visit_bool(*b),
            _ => Err(Refused),
        }
    }

    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        visitor.visit_u8(u8::try_from(self.unsigned()?).map_err(|_| Refused)?)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        visitor.visit_u16(u16::try_from(self.unsigned()?).map_err(|_| Refused)?)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        visitor.visit_u32(u32::try_from(self.unsigned()?).map_err(|_| Refused)?)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        visitor.visit_u64(self.unsigned()?)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match self.scalar() {
            Some(Scalar::Null) => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match &self.0.kind {
            NodeKind::Seq(items) => visitor.visit_seq(Items(items.iter())),
            _ => Err(Refused),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match &self.0.kind {
            NodeKind::Map(entries) => visitor.visit_map(Entries(entries.iter(), None)),
            _ => Err(Refused),
        }
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Refused> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Refused> {
        match self.scalar() {
            Some(Scalar::Str(s)) => visitor.visit_enum(UnitVariant(s)),
            _ => Err(Refused),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Refused> {
        // serde_saphyr hands itself on for every newtype name but its own `__yaml_*` wrappers.
        visitor.visit_newtype_struct(self)
    }

    refuse!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
            deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char deserialize_bytes
            deserialize_byte_buf deserialize_unit deserialize_ignored_any);

    refuse_shapes!();
}

/// A mapping key: the tree holds its text (what serde_saphyr's `deserialize_string` read).
struct KeyDe<'a>(&'a str);

/// Whether serde_saphyr's `deserialize_any` resolves `word`, written as a plain scalar, to the string
/// `word` itself: an ASCII word starting with a letter (no number, sign, `.`, `~` or empty string) that is
/// no YAML 1.1 boolean, no null and no float Rust's parser would read (`inf`, `nan`, `infinity`). Other
/// keys may have been quoted or not; the tree no longer says, so they are refused.
fn is_plain_word(word: &str) -> bool {
    let mut chars = word.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(
            word.to_ascii_lowercase().as_str(),
            "y" | "yes"
                | "n"
                | "no"
                | "true"
                | "false"
                | "on"
                | "off"
                | "null"
                | "inf"
                | "infinity"
                | "nan"
        )
}

impl<'de> de::Deserializer<'de> for KeyDe<'_> {
    type Error = Refused;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        if is_plain_word(self.0) {
            visitor.visit_str(self.0)
        } else {
            Err(Refused)
        }
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        visitor.visit_str(self.0)
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        visitor.visit_str(self.0)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        visitor.visit_str(self.0)
    }

    refuse!(deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
            deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
            deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char deserialize_bytes
            deserialize_byte_buf deserialize_option deserialize_unit deserialize_seq deserialize_map
            deserialize_ignored_any);

    refuse_shapes!();
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value, Refused> {
        Err(Refused)
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Refused> {
        Err(Refused)
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Refused> {
        Err(Refused)
    }
}

/// A mapping's entries in file order (merged entries included: the tree holds them as serde_saphyr
/// delivered them).
struct Entries<'a>(std::slice::Iter<'a, super::tree::Entry>, Option<&'a Node>);

impl<'de> de::MapAccess<'de> for Entries<'_> {
    type Error = Refused;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Refused> {
        match self.0.next() {
            Some(entry) => {
                self.1 = Some(&entry.value);
                seed.deserialize(KeyDe(&entry.key)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Refused> {
        match self.1.take() {
            Some(value) => seed.deserialize(NodeDe(value)),
            None => Err(Refused),
        }
    }
}

struct Items<'a>(std::slice::Iter<'a, Node>);

impl<'de> de::SeqAccess<'de> for Items<'_> {
    type Error = Refused;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Refused> {
        match self.0.next() {
            Some(item) => seed.deserialize(NodeDe(item)).map(Some),
            None => Ok(None),
        }
    }
}

/// An enum written as a plain word: serde_saphyr reads it as that unit variant.
struct UnitVariant<'a>(&'a str);

impl<'de> de::EnumAccess<'de> for UnitVariant<'_> {
    type Error = Refused;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Refused> {
        let variant = seed.deserialize(KeyDe(self.0))?;
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for UnitVariant<'_> {
    type Error = Refused;

    fn unit_variant(self) -> Result<(), Refused> {
        Ok(())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, Refused> {
        Err(Refused)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Refused> {
        Err(Refused)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Refused> {
        Err(Refused)
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use proptest::prelude::*;

    use super::super::load::{Typed, yaml_options};
    use super::super::model::PolicyFile;
    use super::super::tree;
    use super::*;
    use crate::policy::{BUNDLED_DEFAULT, Policy};

    /// The claim this module rests on: whatever it reads, the YAML deserializer reads the same.
    fn typed_agrees(text: &str) -> Option<PolicyFile> {
        let tree = tree::parse(text, yaml_options()).ok()?;
        let read = read::<PolicyFile>(text, &tree)?;
        let saphyr = serde_saphyr::from_str_with_options::<PolicyFile>(text, yaml_options());
        assert_eq!(saphyr.as_ref().ok(), Some(&read), "{text}");
        Some(read)
    }

    /// Loading with the model read from the tree and loading with it read from the text agree: the same
    /// policy, or the same error (kind, position, key path, message, hint, snippet).
    fn loads_alike(text: &str) -> Result<Policy, crate::policy::PolicyError> {
        let load = |typed| {
            Policy::read_checked(text, "p.yaml", Path::new("/base"), typed)
                .map_err(|e| e.with_source(text))
        };
        let new = load(Typed::FromTree);
        let old = load(Typed::FromText);
        assert_eq!(new, old, "{text}");
        if let (Err(new), Err(old)) = (&new, &old) {
            assert_eq!(new.to_string(), old.to_string());
        }
        typed_agrees(text);
        new
    }

    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else if path
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "md")
            {
                out.push(path);
            }
        }
    }

    /// The YAML of the repository: every `.yaml` file of the places that hold policies, and every
    /// ```yaml block of the documentation.
    fn repository_yaml() -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        for dir in [
            "policies",
            "examples",
            "tests",
            "bench",
            "fuzz/seeds",
            "python/tests",
            "docs",
        ] {
            files(&root.join(dir), &mut paths);
        }
        paths.push(root.join("README.md"));
        paths.sort();
        let mut out = Vec::new();
        for path in paths {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let name = path.display().to_string();
            if path.extension().is_some_and(|e| e == "md") {
                for (i, block) in text.split("```yaml\n").skip(1).enumerate() {
                    let block = block.split("```").next().unwrap_or("");
                    out.push((format!("{name} block {i}"), block.to_string()));
                }
            } else {
                out.push((name, text));
            }
        }
        out
    }

    #[test]
    fn every_yaml_of_the_repository_loads_alike_and_policies_skip_the_second_parse() {
        let mut loaded = 0;
        let mut refused = 0;
        for (name, text) in repository_yaml() {
            match loads_alike(&text) {
                Ok(_) => {
                    loaded += 1;
                    // A policy the repository ships (no tags in any of them) is read once.
                    assert!(!text.contains('!'), "{name}");
                    assert!(typed_agrees(&text).is_some(), "{name} was parsed twice");
                }
                Err(_) => refused += 1,
            }
        }
        // The corpus is what we think it is: the shipped policies, the fixtures and the bad examples.
        assert!(loaded >= 20, "{loaded} policies loaded");
        assert!(refused >= 30, "{refused} files refused");
    }

    /// Broken policies, and valid ones the two readers could read differently: each loads alike.
    const CASES: &[&str] = &[
        // Not a mapping, empty, several documents, syntax.
        "",
        "~",
        "# only a comment\n",
        "[1]\n",
        "- version: 1\n",
        "version\n",
        "42\n",
        "version: 1\n---\nversion: 1\n",
        "version: 1\ntools: [\n",
        "version: 1\n\ttools: {}\n",
        "version: 1\nversion: 1\n",
        "version: 1\ntools:\n  a: { effect: read }\n  a: { effect: read }\n",
        "version: 1\ntools:\n  a: { effect: read }\n  \"a\": { effect: read }\n",
        // Types and values.
        "version: \"1\"\n",
        "version: 2\n",
        "version: -1\n",
        "version: -0\n",
        "version: 0x1\n",
        "version: +1\n",
        "version: 01\n",
        "version: 1.0\n",
        "version: 1e0\n",
        "version: 18446744073709551616\n",
        "version: 1\nuser: 123\n",
        "version: 1\nuser: \"123\"\n",
        "version: 1\nuser: yes\n",
        "version: 1\nuser: ~\n",
        "version: 1\nuser: ''\n",
        "version: 1\nuser: .inf\n",
        "version: 1\nuser: .nan\n",
        "version: 1\nuser: 1e999\n",
        "version: 1\nuser: [a]\n",
        "version: 1\nmode: normal\n",
        "version: 1\nmode: \"normal\"\n",
        "version: 1\nmode: { normal: ~ }\n",
        "version: 1\nmode: yes\n",
        "version: 1\nmode: 1\n",
        "version: 1\nmode: ~\n",
        "version: 1\nmode:\n",
        "version: 1\ntags: x\n",
        "version: 1\ntags: [secret, 1, true]\n",
        "version: 1\ntags: [\"1\"]\n",
        "version: 1\nlimits: { max_tool_calls: 4294967296 }\n",
        "version: 1\nlimits: { max_tool_calls: \"5\" }\n",
        "version: 1\nlimits: { max_tool_calls: 5, timeout_ms: 0o17 }\n",
        "version: 1\nlimits: { max_tool_calls: 5.0 }\n",
        "version: 1\nlimits: { max_tool_calls: -5 }\n",
        "version: 1\nlimits: { max_tool_calls: ~ }\n",
        "version: 1\nlimits: ~\n",
        "version: 1\nlimits: []\n",
        "version: 1\nplanner: { reads_untrusted: yes }\n",
        "version: 1\nplanner: { reads_untrusted: \"true\" }\n",
        "version: 1\nplanner: { reads_untrusted: 1 }\n",
        // Unknown keys, top-level and deep.
        "version: 1\ntoolz: {}\n",
        "version: 1\n1: {}\n",
        "version: 1\ntrue: {}\n",
        "version: 1\n~: {}\n",
        "version: 1\n? [a]\n: 1\n",
        "version: 1\ntools:\n  t:\n    effect: read\n    args:\n      a: { require: trusted, bogus: 1 }\n",
        "version: 1\ntools:\n  t:\n    effect: read\n    returns: { readers: { from_fields: [to], oops: [] } }\n",
        "version: 1\ntools:\n  1: { effect: read }\n",
        "version: 1\ntools:\n  t: { effect: read, args: { 0: {} } }\n",
        // Verifiers: shape errors, and entries a buffering reader could read differently.
        "version: 1\nverifiers:\n  v:\n    kind: email_allowlist\n    allow: []\n    mint: X\n",
        "version: 1\nverifiers:\n  v: { kind: regex, mints: X }\n",
        "version: 1\nverifiers:\n  v: { allow: [], mints: X }\n",
        "version: 1\nverifiers:\n  v: { kind: email_allowlist, allow: x, mints: X }\n",
        "version: 1\nverifiers:\n  v: [kind, email_allowlist]\n",
        "version: 1\nverifiers:\n  v: { kind: email_allowlist, 0: [\"*@x.org\"], mints: X }\n",
        "version: 1\nverifiers:\n  v: { kind: email_allowlist, allow: [a], \"allow\": [b], mints: X }\n",
        "version: 1\nverifiers:\n  v: { kind: email_allowlist, allow: [a], mints: X, kind: one_of }\n",
        "version: 1\nverifiers:\n  v: { kind: number_range, min: 0, max: 10, mints: Small }\n",
        "version: 1\nverifiers:\n  v: { kind: number_range, min: -0, max: 1e1, mints: Small }\n",
        "version: 1\nverifiers:\n  v: { kind: number_range, min: .nan, max: 10, mints: Small }\n",
        "version: 1\nverifiers:\n  v: { kind: number_range, min: \"0\", max: 10, mints: Small }\n",
        "version: 1\nverifiers:\n  v: { kind: url_allowlist, schemes: [https], hosts: [a.org], paths: ~, mints: U }\n",
        "version: 1\nverifiers:\n  v: { kind: url_allowlist, schemes: [https], hosts: [a.org], paths: .nan, mints: U }\n",
        "version: 1\nverifiers:\n  v: { kind: 0, allow: [], mints: X }\n",
        "version: 1\nverifiers:\n  v: { kind: \"email_allowlist\", \"allow\": [], mints: 5 }\n",
        "version: 1\nverifiers:\n  v: { kind: one_of, values: [a, 1, yes], mints: X }\n",
        "version: 1\nverifiers:\n  v: { kind: one_of, values: [a, \"1\"], mints: X }\n",
        "version: 1\nverifiers: []\n",
        "version: 1\nverifiers: ~\n",
        // Tags: read from the text.
        "version: !!int 1\n",
        "version: 1\nuser: !!str 123\n",
        "version: 1\nuser: !!binary bWVAZXhhbXBsZS5jb20=\n",
        "version: 1\nmode: !normal ~\n",
        "version: 1\nmode: !normal strict\n",
        "version: 1\nmode: !strict normal\n",
        "version: 1\nverifiers:\n  v: !email_allowlist { allow: [], mints: X }\n",
        "!!map { version: 1 }\n",
        // Anchors, aliases, merge keys.
        "version: 1\ntags: &t [a, b]\nverifiers:\n  v: { kind: one_of, values: *t, mints: X }\n",
        "version: 1\nx: &a 1\n",
        "version: 1\ntools:\n  a: &t { effect: read }\n  b: *t\n",
        "version: 1\ntools:\n  a: &t { effect: read }\n  b: { <<: *t, source: builtin.mail.get }\n",
        "version: 1\ntools:\n  a: &t { effect: read }\n  b: { <<: *t, effect: send }\n",
        "version: 1\ntools:\n  a: { effect: read }\n  b: { <<: [], effect: read }\n",
        "version: 1\ntools:\n  a: &a { effect: read, x: *a }\n",
        // Checks across fields (validate).
        "version: 1\nuser: \" \"\n",
        "version: 1\ntools:\n  t: { effect: send, args: { to: { require: verified(Nope) } } }\n",
        "version: 1\ntools:\n  len: { effect: read }\n",
        "version: 1\ntools:\n  _t: { effect: read }\n",
        "version: 1\ntools:\n  t: { effect: read, returns: { tags: [nope] } }\n",
        "version: 1\nplanner: { reader: me@example.com }\nuser: me@example.com\n",
        "version: 1\nbuiltins: { web: { allow: [\"not a url\"] } }\n",
    ];

    #[test]
    fn broken_and_borderline_policies_load_alike() {
        for text in CASES {
            let _ = loads_alike(text);
        }
    }

    #[test]
    fn the_readers_disagree_where_they_should() {
        // Read from the tree where that is sure; from the text otherwise.
        let read = |text: &str| -> Option<PolicyFile> {
            let tree = tree::parse(text, yaml_options()).ok()?;
            super::read::<PolicyFile>(text, &tree)
        };
        assert!(
            read("version: 1\nuser: a\nmode: normal\nlimits: { max_tool_calls: 5 }\n").is_some()
        );
        assert!(
            read("version: 1\nverifiers:\n  v: { kind: number_range, min: 0, max: 1, mints: S }\n")
                .is_some()
        );
        // serde_saphyr reads `123` as the string "123" for a string; the tree holds a number.
        assert!(read("version: 1\nuser: 123\n").is_none());
        assert!(loads_alike("version: 1\nuser: 123\n").is_ok());
        // A tag anywhere, even one that changes nothing.
        assert!(read("version: 1\nuser: !!str a\n").is_none());
        // A key word YAML resolves to a boolean, read through `deserialize_any` (the verifiers' buffer).
        assert!(
            read("version: 1\nverifiers:\n  v: { kind: one_of, values: [a], mints: X, yes: 1 }\n")
                .is_none()
        );
        assert!(is_plain_word("allow") && is_plain_word("Mints_2"));
        for word in [
            "", "1", "y", "No", "NULL", "Infinity", "nan", "_x", "a-b", "a.b", "é",
        ] {
            assert!(!is_plain_word(word), "{word}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Arbitrary edits of the bundled policy load alike.
        #[test]
        fn edited_policies_load_alike(start in 0usize..BUNDLED_DEFAULT.len(), len in 0usize..40,
                                      insert in "[ -~\n]{0,12}") {
            let mut text = BUNDLED_DEFAULT.to_string();
            let end = (start + len).min(text.len());
            prop_assume!(text.is_char_boundary(start) && text.is_char_boundary(end));
            text.replace_range(start..end, &insert);
            let _ = loads_alike(&text);
        }

        /// Scalars of every shape, in places that want a string, a number, a boolean or an enum.
        #[test]
        fn odd_scalars_load_alike(value in prop::sample::select(vec![
            "1", "-1", "-0", "+1", "0x1f", "0o7", "0b1", "01", "1_000", "1.5", "-.5", "1e3", ".inf", "-.inf",
            ".nan", "1e999", "yes", "No", "on", "OFF", "y", "~", "null", "''", "\"\"", "\"1\"", "'yes'",
            "normal", "strict", "read", "\"read\"", "x y", "[]", "{}", "[a]", "{a: 1}", "|\n    block",
            "\"a\\tb\"", "é", "2001-01-01",
        ]), slot in 0usize..8) {
            let text = match slot {
                0 => format!("version: {value}\n"),
                1 => format!("version: 1\nuser: {value}\n"),
                2 => format!("version: 1\nmode: {value}\n"),
                3 => format!("version: 1\nlimits: {{ max_tool_calls: {value} }}\n"),
                4 => format!("version: 1\nplanner: {{ reads_untrusted: {value} }}\n"),
                5 => format!("version: 1\ntools:\n  t:\n    effect: {value}\n"),
                6 => format!("version: 1\nverifiers:\n  v: {{ kind: number_range, min: {value}, max: 9, mints: N }}\n"),
                _ => format!("version: 1\nverifiers:\n  v: {{ kind: one_of, values: [{value}], mints: N }}\n"),
            };
            let _ = loads_alike(&text);
        }
    }
}
