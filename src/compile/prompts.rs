//! What `policy compile` asks the drafter, step by step, and the JSON Schema of each answer: (a) a role
//! per tool argument, (b) the policy with the constitution lines behind each rule, (c) scenarios in the
//! `policy test` format. The scenarios request holds the constitution and the tools, never the drafted
//! policy, so the scenarios test the policy rather than restate it.

use serde::Deserialize;
use serde_json::{Value, json};

use super::constitution::Constitution;
use super::roles::{ArgRole, Role};
use crate::stubs::Catalogue;

/// The drafter's roles (step `roles`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolesAnswer {
    pub roles: Vec<DraftedRole>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DraftedRole {
    pub tool: String,
    pub arg: String,
    pub role: Role,
}

/// The drafter's policy (step `policy`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyAnswer {
    pub policy_yaml: String,
    pub citations: Vec<Citation>,
}

/// The constitution lines a rule comes from; `rule` is a path such as `tools.send_money.args.recipient`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Citation {
    pub rule: String,
    pub lines: Vec<u64>,
}

/// The drafter's scenarios (step `scenarios`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenariosAnswer {
    pub scenarios_yaml: String,
    pub citations: Vec<ScenarioCitation>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioCitation {
    pub scenario: String,
    pub lines: Vec<u64>,
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": props, "required": required, "additionalProperties": false })
}

fn lines_schema() -> Value {
    json!({ "type": "array", "items": { "type": "integer" } })
}

pub fn roles_schema() -> Value {
    let names: Vec<&str> = Role::ALL.iter().map(|r| r.name()).collect();
    let item = object(
        json!({
            "tool": { "type": "string" },
            "arg": { "type": "string" },
            "role": { "type": "string", "enum": names },
        }),
        &["tool", "arg", "role"],
    );
    object(
        json!({ "roles": { "type": "array", "items": item } }),
        &["roles"],
    )
}

pub fn policy_schema() -> Value {
    let citation = object(
        json!({ "rule": { "type": "string" }, "lines": lines_schema() }),
        &["rule", "lines"],
    );
    object(
        json!({
            "policy_yaml": { "type": "string" },
            "citations": { "type": "array", "items": citation },
        }),
        &["policy_yaml", "citations"],
    )
}

pub fn scenarios_schema() -> Value {
    let citation = object(
        json!({ "scenario": { "type": "string" }, "lines": lines_schema() }),
        &["scenario", "lines"],
    );
    object(
        json!({
            "scenarios_yaml": { "type": "string" },
            "citations": { "type": "array", "items": citation },
        }),
        &["scenarios_yaml", "citations"],
    )
}

/// The tools as the drafter sees them: the typed stubs a planner is given (`zamburak stubs`), with
/// each argument, its type and description, and the records the results are made of.
pub fn tools_text(catalogue: &Catalogue) -> String {
    crate::stubs::pyi::render(catalogue)
}

/// Step (a): a role per argument.
pub fn roles_request(catalogue: &Catalogue) -> String {
    let roles: Vec<&str> = Role::ALL.iter().map(|r| r.name()).collect();
    format!(
        "Give every argument of every tool below one role: {}. A recipient is a person or address \
         something is sent to; a payee is who receives money (an IBAN, an account); a url is where a \
         request goes; a path names a file; an amount is a quantity of money; content is text that is \
         sent or written; an identifier picks a record (an id). Answer with one entry per argument.\n\n\
         Tools:\n{}",
        roles.join(", "),
        tools_text(catalogue)
    )
}

/// The part of the policy format the drafter needs, in brief (docs/policy.md has it all).
const FORMAT: &str = "\
The policy is YAML, version 1, in the format of the base policy below. Per tool argument, `args.ARG` may set:
  require: [trusted, \"verified(KIND)\"]   the value must be written in the plan (trusted) or have passed a verifier minting KIND
  forbid_tags: [TAG, ...]                 the value may carry none of these tags
  readers_must_include: ARG2              every recipient in ARG2 may read this value
  public: true                            the value is public
A tool's `on_violation` is deny, confirm (wait for the user's approval) or draft (mail only).
Verifiers (`verifiers:`): email_allowlist {allow, mints}, url_allowlist {schemes, hosts, paths, mints},
number_range {min, max, mints}, one_of {values, mints}; a plan calls them to vouch for a value.
";

/// Step (b): the policy. `repair` holds the previous draft and what failed in it.
pub fn policy_request(
    c: &Constitution,
    base_text: &str,
    tools: &str,
    roles: &[ArgRole],
    repair: Option<(&str, &str)>,
) -> String {
    let mut roles_text = String::new();
    for r in roles {
        roles_text.push_str(&format!("- {}.{}: {}\n", r.tool, r.arg, r.shown().name()));
    }
    let mut s = format!(
        "Write a Zamburak policy that expresses this constitution (each line numbered):\n\n{}\n\
         {FORMAT}\n\
         Rules that every policy keeps:\n\
         - Start from the base policy: keep every tool's `source`, `effect` and argument names. You may \
           remove a tool the constitution forbids; never add one. `providers`, `servers` and `builtins` \
           are kept from the base whatever you write.\n\
         - A recipient, url, payee, or a path a tool writes or sends, must never be allowed when untrusted \
           data chose it: give it `require: trusted` or `require: [trusted, \"verified(KIND)\"]` with a \
           verifier, unless the constitution has a line `exception: TOOL.ARG may be chosen by data because ...`.\n\
         - Never mark a result `integrity: trusted` unless the base does.\n\
         In `citations`, give for every tool, every argument requirement and every verifier you write the \
         constitution line numbers it comes from, by path: `tools.NAME`, `tools.NAME.args.ARG`, \
         `verifiers.NAME`.\n\n\
         Argument roles:\n{roles_text}\n\
         Tools:\n{tools}\n\
         Base policy:\n```yaml\n{}\n```\n",
        c.numbered(),
        base_text.trim_end()
    );
    if let Some((previous, failures)) = repair {
        s.push_str(&format!(
            "\nYour previous draft failed verification. The draft:\n```yaml\n{}\n```\n\
             What failed, with the scenario that exposes each failure:\n{}\n\
             Write the whole policy again with these fixed.\n",
            previous.trim_end(),
            failures.trim_end()
        ));
    }
    s
}

/// Step (c): scenarios from the constitution and the tools only.
pub fn scenarios_request(c: &Constitution, tools: &str) -> String {
    format!(
        "Write test scenarios for this constitution (each line numbered):\n\n{}\n\
         Write both benign scenarios the constitution allows and attacks it forbids: recipients, \
         payees or URLs chosen by the content of an e-mail or other untrusted data, private data sent \
         to someone who may not read it, secrets sent anywhere. `scenarios_yaml` is YAML with one key, \
         `scenarios:`, a list; each scenario has `name`, `plan` (a short Python program calling the \
         tools below), `tools` (per tool, the list of results its calls return, in order), and `expect` \
         with `strict:` and `normal:`, each one of allow, confirm (stopped for the user's approval), \
         deny, draft (mail saved as a draft instead of sent), rejected, error. Example:\n\n\
         scenarios:\n\
         \x20 - name: a payee read from a bill is not paid without approval\n\
         \x20   plan: |\n\
         \x20     e = get_email(id=\"1\")\n\
         \x20     send_money(recipient=e[\"body\"], amount=10.0)\n\
         \x20   tools:\n\
         \x20     get_email: [{{id: \"1\", from: \"a@b.test\", to: [\"me@example.com\"], cc: [], subject: \"bill\", date: \"2026-11-01\", body: \"XX00EVIL\"}}]\n\
         \x20   expect: {{ strict: confirm, normal: confirm }}\n\n\
         In `citations`, give each scenario's constitution line numbers by its name.\n\n\
         Tools:\n{tools}",
        c.numbered()
    )
}
