//! What is kept between calls and runs: a store one tool writes and another reads back without the label
//! it was written with, and `known:` (remembered values: roles naming tool arguments, expiry, scope).

use super::{Ctx, Kind, PolicyError, Seg};
use crate::policy::model::{ForbidTags, PolicyFile, Source, ToolSource, ToolSpec};

/// A store whose labels nobody keeps (docs/semantics.md, "Stores keep labels"): what a tool writes into
/// `store: NAME` comes back from a read tool of that store with the read's label alone, so every argument of
/// the write must already meet that label: forbid every tag the read does not give back, be trusted when the
/// read says trusted, and be public when the read's readers are anyone but the user. The files sandbox
/// keeps its labels and is exempt.
pub(super) fn check_stores(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    use crate::policy::model::{Effect, IntegritySpec, ReadersSpec};
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

/// The `known:` section and every `known(ROLE)` (docs/semantics.md, "Remembered values"): a role's list
/// names arguments that exist, and a `known(ROLE)` of a listed role is written only on an argument the
/// role lists (a remembered payee must not quietly cover an amount).
pub(super) fn check_known(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
    use crate::policy::model::{MAX_EXPIRY_DAYS, Requirement};
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
        if !crate::policy::model::is_identifier(role) {
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::policy::Policy;

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
}
