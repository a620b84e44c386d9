//! The starting policy `zamburak policy init --mcp` writes for an MCP server's tools: every tool declared,
//! every argument requiring `trusted`, recipients marked, results untrusted and `PRIVATE`. It sits beside
//! the client that lists the tools, so any front door can write one; the CLI only says what was written.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::mcp::client::ServerIdentity;
use crate::text::one_line;

/// A plan-facing name for server tool `name`: identifier characters, never a keyword or plan builtin.
fn plan_name(name: &str, taken: &[String]) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s = format!("t_{s}");
    }
    if !crate::policy::is_free_name(&s, false) {
        s.push_str("_tool");
    }
    let base = s.clone();
    let mut n = 2;
    while taken.contains(&s) {
        s = format!("{base}_{n}");
        n += 1;
    }
    s
}

fn yaml_str(s: &str) -> String {
    // A JSON string is a valid YAML double-quoted scalar.
    Value::String(s.to_string()).to_string()
}

/// The starting policy for a server's tools, as commented YAML: every tool declared, every argument
/// requiring `trusted`, results untrusted and `PRIVATE`. Tools that cannot be declared are listed in a
/// comment with the reason.
pub fn starting_policy(
    server: &str,
    id: &ServerIdentity,
    command: &[String],
    cwd: Option<&Path>,
    env: &[String],
    tools: &[Value],
) -> String {
    let mut y = String::new();
    let _ = writeln!(
        y,
        "# Written by `zamburak policy init --mcp {server}` for server {} {}.",
        one_line(&id.name, 80),
        one_line(&id.version, 40)
    );
    y.push_str(
        "# Safe by default: every argument of every tool requires `trusted` (a plan literal or a trusted\n\
         # source), a call needs a trusted control context, and every result is untrusted and PRIVATE.\n\
         # The server's annotations (readOnlyHint…) are its own claims: they appear in comments only.\n\
         # Review, relax what you trust, then run `zamburak mcp lock` again.\n",
    );
    y.push_str("version: 1\ntags: [PRIVATE]\nservers:\n");
    let _ = writeln!(y, "  {server}:");
    let _ = writeln!(y, "    command: {}", yaml_str(&command[0]));
    let args: Vec<String> = command[1..].iter().map(|a| yaml_str(a)).collect();
    let _ = writeln!(y, "    args: [{}]", args.join(", "));
    if let Some(cwd) = cwd {
        let _ = writeln!(y, "    cwd: {}", yaml_str(&cwd.to_string_lossy()));
    }
    let env: Vec<String> = env.iter().map(|e| yaml_str(e)).collect();
    let _ = writeln!(y, "    env: [{}]", env.join(", "));
    y.push_str("tools:\n");
    let mut taken: Vec<String> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    for tool in tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        if !crate::policy::servers::is_tool_name(name) {
            skipped.push(format!("{}: not a valid MCP tool name", one_line(name, 64)));
            continue;
        }
        let schema = tool.get("inputSchema").cloned().unwrap_or_default();
        let required = crate::mcp::schema::required(&schema);
        let optional: Vec<&str> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.keys()
                    .map(String::as_str)
                    .filter(|k| !required.contains(k))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(bad) = required
            .iter()
            .find(|a| !crate::policy::is_free_name(a, true))
        {
            skipped.push(format!(
                "{name}: required argument `{}` cannot be a plan keyword argument",
                one_line(bad, 64)
            ));
            continue;
        }
        let plan = plan_name(name, &taken);
        taken.push(plan.clone());
        y.push('\n');
        if let Some(d) = tool.get("description").and_then(Value::as_str) {
            let _ = writeln!(y, "  # {}", one_line(d, 200));
        }
        let h = hints(tool);
        if !h.is_empty() {
            let _ = writeln!(y, "  # server hints (untrusted): {h}");
        }
        let free_optional: Vec<&str> = optional
            .iter()
            .copied()
            .filter(|a| crate::policy::is_free_name(a, true))
            .collect();
        if !free_optional.is_empty() {
            let _ = writeln!(
                y,
                "  # optional arguments you may declare (a declared argument is passed in every call; None leaves it out): {}",
                free_optional.join(", ")
            );
        }
        let _ = writeln!(y, "  {plan}:");
        let _ = writeln!(y, "    source: mcp.{server}.{name}");
        y.push_str("    effect: execute\n");
        if required.is_empty() {
            y.push_str("    args: {}\n");
        } else {
            y.push_str("    args:\n");
            for a in &required {
                // An argument named like who receives is marked so: with `effect: execute` (a tool the
                // reviewer has not said sends) its name alone would not make it one (docs/policy.md,
                // "Recipients").
                if crate::policy::sinks::is_recipient_name(a) {
                    // Commented: a value the person approved and remembered counts only where the
                    // reviewer says so (docs/approvals.md, "Remembered values").
                    let _ = writeln!(
                        y,
                        "      # to accept a value you approved with `approve --remember {a}` too: {a}: {{ require: [trusted, \"known({a})\"], recipient: true }}"
                    );
                    let _ = writeln!(y, "      {a}: {{ require: trusted, recipient: true }}");
                } else {
                    let _ = writeln!(y, "      {a}: {{ require: trusted }}");
                }
            }
        }
        y.push_str("    returns: { integrity: untrusted, tags: [PRIVATE] }\n");
    }
    if !skipped.is_empty() {
        y.push_str("\n# Not declared:\n");
        for s in skipped {
            let _ = writeln!(y, "#   {s}");
        }
    }
    y
}

/// A tool's annotation hints (`readOnlyHint=true, …`), the server's own claims, as one line.
pub fn hints(tool: &Value) -> String {
    let Some(Value::Object(a)) = tool.get("annotations") else {
        return String::new();
    };
    // Server text: one line, so it can never leave the comment it is written into.
    let all = a
        .iter()
        .filter(|(k, _)| k.ends_with("Hint"))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ");
    one_line(&all, 300)
}
