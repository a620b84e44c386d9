//! The checks that need more than one field of the policy, each reported at the exact key or value.
//!
//! They run on the typed model (so every value already has the right shape) and look positions up in the
//! positioned tree of the same text.

use std::collections::BTreeSet;

use super::error::{KeyPath, PolicyError, PolicyErrorKind as Kind};
use super::model::{
    Effect, ForbidTags, Limits, McpTool, Mode, NamedMap, PolicyFile, ReadersSpec, Requirement,
    ReturnsSpec, Source, ToolSource, ToolSpec, VerifierSpec, is_identifier,
};
use super::tree::{Node, Seg};
use crate::label::{MAX_KINDS, MAX_TAGS};

/// Python keywords: no tool, verifier or argument can be called or passed by these names.
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

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

struct Ctx<'a> {
    file: &'a str,
    tree: &'a Node,
}

impl Ctx<'_> {
    /// A mistake in the value at `path` (shown at the value).
    fn at_value(&self, kind: Kind, path: &[Seg<'_>], msg: impl Into<String>) -> PolicyError {
        PolicyError::at(kind, self.file, self.tree.value_pos(path), msg).in_path(KeyPath::of(path))
    }
    /// A mistake in the key at the end of `path` (shown at the key).
    fn at_key(&self, kind: Kind, path: &[Seg<'_>], msg: impl Into<String>) -> PolicyError {
        PolicyError::at(kind, self.file, self.tree.key_pos(path), msg).in_path(KeyPath::of(path))
    }
}

/// Checks `file`; returns the verified kinds (distinct `mints`, in declaration order).
pub fn validate(file: &PolicyFile, tree: &Node, name: &str) -> Result<Vec<String>, PolicyError> {
    let cx = Ctx { file: name, tree };
    if file.version != 1 {
        return Err(cx
            .at_value(
                Kind::UnsupportedVersion,
                &[Seg::Key("version")],
                format!("unsupported policy version {}", file.version),
            )
            .expected("`version: 1`"));
    }
    if let Some(user) = &file.user
        && user.trim().is_empty()
    {
        return Err(cx
            .at_value(Kind::Empty, &[Seg::Key("user")], "`user` is empty")
            .expected("the user's address"));
    }
    check_tags(&cx, &file.tags)?;
    let kinds = check_verifiers(&cx, &file.verifiers)?;
    check_servers(&cx, file)?;
    check_providers(&cx, file)?;
    for (tool_name, tool) in file.tools.iter() {
        check_tool(&cx, file, &kinds, tool_name, tool)?;
    }
    check_planner(&cx, file)?;
    check_stores(&cx, file)?;
    check_limits(&cx, file)?;
    check_web_allow(&cx, file)?;
    check_known(&cx, file)?;
    Ok(kinds)
}

/// The `known:` section and every `known(ROLE)` (docs/semantics.md, "Remembered values"): a role's list
/// names arguments that exist, and a `known(ROLE)` of a listed role is written only on an argument the
/// role lists (a remembered payee must not quietly cover an amount).
fn check_known(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    use super::model::{MAX_EXPIRY_DAYS, Requirement};
    let spec = file.known.clone().unwrap_or_default();
    if let Some(days) = spec.expiry_days
        && !(1..=MAX_EXPIRY_DAYS).contains(&days)
    {
        return Err(cx
            .at_value(
                Kind::InvalidValue,
                &[Seg::Key("known"), Seg::Key("expiry_days")],
                format!("`expiry_days` is {days}"),
            )
            .expected(format!("a number of days from 1 to {MAX_EXPIRY_DAYS}")));
    }
    if let Some(scope) = &spec.scope
        && scope.trim().is_empty()
    {
        return Err(cx
            .at_value(
                Kind::Empty,
                &[Seg::Key("known"), Seg::Key("scope")],
                "`scope` is empty",
            )
            .expected("a name the memories are kept under"));
    }
    for (role, args) in spec.roles.iter() {
        let at = |rest: &[Seg<'static>]| -> Vec<Seg<'_>> {
            let mut p = vec![Seg::Key("known"), Seg::Key("roles"), Seg::Key(role)];
            p.extend_from_slice(rest);
            p
        };
        if !super::model::is_identifier(role) {
            return Err(cx
                .at_key(
                    Kind::InvalidName,
                    &at(&[]),
                    format!("role `{role}` is not a name"),
                )
                .expected("letters, digits and `_`, not starting with a digit"));
        }
        if args.is_empty() {
            return Err(cx
                .at_value(
                    Kind::Empty,
                    &at(&[]),
                    format!("role `{role}` lists no argument"),
                )
                .expected("a list of `TOOL.ARG`"));
        }
        for (i, entry) in args.iter().enumerate() {
            let names_one = entry.split_once('.').is_some_and(|(tool, arg)| {
                file.tools
                    .get(tool)
                    .is_some_and(|t| t.args.contains_key(arg))
            });
            if !names_one {
                return Err(cx
                    .at_value(
                        Kind::Undeclared,
                        &at(&[Seg::Index(i)]),
                        format!("role `{role}` lists `{entry}`, which is no argument of a tool of this policy"),
                    )
                    .expected("`TOOL.ARG` of a tool in `tools`"));
            }
        }
    }
    for (tool_name, tool) in file.tools.iter() {
        for (arg, arg_spec) in tool.args.iter() {
            let Some(alternatives) = &arg_spec.require else {
                continue;
            };
            for (i, req) in alternatives.0.iter().enumerate() {
                let Requirement::Known(role) = req else {
                    continue;
                };
                let Some(listed) = spec.roles.get(role) else {
                    continue;
                };
                let here = format!("{tool_name}.{arg}");
                if !listed.contains(&here) {
                    return Err(cx
                        .at_value(
                            Kind::Undeclared,
                            &[
                                Seg::Key("tools"),
                                Seg::Key(tool_name),
                                Seg::Key("args"),
                                Seg::Key(arg),
                                Seg::Key("require"),
                                Seg::Index(i),
                            ],
                            format!("`known({role})` is written on `{here}`, which role `{role}` does not list"),
                        )
                        .expected(format!("`{here}` in `known.roles.{role}`, or another role")));
                }
            }
        }
    }
    Ok(())
}

/// A store whose labels nobody keeps (docs/semantics.md, "Stores keep labels"): what a tool writes into
/// `store: NAME` comes back from a read tool of that store with the read's label alone, so every argument of
/// the write must already meet that label: forbid every tag the read does not give back, be trusted when the
/// read says trusted, and be public when the read's readers are anyone but the user. The files sandbox
/// keeps its labels and is exempt.
fn check_stores(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    use super::model::{Effect, IntegritySpec, ReadersSpec};
    let keeps_labels = |t: &ToolSpec| {
        matches!(
            t.source.as_ref(),
            Some(ToolSource::Builtin(Source::FilesWrite))
        )
    };
    for (write_name, write) in file.tools.iter() {
        let Some(store) = &write.store else { continue };
        if !matches!(write.effect, Effect::Write | Effect::Send) || keeps_labels(write) {
            continue;
        }
        for (read_name, read) in file.tools.iter() {
            if read.effect != Effect::Read || read.store.as_ref() != Some(store) {
                continue;
            }
            let r = read.returns();
            let mut gives: Vec<&str> = r.tags.iter().flatten().map(String::as_str).collect();
            gives.extend(
                r.tags_when
                    .iter()
                    .flatten()
                    .flat_map(|w| w.tags.iter().map(String::as_str)),
            );
            gives.extend(
                r.fields
                    .iter()
                    .flat_map(|f| f.iter())
                    .flat_map(|(_, f)| f.tags.iter().flatten().map(String::as_str)),
            );
            gives.extend(r.scan.iter().flatten().map(|s| s.tag()));
            let trusted = r.integrity == Some(IntegritySpec::Trusted)
                || r.fields
                    .iter()
                    .flat_map(|f| f.iter())
                    .any(|(_, f)| f.integrity == Some(IntegritySpec::Trusted));
            let restricted = matches!(r.readers, Some(ReadersSpec::User));
            for (arg_name, arg) in write.args.iter() {
                let at = [
                    Seg::Key("tools"),
                    Seg::Key(write_name),
                    Seg::Key("args"),
                    Seg::Key(arg_name),
                ];
                let forbids = |tag: &str| match arg.forbid_tags.as_ref().map(ForbidTags::tags) {
                    Some(ForbidTags::All) => true,
                    Some(ForbidTags::List(l)) => l.iter().any(|t| t == tag),
                    _ => false,
                };
                let lost: Vec<&str> = file
                    .tags
                    .iter()
                    .map(String::as_str)
                    .filter(|t| !gives.contains(t) && !forbids(t))
                    .collect();
                let problem = if !lost.is_empty() {
                    Some((
                        format!(
                            "tag{} {} would be lost",
                            if lost.len() == 1 { "" } else { "s" },
                            lost.join(", ")
                        ),
                        format!("`forbid_tags: [{}]` on `{arg_name}`", lost.join(", ")),
                    ))
                } else if trusted && arg.require.is_none() {
                    Some((
                        format!("data would come back as trusted from `{read_name}`"),
                        format!("a `require` on `{arg_name}`"),
                    ))
                } else if !restricted && arg.public != Some(true) {
                    Some((
                        format!("who may read it would widen to `{read_name}`'s readers"),
                        format!("`public: true` on `{arg_name}`"),
                    ))
                } else {
                    None
                };
                if let Some((what, fix)) = problem {
                    return Err(cx
                        .at_key(
                            Kind::InvalidValue,
                            &at,
                            format!(
                                "`{write_name}` writes into store `{store}`, which `{read_name}` reads back without the label it was written with: {what}"
                            ),
                        )
                        .expected(fix));
                }
            }
        }
    }
    Ok(())
}

/// `planner.reader` names a principal other than the user: an empty one would name no one, and the user
/// reads every value, so a planner reading as the user would be given all of them.
fn check_planner(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    check_planner_mode(cx, file)?;
    let Some(reader) = file.planner.as_ref().and_then(|p| p.reader.as_deref()) else {
        return Ok(());
    };
    let path = [Seg::Key("planner"), Seg::Key("reader")];
    if reader.trim().is_empty() {
        return Err(cx
            .at_value(Kind::Empty, &path, "the planner's reader is empty")
            .expected("the principal the planner reads as, such as `llm:planner`"));
    }
    if let Some(user) = &file.user
        && user.trim().eq_ignore_ascii_case(reader.trim())
    {
        return Err(cx
            .at_value(
                Kind::NameClash,
                &path,
                "the planner's reader is the `user`, who may read every value",
            )
            .expected("a principal of the planner's own, such as `llm:planner`"));
    }
    Ok(())
}

/// `planner.mode` is consent for a planner model's plans to run in the policy's mode, not a second mode:
/// one that disagrees with `mode` would leave a reader unsure which decides.
fn check_planner_mode(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    let Some(said) = file.planner.as_ref().and_then(|p| p.mode) else {
        return Ok(());
    };
    let mode = file.mode.unwrap_or(Mode::Strict);
    if said != mode {
        return Err(cx
            .at_value(
                Kind::InvalidValue,
                &[Seg::Key("planner"), Seg::Key("mode")],
                format!(
                    "`planner.mode` is {} but the policy's `mode` is {}",
                    said.name(),
                    mode.name()
                ),
            )
            .expected("the same mode as `mode:`, or no `planner.mode` (strict)"));
    }
    Ok(())
}

/// Every `builtins.web.allow` entry must be a URL the web adapter can compare with (policy::url_rule): an
/// entry it cannot read would silently allow nothing.
fn check_web_allow(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    let Some(web) = file.builtins.as_ref().and_then(|b| b.web.as_ref()) else {
        return Ok(());
    };
    for (i, entry) in web.allow.iter().enumerate() {
        if let Err(why) = crate::policy::url_rule::Prefix::parse(entry) {
            return Err(cx
                .at_value(
                    Kind::InvalidValue,
                    &[
                        Seg::Key("builtins"),
                        Seg::Key("web"),
                        Seg::Key("allow"),
                        Seg::Index(i),
                    ],
                    format!("`builtins.web.allow` entry {} is refused: {why}", i + 1),
                )
                .expected("an http or https URL prefix such as `https://docs.example.com/docs/`"));
        }
    }
    Ok(())
}

fn check_tags(cx: &Ctx<'_>, tags: &[String]) -> Result<(), PolicyError> {
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

fn join<'a>(base: &[Seg<'a>], rest: &[Seg<'a>]) -> Vec<Seg<'a>> {
    let mut p = base.to_vec();
    p.extend_from_slice(rest);
    p
}

fn is_tag_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A name the plan calls or passes: an identifier, not reserved for the runtime, not a keyword or builtin.
fn check_callable_name(
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

fn check_verifiers(
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

fn check_tool(
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
        if spec.readers == Some(super::model::AnyReaders::Any)
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
    if tool.on_violation == Some(super::model::OnViolation::Draft)
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

/// The `reader` of the server of an MCP tool, when it declares one.
fn server_reader<'f>(file: &'f PolicyFile, tool: &ToolSpec) -> Option<&'f str> {
    let mcp = tool.source.as_ref()?.mcp()?;
    file.servers.get(&mcp.server)?.reader.as_deref()
}

fn other_is_provider(tool: &ToolSpec, other: Option<&str>) -> bool {
    other == Some(crate::policy::providers::PROVIDER_RECIPIENT)
        && tool.source.as_ref().and_then(ToolSource::llm).is_some()
}

/// The arguments of a `builtin.llm.PROVIDER` tool, in order.
pub const LLM_ARGS: [&str; 3] = ["prompt", "data", "schema"];

/// An LLM tool is served by a declared provider, sends (its inputs leave the machine), and takes exactly
/// `prompt`, `data` and `schema`.
fn check_llm(
    cx: &Ctx<'_>,
    file: &PolicyFile,
    name: &str,
    tool: &ToolSpec,
    provider: &str,
    tool_path: &[Seg<'_>],
) -> Result<(), PolicyError> {
    let with = |rest: Seg<'static>| {
        let mut p = tool_path.to_vec();
        p.push(rest);
        p
    };
    if file.providers.get(provider).is_none() {
        let declared: Vec<&str> = file.providers.keys().collect();
        return Err(cx
            .at_value(
                Kind::Undeclared,
                &with(Seg::Key("source")),
                format!("provider `{provider}` is not declared under `providers`"),
            )
            .expected(if declared.is_empty() {
                "a `providers:` entry with the provider's `kind` and `reader`".to_string()
            } else {
                format!("one of the declared providers: {}", declared.join(", "))
            }));
    }
    if tool.effect != Effect::Send {
        return Err(cx
            .at_value(
                Kind::SourceMismatch,
                &with(Seg::Key("effect")),
                "an LLM tool sends its inputs to the provider",
            )
            .expected("`send`"));
    }
    let declared: Vec<&str> = tool.args.keys().collect();
    if declared != LLM_ARGS {
        return Err(cx
            .at_key(
                Kind::SourceMismatch,
                &with(Seg::Key("args")),
                format!(
                    "tool `{name}` asks an LLM, whose arguments are ({}), but declares ({})",
                    LLM_ARGS.join(", "),
                    declared.join(", ")
                ),
            )
            .expected(format!(
                "every argument, in this order: {}",
                LLM_ARGS.join(", ")
            )));
    }
    // The provider reads what it is sent: both the prompt and the data must name it as a reader.
    for arg in ["prompt", "data"] {
        let names_provider = tool
            .args
            .get(arg)
            .and_then(|a| a.readers_must_include.as_deref())
            == Some(crate::policy::providers::PROVIDER_RECIPIENT);
        if !names_provider {
            let mut at = with(Seg::Key("args"));
            at.push(Seg::Key(arg));
            return Err(cx
                .at_key(
                    Kind::SourceMismatch,
                    &at,
                    format!("`{arg}` goes to the provider, so the provider must be a reader of it"),
                )
                .expected("`readers_must_include: provider`"));
        }
    }
    // Whatever the data, a model's answer is untrusted (docs/llm.md).
    let returns = tool.returns.clone().unwrap_or_default();
    let trusted_field = returns
        .fields
        .iter()
        .flat_map(|f| f.iter())
        .find_map(|(name, f)| {
            (f.integrity == Some(super::model::IntegritySpec::Trusted)).then_some(name)
        });
    if returns.integrity == Some(super::model::IntegritySpec::Trusted) || trusted_field.is_some() {
        return Err(cx
            .at_key(
                Kind::SourceMismatch,
                &with(Seg::Key("returns")),
                "an LLM's answer is untrusted: it may repeat whatever the data told it",
            )
            .expected("`integrity: untrusted` (the default), for the answer and every field"));
    }
    Ok(())
}

/// A `servers` or `providers` entry name: it must fit `mcp.NAME.TOOL` and `builtin.llm.NAME`.
fn check_entry_name(
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

/// Limits under `path` that must be positive when given (0 would let nothing through).
fn check_positive(
    cx: &Ctx<'_>,
    path: &[Seg<'_>],
    limits: &[(&'static str, Option<u64>)],
) -> Result<(), PolicyError> {
    for (key, value) in limits {
        if *value == Some(0) {
            let mut at = path.to_vec();
            at.push(Seg::Key(key));
            return Err(cx
                .at_value(Kind::InvalidValue, &at, "0 lets nothing through")
                .expected("a positive number"));
        }
    }
    Ok(())
}

/// Each provider names a reader, and what its kind needs: a URL and a model, or a fixtures file.
fn check_providers(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    use crate::policy::providers::ProviderKind;
    for (name, p) in file.providers.iter() {
        let path = [Seg::Key("providers"), Seg::Key(name)];
        let with = |rest: Seg<'static>| {
            let mut v = path.to_vec();
            v.push(rest);
            v
        };
        check_entry_name(cx, &path, name, "provider")?;
        if p.reader.trim().is_empty() {
            return Err(cx
                .at_value(
                    Kind::Empty,
                    &with(Seg::Key("reader")),
                    "the reader is empty",
                )
                .expected("the principal the provider reads as, such as `llm:local`"));
        }
        match p.kind {
            ProviderKind::OpenaiChat => {
                let url_ok = p
                    .base_url
                    .as_deref()
                    .and_then(|u| url::Url::parse(u).ok())
                    .is_some_and(|u| matches!(u.scheme(), "http" | "https"));
                if !url_ok {
                    return Err(cx
                        .at_key(
                            Kind::MissingKey,
                            &path,
                            "an `openai_chat` provider needs an http(s) `base_url`",
                        )
                        .expected("`base_url: http://127.0.0.1:8080/v1`"));
                }
                if p.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
                    return Err(cx
                        .at_key(
                            Kind::MissingKey,
                            &path,
                            "an `openai_chat` provider needs a `model`",
                        )
                        .expected("the model name the server expects"));
                }
            }
            ProviderKind::Fixture => {
                if p.fixtures.is_none() {
                    return Err(cx
                        .at_key(
                            Kind::MissingKey,
                            &path,
                            "a `fixture` provider needs a `fixtures` file",
                        )
                        .expected("`fixtures: answers.json`"));
                }
            }
        }
        check_positive(
            cx,
            &path,
            &[
                ("timeout_ms", p.timeout_ms),
                ("max_input_bytes", p.max_input_bytes),
                ("max_output_tokens", p.max_output_tokens),
            ],
        )?;
    }
    Ok(())
}

/// An MCP tool is served by a declared server, and is never `pure`: the server is a process that may do
/// anything, so its calls are always checked.
fn check_mcp(
    cx: &Ctx<'_>,
    file: &PolicyFile,
    tool: &ToolSpec,
    mcp: &McpTool,
    tool_path: &[Seg<'_>],
) -> Result<(), PolicyError> {
    let with = |rest: Seg<'static>| {
        let mut p = tool_path.to_vec();
        p.push(rest);
        p
    };
    if file.servers.get(&mcp.server).is_none() {
        let declared: Vec<&str> = file.servers.keys().collect();
        return Err(cx
            .at_value(
                Kind::Undeclared,
                &with(Seg::Key("source")),
                format!("server `{}` is not declared under `servers`", mcp.server),
            )
            .expected(if declared.is_empty() {
                "a `servers:` entry with the server's `command`".to_string()
            } else {
                format!("one of the declared servers: {}", declared.join(", "))
            }));
    }
    if tool.effect == Effect::Pure {
        return Err(cx
            .at_value(Kind::SourceMismatch,
                &with(Seg::Key("effect")),
                "an MCP tool is not pure: its server is a process that may read or change the world",
            )
            .expected("`read`, `write`, `send` or `execute`"));
    }
    // With a `reader`, `server` in `readers_must_include` names the server: an argument of that name would
    // make the requirement ambiguous.
    let recipient = crate::policy::servers::SERVER_RECIPIENT;
    if server_reader(file, tool).is_some() && tool.args.contains_key(recipient) {
        let mut at = with(Seg::Key("args"));
        at.push(Seg::Key(recipient));
        return Err(cx
            .at_key(Kind::NameClash,
                &at,
                format!(
                    "server `{}` declares a `reader`, so `{recipient}` names it in `readers_must_include` and cannot name an argument",
                    mcp.server
                ),
            )
            .expected(format!(
                "a plan-facing tool without an argument `{recipient}`, or no `reader` on the server"
            )));
    }
    Ok(())
}

/// Each server has a command, a name that fits `mcp.SERVER.TOOL`, environment variable names and
/// positive timeouts.
fn check_servers(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    for (name, server) in file.servers.iter() {
        let path = [Seg::Key("servers"), Seg::Key(name)];
        let with = |rest: Seg<'static>| {
            let mut p = path.to_vec();
            p.push(rest);
            p
        };
        check_entry_name(cx, &path, name, "server")?;
        if server.reader.as_ref().is_some_and(|r| r.trim().is_empty()) {
            return Err(cx
                .at_value(
                    Kind::Empty,
                    &with(Seg::Key("reader")),
                    "the reader is empty",
                )
                .expected("the principal the server reads as, such as `mcp:fs`"));
        }
        if server.command.trim().is_empty() {
            return Err(cx
                .at_value(
                    Kind::Empty,
                    &with(Seg::Key("command")),
                    "the command is empty",
                )
                .expected("the server's program, such as `npx` or a path"));
        }
        for var in &server.env {
            if var.is_empty() || var.contains('=') || var.contains('\0') {
                return Err(cx
                    .at_value(
                        Kind::InvalidName,
                        &with(Seg::Key("env")),
                        format!("`{var}` cannot name an environment variable"),
                    )
                    .expected("variable names such as `API_TOKEN`"));
            }
        }
        check_positive(
            cx,
            &path,
            &[
                ("startup_timeout_ms", server.startup_timeout_ms),
                ("call_timeout_ms", server.call_timeout_ms),
                ("max_message_bytes", server.max_message_bytes),
            ],
        )?;
    }
    Ok(())
}

/// A builtin adapter fixes the argument names and contacts the outside world (docs/policy.md, "Tools": a
/// policy that checks a misspelt argument would check nothing).
fn check_builtin(
    cx: &Ctx<'_>,
    name: &str,
    tool: &ToolSpec,
    source: Source,
    tool_path: &[Seg<'_>],
) -> Result<(), PolicyError> {
    let with = |rest: Seg<'static>| {
        let mut p = tool_path.to_vec();
        p.push(rest);
        p
    };
    if tool.effect == Effect::Pure {
        return Err(cx
            .at_value(
                Kind::SourceMismatch,
                &with(Seg::Key("effect")),
                format!(
                    "`{}` is not pure: it reads or changes the world",
                    source.name()
                ),
            )
            .expected("`read`, `write`, `send` or `execute`"));
    }
    let expected = source.args();
    let declared: Vec<&str> = tool.args.keys().collect();
    if declared != expected {
        // Point at the first argument that differs, or at `args` when one is missing at the end.
        let first_bad = declared.iter().zip(expected).position(|(d, e)| d != e);
        let path = match first_bad.or((declared.len() > expected.len()).then_some(expected.len())) {
            Some(i) => {
                let mut p = with(Seg::Key("args"));
                p.push(Seg::Key(declared[i]));
                p
            }
            None => with(Seg::Key("args")),
        };
        return Err(cx
            .at_key(
                Kind::SourceMismatch,
                &path,
                format!(
                    "tool `{name}` uses `{}`, whose arguments are ({}), but declares ({})",
                    source.name(),
                    expected.join(", "),
                    declared.join(", ")
                ),
            )
            .expected(format!(
                "every argument of `{}`, in this order: {}",
                source.name(),
                expected.join(", ")
            )));
    }
    Ok(())
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
        if let Err(why) = super::path_tags::matcher(&rule.glob) {
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

fn check_declared(
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

fn kinds_hint(kinds: &[String]) -> String {
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

fn check_limits(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    let Some(limits) = &file.limits else {
        return Ok(());
    };
    if limits.timeout_ms == Some(0) {
        return Err(cx
            .at_value(
                Kind::InvalidValue,
                &[Seg::Key("limits"), Seg::Key("timeout_ms")],
                "`timeout_ms` is 0",
            )
            .expected("a positive number of milliseconds"));
    }
    if limits.max_recursion == Some(0) {
        return Err(cx
            .at_value(
                Kind::InvalidValue,
                &[Seg::Key("limits"), Seg::Key("max_recursion")],
                "`max_recursion` is 0",
            )
            .expected("a positive depth"));
    }
    if let Some(mb) = limits.max_memory_mb
        && !(1..=Limits::MAX_MAX_MEMORY_MB).contains(&mb)
    {
        return Err(cx
            .at_value(
                Kind::InvalidValue,
                &[Seg::Key("limits"), Seg::Key("max_memory_mb")],
                format!("`max_memory_mb` is {mb}"),
            )
            .expected(format!(
                "a positive number of MiB, at most {}",
                Limits::MAX_MAX_MEMORY_MB
            )));
    }
    // Lineage is exact for this many calls (docs/semantics.md, packed labels); a run past it would name
    // fewer sources than its values derive from.
    if limits
        .max_tool_calls
        .is_some_and(|n| n > crate::label::MAX_SOURCE_CALLS)
    {
        return Err(cx
            .at_value(
                Kind::InvalidValue,
                &[Seg::Key("limits"), Seg::Key("max_tool_calls")],
                "`max_tool_calls` is larger than lineage can track",
            )
            .expected(format!(
                "at most {} calls per run",
                crate::label::MAX_SOURCE_CALLS
            )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::policy::{Policy, PolicyErrorKind as Kind};

    /// docs/semantics.md, "Stores keep labels": a store nobody keeps labels for must get back what was
    /// written, so each write meets the read's label; with it, the policy loads.
    #[test]
    fn a_store_without_kept_labels_needs_writes_that_meet_the_read() {
        let policy = |note: &str| {
            format!(
                "version: 1\ntags: [PRIVATE, AUTH_SECRET]\ntools:\n  save:\n    effect: write\n    store: notes\n    args: {{ text: {note} }}\n  load:\n    effect: read\n    store: notes\n    args: {{}}\n    returns: {{ tags: [PRIVATE], readers: user }}\n"
            )
        };
        let err = Policy::from_yaml_str(&policy("{}"), "t.yaml", Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`save` writes into store `notes`, which `load` reads back without the label it was written with: tag AUTH_SECRET would be lost"),
            "{err}"
        );
        Policy::from_yaml_str(
            &policy("{ forbid_tags: [AUTH_SECRET] }"),
            "t.yaml",
            Path::new("."),
        )
        .unwrap();
    }

    /// (policy text, line and column of the mistake, words of the message, kind of mistake) for the checks the integration
    /// fixtures do not cover.
    const CASES: &[(&str, u64, u64, &str, Kind)] = &[
        (
            "version: 1\nuser: '  '\n",
            2,
            7,
            "`user` is empty",
            Kind::Empty,
        ),
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
        (
            "version: 1\ntools:\n  w:\n    source: builtin.files.write\n    effect: write\n    args: { path: {}, content: {} }\n    on_violation: draft\n",
            7,
            19,
            "cannot carry out a draft",
            Kind::SourceMismatch,
        ),
        (
            "version: 1\ntools:\n  w:\n    source: builtin.files.write\n    effect: write\n    args: { path: {} }\n",
            6,
            5,
            "declares (path)",
            Kind::SourceMismatch,
        ),
        (
            "version: 1\ntools:\n  w:\n    source: builtin.files.read\n    effect: read\n    args: { path: {}, mode: {} }\n",
            6,
            23,
            "declares (path, mode)",
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
            "version: 1\nlimits: { timeout_ms: 0 }\n",
            2,
            23,
            "`timeout_ms` is 0",
            Kind::InvalidValue,
        ),
        (
            "version: 1\nlimits: { max_recursion: 0 }\n",
            2,
            26,
            "`max_recursion` is 0",
            Kind::InvalidValue,
        ),
        (
            "version: 1\nlimits: { max_tool_calls: 2000000 }\n",
            2,
            27,
            "larger than lineage can track",
            Kind::InvalidValue,
        ),
        (
            "version: 1\ntools:\n  t:\n    effect: read\n    args:\n      x: { require: verified(Nope) }\n",
            6,
            21,
            "no verifier mints kind `Nope`",
            Kind::Undeclared,
        ),
        (
            "version: 1\nservers:\n  s: { command: srv, reader: ' ' }\n",
            3,
            30,
            "the reader is empty",
            Kind::Empty,
        ),
        (
            "version: 1\nservers:\n  s: { command: srv, reader: 'mcp:s' }\ntools:\n  t:\n    source: mcp.s.t\n    effect: read\n    args: { server: {} }\n",
            8,
            13,
            "`server` names it in `readers_must_include`",
            Kind::NameClash,
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
        let mut failures = Vec::new();
        for (text, line, column, words, kind) in CASES {
            match Policy::from_yaml_str(text, "t.yaml", Path::new(".")) {
                Ok(_) => failures.push(format!("accepted:\n{text}")),
                Err(e)
                    if (e.line, e.column) != (*line, *column)
                        || !e.to_string().contains(words)
                        || e.kind != *kind =>
                {
                    failures.push(format!(
                        "expected {line}:{column} `{words}` ({kind:?}), got {e} ({:?})\nfor:\n{text}",
                        e.kind
                    ))
                }
                Err(_) => {}
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }

    /// The `planner` section: each bad shape is refused with its kind and key path; absent, or with only
    /// some keys, it takes the defaults.
    #[test]
    fn a_bad_planner_section_names_its_kind_and_key_path() {
        let cases: &[(&str, Kind, &[&str])] = &[
            ("planner: [llm:planner]\n", Kind::WrongType, &["planner"]),
            ("planner: llm:planner\n", Kind::WrongType, &["planner"]),
            // A scalar of the wrong kind is a value the format does not accept, as everywhere.
            (
                "planner: { reads_untrusted: yes please }\n",
                Kind::InvalidValue,
                &["planner", "reads_untrusted"],
            ),
            (
                "planner: { reader: [a, b] }\n",
                Kind::WrongType,
                &["planner", "reader"],
            ),
            (
                "planner: { read_untrusted: true }\n",
                Kind::UnknownKey,
                &["planner", "read_untrusted"],
            ),
            (
                "planner: { reader: '  ' }\n",
                Kind::Empty,
                &["planner", "reader"],
            ),
            (
                "user: Me@Example.com\nplanner: { reader: me@example.com }\n",
                Kind::NameClash,
                &["planner", "reader"],
            ),
            // The YAML reader refuses a duplicate key before the structure is known: no path, as for every
            // duplicate key (tests/policy_check.rs, `duplicate_tool`).
            (
                "planner: { reader: a, reader: b }\n",
                Kind::DuplicateKey,
                &[],
            ),
        ];
        let mut failures = Vec::new();
        for (rest, kind, path) in cases {
            let text = format!("version: 1\n{rest}");
            match Policy::from_yaml_str(&text, "t.yaml", Path::new(".")) {
                Ok(_) => failures.push(format!("accepted:\n{text}")),
                Err(e) if e.kind != *kind || !e.key_path.is(path) => failures.push(format!(
                    "expected {kind:?} at {path:?}, got {:?} at `{}`: {e}\nfor:\n{text}",
                    e.kind, e.key_path
                )),
                Err(_) => {}
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));

        let default = Policy::from_yaml_str("version: 1\n", "t.yaml", Path::new(".")).unwrap();
        assert_eq!(default.planner().reader, "llm:planner");
        assert!(!default.planner().reads_untrusted);
        let some = Policy::from_yaml_str(
            "version: 1\nplanner: { reads_untrusted: true }\n",
            "t.yaml",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(some.planner().reader, "llm:planner");
        assert!(some.planner().reads_untrusted);
        // `policy check` prints the section with its defaults filled in.
        let printed = default.to_yaml().unwrap();
        assert!(
            printed.contains("planner:\n  reader: llm:planner\n  reads_untrusted: false\n"),
            "{printed}"
        );
    }
}
