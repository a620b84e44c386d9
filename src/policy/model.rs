//! The policy file as data: what `serde` reads from YAML and `schemars` describes in `docs/policy.schema.json`.
//!
//! Every struct refuses unknown keys, so a misspelt requirement is an error instead of a silently missing
//! check. Optional parts are `Option`s here; [`crate::policy::Policy`] fills in the documented defaults
//! (which is what `zamburak policy check` prints). The checks that need more than one field (declared tags,
//! minted kinds, builtin argument names...) live in `validate/`.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use super::named_map::NamedMap;
pub use crate::policy::builtins::{BuiltinsConfig, VerifierSpec};
pub use crate::policy::providers::{ProviderKind, ProviderSpec};
pub use crate::policy::servers::{McpTool, ServerSpec, Source, ToolSource};

/// A Zamburak policy file (format version 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Zamburak policy")]
pub struct PolicyFile {
    /// Format version; must be 1.
    pub version: u64,
    /// `strict` (default) joins the control context into every value assigned under it; `normal` only
    /// checks it at tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// The trusted principal the assistant works for; implicitly a reader of every value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Confidentiality tags, at most 16.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Deterministic host verifiers the plan may call, by name. At most 8 distinct `mints` kinds.
    #[serde(default)]
    pub verifiers: NamedMap<VerifierSpec>,
    /// MCP servers that serve tools (`source: mcp.SERVER.TOOL`), by name.
    #[serde(default, skip_serializing_if = "NamedMap::is_empty")]
    pub servers: NamedMap<ServerSpec>,
    /// LLM providers that `builtin.llm.PROVIDER` tools send prose to, by name.
    #[serde(default, skip_serializing_if = "NamedMap::is_empty")]
    pub providers: NamedMap<ProviderSpec>,
    /// The tools the plan may call, by name.
    #[serde(default)]
    pub tools: NamedMap<ToolSpec>,
    /// The model that writes plans, as a reader: who it is, and whether it may read untrusted values
    /// (docs/semantics.md, "The planner context label"). Default `{ reader: "llm:planner", reads_untrusted:
    /// false }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planner: Option<PlannerSpec>,
    /// Run limits; every one is optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// Where the built-in tools find data. Relative paths are relative to the policy file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtins: Option<BuiltinsConfig>,
    /// What a value the person remembered (`require: known(ROLE)`) covers, and for how long
    /// (docs/semantics.md, "Remembered values").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known: Option<KnownSpec>,
}

/// The `known:` section: roles that span more than one tool argument, how long a remembered value lasts,
/// and which memories this policy shares.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KnownSpec {
    /// A role's arguments, each `TOOL.ARG`: a value remembered on one of them counts for all of them. A
    /// `known(ROLE)` whose role is not listed here covers exactly the argument it is written on.
    #[serde(default, skip_serializing_if = "NamedMap::is_empty")]
    pub roles: NamedMap<Vec<String>>,
    /// Days a remembered value lasts from the day it is remembered. Default 90, at most 3650.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry_days: Option<u32>,
    /// The name memories are kept under: policies with the same scope share them. Default: the policy
    /// file's absolute path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// Days a remembered value lasts when the policy does not say.
pub const DEFAULT_EXPIRY_DAYS: u32 = 90;
/// The longest `known.expiry_days` a policy may set: ten years.
pub const MAX_EXPIRY_DAYS: u32 = 3650;

/// How the control context propagates.
pub use crate::mode::Mode;

/// One tool the plan may call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// The implementation serving the tool: a built-in adapter or `mcp.SERVER.TOOL`. May be omitted only in
    /// policies used with `policy test`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ToolSource>,
    /// What calling the tool does to the world. `pure` tools run without checks.
    pub effect: Effect,
    /// Every argument, in positional order, with its requirements (`{}` for none).
    #[serde(default)]
    pub args: NamedMap<ArgSpec>,
    /// What the control context must satisfy at the call. Default: `trusted` unless the effect is `pure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlSpec>,
    /// How the result is labelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<ReturnsSpec>,
    /// The decision when a requirement fails. Default `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_violation: Option<OnViolation>,
    /// The store this tool writes into or reads from, when a read tool may return what a write tool wrote
    /// (docs/semantics.md, "Stores keep labels"). The files sandbox keeps its labels itself; for any other
    /// store `policy check` requires every write to meet what the read gives back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}

impl ToolSpec {
    /// `control.require`, with the default for the effect.
    pub fn control_require(&self) -> ControlRequire {
        match &self.control {
            Some(c) => c.require,
            None if self.effect == Effect::Pure => ControlRequire::Any,
            None => ControlRequire::Trusted,
        }
    }
    /// `on_violation`, default `deny`.
    pub fn on_violation(&self) -> OnViolation {
        self.on_violation.unwrap_or(OnViolation::Deny)
    }
    /// `returns`, with defaults: untrusted, no tags, readers the user only.
    pub fn returns(&self) -> ReturnsSpec {
        let r = self.returns.clone().unwrap_or_default();
        ReturnsSpec {
            integrity: Some(r.integrity.unwrap_or(IntegritySpec::Untrusted)),
            tags: Some(r.tags.unwrap_or_default()),
            readers: Some(r.readers.unwrap_or(ReadersSpec::User)),
            fields: r.fields,
            tags_when: r.tags_when,
            structure_readers: r.structure_readers,
            scan: r.scan,
        }
    }
    /// The declared argument names, in positional order.
    pub fn arg_names(&self) -> Vec<String> {
        self.args.keys().map(str::to_string).collect()
    }
}

/// What a tool call does to the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// No outside contact: runs without checks.
    Pure,
    Read,
    Write,
    Send,
    Execute,
}

/// The decision taken when a requirement of the tool fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnViolation {
    Deny,
    Confirm,
    Draft,
}

/// Requirements on the control context at a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ControlSpec {
    pub require: ControlRequire,
}

/// `trusted`: no untrusted condition may decide whether the call happens. `any`: no requirement (for local
/// reads nobody outside can observe).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ControlRequire {
    Trusted,
    Any,
}

/// Requirements on one argument. `{}` means none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    /// Any ONE of these must hold: `trusted`, `verified(KIND)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require: Option<Alternatives>,
    /// Tags the argument (and the control context) may not carry: a list, or `"*"` for every tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forbid_tags: Option<ForbidTags>,
    /// `true`: the argument carries no tag and its readers are public.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public: Option<bool>,
    /// Another argument holding recipients (a string or a list of strings); each must be a reader of this one.
    /// Naming any recipient argument, or `recipients`, means every element of every recipient argument of the
    /// tool (docs/semantics.md, "Recipients are a role").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readers_must_include: Option<String>,
    /// `true`: this argument names who receives the call's data (an address, a payee, a channel); `false`: it
    /// does not, whatever its name says. Absent: decided by its name and the tool's effect (`is_recipient` in sinks.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipient: Option<bool>,
    /// `any`: this argument's readers are deliberately not checked, which needs a `reason`. The only way to
    /// leave an argument that leaves without a readers check (a `forbid_tags` never replaces one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readers: Option<AnyReaders>,
    /// Why `readers: any` is right for this argument; `policy check` lists it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The one value of an argument's `readers`: `any`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AnyReaders {
    Any,
}

/// One integrity requirement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Requirement {
    /// Integrity `trusted`: a plan literal or a trusted source.
    Trusted,
    /// Carries the named kind, minted by a verifier for this exact value.
    Verified(String),
    /// Equals a value the person remembered for this role (docs/semantics.md, "Remembered values").
    Known(String),
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::Trusted => f.write_str("trusted"),
            Requirement::Verified(k) => write!(f, "verified({k})"),
            Requirement::Known(r) => write!(f, "known({r})"),
        }
    }
}

impl Requirement {
    /// Parses `trusted`, `verified(Kind)` or `known(role)`.
    ///
    /// ```
    /// use zamburak::policy::model::Requirement;
    /// assert_eq!(Requirement::parse("verified(Recipient)"), Some(Requirement::Verified("Recipient".into())));
    /// assert_eq!(Requirement::parse("known(payee)"), Some(Requirement::Known("payee".into())));
    /// assert_eq!(Requirement::parse("verified()"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Requirement> {
        if text == "trusted" {
            return Some(Requirement::Trusted);
        }
        if let Some(role) = text
            .strip_prefix("known(")
            .and_then(|t| t.strip_suffix(')'))
        {
            return is_identifier(role).then(|| Requirement::Known(role.to_string()));
        }
        let kind = text.strip_prefix("verified(")?.strip_suffix(')')?;
        is_identifier(kind).then(|| Requirement::Verified(kind.to_string()))
    }
}

/// An ASCII identifier: a letter or `_`, then letters, digits or `_`.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Serialize for Requirement {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Requirement {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Requirement;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`trusted`, `verified(KIND)` or `known(ROLE)`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Requirement, E> {
                Requirement::parse(s).ok_or_else(|| E::invalid_value(Unexpected::Str(s), &self))
            }
        }
        deserializer.deserialize_str(V)
    }
}

impl JsonSchema for Requirement {
    fn schema_name() -> Cow<'static, str> {
        "Requirement".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "`trusted`, `verified(KIND)` for a kind some verifier mints, or `known(ROLE)` for a \
                            value the person remembered for that role.",
            "type": "string",
            "pattern": "^(trusted|(verified|known)\\([A-Za-z_][A-Za-z0-9_]*\\))$",
        })
    }
}

/// The alternatives of `require`: one requirement, or a list of which any one must hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alternatives(pub Vec<Requirement>);

impl Serialize for Alternatives {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Alternatives {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Alternatives;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "`trusted`, `verified(KIND)`, `known(ROLE)`, or a non-empty list of them",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Alternatives, E> {
                let r = Requirement::parse(s)
                    .ok_or_else(|| E::invalid_value(Unexpected::Str(s), &self))?;
                Ok(Alternatives(vec![r]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Alternatives, A::Error> {
                let mut items = Vec::new();
                while let Some(r) = seq.next_element::<Requirement>()? {
                    items.push(r);
                }
                if items.is_empty() {
                    // An empty "any of" can never hold; say so rather than deny every call.
                    return Err(de::Error::custom(
                        "`require` is an empty list, expected `trusted`, `verified(KIND)`, `known(ROLE)`, or a non-empty list of them",
                    ));
                }
                Ok(Alternatives(items))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl JsonSchema for Alternatives {
    fn schema_name() -> Cow<'static, str> {
        "Alternatives".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let one = generator.subschema_for::<Requirement>();
        json_schema!({
            "description": "One requirement, or a list of which any one must hold.",
            "oneOf": [one.clone(), { "type": "array", "items": one, "minItems": 1 }],
        })
    }
}

/// Tags an argument may not carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForbidTags {
    /// `"*"`: every tag.
    All,
    List(Vec<String>),
    /// `{ tags: "*" | [..], on_violation: deny }`: the requirement decides its own violations instead of
    /// the tool's `on_violation` (so a secret can be made never approvable). The inner value is never
    /// `Deciding`.
    Deciding(Box<ForbidTags>, OnViolation),
}

impl ForbidTags {
    /// The tags forbidden, without the requirement's own decision.
    pub fn tags(&self) -> &ForbidTags {
        match self {
            ForbidTags::Deciding(inner, _) => inner,
            other => other,
        }
    }

    /// The requirement's own `on_violation`, when it has one.
    pub fn on_violation(&self) -> Option<OnViolation> {
        match self {
            ForbidTags::Deciding(_, v) => Some(*v),
            _ => None,
        }
    }
}

impl Serialize for ForbidTags {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ForbidTags::All => serializer.serialize_str("*"),
            ForbidTags::List(tags) => tags.serialize(serializer),
            ForbidTags::Deciding(inner, on_violation) => {
                use serde::ser::SerializeMap;
                let mut m = serializer.serialize_map(Some(2))?;
                m.serialize_entry("tags", inner)?;
                m.serialize_entry("on_violation", on_violation)?;
                m.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ForbidTags {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ForbidTags;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "\"*\" (every tag), a list of tags, or `{ tags: ..., on_violation: deny }`",
                )
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<ForbidTags, A::Error> {
                let mut tags: Option<ForbidTags> = None;
                let mut on_violation: Option<OnViolation> = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "tags" if tags.is_none() => tags = Some(map.next_value()?),
                        "on_violation" if on_violation.is_none() => {
                            on_violation = Some(map.next_value()?)
                        }
                        "tags" | "on_violation" => {
                            return Err(de::Error::custom(super::error::duplicate_key_message(
                                &key,
                            )));
                        }
                        other => {
                            return Err(de::Error::unknown_field(other, &["tags", "on_violation"]));
                        }
                    }
                }
                let tags = tags.ok_or_else(|| de::Error::missing_field("tags"))?;
                let on_violation =
                    on_violation.ok_or_else(|| de::Error::missing_field("on_violation"))?;
                if matches!(tags, ForbidTags::Deciding(..)) {
                    return Err(de::Error::custom("`tags` must be \"*\" or a list of tags"));
                }
                Ok(ForbidTags::Deciding(Box::new(tags), on_violation))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<ForbidTags, E> {
                if s == "*" {
                    Ok(ForbidTags::All)
                } else {
                    Err(E::invalid_value(Unexpected::Str(s), &self))
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ForbidTags, A::Error> {
                let mut tags = Vec::new();
                while let Some(t) = seq.next_element::<String>()? {
                    tags.push(t);
                }
                Ok(ForbidTags::List(tags))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl JsonSchema for ForbidTags {
    fn schema_name() -> Cow<'static, str> {
        "ForbidTags".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "\"*\" for every tag, or a list of declared tags; or both under `tags` with the requirement's own `on_violation`.",
            "oneOf": [
                { "const": "*" },
                { "type": "array", "items": { "type": "string" } },
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["tags", "on_violation"],
                    "properties": {
                        "tags": { "oneOf": [{ "const": "*" }, { "type": "array", "items": { "type": "string" } }] },
                        "on_violation": { "enum": ["deny", "confirm", "draft"] }
                    }
                }
            ],
        })
    }
}

/// Integrity of a tool result or of one of its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IntegritySpec {
    Trusted,
    Untrusted,
}

/// How a tool's result is labelled.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReturnsSpec {
    /// Default `untrusted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<IntegritySpec>,
    /// Declared tags the result carries. Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Who may read the result. Default `user` (the user only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readers: Option<ReadersSpec>,
    /// Overrides for top-level keys of a dict result (or of each dict element of a list result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<NamedMap<FieldSpec>>,
    /// Tags added to the whole result when an argument matches a glob, e.g. a file read from `secrets/**`
    /// is `AUTH_SECRET` (see `policy::path_tags`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags_when: Option<Vec<TagsWhen>>,
    /// Readers of a list result's structure (its length and order): `public`, `user` or a list. Default: the
    /// result's readers intersected with every element's (docs/semantics.md, "Propagation"). Declare it for a
    /// tool whose result count and order are not secret, such as the inbox; elements keep their own readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure_readers: Option<ReadersSpec>,
    /// Content scanners run over every string of the result: `secrets` adds `AUTH_SECRET`, `injection` adds
    /// `SUSPECT_INJECTION` (both tags must be declared). A scanner only ever adds its tag, to the whole
    /// result (docs/policy.md, "Scanners").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan: Option<Vec<super::scan::Scanner>>,
}

/// `{ arg: path, glob: "secrets/**", tags: [AUTH_SECRET] }`: when argument `arg` is a path matching
/// `glob`, the result carries `tags` too.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TagsWhen {
    pub arg: String,
    /// A glob over `/`-separated relative paths: `*` stays within one segment, `**` spans any number.
    pub glob: String,
    pub tags: Vec<String>,
}

/// Overrides for one field of a result: what is given replaces the result's default.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<IntegritySpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
}

/// Who may read a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadersSpec {
    /// Anyone.
    Public,
    /// The policy's user only.
    User,
    /// These principals (and the user).
    List(Vec<String>),
    /// Per record: the addresses found in `fields` (a string or a list of strings each), the principals in
    /// `also` (readers of every part of the result, such as the quarantined model), and the user.
    FromFields {
        fields: Vec<String>,
        also: Vec<String>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FromFields {
    from_fields: Vec<String>,
    #[serde(default)]
    also: Vec<String>,
}

impl Serialize for ReadersSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ReadersSpec::Public => serializer.serialize_str("public"),
            ReadersSpec::User => serializer.serialize_str("user"),
            ReadersSpec::List(names) => names.serialize(serializer),
            ReadersSpec::FromFields { fields, also } => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("from_fields", fields)?;
                if !also.is_empty() {
                    map.serialize_entry("also", also)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ReadersSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ReadersSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "`public`, `user`, a list of principals, or `{from_fields: [FIELD, ...], also: [..]}`",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<ReadersSpec, E> {
                match s {
                    "public" => Ok(ReadersSpec::Public),
                    "user" => Ok(ReadersSpec::User),
                    _ => Err(E::invalid_value(Unexpected::Str(s), &self)),
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ReadersSpec, A::Error> {
                let mut names = Vec::new();
                while let Some(n) = seq.next_element::<String>()? {
                    names.push(n);
                }
                Ok(ReadersSpec::List(names))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ReadersSpec, A::Error> {
                // Going through the map access keeps the YAML deserializer underneath, so a mistake inside
                // still reports its own line and column.
                let inner = FromFields::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(ReadersSpec::FromFields {
                    fields: inner.from_fields,
                    also: inner.also,
                })
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl JsonSchema for ReadersSpec {
    fn schema_name() -> Cow<'static, str> {
        "ReadersSpec".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "`public`, `user` (the user only), a list of principals, or {from_fields: [...]} \
                            (per record, the addresses in those fields), with `also: [...]` principals \
                            who may read every part of the result.",
            "oneOf": [
                { "enum": ["public", "user"] },
                { "type": "array", "items": { "type": "string" } },
                {
                    "type": "object",
                    "properties": {
                        "from_fields": { "type": "array", "items": { "type": "string" }, "minItems": 1 },
                        "also": { "type": "array", "items": { "type": "string" } },
                    },
                    "required": ["from_fields"],
                    "additionalProperties": false,
                },
            ],
        })
    }
}

/// The planner as a principal (docs/semantics.md, "What the planner and the person are told"). Missing
/// values take the defaults of [`PlannerSpec::resolved`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlannerSpec {
    /// The principal the planner reads as: a value goes back to it only when this principal is among its
    /// readers (or it is public). Default `llm:planner`; it may not be the `user`, who reads everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader: Option<String>,
    /// `true`: untrusted values the planner may read go back to it, and every later plan of the session
    /// has its literals labelled with what it read (the planner context label). Default `false`: only
    /// trusted values go back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_untrusted: Option<bool>,
    /// `normal`: a planner model's plans (`mcp serve`) may run in the policy's `mode: normal`, whose labels
    /// do not follow a value set under a condition (docs/semantics.md, "Control context and modes").
    /// Without it `mcp serve` refuses a normal-mode policy: the guarantee of "What is protected" is strict's. When given it must
    /// agree with `mode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
}

/// The planner with every default applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResolvedPlanner {
    /// The planner's principal, trimmed and lowercased as the label space stores principals.
    pub reader: String,
    pub reads_untrusted: bool,
}

impl PlannerSpec {
    /// The principal a planner reads as when the policy names none.
    pub const DEFAULT_READER: &str = "llm:planner";

    /// ```
    /// use zamburak::policy::model::PlannerSpec;
    /// let p = PlannerSpec { reader: Some(" LLM:Me ".into()), ..PlannerSpec::default() }.resolved();
    /// assert_eq!((p.reader.as_str(), p.reads_untrusted), ("llm:me", false));
    /// assert_eq!(PlannerSpec::default().resolved().reader, "llm:planner");
    /// ```
    pub fn resolved(&self) -> ResolvedPlanner {
        ResolvedPlanner {
            reader: self
                .reader
                .as_deref()
                .unwrap_or(PlannerSpec::DEFAULT_READER)
                .trim()
                .to_ascii_lowercase(),
            reads_untrusted: self.reads_untrusted.unwrap_or(false),
        }
    }
}

/// Run limits. Missing values take the defaults of [`Limits::resolved`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Wall-clock budget of a run, in milliseconds. Default 5000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Most tool calls in one run. Default 200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u32>,
    /// Deepest plan recursion. Default 200.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_recursion: Option<u32>,
    /// Most memory the plan's interpreter may hold, in MiB (values, the program, its call stack). Default
    /// 512, at most 65536.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory_mb: Option<u32>,
}

/// Limits with every default applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ResolvedLimits {
    pub timeout_ms: u64,
    pub max_tool_calls: u32,
    pub max_recursion: u32,
    pub max_memory_mb: u32,
}

impl Limits {
    pub const DEFAULT_TIMEOUT_MS: u64 = 5000;
    pub const DEFAULT_MAX_TOOL_CALLS: u32 = 200;
    pub const DEFAULT_MAX_RECURSION: u32 = 200;
    pub const DEFAULT_MAX_MEMORY_MB: u32 = 512;
    /// The largest `max_memory_mb` accepted (64 GiB).
    pub const MAX_MAX_MEMORY_MB: u32 = 65536;

    /// ```
    /// use zamburak::policy::model::Limits;
    /// let l = Limits { max_tool_calls: Some(3), ..Limits::default() }.resolved();
    /// assert_eq!((l.timeout_ms, l.max_tool_calls, l.max_recursion), (5000, 3, 200));
    /// assert_eq!(l.max_memory_mb, 512);
    /// ```
    pub fn resolved(&self) -> ResolvedLimits {
        ResolvedLimits {
            timeout_ms: self.timeout_ms.unwrap_or(Self::DEFAULT_TIMEOUT_MS),
            max_tool_calls: self.max_tool_calls.unwrap_or(Self::DEFAULT_MAX_TOOL_CALLS),
            max_recursion: self.max_recursion.unwrap_or(Self::DEFAULT_MAX_RECURSION),
            max_memory_mb: self.max_memory_mb.unwrap_or(Self::DEFAULT_MAX_MEMORY_MB),
        }
    }
}
