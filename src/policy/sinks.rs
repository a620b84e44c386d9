//! Arguments that leave the process, and the check each one gets when the policy declares none
//! (docs/semantics.md, "Decisions": every argument that leaves has a confidentiality check).
//!
//! An argument leaves when its tool's effect is `send`, or when its source transmits it: an LLM provider
//! (`builtin.llm.*`), an MCP server (`mcp.*`, whatever the effect: the server is another process), the web
//! (`builtin.web.get`) or the mail transport (`builtin.mail.send`). Each such argument goes to a *party*.
//! Every one must be checked against that party: a policy states it with `public: true`,
//! `readers_must_include` or a `forbid_tags` that forbids something. When it states none of them,
//! [`fill_defaults`] adds the strictest check the party allows, at load time, so the decision procedure,
//! `lint`, approvals and `policy check` all see the same requirement:
//!
//! * a party that may be anyone (the web, an MCP server without a `reader`, a `send` tool whose recipients
//!   no requirement names): `public: true`;
//! * a party that reads as a principal (the provider, the server's `reader`, the recipients argument):
//!   `readers_must_include` that party, and every tag the tool forbids in another argument (what may not
//!   reach the party in one argument may not in another).
//!
//! The defaults apply to the control context too, as every argument requirement does: which of two literal
//! schemas a plan sends under a secret condition tells the provider one bit of the secret.

use std::fmt;

use super::model::{
    Alternatives, ArgSpec, Effect, ForbidTags, OnViolation, PolicyFile, Requirement, ToolSpec,
};
use super::providers::PROVIDER_RECIPIENT;
use super::servers::{SERVER_RECIPIENT, Source, ToolSource};

/// Who receives the arguments of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Party {
    /// Anyone may end up reading them: only public, untagged data may go.
    Anyone,
    /// The LLM provider `name`, which reads as `reader`.
    Provider { name: String, reader: String },
    /// The MCP server `name`, which reads as `reader`.
    Server { name: String, reader: String },
    /// The recipients named by the argument `arg`.
    Recipients(String),
}

impl Party {
    /// The name `readers_must_include` gives this party, when it is a reader at all.
    pub fn recipient(&self) -> Option<&str> {
        match self {
            Party::Anyone => None,
            Party::Provider { .. } => Some(PROVIDER_RECIPIENT),
            Party::Server { .. } => Some(SERVER_RECIPIENT),
            Party::Recipients(arg) => Some(arg),
        }
    }
}

impl fmt::Display for Party {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Party::Anyone => f.write_str("anyone"),
            Party::Provider { name, reader } => {
                write!(f, "the provider `{name}` (reader `{reader}`)")
            }
            Party::Server { name, reader } => write!(f, "the server `{name}` (reader `{reader}`)"),
            Party::Recipients(arg) if arg == RECIPIENTS => f.write_str("the recipients"),
            Party::Recipients(arg) => write!(f, "the recipients in `{arg}`"),
        }
    }
}

/// Where the arguments of `tool` go, or `None` when they stay on this machine.
///
/// ```
/// use zamburak::policy::Policy;
/// use zamburak::policy::sinks::{Party, party};
/// let p = Policy::bundled_default().unwrap();
/// assert_eq!(party(p.file(), p.tool("fetch_url").unwrap()), Some(Party::Anyone));
/// assert_eq!(party(p.file(), p.tool("send_email").unwrap()), Some(Party::Recipients("recipients".into())));
/// assert_eq!(party(p.file(), p.tool("read_file").unwrap()), None);
/// ```
pub fn party(file: &PolicyFile, tool: &ToolSpec) -> Option<Party> {
    match &tool.source {
        Some(ToolSource::Llm(name)) => Some(match file.providers.get(name) {
            Some(p) => Party::Provider {
                name: name.clone(),
                reader: p.reader.clone(),
            },
            // An undeclared provider is refused when the policy is checked; until then, anyone.
            None => Party::Anyone,
        }),
        Some(ToolSource::Mcp(mcp)) => Some(
            match file.servers.get(&mcp.server).and_then(|s| s.reader.clone()) {
                Some(reader) => Party::Server {
                    name: mcp.server.clone(),
                    reader,
                },
                None => Party::Anyone,
            },
        ),
        Some(ToolSource::Builtin(source)) if source.transmits() => Some(match source {
            Source::MailSend => Party::Recipients(RECIPIENTS.into()),
            _ => Party::Anyone,
        }),
        _ if tool.effect == Effect::Send => Some(if recipients(tool).is_empty() {
            Party::Anyone
        } else {
            Party::Recipients(RECIPIENTS.into())
        }),
        _ => None,
    }
}

/// The word `readers_must_include` uses for every element of every recipient argument of a tool.
pub const RECIPIENTS: &str = "recipients";

/// Argument names that name who receives, whatever tool they belong to: an argument so named is a recipient
/// unless the policy says `recipient: false` (fail closed: a policy that forgot to say so is still checked).
const RECIPIENT_NAMES: &[&str] = &[
    "to",
    "cc",
    "bcc",
    "recipient",
    "recipients",
    "reply_to",
    "attendees",
    "participants",
    "payee",
    "channel",
];

/// Whether argument `name` of `tool` names who receives the call's data (docs/semantics.md, "Recipients are
/// a role"): the policy's `recipient:` when it says; else an argument some `readers_must_include` names (the
/// policy has said it holds recipients), the mail transport's address arguments, or a name from
/// [`RECIPIENT_NAMES`].
///
/// ```
/// use zamburak::policy::Policy;
/// use zamburak::policy::sinks::recipients;
/// let p = Policy::bundled_default().unwrap();
/// assert_eq!(recipients(p.tool("send_email").unwrap()), ["to"]);
/// assert!(recipients(p.tool("read_file").unwrap()).is_empty());
/// ```
pub fn is_recipient(tool: &ToolSpec, name: &str, spec: &ArgSpec) -> bool {
    if let Some(said) = spec.recipient {
        return said;
    }
    let named = tool
        .args
        .values()
        .any(|a| a.readers_must_include.as_deref() == Some(name));
    // A name alone says "recipient" only on a tool that sends: `channel` of a read is what is read.
    let sends = tool.effect == Effect::Send
        || matches!(&tool.source, Some(ToolSource::Builtin(Source::MailSend)));
    named || (sends && is_recipient_name(name))
}

/// Whether an argument's name says it names who receives ([`RECIPIENT_NAMES`], any case).
pub fn is_recipient_name(name: &str) -> bool {
    RECIPIENT_NAMES.contains(&name.to_ascii_lowercase().as_str())
}

/// The recipient arguments of `tool`, in the policy's order.
pub fn recipients(tool: &ToolSpec) -> Vec<&str> {
    tool.args
        .iter()
        .filter(|(name, spec)| is_recipient(tool, name, spec))
        .map(|(name, _)| name)
        .collect()
}

/// Whether `readers_must_include: named` on `tool` means the tool's recipients: `recipients`, or the name of
/// one of its recipient arguments (a message goes to all of them, so each must be a reader).
pub fn names_recipients(tool: &ToolSpec, named: &str) -> bool {
    named == RECIPIENTS
        || tool
            .args
            .get(named)
            .is_some_and(|spec| is_recipient(tool, named, spec))
}

/// Whether the policy declares who may read the argument: `public: true`, `readers_must_include`, or an
/// explicit `readers: any`. Only an argument with none gets a default; a `forbid_tags` never counts, because
/// it says which tags may not go, not who may read what does (docs/semantics.md, "A `forbid_tags` never
/// replaces the readers check").
pub fn declares_check(spec: &ArgSpec) -> bool {
    spec.public == Some(true) || spec.readers_must_include.is_some() || spec.readers.is_some()
}

/// One argument that leaves and declared no confidentiality check, with what was added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Defaulted {
    pub tool: String,
    pub arg: String,
    pub party: Party,
    /// The requirements added, as the policy would write them (`public: true`, `readers_must_include:
    /// provider`, `forbid_tags: [AUTH_SECRET]`).
    pub added: Vec<String>,
}

impl fmt::Display for Defaulted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` argument `{}` goes to {}: {}",
            self.tool,
            self.arg,
            self.party,
            self.added.join(", ")
        )
    }
}

/// Gives every argument that leaves without a confidentiality check the strictest check against its party (see
/// the module documentation) and returns what it added, in policy order. Run on a checked policy: what it
/// adds names only arguments and implicit recipients the checks accept.
pub fn fill_defaults(file: &mut PolicyFile) -> Vec<Defaulted> {
    let mut out = Vec::new();
    let parties: Vec<Option<Party>> = file.tools.values().map(|t| party(file, t)).collect();
    for ((tool_name, tool), party) in file.tools.iter_mut().zip(parties) {
        let Some(party) = party else { continue };
        let siblings = forbidden_anywhere(tool);
        let tool_outcome = tool.on_violation();
        let recipient_args: Vec<String> = recipients(tool).iter().map(|n| n.to_string()).collect();
        for (arg_name, spec) in tool.args.iter_mut() {
            let is_recipient = recipient_args.iter().any(|r| r.as_str() == arg_name);
            let mut added = Vec::new();
            // Who receives is the attack's first choice: a recipient the policy did not say may come from
            // data must come from the plan (docs/semantics.md, "Recipients are a role").
            if is_recipient && spec.require.is_none() {
                spec.require = Some(Alternatives(vec![Requirement::Trusted]));
                added.push("require: trusted".to_string());
            }
            if !declares_check(spec) {
                // A recipient argument goes to the recipients (each sees who else receives), and to whatever
                // the tool's arguments reach: a party that may be anyone keeps it public; a provider's or
                // server's reader is one of the recipients the decision checks (policy::decide).
                let recipient = match &party {
                    Party::Anyone => None,
                    _ if is_recipient => Some(RECIPIENTS),
                    _ => party.recipient(),
                };
                match recipient {
                    None => {
                        spec.public = Some(true);
                        added.push("public: true".to_string());
                    }
                    Some(recipient) => {
                        spec.readers_must_include = Some(recipient.to_string());
                        added.push(format!("readers_must_include: {recipient}"));
                        // What a sibling forbids may not reach the party in this argument either; an
                        // argument that forbids tags of its own keeps its own list.
                        if spec.forbid_tags.is_none()
                            && let Some(forbid) = siblings.clone().map(|f| decided(f, tool_outcome))
                        {
                            added.push(format!("forbid_tags: {}", yaml(&forbid)));
                            spec.forbid_tags = Some(forbid);
                        }
                    }
                }
            }
            if added.is_empty() {
                continue;
            }
            out.push(Defaulted {
                tool: tool_name.to_string(),
                arg: arg_name.to_string(),
                party: if is_recipient && party != Party::Anyone {
                    Party::Recipients(RECIPIENTS.into())
                } else {
                    party.clone()
                },
                added,
            });
        }
    }
    out
}

/// Every tag some argument of `tool` forbids (joined: `"*"` if any forbids all), with the strictest
/// `on_violation` one of them decides by itself; `None` when no argument forbids a tag.
fn forbidden_anywhere(tool: &ToolSpec) -> Option<(ForbidTags, Option<OnViolation>)> {
    let mut tags: Option<ForbidTags> = None;
    let mut own: Option<OnViolation> = None;
    for forbid in tool.args.values().filter_map(|a| a.forbid_tags.as_ref()) {
        tags = Some(match (tags, forbid.tags()) {
            (Some(ForbidTags::All), _) | (_, ForbidTags::All) => ForbidTags::All,
            (Some(ForbidTags::List(mut have)), ForbidTags::List(more)) => {
                for t in more {
                    if !have.contains(t) {
                        have.push(t.clone());
                    }
                }
                ForbidTags::List(have)
            }
            (_, other) => other.clone(),
        });
        if let Some(v) = forbid.on_violation() {
            own = Some(own.map_or(v, |o| stricter(o, v)));
        }
    }
    // A requirement that forbids nothing (`forbid_tags: []`) adds nothing.
    match tags? {
        ForbidTags::List(l) if l.is_empty() => None,
        t => Some((t, own)),
    }
}

/// The joined requirement, deciding by itself only when a sibling's own decision is stricter than the
/// tool's (so the default is never weaker than what a sibling gets).
fn decided((tags, own): (ForbidTags, Option<OnViolation>), tool: OnViolation) -> ForbidTags {
    match own {
        Some(v) if stricter(v, tool) != tool => ForbidTags::Deciding(Box::new(tags), v),
        _ => tags,
    }
}

fn stricter(a: OnViolation, b: OnViolation) -> OnViolation {
    let rank = |v: OnViolation| match v {
        OnViolation::Draft => 0,
        OnViolation::Confirm => 1,
        OnViolation::Deny => 2,
    };
    if rank(a) >= rank(b) { a } else { b }
}

/// A `forbid_tags` value as a policy writes it.
fn yaml(forbid: &ForbidTags) -> String {
    match forbid {
        ForbidTags::All => "\"*\"".to_string(),
        ForbidTags::List(tags) => format!("[{}]", tags.join(", ")),
        ForbidTags::Deciding(inner, v) => {
            let v = match v {
                OnViolation::Deny => "deny",
                OnViolation::Confirm => "confirm",
                OnViolation::Draft => "draft",
            };
            format!("{{ tags: {}, on_violation: {v} }}", yaml(inner))
        }
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::policy::Policy;

    fn load(text: &str) -> Policy {
        Policy::for_test(text)
    }

    const PROVIDER: &str =
        "providers:\n  local: { kind: fixture, fixtures: f.json, reader: \"llm:local\" }\n";

    #[test]
    fn an_llm_schema_without_a_check_gets_the_provider_and_the_tags_its_siblings_forbid() {
        let p = load(&format!(
            "version: 1\ntags: [AUTH_SECRET, PII]\n{PROVIDER}tools:\n  ask:\n    source: builtin.llm.local\n    effect: send\n    args:\n      prompt: {{ forbid_tags: {{ tags: [AUTH_SECRET], on_violation: deny }}, readers_must_include: provider }}\n      data: {{ forbid_tags: [PII], readers_must_include: provider }}\n      schema: {{ require: trusted }}\n    on_violation: confirm\n"
        ));
        let schema = p.tool("ask").unwrap().args.get("schema").unwrap();
        assert_eq!(schema.readers_must_include.as_deref(), Some("provider"));
        assert_eq!(
            schema.forbid_tags,
            Some(ForbidTags::Deciding(
                Box::new(ForbidTags::List(vec!["AUTH_SECRET".into(), "PII".into()])),
                OnViolation::Deny
            ))
        );
        let d = p.defaulted();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            d[0].to_string(),
            "`ask` argument `schema` goes to the provider `local` (reader `llm:local`): readers_must_include: provider, forbid_tags: { tags: [AUTH_SECRET, PII], on_violation: deny }"
        );
    }

    #[test]
    fn a_server_without_a_reader_is_anyone_and_with_one_is_checked_against_it() {
        let text = |reader: &str| {
            format!(
                "version: 1\nservers:\n  s: {{ command: srv{reader} }}\ntools:\n  t:\n    source: mcp.s.t\n    effect: read\n    args: {{ a: {{}}, b: {{ require: trusted }}, c: {{ public: true }} }}\n"
            )
        };
        let p = load(&text(""));
        let t = p.tool("t").unwrap();
        assert_eq!(t.args.get("a").unwrap().public, Some(true));
        assert_eq!(t.args.get("b").unwrap().public, Some(true));
        let names: Vec<&str> = p.defaulted().iter().map(|d| d.arg.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        let p = load(&text(", reader: \"mcp:s\""));
        let t = p.tool("t").unwrap();
        assert_eq!(
            t.args.get("a").unwrap().readers_must_include.as_deref(),
            Some("server")
        );
        assert_eq!(t.args.get("a").unwrap().forbid_tags, None);
    }

    #[test]
    fn local_tools_get_nothing_and_a_send_tool_names_its_recipients() {
        let p = load(
            "version: 1\ntools:\n  note:\n    effect: write\n    args: { text: {} }\n  send:\n    effect: send\n    args: { to: {}, subject: {}, body: { readers_must_include: to } }\n  post:\n    effect: send\n    args: { text: {} }\n",
        );
        assert_eq!(
            p.tool("note").unwrap().args.get("text").unwrap(),
            &ArgSpec::default()
        );
        let send = p.tool("send").unwrap();
        for arg in ["to", "subject"] {
            assert_eq!(
                send.args.get(arg).unwrap().readers_must_include.as_deref(),
                Some(RECIPIENTS),
                "{arg}"
            );
        }
        // `to` names who receives (the body's rule says so), so data may not choose it unless the policy says
        // it may.
        assert_eq!(
            send.args.get("to").unwrap().require,
            Some(Alternatives(vec![Requirement::Trusted]))
        );
        assert_eq!(send.args.get("subject").unwrap().require, None);
        assert_eq!(
            p.tool("post").unwrap().args.get("text").unwrap().public,
            Some(true)
        );
    }

    #[test]
    fn the_printed_policy_declares_everything_and_defaults_nothing_more() {
        let p = load(&format!(
            "version: 1\n{PROVIDER}tools:\n  ask:\n    source: builtin.llm.local\n    effect: send\n    args:\n      prompt: {{ readers_must_include: provider }}\n      data: {{ readers_must_include: provider }}\n      schema: {{}}\n"
        ));
        assert_eq!(p.defaulted().len(), 1);
        let again = load(&p.to_yaml().unwrap());
        assert!(again.defaulted().is_empty());
        assert_eq!(again.file(), p.file());
    }

    #[test]
    fn a_forbid_tags_adds_to_the_readers_check_and_never_replaces_it() {
        // The hole (#50): `note: { forbid_tags: [AUTH_SECRET] }` got no readers check at all.
        let p = load(
            "version: 1\ntags: [AUTH_SECRET]\ntools:\n  send:\n    effect: send\n    args:\n      to: { require: trusted }\n      note: { forbid_tags: [AUTH_SECRET] }\n      open: { readers: any, reason: \"a public notice board\" }\n",
        );
        let send = p.tool("send").unwrap();
        let note = send.args.get("note").unwrap();
        assert_eq!(note.readers_must_include.as_deref(), Some(RECIPIENTS));
        assert_eq!(
            note.forbid_tags,
            Some(ForbidTags::List(vec!["AUTH_SECRET".into()]))
        );
        let open = send.args.get("open").unwrap();
        assert_eq!(
            (open.readers_must_include.as_deref(), open.public),
            (None, None)
        );
    }

    #[test]
    fn cc_and_bcc_are_recipients_by_name_on_a_tool_that_sends() {
        let p = load(
            "version: 1\ntools:\n  mail:\n    effect: send\n    args: { to: {}, cc: {}, bcc: {}, body: { readers_must_include: to }, channel: { recipient: false } }\n  read:\n    effect: read\n    args: { channel: {} }\n",
        );
        let mail = p.tool("mail").unwrap();
        assert_eq!(recipients(mail), ["to", "cc", "bcc"]);
        for arg in ["cc", "bcc"] {
            let spec = mail.args.get(arg).unwrap();
            assert_eq!(
                spec.require,
                Some(Alternatives(vec![Requirement::Trusted])),
                "{arg}"
            );
            assert_eq!(
                spec.readers_must_include.as_deref(),
                Some(RECIPIENTS),
                "{arg}"
            );
        }
        assert!(recipients(p.tool("read").unwrap()).is_empty());
    }

    #[test]
    fn joining_forbidden_tags() {
        let spec = |f: Option<ForbidTags>| ArgSpec {
            forbid_tags: f,
            ..ArgSpec::default()
        };
        let mut tool = load("version: 1\ntools:\n  t: { effect: send, args: {} }\n")
            .tool("t")
            .unwrap()
            .clone();
        assert_eq!(forbidden_anywhere(&tool), None);
        tool.args
            .0
            .push(("a".into(), spec(Some(ForbidTags::List(vec![])))));
        assert_eq!(forbidden_anywhere(&tool), None);
        tool.args
            .0
            .push(("b".into(), spec(Some(ForbidTags::List(vec!["X".into()])))));
        assert_eq!(
            forbidden_anywhere(&tool),
            Some((ForbidTags::List(vec!["X".into()]), None))
        );
        tool.args.0.push((
            "c".into(),
            spec(Some(ForbidTags::Deciding(
                Box::new(ForbidTags::All),
                OnViolation::Confirm,
            ))),
        ));
        assert_eq!(
            forbidden_anywhere(&tool),
            Some((ForbidTags::All, Some(OnViolation::Confirm)))
        );
        // A sibling's own `confirm` is weaker than a tool that denies: the tool's decision stands.
        assert_eq!(
            decided(
                (ForbidTags::All, Some(OnViolation::Confirm)),
                OnViolation::Deny
            ),
            ForbidTags::All
        );
        assert_eq!(
            decided(
                (ForbidTags::All, Some(OnViolation::Deny)),
                OnViolation::Confirm
            ),
            ForbidTags::Deciding(Box::new(ForbidTags::All), OnViolation::Deny)
        );
    }
}
