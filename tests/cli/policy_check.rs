//! `zamburak policy check`: the bundled policies load, and every broken policy in tests/policies/ is
//! refused with exit code 2 and an `error: ...` message pointing (` --> FILE:LINE:COL`, the line, a caret) at
//! the mistake.

use std::path::Path;

use assert_cmd::Command;
use zamburak::policy::{Policy, PolicyErrorKind, PolicyErrorKind as K};

fn check(file: &str) -> (i32, String, String) {
    let out = Command::cargo_bin("zamburak")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["policy", "check", file])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const TOOLS: [&str; 10] = [
    "read_inbox",
    "get_email",
    "search_email",
    "send_email",
    "draft_reply",
    "commit_draft",
    "list_files",
    "read_file",
    "write_file",
    "fetch_url",
];

#[test]
fn the_default_policy_checks_and_prints_every_tool() {
    let (code, stdout, stderr) = check("policies/default.yaml");
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    for tool in TOOLS {
        assert!(
            stdout.contains(&format!("\n  {tool}:\n")),
            "{tool} missing from:\n{stdout}"
        );
    }
    // Defaults are filled in and paths resolved against the policy's directory.
    assert!(stdout.contains("on_violation: deny"), "{stdout}");
    let inbox = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/../examples/mail/inbox");
    assert!(stdout.contains(&*inbox.to_string_lossy()), "{stdout}");
}

#[test]
fn the_printed_policy_reads_back_as_the_same_policy() {
    let (code, stdout, stderr) = check("policies/default.yaml");
    assert_eq!(code, 0, "{stderr}");
    let reread = Policy::from_yaml_str(&stdout, "printed.yaml", Path::new("/elsewhere")).unwrap();
    let original =
        Policy::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/default.yaml")).unwrap();
    assert_eq!(reread.file(), original.file());
}

#[test]
fn the_strict_policy_denies_instead_of_asking_and_has_no_web() {
    let (code, stdout, stderr) = check("policies/strict.yaml");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stdout.contains("confirm") && !stdout.contains("fetch_url"),
        "{stdout}"
    );
    let strict =
        Policy::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/strict.yaml")).unwrap();
    assert!(strict.builtins().web.is_none());
    assert!(
        strict
            .tools()
            .all(|(_, t)| t.source.as_ref().and_then(|s| s.builtin())
                != Some(zamburak::policy::Source::WebGet))
    );
    for (name, tool) in strict.tools() {
        assert_eq!(
            tool.on_violation(),
            zamburak::policy::OnViolation::Deny,
            "{name}"
        );
    }
}

#[test]
fn the_bundled_default_is_the_file_in_policies() {
    let bundled = Policy::bundled_default().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/default.yaml"),
    )
    .unwrap();
    assert_eq!(zamburak::policy::BUNDLED_DEFAULT, text);
    assert_eq!(bundled.tools().map(|(n, _)| n).collect::<Vec<_>>(), TOOLS);
}

/// Each broken fixture, the line and column of its mistake, and words the message must contain.
const BROKEN: &[(&str, u64, u64, &str)] = &[
    ("syntax_error", 3, 6, "':'"),
    ("not_a_mapping", 1, 1, "must be a mapping"),
    ("unknown_key", 10, 5, "unknown field `on_violaton`"),
    ("wrong_type", 5, 19, "invalid value"),
    ("bad_version", 2, 10, "unsupported policy version 2"),
    ("duplicate_tool", 6, 3, "duplicate key `get_email`"),
    ("undeclared_tag", 10, 42, "tag `PASSWORD` is not declared"),
    ("undeclared_field_tag", 11, 33, "tag `PII` is not declared"),
    (
        "readers_unknown_arg",
        10,
        31,
        "`addressees`, which is not an argument of `send_email`",
    ),
    ("unknown_verifier_kind", 5, 11, "unknown variant `regex`"),
    ("verifier_unknown_field", 6, 5, "unknown field `maximum`"),
    ("unminted_kind", 9, 33, "no verifier mints kind `SafeURL`"),
    ("bad_requirement", 7, 32, "\"verified Recipient\""),
    ("bad_forbid_tags", 7, 14, "\"all\""),
    ("empty_from_fields", 10, 31, "`from_fields` is empty"),
    ("empty_also_reader", 10, 63, "empty reader name"),
    ("too_many_tags", 2, 79, "too many tags: 17"),
    ("too_many_kinds", 12, 44, "too many verified kinds"),
    (
        "two_verifiers_one_kind",
        4,
        75,
        "verifier `also_recipient` mints `Recipient`, which verifier `verify_recipient` mints too",
    ),
    ("tool_named_like_verifier", 5, 3, "same name as a verifier"),
    ("underscore_name", 6, 3, "`_raw_send` starts with `_`"),
    (
        "mcp_undeclared_server",
        4,
        13,
        "server `fs` is not declared under `servers`",
    ),
    (
        "llm_undeclared_provider",
        4,
        13,
        "provider `local` is not declared under `providers`",
    ),
    ("llm_wrong_args", 8, 5, "declares (prompt, text)"),
    (
        "llm_without_provider_check",
        10,
        7,
        "the provider must be a reader of it",
    ),
    ("llm_trusted_answer", 12, 5, "an LLM's answer is untrusted"),
    (
        "provider_recipient_outside_llm",
        9,
        37,
        "names `provider`, which is not an argument of `send_email`",
    ),
    (
        "unknown_source",
        4,
        5,
        "invalid value: string \"builtin.mail.delete\"",
    ),
    (
        "wrong_builtin_args",
        8,
        7,
        "whose arguments are (to, subject, body), but declares (recipient, subject, body)",
    ),
    ("pure_builtin", 5, 13, "is not pure"),
    (
        "bad_web_allow",
        6,
        9,
        "entry 2 is refused: the URL contains an encoded slash",
    ),
    (
        "bad_url_paths",
        7,
        23,
        "has a path prefix that is not a URL path",
    ),
    ("tags_when_unknown_arg", 10, 18, "`tags_when` names `file`"),
    (
        "tags_when_undeclared_tag",
        10,
        51,
        "tag `AUTH_SECRET` is not declared",
    ),
];

#[test]
fn broken_policies_are_refused_at_the_line_of_the_mistake() {
    let mut fixtures: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/policies"))
            .unwrap()
            .map(|e| {
                e.unwrap()
                    .path()
                    .file_stem()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
    fixtures.sort();
    let mut listed: Vec<String> = BROKEN.iter().map(|(f, ..)| f.to_string()).collect();
    listed.sort();
    assert_eq!(
        fixtures, listed,
        "every fixture has an expectation and every expectation a fixture"
    );

    for (name, line, column, words) in BROKEN {
        let file = format!("tests/policies/{name}.yaml");
        let (code, stdout, stderr) = check(&file);
        assert_eq!(code, 2, "{file}: {stderr}");
        assert!(stdout.is_empty(), "{file} printed {stdout}");
        let at = format!("--> {file}:{line}:{column}\n");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(&at),
            "{file}: expected `error: ...{at}...`, got:\n{stderr}"
        );
        assert_eq!(
            stderr.matches("error:").count(),
            1,
            "one `error:` prefix: {stderr}"
        );
        // The snippet shows the line pointed at, with a caret under the column.
        let text = std::fs::read_to_string(&file).unwrap();
        if let Some(source_line) = text.lines().nth(*line as usize - 1)
            && !source_line.chars().any(char::is_control)
            && source_line.chars().count() < 200
        {
            let caret = format!("| {}^", " ".repeat(*column as usize - 1));
            assert!(
                stderr.contains(&format!("{line} | {source_line}\n")) && stderr.contains(&caret),
                "{file}: snippet of line {line} with a caret at {column}:\n{stderr}"
            );
        }
        assert!(
            stderr.contains(words),
            "{file}: expected `{words}` in:\n{stderr}"
        );
        insta::assert_snapshot!(format!("broken_{name}"), stderr);
    }
}

/// Each broken fixture's kind of mistake and where it is in the policy's structure: what a program reads
/// instead of the message (an empty path: the mistake is found before the structure is).
const KINDS: &[(&str, PolicyErrorKind, &str)] = &[
    (
        "bad_forbid_tags",
        K::InvalidValue,
        "tools.fetch_url.args.url.forbid_tags",
    ),
    (
        "bad_requirement",
        K::InvalidValue,
        "tools.send_email.args.to.require[1]",
    ),
    (
        "bad_url_paths",
        K::InvalidValue,
        "verifiers.verify_url.paths[1]",
    ),
    ("bad_version", K::UnsupportedVersion, "version"),
    ("bad_web_allow", K::InvalidValue, "builtins.web.allow[1]"),
    ("duplicate_tool", K::DuplicateKey, ""),
    (
        "empty_also_reader",
        K::Empty,
        "tools.get_email.returns.readers.also[1]",
    ),
    (
        "empty_from_fields",
        K::Empty,
        "tools.get_email.returns.readers.from_fields",
    ),
    (
        "llm_trusted_answer",
        K::SourceMismatch,
        "tools.query_llm.returns",
    ),
    (
        "llm_undeclared_provider",
        K::Undeclared,
        "tools.query_llm.source",
    ),
    (
        "llm_without_provider_check",
        K::SourceMismatch,
        "tools.query_llm.args.data",
    ),
    ("llm_wrong_args", K::SourceMismatch, "tools.query_llm.args"),
    (
        "mcp_undeclared_server",
        K::Undeclared,
        "tools.write_file.source",
    ),
    ("not_a_mapping", K::WrongType, ""),
    (
        "provider_recipient_outside_llm",
        K::Undeclared,
        "tools.send_email.args.body.readers_must_include",
    ),
    ("pure_builtin", K::SourceMismatch, "tools.send_email.effect"),
    (
        "readers_unknown_arg",
        K::Undeclared,
        "tools.send_email.args.body.readers_must_include",
    ),
    ("syntax_error", K::Syntax, ""),
    (
        "tags_when_undeclared_tag",
        K::Undeclared,
        "tools.read_file.returns.tags_when[0].tags[0]",
    ),
    (
        "tags_when_unknown_arg",
        K::Undeclared,
        "tools.read_file.returns.tags_when[0].arg",
    ),
    ("too_many_kinds", K::TooMany, "verifiers.v10.mints"),
    (
        "two_verifiers_one_kind",
        K::InvalidValue,
        "verifiers.also_recipient.mints",
    ),
    ("too_many_tags", K::TooMany, "tags[16]"),
    ("tool_named_like_verifier", K::NameClash, "tools.check_url"),
    (
        "undeclared_field_tag",
        K::Undeclared,
        "tools.get_email.returns.fields.body.tags[1]",
    ),
    (
        "undeclared_tag",
        K::Undeclared,
        "tools.send_email.args.body.forbid_tags[1]",
    ),
    ("underscore_name", K::InvalidName, "tools._raw_send"),
    ("unknown_key", K::UnknownKey, "tools.send_email.on_violaton"),
    (
        "unknown_source",
        K::InvalidValue,
        "tools.delete_email.source",
    ),
    (
        "unknown_verifier_kind",
        K::InvalidValue,
        "verifiers.verify_phone.kind",
    ),
    (
        "unminted_kind",
        K::Undeclared,
        "tools.fetch_url.args.url.require[1]",
    ),
    (
        "verifier_unknown_field",
        K::UnknownKey,
        "verifiers.verify_amount.maximum",
    ),
    (
        "wrong_builtin_args",
        K::SourceMismatch,
        "tools.send_email.args.recipient",
    ),
    ("wrong_type", K::InvalidValue, "limits.max_tool_calls"),
];

#[test]
fn broken_policies_say_their_kind_and_key_path() {
    let mut listed: Vec<&str> = KINDS.iter().map(|(f, ..)| *f).collect();
    listed.sort_unstable();
    let mut broken: Vec<&str> = BROKEN.iter().map(|(f, ..)| *f).collect();
    broken.sort_unstable();
    assert_eq!(listed, broken, "every broken fixture has a kind");
    let mut failures = Vec::new();
    for (name, kind, path) in KINDS {
        let file =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/policies/{name}.yaml"));
        let e = Policy::load(&file).unwrap_err();
        if e.kind != *kind || e.key_path.to_string() != *path {
            failures.push(format!(
                "{name}: expected {kind:?} at `{path}`, got {:?} at `{}`",
                e.kind, e.key_path
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let missing = Policy::load(Path::new("tests/policies/does_not_exist.yaml")).unwrap_err();
    assert_eq!(missing.kind, K::Unreadable);
    assert!(missing.key_path.is_empty());
}

#[test]
fn an_unreadable_file_is_a_usage_error() {
    let (code, _, stderr) = check("tests/policies/does_not_exist.yaml");
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("error: cannot read tests/policies/does_not_exist.yaml: "),
        "{stderr}"
    );
}

#[test]
fn the_committed_json_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policy.schema.json");
    let fresh = serde_json::to_string_pretty(&Policy::json_schema()).unwrap() + "\n";
    if std::env::var_os("ZAMBURAK_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "docs/policy.schema.json is stale; regenerate with ZAMBURAK_BLESS=1 cargo test --test cli policy_check"
    );
}

#[test]
fn the_json_schema_describes_the_format() {
    let schema = Policy::json_schema();
    let props = &schema["properties"];
    for key in [
        "version",
        "mode",
        "user",
        "tags",
        "verifiers",
        "tools",
        "planner",
        "limits",
        "builtins",
    ] {
        assert!(props.get(key).is_some(), "schema lacks `{key}`");
    }
    assert_eq!(schema["additionalProperties"], serde_json::json!(false));
    assert!(
        schema["required"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("version"))
    );
}

#[test]
fn the_example_in_the_user_docs_is_a_valid_policy() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policy.md"))
            .unwrap();
    let start = docs
        .find("```yaml\n")
        .expect("docs/policy.md has a yaml example")
        + "```yaml\n".len();
    let end = start + docs[start..].find("```").unwrap();
    let policy =
        Policy::from_yaml_str(&docs[start..end], "docs/policy.md", Path::new("docs")).unwrap();
    assert!(policy.tool("send_email").is_some());
}
