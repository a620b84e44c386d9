//! Reading a policy file: YAML → positioned tree → typed model (from the tree when policy::from_tree can, else
//! from the text) → checks → normalised [`Policy`].
//!
//! Policy files are adversarial input (a policy may come from a repository under review), so reading never
//! panics, refuses files over [`MAX_POLICY_BYTES`], and parses under a YAML budget that bounds nesting,
//! node count and alias expansion.

use std::path::{Path, PathBuf};

use serde_saphyr::{MessageFormatter, Options};

use super::Policy;
use super::error::{KeyPath, PolicyError, PolicyErrorKind as Kind, is_duplicate_key_message};
use super::model::{
    BuiltinsConfig, ControlSpec, Limits, Mode, PlannerSpec, PolicyFile, VerifierSpec,
};
use super::tree::{self, Node, NodeKind, Pos, Seg};
use super::validate;

/// Largest policy file accepted, in bytes.
pub const MAX_POLICY_BYTES: usize = 1 << 20;
/// Deepest nesting of YAML collections accepted. The format needs 6; the rest is room for comments' sake.
pub const MAX_POLICY_DEPTH: usize = 24;

pub(super) fn yaml_options() -> Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_POLICY_DEPTH;
    budget.flow_nesting_limit = MAX_POLICY_DEPTH;
    budget.max_nodes = 100_000;
    budget.max_events = 400_000;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_total_scalar_bytes = 4 * MAX_POLICY_BYTES;
    let mut options = Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = 100_000;
    options
}

/// A policy text as a JSON mapping, under the same size and YAML budget as [`Policy::from_yaml_str`]
/// (no alias bomb or deep nesting gets through), without the policy's own checks: for a program that
/// edits an untrusted draft before loading it (`policy compile`).
pub fn yaml_mapping(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    if text.len() > MAX_POLICY_BYTES {
        return Err(format!("it is larger than {MAX_POLICY_BYTES} bytes"));
    }
    match serde_saphyr::from_str_with_options::<serde_json::Value>(text, yaml_options()) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(_) => Err("it is not a mapping".into()),
        Err(e) => Err(sanitize(&e.to_string())),
    }
}

impl Policy {
    /// Reads and checks a policy file. Relative `builtins` paths are resolved against the file's directory
    /// (made absolute, so they keep meaning the same thing if the process changes directory).
    ///
    /// ```
    /// use zamburak::policy::Policy;
    /// let err = Policy::load(std::path::Path::new("no/such/policy.yaml")).unwrap_err();
    /// assert!(err.to_string().starts_with("cannot read no/such/policy.yaml: "));
    /// ```
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        Policy::load_bytes(path).map(|(policy, _)| policy)
    }

    /// Loads a policy file and returns the exact bytes it was parsed from, read once: what a trace or a
    /// snapshot hashes is what decided (a file changed between two reads cannot split them).
    pub fn load_bytes(path: &Path) -> Result<(Policy, Vec<u8>), PolicyError> {
        let name = path.display().to_string();
        let bytes = crate::capped::read(path, MAX_POLICY_BYTES as u64).map_err(|e| match e {
            crate::capped::CappedError::TooLarge(_) => too_large(&name),
            crate::capped::CappedError::Io(e) => PolicyError::unreadable(&name, e.to_string()),
        })?;
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            let pos = position_of_byte(&bytes, e.valid_up_to());
            PolicyError::at(Kind::Syntax, &name, pos, "the file is not valid UTF-8")
                .with_source(&String::from_utf8_lossy(&bytes))
        })?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let base = std::path::absolute(&parent).unwrap_or(parent);
        let policy = Policy::from_yaml_str(text, &name, &base)?;
        Ok((policy, bytes))
    }

    /// Checks a policy given as text. `display_name` is used in error messages; relative `builtins` paths
    /// are joined onto `base_dir` as given.
    ///
    /// ```
    /// use std::path::Path;
    /// use zamburak::policy::Policy;
    /// let p = Policy::from_yaml_str(
    ///     "version: 1\ntools:\n  get_email:\n    source: builtin.mail.get\n    effect: read\n    args: { id: {} }\n",
    ///     "inline.yaml",
    ///     Path::new("/etc/zamburak"),
    /// ).unwrap();
    /// assert_eq!(p.signatures().tools["get_email"], ["id"]);
    /// ```
    pub fn from_yaml_str(
        text: &str,
        display_name: &str,
        base_dir: &Path,
    ) -> Result<Policy, PolicyError> {
        Policy::from_yaml_unlocated(text, display_name, base_dir).map_err(|e| e.with_source(text))
    }

    fn from_yaml_unlocated(
        text: &str,
        display_name: &str,
        base_dir: &Path,
    ) -> Result<Policy, PolicyError> {
        Policy::read_checked(text, display_name, base_dir, Typed::FromTree)
    }

    /// The steps of reading a policy. `typed` says how the typed model is read; every other step, and so
    /// every error, is the same either way (the tests compare the two).
    pub(super) fn read_checked(
        text: &str,
        display_name: &str,
        base_dir: &Path,
        typed: Typed,
    ) -> Result<Policy, PolicyError> {
        if text.len() > MAX_POLICY_BYTES {
            return Err(too_large(display_name));
        }
        let options = yaml_options();
        let tree = tree::parse(text, options.clone()).map_err(|e| yaml_error(display_name, &e))?;
        if !matches!(tree.kind, NodeKind::Map(_)) {
            return Err(PolicyError::at(
                Kind::WrongType,
                display_name,
                tree.pos,
                "a policy must be a mapping",
            )
            .expected("keys such as `version: 1`, `tags`, `verifiers`, `tools`"));
        }
        check_verifier_shapes(display_name, &tree)?;
        // Reading the model from the tree spares a second parse of the text (issue #40); where it cannot
        // vouch for the value the YAML deserializer would read, it declines and the text is read again.
        let from_tree = match typed {
            Typed::FromTree => super::from_tree::read::<PolicyFile>(text, &tree),
            #[cfg(test)]
            Typed::FromText => None,
        };
        let file = match from_tree {
            Some(file) => file,
            None => serde_saphyr::from_str_with_options(text, options).map_err(|e| {
                let located = yaml_error(display_name, &e);
                let at = Pos {
                    line: located.line,
                    column: located.column,
                };
                let path = KeyPath::of(&tree.path_at(at));
                located.in_path(path)
            })?,
        };
        let kinds = validate::validate(&file, &tree, display_name)?;
        let mut file = normalise(file, base_dir);
        let defaulted = super::sinks::fill_defaults(&mut file);
        Ok(Policy {
            file,
            text: text.into(),
            name: display_name.to_string(),
            kinds,
            defaulted,
        })
    }
}

/// How [`Policy::read_checked`] reads the typed model.
#[derive(Clone, Copy)]
pub(super) enum Typed {
    /// From the positioned tree when [`super::from_tree`] can, else from the text.
    FromTree,
    /// Always from the text, as before issue #40: what the tests compare against.
    #[cfg(test)]
    FromText,
}

fn too_large(name: &str) -> PolicyError {
    PolicyError::at(
        Kind::TooLarge,
        name,
        Pos::START,
        "the policy file is too large",
    )
    .expected(format!("at most {MAX_POLICY_BYTES} bytes"))
}

fn position_of_byte(bytes: &[u8], offset: usize) -> Pos {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    // Valid UTF-8 up to `offset`, so counting chars is exact.
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count() as u64
        + 1;
    Pos { line, column }
}

fn original(mut err: &serde_saphyr::Error) -> &serde_saphyr::Error {
    while let serde_saphyr::Error::AliasError { error, .. }
    | serde_saphyr::Error::WithSnippet { error, .. } = err
    {
        err = error;
    }
    err
}

/// Control characters in a message could rewrite the terminal; the file is untrusted.
fn sanitize(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// Turns a YAML or type error into a located [`PolicyError`], moving serde's ", expected ..." into the hint.
pub(crate) fn yaml_error(file: &str, err: &serde_saphyr::Error) -> PolicyError {
    let inner = original(err);
    let pos = err
        .location()
        .filter(|l| l.line() > 0)
        .map_or(Pos::START, |l| Pos::from_location(&l));
    use serde_saphyr::Error as E;
    let wrong_type =
        |hint: &str| PolicyError::at(Kind::WrongType, file, pos, "wrong type").expected(hint);
    let raw = match inner {
        E::DuplicateMappingKey { key: Some(k), .. } => format!("duplicate key `{}`", sanitize(k)),
        E::DuplicateMappingKey { key: None, .. } => "duplicate key".to_string(),
        E::MultipleDocuments { .. } => {
            return PolicyError::at(Kind::Syntax, file, pos, "a second YAML document")
                .expected("one document per policy file");
        }
        E::Budget { .. } => format!(
            "the policy is too large or too deeply nested ({})",
            serde_saphyr::DefaultMessageFormatter.format_message(inner)
        ),
        E::Unexpected {
            expected: "sequence start",
            ..
        } => return wrong_type("a list (`[a, b]`, or `- a` lines)"),
        E::Unexpected {
            expected: "mapping start",
            ..
        } => return wrong_type("a mapping (`key: value` lines or `{ }`)"),
        E::Unexpected {
            expected: "string scalar",
            ..
        } => return wrong_type("a string"),
        E::ExternallyTaggedEnumExpectedScalarOrMapping { .. } => {
            return wrong_type("a single word (see the list in docs/policy.md)");
        }
        E::InvalidScalar { ty, .. } => {
            let hint = match *ty {
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => {
                    format!("a whole number from 0 to {}", max_of(ty))
                }
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number".to_string(),
                "f32" | "f64" => "a number".to_string(),
                "bool" => "`true` or `false`".to_string(),
                other => format!("a value of type {other}"),
            };
            return PolicyError::at(Kind::InvalidValue, file, pos, "invalid value").expected(hint);
        }
        _ => serde_saphyr::DefaultMessageFormatter
            .format_message(inner)
            .into_owned(),
    };
    split_expected(PolicyError::at(yaml_kind(inner), file, pos, sanitize(&raw)))
}

/// What kind of mistake a YAML or type error is, from the deserializer's own variants.
fn yaml_kind(err: &serde_saphyr::Error) -> Kind {
    use serde_saphyr::Error as E;
    match err {
        E::DuplicateMappingKey { .. } => Kind::DuplicateKey,
        E::Budget { .. }
        | E::AliasReplayCounterOverflow { .. }
        | E::AliasReplayLimitExceeded { .. }
        | E::AliasExpansionLimitExceeded { .. }
        | E::AliasReplayStackDepthExceeded { .. } => Kind::TooLarge,
        E::Unexpected { .. }
        | E::SerdeInvalidType { .. }
        | E::ExternallyTaggedEnumExpectedScalarOrMapping { .. }
        | E::MergeValueNotMapOrSeqOfMaps { .. }
        | E::ExpectedEmptyMappingForUnitStruct { .. }
        | E::UnexpectedValueForUnit { .. }
        | E::UnexpectedValueForUnitEnumVariant { .. }
        | E::ExpectedStringKeyForExternallyTaggedEnum { .. }
        | E::TaggedEnumMismatch { .. } => Kind::WrongType,
        E::SerdeUnknownField { .. } => Kind::UnknownKey,
        E::SerdeMissingField { .. } => Kind::MissingKey,
        E::InvalidScalar { .. }
        | E::NonFiniteFloat { .. }
        | E::SerdeInvalidValue { .. }
        | E::SerdeInvalidLength { .. }
        | E::SerdeUnknownVariant { .. }
        | E::SerdeVariantId { .. }
        | E::InvalidBooleanStrict { .. }
        | E::InvalidCharNull { .. }
        | E::InvalidCharNotSingleScalar { .. }
        | E::NullIntoString { .. } => Kind::InvalidValue,
        // `de::Error::custom` from the policy's own deserializers: a duplicate name, or a value they refuse.
        E::Message { msg, .. } if is_duplicate_key_message(msg) => Kind::DuplicateKey,
        E::Message { .. } => Kind::InvalidValue,
        // The parser's nesting limit (it may fire before the budget's).
        E::ExternalMessage { source, .. }
            if matches!(
                &**source,
                serde_saphyr::ExternalMessageSource::Parser(scan)
                    if matches!(scan.kind(), serde_saphyr::granit_parser::ErrorKind::RecursionLimitExceeded)
            ) =>
        {
            Kind::TooLarge
        }
        // The parser's own errors (`ExternalMessage`), a second document, and whatever else cannot be read
        // as YAML at all.
        _ => Kind::Syntax,
    }
}

fn max_of(ty: &str) -> String {
    match ty {
        "u8" => u8::MAX.to_string(),
        "u16" => u16::MAX.to_string(),
        "u32" => u32::MAX.to_string(),
        _ => u64::MAX.to_string(),
    }
}

fn split_expected(mut e: PolicyError) -> PolicyError {
    if let Some(i) = e.message.find(", expected ") {
        let hint = e.message[i + ", expected ".len()..].to_string();
        e.message.truncate(i);
        e.expected = Some(hint.into());
    }
    e
}

/// Verifiers are an internally tagged enum, which serde buffers before deserializing, losing positions. Each
/// entry is therefore read on its own first, so a mistake inside one points at the entry or the offending key.
fn check_verifier_shapes(file: &str, tree: &Node) -> Result<(), PolicyError> {
    let Some(verifiers) = tree.entry("verifiers") else {
        return Ok(());
    };
    let NodeKind::Map(entries) = &verifiers.value.kind else {
        // The typed pass reports the wrong type with its position.
        return Ok(());
    };
    for entry in entries {
        let Err(e) = serde_json::from_value::<VerifierSpec>(entry.value.to_json()) else {
            continue;
        };
        let message = e.to_string();
        let at_key = |k: &str| entry.value.entry(k).map(|f| f.key_pos);
        let pos = backticked(&message, "unknown field `")
            .and_then(at_key)
            .or_else(|| {
                let kind = entry.value.entry("kind").map(|k| k.value.pos);
                message
                    .starts_with("unknown variant")
                    .then_some(kind)
                    .flatten()
            })
            .or_else(|| {
                message
                    .starts_with("invalid type")
                    .then_some(entry.value.pos)
            })
            .unwrap_or(entry.value.pos);
        let msg = format!(
            "in verifier `{}`: {}",
            entry.key,
            strip_json_position(&message)
        );
        // serde_json's error has no variants to match; its message names the category (the same words
        // locate the position above).
        let kind = if message.starts_with("unknown field") {
            Kind::UnknownKey
        } else if message.starts_with("missing field") {
            Kind::MissingKey
        } else if message.starts_with("invalid type") {
            Kind::WrongType
        } else {
            Kind::InvalidValue
        };
        let mut path = vec![Seg::Key("verifiers"), Seg::Key(&entry.key)];
        if let Some(field) = backticked(&message, "unknown field `").filter(|k| at_key(k).is_some())
        {
            path.push(Seg::Key(field));
        } else if message.starts_with("unknown variant") && entry.value.entry("kind").is_some() {
            path.push(Seg::Key("kind"));
        }
        return Err(split_expected(
            PolicyError::at(kind, file, pos, sanitize(&msg)).in_path(KeyPath::of(&path)),
        ));
    }
    Ok(())
}

/// The name between the first occurrence of `prefix` and the next backtick.
fn backticked<'m>(message: &'m str, prefix: &str) -> Option<&'m str> {
    let start = message.find(prefix)? + prefix.len();
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// serde_json appends " at line L column C" of its own (meaningless) JSON text; drop it.
fn strip_json_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    }
}

/// Fills in every documented default, so what `policy check` prints is what the runtime uses.
fn normalise(mut file: PolicyFile, base_dir: &Path) -> PolicyFile {
    file.mode = Some(file.mode.unwrap_or(Mode::Strict));
    for (_, tool) in file.tools.iter_mut() {
        tool.control = Some(ControlSpec {
            require: tool.control_require(),
        });
        tool.returns = Some(tool.returns());
        tool.on_violation = Some(tool.on_violation());
    }
    let said = file.planner.clone().unwrap_or_default();
    let planner = said.resolved();
    file.planner = Some(PlannerSpec {
        reader: Some(planner.reader),
        reads_untrusted: Some(planner.reads_untrusted),
        // Consent, not a default: absent stays absent, so `mcp serve` still refuses a normal policy.
        mode: said.mode,
    });
    let limits = file.limits.clone().unwrap_or_default().resolved();
    file.limits = Some(Limits {
        timeout_ms: Some(limits.timeout_ms),
        max_tool_calls: Some(limits.max_tool_calls),
        max_recursion: Some(limits.max_recursion),
        max_memory_mb: Some(limits.max_memory_mb),
    });
    for (_, provider) in file.providers.iter_mut() {
        if let Some(f) = &provider.fixtures {
            provider.fixtures = Some(base_dir.join(f));
        }
    }
    for (_, server) in file.servers.iter_mut() {
        // A relative program path is the policy's, like every other path in it; a bare name stays a `PATH`
        // lookup.
        if server.command.contains('/') && Path::new(&server.command).is_relative() {
            server.command = base_dir
                .join(&server.command)
                .to_string_lossy()
                .into_owned();
        }
        server.cwd = Some(match &server.cwd {
            Some(cwd) => base_dir.join(cwd),
            None => base_dir.to_path_buf(),
        });
    }
    file.builtins = file
        .builtins
        .map(|b| resolve_paths(b, base_dir))
        .filter(|b| *b != BuiltinsConfig::default());
    file
}

/// The 1-based line of `text` that states `rule` (a decision's rule id, such as `args.to.require` or
/// `control.require`) for `tool`: the requirement's key, or the tool's when the rule comes from a default
/// or from another argument's requirement applied to the control context. `None` for rules no line of the
/// policy states (`allow`, `fixed.*`) or text that does not parse. The text may come from an untrusted
/// trace: it is read under the same YAML budget as a policy file.
///
/// ```
/// let text = "version: 1\ntools:\n  send:\n    effect: send\n    args:\n      to: { require: trusted }\n";
/// assert_eq!(zamburak::policy::rule_line(text, "send", "args.to.require"), Some(6));
/// assert_eq!(zamburak::policy::rule_line(text, "send", "control.require"), Some(3));
/// assert_eq!(zamburak::policy::rule_line(text, "send", "fixed.unknown_tool"), None);
/// ```
pub fn rule_line(text: &str, tool: &str, rule: &str) -> Option<u64> {
    if text.len() > MAX_POLICY_BYTES {
        return None;
    }
    let tree = tree::parse(text, yaml_options()).ok()?;
    let parts: Vec<&str> = rule.split('.').collect();
    let path: Vec<Seg<'_>> = match parts.as_slice() {
        ["limits", key] => vec![Seg::Key("limits"), Seg::Key(key)],
        ["args", arg, req] => vec![
            Seg::Key("tools"),
            Seg::Key(tool),
            Seg::Key("args"),
            Seg::Key(arg),
            Seg::Key(req),
        ],
        ["returns", key] => vec![
            Seg::Key("tools"),
            Seg::Key(tool),
            Seg::Key("returns"),
            Seg::Key(key),
        ],
        ["control", "require"] => vec![
            Seg::Key("tools"),
            Seg::Key(tool),
            Seg::Key("control"),
            Seg::Key("require"),
        ],
        ["control", _] => vec![Seg::Key("tools"), Seg::Key(tool)],
        _ => return None,
    };
    let line = tree.key_pos(&path).line;
    (line > 0).then_some(line)
}

fn resolve_paths(mut b: BuiltinsConfig, base: &Path) -> BuiltinsConfig {
    let join = |p: &mut PathBuf| {
        if p.is_relative() {
            *p = base.join(&*p);
        }
    };
    if let Some(mail) = &mut b.mail {
        join(&mut mail.maildir);
        join(&mut mail.outbox);
        join(&mut mail.drafts);
    }
    if let Some(files) = &mut b.files {
        join(&mut files.root);
    }
    b
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::policy::BUNDLED_DEFAULT;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Arbitrary edits of a real policy never panic, and every refusal has a position.
        #[test]
        fn edited_policies_never_panic(start in 0usize..BUNDLED_DEFAULT.len(), len in 0usize..60,
                                       insert in "[ -~\n]{0,12}") {
            let mut text = BUNDLED_DEFAULT.to_string();
            let end = (start + len).min(text.len());
            prop_assume!(text.is_char_boundary(start) && text.is_char_boundary(end));
            text.replace_range(start..end, &insert);
            if let Err(e) = Policy::from_yaml_str(&text, "m.yaml", Path::new(".")) {
                prop_assert!(e.line >= 1 && e.column >= 1, "{}", e);
            }
        }
    }

    fn err(text: &str) -> PolicyError {
        Policy::from_yaml_str(text, "t.yaml", Path::new("/base")).unwrap_err()
    }

    #[test]
    fn a_key_path_shows_as_dotted_keys_and_indices() {
        let path = KeyPath::of(&[
            Seg::Key("servers"),
            Seg::Key("my.server"),
            Seg::Key("env"),
            Seg::Index(2),
        ]);
        assert_eq!(path.to_string(), r#"servers["my.server"].env[2]"#);
        assert_eq!(
            serde_json::to_string(&path).unwrap(),
            r#"["servers","my.server","env",2]"#
        );
        assert_eq!(
            serde_json::to_string(&Kind::UnknownKey).unwrap(),
            r#""unknown_key""#
        );
        // A key that could rewrite the terminal is escaped.
        let path = KeyPath::of(&[Seg::Key("a\u{1b}[31m")]);
        assert!(!path.to_string().contains('\u{1b}'), "{path}");
    }

    #[test]
    fn a_second_document_and_bad_utf8_are_syntax() {
        let e = err("version: 1\n---\nversion: 1\n");
        assert_eq!(e.kind, Kind::Syntax, "{e}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.yaml");
        std::fs::write(&path, b"version: 1\n\xff\n").unwrap();
        let e = Policy::load(&path).unwrap_err();
        assert_eq!((e.kind, e.line), (Kind::Syntax, 2), "{e}");
    }

    #[test]
    fn byte_positions_count_lines_and_chars() {
        assert_eq!(position_of_byte(b"ab\ncd", 4), Pos { line: 2, column: 2 });
        assert_eq!(
            position_of_byte("é\nx".as_bytes(), 2),
            Pos { line: 1, column: 2 }
        );
    }

    #[test]
    fn oversized_text_is_refused_before_parsing() {
        let text = format!("version: 1\n#{}\n", "x".repeat(MAX_POLICY_BYTES));
        let e = err(&text);
        assert_eq!((e.line, e.column), (1, 1));
        assert!(e.message.contains("too large"));
        assert_eq!(e.kind, Kind::TooLarge);
    }

    #[test]
    fn deep_nesting_is_refused_without_overflowing_the_stack() {
        let text = format!(
            "version: 1\nx: {}{}\n",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let e = err(&text);
        assert_eq!(e.line, 2, "{e}");
        assert_eq!(e.kind, Kind::TooLarge, "{e}");
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("version: 1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
        }
        let e = err(&text);
        assert!(e.line > 0, "{e}");
        assert_eq!(e.kind, Kind::TooLarge, "{e}");
    }

    #[test]
    fn unknown_top_level_key_is_located() {
        let e = err("version: 1\ntoolz: {}\n");
        assert_eq!((e.line, e.column), (2, 1));
        assert!(e.message.contains("unknown field `toolz`"), "{e}");
        assert!(e.expected.as_deref().unwrap_or("").contains("tools"), "{e}");
        assert_eq!(e.kind, Kind::UnknownKey);
        assert!(e.key_path.is(&["toolz"]), "{}", e.key_path);
    }

    #[test]
    fn control_characters_in_messages_are_escaped() {
        let e = err("version: 1\n\"bad\\u001b[31m\": 1\n");
        assert!(!e.to_string().contains('\u{1b}'), "{e}");
    }

    #[test]
    fn a_verifier_mistake_points_inside_the_verifier() {
        let e = err(
            "version: 1\nverifiers:\n  v:\n    kind: email_allowlist\n    allow: []\n    mint: X\n",
        );
        assert_eq!((e.line, e.column), (6, 5), "{e}");
        assert_eq!(e.kind, Kind::UnknownKey);
        assert!(e.key_path.is(&["verifiers", "v", "mint"]), "{}", e.key_path);
        let e = err("version: 1\nverifiers:\n  v: { kind: regex, mints: X }\n");
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("unknown variant `regex`"), "{e}");
        assert_eq!(e.kind, Kind::InvalidValue);
        assert!(e.key_path.is(&["verifiers", "v", "kind"]), "{}", e.key_path);
    }

    #[test]
    fn defaults_are_filled_and_paths_resolved() {
        let p = Policy::from_yaml_str(
            "version: 1\nbuiltins: { files: { root: data }, mail: { maildir: /m, outbox: o, drafts: d } }\n",
            "t.yaml",
            Path::new("/base"),
        )
        .unwrap();
        let b = p.builtins();
        assert_eq!(
            b.files.as_ref().map(|f| f.root.clone()),
            Some(PathBuf::from("/base/data"))
        );
        assert_eq!(
            b.mail.as_ref().map(|m| m.maildir.clone()),
            Some(PathBuf::from("/m"))
        );
        assert_eq!(p.mode(), Mode::Strict);
        assert_eq!(p.limits().max_tool_calls, 200);
    }
}
