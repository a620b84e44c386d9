//! The fixed attack battery of `policy compile`: for every argument whose role is a recipient, URL,
//! payee, or a path a tool writes or sends ([`super::roles::attacked`]), a plan in which untrusted data
//! chooses that argument. No drafted policy may allow it; only a named exception in the constitution
//! takes an argument out ([`super::constitution`]).
//!
//! The untrusted data comes from a tool the battery adds to a copy of the policy,
//! `zamburak_battery_source`, whose result is untrusted and public: it stands for any untrusted tool
//! result whatever the draft says about the real tools' results, and being public it isolates the
//! question the battery asks (who chose the value) from who may read it. Every other argument gets the
//! most favourable value the policy accepts: a literal, or a literal a verifier vouches for when the
//! argument needs a verified kind. Each attack has a control run with the attacked argument written in
//! the plan: an attack counts only when the control run's call is allowed; otherwise it is reported as
//! not exercised (the call is never allowed, whoever chooses the argument).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::roles::{ArgRole, Role};
use crate::lower::Mode;
use crate::policy::Policy;
use crate::policy::builtins::VerifierSpec;
use crate::policy::decide::Outcome;
use crate::policy::model::Requirement;
use crate::runtime::run::{Engine, RunReport};
use crate::stubs::Catalogue;

/// The tool the battery adds to read untrusted data from.
pub const SOURCE_TOOL: &str = "zamburak_battery_source";
/// The variable battery plans hold the attacker's value in. A name no policy may declare (a
/// verifier or tool named `x` made lint refuse every plan, which read as "refused": issue #51).
pub const VALUE_VAR: &str = "zamburak_battery_value";

/// One attack: `tool.arg` chosen by data.
#[derive(Clone, Debug)]
pub struct Attack {
    pub tool: String,
    pub arg: String,
    pub role: Role,
    /// The verifier the data passes through first, when the argument accepts the kind it mints.
    pub via: Option<String>,
    pub plan: String,
    pub control_plan: String,
}

/// What the battery found.
#[derive(Debug, Default)]
pub struct BatteryReport {
    /// Attacks run, each in both modes.
    pub attacks: usize,
    /// Runs (attack and control, per mode).
    pub runs: usize,
    /// `tool.arg` attacks whose control call is never allowed, with the decision that refused it.
    pub not_exercised: Vec<String>,
    /// `tool.arg` exempted by a named exception.
    pub exempted: Vec<String>,
    /// Attacks the policy allowed: the title and the exposing scenario with what happened.
    pub exposed: Vec<(String, String)>,
    /// Attacked arguments that accept a remembered value (`known(ROLE)`): an attacker who names one of
    /// the values remembered for it gets it, so each says how many there are to choose from now.
    pub known: Vec<String>,
}

/// The policy with the battery's source tool added, loaded from `doc` (a policy mapping).
pub fn with_source(doc: &Map<String, Value>, base_dir: &std::path::Path) -> Result<Policy, String> {
    let mut doc = doc.clone();
    let tools = doc
        .entry("tools")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(tools) = tools.as_object_mut() else {
        return Err("`tools` is not a mapping".into());
    };
    if tools.contains_key(SOURCE_TOOL) || tools.contains_key(VALUE_VAR) {
        return Err(format!(
            "the policy may not declare a tool named `{SOURCE_TOOL}` or `{VALUE_VAR}`"
        ));
    }
    tools.insert(
        SOURCE_TOOL.into(),
        json!({
            "effect": "read",
            "args": {},
            "control": { "require": "any" },
            "returns": { "integrity": "untrusted", "readers": "public" },
        }),
    );
    if doc
        .get("verifiers")
        .and_then(Value::as_object)
        .is_some_and(|v| v.contains_key(VALUE_VAR) || v.contains_key(SOURCE_TOOL))
    {
        return Err(format!(
            "the policy may not declare a verifier named `{SOURCE_TOOL}` or `{VALUE_VAR}`"
        ));
    }
    // The battery asks whether the argument's rule stops the attack; a call budget would stop
    // every attack for the wrong reason (`max_tool_calls: 1` read as "all refused": issue #51).
    // Run-time limits are enforced as written; they are not what the battery verifies.
    doc.remove("limits");
    let text = serde_json::to_string(&Value::Object(doc)).map_err(|e| e.to_string())?;
    Policy::from_yaml_str(
        &text,
        "<the drafted policy with the battery's source>",
        base_dir,
    )
    .map_err(|e| e.to_string())
}

/// A literal of the argument's type, as Python.
fn literal(ty: &str, text: &str) -> String {
    let ty = ty.trim();
    if ty.starts_with("int") {
        "1".into()
    } else if ty.starts_with("float") {
        "1.0".into()
    } else if ty == "bool" {
        "True".into()
    } else {
        crate::stubs::types::py_string(text)
    }
}

/// A value the verifier accepts, as Python.
fn accepted(v: &VerifierSpec) -> Option<String> {
    use crate::stubs::types::py_string;
    match v {
        VerifierSpec::OneOf { values, .. } => values.first().map(|s| py_string(s)),
        VerifierSpec::NumberRange { min, max, .. } => {
            (min <= max && min.is_finite()).then(|| format!("{min:?}"))
        }
        VerifierSpec::EmailAllowlist { allow, .. } => allow
            .first()
            .map(|p| py_string(&p.replace(['*', '?'], "a"))),
        VerifierSpec::UrlAllowlist {
            schemes,
            hosts,
            paths,
            ..
        } => {
            let scheme = schemes.first()?;
            let host = hosts.first()?.replace('*', "a");
            let path = paths
                .as_ref()
                .and_then(|p| p.first().cloned())
                .unwrap_or_else(|| "/".into());
            Some(py_string(&format!("{scheme}://{host}{path}")))
        }
    }
}

/// The most favourable value of `tool.arg`: a literal, or a literal through a verifier when the
/// argument accepts only verified kinds.
fn favourable(policy: &Policy, tool: &str, arg: &str, lit: String) -> String {
    let Some(req) = policy
        .tool(tool)
        .and_then(|t| t.args.iter().find(|(a, _)| *a == arg).map(|(_, r)| r))
        .and_then(|r| r.require.as_ref())
    else {
        return lit;
    };
    if req.0.contains(&Requirement::Trusted) {
        return lit;
    }
    for alt in &req.0 {
        let Requirement::Verified(kind) = alt else {
            continue;
        };
        for (name, v) in policy.file().verifiers.iter() {
            if v.mints() == kind
                && let Some(value) = accepted(v)
            {
                return format!("{name}({value})");
            }
        }
    }
    lit
}

/// The verifiers minting a kind `tool.arg` accepts.
fn verifiers_for(policy: &Policy, tool: &str, arg: &str) -> Vec<String> {
    let Some(req) = policy
        .tool(tool)
        .and_then(|t| t.args.iter().find(|(a, _)| *a == arg).map(|(_, r)| r))
        .and_then(|r| r.require.as_ref())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for alt in &req.0 {
        if let Requirement::Verified(kind) = alt {
            for (name, v) in policy.file().verifiers.iter() {
                if v.mints() == kind {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

/// The attacks for `roles` on `policy`, but for the exempted arguments.
pub fn attacks(
    policy: &Policy,
    catalogue: &Catalogue,
    roles: &[ArgRole],
    exempt: &BTreeSet<(String, String)>,
    report: &mut BatteryReport,
) -> Vec<Attack> {
    let mut out = Vec::new();
    for (r, role) in roles
        .iter()
        .flat_map(|r| r.attack_roles().into_iter().map(move |role| (r, role)))
    {
        let Some(stub) = catalogue.tools.iter().find(|t| t.name == r.tool) else {
            continue; // the draft removed the tool: nothing to attack
        };
        if exempt.contains(&(r.tool.clone(), r.arg.clone())) {
            let name = format!("{}.{}", r.tool, r.arg);
            if !report.exempted.contains(&name) {
                report.exempted.push(name);
            }
            continue;
        }
        let mut attack_args = Vec::new();
        let mut control_args = Vec::new();
        for p in &stub.params {
            let ty = catalogue.registry.render_input(&p.ty);
            let lit = if p.name == r.arg {
                literal(&ty, role.attacker_value())
            } else {
                literal(&ty, "x")
            };
            let fav = favourable(policy, &r.tool, &p.name, lit);
            control_args.push(format!("{}={fav}", p.name));
            if p.name == r.arg {
                attack_args.push(format!("{}={VALUE_VAR}", p.name));
            } else {
                attack_args.push(format!("{}={fav}", p.name));
            }
        }
        // The data as it is, and through every verifier whose kind the argument accepts: a verifier
        // that accepts the attacker's value (an allowlist of `*`) is a hole like a missing requirement.
        let mut vias = vec![None];
        vias.extend(verifiers_for(policy, &r.tool, &r.arg).into_iter().map(Some));
        for via in vias {
            let value = match &via {
                Some(v) => format!("{v}({VALUE_VAR})"),
                None => VALUE_VAR.to_string(),
            };
            let args: Vec<String> = attack_args
                .iter()
                .map(|a| {
                    if a == &format!("{}={VALUE_VAR}", r.arg) {
                        format!("{}={value}", r.arg)
                    } else {
                        a.clone()
                    }
                })
                .collect();
            out.push(Attack {
                tool: r.tool.clone(),
                arg: r.arg.clone(),
                role,
                via,
                plan: format!(
                    "{VALUE_VAR} = {SOURCE_TOOL}()\n{}({})\n",
                    r.tool,
                    args.join(", ")
                ),
                control_plan: format!("{}({})\n", r.tool, control_args.join(", ")),
            });
        }
    }
    out
}

fn allowed(report: &RunReport, tool: &str) -> bool {
    report
        .decisions
        .iter()
        .any(|d| d.tool == tool && d.decision == Outcome::Allow)
}

/// Whether the run reached a call of `tool` and the policy decided it.
fn decided(report: &RunReport, tool: &str) -> bool {
    report.decisions.iter().any(|d| d.tool == tool)
}

fn decisions(report: &RunReport) -> String {
    let mut s = String::new();
    for d in &report.decisions {
        let _ = writeln!(
            s,
            "  line {}: {} -> {} ({}): {}",
            d.line,
            d.tool,
            outcome_name(d.decision),
            d.rule,
            d.reason
        );
    }
    if let Some(e) = &report.error {
        let _ = writeln!(s, "  {}: {}", e.exc_type, e.message);
    }
    for d in &report.diagnostics {
        let _ = writeln!(s, "  {}: {}", d.code, d.message);
    }
    s
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Allow => "allow",
        Outcome::Draft => "draft",
        Outcome::Confirm => "confirm",
        Outcome::Deny => "deny",
    }
}

/// How many values are remembered for `role` on `tool.arg` under `policy` now, in words (the person runs
/// `policy compile`: their own store is theirs to count).
fn remembered_now(policy: &Policy, role: &str, tool: &str, arg: &str) -> String {
    use crate::known::store::{Scope, Store, default_path};
    let store = match default_path().map(|p| Store::open(&p)) {
        Ok(Ok(s)) => s,
        _ => return "the remembered values cannot be read to count them".into(),
    };
    let args = policy.known_role_args(role, tool, arg);
    let user = policy.user().unwrap_or("").to_string();
    let scope = policy.known_scope();
    let n = store
        .values_in(
            &Scope {
                scope: &scope,
                user: &user,
                role,
                args: &args,
            },
            jiff::Timestamp::now(),
        )
        .len();
    format!("{n} remembered now")
}

/// Runs `attacks` against `policy` (which has the battery's source) in both modes.
pub fn run(attacks: &[Attack], policy: &Policy, engine: &Engine, report: &mut BatteryReport) {
    for a in attacks {
        report.attacks += 1;
        for role in policy.known_roles(&a.tool, &a.arg) {
            let line = format!(
                "`{}.{}` accepts `known({role})`: an attacker who names a value remembered for it gets it \
                 ({})",
                a.tool,
                a.arg,
                remembered_now(policy, role, &a.tool, &a.arg)
            );
            if !report.known.contains(&line) {
                report.known.push(line);
            }
        }
        let through = a
            .via
            .as_ref()
            .map_or_else(String::new, |v| format!(" through `{v}`"));
        let title = format!(
            "battery: {}.{} ({}) chosen by data{through}",
            a.tool,
            a.arg,
            a.role.name()
        );
        let value = a.role.attacker_value();
        let tools: BTreeMap<String, Vec<Value>> =
            BTreeMap::from([(SOURCE_TOOL.to_string(), vec![json!(value)])]);
        // The attacked argument's own verifier refusing the attacker's value is a refusal at that
        // argument: the plan stops there, before the call, for the right reason.
        let verifier_refuses = a.via.as_ref().is_some_and(|v| {
            policy
                .verifier(v)
                .is_some_and(|spec| crate::tools::verify::check(spec, &json!(value)).is_err())
        });
        let mut not_exercised = None;
        for mode in [Mode::Strict, Mode::Normal] {
            let control =
                crate::scenario::run_plan(&a.control_plan, &BTreeMap::new(), policy, mode, engine);
            let attack = crate::scenario::run_plan(&a.plan, &tools, policy, mode, engine);
            report.runs += 2;
            if allowed(&attack, &a.tool) {
                let mut s = format!("FAILED {title} [{}]\n", mode.name());
                let _ = writeln!(s, "  plan:");
                for line in a.plan.lines() {
                    let _ = writeln!(s, "    {line}");
                }
                let _ = writeln!(
                    s,
                    "  {SOURCE_TOOL} returns {} (untrusted data, as any tool result an attacker can write)",
                    json!(value)
                );
                let _ = writeln!(
                    s,
                    "  expected: not allow (a {} chosen by data; the constitution names no exception for it)",
                    a.role.name()
                );
                let _ = writeln!(s, "  actual:   {}", attack.outcome);
                s.push_str(&decisions(&attack));
                report.exposed.push((
                    format!("{title} [{}]", mode.name()),
                    s.trim_end().to_string(),
                ));
            } else if !allowed(&control, &a.tool) && not_exercised.is_none() {
                not_exercised = Some(format!(
                    "{}.{}: `{}` is not allowed even with every argument written in the plan ({})",
                    a.tool, a.arg, a.tool, control.outcome
                ));
            } else if !decided(&attack, &a.tool) && !verifier_refuses && not_exercised.is_none() {
                // A refusal counts only when the run reached the call and the policy decided it: a
                // plan stopped before it (lint, a budget, an error) refused nothing (issue #51).
                not_exercised = Some(format!(
                    "{}.{}: the attack plan never reached `{}` ({}) [{}]",
                    a.tool,
                    a.arg,
                    a.tool,
                    attack.outcome,
                    mode.name()
                ));
            }
        }
        report.not_exercised.extend(not_exercised);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::roles::roles;
    use std::path::Path;

    fn policy(args: &str) -> Map<String, Value> {
        let text = format!(
            "version: 1\nverifiers:\n  verify_payee: {{ kind: one_of, values: [DE89], mints: Payee }}\n  verify_amount: {{ kind: number_range, min: 0, max: 10, mints: Small }}\ntools:\n  pay:\n    effect: send\n    args: {args}\n    on_violation: deny\n"
        );
        serde_saphyr::from_str::<Value>(&text)
            .unwrap()
            .as_object()
            .unwrap()
            .clone()
    }

    fn battery(doc: &Map<String, Value>) -> (Vec<Attack>, BatteryReport) {
        let text = serde_json::to_string(doc).unwrap();
        let p = Policy::from_yaml_str(&text, "p.yaml", Path::new("/tmp")).unwrap();
        let c = crate::stubs::catalogue(&p, None);
        let mut report = BatteryReport::default();
        let attacks = attacks(
            &p,
            &c,
            &roles(&p, &BTreeMap::new()),
            &BTreeSet::new(),
            &mut report,
        );
        let with = with_source(doc, Path::new("/tmp")).unwrap();
        run(&attacks, &with, &Engine::InProcess, &mut report);
        (attacks, report)
    }

    #[test]
    fn other_arguments_get_the_most_favourable_value_and_a_control_run() {
        // `amount` accepts only a verified kind: the attack passes a literal through its verifier, so a
        // refusal can only come from the attacked argument.
        let doc = policy(
            "{ iban: { require: [trusted, \"verified(Payee)\"] }, amount: { require: \"verified(Small)\" } }",
        );
        let (attacks, report) = battery(&doc);
        // Each of four kinds of attacker value, as it is and through `verify_payee`.
        assert_eq!(attacks.len(), 8, "{attacks:?}");
        assert_eq!(
            attacks[0].plan,
            "zamburak_battery_value = zamburak_battery_source()\npay(iban=zamburak_battery_value, amount=verify_amount(0.0))\n"
        );
        assert_eq!(
            attacks[1].plan,
            "zamburak_battery_value = zamburak_battery_source()\npay(iban=verify_payee(zamburak_battery_value), amount=verify_amount(0.0))\n"
        );
        // The control call writes the attacker's value of that kind in the plan.
        assert_eq!(
            attacks[0].control_plan,
            "pay(iban=\"mallory@evil.test\", amount=verify_amount(0.0))\n"
        );
        assert_eq!(
            attacks[2].control_plan,
            "pay(iban=\"XX00EVIL00000000000001\", amount=verify_amount(0.0))\n"
        );
        assert!(report.exposed.is_empty(), "{:?}", report.exposed);
        assert!(
            report.not_exercised.is_empty(),
            "{:?}",
            report.not_exercised
        );
        assert_eq!(report.runs, 32);

        // No requirement on `iban`: the attack is allowed, in both modes.
        let doc = policy("{ iban: {}, amount: { require: \"verified(Small)\" } }");
        let (_, report) = battery(&doc);
        assert_eq!(report.exposed.len(), 8, "{:?}", report.exposed);
    }

    // Issue #52: a draft that accepts a remembered payee is told what the attacker may choose from; the
    // attack itself is still refused (nothing is remembered in the battery's runs).
    #[test]
    fn an_argument_that_accepts_a_remembered_value_is_reported() {
        let doc = policy(
            "{ iban: { require: [trusted, \"verified(Payee)\", \"known(payee)\"] }, amount: { require: \"verified(Small)\" } }",
        );
        let (_, report) = battery(&doc);
        assert!(report.exposed.is_empty(), "{:?}", report.exposed);
        assert_eq!(report.known.len(), 1, "{:?}", report.known);
        assert!(
            report.known[0].starts_with("`pay.iban` accepts `known(payee)`: an attacker who names"),
            "{:?}",
            report.known
        );
    }

    // Issue #51: a payee whose name is on no word list is still attacked, as every kind of value.
    #[test]
    fn an_argument_zamburak_cannot_place_is_attacked_as_every_kind() {
        let doc = policy("{ destination: {}, amount: { require: \"verified(Small)\" } }");
        let (attacks, report) = battery(&doc);
        let roles: Vec<Role> = attacks.iter().map(|a| a.role).collect();
        assert_eq!(
            roles,
            vec![Role::Recipient, Role::Payee, Role::Url, Role::Path],
            "{attacks:?}"
        );
        // Each is allowed, in both modes: the draft is exposed.
        assert_eq!(report.exposed.len(), 8, "{:?}", report.exposed);
    }

    // Issue #51: a call budget of one stops every attack, for the wrong reason.
    #[test]
    fn a_call_budget_does_not_refuse_an_attack() {
        let mut doc = policy("{ iban: {}, amount: { require: \"verified(Small)\" } }");
        doc.insert("limits".into(), json!({ "max_tool_calls": 1 }));
        let (_, report) = battery(&doc);
        assert_eq!(report.exposed.len(), 8, "{:?}", report.exposed);
    }

    // Issue #51: a verifier named like the battery's variable cannot shadow it.
    #[test]
    fn a_verifier_named_like_the_batterys_variable_is_refused() {
        let mut doc = policy("{ iban: {}, amount: {} }");
        doc["verifiers"].as_object_mut().unwrap().insert(
            VALUE_VAR.into(),
            json!({ "kind": "one_of", "values": ["a"], "mints": "A" }),
        );
        let err = with_source(&doc, Path::new("/tmp")).unwrap_err();
        assert!(err.contains(VALUE_VAR), "{err}");
        // A verifier named `x` no longer makes the battery's plans fail lint: the attack is seen.
        let mut doc = policy("{ iban: {}, amount: {} }");
        doc["verifiers"].as_object_mut().unwrap().insert(
            "x".into(),
            json!({ "kind": "one_of", "values": ["a"], "mints": "A" }),
        );
        let (_, report) = battery(&doc);
        assert_eq!(report.exposed.len(), 8, "{:?}", report.exposed);
    }

    // Issue #51: a control call that can never be allowed leaves the attack not exercised.
    #[test]
    fn a_decoy_that_blocks_the_control_call_is_reported_not_exercised() {
        // A verifier whose only entry is no address: the value written for the control call fails it.
        let mut doc = policy("{ iban: {}, amount: { require: \"verified(Nothing)\" } }");
        doc["verifiers"].as_object_mut().unwrap().insert(
            "verify_decoy".into(),
            json!({ "kind": "email_allowlist", "allow": ["not an address"], "mints": "Nothing" }),
        );
        let (_, report) = battery(&doc);
        assert!(report.exposed.is_empty(), "{:?}", report.exposed);
        assert_eq!(report.not_exercised.len(), 4, "{:?}", report.not_exercised);
    }
}
