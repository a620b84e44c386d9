//! The rules of the base policy are a floor a draft may only raise (docs/policy.md, "Compiling a policy
//! from plain words"; issue #51). The battery asks one question — may data choose this argument? — and a
//! draft can weaken what it never asks: who may read an argument, which tags may not leave, whether a
//! condition on data may decide a call, how a violation is decided, and what a verifier the base
//! declares lets through. Those are compared here, rule by rule, between the loaded base and the loaded
//! draft, so the loader's defaults (a recipient's `require: trusted`, every sink's readers check) count as
//! the base's rules too: a draft cannot write `readers: any` or `recipient: false` over one.
//!
//! What the base leaves to the draft: adding a `verified(KIND)` alternative to a `require` (with a
//! verifier the base does not declare for that kind: the battery attacks it with every attacker value),
//! and the decision of a tool whose base text states no `on_violation` (the default `deny` is the base
//! saying nothing). A named exception in the constitution waives the `require` of its argument only.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::constitution::Exception;
use crate::policy::Outcome;
use crate::policy::Policy;
use crate::policy::model::{
    ArgSpec, ControlRequire, ForbidTags, OnViolation, Requirement, ToolSpec, VerifierSpec,
};
use crate::policy::sinks;

/// One rule the draft loosens: a title naming the rule, and what the draft does to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loosened {
    pub title: String,
    pub detail: String,
}

fn loosened(title: String, detail: String) -> Loosened {
    Loosened { title, detail }
}

/// Every rule of `base` that `draft` loosens. `base_doc` is the base as written, for the decisions its
/// text states.
pub fn looser(
    base: &Policy,
    draft: &Policy,
    base_doc: &Map<String, Value>,
    exceptions: &[Exception],
) -> Vec<Loosened> {
    let mut out = Vec::new();
    for (name, bt) in base.tools() {
        let Some(dt) = draft.tool(name) else {
            continue; // a removed tool cannot be called: nothing looser
        };
        let stated = stated_on_violation(base_doc, name);
        tool_rules(name, bt, dt, stated, exceptions, &mut out);
    }
    verifiers(base, draft, &mut out);
    remembered(base, draft, &mut out);
    for tag in base.tags() {
        if !draft.tags().contains(tag) {
            out.push(loosened(
                format!("the draft removes the tag `{tag}`"),
                format!("the base policy declares the tag `{tag}`; the draft does not"),
            ));
        }
    }
    out
}

/// What a remembered value covers (docs/semantics.md, "Remembered values"): a draft may not keep them
/// longer, share another scope's, or widen a role the base uses to more arguments.
fn remembered(base: &Policy, draft: &Policy, out: &mut Vec<Loosened>) {
    if !base.uses_known() {
        // Any `known(ROLE)` the draft adds is refused per argument (`require`).
        return;
    }
    if draft.known_expiry_days() > base.known_expiry_days() {
        out.push(loosened(
            "the draft keeps remembered values longer".to_string(),
            format!(
                "the base policy lets a remembered value last {} days; the draft {}",
                base.known_expiry_days(),
                draft.known_expiry_days()
            ),
        ));
    }
    let explicit = |p: &Policy| p.file().known.as_ref().and_then(|k| k.scope.clone());
    if explicit(draft).is_some() && explicit(draft) != explicit(base) {
        out.push(loosened(
            "the draft keeps remembered values under another scope".to_string(),
            "the draft names a `known.scope` the base does not: it would accept the values remembered for \
             another policy"
                .to_string(),
        ));
    }
    for (tool, spec) in base.tools() {
        for arg in spec.args.keys() {
            for role in base.known_roles(tool, arg) {
                let b = base.known_role_args(role, tool, arg);
                let wider: Vec<String> = draft
                    .known_role_args(role, tool, arg)
                    .into_iter()
                    .filter(|a| !b.contains(a))
                    .map(|(t, a)| format!("{t}.{a}"))
                    .collect();
                if !wider.is_empty() {
                    out.push(loosened(
                        format!("the draft widens the role `{role}`"),
                        format!(
                            "a value remembered for `{role}` would also count for {}",
                            wider.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    out.dedup_by(|a, b| a.title == b.title && a.detail == b.detail);
}

/// The tool's `on_violation` when the base's text states one.
fn stated_on_violation(base_doc: &Map<String, Value>, tool: &str) -> Option<OnViolation> {
    let said = base_doc
        .get("tools")?
        .get(tool)?
        .get("on_violation")?
        .as_str()?;
    match said {
        "deny" => Some(OnViolation::Deny),
        "confirm" => Some(OnViolation::Confirm),
        "draft" => Some(OnViolation::Draft),
        _ => None,
    }
}

/// An `on_violation` as a policy writes it.
fn word(v: OnViolation) -> &'static str {
    match v {
        OnViolation::Deny => "deny",
        OnViolation::Confirm => "confirm",
        OnViolation::Draft => "draft",
    }
}

fn tool_rules(
    name: &str,
    bt: &ToolSpec,
    dt: &ToolSpec,
    stated: Option<OnViolation>,
    exceptions: &[Exception],
    out: &mut Vec<Loosened>,
) {
    if let Some(b) = stated
        && Outcome::from(dt.on_violation()) < Outcome::from(b)
    {
        out.push(loosened(
            format!("the draft loosens `{name}`'s on_violation"),
            format!(
                "the base policy decides a violation of `{name}` with `{}`; the draft with `{}`",
                word(b),
                word(dt.on_violation())
            ),
        ));
    }
    if bt.control_require() == ControlRequire::Trusted
        && dt.control_require() == ControlRequire::Any
    {
        out.push(loosened(
            format!("the draft loosens `{name}`'s control"),
            format!(
                "the base policy requires a trusted control context at `{name}`; the draft lets a condition on data decide the call (`control: {{ require: any }}`)"
            ),
        ));
    }
    for (arg, ba) in bt.args.iter() {
        let Some(da) = dt.args.get(arg) else {
            continue; // `structure` refuses changed arguments
        };
        let at = format!("{name}.{arg}");
        let excepted = exceptions.iter().any(|e| e.tool == name && e.arg == arg);
        if !excepted {
            require(&at, ba, da, out);
        }
        forbid(&at, ba, dt, da, stated, out);
        readers(&at, bt, ba, dt, da, out);
        if sinks::is_recipient(bt, arg, ba) && !sinks::is_recipient(dt, arg, da) {
            out.push(loosened(
                format!("the draft says `{at}` is not a recipient"),
                format!(
                    "`{at}` names who receives in the base policy; the draft says it does not (`recipient: false`), so the recipients' readers check no longer reads it"
                ),
            ));
        }
    }
}

/// A draft's `require` may add `verified(KIND)` alternatives (the battery attacks them); it may not drop
/// the requirement, add `trusted`, or add a `known(ROLE)` the base does not accept (a remembered value is
/// one the attacker may name: the person's memories are not the drafter's to hand out).
fn require(at: &str, ba: &ArgSpec, da: &ArgSpec, out: &mut Vec<Loosened>) {
    let Some(b) = &ba.require else {
        return;
    };
    let Some(d) = &da.require else {
        out.push(loosened(
            format!("the draft removes `{at}`'s require"),
            format!(
                "the base policy requires `{at}` to be {}; the draft requires nothing, so data may choose it",
                alternatives(&b.0)
            ),
        ));
        return;
    };
    for r in &d.0 {
        if matches!(r, Requirement::Trusted) && !b.0.contains(r) {
            out.push(loosened(
                format!("the draft adds `trusted` to `{at}`'s require"),
                format!(
                    "the base policy requires `{at}` to be {}; the draft also accepts any trusted value",
                    alternatives(&b.0)
                ),
            ));
        }
        if matches!(r, Requirement::Known(_)) && !b.0.contains(r) {
            out.push(loosened(
                format!("the draft adds `{r}` to `{at}`'s require"),
                format!(
                    "the base policy requires `{at}` to be {}; the draft also accepts any value remembered \
                     as `{r}`, which data may name",
                    alternatives(&b.0)
                ),
            ));
        }
    }
}

fn alternatives(rs: &[Requirement]) -> String {
    let v: Vec<String> = rs.iter().map(|r| format!("`{r}`")).collect();
    v.join(" or ")
}

/// The tags the base forbids in an argument are forbidden in the draft's, decided at least as strictly.
fn forbid(
    at: &str,
    ba: &ArgSpec,
    dt: &ToolSpec,
    da: &ArgSpec,
    stated: Option<OnViolation>,
    out: &mut Vec<Loosened>,
) {
    let Some(bf) = &ba.forbid_tags else {
        return;
    };
    let covers = match (da.forbid_tags.as_ref().map(ForbidTags::tags), bf.tags()) {
        // `public: true` lets no tag in at all
        _ if da.public == Some(true) => true,
        (None, _) => false,
        (Some(ForbidTags::All), _) => true,
        (Some(ForbidTags::List(_)), ForbidTags::All) => false,
        (Some(ForbidTags::List(d)), ForbidTags::List(b)) => b.iter().all(|t| d.contains(t)),
        // `tags()` never returns `Deciding` (model.rs)
        (Some(ForbidTags::Deciding(..)), _) | (_, ForbidTags::Deciding(..)) => false,
    };
    if !covers {
        out.push(loosened(
            format!("the draft loosens `{at}`'s forbid_tags"),
            format!(
                "the base policy forbids {} in `{at}`; the draft forbids fewer",
                tags_text(bf.tags())
            ),
        ));
        return;
    }
    // The level the base decides these tags with: their own, or the tool's when the base states it.
    let b_level = bf.on_violation().or(stated);
    let d_level = da
        .forbid_tags
        .as_ref()
        .and_then(ForbidTags::on_violation)
        .unwrap_or_else(|| dt.on_violation());
    if let Some(b) = b_level
        && Outcome::from(d_level) < Outcome::from(b)
    {
        out.push(loosened(
            format!("the draft loosens `{at}`'s forbid_tags decision"),
            format!(
                "the base policy decides {} in `{at}` with `{}`; the draft with `{}`",
                tags_text(bf.tags()),
                word(b),
                word(d_level)
            ),
        ));
    }
}

fn tags_text(f: &ForbidTags) -> String {
    match f {
        ForbidTags::All => "every tag".into(),
        ForbidTags::List(l) => {
            let v: Vec<String> = l.iter().map(|t| format!("`{t}`")).collect();
            v.join(", ")
        }
        ForbidTags::Deciding(inner, _) => tags_text(inner),
    }
}

/// Who may read the argument: `public` stays public, a readers check stays the same check (or becomes
/// `public`), and only an argument the base leaves unchecked (`readers: any`) may be anything.
fn readers(
    at: &str,
    bt: &ToolSpec,
    ba: &ArgSpec,
    dt: &ToolSpec,
    da: &ArgSpec,
    out: &mut Vec<Loosened>,
) {
    let d_public = da.public == Some(true);
    if ba.public == Some(true) {
        if !d_public {
            out.push(loosened(
                format!("the draft loosens `{at}`'s public"),
                format!(
                    "the base policy lets only public data without tags into `{at}`; the draft drops `public: true`"
                ),
            ));
        }
        return;
    }
    let Some(b) = &ba.readers_must_include else {
        return; // `readers: any` in the base, said with its reason
    };
    if d_public {
        return;
    }
    let same = match &da.readers_must_include {
        None => false,
        Some(d) => d == b || (sinks::names_recipients(bt, b) && sinks::names_recipients(dt, d)),
    };
    if !same {
        let now = match (&da.readers_must_include, da.readers) {
            (Some(d), _) => format!("`readers_must_include: {d}`"),
            (None, Some(_)) => "`readers: any`".into(),
            (None, None) => "no readers check".into(),
        };
        out.push(loosened(
            format!("the draft loosens `{at}`'s readers check"),
            format!(
                "the base policy requires every reader in `{b}` to be allowed to read `{at}`; the draft has {now}"
            ),
        ));
    }
}

/// A verifier the base declares lets through no more in the draft, and no other verifier of the draft
/// mints a kind the base's verifiers mint (a copy under another name would let more through).
fn verifiers(base: &Policy, draft: &Policy, out: &mut Vec<Loosened>) {
    let base_kinds: BTreeSet<&str> = base.verifiers().map(|(_, v)| v.mints()).collect();
    for (name, dv) in draft.verifiers() {
        if !base_kinds.contains(dv.mints()) {
            continue; // a new kind: the battery attacks every argument that accepts it
        }
        match base.verifier(name) {
            Some(bv) if bv.mints() == dv.mints() => {
                if let Some(why) = widens(bv, dv) {
                    out.push(loosened(
                        format!("the draft widens the verifier `{name}`"),
                        format!("the draft's `{name}` {why} than the base policy's"),
                    ));
                }
            }
            _ => out.push(loosened(
                format!("the draft adds a verifier minting `{}`", dv.mints()),
                format!(
                    "the base policy's verifiers mint `{}`; the draft's `{name}` mints it too, with its own list",
                    dv.mints()
                ),
            )),
        }
    }
}

/// How `d` lets through more than `b`, if it does.
fn widens(b: &VerifierSpec, d: &VerifierSpec) -> Option<&'static str> {
    let subset = |d: &[String], b: &[String]| d.iter().all(|x| b.contains(x));
    match (b, d) {
        (
            VerifierSpec::EmailAllowlist { allow: b, .. },
            VerifierSpec::EmailAllowlist { allow: d, .. },
        ) => {
            (!d.iter().all(|p| b.iter().any(|q| email_within(p, q)))).then_some("allows addresses")
        }
        (
            VerifierSpec::UrlAllowlist {
                schemes: bs,
                hosts: bh,
                paths: bp,
                ..
            },
            VerifierSpec::UrlAllowlist {
                schemes: ds,
                hosts: dh,
                paths: dp,
                ..
            },
        ) => {
            let paths_ok = match (bp, dp) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(b), Some(d)) => d.iter().all(|p| b.iter().any(|q| path_within(p, q))),
            };
            let same = |d: &[String], b: &[String]| {
                d.iter()
                    .all(|x| b.iter().any(|y| x.eq_ignore_ascii_case(y)))
            };
            (!(same(ds, bs) && same(dh, bh) && paths_ok)).then_some("allows URLs")
        }
        (
            VerifierSpec::NumberRange {
                min: bl, max: bh, ..
            },
            VerifierSpec::NumberRange {
                min: dl, max: dh, ..
            },
        ) => (!(dl >= bl && dh <= bh)).then_some("allows numbers"),
        (VerifierSpec::OneOf { values: b, .. }, VerifierSpec::OneOf { values: d, .. }) => {
            (!subset(d, b)).then_some("allows values")
        }
        _ => Some("is of another kind and allows other values"),
    }
}

/// Whether every address the pattern `p` allows, `q` allows too (`*@domain` or one address, any case;
/// tools/verify.rs matches them so).
fn email_within(p: &str, q: &str) -> bool {
    let (p, q) = (p.to_ascii_lowercase(), q.to_ascii_lowercase());
    match (p.strip_prefix("*@"), q.strip_prefix("*@")) {
        (_, None) => p == q,
        (Some(pd), Some(qd)) => pd == qd,
        (None, Some(qd)) => p.rsplit_once('@').is_some_and(|(_, d)| d == qd),
    }
}

/// Whether every path below the prefix `p` is below the prefix `q`, after the normalisation the web
/// adapter fetches with.
fn path_within(p: &str, q: &str) -> bool {
    use crate::policy::url_rule::{normal_path, path_within};
    match (normal_path(p), normal_path(q)) {
        (Ok(p), Ok(q)) => p == q || path_within(&q, &p),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::panic,
        reason = "a test fails by panicking, with a message saying what went wrong"
    )]

    use super::*;

    fn load(text: &str) -> Policy {
        Policy::for_test(text)
    }

    const BASE: &str = "version: 1\nuser: me@example.com\ntags: [SECRET]\nverifiers:\n  verify_recipient: { kind: email_allowlist, allow: [\"*@example.com\"], mints: Recipient }\ntools:\n  send:\n    source: builtin.mail.send\n    effect: send\n    args:\n      to: { require: [trusted, \"verified(Recipient)\"] }\n      subject: {}\n      body: { forbid_tags: { tags: [SECRET], on_violation: deny } }\n";

    fn titles(draft: &str) -> Vec<String> {
        let base = load(BASE);
        let doc = super::super::mapping(BASE).unwrap_or_else(|e| panic!("{e}"));
        looser(&base, &load(draft), &doc, &[])
            .into_iter()
            .map(|l| l.title)
            .collect()
    }

    #[test]
    fn a_draft_may_not_stretch_what_a_remembered_value_covers() {
        let with_known = BASE.replace(
            "to: { require: [trusted, \"verified(Recipient)\"] }",
            "to: { require: [trusted, \"verified(Recipient)\", \"known(who)\"] }",
        ) + "known: { roles: { who: [send.to] }, expiry_days: 30 }\n";
        let titles_of = |draft: &str| -> Vec<String> {
            let base = load(&with_known);
            let doc = super::super::mapping(&with_known).unwrap_or_else(|e| panic!("{e}"));
            looser(&base, &load(draft), &doc, &[])
                .into_iter()
                .map(|l| l.title)
                .collect()
        };
        assert_eq!(titles_of(&with_known), Vec::<String>::new());
        let cases = [
            (
                with_known.replace("expiry_days: 30", "expiry_days: 365"),
                "the draft keeps remembered values longer",
            ),
            (
                with_known.replace("who: [send.to]", "who: [send.to, send.subject]"),
                "the draft widens the role `who`",
            ),
            (
                with_known.replace("expiry_days: 30", "expiry_days: 30, scope: other"),
                "the draft keeps remembered values under another scope",
            ),
        ];
        for (draft, want) in cases {
            let got = titles_of(&draft);
            assert!(
                got.iter().any(|t| t == want),
                "{want}: got {got:?}\n{draft}"
            );
        }
        // Shorter is stricter.
        assert_eq!(
            titles_of(&with_known.replace("expiry_days: 30", "expiry_days: 7")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_base_itself_loosens_nothing() {
        assert_eq!(titles(BASE), Vec::<String>::new());
    }

    #[test]
    fn each_loosening_is_named() {
        let cases = [
            (
                BASE.replace("allow: [\"*@example.com\"]", "allow: [\"*\"]"),
                "the draft widens the verifier `verify_recipient`",
            ),
            (
                // Renamed (a second verifier of one kind no longer loads at all).
                BASE.replace("verify_recipient: { kind: email_allowlist, allow: [\"*@example.com\"]", "x: { kind: email_allowlist, allow: [\"*\"]"),
                "the draft adds a verifier minting `Recipient`",
            ),
            (
                BASE.replace("tags: [SECRET], on_violation: deny", "tags: [SECRET], on_violation: confirm"),
                "the draft loosens `send.body`'s forbid_tags decision",
            ),
            (
                BASE.replace("body: { forbid_tags: { tags: [SECRET], on_violation: deny } }", "body: {}"),
                "the draft loosens `send.body`'s forbid_tags",
            ),
            (
                BASE.replace("subject: {}", "subject: { readers: any, reason: \"x\" }"),
                "the draft loosens `send.subject`'s readers check",
            ),
            (
                BASE.replace("to: { require: [trusted, \"verified(Recipient)\"] }", "to: { require: [trusted, \"verified(Recipient)\"], recipient: false, readers: any, reason: \"x\" }"),
                "the draft says `send.to` is not a recipient",
            ),
            (
                format!("{BASE}    control: {{ require: any }}\n"),
                "the draft loosens `send`'s control",
            ),
            (
                BASE.replace("\"verified(Recipient)\"] }", "\"verified(Recipient)\", \"known(payee)\"] }"),
                "the draft adds `known(payee)` to `send.to`'s require",
            ),
        ];
        for (draft, want) in cases {
            let got = titles(&draft);
            assert!(
                got.iter().any(|t| t == want),
                "{want}: got {got:?}\n{draft}"
            );
        }
    }

    #[test]
    fn stricter_drafts_and_new_kinds_pass() {
        let stricter = BASE
            .replace("allow: [\"*@example.com\"]", "allow: [\"bob@example.com\"]")
            .replace("subject: {}", "subject: { public: true }")
            .replace(
                "verifiers:\n",
                "verifiers:\n  verify_payee: { kind: one_of, values: [\"DE00\"], mints: Payee }\n",
            );
        assert_eq!(titles(&stricter), Vec::<String>::new());
    }
}
