//! `zamburak policy compile`: a policy drafted from a plain-language constitution by an LLM provider,
//! then verified deterministically before anything is written (docs/policy.md, "Compiling a policy from
//! plain words").
//!
//! Drafting asks the provider three things ([`prompts`]): (a) a role per tool argument, (b) a policy that
//! expresses the constitution, citing the lines behind each rule, (c) scenarios in the `policy test`
//! format from the constitution and the tools alone. Every answer is untrusted input ([`ask`]).
//! Verification, in process: the draft must load and pass `policy check`, keep the base policy's tools
//! (sources, effects, arguments) and its trust in results, pass every drafted scenario through the code
//! `policy test` runs ([`crate::scenario::check`]), and refuse every attack of the fixed battery
//! ([`battery`]), which only a named exception in the constitution waives ([`constitution`]). Failures
//! go back to the provider with the scenario that exposes them, a bounded number of times. This module
//! returns what it found; the CLI decides what is written and the exit code.

pub mod ask;
pub mod battery;
pub mod constitution;
pub mod looser;
pub mod prompts;
pub mod render;
pub mod roles;

#[cfg(test)]
mod mutation_tests;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::policy::Policy;
use crate::runtime::run::Engine;
use crate::scenario::Scenario;
use crate::text::one_line;
use ask::AskError;
use battery::BatteryReport;
use constitution::{Constitution, ConstitutionError, Exception};
use render::Citations;
use roles::{ArgRole, Role};

/// Most scenarios read from the drafter.
pub const MAX_SCENARIOS: usize = 64;
/// Wall-clock time the drafted scenarios of one verification may take (docs/policy.md).
const SCENARIO_BUDGET: std::time::Duration = std::time::Duration::from_secs(60);
/// Most bytes of failures sent back in one repair request.
const MAX_REPAIR_BYTES: usize = 32 * 1024;
/// The sections of the base policy a draft cannot change: where data lives and what serves it, and
/// how a run is made (`mode`, `planner`): docs/semantics.md, what the data is is the base's (issue #51).
const KEPT_FROM_BASE: [&str; 5] = ["providers", "servers", "builtins", "mode", "planner"];

/// What `policy compile` is given.
pub struct Input<'a> {
    pub constitution: &'a str,
    /// How the constitution is named in the written files.
    pub constitution_name: &'a str,
    pub base: &'a Policy,
    /// The base policy's text, as the drafter and the diff see it.
    pub base_text: &'a str,
    /// The base policy's MCP lock, for the types of its MCP tools.
    pub lock: Option<&'a crate::mcp::lock::LockFile>,
    pub provider: &'a str,
    /// The directory the policy will be written to: relative paths in it resolve there.
    pub out_dir: &'a Path,
    /// The policy file's name, as the scenarios file names it.
    pub out_name: &'a str,
    pub max_repairs: usize,
    pub engine: &'a Engine,
}

/// Why nothing could be drafted (a usage or input error; a draft that fails verification is a result).
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("{0}")]
    Constitution(#[from] ConstitutionError),
    #[error(
        "constitution line {line}: the exception names `{tool}.{arg}`, which is not an argument of a tool of the base policy"
    )]
    UnknownException {
        line: usize,
        tool: String,
        arg: String,
    },
    #[error("the base policy declares no provider `{name}` (it declares: {declared})")]
    UnknownProvider { name: String, declared: String },
    #[error("the base policy cannot be read as a mapping: {0}")]
    Base(String),
    #[error(transparent)]
    Ask(#[from] AskError),
}

/// One verification failure: a title and what exposes it (a scenario with what happened).
#[derive(Clone, Debug)]
pub struct Failure {
    pub title: String,
    pub detail: String,
}

/// What drafting and verification found.
#[derive(Debug)]
pub struct Compiled {
    /// The drafted policy with its citations, when the last draft loads.
    pub policy_text: Option<String>,
    /// The base policy in the same layout, for the diff.
    pub base_normalised: String,
    pub scenarios_text: String,
    pub roles: Vec<ArgRole>,
    pub exceptions: Vec<Exception>,
    /// What the last draft failed; empty when it is verified.
    pub failures: Vec<Failure>,
    pub scenarios: usize,
    pub scenario_runs: usize,
    pub battery: BatteryReport,
    /// Repair requests made.
    pub repairs: usize,
    /// What was changed or ignored in the draft, and rules without a citation.
    pub notes: Vec<String>,
}

impl Compiled {
    pub fn verified(&self) -> bool {
        self.failures.is_empty() && self.policy_text.is_some()
    }
}

/// A YAML text as a JSON mapping, under the policy loader's size and YAML budget (the draft is
/// untrusted).
fn mapping(text: &str) -> Result<Map<String, Value>, String> {
    crate::policy::yaml_mapping(text)
}

/// Drafts and verifies. `progress` receives one line per step.
pub fn compile(
    input: &Input<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<Compiled, CompileError> {
    let c = Constitution::parse(input.constitution)?;
    let base_sigs = input.base.signatures();
    for e in &c.exceptions {
        if !base_sigs
            .tools
            .get(&e.tool)
            .is_some_and(|args| args.contains(&e.arg))
        {
            return Err(CompileError::UnknownException {
                line: e.line,
                tool: e.tool.clone(),
                arg: e.arg.clone(),
            });
        }
    }
    let provider =
        input
            .base
            .provider(input.provider)
            .ok_or_else(|| CompileError::UnknownProvider {
                name: input.provider.to_string(),
                declared: {
                    let names: Vec<String> = input
                        .base
                        .file()
                        .providers
                        .iter()
                        .map(|(n, _)| format!("`{n}`"))
                        .collect();
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                },
            })?;
    let base_map = mapping(input.base_text).map_err(CompileError::Base)?;
    let catalogue = crate::stubs::catalogue(input.base, input.lock);
    let tools = prompts::tools_text(&catalogue);
    let arg_count: usize = base_sigs.tools.values().map(Vec::len).sum();

    // (a) roles.
    progress(&format!(
        "step 1/3: the role of each of {arg_count} arguments of {} tools (provider `{}`)",
        base_sigs.tools.len(),
        input.provider
    ));
    let answer: prompts::RolesAnswer = ask::ask(
        provider,
        "roles",
        &prompts::roles_request(&catalogue),
        &prompts::roles_schema(),
    )?;
    let mut drafted = BTreeMap::new();
    for r in answer.roles {
        if !base_sigs
            .tools
            .get(&r.tool)
            .is_some_and(|args| args.contains(&r.arg))
        {
            return Err(AskError::Unusable {
                step: "roles",
                why: "it names an argument no tool of the base policy has".into(),
            }
            .into());
        }
        drafted.insert((r.tool, r.arg), r.role);
    }
    let roles = roles::roles(input.base, &drafted);

    // (b) the policy.
    progress("step 2/3: a policy that expresses the constitution");
    let policy_request = |repair: Option<(&str, &str)>| {
        prompts::policy_request(&c, input.base_text, &tools, &roles, repair)
    };
    let mut draft: prompts::PolicyAnswer = ask::ask(
        provider,
        "policy",
        &policy_request(None),
        &prompts::policy_schema(),
    )?;

    // (c) scenarios, from the constitution and the tools only.
    progress("step 3/3: scenarios from the constitution alone");
    let answer: prompts::ScenariosAnswer = ask::ask(
        provider,
        "scenarios",
        &prompts::scenarios_request(&c, &tools),
        &prompts::scenarios_schema(),
    )?;
    let scenarios = crate::scenario::parse_scenarios(&answer.scenarios_yaml, "<drafted scenarios>")
        .map_err(|e| AskError::Unusable {
            step: "scenarios",
            why: format!("`scenarios_yaml` is not a scenarios file: {e}"),
        })?;
    if scenarios.is_empty() || scenarios.len() > MAX_SCENARIOS {
        return Err(AskError::Unusable {
            step: "scenarios",
            why: format!(
                "it has {} scenarios; 1 to {MAX_SCENARIOS} are read",
                scenarios.len()
            ),
        }
        .into());
    }
    let mut notes = Vec::new();
    let mut scenario_cites = Citations::new();
    for sc in &answer.citations {
        let lines = in_range(&sc.lines, &c);
        if lines.len() < sc.lines.len() {
            notes.push(format!(
                "scenario `{}` cites a line the constitution does not have; dropped",
                one_line(&sc.scenario, 100)
            ));
        }
        scenario_cites.insert(sc.scenario.clone(), lines);
    }

    let mut repairs = 0;
    let verified = loop {
        let v = verify(input, &c, &base_map, &roles, &scenarios, &draft);
        if v.failures.is_empty() || repairs >= input.max_repairs {
            break v;
        }
        repairs += 1;
        progress(&format!(
            "repair {repairs}/{}: {} failure{} sent back to the provider",
            input.max_repairs,
            v.failures.len(),
            if v.failures.len() == 1 { "" } else { "s" }
        ));
        let mut failures = String::new();
        for f in &v.failures {
            if failures.len() + f.detail.len() > MAX_REPAIR_BYTES {
                failures.push_str("(more failures left out)\n");
                break;
            }
            failures.push_str(&f.detail);
            failures.push_str("\n\n");
        }
        draft = ask::ask(
            provider,
            "policy",
            &policy_request(Some((&draft.policy_yaml, &failures))),
            &prompts::policy_schema(),
        )?;
    };

    notes.extend(verified.notes);
    let scenarios_text = scenarios_file(input, &c, &scenarios, &scenario_cites);
    let base_normalised = render::policy_yaml(&base_map, &[], &Citations::new(), None, None);
    let policy_text = verified.doc.map(|(doc, cites)| {
        let header = header(
            input,
            &c,
            &verified.failures,
            scenarios.len(),
            &verified.battery,
        );
        render::policy_yaml(&doc, &header, &cites, Some(&c), Some(&base_map))
    });
    Ok(Compiled {
        policy_text,
        base_normalised,
        scenarios_text,
        roles,
        exceptions: c.exceptions.clone(),
        failures: verified.failures,
        scenarios: scenarios.len(),
        scenario_runs: verified.scenario_runs,
        battery: verified.battery,
        repairs,
        notes,
    })
}

fn in_range(lines: &[u64], c: &Constitution) -> Vec<usize> {
    lines
        .iter()
        .filter_map(|n| usize::try_from(*n).ok())
        .filter(|n| *n >= 1 && *n <= c.len())
        .collect()
}

fn header(
    input: &Input<'_>,
    c: &Constitution,
    failures: &[Failure],
    scenarios: usize,
    battery: &BatteryReport,
) -> Vec<String> {
    let mut h = vec![
        format!(
            "Drafted by `zamburak policy compile` from {} with provider `{}`. Review it before use: it is never applied automatically.",
            input.constitution_name, input.provider
        ),
        if failures.is_empty() {
            format!(
                "Verified: `policy check`, {scenarios} drafted scenarios, {} battery attacks ({} not exercised).",
                battery.attacks,
                battery.not_exercised.len()
            )
        } else {
            format!(
                "NOT VERIFIED (written with --force): {} failures; see `zamburak policy compile` output.",
                failures.len()
            )
        },
    ];
    for e in &c.exceptions {
        h.push(format!(
            "Exception (constitution line {}): {}.{} may be chosen by data because {}",
            e.line, e.tool, e.arg, e.reason
        ));
    }
    h
}

fn scenarios_file(
    input: &Input<'_>,
    c: &Constitution,
    scenarios: &[Scenario],
    cites: &Citations,
) -> String {
    let mut s = format!(
        "# Scenarios drafted by `zamburak policy compile` from {} and the tools alone (never from the drafted policy).\n\
         # Run them with `zamburak policy test` after every edit of the policy.\n\
         policy: {}\n\
         scenarios:\n",
        one_line(input.constitution_name, 100),
        render::flow(&Value::String(input.out_name.to_string()))
    );
    for sc in scenarios {
        for n in cites.get(&sc.name).into_iter().flatten() {
            s.push_str(&format!(
                "  # constitution line {n}: {}\n",
                one_line(c.line(*n).unwrap_or_default().trim(), 100)
            ));
        }
        let text = serde_saphyr::to_string(&[sc]).unwrap_or_default();
        for line in text.lines() {
            s.push_str("  ");
            s.push_str(line);
            s.push('\n');
        }
    }
    s
}

/// One draft's verification.
struct Verification {
    /// The merged policy mapping and its citations, when the draft loads.
    doc: Option<(Map<String, Value>, Citations)>,
    failures: Vec<Failure>,
    scenario_runs: usize,
    battery: BatteryReport,
    notes: Vec<String>,
}

fn verify(
    input: &Input<'_>,
    c: &Constitution,
    base: &Map<String, Value>,
    roles: &[ArgRole],
    scenarios: &[Scenario],
    draft: &prompts::PolicyAnswer,
) -> Verification {
    let mut v = Verification {
        doc: None,
        failures: Vec::new(),
        scenario_runs: 0,
        battery: BatteryReport::default(),
        notes: Vec::new(),
    };
    let fail = |v: &mut Verification, title: &str, detail: String| {
        v.failures.push(Failure {
            title: title.to_string(),
            detail,
        });
    };
    // 1. It loads as a policy, with every check `policy check` makes: as written, or once what the base
    // keeps is put in (a draft need not copy the base's servers or providers, which are replaced anyway:
    // issue #51). A failure is reported at the draft's own text.
    let with_kept = |text: &str| -> Option<String> {
        let mut m = mapping(text).ok()?;
        for k in KEPT_FROM_BASE {
            match base.get(k) {
                Some(b) => {
                    m.insert(k.to_string(), b.clone());
                }
                None => {
                    m.remove(k);
                }
            }
        }
        serde_json::to_string(&Value::Object(m)).ok()
    };
    let loads = |text: &str| Policy::from_yaml_str(text, "<drafted policy>", input.out_dir);
    if let Err(e) = loads(&draft.policy_yaml)
        && with_kept(&draft.policy_yaml).is_none_or(|t| loads(&t).is_err())
    {
        fail(
            &mut v,
            "the draft does not pass `policy check`",
            format!("FAILED the draft does not pass `policy check`:\n{e}"),
        );
        return v;
    }
    let mut doc = match mapping(&draft.policy_yaml) {
        Ok(m) => m,
        Err(why) => {
            fail(
                &mut v,
                "the draft is not a mapping",
                format!("FAILED the draft cannot be read: {why}"),
            );
            return v;
        }
    };
    // 2. What the base decides stays the base's: providers, servers, builtins.
    for k in KEPT_FROM_BASE {
        if doc.get(k).is_some() && doc.get(k) != base.get(k) {
            v.notes.push(format!(
                "the draft's `{k}` was replaced by the base policy's"
            ));
        }
        match base.get(k) {
            Some(b) => {
                doc.insert(k.to_string(), b.clone());
            }
            None => {
                doc.remove(k);
            }
        }
    }
    // The user reads everything: a draft cannot name another one than the base's, and a base without
    // one would adopt the draft's (a drafter could name itself the reader of all data: issue #51).
    match base.get("user") {
        Some(user) => {
            if doc.get("user") != Some(user) {
                v.notes
                    .push("the draft's `user` was replaced by the base policy's".into());
                doc.insert("user".into(), user.clone());
            }
        }
        None => {
            fail(
                &mut v,
                "the base policy has no `user:`",
                "FAILED the base policy has no `user:`, so the draft would choose who reads everything; \
                 add `user: <your address>` to the base policy and compile again"
                    .into(),
            );
            return v;
        }
    }
    // 3. Tools: the base's, with their sources, effects and arguments; trust in results not widened.
    structure(&doc, base, &mut v.failures);
    // 4. Citations.
    let mut cites = Citations::new();
    for ci in &draft.citations {
        let lines = in_range(&ci.lines, c);
        if lines.len() < ci.lines.len() {
            fail(
                &mut v,
                "a citation names a line the constitution does not have",
                format!(
                    "FAILED `{}` cites a line the constitution does not have (it has {} lines)",
                    one_line(&ci.rule, 100),
                    c.len()
                ),
            );
        }
        cites.entry(ci.rule.clone()).or_default().extend(lines);
    }
    // 5. The written text loads, where it will be written.
    let text = render::policy_yaml(&doc, &[], &cites, Some(c), Some(base));
    let policy = match Policy::from_yaml_str(&text, input.out_name, input.out_dir) {
        Ok(p) => p,
        Err(e) => {
            fail(
                &mut v,
                "the draft does not pass `policy check` with the base's providers, servers and builtins",
                format!("FAILED the merged draft does not pass `policy check`:\n{e}"),
            );
            return v;
        }
    };
    // The base's rules are a floor: who may read, which tags may not leave, the control context, the
    // decisions the base states and its verifiers only tighten (looser.rs; the battery cannot ask these).
    let loosened = looser::looser(input.base, &policy, base, &c.exceptions);
    if !loosened.is_empty() {
        for l in loosened {
            fail(
                &mut v,
                &l.title,
                format!("FAILED {}: {}", l.title, l.detail),
            );
        }
        return v;
    }
    // Limits only tighten: a draft cannot give plans (or its own scenarios here) more time or memory.
    let (drafted, kept) = (policy.limits(), input.base.limits());
    for (name, d, b) in [
        ("timeout_ms", drafted.timeout_ms, kept.timeout_ms),
        (
            "max_tool_calls",
            u64::from(drafted.max_tool_calls),
            u64::from(kept.max_tool_calls),
        ),
        (
            "max_recursion",
            u64::from(drafted.max_recursion),
            u64::from(kept.max_recursion),
        ),
        (
            "max_memory_mb",
            u64::from(drafted.max_memory_mb),
            u64::from(kept.max_memory_mb),
        ),
    ] {
        if d > b {
            fail(
                &mut v,
                "the draft loosens a limit",
                format!(
                    "FAILED the draft raises `limits.{name}` to {d}, over the base policy's {b} (limits may only tighten)"
                ),
            );
        }
    }
    if v.failures
        .iter()
        .any(|f| f.title == "the draft loosens a limit")
    {
        return v;
    }
    // 6. The drafted scenarios, as `policy test` runs them, under one time budget per verification:
    // each run is bounded by the base's limits, but 64 scenarios that loop would still hold a compile
    // for half an hour (issue #51). Scenarios the budget leaves out make the draft unverified.
    let started = std::time::Instant::now();
    let mut verdicts = Vec::new();
    for (i, one) in scenarios.chunks(1).enumerate() {
        if started.elapsed() > SCENARIO_BUDGET {
            fail(
                &mut v,
                "the drafted scenarios ran over the time budget",
                format!(
                    "FAILED the drafted scenarios ran over the time budget of {}s; {} of {} were not run",
                    SCENARIO_BUDGET.as_secs(),
                    scenarios.len() - i,
                    scenarios.len()
                ),
            );
            break;
        }
        verdicts.extend(crate::scenario::check(one, &policy, input.engine));
    }
    for verdict in verdicts {
        v.scenario_runs += 1;
        if !verdict.passed {
            let plan = scenarios
                .iter()
                .find(|s| s.name == verdict.name)
                .map(|s| s.plan.as_str())
                .unwrap_or_default();
            let mut detail = verdict.detail.clone();
            detail.push_str("\n  plan:\n");
            for line in plan.lines() {
                detail.push_str(&format!("    {line}\n"));
            }
            v.failures.push(Failure {
                title: format!("scenario: {} [{}]", verdict.name, verdict.mode),
                detail: detail.trim_end().to_string(),
            });
        }
    }
    // 7. The battery.
    match battery::with_source(&doc, input.out_dir) {
        Ok(with_source) => {
            let catalogue = crate::stubs::catalogue(&policy, input.lock);
            let attacks = battery::attacks(&policy, &catalogue, roles, &c.exempt(), &mut v.battery);
            battery::run(&attacks, &with_source, input.engine, &mut v.battery);
            for (title, detail) in &v.battery.exposed {
                v.failures.push(Failure {
                    title: title.clone(),
                    detail: detail.clone(),
                });
            }
            // An attack not exercised verified nothing: a decoy (a verifier or rule that makes every
            // call of the tool fail) must not read as verified (issue #51).
            for why in &v.battery.not_exercised {
                v.failures.push(Failure {
                    title: format!("battery: not exercised: {why}"),
                    detail: format!("FAILED battery: attack not exercised: {why}"),
                });
            }
        }
        Err(why) => fail(
            &mut v,
            "the battery cannot run",
            format!("FAILED the battery cannot run on the draft: {why}"),
        ),
    }
    v.doc = Some((doc, cites));
    v
}

/// The draft keeps the base's tools as they are served: no new tool, the same source, effect and
/// arguments, and no result more trusted than the base says.
fn structure(doc: &Map<String, Value>, base: &Map<String, Value>, failures: &mut Vec<Failure>) {
    let empty = Map::new();
    let tools = doc
        .get("tools")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let base_tools = base
        .get("tools")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut fail = |title: String| {
        failures.push(Failure {
            detail: format!("FAILED {title}"),
            title,
        });
    };
    for (name, spec) in tools {
        let Some(b) = base_tools.get(name) else {
            fail(format!(
                "the draft adds tool `{name}`, which the base policy does not declare (tools come from the base)"
            ));
            continue;
        };
        for field in ["source", "effect"] {
            if spec.get(field) != b.get(field) {
                fail(format!(
                    "the draft changes `{field}` of `{name}` (it must stay the base policy's)"
                ));
            }
        }
        let arg_names = |s: &Value| -> Vec<String> {
            s.get("args")
                .and_then(Value::as_object)
                .map(|a| a.keys().cloned().collect())
                .unwrap_or_default()
        };
        if arg_names(spec) != arg_names(b) {
            fail(format!(
                "the draft changes the arguments of `{name}` (they must stay the base policy's, in order)"
            ));
        }
        // What the data is, is the base's (docs/semantics.md): integrity per field, readers, also,
        // structure_readers, tags, tags_when and scan of a result are taken as the base declares
        // them. Any difference is refused, even a stricter one: comparing labelling for "stricter"
        // soundly is not done yet, and refusing is the safe side (issue #51).
        if spec.get("returns") != b.get("returns") {
            fail(format!(
                "the draft changes how the results of `{name}` are labelled (`returns` must stay the base policy's)"
            ));
        }
        let trusted = |v: Option<&Value>| v.and_then(Value::as_str) == Some("trusted");
        let r = spec.get("returns");
        let br = b.get("returns");
        let base_top = trusted(br.and_then(|r| r.get("integrity")));
        if trusted(r.and_then(|r| r.get("integrity"))) && !base_top {
            fail(format!(
                "the draft marks the result of `{name}` trusted, which the base policy does not"
            ));
        }
        if let Some(fields) = r.and_then(|r| r.get("fields")).and_then(Value::as_object) {
            for (f, spec) in fields {
                let base_field = trusted(
                    br.and_then(|r| r.get("fields"))
                        .and_then(|fs| fs.get(f))
                        .and_then(|s| s.get("integrity")),
                );
                if trusted(spec.get("integrity")) && !base_field && !base_top {
                    fail(format!(
                        "the draft marks field `{f}` of `{name}`'s result trusted, which the base policy does not"
                    ));
                }
            }
        }
    }
}

/// The roles the battery attacks, for the report: `tool.arg` with its role.
pub fn attacked_args(roles: &[ArgRole]) -> Vec<(String, Role)> {
    roles
        .iter()
        .flat_map(|r| {
            r.attack_roles()
                .into_iter()
                .map(move |role| (format!("{}.{}", r.tool, r.arg), role))
        })
        .collect()
}
