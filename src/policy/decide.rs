//! The decision procedure (docs/semantics.md, "Decisions"): one claim in, one decision out. Pure and total.
//!
//! Order of evaluation, and why:
//! 1. Fixed rules no policy overrides, always `deny`: unknown tool, the tool-call cap, unknown or missing
//!    arguments, any `unknown` label (argument, list element or `pc`). They apply to `pure` tools too: a
//!    `pure` tool skips the policy's requirements, not the shape of the call or the budget, and an
//!    `unknown` label is denied everywhere (fail closed).
//! 2. Per argument in declaration order: `require`, `forbid_tags`, `public`, `readers_must_include` (for an
//!    argument that leaves and declared none, the defaults `policy::sinks` filled in at load); then the
//!    control context (`pc`) as an extra argument: `control.require`, every argument's `forbid_tags`,
//!    `public` and `readers_must_include`. Each violation's outcome is the tool's `on_violation`, except a
//!    `forbid_tags` that states its own (`{ tags: [..], on_violation: deny }`).
//! 3. The most restrictive violation wins; the first in that order on ties.
//!
//! Reasons name labels (through [`LabelSpace::describe`]), arguments and sources, never values: a claim's
//! `texts` are only compared, never printed.

use serde::{Deserialize, Serialize};

use super::Policy;
use super::model::{
    ArgSpec, ControlRequire, Effect, ForbidTags, OnViolation, Requirement, ToolSpec,
};
use super::rule::{Check, Rule};
use crate::label::{Label, LabelSpace, Readers, TagSet};

/// What the runtime knows about one tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub tool: String,
    pub args: Vec<ArgClaim>,
    /// The control context at the call.
    pub pc: Label,
    /// Tool calls already made in this run (not counting this one).
    pub calls_so_far: u32,
}

/// One argument of a claim.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgClaim {
    pub name: String,
    /// The label of a scalar, or the structure label of a container.
    pub label: Label,
    /// For a list or tuple: each element's deep label.
    pub elements: Option<Vec<Label>>,
    /// What the value reads as when it names recipients. Used only by `readers_must_include`; never shown.
    pub texts: Texts,
    /// Digest of the value, for approvals and the trace.
    pub digest: String,
    /// Which `known(ROLE)` roles the value holds, from the person's store (docs/semantics.md, "Remembered
    /// values"). Never a label: a remembered value adds integrity for this one decision only.
    pub remembered: Remembered,
}

/// What the person's store says of one argument's value, for `known(ROLE)` requirements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Remembered {
    /// The store was not consulted, or remembers nothing of it: no `known` role holds.
    #[default]
    Nothing,
    /// The roles the whole value holds, and for a list or tuple each element's.
    Roles {
        whole: Vec<String>,
        elements: Option<Vec<Vec<String>>>,
    },
    /// Lint's bound: the store is not read, so every `known` role may hold.
    MayBe,
}

impl Remembered {
    /// Whether `role` holds for the whole value (`element: None`) or for element `i`.
    fn holds(&self, role: &str, element: Option<usize>) -> bool {
        match self {
            Remembered::Nothing => false,
            Remembered::MayBe => true,
            Remembered::Roles { whole, elements } => match element {
                None => whole.iter().any(|r| r == role),
                Some(i) => elements
                    .as_ref()
                    .and_then(|e| e.get(i))
                    .is_some_and(|roles| roles.iter().any(|r| r == role)),
            },
        }
    }
}

/// An argument read as recipients (the argument a `readers_must_include` names).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Texts {
    /// A string (one recipient), or a flat list or tuple of strings (possibly empty).
    Strings(Vec<String>),
    /// Any other shape: a dict, a set, a nested list, a number, `None`, a list holding a non-string. A tool
    /// would read such a value in a way the policy cannot predict, so it never names recipients
    /// (`fixed.malformed_recipients`).
    Malformed,
    /// Not known: lint's lower bound, under which no recipient rule can be shown to fail.
    Unknown,
}

impl Texts {
    /// The texts of a plain string.
    pub fn one(s: impl Into<String>) -> Texts {
        Texts::Strings(vec![s.into()])
    }
}

/// A decision, ordered by restrictiveness: `Allow < Draft < Confirm < Deny`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Allow,
    Draft,
    Confirm,
    Deny,
}

impl From<OnViolation> for Outcome {
    fn from(v: OnViolation) -> Outcome {
        match v {
            OnViolation::Deny => Outcome::Deny,
            OnViolation::Confirm => Outcome::Confirm,
            OnViolation::Draft => Outcome::Draft,
        }
    }
}

/// The outcome, the stable id of the rule that decided it, and a reason for people.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub outcome: Outcome,
    /// Written `allow`, `fixed.unknown_tool`, `args.to.require`, `control.public`, ... ([`Rule`]).
    pub rule: Rule,
    pub reason: String,
}

impl Decision {
    fn new(outcome: Outcome, rule: Rule, reason: impl Into<String>) -> Decision {
        Decision {
            outcome,
            rule,
            reason: reason.into(),
        }
    }
    fn deny(rule: Rule, reason: impl Into<String>) -> Decision {
        Decision::new(Outcome::Deny, rule, reason)
    }
}

/// Said after a reason whose requirement is the default check of an argument that leaves
/// ([`crate::policy::sinks`]): where it comes from and how the policy's owner would change it.
const DEFAULT_CHECK_NOTE: &str =
    " (the default check for an argument that leaves: declare one in the policy to change it)";

/// A decision's reason as a planner is told it (`lint_plan`): without the note on how the policy could
/// change it, which is for the person who owns the policy ([`crate::plan::Audience`]).
pub fn reason_for_planner(reason: &str) -> &str {
    reason.strip_suffix(DEFAULT_CHECK_NOTE).unwrap_or(reason)
}

/// Decides one claim.
///
/// ```
/// use zamburak::label::Label;
/// use zamburak::policy::{ArgClaim, Claim, Outcome, Policy, Texts, decide};
/// let policy = Policy::bundled_default().unwrap();
/// let mut space = policy.label_space().unwrap();
/// let untrusted = space.tool_result(1, true, &[], None).unwrap();
/// let arg = |name: &str, label: Label| ArgClaim {
///     name: name.into(), label, elements: None, texts: Texts::Unknown, digest: String::new(), remembered: Default::default(),
/// };
/// let claim = Claim {
///     tool: "fetch_url".into(),
///     args: vec![arg("url", untrusted)],
///     pc: Label::literal(),
///     calls_so_far: 1,
/// };
/// let d = decide(&policy, &space, &claim);
/// assert_eq!((d.outcome, d.rule.to_string().as_str()), (Outcome::Deny, "args.url.require"));
/// ```
pub fn decide(policy: &Policy, space: &LabelSpace, claim: &Claim) -> Decision {
    let mut worst: Option<Decision> = None;
    for violation in violations(policy, space, claim) {
        if worst.as_ref().is_none_or(|w| violation.outcome > w.outcome) {
            worst = Some(violation);
        }
    }
    worst.unwrap_or_else(|| {
        let pure = policy
            .tool(&claim.tool)
            .is_some_and(|t| t.effect == Effect::Pure);
        if pure {
            Decision::new(
                Outcome::Allow,
                Rule::Allow,
                format!("`{}` is pure: it runs without checks", claim.tool),
            )
        } else {
            Decision::new(
                Outcome::Allow,
                Rule::Allow,
                format!("every requirement of `{}` holds", claim.tool),
            )
        }
    })
}

/// Whether deciding argument `arg` of `tool` reads the person's store: its `require` names a `known` role
/// and the value (or an element) meets none of the other alternatives. That depends on the policy and the
/// labels alone, never on what the store holds; a decision that reads it is told to the planner only up
/// to the cut (docs/semantics.md, "Remembered values").
pub fn consults_remembered(
    policy: &Policy,
    space: &LabelSpace,
    tool: &str,
    arg: &ArgClaim,
) -> bool {
    let knows = policy
        .tool(tool)
        .and_then(|t| t.args.get(&arg.name))
        .and_then(|spec| spec.require.as_ref())
        .is_some_and(|a| a.0.iter().any(|r| matches!(r, Requirement::Known(_))));
    // A list whose structure data chose is refused whatever its elements are: nothing to look up.
    let structure_chosen = arg.elements.is_some() && arg.label.is_untrusted();
    knows && !structure_chosen && chosen_by_data(policy, space, tool, arg)
}

/// Whether data chose argument `arg` of `tool` past its `require`: the value (or an element) meets none of
/// the alternatives but `known`. Such a value is what a claim is about; unless it is remembered it is new
/// to the person (docs/approvals.md, "Remembered values"), and one the policy gives no `known` role can
/// never be anything but new.
pub fn chosen_by_data(policy: &Policy, space: &LabelSpace, tool: &str, arg: &ArgClaim) -> bool {
    let Some(spec) = policy.tool(tool).and_then(|t| t.args.get(&arg.name)) else {
        return false;
    };
    if spec.require.is_none() {
        return false;
    }
    match &arg.elements {
        None => !meets_but_known(policy, space, tool, &arg.name, &arg.label),
        Some(elements) => {
            arg.label.is_untrusted()
                || elements
                    .iter()
                    .any(|e| !meets_but_known(policy, space, tool, &arg.name, e))
        }
    }
}

/// Whether a value with `label` meets one of the `require` alternatives of `tool.arg` other than
/// `known(ROLE)` (an argument that requires nothing: always).
pub fn meets_but_known(
    policy: &Policy,
    space: &LabelSpace,
    tool: &str,
    arg: &str,
    label: &Label,
) -> bool {
    let Some(alternatives) = policy
        .tool(tool)
        .and_then(|t| t.args.get(arg))
        .and_then(|spec| spec.require.as_ref())
    else {
        return true;
    };
    alternatives
        .0
        .iter()
        .any(|r| meets(space, r, label, &Remembered::Nothing, None))
}

/// Whether a value with `label` (element `element` of a list, or the whole value) meets requirement `r`.
fn meets(
    space: &LabelSpace,
    r: &Requirement,
    label: &Label,
    remembered: &Remembered,
    element: Option<usize>,
) -> bool {
    match r {
        Requirement::Trusted => !label.is_untrusted() && !label.unknown,
        Requirement::Verified(kind) => space
            .kind_index(kind)
            .is_some_and(|k| label.verified.contains(k) && !label.unknown),
        Requirement::Known(role) => !label.unknown && remembered.holds(role, element),
    }
}

/// Every requirement the claim breaks, in the policy's order: what [`decide`] takes the worst of, and what
/// `lint` lists so that one round of fixes can address all of them. A fixed rule (unknown tool or
/// argument, the call budget) is the only entry when it applies; a pure tool breaks nothing.
///
/// ```
/// use zamburak::label::Label;
/// use zamburak::policy::{ArgClaim, Claim, Policy, Texts, violations};
/// let policy = Policy::bundled_default().unwrap();
/// let space = policy.label_space().unwrap();
/// let untrusted = Label { integrity: zamburak::label::Integrity::Untrusted, ..Label::literal() };
/// let arg = |name: &str| ArgClaim {
///     name: name.into(), label: untrusted.clone(), elements: None, texts: Texts::one("x@evil.test"),
///     digest: String::new(), remembered: Default::default() };
/// // An untrusted recipient, chosen under a condition on untrusted data: two requirements break.
/// let claim = Claim { tool: "send_email".into(), args: vec![arg("to"), arg("subject"), arg("body")],
///     pc: untrusted.clone(), calls_so_far: 0 };
/// let rules: Vec<String> = violations(&policy, &space, &claim).iter().map(|d| d.rule.to_string()).collect();
/// assert!(rules.contains(&"args.to.require".to_string()), "{rules:?}");
/// assert!(rules.iter().any(|r| r.starts_with("control.")), "{rules:?}");
/// ```
pub fn violations(policy: &Policy, space: &LabelSpace, claim: &Claim) -> Vec<Decision> {
    let Some(tool) = policy.tool(&claim.tool) else {
        return vec![Decision::deny(
            Rule::UnknownTool,
            format!("`{}` is not a tool of this policy", claim.tool),
        )];
    };
    let claim = &with_party(policy, tool, claim);
    if let Some(d) = fixed_rules(policy, tool, claim) {
        return vec![d];
    }
    if tool.effect == Effect::Pure {
        return Vec::new();
    }
    let checker = Checker {
        policy,
        space,
        tool,
        claim,
        outcome: tool.on_violation().into(),
    };
    checker.violations()
}

fn fixed_rules(policy: &Policy, tool: &ToolSpec, claim: &Claim) -> Option<Decision> {
    let max = policy.limits().max_tool_calls;
    if claim.calls_so_far >= max {
        return Some(Decision::deny(
            Rule::MaxToolCalls,
            format!(
                "the run already made {} tool calls; the policy allows at most {max}",
                claim.calls_so_far
            ),
        ));
    }
    let implicit = party_recipient(policy, tool);
    for (i, arg) in claim.args.iter().enumerate() {
        if !tool.args.contains_key(&arg.name)
            && implicit.as_ref().is_none_or(|(name, _)| *name != arg.name)
        {
            return Some(Decision::deny(
                Rule::UnknownArgument,
                format!("`{}` has no argument `{}`", claim.tool, arg.name),
            ));
        }
        if claim.args[..i].iter().any(|a| a.name == arg.name) {
            return Some(Decision::deny(
                Rule::UnknownArgument,
                format!("argument `{}` of `{}` is given twice", arg.name, claim.tool),
            ));
        }
    }
    for name in tool.args.keys() {
        if !claim.args.iter().any(|a| a.name == name) {
            return Some(Decision::deny(
                Rule::MissingArgument,
                format!("argument `{name}` of `{}` is missing", claim.tool),
            ));
        }
    }
    for name in tool.args.keys() {
        let Some(arg) = claim.args.iter().find(|a| a.name == name) else {
            continue;
        };
        if is_unknown(&arg.label) || arg.elements.iter().flatten().any(is_unknown) {
            return Some(Decision::deny(
                Rule::UnknownLabel,
                format!("the label of argument `{name}` could not be computed"),
            ));
        }
    }
    // Recipients the policy cannot read as addresses name no one it can check: a dict, a nested list or
    // `None` reaches a tool that may read it its own way (fail closed). No recipient at all is refused too.
    // Every recipient argument a readers rule reads is checked, not only the one it names: a message goes
    // to its `cc` and `bcc` too (docs/semantics.md, "Recipients are a role").
    for (name, spec) in tool.args.iter() {
        let Some(named) = &spec.readers_must_include else {
            continue;
        };
        let mut names_someone = false;
        let mut problem = None;
        for recipients in recipient_args(tool, named) {
            let Some(arg) = claim.args.iter().find(|a| a.name == recipients) else {
                continue;
            };
            match &arg.texts {
                Texts::Malformed => {
                    problem = Some(format!(
                        "argument `{recipients}` is not a string or a flat list of strings"
                    ))
                }
                Texts::Strings(v) if v.iter().any(|t| crate::label::is_malformed_address(t)) => {
                    problem = Some(format!(
                        "argument `{recipients}` holds a text that is not one bare address"
                    ))
                }
                // The implicit party receives every call: it does not make a message to no one go.
                Texts::Strings(_) | Texts::Unknown if is_implicit(tool, named, recipients) => {}
                Texts::Strings(v) => names_someone |= !v.is_empty(),
                Texts::Unknown => names_someone = true,
            }
            if problem.is_some() {
                break;
            }
        }
        let problem =
            problem.or_else(|| (!names_someone).then(|| format!("`{named}` names no recipient")));
        if let Some(problem) = problem {
            return Some(Decision::deny(
                Rule::MalformedRecipients,
                format!("{problem}, so who may read `{name}` cannot be checked"),
            ));
        }
    }
    if is_unknown(&claim.pc) {
        return Some(Decision::deny(
            Rule::UnknownLabel,
            "the label of the control context could not be computed",
        ));
    }
    None
}

/// The arguments `readers_must_include: named` reads recipients from: every recipient argument of the tool
/// when it names one of them or `recipients`, and then the tool's implicit party too (an LLM tool's
/// provider, an MCP server's `reader`: it receives every argument); else the one it names.
fn recipient_args<'t>(tool: &'t ToolSpec, named: &'t str) -> Vec<&'t str> {
    use crate::policy::servers::{SERVER_RECIPIENT, ToolSource};
    if crate::policy::sinks::names_recipients(tool, named) {
        let mut args = crate::policy::sinks::recipients(tool);
        // Absent from the claim when the party reads as no one ([`party_recipient`]): skipped there.
        match tool.source.as_ref() {
            Some(ToolSource::Llm(_)) => args.push(crate::policy::providers::PROVIDER_RECIPIENT),
            Some(ToolSource::Mcp(_)) => args.push(SERVER_RECIPIENT),
            _ => {}
        }
        args
    } else {
        vec![named]
    }
}

/// Whether `arg`, read for `readers_must_include: named`, is the tool's implicit party rather than one of
/// its recipient arguments.
fn is_implicit(tool: &ToolSpec, named: &str, arg: &str) -> bool {
    crate::policy::sinks::names_recipients(tool, named) && !tool.args.contains_key(arg)
}

/// The implicit recipient of a tool, named as `readers_must_include` names it, with the texts it reads as:
/// an LLM tool's `provider` (the provider's principal) and the `server` of an MCP tool whose server declares
/// a `reader`. A provider the policy does not declare names no one the decision can check (refused as
/// malformed recipients).
fn party_recipient(policy: &Policy, tool: &ToolSpec) -> Option<(&'static str, Texts)> {
    use crate::policy::servers::{SERVER_RECIPIENT, ToolSource};
    match tool.source.as_ref()? {
        ToolSource::Llm(provider) => Some((
            crate::policy::providers::PROVIDER_RECIPIENT,
            match policy.provider(provider) {
                Some(p) => Texts::one(p.reader.clone()),
                None => Texts::Malformed,
            },
        )),
        ToolSource::Mcp(mcp) => {
            let reader = policy.server(&mcp.server)?.reader.clone()?;
            Some((SERVER_RECIPIENT, Texts::one(reader)))
        }
        ToolSource::Builtin(_) => None,
    }
}

/// A tool's claim with its implicit recipient ([`party_recipient`]) as one more argument: a trusted literal
/// naming the party's principal, which `readers_must_include: provider` (or `server`) reads.
fn with_party<'c>(
    policy: &Policy,
    tool: &ToolSpec,
    claim: &'c Claim,
) -> std::borrow::Cow<'c, Claim> {
    let Some((name, texts)) = party_recipient(policy, tool) else {
        return std::borrow::Cow::Borrowed(claim);
    };
    let mut with = claim.clone();
    with.args.retain(|a| a.name != name);
    with.args.push(ArgClaim {
        name: name.to_string(),
        label: Label::literal(),
        elements: None,
        texts,
        digest: String::new(),
        remembered: Remembered::Nothing,
    });
    std::borrow::Cow::Owned(with)
}

fn is_unknown(l: &Label) -> bool {
    l.unknown
}

struct Checker<'a> {
    policy: &'a Policy,
    space: &'a LabelSpace,
    tool: &'a ToolSpec,
    claim: &'a Claim,
    outcome: Outcome,
}

impl Checker<'_> {
    fn arg(&self, name: &str) -> Option<&ArgClaim> {
        self.claim.args.iter().find(|a| a.name == name)
    }

    fn violation(&self, rule: Rule, reason: String) -> Decision {
        Decision::new(self.outcome, rule, reason)
    }

    /// Said after a reason whose requirement the policy did not write but got as the default for an
    /// argument that leaves (policy::sinks), so the reader knows where it comes from and what to declare.
    fn default_note(&self, arg: &str) -> &'static str {
        let defaulted = self
            .policy
            .defaulted()
            .iter()
            .any(|d| d.tool == self.claim.tool && d.arg == arg);
        if defaulted { DEFAULT_CHECK_NOTE } else { "" }
    }

    /// A violation of a `forbid_tags` requirement: decided by its own `on_violation` when it has one.
    fn forbid_violation(&self, forbid: &ForbidTags, rule: Rule, reason: String) -> Decision {
        let outcome = forbid.on_violation().map_or(self.outcome, Outcome::from);
        Decision::new(outcome, rule, reason)
    }

    fn describe(&self, label: &Label) -> String {
        self.space.describe(label).to_string()
    }

    fn violations(&self) -> Vec<Decision> {
        let mut out = Vec::new();
        for (name, spec) in self.tool.args.iter() {
            // Presence was checked by the fixed rules.
            let Some(arg) = self.arg(name) else { continue };
            self.check_arg(name, spec, arg, &mut out);
        }
        self.check_pc(&mut out);
        out
    }

    fn check_arg(&self, name: &str, spec: &ArgSpec, arg: &ArgClaim, out: &mut Vec<Decision>) {
        let whole = deep_join(arg);
        if let Some(alternatives) = &spec.require {
            let wanted = alternatives
                .0
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" or ");
            let rule = Rule::Arg {
                name: name.to_string(),
                check: Check::Require,
            };
            match &arg.elements {
                None if !self.meets_any(&arg.label, &alternatives.0, &arg.remembered, None) => out
                    .push(self.violation(
                        rule,
                        format!(
                            "argument `{name}` must be {wanted}; it is: {}",
                            self.describe(&arg.label)
                        ),
                    )),
                None => {}
                Some(elements) => {
                    if arg.label.is_untrusted() {
                        out.push(self.violation(
                            rule,
                            format!(
                                "argument `{name}` is a list whose structure (length, order, membership) is \
                                 untrusted; it is: {}",
                                self.describe(&arg.label)
                            ),
                        ));
                    } else if let Some(i) = elements.iter().enumerate().position(|(i, e)| {
                        !self.meets_any(e, &alternatives.0, &arg.remembered, Some(i))
                    }) {
                        out.push(self.violation(
                            rule,
                            format!(
                                "element {} of argument `{name}` must be {wanted}; it is: {}",
                                i + 1,
                                self.describe(&elements[i])
                            ),
                        ));
                    }
                }
            }
        }
        if let Some(forbid) = &spec.forbid_tags {
            let bad = self.forbidden(forbid, whole.tags);
            if !bad.is_empty() {
                out.push(self.forbid_violation(
                    forbid,
                    Rule::Arg {
                        name: name.to_string(),
                        check: Check::ForbidTags,
                    },
                    format!(
                        "argument `{name}` carries {}{}, which `{}` forbids here; it is: {}{}",
                        self.tag_list(bad),
                        self.scanner_note(bad, &whole),
                        self.claim.tool,
                        self.describe(&whole),
                        self.default_note(name)
                    ),
                ));
            }
        }
        if spec.public == Some(true) && !is_public(&whole) {
            out.push(self.violation(
                Rule::Arg {
                    name: name.to_string(),
                    check: Check::Public,
                },
                format!(
                    "argument `{name}` must be public and untagged; it is: {}{}",
                    self.describe(&whole),
                    self.default_note(name)
                ),
            ));
        }
        let non_reader = spec.readers_must_include.as_deref().and_then(|named| {
            if recipient_args(self.tool, named).contains(&name) {
                self.first_non_reader_of_recipients(name, arg, named)
            } else {
                self.first_non_reader(named, &whole)
            }
        });
        if let Some(i) = non_reader {
            let budget = self.budget_note(&i);
            out.push(self.violation(
                Rule::Arg {
                    name: name.to_string(),
                    check: Check::ReadersMustInclude,
                },
                format!(
                    "{} may not read argument `{name}`; it is: {}{budget}{}",
                    self.recipient(i),
                    self.describe(&whole),
                    self.default_note(name)
                ),
            ));
        }
    }

    fn check_pc(&self, out: &mut Vec<Decision>) {
        let pc = &self.claim.pc;
        if self.tool.control_require() == ControlRequire::Trusted && pc.is_untrusted() {
            out.push(self.violation(
                Rule::Control(Check::Require),
                format!(
                    "whether `{}` is called depends on untrusted data; the control context is: {}",
                    self.claim.tool,
                    self.describe(pc)
                ),
            ));
        }
        for (name, spec) in self.tool.args.iter() {
            if let Some(forbid) = &spec.forbid_tags {
                let bad = self.forbidden(forbid, pc.tags);
                if !bad.is_empty() {
                    out.push(self.forbid_violation(
                        forbid,
                        Rule::Control(Check::ForbidTags),
                        format!(
                            "the control context carries {}{}, which argument `{name}` forbids; it is: {}{}",
                            self.tag_list(bad),
                            self.scanner_note(bad, pc),
                            self.describe(pc),
                            self.default_note(name)
                        ),
                    ));
                }
            }
            if spec.public == Some(true) && !is_public(pc) {
                out.push(self.violation(
                    Rule::Control(Check::Public),
                    format!(
                        "argument `{name}` must be public, so the control context must be too; it is: {}{}",
                        self.describe(pc),
                        self.default_note(name)
                    ),
                ));
            }
            if let Some(recipients_arg) = &spec.readers_must_include
                && let Some(i) = self.first_non_reader(recipients_arg, pc)
            {
                out.push(self.violation(
                    Rule::Control(Check::ReadersMustInclude),
                    format!(
                        "{} may not read the control context of this call; it is: {}{}",
                        self.recipient(i),
                        self.describe(pc),
                        self.default_note(name)
                    ),
                ));
            }
        }
    }

    fn meets_any(
        &self,
        label: &Label,
        alternatives: &[Requirement],
        remembered: &Remembered,
        element: Option<usize>,
    ) -> bool {
        alternatives
            .iter()
            .any(|r| meets(self.space, r, label, remembered, element))
    }

    fn forbidden(&self, forbid: &ForbidTags, tags: TagSet) -> TagSet {
        match forbid.tags() {
            ForbidTags::All | ForbidTags::Deciding(..) => tags,
            ForbidTags::List(names) => TagSet(
                names
                    .iter()
                    .filter_map(|n| self.space.tag_index(n))
                    .fold(0u16, |acc, i| acc | (1 << i))
                    & tags.0,
            ),
        }
    }

    /// ` (added by scanner `secrets` on read_file's result)` for the forbidden tags a content scanner added
    /// to a result `label` derives from; empty when none did.
    fn scanner_note(&self, tags: TagSet, label: &Label) -> String {
        let mut parts = Vec::new();
        for t in tags.iter() {
            let Some(tag) = self.space.tag_name(t) else {
                continue;
            };
            for (scanner, tool) in self.space.scanners_of(label, tag) {
                let part = format!("{tag} added by scanner `{scanner}` on {tool}'s result");
                if !parts.contains(&part) {
                    parts.push(part);
                }
            }
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join("; "))
        }
    }

    fn tag_list(&self, tags: TagSet) -> String {
        let names: Vec<String> = tags
            .iter()
            .map(|t| {
                self.space
                    .tag_name(t)
                    .map_or_else(|| format!("tag#{t}"), str::to_string)
            })
            .collect();
        format!(
            "tag{} {}",
            if names.len() == 1 { "" } else { "s" },
            names.join("+")
        )
    }

    /// The first recipient `readers_must_include: named` reads who may not read `label`: the recipient
    /// argument and the index in it.
    fn first_non_reader(&self, named: &str, label: &Label) -> Option<(String, usize)> {
        for recipients_arg in recipient_args(self.tool, named) {
            let Some(arg) = self.arg(recipients_arg) else {
                continue;
            };
            match &arg.texts {
                Texts::Strings(v) => {
                    if let Some(i) = v.iter().position(|r| !self.is_reader(r, label)) {
                        return Some((recipients_arg.to_string(), i));
                    }
                }
                // A malformed list was refused by the fixed rules; unknown recipients prove nothing.
                Texts::Malformed | Texts::Unknown => {}
            }
        }
        None
    }

    /// Said after a readers refusal whose recipient a result named after the principal budget was spent:
    /// it may have been a reader, untracked (docs/semantics.md, "Budgets"). Counts, never names: the
    /// addresses came from data; the person sees them in the claim.
    fn budget_note(&self, (recipients_arg, i): &(String, usize)) -> String {
        let dropped = self.space.dropped();
        let named = match self.arg(recipients_arg).map(|a| &a.texts) {
            Some(Texts::Strings(v)) => v.get(*i),
            _ => None,
        };
        match named {
            Some(text) if dropped.contains(&crate::label::party(text)) => format!(
                " (the reader budget of {} people was spent before this recipient could be tracked; {} \
                 address{} dropped)",
                crate::label::MAX_PRINCIPALS,
                dropped.len(),
                if dropped.len() == 1 {
                    " was"
                } else {
                    "es were"
                }
            ),
            _ => String::new(),
        }
    }

    /// [`Self::first_non_reader`] for a recipient argument itself (docs/semantics.md, "A party may read its
    /// own address, as recorded"): every recipient must read the list's structure and every element, except
    /// that an element carrying the own-address mark may be read by the one party it names. Whatever chose
    /// the element (an index, a key, a condition) was joined into its label before the mark could survive
    /// it, and a choice that is not trusted removes the mark.
    fn first_non_reader_of_recipients(
        &self,
        name: &str,
        arg: &ArgClaim,
        named: &str,
    ) -> Option<(String, usize)> {
        let own = self.space.own_address();
        let parts: Vec<(Option<usize>, &Label)> = match &arg.elements {
            Some(elements) => std::iter::once((None, &arg.label))
                .chain(elements.iter().enumerate().map(|(i, e)| (Some(i), e)))
                .collect(),
            None => vec![(Some(0), &arg.label)],
        };
        for recipients_arg in recipient_args(self.tool, named) {
            let Some(Texts::Strings(texts)) = self.arg(recipients_arg).map(|a| &a.texts) else {
                continue;
            };
            for (j, text) in texts.iter().enumerate() {
                for (i, label) in &parts {
                    let its_own = recipients_arg == name
                        && *i == Some(j)
                        && own.is_some_and(|k| label.verified.contains(k));
                    if !its_own && !self.is_reader(text, label) {
                        return Some((recipients_arg.to_string(), j));
                    }
                }
            }
        }
        None
    }

    /// Recipient `i` of `recipients_arg` for a reason: named when the plan (or a trusted source) chose it,
    /// counted when data did (an attacker's text is never echoed into a reason).
    fn recipient(&self, (recipients_arg, i): (String, usize)) -> String {
        let position = format!("recipient {} in `{recipients_arg}`", i + 1);
        let Some(arg) = self.arg(&recipients_arg) else {
            return position;
        };
        let element_trusted = match &arg.elements {
            Some(es) => es.get(i).is_some_and(|e| !e.is_untrusted() && !e.unknown),
            None => true,
        };
        match &arg.texts {
            Texts::Strings(v)
                if !arg.label.is_untrusted() && !arg.label.unknown && element_trusted =>
            {
                v.get(i)
                    .map_or(position.clone(), |addr| match addr.strip_prefix('\0') {
                        // Lint's stand-in for a recipient only the run will know: its words, not an address.
                        Some(words) => format!("{words} ({position})"),
                        None => format!("`{addr}` ({position})"),
                    })
            }
            _ => position,
        }
    }

    fn is_reader(&self, recipient: &str, label: &Label) -> bool {
        if self.policy.is_user(recipient) {
            return true;
        }
        match &label.readers {
            Readers::Public => true,
            Readers::Only(set) => self
                .space
                .find_principal(recipient)
                .is_some_and(|p| set.contains(&p)),
        }
    }
}

/// What approving a claim [`decide`] held for confirmation performs (docs/semantics.md, "Approvals"): an
/// approval lifts exactly the confirm-level violations the claim lists, so when the call also breaks a
/// draft-level rule it still only drafts (`Draft`); otherwise it runs as called (`Allow`). Never stronger
/// than the claim: a claim that breaks a `deny` rule is denied and never reaches a person.
pub fn on_approval(policy: &Policy, space: &LabelSpace, claim: &Claim) -> Outcome {
    let rest = violations(policy, space, claim)
        .into_iter()
        .map(|v| v.outcome)
        .filter(|o| *o != Outcome::Confirm)
        .max();
    match rest {
        None | Some(Outcome::Allow) => Outcome::Allow,
        Some(Outcome::Draft) => Outcome::Draft,
        // Not reached for a claim `decide` held for confirmation; should it be, an approval performs nothing.
        Some(Outcome::Confirm | Outcome::Deny) => Outcome::Deny,
    }
}

/// For the person deciding a claim: per argument a `readers_must_include` guards, the recipients who may
/// not read it, by address. Only the approver sees this (the policy's user, a reader of every value);
/// reasons, which the planner sees, still count rather than name untrusted recipients.
pub fn non_readers(
    policy: &Policy,
    space: &LabelSpace,
    claim: &Claim,
) -> Vec<(String, Vec<String>)> {
    let Some(tool) = policy.tool(&claim.tool) else {
        return Vec::new();
    };
    let claim = &with_party(policy, tool, claim);
    let checker = Checker {
        policy,
        space,
        tool,
        claim,
        outcome: Outcome::Allow,
    };
    let mut out = Vec::new();
    for (name, spec) in tool.args.iter() {
        let (Some(recipients), Some(arg)) = (&spec.readers_must_include, checker.arg(name)) else {
            continue;
        };
        let whole = deep_join(arg).join(&claim.pc);
        let mut who: Vec<String> = Vec::new();
        for recipients_arg in recipient_args(tool, recipients) {
            if let Some(Texts::Strings(v)) = checker.arg(recipients_arg).map(|r| &r.texts) {
                for r in v {
                    if !checker.is_reader(r, &whole) && !who.contains(r) {
                        who.push(r.clone());
                    }
                }
            }
        }
        if !who.is_empty() {
            out.push((name.to_string(), who));
        }
    }
    out
}

/// A container's structure joined with all its elements: what tag and readers rules look at.
fn deep_join(arg: &ArgClaim) -> Label {
    arg.elements
        .iter()
        .flatten()
        .fold(arg.label.clone(), |acc, e| acc.join(e))
}

fn is_public(label: &Label) -> bool {
    label.tags.is_empty() && label.readers == Readers::Public
}

#[cfg(test)]
mod tests;
