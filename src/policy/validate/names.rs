//! Names: what may name a tool, verifier or argument (an identifier, not reserved for the runtime, no
//! Python keyword, no builtin of the plan language), a tag, a server or a provider, and that every tag and
//! kind used is declared.

use std::collections::BTreeSet;

use super::{Ctx, Kind, PolicyError, Seg};
use crate::label::MAX_TAGS;
use crate::plan::subset::KEYWORDS;
use crate::policy::model::{PolicyFile, is_identifier};

/// Names the plan subset gives a meaning (docs/diagnostics.md, "What a plan may use"), allowed or refused: a
/// tool or verifier named like one would shadow it or be rejected by the subset check. Argument names are not
/// affected.
/// Whether a tool or verifier name would clash with a name the plan subset gives a meaning (a builtin, a
/// forbidden builtin, a module, a soft keyword). One table: `crate::plan::subset`.
fn is_plan_name(name: &str) -> bool {
    use crate::plan::subset;
    ["match", "case", "json", "re"].contains(&name)
        || subset::is_builtin(name)
        || subset::FORBIDDEN_BUILTINS.contains(&name)
}

/// Whether `name` can name a tool (or, with `argument`, an argument) in a policy: an identifier that is no
/// Python keyword, does not start with `_` and, for tools, is no builtin of the plan language.
pub fn is_free_name(name: &str, argument: bool) -> bool {
    is_identifier(name)
        && !name.starts_with('_')
        && !KEYWORDS.contains(&name)
        && (argument || !is_plan_name(name))
}

/// A name the plan calls or passes: an identifier, not reserved for the runtime, not a keyword or builtin.
pub(super) fn check_callable_name(
    cx: &Ctx<'_>,
    path: &[Seg<'_>],
    what: &str,
    name: &str,
) -> Result<(), PolicyError> {
    if name.starts_with('_') {
        return Err(cx
            .at_key(
                Kind::InvalidName,
                path,
                format!("{what} name `{name}` starts with `_`, which is reserved for the runtime"),
            )
            .expected("a name starting with a letter"));
    }
    if !is_identifier(name) {
        return Err(cx
            .at_key(
                Kind::InvalidName,
                path,
                format!("{what} name `{name}` is not a Python identifier"),
            )
            .expected("letters, digits and `_`, starting with a letter"));
    }
    if KEYWORDS.contains(&name) {
        return Err(cx
            .at_key(
                Kind::InvalidName,
                path,
                format!("{what} name `{name}` is a Python keyword"),
            )
            .expected("another name"));
    }
    if what != "argument" && is_plan_name(name) {
        return Err(cx
            .at_key(
                Kind::InvalidName,
                path,
                format!("{what} name `{name}` is a builtin of the plan language"),
            )
            .expected("another name"));
    }
    Ok(())
}

pub(super) fn check_tags(cx: &Ctx<'_>, tags: &[String]) -> Result<(), PolicyError> {
    if tags.len() > MAX_TAGS {
        return Err(cx
            .at_value(
                Kind::TooMany,
                &[Seg::Key("tags"), Seg::Index(MAX_TAGS)],
                format!("too many tags: {} declared", tags.len()),
            )
            .expected(format!("at most {MAX_TAGS}")));
    }
    for (i, tag) in tags.iter().enumerate() {
        let path = [Seg::Key("tags"), Seg::Index(i)];
        if !is_tag_name(tag) {
            return Err(cx
                .at_value(
                    Kind::InvalidName,
                    &path,
                    format!("invalid tag name `{tag}`"),
                )
                .expected("letters, digits, `_` or `-`, not starting with `_`"));
        }
        if tags[..i].contains(tag) {
            return Err(cx.at_value(
                Kind::NameClash,
                &path,
                format!("tag `{tag}` is declared twice"),
            ));
        }
    }
    Ok(())
}

fn is_tag_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

pub(super) fn check_declared(
    cx: &Ctx<'_>,
    file: &PolicyFile,
    path: &[Seg<'_>],
    tag: &str,
) -> Result<(), PolicyError> {
    if file.tags.iter().any(|t| t == tag) {
        return Ok(());
    }
    let hint = if file.tags.is_empty() {
        "a tag declared under `tags:` (none are declared)".to_string()
    } else {
        format!("one of the declared tags: {}", file.tags.join(", "))
    };
    Err(cx
        .at_value(
            Kind::Undeclared,
            path,
            format!("tag `{tag}` is not declared"),
        )
        .expected(hint))
}

pub(super) fn kinds_hint(kinds: &[String]) -> String {
    if kinds.is_empty() {
        "a kind minted by a verifier (no verifier is declared)".to_string()
    } else {
        let set: BTreeSet<&str> = kinds.iter().map(String::as_str).collect();
        format!(
            "one of the minted kinds: {}",
            set.into_iter().collect::<Vec<_>>().join(", ")
        )
    }
}

/// A `servers` or `providers` entry name: it must fit `mcp.NAME.TOOL` and `builtin.llm.NAME`.
pub(super) fn check_entry_name(
    cx: &Ctx<'_>,
    path: &[Seg<'_>],
    name: &str,
    what: &str,
) -> Result<(), PolicyError> {
    if crate::policy::servers::is_server_name(name) {
        return Ok(());
    }
    Err(cx
        .at_key(
            Kind::InvalidName,
            path,
            format!("`{name}` cannot name a {what}"),
        )
        .expected("letters, digits, `_` and `-` (no dots), at most 64"))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Case, each_points_at_its_mistake};
    use crate::policy::PolicyErrorKind as Kind;

    const CASES: &[Case] = &[
        (
            "version: 1\ntags: [A, 'B C']\n",
            2,
            11,
            "invalid tag name `B C`",
            Kind::InvalidName,
        ),
        (
            "version: 1\ntags: [A, _B]\n",
            2,
            11,
            "invalid tag name `_B`",
            Kind::InvalidName,
        ),
        (
            "version: 1\ntags: [A, B, A]\n",
            2,
            14,
            "tag `A` is declared twice",
            Kind::NameClash,
        ),
        (
            "version: 1\nverifiers:\n  len: { kind: one_of, values: [a], mints: K }\n",
            3,
            3,
            "builtin of the plan language",
            Kind::InvalidName,
        ),
        (
            "version: 1\ntools:\n  t:\n    effect: read\n    args: { 'a-b': {} }\n",
            5,
            13,
            "not a Python identifier",
            Kind::InvalidName,
        ),
        (
            "version: 1\ntools:\n  t:\n    effect: read\n    args: { lambda: {} }\n",
            5,
            13,
            "Python keyword",
            Kind::InvalidName,
        ),
    ];

    #[test]
    fn each_check_points_at_its_mistake() {
        each_points_at_its_mistake(CASES);
    }
}
