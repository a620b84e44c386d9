//! Where a tool comes from: a builtin adapter (its fixed arguments), an MCP server (declared, with a
//! command, and never `pure`), an LLM provider (declared, with what its kind needs, and a tool that sends
//! exactly `prompt`, `data` and `schema`); and the `builtins.web` allow list.

use super::limits::check_positive;
use super::names::check_entry_name;
use super::{Ctx, Kind, PolicyError, Seg};
use crate::policy::model::{Effect, McpTool, PolicyFile, Source, ToolSpec};

/// A builtin adapter fixes the argument names and contacts the outside world (docs/policy.md, "Tools": a
/// policy that checks a misspelt argument would check nothing).
pub(super) fn check_builtin(
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

/// An MCP tool is served by a declared server, and is never `pure`: the server is a process that may do
/// anything, so its calls are always checked.
pub(super) fn check_mcp(
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

/// The `reader` of the server of an MCP tool, when it declares one.
pub(super) fn server_reader<'f>(file: &'f PolicyFile, tool: &ToolSpec) -> Option<&'f str> {
    let mcp = tool.source.as_ref()?.mcp()?;
    file.servers.get(&mcp.server)?.reader.as_deref()
}

/// Each server has a command, a name that fits `mcp.SERVER.TOOL`, environment variable names and
/// positive timeouts.
pub(super) fn check_servers(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
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

/// The arguments of a `builtin.llm.PROVIDER` tool, in order.
pub const LLM_ARGS: [&str; 3] = ["prompt", "data", "schema"];

/// An LLM tool is served by a declared provider, sends (its inputs leave the machine), and takes exactly
/// `prompt`, `data` and `schema`.
pub(super) fn check_llm(
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
            (f.integrity == Some(crate::policy::model::IntegritySpec::Trusted)).then_some(name)
        });
    if returns.integrity == Some(crate::policy::model::IntegritySpec::Trusted)
        || trusted_field.is_some()
    {
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

/// Each provider names a reader, and what its kind needs: a URL and a model, or a fixtures file.
pub(super) fn check_providers(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
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

/// Every `builtins.web.allow` entry must be a URL the web adapter can compare with (policy::url_rule): an
/// entry it cannot read would silently allow nothing.
pub(super) fn check_web_allow(cx: &Ctx<'_>, file: &PolicyFile) -> Result<(), PolicyError> {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{Case, each_points_at_its_mistake};
    use crate::policy::PolicyErrorKind as Kind;

    const CASES: &[Case] = &[
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
    ];

    #[test]
    fn each_check_points_at_its_mistake() {
        each_points_at_its_mistake(CASES);
    }
}
