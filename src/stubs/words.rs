//! The policy's requirements in plain words, for the planner that must meet them: what each argument of a
//! tool must be, what the call's conditions must be, what its result is. [`rule_words`] is the one function
//! that turns a rule (`args.to.require`, `control.require`, the rule ids of docs/policy.md) into words; every
//! sentence here is built from it and from the normalised policy, so what the stubs say is what
//! `policy::decide` checks (the defaults `policy::sinks` fills in included).

use crate::policy::model::{
    ControlRequire, Effect, ForbidTags, IntegritySpec, OnViolation, ReadersSpec, Requirement,
    ToolSpec,
};
use crate::policy::providers::PROVIDER_RECIPIENT;
use crate::policy::rule::{Check, Rule};
use crate::policy::servers::SERVER_RECIPIENT;
use crate::policy::sinks::{Party, party};
use crate::policy::{Outcome, Policy};

/// Most tools named in one list of examples.
const MAX_NAMED: usize = 4;

/// "`a`, `b` or `c`", with "…" past [`MAX_NAMED`].
fn list(items: &[String], last: &str) -> String {
    if items.len() > MAX_NAMED {
        return format!("{}, …", items[..MAX_NAMED].join(", "));
    }
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., tail] => format!("{} {last} {tail}", init.join(", ")),
    }
}

fn call(tool: &str) -> String {
    format!("`{tool}(...)`")
}

/// What follows when a requirement fails.
pub fn consequence(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Allow => "",
        Outcome::Deny => "otherwise the call is refused",
        Outcome::Confirm => "otherwise the user is asked to approve the call",
        Outcome::Draft => "otherwise it is only saved as a draft for the user",
    }
}

/// Results that are trusted: tools whose `returns.integrity` is trusted, and trusted fields of the rest.
fn trusted_results(policy: &Policy) -> Vec<String> {
    let mut out = Vec::new();
    for (name, tool) in sorted_tools(policy) {
        let r = tool.returns();
        if r.integrity == Some(IntegritySpec::Trusted) {
            out.push(call(name));
        } else if let Some(fields) = &r.fields {
            for (field, spec) in fields.iter() {
                if spec.integrity == Some(IntegritySpec::Trusted) {
                    out.push(format!("`{name}(...)[\"{field}\"]`"));
                }
            }
        }
    }
    out
}

/// Where data tagged `tag` comes from.
fn tag_sources(policy: &Policy, tag: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (name, tool) in sorted_tools(policy) {
        let r = tool.returns();
        if r.tags.as_ref().is_some_and(|t| t.iter().any(|t| t == tag)) {
            out.push(call(name));
        }
        for (field, spec) in r.fields.iter().flat_map(|f| f.iter()) {
            if spec
                .tags
                .as_ref()
                .is_some_and(|t| t.iter().any(|t| t == tag))
            {
                out.push(format!("`{name}(...)[\"{field}\"]`"));
            }
        }
        for w in r.tags_when.iter().flatten() {
            if w.tags.iter().any(|t| t == tag) {
                out.push(format!(
                    "{} when `{}` matches `{}`",
                    call(name),
                    w.arg,
                    w.glob
                ));
            }
        }
    }
    out
}

/// Tools whose results `principal` may read (the user reads everything).
fn readable_by(policy: &Policy, principal: &str) -> Vec<String> {
    sorted_tools(policy)
        .filter(|(_, tool)| match tool.returns().readers {
            Some(ReadersSpec::Public) => true,
            Some(ReadersSpec::List(l)) => l.iter().any(|p| p == principal),
            Some(ReadersSpec::FromFields { also, .. }) => also.iter().any(|p| p == principal),
            Some(ReadersSpec::User) | None => false,
        })
        .map(|(name, _)| call(name))
        .collect()
}

/// Tools whose results anyone may read and that carry no tag.
fn public_results(policy: &Policy) -> Vec<String> {
    sorted_tools(policy)
        .filter(|(_, tool)| {
            let r = tool.returns();
            r.readers == Some(ReadersSpec::Public)
                && r.tags.as_ref().is_none_or(Vec::is_empty)
                && r.tags_when.as_ref().is_none_or(Vec::is_empty)
        })
        .map(|(name, _)| call(name))
        .collect()
}

/// Tools whose records name their own readers (`readers: { from_fields: [...] }`).
fn record_readers(policy: &Policy) -> Vec<String> {
    sorted_tools(policy)
        .filter_map(|(name, tool)| match tool.returns().readers {
            Some(ReadersSpec::FromFields { fields, .. }) => {
                let fields: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
                Some(format!(
                    "a record of {} may go to the people in its {}",
                    call(name),
                    list(&fields, "and")
                ))
            }
            _ => None,
        })
        .collect()
}

fn sorted_tools(policy: &Policy) -> impl Iterator<Item = (&str, &ToolSpec)> {
    let mut tools: Vec<(&str, &ToolSpec)> = policy.tools().collect();
    tools.sort_by_key(|(n, _)| *n);
    tools.into_iter()
}

/// What `require` asks, as alternatives.
fn require_words(policy: &Policy, alternatives: &[Requirement]) -> String {
    let mut parts = Vec::new();
    for r in alternatives {
        match r {
            Requirement::Trusted => {
                let trusted = trusted_results(policy);
                parts.push(if trusted.is_empty() {
                    "written in the plan (or computed only from values written in the plan)".into()
                } else {
                    format!(
                        "written in the plan (or computed only from plan values and trusted results: {})",
                        list(&trusted, "and")
                    )
                });
            }
            Requirement::Verified(kind) => {
                let verifiers: Vec<String> = sorted_verifiers(policy)
                    .filter(|(_, v)| v.mints() == kind)
                    .map(|(n, _)| call(n))
                    .collect();
                parts.push(if verifiers.is_empty() {
                    format!("verified as {kind} (no verifier of this policy mints it)")
                } else {
                    format!("the result of {}", list(&verifiers, "or"))
                });
            }
            Requirement::Known(role) => parts.push(format!(
                "a value the person has approved and remembered as `{role}` (the run checks; a plan cannot tell)"
            )),
        }
    }
    parts.join(", or ")
}

fn sorted_verifiers(
    policy: &Policy,
) -> impl Iterator<Item = (&str, &crate::policy::builtins::VerifierSpec)> {
    let mut v: Vec<_> = policy.verifiers().collect();
    v.sort_by_key(|(n, _)| *n);
    v.into_iter()
}

fn forbid_words(policy: &Policy, forbid: &ForbidTags) -> Option<String> {
    match forbid.tags() {
        ForbidTags::All => {
            let tags = policy.tags();
            Some(if tags.is_empty() {
                "nothing tagged".into()
            } else {
                format!("nothing tagged (this policy's tags: {})", tags.join(", "))
            })
        }
        ForbidTags::List(tags) if tags.is_empty() => None,
        ForbidTags::List(tags) => {
            let described: Vec<String> = tags
                .iter()
                .map(|t| {
                    let from = tag_sources(policy, t);
                    if from.is_empty() {
                        t.clone()
                    } else {
                        format!("{t} (from {})", list(&from, "or"))
                    }
                })
                .collect();
            Some(format!("never data tagged {}", list(&described, "or")))
        }
        ForbidTags::Deciding(..) => None,
    }
}

fn public_words(policy: &Policy) -> String {
    let public = public_results(policy);
    if public.is_empty() {
        "only public data: nothing tagged, nothing only some people may read (values written in the plan)"
            .into()
    } else {
        format!(
            "only public data: nothing tagged, nothing only some people may read (values written in the plan, \
             or results anyone may read: {})",
            list(&public, "and")
        )
    }
}

/// Who `readers_must_include: other` names, and the words for it; `None` when that is the user, who may
/// read every value.
fn readers_words(policy: &Policy, tool: &ToolSpec, other: &str) -> Option<String> {
    let principal = |reader: &str, who: String| {
        if policy.is_user(reader) {
            // The user reads every value: the requirement always holds, and saying it would only confuse.
            None
        } else {
            let readable = readable_by(policy, reader);
            Some(if readable.is_empty() {
                format!("only data {who} may read (values written in the plan)")
            } else {
                format!(
                    "only data {who} may read (values written in the plan, and results of {})",
                    list(&readable, "and")
                )
            })
        }
    };
    match party(policy.file(), tool) {
        Some(Party::Provider { name, reader }) if other == PROVIDER_RECIPIENT => {
            principal(&reader, format!("the model provider `{name}` (`{reader}`)"))
        }
        Some(Party::Server { name, reader }) if other == SERVER_RECIPIENT => {
            principal(&reader, format!("the server `{name}` (`{reader}`)"))
        }
        _ => {
            let mut ways = vec!["values written in the plan".to_string()];
            let public = public_results(policy);
            if !public.is_empty() {
                ways.push(format!("results anyone may read: {}", list(&public, "and")));
            }
            ways.extend(record_readers(policy));
            // A message goes to every recipient argument (docs/semantics.md, "Recipients are a role").
            let recipients = crate::policy::sinks::recipients(tool);
            let who =
                if crate::policy::sinks::names_recipients(tool, other) && !recipients.is_empty() {
                    let named: Vec<String> = recipients.iter().map(|r| format!("`{r}`")).collect();
                    format!("everyone in {}", list(&named, "and"))
                } else {
                    format!("everyone in `{other}`")
                };
            Some(format!("only data {who} may read ({})", ways.join("; ")))
        }
    }
}

/// What a rule requires, in plain words, without what follows a violation (see [`consequence`]). `None`
/// for a rule the tool does not have (an argument without that check, an unknown tool), and for one every
/// value meets (`readers_must_include` a party that reads as the user, who may read everything).
///
/// ```
/// use zamburak::policy::{Policy, Rule};
/// use zamburak::stubs::words::rule_words;
/// let p = Policy::bundled_default().unwrap();
/// let to: Rule = "args.to.require".parse().unwrap();
/// let words = rule_words(&p, "send_email", &to).unwrap();
/// assert!(words.starts_with("written in the plan"), "{words}");
/// assert!(words.ends_with("or a value the person has approved and remembered as `correspondent` (the run checks; a plan cannot tell)"), "{words}");
/// ```
pub fn rule_words(policy: &Policy, tool_name: &str, rule: &Rule) -> Option<String> {
    let tool = policy.tool(tool_name);
    match rule {
        Rule::Allow => Some("every requirement holds".into()),
        Rule::UnknownTool => Some(format!(
            "`{tool_name}` must be a tool of this policy (or a verifier)"
        )),
        Rule::UnknownArgument => {
            Some("only the arguments the policy declares may be passed".into())
        }
        Rule::MissingArgument => Some("every argument the policy declares must be passed".into()),
        Rule::UnknownLabel => Some("every value must come from the plan or a tool".into()),
        Rule::MalformedRecipients => {
            Some("recipients must be a string, or a list of strings".into())
        }
        Rule::MaxToolCalls => Some(format!(
            "at most {} tool calls in one run",
            policy.limits().max_tool_calls
        )),
        Rule::Arg { name, check } => {
            let tool = tool?;
            let spec = tool.args.get(name)?;
            match check {
                Check::Require => spec.require.as_ref().map(|r| require_words(policy, &r.0)),
                Check::ForbidTags => spec
                    .forbid_tags
                    .as_ref()
                    .and_then(|f| forbid_words(policy, f)),
                Check::Public => (spec.public == Some(true)).then(|| public_words(policy)),
                Check::ReadersMustInclude => spec
                    .readers_must_include
                    .as_deref()
                    .and_then(|other| readers_words(policy, tool, other)),
            }
        }
        Rule::Control(check) => {
            let tool = tool?;
            match check {
                Check::Require => Some(match tool.control_require() {
                    ControlRequire::Trusted => "whether it is called may not depend on untrusted data: \
                        call it outside any `if`, loop or function whose condition comes from an untrusted \
                        result (verify the value first, or decide in the plan)"
                        .into(),
                    ControlRequire::Any => "untrusted data may decide whether it is called".into(),
                }),
                Check::ForbidTags | Check::Public | Check::ReadersMustInclude => {
                    let any = tool.args.keys().any(|a| {
                        let rule = Rule::Arg {
                            name: a.to_string(),
                            check: *check,
                        };
                        rule_words(policy, tool_name, &rule).is_some()
                    });
                    any.then(|| {
                        "the conditions it is called under must meet its arguments' confidentiality \
                         requirements too (a condition on data an argument may not carry decides \
                         something about that data)"
                            .into()
                    })
                }
            }
        }
    }
}

/// The outcome of breaking `check` on argument `arg` of `tool`: its own `on_violation` for a `forbid_tags`
/// that states one, else the tool's.
fn outcome_of(tool: &ToolSpec, arg: Option<&str>, check: Check) -> Outcome {
    let own = arg
        .and_then(|a| tool.args.get(a))
        .and_then(|a| a.forbid_tags.as_ref())
        .filter(|_| check == Check::ForbidTags)
        .and_then(ForbidTags::on_violation);
    own.unwrap_or_else(|| tool.on_violation()).into()
}

/// Clauses and their outcomes as sentences: consecutive clauses with one outcome share its consequence.
fn sentences(clauses: Vec<(String, Outcome)>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < clauses.len() {
        let outcome = clauses[i].1;
        let mut group = Vec::new();
        while i < clauses.len() && clauses[i].1 == outcome {
            group.push(clauses[i].0.clone());
            i += 1;
        }
        let mut s = group.join("; and ");
        let then = consequence(outcome);
        if !then.is_empty() {
            s.push_str("; ");
            s.push_str(then);
        }
        if let Some(first) = s.get(..1) {
            s = first.to_uppercase() + &s[1..];
        }
        s.push('.');
        out.push(s);
    }
    out.join(" ")
}

const ARG_CHECKS: [Check; 4] = [
    Check::Require,
    Check::ForbidTags,
    Check::Public,
    Check::ReadersMustInclude,
];

/// What argument `arg` of `tool_name` must be, as sentences (without the argument's name).
///
/// ```
/// use zamburak::policy::Policy;
/// use zamburak::stubs::words::arg_words;
/// let p = Policy::bundled_default().unwrap();
/// let words = arg_words(&p, "send_email", "to");
/// assert!(words.contains("`verify_recipient(...)`, or a value the person"), "{words}");
/// assert!(words.contains("; otherwise the user is asked to approve the call."), "{words}");
/// assert!(words.contains("Never data tagged AUTH_SECRET"), "{words}");
/// assert_eq!(arg_words(&p, "read_inbox", "limit"), "Any value.");
/// ```
pub fn arg_words(policy: &Policy, tool_name: &str, arg: &str) -> String {
    let Some(tool) = policy.tool(tool_name) else {
        return "Not a tool of this policy.".into();
    };
    if tool.effect == Effect::Pure {
        return "Any value (the tool is pure: its calls are not checked).".into();
    }
    let clauses: Vec<(String, Outcome)> = ARG_CHECKS
        .iter()
        .filter_map(|&check| {
            let rule = Rule::Arg {
                name: arg.to_string(),
                check,
            };
            let words = rule_words(policy, tool_name, &rule)?;
            Some((words, outcome_of(tool, Some(arg), check)))
        })
        .collect();
    if clauses.is_empty() {
        return "Any value.".into();
    }
    sentences(clauses)
}

/// What the conditions of a call to `tool_name` must be.
pub fn control_words(policy: &Policy, tool_name: &str) -> String {
    let Some(tool) = policy.tool(tool_name) else {
        return String::new();
    };
    if tool.effect == Effect::Pure {
        return "It is pure: its calls are not checked.".into();
    }
    let mut clauses = Vec::new();
    if let Some(words) = rule_words(policy, tool_name, &Rule::Control(Check::Require)) {
        let outcome = match tool.control_require() {
            ControlRequire::Any => Outcome::Allow,
            ControlRequire::Trusted => tool.on_violation().into(),
        };
        clauses.push((words, outcome));
    }
    // The confidentiality checks on the conditions say one thing; the strictest outcome among them follows.
    let confidentiality: Vec<(String, Outcome)> =
        [Check::ForbidTags, Check::Public, Check::ReadersMustInclude]
            .into_iter()
            .filter_map(|check| {
                let words = rule_words(policy, tool_name, &Rule::Control(check))?;
                let outcome = match check {
                    Check::ForbidTags => tool
                        .args
                        .values()
                        .filter_map(|a| a.forbid_tags.as_ref()?.on_violation())
                        .map(Outcome::from)
                        .chain([tool.on_violation().into()])
                        .max()
                        .unwrap_or(Outcome::Deny),
                    _ => tool.on_violation().into(),
                };
                Some((words, outcome))
            })
            .collect();
    if let Some(worst) = confidentiality.iter().map(|(_, o)| *o).max() {
        clauses.push((confidentiality[0].0.clone(), worst));
    }
    sentences(clauses)
}

/// How the result of `tool_name` is labelled, in words.
pub fn returns_words(policy: &Policy, tool_name: &str) -> String {
    let Some(tool) = policy.tool(tool_name) else {
        return String::new();
    };
    let r = tool.returns();
    let mut parts = vec![match r.integrity {
        Some(IntegritySpec::Trusted) => "trusted".to_string(),
        _ => "untrusted (anyone may have written it: it can decide nothing a requirement guards \
              until a verifier accepts it)"
            .to_string(),
    }];
    if let Some(fields) = &r.fields {
        for (field, spec) in fields.iter() {
            match spec.integrity {
                Some(IntegritySpec::Trusted) => parts.push(format!("its `{field}` is trusted")),
                Some(IntegritySpec::Untrusted) => parts.push(format!("its `{field}` is untrusted")),
                None => {}
            }
            if let Some(tags) = spec.tags.as_ref().filter(|t| !t.is_empty()) {
                parts.push(format!("its `{field}` is tagged {}", tags.join(", ")));
            }
        }
    }
    if let Some(tags) = r.tags.as_ref().filter(|t| !t.is_empty()) {
        parts.push(format!("tagged {}", tags.join(", ")));
    }
    for w in r.tags_when.iter().flatten() {
        parts.push(format!(
            "tagged {} when `{}` matches `{}`",
            w.tags.join(", "),
            w.arg,
            w.glob
        ));
    }
    parts.push(match &r.readers {
        Some(ReadersSpec::Public) => "anyone may read it".into(),
        Some(ReadersSpec::List(l)) if !l.is_empty() => {
            let l: Vec<String> = l.iter().map(|p| format!("`{p}`")).collect();
            format!("the user and {} may read it", list(&l, "and"))
        }
        Some(ReadersSpec::FromFields { fields, also }) => {
            let fields: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
            let mut s = format!(
                "each record may be read by the user and the people in its {}",
                list(&fields, "and")
            );
            if !also.is_empty() {
                let also: Vec<String> = also.iter().map(|p| format!("`{p}`")).collect();
                s.push_str(&format!(", and by {}", list(&also, "and")));
            }
            s
        }
        _ => "only the user may read it".into(),
    });
    if let Some(sr) = &r.structure_readers {
        parts.push(match sr {
            ReadersSpec::Public => "its length and order are public".into(),
            _ => "its length and order have their own readers".into(),
        });
    }
    let mut text = parts.join("; ");
    text.insert_str(0, "The result is ");
    text.push('.');
    text
}

/// What calling the tool does, and where its arguments go.
pub fn effect_words(policy: &Policy, tool_name: &str) -> String {
    let Some(tool) = policy.tool(tool_name) else {
        return String::new();
    };
    let effect = match tool.effect {
        Effect::Pure => "pure: it contacts nothing",
        Effect::Read => "read: it reads the world and changes nothing",
        Effect::Write => "write: it changes the user's own data",
        Effect::Send => "send: data leaves the machine",
        Effect::Execute => "execute: it runs something",
    };
    let mut s = format!("Effect: {effect}.");
    if let Some(p) = party(policy.file(), tool) {
        s.push_str(&format!(" Its arguments go to {p}."));
    }
    if tool.on_violation() == OnViolation::Draft {
        s.push_str(" When a requirement fails it writes a draft for the user instead of sending.");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn banking() -> Policy {
        Policy::load(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/bench/agentdojo/policies/banking.yaml"
        )))
        .unwrap()
    }

    /// Whether `readers_must_include: other` names the tool's server or provider, which reads as the user.
    fn reads_as_user(policy: &Policy, tool: &ToolSpec, other: &str) -> bool {
        match party(policy.file(), tool) {
            Some(Party::Provider { reader, .. }) if other == PROVIDER_RECIPIENT => {
                policy.is_user(&reader)
            }
            Some(Party::Server { reader, .. }) if other == SERVER_RECIPIENT => {
                policy.is_user(&reader)
            }
            _ => false,
        }
    }

    #[test]
    fn every_rule_of_every_argument_has_words() {
        for policy in [Policy::bundled_default().unwrap(), banking()] {
            for (name, tool) in policy.tools() {
                for (arg, spec) in tool.args.iter() {
                    let has = [
                        spec.require.is_some(),
                        spec.forbid_tags.as_ref().is_some_and(
                            |f| !matches!(f.tags(), ForbidTags::List(l) if l.is_empty()),
                        ),
                        spec.public == Some(true),
                        spec.readers_must_include
                            .as_deref()
                            .is_some_and(|o| !reads_as_user(&policy, tool, o)),
                    ];
                    for (check, has) in ARG_CHECKS.iter().zip(has) {
                        let rule = Rule::Arg {
                            name: arg.to_string(),
                            check: *check,
                        };
                        assert_eq!(
                            rule_words(&policy, name, &rule).is_some(),
                            has,
                            "{name}.{arg} {check:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_brief_example_reads_as_the_policy_says() {
        let p = Policy::bundled_default().unwrap();
        let to = arg_words(&p, "send_email", "to");
        assert!(
            to.starts_with(
                "Written in the plan (or computed only from plan values and trusted results: \
                 `get_email(...)[\"id\"]`"
            ),
            "{to}"
        );
        assert!(to.contains("or the result of `verify_recipient(...)`, or a value the person has approved and remembered as `correspondent` (the run checks; a plan cannot tell); otherwise the user is asked to approve the call. Never data tagged AUTH_SECRET (from `read_file(...)` when `path` matches `secrets/**`); otherwise the call is refused."), "{to}");
        let draft = arg_words(&p, "draft_reply", "to");
        assert!(
            draft.contains("otherwise it is only saved as a draft"),
            "{draft}"
        );
        let url = arg_words(&p, "fetch_url", "url");
        assert!(url.contains("only public data"), "{url}");
        assert!(!url.contains("asked"), "fetch_url denies: {url}");
        let control = control_words(&p, "read_inbox");
        assert_eq!(control, "Untrusted data may decide whether it is called.");
        let control = control_words(&p, "send_email");
        assert!(
            control.starts_with("Whether it is called may not depend on untrusted data"),
            "{control}"
        );
        // Banking: the provider reads what `llm:qllm` may; the bank's server reads as the user.
        let b = banking();
        let data = arg_words(&b, "query_llm", "data");
        assert!(
            data.starts_with("Only data the model provider `qllm` (`llm:qllm`) may read"),
            "{data}"
        );
        assert!(data.contains("`get_balance(...)`"), "{data}");
        let subject = arg_words(&b, "send_money", "subject");
        assert!(subject.contains("everyone in `recipient`"), "{subject}");
        let date = arg_words(&b, "send_money", "date");
        assert_eq!(
            date, "Any value.",
            "the server reads as the user: nothing to meet"
        );
    }

    #[test]
    fn results_say_how_they_are_labelled() {
        let p = Policy::bundled_default().unwrap();
        let inbox = returns_words(&p, "read_inbox");
        assert!(inbox.starts_with("The result is untrusted"), "{inbox}");
        assert!(inbox.contains("its `id` is trusted; tagged PRIVATE; each record may be read by the user and the people in its `from`, `to` and `cc`"), "{inbox}");
        assert!(
            returns_words(&p, "read_file")
                .contains("tagged AUTH_SECRET when `path` matches `secrets/**`")
        );
        assert!(returns_words(&p, "fetch_url").contains("anyone may read it"));
        let words = effect_words(&p, "send_email");
        assert!(words.contains("the recipients"), "{words}");
    }
}
