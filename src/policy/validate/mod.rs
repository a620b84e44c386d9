//! The checks that need more than one field of the policy, each reported at the exact key or value.
//!
//! They run on the typed model (so every value already has the right shape) and look positions up in the
//! positioned tree of the same text.
//!
//! Split along its seams: this file holds the context every check reports through ([`Ctx`]), the entry
//! point ([`validate`], in the order the checks run), `version`, `user` and the `planner` section;
//! [`names`] the names a policy declares (tools, verifiers, arguments, tags, servers and providers);
//! [`tools`] verifiers, tools and their arguments and what they return; [`sources`] where a tool comes from
//! (builtin adapters, MCP servers, LLM providers, `builtins.web`); [`stores`] what is kept between calls and
//! runs (stores written and read back, `known:`'s remembered values); [`limits`] the run's limits and the
//! positive bounds of servers and providers.

mod limits;
mod names;
mod sources;
mod stores;
mod tools;

pub use names::is_free_name;

use super::error::{KeyPath, PolicyError, PolicyErrorKind as Kind};
use super::model::{Mode, PolicyFile};
use super::tree::{Node, Seg};

/// Where every check reports a mistake: the file's name for the message, its positioned tree for the place.
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
    names::check_tags(&cx, &file.tags)?;
    let kinds = tools::check_verifiers(&cx, &file.verifiers)?;
    sources::check_servers(&cx, file)?;
    sources::check_providers(&cx, file)?;
    for (tool_name, tool) in file.tools.iter() {
        tools::check_tool(&cx, file, &kinds, tool_name, tool)?;
    }
    check_planner(&cx, file)?;
    stores::check_stores(&cx, file)?;
    limits::check_limits(&cx, file)?;
    sources::check_web_allow(&cx, file)?;
    stores::check_known(&cx, file)?;
    Ok(kinds)
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

fn join<'a>(base: &[Seg<'a>], rest: &[Seg<'a>]) -> Vec<Seg<'a>> {
    let mut p = base.to_vec();
    p.extend_from_slice(rest);
    p
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::policy::{Policy, PolicyErrorKind as Kind};

    /// A policy text, the line and column of its mistake, words of the message and the kind of mistake:
    /// each room's table of the checks the integration fixtures do not cover.
    pub(super) type Case = (&'static str, u64, u64, &'static str, Kind);

    /// Loads each case's text and requires it refused at its place, in its words, with its kind.
    pub(super) fn each_points_at_its_mistake(cases: &[Case]) {
        let mut failures = Vec::new();
        for (text, line, column, words, kind) in cases {
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

    const CASES: &[Case] = &[(
        "version: 1\nuser: '  '\n",
        2,
        7,
        "`user` is empty",
        Kind::Empty,
    )];

    #[test]
    fn each_check_points_at_its_mistake() {
        each_points_at_its_mistake(CASES);
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
            // duplicate key (tests/cli/policy_check.rs, `duplicate_tool`).
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
