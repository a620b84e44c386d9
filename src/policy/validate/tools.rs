//! Verifiers (their names, the kinds they mint, their lists) and tools: each tool's name, source and
//! arguments (the kinds they require, the tags they forbid, who must read them), what it returns, and
//! `on_violation`.

use super::names::{check_callable_name, check_declared, kinds_hint};
use super::sources::{check_builtin, check_llm, check_mcp, server_reader};
use super::{Ctx, Kind, PolicyError, Seg, join};
use crate::label::MAX_KINDS;
use crate::policy::model::{
    ForbidTags, NamedMap, PolicyFile, ReadersSpec, Requirement, ReturnsSpec, Source, ToolSource,
    ToolSpec, VerifierSpec, is_identifier,
};

pub(super) fn check_tool(
    cx: &Ctx<'_>,
    file: &PolicyFile,
    kinds: &[String],
    name: &str,
    tool: &ToolSpec,
) -> Result<(), PolicyError> {
    let tool_path = [Seg::Key("tools"), Seg::Key(name)];
    check_callable_name(cx, &tool_path, "tool", name)?;
    if file.verifiers.contains_key(name) {
        return Err(cx
            .at_key(
                Kind::NameClash,
                &tool_path,
                format!("tool `{name}` has the same name as a verifier"),
            )
            .expected("distinct names for tools and verifiers"));
    }
    let at = |rest: &[Seg<'static>]| -> Vec<Seg<'_>> {
        let mut p = tool_path.to_vec();
        p.extend_from_slice(rest);
        p
    };
    match &tool.source {
        Some(ToolSource::Builtin(source)) => check_builtin(cx, name, tool, *source, &tool_path)?,
        Some(ToolSource::Mcp(mcp)) => check_mcp(cx, file, tool, mcp, &tool_path)?,
        Some(ToolSource::Llm(provider)) => check_llm(cx, file, name, tool, provider, &tool_path)?,
        None => {}
    }
    for (arg, spec) in tool.args.iter() {
        let arg_path = {
            let mut p = at(&[Seg::Key("args")]);
            p.push(Seg::Key(arg));
            p
        };
        check_callable_name(cx, &arg_path, "argument", arg)?;
        let sub = |rest: &[Seg<'static>]| {
            let mut p = arg_path.clone();
            p.extend_from_slice(rest);
            p
        };
        if let Some(alternatives) = &spec.require {
            for (i, req) in alternatives.0.iter().enumerate() {
                if let Requirement::Verified(kind) = req
                    && !kinds.contains(kind)
                {
                    return Err(cx
                        .at_value(
                            Kind::Undeclared,
                            &sub(&[Seg::Key("require"), Seg::Index(i)]),
                            format!("no verifier mints kind `{kind}`"),
                        )
                        .expected(kinds_hint(kinds)));
                }
            }
        }
        if let Some(forbid) = &spec.forbid_tags
            && let ForbidTags::List(tags) = forbid.tags()
        {
            let deciding = forbid.on_violation().is_some();
            for (i, tag) in tags.iter().enumerate() {
                let at = if deciding {
                    sub(&[Seg::Key("forbid_tags"), Seg::Key("tags"), Seg::Index(i)])
                } else {
                    sub(&[Seg::Key("forbid_tags"), Seg::Index(i)])
                };
                check_declared(cx, file, &at, tag)?;
            }
        }
        // An LLM tool's `provider` names the provider's principal, and an MCP tool's `server` its server's,
        // not an argument.
        let names_party = other_is_provider(tool, spec.readers_must_include.as_deref())
            || other_is_server(file, tool, spec.readers_must_include.as_deref());
        let names_recipients = spec.readers_must_include.as_deref()
            == Some(crate::policy::sinks::RECIPIENTS)
            && !crate::policy::sinks::recipients(tool).is_empty();
        if spec.readers == Some(crate::policy::model::AnyReaders::Any)
            && spec.reason.as_deref().is_none_or(|r| r.trim().is_empty())
        {
            return Err(cx
                .at_value(
                    Kind::Undeclared,
                    &sub(&[Seg::Key("readers")]),
                    "`readers: any` leaves this argument's readers unchecked, so it needs a `reason`",
                )
                .expected("a `reason: \"...\"` beside it saying why anyone may read what goes here"));
        }
        if let Some(other) = &spec.readers_must_include
            && !tool.args.contains_key(other)
            && !names_party
            && !names_recipients
        {
            if let Some(mcp) = tool.source.as_ref().and_then(ToolSource::mcp)
                && other == crate::policy::servers::SERVER_RECIPIENT
            {
                return Err(cx
                    .at_value(Kind::Undeclared,
                        &sub(&[Seg::Key("readers_must_include")]),
                        format!(
                            "`readers_must_include: server` names the server's reader, but server `{}` declares no `reader`",
                            mcp.server
                        ),
                    )
                    .expected("a `reader` on the server, such as `reader: \"mcp:fs\"`"));
            }
            return Err(cx
                .at_value(Kind::Undeclared,
                    &sub(&[Seg::Key("readers_must_include")]),
                    format!("`readers_must_include` names `{other}`, which is not an argument of `{name}`"),
                )
                .expected(format!("one of: {}", tool.arg_names().join(", "))));
        }
    }
    if let Some(returns) = &tool.returns {
        let args: Vec<&str> = tool.args.keys().collect();
        check_returns(cx, file, &at(&[Seg::Key("returns")]), returns, &args)?;
    }
    if tool.on_violation == Some(crate::policy::model::OnViolation::Draft)
        && let Some(source) = &tool.source
        && !source.builtin().is_some_and(Source::supports_draft)
    {
        return Err(cx
            .at_value(
                Kind::SourceMismatch,
                &at(&[Seg::Key("on_violation")]),
                format!("`{source}` cannot carry out a draft"),
            )
            .expected("`deny` or `confirm` (only builtin.mail.send supports `draft`)"));
    }
    Ok(())
}

/// `readers_must_include: server` on a tool of an MCP server that declares a `reader`.
fn other_is_server(file: &PolicyFile, tool: &ToolSpec, other: Option<&str>) -> bool {
    other == Some(crate::policy::servers::SERVER_RECIPIENT) && server_reader(file, tool).is_some()
}

fn other_is_provider(tool: &ToolSpec, other: Option<&str>) -> bool {
    other == Some(crate::policy::providers::PROVIDER_RECIPIENT)
        && tool.source.as_ref().and_then(ToolSource::llm).is_some()
}

fn check_returns<'a>(
    cx: &Ctx<'_>,
    file: &PolicyFile,
    path: &[Seg<'a>],
    returns: &'a ReturnsSpec,
    args: &[&str],
) -> Result<(), PolicyError> {
    let sub = |rest: &[Seg<'a>]| join(path, rest);
    for (i, tag) in returns.tags.iter().flatten().enumerate() {
        check_declared(cx, file, &sub(&[Seg::Key("tags"), Seg::Index(i)]), tag)?;
    }
    match &returns.structure_readers {
        Some(ReadersSpec::FromFields { .. }) => {
            return Err(cx
                .at_value(
                    Kind::InvalidValue,
                    &sub(&[Seg::Key("structure_readers")]),
                    "a list's structure has no fields to read readers from",
                )
                .expected("`public`, `user` or a list of readers"));
        }
        Some(ReadersSpec::List(names)) if names.iter().any(|n| n.trim().is_empty()) => {
            return Err(cx
                .at_value(
                    Kind::Empty,
                    &sub(&[Seg::Key("structure_readers")]),
                    "empty reader name",
                )
                .expected("an address"));
        }
        _ => {}
    }
    match &returns.readers {
        Some(ReadersSpec::FromFields { also, .. })
            if let Some(i) = also.iter().position(|n| n.trim().is_empty()) =>
        {
            return Err(cx
                .at_value(
                    Kind::Empty,
                    &sub(&[Seg::Key("readers"), Seg::Key("also"), Seg::Index(i)]),
                    "empty reader name",
                )
                .expected("an address or a principal such as `llm:local`"));
        }
        Some(ReadersSpec::FromFields { fields, .. }) if fields.is_empty() => {
            return Err(cx
                .at_value(
                    Kind::Empty,
                    &sub(&[Seg::Key("readers"), Seg::Key("from_fields")]),
                    "`from_fields` is empty",
                )
                .expected("at least one field name, e.g. `from_fields: [from, to, cc]`"));
        }
        Some(ReadersSpec::List(names)) => {
            if let Some(i) = names.iter().position(|n| n.trim().is_empty()) {
                return Err(cx
                    .at_value(
                        Kind::Empty,
                        &sub(&[Seg::Key("readers"), Seg::Index(i)]),
                        "empty reader name",
                    )
                    .expected("an address"));
            }
        }
        _ => {}
    }
    for (i, rule) in returns.tags_when.iter().flatten().enumerate() {
        let at = |rest: &[Seg<'a>]| {
            let mut p = sub(&[Seg::Key("tags_when"), Seg::Index(i)]);
            p.extend_from_slice(rest);
            p
        };
        if !args.contains(&rule.arg.as_str()) {
            return Err(cx
                .at_value(
                    Kind::Undeclared,
                    &at(&[Seg::Key("arg")]),
                    format!(
                        "`tags_when` names `{}`, which is not an argument of this tool",
                        rule.arg
                    ),
                )
                .expected(format!("one of: {}", args.join(", "))));
        }
        if let Err(why) = crate::policy::path_tags::matcher(&rule.glob) {
            return Err(cx
                .at_value(
                    Kind::InvalidValue,
                    &at(&[Seg::Key("glob")]),
                    format!("not a glob: {why}"),
                )
                .expected("a path glob such as `secrets/**`"));
        }
        for (j, tag) in rule.tags.iter().enumerate() {
            check_declared(cx, file, &at(&[Seg::Key("tags"), Seg::Index(j)]), tag)?;
        }
    }
    // A scanner adds its own tag, which must be declared like any other (docs/policy.md, "Scanners").
    for (i, scanner) in returns.scan.iter().flatten().enumerate() {
        let tag = scanner.tag();
        if !file.tags.iter().any(|t| t == tag) {
            return Err(cx
                .at_value(
                    Kind::Undeclared,
                    &sub(&[Seg::Key("scan"), Seg::Index(i)]),
                    format!(
                        "scanner `{}` adds tag `{tag}`, which is not declared",
                        scanner.name()
                    ),
                )
                .expected(format!("`{tag}` among the tags declared under `tags:`")));
        }
    }
    for (field, spec) in returns.fields.iter().flat_map(|f| f.iter()) {
        for (i, tag) in spec.tags.iter().flatten().enumerate() {
            check_declared(
                cx,
                file,
                &sub(&[
                    Seg::Key("fields"),
                    Seg::Key(field),
                    Seg::Key("tags"),
                    Seg::Index(i),
                ]),
                tag,
            )?;
        }
    }
    Ok(())
}

pub(super) fn check_verifiers(
    cx: &Ctx<'_>,
    verifiers: &NamedMap<VerifierSpec>,
) -> Result<Vec<String>, PolicyError> {
    let mut kinds: Vec<String> = Vec::new();
    for (name, spec) in verifiers.iter() {
        let path = [Seg::Key("verifiers"), Seg::Key(name)];
        check_callable_name(cx, &path, "verifier", name)?;
        let mints_path = [Seg::Key("verifiers"), Seg::Key(name), Seg::Key("mints")];
        let kind = spec.mints();
        if !is_identifier(kind) || kind.starts_with('_') {
            return Err(cx
                .at_value(
                    Kind::InvalidName,
                    &mints_path,
                    format!("invalid kind name `{kind}`"),
                )
                .expected("letters, digits and `_`, starting with a letter"));
        }
        // One verifier per kind: a second one minting it would be a second list the kind accepts, so a
        // kind would mean "on either list" and a reviewer of one list would not see the other (issue #50).
        if let Some((first, _)) = verifiers
            .iter()
            .take_while(|(n, _)| *n != name)
            .find(|(_, v)| v.mints() == kind)
        {
            return Err(cx
                .at_value(
                    Kind::InvalidValue,
                    &mints_path,
                    format!("verifier `{name}` mints `{kind}`, which verifier `{first}` mints too"),
                )
                .expected("one verifier per kind: put every allowed value in one list"));
        }
        if !kinds.iter().any(|k| k == kind) {
            if kinds.len() == MAX_KINDS {
                return Err(cx
                    .at_value(
                        Kind::TooMany,
                        &mints_path,
                        format!(
                            "too many verified kinds: `{kind}` would be kind {}",
                            MAX_KINDS + 1
                        ),
                    )
                    .expected(format!("at most {MAX_KINDS} distinct `mints` values")));
            }
            kinds.push(kind.to_string());
        }
        check_verifier_config(cx, name, spec)?;
    }
    Ok(kinds)
}

fn check_verifier_config(cx: &Ctx<'_>, name: &str, spec: &VerifierSpec) -> Result<(), PolicyError> {
    let at = |key: &'static str| [Seg::Key("verifiers"), Seg::Key(name), Seg::Key(key)];
    let empty = |key: &'static str| {
        cx.at_value(
            Kind::Empty,
            &at(key),
            format!("verifier `{name}` has an empty `{key}` list and would accept nothing"),
        )
        .expected("at least one entry")
    };
    match spec {
        VerifierSpec::EmailAllowlist { allow, .. } if allow.is_empty() => Err(empty("allow")),
        VerifierSpec::UrlAllowlist { schemes, .. } if schemes.is_empty() => Err(empty("schemes")),
        VerifierSpec::UrlAllowlist { hosts, .. } if hosts.is_empty() => Err(empty("hosts")),
        VerifierSpec::UrlAllowlist {
            paths: Some(paths), ..
        } if paths.is_empty() => Err(empty("paths")),
        VerifierSpec::UrlAllowlist {
            paths: Some(paths), ..
        } => match paths
            .iter()
            .position(|p| crate::policy::url_rule::normal_path(p).is_err())
        {
            Some(i) => Err(cx
                .at_value(
                    Kind::InvalidValue,
                    &[
                        Seg::Key("verifiers"),
                        Seg::Key(name),
                        Seg::Key("paths"),
                        Seg::Index(i),
                    ],
                    format!("verifier `{name}` has a path prefix that is not a URL path"),
                )
                .expected("a path such as `/docs/`")),
            None => Ok(()),
        },
        VerifierSpec::OneOf { values, .. } if values.is_empty() => Err(empty("values")),
        VerifierSpec::NumberRange { min, max, .. }
            if !(min.is_finite() && max.is_finite() && min <= max) =>
        {
            Err(cx
                .at_value(
                    Kind::InvalidValue,
                    &at("min"),
                    format!("verifier `{name}` has an empty or non-finite range"),
                )
                .expected("finite numbers with `min <= max`"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Case, each_points_at_its_mistake};
    use crate::policy::PolicyErrorKind as Kind;

    const CASES: &[Case] = &[
        (
            "version: 1\nverifiers:\n  v: { kind: one_of, values: [], mints: K }\n",
            3,
            30,
            "empty `values` list",
            Kind::Empty,
        ),
        (
            "version: 1\nverifiers:\n  v: { kind: number_range, min: 5, max: 1, mints: K }\n",
            3,
            33,
            "empty or non-finite range",
            Kind::InvalidValue,
        ),
        (
            "version: 1\nverifiers:\n  v: { kind: one_of, values: [a], mints: 'no way' }\n",
            3,
            42,
            "invalid kind name",
            Kind::InvalidName,
        ),
        (
            "version: 1\ntools:\n  w:\n    source: builtin.files.write\n    effect: write\n    args: { path: {}, content: {} }\n    on_violation: draft\n",
            7,
            19,
            "cannot carry out a draft",
            Kind::SourceMismatch,
        ),
        (
            "version: 1\ntools:\n  t:\n    effect: read\n    returns: { readers: [a@x.test, ''] }\n",
            5,
            36,
            "empty reader name",
            Kind::Empty,
        ),
        (
            "version: 1\ntools:\n  t:\n    effect: read\n    args:\n      x: { require: verified(Nope) }\n",
            6,
            21,
            "no verifier mints kind `Nope`",
            Kind::Undeclared,
        ),
        (
            "version: 1\nservers:\n  s: { command: srv }\ntools:\n  t:\n    source: mcp.s.t\n    effect: read\n    args: { a: { readers_must_include: server } }\n",
            8,
            40,
            "declares no `reader`",
            Kind::Undeclared,
        ),
    ];

    #[test]
    fn each_check_points_at_its_mistake() {
        each_points_at_its_mistake(CASES);
    }
}
