//! JSON Schema to Python types, for stubs a type checker reads: `str`, `int`, `float`, `bool`, `None`,
//! `list[...]`, `dict[str, ...]`, `Literal[...]`, unions, and named types (a `TypedDict` for an object with
//! properties, an alias for a `$defs` entry that is not one).
//!
//! Schemas come from MCP servers, so they are outside input: every shape is accepted and none makes this
//! panic or run long. A schema nested deeper than [`MAX_DEPTH`], a document of more than [`MAX_NODES`]
//! schemas, a record of more than [`MAX_FIELDS`] keys, a union of more than [`MAX_UNION`] members and a
//! `$ref` that does not resolve all become `object` (known to be something, nothing more). A schema that
//! allows any value (`{}`, `true`, an array without `items`) is `Any`: the plan may use such a value as it
//! likes, and the run checks it.
//!
//! Names are Python identifiers that `from zamburak_tools import *` exports: letters, digits and `_`, not
//! starting with `_` or a digit, never a keyword, a name the stubs import, a tool, a verifier or a builtin.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Map, Value};

use crate::plan::subset::KEYWORDS;
use crate::text::one_line;

/// Deepest schema nesting followed.
pub const MAX_DEPTH: usize = 16;
/// Most schemas read in one document (one tool's input or output).
pub const MAX_NODES: usize = 4000;
/// Most keys a record may have; a larger object is a `dict[str, Any]`.
pub const MAX_FIELDS: usize = 256;
/// Most members of a union or values of a `Literal`.
pub const MAX_UNION: usize = 64;
/// Most named types in one catalogue; past it, a record is a `dict[str, Any]` and an alias `object`.
pub const MAX_NAMED_TYPES: usize = 1000;
/// Longest name made from a title or a `$defs` key.
const MAX_NAME: usize = 64;
/// Longest description kept from a schema, in characters.
pub const MAX_DOC: usize = 300;

/// Whether a type is read from (an argument) or given to the plan (a result): arguments take the read-only
/// protocols (`Sequence`, `Mapping`) so that a plan's `list[int]` passes where `float`s are asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    Input,
    Output,
}

/// A literal value of a `Literal[...]`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lit {
    Bool(bool),
    Int(i64),
    Str(String),
}

/// A Python type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Py {
    /// Any value, used as the plan likes.
    Any,
    /// Something not known: a schema that could not be read.
    Object,
    None,
    Str,
    Int,
    Float,
    Bool,
    List(Box<Py>),
    /// `dict[str, T]`.
    Dict(Box<Py>),
    Literal(Vec<Lit>),
    Union(Vec<Py>),
    /// A record or alias in the [`Registry`].
    Named(String),
}

/// A union of `members`, flattened: `Any` and `object` absorb the rest, literals merge, duplicates go.
pub fn union(members: Vec<Py>) -> Py {
    let mut flat: Vec<Py> = Vec::new();
    let mut lits: Vec<Lit> = Vec::new();
    let mut stack: Vec<Py> = members.into_iter().rev().collect();
    while let Some(m) = stack.pop() {
        match m {
            Py::Union(inner) => stack.extend(inner.into_iter().rev()),
            Py::Any => return Py::Any,
            Py::Object => return Py::Object,
            Py::Literal(ls) => {
                for l in ls {
                    if !lits.contains(&l) {
                        lits.push(l);
                    }
                }
            }
            other => {
                if !flat.contains(&other) {
                    flat.push(other);
                }
            }
        }
        if flat.len() + lits.len() > MAX_UNION {
            return Py::Object;
        }
    }
    // A literal string is a `str`: `Literal["a"] | str` is `str`.
    lits.retain(|l| {
        !matches!(
            (
                l,
                flat.contains(&Py::Str),
                flat.contains(&Py::Int),
                flat.contains(&Py::Bool)
            ),
            (Lit::Str(_), true, _, _) | (Lit::Int(_), _, true, _) | (Lit::Bool(_), _, _, true)
        )
    });
    if !lits.is_empty() {
        flat.insert(0, Py::Literal(lits));
    }
    // `None` last, as people write `str | None`.
    if let Some(i) = flat.iter().position(|m| *m == Py::None) {
        let none = flat.remove(i);
        flat.push(none);
    }
    match flat.len() {
        0 => Py::Object,
        1 => flat.remove(0),
        _ => Py::Union(flat),
    }
}

impl Py {
    /// The type as Python writes it.
    pub fn render(&self, pos: Position) -> String {
        match self {
            Py::Any => "Any".into(),
            Py::Object => "object".into(),
            Py::None => "None".into(),
            Py::Str => "str".into(),
            Py::Int => "int".into(),
            Py::Float => "float".into(),
            Py::Bool => "bool".into(),
            Py::List(t) => match pos {
                Position::Input => format!("Sequence[{}]", t.render(pos)),
                Position::Output => format!("list[{}]", t.render(pos)),
            },
            Py::Dict(t) => match pos {
                Position::Input => format!("Mapping[str, {}]", t.render(pos)),
                Position::Output => format!("dict[str, {}]", t.render(pos)),
            },
            // An argument takes the literals' type: a plan that keeps `"r"` in a variable holds a `str`, which
            // a checker would refuse for `Literal["r", "rw"]`; the run checks the value.
            Py::Literal(ls) if pos == Position::Input => {
                let mut bases = Vec::new();
                for l in ls {
                    let base = match l {
                        Lit::Bool(_) => Py::Bool,
                        Lit::Int(_) => Py::Int,
                        Lit::Str(_) => Py::Str,
                    };
                    if !bases.contains(&base) {
                        bases.push(base);
                    }
                }
                union(bases).render(pos)
            }
            Py::Literal(ls) => {
                let vals: Vec<String> = ls.iter().map(literal).collect();
                format!("Literal[{}]", vals.join(", "))
            }
            Py::Union(ms) => ms
                .iter()
                .map(|m| m.render(pos))
                .collect::<Vec<_>>()
                .join(" | "),
            Py::Named(n) => n.clone(),
        }
    }

    /// The type with names replaced as `renames` says.
    pub fn rename(&mut self, renames: &HashMap<String, String>) {
        match self {
            Py::List(t) | Py::Dict(t) => t.rename(renames),
            Py::Union(ms) => ms.iter_mut().for_each(|m| m.rename(renames)),
            Py::Named(n) => {
                if let Some(to) = renames.get(n) {
                    *n = to.clone();
                }
            }
            _ => {}
        }
    }

    /// Every name the type refers to.
    fn names<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Py::List(t) | Py::Dict(t) => t.names(out),
            Py::Union(ms) => ms.iter().for_each(|m| m.names(out)),
            Py::Named(n) => out.push(n),
            _ => {}
        }
    }
}

fn literal(l: &Lit) -> String {
    match l {
        Lit::Bool(true) => "True".into(),
        Lit::Bool(false) => "False".into(),
        Lit::Int(i) => i.to_string(),
        Lit::Str(s) => py_string(s),
    }
}

/// A Python string literal for any text: JSON's escapes are Python's (`\"`, `\\`, `\n`, `\uXXXX`).
pub fn py_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Names the stubs import or define themselves.
pub const STUB_NAMES: &[&str] = &[
    "Any",
    "Literal",
    "Mapping",
    "NotRequired",
    "Sequence",
    "TypeAlias",
    "TypeVar",
    "TypedDict",
    "overload",
    "object",
    "str",
    "int",
    "float",
    "bool",
    "list",
    "dict",
];

/// Whether `key` can be written as a field in `class X(TypedDict):` syntax.
fn plain_key(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&key)
        // `__x` in a class body is mangled to `_X__x`.
        && !key.starts_with("__")
}

/// A name without the number [`Registry::fresh`] may have added: `CalendarEvent2` → `CalendarEvent`.
fn family(name: &str) -> &str {
    name.trim_end_matches(|c: char| c.is_ascii_digit())
}

/// `CamelCase` of the letters and digits of `text` (`get_most_recent` → `GetMostRecent`), at most
/// [`MAX_NAME`] characters, starting with a letter; empty when it has none.
pub fn camel(text: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if out.is_empty() && c.is_ascii_digit() {
                continue;
            }
            out.push(if upper { c.to_ascii_uppercase() } else { c });
            upper = false;
        } else {
            upper = true;
        }
        if out.len() >= MAX_NAME {
            break;
        }
    }
    out
}

/// One key of a record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    pub key: String,
    pub ty: Py,
    pub required: bool,
    /// The property's description or title, on one line.
    pub doc: Option<String>,
}

/// What a name stands for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Def {
    /// A `TypedDict`.
    Record(Vec<Field>),
    /// A type alias.
    Alias(Py),
}

impl Def {
    fn rename(&mut self, renames: &HashMap<String, String>) {
        match self {
            Def::Record(fields) => fields.iter_mut().for_each(|f| f.ty.rename(renames)),
            Def::Alias(t) => t.rename(renames),
        }
    }
}

/// A named type, with where it is used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    pub def: Def,
    /// The object's description or title, on one line.
    pub doc: Option<String>,
    /// Used by a result (else only by arguments, and rendered with `Sequence`/`Mapping`).
    pub output: bool,
}

impl Named {
    pub fn position(&self) -> Position {
        if self.output {
            Position::Output
        } else {
            Position::Input
        }
    }
}

/// Every named type of one catalogue, by name.
#[derive(Debug, Default)]
pub struct Registry {
    pub named: BTreeMap<String, Named>,
    /// Names that may not be taken (tools, verifiers, builtins, keywords, the stubs' own).
    reserved: BTreeSet<String>,
    /// (the name asked for, the schema's text) → the name given: one type per distinct schema.
    seen: HashMap<(String, String), String>,
}

impl Registry {
    pub fn new(reserved: impl IntoIterator<Item = String>) -> Registry {
        let mut r: BTreeSet<String> = reserved.into_iter().collect();
        r.extend(KEYWORDS.iter().map(|k| k.to_string()));
        r.extend(STUB_NAMES.iter().map(|k| k.to_string()));
        Registry {
            reserved: r,
            ..Registry::default()
        }
    }

    /// A free name from `wanted` (else `fallback`), with a number added when it is taken.
    fn fresh(&self, wanted: &str, fallback: &str) -> String {
        let mut base = camel(wanted);
        if base.is_empty() {
            base = camel(fallback);
        }
        if base.is_empty() {
            base = "Record".into();
        }
        let taken = |n: &str| self.named.contains_key(n) || self.reserved.contains(n);
        if !taken(&base) {
            return base;
        }
        (2..)
            .map(|i| format!("{base}{i}"))
            .find(|n| !taken(n))
            .unwrap_or(base)
    }

    /// Merges named types that came out the same from different schemas (the same record under one title in
    /// two tools' results, differing only in where their `$defs` sat): `CalendarEvent2` becomes
    /// `CalendarEvent` when its definition is `CalendarEvent`'s. Returns the renames made, which the types
    /// outside the registry must follow too.
    pub fn merge_duplicates(&mut self) -> HashMap<String, String> {
        let mut renames: HashMap<String, String> = HashMap::new();
        // A merge can make two records that name the merged types equal: another pass finds them.
        for _ in 0..MAX_DEPTH {
            let mut families: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for name in self.named.keys() {
                families.entry(family(name)).or_default().push(name);
            }
            let mut merged: Vec<(String, String)> = Vec::new();
            for members in families.values() {
                // Shorter names first: `CalendarEvent` is kept over `CalendarEvent2`.
                let mut members = members.clone();
                members.sort_by_key(|n| (n.len(), *n));
                let mut kept: Vec<&str> = Vec::new();
                for b in members {
                    let nb = &self.named[b];
                    let same = kept.iter().find(|a| {
                        let na = &self.named[**a];
                        // `b` as if it were named `a`, its references to itself included.
                        let one = HashMap::from([(b.to_string(), a.to_string())]);
                        let mut def = nb.def.clone();
                        def.rename(&one);
                        def == na.def && nb.doc == na.doc
                    });
                    match same {
                        Some(a) => merged.push((b.to_string(), a.to_string())),
                        None => kept.push(b),
                    }
                }
            }
            if merged.is_empty() {
                break;
            }
            let step: HashMap<String, String> = merged.into_iter().collect();
            for (drop, keep) in &step {
                let output = self.named.remove(drop).is_some_and(|n| n.output);
                if let Some(k) = self.named.get_mut(keep) {
                    k.output |= output;
                }
            }
            for named in self.named.values_mut() {
                named.def.rename(&step);
            }
            for to in renames.values_mut() {
                if let Some(next) = step.get(to) {
                    *to = next.clone();
                }
            }
            renames.extend(step);
        }
        renames
    }

    /// `ty` as an argument's type: an alias that a result uses too (so it is written with `Literal`, `list`,
    /// `dict`) is written out in place, so that its literals widen like any argument's. A recursive alias keeps
    /// its name.
    pub fn render_input(&self, ty: &Py) -> String {
        self.inline_aliases(ty, 0).render(Position::Input)
    }

    fn inline_aliases(&self, ty: &Py, depth: usize) -> Py {
        match ty {
            Py::List(t) => Py::List(Box::new(self.inline_aliases(t, depth))),
            Py::Dict(t) => Py::Dict(Box::new(self.inline_aliases(t, depth))),
            Py::Union(ms) => union(ms.iter().map(|m| self.inline_aliases(m, depth)).collect()),
            Py::Named(n) if depth < MAX_DEPTH => match self.named.get(n) {
                Some(Named {
                    def: Def::Alias(def),
                    output: true,
                    ..
                }) if !self.reachable(&[def]).contains(n) => self.inline_aliases(def, depth + 1),
                _ => ty.clone(),
            },
            other => other.clone(),
        }
    }

    /// Every name `root` refers to, itself included, through the definitions.
    pub fn reachable(&self, roots: &[&Py]) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut todo: Vec<String> = Vec::new();
        for r in roots {
            let mut names = Vec::new();
            r.names(&mut names);
            todo.extend(names.into_iter().map(str::to_string));
        }
        while let Some(n) = todo.pop() {
            if !out.insert(n.clone()) {
                continue;
            }
            let Some(named) = self.named.get(&n) else {
                continue;
            };
            let mut names = Vec::new();
            match &named.def {
                Def::Record(fields) => fields.iter().for_each(|f| f.ty.names(&mut names)),
                Def::Alias(t) => t.names(&mut names),
            }
            todo.extend(names.into_iter().map(str::to_string));
        }
        out
    }
}

/// Converts one document (a tool's `inputSchema` or `outputSchema`) into types, naming its records in the
/// registry.
pub struct Converter<'r> {
    reg: &'r mut Registry,
    pos: Position,
    nodes: usize,
    /// `$defs` entries of this document already named, by address: a `$ref` cycle reuses the name.
    refs: HashMap<*const Value, String>,
}

/// The `$defs` maps in scope, innermost last.
#[derive(Clone, Default)]
struct Scope<'s> {
    defs: Vec<&'s Map<String, Value>>,
    depth: usize,
}

impl<'r> Converter<'r> {
    pub fn new(reg: &'r mut Registry, pos: Position) -> Converter<'r> {
        Converter {
            reg,
            pos,
            nodes: 0,
            refs: HashMap::new(),
        }
    }

    /// The type of `schema`, the root of a document; `hint` names its records when they have no title.
    pub fn convert_root(&mut self, schema: &Value, hint: &str) -> Py {
        self.convert(schema, &Scope::default(), hint)
    }

    /// The type of the property `key` of the object schema `root` (a tool's argument or the `result` of a
    /// wrapped result), with `root`'s `$defs` in scope. `None` when there is no such property.
    pub fn convert_property(&mut self, root: &Value, key: &str, hint: &str) -> Option<Py> {
        let prop = root.get("properties")?.get(key)?;
        let mut scope = Scope::default();
        push_defs(root, &mut scope);
        scope.depth = 1;
        Some(self.convert(prop, &scope, hint))
    }

    fn convert<'s>(&mut self, schema: &'s Value, outer: &Scope<'s>, hint: &str) -> Py {
        self.nodes += 1;
        if self.nodes > MAX_NODES || outer.depth > MAX_DEPTH {
            return Py::Object;
        }
        let map = match schema {
            Value::Bool(true) => return Py::Any,
            Value::Object(m) => m,
            _ => return Py::Object,
        };
        let mut scope = outer.clone();
        scope.depth += 1;
        push_defs(schema, &mut scope);
        let ty = self.convert_map(map, &scope, hint);
        if map.get("nullable") == Some(&Value::Bool(true)) {
            union(vec![ty, Py::None])
        } else {
            ty
        }
    }

    fn convert_map<'s>(
        &mut self,
        map: &'s Map<String, Value>,
        scope: &Scope<'s>,
        hint: &str,
    ) -> Py {
        if let Some(r) = map.get("$ref") {
            return self.reference(r, scope, hint);
        }
        if let Some(c) = map.get("const") {
            return literals(std::slice::from_ref(c));
        }
        if let Some(e) = map.get("enum") {
            return match e {
                Value::Array(values) if !values.is_empty() => literals(values),
                _ => Py::Object,
            };
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(alts) = map.get(key) {
                let Value::Array(alts) = alts else {
                    return Py::Object;
                };
                if alts.is_empty() || alts.len() > MAX_UNION {
                    return Py::Object;
                }
                let members = alts
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        self.convert(
                            a,
                            scope,
                            &format!("{hint}{}", if i == 0 { "" } else { "Alt" }),
                        )
                    })
                    .collect();
                return union(members);
            }
        }
        if let Some(all) = map.get("allOf") {
            // `allOf: [{$ref}]` with a description beside it is how pydantic annotates a reference; more than
            // one constraining member is an intersection, which Python types cannot say.
            let Value::Array(all) = all else {
                return Py::Object;
            };
            let members: Vec<Py> = all
                .iter()
                .map(|a| self.convert(a, scope, hint))
                .filter(|t| *t != Py::Any)
                .collect();
            return match members.as_slice() {
                [] => Py::Any,
                [one] => one.clone(),
                _ => Py::Object,
            };
        }
        match map.get("type") {
            Some(Value::String(t)) => self.typed(t, map, scope, hint),
            Some(Value::Array(ts)) if !ts.is_empty() && ts.len() <= MAX_UNION => {
                let members = ts
                    .iter()
                    .map(|t| match t {
                        Value::String(t) => self.typed(t, map, scope, hint),
                        _ => Py::Object,
                    })
                    .collect();
                union(members)
            }
            Some(_) => Py::Object,
            None if map.contains_key("properties") => self.typed("object", map, scope, hint),
            None if map.contains_key("items") => self.typed("array", map, scope, hint),
            None => Py::Any,
        }
    }

    fn typed<'s>(
        &mut self,
        ty: &str,
        map: &'s Map<String, Value>,
        scope: &Scope<'s>,
        hint: &str,
    ) -> Py {
        match ty {
            "string" => Py::Str,
            "integer" => Py::Int,
            "number" => Py::Float,
            "boolean" => Py::Bool,
            "null" => Py::None,
            "array" => match map.get("items") {
                None | Some(Value::Bool(true)) => Py::List(Box::new(Py::Any)),
                Some(items @ Value::Object(_)) => {
                    Py::List(Box::new(self.convert(items, scope, hint)))
                }
                // Tuple forms (`items: [..]`, `prefixItems`): a list of any of them.
                Some(Value::Array(items)) if items.len() <= MAX_UNION => {
                    let members = items.iter().map(|i| self.convert(i, scope, hint)).collect();
                    Py::List(Box::new(union(members)))
                }
                Some(_) => Py::List(Box::new(Py::Object)),
            },
            "object" => self.object(map, scope, hint),
            _ => Py::Object,
        }
    }

    fn object<'s>(&mut self, map: &'s Map<String, Value>, scope: &Scope<'s>, hint: &str) -> Py {
        let props = match map.get("properties") {
            Some(Value::Object(p)) if !p.is_empty() => p,
            Some(Value::Object(_)) | None => {
                return match map.get("additionalProperties") {
                    Some(v @ Value::Object(_)) => Py::Dict(Box::new(self.convert(v, scope, hint))),
                    _ => Py::Dict(Box::new(Py::Any)),
                };
            }
            Some(_) => return Py::Object,
        };
        if props.len() > MAX_FIELDS || self.reg.named.len() >= MAX_NAMED_TYPES {
            return Py::Dict(Box::new(Py::Any));
        }
        let title = map.get("title").and_then(Value::as_str).unwrap_or_default();
        let key = (
            camel(if title.is_empty() { hint } else { title }),
            serde_json::to_string(map).unwrap_or_default(),
        );
        if let Some(name) = self.reg.seen.get(&key).cloned() {
            self.mark_output(&name);
            return Py::Named(name);
        }
        let name = self.reg.fresh(title, hint);
        self.reg.seen.insert(key, name.clone());
        self.record(name, map, props, scope)
    }

    /// Names and converts a record; the name is taken first, so a `$ref` cycle through it ends there.
    fn record<'s>(
        &mut self,
        name: String,
        map: &'s Map<String, Value>,
        props: &'s Map<String, Value>,
        scope: &Scope<'s>,
    ) -> Py {
        self.reg.named.insert(
            name.clone(),
            Named {
                def: Def::Alias(Py::Object),
                doc: None,
                output: self.pos == Position::Output,
            },
        );
        let required: BTreeSet<&str> = match map.get("required") {
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            _ => BTreeSet::new(),
        };
        let fields = props
            .iter()
            .map(|(k, v)| Field {
                key: k.clone(),
                ty: self.convert(v, scope, &format!("{name}{}", camel(k))),
                required: required.contains(k.as_str()),
                doc: doc_of(v),
            })
            .collect();
        if let Some(n) = self.reg.named.get_mut(&name) {
            n.def = Def::Record(fields);
            // The title named the record; only a description says more.
            n.doc = description(map.get("description"));
        }
        Py::Named(name)
    }

    fn mark_output(&mut self, name: &str) {
        if self.pos == Position::Output
            && let Some(n) = self.reg.named.get_mut(name)
        {
            n.output = true;
        }
    }

    /// A `$ref` into a `$defs` (or `definitions`) map in scope, searched innermost first: FastMCP puts a
    /// wrapped result's `$defs` inside its `result` property while the reference says `#/$defs/X`.
    fn reference<'s>(&mut self, r: &Value, scope: &Scope<'s>, hint: &str) -> Py {
        let Some(r) = r.as_str() else {
            return Py::Object;
        };
        let Some(def_name) = r
            .strip_prefix("#/$defs/")
            .or_else(|| r.strip_prefix("#/definitions/"))
        else {
            return Py::Object;
        };
        let found = scope.defs.iter().rev().find_map(|d| d.get(def_name));
        let Some(def) = found else {
            return Py::Object;
        };
        if let Some(name) = self.refs.get(&(def as *const Value)).cloned() {
            self.mark_output(&name);
            return Py::Named(name);
        }
        let key = (
            camel(def_name),
            serde_json::to_string(def).unwrap_or_default(),
        );
        if let Some(name) = self.reg.seen.get(&key).cloned() {
            self.refs.insert(def as *const Value, name.clone());
            self.mark_output(&name);
            return Py::Named(name);
        }
        if self.reg.named.len() >= MAX_NAMED_TYPES {
            return Py::Object;
        }
        let name = self.reg.fresh(def_name, hint);
        self.reg.seen.insert(key, name.clone());
        self.refs.insert(def as *const Value, name.clone());
        // The definition is read in the scope the reference was found in (its own `$defs` included).
        let mut inner = scope.clone();
        inner.depth += 1;
        push_defs(def, &mut inner);
        if let Value::Object(map) = def
            && let Some(Value::Object(props)) = map.get("properties")
            && !props.is_empty()
            && props.len() <= MAX_FIELDS
            && matches!(map.get("type"), None | Some(Value::String(_)))
            && map.get("type").is_none_or(|t| t == "object")
        {
            return self.record(name, map, props, &inner);
        }
        self.reg.named.insert(
            name.clone(),
            Named {
                def: Def::Alias(Py::Object),
                doc: None,
                output: self.pos == Position::Output,
            },
        );
        let mut ty = self.convert(def, &inner, &name);
        // `A = A | list[A]` is no type a checker accepts: the bare `A` adds nothing to the rest, so it goes
        // (`A = list[A]`); an alias that is only itself is unknown.
        let itself = Py::Named(name.clone());
        ty = match ty {
            Py::Union(ms) => {
                let rest: Vec<Py> = ms.into_iter().filter(|m| *m != itself).collect();
                if rest.is_empty() {
                    Py::Object
                } else {
                    union(rest)
                }
            }
            t if t == itself => Py::Object,
            other => other,
        };
        if let Some(n) = self.reg.named.get_mut(&name) {
            n.def = Def::Alias(ty);
            n.doc = description(def.get("description"));
        }
        Py::Named(name)
    }
}

fn push_defs<'s>(schema: &'s Value, scope: &mut Scope<'s>) {
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = schema.get(key) {
            scope.defs.push(d);
        }
    }
}

/// `Literal[...]` of JSON scalars; `null` is `None`; a float or a structure makes the union `object`.
fn literals(values: &[Value]) -> Py {
    if values.len() > MAX_UNION {
        return Py::Object;
    }
    let mut members = Vec::new();
    for v in values {
        members.push(match v {
            Value::Null => Py::None,
            Value::Bool(b) => Py::Literal(vec![Lit::Bool(*b)]),
            Value::String(s) => Py::Literal(vec![Lit::Str(s.clone())]),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Py::Literal(vec![Lit::Int(i)]),
                None => Py::Float,
            },
            _ => Py::Object,
        });
    }
    union(members)
}

/// A schema's `description` on one line, when it says something (a named type's title already named it).
fn description(d: Option<&Value>) -> Option<String> {
    d.and_then(Value::as_str)
        .map(|t| one_line(t, MAX_DOC))
        .filter(|d| !d.is_empty())
}

/// A schema's description, else its title, on one line.
pub fn doc_of(schema: &Value) -> Option<String> {
    ["description", "title"]
        .iter()
        .find_map(|k| schema.get(k).and_then(Value::as_str))
        .map(|t| one_line(t, MAX_DOC))
        .filter(|s| !s.is_empty())
}

/// The definition of a named type as stub lines.
pub fn render_named(name: &str, named: &Named) -> String {
    let pos = named.position();
    match &named.def {
        Def::Alias(t) => {
            let mut out = String::new();
            if let Some(doc) = &named.doc {
                out.push_str(&format!("# {doc}\n"));
            }
            out.push_str(&format!("{name}: TypeAlias = {}\n", t.render(pos)));
            out
        }
        Def::Record(fields) => {
            let field_type = |f: &Field| {
                let t = f.ty.render(pos);
                if f.required {
                    t
                } else {
                    format!("NotRequired[{t}]")
                }
            };
            let comment = |f: &Field| {
                f.doc
                    .as_ref()
                    .map(|d| format!("  # {d}"))
                    .unwrap_or_default()
            };
            let mut out = String::new();
            if fields.iter().all(|f| plain_key(&f.key)) {
                out.push_str(&format!("class {name}(TypedDict):\n"));
                if let Some(doc) = &named.doc {
                    out.push_str(&format!("    {}\n", docstring(doc)));
                }
                for f in fields {
                    out.push_str(&format!("    {}: {}{}\n", f.key, field_type(f), comment(f)));
                }
            } else {
                if let Some(doc) = &named.doc {
                    out.push_str(&format!("# {doc}\n"));
                }
                out.push_str(&format!("{name} = TypedDict({}, {{\n", py_string(name)));
                for f in fields {
                    out.push_str(&format!(
                        "    {}: {},{}\n",
                        py_string(&f.key),
                        field_type(f),
                        comment(f)
                    ));
                }
                out.push_str("})\n");
            }
            out
        }
    }
}

/// A docstring of `text` that no text can end early: backslashes are escaped, and so is every `"` that
/// another `"` or the closing quotes follow, so three quotes never meet inside (`["id"]` stays as it is).
pub fn docstring(text: &str) -> String {
    let mut out = String::from("\"\"\"");
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' if matches!(chars.peek(), None | Some('"')) => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push_str("\"\"\"");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn out(schema: Value) -> (String, Registry) {
        let mut reg = Registry::new(["send_email".to_string()]);
        let t = Converter::new(&mut reg, Position::Output).convert_root(&schema, "tool_result");
        (t.render(Position::Output), reg)
    }

    #[test]
    fn scalars_lists_dicts_unions_and_literals() {
        assert_eq!(out(json!({"type": "string"})).0, "str");
        assert_eq!(out(json!({"type": "number"})).0, "float");
        assert_eq!(out(json!({"type": ["integer", "null"]})).0, "int | None");
        assert_eq!(
            out(json!({"type": "array", "items": {"type": "boolean"}})).0,
            "list[bool]"
        );
        assert_eq!(out(json!({"type": "array"})).0, "list[Any]");
        assert_eq!(
            out(json!({"type": "object", "additionalProperties": {"type": "number"}})).0,
            "dict[str, float]"
        );
        assert_eq!(
            out(json!({"anyOf": [{"type": "string"}, {"type": "null"}]})).0,
            "str | None"
        );
        assert_eq!(
            out(json!({"enum": ["r", "rw", null, 3, true]})).0,
            "Literal[\"r\", \"rw\", 3, True] | None"
        );
        assert_eq!(
            out(json!({"enum": ["a"], "type": "string"})).0,
            "Literal[\"a\"]"
        );
        assert_eq!(out(json!({})).0, "Any");
        assert_eq!(out(json!(true)).0, "Any");
        let mut reg = Registry::new([]);
        let input = Converter::new(&mut reg, Position::Input)
            .convert_root(&json!({"type": "array", "items": {"type": "number"}}), "x");
        assert_eq!(input.render(Position::Input), "Sequence[float]");
    }

    #[test]
    fn records_are_named_once_per_distinct_schema() {
        let tx = json!({"title": "Transaction", "type": "object",
            "properties": {"id": {"type": "integer", "title": "ID of the transaction"}, "to": {"type": "string"}},
            "required": ["id"]});
        let doc = json!({"type": "array", "items": {"$ref": "#/$defs/Transaction"}, "$defs": {"Transaction": tx}});
        let mut reg = Registry::new([]);
        let a = Converter::new(&mut reg, Position::Output).convert_root(&doc, "a");
        let b = Converter::new(&mut reg, Position::Output).convert_root(&doc, "b");
        assert_eq!(a, b);
        assert_eq!(a.render(Position::Output), "list[Transaction]");
        assert_eq!(reg.named.len(), 1);
        let text = render_named("Transaction", &reg.named["Transaction"]);
        assert_eq!(
            text,
            "class Transaction(TypedDict):\n    id: int  # ID of the transaction\n    to: NotRequired[str]\n"
        );
        // Another schema under the same title gets another name.
        let other = json!({"title": "Transaction", "type": "object", "properties": {"x": {"type": "string"}}});
        let c = Converter::new(&mut reg, Position::Output).convert_root(&other, "c");
        assert_eq!(c.render(Position::Output), "Transaction2");
    }

    #[test]
    fn arguments_widen_literals_even_through_an_alias_a_result_names() {
        let doc = json!({"$defs": {"Perm": {"enum": ["r", "rw"]}}, "type": "object",
            "properties": {"p": {"$ref": "#/$defs/Perm"}, "q": {"enum": [1, 2]}}});
        let mut reg = Registry::new([]);
        let p = Converter::new(&mut reg, Position::Input)
            .convert_property(&doc, "p", "x")
            .unwrap();
        let q = Converter::new(&mut reg, Position::Input)
            .convert_property(&doc, "q", "x")
            .unwrap();
        assert_eq!(reg.render_input(&q), "int");
        // Only arguments use it: the alias itself is written for arguments.
        assert_eq!(reg.render_input(&p), "Perm");
        assert_eq!(
            render_named("Perm", &reg.named["Perm"]),
            "Perm: TypeAlias = str\n"
        );
        // A result uses it too: it keeps its literals, and arguments get `str` written out.
        Converter::new(&mut reg, Position::Output).convert_property(&doc, "p", "x");
        assert_eq!(
            render_named("Perm", &reg.named["Perm"]),
            "Perm: TypeAlias = Literal[\"r\", \"rw\"]\n"
        );
        assert_eq!(reg.render_input(&p), "str");
    }

    #[test]
    fn keys_that_are_not_identifiers_use_the_functional_syntax() {
        let (t, reg) = out(json!({"type": "object", "properties": {
            "from": {"type": "string"}, "Content-Type": {"type": "string"}, "__x": {"type": "integer"}}}));
        assert_eq!(t, "ToolResult");
        let text = render_named(&t, &reg.named[&t]);
        assert!(
            text.starts_with("ToolResult = TypedDict(\"ToolResult\", {\n"),
            "{text}"
        );
        assert!(
            text.contains("    \"Content-Type\": NotRequired[str],\n"),
            "{text}"
        );
    }

    #[test]
    fn recursive_references_name_themselves() {
        let doc = json!({"$defs": {"Node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
            "$ref": "#/$defs/Node"});
        let (t, reg) = out(doc);
        assert_eq!(t, "Node");
        assert!(
            render_named("Node", &reg.named["Node"]).contains("children: NotRequired[list[Node]]")
        );
        // A bare reference to itself in its own union goes; an alias that is only itself is unknown.
        let (t, reg) = out(json!({"$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"},
            {"type": "array", "items": {"$ref": "#/$defs/A"}}]}}, "$ref": "#/$defs/A"}));
        assert_eq!(t, "A");
        assert_eq!(
            reg.named["A"].def,
            Def::Alias(Py::List(Box::new(Py::Named("A".into()))))
        );
        let (_, reg) =
            out(json!({"$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}]}}, "$ref": "#/$defs/A"}));
        assert_eq!(reg.named["A"].def, Def::Alias(Py::Object));
    }

    #[test]
    fn hostile_schemas_end_as_object_without_panicking() {
        // Deep nesting.
        let mut deep = json!({"type": "string"});
        // As deep as a lock can hold (serde_json reads 128 levels), far past MAX_DEPTH.
        for _ in 0..120 {
            deep = json!({"type": "array", "items": deep});
        }
        let (t, _) = out(deep);
        assert!(
            t.contains("[object]") && t.matches("list[").count() <= MAX_DEPTH + 1,
            "{t}"
        );
        // A reference that goes nowhere, wrong types everywhere, a huge enum.
        assert_eq!(out(json!({"$ref": "https://evil.test/x"})).0, "object");
        assert_eq!(out(json!({"$ref": "#/$defs/missing"})).0, "object");
        assert_eq!(out(json!({"type": 7})).0, "object");
        assert_eq!(out(json!({"anyOf": "x"})).0, "object");
        assert_eq!(out(json!({"properties": 3, "type": "object"})).0, "object");
        assert_eq!(out(json!("string")).0, "object");
        let many: Vec<Value> = (0..1000).map(|i| json!(format!("v{i}"))).collect();
        assert_eq!(out(json!({"enum": many})).0, "object");
        // Many references to many definitions: bounded by the node budget.
        let defs: Map<String, Value> = (0..3000)
            .map(|i| {
                (
                    format!("D{i}"),
                    json!({"type": "array", "items": {"$ref": format!("#/$defs/D{}", i + 1)}}),
                )
            })
            .collect();
        let (_, reg) = out(json!({"$defs": defs, "$ref": "#/$defs/D0"}));
        assert!(reg.named.len() <= MAX_NODES);
        // Names from a hostile title are identifiers, never reserved names.
        let (t, _) = out(json!({"title": "send_email", "type": "object", "properties": {"a": {}}}));
        assert_eq!(t, "SendEmail");
        let (t, _) = out(json!({"title": "class", "type": "object", "properties": {"a": {}}}));
        assert_eq!(t, "Class");
        let (t, _) =
            out(json!({"title": "\"\"\"; import os #", "type": "object", "properties": {"a": {}}}));
        assert_eq!(t, "ImportOs");
    }

    #[test]
    fn text_cannot_break_out_of_a_comment_or_docstring() {
        assert_eq!(one_line("a\nb\r\u{2028}c\u{85}  d", MAX_DOC), "a b c d");
        assert_eq!(docstring("x\"\"\"y\\"), "\"\"\"x\\\"\\\"\"y\\\\\"\"\"");
        assert_eq!(docstring("a[\"id\"] \""), "\"\"\"a[\"id\"] \\\"\"\"\"");
        assert_eq!(py_string("a\"\n"), "\"a\\\"\\n\"");
        assert_eq!(
            one_line(&"x".repeat(1000), MAX_DOC).chars().count(),
            MAX_DOC + 1
        );
    }
}
